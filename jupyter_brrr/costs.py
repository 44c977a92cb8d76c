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
    only the rows they fetch. The ``out=`` tensor of an ``out`` overload is the output, not an input.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .tables import group_codes

__all__ = ["OpCost", "add_costs", "dtype_key", "dtype_size", "has_model", "op_cost"]


@dataclass(frozen=True)
class OpCost:
    """What one op costs: arithmetic, minimum memory traffic, and what kind of op it is."""

    flops: float  # floating-point operations (a multiply-add counts 2)
    bytes: float  # minimum traffic: each input read once, each output written once
    category: str  # matmul, conv, attention, elementwise, reduction, norm, softmax, embedding, copy, other
    dtype: str  # compute dtype key for picking the device peak: fp64, fp32, fp16, bf16, fp8, int8


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
    """A tensor: its shape and trace type name."""

    shape: tuple[int, ...]
    type: str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * _TYPES[self.type][1]


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

    __slots__ = ("concrete", "dims", "types")

    def __init__(self, dims: Sequence[Any], types: Sequence[str], concrete: Sequence[str] | None):
        self.dims = dims
        self.types = types
        self.concrete = concrete

    def __len__(self) -> int:
        return len(self.types)

    def tensor(self, i: int) -> _T | None:
        """Argument ``i`` as a tensor, or None when it is absent, None, a scalar or a list."""
        if i >= len(self.types) or self.types[i] not in _TYPES:
            return None
        return _T(tuple(map(int, self.dims[i])), self.types[i])

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
    category: str, flops: float, reads: Sequence[_T], writes: Sequence[_T], compute: str
) -> OpCost:
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


def _stat_type(t: _T) -> str:
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


def _pool_out_shape(args: _Args, x: _T) -> tuple[int, ...] | None:
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
    if shape is None:
        return None
    out = _T(shape, x.type)
    writes = [out, _T(shape, "long int")] if with_indices else [out]
    return _cost("reduction", out.numel * math.prod(args.ints(1, 2)), [x], writes, x.type)


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


def _norm_rows(x: _T, normalized: Any, weight: _T | None) -> int:
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
    fetched = _T((min(out.numel, weight.numel),), weight.type)
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


_MODELS: dict[str, _Model] = _registry()

# Kernels that torch.compile (Inductor) generates appear as ops named after the kernel, with the
# kernel's tensor arguments as inputs: pointwise (triton_poi_), persistent and looped reductions
# (triton_per_, triton_red_). Templates (triton_tem_: matmuls, convolutions) are left unmodelled.
_FUSED_PREFIXES = ("triton_poi_", "triton_per_", "triton_red_")


def _fused(args: _Args) -> OpCost | None:
    """An Inductor fused kernel: each tensor argument (its inputs and outputs; the trace does not
    say which is which) is moved once, and it does 1 FLOP per element of its largest tensor, a
    lower bound, since the fused ops are not in the trace. Both are estimates: the bytes are an
    upper bound when the kernel gathers a few rows of a large table (an embedding)."""
    tensors = args.tensors()
    if not tensors:
        return None
    largest = max(t.numel for t in tensors)
    return _cost("fused", largest, tensors, [], _promote(tensors))


def _model(name: str) -> _Model | None:
    model = _MODELS.get(name)
    if model is None and name.startswith(_FUSED_PREFIXES):
        return _fused
    return model


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


_SEQUENCES = (list, tuple, np.ndarray)  # how a trace's argument lists may arrive


def has_model(name: str) -> bool:
    """Whether :func:`op_cost` has a formula for this op name (e.g. ``"aten::addmm"``)."""
    return _model(name) is not None


def op_cost(
    name: str, dims: Sequence[Any], types: Sequence[str], concrete: Sequence[str] | None = None
) -> OpCost | None:
    """FLOPs and minimum bytes of one op call, from its recorded argument shapes and types.

    ``dims``, ``types`` and ``concrete`` are the trace's ``Input Dims``, ``Input type`` and
    ``Concrete Inputs`` (lists or tuples). None when no model exists for this op, when the trace
    has no shapes, or when the arguments do not have the layout the model expects (never 0: an
    op without a model is not free).
    """
    model = _model(name)
    if model is None or not isinstance(dims, _SEQUENCES) or not isinstance(types, _SEQUENCES):
        return None
    if len(dims) != len(types):
        return None
    if not isinstance(concrete, _SEQUENCES):
        concrete = None
    try:
        return model(_Args(dims, types, concrete))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        # A layout this formula does not know (another torch version, an unseen overload):
        # no number is better than a wrong one.
        return None


_KEY_COLUMNS = ("name", "dims", "types", "concrete")


def add_costs(ops: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with float columns ``flops``, ``bytes`` and str columns ``category``, ``dtype``.

    ``ops`` has columns name, dims, types and (optionally) concrete, as in the trace; dims may be
    None when the trace has no shapes. Rows without a model get NaN and "". Each distinct
    (name, dims, types, concrete) is costed once and the results are mapped back by code, so this
    stays fast on traces with hundreds of thousands of ops that repeat a few hundred shapes.
    """
    columns = cost_columns(ops)
    out = ops.copy(deep=False)  # copy-on-write: the new columns leave ``ops`` as it was
    out["flops"] = columns["flops"]
    out["bytes"] = columns["bytes"]
    out["category"] = pd.Series(columns["category"], index=ops.index, dtype=object)
    out["dtype"] = pd.Series(columns["dtype"], index=ops.index, dtype=object)
    return out


def cost_columns(
    ops: pd.DataFrame, factorized_names: tuple[np.ndarray, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The columns :func:`add_costs` adds, as arrays, for a caller that needs no frame.

    ``factorized_names``: ``pd.factorize`` of the name column, when the caller has it already.
    """
    n = len(ops)
    names = ops["name"].to_numpy(dtype=object)
    columns = [
        ops[c].to_numpy(dtype=object) if c in ops else np.full(n, None, dtype=object)
        for c in _KEY_COLUMNS[1:]
    ]
    # Costed: the ops whose name has a model (looked up once per name) and that have shapes.
    name_codes, distinct = factorized_names or pd.factorize(names)
    with_model = np.array([has_model(name) for name in distinct] + [False], dtype=bool)
    candidates = np.flatnonzero(with_model[name_codes])
    candidates = candidates[pd.notna(columns[0][candidates])]
    # Arguments are keyed by identity: the trace reader decodes each distinct value once, so
    # equal arguments are the same object (elsewhere equal ones are merely costed twice).
    key_codes, first = group_codes(
        name_codes[candidates],
        *(
            np.fromiter(map(id, column[candidates]), np.int64, len(candidates))
            for column in columns
        ),
    )
    codes = np.full(n, -1, dtype=np.int64)
    codes[candidates] = key_codes
    flops, traffic, category, dtype = [], [], [], []
    for row in candidates[first]:
        cost = op_cost(names[row], columns[0][row], columns[1][row], columns[2][row])
        flops.append(cost.flops if cost else np.nan)
        traffic.append(cost.bytes if cost else np.nan)
        category.append(cost.category if cost else "")
        dtype.append(cost.dtype if cost else "")
    # Code -1 (no model) picks the sentinel at the end.
    return {
        "flops": np.array([*flops, np.nan], dtype=float)[codes],
        "bytes": np.array([*traffic, np.nan], dtype=float)[codes],
        "category": np.array([*category, ""], dtype=object)[codes],
        "dtype": np.array([*dtype, ""], dtype=object)[codes],
    }
