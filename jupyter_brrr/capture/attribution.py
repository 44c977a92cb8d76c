"""Which module and which line ran each op: ranges the profiler records around module calls and
(on request) around each torch call of the user's own code.

Module paths. The profiler's trace names no ``nn.Module`` unless Python stacks are recorded
(``with_stack``, costly), and then only by class (``Linear_3``). So, during the profiled run only,
global forward pre- and post-hooks open and close a range around each module call (the profiler's
cheapest, ``_RecordFunctionFast``: about 4 us a range here, against 20-40 us for
``record_function``), named ``nn.Module: <path>``, where the path is the module's place under the variable that
holds it (``model.transformer.h.3.mlp.c_fc``, as ``named_modules`` spells it). The paths come from
the modules the code can reach: the variables a notebook cell names (and the functions, closures
and object attributes those reach, two levels deep), or ``profile()``'s function, its arguments,
closure and globals. A module the code creates on the fly has no path: its ops count in the
enclosing module, or under its class name at top level. ``events`` reads the ranges back as each
op's ``module``.

Hooks would change what ``torch.compile`` runs: Dynamo guards on the global hook tables, so a
compiled model would recompile inside the profiled run. Where the code can reach compiled code
(an ``OptimizedModule``, a module compiled in place, a ``torch.compile``'d function, or a cell
that calls ``torch.compile``) no hook is installed, and the report says why its ops have no
module.

Source lines (``--stack`` / ``profile(stack=True)``): a ``TorchFunctionMode`` opens a range named
``jupyter_brrr.line: <file>:<line>`` around each torch call, where the line is the innermost frame
of the user's own code (not PyTorch's, an installed package's, the standard library's or this
package's): ``cell:3`` for a line of a notebook cell, ``model.py:57`` for the user's module file.
It costs a stack walk per torch call, so it is off by default.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..trace.events import LINE_PREFIX, MODULE_PREFIX

__all__ = ["LINE_PREFIX", "MODULE_PREFIX", "Attribution", "for_call", "for_code"]

# How far names are followed from the code: the cell's names, then what their functions name.
_DEPTH = 2


@dataclass
class Attribution:
    """What to attribute during the profiled run: the module paths (``id(module) -> path``), and
    whether to mark source lines. ``notes`` say what could not be attributed and why."""

    paths: dict[int, str] = field(default_factory=dict)
    lines: bool = False
    compiled: str = ""  # why module hooks are off (compiled code in reach), or ""
    notes: list[str] = field(default_factory=list)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Hooks (and the line mode) on for the duration; always removed, whatever happens."""
        with contextlib.ExitStack() as stack:
            if self.compiled:
                self.notes.append(
                    f"Ops are not attributed to modules: the code reaches compiled code "
                    f"({self.compiled}), and module hooks would make torch.compile recompile it "
                    "inside the profiled run."
                )
            elif self.paths:
                stack.enter_context(_module_ranges(self.paths))
            if self.lines:
                stack.enter_context(_SourceLines())
            yield


def for_code(
    code: types.CodeType, namespace: Mapping[str, Any], *, source: str = "", lines: bool = False
) -> Attribution:
    """The attribution for a notebook cell compiled to ``code`` that runs in ``namespace``."""
    roots: dict[str, Any] = {}
    compiled = _compiled_mention(source)
    _collect(code, namespace, roots, _DEPTH, set())
    return _attribution(roots, lines, compiled)


