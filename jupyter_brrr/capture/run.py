"""Run code under the PyTorch profiler, time it honestly, and turn what it recorded into a Report.

The protocol, and why:
- Without ``warmup`` or ``repeat`` (protocol "single") the code runs exactly once, profiled, and
  the report says that its numbers include first-run costs and profiler overhead.
- Otherwise it warms up first, unprofiled, so module loading, cuBLAS handles, allocator growth and
  compilation stay out of the numbers. On a GPU the warm-up is "sustained" by default: at least
  ``warmup`` runs, then more, back to back, until ``WARMUP_S`` has passed and the SM clock has
  stopped falling (a GEMM-heavy H200 drops from its 1980 MHz boost clock to about 1750 MHz at
  its power limit within a few hundred milliseconds), at most ``WARMUP_CAP_S`` or
  ``WARMUP_MAX_RUNS``, and no run started that would end past the cap by the last run's time
  (so a slow cell warms up once). ``burst=True`` (and the CPU, which has no GPU clock to wait
  for) runs exactly ``warmup`` runs: a short burst, at whatever clock the GPU is at.
- Then ``repeat`` runs are timed WITHOUT the profiler, each bracketed by CUDA events (the host
  clock on a CPU), with the SM clock and power draw read after each (``clocks``): the profiler
  slows the host side and inflates idle time, so the median of these is the span the report
  calls the truth; their spread, and whether they agree (``spread.findings``), go with it.
- One run is profiled (CPU + CUDA activities, shapes), bracketed by CUDA events too. Before it,
  nothing of the earlier runs is held: each run's value is dropped as it returns, a cell's
  variables are set back to what they were before the cell (``namespace``), and a garbage
  collection frees what cycles held (an output holding its autograd graph). Its memory figures:
  ``memory_before_bytes`` allocated when it starts, ``peak_memory_bytes`` the allocator's peak
  during it, ``memory_increase_bytes`` their difference (what one run needs on top of what was
  there), ``memory_after_bytes`` what it left allocated (its value held), all from the CUDA
  caching allocator's counters (the sizes it hands out, rounded to its 512-byte blocks).

torch's profilers cannot nest: a second one started while one runs takes over, the first ends
with no events, and exporting it crashes the process. So a capture refuses to start while another
profiler runs (``ProfilerInUseError``, before the code runs), and when the code starts a profiler
of its own during the profiled run (seen through torch's profiler-start hook, or ours found
stopped), ours is dropped without being stopped or exported: the code's profiler keeps its
events, and the capture says why it has no report. Captures in several threads (the A/B's worker,
a cell) take turns.

Ops that the code runs in other threads (a thread pool, a data-loading thread) are recorded too,
where torch can (``profile_all_threads``, torch 2.7 and later); the report says how many threads
ran ops, or, where torch cannot record them, that they are missing.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..analysis import analyze as analysis
from ..analysis import spread, step_graph
from ..analysis.spread import host_slowdown
from ..costs import peaks
from ..report.report import Report, steady_state_options
from ..schema.report import Runs
from ..trace.events import read_trace
from . import clocks, cupti
from .attribution import Attribution
from .clocks import GpuSensors, fastest_host_loop_s, host_loop_s, settled

# The sustained warm-up: at least this long, and until the SM clock has not fallen by more than
# CLOCK_TOLERANCE for CLOCK_SETTLE_S (read every CLOCK_SAMPLE_S); never past WARMUP_CAP_S or
# WARMUP_MAX_RUNS runs (a cell of a few microseconds would otherwise run a million times).
WARMUP_S = 1.0
WARMUP_CAP_S = 5.0
WARMUP_MAX_RUNS = 10_000
CLOCK_SETTLE_S = 0.3
CLOCK_SAMPLE_S = 0.02
CLOCK_TOLERANCE = 0.01

PROTOCOLS = ("single", "burst", "sustained")


class ProfilerInUseError(RuntimeError):
    """Another torch profiler is running, so this one cannot: torch's profilers do not nest."""


@dataclass
class Capture:
    """The outcome of profiling some code: its report, its return value, or its error.
    ``no_report`` says why there is no report when the code ran but could not be profiled
    (it started a profiler of its own)."""

    report: Report | None
    value: Any = None
    error: BaseException | None = None
    no_report: str | None = None


NESTED_MESSAGE = (
    "jupyter_brrr is already profiling this code (%%brrr on the cell, or jupyter_brrr.profile() "
    "around the call), and torch's profilers cannot nest. Call jupyter_brrr.profile() outside "
    "the profiled code, or take %%brrr off the cell."
)
RUNNING_MESSAGE = (
    "A torch profiler is already running (torch.profiler.profile or "
    "torch.autograd.profiler.profile, started before this), and torch's profilers cannot nest: "
    "a second one would end it and lose its events. Stop it first (prof.stop(), or leave its "
    "with-block), then profile again."
)
STARTED_BETWEEN_MESSAGE = (
    "A torch profiler was started during the warm-up or timed runs (by the code, or another "
    "thread) and still runs: torch's profilers cannot nest, so the profiled run was not made "
    "and jupyter_brrr has no trace. Stop that profiler, or remove it from the code, and "
    "profile again."
)
TAKEN_OVER_MESSAGE = (
    "The code started a torch profiler of its own (torch.profiler.profile or similar) while "
    "jupyter_brrr was profiling it. torch's profilers cannot nest, so that one took over: the "
    "code's profiler has its events, and jupyter_brrr has no trace of this run. Use one of "
    "the two: remove the profiler from the code, or take %%brrr (jupyter_brrr.profile) off it."
)


