"""The variants of an A/B: eager, ``torch.compile`` (with a mode), a CUDA graph, a fix applied
without editing the code (``FIXES``), or a callable.

The fixes change only the variant's own calls: ``tf32`` allows TF32 tensor cores for float32
matmuls and convolutions (``torch.backends`` flags); ``bf16`` runs each call under
``torch.autocast`` to bfloat16; ``channels_last`` converts the modules the target uses (its
arguments, the function itself, and the globals and closure cells its code reads) to
channels_last for the variant's life, and runs each call with its 4-D tensor inputs (arguments,
the globals and closure cells it reads) as channels_last copies; ``cudnn_benchmark`` lets cuDNN
time its algorithms (``torch.backends.cudnn.benchmark``) for the variant's calls; ``pinned`` runs
each call with the host tensors it reads (arguments, globals, closure cells) as pinned copies,
and their copies to the GPU non-blocking.

What a user sets once (the backend flags, the converted tensors in their globals) is set once
around a block of timed calls (``Variant.held``), not in each call: setting TF32's flags costs
microseconds a call (8 us on a 2-core CPU dev machine, torch 2.13), which a launch-bound step
would count as the fix's. The user's flags are put back after each block, and on an error.
What a user writes around each call (autocast, non-blocking copies) stays around each call.

Each variant turns a ``Target`` (a function, how to get the arguments of one call, and what to do
with its result) into a zero-argument callable that runs it once. Making that callable is the
expensive, first-time part (compiling, capturing), and is timed apart from the steady state.
"""

from __future__ import annotations

import contextlib
import linecache
import logging
import os
import re
import sysconfig
import textwrap
import time
import traceback
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# Fixes a variant applies without editing the code (the module docstring says how each acts).
FIXES = ("tf32", "bf16", "channels_last", "cudnn_benchmark", "pinned")
GRAPH_WARMUP = 3  # side-stream runs before capture (the count in PyTorch's CUDA Graphs docs)


class VariantUnavailable(RuntimeError):
    """The variant cannot run here (CUDA Graphs without CUDA)."""


# --- what to run -----------------------------------------------------------------------------------


@dataclass
class Target:
    """What an A/B runs: ``fn(*args, **kwargs)`` with the arguments from ``arguments()``, its raw
    result passed through ``finish`` (which returns the output to compare).

    ``home_files`` are the source files of the user's code, to point at the line where a variant
    failed; ``source`` is its text, for the stateful-code heuristics.
    """

    fn: Callable[..., Any]
    arguments: Callable[[], tuple[tuple, dict]]
    finish: Callable[[Any], Any] = field(default=lambda raw: raw)
    name: str = ""
    home_files: frozenset[str] = field(default_factory=frozenset)
    source: str | None = None

    @classmethod
    def of(
        cls, fn: Callable[..., Any], args: tuple = (), kwargs: Mapping[str, Any] | None = None
    ) -> Target:
        """A target for a plain function or module called with fixed arguments."""
        kwargs = dict(kwargs or {})
        code = _code_of(fn)
        source = None
        if code is not None:
            try:
                import inspect

                source = textwrap.dedent(inspect.getsource(code))
            except (OSError, TypeError):
                source = None
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        return cls(
            fn=fn,
            arguments=lambda: (args, kwargs),
            name=name,
            home_files=frozenset({code.co_filename}) if code is not None else frozenset(),
            source=source,
        )

    def call(self, fn: Callable[..., Any] | None = None) -> Any:
        """One run of ``fn`` (default: the target's own function) on this target's arguments."""
        args, kwargs = self.arguments()
        return self.finish((fn or self.fn)(*args, **kwargs))


def _code_of(fn: Any) -> types.CodeType | None:
    for candidate in (fn, getattr(fn, "forward", None), type(fn).__call__):
        code = getattr(candidate, "__code__", None)
        if isinstance(code, types.CodeType):
            return code
    return None


# --- which variants ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class VariantSpec:
    """A variant by name: ``kind`` is "eager", "compile", "graph", "fix" (``mode``: one of
    ``FIXES``) or "custom" (``fn`` given)."""

    name: str
    kind: str
    mode: str | None = None  # torch.compile mode; None is the default mode
    fn: Callable[..., Any] | None = None


