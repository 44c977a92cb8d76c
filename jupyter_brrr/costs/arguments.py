# pyright: reportOptionalMemberAccess=false
# Why: ``cost_of`` adds up the bytes of tensors that ``Args.tensor`` may have found absent
# (None); the None fails there, and ``op_cost`` turns the error into "no model for this call".
"""One op call's arguments as the trace records them, and the cost the formulas build from
them (the conventions: see ``costs.model``).

A formula reads its arguments with ``Args.tensor(i)``, None where the trace lacks that tensor;
a formula that needs it then fails on the None (AttributeError, TypeError), which ``op_cost``
turns into "no model for this call" (``LAYOUT_ERRORS``). Checking each access would double the
formulas for the same outcome, so the formula modules relax pyright's checks of optional
access file-wide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, cast

import numpy as np

from .dtypes import HALF_TYPES, SCALAR_TYPE_CODES, TYPES, type_kind, widest

__all__ = [
    "LAYOUT_ERRORS",
    "SEQUENCES",
    "Args",
    "OpCost",
    "Tensor",
    "broadcast",
    "cost_of",
    "parse_concrete",
    "promote",
    "stat_type",
]

SEQUENCES = (list, tuple, np.ndarray)  # how a trace's argument lists may arrive
# What a formula may raise on a layout it does not know (another torch version, an unseen
# overload): no number is better than a wrong one.
LAYOUT_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError)


@dataclass(frozen=True)
class OpCost:
    """What one op costs: arithmetic, minimum memory traffic, and what kind of op it is."""

    flops: float  # floating-point operations (a multiply-add counts 2)
    bytes: float  # minimum traffic: each input read once, each output written once
    category: str  # matmul, conv, attention, elementwise, reduction, norm, softmax, embedding, copy, other
    dtype: str  # compute dtype key for picking the device peak: fp64, fp32, fp16, bf16, fp8, int8
    # How it was made: "formula" (a formula of ``costs.formulas``), "shapes" (outputs on the meta
    # device, FLOPs by flop_counter or per element: see _meta), "estimate" (compiled kernels
    # and optimizer steps whose shapes the trace leaves out: see each model).
    source: str = "formula"


class Tensor(NamedTuple):
    """A tensor: its shape and trace type name, and for an input that is a broadcast
    (expanded) view, the elements it holds in memory (``distinct``: its shape without the
    dimensions of stride 0, from the trace's Input Strides)."""

    shape: tuple[int, ...]
    type: str
    distinct: int | None = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def elements(self) -> int:
        """The elements in memory: a broadcast view's repeats are read once (from cache)."""
        return self.numel if self.distinct is None else self.distinct

    @property
    def nbytes(self) -> int:
        return self.elements * TYPES[self.type][1]


@lru_cache(maxsize=4096)
def parse_concrete(text: str) -> Any:
    """A Concrete Inputs string as a Python value: "" -> None, "[1, 2]" -> [1, 2], "0." -> 0.0."""
    text = text.strip()
    if not text:
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [parse_concrete(part) for part in inner.split(",")] if inner else []
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


class Args:
    """Positional access to one op's recorded arguments."""

    __slots__ = ("concrete", "dims", "strides", "types")

    def __init__(
        self,
        dims: Sequence[Any],
        types: Sequence[str],
        concrete: Sequence[str] | None,
        strides: Sequence[Any] | None = None,
    ):
        self.dims = dims
        self.types = types
        self.concrete = concrete
        self.strides = strides

    def __len__(self) -> int:
        return len(self.types)

    def tensor(self, i: int) -> Tensor | None:
        """Argument ``i`` as a tensor, or None when it is absent, None, a scalar or a list."""
        if i >= len(self.types) or self.types[i] not in TYPES:
            return None
        shape = tuple(map(int, self.dims[i]))
        return Tensor(shape, self.types[i], self._distinct(i, shape))

    def _distinct(self, i: int, shape: tuple[int, ...]) -> int | None:
        """The elements argument ``i`` holds in memory when it is a broadcast view (a stride of
        0 in a dimension longer than 1); None otherwise, or without recorded strides."""
        if self.strides is None or i >= len(self.strides):
            return None
        if not isinstance(self.strides[i], SEQUENCES) or len(self.strides[i]) != len(shape):
            return None
        strides = cast("Sequence[int]", self.strides[i])
        if not any(stride == 0 and size > 1 for size, stride in zip(shape, strides, strict=True)):
            return None
        return math.prod(size for size, stride in zip(shape, strides, strict=True) if stride != 0)

    def tensors(self, positions: Sequence[int] | None = None) -> list[Tensor]:
        """The tensor arguments among ``positions`` (all arguments by default)."""
        positions = range(len(self.types)) if positions is None else positions
        return [t for t in (self.tensor(i) for i in positions) if t is not None]

    def value(self, i: int, default: Any = None) -> Any:
        """The concrete value of argument ``i``; ``default`` when unrecorded or None."""
        if self.concrete is None or i >= len(self.concrete) or not self.concrete[i]:
            return default
        value = parse_concrete(self.concrete[i])
        return default if value is None else value

    def ints(self, i: int, n: int, default: int | None = None) -> list[int] | None:
        """An int-list argument (stride, padding...) expanded to ``n`` entries; None if unknown."""
        value = self.value(i)
        if value is None or value == []:
            return None if default is None else [default] * n
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list):
            return None
        values = cast("list[object]", value)
        if not all(isinstance(v, int) for v in values):
            return None  # e.g. padding="same", which the trace does not record
        ints = cast("list[int]", values)
        return ints * n if len(ints) == 1 else ints

    def scalar_type(self, i: int) -> str | None:
        """A ScalarType argument (a dtype code) as a trace type name."""
        code = self.value(i)
        if isinstance(code, bool) or not isinstance(code, int):
            return None  # a flag at this position: another overload
        return SCALAR_TYPE_CODES.get(code)

    def mask(self, i: int, n: int) -> list[bool]:
        """An output_mask argument; all True when unrecorded."""
        value = self.value(i)
        if isinstance(value, list) and len(cast("list[object]", value)) == n:
            return [bool(v) for v in cast("list[object]", value)]
        return [True] * n


def cost_of(
    category: str,
    flops: float,
    reads: Sequence[Tensor | None],
    writes: Sequence[Tensor | None],
    compute: str,
) -> OpCost:
    # A None among the tensors (absent from the trace) fails here: no model for the call.
    traffic = sum(t.nbytes for t in reads) + sum(t.nbytes for t in writes)
    return OpCost(float(flops), float(traffic), category, TYPES[compute][0])


def broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast shape of several shapes (numpy rules)."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis}
        big = sizes - {1}
        out.append(max(big) if big else 1)
    return tuple(out)


def promote(tensors: Sequence[Tensor]) -> str:
    """Result type of an op on these tensors, following torch's rule for 0-d operands.

    0-d tensors (and wrapped Python numbers) take part only when of a higher category than every
    dimensioned operand; a Python float arrives as a 0-d "double" but gives the default float.
    """
    dimensioned = [t for t in tensors if t.shape] or list(tensors)
    top = max(type_kind(t.type) for t in dimensioned)
    higher = [t for t in tensors if not t.shape and type_kind(t.type) > top]
    if higher:
        best = max(higher, key=lambda t: type_kind(t.type)).type
        return "float" if best == "double" else best
    return widest([t.type for t in dimensioned if type_kind(t.type) == top])


def stat_type(t: Tensor | None) -> str:
    """The dtype of saved statistics (mean, rstd): float for half inputs, as the kernels use."""
    return "float" if t.type in HALF_TYPES else t.type
