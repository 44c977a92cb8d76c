"""Tidy event tables from a PyTorch profiler (Kineto / Chrome-trace JSON) trace.

A trace becomes one pandas frame per kind of event: host ops, GPU kernels, memory copies and sets,
runtime calls, annotations. Each kernel is linked to the op that launched it (through the
External id, or the runtime call's correlation id), and each op to its parent op and its
``nn.Module`` scope. The same code serves a live profile (its exported trace) and a file.

Big traces are the norm, so the hot path is vectorised: the JSON is decoded straight into typed
structs by msgspec in chunks of events (a Kineto file is streamed, never held whole), and the
hierarchy is computed with numpy pointer jumping rather than a per-event loop.

All times are seconds from the first event of the trace.
"""

from __future__ import annotations

import gc
import gzip
import io
import math
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

__all__ = ["Trace", "TraceError", "parse_trace", "read_trace"]


class TraceError(ValueError):
    """A file that is not a readable PyTorch profiler trace."""


# --- decoding -------------------------------------------------------------------------------------


class _Args(msgspec.Struct, gc=False):
    external_id: Any = msgspec.field(default=None, name="External id")
    correlation: Any = None
    stream: Any = None
    device: Any = None
    bytes: Any = None
    # Kept as raw JSON: a trace repeats the same few hundred shapes thousands of times, so only
    # the distinct ones are decoded (see _shared_values).
    dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")
    types: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Concrete Inputs")
    total_allocated: Any = msgspec.field(default=None, name="Total Allocated")
    device_id: Any = msgspec.field(default=None, name="Device Id")


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: _Args | None = None


class _File(msgspec.Struct, gc=False):
    traceEvents: list[_Event] = []
    deviceProperties: Any = None
    distributedInfo: Any = None
    displayTimeUnit: Any = None
    baseTimeNanoseconds: Any = None
    traceName: Any = None
    schemaVersion: Any = None


_EVENTS_DECODER = msgspec.json.Decoder(list[_Event])
_FILE_DECODER = msgspec.json.Decoder(_File)

# Kineto writes one event per object at two spaces of indent; these patterns let a file be cut
# into chunks of whole events without parsing it. Any other layout is decoded in one piece.
_EVENTS_START = re.compile(rb'"traceEvents"\s*:\s*\[')
_EVENT_SEPARATOR = b"\n  },\n  {"
_EVENTS_END = re.compile(rb"\n  \}\s*\]")
_BLOCK_BYTES = 4 << 20

# Event categories, normalised: old traces use capitalised names.
_CATEGORY_ALIASES = {
    "operator": "cpu_op",
    "runtime": "cuda_runtime",
    "kernel": "kernel",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "cuda_driver": "cuda_runtime",
    "cuda_sync": "cuda_runtime",
}
_MODULE_PREFIX = "nn.Module: "


# What each kind of complete ("X") event keeps; everything else in a trace is skipped.
_FIELDS = {
    "host": ("cat", "name", "pid", "tid", "ts", "dur", "external_id", "dims", "types", "concrete"),
    "runtime": ("name", "pid", "tid", "ts", "dur", "external_id", "correlation"),
    "kernel": ("name", "pid", "tid", "ts", "dur", "stream", "device", "external_id", "correlation"),
    "copy": (
        *("cat", "name", "pid", "tid", "ts", "dur", "stream", "device"),
        *("external_id", "correlation", "bytes"),
    ),
    "gpu_annotation": ("name", "pid", "tid", "ts", "dur", "external_id"),
}
_KIND_OF_CATEGORY = {
    "cpu_op": "host",
    "user_annotation": "host",
    "python_function": "host",
    "cuda_runtime": "runtime",
    "kernel": "kernel",
    "gpu_memcpy": "copy",
    "gpu_memset": "copy",
    "gpu_user_annotation": "gpu_annotation",
}
_FLOAT_FIELDS = frozenset(("ts", "dur", "external_id", "correlation"))
_RAW_FIELDS = frozenset(("dims", "types", "concrete"))


