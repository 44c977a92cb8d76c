"""The step as a graph of dependencies, built from what the trace's tables already hold.

The GPU is asynchronous: the host enqueues work and runs ahead until something makes it wait, and
each stream runs its work in order while streams overlap. So a step is not a sum of times but a
graph, and ``replay`` plays it forward under changes. This module builds the graph of one step
(``build``) and keeps it in a compact form that a report's JSON can carry (``to_dict``).

The nodes and edges, and how each number is made:

- **Host nodes**, one chain per host thread, in time order: a ``begin`` and an ``end`` anchor (the
  thread's first and last event; for the main thread of a profiler step, the step's host range)
  and the CUDA runtime calls that matter: those that launched GPU work (kernels, copies, sets:
  tied to their GPU event by correlation id; a call nested in another counts as the outer one),
  synchronisations (``cudaDeviceSynchronize``, ``cudaStreamSynchronize``,
  ``cudaEventSynchronize``, and their HIP names), event records and stream waits. Other runtime
  calls (``cudaFuncGetAttributes``...) are host work inside their op.
- **The gap before each host node** is host work, split by what the thread was doing (its
  top-level ops and the time between them, intersected with the gap): ``launch`` (ops that
  launched GPU work, themselves or below: dispatch and launch path), ``cpu`` (ops that launched
  nothing), ``glue`` (time outside ops between two launching ops: Python between torch calls),
  ``other`` (time outside ops elsewhere: the user's Python, sleeps), ``loader`` (inside a
  ``DataLoader`` range) and ``profiler``: the profiler's own cost, a node of its own. The
  profiler doubles the time of torch's own host work, so that cost is ``PROFILER_HOST_SHARE`` of
  the time in ops (``launch``, ``cpu``), and of the time outside ops (``glue``, ``other``) at most
  ``RECORD_GAP_S`` for each op that starts in it (its records' unseen ends), plus each memory
  sample's ``PROFILER_PER_SAMPLE_S`` and each launch through the driver API's
  ``PROFILER_PER_DRIVER_LAUNCH_S``; the parts shrink by as much. A call that is a node holds
  the same share of its own duration. On the GPU, each kernel's record costs its stream
  ``PROFILER_PER_KERNEL_S`` (what a chain of small kernels back to back pays).
  Fitted on H200 traces whose steps were also timed with CUDA events without the profiler
  (``bench/profiler_fit.py``; ``bench/causal_check.py`` measures it again).
- **A full launch queue**: a host that runs ahead of the GPU fills the launch queue, and then
  each launch call returns only once a kernel ahead of it has finished. Where the GPU ran more
  than the whole step behind a launch call, the call's time beyond the lower decile of its
  name's calls is that wait, the GPU's pace: it is taken out of the call (``_without_queue_waits``).
- **GPU nodes**, one chain per stream in stream order: each kernel, copy and set, with its
  duration, bound and category (from the analysis' kernel table), op, shapes, module, kind and
  bytes. Each waits for its launch call (from the call's end; from its start where the call
  blocks on it) and for the node before it on its stream.
- **Synchronisations** are edges from the GPU back to the host: a synchronising call ends when the
  work it waits for has ended (all streams for a device synchronisation; the stream of the
  thread's last launch for a stream synchronisation; the stream of the last event record for an
  event synchronisation), plus the host's wake-up. A call that returns only after its own copy
  ended (a blocking or pageable copy, ``.item()``'s copy) waits on that copy.
- **Waits between streams**: ``cudaStreamWaitEvent`` is paired with the thread's last
  ``cudaEventRecord`` before it; the recorded work is the last launched on the stream of the
  thread's last launch before the record, and the waiting stream is that of the thread's next
  launch. A pairing the measured times contradict (the waiting work started before the recorded
  work ended) is dropped.
- **Hand-offs between threads** (the autograd engine's thread, woken by ``backward()``; the main
  thread, woken when it is done): a thread idle for more than ``HANDOFF_IDLE_S`` that resumes
  after another thread ended something within that idle time waits on it. A thread's first node
  without one keeps its offset from the step's start.

Each edge carries a lag calibrated on the measured times, so that the unchanged graph replays to
the measured step: of a GPU node's constraints, the one that set its start (the least slack
beyond the typical launch latency or the typical gap between kernels of a stream, the trace's
medians) keeps its measured lag, the others the smaller of theirs and the typical one.

What the graph cannot see: dependencies the trace does not record (a host thread waiting on a lock
or a queue shows only as a hand-off or idle time), which stream a synchronisation or an event
waits on (inferred as above), the launch queue's depth limit (a replay never fills it again: a
change that makes the GPU slower lets the host run ahead without bound), and host work that
would change because GPU work did (an allocator that frees sooner).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from ..trace.events import Trace
from ..trace.frames import factorize_objects, group_codes
from .steps import STEP_PREFIX

__all__ = ["GRAPH_LIMIT", "StepGraph", "build", "coverage", "host_drift"]

# The profiler's share of the host's time in torch's own work: its ops and its runtime calls.
# With the profiler on (record_shapes=True, CUPTI's callbacks on every CUDA call) that work
# takes about twice as long, and Python that calls no op runs as fast. Fitted on the 90
# captures of bench/data/h200/causal_heldout8 (torch 2.11, an H200 host), whose steps were timed
# by CUDA events without the profiler in the same seconds, and checked on the 102 each of
# causal_heldout9 and causal_heldout10: ``bench/profiler_fit.py`` prints all three;
# ``bench/profiler_share.py`` measures the slowdown of each kind of work directly. Before, the
# cost was an estimate per op measured in the trace (its start to its first child's): that
# moved with the op's name more than with the profiler (1.2 µs a record in a 20-layer MLP,
# 2.7 in four MLP blocks of the same ops) and left host-bound steps 27% (median) above their
# CUDA events.
PROFILER_HOST_SHARE = 0.5
# At most this per recorded op or runtime call: a long op or call (a 10 ms CPU copy, a blocking
# allocation) pays for its records once, not in proportion to its length.
PROFILER_EVENT_CAP_S = 20e-6
# The parts of a host gap (GAP_PARTS) that are time in ops: the share of them is the profiler's.
PROFILED_PARTS = (0, 1)
# The parts that are time outside ops (Python between torch calls, the user's Python): they
# hold the records' unseen ends around each op that starts in them (an exit after its
# timestamp, an entry before its own), at most RECORD_GAP_S an op and the share of the time;
# the rest is the user's and keeps its length.
OUTSIDE_PARTS = (2, 3)
RECORD_GAP_S = 5e-6
# A memory sample (profile_memory=True) costs about this, on top.
PROFILER_PER_SAMPLE_S = 0.6e-6
# A kernel launched through the driver API (cuLaunchKernel, cuLaunchKernelEx: cuDNN, cuBLASLt,
# Triton) comes with driver calls the trace does not show (attribute queries, tensor maps), each
# paying CUPTI's callbacks: this much more of the host's time in the op that launched it. Fitted
# on causal_heldout8 (host-bound captures' profiler=0 median error 6.9% -> 6.2%), checked on the
# ninth and tenth (8.6 -> 7.0%, 8.2 -> 7.3%; bench/profiler_fit.py). One cuDNN attention call
# pays more (bench/profiler_share.py: 3.2x inside a capture, where torch's ops take 2x).
PROFILER_PER_DRIVER_LAUNCH_S = 5e-6
# CUPTI's record of each kernel costs the GPU about this much of its stream's time, whatever the
# kernel's size: kernels back to back ran 0.14-0.19 µs a kernel longer inside a capture than
# outside (a CUDA graph of 200 mul_ of 1k or 4M floats, of mm 8x64x64 fp32 or 2048^3 bf16, and
# eager mul_ behind a long sleep; H200, torch 2.11: bench/profiler_share.py).
PROFILER_PER_KERNEL_S = 0.185e-6
# A CUDA graph's launch records each node it launches: one cudaGraphLaunch of 200 kernels took
# 36-45x as long inside a capture as outside (132-136 µs against 3.0-3.6 µs on one H200 host,
# 253 against 6.6 on a slower one: the ratio holds where the time per node does; same script).
# A launch of more than one node pays this share of its call (the share of other calls, at most
# PROFILER_EVENT_CAP_S, would leave a graph-replaying step host-bound).
GRAPH_LAUNCH_SHARE = 0.97
# A pageable copy's call returns this share of the copy's time before it ends, at most (the
# last chunk's transfer after it was staged).
PAGEABLE_TAIL = 0.02
# A thread idle this long that resumes after another thread ended something was waiting on it.
HANDOFF_IDLE_S = 20e-6
# ``typical``'s keys of the host's speed probes, one per op name (see host_drift), and how often
# an op must be recorded with a child to be one.
PROBE_PREFIX = "probe "
PROBE_SAMPLES = 10
PROBE_OPS = 2
# Past this many nodes (host and GPU) a report's JSON keeps no graph (see Report.to_dict).
GRAPH_LIMIT = 60_000

# A GPU node's gap where no node comes before it on its stream.
NO_GAP = -1.0
# Host node kinds.
BEGIN, END, LAUNCH, SYNC, RECORD, WAIT = range(6)
HOST_KINDS = ("begin", "end", "launch", "sync", "record", "wait")
# The parts of a host gap, in the order of StepGraph.h_parts' columns.
GAP_PARTS = ("launch", "cpu", "glue", "other", "loader", "profiler")
# GPU node kinds.
GPU_KINDS = ("kernel", "memcpy", "memset")

_SYNC = re.compile(r"(cuda|hip)(Device|Stream|Event|Ctx)Synchronize|cuCtxSynchronize")
_RECORD = re.compile(r"(cuda|hip)EventRecord|cuEventRecord")
_WAIT = re.compile(r"(cuda|hip)StreamWaitEvent|cuStreamWaitEvent")
# Old Kineto's GPU-side records of synchronisations (category cuda_sync): not host calls.
_GPU_SIDE = frozenset(("Stream Sync", "Context Sync", "Event Sync", "Stream Wait Event"))
_LOADER = re.compile(r"DataLoader")
_NO_NAME = np.array([None], dtype=object)
# Slack that counts as "started by this constraint" when calibrating (clock rounding).
_SLACK = 3e-6
_DEFAULT_LATENCY_S = 1e-6
_DEFAULT_GAP_S = 1e-6
_DEFAULT_WAKE_S = 2e-6


@dataclass
class StepGraph:
    """One step's dependency graph: arrays per node, edge lists, and the names they point to.

    Times are seconds. Host nodes are sorted by (thread, time), GPU nodes by (stream, time). A
    node's measured start is kept (``h_start``, ``g_start``: from the step's origin) to order the
    replay and to place idle time; everything else is what the replay scales.
    """

    # Host nodes.
    h_thread: np.ndarray  # int: thread code (see ``threads``)
    h_kind: np.ndarray  # int: HOST_KINDS
    h_start: np.ndarray  # measured start
    h_dur: np.ndarray  # the call's own duration, its waits taken out
    h_call_profiler: np.ndarray  # the profiler's share of the call's duration
    h_parts: np.ndarray  # (n, len(GAP_PARTS)): the host work before the node, by part
    h_wake: np.ndarray  # a synchronising call's wake-up after the work it waited for
    h_op: np.ndarray  # int: name code of the op the node belongs to (-1: none)
    h_name: np.ndarray  # int: name code of the call
    h_blocking: np.ndarray  # bool: a copy call that returns after its copy
    # GPU nodes.
    g_stream: np.ndarray
    g_start: np.ndarray
    g_dur: np.ndarray
    g_host: np.ndarray  # int: the host node it waits for (its launch, or the step's begin)
    g_from_start: np.ndarray  # bool: the lag counts from that node's start, not its end
    g_lag: np.ndarray  # the launch lag
    g_gap: np.ndarray  # the gap after the node before it on its stream (-1: none before)
    g_kind: np.ndarray  # int: GPU_KINDS
    g_bound: np.ndarray  # int: name code of the bound (compute, memory, overhead, other)
    g_category: np.ndarray  # int: name code of the category (matmul, conv, host copy...)
    g_op: np.ndarray  # int: name code of the op that owns it (-1: none)
    g_shapes: np.ndarray  # int: name code of that op's input shapes
    g_module: np.ndarray  # int: name code of its module path
    g_name: np.ndarray  # int: name code of the kernel
    g_bytes: np.ndarray  # copies and sets: bytes (NaN for kernels)
    g_pageable: np.ndarray  # bool: a copy to or from pageable host memory
    # Edges: a synchronising call waits for GPU nodes; a thread's node for another thread's;
    # a GPU node for one on another stream.
    await_host: np.ndarray
    await_gpu: np.ndarray
    handoff_host: np.ndarray
    handoff_from: np.ndarray
    handoff_lag: np.ndarray
    wait_gpu: np.ndarray
    wait_from: np.ndarray
    wait_lag: np.ndarray
    names: list[str]
    threads: list[str]  # "pid/tid" of each thread code
    # The span: "latency" (one run: first GPU start to last GPU end) or "period" (a profiler
    # step of a loop: its window, replayed as two steps in a row); the measured span it replays.
    mode: str = "latency"
    measured_s: float = 0.0
    main_thread: int = 0
    typical: dict[str, float] = field(default_factory=dict)

    @property
    def host_count(self) -> int:
        return len(self.h_kind)

    @property
    def gpu_count(self) -> int:
        return len(self.g_dur)

    @property
    def size(self) -> int:
        return self.host_count + self.gpu_count

    def name(self, code: int) -> str:
        return self.names[code] if 0 <= code < len(self.names) else ""

    # --- the compact JSON form -----------------------------------------------------------------

    def to_dict(self) -> dict:
        """The graph in JSON: each array as a text of comma-separated whole numbers (times in
        units of 10 ns, booleans as 0 and 1, missing bytes as -1), names as codes into one list.
        About 15 numbers per GPU node and 12 per host node."""
        out: dict[str, Any] = {"schema": "jupyter_brrr.step_graph", "version": 1}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "h_call_profiler":
                continue  # derived from the calls' durations (call_profiler)
            if isinstance(value, np.ndarray):
                out[f.name] = _encode(f.name, value)
            else:
                out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, doc: dict) -> StepGraph:
        """Read ``to_dict``'s form; a malformed one raises ValueError naming the field."""
        if not isinstance(doc, dict) or doc.get("schema") != "jupyter_brrr.step_graph":
            raise ValueError("graph: not a step graph (no 'schema': 'jupyter_brrr.step_graph')")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "h_call_profiler":
                continue
            if f.name not in doc:
                if f.name == "typical":
                    continue
                raise ValueError(f"graph.{f.name}: missing")
            raw = doc[f.name]
            if f.name in _ARRAY_KINDS:
                try:
                    values[f.name] = _decode(f.name, raw)
                except (TypeError, ValueError) as error:
                    raise ValueError(f"graph.{f.name}: {error}") from None
            else:
                values[f.name] = raw
        if "h_kind" in values and "h_dur" in values:
            values["h_call_profiler"] = call_profiler(
                values["h_kind"], values["h_dur"], _launched(values.get("g_host"), values["h_kind"])
            )
        graph = cls(**values)
        graph.check()
        return graph

    def check(self) -> None:
        """Raise ValueError unless the arrays agree in length and every link points inside."""
        n_host, n_gpu = self.host_count, self.gpu_count
        for name in _ARRAY_KINDS:
            size = {"h_": n_host, "g_": n_gpu}.get(name[:2])
            value = getattr(self, name)
            if size is not None and len(value) != size:
                raise ValueError(f"graph.{name}: {len(value)} values for {size} nodes")
        if self.h_parts.shape != (n_host, len(GAP_PARTS)):
            raise ValueError("graph.h_parts: not one row of parts per host node")
        for name, size in (
            ("g_host", n_host),
            ("await_host", n_host),
            ("await_gpu", n_gpu),
            ("handoff_host", n_host),
            ("handoff_from", n_host),
            ("wait_gpu", n_gpu),
            ("wait_from", n_gpu),
        ):
            value = getattr(self, name)
            if len(value) and (value.min() < 0 or value.max() >= size):
                raise ValueError(f"graph.{name}: a link outside the graph")
        if len(self.await_host) != len(self.await_gpu):
            raise ValueError("graph.await_host: not as long as await_gpu")
        if not (len(self.handoff_host) == len(self.handoff_from) == len(self.handoff_lag)):
            raise ValueError("graph.handoff_host: the hand-off lists differ in length")
        if not (len(self.wait_gpu) == len(self.wait_from) == len(self.wait_lag)):
            raise ValueError("graph.wait_gpu: the wait lists differ in length")
        if self.mode not in ("latency", "period"):
            raise ValueError(f"graph.mode: {self.mode!r}, expected 'latency' or 'period'")
        if self.host_count and not (0 <= self.main_thread < len(self.threads)):
            raise ValueError("graph.main_thread: not one of its threads")


