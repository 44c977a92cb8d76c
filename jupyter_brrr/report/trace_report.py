"""A trace file's report: its whole analysis and, where it marks several profiler steps, that of
its median steady step (``load`` for one trace; ``job`` for each rank of a job)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import pandas as pd

from ..analysis import analyze as analysis
from ..analysis import step_graph, steps
from ..analysis.analyze import Analysis
from ..costs import peaks as peak_table
from ..costs.peaks import Peaks
from ..schema.report import Runs
from ..trace.events import Trace
from .report import Report


def analyse_trace(
    trace: Trace, path: str | PathLike, *, device: str | None = None, peaks: Peaks | None = None
) -> Report:
    """The report of one trace read from ``path``."""
    host = steps.host_steps(trace)  # found once: the run count and the step windows need it
    whole, used_peaks, notes = whole_trace(trace, device=device, peaks=peaks, host=host)
    return report_of_trace(trace, path, whole, used_peaks, notes, host=host)


def _trace_runs(profiled: int | None) -> Runs:
    # A file does not say how its code was warmed up or timed, nor how often it ran in all (a
    # profiler schedule runs steps it does not record).
    return {"warmup": None, "timed": None, "profiled": profiled, "total": None}


def whole_trace(
    trace: Trace,
    *,
    device: str | None = None,
    peaks: Peaks | None = None,
    host: pd.DataFrame | None = None,
) -> tuple[Analysis, Peaks | None, list[str]]:
    """The analysis of a whole trace, with the peaks it used and the notes on them (``host``:
    ``steps.host_steps(trace)`` where the caller has found it, else found here). For a trace
    with profiler steps, only its kernel table (``analyze(..., kernels_only=True)``): what
    ``report_of_trace`` needs to find the median step, which it then analyses."""
    if host is None:
        host = steps.host_steps(trace)
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
    # A trace with profiler steps (and GPU work) is analysed again, its median step alone, and
    # only that analysis is reported: of the whole trace, the step windows need the kernel table
    # alone. Elsewhere the reasons and advice wait (Report.from_analysis completes either).
    stepped = len(host) >= _STEPS_MINIMUM and len(trace.kernels) > 0
    whole = _whole_analysis(trace, peaks, trace_device, notes, host, kernels_only=stepped)
    return whole, peaks, notes


_STEPS_MINIMUM = 2  # steps.find_steps' default: fewer steps are the run itself


def _whole_analysis(
    trace: Trace,
    peaks: Peaks | None,
    device: str,
    notes: list[str],
    host: pd.DataFrame,
    *,
    kernels_only: bool = False,
) -> Analysis:
    return analysis.analyze(
        trace,
        peaks,
        device=device,
        notes=list(notes),
        advise=False,
        runs=_trace_runs(len(host) or None),
        kernels_only=kernels_only,
    )


def report_of_trace(
    trace: Trace,
    path: str | PathLike,
    result: Analysis,
    peaks: Peaks | None,
    notes: list[str],
    *,
    host: pd.DataFrame | None = None,
) -> Report:
    """The report of a trace from its whole analysis: with several profiler steps, that of its
    median steady step (``host``: as for ``whole_trace``)."""
    trace_device = result.summary["device"]
    if host is None:
        host = steps.host_steps(trace)
    windows = steps.find_steps(trace, result.kernels, minimum=_STEPS_MINIMUM, host=host)
    if windows is None and result.kernels_only:  # no step windows after all: the whole is it
        result = _whole_analysis(trace, peaks, trace_device, notes, host)
    if windows is not None:
        # Several runs in one trace: the per-run figures are those of the median steady step,
        # analysed on its own; every step's span and split go in the steps table.
        step = windows.median
        step_trace = steps.step_trace(trace, windows, step)
        result = analysis.analyze(
            step_trace,
            peaks,
            span_s=float(windows.table.at[step, "span_s"]),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            span_source="trace_step",
            device=trace_device,
            notes=[*notes, windows.note()],
            runs=_trace_runs(windows.count),
            steps=windows.summary(result.summary),
        )
        result.steps = windows.table
        result.graph = step_graph.build(
            step_trace,
            result.kernels,
            host_range=(float(windows.host_start[step]), float(windows.host_end[step])),
            measured_s=result.summary["span_s"],
        )
    else:
        result.graph = step_graph.build(trace, result.kernels)
        runs = result.summary["runs"]["profiled"]
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
    # The file's name, not its path: a shared notebook should not carry the author's folders.
    return Report.from_analysis(result, name=Path(path).name, source="trace", trace_path=str(path))
