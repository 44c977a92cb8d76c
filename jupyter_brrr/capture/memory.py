"""Memory capacity: what holds the peak, when, and what made it.

One run of the code under ``torch.profiler`` with ``profile_memory``, ``record_shapes`` and
``with_stack`` (after ``warmup`` plain runs, so that optimizer state, the cuBLAS workspace and the
allocator's blocks exist as they do in steady training). PyTorch's own memory profiler
(``torch.profiler._memory_profiler.MemoryProfile``) follows every tensor through the ops that
use it and gives each a category: parameters, gradients, optimizer state, activations (kept for
the backward), temporaries, inputs, autograd detail; a tensor it cannot place is "unknown".

- **The allocator's own count** is the authority: each allocation event the profiler records
  carries the allocator's total at that moment (``total_allocated``: on a GPU the CUDA caching
  allocator's, as ``torch.cuda.memory_allocated`` counts; on a CPU only what was allocated while
  the profiler recorded memory). The peak is the largest of them (on a GPU also read from
  ``torch.cuda.max_memory_allocated`` after the run).
- **The breakdown at the peak** is the categories' sizes at that moment, replayed from the
  memory profiler's timeline; tensors that were allocated before the run and not used by it are
  "held before" (on a GPU: what was allocated when the run started, less the tensors the run
  used); what the allocator counts and no category explains is ``unattributed_bytes``, reported,
  never spread over the categories. On a GPU the parts add up to the allocator's peak;
  ``bench/gpu_check.py`` checks it within 2% on a training step. On a CPU the allocator's count
  starts with the profiler, so the check is on the run's increase.
- **The largest allocations live at the peak**, with the category, the op that made them (the
  outermost torch op above them: ``aten::linear``, not the ``aten::empty`` inside it) and the line
  of the user's code that called it (the innermost Python frame outside torch).
- **Advice that separates capacity from speed**: when the peak is near or over the capacity,
  what lowers memory per item (bf16 activations, activation checkpointing, fused attention that
  stores no score matrix, fewer optimizer bytes), or splitting the model and its state across
  GPUs; none of it makes a step faster.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..report.display import nbytes as _size  # sizes in words, as every view writes them
from ..report.report import json_safe
from ..report.shown import Shown
from ..schema.report import MEMORY_CATEGORIES, MEMORY_LARGEST_COLUMNS
from . import cupti

if TYPE_CHECKING:
    import pandas as pd

MEMORY_SCHEMA = "jupyter_brrr.memory"
MEMORY_VERSION = 1
# The categories, in the order they stack (what lasts longest at the bottom).
CATEGORIES = MEMORY_CATEGORIES
_TORCH_CATEGORY = {
    "PARAMETER": "parameters",
    "GRADIENT": "gradients",
    "OPTIMIZER_STATE": "optimizer_state",
    "ACTIVATION": "activations",
    "TEMPORARY": "temporaries",
    "INPUT": "inputs",
    "AUTOGRAD_DETAIL": "autograd_detail",
}
LARGEST_COLUMNS = MEMORY_LARGEST_COLUMNS
TIMELINE_POINTS = 2000  # the JSON's timeline is thinned to about this many moments


@dataclass(repr=False)  # repr, display and lines: the views draw it (Shown)
class MemoryBreakdown(Shown):
    """What held the peak. Sizes in bytes, times in seconds from the run's start.

    ``at_peak``: bytes per category at the peak (``CATEGORIES``); ``unattributed_bytes``: what
    the allocator counted there and no category explains; ``timeline``: a tidy frame (time_s,
    category, bytes) with the allocator's total as category "allocated"; ``largest``: the
    allocations live at the peak, largest first; ``advice``: capacity advice in words."""

    device: str
    gpu: bool
    peak_bytes: float
    peak_time_s: float
    before_bytes: float | None
    capacity_bytes: float | None
    at_peak: dict[str, float]
    unattributed_bytes: float
    times_s: list[float] = field(default_factory=list)
    by_category: dict[str, list[float]] = field(default_factory=dict)
    allocated: list[float] = field(default_factory=list)
    largest_rows: list[dict] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    allocator_peak_bytes: float | None = None

    @property
    def table(self) -> pd.DataFrame:
        """The breakdown at the peak: one row per category, with its share of the peak."""
        import pandas as pd

        rows = [
            {"category": c, "bytes": b, "share": b / self.peak_bytes if self.peak_bytes else None}
            for c, b in [*self.at_peak.items(), ("unattributed", self.unattributed_bytes)]
        ]
        return pd.DataFrame(rows, columns=["category", "bytes", "share"])

    @property
    def timeline(self) -> pd.DataFrame:
        import pandas as pd

        frames = [
            pd.DataFrame({"time_s": self.times_s, "category": name, "bytes": values})
            for name, values in [*self.by_category.items(), ("allocated", self.allocated)]
        ]
        return pd.concat(frames, ignore_index=True)

    @property
    def largest(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.largest_rows, columns=list(LARGEST_COLUMNS))

    def to_dict(self) -> dict:
        return json_safe(
            {
                "schema": MEMORY_SCHEMA,
                "version": MEMORY_VERSION,
                "device": self.device,
                "gpu": self.gpu,
                "peak_bytes": self.peak_bytes,
                "peak_time_s": self.peak_time_s,
                "allocator_peak_bytes": self.allocator_peak_bytes,
                "before_bytes": self.before_bytes,
                "capacity_bytes": self.capacity_bytes,
                "at_peak": dict(self.at_peak),
                "unattributed_bytes": self.unattributed_bytes,
                "timeline": _thin(self.times_s, self.by_category, self.allocated),
                "largest": {
                    "columns": list(LARGEST_COLUMNS),
                    "data": [[r.get(c) for c in LARGEST_COLUMNS] for r in self.largest_rows],
                },
                "advice": list(self.advice),
                "notes": list(self.notes),
            }
        )


def memory_breakdown(
    fn: Callable[..., Any],
    *args: Any,
    warmup: int = 1,
    cpu: bool = False,
    top: int = 10,
    **kwargs: Any,
) -> MemoryBreakdown:
    """Run ``fn(*args, **kwargs)`` ``warmup`` times, then once under the memory profiler, and
    say what held the peak (see the module docstring)."""
    import torch

    from .run import (
        ProfilerInUseError,
        check_can_profile,
        one_capture_deeper,
        profiler_turn,
        quiet_native_stderr,
    )

    if warmup < 0:
        raise ValueError(f"warmup must be >= 0 (got {warmup}).")
    check_can_profile()
    gpu = torch.cuda.is_available() and not cpu
    for _ in range(warmup):
        fn(*args, **kwargs)  # each value dropped as it returns
    gc.collect()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = float(torch.cuda.memory_allocated()) if gpu else None
    # Nothing of the profiler left behind (capture/cupti.py); the breakdown says so if it set it.
    teardown_note = cupti.ask_teardown(torch) if gpu else None
    with one_capture_deeper(), profiler_turn():
        profiler = torch.profiler.profile(
            activities=activities, profile_memory=True, record_shapes=True, with_stack=True
        )
        # torch prints a line on file descriptor 2 as a profiler starts and stops (USDT ...
        # profiler_start): silenced around our own calls only, never the user's code.
        with quiet_native_stderr():
            profiler.start()
        try:
            value = fn(*args, **kwargs)
            if gpu:
                torch.cuda.synchronize()
        finally:
            with quiet_native_stderr():
                profiler.stop()
    if not isinstance(profiler, torch.profiler.profile):  # pragma: no cover - typing aid
        raise ProfilerInUseError("no profiler")
    del value
    allocator_peak = float(torch.cuda.max_memory_allocated()) if gpu else None
    capacity = _capacity() if gpu else None
    device = torch.cuda.get_device_name() if gpu else "CPU"
    result = breakdown_of(
        profiler,
        device=device,
        gpu=gpu,
        before=before,
        allocator_peak=allocator_peak,
        capacity=capacity,
        top=top,
    )
    if teardown_note is not None:
        result.notes.append(teardown_note)
    return result


def _capacity() -> float | None:
    return reachable_gpu_memory()


def reachable_gpu_memory() -> float | None:
    """What this process's allocator may reach: its memory fraction of the device, and no more
    than it holds now plus what is free (the CUDA context and other processes hold the rest)."""
    import torch

    try:
        device = torch.cuda.current_device()
        total = float(torch.cuda.get_device_properties(device).total_memory)
        fraction = 1.0
        if hasattr(torch.cuda, "get_per_process_memory_fraction"):
            fraction = float(torch.cuda.get_per_process_memory_fraction(device))
        free, _ = torch.cuda.mem_get_info(device)
        reachable = float(torch.cuda.memory_reserved(device)) + float(free)
        return min(total * fraction, reachable)
    except Exception:
        return None


def breakdown_of(
    profiler: Any,
    *,
    device: str,
    gpu: bool,
    before: float | None,
    allocator_peak: float | None,
    capacity: float | None,
    top: int = 10,
) -> MemoryBreakdown:
    """The breakdown of a finished profile made with ``profile_memory``, ``record_shapes``
    and ``with_stack``."""
    from torch._C._profiler import _EventType
    from torch.profiler._memory_profiler import Action, TensorKey

    memory = profiler._memory_profile()
    target = "cuda" if gpu else "cpu"
    allocations = [
        event
        for event in memory._op_tree.dfs()
        if event.typed[0] == _EventType.Allocation and event.typed[1].device.type == target
    ]
    if not allocations:
        raise ValueError("the code allocated no memory on the " + target.upper() + ".")
    allocations.sort(key=lambda e: e.start_time_ns)
    start_ns = allocations[0].start_time_ns
    first = allocations[0].typed[1]
    if before is None:  # the CPU: the allocator's count starts with the profiler
        before = float(first.total_allocated - first.alloc_size)
    peak_event = max(allocations, key=lambda e: e.typed[1].total_allocated)
    peak_ns = peak_event.start_time_ns
    peak = float(peak_event.typed[1].total_allocated)
    made_by = {}
    for event in allocations:
        fields = event.typed[1]
        key = TensorKey.from_allocation(fields)
        if fields.alloc_size > 0 and key is not None:
            made_by[key] = event

    live: dict[Any, tuple[int, int, str]] = {}  # key -> (version, bytes, category)
    preexisting = 0.0
    sizes = dict.fromkeys(CATEGORIES, 0.0)
    times: list[float] = []
    series: dict[str, list[float]] = {c: [] for c in CATEGORIES}
    at_peak: dict[str, float] | None = None
    live_at_peak: dict[Any, tuple[int, int, str]] = {}

    def category(key: Any, version: int) -> str:
        found = memory._categories.get(key, version)
        return _TORCH_CATEGORY.get(getattr(found, "name", ""), "unknown")

    def record(t_ns: int) -> None:
        times.append((t_ns - start_ns) * 1e-9)
        for name in CATEGORIES:
            series[name].append(sizes[name])

    timeline = [e for e in memory.timeline if e[2][0].device.type == target]
    timeline.sort(key=lambda e: e[0])
    last_t = None
    for t, action, (key, version), nbytes in timeline:
        if at_peak is None and t > peak_ns:
            at_peak, live_at_peak = dict(sizes), dict(live)
        if last_t is not None and t != last_t and t >= 0:
            record(last_t)
        if action in (Action.PREEXISTING, Action.CREATE):
            name = category(key, version)
            sizes[name] += nbytes
            live[key] = (version, nbytes, name)
            if action == Action.PREEXISTING:
                preexisting += nbytes
        elif action == Action.INCREMENT_VERSION:
            old = category(key, version)
            new = category(key, version + 1)
            sizes[old] -= nbytes
            sizes[new] += nbytes
            live[key] = (version + 1, nbytes, new)
        elif action == Action.DESTROY:
            name = live.pop(key, (version, nbytes, category(key, version)))[2]
            sizes[name] -= nbytes
        if t >= 0:
            last_t = t
    if last_t is not None:
        record(last_t)
    if at_peak is None:
        at_peak, live_at_peak = dict(sizes), dict(live)
    held_before = max(before - preexisting, 0.0) if gpu else 0.0
    at_peak["held_before"] = held_before
    series["held_before"] = [held_before] * len(times)
    allocated = _allocator_series(allocations, times, start_ns)
    explained = sum(at_peak.values())
    if gpu:
        unattributed = peak - explained
    else:
        increase = peak - before
        unattributed = increase - (explained - preexisting)
    result = MemoryBreakdown(
        device=device,
        gpu=gpu,
        peak_bytes=peak if gpu else explained + unattributed,
        peak_time_s=(peak_ns - start_ns) * 1e-9,
        before_bytes=before if gpu else None,
        capacity_bytes=capacity,
        at_peak=at_peak,
        unattributed_bytes=unattributed,
        times_s=times,
        by_category=series,
        allocated=allocated if gpu else [a - before + preexisting for a in allocated],
        allocator_peak_bytes=allocator_peak,
    )
    result.largest_rows = _largest(live_at_peak, made_by, start_ns, top)
    if not gpu:
        result.notes.append(
            "On the CPU the allocator counts only what is allocated while the profiler records "
            "memory: the peak here is the tensors the run used (those made before it included) "
            "plus what it allocated; memory held before and not used is not seen."
        )
    if allocator_peak is not None and abs(allocator_peak - peak) > 0.001 * allocator_peak:
        result.notes.append(
            f"The allocator's peak over the run ({_size(allocator_peak)}) differs from the "
            f"largest total its events carried ({_size(peak)})."
        )
    result.advice = advice(result)
    return result


def _allocator_series(allocations: list[Any], times: list[float], start_ns: int) -> list[float]:
    """The allocator's total at each moment of ``times`` (its last event at or before it)."""
    import bisect

    event_times = [(e.start_time_ns - start_ns) * 1e-9 for e in allocations]
    totals = [float(e.typed[1].total_allocated) for e in allocations]
    out = []
    for t in times:
        i = bisect.bisect_right(event_times, t + 1e-12) - 1
        out.append(totals[i] if i >= 0 else totals[0] - allocations[0].typed[1].alloc_size)
    return out