class _Columns:
    """One frame per kind of event (host ops, runtime calls, kernels, copies, GPU annotations)
    and the memory samples, filled chunk by chunk."""

    def __init__(self) -> None:
        self.frames: dict[str, list[pd.DataFrame]] = {kind: [] for kind in _FIELDS}
        self.memory: list[tuple[float, Any, float]] = []
        self._kinds: dict[str, tuple[str | None, str]] = {}  # raw category -> (kind, category)
        # Over every timed complete event, kept or not: a trace of a cell that ran no torch op
        # still has its profiler's own events, and is empty rather than broken.
        self.timed = 0
        self.first_ts = math.inf

    def _kind(self, raw: str) -> tuple[str | None, str]:
        if raw not in self._kinds:
            category = _CATEGORY_ALIASES.get(raw.lower(), raw.lower())
            self._kinds[raw] = (_KIND_OF_CATEGORY.get(category), category)
        return self._kinds[raw]

    def add(self, events: list[_Event]) -> None:
        groups: dict[str, list[_Event]] = {kind: [] for kind in _FIELDS}
        kinds = self._kinds
        for e in events:
            if e.ph == "X":
                kind = (kinds.get(e.cat) or self._kind(e.cat))[0]
                if kind is not None:
                    groups[kind].append(e)
                elif isinstance(e.ts, (int, float)):
                    self.timed += 1
                    self.first_ts = min(self.first_ts, e.ts)
            elif e.ph == "i" and e.args is not None and e.args.total_allocated is not None:
                self.memory.append((e.ts, e.args.device_id, e.args.total_allocated))
        for kind, group in groups.items():
            if group:
                self.frames[kind].append(self._frame(kind, group))

    def _frame(self, kind: str, x: list[_Event]) -> pd.DataFrame:
        # Plain attribute reads in comprehensions: the cheapest way from structs to columns.
        a = [e.args or _NO_ARGS for e in x]
        columns: dict[str, Any] = {}
        for name in _FIELDS[kind]:
            if name == "cat":
                values: Any = [self._kinds[e.cat][1] for e in x]
            elif name in _Event.__struct_fields__:
                values = list(map(attrgetter(name), x))
            elif name in _RAW_FIELDS:
                values = [bytes(raw) or None for raw in map(attrgetter(name), a)]
            else:
                values = list(map(attrgetter(name), a))
            columns[name] = _floats(values) if name in _FLOAT_FIELDS else values
        return pd.DataFrame(columns)

    def frame(self, kind: str) -> pd.DataFrame:
        frames = self.frames[kind]
        if not frames:
            return pd.DataFrame({name: pd.Series(dtype=object) for name in _FIELDS[kind]}).astype(
                {name: float for name in _FIELDS[kind] if name in _FLOAT_FIELDS}
            )
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


_NO_ARGS = _Args()


def _floats(values: list) -> np.ndarray:
    """Numbers as float64, with NaN for missing ones (and for the odd string a tool wrote)."""
    try:
        return np.array(values, dtype=float)
    except (TypeError, ValueError):
        return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(float)


def _blocks(path: Path) -> Iterator[bytes]:
    """Decompressed blocks of a (possibly gzipped) file, never the whole file at once."""
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gzipped else open
    with opener(path, "rb") as f:  # type: ignore[operator]
        while block := f.read(_BLOCK_BYTES):
            yield block


def _decode(blocks: Iterator[bytes], columns: _Columns) -> _File:
    """Decode a trace from its blocks, event chunk by event chunk where the layout allows.

    The buffer is decoded in place: the comma after a chunk's last event is swapped for the
    closing bracket while msgspec reads the chunk, then for the opening bracket of the next
    one, so no chunk is ever copied.
    """
    buffer = bytearray()
    header: bytes | None = None
    start = 0  # index of the "[" that opens the next chunk
    for block in blocks:
        buffer += block
        if header is None:
            opening = _EVENTS_START.search(buffer)
            if opening is None:
                continue
            header, start = bytes(buffer[: opening.start()]), opening.end() - 1
        cut = buffer.rfind(_EVENT_SEPARATOR, start)
        if cut > start:
            comma = cut + 4
            buffer[comma] = ord("]")
            with memoryview(buffer) as view:
                columns.add(_EVENTS_DECODER.decode(view[start : comma + 1]))
            buffer[comma] = ord("[")
            del buffer[:comma]
            start = 0
    if header is None:
        # No traceEvents array found by the fast path: decode whole for a precise error.
        meta = _FILE_DECODER.decode(buffer)
        columns.add(meta.traceEvents)
        return meta
    closing = _EVENTS_END.search(buffer, start)
    if closing is None:
        # Not Kineto's layout: decode what is left in one piece.
        rest = _FILE_DECODER.decode(header + b'"traceEvents": ' + bytes(buffer[start:]))
        columns.add(rest.traceEvents)
        return rest
    with memoryview(buffer) as view:
        columns.add(_EVENTS_DECODER.decode(view[start : closing.end()]))
    return _FILE_DECODER.decode(header + b'"traceEvents": []' + bytes(buffer[closing.end() :]))


