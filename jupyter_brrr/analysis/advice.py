"""Advice from the evidence: what to change, on which ops, and how much it can save at best.

Each recommendation rests on numbers the trace holds, names the ops (with their shapes and
modules) it is about, and is made only where its evidence is there: no "use bf16" for bf16 code,
no fused attention without an attention, TF32 only where float32 ran on the plain FP32 units.
They are ranked by the time each can save at best (Amdahl: the share it removes bounds the
speed-up at ``1 / (1 - share)``), and each says that bound. "Probably" marks an inference.

How each saving is made (``window``: the GPU span of the trace, plus the host's lead-in before
its first GPU work when that lies outside the span; shares are of the window, seconds are shares
of the report's span, which may come from unprofiled runs):

- per-op causes (``limits``): the op's time above its ideal time at the roof it would reach once
  fixed: ``fp32 without tensor cores`` against the TF32 roof, ``bf16`` (float32 already on TF32)
  against the bf16 roof, ``tile quantisation`` and ``strided`` against its own roof, ``wave
  quantisation`` its time times the wave inefficiency, ``layout`` the transposition kernels' time;
  ``too little work`` (many calls of one small GEMM) the calls' time above one batched GEMM at the
  roof, plus the idle gaps before their kernels (one launch instead of many).
- ``fusion``: runs of memory-bound elementwise kernels on tensors of one size, back to back on a
  stream (pointwise ops and the copies Inductor fuses with them, not library calls such as an
  FFT): their time above what one fused kernel must move (the run's first inputs read, its last
  output written; what one op writes and the next reads stays on chip).
- ``unfused attention``: a softmax over [..., L, S] scores between the two batched matmuls of
  Q K^T and P V: their time above a fused kernel's FLOPs at the roof (the L x S scores never
  reach memory).
- ``memory-bound gather``: an embedding lookup whose [B, L, D] output is only summed or averaged
  over L: the reduction's pass over that output, which ``embedding_bag`` does not make (it still
  gathers every row, and on the H200 its kernel gathers random rows no faster than the lookup's:
  bench/RESULTS.md, so the lookup's own time is not counted as saved).
- idle time, gap by gap on the GPU timeline, by what the launching thread did meanwhile:
  ``synchronisation`` the part of a gap after a synchronising call (``cudaStreamSynchronize``...:
  ``.item()``, ``.cpu()``, ``torch.cuda.synchronize()``) up to the time that call waited (without
  it, the host would have done this gap's work while the GPU still ran); ``host stall`` the rest of
  the gap where the host ran stretches of CPU work of ``STALL_MIN_S`` or more (CPU ops, or time in
  no torch op: data loading, Python; before the first GPU work, time in no torch op only beside
  CPU ops there: alone it is the run's own start, the profiler's and the first launch's);
  ``launch overhead`` what remains (launches and short Python
  between them), named after the op whose kernel ended the gap.
- ``host copy``: copies between host and device, the time no other GPU work overlapped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..costs.peaks import Peaks
from ..costs.roofs import ROOF_TOLERANCE
from ..schema.report import CAUSES
from ..trace import intervals
from ..trace.frames import factorize_objects
from .limits import GEMV_WHY

__all__ = ["CAUSES", "Evidence", "recommend"]

# The bottleneck of the three (and "other") each cause belongs to, for the views' colours.
_BOTTLENECK = {
    "tile quantisation": "compute",
    "wave quantisation": "compute",
    "too little work": "compute",
    "fp32 without tensor cores": "compute",
    "bf16": "compute",
    "strided": "memory",
    "layout": "memory",
    "fusion": "memory",
    "unfused attention": "memory",
    "memory-bound gather": "memory",
    "launch overhead": "overhead",
    "synchronisation": "overhead",
    "host stall": "overhead",
    "host copy": "other",
    "communication": "communication",
}

# The op-table columns the advice reads.
_ROW_COLUMNS = (
    *("name", "shapes", "category", "module", "line", "calls", "kernels", "gpu_time_s"),
    *("total_gpu_time_s", "flops", "bytes", "dtype", "roof", "roof_fraction", "regime"),
    *("reason", "why"),
)
# A stretch of host work without launches this long is a stall, not launch overhead.
STALL_MIN_S = 50e-6
# Below this share of the window a recommendation is not worth the reader's time.
MIN_SHARE = 0.05
MAX_RECOMMENDATIONS = 8
# A run of elementwise kernels on tensors smaller than this is launch-bound, not traffic-bound.
_FUSION_MIN_ELEMENTS = 1 << 16
# Calls of one small GEMM worth batching.
_BATCH_MIN_CALLS = 4
_SYNC_CALL = re.compile(r"Synchronize|^cu(da)?Memcpy$|^cuMemcpyDtoH|^hipMemcpy$")
_HOST_COPY = re.compile(r"HtoD|DtoH|Host|Pageable|Pinned")
_COLLECTIVE = re.compile(
    r"^(c10d::|gloo:|nccl:|record_param_comms)|all_?reduce|all_?gather|reduce_?scatter",
    re.IGNORECASE,
)
_ELEMENTWISE = ("elementwise", "copy")
# Pads: Inductor folds a pad into the pointwise op next to it (the consumer reads the unpadded
# input through an index, a reflection's included), so a pad joins the run beside it whatever
# the sizes (its output is larger than its input; an STFT's window product reads its frames).
_PAD_OPS = frozenset(
    {
        *("aten::pad", "aten::constant_pad_nd", "aten::_pad_circular"),
        *("aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d"),
        *("aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d"),
    }
)
# The ops of the "copy" category (no FLOPs, no pointwise tag) that Inductor fuses with the
# elementwise ops around them; the others there are library calls with kernels of their own
# (cuFFT's aten::_fft_r2c, sorts, scans, indexing), no candidates for fusion.
_FUSIBLE_COPIES = frozenset(
    {
        *("aten::copy_", "aten::clone", "aten::_to_copy", "aten::contiguous", "aten::fill_"),
        *("aten::zero_", "aten::zeros_like", "aten::ones_like", "aten::full_like", "aten::cat"),
        *("aten::repeat", "aten::where", "aten::masked_fill"),
        *_PAD_OPS,
    }
)
_GEMM = ("aten::bmm", "aten::matmul", "aten::baddbmm")
_LAYER_OPS = ("aten::addmm", "aten::linear", "aten::_addmm_activation", "aten::baddbmm")
_REDUCE_OVER = ("aten::sum", "aten::mean")
_SCALE_OPS = ("aten::div", "aten::mul", "aten::masked_fill", "aten::add", "aten::native_dropout")


@dataclass
class Evidence:
    """What the advice reads, as the analysis has it.

    ``gpu``: every GPU event (kernels first, then copies and sets), in trace time: ``name``,
    ``kind``, ``start_s``, ``end_s``, ``dur_s``, ``stream``, ``op`` (the launching call), ``row``
    (its op-table row, -1: none), ``bytes`` (copies). ``calls``: the op calls' ``name``,
    ``parent``, ``start_s``, ``end_s``, ``pid``, ``tid``, ``total_gpu_s``. ``runtime``: the
    runtime calls (``name``, ``start_s``, ``end_s``, ``pid``, ``tid``).
    """

    summary: Mapping
    ops: Mapping[str, np.ndarray]  # the op table's columns
    facts: Mapping[str, np.ndarray]  # per op-table row: dims, transpose_s, wave_efficiency...
    peaks: Peaks | None
    gpu: Mapping[str, np.ndarray]
    calls: Mapping[str, np.ndarray]
    runtime: pd.DataFrame
    span_given: bool


def recommend(evidence: Evidence) -> list[dict]:
    """The recommendations, largest saving first (see the module docstring)."""
    summary = evidence.summary
    span = float(summary.get("span_s") or 0.0)
    if not summary.get("gpu") or span <= 0 or not len(evidence.gpu["start_s"]):
        return []
    context = _Context(evidence)
    found: list[dict] = []
    for make in (
        _per_op,
        _fusion,
        _attention,
        _gather,
        _host_copies,
        _communication,
        _idle,
    ):
        found += make(context)
    kept = [item for item in found if item["share"] >= MIN_SHARE]
    kept.sort(key=lambda item: -item["saving_s"])
    return kept[:MAX_RECOMMENDATIONS]


class _Context:
    """The evidence and what several detectors share: the window, the op rows as dicts, the
    idle gaps and their attribution."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.summary = evidence.summary
        self.peaks = evidence.peaks
        table = evidence.ops
        columns = {c: table[c] for c in _ROW_COLUMNS if c in table}
        columns |= {key: values for key, values in evidence.facts.items() if key not in columns}
        self.n_rows = len(table["name"])
        # Rows as dicts, only those with GPU time (themselves or below): no advice is about
        # the others, and a big trace has thousands of them.
        with np.errstate(invalid="ignore"):
            active = np.flatnonzero(
                (np.asarray(table["gpu_time_s"], float) > 0)
                | (np.asarray(table["total_gpu_time_s"], float) > 0)
            )
        keys = list(columns)
        picked = [np.asarray(columns[key], dtype=object)[active] for key in keys]
        self.rows: dict[int, dict] = {
            row: dict(zip(keys, values, strict=True))
            for row, values in zip(active.tolist(), zip(*picked, strict=True), strict=True)
        }
        gpu = evidence.gpu
        self.first = float(np.min(gpu["start_s"]))
        self.last = float(np.max(gpu["end_s"]))
        trace_span = self.last - self.first
        span = float(evidence.summary["span_s"])
        self.span = span
        self.threads = _launching_threads(evidence)
        # Idle before the first GPU work: inside a span measured around the run, or the host's
        # lead-in before the trace's first GPU event (outside its GPU span).
        if evidence.span_given:
            self.lead = max(span - trace_span, 0.0)
            self.lead_outside = False
        else:
            host_start = self._host_start()
            self.lead = max(self.first - host_start, 0.0) if host_start is not None else 0.0
            self.lead_outside = self.lead > 0
        self.window = trace_span + self.lead
        self.claimed_rows: set[int] = set()
        self.gaps = _gaps(self)
        # The report's time: its span, and of a lead-in outside it the part that was a stall
        # or a wait (the rest, the first launch, every run has).
        outside = self.gaps["lead_claimed_s"] if self.lead_outside else 0.0
        self.total = span + outside
        # GPU time is the same with and without the profiler; host time is not: the idle time of
        # the profiled trace is scaled to the idle time of the span (unprofiled runs, when timed).
        busy = intervals.union_length(gpu["start_s"], gpu["end_s"])
        trace_idle = self.window - busy
        idle = float(evidence.summary.get("idle_s") or 0.0)
        self.host_scale = (
            min(1.0, idle / trace_idle) if evidence.span_given and trace_idle > 0 else 1.0
        )

    def _host_start(self) -> float | None:
        calls = self.evidence.calls
        mine = _on_threads(calls, self.threads) & (calls["parent"] < 0)
        return float(np.min(calls["start_s"][mine])) if mine.any() else None

    def seconds(self, trace_s: float, host: bool = False) -> float:
        """Trace seconds as the report's seconds: host time scaled to the span's idle time."""
        return max(trace_s, 0.0) * (self.host_scale if host else 1.0)

    def share(self, trace_s: float, host: bool = False) -> float:
        return min(self.seconds(trace_s, host) / self.total, 1.0) if self.total > 0 else 0.0

    def item(
        self,
        cause: str,
        title: str,
        evidence: str,
        fix: str,
        saving_trace_s: float,
        rows: list[int] | None = None,
        *,
        probably: bool = True,
        extra_ops: list[dict] | None = None,
    ) -> dict:
        """One recommendation; its saving is given in the trace's seconds."""
        host = _BOTTLENECK[cause] == "overhead"
        share = self.share(saving_trace_s, host)
        saving = share * self.total
        speedup = 1.0 / (1.0 - share) if share < 1 else math.inf
        notes = []
        if self.lead_outside and host:
            notes.append("with the host's time before the trace's first GPU work")
        if host and self.host_scale < 0.99:
            notes.append(
                f"the profiled run's idle time scaled to the timed runs' ({self.host_scale:.2f}x)"
            )
        qualified = f" ({'; '.join(notes)})" if notes else ""
        if host and self.host_scale < 0.99:
            evidence = f"In the profiled run: {evidence[0].lower()}{evidence[1:]}"
        bound = (
            f"At best this saves {_ms(saving)}, {_percent(share)} of the time{qualified}: up to "
            f"{speedup:.2f}x."
        )
        ops = [self.op_entry(row) for row in rows or []] + (extra_ops or [])
        return {
            "cause": cause,
            "bottleneck": _BOTTLENECK[cause],
            "title": title,
            "detail": f"{evidence} {fix} {bound}",
            "evidence": evidence,
            "fix": fix,
            "ops": ops,
            "saving_s": saving,
            "share": share,
            "speedup": speedup,
            "probably": probably,
            # The saving's sentence as a field, for the views (not found again in "detail").
            "saving": {
                "text": bound,
                "seconds": saving,
                "predicted_by": "additive bound",
                "not_modelled": [],
            },
        }

    def op_entry(self, row: int) -> dict:
        op = self.rows[row]
        return {
            "name": str(op["name"]),
            "shapes": str(op["shapes"]),
            "module": str(op.get("module") or ""),
            "line": str(op.get("line") or ""),
            "calls": int(op["calls"]),
            "time_s": float(op["gpu_time_s"]),
        }

    def named(self, row: int) -> str:
        """``aten::mm [[8192, 768], [768, 50257]] in model.lm_head``."""
        op = self.rows[row]
        where = f" in {op['module']}" if op.get("module") else ""
        line = f" ({op['line']})" if op.get("line") else ""
        return f"{op['name']} {op['shapes']}{where}{line}".replace("  ", " ")

    def ideal_s(self, row: int, roof: str | None = None, bytes_factor: float = 1.0) -> float:
        """The row's time at the roof (``roof``: another one than its own)."""
        op = self.rows[row]
        peaks = self.peaks
        if peaks is None:
            return math.nan
        key = roof or str(op["roof"] or "") or None
        return max(
            _number(op["flops"]) / peaks.flops_for(key),
            _number(op["bytes"]) * bytes_factor / peaks.bandwidth,
        )


