"""``%%brrr --sweep batch=8..512`` and ``%%brrr --memory``: the IPython glue of the size sweep
(``actions/sweep.py``) and the memory breakdown (``memory.py``). The cell runs in its exec form
(``cell.NotebookCell``), parsed once by the magic.

The sweep sets the variable in the user's namespace before each run of the cell, which builds
its inputs from it; each size is measured like a report (``--warmup``/``--repeat``, at least 1
and 5). The report shown is that of the size with the best throughput, with the sweep in it (its
``sweep`` key: the Sweep tab, and the static tables and picture in the saved notebook).
Progress is a bar where someone can watch it (``shell.widgets_enabled``; replaced by a line of
text when the sweep ends, so the saved notebook holds no widget), else one printed line per
size. The kernel's interrupt (Ctrl-C, the stop button) stops the sweep between runs and keeps
what was measured: a Cancel button could not be clicked while the cell runs.

A cell that looks stateful (trains, updates tensors in place, appends, writes files) is not
re-run without a yes, as the A/B treats it: ``--sweep-stateful restore`` copies the state the cell
can change, puts it back before each size (each size starts from the same state) and when the
sweep ends (the namespace as it was before the cell); ``keep`` lets the runs change it. Every
other cell's state is copied and put back too, where the copy fits (state the code does not show:
a BatchNorm's statistics, a list a hook fills), but its variable keeps the last size. What no
copy can put back (a thread the cell starts, a queue whose items cannot be read) is named before
anything runs, and only ``keep`` runs such a cell. After the restore, what still differs from the
copy is said.
``--memory`` runs the cell once more under the memory profiler (at the sweep's best size with
``--sweep``), with the cell's state copied and put back after that run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.display import display

from ..actions.snapshot import Snapshot, names_used, survey
from ..actions.stateful import cannot_undo, keeps_changing, notebook_findings
from ..actions.sweep import DEFAULT_ROUNDS, sweep
from ..capture.memory import memory_breakdown
from ..capture.run import ProfilerInUseError
from .cell_ab import stateful_refusal
from .cell_output import first_run_shown, hidden_output
from .notebook_cell import NotebookCell
from .shell import hidden_names, progress_printers, widgets_enabled

if TYPE_CHECKING:
    from argparse import Namespace

    from IPython.core.interactiveshell import InteractiveShell

    from ..report.report import Report

SWEEP_WARMUP, SWEEP_REPEAT = 1, 5
# Code that mentions these can read a variable it does not name.
_LOOKS_UP_NAMES = frozenset({"eval", "exec", "globals", "locals", "vars", "get_ipython"})


def sweep_runs(args: Namespace) -> tuple[int, int]:
    """The warm-up and timed runs per size: the flags', at least 1 and 5."""
    return max(args.warmup, SWEEP_WARMUP), args.repeat if args.repeat > 1 else SWEEP_REPEAT


