"""What a test takes as given, checked as it is taken: one trace file's ``Report`` (for
``jupyter_brrr.load`` gives a ``JobReport`` for a folder, a glob or a list, which a type
checker cannot tell from a path), the peaks of a GPU the table knows, and the repository's
recorded traces."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import jupyter_brrr
from jupyter_brrr.costs import peaks as pk
from jupyter_brrr.costs.peaks import Peaks
from jupyter_brrr.report.report import Report

DATA = Path(__file__).parent / "data"
# The repository's traces (the folder's own, and those of its trace folders: not its reports).
TRACE_FOLDERS = ("", "advice", "advice_cases", "graph_replay", "hta", "ranks", "zoo")
TRACES = sorted(
    path
    for folder in TRACE_FOLDERS
    for path in (DATA / folder).glob("*.json.gz")
    if not path.name.endswith(".sweep.json.gz")
)


def load_report(
    path: str | PathLike[str], *, device: str | None = None, peaks: Peaks | None = None
) -> Report:
    """``jupyter_brrr.load(path)`` of one trace file, checked to be one run's ``Report``."""
    report = jupyter_brrr.load(path, device=device, peaks=peaks)
    assert isinstance(report, Report), path
    return report


def known_peaks(
    name: str, *, memory_bytes: float | None = None, multiprocessors: int | None = None
) -> Peaks:
    """The table's row that ``peaks.lookup`` finds for a GPU it knows (asserted found)."""
    found = pk.lookup(name, memory_bytes=memory_bytes, multiprocessors=multiprocessors)
    assert found is not None, name
    return found