# --- the tables -------------------------------------------------------------------------------------


@dataclass
class Trace:
    """The events of one trace, as tidy frames. Times in seconds from the trace's first event.

    Attributes:
        ops: host ops (``cpu_op``), with ``parent`` (row of the enclosing op, -1 at top level),
            ``depth``, ``top`` (row of the outermost op), ``module`` (``nn.Module`` scope or "").
        kernels: GPU kernels, with ``op`` (row in ``ops`` of the launching op, -1 if unknown).
        copies: GPU memory copies and sets (``kind``: "memcpy" / "memset"), linked like kernels.
        runtime: CUDA/HIP runtime and driver calls on the host.
        annotations: ``record_function`` ranges on the host and their GPU projections.
        memory: allocator samples (``device``, ``allocated_bytes``) when memory was profiled.
        devices: the ``deviceProperties`` of the trace (name, memory, SMs ...).
    """

    ops: pd.DataFrame
    kernels: pd.DataFrame
    copies: pd.DataFrame
    runtime: pd.DataFrame
    annotations: pd.DataFrame
    memory: pd.DataFrame
    devices: list[dict] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    origin_us: float = 0.0
    path: str | None = None

    @property
    def event_count(self) -> int:
        return sum(
            len(f) for f in (self.ops, self.kernels, self.copies, self.runtime, self.annotations)
        )

    @property
    def gpu_events(self) -> pd.DataFrame:
        """Kernels and copies together: everything that occupies the GPU."""
        columns = ["name", "start_s", "end_s", "dur_s", "stream", "device", "op"]
        return pd.concat(
            [self.kernels[columns].assign(kind="kernel"), self.copies[[*columns, "kind"]]],
            ignore_index=True,
        )


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: decoding makes millions of tuples and strings that
    cannot form cycles, and collections triggered by them cost a quarter of the parse time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def read_trace(path: str | PathLike) -> Trace:
    """Read a Kineto / Chrome-trace JSON file, gzipped or not."""
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such file.")
    if path.is_dir():
        raise TraceError(
            f"{path} is a folder; give the path of one trace file (.json or .json.gz)."
        )
    try:
        with no_gc():
            return _build(_decode(_blocks(path), columns := _Columns()), columns, str(path))
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(
            f"{path}: the gzip stream is damaged or truncated ({e}). Copy the file again."
        ) from None
    except msgspec.DecodeError as e:
        raise TraceError(f"{path}: {_describe_decode_error(e)}") from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not a JSON text file ({e}).") from None


def parse_trace(data: bytes | str | dict, name: str = "<trace>") -> Trace:
    """Parse a trace held in memory: JSON bytes or text, or the already-decoded dict."""
    if isinstance(data, dict):
        data = msgspec.json.encode(data)
    if isinstance(data, str):
        data = data.encode()
    if data[:2] == b"\x1f\x8b":
        data = gzip.GzipFile(fileobj=io.BytesIO(data)).read()
    try:
        with no_gc():
            return _build(_decode(iter([data]), columns := _Columns()), columns, None)
    except msgspec.DecodeError as e:
        raise TraceError(f"{name}: {_describe_decode_error(e)}") from None
    except TraceError as e:
        raise TraceError(f"{name}: {e}") from None


def _describe_decode_error(error: Exception) -> str:
    text = str(error)
    if "truncated" in text.lower():
        return f"the JSON ends early ({text}): the file is truncated. Export or copy it again."
    return (
        f"not a PyTorch profiler trace ({text}). Expected the JSON that "
        "torch.profiler's export_chrome_trace() writes (a top-level object with 'traceEvents')."
    )


