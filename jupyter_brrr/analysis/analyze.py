"""Where the time went: per-op and per-kernel roofline figures, the span split, recommendations.

Input: the event tables of a trace (``events.Trace``), the device peaks, and optionally the true
span of one run measured with CUDA events. Output: the frames and summary of a ``Report``.

How a number is made:
- Costs (FLOPs, bytes) come from ``costs`` per op call. An op that has a model but also has a
  modelled op below it (``aten::linear`` over ``aten::addmm``) is not counted, so no FLOP is
  counted twice: the innermost modelled op "owns" the cost.
- Each GPU event (kernel, copy, set) is attributed to the nearest op that owns a cost, walking up
  from the op that launched it; events with no such op keep their launching op and count as
  "other" work.
- Each op call is held against the roof of the units that ran it (``roofs``): its dtype's peak,
  except float32 matmuls and convolutions, whose roof (TF32 tensor cores or plain FP32) follows
  their kernel names, else the math-mode settings the capture recorded, else PyTorch's defaults
  (said to be assumed). An op above 105% of its roof is flagged with the likely reason.
- An op call's bound: "overhead" when its ideal roofline time is under ``LAUNCH_FLOOR_S`` (a
  launch costs more than the work), else "compute" when its intensity reaches the ridge point
  of its roof, else "memory".
- The span splits into compute, memory and other GPU time by interval union with priority
  compute > memory > other, and idle time = span - busy: overlapping kernels count once.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..costs import model as costs
from ..costs import roofs
from ..costs.peaks import NODE_GPUS, Peaks, interconnect
from ..schema.report import OPS_COLUMNS, SPLIT_PARTS, Runs, Summary
from ..trace import intervals
from ..trace.events import Trace
from ..trace.frames import factorize_objects, frame, group_codes, group_sums
from . import advice, comms, limits, modules

# Below this ideal time a kernel cannot fill the GPU: a launch costs a few microseconds.
LAUNCH_FLOOR_S = 2e-6
# Gaps and kernels shorter than this are the signature of launch overhead.
SHORT_S = 10e-6


def steady_state_options(source: str) -> str:
    """How to ask for warm, timed runs, in the words of the entry point that made a report
    (``Report.source``): the notes and the views name them."""
    return "--warmup 1 --repeat 5" if source == "magic" else "warmup=1, repeat=5"


_COMMUNICATION = (
    "nccl",
    "rccl",
    "allreduce",
    "all_reduce",
    "allgather",
    "reducescatter",
    "sendrecv",
)
_HOST_COPY_MARKERS = ("HtoD", "DtoH", "Host", "Pageable", "Pinned", "HtoH")
# One search of the alternatives per name, as pandas' str.contains does.
_COMMUNICATION_PATTERN = re.compile("|".join(_COMMUNICATION))
_HOST_COPY_PATTERN = re.compile("|".join(_HOST_COPY_MARKERS))

# A table as a frame, or as a dict of its columns' arrays.
_Columns = pd.DataFrame | dict[str, np.ndarray]


@dataclass(frozen=True)
class Measured:
    """What a captured run measured outside its trace (``capture/run.py``); a loaded trace has
    none. The analysis puts it into the summary."""

    warm: bool  # warm-up runs came first: first-run costs are excluded
    wall_s: float | None  # the profiled run's wall time on the host clock
    profiled_span_s: float | None  # the profiled run's span
    run_spans_s: list[float]  # each timed run's span
    torch_version: str | None
    timing: dict | None  # how the span was timed (capture._timing)
    memory_before_bytes: float | None
    memory_increase_bytes: float | None
    memory_after_bytes: float | None
    # The peak memory comes from the CUDA allocator's counters (None when they were not read),
    # never from the trace's memory events.
    cuda_memory: bool = False
    # Timed runs without GPU work: their median span on the host clock, which replaces the
    # profiled run's span and caps its CPU op time.
    host_span_s: float | None = None


@dataclass
class Analysis:
    """Everything ``Report`` holds, before it is wrapped."""

    summary: Summary
    ops: pd.DataFrame
    kernels: pd.DataFrame
    cpu_ops: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    recommendations: list[dict] = field(default_factory=list)
    steps: pd.DataFrame | None = None
    modules: pd.DataFrame | None = None
    # What analyze(..., advise=False) left for later: the op reasons and the advice.
    pending: Callable[[], None] | None = field(default=None, repr=False)
    # The step's dependency graph (step_graph.StepGraph), for the replay; built by the caller
    # that knows what the step is (trace_analysis, capture).
    graph: Any = field(default=None, repr=False)
    # Made by analyze(..., kernels_only=True): only the kernel table and the summary's device
    # are filled; the rest is empty.
    kernels_only: bool = False

    def complete(self) -> Analysis:
        """Fill the op table's reasons and the recommendations where they were left for later
        (``analyze(..., advise=False)``); nothing otherwise."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending()
        return self


def analyze(
    trace: Trace,
    peaks: Peaks | None,
    *,
    span_s: float | None = None,
    span_source: str = "trace",
    runs: Runs | None = None,
    peak_memory_bytes: float | None = None,
    memory_capacity_bytes: float | None = None,
    device: str | None = None,
    notes: list[str] | None = None,
    math_mode: dict | None = None,
    advise: bool = True,
    measured: Measured | None = None,
    steps: dict | None = None,
    kernels_only: bool = False,
) -> Analysis:
    """Analyse a trace. ``span_s`` (one run's span by CUDA events) replaces the trace's own span;
    ``math_mode`` (``capture.math_mode()``, None for a loaded trace) is what decided the units.
    ``advise=False`` leaves the op reasons and the recommendations to ``Analysis.complete()``
    (a first look at a trace whose median step is analysed next needs neither).

    The summary is built whole here (``schema.Summary``): ``runs`` (how often the code ran),
    ``measured`` (what a capture measured outside the trace; None for a loaded trace) and
    ``steps`` (a loaded trace's profiler steps, ``steps.StepWindows.summary``) go into it.

    ``kernels_only`` stops once the kernel table is made (each GPU event's bound and category):
    what a trace's step windows need before its median step is analysed on its own."""
    notes = list(notes or [])
    # The trace's columns are taken once, as arrays, and each output frame is built once: the
    # analysis is many small steps, where pandas' cost per operation would be most of the time.
    gpu = trace.gpu_columns()
    gpu |= _kernel_name_tests(gpu["name"])
    ops, owner = _op_costs(trace, gpu)
    n_ops = len(ops["name"])
    gpu_work = len(gpu["op"]) > 0
    comm = _communication(
        trace, gpu, ops, peaks, device or device_name(trace), events_only=kernels_only
    )
    owned = owner >= 0
    ops["gpu_s"] = np.bincount(owner[owned], weights=gpu["dur_s"][owned], minlength=n_ops)
    ops |= roofs.call_roofs(ops, gpu["name"], owner, math_mode, peaks)
    ops["bound"] = _call_bounds(ops, peaks)

    if gpu_work:
        origin = float(gpu["start_s"].min())
        trace_span = float(gpu["end_s"].max()) - origin
    else:
        origin = float(ops["start_s"].min()) if n_ops else 0.0
        trace_span = float(ops["end_s"].max()) - origin if n_ops else 0.0
    kernels = _kernel_table(gpu, owner, ops, origin, comm.events)
    if kernels_only:
        empty = pd.DataFrame()
        summary_of_device = {"device": device or device_name(trace)}
        return Analysis(
            summary=summary_of_device,  # pyright: ignore[reportArgumentType]  # the device alone, as the field says
            ops=empty,
            kernels=frame(kernels),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            cpu_ops=empty,
            kernels_only=True,
        )

    # Host collectives count within the span of the GPU work.
    host_start = np.clip(comm.host_start - origin, 0.0, trace_span)
    host_end = np.clip(comm.host_end - origin, 0.0, trace_span)
    split = split_by_bound(kernels, gpu_work, ops, host_start, host_end)
    span = span_s if span_s is not None else trace_span
    active = split["busy_s"] + split["host_communication_s"]
    if gpu_work and span < active:
        # CUDA events bracket the launches, so they cannot see less than the kernels ran;
        # a smaller figure means the two clocks disagree by rounding: trust the busy time.
        span = active
    coverage = _coverage(trace, gpu, owner, ops, comm)
    math_mode_figures, roof_notes = roofs.math_mode_summary(ops, math_mode, peaks)
    if peak_memory_bytes is not None or (measured is not None and measured.cuda_memory):
        memory_peak = peak_memory_bytes  # the allocator's counters: None when not read
    else:
        memory_peak = _trace_peak_memory(trace)
    summary = _summary(
        trace,
        ops,
        kernels,
        split,
        comm,
        coverage,
        span=span,
        trace_span=trace_span,
        span_source=span_source if span_s is not None else "trace",
        device=device or device_name(trace),
        gpu_work=gpu_work,
        peaks=peaks,
        runs=runs,
        steps=steps,
        measured=measured,
        memory_peak=memory_peak,
        memory_capacity_bytes=memory_capacity_bytes,
        math_mode_figures=math_mode_figures,
    )

    op_table, call_row, op_columns = _op_table(ops, owner, peaks)
    notes += _traffic_notes(op_table)
    notes += roof_notes
    notes += _analysis_notes(op_table, summary, trace, gpu, peaks, n_ops)
    result = Analysis(
        summary=summary,
        ops=op_table,
        kernels=frame(kernels),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        cpu_ops=_cpu_lane(trace.ops, ops, origin),
        notes=notes,
        modules=modules.module_tree(ops, owner),
    )

    def advise_now() -> None:
        row_facts = _limits(trace, gpu, owner, ops, op_table, op_columns, call_row, peaks)
        result.recommendations = advice.recommend(
            advice.Evidence(
                summary=summary,
                ops=op_columns,
                facts=row_facts,
                peaks=peaks,
                gpu={**gpu, "row": _row_of(owner, call_row), "bytes": _event_bytes(trace)},
                calls={
                    **ops,
                    "pid": trace.ops["pid"].to_numpy(),
                    "tid": trace.ops["tid"].to_numpy(),
                    "row": call_row,
                },
                runtime=trace.runtime,
                span_given=span_s is not None,
            )
        )

    result.pending = advise_now
    if advise:
        result.complete()
    if measured is not None and measured.host_span_s is not None:
        # After the advice, which reads the profiled run's own figures.
        _use_host_span(summary, measured.host_span_s, span_source)
    return result