def parse_variants(variants: Any) -> list[VariantSpec]:
    """The variants to compare, eager (the baseline) first.

    Accepts a comma-separated string (``"compile,compile:max-autotune,graph"``) or an iterable
    of names, ``(name, callable)`` pairs and ``VariantSpec``; or a mapping from name to a name
    or callable. Names: ``eager``, ``compile`` (default mode), ``compile:MODE`` with MODE one of
    ``COMPILE_MODES``, ``graph``, and the fixes ``tf32``, ``bf16``, ``channels_last``,
    ``cudnn_benchmark``, ``pinned``. A callable is called like the target (same arguments) and compared
    like any variant.
    """
    if isinstance(variants, str):
        items: Iterable[Any] = [v for v in (part.strip() for part in variants.split(",")) if v]
    elif isinstance(variants, Mapping):
        items = [(name, value) for name, value in variants.items()]
    else:
        items = list(variants)
    specs = [VariantSpec("eager", "eager")]
    for item in items:
        spec = _spec(item)
        if spec.kind == "eager":
            continue
        if any(s.name == spec.name for s in specs):
            raise ValueError(f"variant {spec.name!r} is listed twice.")
        specs.append(spec)
    return specs


def _spec(item: Any) -> VariantSpec:
    if isinstance(item, VariantSpec):
        return item
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        name, value = item
        if callable(value):
            return VariantSpec(name, "custom", fn=value)
        spec = _spec(value)
        return VariantSpec(name, spec.kind, spec.mode, spec.fn)
    if not isinstance(item, str):
        raise ValueError(f"a variant is a name or a (name, callable) pair, not {item!r}.")
    name = item.strip()
    kind, _, mode = name.partition(":")
    kind = kind.strip().lower()
    mode = mode.strip().lower() or None
    if kind == "eager" and mode is None:
        return VariantSpec("eager", "eager")
    if kind == "graph" and mode is None:
        return VariantSpec("graph", "graph")
    if kind in FIXES and mode is None:
        return VariantSpec(kind, "fix", kind)
    if kind == "compile":
        if mode in (None, "default"):
            return VariantSpec("compile", "compile")
        if mode in COMPILE_MODES:
            return VariantSpec(f"compile:{mode}", "compile", mode)
        raise ValueError(
            f"unknown torch.compile mode {mode!r}; one of: {', '.join(COMPILE_MODES)}."
        )
    raise ValueError(
        f"unknown variant {name!r}: use compile, compile:MODE ({', '.join(COMPILE_MODES[1:])}), "
        f"graph, or a fix: {', '.join(FIXES)}."
    )


# --- running a variant ---------------------------------------------------------------------------------


class Variant:
    """One variant, made for one target. ``prepare`` makes it runnable (and may run the target:
    ``runs`` counts every run); ``call`` runs it once; ``close`` frees what it holds."""

    prepare_runs = 0  # runs of the target that ``prepare`` makes (for estimates before a run)
    # (rtol, atol) its outputs are checked with against eager's, where the variant lowers the
    # precision on purpose (a fix to TF32 or bf16); None: the outputs' own dtype's.
    tolerance: tuple[float, float] | None = None

    def __init__(self, spec: VariantSpec, target: Target, gpu: bool) -> None:
        self.spec = spec
        self.target = target
        self.gpu = gpu
        self.runs = 0
        self.prepare_s: float | None = None  # compile or capture time (first calls), when any
        self.notes: list[str] = []
        self._fn: Callable[..., Any] = target.fn

    @property
    def name(self) -> str:
        return self.spec.name

    def prepare(self, timer: Any) -> None:
        """Make the variant runnable (compile, capture); plain variants need nothing."""

    def call(self) -> Any:
        return self.target.call(self._fn)

    def held(self) -> contextlib.AbstractContextManager:
        """What the variant sets once around a block of back-to-back calls (entered outside
        the timed part): plain variants set nothing."""
        return contextlib.nullcontext()

    def close(self) -> None:
        self._fn = self.target.fn


class Eager(Variant):
    pass


class Custom(Variant):
    def __init__(self, spec: VariantSpec, target: Target, gpu: bool) -> None:
        super().__init__(spec, target, gpu)
        assert spec.fn is not None
        self._fn = spec.fn