# How each array is kept in JSON: "t" times (whole ns), "i" integers, "b" booleans, "f" floats.
_ARRAY_KINDS = {
    **dict.fromkeys(("h_start", "h_dur", "h_call_profiler", "h_wake", "h_parts"), "t"),
    **dict.fromkeys(("h_thread", "h_kind", "h_op", "h_name"), "i"),
    "h_blocking": "b",
    **dict.fromkeys(("g_start", "g_dur", "g_lag", "g_gap"), "t"),
    **dict.fromkeys(("g_stream", "g_host", "g_kind", "g_bound", "g_category"), "i"),
    **dict.fromkeys(("g_op", "g_shapes", "g_module", "g_name"), "i"),
    "g_from_start": "b",
    "g_pageable": "b",
    "g_bytes": "f",
    **dict.fromkeys(("await_host", "await_gpu", "handoff_host", "handoff_from"), "i"),
    **dict.fromkeys(("wait_gpu", "wait_from"), "i"),
    **dict.fromkeys(("handoff_lag", "wait_lag"), "t"),
}


# Times are kept in units of 10 ns: a replay sums thousands of them, and the rounding errors of
# a few ns cancel out.
_TIME_UNIT = 1e-8


def _encode(name: str, value: np.ndarray) -> str:
    """An array as text: its numbers joined by commas (a JSON list spends a space on each)."""
    kind = _ARRAY_KINDS[name]
    if kind == "t":
        value = np.rint(value / _TIME_UNIT).astype(np.int64)
    elif kind == "f":
        value = np.where(np.isnan(value), -1, np.rint(value)).astype(np.int64)
    return ",".join(map(str, np.ravel(value).astype(np.int64).tolist()))


