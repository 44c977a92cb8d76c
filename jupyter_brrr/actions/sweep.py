"""The batch-doubling sweep: run the same step at growing sizes, and read the bottleneck off
how its time grows.

Each point is measured the way a report is (``capture.capture``: warm-up, timed runs with CUDA
events, or the host clock on a CPU, without the profiler, then one profiled run) and keeps its
own report. From the points:

- **per doubling** the time ratio, normalised to a doubling when the sizes are not doublings
  (``ratio ** (log 2 / log(size_b / size_a))``, the log-log slope as a ratio). Near 1 (below
  ``OVERHEAD_RATIO``) the GPU waits on the host: **overhead** (also at a larger ratio while the
  GPU is idle most of the larger size's span, ``OVERHEAD_IDLE``: the host's work grew, as when a
  library switches to a GEMM with an extra reduction kernel); or, where the GPU is busy most of
  the span (``FIXED_BUSY``), work that does not grow with the size dominates (a decode step
  reading all the weights for one token): **fixed**. Near 2 (from ``BOUND_RATIO``)
  each item costs the same: the GPU is saturated, and the larger point's split says whether by
  **compute** or **memory** (on a CPU there is no split: **saturated**). In between, the
  **transition**; above ``SUPERLINEAR_RATIO``, **superlinear** (an item costs more at larger
  sizes: a cache no longer holds the working set, or the algorithm grows faster than the size).
- **who sets the span** at each size, on a GPU: the GPU's share of the critical path of the
  point's step, replayed on its dependencies without the profiler (``causal.gpu_path_share``).
  Where the host sets it at the smaller size and the GPU at the larger, the doubling is the
  **transition** (the GPU's growing work fills the host's gaps: where it overtakes the host's),
  whatever the ratio says; where the host sets it at both, **overhead**; **fixed** only where the
  GPU already set it at the smaller size.
- **the knee**: the smallest size whose throughput (items per second) is within ``KNEE_SHARE`` of
  the best measured; doubling past it buys little throughput and costs memory and latency.
  Where that is the largest size measured and throughput still grew there (by ``STILL_GROWS``
  or more over the size before), the knee lies beyond the sizes measured: there is none, and a
  note says so.
- **the best size that fits**: the measured size of the highest throughput.
- **capacity**: on a GPU the allocator's peak during each profiled run (``peak_memory_bytes``:
  what was already allocated plus the step's need) is fitted against the size (least squares,
  linear; quadratic when there are four points or more and the line misses by more than
  ``FIT_TOLERANCE``), and the fit gives the largest size that fits this GPU (what this process's
  allocator may reach: its memory fraction of the device, and no more than it holds plus what is
  free) and the GPUs of the peak table (their nominal memory), only up to ``EXTRAPOLATE_MAX``
  times the largest size measured (further out the fit is a guess: a note says so). Where the
  per-item bytes at the largest size measured are under ``FLAT_SHARE`` of the fixed part, the
  fit is flat (the slope is lost in the fixed part's noise): no largest size, and a note. When
  the sweep ended at an out-of-memory error, the predicted largest size is run once to confirm
  it.

The sweep stops cleanly at a CUDA out-of-memory error (the failed frames are released, the
allocator's cache emptied, "OOM at N" recorded), at its time budget (before a point that would
end past it, estimated from the previous point's time and ratio), on ``cancel`` and on Ctrl-C.
Any other error of the step at a later size stops the sweep with the error recorded; at the
first size it is raised (the step's own error, with a note), as it is a bug of the step rather
than a limit of the GPU.

The step runs ``warmup + repeat + 1`` times per point at least (more in a sustained GPU
warm-up). A step that changes state (trains) changes it at every run: ``reset`` (the magic passes
the snapshot's) puts the state back before each point.
"""

from __future__ import annotations

