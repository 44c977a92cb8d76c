"""A report's summary read the same way by the comparison, the target plan and the history:
what its totals are divided by to be per run, and the parts of its split in words."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CPU_PART_LABELS", "PART_LABELS", "part_label", "per_run_divisor"]

PART_LABELS = {
    "compute": "compute-bound time",
    "memory": "memory-bound time",
    "other": "other GPU time",
    "idle": "idle time (overhead)",
}
CPU_PART_LABELS = {
    "compute": "compute-bound time",
    "memory": "memory-bound time",
    "other": "time in torch ops",
    "idle": "time outside torch ops",
}


def part_label(part: str, gpu: bool = True) -> str:
    """A part of the split in words (a part a newer schema adds: its name and "time")."""
    return (PART_LABELS if gpu else CPU_PART_LABELS).get(part, f"{part} time")


def per_run_divisor(summary: Mapping) -> int:
    """What a report's totals are divided by to be per run: its profiled runs (a trace's
    profiler steps), unless its figures are already one step's (``summary["steps"]``)."""
    if isinstance(summary.get("steps"), Mapping) or summary.get("span_source") == "trace_step":
        return 1
    runs = summary.get("runs") or {}
    try:
        return max(int(runs.get("profiled") or 1), 1)
    except (TypeError, ValueError):
        return 1
