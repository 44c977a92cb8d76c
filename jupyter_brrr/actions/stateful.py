"""Does re-running this code change state? AST heuristics, for the warning before an A/B.

An A/B runs a cell hundreds or thousands of times. A cell that trains (an optimizer step, a
backward pass that accumulates gradients), updates tensors in place, appends to a list, advances
an iterator or writes files changes something each time. Static analysis cannot be sure, so this
errs on the side of warning: the user confirms, or rewrites the cell as a pure function of its
inputs. What is created inside the cell and then changed is fine (it is made afresh each run).

``notebook_findings`` also reads the functions of the notebook that the cell calls
(``train_step()``, a method of a class defined there): their parameters and globals are objects
from outside, their locals are not. ``cannot_undo`` picks the findings that a snapshot cannot
put back (files, iterators, threads); ``keeps_changing`` those that go on changing state after
a restore (a thread the cell starts), which only a run that keeps the runs' changes can honestly
do.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

# Method calls that mutate their receiver (lists, dicts, sets, deques, optimizers...).
_MUTATING_METHODS = {
    "append": "appends to",
    "extend": "extends",
    "insert": "inserts into",
    "appendleft": "appends to",
    "update": "updates",
    "setdefault": "updates",
    "pop": "pops from",
    "popleft": "pops from",
    "popitem": "pops from",
    "remove": "removes from",
    "clear": "clears",
    "put": "puts into",
    "put_nowait": "puts into",
    "get_nowait": "takes from",
}
# Calls that start a thread or a process: it runs on after the cell, so what it changes after a
# restore stays; no copy can put that back.
_THREAD_FUNCTIONS = {
    "Thread",
    "Timer",
    "start_new_thread",
    "Process",
    "Pool",
    "ThreadPoolExecutor",
    "ProcessPoolExecutor",
}
_THREAD_METHODS = {"submit", "apply_async", "map_async", "run_in_executor"}
_TRAINING_METHODS = {
    "step": "an optimizer or scheduler step changes parameters (or the learning rate) each run",
    "backward": "backward() accumulates gradients into .grad each run",
    "zero_grad": "zero_grad() resets gradients: part of a training step",
}
_FILE_FUNCTIONS = {
    "open",
    "save",
    "savez",
    "savetxt",
    "dump",
    "to_csv",
    "to_parquet",
    "to_json",
    "savefig",
}
_FILE_METHODS = {
    "write",
    "writelines",
    "write_text",
    "write_bytes",
    "touch",
    "unlink",
    "mkdir",
    "rename",
}
_FILESYSTEM_MODULES = {"os", "shutil", "pathlib"}
_FILESYSTEM_FUNCTIONS = {
    "remove",
    "unlink",
    "rename",
    "replace",
    "makedirs",
    "mkdir",
    "rmdir",
    "rmtree",
    "move",
    "copy",
    "copyfile",
}
_RANDOM = {
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "normal",
    "normal_",
    "uniform_",
    "bernoulli",
    "bernoulli_",
    "multinomial",
    "dropout",
    "Dropout",
    "random_",
    "exponential_",
    "poisson",
}


@dataclass(frozen=True)
class Finding:
    """One reason to think that re-running the code changes state."""

    line: int
    kind: (
        str  # "training", "in-place", "rebind", "mutation", "file", "global", "iterator",
        # "delete", "thread"
    )
    code: str  # the source line
    why: str
    function: str = ""  # the notebook function it is in (``train_step``), "" for the cell

    def __str__(self) -> str:
        where = f"in {self.function}(), line {self.line}" if self.function else f"line {self.line}"
        return f"{where}: {self.code}  ({self.why})"


# Findings whose effect a snapshot cannot put back.
IRREVERSIBLE_KINDS = frozenset(("file", "iterator", "thread"))
# Of those, what goes on changing state after a restore: a restore would not hold.
KEEPS_CHANGING_KINDS = frozenset(("thread",))


def cannot_undo(findings: list[Finding]) -> list[Finding]:
    """The findings that restoring objects cannot undo: files written, iterators advanced,
    threads started."""
    return [f for f in findings if f.kind in IRREVERSIBLE_KINDS]


def keeps_changing(findings: list[Finding]) -> list[Finding]:
    """The findings whose effect goes on after the cell (a thread it starts): no restore can
    hold against them, so only running with the runs' changes kept is honest."""
    return [f for f in findings if f.kind in KEEPS_CHANGING_KINDS]


