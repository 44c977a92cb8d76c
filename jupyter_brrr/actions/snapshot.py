"""The state a cell can change, copied before an A/B and put back in place after it.

An A/B runs a cell hundreds of times; a cell that trains, appends or updates tensors in place
changes state each time. A ``Snapshot`` is taken after the cell's first (plain) run, before the
A/B, and restored after it, so that the namespace is as the first run left it. What it holds:

- the bindings of every name the cell (or a function of this notebook that it calls, or a hook or
  callback of this notebook that an object it uses holds) reads or writes: a name rebound or
  deleted by the A/B's runs gets its object back; the same for the module attributes the cell
  assigns (``torch.backends.cudnn.benchmark = True``) and for every global of the user's own
  modules (a ``helpers.py`` beside the notebook, not an installed package) that it reaches;
- for every object reachable from those names (attributes, items, keys, closures of the
  notebook's functions, class attributes of the notebook's classes), as the object itself, so
  that the user's other references see the restored state:
  - tensors (parameters, buffers, optimizer state, ``.grad``): a copy of their values (in host
    memory, so the A/B's GPU memory is not halved), and their shape, strides, storage, dtype and
    ``requires_grad``; restored with ``copy_`` into the same tensor (``.data`` first where the
    shape or storage changed);
  - containers, each put back by its own type's semantics, through the base type's methods so
    that a subclass's overrides (``Counter.update`` counts) do not change what is put back:
    lists, dicts (``Counter``, ``OrderedDict`` with its order, ``defaultdict`` with its
    factory), sets, deques, bytearrays, ``array.array``, ``queue.Queue`` (under its lock, with
    its count of unfinished tasks), pandas DataFrames and Series (a deep copy); objects: their
    ``__dict__`` and slots (modules, optimizers, schedulers, user classes, all of their
    attributes); classes of the notebook and the user's modules: their attributes; only where
    something changed;
  - numpy arrays (values), random generators (torch, numpy, ``random.Random``: their state);
- the global random states (torch's CPU and CUDA generators, ``random``, ``numpy.random``) and
  ``os.environ``.

After a restore, every copy is compared with what is there (``Restored.differ``): a finalizer, a
hook or a thread that changed something again is named rather than "put back" being claimed;
threads that the runs started and that still run are named too (``Restored.threads``).

What cannot be undone is said, not hidden: files written, iterators advanced (``next(it)``),
open files and other resources outside Python (``irreversible``). What no copy can put back and
what keeps changing after a restore (a ``queue.SimpleQueue`` or a multiprocessing queue, whose
items cannot be read) is ``cannot_restore``: the A/B and the sweep refuse it unless told to keep
what the runs do. Tensors without plain storage (sparse, nested, subclasses) are listed as not
copied (``skipped``).

The snapshot's size is known before any copy (``survey``), and bounded: past ``max_bytes`` (by
default half the host memory available) it is incomplete, and the caller decides (the A/B
refuses a stateful cell whose state does not fit).
"""

from __future__ import annotations

import array
import ast
import collections
import contextlib
import dis
import functools
import io
import os
import queue
import random
import site
import sys
import threading
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .cell_function import UNSET

# Bounds of one walk: objects visited, and tensor bytes copied (the latter also bounded by the
# host memory available).
MAX_OBJECTS = 200_000
DEFAULT_MAX_BYTES = 8 * 2**30  # where the available host memory cannot be read
HOST_MEMORY_SHARE = 0.5

# Values with no state to copy.
_ATOMIC = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    range,
    slice,
    type(Ellipsis),
    type(NotImplemented),
)
# Objects of these packages are infrastructure (the kernel, widgets, this tool), never state a
# cell means to change: not walked. DataLoader iterators own worker processes: not walked either.
_INFRASTRUCTURE = (
    "IPython",
    "ipykernel",
    "ipywidgets",
    "traitlets",
    "jupyter_client",
    "comm",
    "zmq",
    "tornado",
    "asyncio",
    "threading",
    "concurrent",
    "multiprocessing",
    "logging",
    "socket",
    "selectors",
    "queue",
    "jupyter_brrr",
    "torch._dynamo",
    "torch._inductor",
    "torch.utils.data.dataloader",
    "torch.cuda",
)
_RESOURCES = (io.IOBase,)


class StateNotCopied(RuntimeError):
    """The state a stateful cell can change cannot be copied (too large): its A/B is not run."""


@dataclass
class Survey:
    """What a snapshot of some names would hold, before any copy is made."""

    names: tuple[str, ...]
    roots: list[str] = field(default_factory=list)  # the names that reach something to copy
    tensors: int = 0
    tensor_bytes: int = 0
    containers: int = 0
    objects: int = 0
    irreversible: list[str] = field(default_factory=list)
    cannot_restore: list[str] = field(default_factory=list)  # no copy can put these back
    skipped: list[str] = field(default_factory=list)
    complete: bool = True
    limit: str = ""  # why the walk stopped early, when it did

    def describe(self) -> str:
        """``12 tensors (3.4 MB) and 5 containers of model, opt, x``."""
        parts = [f"{self.tensors:,} tensor{'s' if self.tensors != 1 else ''}"]
        if self.tensors:
            parts[0] += f" ({format_bytes(self.tensor_bytes)})"
        if self.containers:
            parts.append(
                f"{self.containers:,} container{'s' if self.containers != 1 else ''} or object"
                f"{'s' if self.containers != 1 else ''}"
            )
        if not self.roots:
            return "nothing"
        shown = ", ".join(self.roots[:8]) + (", ..." if len(self.roots) > 8 else "")
        return f"{' and '.join(parts)} in {shown}"


