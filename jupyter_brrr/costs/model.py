# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``_Args.tensor(i)``, None where the trace lacks that
# tensor; a formula that needs it then fails on the None (AttributeError, TypeError), which
# ``op_cost`` turns into "no model for this call" (``_LAYOUT_ERRORS``). Checking each access
# would double the formulas for the same outcome.
"""Cost model: FLOPs and minimum bytes moved per PyTorch op, from its input shapes and dtypes.

An exported Kineto trace carries no FLOP counts. For each CPU op it records ``Input Dims`` (one
shape per argument, ``[]`` for scalars and non-tensors), ``Input type`` (``"float"``,
``"c10::BFloat16"``, ``"long int"``, ``"Scalar"``, ``"ScalarList"``, ``""`` for None, ...) and
``Concrete Inputs`` (the values of scalar arguments as text: ``"[-1, 1024]"``, ``"True"``, ``"0.5"``).
This module turns those into an :class:`OpCost`, with one formula per op in a registry.

Conventions
-----------
FLOPs
    A multiply-add counts 2. GEMM, convolution and attention formulas are those of
    ``torch.utils.flop_counter`` (re-derived here, so importing this module does not import torch;
    the tests check them against ``FlopCounterMode``). Where we differ, on purpose:

    * causal attention counts half the FLOPs of full attention (``flop_counter`` ignores the mask);
    * the weight gradient of a *grouped* convolution counts the same FLOPs as its forward
      (``flop_counter`` counts ``groups`` times more); identical for ``groups == 1``;
    * ``addmm`` / ``baddbmm`` / ``linear`` count ``2*M*N*K`` like ``flop_counter``: the bias
      epilogue (``M*N`` adds) is left out, under ``1/(2K)`` of the total.

    Elementwise ops count FLOPs per output element: 1 for arithmetic, comparisons and single math
    functions (``exp``, ``cos``, ``tanh``, ``erf``, ``sqrt``...); composite activations count the
    sum of their parts (``sigmoid`` 3, ``silu`` 4, ``gelu`` 5 ...; see ``_UNARY``). Norms, softmax
    and reductions count a few FLOPs per input element (see their sections). These ops are
    memory-bound by a wide margin, so the exact constant does not change the verdict.
Bytes
    The minimum traffic: every tensor input the computation needs is read once and every output
    written once, at its dtype's size. Scalars and non-tensor arguments move nothing; a 0-d tensor
    (dims ``[]`` with a tensor type) is one element. Tensors passed only for their shape or for an
    output that was not requested (``convolution_backward`` with an ``output_mask``, the ``self`` of
    pooling backwards) are not counted; gathers (``embedding``, ``index_select``, ``gather``) read
    only the rows they fetch. An input that is a broadcast (expanded) view, a stride of 0 in the
    trace's ``Input Strides``, is read once: its repeats come from cache (a bias added to every
    row, position ids expanded over a batch, a gather's row index expanded over the columns).
    The ``out=`` tensor of an ``out`` overload is the output, not an input.
dtype
    The key used to pick the device peak: ``"fp64"``, ``"fp32"``, ``"fp16"``, ``"bf16"``, ``"fp8"``,
    ``"int8"``; see :func:`dtype_key`.
Wrappers
    Some modelled ops only dispatch to other modelled ops (``aten::linear`` -> ``aten::addmm``,
    ``aten::matmul`` -> ``aten::mm``/``bmm``, ``aten::conv2d`` -> ``aten::convolution`` -> ...
    -> ``aten::cudnn_convolution``, ``aten::layer_norm`` -> ``aten::native_layer_norm``,
    ``aten::scaled_dot_product_attention`` -> a fused kernel op). They get a model too, so that a
    trace whose inner ops are missing still gets numbers, but an analysis must count only the
    innermost modelled op of a call stack, or the cost is counted twice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..trace.frames import group_codes

__all__ = ["OpCost", "add_costs", "dtype_key", "dtype_size", "has_model", "op_cost"]


@dataclass(frozen=True)
class OpCost:
    """What one op costs: arithmetic, minimum memory traffic, and what kind of op it is."""

    flops: float  # floating-point operations (a multiply-add counts 2)
    bytes: float  # minimum traffic: each input read once, each output written once
    category: str  # matmul, conv, attention, elementwise, reduction, norm, softmax, embedding, copy, other
    dtype: str  # compute dtype key for picking the device peak: fp64, fp32, fp16, bf16, fp8, int8
    # How it was made: "formula" (a formula of this module), "shapes" (outputs on the meta
    # device, FLOPs by flop_counter or per element: see _meta), "estimate" (compiled kernels
    # and optimizer steps whose shapes the trace leaves out: see each model).
    source: str = "formula"


class _Launch(NamedTuple):
    """What an op's kernels say about its work, for the ops whose shapes the trace leaves out
    (lists of more than 30 tensors, advanced-indexing index lists): see :func:`launch_hint`."""

    dtype: str | None  # trace type name of the kernel's element type
    blocks: float | None  # blocks launched by its multi-tensor or indexing kernels
    per_block: int | None  # elements per block of an index_elementwise_kernel<nt, vt>
    # The trace's parameters (what torch::autograd::AccumulateGrad received): their
    # multi-tensor chunks, elements and count, to size an optimizer's lists exactly.
    params: tuple[int, int, int] | None = None


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------

# Trace type name (as the profiler writes the C++ type) -> (peak key, bytes per element).
# 8-bit integers map to "int8" (integer GEMMs run on the int8 tensor cores). Wider integers and
# bool map to "fp32": they run on the CUDA cores, whose integer rate is of the order of the fp32
# (non tensor-core) rate, never the int8 tensor-core rate; in practice such ops are memory-bound.
_TYPES: dict[str, tuple[str, int]] = {
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
_SCALAR_TYPE_CODES: dict[int, str] = {
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

_HALF_TYPES = frozenset({"c10::Half", "c10::BFloat16"})


def dtype_key(type_name: str) -> str | None:
    """The peak key of a trace type name: ``"c10::BFloat16"`` -> ``"bf16"``, ``"float"`` -> ``"fp32"``.

    8-bit integers give ``"int8"``; wider integers and bool give ``"fp32"`` (see ``_TYPES``).
    None for non-tensor types (``"Scalar"``, ``"ScalarList"``, ``"TensorList"``, ``""``).
    """
    info = _TYPES.get(type_name)
    return info[0] if info else None


def dtype_size(type_name: str) -> int | None:
    """Bytes per element of a trace type name; None for non-tensor types."""
    info = _TYPES.get(type_name)
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


def _kind(type_name: str) -> int:
    """Type promotion category: bool 0 < integer 1 < floating 2 < complex 3."""
    if type_name == "bool":
        return 0
    if type_name in _INT_TYPES:
        return 1
    return 3 if type_name.startswith("c10::complex") else 2


def _widest(type_names: Sequence[str]) -> str:
    """The promoted type among types of one category (half and bfloat16 together give float)."""
    names = set(type_names)
    if names >= _HALF_TYPES:
        return "float"
    return max(names, key=lambda name: (_TYPES[name][1], name))


# --------------------------------------------------------------------------------------------
# Arguments as the trace records them
# --------------------------------------------------------------------------------------------


class _T(NamedTuple):
    """A tensor: its shape and trace type name, and for an input that is a broadcast
    (expanded) view, the elements it holds in memory (``distinct``: its shape without the
    dimensions of stride 0, from the trace's Input Strides)."""

    shape: tuple[int, ...]
    type: str
    distinct: int | None = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def elements(self) -> int:
        """The elements in memory: a broadcast view's repeats are read once (from cache)."""
        return self.numel if self.distinct is None else self.distinct

    @property
    def nbytes(self) -> int:
        return self.elements * _TYPES[self.type][1]


@lru_cache(maxsize=4096)
def _parse(text: str) -> Any:
    """A Concrete Inputs string as a Python value: "" -> None, "[1, 2]" -> [1, 2], "0." -> 0.0."""
    text = text.strip()
    if not text:
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_parse(part) for part in inner.split(",")] if inner else []
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


class _Args:
    """Positional access to one op's recorded arguments."""

    __slots__ = ("concrete", "dims", "strides", "types")

    def __init__(
        self,
        dims: Sequence[Any],
        types: Sequence[str],
        concrete: Sequence[str] | None,
        strides: Sequence[Any] | None = None,
    ):
        self.dims = dims
        self.types = types
        self.concrete = concrete
        self.strides = strides

    def __len__(self) -> int:
        return len(self.types)

    def tensor(self, i: int) -> _T | None:
        """Argument ``i`` as a tensor, or None when it is absent, None, a scalar or a list."""
        if i >= len(self.types) or self.types[i] not in _TYPES:
            return None
        shape = tuple(map(int, self.dims[i]))
        return _T(shape, self.types[i], self._distinct(i, shape))

    def _distinct(self, i: int, shape: tuple[int, ...]) -> int | None:
        """The elements argument ``i`` holds in memory when it is a broadcast view (a stride of
        0 in a dimension longer than 1); None otherwise, or without recorded strides."""
        if self.strides is None or i >= len(self.strides):
            return None
        strides = self.strides[i]
        if not isinstance(strides, _SEQUENCES) or len(strides) != len(shape):
            return None
        if not any(stride == 0 and size > 1 for size, stride in zip(shape, strides, strict=True)):
            return None
        return math.prod(size for size, stride in zip(shape, strides, strict=True) if stride != 0)

    def tensors(self, positions: Sequence[int] | None = None) -> list[_T]:
        """The tensor arguments among ``positions`` (all arguments by default)."""
        positions = range(len(self.types)) if positions is None else positions
        return [t for t in (self.tensor(i) for i in positions) if t is not None]

    def value(self, i: int, default: Any = None) -> Any:
        """The concrete value of argument ``i``; ``default`` when unrecorded or None."""
        if self.concrete is None or i >= len(self.concrete) or not self.concrete[i]:
            return default
        value = _parse(self.concrete[i])
        return default if value is None else value

    def ints(self, i: int, n: int, default: int | None = None) -> list[int] | None:
        """An int-list argument (stride, padding...) expanded to ``n`` entries; None if unknown."""
        value = self.value(i)
        if value is None or value == []:
            return None if default is None else [default] * n
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
            return None  # e.g. padding="same", which the trace does not record
        return value * n if len(value) == 1 else value

    def scalar_type(self, i: int) -> str | None:
        """A ScalarType argument (a dtype code) as a trace type name."""
        code = self.value(i)
        if isinstance(code, bool) or not isinstance(code, int):
            return None  # a flag at this position: another overload
        return _SCALAR_TYPE_CODES.get(code)

    def mask(self, i: int, n: int) -> list[bool]:
        """An output_mask argument; all True when unrecorded."""
        value = self.value(i)
        if isinstance(value, list) and len(value) == n:
            return [bool(v) for v in value]
        return [True] * n


