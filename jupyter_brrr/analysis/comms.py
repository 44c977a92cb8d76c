"""The collectives of one rank's trace: what was communicated, when, how much, how fast.

How each figure is made:
- **A collective call** is a ``c10d::`` op (``c10d::allreduce_``, ``_c10d_functional::...``), or
  a ``record_param_comms`` op outside one: the host enqueues it there. Where the backend did
  the work is where its time is read: the NCCL/RCCL kernels launched inside the call (on the
  GPU), or for gloo the ``gloo:<op>`` annotation of its worker thread (on the host), matched to
  the calls of the same kind in order (gloo's queue is first in, first out). NCCL kernels that
  no call launched (a trace without host ops) are calls of their own.
- **Arrival**, the moment this rank was ready to communicate: the first kernel's start (the
  stream reached it after the rank's own work), or for gloo the end of the worker's wait for
  the rank's GPU copies (the ``cudaStreamSynchronize`` at the start of its annotation), else the
  annotation's start. **End**: the last kernel's end, or the annotation's.
- **Size** S in bytes, as nccl-tests counts it (the larger of the input and output buffers:
  all-gather's output, reduce-scatter's input, all-reduce's one buffer): from the
  ``In/Out msg nelems`` and ``dtype`` that newer PyTorch writes on NCCL kernels and
  ``record_param_comms`` (read by ``comm_args``), else from the shapes and types of the NCCL or
  gloo annotation, else of the call's own tensor arguments.
- **Bandwidth** (``bandwidth``): algbw = S / t and busbw = algbw x the nccl-tests factor of the
  op for a group of n ranks (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all,
  gather, scatter (n-1)/n; broadcast, reduce, send, receive 1). The job compares busbw with
  the GPU's per-direction interconnect bandwidth (``peaks.interconnect``).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import weakref
from os import PathLike
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd
from isal import igzip

from ..costs import model as costs
from ..trace.events import Trace

# The columns of a rank's collective calls (times in seconds of the rank's trace).
CALL_COLUMNS = (
    "group",  # process group name ("0" is the default group)
    "group_size",
    "op",  # canonical: all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, ...
    "name",  # the kernel or annotation name the time comes from
    "where",  # "gpu" (NCCL/RCCL kernels) or "host" (gloo's worker thread)
    "dtype",
    "bytes",  # S as nccl-tests counts it; NaN where the trace does not say
    "algorithm",  # NCCL's algorithm and protocol from the kernel name ("RING LL"), else ""
    "enqueue_s",  # the host call, NaN where the trace holds none
    "arrival_s",
    "start_s",
    "end_s",
)

# Op names as the c10d ops, annotations, kernels and record_param_comms spell them, reduced to
# letters; longest first, so that "allreduce" wins over "reduce".
_OP_WORDS = (
    ("reducescatter", "reduce_scatter"),
    ("allreduce", "all_reduce"),
    ("allgather", "all_gather"),
    ("alltoall", "all_to_all"),
    ("sendrecv", "send_recv"),
    ("broadcast", "broadcast"),
    ("barrier", "barrier"),
    ("gather", "gather"),
    ("scatter", "scatter"),
    ("reduce", "reduce"),
    ("send", "send"),
    ("recv", "recv"),
)
# nccl-tests' bus bandwidth factor for a group of n ranks (its doc/PERFORMANCE.md).
_BUS_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send": lambda n: 1.0,
    "recv": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
}
# The dtype names of record_param_comms (c10::ScalarType names) and of older traces.
_DTYPE_SIZES = {
    "float": 4,
    "double": 8,
    "half": 2,
    "bfloat16": 2,
    "long": 8,
    "int": 4,
    "short": 2,
    "char": 1,
    "byte": 1,
    "bool": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "complexfloat": 8,
    "complexdouble": 16,
}
_KERNEL_PREFIXES = ("nccl", "rccl")
_ALGORITHM = re.compile(r"(COLLNET_DIRECT|COLLNET_CHAIN|NVLS_TREE|NVLS|RING|TREE|PAT)")
_PROTOCOL = re.compile(r"(LL128|LL|SIMPLE)")
_CALL_PREFIXES = ("c10d::", "_c10d_functional::", "c10d_functional::")
# c10d ops that wait for or set up communication rather than start a collective.
_NOT_CALLS = ("wait", "monitored_barrier", "new_group", "_dist_backend")


def canonical_op(name: Any) -> str | None:
    """The collective a name stands for: ``"c10d::allreduce_"``, ``"nccl:all_reduce"``,
    ``"ncclKernel_AllReduce_RING_LL_Sum_float"`` and ``"allreduce"`` all give ``"all_reduce"``."""
    if not isinstance(name, str):
        return None
    text = name.lower()
    for prefix in ("nccldevkernel_", "ncclkernel_", "rccl", "nccl:", "gloo:", *_CALL_PREFIXES):
        text = text.removeprefix(prefix)
    letters = re.sub(r"[^a-z]", "", text.split("(")[0])
    for word, op in _OP_WORDS:
        if word in letters:
            return op
    return None


def bus_factor(op: str, group_size: int | float | None) -> float | None:
    """nccl-tests' busbw / algbw for this op in a group of ``group_size`` ranks; None where it
    does not apply (one rank, a barrier, an unknown op or group size)."""
    factor = _BUS_FACTORS.get(op)
    if factor is None or group_size is None or not group_size >= 2:
        return None
    return float(factor(int(group_size)))


def is_comm_kernel(name: Any) -> bool:
    """True for the kernels of NCCL and RCCL."""
    return isinstance(name, str) and name.lower().startswith(_KERNEL_PREFIXES)


def comm_kernel_rows(names: np.ndarray) -> np.ndarray:
    """``is_comm_kernel`` of each name, tested once per distinct name (a rank's trace has
    tens of thousands of kernels and a few hundred names)."""
    codes, distinct = pd.factorize(names)
    verdicts = np.array([*map(is_comm_kernel, distinct), False], dtype=bool)
    return verdicts[codes]  # code -1, a missing name, picks the False at the end


def is_comm_call(name: Any) -> bool:
    """True for the host ops that start a collective (``c10d::allreduce_``, ...)."""
    if not isinstance(name, str):
        return False
    if name == "record_param_comms":
        return True
    if not name.startswith(_CALL_PREFIXES):
        return False
    return not any(word in name for word in _NOT_CALLS)


def element_size(type_name: Any) -> int | None:
    """Bytes per element of a trace's type name (``"float"``, ``"c10::BFloat16"``) or of
    record_param_comms' dtype (``"Float"``, ``"BFloat16"``)."""
    if not isinstance(type_name, str) or not type_name:
        return None
    size = costs.dtype_size(type_name)
    if size is not None:
        return size
    key = type_name.lower().removeprefix("c10::").replace(" ", "")
    key = {"longint": "long", "signedchar": "char", "unsignedchar": "byte"}.get(key, key)
    return _DTYPE_SIZES.get(key)


