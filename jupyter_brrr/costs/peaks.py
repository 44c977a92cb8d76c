"""Device peaks for the roofline: peak FLOP/s per dtype and memory bandwidth.

Two sources, and the report says which one it used:

* ``KNOWN_GPUS``, a table of vendor datasheet / whitepaper figures, found by device name with
  :func:`lookup`. Every figure is DENSE: NVIDIA datasheets quote tensor-core rates with 2:4
  structured sparsity, and the table holds half of those, which is what ordinary matmuls can
  reach. ``"fp32"`` is plain FP32 on the CUDA cores (what a float32 matmul gets while TF32 is off,
  PyTorch's default), ``"tf32"`` the dense TF32 tensor-core rate.
* :func:`measure_peaks`, a micro-benchmark of the GPU in hand (large matmuls per dtype and a
  2 GiB device-to-device copy, timed with CUDA events), cached per device as JSON.

Measured peaks are lower than datasheet ones: on the H200 here a bf16 8192^3 matmul ran at
787 TFLOP/s (datasheet dense bf16: 989) and a device-to-device copy at 4.24 TB/s counting bytes
read plus written (datasheet: 4.8 TB/s), so the bf16 ridge point is about 790e12 / 4.24e12 =
186 FLOP/byte measured against 206 from the datasheet. A kernel judged against measured peaks
can honestly reach 100%; against datasheet peaks the best kernels stop near 80%.

:func:`peaks_for` is what the report uses: a measured cache entry if there is one, else the
table, else (an unknown GPU that is present) a measurement, and always a plain-language note.

Importing this module is cheap: torch is imported only inside the functions that need a GPU.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = [
    "DTYPES",
    "KNOWN_GPUS",
    "Peaks",
    "cache_dir",
    "cache_peaks",
    "cached_peaks",
    "dtype_key",
    "lookup",
    "measure_peaks",
    "peaks_for",
]

# The dtype keys of Peaks.flops, widest first.
DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")

# Where flops_for() looks when a dtype has no figure of its own, in order. The fallbacks say
# what the hardware does without the feature: with no TF32 tensor cores a TF32-allowed matmul
# runs as plain FP32; with no bf16 tensor cores (V100, T4) bf16 runs at about the FP32 rate, so
# it must NOT borrow the fp16 tensor-core rate; an 8-bit type with no peak of its own gets the
# 16-bit tensor-core rate; a GPU with bf16 tensor cores has fp16 ones at the same rate.
_FALLBACKS: dict[str, tuple[str, ...]] = {
    "fp64": ("fp64", "fp32"),
    "fp32": ("fp32",),
    "tf32": ("tf32", "fp32"),
    "fp16": ("fp16", "bf16", "fp32"),
    "bf16": ("bf16", "fp32"),
    "fp8": ("fp8", "fp16", "bf16", "fp32"),
    "int8": ("int8", "fp16", "fp32"),
}

# Names that dtype_key() understands, beyond the keys themselves (torch's names without
# "torch."). Integer and bool types other than int8 map to fp32: they run on the same ALUs at a
# comparable rate and never on tensor cores.
_DTYPE_ALIASES: dict[str, str] = {
    "float64": "fp64",
    "double": "fp64",
    "f64": "fp64",
    "complex128": "fp64",
    "cdouble": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "f32": "fp32",
    "complex64": "fp32",
    "cfloat": "fp32",
    "int64": "fp32",
    "long": "fp32",
    "int32": "fp32",
    "int": "fp32",
    "int16": "fp32",
    "short": "fp32",
    "bool": "fp32",
    "tensorfloat32": "tf32",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "complex32": "fp16",
    "chalf": "fp16",
    "bfloat16": "bf16",
    "int8": "int8",
    "uint8": "int8",
    "qint8": "int8",
    "quint8": "int8",
}


def dtype_key(dtype: object) -> str:
    """The Peaks.flops key for ``dtype``: a key itself, a torch dtype or its name, or None.

    None and anything unrecognised mean ``"fp32"`` (the safe default: no tensor-core rate is
    assumed). All float8 variants (``torch.float8_e4m3fn``, ``"float8_e5m2fnuz"``...) are ``"fp8"``.
    """
    if dtype is None:
        return "fp32"
    name = str(dtype).strip().lower().removeprefix("torch.")
    if name in DTYPES:
        return name
    if name.startswith(("float8", "fp8")):
        return "fp8"
    return _DTYPE_ALIASES.get(name, "fp32")


@dataclass(frozen=True)
class Peaks:
    """Peak rates of one device.

    ``flops`` maps dtype keys (see ``DTYPES``; only those the device has) to dense peak FLOP/s
    (OP/s for int8). ``bandwidth`` is device memory bandwidth in bytes/s (bytes read plus bytes
    written). ``memory_bytes`` is the capacity (nominal for table rows: the datasheet's GB, which
    are GiB; the driver reports a little less). ``source`` says where the numbers come from and
    ``measured`` whether they were measured on the GPU rather than taken from a datasheet.
    """

    device: str
    flops: dict[str, float]
    bandwidth: float
    memory_bytes: float | None = None
    source: str = ""
    measured: bool = False

    def __post_init__(self) -> None:
        # Copy (the caller's dict must not alias a frozen object) and check, so that a wrong
        # key or a zero fails here rather than as a division by zero in a plot.
        flops: dict[str, float] = {}
        for key, value in self.flops.items():
            if key not in DTYPES:
                raise ValueError(f"Peaks.flops: unknown dtype key {key!r}; use one of {DTYPES}")
            flops[key] = _positive(f"flops[{key!r}]", value)
        if not flops:
            raise ValueError("Peaks.flops is empty: give at least the 'fp32' peak")
        object.__setattr__(self, "flops", flops)
        object.__setattr__(self, "bandwidth", _positive("bandwidth", self.bandwidth))
        if self.memory_bytes is not None:
            object.__setattr__(self, "memory_bytes", _positive("memory_bytes", self.memory_bytes))

    def flops_for(self, dtype: object) -> float:
        """Peak FLOP/s for work in ``dtype`` (a key, a torch dtype or its name, or None).

        When the device has no figure for that dtype, falls back along what the hardware does
        without the feature: ``tf32 -> fp32``; ``bf16 -> fp32`` (no bf16 tensor cores, e.g.
        V100, T4); ``fp16 -> bf16 -> fp32``; ``fp8 -> fp16 -> bf16 -> fp32``;
        ``int8 -> fp16 -> fp32``; ``fp64 -> fp32`` (an upper bound). None and unknown dtypes
        count as ``fp32``. As a last resort (no fp32 figure) the lowest known peak is used.
        """
        return self.flops[self.roof_key(dtype)]

    def roof_key(self, dtype: object) -> str:
        """The key of the figure :meth:`flops_for` uses for ``dtype``: the roof an op in that
        dtype is held against on this device (``"tf32"`` is ``"fp32"`` on a V100)."""
        for key in _FALLBACKS[dtype_key(dtype)]:
            if key in self.flops:
                return key
        return min(self.flops, key=self.flops.__getitem__)

    def ridge(self, dtype: object) -> float:
        """Ridge point in FLOP/byte: intensities above it are compute-bound, below memory-bound."""
        return self.flops_for(dtype) / self.bandwidth

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (the report's ``summary["peaks"]``)."""
        return {
            "device": self.device,
            "source": self.source,
            "measured": self.measured,
            "flops": {key: self.flops[key] for key in DTYPES if key in self.flops},
            "bandwidth": self.bandwidth,
            "memory_bytes": self.memory_bytes,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Peaks:
        """Inverse of :meth:`to_dict`; unknown keys are ignored (newer writers may add some)."""
        memory = d.get("memory_bytes")
        return cls(
            device=str(d["device"]),
            flops={str(k): float(v) for k, v in d["flops"].items()},
            bandwidth=float(d["bandwidth"]),
            memory_bytes=None if memory is None else float(memory),
            source=str(d.get("source", "")),
            measured=bool(d.get("measured", False)),
        )


def _positive(what: str, value: object) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"Peaks.{what} must be a positive finite number, got {value!r}")
    return number


