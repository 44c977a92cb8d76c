# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Attention: ``torch.utils.flop_counter``'s ``sdpa_flop_count`` and
``sdpa_backward_flop_count``; a causal mask halves them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import NamedTuple

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import add

__all__ = ["ATTENTION_LAYOUTS"]


class _AttnLayout(NamedTuple):
    """Where one attention op keeps its flags."""

    causal: int  # position of is_causal (or of custom_mask_type when mask_type is True)
    backward: bool = False
    # q/k/v laid out [batch, seq, heads, dim] instead of [batch, heads, seq, dim]
    bshd: bool = False
    mask_type: bool = False  # causal given as custom_mask_type (0: none, 1 and 2: causal)
    lse: int | bool = False  # logsumexp written: always (True), or a compute_log_sumexp position


ATTENTION_LAYOUTS: dict[str, _AttnLayout] = {
    "aten::scaled_dot_product_attention": _AttnLayout(5),
    "aten::_scaled_dot_product_attention_math": _AttnLayout(5),
    "aten::_scaled_dot_product_fused_attention_overrideable": _AttnLayout(5),
    "aten::_scaled_dot_product_flash_attention": _AttnLayout(4, lse=True),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _AttnLayout(4, lse=True),
    "aten::_scaled_dot_product_efficient_attention": _AttnLayout(6, lse=4),
    "aten::_scaled_dot_product_cudnn_attention": _AttnLayout(6, lse=4),
    "aten::_cudnn_attention_forward": _AttnLayout(10, lse=8),
    "aten::_flash_attention_forward": _AttnLayout(8, bshd=True, lse=True),
    "aten::_efficient_attention_forward": _AttnLayout(9, bshd=True, mask_type=True, lse=10),
    "aten::_scaled_dot_product_flash_attention_backward": _AttnLayout(11, backward=True),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _AttnLayout(7, backward=True),
    "aten::_scaled_dot_product_efficient_attention_backward": _AttnLayout(11, backward=True),
    "aten::_scaled_dot_product_cudnn_attention_backward": _AttnLayout(14, backward=True),
    "aten::_cudnn_attention_backward": _AttnLayout(14, backward=True),
    "aten::_flash_attention_backward": _AttnLayout(11, backward=True, bshd=True),
    "aten::_efficient_attention_backward": _AttnLayout(
        14, backward=True, bshd=True, mask_type=True
    ),
}


def _attention_flops(q: Sequence[int], k: Sequence[int], v: Sequence[int], backward: bool) -> int:
    """sdpa_flop_count (QK^T and PV) or sdpa_backward_flop_count (recompute QK^T + 4 products).

    Shapes are [batch, heads, seq, dim]; key/value may have fewer heads (GQA): the kernel
    broadcasts them, so the query's head count is the one that counts.
    """
    b, h, s_q, d_q = q
    s_k, d_v = k[2], v[3]
    if backward:
        return 2 * b * h * s_q * s_k * (3 * d_q + 2 * d_v)
    return 2 * b * h * s_q * s_k * (d_q + d_v)


def _attention(args: Args, layout: _AttnLayout) -> OpCost | None:
    """Attention forward or backward; the causal mask skips about half of the score matrix."""
    first = 1 if layout.backward else 0
    q, k, v = args.tensor(first), args.tensor(first + 1), args.tensor(first + 2)
    if len(q.shape) != 4:
        return None  # varlen (nested) layout: the sequence lengths are in tensors we cannot see

    def bhsd(shape: tuple[int, ...]) -> tuple[int, ...]:
        return (shape[0], shape[2], shape[1], shape[3]) if layout.bshd else shape

    flops = _attention_flops(bhsd(q.shape), bhsd(k.shape), bhsd(v.shape), layout.backward)
    flag = args.value(layout.causal)
    causal = bool(flag) if layout.mask_type else flag is True
    if causal:
        flops /= 2
    reads = args.tensors()  # q, k, v, masks; in backward also grad_out, out, logsumexp
    if layout.backward:
        return cost_of("attention", flops, reads, [q, k, v], q.type)
    b, h, s_q, _ = bhsd(q.shape)
    out_shape = (*q.shape[:-1], v.shape[-1])
    writes = [Tensor(out_shape, q.type)]
    lse = layout.lse if isinstance(layout.lse, bool) else bool(args.value(layout.lse, False))
    if lse:
        writes.append(Tensor((b, h, s_q), "float"))
    return cost_of("attention", flops, reads, writes, q.type)


for _name, _layout in ATTENTION_LAYOUTS.items():
    add(partial(_attention, layout=_layout), _name)
