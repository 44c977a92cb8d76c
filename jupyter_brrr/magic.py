"""The ``%%brrr`` cell magic: glue between IPython, ``capture`` and the report's display.

The cell runs in the user's namespace like a plain cell: its assignments persist, its last
expression's value is shown as usual, and an error is re-raised with the cell's own traceback
(the magic's frames are hidden with ``__tracebackhide__``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from .capture import capture


def cell_function(shell: Any, cell: str) -> tuple[Callable[[], Any], bool]:
    """Compile a cell into a function over the user's namespace that returns its last expression.

    Returns the function and whether the value should be shown (a trailing ``;`` hides it, as in
    a plain cell). The source is registered with IPython's compiler so tracebacks show its lines.
    """
    source = shell.transform_cell(cell)
    tree = shell.transform_ast(shell.compile.ast_parse(source))
    filename = shell.compile.cache(source)
    body, last = tree.body, None
    if body and isinstance(body[-1], ast.Expr):
        body, last = body[:-1], body[-1]
    body_code = shell.compile(ast.Module(body=body, type_ignores=[]), filename, "exec")
    last_code = shell.compile(ast.Expression(body=last.value), filename, "eval") if last else None
    namespace = shell.user_ns

    def run_cell() -> Any:
        exec(body_code, namespace)
        return eval(last_code, namespace) if last_code is not None else None

    show = last is not None and not source.rstrip().endswith(";")
    return run_cell, show


@magics_class
class BrrrMagics(Magics):
    """Holds the ``%%brrr`` magic and the display handle of the last report."""

    last_report = None

    @magic_arguments()
    @argument("-h", "--help", action="store_true", help="show this help and run nothing")
    @argument(
        "--warmup",
        type=int,
        default=0,
        metavar="N",
        help="run the cell N times unprofiled first, so first-run costs stay out (default 0)",
    )
    @argument(
        "--repeat",
        type=int,
        default=1,
        metavar="M",
        help=(
            "time M unprofiled runs with CUDA events and report their median span (default 1). "
            "With --warmup or --repeat > 1 the cell runs N + M + 1 times: warm-up, timed, one profiled"
        ),
    )
    @argument("--name", default=None, help="a name for the report (default: the cell's execution count)")
    @argument("--quiet", action="store_true", help="show no report; it is still stored in the variable _brrr")
    @argument("--cpu", action="store_true", help="profile CPU ops only, even where a GPU is present")
    @cell_magic
    def brrr(self, line: str, cell: str) -> Any:
        """Profile the GPU work of this cell and show where the time went.

        The cell runs once by default, profiled, like a plain cell: its variables persist and
        its last value is shown. The report (also in the variable ``_brrr``) splits the GPU span
        into compute-bound, memory-bound, other and idle time, lists the ops with their FLOP/s,
        bytes/s and bound, and says what to try first.
        """
        __tracebackhide__ = True
        args = self._parse(line)
        if args is None:
            return None
        if not cell.strip():
            print("%%brrr: the cell is empty: there is nothing to profile.")
            return None
        run_cell, show = cell_function(self.shell, cell)
        name = args.name or f"cell [{self.shell.execution_count}]"
        result = capture(run_cell, warmup=args.warmup, repeat=args.repeat, cpu=args.cpu, name=name, source="magic")
        report = result.report
        if report is not None:
            self.shell.user_ns["_brrr"] = report
            BrrrMagics.last_report = report
            if not args.quiet:
                if report.empty and result.error is None:
                    print("%%brrr: the cell ran no torch operations: there is nothing to show.")
                else:
                    display(report)
        if result.error is not None:
            _explain(result.error)
            raise result.error
        return result.value if show else None

    def _parse(self, line: str) -> Any:
        try:
            args = parse_argstring(self.brrr, line)
        except UsageError as error:
            raise UsageError(f"{error}\n\n{_usage()}") from None
        if args.help:
            print(self.brrr.__doc__)
            return None
        if args.warmup < 0 or args.repeat < 1:
            raise UsageError(f"--warmup must be 0 or more and --repeat 1 or more.\n\n{_usage()}")
        return args


def _usage() -> str:
    usage = BrrrMagics.brrr.parser.format_usage().replace("usage: %brrr", "usage: %%brrr").strip()
    return f"{usage}\nSee %%brrr --help for what each option does."


def _explain(error: BaseException) -> None:
    """Add a note saying what to do, for the failures whose fix is not obvious."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        free = ""
        if torch.cuda.is_available():
            free = f" Memory still allocated now: {torch.cuda.memory_allocated() / 1e9:.2f} GB."
        error.add_note(
            "jupyter_brrr: the GPU ran out of memory in this cell. The cell's temporaries were freed "
            f"and the kernel is usable.{free} Try a smaller batch or sequence length, bf16, or "
            "del large tensors you no longer need."
        )
    elif isinstance(error, KeyboardInterrupt):
        print("%%brrr: interrupted; the profiler is stopped.")
