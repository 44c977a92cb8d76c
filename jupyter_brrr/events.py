"""Tidy event tables from a PyTorch profiler (Kineto / Chrome-trace JSON) trace.

A trace becomes one pandas frame per kind of event: host ops, GPU kernels, memory copies and sets,
runtime calls, annotations. Each kernel is linked to the op that launched it (through the
External id, or the runtime call's correlation id), and each op to its parent op and its
``nn.Module`` scope. The same code serves a live profile (its exported trace) and a file.

Big traces are the norm, so the hot path makes no Python object per event: the file is inflated
by ISA-L and cut into chunks of whole events (a Kineto file is streamed,
never held whole); the compiled reader (``_scan.c``) reads each chunk into columns, several
chunks at once in threads, and only the distinct names, ids and shapes become Python objects.
Where that reader is not built, or declines a chunk it does not know, msgspec decodes the chunk
into typed structs, read into arrays by C-level iteration; both give the same tables. The tables
are built from those arrays once, and the hierarchy is computed with numpy pointer jumping rather
than a per-event loop.

All times are seconds from the first event of the trace.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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

try:  # the compiled columnar reader; without it (no C compiler at install) msgspec reads all
    from . import _scan
except ImportError:  # pragma: no cover - the CI build always has it
    _scan = None

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
    # Which rank of which job wrote the trace (job.py): torch >= 2.4 writes host_name, and
    # jupyter_brrr's recording helper (record.py) its own key.
    host_name: Any = None
    jupyter_brrr: Any = None


_EVENTS_DECODER = msgspec.json.Decoder(list[_Event])
_FILE_DECODER = msgspec.json.Decoder(_File)

# Kineto writes one event per object at two spaces of indent; these patterns let a file be cut
# into chunks of whole events without parsing it. Any other layout is decoded in one piece.
_EVENTS_START = re.compile(rb'"traceEvents"\s*:\s*\[')
_EVENT_SEPARATOR = b"\n  },\n  {"
_EVENTS_END = re.compile(rb"\n  \}\s*\]")
_BLOCK_BYTES = 1 << 20

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

    A chunk is read by the compiled reader into columns (``_sort_scanned``) or, where it is
    declined or not built, decoded by msgspec into structs (``_add_structs``); either way the
    events are sorted into kinds with numpy, not a loop over them, and the only per-event work
    is C-level. Chunks are added in file order, and their events keep it.
    """

    def __init__(self) -> None:
        # kind -> field -> one array per chunk, concatenated once at the end.
        self.parts: dict[str, dict[str, list[np.ndarray]]] = {
            kind: {name: [] for name in names} for kind, names in _FIELDS.items()
        }
        self.memory: list[tuple[float, Any, float]] = []
        self._codes = _Codes()
        self._pending: deque[tuple[bytearray, Future | None]] = deque()
        self._scanned: list[tuple] = []
        # Over every timed complete event, kept or not: a trace of a cell that ran no torch op
        # still has its profiler's own events, and is empty rather than broken.
        self.timed = 0
        self.first_ts = math.inf

    def add(self, events: list[_Event]) -> None:
        """Events decoded by msgspec, after the chunks still being read (file order)."""
        self.finish()
        self._add_structs(events)

    def add_array(self, chunk: bytearray) -> None:
        """The events of the JSON array ``chunk`` (a copy the caller no longer touches).

        The compiled reader reads it in a worker thread, without the GIL, while the caller
        inflates and cuts the next chunks; a chunk it declines is decoded by msgspec (which
        then also words any error). At most a few chunks wait at once, so a big file is never
        held whole.
        """
        future = _reader_pool().submit(_scan.scan, chunk, 0, len(chunk)) if _scan else None
        self._pending.append((chunk, future))
        while len(self._pending) > _PENDING_CHUNKS:
            self._take_oldest()

    def finish(self) -> None:
        """Wait for the chunks being read and sort their events into kinds."""
        while self._pending:
            self._take_oldest()
        self._sort_scanned()

    def _take_oldest(self) -> None:
        chunk, future = self._pending.popleft()
        scanned = future.result() if future else None
        if scanned is None:
            self._sort_scanned()  # keep the file's order
            self._add_structs(_EVENTS_DECODER.decode(chunk))
        else:
            self._scanned.append(scanned)

    def _add_structs(self, events: list[_Event]) -> None:
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

    def _sort_scanned(self) -> None:
        """The compiled reader's chunks read so far, sorted into kinds as ``_add_structs`` does
        for structs, all chunks at once.

        A coded field holds, per event, the index of its raw JSON text among the chunk's
        distinct ones; the chunks' texts are merged into one numbering, each distinct text is
        decoded once, and the field's default for a missing field goes last, where -1 points.
        """
        if not self._scanned:
            return
        chunks, self._scanned = self._scanned, []
        codes, numbers, texts = _merge_scanned(chunks)
        code = dict(zip(_SCANNED_CODED, codes, strict=True))
        number = dict(zip(_SCANNED_NUMBERS, numbers, strict=True))
        values = {
            name: _distinct_values(name, distinct)
            for name, distinct in zip(_SCANNED_CODED, texts, strict=True)
        }
        phases, categories = values["ph"], values["cat"]
        kind_of_pair = np.array([[self._codes[(p, c)] for c in categories] for p in phases])
        kinds = kind_of_pair[code["ph"], code["cat"]]
        normalised = np.array([self._codes.categories.get(c, c) for c in categories], object)
        for kind_code, kind in enumerate(_FIELDS):
            rows = np.flatnonzero(kinds == kind_code)
            if not len(rows):
                continue
            parts = self.parts[kind]
            for name in _FIELDS[kind]:
                if name in _FLOAT_FIELDS:
                    parts[name].append(number[name][rows])
                    continue
                codes_here = code[name][rows]
                if name == "cat":
                    parts[name].append(normalised[codes_here])
                elif name in _ID_FIELDS:
                    # Converted as _ids converts each event's value, once per distinct value.
                    used = np.flatnonzero(np.bincount(codes_here + 1, minlength=1)) - 1
                    ids = _ids(values[name][used].tolist())
                    lookup = np.empty(len(values[name]), ids.dtype)
                    lookup[used] = ids
                    parts[name].append(lookup[codes_here])
                else:
                    parts[name].append(values[name][codes_here])
        other = kinds == _OTHER_COMPLETE
        if other.any():
            ts = number["ts"][other]
            self.timed += int(np.isfinite(ts).sum())
            self.first_ts = float(np.nanmin(ts, initial=self.first_ts))
        instants = np.flatnonzero(kinds == _INSTANT)
        totals = values["total_allocated"][code["total_allocated"][instants]]
        sampled = instants[np.not_equal(totals, None)]
        self.memory += zip(
            number["ts"][sampled].tolist(),
            values["device_id"][code["device_id"][sampled]].tolist(),
            values["total_allocated"][code["total_allocated"][sampled]].tolist(),
            strict=True,
        )

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
                parts[name].append(_ids(list(map(attrgetter(_PATHS[name]), events))))
            else:
                values = map(attrgetter(_PATHS[name]), events)
                if name == "cat":
                    values = map(self._codes.categories.__getitem__, values)
                elif name in _RAW_FIELDS:
                    values = map(bytes, values)  # b"" where missing; hashable, decoded once later
                parts[name].append(np.fromiter(values, dtype=object, count=len(events)))

    def arrays(self, kind: str) -> dict[str, np.ndarray]:
        """The fields of one kind of event, each as one array over all chunks."""
        self.finish()
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