def _cost(
    category: str,
    flops: float,
    reads: Sequence[_T | None],
    writes: Sequence[_T | None],
    compute: str,
) -> OpCost:
    # A None among the tensors (absent from the trace) fails here: no model for the call.
    traffic = sum(t.nbytes for t in reads) + sum(t.nbytes for t in writes)
    return OpCost(float(flops), float(traffic), category, _TYPES[compute][0])


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast shape of several shapes (numpy rules)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis}
        big = sizes - {1}
        out.append(max(big) if big else 1)
    return tuple(out)


def _promote(tensors: Sequence[_T]) -> str:
    """Result type of an op on these tensors, following torch's rule for 0-d operands.

    0-d tensors (and wrapped Python numbers) take part only when of a higher category than every
    dimensioned operand; a Python float arrives as a 0-d "double" but gives the default float.
    """
    dimensioned = [t for t in tensors if t.shape] or list(tensors)
    top = max(_kind(t.type) for t in dimensioned)
    higher = [t for t in tensors if not t.shape and _kind(t.type) > top]
    if higher:
        best = max(higher, key=lambda t: _kind(t.type)).type
        return "float" if best == "double" else best
    return _widest([t.type for t in dimensioned if _kind(t.type) == top])


def _stat_type(t: _T | None) -> str:
    """The dtype of saved statistics (mean, rstd): float for half inputs, as the kernels use."""
    return "float" if t.type in _HALF_TYPES else t.type


# --------------------------------------------------------------------------------------------
# Matrix products (formulas of torch.utils.flop_counter: mm_flop, bmm_flop, ...)
# --------------------------------------------------------------------------------------------


def _out_type(args: _Args, position: int, default: str) -> str:
    """The type of an ``out=`` tensor at ``position`` when the out overload was called."""
    out = args.tensor(position)
    return out.type if out is not None else default


def _mm(args: _Args) -> OpCost | None:
    """mm(self[M,K], mat2[K,N]): 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    out = _T((m, n), _out_type(args, 2, a.type))
    return _cost("matmul", 2 * m * n * k, [a, b], [out], a.type)


def _addmm(args: _Args) -> OpCost | None:
    """addmm(bias, mat1[M,K], mat2[K,N], beta, alpha): 2*M*N*K; the bias add is not counted."""
    bias, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (m, k), (_, n) = a.shape, b.shape
    out = _T((m, n), _out_type(args, 5, a.type))
    return _cost("matmul", 2 * m * n * k, [bias, a, b], [out], a.type)


def _bmm(args: _Args) -> OpCost | None:
    """bmm(self[B,M,K], mat2[B,K,N]): 2*B*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = _T((batch, m, n), _out_type(args, 2, a.type))
    return _cost("matmul", 2 * batch * m * n * k, [a, b], [out], a.type)


def _baddbmm(args: _Args) -> OpCost | None:
    """baddbmm(self, batch1[B,M,K], batch2[B,K,N], beta, alpha): 2*B*M*N*K."""
    c, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = _T((batch, m, n), _out_type(args, 5, a.type))
    return _cost("matmul", 2 * batch * m * n * k, [c, a, b], [out], a.type)


def _addbmm(args: _Args) -> OpCost | None:
    """addbmm(self[M,N], batch1[B,M,K], batch2[B,K,N]): sum over the batch, 2*B*M*N*K."""
    c, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = _T((m, n), _out_type(args, 5, a.type))
    return _cost("matmul", 2 * batch * m * n * k, [c, a, b], [out], a.type)


def _mv(args: _Args, first: int = 0) -> OpCost | None:
    """mv(mat[M,N], vec[N]) and addmv(self, mat, vec): 2*M*N."""
    extra = args.tensors(range(first))
    mat, vec = args.tensor(first), args.tensor(first + 1)
    m, n = mat.shape
    out = _T((m,), mat.type)
    return _cost("matmul", 2 * m * n, [*extra, mat, vec], [out], mat.type)


def _dot(args: _Args) -> OpCost | None:
    """dot(a[N], b[N]): 2*N."""
    a, b = args.tensor(0), args.tensor(1)
    return _cost("matmul", 2 * a.numel, [a, b], [_T((), a.type)], a.type)


def _matmul(args: _Args) -> OpCost | None:
    """matmul(a, b) with torch's 1-D and batch-broadcasting rules: 2 * batch * M * N * K.

    A wrapper: it dispatches to mm / bmm / dot (see the module docstring).
    """
    a, b = args.tensor(0), args.tensor(1)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return _dot(args)
    a_shape = (1, *a.shape) if len(a.shape) == 1 else a.shape
    b_shape = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    (m, k), n = a_shape[-2:], b_shape[-1]
    batch = _broadcast(a_shape[:-2], b_shape[:-2])
    out_shape = (*batch, *([m] if len(a.shape) > 1 else []), *([n] if len(b.shape) > 1 else []))
    flops = 2 * math.prod(batch) * m * n * k
    return _cost("matmul", flops, [a, b], [_T(out_shape, a.type)], a.type)


def _linear(args: _Args) -> OpCost | None:
    """linear(input[..., K], weight[N, K], bias[N]): 2 * rows * N * K, bias not counted.

    A wrapper: it dispatches to addmm / mm / matmul (see the module docstring).
    """
    x, w = args.tensor(0), args.tensor(1)
    n, k = w.shape if len(w.shape) == 2 else (1, w.shape[0])
    out_shape = (*x.shape[:-1], n) if len(w.shape) == 2 else x.shape[:-1]
    out = _T(out_shape, _out_type(args, 3, x.type))
    flops = 2 * math.prod(x.shape[:-1]) * n * k
    return _cost("matmul", flops, args.tensors([0, 1, 2]), [out], x.type)


def _scaled_mm(args: _Args) -> OpCost | None:
    """_scaled_mm(a[M,K], b[K,N], scale_a, scale_b, bias, scale_result, out_dtype): 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    out = _T((m, n), args.scalar_type(6) or _out_type(args, 8, a.type))
    return _cost("matmul", 2 * m * n * k, args.tensors(range(6)), [out], a.type)


def _int_mm(args: _Args) -> OpCost | None:
    """_int_mm(a[M,K] int8, b[K,N] int8) -> int32: 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    return _cost("matmul", 2 * m * n * k, [a, b], [_T((m, n), "int")], a.type)


# --------------------------------------------------------------------------------------------
# Convolution (torch.utils.flop_counter's conv_flop_count: 2 * N * prod(conv_shape) * prod(w))
# --------------------------------------------------------------------------------------------


class _ConvLayout(NamedTuple):
    """Argument positions of one convolution op (None: the op has no such argument)."""

    bias: int | None
    stride: int | None
    padding: int | None
    dilation: int | None
    transposed: int | bool  # a position, or fixed for ops that are always (not) transposed
    output_padding: int | None
    groups: int | None


_CONV_GENERIC = _ConvLayout(2, 3, 4, 5, 6, 7, 8)
_CONV_ND = _ConvLayout(2, 3, 4, 5, False, None, 6)
_CONV_TRANSPOSE_ND = _ConvLayout(2, 3, 4, 7, True, 5, 6)
_CONV_MKLDNN = _ConvLayout(2, 4, 3, 5, False, None, 6)  # padding comes before stride
_CONV_SLOW = _ConvLayout(3, 4, 5, None, False, None, None)  # kernel_size at 2

_CONV_LAYOUTS: dict[str, _ConvLayout] = {
    "aten::convolution": _CONV_GENERIC,
    "aten::_convolution": _CONV_GENERIC,
    "aten::convolution_overrideable": _CONV_GENERIC,
    "aten::conv1d": _CONV_ND,
    "aten::conv2d": _CONV_ND,
    "aten::conv3d": _CONV_ND,
    "aten::_convolution_mode": _CONV_ND,
    "aten::conv_transpose1d": _CONV_TRANSPOSE_ND,
    "aten::conv_transpose2d": _CONV_TRANSPOSE_ND,
    "aten::conv_transpose3d": _CONV_TRANSPOSE_ND,
    "aten::cudnn_convolution": _ConvLayout(None, 3, 2, 4, False, None, 5),
    "aten::cudnn_convolution_transpose": _ConvLayout(None, 4, 2, 5, True, 3, 6),
    "aten::mkldnn_convolution": _CONV_MKLDNN,
    "aten::miopen_convolution": _CONV_MKLDNN,
    "aten::miopen_depthwise_convolution": _CONV_MKLDNN,
    "aten::_slow_conv2d_forward": _CONV_SLOW,
    "aten::thnn_conv2d": _CONV_SLOW,
    "aten::slow_conv3d_forward": _CONV_SLOW,
    "aten::slow_conv_dilated2d": _ConvLayout(3, 4, 5, 6, False, None, None),
    "aten::_conv_depthwise2d": _ConvLayout(3, 4, 5, 6, False, None, None),
}


class _ConvParams(NamedTuple):
    stride: list[int]
    padding: list[int]
    dilation: list[int]
    transposed: bool
    output_padding: list[int]
    groups: int


def _conv_params(args: _Args, layout: _ConvLayout, spatial: int) -> _ConvParams | None:
    """Stride, padding... of a convolution; None when the trace did not record them."""

    def ints(position: int | None, default: int) -> list[int] | None:
        # The default only stands in for an argument this op does not have: an unrecorded
        # stride or padding (or padding="same", which the trace leaves empty) gives no model.
        return [default] * spatial if position is None else args.ints(position, spatial)

    transposed = layout.transposed
    if not isinstance(transposed, bool):
        transposed = bool(args.value(transposed, False))
    stride, padding = ints(layout.stride, 1), ints(layout.padding, 0)
    dilation, output_padding = ints(layout.dilation, 1), ints(layout.output_padding, 0)
    if stride is None or padding is None or dilation is None or output_padding is None:
        return None
    groups = 1 if layout.groups is None else int(args.value(layout.groups, 1))
    return _ConvParams(stride, padding, dilation, transposed, output_padding, groups)


def _conv_out_shape(x: Sequence[int], w: Sequence[int], p: _ConvParams) -> tuple[int, ...]:
    """Output shape of a convolution (batched input [N, C, *spatial])."""
    kernel = w[2:]
    if p.transposed:
        spatial = [
            (i - 1) * s - 2 * pad + d * (k - 1) + op + 1
            for i, k, s, pad, d, op in zip(
                x[2:], kernel, p.stride, p.padding, p.dilation, p.output_padding, strict=True
            )
        ]
        return (x[0], w[1] * p.groups, *spatial)
    spatial = [
        (i + 2 * pad - d * (k - 1) - 1) // s + 1
        for i, k, s, pad, d in zip(x[2:], kernel, p.stride, p.padding, p.dilation, strict=True)
    ]
    return (x[0], w[0], *spatial)


def _conv_flops(x: Sequence[int], w: Sequence[int], out: Sequence[int], transposed: bool) -> int:
    """flop_counter.conv_flop_count: every output (input, when transposed) point meets the filter."""
    conv_shape = (x if transposed else out)[2:]
    return 2 * x[0] * math.prod(conv_shape) * math.prod(w)


