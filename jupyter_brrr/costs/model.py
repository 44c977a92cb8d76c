"""Cost model: FLOPs and minimum bytes moved per PyTorch op, from its input shapes and dtypes.

An exported Kineto trace carries no FLOP counts. For each CPU op it records ``Input Dims`` (one
shape per argument, ``[]`` for scalars and non-tensors), ``Input type`` (``"float"``,
``"c10::BFloat16"``, ``"long int"``, ``"Scalar"``, ``"ScalarList"``, ``""`` for None, ...) and
``Concrete Inputs`` (the values of scalar arguments as text: ``"[-1, 1024]"``, ``"True"``, ``"0.5"``).
This module turns those into an :class:`OpCost`: one formula per op, in a module per family of
ops (``costs.formulas``), registered where it is defined (``costs.formula_registry``); any other aten op
is costed from its output shapes on the meta device (``costs._meta``).

Conventions
-----------
FLOPs
    A multiply-add counts 2. GEMM, convolution and attention formulas are those of
    ``torch.utils.flop_counter`` (re-derived, so importing this module does not import torch;
    the tests check them against ``FlopCounterMode``). Where we differ, on purpose:

    * causal attention counts half the FLOPs of full attention (``flop_counter`` ignores the mask);
    * the weight gradient of a *grouped* convolution counts the same FLOPs as its forward
      (``flop_counter`` counts ``groups`` times more); identical for ``groups == 1``;
    * ``addmm`` / ``baddbmm`` / ``linear`` count ``2*M*N*K`` like ``flop_counter``: the bias
      epilogue (``M*N`` adds) is left out, under ``1/(2K)`` of the total.

    Elementwise ops count FLOPs per output element: 1 for arithmetic, comparisons and single math
    functions (``exp``, ``cos``, ``tanh``, ``erf``, ``sqrt``...); composite activations count the
    sum of their parts (``sigmoid`` 3, ``silu`` 4, ``gelu`` 5 ...; see ``UNARY_FLOPS``). Norms, softmax
    and reductions count a few FLOPs per input element (see their sections). These ops are
    memory-bound by a wide margin, so the exact constant does not change the verdict.
Bytes
    The minimum traffic: every tensor input the computation needs is read once and every output
    written once, at its dtype's size. Scalars and non-tensor arguments move nothing; a 0-d tensor
    (dims ``[]`` with a tensor type) is one element. Tensors passed only for their shape or for an
    output that was not requested (``convolution_backward`` with an ``output_mask``, the ``self`` of
    pooling backwards) are not counted; gathers (``embedding``, ``index_select``, ``gather``) read
    only the rows they fetch. An input that is a broadcast (expanded) view, a stride of 0 in the
    trace's ``Input Strides``, is read once: its repeats come from cache (a bias added to every
    row, position ids expanded over a batch, a gather's row index expanded over the columns).
    The ``out=`` tensor of an ``out`` overload is the output, not an input.
dtype
    The key used to pick the device peak: ``"fp64"``, ``"fp32"``, ``"fp16"``, ``"bf16"``, ``"fp8"``,
    ``"int8"``; see :func:`dtype_key`.
Wrappers
    Some modelled ops only dispatch to other modelled ops (``aten::linear`` -> ``aten::addmm``,
    ``aten::matmul`` -> ``aten::mm``/``bmm``, ``aten::conv2d`` -> ``aten::convolution`` -> ...
    -> ``aten::cudnn_convolution``, ``aten::layer_norm`` -> ``aten::native_layer_norm``,
    ``aten::scaled_dot_product_attention`` -> a fused kernel op). They get a model too, so that a
    trace whose inner ops are missing still gets numbers, but an analysis must count only the
    innermost modelled op of a call stack, or the cost is counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..trace.frames import group_codes
from . import formulas  # noqa: F401  (registers every formula)
from ._meta import meta_cost
from .arguments import LAYOUT_ERRORS, SEQUENCES, Args, OpCost
from .dtypes import dtype_key, dtype_size
from .formula_registry import formula_for, launch_formula_for
from .launches import LAUNCH_COUNTED_KERNELS, Launch, launch_hint, parameter_chunks

__all__ = [
    "LAUNCH_COUNTED_KERNELS",
    "OpCost",
    "add_costs",
    "cost_columns",
    "dtype_key",
    "dtype_size",
    "has_launch_model",
    "has_model",
    "launch_hint",
    "op_cost",
    "parameter_chunks",
]


def has_launch_model(name: str) -> bool:
    """Whether this op's model reads what its kernels' launches tell (:func:`launch_hint`)."""
    return launch_formula_for(name) is not None


def has_model(name: str) -> bool:
    """Whether :func:`op_cost` has a formula for this op name (e.g. ``"aten::addmm"``); any other
    aten op may still be costed from its output shapes (``fallback``)."""
    return formula_for(name) is not None or launch_formula_for(name) is not None


def op_cost(
    name: str,
    dims: Sequence[Any] | None,
    types: Sequence[str] | None,
    concrete: Sequence[str] | None = None,
    *,
    fallback: bool = True,
    launch: Launch | None = None,
    strides: Sequence[Any] | None = None,
) -> OpCost | None:
    """FLOPs and minimum bytes of one op call, from its recorded argument shapes and types.

    ``dims``, ``types`` and ``concrete`` are the trace's ``Input Dims``, ``Input type`` and
    ``Concrete Inputs`` (lists or tuples; None where the trace recorded no shapes). An op
    with a formula here gets it; any other aten op is costed from its output shapes on the meta
    device (``_meta``; ``fallback=False`` skips that). ``launch`` (:func:`launch_hint`) is what
    the op's kernels tell, for ops whose shapes the trace leaves out. ``strides`` (the trace's
    ``Input Strides``) tells which inputs are broadcast views: their repeats are read once.
    None when no model fits: never 0, an op without a model is not free.
    """
    if not isinstance(dims, SEQUENCES) or not isinstance(types, SEQUENCES):
        return None
    if len(dims) != len(types):
        return None
    if not isinstance(concrete, SEQUENCES):
        concrete = None
    if not isinstance(strides, SEQUENCES):
        strides = None
    args = Args(dims, types, concrete, strides)
    model = formula_for(name)
    if model is not None:
        try:
            cost = model(args)
        except LAYOUT_ERRORS:
            cost = None
        if cost is not None:
            return cost
    by_launch = launch_formula_for(name)
    if by_launch is not None:
        try:
            cost = by_launch(args, name, launch)
        except LAYOUT_ERRORS:
            cost = None
        if cost is not None:
            return cost
    if fallback and name.startswith("aten::"):
        return meta_cost(name, dims, types, concrete, launch.dtype if launch else None)
    return None


_KEY_COLUMNS = ("name", "dims", "types", "concrete", "strides")


def add_costs(ops: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with float columns ``flops``, ``bytes`` and str columns ``category``, ``dtype``,
    ``source``.

    ``ops`` has columns name, dims, types and (optionally) concrete, as in the trace; dims may be
    None when the trace has no shapes. Rows without a model get NaN and "". Each distinct
    (name, dims, types, concrete) is costed once and the results are mapped back by code, so this
    stays fast on traces with hundreds of thousands of ops that repeat a few hundred shapes.
    Only ops with a formula are costed here (no meta-device fallback; see cost_columns).
    """
    columns = cost_columns(ops)
    out = ops.copy(deep=False)  # copy-on-write: the new columns leave ``ops`` as it was
    out["flops"] = columns["flops"]
    out["bytes"] = columns["bytes"]
    for column in ("category", "dtype", "source"):
        out[column] = pd.Series(columns[column], index=ops.index, dtype=object)
    return out


