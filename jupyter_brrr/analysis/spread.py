"""The spread of repeated timings, and whether the runs agree with each other.

How each figure is made:
- ``stats``: median, quartiles (numpy's linear interpolation) and extremes of the finite values.
- ``levels``: the sorted values are cut at their widest gap, each side keeping at least two
  values. The runs sat at two levels when that gap is wider than either side's own range and
  the two sides' medians are at least ``LEVEL_MIN`` apart: a host that moves between speed
  levels, or a GPU clock that changed, gives that; a smooth spread does not (its widest gap is
  narrower than its halves).
- ``trend``: the Mann-Kendall test on the values in run order (the normal approximation, which
  a perfectly monotonic run of five already passes at the 5% level) and the Theil-Sen slope
  (the median slope of all pairs of runs). A trend is reported when the test passes and the
  slope moves the time by at least ``TREND_MIN`` of the median over the runs.
- ``warmup``: the first runs (at most half of them) each slower than every later run by more
  than ``WARMUP_MIN``, with a gap wider than the later runs' own range: those runs were still
  warming up (first-call costs), whatever the machine did, so the warm-up was too short.
- ``findings``: the plain-language verdicts a report shows: the warm-up that was too short (the
  other verdicts then read the later runs only), two levels, a trend, or a spread (IQR over
  median, or the range for fewer than four runs) above ``SPREAD_MAX``.
- ``prediction_band``: the range a prediction (the diff's predicted speed-up, a
  recommendation's saving, a Try's predicted saving) is likely in, from the spread of the
  captures it is read from (timed runs' quartiles, or profiler steps' fastest and slowest); a
  measured value inside it confirms the prediction. The one place every band is made.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

# The host CPU's speed (``capture.clocks.host_loop_s`` readings) moves in levels on shared machines:
# a reading this much slower than another is a different level, not jitter (the loop's own
# repeats agree to a few percent at one level).
HOST_LEVEL_CHANGE = 0.15
# Two separate measurements of the same code on one machine differ by this much even where each
# one's runs agree to 1% (clocks under the power limit, other processes; bench/RESULTS.md: a
# GPT-2 forward's capture-to-capture medians 1-5% apart on the H200): no band is narrower.
SAME_CODE_DRIFT = 0.05
# Runs whose interquartile range is above this fraction of their median disagree.
SPREAD_MAX = 0.03
# Two levels closer than this (ratio of their medians - 1) are one level with some noise.
LEVEL_MIN = 0.05
# The first runs this much slower than every later one were still warming up.
WARMUP_MIN = 0.2
# A drift smaller than this fraction of the median over all the runs is not worth a word.
TREND_MIN = 0.02
# Two-sided 5% level of the Mann-Kendall statistic under the normal approximation.
TREND_Z = 1.96


@dataclass(frozen=True)
class Stats:
    """Summary of per-run (or per-call) times, in seconds."""

    median: float
    q1: float
    q3: float
    n: int
    min: float
    max: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def spread(self) -> float:
        """The IQR as a fraction of the median; the range instead for fewer than four values
        (their quartiles are interpolated from two or three points)."""
        if self.median <= 0:
            return 0.0
        width = self.iqr if self.n >= 4 else self.max - self.min
        return width / self.median


def finite(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray(
        [v for v in values if v is not None and math.isfinite(v)],
        dtype=float,
    )


def stats(times: Sequence[float | None]) -> Stats | None:
    """Median, quartiles and extremes of ``times``; None when there are none."""
    values = finite(times)
    if values.size == 0:
        return None
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return Stats(
        float(median),
        float(q1),
        float(q3),
        int(values.size),
        float(values.min()),
        float(values.max()),
    )


@dataclass(frozen=True)
class Levels:
    """Runs that sat at two levels: ``low`` and ``high`` are the run indices (in run order) of
    each level, ``low_s`` and ``high_s`` the levels' medians."""

    low: list[int]
    high: list[int]
    low_s: float
    high_s: float

    @property
    def separation(self) -> float:
        return self.high_s / self.low_s - 1.0

    @property
    def shifted(self) -> bool:
        """True when the levels follow each other in time (one level, then the other) rather
        than alternate."""
        return max(self.low) < min(self.high) or max(self.high) < min(self.low)