def _convolution(args: _Args, layout: _ConvLayout) -> OpCost | None:
    """Convolution forward; bias adds not counted (as flop_counter)."""
    x, w = args.tensor(0), args.tensor(1)
    bias = args.tensor(layout.bias) if layout.bias is not None else None
    x_shape = x.shape
    if len(x_shape) == len(w.shape) - 1:  # unbatched input of the conv1d/2d/3d wrappers
        x_shape = (1, *x_shape)
    params = _conv_params(args, layout, len(w.shape) - 2)
    if params is None:
        return None
    out = _T(_conv_out_shape(x_shape, w.shape, params), x.type)
    flops = _conv_flops(x_shape, w.shape, out.shape, params.transposed)
    reads = [x, w] + ([bias] if bias is not None else [])
    return _cost("conv", flops, reads, [out], x.type)


def _convolution_backward(args: _Args) -> OpCost | None:
    """convolution_backward(grad_out, input, weight, bias_sizes, stride, padding, dilation,
    transposed, output_padding, groups, output_mask).

    grad_input and grad_weight each cost the forward's FLOPs (flop_counter's formula for
    groups == 1; for grouped convolutions flop_counter counts the weight gradient ``groups`` times).
    The bias gradient (a sum over grad_out) is not counted, as in flop_counter. Only the gradients
    that output_mask asks for are computed, and only the tensors they need are read.
    """
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    transposed = bool(args.value(7, False))
    want_input, want_weight, want_bias = args.mask(10, 3)
    forward = _conv_flops(x.shape, w.shape, grad.shape, transposed)
    flops = forward * (want_input + want_weight)
    reads = [grad] + ([w] if want_input else []) + ([x] if want_weight else [])
    writes = ([x] if want_input else []) + ([w] if want_weight else [])
    if want_bias:
        writes.append(_T((grad.shape[1],), grad.type))
    return _cost("conv", flops, reads, writes, x.type)


# --------------------------------------------------------------------------------------------
# Attention (flop_counter's sdpa_flop_count / sdpa_backward_flop_count; causal halves them)
# --------------------------------------------------------------------------------------------


class _AttnLayout(NamedTuple):
    """Where one attention op keeps its flags."""

    causal: int  # position of is_causal (or of custom_mask_type when mask_type is True)
    backward: bool = False
    # q/k/v laid out [batch, seq, heads, dim] instead of [batch, heads, seq, dim]
    bshd: bool = False
    mask_type: bool = False  # causal given as custom_mask_type (0: none, 1 and 2: causal)
    lse: int | bool = False  # logsumexp written: always (True), or a compute_log_sumexp position


_ATTENTION: dict[str, _AttnLayout] = {
    "aten::scaled_dot_product_attention": _AttnLayout(5),
    "aten::_scaled_dot_product_attention_math": _AttnLayout(5),
    "aten::_scaled_dot_product_fused_attention_overrideable": _AttnLayout(5),
    "aten::_scaled_dot_product_flash_attention": _AttnLayout(4, lse=True),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _AttnLayout(4, lse=True),
    "aten::_scaled_dot_product_efficient_attention": _AttnLayout(6, lse=4),
    "aten::_scaled_dot_product_cudnn_attention": _AttnLayout(6, lse=4),
    "aten::_cudnn_attention_forward": _AttnLayout(10, lse=8),
    "aten::_flash_attention_forward": _AttnLayout(8, bshd=True, lse=True),
    "aten::_efficient_attention_forward": _AttnLayout(9, bshd=True, mask_type=True, lse=10),
    "aten::_scaled_dot_product_flash_attention_backward": _AttnLayout(11, backward=True),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _AttnLayout(7, backward=True),
    "aten::_scaled_dot_product_efficient_attention_backward": _AttnLayout(11, backward=True),
    "aten::_scaled_dot_product_cudnn_attention_backward": _AttnLayout(14, backward=True),
    "aten::_cudnn_attention_backward": _AttnLayout(14, backward=True),
    "aten::_flash_attention_backward": _AttnLayout(11, backward=True, bshd=True),
    "aten::_efficient_attention_backward": _AttnLayout(
        14, backward=True, bshd=True, mask_type=True
    ),
}


def _attention_flops(q: Sequence[int], k: Sequence[int], v: Sequence[int], backward: bool) -> int:
    """sdpa_flop_count (QK^T and PV) or sdpa_backward_flop_count (recompute QK^T + 4 products).

    Shapes are [batch, heads, seq, dim]; key/value may have fewer heads (GQA): the kernel
    broadcasts them, so the query's head count is the one that counts.
    """
    b, h, s_q, d_q = q
    s_k, d_v = k[2], v[3]
    if backward:
        return 2 * b * h * s_q * s_k * (3 * d_q + 2 * d_v)
    return 2 * b * h * s_q * s_k * (d_q + d_v)


def _attention(args: _Args, layout: _AttnLayout) -> OpCost | None:
    """Attention forward or backward; the causal mask skips about half of the score matrix."""
    first = 1 if layout.backward else 0
    q, k, v = args.tensor(first), args.tensor(first + 1), args.tensor(first + 2)
    if len(q.shape) != 4:
        return None  # varlen (nested) layout: the sequence lengths are in tensors we cannot see

    def bhsd(shape: tuple[int, ...]) -> tuple[int, ...]:
        return (shape[0], shape[2], shape[1], shape[3]) if layout.bshd else shape

    flops = _attention_flops(bhsd(q.shape), bhsd(k.shape), bhsd(v.shape), layout.backward)
    flag = args.value(layout.causal)
    causal = bool(flag) if layout.mask_type else flag is True
    if causal:
        flops /= 2
    reads = args.tensors()  # q, k, v, masks; in backward also grad_out, out, logsumexp
    if layout.backward:
        return _cost("attention", flops, reads, [q, k, v], q.type)
    b, h, s_q, _ = bhsd(q.shape)
    out_shape = (*q.shape[:-1], v.shape[-1])
    writes = [_T(out_shape, q.type)]
    lse = layout.lse if isinstance(layout.lse, bool) else bool(args.value(layout.lse, False))
    if lse:
        writes.append(_T((b, h, s_q), "float"))
    return _cost("attention", flops, reads, writes, q.type)


# --------------------------------------------------------------------------------------------
# Elementwise: FLOPs per output element, broadcasting, in-place variants
# --------------------------------------------------------------------------------------------

