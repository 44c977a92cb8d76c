"""Tidy event tables from a PyTorch profiler (Kineto / Chrome-trace JSON) trace.

A trace becomes one pandas frame per kind of event: host ops, GPU kernels, memory copies and sets,
runtime calls, annotations. Each kernel is linked to the op that launched it (through the
External id, or the runtime call's correlation id), and each op to its parent op and its
``nn.Module`` scope. The same code serves a live profile (its exported trace) and a file.

Big traces are the norm, so the hot path makes no Python object per event: the file is inflated
by ISA-L, its top-level object read member by member (``_Parser``), and its events array cut
into chunks of whole events, at Kineto's separator between events where the layout has one and
by structure (``_scan.split``) where not, so that a file of any layout is streamed, never held
whole; the compiled reader (``_scan.c``) reads each chunk into columns, several chunks at once
in threads, and only the distinct names, ids and shapes become Python objects. Where that reader
is not built, or declines a chunk it does not know, msgspec decodes the chunk into typed
structs, read into arrays by C-level iteration; both give the same tables, and the same as
``json.load``'s rules and msgspec on the whole text (``tests/reference_reader.py``, the tests'
and benchmarks' reference). The tables are built from those arrays once, and the hierarchy is
computed with numpy pointer jumping rather than a per-event loop.

A file that is not a trace fails with ``TraceError``, saying what is wrong and where (the byte
offset in the file's text, or the path of a field: ``traceEvents[1234].pid``), as early as it
can be seen: a FIFO or a device before any read, text that cannot be JSON at its first bytes.

All times are seconds from the first event of the trace.
"""

from __future__ import annotations

import codecs
import errno
import functools
import itertools
import json
import math
import operator
import os
import re
import stat
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np
import pandas as pd
from isal import igzip, isal_zlib

from ..schema.report import LONGEST_S
from .frames import frame, group_codes

try:  # the compiled columnar reader; without it (no C compiler at install) msgspec reads all
    from . import _scan
except ImportError:  # pragma: no cover - the CI build always has it
    _scan = None

# The names of the ranges capture.attribution opens around module calls and lines of the user's
# code: the reader keeps them apart from the ops.
MODULE_PREFIX = "nn.Module: "
LINE_PREFIX = "jupyter_brrr.line: "

__all__ = ["Trace", "TraceError", "parse_trace", "read_trace"]


class TraceError(ValueError):
    """A file that is not a readable PyTorch profiler trace."""


# --- decoding -------------------------------------------------------------------------------------


# What an id, a time or a count may be: a JSON scalar. An array or object there is an error
# with the field's path (as the general decoder words it), never a crash further on.
_Scalar = int | float | str | bool | None


class _Args(msgspec.Struct, gc=False):
    external_id: _Scalar = msgspec.field(default=None, name="External id")
    correlation: _Scalar = None
    stream: _Scalar = None
    device: _Scalar = None
    bytes: _Scalar = None
    # Kept as raw JSON: a trace repeats the same few hundred shapes thousands of times, so only
    # the distinct ones are decoded (see _shared_values).
    dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")
    types: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Concrete Inputs")
    strides: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Strides")
    total_allocated: _Scalar = msgspec.field(default=None, name="Total Allocated")
    device_id: _Scalar = msgspec.field(default=None, name="Device Id")
    # Kernels: the launch grid; collectives' kernels (NCCL, recent PyTorch): what they move.
    grid: Any = None
    collective: _Scalar = msgspec.field(default=None, name="Collective name")
    in_nelems: _Scalar = msgspec.field(default=None, name="In msg nelems")
    out_nelems: _Scalar = msgspec.field(default=None, name="Out msg nelems")
    group_size: _Scalar = msgspec.field(default=None, name="Group size")
    comm_dtype: _Scalar = msgspec.field(default=None, name="dtype")
    # ... and how they were launched (what limits an op far under its roof).
    block: Any = None
    registers: _Scalar = msgspec.field(default=None, name="registers per thread")
    shared_memory: _Scalar = msgspec.field(default=None, name="shared memory")


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: _Scalar = None
    tid: _Scalar = None
    ts: _Scalar = None
    dur: _Scalar = None
    # None for the many events without args (flow arrows); _Columns gives the events it keeps
    # an empty _Args instead, so that one attrgetter("args.<field>") reads any field.
    args: _Args | None = None


class _File(msgspec.Struct, gc=False):
    traceEvents: list[_Event] = []
    deviceProperties: list[dict[str, Any]] | None = None
    distributedInfo: Any = None
    displayTimeUnit: Any = None
    baseTimeNanoseconds: Any = None
    traceName: Any = None
    schemaVersion: Any = None
    # Which rank of which job wrote the trace (job.py): torch >= 2.4 writes host_name, and
    # jupyter_brrr's recording helper (record.py) its own key.
    host_name: Any = None
    jupyter_brrr: Any = None


class _Device(msgspec.Struct, gc=False):
    """The fields of a ``deviceProperties`` entry that the analysis reads, typed: an entry that
    gives one of them otherwise is refused with the field's path. The entry itself is kept
    whole, as the trace has it."""

    id: int | None = None
    name: str | None = None
    # At most a pebibyte of memory and a million multiprocessors: a larger figure is damage.
    totalGlobalMem: Annotated[int, msgspec.Meta(ge=0, le=1 << 50)] | None = None
    numSms: Annotated[int, msgspec.Meta(ge=0, le=1 << 20)] | None = None


_EVENTS_DECODER = msgspec.json.Decoder(list[_Event])
_FILE_DECODER = msgspec.json.Decoder(_File)
_FILE_FIELDS = frozenset(_File.__struct_fields__)

# Kineto writes one event per object at two spaces of indent: its separator between events
# lets a file be cut into chunks of whole events at the speed of a byte search. A file of
# another layout (compact JSON's "},{", say) has a separator of its own: the reader takes the
# bytes between the first two events that _scan.split finds, a closing brace, a comma and an
# opening brace with the whitespace between them, and searches for those from then on. A cut
# found so is checked by reading the chunk: a cut inside a string or a nested value leaves a
# chunk that is not valid JSON (an open string, or brackets that do not pair); where that
# fails, _scan.split finds the cuts.
_EVENT_SEPARATOR = b"\n  },\n  {"
_LEARNED_SEPARATOR = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")
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
# Kernel fields kept as decoded values (None where absent): the launch grid, what a collective
# moves (recent PyTorch writes these on NCCL kernels), and the rest of the launch: block (a list
# of 3), registers per thread, static shared memory (what limits an op far under its roof).
_KERNEL_EXTRAS = (
    *("grid", "collective", "in_nelems", "out_nelems", "group_size", "comm_dtype"),
    *("block", "registers", "shared_memory"),
)