# --- per-op causes --------------------------------------------------------------------------------


def _per_op(context: _Context) -> list[dict]:
    """Recommendations from the op table's reasons (``limits``), one per row (the few largest
    rows of one cause together)."""
    peaks = context.peaks
    if peaks is None:
        return []
    by_cause: dict[str, list[tuple[int, float]]] = {}
    for row, op in context.rows.items():
        reason = str(op.get("reason") or "")
        seconds = _number(op["gpu_time_s"])
        if not reason or not seconds > 0:
            continue
        saving = _row_saving(context, row, reason)
        if saving is not None and saving > 0:
            by_cause.setdefault(reason, []).append((row, saving))
    items = []
    for reason, found in by_cause.items():
        if reason == "too little work":
            items += _batch(context, found)
            continue
        found.sort(key=lambda item: -item[1])
        top = [row for row, _ in found[:3]]
        saving = sum(s for _, s in found)
        items.append(_per_op_item(context, reason, top, saving, len(found)))
    items += _bf16(context)
    return [item for item in items if item is not None]


def _row_saving(context: _Context, row: int, reason: str) -> float | None:
    op = context.rows[row]
    seconds = _number(op["gpu_time_s"])
    if reason == "fp32 without tensor cores":
        return seconds - context.ideal_s(row, "tf32")
    if reason in ("tile quantisation", "strided"):
        return seconds - context.ideal_s(row)
    if reason == "layout":
        return _number(op.get("transpose_s"))
    if reason == "wave quantisation":
        efficiency = _number(op.get("wave_efficiency"))
        return seconds * (1 - efficiency) if efficiency > 0 else None
    if reason == "too little work":
        return seconds - context.ideal_s(row)
    return None