def _summary(
    trace: Trace,
    ops: dict[str, np.ndarray],
    kernels: dict[str, np.ndarray],
    split: dict,
    comm: _Communication,
    coverage: dict,
    *,
    span: float,
    trace_span: float,
    span_source: str,
    device: str,
    gpu_work: bool,
    peaks: Peaks | None,
    runs: Runs | None,
    steps: dict | None,
    measured: Measured | None,
    memory_peak: float | None,
    memory_capacity_bytes: float | None,
    math_mode_figures: dict,
) -> Summary:
    """The summary of :func:`analyze`, whole (``schema.Summary``)."""
    busy = split["busy_s"]
    flops = float(np.nansum(ops["flops"]))  # nansum: skips NaN (the ops without a model)
    nbytes = float(np.nansum(ops["bytes"]))
    # No rate where no op has a model: 0 FLOP/s would read as a measurement.
    modelled = bool(ops["counted"].any())
    return {
        "span_s": span,
        "busy_s": busy,
        "compute_s": split["compute_s"],
        "memory_s": split["memory_s"],
        "communication_s": split["communication_s"],
        "other_s": split["other_s"],
        # A collective running on the host while the GPU waits is communication, not idle.
        "idle_s": max(span - busy - split["host_communication_s"], 0.0),
        "overhead_kernels_s": split["overhead_kernels_s"],
        "idle_gap_count": split.get("idle_gap_count"),  # GPU work only
        "communication_hidden_s": split["communication_hidden_s"],
        "host_communication_s": split["host_communication_s"],
        "trace_span_s": trace_span,
        "span_source": span_source,
        "device": device,
        "gpu": gpu_work,
        "peaks": peaks.to_dict() if peaks is not None else None,
        "runs": runs or {"warmup": 0, "timed": 0, "profiled": 1, "total": 1},
        "steps": steps,
        "warm": measured.warm if measured is not None else None,
        "peak_memory_bytes": memory_peak,
        "memory_capacity_bytes": memory_capacity_bytes
        if memory_capacity_bytes is not None
        else _trace_capacity(trace),
        "memory_before_bytes": measured.memory_before_bytes if measured is not None else None,
        "memory_increase_bytes": measured.memory_increase_bytes if measured is not None else None,
        "memory_after_bytes": measured.memory_after_bytes if measured is not None else None,
        "flops": flops,
        "bytes": nbytes,
        "achieved_flops_per_s": flops / busy if busy > 0 and modelled else None,
        "achieved_bytes_per_s": nbytes / busy if busy > 0 and modelled else None,
        "kernel_count": len(trace.kernels),
        "copy_count": len(trace.copies),
        "short_kernel_count": int(np.count_nonzero(trace.kernels["dur_s"].to_numpy() < SHORT_S)),
        "launch_count": _launch_count(trace),
        # False for a trace recorded without record_shapes=True: no op can have a cost then.
        "shapes_recorded": _shapes_recorded(ops),
        "unmodelled_s": float(np.nansum(kernels["dur_s"][kernels["category"] == "unmodelled"])),
        "modelled_share": coverage["modelled_share"],
        "estimated_share": coverage["estimated_share"],
        "unmodelled_ops": coverage["unmodelled_ops"],
        "communication": comm.summary,
        "math_mode": math_mode_figures,
        "wall_s": measured.wall_s if measured is not None else None,
        "profiled_span_s": measured.profiled_span_s if measured is not None else None,
        "run_spans_s": list(measured.run_spans_s) if measured is not None else None,
        "torch_version": measured.torch_version if measured is not None else None,
        "timing": measured.timing if measured is not None else None,
    }


def _analysis_notes(
    op_table: pd.DataFrame,
    summary: Summary,
    trace: Trace,
    gpu: dict[str, np.ndarray],
    peaks: Peaks | None,
    n_ops: int,
) -> list[str]:
    """The notes of :func:`analyze` on what its figures cannot say: roofs passed, no shapes,
    several GPUs, coverage, no peaks, no GPU work."""
    notes: list[str] = []
    gpu_work = summary["gpu"]
    roof_flags = _roof_flag_note(op_table)
    if roof_flags is not None:
        notes.append(roof_flags)
    if gpu_work and not summary["shapes_recorded"]:
        notes.append(
            "The trace holds no input shapes (it was recorded without "
            "torch.profiler.profile(record_shapes=True)), so no op has FLOPs or bytes: the split "
            "cannot tell compute-bound from memory-bound kernels and counts them all as other. "
            "Record it again with record_shapes=True."
        )
    devices = np.unique(gpu["device"]) if gpu_work else []
    if len(devices) > 1:
        notes.append(
            f"Kernels ran on {len(devices)} GPUs (device ids "
            f"{', '.join(str(d) for d in devices)}): the span and its split count the time when "
            f"any of them was busy, and the peaks are those of {summary['device']}."
        )
    notes += _coverage_notes(summary, trace)
    if gpu_work and peaks is None:
        notes.append(
            f"No peak figures are known for '{summary['device']}', so kernels are not classified as "
            "compute- or memory-bound. Pass peaks (jupyter_brrr.load(..., device='H100')) or run "
            "jupyter_brrr.measure_peaks() on that GPU."
        )
    if not gpu_work:
        notes.append(
            "No GPU work was recorded: the times shown are CPU op times."
            if n_ops
            else "No PyTorch ops were recorded: the code ran no torch operations."
        )
    return notes


