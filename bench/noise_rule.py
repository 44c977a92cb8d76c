"""How the comparison's noise rule does on real H200 timings, against other rules one could pick.

    python bench/noise_rule.py

Input: the 15 CUDA-event step times recorded on the H200 for each of the 36 zoo models
(bench/data/h200/zoo) and the 24 advice-case versions (tests/data/advice). Each workload's times
are cut into three measurements of 5 runs, in recording order, and every pair of them is "the
same code measured twice" (180 pairs). The same pairs with the later measurement's times divided
by 1.1 are "a real 10% gain". A rule should call the first noise (at least 9 in 10) and find the
second where the runs allow it; the table gives both, the second also for the pairs whose runs
agree within 6% and within 10% (fastest to slowest, both sides).

Rules: ``diff`` is jupyter_brrr.comparison.span_change (order-statistic intervals of each median,
5% floor); ``quartiles`` the A/B's rule applied here (IQR ranges, 5% floor); ``se-1.96`` and
``se-2.58`` a normal interval of the log ratio from each median's standard error (MAD-based),
with the same floor.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_brrr.report.comparison import DRIFT, span_change  # noqa: E402

Rule = Callable[[list[float], list[float]], str]


def diff_rule(a: list[float], b: list[float]) -> str:
    return span_change(float(np.median(a)), float(np.median(b)), a, b).verdict


def _verdict(ratio: float, low: float, high: float) -> str:
    if low <= 1 <= high or abs(1 / ratio - 1) < DRIFT:
        return "noise"
    return "faster" if ratio > 1 else "slower"


def quartile_rule(a: list[float], b: list[float]) -> str:
    qa1, qa3 = np.percentile(a, [25, 75])
    qb1, qb3 = np.percentile(b, [25, 75])
    return _verdict(float(np.median(a) / np.median(b)), qa1 / qb3, qa3 / qb1)


def se_rule(z: float) -> Rule:
    def rule(a: list[float], b: list[float]) -> str:
        def relative_se(x: list[float]) -> float:
            m = float(np.median(x))
            mad = float(np.median(np.abs(np.asarray(x) - m))) * 1.4826
            return 1.2533 * mad / np.sqrt(len(x)) / m

        ratio = float(np.median(a) / np.median(b))
        se = float(np.hypot(relative_se(a), relative_se(b)))
        return _verdict(ratio, ratio * np.exp(-z * se), ratio * np.exp(z * se))

    return rule


def main() -> None:
    files = sorted(
        [
            *(ROOT / "bench" / "data" / "h200" / "zoo").glob("*.meta.json"),
            *(ROOT / "tests" / "data" / "advice").rglob("*.meta.json"),
        ]
    )
    pairs = []
    for path in files:
        times = json.loads(path.read_text())["event_times_s"]
        groups = [times[0:5], times[5:10], times[10:15]]
        for i, j in ((0, 1), (1, 2), (0, 2)):
            spread = max((max(g) - min(g)) / np.median(g) for g in (groups[i], groups[j]))
            pairs.append((groups[i], groups[j], spread))
    rules: dict[str, Rule] = {
        "diff": diff_rule,
        "quartiles": quartile_rule,
        "se-1.96": se_rule(1.96),
        "se-2.58": se_rule(2.58),
    }
    print(f"{len(files)} workloads, {len(pairs)} pairs of 5-run measurements\n")
    print(
        "| rule | same code: noise | 10% gain: found | found, runs within 6% | "
        "found, runs within 10% |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name, rule in rules.items():
        same = [rule(a, b) == "noise" for a, b, _ in pairs]
        gain = [(rule(a, [t / 1.1 for t in b]) == "faster", s) for a, b, s in pairs]

        def rate(values: list[bool]) -> str:
            return f"{sum(values) / len(values):.1%} ({sum(values)}/{len(values)})"

        print(
            f"| {name} | {rate(same)} | {rate([g for g, _ in gain])} | "
            f"{rate([g for g, s in gain if s < 0.06])} | {rate([g for g, s in gain if s < 0.10])} |"
        )


if __name__ == "__main__":
    main()