def profiler_running() -> bool:
    """Whether a torch profiler (the Python profilers, or Kineto started from C++) runs now."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if getattr(torch.autograd.profiler, "_is_profiler_enabled", False):
        return True
    try:
        return bool(torch._C._autograd._profiler_enabled())
    except Exception:  # an older or newer torch without this function
        return False


# One jupyter_brrr profiler at a time in this process: the A/B's worker thread and a cell take
# turns. ``_nesting.depth`` counts the captures running on this thread (a nested one refuses).
_PROFILER_LOCK = threading.Lock()
_nesting = threading.local()
_profiler_owner: list[int] = []  # the id of the thread holding the lock, while one does


def check_can_profile() -> None:
    """Raise ``ProfilerInUseError`` when a capture cannot start here now: one already runs on
    this thread (nested), or a profiler that is not jupyter_brrr's runs."""
    if getattr(_nesting, "depth", 0):
        raise ProfilerInUseError(NESTED_MESSAGE)
    if _profiler_owner and _profiler_owner[0] != threading.get_ident():
        return  # ours, in another thread: this capture waits its turn
    if profiler_running():
        raise ProfilerInUseError(RUNNING_MESSAGE)


@contextlib.contextmanager
def profiler_turn() -> Iterator[None]:
    """Hold the process's one turn at torch's profiler (one capture at a time, across
    threads); refuse when a profiler of the user's own started meanwhile."""
    with _PROFILER_LOCK:
        _profiler_owner.append(threading.get_ident())
        try:
            if profiler_running():  # a user's profiler started while we waited
                raise ProfilerInUseError(RUNNING_MESSAGE)
            yield
        finally:
            _profiler_owner.clear()


@contextlib.contextmanager
def one_capture_deeper() -> Iterator[None]:
    """Count a capture running on this thread while inside (a capture nested in it refuses)."""
    _nesting.depth = getattr(_nesting, "depth", 0) + 1
    try:
        yield
    finally:
        _nesting.depth -= 1