import gc
import itertools
import math
import statistics
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..analysis import causal
from ..analysis.spread import round_hosts, steady_rounds
from ..capture import clocks
from ..capture.clocks import host_loop_s
from ..capture.memory import reachable_gpu_memory
from ..report.display import nbytes
from ..report.report import json_safe
from ..report.shown import Shown
from ..schema.report import (
    SWEEP_CAPACITY_COLUMNS,
    SWEEP_DOUBLING_COLUMNS,
    SWEEP_POINT_COLUMNS,
    SWEEP_VERDICTS,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..report.report import Report

SWEEP_SCHEMA = "jupyter_brrr.sweep"
SWEEP_VERSION = 1
DEFAULT_BUDGET_S = 60.0
DEFAULT_ROUNDS = 3
OVERHEAD_RATIO = 1.3
BOUND_RATIO = 1.7
SUPERLINEAR_RATIO = 2.4
KNEE_SHARE = 0.9
# A flat doubling with the GPU busy at least this share of the larger size's span is fixed GPU
# work (reading the weights), not the host's overhead.
FIXED_BUSY = 0.5
# A doubling whose larger size leaves the GPU idle at least this share of the span is overhead,
# whatever its ratio: the time grew with the host's work (more launches).
OVERHEAD_IDLE = 0.5
FIT_TOLERANCE = 0.03
# Throughput this much higher at the largest size than at the one before still grows there.
STILL_GROWS = 0.05
# The capacity fit is trusted up to this many times the largest size measured.
EXTRAPOLATE_MAX = 8
# Per-item bytes (at the largest size measured) under this share of the fixed part: a flat fit.
FLAT_SHARE = 0.05
VERDICTS = SWEEP_VERDICTS
STATUSES = ("ok", "oom", "error", "budget", "cancelled")
POINT_COLUMNS = SWEEP_POINT_COLUMNS
DOUBLING_COLUMNS = SWEEP_DOUBLING_COLUMNS
CAPACITY_COLUMNS = SWEEP_CAPACITY_COLUMNS


@dataclass
class SweepProgress:
    """Where a sweep is: point ``k`` of ``n`` (1-based) at ``size``; ``message`` in words."""

    k: int
    n: int
    size: int
    fraction: float
    message: str


@dataclass
class SweepPoint:
    """One size: its numbers (``row``, the table's columns) and its report (None when it failed)."""

    size: int
    status: str
    row: dict
    report: Report | None = None


@dataclass(repr=False)  # repr, display and lines: the views draw it (Shown)
class SweepResult(Shown):
    """The sweep: ``table`` (one row per size), ``doublings`` (one row per step between sizes,
    with its verdict), ``knee``, ``best``, ``oom_at``, ``capacity`` (the largest size that fits
    each GPU), ``to_dict()`` (its JSON form); ``lines`` (the findings in words) and its display
    come from the views (``views/sweep_memory.py``)."""

    variable: str
    points: list[SweepPoint]
    device: str = "CPU"
    gpu: bool = False
    stopped: str = "done"  # done, oom, budget, cancelled, error
    oom_at: int | None = None
    knee: int | None = None
    best: int | None = None
    fit: dict | None = None
    capacities: list[dict] = field(default_factory=list)
    confirmation: dict | None = None
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    runs_total: int = 0
    doubling_rows: list[dict] = field(default_factory=list)

    @property
    def reports(self) -> dict[int, Report]:
        """The report of each measured size."""
        return {p.size: p.report for p in self.points if p.report is not None}

    @property
    def table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([p.row for p in self.points], columns=list(POINT_COLUMNS)).set_index(
            "size"
        )

    @property
    def doublings(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.doubling_rows, columns=list(DOUBLING_COLUMNS))

    @property
    def capacity(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.capacities, columns=list(CAPACITY_COLUMNS))

    def to_dict(self) -> dict:
        """The JSON-safe form (``Report.sweep`` for the magic; no NaN)."""
        return json_safe(
            {
                "schema": SWEEP_SCHEMA,
                "version": SWEEP_VERSION,
                "variable": self.variable,
                "device": self.device,
                "gpu": self.gpu,
                "stopped": self.stopped,
                "oom_at": self.oom_at,
                "knee": self.knee,
                "best": self.best,
                "fit": self.fit,
                "confirmation": self.confirmation,
                "elapsed_s": self.elapsed_s,
                "runs_total": self.runs_total,
                "points": {
                    "columns": list(POINT_COLUMNS),
                    "data": [[p.row.get(c) for c in POINT_COLUMNS] for p in self.points],
                },
                "doublings": {
                    "columns": list(DOUBLING_COLUMNS),
                    "data": [[d.get(c) for c in DOUBLING_COLUMNS] for d in self.doubling_rows],
                },
                "capacity": {
                    "columns": list(CAPACITY_COLUMNS),
                    "data": [[c.get(k) for k in CAPACITY_COLUMNS] for c in self.capacities],
                },
                "notes": list(self.notes),
                # The chart's geometry, so every renderer draws the same guides.
                "guides": guides([p.row for p in self.points]),
            }
        )


def guides(points: list[dict]) -> dict:
    """The flat (overhead) and slope-1 (saturated) guides of the time-against-size chart,
    through the first measured point to the last size: ``{"flat": [[x, y], [x, y]], ...}``."""
    ok = [p for p in points if p.get("status") == "ok" and p.get("span_s")]
    if len(ok) < 2:
        return {}
    first, last = ok[0], ok[-1]
    x0, y0, x1 = first["size"], first["span_s"], last["size"]
    return {"flat": [[x0, y0], [x1, y0]], "linear": [[x0, y0], [x1, y0 * x1 / x0]]}


def parse_sizes(text: str) -> tuple[str, list[int]]:
    """``"batch=8,16,32"`` or ``"batch=8..512"`` (doublings from 8 to 512) -> name and sizes.
    Raises ValueError with what is wrong."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise ValueError(
            f"expected NAME=SIZES, like batch=8,16,32 or batch=8..512 (doublings); got {text!r}"
        )
    values = values.strip()
    try:
        if ".." in values:
            low_text, high_text = values.split("..", 1)
            low, high = int(low_text), int(high_text)
            if low < 1 or high < low:
                raise ValueError
            sizes = []
            size = low
            while size <= high:
                sizes.append(size)
                size *= 2
        else:
            sizes = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        raise ValueError(
            f"{name}: sizes are whole numbers from 1, like 8,16,32 or 8..512; got {values!r}"
        ) from None
    check_sizes(sizes)
    return name, sizes


def check_sizes(sizes: Sequence[int]) -> list[int]:
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError(f"a sweep needs at least two sizes (got {sizes}).")
    if any(not isinstance(s, int) or isinstance(s, bool) or s < 1 for s in sizes):
        raise ValueError(f"sizes are whole numbers from 1 (got {sizes}).")
    if any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError(f"sizes must grow (got {sizes}).")
    return sizes


def sweep(
    fn: Callable[[int], Any],
    sizes: Sequence[int],
    *,
    warmup: int = 1,
    repeat: int = 5,
    items: Callable[[int], float] | None = None,
    budget_s: float = DEFAULT_BUDGET_S,
    cpu: bool = False,
    burst: bool = False,
    confirm: bool = True,
    variable: str = "size",
    cancel: threading.Event | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    reset: Callable[[], Any] | None = None,
    namespace: dict | None = None,
    name: str = "",
    rounds: int = DEFAULT_ROUNDS,
) -> SweepResult:
    """Measure ``fn(size)`` (one step) at each of ``sizes``, growing; see the module docstring.

    ``items``: the items one step at ``size`` processes (default: ``size`` itself, a batch);
    ``budget_s``: no point is started that would end past it; ``burst``: warm up exactly
    ``warmup`` runs per point on a GPU instead of a sustained warm-up; ``confirm``: after an
    out-of-memory error, run the predicted largest size once; ``cancel``: set it to stop
    between points. ``reset`` is called before each point (a stateful step's state put back);
    ``namespace``: where the step binds names (a cell's), set back before each profiled run.
    ``rounds``: after every size is measured, each is timed again in this many interleaved
    rounds of ``repeat`` runs (0: none), and its time per step is the median of those.
    """
    import torch

    from ..capture.run import ProfilerInUseError, capture, check_can_profile

    sizes = check_sizes(sizes)
    if budget_s <= 0 or not math.isfinite(budget_s):
        raise ValueError(f"budget_s must be a positive number of seconds (got {budget_s}).")
    if warmup < 0 or repeat < 1:
        raise ValueError(f"warmup must be >= 0 and repeat >= 1 (got {warmup}, {repeat}).")
    check_can_profile()
    gpu = torch.cuda.is_available() and not cpu
    device = torch.cuda.get_device_name() if gpu else "CPU"
    count = items or (lambda size: float(size))
    result = SweepResult(variable=variable, points=[], device=device, gpu=gpu)
    started = clocks.now()
    last_elapsed = 0.0
    for k, size in enumerate(sizes, start=1):
        elapsed = clocks.now() - started
        if cancel is not None and cancel.is_set():
            result.stopped = "cancelled"
            break
        estimate = last_elapsed * _next_ratio(result.points)
        if result.points and elapsed + estimate > budget_s:
            result.stopped = "budget"
            result.notes.append(
                f"Stopped before {variable}={size}: the {budget_s:g} s budget would be passed "
                f"(the last size took {last_elapsed:.2g} s; the next about {estimate:.2g} s)."
            )
            break
        if progress is not None:
            progress(SweepProgress(k, len(sizes), size, (k - 1) / len(sizes), f"{variable}={size}"))
        if reset is not None:
            reset()
        point_started = clocks.now()
        try:
            captured = capture(
                lambda size=size: fn(size),
                warmup=warmup,
                repeat=repeat,
                cpu=cpu,
                burst=burst and gpu and (warmup > 0 or repeat > 1),
                name=f"{name or 'sweep'} {variable}={size}",
                source="sweep",
                namespace=namespace,
            )
        except ProfilerInUseError:
            if not result.points:
                raise
            result.stopped = "error"
            result.notes.append(f"Stopped at {variable}={size}: a profiler started meanwhile.")
            break
        last_elapsed = clocks.now() - point_started
        captured.value = None  # the step's output: not held across points
        error = captured.error
        if error is not None:
            point = _failed_point(size, error, captured, gpu)
            result.runs_total += point.row["runs"] or 0
            del captured
            if point.status == "error" and not result.points:
                # A bug of the step, not a limit of the GPU: its own error, with where it was.
                error.__notes__ = [  # pyright: ignore[reportAttributeAccessIssue]  # add_note() is 3.11+; 3.10 shows __notes__ too
                    *getattr(error, "__notes__", []),
                    f"(jupyter_brrr.sweep: the step failed at the first size, {variable}={size})",
                ]
                raise error
            del error
            _free(gpu)
            result.points.append(point)
            if point.status == "oom":
                result.stopped, result.oom_at = "oom", size
                break
            if point.status == "cancelled":
                result.stopped = "cancelled"
                break
            result.stopped = "error"
            result.notes.append(f"Stopped at {variable}={size}: {point.row['error']}")
            break
        if captured.report is None:
            result.stopped = "error"
            result.notes.append(f"No report at {variable}={size}: {captured.no_report}")
            break
        point = _point(size, captured.report, count(size))
        result.runs_total += point.row["runs"] or 0
        result.points.append(point)
    if rounds and not (cancel is not None and cancel.is_set()):
        _interleave(
            result,
            fn,
            rounds,
            repeat,
            budget_s - (clocks.now() - started),
            gpu,
            reset,
            cancel,
        )
    result.elapsed_s = clocks.now() - started
    _analyse(result)
    if confirm and gpu and result.oom_at is not None and result.fit is not None:
        _confirm(result, fn, reset, torch)
        _free(gpu)
    if reset is not None and result.points:
        reset()
    return result


def _interleave(
    result: SweepResult,
    fn: Callable[[int], Any],
    rounds: int,
    repeat: int,
    budget_s: float,
    gpu: bool,
    reset: Callable[[], Any] | None,
    cancel: threading.Event | None,
) -> None:
    """Time the measured sizes again in interleaved rounds (ascending, then descending, ...),
    so that a drift of the machine's speed (clocks, the host, other work) hits every size alike
    rather than the sizes measured late; each size's time per step becomes the median of its
    runs in the rounds, and its idle time what the span leaves besides the profiled run's busy
    parts. Rounds that would pass the budget are not started."""
    from ..capture.run import timed_run

    ok = [p for p in result.points if p.status == "ok" and p.row["span_s"]]
    if len(ok) < 2:
        return
    per_round = sum(p.row["span_s"] for p in ok) * repeat * 1.5  # with the synchronisations
    rounds = min(rounds, int(budget_s // per_round) if per_round > 0 else rounds)
    if rounds < 1:
        result.notes.append(
            "Each size's time is from its own timed runs: no interleaved rounds fitted in the "
            "time budget, so a drift of the machine's speed between sizes is not cancelled."
        )
        return
    # Each size's runs per round, and the host CPU's speed before each round and after the
    # last (spread.steady_rounds: launch-bound sizes follow the host's speed).
    times: dict[int, list[list[float]]] = {p.size: [] for p in ok}
    hosts = [host_loop_s()]
    done = 0
    try:
        for r in range(rounds):
            for point in ok if r % 2 == 0 else ok[::-1]:
                if cancel is not None and cancel.is_set():
                    raise KeyboardInterrupt
                if reset is not None:
                    reset()
                times[point.size].append([])
                for _ in range(repeat):
                    times[point.size][r].append(timed_run(lambda p=point: fn(p.size), gpu)[0])
                    result.runs_total += 1
            done += 1
            hosts.append(host_loop_s())
    except KeyboardInterrupt:  # Ctrl-C, or cancel: the rounds so far stand
        if result.stopped == "done":
            result.stopped = "cancelled"
    except BaseException as error:  # a size that failed now (memory held elsewhere): say so
        result.notes.append(f"The interleaved rounds stopped: {type(error).__name__}: {error}")
        _free(gpu)
    if not done:
        return
    steady = steady_rounds(hosts, minimum=2)
    used = sorted(steady) if steady is not None else list(range(done))
    for point in ok:
        runs = sorted(t for r in used for t in times[point.size][r])
        row = point.row
        row["span_s"] = statistics.median(runs)
        row["q1_s"], row["q3_s"] = _quartiles(runs)
        parts = sum(
            row.get(f"{k}_s") or 0.0 for k in ("compute", "memory", "communication", "other")
        )
        row["idle_s"] = max(row["span_s"] - parts, 0.0)
        row["items_per_s"] = row["items"] / row["span_s"] if row["span_s"] else None
    result.notes.append(
        f"Time per step: the median of {len(used) * repeat} runs per size timed in {len(used)} "
        "interleaved rounds (ascending, then descending), so that drift hits every size alike; "
        "the split is each size's profiled run, its idle time what the span leaves."
    )
    if steady is not None:
        per_round = round_hosts(hosts)
        result.notes.append(
            f"The host CPU's own speed changed during the rounds (a fixed Python loop took "
            f"{min(per_round) * 1e6:.0f} to {max(per_round) * 1e6:.0f} µs): the times are from "
            f"the {len(used)} of {done} rounds at its best speed, since launch-bound sizes slow "
            "down with the host and GPU-bound ones do not."
        )


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def _next_ratio(points: list[SweepPoint]) -> float:
    """How much longer the next point takes than the last: its step's time ratio, at least 1."""
    ok = [p for p in points if p.status == "ok" and p.row["span_s"]]
    if len(ok) < 2:
        return 2.0
    return max(ok[-1].row["span_s"] / ok[-2].row["span_s"], 1.0)


def _point(size: int, report: Report, items: float) -> SweepPoint:
    s = report.summary
    timing = s.get("timing") or {}
    span = s.get("span_s")
    row = {
        "size": size,
        "status": "ok",
        "span_s": span,
        "q1_s": timing.get("q1_s"),
        "q3_s": timing.get("q3_s"),
        **{
            key: s.get(key)
            for key in (
                "busy_s",
                "compute_s",
                "memory_s",
                "communication_s",
                "other_s",
                "idle_s",
                "peak_memory_bytes",
                "memory_increase_bytes",
            )
        },
        "flops_per_s": s.get("achieved_flops_per_s"),
        "bytes_per_s": s.get("achieved_bytes_per_s"),
        "items": items,
        "items_per_s": items / span if span else None,
        "runs": (s.get("runs") or {}).get("total"),
        "launches": len(report.kernels) if s.get("gpu") else None,
        "error": None,
        # Who sets the span: the GPU's share of the step's critical path, replayed.
        "gpu_path_share": causal.gpu_path_share(report.graph) if s.get("gpu") else None,
    }
    return SweepPoint(size, "ok", row, report)


def _failed_point(size: int, error: BaseException, captured: Any, gpu: bool) -> SweepPoint:
    if is_out_of_memory(error):
        status = "oom"
        text = str(error).split("\n")[0][:300]
    elif isinstance(error, KeyboardInterrupt):
        status, text = "cancelled", "interrupted (Ctrl-C)"
    else:
        status, text = "error", f"{type(error).__name__}: {error}"[:300]
    row: dict[str, Any] = {c: None for c in POINT_COLUMNS}
    report = captured.report
    row.update(size=size, status=status, error=text)
    if report is not None:
        row["runs"] = (report.summary.get("runs") or {}).get("total")
    return SweepPoint(size, status, row, None)


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA out-of-memory error, or the CPU allocator's refusal (a RuntimeError there)."""
    import torch

    text = str(error) if isinstance(error, RuntimeError) else ""
    return isinstance(error, torch.OutOfMemoryError) or (
        "DefaultCPUAllocator" in text
        and ("can't allocate memory" in text or "not enough memory" in text)
    )


def _free(gpu: bool) -> None:
    gc.collect()
    if gpu:
        import torch

        torch.cuda.empty_cache()


# --- reading the points ------------------------------------------------------------------------


def per_doubling(time_ratio: float, size_ratio: float) -> float:
    """A time ratio between two sizes, as the ratio one doubling would give (log-log slope)."""
    return time_ratio ** (math.log(2) / math.log(size_ratio))


def verdict(ratio: float, row: dict, gpu: bool, before: dict | None = None) -> tuple[str, str]:
    """The verdict of one doubling whose time grew ``ratio`` times, with the larger point's
    ``row`` (its split decides compute against memory; ``before``, the smaller point's, gives
    the launches it grew from), and why in words."""
    busy = row.get("busy_s") or 0.0
    span = row.get("span_s") or 0.0
    # Who sets the span at each size, from the critical path of each point's replayed step.
    now_share = row.get("gpu_path_share")
    then_share = (before or {}).get("gpu_path_share")
    known = gpu and isinstance(now_share, float) and isinstance(then_share, float)
    now = float(now_share) if isinstance(now_share, float) else 0.0
    then = float(then_share) if isinstance(then_share, float) else 0.0
    if known and then < 0.5 <= now and ratio < BOUND_RATIO:
        return "transition", (
            f"time x{ratio:.2f} per doubling: the GPU's work overtakes the host's here; at the "
            f"smaller size the host set the span ({1 - then:.0%} of its critical path was host "
            f"work), at this one the GPU does ({now:.0%} of it): the GPU's growing work fills "
            "the host's gaps (predicted by replaying each size's dependencies)"
        )
    if known and now < 0.5 and ratio < BOUND_RATIO:
        return "overhead", (
            f"time x{ratio:.2f} per doubling, the host setting the span at both sizes "
            f"({1 - now:.0%} of this one's critical path is host work: launches, Python, "
            "synchronisations): the GPU waits on the host"
        )
    if ratio >= OVERHEAD_RATIO and gpu and span > 0 and span - busy >= OVERHEAD_IDLE * span:
        # The time grew, but the GPU still waits on the host most of the span: the host's work
        # grew (more launches: a library choosing a split GEMM with a reduction kernel).
        launches = ""
        if before and before.get("launches") and row.get("launches"):
            launches = f" ({before['launches']:,} -> {row['launches']:,} kernel launches)"
        return "overhead", (
            f"time x{ratio:.2f} per doubling, but the GPU is idle {1 - busy / span:.0%} of the "
            f"span: the host's work grew{launches}, not the GPU's"
        )
    host_before = known and then < 0.5
    if (
        ratio < OVERHEAD_RATIO
        and gpu
        and span > 0
        and busy >= FIXED_BUSY * span
        and not host_before
    ):
        compute, memory = row.get("compute_s") or 0.0, row.get("memory_s") or 0.0
        kind = "compute" if compute > memory else "memory"
        return "fixed", (
            f"time x{ratio:.2f} per doubling with the GPU busy {busy / span:.0%} of the span: "
            f"work that does not grow with the size dominates (mostly {kind}-bound: reading the "
            "weights, a fixed-size part of the model), not the host"
        )
    if ratio < OVERHEAD_RATIO:
        return "overhead", (
            f"time x{ratio:.2f} per doubling: the work grew, the time barely did (the GPU waits "
            "on the host: launches, Python)"
            if gpu
            else f"time x{ratio:.2f} per doubling: fixed costs per step dominate"
        )
    if ratio > SUPERLINEAR_RATIO:
        return "superlinear", (
            f"time x{ratio:.2f} per doubling: each item costs more at this size (a cache no longer "
            "holds the working set, or the work grows faster than the size)"
        )
    if ratio < BOUND_RATIO:
        return "transition", (
            f"time x{ratio:.2f} per doubling: part fixed cost, part work that grows with the size"
        )
    compute, memory = row.get("compute_s") or 0.0, row.get("memory_s") or 0.0
    if not gpu or compute + memory <= 0:
        return "saturated", (
            f"time x{ratio:.2f} per doubling: each item costs the same"
            + ("" if gpu else " (on the CPU the split into compute and memory is not measured)")
        )
    kind = "compute" if compute >= memory else "memory"
    share = max(compute, memory) / (row.get("busy_s") or compute + memory)
    return kind, (
        f"time x{ratio:.2f} per doubling: the GPU is saturated, {share:.0%} of its busy time "
        f"in {kind}-bound kernels"
    )


def analyse_points(
    variable: str,
    rows: Sequence[dict],
    *,
    device: str,
    gpu: bool,
    capacity_bytes: float | None = None,
) -> SweepResult:
    """A sweep's findings from its points' rows as they were measured (a recorded sweep's
    ``points`` table), against ``capacity_bytes`` of reachable memory (the GPU's it ran on)."""
    points = [SweepPoint(int(row["size"]), str(row["status"]), dict(row)) for row in rows]
    result = SweepResult(variable, points, device=device, gpu=gpu)
    _analyse(result, capacity_bytes)
    return result


def _analyse(result: SweepResult, capacity_bytes: float | None = None) -> None:
    ok = [p for p in result.points if p.status == "ok" and p.row["span_s"]]
    result.doubling_rows = []
    for a, b in itertools.pairwise(ok):
        time_ratio = b.row["span_s"] / a.row["span_s"]
        ratio = per_doubling(time_ratio, b.size / a.size)
        kind, why = verdict(ratio, b.row, result.gpu, a.row)
        result.doubling_rows.append(
            {
                "from_size": a.size,
                "to_size": b.size,
                "time_ratio": time_ratio,
                "per_doubling": ratio,
                "verdict": kind,
                "why": why,
            }
        )
    rates = [(p.size, p.row["items_per_s"]) for p in ok if p.row["items_per_s"]]
    if rates:
        top = max(rate for _, rate in rates)
        result.best = max(rates, key=lambda r: r[1])[0]
        result.knee = next(size for size, rate in rates if rate >= KNEE_SHARE * top)
        if len(rates) >= 2 and result.knee == rates[-1][0]:
            (before, before_rate), (last, last_rate) = rates[-2], rates[-1]
            if last_rate >= (1 + STILL_GROWS) * before_rate:
                result.knee = None
                result.notes.append(
                    f"Throughput still grew at the largest {result.variable} measured "
                    f"({result.variable}={last}: {last_rate / before_rate - 1:.0%} more items/s "
                    f"than at {before}), so the knee lies beyond the sizes measured and the "
                    f"best measured, {result.variable}={last}, is only the largest tried: "
                    "sweep larger sizes to find where throughput levels off."
                )
    if not result.gpu:
        result.notes.append(
            "On the CPU: times from the host clock, and memory is not measured (no CUDA "
            "allocator), so there is no capacity prediction."
        )
        return
    _fit_memory(result, ok, capacity_bytes)


def _fit_memory(
    result: SweepResult, ok: list[SweepPoint], capacity_bytes: float | None = None
) -> None:
    import numpy as np

    points = [(p.size, p.row["peak_memory_bytes"]) for p in ok if p.row["peak_memory_bytes"]]
    if len({size for size, _ in points}) < 2:
        return
    x = np.array([float(s) for s, _ in points])
    y = np.array([float(m) for _, m in points])
    coef = np.polyfit(x, y, 1)
    kind = "linear"
    miss = float(np.max(np.abs(np.polyval(coef, x) - y) / y))
    if len(points) >= 4 and miss > FIT_TOLERANCE:
        quad = np.polyfit(x, y, 2)
        if quad[0] > 0:
            coef, kind = quad, "quadratic"
            miss = float(np.max(np.abs(np.polyval(coef, x) - y) / y))
    coef = [float(c) for c in coef]
    result.fit = {
        "kind": kind,
        "coefficients": coef,  # highest power first, bytes
        "per_item_bytes": coef[-2],
        "fixed_bytes": coef[-1],
        "max_miss": miss,
        "capacity_bytes": capacity_bytes or reachable_gpu_memory(),
        "predicted_largest": None,
    }
    capacity = result.fit["capacity_bytes"]
    from ..costs.peaks import KNOWN_GPUS

    measured = int(x.max())
    per_item = float(np.polyval(coef, measured) - coef[-1]) / measured
    flat = coef[-1] > 0 and per_item * measured < FLAT_SHARE * coef[-1]
    far: list[int] = []

    def trusted(size: int | None) -> int | None:
        """The fit's size, where it is not a guess (see the module docstring)."""
        if size is None or flat:
            return None
        if size > EXTRAPOLATE_MAX * measured:
            far.append(size)
            return None
        return size

    rows = []
    if capacity:
        largest = trusted(largest_size(coef, capacity))
        result.fit["predicted_largest"] = largest
        rows.append(
            {
                "device": f"{result.device} (this GPU)",
                "capacity_bytes": capacity,
                "largest_size": largest,
                "this_gpu": True,
            }
        )
    seen = set()
    for gpu in sorted(KNOWN_GPUS, key=lambda g: g.memory_bytes or 0):
        if not gpu.memory_bytes or gpu.memory_bytes in seen:
            continue
        seen.add(gpu.memory_bytes)
        rows.append(
            {
                "device": gpu.device,
                "capacity_bytes": gpu.memory_bytes,
                "largest_size": trusted(largest_size(coef, gpu.memory_bytes)),
                "this_gpu": False,
            }
        )
    result.capacities = rows
    var = result.variable
    if flat:
        result.notes.append(
            f"The memory fit is flat: {nbytes(per_item)} per {var} is tiny against the fixed "
            f"{nbytes(coef[-1])} (under {FLAT_SHARE:.0%} of it at {var}={measured}), so the "
            f"sizes measured do not tell how the peak grows: no largest {var} is predicted. "
            f"Measure larger sizes, where the per-{var} part shows."
        )
    elif far:
        result.notes.append(
            f"The memory fit puts the largest {var} that fits at up to {max(far):,}, over "
            f"{EXTRAPOLATE_MAX}x the largest measured ({measured:,}); that far out the fit is a "
            f"guess, so no largest {var} is given beyond {EXTRAPOLATE_MAX * measured:,}. Measure "
            "larger sizes to predict it."
        )


def largest_size(coefficients: Sequence[float], capacity: float) -> int | None:
    """The largest whole size whose fitted peak stays within ``capacity``: None when none fits
    (the fixed part alone exceeds it) or the peak does not grow with the size."""
    *head, fixed = coefficients
    if fixed > capacity:
        return 0
    if len(head) == 1:
        slope = head[0]
        if slope <= 0:
            return None
        return int((capacity - fixed) / slope)
    a, b = head
    c = fixed - capacity
    disc = b * b - 4 * a * c
    if a <= 0 or disc < 0:
        return None
    return int((-b + math.sqrt(disc)) / (2 * a))


def _confirm(
    result: SweepResult, fn: Callable[[int], Any], reset: Callable[[], Any] | None, torch: Any
) -> None:
    """Run the predicted largest size once: does it fit, and what was its peak."""
    largest = (result.fit or {}).get("predicted_largest")
    last_ok = max((p.size for p in result.points if p.status == "ok"), default=None)
    if not largest or last_ok is None or largest <= last_ok or largest >= (result.oom_at or 0):
        return
    if reset is not None:
        reset()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    predicted = sum(c * largest**i for i, c in enumerate(reversed(result.fit["coefficients"])))  # pyright: ignore[reportOptionalSubscript]  # largest came from the fit
    confirmation = {"size": largest, "predicted_peak_bytes": predicted}
    try:
        value = fn(largest)
        torch.cuda.synchronize()
        del value
        confirmation.update(fits=True, peak_bytes=float(torch.cuda.max_memory_allocated()))
    except torch.OutOfMemoryError as error:
        import traceback

        traceback.clear_frames(error.__traceback__)
        confirmation.update(fits=False, peak_bytes=None)
    result.runs_total += 1
    result.confirmation = confirmation
