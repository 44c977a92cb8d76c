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
- An op call's bound: "overhead" when its ideal roofline time is under ``LAUNCH_FLOOR_S`` (a
  launch costs more than the work), else "compute" when its intensity reaches the ridge point
  of its dtype, else "memory".
- The span splits into compute, memory and other GPU time by interval union with priority
  compute > memory > other, and idle time = span - busy: overlapping kernels count once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import costs, intervals
from .events import Trace
from .peaks import Peaks
from .schema import OPS_COLUMNS
from .tables import frame, group_codes, group_sums

# Below this ideal time a kernel cannot fill the GPU: a launch costs a few microseconds.
LAUNCH_FLOOR_S = 2e-6
# Gaps and kernels shorter than this are the signature of launch overhead.
SHORT_S = 10e-6

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


@dataclass
class Analysis:
    """Everything ``Report`` holds, before it is wrapped."""

    summary: dict
    ops: pd.DataFrame
    kernels: pd.DataFrame
    cpu_ops: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    recommendations: list[dict] = field(default_factory=list)


def analyze(
    trace: Trace,
    peaks: Peaks | None,
    *,
    span_s: float | None = None,
    span_source: str = "trace",
    runs: dict | None = None,
    peak_memory_bytes: float | None = None,
    memory_capacity_bytes: float | None = None,
    device: str | None = None,
    notes: list[str] | None = None,
) -> Analysis:
    """Analyse a trace. ``span_s`` (one run's span by CUDA events) replaces the trace's own span."""
    notes = list(notes or [])
    ops = _op_costs(trace.ops)
    gpu = trace.gpu_events
    gpu_work = len(gpu) > 0
    owner = _owners(gpu["op"].to_numpy(), ops)
    gpu["owner"] = owner
    ops["gpu_s"] = np.bincount(
        owner[owner >= 0], weights=gpu["dur_s"].to_numpy()[owner >= 0], minlength=len(ops)
    )
    ops["total_gpu_s"] = _total_gpu_time(gpu, ops)
    ops["kernel_count"] = np.bincount(owner[owner >= 0], minlength=len(ops))
    # Of each op call, only the bound is used (by the kernels); the op table has its own figures.
    bound = _roofline(
        ops["flops"].to_numpy(float),
        ops["bytes"].to_numpy(float),
        ops["gpu_s"].to_numpy(float),
        ops["dtype"].to_numpy(dtype=object),
        peaks,
    )["bound"]
    ops["bound"] = pd.Series(bound, index=ops.index, dtype=object)

    kernels = _kernel_table(gpu, ops)
    if gpu_work:
        origin = float(gpu["start_s"].min())
        trace_span = float(gpu["end_s"].max()) - origin
    else:
        origin = float(trace.ops["start_s"].min()) if len(trace.ops) else 0.0
        trace_span = float(trace.ops["end_s"].max()) - origin if len(trace.ops) else 0.0
    kernels["start_s"] -= origin

    split = _split(kernels, gpu_work, trace.ops)
    span = span_s if span_s is not None else trace_span
    if gpu_work and span < split["busy_s"]:
        # CUDA events bracket the launches, so they cannot see less than the kernels ran;
        # a smaller figure means the two clocks disagree by rounding: trust the busy time.
        span = split["busy_s"]
    summary = {
        "span_s": span,
        **split,
        "idle_s": max(span - split["busy_s"], 0.0),
        "trace_span_s": trace_span,
        "span_source": span_source if span_s is not None else "trace",
        "device": device or device_name(trace),
        "gpu": gpu_work,
        "peaks": peaks.to_dict() if peaks is not None else None,
        "runs": runs or {"warmup": 0, "timed": 0, "profiled": 1, "total": 1},
        "peak_memory_bytes": peak_memory_bytes
        if peak_memory_bytes is not None
        else _trace_peak_memory(trace),
        "memory_capacity_bytes": memory_capacity_bytes
        if memory_capacity_bytes is not None
        else _trace_capacity(trace),
        "flops": float(ops["flops"].sum()),
        "bytes": float(ops["bytes"].sum()),
        "kernel_count": len(trace.kernels),
        "copy_count": len(trace.copies),
        "short_kernel_count": int((trace.kernels["dur_s"] < SHORT_S).sum()),
        "launch_count": _launch_count(trace),
    }
    busy = summary["busy_s"]
    # No rate where no op has a model: 0 FLOP/s would read as a measurement.
    modelled = bool(ops["counted"].any())
    summary["achieved_flops_per_s"] = summary["flops"] / busy if busy > 0 and modelled else None
    summary["achieved_bytes_per_s"] = summary["bytes"] / busy if busy > 0 and modelled else None
    summary["unmodelled_s"] = float(kernels.loc[kernels["category"] == "unmodelled", "dur_s"].sum())

    op_table = _op_table(ops, peaks)
    over_roof = op_table[(op_table["category"] == "fused") & (op_table["roof_fraction"] > 1.0)]
    if len(over_roof):
        notes.append(
            f"{len(over_roof)} torch.compile (Triton) kernels show more than 100% of the roof: their "
            "bytes are estimates, the sum of their tensor arguments, and some read only part of one "
            "(a split, a gathered row)."
        )
    if gpu_work and peaks is None:
        notes.append(
            f"No peak figures are known for '{summary['device']}', so kernels are not classified as "
            "compute- or memory-bound. Pass peaks (jupyter_brrr.load(..., device='H100')) or run "
            "jupyter_brrr.measure_peaks() on that GPU."
        )
    if not gpu_work:
        notes.append(
            "No GPU work was recorded: the times shown are CPU op times."
            if len(trace.ops)
            else "No PyTorch ops were recorded: the code ran no torch operations."
        )
    return Analysis(
        summary=summary,
        ops=op_table,
        kernels=kernels,
        cpu_ops=_cpu_lane(trace.ops, origin),
        notes=notes,
        recommendations=recommend(summary, op_table),
    )


