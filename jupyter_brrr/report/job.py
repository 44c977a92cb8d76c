"""A job: the traces of the ranks of one torch.distributed run, read together.

``load_job`` reads one trace per rank, each in a process of its own, and answers the questions
a job asks beyond one GPU: how much of each rank's time is communication, how much of it hides
behind compute, which rank holds the others back, and whether the collectives reach the link's
bandwidth.

How each number is made:
- **Per rank** (in its reading process): the single-rank analysis (``analysis.analyze``: each
  kernel's bound) and the collective calls (``comms.collectives``). Communication is the NCCL
  kernels, gloo's worker annotations, and the GPU copies a collective launched or ran inside
  its GPU-side annotation (gloo's staging copies); the rest of the GPU work is the rank's own
  work (on a rank without GPU work: its top-level CPU ops outside the collectives). The span
  (first to last activity) splits by interval union with priority compute > memory > other >
  communication > idle, so **communication** in the split is the *exposed* part: time when
  the rank communicated and did nothing else. Hidden communication = all communication minus
  exposed; **overlap** = hidden / all.
- **Matching**: a process group runs its collectives in the same order on every rank, so the
  k-th call of a group (within a profiler step, where the traces have them) is one collective
  on every rank; calls whose op or size differ between ranks are left out, and said so.
- **Clocks**: ranks on one host (same ``host_name``) share a clock. Otherwise each rank's clock
  offset is the median over collectives of its end minus the collective's median end (a
  collective ends at about the same moment everywhere), and is taken off.
- **Stragglers**: at each collective the rank that arrives last holds the others back by
  its arrival minus the second-last arrival (its *lateness*); every rank *waits* the last
  arrival minus its own. A collective counts as decided only where the lateness exceeds the
  noise of the clocks (the median spread of the collective's end across ranks). The straggler
  is the rank on the critical path through the collectives: each collective is a join that ends
  once its last rank has arrived, and the path walks back from the last one through its last
  arrival to the collective that rank had finished before (its own work between), and so on;
  the rank whose lateness on that path is at least ``CRITICAL_SHARE`` of all of it is named,
  with that time (what it costs the others). DDP's bucketed all-reduces can make the ranks
  arrive last about equally often while one of them is far later each time: the path counts how
  long, not how often. Where no rank holds that share, the rank that arrives last most often
  (more often than chance) is named; ranks that merely wait show wait and no lateness.
- **Collective table**: per group, op, size and dtype: the calls per rank, the transfer time of
  each collective (from the last arrival to its end: what it took once every rank was there;
  with one rank loaded, its own duration, which includes waiting), algbw and busbw as
  nccl-tests defines them (``comms.bandwidth``), against the GPU's per-direction interconnect
  bandwidth where known (``peaks.interconnect``: NVLink, or the PCIe link).
- **Steps**: a rank's ``ProfilerStep#N`` ranges on the host; each activity is clipped to the
  step's range, each collective counted in the step that enqueued it.
"""

from __future__ import annotations

import glob as globbing
import json
import math
import multiprocessing
import os
import re
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analysis import comms
from ..schema.job import (
    JOB_CALL_COLUMNS,
    JOB_COLLECTIVE_COLUMNS,
    JOB_LANE_COLUMNS,
    JOB_MIME_TYPE,
    JOB_RANK_COLUMNS,
    JOB_SCHEMA_NAME,
    JOB_SCHEMA_VERSION,
    JOB_SPLIT_PARTS,
    JOB_STEP_COLUMNS,
    check_job,
)
from ..schema.types import parse_document
from ..trace import intervals
from ..trace.events import TraceError
from . import display
from .shown import ShownAsPage

if TYPE_CHECKING:
    from ..costs.peaks import Peaks
    from .report import Report

__all__ = ["JobError", "JobReport", "load_job", "rank_files"]

_TRACE_SUFFIXES = (".json", ".json.gz")
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
_STEP_IN_NAME = re.compile(r"step[_-]?(\d+)", re.IGNORECASE)
# Exposed communication worth advice, as a share of a rank's span.
EXPOSED_SHARE = 0.10
# Work imbalance worth advice: the busiest rank's own work over the median of the others'.
IMBALANCE_RATIO = 1.10
# Bus bandwidth below this share of the link's is called low.
LOW_BUS_SHARE = 0.30
# A message below this is small: per-call latency dominates its time (nccl-tests' curves
# reach their plateau in the megabytes).
SMALL_MESSAGE_BYTES = 1e6
# The timeline's lanes keep at most about this many segments per rank and part.
LANE_SEGMENTS = 2000
# The JSON form keeps at most this many collective calls (all ranks together).
CALL_LIMIT = 20_000
# More ranks than any job has run (the largest have about 10^5): a rank beyond is damaged.
MOST_RANKS = 2**20


class JobError(TraceError):
    """Files that do not make a job: none found, two traces of one rank, unreadable ranks."""


# --- which files ------------------------------------------------------------------------------------


def rank_files(sources: str | PathLike | Iterable[str | PathLike]) -> list[Path]:
    """The trace files a job is read from: a folder (its ``.json`` and ``.json.gz`` files), a
    glob pattern, or a list of files. A folder's or a pattern's files that are jupyter_brrr's
    own documents (a job or report saved there) are left out."""
    return _trace_files(sources)[0]


def _trace_files(
    sources: str | PathLike | Iterable[str | PathLike],
) -> tuple[list[Path], list[Path]]:
    """``rank_files``, and the documents of ours it left out."""
    if isinstance(sources, (str, PathLike)):
        source = Path(sources)
        if source.is_dir():
            files = sorted(p for p in source.iterdir() if p.name.endswith(_TRACE_SUFFIXES))
            files, ours = _without_our_documents(files)
            if not files:
                raise JobError(
                    f"{source}: the folder holds no trace files (.json or .json.gz). Record "
                    "one per rank with jupyter_brrr.record.trace_handler, or give their paths."
                )
            return files, ours
        if globbing.has_magic(str(sources)):
            files = sorted(Path(p) for p in globbing.glob(str(sources)) if Path(p).is_file())
            files, ours = _without_our_documents(files)
            if not files:
                raise JobError(f"{sources}: the pattern matches no file.")
            return files, ours
        return [source], []
    files = [Path(p) for p in sources]
    if not files:
        raise JobError("No trace files given: pass a folder, a glob pattern or a list of files.")
    return files, []