def levels(times: Sequence[float]) -> Levels | None:
    """Two levels in ``times`` (in run order), as the module docstring says; None when the
    runs form one group, or there are fewer than four."""
    values = np.asarray(times, dtype=float)
    if values.size < 4 or not np.all(np.isfinite(values)) or values.min() <= 0:
        return None
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    gaps = np.diff(ordered)[1:-1]  # each side keeps at least two values
    if gaps.size == 0:
        return None
    cut = int(np.argmax(gaps)) + 2
    gap = ordered[cut] - ordered[cut - 1]
    low, high = ordered[:cut], ordered[cut:]
    width = max(low[-1] - low[0], high[-1] - high[0])
    low_s, high_s = float(np.median(low)), float(np.median(high))
    if gap <= width or high_s / low_s - 1.0 < LEVEL_MIN:
        return None
    return Levels(
        sorted(int(i) for i in order[:cut]), sorted(int(i) for i in order[cut:]), low_s, high_s
    )


def warmup(times: Sequence[float]) -> int:
    """How many of the first runs of ``times`` (in run order) were still warming up, as the
    module docstring says: 0 when none were (or there are fewer than three runs)."""
    values = np.asarray(times, dtype=float)
    n = values.size
    if n < 3 or not np.all(np.isfinite(values)) or values.min() <= 0:
        return 0
    best, best_ratio = 0, 1.0 + WARMUP_MIN
    for k in range(1, n // 2 + 1):
        first, rest = values[:k], values[k:]
        ratio = first.min() / rest.max()
        if ratio > best_ratio and first.min() - rest.max() > rest.max() - rest.min():
            best, best_ratio = k, ratio
    return best


@dataclass(frozen=True)
class Trend:
    """A monotonic drift: ``change`` is the Theil-Sen slope over all the runs as a fraction of
    the median (positive: the runs got slower), ``z`` the Mann-Kendall statistic."""

    change: float
    z: float


def trend(times: Sequence[float]) -> Trend | None:
    """A drift of the values in run order, as the module docstring says; None without one (or
    with fewer than five runs)."""
    values = np.asarray(times, dtype=float)
    n = values.size
    if n < 5 or not np.all(np.isfinite(values)):
        return None
    i, j = np.triu_indices(n, k=1)
    signs = np.sign(values[j] - values[i])
    s = float(signs.sum())
    variance = n * (n - 1) * (2 * n + 5) / 18.0
    z = (s - math.copysign(1.0, s)) / math.sqrt(variance) if s else 0.0
    median = float(np.median(values))
    if median <= 0:
        return None
    slope = float(np.median((values[j] - values[i]) / (j - i)))
    change = slope * (n - 1) / median
    if abs(z) < TREND_Z or abs(change) < TREND_MIN:
        return None
    return Trend(change, z)


@dataclass(frozen=True)
class Finding:
    """One way in which repeated runs disagree: ``kind`` is "warmup", "levels", "trend", "spread", "host"
    (the host CPU's speed changed while they ran), or "host_slow" (they agree, but the host ran
    slower than at its best: not a disagreement, a state the times depend on)."""

    kind: str
    text: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "text": self.text}