def _roof_flag_note(op_table: pd.DataFrame) -> str | None:
    """The note on the ops that read above their roof, or None where none does."""
    flagged = op_table[op_table["roof_flag"].to_numpy() != ""]
    if not len(flagged):
        return None
    many = len(flagged) > 1
    # The largest three, grouped by reason (the flag after its "N% of its X roof: ").
    by_reason: dict[str, list[str]] = {}
    for row in flagged.nlargest(3, "gpu_time_s").itertuples():
        share, _, reason = str(row.roof_flag).partition(": ")
        by_reason.setdefault(reason.rstrip("."), []).append(f"{row.name} {row.shapes} ({share})")
    largest = "; ".join(f"{', '.join(ops)}: {reason}" for reason, ops in by_reason.items())
    return (
        f"{len(flagged)} op{'s' if many else ''} read above "
        f"{roofs.ROOF_TOLERANCE:.0%} of {'their' if many else 'its'} roof, which no kernel "
        "can reach: a model or peak mismatch, not an achievement, so advice does not quote "
        f"{'their' if many else 'its'} share of peak (the op table's roof_flag says why"
        f"{' for each' if many else ''}). {'Largest' if many else 'It'}: {largest}."
    )


def _use_host_span(summary: Summary, host_span: float, span_source: str) -> None:
    """Timed runs without GPU work: their unprofiled median is the span, and the profiled run's
    CPU op time (slower, under the profiler) is capped by it."""
    summary["span_s"] = host_span
    summary["span_source"] = span_source
    summary["busy_s"] = summary["other_s"] = min(summary["busy_s"], host_span)
    summary["idle_s"] = host_span - summary["busy_s"]


# Runtime calls that launch GPU work (CUDA and HIP names contain these).
_LAUNCH_CALLS = ("LaunchKernel", "GraphLaunch", "LaunchCooperativeKernel")
_LAUNCH_PATTERN = re.compile("|".join(_LAUNCH_CALLS))


def _launch_count(trace: Trace) -> int:
    """Kernel and CUDA-graph launches: the host runtime calls that start GPU work."""
    names = trace.runtime["name"].to_numpy(dtype=object)
    # The pattern is tested once per distinct name, and the rows of each launching name (a
    # few: cudaLaunchKernel, cudaGraphLaunch...) counted by one comparison: cheaper than
    # numbering the rows by name, the runtime calls being most of a trace's events.
    launching = [
        name for name in set(names) if isinstance(name, str) and _LAUNCH_PATTERN.search(name)
    ]
    return sum(int(np.count_nonzero(names == name)) for name in launching)


def _name_tests(names: np.ndarray, *tests: Callable[[str], bool]) -> list[np.ndarray]:
    """Each test's verdict on each row's name (False where the name is missing or not text).

    Each test runs once per distinct name: a trace repeats a few hundred names."""
    codes, distinct = factorize_objects(names)
    verdicts = []
    for test in tests:
        passed = [isinstance(name, str) and test(name) for name in distinct]
        # Code -1, a missing name, picks the False at the end.
        verdicts.append(np.array([*passed, False], dtype=bool)[codes])
    return verdicts


# --- costs and ownership -------------------------------------------------------------------------

# The op-call columns the analysis reads.
_OP_TEXT = ("name", "shapes", "dtypes", "module", "line")
_OP_NUMBERS = ("parent", "start_s", "end_s", "dur_s", "self_cpu_s")


