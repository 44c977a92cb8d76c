"""Whether repeated timings agree: two levels, a trend, a wide spread. On the timings recorded
on the H200 (``bench/RESULTS.md``'s launch-bound drift, ``bench/data/h200/clocks.json``) and on
sequences made to have one property and not the others."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jupyter_brrr.analysis.spread import findings, host_findings, levels, stats, trend

ROOT = Path(__file__).resolve().parents[1]

# bench/RESULTS.md, "Launch-bound drift": the tiny MLP in blocks of 200 runs, ms per run.
DRIFT_STEADY = [0.310, 0.319, 0.325, 0.325, 0.320, 0.313]
DRIFT_JUMP = [0.422, 0.419, 0.419, 0.691, 0.709, 0.713]


def clock_run_times() -> list[float]:
    """60 runs of a bf16 Llama block stack from idle on the H200 (the first is the cold call)."""
    runs = json.loads((ROOT / "bench/data/h200/clocks.json").read_text())["runs"]
    return [run["time_s"] for run in runs[1:]]


def test_a_jump_between_host_levels_is_two_levels_in_run_order() -> None:
    two = levels(DRIFT_JUMP)
    assert two is not None and two.shifted
    assert two.low == [0, 1, 2] and two.high == [3, 4, 5]
    assert two.separation == pytest.approx(0.709 / 0.419 - 1)  # the levels' medians
    (found,) = findings(DRIFT_JUMP)
    assert found.kind == "levels"
    assert "the first 3 at" in found.text and "the last 3 at" in found.text
    # Three and three: the median falls between the levels, where no run was.
    assert "between them" in found.text


def test_one_host_level_agrees() -> None:
    assert levels(DRIFT_STEADY) is None
    assert trend(DRIFT_STEADY) is None
    assert findings(DRIFT_STEADY) == []


def test_alternating_levels_are_named_as_such() -> None:
    times = [1.0, 1.5, 1.01, 1.51, 1.0, 1.49, 1.02]
    two = levels(times)
    assert two is not None and not two.shifted
    assert two.low == [0, 2, 4, 6]
    (found,) = findings(times)
    assert "4 at" in found.text and "alternating" in found.text
    assert "low level" in found.text  # four of seven runs: the median is the low level's


def test_a_smooth_spread_is_not_two_levels() -> None:
    times = list(np.linspace(1.0, 1.2, 9))
    np.random.default_rng(0).shuffle(times)
    assert levels(times) is None
    kinds = [f.kind for f in findings(times)]
    assert kinds == ["spread"]


def test_one_outlier_is_not_a_level() -> None:
    assert levels([1.0, 1.01, 0.99, 1.0, 1.6]) is None


def test_the_boost_to_sustained_drift_recorded_on_the_h200_is_a_trend() -> None:
    times = clock_run_times()  # 7.49 ms per run at 1980 MHz, 7.8 ms at 1920-1950 MHz
    drift = trend(times)
    assert drift is not None and drift.change > 0.02 and drift.z > 3
    kinds = [f.kind for f in findings(times)]
    assert "trend" in kinds
    text = next(f.text for f in findings(times) if f.kind == "trend")
    assert "slower" in text and f"({len(times)} runs)" in text


def test_noise_without_direction_is_no_trend() -> None:
    rng = np.random.default_rng(1)
    times = list(1.0 + 0.005 * rng.standard_normal(40))
    assert trend(times) is None
    assert findings(times) == []


def test_a_trend_needs_five_runs() -> None:
    assert trend([1.0, 1.1, 1.2, 1.3]) is None
    assert trend([1.0, 1.05, 1.1, 1.15, 1.2]) is not None  # monotonic five: significant


def test_a_level_shift_is_told_once_not_also_as_a_trend() -> None:
    times = [1.0, 1.01, 1.0, 0.99, 1.0, 1.01, 1.3, 1.31, 1.29, 1.3, 1.3, 1.31]
    assert trend(times) is not None
    assert [f.kind for f in findings(times)] == ["levels"]


def test_spread_of_few_runs_is_their_range() -> None:
    s = stats([1.0, 1.1, 1.05])
    assert s is not None and s.spread == pytest.approx(0.1 / 1.05)
    s = stats([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s is not None and s.spread == pytest.approx(
        2.0 / 3.0
    )  # IQR over median from four runs on
    assert findings([1.0]) == []
    assert findings([]) == []


# bench/RESULTS.md, "Host drift": a fixed Python loop on the H200 machine's host, 0.913 ms at its
# usual level and 1.5-1.8x that for 1-2 s at a time (rounds of a quarter of a second).
HOST_USUAL_S = 0.913e-3
HOST_EPISODE = [1.00, 0.98, 1.62, 1.80, 1.76, 1.07, 0.99]


def test_host_findings_say_when_the_host_changed_speed_during_the_runs() -> None:
    loops = [HOST_USUAL_S * f for f in HOST_EPISODE]
    found = host_findings(loops, fastest=HOST_USUAL_S * 0.96)
    assert [f.kind for f in found] == ["host"]
    assert "895 µs to 1643 µs (1.84x)" in found[0].text


def test_host_findings_say_when_the_host_ran_slower_than_its_best() -> None:
    slow = [HOST_USUAL_S * f for f in (1.76, 1.78, 1.75)]
    found = host_findings(slow, fastest=HOST_USUAL_S)
    assert [f.kind for f in found] == ["host_slow"]
    assert "1.76x slower" in found[0].text
    # At its usual level, with the jitter of one level: nothing to say.
    assert host_findings([HOST_USUAL_S * f for f in (1.0, 1.03, 0.98)], HOST_USUAL_S * 0.96) == []
    assert host_findings([], HOST_USUAL_S) == []


def test_the_spread_finding_quotes_the_ends_it_measures() -> None:
    # Ten runs: the interquartile range, between the quartiles (not the fastest and slowest).
    many = [1.0e-3, 1.6e-3, 1.2e-3, 2.0e-3, 1.4e-3, 1.1e-3, 1.8e-3, 1.3e-3, 2.2e-3, 1.5e-3]
    (finding,) = findings(many)
    assert finding.kind == "spread"
    assert "interquartile range is 36.2% of the median (1.22 ms to 1.75 ms)" in finding.text
    assert "2.2 ms" not in finding.text
    # Three runs: their range, between the fastest and the slowest, in µs.
    (finding,) = findings([300e-6, 12e-3, 400e-6])
    assert "their range is 2925.0% of the median (300 µs to 12 ms)" in finding.text
    assert "median, 400 µs" in finding.text and " us" not in finding.text