def _per_op_item(
    context: _Context, reason: str, rows: list[int], saving: float, count: int
) -> dict | None:
    first = context.rows[rows[0]]
    more = f" (and {count - 1} more op{'s' if count > 2 else ''} like it)" if count > 1 else ""
    why = str(first.get("why") or "")
    named = context.named(rows[0])
    if reason == "fp32 without tensor cores":
        matmul = first["category"] == "matmul"
        settings = (context.summary.get("math_mode") or {}).get("settings") or {}
        recorded = (
            f" The capture recorded float32_matmul_precision = "
            f"'{settings.get('float32_matmul_precision')}'."
            if matmul and settings.get("float32_matmul_precision")
            else ""
        )
        fix = (
            "Allow TF32 tensor cores for float32 matmuls: "
            "torch.set_float32_matmul_precision('high') (TF32 keeps 10 bits of mantissa; "
            "check that the results still agree)."
            if matmul
            else "Allow TF32 tensor cores for float32 convolutions: "
            "torch.backends.cudnn.allow_tf32 = True (10 bits of mantissa)."
        )
        return context.item(
            reason,
            f"{first['name']} runs float32 on the plain FP32 units",
            f"{named}{more}: {why}{recorded}",
            fix,
            saving,
            rows,
            probably=False,
        )
    if reason == "tile quantisation":
        return context.item(
            reason,
            f"Pad {first['name']}'s odd dimension: it runs at "
            f"{_percent(_number(first['roof_fraction']))} of its roof",
            f"{named}{more}: {why}",
            "Pad that dimension (for a vocabulary: add unused rows to the embedding and output "
            "layer; for channels: pad the first layer's input) to the size named.",
            saving,
            rows,
        )
    if reason == "wave quantisation":
        return context.item(
            reason,
            f"{first['name']}: its last wave of tiles leaves most SMs idle",
            f"{named}{more}: {why}",
            "A batch or size whose tile count fills whole waves (a multiple of the SM count) "
            "uses the GPU fully; or accept it (it is a property of the shape).",
            saving,
            rows,
        )
    if reason == "layout":
        return context.item(
            reason,
            "Convolutions spend time converting between NCHW and NHWC",
            f"{named}{more}: {why}",
            "Use channels_last for the model and its input: "
            "model.to(memory_format=torch.channels_last), "
            "x = x.to(memory_format=torch.channels_last).",
            saving,
            rows,
            probably=False,
        )
    if reason == "strided":
        return context.item(
            reason,
            f"{first['name']} reads memory against its layout",
            f"{named}{more}: {why}",
            "Make the input contiguous once where it is created (or keep the tensor in the "
            "layout the op reads: store a transposed weight transposed), not in every step.",
            saving,
            rows,
        )
    return None


def _batch(context: _Context, found: list[tuple[int, float]]) -> list[dict]:
    """Many calls of one small GEMM: one batched call instead (its launches' gaps included)."""
    items = []
    back_to_back = _back_to_back(context)
    for row, saving in found:
        op = context.rows[row]
        calls = int(op["calls"])
        if op["category"] not in ("matmul", "conv", "attention") or calls < _BATCH_MIN_CALLS:
            continue
        # Calls made by different modules (layers, each with its weight), or interleaved with
        # other ops (a stack of layers), depend on each other: batching is no fix there.
        module = str(op.get("module") or "")
        if "*" in module or back_to_back.get(row, 0.0) < 0.75:
            continue
        # A layer's op (a bias and a weight: nn.Linear's addmm, a convolution) repeated back to
        # back is a stack of layers unless the calls' modules show one layer.
        if not module and (op["name"] in _LAYER_OPS or op["category"] == "conv"):
            continue
        gaps = context.gaps["launch_by_row"].get(row, 0.0)
        context.claimed_rows.add(row)
        per_kernel = _number(op["gpu_time_s"]) / max(int(op["kernels"]), 1)
        if str(op.get("why") or "").startswith(GEMV_WHY):
            # A matrix-vector product (a decode step): its calls read the weights for a few
            # rows each; more rows per call (more requests per step) share each read.
            items.append(
                context.item(
                    "too little work",
                    f"Batch the requests: the {calls:,} calls of {op['name']} {op['shapes']} "
                    "each read the weights for a few rows",
                    f"{context.named(row)}: {calls:,} calls, {per_kernel * 1e6:.3g} µs per "
                    f"kernel; {op.get('why') or ''} The GPU also idled {_ms(gaps)} waiting "
                    "for their launches.",
                    "Serve more requests per step (a larger decode batch, or continuous "
                    "batching): the weights are read once for all the rows of a call, so a call "
                    "of several times the rows takes about the same time.",
                    saving + gaps,
                    [row],
                )
            )
            continue
        items.append(
            context.item(
                "too little work",
                f"Batch the {calls:,} calls of {op['name']} {op['shapes']}",
                f"{context.named(row)}: {calls:,} calls of the same shape, "
                f"{per_kernel * 1e6:.3g} µs per kernel for {context.ideal_s(row) / calls * 1e6:.2g} "
                f"us of work each; {op.get('why') or ''} The GPU also idled "
                f"{_ms(gaps)} waiting for their launches.",
                "If the calls are independent (a loop over inputs that share a weight), make "
                "them one: stack the inputs (torch.cat / torch.stack) and run one matmul (or "
                "torch.bmm), so one launch fills the GPU.",
                saving + gaps,
                [row],
            )
        )
    return items


