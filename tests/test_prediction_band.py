"""Each prediction carries its likely range (``analysis.spread.prediction_band``), from the
spread its captures measured of themselves, and is judged by it: on the H200 recordings of
``bench/causal_check.py`` (the same change measured 1.24x in one call and 1.05x in another)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import jupyter_brrr
from jupyter_brrr.analysis.spread import SAME_CODE_DRIFT, prediction_band
from jupyter_brrr.views.change import amdahl_lines

H200 = Path(__file__).resolve().parents[1] / "bench" / "data" / "h200"


def _steps(fastest: float, median: float, slowest: float) -> dict:
    return {"steps": {"fastest_s": fastest, "median_s": median, "slowest_s": slowest}}


def test_a_speedup_band_spans_the_faster_before_over_the_slower_after() -> None:
    before, after = _steps(0.9, 1.0, 1.2), _steps(0.45, 0.5, 0.55)
    low, high = prediction_band(2.0, before, after)
    assert low == pytest.approx(2.0 * 0.9 / 1.1)
    assert high == pytest.approx(2.0 * 1.2 / 0.9)
    # A saving from one capture moves as its span.
    assert prediction_band(0.004, before) == pytest.approx((0.0036, 0.0048))


def test_timed_runs_quartiles_come_before_the_profiler_steps() -> None:
    timed = {"timing": {"q1_s": 0.98, "median_s": 1.0, "q3_s": 1.1}, **_steps(0.5, 1.0, 2.0)}
    # The quartiles, widened to the drift between captures where narrower (0.98 is).
    assert prediction_band(1.0, timed) == pytest.approx((1 / (1 + SAME_CODE_DRIFT), 1.1))


def test_no_band_is_narrower_than_the_drift_between_two_captures() -> None:
    """Where each capture's repeats agree to 0.1%, two captures of the same code still differ
    by a few percent: ResNet-50 at batch 256's steps agree to 0.3%, and its bf16 change
    predicted 2.095x against 2.078x measured with CUDA events."""
    tight = _steps(0.999, 1.0, 1.001)
    low, high = prediction_band(2.095, tight, tight)
    assert low <= 2.078 <= high
    assert prediction_band(2.0, None) == pytest.approx((2.0 / 1.05, 2.1))


def test_the_diffs_replay_row_carries_its_band_and_the_views_show_it() -> None:
    """Four MLP blocks, eager to a CUDA graph, held out (the tenth recording): the replay
    predicts 8.8x, the CUDA events measured 7.9x (7.6-8.3x over the rounds): 11% off, outside
    issue 23's 10%, yet inside what the captures' own noise allows (7.6-9.7x), where the plain
    error alone calls it a miss. (The second recording's case, 13% off before the profiler's
    cost per kernel was modelled, is now 5% off.)"""
    folder = H200 / "causal_heldout10"
    before = jupyter_brrr.load(folder / "block_graph_before.json.gz")
    after = jupyter_brrr.load(folder / "block_graph_after.json.gz")
    assert isinstance(before, jupyter_brrr.Report) and isinstance(after, jupyter_brrr.Report)
    comparison = jupyter_brrr.diff(before, after)
    row = comparison.amdahl.iloc[0]
    assert row["kind"] == "replay"
    assert row["predicted_low"] < row["predicted_speedup"] < row["predicted_high"]
    times = json.loads((folder / "cases.json").read_text())["block_graph"]
    measured = statistics.median(times["before_s"]) / statistics.median(times["after_s"])
    assert abs(row["predicted_speedup"] / measured - 1) > 0.1
    assert row["predicted_low"] <= measured <= row["predicted_high"]
    doc = comparison.to_dict()
    assert "predicted_low" in doc["amdahl"]["columns"]
    line = amdahl_lines(json.loads(json.dumps(doc, default=str)))[0]
    assert f"(likely {row['predicted_low']:.2f}-{row['predicted_high']:.2f}x)" in line


def test_a_recommendations_saving_carries_its_band() -> None:
    """The saving field keeps its likely range, and its sentence says it."""
    report = jupyter_brrr.load(H200 / "causal_heldout2" / "block_graph_before.json.gz")
    savings = [r["saving"] for r in report.recommendations if r.get("predicted_by")]
    replayed = [s for s in savings if s.get("predicted_by") == "replay"]
    assert replayed
    saving = replayed[0]
    assert saving["low_s"] < saving["seconds"] < saving["high_s"]
    assert "likely" in saving["text"]
    again = jupyter_brrr.Report.from_json(report.to_json())
    kept = [r["saving"] for r in again.recommendations if r["saving"].get("predicted_by")]
    assert kept[0]["low_s"] == pytest.approx(saving["low_s"])


def test_a_try_is_confirmed_where_the_measured_range_reaches_the_predicted_band() -> None:
    """Predicted 2 ms (likely 1.5-2.5 ms), measured 1.4-1.6 ms: confirmed, where the point
    prediction alone called it smaller; below the band it is still smaller than predicted. The
    text view says the band as the app does (js/src/views/overview.ts, verdictText)."""
    from jupyter_brrr.actions.fixes import judge_gain
    from jupyter_brrr.views import format as fmt

    assert judge_gain(0.0015, 0.0016) == "confirmed"
    assert judge_gain(0.0015, 0.0014) == "smaller than predicted"
    entry = {
        "fix": "bf16",
        "verdict": "confirmed",
        "reason": "1.4x against eager",
        "predicted_s": 0.002,
        "predicted_low_s": 0.0015,
        "predicted_high_s": 0.0025,
        "measured_s": 0.0015,
        "measured_low_s": 0.0014,
        "measured_high_s": 0.0016,
    }
    assert "predicted 2 ms saved (likely 1.5 ms to 2.5 ms)" in fmt.tried({"try": entry})
