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
  ``DataLoader`` range) and ``profiler``: the profiler's own cost, a node of its own. That cost is
  estimated per recorded event, a constant per op (``PROFILER_PER_OP_S``) and per runtime call
  (``PROFILER_PER_CALL_S``), fitted on H200 traces whose steps were also timed with CUDA events
  without the profiler (``bench/causal_check.py`` measures it again); the gap's other parts
  shrink in proportion to make room. A call's own duration holds its share
  (``PROFILER_PER_CALL_S``, at most all but ``CALL_FLOOR_S`` of it).
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
waits on (inferred as above), the launch queue's depth limit, and host work that would change
because GPU work did (an allocator that frees sooner).
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

__all__ = ["GRAPH_LIMIT", "StepGraph", "build"]

# The profiler's host cost per recorded op (its begin and end records with input shapes) and
# per traced runtime call (CUPTI's callbacks around it). Fitted on the H200 traces of
# tests/data/advice (torch 2.11, record_shapes=True), whose steps were also timed with CUDA events
# without the profiler: see tests/test_replay.py and bench/causal_check.py, which measures them
# again.
PROFILER_PER_OP_S = 1.6e-6
PROFILER_PER_CALL_S = 2.0e-6
# A pageable copy's call returns this share of the copy's time before it ends, at most (the
# last chunk's transfer after it was staged).
PAGEABLE_TAIL = 0.02
# What a runtime call costs at least without the profiler.
CALL_FLOOR_S = 0.5e-6
# A thread idle this long that resumes after another thread ended something was waiting on it.
HANDOFF_IDLE_S = 20e-6
# A memory sample (profile_memory=True) costs about this share of an op's record.
PROFILER_MEMORY_SHARE = 0.5
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
            values["h_call_profiler"] = call_profiler(values["h_kind"], values["h_dur"])
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
    names = _Names()
    ops = trace.ops
    runtime = trace.runtime
    gpu = trace.gpu_columns()
    n_gpu_events = len(gpu["start_s"])
    if not len(ops) and not len(runtime):  # GPU events alone: nothing launched them to model
        return None

    # --- threads ----------------------------------------------------------------------------
    call_names = runtime["name"].to_numpy(dtype=object)
    host_call = ~np.isin(call_names, list(_GPU_SIDE))
    rt = {c: runtime[c].to_numpy() for c in ("pid", "tid", "start_s", "end_s", "correlation")}
    rt = {c: v[host_call] for c, v in rt.items()}
    call_names = call_names[host_call]
    thread_codes, first = group_codes(
        np.concatenate([ops["pid"].to_numpy(), rt["pid"]]),
        np.concatenate([ops["tid"].to_numpy(), rt["tid"]]),
    )
    pids = np.concatenate([ops["pid"].to_numpy(), rt["pid"]])
    tids = np.concatenate([ops["tid"].to_numpy(), rt["tid"]])
    threads = [f"{pids[row]}/{tids[row]}" for row in first]
    op_thread = thread_codes[: len(ops)]
    call_thread = thread_codes[len(ops) :]
    n_threads = len(first)

    op_start = ops["start_s"].to_numpy(dtype=float)
    op_end = ops["end_s"].to_numpy(dtype=float)
    op_parent = ops["parent"].to_numpy()
    op_top = ops["top"].to_numpy()
    is_top = op_parent < 0

    # The main thread: the step's (its ProfilerStep range), else the first event's.
    main = 0
    if n_threads:
        starts = np.concatenate([op_start, rt["start_s"]])
        main = int(thread_codes[np.argmin(starts)])
        step_rows = trace.annotations[
            trace.annotations["name"].astype(str).str.startswith(STEP_PREFIX)
            & (trace.annotations["where"] == "host")
        ]
        if len(step_rows):
            key = f"{step_rows['pid'].iloc[0]}/{step_rows['tid'].iloc[0]}"
            if key in threads:
                main = threads.index(key)

    # --- GPU events and their launch calls ----------------------------------------------------
    gpu_corr = np.concatenate(
        [trace.kernels["correlation"].to_numpy(float), trace.copies["correlation"].to_numpy(float)]
    )
    # Runtime calls, outermost first: a call nested in another (cudaLaunchKernel inside
    # cuLaunchKernel's caller) counts as the outer one.
    order = np.lexsort((-(rt["end_s"] - rt["start_s"]), rt["start_s"], call_thread))
    c_thread = call_thread[order]
    c_start, c_end = rt["start_s"][order], rt["end_s"][order]
    c_name = call_names[order]
    c_corr = rt["correlation"][order].astype(float)
    outer = _outermost(c_thread, c_start, c_end)  # each call's outermost call (a position)
    call_of_event = _positions_of(gpu_corr, c_corr)  # position in the sorted calls, or -1
    call_of_event = np.where(call_of_event >= 0, outer[np.maximum(call_of_event, 0)], -1)
    launches = np.zeros(len(c_start), dtype=bool)
    launches[call_of_event[call_of_event >= 0]] = True
    kind_of_call = np.full(len(c_start), -1, dtype=np.int64)
    kind_of_call[launches] = LAUNCH
    distinct_calls = pd.unique(c_name)
    for pattern, kind in ((_SYNC, SYNC), (_RECORD, RECORD), (_WAIT, WAIT)):
        matching = [n for n in distinct_calls if isinstance(n, str) and pattern.search(n)]
        if matching:
            chosen = np.isin(c_name, matching) & (outer == np.arange(len(outer)))
            kind_of_call[chosen & ~launches] = kind
    is_node_call = kind_of_call >= 0

    # --- host nodes: anchors and calls, per thread in time order -------------------------------
    thread_begin = np.full(n_threads, np.inf)
    thread_end = np.full(n_threads, -np.inf)
    np.minimum.at(thread_begin, op_thread, op_start)
    np.maximum.at(thread_end, op_thread, op_end)
    np.minimum.at(thread_begin, c_thread, c_start)
    np.maximum.at(thread_end, c_thread, c_end)
    if host_range is not None and n_threads:
        thread_begin[main] = min(host_range[0], thread_begin[main])
        thread_end[main] = max(host_range[1], thread_end[main])
    node_calls = np.flatnonzero(is_node_call)
    h_thread = np.concatenate([np.arange(n_threads), c_thread[node_calls], np.arange(n_threads)])
    h_kind = np.concatenate(
        [np.full(n_threads, BEGIN), kind_of_call[node_calls], np.full(n_threads, END)]
    )
    h_start = np.concatenate([thread_begin, c_start[node_calls], thread_end])
    h_end = np.concatenate([thread_begin, c_end[node_calls], thread_end])
    h_name_text = np.concatenate(
        [
            np.full(n_threads, "(thread begins)", object),
            c_name[node_calls],
            np.full(n_threads, "(thread ends)", object),
        ]
    )
    # Sorted by thread, then time; a begin anchor first and an end anchor last of its thread.
    rank = np.concatenate([np.zeros(n_threads), np.ones(len(node_calls)), np.full(n_threads, 2)])
    h_order = np.lexsort((rank, h_start, h_thread)) if len(h_thread) else np.zeros(0, np.int64)
    h_thread, h_kind = h_thread[h_order], h_kind[h_order]
    h_start, h_end, h_name_text = h_start[h_order], h_end[h_order], h_name_text[h_order]
    # The node of each sorted call (-1: folded into a gap) and of each thread's begin anchor.
    node_of_call = np.full(len(c_start), -1, dtype=np.int64)
    position = np.empty(len(h_order), dtype=np.int64)
    position[h_order] = np.arange(len(h_order))
    node_of_call[node_calls] = position[n_threads : n_threads + len(node_calls)]
    begin_node = position[:n_threads]
    n_host = len(h_kind)
    same_thread_before = np.zeros(n_host, dtype=bool)
    same_thread_before[1:] = h_thread[1:] == h_thread[:-1]
    prev_end = np.where(same_thread_before, np.roll(h_end, 1), h_start)
    gap = np.maximum(h_start - prev_end, 0.0)
    gap[~same_thread_before] = 0.0

    # The op each node belongs to: the top-level op around the call (its own name for anchors).
    op_names = ops["name"].to_numpy(dtype=object)
    top_of_time = _enclosing_top(op_thread, op_start, op_end, is_top, h_thread, h_start)
    h_op_text = np.append(op_names, _NO_NAME)[top_of_time]  # -1: no op

    # --- what each gap held ---------------------------------------------------------------
    launched_top = np.zeros(len(ops), dtype=bool)
    launching_op = gpu["op"]
    launched_top[op_top[launching_op[launching_op >= 0]]] = True
    parts = _gap_parts(
        trace,
        op_thread,
        op_start,
        op_end,
        is_top,
        launched_top,
        threads,
        h_thread,
        prev_end,
        h_start,
        n_threads,
    )
    # The profiler's cost in each gap: the ops that start in it, the folded calls and the
    # memory samples.
    per_op = profiler_per_op(ops)
    folded = ~is_node_call
    counted = _count_in(op_thread, op_start, h_thread, prev_end, h_start) * per_op
    counted += (
        _count_in(c_thread[folded], c_start[folded], h_thread, prev_end, h_start)
        * PROFILER_PER_CALL_S
    )
    memory_times = trace.memory["start_s"].to_numpy(float) if len(trace.memory) else np.zeros(0)
    if len(memory_times) and n_threads:
        # A sample has no thread: counted on the main thread, where allocations mostly are.
        counted += _count_in(
            np.full(len(memory_times), main), memory_times, h_thread, prev_end, h_start
        ) * (per_op * PROFILER_MEMORY_SHARE)
    profiler = np.minimum(counted, gap)
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = np.where(gap > 0, (gap - profiler) / gap, 0.0)
    parts = parts * keep[:, None]
    parts = np.column_stack([parts, profiler])
    parts[~same_thread_before] = 0.0

    # --- GPU nodes --------------------------------------------------------------------------
    g_stream_all = gpu["stream"].astype(np.int64)
    g_order = np.lexsort((gpu["start_s"], g_stream_all))
    g_stream = g_stream_all[g_order]
    g_start = gpu["start_s"][g_order].astype(float)
    g_end = gpu["end_s"][g_order].astype(float)
    g_dur = np.maximum(g_end - g_start, 0.0)
    g_call = call_of_event[g_order]
    g_host = np.where(g_call >= 0, node_of_call[np.maximum(g_call, 0)], -1)
    g_kind = np.select(
        [gpu["kind"][g_order] == "memcpy", gpu["kind"][g_order] == "memset"], [1, 2], 0
    )
    g_names_text = gpu["name"][g_order]
    g_pageable = np.array(
        [isinstance(n, str) and "Pageable" in n for n in g_names_text], dtype=bool
    )
    g_bytes = np.concatenate(
        [np.full(len(trace.kernels), np.nan), trace.copies["bytes"].to_numpy(float)]
    )[g_order]
    labels = _gpu_labels(trace, kernels, g_order, n_gpu_events)
    n_gpu = len(g_dur)

    # Blocking calls: a copy call that returns after its copy ended. A copy from or to pageable
    # memory is staged through a pinned buffer by the call itself, chunk by chunk: the call
    # returns once the last chunk is staged, a little before its transfer ends (6 us of a 20 ms
    # copy on the H200), and the host waited for all the rest.
    g_call_end = np.where(g_host >= 0, h_end[np.maximum(g_host, 0)], -np.inf)
    g_call_start = np.where(g_host >= 0, h_start[np.maximum(g_host, 0)], np.inf)
    g_tail = np.where(g_pageable & (g_kind == 1), 1e-6 + PAGEABLE_TAIL * g_dur, 1e-6)
    blocking_event = (
        (g_host >= 0) & (g_kind == 1) & (g_call_end >= g_end - g_tail) & (g_end > g_call_start)
    )
    h_blocking = np.zeros(n_host, dtype=bool)
    h_blocking[g_host[blocking_event]] = True
    # Events no call in this step launched (a graph's kernels without correlation, work of an
    # earlier step): held at their offset from the step's begin.
    orphan = g_host < 0
    g_host[orphan] = begin_node[main] if n_threads else 0
    g_from_start = blocking_event | orphan

    # --- synchronisations: which GPU nodes each waits for ---------------------------------------
    launch_time = h_start[g_host]  # when each GPU node was launched
    last_launch_stream = _last_launch_stream(h_thread, h_kind, g_host, g_stream, n_host)
    await_host_list, await_gpu_list = [], []
    streams = np.unique(g_stream)
    stream_first = np.searchsorted(g_stream, streams)
    stream_last = np.searchsorted(g_stream, streams, side="right")
    sync_nodes = np.flatnonzero((h_kind == SYNC) | h_blocking)
    record_stream = np.full(n_host, -1, dtype=np.int64)
    records = np.flatnonzero(h_kind == RECORD)
    record_stream[records] = last_launch_stream[records]
    last_record = _last_of_kind(h_thread, h_kind == RECORD)
    for node in sync_nodes.tolist():
        name = h_name_text[node]
        if h_blocking[node]:
            own = np.flatnonzero(blocking_event & (g_host == node))
            await_host_list += [node] * len(own)
            await_gpu_list += own.tolist()
            continue
        if "Stream" in name and last_launch_stream[node] >= 0:
            wanted = [int(last_launch_stream[node])]
        elif "Event" in name and last_record[node] >= 0 and record_stream[last_record[node]] >= 0:
            wanted = [int(record_stream[last_record[node]])]
            node_time = h_start[last_record[node]]
            found = _last_launched(
                g_stream, launch_time, streams, stream_first, stream_last, wanted, node_time
            )
            await_host_list += [node] * len(found)
            await_gpu_list += found
            continue
        else:
            wanted = streams.tolist()
        found = _last_launched(
            g_stream, launch_time, streams, stream_first, stream_last, wanted, h_start[node]
        )
        await_host_list += [node] * len(found)
        await_gpu_list += found
    await_host = np.asarray(await_host_list, dtype=np.int64)
    await_gpu = np.asarray(await_gpu_list, dtype=np.int64)
    # A wait the measured times contradict (the call returned before that work ended) is none.
    if len(await_host):
        holds = g_end[await_gpu] <= h_end[await_host] + np.where(
            g_tail[await_gpu] > 1e-6, g_tail[await_gpu], 1e-7
        )
        await_host, await_gpu = await_host[holds], await_gpu[holds]

    # Calibrate each synchronising call: its own duration and its wake-up.
    h_dur = np.maximum(h_end - h_start, 0.0)
    h_wake = np.zeros(n_host)
    awaited_end = np.full(n_host, -np.inf)
    if len(await_host):
        np.maximum.at(awaited_end, await_host, g_end[await_gpu])
    waited = awaited_end > h_start + 1e-7
    wake = np.maximum(h_end - awaited_end, 0.0)
    typical_wake = float(np.median(wake[waited])) if waited.any() else _DEFAULT_WAKE_S
    # A pageable copy's call returns a little before its copy ends: a wake-up below zero.
    wake = np.where(h_blocking, h_end - awaited_end, wake)
    syncing = np.isfinite(awaited_end)
    no_wait = syncing & ~waited
    typical_call = float(np.median(h_dur[no_wait])) if no_wait.any() else _DEFAULT_WAKE_S
    h_wake[waited] = wake[waited]
    h_dur[waited] = np.minimum(h_dur[waited], typical_call)
    h_wake[no_wait] = np.minimum(h_end[no_wait] - awaited_end[no_wait], typical_wake)
    h_call_profiler = call_profiler(h_kind, h_dur)

    # --- waits between streams --------------------------------------------------------------
    wait_gpu_list, wait_from_list = [], []
    next_launch_stream = _next_launch_stream(h_thread, h_kind, g_host, g_stream, n_host)
    for node in np.flatnonzero(h_kind == WAIT).tolist():
        record = last_record[node]
        if record < 0 or record_stream[record] < 0 or next_launch_stream[node] < 0:
            continue
        source = int(record_stream[record])
        target = int(next_launch_stream[node])
        if source == target:
            continue
        recorded = _last_launched(
            g_stream, launch_time, streams, stream_first, stream_last, [source], h_start[record]
        )
        if not recorded:
            continue
        at = int(np.searchsorted(streams, target))
        lo, hi = stream_first[at], stream_last[at]
        after = lo + int(np.searchsorted(launch_time[lo:hi], h_start[node], side="right"))
        if after < hi and g_start[after] >= g_end[recorded[0]] - 1e-7:
            wait_gpu_list.append(after)
            wait_from_list.append(recorded[0])
    wait_gpu = np.asarray(wait_gpu_list, dtype=np.int64)
    wait_from = np.asarray(wait_from_list, dtype=np.int64)

    # --- calibrated lags of the GPU nodes ------------------------------------------------------
    anchor = np.where(g_from_start, h_start[g_host], h_end[g_host])
    slack_launch = g_start - anchor
    has_prev = np.zeros(n_gpu, dtype=bool)
    has_prev[1:] = g_stream[1:] == g_stream[:-1]
    g_prev_end = np.where(has_prev, np.roll(g_end, 1), -np.inf)
    slack_stream = np.where(has_prev, g_start - g_prev_end, np.inf)
    awaited = np.full(n_gpu, -np.inf)
    if len(wait_gpu):
        np.maximum.at(awaited, wait_gpu, g_end[wait_from])
    slack_wait = np.where(np.isfinite(awaited), g_start - awaited, np.inf)
    launched = ~orphan
    gated = launched & (slack_stream > _SLACK) & (slack_wait > _SLACK)
    queued = has_prev & ((slack_launch > _SLACK) | orphan)
    latency = float(np.median(slack_launch[gated])) if gated.any() else _DEFAULT_LATENCY_S
    stream_gap = (
        max(float(np.median(slack_stream[queued])), 0.0) if queued.any() else (_DEFAULT_GAP_S)
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

    # --- hand-offs between threads ------------------------------------------------------------
    handoff_host, handoff_from, handoff_lag = _handoffs(
        h_thread,
        h_kind,
        h_start,
        h_end,
        prev_end,
        same_thread_before,
        gap,
        main,
        begin_node,
        n_threads,
    )
    woken = handoff_host[handoff_from != begin_node[main]] if n_threads else handoff_host
    parts[woken] = 0.0  # the idle before a hand-off is a wait, not host work

    # --- the span ----------------------------------------------------------------------------
    if measured_s is None:
        if n_gpu:
            measured_s = float(g_end.max() - g_start.min())
        else:
            measured_s = float(h_end.max() - h_start.min()) if n_host else 0.0
    origin = float(min(h_start.min() if n_host else np.inf, g_start.min() if n_gpu else np.inf))

    graph = StepGraph(
        h_thread=h_thread.astype(np.int64),
        h_kind=h_kind.astype(np.int64),
        h_start=h_start - origin,
        h_dur=h_dur,
        h_call_profiler=h_call_profiler,
        h_parts=parts,
        h_wake=h_wake,
        h_op=names.of(h_op_text),
        h_name=names.of(h_name_text),
        h_blocking=h_blocking,
        g_stream=g_stream,
        g_start=g_start - origin,
        g_dur=g_dur,
        g_host=g_host.astype(np.int64),
        g_from_start=g_from_start,
        g_lag=np.where(np.isfinite(g_lag), g_lag, 0.0),
        g_gap=g_gap,
        g_kind=g_kind.astype(np.int64),
        g_bound=names.of(labels["bound"]),
        g_category=names.of(labels["category"]),
        g_op=names.of(labels["op"]),
        g_shapes=names.of(labels["shapes"]),
        g_module=names.of(labels["module"]),
        g_name=names.of(g_names_text),
        g_bytes=g_bytes,
        g_pageable=g_pageable,
        await_host=await_host,
        await_gpu=await_gpu,
        handoff_host=handoff_host,
        handoff_from=handoff_from,
        handoff_lag=handoff_lag,
        wait_gpu=wait_gpu,
        wait_from=wait_from,
        wait_lag=wait_lag,
        names=names.list(),
        threads=threads,
        mode="period" if host_range is not None else "latency",
        measured_s=float(measured_s),
        main_thread=main,
        typical={
            "launch_latency_s": latency,
            "stream_gap_s": stream_gap,
            "wake_s": typical_wake,
            "profiler_per_op_s": per_op,
            "profiler_per_call_s": PROFILER_PER_CALL_S,
        },
    )
    return graph


def call_profiler(kind: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """The profiler's share of each call's own duration (none for the anchors)."""
    is_call = (kind != BEGIN) & (kind != END)
    return np.where(is_call, np.clip(dur - CALL_FLOOR_S, 0.0, PROFILER_PER_CALL_S), 0.0)


def profiler_per_op(ops: pd.DataFrame) -> float:
    """The profiler's cost per recorded op in this trace: twice the lower quartile of the time
    from an op's start to its first child's start (the profiler's entry records on either side
    of a dispatch that is itself well under a microsecond; entry and exit cost about the same);
    ``PROFILER_PER_OP_S`` where no op has a child."""
    parent = ops["parent"].to_numpy()
    child = np.flatnonzero(parent >= 0)
    if len(child) < 50:  # too few to say: the constant
        return PROFILER_PER_OP_S
    start = ops["start_s"].to_numpy(float)
    first = np.full(len(ops), np.inf)
    np.minimum.at(first, parent[child], start[child])
    has = np.isfinite(first)
    delta = first[has] - start[has]
    return float(np.clip(2 * np.percentile(delta, 25), 0.3e-6, 10e-6))


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


def _coverage(
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
        covered = _coverage(all_thread, all_start, all_end, weights, h_thread, gap_end)
        covered -= _coverage(all_thread, all_start, all_end, weights, h_thread, gap_start)
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
            _coverage(a_thread, a_start, a_end, one, h_thread, gap_end)
            - _coverage(a_thread, a_start, a_end, one, h_thread, gap_start)
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
