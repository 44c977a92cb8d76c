"""The report's JSON form: the contract between Python and the browser.

One schema module per document kind here (this one; ``comparison``, ``job``, ``history`` and
``plan`` beside it, on the types of ``types``): the one source. The browser's types are generated
from it (``jlpm schema:types`` writes ``js/src/generated/schema_types.ts``; its reader,
``js/src/schema.ts``, takes the tables' columns from each document). Both are tested against the
example files in ``tests/data/reports/`` (the browser tests render them). Bump
``SCHEMA_VERSION`` on any change that an older reader would misread; readers refuse a newer
major version with a clear message.

Layout of a report document (all times in seconds, all sizes in bytes, rates per second)::

    {
      "schema": "jupyter_brrr.report",
      "version": 2,                   # 1: no "display"
      "name": "cell [3]",             # what was profiled
      "source": "magic" | "profile" | "trace",
      "created": "2026-11-29T15:50:00+00:00",
      "summary": {...},               # SUMMARY_KEYS below, plus optional extras (TIMING below)
      "notes": ["..."],               # plain-language caveats (first-run costs, profiler overhead)
      "recommendations": [{"bottleneck": "overhead" | "memory" | "compute" | "communication" | "other",
                           "title": "...", "detail": "...", "share": 0.62,
                           # since the advice module (absent from older reports):
                           "cause": one of CAUSES, "evidence": "...", "fix": "...",
                           "ops": [{"name", "shapes", "module", "line", "calls", "time_s"}],
                           "saving_s": 0.004, "speedup": 2.6, "probably": true,
                           # the saving as said, and how it was made (SAVING below):
                           "saving": {"text", "seconds", "low_s", "high_s", "predicted_by", "not_modelled"},
                           # a fix that needs a code change, as a snippet (CODE_CHANGE):
                           "code_change": {"before", "after", "line"} | null,
                           # the fix tried (actions/fixes.py, TRY below):
                           "try": {"fix", "verdict", "reason", "predicted_s", ...}}],
                           # share: the saving's share of the time; ranked by saving_s
      "ruled_out": [...],             # recommendations the replay says cannot pay here, each
                                      # with "ruled_out": why (absent from older reports)
      "ops":     {"columns": OPS_COLUMNS, "data": [[...], ...]},
      "kernels": {"columns": KERNEL_COLUMNS, "data": [[...], ...],
                  "aggregated": false, "total": 1234},
      "cpu_ops": {"columns": CPU_OP_COLUMNS, "data": [[...], ...]},
      "steps": {"columns": STEP_COLUMNS, "data": [[...], ...]},   # [] unless a loaded trace
                                      # holds several profiler steps (optional: older reports)
      "modules": {"columns": MODULE_COLUMNS, "data": [[...], ...]},  # the module tree, [] where
                                      # no op ran in a module (optional: older reports)
      "ab": null | AB,                # the A/B comparison, when one ran (actions/ab.py)
      "change": null | COMPARISON,    # a named run: the change since the previous run
      "history": null | [RUN, ...],   # a named run: the runs of its name, oldest first
      "target": null | TARGET,        # the plan for a --target (target.py)
      "sweep": null | SWEEP,          # a size sweep (actions/sweep.py; absent from older reports)
      "memory": null | MEMORY,        # what held the peak memory (memory.py; likewise)
      "display": DISPLAY,             # what the renderers draw (display.py; absent in version 1)
      "graph": null | GRAPH,          # the step's dependency graph (step_graph.py; absent from
                                      # older reports, null over step_graph.GRAPH_LIMIT nodes)
      "what_if": null | WHAT_IF       # the What-if tab's replayed spans (analysis/whatif.py;
                                      # absent from older reports, null without a graph)
    }

    WHAT_IF = {"predicted_by": "...", "not_modelled": ["..."], "max_factor": 100,
               "targets": [{"id": "part:compute" | "knob:launch" | "op:0" ..., "kind": "part" |
                            "knob" | "op", "key", "label", "name", "shapes" (an op's), "time_s",
                            "share" (of the span, or null), "scalable" (false: the syncs),
                            "change" (in words), "factors": [1, 2, ...], "ratios": [1, 0.8, ...]
                            (the span's ratio to the unchanged replay at each factor),
                            "limit" (the speed-up, N unbounded)}]}

    GRAPH = {"schema": "jupyter_brrr.step_graph", "version": 1, one array per field of
             step_graph.StepGraph (h_* per host node, g_* per GPU node, await_*, handoff_*,
             wait_* per edge, each a text of comma-separated whole numbers: times in units
             of 10 ns, names as codes into "names"),
             "names", "threads", "mode" ("latency" | "period"), "measured_s", "main_thread",
             "typical": {"launch_latency_s", "stream_gap_s", "wake_s", ...}}

    SWEEP = {"schema": "jupyter_brrr.sweep", "version": 1, "variable", "device", "gpu",
             "stopped" ("done" | "oom" | "budget" | "cancelled" | "error"), "oom_at", "knee",
             "best", "fit": null | {"kind", "coefficients", "per_item_bytes", "fixed_bytes",
             "max_miss", "capacity_bytes", "predicted_largest"}, "confirmation",
             "elapsed_s", "runs_total", "notes",
             "points": table (SWEEP_POINT_COLUMNS), "doublings": table (SWEEP_DOUBLING_COLUMNS),
             "capacity": table (SWEEP_CAPACITY_COLUMNS),
             "guides": {"flat": [[size, s], [size, s]], "linear": [...]}}  # the chart's guides
    MEMORY = {"schema": "jupyter_brrr.memory", "version": 1, "device", "gpu", "peak_bytes",
              "peak_time_s", "allocator_peak_bytes", "before_bytes", "capacity_bytes",
              "at_peak": {MEMORY_CATEGORIES: bytes}, "unattributed_bytes",
              "timeline": {"times_s": [...], "categories": [...], "bytes": [[...] per category],
                           "allocated": [...]},
              "largest": table (MEMORY_LARGEST_COLUMNS), "advice": [...], "notes": [...]}

    DISPLAY = {"main_dtype": null | "bf16",     # the roof whose peak the overview quotes
               "roofline": null | {"x_range": [min, max], "y_range": [min, max],
                   "bandwidth": null | {"bytes_per_s", "x": [x0, x1], "y": [y0, y1], "label"},
                   "ceilings": [{"flops_per_s", "dtypes": [...], "ridge" (null without a
                                 bandwidth), "x": [x0, x1], "label", "used"}]}}

    AB = {"baseline": "eager", "runs_total": 1234, "notes": ["..."],
          "fused_ops": {variant: [op names eager ran that the variant fused away]},
          "variants": [{"name", "median_s", "iqr_s", "runs", "speedup", "speedup_low",
                        "speedup_high", "verdict" ("baseline" | "faster" | "slower" | "noise" |
                        "fallback" | "failed" | "mismatch"), "fallback_reason" (why torch.compile
                        ran eager's code, with a "fallback" verdict and no speed-up),
                        "paired_rounds", "correct" (bool | null), "max_abs_err",
                        "max_rel_err", "compile_s", "split": {"compute_s", "memory_s",
                        "other_s", "idle_s", "span_s"}, "kernel_count", "launches",
                        "graph_breaks": [...], "recompiles", "error", "error_line"}, ...]}

    COMPARISON = the comparison's own document: schema/comparison.py (check_comparison)
    RUN = a named cell's run, one row of its history: schema/history.py (RUN_ROWS), which also
        holds the history document (check_history) and the store's run files (check_run_file)
    TARGET = a target's plan: schema/plan.py (check_plan)

    Optional summary keys of a captured report (absent from loaded traces and older reports):
    "memory_before_bytes", "memory_increase_bytes" (peak - before: what one run needs),
    "memory_after_bytes", "run_spans_s" (each timed run), and
    TIMING = {"protocol": "single" | "sustained" | "burst", "clock": "cuda_events" |
              "host_clock", "warmup_runs", "warmup_s", "warmup_ended", "warmup_sm_clock_mhz":
              [before, after], "timed_runs", "min_s", "q1_s", "median_s", "q3_s", "max_s",
              "spread" (IQR / median), "sm_clock_mhz": [per timed run], "power_w": [...],
              "sensors" (why there are no clock readings, or null), "host_loop_s": [the host
              CPU's speed after each timed run: seconds of a fixed Python loop, clocks.py],
              "host_loop_fastest_s" (its fastest in the process), "host_slowdown" (the runs'
              median reading over the fastest: 1 = the host at its best), "findings": [{"kind":
              "warmup" | "levels" | "trend" | "spread" | "host" | "host_slow", "text"}]}

Tables use pandas' "split" orientation without the index; missing numbers are ``null``.
In a notebook output, numbers are spelled as a browser writes them back (``as_saved_by_browser``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, TypedDict

from .comparison import ComparisonType
from .history import RUN_ROWS
from .plan import PlanType
from .types import (
    LONGEST_S,
    Derived,
    Flag,
    ListOf,
    MapOf,
    Nullable,
    Number,
    Object,
    OneOf,
    Scalar,
    SchemaError,
    Table,
    Text,
    Type,
    check_depth,
    is_number,
)

SCHEMA_NAME = "jupyter_brrr.report"
SCHEMA_VERSION = 2
MIME_TYPE = "application/vnd.jupyter-brrr.report+json"

# The parts of the span, each with its summary key "<part>_s"; they sum to span_s.
# "communication" is the collectives' time not hidden behind other GPU work (reports written
# before it existed read it as 0).
SPLIT_PARTS = ("compute", "memory", "communication", "other", "idle")

# Bottleneck labels for ops and kernels.
BOUNDS = ("compute", "memory", "overhead", "other", "cpu")

SUMMARY_KEYS = (
    "span_s",  # wall-clock span of the GPU work of ONE run (the truth: CUDA events when timed;
    # a loaded trace: its median steady profiler step, or the whole trace where it marks none)
    "busy_s",  # time at least one kernel/copy ran, per run (interval union over streams)
    "compute_s",  # of busy_s: compute-bound kernels
    "memory_s",  # of busy_s: memory-bound kernels
    "communication_s",  # of busy_s: collectives with no other GPU work beside them (exposed)
    "other_s",  # of busy_s: copies, unmodelled and launch-sized kernels
    "idle_s",  # span_s - busy_s (- host collectives): the GPU ran nothing (overhead)
    "device",  # device name, e.g. "NVIDIA H200", or "CPU"
    "peaks",  # {"device", "source", "measured", "flops": {dtype: FLOP/s}, "bandwidth": B/s}
    "runs",  # {"warmup", "timed", "profiled", "total"}: how many times the code ran
    "peak_memory_bytes",  # the allocator's peak during the profiled run (or the trace's)
    "memory_capacity_bytes",
    "modelled_share",  # of the GPU time (sum of event durations): with a FLOP and byte model
)

# Written by a capture, not by a loaded trace: what the views read when present.
CAPTURE_SUMMARY_KEYS = (
    "memory_before_bytes",
    "memory_increase_bytes",
    "memory_after_bytes",
    "timing",
)

# Optional summary keys written since version 1 (older reports lack them):
#   communication_hidden_s   collectives' time overlapped by other GPU work
#   host_communication_s     of communication_s: collectives on the host (gloo) while the GPU
#                            ran nothing; idle_s = span_s - busy_s - host_communication_s
#   communication            {"backend", "link": {"name", "bytes_per_s", "source"} | null,
#                             "host_time_s", "collectives": [{"collective", "calls",
#                             "message_bytes", "ranks", "time_s", "algbw_bytes_per_s",
#                             "busbw_bytes_per_s", "link_fraction"}]} | null
#   estimated_share          of the GPU time: costed by an estimate (compiled kernels ...)
#   unmodelled_ops           [{"name", "share"}]: what launched the GPU time without a model


class Runs(TypedDict):
    """How many times the code ran (``summary["runs"]``); None where a trace does not say."""

    warmup: int | None
    timed: int | None
    profiled: int | None
    total: int | None


class Summary(TypedDict):
    """A report's ``summary``, as ``analysis.analyze`` builds it: every key, always (None where
    a figure does not apply). The schema's summary below (``_SUMMARY``, and so the browser's
    generated ``IRawSummary``) declares the same keys (a test checks). Reports written by older
    versions may lack the later keys."""

    span_s: float  # one run's span (see SUMMARY_KEYS)
    busy_s: float
    compute_s: float
    memory_s: float
    communication_s: float
    other_s: float
    idle_s: float
    overhead_kernels_s: float  # of busy_s: kernels under the launch floor
    idle_gap_count: int | None  # gaps between GPU work (None without GPU work)
    communication_hidden_s: float
    host_communication_s: float
    trace_span_s: float  # the span the trace itself shows
    span_source: str  # how span_s was measured: trace, trace_step, cuda_events_*, host_clock_*
    device: str
    gpu: bool  # whether GPU work was recorded
    peaks: dict[str, Any] | None  # Peaks.to_dict()
    runs: Runs
    steps: dict[str, Any] | None  # a loaded trace's profiler steps (steps.StepWindows.summary)
    warm: bool | None  # warm-up runs came first (None: a loaded trace does not say)
    peak_memory_bytes: float | None
    memory_capacity_bytes: float | None
    memory_before_bytes: float | None  # a capture's allocator counters (CAPTURE_SUMMARY_KEYS)
    memory_increase_bytes: float | None
    memory_after_bytes: float | None
    flops: float  # modelled FLOPs of one run
    bytes: float  # modelled bytes of one run
    achieved_flops_per_s: float | None
    achieved_bytes_per_s: float | None
    kernel_count: int
    copy_count: int
    short_kernel_count: int
    launch_count: int
    shapes_recorded: bool
    unmodelled_s: float
    modelled_share: float | None
    estimated_share: float | None
    unmodelled_ops: list[dict[str, Any]]  # [{"name", "share"}]
    communication: dict[str, Any] | None  # see the comment above OPS_COLUMNS
    math_mode: dict[str, Any]  # roofs.math_mode_summary
    wall_s: float | None  # a capture's profiled run on the host clock
    profiled_span_s: float | None
    run_spans_s: list[float] | None  # each timed run's span
    torch_version: str | None
    timing: dict[str, Any] | None  # TIMING


OPS_COLUMNS = (
    "name",  # aten::addmm
    "shapes",  # input shapes as text, "[[8, 64], [64, 64]]"
    "dtypes",  # input dtypes as text
    "category",  # matmul, conv, attention, elementwise, reduction, norm, softmax, copy, ...
    "module",  # nn.Module scope, when the trace has one
    "calls",
    "gpu_time_s",  # self GPU time: kernels this op launched itself (sums to kernel time)
    "total_gpu_time_s",  # including the kernels of its child ops
    "cpu_time_s",  # host time, including children
    "self_cpu_time_s",
    "kernels",  # kernel launches
    "flops",  # null where there is no cost model
    "bytes",  # minimum traffic: each input read once, each output written once
    "intensity",  # flops / bytes
    "flops_per_s",
    "bytes_per_s",
    "roof_fraction",  # achieved / attainable (min(peak, intensity * bandwidth))
    "bound",  # one of BOUNDS
    "dtype",  # compute dtype: fp32, bf16, ...
    "roof",  # the peak it is held against: its dtype's, or tf32 for fp32 matmuls/convs on TF32
    "roof_basis",  # how the roof was chosen: one of ROOF_BASES ("" with roof: no figures)
    "roof_flag",  # "" or why roof_fraction is above 105%: a model or peak mismatch, not achieved
    "cost_model",  # how flops and bytes were made: formula, shapes, estimate; "" where none
    "regime",  # "compute" | "memory": intensity against its roof's ridge ("" without figures)
    "reason",  # "" or one of REASONS: why an op is far under its roof (limits.py)
    "why",  # the evidence for the reason, in words, with its numbers
    "line",  # the line of the user's code that made the calls (--stack), "" otherwise
)

# What a recommendation is about (advice.py says how each is found and what it saves).
CAUSES = (
    "tile quantisation",
    "wave quantisation",
    "too little work",
    "fp32 without tensor cores",
    "bf16",
    "strided",
    "layout",
    "fusion",
    "unfused attention",
    "memory-bound gather",
    "launch overhead",
    "synchronisation",
    "host stall",
    "host copy",
    "communication",
)

# How a recommendation's saving was made (SAVING) and the verdicts of a fix tried (TRY).
SAVING_METHODS = ("replay", "additive bound")
TRY_VERDICTS = ("confirmed", "smaller than predicted", "refuted", "not applicable")

# Why an op is far under its roof (limits.py says how each is decided).
REASONS = (
    "fp32 without tensor cores",
    "layout",
    "tile quantisation",
    "too little work",
    "wave quantisation",
    "strided",
    "host copy",
    "below roof",
)

# How an op's roof was chosen: by its dtype; by the names of its kernels (TF32 or plain FP32
# units); by the math-mode settings recorded at capture; or assumed (PyTorch's defaults).
ROOF_BASES = ("dtype", "kernel", "setting", "assumed")

KERNEL_COLUMNS = (
    "name",
    "op",  # the op that launched it
    "category",
    "stream",
    "start_s",  # from the start of the span
    "dur_s",  # when aggregated: total time of "count" launches
    "count",  # 1 unless aggregated
    "flops",
    "bytes",
    "bound",
    "module",  # the nn.Module path of the op that owns it ("" where none; a pattern when
    # aggregated)
)

CPU_OP_COLUMNS = ("name", "tid", "start_s", "dur_s")

# The steps of a loaded trace with several ProfilerStep#N marks (steps.py says how each is made);
# the report's per-run figures are those of its median steady step.
STEP_COLUMNS = (
    "step",  # ProfilerStep#103
    "kind",  # one of STEP_KINDS
    "start_s",  # start of its window on the GPU timeline, from the first step's
    "span_s",  # its window: the time its GPU work took, or its host time where the GPU idled
    "busy_s",  # its GPU events' interval union
    "compute_s",
    "memory_s",
    "communication_s",  # collectives with no other GPU work beside them (0 in older reports)
    "other_s",
    "idle_s",  # span_s - busy_s (- host collectives)
    "kernels",  # GPU events it launched (kernels, copies, sets)
    "host_s",  # its range on the host (the CPU usually runs ahead of the GPU)
)
# The module tree (modules.py): one row per nn.Module path and each path above it.
MODULE_COLUMNS = (
    "path",  # model.transformer.h.3.mlp.c_fc; "" for the ops outside any module
    "parent",  # the path above it ("" at the top)
    "depth",  # 0 for a root (a variable), -1 for the ops outside any module
    "calls",  # op calls in this module and below
    "kernels",  # GPU events those calls own
    "self_gpu_time_s",  # GPU time of the ops made directly in this module
    "gpu_time_s",  # ... in this module and below
    "self_cpu_time_s",  # host self time of the ops made directly in it
    "cpu_time_s",  # ... in it and below
)

# "first": set apart (one-time costs land there); "partial": cut short (under half the GPU work
# of the median step); "steady": the rest, whose median is the report's run.
STEP_KINDS = ("first", "steady", "partial")

# --- a document in a notebook output ---------------------------------------------------------------
#
# JupyterLab and Notebook 7 hold a notebook's outputs as JavaScript values and save them with
# JSON.stringify, which has one kind of number: 2.0 comes back as 2. A document written with
# Python's floats (by nbclient, nbconvert or a script) would be rewritten on every save without
# a change to its values, and its diff would be every whole number of every report.

JS_EXPONENT_FROM = 1e21  # JSON.stringify writes whole numbers below this without an exponent


def as_saved_by_browser(value: Any) -> Any:
    """A JSON document (dicts, lists, numbers, text) with each number spelled as JavaScript's
    JSON.stringify writes it back: a whole-valued float below 1e21 as an integer (its shortest
    digits, as JavaScript pads them with zeros above 2**53), -0.0 as 0. Values do not change."""
    kind = type(value)
    if kind is list:  # most of a document: the rows of its tables
        return [
            item if type(item) in _NOT_RESPELLED else as_saved_by_browser(item) for item in value
        ]
    if kind is dict:
        return {key: as_saved_by_browser(item) for key, item in value.items()}
    if isinstance(value, dict):
        return {key: as_saved_by_browser(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_saved_by_browser(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < JS_EXPONENT_FROM:
        return int(value) if abs(value) <= 2**53 else int(Decimal(repr(value)))
    return value


# Values a browser writes back as they are (the type itself: a subclass takes the long way).
_NOT_RESPELLED = frozenset({str, int, bool, type(None)})


# --- checking a document -----------------------------------------------------------------------------
#
# What ``Report.from_json`` accepts, declared once with the types of ``schema.types``: each part
# of a document against its type. The change, history and target a named run carries are
# checked by their own kinds' schemas (``comparison``, ``history``, ``plan``).


_NULLABLE_NUMBER = Nullable(Number())
_TEXT, _FLAG = Text(), Flag()
_SECONDS = Number(low=0, high=LONGEST_S)
_MAYBE_TEXT, _MAYBE_FLAG = Nullable(_TEXT), Nullable(_FLAG)
_MAYBE_AMOUNT = Nullable(Number(low=0))
_MAYBE_COUNT = Nullable(Number(low=0, whole=True))

_RUNS = Object(
    {}, {key: _MAYBE_COUNT for key in ("warmup", "timed", "profiled", "total")}, title="Runs"
)
_PEAKS = Object(
    {},
    {
        "device": _MAYBE_TEXT,
        "source": _MAYBE_TEXT,
        "measured": _MAYBE_FLAG,
        "flops": MapOf(_MAYBE_AMOUNT),
        "bandwidth": _MAYBE_AMOUNT,
        "memory_bytes": _MAYBE_AMOUNT,
    },
    title="Peaks",
)
_MAYBE_SECONDS = Nullable(_SECONDS)
_TIMING = Object(
    {},
    {
        **{name: _MAYBE_TEXT for name in ("protocol", "clock", "warmup_ended", "sensors")},
        **{name: _MAYBE_COUNT for name in ("warmup_runs", "timed_runs")},
        **{
            name: _MAYBE_SECONDS
            for name in ("warmup_s", "min_s", "q1_s", "median_s", "q3_s", "max_s")
        },
        "host_loop_fastest_s": _MAYBE_SECONDS,
        **{name: _MAYBE_AMOUNT for name in ("spread", "host_slowdown")},
        **{
            name: ListOf(_MAYBE_AMOUNT)
            for name in ("warmup_sm_clock_mhz", "sm_clock_mhz", "power_w")
        },
        "host_loop_s": ListOf(_MAYBE_SECONDS),
        "findings": ListOf(Object({"kind": _TEXT}, {"text": _MAYBE_TEXT}, title="TimingFinding")),
    },
    title="Timing",
)
# Parts of the split that reports written before them lack (read as 0).
_LATER_PARTS = ("communication",)
_SUMMARY = Object(
    {
        **{
            f"{part}_s": _SECONDS
            for part in ("span", "busy", *SPLIT_PARTS)
            if part not in _LATER_PARTS
        },
        "device": _TEXT,
        "runs": _RUNS,
    },
    {
        **{f"{part}_s": _SECONDS for part in _LATER_PARTS},
        "communication_hidden_s": Nullable(_SECONDS),
        "host_communication_s": Nullable(_SECONDS),
        "modelled_share": _MAYBE_AMOUNT,
        "estimated_share": _MAYBE_AMOUNT,
        "peaks": Nullable(_PEAKS),
        "peak_memory_bytes": _MAYBE_AMOUNT,
        "memory_capacity_bytes": _MAYBE_AMOUNT,
        "gpu": _MAYBE_FLAG,
        "warm": _MAYBE_FLAG,
        "span_source": _MAYBE_TEXT,
        "trace_span_s": Nullable(_SECONDS),
        "flops": _MAYBE_AMOUNT,
        "bytes": _MAYBE_AMOUNT,
        "kernel_count": _MAYBE_COUNT,
        "copy_count": _MAYBE_COUNT,
        "short_kernel_count": _MAYBE_COUNT,
        "achieved_flops_per_s": _MAYBE_AMOUNT,
        "achieved_bytes_per_s": _MAYBE_AMOUNT,
        "unmodelled_s": Nullable(_SECONDS),
        **{
            name: _MAYBE_AMOUNT
            for name in ("memory_before_bytes", "memory_increase_bytes", "memory_after_bytes")
        },
        "timing": Nullable(_TIMING),
        # Written by the analysis besides (Summary above), which the browser reads too.
        "idle_gap_count": _MAYBE_COUNT,
        "launch_count": _MAYBE_COUNT,
        "overhead_kernels_s": _MAYBE_SECONDS,
        "shapes_recorded": _MAYBE_FLAG,
        "torch_version": _MAYBE_TEXT,
        "unmodelled_ops": ListOf(Object({}, {"name": _MAYBE_TEXT, "share": _MAYBE_AMOUNT})),
        "math_mode": Nullable(MapOf(Type())),
        "communication": Nullable(MapOf(Type())),
        "steps": Nullable(MapOf(Type())),
        "run_spans_s": Nullable(ListOf(_SECONDS)),
        "wall_s": _MAYBE_SECONDS,
        "profiled_span_s": _MAYBE_SECONDS,
    },
    title="Summary",
)
_ADVICE_OP = Object(
    {},
    {
        **{name: _MAYBE_TEXT for name in ("name", "shapes", "module", "line")},
        "calls": _MAYBE_COUNT,
        "time_s": Nullable(_SECONDS),
    },
    title="AdviceOp",
)
# A replayed saving below this share of the step is a rounding, not a saving: the fix cannot pay
# there, and its recommendation is ruled out (the report's "ruled_out", analysis/causal.py's
# cannot_pay), not numbered among the recommendations.
CANNOT_PAY_SHARE = 0.02
# What a recommendation saves, as its detail says it (the sentence), and how that was made:
# "replay" (the step's dependency replay, analysis/causal.py) or "additive bound" (advice.py's
# times added up: a report without a step graph, or a change the replay cannot model); what the
# prediction could not take into account. Older reports have only the sentence in "detail".
_SAVING = Object(
    {"text": _TEXT},
    {
        "seconds": _MAYBE_SECONDS,
        # Its likely range (analysis.spread.prediction_band); absent from older reports.
        **{name: _MAYBE_SECONDS for name in ("low_s", "high_s")},
        "predicted_by": Nullable(OneOf(*SAVING_METHODS)),
        "not_modelled": ListOf(_TEXT),
    },
    title="Saving",
)
# A fix that needs a code change (analysis/code_change.py): the code before and after, with the
# cell's own line as "before" where --stack recorded it ("line": where that is).
_CODE_CHANGE = Object({"before": _TEXT, "after": _TEXT}, {"line": _MAYBE_TEXT}, title="CodeChange")
# The fix tried (actions/fixes.py): its verdict against the saving predicted.
_TRY = Object(
    {"verdict": OneOf(*TRY_VERDICTS)},
    {
        "fix": _MAYBE_TEXT,
        "reason": _MAYBE_TEXT,
        **{
            name: _NULLABLE_NUMBER
            for name in (
                "predicted_s",
                "predicted_low_s",  # its likely range; absent from older reports
                "predicted_high_s",
                "measured_s",
                "measured_low_s",
                "measured_high_s",
            )
        },
        **{name: _MAYBE_SECONDS for name in ("base_s", "fixed_s")},
        "correct": _MAYBE_FLAG,
        "runs": _MAYBE_COUNT,
    },
    title="TryVerdict",
)
_RECOMMENDATION = Object(
    {"title": _TEXT, "detail": _TEXT},
    {
        "bottleneck": _MAYBE_TEXT,
        "share": _NULLABLE_NUMBER,
        # Written by the advice module (advice.py); absent from older reports.
        **{name: _MAYBE_TEXT for name in ("cause", "evidence", "fix")},
        "ops": ListOf(_ADVICE_OP),
        "saving_s": Nullable(_SECONDS),
        "speedup": _MAYBE_AMOUNT,
        "probably": _MAYBE_FLAG,
        # Written by the step's replay (analysis/causal.py): the additive bound the saving had,
        # how the saving was made, the changes replayed, what they could not model, and the fix
        # this one needs first.
        "saving_bound_s": _MAYBE_SECONDS,
        **{name: _MAYBE_TEXT for name in ("predicted_by", "changes", "requires")},
        "not_modelled": ListOf(_TEXT),
        "saving": _SAVING,
        "code_change": Nullable(_CODE_CHANGE),
        "try": Nullable(_TRY),
        # Why the replay rules it out (in the report's "ruled_out" list only).
        "ruled_out": _MAYBE_TEXT,
    },
    title="Recommendation",
)
_OPS_CELLS: dict[str, Type] = {
    "name": _TEXT,
    **{name: _MAYBE_TEXT for name in ("shapes", "dtypes", "category", "module")},
    **{name: _MAYBE_TEXT for name in ("bound", "dtype", "roof", "roof_basis", "roof_flag")},
    **{name: _MAYBE_TEXT for name in ("cost_model", "regime", "reason", "why", "line")},
    **{name: _MAYBE_COUNT for name in ("calls", "kernels")},
    **{
        name: _MAYBE_AMOUNT
        for name in (
            *("gpu_time_s", "total_gpu_time_s", "cpu_time_s", "self_cpu_time_s", "flops"),
            *("bytes", "intensity", "flops_per_s", "bytes_per_s", "roof_fraction"),
        )
    },
}
_KERNEL_CELLS: dict[str, Type] = {
    "name": _TEXT,
    **{name: _MAYBE_TEXT for name in ("op", "category", "bound", "module")},
    "stream": Scalar(),  # an id: a number, or text from older writers
    "start_s": _NULLABLE_NUMBER,
    "dur_s": _MAYBE_AMOUNT,
    "count": _MAYBE_COUNT,
    "flops": _MAYBE_AMOUNT,
    "bytes": _MAYBE_AMOUNT,
}
_CPU_OP_CELLS: dict[str, Type] = {
    "name": _TEXT,
    "tid": Scalar(),
    "start_s": _NULLABLE_NUMBER,
    "dur_s": _MAYBE_AMOUNT,
}
_STEP_CELLS: dict[str, Type] = {
    "step": _TEXT,
    "kind": _MAYBE_TEXT,
    "start_s": _NULLABLE_NUMBER,
    "kernels": _MAYBE_COUNT,
    **{
        name: Nullable(_SECONDS)
        for name in (
            *("span_s", "busy_s", "compute_s", "memory_s", "communication_s", "other_s"),
            *("idle_s", "host_s"),
        )
    },
}
_MODULE_CELLS: dict[str, Type] = {
    "path": _TEXT,
    "parent": _MAYBE_TEXT,
    "depth": Number(low=-1, whole=True),
    **{name: _MAYBE_COUNT for name in ("calls", "kernels")},
    **{
        name: Nullable(_SECONDS)
        for name in ("self_gpu_time_s", "gpu_time_s", "self_cpu_time_s", "cpu_time_s")
    },
}
SWEEP_POINT_COLUMNS = (
    *("size", "status", "span_s", "q1_s", "q3_s", "busy_s", "compute_s", "memory_s"),
    *("communication_s", "other_s", "idle_s", "flops_per_s", "bytes_per_s"),
    *("peak_memory_bytes", "memory_increase_bytes", "items", "items_per_s", "runs", "launches"),
    "error",
)
SWEEP_DOUBLING_COLUMNS = ("from_size", "to_size", "time_ratio", "per_doubling", "verdict", "why")
SWEEP_CAPACITY_COLUMNS = ("device", "capacity_bytes", "largest_size", "this_gpu")
SWEEP_VERDICTS = (
    *("overhead", "fixed", "transition", "compute", "memory", "saturated", "superlinear"),
)
MEMORY_CATEGORIES = (
    *("parameters", "gradients", "optimizer_state", "activations", "temporaries", "inputs"),
    *("autograd_detail", "unknown", "held_before"),
)
MEMORY_LARGEST_COLUMNS = ("bytes", "category", "op", "line", "time_s")
_SWEEP_POINT_CELLS: dict[str, Type] = {
    "size": Number(low=1, whole=True),
    **{name: _MAYBE_TEXT for name in ("status", "error")},
    **{name: _MAYBE_COUNT for name in ("runs", "launches")},
    **{name: _MAYBE_AMOUNT for name in SWEEP_POINT_COLUMNS[2:17]},
}
_SWEEP_DOUBLING_CELLS: dict[str, Type] = {
    **{name: Number(low=1, whole=True) for name in ("from_size", "to_size")},
    **{name: _MAYBE_AMOUNT for name in ("time_ratio", "per_doubling")},
    **{name: _MAYBE_TEXT for name in ("verdict", "why")},
}
_SWEEP_CAPACITY_CELLS: dict[str, Type] = {
    "device": _TEXT,
    "capacity_bytes": _MAYBE_AMOUNT,
    "largest_size": _MAYBE_COUNT,
    "this_gpu": _MAYBE_FLAG,
}
_MEMORY_LARGEST_CELLS: dict[str, Type] = {
    "bytes": _MAYBE_AMOUNT,
    **{name: _MAYBE_TEXT for name in ("category", "op", "line")},
    "time_s": _NULLABLE_NUMBER,
}
# One variant's span and its split (actions/ab.py), as the report's summary splits its span.
_AB_SPLIT = Object(
    {},
    {
        name: _MAYBE_AMOUNT
        for name in ("compute_s", "memory_s", "communication_s", "other_s", "idle_s", "span_s")
    },
    title="ABSplit",
)
_VARIANT = Object(
    {"name": _TEXT},
    {
        **{
            name: _MAYBE_AMOUNT
            for name in (
                *("median_s", "iqr_s", "speedup", "speedup_low", "speedup_high", "compile_s"),
                *("max_abs_err", "max_rel_err"),
            )
        },
        **{name: _MAYBE_COUNT for name in ("runs", "kernel_count", "launches", "recompiles")},
        "verdict": _MAYBE_TEXT,
        "correct": _MAYBE_FLAG,
        "split": Nullable(_AB_SPLIT),
        "graph_breaks": Nullable(ListOf(Type())),
        "error": _MAYBE_TEXT,
        "error_line": _MAYBE_TEXT,
        "fallback_reason": _MAYBE_TEXT,  # why torch.compile ran eager's code (verdict fallback)
    },
    title="ABVariant",
)
_AB = Object(
    {},
    {
        "variants": ListOf(_VARIANT),
        "notes": ListOf(_TEXT),
        "baseline": _MAYBE_TEXT,
        "fused_ops": MapOf(ListOf(_TEXT)),
        "runs_total": _MAYBE_COUNT,
    },
    title="AB",
)
_SWEEP_FIT = Object(
    {
        "kind": _TEXT,
        "per_item_bytes": Number(),
        "fixed_bytes": Number(),
        "max_miss": Number(low=0),
    },
    {
        "coefficients": ListOf(Number()),
        "capacity_bytes": _MAYBE_AMOUNT,
        "predicted_largest": _MAYBE_COUNT,
    },
    title="SweepFit",
)
_SWEEP_CONFIRMATION = Object(
    {"size": Number(low=1, whole=True)},
    {"fits": _MAYBE_FLAG, "peak_bytes": _MAYBE_AMOUNT, "predicted_peak_bytes": Nullable(Number())},
    title="SweepConfirmation",
)
_SWEEP = Object(
    {"points": Table(_SWEEP_POINT_CELLS, row="SweepPointRow", columns=SWEEP_POINT_COLUMNS)},
    {
        **{name: _MAYBE_TEXT for name in ("schema", "variable", "device", "stopped")},
        "version": _MAYBE_COUNT,
        "gpu": _MAYBE_FLAG,
        **{name: _MAYBE_COUNT for name in ("oom_at", "knee", "best", "runs_total")},
        "elapsed_s": _MAYBE_AMOUNT,
        "fit": Nullable(_SWEEP_FIT),
        "confirmation": Nullable(_SWEEP_CONFIRMATION),
        "doublings": Nullable(
            Table(_SWEEP_DOUBLING_CELLS, row="SweepDoublingRow", columns=SWEEP_DOUBLING_COLUMNS)
        ),
        "capacity": Nullable(
            Table(_SWEEP_CAPACITY_CELLS, row="SweepCapacityRow", columns=SWEEP_CAPACITY_COLUMNS)
        ),
        "guides": Nullable(MapOf(ListOf(ListOf(_NULLABLE_NUMBER)))),
        "notes": ListOf(_TEXT),
    },
    title="Sweep",
)
# The memory timeline (capture/memory.py): one series of bytes per category, stacked in the
# categories' order, over the same moments (seconds from the run's start), and the allocator's
# total at each moment.
_MEMORY_TIMELINE = Object(
    {},
    {
        "times_s": ListOf(Number(high=LONGEST_S)),
        "categories": ListOf(_TEXT),
        "bytes": ListOf(ListOf(Number())),
        "allocated": ListOf(Number()),
    },
    title="MemoryTimeline",
)
_MEMORY = Object(
    {"peak_bytes": _MAYBE_AMOUNT},
    {
        **{name: _MAYBE_TEXT for name in ("schema", "device")},
        "version": _MAYBE_COUNT,
        "gpu": _MAYBE_FLAG,
        **{
            name: _MAYBE_AMOUNT
            for name in ("allocator_peak_bytes", "before_bytes", "capacity_bytes")
        },
        # Always written as numbers (capture/memory.py): never null.
        "peak_time_s": Number(high=LONGEST_S),
        "unattributed_bytes": _NULLABLE_NUMBER,
        "at_peak": MapOf(Number()),
        "timeline": Nullable(_MEMORY_TIMELINE),
        "largest": Nullable(
            Table(_MEMORY_LARGEST_CELLS, row="MemoryLargestRow", columns=MEMORY_LARGEST_COLUMNS)
        ),
        "advice": ListOf(_TEXT),
        "notes": ListOf(_TEXT),
    },
    title="Memory",
)
# What the renderers draw (views/display.py's specs; see DISPLAY at the top).
_PAIR = ListOf(Number())  # [low, high] of an axis or a line
_ROOFLINE_BANDWIDTH = Object(
    {"bytes_per_s": Number(low=0), "x": _PAIR, "y": _PAIR, "label": _TEXT},
    title="RooflineBandwidth",
)
_ROOFLINE_CEILING = Object(
    {
        "flops_per_s": Number(low=0),
        "dtypes": ListOf(_TEXT),
        "ridge": _NULLABLE_NUMBER,
        "x": _PAIR,
        "label": _TEXT,
        "used": _FLAG,
    },
    title="RooflineCeiling",
)
_ROOFLINE = Object(
    {
        "x_range": _PAIR,
        "y_range": _PAIR,
        "bandwidth": Nullable(_ROOFLINE_BANDWIDTH),
        "ceilings": ListOf(_ROOFLINE_CEILING),
    },
    title="RooflineSpec",
)
_DISPLAY = Object({}, {"main_dtype": _MAYBE_TEXT, "roofline": Nullable(_ROOFLINE)}, title="Display")
_WHAT_IF_TARGET = Object(
    {
        **{name: _TEXT for name in ("id", "kind", "key", "label", "change")},
        "scalable": _FLAG,
        "factors": ListOf(Number(low=1)),
        "ratios": ListOf(Number(low=0)),
        "limit": Number(low=0),
    },
    {
        **{name: _MAYBE_TEXT for name in ("name", "shapes")},
        "time_s": _MAYBE_SECONDS,
        "share": Nullable(Number(low=0, high=1)),
    },
    title="WhatIfTarget",
)
_WHAT_IF = Object(
    {"predicted_by": _TEXT, "targets": ListOf(_WHAT_IF_TARGET)},
    {"not_modelled": ListOf(_TEXT), "max_factor": Number(low=1)},
    title="WhatIf",
)
REPORT = Object(
    {
        "schema": _TEXT,
        "version": Number(low=1, whole=True),
        "summary": _SUMMARY,
        "ops": Table(_OPS_CELLS, row="OpRow", columns=OPS_COLUMNS),
        "kernels": Table(
            _KERNEL_CELLS,
            {"aggregated": _MAYBE_FLAG, "total": _MAYBE_COUNT},
            row="KernelRow",
            columns=KERNEL_COLUMNS,
        ),
    },
    {
        "name": _MAYBE_TEXT,
        "source": _MAYBE_TEXT,
        "created": _MAYBE_TEXT,
        "notes": ListOf(_TEXT),
        "recommendations": ListOf(_RECOMMENDATION),
        # Those the step's replay says cannot pay here (analysis/causal.py), with "ruled_out".
        "ruled_out": ListOf(_RECOMMENDATION),
        "cpu_ops": Nullable(Table(_CPU_OP_CELLS, row="CpuOpRow", columns=CPU_OP_COLUMNS)),
        "steps": Nullable(Table(_STEP_CELLS, row="StepRow", columns=STEP_COLUMNS)),
        "modules": Nullable(Table(_MODULE_CELLS, row="ModuleRow", columns=MODULE_COLUMNS)),
        "ab": Nullable(_AB),
        # A named run's: each checked by its own kind's schema.
        "change": Nullable(ComparisonType()),
        "history": Nullable(RUN_ROWS),
        "target": Nullable(PlanType()),
        "sweep": Nullable(_SWEEP),
        "memory": Nullable(_MEMORY),
        # Written from the report's own tables by display.specs; recomputed when read.
        "display": Nullable(Derived(_DISPLAY)),
        # The step's dependency graph: checked where it is read (step_graph.StepGraph.from_dict).
        "graph": Nullable(MapOf(Type())),
        # The What-if tab's replayed curves (analysis/whatif.py).
        "what_if": Nullable(_WHAT_IF),
    },
    title="Report",
)


# The columns of each table whose cells are numbers: a reader makes them numeric (a column all
# null, or one an older writer left out, would be a column of objects that no sort can order).
NUMERIC_COLUMNS: dict[str, frozenset[str]] = {
    table: frozenset(name for name, kind in cells.items() if is_number(kind))
    for table, cells in (
        ("ops", _OPS_CELLS),
        ("kernels", _KERNEL_CELLS),
        ("cpu_ops", _CPU_OP_CELLS),
        ("steps", _STEP_CELLS),
        ("modules", _MODULE_CELLS),
    )
}


def check_report(doc: object) -> None:
    """Raise SchemaError, naming the first field that does not fit, unless ``doc`` is a report
    document this version reads (see the layout at the top of this module): each field of its
    type and size, and the span's parts adding up to the span."""
    check_depth(doc)
    REPORT.check(doc, "")
    assert isinstance(doc, dict)
    summary = doc["summary"]
    span = summary["span_s"]
    parts = sum(summary.get(f"{part}_s") or 0.0 for part in SPLIT_PARTS)
    if not math.isclose(parts, span, rel_tol=1e-3, abs_tol=1e-12):
        raise SchemaError(
            f"summary: the parts of the span ({' + '.join(f'{p}_s' for p in SPLIT_PARTS)} = "
            f"{parts:g}) do not add up to span_s ({span:g})"
        )
    if summary["busy_s"] > span * (1 + 1e-3) + 1e-12:
        raise SchemaError(f"summary.busy_s: {summary['busy_s']:g} s, more than span_s ({span:g})")