def _ms(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


def _median_among(n_low: int, n_high: int) -> str:
    if n_low == n_high:
        return "lies between them, where no run was"
    return f"is the {'low' if n_low > n_high else 'high'} level's, not a typical run of both"


def findings(times: Sequence[float], *, what: str = "timed runs") -> list[Finding]:
    """How the runs of ``times`` (in run order) disagree, in words; empty when they agree."""
    values = finite(times)
    summary = stats(values)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    if summary is None or summary.n < 2:
        return []
    found: list[Finding] = []
    slow = warmup(values)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    if slow:
        first, rest = values[:slow], values[slow:]
        settled = float(np.median(rest))
        runs = "run" if slow == 1 else f"{slow} runs"
        took = _ms(float(first[0])) if slow == 1 else f"{_ms(float(first.min()))} or more"
        found.append(
            Finding(
                "warmup",
                f"The first timed {runs} took {took}, {float(first.min()) / settled:.3g}x the "
                f"other {len(rest)} (median {_ms(settled)}): still warming up (compilation, "
                "cuDNN and cuBLAS set-up, first allocations, caches), not a change of speed of "
                f"the machine. The warm-up was too short: warm up more (--warmup {slow + 1} or "
                f"more). The median of all the runs, {_ms(summary.median)}, counts the warm-up; "
                f"the settled runs' is {_ms(settled)}.",
            )
        )
        if len(rest) < 2:
            return found
        values = rest
        summary = stats(values)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        assert summary is not None
    two = levels(values)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    if two is not None:
        n_low, n_high = len(two.low), len(two.high)
        if two.shifted:
            first_low = min(two.low) < min(two.high)
            first, then = ("low", "high") if first_low else ("high", "low")
            counts = {"low": n_low, "high": n_high}
            times_at = {"low": two.low_s, "high": two.high_s}
            where = (
                f"the first {counts[first]} at {_ms(times_at[first])}, the last {counts[then]} "
                f"at {_ms(times_at[then])}"
            )
        else:
            where = f"{n_low} at {_ms(two.low_s)} and {n_high} at {_ms(two.high_s)}, alternating"
        found.append(
            Finding(
                "levels",
                f"The {what} sat at two levels {two.separation:.0%} apart ({where}): the machine "
                "changed speed while they ran (the host CPU, the GPU clock, or another process). "
                f"The median, {_ms(summary.median)}, {_median_among(n_low, n_high)}.",
            )
        )
    drift = trend(values)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
    if drift is not None and not (two is not None and two.shifted):
        direction = "slower" if drift.change > 0 else "faster"
        found.append(
            Finding(
                "trend",
                f"The {what} got steadily {direction}, by {abs(drift.change):.1%} from the first "
                f"to the last ({summary.n} runs): the state was still changing (clocks settling "
                "under load, caches, a background process). More warm-up, or more runs, tell "
                "where it settles.",
            )
        )
    if not found and summary.spread > SPREAD_MAX:
        # The width the spread measures, with its own ends: the quartiles, or the extremes of
        # fewer than four runs (see Stats.spread).
        if summary.n >= 4:
            width, low, high = "interquartile range", summary.q1, summary.q3
        else:
            width, low, high = "range", summary.min, summary.max
        found.append(
            Finding(
                "spread",
                f"The {what} spread widely: their {width} is {summary.spread:.1%} of the median "
                f"({_ms(low)} to {_ms(high)}), so the median, {_ms(summary.median)}, "
                "is uncertain by about that much.",
            )
        )
    return found


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def host_findings(
    loops: Sequence[float | None], fastest: float | None, *, what: str = "timed runs"
) -> list[Finding]:
    """What the host CPU's speed did during the runs (``loops``: clocks.host_loop_s after each
    run; ``fastest``: its fastest reading in this process), when it matters: it changed level
    while they ran, or it ran a level slower than its best. Launch-bound and Python-heavy time
    follows the host's speed, GPU-bound time does not."""
    values = [float(v) for v in loops if v]
    if not values:
        return []
    found = []
    low, high = min(values), max(values)
    if high > low * (1.0 + HOST_LEVEL_CHANGE):
        found.append(
            Finding(
                "host",
                f"The host CPU's own speed changed while the {what} ran: a fixed Python loop took "
                f"{_us(low)} to {_us(high)} ({high / low:.2f}x). Time the host spends in Python, "
                "dispatch and launches moved with it; GPU-bound time did not.",
            )
        )
    slowdown = host_slowdown(values, fastest)
    if slowdown is not None and fastest and slowdown > 1.0 + HOST_LEVEL_CHANGE:
        found.append(
            Finding(
                "host_slow",
                f"The host CPU ran {slowdown:.2f}x slower during the {what} than at its fastest "
                f"in this session (a fixed Python loop: {_us(slowdown * fastest)} against "
                f"{_us(fastest)}). Launch-bound or Python-heavy code measured now is slower than "
                "it would be at the host's best; compare it only with measurements at the same "
                "host speed (a diff says when they differ).",
            )
        )
    return found


def host_slowdown(loops: Sequence[float | None], fastest: float | None) -> float | None:
    """How much slower than ``fastest`` the host ran for the median of ``loops`` (1.0 = at its
    best), or None without readings."""
    values = [v for v in loops if v]
    if not values or not fastest:
        return None
    return statistics.median(values) / fastest


def round_hosts(readings: Sequence[float]) -> list[float]:
    """Each round's host reading, from ``host_loop_s`` read before every round and after the
    last: the slower of the one before it and the one after."""
    return [max(a, b) for a, b in pairwise(readings)]


def steady_rounds(readings: Sequence[float], minimum: int) -> set[int] | None:
    """The rounds (indices) that ran at the host's best speed of the series: each round's
    reading (``round_hosts``) within HOST_LEVEL_CHANGE of the fastest round's. None to keep
    every round: the host held one level, or fewer than ``minimum`` rounds were at its best.
    Launch-bound time follows the host's speed, so times from rounds at mixed levels depend
    on how many were slow; from the rounds at its best they are the same from one series to
    the next (bench/RESULTS.md, the A/B of a GRU)."""
    hosts = round_hosts(readings)
    if not hosts:
        return None
    best = min(hosts)
    steady = {r for r, h in enumerate(hosts) if h <= best * (1.0 + HOST_LEVEL_CHANGE)}
    if len(steady) == len(hosts) or len(steady) < minimum:
        return None
    return steady


def _span_spread(summary: Mapping[str, Any] | None) -> tuple[float, float]:
    """How far one capture's span per run moved across its own repeats, as factors of the span
    (low <= 1 <= high): its timed runs' quartiles over their median where it has timed runs
    (the span is then their median), else its steady profiler steps' fastest and slowest over
    the median step (the span is then that step's); (1, 1) where it has neither."""
    if not isinstance(summary, Mapping):
        return 1.0, 1.0
    timing = summary.get("timing")
    steps = summary.get("steps")
    for source, low, mid, high in (
        (timing, "q1_s", "median_s", "q3_s"),
        (steps, "fastest_s", "median_s", "slowest_s"),
    ):
        if not isinstance(source, Mapping):
            continue
        values = [source.get(key) for key in (low, mid, high)]
        if all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in values):
            lo, median, hi = (float(v) for v in values)  # pyright: ignore[reportArgumentType]  # checked just above
            return min(lo / median, 1.0), max(hi / median, 1.0)
    return 1.0, 1.0


