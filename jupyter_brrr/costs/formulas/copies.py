# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Copies, casts and fills: no FLOPs."""

from __future__ import annotations

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import register


@register("aten::copy_")
def _copy_(args: Args) -> OpCost | None:
    """copy_(self=dst, src): read src at its dtype, write dst at its dtype."""
    dst, src = args.tensor(0), args.tensor(1)
    if src is None:
        return None
    return cost_of("copy", 0, [src], [dst], dst.type)


@register("aten::_to_copy")
def _to_copy(args: Args) -> OpCost | None:
    """_to_copy(self, dtype, layout, device, ...): a copy to ``dtype`` when given."""
    x = args.tensor(0)
    out = Tensor(x.shape, args.scalar_type(1) or x.type)
    return cost_of("copy", 0, [x], [out], out.type)


@register("aten::clone")
def _clone(args: Args) -> OpCost | None:
    x = args.tensor(0)
    return cost_of("copy", 0, [x], [x], x.type)


@register("aten::fill_", "aten::zero_")
def _fill(args: Args) -> OpCost | None:
    """fill_(self, value) / zero_(self): write only (a 0-d tensor value is read)."""
    x = args.tensor(0)
    return cost_of("copy", 0, args.tensors([1]), [x], x.type)