# Type names as traces and record_param_comms write them -> torch's dtype names.
_DTYPE_NAMES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bfloat16": "bfloat16",
    "long": "int64",
    "longint": "int64",
    "int": "int32",
    "short": "int16",
    "shortint": "int16",
    "char": "int8",
    "signedchar": "int8",
    "byte": "uint8",
    "unsignedchar": "uint8",
    "bool": "bool",
}


def dtype_name(type_name: Any) -> str:
    """torch's name of a dtype as a trace writes it: ``"float"``, ``"Float"`` -> ``"float32"``,
    ``"c10::BFloat16"`` -> ``"bfloat16"``; other names as they are."""
    if not isinstance(type_name, str):
        return ""
    key = type_name.lower().removeprefix("c10::").replace(" ", "")
    return _DTYPE_NAMES.get(key, type_name)


def _elements(dims: Any) -> int | None:
    """Elements of a shape ``[8, 64]``, or summed over a list of shapes (a TensorList)."""
    if not isinstance(dims, list):
        return None
    if all(isinstance(d, (int, float)) for d in dims):
        return int(np.prod(dims)) if dims else None  # [] is a scalar or an unrecorded list
    sizes = [_elements(d) for d in dims]
    sizes = [s for s in sizes if s]
    return sum(sizes) if sizes else None