def run_sweep(shell: InteractiveShell, code: NotebookCell, args: Namespace, name: str) -> None:
    """``--sweep NAME=SIZES`` (with ``--memory``, the breakdown at the best size)."""
    __tracebackhide__ = True

    say, tell = progress_printers("--sweep", args.quiet)

    var, sizes = args.sweep_variable, args.sweep_sizes
    warmup, repeat = sweep_runs(args)
    rounds = DEFAULT_ROUNDS
    runs = len(sizes) * (warmup + repeat + 1 + rounds * repeat)
    namespace = shell.user_ns
    run_cell = code.run
    source = code.source
    findings = notebook_findings(namespace, source)
    names = names_used(namespace, source, hidden=hidden_names(shell))
    if var not in names and not _LOOKS_UP_NAMES & set(names):
        # Every size would run the same work: its flat time would read as "overhead".
        tell(
            f"not run: the cell never reads {var} (nor do the notebook's functions it calls), "
            f"so every size would run the same work. Build the cell's inputs from {var} (for "
            f"example x = torch.randn({var}, 1024)), or sweep a name the cell uses."
        )
        return None
    undoable = cannot_undo(findings)
    if findings and args.sweep_stateful is None:
        plan = survey(namespace, names)
        refusal = stateful_refusal(
            findings,
            plan,
            runs,
            undoable,
            flag="--sweep-stateful",
            blocked=[str(f) for f in keeps_changing(findings)] + plan.cannot_restore,
        )
        tell(
            refusal.replace("the A/B would run it", "the sweep would run it")
            + "\nThe cell did not run."
        )
        return None
    snapshot = None
    if args.sweep_stateful != "keep":
        # A stateful cell's namespace goes back to before the cell; another's too, but for
        # its variable, which keeps the last size.
        snapshot = Snapshot.take(
            namespace, [*names, var] if findings else [n for n in names if n != var]
        )
        blocked = [str(f) for f in keeps_changing(findings)] + snapshot.survey.cannot_restore
        if blocked:
            tell(
                "not run: the cell changes state that no copy can put back ("
                + "; ".join(blocked[:5])
                + "). Use --sweep-stateful keep to let the runs change it."
            )
            return None
        if not snapshot.complete and findings:
            tell(
                f"not run: the state this cell can change cannot be copied ({snapshot.survey.limit}). "
                "Use --sweep-stateful keep to let the runs change it."
            )
            return None
        if not snapshot.complete:
            say(f"no copy of the state: {snapshot.survey.limit}. The cell looks stateless.")
            snapshot = None
        elif findings:
            say(f"copied {snapshot.survey.describe()}: put back before each size and at the end.")
    for finding in undoable:
        tell(f"cannot be undone: {finding}: each of the runs does it again.")
    say(
        f"{var} = {', '.join(map(str, sizes))}: the cell runs at least {runs:,} times "
        f"({warmup} warm-up, {repeat} timed, 1 profiled per size, then {rounds} interleaved "
        f"rounds of {repeat}; budget {args.sweep_budget:g} s)."
    )

    def step(size: int) -> Any:
        namespace[var] = size
        return run_cell()

    bar = _ProgressBar(var, len(sizes)) if widgets_enabled(shell) and not args.quiet else None

    def progress(point: Any) -> None:
        if bar is not None:
            bar.show(point.k, point.size)
        else:
            say(f"{var}={point.size} ({point.k}/{point.n})")

    reset = snapshot.reset if snapshot is not None else None
    try:
        # The cell's output is its first run's (cell_output): each size runs it many times.
        with hidden_output(shell) as hidden:
            result = sweep(
                first_run_shown(step, hidden),
                sizes,
                warmup=warmup,
                repeat=repeat,
                budget_s=args.sweep_budget,
                cpu=args.cpu,
                burst=args.burst,
                variable=var,
                progress=progress,
                reset=reset,
                namespace=namespace,
                name=name,
            )
    except ProfilerInUseError as error:
        tell(f"not run: {error}")
        return None
    except BaseException as error:
        # The cell failed at the first size: its own error, its own traceback, state put back.
        if snapshot is not None:
            snapshot.restore()
        raise error.with_traceback(code.own_traceback(error.__traceback__))  # noqa: B904
    finally:
        if bar is not None:
            bar.done()
    if hidden.any:
        say(
            f"the cell's output is its first run's; its {result.runs_total - 1:,} other runs' "
            f"({hidden.describe()}) is not shown."
        )
    best = result.best if result.best is not None else None
    report = result.reports.get(best) if best is not None else None
    memory = None
    if args.memory and report is not None:
        memory = _memory_at(shell, step, best, reset, args, None)
    if snapshot is not None:
        restored = snapshot.restore()
        snapshot.release()
        how = "as it was before the cell" if findings else "as the first run left it"
        for line in restored.lines(how):
            tell(f"{line}.")
    if not findings and best is not None:
        namespace[var] = result.points[-1].size if result.points else best
    shell.user_ns["_brrr_sweep"] = result
    for line in result.lines:
        say(line)
    if report is None:
        tell("no size was measured: no report.")
        return None
    report.sweep = result.to_dict()
    report.notes.insert(0, f"This report is the sweep's best size, {var}={best}.")
    if memory is not None:
        report.memory = memory.to_dict()
    shell.user_ns["_brrr"] = report
    if not args.quiet:
        display(report, display_id=True)
    return None


