# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Matrix products: the formulas of ``torch.utils.flop_counter`` (``mm_flop``, ``bmm_flop``,
...), 2 * M * N * K; a bias add is not counted."""

from __future__ import annotations

import math
from functools import partial

from ..arguments import Args, OpCost, Tensor, broadcast, cost_of
from ..formula_registry import add, register


def _out_type(args: Args, position: int, default: str) -> str:
    """The type of an ``out=`` tensor at ``position`` when the out overload was called."""
    out = args.tensor(position)
    return out.type if out is not None else default


@register("aten::mm")
def _mm(args: Args) -> OpCost | None:
    """mm(self[M,K], mat2[K,N]): 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    out = Tensor((m, n), _out_type(args, 2, a.type))
    return cost_of("matmul", 2 * m * n * k, [a, b], [out], a.type)


@register("aten::addmm", "aten::_addmm_activation")
def _addmm(args: Args) -> OpCost | None:
    """addmm(bias, mat1[M,K], mat2[K,N], beta, alpha): 2*M*N*K; the bias add is not counted."""
    bias, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (m, k), (_, n) = a.shape, b.shape
    out = Tensor((m, n), _out_type(args, 5, a.type))
    return cost_of("matmul", 2 * m * n * k, [bias, a, b], [out], a.type)


@register("aten::bmm")
def _bmm(args: Args) -> OpCost | None:
    """bmm(self[B,M,K], mat2[B,K,N]): 2*B*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = Tensor((batch, m, n), _out_type(args, 2, a.type))
    return cost_of("matmul", 2 * batch * m * n * k, [a, b], [out], a.type)


@register("aten::baddbmm")
def _baddbmm(args: Args) -> OpCost | None:
    """baddbmm(self, batch1[B,M,K], batch2[B,K,N], beta, alpha): 2*B*M*N*K."""
    c, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = Tensor((batch, m, n), _out_type(args, 5, a.type))
    return cost_of("matmul", 2 * batch * m * n * k, [c, a, b], [out], a.type)


@register("aten::addbmm")
def _addbmm(args: Args) -> OpCost | None:
    """addbmm(self[M,N], batch1[B,M,K], batch2[B,K,N]): sum over the batch, 2*B*M*N*K."""
    c, a, b = args.tensor(0), args.tensor(1), args.tensor(2)
    (batch, m, k), (_, _, n) = a.shape, b.shape
    out = Tensor((m, n), _out_type(args, 5, a.type))
    return cost_of("matmul", 2 * batch * m * n * k, [c, a, b], [out], a.type)


@register("aten::mv")
def _mv(args: Args, first: int = 0) -> OpCost | None:
    """mv(mat[M,N], vec[N]) and addmv(self, mat, vec): 2*M*N."""
    extra = args.tensors(range(first))
    mat, vec = args.tensor(first), args.tensor(first + 1)
    m, n = mat.shape
    out = Tensor((m,), mat.type)
    return cost_of("matmul", 2 * m * n, [*extra, mat, vec], [out], mat.type)


add(partial(_mv, first=1), "aten::addmv")


@register("aten::dot", "aten::vdot")
def _dot(args: Args) -> OpCost | None:
    """dot(a[N], b[N]): 2*N."""
    a, b = args.tensor(0), args.tensor(1)
    return cost_of("matmul", 2 * a.numel, [a, b], [Tensor((), a.type)], a.type)


@register("aten::matmul")
def _matmul(args: Args) -> OpCost | None:
    """matmul(a, b) with torch's 1-D and batch-broadcasting rules: 2 * batch * M * N * K.

    A wrapper: it dispatches to mm / bmm / dot (see ``costs.model``: Wrappers).
    """
    a, b = args.tensor(0), args.tensor(1)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return _dot(args)
    a_shape = (1, *a.shape) if len(a.shape) == 1 else a.shape
    b_shape = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    (m, k), n = a_shape[-2:], b_shape[-1]
    batch = broadcast(a_shape[:-2], b_shape[:-2])
    out_shape = (*batch, *([m] if len(a.shape) > 1 else []), *([n] if len(b.shape) > 1 else []))
    flops = 2 * math.prod(batch) * m * n * k
    return cost_of("matmul", flops, [a, b], [Tensor(out_shape, a.type)], a.type)


@register("aten::linear")
def _linear(args: Args) -> OpCost | None:
    """linear(input[..., K], weight[N, K], bias[N]): 2 * rows * N * K, bias not counted.

    A wrapper: it dispatches to addmm / mm / matmul (see ``costs.model``: Wrappers).
    """
    x, w = args.tensor(0), args.tensor(1)
    n, k = w.shape if len(w.shape) == 2 else (1, w.shape[0])
    out_shape = (*x.shape[:-1], n) if len(w.shape) == 2 else x.shape[:-1]
    out = Tensor(out_shape, _out_type(args, 3, x.type))
    flops = 2 * math.prod(x.shape[:-1]) * n * k
    return cost_of("matmul", flops, args.tensors([0, 1, 2]), [out], x.type)


@register("aten::_scaled_mm")
def _scaled_mm(args: Args) -> OpCost | None:
    """_scaled_mm(a[M,K], b[K,N], scale_a, scale_b, bias, scale_result, out_dtype): 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    out = Tensor((m, n), args.scalar_type(6) or _out_type(args, 8, a.type))
    return cost_of("matmul", 2 * m * n * k, args.tensors(range(6)), [out], a.type)


@register("aten::_int_mm")
def _int_mm(args: Args) -> OpCost | None:
    """_int_mm(a[M,K] int8, b[K,N] int8) -> int32: 2*M*N*K."""
    a, b = args.tensor(0), args.tensor(1)
    (m, k), (_, n) = a.shape, b.shape
    return cost_of("matmul", 2 * m * n * k, [a, b], [Tensor((m, n), "int")], a.type)