def _without_our_documents(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """The files that are not jupyter_brrr documents (``JobReport.save``, ``Report.save``
    next to the traces), and those that are: the documents, and the copy of its trace that
    ``Report.save`` writes beside a report (``NAME.trace.json.gz``, a rank's trace twice)."""
    ours = [path for path in files if saved_document(path) is not None]
    copies = {path.with_name(path.name.removesuffix(".json") + ".trace.json.gz") for path in ours}
    ours += [path for path in files if path in copies]
    return [path for path in files if path not in ours], ours


def saved_document(path: Path) -> str | None:
    """The schema name of a document jupyter_brrr saved (``"jupyter_brrr.job"``...), read from
    the file's first bytes; None for anything else (a trace, a file that cannot be read: the
    reader says why)."""
    import gzip

    try:
        if not path.is_file():  # a FIFO would block the open
            return None
        with path.open("rb") as raw:
            head = raw.read(512)
            if head[:2] == b"\x1f\x8b":
                raw.seek(0)
                with gzip.open(raw) as unzipped:
                    head = unzipped.read(512)
    except (OSError, EOFError):
        return None
    found = _OUR_DOCUMENT.match(head)
    return found.group(1).decode() if found else None


# Every document jupyter_brrr writes starts with its schema's name.
_OUR_DOCUMENT = re.compile(rb'\s*\{\s*"schema"\s*:\s*"(jupyter_brrr\.[a-z_.]+)"')


# --- one rank, in its own process -------------------------------------------------------------------


@dataclass
class RankData:
    """What the reading process sends back for one rank (times in seconds of its trace)."""

    path: str
    rank: int | None
    world_size: int | None
    backend: str | None
    host: str | None
    window: int | None  # the profiler step that closed the trace's window, from its name
    origin_s: float  # the trace's time zero on its host's clock
    report: Report
    calls: pd.DataFrame
    parts: dict[str, tuple[np.ndarray, np.ndarray]]  # merged intervals: compute ... comm
    exposed: tuple[np.ndarray, np.ndarray]  # communication with no work of the rank's own
    steps: pd.DataFrame  # step, start_s, end_s
    split: dict
    gpu: bool


def read_rank(
    path: str | PathLike, device: str | None = None, peaks: Peaks | None = None
) -> RankData:
    """Read and analyse one rank's trace (what each reading process runs)."""
    from ..analysis import steps
    from ..trace.events import read_trace
    from .trace_report import report_of_trace, whole_trace

    path = Path(path)
    trace = read_trace(path)
    # The whole trace's analysis gives each GPU event's bound; the rank's report (of its
    # median step, where the trace holds several) is made from it.
    host_steps = steps.host_steps(trace)  # found once for the analysis, report and rank steps
    whole, used_peaks, peak_notes = whole_trace(trace, device=device, peaks=peaks, host=host_steps)
    kernels = whole.kernels
    report = report_of_trace(trace, path, whole, used_peaks, peak_notes, host=host_steps)
    args = {}
    kernel_names = trace.kernels["name"].to_numpy(dtype=object)
    if "collective" not in trace.kernels.columns and any(
        map(comms.is_comm_kernel, set(kernel_names))
    ):
        args = comms.comm_args(path)  # sizes that only newer NCCL traces' kernel args hold
    calls = comms.collectives(trace, args)
    call_of = comms.call_of_rows(trace)
    gpu = bool(report.summary.get("gpu"))
    parts = _rank_parts(trace, kernels, calls, call_of, gpu)
    work = _union(*(parts[p] for p in ("compute", "memory", "other")))
    exposed = intervals.subtract(*parts["comm"], *work)
    split = _rank_split(parts, work, exposed)
    info = trace.metadata.get("distributedInfo") or {}
    own = trace.metadata.get("jupyter_brrr") or {}
    if not isinstance(info, dict):
        info = {}
    if not isinstance(own, dict):
        own = {}
    rank = _int(info.get("rank"), own.get("rank"))
    name_rank = _RANK_IN_NAME.search(path.name)
    if rank is None and name_rank:
        rank = int(name_rank.group(1))
    world = _int(info.get("world_size"), own.get("world_size"))
    _check_rank(path, rank, world)
    window = _STEP_IN_NAME.search(path.name)
    return RankData(
        path=str(path),
        rank=rank,
        world_size=world,
        backend=info.get("backend") or own.get("backend"),
        host=trace.metadata.get("host_name") or own.get("host"),
        window=_int(own.get("step"), int(window.group(1)) if window else None),
        origin_s=trace.origin_us * 1e-6,
        report=report,
        calls=calls,
        parts=parts,
        exposed=exposed,
        steps=_rank_steps(trace, kernels, host_steps),
        split=split,
        gpu=gpu,
    )


def _check_rank(path: Path, rank: int | None, world: int | None) -> None:
    """A rank from 0 to the world size - 1, and a world size no job has exceeded; else the
    trace (or its name) is damaged."""
    if world is not None and not 1 <= world <= MOST_RANKS:
        raise TraceError(
            f"{path}: the trace gives a world size of {world}: a job has 1 to {MOST_RANKS:,} "
            "ranks, so its distributedInfo (or jupyter_brrr metadata) is damaged."
        )
    if rank is not None and not 0 <= rank < (world or MOST_RANKS):
        limit = f"{world - 1} (its world size is {world})" if world else f"{MOST_RANKS - 1:,}"
        raise TraceError(
            f"{path}: the trace says it is rank {rank}: ranks run from 0 to {limit}, so its "
            "rank (in distributedInfo, jupyter_brrr's metadata or the file name) is damaged."
        )


def _int(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    return None


def _union(*sets: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return intervals.merge(
        np.concatenate([s[0] for s in sets] + [np.empty(0)]),
        np.concatenate([s[1] for s in sets] + [np.empty(0)]),
    )


def _rank_parts(
    trace: Any, kernels: pd.DataFrame, calls: pd.DataFrame, call_of: np.ndarray, gpu: bool
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The rank's activity as merged intervals per part: its own work by bound (compute,
    memory, other) and its communication (comm), in seconds of its trace. ``kernels``: the
    whole trace's kernel table from the analysis."""
    empty = (np.empty(0), np.empty(0))
    parts = dict.fromkeys(("compute", "memory", "other", "comm"), empty)
    host_comm = calls[calls["where"] == "host"]
    comm = [(host_comm["start_s"].to_numpy(float), host_comm["end_s"].to_numpy(float))]
    if gpu:
        gpu_origin = float(np.min(trace.gpu_columns()["start_s"]))
        start = kernels["start_s"].to_numpy(float) + gpu_origin
        end = start + kernels["dur_s"].to_numpy(float)
        names = kernels["name"].to_numpy(dtype=object)
        is_comm = comms.comm_kernel_rows(names)
        is_comm |= kernels["category"].to_numpy(dtype=object) == "communication"
        owner = kernels["op_row"].to_numpy()
        launched = owner >= 0
        is_comm[launched] |= call_of[owner[launched]] >= 0
        is_comm |= _inside_comm_annotations(trace, start, end, kernels["stream"].to_numpy())
        bound = kernels["bound"].to_numpy(dtype=object)
        for part in ("compute", "memory"):
            chosen = (bound == part) & ~is_comm
            parts[part] = intervals.merge(start[chosen], end[chosen])
        chosen = ~np.isin(bound, ("compute", "memory")) & ~is_comm
        parts["other"] = intervals.merge(start[chosen], end[chosen])
        comm.append((start[is_comm], end[is_comm]))
    else:
        # No GPU work: the rank's own work is its top-level CPU ops outside the collectives
        # and off gloo's worker threads.
        ops = trace.ops
        top = (ops["parent"].to_numpy() < 0) & (call_of < 0)
        workers = set(zip(host_comm["pid"], host_comm["tid"], strict=True))
        if workers:
            threads = list(zip(ops["pid"], ops["tid"], strict=True))
            top &= np.fromiter((t not in workers for t in threads), bool, len(threads))
        parts["other"] = intervals.merge(
            ops["start_s"].to_numpy(float)[top], ops["end_s"].to_numpy(float)[top]
        )
    parts["comm"] = _union(*comm)
    return parts  # pyright: ignore[reportReturnType]  # numpy/pandas stubs: loose scalar types


def _inside_comm_annotations(
    trace: Any, start: np.ndarray, end: np.ndarray, stream: np.ndarray
) -> np.ndarray:
    """GPU events that lie inside a collective's GPU-side annotation on their stream (what
    gloo's worker copies back, which no host op launched)."""
    inside = np.zeros(len(start), dtype=bool)
    annotations = trace.annotations
    names = annotations["name"].to_numpy(dtype=object)
    chosen = (annotations["where"].to_numpy(dtype=object) == "gpu") & np.fromiter(
        (comms.canonical_op(n) is not None and ":" in n for n in names), bool, len(names)
    )
    if not chosen.any() or not len(start):
        return inside
    slack = 1e-9
    for low, high, lane in zip(
        annotations["start_s"].to_numpy(float)[chosen],
        annotations["end_s"].to_numpy(float)[chosen],
        pd.to_numeric(annotations["tid"][chosen], errors="coerce").to_numpy(),
        strict=True,
    ):
        inside |= (stream == lane) & (start >= low - slack) & (end <= high + slack)
    return inside


def _rank_split(
    parts: dict[str, tuple[np.ndarray, np.ndarray]],
    work: tuple[np.ndarray, np.ndarray],
    exposed: tuple[np.ndarray, np.ndarray],
) -> dict:
    """The span and its parts by priority compute > memory > other > communication > idle."""
    everything = _union(work, parts["comm"])
    if not len(everything[0]):
        return {f"{p}_s": 0.0 for p in JOB_SPLIT_PARTS} | {
            "span_s": 0.0,
            "work_s": 0.0,
            "comm_s": 0.0,
            "hidden_comm_s": 0.0,
            "overlap": None,
        }
    span = float(everything[1][-1] - everything[0][0])
    compute = intervals.union_length(*parts["compute"])
    compute_memory = intervals.union_length(*_union(parts["compute"], parts["memory"]))
    work_s = float(np.sum(work[1] - work[0]))
    busy = float(np.sum(everything[1] - everything[0]))
    comm = float(np.sum(parts["comm"][1] - parts["comm"][0]))
    exposed_s = float(np.sum(exposed[1] - exposed[0]))
    return {
        "span_s": span,
        "compute_s": compute,
        "memory_s": compute_memory - compute,
        "other_s": work_s - compute_memory,
        "communication_s": busy - work_s,  # exposed: communicating and nothing else
        "idle_s": max(span - busy, 0.0),
        "work_s": work_s,
        "comm_s": comm,
        "hidden_comm_s": max(comm - exposed_s, 0.0),
        "overlap": (comm - exposed_s) / comm if comm > 0 else None,
    }


def _rank_steps(trace: Any, kernels: pd.DataFrame, host_steps: pd.DataFrame) -> pd.DataFrame:
    """The rank's profiler steps: ``step`` (N of ProfilerStep#N), ``kind`` (first, steady,
    partial; "" without GPU work), ``host_start``..``host_end`` (the host range that assigns
    calls to it: up to the next step's start) and ``start_s``..``end_s`` (its window: on the GPU
    timeline as ``steps.find_steps`` tiles it, else its host range). ``host_steps`` is
    ``steps.host_steps(trace)``."""
    from ..analysis import steps

    names = host_steps["name"].to_numpy(dtype=object)
    numbers = [name[len(steps.STEP_PREFIX) :] for name in names]
    keep = np.array([n.isdigit() for n in numbers], dtype=bool)
    host = host_steps[keep]
    columns = ["step", "kind", "host_start", "host_end", "start_s", "end_s"]
    if not len(host):
        return pd.DataFrame(columns=columns)
    host_start = host["start_s"].to_numpy(float)
    host_end = np.maximum(np.append(host_start[1:], host["end_s"].to_numpy(float)[-1]), host_start)
    table = pd.DataFrame(
        {
            "step": [int(n) for n, k in zip(numbers, keep, strict=True) if k],
            "kind": "",
            "host_start": host_start,
            "host_end": host_end,
            "start_s": host_start,
            "end_s": host["end_s"].to_numpy(float),
        }
    )
    windows = steps.find_steps(trace, kernels, minimum=1, host=host_steps)
    if windows is not None and len(windows.table) == len(table):
        table["kind"] = windows.table["kind"].to_numpy(dtype=object)
        table["start_s"] = windows.window_start
        table["end_s"] = windows.window_end
    return table


# --- reading the ranks together ------------------------------------------------------------------


def _context() -> Any:
    """fork where it is safe and fast (Linux: no re-import in the child), else spawn."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def read_ranks(
    files: Sequence[Path],
    *,
    device: str | None = None,
    peaks: Peaks | None = None,
    workers: int | None = None,
    executor: Any = None,
) -> list[RankData]:
    """Each file read by ``read_rank``, in parallel processes (``workers``: at most this many;
    default one per file up to the CPU count; 1 reads them here, one after another).

    ``executor``: where a job outgrows one machine, what runs the readings instead of local
    processes: anything with ``submit(fn, *args)`` whose futures have ``result()``, such as a
    ``dask.distributed.Client`` (the ``dask`` extra) or a ``concurrent.futures`` executor. Each
    reading is one task that reads one file and returns its ``RankData`` (a rank's memory
    at a time per worker); the files must be readable at the same paths where it runs.

    Every file is read before an error is raised, and the error names every file that failed.
    """
    workers = min(len(files), workers or os.cpu_count() or 1)
    results: list[RankData | BaseException] = []
    if executor is not None:
        futures = [executor.submit(read_rank, str(path), device, peaks) for path in files]
        futures.reverse()
        while futures:
            # Each future dropped once read, so a cluster can forget the rank it holds.
            future = futures.pop()
            try:
                results.append(future.result())
            except TraceError as error:
                results.append(error)
            del future
    elif workers <= 1:
        for path in files:
            try:
                results.append(read_rank(path, device, peaks))
            except TraceError as error:
                results.append(error)
    else:
        with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
            futures = [pool.submit(read_rank, path, device, peaks) for path in files]
            for future in futures:
                try:
                    results.append(future.result())
                except TraceError as error:
                    results.append(error)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        listed = "; ".join(str(e) for e in failed)
        raise JobError(
            f"{len(failed)} of {len(files)} rank traces could not be read: {listed}. Re-export "
            "or leave them out (pass the readable files as a list)."
        )
    return [r for r in results if isinstance(r, RankData)]


def load_job(
    sources: str | PathLike | Iterable[str | PathLike],
    *,
    device: str | None = None,
    peaks: Peaks | None = None,
    workers: int | None = None,
    name: str | None = None,
    executor: Any = None,
) -> JobReport:
    """Read the traces of a job's ranks (a folder, a glob pattern or a list of files) and
    analyse them together: per-rank split with communication, overlap, the collectives and
    their bandwidth, stragglers, per-step figures.

    ``device`` names the GPU whose peaks to use when a trace's own is unknown; ``workers``
    bounds the reading processes (1: read here, one after another); ``executor`` runs the
    readings elsewhere instead, on a Dask cluster for one (``read_ranks``).
    """
    files, ours = _trace_files(sources)
    ranks = read_ranks(files, device=device, peaks=peaks, workers=workers, executor=executor)
    ranks, notes = _one_trace_per_rank(ranks)
    if ours:
        notes.insert(
            0,
            "Left out, as jupyter_brrr's own saved documents rather than traces: "
            + ", ".join(path.name for path in ours)
            + ".",
        )
    if name is None:
        name = Path(sources).name if isinstance(sources, (str, PathLike)) else files[0].parent.name
    return analyse_job(ranks, notes=notes, name=name)


def _one_trace_per_rank(ranks: list[RankData]) -> tuple[list[RankData], list[str]]:
    """One trace per rank: where a folder holds several profiled windows per rank (a schedule
    with ``repeat``), the last window; ranks numbered by their place where no file says."""
    notes = []
    if any(r.rank is None for r in ranks):
        if all(r.rank is None for r in ranks):
            for number, data in enumerate(sorted(ranks, key=lambda r: r.path)):
                data.rank = number
            notes.append(
                "No trace says which rank wrote it (no distributedInfo, no 'rank<N>' in the file "
                "name): ranks are numbered in file-name order."
            )
        else:
            missing = ", ".join(Path(r.path).name for r in ranks if r.rank is None)
            raise JobError(
                f"These traces do not say which rank wrote them: {missing}. Record with "
                "jupyter_brrr.record.trace_handler, or name the files rank<N>...json.gz."
            )
    by_rank: dict[int, list[RankData]] = {}
    for data in ranks:
        by_rank.setdefault(int(data.rank or 0), []).append(data)
    chosen = []
    windows_seen: set[int] = set()
    for rank, found in sorted(by_rank.items()):
        if len(found) > 1:
            windows = [f.window for f in found]
            if None in windows or len(set(windows)) < len(windows):
                listed = ", ".join(Path(f.path).name for f in found)
                raise JobError(
                    f"Rank {rank} has {len(found)} traces ({listed}) and their names do not say "
                    "which profiled window each is. Pass one file per rank (a list or a glob)."
                )
            found.sort(key=lambda f: f.window)  # pyright: ignore[reportArgumentType]  # several traces of a rank: each has a window (checked above)
            chosen.append(found[-1])
            windows_seen.update(windows)  # pyright: ignore[reportArgumentType]  # several traces of a rank: each has a window (checked above)
        else:
            chosen.append(found[0])
    if windows_seen:
        listed = ", ".join(str(w) for w in sorted(windows_seen))
        notes.append(
            f"The traces hold several profiled windows per rank (ending at steps {listed}): the "
            f"last of each rank is loaded. Pass a glob such as '*step{min(windows_seen)}*' for "
            "another."
        )
    return chosen, notes


# --- across ranks ---------------------------------------------------------------------------------


def analyse_job(
    ranks: list[RankData], *, notes: list[str] | None = None, name: str = ""
) -> JobReport:
    """The job's tables from its ranks' data (what ``load_job`` does after reading)."""
    notes = list(notes or [])
    ranks = sorted(ranks, key=lambda r: r.rank if r.rank is not None else -1)
    world = max((r.world_size or 0 for r in ranks), default=0) or len(ranks)
    hosts = {r.host for r in ranks}
    one_clock = len(ranks) > 1 and None not in hosts and len(hosts) == 1
    origin = min(r.origin_s for r in ranks)
    calls = _job_calls(ranks, origin)
    calls, unmatched = _match(calls, ranks)
    offsets = {r.rank: 0.0 for r in ranks}
    if len(ranks) > 1 and not one_clock and len(calls):
        offsets = _clock_offsets(calls, ranks)
        if any(abs(v) > 0 for v in offsets.values()):
            notes.append(
                "The traces do not say that the ranks ran on one host (no common host_name): each "
                "rank's clock is aligned on the collectives' ends (offsets in the rank table)."
            )
    for column in ("enqueue_s", "arrival_s", "start_s", "end_s"):
        calls[column] = calls[column] - calls["rank"].map(offsets).astype(float)
    instances = _instances(calls)
    if unmatched:
        notes.append(
            f"{unmatched} collective calls could not be matched across ranks (different op or "
            "size at the same place in the order): the traces may cover different steps. They "
            "are left out of the straggler figures."
        )
    if len(ranks) < world:
        notes.append(
            f"{len(ranks)} of {world} ranks loaded: lateness, waits and the straggler concern only "
            "these ranks."
        )
    if len(ranks) == 1:
        notes.append(
            "One rank alone: the collectives' times include any wait for other ranks, so the "
            "bandwidths are lower bounds."
        )
    steps = _step_table(ranks, calls, offsets, origin)
    rank_table = _rank_table(ranks, offsets)
    collectives = _collective_table(calls, instances, ranks)
    straggler = _straggler(rank_table, _wait_and_lateness(calls, instances), instances, steps)
    lanes = _lanes(ranks, offsets, origin)
    summary = _summary(ranks, rank_table, collectives, straggler, world, one_clock)
    if not summary["gpu"]:
        notes.append("No GPU work in these traces: 'other' is the ranks' CPU op time.")
    if len(collectives) and collectives["time_s"].sum() > summary["span_s"]:
        notes.append(
            "The collectives' summed times exceed the span: some ran at the same time (gloo "
            "runs two at once on its worker threads; NCCL on several streams)."
        )
    if not len(calls):
        notes.append(
            "No collective was found in these traces (no NCCL/RCCL kernel, no gloo annotation): "
            "was the job profiled while it communicated?"
        )
    job = JobReport(
        summary=summary,
        ranks=rank_table,
        collectives=collectives,
        calls=calls,
        steps=steps,
        lanes=lanes,
        notes=notes,
        name=name,
        reports={int(r.rank or 0): r.report for r in ranks},
    )
    job.recommendations = recommend(job)
    return job


def _job_calls(ranks: list[RankData], origin: float) -> pd.DataFrame:
    """Every rank's calls in one frame, times in seconds from the job's first trace event,
    with the rank, its profiler step and its place in its group's order."""
    frames = []
    for data in ranks:
        calls = data.calls.copy()
        shift = data.origin_s - origin
        for column in ("enqueue_s", "arrival_s", "start_s", "end_s"):
            calls[column] = calls[column] + shift
        calls["rank"] = int(data.rank or 0)
        enqueued = calls["enqueue_s"].fillna(calls["start_s"]).to_numpy() - shift
        calls["step"] = _step_of(enqueued, data.steps)
        frames.append(calls)
    if not frames:
        return pd.DataFrame(columns=[*comms.CALL_COLUMNS, "rank", "step"])
    calls = pd.concat(frames, ignore_index=True)
    calls["order"] = calls["enqueue_s"].fillna(calls["start_s"])
    calls = calls.sort_values(["rank", "order"], kind="stable").reset_index(drop=True)
    calls["seq"] = calls.groupby(["rank", "group", "step"]).cumcount()
    return calls


def _step_of(times: np.ndarray, steps: pd.DataFrame) -> np.ndarray:
    """The profiler step whose host range (to the next step's start) holds each time, -1
    outside every step."""
    out = np.full(len(times), -1, dtype=np.int64)
    if not len(steps):
        return out
    starts = steps["host_start"].to_numpy(float)
    at = np.searchsorted(starts, times, side="right") - 1
    inside = (at >= 0) & (times <= steps["host_end"].to_numpy(float)[np.maximum(at, 0)])
    out[inside] = steps["step"].to_numpy()[at[inside]]
    return out


def _match(calls: pd.DataFrame, ranks: list[RankData]) -> tuple[pd.DataFrame, int]:
    """Give each call the id of its collective (the same on every rank): (group, step, place
    in order). Where ranks hold different numbers of calls in a group and step (a trace that
    began inside a step), each rank's order is shifted to agree best with the rank that holds
    the fewest. Calls whose op or size disagree with the others' are dropped; their count is
    returned."""
    if not len(calls):
        calls["instance"] = pd.Series(dtype=object)
        return calls, 0
    calls = calls.copy()
    for (_group, _step), block in calls.groupby(["group", "step"], sort=False):
        counts = block.groupby("rank").size()
        if counts.nunique() <= 1:
            continue
        reference = block[block["rank"] == counts.idxmin()]
        signature = list(zip(reference["op"], reference["bytes"].fillna(-1), strict=True))
        for _rank, rows in block.groupby("rank"):
            if len(rows) == len(reference):
                continue
            theirs = list(zip(rows["op"], rows["bytes"].fillna(-1), strict=True))
            best = max(
                range(len(theirs) - len(signature) + 1),
                key=lambda d: sum(a == b for a, b in zip(signature, theirs[d:], strict=False)),
            )
            calls.loc[rows.index, "seq"] = rows["seq"] - best
    calls["instance"] = (
        calls["group"].astype(str)
        + "/"
        + calls["step"].astype(str)
        + "/"
        + calls["seq"].astype(str)
    )
    # The op and size each collective has on most ranks; the calls that disagree are dropped.
    key = calls["op"].astype(str) + "|" + calls["bytes"].fillna(-1).astype(str)
    counts = (
        pd.DataFrame({"instance": calls["instance"], "key": key})
        .value_counts(sort=True)
        .reset_index()
        .drop_duplicates("instance")  # the most common key of each instance comes first
    )
    majority = dict(zip(counts["instance"], counts["key"], strict=True))
    agrees = key.to_numpy() == calls["instance"].map(majority).to_numpy()
    dropped = int((~agrees).sum())
    calls = calls[agrees & (calls["seq"] >= 0)].reset_index(drop=True)
    return calls, dropped


def _clock_offsets(calls: pd.DataFrame, ranks: list[RankData]) -> dict[int, float]:
    """Each rank's clock minus the job's: the median over collectives of its end minus the
    collective's median end."""
    shared = calls.groupby("instance")["rank"].transform("nunique") > 1
    sub = calls[shared]
    if not len(sub):
        return {r.rank: 0.0 for r in ranks}  # pyright: ignore[reportReturnType]  # ranks are numbered by then (_one_trace_per_rank)
    median_end = sub.groupby("instance")["end_s"].transform("median")
    offsets = (sub["end_s"] - median_end).groupby(sub["rank"]).median()
    return {int(r.rank or 0): float(offsets.get(r.rank, 0.0)) for r in ranks}


def _instances(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per collective seen on two or more ranks: the last arrival, the straggler's
    lateness, the spread of the ends (the clocks' noise), the transfer time."""
    if not len(calls):
        return pd.DataFrame(
            columns=[
                *("instance", "ranks", "last_rank", "lateness_s", "end_spread_s"),
                *("transfer_s", "last_arrival_s", "second_arrival_s", "decided"),
            ]
        )
    rows = []
    for instance, block in calls.groupby("instance", sort=False):
        arrival = block["arrival_s"].to_numpy(float)
        end = block["end_s"].to_numpy(float)
        order = np.argsort(arrival)
        last = order[-1]
        second = float(arrival[order[-2]]) if len(order) > 1 else math.nan
        lateness = float(arrival[last]) - second
        rows.append(
            {
                "instance": instance,
                "ranks": len(block),
                "last_rank": int(block["rank"].iat[last]) if len(order) > 1 else -1,  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
                "lateness_s": lateness,
                "end_spread_s": float(end.max() - end.min()) if len(order) > 1 else math.nan,
                # Once the last rank is there: its own time to the end.
                "transfer_s": float(end[last] - arrival[last]),
                "last_arrival_s": float(arrival[last]),
                "second_arrival_s": second,
            }
        )
    table = pd.DataFrame(rows)
    multi = table["ranks"] > 1
    noise = float(table.loc[multi, "end_spread_s"].median()) if multi.any() else math.nan
    table["decided"] = multi & (table["lateness_s"] > max(noise if noise == noise else 0.0, 1e-6))
    table.attrs["noise_s"] = noise
    return table


def _rank_table(ranks: list[RankData], offsets: dict) -> pd.DataFrame:
    rows = []
    for data in ranks:
        rank = int(data.rank or 0)
        rows.append(
            {
                "rank": rank,
                "file": Path(data.path).name,
                "host": data.host or "",
                "device": data.report.summary.get("device", ""),
                "backend": data.backend or "",
                **{key: data.split[key] for key in _SPLIT_KEYS},
                "calls": int((data.calls["where"] != "").sum()),
                "clock_offset_s": float(offsets.get(rank, 0.0)),
            }
        )
    table = pd.DataFrame(rows)
    return table


_SPLIT_KEYS = (
    "span_s",
    *(f"{p}_s" for p in JOB_SPLIT_PARTS),
    "work_s",
    "comm_s",
    "hidden_comm_s",
    "overlap",
)


def _wait_and_lateness(calls: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """Per call: the time its rank waited for the last arrival (``wait_from``..``last_arrival_s``)
    and, where it was the decided last arrival, the time it held the others back
    (``late_from``..``last_arrival_s``); ``last`` marks those."""
    columns = ["instance", "last_rank", "decided", "last_arrival_s", "second_arrival_s", "ranks"]
    merged = calls.merge(instances[columns], on="instance", how="left")
    multi = merged["ranks"].fillna(1).to_numpy() > 1
    merged["wait_from"] = np.where(multi, merged["arrival_s"], merged["last_arrival_s"])
    last = multi & (merged["rank"] == merged["last_rank"]).to_numpy()
    last &= merged["decided"].fillna(False).to_numpy(bool)
    merged["last"] = last
    merged["late_from"] = np.where(last, merged["second_arrival_s"], merged["last_arrival_s"])
    return merged


def _scores(scored: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """last_count, lateness_s and wait_s per group of calls. Times are interval unions: gloo
    runs two collectives at once, and one wait covers both."""
    rows = {}
    for key, block in scored.groupby(keys, sort=False):
        end = block["last_arrival_s"].to_numpy(float)
        wait = intervals.union_length(block["wait_from"].to_numpy(float), end)
        late = intervals.union_length(block["late_from"].to_numpy(float), end)
        rows[key[0] if len(keys) == 1 else key] = (int(block["last"].sum()), late, wait)
    table = pd.DataFrame.from_dict(
        rows, orient="index", columns=["last_count", "lateness_s", "wait_s"]
    )
    if len(keys) > 1 and len(table):
        table.index = pd.MultiIndex.from_tuples(table.index, names=keys)
    return table


def _straggler(
    rank_table: pd.DataFrame, scored: pd.DataFrame, instances: pd.DataFrame, steps: pd.DataFrame
) -> dict:
    """The rank that arrives last most often, or None, with the figures that say so; fills
    the straggler scores of the rank and step tables."""
    per_rank = _scores(scored, ["rank"])
    for column in _SCORES:
        rank_table[column] = rank_table["rank"].map(per_rank[column]).fillna(0).to_numpy(float)
    rank_table["last_count"] = rank_table["last_count"].astype(int)
    by_step = _scores(scored, ["rank", "step"])
    index = pd.MultiIndex.from_frame(steps[["rank", "step"]])
    for column in _SCORES:
        values = by_step[column].reindex(index) if len(by_step) else pd.Series(np.nan, index)
        steps[column] = values.fillna(0).to_numpy(float)
    steps["last_count"] = steps["last_count"].astype(int)
    decided = int(instances["decided"].sum()) if len(instances) else 0
    noise = instances.attrs.get("noise_s", math.nan) if len(instances) else math.nan
    result: dict[str, Any] = {
        "rank": None,
        "decided": decided,
        "collectives": int((instances["ranks"] > 1).sum()) if len(instances) else 0,
        "noise_s": noise,
    }
    if not decided or len(rank_table) < 2:
        return result
    counts = rank_table.set_index("rank")["last_count"]
    lateness = rank_table.set_index("rank")["lateness_s"]
    cost, own = _critical_path(scored, instances)
    total = sum(cost.values())
    top = max(counts.index, key=lambda r: (counts[r], lateness[r]))
    share = counts[top] / decided
    critical = max(cost, key=lambda r: cost[r]) if total > 0 else None
    if critical is not None and cost[critical] >= CRITICAL_SHARE * total:
        # The rank whose own work the critical path through the collectives runs through.
        top = critical
        share = counts[top] / decided
        result |= {
            "critical_cost_s": float(cost[top]),
            "critical_work_s": float(own.get(top, 0.0)),
            "critical_share": float(cost[top] / total),
            "critical_cost_by_rank_s": {int(r): float(c) for r, c in cost.items()},
            "predicted_by": "the critical path through the collectives (each one a join: it "
            "ends once its last rank has arrived)",
        }
    # Better than chance: with n ranks a random last arrival would be each one's 1/n of the time.
    elif share < max(0.5, 1.5 / len(rank_table)):
        result["varies"] = {int(r): int(c) for r, c in counts.items() if c}
        return result
    others = rank_table[rank_table["rank"] != top]
    n_steps = steps[steps["rank"] == top]["step"].nunique() if len(steps) else 0
    result |= {
        "rank": int(top),
        "last_count": int(counts[top]),
        "share": float(share),
        "lateness_s": float(lateness[top]),
        "others_wait_s": float(others["wait_s"].median()),
        "steps": int(n_steps),
        "lateness_per_step_s": float(lateness[top] / n_steps) if n_steps else None,
        "others_wait_per_step_s": float(others["wait_s"].median() / n_steps) if n_steps else None,
    }
    return result


# The straggler is the rank on the critical path through the collectives where the lateness it
# puts on that path is at least this share of all the lateness on it.
CRITICAL_SHARE = 0.6


def _critical_path(scored: pd.DataFrame, instances: pd.DataFrame) -> tuple[dict, dict]:
    """The critical path through the collectives, each a join that ends once its last rank has
    arrived: walked back from the collective that ended last, through its last arrival, to the
    last collective that rank had finished before it arrived (its own work lies between), and
    so on. Per rank on the path: the lateness it put on it (``cost``: at each decided join where
    it arrived last, its arrival minus the second-last: what it cost the others) and its own
    work there (``own``). DDP's bucketed all-reduces can make the ranks arrive last about
    equally often; the path counts how long each held the others, not how often."""
    late: dict[int, list[tuple[float, float]]] = {}
    work: dict[int, list[tuple[float, float]]] = {}
    if not len(scored) or not len(instances):
        return {}, {}
    info = instances.set_index("instance")
    by_rank = {
        int(rank): block.sort_values("end_s", kind="stable")  # pyright: ignore[reportArgumentType]  # pandas stubs: loose scalar types
        for rank, block in scored.groupby("rank", sort=False)
    }
    ends = {r: b["end_s"].to_numpy(float) for r, b in by_rank.items()}
    multi = instances[instances["ranks"] > 1]
    if not len(multi):
        return {}, {}
    instance = multi.loc[multi["last_arrival_s"].idxmax(), "instance"]
    seen = set()
    while instance is not None and instance not in seen:
        seen.add(instance)
        row = info.loc[instance]
        rank = int(row["last_rank"])
        if rank < 0 or rank not in by_rank:
            break
        block = by_rank[rank]
        mine = block[block["instance"] == instance]
        if not len(mine):
            break
        arrival = float(mine["arrival_s"].iat[0])  # pyright: ignore[reportArgumentType]
        # The last collective this rank had finished before it arrived here.
        at = int(np.searchsorted(ends[rank], arrival, side="right")) - 1
        previous = block.iloc[at] if at >= 0 else None
        if bool(row["decided"]):
            late.setdefault(rank, []).append((float(row["second_arrival_s"]), arrival))
            if previous is not None:
                work.setdefault(rank, []).append((float(previous["end_s"]), arrival))
        if previous is None:
            break
        instance = previous["instance"]
        if instance not in info.index or int(info.loc[instance, "ranks"]) < 2:  # pyright: ignore[reportArgumentType]
            break

    # Interval unions, as the lateness: gloo runs two collectives at once.
    def union(spans: list[tuple[float, float]]) -> float:
        lo, hi = np.array(spans, dtype=float).T
        return float(intervals.union_length(lo, np.maximum(hi, lo)))

    cost = {rank: union(spans) for rank, spans in late.items()}
    own = {rank: union(spans) for rank, spans in work.items()}
    return cost, own


def _step_table(
    ranks: list[RankData], calls: pd.DataFrame, offsets: dict, origin: float
) -> pd.DataFrame:
    """Per rank and profiler step: the step's window, the rank's work, communication and its
    exposed part within it."""
    rows = []
    for data in ranks:
        rank = int(data.rank or 0)
        shift = data.origin_s - origin - offsets.get(rank, 0.0)
        work = {p: data.parts[p] for p in ("compute", "memory", "other")}
        for step, kind, low, high in data.steps[["step", "kind", "start_s", "end_s"]].itertuples(
            index=False
        ):
            row = {
                "rank": rank,
                "step": int(step),
                "kind": kind,
                "start_s": low + shift,
                "span_s": high - low,
            }
            for part, (start, end) in work.items():
                row[f"{part}_s"] = intervals.clipped_length(start, end, low, high)
            row["comm_s"] = intervals.clipped_length(*data.parts["comm"], low, high)
            row["exposed_comm_s"] = intervals.clipped_length(*data.exposed, low, high)
            rows.append(row)
    return pd.DataFrame(rows, columns=[c for c in JOB_STEP_COLUMNS if c not in _SCORES])


_SCORES = ("last_count", "lateness_s", "wait_s")


def _collective_table(
    calls: pd.DataFrame, instances: pd.DataFrame, ranks: list[RankData]
) -> pd.DataFrame:
    """One row per process group, op, size and dtype: calls per rank, transfer time, algbw
    and busbw against the link."""
    columns = list(JOB_COLLECTIVE_COLUMNS)
    if not len(calls):
        return pd.DataFrame(columns=columns)
    per_instance = calls.drop_duplicates("instance").merge(
        instances[["instance", "transfer_s", "ranks"]].rename(columns={"ranks": "seen"}),
        on="instance",
        how="left",
    )
    device = next((str(r.report.summary.get("device")) for r in ranks if r.gpu), None)
    backend = next((r.backend for r in ranks if r.backend), None)
    from ..costs.peaks import interconnect

    # gloo moves GPU tensors through host memory and TCP: no GPU link bounds it.
    link = interconnect(device) if backend in ("nccl", None) and device else None
    rows = []
    keys = ["group", "op", "bytes", "dtype", "where"]
    for key, block in per_instance.groupby(keys, dropna=False, sort=False):
        group, op, size, dtype, where = key
        transfer = block["transfer_s"].to_numpy(float)
        group_size = block["group_size"].dropna()
        n = int(group_size.iat[0]) if len(group_size) else None
        median = float(np.nanmedian(transfer)) if len(transfer) else math.nan
        algbw, busbw = comms.bandwidth(str(op), float(size), median, n)
        algorithms = block["algorithm"].replace("", np.nan).dropna()
        rows.append(
            {
                "group": group,
                "group_size": n,
                "op": op,
                "bytes": size,
                "dtype": dtype,
                "where": where,
                "calls": len(block),
                "time_s": float(np.nansum(transfer)),
                "median_s": median,
                "algbw": algbw,
                "busbw": busbw,
                "link_peak": link[0] if link else math.nan,
                "link_fraction": busbw / link[0] if link and busbw == busbw else math.nan,
                "algorithm": algorithms.mode().iat[0] if len(algorithms) else "",
                # Ranks each call was seen on (the fewest): with one, its time includes waiting.
                "ranks": int(block["seen"].min()),
            }
        )
    table = pd.DataFrame(rows, columns=columns)
    table.attrs["link_source"] = link[1] if link else ""
    return table.sort_values("time_s", ascending=False, kind="stable").reset_index(drop=True)


def _lanes(ranks: list[RankData], offsets: dict, origin: float) -> pd.DataFrame:
    """Each rank's activity per part on the job's aligned clock, for a per-rank timeline:
    merged intervals, gaps shorter than the job's span / LANE_SEGMENTS closed up."""
    spans = [
        (data.origin_s - origin - offsets.get(int(data.rank or 0), 0.0), data) for data in ranks
    ]
    ends = [
        float(data.parts[p][1].max()) + shift
        for shift, data in spans
        for p in data.parts
        if len(data.parts[p][1])
    ]
    resolution = (max(ends) if ends else 0.0) / LANE_SEGMENTS
    frames = []
    for shift, data in spans:
        for part, (start, end) in [*data.parts.items(), ("exposed", data.exposed)]:
            if not len(start):
                continue
            keep = np.ones(len(start), dtype=bool)
            keep[1:] = start[1:] - end[:-1] > resolution
            first = np.flatnonzero(keep)
            last = np.append(first[1:] - 1, len(start) - 1)
            frames.append(
                pd.DataFrame(
                    {
                        "rank": int(data.rank or 0),
                        "part": part,
                        "start_s": start[first] + shift,
                        "end_s": end[last] + shift,
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=list(JOB_LANE_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(JOB_LANE_COLUMNS)]


def _summary(
    ranks: list[RankData],
    rank_table: pd.DataFrame,
    collectives: pd.DataFrame,
    straggler: dict,
    world: int,
    one_clock: bool,
) -> dict:
    devices = sorted({str(r.report.summary.get("device")) for r in ranks})
    backends = sorted({r.backend for r in ranks if r.backend})
    work = rank_table["work_s"].to_numpy(float) if len(rank_table) else np.zeros(0)
    busiest = int(np.argmax(work)) if len(work) else None
    # The busiest rank against the median of the others (with two ranks: against the other).
    others = np.delete(work, busiest) if len(work) > 1 else work  # pyright: ignore[reportArgumentType, reportCallIssue]  # len(work) > 1: busiest is set
    median_work = float(np.median(others)) if len(others) else 0.0
    span = rank_table["span_s"].to_numpy(float) if len(rank_table) else np.zeros(0)
    comm = rank_table["comm_s"].to_numpy(float) if len(rank_table) else np.zeros(0)
    exposed = rank_table["communication_s"].to_numpy(float) if len(rank_table) else np.zeros(0)
    steps = sorted({int(s) for r in ranks for s in r.steps["step"]})
    return {
        "ranks": [int(r.rank or 0) for r in ranks],
        "world_size": world,
        "backend": ", ".join(backends) or "unknown",
        "devices": devices,
        "gpu": any(r.gpu for r in ranks),
        "hosts": sorted({r.host for r in ranks if r.host}),
        "one_clock": one_clock,
        "steps": steps,
        "span_s": float(span.max()) if len(span) else 0.0,
        "comm_s": float(comm.mean()) if len(comm) else 0.0,
        "exposed_comm_s": float(exposed.mean()) if len(exposed) else 0.0,
        "exposed_share": float(np.mean(exposed / span)) if len(span) and span.min() > 0 else None,
        "overlap": float(1 - exposed.sum() / comm.sum()) if comm.sum() > 0 else None,
        "work_median_s": median_work,
        "work_max_s": float(work.max()) if len(work) else 0.0,
        "busiest_rank": int(rank_table["rank"].iat[busiest]) if busiest is not None else None,  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        "imbalance": float(work.max() / median_work) if median_work > 0 else None,
        "straggler": straggler,
        "link_source": collectives.attrs.get("link_source", ""),
        "collective_calls": int(collectives["calls"].sum()) if len(collectives) else 0,
    }


# --- advice -----------------------------------------------------------------------------------------


# How to hide the exposed time of each kind of collective, in torch.distributed's terms.
_FSDP = (
    "With FSDP, prefetch the next all-gather (forward_prefetch=True, "
    "backward_prefetch=BackwardPrefetch.BACKWARD_PRE) and let it run ahead "
    "(limit_all_gathers=False if memory allows)."
)
_OVERLAP_HOW = {
    "all_reduce": (
        "With DDP, let the all-reduces start earlier in the backward pass (a smaller "
        "bucket_cap_mb, so the first bucket is ready sooner) and, with gradient accumulation, "
        "skip them on all but the last micro-batch (model.no_sync())."
    ),
    "all_gather": _FSDP,
    "reduce_scatter": _FSDP,
    "all_to_all": (
        "All-to-all (embeddings, mixture of experts) waits on the data it carries: overlap it "
        "with independent work (the next batch's lookup, the dense layers, on another stream) "
        "or send fewer, larger exchanges."
    ),
}


def _bandwidth_advice(job: JobReport) -> dict | None:
    """The advice on the busiest collective's bandwidth, where it is low or gloo carries GPU
    tensors."""
    s, ranks = job.summary, job.ranks
    table = job.collectives
    # Only times seen on two ranks or more are transfer times; one rank's include its waits.
    measured = table[table["ranks"] >= 2] if len(table) else table
    if len(measured):
        top = measured.iloc[0]
        fraction = top["link_fraction"]
        size = float(top["bytes"]) if top["bytes"] == top["bytes"] else math.nan
        # Collectives can run at once (gloo runs two): the share is of the rank's span that
        # any communication covers, never above 1.
        comm_share = float((ranks["comm_s"] / ranks["span_s"].where(ranks["span_s"] > 0)).max())
        if fraction == fraction and fraction < LOW_BUS_SHARE:
            if size < SMALL_MESSAGE_BYTES:
                how = (
                    f"The messages are small ({display.nbytes(size)}): each call pays NCCL's latency. "
                    "Send fewer, larger ones (a larger DDP bucket_cap_mb, coalesced collectives, "
                    "FSDP units that group more layers)."
                )
            else:
                how = (
                    f"The messages are large ({display.nbytes(size)}), so the link itself is slow: check "
                    "the topology (nvidia-smi topo -m: NVLink or PCIe between these GPUs), "
                    "that NCCL uses it (NCCL_DEBUG=INFO), and across nodes the network."
                )
            return {
                "kind": "bandwidth",
                "share": comm_share,
                "title": f"{top['op']} reaches {display.percent(fraction, 1.0)} of the link's bandwidth",
                "detail": (
                    f"{int(top['calls'])} calls of {display.nbytes(size)} take {display.seconds(top['median_s'])} "
                    f"each: bus bandwidth {display.rate(top['busbw'], 'B/s')} against "
                    f"{display.rate(top['link_peak'], 'B/s')} ({s['link_source']}). " + how
                ),
            }
        elif s["backend"] == "gloo" and s["gpu"] and top["busbw"] == top["busbw"]:
            return {
                "kind": "bandwidth",
                "share": comm_share,
                "title": f"gloo moves GPU tensors at {display.rate(top['busbw'], 'B/s')}",
                "detail": (
                    f"{int(top['calls'])} {top['op']} calls of {display.nbytes(size)} take "
                    f"{display.seconds(top['median_s'])} each (bus bandwidth "
                    f"{display.rate(top['busbw'], 'B/s')}): gloo copies GPU tensors to the host "
                    "and sends them over TCP. Use the nccl backend for GPU tensors."
                ),
            }
    return None


def recommend(job: JobReport) -> list[dict]:
    """Advice in the terms of torch.distributed, each naming the figures it rests on."""
    s = job.summary
    advice = []
    ranks = job.ranks
    straggler = s["straggler"]
    # Exposed communication that is not waiting for another rank: what overlap can hide.
    span = ranks["span_s"].where(ranks["span_s"] > 0) if len(ranks) else ranks.get("span_s")
    transfer = (ranks["communication_s"] - ranks["wait_s"]).clip(lower=0) if len(ranks) else None
    if len(ranks) and (transfer / span).max() >= EXPOSED_SHARE:  # pyright: ignore[reportOperatorIssue]  # numpy/pandas stubs: loose scalar types
        worst = ranks.loc[(transfer / span).idxmax()]  # pyright: ignore[reportArgumentType, reportCallIssue, reportOperatorIssue]  # numpy/pandas stubs: loose scalar types
        exposed, waits = float(worst["communication_s"]), float(worst["wait_s"])
        share = (exposed - min(waits, exposed)) / float(worst["span_s"])
        table = job.collectives
        # Advice for the op that takes the most time.
        op = str(table.groupby("op")["time_s"].sum().idxmax()) if len(table) else ""
        how = _OVERLAP_HOW.get(op, _OVERLAP_HOW["all_reduce"])
        detail = (
            f"On rank {int(worst['rank'])}, communication runs with nothing of its own work "
            f"beside it for {display.seconds(exposed)} of its {display.seconds(worst['span_s'])}"
            + (
                f", {display.seconds(waits)} of it waiting for other ranks (no overlap hides that"
                + ("; see the straggler)" if straggler.get("rank") is not None else ")")
                if waits > 0
                else ""
            )
            + f"; {display.percent(worst['hidden_comm_s'], worst['comm_s'])} of its "
            f"{display.seconds(worst['comm_s'])} of communication overlaps its own work. "
        )
        advice.append(
            {
                "kind": "overlap",
                "share": share,
                "title": f"Communication is exposed {display.percent(share, 1.0)} of the time"
                + (" beyond the waits" if waits > 0 else ""),
                "detail": detail + how,
            }
        )
    if straggler.get("rank") is not None:
        top = straggler["rank"]
        row = ranks[ranks["rank"] == top].iloc[0]
        median_work = float(ranks[ranks["rank"] != top]["work_s"].median())
        excess = float(row["work_s"]) - median_work
        lateness = float(straggler["lateness_s"])
        per_step = straggler.get("lateness_per_step_s")
        detail = (
            f"Rank {top} arrives last at {straggler['last_count']} of {straggler['decided']} "
            f"collectives decided beyond the clocks' noise ({display.seconds(straggler['noise_s'])}), "
            f"{display.seconds(lateness)} late in all; the others wait "
            f"{display.seconds(straggler['others_wait_s'])} (median). "
        )
        if straggler.get("critical_cost_s") is not None:
            detail += (
                f"On the critical path through the collectives (each ends once its last rank "
                f"has arrived) it holds the others {display.seconds(straggler['critical_cost_s'])}"
                f", {straggler['critical_share']:.0%} of all the lateness on that path, however "
                "often the other ranks arrive last. "
            )
        # How much of the lateness the rank's extra work explains.
        if excess >= 0.5 * lateness:
            detail += (
                f"Its own work explains it: {display.seconds(row['work_s'])} against "
                f"{display.seconds(median_work)} on the other ranks (median), {display.seconds(excess)} "
                "more. Look at the data (uneven batches or sequence lengths: bucket by length, "
                "equal shards, drop_last) or the partition (pipeline stages, experts, sharded "
                "layers of unequal cost)."
            )
        else:
            detail += (
                f"Its own profiled work explains {display.seconds(max(excess, 0.0))} of that "
                f"({display.seconds(row['work_s'])} against {display.seconds(median_work)} on the other "
                "ranks, median): the rest goes outside it: data loading, host-side Python, "
                "garbage collection, a sleep or a barrier, or a slower or throttled device on "
                "that rank."
            )
        advice.append(
            {
                "kind": "straggler",
                "share": float(lateness / row["span_s"]) if row["span_s"] > 0 else 0.0,
                "title": f"Rank {top} holds the others back"
                + (
                    f" by {display.seconds(per_step)} per step"
                    if per_step
                    else f" ({display.seconds(lateness)})"
                ),
                "detail": detail,
            }
        )
    elif (s.get("imbalance") or 0) >= IMBALANCE_RATIO and len(ranks) > 1:
        advice.append(
            {
                "kind": "imbalance",
                "share": 1 - 1 / s["imbalance"],
                "title": f"The ranks' work is uneven ({s['imbalance']:.2f}x)",
                "detail": (
                    f"Rank {s['busiest_rank']} works {display.seconds(s['work_max_s'])}, the other ranks "
                    f"{display.seconds(s['work_median_s'])} (median). Balance the data (batch or sequence "
                    "lengths) or the partition."
                ),
            }
        )
    bandwidth = _bandwidth_advice(job)
    if bandwidth is not None:
        advice.append(bandwidth)
    return sorted(advice, key=lambda a: -a["share"])


# --- the report ------------------------------------------------------------------------------------


def _first_calls(calls: pd.DataFrame) -> pd.DataFrame:
    """The calls the JSON form keeps: all, or the CALL_LIMIT first in time (every rank's)."""
    if len(calls) <= CALL_LIMIT:
        return calls
    return calls.sort_values("start_s", kind="stable").head(CALL_LIMIT)


class JobReport(ShownAsPage):
    """A job's ranks analysed together: what ``jupyter_brrr.load`` returns for a folder, a glob
    or a list of traces.

    Attributes (tidy pandas frames, times in seconds, sizes in bytes, rates per second):
        summary: ranks, world size, backend, devices, the straggler, the imbalance, overlap.
        ranks: one row per rank: the span split with ``communication_s`` (exposed), the total
            ``comm_s``, ``hidden_comm_s`` and ``overlap``, and the straggler scores
            (``last_count``, ``lateness_s``, ``wait_s``).
        collectives: one row per process group, op, size and dtype: calls, time, algbw,
            busbw, link peak.
        calls: every collective call of every rank (aligned clock), with its collective's id.
        steps: per rank and profiler step: step time, work, communication, exposed part,
            lateness and wait.
        lanes: each rank's activity per part on the aligned clock (for a timeline).
        reports: the single-rank ``Report`` of each rank (``job.rank(0)``).

    ``save`` writes its JSON (``from_json`` reads it back); ``save_html`` one self-contained
    HTML file with the notebook's job view (Ranks and Timeline tabs) that opens offline.
    """

    mime_type = JOB_MIME_TYPE

    def __init__(
        self,
        *,
        summary: dict,
        ranks: pd.DataFrame,
        collectives: pd.DataFrame,
        calls: pd.DataFrame | None = None,
        steps: pd.DataFrame | None = None,
        lanes: pd.DataFrame | None = None,
        notes: list[str] | None = None,
        recommendations: list[dict] | None = None,
        name: str = "",
        created: str | None = None,
        reports: dict[int, Report] | None = None,
    ) -> None:
        self.summary = summary
        self.ranks = ranks
        self.collectives = collectives
        self.calls = calls if calls is not None else pd.DataFrame(columns=list(JOB_CALL_COLUMNS))
        self.steps = steps if steps is not None else pd.DataFrame(columns=list(JOB_STEP_COLUMNS))
        self.lanes = lanes if lanes is not None else pd.DataFrame(columns=list(JOB_LANE_COLUMNS))
        self.notes = list(notes or [])
        self.recommendations = list(recommendations or [])
        self.name = name
        self.created = created or datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.reports = dict(reports or {})

    def rank(self, rank: int) -> Report:
        """The single-rank report of one rank (not kept in the JSON form)."""
        if rank not in self.reports:
            held = ", ".join(map(str, sorted(self.reports))) or "none (read from JSON)"
            raise KeyError(f"No report of rank {rank} is held; ranks held: {held}.")
        return self.reports[rank]

    def split(self) -> pd.DataFrame:
        """The span split per rank (seconds): compute, memory, other, communication, idle."""
        return self.ranks.set_index("rank")[[f"{p}_s" for p in JOB_SPLIT_PARTS]]

    # --- JSON ----------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        from .report import frame_to_table, json_safe

        return {
            "schema": JOB_SCHEMA_NAME,
            "version": JOB_SCHEMA_VERSION,
            "name": json_safe(self.name),
            "created": json_safe(self.created),
            "summary": json_safe(self.summary),
            "notes": json_safe(self.notes),
            "recommendations": json_safe(self.recommendations),
            "ranks": frame_to_table(self.ranks, JOB_RANK_COLUMNS),
            "collectives": frame_to_table(self.collectives, JOB_COLLECTIVE_COLUMNS),
            "steps": frame_to_table(self.steps, JOB_STEP_COLUMNS),
            # Past CALL_LIMIT rows the JSON keeps the first collectives; the frame keeps all.
            "calls": {
                **frame_to_table(_first_calls(self.calls), JOB_CALL_COLUMNS),
                "total": len(self.calls),
            },
            "lanes": frame_to_table(self.lanes, JOB_LANE_COLUMNS),
        }

    def to_json(self, indent: int | None = None) -> str:
        """The versioned JSON form (``schema.JOB_SCHEMA_NAME``)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes | dict) -> JobReport:
        """Read a job report written by ``to_json`` (this schema version or older); a document
        that does not fit its schema raises ``SchemaError`` naming the bad field."""
        from .report import table_to_frame

        doc = parse_document(text, "job report")
        check_job(doc)  # the one check (schema/job.py): a SchemaError naming the bad field
        assert isinstance(doc, dict)
        return cls(
            summary=doc["summary"],
            # Every known column, so that the views find one a writer left out (as missing).
            ranks=table_to_frame(doc["ranks"], JOB_RANK_COLUMNS),
            collectives=table_to_frame(doc["collectives"], JOB_COLLECTIVE_COLUMNS),
            calls=table_to_frame(doc.get("calls"), JOB_CALL_COLUMNS),
            steps=table_to_frame(doc.get("steps"), JOB_STEP_COLUMNS),
            lanes=table_to_frame(doc.get("lanes"), JOB_LANE_COLUMNS),
            notes=doc.get("notes") or [],
            recommendations=doc.get("recommendations") or [],
            name=doc.get("name") or "",
            created=doc.get("created"),
        )

    def save(self, path: str | PathLike) -> Path:
        """Write the job report's JSON to ``path``, whole or not at all; returns it. Never over
        a rank's trace, a folder or a device (``writing.write_file``)."""
        from .writing import write_file

        inputs = self._read_from()
        other = Path(path).name.split(".")[0] + ".job.json"
        return write_file(path, self.to_json().encode(), inputs=inputs, other_name=other)

    def _read_from(self) -> list[str]:
        """The rank traces the job was read from, which no save of it may write over."""
        return [r.trace_path for r in self.reports.values() if r.trace_path]