def _back_to_back(context: _Context) -> dict[int, float]:
    """Per op-table row: the share of its kernels followed, on their stream, by another kernel
    of the same row (calls in a loop over inputs, not layers between other ops)."""
    gpu = context.evidence.gpu
    kernel = np.flatnonzero(gpu["kind"] == "kernel")
    order = kernel[np.lexsort((gpu["start_s"][kernel], gpu["stream"][kernel]))]
    rows, streams = gpu["row"][order], gpu["stream"][order]
    same = (rows[1:] == rows[:-1]) & (streams[1:] == streams[:-1]) & (rows[:-1] >= 0)
    followed = np.bincount(rows[:-1][same], minlength=context.n_rows)
    total = np.bincount(rows[rows >= 0], minlength=context.n_rows)
    return {row: (followed[row] + 1) / total[row] for row in np.flatnonzero(total).tolist()}  # pyright: ignore[reportReturnType]  # numpy/pandas stubs: loose scalar types


def _bf16(context: _Context) -> list[dict]:
    """float32 matmuls and convolutions already on TF32 tensor cores: bf16 doubles their roof."""
    peaks = context.peaks
    if peaks is None or peaks.roof_key("bf16") != "bf16":
        return []
    rows = [
        row
        for row, op in context.rows.items()
        if op["category"] in ("matmul", "conv")
        and op["dtype"] == "fp32"
        and op["roof"] == "tf32"
        and op.get("regime") == "compute"
        and _number(op["roof_fraction"]) <= ROOF_TOLERANCE
        and _number(op["gpu_time_s"]) > 0
    ]
    if not rows:
        return []
    saving = sum(
        _number(context.rows[r]["gpu_time_s"]) - context.ideal_s(r, "bf16", 0.5) for r in rows
    )
    rows.sort(key=lambda r: -_number(context.rows[r]["gpu_time_s"]))
    first = context.rows[rows[0]]
    ratio = peaks.flops_for("bf16") / peaks.flops_for("tf32")
    return [
        context.item(
            "bf16",
            "float32 matmuls on TF32: bf16 has twice the roof",
            f"{context.named(rows[0])}"
            + (f" (and {len(rows) - 1} more)" if len(rows) > 1 else "")
            + f" already run on TF32 tensor cores (float32) at "
            f"{_percent(_number(first['roof_fraction']))} "
            f"of that roof; bf16's roof is {ratio:.1f}x higher and its bytes half.",
            "Run them under torch.autocast('cuda', dtype=torch.bfloat16) (8 bits of mantissa: "
            "check the results, keep reductions and the loss in float32).",
            saving,
            rows[:3],
        )
    ]


# --- patterns across ops --------------------------------------------------------------------------


def _fusion(context: _Context) -> list[dict]:
    """Runs of memory-bound elementwise kernels on same-sized tensors, back to back."""
    gpu = context.evidence.gpu
    peaks = context.peaks
    if peaks is None:
        return []
    rows_info = _elementwise_rows(context)
    if not rows_info:
        return []
    kernel = np.flatnonzero(gpu["kind"] == "kernel")
    order = kernel[np.lexsort((gpu["start_s"][kernel], gpu["stream"][kernel]))]
    rows = gpu["row"][order]
    streams = gpu["stream"][order]
    numel = np.full(context.n_rows + 1, -1)  # the last: no row
    for row, info in rows_info.items():
        numel[row] = info["numel"]
    sizes = numel[rows]  # -1 where the kernel is not an elementwise op's
    eligible = sizes >= 0
    is_pad = np.zeros(context.n_rows + 1, dtype=bool)
    is_pad[[row for row in rows_info if context.rows[row]["name"] in _PAD_OPS]] = True
    padding = is_pad[rows]
    # A run goes on while the kernels are eligible, on one stream, on tensors of one size (or
    # one of the two is a pad, fused into its neighbour).
    one_size = (sizes[1:] == sizes[:-1]) | padding[1:] | padding[:-1]
    goes_on = eligible[1:] & eligible[:-1] & (streams[1:] == streams[:-1]) & one_size
    run = np.r_[0, np.cumsum(~goes_on)]
    run_length = np.bincount(run)
    chains: dict[tuple[int, ...], list[float]] = {}
    long_runs = np.flatnonzero(run_length >= 2)
    starts = np.searchsorted(run, long_runs)
    durations = gpu["dur_s"][order]
    for start, length in zip(starts.tolist(), run_length[long_runs].tolist(), strict=True):
        if not eligible[start]:
            continue
        signature = tuple(rows[start : start + length].tolist())
        chains.setdefault(signature, []).append(float(durations[start : start + length].sum()))
    if not chains:
        return []
    saving = 0.0
    best: tuple[float, tuple[int, ...]] | None = None
    count = 0
    for signature, times in chains.items():
        fused = _fused_bytes([rows_info[r] for r in signature]) / peaks.bandwidth
        here = sum(max(t - fused, 0.0) for t in times)
        saving += here
        count += len(times)
        if best is None or here > best[0]:
            best = (here, signature)
    assert best is not None
    signature = best[1]
    names = " -> ".join(str(context.rows[r]["name"]) for r in signature)
    first = context.rows[signature[0]]
    total = sum(sum(t) for t in chains.values())
    # A pad changes the tensor's size inside a run: say so rather than "of one size".
    padded = any(is_pad[r] for other in chains for r in other)
    sized = "on tensors of one size but for a pad's border" if padded else "on tensors of one size"
    return [
        context.item(
            "fusion",
            f"Fuse runs of elementwise ops: {names}"
            if count == 1
            else f"Fuse {count:,} runs of elementwise ops (largest: {names})",
            f"{count:,} run{'s' if count > 1 else ''} of memory-bound elementwise kernels back to "
            f"back {sized} take {_ms(total)}; the largest: {names} on "
            f"{first['shapes']}{' in ' + str(first['module']) if first.get('module') else ''}, "
            f"each kernel reading and writing the whole tensor. One fused kernel reads the "
            "inputs once and writes the result once.",
            "torch.compile the function (Inductor fuses elementwise chains into one kernel), or "
            "write the chain as one op where PyTorch has it (F.gelu, torch.addcmul...).",
            saving,
            # The largest run's ops first, then the other runs' (the saving counts them all).
            list(dict.fromkeys([*signature, *(r for other in chains for r in other)])),
        )
    ]


