"""jupyter_brrr: where the GPU time of PyTorch code goes — compute, memory bandwidth, or overhead.

Public API::

    %load_ext jupyter_brrr        # then %%brrr on a cell
    jupyter_brrr.profile(fn, *args, warmup=0, repeat=1, burst=False, **kwargs) -> Report
    jupyter_brrr.load("trace.json.gz") -> Report
    jupyter_brrr.load("traces/") -> JobReport       # a folder, glob or list: one trace per rank
    jupyter_brrr.measure_peaks() -> Peaks
    jupyter_brrr.Report.from_json(text) -> Report
    jupyter_brrr.compare(fn, *args, variants=("compile", "graph"), **kwargs) -> ABResult
    jupyter_brrr.try_fix(report, n, fn, *args) -> dict  # recommendation n's fix, its verdict
    jupyter_brrr.diff(before, after) -> Comparison      # reports, saved reports or traces
    jupyter_brrr.history("attention") -> History       # the runs of %%brrr --name attention
    jupyter_brrr.run_job("train.py", *args, nproc=2) -> JobReport  # torchrun, every rank profiled
    %brrr_job train.py             # the same from a notebook, with progress and Cancel
    jupyter_brrr.sweep(fn, sizes, ...) -> SweepResult   # fn(size) runs one step; time against size
    jupyter_brrr.memory_breakdown(fn, *args) -> MemoryBreakdown   # what holds the peak memory
    jupyter_brrr.ProfilerInUseError   # raised where torch's profilers would nest
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .actions.ab import ABResult, compare
    from .actions.fixes import try_fix
    from .actions.sweep import SweepResult, sweep
    from .capture.launch import run_job
    from .capture.memory import MemoryBreakdown, memory_breakdown
    from .capture.profile import profile
    from .capture.run import ProfilerInUseError
    from .costs.peaks import Peaks, measure_peaks
    from .report.comparison import Comparison, diff
    from .report.history import History, history
    from .report.job import JobReport
    from .report.loading import load
    from .report.report import Report, SchemaError
    from .trace.events import TraceError

# Imported on first use, so that `%load_ext jupyter_brrr` stays instant.
_LAZY = {
    "ABResult": "actions.ab",
    "compare": "actions.ab",
    "Comparison": "report.comparison",
    "diff": "report.comparison",
    "History": "report.history",
    "history": "report.history",
    "ProfilerInUseError": "capture.run",
    "TraceError": "trace.events",
    "JobReport": "report.job",
    "load": "report.loading",
    "profile": "capture.profile",
    "run_job": "capture.launch",
    "Peaks": "costs.peaks",
    "measure_peaks": "costs.peaks",
    "Report": "report.report",
    "SchemaError": "report.report",
    "SweepResult": "actions.sweep",
    "MemoryBreakdown": "capture.memory",
    "memory_breakdown": "capture.memory",
    "sweep": "actions.sweep",
    "try_fix": "actions.fixes",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import version

        return version()
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'jupyter_brrr' has no attribute {name!r}")


__all__ = [
    "ABResult",
    "Comparison",
    "History",
    "JobReport",
    "MemoryBreakdown",
    "Peaks",
    "ProfilerInUseError",
    "Report",
    "SchemaError",
    "SweepResult",
    "TraceError",
    "compare",
    "diff",
    "history",
    "load",
    "load_ipython_extension",
    "measure_peaks",
    "memory_breakdown",
    "profile",
    "run_job",
    "sweep",
    "try_fix",
]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext jupyter_brrr``: registers the ``%%brrr`` cell magic and ``%brrr_job``."""
    from .notebook import load_ipython_extension as load_extension

    load_extension(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-brrr"}]