def _decode(name: str, raw: Any) -> np.ndarray:
    if not isinstance(raw, str):
        raise TypeError("expected a text of comma-separated whole numbers")
    try:
        value = np.array(raw.split(",") if raw else [], dtype=np.int64)
    except ValueError:
        raise ValueError("expected a text of comma-separated whole numbers") from None
    kind = _ARRAY_KINDS[name]
    if kind == "t":
        times = value * _TIME_UNIT
        return times.reshape(-1, len(GAP_PARTS)) if name == "h_parts" else times
    if kind == "b":
        return value.astype(bool)
    if kind == "f":
        return np.where(value < 0, np.nan, value.astype(np.float64))
    return value


# --- building ------------------------------------------------------------------------------------


class _Names:
    """Distinct strings, numbered in the order they are first asked for."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def of(self, values: np.ndarray) -> np.ndarray:
        codes, distinct = factorize_objects(np.asarray(values, dtype=object))
        table = np.array(
            [
                self.codes.setdefault(str(v), len(self.codes)) if v is not None else -1
                for v in distinct
            ]
            + [-1],
            dtype=np.int64,
        )
        return table[codes]

    def one(self, value: str) -> int:
        return self.codes.setdefault(value, len(self.codes))

    def list(self) -> list[str]:
        return list(self.codes)


@dataclass
class _Calls:
    """The trace's host runtime calls, sorted by (thread, start, longest first), and the
    threads of its host events."""

    thread: np.ndarray
    start: np.ndarray
    end: np.ndarray
    name: np.ndarray
    kind: np.ndarray  # HOST_KINDS of the calls that are nodes, -1 for the others
    of_event: np.ndarray  # each GPU event's (outermost) launch call, a position, or -1
    op_thread: np.ndarray  # each op's thread code
    threads: list[str]
    main: int


@dataclass
class _Host:
    """The host nodes, sorted by (thread, time), as measured."""

    thread: np.ndarray
    kind: np.ndarray
    start: np.ndarray
    end: np.ndarray
    name_text: np.ndarray
    node_of_call: np.ndarray  # the node of each sorted call (-1: folded into a gap)
    begin_node: np.ndarray  # each thread's begin anchor
    same_thread_before: np.ndarray
    prev_end: np.ndarray
    gap: np.ndarray


@dataclass
class _Gpu:
    """The GPU nodes, sorted by (stream, start), and their links to the host nodes."""

    stream: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dur: np.ndarray
    host: np.ndarray
    kind: np.ndarray
    names_text: np.ndarray
    pageable: np.ndarray
    bytes: np.ndarray
    labels: dict[str, np.ndarray]
    tail: np.ndarray  # how long before its copy ended a copy's call may return
    blocking_event: np.ndarray
    from_start: np.ndarray
    orphan: np.ndarray


def build(
    trace: Trace,
    kernels: pd.DataFrame | None = None,
    *,
    host_range: tuple[float, float] | None = None,
    measured_s: float | None = None,
) -> StepGraph | None:
    """The dependency graph of the step ``trace`` holds (a whole trace of one run, or one
    profiler step's part: ``steps.step_trace``).

    ``kernels`` is the analysis' kernel table of that trace (its ``event`` column indexes
    ``trace.gpu_columns()``): each GPU node's bound, category, op, module. ``host_range`` (trace
    time) marks a profiler step of a loop: the graph is then replayed as a period (``mode``
    "period"), with the main thread's anchors at the range's ends. ``measured_s`` is the span
    the graph should replay to (the step's window, or the trace's span); computed from the
    trace where not given. None where the trace holds no host event (no op, no runtime call).
    """
    if not len(trace.ops) and not len(trace.runtime):  # GPU events alone: nothing to model
        return None
    names = _Names()
    calls = _runtime_calls(trace)
    host = _host_nodes(trace, calls, host_range)
    parts = _host_parts(trace, calls, host)
    gpu = _gpu_nodes(trace, kernels, calls, host)
    n_host = len(host.kind)
    h_blocking = np.zeros(n_host, dtype=bool)
    h_blocking[gpu.host[gpu.blocking_event]] = True
    await_host, await_gpu = _sync_edges(host, gpu, h_blocking)
    h_dur, h_wake, typical_wake = _calibrated_calls(host, gpu, h_blocking, await_host, await_gpu)
    h_dur = _without_queue_waits(host, gpu, h_dur)
    wait_gpu, wait_from = _stream_waits(host, gpu)
    g_lag, g_gap, wait_lag, latency, stream_gap = _calibrated_lags(gpu, host, wait_gpu, wait_from)
    main = calls.main
    handoff_host, handoff_from, handoff_lag = _handoffs(
        host.thread,
        host.kind,
        host.start,
        host.end,
        host.prev_end,
        host.same_thread_before,
        host.gap,
        main,
        host.begin_node,
        len(calls.threads),
    )
    woken = handoff_host[handoff_from != host.begin_node[main]] if calls.threads else handoff_host
    parts[woken] = 0.0  # the idle before a hand-off is a wait, not host work

    if measured_s is None:
        if len(gpu.dur):
            measured_s = float(gpu.end.max() - gpu.start.min())
        else:
            measured_s = float(host.end.max() - host.start.min()) if n_host else 0.0
    origin = float(
        min(host.start.min() if n_host else np.inf, gpu.start.min() if len(gpu.dur) else np.inf)
    )
    op_names = trace.ops["name"].to_numpy(dtype=object)
    op_start = trace.ops["start_s"].to_numpy(dtype=float)
    op_end = trace.ops["end_s"].to_numpy(dtype=float)
    is_top = trace.ops["parent"].to_numpy() < 0
    # The op each node belongs to: the top-level op around the call.
    top_of_time = _enclosing_top(calls.op_thread, op_start, op_end, is_top, host.thread, host.start)
    labels = gpu.labels
    return StepGraph(
        h_thread=host.thread.astype(np.int64),
        h_kind=host.kind.astype(np.int64),
        h_start=host.start - origin,
        h_dur=h_dur,
        h_call_profiler=call_profiler(host.kind, h_dur, _launched(gpu.host, host.kind)),
        h_parts=parts,
        h_wake=h_wake,
        h_op=names.of(np.append(op_names, _NO_NAME)[top_of_time]),  # -1: no op
        h_name=names.of(host.name_text),
        h_blocking=h_blocking,
        g_stream=gpu.stream,
        g_start=gpu.start - origin,
        g_dur=gpu.dur,
        g_host=gpu.host.astype(np.int64),
        g_from_start=gpu.from_start,
        g_lag=np.where(np.isfinite(g_lag), g_lag, 0.0),
        g_gap=g_gap,
        g_kind=gpu.kind.astype(np.int64),
        g_bound=names.of(labels["bound"]),
        g_category=names.of(labels["category"]),
        g_op=names.of(labels["op"]),
        g_shapes=names.of(labels["shapes"]),
        g_module=names.of(labels["module"]),
        g_name=names.of(gpu.names_text),
        g_bytes=gpu.bytes,
        g_pageable=gpu.pageable,
        await_host=await_host,
        await_gpu=await_gpu,
        handoff_host=handoff_host,
        handoff_from=handoff_from,
        handoff_lag=handoff_lag,
        wait_gpu=wait_gpu,
        wait_from=wait_from,
        wait_lag=wait_lag,
        names=names.list(),
        threads=calls.threads,
        mode="period" if host_range is not None else "latency",
        measured_s=float(measured_s),
        main_thread=main,
        typical={
            "launch_latency_s": latency,
            "stream_gap_s": stream_gap,
            "wake_s": typical_wake,
            **_probes(trace.ops),
        },
    )


def _runtime_calls(trace: Trace) -> _Calls:
    """The host's runtime calls in (thread, start) order, which of them are nodes (launches,
    synchronisations, event records, stream waits), and the main thread."""
    ops, runtime = trace.ops, trace.runtime
    call_names = runtime["name"].to_numpy(dtype=object)
    host_call = ~np.isin(call_names, list(_GPU_SIDE))
    rt = {c: runtime[c].to_numpy()[host_call] for c in ("pid", "tid", "start_s", "end_s")}
    correlation = runtime["correlation"].to_numpy()[host_call]
    call_names = call_names[host_call]
    pids = np.concatenate([ops["pid"].to_numpy(), rt["pid"]])
    tids = np.concatenate([ops["tid"].to_numpy(), rt["tid"]])
    thread_codes, first = group_codes(pids, tids)
    threads = [f"{pids[row]}/{tids[row]}" for row in first]
    op_thread, call_thread = thread_codes[: len(ops)], thread_codes[len(ops) :]
    # The main thread: the step's (its ProfilerStep range), else the first event's.
    main = 0
    if len(first):
        starts = np.concatenate([ops["start_s"].to_numpy(dtype=float), rt["start_s"]])
        main = int(thread_codes[np.argmin(starts)])
        annotations = trace.annotations
        step_rows = annotations[
            annotations["name"].astype(str).str.startswith(STEP_PREFIX)
            & (annotations["where"] == "host")
        ]
        if len(step_rows):
            key = f"{step_rows['pid'].iloc[0]}/{step_rows['tid'].iloc[0]}"
            if key in threads:
                main = threads.index(key)
    # Outermost first: a call nested in another (cudaLaunchKernel inside cuLaunchKernel's
    # caller) counts as the outer one.
    order = np.lexsort((-(rt["end_s"] - rt["start_s"]), rt["start_s"], call_thread))
    c_thread = call_thread[order]
    c_start, c_end = rt["start_s"][order], rt["end_s"][order]
    c_name = call_names[order]
    outer = _outermost(c_thread, c_start, c_end)  # each call's outermost call (a position)
    gpu_corr = np.concatenate(
        [trace.kernels["correlation"].to_numpy(float), trace.copies["correlation"].to_numpy(float)]
    )
    of_event = _positions_of(gpu_corr, correlation[order].astype(float))
    of_event = np.where(of_event >= 0, outer[np.maximum(of_event, 0)], -1)
    launches = np.zeros(len(c_start), dtype=bool)
    launches[of_event[of_event >= 0]] = True
    kind = np.full(len(c_start), -1, dtype=np.int64)
    kind[launches] = LAUNCH
    distinct = pd.unique(c_name)
    for pattern, node_kind in ((_SYNC, SYNC), (_RECORD, RECORD), (_WAIT, WAIT)):
        matching = [n for n in distinct if isinstance(n, str) and pattern.search(n)]
        if matching:
            chosen = np.isin(c_name, matching) & (outer == np.arange(len(outer)))
            kind[chosen & ~launches] = node_kind
    return _Calls(
        thread=c_thread,
        start=c_start,
        end=c_end,
        name=c_name,
        kind=kind,
        of_event=of_event,
        op_thread=op_thread,
        threads=threads,
        main=main,
    )


def _host_nodes(trace: Trace, calls: _Calls, host_range: tuple[float, float] | None) -> _Host:
    """Each thread's anchors (its first and last event; the main thread's at the step's host
    range) and the calls that are nodes, per thread in time order."""
    n_threads = len(calls.threads)
    op_start = trace.ops["start_s"].to_numpy(dtype=float)
    op_end = trace.ops["end_s"].to_numpy(dtype=float)
    thread_begin = np.full(n_threads, np.inf)
    thread_end = np.full(n_threads, -np.inf)
    np.minimum.at(thread_begin, calls.op_thread, op_start)
    np.maximum.at(thread_end, calls.op_thread, op_end)
    np.minimum.at(thread_begin, calls.thread, calls.start)
    np.maximum.at(thread_end, calls.thread, calls.end)
    if host_range is not None and n_threads:
        thread_begin[calls.main] = min(host_range[0], thread_begin[calls.main])
        thread_end[calls.main] = max(host_range[1], thread_end[calls.main])
    node_calls = np.flatnonzero(calls.kind >= 0)
    every = np.arange(n_threads)
    thread = np.concatenate([every, calls.thread[node_calls], every])
    kind = np.concatenate(
        [np.full(n_threads, BEGIN), calls.kind[node_calls], np.full(n_threads, END)]
    )
    start = np.concatenate([thread_begin, calls.start[node_calls], thread_end])
    end = np.concatenate([thread_begin, calls.end[node_calls], thread_end])
    name_text = np.concatenate(
        [
            np.full(n_threads, "(thread begins)", object),
            calls.name[node_calls],
            np.full(n_threads, "(thread ends)", object),
        ]
    )
    # Sorted by thread, then time; a begin anchor first and an end anchor last of its thread.
    rank = np.concatenate([np.zeros(n_threads), np.ones(len(node_calls)), np.full(n_threads, 2)])
    order = np.lexsort((rank, start, thread)) if len(thread) else np.zeros(0, np.int64)
    thread, kind, start, end, name_text = (
        thread[order],
        kind[order],
        start[order],
        end[order],
        name_text[order],
    )
    node_of_call = np.full(len(calls.start), -1, dtype=np.int64)
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    node_of_call[node_calls] = position[n_threads : n_threads + len(node_calls)]
    same_thread_before = np.zeros(len(kind), dtype=bool)
    same_thread_before[1:] = thread[1:] == thread[:-1]
    prev_end = np.where(same_thread_before, np.roll(end, 1), start)
    gap = np.maximum(start - prev_end, 0.0)
    gap[~same_thread_before] = 0.0
    return _Host(
        thread=thread,
        kind=kind,
        start=start,
        end=end,
        name_text=name_text,
        node_of_call=node_of_call,
        begin_node=position[:n_threads],
        same_thread_before=same_thread_before,
        prev_end=prev_end,
        gap=gap,
    )


def _host_parts(trace: Trace, calls: _Calls, host: _Host) -> np.ndarray:
    """The host work in the gap before each node, by part (GAP_PARTS): the profiler's part
    taken out of torch's work (``PROFILER_HOST_SHARE``) and the memory samples."""
    ops = trace.ops
    op_start = ops["start_s"].to_numpy(dtype=float)
    op_end = ops["end_s"].to_numpy(dtype=float)
    is_top = ops["parent"].to_numpy() < 0
    launched_top = np.zeros(len(ops), dtype=bool)
    launching_op = trace.gpu_columns()["op"]
    launched_top[ops["top"].to_numpy()[launching_op[launching_op >= 0]]] = True
    parts = _gap_parts(
        trace,
        calls.op_thread,
        op_start,
        op_end,
        is_top,
        launched_top,
        calls.threads,
        host.thread,
        host.prev_end,
        host.start,
        len(calls.threads),
    )
    in_ops, outside = list(PROFILED_PARTS), list(OUTSIDE_PARTS)
    in_ops_s, outside_s = parts[:, in_ops].sum(axis=1), parts[:, outside].sum(axis=1)
    # The profiler's cost in each gap: its share of the time in ops, the records' ends of the
    # ops that start in the gap, and the memory samples.
    ops_in = _count_in(calls.op_thread, op_start, host.thread, host.prev_end, host.start)
    folded = calls.kind < 0
    events_in = ops_in + _count_in(
        calls.thread[folded], calls.start[folded], host.thread, host.prev_end, host.start
    )
    # A long op (a CPU tensor's conversion) pays for its records once, not for its length.
    from_ops = np.minimum(PROFILER_HOST_SHARE * in_ops_s, PROFILER_EVENT_CAP_S * events_in)
    memory_times = trace.memory["start_s"].to_numpy(float) if len(trace.memory) else np.zeros(0)
    if len(memory_times) and calls.threads:
        # A sample has no thread: counted on the main thread, where allocations mostly are.
        samples = _count_in(
            np.full(len(memory_times), calls.main),
            memory_times,
            host.thread,
            host.prev_end,
            host.start,
        )
        from_ops = np.minimum(from_ops + samples * PROFILER_PER_SAMPLE_S, in_ops_s)
    # A launch through the driver API brings driver calls the trace does not show.
    driver = _driver_launches(host)
    from_ops = np.minimum(from_ops + PROFILER_PER_DRIVER_LAUNCH_S * driver, in_ops_s)
    from_outside = np.minimum(PROFILER_HOST_SHARE * outside_s, RECORD_GAP_S * ops_in)
    with np.errstate(invalid="ignore", divide="ignore"):
        parts[:, in_ops] *= np.where(in_ops_s > 0, 1.0 - from_ops / in_ops_s, 0.0)[:, None]
        parts[:, outside] *= np.where(outside_s > 0, 1.0 - from_outside / outside_s, 1.0)[:, None]
    parts = np.column_stack([parts, from_ops + from_outside])
    parts[~host.same_thread_before] = 0.0
    return parts