@dataclass
class Restored:
    """What a restore put back: per name the cell uses, the objects that had changed."""

    changed: dict[str, list[str]] = field(default_factory=dict)
    random_state: bool = False  # the global random generators had moved on
    failed: list[str] = field(default_factory=list)
    # After the restore, what still differs from the copy (``model.weight (tensor)``), and the
    # threads that the runs started and that still run: the restore is not the whole truth.
    differ: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return list(self.changed)

    @property
    def exact(self) -> bool:
        """Whether everything is as the copy holds it: nothing failed, differs or still runs."""
        return not (self.failed or self.differ or self.threads)

    def lines(self, how: str = "as the first run left it") -> list[str]:
        """What the restore did and what it could not make true, one sentence each (no full
        stops): ``put back as the first run left it: seen (list: 4,203 -> 1 items)`` only where
        the check after it found everything as the copy holds it."""
        lines = []
        if self.changed or self.random_state:
            if self.exact:
                lines.append(f"put back {how}: {self.describe()}")
            else:
                lines.append(f"put back, but not all of it holds: {self.describe()}")
        return lines + self.problems()

    def problems(self) -> list[str]:
        """What the restore could not make true, one sentence each (empty when ``exact``)."""
        lines = [f"could not put back {failure}" for failure in self.failed[:5]]
        if self.differ:
            shown = ", ".join(self.differ[:8]) + (", ..." if len(self.differ) > 8 else "")
            lines.append(
                f"not put back: {shown} differ from the copy after the restore (changed again "
                "during or after it: by a thread, a finalizer or a hook)"
            )
        if self.threads:
            lines.append(
                f"still running: {', '.join(self.threads[:5])}, started by the runs: what "
                "they change after the restore stays"
            )
        return lines

    def describe(self) -> str:
        """``model (2 tensors), seen (list: 4,203 -> 1 items)``, or ``nothing had changed``."""
        parts = [f"{name} ({'; '.join(_grouped(items))})" for name, items in self.changed.items()]
        if self.random_state:
            parts.append("the random number generators")
        return ", ".join(parts) if parts else "nothing had changed"

    def _add(self, root: str, what: str) -> None:
        self.changed.setdefault(root, []).append(what)


def _grouped(items: list[str]) -> list[str]:
    """Counts of identical descriptions: ``2 tensors`` rather than ``tensor, tensor``."""
    counts = collections.Counter(items)
    return [
        f"{n} {what}s" if n > 1 and what in ("tensor", "object", "array") else what
        for what, n in counts.items()
    ]


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


# --- which names ----------------------------------------------------------------------------------


