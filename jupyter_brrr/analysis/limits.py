"""What limits each op: its regime on the roofline, and why one far under its roof is there.

Two different questions, answered apart:

- **Regime**: the op's arithmetic intensity (FLOPs per byte of minimum traffic) against the ridge
  point of its roof says which side of the roofline it is on: ``"compute"`` at or above the
  ridge, ``"memory"`` below it. That is what the op *would* be limited by if it ran well.
- **Limit reached or not**: the achieved fraction of the roof (``roof_fraction``) says whether it
  does. An op at 10% of its roof is not limited by its arithmetic units or by memory bandwidth,
  whatever its regime: something else holds it back.

For an op under ``FAR_UNDER`` of its roof (and for the two classes below that apply at any
fraction), the ``reason`` column names the class it most likely falls in, and ``why`` gives the
numbers it rests on, from the op's shapes, dtypes and input strides and from its kernels'
names and launches (grid, block, registers, shared memory, all in the trace), against the GPU's
own properties (``deviceProperties``: SMs, registers and shared memory per SM):

- ``fp32 without tensor cores``: a float32 matmul or convolution held against the plain FP32
  roof on a GPU with TF32 tensor cores (its kernels or the recorded math mode say so), at any
  fraction: the roof itself is the slow one.
- ``layout``: a convolution whose kernels include cuDNN's NCHW <-> NHWC transpositions (channels-
  first tensors on tensor cores, which want channels-last), at any fraction: those kernels are
  pure overhead.
- ``tile quantisation``: a GEMM (or a convolution's implicit GEMM) with a dimension that is not a
  multiple of the 16-byte vector width (8 elements of bf16/fp16, 4 of fp32): cuBLAS/cuDNN fall
  back to unaligned kernels (CUTLASS names them ``align1``/``align2``); or tiles of 128 that waste
  over 15% of the work on padding. Names the dimension and the size to pad it to (a multiple of
  64, or of 8 for channels).
- ``too little work``: the kernel's grid has fewer blocks than the GPU has SMs, or its threads
  fill under a quarter of the GPU's thread slots, or its ideal time at the roof is under a
  launch's few microseconds.
- ``wave quantisation``: the grid's blocks fill the GPU's SMs (at the occupancy its registers,
  shared memory and threads allow) in few waves, the last one mostly empty: names the waves and
  the efficiency.
- ``strided`` (under 70% of the roof, where coalesced elementwise ops reach 85-90%): an
  elementwise, reduction or copy op whose inputs are laid out differently from one another (a transposed view against a contiguous tensor), or have gaps (a stepped slice): its
  reads are not coalesced, or read more than they use. Inputs that share one layout, even a
  transposed one, are read in that layout and do not count.
- ``host copy``: a copy between host and device memory: its limit is the host link (PCIe, or
  the CPU's memory for pageable copies), not the device memory bandwidth its roof fraction is
  measured against.
- ``below roof``: none of these shows in the trace; the launch data are given.

Every class but ``fp32 without tensor cores`` and ``layout`` (named by the kernels that ran) is
an inference, and ``why`` says "probably".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..costs.peaks import Peaks
from ..costs.roofs import ROOF_TOLERANCE
from ..schema.report import REASONS

__all__ = [
    "FAR_UNDER",
    "GEMV_WHY",
    "LAUNCH_FIELDS",
    "REASONS",
    "Device",
    "call_strided",
    "launch_facts",
    "op_limits",
]

# Under this fraction of its roof, an op is "far under" it and gets a reason.
FAR_UNDER = 0.5
# Strided reads are looked for up to here (coalesced elementwise ops reach 85-90%).
_STRIDED_UNDER = 0.7
# The rows whose kernels and calls are read for a reason: under the highest of the thresholds.
LOOKED_AT = _STRIDED_UNDER
# The kernels' launch fields the trace reader keeps (events.py).
LAUNCH_FIELDS = ("grid", "block", "registers", "shared_memory")

# Elements in a 16-byte vector, per compute dtype: the alignment tensor-core GEMMs want.
_ALIGN = {"fp16": 8, "bf16": 8, "tf32": 4, "fp32": 4, "fp8": 16, "int8": 16, "fp64": 2}
_DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
_TILE = 128  # a typical tensor-core tile edge (cuBLAS and CUTLASS 128x128 tiles)
_PAD = 64  # what to pad a GEMM dimension to
_TILE_WASTE = 0.15  # above this share of padding work, tiles are the problem
_FILL = 0.25  # under this share of the GPU's thread slots, a launch cannot fill it
_WAVE_EFFICIENCY = 0.75
_MAX_WAVES = 8  # beyond this many waves the last one's waste is small
_SHORT_KERNEL_S = 5e-6  # a kernel this short is mostly its own fixed cost
_UNALIGNED_KERNEL = re.compile(r"align[12]\b|_align[12]_|align1|align2")
# A matmul with this few rows (or columns) is a matrix-vector product: each weight it reads serves
# only that many rows, so reading the weights is its limit (a decode step's GEMMs).
_GEMV_ROWS = 16
GEMV_WHY = "probably limited by reading its weights"  # how its reason begins
# Kernel names that say how a GEMM ran: on tensor cores (MMA instructions, cuBLAS's nvjet and
# xmma kernels), or not (GEMV, SIMT and the plain FP32 GEMMs).
_TENSOR_CORE_KERNEL = re.compile(r"mma|tensorop|nvjet|xmma|i8816|16816|_tc_|gmma", re.IGNORECASE)
_NOT_TENSOR_CORE_KERNEL = re.compile(
    r"gemv|gemmk1|gemmSN|simt|sgemm|dgemm|dot_kernel|ffma", re.IGNORECASE
)
_TENSOR_CORE_DTYPES = ("int8", "fp8", "bf16", "fp16", "tf32")
_HOST_COPY_EVENT = re.compile(r"HtoD|DtoH|Pageable|Pinned")
_TRANSPOSE_KERNEL = re.compile(r"nchwToNhwc|nhwcToNchw|NCHW2NHWC|NHWC2NCHW|nchw2nhwc|nhwc2nchw")
_GEMM_OPS = {
    "aten::mm": "mm",
    "aten::addmm": "addmm",
    "aten::_addmm_activation": "addmm",
    "aten::bmm": "bmm",
    "aten::baddbmm": "baddbmm",
    "aten::matmul": "matmul",
    "aten::linear": "linear",
    "aten::_int_mm": "mm",
}
_LAYOUT_CATEGORIES = ("elementwise", "reduction", "copy", "norm", "softmax")


@dataclass(frozen=True)
class Device:
    """The properties of the GPU the kernels ran on that decide how a grid fills it (the trace's
    ``deviceProperties``; None where unknown)."""

    sms: int | None = None
    threads_per_sm: int = 2048
    registers_per_sm: int = 65536
    shared_memory_per_sm: int | None = None
    max_blocks_per_sm: int = 32

    @classmethod
    def from_props(cls, props: Mapping[str, object]) -> Device:
        def number(key: str, default: int | None) -> int | None:
            value = props.get(key)
            return int(value) if isinstance(value, int | float) and value > 0 else default

        return cls(
            sms=number("numSms", None),
            threads_per_sm=number("maxThreadsPerMultiprocessor", 2048) or 2048,
            registers_per_sm=number("regsPerMultiprocessor", 65536) or 65536,
            shared_memory_per_sm=number("sharedMemPerMultiprocessor", None),
        )

    def resident_blocks(self, threads: int, registers: int | None, shared: int | None) -> int:
        """Blocks of this launch one SM can hold at once (at least 1)."""
        limits = [self.max_blocks_per_sm, self.threads_per_sm // max(threads, 1)]
        if registers:
            # Registers are allocated per warp, in units of 256.
            per_warp = math.ceil(registers * 32 / 256) * 256
            limits.append(self.registers_per_sm // max(per_warp * math.ceil(threads / 32), 1))
        if shared and self.shared_memory_per_sm:
            limits.append(self.shared_memory_per_sm // shared)
        return max(min(limits), 1)


# --- strides --------------------------------------------------------------------------------------


def _layout(dims: list, strides: list) -> tuple[tuple[int, ...], bool] | None:
    """The order of a tensor's dimensions from outermost to innermost in memory (size-1 and
    broadcast dimensions left out), and whether it is dense (no gaps); None for a scalar, a
    broadcast or something unreadable."""
    if not (isinstance(dims, list) and isinstance(strides, list)) or len(dims) != len(strides):
        return None
    kept = [
        (int(stride), int(size), axis)
        for axis, (size, stride) in enumerate(zip(dims, strides, strict=True))
        if isinstance(size, int) and isinstance(stride, int) and size > 1 and stride != 0
    ]
    if not kept:
        return None
    kept.sort(key=lambda item: (-item[0], item[2]))
    expected = 1
    dense = True
    for stride, size, _ in reversed(kept):
        if stride != expected:
            dense = False
            break
        expected *= size
    return tuple(axis for _, _, axis in kept), dense


def call_strided(dims: object, strides: object, category: str) -> bool:
    """Whether an elementwise, reduction or copy call reads strided memory: two full-size inputs
    in different layouts, or an input with gaps. A view that only broadcasts does not count."""
    if category not in _LAYOUT_CATEGORIES or not isinstance(dims, list):
        return False
    if not isinstance(strides, list) or len(strides) != len(dims):
        return False
    layouts = []
    largest = 0
    for size, stride in zip(dims, strides, strict=True):
        found = _layout(size, stride)
        if found is None:
            continue
        numel = math.prod(size)
        layouts.append((numel, found))
        largest = max(largest, numel)
    full = [layout for numel, layout in layouts if numel == largest and numel >= 4096]
    if any(not dense for _, dense in full):
        return True
    return len({order for order, _ in full}) > 1


# --- GEMM dimensions ------------------------------------------------------------------------------


def _gemm_dims(name: str, dims: list) -> dict[str, int] | None:
    """M, N, K (and the batch) of a matmul op's call from its input shapes."""
    kind = _GEMM_OPS.get(name)
    try:
        if kind == "mm":
            (m, k), (_, n) = dims[0], dims[1]
        elif kind == "addmm":
            (m, k), (_, n) = dims[1], dims[2]
        elif kind == "bmm":
            (_, m, k), (_, _, n) = dims[0], dims[1]
        elif kind == "baddbmm":
            (_, m, k), (_, _, n) = dims[1], dims[2]
        elif kind == "linear":
            m, k = math.prod(dims[0][:-1]), dims[0][-1]
            n = dims[1][0]
        elif kind == "matmul":
            a, b = dims[0], dims[1]
            if len(a) < 2 or len(b) < 2:
                return None
            m, k, n = math.prod(a[:-1]), a[-1], b[-1]
        else:
            return None
    except (TypeError, ValueError, IndexError):
        return None
    return {"M": int(m), "N": int(n), "K": int(k)}


