"""The profiler's cost as the replay takes it out, against the CUDA events of the same steps.

    python bench/profiler_fit.py [FOLDER ...]    # default: bench/data/h200/causal_heldout8 to 10

Each FOLDER is a recording of ``bench/causal_check.py --keep``: every round's captures of each
case, and ``cases.json``, the CUDA-event times of each step outside the profiler in the same
rounds. For every host-bound capture (GPU idle over 30% of its span) this compares
``predict(profiler=0)`` with the median CUDA-event time of the round it was taken in, with the
constants of ``analysis/step_graph.py`` as they are, and then over a grid of
``PROFILER_HOST_SHARE`` and ``RECORD_GAP_S`` (set on the module for the grid, restored after;
``PROFILER_PER_DRIVER_LAUNCH_S`` as set, "drv"),
one folder at a time: what the constants were fitted on, and what they were checked on.
No GPU needed.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from causal_check import round_medians, round_path  # noqa: E402

from jupyter_brrr.analysis import step_graph  # noqa: E402
from jupyter_brrr.report.trace_report import analyse_trace  # noqa: E402
from jupyter_brrr.trace.events import read_trace  # noqa: E402

DEFAULT = [ROOT / f"bench/data/h200/causal_heldout{n}" for n in (8, 9, 10)]
SHARES = (0.4, 0.45, 0.5, 0.55, 0.6)
RECORD_GAPS_S = (0.0, 3e-6, 5e-6, 8e-6)


def captures(folder: Path) -> list[tuple[str, str, Path, float]]:
    """(case, side, capture, its round's CUDA-event median) for every round a recording kept."""
    kept = json.loads((folder / "cases.json").read_text())
    out = []
    for name, case in kept.items():
        chosen = (case.get("capture_round") or {}).get("before")
        for side in ("before", "after"):
            medians = round_medians(case[f"{side}_s"])
            for index in range(case.get("rounds_kept") or 0):
                path = round_path(folder, name, side, index, chosen)
                out.append((name, side, path, medians[index]))
    return out


def errors(traces: dict, items: list) -> tuple[list[float], list[float]]:
    """``predict(profiler=0) / CUDA events - 1`` of the host-bound captures: all, before-steps."""
    every, before = [], []
    for _case, side, path, event_s in items:
        report = analyse_trace(traces[path], path)
        span = report.summary["span_s"] or math.nan
        if report.graph is None or not report.graph.gpu_count:
            continue
        if not (report.summary["idle_s"] or 0.0) / span > 0.3:
            continue
        error = report.predict(profiler=0).span_s / event_s - 1
        every.append(error)
        if side == "before":
            before.append(error)
    return every, before


def line(label: str, every: list[float], before: list[float]) -> str:
    return (
        f"{label:30s} {len(every):4d} {statistics.median(np.abs(every)):8.1%} "
        f"{statistics.median(every):+9.1%} {np.percentile(np.abs(every), 90):7.1%} "
        f"{len(before):6d} {statistics.median(np.abs(before)):8.1%}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args()
    header = (
        f"{'constants':30s} {'n':>4s} {'median|e|':>8s} {'median e':>9s} {'p90|e|':>7s} "
        f"{'before':>6s} {'median|e|':>8s}"
    )
    for folder in args.folders:
        items = captures(folder)
        traces = {path: read_trace(path) for _, _, path, _ in items}
        print(f"\n{folder.name}: {len(items)} captures; e = profiler=0 / CUDA events - 1")
        print(header)
        now = (
            f"as set: {step_graph.PROFILER_HOST_SHARE:g}, {step_graph.RECORD_GAP_S * 1e6:g} us, "
            f"drv {step_graph.PROFILER_PER_DRIVER_LAUNCH_S * 1e6:g} us"
        )
        print(line(now, *errors(traces, items)))
        saved = step_graph.PROFILER_HOST_SHARE, step_graph.RECORD_GAP_S
        try:
            for share in SHARES:
                for gap in RECORD_GAPS_S:
                    step_graph.PROFILER_HOST_SHARE, step_graph.RECORD_GAP_S = share, gap
                    label = f"share {share:g}, record gap {gap * 1e6:g} us"
                    print(line(label, *errors(traces, items)))
        finally:
            step_graph.PROFILER_HOST_SHARE, step_graph.RECORD_GAP_S = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