# One-input ops. 1 FLOP: arithmetic and single math functions. Composite activations: the sum of
# their parts, e.g. sigmoid = exp + add + div = 3, silu = x * sigmoid(x) = 4,
# gelu = 0.5 * x * (1 + erf(x / sqrt 2)) = 5 (the trace does not record approximate="tanh";
# when it does, the tanh form counts 9), hardswish = x * relu6(x + 3) / 6 = 5.
_UNARY: dict[str, int] = {
    **dict.fromkeys(
        [
            *("abs", "neg", "positive", "relu", "sign", "sgn", "floor", "ceil", "round", "trunc"),
            *("frac", "reciprocal", "sqrt", "rsqrt", "square", "exp", "exp2", "expm1", "log"),
            *("log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh"),
            *("cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "clamp_min"),
            *("clamp_max", "bitwise_not", "logical_not", "nan_to_num", "isnan", "isinf"),
        ],
        1,
    ),
    "leaky_relu": 2,
    "hardtanh": 2,
    "relu6": 2,
    "sigmoid": 3,
    "log_sigmoid": 4,
    "softplus": 4,
    "elu": 4,
    "celu": 5,
    "selu": 5,
    "silu": 4,
    "mish": 5,
    "hardsigmoid": 4,
    "hardswish": 5,
    "gelu": 5,
}

# Two-input ops (the second may be a 0-d tensor or a Python number).
_BINARY: dict[str, int] = {
    **dict.fromkeys(
        [
            *("add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder"),
            *("fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign"),
            *("xlogy", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift"),
            "bitwise_right_shift",
        ],
        1,
    ),
    # Backward of activations, grad_out * f'(x): threshold/relu select 1, tanh g*(1-y*y) 3,
    # sigmoid g*y*(1-y) 3, silu 7, gelu (erf form) 11, dropout grad * mask * scale 2.
    "threshold_backward": 1,
    "leaky_relu_backward": 2,
    "hardtanh_backward": 2,
    "tanh_backward": 3,
    "sigmoid_backward": 3,
    "softplus_backward": 5,
    "hardswish_backward": 5,
    "silu_backward": 7,
    "gelu_backward": 11,
    "native_dropout_backward": 2,
}

# Comparisons and logical ops: 1 FLOP, a bool result.
_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")

# Three-input ops: where(cond, a, b) 1; clamp(x, min, max) 2; lerp a + w * (b - a) 3;
# addcmul / addcdiv self + value * t1 (*|/) t2 3; masked_fill(self, mask, value) 1.
_TERNARY: dict[str, int] = {"where": 1, "clamp": 2, "lerp": 3, "addcmul": 3, "addcdiv": 3}


def _elementwise(
    args: _Args,
    *,
    arity: int,
    flops: int,
    inplace: bool = False,
    out_type: Callable[[list[_T]], str] | None = None,
) -> OpCost | None:
    """An elementwise op over its first ``arity`` arguments (scalars among them move nothing).

    The output has the broadcast shape; an in-place op (``add_``) writes its first input instead.
    Tensors after ``arity`` are the ``out=`` tensor of an out overload, so they are not read.
    """
    inputs = args.tensors(range(arity))
    if not inputs:
        return None
    compute = _promote(inputs)
    if inplace:
        first = args.tensor(0)
        if first is None:
            return None
        out = first
    else:
        shape = _broadcast(*(t.shape for t in inputs))
        out = _T(shape, out_type(inputs) if out_type else compute)
    return _cost("elementwise", flops * out.numel, inputs, [out], compute)


# Ops whose result is floating point even for integer inputs.
_FLOAT_OPS = frozenset(
    [
        *("reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p"),
        *("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh"),
        *("atanh", "erf", "erfc", "erfinv", "sigmoid", "log_sigmoid", "softplus", "elu", "celu"),
        *("selu", "silu", "mish", "hardsigmoid", "hardswish", "gelu"),
        *("div", "true_divide", "atan2", "hypot", "xlogy"),
    ]
)


def _float_type(inputs: list[_T]) -> str:
    result = _promote(inputs)
    return result if _kind(result) >= 2 else "float"


def _bool_type(inputs: list[_T]) -> str:
    return "bool"


def _first_type(inputs: list[_T]) -> str:
    return inputs[0].type


def _where_type(inputs: list[_T]) -> str:
    """where(condition, self, other): the condition takes no part in promotion."""
    return _promote(inputs[1:]) if len(inputs) > 1 else inputs[0].type


def _add(args: _Args, inplace: bool = False) -> OpCost | None:
    """add/sub(self, other, alpha): alpha != 1 makes it a multiply-add (2 FLOPs)."""
    flops = 1 if args.value(2, 1) == 1 else 2
    return _elementwise(args, arity=2, flops=flops, inplace=inplace)


def _gelu(args: _Args, inplace: bool = False) -> OpCost | None:
    flops = 9 if args.value(1) == "tanh" else _UNARY["gelu"]
    return _elementwise(args, arity=1, flops=flops, inplace=inplace)


def _max_min(args: _Args) -> OpCost | None:
    """max/min: elementwise with a tensor ``other``, else a reduction (full or along ``dim``)."""
    if args.tensor(1) is not None:
        return _elementwise(args, arity=2, flops=1)
    if len(args) >= 3:  # max.dim(self, dim, keepdim): values and indices
        return _reduction(args, dim=1, keepdim=2, indices=True)
    return _reduction(args, dim=None, keepdim=None)


def _native_dropout(args: _Args) -> OpCost | None:
    """native_dropout(input, p, train): compare a random number, scale; writes output and mask."""
    x = args.tensor(0)
    train = args.value(2, True)
    writes = [x, _T(x.shape, "bool")] if train else [x]
    return _cost("elementwise", 2 * x.numel if train else 0, [x], writes, x.type)


# --------------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------------


def _reduced_shape(shape: tuple[int, ...], dims: Any, keepdim: bool) -> tuple[int, ...]:
    """Shape after reducing ``dims`` (an int, a list, or None / [] for all dimensions)."""
    if dims is None or dims == [] or not shape:
        axes = set(range(len(shape)))
    else:
        axes = {d % len(shape) for d in ([dims] if isinstance(dims, int) else dims)}
    if keepdim:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _reduction(
    args: _Args,
    *,
    dim: int | None,
    keepdim: int | None,
    dtype: int | None = None,
    flops: int = 1,
    result: str | None = None,
    indices: bool = False,
    outputs: int = 1,
) -> OpCost | None:
    """A reduction: ``flops`` per input element; output shape from the dim / keepdim arguments.

    Unrecorded dims mean all dimensions (the output is then the smallest possible). ``result``
    fixes the output type ("long int" for argmax, "bool" for any); integer sums give int64 as in
    torch; ``dtype`` is the position of a dtype argument.
    """
    x = args.tensor(0)
    dims = args.value(dim) if dim is not None else None
    keep = bool(args.value(keepdim, False)) if keepdim is not None else False
    shape = _reduced_shape(x.shape, dims, keep)
    out_type = (args.scalar_type(dtype) if dtype is not None else None) or result or x.type
    writes = [_T(shape, out_type)] * outputs + ([_T(shape, "long int")] if indices else [])
    return _cost("reduction", flops * x.numel, [x], writes, x.type)


def _sum_like(args: _Args, *, integer_result: str | None) -> OpCost | None:
    """sum / mean / prod: (self, dtype) reduces everything; (self, dim, keepdim, dtype) along dim."""
    x = args.tensor(0)
    result = integer_result if integer_result and _kind(x.type) < 2 else None
    if len(args) >= 4:
        return _reduction(args, dim=1, keepdim=2, dtype=3, result=result)
    return _reduction(args, dim=None, keepdim=None, dtype=1, result=result)


def _var_like(args: _Args, *, outputs: int) -> OpCost | None:
    """var / std (+ _mean): (x - mean)^2 accumulated, 3 FLOPs per element."""
    if len(args) >= 4:
        return _reduction(args, dim=1, keepdim=3, flops=3, outputs=outputs)
    return _reduction(args, dim=None, keepdim=None, flops=3, outputs=outputs)


def _any_all(args: _Args) -> OpCost | None:
    if len(args) >= 3:
        return _reduction(args, dim=1, keepdim=2, result="bool")
    return _reduction(args, dim=None, keepdim=None, result="bool")


def _cumsum(args: _Args) -> OpCost | None:
    """cumsum(self, dim, dtype): a scan, 1 add per element, output as large as the input."""
    x = args.tensor(0)
    out = _T(x.shape, args.scalar_type(2) or x.type)
    return _cost("reduction", x.numel, [x], [out], x.type)


# --------------------------------------------------------------------------------------------
# Pooling (a windowed reduction: kernel-size FLOPs per output element)
# --------------------------------------------------------------------------------------------


def _pool_out_shape(args: _Args, x: _T | None) -> tuple[int, ...] | None:
    """Output shape of max_pool2d / avg_pool2d(self, kernel_size, stride, padding, ...)."""
    kernel = args.ints(1, 2)
    stride = args.ints(2, 2) or kernel  # an empty stride means the kernel size
    padding = args.ints(3, 2, 0)
    is_max = len(args) >= 6 and args.types[4] == "ScalarList"  # max pools have a dilation
    dilation = args.ints(4, 2, 1) if is_max else [1, 1]
    ceil_mode = bool(args.value(5 if is_max else 4, False))
    if kernel is None or stride is None or padding is None or dilation is None:
        return None
    spatial = []
    for size, k, s, p, d in zip(x.shape[-2:], kernel, stride, padding, dilation, strict=True):
        span = size + 2 * p - d * (k - 1) - 1
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input
            out -= 1
        spatial.append(out)
    return (*x.shape[:-2], *spatial)


def _pool(args: _Args, *, with_indices: bool) -> OpCost | None:
    x = args.tensor(0)
    shape = _pool_out_shape(args, x)
    kernel = args.ints(1, 2)
    if shape is None or kernel is None:
        return None
    out = _T(shape, x.type)
    writes = [out, _T(shape, "long int")] if with_indices else [out]
    return _cost("reduction", out.numel * math.prod(kernel), [x], writes, x.type)


def _max_pool_backward(args: _Args) -> OpCost | None:
    """max_pool2d_with_indices_backward(grad_out, self, ..., indices): scatter grad via indices.

    ``self`` is passed for its shape only; grad_input (its shape) is written once.
    """
    grad, x, idx = args.tensor(0), args.tensor(1), args.tensor(7)
    reads = [grad] + ([idx] if idx is not None else [])
    return _cost("reduction", grad.numel, reads, [_T(x.shape, grad.type)], grad.type)


def _avg_pool_backward(args: _Args) -> OpCost | None:
    """avg_pool2d_backward(grad_out, self, kernel_size, ...): spread each grad over its window."""
    grad, x = args.tensor(0), args.tensor(1)
    kernel = args.ints(2, 2) or [1, 1]
    flops = grad.numel * math.prod(kernel)
    return _cost("reduction", flops, [grad], [_T(x.shape, grad.type)], grad.type)


def _adaptive_avg_pool(args: _Args) -> OpCost | None:
    """adaptive_avg_pool2d(self, output_size): every input element is summed once."""
    x = args.tensor(0)
    size = args.ints(1, 2)
    if size is None:
        return None
    out = _T((*x.shape[:-2], *size), x.type)
    return _cost("reduction", x.numel, [x], [out], x.type)


def _adaptive_avg_pool_backward(args: _Args) -> OpCost | None:
    grad, x = args.tensor(0), args.tensor(1)
    return _cost("reduction", x.numel, [grad], [_T(x.shape, grad.type)], grad.type)


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------
# FLOPs per element, forward: mean and variance in one pass (add, multiply-add: 3), normalise
# (subtract, multiply: 2), then 1 per affine parameter (weight multiply, bias add). RMS norm:
# sum of squares (2) and a multiply (1), plus 1 for the weight. Batch norm in eval mode folds
# everything into one per-channel multiply-add (2). Backward: twice the forward.

_LAYER_NORM_FLOPS = 5
_RMS_NORM_FLOPS = 3
_BATCH_NORM_EVAL_FLOPS = 2
_BACKWARD_FACTOR = 2


def _norm_rows(x: _T | None, normalized: Any, weight: _T | None) -> int:
    """Number of normalised rows: elements / prod(normalized_shape)."""
    if isinstance(normalized, list) and normalized:
        inner = math.prod(normalized)
    elif weight is not None:
        inner = weight.numel
    else:
        inner = x.shape[-1]
    return x.numel // inner if inner else 0


def _layer_norm(args: _Args, *, stats: bool) -> OpCost | None:
    """native_layer_norm(input, normalized_shape, weight, bias, eps) -> out, mean, rstd.

    ``stats`` is False for the aten::layer_norm wrapper, which returns only the output.
    """
    x, w, b = args.tensor(0), args.tensor(2), args.tensor(3)
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [x]
    if stats:
        rows = _norm_rows(x, args.value(1), w)
        writes += [_T((rows,), _stat_type(x))] * 2
    return _cost("norm", per_element * x.numel, args.tensors([0, 2, 3]), writes, x.type)


def _layer_norm_backward(args: _Args) -> OpCost | None:
    """native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
    output_mask) -> grad_input, grad_weight, grad_bias."""
    grad, x, w, b = args.tensor(0), args.tensor(1), args.tensor(5), args.tensor(6)
    want = args.mask(7, 3)
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [t for t, wanted in zip((x, w, b), want, strict=True) if wanted and t is not None]
    flops = _BACKWARD_FACTOR * per_element * x.numel
    return _cost("norm", flops, args.tensors([0, 1, 3, 4, 5]), writes, grad.type)


def _rms_norm(args: _Args, *, stats: bool) -> OpCost | None:
    """_fused_rms_norm(input, normalized_shape, weight, eps) -> out, rstd; rms_norm -> out."""
    x, w = args.tensor(0), args.tensor(2)
    per_element = _RMS_NORM_FLOPS + (w is not None)
    writes = [x]
    if stats:
        writes.append(_T((_norm_rows(x, args.value(1), w),), _stat_type(x)))
    return _cost("norm", per_element * x.numel, args.tensors([0, 2]), writes, x.type)


def _rms_norm_backward(args: _Args) -> OpCost | None:
    """_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(4)
    want = args.mask(5, 2)
    per_element = _RMS_NORM_FLOPS + (w is not None)
    writes = [t for t, wanted in zip((x, w), want, strict=True) if wanted and t is not None]
    flops = _BACKWARD_FACTOR * per_element * x.numel
    return _cost("norm", flops, args.tensors([0, 1, 3, 4]), writes, grad.type)


def _group_norm(args: _Args, *, stats: bool) -> OpCost | None:
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> out, mean, rstd [N, G];
    group_norm(input, num_groups, weight, bias, eps, cudnn_enabled) -> out."""
    x = args.tensor(0)
    w, b = (args.tensor(1), args.tensor(2)) if stats else (args.tensor(2), args.tensor(3))
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [x]
    if stats:
        groups = int(args.value(6, 1))
        writes += [_T((x.shape[0], groups), _stat_type(x))] * 2
    reads = [x] + [t for t in (w, b) if t is not None]
    return _cost("norm", per_element * x.numel, reads, writes, x.type)


def _group_norm_backward(args: _Args) -> OpCost | None:
    """native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(4)
    want = args.mask(9, 3)
    channels = _T((x.shape[1],), w.type if w is not None else x.type)
    writes = [x] if want[0] else []
    writes += [channels] * (want[1] + want[2])
    flops = _BACKWARD_FACTOR * (_LAYER_NORM_FLOPS + 2) * x.numel
    return _cost("norm", flops, args.tensors([0, 1, 2, 3, 4]), writes, grad.type)


class _BNLayout(NamedTuple):
    """Batch norm forward: where ``training`` is (or whether the op always trains), and whether
    it is a wrapper that returns only the output."""

    training: int | bool
    wrapper: bool = False


_BATCH_NORM: dict[str, _BNLayout] = {
    "aten::batch_norm": _BNLayout(5, wrapper=True),
    "aten::_batch_norm_impl_index": _BNLayout(5, wrapper=True),
    "aten::native_batch_norm": _BNLayout(5),
    "aten::_native_batch_norm_legit": _BNLayout(5),
    "aten::_native_batch_norm_legit_no_training": _BNLayout(False),
    "aten::_batch_norm_with_update": _BNLayout(True),
    "aten::_batch_norm_no_update": _BNLayout(False),
    "aten::cudnn_batch_norm": _BNLayout(5),
    "aten::miopen_batch_norm": _BNLayout(5),
}


def _batch_norm(args: _Args, layout: _BNLayout) -> OpCost | None:
    """batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps).

    Training computes per-channel statistics (layer-norm FLOPs), writes them (save_mean,
    save_invstd) and updates the running statistics in place; eval only normalises.
    """
    x = args.tensor(0)
    position = layout.training
    if not isinstance(position, bool) and len(args) == 6:  # _native_batch_norm_legit.no_stats
        position = 3
    training = position if isinstance(position, bool) else bool(args.value(position, True))
    reads = args.tensors(range(5))
    writes = [x]
    if training:
        flops = (_LAYER_NORM_FLOPS + 2) * x.numel
        if not layout.wrapper:
            writes += [_T((x.shape[1],), _stat_type(x))] * 2
            writes += args.tensors([3, 4])  # running_mean / running_var, updated
    else:
        flops = _BATCH_NORM_EVAL_FLOPS * x.numel
    return _cost("norm", flops, reads, writes, x.type)


def _batch_norm_backward(args: _Args, *, grad: int, x: int, mask: int | None) -> OpCost | None:
    """native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
    save_invstd, train, eps, output_mask); cudnn/miopen: (input, grad_output, weight, ...)."""
    g, inp, w = args.tensor(grad), args.tensor(x), args.tensor(2)
    want = args.mask(mask, 3) if mask is not None else [True] * 3
    channels = _T((inp.shape[1],), w.type if w is not None else inp.type)
    writes = [inp] if want[0] else []
    writes += [channels] * (want[1] + want[2])
    flops = _BACKWARD_FACTOR * (_LAYER_NORM_FLOPS + 2) * inp.numel
    return _cost("norm", flops, args.tensors(), writes, g.type)


# --------------------------------------------------------------------------------------------
# Softmax: forward max, subtract, exp, sum, divide = 5 FLOPs per element (log_softmax: max,
# subtract, exp, sum, subtract the log = 5); backward sum(g * y) and y * (g - s) = 4.
# --------------------------------------------------------------------------------------------

_SOFTMAX_FLOPS = 5
_SOFTMAX_BACKWARD_FLOPS = 4


def _softmax(args: _Args, *, half_to_float: bool) -> OpCost | None:
    """_softmax(self, dim, half_to_float) or softmax(self, dim, dtype)."""
    x = args.tensor(0)
    if half_to_float:
        out_type = "float" if args.value(2, False) is True else x.type
    else:
        out_type = args.scalar_type(2) or x.type
    return _cost("softmax", _SOFTMAX_FLOPS * x.numel, [x], [_T(x.shape, out_type)], x.type)


def _softmax_backward(args: _Args) -> OpCost | None:
    """_softmax_backward_data(grad_output, output, dim, input_dtype)."""
    grad, y = args.tensor(0), args.tensor(1)
    out = _T(grad.shape, args.scalar_type(3) or grad.type)
    return _cost("softmax", _SOFTMAX_BACKWARD_FLOPS * grad.numel, [grad, y], [out], grad.type)


# --------------------------------------------------------------------------------------------
# Gathers: they read only the rows they fetch (at most the whole table)
# --------------------------------------------------------------------------------------------


def _embedding(args: _Args) -> OpCost | None:
    """embedding(weight[V, D], indices, ...): out = indices.shape + [D]."""
    weight, idx = args.tensor(0), args.tensor(1)
    out = _T((*idx.shape, weight.shape[-1]), weight.type)
    # An index broadcast over the batch (position ids) fetches each of its rows once.
    fetched = _T((min(idx.elements * weight.shape[-1], weight.numel),), weight.type)
    return _cost("embedding", 0, [idx, fetched], [out], weight.type)


def _index_select(args: _Args) -> OpCost | None:
    """index_select(self, dim, index): self with ``dim`` cut to the index length."""
    x, idx = args.tensor(0), args.tensor(2)
    shape = list(x.shape) or [1]
    shape[int(args.value(1, 0)) % len(shape)] = idx.numel
    out = _T(tuple(shape), x.type)
    fetched = _T((min(out.numel, x.numel),), x.type)
    return _cost("embedding", 0, [idx, fetched], [out], x.type)


def _gather(args: _Args) -> OpCost | None:
    """gather(self, dim, index, sparse_grad): out = index.shape."""
    x, idx = args.tensor(0), args.tensor(2)
    out = _T(idx.shape, x.type)
    fetched = _T((min(out.numel, x.numel),), x.type)
    return _cost("embedding", 0, [idx, fetched], [out], x.type)


def _embedding_backward(args: _Args) -> OpCost | None:
    """embedding_dense_backward(grad_output, indices, num_weights, ...): accumulate rows into a
    zeroed [num_weights, D] gradient, 1 add per grad element."""
    grad, idx = args.tensor(0), args.tensor(1)
    rows = int(args.value(2))
    out = _T((rows, grad.shape[-1]), grad.type)
    return _cost("embedding", grad.numel, [grad, idx], [out], grad.type)


def _embedding_bag(args: _Args) -> OpCost | None:
    """_embedding_bag(weight[V, D], indices[n], offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset, padding_idx).

    Reads the n rows it fetches (at most the table), the indices and offsets; writes the bags
    [B, D], offset2bag [n] and bag_size [B] (and the arg-max indices [B, D] in max mode).
    FLOPs: one add per fetched element (sum), a multiply more with per-sample weights, a divide
    per output element for the mean (mode 1).
    """
    weight, idx, offsets = args.tensor(0), args.tensor(1), args.tensor(2)
    mode = int(args.value(4, 0))
    weights = args.tensor(6)
    bags = offsets.numel - (1 if args.value(7, False) is True else 0)
    dim = weight.shape[-1]
    fetched = _T((min(idx.numel * dim, weight.numel),), weight.type)
    out = _T((bags, dim), weight.type)
    writes = [out, _T((idx.numel,), idx.type), _T((bags,), idx.type)]
    if mode == 2:
        writes.append(_T((bags, dim), idx.type))
    flops = idx.numel * dim * (2 if weights is not None else 1) + (out.numel if mode == 1 else 0)
    reads = [idx, offsets, fetched] + ([weights] if weights is not None else [])
    return _cost("embedding", flops, reads, writes, weight.type)


def _embedding_bag_backward(args: _Args, *, rows: int) -> OpCost | None:
    """_embedding_bag_dense_backward(grad[B, D], indices[n], offset2bag, bag_size,
    maximum_indices, num_weights, ...): each index adds its bag's gradient row into a zeroed
    dense [num_weights, D] gradient, which is written whole."""
    grad, idx = args.tensor(0), args.tensor(1)
    dim = grad.shape[-1]
    gathered = _T((idx.numel * dim,), grad.type)
    out = _T((int(args.value(rows)), dim), grad.type)
    reads = [gathered, *args.tensors([1, 2, 3])]
    return _cost("embedding", idx.numel * dim, reads, [out], grad.type)


def _scatter_into(args: _Args, *, index: int, source: int | None, inplace: bool) -> OpCost | None:
    """index_add_ / index_copy_ / scatter_ / scatter_add_ (self, dim, index, source...).

    In place, only the slices the index touches are read and written (one per source element);
    the out-of-place form copies ``self`` whole first. One FLOP per element where it adds.
    """
    x, idx = args.tensor(0), args.tensor(index)
    src = args.tensor(source) if source is not None else None
    touched = src.numel if src is not None else idx.numel
    slices = _T((touched,), x.type)
    reads = [idx] + ([src] if src is not None else [])
    if inplace:
        reads.append(slices)
        writes = [slices]
    else:
        reads.append(x)
        writes = [x]
    return _cost("embedding", touched, reads, writes, x.type)


def _index_put(args: _Args) -> OpCost | None:
    """index_put_ / _index_put_impl_(self, indices, values, accumulate, ...): the profiler does
    not record the index list, so the index tensors' own bytes are left out; each value is
    written to its place (read first when accumulating: one add each)."""
    x, values = args.tensor(0), args.tensor(2)
    accumulate = args.value(3, False) is True
    slices = _T((values.numel,), x.type)
    reads = [values] + ([slices] if accumulate else [])
    flops = values.numel if accumulate else 0
    return _cost("embedding", flops, reads, [slices], x.type)


def _nll_loss(args: _Args) -> OpCost | None:
    """nll_loss_forward(self[N, C, ...], target[N, ...], weight, reduction, ignore_index): picks
    one log-probability per target (and its class weight) and sums them: reads the targets and
    what they pick, not the whole input; writes the loss and the total weight."""
    x, target, weight = args.tensor(0), args.tensor(1), args.tensor(2)
    picked = _T((target.numel,), x.type)
    reads = [target, picked] + ([_T((target.numel,), weight.type)] if weight is not None else [])
    out = _T((target.numel,) if args.value(3, 1) == 0 else (), x.type)
    flops = target.numel * (2 if weight is not None else 1)
    return _cost("reduction", flops, reads, [out, _T((), x.type)], x.type)


def _nll_loss_backward(args: _Args) -> OpCost | None:
    """nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
    total_weight): writes the whole gradient (zeros, and -weight/total at each target); the
    input is passed for its shape only."""
    grad, x, target, weight = args.tensor(0), args.tensor(1), args.tensor(2), args.tensor(3)
    reads = [grad, target, *args.tensors([6])]
    if weight is not None:
        reads.append(_T((target.numel,), weight.type))
    return _cost("reduction", target.numel, reads, [_T(x.shape, x.type)], x.type)


def _transform_bias_rescale_qkv(args: _Args) -> OpCost | None:
    """_transform_bias_rescale_qkv(qkv[B, T, 3D], bias[3D], num_heads) -> q, k, v, each
    [B, heads, T, D / heads]: a bias add on each element and a scale on q (2 FLOPs each)."""
    qkv, bias = args.tensor(0), args.tensor(1)
    return _cost("elementwise", 2 * qkv.numel, [qkv, bias], [qkv], qkv.type)


# --------------------------------------------------------------------------------------------
# Recurrent layers (cuDNN): every step multiplies the batch by each gate weight
# --------------------------------------------------------------------------------------------

# cuDNN's mode codes: gates per hidden unit, and FLOPs per hidden unit per step outside the
# GEMMs (gate nonlinearities, bias adds, the cell update): LSTM 3 sigmoids (3 each), 2 tanh,
# c = f*c + i*g, h = o*tanh(c), 8 bias adds: 23; GRU 2 sigmoids, a tanh, r*(W h + b),
# h = (1 - z)*n + z*h, 6 bias adds: 19; plain RNN: 2 bias adds and the activation: 3.
_RNN_MODES = {0: (1, 3), 1: (1, 3), 2: (4, 23), 3: (3, 19)}


class _RNNShape(NamedTuple):
    steps: int  # batch x time steps (packed: the sequences' total length)
    weights: int  # elements of the gate weight matrices of all layers and directions
    hidden: int  # hidden units x layers x directions
    gates: int
    pointwise: int  # FLOPs per hidden unit per step outside the GEMMs


def _rnn_shape(
    args: _Args,
    *,
    weight_list: int,
    stride: int,
    buffer: int,
    mode: int,
    hidden: int,
    layers: int,
    bidirectional: int,
) -> _RNNShape | None:
    x = args.tensor(0)
    gates, pointwise = _RNN_MODES[int(args.value(mode))]
    directions = 2 if args.value(bidirectional, False) is True else 1
    units = int(args.value(hidden)) * int(args.value(layers)) * directions
    per_group = int(args.value(stride, 4))
    shapes = args.dims[weight_list]
    if args.types[weight_list] == "TensorList" and shapes:
        # Each layer and direction: w_ih, w_hh, then biases, then (with projections) w_hr.
        matrices = [
            math.prod(shape)
            for i, shape in enumerate(shapes)
            if i % per_group < 2 or (per_group in (3, 5) and i % per_group == per_group - 1)
        ]
        weights = sum(matrices)
    else:  # more than 30 weights, whose shapes the profiler leaves out: the flat buffer
        flat = args.tensor(buffer)
        if flat is None:
            return None
        weights = flat.numel
    return _RNNShape(math.prod(x.shape[:-1]), weights, units, gates, pointwise)


def _cudnn_rnn(args: _Args) -> OpCost | None:
    """_cudnn_rnn(input, weights, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
    proj_size, num_layers, batch_first, dropout, train, bidirectional, batch_sizes, ...).

    FLOPs: each gate weight meets every step of the batch, 2 * steps * weights, plus the gates'
    pointwise work. Bytes: input, weights, hx, cx read; output, hy, cy written; training also
    writes the reserve cuDNN keeps for the backward, about one value per gate, hidden and cell
    state per unit and step (an estimate: cuDNN's layout is its own).
    """
    shape = _rnn_shape(
        args, weight_list=1, stride=2, buffer=3, mode=6, hidden=7, layers=9, bidirectional=13
    )
    if shape is None:
        return None
    x = args.tensor(0)
    directions = 2 if args.value(13, False) is True else 1
    out_size = int(args.value(8, 0)) or int(args.value(7))
    out = _T((*x.shape[:-1], directions * out_size), x.type)
    weights = args.tensor(3) or _T((shape.weights,), x.type)
    reads = [x, weights, *args.tensors([4, 5])]
    writes = [out, *args.tensors([4, 5])]  # hy, cy: the shapes of hx, cx
    if args.value(12, False) is True:
        states = shape.gates + (2 if shape.gates == 4 else 1)
        writes.append(_T((shape.steps * shape.hidden * states,), x.type))
    flops = 2 * shape.steps * shape.weights + shape.pointwise * shape.steps * shape.hidden
    return _cost("rnn", flops, reads, writes, x.type)


def _cudnn_rnn_backward(args: _Args) -> OpCost | None:
    """_cudnn_rnn_backward(input, weights, weight_stride0, weight_buf, hx, cx, output,
    grad_output, grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first,
    dropout, train, bidirectional, batch_sizes, dropout_state, reserve, output_mask).

    The data gradient repeats the forward's GEMMs through time, and the weight gradient (when
    output_mask asks for it) does them once more: 2 or 4 * steps * weights, plus twice the
    forward's pointwise work. Reads everything saved and every incoming gradient; writes the
    gradients of the input, hx, cx and the weights.
    """
    shape = _rnn_shape(
        args, weight_list=1, stride=2, buffer=3, mode=10, hidden=11, layers=13, bidirectional=17
    )
    if shape is None:
        return None
    x = args.tensor(0)
    want = args.mask(21, 4)
    weights = args.tensor(3) or _T((shape.weights,), x.type)
    flops = 2 * shape.steps * shape.weights * (1 + want[3])
    flops += 2 * shape.pointwise * shape.steps * shape.hidden
    reads = [x, weights, *args.tensors([4, 5, 6, 7, 8, 9, 20])]
    wanted = [args.tensor(0), args.tensor(4), args.tensor(5), weights]
    writes = [t for t, w in zip(wanted, want, strict=True) if w and t is not None]
    return _cost("rnn", flops, reads, writes, x.type)


# --------------------------------------------------------------------------------------------
# Optimizers and other multi-tensor ops: one kernel walks every tensor of a list
# --------------------------------------------------------------------------------------------

# ATen's multi_tensor_apply gives each block one chunk of 65536 elements of one tensor
# (kChunkSize in MultiTensorApply.cuh), so a launch's blocks bound the elements it touched.
_CHUNK_ELEMENTS = 65536

# FLOPs per element of the fused optimizers: AdamW: decay p *= 1 - lr*wd (1),
# m = lerp(m, g, 1 - b1) (3), v = b2*v + (1 - b2)*g^2 (4), denom = sqrt(v)/sqrt(bc2) + eps (3),
# p -= step * m / denom (3); Adam adds the decay to the gradient instead (2); SGD with momentum
# buf = mu*buf + g, p -= lr*buf (4).
_FUSED_OPTIMIZERS: dict[str, tuple[int, int, int]] = {
    # name: (FLOPs per element, lists read, lists written) over params, grads, states
    "aten::_fused_adamw_": (14, 4, 3),
    "aten::_fused_adam_": (15, 4, 3),
    "aten::_fused_sgd_": (4, 3, 2),
    "aten::_fused_adagrad_": (6, 3, 2),
}


def _foreach_base(name: str) -> str:
    """'aten::_foreach_addcdiv_' -> 'addcdiv'."""
    return name.removeprefix("aten::_foreach_").rstrip("_")


def _foreach_flops_per_element(base: str) -> int:
    table = {**_UNARY, **_BINARY, **_TERNARY}
    if base in ("norm", "max", "sum"):
        return 2
    return table.get(base, 1)


def _list_numel(args: _Args, position: int) -> int | None:
    shapes = args.dims[position] if position < len(args.dims) else None
    if args.types[position] != "TensorList" or not shapes:
        return None
    return sum(math.prod(shape) for shape in shapes)


def _foreach(args: _Args, name: str, hints: _Launch | None = None) -> OpCost | None:
    """A _foreach_* op: its base op's FLOPs per element over every tensor of its lists.

    With the lists' shapes recorded (up to 30 tensors), each list is read once and the written
    list (the first, in place; a new one otherwise) written once. Beyond 30 tensors the
    profiler records no shapes: the elements are estimated from the kernels' blocks (at most
    65536 elements each) and the dtype from the kernel's name, and the cost says "estimate".
    """
    lists = [i for i, t in enumerate(args.types) if t == "TensorList"]
    if not lists:
        return None
    per_element = _foreach_flops_per_element(_foreach_base(name))
    reductions = _foreach_base(name) in ("norm", "max", "sum")
    counted = [_list_numel(args, i) for i in lists]
    sizes = [size for size in counted if size is not None]
    source = "formula"
    if len(sizes) < len(counted):
        estimate = _launch_elements(hints)
        if estimate is None:
            return None
        elements, type_name = estimate
        sizes = [elements] * len(lists)
        source = "estimate"
    else:
        type_name = (hints.dtype if hints else None) or _first_float_type(args) or "float"
    element = _TYPES[type_name][1]
    read = sum(sizes) * element + sum(t.nbytes for t in args.tensors())
    written = 0 if reductions else sizes[0] * element
    if reductions:
        written = 4 * (len(args.dims[lists[0]]) or 1)  # one float per tensor
    flops = per_element * sizes[0]
    return OpCost(float(flops), float(read + written), "optimizer", _TYPES[type_name][0], source)


def _fused_optimizer(args: _Args, name: str, hints: _Launch | None = None) -> OpCost | None:
    """_fused_adam(w)_ / _fused_sgd_ (params, grads, states..., hyperparameters): one pass
    reads the params, grads and states and writes the params and states (see
    _FUSED_OPTIMIZERS); the state steps are a few bytes. Beyond 30 params the elements are
    estimated from the kernels' blocks, as for _foreach ops."""
    flops_per, lists_read, lists_written = _FUSED_OPTIMIZERS[name]
    elements = _list_numel(args, 0)
    source = "formula"
    type_name = (hints.dtype if hints else None) or "float"
    if elements is None:
        estimate = _launch_elements(hints)
        if estimate is None:
            return None
        elements, type_name = estimate
        source = "estimate"
    element = _TYPES[type_name][1]
    traffic = elements * element * (lists_read + lists_written)
    return OpCost(
        float(flops_per * elements), float(traffic), "optimizer", _TYPES[type_name][0], source
    )