def cost_columns(
    ops: pd.DataFrame,
    factorized_names: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    fallback: np.ndarray | None = None,
    launches: list[Launch | None] | np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The columns :func:`add_costs` adds, as arrays, for a caller that needs no frame.

    ``factorized_names``: ``pd.factorize`` of the name column, when the caller has it already.
    ``fallback``: the rows (a boolean mask) that may be costed from their output shapes on the
    meta device when no formula fits (the analysis passes the ops that ran GPU work: costing
    every view and allocation of a trace would be wasted). ``launches``: per row, what its
    kernels tell (:func:`launch_hint`), or None.
    """
    n = len(ops)
    # Object arrays (Any: their elements are the names, shape lists and texts op_cost takes).
    names: Any = ops["name"].to_numpy(dtype=object)
    columns: list[Any] = [
        ops[c].to_numpy(dtype=object) if c in ops else np.full(n, None, dtype=object)
        for c in _KEY_COLUMNS[1:]
    ]
    # Costed: the ops whose name has a model (looked up once per name), or that may fall back
    # to the meta device, and that have shapes.
    name_codes, distinct = factorized_names or pd.factorize(names)
    with_model = np.array([has_model(name) for name in distinct] + [False], dtype=bool)
    wanted = with_model[name_codes]
    if fallback is not None:
        aten = np.array(
            [isinstance(name, str) and name.startswith("aten::") for name in distinct] + [False]
        )
        wanted |= np.asarray(fallback, dtype=bool) & aten[name_codes]
    candidates = np.flatnonzero(wanted)
    candidates = candidates[pd.notna(columns[0][candidates])]
    hints: Any = (
        np.full(n, None, dtype=object) if launches is None else np.asarray(launches, object)
    )
    # Arguments are keyed by identity: the trace reader decodes each distinct value once, so
    # equal arguments are the same object (elsewhere equal ones are merely costed twice).
    # Launch hints are few and distinct by value.
    hint_codes = pd.factorize(hints[candidates])[0] if len(candidates) else np.empty(0, np.int64)
    key_codes, first = group_codes(
        name_codes[candidates],
        *(
            np.fromiter(map(id, column[candidates]), np.int64, len(candidates))
            for column in columns
        ),
        hint_codes.astype(np.int64),
    )
    codes = np.full(n, -1, dtype=np.int64)
    codes[candidates] = key_codes
    may_fall_back = np.zeros(n, dtype=bool) if fallback is None else np.asarray(fallback, bool)
    results = [
        op_cost(
            names[row],
            columns[0][row],
            columns[1][row],
            columns[2][row],
            fallback=bool(may_fall_back[row]),
            launch=hints[row],
            strides=columns[3][row],
        )
        for row in candidates[first]
    ]
    # Code -1 (no model) picks the sentinel at the end.
    return {
        "flops": np.array([c.flops if c else np.nan for c in results] + [np.nan])[codes],
        "bytes": np.array([c.bytes if c else np.nan for c in results] + [np.nan])[codes],
        **{
            column: np.array([getattr(c, column) if c else "" for c in results] + [""], object)[
                codes
            ]
            for column in ("category", "dtype", "source")
        },
    }
