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
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any

from ..actions.cell_function import CellTarget, function_form

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

    @classmethod
    def from_shell(cls, shell: InteractiveShell, text: str) -> NotebookCell:
        """Parse ``text`` as ``shell`` parses a cell. Raises ``SyntaxError`` for a cell that
        does not parse."""
        source = shell.transform_cell(text)
        tree = shell.transform_ast(shell.compile.ast_parse(source))
        return cls(
            text=text,
            source=source,
            filename=shell.compile.cache(source),
            tree=tree,
            namespace=shell.user_ns,
            compiler=shell.compile,
        )

    @functools.cached_property
    def codes(self) -> tuple[CodeType, ...]:
        """The exec form's code: the statements, then the last expression (when there is one).
        Compiled on first use; raises ``SyntaxError`` where only a function could hold the code
        (top-level ``await``), as a plain cell would."""
        body, last = self.tree.body, None
        if body and isinstance(body[-1], ast.Expr):
            body, last = body[:-1], body[-1]
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
        exec(codes[0], self.namespace)
        return eval(codes[1], self.namespace) if len(codes) > 1 else None

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