def _elementwise_rows(context: _Context) -> dict[int, dict]:
    info = {}
    for row, op in context.rows.items():
        if op["category"] not in _ELEMENTWISE or op.get("regime") != "memory":
            continue
        if op["category"] == "copy" and str(op["name"]) not in _FUSIBLE_COPIES:
            continue
        dims = _dims(op)
        if not dims:
            continue
        numel = max((math.prod(d) for d in dims if _is_shape(d)), default=0)
        calls = max(int(op["calls"]), 1)
        size = _dtype_bytes(str(op["dtype"]))
        if numel < _FUSION_MIN_ELEMENTS or not _number(op["bytes"]) > 0:
            continue
        info[row] = {"numel": numel, "bytes": _number(op["bytes"]) / calls, "out": numel * size}
    return info


def _fused_bytes(chain: list[dict]) -> float:
    """What one fused kernel must move: every op's traffic, less what each op writes and the
    next one reads back (kept on chip once fused)."""
    moved = sum(op["bytes"] for op in chain) - 2 * sum(op["out"] for op in chain[:-1])
    return max(moved, chain[-1]["out"] + chain[0]["out"])


def _attention(context: _Context) -> list[dict]:
    """softmax(Q K^T) V written as separate ops: the scores make a round trip through memory."""
    peaks = context.peaks
    if peaks is None:
        return []
    items = []
    for row, op in context.rows.items():
        if "softmax" not in str(op["name"]) or _number(op["gpu_time_s"]) <= 0:
            continue
        dims = _dims(op)
        scores = dims[0] if dims and _is_shape(dims[0]) else None
        if not scores or len(scores) < 3 or min(scores[-2:]) < 64:
            continue
        batch, length, keys = math.prod(scores[:-2]), scores[-2], scores[-1]
        products = [
            r
            for r, other in context.rows.items()
            if other["name"] in _GEMM
            and _number(other["gpu_time_s"]) > 0
            and _is_attention_gemm(_dims(other), batch, length, keys)
        ]
        if len(products) < 2:
            continue
        scaled = [
            r
            for r, other in context.rows.items()
            if other["name"] in _SCALE_OPS
            and (_dims(other) or [None])[0] == scores
            and _number(other["gpu_time_s"]) > 0
        ]
        rows = [row, *products, *scaled]
        total = sum(_number(context.rows[r]["gpu_time_s"]) for r in rows)
        flops = float(np.nansum([_number(context.rows[r]["flops"]) for r in products]))
        dtype = str(op["roof"] or op["dtype"] or "bf16")
        ideal = flops / peaks.flops_for(dtype)
        scores_bytes = math.prod(scores) * _dtype_bytes(str(op["dtype"]))
        context.claimed_rows.update(rows)
        if _inside_sdpa(context, row):
            items.append(
                context.item(
                    "unfused attention",
                    "scaled_dot_product_attention ran its unfused math path",
                    f"{context.named(row)} runs inside scaled_dot_product_attention's math "
                    f"fallback, with its batched matmuls: attention over {length:,} x {keys:,} "
                    f"scores, {scores_bytes / 1e6:,.0f} MB through memory; together {_ms(total)}.",
                    "PyTorch chose no fused backend for these inputs: use bf16/fp16 (not "
                    "float32), a head size that is a multiple of 8, a boolean or no attn_mask, "
                    "and check which backends allow them with "
                    "torch.nn.attention.sdpa_kernel(...).",
                    total - ideal,
                    rows,
                )
            )
            break
        items.append(
            context.item(
                "unfused attention",
                "Attention written by hand: use scaled_dot_product_attention",
                f"{context.named(row)} sits between batched matmuls of Q K^T and P V "
                f"({', '.join(dict.fromkeys(str(context.rows[r]['name']) for r in products))}): "
                f"attention over {length:,} x {keys:,} scores, {scores_bytes / 1e6:,.0f} MB "
                f"that go through memory at each of its {len(rows) - len(products) + 1} steps "
                f"({', '.join(dict.fromkeys(str(context.rows[r]['name']) for r in rows[:1] + rows[len(products) + 1 :]))} "
                f"and the matmuls); together {_ms(total)}.",
                "Call F.scaled_dot_product_attention(q, k, v) (with is_causal / attn_mask for "
                "masks): a fused kernel (flash, memory-efficient or cuDNN) keeps the scores on "
                "chip.",
                total - ideal,
                rows,
            )
        )
        break
    return items


def _inside_sdpa(context: _Context, row: int) -> bool:
    """Whether the calls of this row run inside scaled_dot_product_attention (its math path)."""
    calls = context.evidence.calls
    parent = calls["parent"]
    for call in np.flatnonzero(calls["row"] == row)[:8].tolist():
        above = parent[call]
        while above >= 0:
            if "scaled_dot_product_attention" in str(calls["name"][above]):
                return True
            above = parent[above]
    return False


def _is_attention_gemm(dims: list | None, batch: int, length: int, keys: int) -> bool:
    """Q K^T: [.., L, D] x [.., D, S]; P V: [.., L, S] x [.., S, D]."""
    if not dims or len(dims) < 2 or not all(_is_shape(d) and len(d) >= 3 for d in dims[:2]):
        return False
    a, b = dims[0], dims[1]
    if math.prod(a[:-2]) != batch or math.prod(b[:-2]) != batch:
        return False
    qk = a[-2] == length and b[-1] == keys and a[-1] == b[-2]
    pv = a[-2] == length and a[-1] == keys and b[-2] == keys
    return qk or pv