def _driver_launches(host: _Host) -> np.ndarray:
    """Which host nodes are launches through CUDA's driver API (``cuLaunch...``)."""
    codes, distinct = factorize_objects(np.asarray(host.name_text, dtype=object))
    verdict = np.array(
        [isinstance(name, str) and name.startswith("cuLaunch") for name in distinct] + [False]
    )
    return verdict[codes] & (host.kind == LAUNCH)


def _gpu_nodes(trace: Trace, kernels: pd.DataFrame | None, calls: _Calls, host: _Host) -> _Gpu:
    """The GPU events per stream in time order, each tied to its launch call's node; which
    copies the call waited for (blocking copies); the events no call of the step launched."""
    gpu = trace.gpu_columns()
    stream_all = gpu["stream"].astype(np.int64)
    order = np.lexsort((gpu["start_s"], stream_all))
    start = gpu["start_s"][order].astype(float)
    end = gpu["end_s"][order].astype(float)
    dur = np.maximum(end - start, 0.0)
    call = calls.of_event[order]
    node = np.where(call >= 0, host.node_of_call[np.maximum(call, 0)], -1)
    kind = np.select([gpu["kind"][order] == "memcpy", gpu["kind"][order] == "memset"], [1, 2], 0)
    names_text = gpu["name"][order]
    pageable = np.array([isinstance(n, str) and "Pageable" in n for n in names_text], dtype=bool)
    nbytes = np.concatenate(
        [np.full(len(trace.kernels), np.nan), trace.copies["bytes"].to_numpy(float)]
    )[order]
    # Blocking calls: a copy call that returns after its copy ended. A copy from or to pageable
    # memory is staged through a pinned buffer by the call itself, chunk by chunk: the call
    # returns once the last chunk is staged, a little before its transfer ends (6 us of a 20 ms
    # copy on the H200), and the host waited for all the rest.
    call_end = np.where(node >= 0, host.end[np.maximum(node, 0)], -np.inf)
    call_start = np.where(node >= 0, host.start[np.maximum(node, 0)], np.inf)
    tail = np.where(pageable & (kind == 1), 1e-6 + PAGEABLE_TAIL * dur, 1e-6)
    blocking_event = (node >= 0) & (kind == 1) & (call_end >= end - tail) & (end > call_start)
    # Events no call in this step launched (a graph's kernels without correlation, work of an
    # earlier step): held at their offset from the step's begin.
    orphan = node < 0
    node[orphan] = host.begin_node[calls.main] if calls.threads else 0
    return _Gpu(
        stream=stream_all[order],
        start=start,
        end=end,
        dur=dur,
        host=node,
        kind=kind,
        names_text=names_text,
        pageable=pageable,
        bytes=nbytes,
        labels=_gpu_labels(trace, kernels, order, len(start)),
        tail=tail,
        blocking_event=blocking_event,
        from_start=blocking_event | orphan,
        orphan=orphan,
    )