# ---------------------------------------------------------------------------------------------
# The table of known GPUs
# ---------------------------------------------------------------------------------------------

_GIB = 2**30  # datasheet capacities: "80 GB" of HBM is 80 GiB

# Sources named in the table below.
_V100 = "NVIDIA Tesla V100 datasheet"
_A100 = "NVIDIA A100 datasheet"
_H100 = "NVIDIA H100 datasheet"
_H200 = "NVIDIA H200 datasheet"
_GH200 = "NVIDIA GH200 Grace Hopper Superchip datasheet"
_MI250 = "datasheet, halved: PyTorch sees each of its 2 GCDs as a device; fp32 = packed FP32"
_FP64_1_32 = "fp64 = fp32/32 (CUDA C++ Programming Guide throughput table, sm_75)"
_FP64_1_64 = "fp64 = fp32/64 (CUDA C++ Programming Guide throughput table, sm_86/sm_89)"

# Dense peaks. Conventions, so that a rate is what PyTorch can reach by default in that dtype:
# * NVIDIA tensor-core figures quoted "with sparsity" are halved.
# * fp16/bf16/fp8 are the rates with FP32 accumulation, what cuBLAS uses for torch matmuls;
#   GeForce and A10G parts run those at half their FP16-accumulate rate.
# * fp64 is the FP64 tensor-core / matrix rate where the part has one (A100, H100, H200,
#   MI250, MI300X), because cuBLAS / rocBLAS DGEMM uses it. Where the datasheet gives no FP64
#   figure it is derived from FP32 by the FP64:FP32 ratio of the CUDA C++ Programming Guide.
# * AMD MI250/MI250X: PyTorch sees each of the two dies (GCDs) as its own device, so a row is
#   half of the package's datasheet figures (one GCD: 64 GiB, 1.64 TB/s).
# * None: the part has no such unit (V100 and T4 have no bf16 or TF32 tensor cores; fp8 came
#   with Ada and Hopper); Peaks.flops_for() falls back (see there).
# Columns: device, memory bandwidth in TB/s, capacity in GiB, dense TFLOP/s per dtype (int8:
# TOP/s), source.
# fmt: off
_TABLE: tuple[tuple[str, float, float, tuple[float | None, ...], str], ...] = (
    # device                         TB/s    GiB  (fp64       fp32   tf32   fp16    bf16    fp8     int8)     source
    ("Tesla V100-SXM2-16GB",          0.9,    16,  (7.8,       15.7,  None,  125,    None,   None,   None),   f"{_V100} (SXM2)"),
    ("Tesla V100-SXM2-32GB",          0.9,    32,  (7.8,       15.7,  None,  125,    None,   None,   None),   f"{_V100} (SXM2)"),
    ("Tesla V100-PCIE-16GB",          0.9,    16,  (7.0,       14.0,  None,  112,    None,   None,   None),   f"{_V100} (PCIe)"),
    ("Tesla V100-PCIE-32GB",          0.9,    32,  (7.0,       14.0,  None,  112,    None,   None,   None),   f"{_V100} (PCIe)"),
    ("Tesla V100S-PCIE-32GB",         1.134,  32,  (8.2,       16.4,  None,  130,    None,   None,   None),   "NVIDIA V100S datasheet (PCIe)"),
    ("Tesla T4",                      0.32,   16,  (8.1 / 32,  8.1,   None,  65,     None,   None,   130),    f"NVIDIA T4 datasheet; {_FP64_1_32}"),
    ("NVIDIA A100 40GB (SXM)",        1.555,  40,  (19.5,      19.5,  156,   312,    312,    None,   624),    f"{_A100} (SXM4 40GB)"),
    ("NVIDIA A100 80GB (SXM)",        2.039,  80,  (19.5,      19.5,  156,   312,    312,    None,   624),    f"{_A100} (SXM4 80GB)"),
    ("NVIDIA A100 40GB PCIe",         1.555,  40,  (19.5,      19.5,  156,   312,    312,    None,   624),    f"{_A100} (PCIe 40GB)"),
    ("NVIDIA A100 80GB PCIe",         1.935,  80,  (19.5,      19.5,  156,   312,    312,    None,   624),    f"{_A100} (PCIe 80GB)"),
    ("NVIDIA A10",                    0.6,    24,  (31.2 / 64, 31.2,  62.5,  125,    125,    None,   250),    f"NVIDIA A10 datasheet; {_FP64_1_64}"),
    ("NVIDIA A10G",                   0.6,    24,  (35 / 64,   35,    35,    70,     70,     None,   140),    f"NVIDIA A10G figures as published for AWS EC2 G5 (no public NVIDIA datasheet); {_FP64_1_64}"),
    ("NVIDIA GeForce RTX 3090",       0.936,  24,  (35.6 / 64, 35.6,  35.6,  71,     71,     None,   284),    f"NVIDIA Ampere GA102 GPU architecture whitepaper (RTX 3090), FP32 accumulate; {_FP64_1_64}"),
    ("NVIDIA L4",                     0.3,    24,  (30.3 / 64, 30.3,  60,    121,    121,    242.5,  242.5),  f"NVIDIA L4 datasheet; {_FP64_1_64}"),
    ("NVIDIA L40",                    0.864,  48,  (90.5 / 64, 90.5,  90.5,  181.05, 181.05, 362,    362),    f"NVIDIA L40 datasheet; {_FP64_1_64}"),
    ("NVIDIA L40S",                   0.864,  48,  (91.6 / 64, 91.6,  183,   362.05, 362.05, 733,    733),    f"NVIDIA L40S datasheet; {_FP64_1_64}"),
    ("NVIDIA GeForce RTX 4090",       1.008,  24,  (82.6 / 64, 82.6,  82.6,  165.2,  165.2,  330.3,  660.6),  f"NVIDIA Ada Lovelace GPU architecture whitepaper (RTX 4090), FP32 accumulate; {_FP64_1_64}"),
    ("NVIDIA H100 SXM",               3.35,   80,  (67,        67,    494.5, 989.5,  989.5,  1979,   1979),   f"{_H100} (SXM)"),
    ("NVIDIA H100 PCIe",              2.0,    80,  (51,        51,    378,   756.5,  756.5,  1513,   1513),   f"{_H100} (PCIe)"),
    ("NVIDIA H100 NVL",               3.9,    94,  (60,        60,    417.5, 835.5,  835.5,  1670.5, 1670.5), f"{_H100} (NVL)"),
    ("NVIDIA GH200 480GB",            4.0,    96,  (67,        67,    494.5, 989.5,  989.5,  1979,   1979),   f"{_GH200} (96GB HBM3)"),
    ("NVIDIA GH200 144G HBM3e",       4.9,    144, (67,        67,    494.5, 989.5,  989.5,  1979,   1979),   f"{_GH200} (144GB HBM3e)"),
    ("NVIDIA H200",                   4.8,    141, (67,        67,    494.5, 989.5,  989.5,  1979,   1979),   f"{_H200} (SXM)"),
    ("NVIDIA H200 NVL",               4.8,    141, (60,        60,    417.5, 835.5,  835.5,  1670.5, 1670.5), f"{_H200} (NVL)"),
    ("AMD Instinct MI250X (one GCD)", 1.6384, 64,  (47.85,     47.85, None,  191.5,  191.5,  None,   191.5),  f"AMD Instinct MI250X {_MI250}"),
    ("AMD Instinct MI250 (one GCD)",  1.6384, 64,  (45.25,     45.25, None,  181.05, 181.05, None,   181.05), f"AMD Instinct MI250 {_MI250}"),
    ("AMD Instinct MI300X",           5.3,    192, (163.4,     163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9), "AMD Instinct MI300X datasheet"),
    ("AMD Instinct MI325X",           6.0,    256, (163.4,     163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9), "AMD Instinct MI325X datasheet"),
)
# fmt: on

