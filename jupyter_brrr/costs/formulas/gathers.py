# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Gathers, scatters, embedding bags and the losses that pick one value per target: they read
only the rows they fetch (at most the whole table)."""

from __future__ import annotations

from functools import partial

from ..arguments import Args, OpCost, Tensor, cost_of
from ..dtypes import TYPES
from ..formula_registry import add, add_launch, register
from ..launches import Launch


@register("aten::embedding")
def _embedding(args: Args) -> OpCost | None:
    """embedding(weight[V, D], indices, ...): out = indices.shape + [D]."""
    weight, idx = args.tensor(0), args.tensor(1)
    out = Tensor((*idx.shape, weight.shape[-1]), weight.type)
    # An index broadcast over the batch (position ids) fetches each of its rows once.
    fetched = Tensor((min(idx.elements * weight.shape[-1], weight.numel),), weight.type)
    return cost_of("embedding", 0, [idx, fetched], [out], weight.type)


@register("aten::index_select")
def _index_select(args: Args) -> OpCost | None:
    """index_select(self, dim, index): self with ``dim`` cut to the index length."""
    x, idx = args.tensor(0), args.tensor(2)
    shape = list(x.shape) or [1]
    shape[int(args.value(1, 0)) % len(shape)] = idx.numel
    out = Tensor(tuple(shape), x.type)
    fetched = Tensor((min(out.numel, x.numel),), x.type)
    return cost_of("embedding", 0, [idx, fetched], [out], x.type)


@register("aten::gather")
def _gather(args: Args) -> OpCost | None:
    """gather(self, dim, index, sparse_grad): out = index.shape."""
    x, idx = args.tensor(0), args.tensor(2)
    out = Tensor(idx.shape, x.type)
    fetched = Tensor((min(out.numel, x.numel),), x.type)
    return cost_of("embedding", 0, [idx, fetched], [out], x.type)


@register("aten::embedding_dense_backward")
def _embedding_backward(args: Args) -> OpCost | None:
    """embedding_dense_backward(grad_output, indices, num_weights, ...): accumulate rows into a
    zeroed [num_weights, D] gradient, 1 add per grad element."""
    grad, idx = args.tensor(0), args.tensor(1)
    rows = int(args.value(2))
    out = Tensor((rows, grad.shape[-1]), grad.type)
    return cost_of("embedding", grad.numel, [grad, idx], [out], grad.type)


@register("aten::_embedding_bag", "aten::_embedding_bag_forward_only", "aten::embedding_bag")
def _embedding_bag(args: Args) -> OpCost | None:
    """_embedding_bag(weight[V, D], indices[n], offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset, padding_idx).

    Reads the n rows it fetches (at most the table), the indices and offsets; writes the bags
    [B, D], offset2bag [n] and bag_size [B] (and the arg-max indices [B, D] in max mode).
    FLOPs: one add per fetched element (sum), a multiply more with per-sample weights, a divide
    per output element for the mean (mode 1).
    """
    weight, idx, offsets = args.tensor(0), args.tensor(1), args.tensor(2)
    mode = int(args.value(4, 0))
    weights = args.tensor(6)
    bags = offsets.numel - (1 if args.value(7, False) is True else 0)
    dim = weight.shape[-1]
    fetched = Tensor((min(idx.numel * dim, weight.numel),), weight.type)
    out = Tensor((bags, dim), weight.type)
    writes = [out, Tensor((idx.numel,), idx.type), Tensor((bags,), idx.type)]
    if mode == 2:
        writes.append(Tensor((bags, dim), idx.type))
    flops = idx.numel * dim * (2 if weights is not None else 1) + (out.numel if mode == 1 else 0)
    reads = [idx, offsets, fetched] + ([weights] if weights is not None else [])
    return cost_of("embedding", flops, reads, writes, weight.type)


def _embedding_bag_backward(args: Args, *, rows: int) -> OpCost | None:
    """_embedding_bag_dense_backward(grad[B, D], indices[n], offset2bag, bag_size,
    maximum_indices, num_weights, ...): each index adds its bag's gradient row into a zeroed
    dense [num_weights, D] gradient, which is written whole."""
    grad, idx = args.tensor(0), args.tensor(1)
    dim = grad.shape[-1]
    gathered = Tensor((idx.numel * dim,), grad.type)
    out = Tensor((int(args.value(rows)), dim), grad.type)
    reads = [gathered, *args.tensors([1, 2, 3])]
    return cost_of("embedding", idx.numel * dim, reads, [out], grad.type)


add(partial(_embedding_bag_backward, rows=5), "aten::_embedding_bag_dense_backward")
add(partial(_embedding_bag_backward, rows=6), "aten::_embedding_bag_backward")


def _scatter_into(args: Args, *, index: int, source: int | None, inplace: bool) -> OpCost | None:
    """index_add_ / index_copy_ / scatter_ / scatter_add_ (self, dim, index, source...).

    In place, only the slices the index touches are read and written (one per source element);
    the out-of-place form copies ``self`` whole first. One FLOP per element where it adds.
    """
    x, idx = args.tensor(0), args.tensor(index)
    src = args.tensor(source) if source is not None else None
    touched = src.numel if src is not None else idx.numel
    slices = Tensor((touched,), x.type)
    reads = [idx] + ([src] if src is not None else [])
    if inplace:
        reads.append(slices)
        writes = [slices]
    else:
        reads.append(x)
        writes = [x]
    return cost_of("embedding", touched, reads, writes, x.type)


_SCATTERS = {  # op: positions of its index and source (None: index_fill has none)
    "index_add": (2, 3),
    "index_copy": (2, 3),
    "index_fill": (2, None),
    "scatter": (2, 3),
    "scatter_add": (2, 3),
    "scatter_reduce": (2, 3),
}
for _op, (_index, _source) in _SCATTERS.items():
    add(partial(_scatter_into, index=_index, source=_source, inplace=True), f"aten::{_op}_")
    add(partial(_scatter_into, index=_index, source=_source, inplace=False), f"aten::{_op}")


@register("aten::index_put_", "aten::index_put", "aten::_index_put_impl_")
def _index_put(args: Args) -> OpCost | None:
    """index_put_ / _index_put_impl_(self, indices, values, accumulate, ...): the profiler does
    not record the index list, so the index tensors' own bytes are left out; each value is
    written to its place (read first when accumulating: one add each)."""
    x, values = args.tensor(0), args.tensor(2)
    accumulate = args.value(3, False) is True
    slices = Tensor((values.numel,), x.type)
    reads = [values] + ([slices] if accumulate else [])
    flops = values.numel if accumulate else 0
    return cost_of("embedding", flops, reads, [slices], x.type)


@register(
    "aten::nll_loss_forward", "aten::nll_loss2d_forward", "aten::nll_loss", "aten::nll_loss_nd"
)
def _nll_loss(args: Args) -> OpCost | None:
    """nll_loss_forward(self[N, C, ...], target[N, ...], weight, reduction, ignore_index): picks
    one log-probability per target (and its class weight) and sums them: reads the targets and
    what they pick, not the whole input; writes the loss and the total weight."""
    x, target, weight = args.tensor(0), args.tensor(1), args.tensor(2)
    picked = Tensor((target.numel,), x.type)
    reads = [target, picked] + (
        [Tensor((target.numel,), weight.type)] if weight is not None else []
    )
    out = Tensor((target.numel,) if args.value(3, 1) == 0 else (), x.type)
    flops = target.numel * (2 if weight is not None else 1)
    return cost_of("reduction", flops, reads, [out, Tensor((), x.type)], x.type)


@register("aten::nll_loss_backward", "aten::nll_loss2d_backward")
def _nll_loss_backward(args: Args) -> OpCost | None:
    """nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
    total_weight): writes the whole gradient (zeros, and -weight/total at each target); the
    input is passed for its shape only."""
    grad, x, target, weight = args.tensor(0), args.tensor(1), args.tensor(2), args.tensor(3)
    reads = [grad, target, *args.tensors([6])]
    if weight is not None:
        reads.append(Tensor((target.numel,), weight.type))
    return cost_of("reduction", target.numel, reads, [Tensor(x.shape, x.type)], x.type)


@register("aten::_transform_bias_rescale_qkv")
def _transform_bias_rescale_qkv(args: Args) -> OpCost | None:
    """_transform_bias_rescale_qkv(qkv[B, T, 3D], bias[3D], num_heads) -> q, k, v, each
    [B, heads, T, D / heads]: a bias add on each element and a scale on q (2 FLOPs each)."""
    qkv, bias = args.tensor(0), args.tensor(1)
    return cost_of("elementwise", 2 * qkv.numel, [qkv, bias], [qkv], qkv.type)


def _index_by_launch(args: Args, name: str, hints: Launch | None = None) -> OpCost | None:
    """index(self, indices) (advanced indexing): the profiler does not record the index list,
    so the gathered elements are bounded by the kernel's launch: index_elementwise_kernel<nt,
    vt> runs nt * vt elements per block. Reads and writes each gathered element and reads one
    int64 index per element: an estimate."""
    x = args.tensor(0)
    if hints is None or not hints.blocks or hints.per_block is None:
        return None
    elements = int(hints.blocks * hints.per_block)
    out = Tensor((elements,), x.type)
    return OpCost(
        0.0, float(2 * out.nbytes + 8 * elements), "embedding", TYPES[x.type][0], "estimate"
    )


add_launch(_index_by_launch, "aten::index")