def _largest(live: dict, made_by: dict, start_ns: int, top: int) -> list[dict]:
    rows = []
    for key, (_version, nbytes, name) in live.items():
        event = made_by.get(key)
        rows.append(
            {
                "bytes": float(nbytes),
                "category": name,
                "op": _op_of(event) if event is not None else None,
                "line": _line_of(event) if event is not None else None,
                "time_s": (event.start_time_ns - start_ns) * 1e-9 if event is not None else None,
            }
        )
    rows.sort(key=lambda r: -r["bytes"])
    return rows[:top]


def _op_of(event: Any) -> str | None:
    """The op the code called that made an allocation: the outermost of the torch ops nested
    above it (``aten::linear``, not the ``aten::addmm`` or ``aten::empty`` inside it)."""
    from torch._C._profiler import _EventType

    parent, outermost = event.parent, None
    while parent is not None and parent.typed[0] == _EventType.TorchOp:
        outermost = parent.name
        parent = parent.parent
    return outermost


def _line_of(event: Any) -> str | None:
    """The line of the user's code that led to an allocation: ``file.py:57`` (``cell:3`` for a
    notebook cell), without folders. The innermost Python call above the allocation made from
    code outside torch gives it: the line it was called from (its caller's), not the first line
    of the function it called (a module-level cell's first line reads 0)."""
    from torch._C._profiler import _EventType

    parent = event.parent
    while parent is not None:
        if parent.typed[0] in (_EventType.PyCall, _EventType.PyCCall):
            caller = getattr(parent.extra_fields, "caller", None)
            path = str(getattr(caller, "file_name", "") or "")
            if caller is not None and _users(path):
                return f"{_file(path)}:{caller.line_number}"
            # An operator (``a @ b``) makes no Python call: the user's function it ran in is
            # known, its line not.
            called = str(parent.name).partition("(")[0]
            if parent.typed[0] == _EventType.PyCall and _users(called):
                return _file(called)
        parent = parent.parent
    return None


