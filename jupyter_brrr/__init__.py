"""jupyter_brrr: where the GPU time of PyTorch code goes — compute, memory bandwidth, or overhead.

Public API::

    %load_ext jupyter_brrr        # then %%brrr on a cell
    jupyter_brrr.profile(fn, *args, warmup=0, repeat=1, burst=False, **kwargs) -> Report
    jupyter_brrr.load("trace.json.gz") -> Report
    jupyter_brrr.load("traces/") -> JobReport       # a folder, glob or list: one trace per rank
    jupyter_brrr.measure_peaks() -> Peaks
    jupyter_brrr.Report.from_json(text) -> Report
    jupyter_brrr.compare(fn, *args, variants=("compile", "graph"), **kwargs) -> ABResult
    jupyter_brrr.diff(before, after) -> Comparison      # reports, saved reports or traces
    jupyter_brrr.history("attention") -> History       # the runs of %%brrr --name attention
    jupyter_brrr.run_job("train.py", *args, nproc=2) -> JobReport  # torchrun, every rank profiled
    %brrr_job train.py             # the same from a notebook, with progress and Cancel
    jupyter_brrr.sweep(fn, sizes, ...) -> SweepResult   # fn(size) runs one step; time against size
    jupyter_brrr.memory_breakdown(fn, *args) -> MemoryBreakdown   # what holds the peak memory
    jupyter_brrr.ProfilerInUseError   # raised where torch's profilers would nest
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .actions.ab import ABResult, compare
    from .actions.sweep import SweepResult, sweep
    from .analysis import Analysis
    from .capture import ProfilerInUseError
    from .comparison import Comparison, diff
    from .events import Trace, TraceError
    from .history_store import History, history
    from .job import JobReport
    from .launch import run_job
    from .memory import MemoryBreakdown, memory_breakdown
    from .peaks import Peaks, measure_peaks
    from .report import Report, SchemaError

# Imported on first use, so that `%load_ext jupyter_brrr` stays instant.
_LAZY = {
    "ABResult": "actions.ab",
    "compare": "actions.ab",
    "Comparison": "comparison",
    "diff": "comparison",
    "History": "history_store",
    "history": "history_store",
    "ProfilerInUseError": "capture",
    "TraceError": "events",
    "JobReport": "job",
    "run_job": "launch",
    "Peaks": "peaks",
    "measure_peaks": "peaks",
    "Report": "report",
    "SchemaError": "report",
    "SweepResult": "actions.sweep",
    "MemoryBreakdown": "memory",
    "memory_breakdown": "memory",
    "sweep": "actions.sweep",
}


def __getattr__(name: str) -> Any:
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
]
__version__ = "0.1.0"


def profile(
    fn: Any,
    *args: Any,
    warmup: int = 0,
    repeat: int = 1,
    cpu: bool = False,
    target: str | None = None,
    items: float | None = None,
    burst: bool = False,
    modules: bool = True,
    stack: bool = False,
    **kwargs: Any,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` and return its Report.

    By default ``fn`` runs once, profiled. With ``warmup`` or ``repeat`` > 1 it warms up first,
    unprofiled, then ``repeat`` runs are timed with CUDA events without the profiler (the span
    the report trusts: their median, with their spread, the SM clock and power while they ran),
    then one run is profiled. On a GPU the warm-up is sustained: at least ``warmup`` runs, and
    more until about a second has passed and the SM clock has stopped falling (at most 5 s);
    ``burst=True`` warms up exactly ``warmup`` runs instead (the GPU may still be at its boost
    clock). So ``fn`` runs ``warmup + repeat + 1`` times with ``burst=True`` or on the CPU, and
    at least that many on a GPU; ``report.summary["runs"]`` says how many.
    An error in ``fn`` propagates after the profiler has stopped. ``target`` (``"30ms"``, or
    ``"2000/s"`` with ``items`` per run) adds a plan for reaching it (``report.target``).

    ``modules``: attribute ops to the ``nn.Module`` paths that ran them (the modules among the
    arguments, the function's closure and globals); ``stack``: record the line of your code that
    made each torch call (slower host side in the profiled run).

    torch's profilers cannot nest: ``ProfilerInUseError`` is raised, before ``fn`` runs, when
    another profiler is running (yours, or this one around the call), and after it ran when
    ``fn`` started a profiler of its own (which keeps its events).
    """
    __tracebackhide__ = True
    from . import attribution
    from .capture import ProfilerInUseError, capture
    from .target import parse_goal

    goal = parse_goal(target, items) if target is not None else None  # bad input: before running
    name = getattr(fn, "__qualname__", None) or repr(fn)
    if modules:
        attributed = attribution.for_call(fn, args, kwargs, lines=stack)
    else:
        attributed = attribution.Attribution(lines=True) if stack else None
    result = capture(
        lambda: fn(*args, **kwargs),
        warmup=warmup,
        repeat=repeat,
        cpu=cpu,
        burst=burst,
        name=name,
        attribution=attributed,
    )
    if result.error is not None:
        raise result.error
    if result.no_report is not None:
        raise ProfilerInUseError(result.no_report)
    if goal is not None:
        result.report.set_target(goal)
    return result.report


