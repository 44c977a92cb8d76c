# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Convolutions: ``torch.utils.flop_counter``'s ``conv_flop_count``, 2 * N * prod(conv_shape) *
prod(w); bias adds not counted."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import NamedTuple

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import add, register

__all__ = ["CONV_LAYOUTS"]


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

CONV_LAYOUTS: dict[str, _ConvLayout] = {
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


def _conv_params(args: Args, layout: _ConvLayout, spatial: int) -> _ConvParams | None:
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


def _convolution(args: Args, layout: _ConvLayout) -> OpCost | None:
    """Convolution forward; bias adds not counted (as flop_counter)."""
    x, w = args.tensor(0), args.tensor(1)
    bias = args.tensor(layout.bias) if layout.bias is not None else None
    x_shape = x.shape
    if len(x_shape) == len(w.shape) - 1:  # unbatched input of the conv1d/2d/3d wrappers
        x_shape = (1, *x_shape)
    params = _conv_params(args, layout, len(w.shape) - 2)
    if params is None:
        return None
    out = Tensor(_conv_out_shape(x_shape, w.shape, params), x.type)
    flops = _conv_flops(x_shape, w.shape, out.shape, params.transposed)
    reads = [x, w] + ([bias] if bias is not None else [])
    return cost_of("conv", flops, reads, [out], x.type)


for _name, _layout in CONV_LAYOUTS.items():
    add(partial(_convolution, layout=_layout), _name)


@register("aten::convolution_backward")
def _convolution_backward(args: Args) -> OpCost | None:
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
        writes.append(Tensor((grad.shape[1],), grad.type))
    return cost_of("conv", flops, reads, writes, x.type)