# What each kind of complete ("X") event keeps; everything else in a trace is skipped.
_FIELDS = {
    "host": (
        *("cat", "name", "pid", "tid", "ts", "dur", "external_id"),
        *("dims", "types", "concrete", "strides"),
    ),
    "runtime": ("name", "pid", "tid", "ts", "dur", "external_id", "correlation"),
    "kernel": (
        *("name", "pid", "tid", "ts", "dur", "stream", "device", "external_id", "correlation"),
        *_KERNEL_EXTRAS,
    ),
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
_RAW_FIELDS = frozenset(("dims", "types", "concrete", "strides"))
_ID_FIELDS = frozenset(("pid", "tid", "stream", "device", "bytes"))


class _Columns:
    """The fields of each kind of event (host ops, runtime calls, kernels, copies, GPU
    annotations) as arrays, and the memory samples, filled chunk by chunk.

    A chunk read by the compiled reader comes as columns (``add_scanned``), sorted into kinds by
    its merger (``_scan.merge``, in C) as it comes; one decoded by msgspec as structs (``add``),
    sorted with numpy. Either way the only per-event work is C-level. Chunks are added in file
    order, and their events keep it.
    """

    def __init__(self) -> None:
        # kind -> field -> one array per chunk, concatenated once at the end.
        self.parts: dict[str, dict[str, list[np.ndarray | _Coded]]] = {
            kind: {name: [] for name in names} for kind, names in _FIELDS.items()
        }
        self.memory: list[tuple[float, Any, float]] = []
        self._codes = _Codes()
        self._merger = _scan.merger(_MERGED_FIELD_NUMBERS) if _scan is not None else None
        self._merged = False  # chunks merged since the merger's columns were last taken
        self._texts: dict[bytes, str] = {}  # raw phase or category -> its text
        # Over every timed complete event, kept or not: a trace of a cell that ran no torch op
        # still has its profiler's own events, and is empty rather than broken.
        self.timed = 0
        self.first_ts = math.inf

    def add(self, events: list[_Event]) -> None:
        """Events decoded by msgspec, after the chunks read before them (file order)."""
        self._take_scanned()
        self._add_structs(events)

    def add_scanned(self, scanned: tuple) -> None:
        """A chunk read by the compiled reader, sorted into kinds at once (in C, without the
        GIL), after the chunks before it."""
        phases, categories = scanned[3][0], scanned[3][1]
        # What each of the chunk's (phase, category) pairs is, the missing value last: the
        # pairs are few, so this stays in Python, where the rules are (_Codes).
        kinds = [
            _MERGED_CODE[self._codes[(phase, category)]]
            for phase in [*map(self._text, phases), ""]
            for category in [*map(self._text, categories), ""]
        ]
        _scan.merge(self._merger, scanned, np.array(kinds, np.int8).tobytes())  # pyright: ignore[reportOptionalMemberAccess]  # a scanned chunk means the reader is built
        self._merged = True

    def _text(self, raw: bytes) -> str:
        text = self._texts.get(raw)
        if text is None:
            text = self._texts[raw] = msgspec.json.decode(raw)
        return text

    def finish(self) -> None:
        """The merged chunks' columns into the tables' parts."""
        self._take_scanned()

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

    def _take_scanned(self) -> None:
        """The columns the merger sorted into kinds since the last take, as ``_add_structs``
        gives them for structs.

        A coded field holds, per event, the index of its raw JSON text among the file's distinct
        ones; each distinct text is decoded once, and the field's default for a missing field
        goes last, where -1 points.
        """
        if not self._merged:
            return
        self._merged = False
        merged, timed, first_ts = _scan.take(self._merger)  # pyright: ignore[reportOptionalMemberAccess]  # merged: the reader is built
        self.timed += timed
        self.first_ts = min(self.first_ts, first_ts)
        values = {
            name: _distinct_values(name, distinct)
            for name, distinct in zip(_SCANNED_CODED, _scan.texts(self._merger), strict=True)  # pyright: ignore[reportOptionalMemberAccess]
        }
        categories = values["cat"]
        normalised = np.array([self._codes.categories.get(c, c) for c in categories], object)
        for kind, columns in zip(_MERGED_KINDS, merged, strict=True):
            names = _MERGED_FIELDS[kind]
            column = {
                name: np.frombuffer(raw, float if name in _FLOAT_FIELDS else np.int32)
                for name, raw in zip(names, columns, strict=True)
            }
            if kind == _MEMORY_SAMPLES:
                totals = values["total_allocated"][column["total_allocated"]]
                sampled = np.not_equal(totals, None)  # pyright: ignore[reportArgumentType, reportCallIssue]  # numpy/pandas stubs: loose scalar types
                self.memory += zip(
                    column["ts"][sampled].tolist(),
                    values["device_id"][column["device_id"][sampled]].tolist(),
                    totals[sampled].tolist(),
                    strict=True,
                )
                continue
            if not len(column["ts"]):
                continue
            parts = self.parts[kind]
            for name in names:
                codes_here = column[name]
                if name in _FLOAT_FIELDS:
                    parts[name].append(codes_here)
                elif name == "cat":
                    category = normalised[codes_here]
                    if kind == "host":
                        # jupyter_brrr's own ranges (attribution.py) are scopes, not ops: told
                        # apart by name, once per distinct name.
                        scope = np.array([*map(_is_attribution_scope, values["name"])], bool)
                        if scope.any():
                            category[scope[column["name"]]] = _SCOPE
                    parts[name].append(category)
                elif name in _ID_FIELDS:
                    # Converted as _ids converts each event's value, once per distinct value.
                    used = np.flatnonzero(np.bincount(codes_here + 1, minlength=1)) - 1
                    ids = _ids(values[name][used].tolist())
                    lookup = np.empty(len(values[name]), ids.dtype)
                    lookup[used] = ids
                    parts[name].append(lookup[codes_here])
                elif name in _RAW_FIELDS:
                    # Kept as the merger's codes: the op hierarchy decodes each distinct text
                    # its rows use once (_shared_values), without a column of objects between.
                    parts[name].append(_Coded(codes_here, values[name]))
                else:
                    parts[name].append(values[name][codes_here])

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
                column = np.fromiter(values, dtype=object, count=len(events))
                if name == "cat" and kind == "host":
                    # As _sort_scanned does: jupyter_brrr's own ranges are scopes, not ops.
                    scope = _name_verdicts(
                        np.fromiter(map(_NAME, events), dtype=object, count=len(events)),
                        _is_attribution_scope,
                    )
                    column[scope] = _SCOPE
                parts[name].append(column)

    def take_arrays(self, kind: str, *, coded: bool = False) -> dict[str, Any]:
        """The fields of one kind of event, each as one array over all chunks; with ``coded``,
        a raw field that the merger gave as codes stays a ``_Coded``. The kind's parts are
        handed over, not kept: the caller alone then holds the columns and can let them go
        (at a gigabyte a file, each column held until the tables are built is memory that the
        load's peak adds up)."""
        self.finish()
        parts = self.parts[kind]
        arrays = {
            name: _joined(chunks, coded) if chunks else np.empty(0, _empty_dtype(name))
            for name, chunks in parts.items()
        }
        self.parts[kind] = {name: [] for name in parts}
        return arrays


class _Coded:
    """A column of raw JSON texts as the merger gives it: ``texts[codes]`` is the column, with
    the missing value (b"") last, where a code of -1 points. Rows are taken as from an array."""

    __slots__ = ("codes", "texts")

    def __init__(self, codes: np.ndarray, texts: np.ndarray) -> None:
        self.codes, self.texts = codes, texts

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows: np.ndarray) -> _Coded:
        return _Coded(self.codes[rows], self.texts)

    def objects(self) -> np.ndarray:
        return self.texts[self.codes]


def _joined(chunks: list, coded: bool = False) -> Any:
    """The parts of a column as one array; a single part as it is (a copy of a big file's
    column would cost its size in memory again). Parts of codes stay codes where ``coded`` and
    every part is: each take of the merger's columns gives all the distinct texts so far, the
    earlier ones first, so the last take's texts serve every part."""
    if any(isinstance(chunk, _Coded) for chunk in chunks):
        if coded and all(isinstance(chunk, _Coded) for chunk in chunks):
            if len(chunks) == 1:
                return chunks[0]
            return _Coded(
                np.concatenate([chunk.codes for chunk in chunks]),
                max((chunk.texts for chunk in chunks), key=len),
            )
        chunks = [chunk.objects() if isinstance(chunk, _Coded) else chunk for chunk in chunks]
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


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
            code = _KIND_CODES.get(_KIND_OF_CATEGORY.get(category), _OTHER_COMPLETE)  # pyright: ignore[reportArgumentType, reportCallIssue]  # a missing category has no code: other
        else:
            code = _INSTANT if phase == "i" else _SKIP
        self[key] = code
        return code