def prediction_band(
    value: float,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None = None,
) -> tuple[float, float]:
    """The range a prediction is likely in, from what its captures know of their own noise (a
    report's ``summary``): each capture's span moved across its own repeats (``_span_spread``:
    the timed runs' quartiles, or the profiler steps' fastest and slowest), and a prediction
    read from it moves with it. A time or saving predicted from ``before`` alone moves as its
    span: ``value`` times its low and high factors. A speed-up from two captures (``after``
    given: the before span over the after one) is lowest with the faster before and the slower
    after: ``value * low_before / high_after`` to ``value * high_before / low_after``. The
    ground truth drifts too (the host's speed between calls): a measured value inside this band
    confirms the prediction; one outside it is a miss beyond what the captures' own noise
    explains. Never narrower than ``SAME_CODE_DRIFT`` either way: two captures of the same code
    differ by that much however well each one's repeats agree. NaN for a value that is not a
    number."""
    if not (isinstance(value, int | float) and math.isfinite(value)):
        return math.nan, math.nan
    low_b, high_b = _span_spread(before)
    if after is None:
        low, high = value * low_b, value * high_b
    else:
        low_a, high_a = _span_spread(after)
        low, high = value * low_b / high_a, value * high_b / low_a
    low, high = min(low, high), max(low, high)
    floor = abs(value) * SAME_CODE_DRIFT
    return min(low, value - floor / (1 + SAME_CODE_DRIFT)), max(high, value + floor)


__all__ = [
    "HOST_LEVEL_CHANGE",
    "LEVEL_MIN",
    "SAME_CODE_DRIFT",
    "SPREAD_MAX",
    "TREND_MIN",
    "Finding",
    "Levels",
    "Stats",
    "Trend",
    "findings",
    "host_findings",
    "host_slowdown",
    "levels",
    "prediction_band",
    "round_hosts",
    "stats",
    "steady_rounds",
    "trend",
]
