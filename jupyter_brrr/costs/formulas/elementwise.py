# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Elementwise ops: FLOPs per output element, broadcasting, in-place variants."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ..arguments import Args, OpCost, Tensor, broadcast, cost_of, promote
from ..dtypes import type_kind
from ..formula_registry import add, register
from .reduction import reduction

__all__ = ["BINARY_FLOPS", "TERNARY_FLOPS", "UNARY_FLOPS"]

# One-input ops. 1 FLOP: arithmetic and single math functions. Composite activations: the sum of
# their parts, e.g. sigmoid = exp + add + div = 3, silu = x * sigmoid(x) = 4,
# gelu = 0.5 * x * (1 + erf(x / sqrt 2)) = 5 (the trace does not record approximate="tanh";
# when it does, the tanh form counts 9), hardswish = x * relu6(x + 3) / 6 = 5.
UNARY_FLOPS: dict[str, int] = {
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
BINARY_FLOPS: dict[str, int] = {
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
TERNARY_FLOPS: dict[str, int] = {"where": 1, "clamp": 2, "lerp": 3, "addcmul": 3, "addcdiv": 3}


def _elementwise(
    args: Args,
    *,
    arity: int,
    flops: int,
    inplace: bool = False,
    out_type: Callable[[list[Tensor]], str] | None = None,
) -> OpCost | None:
    """An elementwise op over its first ``arity`` arguments (scalars among them move nothing).

    The output has the broadcast shape; an in-place op (``add_``) writes its first input instead.
    Tensors after ``arity`` are the ``out=`` tensor of an out overload, so they are not read.
    """
    inputs = args.tensors(range(arity))
    if not inputs:
        return None
    compute = promote(inputs)
    if inplace:
        first = args.tensor(0)
        if first is None:
            return None
        out = first
    else:
        shape = broadcast(*(t.shape for t in inputs))
        out = Tensor(shape, out_type(inputs) if out_type else compute)
    return cost_of("elementwise", flops * out.numel, inputs, [out], compute)


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


def _float_type(inputs: list[Tensor]) -> str:
    result = promote(inputs)
    return result if type_kind(result) >= 2 else "float"


def _bool_type(inputs: list[Tensor]) -> str:
    return "bool"


def _first_type(inputs: list[Tensor]) -> str:
    return inputs[0].type


def _where_type(inputs: list[Tensor]) -> str:
    """where(condition, self, other): the condition takes no part in promotion."""
    return promote(inputs[1:]) if len(inputs) > 1 else inputs[0].type


add(partial(_elementwise, arity=3, flops=1, out_type=_first_type), "aten::masked_fill")
add(partial(_elementwise, arity=3, flops=1, inplace=True), "aten::masked_fill_")


@register("aten::add", "aten::sub")
def _add(args: Args, inplace: bool = False) -> OpCost | None:
    """add/sub(self, other, alpha): alpha != 1 makes it a multiply-add (2 FLOPs)."""
    flops = 1 if args.value(2, 1) == 1 else 2
    return _elementwise(args, arity=2, flops=flops, inplace=inplace)


add(partial(_add, inplace=True), "aten::add_", "aten::sub_")


@register("aten::gelu")
def _gelu(args: Args, inplace: bool = False) -> OpCost | None:
    flops = 9 if args.value(1) == "tanh" else UNARY_FLOPS["gelu"]
    return _elementwise(args, arity=1, flops=flops, inplace=inplace)


add(partial(_gelu, inplace=True), "aten::gelu_")


@register("aten::max", "aten::min")
def _max_min(args: Args) -> OpCost | None:
    """max/min: elementwise with a tensor ``other``, else a reduction (full or along ``dim``)."""
    if args.tensor(1) is not None:
        return _elementwise(args, arity=2, flops=1)
    if len(args) >= 3:  # max.dim(self, dim, keepdim): values and indices
        return reduction(args, dim=1, keepdim=2, indices=True)
    return reduction(args, dim=None, keepdim=None)


@register("aten::native_dropout")
def _native_dropout(args: Args) -> OpCost | None:
    """native_dropout(input, p, train): compare a random number, scale; writes output and mask."""
    x = args.tensor(0)
    train = args.value(2, True)
    writes = [x, Tensor(x.shape, "bool")] if train else [x]
    return cost_of("elementwise", 2 * x.numel if train else 0, [x], writes, x.type)


def _add_elementwise(
    op: str, arity: int, flops: int, out_type: Callable[[list[Tensor]], str] | None
) -> None:
    """Register ``aten::op`` and its in-place ``aten::op_``."""
    add(partial(_elementwise, arity=arity, flops=flops, out_type=out_type), f"aten::{op}")
    add(partial(_elementwise, arity=arity, flops=flops, inplace=True), f"aten::{op}_")


# The tables' ops, but those whose formula reads more of their arguments (above): add and sub
# (alpha), gelu (approximate).
_OWN_FORMULA = ("add", "sub", "gelu")
for _op, _flops in UNARY_FLOPS.items():
    if _op not in _OWN_FORMULA:
        _add_elementwise(_op, 1, _flops, _float_type if _op in _FLOAT_OPS else None)
for _op, _flops in BINARY_FLOPS.items():
    if _op not in _OWN_FORMULA:
        _add_elementwise(_op, 2, _flops, _float_type if _op in _FLOAT_OPS else None)
for _op, _flops in TERNARY_FLOPS.items():
    _add_elementwise(_op, 3, _flops, _where_type if _op == "where" else None)
for _op in _COMPARE:
    _add_elementwise(_op, 2, 1, _bool_type)
