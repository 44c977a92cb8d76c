"""Timing variants so that their difference can be trusted.

The protocol (docs/method.md, "Timing"):
- every variant is warmed up first; compile and capture time are measured apart (``ab.py``);
- a measurement is a block of back-to-back calls bracketed by CUDA events (host clock on CPU),
  after a device synchronisation; the block is long enough (``plan``) that the events' and the
  first launch's cost vanish in it, as in ``torch.utils.benchmark``'s ``blocked_autorange``;
- variants are interleaved: each round times one block of every variant, in an order rotated
  from round to round, so that drift (clocks, temperature, other users) hits all of them alike;
- the statistics of each variant are the median and the interquartile range of its per-call
  times (for display); a speed-up is made from the variant's block and eager's block of the same
  round, one ratio per round, so that a level shift of the machine between rounds cancels: its
  value is the median of those ratios, its range their interquartile range, and a difference
  inside that range (or under ``MIN_EFFECT``) is called noise;
- when the caller announced a number of runs (``estimate_runs`` in ``ab.py``), every variant's
  timed calls stay under ``max_timed_calls`` of the same per-call time: a variant faster than
  ``SPEEDUP_ALLOWANCE`` times that gets shorter blocks rather than more calls.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.spread import Stats, stats
from ..capture import clocks

# A difference below this fraction is noise even when the spread within one A/B is tighter:
# repeating a whole A/B moves medians by a few percent (clocks, the other processes on the
# machine), which the spread inside one run does not see.
MIN_EFFECT = 0.02
MIN_BLOCK_S = 1e-3  # a block shorter than this is dominated by the sync and the first launch
MAX_BLOCK_S = 0.25  # Cancel is looked at between blocks: a block must not hold it up for long
TARGET_ROUNDS = 50
MIN_ROUNDS = 5
MAX_ROUNDS = 2000
MAX_BLOCK = 100_000
# The announced bound on runs lets a variant be this much faster than the per-call time it was
# made from before its calls are capped (CUDA graphs of launch-bound code measured 8-12x on the
# H200; a first, cold run is slower than the steady state too).
SPEEDUP_ALLOWANCE = 12.0


@dataclass(frozen=True)
class Speedup:
    """How much faster a variant is than the baseline: ``value`` the median ratio (baseline /
    variant), ``low``..``high`` its range, a verdict, and the number of paired rounds behind it
    (0 when it comes from two sets of medians and quartiles)."""

    value: float
    low: float
    high: float
    verdict: str  # "faster", "slower" or "noise"
    rounds: int = 0


def _verdict(value: float, low: float, high: float, min_effect: float) -> str:
    if low <= 1.0 <= high or abs(value - 1.0) < min_effect:
        return "noise"
    return "faster" if value > 1.0 else "slower"


def speedup(base: Stats, other: Stats, *, min_effect: float = MIN_EFFECT) -> Speedup:
    """Compare ``other`` with ``base``. The range is conservative: from base Q1 / other Q3 to
    base Q3 / other Q1, so it holds 1x whenever the two interquartile ranges overlap; that, or a
    difference under ``min_effect``, is "noise"."""
    value = base.median / other.median
    low = base.q1 / other.q3
    high = base.q3 / other.q1 if other.q1 > 0 else math.inf
    return Speedup(value, low, high, _verdict(value, low, high, min_effect))


def paired_speedup(
    base: Mapping[int, float], other: Mapping[int, float], *, min_effect: float = MIN_EFFECT
) -> Speedup | None:
    """The speed-up from blocks of the same round: ``base`` and ``other`` map a round to the
    per-call time of that round's block. One ratio per round both were timed in; the value is
    their median, the range their interquartile range (the middle half of the rounds), and the
    verdict is "noise" when that range holds 1x or the median is within ``min_effect`` of it.
    None without a common round."""
    ratios = np.asarray(
        [
            base[r] / other[r]
            for r in sorted(set(base) & set(other))
            if other[r] > 0 and math.isfinite(base[r]) and math.isfinite(other[r])
        ],
        dtype=float,
    )
    if ratios.size == 0:
        return None
    low, value, high = (float(x) for x in np.percentile(ratios, [25, 50, 75]))
    return Speedup(value, low, high, _verdict(value, low, high, min_effect), int(ratios.size))


def max_timed_calls(per_call_s: float | None, budget_s: float, rounds: int | None = None) -> int:
    """The most timed calls one variant makes when the A/B was announced from a call of
    ``per_call_s``: its budget at ``SPEEDUP_ALLOWANCE`` times that speed, and never fewer than
    two calls per round of the plan (the pilot round, then the rounds themselves)."""
    per_call = per_call_s if per_call_s and per_call_s > 0 and math.isfinite(per_call_s) else 1e-3
    calls = math.ceil(budget_s * SPEEDUP_ALLOWANCE / per_call)
    return max(calls, 2 * (rounds if rounds is not None else MIN_ROUNDS))


@dataclass(frozen=True)
class Plan:
    """Calls per timed block for each variant, and the number of interleaved rounds."""

    blocks: dict[str, int]
    rounds: int

    def calls(self) -> dict[str, int]:
        return {name: block * self.rounds for name, block in self.blocks.items()}


def plan(
    per_call_s: Mapping[str, float],
    budget_s: float,
    *,
    rounds: int | None = None,
    target_rounds: int = TARGET_ROUNDS,
    max_calls: Mapping[str, int] | None = None,
) -> Plan:
    """Block sizes and rounds so that each variant is timed for about ``budget_s`` seconds.

    Every variant's block lasts about the same time (``budget_s / target_rounds``, between
    ``MIN_BLOCK_S`` and ``MAX_BLOCK_S``), so interleaved rounds give each variant the same share
    of the clock. A cell slower than a block runs once per block, and then at least
    ``MIN_ROUNDS`` rounds run even if that exceeds the budget: fewer give no spread. ``rounds``
    fixes the number of rounds. ``max_calls`` caps a variant's calls (blocks times rounds):
    its blocks get shorter, and the rounds fewer where even blocks of one call would exceed it.
    """
    if budget_s <= 0:
        raise ValueError(f"the time budget must be positive (got {budget_s}).")
    target_block = min(max(budget_s / target_rounds, MIN_BLOCK_S), MAX_BLOCK_S)
    blocks = {
        name: int(min(MAX_BLOCK, max(1, round(target_block / t)))) if t > 0 else 1
        for name, t in per_call_s.items()
    }
    if rounds is None:
        longest = max((blocks[name] * t for name, t in per_call_s.items()), default=target_block)
        rounds = int(budget_s / longest) if longest > 0 else MAX_ROUNDS
        rounds = min(MAX_ROUNDS, max(MIN_ROUNDS, rounds))
    rounds = max(1, rounds)
    if max_calls:
        caps = {name: max(1, int(cap)) for name, cap in max_calls.items() if name in blocks}
        rounds = min([rounds, *caps.values()])
        for name, cap in caps.items():
            blocks[name] = max(1, min(blocks[name], cap // rounds))
    return Plan(blocks, rounds)


def rotation(names: Sequence[str], round_index: int) -> list[str]:
    """The order of the variants in round ``round_index``: rotated by one each round."""
    if not names:
        return []
    k = round_index % len(names)
    return [*names[k:], *names[:k]]


class Timer:
    """Times blocks of calls: CUDA events on a GPU (kernels finish after the host returns), the
    host clock otherwise."""

    def __init__(self, gpu: bool) -> None:
        self.gpu = gpu
        if gpu:
            import torch

            self._torch = torch
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)

    def block(self, call: Callable[[], Any], n: int) -> float:
        """Per-call time of ``n`` back-to-back calls, in seconds."""
        self._sync()
        if self.gpu:
            self._start.record()
            for _ in range(n):
                call()
            self._end.record()
            self._end.synchronize()
            return self._start.elapsed_time(self._end) * 1e-3 / n
        start = clocks.now()
        for _ in range(n):
            call()
        self._sync()
        return (clocks.now() - start) / n

    def once(self, call: Callable[[], Any]) -> tuple[float, Any]:
        """One call, synchronised, and its value: for warm-up and first (compiling) calls."""
        self._sync()
        start = clocks.now()
        value = call()
        self._sync()
        return clocks.now() - start, value

    def _sync(self) -> None:
        if self.gpu:
            self._torch.cuda.synchronize()
        else:
            _sync_if_cuda_started()


def _sync_if_cuda_started() -> None:
    """Host-clock timing (``--cpu``) of code that still queued GPU work must wait for it, or it
    times the queueing; where CUDA was never started there is nothing to wait for."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()


__all__ = [
    "MIN_EFFECT",
    "SPEEDUP_ALLOWANCE",
    "Plan",
    "Speedup",
    "Stats",
    "Timer",
    "max_timed_calls",
    "paired_speedup",
    "plan",
    "rotation",
    "speedup",
    "stats",
]