def _first_float_type(args: _Args) -> str | None:
    for t in args.tensors():
        if _kind(t.type) == 2:
            return t.type
    return None


def _launch_elements(hints: _Launch | None) -> tuple[int, str] | None:
    """Elements one list holds, and their dtype, from the multi-tensor kernels' blocks: the
    model's parameters when the blocks are exactly their chunks (an optimizer step over all of
    them), one element per tensor when there is one block per parameter (their 0-d step
    counts), else at most a full chunk per block (an upper bound)."""
    if hints is None or not hints.blocks or not hints.dtype:
        return None
    blocks = int(hints.blocks)
    if hints.params is not None:
        chunks, elements, count = hints.params
        if blocks == chunks:
            return elements, hints.dtype
        if blocks == count < chunks:
            return count, hints.dtype
    return blocks * _CHUNK_ELEMENTS, hints.dtype


def _index_by_launch(args: _Args, hints: _Launch | None = None) -> OpCost | None:
    """index(self, indices) (advanced indexing): the profiler does not record the index list,
    so the gathered elements are bounded by the kernel's launch: index_elementwise_kernel<nt,
    vt> runs nt * vt elements per block. Reads and writes each gathered element and reads one
    int64 index per element: an estimate."""
    x = args.tensor(0)
    if hints is None or not hints.blocks or hints.per_block is None:
        return None
    elements = int(hints.blocks * hints.per_block)
    out = _T((elements,), x.type)
    return OpCost(
        0.0, float(2 * out.nbytes + 8 * elements), "embedding", _TYPES[x.type][0], "estimate"
    )


