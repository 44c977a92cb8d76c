"""Tidy event tables from a PyTorch profiler (Kineto / Chrome-trace JSON) trace.

A trace becomes one pandas frame per kind of event: host ops, GPU kernels, memory copies and sets,
runtime calls, annotations. Each kernel is linked to the op that launched it (through the
External id, or the runtime call's correlation id), and each op to its parent op and its
``nn.Module`` scope. The same code serves a live profile (its exported trace) and a file.

Big traces are the norm, so the hot path is vectorised: the file is inflated by ISA-L and decoded
straight into typed structs by msgspec in chunks of events (a Kineto file is streamed, never held
whole); each chunk is sorted into kinds and turned into numpy arrays by C-level iteration; the
tables are built from those arrays once, and the hierarchy is computed with numpy pointer
jumping rather than a per-event loop.

All times are seconds from the first event of the trace.
"""

from __future__ import annotations

import gc
import math
import re
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
from isal import igzip, isal_zlib

from .tables import frame, group_codes

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
    # None for the many events without args (flow arrows); _Columns gives the events it keeps
    # an empty _Args instead, so that one attrgetter("args.<field>") reads any field.
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
_ID_FIELDS = frozenset(("pid", "tid", "stream", "device", "bytes"))


class _Columns:
    """The fields of each kind of event (host ops, runtime calls, kernels, copies, GPU
    annotations) as arrays, and the memory samples, filled chunk by chunk.

    Each chunk is sorted into kinds with numpy, not a loop over its events: the only per-event
    work is C-level (msgspec's decode, ``map(attrgetter)``, ``np.fromiter``).
    """

    def __init__(self) -> None:
        # kind -> field -> one array per chunk, concatenated once at the end.
        self.parts: dict[str, dict[str, list[np.ndarray]]] = {
            kind: {name: [] for name in names} for kind, names in _FIELDS.items()
        }
        self.memory: list[tuple[float, Any, float]] = []
        self._codes = _Codes()
        # Over every timed complete event, kept or not: a trace of a cell that ran no torch op
        # still has its profiler's own events, and is empty rather than broken.
        self.timed = 0
        self.first_ts = math.inf

    def add(self, events: list[_Event]) -> None:
        n = len(events)
        codes = np.fromiter(
            map(self._codes.__getitem__, map(_PHASE_AND_CATEGORY, events)), np.int64, n
        )
        rows = np.fromiter(events, dtype=object, count=n)
        for code, kind in enumerate(_FIELDS):
            chosen = rows[codes == code].tolist()  # lists iterate faster than arrays
            if chosen:
                self._add_kind(kind, chosen)
        other = rows[codes == _OTHER_COMPLETE].tolist()
        if other:
            ts = _floats(other, "ts")
            self.timed += int(np.isfinite(ts).sum())
            self.first_ts = float(np.nanmin(ts, initial=self.first_ts))
        for e in rows[codes == _INSTANT].tolist():
            if e.args is not None and e.args.total_allocated is not None:
                self.memory.append((e.ts, e.args.device_id, e.args.total_allocated))

    def _add_kind(self, kind: str, events: list[_Event]) -> None:
        if None in map(_ARGS, events):
            events = [
                e if e.args is not None else msgspec.structs.replace(e, args=_Args())
                for e in events
            ]
        parts = self.parts[kind]
        for name in _FIELDS[kind]:
            if name in _FLOAT_FIELDS:
                parts[name].append(_floats(events, _PATHS[name]))
            elif name in _ID_FIELDS:
                parts[name].append(_ids(events, _PATHS[name]))
            else:
                values = map(attrgetter(_PATHS[name]), events)
                if name == "cat":
                    values = map(self._codes.categories.__getitem__, values)
                elif name in _RAW_FIELDS:
                    values = map(bytes, values)  # b"" where missing; hashable, decoded once later
                parts[name].append(np.fromiter(values, dtype=object, count=len(events)))

    def arrays(self, kind: str) -> dict[str, np.ndarray]:
        """The fields of one kind of event, each as one array over all chunks."""
        return {
            name: np.concatenate(chunks) if chunks else np.empty(0, _empty_dtype(name))
            for name, chunks in self.parts[kind].items()
        }


class _Codes(dict):
    """(phase, category as written) -> what to do with such an event: the code of its kind in
    ``_FIELDS``, ``_OTHER_COMPLETE``, ``_INSTANT`` or ``_SKIP``. Filled as new pairs appear."""

    def __init__(self) -> None:
        super().__init__()
        self.categories: dict[str, str] = {}  # category as written -> normalised

    def __missing__(self, key: tuple[str, str]) -> int:
        phase, raw = key
        category = _CATEGORY_ALIASES.get(raw.lower(), raw.lower())
        self.categories[raw] = category
        if phase == "X":
            code = _KIND_CODES.get(_KIND_OF_CATEGORY.get(category), _OTHER_COMPLETE)
        else:
            code = _INSTANT if phase == "i" else _SKIP
        self[key] = code
        return code


def _empty_dtype(field: str) -> type:
    return float if field in _FLOAT_FIELDS else np.int64 if field in _ID_FIELDS else object


