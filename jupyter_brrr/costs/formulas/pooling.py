# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Pooling: a windowed reduction, kernel-size FLOPs per output element."""

from __future__ import annotations

import math
from functools import partial

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import add, register


def _pool_out_shape(args: Args, x: Tensor | None) -> tuple[int, ...] | None:
    """Output shape of max_pool2d / avg_pool2d(self, kernel_size, stride, padding, ...)."""
    kernel = args.ints(1, 2)
    stride = args.ints(2, 2) or kernel  # an empty stride means the kernel size
    padding = args.ints(3, 2, 0)
    is_max = len(args) >= 6 and args.types[4] == "ScalarList"  # max pools have a dilation
    dilation = args.ints(4, 2, 1) if is_max else [1, 1]
    ceil_mode = bool(args.value(5 if is_max else 4, False))
    if kernel is None or stride is None or padding is None or dilation is None:
        return None
    spatial: list[int] = []
    for size, k, s, p, d in zip(x.shape[-2:], kernel, stride, padding, dilation, strict=True):
        span = size + 2 * p - d * (k - 1) - 1
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input
            out -= 1
        spatial.append(out)
    return (*x.shape[:-2], *spatial)


def _pool(args: Args, *, with_indices: bool) -> OpCost | None:
    x = args.tensor(0)
    shape = _pool_out_shape(args, x)
    kernel = args.ints(1, 2)
    if shape is None or kernel is None:
        return None
    out = Tensor(shape, x.type)
    writes = [out, Tensor(shape, "long int")] if with_indices else [out]
    return cost_of("reduction", out.numel * math.prod(kernel), [x], writes, x.type)


add(partial(_pool, with_indices=False), "aten::max_pool2d", "aten::avg_pool2d")
add(partial(_pool, with_indices=True), "aten::max_pool2d_with_indices")


@register("aten::max_pool2d_with_indices_backward")
def _max_pool_backward(args: Args) -> OpCost | None:
    """max_pool2d_with_indices_backward(grad_out, self, ..., indices): scatter grad via indices.

    ``self`` is passed for its shape only; grad_input (its shape) is written once.
    """
    grad, x, idx = args.tensor(0), args.tensor(1), args.tensor(7)
    reads = [grad] + ([idx] if idx is not None else [])
    return cost_of("reduction", grad.numel, reads, [Tensor(x.shape, grad.type)], grad.type)


@register("aten::avg_pool2d_backward")
def _avg_pool_backward(args: Args) -> OpCost | None:
    """avg_pool2d_backward(grad_out, self, kernel_size, ...): spread each grad over its window."""
    grad, x = args.tensor(0), args.tensor(1)
    kernel = args.ints(2, 2) or [1, 1]
    flops = grad.numel * math.prod(kernel)
    return cost_of("reduction", flops, [grad], [Tensor(x.shape, grad.type)], grad.type)


@register("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")
def _adaptive_avg_pool(args: Args) -> OpCost | None:
    """adaptive_avg_pool2d(self, output_size): every input element is summed once."""
    x = args.tensor(0)
    size = args.ints(1, 2)
    if size is None:
        return None
    out = Tensor((*x.shape[:-2], *size), x.type)
    return cost_of("reduction", x.numel, [x], [out], x.type)


@register("aten::_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool_backward(args: Args) -> OpCost | None:
    grad, x = args.tensor(0), args.tensor(1)
    return cost_of("reduction", x.numel, [grad], [Tensor(x.shape, grad.type)], grad.type)