def _sync_edges(host: _Host, gpu: _Gpu, h_blocking: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which GPU nodes each synchronising call (and each blocking copy's call) waits for."""
    launch_time = host.start[gpu.host]  # when each GPU node was launched
    last_stream = _last_launch_stream(host.thread, host.kind, gpu.host, gpu.stream, len(host.kind))
    streams = np.unique(gpu.stream)
    first = np.searchsorted(gpu.stream, streams)
    last = np.searchsorted(gpu.stream, streams, side="right")
    record_stream = np.full(len(host.kind), -1, dtype=np.int64)
    records = np.flatnonzero(host.kind == RECORD)
    record_stream[records] = last_stream[records]
    last_record = _last_of_kind(host.thread, host.kind == RECORD)
    hosts: list[int] = []
    found_gpu: list[int] = []
    for node in np.flatnonzero((host.kind == SYNC) | h_blocking).tolist():
        name = host.name_text[node]
        if h_blocking[node]:
            own = np.flatnonzero(gpu.blocking_event & (gpu.host == node)).tolist()
        elif "Stream" in name and last_stream[node] >= 0:
            own = _last_launched(
                gpu.stream,
                launch_time,
                streams,
                first,
                last,
                [int(last_stream[node])],
                host.start[node],
            )
        elif "Event" in name and last_record[node] >= 0 and record_stream[last_record[node]] >= 0:
            record = last_record[node]
            own = _last_launched(
                gpu.stream,
                launch_time,
                streams,
                first,
                last,
                [int(record_stream[record])],
                host.start[record],
            )
        else:
            own = _last_launched(
                gpu.stream, launch_time, streams, first, last, streams.tolist(), host.start[node]
            )
        hosts += [node] * len(own)
        found_gpu += own
    await_host = np.asarray(hosts, dtype=np.int64)
    await_gpu = np.asarray(found_gpu, dtype=np.int64)
    # A wait the measured times contradict (the call returned before that work ended) is none.
    if len(await_host):
        slack = np.where(gpu.tail[await_gpu] > 1e-6, gpu.tail[await_gpu], 1e-7)
        holds = gpu.end[await_gpu] <= host.end[await_host] + slack
        await_host, await_gpu = await_host[holds], await_gpu[holds]
    return await_host, await_gpu


def _calibrated_calls(
    host: _Host, gpu: _Gpu, h_blocking: np.ndarray, await_host: np.ndarray, await_gpu: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Each call's own duration, its waits taken out, and each synchronising call's wake-up
    after the work it waited for; the typical wake-up."""
    n_host = len(host.kind)
    h_dur = np.maximum(host.end - host.start, 0.0)
    h_wake = np.zeros(n_host)
    awaited_end = np.full(n_host, -np.inf)
    if len(await_host):
        np.maximum.at(awaited_end, await_host, gpu.end[await_gpu])
    waited = awaited_end > host.start + 1e-7
    wake = np.maximum(host.end - awaited_end, 0.0)
    typical_wake = float(np.median(wake[waited])) if waited.any() else _DEFAULT_WAKE_S
    # A pageable copy's call returns a little before its copy ends: a wake-up below zero.
    wake = np.where(h_blocking, host.end - awaited_end, wake)
    syncing = np.isfinite(awaited_end)
    no_wait = syncing & ~waited
    typical_call = float(np.median(h_dur[no_wait])) if no_wait.any() else _DEFAULT_WAKE_S
    h_wake[waited] = wake[waited]
    h_dur[waited] = np.minimum(h_dur[waited], typical_call)
    h_wake[no_wait] = np.minimum(host.end[no_wait] - awaited_end[no_wait], typical_wake)
    return h_dur, h_wake, typical_wake


def _without_queue_waits(host: _Host, gpu: _Gpu, h_dur: np.ndarray) -> np.ndarray:
    """Launch calls without the time they waited for room in a full launch queue.

    A host that runs ahead of the GPU fills the launch queue, and from then on each launch call
    returns only once a kernel ahead of it has finished: the host's step takes as long as the
    GPU's, in launch calls of tens to hundreds of microseconds (ResNet-50 at batch 256 on the
    H200: a median of 39 µs, up to 1.4 ms, against 6 µs on the same host a step later in bf16).
    That wait is the GPU's pace, not host work: it goes, and the replay lets the host run ahead
    while the GPU sets the span. A call waited so where the GPU ran more than the whole step
    behind it (its GPU work started later after the call than the step's host time: the queue
    held more than a step) and where that backlog covers the call's excess; its own cost is the
    lower decile of its name's launch calls in the step (those that found room at once)."""
    is_launch = host.kind == LAUNCH
    if not is_launch.any() or not len(gpu.dur):
        return h_dur
    first_start = np.full(len(host.kind), np.inf)
    launched = ~gpu.orphan
    np.minimum.at(first_start, gpu.host[launched], gpu.start[launched])
    backlog = first_start - host.end
    step_host = float(host.end.max() - host.start.min())
    behind = is_launch & np.isfinite(backlog) & (backlog > step_host)
    if not behind.any():
        return h_dur
    out = h_dur.copy()
    names = host.name_text
    for name in pd.unique(names[behind]):
        mine = is_launch & (names == name)
        floor = float(np.percentile(h_dur[mine], 10))
        chosen = behind & (names == name) & (backlog >= h_dur - floor)
        out[chosen] = np.minimum(h_dur[chosen], floor)
    return out


def _stream_waits(host: _Host, gpu: _Gpu) -> tuple[np.ndarray, np.ndarray]:
    """Each ``cudaStreamWaitEvent``'s edge: the first node launched on the waiting stream after
    it waits for the last node of the recorded stream before the paired record."""
    n_host = len(host.kind)
    launch_time = host.start[gpu.host]
    last_stream = _last_launch_stream(host.thread, host.kind, gpu.host, gpu.stream, n_host)
    next_stream = _next_launch_stream(host.thread, host.kind, gpu.host, gpu.stream, n_host)
    record_stream = np.full(n_host, -1, dtype=np.int64)
    records = np.flatnonzero(host.kind == RECORD)
    record_stream[records] = last_stream[records]
    last_record = _last_of_kind(host.thread, host.kind == RECORD)
    streams = np.unique(gpu.stream)
    first = np.searchsorted(gpu.stream, streams)
    last = np.searchsorted(gpu.stream, streams, side="right")
    waiting, recorded_by = [], []
    for node in np.flatnonzero(host.kind == WAIT).tolist():
        record = last_record[node]
        if record < 0 or record_stream[record] < 0 or next_stream[node] < 0:
            continue
        source, target = int(record_stream[record]), int(next_stream[node])
        if source == target:
            continue
        recorded = _last_launched(
            gpu.stream, launch_time, streams, first, last, [source], host.start[record]
        )
        if not recorded:
            continue
        at = int(np.searchsorted(streams, target))
        lo, hi = first[at], last[at]
        after = lo + int(np.searchsorted(launch_time[lo:hi], host.start[node], side="right"))
        if after < hi and gpu.start[after] >= gpu.end[recorded[0]] - 1e-7:
            waiting.append(after)
            recorded_by.append(recorded[0])
    return np.asarray(waiting, dtype=np.int64), np.asarray(recorded_by, dtype=np.int64)


def _calibrated_lags(
    gpu: _Gpu, host: _Host, wait_gpu: np.ndarray, wait_from: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Each GPU node's launch lag and stream gap, and each stream wait's lag: of a node's
    constraints, the one that set its start keeps its measured lag, the others the smaller of
    theirs and the typical one; the typical launch latency and stream gap."""
    n_gpu = len(gpu.dur)
    anchor = np.where(gpu.from_start, host.start[gpu.host], host.end[gpu.host])
    slack_launch = gpu.start - anchor
    has_prev = np.zeros(n_gpu, dtype=bool)
    has_prev[1:] = gpu.stream[1:] == gpu.stream[:-1]
    prev_end = np.where(has_prev, np.roll(gpu.end, 1), -np.inf)
    slack_stream = np.where(has_prev, gpu.start - prev_end, np.inf)
    awaited = np.full(n_gpu, -np.inf)
    if len(wait_gpu):
        np.maximum.at(awaited, wait_gpu, gpu.end[wait_from])
    slack_wait = np.where(np.isfinite(awaited), gpu.start - awaited, np.inf)
    orphan = gpu.orphan
    gated = ~orphan & (slack_stream > _SLACK) & (slack_wait > _SLACK)
    latency = float(np.median(slack_launch[gated])) if gated.any() else _DEFAULT_LATENCY_S
    # The typical gap between kernels of a stream: of the nodes that waited for the one before
    # them (started later than a typical launch latency after their launch, and nearer the end
    # of the one before than that), not of those the launches spaced out (a launch-bound loop's
    # kernels start a launch apart; one of them started late by a GPU's hiccup is no queue).
    late = slack_launch - latency
    queued = has_prev & (((late > _SLACK) & (slack_stream < late)) | orphan)
    stream_gap = (
        max(float(np.median(slack_stream[queued])), 0.0) if queued.any() else _DEFAULT_GAP_S
    )
    excess = np.column_stack(
        [slack_launch - latency, slack_stream - stream_gap, slack_wait - stream_gap]
    )
    excess[orphan, 0] = np.where(has_prev[orphan] | np.isfinite(awaited[orphan]), np.inf, 0.0)
    binding = np.argmin(excess, axis=1)
    g_lag = np.where(binding == 0, slack_launch, np.minimum(slack_launch, latency))
    g_gap = np.where(binding == 1, slack_stream, np.minimum(slack_stream, stream_gap))
    # -1 s (no gap is that): no node before it on the stream. A gap may be a hair below 0
    # where the trace has a kernel start before the one before it ended (clock rounding).
    g_gap = np.where(has_prev, g_gap, NO_GAP)
    wait_lag = (
        np.where(
            binding[wait_gpu] == 2,
            slack_wait[wait_gpu],
            np.minimum(slack_wait[wait_gpu], stream_gap),
        )
        if len(wait_gpu)
        else np.zeros(0)
    )
    return g_lag, g_gap, wait_lag, latency, stream_gap


def call_profiler(
    kind: np.ndarray, dur: np.ndarray, launched: np.ndarray | None = None
) -> np.ndarray:
    """The profiler's share of each call's own duration (none for the anchors). ``launched``
    counts the GPU nodes each call launched: a launch of more than one is a CUDA graph's, whose
    records of its nodes are nearly all of its time (``GRAPH_LAUNCH_SHARE``)."""
    is_call = (kind != BEGIN) & (kind != END)
    cost = np.minimum(PROFILER_HOST_SHARE * dur, PROFILER_EVENT_CAP_S)
    if launched is not None:
        graph = (kind == LAUNCH) & (launched > 1)
        cost = np.where(graph, np.maximum(cost, GRAPH_LAUNCH_SHARE * dur), cost)
    return np.where(is_call, cost, 0.0)


def _launched(g_host: np.ndarray | None, h_kind: np.ndarray) -> np.ndarray | None:
    """How many GPU nodes each host node launched (its own, not the begin anchor's)."""
    if g_host is None or not len(h_kind):
        return None
    g_host = np.asarray(g_host)
    if len(g_host) and (g_host.min() < 0 or g_host.max() >= len(h_kind)):
        return None  # a damaged graph: check() names the field
    return np.bincount(g_host.astype(np.int64), minlength=len(h_kind))


def host_drift(before: StepGraph, after: StepGraph) -> float | None:
    """How much slower the host ran in ``before``'s capture than in ``after``'s: the median,
    over the ops both record often enough, of the ratio of one fixed piece of CPU work, the
    time from such an op's start to its first child's (the profiler's records and a dispatch:
    ``PROBE_PREFIX`` entries of ``typical``). None where they share fewer than
    ``PROBE_OPS``: one op's own dispatch may be what changed (autocast's cast under each
    ``aten::linear``)."""
    ratios = [
        value / after.typical[key]
        for key, value in before.typical.items()
        if key.startswith(PROBE_PREFIX) and after.typical.get(key, 0) > 0 and value > 0
    ]
    return float(np.median(ratios)) if len(ratios) >= PROBE_OPS else None


def _probes(ops: pd.DataFrame) -> dict[str, float]:
    """Per op name recorded at least ``PROBE_SAMPLES`` times with a child: the lower quartile
    of the time from its start to its first child's start (``typical``'s probe entries)."""
    parent = ops["parent"].to_numpy()
    child = np.flatnonzero(parent >= 0)
    if not len(child):
        return {}
    start = ops["start_s"].to_numpy(float)
    first = np.full(len(ops), np.inf)
    np.minimum.at(first, parent[child], start[child])
    has = np.flatnonzero(np.isfinite(first))
    delta = pd.Series(first[has] - start[has])
    names = ops["name"].to_numpy(dtype=object)[has]
    grouped = delta.groupby(names, sort=False)
    counts = grouped.size()
    quartiles = grouped.quantile(0.25)
    return {
        f"{PROBE_PREFIX}{name}": float(quartiles[name])
        for name in counts.index[counts >= PROBE_SAMPLES]
        if quartiles[name] > 0
    }


def _outermost(thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For calls sorted by (thread, start, longest first), the position of each one's outermost
    call (itself where no earlier call of its thread still runs)."""
    n = len(start)
    if not n:
        return np.zeros(0, dtype=np.int64)
    new_thread = np.ones(n, dtype=bool)
    new_thread[1:] = thread[1:] != thread[:-1]
    # The latest end so far within each thread, by an offset per thread run.
    run = np.cumsum(new_thread) - 1
    span = float(np.nanmax(end) - np.nanmin(start)) + 1.0
    reach = np.maximum.accumulate(end + run * span) - run * span
    reach_before = np.empty(n)
    reach_before[0] = -np.inf
    reach_before[1:] = reach[:-1]
    is_outer = new_thread | (start >= reach_before - 1e-9)
    positions = np.where(is_outer, np.arange(n), 0)
    return np.maximum.accumulate(positions)


def _positions_of(wanted: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The position in ``ids`` of each wanted id (the last of equals), or -1."""
    if not len(ids):
        return np.full(len(wanted), -1, dtype=np.int64)
    valid = np.flatnonzero(~np.isnan(ids))
    if not len(valid):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = valid[np.lexsort((valid, ids[valid]))]
    sorted_ids = ids[order]
    at = np.clip(np.searchsorted(sorted_ids, wanted, side="right") - 1, 0, len(order) - 1)
    return np.where(sorted_ids[at] == wanted, order[at], -1)


def _enclosing_top(
    op_thread: np.ndarray,
    op_start: np.ndarray,
    op_end: np.ndarray,
    is_top: np.ndarray,
    thread: np.ndarray,
    times: np.ndarray,
) -> np.ndarray:
    """For each (thread, time), the row of the top-level op running then, or -1."""
    rows = np.flatnonzero(is_top)
    if not len(rows) or not len(times):
        return np.full(len(times), -1, dtype=np.int64)
    span = float(max(op_end.max(), times.max()) - min(op_start.min(), times.min())) + 1.0
    key = op_thread[rows] * span + op_start[rows]
    order = np.argsort(key, kind="stable")
    at = np.searchsorted(key[order], thread * span + times, side="right") - 1
    found = np.where(at >= 0, rows[order[np.maximum(at, 0)]], -1)
    inside = (found >= 0) & (op_thread[np.maximum(found, 0)] == thread)
    inside &= op_end[np.maximum(found, 0)] >= times
    return np.where(inside, found, -1)


def coverage(
    thread: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    weights: np.ndarray,
    q_thread: np.ndarray,
    q_time: np.ndarray,
) -> np.ndarray:
    """For disjoint intervals per thread, each with a weight per class (``weights``: n x k),
    the weighted time of each class from the thread's first interval up to each query time:
    (queries x k). Differences of two queries give a window's time by class."""
    k = weights.shape[1]
    if not len(start) or not len(q_time):
        return np.zeros((len(q_time), k))
    lo = float(min(start.min(), q_time.min()))
    span = float(max(end.max(), q_time.max()) - lo) + 1.0
    key = thread * span + (start - lo)
    order = np.argsort(key, kind="stable")
    key, thread, start, end, weights = (
        key[order],
        thread[order],
        start[order],
        end[order],
        weights[order],
    )
    lengths = np.maximum(end - start, 0.0)
    before = np.vstack([np.zeros((1, k)), np.cumsum(lengths[:, None] * weights, axis=0)])
    # Per-thread: subtract what the threads before it accumulated.
    thread_start = np.searchsorted(thread, thread, side="left")
    q_key = q_thread * span + (q_time - lo)
    at = np.searchsorted(key, q_key, side="right") - 1
    valid = (at >= 0) & (thread[np.maximum(at, 0)] == q_thread)
    at0 = np.maximum(at, 0)
    inside = np.clip(q_time - start[at0], 0.0, lengths[at0])
    result = before[at0] - before[thread_start[at0]] + inside[:, None] * weights[at0]
    result[~valid] = 0.0
    return result


def _gap_parts(
    trace: Trace,
    op_thread: np.ndarray,
    op_start: np.ndarray,
    op_end: np.ndarray,
    is_top: np.ndarray,
    launched_top: np.ndarray,
    threads: list[str],
    h_thread: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    n_threads: int,
) -> np.ndarray:
    """Each gap's host time by part: launch, cpu, glue, other, loader (the profiler's part is
    taken out after). Top-level ops that launched GPU work are "launch", the others "cpu"; the
    time between two top-level ops is "glue" where both launched, "other" elsewhere; a
    DataLoader range makes its time "loader"."""
    n = len(gap_start)
    parts = np.zeros((n, 5))
    length = np.maximum(gap_end - gap_start, 0.0)
    rows = np.flatnonzero(is_top)
    if len(rows):
        order = rows[np.lexsort((op_start[rows], op_thread[rows]))]
        t, s, e = op_thread[order], op_start[order], np.maximum.accumulate(op_end[order])
        lau = launched_top[order]
        w_ops = np.column_stack([lau, ~lau, np.zeros(len(order)), np.zeros(len(order))]).astype(
            float
        )
        # Between consecutive top-level ops of one thread.
        same = np.zeros(len(order), dtype=bool)
        same[1:] = t[1:] == t[:-1]
        between = np.flatnonzero(same)
        b_start, b_end = e[between - 1], s[between]
        glue = lau[between - 1] & lau[between]
        w_between = np.column_stack(
            [np.zeros(len(between)), np.zeros(len(between)), glue, ~glue]
        ).astype(float)
        all_thread = np.concatenate([t, t[between]])
        all_start = np.concatenate([s, b_start])
        # Ops end where the next one starts at the latest (records may overlap by rounding).
        next_start = np.full(len(order), np.inf)
        next_start[between - 1] = s[between]
        op_end_clipped = np.maximum(np.minimum(op_end[order], next_start), s)
        all_end = np.concatenate([op_end_clipped, np.maximum(b_end, b_start)])
        weights = np.vstack([w_ops, w_between])
        # Make the intervals disjoint: nested tops (rare: overlapping records) are clipped.
        covered = coverage(all_thread, all_start, all_end, weights, h_thread, gap_end)
        covered -= coverage(all_thread, all_start, all_end, weights, h_thread, gap_start)
        parts[:, :4] = np.maximum(covered, 0.0)
    # The rest of the gap (before the first op or after the last) is "other".
    parts[:, 3] += np.maximum(length - parts[:, :4].sum(axis=1), 0.0)
    scale = np.where(
        parts[:, :4].sum(axis=1) > 0, length / np.maximum(parts[:, :4].sum(axis=1), 1e-300), 0.0
    )
    parts[:, :4] *= scale[:, None]
    # DataLoader ranges.
    annotations = trace.annotations
    names = annotations["name"].to_numpy(dtype=object)
    loader = np.array([isinstance(x, str) and bool(_LOADER.search(x)) for x in names], bool)
    loader &= annotations["where"].to_numpy(dtype=object) == "host"
    if loader.any():
        keys = [
            f"{p}/{q}"
            for p, q in zip(annotations["pid"][loader], annotations["tid"][loader], strict=True)
        ]
        code = np.array([threads.index(k) if k in threads else -1 for k in keys], dtype=np.int64)
        ok = code >= 0
        a_start = annotations["start_s"].to_numpy(float)[loader][ok]
        a_end = annotations["end_s"].to_numpy(float)[loader][ok]
        a_thread = code[ok]
        o = np.lexsort((a_start, a_thread))
        a_start, a_end, a_thread = a_start[o], a_end[o], a_thread[o]
        one = np.ones((len(a_start), 1))
        inside = (
            coverage(a_thread, a_start, a_end, one, h_thread, gap_end)
            - coverage(a_thread, a_start, a_end, one, h_thread, gap_start)
        )[:, 0]
        inside = np.clip(inside, 0.0, length)
        with np.errstate(invalid="ignore", divide="ignore"):
            rest = np.where(length > 0, (length - inside) / length, 0.0)
        parts[:, :4] *= rest[:, None]
        parts[:, 4] = inside
    return parts


def _count_in(
    thread: np.ndarray, times: np.ndarray, q_thread: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """How many of the (thread, time) points fall in each query's (lo, hi] on its thread."""
    if not len(times) or not len(lo):
        return np.zeros(len(lo))
    base = float(min(times.min(), lo.min()))
    span = float(max(times.max(), hi.max()) - base) + 1.0
    key = np.sort(thread * span + (times - base))
    return (
        np.searchsorted(key, q_thread * span + (hi - base), side="right")
        - np.searchsorted(key, q_thread * span + (lo - base), side="right")
    ).astype(float)


def _gpu_labels(
    trace: Trace, kernels: pd.DataFrame | None, g_order: np.ndarray, n: int
) -> dict[str, np.ndarray]:
    """Each GPU node's bound, category, op, shapes and module, from the kernel table."""
    labels = {
        "bound": np.full(n, "other", dtype=object),
        "category": np.full(n, "", dtype=object),
        "op": np.full(n, None, dtype=object),
        "shapes": np.full(n, "", dtype=object),
        "module": np.full(n, "", dtype=object),
    }
    if kernels is not None and "event" in kernels and len(kernels):
        event = kernels["event"].to_numpy(dtype=np.int64)
        for column in ("bound", "category", "op", "module"):
            labels[column][event] = kernels[column].to_numpy(dtype=object)
        op_row = kernels["op_row"].to_numpy(dtype=np.int64)
        shapes = trace.ops["shapes"].to_numpy(dtype=object)
        labels["shapes"][event] = (
            np.where(op_row >= 0, shapes[np.maximum(op_row, 0)], "") if len(shapes) else ""
        )
    else:
        launching = trace.gpu_columns()["op"]
        names = trace.ops["name"].to_numpy(dtype=object)
        if len(names):
            labels["op"] = np.append(names, _NO_NAME)[launching]  # -1: no op
    missing = pd.isna(labels["op"]) | (labels["op"] == "")
    labels["op"][missing] = None
    return {k: v[g_order] for k, v in labels.items()}


def _last_launch_stream(
    h_thread: np.ndarray, h_kind: np.ndarray, g_host: np.ndarray, g_stream: np.ndarray, n_host: int
) -> np.ndarray:
    """For each host node, the stream of its thread's last launch before it (-1: none)."""
    stream_of_call = np.full(n_host, -1, dtype=np.int64)
    stream_of_call[g_host] = g_stream
    stream_of_call[h_kind != LAUNCH] = -1
    return _carry_before(h_thread, stream_of_call)


def _next_launch_stream(
    h_thread: np.ndarray, h_kind: np.ndarray, g_host: np.ndarray, g_stream: np.ndarray, n_host: int
) -> np.ndarray:
    """For each host node, the stream of its thread's next launch after it (-1: none)."""
    stream_of_call = np.full(n_host, -1, dtype=np.int64)
    stream_of_call[g_host] = g_stream
    stream_of_call[h_kind != LAUNCH] = -1
    return _carry_before(h_thread[::-1], stream_of_call[::-1])[::-1]


def _carry_before(thread: np.ndarray, value: np.ndarray) -> np.ndarray:
    """For each row, the last value >= 0 of an earlier row of the same thread (-1: none)."""
    n = len(value)
    if not n:
        return value.copy()
    rows = np.where(value >= 0, np.arange(n), -1)
    last = np.maximum.accumulate(rows)
    before = np.concatenate([[-1], last[:-1]])
    ok = (before >= 0) & (thread[np.maximum(before, 0)] == thread)
    return np.where(ok, value[np.maximum(before, 0)], -1)


def _last_of_kind(h_thread: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """For each host node, the last earlier node of its thread for which ``chosen`` holds."""
    n = len(chosen)
    rows = np.where(chosen, np.arange(n), -1)
    last = np.maximum.accumulate(rows) if n else rows
    before = np.concatenate([[-1], last[:-1]]) if n else last
    ok = (before >= 0) & (h_thread[np.maximum(before, 0)] == h_thread)
    return np.where(ok, before, -1)


def _last_launched(
    g_stream: np.ndarray,
    launch_time: np.ndarray,
    streams: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    wanted: list[int],
    before: Any,
) -> list[int]:
    """The last GPU node of each wanted stream launched before ``before``."""
    found = []
    for stream in wanted:
        at = int(np.searchsorted(streams, stream))
        if at >= len(streams) or streams[at] != stream:
            continue
        lo, hi = first[at], last[at]
        k = lo + int(np.searchsorted(launch_time[lo:hi], before, side="left")) - 1
        if k >= lo:
            found.append(int(k))
    return found


def _handoffs(
    h_thread: np.ndarray,
    h_kind: np.ndarray,
    h_start: np.ndarray,
    h_end: np.ndarray,
    prev_end: np.ndarray,
    same_thread_before: np.ndarray,
    gap: np.ndarray,
    main: int,
    begin_node: np.ndarray,
    n_threads: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges from the node of another thread that woke each idle thread; a thread's begin
    anchor without one hangs at its offset from the main thread's begin."""
    hosts, froms, lags = [], [], []
    if n_threads <= 1:
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0),)  # pyright: ignore[reportReturnType]
    candidates = np.flatnonzero((same_thread_before & (gap > HANDOFF_IDLE_S)) | (h_kind == BEGIN))
    for thread in range(n_threads):
        mine = candidates[h_thread[candidates] == thread]
        if not len(mine):
            continue
        others = np.flatnonzero(h_thread != thread)
        if not len(others):
            continue
        order = others[np.argsort(h_end[others], kind="stable")]
        ends = h_end[order]
        at = np.searchsorted(ends, h_start[mine], side="right") - 1
        for node, k in zip(mine.tolist(), at.tolist(), strict=True):
            is_begin = h_kind[node] == BEGIN
            waker = int(order[k]) if k >= 0 else -1
            if waker >= 0 and (
                h_kind[waker] == BEGIN or (not is_begin and ends[k] < prev_end[node])
            ):
                waker = -1
            if is_begin and thread == main:
                continue
            if waker >= 0:
                hosts.append(node)
                froms.append(waker)
                lags.append(h_start[node] - h_end[waker])
            elif is_begin:
                hosts.append(node)
                froms.append(int(begin_node[main]))
                lags.append(h_start[node] - h_start[begin_node[main]])
    return (
        np.asarray(hosts, dtype=np.int64),
        np.asarray(froms, dtype=np.int64),
        np.maximum(np.asarray(lags, dtype=float), 0.0),
    )