def _build(meta: _File, columns: _Columns, path: str | None) -> Trace:
    frames = {kind: columns.frame(kind) for kind in _FIELDS}
    frames = {kind: f[f["ts"].notna()] for kind, f in frames.items()}
    if not any(len(f) for f in frames.values()) and not columns.timed:
        raise TraceError(
            "the trace holds no timed events ('traceEvents' is empty or missing). Export it with "
            "torch.profiler's export_chrome_trace() after the profiled code has run."
        )
    origin = min([float(f["ts"].min()) for f in frames.values() if len(f)] + [columns.first_ts])
    for f in frames.values():
        f["dur"] = f["dur"].fillna(0.0).clip(lower=0.0)
        f["start_s"] = (f["ts"] - origin) * 1e-6
        f["dur_s"] = f["dur"] * 1e-6
        f["end_s"] = f["start_s"] + f["dur_s"]

    ops, annotations = _host_hierarchy(frames["host"].reset_index(drop=True))
    runtime = _select(frames["runtime"], ["pid", "tid", "external_id", "correlation"])
    gpu = ["pid", "tid", "stream", "device", "external_id", "correlation"]
    kernels = _select(frames["kernel"], gpu)
    copies = _select(frames["copy"], [*gpu, "bytes"])
    copies.insert(1, "kind", np.where(frames["copy"]["cat"] == "gpu_memset", "memset", "memcpy"))
    copies["bytes"] = pd.to_numeric(copies["bytes"], errors="coerce")
    gpu_annotations = _select(frames["gpu_annotation"], ["pid", "tid", "external_id"])
    annotations = pd.concat(
        [annotations.assign(where="host"), gpu_annotations.assign(where="gpu")],
        ignore_index=True,
    )
    kernels["op"] = _launching_op(kernels, ops, runtime)
    copies["op"] = _launching_op(copies, ops, runtime)
    kernels, copies = _normalise_gpu_ids(kernels), _normalise_gpu_ids(copies)

    memory = pd.DataFrame(columns.memory, columns=["ts", "device", "allocated_bytes"])
    memory["start_s"] = (pd.to_numeric(memory["ts"], errors="coerce") - origin) * 1e-6
    memory["allocated_bytes"] = pd.to_numeric(memory["allocated_bytes"], errors="coerce")
    memory = memory.drop(columns="ts")
    devices = meta.deviceProperties if isinstance(meta.deviceProperties, list) else []
    metadata = {
        key: getattr(meta, key)
        for key in (
            "distributedInfo",
            "displayTimeUnit",
            "baseTimeNanoseconds",
            "traceName",
            "schemaVersion",
        )
        if getattr(meta, key) is not None
    }
    return Trace(
        ops=ops,
        kernels=kernels,
        copies=copies,
        runtime=runtime,
        annotations=annotations,
        memory=memory,
        devices=devices,
        metadata=metadata,
        origin_us=origin,
        path=path,
    )


def _select(events: pd.DataFrame, extra: list[str]) -> pd.DataFrame:
    return events[["name", "start_s", "dur_s", "end_s", *extra]].reset_index(drop=True)


def _normalise_gpu_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Stream and device as integers: ROCm and old traces differ from CUDA's layout."""
    stream = pd.to_numeric(frame["stream"], errors="coerce")
    frame["stream"] = (
        stream.fillna(pd.to_numeric(frame["tid"], errors="coerce")).fillna(-1).astype(np.int64)
    )
    device = pd.to_numeric(frame["device"], errors="coerce")
    frame["device"] = (
        device.fillna(pd.to_numeric(frame["pid"], errors="coerce")).fillna(0).astype(np.int64)
    )
    return frame.drop(columns=["pid", "tid"])


# --- the host hierarchy ------------------------------------------------------------------------------