def _users(path: str) -> bool:
    """Whether a Python file is the user's: not torch's, an installed package's or ours."""
    return bool(path) and not any(
        part in path for part in ("nn.Module", "torch/", "site-packages", "jupyter_brrr/")
    )


def _file(path: str) -> str:
    """A file's name for the Memory tab: ``cell`` for a notebook cell's code."""
    file = os.path.basename(path)
    if file.startswith(("<ipython-input", "ipykernel_")) or "ipykernel" in path:
        return "cell"
    return file


def _thin(times: list[float], series: dict[str, list[float]], allocated: list[float]) -> dict:
    """The timeline for the JSON: at most about TIMELINE_POINTS moments, the peak kept."""
    n = len(times)
    if n > TIMELINE_POINTS:
        step = n / TIMELINE_POINTS
        keep = sorted({int(i * step) for i in range(TIMELINE_POINTS)} | {n - 1})
        top = max(range(n), key=lambda i: allocated[i]) if allocated else 0
        keep = sorted(set(keep) | {top})
    else:
        keep = list(range(n))
    return {
        "times_s": [times[i] for i in keep],
        "categories": list(series),
        "bytes": [[series[c][i] for i in keep] for c in series],
        "allocated": [allocated[i] for i in keep] if allocated else [],
    }


