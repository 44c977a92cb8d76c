"""The ``%%brrr`` cell magic: glue between IPython, ``capture`` and the report's display.

The cell is parsed once (``cell.NotebookCell``): its exec form is what runs profiled, its
function form what the A/B's variants run (``ab.CellAB``, which the buttons use too).

The cell runs in the user's namespace like a plain cell: its assignments persist, its last
expression's value is shown as usual, and an error is re-raised with the cell's own traceback
(the magic's frames are hidden with ``__tracebackhide__``).
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import DisplayHandle, display

from ..actions.cell_function import CellNotSupported
from ..actions.snapshot import StateNotCopied
from ..analysis import code_change
from ..capture import attribution
from ..capture.attribution import Attribution
from ..capture.run import Capture, ProfilerInUseError, capture
from .cell_ab import CellAB, stateful_refusal
from .cell_output import first_run_shown, hidden_output
from .notebook_cell import NotebookCell
from .shell import hidden_names, progress_printers, prompt_number, widgets_enabled

if TYPE_CHECKING:
    from argparse import Namespace

    from IPython.core.interactiveshell import InteractiveShell

    from ..actions.ab import ABResult
    from ..report.history import Store
    from ..report.report import Report


_TRY_FIXES_HELP = (
    "after the profile, run the fix of each recommendation that has one without editing the "
    "code (TF32, bf16 autocast, channels_last, a CUDA graph, torch.compile, pinned host copies) "
    "as variants of the A/B (--ab-budget, --ab-stateful apply), and store each "
    "recommendation's verdict against its predicted saving in the report"
)


@magics_class
class BrrrMagics(Magics):
    """Holds the ``%%brrr`` cell magic."""

    @property
    def ip(self) -> InteractiveShell:
        """The shell the magic is registered with (IPython sets it before any call)."""
        assert self.shell is not None
        return self.shell

    @magic_arguments()
    @argument("-h", "--help", action="store_true", help="show this help and run nothing")
    @argument(
        "--warmup",
        type=int,
        default=0,
        metavar="N",
        help=(
            "run the cell at least N times unprofiled first, so first-run costs stay out "
            "(default 0); on a GPU the warm-up goes on until about 1 s has passed and the SM "
            "clock has stopped falling (at most 5 s), unless --burst"
        ),
    )
    @argument(
        "--repeat",
        type=int,
        default=1,
        metavar="M",
        help=(
            "time M unprofiled runs with CUDA events and report their median span (default 1). "
            "With --warmup or --repeat > 1 the cell runs the warm-up, M timed runs and one "
            "profiled run; before that one, its variables are set back to what they were "
            "before the cell, so its memory peak is one run's"
        ),
    )
    @argument(
        "--burst",
        action="store_true",
        help=(
            "with --warmup/--repeat: warm up exactly N runs, a short burst (the GPU may still "
            "be at its boost clock, a few percent faster than in sustained work)"
        ),
    )
    @argument(
        "--name",
        default=None,
        help=(
            "a name for the report (default: the cell's execution count). Every run under one "
            "name is kept (in the kernel and in .brrr_history/ beside the notebook), and the "
            "report shows the change since the previous run of that name; %%brrr history NAME "
            "lists them"
        ),
    )
    @argument(
        "--target",
        default=None,
        metavar="GOAL",
        help=(
            "a goal: a time per run (30ms, 250us) or a throughput (2000/s, with --items). The "
            "report states the gap, whether fixing the top bottleneck can close it, and what "
            "scaling out would take. A named cell keeps its target for later runs"
        ),
    )
    @argument(
        "--items",
        type=float,
        default=None,
        metavar="N",
        help="with --target RATE/s: the items (samples, tokens) one run processes, e.g. the batch size",
    )
    @argument(
        "--quiet",
        action="store_true",
        help="show no report; it is still stored in the variable _brrr",
    )
    @argument(
        "--cpu", action="store_true", help="profile CPU ops only, even where a GPU is present"
    )
    @argument(
        "--stack",
        action="store_true",
        help=(
            "record the line of your code that made each torch call (the op table's line "
            "column); slows the profiled run's host side"
        ),
    )
    @argument(
        "--no-modules",
        action="store_true",
        help="do not attribute ops to the nn.Module paths that ran them (on by default)",
    )
    @argument(
        "--ab",
        default=None,
        metavar="VARIANTS",
        help=(
            "after the profile, compare the cell as eager against VARIANTS, comma-separated: "
            "compile, compile:MODE (MODE: reduce-overhead, max-autotune-no-cudagraphs, "
            "max-autotune), graph (a CUDA graph). E.g. --ab compile,graph. Runs the cell many "
            "more times (the count is printed) and adds the comparison to the report"
        ),
    )
    @argument("--try-fixes", action="store_true", help=_TRY_FIXES_HELP)
    @argument(
        "--ab-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --ab: timing per variant, in seconds (default 2)",
    )
    @argument(
        "--ab-stateful",
        default=None,
        choices=("restore", "keep"),
        help=(
            "with --ab, for a cell that looks stateful (trains, updates tensors in place, "
            "appends, writes files), which --ab does not re-run otherwise: 'restore' copies the "
            "state the cell can change first and puts it back after the A/B (files written "
            "stay written); 'keep' leaves what the runs did"
        ),
    )
    @argument(
        "--sweep",
        default=None,
        metavar="NAME=SIZES",
        help=(
            "measure the cell at growing sizes: before each run NAME is set in the namespace "
            "(the cell builds its inputs from it). SIZES: 8,16,32 or 8..512 (doublings). Each "
            "size runs the warm-up, timed runs (--warmup/--repeat, at least 1 and 5) and one "
            "profiled run; the report gets the verdict per doubling, the knee and where memory "
            "runs out (the Sweep tab)"
        ),
    )
    @argument(
        "--sweep-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --sweep: no size is started that would end past this time (default 60)",
    )
    @argument(
        "--sweep-stateful",
        default=None,
        choices=("restore", "keep"),
        help=(
            "with --sweep, for a cell that looks stateful: 'restore' copies its state and puts "
            "it back before each size and at the end; 'keep' lets the runs change it"
        ),
    )
    @argument(
        "--memory",
        action="store_true",
        help=(
            "run the cell once more under the memory profiler and add what holds the peak "
            "(parameters, gradients, optimizer state, activations...) to the report (the "
            "Memory tab); with --sweep, at the best size"
        ),
    )
    @line_cell_magic
    def brrr(self, line: str, cell: str | None = None) -> Any:
        """Profile the GPU work of this cell and show where the time went.

        The cell runs once by default, profiled, like a plain cell: its variables persist and
        its last value is shown. The report (also in the variable ``_brrr``) splits the GPU span
        into compute-bound, memory-bound, other and idle time, lists the ops with their FLOP/s,
        bytes/s and bound, and says what to try first.

        ``--ab compile,graph`` then runs the A/B right away (for notebooks run by nbclient or
        CI): the cell as eager, torch.compile and a CUDA graph, each compiled or captured, warmed
        up, checked against eager's output and timed interleaved for ``--ab-budget`` seconds,
        then profiled once more to say why one is faster. Without ``--ab``, buttons under the
        report do the same on request (in front ends where someone can click: not under nbclient
        or nbconvert). Either way the state the cell can change (its variables, and the tensors,
        modules, optimizers and containers they reach) is copied before and put back after, so
        it is left as the first run made it; files it writes cannot be put back. A cell that
        looks stateful (trains, updates tensors in place, appends, writes files) is not re-run
        without a yes: ``--ab-stateful restore`` (or the confirmation under the buttons). The
        comparison is in ``_brrr.ab`` and, with its tables and per-variant reports, ``_brrr_ab``.

        ``--try-fixes`` runs the fixes that need no code change the same way, with verdicts. Under
        a profiler of your own, or one the cell starts (they cannot nest), there is no report.

        ``--name NAME`` keeps every run of that name; the report then shows the change since the
        previous run (also in ``_brrr_change``). As a line magic (one %):

            %brrr history            # the names with runs
            %brrr history NAME       # the runs of NAME
            %brrr diff NAME [A B]    # compare runs A and B of NAME (default: the last two)
            %brrr forget NAME        # delete the runs of NAME
        """
        __tracebackhide__ = True
        if cell is None:
            return self._line(line)
        args = self._parse(line)
        if args is None:
            return None
        if not cell.strip():
            print("%%brrr: the cell is empty: there is nothing to profile.")
            return None
        code = NotebookCell.from_shell(self.ip, cell)
        code.codes  # noqa: B018  compiled now: a cell that cannot compile fails here, as a plain cell
        name = args.name or f"cell [{prompt_number(self.ip)}]"
        if args.sweep is not None:
            from .sweep_magic import run_sweep

            return run_sweep(self.ip, code, args, name)
        result = self._capture(code, args, name)
        if result is None:
            # Nothing ran yet. The cell still runs, once, as a plain cell (a profiler of the
            # user's own records it).
            value = code.run()
            return value if code.show else None
        if result.no_report is not None:
            print(f"%%brrr: no report: {result.no_report}", flush=True)
        report = result.report
        handle = None
        if report is not None:
            handle = self._show(report, result.error is None, code, args, cell)
        if result.error is not None:
            _explain(result.error)
            raise result.error.with_traceback(code.own_traceback(result.error.__traceback__))
        if report is not None and (args.ab or args.try_fixes):
            if report.empty:
                if not args.quiet:
                    print("%%brrr --ab: the cell ran no torch operations: no A/B.")
            else:
                (self._try_fixes if args.try_fixes else self._ab)(code, args, name, report, handle)
        elif (
            report is not None
            and handle is not None
            and not report.empty
            and widgets_enabled(self.ip)
        ):
            _show_controls(self.ip, code, name, report, handle, cpu=args.cpu)
        return result.value if code.show else None

    def _capture(self, code: NotebookCell, args: Namespace, name: str) -> Capture | None:
        """The cell captured as the flags ask (``capture``), or None, said in words, where a
        profiler of the user's own is running (nothing ran then)."""
        __tracebackhide__ = True
        try:
            # A cell that prints prints once, as a plain cell: its first run's output is shown.
            with hidden_output(self.ip) as hidden:
                result = capture(
                    first_run_shown(code.run, hidden),
                    warmup=args.warmup,
                    repeat=args.repeat,
                    cpu=args.cpu,
                    burst=args.burst,
                    name=name,
                    source="magic",
                    namespace=self.ip.user_ns,
                    attribution=_attribution(code, args),
                )
            if hidden.any:
                print(
                    "%%brrr: the cell's output is its first run's; its other runs' "
                    f"({hidden.describe()}) is not shown.",
                    flush=True,
                )
        except ProfilerInUseError as error:
            print(f"%%brrr: no report: {error} The cell ran once, as a plain cell.", flush=True)
            return None
        return result

    def _show(
        self, report: Report, ran: bool, code: NotebookCell, args: Namespace, cell: str
    ) -> DisplayHandle | None:
        """The report kept (``_brrr``, its name's history, ``--memory``: where the cell ran
        without an error) and shown; the display's handle, or None where nothing was shown."""
        __tracebackhide__ = True
        if ran:
            # The snippet of a fix that needs a code change quotes the cell's own line.
            code_change.with_lines(report.recommendations, cell)
            self._remeasure(report, args, cell)
            if args.memory and not report.empty:
                from .sweep_magic import run_memory

                run_memory(self.ip, code, args, report)
        self.ip.user_ns["_brrr"] = report
        if args.quiet:
            return None
        if report.empty and ran:
            print("%%brrr: the cell ran no torch operations: there is nothing to show.")
            return None
        # A display id, so that an A/B can update this output in place (and the saved
        # notebook holds the result).
        return display(report, display_id=True)

    def _try_fixes(
        self,
        code: NotebookCell,
        args: Namespace,
        name: str,
        report: Report,
        handle: DisplayHandle | None,
    ) -> None:
        """``--try-fixes``: the fixes of the recommendations (with ``--ab``'s variants) in one
        A/B (``_ab``: the same state copy, output check and run-count bound), then each
        recommendation's verdict stored in the report and printed."""
        from ..actions.fixes import FIX_OF_CAUSE, store_verdicts
        from ..actions.variants import parse_variants

        say, _ = progress_printers("--try-fixes", args.quiet)
        fixes = [
            FIX_OF_CAUSE[r["cause"]] for r in report.recommendations if r["cause"] in FIX_OF_CAUSE
        ]
        if not fixes:
            store_verdicts(report, None)
            say(
                "no recommendation has a fix that runs without editing the code"
                + (" (there are no recommendations)." if not report.recommendations else ".")
            )
            if handle is not None:
                handle.update(report)
            return
        asked = [s.name for s in (args.ab_variants or [])[1:]]
        args.ab_variants = parse_variants(list(dict.fromkeys([*asked, *fixes])))
        result = self._ab(code, args, name, report, handle)
        if result is None or result.cancelled:
            return
        store_verdicts(report, result)
        for n, recommendation in enumerate(report.recommendations, 1):
            entry = recommendation.get("try")
            if entry:
                say(f"{n}. {recommendation['title']}: {entry['verdict']} ({entry['reason']})")
        if handle is not None:
            handle.update(report)

    def _ab(
        self,
        code: NotebookCell,
        args: Namespace,
        name: str,
        report: Report,
        handle: DisplayHandle | None,
    ) -> ABResult | None:
        """``--ab``: run the A/B now (``CellAB``, as the buttons do), printing progress; the
        report is updated in place.

        A cell that looks stateful runs only with ``--ab-stateful``; with ``restore`` (and for
        every other cell, where the copy fits in memory) the state it can change is copied
        first and put back after, so the namespace is as the first run left it."""
        __tracebackhide__ = True
        from ..actions import ab

        say, tell = progress_printers("--ab", args.quiet)

        cell_ab = CellAB(
            code,
            report,
            name=name,
            hidden=hidden_names(self.ip),
            cpu=args.cpu,
            handle=handle,
        )
        try:
            target = code.function()
        except (CellNotSupported, SyntaxError) as error:
            say(f"cannot re-run this cell as variants: {error}")
            return
        budget = args.ab_budget if args.ab_budget is not None else ab.DEFAULT_BUDGET_S
        runs = cell_ab.estimate_runs(args.ab_variants, budget)
        if cell_ab.findings and args.ab_stateful is None:
            plan = cell_ab.survey()
            tell(
                stateful_refusal(
                    cell_ab.findings,
                    plan,
                    runs,
                    cell_ab.undoable,
                    flag="--ab-stateful",
                    blocked=cell_ab.cannot_put_back(plan),
                )
            )
            return
        say(
            f"eager vs {', '.join(s.name for s in args.ab_variants[1:])}: the cell will run at "
            f"most {runs:,} more times (each variant is timed for about {budget:g} s)."
        )

        def progress(step: ab.Progress) -> None:
            if step.new_step and step.step != "done":
                say(step.message)

        try:
            result = cell_ab.run(
                args.ab_variants,
                budget_s=budget,
                keep=args.ab_stateful == "keep",
                progress=progress,
                say=say,
                tell=tell,
                target=target,
            )
        except (StateNotCopied, ProfilerInUseError) as error:
            tell(f"not run: {error}")
            return
        say(f"done: {result.runs_total:,} runs in {result.elapsed_s:.1f} s.")
        for line in result.restored.lines() if result.restored is not None else []:
            tell(f"{line}.")
        from ..views import ab_text

        for line in ab_text.variant_lines(result):
            say(f"  {line}")
        return result

    def _remeasure(self, report: Report, args: Namespace, cell: str) -> None:
        """A named run joins its name's history (with the change since the previous run); a
        target gets its plan. Never fails the cell."""
        if args.name is None:
            if args.goal is not None:
                report.set_target(args.goal)
            return
        from ..report import history as history_store

        say = (lambda text: None) if args.quiet else (lambda text: print(f"%%brrr: {text}"))
        try:
            comparison, messages = history_store.keep_run(
                report,
                args.name,
                code=cell,
                goal=args.goal,
                folder=history_store.notebook_folder(self.ip.user_ns),
            )
        except Exception as error:  # the history is a convenience: the profile is what matters
            say(f"no history kept for {args.name!r} this time ({type(error).__name__}: {error}).")
            return
        for message in messages:
            say(message)
        if comparison is not None:
            self.ip.user_ns["_brrr_change"] = comparison

    def _line(self, line: str) -> Any:
        """``%brrr history|diff|forget ...``: the line magic."""
        from ..report import history
        from ..report.comparison import Comparison

        words = split_line(line, _line_usage())
        if not words or words[0] in ("-h", "--help", "help"):
            print(_line_usage())
            return None
        command, rest = words[0], words[1:]
        store = history.store_for(history.notebook_folder(self.ip.user_ns))
        if command == "history":
            if not rest:
                names = store.names()
                if not names:
                    print("%brrr history: no named runs yet. Name a cell: %%brrr --name NAME")
                    return None
                for name in names:
                    runs = store.history(name)
                    print(f"{name}: {len(runs)} run{'s' if len(runs) != 1 else ''}")
                return None
            if len(rest) != 1:
                raise UsageError(f"%brrr history takes one name.\n\n{_line_usage()}")
            runs = store.history(rest[0])
            for message in runs.messages:
                print(f"%brrr: {message}")
            runs.messages.clear()
            if not len(runs):
                print(f"%brrr history: no runs of {rest[0]!r} yet. Known names: {_names(store)}.")
                return None
            return runs
        if command == "diff":
            if len(rest) not in (1, 3):
                raise UsageError(
                    f"%brrr diff takes a name and, optionally, two runs.\n\n{_line_usage()}"
                )
            runs = store.history(rest[0])
            try:
                numbers = [int(word) for word in rest[1:]] or [-2, -1]
            except ValueError:
                raise UsageError(
                    f"%brrr diff: runs are numbers (3) or counted from the newest (-1), not "
                    f"{' '.join(rest[1:])!r}."
                ) from None
            try:
                comparison: Comparison = runs.diff(*numbers)
            except history.HistoryError as error:
                raise UsageError(f"%brrr diff: {error}") from None
            self.ip.user_ns["_brrr_change"] = comparison
            return comparison
        if command == "forget":
            if len(rest) != 1:
                raise UsageError(f"%brrr forget takes one name.\n\n{_line_usage()}")
            try:
                removed, kept = store.forget(rest[0])
            except history.HistoryError as error:
                raise UsageError(f"%brrr forget: {error}") from None
            print(
                f"%brrr forget: the runs of {rest[0]!r} are gone ({removed} stored file(s) deleted)."
            )
            for message in kept:
                print(f"%brrr forget: {message}")
            return None
        raise UsageError(f"%brrr: unknown command {command!r}.\n\n{_line_usage()}")

    def _parse(self, line: str) -> Namespace | None:
        parser = self.brrr.parser  # pyright: ignore[reportAttributeAccessIssue]  # set by @magic_arguments
        try:
            args = parser.parse_args(split_line(line, _usage()))
        except UsageError as error:
            raise UsageError(f"{error}\n\n{_usage()}") from None
        if args.help:
            print(BrrrMagics.brrr.__doc__)
            return None
        if args.warmup < 0 or args.repeat < 1:
            raise UsageError(f"--warmup must be 0 or more and --repeat 1 or more.\n\n{_usage()}")
        if args.burst and args.warmup == 0 and args.repeat == 1:
            raise UsageError(
                "--burst changes the warm-up before timed runs: give --warmup N --repeat M too "
                f"(e.g. --warmup 1 --repeat 5 --burst).\n\n{_usage()}"
            )
        args.ab_variants = None
        if args.ab is not None:
            from ..actions.variants import parse_variants

            try:
                args.ab_variants = parse_variants(args.ab)
            except ValueError as error:
                raise UsageError(f"--ab: {error}\n\n{_usage()}") from None
            if len(args.ab_variants) < 2:
                raise UsageError(f"--ab needs at least one variant (compile, graph).\n\n{_usage()}")
        if args.ab_stateful is not None and args.ab is None and not args.try_fixes:
            raise UsageError(
                f"--ab-stateful goes with --ab (it says how to re-run a stateful cell).\n\n{_usage()}"
            )
        for flag, seconds in (
            ("--ab-budget", args.ab_budget),
            ("--sweep-budget", args.sweep_budget),
        ):
            if seconds is not None and not 0 < seconds < math.inf:  # nan and inf too
                raise UsageError(f"{flag} must be a positive number of seconds.\n\n{_usage()}")
        if args.sweep is not None:
            from ..actions.sweep import DEFAULT_BUDGET_S, parse_sizes

            try:
                args.sweep_variable, args.sweep_sizes = parse_sizes(args.sweep)
            except ValueError as error:
                raise UsageError(f"--sweep: {error}\n\n{_usage()}") from None
            refused = _not_a_sweep_variable(args.sweep_variable, hidden_names(self.ip))
            if refused:
                raise UsageError(f"--sweep: {refused}\n\n{_usage()}")
            if args.ab is not None:
                raise UsageError(f"--sweep and --ab are separate runs: use one.\n\n{_usage()}")
            for flag, given, why in (
                ("--name", args.name, "keeps one report per run under a name"),
                ("--target", args.target, "is a goal for one run"),
            ):
                if given is not None:
                    raise UsageError(
                        f"{flag} goes with one run of the cell: it {why}, and a sweep measures "
                        "several sizes. Sweep first, then run the cell at the size you choose "
                        f"with {flag}.\n\n{_usage()}"
                    )
            if args.sweep_budget is None:
                args.sweep_budget = DEFAULT_BUDGET_S
        for flag, value in (
            ("--sweep-budget", args.sweep_budget),
            ("--sweep-stateful", args.sweep_stateful),
        ):
            if value is not None and args.sweep is None:
                raise UsageError(f"{flag} goes with --sweep.\n\n{_usage()}")
        args.goal = None
        if args.items is not None and args.target is None:
            raise UsageError(f"--items goes with --target RATE/s.\n\n{_usage()}")
        if args.target is not None:
            from ..report.target import TargetError, parse_goal

            try:
                args.goal = parse_goal(args.target, args.items)
            except TargetError as error:
                raise UsageError(f"--target: {error}\n\n{_usage()}") from None
        if args.name is not None and not args.name.strip():
            raise UsageError(f"--name must not be empty.\n\n{_usage()}")
        return args