# Runtime calls that launch GPU work (CUDA and HIP names contain these).
_LAUNCH_CALLS = ("LaunchKernel", "GraphLaunch", "LaunchCooperativeKernel")


def _launch_count(trace: Trace) -> int:
    """Kernel and CUDA-graph launches: the host runtime calls that start GPU work."""
    # The pattern is tested once per distinct name: a trace repeats a few dozen calls.
    codes, distinct = pd.factorize(trace.runtime["name"].to_numpy(dtype=object))
    pattern = "|".join(_LAUNCH_CALLS)
    launches = pd.Series(distinct, dtype=object).str.contains(pattern, na=False).to_numpy(bool)
    return int(np.count_nonzero(launches[codes[codes >= 0]]))


# --- costs and ownership -------------------------------------------------------------------------


def _op_costs(trace_ops: pd.DataFrame) -> pd.DataFrame:
    ops = costs.add_costs(trace_ops)  # a copy with the cost columns
    modelled = ops["flops"].notna().to_numpy()
    # An op whose subtree holds another modelled op leaves the cost to it.
    parent = ops["parent"].to_numpy()
    has_modelled_below = np.zeros(len(ops), dtype=bool)
    above = parent[modelled]  # the ancestors of the modelled ops, one level at a time
    while len(above := above[above >= 0]):
        has_modelled_below[above] = True
        above = parent[above]
    counted = modelled & ~has_modelled_below
    ops["counted"] = counted
    for column in ("flops", "bytes"):
        ops[column] = np.where(counted, ops[column].to_numpy(), np.nan)
    return ops


def _owners(launching: np.ndarray, ops: pd.DataFrame) -> np.ndarray:
    """For each GPU event: the nearest op at or above its launcher that owns a cost, else the
    launcher itself (-1 when the launcher is unknown)."""
    counted = ops["counted"].to_numpy()
    parent = ops["parent"].to_numpy()
    found = launching.copy()
    climbing = found >= 0
    climbing[climbing] = ~counted[found[climbing]]
    while climbing.any():
        found[climbing] = parent[found[climbing]]
        climbing &= found >= 0
        climbing[climbing] = ~counted[found[climbing]]
    return np.where(found >= 0, found, launching)


def _total_gpu_time(gpu: pd.DataFrame, ops: pd.DataFrame) -> np.ndarray:
    """GPU time of the events launched by each op or any op below it."""
    total = np.zeros(len(ops))
    parent = ops["parent"].to_numpy()
    cursor = gpu["op"].to_numpy().copy()
    dur = gpu["dur_s"].to_numpy()
    while (alive := cursor >= 0).any():
        total += np.bincount(cursor[alive], weights=dur[alive], minlength=len(ops))
        cursor = np.where(alive, parent[np.maximum(cursor, 0)], -1)
    return total