def _host_hierarchy(host: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parent, depth, outermost op and module scope of each host event.

    Host events on one thread nest. Sorted by (thread, start, longest first), the parent of an
    event is the nearest earlier event that ends no earlier than it does: a 'previous greater
    element' search, done for all events at once by pointer jumping.
    """
    thread = _thread_codes(host["pid"], host["tid"])
    order = np.lexsort((-host["dur_s"].to_numpy(), host["start_s"].to_numpy(), thread))
    host = host.iloc[order].reset_index(drop=True)
    thread_codes = thread[order]
    end = host["end_s"].to_numpy()
    n = len(host)
    parent = np.arange(n) - 1
    same_thread = np.zeros(n, dtype=bool)
    same_thread[1:] = thread_codes[1:] == thread_codes[:-1]
    parent[~same_thread] = -1
    # Tolerate rounding: a child may end a hair after its parent in float microseconds.
    slack = 1e-9
    while True:
        active = parent >= 0
        not_enclosing = np.zeros(n, dtype=bool)
        not_enclosing[active] = end[parent[active]] + slack < end[active]
        if not not_enclosing.any():
            break
        parent[not_enclosing] = parent[parent[not_enclosing]]

    is_op = (host["cat"] == "cpu_op").to_numpy()
    names = host["name"].to_numpy()
    # Module scopes exist only where the trace has Python stacks: test just those rows.
    is_module = (host["cat"] == "python_function").to_numpy().copy()
    if is_module.any():
        is_module[is_module] = host["name"][is_module].str.startswith(_MODULE_PREFIX).to_numpy()
    op_parent = _nearest_ancestor(parent, is_op)
    module_row = _nearest_ancestor(parent, is_module)
    depth = _depth(op_parent)
    top = _outermost(op_parent)

    # Renumber: ops keep their own row numbers, links point into the ops frame.
    op_rows = np.flatnonzero(is_op)
    new_index = np.full(n, -1)
    new_index[op_rows] = np.arange(len(op_rows))
    module = np.full(n, "", dtype=object)
    if is_module.any():
        has_module = module_row >= 0
        module[has_module] = [
            name.removeprefix(_MODULE_PREFIX) for name in names[module_row[has_module]]
        ]
    ops = host.loc[
        is_op,
        [
            "name",
            "start_s",
            "dur_s",
            "end_s",
            "pid",
            "tid",
            "external_id",
            "dims",
            "types",
            "concrete",
        ],
    ]
    ops = ops.reset_index(drop=True)
    ops["parent"] = _remap(new_index, op_parent[op_rows])
    ops["top"] = _remap(new_index, np.where(top[op_rows] >= 0, top[op_rows], op_rows))
    ops["depth"] = depth[op_rows]
    ops["module"] = module[op_rows]
    ops["self_cpu_s"] = _self_time(ops)
    ops["shapes"], ops["dims"] = _shared_values(ops["dims"])
    ops["dtypes"], ops["types"] = _shared_values(ops["types"])
    ops["concrete"] = _shared_values(ops["concrete"])[1]
    annotations = host.loc[
        host["cat"] == "user_annotation",
        ["name", "start_s", "dur_s", "end_s", "pid", "tid", "external_id"],
    ]
    return ops, annotations.reset_index(drop=True)


def _thread_codes(pid: pd.Series, tid: pd.Series) -> np.ndarray:
    """One integer per distinct (pid, tid) pair; ids may be numbers or strings."""
    pid_codes = pd.factorize(pid)[0].astype(np.int64)
    tid_codes = pd.factorize(tid)[0].astype(np.int64)
    return pid_codes * (int(tid_codes.max(initial=0)) + 1) + tid_codes


def _shared_values(raw: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Decode raw JSON values once per distinct value: (their text, the values). Rows with the
    same text share one decoded object; missing values give "" and None."""
    codes, uniques = pd.factorize(raw)
    text = np.empty(len(uniques) + 1, dtype=object)
    values = np.empty(len(uniques) + 1, dtype=object)
    text[-1], values[-1] = "", None  # code -1: missing
    for i, value in enumerate(uniques):
        text[i] = value.decode()
        values[i] = msgspec.json.decode(value)
    return text[codes], values[codes]


def _remap(new_index: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return np.where(rows >= 0, new_index[np.maximum(rows, 0)], -1)


def _nearest_ancestor(parent: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each row, the nearest ancestor (not itself) for which ``wanted`` is true, else -1."""
    found = parent.copy()
    while True:
        climbing = found >= 0
        climbing[climbing] = ~wanted[found[climbing]]
        if not climbing.any():
            return found
        found[climbing] = parent[found[climbing]]


def _depth(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), dtype=np.int64)
    cursor = parent.copy()
    while (alive := cursor >= 0).any():
        depth[alive] += 1
        cursor[alive] = parent[cursor[alive]]
    return depth


def _outermost(parent: np.ndarray) -> np.ndarray:
    """The top-level ancestor of each row (-1 for rows that are top level themselves)."""
    top = parent.copy()
    while True:
        has_parent = top >= 0
        step = np.zeros(len(top), dtype=bool)
        step[has_parent] = parent[top[has_parent]] >= 0
        if not step.any():
            return top
        top[step] = parent[top[step]]


def _self_time(ops: pd.DataFrame) -> np.ndarray:
    """Host time of each op minus the time of its direct child ops."""
    children = ops.loc[ops["parent"] >= 0].groupby("parent")["dur_s"].sum()
    self_time = ops["dur_s"].to_numpy().copy()
    self_time[children.index.to_numpy()] -= children.to_numpy()
    return np.maximum(self_time, 0.0)


def _launching_op(gpu: pd.DataFrame, ops: pd.DataFrame, runtime: pd.DataFrame) -> np.ndarray:
    """Row in ``ops`` of the op that launched each GPU event, or -1.

    The launch is the runtime call with the kernel's correlation id; the innermost op around
    that call on its thread launched the kernel. Where the runtime call is missing, the
    kernel's External id names the op (older traces reuse it for the correlation id, so it is
    only the fallback).
    """
    rows = np.full(len(gpu), -1, dtype=np.int64)
    if len(runtime) and len(ops):
        launches = runtime.dropna(subset=["correlation"]).drop_duplicates(
            "correlation", keep="last"
        )
        launch_row = pd.Series(np.arange(len(launches)), index=launches["correlation"].to_numpy())
        matched = pd.to_numeric(gpu["correlation"], errors="coerce").map(launch_row)
        has_launch = matched.notna().to_numpy()
        if has_launch.any():
            launch = launches.iloc[matched[has_launch].astype(np.int64).to_numpy()]
            rows[has_launch] = _enclosing_op(ops, launch)
    missing = rows < 0
    if missing.any():
        op_ids = pd.to_numeric(ops["external_id"], errors="coerce")
        valid = op_ids.notna() & ~op_ids.duplicated(keep="last")
        row_of_id = pd.Series(
            np.flatnonzero(valid.to_numpy()), index=op_ids[valid].astype(np.int64).to_numpy()
        )
        external = pd.to_numeric(gpu["external_id"], errors="coerce")[missing]
        rows[missing] = external.map(row_of_id).fillna(-1).astype(np.int64).to_numpy()
    return rows


def _enclosing_op(ops: pd.DataFrame, calls: pd.DataFrame) -> np.ndarray:
    """The innermost op on the same thread whose interval holds each call's start, or -1."""
    thread_codes = _thread_codes(
        pd.concat([ops["pid"], calls["pid"]]), pd.concat([ops["tid"], calls["tid"]])
    )
    op_thread, call_thread = thread_codes[: len(ops)], thread_codes[len(ops) :]
    # ops are sorted by (thread, start): the last op starting at or before the call is the
    # innermost candidate; climb its parents until one still runs at the call's time.
    key_scale = float(max(ops["end_s"].max(), calls["start_s"].max()) + 1.0)
    op_key = op_thread * key_scale + ops["start_s"].to_numpy()
    order = np.argsort(op_key, kind="stable")
    call_key = call_thread * key_scale + calls["start_s"].to_numpy()
    found = order[np.maximum(np.searchsorted(op_key[order], call_key, side="right") - 1, 0)]
    found = np.where(np.searchsorted(op_key[order], call_key, side="right") > 0, found, -1)
    found[(found >= 0) & (op_thread[np.maximum(found, 0)] != call_thread)] = -1
    parent = ops["parent"].to_numpy()
    end = ops["end_s"].to_numpy()
    t = calls["start_s"].to_numpy()
    while True:
        outside = found >= 0
        outside[outside] = end[found[outside]] < t[outside]
        if not outside.any():
            return found
        found[outside] = parent[found[outside]]
