# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Reductions: ``flops`` per input element, the output shape from the dim and keepdim
arguments."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..arguments import Args, OpCost, Tensor, cost_of
from ..dtypes import type_kind
from ..formula_registry import add, register

__all__ = ["reduction"]


def _reduced_shape(shape: tuple[int, ...], dims: Any, keepdim: bool) -> tuple[int, ...]:
    """Shape after reducing ``dims`` (an int, a list, or None / [] for all dimensions)."""
    if dims is None or dims == [] or not shape:
        axes = set(range(len(shape)))
    else:
        axes = {d % len(shape) for d in ([dims] if isinstance(dims, int) else dims)}
    if keepdim:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def reduction(
    args: Args,
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
    writes = [Tensor(shape, out_type)] * outputs + ([Tensor(shape, "long int")] if indices else [])
    return cost_of("reduction", flops * x.numel, [x], writes, x.type)


add(partial(reduction, dim=1, keepdim=2), "aten::amax", "aten::amin")
add(partial(reduction, dim=1, keepdim=2, result="long int"), "aten::argmax", "aten::argmin")
add(partial(reduction, dim=1, keepdim=2, flops=4), "aten::logsumexp")
add(partial(reduction, dim=2, keepdim=3, dtype=4, flops=2), "aten::linalg_vector_norm")


def _sum_like(args: Args, *, integer_result: str | None) -> OpCost | None:
    """sum / mean / prod: (self, dtype) reduces everything; (self, dim, keepdim, dtype) along dim."""
    x = args.tensor(0)
    result = integer_result if integer_result and type_kind(x.type) < 2 else None
    if len(args) >= 4:
        return reduction(args, dim=1, keepdim=2, dtype=3, result=result)
    return reduction(args, dim=None, keepdim=None, dtype=1, result=result)


add(partial(_sum_like, integer_result="long int"), "aten::sum", "aten::prod")
add(partial(_sum_like, integer_result=None), "aten::mean")


def _var_like(args: Args, *, outputs: int) -> OpCost | None:
    """var / std (+ _mean): (x - mean)^2 accumulated, 3 FLOPs per element."""
    if len(args) >= 4:
        return reduction(args, dim=1, keepdim=3, flops=3, outputs=outputs)
    return reduction(args, dim=None, keepdim=None, flops=3, outputs=outputs)


add(partial(_var_like, outputs=1), "aten::var", "aten::std")
add(partial(_var_like, outputs=2), "aten::var_mean", "aten::std_mean")


@register("aten::any", "aten::all")
def _any_all(args: Args) -> OpCost | None:
    if len(args) >= 3:
        return reduction(args, dim=1, keepdim=2, result="bool")
    return reduction(args, dim=None, keepdim=None, result="bool")


@register("aten::cumsum")
def _cumsum(args: Args) -> OpCost | None:
    """cumsum(self, dim, dtype): a scan, 1 add per element, output as large as the input."""
    x = args.tensor(0)
    out = Tensor(x.shape, args.scalar_type(2) or x.type)
    return cost_of("reduction", x.numel, [x], [out], x.type)