# --------------------------------------------------------------------------------------------
# Copies, casts and fills: no FLOPs
# --------------------------------------------------------------------------------------------


def _copy_(args: _Args) -> OpCost | None:
    """copy_(self=dst, src): read src at its dtype, write dst at its dtype."""
    dst, src = args.tensor(0), args.tensor(1)
    if src is None:
        return None
    return _cost("copy", 0, [src], [dst], dst.type)


def _to_copy(args: _Args) -> OpCost | None:
    """_to_copy(self, dtype, layout, device, ...): a copy to ``dtype`` when given."""
    x = args.tensor(0)
    out = _T(x.shape, args.scalar_type(1) or x.type)
    return _cost("copy", 0, [x], [out], out.type)


def _clone(args: _Args) -> OpCost | None:
    x = args.tensor(0)
    return _cost("copy", 0, [x], [x], x.type)


def _fill(args: _Args) -> OpCost | None:
    """fill_(self, value) / zero_(self): write only (a 0-d tensor value is read)."""
    x = args.tensor(0)
    return _cost("copy", 0, args.tensors([1]), [x], x.type)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

_Model = Callable[[_Args], "OpCost | None"]


def _registry() -> dict[str, _Model]:
    models: dict[str, _Model] = {
        "aten::mm": _mm,
        "aten::addmm": _addmm,
        "aten::_addmm_activation": _addmm,
        "aten::bmm": _bmm,
        "aten::baddbmm": _baddbmm,
        "aten::addbmm": _addbmm,
        "aten::mv": _mv,
        "aten::addmv": partial(_mv, first=1),
        "aten::dot": _dot,
        "aten::vdot": _dot,
        "aten::matmul": _matmul,
        "aten::linear": _linear,
        "aten::_scaled_mm": _scaled_mm,
        "aten::_int_mm": _int_mm,
        "aten::convolution_backward": _convolution_backward,
        "aten::gelu": _gelu,
        "aten::gelu_": partial(_gelu, inplace=True),
        "aten::add": _add,
        "aten::add_": partial(_add, inplace=True),
        "aten::sub": _add,
        "aten::sub_": partial(_add, inplace=True),
        "aten::masked_fill": partial(_elementwise, arity=3, flops=1, out_type=_first_type),
        "aten::masked_fill_": partial(_elementwise, arity=3, flops=1, inplace=True),
        "aten::max": _max_min,
        "aten::min": _max_min,
        "aten::native_dropout": _native_dropout,
        "aten::sum": partial(_sum_like, integer_result="long int"),
        "aten::prod": partial(_sum_like, integer_result="long int"),
        "aten::mean": partial(_sum_like, integer_result=None),
        "aten::amax": partial(_reduction, dim=1, keepdim=2),
        "aten::amin": partial(_reduction, dim=1, keepdim=2),
        "aten::argmax": partial(_reduction, dim=1, keepdim=2, result="long int"),
        "aten::argmin": partial(_reduction, dim=1, keepdim=2, result="long int"),
        "aten::logsumexp": partial(_reduction, dim=1, keepdim=2, flops=4),
        "aten::linalg_vector_norm": partial(_reduction, dim=2, keepdim=3, dtype=4, flops=2),
        "aten::var": partial(_var_like, outputs=1),
        "aten::std": partial(_var_like, outputs=1),
        "aten::var_mean": partial(_var_like, outputs=2),
        "aten::std_mean": partial(_var_like, outputs=2),
        "aten::any": _any_all,
        "aten::all": _any_all,
        "aten::cumsum": _cumsum,
        "aten::max_pool2d": partial(_pool, with_indices=False),
        "aten::max_pool2d_with_indices": partial(_pool, with_indices=True),
        "aten::max_pool2d_with_indices_backward": _max_pool_backward,
        "aten::avg_pool2d": partial(_pool, with_indices=False),
        "aten::avg_pool2d_backward": _avg_pool_backward,
        "aten::adaptive_avg_pool2d": _adaptive_avg_pool,
        "aten::_adaptive_avg_pool2d": _adaptive_avg_pool,
        "aten::_adaptive_avg_pool2d_backward": _adaptive_avg_pool_backward,
        "aten::layer_norm": partial(_layer_norm, stats=False),
        "aten::native_layer_norm": partial(_layer_norm, stats=True),
        "aten::native_layer_norm_backward": _layer_norm_backward,
        "aten::rms_norm": partial(_rms_norm, stats=False),
        "aten::_fused_rms_norm": partial(_rms_norm, stats=True),
        "aten::_fused_rms_norm_backward": _rms_norm_backward,
        "aten::group_norm": partial(_group_norm, stats=False),
        "aten::native_group_norm": partial(_group_norm, stats=True),
        "aten::native_group_norm_backward": _group_norm_backward,
        "aten::native_batch_norm_backward": partial(_batch_norm_backward, grad=0, x=1, mask=9),
        "aten::batch_norm_backward": partial(_batch_norm_backward, grad=0, x=1, mask=9),
        "aten::cudnn_batch_norm_backward": partial(_batch_norm_backward, grad=1, x=0, mask=None),
        "aten::miopen_batch_norm_backward": partial(_batch_norm_backward, grad=1, x=0, mask=None),
        "aten::_softmax": partial(_softmax, half_to_float=True),
        "aten::_log_softmax": partial(_softmax, half_to_float=True),
        "aten::softmax": partial(_softmax, half_to_float=False),
        "aten::log_softmax": partial(_softmax, half_to_float=False),
        "aten::_safe_softmax": partial(_softmax, half_to_float=False),
        "aten::_softmax_backward_data": _softmax_backward,
        "aten::_log_softmax_backward_data": _softmax_backward,
        "aten::embedding": _embedding,
        "aten::embedding_dense_backward": _embedding_backward,
        "aten::index_select": _index_select,
        "aten::gather": _gather,
        "aten::copy_": _copy_,
        "aten::_to_copy": _to_copy,
        "aten::clone": _clone,
        "aten::fill_": _fill,
        "aten::zero_": _fill,
    }
    for name, layout in _CONV_LAYOUTS.items():
        models[name] = partial(_convolution, layout=layout)
    for name, layout in _ATTENTION.items():
        models[name] = partial(_attention, layout=layout)
    for name, layout in _BATCH_NORM.items():
        models[name] = partial(_batch_norm, layout=layout)
    for op, flops in _UNARY.items():
        _register_elementwise(models, op, 1, flops, _float_type if op in _FLOAT_OPS else None)
    for op, flops in _BINARY.items():
        _register_elementwise(models, op, 2, flops, _float_type if op in _FLOAT_OPS else None)
    for op, flops in _TERNARY.items():
        _register_elementwise(models, op, 3, flops, _where_type if op == "where" else None)
    for op in _COMPARE:
        _register_elementwise(models, op, 2, 1, _bool_type)
    return models