class Compiled(Variant):
    """``torch.compile`` of a fresh copy of the target function: the first call compiles (its
    time is ``prepare_s``), later calls may recompile (counted by ``DynamoWatch``)."""

    prepare_runs = 1
    _copy: Callable[..., Any] | None = None
    _names_before: frozenset[str] = frozenset()

    def prepare(self, timer: Any) -> None:
        import torch

        self._copy = fresh_function(self.target.fn)
        self._names_before = frozenset(getattr(self._copy, "__globals__", {}))
        self._fn = torch.compile(self._copy, mode=self.spec.mode)
        self.runs += 1
        self.prepare_s = timer.once(self.call)[0]

    def close(self) -> None:
        super().close()
        copy, self._copy = self._copy, None
        if isinstance(copy, types.FunctionType):
            forget_dynamo_globals(copy.__code__, copy.__globals__, self._names_before)


class Graphed(Variant):
    """A CUDA graph of one call: warm-up on a side stream, capture, then each call replays.

    The graph replays the same kernels on the same memory: the inputs it read during capture are
    read again (their current contents), its outputs are overwritten by every replay.
    """

    prepare_runs = GRAPH_WARMUP + 1  # the side-stream warm-up, then the captured call

    def prepare(self, timer: Any) -> None:
        import torch

        if not torch.cuda.is_available():
            raise VariantUnavailable(
                "needs CUDA: a CUDA graph records GPU kernels, and torch.cuda.is_available() is False here."
            )
        if not self.gpu:
            raise VariantUnavailable(
                "needs CUDA timing: run the A/B without --cpu to try a CUDA graph."
            )
        fn, target = self.target.fn, self.target
        start = time.perf_counter()
        torch.cuda.synchronize()
        # Warm up on a side stream, as the CUDA Graphs docs do: lazy initialisation (cuBLAS
        # workspaces, autotuning, allocator growth) must happen before capture, not inside it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(GRAPH_WARMUP):
                self.runs += 1  # before the call: a run that fails ran too
                target.call()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        args, kwargs = target.arguments()
        self.runs += 1
        # A capture that fails leaves the random generator it recorded marked as capturing, and
        # every later random draw of the process then fails ("Offset increment outside graph
        # capture"): the graph records a private copy of the generator's state, and the user's
        # own state is put back whatever happens (the replays draw from the copy).
        generator = torch.cuda.default_generators[torch.cuda.current_device()]
        users_state = generator.graphsafe_get_state()
        generator.graphsafe_set_state(generator.clone_state())
        try:
            # thread_local: the A/B may run in a worker thread while the user runs other cells;
            # a CUDA call from their thread must not invalidate this capture (nor fail by it).
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                static = fn(*args, **kwargs)
        finally:
            generator.graphsafe_set_state(users_state)
        torch.cuda.synchronize()
        self.prepare_s = time.perf_counter() - start

        def replay(*_args: Any, **_kwargs: Any) -> Any:
            graph.replay()
            return static

        self._fn = replay  # holds the graph and its outputs until close() drops it


@dataclass
class Slot:
    """A place the target's code reads a value from by name: a global of its namespace
    (``holder`` the namespace, ``name`` the key) or a cell of its closure (``holder`` the cell,
    ``name`` None)."""

    holder: Any
    name: str | None = None

    def get(self) -> Any:
        return self.holder[self.name] if self.name is not None else self.holder.cell_contents

    def set(self, value: Any) -> None:
        if self.name is not None:
            self.holder[self.name] = value
        else:
            self.holder.cell_contents = value


def slots_read(fn: Any) -> list[Slot]:
    """The globals ``fn``'s code can load that its namespace holds, and its closure's cells
    (an empty cell is left out): where the values it reads without arguments live."""
    slots = []
    code = _code_of(fn)
    scope = getattr(fn, "__globals__", None)
    if code is not None and isinstance(scope, dict):
        slots += [Slot(scope, name) for name in sorted(_global_names(code)) if name in scope]
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):  # an empty cell
            cell.cell_contents  # noqa: B018  # raises for an empty cell
            slots.append(Slot(cell))
    return slots