# --- advice --------------------------------------------------------------------------------


def advice(result: MemoryBreakdown) -> list[str]:
    """Capacity advice, apart from speed: only where the peak is near or over the capacity,
    and only the remedies that fit what holds the peak."""
    peak, capacity = result.peak_bytes, result.capacity_bytes
    parts = result.at_peak
    state = sum(parts.get(c, 0.0) for c in ("parameters", "gradients", "optimizer_state"))
    per_item = sum(parts.get(c, 0.0) for c in ("activations", "temporaries", "autograd_detail"))
    largest = max(parts, key=lambda c: parts[c]) if parts else None
    lines = []
    if not capacity:
        lines.append("Capacity is not measured here (no GPU). If the run must fit in less memory:")
    else:
        if peak > capacity:
            lines.append(
                f"Capacity, not speed: the peak ({_size(peak)}) exceeds the "
                f"{_size(capacity)} this process can reach on the GPU: the run does not fit, however fast it is."
            )
        elif peak > 0.8 * capacity:
            lines.append(
                f"Capacity: the peak ({_size(peak)}) is {peak / capacity:.0%} of the "
                f"{_size(capacity)} this process can reach on the GPU: a larger batch or model will not fit."
            )
        else:
            return [
                f"Capacity: the peak ({_size(peak)}) is {peak / capacity:.0%} of the "
                f"{_size(capacity)} this process can reach on the GPU: room to grow the batch (a sweep says how far)."
            ]
    if per_item >= state:
        ops = " ".join(str(r.get("op") or "") for r in result.largest_rows)
        fixes = [
            "activations in bf16 (torch.autocast) halve their bytes",
            "activation checkpointing (torch.utils.checkpoint) keeps a few and recomputes the "
            "rest in the backward: less memory for about a third more compute",
        ]
        if "softmax" in ops or "bmm" in ops or "baddbmm" in ops:
            fixes.append(
                "fused attention (torch.nn.functional.scaled_dot_product_attention) stores no "
                "score matrix"
            )
        lines.append(
            f"Memory per item: activations and temporaries hold {_size(per_item)} of the peak "
            f"(largest part: {largest}). To fit more per GPU: " + "; ".join(fixes) + "."
        )
    else:
        lines.append(
            f"Model state: parameters, gradients and optimizer state hold {_size(state)} of the "
            "peak. To fit: mixed precision or 8-bit optimizer states for fewer bytes per "
            "parameter, or split the model and its state across GPUs (FSDP / ZeRO sharding; "
            "tensor parallelism), at the cost of communication."
        )
    lines.append(
        "These change how much fits, not how fast a step runs (checkpointing makes it slower)."
    )
    return lines