# Chunks read at once by the compiled reader's threads, waiting or being read.
_PENDING_CHUNKS = min(8, os.cpu_count() or 1)


@functools.cache
def _reader_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_PENDING_CHUNKS, thread_name_prefix="jupyter_brrr-reader")


# A forked child has none of its parent's threads: it makes a pool of its own.
if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_reader_pool.cache_clear)


def _merge_scanned(chunks: list[tuple]) -> tuple[np.ndarray, np.ndarray, list[list[bytes]]]:
    """The columns of the compiled reader's chunks joined, with one numbering of the distinct
    texts of each coded field."""
    codes = [np.frombuffer(c[1], np.int32).reshape(len(_SCANNED_CODED), c[0]) for c in chunks]
    numbers = [np.frombuffer(c[2], np.float64).reshape(len(_SCANNED_NUMBERS), c[0]) for c in chunks]
    if len(chunks) == 1:
        return codes[0], numbers[0], list(chunks[0][3])
    texts, joined = [], []
    for index in range(len(_SCANNED_CODED)):
        merged: dict[bytes, int] = {}
        renumbered = []
        for chunk, chunk_codes in zip(chunks, codes, strict=True):
            # The chunk's codes in the merged numbering; -1 (missing) stays -1.
            renumber = [merged.setdefault(text, len(merged)) for text in chunk[3][index]]
            renumbered.append(np.array([*renumber, -1], np.int32)[chunk_codes[index]])
        texts.append(list(merged))
        joined.append(np.concatenate(renumbered))
    return np.stack(joined), np.concatenate(numbers, axis=1), texts