def names_used(namespace: dict, source: str, *, hidden: Iterable[str] = ()) -> tuple[str, ...]:
    """The names of ``namespace`` that running ``source`` can read or change: every name the
    code mentions, and, through the functions and classes of this namespace that it reaches
    (defined in the notebook), the global names those mention. ``hidden`` names (the shell's
    own: ``In``, ``Out``, ``_``) are left out. Over-approximates (attribute names count too)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    pending: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            pending.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            pending.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pending.add(node.name)
    skip = set(hidden)
    found: set[str] = _module_attributes_assigned(tree, namespace)
    seen_code: set[int] = set()
    while pending:
        name = pending.pop()
        if name in found or name in skip:
            continue
        found.add(name)
        if name in namespace:
            for code in _code_of_notebook_object(namespace[name], namespace):
                if id(code) not in seen_code:
                    seen_code.add(id(code))
                    pending.update(_global_names(code))
    return tuple(sorted(name for name in found if not name.startswith("__")))


def _module_attributes_assigned(tree: ast.AST, namespace: dict) -> set[str]:
    """``torch.backends.cudnn.benchmark`` for ``torch.backends.cudnn.benchmark = True`` (or
    ``+=``, ``del``) in the code: an attribute of a module that the code rebinds, to be put
    back like a name of the notebook."""
    targets: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets.append(node.target)
        elif isinstance(node, ast.Delete):
            targets += node.targets
    found = set()
    for target in targets:
        for node in ast.walk(target):
            if not isinstance(node, ast.Attribute):
                continue
            parts = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                name = ".".join([value.id, *reversed(parts)])
                if _binding_scope(namespace, name) is not None:
                    found.add(name)
    return found


def notebook_functions(namespace: dict, source: str) -> list[types.FunctionType]:
    """The functions defined in this namespace (the notebook's own) that ``source`` reaches by
    name, directly or through other such functions: their code runs in the cell too."""
    functions: list[types.FunctionType] = []
    seen: set[int] = set()
    for name in names_used(namespace, source):
        for fn in _functions_of(namespace.get(name), namespace):
            if id(fn) not in seen:
                seen.add(id(fn))
                functions.append(fn)
    return functions


def _functions_of(obj: Any, namespace: dict) -> list[types.FunctionType]:
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, functools.partial):
        obj = obj.func
    if isinstance(obj, types.FunctionType):
        return [obj] if obj.__globals__ is namespace else []
    cls = obj if isinstance(obj, type) else type(obj)
    if cls.__module__ != namespace.get("__name__", "__main__") or cls in _ATOMIC:
        return []
    functions = []
    for klass in cls.__mro__:
        if klass.__module__ != cls.__module__:
            continue
        for value in vars(klass).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
                functions.append(value)
    return functions


def _code_of_notebook_object(obj: Any, namespace: dict) -> list[types.CodeType]:
    return [fn.__code__ for fn in _functions_of(obj, namespace)]


_GLOBAL_OPS = frozenset(
    ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME")
)


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, binds or deletes (not attribute names)."""
    names = {
        str(instruction.argval)
        for instruction in dis.get_instructions(code)
        if instruction.opname in _GLOBAL_OPS
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


# --- the walk ---------------------------------------------------------------------------------------


def available_host_memory() -> int | None:
    """Bytes of host memory available now (Linux ``MemAvailable``), None where unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def default_max_bytes() -> int:
    available = available_host_memory()
    return int(available * HOST_MEMORY_SHARE) if available else DEFAULT_MAX_BYTES


class _Walker:
    """Visits every object reachable from some names once, and records what there is to copy."""

    def __init__(self, namespace: dict, names: tuple[str, ...], max_bytes: int) -> None:
        self.namespace = namespace
        self.names = list(names)  # grows: the globals of the notebook's hooks and callbacks
        self.max_bytes = max_bytes
        self.seen: set[int] = set()
        self.survey = Survey(names=names)
        # (object, root name, path) of what there is to copy, in visiting order.
        self.tensors: list[tuple[Any, str, str]] = []
        self.arrays: list[tuple[Any, str, str]] = []
        self.containers: list[tuple[Any, str, str, str]] = []  # + kind
        self.generators: list[tuple[Any, str, str]] = []
        # (the globals of a module, a name in them, the name as said: ``helpers.seen``).
        self.module_bindings: list[tuple[dict, str, str]] = []
        self._torch = sys.modules.get("torch")
        self._numpy = sys.modules.get("numpy")
        self._pandas = sys.modules.get("pandas")
        self._notebook = namespace.get("__name__", "__main__")
        # The namespace itself is never walked as a dict (an object holding ``globals()``
        # would make the whole notebook "state"): its names are, through the bindings.
        self.seen.add(id(namespace))
        builtins = namespace.get("__builtins__")
        if builtins is not None:
            self.seen.add(id(builtins))
        self._stack: list[tuple[Any, str, str, int]] = []

    def walk(self) -> None:
        for name in reversed(self.names):
            self._push_name(name)
        stack = self._stack
        while stack:
            obj, root, path, depth = stack.pop()
            if id(obj) in self.seen or isinstance(obj, _ATOMIC):
                continue
            self.seen.add(id(obj))
            if len(self.seen) > MAX_OBJECTS:
                self.survey.complete = False
                self.survey.limit = (
                    f"more than {MAX_OBJECTS:,} objects are reachable from {root}: too many to copy"
                )
                return
            recorded = self._recorded()
            children = self._visit(obj, root, path, depth)
            if self._recorded() != recorded and root not in self.survey.roots:
                self.survey.roots.append(root)
            for child, child_path, *own_root in reversed(children):
                if id(child) not in self.seen and not isinstance(child, _ATOMIC):
                    stack.append((child, own_root[0] if own_root else root, child_path, depth + 1))
        self.survey.names = tuple(self.names)

    def _push_name(self, name: str) -> None:
        scope = _binding_scope(self.namespace, name)
        if scope is not None:
            mapping, key = scope
            if mapping is not self.namespace:
                self.module_bindings.append((mapping, key, name))
            if key in mapping:
                self._stack.append((mapping[key], name, name, 0))

    def _recorded(self) -> int:
        return (
            len(self.tensors)
            + len(self.arrays)
            + len(self.containers)
            + len(self.generators)
            + len(self.module_bindings)
        )

    def _visit(self, obj: Any, root: str, path: str, depth: int) -> list[tuple[Any, ...]]:
        """Record ``obj`` and return its children: (child, path) or (child, path, root)."""
        torch, numpy = self._torch, self._numpy
        if torch is not None and isinstance(obj, torch.Tensor):
            return self._tensor(obj, root, path)
        if isinstance(obj, types.ModuleType):
            return self._module(obj)
        if isinstance(obj, type):
            return self._class(obj, root, path)
        if isinstance(obj, (types.BuiltinFunctionType, types.CodeType)):
            return []
        if isinstance(obj, types.MethodType):
            return [(obj.__self__, f"{path}.__self__"), (obj.__func__, path)]
        if isinstance(obj, (staticmethod, classmethod)):
            return [(obj.__func__, path)]
        if isinstance(obj, types.FunctionType):
            return self._function(obj, path)
        if isinstance(obj, functools.partial):
            return [
                (obj.func, f"{path}.func"),
                *((a, f"{path}.args") for a in obj.args),
                *((v, f"{path}.keywords") for v in obj.keywords.values()),
            ]
        if isinstance(obj, queue.Queue):
            # The queue's lock and conditions are the threads' business: its items are state.
            self.containers.append((obj, root, path, "queue"))
            self.survey.containers += 1
            with obj.mutex:
                return [(item, f"{path} item") for item in list(obj.queue)]
        unreadable = _unreadable_queue(obj)
        if unreadable:
            self.survey.cannot_restore.append(
                f"{path}: a {unreadable}, whose items cannot be copied: what the runs put into "
                "it or take from it stays"
            )
            return []
        if _is_infrastructure(type(obj)) and not _is_module_like(torch, obj):
            return []
        if torch is not None and isinstance(obj, torch.Generator):
            self.generators.append((obj, root, path))
            return []
        if isinstance(obj, random.Random):
            self.generators.append((obj, root, path))
            return []
        if numpy is not None:
            if isinstance(obj, numpy.ndarray):
                if obj.dtype.hasobject:
                    self.arrays.append((obj, root, path))
                    return [(item, f"{path}[...]") for item in obj.flat]
                self.arrays.append((obj, root, path))
                self._add_bytes(obj.nbytes, path)
                return []
            if isinstance(obj, (numpy.random.Generator, numpy.random.RandomState)):
                self.generators.append((obj, root, path))
                return []
            if isinstance(obj, numpy.generic):
                return []
        pandas = self._pandas
        if pandas is not None and isinstance(obj, (pandas.DataFrame, pandas.Series)):
            # Its values live in blocks that Python cannot walk: a deep copy, put back whole.
            self.containers.append((obj, root, path, "pandas"))
            self.survey.containers += 1
            self._add_bytes(_pandas_bytes(obj), path)
            return []
        if isinstance(obj, _RESOURCES):
            if depth == 0:
                self.survey.irreversible.append(
                    f"{path}: an open file: what the runs write to it stays written"
                )
            return []
        if isinstance(
            obj, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
        ) or (hasattr(type(obj), "__next__") and not isinstance(obj, (list, dict, tuple))):
            if depth == 0:
                self.survey.irreversible.append(
                    f"{path}: an iterator: each run takes the next item, and an iterator "
                    "cannot be rewound"
                )
            return []
        return self._container(obj, root, path)

    def _tensor(self, tensor: Any, root: str, path: str) -> list[tuple[Any, ...]]:
        torch: Any = self._torch  # set: a tensor reached here, so torch is imported
        plain = type(tensor) in (torch.Tensor, torch.nn.Parameter)
        if (
            not plain
            or tensor.layout != torch.strided
            or tensor.is_nested
            or tensor.device.type == "meta"
        ):
            self.survey.skipped.append(f"{path} ({_kind_of_tensor(tensor)}): not copied")
            return []
        self.tensors.append((tensor, root, path))
        self._add_bytes(tensor.numel() * tensor.element_size(), path)
        self.survey.tensors += 1
        if tensor.is_leaf and tensor.requires_grad and tensor.grad is not None:
            return [(tensor.grad, f"{path}.grad")]
        return []

    def _user_code(self, module_name: str | None) -> bool:
        """Code of the notebook or of the user's own modules (not a library's)."""
        if not module_name:
            return False
        if module_name == self._notebook:
            return True
        module = sys.modules.get(module_name)
        return module is not None and _is_user_module(module)

    def _function(self, fn: types.FunctionType, path: str) -> list[tuple[Any, ...]]:
        """A function of the notebook can hold state in its defaults and closure (``def
        f(acc=[])``), and changes the globals it names (a forward hook that appends to a list
        of the notebook): those globals are names to put back too. A function of the user's
        own modules leads to its module's globals. A library's function is not walked."""
        if fn.__globals__ is not self.namespace:
            module = sys.modules.get(fn.__globals__.get("__name__") or "")
            if module is None or vars(module) is not fn.__globals__ or not _is_user_module(module):
                return []
            return [(module, f"{module.__name__}")]
        for name in sorted(_global_names(fn.__code__)):
            if name not in self.names and not name.startswith("__") and name in fn.__globals__:
                self.names.append(name)
                self._push_name(name)
        children: list[tuple[Any, ...]] = [
            (d, f"{path}.__defaults__") for d in fn.__defaults__ or ()
        ]
        children += [(d, f"{path}.__kwdefaults__") for d in (fn.__kwdefaults__ or {}).values()]
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            with contextlib.suppress(ValueError):  # an empty cell
                children.append((cell.cell_contents, f"{path}.<{name}>"))
        return children

    def _module(self, module: types.ModuleType) -> list[tuple[Any, ...]]:
        """A module of the user's own (not the notebook, not an installed package): every
        global is a binding to put back, and its value is walked, under its own name."""
        scope = vars(module)
        if scope is self.namespace or not _is_user_module(module):
            return []
        children: list[tuple[Any, ...]] = []
        for key in list(scope):
            if key.startswith("__"):
                continue
            name = f"{module.__name__}.{key}"
            self.module_bindings.append((scope, key, name))
            children.append((scope[key], name, name))
        return children

    def _class(self, cls: type, root: str, path: str) -> list[tuple[Any, ...]]:
        """A class of the notebook or of the user's modules: its attributes (a counter, a
        registry) are state; its methods are walked as functions."""
        if not self._user_code(getattr(cls, "__module__", None)):
            return []
        self.containers.append((cls, root, path, "class"))
        self.survey.containers += 1
        children: list[tuple[Any, ...]] = [
            (value, f"{path}.{key}") for key, value in vars(cls).items() if key not in _CLASS_FIXED
        ]
        children += [(base, path) for base in cls.__mro__[1:]]
        return children

    def _container(self, obj: Any, root: str, path: str) -> list[tuple[Any, ...]]:
        children: list[tuple[Any, ...]] = []
        kind = None
        if isinstance(obj, list):
            kind = "list"
            children = [(item, f"{path}[{i}]") for i, item in enumerate(list.copy(obj))]
        elif isinstance(obj, dict):
            kind = "dict"
            for key, value in _dict_items(obj):
                children.append((key, f"{path} key"))
                children.append((value, f"{path}[{_key_text(key)}]"))
            if isinstance(obj, collections.defaultdict):
                children.append((obj.default_factory, f"{path}.default_factory"))
        elif isinstance(obj, (set, collections.deque)):
            kind = "deque" if isinstance(obj, collections.deque) else "set"
            children = [(item, f"{path} item") for item in _items(obj, kind)]
        elif isinstance(obj, bytearray):
            kind = "bytearray"
        elif isinstance(obj, array.array):
            kind = "array.array"
            self._add_bytes(len(obj) * obj.itemsize, path)
        elif isinstance(obj, (tuple, frozenset)):
            children = [(item, f"{path}[{i}]") for i, item in enumerate(obj)]
        if kind is not None:
            self.containers.append((obj, root, path, kind))
            self.survey.containers += 1
        attributes = _instance_dict(obj)
        if attributes is not None:
            self.containers.append((obj, root, path, "__dict__"))
            self.survey.containers += 1
            module_like = _is_module_like(self._torch, obj)
            for name, value in attributes.items():
                child = _module_path(path, name, value) if module_like else f"{path}.{name}"
                children.append((value, child))
        slots = _slot_names(type(obj))
        if slots:
            self.containers.append((obj, root, path, "__slots__"))
            self.survey.containers += 1
            for name in slots:
                with contextlib.suppress(AttributeError):
                    children.append((getattr(obj, name), f"{path}.{name}"))
        if self._user_code(type(obj).__module__):
            children.append((type(obj), f"{path}.__class__"))  # its class attributes
        self.survey.objects += 1
        return children

    def _add_bytes(self, nbytes: int, path: str) -> None:
        self.survey.tensor_bytes += int(nbytes)
        if self.survey.complete and self.survey.tensor_bytes > self.max_bytes:
            self.survey.complete = False
            self.survey.limit = (
                f"the state reachable from these names holds more than "
                f"{format_bytes(self.max_bytes)} of tensors and arrays (at {path}), more than "
                "a copy in host memory can take"
            )


# A class's attributes that are its machinery, not state: never compared or put back.
_CLASS_FIXED = frozenset(("__dict__", "__weakref__"))


def _binding_scope(namespace: dict, name: str) -> tuple[dict, str] | None:
    """Where a name of ``names_used`` is bound: ``x`` in the namespace, ``torch.backends.
    cudnn.benchmark`` in that module's globals; None where a dotted name's owner is not a
    module (an object's attribute is put back with the object)."""
    if "." not in name:
        return namespace, name
    first, *middle, last = name.split(".")
    owner = namespace.get(first)
    for part in middle:
        owner = getattr(owner, part, None)
    if not isinstance(owner, types.ModuleType):
        return None
    return vars(owner), last


def _unreadable_queue(obj: Any) -> str:
    """``queue.SimpleQueue`` where ``obj`` is a queue whose items cannot be read (without
    taking them), else ""."""
    if isinstance(obj, queue.SimpleQueue):
        return "queue.SimpleQueue"
    queues = sys.modules.get("multiprocessing.queues")
    if queues is not None and isinstance(obj, (queues.Queue, queues.SimpleQueue)):
        return f"multiprocessing {type(obj).__name__} (its items are in a pipe)"
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None and isinstance(obj, asyncio.Queue):
        return "asyncio.Queue (its waiters belong to an event loop)"
    return ""


@functools.cache
def _library_folders() -> tuple[str, ...]:
    """Where installed packages and the standard library live: their modules are not the
    user's state."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    with contextlib.suppress(Exception):
        folders.update(site.getsitepackages())
    with contextlib.suppress(Exception):
        folders.add(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(f) for f in folders if f}))


def _is_user_module(module: types.ModuleType) -> bool:
    """A module of the user's own: from a file outside the Python installation and its
    packages (a ``helpers.py`` beside the notebook), not this tool or the kernel."""
    name = getattr(module, "__name__", None)
    file = getattr(module, "__file__", None)
    return isinstance(name, str) and isinstance(file, str) and _is_user_file(name, file)


@functools.cache
def _is_user_file(name: str, file: str) -> bool:
    if _is_infrastructure_name(name) or name.split(".")[0] in sys.stdlib_module_names:
        return False
    path = os.path.realpath(file)
    return not any(path == f or path.startswith(f + os.sep) for f in _library_folders())


def _is_infrastructure_name(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in _INFRASTRUCTURE)


@functools.cache
def _is_infrastructure(cls: type) -> bool:
    return _is_infrastructure_name(getattr(cls, "__module__", None) or "")


def _is_module_like(torch: Any, obj: Any) -> bool:
    return torch is not None and isinstance(obj, torch.nn.Module)


def _pandas_bytes(obj: Any) -> int:
    try:
        usage = obj.memory_usage(index=True, deep=False)
        return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
    except Exception:  # a frame that cannot say: counted as nothing, still copied
        return 0


def _module_path(path: str, name: str, value: Any) -> str:
    """``model.0.weight`` rather than ``model._modules['0']._parameters['weight']``."""
    if name in ("_parameters", "_buffers", "_modules"):
        return path  # the dict itself: its items are named below
    return f"{path}.{name}"


def _key_text(key: Any) -> str:
    text = repr(key) if isinstance(key, (str, int, float, bool)) else type(key).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _kind_of_tensor(tensor: Any) -> str:
    if type(tensor).__name__ not in ("Tensor", "Parameter"):
        return f"a {type(tensor).__name__}"
    if getattr(tensor, "is_nested", False):
        return "a nested tensor"
    return f"a {str(tensor.layout).removeprefix('torch.')} tensor on {tensor.device.type}"


def _instance_dict(obj: Any) -> dict | None:
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return attributes if type(attributes) is dict else None


@functools.cache
def _slot_names(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = vars(klass).get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for name in slots:
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return tuple(names)


def survey(namespace: dict, names: Iterable[str], *, max_bytes: int | None = None) -> Survey:
    """What ``take(namespace, names)`` would copy, without copying: counts, bytes, and what
    cannot be undone."""
    walker = _Walker(namespace, tuple(names), max_bytes or default_max_bytes())
    walker.walk()
    return walker.survey


# --- the snapshot -----------------------------------------------------------------------------------


@dataclass
class _TensorCopy:
    tensor: Any
    root: str
    path: str
    alias: Any  # the tensor's data as it was (shape, strides, offset, storage, dtype)
    values: Any  # a copy of its values, in host memory
    requires_grad: bool
    grad: Any


class Snapshot:
    """Copies of the state reachable from some names, to put back in place (see the module
    docstring). ``take`` makes one; ``reset()`` puts the objects and bindings back (between
    runs: the random state goes on), ``restore()`` puts everything back, says what had
    changed, and checks that what it put back is what the copy holds."""

    def __init__(self, namespace: dict, survey: Survey) -> None:
        self.namespace = namespace
        self.survey = survey
        self.bindings: dict[str, Any] = {}
        self._module_bindings: list[tuple[dict, str, str, Any]] = []
        self._tensors: list[_TensorCopy] = []
        self._arrays: list[tuple[Any, str, str, Any]] = []
        self._containers: list[tuple[Any, str, str, str, Any]] = []
        self._generators: list[tuple[Any, str, str, Any]] = []
        self._random_state: dict[str, Any] = {}
        self._environ: dict[str, str] | None = None
        self._threads: set[int] = {id(t) for t in threading.enumerate()}

    @property
    def complete(self) -> bool:
        return self.survey.complete

    @classmethod
    def take(
        cls, namespace: dict, names: Iterable[str], *, max_bytes: int | None = None
    ) -> Snapshot:
        """Copy the state reachable from ``names`` of ``namespace``. Check ``complete``: past
        ``max_bytes`` of tensors nothing is copied, and ``survey.limit`` says why."""
        walker = _Walker(namespace, tuple(names), max_bytes or default_max_bytes())
        walker.walk()
        snapshot = cls(namespace, walker.survey)
        # The walk adds the globals of the notebook's hooks and callbacks to the names.
        snapshot.bindings = {
            name: namespace.get(name, UNSET) for name in walker.names if "." not in name
        }
        seen_bindings: set[tuple[int, str]] = set()
        for scope, key, name in walker.module_bindings:
            if (id(scope), key) not in seen_bindings:
                seen_bindings.add((id(scope), key))
                snapshot._module_bindings.append((scope, key, name, scope.get(key, UNSET)))
        if not walker.survey.complete:
            return snapshot  # bindings only: the caller says why and decides
        snapshot._copy(walker)
        return snapshot

    def _copy(self, walker: _Walker) -> None:
        torch, numpy = walker._torch, walker._numpy
        for obj, root, path, kind in walker.containers:
            self._containers.append((obj, root, path, kind, _shallow_state(obj, kind)))
        if torch is not None:
            with torch.no_grad():
                for tensor, root, path in walker.tensors:
                    grad = None
                    if tensor.is_leaf and tensor.requires_grad:
                        grad = tensor.grad
                    self._tensors.append(
                        _TensorCopy(
                            tensor,
                            root,
                            path,
                            tensor.detach(),
                            tensor.detach().to("cpu", copy=True),
                            tensor.requires_grad,
                            grad,
                        )
                    )
        if numpy is not None:
            for array_, root, path in walker.arrays:
                self._arrays.append((array_, root, path, array_.copy()))
        for generator, root, path in walker.generators:
            with contextlib.suppress(Exception):  # a generator whose state cannot be read
                self._generators.append((generator, root, path, _generator_state(generator)))
        self._random_state = _global_random_state()
        self._environ = dict(os.environ)

    # --- putting it back ---

    def reset(self) -> Restored:
        """Put the objects and bindings back (not the global random state)."""
        restored = Restored()
        torch = sys.modules.get("torch")
        for obj, root, path, kind, state in self._containers:
            try:
                if _differs(obj, kind, state):
                    size = _length(obj, kind)
                    _put_back(obj, kind, state)
                    restored._add(root, _container_change(obj, kind, size, state))
            except Exception as error:  # an object that refuses: say so, go on
                restored.failed.append(f"{path}: {type(error).__name__}: {error}")
        if torch is not None and self._tensors:
            self._reset_tensors(torch, restored)
        for array_, root, path, values in self._arrays:
            try:
                if array_.shape != values.shape or array_.dtype != values.dtype:
                    raise ValueError(
                        f"the array is now {array_.dtype} of shape {array_.shape}, was "
                        f"{values.dtype} of shape {values.shape}: a numpy array cannot take "
                        "another shape in place"
                    )
                if not _arrays_equal(array_, values):
                    array_[...] = values
                    restored._add(root, "array")
            except Exception as error:
                restored.failed.append(f"{path}: {type(error).__name__}: {error}")
        for generator, root, path, state in self._generators:
            try:
                if _set_generator_state(generator, state):
                    restored._add(root, "random generator")
            except Exception as error:
                restored.failed.append(f"{path}: {type(error).__name__}: {error}")
        ns = self.namespace
        for name, obj in self.bindings.items():
            if obj is UNSET:
                if name in ns:
                    del ns[name]
                    restored._add(name, "name bound by the runs, removed")
            elif ns.get(name, UNSET) is not obj:
                ns[name] = obj
                restored._add(name, "name rebound")
        for scope, key, name, obj in self._module_bindings:
            try:
                if obj is UNSET:
                    if key in scope:
                        del scope[key]
                        restored._add(name, "name bound by the runs, removed")
                elif scope.get(key, UNSET) is not obj:
                    scope[key] = obj
                    restored._add(name, "name rebound")
            except Exception as error:
                restored.failed.append(f"{name}: {type(error).__name__}: {error}")
        if self._environ is not None:
            try:
                changed = _put_environ_back(self._environ)
                if changed:
                    restored._add("os.environ", f"{changed} variable{'s' if changed > 1 else ''}")
            except Exception as error:
                restored.failed.append(f"os.environ: {type(error).__name__}: {error}")
        return restored

    def _reset_tensors(self, torch: Any, restored: Restored) -> None:
        with torch.no_grad():
            for saved in self._tensors:
                tensor = saved.tensor
                try:
                    changed = False
                    if not _same_layout(tensor, saved.alias):
                        tensor.data = saved.alias
                        changed = True
                    if tensor.is_leaf and tensor.requires_grad != saved.requires_grad:
                        tensor.requires_grad_(saved.requires_grad)
                        changed = True
                    if tensor.is_leaf and saved.requires_grad and tensor.grad is not saved.grad:
                        tensor.grad = saved.grad
                        changed = True
                    values = saved.values.to(tensor.device, non_blocking=False)
                    if not _tensors_equal(saved.alias, values):
                        with _inference_mode_for(torch, tensor):
                            saved.alias.copy_(values)
                        changed = True
                    if changed:
                        restored._add(saved.root, "tensor")
                except Exception as error:
                    restored.failed.append(f"{saved.path}: {type(error).__name__}: {error}")

    def restore(self) -> Restored:
        """Put everything back, the global random state too; what had changed, by name. Then
        every copy is compared with what is there: what differs (changed again while it was
        put back: a finalizer of an object the restore let go, a thread) is put back once
        more, and what still differs is in ``differ``; threads the runs started that still
        run are in ``threads``."""
        restored = self.reset()
        try:
            restored.random_state = _set_global_random_state(self._random_state)
        except Exception as error:
            restored.failed.append(f"random state: {type(error).__name__}: {error}")
        if self.complete and self.differences():
            again = self.reset()
            restored.failed += [f for f in again.failed if f not in restored.failed]
        restored.differ = self.differences() if self.complete else []
        restored.threads = self.new_threads()
        return restored

    def differences(self) -> list[str]:
        """What differs now from the copy, by name and kind (``seen (list)``): empty right
        after a restore that holds."""
        found: list[str] = []

        def add(root: str, what: str) -> None:
            text = f"{root} ({what})"
            if text not in found:
                found.append(text)

        for obj, root, _, kind, state in self._containers:
            with contextlib.suppress(Exception):
                if _differs(obj, kind, state):
                    add(root, _container_change(obj, kind, None, state))
        for saved in self._tensors:
            with contextlib.suppress(Exception):
                tensor = saved.tensor
                if (
                    not _same_layout(tensor, saved.alias)
                    or (tensor.is_leaf and tensor.requires_grad != saved.requires_grad)
                    or not _tensors_equal(saved.alias, saved.values.to(tensor.device))
                ):
                    add(saved.root, "tensor")
        for array_, root, _, values in self._arrays:
            with contextlib.suppress(Exception):
                if array_.shape != values.shape or not _arrays_equal(array_, values):
                    add(root, "array")
        for generator, root, _, state in self._generators:
            with contextlib.suppress(Exception):
                if not _states_equal(_generator_state(generator), state):
                    add(root, "random generator")
        ns = self.namespace
        for name, obj in self.bindings.items():
            if ns.get(name, UNSET) is not obj:
                add(name, "name")
        for scope, key, name, obj in self._module_bindings:
            if scope.get(key, UNSET) is not obj:
                add(name, "name")
        if self._environ is not None and dict(os.environ) != self._environ:
            add("os.environ", "variables")
        return found

    def new_threads(self) -> list[str]:
        """The threads started since the copy, still running, that run the notebook's code or
        the user's modules' (``thread worker (fill())``, ``12 threads ...``): they can change
        state after a restore."""
        notebook = self.namespace.get("__name__", "__main__")
        found = []
        for thread in threading.enumerate():
            if id(thread) in self._threads or not thread.is_alive():
                continue
            target = getattr(thread, "_target", None) or type(thread).run
            module = getattr(target, "__module__", None) or ""
            user = module == notebook or (
                module in sys.modules and _is_user_module(sys.modules[module])
            )
            if user:
                found.append(f"{thread.name} ({getattr(target, '__qualname__', '?')}())")
        counts = collections.Counter(found)
        return [
            f"{n:,} threads {what}" if n > 1 else f"thread {what}" for what, n in counts.items()
        ]

    def release(self) -> None:
        """Drop the copies (their host memory)."""
        self._tensors.clear()
        self._arrays.clear()
        self._containers.clear()
        self._generators.clear()


def take(namespace: dict, names: Iterable[str], *, max_bytes: int | None = None) -> Snapshot:
    """``Snapshot.take``."""
    return Snapshot.take(namespace, names, max_bytes=max_bytes)


# --- helpers --------------------------------------------------------------------------------------


def _dict_items(obj: dict) -> list[tuple[Any, Any]]:
    """A dict's items as stored, in its order (an ``OrderedDict``'s own), past any override of
    ``items`` by a subclass."""
    if isinstance(obj, collections.OrderedDict):
        return list(collections.OrderedDict.items(obj))
    return list(dict.items(obj))


def _items(obj: Any, kind: str) -> list[Any]:
    """A container's items as stored (the base type's iteration, not a subclass's)."""
    if kind == "list":
        return list.copy(obj)
    if kind == "deque":
        return list(collections.deque.__iter__(obj))
    if kind == "set":
        return list(set.__iter__(obj)) if isinstance(obj, set) else list(obj)
    raise ValueError(kind)


