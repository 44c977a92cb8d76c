"""The package's structure: no import cycle, and layers that depend one way.

core (reads traces, costs, analyses) -> report (the Report and what makes, keeps or compares
reports; the A/B actions) -> views (renderers) -> notebook front end (IPython) -> the public API
and the command line. The graph is read from the source with ``ast``: module-level imports, and
function-level ones too; a function-level import that points up a layer or closes a cycle is
allowed only where ``ALLOWED_LAZY`` lists it with its reason. Imports under ``TYPE_CHECKING`` do not
run and do not count.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jupyter_brrr"

# Each module's layer, by its name (a package's modules inherit the package's layer).
LAYERS = ("core", "report", "views", "notebook", "api")
REPORT_LAYER = {
    # The Report and what makes, keeps or compares reports. capture and memory profile code and
    # wrap what they measured in a Report, so they sit here, above the analysis.
    "report",
    "capture",
    "memory",
    "comparison",
    "history_store",
    "target",
    "job",
    "launch",
    "trace_analysis",
    "loading",
    "profiling",
    "actions",
}
API_LAYER = {"jupyter_brrr", "cli", "__main__"}

# Function-level imports that point up a layer or back into a module that imports this one,
# with why they must: (importer, imported) -> reason. Any other function-level import only puts
# off loading a module (torch, pandas, a rarely used path) and must fit the layers.
_SHOWN = "a display hook: the object renders itself through its view when it is shown"
ALLOWED_LAZY = {
    ("report", "views.figures"): "Report.figure (deprecated): " + _SHOWN,
    ("report", "views.standalone"): "Report.save_html writes the report app's HTML file",
    ("report", "views.text"): "Report.__repr__: " + _SHOWN,
    ("report", "views.bundle"): "Report._repr_mimebundle_: " + _SHOWN,
    ("comparison", "views.change"): "Comparison's repr and HTML: " + _SHOWN,
    ("comparison", "views.format"): "Comparison.lines formats its numbers as the views do",
    ("comparison", "views.standalone"): "Comparison.save_html writes the Change view's HTML file",
    ("history_store", "views.change"): "History's repr and HTML: " + _SHOWN,
    ("history_store", "views.standalone"): "History.save_html writes the runs view's HTML file",
    ("target", "views.format"): "TargetPlan's repr formats its numbers as the views do",
    ("target", "views.change"): "TargetPlan's HTML: " + _SHOWN,
    ("job", "views.format"): "JobReport.lines formats its numbers as the views do",
    ("job", "views.job_text"): "JobReport.__repr__: " + _SHOWN,
    ("job", "views.job_html"): "JobReport._repr_mimebundle_: " + _SHOWN,
    ("job", "views.standalone"): "JobReport.save_html writes the job report app's HTML file",
    ("memory", "views.format"): "MemoryBreakdown's lines format sizes as the views do",
    ("actions.sweep", "views.format"): "SweepResult's lines format times as the views do",
    ("report", "target"): (
        "Report.set_target, a convenience: the plan (target.py) is made from a report"
    ),
    ("costs", "_meta"): (
        "the meta-tensor fallback builds on costs' parsers and is loaded (with torch's meta "
        "kernels) only for an op that has no formula"
    ),
}


@dataclass(frozen=True)
class Import:
    importer: str  # module names without the "jupyter_brrr." prefix ("" for the package)
    imported: str
    line: int
    lazy: bool  # inside a function


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".so", ".pyd") or "labextension" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE).parts)
        parts[-1] = parts[-1].split(".")[0]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _target(importer: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The package's modules an import statement loads."""
    is_package = MODULES[importer].name == "__init__.py"
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return [n.removeprefix("jupyter_brrr").lstrip(".") for n in names if _ours(n)]
    if node.level:
        base = importer.split(".") if importer else []
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    elif node.module and _ours(node.module):
        module = node.module.removeprefix("jupyter_brrr").lstrip(".")
    else:
        return []
    # "from . import x" loads the module x where there is one.
    found = []
    for alias in node.names:
        sub = f"{module}.{alias.name}".lstrip(".")
        found.append(sub if sub in MODULES else module)
    return found


def _ours(name: str) -> bool:
    return name == "jupyter_brrr" or name.startswith("jupyter_brrr.")


def _imports(module: str) -> list[Import]:
    path = MODULES[module]
    if path.suffix != ".py":
        return []
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit(other, lazy)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(
                    Import(module, target, child.lineno, lazy)
                    for target in _target(module, child)
                    if target != module
                )
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


IMPORTS = [found for module in MODULES for found in _imports(module)]


def layer(module: str) -> str:
    top = module.split(".")[0] if module else "jupyter_brrr"
    if top in API_LAYER or module == "":
        return "api"
    if top == "notebook":
        return "notebook"
    if top == "views":
        return "views"
    if top in REPORT_LAYER:
        return "report"
    return "core"


def _listed(found: Import) -> bool:
    return found.lazy and (found.importer, found.imported) in ALLOWED_LAZY


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def _graph(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for found in imports:
        edges.setdefault(found.importer, set()).add(found.imported)
    return edges


def test_the_module_level_imports_have_no_cycle() -> None:
    cycle = _cycle(_graph([i for i in IMPORTS if not i.lazy]))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_cycle_even_through_imports_inside_functions() -> None:
    """A function-level import that closes a cycle is a cycle put off, unless ALLOWED_LAZY lists it."""
    cycle = _cycle(_graph([i for i in IMPORTS if not _listed(i)]))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_dependencies_point_one_way() -> None:
    upward = [
        f"{i.importer or 'jupyter_brrr'} ({layer(i.importer)}) imports {i.imported} "
        f"({layer(i.imported)}) at line {i.line}"
        for i in IMPORTS
        if LAYERS.index(layer(i.imported)) > LAYERS.index(layer(i.importer)) and not _listed(i)
    ]
    assert not upward, "\n".join(upward)


def test_every_listed_lazy_import_is_still_needed() -> None:
    """The list stays honest: each entry is a function-level import that still points up a
    layer or closes a cycle."""
    lazy = {(i.importer, i.imported) for i in IMPORTS if i.lazy}
    direct = _graph([i for i in IMPORTS if not _listed(i)])
    for (importer, imported), reason in ALLOWED_LAZY.items():
        assert (importer, imported) in lazy, f"{importer} no longer imports {imported}: {reason}"
        upward = LAYERS.index(layer(imported)) > LAYERS.index(layer(importer))
        assert upward or _reaches(direct, imported, importer), (importer, imported)


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return False


@pytest.mark.parametrize("layer_name", ["core", "report"])
def test_the_core_and_the_actions_never_import_ipython(layer_name: str) -> None:
    """Only the notebook front end sees IPython (the shell, its display): below it, no module
    imports it, at module level or in a function."""
    for module, path in MODULES.items():
        if layer(module) != layer_name or path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in ("IPython", "ipykernel", "ipywidgets"), (
                    f"{module} imports {name} (line {node.lineno})"
                )


def test_importing_the_core_loads_no_ui_library() -> None:
    """Every module below the views imports without matplotlib, bokeh, PIL, ipywidgets or IPython."""
    below = sorted(
        m for m, p in MODULES.items() if layer(m) in ("core", "report") and p.suffix == ".py"
    )
    code = (
        "import importlib, sys\n"
        f"for name in {['jupyter_brrr.' + m for m in below]!r}:\n"
        "    importlib.import_module(name)\n"
        "ui = ('matplotlib', 'bokeh', 'PIL', 'ipywidgets', 'IPython')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ui)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