def _roofline(
    flops: np.ndarray,
    nbytes: np.ndarray,
    seconds: np.ndarray,
    dtype: np.ndarray,
    peaks: Peaks | None,
    calls: np.ndarray | float = 1.0,
) -> dict[str, np.ndarray]:
    """Intensity, achieved rates, fraction of the roof and the bound label of each row (an op
    call, or ``calls`` calls of one op)."""
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
        codes, distinct = pd.factorize(dtype)
        # Code -1, a missing dtype, is looked up as no dtype, like "".
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


def _kernel_table(gpu: pd.DataFrame, ops: pd.DataFrame) -> pd.DataFrame:
    owner = gpu["owner"].to_numpy()

    def of_owner(column: str, missing: object) -> np.ndarray:
        """The owner op's value for each GPU event; ``missing`` where no op launched it (a
        CUDA graph replay launches kernels with no op around them)."""
        return np.append(ops[column].to_numpy(), missing)[owner]  # owner -1: the last

    category = of_owner("category", "")
    bound = of_owner("bound", "other")
    counted = of_owner("counted", False)
    category[~counted] = "unmodelled"
    bound[~counted] = "other"
    names = gpu["name"].to_numpy(dtype=object)
    # Pattern tests on the distinct names only: a trace repeats a few hundred kernel names.
    codes, distinct = pd.factorize(names)
    distinct = pd.Series(distinct, dtype=object)
    is_comm = distinct.str.lower().str.contains("|".join(_COMMUNICATION)).to_numpy()[codes]
    host_copy = (gpu["kind"] == "memcpy").to_numpy() & distinct.str.contains(
        "|".join(_HOST_COPY_MARKERS)
    ).to_numpy()[codes]
    category[is_comm] = "communication"
    category[host_copy] = "host copy"
    bound[is_comm | host_copy] = "other"
    # An op's cost is shared among its kernels by their share of its GPU time.
    dur = gpu["dur_s"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        share = dur / of_owner("gpu_s", np.nan).astype(float)
    flops = np.where(counted, of_owner("flops", np.nan).astype(float) * share, np.nan)
    nbytes = np.where(counted, of_owner("bytes", np.nan).astype(float) * share, np.nan)
    start = gpu["start_s"].to_numpy()
    columns = {
        "name": names,
        "op": of_owner("name", ""),
        "category": category,
        "stream": gpu["stream"].to_numpy(),
        "device": gpu["device"].to_numpy(),
        "kind": gpu["kind"].to_numpy(),
        "start_s": start,
        "dur_s": dur,
        "count": 1,
        "flops": flops,
        "bytes": nbytes,
        "bound": bound,
        "op_row": owner,
    }
    order = np.argsort(start, kind="stable")  # time order, as sort_values would, for less
    return frame({name: v[order] if np.ndim(v) else v for name, v in columns.items()})


# --- the split -------------------------------------------------------------------------------------


def _split(kernels: pd.DataFrame, gpu_work: bool, trace_ops: pd.DataFrame) -> dict:
    if not gpu_work:
        top = trace_ops[trace_ops["parent"] < 0]
        busy = intervals.union_length(top["start_s"].to_numpy(), top["end_s"].to_numpy())
        return {
            "busy_s": busy,
            "compute_s": 0.0,
            "memory_s": 0.0,
            "other_s": busy,
            "overhead_kernels_s": 0.0,
        }
    start = kernels["start_s"].to_numpy()
    end = start + kernels["dur_s"].to_numpy()
    bound = kernels["bound"].to_numpy()
    compute = bound == "compute"
    roofline_bound = compute | (bound == "memory")
    busy = intervals.union_length(start, end)
    compute_s = intervals.union_length(start[compute], end[compute])
    compute_or_memory = intervals.union_length(start[roofline_bound], end[roofline_bound])
    overhead = bound == "overhead"
    return {
        "busy_s": busy,
        "compute_s": compute_s,
        "memory_s": compute_or_memory - compute_s,
        "other_s": busy - compute_or_memory,
        # Part of other_s: kernels too small for their bound to matter (launch-sized).
        "overhead_kernels_s": float(kernels.loc[overhead, "dur_s"].sum()),
        "idle_gap_count": int(np.sum(intervals.gaps(start, end) > 0)),
    }


# --- the op table ----------------------------------------------------------------------------------


def _op_table(ops: pd.DataFrame, peaks: Peaks | None) -> pd.DataFrame:
    """One row per op name and input shapes, summed over calls."""
    codes, first = group_codes(ops["name"], ops["shapes"], ops["dtypes"])
    groups = len(first)

    def first_of(column: str) -> np.ndarray:
        return ops[column].to_numpy(dtype=object)[first]

    def first_text(column: str) -> np.ndarray:
        """First values, "" where missing: filled on the groups only, not on every op."""
        values = first_of(column)
        values[pd.isna(values)] = ""
        return values

    def total(column: str) -> np.ndarray:
        return np.bincount(codes, weights=ops[column].to_numpy(float), minlength=groups)

    kernels = np.bincount(codes, weights=ops["kernel_count"], minlength=groups)
    table = {
        "name": first_of("name"),
        "shapes": first_of("shapes"),
        "dtypes": first_of("dtypes"),
        "category": first_text("category"),
        "module": first_of("module"),
        "calls": np.bincount(codes, minlength=groups),
        "gpu_time_s": total("gpu_s"),
        "total_gpu_time_s": total("total_gpu_s"),
        "cpu_time_s": total("dur_s"),
        "self_cpu_time_s": total("self_cpu_s"),
        "kernels": kernels.astype(np.int64),
        "flops": group_sums(codes, ops["flops"], groups),
        "bytes": group_sums(codes, ops["bytes"], groups),
        "dtype": first_text("dtype"),
    }
    table |= _roofline(
        table["flops"],
        table["bytes"],
        table["gpu_time_s"],
        table["dtype"],
        peaks,
        calls=table["calls"].astype(float),
    )
    # Built once, with the columns in the schema's order.
    ops_table = frame({name: table[name] for name in OPS_COLUMNS})
    order = ["gpu_time_s", "total_gpu_time_s", "cpu_time_s"]
    return ops_table.sort_values(order, ascending=False, kind="stable", ignore_index=True)


def _cpu_lane(trace_ops: pd.DataFrame, origin: float) -> pd.DataFrame:
    # The four columns taken at the top-level rows, rather than the whole frame filtered.
    top = np.flatnonzero(trace_ops["parent"].to_numpy() < 0)
    return frame(
        {
            "name": trace_ops["name"].to_numpy(dtype=object)[top],
            "tid": _as_text(trace_ops["tid"].to_numpy()[top]),
            "start_s": trace_ops["start_s"].to_numpy()[top] - origin,
            "dur_s": trace_ops["dur_s"].to_numpy()[top],
        }
    )


def _as_text(values: np.ndarray) -> np.ndarray:
    """Values as Python strings, as ``astype(str)`` writes them. Integers (thread ids: a few,
    over thousands of ops) are converted once per distinct value."""
    if values.dtype.kind in "iu":
        distinct, codes = np.unique(values, return_inverse=True)
        return distinct.astype(str).astype(object)[codes]
    return values.astype(str).astype(object)


# --- device facts from the trace ------------------------------------------------------------------


def device_name(trace: Trace) -> str:
    """The name of the GPU most kernels ran on, from the trace's device properties."""
    if not len(trace.kernels) and not len(trace.copies):
        return "CPU"
    used = pd.concat([trace.kernels["device"], trace.copies["device"]]).mode()
    device_id = int(used.iloc[0]) if len(used) else 0
    for props in trace.devices:
        if props.get("id") == device_id and props.get("name"):
            return str(props["name"])
    return str(trace.devices[0].get("name", "unknown GPU")) if trace.devices else "unknown GPU"


def _trace_capacity(trace: Trace) -> float | None:
    memory = [p.get("totalGlobalMem") for p in trace.devices if p.get("totalGlobalMem")]
    return float(memory[0]) if memory else None


def _trace_peak_memory(trace: Trace) -> float | None:
    on_gpu = trace.memory[pd.to_numeric(trace.memory["device"], errors="coerce") >= 0]
    return float(on_gpu["allocated_bytes"].max()) if len(on_gpu) else None


# --- advice ---------------------------------------------------------------------------------------


def amdahl(share: float, factor: float) -> float:
    """Overall speed-up when a part with this share of the time gets ``factor`` times faster."""
    return 1.0 / ((1.0 - share) + share / factor)


def what_if(summary: dict, ops: pd.DataFrame, factors: tuple[float, ...] = (2, 10)) -> pd.DataFrame:
    """Amdahl projections for each part of the span and for the top ops by GPU time (by self
    CPU time in a report without GPU work)."""
    span = summary["span_s"]
    parts = [
        ("category", name, summary[f"{name}_s"]) for name in ("compute", "memory", "other", "idle")
    ]
    key = "gpu_time_s" if summary.get("gpu") else "self_cpu_time_s"
    top = ops.nlargest(5, key) if len(ops) else ops
    parts += [("op", f"{r.name} {r.shapes}".strip(), getattr(r, key)) for r in top.itertuples()]
    rows = []
    for kind, name, seconds in parts:
        # Host op times of a profiled run can exceed an unprofiled span: a share is at most 1.
        share = min(seconds / span, 1.0) if span > 0 else 0.0
        row = {"kind": kind, "part": name, "time_s": seconds, "share": share}
        for factor in factors:
            row[f"speedup_at_{factor:g}x"] = amdahl(share, factor)
            row[f"span_at_{factor:g}x_s"] = span / amdahl(share, factor)
        row["limit"] = 1.0 / (1.0 - share) if share < 1 else float("inf")
        rows.append(row)
    return pd.DataFrame(rows)


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def recommend(summary: dict, ops: pd.DataFrame) -> list[dict]:
    """Plain-language advice tied to the three bottlenecks, biggest share first."""
    span = summary["span_s"]
    if not summary["gpu"] or span <= 0:
        return []
    advice = []
    idle = summary["idle_s"] / span
    if idle >= 0.2:
        short = summary["short_kernel_count"]
        advice.append(
            {
                "bottleneck": "overhead",
                "share": idle,
                "title": f"The GPU is idle {_percent(idle)} of the span",
                "detail": (
                    f"The GPU waits for the CPU between {summary['kernel_count']:,} kernels "
                    f"({short:,} shorter than {SHORT_S * 1e6:.0f} us): launch and Python overhead. "
                    "Try CUDA Graphs or torch.compile(mode='reduce-overhead'), or give each launch "
                    f"more work (a larger batch). At best this removes {_percent(idle)} of the time: "
                    f"up to {1 / max(1 - idle, 1e-9):.1f}x."
                ),
            }
        )
    memory = summary["memory_s"] / span
    if memory >= 0.1:
        top = ops[ops["bound"] == "memory"].nlargest(3, "gpu_time_s")
        names = ", ".join(top["name"].astype(str).unique()[:3])
        bandwidth = summary.get("achieved_bytes_per_s")
        advice.append(
            {
                "bottleneck": "memory",
                "share": memory,
                "title": f"Memory-bound kernels take {_percent(memory)} of the span",
                "detail": (
                    f"They wait on device memory, not arithmetic (largest: {names}). Move fewer bytes: "
                    "fuse elementwise and normalisation ops with torch.compile, keep activations in "
                    "bf16, use fused attention (scaled_dot_product_attention)."
                    + (
                        f" Achieved over all work: {bandwidth / 1e12:.2f} TB/s."
                        if bandwidth
                        else ""
                    )
                ),
            }
        )
    compute = summary["compute_s"] / span
    if compute >= 0.1:
        top = ops[ops["bound"] == "compute"].nlargest(3, "gpu_time_s")
        fraction = top["roof_fraction"].dropna()
        names = ", ".join(top["name"].astype(str).unique()[:3])
        advice.append(
            {
                "bottleneck": "compute",
                "share": compute,
                "title": f"Compute-bound kernels take {_percent(compute)} of the span",
                "detail": (
                    f"The arithmetic units are the limit (largest: {names}"
                    + (f", at {_percent(float(fraction.iloc[0]))} of peak" if len(fraction) else "")
                    + "). Use lower precision on tensor cores (bf16, or TF32 for float32 matmuls via "
                    "torch.set_float32_matmul_precision('high')), shapes that are multiples of 8/64, "
                    "or less arithmetic (a better algorithm)."
                ),
            }
        )
    other = summary["other_s"] / span
    if other >= 0.2:
        advice.append(
            {
                "bottleneck": "other",
                "share": other,
                "title": f"Other GPU work takes {_percent(other)} of the span",
                "detail": (
                    "Copies, communication, launch-sized kernels and kernels without a cost model "
                    f"(unmodelled: {summary['unmodelled_s'] * 1e3:.2f} ms). Look at the top kernels "
                    "in the operator table; host-device copies can often be avoided or overlapped "
                    "(pin_memory, non_blocking=True)."
                ),
            }
        )
    return sorted(advice, key=lambda a: -a["share"])