class _ProgressBar:
    """A progress bar and a line under the cell while the sweep runs; at the end the output
    becomes plain text (its display id updated), so that the saved notebook shows what ran
    rather than a widget whose model is gone."""

    def __init__(self, var: str, n: int) -> None:
        import ipywidgets as w

        self.var, self.n = var, n
        self.bar = w.FloatProgress(value=0.0, min=0.0, max=1.0, layout=w.Layout(width="16em"))
        self.label = w.Label(f"sweep of {var}: starting")
        self.box = w.HBox([self.bar, self.label])
        self.handle = display(self.box, display_id=True)
        self.last = ""

    def show(self, k: int, size: int) -> None:
        self.bar.value = (k - 1) / self.n
        self.last = f"{self.var}={size} ({k}/{self.n})"
        self.label.value = (
            f"sweep: {self.last}; interrupt the kernel to stop, keeping what was measured"
        )

    def done(self) -> None:
        text = f"sweep of {self.var}: ran to {self.last or 'no size'}"
        if self.handle is not None:
            self.handle.update({"text/plain": text}, raw=True)
        self.box.close()


def run_memory(
    shell: InteractiveShell, code: NotebookCell, args: Namespace, report: Report
) -> None:
    """``--memory`` without a sweep: the cell once more under the memory profiler; the report
    gets the breakdown."""
    memory = _memory_at(shell, lambda _size: code.run(), None, None, args, code.source)
    if memory is not None:
        report.memory = memory.to_dict()


def _memory_at(
    shell: InteractiveShell,
    step: Callable[[Any], Any],
    size: int | None,
    reset: Callable[[], Any] | None,
    args: Namespace,
    source: str | None,
) -> Any:
    """The memory breakdown of one more run (at ``size``). ``reset``: the sweep's, called first;
    else, for a cell (``source``) that looks stateful, its state is copied and put back after
    the run, and a cell whose state cannot be copied is not run again."""

    def say(text: str) -> None:
        print(f"%%brrr --memory: {text}", flush=True)

    namespace = shell.user_ns
    snapshot = None
    if reset is not None:
        reset()
    elif source is not None:
        findings = notebook_findings(namespace, source)
        names = names_used(namespace, source, hidden=hidden_names(shell))
        snapshot = Snapshot.take(namespace, names)
        blocked = [str(f) for f in keeps_changing(findings)] + snapshot.survey.cannot_restore
        if blocked:
            say(
                "no breakdown: the cell changes state that no copy can put back ("
                + "; ".join(blocked[:5])
                + "), so it is not run again."
            )
            return None
        if not snapshot.complete and findings:
            say(
                "no breakdown: the cell looks stateful and its state cannot be copied "
                f"({snapshot.survey.limit}), so it is not run again."
            )
            return None
        if not snapshot.complete:
            snapshot = None  # a cell that looks stateless, with too much to copy: run as is
        elif findings:
            say(f"the cell looks stateful: {snapshot.survey.describe()} copied, put back after.")
    say(
        "one more run under the memory profiler" + (f" at {size}" if size is not None else "") + "."
    )
    try:
        with hidden_output(shell):  # one more run: its output was shown by the first
            memory = memory_breakdown(step, size, warmup=0, cpu=args.cpu)
    except Exception as error:  # the breakdown is an extra: the report stands without it
        say(f"no breakdown ({type(error).__name__}: {error}).")
        return None
    finally:
        if snapshot is not None:
            restored = snapshot.restore()
            snapshot.release()
            for line in restored.lines():
                say(f"{line}.")
    shell.user_ns["_brrr_memory"] = memory
    return memory
