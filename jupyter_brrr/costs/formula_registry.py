"""Which formula costs which op: each formula module (``costs.formulas``) registers its formulas
here where it defines them, as ``torch.utils.flop_counter`` registers its own.

An op name has at most one formula (a second registration is an error: two families claiming
one op). Three kinds:

- a **formula** of the op's recorded arguments, by exact name (``aten::mm``), or by name
  prefix for kernels that torch.compile names (``triton_poi_...``), where the prefix's maker
  gets the full name;
- a **launch formula**, which also reads what the op's kernels tell (``costs.launches``), for
  ops whose shapes the trace leaves out, by exact name or prefix (``aten::_foreach_``).

Importing ``costs.formulas`` registers every formula; ``costs.model`` does so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .arguments import Args, OpCost
from .launches import Launch

__all__ = [
    "FORMULAS",
    "LAUNCH_FORMULAS",
    "Formula",
    "LaunchFormula",
    "add",
    "add_launch",
    "add_launch_prefix",
    "add_prefix",
    "formula_for",
    "launch_formula_for",
    "register",
]

Formula = Callable[[Args], "OpCost | None"]
LaunchFormula = Callable[[Args, str, "Launch | None"], "OpCost | None"]
AFormula = TypeVar("AFormula", bound=Formula)

FORMULAS: dict[str, Formula] = {}
LAUNCH_FORMULAS: dict[str, LaunchFormula] = {}
# Looked up in order, after the exact names.
PREFIXES: list[tuple[tuple[str, ...], Callable[[str], Formula]]] = []
LAUNCH_PREFIXES: list[tuple[str, LaunchFormula]] = []


def add(formula: Formula, *names: str) -> None:
    """Register ``formula`` for each op name (``"aten::mm"``)."""
    for name in names:
        if name in FORMULAS or name in LAUNCH_FORMULAS:
            raise ValueError(f"{name} has a formula already")
        FORMULAS[name] = formula


def register(*names: str) -> Callable[[AFormula], AFormula]:
    """A decorator: ``@register("aten::mm")`` over the formula that costs ``aten::mm``."""

    def decorate(formula: AFormula) -> AFormula:
        add(formula, *names)
        return formula

    return decorate


def add_prefix(prefixes: tuple[str, ...], make: Callable[[str], Formula]) -> None:
    """Ops whose name starts with one of ``prefixes`` get ``make(name)``."""
    PREFIXES.append((prefixes, make))


def add_launch(formula: LaunchFormula, *names: str) -> None:
    """Register a formula that also reads the op's kernel launches (``costs.launches``)."""
    for name in names:
        if name in FORMULAS or name in LAUNCH_FORMULAS:
            raise ValueError(f"{name} has a formula already")
        LAUNCH_FORMULAS[name] = formula


def add_launch_prefix(prefix: str, formula: LaunchFormula) -> None:
    """Ops whose name starts with ``prefix`` get the launch formula ``formula``."""
    LAUNCH_PREFIXES.append((prefix, formula))


def formula_for(name: str) -> Formula | None:
    """The formula of an op name, or None."""
    formula = FORMULAS.get(name)
    if formula is not None:
        return formula
    for prefixes, make in PREFIXES:
        if name.startswith(prefixes):
            return make(name)
    return None


def launch_formula_for(name: str) -> LaunchFormula | None:
    """The launch formula of an op name, or None."""
    formula = LAUNCH_FORMULAS.get(name)
    if formula is not None:
        return formula
    for prefix, by_prefix in LAUNCH_PREFIXES:
        if name.startswith(prefix):
            return by_prefix
    return None
