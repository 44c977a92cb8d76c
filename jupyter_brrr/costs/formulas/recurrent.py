# pyright: reportOptionalMemberAccess=false, reportOptionalOperand=false
# Why: a formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that
# tensor, and fails on it where it needs it: ``op_cost`` turns the error into "no model for
# this call" (see ``costs.arguments``).
"""Recurrent layers (cuDNN): every step multiplies the batch by each gate weight."""

from __future__ import annotations

import math
from typing import NamedTuple

from ..arguments import Args, OpCost, Tensor, cost_of
from ..formula_registry import register

# cuDNN's mode codes: gates per hidden unit, and FLOPs per hidden unit per step outside the
# GEMMs (gate nonlinearities, bias adds, the cell update): LSTM 3 sigmoids (3 each), 2 tanh,
# c = f*c + i*g, h = o*tanh(c), 8 bias adds: 23; GRU 2 sigmoids, a tanh, r*(W h + b),
# h = (1 - z)*n + z*h, 6 bias adds: 19; plain RNN: 2 bias adds and the activation: 3.
_RNN_MODES = {0: (1, 3), 1: (1, 3), 2: (4, 23), 3: (3, 19)}


class _RNNShape(NamedTuple):
    steps: int  # batch x time steps (packed: the sequences' total length)
    weights: int  # elements of the gate weight matrices of all layers and directions
    hidden: int  # hidden units x layers x directions
    gates: int
    pointwise: int  # FLOPs per hidden unit per step outside the GEMMs


def _rnn_shape(
    args: Args,
    *,
    weight_list: int,
    stride: int,
    buffer: int,
    mode: int,
    hidden: int,
    layers: int,
    bidirectional: int,
) -> _RNNShape | None:
    x = args.tensor(0)
    gates, pointwise = _RNN_MODES[int(args.value(mode))]
    directions = 2 if args.value(bidirectional, False) is True else 1
    units = int(args.value(hidden)) * int(args.value(layers)) * directions
    per_group = int(args.value(stride, 4))
    shapes = args.dims[weight_list]
    if args.types[weight_list] == "TensorList" and shapes:
        # Each layer and direction: w_ih, w_hh, then biases, then (with projections) w_hr.
        matrices = [
            math.prod(shape)
            for i, shape in enumerate(shapes)
            if i % per_group < 2 or (per_group in (3, 5) and i % per_group == per_group - 1)
        ]
        weights = sum(matrices)
    else:  # more than 30 weights, whose shapes the profiler leaves out: the flat buffer
        flat = args.tensor(buffer)
        if flat is None:
            return None
        weights = flat.numel
    return _RNNShape(math.prod(x.shape[:-1]), weights, units, gates, pointwise)


@register("aten::_cudnn_rnn")
def _cudnn_rnn(args: Args) -> OpCost | None:
    """_cudnn_rnn(input, weights, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
    proj_size, num_layers, batch_first, dropout, train, bidirectional, batch_sizes, ...).

    FLOPs: each gate weight meets every step of the batch, 2 * steps * weights, plus the gates'
    pointwise work. Bytes: input, weights, hx, cx read; output, hy, cy written; training also
    writes the reserve cuDNN keeps for the backward, about one value per gate, hidden and cell
    state per unit and step (an estimate: cuDNN's layout is its own).
    """
    shape = _rnn_shape(
        args, weight_list=1, stride=2, buffer=3, mode=6, hidden=7, layers=9, bidirectional=13
    )
    if shape is None:
        return None
    x = args.tensor(0)
    directions = 2 if args.value(13, False) is True else 1
    out_size = int(args.value(8, 0)) or int(args.value(7))
    out = Tensor((*x.shape[:-1], directions * out_size), x.type)
    weights = args.tensor(3) or Tensor((shape.weights,), x.type)
    reads = [x, weights, *args.tensors([4, 5])]
    writes = [out, *args.tensors([4, 5])]  # hy, cy: the shapes of hx, cx
    if args.value(12, False) is True:
        states = shape.gates + (2 if shape.gates == 4 else 1)
        writes.append(Tensor((shape.steps * shape.hidden * states,), x.type))
    flops = 2 * shape.steps * shape.weights + shape.pointwise * shape.steps * shape.hidden
    return cost_of("rnn", flops, reads, writes, x.type)


@register("aten::_cudnn_rnn_backward")
def _cudnn_rnn_backward(args: Args) -> OpCost | None:
    """_cudnn_rnn_backward(input, weights, weight_stride0, weight_buf, hx, cx, output,
    grad_output, grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first,
    dropout, train, bidirectional, batch_sizes, dropout_state, reserve, output_mask).

    The data gradient repeats the forward's GEMMs through time, and the weight gradient (when
    output_mask asks for it) does them once more: 2 or 4 * steps * weights, plus twice the
    forward's pointwise work. Reads everything saved and every incoming gradient; writes the
    gradients of the input, hx, cx and the weights.
    """
    shape = _rnn_shape(
        args, weight_list=1, stride=2, buffer=3, mode=10, hidden=11, layers=13, bidirectional=17
    )
    if shape is None:
        return None
    x = args.tensor(0)
    want = args.mask(21, 4)
    weights = args.tensor(3) or Tensor((shape.weights,), x.type)
    flops = 2 * shape.steps * shape.weights * (1 + want[3])
    flops += 2 * shape.pointwise * shape.steps * shape.hidden
    reads = [x, weights, *args.tensors([4, 5, 6, 7, 8, 9, 20])]
    wanted = [args.tensor(0), args.tensor(4), args.tensor(5), weights]
    writes = [t for t, w in zip(wanted, want, strict=True) if w and t is not None]
    return cost_of("rnn", flops, reads, writes, x.type)