def _shallow_state(obj: Any, kind: str) -> Any:
    """What putting ``obj`` back takes: its items (not copies of them: those are walked)."""
    if kind in ("list", "set", "deque"):
        return _items(obj, kind)
    if kind == "dict":
        factory = obj.default_factory if isinstance(obj, collections.defaultdict) else None
        return _dict_items(obj), factory
    if kind == "bytearray":
        return bytes(obj)
    if kind == "array.array":
        return array.array.tobytes(obj)
    if kind == "queue":
        with obj.mutex:
            return list(obj.queue), obj.unfinished_tasks
    if kind == "pandas":
        return obj.copy(deep=True)
    if kind == "class":
        return {k: v for k, v in vars(obj).items() if k not in _CLASS_FIXED}
    if kind == "__dict__":
        return dict(object.__getattribute__(obj, "__dict__"))
    if kind == "__slots__":
        state = {}
        for name in _slot_names(type(obj)):
            with contextlib.suppress(AttributeError):
                state[name] = object.__getattribute__(obj, name)
        return state
    raise ValueError(kind)


def _same_items(current: list, saved: list) -> bool:
    return len(current) == len(saved) and all(a is b for a, b in zip(current, saved, strict=True))


def _same_pairs(current: list, saved: list) -> bool:
    return len(current) == len(saved) and all(
        a[0] is b[0] and a[1] is b[1] for a, b in zip(current, saved, strict=True)
    )