KNOWN_GPUS: tuple[Peaks, ...] = tuple(
    Peaks(
        device=device,
        flops={
            key: tflops * 1e12
            for key, tflops in zip(DTYPES, rates, strict=True)
            if tflops is not None
        },
        bandwidth=tb_s * 1e12,
        memory_bytes=gib * _GIB,
        source=source,
        measured=False,
    )
    for device, tb_s, gib, rates, source in _TABLE
)

_BY_DEVICE: dict[str, Peaks] = {row.device: row for row in KNOWN_GPUS}


@dataclass(frozen=True)
class _NamePattern:
    """Picks a table row when every ``all_of`` regex and no ``none_of`` regex matches."""

    device: str
    all_of: tuple[str, ...]
    none_of: tuple[str, ...] = ()
    # When the name does not say how much memory the board has (an A100 "PG509-200", a V100
    # "SXM3"), pick this row instead when the memory hint is larger than this many GiB.
    if_memory_above_gib: tuple[float, str] | None = None

    def matches(self, name: str) -> bool:
        return all(re.search(p, name) for p in self.all_of) and not any(
            re.search(p, name) for p in self.none_of
        )


# Most specific first: the first pattern that matches wins. Names are lower-cased with runs of
# white space collapsed. Real names seen: "NVIDIA H200", "NVIDIA H100 80GB HBM3" (SXM),
# "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PG509-200" (an A100 40GB SXM board),
# "Tesla V100-SXM2-16GB", "NVIDIA GeForce RTX 4090", "AMD Instinct MI250X / MI250".
_NAME_PATTERNS: tuple[_NamePattern, ...] = (
    # AMD. "MI250X / MI250" (both in one name) is handled in lookup().
    _NamePattern("AMD Instinct MI325X", (r"mi325x",)),
    _NamePattern("AMD Instinct MI300X", (r"mi300x",)),
    _NamePattern("AMD Instinct MI250X (one GCD)", (r"mi250x",)),
    _NamePattern("AMD Instinct MI250 (one GCD)", (r"mi250\b",)),
    # Hopper. GH200 before H200: "gh200" contains "h200" (the \b keeps them apart too).
    _NamePattern("NVIDIA GH200 144G HBM3e", (r"\bgh200\b", r"144\s*g|hbm3e")),
    _NamePattern("NVIDIA GH200 480GB", (r"\bgh200\b",)),
    _NamePattern("NVIDIA H200 NVL", (r"\bh200\b", r"\bnvl\b")),
    _NamePattern("NVIDIA H200", (r"\bh200\b",)),
    _NamePattern("NVIDIA H100 NVL", (r"\bh100\b", r"\bnvl\b")),
    _NamePattern("NVIDIA H100 PCIe", (r"\bh100\b", r"pcie")),
    _NamePattern("NVIDIA H100 SXM", (r"\bh100\b",)),
    # Ampere data centre.
    _NamePattern("NVIDIA A100 80GB PCIe", (r"\ba100\b", r"pcie", r"\b80\s*gb")),
    _NamePattern(
        "NVIDIA A100 40GB PCIe",
        (r"\ba100\b", r"pcie"),
        if_memory_above_gib=(60, "NVIDIA A100 80GB PCIe"),
    ),
    _NamePattern("NVIDIA A100 80GB (SXM)", (r"\ba100\b", r"\b80\s*gb")),
    _NamePattern(
        "NVIDIA A100 40GB (SXM)",
        (r"\ba100\b",),
        if_memory_above_gib=(60, "NVIDIA A100 80GB (SXM)"),
    ),
    _NamePattern("NVIDIA A10G", (r"\ba10g\b",)),
    _NamePattern("NVIDIA A10", (r"\ba10\b",)),
    # Ada data centre. \b keeps "l4" from matching "l40" and "l40" from "l40s".
    _NamePattern("NVIDIA L40S", (r"\bl40s\b",)),
    _NamePattern("NVIDIA L40", (r"\bl40\b",)),
    _NamePattern("NVIDIA L4", (r"\bl4\b",)),
    # GeForce: the Ti, D and laptop parts are different chips or clocks.
    _NamePattern(
        "NVIDIA GeForce RTX 4090", (r"rtx\s*4090\b",), none_of=(r"4090\s*(ti|d|laptop)\b",)
    ),
    _NamePattern("NVIDIA GeForce RTX 3090", (r"rtx\s*3090\b",), none_of=(r"3090\s*(ti|laptop)\b",)),
    # Volta and Turing.
    _NamePattern("Tesla V100S-PCIE-32GB", (r"\bv100s\b",)),
    _NamePattern("Tesla V100-PCIE-32GB", (r"\bv100\b", r"pcie", r"\b32\s*gb")),
    _NamePattern(
        "Tesla V100-PCIE-16GB",
        (r"\bv100\b", r"pcie"),
        if_memory_above_gib=(24, "Tesla V100-PCIE-32GB"),
    ),
    _NamePattern("Tesla V100-SXM2-32GB", (r"\bv100\b", r"\b32\s*gb")),
    _NamePattern(
        "Tesla V100-SXM2-16GB",
        (r"\bv100\b",),
        if_memory_above_gib=(24, "Tesla V100-SXM2-32GB"),
    ),
    _NamePattern("Tesla T4", (r"\bt4\b",)),
)