def stateful_findings(source: str) -> list[Finding]:
    """Reasons why re-running ``source`` may change state, by line. Empty when it looks pure."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    # First pass: every name the cell binds at top level; the second pass flags reads of those
    # names before the cell binds them (``h = layer(h)``: each run starts from the last result).
    first = _Visitor(source.splitlines(), frozenset())
    for statement in tree.body:
        first.visit(statement)
    visitor = _Visitor(source.splitlines(), frozenset(first.bound))
    for statement in tree.body:
        visitor.visit(statement)
    unique = {(f.line, f.kind): f for f in visitor.findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.kind))


def notebook_findings(namespace: dict, source: str) -> list[Finding]:
    """``stateful_findings`` of the cell, then of each function of the notebook it calls
    (defined in an earlier cell; those it defines itself are read with the cell)."""
    from .snapshot import notebook_functions

    findings = stateful_findings(source)
    try:
        defined_here = {
            node.name
            for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
    except SyntaxError:
        return findings
    for fn in notebook_functions(namespace, source):
        if fn.__qualname__.split(".")[0] in defined_here:
            continue
        findings.extend(_function_findings(fn))
    return findings


def _function_findings(fn: object) -> list[Finding]:
    try:
        lines, start = inspect.getsourcelines(fn)  # type: ignore[arg-type]
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return []
    definition = next(
        (n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None
    )
    if definition is None:
        return []
    source_lines = textwrap.dedent("".join(lines)).splitlines()
    # The body as top-level code: its parameters come from outside (not fresh), its locals
    # are made afresh each call, so rebinding or deleting them is no state.
    visitor = _Visitor(source_lines, frozenset())
    for statement in definition.body:
        visitor.visit(statement)
    name = getattr(fn, "__qualname__", "").replace(".<locals>", "")
    found = {
        (f.line, f.kind): Finding(f.line + start - 1, f.kind, f.code, f.why, name)
        for f in visitor.findings
        if f.kind not in ("rebind", "delete")
    }
    return sorted(found.values(), key=lambda f: (f.line, f.kind))


def uses_random(source: str) -> bool:
    """Whether the code draws random numbers (torch.randn, dropout, ...): then compiled code
    (which generates them differently) cannot match eager exactly."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in _RANDOM:
                return True
    return False


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _root(node: ast.AST) -> str | None:
    """``a`` for ``a.b[0].c``; None when the object comes from a call or literal."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _makes_new(value: ast.AST) -> bool:
    """Whether an assigned value is (likely) a new object rather than another name for an
    existing one: ``w = model.weight`` aliases, ``z = torch.zeros(3)`` and ``y = x * 2`` do not."""
    return not isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Starred))


def _module_path(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


class _Visitor(ast.NodeVisitor):
    """Walks statements in evaluation order (the value of an assignment before its targets), so
    that it knows which names the cell has bound so far: changing what the cell made itself is
    fine, changing what it found in the namespace is state."""

    def __init__(self, lines: list[str], binds: frozenset[str]) -> None:
        self.lines = lines
        self.binds = binds  # names the cell binds somewhere at top level
        self.bound: set[str] = set()  # names bound so far
        self.fresh: set[str] = set()  # of those, names bound to objects the cell made itself
        self.findings: list[Finding] = []
        self.depth = 0  # > 0 inside a nested function or class body

    def _add(self, node: ast.AST, kind: str, why: str) -> None:
        line = getattr(node, "lineno", 0)
        code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.findings.append(Finding(line, kind, code, why))

    def _outside(self, node: ast.AST) -> bool:
        """Whether ``node`` refers to an object the cell did not create (so far)."""
        root = _root(node)
        return root is None or root not in self.fresh

    # --- binding -------------------------------------------------------------------------------

    def _bind_target(self, target: ast.AST, fresh: bool = True) -> None:
        if isinstance(target, ast.Name):
            if self.depth:
                return  # a local of a nested function or comprehension
            self.bound.add(target.id)
            if fresh:
                self.fresh.add(target.id)
            else:
                self.fresh.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, fresh)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, fresh)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self.visit(target)  # the object and index expressions are evaluated
            if self.depth == 0 and self._outside(target):
                name = _root(target) or "an object"
                self._add(target, "mutation", f"assigns into {name}, which the cell did not create")

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, _makes_new(node.value))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, _makes_new(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        target = node.target
        if self.depth == 0 and self._outside(target):
            name = _root(target) or "an object"
            if isinstance(target, ast.Name):
                why = f"changes {name} from its value before the run"
            else:
                why = f"updates {name} in place"
            self._add(node, "in-place" if not isinstance(target, ast.Name) else "rebind", why)
        if isinstance(target, ast.Name):
            self.bound.add(target.id)
        else:
            self.visit(target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind_target(node.target, _makes_new(node.value))

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        # The loop variable is an element of the iterable: ``for p in model.parameters()``.
        self._bind_target(node.target, fresh=False)
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)

    visit_AsyncFor = visit_For  # pyright: ignore[reportAssignmentType]  # the async form is handled alike

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, fresh=False)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With  # pyright: ignore[reportAssignmentType]  # the async form is handled alike

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind_target(ast.Name(alias.asname or alias.name.split(".")[0]), fresh=False)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self._bind_target(ast.Name(alias.asname or alias.name), fresh=False)

    def _nested(self, node: ast.AST, name: str | None) -> None:
        if name:
            self._bind_target(ast.Name(name))
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._nested(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # pyright: ignore[reportAssignmentType]  # the async form is handled alike

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._nested(node, node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._nested(node, None)

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        # The first iterable is evaluated in the cell's scope; the rest has its own names.
        self.visit(node.generators[0].iter)
        self.depth += 1
        for generator in node.generators:
            self._bind_target(generator.target, fresh=False)
            if generator is not node.generators[0]:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part)
        self.depth -= 1

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._bind_target(node)
        elif isinstance(node.ctx, ast.Load) and self.depth == 0:
            if node.id in self.binds and node.id not in self.bound:
                self._add(
                    node,
                    "rebind",
                    f"reads {node.id} before assigning it: each run starts from the last run's {node.id}",
                )
        elif isinstance(node.ctx, ast.Del) and self.depth == 0:
            self._add(node, "delete", f"deletes {node.id}: a second run may not find it")

    def visit_Global(self, node: ast.Global) -> None:
        self._add(node, "global", f"declares {', '.join(node.names)} global")

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._add(node, "global", f"declares {', '.join(node.names)} nonlocal")

    # --- calls ---------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        name = _call_name(node)
        if name is None:
            return
        if isinstance(func, ast.Attribute) and name in _TRAINING_METHODS:
            self._add(node, "training", _TRAINING_METHODS[name])
            return
        if name in _FILE_FUNCTIONS or (isinstance(func, ast.Attribute) and name in _FILE_METHODS):
            self._add(node, "file", "writes or opens a file")
            return
        if (
            isinstance(func, ast.Attribute)
            and name in _FILESYSTEM_FUNCTIONS
            and _module_path(func.value).split(".")[0] in _FILESYSTEM_MODULES
        ):
            self._add(node, "file", "changes the file system")
            return
        if name in _THREAD_FUNCTIONS or (
            isinstance(func, ast.Attribute) and name in _THREAD_METHODS
        ):
            self._add(
                node,
                "thread",
                "starts a thread or process: it runs on after the cell, and what it changes "
                "after a restore stays",
            )
            return
        if isinstance(func, ast.Name) and name == "next":
            self._add(node, "iterator", "next() advances an iterator: each run gets the next item")
            return
        if self.depth:
            return  # inside a nested function: its locals are fresh each call
        if (
            isinstance(func, ast.Attribute)
            and name in _MUTATING_METHODS
            and self._outside(func.value)
        ):
            target = _root(func.value) or "an object"
            self._add(
                node,
                "mutation",
                f"{_MUTATING_METHODS[name]} {target}, which the cell did not create",
            )
            return
        if name.endswith("_") and not name.startswith("_") and isinstance(func, ast.Attribute):
            # In-place tensor ops: ``p.add_(...)``, ``torch.nn.init.normal_(w)``.
            module = _module_path(func.value).split(".")[0]
            receiver = (
                node.args[0] if module in {"torch", "nn", "init", "F"} and node.args else func.value
            )
            if self._outside(receiver):
                target = _root(receiver) or "a tensor"
                self._add(node, "in-place", f"{name}() updates {target} in place")