def _same_mapping(current: dict, saved: dict) -> bool:
    return current.keys() == saved.keys() and all(current[k] is v for k, v in saved.items())


def _differs(obj: Any, kind: str, state: Any) -> bool:
    """Whether a container holds other than its copy: the same objects, in the same order
    where its type keeps one."""
    if kind in ("list", "deque"):
        return not _same_items(_items(obj, kind), state)
    if kind == "set":
        return len(obj) != len(state) or {id(x) for x in _items(obj, kind)} != {
            id(x) for x in state
        }
    if kind == "dict":
        items, factory = state
        if isinstance(obj, collections.defaultdict) and obj.default_factory is not factory:
            return True
        return not _same_pairs(_dict_items(obj), items)
    if kind == "bytearray":
        return bytes(obj) != state
    if kind == "array.array":
        return array.array.tobytes(obj) != state
    if kind == "queue":
        items, unfinished = state
        with obj.mutex:
            return obj.unfinished_tasks != unfinished or not _same_items(list(obj.queue), items)
    if kind == "pandas":
        return not _pandas_equal(obj, state)
    if kind == "class":
        current = {k: v for k, v in vars(obj).items() if k not in _CLASS_FIXED}
        return not _same_mapping(current, state)
    if kind == "__dict__":
        return not _same_mapping(object.__getattribute__(obj, "__dict__"), state)
    if kind == "__slots__":
        for name in _slot_names(type(obj)):
            try:
                current = object.__getattribute__(obj, name)
            except AttributeError:
                current = UNSET
            if current is not state.get(name, UNSET):
                return True
        return False
    raise ValueError(kind)