def split_line(line: str, usage: str) -> list[str]:
    """The words of a magic's line, as a POSIX shell splits them (``--name "my model"`` is the
    name ``my model``, without its quotes): the one parser of ``%%brrr``'s flags and of
    ``%brrr history/diff/forget``'s names. IPython's own split keeps the quotes."""
    import shlex

    try:
        return shlex.split(line)
    except ValueError as error:  # an unbalanced quote
        raise UsageError(f"%brrr: {error}\n\n{usage}") from None


def _not_a_sweep_variable(name: str, hidden: set[str]) -> str | None:
    """Why ``name`` cannot be the sweep's variable, which stays bound in the namespace after the
    sweep: a keyword, a built-in (``print``), a dunder (``__builtins__``), the shell's own names
    (``get_ipython``, ``In``, ``_``) or this tool's. None where it can."""
    if keyword.iskeyword(name):
        return f"{name} is a Python keyword: name the size something else (batch, n, size)."
    if (
        name.startswith("__")
        or hasattr(builtins, name)
        or name in hidden
        or _OUTPUT_NAME.match(name)
    ):
        return (
            f"{name} is a name Python or IPython uses itself (a built-in, a dunder or the "
            "shell's own): the sweep leaves its variable set to a size, which would break later "
            "cells. Name the size something else (batch, n, size)."
        )
    return None