# Compute units per GCD, to tell MI250X from MI250 when ROCm gives one name for both.
_MI250X_CUS = 110
_MI250_CUS = 104


def _normalise_name(name: str) -> str:
    return " ".join(str(name).lower().split())


def lookup(
    device_name: str,
    *,
    memory_bytes: float | None = None,
    multiprocessors: int | None = None,
) -> Peaks | None:
    """Datasheet peaks for a device name as torch or a Kineto trace gives it, or None if unknown.

    Case-insensitive; the most specific match wins ("NVIDIA H100 PCIe" is not an H100 SXM,
    "NVIDIA L4" is not an L40S, "NVIDIA GH200 480GB" is not an H200).

    The optional hints come from ``torch.cuda.get_device_properties()`` or a trace's
    ``deviceProperties`` (``totalGlobalMem``, ``numSms``) and are used only where the name is
    ambiguous: A100/V100 names that do not state the memory size; "AMD Instinct MI250X / MI250"
    (110 compute units per GCD is an MI250X, 104 an MI250; without a hint, MI250X, 5% higher);
    and the generic "AMD Radeon Graphics" that some ROCm versions report for Instinct parts,
    which is matched only when both hints fit an MI250/MI250X GCD or an MI300X/MI325X.
    A MIG slice ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") is unknown: it has a fraction of the
    GPU's units and bandwidth, so only a measurement describes it.
    """
    name = _normalise_name(device_name)
    if not name:
        return None

    if re.search(r"\bmig\b", name):
        return None  # a MIG slice has a fraction of the SMs and bandwidth: it must be measured
    if "mi250x" in name and re.search(r"mi250\b", name):
        return _mi250_by_compute_units(multiprocessors)
    if name in ("amd radeon graphics", "amd instinct"):
        return _amd_by_properties(memory_bytes, multiprocessors)

    for pattern in _NAME_PATTERNS:
        if pattern.matches(name):
            device = pattern.device
            if pattern.if_memory_above_gib is not None and memory_bytes is not None:
                threshold_gib, bigger = pattern.if_memory_above_gib
                if memory_bytes > threshold_gib * _GIB:
                    device = bigger
            return _BY_DEVICE[device]
    return None


def _mi250_by_compute_units(multiprocessors: int | None) -> Peaks:
    if multiprocessors == _MI250_CUS:
        return _BY_DEVICE["AMD Instinct MI250 (one GCD)"]
    row = _BY_DEVICE["AMD Instinct MI250X (one GCD)"]
    if multiprocessors == _MI250X_CUS:
        return row
    # The name covers both parts; say so rather than pretend to know.
    return replace(
        row, source=row.source + " (the name covers MI250X and MI250; an MI250 is 5% slower)"
    )


