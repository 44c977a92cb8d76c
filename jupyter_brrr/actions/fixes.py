"""Advice that proves itself: the fix of a recommendation run as a variant of the A/B, and its
verdict against the saving the step's replay predicted.

``try_fix(report, n, fn, *args)`` runs recommendation ``n``'s fix (``FIX_OF_CAUSE``: a variant of
``variants.py``, applied without editing the code) against eager through ``ab.compare`` (the
same output check and run-count bound), predicts the fix's saving with ``causal.fix_saving``
(the step's dependency replay of the change the report's ranking replays too: a fix that speeds
up GPU work cannot shorten a host-bound span, and in the A/B's back-to-back calls a CUDA graph
saves only what the GPU waits beyond its own work), and stores the verdict in the
recommendation's ``"try"``:

- ``not applicable``: no automatic fix for this cause, the variant failed, or its outputs differ
  from eager's beyond the fix's precision (the reason says which);
- ``refuted``: no gain (the speed-up's range holds 1x) or slower. A gain the A/B calls noise
  because it is under ``timing.MIN_EFFECT``, but whose every middle round is above 1x, is a real
  gain, judged against the prediction like any other (a CUDA graph predicted to save 2.6% of a
  step and measured 1.02x, 1.01-1.02x, is smaller than predicted, not refuted);
- ``confirmed``: the measured saving reaches the predicted one within the noise bands (the
  measured speed-up's range up to the prediction's likely range, ``predicted_low_s`` to
  ``predicted_high_s``: ``analysis.spread.prediction_band`` on the report's own spread), or
  passes it;
- ``smaller than predicted``: a real gain, short of the prediction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..analysis import causal
from ..analysis.spread import prediction_band
from ..report.report import Report
from .ab import ABResult, compare

# The variant that applies each cause's fix without editing the code.
FIX_OF_CAUSE = {
    "fp32 without tensor cores": "tf32",
    "bf16": "bf16",
    "layout": "channels_last",
    "launch overhead": "graph",
    "fusion": "compile",
    "host copy": "pinned",
}
VERDICTS = ("confirmed", "smaller than predicted", "refuted", "not applicable")


def predicted_saving(report: Report, recommendation: Mapping, base_s: float) -> float | None:
    """The saving the step's replay predicts for the recommendation's fix, on a step whose eager
    calls take ``base_s`` back to back (the A/B's eager time): ``causal.fix_saving``, the same
    change the report's ranking replays. None without a step graph, or where the replay cannot
    model the change."""
    return causal.fix_saving(report.graph, recommendation, base_s)


def judge_gain(predicted_low_s: float | None, measured_high_s: float) -> str:
    """The verdict of a real gain: confirmed where its noise band reaches the prediction's (the
    low end of the prediction's likely range)."""
    if predicted_low_s is None or measured_high_s >= predicted_low_s:
        return "confirmed"
    return "smaller than predicted"


def verdict(recommendation: Mapping, result: ABResult, fix: str, report: Report) -> dict:
    """The verdict of one fix's A/B (see the module docstring), as stored in ``"try"``."""
    base, tried = result.variants[0], result[fix]
    entry: dict[str, Any] = {
        "fix": fix,
        "verdict": "",
        "reason": "",
        "predicted_s": None,
        "predicted_low_s": None,
        "predicted_high_s": None,
        "measured_s": None,
        "measured_low_s": None,
        "measured_high_s": None,
        "base_s": base.median_s,
        "fixed_s": tried.median_s,
        "correct": tried.correct,
        "runs": result.runs_total,
    }
    if base.median_s:
        entry["predicted_s"] = predicted_saving(report, recommendation, base.median_s)
        if entry["predicted_s"] is not None:
            entry["predicted_low_s"], entry["predicted_high_s"] = prediction_band(
                entry["predicted_s"], report.summary
            )
    if tried.verdict in ("failed", "mismatch") or tried.median_s is None or not base.median_s:
        entry["verdict"] = "not applicable"
        entry["reason"] = (
            f"the outputs differ from eager's beyond the fix's precision: {tried.check_detail}"
            if tried.verdict == "mismatch"
            else f"the variant failed: {tried.error or 'no timing'}"
        )
        return entry
    base_s = base.median_s
    speedup = tried.speedup or base_s / tried.median_s
    low, high = tried.speedup_low or speedup, tried.speedup_high or speedup

    entry.update(judge(base_s, speedup, low, high, entry))
    return entry


def judge(base_s: float, speedup: float, low: float, high: float, entry: Mapping) -> dict:
    """The verdict and reason of a measured speed-up ``speedup`` (``low``..``high``, the middle
    half of the paired rounds) of a step of ``base_s`` against ``entry``'s predicted saving
    (``predicted_s``, ``predicted_low_s``), with the measured savings (see the module
    docstring)."""

    def saved(ratio: float) -> float:
        return base_s * (1 - 1 / ratio) if ratio > 0 else -math.inf

    out: dict[str, Any] = {
        "measured_s": saved(speedup),
        "measured_low_s": saved(low),
        "measured_high_s": saved(high),
    }
    predicted = entry.get("predicted_s")
    if low <= 1.0:
        out["verdict"] = "refuted"
        what = "slower" if high < 1.0 else "no gain"
        out["reason"] = f"{what}: {speedup:.2f}x ({low:.2f}-{high:.2f}x) against eager"
    elif judge_gain(entry.get("predicted_low_s"), saved(high)) == "confirmed":
        out["verdict"] = "confirmed"
        out["reason"] = f"{speedup:.2f}x against eager" + (
            f", at least the predicted {predicted * 1e3:.3g} ms{_likely(entry)} within the noise"
            if predicted
            else ""
        )
    else:
        out["verdict"] = "smaller than predicted"
        out["reason"] = (
            f"measured {saved(speedup) * 1e3:.3g} ms saved ({saved(low) * 1e3:.3g} to "
            f"{saved(high) * 1e3:.3g} ms), predicted {float(predicted or 0.0) * 1e3:.3g} ms"
            + _likely(entry)
        )
    return out


def _likely(entry: Mapping) -> str:
    """The predicted saving's likely range in words, where it is not a point."""
    low, high = entry.get("predicted_low_s"), entry.get("predicted_high_s")
    if low is None or high is None or not high > low * 1.005:
        return ""
    return f" (likely {low * 1e3:.3g} to {high * 1e3:.3g} ms)"


def needs_code_change(recommendation: Mapping) -> dict:
    """The verdict of a recommendation no variant can apply."""
    return {
        "fix": None,
        "verdict": "not applicable",
        "reason": f"no automatic fix for {recommendation['cause']}: it needs a code change "
        f"({recommendation.get('fix', '')})",
    }


def store_verdicts(report: Report, result: ABResult | None) -> list[dict]:
    """Each recommendation's verdict from an A/B that ran the fixes (``%%brrr --try-fixes``;
    None: no A/B ran), stored in its ``"try"``; a fix the A/B did not run is left without one."""
    tried = {v.name for v in result.variants} if result is not None else set()
    entries = []
    for recommendation in report.recommendations:
        fix = FIX_OF_CAUSE.get(recommendation["cause"])
        if fix is None:
            recommendation["try"] = needs_code_change(recommendation)
        elif result is not None and fix in tried:
            recommendation["try"] = verdict(recommendation, result, fix, report)
        else:
            continue
        entries.append(recommendation["try"])
    return entries


def try_fix(report: Report, n: int, fn: Any, *args: Any, **options: Any) -> dict:
    """Run recommendation ``n``'s fix on ``fn(*args)`` against eager and store the verdict in
    ``report.recommendations[n]["try"]`` (returned too). ``options`` go to ``compare``
    (``budget_s``, ``cpu``, ``max_runs``...)."""
    recommendations = report.recommendations
    if not 0 <= n < len(recommendations):
        raise IndexError(f"no recommendation {n}: the report has {len(recommendations)}.")
    recommendation = recommendations[n]
    fix = FIX_OF_CAUSE.get(recommendation["cause"])
    if fix is None:
        entry = needs_code_change(recommendation)
    else:
        options.setdefault("profile", False)
        result = compare(fn, *args, variants=[fix], **options)
        entry = verdict(recommendation, result, fix, report)
    recommendation["try"] = entry
    return entry
