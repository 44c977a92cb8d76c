# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Optimizers and other multi-tensor ops: one kernel walks every tensor of a list. Beyond 30
tensors the trace leaves the lists' shapes out: their elements come from the kernels' launches
(``costs.launches``)."""

from __future__ import annotations

import math

from ..arguments import Args, OpCost
from ..dtypes import TYPES, type_kind
from ..formula_registry import add_launch, add_launch_prefix
from ..launches import CHUNK_ELEMENTS, Launch
from .elementwise import BINARY_FLOPS, TERNARY_FLOPS, UNARY_FLOPS

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
    table = {**UNARY_FLOPS, **BINARY_FLOPS, **TERNARY_FLOPS}
    if base in ("norm", "max", "sum"):
        return 2
    return table.get(base, 1)


def _list_numel(args: Args, position: int) -> int | None:
    shapes = args.dims[position] if position < len(args.dims) else None
    if args.types[position] != "TensorList" or not shapes:
        return None
    return sum(math.prod(shape) for shape in shapes)


def _foreach(args: Args, name: str, hints: Launch | None = None) -> OpCost | None:
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
    element = TYPES[type_name][1]
    read = sum(sizes) * element + sum(t.nbytes for t in args.tensors())
    written = 0 if reductions else sizes[0] * element
    if reductions:
        written = 4 * (len(args.dims[lists[0]]) or 1)  # one float per tensor
    flops = per_element * sizes[0]
    return OpCost(float(flops), float(read + written), "optimizer", TYPES[type_name][0], source)


add_launch_prefix("aten::_foreach_", _foreach)


def _fused_optimizer(args: Args, name: str, hints: Launch | None = None) -> OpCost | None:
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
    element = TYPES[type_name][1]
    traffic = elements * element * (lists_read + lists_written)
    return OpCost(
        float(flops_per * elements), float(traffic), "optimizer", TYPES[type_name][0], source
    )


add_launch(_fused_optimizer, *_FUSED_OPTIMIZERS)


def _amp_unscale(args: Args, name: str, hints: Launch | None = None) -> OpCost | None:
    """The AMP grad scaler's unscale step: a _foreach_mul_ over the gradients (and a check)."""
    return _foreach(args, "aten::_foreach_mul_", hints)


add_launch(_amp_unscale, "aten::_amp_foreach_non_finite_check_and_unscale_")


def _first_float_type(args: Args) -> str | None:
    for t in args.tensors():
        if type_kind(t.type) == 2:
            return t.type
    return None


def _launch_elements(hints: Launch | None) -> tuple[int, str] | None:
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
    return blocks * CHUNK_ELEMENTS, hints.dtype