def _amd_by_properties(memory_bytes: float | None, multiprocessors: int | None) -> Peaks | None:
    if memory_bytes is None or multiprocessors is None:
        return None

    def about(gib: float) -> bool:  # the driver reports a little less than the nominal size
        return 0.9 * gib * _GIB <= memory_bytes <= 1.01 * gib * _GIB

    candidates = {
        (_MI250X_CUS, 64): "AMD Instinct MI250X (one GCD)",
        (_MI250_CUS, 64): "AMD Instinct MI250 (one GCD)",
        (304, 192): "AMD Instinct MI300X",
        (304, 256): "AMD Instinct MI325X",
    }
    for (cus, gib), device in candidates.items():
        if multiprocessors == cus and about(gib):
            row = _BY_DEVICE[device]
            note = (
                f" (identified from {cus} compute units and {gib} GiB: ROCm reported a generic "
                "device name)"
            )
            return replace(row, source=row.source + note)
    return None


# ---------------------------------------------------------------------------------------------
# The cache of measured peaks
# ---------------------------------------------------------------------------------------------

_CACHE_FORMAT = "jupyter_brrr.peaks"
_CACHE_VERSION = 1


def cache_dir() -> Path:
    """jupyter_brrr's cache folder: $JUPYTER_BRRR_CACHE_DIR, else $XDG_CACHE_HOME/jupyter_brrr,
    else ~/.cache/jupyter_brrr. Not created here."""
    explicit = os.environ.get("JUPYTER_BRRR_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "jupyter_brrr"


def _peaks_dir() -> Path:
    return cache_dir() / "peaks"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.+]+", "-", text.lower()).strip("-") or "unknown"


