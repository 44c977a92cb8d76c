"""Per-run figures of a trace that holds several profiler steps.

A training loop profiled with ``torch.profiler``'s schedule marks each iteration with a
``ProfilerStep#N`` range on the host. Such a trace holds several runs of the same code, so its
per-run figures must come from one step, not from the whole trace. How the numbers are made:

- Each GPU event belongs to the step whose host range holds the start of the op that launched it
  (its own start where no op launched it, a CUDA graph replay). A step's host range runs to the
  next step's start; the last step's to its end.
- The steps tile the GPU timeline. Step N's window starts at the later of its host start and the
  end of the GPU work of the steps before it, and ends where the next window starts (the last
  window: at the later of its host end and the end of its GPU work). A GPU that lags the host
  (the host queues work ahead, the usual case) gives each step the time its GPU work took; an
  idle GPU gives a step its host time, as CUDA events around one run would. The windows add up to
  the whole.
- Per step: ``span_s`` is its window; ``busy_s`` and the split (compute, memory, communication,
  other) are the interval union of its own GPU events, with the bounds and categories of the whole
  trace's analysis, and of the host collectives (gloo) inside its window, as ``analysis`` splits a
  span; ``idle_s`` is the rest of the window.
- A step that launched under half the GPU events of the median step is ``"partial"`` (the
  profiler stopped in it: the last ``prof.step()`` opens one). The first complete step is
  ``"first"``, set apart: one-time costs (cuDNN autotuning, allocator growth, lazy
  initialisation) land there. The others are ``"steady"``; the report's per-run figures are those
  of the median steady step (the lower middle one of an even count), analysed on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..schema.report import SPLIT_PARTS, STEP_COLUMNS
from ..trace import intervals
from ..trace.events import Trace
from ..trace.frames import frame

__all__ = ["STEP_PREFIX", "StepWindows", "find_steps", "host_steps", "step_trace"]

STEP_PREFIX = "ProfilerStep#"
# A step with fewer GPU events than this share of the median step's is cut short.
_PARTIAL_SHARE = 0.5


@dataclass
class StepWindows:
    """The profiler steps of a trace and where each one's GPU work lies.

    ``table`` is the report's steps frame (``schema.STEP_COLUMNS``, ``start_s`` from the start
    of the first step's window). The arrays are in trace time (seconds from its first event), one
    entry per step: the host range that assigns ops and GPU events to it, and its GPU window.
    ``median`` is the row of the median steady step.
    """

    table: pd.DataFrame
    host_start: np.ndarray
    host_end: np.ndarray
    window_start: np.ndarray
    window_end: np.ndarray
    median: int

    @property
    def count(self) -> int:
        return len(self.table)

    def summary(self, whole: Mapping[str, Any]) -> dict:
        """The report's ``summary["steps"]``: how many, the median steady step and the spread
        of the steady steps, the steps set apart, and the whole trace's span and split."""
        table = self.table
        steady = table[table["kind"] == "steady"]
        fastest, slowest = steady["span_s"].idxmin(), steady["span_s"].idxmax()
        return {
            "count": len(table),
            "steady": len(steady),
            "median_step": str(table.at[self.median, "step"]),
            "median_s": float(table.at[self.median, "span_s"]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "fastest_step": str(table.at[fastest, "step"]),
            "fastest_s": float(table.at[fastest, "span_s"]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "slowest_step": str(table.at[slowest, "step"]),
            "slowest_s": float(table.at[slowest, "span_s"]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "set_apart": [
                {"step": str(row.step), "kind": str(row.kind), "span_s": float(row.span_s)}
                for row in table[table["kind"] != "steady"].itertuples()
            ],
            "total": {
                "span_s": float(self.window_end[-1] - self.window_start[0]),
                **{f"{part}_s": float(table[f"{part}_s"].sum()) for part in SPLIT_PARTS},
                "busy_s": float(table["busy_s"].sum()),
            },
        }

    def note(self) -> str:
        """What the report's figures cover, in words."""
        table = self.table
        steady = table[table["kind"] == "steady"]
        median = table.loc[self.median]
        text = (
            f"The trace holds {len(table)} profiler steps. Figures are per step: those of the "
            f"median steady step, {median['step']} ({_ms(median['span_s'])})"
        )
        if len(steady) > 1:
            text += (
                f"; the {len(steady)} steady steps took {_ms(steady['span_s'].min())} to "
                f"{_ms(steady['span_s'].max())}"
            )
        apart = table[table["kind"] != "steady"]
        if len(apart):
            text += ". Set apart: " + ", ".join(
                f"{row.step} ({_KIND_WORDS[row.kind]}, {_ms(row.span_s)})"
                for row in apart.itertuples()
            )
        total = self.window_end[-1] - self.window_start[0]
        return (
            f"{text}. The whole trace spans {_ms(total)}. The kernel table and the timeline show "
            f"{median['step']}; report.steps has every step's span and split."
        )


_KIND_WORDS = {
    "first": "the first step: one-time costs land there",
    "partial": "cut short: under half the GPU work of the median step",
}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def host_steps(trace: Trace) -> pd.DataFrame:
    """The ``ProfilerStep#N`` ranges on the host, in time order (one per name: a trace with
    several threads can repeat them)."""
    annotations = trace.annotations
    names = annotations["name"].to_numpy(dtype=object)
    is_step = np.array(
        [isinstance(name, str) and name.startswith(STEP_PREFIX) for name in names], dtype=bool
    )
    if not is_step.any():
        return annotations.iloc[:0]
    steps = annotations[is_step & (annotations["where"].to_numpy() == "host")]
    return steps.sort_values("start_s", kind="stable").drop_duplicates("name")


def find_steps(
    trace: Trace, kernels: pd.DataFrame, minimum: int = 2, *, host: pd.DataFrame | None = None
) -> StepWindows | None:
    """The steps of ``trace``, or None when it holds fewer than ``minimum`` or no GPU work.

    ``kernels`` is the whole trace's kernel table from the analysis: its ``bound``, and the
    internal ``launch_s`` (the trace time of the launching op's start); its ``start_s`` counts
    from the trace's first GPU event. ``host`` is ``host_steps(trace)`` where the caller has
    found it already (a load needs the steps for the run count first); found here otherwise.
    """
    steps = host_steps(trace) if host is None else host
    if len(steps) < minimum or not len(kernels) or "launch_s" not in kernels:
        return None
    origin = float(trace.gpu_columns()["start_s"].min())
    host_start = steps["start_s"].to_numpy(dtype=float)
    host_end = np.append(host_start[1:], steps["end_s"].to_numpy(dtype=float)[-1])
    host_end = np.maximum(host_end, host_start)
    launch = launch_times(trace)[kernels["event"].to_numpy()] if "event" in kernels else None
    if launch is None:  # a kernel table without its events' rows: the op's start alone
        launch = kernels["launch_s"].to_numpy(dtype=float)
    step = _step_of(launch, host_start, host_end)
    start = kernels["start_s"].to_numpy(dtype=float) + origin
    end = start + kernels["dur_s"].to_numpy(dtype=float)
    n = len(steps)
    events = np.bincount(step[step >= 0], minlength=n)
    gpu_end = np.full(n, -np.inf)
    np.maximum.at(gpu_end, step[step >= 0], end[step >= 0])
    # Each window starts when both the host has started the step and the GPU has finished the
    # work of the steps before it.
    done_before = np.maximum.accumulate(np.append(-np.inf, gpu_end[:-1]))
    window_start = np.maximum(host_start, done_before)
    window_end = np.append(window_start[1:], max(host_end[-1], gpu_end.max()))
    window_end = np.maximum(window_end, window_start)

    bound = kernels["bound"].to_numpy(dtype=object)
    category = (
        kernels["category"].to_numpy(dtype=object)
        if "category" in kernels
        else np.full(len(bound), "", dtype=object)
    )
    collective_start, collective_end = _host_collectives(trace)
    split = []
    for i in range(n):
        mine = step == i
        lo, hi = window_start[i], window_end[i]
        host_start_i = np.clip(collective_start, lo, hi)
        host_end_i = np.clip(collective_end, lo, hi)
        inside = host_end_i > host_start_i
        split.append(
            _step_split(
                start[mine],
                end[mine],
                bound[mine],
                category[mine],
                host_start_i[inside],
                host_end_i[inside],
            )
        )
    span = window_end - window_start
    table = {
        "step": steps["name"].to_numpy(dtype=object),
        "kind": _kinds(events),
        "start_s": window_start - window_start[0],
        "span_s": span,
        "busy_s": np.array([s["busy_s"] for s in split]),
        **{
            f"{part}_s": np.array([s[f"{part}_s"] for s in split])
            for part in SPLIT_PARTS
            if part != "idle"
        },
        "idle_s": np.maximum(
            span - np.array([s["busy_s"] + s["host_communication_s"] for s in split]), 0.0
        ),
        "kernels": events,
        "host_s": host_end - host_start,
    }
    steps_frame = frame({name: table[name] for name in STEP_COLUMNS})
    return StepWindows(
        table=steps_frame,
        host_start=host_start,
        host_end=host_end,
        window_start=window_start,
        window_end=window_end,
        median=_median_steady(steps_frame),
    )


def launch_times(trace: Trace) -> np.ndarray:
    """When each GPU event (in ``trace.gpu_columns()``'s order) was launched, in trace time:
    its launching op's start; where no op launched it, its runtime call's (by correlation id);
    NaN, part of no step, where the trace records runtime calls and none launched it: work
    launched before the recording began. A GPU-bound loop runs the kernels of the profiler's
    warm-up steps (recorded, but their launches discarded) in its first active steps, and by
    their own start they would land in whichever step's host range they ran in (on an H200,
    ResNet-50 at batch 256: a whole step's kernels more in the second active step). Where the
    trace has no runtime calls, an event's own start. Found once per trace (a load's step
    windows and its median step both ask): the array is read-only."""
    tables = (trace.ops, trace.kernels, trace.copies, trace.runtime)
    return trace.derived("launch_times", tables, lambda: _launch_times(trace))


def _launch_times(trace: Trace) -> np.ndarray:
    launch = _launch_times_of(trace)
    launch.setflags(write=False)
    return launch


def _launch_times_of(trace: Trace) -> np.ndarray:
    gpu = trace.gpu_columns()
    op_start = np.append(trace.ops["start_s"].to_numpy(dtype=float), np.nan)
    launch = op_start[gpu["op"]]  # op -1: the appended NaN
    runtime = trace.runtime
    no_op = gpu["op"] < 0
    if not no_op.any():
        return launch
    if not len(runtime):
        launch[no_op] = gpu["start_s"][no_op]
        return launch
    correlation = np.concatenate(
        [trace.kernels["correlation"].to_numpy(float), trace.copies["correlation"].to_numpy(float)]
    )
    ids = runtime["correlation"].to_numpy(dtype=float)
    valid = np.flatnonzero(~np.isnan(ids))
    order = valid[np.argsort(ids[valid], kind="stable")]
    at = np.clip(np.searchsorted(ids[order], correlation[no_op]), 0, max(len(order) - 1, 0))
    found = (ids[order][at] == correlation[no_op]) if len(order) else np.zeros(len(at), dtype=bool)
    call_start = runtime["start_s"].to_numpy(dtype=float)
    launch[no_op] = np.where(found, call_start[order[at]] if len(order) else np.nan, np.nan)
    return launch


def _step_of(times: np.ndarray, host_start: np.ndarray, host_end: np.ndarray) -> np.ndarray:
    """The step whose host range [start, end) holds each time (the last range closed), else -1."""
    step = np.searchsorted(host_start, times, side="right") - 1
    inside = step >= 0
    ends = host_end[np.maximum(step, 0)]
    last = step == len(host_start) - 1
    inside &= np.where(last, times <= ends, times < ends)
    return np.where(inside, step, -1)


def _step_split(
    start: np.ndarray,
    end: np.ndarray,
    bound: np.ndarray,
    category: np.ndarray,
    host_start: np.ndarray,
    host_end: np.ndarray,
) -> dict[str, float]:
    """Busy time and its split, overlap counted once: ``analysis``'s split of a span."""
    from .analyze import split_by_bound

    if not len(start):
        return {
            "busy_s": 0.0,
            **{f"{part}_s": 0.0 for part in SPLIT_PARTS if part != "idle"},
            "host_communication_s": intervals.union_length(host_start, host_end),
        }
    events = {"start_s": start, "dur_s": end - start, "bound": bound, "category": category}
    return split_by_bound(events, True, {}, host_start, host_end)


def _host_collectives(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """The collectives that ran on the host (gloo's annotations), in trace time."""
    from .analyze import HOST_COLLECTIVE_PREFIXES

    annotations = trace.annotations
    names = annotations["name"].to_numpy(dtype=object)
    host = (annotations["where"].to_numpy(dtype=object) == "host") & np.array(
        [isinstance(n, str) and n.startswith(HOST_COLLECTIVE_PREFIXES) for n in names], bool
    )
    return (
        annotations["start_s"].to_numpy(dtype=float)[host],
        annotations["end_s"].to_numpy(dtype=float)[host],
    )


def _kinds(events: np.ndarray) -> np.ndarray:
    kinds = np.empty(len(events), dtype=object)
    kinds.fill("steady")
    partial = events < _PARTIAL_SHARE * np.median(events)
    kinds[partial] = "partial"
    complete = np.flatnonzero(~partial)
    if len(complete) > 1:  # a lone complete step is the run itself
        kinds[complete[0]] = "first"
    return kinds


def _median_steady(table: pd.DataFrame) -> int:
    """The row of the median steady step: the lower middle one of an even count."""
    steady = table.index[table["kind"].to_numpy() == "steady"]
    if not len(steady):  # every step cut short: the least cut
        return int(table["kernels"].idxmax())  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    spans = table.loc[steady, "span_s"].to_numpy()
    order = np.argsort(spans, kind="stable")
    return int(steady[order[(len(order) - 1) // 2]])


def step_trace(trace: Trace, steps: StepWindows, row: int) -> Trace:
    """The part of ``trace`` that one step holds: the ops and runtime calls that started in its
    host range, the GPU events they launched, annotations and memory samples inside it, with the
    links between tables renumbered."""
    lo, hi = steps.host_start[row], steps.host_end[row]
    last = row == steps.count - 1
    ops = trace.ops

    def in_range(times: np.ndarray) -> np.ndarray:
        times = np.asarray(times, dtype=float)
        return (times >= lo) & ((times <= hi) if last else (times < hi))

    keep_op = in_range(ops["start_s"].to_numpy())
    new_row = np.full(len(ops) + 1, -1, dtype=np.int64)  # index -1 (no op) stays -1
    new_row[np.flatnonzero(keep_op)] = np.arange(np.count_nonzero(keep_op))
    kept_ops = ops[keep_op].reset_index(drop=True)
    for link in ("parent", "top"):
        kept_ops[link] = new_row[ops[link].to_numpy()[keep_op]]
    # An op whose outermost op lies outside the step is its own outermost op.
    no_top = kept_ops["top"].to_numpy() < 0
    kept_ops.loc[no_top, "top"] = np.flatnonzero(no_top)

    launched = launch_times(trace)  # kernels first, then copies

    def gpu_part(table: pd.DataFrame, launch: np.ndarray) -> pd.DataFrame:
        part = table[in_range(launch)].reset_index(drop=True)
        part["op"] = new_row[part["op"].to_numpy()]
        return part

    window = (steps.window_start[row], steps.window_end[row])
    annotations = trace.annotations
    host_side = annotations["where"].to_numpy() == "host"
    starts = annotations["start_s"].to_numpy(dtype=float)
    keep_annotation = np.where(
        host_side, in_range(starts), (starts >= window[0]) & (starts < window[1])
    )
    memory = trace.memory
    memory_times = memory["start_s"].to_numpy(dtype=float)
    return Trace(
        ops=kept_ops,
        kernels=gpu_part(trace.kernels, launched[: len(trace.kernels)]),
        copies=gpu_part(trace.copies, launched[len(trace.kernels) :]),
        runtime=trace.runtime[in_range(trace.runtime["start_s"].to_numpy())].reset_index(drop=True),
        annotations=annotations[keep_annotation].reset_index(drop=True),
        memory=memory[(memory_times >= lo) & (memory_times < window[1])].reset_index(drop=True),
        devices=trace.devices,
        metadata=trace.metadata,
        origin_us=trace.origin_us,
        path=trace.path,
    )