def _gather(context: _Context) -> list[dict]:
    """An embedding lookup summed or averaged over its bag: ``embedding_bag`` reads each row once
    and writes only the bags."""
    for row, op in context.rows.items():
        if op["name"] != "aten::embedding":
            continue
        dims = _dims(op)
        if not dims or len(dims) < 2 or not (_is_shape(dims[0]) and _is_shape(dims[1])):
            continue
        if len(dims[0]) != 2 or len(dims[1]) < 2:
            continue
        out = [*dims[1], dims[0][1]]
        reductions = [
            r
            for r, other in context.rows.items()
            if other["name"] in _REDUCE_OVER and (_dims(other) or [None])[0] == out
        ]
        if not reductions:
            continue
        lookup = _number(op["total_gpu_time_s"])
        reduce = sum(_number(context.rows[r]["gpu_time_s"]) for r in reductions)
        size = _dtype_bytes(str(op["dtype"]) or "fp32")
        rows_read = math.prod(out) * size
        # What the fix removes is the reduction's pass over the gathered rows. Reading the rows
        # once at the memory roof would promise more, but random rows are not read at the roof:
        # on the H200 embedding_bag took 1.25 ms where the lookup and sum took 1.82 ms and the
        # rows at the roof 0.50 ms (bench/RESULTS.md).
        return [
            context.item(
                "memory-bound gather",
                "Embedding lookups summed per bag: use embedding_bag",
                f"{context.named(row)} gathers {math.prod(dims[1]):,} rows into "
                f"{'x'.join(map(str, out))} ({rows_read / 1e6:,.0f} MB written), which "
                f"{context.rows[reductions[0]]['name']} reads back to reduce over the bag: "
                f"{_ms(lookup + reduce)}, of which the reduction's pass over the gathered rows "
                f"takes {_ms(reduce)}.",
                "F.embedding_bag(indices, weight, mode='sum' or 'mean') (or nn.EmbeddingBag) "
                "reduces the rows as it gathers them: the gathered rows are neither written out "
                "nor read back.",
                reduce,
                [row, *reductions],
            )
        ]
    return []


# --- host side ------------------------------------------------------------------------------------


def _host_copies(context: _Context) -> list[dict]:
    gpu = context.evidence.gpu
    memcpy = np.flatnonzero(gpu["kind"] == "memcpy")
    codes, distinct = pd.factorize(gpu["name"][memcpy])
    host = np.array([bool(_HOST_COPY.search(str(n))) for n in distinct] + [False], bool)
    copies = memcpy[host[codes]]

    if not len(copies):
        return []
    others = np.setdiff1d(np.arange(len(gpu["start_s"])), copies)
    exposed = intervals.union_length(gpu["start_s"], gpu["end_s"]) - intervals.union_length(
        gpu["start_s"][others], gpu["end_s"][others]
    )
    nbytes = np.nansum(gpu["bytes"][copies].astype(float))
    if nbytes < 1e6 or exposed <= 0:
        return []  # a few bytes (an .item()'s copy): the synchronisation is the cost
    seconds = float(np.sum(gpu["dur_s"][copies]))
    names = pd.Series(gpu["name"][copies]).value_counts()
    pageable = any("Pageable" in str(n) for n in names.index)
    direction = str(names.index[0]).split(" (")[0].removeprefix("Memcpy ")
    rows = [int(r) for r in pd.unique(gpu["row"][copies]) if r >= 0][:3]
    launcher = _top_name(context, int(gpu["op"][copies[0]]))
    fix = (
        "If the data can stay on the GPU, move it there once, before the loop. If each step "
        "needs new data, copy it from pinned memory with non_blocking=True (tensor.pin_memory(), "
        "DataLoader(pin_memory=True)) so that the copy overlaps the previous step's work"
        + (": from pageable memory it cannot." if pageable else ".")
    )
    return [
        context.item(
            "host copy",
            f"{len(copies):,} host-device cop{'ies' if len(copies) > 1 else 'y'} inside the step",
            f"{launcher or 'A copy'} moved {nbytes / 1e6:,.0f} MB ({direction}"
            f"{', from pageable memory' if pageable else ''}) in {_ms(seconds)} "
            f"({nbytes / seconds / 1e9:.1f} GB/s); {_ms(exposed)} of it with no other GPU work "
            "beside it.",
            fix,
            exposed,
            rows,
            probably=False,
        )
    ]


def _communication(context: _Context) -> list[dict]:
    """Collectives with no other GPU work beside them (the split's exposed communication)."""
    summary = context.summary
    exposed = float(summary.get("communication_s") or 0.0)
    if exposed <= 0:
        return []
    hidden = float(summary.get("communication_hidden_s") or 0.0)
    backend = (summary.get("communication") or {}).get("backend")
    fix = (
        "Overlap them with the backward pass (DDP does it bucket by bucket: try a smaller "
        "bucket_cap_mb), communicate less often (gradient accumulation under no_sync()), or send "
        "fewer bytes (bf16 gradients)."
    )
    if backend == "gloo":
        fix += " gloo moves GPU tensors through the host: NCCL uses the GPUs' own links."
    return [
        context.item(
            "communication",
            "Collectives run with nothing to hide them",
            f"Collectives ran with no other GPU work beside them for {_ms(exposed)} "
            f"({_ms(hidden)} more was hidden behind compute).",
            fix,
            exposed,
            probably=False,
        )
    ]


def _idle(context: _Context) -> list[dict]:
    gaps = context.gaps
    items = []
    sync = gaps["sync_s"]
    if sync > 0:
        named = ", ".join(f"{name} ({count:,}x)" for name, count in gaps["sync_ops"][:3])
        items.append(
            context.item(
                "synchronisation",
                f"The host waits for the GPU {gaps['sync_count']:,} times",
                f"{named or 'Synchronising calls'} made the host wait for the GPU "
                f"({_ms(gaps['sync_wait_s'])} in cudaStreamSynchronize and the like); after each "
                "wait the GPU idled while the host prepared the next work, "
                f"{_ms(gaps['sync_gap_s'])} in all.",
                "Keep values on the GPU inside the loop (accumulate in a tensor) and read them "
                "once at the end; avoid .item(), .cpu(), .tolist(), printing tensors and "
                "data-dependent shapes (nonzero, masked_select) in the step.",
                sync,
                extra_ops=[{"name": name, "calls": count} for name, count in gaps["sync_ops"][:3]],
            )
        )
    stall = gaps["stall_s"]
    if stall > 0:
        parts = [f"{name} {_ms(seconds)}" for name, seconds in gaps["stall_ops"][:3]]
        if gaps["stall_untraced_s"] > 0:
            parts.append(f"{_ms(gaps['stall_untraced_s'])} in no torch op (Python, data loading)")
        items.append(
            context.item(
                "host stall",
                "The GPU waits while the host does other work",
                f"The GPU idled {_ms(stall)} while the launching thread ran CPU work in "
                f"stretches of {STALL_MIN_S * 1e6:.0f} µs or more: {'; '.join(parts)}.",
                "Prepare the next batch off the critical path: a DataLoader with num_workers > 0 "
                "and pin_memory=True, work done once before the loop, or CPU work overlapped "
                "with the GPU's (launch the step, then prepare the next batch).",
                stall,
            )
        )
    launch = sum(s for row, s in gaps["launch_by_row"].items() if row not in context.claimed_rows)
    launch += gaps["launch_unowned_s"]
    if launch > 0:
        ranked = sorted(
            (
                (row, s)
                for row, s in gaps["launch_by_row"].items()
                if row not in context.claimed_rows
            ),
            key=lambda item: -item[1],
        )
        rows = [row for row, _ in ranked[:3]]
        short = int(context.summary.get("short_kernel_count") or 0)
        kernels = int(context.summary.get("kernel_count") or 0)
        named = "; ".join(
            f"{context.rows[row]['name']} {context.rows[row]['shapes']} "
            f"({int(context.rows[row]['calls']):,} calls, {_ms(s)} before them)"
            for row, s in ranked[:3]
        )
        items.append(
            context.item(
                "launch overhead",
                f"The GPU waits for launches {_percent(context.share(launch, host=True))} of the "
                "time",
                f"Between {kernels:,} kernels ({short:,} shorter than 10 µs) the GPU idled "
                f"{_ms(launch)} while the host launched the next: Python and PyTorch's "
                f"dispatch per op cost more than the kernels. Most before: {named or 'n/a'}.",
                "Replay the step as a CUDA Graph (the Try CUDA Graph button, torch.cuda.graph, "
                "or torch.compile(mode='reduce-overhead')), fuse ops with torch.compile, or give "
                "each launch more work (a larger batch).",
                launch,
                rows,
            )
        )
    return items