# The compiled reader's fields, in the order of its columns (see _scan.c).
_SCANNED_CODED = (
    *("ph", "cat", "name", "pid", "tid", "stream", "device", "bytes", "dims", "types"),
    *("concrete", "total_allocated", "device_id"),
)
_SCANNED_NUMBERS = ("ts", "dur", "external_id", "correlation")


def _distinct_values(name: str, texts: list[bytes]) -> np.ndarray:
    """The decoded distinct values of a coded field, and last its value where missing."""
    if name in _RAW_FIELDS:
        decoded: list = texts
    else:
        decoded = msgspec.json.decode(b"[" + b",".join(texts) + b"]")
    missing = "" if name in ("ph", "cat", "name") else b"" if name in _RAW_FIELDS else None
    values = np.empty(len(decoded) + 1, dtype=object)
    values[:-1] = decoded
    values[-1] = missing
    return values


def _floats(events: list[_Event], path: str) -> np.ndarray:
    """A field as float64, with NaN for missing values (and for the odd string a tool wrote)."""
    try:
        return np.fromiter(map(attrgetter(path), events), dtype=float, count=len(events))
    except (TypeError, ValueError):
        values = pd.Series(list(map(attrgetter(path), events)), dtype=object)
        return pd.to_numeric(values, errors="coerce").to_numpy(float)


def _ids(values: list) -> np.ndarray:
    """Integer ids as int64; as objects where a tool wrote strings or left some out."""
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except (TypeError, ValueError, OverflowError):
        return np.fromiter(values, dtype=object, count=len(values))


def _blocks(path: Path) -> Iterator[bytes]:
    """Decompressed blocks of a (possibly gzipped) file, never the whole file at once.

    ISA-L's gzip (``isal.igzip``, the standard module's interface) inflates about six times
    faster than zlib. (Its threaded reader was no faster here, as the chunks are read in threads
    already, and its read-ahead buffer cost a file's worth of memory.)
    """
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    opener = igzip.open if gzipped else open
    with opener(path, "rb") as f:  # type: ignore[operator]
        while block := f.read(_BLOCK_BYTES):
            yield block