class Fixed(Variant):
    """A fix applied without editing the code (``FIXES``), to this variant's calls only.

    ``channels_last`` and ``pinned`` replace tensors the target reads (its arguments, its
    globals, its closure's cells) by converted copies, made once in ``prepare``; the copies are
    put in for each call and the user's own tensors put back after it."""

    def __init__(self, spec: VariantSpec, target: Target, gpu: bool) -> None:
        super().__init__(spec, target, gpu)
        from .correctness import TOLERANCES

        lowered = {"tf32": "tf32", "bf16": "bfloat16"}.get(spec.mode or "")
        self.tolerance = TOLERANCES[lowered] if lowered else None
        self._modules: list[Any] = []
        self._swaps: list[tuple[Slot, Any]] = []  # (where the code reads it, its converted copy)
        self._copies: dict[int, Any] = {}  # id of a tensor argument: its converted copy
        self._holding = False  # inside ``held``: each call leaves the settings alone

    def prepare(self, timer: Any) -> None:
        import torch

        fix = self.spec.mode
        if fix == "pinned" and not any(self._wanted()):
            raise VariantUnavailable(
                "no host tensor to pin: the code reads none from its arguments, globals or "
                "closure, so its copies come from tensors it makes each call; make those in "
                "pinned memory where they are made (pin_memory=True, a DataLoader's "
                "pin_memory=True) and copy them with non_blocking=True."
            )
        cuda = self.gpu and torch.cuda.is_available()
        if fix in ("tf32", "cudnn_benchmark", "pinned") and not cuda:
            what = {
                "tf32": "TF32 tensor cores act only on GPU work",
                "cudnn_benchmark": "cuDNN's algorithm search acts only on GPU work",
                "pinned": "pinned host memory speeds up copies to a GPU only",
            }[fix]
            raise VariantUnavailable(f"needs CUDA: {what}, and this A/B runs on the CPU.")
        if fix in ("channels_last", "pinned"):
            self._convert_inputs()

    def _wants(self, value: Any) -> bool:
        """Whether the fix converts a value the target reads: a 4-D tensor to channels_last; a
        tensor in pageable host memory to pinned memory."""
        import torch

        if not isinstance(value, torch.Tensor):
            return False
        if self.spec.mode == "channels_last":
            return value.dim() == 4
        return self.spec.mode == "pinned" and value.device.type == "cpu" and not value.is_pinned()

    def _converted(self, value: Any) -> Any:
        import torch

        if self.spec.mode == "channels_last":
            return value.contiguous(memory_format=torch.channels_last)
        return value.pin_memory()

    def _wanted(self) -> tuple[list[Any], list[Slot]]:
        """The arguments and the slots (globals, closure cells) whose values the fix converts."""
        args, kwargs = self.target.arguments()
        values = [v for v in (*args, *kwargs.values()) if self._wants(v)]
        return values, [slot for slot in slots_read(self.target.fn) if self._wants(slot.get())]

    def _convert_inputs(self) -> None:
        import torch

        values, slots = self._wanted()
        for value in values:  # converted once, not in every timed call
            self._copies[id(value)] = self._converted(value)
        self._swaps = [(slot, self._converted(slot.get())) for slot in slots]
        if self.spec.mode != "channels_last":
            return
        args, kwargs = self.target.arguments()
        found = [
            self.target.fn,
            *args,
            *kwargs.values(),
            *(s.get() for s in slots_read(self.target.fn)),
        ]
        seen: set[int] = set()
        for value in found:
            if isinstance(value, torch.nn.Module) and id(value) not in seen:
                seen.add(id(value))
                value.to(memory_format=torch.channels_last)  # pyright: ignore[reportCallIssue]  # torch stubs: Module.to takes memory_format
                self._modules.append(value)

    @contextlib.contextmanager
    def held(self) -> Any:
        """The settings a user makes once (the backend flags, the converted tensors in the
        slots the code reads), set once for a block of calls and put back after it, also on
        an error; the calls inside leave them alone."""
        if self._holding:
            yield
            return
        with self._settings():
            self._holding = True
            try:
                yield
            finally:
                self._holding = False

    @contextlib.contextmanager
    def _settings(self) -> Any:
        import torch

        fix = self.spec.mode
        with contextlib.ExitStack() as stack:
            if fix == "tf32":
                stack.enter_context(tf32_allowed())
            elif fix == "cudnn_benchmark":
                before = torch.backends.cudnn.benchmark
                torch.backends.cudnn.benchmark = True
                stack.callback(setattr, torch.backends.cudnn, "benchmark", before)
            for slot, copy in self._swaps:
                stack.callback(slot.set, slot.get())
                slot.set(copy)
            yield

    @contextlib.contextmanager
    def _applied(self) -> Any:
        """What each call runs under: the settings (unless ``held`` set them for the block),
        and what a user writes around each call (autocast, non-blocking copies)."""
        import torch

        fix = self.spec.mode
        with contextlib.ExitStack() as stack:
            if not self._holding:
                stack.enter_context(self._settings())
            if fix == "bf16":
                device = "cuda" if self.gpu and torch.cuda.is_available() else "cpu"
                stack.enter_context(torch.autocast(device_type=device, dtype=torch.bfloat16))
            if fix == "pinned" and (self._swaps or self._copies):
                stack.enter_context(non_blocking_copies())
            yield

    def call(self) -> Any:
        with self._applied():
            if self.spec.mode not in ("channels_last", "pinned"):
                return self.target.call(self._fn)
            import torch

            args, kwargs = self.target.arguments()
            last = self.spec.mode == "channels_last"

            def converted(value: Any) -> Any:
                copy = self._copies.get(id(value))
                if copy is not None:
                    return copy
                if last and isinstance(value, torch.Tensor) and value.dim() == 4:
                    return value.to(memory_format=torch.channels_last)
                return value  # a new host tensor each call: pinning it per call costs more

            raw = self._fn(
                *(converted(a) for a in args), **{k: converted(v) for k, v in kwargs.items()}
            )
            return self.target.finish(raw)

    def close(self) -> None:
        super().close()
        import torch

        for module in self._modules:  # the user's modules back in their own layout
            module.to(memory_format=torch.contiguous_format)
        self._modules, self._swaps, self._copies = [], [], {}