def _put_back(obj: Any, kind: str, state: Any) -> None:
    """Put one container's items back, by its own type's semantics, through the base type's
    methods: ``Counter.update`` would count the items rather than set them, a subclass's
    ``__setitem__`` could transform them."""
    if kind == "list":
        list.__setitem__(obj, slice(None), state)
    elif kind == "dict":
        items, factory = state
        if isinstance(obj, collections.OrderedDict):
            collections.OrderedDict.clear(obj)
            for key, value in items:
                collections.OrderedDict.__setitem__(obj, key, value)
        else:
            dict.clear(obj)
            dict.update(obj, items)
        if isinstance(obj, collections.defaultdict):
            obj.default_factory = factory
    elif kind == "set":
        set.clear(obj)
        set.update(obj, state)
    elif kind == "deque":
        collections.deque.clear(obj)
        collections.deque.extend(obj, state)
    elif kind == "bytearray":
        bytearray.__setitem__(obj, slice(None), state)
    elif kind == "array.array":
        values = array.array(obj.typecode)
        values.frombytes(state)
        array.array.__setitem__(obj, slice(None), values)
    elif kind == "queue":
        items, unfinished = state
        with obj.mutex:  # its conditions share the lock: waiters see the items at once
            if isinstance(obj.queue, list):  # LifoQueue, PriorityQueue (a heap, as it was)
                obj.queue[:] = items
            else:
                obj.queue.clear()
                obj.queue.extend(items)
            obj.unfinished_tasks = unfinished
            obj.not_empty.notify_all()
            obj.not_full.notify_all()
            if unfinished == 0:
                obj.all_tasks_done.notify_all()
    elif kind == "pandas":
        _put_pandas_back(obj, state)
    elif kind == "class":
        current = {k: v for k, v in vars(obj).items() if k not in _CLASS_FIXED}
        for key in current.keys() - state.keys():
            type.__delattr__(obj, key)
        for key, value in state.items():
            if current.get(key, UNSET) is not value:
                type.__setattr__(obj, key, value)
    elif kind == "__dict__":
        attributes = object.__getattribute__(obj, "__dict__")
        attributes.clear()
        attributes.update(state)
    elif kind == "__slots__":
        for name in _slot_names(type(obj)):
            try:
                current = object.__getattribute__(obj, name)
            except AttributeError:
                current = UNSET
            if name in state and current is not state[name]:
                object.__setattr__(obj, name, state[name])
            elif name not in state and current is not UNSET:
                object.__delattr__(obj, name)
    else:
        raise ValueError(kind)