def _empty_dtype(field: str) -> type:
    return float if field in _FLOAT_FIELDS else np.int64 if field in _ID_FIELDS else object


_PHASE_AND_CATEGORY, _ARGS = attrgetter("ph", "cat"), attrgetter("args")
_NAME = attrgetter("name")
# The category given to jupyter_brrr's own module and line ranges (recorded as cpu_op events).
_SCOPE = "jupyter_brrr_scope"
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


# The compiled reader's fields, in the order of its columns (see _scan.c).
_SCANNED_CODED = (
    *("ph", "cat", "name", "pid", "tid", "stream", "device", "bytes", "dims", "types"),
    *("concrete", "total_allocated", "device_id", *_KERNEL_EXTRAS, "strides"),
)
_SCANNED_NUMBERS = ("ts", "dur", "external_id", "correlation")
# What the merger (_scan.merge) keeps of each kind of event: the fields of _FIELDS, and of the
# instant events the memory samples' fields; as its field numbers (a coded field's column, or
# one after the coded ones for a number).
_MEMORY_SAMPLES = "memory samples"
_MERGED_FIELDS = {**_FIELDS, _MEMORY_SAMPLES: ("ts", "device_id", "total_allocated")}
_MERGED_KINDS = tuple(_MERGED_FIELDS)
_MERGED_FIELD_NUMBERS = tuple(
    tuple(
        _SCANNED_CODED.index(name)
        if name in _SCANNED_CODED
        else len(_SCANNED_CODED) + _SCANNED_NUMBERS.index(name)
        for name in names
    )
    for names in _MERGED_FIELDS.values()
)
# _Codes' code of a (phase, category) pair -> the merger's: a kind's number, -1 for another timed
# complete event, any other negative number to skip the event.
_MERGED_CODE = {
    **{code: code for code in range(len(_FIELDS))},
    _OTHER_COMPLETE: -1,
    _INSTANT: _MERGED_KINDS.index(_MEMORY_SAMPLES),
    _SKIP: -3,
}


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
    except (TypeError, ValueError, OverflowError):
        return np.fromiter(map(_float_or_nan, map(attrgetter(path), events)), float, len(events))


def _float_or_nan(value: Any) -> float:
    """A number or numeric text as a float; NaN for anything else, and for an integer beyond
    a double's range (msgspec gives those as Python ints)."""
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return result if math.isfinite(result) or isinstance(value, float) else math.nan


def _ids(values: list) -> np.ndarray:
    """Integer ids as int64; as objects where a tool wrote strings or left some out."""
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except (TypeError, ValueError, OverflowError):
        return np.fromiter(values, dtype=object, count=len(values))