def _torch_version() -> str:
    """The installed torch's version, without importing torch when it is not loaded yet."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return str(torch.__version__)
    return _installed_torch_version()


@functools.cache
def _installed_torch_version() -> str:
    # Reading the package metadata takes a millisecond or two: once per process is enough.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "unknown"


def _cache_path(device: str, memory_bytes: float | None, torch_version: str) -> Path:
    memory = "unknown" if memory_bytes is None else str(int(memory_bytes))
    return _peaks_dir() / f"{_slug(device)}_{memory}_torch-{_slug(torch_version)}.json"


def cache_peaks(peaks: Peaks, *, torch_version: str | None = None) -> Path:
    """Store measured peaks in the cache and return the file's path.

    The key is the device name, its memory size (``peaks.memory_bytes``) and the torch version
    (default: the installed one): a new torch (new cuBLAS) or a different board re-measures.
    """
    if not peaks.measured:
        raise ValueError("cache_peaks stores measured peaks only (peaks.measured is False)")
    version = torch_version or _torch_version()
    path = _cache_path(peaks.device, peaks.memory_bytes, version)
    entry = {
        "format": _CACHE_FORMAT,
        "version": _CACHE_VERSION,
        "device": peaks.device,
        "memory_bytes": peaks.memory_bytes,
        "torch": version,
        "written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "peaks": peaks.to_dict(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so that a reader in another kernel never sees half a file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _cache_entries() -> Iterable[dict[str, Any]]:
    folder = _peaks_dir()
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("format") == _CACHE_FORMAT and entry.get("version") == _CACHE_VERSION:
                Peaks.from_dict(entry["peaks"])  # checks that it is well formed
                yield entry
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # a damaged or foreign file is not worth failing a report over


def cached_peaks(
    device_name: str,
    *,
    memory_bytes: float | None = None,
    torch_version: str | None = None,
) -> Peaks | None:
    """A measured cache entry for this device name (case-insensitive), or None.

    Entries for the installed torch version are preferred, then the newest. Passing
    ``memory_bytes`` or ``torch_version`` restricts the search to entries with exactly that key.
    """
    wanted = _normalise_name(device_name)
    matching = [
        entry
        for entry in _cache_entries()
        if _normalise_name(entry.get("device", "")) == wanted
        and (memory_bytes is None or entry.get("memory_bytes") == float(memory_bytes))
        and (torch_version is None or entry.get("torch") == torch_version)
    ]
    if not matching:
        return None  # without asking torch's version, which takes a while to look up
    current = _torch_version()
    best = max(matching, key=lambda e: (e.get("torch") == current, str(e.get("written", ""))))
    peaks = Peaks.from_dict(best["peaks"])
    return peaks if peaks.measured else None


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------

_NO_CUDA = (
    "measure_peaks needs a CUDA GPU; none was found (torch.cuda.is_available() is False). "
    "Run it in a Python process on a machine with the GPU, with a CUDA (or ROCm) build of "
    "PyTorch; the result is cached in {cache}. Without measured peaks the report uses the "
    "datasheet table (jupyter_brrr.costs.peaks.KNOWN_GPUS) for known GPUs."
)

# Sizes tried in turn: the first that fits in free memory is used.
_MATMUL_SIZES = (8192, 4096, 2048)
_FP32_MATMUL_SIZES = (4096, 2048)  # plain FP32 is ~15x slower than bf16: a smaller product
_COPY_BYTES = (2 * _GIB, _GIB, _GIB // 2, _GIB // 4)
_REST_S = 0.1  # idle before each timed burst: 50 ms gave the H200 its full clocks back
_WARMUP_REPS = 3  # untimed calls right before the timed ones...
_MIN_WARMUP_S = 0.005  # ...and at least this much GPU work (small copies on slow GPUs)
_REPS = 10


def measure_peaks(
    device: int | str | None = None, *, cache: bool = True, force: bool = False
) -> Peaks:
    """Measure this GPU's peaks in a few seconds, caching the result per device.

    Matmul FLOP/s on random normal data (zeros run faster: less bit switching, less power)
    for bf16 and fp16 (8192^3), tf32 (8192^3, TF32 allowed for the duration only) and plain
    fp32 (4096^3, TF32 off for the duration), and device memory bandwidth from a 2 GiB
    device-to-device copy counting bytes read plus written. Each is warmed up, then timed with
    CUDA events over 10 back-to-back repetitions, and the median is kept. bf16 and tf32 are
    skipped on NVIDIA GPUs older than Ampere (no such tensor cores: the roofline falls back to
    fp32). An out-of-memory error retries smaller sizes. Dtypes not measured (fp64, fp8, int8)
    are taken from the datasheet table when the GPU is in it, and ``source`` says so.

    These are burst peaks, as datasheets give: each timed burst follows a short rest. On the
    H200 here that gives about 800 TFLOP/s bf16 (datasheet dense: 989) and 4.27 TB/s
    (datasheet: 4.8 TB/s); an earlier measurement there gave 787 TFLOP/s and 4.24 TB/s. After
    ~30 ms of non-stop bf16 matmuls the H200 reaches its 700 W limit and settles near
    690 TFLOP/s, so long GEMM-bound stretches can sit at ~85% of the measured peak.

    ``device`` is a CUDA device index or name like ``"cuda:1"`` (default: the current device).
    With ``cache`` (default), an entry for the same device name, memory size and torch version
    is returned without measuring, and a new measurement is stored; ``force`` re-measures.
    Raises RuntimeError when no CUDA GPU is present.
    """
    import torch  # lazily: importing jupyter_brrr.costs.peaks must stay cheap

    if not torch.cuda.is_available():
        raise RuntimeError(_NO_CUDA.format(cache=_peaks_dir()))
    index = _device_index(torch, device)
    name = torch.cuda.get_device_name(index)
    cuda: Any = torch.cuda  # its stubs leave the device properties untyped
    memory = float(cuda.get_device_properties(index).total_memory)
    version = str(torch.__version__)

    if cache and not force:
        hit = cached_peaks(name, memory_bytes=memory, torch_version=version)
        if hit is not None:
            return hit

    with torch.cuda.device(index):
        peaks = _measure(torch, name, memory)
    if cache:
        cache_peaks(peaks, torch_version=version)
    return peaks


def _device_index(torch: Any, device: int | str | None) -> int:
    if device is None:
        return int(torch.cuda.current_device())
    dev = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    if dev.type != "cuda":
        raise ValueError(f"measure_peaks measures a CUDA device, not {device!r}")
    return int(dev.index) if dev.index is not None else int(torch.cuda.current_device())


def _measure(torch: Any, name: str, memory: float) -> Peaks:
    is_rocm = getattr(torch.version, "hip", None) is not None
    major, _minor = torch.cuda.get_device_capability()
    # NVIDIA before Ampere (sm_80) has no bf16 or TF32 tensor cores; ROCm reports gfx
    # versions here, and its matmuls take bf16 on every Instinct part.
    has_ampere_dtypes = is_rocm or major >= 8

    flops: dict[str, float] = {}
    done: list[str] = []
    plan: list[tuple[str, Any, tuple[int, ...], bool]] = []
    if has_ampere_dtypes:
        plan.append(("bf16", torch.bfloat16, _MATMUL_SIZES, False))
    plan.append(("fp16", torch.float16, _MATMUL_SIZES, False))
    if has_ampere_dtypes:
        plan.append(("tf32", torch.float32, _MATMUL_SIZES, True))
    plan.append(("fp32", torch.float32, _FP32_MATMUL_SIZES, False))

    try:
        for key, dtype, sizes, tf32 in plan:
            with _tf32_matmuls(torch, tf32):
                result = _first_that_fits(
                    torch, sizes, lambda n, d=dtype: _matmul_rate(torch, n, d)
                )
            if result is not None:
                size, rate = result
                flops[key] = rate
                done.append(f"{key} {size}^3")
        copy = _first_that_fits(torch, _COPY_BYTES, lambda nbytes: _copy_rate(torch, nbytes))
    finally:
        torch.cuda.empty_cache()  # give the benchmark's blocks back to other processes
    if copy is None or "fp32" not in flops:
        raise RuntimeError(
            f"measure_peaks could not fit its benchmarks (about 0.5 GiB at their smallest) in "
            f"the memory this process can use on {name!r}: free some (del tensors, then "
            "torch.cuda.empty_cache()) and try again"
        )
    copy_bytes, bandwidth = copy

    today = datetime.date.today().isoformat()
    source = (
        f"measured on this GPU {today} (matmuls: {', '.join(done)}; "
        f"{_size_text(copy_bytes)} device-to-device copy)"
    )
    # Keep the datasheet's figures for what was not measured (fp64, fp8, int8) rather than
    # fall back to a 16-bit rate that would put a good fp8 kernel above 100% of its peak.
    row = lookup(name, memory_bytes=memory, multiprocessors=_multiprocessors(torch))
    if row is not None:
        borrowed = [key for key in DTYPES if key in row.flops and key not in flops]
        for key in borrowed:
            flops[key] = row.flops[key]
        if borrowed:
            source += f"; {', '.join(borrowed)} from {row.source}"
    return Peaks(
        device=name,
        flops=flops,
        bandwidth=bandwidth,
        memory_bytes=memory,
        source=source,
        measured=True,
    )


def _multiprocessors(torch: Any) -> int | None:
    try:
        return int(
            torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        )
    except (AttributeError, RuntimeError):
        return None


def _size_text(nbytes: int) -> str:
    return f"{nbytes / _GIB:g} GiB" if nbytes >= _GIB else f"{nbytes / 2**20:g} MiB"


def _first_that_fits(
    torch: Any, sizes: Iterable[int], bench: Callable[[int], float]
) -> tuple[int, float] | None:
    """(size, rate) for the first size whose benchmark does not run out of memory."""
    for size in sizes:
        try:
            return size, bench(size)
        except torch.cuda.OutOfMemoryError:
            pass  # the failed try's tensors are freed once this handler (and its traceback) ends
        torch.cuda.empty_cache()  # then hand their blocks back before the smaller try
    return None


def _matmul_rate(torch: Any, n: int, dtype: Any) -> float:
    """FLOP/s of an n x n x n matmul. Random normal data: zeros run faster (less switching)."""
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    out = torch.empty(n, n, device="cuda", dtype=dtype)
    # The tensors are freed when this function returns (the caller then empties the cache).
    seconds = _median_seconds(torch, lambda: torch.mm(a, b, out=out))
    return 2.0 * n**3 / seconds


def _copy_rate(torch: Any, nbytes: int) -> float:
    """Device memory bandwidth in bytes/s from a copy of nbytes: nbytes read + nbytes written."""
    count = nbytes // 4
    src = torch.randn(count, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    seconds = _median_seconds(torch, lambda: dst.copy_(src))
    return 2.0 * count * 4 / seconds


def _median_seconds(torch: Any, fn: Callable[[], object]) -> float:
    """Median GPU time of fn() in seconds over a short burst, timed with CUDA events."""

    def timed_once() -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    timed_once()  # the first call pays for cuBLAS handles, kernel choice, allocation
    estimate = max(timed_once(), 1e-6)
    # A big GPU draws its full power within ~30 ms of dense matmuls and then lowers its clocks
    # (an H200 goes from ~800 to ~690 TFLOP/s bf16); a short idle resets that. So: rest, a
    # few warm-up calls (clocks up, caches and allocator settled), and a short timed burst.
    time.sleep(_REST_S)
    for _ in range(max(_WARMUP_REPS, min(50, math.ceil(_MIN_WARMUP_S / estimate)))):
        fn()
    reps = _REPS if estimate < 0.1 else max(3, int(1.0 / estimate))  # a slow GPU: ~1 s at most
    # One event pair per repetition, all queued before one synchronisation, so that the GPU
    # runs back to back and host jitter does not enter the times.
    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(reps)
    ]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) / 1e3 for start, end in events)


@contextmanager
def _tf32_matmuls(torch: Any, allow: bool) -> Generator[None, None, None]:
    """Allow or forbid TF32 in CUDA float32 matmuls for a while, then restore every setting.

    PyTorch >= 2.9 has two APIs for this (``allow_tf32`` / ``set_float32_matmul_precision``,
    and ``fp32_precision``), and reading the legacy one raises once the two were set to
    disagree. The legacy setter changes both views consistently, so it is what we set; on exit
    the legacy precision is restored first (that also writes the new views, CPU's included),
    then the new views as they were read.
    """
    try:
        legacy: str | None = torch.get_float32_matmul_precision()
    except RuntimeError:  # the user set the new API to disagree with the legacy one
        legacy = None
    new: list[tuple[Any, str]] = []
    for holder in (torch.backends.cuda.matmul, getattr(torch.backends, "mkldnn", None)):
        holder = getattr(holder, "matmul", holder)  # mkldnn keeps it one level down
        with suppress(AttributeError):  # torch < 2.9 has no new API
            new.append((holder, holder.fp32_precision))  # pyright: ignore[reportOptionalMemberAccess]  # the holder is there: AttributeError is suppressed otherwise
    torch.backends.cuda.matmul.allow_tf32 = allow
    try:
        yield
    finally:
        if legacy is not None:
            torch.set_float32_matmul_precision(legacy)
        for holder, value in new:
            holder.fp32_precision = value


# ---------------------------------------------------------------------------------------------
# What the report uses
# ---------------------------------------------------------------------------------------------


def peaks_for(
    device_name: str,
    *,
    measure_if_unknown: bool = True,
    memory_bytes: float | None = None,
    multiprocessors: int | None = None,
) -> tuple[Peaks | None, str]:
    """The peaks a report about ``device_name`` should use, and a note saying which and why.

    In order: a measured cache entry for that name (:func:`cached_peaks`); else the datasheet
    table (:func:`lookup`, with the optional hints); else, for an unknown GPU, a measurement
    now (:func:`measure_peaks`) when a CUDA GPU of that name is present and
    ``measure_if_unknown``; else None, with a note that says what to do.
    """
    shown = str(device_name).strip()
    if not shown or _normalise_name(shown) == "cpu":
        return None, "No GPU in this run, so no roofline: device peaks exist for GPUs only."

    measured = cached_peaks(shown)
    if measured is not None:
        return measured, (
            f"Peaks: {measured.source}, from jupyter_brrr's cache of measured peaks. "
            "Run jupyter_brrr.measure_peaks(force=True) on this GPU to measure them again."
        )

    row = lookup(shown, memory_bytes=memory_bytes, multiprocessors=multiprocessors)
    if row is not None:
        return row, (
            f"Peaks: {row.source}. Run jupyter_brrr.measure_peaks() on this GPU to use measured "
            "ones (the best matmuls reach about 80% of datasheet peaks)."
        )

    how = (
        "On a machine with this GPU, run jupyter_brrr.measure_peaks() once: the result is "
        "cached there (in the folder jupyter_brrr.costs.peaks.cache_dir() names, under peaks/; copy "
        "the file into the same folder here to use it on this machine). Or give the peaks "
        "yourself: jupyter_brrr.costs.peaks.Peaks(device=..., flops={'bf16': ..., 'fp32': ...}, "
        "bandwidth=...)."
    )
    index, here = _local_gpu_named(shown)
    if index is None:
        where = f"the GPU here is {here!r}" if here else "there is no CUDA GPU here to measure"
        return None, (
            f"Unknown GPU {shown!r}: no peaks are known for it and {where}, so the roofline "
            f"cannot be drawn. {how}"
        )
    if not measure_if_unknown:
        return None, (
            f"Unknown GPU {shown!r}: no peaks are known for it, so the roofline cannot be "
            "drawn. Run jupyter_brrr.measure_peaks() to measure them on this GPU (a few "
            "seconds; the result is cached)."
        )
    try:
        peaks = measure_peaks(index, cache=False)
    except (RuntimeError, ValueError) as error:  # out of memory, a busy or broken device
        return None, f"Unknown GPU {shown!r}: measuring its peaks failed ({error}). {how}"
    try:
        cache_peaks(peaks)
        cached = (
            "They are cached for next time (jupyter_brrr.costs.peaks.cache_dir() names the folder)."
        )
    except OSError as error:  # a read-only home: the measurement still serves this report
        # strerror, not str(error): that one holds the cache's path, which stays off reports.
        cached = f"They could not be cached ({error.strerror or type(error).__name__})."
    return peaks, (
        f"Unknown GPU {shown!r}: using peaks measured on it now, {peaks.source}. {cached}"
    )


def _local_gpu_named(name: str) -> tuple[int | None, str | None]:
    """(index, None) of a CUDA device with this name here, else (None, a device name or None)."""
    if "torch" not in sys.modules and not _gpu_driver_present():
        return None, None  # no GPU can be here: reading a trace need not import torch
    try:
        import torch  # only now: the name is unknown, and a GPU of that name may be here
    except ImportError:
        return None, None
    try:
        if not torch.cuda.is_available():
            return None, None
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except RuntimeError:  # a driver that cannot be initialised
        return None, None
    for index, here in enumerate(names):
        if _normalise_name(here) == _normalise_name(name):
            return index, None
    return None, (names[0] if names else None)


# Where a GPU driver shows itself: NVIDIA's and AMD's kernel drivers, WSL's GPU device, and
# the folders the CUDA and ROCm driver libraries are installed in (a container that is given a
# GPU sees its device files; one given only the library finds it on the loader's path).
_DRIVER_FILES = ("/proc/driver/nvidia", "/dev/nvidiactl", "/dev/kfd", "/dev/dxg")
_DRIVER_LIBRARIES = ("libcuda.so.1", "libcuda.so", "libamdhip64.so")
_LIBRARY_FOLDERS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/cuda/compat",
    "/usr/lib/wsl/lib",
    "/opt/rocm/lib",
)


@functools.cache
def _gpu_driver_present() -> bool:
    """Whether a GPU driver may be here, found without importing torch (which takes a second)."""
    if sys.platform != "linux":
        return True  # no cheap test known there: ask torch
    if any(os.path.exists(p) for p in _DRIVER_FILES):
        return True
    folders = [*os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep), *_LIBRARY_FOLDERS]
    return any(
        os.path.exists(os.path.join(folder, library))
        for folder in folders
        if folder
        for library in _DRIVER_LIBRARIES
    )


# --- the interconnect ---------------------------------------------------------------------

# GPUs one node links with its fast interconnect: the split of one run stays within it.
NODE_GPUS = 8

# Peer-to-peer bandwidth per GPU and direction, bytes/s: what a ring all-reduce's bus bandwidth
# can at most reach. NVLink and Infinity Fabric figures are the datasheets' totals (both
# directions) halved; PCIe parts use their PCIe link (x16, per direction).
_NVLINK4 = "NVLink 4: 900 GB/s per GPU both directions (NVIDIA H100/H200 datasheets)"
_NVLINK3 = "NVLink 3: 600 GB/s per GPU both directions (NVIDIA A100 datasheet)"
_NVLINK2 = "NVLink 2: 300 GB/s per GPU both directions (NVIDIA V100 datasheet)"
_PCIE3 = "PCIe 3.0 x16: 16 GB/s per direction"
_PCIE4 = "PCIe 4.0 x16: 32 GB/s per direction"
_PCIE5 = "PCIe 5.0 x16: 64 GB/s per direction"
INTERCONNECTS: dict[str, tuple[float, str]] = {
    "Tesla V100-SXM2-16GB": (150e9, _NVLINK2),
    "Tesla V100-SXM2-32GB": (150e9, _NVLINK2),
    "Tesla V100-PCIE-16GB": (16e9, _PCIE3),
    "Tesla V100-PCIE-32GB": (16e9, _PCIE3),
    "Tesla V100S-PCIE-32GB": (16e9, _PCIE3),
    "Tesla T4": (16e9, _PCIE3),
    "NVIDIA A100 40GB (SXM)": (300e9, _NVLINK3),
    "NVIDIA A100 80GB (SXM)": (300e9, _NVLINK3),
    "NVIDIA A100 40GB PCIe": (32e9, _PCIE4),
    "NVIDIA A100 80GB PCIe": (32e9, _PCIE4),
    "NVIDIA A10": (32e9, _PCIE4),
    "NVIDIA A10G": (32e9, _PCIE4),
    "NVIDIA GeForce RTX 3090": (32e9, _PCIE4),
    "NVIDIA L4": (32e9, _PCIE4),
    "NVIDIA L40": (32e9, _PCIE4),
    "NVIDIA L40S": (32e9, _PCIE4),
    "NVIDIA GeForce RTX 4090": (32e9, _PCIE4),
    "NVIDIA H100 SXM": (450e9, _NVLINK4),
    "NVIDIA H100 PCIe": (64e9, _PCIE5),
    "NVIDIA H100 NVL": (
        300e9,
        "NVLink bridge: 600 GB/s both directions (NVIDIA H100 NVL datasheet)",
    ),
    "NVIDIA GH200 480GB": (450e9, _NVLINK4),
    "NVIDIA GH200 144G HBM3e": (450e9, _NVLINK4),
    "NVIDIA H200": (450e9, _NVLINK4),
    "NVIDIA H200 NVL": (
        450e9,
        "NVLink bridge: 900 GB/s both directions (NVIDIA H200 NVL datasheet)",
    ),
    "AMD Instinct MI300X": (
        448e9,
        "Infinity Fabric: 896 GB/s peer bandwidth (AMD MI300X datasheet)",
    ),
    "AMD Instinct MI325X": (
        448e9,
        "Infinity Fabric: 896 GB/s peer bandwidth (AMD MI325X datasheet)",
    ),
}


def interconnect(device: str) -> tuple[float, str] | None:
    """The per-direction peer bandwidth of this GPU's interconnect and its source, or None."""
    row = lookup(device)
    if row is None:
        return None
    return INTERCONNECTS.get(row.device)