def _pandas_equal(obj: Any, saved: Any) -> bool:
    """The same values, dtypes, labels (of the same dtype), name and ``attrs``."""
    if type(obj) is not type(saved) or obj.shape != saved.shape:
        return False
    axes = [(obj.index, saved.index)]
    if hasattr(obj, "columns"):
        axes.append((obj.columns, saved.columns))
        if not obj.dtypes.equals(saved.dtypes):
            return False
    elif obj.dtype != saved.dtype or obj.name != saved.name:
        return False
    for mine, theirs in axes:
        if mine.dtype != theirs.dtype or mine.names != theirs.names or not mine.equals(theirs):
            return False
    try:
        same_attrs = bool(obj.attrs == saved.attrs)
    except Exception:  # attrs that cannot be compared (arrays): take them as changed
        same_attrs = False
    return same_attrs and bool(obj.equals(saved))


def _put_pandas_back(obj: Any, saved: Any) -> None:
    """A fresh deep copy of the saved frame becomes ``obj``'s data (what pandas' own
    ``inplace=True`` does), so that later runs change the copy, never the saved one."""
    import copy

    fresh = saved.copy(deep=True)
    obj._mgr = fresh._mgr
    obj.attrs = copy.deepcopy(saved.attrs)
    obj.flags.allows_duplicate_labels = saved.flags.allows_duplicate_labels
    if hasattr(saved, "name") and not hasattr(saved, "columns"):
        obj.name = saved.name