def _open_trace(path: Path) -> int:
    """A descriptor of ``path``, opened for reading only if it is a regular file.

    Opened without blocking and checked before any read: a FIFO would block ``open`` itself,
    and a device such as ``/dev/zero`` never ends. The error says what the path is instead.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        if path.is_symlink():
            raise TraceError(
                f"{path} is a symbolic link to {os.readlink(path)}, which does not exist."
            ) from None
        raise TraceError(f"{path}: no such file.") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise TraceError(
                f"{path}: the symbolic links of this path form a loop; give the path of the "
                "trace file itself."
            ) from None
        raise TraceError(f"{path}: cannot open it ({error.strerror}).") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise TraceError(
            f"{path} is a folder; give the path of one trace file (.json or .json.gz)."
        )
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise TraceError(
        f"{path} is {kind}, not a regular file: a trace is read from a file (.json or "
        ".json.gz); save the stream to a file first."
    )


def _blocks(path: Path) -> Iterator[bytes]:
    """Decompressed blocks of a (possibly gzipped) regular file, never the whole file at once.

    ISA-L's gzip (``isal.igzip``, the standard module's interface) inflates about six times
    faster than zlib. (Its threaded reader was no faster here, as the chunks are read in threads
    already, and its read-ahead buffer cost a file's worth of memory.)
    """
    with open(_open_trace(path), "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        source = igzip.open(f, "rb") if gzipped else f
        while block := source.read(_BLOCK_BYTES):
            yield block  # pyright: ignore[reportReturnType]  # both sources give bytes (opened in binary)


def _memory_blocks(data: bytes | bytearray) -> Iterator[bytes]:
    """A trace held in memory, in the blocks a file would give (so that one path reads both)."""
    if data[:2] == b"\x1f\x8b":
        data = igzip.decompress(data)
    with memoryview(data) as view:
        for start in range(0, len(data), _BLOCK_BYTES):
            yield bytes(view[start : start + _BLOCK_BYTES])


def _utf8_blocks(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The text as UTF-8, as ``json.loads`` takes bytes: a UTF-8 byte order mark dropped, and
    UTF-16 or UTF-32 text (a shell redirect on Windows writes UTF-16) converted as it streams."""
    first = b""
    for block in blocks:
        first += block
        if len(first) >= 4:
            break
    encoding = json.detect_encoding(first)
    if encoding == "utf-8":
        yield first
        yield from blocks
        return
    if encoding == "utf-8-sig":
        yield first[3:]
        yield from blocks
        return
    decoder = codecs.getincrementaldecoder(encoding)()
    for block in itertools.chain([first], blocks):
        yield decoder.decode(block).encode()
    yield decoder.decode(b"", final=True).encode()


# --- finding the events ------------------------------------------------------------------------------

# Whitespace as JSON has it; the bytes a JSON token outside strings may hold; a key's prefix.
_NOT_SPACE = re.compile(rb"[^ \t\n\r]")
_SPLIT_OUTSIDE = re.compile(rb"[^ \t\n\r:0-9+\-.eEtrufalsn]")
_SPLIT_IN_STRING = re.compile(rb'["\\\x00-\x1f]')
_KEY_PREFIX = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*')


def _split_py(
    buffer: bytearray, start: int, stop: int, state: int, first: bool
) -> tuple[int, int, int, int]:
    """``_scan.split`` (see ``_scan.c``) where the compiled reader is not built: where the values
    of a JSON container end in ``buffer[start:stop]``, tracking only strings and nesting."""
    depth, in_string, escaped = state >> 2, (state >> 1) & 1, state & 1
    at, cut, close, bad = start, -1, -1, -1
    while at < stop:
        if in_string:
            if escaped:
                escaped, at = 0, at + 1
                continue
            found = _SPLIT_IN_STRING.search(buffer, at, stop)
            if found is None:
                at = stop
                break
            at = found.start()
            byte = buffer[at]
            if byte == 0x22:  # "
                in_string = 0
            elif byte == 0x5C:  # backslash
                escaped = 1
            else:
                bad = at
                break
            at += 1
            continue
        found = _SPLIT_OUTSIDE.search(buffer, at, stop)
        if found is None:
            at = stop
            break
        at = found.start()
        byte = buffer[at]
        if byte == 0x22:
            in_string = 1
        elif byte in b"[{":
            depth += 1
        elif byte in b"]}":
            if depth == 0:
                close = at
                break
            depth -= 1
        elif byte == 0x2C:  # ,
            if depth == 0:
                cut = at + 1
                if first:
                    break
        else:
            bad = at
            break
        at += 1
    return cut, close, (depth << 2) | (in_string << 1) | escaped, bad


def _split(
    buffer: bytearray, start: int, stop: int, state: int, first: bool
) -> tuple[int, int, int, int]:
    if _scan is not None:
        return _scan.split(buffer, start, stop, state, first)
    return _split_py(buffer, start, stop, state, first)


@dataclass
class _Chunk:
    """Whole events cut from the file, framed as a JSON array for the readers."""

    text: bytearray  # "[" + the events' text + "]"
    origin: int  # offset in the file's text of the events' first byte
    closes: bool  # the last chunk of its array (its "]" was the array's own)
    future: Future | None  # the compiled reader at work on it


class _Recut(Exception):
    """A chunk cut at Kineto's separator did not read: cut again from its start, by structure."""


class _Parser:
    """Reads a trace's top-level object as it streams: each member but ``traceEvents`` decoded
    on its own (and checked by msgspec against ``_File``), the events array cut into chunks of
    whole events that the compiled reader reads in threads (msgspec where it declines one).

    The file is read once, front to back, holding a few chunks at a time: the header is found
    in one pass, text that cannot be JSON is refused where it starts, and a nested
    ``"traceEvents"`` key (in ``distributedInfo``, say) is only a key of that member. As in
    ``json.load``, the last top-level ``traceEvents`` wins.
    """

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self.buffer = bytearray()
        self.origin = 0  # offset in the file's text of buffer[0]
        self.pos = 0  # where the parse stands in buffer
        self.eof = False
        self.meta = _File()
        self.columns = _Columns()
        self._chunks: deque[_Chunk] = deque()
        self._structural = False  # cut by structure (after a failed cut)
        self._separator = _EVENT_SEPARATOR  # between events, where the cuts are searched for
        self._events_read = 0  # of the current array, in chunks checked so far

    # --- the text ------------------------------------------------------------------------

    def _more(self) -> bool:
        if self.eof:
            return False
        block = next(self._blocks, None)
        if block is None:
            self.eof = True
            return False
        self.buffer += block
        return True

    def _drop(self, count: int) -> None:
        """Forget the first ``count`` bytes of the buffer (read and no longer needed)."""
        if count:
            del self.buffer[:count]
            self.origin += count
            self.pos -= count

    def _next_byte(self) -> int | None:
        """Moves to the next byte that is not whitespace, and returns it (None at the end)."""
        while True:
            found = _NOT_SPACE.search(self.buffer, self.pos)
            if found:
                self.pos = found.start()
                return self.buffer[self.pos]
            self.pos = len(self.buffer)
            self._drop(self.pos)  # whitespace all of it
            if not self._more():
                return None

    def _error(self, at: int, what: str) -> TraceError:
        return TraceError(f"{what} at byte {self.origin + at:,} of the JSON text.")

    def _not_json(self, at: int) -> TraceError:
        byte = bytes(self.buffer[at : at + 1])
        return self._error(at, f"not valid JSON: {byte!r} cannot stand there")

    def _truncated(self, where: str) -> TraceError:
        return TraceError(
            f"the JSON ends early ({where}): the file is truncated. Export or copy it again."
        )

    # --- the top-level object -----------------------------------------------------------------

    def parse(self) -> tuple[_File, _Columns]:
        byte = self._next_byte()
        if byte is None:
            raise TraceError("the file is empty. Export the trace again.")
        if byte != 0x7B:  # {
            what = "a JSON array" if byte == 0x5B else "not JSON"
            raise TraceError(
                f"not a PyTorch profiler trace: the text is {what} (it starts with "
                f"{bytes(self.buffer[self.pos : self.pos + 16])!r}). Expected the JSON object "
                "that torch.profiler's export_chrome_trace() writes, with 'traceEvents'."
            )
        self.pos += 1
        if self._next_byte() == 0x7D:  # }
            self.pos += 1
        else:
            while True:
                self._member()
                byte = self._next_byte()
                if byte == 0x2C:  # ,
                    self.pos += 1
                    continue
                if byte == 0x7D:
                    self.pos += 1
                    break
                if byte is None:
                    raise self._truncated("the top-level object is not closed")
                raise self._error(self.pos, "expected ',' or '}' after a top-level member")
        if self._next_byte() is not None:
            raise self._error(self.pos, "text after the end of the trace's JSON object")
        self.columns.finish()
        return self.meta, self.columns

    def _member(self) -> None:
        """One member of the top-level object, from its key on."""
        byte = self._next_byte()
        if byte is None:
            raise self._truncated("in the top-level object")
        if byte != 0x22:
            raise self._error(self.pos, "expected a quoted key in the top-level object")
        key_start = self.pos
        key_end = self._string_end(key_start)
        key_text = bytes(self.buffer[key_start:key_end])
        key_origin = self.origin + key_start
        self.pos = key_end
        if self._next_byte() != 0x3A:  # :
            if self.eof and self.pos >= len(self.buffer):
                raise self._truncated("after a top-level key")
            raise self._error(self.pos, "expected ':' after a top-level key")
        self.pos += 1
        byte = self._next_byte()
        if byte is None:
            raise self._truncated("after a top-level key")
        key = self._decode_key(key_text, key_origin)
        if key == "traceEvents" and byte == 0x5B:  # [
            self._drop(self.pos)
            self._events()
            return
        value_start = self.pos
        value_end = self._value_end(value_start)
        self._decode_member(
            key, key_text, key_origin, bytes(self.buffer[value_start:value_end]), value_start
        )
        self.pos = value_end
        self._drop(self.pos)

    def _string_end(self, start: int) -> int:
        """The end of the JSON string that starts at ``start`` (a key), reading more as needed."""
        while True:
            end = _KEY_PREFIX.match(self.buffer, start).end()  # pyright: ignore[reportOptionalMemberAccess]  # matches: a key starts there
            if end < len(self.buffer) and not (
                end == len(self.buffer) - 1 and self.buffer[end] == 0x5C
            ):
                if self.buffer[end] == 0x22:
                    return end + 1
                raise self._error(end, "a control character or a bad escape in a key")
            # The key runs past the text read so far: read as much again (linear overall).
            wanted = 2 * len(self.buffer)
            while len(self.buffer) < wanted and self._more():
                pass
            if self.eof and end >= len(self.buffer) - 1:
                raise self._truncated("inside a top-level key")

    def _decode_key(self, text: bytes, origin: int) -> str:
        if b"\\" not in text:
            return text[1:-1].decode("utf-8", "replace")  # checked with its member, by msgspec
        try:
            return msgspec.json.decode(text, type=str)
        except msgspec.DecodeError as error:
            raise TraceError(_decode_problem(error, text, lambda at: origin + at)) from None

    def _value_end(self, start: int) -> int:
        """The end of the top-level member's value that starts at ``start``."""
        scanned, state = start, 0
        while True:
            cut, close, state, bad = _split(self.buffer, scanned, len(self.buffer), state, True)
            if bad >= 0:
                raise self._not_json(bad)
            if cut >= 0:
                return cut - 1
            if close >= 0:
                return close
            scanned = len(self.buffer)
            if not self._more():
                raise self._truncated("inside a top-level member")

    def _decode_member(
        self, key: str, key_text: bytes, key_origin: int, value: bytes, value_start: int
    ) -> None:
        """Decode one top-level member as msgspec would inside the whole file: the last of a
        key wins; a member ``_File`` does not know is only checked to be valid JSON."""
        text = b"{" + key_text + b":" + value + b"}"
        value_origin = self.origin + value_start

        def where(at: int) -> int:
            if at <= len(key_text):
                return key_origin + at - 1
            return value_origin + at - len(key_text) - 2

        try:
            text.decode("utf-8")  # msgspec leaves the text of a skipped value unchecked
            member = _FILE_DECODER.decode(text)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
            raise TraceError(_decode_problem(error, text, where)) from None
        if key in _FILE_FIELDS:
            setattr(self.meta, key, getattr(member, key))

    # --- the events array ------------------------------------------------------------------------

    def _events(self) -> None:
        """The events of a ``traceEvents`` array (the buffer starts at its "["), in chunks."""
        self.columns = _Columns()  # the last array of the file wins, as in json.load
        self._events_read = 0
        self._structural = False
        self.pos = 1
        self._drop(1)
        start = 0  # where the next chunk starts in the buffer: after a cut
        searched = 0  # how far the separator was looked for
        scanned, state = 0, 0  # how far _split read, and its state there
        cut_before = False  # a comma precedes the next chunk (an empty one is then an error)
        while True:
            try:
                if not self._structural:
                    separator = self._separator
                    cut = self.buffer.rfind(separator, max(searched - len(separator), start))
                    searched = len(self.buffer)
                    if cut >= 0:
                        comma = cut + separator.index(b",")
                        self._add_chunk(start, comma, closes=False, after_comma=cut_before)
                        start = scanned = comma + 1
                        state, cut_before = 0, True
                        self._drop(start)
                        searched, scanned, start = searched - start, scanned - start, 0
                        if self._more():
                            continue
                cut, close, state, bad = _split(
                    self.buffer, scanned, len(self.buffer), state, False
                )
                scanned = len(self.buffer) if close < 0 and bad < 0 else scanned
                if bad >= 0 or close >= 0:
                    # The cuts so far must hold before the split's view of the text counts.
                    self._check_chunks(0)
                    if bad >= 0:
                        raise self._not_json(bad)
                if close >= 0:
                    if cut >= 0:
                        self._add_chunk(start, cut - 1, closes=False, after_comma=cut_before)
                        start, cut_before = cut, True
                    self._add_chunk(start, close, closes=True, after_comma=cut_before)
                    self._check_chunks(0)
                    self.pos = close + 1
                    return
                if cut >= 0:
                    if not self._structural:
                        self._learn_separator(cut - 1)
                    self._add_chunk(start, cut - 1, closes=False, after_comma=cut_before)
                    start, cut_before = cut, True
                    self._drop(start)
                    searched, scanned, start = searched - start, scanned - start, 0
                if not self._more():
                    self._check_chunks(0)
                    raise self._unclosed_events(start)
            except _Recut as recut:
                # Cut again by structure from the chunk that did not read, over the text of the
                # chunks after it and what is left in the buffer.
                failed: _Chunk = recut.args[0]
                later = list(self._chunks)
                self._chunks.clear()
                for chunk in later:
                    if chunk.future is not None and not chunk.future.cancel():
                        chunk.future.result()
                text = bytearray()
                for chunk in [failed, *later]:
                    text += memoryview(chunk.text)[1:-1]
                    text += b"]" if chunk.closes else b","
                last = later[-1] if later else failed
                text += memoryview(self.buffer)[last.origin + len(last.text) - 1 - self.origin :]
                self.buffer, self.origin = text, failed.origin
                self.pos = start = searched = scanned = state = 0
                self._structural = True
                cut_before = recut.args[1]

    def _learn_separator(self, comma: int) -> None:
        """The bytes around the comma at ``buffer[comma]``, between two events, as the separator
        to search for next (when they are a closing and an opening brace, and the whitespace
        between them: the layout's own; left as it was otherwise)."""
        before = self.buffer.rfind(b"}", max(comma - 64, 0), comma)
        found = _LEARNED_SEPARATOR.match(self.buffer, before) if before >= 0 else None
        if found is not None and found.start() < comma < found.end():
            self._separator = found.group()

    def _unclosed_events(self, start: int) -> TraceError:
        """The error for an events array that the file ends inside: msgspec's, where the text
        left is malformed rather than only cut short."""
        rest = b"[" + bytes(self.buffer[start:])
        origin = self.origin + start
        try:
            rest.decode("utf-8")
            _EVENTS_DECODER.decode(rest)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
            if "truncated" not in str(error):
                return TraceError(_decode_problem(error, rest, lambda at: origin + at - 1))
        count = self._events_read
        return self._truncated(f"inside traceEvents, after {count:,} event{'s' * (count != 1)}")

    def _add_chunk(self, start: int, end: int, *, closes: bool, after_comma: bool) -> None:
        """The events in ``buffer[start:end]`` (whole ones, between cuts) to be read."""
        if _NOT_SPACE.search(self.buffer, start, end) is None:
            if after_comma or not closes:  # "[a,]", "[a,,b]" or "[,": not JSON
                raise self._error(end, "an empty element in traceEvents (a comma too many)")
            return  # "[]"
        text = bytearray(b"[")
        text += memoryview(self.buffer)[start:end]
        text += b"]"
        future = _reader_pool().submit(_scan.scan, text, 0, len(text)) if _scan else None
        self._chunks.append(_Chunk(text, self.origin + start, closes, future))
        self._check_chunks(_PENDING_CHUNKS)

    def _check_chunks(self, keep: int) -> None:
        """Take the oldest chunks' events, in file order, until ``keep`` are left being read."""
        while len(self._chunks) > keep:
            chunk = self._chunks.popleft()
            scanned = chunk.future.result() if chunk.future else None
            if scanned is not None:
                self.columns.add_scanned(scanned)
                self._events_read += scanned[0]
                continue
            try:
                chunk.text.decode("utf-8")  # msgspec leaves the text of a skipped value unchecked
                events = _EVENTS_DECODER.decode(chunk.text)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
                if not self._structural:
                    raise _Recut(chunk, self._events_read > 0) from None
                where = functools.partial(operator.add, chunk.origin - 1)
                raise TraceError(
                    _decode_problem(error, chunk.text, where, self._events_read)
                ) from None
            self.columns.add(events)
            self._events_read += len(events)


def _decode_problem(
    error: Exception,
    text: bytes | bytearray,
    where: Callable[[int], int],
    first_event: int | None = None,
) -> str:
    """What is wrong with a piece of the file, in words, with the place in the whole file:
    the byte offset of a syntax error, the path of a field of the wrong type (an event's index
    counted from the file's first event, not the chunk's)."""
    message = str(error)
    if isinstance(error, RecursionError):
        return (
            "values nested too deeply to read (thousands of levels; a trace has a handful) in "
            f"the text from byte {where(0):,}: the file is not a trace, or is damaged."
        )
    if isinstance(error, UnicodeDecodeError):
        return (
            f"malformed UTF-8 at byte {where(error.start):,} of the JSON text: the file is "
            "damaged, or not UTF-8 text."
        )
    if isinstance(error, msgspec.ValidationError):
        found = re.fullmatch(r"(.*) - at `\$(.*)`", message)
        if found:
            problem, path = found.groups()
            index = re.match(r"\[(\d+)\]", path)
            if first_event is not None and index:  # a chunk's event: its index in the file
                path = f".traceEvents[{first_event + int(index.group(1))}]" + path[index.end() :]
            problem = problem[0].lower() + problem[1:]
            return f"{path.lstrip('.')}: {problem}. Not a trace this reader understands."
        return f"{message}. Not a trace this reader understands."
    byte = re.search(r" \(byte (\d+)\)$", message)
    if byte:
        detail = message[: byte.start()].removeprefix("JSON is malformed: ")
        return (
            f"not valid JSON: {detail} at byte {where(int(byte.group(1))):,} of the JSON text. "
            "Expected the JSON that torch.profiler's export_chrome_trace() writes."
        )
    if message == "Input data was truncated":
        # Within a whole piece this is msgspec's word for a \ud800-\udbff escape without its pair.
        lone = re.search(rb"\\u[dD][89aAbB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])", text)
        at = f" at byte {where(lone.start()):,} of the JSON text" if lone else ""
        return (
            f"a string holds a lone UTF-16 surrogate escape{at} (a \\ud800-\\udbff escape "
            "without its pair), which is not valid Unicode: the file is damaged."
        )
    if message == "Number out of range":
        return "a number beyond the range of a double (such as 1e400): the file is damaged."
    return f"not a PyTorch profiler trace ({message})."


def _check_devices(devices: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The ``deviceProperties`` entries, each checked against ``_Device``."""
    for index, props in enumerate(devices or []):
        try:
            msgspec.convert(props, _Device)
        except msgspec.ValidationError as error:
            found = re.fullmatch(r"(.*) - at `\$(.*)`", str(error))
            problem, path = found.groups() if found else (str(error), "")
            raise TraceError(
                f"deviceProperties[{index}]{path}: {problem[0].lower() + problem[1:]}. "
                "Not a trace this reader understands."
            ) from None
    return devices or []


# --- the tables -------------------------------------------------------------------------------------


@dataclass
class Trace:
    """The events of one trace, as tidy frames. Times in seconds from the trace's first event.

    Attributes:
        ops: host ops (``cpu_op``), with ``parent`` (row of the enclosing op, -1 at top level),
            ``depth``, ``top`` (row of the outermost op), ``module`` (``nn.Module`` scope or "");
            after them, one op per CUDA graph launch that no op encloses (a bare replay).
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
        "kernel", "memcpy" or "memset"). Made once per pair of tables (a load asks for them
        several times): a new dict each call, of read-only arrays shared between the calls."""
        return dict(self.derived("gpu_columns", (self.kernels, self.copies), self._gpu_columns))

    def _gpu_columns(self) -> dict[str, np.ndarray]:
        columns = ("name", "start_s", "end_s", "dur_s", "stream", "device", "op")
        both = {c: np.concatenate([self.kernels[c], self.copies[c]]) for c in columns}
        kind = np.empty(len(self.kernels), dtype=object)
        kind.fill("kernel")  # one shared string: np.full would make a new one for each row
        both["kind"] = np.concatenate([kind, self.copies["kind"].to_numpy()])
        for values in both.values():
            values.setflags(write=False)  # shared by every caller: none may write into them
        return both

    def derived(self, name: str, tables: tuple[pd.DataFrame, ...], make: Callable[[], Any]) -> Any:
        """``make()``, computed once while ``tables`` (the frames it reads) are the trace's own
        objects: a table replaced (``trace.kernels = ...``) makes it again. Kept outside the
        dataclass's fields, so equality and ``repr`` ignore it. The frames are not changed in
        place after a trace is built; a derived value must not be either (arrays: read-only)."""
        cache = self.__dict__.setdefault("_derived", {})
        found = cache.get(name)
        if (
            found is not None
            and len(found[0]) == len(tables)
            and all(map(operator.is_, found[0], tables))
        ):
            return found[1]
        value = make()
        cache[name] = (tables, value)
        return value


def read_trace(path: str | PathLike) -> Trace:
    """Read a Kineto / Chrome-trace JSON file, gzipped or not.

    Anything that is not a readable trace (not a regular file, not JSON, JSON that is not a
    trace, a damaged gzip stream) raises ``TraceError`` with what is wrong and where.
    """
    path = Path(path)
    try:
        return _read(_blocks(path), str(path))
    except TraceError as e:
        raise TraceError(e.args[0] if str(e).startswith(str(path)) else f"{path}: {e}") from None
    except (EOFError, isal_zlib.error, igzip.BadGzipFile) as e:  # pyright: ignore[reportGeneralTypeIssues]  # isal's zlib.error is an exception class (its stub says otherwise)
        raise TraceError(
            f"{path}: the gzip stream is damaged or truncated ({e}). Copy the file again."
        ) from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not valid {e.encoding} text ({e.reason}).") from None
    except OSError as e:
        raise TraceError(f"{path}: cannot read it ({e.strerror or e}).") from None


def parse_trace(data: bytes | str | dict, name: str = "<trace>") -> Trace:
    """Parse a trace held in memory: JSON bytes or text, or the already-decoded dict."""
    if isinstance(data, dict):
        data = msgspec.json.encode(data)
    if isinstance(data, str):
        data = data.encode()
    try:
        return _read(_memory_blocks(data), None)
    except TraceError as e:
        raise TraceError(f"{name}: {e}") from None
    except (EOFError, isal_zlib.error, igzip.BadGzipFile) as e:  # pyright: ignore[reportGeneralTypeIssues]  # isal's zlib.error is an exception class (its stub says otherwise)
        raise TraceError(f"{name}: the gzip stream is damaged or truncated ({e}).") from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{name}: not valid {e.encoding} text ({e.reason}).") from None


def _read(blocks: Iterator[bytes], path: str | None) -> Trace:
    meta, columns = _Parser(_utf8_blocks(blocks)).parse()
    meta.deviceProperties = _check_devices(meta.deviceProperties)
    return _build(meta, columns, path)


def _build(meta: _File, columns: _Columns, path: str | None) -> Trace:
    # Plain arrays until each table is final: pandas' per-operation cost would otherwise be a
    # good part of the load time.
    events = {kind: _timed(columns.take_arrays(kind, coded=kind == "host")) for kind in _FIELDS}
    if not any(len(e["ts"]) for e in events.values()) and not columns.timed:
        raise TraceError(
            "the trace holds no timed events ('traceEvents' is empty or missing). Export it with "
            "torch.profiler's export_chrome_trace() after the profiled code has run."
        )
    origin = min(
        [float(e["ts"].min()) for e in events.values() if len(e["ts"])] + [columns.first_ts]
    )
    for e in events.values():
        # In place (the columns are this load's own): at a gigabyte a file, each temporary
        # column is fresh memory to fault in. fmax: a missing (NaN) or negative duration is 0.
        dur = _own(e.pop("dur"))
        np.fmax(dur, 0.0, out=dur)
        dur *= 1e-6
        start = _own(e.pop("ts"))
        start -= origin
        start *= 1e-6
        e["start_s"], e["dur_s"], e["end_s"] = start, dur, start + dur
    last = max((float(e["end_s"].max()) for e in events.values() if len(e["end_s"])), default=0.0)
    if not last <= LONGEST_S:
        # Times no run can have (a timestamp of 0 among epoch ones, a duration of 1e300 us)
        # would make every figure of the report meaningless.
        raise TraceError(
            f"the events span {last:.3g} s (from ts {origin:.17g} µs on): a trace covers "
            "seconds to hours, so some timestamps or durations are damaged."
        )

    # The host events' columns go once their tables are built: before the other tables'.
    ops, annotations = _host_hierarchy(events.pop("host"))
    runtime = _frame(events["runtime"], ["pid", "tid", "external_id", "correlation"])
    gpu = ["pid", "tid", "stream", "device", "external_id", "correlation"]
    kernels = _frame(events["kernel"], [*gpu, *_KERNEL_EXTRAS])
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
    ops = _with_graph_replays(ops, runtime)
    kernels["op"], copies["op"] = _launching_ops([kernels, copies], ops, runtime)
    kernels, copies = _normalise_gpu_ids(kernels), _normalise_gpu_ids(copies)

    memory = pd.DataFrame(columns.memory, columns=["ts", "device", "allocated_bytes"])
    memory["start_s"] = (pd.to_numeric(memory["ts"], errors="coerce") - origin) * 1e-6
    memory["allocated_bytes"] = pd.to_numeric(memory["allocated_bytes"], errors="coerce")
    memory = memory.drop(columns="ts")
    devices = meta.deviceProperties or []
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


def _own(column: np.ndarray) -> np.ndarray:
    """A float64 column that may be changed in place: ``column`` itself where it can be."""
    if column.dtype == np.float64 and column.flags.writeable:
        return column
    return np.array(column, dtype=np.float64)


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
    return frame(columns)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types


def _integer_ids(ids: pd.Series, fallback: pd.Series, default: int) -> np.ndarray:
    """``ids`` as int64; where one is missing or not a number, ``fallback``'s, else ``default``."""
    if ids.dtype == np.int64:  # CUDA's layout: nothing to fill
        return ids.to_numpy()
    ids = pd.to_numeric(ids, errors="coerce")
    fallback = pd.to_numeric(fallback, errors="coerce")
    return ids.fillna(fallback).fillna(default).astype(np.int64).to_numpy()


# --- the host hierarchy ------------------------------------------------------------------------------


def _host_hierarchy(host: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ops with their parent, depth, outermost op and module scope; and the host annotations.

    Host events on one thread nest: sorted by (thread, start, longest first), each one's
    enclosing events come before it (see ``_nesting``). ``host`` is used up: each column goes
    once the tables have taken their rows of it, and each step's arrays once used (a big file's
    columns, held to the end, would be memory that the load's peak adds up).
    """
    thread = _thread_codes(host["pid"], host["tid"])
    order = _nesting_order(thread, host["start_s"], host["dur_s"])
    # Only the columns the hierarchy needs are sorted; the tables take their rows through
    # ``order`` from the columns as they are.
    category = host.pop("cat")[order]
    n = len(category)
    is_op = category == "cpu_op"
    names = host["name"]  # not sorted: read through ``order``
    # Scopes: Python stacks' frames and module calls (with_stack), and the ranges jupyter_brrr
    # opens around module calls and torch calls (``attribution``: recorded as cpu_op events,
    # the cheapest kind to record, named by a prefix, and not ops).
    is_frame = category == "python_function"
    is_annotation = category == "user_annotation"
    annotations = _host_annotations(host, order[is_annotation])
    # The reader gave jupyter_brrr's ranges their own category (see _sort_scanned): neither an
    # op nor a Python frame nor an annotation.
    is_named_scope = is_annotation | is_frame
    if not (is_op | is_named_scope).all():
        is_named_scope |= category == _SCOPE
    is_module = is_named_scope.copy()
    if is_module.any():
        is_module[is_module] = _name_verdicts(
            names[order[is_module]], lambda name: name.startswith(MODULE_PREFIX)
        )
    # The source line: the nearest range jupyter_brrr opened around a torch call of the user's
    # code, or the innermost frame of the user's own code in a trace with Python stacks.
    is_source = is_named_scope.copy()
    if is_source.any():
        is_source[is_source] = _name_verdicts(names[order[is_source]], _is_source)
    _, op_parent, module_row, source_row, depth, top = _nesting(
        thread[order], host["end_s"][order], (is_op, is_module, is_source)
    )
    del _, thread, category, is_frame, is_annotation, is_named_scope, is_module, is_source

    # Renumber: ops keep their own row numbers, links point into the ops frame.
    op_rows = np.flatnonzero(is_op)
    new_index = np.full(n, -1)
    new_index[op_rows] = np.arange(len(op_rows))
    sorted_names = names[order]  # ``names`` itself goes with ``host``'s column, below
    module = _scope_names(module_row[op_rows], sorted_names, _module_path)
    del module_row
    source = _scope_names(source_row[op_rows], sorted_names, _source_label)
    del source_row, sorted_names
    op_parent = _remap(new_index, op_parent[op_rows])
    top = _remap(new_index, np.where(top[op_rows] >= 0, top[op_rows], op_rows))
    depth = depth[op_rows]
    rows = order[op_rows]  # the ops' rows in ``host``
    del order, op_rows, new_index
    columns: dict[str, Any] = {name: host.pop(name)[rows] for name in _OP_FIELDS}
    shapes, columns["dims"] = _shared_values(host.pop("dims")[rows])
    dtypes, columns["types"] = _shared_values(host.pop("types")[rows])
    columns["concrete"] = _decoded_values(host.pop("concrete")[rows])
    columns["strides"] = _decoded_values(host.pop("strides")[rows])
    columns |= {"parent": op_parent, "top": top, "depth": depth, "module": module}
    columns |= {"line": source, "self_cpu_s": _self_time(columns["dur_s"], op_parent)}
    ops = frame({**columns, "shapes": shapes, "dtypes": dtypes})
    return ops, annotations


def _host_annotations(host: dict[str, Any], rows: np.ndarray) -> pd.DataFrame:
    """The host annotations' table: ``host``'s ``rows`` (user_annotation events)."""
    annotations = {name: host[name][rows] for name in (*_OP_FIELDS, "dims", "types")}
    annotations["where"] = np.full(len(rows), "host", dtype=object)
    # Kept for the collectives (comms.py): gloo and NCCL annotations carry the tensor's shape.
    annotations["dims"] = _decoded_values(annotations["dims"])
    annotations["types"] = _decoded_values(annotations["types"])
    return _frame(annotations, ["pid", "tid", "external_id", "where", "dims", "types"])


def _scope_names(
    scope_row: np.ndarray, sorted_names: np.ndarray, label: Callable[[str], str]
) -> np.ndarray:
    """For each op, ``label`` of the name of its nearest enclosing scope row (``scope_row``, -1
    where none: then ""), each distinct name labelled once."""
    found = np.empty(len(scope_row), dtype=object)
    found.fill("")  # one shared "": np.full would make a new string for each row
    has_scope = scope_row >= 0
    if not has_scope.any():
        return found
    codes, distinct = pd.factorize(sorted_names[scope_row[has_scope]])
    found[has_scope] = np.array([label(name) for name in distinct], dtype=object)[codes]
    return found


def _name_verdicts(names: np.ndarray, test: Callable[[str], bool]) -> np.ndarray:
    """``test`` of each name, run once per distinct name."""
    codes, distinct = pd.factorize(names)
    return np.array([test(name) for name in distinct] + [False], dtype=bool)[codes]


def _module_path(name: str) -> str:
    return name.removeprefix(MODULE_PREFIX)


def _is_attribution_scope(name: str) -> bool:
    return name.startswith((MODULE_PREFIX, LINE_PREFIX))


def _is_source(name: str) -> bool:
    return name.startswith(LINE_PREFIX) or _is_user_frame(name)


def _source_label(name: str) -> str:
    return name.removeprefix(LINE_PREFIX) if name.startswith(LINE_PREFIX) else _frame_label(name)


# Python frames that are not the user's code: PyTorch's, installed packages', the standard
# library's, built-ins, jupyter_brrr's own and the module scopes (named, not frames).
_LIBRARY_FRAME = re.compile(
    r"^(nn\.Module: |<built-in|<frozen|<string>|torch/)|site-packages/|dist-packages/|"
    r"/lib/python\d|jupyter_brrr/|^\S*(IPython|ipykernel)/"
)
# A frame's name: "path/to/file.py(42): forward".
_FRAME = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$")
# Notebook cells: ipykernel's "/tmp/ipykernel_123/456789.py", IPython's "<ipython-input-3-...>".
_CELL_FILE = re.compile(r"(^|/)ipykernel_\d+/\d+\.py$|^<ipython-input-")


def _is_user_frame(name: str) -> bool:
    return _LIBRARY_FRAME.search(name) is None and _FRAME.match(name) is not None


def _frame_label(name: str) -> str:
    """``file.py:42 (forward)``, the file without its folders (a shared report carries no local
    paths); ``cell:3`` for a notebook cell. A Python stack's frame names the line where its
    function starts."""
    match = _FRAME.match(name)
    if match is None:
        return name
    file = match["file"]
    where = "cell" if _CELL_FILE.search(file) else file.rsplit("/", 1)[-1]
    function = match["function"]
    return f"{where}:{match['line']}" + (f" ({function})" if function != "<module>" else "")


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


# Tolerate rounding: a child may end a hair after its parent in float microseconds.
_NESTING_SLACK = 1e-9


def _nesting(
    thread_codes: np.ndarray, end: np.ndarray, wanted: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, ...]:
    """Of host events sorted by ``_nesting_order``: each one's parent, its nearest ancestor of
    each of the three ``wanted`` kinds (an op, a module scope, a source scope), and its depth
    and outermost ancestor among the first kind's (all int64, -1 for none).

    In C (``_scan.nest``), one pass over the rows, where the compiled reader is built; else
    ``_nesting_numpy``, which gives the same (tests/test_scan_hierarchy.py)."""
    if _scan is None:
        return _nesting_numpy(thread_codes, end, wanted)
    flags = wanted[0].astype(np.uint8) | (wanted[1].astype(np.uint8) << 1)
    flags |= wanted[2].astype(np.uint8) << 2
    columns = _scan.nest(
        np.ascontiguousarray(thread_codes, np.int64).tobytes(),
        np.ascontiguousarray(end, np.float64).tobytes(),
        flags.tobytes(),
        _NESTING_SLACK,
    )
    return tuple(np.frombuffer(column, np.int64) for column in columns)


def _nesting_numpy(
    thread_codes: np.ndarray, end: np.ndarray, wanted: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, ...]:
    """``_nesting`` in numpy. Sorted by (thread, start, longest first), the parent of an event
    is the nearest earlier event that ends no earlier than it does: a 'previous greater
    element' search, done for all events at once by pointer jumping."""
    n = len(end)
    parent = np.arange(n) - 1
    same_thread = np.zeros(n, dtype=bool)
    same_thread[1:] = thread_codes[1:] == thread_codes[:-1]
    parent[~same_thread] = -1
    # Only the rows whose parent does not enclose them jump; a row whose parent does is done,
    # so each round looks at the rows still jumping rather than at all of them.
    rows = np.flatnonzero(parent >= 0)
    while len(rows):
        rows = rows[end[parent[rows]] + _NESTING_SLACK < end[rows]]
        parent[rows] = parent[parent[rows]]
        rows = rows[parent[rows] >= 0]
    ancestors = [_nearest_ancestor(parent, kind) for kind in wanted]
    return (parent, *ancestors, *_depth_and_top(ancestors[0]))


def _thread_codes(pid: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """One integer per distinct (pid, tid) pair; ids may be numbers or strings."""
    return group_codes(pid, tid)[0]


def _shared_values(raw: np.ndarray | _Coded) -> tuple[np.ndarray, np.ndarray]:
    """Decode raw JSON values once per distinct value: (their text, the values). Rows with the
    same text share one decoded object; missing values (b"" or None) give "" and None."""
    codes, text, values = _distinct_decoded(raw)
    return text[codes], values[codes]


def _decoded_values(raw: np.ndarray | _Coded) -> np.ndarray:
    """``_shared_values``' values alone: a column of texts not gathered where none is kept (a
    gather of a million objects is tens of milliseconds)."""
    codes, _, values = _distinct_decoded(raw)
    return values[codes]


def _distinct_decoded(raw: np.ndarray | _Coded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's code, and by code the text and the decoded value (code -1: missing)."""
    if isinstance(raw, _Coded):
        # Already factorized by the merger: each distinct text the rows use, decoded once.
        used = np.zeros(len(raw.texts), dtype=bool)
        used[raw.codes] = True
        text = np.empty(len(raw.texts), dtype=object)
        values = np.empty(len(raw.texts), dtype=object)
        distinct: list[bytes] = raw.texts.tolist()
        for i in np.flatnonzero(used).tolist():
            value = distinct[i]
            text[i] = value.decode()
            values[i] = msgspec.json.decode(value) if value else None
        return raw.codes, text, values
    codes, uniques = _factorize(raw)
    text = np.empty(len(uniques) + 1, dtype=object)
    values = np.empty(len(uniques) + 1, dtype=object)
    text[-1], values[-1] = "", None  # code -1: missing
    for i, value in enumerate(uniques):
        text[i] = value.decode()
        values[i] = msgspec.json.decode(value) if value else None
    return codes, text, values


def _factorize(values: np.ndarray) -> tuple[np.ndarray, Any]:
    """``pd.factorize`` of an object column, in C where the reader is built: the reader's
    columns repeat one object per distinct text, which the C version looks up once."""
    if _scan is None:
        return pd.factorize(values)
    codes, distinct = _scan.factorize(values.tolist())
    return np.frombuffer(codes, np.int64), distinct


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


# A CUDA (or HIP) graph launch: the runtime call that replays a captured graph's kernels.
_GRAPH_LAUNCH_CALLS = ("cudaGraphLaunch", "hipGraphLaunch")


def _with_graph_replays(ops: pd.DataFrame, runtime: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with one op row per graph launch that no op encloses, named after the call.

    ``torch.cuda.CUDAGraph.replay()`` records no torch op: the replayed kernels carry the
    correlation id of the ``cudaGraphLaunch`` call and no External id (Kineto gives a runtime
    call or kernel with no op around it none), so without this row they would belong to no op,
    and a profiler step would place them by their own start instead of their launch's. A launch
    inside an op (``torch.compile``'s "Torch-Compiled Region" under reduce-overhead) keeps that
    op. The rows come after the trace's ops, at the top level, with no shapes."""
    if not len(runtime):
        return ops
    names = runtime["name"].to_numpy(dtype=object)
    is_launch = np.zeros(len(names), dtype=bool)
    for name in pd.unique(names):  # a few distinct names: cheaper than testing each row
        if isinstance(name, str) and name.startswith(_GRAPH_LAUNCH_CALLS):
            is_launch |= names == name
    calls = np.flatnonzero(is_launch)
    if len(calls) and len(ops):
        enclosing = _enclosing_op(
            ops,
            runtime["pid"].to_numpy()[calls],
            runtime["tid"].to_numpy()[calls],
            runtime["start_s"].to_numpy()[calls],
        )
        calls = calls[enclosing < 0]
    if not len(calls):
        return ops
    n, first = len(calls), len(ops)
    replays = {
        name: runtime[name].to_numpy()[calls] for name in _OP_FIELDS if name != "external_id"
    }
    replays["name"] = names[calls].astype(object)
    replays["external_id"] = np.full(n, np.nan)  # an External id would match kernels of ops
    blank = np.empty(n, dtype=object)
    blank.fill("")
    empty = np.full(n, None, dtype=object)
    rows = {
        **replays,
        **{name: empty for name in ("dims", "types", "concrete", "strides")},
        "parent": np.full(n, -1, dtype=np.int64),
        "top": np.arange(first, first + n, dtype=np.int64),
        "depth": np.zeros(n, dtype=np.int64),
        "module": blank,
        "line": blank,
        "self_cpu_s": replays["dur_s"],
        "shapes": blank,
        "dtypes": blank,
    }
    return frame({name: np.concatenate([ops[name].to_numpy(), rows[name]]) for name in ops.columns})


def _launching_ops(
    tables: list[pd.DataFrame], ops: pd.DataFrame, runtime: pd.DataFrame
) -> list[np.ndarray]:
    """For each table of GPU events (kernels, copies), the row in ``ops`` of the op that
    launched each event, or -1: all tables in one pass over the ops."""
    rows = _launching_op(
        np.concatenate([table["correlation"].to_numpy() for table in tables]),
        np.concatenate([table["external_id"].to_numpy() for table in tables]),
        ops,
        runtime,
    )
    return np.split(rows, np.cumsum([len(table) for table in tables])[:-1])


def _launching_op(
    correlation: np.ndarray, external_id: np.ndarray, ops: pd.DataFrame, runtime: pd.DataFrame
) -> np.ndarray:
    """Row in ``ops`` of the op that launched each GPU event (of these correlation and
    External ids), or -1.

    The launch is the runtime call with the kernel's correlation id; the innermost op around
    that call on its thread launched the kernel. Where the runtime call is missing, the
    kernel's External id names the op (older traces reuse it for the correlation id, so it is
    only the fallback).
    """
    rows = np.full(len(correlation), -1, dtype=np.int64)
    if len(runtime) and len(ops):
        launch = _last_row_of(correlation, runtime["correlation"].to_numpy())
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
        rows[missing] = _last_row_of(external_id[missing], ops["external_id"].to_numpy())
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