def _tensor_bytes(dims: Any, types: Any, dtype: str = "") -> tuple[float, str]:
    """The largest tensor argument's bytes and its dtype: what nccl-tests calls S for every op
    (the one buffer, or the larger of input and output). A TensorList's element type is not
    recorded: it is the other arguments' dtype, else ``dtype``."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return math.nan, dtype
    known = [str(t) for t in types if element_size(t)]
    list_dtype = known[0] if known else dtype
    best, best_dtype = math.nan, dtype
    for shape, type_name in zip(dims, types, strict=False):
        type_name = list_dtype if type_name == "TensorList" else type_name
        elements, size = _elements(shape), element_size(type_name)
        if elements and size and (math.isnan(best) or elements * size > best):
            best, best_dtype = float(elements * size), str(type_name)
    return best, best_dtype


# --- the args that the reader does not keep ---------------------------------------------------------


class _CommArgs(msgspec.Struct, gc=False):
    collective: Any = msgspec.field(default=None, name="Collective name")
    in_elements: Any = msgspec.field(default=None, name="In msg nelems")
    out_elements: Any = msgspec.field(default=None, name="Out msg nelems")
    dtype: Any = None
    group_size: Any = msgspec.field(default=None, name="Group size")
    group: Any = msgspec.field(default=None, name="Process Group Name")
    group_ranks: Any = msgspec.field(default=None, name="Process Group Ranks")
    external_id: Any = msgspec.field(default=None, name="External id")
    correlation: Any = None


class _CommEvent(msgspec.Struct, gc=False):
    cat: str = ""
    args: _CommArgs | None = None


_MARKER = b'"Collective name"'
_EVENT_DECODER = msgspec.json.Decoder(_CommEvent)


def comm_args(path: str | PathLike) -> dict[tuple[str, float], _CommArgs]:
    """The collective arguments PyTorch writes on NCCL kernels and ``record_param_comms`` ops
    (collective name, element counts, dtype, process group), which the trace reader does not
    keep: keyed by ``("kernel", correlation)`` and ``("op", External id)``.

    Only the events that hold them are decoded: the file is inflated again and searched for the
    key, and each hit's event (one object per line-delimited block in Kineto's layout) is
    decoded alone; a file in another layout is decoded whole.
    """
    path = Path(path)
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    with igzip.open(path, "rb") if gzipped else path.open("rb") as f:  # type: ignore[attr-defined]
        text = f.read()
    found: dict[tuple[str, float], _CommArgs] = {}
    at = text.find(_MARKER)  # pyright: ignore[reportArgumentType]  # the file is read in binary: bytes
    if at < 0:
        return found
    events: list[_CommEvent] = []
    if b"\n  {" in text[: at + 1]:  # pyright: ignore[reportOperatorIssue]  # the file is read in binary: bytes
        while at >= 0:
            start = text.rfind(b"\n  {", 0, at)  # pyright: ignore[reportArgumentType]  # the file is read in binary: bytes
            end = text.find(b"\n  }", at)  # pyright: ignore[reportArgumentType]  # the file is read in binary: bytes
            if start < 0 or end < 0:
                break
            # An odd event is skipped: its call keeps the sizes of its shapes.
            with contextlib.suppress(msgspec.DecodeError):
                events.append(_EVENT_DECODER.decode(text[start : end + 4]))
            at = text.find(_MARKER, end)  # pyright: ignore[reportArgumentType]  # the file is read in binary: bytes
    else:
        document = msgspec.json.decode(text, type=dict[str, Any])
        raw = document.get("traceEvents") or []
        events = [
            msgspec.convert(e, _CommEvent)
            for e in raw
            if isinstance(e, dict) and "Collective name" in (e.get("args") or {})
        ]
    for event in events:
        args = event.args
        if args is None or args.collective is None:
            continue
        if event.cat.lower() == "kernel" and isinstance(args.correlation, (int, float)):
            found[("kernel", float(args.correlation))] = args
        elif isinstance(args.external_id, (int, float)):
            found[("op", float(args.external_id))] = args
    return found


def _args_size(args: _CommArgs) -> tuple[float, str]:
    size = element_size(args.dtype)
    counts = [c for c in (args.in_elements, args.out_elements) if isinstance(c, (int, float))]
    if not size or not counts:
        return math.nan, str(args.dtype or "")
    return float(max(counts) * size), str(args.dtype)


def _group_ranks(value: Any) -> list[int] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(r, int) for r in value):
        return value
    return None


# --- the calls ---------------------------------------------------------------------------------------


def _default_group(distributed: dict) -> tuple[str, int | None, list[int] | None]:
    """The process group a call belongs to when the trace does not name it: the only one the
    job made, else "?"."""
    configs = distributed.get("pg_config")
    world = distributed.get("world_size")
    if isinstance(configs, list) and len(configs) == 1 and isinstance(configs[0], dict):
        config = configs[0]
        ranks = config.get("ranks")
        return str(config.get("pg_name", "0")), config.get("pg_size") or world, ranks
    if not configs:
        return "0", world, list(range(world)) if isinstance(world, int) else None
    return "?", None, None


def _call_rows(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which op rows start a collective (``is_call``), which of those are outermost (the call;
    ``c10d::allreduce_`` over its ``record_param_comms``), and each row's call: itself, the
    call above it, or -1 outside every call. Found once per op table of a trace (the
    analysis and a job's rank reading both ask, for the calls and for each row's call)."""
    found = _CALL_ROWS.get(id(trace))
    if found is not None and found[0] is trace.ops:
        return found[1]
    result = _find_call_rows(trace)
    for rows in result:
        rows.flags.writeable = False  # shared by every caller
    _CALL_ROWS[id(trace)] = (trace.ops, result)
    weakref.finalize(trace, _CALL_ROWS.pop, id(trace), None)
    return result