def _register_elementwise(
    models: dict[str, _Model],
    op: str,
    arity: int,
    flops: int,
    out_type: Callable[[list[_T]], str] | None,
) -> None:
    """Register ``aten::op`` and its in-place ``aten::op_``, unless a special model exists."""
    models.setdefault(
        f"aten::{op}", partial(_elementwise, arity=arity, flops=flops, out_type=out_type)
    )
    models.setdefault(f"aten::{op}_", partial(_elementwise, arity=arity, flops=flops, inplace=True))


def _more_models() -> dict[str, _Model]:
    """Gathers and scatters, embedding bags, recurrent layers: what the general rule (every
    input read whole) gets wrong."""
    scatter_ops = {
        "index_add": (2, 3),
        "index_copy": (2, 3),
        "index_fill": (2, None),
        "scatter": (2, 3),
        "scatter_add": (2, 3),
        "scatter_reduce": (2, 3),
    }
    models: dict[str, _Model] = {
        "aten::_embedding_bag": _embedding_bag,
        "aten::_embedding_bag_forward_only": _embedding_bag,
        "aten::embedding_bag": _embedding_bag,
        "aten::_embedding_bag_dense_backward": partial(_embedding_bag_backward, rows=5),
        "aten::_embedding_bag_backward": partial(_embedding_bag_backward, rows=6),
        "aten::index_put_": _index_put,
        "aten::index_put": _index_put,
        "aten::_index_put_impl_": _index_put,
        "aten::_transform_bias_rescale_qkv": _transform_bias_rescale_qkv,
        "aten::nll_loss_forward": _nll_loss,
        "aten::nll_loss2d_forward": _nll_loss,
        "aten::nll_loss": _nll_loss,
        "aten::nll_loss_nd": _nll_loss,
        "aten::nll_loss_backward": _nll_loss_backward,
        "aten::nll_loss2d_backward": _nll_loss_backward,
        "aten::_cudnn_rnn": _cudnn_rnn,
        "aten::_cudnn_rnn_backward": _cudnn_rnn_backward,
    }
    for op, (index, source) in scatter_ops.items():
        models[f"aten::{op}_"] = partial(_scatter_into, index=index, source=source, inplace=True)
        models[f"aten::{op}"] = partial(_scatter_into, index=index, source=source, inplace=False)
    return models


_MODELS: dict[str, _Model] = {**_registry(), **_more_models()}


# --------------------------------------------------------------------------------------------
# Ops costed from their kernels' launches where the trace leaves their shapes out
# --------------------------------------------------------------------------------------------

_LaunchModel = Callable[[_Args, str, "_Launch | None"], "OpCost | None"]

_LAUNCH_MODELS: dict[str, _LaunchModel] = {
    **dict.fromkeys(_FUSED_OPTIMIZERS, _fused_optimizer),
    "aten::_amp_foreach_non_finite_check_and_unscale_": lambda args, name, hints: _foreach(
        args, "aten::_foreach_mul_", hints
    ),
    "aten::index": lambda args, name, hints: _index_by_launch(args, hints),
}
_FOREACH_PREFIX = "aten::_foreach_"

# Element types as kernel names spell them (the first one in the template arguments); an
# OpaqueType<n> is any type of n bytes (a copy does not care which).
_KERNEL_TYPES = {
    "c10::BFloat16": "c10::BFloat16",
    "c10::Half": "c10::Half",
    "__half": "c10::Half",
    "__nv_bfloat16": "c10::BFloat16",
    "c10::Float8_e4m3fn": "c10::Float8_e4m3fn",
    "c10::Float8_e5m2": "c10::Float8_e5m2",
    "double": "double",
    "float": "float",
    "signed char": "signed char",
    "unsigned char": "unsigned char",
    "bool": "bool",
}
_OPAQUE_TYPES = {1: "unsigned char", 2: "c10::Half", 4: "float", 8: "double", 16: "double"}
_KERNEL_TYPE_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(t) for t in _KERNEL_TYPES) + r")\b|OpaqueType<(\d+)u?>"
)
_INDEX_KERNEL_PATTERN = re.compile(r"index_elementwise_kernel<(\d+), (\d+)")
# Kernels whose blocks each cover a known number of elements.
LAUNCH_COUNTED_KERNELS = re.compile(r"multi_tensor_apply_kernel|index_elementwise_kernel")


@lru_cache(maxsize=4096)
def _kernel_type(kernel: str) -> str | None:
    """The element type a kernel's name gives (its first type template argument), if any."""
    args = kernel[kernel.find("<") + 1 :] if "<" in kernel else ""
    match = _KERNEL_TYPE_PATTERN.search(args)
    if match is None:
        return None
    if match.group(2):
        return _OPAQUE_TYPES.get(int(match.group(2)))
    return _KERNEL_TYPES[match.group(1)]


def launch_hint(
    kernel: str | None, blocks: float | None, params: tuple[int, int, int] | None = None
) -> _Launch | None:
    """What an op's first kernel (its name) and its multi-tensor or indexing kernels (their
    blocks, summed) tell about its work; None when they tell nothing. ``params``: see
    :func:`parameter_chunks`."""
    if not isinstance(kernel, str):
        return None
    match = _INDEX_KERNEL_PATTERN.search(kernel)
    per_block = int(match.group(1)) * int(match.group(2)) if match else None
    dtype = _kernel_type(kernel)
    counted = float(blocks) if blocks is not None and np.isfinite(blocks) and blocks > 0 else None
    if dtype is None and counted is None:
        return None
    return _Launch(dtype, counted, per_block, params if counted else None)