def _decode(blocks: Iterator[bytes], columns: _Columns) -> _File:
    """Decode a trace from its blocks, event chunk by event chunk where the layout allows.

    Each block is cut after its last whole event; the text up to there, with what was left of
    the block before, becomes a chunk of its own (its last comma made the closing bracket),
    handed to ``columns``, which reads it while the next blocks are inflated and cut.
    """
    head = bytearray()  # the start of the file, until the events array opens
    header: bytes | None = None
    pending = bytearray()  # "[" and the events of the next chunk read so far
    for block in blocks:
        if header is None:
            head += block
            opening = _EVENTS_START.search(head)
            if opening is None:
                continue
            header, block = bytes(head[: opening.start()]), bytes(head[opening.end() - 1 :])
        cut = block.rfind(_EVENT_SEPARATOR)
        with memoryview(block) as view:
            if cut < 0:
                pending += view
                continue
            comma = cut + 4
            chunk, pending = pending, bytearray(b"[")
            chunk += view[: comma + 1]
            chunk[-1] = ord("]")
            pending += view[comma + 1 :]
        columns.add_array(chunk)
    if header is None:
        # No traceEvents array found by the fast path: decode whole for a precise error.
        meta = _FILE_DECODER.decode(head)
        columns.add(meta.traceEvents)
        return meta
    closing = _EVENTS_END.search(pending)
    if closing is None:
        # Not Kineto's layout: decode what is left in one piece.
        rest = _FILE_DECODER.decode(header + b'"traceEvents": ' + bytes(pending))
        columns.add(rest.traceEvents)
        return rest
    columns.add_array(pending[: closing.end()])
    columns.finish()
    return _FILE_DECODER.decode(header + b'"traceEvents": []' + bytes(pending[closing.end() :]))


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

    def gpu_columns(self) -> dict[str, np.ndarray]:
        """Kernels and copies together, everything that occupies the GPU, as arrays (``kind``:
        "kernel", "memcpy" or "memset")."""
        columns = ("name", "start_s", "end_s", "dur_s", "stream", "device", "op")
        both = {c: np.concatenate([self.kernels[c], self.copies[c]]) for c in columns}
        kind = np.empty(len(self.kernels), dtype=object)
        kind.fill("kernel")  # one shared string: np.full would make a new one for each row
        both["kind"] = np.concatenate([kind, self.copies["kind"].to_numpy()])
        return both


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
            "host_name",
            "jupyter_brrr",
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


def _frame(events: dict[str, np.ndarray], extra: list[str]) -> pd.DataFrame:
    """A table of the named fields (after name and times), in that order."""
    return frame({n: events[n] for n in ["name", "start_s", "dur_s", "end_s", *extra]})


def _normalise_gpu_ids(table: pd.DataFrame) -> pd.DataFrame:
    """Stream and device as integers: ROCm and old traces differ from CUDA's layout."""
    columns = {name: table[name].to_numpy() for name in table.columns if name not in ("pid", "tid")}
    columns["stream"] = _integer_ids(table["stream"], table["tid"], -1)
    columns["device"] = _integer_ids(table["device"], table["pid"], 0)
    return frame(columns)


def _integer_ids(ids: pd.Series, fallback: pd.Series, default: int) -> np.ndarray:
    """``ids`` as int64; where one is missing or not a number, ``fallback``'s, else ``default``."""
    if ids.dtype == np.int64:  # CUDA's layout: nothing to fill
        return ids.to_numpy()
    ids = pd.to_numeric(ids, errors="coerce")
    fallback = pd.to_numeric(fallback, errors="coerce")
    return ids.fillna(fallback).fillna(default).astype(np.int64).to_numpy()


# --- the host hierarchy ------------------------------------------------------------------------------