# id(trace) -> (the op table they were found in, the rows); dropped with the trace.
_CALL_ROWS: dict[int, tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}


def _find_call_rows(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ops = trace.ops
    names = ops["name"].to_numpy(dtype=object)
    parent = ops["parent"].to_numpy()
    codes, distinct = pd.factorize(names)
    verdicts = np.array([*map(is_comm_call, distinct), False], dtype=bool)
    is_call = verdicts[codes]  # code -1, a missing name, picks the False at the end
    outer = is_call.copy()
    call_of = np.full(len(names), -1)
    if not is_call.any():
        return is_call, outer, call_of
    for row in np.flatnonzero(is_call):
        up = parent[row]
        while up >= 0:
            if is_call[up]:
                outer[row] = False
                break
            up = parent[up]
    call_of[outer] = np.flatnonzero(outer)
    # Every other row climbs to the nearest call above it, all rows at once, a level a round.
    pending = np.flatnonzero(~outer & (parent >= 0))
    cursor = parent[pending]
    while len(pending):
        found = call_of[cursor]
        call_of[pending[found >= 0]] = found[found >= 0]
        keep = (found < 0) & (parent[cursor] >= 0)
        pending, cursor = pending[keep], parent[cursor[keep]]
    return is_call, outer, call_of


def call_of_rows(trace: Trace) -> np.ndarray:
    """For each op row of the trace, the row of the collective call it belongs to (itself, or
    the call it runs inside), -1 for rows outside every call."""
    return _call_rows(trace)[2]


def collectives(
    trace: Trace, args: dict[tuple[str, float], _CommArgs] | None = None
) -> pd.DataFrame:
    """The collective calls of one rank's trace, in enqueue order: ``CALL_COLUMNS`` plus
    ``group_ranks`` (a list, or None), ``call_row`` (the host op's row in ``trace.ops``, -1)
    and, for gloo's calls, ``pid`` and ``tid`` of the worker thread that ran them.

    ``args``: ``comm_args`` of the trace's file, where sizes are on the kernels only.
    """
    if args:
        return _collectives(trace, args)
    # Without args the calls are the trace's alone: found once per trace (a rank's analysis
    # and its job's reading both ask), each caller given its own copy.
    tables = (trace.ops, trace.kernels, trace.annotations)
    return trace.derived("collectives", tables, lambda: _collectives(trace, {})).copy()


def _collectives(trace: Trace, args: dict[tuple[str, float], _CommArgs]) -> pd.DataFrame:
    distributed = trace.metadata.get("distributedInfo") or {}
    group, group_size, group_ranks = _default_group(
        distributed if isinstance(distributed, dict) else {}
    )
    ops = trace.ops
    names = ops["name"].to_numpy(dtype=object)
    is_call, outer, call_of = _call_rows(trace)
    call_rows = np.flatnonzero(outer)
    # Each column taken once (``.array`` gives the values ``.iat`` gives, a row at a time).
    op_column = {name: ops[name].array for name in ops.columns}
    calls = {
        int(row): {
            "op": canonical_op(names[row]),
            "enqueue_s": float(op_column["start_s"][row]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "call_row": int(row),
            "pid": op_column["pid"][row],  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "tid": op_column["tid"][row],  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "end_host_s": float(op_column["end_s"][row]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            "kernels": [],
            "external_id": op_column["external_id"][row],  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        }
        for row in call_rows
    }
    # record_param_comms below a call carries the args of newer PyTorch.
    for row in np.flatnonzero(is_call & ~outer):
        found = args.get(("op", float(op_column["external_id"][row])))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        if found is not None and call_of[row] in calls:
            calls[call_of[row]]["args"] = found
    for row, call in calls.items():
        found = args.get(("op", float(call["external_id"])))
        if found is not None:
            call.setdefault("args", found)
        call["dims"], call["types"] = op_column["dims"][row], op_column["types"][row]

    kernels = trace.kernels
    kernel_names = kernels["name"].to_numpy(dtype=object)
    comm_kernels = np.flatnonzero(comm_kernel_rows(kernel_names))
    orphans = []
    launcher = kernels["op"].to_numpy()
    for k in comm_kernels:
        op_row = launcher[k]
        call_row = call_of[op_row] if op_row >= 0 else -1
        if call_row >= 0:
            calls[int(call_row)]["kernels"].append(k)
        else:
            orphans.append(k)

    _attach_annotations(trace, [c for c in calls.values() if c["kernels"]])
    rows = []
    kernel_column = {name: kernels[name].array for name in kernels.columns}
    for call in calls.values():
        if call["kernels"]:
            call["group_size"] = group_size
            rows.append(_kernel_call(call, kernel_column, call["kernels"], args))
    for k in orphans:
        rows.append(
            _kernel_call(
                {"op": None, "enqueue_s": math.nan, "call_row": -1}, kernel_column, [k], args
            )
        )
    rows += _gloo_calls(trace, [c for c in calls.values() if not c["kernels"]])
    for row in rows:
        row.setdefault("group", group)
        if row.get("group_size") is None:
            row["group_size"] = group_size
        if row.get("group_ranks") is None:
            row["group_ranks"] = group_ranks
    table = pd.DataFrame(rows, columns=[*CALL_COLUMNS, "group_ranks", "call_row", "pid", "tid"])
    table["group"] = table["group"].astype(str)
    table["group_size"] = pd.to_numeric(table["group_size"], errors="coerce")
    table["bytes"] = pd.to_numeric(table["bytes"], errors="coerce")
    table = table.sort_values(["arrival_s"], kind="stable").reset_index(drop=True)
    return table


def _kernel_call(call: dict, kernels: dict[str, Any], rows: list[int], args: dict) -> dict:
    """A call whose work is NCCL/RCCL kernels (``kernels``: the kernel table's columns)."""
    first = rows[0]
    name = str(kernels["name"][first])
    start = float(min(kernels["start_s"][k] for k in rows))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    end = float(max(kernels["end_s"][k] for k in rows))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    found = (
        call.get("args")
        or args.get(("kernel", float(kernels["correlation"][first])))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        or _kernel_columns(kernels, first)
    )
    op = call.get("op") or canonical_op(name)
    size, dtype, group, group_size, group_ranks = math.nan, "", None, None, None
    if found is not None:
        op = canonical_op(found.collective) or op
        size, dtype = _args_size(found)
        group = str(found.group) if found.group is not None else None
        group_size = found.group_size if isinstance(found.group_size, int) else None
        group_ranks = _group_ranks(found.group_ranks)
    if math.isnan(size) and "dims" in call:
        size, dtype = _tensor_bytes(call["dims"], call["types"])
    if math.isnan(size) and call.get("annotation") is not None:
        dims, types = call["annotation"]
        size, dtype = _tensor_bytes(dims, types)
        if op == "all_gather" and isinstance(call.get("group_size"), int):
            size *= call["group_size"]  # the annotation holds one rank's part
    algorithm = " ".join(
        m.group(1) for m in (_ALGORITHM.search(name), _PROTOCOL.search(name.split("(")[0])) if m
    )
    row = {
        "op": op,
        "name": name.split("(")[0],
        "where": "gpu",
        "dtype": dtype_name(dtype),
        "bytes": size,
        "algorithm": algorithm,
        "enqueue_s": call["enqueue_s"],
        "arrival_s": start,
        "start_s": start,
        "end_s": end,
        "call_row": call["call_row"],
        "group_size": group_size,
        "group_ranks": group_ranks,
    }
    if group is not None:
        row["group"] = group
    return row


def _kernel_columns(kernels: dict[str, Any], row: int) -> _CommArgs | None:
    """A kernel's collective arguments where the reader keeps them as columns (``collective``,
    ``in_nelems``, ``out_nelems``, ``group_size``, ``comm_dtype``), else None."""
    if "collective" not in kernels or kernels["collective"][row] is None:
        return None
    return _CommArgs(
        collective=kernels["collective"][row],
        in_elements=kernels["in_nelems"][row],
        out_elements=kernels["out_nelems"][row],
        dtype=kernels["comm_dtype"][row],
        group_size=kernels["group_size"][row],
    )


def _attach_annotations(trace: Trace, calls: list[dict]) -> None:
    """Give each NCCL call the shapes of its ``nccl:<op>`` annotation (the host range PyTorch
    opens inside the call, on its thread): older traces record sizes only there."""
    annotations = trace.annotations
    if not calls or "dims" not in annotations:
        return
    names = annotations["name"].to_numpy(dtype=object)
    chosen = np.fromiter(
        (isinstance(n, str) and n.startswith(("nccl:", "rccl:")) for n in names), bool, len(names)
    )
    chosen &= annotations["where"].to_numpy(dtype=object) == "host"
    if not chosen.any():
        return
    sub = annotations[chosen]
    by_thread = {
        key: (group["start_s"].to_numpy(), group["dims"].to_numpy(), group["types"].to_numpy())
        for key, group in sub.sort_values("start_s").groupby(["pid", "tid"], sort=False)
    }
    for call in calls:
        found = by_thread.get((call["pid"], call["tid"]))
        if found is None:
            continue
        starts, dims, types = found
        i = np.searchsorted(starts, call["enqueue_s"])
        if i < len(starts) and starts[i] <= call["end_host_s"]:
            call["annotation"] = (dims[i], types[i])


def _gloo_calls(trace: Trace, calls: list[dict]) -> list[dict]:
    """The calls whose work ran on gloo's worker threads: each ``gloo:<op>`` annotation,
    matched to the earliest unmatched call of the same op enqueued before it (gloo's queue is
    first in, first out). An annotation whose call fell before the trace began has none."""
    annotations = trace.annotations
    names = annotations["name"].to_numpy(dtype=object)
    host = annotations["where"].to_numpy(dtype=object) == "host"
    rows = np.flatnonzero(
        host
        & np.fromiter(
            (isinstance(n, str) and n.startswith("gloo:") for n in names), bool, len(names)
        )
    )
    if not len(rows):
        return []
    rows = rows[np.argsort(annotations["start_s"].to_numpy()[rows], kind="stable")]
    waiting: dict[str | None, list[dict]] = {}
    for call in sorted(calls, key=lambda c: c["enqueue_s"]):
        waiting.setdefault(call["op"], []).append(call)
    syncs = _synchronize_calls(trace)
    out = []
    for row in rows:
        name = str(names[row])
        op = canonical_op(name)
        start = float(annotations["start_s"].iat[row])  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        end = float(annotations["end_s"].iat[row])  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        queue = waiting.get(op, [])
        call = queue.pop(0) if queue and queue[0]["enqueue_s"] <= start + 1e-6 else None
        size, dtype = _tensor_bytes(annotations["dims"].iat[row], annotations["types"].iat[row])
        if call is not None:
            # The call sees every buffer, the annotation only the input.
            call_size, call_dtype = _tensor_bytes(call["dims"], call["types"], dtype)
            if call_size > size or math.isnan(size):
                size, dtype = call_size, call_dtype
        elif op == "all_gather" and not math.isnan(size):
            size = math.nan  # the annotation holds one rank's part: S is unknown without the call
        pid, tid = annotations["pid"].iat[row], annotations["tid"].iat[row]
        arrival = start
        sync = syncs.get((pid, tid))
        if sync is not None:
            starts, ends = sync
            i = np.searchsorted(starts, start)
            if i < len(starts) and starts[i] <= end:
                arrival = float(ends[i])
        out.append(
            {
                "op": op,
                "name": name,
                "where": "host",
                "dtype": dtype_name(dtype),
                "bytes": size,
                "algorithm": "",
                "enqueue_s": call["enqueue_s"] if call else math.nan,
                "arrival_s": min(arrival, end),
                "start_s": start,
                "end_s": end,
                "call_row": call["call_row"] if call else -1,
                "pid": pid,
                "tid": tid,
            }
        )
    return out


def _synchronize_calls(trace: Trace) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
    """Per thread, the start and end times of its stream and event synchronisations."""
    runtime = trace.runtime
    names = runtime["name"].to_numpy(dtype=object)
    chosen = np.fromiter(
        (isinstance(n, str) and "Synchronize" in n and "Device" not in n for n in names),
        bool,
        len(names),
    )
    out = {}
    if not chosen.any():
        return out
    sub = runtime[chosen].sort_values("start_s", kind="stable")
    for key, group in sub.groupby(["pid", "tid"], sort=False):
        out[key] = (group["start_s"].to_numpy(), group["end_s"].to_numpy())
    return out


def bandwidth(op: str, size: float, seconds: float, group_size: Any) -> tuple[float, float]:
    """(algbw, busbw) in bytes/s, as nccl-tests defines them; NaN where they do not apply."""
    if not (seconds > 0) or not (size > 0):
        return math.nan, math.nan
    algbw = size / seconds
    factor = bus_factor(op, group_size)
    return algbw, algbw * factor if factor is not None else math.nan


__all__ = [
    "CALL_COLUMNS",
    "bandwidth",
    "bus_factor",
    "canonical_op",
    "collectives",
    "comm_args",
    "dtype_name",
    "element_size",
    "is_comm_call",
    "is_comm_kernel",
]
