# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Softmax and log-softmax: forward max, subtract, exp, sum, divide = 5 FLOPs per element
(log_softmax: max, subtract, exp, sum, subtract the log = 5); backward sum(g * y) and
y * (g - s) = 4."""

from __future__ import annotations

from functools import partial

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import add, register

_SOFTMAX_FLOPS = 5
_SOFTMAX_BACKWARD_FLOPS = 4


def _softmax(args: Args, *, half_to_float: bool) -> OpCost | None:
    """_softmax(self, dim, half_to_float) or softmax(self, dim, dtype)."""
    x = args.tensor(0)
    if half_to_float:
        out_type = "float" if args.value(2, False) is True else x.type
    else:
        out_type = args.scalar_type(2) or x.type
    return cost_of("softmax", _SOFTMAX_FLOPS * x.numel, [x], [Tensor(x.shape, out_type)], x.type)


add(partial(_softmax, half_to_float=True), "aten::_softmax", "aten::_log_softmax")
add(
    partial(_softmax, half_to_float=False),
    "aten::softmax",
    "aten::log_softmax",
    "aten::_safe_softmax",
)


@register("aten::_softmax_backward_data", "aten::_log_softmax_backward_data")
def _softmax_backward(args: Args) -> OpCost | None:
    """_softmax_backward_data(grad_output, output, dim, input_dtype)."""
    grad, y = args.tensor(0), args.tensor(1)
    out = Tensor(grad.shape, args.scalar_type(3) or grad.type)
    return cost_of("softmax", _SOFTMAX_BACKWARD_FLOPS * grad.numel, [grad, y], [out], grad.type)
