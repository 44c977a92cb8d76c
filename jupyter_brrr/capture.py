"""Run code under the PyTorch profiler, time it honestly, and turn what it recorded into a Report.

The protocol, and why:
- ``warmup`` runs first, unprofiled, so module loading, cuBLAS handles, allocator growth and
  compilation stay out of the numbers.
- With ``warmup`` or ``repeat`` > 1, ``repeat`` runs are timed WITHOUT the profiler, each
  bracketed by CUDA events: the profiler slows the host side and inflates idle time, so the
  median of these is the span the report calls the truth.
- One run is profiled (CPU + CUDA activities, shapes), bracketed by CUDA events too, with the
  peak-memory counter reset before it. Its kernels give the busy time and the split.
With the defaults (no warm-up, one run) the code runs exactly once, profiled, and the report says
that its numbers include first-run costs and profiler overhead.
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import analysis, peaks
from .events import read_trace
from .report import Report, steady_state_options


@dataclass
class Capture:
    """The outcome of profiling some code: its report, its return value, or its error."""

    report: Report | None
    value: Any = None
    error: BaseException | None = None


def capture(
    fn: Callable[[], Any],
    *,
    warmup: int = 0,
    repeat: int = 1,
    cpu: bool = False,
    name: str = "",
    source: str = "profile",
) -> Capture:
    """Run ``fn`` as the module docstring describes. Never raises the code's own error: it comes
    back in ``Capture.error``, with a partial report when the profiled run had recorded something."""
    __tracebackhide__ = True
    import torch

    if warmup < 0 or repeat < 1:
        raise ValueError(
            f"warmup must be >= 0 and repeat >= 1 (got warmup={warmup}, repeat={repeat})."
        )
    gpu = torch.cuda.is_available() and not cpu
    steady = warmup > 0 or repeat > 1
    runs = {"warmup": 0, "timed": 0, "profiled": 0, "total": 0}
    spans: list[float] = []
    try:
        for _ in range(warmup):
            fn()
            runs["warmup"] += 1
        if gpu:
            torch.cuda.synchronize()
        if steady:
            for _ in range(repeat):
                span, _value = _timed(fn, gpu)
                spans.append(span)
                runs["timed"] += 1
    except BaseException as error:  # the user's code failed (or Ctrl-C): report, then re-raise
        runs["total"] = runs["warmup"] + runs["timed"]
        _release(error)
        return Capture(None, error=error)
    runs["total"] = runs["warmup"] + runs["timed"]

    trace_path = _new_trace_path()
    value, error = None, None
    profiled_span = None
    wall = None
    activities = [torch.profiler.ProfilerActivity.CPU]
    if gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        torch.cuda.reset_peak_memory_stats()
    profiler = torch.profiler.profile(activities=activities, record_shapes=True)
    with warnings.catch_warnings(), _quiet_native_stderr():
        # torch warns that a profiler clears its events each cycle: true and harmless here.
        warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle.*")
        profiler.start()
    try:
        start_wall = time.perf_counter()
        profiled_span, value = _timed(fn, gpu)
        wall = time.perf_counter() - start_wall
    except BaseException as e:
        error = e
        if gpu:
            _quiet_synchronize()
    finally:
        with _quiet_native_stderr():
            profiler.stop()
        runs["profiled"] = 1
        runs["total"] += 1
    try:
        profiler.export_chrome_trace(trace_path)
        report = _report(
            trace_path,
            gpu=gpu,
            steady=steady,
            spans=spans,
            profiled_span=profiled_span,
            wall=wall,
            runs=runs,
            name=name,
            source=source,
            failed=error is not None,
        )
    except Exception as analysis_error:  # a partial trace may be unreadable: keep the user's error
        if error is None:
            raise
        report = None
        error.__notes__ = [
            *getattr(error, "__notes__", []),
            f"(jupyter_brrr: no partial report: {analysis_error})",
        ]
    finally:
        del profiler
    if error is not None:
        _release(error)
    return Capture(report, value=value, error=error)


# Raw traces of this process, kept so that report.save() can write them next to the report; the
# oldest go once there are more than TRACES_KEPT, and all of them when the process ends.
TRACES_KEPT = 20
_trace_dir: tempfile.TemporaryDirectory | None = None


def _new_trace_path() -> str:
    global _trace_dir
    if _trace_dir is None:
        _trace_dir = tempfile.TemporaryDirectory(prefix="jupyter_brrr_")
    folder = _trace_dir.name
    traces = sorted(os.scandir(folder), key=lambda entry: entry.stat().st_mtime)
    for old in traces[: max(len(traces) - TRACES_KEPT + 1, 0)]:
        os.remove(old.path)
    return os.path.join(folder, f"trace-{time.time_ns()}.json")


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
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


def _timed(fn: Callable[[], Any], gpu: bool) -> tuple[float, Any]:
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
    start_time = time.perf_counter()
    value = fn()
    return time.perf_counter() - start_time, value


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
    conv_precision = read(lambda: str(cudnn.conv.fp32_precision))
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


def _device_facts(gpu: bool) -> tuple[str, float | None, float | None]:
    import torch

    if not gpu:
        return "CPU", None, None
    device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    return props.name, float(torch.cuda.max_memory_allocated(device)), float(props.total_memory)


def _report(
    trace_path: str,
    *,
    gpu: bool,
    steady: bool,
    spans: list[float],
    profiled_span: float | None,
    wall: float | None,
    runs: dict,
    name: str,
    source: str,
    failed: bool,
) -> Report:
    device, peak_memory, capacity = _device_facts(gpu)
    device_peaks, peaks_note = peaks.peaks_for(device) if gpu else (None, "")
    notes = []
    if failed:
        notes.append("The code raised an error: this report covers only what ran before it.")
    if steady and spans:
        span = statistics.median(spans)
        span_source = "cuda_events_unprofiled" if gpu else "host_clock_unprofiled"
        if profiled_span:
            notes.append(
                f"Span per run: median of {len(spans)} unprofiled runs timed with "
                f"{'CUDA events' if gpu else 'the host clock'}; the profiled run took "
                f"{profiled_span * 1e3:.3g} ms ({profiled_span / span:.2f}x): that much the profiler inflated it."
            )
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
    result = analysis.analyze(
        trace,
        device_peaks,
        span_s=span if gpu else None,
        span_source=span_source,
        runs=runs,
        peak_memory_bytes=peak_memory,
        memory_capacity_bytes=capacity,
        device=device,
        notes=notes,
        # Read after the run: a cell that sets them at its start ran with these.
        math_mode=math_mode(),
    )
    result.summary["warm"] = runs["warmup"] > 0
    result.summary["wall_s"] = wall
    result.summary["profiled_span_s"] = profiled_span
    result.summary["run_spans_s"] = spans
    result.summary["torch_version"] = _torch_version()  # a comparison checks it matches
    if not gpu and steady and spans:
        # CPU op times come from the profiled run, slower than the unprofiled span: cap them.
        s = result.summary
        s["span_s"], s["span_source"] = span, span_source
        s["busy_s"] = s["other_s"] = min(s["busy_s"], span)
        s["idle_s"] = span - s["busy_s"]
    return Report.from_analysis(result, name=name, source=source, trace_path=trace_path)