# The float32 precisions TF32 is allowed by, in torch 2.9's API (``torch.backends``' objects,
# by path): matmuls, cuDNN's convolutions and RNNs.
_TF32_NODES = ("cuda.matmul", "cudnn.conv", "cudnn.rnn")


@contextlib.contextmanager
def tf32_allowed() -> Any:
    """TF32 tensor cores allowed for float32 matmuls and convolutions while inside; the user's
    flags exactly as they were after, also on an error. Torch 2.9+ keeps them as
    ``fp32_precision`` per backend (its legacy ``allow_tf32`` reads raise where conv and RNN
    differ, and writing them back turns an inherited "none" into "ieee"), so there those are
    saved and set; older torch has the legacy flags and the matmul precision."""
    import functools

    import torch

    backends = torch.backends
    nodes: list[Any] = [
        functools.reduce(getattr, path.split("."), backends) for path in _TF32_NODES
    ]
    if all(hasattr(node, "fp32_precision") for node in nodes):
        saved = [node.fp32_precision for node in nodes]
        try:
            for node in nodes:
                node.fp32_precision = "tf32"
            yield
        finally:
            for node, value in zip(nodes, saved, strict=True):
                node.fp32_precision = value
        return
    matmul, cudnn = backends.cuda.matmul, backends.cudnn
    before = (matmul.allow_tf32, cudnn.allow_tf32, torch.get_float32_matmul_precision())
    try:
        setattr(matmul, "allow_tf32", True)  # noqa: B010  # a module's flag, untyped
        setattr(cudnn, "allow_tf32", True)  # noqa: B010
        torch.set_float32_matmul_precision("high")
        yield
    finally:
        setattr(matmul, "allow_tf32", before[0])  # noqa: B010
        setattr(cudnn, "allow_tf32", before[1])  # noqa: B010
        torch.set_float32_matmul_precision(before[2])


