# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Normalisation: layer, RMS, group and batch norms, forward and backward."""

from __future__ import annotations

import math
from functools import partial
from typing import Any, NamedTuple, cast

from ..arguments import Args, OpCost, Tensor, cost_of, stat_type
from ..formula_registry import add, register

# FLOPs per element, forward: mean and variance in one pass (add, multiply-add: 3), normalise
# (subtract, multiply: 2), then 1 per affine parameter (weight multiply, bias add). RMS norm:
# sum of squares (2) and a multiply (1), plus 1 for the weight. Batch norm in eval mode folds
# everything into one per-channel multiply-add (2). Backward: twice the forward.

_LAYER_NORM_FLOPS = 5
_RMS_NORM_FLOPS = 3
_BATCH_NORM_EVAL_FLOPS = 2
_BACKWARD_FACTOR = 2


def _norm_rows(x: Tensor | None, normalized: Any, weight: Tensor | None) -> int:
    """Number of normalised rows: elements / prod(normalized_shape)."""
    if isinstance(normalized, list) and normalized:
        inner = math.prod(cast("list[int]", normalized))
    elif weight is not None:
        inner = weight.numel
    else:
        inner = x.shape[-1]
    return x.numel // inner if inner else 0


def _layer_norm(args: Args, *, stats: bool) -> OpCost | None:
    """native_layer_norm(input, normalized_shape, weight, bias, eps) -> out, mean, rstd.

    ``stats`` is False for the aten::layer_norm wrapper, which returns only the output.
    """
    x, w, b = args.tensor(0), args.tensor(2), args.tensor(3)
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [x]
    if stats:
        rows = _norm_rows(x, args.value(1), w)
        writes += [Tensor((rows,), stat_type(x))] * 2
    return cost_of("norm", per_element * x.numel, args.tensors([0, 2, 3]), writes, x.type)


add(partial(_layer_norm, stats=False), "aten::layer_norm")
add(partial(_layer_norm, stats=True), "aten::native_layer_norm")


@register("aten::native_layer_norm_backward")
def _layer_norm_backward(args: Args) -> OpCost | None:
    """native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
    output_mask) -> grad_input, grad_weight, grad_bias."""
    grad, x, w, b = args.tensor(0), args.tensor(1), args.tensor(5), args.tensor(6)
    want = args.mask(7, 3)
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [t for t, wanted in zip((x, w, b), want, strict=True) if wanted and t is not None]
    flops = _BACKWARD_FACTOR * per_element * x.numel
    return cost_of("norm", flops, args.tensors([0, 1, 3, 4, 5]), writes, grad.type)


def _rms_norm(args: Args, *, stats: bool) -> OpCost | None:
    """_fused_rms_norm(input, normalized_shape, weight, eps) -> out, rstd; rms_norm -> out."""
    x, w = args.tensor(0), args.tensor(2)
    per_element = _RMS_NORM_FLOPS + (w is not None)
    writes = [x]
    if stats:
        writes.append(Tensor((_norm_rows(x, args.value(1), w),), stat_type(x)))
    return cost_of("norm", per_element * x.numel, args.tensors([0, 2]), writes, x.type)


add(partial(_rms_norm, stats=False), "aten::rms_norm")
add(partial(_rms_norm, stats=True), "aten::_fused_rms_norm")


@register("aten::_fused_rms_norm_backward")
def _rms_norm_backward(args: Args) -> OpCost | None:
    """_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(4)
    want = args.mask(5, 2)
    per_element = _RMS_NORM_FLOPS + (w is not None)
    writes = [t for t, wanted in zip((x, w), want, strict=True) if wanted and t is not None]
    flops = _BACKWARD_FACTOR * per_element * x.numel
    return cost_of("norm", flops, args.tensors([0, 1, 3, 4]), writes, grad.type)


def _group_norm(args: Args, *, stats: bool) -> OpCost | None:
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> out, mean, rstd [N, G];
    group_norm(input, num_groups, weight, bias, eps, cudnn_enabled) -> out."""
    x = args.tensor(0)
    w, b = (args.tensor(1), args.tensor(2)) if stats else (args.tensor(2), args.tensor(3))
    per_element = _LAYER_NORM_FLOPS + (w is not None) + (b is not None)
    writes = [x]
    if stats:
        groups = int(args.value(6, 1))
        writes += [Tensor((x.shape[0], groups), stat_type(x))] * 2
    reads = [x] + [t for t in (w, b) if t is not None]
    return cost_of("norm", per_element * x.numel, reads, writes, x.type)


add(partial(_group_norm, stats=False), "aten::group_norm")
add(partial(_group_norm, stats=True), "aten::native_group_norm")


@register("aten::native_group_norm_backward")
def _group_norm_backward(args: Args) -> OpCost | None:
    """native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(4)
    want = args.mask(9, 3)
    channels = Tensor((x.shape[1],), w.type if w is not None else x.type)
    writes = [x] if want[0] else []
    writes += [channels] * (want[1] + want[2])
    flops = _BACKWARD_FACTOR * (_LAYER_NORM_FLOPS + 2) * x.numel
    return cost_of("norm", flops, args.tensors([0, 1, 2, 3, 4]), writes, grad.type)


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


def _batch_norm(args: Args, layout: _BNLayout) -> OpCost | None:
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
            writes += [Tensor((x.shape[1],), stat_type(x))] * 2
            writes += args.tensors([3, 4])  # running_mean / running_var, updated
    else:
        flops = _BATCH_NORM_EVAL_FLOPS * x.numel
    return cost_of("norm", flops, reads, writes, x.type)


for _name, _layout in _BATCH_NORM.items():
    add(partial(_batch_norm, layout=_layout), _name)


def _batch_norm_backward(args: Args, *, grad: int, x: int, mask: int | None) -> OpCost | None:
    """native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
    save_invstd, train, eps, output_mask); cudnn/miopen: (input, grad_output, weight, ...)."""
    g, inp, w = args.tensor(grad), args.tensor(x), args.tensor(2)
    want = args.mask(mask, 3) if mask is not None else [True] * 3
    channels = Tensor((inp.shape[1],), w.type if w is not None else inp.type)
    writes = [inp] if want[0] else []
    writes += [channels] * (want[1] + want[2])
    flops = _BACKWARD_FACTOR * (_LAYER_NORM_FLOPS + 2) * inp.numel
    return cost_of("norm", flops, args.tensors(), writes, g.type)


add(
    partial(_batch_norm_backward, grad=0, x=1, mask=9),
    "aten::native_batch_norm_backward",
    "aten::batch_norm_backward",
)
add(
    partial(_batch_norm_backward, grad=1, x=0, mask=None),
    "aten::cudnn_batch_norm_backward",
    "aten::miopen_batch_norm_backward",
)