# IPython's output and input history: _1, _i1, _ii, _oh...
_OUTPUT_NAME = re.compile(r"_+$|_i*\d*$|_[iod]h$")


def _attribution(code: NotebookCell, args: Namespace) -> Attribution | None:
    """Module paths from what the cell names, and source lines with ``--stack``."""
    if args.no_modules:
        return Attribution(lines=True) if args.stack else None
    found = Attribution(lines=args.stack)
    for compiled in code.codes:
        named = attribution.for_code(compiled, code.namespace, source=code.text, lines=args.stack)
        found.paths |= named.paths
        found.compiled = found.compiled or named.compiled
    return found


def _line_usage() -> str:
    return (
        "usage: %brrr history [NAME] | %brrr diff NAME [RUN RUN] | %brrr forget NAME\n"
        "  history         the names with runs (cells run with %%brrr --name NAME)\n"
        "  history NAME    the runs of NAME: span, split, kernels, change from the run before\n"
        "  diff NAME A B   compare runs A and B of NAME (numbers, or -1 for the newest; "
        "default: the last two)\n"
        "  forget NAME     delete the runs of NAME (in the kernel and beside the notebook)\n"
        "To profile a cell, put %%brrr (two %) on its first line."
    )


def _names(store: Store) -> str:
    names = store.names()
    return ", ".join(repr(n) for n in names) if names else "none"


