"""A notebook cell as code: parsed once, run two ways.

- the exec form (``NotebookCell.run``): the cell's statements executed over the user's
  namespace and its last expression evaluated, like a plain cell (its assignments persist, its
  value is shown). This is the run ``%%brrr`` profiles.
- the function form (``NotebookCell.function()``): the cell as a function of the names it binds
  (``actions.cell``), which torch.compile and CUDA graphs can take. This is what the A/B's
  variants run.

Both come from one pass through IPython's transforms (magics, ``!`` commands, AST transformers)
and one registration of the source with IPython's compiler, under one file name: tracebacks and
graph-break lines point into the cell either way.

Top-level ``await`` runs as in a plain cell (IPython's autoawait, unless ``%autoawait`` is off):
the code is compiled with ``PyCF_ALLOW_TOP_LEVEL_AWAIT`` and each run awaits it with IPython's
loop runner. In a kernel, whose event loop is running this very cell (a magic runs inside it,
synchronously), the awaits run in an event loop of their own, in this thread, for the run's
duration: awaiting a future or task that belongs to the kernel's loop (one an earlier cell
started) fails there, with asyncio's own error.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, TracebackType
from typing import TYPE_CHECKING, Any

from ..actions.cell_function import CellTarget, function_form
from .shell import prompt_number

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


@dataclass(frozen=True)
class NotebookCell:
    """One cell's code: parsed once; its exec form and its function form come from the tree."""

    text: str  # as typed
    source: str  # after IPython's transforms: plain Python
    filename: str  # the name IPython's compiler registered the source under
    tree: ast.Module  # ``source`` parsed (and through IPython's AST transformers)
    namespace: dict[str, Any]  # the user's namespace, where the cell runs
    compiler: Callable[..., CodeType]  # IPython's: applies earlier cells' __future__ imports
    autoawait: bool = False  # top-level await allowed, as in the shell's plain cells
    loop_runner: Callable[[Any], Any] | None = None  # the shell's: runs a coroutine to its end

    @classmethod
    def from_shell(cls, shell: InteractiveShell, text: str) -> NotebookCell:
        """Parse ``text`` as ``shell`` parses a cell. Raises ``SyntaxError`` for a cell that
        does not parse."""
        source = shell.transform_cell(text)
        tree = shell.transform_ast(shell.compile.ast_parse(source))
        return cls(
            text=text,
            source=source,
            # Registered under the running cell's number: tracebacks say "Cell In[7]", as
            # they do for a plain cell.
            filename=shell.compile.cache(source, prompt_number(shell)),
            tree=tree,
            namespace=shell.user_ns,
            compiler=shell.compile,
            autoawait=bool(getattr(shell, "autoawait", False)),
            loop_runner=getattr(shell, "loop_runner", None),
        )

    @functools.cached_property
    def codes(self) -> tuple[CodeType, ...]:
        """The exec form's code: the statements, then the last expression (when there is one).
        Compiled on first use; raises ``SyntaxError`` for code that a plain cell refuses too
        (top-level ``await`` with ``%autoawait`` off)."""
        body, last = self.tree.body, None
        if body and isinstance(body[-1], ast.Expr):
            body, last = body[:-1], body[-1]
        flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0) if self.autoawait else 0
        extra_flags = getattr(self.compiler, "extra_flags", None)  # IPython's CachingCompiler
        with extra_flags(flags) if extra_flags is not None else contextlib.nullcontext():
            codes = [self.compiler(ast.Module(body=body, type_ignores=[]), self.filename, "exec")]
            if last is not None:
                expression = ast.Expression(body=last.value)
                codes.append(self.compiler(expression, self.filename, "eval"))  # type: ignore[arg-type]
        return tuple(codes)

    @property
    def show(self) -> bool:
        """Whether the value of the last expression is shown (a trailing ``;`` hides it)."""
        ends_with_value = bool(self.tree.body) and isinstance(self.tree.body[-1], ast.Expr)
        return ends_with_value and not self.source.rstrip().endswith(";")

    def run(self) -> Any:
        """One plain run: the statements, then the last expression's value (or None)."""
        codes = self.codes
        if any(code.co_flags & inspect.CO_COROUTINE for code in codes):
            return self._run_awaiting(codes)
        exec(codes[0], self.namespace)
        return eval(codes[1], self.namespace) if len(codes) > 1 else None

    def _run_awaiting(self, codes: tuple[CodeType, ...]) -> Any:
        """A run of code with top-level ``await``: each part that awaits evaluates to a
        coroutine (as in IPython's ``run_code``), run to its end."""
        statements, *last = codes
        if statements.co_flags & inspect.CO_COROUTINE:
            run_to_end(eval(statements, self.namespace), self.loop_runner)
        else:
            exec(statements, self.namespace)
        if not last:
            return None
        value = eval(last[0], self.namespace)
        return (
            run_to_end(value, self.loop_runner)
            if last[0].co_flags & inspect.CO_COROUTINE
            else value
        )

    def own_traceback(self, traceback: TracebackType | None) -> TracebackType | None:
        """The traceback from the cell's own first frame on: the frames of jupyter_brrr that ran
        the cell (the capture, the timed run, the sweep) left out, so that the error reads as
        it does in a plain cell. The whole traceback where the cell's code is not in it (an
        error of ours)."""
        start = traceback
        while start is not None and start.tb_frame.f_code.co_filename != self.filename:
            start = start.tb_next
        return start if start is not None else traceback

    def function(self) -> CellTarget:
        """The function form, over the namespace as it is now (a new function each call, so
        that each A/B compiles afresh). Raises ``actions.cell.CellNotSupported`` for a cell that
        cannot become a function."""
        return function_form(
            self.tree,
            filename=self.filename,
            source=self.source,
            namespace=self.namespace,
            compiler=self.compiler,
        )


def run_to_end(coroutine: Any, runner: Callable[[Any], Any] | None) -> Any:
    """Run ``coroutine`` to its end with IPython's loop runner where no event loop runs in
    this thread (a terminal, a script); in a kernel, whose loop runs this cell, in a loop of
    our own (see the module docstring)."""
    import asyncio

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is None and runner is not None:
        return runner(coroutine)
    # asyncio refuses to start a loop inside a running one: the kernel's loop is set aside
    # for the run (it waits for this cell anyway) and put back after.
    asyncio.events._set_running_loop(None)
    try:
        return _own_loop().run_until_complete(coroutine)
    finally:
        asyncio.events._set_running_loop(running)


_LOOP: list[Any] = []  # one event loop for every awaiting run, as IPython keeps one


def _own_loop() -> Any:
    import asyncio

    if not _LOOP or _LOOP[0].is_closed():
        _LOOP[:] = [asyncio.new_event_loop()]
    return _LOOP[0]
