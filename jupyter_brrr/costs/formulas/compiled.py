# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""torch.compile's kernels: estimates from the tensors they are given."""

from __future__ import annotations

import math
from functools import partial

from ..arguments import Args, OpCost, Tensor, cost_of, promote
from ..dtypes import TYPES, type_kind
from ..formula_registry import Formula, add_prefix

# Kernels that torch.compile (Inductor) generates appear as ops named after the kernel, with the
# kernel's tensor arguments as inputs: pointwise (triton_poi_), persistent and looped reductions
# (triton_per_, triton_red_), and templates (triton_tem_: matmuls, attention, convolutions).
_FUSED_PREFIXES = ("triton_poi_", "triton_per_", "triton_red_")
_TEMPLATE_PREFIX = "triton_tem_"


def _fused(args: Args) -> OpCost | None:
    """An Inductor fused kernel: each tensor argument (its inputs and outputs; the trace does not
    say which is which) is moved once, and it does 1 FLOP per element of its largest tensor, a
    lower bound, since the fused ops are not in the trace. Both are estimates: the bytes are an
    upper bound when the kernel gathers a few rows of a large table (an embedding)."""
    tensors = args.tensors()
    if not tensors:
        return None
    largest = max(t.numel for t in tensors)
    cost = cost_of("fused", largest, tensors, [], promote(tensors))
    return OpCost(cost.flops, cost.bytes, cost.category, cost.dtype, "estimate")


def _template(args: Args, name: str) -> OpCost | None:
    """An Inductor template kernel (``triton_tem_fused_<ops>_<n>``): each tensor argument moved
    once, and the FLOPs of the op its name says it computes, found among its arguments' shapes:
    a matrix product (2*M*N*K from two operands and an output that fit) or attention (4 * batch
    * heads * Sq * Sk * D from the 4-D query-shaped arguments; a flex attention's block mask is
    data, not shape, so its sparsity is not known: the dense count is an upper bound)."""
    tensors = args.tensors()
    if not tensors:
        return None
    flops = None
    if "attention" in name:
        four_d = [t for t in tensors if len(t.shape) == 4]
        if four_d:
            b, h, s_q, d = four_d[0].shape
            s_k = max(t.shape[2] for t in four_d)
            flops = 4 * b * h * s_q * s_k * d * (2.5 if "backward" in name else 1)
        category = "attention"
    elif "mm" in name:
        flops = _template_gemm_flops(tensors)
        category = "matmul"
    else:
        category = "conv" if "conv" in name else "fused"
    if flops is None:
        return None
    traffic = sum(t.nbytes for t in tensors)
    # The operands' dtype: the largest floating tensors (attention's fp32 statistics and a
    # matmul's fp32 bias do not make it an fp32 kernel).
    floating = [t for t in tensors if type_kind(t.type) == 2] or tensors
    largest = max(floating, key=lambda t: t.numel)
    return OpCost(float(flops), float(traffic), category, TYPES[largest.type][0], "estimate")


def _template_gemm_flops(tensors: list[Tensor]) -> float | None:
    """2 * batch * M * N * K of the first operands A[.., M, K], B[.., K, N] with an output
    [.., M, N] among the tensors."""
    shapes = [t.shape for t in tensors if len(t.shape) >= 2]
    for a in shapes:
        for b in shapes:
            if a is b or a[-1] != b[-2]:
                continue
            m, k, n = a[-2], a[-1], b[-1]
            if any(o[-2:] == (m, n) and o is not a and o is not b for o in shapes):
                batch = math.prod(a[:-2]) if len(a) > 2 else 1
                return 2.0 * batch * m * n * k
    return None


def _template_for(name: str) -> Formula:
    return partial(_template, name=name)


add_prefix(_FUSED_PREFIXES, lambda name: _fused)
add_prefix((_TEMPLATE_PREFIX,), _template_for)