def _usage() -> str:
    """The cell magic's usage: IPython's help formatter writes it as a reST block ("::", then
    "  %brrr [-h] ..."), named after the function; the user types ``%%brrr``."""
    lines = [
        line.strip()
        for line in BrrrMagics.brrr.parser.format_usage().splitlines()
        if line.strip() not in ("", "::")
    ]
    first = "usage: %%brrr " + lines[0].removeprefix("%brrr").strip()
    indent = " " * len("usage: %%brrr ")
    usage = "\n".join([first, *(indent + line for line in lines[1:])])
    return f"{usage}\nSee %%brrr --help for what each option does."


def _help(doc: str) -> str:
    """What ``%%brrr --help`` and IPython's ``%%brrr?`` print: the docstring IPython's help
    formatter built (a reST block first: "::", then "  %brrr [-h] ...", named after the
    function), with the usage as the user types it (``_usage``) in place of that block."""
    marker, _, rest = doc.partition("\n\n")
    if marker.strip() != "::":
        return doc
    _block, _, description = rest.partition("\n\n")
    usage = _usage().rsplit("\n", 1)[0]  # without "See %%brrr --help"
    return f"{usage}\n\n{description}"


BrrrMagics.brrr.__doc__ = _help(BrrrMagics.brrr.__doc__ or "")