def for_call(
    fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any], *, lines: bool = False
) -> Attribution:
    """The attribution for ``profile(fn, *args, **kwargs)``: modules among the arguments, the
    function's own module (a bound method's ``self``), its closure and the globals it names."""
    roots: dict[str, Any] = {}
    target = fn
    owner = getattr(fn, "__self__", None)
    if _is_module(fn):
        roots[_name_of(fn)] = fn
        target = getattr(type(fn), "forward", None)
    elif _is_module(owner):
        roots["self"] = owner
    for index, value in enumerate(args):
        _add_root(roots, f"args[{index}]", value)
    for key, value in kwargs.items():
        _add_root(roots, key, value)
    function = getattr(target, "__func__", target)
    code = getattr(function, "__code__", None)
    if code is not None:
        _collect_function(function, roots, _DEPTH, set())
    compiled = _compiled_reason(fn) or next(
        (reason for value in roots.values() if (reason := _compiled_reason(value))), ""
    )
    return _attribution(roots, lines, compiled)


# --- finding the modules -----------------------------------------------------------------------


def _is_module(value: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.nn.Module)


def _name_of(module: object) -> str:
    return type(module).__name__


def _add_root(roots: dict[str, Any], name: str, value: object) -> None:
    """A module, or the modules a plain object holds as attributes (``trainer.model``)."""
    if _is_module(value):
        roots.setdefault(name, value)
        return
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not isinstance(value, type | types.ModuleType):
        for attribute, held in list(attributes.items())[:64]:
            if _is_module(held):
                roots.setdefault(f"{name}.{attribute}", held)
    elif isinstance(value, list | tuple) and len(value) <= 64:
        for index, held in enumerate(value):
            if _is_module(held):
                roots.setdefault(f"{name}[{index}]", held)


