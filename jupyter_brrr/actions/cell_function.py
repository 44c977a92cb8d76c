"""A notebook cell as a real Python function, so that torch.compile and CUDA Graphs can take it.

The plain run of a cell (``notebook.cell.NotebookCell.run``) is an ``exec`` over the user's
namespace, which is right for that run but not for variants: Dynamo cannot trace ``exec``, and a function that writes its
results with ``global`` statements loses compilation after a graph break (Dynamo does not trace
the resume functions of such frames; seen with torch 2.13). So for the A/B the cell becomes::

    def cell(*, x, y, ...):          # every name the cell binds at top level, read from the namespace
        <the cell's statements>       # unchanged, with their own line numbers
        return <last expression or None>, {"x": x, "y": y, ...}

Names the cell only reads stay globals of the function (the user's namespace). The caller passes
the current values of the names the cell binds (so ``x = x + 1`` reads the old ``x``, as in a plain
run) and writes the returned values back, so the namespace ends as a plain run would leave it.
All variants (eager, compiled, graphed) run this same function, so they compare the same code.

This module sees no IPython shell: the notebook front end (``notebook.cell``) parses the cell
once, through IPython's transforms, and passes the tree, its file name and its namespace.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any

from .variants import Target

FUNCTION_NAME = "__brrr_cell__"


class CellNotSupported(ValueError):
    """A cell that cannot become a function (``from m import *``, top-level ``await``)."""


class _Unset:
    """The value of a cell variable that does not exist (yet) in the namespace."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET = _Unset()


@dataclass
class CellTarget:
    """The cell as a function of the variables it binds, with the glue to the user's namespace.

    Call ``run()`` for one run of the cell: it reads the arguments from the namespace, calls
    ``fn`` and writes the results back. Variants replace ``fn`` (compiled, captured) and keep
    ``arguments`` and ``finish``.
    """

    fn: Callable[..., tuple[Any, dict]]
    params: tuple[str, ...]
    deleted: tuple[str, ...]
    has_value: bool
    namespace: dict
    filename: str
    source: str

    @property
    def home_files(self) -> frozenset[str]:
        """The cell's file (the name IPython registered it under), to point at its lines."""
        return frozenset({self.filename})

    def arguments(self) -> tuple[tuple, dict]:
        """The arguments of one call: the current values of the names the cell binds."""
        ns = self.namespace
        return (), {name: ns[name] for name in self.params if name in ns}

    def finish(self, raw: tuple[Any, dict]) -> Any:
        """Write one call's results into the namespace and return the output to compare: the
        last expression's value, or (a cell without one) the values of the names it binds."""
        value, bound = raw
        ns = self.namespace
        for name, obj in bound.items():
            if obj is not UNSET:
                ns[name] = obj
        for name in self.deleted:
            ns.pop(name, None)
        if self.has_value:
            return value
        return {name: obj for name, obj in bound.items() if obj is not UNSET}

    def run(self) -> Any:
        args, kwargs = self.arguments()
        return self.finish(self.fn(*args, **kwargs))

    def target(self, name: str = "") -> Target:
        """This cell as the ``Target`` of an A/B."""
        return Target(
            fn=self.fn,
            arguments=self.arguments,
            finish=self.finish,
            name=name,
            home_files=self.home_files,
            source=self.source,
        )

    def snapshot(self) -> dict:
        """The current bindings of the names the cell binds (not copies of the objects)."""
        return {name: self.namespace.get(name, UNSET) for name in (*self.params, *self.deleted)}

    def restore(self, snapshot: dict) -> None:
        """Put the bindings of ``snapshot`` back, so the A/B's own runs leave no trace in the
        namespace (objects that a stateful cell mutated in place stay mutated)."""
        for name, obj in snapshot.items():
            if obj is UNSET:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = obj


def function_form(
    tree: ast.Module,
    *,
    filename: str,
    source: str,
    namespace: dict[str, Any],
    compiler: Callable[..., CodeType] = compile,
) -> CellTarget:
    """The function form of a parsed cell over ``namespace`` (see the module docstring).

    ``tree`` is the cell as parsed (its statements keep their line numbers in ``filename``);
    ``compiler`` compiles the ``def`` (a notebook front end passes its own, which applies the
    ``from __future__`` imports of earlier cells). ``tree`` is not changed. Raises
    ``CellNotSupported`` for a cell that cannot become a function.
    """
    function, params, deleted, has_value = build_function(copy.deepcopy(tree))
    code = compiler(ast.Module(body=[function], type_ignores=[]), filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, namespace, scope)  # defines the function; its globals are the user namespace
    fn = scope[FUNCTION_NAME]
    # Keyword-only parameters default to UNSET: a name the cell binds only on some paths, and
    # that is not in the namespace, must not appear there after a run either.
    fn.__kwdefaults__ = dict.fromkeys(params, UNSET)
    return CellTarget(
        fn=fn,
        params=params,
        deleted=deleted,
        has_value=has_value,
        namespace=namespace,
        filename=filename,
        source=source,
    )