_PHASE_AND_CATEGORY, _ARGS = attrgetter("ph", "cat"), attrgetter("args")
_KIND_CODES = {kind: code for code, kind in enumerate(_FIELDS)}
_OTHER_COMPLETE, _INSTANT, _SKIP = -1, -2, -3
# Where each field lives in an event.
_PATHS = {
    name: name if name in _Event.__struct_fields__ else f"args.{name}"
    for names in _FIELDS.values()
    for name in names
}


def _floats(events: list[_Event], path: str) -> np.ndarray:
    """A field as float64, with NaN for missing values (and for the odd string a tool wrote)."""
    try:
        return np.fromiter(map(attrgetter(path), events), dtype=float, count=len(events))
    except (TypeError, ValueError):
        values = pd.Series(list(map(attrgetter(path), events)), dtype=object)
        return pd.to_numeric(values, errors="coerce").to_numpy(float)


def _ids(events: list[_Event], path: str) -> np.ndarray:
    """An integer id field as int64; as objects where a tool wrote strings or left some out."""
    try:
        return np.fromiter(map(attrgetter(path), events), dtype=np.int64, count=len(events))
    except (TypeError, ValueError, OverflowError):
        return np.fromiter(map(attrgetter(path), events), dtype=object, count=len(events))


def _blocks(path: Path) -> Iterator[bytes]:
    """Decompressed blocks of a (possibly gzipped) file, never the whole file at once.

    ISA-L's gzip (``isal.igzip``, the standard module's interface) inflates about six times
    faster than zlib: on a large trace that is a tenth of the load time.
    """
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    opener = igzip.open if gzipped else open
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
        both = {c: np.concatenate([self.kernels[c], self.copies[c]]) for c in columns}
        both["kind"] = np.concatenate(
            [np.full(len(self.kernels), "kernel", dtype=object), self.copies["kind"]]
        )
        return frame(both)


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
    except (EOFError, isal_zlib.error, igzip.BadGzipFile) as e:
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
        data = igzip.decompress(data)
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
    # Plain arrays until each table is final: pandas' per-operation cost would otherwise be a
    # good part of the load time.
    events = {kind: _timed(columns.arrays(kind)) for kind in _FIELDS}
    if not any(len(e["ts"]) for e in events.values()) and not columns.timed:
        raise TraceError(
            "the trace holds no timed events ('traceEvents' is empty or missing). Export it with "
            "torch.profiler's export_chrome_trace() after the profiled code has run."
        )
    origin = min(
        [float(e["ts"].min()) for e in events.values() if len(e["ts"])] + [columns.first_ts]
    )
    for e in events.values():
        dur = np.maximum(np.nan_to_num(e.pop("dur"), nan=0.0), 0.0) * 1e-6
        e["start_s"] = (e.pop("ts") - origin) * 1e-6
        e["dur_s"] = dur
        e["end_s"] = e["start_s"] + dur

    ops, annotations = _host_hierarchy(events["host"])
    runtime = _frame(events["runtime"], ["pid", "tid", "external_id", "correlation"])
    gpu = ["pid", "tid", "stream", "device", "external_id", "correlation"]
    kernels = _frame(events["kernel"], gpu)
    copy_events = events["copy"]
    copy_events["kind"] = np.where(copy_events["cat"] == "gpu_memset", "memset", "memcpy")
    copies = _frame(copy_events, ["kind", *gpu, "bytes"])
    copies["bytes"] = pd.to_numeric(copies["bytes"], errors="coerce")
    gpu_annotations = events["gpu_annotation"]
    gpu_annotations["where"] = np.full(len(gpu_annotations["name"]), "gpu", dtype=object)
    annotations = pd.concat(
        [annotations, _frame(gpu_annotations, ["pid", "tid", "external_id", "where"])],
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


def _timed(events: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The events that have a timestamp (a trace may carry some without)."""
    has_ts = ~np.isnan(events["ts"])
    return events if has_ts.all() else {name: v[has_ts] for name, v in events.items()}


def _frame(
    events: dict[str, np.ndarray], extra: list[str], rows: Any = slice(None)
) -> pd.DataFrame:
    """A table of the named fields (after name and times), in that order, at ``rows``."""
    return frame({n: events[n][rows] for n in ["name", "start_s", "dur_s", "end_s", *extra]})


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


def _host_hierarchy(host: dict[str, np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ops with their parent, depth, outermost op and module scope; and the host annotations.

    Host events on one thread nest. Sorted by (thread, start, longest first), the parent of an
    event is the nearest earlier event that ends no earlier than it does: a 'previous greater
    element' search, done for all events at once by pointer jumping.
    """
    thread = _thread_codes(host["pid"], host["tid"])
    order = np.lexsort((-host["dur_s"], host["start_s"], thread))
    host = {name: values[order] for name, values in host.items()}
    thread_codes = thread[order]
    end = host["end_s"]
    n = len(end)
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

    category = host["cat"]
    is_op = category == "cpu_op"
    names = host["name"]
    # Module scopes exist only where the trace has Python stacks: test just those rows.
    is_module = category == "python_function"
    if is_module.any():
        is_module[is_module] = [name.startswith(_MODULE_PREFIX) for name in names[is_module]]
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
    op_parent = _remap(new_index, op_parent[op_rows])
    shapes, dims = _shared_values(host["dims"][op_rows])
    dtypes, types = _shared_values(host["types"][op_rows])
    ops = frame(
        {
            **{name: host[name][op_rows] for name in _OP_FIELDS},
            "dims": dims,
            "types": types,
            "concrete": _shared_values(host["concrete"][op_rows])[1],
            "parent": op_parent,
            "top": _remap(new_index, np.where(top[op_rows] >= 0, top[op_rows], op_rows)),
            "depth": depth[op_rows],
            "module": module[op_rows],
            "self_cpu_s": _self_time(host["dur_s"][op_rows], op_parent),
            "shapes": shapes,
            "dtypes": dtypes,
        }
    )
    annotation_rows = np.flatnonzero(category == "user_annotation")
    host["where"] = np.full(n, "host", dtype=object)
    annotations = _frame(host, ["pid", "tid", "external_id", "where"], annotation_rows)
    return ops, annotations


_OP_FIELDS = ("name", "start_s", "dur_s", "end_s", "pid", "tid", "external_id")


def _thread_codes(pid: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """One integer per distinct (pid, tid) pair; ids may be numbers or strings."""
    return group_codes(pid, tid)[0]


def _shared_values(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode raw JSON values once per distinct value: (their text, the values). Rows with the
    same text share one decoded object; missing values (b"" or None) give "" and None."""
    codes, uniques = pd.factorize(raw)
    text = np.empty(len(uniques) + 1, dtype=object)
    values = np.empty(len(uniques) + 1, dtype=object)
    text[-1], values[-1] = "", None  # code -1: missing
    for i, value in enumerate(uniques):
        text[i] = value.decode()
        values[i] = msgspec.json.decode(value) if value else None
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


def _self_time(dur: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Host time of each op minus the time of its direct child ops."""
    has_parent = parent >= 0
    children = np.bincount(parent[has_parent], weights=dur[has_parent], minlength=len(dur))
    return np.maximum(dur - children, 0.0)


def _launching_op(gpu: pd.DataFrame, ops: pd.DataFrame, runtime: pd.DataFrame) -> np.ndarray:
    """Row in ``ops`` of the op that launched each GPU event, or -1.

    The launch is the runtime call with the kernel's correlation id; the innermost op around
    that call on its thread launched the kernel. Where the runtime call is missing, the
    kernel's External id names the op (older traces reuse it for the correlation id, so it is
    only the fallback).
    """
    rows = np.full(len(gpu), -1, dtype=np.int64)
    if len(runtime) and len(ops):
        launch = _last_row_of(gpu["correlation"].to_numpy(), runtime["correlation"].to_numpy())
        found = launch >= 0
        if found.any():
            call = launch[found]
            rows[found] = _enclosing_op(
                ops,
                runtime["pid"].to_numpy()[call],
                runtime["tid"].to_numpy()[call],
                runtime["start_s"].to_numpy()[call],
            )
    missing = rows < 0
    if missing.any() and len(ops):
        external = gpu["external_id"].to_numpy()[missing]
        rows[missing] = _last_row_of(external, ops["external_id"].to_numpy())
    return rows


def _last_row_of(wanted: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """For each value of ``wanted``, the last row of ``ids`` that holds it, or -1 (NaN, a
    missing id, matches nothing)."""
    rows = np.flatnonzero(~np.isnan(ids))
    if not len(rows):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = rows[np.lexsort((rows, ids[rows]))]  # by id, then row: the last of equals last
    sorted_ids = ids[order]
    at = np.maximum(np.searchsorted(sorted_ids, wanted, side="right") - 1, 0)
    return np.where(sorted_ids[at] == wanted, order[at], -1)


def _enclosing_op(
    ops: pd.DataFrame, pid: np.ndarray, tid: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """The innermost op on the same thread whose interval holds each call's start, or -1."""
    thread_codes = _thread_codes(
        np.concatenate([ops["pid"].to_numpy(), pid]), np.concatenate([ops["tid"].to_numpy(), tid])
    )
    op_thread, call_thread = thread_codes[: len(ops)], thread_codes[len(ops) :]
    # ops are sorted by (thread, start): the last op starting at or before the call is the
    # innermost candidate; climb its parents until one still runs at the call's time.
    key_scale = float(max(ops["end_s"].max(), start.max()) + 1.0)
    op_key = op_thread * key_scale + ops["start_s"].to_numpy()
    order = np.argsort(op_key, kind="stable")
    call_key = call_thread * key_scale + start
    before = np.searchsorted(op_key[order], call_key, side="right")
    found = np.where(before > 0, order[np.maximum(before - 1, 0)], -1)
    found[(found >= 0) & (op_thread[np.maximum(found, 0)] != call_thread)] = -1
    parent = ops["parent"].to_numpy()
    end = ops["end_s"].to_numpy()
    while True:
        outside = found >= 0
        outside[outside] = end[found[outside]] < start[outside]
        if not outside.any():
            return found
        found[outside] = parent[found[outside]]