def _host_hierarchy(host: dict[str, np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ops with their parent, depth, outermost op and module scope; and the host annotations.

    Host events on one thread nest. Sorted by (thread, start, longest first), the parent of an
    event is the nearest earlier event that ends no earlier than it does: a 'previous greater
    element' search, done for all events at once by pointer jumping.
    """
    thread = _thread_codes(host["pid"], host["tid"])
    order = _nesting_order(thread, host["start_s"], host["dur_s"])
    # Only the columns the hierarchy needs are sorted; the tables take their rows through
    # ``order`` from the columns as they are.
    thread_codes = thread[order]
    end = host["end_s"][order]
    category = host["cat"][order]
    n = len(end)
    parent = np.arange(n) - 1
    same_thread = np.zeros(n, dtype=bool)
    same_thread[1:] = thread_codes[1:] == thread_codes[:-1]
    parent[~same_thread] = -1
    # Tolerate rounding: a child may end a hair after its parent in float microseconds.
    slack = 1e-9
    # Only the rows whose parent does not enclose them jump; a row whose parent does is done,
    # so each round looks at the rows still jumping rather than at all of them.
    rows = np.flatnonzero(parent >= 0)
    while len(rows):
        rows = rows[end[parent[rows]] + slack < end[rows]]
        parent[rows] = parent[parent[rows]]
        rows = rows[parent[rows] >= 0]

    is_op = category == "cpu_op"
    names = host["name"]  # not sorted: read through ``order``
    # Module scopes exist only where the trace has Python stacks: test just those rows.
    is_module = category == "python_function"
    if is_module.any():
        is_module[is_module] = [name.startswith(_MODULE_PREFIX) for name in names[order[is_module]]]
    op_parent = _nearest_ancestor(parent, is_op)
    depth, top = _depth_and_top(op_parent)

    # Renumber: ops keep their own row numbers, links point into the ops frame.
    op_rows = np.flatnonzero(is_op)
    new_index = np.full(n, -1)
    new_index[op_rows] = np.arange(len(op_rows))
    module = np.empty(len(op_rows), dtype=object)
    module.fill("")  # one shared "": np.full would make a new string for each row
    if is_module.any():
        module_row = _nearest_ancestor(parent, is_module)[op_rows]
        has_module = module_row >= 0
        module[has_module] = [
            name.removeprefix(_MODULE_PREFIX) for name in names[order[module_row[has_module]]]
        ]
    op_parent = _remap(new_index, op_parent[op_rows])
    source = order[op_rows]  # the ops' rows in ``host``
    shapes, dims = _shared_values(host["dims"][source])
    dtypes, types = _shared_values(host["types"][source])
    ops = frame(
        {
            **{name: host[name][source] for name in _OP_FIELDS},
            "dims": dims,
            "types": types,
            "concrete": _shared_values(host["concrete"][source])[1],
            "parent": op_parent,
            "top": _remap(new_index, np.where(top[op_rows] >= 0, top[op_rows], op_rows)),
            "depth": depth[op_rows],
            "module": module,
            "self_cpu_s": _self_time(host["dur_s"][source], op_parent),
            "shapes": shapes,
            "dtypes": dtypes,
        }
    )
    source = order[category == "user_annotation"]
    annotations = {name: values[source] for name, values in host.items()}
    annotations["where"] = np.full(len(source), "host", dtype=object)
    # Kept for the collectives (comms.py): gloo and NCCL annotations carry the tensor's shape.
    annotations["dims"] = _shared_values(annotations["dims"])[1]
    annotations["types"] = _shared_values(annotations["types"])[1]
    return ops, _frame(annotations, ["pid", "tid", "external_id", "where", "dims", "types"])


_OP_FIELDS = ("name", "start_s", "dur_s", "end_s", "pid", "tid", "external_id")


def _nesting_order(thread: np.ndarray, start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """The rows sorted by (thread, start, longest first), equal ones in row order: what
    ``np.lexsort((-dur, start, thread))`` gives, faster. Sorting the durations is the slow part
    (they come in no order, the starts nearly sorted), and only rows of equal thread and start,
    a few, need them."""
    order = np.lexsort((start, thread))
    tied = (thread[order][1:] == thread[order][:-1]) & (start[order][1:] == start[order][:-1])
    if tied.any():
        run = np.concatenate([[0], np.cumsum(~tied)])  # runs of equal (thread, start)
        in_tie = np.zeros(len(order), dtype=bool)
        in_tie[1:] = tied
        in_tie[:-1] |= tied
        at = np.flatnonzero(in_tie)
        rows = order[at]  # a run's rows are contiguous and in row order: lexsort keeps that
        order[at] = rows[np.lexsort((-dur[rows], run[at]))]
    return order


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
    climbing = np.flatnonzero(found >= 0)  # the rows still climbing, fewer each round
    while len(climbing):
        climbing = climbing[~wanted[found[climbing]]]
        found[climbing] = parent[found[climbing]]
        climbing = climbing[found[climbing] >= 0]
    return found


def _depth_and_top(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The number of ancestors of each row, and its top-level ancestor (-1 for rows that are
    top level themselves), in one climb."""
    depth = np.zeros(len(parent), dtype=np.int64)
    top = np.full(len(parent), -1)
    rows = np.flatnonzero(parent >= 0)  # the rows still climbing, fewer each round
    cursor = parent[rows]
    while len(rows):
        depth[rows] += 1
        top[rows] = cursor
        cursor = parent[cursor]
        rows, cursor = rows[cursor >= 0], cursor[cursor >= 0]
    return depth, top


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