def _put_environ_back(saved: dict[str, str]) -> int:
    """``os.environ`` as saved, through ``os.environ`` (so that the process's own environment,
    which child processes get, follows); how many variables were changed."""
    changed = 0
    for key in [k for k in os.environ if k not in saved]:
        del os.environ[key]
        changed += 1
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
            changed += 1
    return changed


def _length(obj: Any, kind: str) -> int | None:
    if kind in ("list", "dict", "set", "deque", "bytearray", "array.array", "pandas"):
        return len(obj)
    if kind == "queue":
        return obj.qsize()
    return None


def _saved_length(obj: Any, kind: str, state: Any) -> int | None:
    if kind == "array.array":
        return len(state) // obj.itemsize
    if kind in ("list", "set", "deque", "bytearray", "pandas"):
        return len(state)
    if kind in ("dict", "queue"):
        return len(state[0])
    return None


def _container_change(obj: Any, kind: str, size: int | None, state: Any) -> str:
    """``list: 4,203 -> 1 items`` where the length changed, else the kind (its type's name:
    ``Counter``, ``DataFrame``)."""
    if kind in ("__dict__", "__slots__"):
        return "object"
    if kind == "class":
        return "class attributes"
    label = kind if kind in ("array.array", "queue") else type(obj).__name__
    saved = _saved_length(obj, kind, state)
    if size is not None and saved is not None and size != saved:
        return f"{label}: {size:,} -> {saved:,} items"
    return label


def _same_layout(tensor: Any, alias: Any) -> bool:
    return (
        tensor.dtype == alias.dtype
        and tensor.device == alias.device
        and tensor.shape == alias.shape
        and tensor.stride() == alias.stride()
        and tensor.storage_offset() == alias.storage_offset()
        and tensor.untyped_storage().data_ptr() == alias.untyped_storage().data_ptr()
    )


def _tensors_equal(a: Any, b: Any) -> bool:
    """Bit for bit (NaN equals NaN, -0.0 differs from 0.0): the values as they were. Compared
    as integers of the element's width (a byte-wise compare is 2-3 times slower)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    try:
        return torch.equal(_as_bits(torch, a), _as_bits(torch, b))
    except (RuntimeError, TypeError):  # a dtype that cannot be viewed as bits (quantized)
        return bool(torch.equal(a, b))


def _as_bits(torch: Any, tensor: Any) -> Any:
    flat = tensor.reshape(-1).contiguous()
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32}.get(flat.element_size(), torch.int64)
    return flat.view(width)


def _arrays_equal(a: Any, b: Any) -> bool:
    import numpy

    if a.dtype.hasobject:
        return all(x is y for x, y in zip(a.flat, b.flat, strict=True))
    return (
        bool(numpy.array_equal(a.view(numpy.uint8), b.view(numpy.uint8)))
        if (a.flags.c_contiguous and b.flags.c_contiguous)
        else bool(numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    )


@contextlib.contextmanager
def _inference_mode_for(torch: Any, tensor: Any) -> Iterator[None]:
    """An inference tensor can only be written in inference mode."""
    if tensor.is_inference():
        with torch.inference_mode():
            yield
    else:
        yield


def _generator_state(generator: Any) -> Any:
    if isinstance(generator, random.Random):
        return generator.getstate()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(generator, torch.Generator):
        return generator.get_state()
    numpy = sys.modules["numpy"]
    if isinstance(generator, numpy.random.Generator):
        return generator.bit_generator.state
    return generator.get_state()  # numpy RandomState


def _set_generator_state(generator: Any, state: Any) -> bool:
    current = _generator_state(generator)
    if _states_equal(current, state):
        return False
    if isinstance(generator, random.Random):
        generator.setstate(state)
    elif type(generator).__name__ == "Generator" and hasattr(generator, "bit_generator"):
        generator.bit_generator.state = state
    else:
        generator.set_state(state)
    return True


def _states_equal(a: Any, b: Any) -> bool:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    numpy = sys.modules.get("numpy")
    if isinstance(a, (tuple, list)):
        return (
            isinstance(b, (tuple, list))
            and len(a) == len(b)
            and all(_states_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_states_equal(a[k], b[k]) for k in a)
        )
    if numpy is not None and isinstance(a, numpy.ndarray):
        return isinstance(b, numpy.ndarray) and bool(numpy.array_equal(a, b))
    return bool(a == b)


def _global_random_state() -> dict[str, Any]:
    state: dict[str, Any] = {"random": random.getstate()}
    torch = sys.modules.get("torch")
    if torch is not None:
        state["torch"] = torch.get_rng_state()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state["cuda"] = torch.cuda.get_rng_state_all()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state["numpy"] = numpy.random.get_state()
    return state


def _set_global_random_state(state: dict[str, Any]) -> bool:
    if not state:
        return False
    changed = False
    if not _states_equal(random.getstate(), state["random"]):
        random.setstate(state["random"])
        changed = True
    torch = sys.modules.get("torch")
    if torch is not None and "torch" in state:
        if not torch.equal(torch.get_rng_state(), state["torch"]):
            torch.set_rng_state(state["torch"])
            changed = True
        if "cuda" in state:
            current = torch.cuda.get_rng_state_all()
            if not _states_equal(current, state["cuda"]):
                torch.cuda.set_rng_state_all(state["cuda"])
                changed = True
    numpy = sys.modules.get("numpy")
    if (
        numpy is not None
        and "numpy" in state
        and not _states_equal(numpy.random.get_state(), state["numpy"])
    ):
        numpy.random.set_state(state["numpy"])
        changed = True
    return changed


__all__ = [
    "Restored",
    "Snapshot",
    "StateNotCopied",
    "Survey",
    "available_host_memory",
    "names_used",
    "notebook_functions",
    "survey",
    "take",
]
