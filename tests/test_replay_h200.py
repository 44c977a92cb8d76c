"""The replay against the H200 recordings of ``bench/causal_check.py`` (bench/data/h200/causal:
each case's before and after traces, ``cases.json`` the CUDA-event times of each step outside
the profiler, in alternating rounds).

Each test names the physical effect it checks, on the case where the trace shows it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import jupyter_brrr

CAUSAL = Path(__file__).resolve().parents[1] / "bench" / "data" / "h200" / "causal"


def load(name: str) -> jupyter_brrr.Report:
    return jupyter_brrr.load(CAUSAL / f"{name}.json.gz")


def event_time(case: str, side: str) -> float:
    """The step's median CUDA-event time outside the profiler."""
    cases = json.loads((CAUSAL / "cases.json").read_text())
    return statistics.median(cases[case][f"{side}_s"])


@pytest.mark.parametrize("name", ["sdpa_before", "resnet50_b256_bf16_cl_before"])
def test_kernels_of_the_profiler_warm_up_belong_to_no_step(name: str) -> None:
    """A GPU-bound loop still runs the kernels the profiler's warm-up steps launched when the
    active steps begin; their launches were not recorded. Placed by their own start they landed
    in whichever step's host range they ran in: one steady step of the hand-written attention
    held 7 kernels and 3.49 ms of GPU work in a 2.31 ms window, ResNet-50's 407, 570 and 448
    kernels where each step launches 285. They belong to no step."""
    report = load(name)
    steady = report.steps[report.steps["kind"] == "steady"]
    assert steady["kernels"].nunique() == 1, steady["kernels"].tolist()
    assert (steady["busy_s"] <= steady["span_s"] * 1.001).all()
    # The report's step is the median steady step, its span that step's window.
    assert report.summary["span_s"] == pytest.approx(report.summary["steps"]["median_s"])
    case = name.removesuffix("_before")
    assert report.summary["span_s"] == pytest.approx(event_time(case, "before"), rel=0.02)