def parameter_chunks(shapes: Sequence[Sequence[int]]) -> tuple[int, int, int] | None:
    """(multi-tensor chunks, elements, count) of a model's parameters, from their shapes."""
    sizes = [math.prod(shape) for shape in shapes]
    if not sizes:
        return None
    chunks = sum(-(-n // _CHUNK_ELEMENTS) for n in sizes)
    return chunks, sum(sizes), len(sizes)


def has_launch_model(name: str) -> bool:
    """Whether this op's model reads what its kernels' launches tell (:func:`launch_hint`)."""
    return _launch_model(name) is not None


def _launch_model(name: str) -> _LaunchModel | None:
    model = _LAUNCH_MODELS.get(name)
    if model is None and name.startswith(_FOREACH_PREFIX):
        return _foreach
    return model


# --------------------------------------------------------------------------------------------
# torch.compile's kernels: estimates from the tensors they are given
# --------------------------------------------------------------------------------------------

# Kernels that torch.compile (Inductor) generates appear as ops named after the kernel, with the
# kernel's tensor arguments as inputs: pointwise (triton_poi_), persistent and looped reductions
# (triton_per_, triton_red_), and templates (triton_tem_: matmuls, attention, convolutions).
_FUSED_PREFIXES = ("triton_poi_", "triton_per_", "triton_red_")
_TEMPLATE_PREFIX = "triton_tem_"


def _fused(args: _Args) -> OpCost | None:
    """An Inductor fused kernel: each tensor argument (its inputs and outputs; the trace does not
    say which is which) is moved once, and it does 1 FLOP per element of its largest tensor, a
    lower bound, since the fused ops are not in the trace. Both are estimates: the bytes are an
    upper bound when the kernel gathers a few rows of a large table (an embedding)."""
    tensors = args.tensors()
    if not tensors:
        return None
    largest = max(t.numel for t in tensors)
    cost = _cost("fused", largest, tensors, [], _promote(tensors))
    return OpCost(cost.flops, cost.bytes, cost.category, cost.dtype, "estimate")


def _template(args: _Args, name: str) -> OpCost | None:
    """An Inductor template kernel (``triton_tem_fused_<ops>_<n>``): each tensor argument moved
    once, and the FLOPs of the op its name says it computes, found among its arguments' shapes:
    a matrix product (2*M*N*K from two operands and an output that fit) or attention (4 * batch
    * heads * Sq * Sk * D from the 4-D query-shaped arguments; a flex attention's block mask is
    data, not shape, so its sparsity is not known: the dense count is an upper bound)."""
    tensors = args.tensors()
    if not tensors:
        return None
    flops = None
    if "attention" in name:
        four_d = [t for t in tensors if len(t.shape) == 4]
        if four_d:
            b, h, s_q, d = four_d[0].shape
            s_k = max(t.shape[2] for t in four_d)
            flops = 4 * b * h * s_q * s_k * d * (2.5 if "backward" in name else 1)
        category = "attention"
    elif "mm" in name:
        flops = _template_gemm_flops(tensors)
        category = "matmul"
    else:
        category = "conv" if "conv" in name else "fused"
    if flops is None:
        return None
    traffic = sum(t.nbytes for t in tensors)
    # The operands' dtype: the largest floating tensors (attention's fp32 statistics and a
    # matmul's fp32 bias do not make it an fp32 kernel).
    floating = [t for t in tensors if _kind(t.type) == 2] or tensors
    largest = max(floating, key=lambda t: t.numel)
    return OpCost(float(flops), float(traffic), category, _TYPES[largest.type][0], "estimate")


def _template_gemm_flops(tensors: list[_T]) -> float | None:
    """2 * batch * M * N * K of the first operands A[.., M, K], B[.., K, N] with an output
    [.., M, N] among the tensors."""
    shapes = [t.shape for t in tensors if len(t.shape) >= 2]
    for a in shapes:
        for b in shapes:
            if a is b or a[-1] != b[-2]:
                continue
            m, k, n = a[-2], a[-1], b[-1]
            if any(o[-2:] == (m, n) and o is not a and o is not b for o in shapes):
                batch = math.prod(a[:-2]) if len(a) > 2 else 1
                return 2.0 * batch * m * n * k
    return None


def _model(name: str) -> _Model | None:
    model = _MODELS.get(name)
    if model is None and name.startswith(_FUSED_PREFIXES):
        return _fused
    if model is None and name.startswith(_TEMPLATE_PREFIX):
        return partial(_template, name=name)
    return model


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


_SEQUENCES = (list, tuple, np.ndarray)  # how a trace's argument lists may arrive
# What a formula may raise on a layout it does not know (another torch version, an unseen
# overload): no number is better than a wrong one.
_LAYOUT_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError)


def has_model(name: str) -> bool:
    """Whether :func:`op_cost` has a formula for this op name (e.g. ``"aten::addmm"``); any other
    aten op may still be costed from its output shapes (``fallback``)."""
    return _model(name) is not None or _launch_model(name) is not None


def op_cost(
    name: str,
    dims: Sequence[Any],
    types: Sequence[str],
    concrete: Sequence[str] | None = None,
    *,
    fallback: bool = True,
    launch: _Launch | None = None,
    strides: Sequence[Any] | None = None,
) -> OpCost | None:
    """FLOPs and minimum bytes of one op call, from its recorded argument shapes and types.

    ``dims``, ``types`` and ``concrete`` are the trace's ``Input Dims``, ``Input type`` and
    ``Concrete Inputs`` (lists or tuples). An op with a formula here gets it; any other aten op
    is costed from its output shapes on the meta device (``_meta``; ``fallback=False`` skips
    that). ``launch`` (:func:`launch_hint`) is what the op's kernels tell, for ops whose shapes
    the trace leaves out. ``strides`` (the trace's ``Input Strides``) tells which inputs are
    broadcast views: their repeats are read once. None when no model fits: never 0, an op
    without a model is not free.
    """
    if not isinstance(dims, _SEQUENCES) or not isinstance(types, _SEQUENCES):
        return None
    if len(dims) != len(types):
        return None
    if not isinstance(concrete, _SEQUENCES):
        concrete = None
    if not isinstance(strides, _SEQUENCES):
        strides = None
    args = _Args(dims, types, concrete, strides)
    model = _model(name)
    if model is not None:
        try:
            cost = model(args)
        except _LAYOUT_ERRORS:
            cost = None
        if cost is not None:
            return cost
    by_launch = _launch_model(name)
    if by_launch is not None:
        try:
            cost = by_launch(args, name, launch)
        except _LAYOUT_ERRORS:
            cost = None
        if cost is not None:
            return cost
    if fallback and name.startswith("aten::"):
        from ._meta import meta_cost

        return meta_cost(name, dims, types, concrete, launch.dtype if launch else None)
    return None


_KEY_COLUMNS = ("name", "dims", "types", "concrete", "strides")


def add_costs(ops: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with float columns ``flops``, ``bytes`` and str columns ``category``, ``dtype``,
    ``source``.

    ``ops`` has columns name, dims, types and (optionally) concrete, as in the trace; dims may be
    None when the trace has no shapes. Rows without a model get NaN and "". Each distinct
    (name, dims, types, concrete) is costed once and the results are mapped back by code, so this
    stays fast on traces with hundreds of thousands of ops that repeat a few hundred shapes.
    Only ops with a formula are costed here (no meta-device fallback; see cost_columns).
    """
    columns = cost_columns(ops)
    out = ops.copy(deep=False)  # copy-on-write: the new columns leave ``ops`` as it was
    out["flops"] = columns["flops"]
    out["bytes"] = columns["bytes"]
    for column in ("category", "dtype", "source"):
        out[column] = pd.Series(columns[column], index=ops.index, dtype=object)
    return out


def cost_columns(
    ops: pd.DataFrame,
    factorized_names: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    fallback: np.ndarray | None = None,
    launches: list[_Launch | None] | np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The columns :func:`add_costs` adds, as arrays, for a caller that needs no frame.

    ``factorized_names``: ``pd.factorize`` of the name column, when the caller has it already.
    ``fallback``: the rows (a boolean mask) that may be costed from their output shapes on the
    meta device when no formula fits (the analysis passes the ops that ran GPU work: costing
    every view and allocation of a trace would be wasted). ``launches``: per row, what its
    kernels tell (:func:`launch_hint`), or None.
    """
    n = len(ops)
    # Object arrays (Any: their elements are the names, shape lists and texts op_cost takes).
    names: Any = ops["name"].to_numpy(dtype=object)
    columns: list[Any] = [
        ops[c].to_numpy(dtype=object) if c in ops else np.full(n, None, dtype=object)
        for c in _KEY_COLUMNS[1:]
    ]
    # Costed: the ops whose name has a model (looked up once per name), or that may fall back
    # to the meta device, and that have shapes.
    name_codes, distinct = factorized_names or pd.factorize(names)
    with_model = np.array([has_model(name) for name in distinct] + [False], dtype=bool)
    wanted = with_model[name_codes]
    if fallback is not None:
        aten = np.array(
            [isinstance(name, str) and name.startswith("aten::") for name in distinct] + [False]
        )
        wanted |= np.asarray(fallback, dtype=bool) & aten[name_codes]
    candidates = np.flatnonzero(wanted)
    candidates = candidates[pd.notna(columns[0][candidates])]
    hints: Any = (
        np.full(n, None, dtype=object) if launches is None else np.asarray(launches, object)
    )
    # Arguments are keyed by identity: the trace reader decodes each distinct value once, so
    # equal arguments are the same object (elsewhere equal ones are merely costed twice).
    # Launch hints are few and distinct by value.
    hint_codes = pd.factorize(hints[candidates])[0] if len(candidates) else np.empty(0, np.int64)
    key_codes, first = group_codes(
        name_codes[candidates],
        *(
            np.fromiter(map(id, column[candidates]), np.int64, len(candidates))
            for column in columns
        ),
        hint_codes.astype(np.int64),
    )
    codes = np.full(n, -1, dtype=np.int64)
    codes[candidates] = key_codes
    may_fall_back = np.zeros(n, dtype=bool) if fallback is None else np.asarray(fallback, bool)
    results = [
        op_cost(
            names[row],
            columns[0][row],
            columns[1][row],
            columns[2][row],
            fallback=bool(may_fall_back[row]),
            launch=hints[row],
            strides=columns[3][row],
        )
        for row in candidates[first]
    ]
    # Code -1 (no model) picks the sentinel at the end.
    return {
        "flops": np.array([c.flops if c else np.nan for c in results] + [np.nan])[codes],
        "bytes": np.array([c.bytes if c else np.nan for c in results] + [np.nan])[codes],
        **{
            column: np.array([getattr(c, column) if c else "" for c in results] + [""], object)[
                codes
            ]
            for column in ("category", "dtype", "source")
        },
    }