def _names_in(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_in(constant)
    return names


def _collect(
    code: types.CodeType, namespace: Mapping[str, Any], roots: dict[str, Any], depth: int, seen: set
) -> None:
    """The modules the names of ``code`` reach in ``namespace``, following functions."""
    for name in sorted(_names_in(code)):
        if name not in namespace:
            continue
        value = namespace[name]
        _add_root(roots, name, value)
        if depth > 1 and isinstance(value, types.FunctionType | types.MethodType):
            _collect_function(value, roots, depth - 1, seen)
        elif depth > 1 and not _is_module(value):
            # An object whose class defines __call__ in Python (a trainer, a step function).
            call = type(value).__dict__.get("__call__")
            if isinstance(call, types.FunctionType):
                _collect_function(call, roots, depth - 1, seen)


def _collect_function(function: object, roots: dict[str, Any], depth: int, seen: set) -> None:
    owner = getattr(function, "__self__", None)
    if owner is not None:
        _add_root(roots, "self", owner)
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    if code is None or id(function) in seen:
        return
    seen.add(id(function))
    for name, cell in zip(
        code.co_freevars, getattr(function, "__closure__", None) or (), strict=False
    ):
        with contextlib.suppress(ValueError):  # an empty cell
            _add_root(roots, name, cell.cell_contents)
    _collect(code, getattr(function, "__globals__", {}), roots, depth, seen)


def _compiled_mention(source: str) -> str:
    return "the code calls torch.compile" if "compile(" in source else ""


def _compiled_reason(value: object) -> str:
    """Why ``value`` is compiled code, or ""."""
    if getattr(value, "_torchdynamo_orig_callable", None) is not None:
        return f"{getattr(value, '__name__', 'a function')} is a torch.compile'd function"
    if type(value).__name__ == "OptimizedModule":
        return f"{type(getattr(value, '_orig_mod', value)).__name__} is wrapped by torch.compile"
    if _is_module(value):
        for name, module in value.named_modules():  # pyright: ignore[reportAttributeAccessIssue]  # _is_module checked it
            if getattr(module, "_compiled_call_impl", None) is not None:
                return f"{name or type(module).__name__} was compiled in place (.compile())"
            if type(module).__name__ == "OptimizedModule":
                return f"{name} is wrapped by torch.compile"
    return ""


def _attribution(roots: dict[str, Any], lines: bool, compiled: str) -> Attribution:
    compiled = compiled or next(
        (reason for value in roots.values() if (reason := _compiled_reason(value))), ""
    )
    paths: dict[int, str] = {}
    if not compiled:
        # The biggest root first: a module held by a variable and by a bigger model is named
        # by its place in the model (``model.h.0`` rather than ``block``).
        sized = sorted(roots.items(), key=lambda item: -sum(1 for _ in item[1].modules()))
        for root, module in sized:
            for name, sub in module.named_modules():
                paths.setdefault(id(sub), f"{root}.{name}" if name else root)
    return Attribution(paths=paths, lines=lines, compiled=compiled)


# --- the ranges -----------------------------------------------------------------------------------


@contextlib.contextmanager
def _module_ranges(paths: Mapping[int, str]) -> Iterator[None]:
    """Global forward hooks that open a range per module call, named by its path."""
    import torch
    from torch._C._profiler import _RecordFunctionFast
    from torch.nn.modules import module as module_hooks

    local = threading.local()
    is_compiling = torch.compiler.is_compiling

    def stack() -> list:
        opened = getattr(local, "opened", None)
        if opened is None:
            opened = local.opened = []
        return opened

    def before(module: Any, args: Any) -> None:
        opened = stack()
        if is_compiling():
            return
        path = paths.get(id(module))
        if path is None and opened:
            opened.append(None)  # inside a named module: its ops count there
            return
        scope = _RecordFunctionFast(MODULE_PREFIX + (path or type(module).__name__))
        scope.__enter__()
        opened.append(scope)

    def after(module: Any, args: Any, output: Any) -> None:
        if is_compiling():
            return
        opened = stack()
        if opened:
            scope = opened.pop()
            if scope is not None:
                scope.__exit__(None, None, None)

    pre = module_hooks.register_module_forward_pre_hook(before)
    # always_call: the range closes even when the forward raises.
    post = module_hooks.register_module_forward_hook(after, always_call=True)
    try:
        yield
    finally:
        pre.remove()
        post.remove()


def _library_folders() -> tuple[str, ...]:
    """Folders whose files are not the user's code."""
    folders = {
        sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")
    }
    folders.add(os.path.dirname(os.path.abspath(__file__)))
    for name in ("torch", "IPython", "ipykernel", "traitlets"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            folders.add(os.path.dirname(os.path.abspath(file)))
    return tuple(sorted(os.path.join(f, "") for f in folders if f))


def _line_label(filename: str, line: int) -> str:
    """``cell:3`` for a notebook cell, else the file's name without its folders and the line."""
    base = filename.replace("\\", "/")
    if base.startswith("<ipython-input-") or (
        "/ipykernel_" in base and base.rsplit("/", 1)[-1].removesuffix(".py").isdigit()
    ):
        return f"cell:{line}"
    return f"{base.rsplit('/', 1)[-1]}:{line}"


class _SourceLines:
    """A ``TorchFunctionMode`` (made on entry, torch imported late) that marks each torch call
    with the user's line that made it."""

    def __enter__(self) -> _SourceLines:
        import torch
        from torch._C._profiler import _RecordFunctionFast
        from torch.overrides import TorchFunctionMode

        library = _library_folders()
        verdicts: dict[types.CodeType, bool] = {}

        def users_line() -> str | None:
            frame = sys._getframe(2)
            while frame is not None:
                code = frame.f_code
                user = verdicts.get(code)
                if user is None:
                    name = code.co_filename
                    user = verdicts[code] = not (
                        name.startswith(library)
                        or (name.startswith("<") and "ipython-input" not in name)
                    )
                if user:
                    return _line_label(code.co_filename, frame.f_lineno)
                frame = frame.f_back
            return None

        class Lines(TorchFunctionMode):
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = kwargs or {}
                if torch.compiler.is_compiling():
                    return func(*args, **kwargs)
                line = users_line()
                if line is None:
                    return func(*args, **kwargs)
                with _RecordFunctionFast(LINE_PREFIX + line):
                    return func(*args, **kwargs)

        self._mode = Lines()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)
