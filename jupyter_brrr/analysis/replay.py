"""What would happen if: the step's dependency graph (``step_graph``) replayed under changes.

``predict(graph, gpu=2)`` plays the graph forward, a discrete-event simulation over its chains:
each host thread runs its nodes in order, each after the host work before it; each GPU stream
runs its nodes in order, each once its launch call has got it to the GPU and the node before it
has ended; a synchronisation ends once the GPU work it waits for has ended; a waiting stream
starts once the work it waits on has ended; a woken thread resumes once its waker has ended. The
unchanged graph replays to the measured step (its lags were calibrated on it), so a prediction
changes only what the change touches and lets the dependencies decide the rest: faster kernels on
a launch-bound step only lengthen the GPU's wait.

How each change acts on the graph:

- ``gpu=k``: every kernel and set, and every copy within the device, k times shorter (a copy to or
  from the host is bound by its link, not the GPU: unchanged).
- ``ops={"aten::mm": k}`` (or ``{("aten::mm", "[[8192, 768], [768, 50257]]"): k}``): the GPU work
  the op owns (its kernels, as the kernel table attributes them) k times shorter.
  ``category={"memory": k}``: the kernels of a bound (compute, memory, overhead, other) or a
  category (matmul, conv, elementwise, attention, host copy...). ``modules={"model.layer1": k}``:
  the GPU work of the ops in that module and below. Factors of several changes multiply.
- ``launch=0``: what a CUDA graph does (``launch=2``: twice the launch path, as when a change
  launches twice the kernels). The host's launch path goes (dispatch of the ops that
  launch GPU work, the Python between them, the launch calls, event records and waits): the
  GPU's kernels follow each other at the stream's gap. Synchronisations stay (a graph cannot
  capture one), and so does host work that launched nothing. ``launch=0.5`` halves it.
- ``host_parts={"launch": 1.2, "launch calls": 3}``: each part of the host's work
  (``HOST_PARTS``: the launch path's dispatch, CPU ops, Python between launching ops, host work
  outside ops, the data loader, the runtime calls' own time: launches and the others) at that multiple of its time: a change measured on
  both sides (``host_work`` of each graph), as the diff replays it. "launch calls" (the calls a
  CUDA graph captures), given, replaces ``launch``'s scaling of them.
- ``syncs=0``: synchronising calls stop waiting for the GPU (their own cost stays).
- ``host=k``: all host work k times faster (ops, Python, runtime calls, the profiler's cost).
- ``cpu=0``: the host work that launches nothing (CPU ops, the user's Python outside ops, the
  data loader) off the critical path: what preparing the next batch elsewhere (a DataLoader's
  workers, work done once before the loop) does. ``cpu=0.5`` halves it.
- ``copies="async"``: copies between host and device made asynchronous from pinned memory: the
  host no longer waits for them, and a copy from pageable memory runs at the best rate of a
  pinned copy in the same direction in the trace, else ``PINNED_BYTES_PER_S`` (an assumption,
  said in the prediction's notes).
- ``profiler=0``: the profiler's own cost removed (``step_graph`` says how it is estimated): the
  unprofiled step. ``profiler=1`` keeps it (the default).

The span: for one run (a trace or cell of one run), from the first GPU work to the last; for a
profiler step of a loop, the step's window in a steady loop, found by replaying the step twice in
a row (the second step's window: from where the host starts it or the GPU has finished the first,
whichever is later, to the same point of a third step).

The critical path is the chain of constraints that set the end: walked back from the last
finished node through the constraint that set each node's start (or end, for a synchronisation),
each segment tagged with its resource.

What a replay cannot model: work that appears or vanishes with a change (torch.compile fusing
ops, a larger batch), a change in what a kernel costs other than by the factor given, contention
between overlapping kernels (each keeps its own duration), the launch queue's depth limit, host
work that depends on the GPU other than by the recorded synchronisations, and, across ranks, the
network's own contention.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import step_graph as sg
from .step_graph import StepGraph

__all__ = ["Prediction", "critical_path", "host_work", "idle_causes", "predict", "replay"]

# A pinned copy's rate where the trace has none to go by (PCIe 5.0 x16 in practice: an
# assumption the prediction's notes state).
PINNED_BYTES_PER_S = 25e9
# The gap between a CUDA graph's kernels on one stream: 400 kernels of 0.87 us replayed from a
# graph on the H200 ran 0.26 us apart (tests/data/advice/launch_bound_loop.fixed).
GRAPH_GAP_S = 0.3e-6
# The host's work by part, for ``host_parts``: the parts of the gaps between host nodes
# (step_graph.GAP_PARTS but the profiler's) and the runtime calls' own time.
HOST_PARTS = (*sg.GAP_PARTS[:5], "launch calls", "other calls")
# Within a segment whose nodes wait on each other across chains, passes until nothing moves.
_PASSES = 20


@dataclass(frozen=True)
class Changes:
    """What a prediction changes (see the module's docstring); the defaults change nothing."""

    gpu: float = 1.0
    ops: Mapping[Any, float] = field(default_factory=dict)
    category: Mapping[str, float] = field(default_factory=dict)
    modules: Mapping[str, float] = field(default_factory=dict)
    launch: float = 1.0
    syncs: float = 1.0
    host: float = 1.0
    copies: str | None = None
    profiler: float = 1.0
    cpu: float = 1.0
    host_parts: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("gpu", "host"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r}: a speed-up factor must be a number above 0")
        if not (isinstance(self.launch, int | float) and math.isfinite(self.launch)) or (
            self.launch < 0
        ):
            raise ValueError(
                f"launch={self.launch!r}: the launch path's time as a share of what it was, 0 "
                "(gone: a CUDA graph) or more (2: twice the launches)"
            )
        for name in ("syncs", "profiler", "cpu"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 <= value <= 1):
                raise ValueError(
                    f"{name}={value!r}: the share of that time kept, from 0 (gone) to 1 (as it is)"
                )
        if self.syncs not in (0, 1):
            raise ValueError("syncs: 0 (removed) or 1 (kept); a synchronisation cannot be half")
        for name in ("ops", "category", "modules"):
            for key, factor in dict(getattr(self, name)).items():
                if not (isinstance(factor, int | float) and math.isfinite(factor) and factor > 0):
                    raise ValueError(f"{name}[{key!r}]={factor!r}: a factor must be above 0")
        for key, factor in dict(self.host_parts).items():
            if key not in HOST_PARTS:
                raise ValueError(f"host_parts[{key!r}]: one of {', '.join(HOST_PARTS)}")
            if not (isinstance(factor, int | float) and math.isfinite(factor) and factor >= 0):
                raise ValueError(
                    f"host_parts[{key!r}]={factor!r}: a multiple of its time, 0 or more"
                )
        if self.copies not in (None, "async"):
            raise ValueError(f"copies={self.copies!r}: 'async' (or None: as they are)")

    def words(self) -> str:
        parts = []
        if self.gpu != 1:
            parts.append(f"GPU work {self.gpu:g}x faster")
        parts += [f"{_key_words(k)} {v:g}x faster" for k, v in dict(self.ops).items()]
        parts += [f"{k} kernels {v:g}x faster" for k, v in dict(self.category).items()]
        parts += [f"module {k} {v:g}x faster" for k, v in dict(self.modules).items()]
        if self.launch != 1:
            parts.append(
                "no launch overhead (a CUDA graph)"
                if self.launch == 0
                else f"launch path at {self.launch:g}x its time"
            )
        if self.syncs == 0:
            parts.append("no synchronisations")
        if self.host != 1:
            parts.append(f"host work {self.host:g}x faster")
        if self.cpu != 1:
            parts.append(
                "no host work that launches nothing on the way"
                if self.cpu == 0
                else f"host work that launches nothing at {self.cpu:g}x its time"
            )
        parts += [f"host {k} at {v:.3g}x its time" for k, v in dict(self.host_parts).items()]
        if self.copies == "async":
            parts.append("copies asynchronous from pinned memory")
        if self.profiler != 1:
            parts.append(
                "without the profiler"
                if self.profiler == 0
                else f"profiler's cost at {self.profiler:g}x"
            )
        return ", ".join(parts) or "unchanged"


def _key_words(key: Any) -> str:
    return f"{key[0]} {key[1]}" if isinstance(key, tuple) else str(key)


@dataclass
class Timeline:
    """A replay's times: each node's start and end (host nodes, then GPU nodes, of the graph as
    replayed: doubled for a period), the span and where it starts and ends."""

    h_s: np.ndarray
    h_e: np.ndarray
    g_s: np.ndarray
    g_e: np.ndarray
    span_s: float
    start: float
    end: float
    plan: _Plan
    effective: dict[str, np.ndarray]


@dataclass
class Prediction:
    """A prediction: the step's span under the changes, against the unchanged replay.

    ``span_s``: the predicted span; ``baseline_s``: the unchanged graph replayed (with the
    same profiler setting); ``measured_s``: the span the trace measured; ``speedup``:
    ``baseline_s / span_s``. ``critical_path``: the segments that set the predicted span (a
    frame, see ``critical_path``). ``not_modelled``: what the prediction could not take into
    account.
    """

    span_s: float
    baseline_s: float
    measured_s: float
    changes: str
    not_modelled: list[str]
    timeline: Timeline = field(repr=False)
    graph: StepGraph = field(repr=False)
    _path: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def speedup(self) -> float:
        return self.baseline_s / self.span_s if self.span_s > 0 else math.inf

    @property
    def critical_path(self) -> pd.DataFrame:
        if self._path is None:
            self._path = critical_path(self.graph, self.timeline)
        return self._path

    def __repr__(self) -> str:
        return (
            f"Prediction({self.changes}: {self.span_s * 1e3:.4g} ms against "
            f"{self.baseline_s * 1e3:.4g} ms replayed ({self.measured_s * 1e3:.4g} ms measured): "
            f"{self.speedup:.3g}x; predicted by replaying the step's dependencies)"
        )


def predict(graph: StepGraph, **changes: Any) -> Prediction:
    """The span of ``graph``'s step under ``changes`` (``Changes``' fields), against the
    unchanged graph replayed at the same profiler setting."""
    wanted = Changes(**changes)
    # The unchanged replay, once per graph and profiler setting.
    baselines = graph.__dict__.setdefault("_baselines", {})
    if wanted.profiler not in baselines:
        baselines[wanted.profiler] = replay(graph, Changes(profiler=wanted.profiler))
    baseline = baselines[wanted.profiler]
    timeline = replay(graph, wanted) if wanted != Changes(profiler=wanted.profiler) else baseline
    return Prediction(
        span_s=timeline.span_s,
        baseline_s=baseline.span_s,
        measured_s=graph.measured_s,
        changes=wanted.words(),
        not_modelled=_not_modelled(graph, wanted),
        timeline=timeline,
        graph=graph,
    )


def _not_modelled(graph: StepGraph, changes: Changes) -> list[str]:
    notes = [
        "work that appears or vanishes with the change (fused or new kernels), contention between "
        "overlapping kernels, the launch queue's depth"
    ]
    if changes.copies == "async" and graph.g_pageable.any():
        notes.append(
            "a pageable copy made pinned runs at the trace's best pinned rate in its direction, "
            f"else an assumed {PINNED_BYTES_PER_S / 1e9:g} GB/s"
        )
    if changes.host_parts:
        notes.append(
            "host work measured on the other side is spread over the step in proportion to "
            "this step's work of the same part (which ops it belongs to is not known)"
        )
    if changes.launch != 1:
        notes.append(
            "a CUDA graph's own launch and the host work it cannot capture besides the "
            "synchronisations (allocations, CPU-side tensors) are taken as they were"
        )
    if changes.profiler != 1:
        notes.append(
            f"the profiler's cost is taken as {sg.PROFILER_HOST_SHARE:.0%} of the host's time in "
            f"torch's ops and runtime calls (at most {sg.PROFILER_EVENT_CAP_S * 1e6:g} µs each), "
            f"its records' ends between ops (at most {sg.RECORD_GAP_S * 1e6:g} µs an op), "
            f"{sg.PROFILER_PER_DRIVER_LAUNCH_S * 1e6:g} µs more an op for each launch through "
            f"the driver API (cuDNN's, cuBLASLt's), {sg.GRAPH_LAUNCH_SHARE:.0%} of a CUDA graph's "
            "launch call, and "
            f"{sg.PROFILER_PER_KERNEL_S * 1e6:g} µs of the GPU's time a kernel; fitted on an H200 "
            "host with torch 2.11 and shapes recorded, where Python outside ops is not slowed: "
            "another host, torch version or profiler setting pays less or more"
        )
    if graph.mode == "period":
        notes.append("the step replayed twice in a row: its window in a steady loop")
    return notes


# --- the replay -------------------------------------------------------------------------------


@dataclass
class _Plan:
    """What every replay of one graph shares: the graph as replayed (doubled for a period),
    its chains' links and its segments."""

    n_host: int
    n_gpu: int
    host_perm: np.ndarray  # replayed host node -> graph host node
    gpu_perm: np.ndarray
    copy_of_host: np.ndarray
    copy_of_gpu: np.ndarray
    h_prev: np.ndarray  # previous node of the thread (-1)
    g_prev: np.ndarray  # previous node of the stream (-1)
    g_host: np.ndarray
    handoff_host: np.ndarray
    handoff_from: np.ndarray
    handoff_lag: np.ndarray
    wait_gpu: np.ndarray
    wait_from: np.ndarray
    wait_lag: np.ndarray
    await_host: np.ndarray
    await_gpu: np.ndarray
    first_gap: np.ndarray  # bool: a GPU node whose stream link is to the previous step's node
    segments: list[tuple[np.ndarray, np.ndarray, bool]]
    main_begin: np.ndarray  # the main thread's begin node of each copy
    main_end: np.ndarray
    copies: int


def _plan(graph: StepGraph) -> _Plan:
    cached = getattr(graph, "_replay_plan", None)
    if cached is not None:
        return cached
    copies = 2 if graph.mode == "period" else 1
    nh, ng = graph.host_count, graph.gpu_count
    host_perm = np.argsort(np.tile(graph.h_thread, copies), kind="stable")
    gpu_perm = np.argsort(np.tile(graph.g_stream, copies), kind="stable")
    copy_of_host = host_perm // max(nh, 1)
    copy_of_gpu = gpu_perm // max(ng, 1)
    host_new = np.empty(len(host_perm), dtype=np.int64)
    host_new[host_perm] = np.arange(len(host_perm))
    gpu_new = np.empty(len(gpu_perm), dtype=np.int64)
    gpu_new[gpu_perm] = np.arange(len(gpu_perm))

    def hmap(index: np.ndarray, copy: int) -> np.ndarray:
        return host_new[index + copy * nh]

    def gmap(index: np.ndarray, copy: int) -> np.ndarray:
        return gpu_new[index + copy * ng]

    h_thread = np.tile(graph.h_thread, copies)[host_perm]
    g_stream = np.tile(graph.g_stream, copies)[gpu_perm]
    h_prev = np.arange(len(host_perm)) - 1
    h_prev[np.r_[True, h_thread[1:] != h_thread[:-1]][: len(h_prev)]] = -1
    g_prev = np.arange(len(gpu_perm)) - 1
    g_prev[np.r_[True, g_stream[1:] != g_stream[:-1]][: len(g_prev)]] = -1
    base = gpu_perm % max(ng, 1)
    first_gap = (g_prev >= 0) & (graph.g_gap[base] <= sg.NO_GAP)

    def host_edges(index: np.ndarray) -> np.ndarray:
        return np.concatenate([hmap(index, c) for c in range(copies)]).astype(np.int64)

    def gpu_edges(index: np.ndarray) -> np.ndarray:
        return np.concatenate([gmap(index, c) for c in range(copies)]).astype(np.int64)

    base_gpu, gpu_copy = gpu_perm % max(ng, 1), gpu_perm // max(ng, 1)
    g_host = host_new[graph.g_host[base_gpu] + gpu_copy * nh] if ng else np.zeros(0, np.int64)
    handoff_host, handoff_from = host_edges(graph.handoff_host), host_edges(graph.handoff_from)
    await_host, await_gpu = host_edges(graph.await_host), gpu_edges(graph.await_gpu)
    wait_gpu, wait_from = gpu_edges(graph.wait_gpu), gpu_edges(graph.wait_from)
    handoff_lag = np.tile(graph.handoff_lag, copies)
    wait_lag = np.tile(graph.wait_lag, copies)

    # Segments: a synchronising node closes one. Replayed in measured order (a copy after the
    # one before it: its host time shifted by the step's host length).
    period = 0.0
    main_begin = np.array(
        [hmap(np.array([_main_node(graph, sg.BEGIN)]), c)[0] for c in range(copies)]
    )
    main_end = np.array([hmap(np.array([_main_node(graph, sg.END)]), c)[0] for c in range(copies)])
    if copies > 1:
        period = float(
            graph.h_start[_main_node(graph, sg.END)] - graph.h_start[_main_node(graph, sg.BEGIN)]
        )
    h_time = np.tile(graph.h_start, copies)[host_perm] + copy_of_host * period
    barrier = np.zeros(len(host_perm), dtype=bool)
    barrier[await_host] = True
    by_time = np.lexsort((~barrier, h_time))  # at equal times, a barrier last
    barrier_sorted = barrier[by_time]
    segment_sorted = np.concatenate([[0], np.cumsum(barrier_sorted)[:-1]])
    segment_of_host = np.empty(len(host_perm), dtype=np.int64)
    segment_of_host[by_time] = segment_sorted
    segment_of_gpu = segment_of_host[g_host] if len(g_host) else np.zeros(0, np.int64)
    n_segments = int(segment_of_host.max()) + 1 if len(segment_of_host) else 0
    host_rows = np.argsort(segment_of_host, kind="stable")
    gpu_rows = np.argsort(segment_of_gpu, kind="stable")
    host_bounds = np.searchsorted(segment_of_host[host_rows], np.arange(n_segments + 1))
    gpu_bounds = np.searchsorted(segment_of_gpu[gpu_rows], np.arange(n_segments + 1))
    # A segment whose nodes wait on each other across chains needs passes until stable.
    crossing = np.zeros(n_segments, dtype=bool)
    if len(handoff_host):
        same = segment_of_host[handoff_host] == segment_of_host[handoff_from]
        crossing[segment_of_host[handoff_host][same]] = True
    if len(wait_gpu):
        same = segment_of_gpu[wait_gpu] == segment_of_gpu[wait_from]
        crossing[segment_of_gpu[wait_gpu][same]] = True
    segments = [
        (
            host_rows[host_bounds[k] : host_bounds[k + 1]],
            gpu_rows[gpu_bounds[k] : gpu_bounds[k + 1]],
            bool(crossing[k]),
        )
        for k in range(n_segments)
    ]
    plan = _Plan(
        n_host=len(host_perm),
        n_gpu=len(gpu_perm),
        host_perm=host_perm,
        gpu_perm=gpu_perm,
        copy_of_host=copy_of_host,
        copy_of_gpu=copy_of_gpu,
        h_prev=h_prev,
        g_prev=g_prev,
        g_host=g_host,
        handoff_host=handoff_host,
        handoff_from=handoff_from,
        handoff_lag=handoff_lag,
        wait_gpu=wait_gpu,
        wait_from=wait_from,
        wait_lag=wait_lag,
        await_host=await_host,
        await_gpu=await_gpu,
        first_gap=first_gap,
        segments=segments,
        main_begin=main_begin,
        main_end=main_end,
        copies=copies,
    )
    object.__setattr__(graph, "_replay_plan", plan)
    return plan


def _main_node(graph: StepGraph, kind: int) -> int:
    rows = np.flatnonzero((graph.h_thread == graph.main_thread) & (graph.h_kind == kind))
    return int(rows[0] if kind == sg.BEGIN else rows[-1]) if len(rows) else 0


def _effective(graph: StepGraph, changes: Changes) -> dict[str, np.ndarray]:
    """Per node of the graph (not yet doubled), the durations, gaps and lags under the changes."""
    kind = graph.h_kind
    parts = graph.h_parts
    host = float(changes.host)
    launch = float(changes.launch)
    cpu = float(changes.cpu)
    measured = dict(changes.host_parts)
    by_part = np.array([measured.get(p, 1.0) for p in sg.GAP_PARTS[:5]])
    work_weights = np.array([launch, cpu, launch, cpu, cpu]) * by_part
    weights = np.append(work_weights, changes.profiler) / host
    weights = np.tile(weights, (len(kind), 1))
    # The profiler's records go with the host work they were made in: a CUDA graph runs no op.
    work = parts[:, :5].sum(axis=1)
    kept = parts[:, :5] @ work_weights
    own = np.where((kind == sg.LAUNCH) | (kind == sg.RECORD) | (kind == sg.WAIT), launch, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights[:, 5] *= np.where(work > 0, kept / np.maximum(work, 1e-300), own)
    parts = parts * weights
    gap = parts.sum(axis=1)
    call = (kind != sg.BEGIN) & (kind != sg.END)
    dur = np.where(call, graph.h_dur - graph.h_call_profiler * (1.0 - changes.profiler), 0.0)
    graphed = _launching_call(graph)
    dur = (
        np.where(
            graphed,
            dur * measured.get("launch calls", launch),
            dur * measured.get("other calls", 1.0),
        )
        / host
    )
    # GPU durations.
    factor = np.ones(graph.gpu_count)
    host_copy = (graph.g_kind == 1) & _is_host_copy(graph)
    if changes.gpu != 1:
        factor[~host_copy] *= changes.gpu
    names = graph.names
    for key, value in dict(changes.ops).items():
        name, shapes = key if isinstance(key, tuple) else (key, None)
        chosen = graph.g_op == _code(names, name)
        if shapes is not None:
            chosen &= graph.g_shapes == _code(names, shapes)
        factor[chosen] *= value
    for key, value in dict(changes.category).items():
        code = _code(names, key)
        factor[(graph.g_bound == code) | (graph.g_category == code)] *= value
    for key, value in dict(changes.modules).items():
        hits = np.array([n == key or n.startswith(key + ".") for n in names] + [False], dtype=bool)
        factor[hits[graph.g_module]] *= value
    g_dur = graph.g_dur / factor
    awaits = np.ones(len(graph.await_host), dtype=bool)
    from_start = graph.g_from_start.copy()
    if changes.syncs == 0:
        awaits &= graph.h_kind[graph.await_host] != sg.SYNC
    if changes.copies == "async":
        awaits &= ~graph.h_blocking[graph.await_host]
        from_start &= ~((graph.g_kind == 1) & host_copy)
        g_dur = np.where(graph.g_pageable, _pinned_time(graph, g_dur), g_dur)
    g_lag = graph.g_lag
    g_gap = graph.g_gap
    if launch != 1:
        # A graph's kernels follow each other closer than eager launches queue them.
        graphed = np.minimum(g_gap, g_gap * launch + GRAPH_GAP_S * (1 - launch))
        g_gap = np.where(g_gap > sg.NO_GAP, graphed, g_gap)
    if changes.profiler != 1:
        # CUPTI's record of each kernel took its stream's time: out of the gap before the
        # kernel first, then out of its own time (at most half of it). Measured in CUDA graphs
        # and eager alike; a small graph's recorded replay shows less of it (mlp_graph's, 44
        # µs profiled, is as long as by CUDA events), a 200-kernel graph's all of it.
        cost = np.where(graph.g_kind == 0, sg.PROFILER_PER_KERNEL_S * (1.0 - changes.profiler), 0)
        from_gap = np.where(g_gap > 0, np.minimum(cost, g_gap), 0.0)
        g_gap = g_gap - from_gap
        g_dur = g_dur - np.minimum(cost - from_gap, 0.5 * g_dur)
    return {
        "h_parts": parts,
        "h_gap": gap,
        "h_dur": dur,
        "h_wake": graph.h_wake,
        "g_dur": g_dur,
        "g_lag": g_lag,
        "g_gap": g_gap,
        "g_from_start": from_start,
        "awaits": awaits,
    }


def host_work(graph: StepGraph) -> dict[str, float]:
    """The host's work in ``graph`` by part (``HOST_PARTS``), the profiler's estimated cost
    taken out: the seconds ``host_parts`` scales. For one run (``mode`` "latency", its span
    from the first GPU work to the last), the host's work between its first launch and its
    last: what comes before or after it sets no part of the span."""
    gaps = np.ones(graph.host_count, dtype=bool)
    calls = (graph.h_kind != sg.BEGIN) & (graph.h_kind != sg.END)
    if graph.mode == "latency" and graph.gpu_count:
        launched = graph.h_start[graph.g_host[graph.g_host >= 0]]
        first, last = float(launched.min()), float(launched.max())
        gaps &= (graph.h_start > first) & (graph.h_start <= last)
        calls &= (graph.h_start >= first) & (graph.h_start <= last)
    totals = graph.h_parts[gaps, :5].sum(axis=0)
    out = {part: float(t) for part, t in zip(sg.GAP_PARTS[:5], totals, strict=True)}
    own = graph.h_dur - graph.h_call_profiler
    launching = _launching_call(graph)
    out["launch calls"] = float(own[calls & launching].sum())
    out["other calls"] = float(own[calls & ~launching].sum())
    return out


def _launching_call(graph: StepGraph) -> np.ndarray:
    """The calls a CUDA graph would capture: launches (but blocking copies), event records and
    stream waits."""
    kind = graph.h_kind
    return (kind == sg.LAUNCH) & ~graph.h_blocking | (kind == sg.RECORD) | (kind == sg.WAIT)


def _code(names: list[str], value: str) -> int:
    try:
        return names.index(value)
    except ValueError:
        return -2  # matches no node


def _is_host_copy(graph: StepGraph) -> np.ndarray:
    names = np.array(
        [
            ("HtoD" in n or "DtoH" in n or "Host" in n or "Pageable" in n or "Pinned" in n)
            for n in graph.names
        ]
        + [False],
        dtype=bool,
    )
    return names[graph.g_name]


def _pinned_time(graph: StepGraph, g_dur: np.ndarray) -> np.ndarray:
    """Each copy's time at the best pinned rate of its direction in the trace (else the
    assumed rate)."""
    out = g_dur.copy()
    names = graph.names
    for direction in ("HtoD", "DtoH"):
        in_direction = np.array([direction in n for n in names] + [False], bool)[graph.g_name]
        pinned = in_direction & ~graph.g_pageable & (graph.g_kind == 1) & (graph.g_dur > 0)
        rates = graph.g_bytes[pinned] / graph.g_dur[pinned]
        rates = rates[np.isfinite(rates)]
        rate = float(rates.max()) if len(rates) else PINNED_BYTES_PER_S
        chosen = in_direction & graph.g_pageable & np.isfinite(graph.g_bytes)
        out[chosen] = np.minimum(g_dur[chosen], graph.g_bytes[chosen] / rate)
    return out


def replay(graph: StepGraph, changes: Changes | None = None) -> Timeline:
    """Play ``graph`` forward under ``changes``: each node's start and end, and the span."""
    changes = changes or Changes()
    plan = _plan(graph)
    eff = _effective(graph, changes)
    nh, ng = graph.host_count, graph.gpu_count
    hp, gp = plan.host_perm % max(nh, 1), plan.gpu_perm % max(ng, 1)
    h_gap, h_dur, h_wake = eff["h_gap"][hp], eff["h_dur"][hp], eff["h_wake"][hp]
    h_parts = eff["h_parts"][hp]
    g_dur, g_lag = eff["g_dur"][gp], eff["g_lag"][gp]
    g_gap = np.where(plan.first_gap, graph.typical.get("stream_gap_s", 1e-6), eff["g_gap"][gp])
    g_from_start = eff["g_from_start"][gp]
    awaits = np.tile(eff["awaits"], plan.copies)
    await_host, await_gpu = plan.await_host[awaits], plan.await_gpu[awaits]
    # The awaits of each host node, as a CSR list.
    order = np.argsort(await_host, kind="stable")
    await_host, await_gpu = await_host[order], await_gpu[order]
    h_s = np.full(plan.n_host, -np.inf)
    h_e = np.full(plan.n_host, -np.inf)
    g_s = np.full(plan.n_gpu, -np.inf)
    g_e = np.full(plan.n_gpu, -np.inf)
    main_begin = plan.main_begin[0]
    start_time = graph.h_start[hp[main_begin]] if plan.n_host else 0.0
    handoff_host, handoff_from, handoff_lag = plan.handoff_host, plan.handoff_from, plan.handoff_lag
    wait_gpu, wait_from, wait_lag = plan.wait_gpu, plan.wait_from, plan.wait_lag
    h_prev, g_prev = plan.h_prev, plan.g_prev
    for hosts, gpus, crossing in plan.segments:
        for _ in range(_PASSES if crossing else 1):
            before = (h_e[hosts].copy(), g_e[gpus].copy()) if crossing else None
            # Host chains.
            if len(hosts):
                prev = h_prev[hosts]
                chained = np.zeros(len(hosts), dtype=bool)
                chained[1:] = prev[1:] == hosts[:-1]
                x = np.full(len(hosts), -np.inf)
                known = (prev >= 0) & ~chained
                x[known] = h_e[prev[known]] + h_gap[hosts[known]]
                x[hosts == main_begin] = start_time
                if len(handoff_host):
                    extra = np.full(plan.n_host, -np.inf)
                    np.maximum.at(extra, handoff_host, h_e[handoff_from] + handoff_lag)
                    x = np.maximum(x, extra[hosts])
                inc = np.zeros(len(hosts))
                inc[1:] = h_dur[hosts[:-1]] + h_gap[hosts[1:]]
                s = _chains(inc, x, chained)
                h_s[hosts] = s
                h_e[hosts] = s + h_dur[hosts]
            # GPU chains.
            if len(gpus):
                prev = g_prev[gpus]
                chained = np.zeros(len(gpus), dtype=bool)
                chained[1:] = prev[1:] == gpus[:-1]
                launcher = plan.g_host[gpus]
                x = np.where(g_from_start[gpus], h_s[launcher], h_e[launcher]) + g_lag[gpus]
                known = (prev >= 0) & ~chained
                x[known] = np.maximum(x[known], g_e[prev[known]] + g_gap[gpus[known]])
                if len(wait_gpu):
                    extra = np.full(plan.n_gpu, -np.inf)
                    np.maximum.at(extra, wait_gpu, g_e[wait_from] + wait_lag)
                    x = np.maximum(x, extra[gpus])
                inc = np.zeros(len(gpus))
                inc[1:] = g_dur[gpus[:-1]] + g_gap[gpus[1:]]
                s = _chains(inc, x, chained)
                g_s[gpus] = s
                g_e[gpus] = s + g_dur[gpus]
            # Synchronisations end once what they wait for has ended.
            if len(hosts) and len(await_host):
                lo = np.searchsorted(await_host, hosts, side="left")
                hi = np.searchsorted(await_host, hosts, side="right")
                syncing = hosts[hi > lo]
                if len(syncing):
                    mine = np.concatenate(
                        [np.arange(a, b) for a, b in zip(lo[hi > lo], hi[hi > lo], strict=True)]
                    )
                    ends = np.full(plan.n_host, -np.inf)
                    np.maximum.at(ends, await_host[mine], g_e[await_gpu[mine]])
                    h_e[syncing] = np.maximum(h_e[syncing], ends[syncing] + h_wake[syncing])
            if (
                before is not None
                and np.array_equal(before[0], h_e[hosts])
                and np.array_equal(before[1], g_e[gpus])
            ):
                break
    span, start, end = _span(graph, plan, h_s, h_e, g_s, g_e)
    return Timeline(
        h_s,
        h_e,
        g_s,
        g_e,
        span,
        start,
        end,
        plan,
        {
            "h_parts": h_parts,
            "h_gap": h_gap,
            "h_dur": h_dur,
            "h_wake": h_wake,
            "g_dur": g_dur,
            "g_lag": g_lag,
            "g_gap": g_gap,
            "g_from_start": g_from_start,
            "await_host": await_host,
            "await_gpu": await_gpu,
        },
    )


def _chains(inc: np.ndarray, x: np.ndarray, chained: np.ndarray) -> np.ndarray:
    """Starts of nodes in chain order: s[k] = max(s[k-1] + inc[k], x[k]) where ``chained[k]``,
    else x[k]; all chains at once (a running maximum per chain, by an offset per chain)."""
    if not len(x):
        return x
    group = np.cumsum(~chained) - 1
    total = np.cumsum(np.where(chained, inc, 0.0))
    value = x - total
    finite = np.isfinite(value)
    if not finite.any():
        return x
    width = float(value[finite].max() - value[finite].min()) + 1.0
    running = np.maximum.accumulate(value + group * width) - group * width
    return total + running


def _span(
    graph: StepGraph,
    plan: _Plan,
    h_s: np.ndarray,
    h_e: np.ndarray,
    g_s: np.ndarray,
    g_e: np.ndarray,
) -> tuple[float, float, float]:
    """The replay's span, and where it starts and ends."""
    if graph.mode == "period":
        gpu_end = [
            float(g_e[plan.copy_of_gpu == c].max()) if (plan.copy_of_gpu == c).any() else -np.inf
            for c in range(plan.copies)
        ]
        start = max(float(h_s[plan.main_begin[1]]), gpu_end[0])
        end = max(float(h_e[plan.main_end[1]]), gpu_end[1])
        return end - start, start, end
    if plan.n_gpu:
        start, end = float(g_s.min()), float(g_e.max())
    else:
        start, end = float(h_s.min()), float(h_e.max())
    return end - start, start, end


# --- the critical path ---------------------------------------------------------------------------

_GAP_RESOURCES = ("host op", "host op", "python", "python", "data loader", "profiler")
_GAP_WORDS = (
    "launch path",
    "CPU op",
    "Python between ops",
    "host work outside ops",
    "data loader",
    "profiler overhead",
)


def _walk_start(graph: StepGraph, timeline: Timeline) -> tuple[str, int]:
    """Where the critical path's walk starts: what ended last (``("h", host node)`` or
    ``("g", GPU node)``)."""
    plan, h_e, g_e = timeline.plan, timeline.h_e, timeline.g_e
    if graph.mode == "period":
        in_last = plan.copy_of_gpu == plan.copies - 1
        g_end_last = g_e[in_last].max() if in_last.any() else -np.inf
        return (
            ("h", int(plan.main_end[-1]))
            if h_e[plan.main_end[-1]] >= g_end_last or not in_last.any()
            else ("g", int(np.flatnonzero(in_last)[np.argmax(g_e[in_last])]))
        )
    if plan.n_gpu:
        return ("g", int(np.argmax(g_e)))
    return ("h", int(np.argmax(h_e)))


def _walk_edges(
    timeline: Timeline,
) -> tuple[dict[int, tuple[int, float]], dict[int, list[tuple[int, float]]], dict[int, list[int]]]:
    """The edges the walk follows back besides a node's chain: the host hand-offs (host node ->
    its source and lag), the GPU waits (GPU node -> sources and lags) and the host's waits for
    the GPU (host node -> the GPU nodes it awaited)."""
    plan, eff = timeline.plan, timeline.effective
    handoff = {
        int(h): (int(f), float(lag))
        for h, f, lag in zip(plan.handoff_host, plan.handoff_from, plan.handoff_lag, strict=True)
    }
    waits: dict[int, list[tuple[int, float]]] = {}
    for gpu_node, source, lag in zip(plan.wait_gpu, plan.wait_from, plan.wait_lag, strict=True):
        waits.setdefault(int(gpu_node), []).append((int(source), float(lag)))
    awaits: dict[int, list[int]] = {}
    for host_node, gpu_node in zip(eff["await_host"], eff["await_gpu"], strict=True):
        awaits.setdefault(int(host_node), []).append(int(gpu_node))
    return handoff, waits, awaits


def critical_path(graph: StepGraph, timeline: Timeline) -> pd.DataFrame:
    """The segments that set the span, last first walked back and returned in time order: one
    row per segment with its ``resource`` (host op, python, data loader, profiler, launch,
    sync, GPU kernel, copy, communication, GPU wait, host thread), ``start_s`` (from the span's
    start), ``dur_s``, ``name`` (the kernel, call or op) and ``op``."""
    plan, eff = timeline.plan, timeline.effective
    h_s, h_e, g_s, g_e = timeline.h_s, timeline.h_e, timeline.g_s, timeline.g_e
    nh, ng = graph.host_count, graph.gpu_count
    hp = plan.host_perm % max(nh, 1)
    gp = plan.gpu_perm % max(ng, 1)
    rows: list[tuple[str, Any, Any, str, str]] = []
    lo, hi = timeline.start, timeline.end
    node = _walk_start(graph, timeline)
    handoff, waits, awaits = _walk_edges(timeline)
    eps = 1e-10
    steps = 0
    while node is not None and steps < 4 * (plan.n_host + plan.n_gpu) + 10:
        steps += 1
        side, i = node
        if side == "g":
            j = gp[i]
            kind = graph.g_kind[j]
            category = graph.name(int(graph.g_category[j]))
            resource = (
                "communication"
                if category == "communication"
                else ("GPU kernel" if kind == 0 else "copy" if kind == 1 else "GPU kernel")
            )
            rows.append(
                (
                    resource,
                    g_s[i],
                    g_e[i] - g_s[i],
                    graph.name(int(graph.g_name[j])),
                    graph.name(int(graph.g_op[j])),
                )
            )
            if g_s[i] <= lo + eps:
                break
            launcher = plan.g_host[i]
            anchor = h_s[launcher] if eff["g_from_start"][i] else h_e[launcher]
            options = [(anchor + eff["g_lag"][i], ("h", int(launcher)), "launch")]
            prev = plan.g_prev[i]
            if prev >= 0:
                options.append((g_e[prev] + eff["g_gap"][i], ("g", int(prev)), "stream"))
            for source, lag in waits.get(i, []):
                options.append((g_e[source] + lag, ("g", source), "wait"))
            _, node, how = max(options, key=lambda o: o[0])
            if how == "launch":
                t0 = h_s[launcher] if eff["g_from_start"][i] else h_e[launcher]
                rows.append(
                    (
                        "launch",
                        t0,
                        max(g_s[i] - t0, 0.0),
                        "launch latency",
                        graph.name(int(graph.g_op[j])),
                    )
                )
                # The launch call itself, then the host path before it.
            elif how == "wait":
                rows.append(
                    ("GPU wait", g_e[node[1]], max(g_s[i] - g_e[node[1]], 0.0), "stream wait", "")
                )
            else:
                gap = g_s[i] - g_e[node[1]]
                if gap > 1e-9:
                    rows.append(("GPU kernel", g_e[node[1]], gap, "gap between kernels", ""))
            continue
        j = hp[i]
        kind = int(graph.h_kind[j])
        call_name = graph.name(int(graph.h_name[j]))
        op = graph.name(int(graph.h_op[j]))
        # The end: set by what it waited for, or by its own duration.
        ended_by = None
        for gpu_node in awaits.get(i, []):
            if (
                abs(g_e[gpu_node] + eff["h_wake"][i] - h_e[i]) < 1e-9
                and h_e[i] > h_s[i] + eff["h_dur"][i] + 1e-10
            ):
                ended_by = gpu_node
        if ended_by is not None:
            rows.append(("sync", g_e[ended_by], h_e[i] - g_e[ended_by], call_name, op))
            node = ("g", ended_by)
            continue
        if kind not in (sg.BEGIN, sg.END):
            resource = "sync" if kind == sg.SYNC else "copy" if graph.h_blocking[j] else "launch"
            rows.append((resource, h_s[i], h_e[i] - h_s[i], call_name, op))
        if h_s[i] <= lo + eps and graph.mode != "period":
            break
        prev = plan.h_prev[i]
        options = []
        if prev >= 0:
            options.append((h_e[prev] + eff["h_gap"][i], ("h", int(prev)), "chain"))
        if i in handoff:
            source, lag = handoff[i]
            options.append((h_e[source] + lag, ("h", source), "handoff"))
        if not options:
            break
        _, node, how = max(options, key=lambda o: o[0])
        if how == "handoff":
            rows.append(
                (
                    "host thread",
                    h_e[node[1]],
                    max(h_s[i] - h_e[node[1]], 0.0),
                    "hand-off between threads",
                    op,
                )
            )
        else:
            gap = h_s[i] - h_e[node[1]]
            parts = eff["h_parts"][i]
            total = parts.sum()
            if gap > 1e-12 and total > 0:
                t = h_s[i]
                for part in range(len(parts) - 1, -1, -1):
                    piece = gap * parts[part] / total
                    if piece > 1e-12:
                        t -= piece
                        rows.append((_GAP_RESOURCES[part], t, piece, _GAP_WORDS[part], op))
        if h_e[node[1]] < lo - eps and graph.mode == "period":
            break
    frame = pd.DataFrame(rows, columns=["resource", "start_s", "dur_s", "name", "op"])
    if len(frame):
        # Clipped to the span, from its start, in time order.
        end = np.minimum(frame["start_s"] + frame["dur_s"], hi)
        start = np.maximum(frame["start_s"], lo)
        frame["start_s"], frame["dur_s"] = start - lo, np.maximum(end - start, 0.0)
        frame = frame[frame["dur_s"] > 0].iloc[::-1].reset_index(drop=True)
    return frame


# --- idle time by cause ------------------------------------------------------------------------

IDLE_CAUSES = (
    "launch path",
    "synchronisation",
    "host copy",
    "CPU work",
    "data loader",
    "profiler",
    "another stream",
    "kernel gap",
)


def idle_causes(graph: StepGraph, timeline: Timeline | None = None) -> pd.DataFrame:
    """Each interval of the step's span where the GPU ran nothing, split by what gated it on the
    host: one row per (interval, cause) with ``start_s`` (from the span's start), ``dur_s``,
    ``cause`` (IDLE_CAUSES) and ``op`` (the op the host was in, or the synchronising op). For
    one run (a span from its first GPU work) the host's work before the op that launched that
    work is idle time too, an interval before the span (a negative ``start_s``; its ``op``: that
    op).

    The GPU work that ended the idle interval names what held it: work waiting for another
    stream is "another stream"; otherwise the host thread that launched it, over the interval:
    if a synchronisation of that thread ended within it (the GPU drained while the host waited,
    and the host had to fill it again), all of it is "synchronisation", or "host copy" where
    the synchronisation is a blocking host-to-device copy's own wait; else its time split by
    what the thread did (its calls and the parts of its gaps): the launch path, a host copy, CPU
    work (CPU ops and host work outside ops), the data loader, the profiler."""
    columns = ["start_s", "dur_s", "cause", "op"]
    if timeline is None:
        timeline = replay(graph)
    plan = timeline.plan
    if not plan.n_gpu:
        return pd.DataFrame(columns=columns)
    g_s, g_e, h_s, h_e = timeline.g_s, timeline.g_e, timeline.h_s, timeline.h_e
    lo, hi = timeline.start, timeline.end
    from ..trace.intervals import merge

    busy_s, busy_e = merge(np.clip(g_s, lo, hi), np.clip(g_e, lo, hi))
    gap_s = np.concatenate([[lo], busy_e])
    gap_e = np.concatenate([busy_s, [hi]])
    # One run's span starts at its first GPU work, but the step starts with its host: the host
    # work before the op that launched that work (making a batch on the CPU, a sleep) kept the
    # GPU idle too: an interval before the span (a negative start). That op's own path is left
    # out: it holds the profiler's one-time request for its activity buffers (2-2.5 ms on the
    # H200 traces, recorded as an "overhead" event the trace reader does not keep).
    lead_in = False
    if graph.mode == "latency":
        first_launch = plan.g_host[int(np.argmin(g_s))]
        parts = timeline.effective["h_parts"][first_launch]
        rest = parts[:-1].sum()
        op_path = parts[0] * parts.sum() / rest if rest > 0 else 0.0
        lead_s, lead_e = float(h_s[plan.main_begin[0]]), min(h_s[first_launch] - op_path, lo)
        if lead_e - lead_s > 1e-9:
            gap_s, gap_e = np.r_[lead_s, gap_s], np.r_[lead_e, gap_e]
            lead_in = True
    keep = gap_e - gap_s > 1e-9
    gap_s, gap_e = gap_s[keep], gap_e[keep]
    if not len(gap_s):
        return pd.DataFrame(columns=columns)
    nh = graph.host_count
    hp = plan.host_perm % max(nh, 1)
    # The GPU node that ends each idle interval: the first to start at its end.
    order = np.argsort(g_s, kind="stable")
    at = np.clip(np.searchsorted(g_s[order], gap_e - 1e-9, side="left"), 0, len(order) - 1)
    ender = order[at]
    launcher = plan.g_host[ender]
    thread = graph.h_thread[hp[launcher]]
    waited = np.zeros(len(ender), dtype=bool)
    if len(plan.wait_gpu):
        extra = np.full(plan.n_gpu, -np.inf)
        np.maximum.at(extra, plan.wait_gpu, g_e[plan.wait_from] + plan.wait_lag)
        waited = extra[ender] >= g_s[ender] - 1e-9
    # Each host node's time split into causes: its call, then the gap before it.
    h_thread = graph.h_thread[hp]
    kind = graph.h_kind[hp]
    call_cause = np.where(kind == sg.SYNC, 1, np.where(graph.h_blocking[hp], 2, 0))
    n_causes = len(IDLE_CAUSES)
    call_w = np.zeros((plan.n_host, n_causes))
    call_w[np.arange(plan.n_host), call_cause] = 1.0
    call_w[(kind == sg.BEGIN) | (kind == sg.END)] = 0.0
    parts = graph.h_parts[hp]
    total = parts.sum(axis=1)
    gap_w = np.zeros((plan.n_host, n_causes))
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total[:, None] > 0, parts / np.maximum(total[:, None], 1e-300), 0.0)
    gap_w[:, 0] = share[:, 0] + share[:, 2]  # launch path: dispatch and Python between launches
    gap_w[:, 3] = share[:, 1] + share[:, 3]  # CPU work
    gap_w[:, 4] = share[:, 4]
    gap_w[:, 5] = share[:, 5]
    prev = plan.h_prev
    prev_end = np.where(prev >= 0, h_e[np.maximum(prev, 0)], h_s)
    interval_thread = np.concatenate([h_thread, h_thread])
    interval_start = np.concatenate([h_s, np.minimum(prev_end, h_s)])
    interval_end = np.concatenate([h_e, h_s])
    weights = np.vstack([call_w, gap_w])
    covered = sg.coverage(interval_thread, interval_start, interval_end, weights, thread, gap_e)
    covered -= sg.coverage(interval_thread, interval_start, interval_end, weights, thread, gap_s)
    covered = np.maximum(covered, 0.0)
    length = gap_e - gap_s
    if lead_in:
        covered[0, 0] = 0.0  # the first launching op's path, left out of the lead-in
    # Time the thread's records do not cover (it ran no recorded call or gap): CPU work.
    covered[:, 3] += np.maximum(length - covered.sum(axis=1), 0.0)
    scale = length / np.maximum(covered.sum(axis=1), 1e-300)
    covered *= scale[:, None]
    # A synchronisation of that thread that ended within the interval: all of it is the sync's.
    synced = _last_sync_within(kind == sg.SYNC, h_thread, h_e, thread, gap_s, gap_e)
    copy_wait = _copy_waits(graph, timeline, kind, hp)
    op_of = graph.h_op[hp[launcher]]
    # Work queued behind the work before it on its stream: the idle is the GPU's own gap.
    prev = plan.g_prev[ender]
    gap_after = np.where(
        prev >= 0, g_e[np.maximum(prev, 0)] + timeline.effective["g_gap"][ender], -np.inf
    )
    launched_at = (
        np.where(timeline.effective["g_from_start"][ender], h_s[launcher], h_e[launcher])
        + timeline.effective["g_lag"][ender]
    )
    queued = (gap_after >= g_s[ender] - 1e-9) & (gap_after >= launched_at)
    out_rows = []
    names = graph.names
    for index in range(len(gap_s)):
        start, dur = gap_s[index] - lo, length[index]
        if waited[index]:
            out_rows.append((start, dur, "another stream", ""))
            continue
        if queued[index]:
            out_rows.append((start, dur, "kernel gap", ""))
            continue
        if synced[index] >= 0:
            sync_op = graph.h_op[hp[synced[index]]]
            out_rows.append(
                (
                    start,
                    dur,
                    "host copy" if copy_wait[synced[index]] else "synchronisation",
                    names[sync_op]
                    if sync_op >= 0
                    else graph.name(int(graph.h_name[hp[synced[index]]])),
                )
            )
            continue
        op = names[op_of[index]] if op_of[index] >= 0 else ""
        for cause, seconds in enumerate(covered[index]):
            if seconds > 1e-12:
                out_rows.append((start, seconds, IDLE_CAUSES[cause], op))
    return pd.DataFrame(out_rows, columns=columns)


def _last_sync_within(
    is_sync: np.ndarray,
    h_thread: np.ndarray,
    h_e: np.ndarray,
    thread: np.ndarray,
    gap_s: np.ndarray,
    gap_e: np.ndarray,
) -> np.ndarray:
    """For each idle interval, the last synchronisation of its launching thread that ended
    within it (a host node index), or -1."""
    syncs = np.flatnonzero(is_sync)
    synced = np.full(len(gap_s), -1, dtype=np.int64)
    for t in np.unique(thread) if len(syncs) else ():
        mine = syncs[h_thread[syncs] == t]
        if not len(mine):
            continue
        ends = h_e[mine]
        o = np.argsort(ends)
        rows = np.flatnonzero(thread == t)
        k = np.searchsorted(ends[o], gap_e[rows], side="right") - 1
        ok = (k >= 0) & (ends[o][np.maximum(k, 0)] >= gap_s[rows] - 1e-9)
        synced[rows[ok]] = mine[o][k[ok]]
    return synced


def _copy_waits(
    graph: StepGraph, timeline: Timeline, kind: np.ndarray, hp: np.ndarray
) -> np.ndarray:
    """Per host node: a synchronisation whose last awaited work is a host-to-device copy that
    its call blocked on (a copy from pageable memory: torch's blocking ``.to(device)`` calls the
    copy, then synchronises its stream) is that copy's own wait: the host copy's, not one the
    user wrote. Copies back to the host (``.item()``, ``.cpu()``) are synchronisations: the host
    needs the value."""
    plan, g_e = timeline.plan, timeline.g_e
    copy_wait = np.zeros(plan.n_host, dtype=bool)
    if len(plan.await_host):
        ng = graph.gpu_count
        last = np.full(plan.n_host, -1, dtype=np.int64)
        by_end = np.argsort(g_e[plan.await_gpu], kind="stable")
        last[plan.await_host[by_end]] = plan.await_gpu[by_end]  # the latest-ending one wins
        waits = np.flatnonzero((kind == sg.SYNC) & (last >= 0))
        copy = last[waits]
        to_device = np.array(["HtoD" in n for n in graph.names] + [False], dtype=bool)
        copy_wait[waits] = (
            to_device[graph.g_name[plan.gpu_perm[copy] % ng]]
            & graph.h_blocking[hp[plan.g_host[copy]]]
        )
    return copy_wait