def build_function(
    tree: ast.Module,
) -> tuple[ast.FunctionDef, tuple[str, ...], tuple[str, ...], bool]:
    """The ``def`` of the cell function; its parameters, the names it deletes, and whether it
    ends with an expression. Line numbers of the cell's statements are kept."""
    body = list(tree.body)
    _refuse_unsupported(body)
    last = None
    if body and isinstance(body[-1], ast.Expr):
        last = body[-1].value
        body.pop()
    declared_global = _declared_globals(body)
    bound, deleted, handler_only = _bound_names(body)
    params = tuple(
        sorted(name for name in bound if name not in declared_global and name not in handler_only)
    )
    deleted_names = tuple(sorted(name for name in deleted if name not in declared_global))
    returned = [name for name in params if name not in deleted]
    anchor = last if last is not None else (body[-1] if body else tree)
    result = ast.Tuple(
        elts=[
            last if last is not None else ast.Constant(None),
            ast.Dict(
                keys=[ast.Constant(name) for name in returned],
                values=[ast.Name(id=name, ctx=ast.Load()) for name in returned],
            ),
        ],
        ctx=ast.Load(),
    )
    ret = ast.Return(value=result)
    _locate(ret, anchor)
    if not body:
        body = [ast.Pass()]
        _locate(body[0], anchor)
    function = ast.FunctionDef(
        name=FUNCTION_NAME,
        args=ast.arguments(
            posonlyargs=[],
            args=[],
            vararg=None,
            kwonlyargs=[ast.arg(arg=name) for name in params],
            kw_defaults=[None for _ in params],
            kwarg=None,
            defaults=[],
        ),
        body=[*body, ret],
        decorator_list=[],
        returns=None,
        # Python 3.12+ wants type_params; older ast has none.
        **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}),  # pyright: ignore[reportArgumentType]
    )
    function.lineno, function.col_offset = 1, 0
    ast.fix_missing_locations(function)
    return function, params, deleted_names, last is not None


def _locate(node: ast.AST, anchor: ast.AST) -> None:
    lineno = getattr(anchor, "end_lineno", None) or getattr(anchor, "lineno", 1)
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            # Set through setattr: the nodes that have a position are not one ast type.
            for name, value in (
                ("lineno", lineno),
                ("end_lineno", lineno),
                ("col_offset", 0),
                ("end_col_offset", 0),
            ):
                setattr(child, name, value)


def _top_level(nodes: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of the cell's own scope: not inside nested functions, lambdas, classes or
    comprehensions (their names are their own), but their names and defaults are."""
    stack: list[ast.AST] = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            children = [
                *node.decorator_list,
                *node.args.defaults,
                *(d for d in node.args.kw_defaults if d),
            ]
        elif isinstance(node, ast.ClassDef):
            children = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Lambda):
            children = [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            # The first iterable is evaluated in the enclosing scope, and a walrus inside binds
            # there too.
            children = [
                node.generators[0].iter,
                *(n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)),
            ]
        else:
            children = list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))


def _refuse_unsupported(body: list[ast.stmt]) -> None:
    for node in _top_level(body):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            raise CellNotSupported(
                f"line {node.lineno}: 'from {node.module} import *' cannot run inside a function; "
                "import the names you use instead."
            )
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.Yield, ast.YieldFrom)):
            raise CellNotSupported(
                f"line {node.lineno}: a cell with top-level 'await' or 'yield' cannot be re-run as a function."
            )


def _declared_globals(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in _top_level(body):
        if isinstance(node, ast.Global):
            names.update(node.names)
    return names


def _bound_names(body: list[ast.stmt]) -> tuple[set[str], set[str], set[str]]:
    """Names the cell binds at top level, names it deletes, and names bound only as
    ``except ... as name`` (Python unbinds those at the end of the handler)."""
    bound: set[str] = set()
    deleted: set[str] = set()
    handler: set[str] = set()
    for node in _top_level(body):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node.ctx, ast.Del):
                deleted.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            handler.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    # A name deleted at top level may be unbound when the function returns: do not return it.
    return bound | deleted, deleted, handler - bound
