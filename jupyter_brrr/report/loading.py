"""``jupyter_brrr.load``: a profiler trace file (or a job's traces) to its report."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..costs.peaks import Peaks
from ..trace.events import read_trace
from .report import Report
from .trace_report import analyse_trace

if TYPE_CHECKING:
    from .job import JobReport


def load(
    path: str | PathLike[str] | Sequence[str | PathLike[str]],
    *,
    device: str | None = None,
    peaks: Peaks | None = None,
    workers: int | None = None,
    executor: Any = None,
) -> Report | JobReport:
    """Analyse a PyTorch profiler trace (Kineto JSON, optionally gzipped) from any machine.

    One file gives its ``Report``. A folder, a glob pattern (``"traces/rank*.json.gz"``) or a
    list of files gives a ``JobReport``: the ranks of one distributed job, each read in a
    process of its own (at most ``workers``), analysed together.

    ``device`` names the GPU whose peaks to use when the trace's own device name is not in the
    table (``"H100"``, ``"MI250"``); ``peaks`` gives them outright. ``executor`` (a job only):
    what reads the ranks instead of local processes, such as a ``dask.distributed.Client``
    (``pip install "jupyter-brrr[dask]"``): each rank is one task on the cluster.
    """
    if not isinstance(path, (str, PathLike)) or _is_job(path):
        # Imported here: a job's process pool (multiprocessing, sockets) costs one file's first
        # load 7-9 ms, more where bytecode is not cached.
        from .job import load_job

        return load_job(path, device=device, peaks=peaks, workers=workers, executor=executor)
    return analyse_trace(read_trace(path), path, device=device, peaks=peaks)


def _is_job(path: str | PathLike[str]) -> bool:
    """A folder, or a glob pattern that is not itself a file's name."""
    return Path(path).is_dir() or (glob.has_magic(str(path)) and not Path(path).exists())
