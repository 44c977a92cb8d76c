"""``jupyter_brrr.profile``: profile a function call and return its report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..report.report import Report
from ..report.target import parse_goal
from . import attribution
from .run import ProfilerInUseError, capture


def profile(
    fn: Callable[..., Any],
    *args: Any,
    warmup: int = 0,
    repeat: int = 1,
    cpu: bool = False,
    target: str | None = None,
    items: float | None = None,
    burst: bool = False,
    modules: bool = True,
    stack: bool = False,
    **kwargs: Any,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` and return its Report.

    By default ``fn`` runs once, profiled. With ``warmup`` or ``repeat`` > 1 it warms up first,
    unprofiled, then ``repeat`` runs are timed with CUDA events without the profiler (the span
    the report trusts: their median, with their spread, the SM clock and power while they ran),
    then one run is profiled. On a GPU the warm-up is sustained: at least ``warmup`` runs, and
    more until about a second has passed and the SM clock has stopped falling (at most 5 s);
    ``burst=True`` warms up exactly ``warmup`` runs instead (the GPU may still be at its boost
    clock). So ``fn`` runs ``warmup + repeat + 1`` times with ``burst=True`` or on the CPU, and
    at least that many on a GPU; ``report.summary["runs"]`` says how many.
    An error in ``fn`` propagates after the profiler has stopped. ``target`` (``"30ms"``, or
    ``"2000/s"`` with ``items`` per run) adds a plan for reaching it (``report.target``).

    ``modules``: attribute ops to the ``nn.Module`` paths that ran them (the modules among the
    arguments, the function's closure and globals); ``stack``: record the line of your code that
    made each torch call (slower host side in the profiled run).

    torch's profilers cannot nest: ``ProfilerInUseError`` is raised, before ``fn`` runs, when
    another profiler is running (yours, or this one around the call), and after it ran when
    ``fn`` started a profiler of its own (which keeps its events).
    """
    __tracebackhide__ = True
    goal = parse_goal(target, items) if target is not None else None  # bad input: before running
    name = getattr(fn, "__qualname__", None) or repr(fn)
    if modules:
        attributed = attribution.for_call(fn, args, kwargs, lines=stack)
    else:
        attributed = attribution.Attribution(lines=True) if stack else None
    result = capture(
        lambda: fn(*args, **kwargs),
        warmup=warmup,
        repeat=repeat,
        cpu=cpu,
        burst=burst,
        name=name,
        attribution=attributed,
    )
    if result.error is not None:
        raise result.error
    if result.no_report is not None or result.report is None:
        raise ProfilerInUseError(result.no_report or "the profiler recorded nothing")
    if goal is not None:
        result.report.set_target(goal)
    return result.report
