"""Which roof each op is held against, and the figures that roof cannot explain.

An op's roof is the peak of the arithmetic units that ran it. Its compute dtype (``costs``)
decides in most cases: a bf16 matmul is held against the bf16 tensor-core peak. A float32 matmul
or convolution is the exception: on Ampere and later, cuBLAS and cuDNN run it on TF32 tensor cores
when PyTorch allows it, 7x the plain FP32 rate on an H200, and PyTorch allows it for convolutions
by default (``torch.backends.cudnn.allow_tf32``) but not for matmuls
(``torch.backends.cuda.matmul.allow_tf32`` / ``torch.set_float32_matmul_precision``). Held
against the wrong roof, a default fp32 CNN reads 200-600% of peak.

So the roof of each float32 matmul or convolution call is decided, most trusted first, by
(the op table's ``roof_basis``):

1. ``"kernel"``: the names of the kernels it launched, where they tell. TF32 tensor cores:
   ``tf32`` (cuBLAS and cuDNN ``sm80_xmma_*_tf32f32_*``, ``sm90_xmma_*_f32f32_tf32f32_*``),
   ``s1688`` / ``s16816`` (CUTLASS TF32 tensor-op GEMMs), ``tfloat32`` (CUTLASS convolutions
   in cuDNN), ``xf32`` (ROCm). Plain FP32 on the
   CUDA cores: ``sgemm`` (``volta_sgemm_*``, ``ampere_sgemm_*``, cuDNN's ``*_convolve_sgemm``),
   ``ffma`` (``sm80_xmma_gemm_f32f32_f32f32_*_ffma_*``), ``simt``, ``gemv``, cuDNN's legacy
   ``*_engine<float`` kernels, Winograd and FFT convolutions. Names seen on V100, A100, H200 and
   MI250 traces; the H200 zoo recorded with its settings checks them (tests/test_roofs.py).
2. ``"setting"``: the math-mode settings the capture recorded (``capture.math_mode``).
3. ``"assumed"``: neither is known (a loaded trace whose kernel names do not tell): PyTorch's
   defaults, TF32 for convolutions and FP32 for matmuls, and a note says so.

The key is then resolved on the device (``Peaks.roof_key``): a GPU without TF32 units (V100,
T4, MI250) holds a TF32-allowed op against FP32, and its basis is ``"dtype"`` again.

An op whose achieved rate is above ``ROOF_TOLERANCE`` of its roof is not shown as achieved: its
``roof_flag`` names the likely reason (a byte or FLOP model that counts more than ran, the L2
cache serving part of the traffic, a roof assumed where the trace does not say), and advice never
quotes its "% of peak".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from ..schema.report import ROOF_BASES
from ..trace.frames import factorize_objects
from .peaks import Peaks

__all__ = ["ROOF_BASES", "ROOF_TOLERANCE", "call_roofs", "math_mode_summary", "over_roof_flags"]

# Above this fraction of its roof, an op's figure is a model or peak mismatch, not an achievement:
# measured peaks and clocks move by a few percent.
ROOF_TOLERANCE = 1.05

# The ops whose roof follows the math mode: float32 matmuls (cuBLAS) and convolutions (cuDNN).
_TF32_CATEGORIES = {"matmul": "matmul_tf32", "conv": "conv_tf32"}
# PyTorch's defaults, for a trace that does not say.
_PYTORCH_DEFAULTS = {"matmul_tf32": False, "conv_tf32": True}
_SETTING_NAMES = {
    "matmul_tf32": "torch.backends.cuda.matmul.allow_tf32",
    "conv_tf32": "torch.backends.cudnn.allow_tf32",
}

_TF32_KERNEL = re.compile(r"tf32|tfloat32|xf32|s1688|s16816|s1684", re.IGNORECASE)
_FP32_KERNEL = re.compile(r"sgemm|ffma|simt|gemv|gemmsn|_engine<float|winograd|fft", re.IGNORECASE)
# Traffic per call up to this size can be served partly by a last-level cache (H200: 60 MiB of
# L2; MI300X: 256 MiB of Infinity Cache) faster than device memory.
_CACHE_SIZED_BYTES = 256e6
# Algorithms that do fewer multiplications than the direct convolution the FLOP model counts.
_FEWER_FLOPS_KERNEL = re.compile(r"winograd|fft", re.IGNORECASE)


def kernel_units(names: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each kernel name: whether it says TF32 tensor cores, plain FP32 CUDA cores, and a
    Winograd or FFT algorithm. Each pattern is tested once per distinct name."""
    codes, distinct = factorize_objects(names)
    verdicts = []
    for pattern in (_TF32_KERNEL, _FP32_KERNEL, _FEWER_FLOPS_KERNEL):
        found = [isinstance(name, str) and pattern.search(name) is not None for name in distinct]
        verdicts.append(np.array([*found, False], dtype=bool)[codes])  # code -1: no name
    tf32, fp32, fewer = verdicts
    return tf32, fp32 & ~tf32, fewer