def non_blocking_copies() -> contextlib.AbstractContextManager:
    """A ``TorchFunctionMode`` under which copies from pinned host memory to a device are
    non-blocking (``.to``, ``.cuda``, ``copy_`` without a ``non_blocking`` of their own): the
    host goes on while the copy runs, which stays ordered on its stream as before. A mode sees
    every torch call in it (about a microsecond each): entered only where there are pinned
    copies."""
    import torch
    from torch.overrides import TorchFunctionMode

    def pinned(value: Any) -> bool:
        return isinstance(value, torch.Tensor) and value.device.type == "cpu" and value.is_pinned()

    class NonBlocking(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            kwargs = dict(kwargs or {})
            if "non_blocking" not in kwargs:
                if func in (torch.Tensor.to, torch.Tensor.cuda):
                    # Only where no flag is passed by position (``to(device, dtype, False)``).
                    ours = bool(args) and pinned(args[0])
                    ours = ours and not any(isinstance(a, bool) for a in args[1:])
                elif func is torch.Tensor.copy_:
                    ours = len(args) == 2 and pinned(args[1])
                    ours = ours and isinstance(args[0], torch.Tensor) and args[0].is_cuda
                else:
                    ours = False
                if ours:
                    kwargs["non_blocking"] = True
            return func(*args, **kwargs)

    return NonBlocking()


VARIANT_KINDS: dict[str, type[Variant]] = {
    "eager": Eager,
    "compile": Compiled,
    "graph": Graphed,
    "fix": Fixed,
    "custom": Custom,
}


def make_variant(spec: VariantSpec, target: Target, gpu: bool) -> Variant:
    return VARIANT_KINDS[spec.kind](spec, target, gpu)


def fresh_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object with its own code object, calling or copying ``fn``.

    Dynamo keeps its compiled graphs (and counts recompilations against its limit) per code
    object: compiling a fresh copy gives each variant, and each A/B, its own first compile, so
    compile time and graph breaks are measured, not served from an earlier torch.compile.
    """
    if isinstance(fn, types.FunctionType):
        copy = types.FunctionType(
            fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
        )
        copy.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
        copy.__qualname__ = fn.__qualname__
        copy.__dict__.update(fn.__dict__)
        return copy

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    call.__code__ = call.__code__.replace()
    call.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)
    return call


def forget_dynamo_globals(code: types.CodeType, scope: dict, before: Iterable[str]) -> list[str]:
    """Remove from ``scope`` (the user's namespace, for a cell) the globals Dynamo installed
    while compiling ``code``, a variant's private copy, and the resume functions it made of it
    (``__compiled_fn_*``, ``__resume_at_*``, ``__builtins_dict___*``, ``__import_*``): the names
    new since ``before`` that no other compiled code uses. Returns the names removed.

    Dynamo keeps compiled code for the life of the process, and with it these names; code that
    only this variant ran is never run again. Their cleanup hooks, which delete them when that
    code dies, are given a scope of their own to delete them from (otherwise ``%reset``, which
    removed the names first, had them print KeyError tracebacks). Names the user's own compiled
    code uses stay. These are Dynamo's internals: where they differ, the names stay too.
    """
    try:
        from torch._dynamo.resume_execution import ContinueExecutionCache
        from torch._dynamo.utils import CleanupManager, orig_code_map

        ours = {id(code)}
        pending = [code]
        while pending:  # the resume functions of ``code``, and theirs
            for resume in (ContinueExecutionCache.cache.get(pending.pop()) or {}).values():
                if id(resume) not in ours:
                    ours.add(id(resume))
                    pending.append(resume)
        manager = CleanupManager.instance
        used_elsewhere: set[str] = set()
        hooks: list[Any] = []
        for idx, ref in list(manager.refs.items()):
            compiled = ref()
            if compiled is None:
                continue
            if id(orig_code_map.get(compiled)) in ours:
                hooks.extend(manager.values.get(idx) or ())
            else:
                used_elsewhere |= _global_names(compiled)
        before = set(before)
        gone = [n for n in list(scope) if n.startswith("__") and n not in before | used_elsewhere]
        for hook in hooks:
            if getattr(hook, "scope", None) is scope and getattr(hook, "name", None) in gone:
                hook.scope = {hook.name: None}
        for name in gone:
            scope.pop(name, None)
        return gone
    except Exception:  # Dynamo's internals changed: leave the names rather than fail the A/B
        return []


def _global_names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the code objects inside it can load."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


# --- what Dynamo did --------------------------------------------------------------------------------

_GRAPH_BREAK_LOGGERS = (
    "torch._dynamo.symbolic_convert.__graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks",
)
_USER_CODE_AT = re.compile(r"in user code at (.+):(\d+)")


@dataclass
class CompileEvents:
    """What Dynamo reported during some calls: graph breaks (with the user's line), recompiles."""

    graph_breaks: list[str] = field(default_factory=list)
    recompiles: int = 0
    recompile_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, other: CompileEvents) -> None:
        for item in other.graph_breaks:
            if item not in self.graph_breaks:
                self.graph_breaks.append(item)
        self.recompiles += other.recompiles
        for reason in other.recompile_reasons:
            if reason not in self.recompile_reasons:
                self.recompile_reasons.append(reason)
        for note in other.notes:
            if note not in self.notes:
                self.notes.append(note)


class DynamoWatch(logging.Handler):
    """Listens to Dynamo while the A/B runs; ``take()`` returns what happened since the last take.

    Graph breaks come from Dynamo's ``graph_breaks`` log (which names the user's file and line),
    falling back to ``torch._dynamo.utils.counters["graph_break"]`` (reasons only); recompiles
    from its compilation metrics (one record per frame compiled, with the guard that failed).
    Both are torch internals, read defensively: an older or newer torch may give less.
    """

    def __init__(self, home_files: frozenset[str] = frozenset()) -> None:
        super().__init__(level=logging.DEBUG)
        self.home_files = home_files
        self._messages: list[str] = []
        self._saved: list[tuple[logging.Logger, int, bool]] = []
        self._metrics_seen: list[Any] = []
        self._counters: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # a malformed record must not break the user's run
            self._messages.append(record.getMessage())

    def __enter__(self) -> DynamoWatch:
        for name in _GRAPH_BREAK_LOGGERS:
            logger = logging.getLogger(name)
            self._saved.append((logger, logger.level, logger.propagate))
            logger.setLevel(logging.DEBUG)
            logger.propagate = False  # ours only: not printed to the user's stderr
            logger.addHandler(self)
        self._metrics_seen = _compilation_metrics()
        self._counters = _graph_break_counters()
        return self

    def __exit__(self, *exc: Any) -> None:
        for logger, level, propagate in self._saved:
            logger.removeHandler(self)
            logger.setLevel(level)
            logger.propagate = propagate
        self._saved = []

    def take(self) -> CompileEvents:
        events = CompileEvents()
        messages, self._messages = self._messages, []
        for message in messages:
            text = self._graph_break(message)
            if text and text not in events.graph_breaks:
                events.graph_breaks.append(text)
        counters = _graph_break_counters()
        if not events.graph_breaks:
            for reason, count in counters.items():
                if count > self._counters.get(reason, 0):
                    text = _first_lines(reason)
                    if text not in events.graph_breaks:
                        events.graph_breaks.append(text)
        self._counters = counters
        metrics = _compilation_metrics()
        seen = {id(m) for m in self._metrics_seen}
        for record in metrics:
            if id(record) in seen:
                continue
            reason = getattr(record, "recompile_reason", None)
            if reason:
                events.recompiles += 1
                text = self._recompile(str(reason))
                if text not in events.recompile_reasons:
                    events.recompile_reasons.append(text)
            skip = getattr(record, "cudagraph_skip_reason", None)
            if skip:
                events.notes.append(f"CUDA graphs skipped by torch.compile: {skip}")
            fail = getattr(record, "fail_reason", None)
            if fail:
                events.notes.append(
                    f"torch.compile fell back to eager for a frame: {_first_lines(str(fail))}"
                )
        self._metrics_seen = metrics
        return events

    def _graph_break(self, message: str) -> str | None:
        if "Graph Break Reason:" not in message:
            return None
        where = ""
        match = _USER_CODE_AT.search(message)
        if match:
            where = describe_line(match.group(1), int(match.group(2)), self.home_files)
        reason = message.split("Graph Break Reason:", 1)[1].split("User code traceback:", 1)[0]
        lines = [line.strip() for line in reason.splitlines() if line.strip()]
        lines = [
            line
            for line in lines
            if not line.startswith(
                ("Encountered graph break", "Hint:", "Developer debug", "For more details")
            )
        ]
        summary = lines[0] if lines else "graph break"
        explanation = next(
            (
                line.removeprefix("Explanation:").strip()
                for line in lines
                if line.startswith("Explanation:")
            ),
            "",
        )
        text = f"{summary}: {explanation}" if explanation and explanation != summary else summary
        return f"{where}: {text}" if where else text

    def _recompile(self, reason: str) -> str:
        first = reason.strip().splitlines()[0]
        guard = first.partition("#")[0]
        guard = re.sub(r"^\S+:\s*", "", guard.strip())  # "1/0: n == 1" -> "n == 1"
        location = re.search(r"File \"(.+)\", line (\d+)", reason)
        where = (
            describe_line(location.group(1), int(location.group(2)), self.home_files)
            if location
            else ""
        )
        return f"{where}: guard failed: {guard}" if where else f"guard failed: {guard}"


def _compilation_metrics() -> list[Any]:
    try:
        from torch._dynamo.utils import get_compilation_metrics

        return list(get_compilation_metrics())
    except Exception:
        return []


def _graph_break_counters() -> dict[str, int]:
    try:
        from torch._dynamo.utils import counters

        return dict(counters["graph_break"])
    except Exception:
        return {}


def _first_lines(text: str, n: int = 2) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[:n])


# --- where it failed ------------------------------------------------------------------------------

_LIBRARY_PREFIXES = tuple(
    os.path.normcase(os.path.realpath(p)) + os.sep
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }
    if p
)
_OWN_DIR = os.path.normcase(os.path.realpath(os.path.dirname(os.path.dirname(__file__)))) + os.sep


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def describe_line(filename: str, lineno: int, home_files: frozenset[str] = frozenset()) -> str:
    """``line 4: y = x.item()`` for the user's own cell or file, ``file.py:12: code`` otherwise."""
    code = linecache.getline(filename, lineno).strip()
    where = f"line {lineno}" if filename in home_files else f"{os.path.basename(filename)}:{lineno}"
    return f"{where}: {code}" if code else where


