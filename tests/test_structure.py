"""The package's structure: layers as folders, imports that point one way, no import cycle.

Each folder of ``jupyter_brrr/`` is a layer; ``LAYERS`` orders them from the bottom up, and a
module may import only from its own layer and those below it (module-level imports and imports
inside functions alike). The top-level modules (the package itself, ``cli``, ``__main__`` and the
public ``record`` for training scripts) are the public API, above every layer. The graph is read
from the source with ``ast``; imports under ``TYPE_CHECKING`` do not run and do not count.

One import points up, by design: the data objects' display methods (``report.shown``) ask the
view registry (``views.render``) to draw them, inside the methods (``VIEW_REGISTRY``). No other
import is allowed to point up or to close a cycle, not even inside a function.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jupyter_brrr"

# The layers, bottom up: the documents' shapes; reading a trace; what ops cost and what the
# device can do; where the time went; the objects a user holds and how a trace becomes one;
# running code under the profiler (which ends in a report, as a loaded trace does); running it
# again (A/B, sweep); drawing every object; the notebook front end (IPython); the public API.
LAYERS = (
    "schema",
    "trace",
    "costs",
    "analysis",
    "report",
    "capture",
    "actions",
    "views",
    "notebook",
    "api",
)

# The one upward import the package has: the data objects' display methods (``report.shown``:
# repr, the notebook display, lines, save_html) ask the view registry, ``views.render``, to draw
# them, inside the methods (pyinstrument's ``Renderer.render(session)``).
VIEW_REGISTRY = ("report.shown", "views")


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
    top = module.split(".")[0] if module else ""
    return top if top in LAYERS and (PACKAGE / top).is_dir() else "api"


def _listed(found: Import) -> bool:
    return _is_the_registry(found)


def _is_the_registry(found: Import) -> bool:
    return (found.importer, found.imported) == VIEW_REGISTRY and found.lazy


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
    """A function-level import that closes a cycle is a cycle put off."""
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


def test_every_folder_is_a_layer() -> None:
    """A new folder takes its place in LAYERS, so that its imports are checked."""
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(LAYERS) - {"api"}


def test_the_view_registry_is_the_one_upward_import() -> None:
    """``report.shown`` imports ``views.render`` inside a function, once; nothing else reaches
    the views from below them."""
    up = [i for i in IMPORTS if LAYERS.index(layer(i.imported)) > LAYERS.index(layer(i.importer))]
    assert [(i.importer, i.imported, i.lazy) for i in up] == [(*VIEW_REGISTRY, True)]


@pytest.mark.parametrize("layer_name", LAYERS[: LAYERS.index("notebook")])
def test_below_the_notebook_no_module_imports_ipython(layer_name: str) -> None:
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
        m
        for m, p in MODULES.items()
        if LAYERS.index(layer(m)) < LAYERS.index("views") and p.suffix == ".py"
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


# --- functions short enough to read --------------------------------------------------------------

ROOT = PACKAGE.parent
MAX_FUNCTION_LINES = 150

# The functions still over the limit, with their length when listed: the list only shrinks (a
# test fails on an entry that is no longer over the limit, or that grew).
LONG_NOT_YET: dict[str, int] = {}


def python_function_lengths(
    root: Path = ROOT, folders: tuple[str, ...] = ("jupyter_brrr", "tests", "bench")
) -> dict[str, int]:
    """Every Python function of the package, the tests and the benchmarks (methods and nested
    functions too), as "path:name" -> lines from its ``def`` to its end (decorators are
    declarations, such as the magic's table of flags, not code to follow)."""
    found: dict[str, int] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    key = f"{where}:{node.name}"
                    found[key] = max(found.get(key, 0), lines)
    return found


def typescript_function_lengths(root: Path = ROOT, folder: str = "js/src") -> dict[str, int]:
    """Every function of the TypeScript sources (js/src, the specs included), read by the
    TypeScript compiler's parser (js/function_lengths.js), as "path:name" -> lines."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node.js on the PATH")
    sources = sorted(p.relative_to(root).as_posix() for p in (root / folder).rglob("*.ts"))
    done = subprocess.run(
        [node, str(ROOT / "js" / "function_lengths.js"), *sources],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, int] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        key = f"{row['file']}:{row['name']}"
        found[key] = max(found.get(key, 0), row["lines"])
    return found


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_no_function_is_over_150_lines(language: str) -> None:
    lengths = python_function_lengths() if language == "python" else typescript_function_lengths()
    assert len(lengths) > 100  # the scan found the sources
    long = {
        key: lines
        for key, lines in lengths.items()
        if lines > MAX_FUNCTION_LINES and key not in LONG_NOT_YET
    }
    assert not long, f"over {MAX_FUNCTION_LINES} lines: split them into named pieces: {long}"
    suffix = ".py:" if language == "python" else ".ts:"
    for key, listed in LONG_NOT_YET.items():
        if suffix not in key:
            continue
        now = lengths.get(key, 0)
        assert now > MAX_FUNCTION_LINES, f"{key} is {now} lines now: take it off LONG_NOT_YET"
        assert now <= listed, f"{key} grew from {listed} to {now} lines"


def test_the_length_scans_see_a_long_function(tmp_path: Path) -> None:
    """Both scans count a function from its first line (in Python its ``def``, not its
    decorators) to its last, and nested functions on their own too."""
    body = "".join(f"    x{i} = {i}\n" for i in range(150))
    (tmp_path / "long.py").write_text(
        f"@staticmethod\ndef long():\n    def inner():\n        pass\n{body}"
    )
    assert python_function_lengths(tmp_path, (".",)) == {"long.py:long": 153, "long.py:inner": 2}
    ts_body = "".join(f"  const x{i} = {i};\n" for i in range(150))
    inner = "  function inner(): void {\n    return;\n  }\n"
    (tmp_path / "long.ts").write_text(f"export const long = (): void => {{\n{inner}{ts_body}}};\n")
    found = typescript_function_lengths(tmp_path, ".")
    assert found == {"long.ts:long": 155, "long.ts:inner": 3}


# --- no module uses another's private names ------------------------------------------------------


def _imported_module(importer: str, node: ast.ImportFrom) -> str | None:
    """The package's module that a ``from ... import`` statement imports from, or None."""
    if node.level:
        base = importer.split(".") if importer else []
        if MODULES[importer].name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])
    if node.module and _ours(node.module):
        return node.module.removeprefix("jupyter_brrr").lstrip(".")
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: str) -> list[str]:
    """Where ``module`` uses a private name (``_name``) of another module of the package:
    ``from x import _name``, or ``x._name`` where ``x`` is a module of the package that it
    imported. Private modules themselves (``costs._meta``) may be imported."""
    path = MODULES[module]
    if path.suffix != ".py":
        return []
    tree = ast.parse(path.read_text(), str(path))
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> the package's module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _imported_module(module, node)
            if source is None:
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}".lstrip(".")
                if sub in MODULES:
                    modules[alias.asname or alias.name] = sub
                elif _private(alias.name) and source != module:
                    found.append(f"line {node.lineno}: from {source or '.'} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name) and alias.asname:
                    modules[alias.asname] = alias.name.removeprefix("jupyter_brrr").lstrip(".")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and modules[node.value.id] != module
            and _private(node.attr)
        ):
            found.append(f"line {node.lineno}: {modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    uses = {m: found for m in MODULES if (found := private_uses(m))}
    assert not uses, f"private names of other modules (make them public, or move the code): {uses}"


def test_the_private_name_scan_sees_both_forms(tmp_path: Path, monkeypatch) -> None:
    """Both forms are found, and a module's own private names and private modules are not."""
    package = tmp_path / "pkg"
    package.mkdir()
    user = package / "user.py"
    user.write_text(
        "from . import other, _meta\n"
        "from .other import _hidden, public\n"
        "from .user import _mine\n"
        "other._helper()\n"
        "_meta.table\n"
        "other.__name__\n"
    )
    for name in ("__init__.py", "other.py", "_meta.py"):
        (package / name).write_text("")
    monkeypatch.setitem(MODULES, "pkgtest.user", user)
    monkeypatch.setitem(MODULES, "pkgtest.other", package / "other.py")
    monkeypatch.setitem(MODULES, "pkgtest._meta", package / "_meta.py")
    assert private_uses("pkgtest.user") == [
        "line 2: from pkgtest.other import _hidden",
        "line 4: pkgtest.other._helper",
    ]