def call_roofs(
    ops: Mapping[str, np.ndarray],
    kernel_names: np.ndarray,
    owner: np.ndarray,
    math_mode: Mapping[str, object] | None,
    peaks: Peaks | None,
) -> dict[str, np.ndarray]:
    """Per op call: ``roof`` (the peak key it is held against), ``roof_basis`` (one of
    ``ROOF_BASES``; both "" for a call without figures) and ``fewer_flops_kernel`` (it ran a
    Winograd or FFT kernel).

    ``ops`` holds the calls' ``dtype``, ``category`` and ``counted`` arrays; ``owner`` gives,
    for each GPU event named in ``kernel_names``, the call that owns it (-1: none).
    """
    n = len(ops["dtype"])
    # Only the calls that own a cost have figures, so only they get a roof (often a small part
    # of a trace's calls: wrappers, and every call of a trace without shapes, have none).
    rows = np.flatnonzero(ops["counted"])
    dtype = ops["dtype"][rows]
    category = ops["category"][rows]
    roof = dtype.copy()
    basis = np.empty(len(rows), dtype=object)
    basis.fill("dtype")
    # Kernel names are read only where they can decide something: under a matmul or a
    # convolution (a few hundred names among a trace's thousands).
    position = np.full(n, -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    relevant = np.zeros(n, dtype=bool)
    relevant[rows] = np.isin(category, tuple(_TF32_CATEGORIES))
    owned = np.flatnonzero(owner >= 0)
    owned = owned[relevant[owner[owned]]]
    tf32_kernel, fp32_kernel, fewer_kernel = kernel_units(kernel_names[owned])

    def any_kernel(which: np.ndarray) -> np.ndarray:
        return np.bincount(position[owner[owned[which]]], minlength=len(rows)) > 0

    told_tf32, told_fp32 = any_kernel(tf32_kernel), any_kernel(fp32_kernel)
    is_fp32 = dtype == "fp32"
    for name, setting in _TF32_CATEGORIES.items():
        chosen = is_fp32 & (category == name)
        if not chosen.any():
            continue
        allowed = (math_mode or {}).get(setting)
        if allowed is None:
            roof[chosen] = "tf32" if _PYTORCH_DEFAULTS[setting] else "fp32"
            basis[chosen] = "assumed"
        else:
            roof[chosen] = "tf32" if allowed else "fp32"
            basis[chosen] = "setting"
        for told, key in ((told_fp32, "fp32"), (told_tf32, "tf32")):  # TF32 wins a mixed call
            roof[chosen & told] = key
            basis[chosen & told] = "kernel"
    if peaks is not None and len(rows):
        # What the device has: with no TF32 units the roof is FP32 whatever was allowed.
        codes, distinct = factorize_objects(roof)
        resolved = np.array(
            [peaks.roof_key(key) if key else "" for key in distinct] + [""], dtype=object
        )
        roof = resolved[codes]
        if not _has_tf32(peaks):
            basis[basis != "dtype"] = "dtype"
    # A call without figures (a wrapper whose cost a call below it owns) has no roof.
    every_roof = np.empty(n, dtype=object)
    every_roof.fill("")
    every_roof[rows] = roof
    every_basis = np.empty(n, dtype=object)
    every_basis.fill("")
    every_basis[rows] = basis
    fewer = np.zeros(n, dtype=bool)
    fewer[rows] = any_kernel(fewer_kernel)
    return {"roof": every_roof, "roof_basis": every_basis, "fewer_flops_kernel": fewer}


def _has_tf32(peaks: Peaks) -> bool:
    return peaks.roof_key("tf32") == "tf32"


def math_mode_summary(
    ops: Mapping[str, np.ndarray], math_mode: Mapping[str, object] | None, peaks: Peaks | None
) -> tuple[dict, list[str]]:
    """The report's ``summary["math_mode"]`` and the notes that explain the fp32 roofs.

    ``summary["math_mode"]``: ``settings`` (what the capture recorded, or None for a loaded
    trace) and, for ``fp32_matmul`` and ``fp32_conv``, the ``roof`` and ``basis`` of their calls
    ("mixed" where they differ) and the number of ``calls``, or None where none ran.
    """
    summary: dict = {"settings": dict(math_mode) if math_mode is not None else None}
    notes = []
    counted = np.flatnonzero(ops["counted"])  # the calls with figures, often a small part
    is_fp32 = np.zeros(len(ops["counted"]), dtype=bool)
    is_fp32[counted] = ops["dtype"][counted] == "fp32"
    category_of = np.empty(len(is_fp32), dtype=object)
    category_of[counted] = ops["category"][counted]
    for category, setting in _TF32_CATEGORIES.items():
        key = f"fp32_{category}"
        rows = is_fp32 & (category_of == category)
        if not rows.any():
            summary[key] = None
            continue
        roofs, bases = set(ops["roof"][rows]), set(ops["roof_basis"][rows])
        roof = roofs.pop() if len(roofs) == 1 else "mixed"
        basis = bases.pop() if len(bases) == 1 else "mixed"
        summary[key] = {"roof": roof, "basis": basis, "calls": int(np.count_nonzero(rows))}
        if peaks is not None and _has_tf32(peaks):
            notes.append(_roof_note(category, setting, rows, ops, math_mode, peaks))
    return summary, notes


def _roof_note(
    category: str,
    setting: str,
    rows: np.ndarray,
    ops: Mapping[str, np.ndarray],
    math_mode: Mapping[str, object] | None,
    peaks: Peaks,
) -> str:
    """One sentence: which roof the float32 calls of this category are held against, and why."""
    what = "matmuls" if category == "matmul" else "convolutions"
    name = _SETTING_NAMES[setting]
    calls = np.count_nonzero(rows)
    tf32 = np.count_nonzero(ops["roof"][rows] == "tf32")
    told = np.count_nonzero(ops["roof_basis"][rows] == "kernel")
    assumed_rows = rows & (ops["roof_basis"] == "assumed")
    with np.errstate(divide="ignore", invalid="ignore"):
        # Below the FP32 ridge a call is memory-bound under either roof: the choice is moot.
        matters = assumed_rows & (ops["flops"] / ops["bytes"] >= peaks.ridge("fp32"))
    assumed = np.count_nonzero(matters)
    moot = np.count_nonzero(assumed_rows) - assumed
    rate = {key: f"{peaks.flops_for(key) / 1e12:.0f} TFLOP/s" for key in ("tf32", "fp32")}
    if tf32 == calls:
        held = f"float32 {what} are held against the TF32 tensor-core roof ({rate['tf32']})"
    elif tf32 == 0:
        held = f"float32 {what} are held against the plain FP32 roof ({rate['fp32']})"
    else:
        held = (
            f"{tf32} of {calls} float32 {what} calls are held against the TF32 tensor-core roof "
            f"({rate['tf32']}), the others against plain FP32 ({rate['fp32']})"
        )
    allowed = (math_mode or {}).get(setting)
    if assumed:
        default = _PYTORCH_DEFAULTS[setting]
        consequence = (
            "if TF32 was off, their share of peak reads too low"
            if default
            else f"if TF32 was on, their share of peak reads too high (flagged above "
            f"{ROOF_TOLERANCE:.0%})"
        )
        return (
            f"Roof assumed: {held}. This trace does not record {name}, and the kernel names of "
            f"{assumed} of those calls do not tell which units ran them, so PyTorch's default "
            f"({name} = {default}) is assumed for them; {consequence}."
        )
    if moot:
        held += f" ({moot} calls whose kernel names do not tell are memory-bound under either roof)"
    if told + moot == calls:
        how = "their kernel names say which units ran them"
    elif told:
        how = (
            f"their kernel names say which units ran them where they tell, else {name} "
            f"(recorded: {allowed})"
        )
    else:
        how = f"{name} was {allowed} when they ran (their kernel names do not tell)"
    if moot:
        how += f" (the {moot} whose names do not tell are memory-bound under either roof)"
    return f"{held[0].upper()}{held[1:]}: {how}."


def over_roof_flags(table: Mapping[str, np.ndarray], peaks: Peaks | None) -> np.ndarray:
    """For each op-table row, "" or why its figure is above ``ROOF_TOLERANCE`` of its roof.

    ``table`` holds the op table's columns (``roof_fraction``, ``roof``, ``roof_basis``,
    ``category``, ``dtype``, ``bound``, ``flops``, ``bytes``, ``calls``, ``gpu_time_s``,
    ``fewer_flops_kernel``).
    """
    fraction = np.asarray(table["roof_fraction"], dtype=float)
    flags = np.empty(len(fraction), dtype=object)
    flags.fill("")
    with np.errstate(invalid="ignore"):
        over = np.flatnonzero(fraction > ROOF_TOLERANCE)
    for row in over:
        flags[row] = _reason({name: values[row] for name, values in table.items()}, peaks)
    return flags


def _reason(row: Mapping[str, object], peaks: Peaks | None) -> str:
    percent = f"{100 * float(row['roof_fraction']):.0f}% of its {row['roof']} roof"  # pyright: ignore[reportArgumentType]  # the row's roof fraction is a number here
    category, basis = row["category"], row["roof_basis"]
    calls = max(float(row["calls"]), 1.0)  # type: ignore[arg-type]
    per_call = float(row["bytes"]) / calls  # type: ignore[arg-type]
    if category == "fused":
        return (
            f"{percent}: a Triton kernel's bytes are estimated from its tensor arguments, and "
            "some are read only in part (a split, a gathered row): the byte model counts more "
            "than it moved."
        )
    tf32_possible = peaks is not None and _has_tf32(peaks)
    unknown_units = category in _TF32_CATEGORIES and basis in ("assumed", "setting")
    if unknown_units and row["roof"] == "fp32" and tf32_possible:
        unknown = "the trace does not record" if basis == "assumed" else "the setting forbade"
        return (
            f"{percent}: it most likely ran on TF32 tensor cores, which {unknown} and its "
            "kernel names do not tell."
        )
    if row["bound"] == "compute":
        if row.get("fewer_flops_kernel"):
            return (
                f"{percent}: it ran a Winograd or FFT convolution, which does fewer "
                "multiplications than the direct convolution the FLOP model counts."
            )
        return (
            f"{percent}: the FLOP model counts more than ran (a mask or sparsity it does not "
            "see), or the peaks are below what this GPU reaches."
        )
    if "gather" in str(row.get("name", "")):
        # torch.gather's index is usually a row index expanded over the columns: with the
        # trace's Input Strides the model reads it once per row, without them in full.
        return (
            f"{percent}: the byte model counts the gather's index in full where the trace "
            "records no strides, and an index expanded over the columns (a broadcast view) is "
            "read once per row."
        )
    model = "an input that is a broadcast (expanded) view is counted in full where the trace records no strides"
    if per_call <= _CACHE_SIZED_BYTES:
        # Producer-consumer chains leave their tensors in L2: the DRAM roof does not bind.
        return (
            f"{percent}: {per_call / 1e6:.0f} MB per call, small enough for the L2 cache to "
            f"serve part of it faster than device memory, or the byte model counts more than it "
            f"moved ({model})."
        )
    return f"{percent}: the byte model counts more than it moved ({model})."