# --- the idle gaps ----------------------------------------------------------------------------------


def _launching_threads(evidence: Evidence) -> list[tuple]:
    """The (pid, tid) of every thread that launched GPU work (a training step's backward runs
    on autograd's own thread)."""
    launched = evidence.gpu["op"]
    launched = launched[launched >= 0]
    if not len(launched):
        return []
    launcher = np.flatnonzero(np.bincount(launched))  # each launching call once, no sort
    pids, tids = evidence.calls["pid"][launcher], evidence.calls["tid"][launcher]
    return list(dict.fromkeys(zip(pids.tolist(), tids.tolist(), strict=True)))


def _on_threads(table: Mapping[str, np.ndarray], threads: list[tuple]) -> np.ndarray:
    pid, tid = np.asarray(table["pid"]), np.asarray(table["tid"])
    found = np.zeros(len(pid), dtype=bool)
    for thread in threads:
        found |= (pid == thread[0]) & (tid == thread[1])
    return found


def _gaps(context: _Context) -> dict:
    """The idle gaps of the window, each split into synchronisation, host stall and launch
    overhead by what the launching thread did meanwhile (see the module docstring)."""
    evidence = context.evidence
    gpu = evidence.gpu
    empty = {
        "sync_s": 0.0,
        "sync_wait_s": 0.0,
        "sync_gap_s": 0.0,
        "sync_count": 0,
        "sync_ops": [],
        "stall_s": 0.0,
        "stall_untraced_s": 0.0,
        "stall_ops": [],
        "launch_by_row": {},
        "launch_unowned_s": 0.0,
        "lead_claimed_s": 0.0,
    }
    merged_start, merged_end = intervals.merge(gpu["start_s"], gpu["end_s"])
    g0, g1 = merged_end[:-1], merged_start[1:]
    keep = g1 > g0
    g0, g1 = g0[keep], g1[keep]
    if context.lead > 0:
        g0 = np.r_[context.first - context.lead, g0]
        g1 = np.r_[context.first, g1]
    if not len(g0) or not context.threads:
        return empty
    # The event that ends each gap: the first to start at the next segment's start.
    by_start = np.argsort(gpu["start_s"], kind="stable")
    starts = gpu["start_s"][by_start]
    after = by_start[np.minimum(np.searchsorted(starts, g1, side="left"), len(starts) - 1)]
    next_row = gpu["row"][after]

    calls = evidence.calls
    top = np.flatnonzero(_on_threads(calls, context.threads) & (calls["parent"] < 0))
    top = top[np.argsort(calls["start_s"][top], kind="stable")]
    segments = _host_segments(calls, top, float(g0.min()), float(g1.max()))

    # Synchronising calls on the launching thread that returned within a gap.
    runtime = evidence.runtime
    names = runtime["name"].to_numpy(dtype=object)
    # The pattern once per distinct name, the rows of each synchronising name (a few) found by
    # one comparison: the runtime calls are most of a trace's events.
    syncing = [n for n in set(names) if isinstance(n, str) and _SYNC_CALL.search(n)]
    is_sync = np.zeros(len(names), dtype=bool)
    for name in syncing:
        is_sync |= names == name
    sync_rows = np.flatnonzero(is_sync)
    sync_rows = sync_rows[_on_threads(runtime.iloc[sync_rows], context.threads)]
    sync_end = runtime["end_s"].to_numpy()[sync_rows]
    sync_dur = runtime["dur_s"].to_numpy()[sync_rows]
    order = np.argsort(sync_end)
    sync_rows, sync_end, sync_dur = sync_rows[order], sync_end[order], sync_dur[order]
    waited = np.r_[0.0, np.cumsum(sync_dur)]
    slack = 2e-6
    lo = np.searchsorted(sync_end, g0 - slack, side="left")
    hi = np.searchsorted(sync_end, g1, side="right")
    wait = waited[hi] - waited[lo]
    gap = g1 - g0
    sync_part = np.minimum(gap, wait)
    rest = gap - sync_part

    launch_time, cpu_time, untraced_time, comm_time = segments.overlaps(g0, g1)
    if context.lead > 0 and not cpu_time[0] > 0:
        # Before the first GPU work, time in no torch op with no CPU op beside it is the run's
        # own start (the cell's Python, the profiler starting, the first launch), which a
        # one-kernel cell has too: no evidence of data loading. With CPU ops there (a batch
        # made on the host), the time between them is that work's.
        untraced_time[0] = 0.0
    host = launch_time + cpu_time + untraced_time + comm_time
    with np.errstate(divide="ignore", invalid="ignore"):
        stall_share = np.where(host > 0, (cpu_time + untraced_time) / host, 0.0)
        launch_share = np.where(host > 0, launch_time / host, 1.0)
    stall_part = rest * stall_share
    launch_part = rest * launch_share

    if context.lead > 0:
        # Every run needs its first launch (a CUDA graph's too): the host's lead-in counts as a
        # stall or a wait where it was one, never as launch overhead that could go.
        launch_part[0] = 0.0
    owned = next_row >= 0
    by_row = np.bincount(next_row[owned], weights=launch_part[owned])
    launch_by_row = {int(row): float(by_row[row]) for row in np.flatnonzero(by_row)}
    unowned = float(launch_part[~owned].sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        untraced_share = np.where(host > 0, untraced_time / host, 0.0)
    synced = hi > lo
    sync_ops: dict[str, int] = {}
    for index in (
        sync_rows[
            np.concatenate(
                [np.arange(a, b) for a, b in zip(lo[synced], hi[synced], strict=True)]
            ).astype(int)
        ]
        if synced.any()
        else []
    ):
        label = _sync_label(context, runtime, int(index))
        sync_ops[label] = sync_ops.get(label, 0) + 1
    stall_ops = _stall_ops(calls, top, segments, g0[stall_part > 0], g1[stall_part > 0])
    return {
        "sync_s": float(sync_part.sum()),
        "sync_wait_s": float(wait[synced].sum()),
        "sync_gap_s": float(gap[synced].sum()),
        "sync_count": int(sum(sync_ops.values())),
        "sync_ops": sorted(sync_ops.items(), key=lambda item: -item[1]),
        "stall_s": float(stall_part.sum()),
        "stall_untraced_s": float((rest * untraced_share).sum()),
        "stall_ops": stall_ops,
        "launch_by_row": launch_by_row,
        "launch_unowned_s": unowned,
        "lead_claimed_s": float(stall_part[0] + sync_part[0]) if context.lead > 0 else 0.0,
    }


@dataclass
class _Segments:
    """The launching thread's time as disjoint labelled stretches: 0 launching (ops that
    launched GPU work, and short stretches between them), 1 CPU work in torch ops (stretches of
    ``STALL_MIN_S`` or more), 2 CPU work in no torch op (as long)."""

    start: np.ndarray
    end: np.ndarray
    label: np.ndarray

    def overlaps(self, g0: np.ndarray, g1: np.ndarray) -> list[np.ndarray]:
        """Per interval [g0, g1], its time in stretches of each label (0 to 3)."""
        lengths = self.end - self.start
        ends = [
            (t, np.searchsorted(self.start, t, side="right") - 1) for t in (g0, g1)
        ]  # the stretch each end falls in (-1: before the first)
        found = []
        for label in (0, 1, 2, 3):
            mine = self.label == label
            before = np.r_[0.0, np.cumsum(np.where(mine, lengths, 0.0))]
            covered = []
            for t, index in ends:
                safe = np.maximum(index, 0)
                partial = np.clip(t - self.start[safe], 0.0, lengths[safe])
                partial = np.where(mine[safe], partial, 0.0)
                covered.append(np.where(index >= 0, before[safe] + partial, 0.0))
            found.append(covered[1] - covered[0])
        return found


def _host_segments(
    calls: Mapping[str, np.ndarray], top: np.ndarray, lo: float, hi: float
) -> _Segments:
    """The launching threads' time, together, as disjoint labelled stretches: launching where
    any of them runs an op that launched GPU work (or a short one); CPU work where none does but
    one runs a long CPU op; no torch op elsewhere, launching again where such a stretch is
    short (Python between launches)."""
    start = calls["start_s"][top]
    end = np.maximum(calls["end_s"][top], start)
    # Collectives on the host (gloo) wait for other ranks: communication, neither a stall
    # nor launch overhead (the communication advice is about them).
    names = calls["name"][top]
    codes, distinct = factorize_objects(names)  # the pattern once per distinct name
    verdicts = [bool(_COLLECTIVE.search(str(n))) for n in distinct]
    collective = np.array([*verdicts, False], bool)[codes]  # code -1, a missing name: none
    long_cpu = (calls["total_gpu_s"][top] <= 0) & (end - start >= STALL_MIN_S) & ~collective
    plain = ~long_cpu & ~collective
    launch_start, launch_end = intervals.merge(start[plain], end[plain])
    cpu_start, cpu_end = intervals.merge(start[long_cpu], end[long_cpu])
    comm_start, comm_end = intervals.merge(start[collective], end[collective])
    points = np.unique(
        np.r_[lo, hi, launch_start, launch_end, cpu_start, cpu_end, comm_start, comm_end]
    )
    seg_start, seg_end = points[:-1], points[1:]
    middle = (seg_start + seg_end) / 2

    def inside(s: np.ndarray, e: np.ndarray) -> np.ndarray:
        index = np.searchsorted(s, middle, side="right") - 1
        return (index >= 0) & (middle < e[np.maximum(index, 0)]) if len(s) else index < -1

    label = np.where(
        inside(comm_start, comm_end),
        3,
        np.where(inside(launch_start, launch_end), 0, np.where(inside(cpu_start, cpu_end), 1, 2)),
    )
    # Runs of "no torch op" shorter than STALL_MIN_S are Python between launches.
    run = np.r_[0, np.cumsum(label[1:] != label[:-1])] if len(label) else label
    run_length = np.bincount(run, weights=seg_end - seg_start)
    label[(label == 2) & (run_length[run] < STALL_MIN_S)] = 0
    return _Segments(seg_start, seg_end, label)


def _stall_ops(
    calls: Mapping[str, np.ndarray],
    top: np.ndarray,
    segments: _Segments,
    g0: np.ndarray,
    g1: np.ndarray,
) -> list[tuple[str, float]]:
    """The CPU ops that ran during the stalls, with their time there, largest first."""
    if not len(g0):
        return []
    start, end = calls["start_s"][top], calls["end_s"][top]
    cpu = (calls["total_gpu_s"][top] <= 0) & (end - start >= STALL_MIN_S)
    found: dict[str, float] = {}
    for index in np.flatnonzero(cpu):
        overlap = np.clip(np.minimum(g1, end[index]) - np.maximum(g0, start[index]), 0, None).sum()
        if overlap > 0:
            name = str(calls["name"][top[index]])
            found[name] = found.get(name, 0.0) + float(overlap)
    return sorted(found.items(), key=lambda item: -item[1])


def _sync_label(context: _Context, runtime: pd.DataFrame, index: int) -> str:
    """The top-level op around a synchronising runtime call (``aten::item``), or the call."""
    calls = context.evidence.calls
    when = float(runtime["start_s"].iat[index])  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    thread = [(runtime["pid"].iat[index], runtime["tid"].iat[index])]
    mine = np.flatnonzero(_on_threads(calls, thread) & (calls["parent"] < 0))
    inside = mine[(calls["start_s"][mine] <= when) & (calls["end_s"][mine] >= when)]
    if len(inside):
        return str(calls["name"][inside[0]])
    name = str(runtime["name"].iat[index])
    return "torch.cuda.synchronize()" if "DeviceSynchronize" in name else name


def _top_name(context: _Context, call: int) -> str:
    """``aten::to -> aten::copy_``: the op the user called and the one that launched."""
    calls = context.evidence.calls
    if call < 0:
        return ""
    top = call
    while calls["parent"][top] >= 0:
        top = calls["parent"][top]
    inner, outer = str(calls["name"][call]), str(calls["name"][top])
    return outer if inner == outer else f"{outer} ({inner})"


# --- small helpers ------------------------------------------------------------------------------


def _number(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number


def _is_shape(value: object) -> bool:
    """A tensor's shape: a list of whole numbers (not a list of tensors' shapes, nor empty)."""
    return isinstance(value, list) and bool(value) and all(type(v) is int for v in value)


def _dims(op: Mapping) -> list | None:
    dims = op.get("dims")
    if isinstance(dims, list):
        return dims
    import json

    try:
        parsed = json.loads(str(op.get("shapes") or ""))
    except ValueError:
        return None
    return parsed if isinstance(parsed, list) else None


_DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def _dtype_bytes(dtype: str) -> int:
    return _DTYPE_BYTES.get(dtype, 4)


def _ms(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%" if share >= 0.01 else f"{100 * share:.1g}%"
