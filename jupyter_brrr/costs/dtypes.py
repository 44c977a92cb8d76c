"""Trace type names (as the profiler writes the C++ types): their peak keys, sizes, and how
torch promotes them."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "HALF_TYPES",
    "SCALAR_TYPE_CODES",
    "TYPES",
    "dtype_key",
    "dtype_size",
    "type_kind",
    "widest",
]

# Trace type name (as the profiler writes the C++ type) -> (peak key, bytes per element).
# 8-bit integers map to "int8" (integer GEMMs run on the int8 tensor cores). Wider integers and
# bool map to "fp32": they run on the CUDA cores, whose integer rate is of the order of the fp32
# (non tensor-core) rate, never the int8 tensor-core rate; in practice such ops are memory-bound.
TYPES: dict[str, tuple[str, int]] = {
    "double": ("fp64", 8),
    "float": ("fp32", 4),
    "c10::Half": ("fp16", 2),
    "c10::BFloat16": ("bf16", 2),
    "c10::Float8_e4m3fn": ("fp8", 1),
    "c10::Float8_e5m2": ("fp8", 1),
    "c10::Float8_e4m3fnuz": ("fp8", 1),
    "c10::Float8_e5m2fnuz": ("fp8", 1),
    "c10::Float8_e8m0fnu": ("fp8", 1),
    # Two fp4 values per byte (the shape counts bytes). No fp4 key: fp8 is the narrowest peak.
    "c10::Float4_e2m1fn_x2": ("fp8", 1),
    "c10::complex<c10::Half>": ("fp16", 4),
    "c10::complex<float>": ("fp32", 8),
    "c10::complex<double>": ("fp64", 16),
    "signed char": ("int8", 1),
    "unsigned char": ("int8", 1),
    "c10::qint8": ("int8", 1),
    "c10::quint8": ("int8", 1),
    "c10::quint4x2": ("int8", 1),
    "c10::qint32": ("fp32", 4),
    "bool": ("fp32", 1),
    "short int": ("fp32", 2),
    "short unsigned int": ("fp32", 2),
    "int": ("fp32", 4),
    "unsigned int": ("fp32", 4),
    "long int": ("fp32", 8),
    "long unsigned int": ("fp32", 8),
    # Older PyTorch releases spell some integer types the short way.
    "long": ("fp32", 8),
    "unsigned long": ("fp32", 8),
    "short": ("fp32", 2),
    "unsigned short": ("fp32", 2),
}

# c10::ScalarType codes, as Concrete Inputs write a dtype argument ("15" is bfloat16).
SCALAR_TYPE_CODES: dict[int, str] = {
    0: "unsigned char",
    1: "signed char",
    2: "short int",
    3: "int",
    4: "long int",
    5: "c10::Half",
    6: "float",
    7: "double",
    8: "c10::complex<c10::Half>",
    9: "c10::complex<float>",
    10: "c10::complex<double>",
    11: "bool",
    12: "c10::qint8",
    13: "c10::quint8",
    14: "c10::qint32",
    15: "c10::BFloat16",
    16: "c10::quint4x2",
    23: "c10::Float8_e5m2",
    24: "c10::Float8_e4m3fn",
    25: "c10::Float8_e5m2fnuz",
    26: "c10::Float8_e4m3fnuz",
    27: "short unsigned int",
    28: "unsigned int",
    29: "long unsigned int",
    44: "c10::Float8_e8m0fnu",
    45: "c10::Float4_e2m1fn_x2",
}

HALF_TYPES = frozenset({"c10::Half", "c10::BFloat16"})


def dtype_key(type_name: str) -> str | None:
    """The peak key of a trace type name: ``"c10::BFloat16"`` -> ``"bf16"``, ``"float"`` -> ``"fp32"``.

    8-bit integers give ``"int8"``; wider integers and bool give ``"fp32"`` (see ``TYPES``).
    None for non-tensor types (``"Scalar"``, ``"ScalarList"``, ``"TensorList"``, ``""``).
    """
    info = TYPES.get(type_name)
    return info[0] if info else None


def dtype_size(type_name: str) -> int | None:
    """Bytes per element of a trace type name; None for non-tensor types."""
    info = TYPES.get(type_name)
    return info[1] if info else None


_INT_TYPES = frozenset(
    {
        "signed char",
        "unsigned char",
        "short int",
        "short unsigned int",
        "int",
        "unsigned int",
        "long int",
        "long unsigned int",
        "long",
        "unsigned long",
        "short",
        "unsigned short",
        "c10::qint8",
        "c10::quint8",
        "c10::quint4x2",
        "c10::qint32",
    }
)


def type_kind(type_name: str) -> int:
    """Type promotion category: bool 0 < integer 1 < floating 2 < complex 3."""
    if type_name == "bool":
        return 0
    if type_name in _INT_TYPES:
        return 1
    return 3 if type_name.startswith("c10::complex") else 2


def widest(type_names: Sequence[str]) -> str:
    """The promoted type among types of one category (half and bfloat16 together give float)."""
    names = set(type_names)
    if names >= HALF_TYPES:
        return "float"
    return max(names, key=lambda name: (TYPES[name][1], name))