def _op_costs(trace: Trace, gpu: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The op calls' columns as arrays (text as object arrays, the name also as ``name_code``),
    with the cost columns, and for each GPU event the op that owns its cost.

    ``flops`` and ``bytes`` are kept only on the calls that own a cost (``counted``); see
    :func:`_ownership`. Ops that ran GPU work (themselves or below) and have no formula are
    costed from their output shapes on the meta device (those that launched it themselves); ops
    whose shapes the trace leaves out
    get what their kernels' launches tell (``costs.launch_hint``).
    """
    trace_ops = trace.ops
    ops = {column: trace_ops[column].to_numpy(dtype=object) for column in _OP_TEXT}
    ops |= {column: trace_ops[column].to_numpy() for column in _OP_NUMBERS}
    # The names' codes serve twice: cost lookups per name and the op table's groups.
    ops["name_code"], distinct = factorize_objects(ops["name"])
    ops["name_distinct"] = distinct
    ops["total_gpu_s"] = _total_gpu_time(gpu, ops)
    # The meta-device fallback only for the ops that launched GPU work themselves: a composite
    # above them (aten::gru over aten::_cudnn_rnn) would run its whole decomposition there.
    launched = np.zeros(len(ops["parent"]), dtype=bool)
    launched[gpu["op"][gpu["op"] >= 0]] = True
    ops |= costs.cost_columns(
        trace_ops,
        (ops["name_code"], distinct),
        fallback=launched,
        launches=_launch_hints(trace, gpu, ops, distinct),
    )
    owner, counted = _ownership(gpu["op"], ops)
    ops["counted"] = counted
    for column in ("flops", "bytes"):
        ops[column] = np.where(counted, ops[column], np.nan)
    ops["cost_model"] = np.where(counted, ops["source"], "").astype(object)
    return ops, owner


def _shapes_recorded(ops: dict[str, np.ndarray]) -> bool:
    """Whether the trace's aten ops carry input shapes: a trace recorded without
    ``record_shapes=True`` has none, and then no op can have a cost."""
    if np.any(ops["shapes"] != ""):
        return True
    # No shapes at all: a trace without record_shapes, unless it has no aten op to carry any
    # (a compiled region's Triton kernels only).
    (aten,) = _name_tests(ops["name"], lambda name: name.startswith("aten::"))
    return not aten.any()


def _launch_hints(
    trace: Trace, gpu: dict[str, np.ndarray], ops: dict[str, np.ndarray], distinct: np.ndarray
) -> np.ndarray:
    """Per op call, what its own kernels tell about its work (``costs.launch_hint``), for the
    ops that may need it: those whose models read launches (optimizers, advanced indexing) and
    those with a list argument (the list's dtype is not recorded). None elsewhere."""
    n = len(ops["parent"])
    hints = np.full(n, None, dtype=object)
    launcher = gpu["op"][: len(trace.kernels)]  # kernels come first in gpu_columns
    if not len(launcher) or not n:
        return hints
    # Argument lists are keyed by identity: the reader decodes each distinct one once.
    types = trace.ops["types"].to_numpy(dtype=object)
    if not pd.notna(types).any():
        return hints  # a trace without shapes: nothing to cost
    type_codes, first_of_type = np.unique(
        np.fromiter(map(id, types), np.int64, len(types)), return_inverse=True, return_index=True
    )[1:][::-1]
    with_list = np.array(
        [isinstance(t, (list, tuple)) and "TensorList" in t for t in types[first_of_type]],
        dtype=bool,
    )
    by_launch = np.array([costs.has_launch_model(name) for name in distinct] + [False], bool)
    wanted = with_list[type_codes] | by_launch[ops["name_code"]]
    launched = launcher >= 0
    wanted_kernels = np.flatnonzero(launched & wanted[np.where(launched, launcher, 0)])
    if not len(wanted_kernels):
        return hints
    names = gpu["name"][wanted_kernels]
    counted = gpu["launch_counted"][wanted_kernels]
    grids = trace.kernels["grid"].to_numpy(dtype=object)[wanted_kernels]
    blocks = np.array(
        [math.prod(g) if isinstance(g, list) and g else np.nan for g in grids[counted]], float
    )
    rows = launcher[wanted_kernels]
    total_blocks = np.bincount(rows[counted], weights=blocks, minlength=n)
    params = costs.parameter_chunks(_parameter_shapes(trace))
    # The first kernel of each op names its element type.
    first_rows, first_at = np.unique(rows, return_index=True)
    for row, at in zip(first_rows.tolist(), first_at.tolist(), strict=True):
        hints[row] = costs.launch_hint(names[at], total_blocks[row] or None, params)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    return hints


def _parameter_shapes(trace: Trace) -> list:
    """The shapes of the gradients autograd accumulated into parameters: the tensors an
    optimizer step walks."""
    names = trace.ops["name"].to_numpy(dtype=object)
    rows = np.flatnonzero(names == "torch::autograd::AccumulateGrad")
    dims = trace.ops["dims"].to_numpy(dtype=object)[rows]
    return [d[0] for d in dims if isinstance(d, list) and d and isinstance(d[0], list)]


def _ownership(launching: np.ndarray, ops: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each GPU event, the op call that owns its cost (-1: none); and which calls own one.

    Each event climbs from the op that launched it to the nearest op with a model. An op with a
    model that launched nothing itself and has modelled ops below (``aten::linear`` over
    ``aten::addmm``) owns nothing: the work is counted once, where it ran. When a modelled op
    owns events and so does a modelled op below it (``native_batch_norm`` and the small
    ``copy_`` inside it), the outer one owns them all: its model covers its whole call.
    Without GPU events (a CPU trace) the innermost modelled op of each call stack counts.
    """
    modelled = ~np.isnan(ops["flops"])
    parent = ops["parent"]
    n = len(parent)
    if not len(launching):
        has_modelled_below = np.zeros(n, dtype=bool)
        above = parent[modelled]  # the ancestors of the modelled ops, one level at a time
        while len(above := above[above >= 0]):
            has_modelled_below[above] = True
            above = parent[above]
        return np.full(0, -1, dtype=np.int64), modelled & ~has_modelled_below
    if not n:
        return launching.copy(), modelled
    first = _nearest_modelled(launching, modelled, parent)
    owning = np.zeros(n, dtype=bool)
    owning[first[first >= 0]] = True
    # The outermost owning op above each owning op (itself when none is above it).
    rows = np.flatnonzero(owning)
    top = rows.copy()
    cursor = parent[rows]
    while (alive := cursor >= 0).any():
        climbed = np.flatnonzero(alive)
        higher = owning[cursor[climbed]]
        top[climbed[higher]] = cursor[climbed[higher]]
        cursor[~alive] = -1
        cursor[climbed] = parent[cursor[climbed]]
    outermost = np.arange(n)
    outermost[rows] = top
    owner = np.where(first >= 0, outermost[np.maximum(first, 0)], -1)
    counted = np.zeros(n, dtype=bool)
    counted[owner[owner >= 0]] = True
    # Events with no modelled op above keep their launcher, for the op table's "other" rows.
    return np.where(owner >= 0, owner, launching), counted


def _nearest_modelled(
    launching: np.ndarray, modelled: np.ndarray, parent: np.ndarray
) -> np.ndarray:
    """For each GPU event, the nearest op at or above its launcher that has a model, else -1."""
    found = launching.copy()
    climbing = found >= 0
    climbing[climbing] = ~modelled[found[climbing]]
    while climbing.any():
        found[climbing] = parent[found[climbing]]
        climbing &= found >= 0
        climbing[climbing] = ~modelled[found[climbing]]
    return found


def _total_gpu_time(gpu: dict[str, np.ndarray], ops: dict[str, np.ndarray]) -> np.ndarray:
    """GPU time of the events launched by each op or any op below it."""
    parent = ops["parent"]
    total = np.zeros(len(parent))
    cursor, dur = gpu["op"], gpu["dur_s"]
    # Each event's time is added to its launcher, then to each ancestor in turn; the events
    # whose climb has reached the top are dropped.
    while len(cursor := cursor[alive := cursor >= 0]):
        dur = dur[alive]
        total += np.bincount(cursor, weights=dur, minlength=len(parent))
        cursor = parent[cursor]
    return total


def _call_bounds(ops: dict[str, np.ndarray], peaks: Peaks | None) -> np.ndarray:
    """The bound of each op call, for its kernels. Only the calls that own a cost are judged:
    the kernels of any other are "other"."""
    bound = np.empty(len(ops["counted"]), dtype=object)
    bound.fill("other")
    rows = np.flatnonzero(ops["counted"])
    bound[rows] = _roofline(
        ops["flops"][rows], ops["bytes"][rows], ops["gpu_s"][rows], ops["roof"][rows], peaks
    )["bound"]
    return bound


def _roofline(
    flops: np.ndarray,
    nbytes: np.ndarray,
    seconds: np.ndarray,
    roof_keys: np.ndarray,
    peaks: Peaks | None,
    calls: np.ndarray | float = 1.0,
) -> dict[str, np.ndarray]:
    """Intensity, achieved rates, fraction of the roof and the bound label of each row (an op
    call, or ``calls`` calls of one op); ``roof_keys``: the peak each row is held against."""
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.where(nbytes > 0, flops / nbytes, np.nan)
        flops_per_s = np.where(seconds > 0, flops / seconds, np.nan)
        bytes_per_s = np.where(seconds > 0, nbytes / seconds, np.nan)
    modelled = ~np.isnan(flops) & (seconds > 0)
    bound = np.empty(len(flops), dtype=object)
    bound.fill("cpu")  # one shared string: np.full would make a new one for each row
    bound[seconds > 0] = "other"
    roof = np.full(len(flops), np.nan)
    if peaks is not None and modelled.any():
        codes, distinct = pd.factorize(roof_keys)
        # Code -1, a missing key, is looked up as no dtype, like "".
        peak = np.array([peaks.flops_for(d or None) for d in [*distinct, None]])[codes]
        attainable = np.minimum(peak, np.nan_to_num(intensity, nan=np.inf) * peaks.bandwidth)
        with np.errstate(divide="ignore", invalid="ignore"):
            roof = np.where(modelled, flops_per_s / attainable, np.nan)
            # Ops that move bytes but do no arithmetic (copies) are judged by bandwidth.
            no_flops = modelled & (flops == 0)
            roof[no_flops] = bytes_per_s[no_flops] / peaks.bandwidth
            ideal = np.maximum(flops / peak, nbytes / peaks.bandwidth) / calls
        compute = intensity >= peak / peaks.bandwidth
        bound[modelled] = np.where(compute[modelled], "compute", "memory")
        bound[modelled & (ideal < LAUNCH_FLOOR_S)] = "overhead"
    return {
        "intensity": intensity,
        "flops_per_s": flops_per_s,
        "bytes_per_s": bytes_per_s,
        "roof_fraction": roof,
        "bound": bound,
    }


# Kernels without a cost model whose name alone says what they are. Marked "(by kernel name)";
# a bound only where the kind decides it: pointwise and reduction kernels (ATen's and
# Inductor's) and multi-tensor optimizer kernels move a few bytes per FLOP, whatever their sizes;
# a GEMM or convolution can be either, so it stays "other".
_NAME_CLASSES: tuple[tuple[re.Pattern, str, str | None], ...] = (
    (re.compile(r"^triton_poi_|elementwise_kernel|unrolled_elementwise"), "elementwise", "memory"),
    (re.compile(r"^triton_(per|red)_|reduce_kernel"), "reduction", "memory"),
    (re.compile(r"multi_tensor_apply_kernel"), "optimizer", "memory"),
    (re.compile(r"flash|fmha|attention", re.IGNORECASE), "attention", None),
    (
        re.compile(r"conv[0-9_]|convolution|implicit_gemm|wgrad|dgrad|fprop", re.IGNORECASE),
        "conv",
        None,
    ),
    (re.compile(r"gemm|gemv|cutlass|xmma|nvjet|^triton_tem_", re.IGNORECASE), "matmul", None),
)


# Names are judged on their first characters: the kernel's identifier and the start of its
# template arguments (a cutlass GEMM names itself there), not the lambdas that follow.
_NAME_HEAD = 200


def _name_class(head: str) -> int:
    """The index of the first class of _NAME_CLASSES whose pattern the name's head matches,
    else -1."""
    for index, (pattern, _, _) in enumerate(_NAME_CLASSES):
        if pattern.search(head):
            return index
    return -1


def _kernel_name_tests(names: np.ndarray) -> dict[str, np.ndarray]:
    """What the GPU events' names say, per event, each name judged once: a collective's kernel,
    a copy to or from the host, a kernel whose blocks count elements, the class of _NAME_CLASSES
    (-1: none)."""
    codes, distinct = factorize_objects(names)
    verdicts = [
        _name_verdicts(name[:_NAME_HEAD] if isinstance(name, str) else "") for name in distinct
    ]

    def per_event(field: int, missing: object) -> np.ndarray:
        # code -1, a missing name: the last
        return np.array([*(v[field] for v in verdicts), missing])[codes]

    return {
        "communication": per_event(0, False),
        "host_copy": per_event(1, False),
        "launch_counted": per_event(2, False),
        "name_class": per_event(3, -1),
    }


@functools.lru_cache(maxsize=8192)
def _name_verdicts(text: str) -> tuple[bool, bool, bool, int]:
    """What ``_kernel_name_tests`` tells of one name's head: its regular expressions run once
    per distinct name in a process (a load analyses the whole trace, then its median step,
    whose names are the whole's again)."""
    return (
        bool(text) and (_is_communication(text) or comms.is_comm_kernel(text)),
        bool(text) and _is_host_copy(text),
        bool(costs.LAUNCH_COUNTED_KERNELS.search(text)),
        _name_class(text),
    )


def _classify_by_name(
    name_class: np.ndarray, unmodelled: np.ndarray, category: np.ndarray, bound: np.ndarray
) -> None:
    """Label the kernels without a model by their names where that is reliable (in place)."""
    for index, (_, kind, by_name_bound) in enumerate(_NAME_CLASSES):
        chosen = np.flatnonzero(unmodelled & (name_class == index))
        category[chosen] = f"{kind} (by kernel name)"
        if by_name_bound is not None:
            bound[chosen] = by_name_bound


def _is_communication(name: str) -> bool:
    return _COMMUNICATION_PATTERN.search(name.lower()) is not None


def _is_host_copy(name: str) -> bool:
    return _HOST_COPY_PATTERN.search(name) is not None


def _kernel_table(
    gpu: dict[str, np.ndarray],
    owner: np.ndarray,
    ops: dict[str, np.ndarray],
    origin: float,
    communication: np.ndarray,
) -> dict[str, np.ndarray]:
    """The kernel table's columns, in time order, times from ``origin``. ``communication``
    marks the events of collectives (see :func:`_communication`)."""

    every_event_owned = bool(np.all(owner >= 0))

    def of_owner(column: str, missing: object) -> np.ndarray:
        """The owner op's value for each GPU event; ``missing`` where no op launched it (a
        CUDA graph replay launches kernels with no op around them)."""
        if every_event_owned:
            return ops[column][owner]
        return np.append(ops[column], missing)[owner]  # owner -1: the last  # pyright: ignore[reportArgumentType, reportCallIssue]  # numpy/pandas stubs: loose scalar types

    category = of_owner("category", "")
    bound = of_owner("bound", "other")  # "other" already where the owner owns no cost
    counted = of_owner("counted", False)
    category[~counted] = "unmodelled"
    names = gpu["name"]
    _classify_by_name(gpu["name_class"], ~counted, category, bound)
    is_comm = gpu["communication"] | communication
    host_copy = gpu["host_copy"] & ~is_comm
    host_copy[host_copy] = gpu["kind"][host_copy] == "memcpy"  # compared where the name says so
    category[is_comm] = "communication"
    category[host_copy] = "host copy"
    bound[is_comm | host_copy] = "other"
    # An op's cost is shared among its kernels and copies by their share of its time. A memset
    # it launched (cuBLAS zeroing a workspace) does none of its work: no FLOPs, no bytes, no
    # bound of its own ("other"), category "memset" where its op has a model.
    dur = gpu["dur_s"]
    working = (owner >= 0) & (gpu["kind"] != "memset")
    work_time = np.bincount(owner[working], weights=dur[working], minlength=len(ops["name"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = dur / np.append(work_time, np.nan)[owner]
        memset = gpu["kind"] == "memset"
        flops = np.where(counted & ~memset, of_owner("flops", np.nan) * share, np.nan)
        nbytes = np.where(counted & ~memset, of_owner("bytes", np.nan) * share, np.nan)
    bound[memset] = "other"
    category[memset & counted] = "memset"
    start = gpu["start_s"]
    columns = {
        "name": names,
        "op": of_owner("name", ""),
        "module": of_owner("module", ""),
        "category": category,
        "stream": gpu["stream"],
        "device": gpu["device"],
        "kind": gpu["kind"],
        "start_s": start,
        "dur_s": dur,
        "count": 1,
        "flops": flops,
        "bytes": nbytes,
        "bound": bound,
        "op_row": owner,
        # When it was launched, in trace time: the start of its launching op (its own start
        # where none launched it). Assigns it to a profiler step.
        "launch_s": np.where(gpu["op"] >= 0, np.append(ops["start_s"], np.nan)[gpu["op"]], start),
        # Internal too: the event's row in trace.gpu_columns() (the step graph reads it).
        "event": np.arange(len(start)),
    }
    order = np.argsort(start, kind="stable")  # time order, as sort_values would, for less
    table = {name: v[order] if np.ndim(v) else v for name, v in columns.items()}
    table["start_s"] -= origin  # a copy: taken through ``order``
    return table


# --- the split -------------------------------------------------------------------------------------


def split_by_bound(
    kernels: _Columns,
    gpu_work: bool,
    trace_ops: _Columns,
    host_comm_start: np.ndarray | None = None,
    host_comm_end: np.ndarray | None = None,
) -> dict:
    """The span's split by bound. ``kernels`` and ``trace_ops``: frames or dicts of arrays;
    ``host_comm_*``: collectives that ran on the host (gloo), in the kernels' time.

    Priority compute > memory > other > communication: a collective counts in
    ``communication_s`` only where no other GPU work runs (exposed); the rest of its time is
    ``communication_hidden_s``. Busy time is the union of the GPU events; a host collective
    while the GPU ran nothing (``host_communication_s``) is exposed communication, not idle.
    """
    if not gpu_work:
        top = np.asarray(trace_ops["parent"]) < 0
        busy = intervals.union_length(
            np.asarray(trace_ops["start_s"])[top], np.asarray(trace_ops["end_s"])[top]
        )
        return {
            "busy_s": busy,
            "compute_s": 0.0,
            "memory_s": 0.0,
            "communication_s": 0.0,
            "other_s": busy,
            "overhead_kernels_s": 0.0,
            "communication_hidden_s": 0.0,
            "host_communication_s": 0.0,
        }
    start = np.asarray(kernels["start_s"])
    dur = np.asarray(kernels["dur_s"])
    end = start + dur
    bound = np.asarray(kernels["bound"])
    compute = bound == "compute"
    roofline_bound = compute | (bound == "memory")
    communication = (
        np.asarray(kernels["category"]) == "communication"
        if "category" in kernels
        else np.zeros(len(start), dtype=bool)
    )
    work = ~communication
    comm_start = np.concatenate([start[communication], _floats(host_comm_start)])
    comm_end = np.concatenate([end[communication], _floats(host_comm_end)])
    # One merge of all activity gives the time anything ran and the idle gaps.
    merged_start, merged_end = intervals.merge(
        np.concatenate([start, comm_start]), np.concatenate([end, comm_end])
    )
    active = float(np.sum(merged_end - merged_start))
    busy = intervals.union_length(start, end)
    compute_s = intervals.union_length(start[compute], end[compute])
    compute_or_memory = intervals.union_length(start[roofline_bound], end[roofline_bound])
    working = intervals.union_length(start[work], end[work])
    communication_total = intervals.union_length(comm_start, comm_end)
    exposed = active - working
    overhead = bound == "overhead"
    return {
        "busy_s": busy,
        "compute_s": compute_s,
        "memory_s": compute_or_memory - compute_s,
        "communication_s": exposed,
        "other_s": working - compute_or_memory,
        # Part of other_s: kernels too small for their bound to matter (launch-sized).
        "overhead_kernels_s": float(np.nansum(dur[overhead])),
        "idle_gap_count": int(np.sum(merged_start[1:] - merged_end[:-1] > 0)),
        "communication_hidden_s": max(communication_total - exposed, 0.0),
        "host_communication_s": active - busy,
    }


def _floats(values: np.ndarray | None) -> np.ndarray:
    return np.empty(0) if values is None else np.asarray(values, dtype=float)


# --- communication -------------------------------------------------------------------------------


@dataclass
class _Communication:
    """The collectives of a trace: which GPU events are theirs, which of those have a known
    size, the host intervals of collectives that run on the CPU, and the summary entry."""

    events: np.ndarray  # bool per GPU event
    sized: np.ndarray  # bool per GPU event: its collective's message size is known
    host_start: np.ndarray
    host_end: np.ndarray
    summary: dict | None


# Collectives that run on the host: gloo's worker annotations ("gloo:all_reduce").
HOST_COLLECTIVE_PREFIXES = ("gloo:",)


def _communication(
    trace: Trace,
    gpu: dict[str, np.ndarray],
    ops: dict[str, np.ndarray],
    peaks: Peaks | None,
    device: str,
    *,
    events_only: bool = False,
) -> _Communication:
    """Collectives: their GPU events and host intervals, and per kind and size the calls, time,
    algorithm and bus bandwidth and the fraction of the link's peak.

    The GPU events of a collective are the NCCL/RCCL kernels (by name) and everything a
    collective call launched (``comms.is_comm_call``: gloo's copies to the host and back); the
    calls, their sizes and groups are ``comms.collectives``' (kernel fields, op shapes or the
    ``nccl:``/``gloo:`` annotation); bandwidths are nccl-tests' (``comms.bandwidth``) against
    the GPU's link (``peaks.interconnect``) for groups that fit one node.
    """
    n_events = len(gpu["op"])
    distinct = ops["name_distinct"]
    is_call = np.array([comms.is_comm_call(n) for n in distinct] + [False], bool)
    under_call = _nearest_modelled(gpu["op"], is_call[ops["name_code"]], ops["parent"])
    events = (under_call >= 0) | gpu["communication"]
    annotations = trace.annotations
    host = (annotations["where"].to_numpy(dtype=object) == "host") & _name_tests(
        annotations["name"].to_numpy(dtype=object),
        lambda name: name.startswith(HOST_COLLECTIVE_PREFIXES),
    )[0]
    host_start = annotations["start_s"].to_numpy()[host] if n_events else np.empty(0)
    host_end = annotations["end_s"].to_numpy()[host] if n_events else np.empty(0)
    sized = np.zeros(n_events, dtype=bool)
    # The kernel table alone (``kernels_only``) needs only which events are collectives: the
    # calls, their sizes and the summary are for the full analysis.
    if events_only or (not events.any() and not len(host_start)):
        return _Communication(events, sized, host_start, host_end, None)

    calls = comms.collectives(trace)
    # Each event's call: the outermost collective call above its launcher.
    call_of = comms.call_of_rows(trace)
    launcher = gpu["op"]
    event_call = np.where(launcher >= 0, np.append(call_of, -1)[launcher], -1)
    known = set(calls.loc[calls["bytes"].notna(), "call_row"].astype(int)) - {-1}
    sized = events & np.isin(event_call, list(known))
    # NCCL kernels that no call launched are calls of their own: sized by their start.
    orphans = calls[(calls["call_row"] < 0) & (calls["where"] == "gpu") & calls["bytes"].notna()]
    if len(orphans):
        sized |= events & (event_call < 0) & np.isin(gpu["start_s"], orphans["start_s"])
    info = trace.metadata.get("distributedInfo") if isinstance(trace.metadata, dict) else None
    backend = info.get("backend") if isinstance(info, dict) else None
    found = None if backend == "gloo" else interconnect(device)
    link = {"bytes_per_s": found[0], "source": found[1]} if found else None
    summary = {
        "backend": backend,
        "collectives": _collective_rows(calls, link, NODE_GPUS),
        "link": link,
        "host_time_s": intervals.union_length(host_start, host_end),
    }
    return _Communication(events, sized, host_start, host_end, summary)


def _collective_rows(calls: pd.DataFrame, link: dict | None, node_gpus: int) -> list[dict]:
    """The calls grouped by op, size and group size: calls, time, algbw and busbw
    (``comms.bandwidth``), and busbw's share of the link's peak for groups of one node. A call
    run on the host (gloo) has no GPU time: its host time includes the wait for the other
    ranks, so it gets no rate."""
    if not len(calls):
        return []
    table = calls.assign(
        seconds=np.where(calls["where"] == "gpu", calls["end_s"] - calls["start_s"], np.nan),
        op=calls["op"].fillna("unknown"),
        size=calls["bytes"].fillna(-1.0),
        ranks=calls["group_size"].fillna(-1),
    )
    rows = []
    for (op, size, ranks), group in table.groupby(["op", "size", "ranks"], sort=False):
        seconds = float(group["seconds"].sum(min_count=1))
        size = None if size < 0 else float(size)
        ranks = None if ranks < 0 else int(ranks)
        algbw = busbw = fraction = None
        if size is not None and not math.isnan(seconds) and seconds > 0:
            algbw, busbw = comms.bandwidth(str(op), size * len(group), seconds, ranks)
            algbw = None if math.isnan(algbw) else algbw
            busbw = None if math.isnan(busbw) else busbw
        if busbw is not None and link is not None and ranks is not None and ranks <= node_gpus:
            fraction = busbw / link["bytes_per_s"]
        rows.append(
            {
                "collective": str(op),
                "calls": len(group),
                "message_bytes": size,
                "ranks": ranks,
                "time_s": None if math.isnan(seconds) else seconds,
                "algbw_bytes_per_s": algbw,
                "busbw_bytes_per_s": busbw,
                "link_fraction": fraction,
            }
        )
    return sorted(rows, key=lambda r: -(r["time_s"] or 0.0))


# --- coverage ------------------------------------------------------------------------------------

# Below this share of GPU time with a model, the report names the ops without one.
LOW_COVERAGE = 0.9
_NO_OP = "(no op: a CUDA graph replay or an untraced launch)"
_GRAPH_LAUNCH = re.compile(r"GraphLaunch")


def _coverage(
    trace: Trace,
    gpu: dict[str, np.ndarray],
    owner: np.ndarray,
    ops: dict[str, np.ndarray],
    comm: _Communication,
) -> dict:
    """How much of the GPU time (the sum of GPU event durations) has a cost model: owned by an
    op with a FLOP and byte model, or a collective of known size. ``estimated_share``: the part
    of it whose model is an estimate (compiled kernels, optimizer steps sized from their
    launches). ``unmodelled_ops``: the ops that launched the rest, largest first."""
    dur = gpu["dur_s"]
    total = float(np.sum(dur))
    if not len(dur) or total <= 0:
        return {"modelled_share": None, "estimated_share": None, "unmodelled_ops": []}
    counted = np.append(ops["counted"], False)[owner]  # owner -1: the last
    source = np.append(ops["source"], "")[owner]
    modelled = (counted & ~comm.events) | (comm.events & comm.sized)
    estimated = counted & ~comm.events & (source == "estimate")
    # The time without a model, per op name (its code; the last code: no launching op).
    missing = ~modelled
    n_names = len(ops["name_distinct"])
    launcher = gpu["op"][missing]
    name_code = np.append(ops["name_code"], n_names)  # launcher -1: the last
    codes = name_code[launcher]
    per_name = np.bincount(codes, weights=dur[missing], minlength=n_names + 1)
    top = np.argsort(-per_name, kind="stable")[:8]
    labels = [*map(str, ops["name_distinct"]), _NO_OP]
    return {
        "modelled_share": float(np.sum(dur[modelled]) / total),
        "estimated_share": float(np.sum(dur[estimated]) / total),
        "unmodelled_ops": [
            {"name": labels[code], "share": float(per_name[code] / total)}
            for code in top
            if per_name[code] / total >= 0.001
        ],
    }


_L2_CAVEAT = (
    "ops whose inputs the op before left in the L2 cache (tensors of up to tens of MB) move less "
    "than it"
)


def _traffic_notes(op_table: pd.DataFrame) -> list[str]:
    """Where the minimum-traffic byte model is known to be off, for the kinds of ops this report
    spends its time in (measured with Nsight Compute on an H200: bench/ncu_bytes.py)."""
    gpu = op_table["gpu_time_s"].to_numpy(dtype=float)
    total = float(np.nansum(gpu))
    if total <= 0 or not np.any(op_table["flops"].notna()):
        return []
    category = op_table["category"].to_numpy(dtype=object)

    def share(*kinds: str) -> float:
        return float(np.nansum(gpu[np.isin(category, kinds)])) / total

    known = []
    if share("matmul", "conv") >= 0.1:
        known.append(
            "matrix products move 0.6-1.4x of it and cuDNN convolutions about 1.6x (tiles read "
            "more than once, layout transposes)"
        )
    if share("rnn") >= 0.05:
        known.append(
            "cuDNN RNNs move 6-9x of it (each step's gates and the recurrent weights go through "
            "memory)"
        )
    names = op_table["name"].to_numpy(dtype=object)
    templates = [n for n in names if isinstance(n, str) and n.startswith("triton_tem_")]
    notes = []
    if known or share("norm", "elementwise", "softmax", "copy") >= 0.1:
        notes.append(
            "Bytes are the minimum traffic: each input read once, each output written once. "
            "Measured in DRAM by Nsight Compute on an H200, "
            + "; ".join([*known, _L2_CAVEAT])
            + "."
        )
    if any("attention" in n for n in templates):
        notes.append(
            "A flex attention kernel's FLOPs are counted as dense attention's: its block mask "
            "skips blocks the trace does not show, so they are an upper bound."
        )
    return notes


def _replays_graphs(trace: Trace) -> bool:
    names = pd.unique(trace.runtime["name"].to_numpy(dtype=object))
    return any(isinstance(n, str) and _GRAPH_LAUNCH.search(n) for n in names)


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def _coverage_notes(summary: Mapping[str, Any], trace: Trace) -> list[str]:
    """Plain words on the share of GPU time the report can explain, and why not more."""
    share = summary.get("modelled_share")
    if share is None:
        return []
    notes = []
    # A trace without shapes has its own note (analyze): no op can have a model there.
    if summary.get("shapes_recorded", True) and share < LOW_COVERAGE:
        missing = ", ".join(
            f"{op['name']} ({_percent(op['share'])})" for op in summary["unmodelled_ops"][:5]
        )
        notes.append(
            f"Only {_percent(share)} of the GPU time has a cost model; the rest counts as other "
            f"work. Without one: {missing}."
        )
    if _replays_graphs(trace):
        notes.append(
            "Kernels replayed from a CUDA graph (torch.compile mode='reduce-overhead', "
            "torch.cuda.graphs) carry no shapes in the trace, so they get no FLOP or byte count; "
            "they are labelled by their kernel names where that is reliable. To cost them, profile "
            "the same code without graphs (torch.compile mode='default' or "
            "'max-autotune-no-cudagraphs')."
        )
    if summary.get("estimated_share"):
        estimated = summary["estimated_share"]
        if estimated >= 0.01:
            notes.append(
                f"{_percent(estimated)} of the GPU time is costed by estimates: torch.compile's "
                "kernels (every tensor argument moved once) and ops whose shapes the trace leaves "
                "out (lists of over 30 tensors: sized from their kernels' launches)."
            )
    return notes


# --- the op table ----------------------------------------------------------------------------------


def _op_table(
    ops: dict[str, np.ndarray], owner: np.ndarray, peaks: Peaks | None
) -> tuple[pd.DataFrame, np.ndarray, dict[str, np.ndarray]]:
    """One row per op name and input shapes, summed over calls; each call's row; and the
    table's columns as arrays (read again by the limits and the advice, for less than the
    frame's)."""
    codes, first = group_codes(ops["name_code"], ops["shapes"], ops["dtypes"])
    groups = len(first)

    def total(column: str) -> np.ndarray:
        return np.bincount(codes, weights=ops[column], minlength=groups)

    # Only the calls that own a cost have figures (NaN elsewhere): sums over them alone are the
    # same, for less.
    counted = ops["counted"]
    table = {
        "name": ops["name"][first],
        "shapes": ops["shapes"][first],
        "dtypes": ops["dtypes"][first],
        "category": ops["category"][first],  # "" where no model: never missing
        # The calls' modules as one pattern (model.h.*.mlp.c_fc), and their source lines.
        "module": modules.call_pattern(codes, ops["module"], groups),
        "line": modules.call_sources(codes, ops["line"], groups),
        "calls": np.bincount(codes, minlength=groups),
        "gpu_time_s": total("gpu_s"),
        "total_gpu_time_s": total("total_gpu_s"),
        "cpu_time_s": total("dur_s"),
        "self_cpu_time_s": total("self_cpu_s"),
        "kernels": np.bincount(codes[owner[owner >= 0]], minlength=groups),
        "flops": group_sums(codes[counted], ops["flops"][counted], groups),
        "bytes": group_sums(codes[counted], ops["bytes"][counted], groups),
        "dtype": ops["dtype"][first],
        "cost_model": ops["cost_model"][first],
    }
    # A group's calls share shapes and dtypes, and nearly always kernels; where their roofs
    # differ, the highest holds (no call is then shown above its own).
    peak = np.zeros(len(codes))
    if peaks is not None and counted.any():
        roof_codes, distinct_roofs = factorize_objects(ops["roof"][counted])
        peak[counted] = np.array([peaks.flops_for(key or None) for key in distinct_roofs] + [0.0])[
            roof_codes
        ]
    by_peak = np.lexsort((-peak, codes))
    sorted_codes = codes[by_peak]
    representative = (
        by_peak[np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]] if groups else first
    )
    table["roof"] = ops["roof"][representative]
    table["roof_basis"] = ops["roof_basis"][representative]
    table |= _roofline(
        table["flops"],
        table["bytes"],
        table["gpu_time_s"],
        table["roof"],
        peaks,
        calls=table["calls"].astype(float),
    )
    table["fewer_flops_kernel"] = (
        np.bincount(codes, weights=ops["fewer_flops_kernel"], minlength=groups) > 0
    )
    table["roof_flag"] = roofs.over_roof_flags(table, peaks)
    # Largest GPU time first, then total GPU time, then CPU time, ties in row order: what
    # sort_values(ascending=False, kind="stable") gives (NaN last), on arrays. Built once, with
    # the columns in the schema's order.
    order = np.lexsort((-table["cpu_time_s"], -table["total_gpu_time_s"], -table["gpu_time_s"]))
    # Filled by _limits, once the calls' kernels are known by row.
    for column in ("regime", "reason", "why"):
        table[column] = np.full(groups, "", dtype=object)
    call_row = np.empty(groups, dtype=np.int64)
    call_row[order] = np.arange(groups)
    columns = {name: table[name][order] for name in OPS_COLUMNS}
    return frame(columns), call_row[codes], columns


def _row_of(owner: np.ndarray, call_row: np.ndarray) -> np.ndarray:
    """The op-table row of each GPU event's owner (-1: none)."""
    return np.where(owner >= 0, call_row[np.maximum(owner, 0)], -1) if len(call_row) else owner


def _event_bytes(trace: Trace) -> np.ndarray:
    """Bytes of each GPU event (kernels first: NaN; then copies and sets)."""
    return np.concatenate(
        [np.full(len(trace.kernels), np.nan), trace.copies["bytes"].to_numpy(dtype=float)]
    )


def _limits(
    trace: Trace,
    gpu: dict[str, np.ndarray],
    owner: np.ndarray,
    ops: dict[str, np.ndarray],
    op_table: pd.DataFrame,
    op_columns: dict[str, np.ndarray],
    call_row: np.ndarray,
    peaks: Peaks | None,
) -> dict[str, np.ndarray]:
    """The op table's regime, reason and why columns (set in place, in the frame and in its
    columns), from its rows' kernels and calls (``limits``); returns the per-row facts they
    rest on, for the advice."""
    rows = len(op_table)
    fraction = np.asarray(op_columns["roof_fraction"], dtype=float)
    category = op_columns["category"]
    # Launch facts only where a reason is looked for: far under the roof, or a convolution
    # (whose layout transpositions count at any fraction).
    with np.errstate(invalid="ignore"):
        wanted = (fraction < limits.LOOKED_AT) | (category == "conv")
    first_call = np.full(rows, -1, dtype=np.int64)
    first_call[call_row[::-1]] = np.arange(len(call_row))[::-1]
    dims = trace.ops["dims"].to_numpy(dtype=object)
    facts = limits.launch_facts(
        rows=rows,
        wanted=wanted,
        event_row=_row_of(owner, call_row),
        names=gpu["name"],
        durations=gpu["dur_s"],
        is_kernel=gpu["kind"] == "kernel",
        launch={key: trace.kernels[key].to_numpy(dtype=object) for key in limits.LAUNCH_FIELDS},
        call_row=call_row,
        call_seconds=ops["gpu_s"],
        call_category=ops["category"],
        call_dims=dims,
        call_strides=trace.ops["strides"].to_numpy(dtype=object),
    )
    facts["dims"] = np.where(first_call >= 0, dims[np.maximum(first_call, 0)], None)  # pyright: ignore[reportArgumentType, reportCallIssue]  # numpy/pandas stubs: loose scalar types
    table = {**op_columns, "dims": facts["dims"]}
    found = limits.op_limits(table, facts, peaks, limits.Device.from_props(device_props(trace)))
    for column in ("regime", "reason", "why"):
        op_table[column] = op_columns[column] = found[column]
    facts["wave_efficiency"] = found["wave_efficiency"]
    return facts


def _cpu_lane(trace_ops: pd.DataFrame, ops: dict[str, np.ndarray], origin: float) -> pd.DataFrame:
    """The top-level ops on the host, for the timeline."""
    top = np.flatnonzero(ops["parent"] < 0)
    return frame(
        {
            "name": ops["name"][top],
            "tid": _as_text(trace_ops["tid"].to_numpy()[top]),
            "start_s": ops["start_s"][top] - origin,
            "dur_s": ops["dur_s"][top],
        }
    )


def _as_text(values: np.ndarray) -> np.ndarray:
    """Values as Python strings, as ``astype(str)`` writes them. Integers (thread ids: a few,
    over thousands of ops) are converted once per distinct value."""
    if values.dtype.kind in "iu":
        codes, distinct = pd.factorize(values)
        return distinct.astype(str).astype(object)[codes]
    return values.astype(str).astype(object)


# --- device facts from the trace ------------------------------------------------------------------


def device_props(trace: Trace) -> dict:
    """The trace's properties of the GPU most kernels ran on (the first GPU's when no kernel
    ran, {} when the trace lists none): name, totalGlobalMem, numSms..."""
    if len(trace.kernels) or len(trace.copies):
        # The most common device id, the smallest of equals (Series.mode's first). The reader
        # gives integer ids.
        ids, counts = np.unique(
            np.concatenate([trace.kernels["device"].to_numpy(), trace.copies["device"].to_numpy()]),
            return_counts=True,
        )
        device_id = int(ids[np.argmax(counts)])
        for props in trace.devices:
            if props.get("id") == device_id:
                return props
    return trace.devices[0] if trace.devices else {}


def device_name(trace: Trace) -> str:
    """The name of the GPU most kernels ran on, from the trace's device properties."""
    if not len(trace.kernels) and not len(trace.copies):
        return "CPU"
    return str(device_props(trace).get("name") or "unknown GPU")


def _trace_capacity(trace: Trace) -> float | None:
    memory = device_props(trace).get("totalGlobalMem")
    return float(memory) if memory else None


def _trace_peak_memory(trace: Trace) -> float | None:
    memory = trace.memory
    if not len(memory):
        return None
    on_gpu = pd.to_numeric(memory["device"], errors="coerce").to_numpy() >= 0
    allocated = memory["allocated_bytes"][on_gpu]
    return float(allocated.max()) if len(allocated) else None


# --- advice ---------------------------------------------------------------------------------------


def amdahl(share: float, factor: float) -> float:
    """Overall speed-up when a part with this share of the time gets ``factor`` times faster."""
    return 1.0 / ((1.0 - share) + share / factor)


def what_if(
    summary: Mapping[str, Any], ops: pd.DataFrame, factors: tuple[float, ...] = (2, 10)
) -> pd.DataFrame:
    """Amdahl projections for each part of the span and for the top ops by GPU time (by self
    CPU time in a report without GPU work)."""
    span = summary["span_s"]
    parts = [("category", name, summary[f"{name}_s"]) for name in SPLIT_PARTS]
    gpu = bool(summary.get("gpu"))
    key = "gpu_time_s" if gpu else "self_cpu_time_s"
    top = ops.nlargest(5, key) if len(ops) else ops
    parts += [("op", f"{r.name} {r.shapes}".strip(), getattr(r, key)) for r in top.itertuples()]
    # Without GPU work an op's share is of the profiled run's CPU op time (the Overview's), on
    # the part of the span the ops take: its time over the span would mix the profiled run's
    # op times (slower) with the timed runs' span.
    cpu_op_time = (
        float(ops["self_cpu_time_s"].fillna(ops["cpu_time_s"]).fillna(0.0).sum())
        if len(ops)
        else 0.0
    )
    rows = []
    for kind, name, seconds in parts:
        # Host op times of a profiled run can exceed an unprofiled span: a share is at most 1.
        share = min(seconds / span, 1.0) if span > 0 else 0.0
        if kind == "op" and not gpu and cpu_op_time > 0:
            share = min(share, seconds / cpu_op_time)
        row = {"kind": kind, "part": name, "time_s": seconds, "share": share}
        for factor in factors:
            row[f"speedup_at_{factor:g}x"] = amdahl(share, factor)
            row[f"span_at_{factor:g}x_s"] = span / amdahl(share, factor)
        row["limit"] = 1.0 / (1.0 - share) if share < 1 else float("inf")
        rows.append(row)
    return pd.DataFrame(rows)