def load(
    path: str | PathLike | Sequence[str | PathLike],
    *,
    device: str | None = None,
    peaks: Peaks | None = None,
    workers: int | None = None,
) -> Report | JobReport:
    """Analyse a PyTorch profiler trace (Kineto JSON, optionally gzipped) from any machine.

    One file gives its ``Report``. A folder, a glob pattern (``"traces/rank*.json.gz"``) or a
    list of files gives a ``JobReport``: the ranks of one distributed job, each read in a
    process of its own (at most ``workers``), analysed together.

    ``device`` names the GPU whose peaks to use when the trace's own device name is not in the
    table (``"H100"``, ``"MI250"``); ``peaks`` gives them outright.
    """
    from .events import read_trace

    if not isinstance(path, (str, PathLike)) or _is_job(path):
        from .job import load_job

        return load_job(path, device=device, peaks=peaks, workers=workers)
    return _analyse_trace(read_trace(path), path, device=device, peaks=peaks)


def _is_job(path: str | PathLike) -> bool:
    """A folder, or a glob pattern that is not itself a file's name."""
    import glob

    return Path(path).is_dir() or (glob.has_magic(str(path)) and not Path(path).exists())


def _analyse_trace(
    trace: Trace, path: str | PathLike, *, device: str | None = None, peaks: Peaks | None = None
) -> Report:
    """The report of one trace read from ``path``."""
    return _report_of_trace(trace, path, *_whole_trace(trace, device=device, peaks=peaks))


def _whole_trace(
    trace: Trace, *, device: str | None = None, peaks: Peaks | None = None
) -> tuple[Analysis, Peaks | None, list[str]]:
    """The analysis of a whole trace, with the peaks it used and the notes on them."""
    from . import analysis
    from . import peaks as peak_table

    trace_device = analysis.device_name(trace)  # once, for the peaks and the summary
    notes = []
    if peaks is None and len(trace.kernels):
        props = analysis.device_props(trace)  # the GPU the kernels ran on, as its name is
        peaks, note = peak_table.peaks_for(
            device or trace_device,
            measure_if_unknown=False,
            memory_bytes=props.get("totalGlobalMem"),
            multiprocessors=props.get("numSms"),
        )
        notes.append(note)
    # The reasons and advice wait: a trace with profiler steps is analysed again, its median
    # step alone, and only that analysis is reported (Report.from_analysis completes either).
    whole = analysis.analyze(trace, peaks, device=trace_device, notes=list(notes), advise=False)
    return whole, peaks, notes


def _report_of_trace(
    trace: Trace, path: str | PathLike, result: Analysis, peaks: Peaks | None, notes: list[str]
) -> Report:
    """The report of a trace from its whole analysis: with several profiler steps, that of its
    median steady step."""
    from . import analysis, steps
    from .report import Report

    trace_device = result.summary["device"]
    windows = steps.find_steps(trace, result.kernels)
    if windows is not None:
        # Several runs in one trace: the per-run figures are those of the median steady step,
        # analysed on its own; every step's span and split go in the steps table.
        step = windows.median
        result = analysis.analyze(
            steps.step_trace(trace, windows, step),
            peaks,
            span_s=float(windows.table.at[step, "span_s"]),
            span_source="trace_step",
            device=trace_device,
            notes=[*notes, windows.note()],
        )
        result.summary["steps"] = windows.summary(result.summary)
        result.steps = windows.table
        runs = windows.count
    else:
        result.summary["steps"] = None
        runs = len(steps.host_steps(trace)) or None
        if result.summary["gpu"] and runs is None:
            result.notes.append(
                "The trace marks no profiler steps (ProfilerStep#N), so how many runs of the code "
                "it holds is not recorded: its figures cover the whole trace, however many runs "
                "that is."
            )
        elif runs and runs > 1:
            result.notes.append(
                f"The trace holds {runs} profiler steps and no GPU work: its CPU op times cover "
                "all of them together."
            )
    # A file does not say how its code was warmed up or timed, nor how often it ran in all (a
    # profiler schedule runs steps it does not record).
    result.summary["runs"] = {"warmup": None, "timed": None, "profiled": runs, "total": None}
    # The file's name, not its path: a shared notebook should not carry the author's folders.
    return Report.from_analysis(result, name=Path(path).name, source="trace", trace_path=str(path))


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext jupyter_brrr``: registers the ``%%brrr`` cell magic and ``%brrr_job``."""
    from .notebook import load_ipython_extension as load_extension

    load_extension(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-brrr"}]