class _ProfilerStarts:
    """Counts profilers started while installed, through the hook that torch's Python
    profilers call when they start (``torch.autograd.profiler._run_on_profiler_start``)."""

    def __init__(self) -> None:
        self.count = 0
        self._module: Any = None
        self._original: Any = None

    def install(self) -> None:
        import torch.autograd.profiler as module

        original = getattr(module, "_run_on_profiler_start", None)
        if not callable(original):
            return  # a torch without the hook: a takeover is still seen when ours is found off

        def counting_start(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(*args, **kwargs)

        self._module, self._original = module, original
        module._run_on_profiler_start = counting_start

    def remove(self) -> None:
        if self._module is not None:
            self._module._run_on_profiler_start = self._original
            self._module = None


@dataclass
class WarmUp:
    """What the warm-up did: runs, wall time, the SM clock before and after, why it ended
    ("runs": the runs asked for; "settled": the time passed and the clock stopped falling;
    "time": the time passed, no clock to read; "cap": the time cap; "max runs")."""

    runs: int = 0
    seconds: float = 0.0
    clock_start_mhz: float | None = None
    clock_end_mhz: float | None = None
    ended: str = "runs"


def protocol_of(*, warmup: int, repeat: int, gpu: bool, burst: bool) -> str:
    """The timing protocol a capture uses: "single" (one profiled run), "sustained" (a GPU
    warm-up to the steady clock) or "burst" (exactly the warm-up runs asked for)."""
    if warmup == 0 and repeat == 1:
        return "single"
    return "sustained" if gpu and not burst else "burst"


def capture(
    fn: Callable[[], Any],
    *,
    warmup: int = 0,
    repeat: int = 1,
    cpu: bool = False,
    burst: bool = False,
    name: str = "",
    source: str = "profile",
    namespace: dict | None = None,
    attribution: Attribution | None = None,
) -> Capture:
    """Run ``fn`` as the module docstring describes. ``namespace``: where the code binds its names
    (a cell's globals), set back before the profiled run. Never raises the code's own error: it
    comes back in ``Capture.error``, with a partial report when the profiled run had recorded
    something.

    ``attribution`` (``attribution.for_code`` / ``for_call``): the module paths, and whether to
    mark source lines, for the profiled run only (the timed runs stay as they are)."""
    __tracebackhide__ = True
    import torch

    if warmup < 0 or repeat < 1:
        raise ValueError(
            f"warmup must be >= 0 and repeat >= 1 (got warmup={warmup}, repeat={repeat})."
        )
    if burst and warmup == 0 and repeat == 1:
        raise ValueError(
            "burst changes the warm-up before timed runs, and none were asked for: give "
            "warmup and repeat too (e.g. warmup=1, repeat=5, burst=True)."
        )
    check_can_profile()  # before the code runs: refusing must leave nothing half done
    with one_capture_deeper():
        return _capture(
            fn,
            torch,
            warmup=warmup,
            repeat=repeat,
            cpu=cpu,
            burst=burst,
            name=name,
            source=source,
            namespace=namespace,
            attribution=attribution,
        )


def _capture(
    fn: Callable[[], Any],
    torch: Any,
    *,
    warmup: int,
    repeat: int,
    cpu: bool,
    burst: bool,
    name: str,
    source: str,
    namespace: dict | None,
    attribution: Attribution | None = None,
) -> Capture:
    __tracebackhide__ = True
    gpu = torch.cuda.is_available() and not cpu
    protocol = protocol_of(warmup=warmup, repeat=repeat, gpu=gpu, burst=burst)
    steady = protocol != "single"
    runs = {"warmup": 0, "timed": 0, "profiled": 0, "total": 0}  # counted as they run
    spans: list[float] = []
    sensors = GpuSensors() if gpu and steady else None
    readings: list[tuple[float | None, float | None]] = []
    host_loops: list[float] = []  # the host CPU's speed after each timed run (clocks.py)
    warm = WarmUp()
    # The bindings before the cell: the earlier runs' values must not be held by the profiled
    # one (a plain run of the cell starts from these).
    bindings = dict(namespace) if namespace is not None and steady else None
    try:
        if steady:
            warm = _warm_up(fn, warmup, protocol == "sustained", gpu, sensors, runs)
            for _ in range(repeat):
                spans.append(timed_run(fn, gpu)[0])  # the value is dropped as the run ends
                runs["timed"] += 1
                if sensors is not None:
                    readings.append((sensors.sm_clock_mhz(), sensors.power_w()))
                host_loops.append(host_loop_s())
    except BaseException as error:  # the user's code failed (or Ctrl-C): report, then re-raise
        runs["total"] = runs["warmup"] + runs["timed"]
        _release(error)
        return Capture(None, error=error)
    runs["total"] = runs["warmup"] + runs["timed"]
    try:
        with profiler_turn():
            if bindings is not None and namespace is not None:
                _set_back(namespace, bindings)
            del bindings
            if steady:
                gc.collect()  # what reference cycles of the earlier runs still hold
            return _profiled_run(
                fn,
                torch,
                gpu=gpu,
                protocol=protocol,
                spans=spans,
                readings=readings,
                host_loops=host_loops,
                warm=warm,
                sensors=sensors,
                runs=runs,
                name=name,
                source=source,
                attribution=attribution,
            )
    except ProfilerInUseError:
        if not runs["total"]:
            raise  # nothing ran: the caller decides (the magic runs the cell plainly)
        # A profiler started during the warm-up or timed runs (the code's, or another
        # thread's): those runs stand, as plain runs would; no profiled run is made.
        return Capture(None, no_report=STARTED_BETWEEN_MESSAGE)


def _profiled_run(
    fn: Callable[[], Any],
    torch: Any,
    *,
    gpu: bool,
    protocol: str,
    spans: list[float],
    readings: list[tuple[float | None, float | None]],
    host_loops: list[float],
    warm: WarmUp,
    sensors: GpuSensors | None,
    runs: dict[str, int],
    name: str,
    source: str,
    attribution: Attribution | None = None,
) -> Capture:
    __tracebackhide__ = True
    trace_path = _new_trace_path()
    value, error = None, None
    profiled_span = None
    wall = None
    memory = _Memory(gpu)
    memory.start()  # before the profiler: its synchronisation is not the code's
    activities = [torch.profiler.ProfilerActivity.CPU]
    if gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    all_threads = _all_threads_config(torch)
    teardown_note = cupti.ask_teardown(torch) if gpu else None
    profiler = torch.profiler.profile(
        activities=activities,
        record_shapes=True,
        **({"experimental_config": all_threads} if all_threads is not None else {}),
    )
    threads_before = {thread.ident for thread in threading.enumerate()}
    starts = _ProfilerStarts()
    with warnings.catch_warnings(), quiet_native_stderr():
        # torch warns that a profiler clears its events each cycle: true and harmless here.
        warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle.*")
        profiler.start()
    taken_over = False
    try:
        starts.install()
        start_wall = clocks.now()
        with attribution.active() if attribution is not None else contextlib.nullcontext():
            profiled_span, value = timed_run(fn, gpu)
        wall = clocks.now() - start_wall
    except BaseException as e:
        error = e
        if gpu:
            _quiet_synchronize()
    finally:
        starts.remove()
        # Ours is off when the code's own profiler stopped; still on, but not ours, when the
        # code left its profiler running. Either way stopping or exporting ours would end the
        # code's profiler or crash: it is dropped as it is.
        taken_over = starts.count > 0 or not profiler_running()
        if not taken_over:
            with quiet_native_stderr():
                profiler.stop()
        memory.stop()
        runs["profiled"] = 1
        runs["total"] += 1
    if taken_over:
        del profiler
        if error is not None:
            error.__notes__ = [  # pyright: ignore[reportAttributeAccessIssue]  # add_note() is 3.11+; 3.10 shows __notes__ too
                *getattr(error, "__notes__", []),
                f"(jupyter_brrr: no report: {TAKEN_OVER_MESSAGE})",
            ]
            _release(error)
        return Capture(None, value=value, error=error, no_report=TAKEN_OVER_MESSAGE)
    new_threads = len({thread.ident for thread in threading.enumerate()} - threads_before)
    thread_names = _live_thread_names()
    try:
        profiler.export_chrome_trace(trace_path)
        report = _report(
            trace_path,
            gpu=gpu,
            protocol=protocol,
            spans=spans,
            readings=readings,
            host_loops=host_loops,
            warm=warm,
            sensors=sensors,
            memory=memory,
            profiled_span=profiled_span,
            wall=wall,
            runs=runs,
            name=name,
            source=source,
            failed=error is not None,
            threads=_ThreadFacts(
                threading.get_native_id(),
                all_threads is not None,
                new_threads,
                thread_names,
                COMPILED_THREADS_REASON
                if all_threads is None and _TRITON_RUNTIME in sys.modules
                else None,
            ),
        )
        if attribution is not None:
            report.notes += attribution.notes
        if teardown_note is not None:
            report.notes.append(teardown_note)
    except Exception as analysis_error:  # a partial trace may be unreadable: keep the user's error
        if error is None:
            raise
        report = None
        error.__notes__ = [  # pyright: ignore[reportAttributeAccessIssue]  # add_note() is 3.11+; 3.10 shows __notes__ too
            *getattr(error, "__notes__", []),
            f"(jupyter_brrr: no partial report: {analysis_error})",
        ]
    finally:
        del profiler
    if error is not None:
        _release(error)
    return Capture(report, value=value, error=error)


def _warm_up(
    fn: Callable[[], Any],
    at_least: int,
    sustained: bool,
    gpu: bool,
    sensors: GpuSensors | None,
    runs: dict[str, int],
) -> WarmUp:
    """Warm up as the module docstring says; each run's value is dropped as it returns."""
    __tracebackhide__ = True
    warm = WarmUp()
    read = sensors if sensors is not None and sensors.available else None
    samples: list[tuple[float, float]] = []
    started = clocks.now()
    if read is not None:
        warm.clock_start_mhz = read.sm_clock_mhz()
        if warm.clock_start_mhz is not None:
            samples.append((0.0, warm.clock_start_mhz))
    last_sample = last_run = 0.0
    while True:
        now = clocks.now() - started
        if warm.runs >= at_least:
            if not sustained:
                break
            if warm.runs >= max(WARMUP_MAX_RUNS, at_least):
                warm.ended = "max runs"
                break
            if now >= WARMUP_S and settled(samples, CLOCK_SETTLE_S, CLOCK_TOLERANCE):
                warm.ended = "settled" if len(samples) > 1 else "time"
                break
            if now >= WARMUP_CAP_S or (warm.runs and now + last_run > WARMUP_CAP_S):
                warm.ended = "cap"
                break
        fn()
        warm.runs += 1
        runs["warmup"] += 1
        done = clocks.now() - started
        last_run = done - now
        if read is not None and done - last_sample >= CLOCK_SAMPLE_S:
            mhz = read.sm_clock_mhz()
            if mhz is not None:
                samples.append((done, mhz))
            last_sample = done
    if gpu:
        import torch

        torch.cuda.synchronize()
    warm.seconds = clocks.now() - started
    if read is not None:
        warm.clock_end_mhz = read.sm_clock_mhz()
    return warm


def _set_back(namespace: dict, bindings: dict) -> None:
    """Give ``namespace`` the bindings it had before the cell: names the cell made go, names it
    rebound get their old values (mutations in place stay: they cannot be told apart)."""
    for name in [name for name in namespace if name not in bindings]:
        del namespace[name]
    for name, old in bindings.items():
        if namespace.get(name, _MISSING) is not old:
            namespace[name] = old


_MISSING = object()


class _Memory:
    """The CUDA caching allocator's counters around the profiled run (nothing on a CPU)."""

    def __init__(self, gpu: bool) -> None:
        self.gpu = gpu
        self.before: float | None = None
        self.peak: float | None = None
        self.after: float | None = None
        self.capacity: float | None = None

    def start(self) -> None:
        if not self.gpu:
            return
        import torch

        torch.cuda.synchronize()  # frees of the earlier runs are done when the GPU is
        torch.cuda.reset_peak_memory_stats()
        self.before = float(torch.cuda.memory_allocated())

    def stop(self) -> None:
        if not self.gpu or self.before is None:
            return
        import torch

        with contextlib.suppress(Exception):  # a device error has already reached the user
            device = torch.cuda.current_device()
            self.peak = float(torch.cuda.max_memory_allocated(device))
            self.after = float(torch.cuda.memory_allocated(device))
            self.capacity = float(torch.cuda.get_device_properties(device).total_memory)

    def summary(self) -> dict:
        increase = None
        if self.peak is not None and self.before is not None:
            increase = max(self.peak - self.before, 0.0)
        return {
            "memory_before_bytes": self.before,
            "memory_increase_bytes": increase,
            "memory_after_bytes": self.after,
        }


# Loaded once torch.compile has made Triton kernels in this process (they launch through it).
_TRITON_RUNTIME = "torch._inductor.runtime.triton_heuristics"
# Why ops of other threads are not recorded though this torch could record them.
COMPILED_THREADS_REASON = (
    "torch.compile's Triton kernels ran in this process, and PyTorch's all-threads recording "
    "drops the tensors they are launched with (their costs), so only the code's own thread "
    "is recorded"
)


def _all_threads_config(torch: Any) -> Any:
    """The profiler setting that records ops of every thread, not only the one that started
    it (torch 2.7 and later); None where this torch has no such setting, or once compiled
    Triton kernels may run: in that mode PyTorch drops the inputs of ops recorded from Python
    (``_RecordFunctionFast``), which is how a Triton kernel's tensors reach the trace (seen on
    the H200 with torch 2.11, bench/RESULTS.md), and without them no compiled kernel has a
    cost. Compiled code is common in a notebook; ops in threads the code starts are rare."""
    if _TRITON_RUNTIME in sys.modules:
        return None
    try:
        return torch.profiler._ExperimentalConfig(profile_all_threads=True)
    except (AttributeError, TypeError):
        return None


@dataclass(frozen=True)
class _ThreadFacts:
    """What the report needs to say about threads: the thread that ran the code (native id,
    as the trace has it), whether other threads were recorded, how many threads the code left
    running, and the names of the threads alive after the run (native id -> name)."""

    own_tid: int
    all_recorded: bool
    started: int
    names: dict[int, str]
    # Why other threads were not recorded where this torch could have (None: it could not).
    not_recorded_reason: str | None = None


def _live_thread_names() -> dict[int, str]:
    """Native id -> name of the threads alive now: the system's names where it has them
    (torch's own threads are named there: ``pt_autograd_0`` runs the backward of CUDA
    tensors), else the Python threads'."""
    names = {
        native: thread.name
        for thread in threading.enumerate()
        if (native := getattr(thread, "native_id", None)) is not None
    }
    try:
        tasks = os.scandir("/proc/self/task")
    except OSError:  # not Linux
        return names
    with tasks:
        for task in tasks:
            with (
                contextlib.suppress(OSError, ValueError),
                open(os.path.join(task.path, "comm")) as comm,
            ):
                names[int(task.name)] = comm.read().strip()
    return names


def _thread_note(trace: Any, facts: _ThreadFacts) -> str | None:
    """A note on ops run in other threads than the code's: recorded (how many threads), or
    missing. torch's own threads (the autograd engine's, named ``pt_...``) do not count: their
    ops are the code's, recorded as always."""
    import pandas as pd

    tids: set[int] = set()
    for frame in (trace.ops, trace.runtime):
        if len(frame) and "tid" in frame:
            tids |= set(pd.to_numeric(frame["tid"], errors="coerce").dropna().astype("int64"))
    others = [
        tid
        for tid in tids
        if tid != facts.own_tid and not facts.names.get(tid, "").startswith("pt_")
    ]
    if facts.all_recorded:
        if not others:
            return None
        count = len(others)
        return (
            f"Torch ops ran on {count} thread{'s' if count > 1 else ''} besides the one that ran "
            "the code (worker threads): they are recorded with the rest, and their host time "
            "can overlap the main thread's."
        )
    count = max(len(others), facts.started)
    if not count:
        return None
    return (
        f"The code ran work on {count} other thread{'s' if count > 1 else ''} (worker threads). "
        "Ops run in other threads are missing from the op table (their GPU kernels are "
        "recorded, without the op that launched them): "
        + (
            f"{facts.not_recorded_reason}."
            if facts.not_recorded_reason
            else "this torch records the ops of the profiling thread only; torch 2.7 and later "
            "record them."
        )
    )


# Raw traces of this process, kept so that report.save() can write them next to the report; the
# oldest go once there are more than TRACES_KEPT, and all of them when the process ends. A
# process that is killed (a kernel restarted with SIGKILL) cannot clean up: its folder is named
# after it (pid namespace, pid, start time), and the first capture of a later process removes
# the folders of processes that no longer run.
TRACES_KEPT = 20
TRACE_DIR_PREFIX = "jupyter_brrr_"
# Folders of the format before the process was in the name: removed once this old.
_UNNAMED_STALE_S = 7 * 24 * 3600
_trace_dir: tempfile.TemporaryDirectory | None = None


def _new_trace_path() -> str:
    global _trace_dir
    if _trace_dir is None:
        with contextlib.suppress(OSError):
            remove_stale_trace_dirs()
        _trace_dir = tempfile.TemporaryDirectory(prefix=f"{TRACE_DIR_PREFIX}{_process_tag()}_")
    folder = _trace_dir.name
    traces = sorted(os.scandir(folder), key=lambda entry: entry.stat().st_mtime)
    for old in traces[: max(len(traces) - TRACES_KEPT + 1, 0)]:
        os.remove(old.path)
    return os.path.join(folder, f"trace-{time.time_ns()}.json")


def _process_tag(pid: int | None = None) -> str:
    """``<pid namespace>-<pid>-<start time>``: names one process among all on this machine
    (two containers can share a temporary folder and a pid; a pid can be reused)."""
    pid = os.getpid() if pid is None else pid
    return f"{_pid_namespace()}-{pid}-{_start_time(pid)}"


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:  # not Linux: pids are unique on the machine
        return 0


def _start_time(pid: int) -> int:
    """The process's start time in clock ticks since boot (Linux), 0 where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces and parentheses: split after it.
            return int(stat.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


_TAGGED = re.compile(rf"^{TRACE_DIR_PREFIX}(\d+)-(\d+)-(\d+)_[A-Za-z0-9_]+$")


def _process_gone(pid: int, started: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False  # alive (another user's) or unknown: keep
    return started != 0 and _start_time(pid) not in (0, started)  # the pid was reused


def remove_stale_trace_dirs(root: str | None = None) -> list[str]:
    """Remove the trace folders left in the temporary folder by this user's processes that no
    longer run (killed kernels); returns the paths removed. Folders of running processes, of
    other users, of other pid namespaces (containers) and of unknown form are kept; folders of
    the older unnamed form only when untouched for a week."""
    root = root or tempfile.gettempdir()
    namespace, uid = _pid_namespace(), os.getuid() if hasattr(os, "getuid") else None
    removed = []
    with os.scandir(root) as entries:
        for entry in entries:
            if not entry.name.startswith(TRACE_DIR_PREFIX) or not entry.is_dir(
                follow_symlinks=False
            ):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if uid is not None and info.st_uid != uid:
                continue
            if _trace_dir is not None and entry.path == _trace_dir.name:
                continue
            tagged = _TAGGED.match(entry.name)
            if tagged:
                ns, pid, started = (int(g) for g in tagged.groups())
                stale = ns == namespace and _process_gone(pid, started)
            else:
                stale = _is_unnamed_stale(entry.path, info.st_mtime)
            if stale:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


def _is_unnamed_stale(path: str, mtime: float) -> bool:
    """A folder of the older form (``jupyter_brrr_<random>``) holding only traces, none
    written for a week."""
    cutoff = time.time() - _UNNAMED_STALE_S
    if mtime > cutoff:
        return False
    try:
        with os.scandir(path) as files:
            return all(
                f.name.startswith("trace-")
                and f.is_file(follow_symlinks=False)
                and f.stat(follow_symlinks=False).st_mtime <= cutoff
                for f in files
            )
    except OSError:
        return False


@contextlib.contextmanager
def quiet_native_stderr() -> Iterator[None]:
    """Silence file descriptor 2 while the profiler starts or stops: some torch builds print a
    Kineto log line there each time, which a notebook would show under every cell. Only our
    own calls are wrapped, never the user's code."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real stderr (embedded, redirected)
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def timed_run(fn: Callable[[], Any], gpu: bool) -> tuple[float, Any]:
    """One run's span: CUDA events on a GPU (kernels finish after the host returns), else the
    host clock."""
    __tracebackhide__ = True
    if gpu:
        import torch

        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        value = fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e-3, value
    start_time = clocks.now()
    value = fn()
    return clocks.now() - start_time, value


def _quiet_synchronize() -> None:
    import torch

    with contextlib.suppress(Exception):  # a device error has already reached the user
        torch.cuda.synchronize()


def _release(error: BaseException) -> None:
    """After a failure, drop what the failed frames hold so their GPU memory can be reused."""
    import torch

    traceback.clear_frames(error.__traceback__)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def math_mode() -> dict[str, Any]:
    """PyTorch's settings that decide which arithmetic units a float32 matmul or convolution
    runs on, as they stand now (the report records them: the roofline follows them).

    ``matmul_tf32`` and ``conv_tf32`` are the verdicts: whether cuBLAS may run float32 matmuls,
    and cuDNN float32 convolutions, on TF32 tensor cores. PyTorch >= 2.9 has a second API for
    them (``fp32_precision``); reading the legacy flag raises once the two were set to disagree,
    and then the new one decides. The reduced-precision reduction flags (fp16/bf16 GEMMs may
    accumulate partly in 16 bits) and autocast are recorded as they are: autocast's casts show
    in the ops' dtypes, which pick their roofs. A setting this torch lacks is None.
    """
    import torch

    matmul = torch.backends.cuda.matmul
    cudnn = torch.backends.cudnn

    def read(getter: Callable[[], Any]) -> Any:
        try:
            return getter()
        except (AttributeError, RuntimeError, TypeError):  # older torch; legacy and new APIs mixed
            return None

    matmul_precision = read(lambda: str(matmul.fp32_precision))
    conv_precision = read(lambda: str(cudnn.conv.fp32_precision))  # pyright: ignore[reportAttributeAccessIssue]  # newer torch; read() catches its absence
    matmul_allow = read(lambda: bool(matmul.allow_tf32))
    conv_allow = read(lambda: bool(cudnn.allow_tf32))
    return {
        "matmul_tf32": matmul_allow if matmul_allow is not None else matmul_precision == "tf32",
        "conv_tf32": conv_allow if conv_allow is not None else conv_precision == "tf32",
        "cudnn_allow_tf32": conv_allow,
        "matmul_allow_tf32": matmul_allow,
        "float32_matmul_precision": read(torch.get_float32_matmul_precision),
        "matmul_fp32_precision": matmul_precision,
        "conv_fp32_precision": conv_precision,
        "fp16_reduced_precision_reduction": read(
            lambda: bool(matmul.allow_fp16_reduced_precision_reduction)
        ),
        "bf16_reduced_precision_reduction": read(
            lambda: bool(matmul.allow_bf16_reduced_precision_reduction)
        ),
        "autocast": read(lambda: bool(torch.is_autocast_enabled("cuda"))),
        "autocast_dtype": read(
            lambda: str(torch.get_autocast_dtype("cuda")).removeprefix("torch.")
        ),
        "cudnn_benchmark": read(lambda: bool(cudnn.benchmark)),
        "deterministic": read(torch.are_deterministic_algorithms_enabled),
    }


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def _device_facts(gpu: bool) -> tuple[str, float | None]:
    import torch

    if not gpu:
        return "CPU", None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.name, float(props.total_memory)


def _report(
    trace_path: str,
    *,
    gpu: bool,
    protocol: str,
    spans: list[float],
    readings: list[tuple[float | None, float | None]],
    host_loops: list[float],
    warm: WarmUp,
    sensors: GpuSensors | None,
    memory: _Memory,
    profiled_span: float | None,
    wall: float | None,
    runs: dict[str, int],
    name: str,
    source: str,
    failed: bool,
    threads: _ThreadFacts | None = None,
) -> Report:
    device, capacity = _device_facts(gpu)
    device_peaks, peaks_note = peaks.peaks_for(device) if gpu else (None, "")
    notes = []
    if failed:
        notes.append("The code raised an error: this report covers only what ran before it.")
    timing = _timing(protocol, gpu, spans, readings, host_loops, warm, sensors)
    if protocol != "single" and spans:
        span = statistics.median(spans)
        span_source = "cuda_events_unprofiled" if gpu else "host_clock_unprofiled"
        notes.append(_protocol_note(timing, source, profiled_span, span))
        notes.extend(finding["text"] for finding in timing["findings"])
    else:
        span = profiled_span
        span_source = "cuda_events_profiled" if gpu else "host_clock_profiled"
        notes.append(
            "One profiled run: its numbers include first-run costs (module loading, allocator growth, "
            "compilation) and its idle time includes profiler overhead. Use "
            f"{steady_state_options(source)} for steady-state numbers."
        )
    if gpu and peaks_note:
        notes.append(peaks_note)
    trace = read_trace(trace_path)
    if threads is not None and (note := _thread_note(trace, threads)):
        notes.append(note)
    memory_figures = memory.summary()
    measured = analysis.Measured(
        warm=runs["warmup"] > 0,
        wall_s=wall,
        profiled_span_s=profiled_span,
        run_spans_s=spans,
        torch_version=_torch_version(),  # a comparison checks it matches
        timing=timing,
        memory_before_bytes=memory_figures["memory_before_bytes"],
        memory_increase_bytes=memory_figures["memory_increase_bytes"],
        memory_after_bytes=memory_figures["memory_after_bytes"],
        cuda_memory=gpu,  # not the trace's peak where the counters were not read
        # CPU op times come from the profiled run, slower than the unprofiled span: capped.
        host_span_s=span if not gpu and protocol != "single" and spans else None,
    )
    result = analysis.analyze(
        trace,
        device_peaks,
        span_s=span if gpu else None,
        span_source=span_source,
        runs=Runs(
            warmup=runs["warmup"],
            timed=runs["timed"],
            profiled=runs["profiled"],
            total=runs["total"],
        ),
        peak_memory_bytes=memory.peak,
        memory_capacity_bytes=capacity,
        device=device,
        notes=notes,
        # Read after the run: a cell that sets them at its start ran with these.
        math_mode=math_mode(),
        measured=measured,
    )
    result.graph = step_graph.build(trace, result.kernels)
    return Report.from_analysis(result, name=name, source=source, trace_path=trace_path)


def _timing(
    protocol: str,
    gpu: bool,
    spans: list[float],
    readings: list[tuple[float | None, float | None]],
    host_loops: list[float],
    warm: WarmUp,
    sensors: GpuSensors | None,
) -> dict:
    """``summary["timing"]``: the protocol, the timed runs' spread, clocks and findings."""
    stats = spread.stats(spans)
    return {
        "protocol": protocol,
        "clock": "cuda_events" if gpu else "host_clock",
        "warmup_runs": warm.runs,
        "warmup_s": warm.seconds if protocol != "single" else None,
        "warmup_ended": warm.ended if protocol != "single" else None,
        "warmup_sm_clock_mhz": [warm.clock_start_mhz, warm.clock_end_mhz],
        "timed_runs": len(spans),
        "min_s": stats.min if stats else None,
        "q1_s": stats.q1 if stats else None,
        "median_s": stats.median if stats else None,
        "q3_s": stats.q3 if stats else None,
        "max_s": stats.max if stats else None,
        "spread": stats.spread if stats else None,
        "sm_clock_mhz": [r[0] for r in readings],
        "power_w": [r[1] for r in readings],
        "sensors": "no GPU" if not gpu else (sensors.unavailable if sensors else None),
        # The host CPU's speed after each timed run, and at its fastest in this process.
        "host_loop_s": list(host_loops),
        "host_loop_fastest_s": fastest_host_loop_s() if host_loops else None,
        "host_slowdown": host_slowdown(host_loops, fastest_host_loop_s()),
        "findings": [
            f.to_dict()
            for f in [
                *spread.findings(spans),
                *spread.host_findings(host_loops, fastest_host_loop_s()),
            ]
        ],
    }


def _option(source: str, flag: str) -> str:
    """A flag in the words of the entry point: ``--burst`` in a cell, ``burst=True`` elsewhere."""
    return f"--{flag}" if source == "magic" else f"{flag}=True"


def _protocol_note(timing: dict, source: str, profiled_span: float | None, span: float) -> str:
    """How the span was measured, in words: protocol, warm-up, spread, clocks."""
    clock = "CUDA events" if timing["clock"] == "cuda_events" else "the host clock"
    runs = timing["warmup_runs"]
    warm = f"{runs:,} warm-up run{'s' if runs != 1 else ''} in {timing['warmup_s']:.2g} s"
    start, end = timing["warmup_sm_clock_mhz"]
    clocks = f" (SM clock {start:.0f} -> {end:.0f} MHz)" if start and end else ""
    if timing["protocol"] == "sustained":
        ended = {
            "settled": "until the SM clock stopped falling",
            "time": f"for {WARMUP_S:g} s",
            "cap": f"until its {WARMUP_CAP_S:g} s cap"
            + (", before the SM clock had settled" if start and end else ""),
            "max runs": f"until its cap of {WARMUP_MAX_RUNS:,} runs",
        }.get(timing["warmup_ended"], "")
        how = f"after a sustained warm-up ({warm}, {ended}{clocks})"
    elif timing["clock"] == "cuda_events":
        how = (
            f"after a burst warm-up ({warm}{clocks}, as asked with {_option(source, 'burst')}): "
            "the GPU may still have run at its boost clock, faster than in sustained work"
        )
    else:
        how = f"after {warm} (on the CPU the warm-up is the runs asked for)"
    # Quartiles of fewer than four runs are interpolated: quote the extremes then.
    if timing["timed_runs"] >= 4:
        stats = f"min {_ms(timing['min_s'])}, IQR {_ms(timing['q1_s'])} - {_ms(timing['q3_s'])}"
    else:
        stats = f"min {_ms(timing['min_s'])}, max {_ms(timing['max_s'])}"
    clocks_used = [c for c in timing["sm_clock_mhz"] if c is not None]
    power = [p for p in timing["power_w"] if p is not None]
    while_timed = ""
    if clocks_used:
        while_timed = f"; SM clock {_range(clocks_used, 'MHz')}"
        if power:
            while_timed += f", power {_range(power, 'W')}"
    elif timing.get("sensors") and timing["clock"] == "cuda_events":
        while_timed = f"; {timing['sensors']}"
    text = (
        f"Span per run: median of {timing['timed_runs']} unprofiled runs timed with {clock} "
        f"({stats}{while_timed}), {how}."
    )
    if profiled_span and profiled_span >= span:
        text += (
            f" The profiled run took {_ms(profiled_span)} ({profiled_span / span:.2f}x): "
            "that much the profiler inflated it."
        )
    elif profiled_span:
        text += (
            f" The profiled run took {_ms(profiled_span)} ({profiled_span / span:.2f}x), "
            "faster than the median timed run: the runs vary more than the profiler costs."
        )
    return text


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


def _range(values: list[float], unit: str) -> str:
    low, high = min(values), max(values)
    return f"{low:.0f} {unit}" if round(low) == round(high) else f"{low:.0f}-{high:.0f} {unit}"