def _conv_dims(dims: list) -> dict[str, int] | None:
    """The channel counts of a convolution's call (NCHW-ordered shapes, as the trace writes them
    whatever the memory layout)."""
    try:
        x, w = dims[0], dims[1]
        if len(x) < 3 or len(w) < 3:
            return None
        return {"C_in": int(x[1]), "C_out": int(w[0])}
    except (TypeError, ValueError, IndexError):
        return None


def _padded(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


# --- the classification ---------------------------------------------------------------------------


def op_limits(
    table: Mapping[str, np.ndarray],
    launches: Mapping[str, np.ndarray],
    peaks: Peaks | None,
    device: Device,
) -> dict[str, np.ndarray]:
    """Per op-table row: ``regime`` ("compute", "memory" or "" without figures), ``reason`` (one
    of ``REASONS``, or "" at its roof or without figures) and ``why`` (the evidence, in words).

    ``table``: the op table's columns (``name``, ``category``, ``dtype``, ``roof``, ``intensity``,
    ``roof_fraction``, ``flops``, ``bytes``, ``calls``, ``gpu_time_s``, ``kernels``, ``dims``:
    the first call's input shapes). ``launches``: per row, from its kernels (``main_kernel``,
    ``blocks``, ``threads``, ``registers``, ``shared_memory``, ``kernel_s``: the median duration of
    its main kernel; ``transpose_s``: time in layout transpositions; ``strided_s``: GPU time of
    its calls that read strided memory).
    """
    n = len(table["name"])
    regime = np.empty(n, dtype=object)
    regime.fill("")
    reason = regime.copy()
    why = regime.copy()
    efficiency = np.full(n, np.nan)
    result = {"regime": regime, "reason": reason, "why": why, "wave_efficiency": efficiency}
    if peaks is None:
        return result
    fraction = np.asarray(table["roof_fraction"], dtype=float)
    roof = np.asarray(table["roof"], dtype=object)
    has_figures = ~np.isnan(fraction) & (roof != "") & pd.notna(roof)
    if not has_figures.any():
        return result
    codes, distinct = pd.factorize(roof[has_figures])
    ridge = np.array([peaks.ridge(key) for key in distinct])[codes]
    intensity = np.asarray(table["intensity"], dtype=float)[has_figures]
    regime[has_figures] = np.where(intensity >= ridge, "compute", "memory")
    category = np.asarray(table["category"], dtype=object)
    # A reason is looked for under the highest threshold, and for GEMMs at any fraction.
    with np.errstate(invalid="ignore"):
        candidates = has_figures & ((fraction < LOOKED_AT) | np.isin(category, ("matmul", "conv")))
    for row in np.flatnonzero(candidates).tolist():
        launch = {key: values[row] for key, values in launches.items()}
        op = {key: table[key][row] for key in _OP_FIELDS if key in table}
        found = _reason(op, launch, peaks, device)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        if found is not None:
            reason[row], why[row] = found
            efficiency[row] = launch.get("wave_efficiency", np.nan)
    return result


# The op-table columns _reason reads.
_OP_FIELDS = (
    *("name", "category", "roof", "dtype", "roof_fraction", "gpu_time_s"),
    *("calls", "flops", "bytes", "dims", "shapes"),
)


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%" if x >= 0.01 else f"{100 * x:.1g}%"


def _reason(
    op: Mapping[str, object], launch: dict[str, object], peaks: Peaks, device: Device
) -> tuple[str, str] | None:
    found = _class_of(op, launch, peaks, device)
    if found is not None and _plain_fp32(op, peaks) and _latency_bound(op, launch, peaks):
        return (
            found[0],
            f"{found[1]} TF32 would not shorten it: each kernel is its own fixed cost, and for "
            "a float32 GEMM this small cuBLAS may pick a slower tensor-core kernel (0.72x "
            "measured on an H200 for [8, 64] x [64, 64]).",
        )
    return found


def _class_of(
    op: Mapping[str, object], launch: dict[str, object], peaks: Peaks, device: Device
) -> tuple[str, str] | None:
    name, category = str(op["name"]), str(op["category"])
    roof, dtype = str(op["roof"]), str(op["dtype"])
    fraction = _float(op["roof_fraction"])
    seconds = _float(op["gpu_time_s"])
    at = f"at {_percent(fraction)} of its {roof} roof"
    kernel = str(launch.get("main_kernel") or "")
    dims = op.get("dims")
    dims = dims if isinstance(dims, list) else _parse(str(op.get("shapes") or ""))

    # 1. The units: float32 GEMMs on plain FP32 where TF32 tensor cores exist (not where the
    # figure is above the roof: its roof_flag says why, and no share of it is quoted; nor where
    # each kernel is its own fixed cost: a faster peak cannot shorten it, and on the H200 TF32
    # made cuBLAS swap the small-N kernel of an [8, 64] x [64, 64] matmul for a slower
    # tensor-core tile kernel, 0.72x: bench/tf32_probe.py).
    if (
        fraction <= ROOF_TOLERANCE
        and _plain_fp32(op, peaks)
        and not _latency_bound(op, launch, peaks)
    ):
        gain = peaks.flops_for("tf32") / peaks.flops_for("fp32")
        setting = (
            "torch.set_float32_matmul_precision('high')"
            if category == "matmul"
            else "torch.backends.cudnn.allow_tf32 = True"
        )
        return (
            "fp32 without tensor cores",
            f"float32 {'matmul' if category == 'matmul' else 'convolution'} on the plain FP32 "
            f"units ({at}); this GPU's TF32 tensor cores have {gain:.1f}x that peak "
            f"({setting}).",
        )

    # 2. Layout transpositions around a convolution (cuDNN names them).
    transpose_s = _float(launch.get("transpose_s"))
    if category == "conv" and transpose_s > 0.1 * seconds:
        return (
            "layout",
            f"{transpose_s * 1e3:.3g} ms of its {seconds * 1e3:.3g} ms is cuDNN transposing "
            "between NCHW and NHWC (nchwToNhwc/nhwcToNchw kernels): channels-first tensors on "
            "tensor cores, which want channels_last.",
        )
    # Memory read against its layout: a coalesced elementwise op reaches 85-90% of the memory
    # roof, so one at 70% with inputs in mixed layouts is held back by them.
    strided_s = _float(launch.get("strided_s"))
    if fraction < _STRIDED_UNDER and strided_s > 0.5 * seconds:
        return (
            "strided",
            f"probably strided reads: its inputs are laid out differently from each other, or "
            f"with gaps (strides {launch.get('strides') or 'in the trace'}), so its loads are not "
            f"coalesced ({at}).",
        )
    if not fraction < FAR_UNDER:
        return None
    host_copy_s = _float(launch.get("host_copy_s"))
    if host_copy_s > 0.5 * seconds:
        rate = _float(op["bytes"]) / seconds / 1e9 if seconds > 0 else math.nan
        return (
            "host copy",
            f"a copy between host and device memory at {rate:.3g} GB/s: its limit is the host "
            f"link (PCIe, or the CPU's memory for pageable copies), not the device memory "
            f"bandwidth of its {roof} roof ({at}).",
        )

    # 3. A matrix-vector product (a decode step's GEMMs): too few rows per weight read; an odd
    # row count there is not what tiles are about.
    gemv = _gemv_reason(name, category, dtype, dims, at)
    if gemv is not None:
        return "too little work", gemv

    # 4. GEMM shapes that tensor-core tiles cannot take as they are.
    tiles = _alignment_reason(name, category, dtype, dims, kernel, at)
    if tiles is not None:
        return "tile quantisation", tiles

    # 5. How the launch fills the GPU.
    blocks, threads = _float(launch.get("blocks")), _float(launch.get("threads"))
    kernel_s = _float(launch.get("kernel_s"))
    ideal = _ideal_per_call(op, peaks)
    sms = device.sms
    if sms and blocks > 0 and threads > 0:
        resident = device.resident_blocks(
            int(threads), _int(launch.get("registers")), _int(launch.get("shared_memory"))
        )
        per_wave = sms * resident
        filled = blocks / per_wave
        grid = (
            f"a grid of {blocks:,.0f} block{'s' if blocks != 1 else ''} of {threads:,.0f} "
            f"threads on {sms} SMs"
        )
        if (blocks < sms and filled < 0.9) or filled < _FILL:
            return (
                "too little work",
                f"probably too little work to fill the GPU: {grid}, where {per_wave:,} such "
                f"blocks fit at once ({resident} per SM at its threads, registers and shared "
                f"memory): it fills {_percent(min(filled, 1.0))} of the GPU, {at}.",
            )
        waves = blocks / per_wave
        efficiency = blocks / (math.ceil(waves) * per_wave)
        if math.ceil(waves) <= _MAX_WAVES and efficiency < _WAVE_EFFICIENCY:
            launch["wave_efficiency"] = efficiency  # type: ignore[index]
            return (
                "wave quantisation",
                f"probably wave quantisation: {grid} fill {waves:.2f} waves of {per_wave:,} "
                f"({resident} per SM at its registers and shared memory); the last wave is "
                f"{_percent(waves - math.floor(waves))} full, a wave efficiency of "
                f"{_percent(efficiency)} ({at}).",
            )
    if _latency_bound(op, launch, peaks):
        launched = (
            f", a grid of {blocks:,.0f} blocks of {threads:,.0f} threads"
            if blocks > 0 and threads > 0
            else ""
        )
        return (
            "too little work",
            f"probably too little work per launch: {ideal * 1e6:.2g} µs of ideal work per call "
            f"against {kernel_s * 1e6:.2g} µs per kernel{launched} ({at}).",
        )

    # 6. Tiles that pad a GEMM big enough for it to matter (a small one is too little work).
    if ideal >= _SHORT_KERNEL_S:
        tiles = _tile_waste_reason(name, category, dims, at)
        if tiles is not None:
            return "tile quantisation", tiles

    launched = (
        f"; its kernel {_short(kernel)} ran {blocks:,.0f} blocks of {threads:,.0f} threads"
        if kernel and blocks > 0
        else ""
    )
    units = _units_reason(category, dtype, kernel, at)
    if units is not None:
        grid = f" (a grid of {blocks:,.0f} blocks of {threads:,.0f} threads)" if blocks > 0 else ""
        return "below roof", f"{units}{grid}."
    return "below roof", f"{at}: the trace does not show why{launched}."


def _plain_fp32(op: Mapping[str, object], peaks: Peaks) -> bool:
    """A float32 matmul or convolution held against the plain FP32 roof on a GPU whose TF32
    tensor cores have at least twice that peak."""
    return (
        str(op["category"]) in ("matmul", "conv")
        and str(op["dtype"]) == "fp32"
        and str(op["roof"]) == "fp32"
        and peaks.roof_key("tf32") == "tf32"
        and peaks.flops_for("tf32") >= 2 * peaks.flops_for("fp32")
    )


def _ideal_per_call(op: Mapping[str, object], peaks: Peaks) -> float:
    """The op's time per call at its roof."""
    ideal = max(
        _float(op["flops"]) / peaks.flops_for(str(op["roof"]) or None),
        _float(op["bytes"]) / peaks.bandwidth,
    )
    return ideal / max(_float(op["calls"]), 1.0)


def _latency_bound(op: Mapping[str, object], launch: Mapping[str, object], peaks: Peaks) -> bool:
    """Each kernel of the op is short and its ideal work at the roof a small part of it: the
    kernel's time is its fixed cost, which no faster peak (TF32, another dtype) shortens."""
    kernel_s = _float(launch.get("kernel_s"))
    return (
        not math.isnan(kernel_s)
        and kernel_s < 4 * _SHORT_KERNEL_S
        and _ideal_per_call(op, peaks) < _SHORT_KERNEL_S / 2
    )


def _gemv_reason(name: str, category: str, dtype: str, dims: object, at: str) -> str | None:
    """A matmul of few rows against a large weight: each weight element read does 2 x rows
    FLOPs, so reading the weights bounds it, however the tiles fall."""
    gemm = _gemm_dims(name, dims) if category == "matmul" and isinstance(dims, list) else None
    if gemm is None:
        return None
    m, n, k = gemm["M"], gemm["N"], gemm["K"]
    rows, columns = min(m, n), max(m, n)
    if rows > _GEMV_ROWS or columns < 16 * rows or k < 16 * rows:
        return None
    weight_bytes = k * columns * _DTYPE_BYTES.get(dtype, 4)
    return (
        f"{GEMV_WHY}: a matrix-vector product of {rows} row"
        f"{'s' if rows != 1 else ''} against a {k} x {columns} weight ({_size(weight_bytes)}), "
        f"so each weight element read serves only {rows} row{'s' if rows != 1 else ''} "
        f"({2 * rows} FLOPs); too little work per weight read, whatever its tiles ({at}). "
        "Batching the requests (more rows per call) does more work per weight read."
    )


def _units_reason(category: str, dtype: str, kernel: str, at: str) -> str | None:
    """A GEMM held against a tensor-core roof whose kernel's name says it did not run on the
    tensor cores (a GEMV or SIMT kernel), or does not say that it did."""
    if category != "matmul" or dtype not in _TENSOR_CORE_DTYPES or not kernel:
        return None
    named = _short(kernel.removeprefix("void ").split("<")[0])
    if _NOT_TENSOR_CORE_KERNEL.search(kernel):
        return (
            f"{at}, which assumes {dtype} tensor cores: the kernel that ran, {named}, is not a "
            "tensor-core kernel (its name says a GEMV or SIMT kernel), so the tensor-core roof "
            "is out of its reach; a shape and layout cuBLAS has a tensor-core kernel for (each "
            "dimension a multiple of 16; for int8, the second operand column-major) probably "
            "gets one"
        )
    # Triton's and other generated kernels are named after the code, not the instructions.
    if not _TENSOR_CORE_KERNEL.search(kernel) and not kernel.startswith("triton_"):
        return (
            f"{at}, which assumes {dtype} tensor cores: the kernel that ran, {named}, does not "
            "name tensor-core instructions (mma, tensorop, nvjet, xmma), so it probably ran on "
            "the plain units"
        )
    return None


def _size(nbytes: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _alignment_reason(
    name: str, category: str, dtype: str, dims: object, kernel: str, at: str
) -> str | None:
    if not isinstance(dims, list):
        return None
    align = _ALIGN.get(dtype, 4)
    unaligned_kernel = _UNALIGNED_KERNEL.search(kernel) is not None
    if category == "conv":
        channels = _conv_dims(dims)
        if channels is None or dtype not in ("bf16", "fp16", "fp8", "int8"):
            return None
        odd = {k: v for k, v in channels.items() if v % align}
        if not odd:
            return None
        named = ", ".join(f"{k} = {v} (pad to {_padded(v, align)})" for k, v in odd.items())
        return (
            f"probably tile quantisation: {named} is not a multiple of {align}, the channel "
            f"count {dtype} tensor-core convolutions want ({at})."
        )
    gemm = _gemm_dims(name, dims) if category == "matmul" else None
    if gemm is None:
        return None
    odd = {k: v for k, v in gemm.items() if v % align}
    if odd:
        named = ", ".join(f"{k} = {v}" for k, v in odd.items())
        pads = ", ".join(f"{v} to {_padded(v, _PAD)}" for v in odd.values())
        kernel_says = (
            f"cuBLAS ran an unaligned kernel ({_short(kernel)})"
            if unaligned_kernel
            else "cuBLAS cannot use its aligned, vectorised tiles"
        )
        probably = "" if unaligned_kernel else "probably "
        return (
            f"{probably}tile quantisation: {named} is not a multiple of {align} ({dtype}'s "
            f"16-byte vectors), so {kernel_says}, {at}. Padding {pads} (a multiple of {_PAD}) "
            "probably lets it run aligned tiles."
        )
    return None


def _tile_waste_reason(name: str, category: str, dims: object, at: str) -> str | None:
    gemm = _gemm_dims(name, dims) if category == "matmul" and isinstance(dims, list) else None
    if gemm is None:
        return None
    m, n = gemm["M"], gemm["N"]
    waste = _padded(m, _TILE) * _padded(n, _TILE) / (m * n) - 1 if m and n else 0.0
    if waste > _TILE_WASTE:
        return (
            f"probably tile quantisation: an M x N of {m} x {n} in {_TILE} x {_TILE} tiles pads "
            f"{_percent(waste)} more work than it does ({at})."
        )
    return None


def _int(value: object) -> int | None:
    number = _float(value)
    return int(number) if number > 0 else None


_WRAPPER = re.compile(r"^[\w:]*::Kernel2?<(?P<inner>[^<>]+)>$")


def _short(kernel: str, limit: int = 80) -> str:
    """A kernel's name without ``void``, its argument list and a generic CUTLASS wrapper
    (``cutlass::Kernel2<NAME>`` -> ``NAME``), cut to ``limit`` characters."""
    head = _without_arguments(kernel.removeprefix("void "))
    wrapped = _WRAPPER.match(head)
    if wrapped:
        head = wrapped["inner"]
    return head if len(head) <= limit else head[: limit - 1] + "…"


def _without_arguments(name: str) -> str:
    """``f<T>(int, float)`` -> ``f<T>``: the name up to its argument list (a parenthesis inside
    the name, ``(anonymous namespace)::f``, does not count)."""
    return name.replace("(anonymous namespace)::", "").split("(", 1)[0] or name


def _parse(shapes: str) -> list | None:
    try:
        value = json.loads(shapes)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, list) else None


# --- launch facts per op-table row --------------------------------------------------------------


def launch_facts(
    *,
    rows: int,
    wanted: np.ndarray,
    event_row: np.ndarray,
    names: np.ndarray,
    durations: np.ndarray,
    is_kernel: np.ndarray,
    launch: Mapping[str, np.ndarray],
    call_row: np.ndarray,
    call_seconds: np.ndarray,
    call_category: np.ndarray,
    call_dims: np.ndarray,
    call_strides: np.ndarray,
) -> dict[str, np.ndarray]:
    """What ``op_limits`` reads about each op-table row's kernels and calls.

    ``event_row``: per GPU event, its op-table row (-1: none); ``launch``: the kernels' ``grid``,
    ``block``, ``registers``, ``shared_memory`` (per kernel: the first ``len`` GPU events are the
    kernels). Only the ``wanted`` rows are filled (the others keep NaN and ""): a trace has
    thousands of rows, and few are far under their roofs.
    """
    facts: dict[str, np.ndarray] = {
        key: np.full(rows, np.nan) for key in ("blocks", "threads", "registers", "shared_memory")
    }
    facts |= {
        key: np.zeros(rows) for key in ("kernel_s", "transpose_s", "strided_s", "host_copy_s")
    }
    facts["kernel_s"].fill(np.nan)
    for key in ("main_kernel", "strides"):
        facts[key] = np.empty(rows, dtype=object)
        facts[key].fill("")
    if not rows:
        return facts
    picked = np.flatnonzero((event_row >= 0) & wanted[np.maximum(event_row, 0)])
    if len(picked):
        codes, distinct = _factorize(names[picked])
        transpose = np.array([bool(_TRANSPOSE_KERNEL.search(str(n))) for n in distinct] + [False])
        facts["transpose_s"] = np.bincount(
            event_row[picked], weights=durations[picked] * transpose[codes], minlength=rows
        )
        host = np.array([bool(_HOST_COPY_EVENT.search(str(n))) for n in distinct] + [False])
        facts["host_copy_s"] = np.bincount(
            event_row[picked],
            weights=durations[picked] * (host[codes] & ~is_kernel[picked]),
            minlength=rows,
        )
        _main_kernels(facts, picked, codes, distinct, event_row, durations, is_kernel, launch)
    _strided_calls(facts, wanted, call_row, call_seconds, call_category, call_dims, call_strides)
    return facts


def _factorize(values: np.ndarray) -> tuple[np.ndarray, list]:
    codes, distinct = pd.factorize(values)
    return codes, list(distinct)


def _main_kernels(
    facts: dict[str, np.ndarray],
    picked: np.ndarray,
    codes: np.ndarray,
    distinct: list,
    event_row: np.ndarray,
    durations: np.ndarray,
    is_kernel: np.ndarray,
    launch: Mapping[str, np.ndarray],
) -> None:
    """Per row: the kernel name with the most time, and its launches' median grid size, block
    size, registers, shared memory and duration."""
    kernels = picked[is_kernel[picked]]
    kernel_codes = codes[is_kernel[picked]]
    if not len(kernels):
        return
    keys = event_row[kernels] * len(distinct) + kernel_codes
    unique_keys, inverse = np.unique(keys, return_inverse=True)
    totals = np.bincount(inverse, weights=durations[kernels])
    key_rows = unique_keys // len(distinct)
    # The key with the most time in each row: sort by (row, -total) and take each row's first.
    order = np.lexsort((-totals, key_rows))
    first = order[np.r_[True, key_rows[order][1:] != key_rows[order][:-1]]]
    main_key = np.full(int(event_row.max()) + 1, -1)
    main_key[key_rows[first]] = unique_keys[first]
    chosen = kernels[keys == main_key[event_row[kernels]]]
    # Its launch of median duration stands for it (one kernel of one op keeps its launch).
    rows_of = event_row[chosen]
    order = np.lexsort((durations[chosen], rows_of))
    starts = np.flatnonzero(np.r_[True, rows_of[order][1:] != rows_of[order][:-1]])
    counts = np.diff(np.r_[starts, len(order)])
    median = chosen[order[starts + counts // 2]]
    rows = event_row[median]
    facts["blocks"][rows] = _products(launch["grid"][median])
    facts["threads"][rows] = _products(launch["block"][median])
    facts["registers"][rows] = _numbers(launch["registers"][median])
    facts["shared_memory"][rows] = _numbers(launch["shared_memory"][median])
    facts["kernel_s"][rows] = durations[median]
    facts["main_kernel"][rows] = [str(distinct[k % len(distinct)]) for k in main_key[rows]]


def _products(values: np.ndarray) -> np.ndarray:
    """The product of each [x, y, z] (NaN where missing), once per distinct object (the reader
    shares one list per distinct launch)."""
    cache: dict[int, float] = {}

    def product(value: object) -> float:
        key = id(value)
        if key not in cache:
            ok = (
                isinstance(value, list) and value and all(isinstance(v, int | float) for v in value)
            )
            cache[key] = float(math.prod(value)) if ok else math.nan  # type: ignore[arg-type]
        return cache[key]

    return np.fromiter(map(product, values), float, len(values))


def _numbers(values: np.ndarray) -> np.ndarray:
    return np.array([float(v) if isinstance(v, int | float) else np.nan for v in values], float)


def _strided_calls(
    facts: dict[str, np.ndarray],
    wanted: np.ndarray,
    call_row: np.ndarray,
    call_seconds: np.ndarray,
    call_category: np.ndarray,
    call_dims: np.ndarray,
    call_strides: np.ndarray,
) -> None:
    """GPU time of each wanted row's calls that read strided memory, and the strides of one."""
    calls = np.flatnonzero((call_row >= 0) & (call_seconds > 0))
    calls = calls[wanted[call_row[calls]]]
    verdicts: dict[tuple[int, int, str], bool] = {}
    for call in calls:
        dims, strides, category = call_dims[call], call_strides[call], str(call_category[call])
        key = (id(dims), id(strides), category)
        if key not in verdicts:
            verdicts[key] = call_strided(dims, strides, category)
        if verdicts[key]:
            row = call_row[call]
            facts["strided_s"][row] += call_seconds[call]
            if not facts["strides"][row]:
                facts["strides"][row] = json.dumps(strides, separators=(", ", ": "))