def error_line(error: BaseException, home_files: frozenset[str] = frozenset()) -> str | None:
    """The line of the user's code where ``error`` was raised: the deepest frame in one of
    ``home_files`` (the cell), else the deepest frame outside Python's and installed libraries.

    Follows the chain of causes: a failed CUDA graph capture ends with torch's own error at the
    end of capture, while the user's line is in the error that interrupted the capture.
    """
    fallback = None
    chain = _chain(error)
    for exc in chain:
        frames = traceback.extract_tb(exc.__traceback__)
        for frame in reversed(frames):
            if frame.filename in home_files:
                return describe_line(frame.filename, frame.lineno or 0, home_files)
        if fallback is None:
            for frame in reversed(frames):
                if _is_user_file(frame.filename):
                    fallback = describe_line(frame.filename, frame.lineno or 0, home_files)
                    break
    # torch.compile fails while tracing, before the user's frame runs: Dynamo names the line
    # in its message ("from user code: File "<cell>", line 3, in ...").
    for exc in chain:
        mentions = [m for m in _FILE_LINE.findall(str(exc)) if m[0] in home_files]
        if mentions:
            filename, lineno = mentions[-1]
            return describe_line(filename, int(lineno), home_files)
    return fallback


def _chain(error: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        chain.append(current)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return chain


def _is_user_file(filename: str) -> bool:
    if filename.startswith("<") and not filename.startswith(("<ipython-input", "<cell")):
        return False
    path = os.path.normcase(os.path.realpath(filename))
    return not path.startswith(_LIBRARY_PREFIXES) and not path.startswith(_OWN_DIR)


def describe_error(error: BaseException) -> str:
    """A short, plain message for a variant's failure, with the cause that matters."""
    if isinstance(error, VariantUnavailable):
        return str(error)
    chain = _chain(error)
    text = " ".join(f"{type(e).__name__}: {_first_lines(str(e), 3)}" for e in reversed(chain[:3]))
    capture = any("captur" in str(e).lower() or "cudaErrorStreamCapture" in str(e) for e in chain)
    if capture:
        text = (
            "CUDA graph capture failed: the code does something a graph cannot record (a host "
            "sync such as .item(), .cpu() or printing a tensor; a copy from CPU memory; a shape "
            f"that depends on data; a new CPU tensor each run). {text}"
        )
    return text[:2000]


__all__ = [
    "COMPILE_MODES",
    "VARIANT_KINDS",
    "CompileEvents",
    "DynamoWatch",
    "Slot",
    "Target",
    "Variant",
    "VariantSpec",
    "VariantUnavailable",
    "describe_error",
    "error_line",
    "fresh_function",
    "make_variant",
    "non_blocking_copies",
    "parse_variants",
    "slots_read",
]