def _show_controls(
    shell: InteractiveShell,
    code: NotebookCell,
    name: str,
    report: Report,
    handle: DisplayHandle,
    *,
    cpu: bool,
) -> None:
    """The A/B buttons, as their own output under the report."""
    from .controls import ABControls

    try:
        cell_ab = CellAB(
            code, report, name=name, hidden=hidden_names(shell), cpu=cpu, handle=handle
        )
        controls = ABControls(cell_ab, shell=shell)
    except Exception as error:  # the profile is shown; a missing button must not fail the cell
        print(f"%%brrr: no A/B controls ({type(error).__name__}: {error})")
        return
    display(controls)


def _explain(error: BaseException) -> None:
    """Add a note saying what to do, for the failures whose fix is not obvious."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        free = ""
        if torch.cuda.is_available():
            free = f" Memory still allocated now: {torch.cuda.memory_allocated() / 1e9:.2f} GB."
        # __notes__ rather than add_note(), which Python 3.10 lacks.
        error.__notes__ = [  # pyright: ignore[reportAttributeAccessIssue]  # add_note() is 3.11+; 3.10 shows __notes__ too
            *getattr(error, "__notes__", []),
            "jupyter_brrr: the GPU ran out of memory in this cell. The cell's temporaries were freed "
            f"and the kernel is usable.{free} Try a smaller batch or sequence length, bf16, or "
            "del large tensors you no longer need.",
        ]
    elif isinstance(error, KeyboardInterrupt):
        print("%%brrr: interrupted; the profiler is stopped.")
