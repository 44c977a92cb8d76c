"""The A/B of a ``%%brrr`` cell: one entry point for ``%%brrr --ab`` and the buttons.

``CellAB`` holds one cell (``NotebookCell``) with the report of its profiled run. ``--ab`` runs it
at once; the buttons (``controls.py``) run it on a click, in a worker thread. Either way:

- the number of runs is estimated once, from the report's span (``per_call_s``);
- a cell that looks stateful (``actions.stateful``) is found once; the front end asks before
  re-running it (a flag, or a confirmation click);
- the state the cell can change is copied (``actions.snapshot``) and put back when the A/B ends,
  or, with ``keep``, only the names the cell binds are put back; what no copy can put back (a
  thread the cell starts, a queue whose items cannot be read) is named before anything runs,
  and only ``keep`` runs such a cell; after the restore, what still differs from the copy is
  said rather than "put back";
- the result goes into the report (``report.ab``), the user's namespace (``_brrr_ab``) and the
  report's output, updated in place through its display handle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..actions import ab
from ..actions.cell_function import CellTarget
from ..actions.snapshot import Snapshot, StateNotCopied, Survey, names_used, survey
from ..actions.stateful import Finding, cannot_undo, keeps_changing, notebook_findings
from ..actions.variants import VariantSpec
from .cell_output import hidden_output
from .notebook_cell import NotebookCell

if TYPE_CHECKING:
    from ..report.report import Report


class OutputHandle(Protocol):
    """What the report's output is updated in place through: IPython's ``DisplayHandle``, or
    anything else with its ``update`` (a test's recorder)."""

    def update(self, obj: Any) -> None: ...


def _silent(_text: str) -> None:
    pass


def per_call_s(report: Report) -> float | None:
    """One run's time, for the estimate of how many runs fit the budget: the report's span, or
    its wall time where it has no GPU span."""
    summary = report.summary
    return summary.get("span_s") or summary.get("wall_s")


class CellAB:
    """The A/B of one profiled cell against eager (see the module docstring)."""

    def __init__(
        self,
        cell: NotebookCell,
        report: Report,
        *,
        name: str,
        hidden: Iterable[str] = (),
        cpu: bool = False,
        handle: OutputHandle | None = None,
    ) -> None:
        self.cell = cell
        self.report = report
        self.name = name
        self.hidden = frozenset(hidden)
        self.cpu = cpu
        self.handle = handle
        self.per_call_s = per_call_s(report)
        self.findings: list[Finding] = notebook_findings(cell.namespace, cell.source)
        self.undoable: list[Finding] = cannot_undo(self.findings)
        self.keeps_changing: list[Finding] = keeps_changing(self.findings)

    def estimate_runs(self, variants: Sequence[str | VariantSpec], budget_s: float) -> int:
        """The most runs an A/B of ``variants`` makes with ``budget_s`` of timing each."""
        return ab.estimate_runs(variants, self.per_call_s, budget_s=budget_s)

    def names(self) -> tuple[str, ...]:
        """The names of the user's namespace the cell can read or change."""
        return names_used(self.cell.namespace, self.cell.source, hidden=self.hidden)

    def survey(self) -> Survey:
        """What a copy of the state the cell can change would hold."""
        return survey(self.cell.namespace, self.names())

    def cannot_put_back(self, plan: Survey) -> list[str]:
        """What no copy can put back, found before running: the threads the cell starts and,
        of what the copy would hold (``plan``), the queues whose items cannot be read."""
        return [str(f) for f in self.keeps_changing] + plan.cannot_restore

    def run(
        self,
        variants: Sequence[str | VariantSpec],
        *,
        budget_s: float = ab.DEFAULT_BUDGET_S,
        keep: bool = False,
        cancel: threading.Event | None = None,
        progress: Callable[[ab.Progress], None] | None = None,
        say: Callable[[str], None] = _silent,
        tell: Callable[[str], None] = _silent,
        target: CellTarget | None = None,
        before_update: Callable[[ab.ABResult], None] | None = None,
    ) -> ab.ABResult:
        """Run the A/B of ``variants`` against eager; the front end has asked first if the cell
        looks stateful. ``keep``: no copy of the state, the runs' changes stay (only the names
        the cell binds are put back). ``say`` gets progress notes, ``tell`` what concerns the
        user's data. Unless cancelled, the result goes into the report, ``_brrr_ab`` and the
        report's output. ``target``: the cell's function form, when the caller built it already
        (by default it is built now, over the namespace as it is). ``before_update``: called
        with the result before the report's output is updated (a fix's verdict goes in first).

        Raises ``StateNotCopied`` when the state of a stateful cell cannot be copied or, without
        ``keep``, when no copy can put it back (``cannot_put_back``),
        ``CellNotSupported`` or ``SyntaxError`` for a cell that cannot become a function, and
        ``ProfilerInUseError`` under another profiler; nothing has run then.
        """
        __tracebackhide__ = True
        if target is None:
            target = self.cell.function()
        namespace = self.cell.namespace
        snapshot: Snapshot | None = None
        bindings = None
        if keep:
            tell(
                "--ab-stateful keep: every run changes the cell's state, and what the runs did "
                "stays; the names the cell binds are put back after."
            )
            bindings = target.snapshot()
        else:
            snapshot = Snapshot.take(namespace, self.names())
            blocked = self.cannot_put_back(snapshot.survey)
            if blocked:
                raise StateNotCopied(
                    "the cell changes state that no copy can put back ("
                    + "; ".join(blocked[:5])
                    + "). %%brrr --ab ... --ab-stateful keep runs the A/B keeping what the runs "
                    "do; or make the cell a function of inputs that it does not change."
                )
            if not snapshot.complete and self.findings:
                raise StateNotCopied(
                    f"the state this cell can change cannot be copied ({snapshot.survey.limit}). "
                    "%%brrr --ab ... --ab-stateful keep runs the A/B without a copy (what the "
                    "runs do stays); or make the cell a function of inputs that it does not "
                    "change."
                )
            if not snapshot.complete:
                say(
                    f"no copy of the state: {snapshot.survey.limit}. The cell looks stateless; "
                    "the names it binds are put back after the A/B."
                )
            elif self.findings:
                say(
                    f"copied {snapshot.survey.describe()}: put back when the A/B ends, and "
                    "before each checked run."
                )
        for finding in self.undoable:
            tell(f"cannot be undone: {finding}: each of the runs does it again.")
        try:
            # Every run of the A/B is one more: what the cell prints was shown by its first run.
            with hidden_output() as hidden:
                result = ab.run(
                    target.target(self.name),
                    variants,
                    budget_s=budget_s,
                    cpu=self.cpu,
                    cancel=cancel,
                    progress=progress,
                    max_runs=self.estimate_runs(variants, budget_s),
                    report=self.report,
                    snapshot=snapshot,
                )
        except KeyboardInterrupt:
            say("interrupted: the A/B stopped; the profiler is off and the kernel usable.")
            if snapshot is not None and snapshot.complete:
                say("the state the cell can change was put back as the first run left it.")
            raise
        finally:
            if bindings is not None:
                target.restore(bindings)
        if hidden.any:
            result.notes.append(
                f"Output: the A/B's {result.runs_total:,} runs of the cell printed or displayed "
                f"{hidden.describe()}, not shown: the cell's output is its first run's."
            )
            say(
                f"the cell's output is its first run's; the A/B's runs' ({hidden.describe()}) is not shown."
            )
        if self.undoable:
            result.notes.append(
                "Not undone: "
                + "; ".join(str(f) for f in self.undoable[:5])
                + ": each run did it again."
            )
        if not result.cancelled:
            self.report.ab = result.to_dict()
            namespace["_brrr_ab"] = result
            if before_update is not None:
                before_update(result)
            if self.handle is not None:
                self.handle.update(self.report)
        return result


def stateful_refusal(
    findings: list[Finding],
    plan: Survey,
    runs: int,
    undoable: list[Finding],
    *,
    flag: str | None = None,
    blocked: Sequence[str] = (),
) -> str:
    """Why a stateful cell is not re-run, what is found, and how to run it anyway. ``blocked``:
    what no copy can put back (``CellAB.cannot_put_back``): then only ``keep`` runs it."""
    lines = [
        f"not run: the cell looks stateful, and the A/B would run it up to {runs:,} times, "
        "each run changing that state:",
        *(f"  {finding}" for finding in findings[:8]),
    ]
    if len(findings) > 8:
        lines.append(f"  and {len(findings) - 8} more")
    if plan.complete:
        copy = (
            f"the state the cell can change ({plan.describe()}) is copied first and put back "
            "after, so the variables stay as this run left them"
        )
    else:
        copy = f"but the state cannot be copied here ({plan.limit})"
    undo = (
        " What no copy puts back, and every run would do again: "
        + "; ".join(f"{f.function + '(), ' if f.function else ''}line {f.line}" for f in undoable)
        + " (files, iterators)."
        if undoable
        else ""
    )
    if flag and blocked:
        lines.append(
            "No copy can put back what it changes: "
            + "; ".join(blocked[:5])
            + f". To run it anyway, add {flag} keep, to let the runs change it ({flag} "
            "restore is refused: what it claimed to put back would not hold)."
        )
    elif flag:
        lines.append(
            f"To run it anyway, add {flag} restore: {copy}.{undo} Or {flag} keep, to let the "
            "runs change it."
        )
    return "\n".join(lines)
