"""Timing statistics of the A/B: median, IQR, speed-up ranges and the noise verdict, on
synthetic sequences; block plans; the interleaving order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jupyter_brrr.actions import timing
from jupyter_brrr.actions.timing import Stats, plan, rotation, speedup, stats


def stats_of(values: list[float]) -> Stats:
    """``stats`` of values with a finite one among them (asserted: not None)."""
    found = stats(values)
    assert found is not None
    return found


def test_stats_median_and_quartiles() -> None:
    s = stats_of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert s == Stats(median=3.0, q1=2.0, q3=4.0, n=5, min=1.0, max=5.0)
    assert s.iqr == 2.0
    assert stats([]) is None
    assert stats_of([float("nan"), 2.0]).median == 2.0  # non-finite values are dropped


def test_clearly_faster_is_faster_with_a_range() -> None:
    base = stats_of([10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3])
    fast = stats_of([5.0, 5.1, 4.9, 5.0, 5.05, 4.95, 5.1])
    sp = speedup(base, fast)
    assert sp.verdict == "faster"
    assert sp.value == pytest.approx(2.0)
    assert sp.low < sp.value < sp.high
    assert sp.low == pytest.approx(base.q1 / fast.q3)
    assert sp.high == pytest.approx(base.q3 / fast.q1)


def test_slower() -> None:
    sp = speedup(stats_of([1.0, 1.01, 0.99, 1.0]), stats_of([1.5, 1.52, 1.49, 1.5]))
    assert sp.verdict == "slower" and sp.value < 1


def test_overlapping_spreads_are_noise() -> None:
    # Medians 5% apart, but the runs spread over 20%: the range holds 1x.
    base = stats_of([1.00, 0.90, 1.10, 0.95, 1.05, 1.02, 0.98])
    other = stats_of([0.95, 0.86, 1.04, 0.90, 1.00, 0.97, 0.93])
    sp = speedup(base, other)
    assert sp.low <= 1.0 <= sp.high
    assert sp.verdict == "noise"


def test_tiny_difference_is_noise_even_when_tight() -> None:
    base = stats_of([1.000, 1.0001, 0.9999, 1.0])
    other = stats_of([0.990, 0.9901, 0.9899, 0.99])  # 1% faster, perfectly tight
    assert speedup(base, other).verdict == "noise"
    assert speedup(base, other, min_effect=0.005).verdict == "faster"


def test_plan_gives_equal_block_times() -> None:
    p = plan({"eager": 1e-3, "graph": 1e-4}, budget_s=2.0)
    assert p.blocks["graph"] == 10 * p.blocks["eager"]
    block_s = 2.0 / timing.TARGET_ROUNDS
    assert p.blocks["eager"] * 1e-3 == pytest.approx(block_s, rel=0.05)
    assert p.rounds == pytest.approx(timing.TARGET_ROUNDS, abs=2)
    assert p.calls()["graph"] == p.blocks["graph"] * p.rounds


def test_plan_for_slow_code_keeps_a_minimum_of_rounds() -> None:
    p = plan({"eager": 3.0}, budget_s=2.0)
    assert p.blocks == {"eager": 1}
    assert p.rounds == timing.MIN_ROUNDS
    assert plan({"eager": 1e-3}, budget_s=1.0, rounds=7).rounds == 7
    with pytest.raises(ValueError):
        plan({"eager": 1.0}, budget_s=0)


def test_plan_blocks_are_at_least_a_millisecond() -> None:
    p = plan({"eager": 1e-6}, budget_s=0.01)
    assert p.blocks["eager"] * 1e-6 >= timing.MIN_BLOCK_S * 0.99


def test_rotation_changes_who_goes_first() -> None:
    names = ["eager", "compile", "graph"]
    firsts = [rotation(names, r)[0] for r in range(3)]
    assert sorted(firsts) == sorted(names)
    assert all(sorted(rotation(names, r)) == sorted(names) for r in range(5))
    assert rotation([], 3) == []


def test_host_timer_blocks() -> None:
    timer = timing.Timer(gpu=False)
    calls: list[int] = []
    per_call = timer.block(lambda: calls.append(1), 10)
    assert len(calls) == 10 and per_call >= 0
    elapsed, value = timer.once(lambda: 42)
    assert value == 42 and elapsed >= 0 and math.isfinite(elapsed)


def test_long_budgets_make_more_rounds_not_longer_blocks() -> None:
    # Cancel waits for the block in progress: blocks stay short whatever the budget.
    p = plan({"eager": 1e-4}, budget_s=120.0)
    assert p.blocks["eager"] * 1e-4 <= timing.MAX_BLOCK_S * 1.01
    assert p.rounds * p.blocks["eager"] * 1e-4 == pytest.approx(120.0, rel=0.05)


def test_paired_ratios_cancel_a_level_shift_between_rounds() -> None:
    # The host moved from one speed level to another half-way (the H200's launch-bound drift):
    # both variants slowed together. Medians timed apart mix the levels; the ratios do not.
    eager = {0: 1.0, 1: 1.01, 2: 0.99, 3: 1.6, 4: 1.61, 5: 1.59}
    graph = {r: t / 2.0 for r, t in eager.items()}
    paired = timing.paired_speedup(eager, graph)
    assert paired is not None
    assert paired.value == pytest.approx(2.0) and paired.verdict == "faster"
    assert paired.low == pytest.approx(2.0) and paired.high == pytest.approx(2.0)
    assert paired.rounds == 6
    unpaired = speedup(stats_of(list(eager.values())), stats_of(list(graph.values())))
    assert unpaired.high / unpaired.low > 2.0  # the level shift, counted as spread


def test_paired_ratios_use_common_rounds_only() -> None:
    eager = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}
    other = {1: 1.0, 3: 1.001}  # failed after round 3, missed rounds 0 and 2
    paired = timing.paired_speedup(eager, other)
    assert paired is not None
    assert paired.rounds == 2 and paired.verdict == "noise"
    assert timing.paired_speedup(eager, {}) is None


def test_caps_bound_the_calls_of_every_plan() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        per_call = {name: float(10 ** rng.uniform(-6, 0.5)) for name in ("eager", "a", "b")}
        budget = float(10 ** rng.uniform(-2, 1.5))
        hint = float(10 ** rng.uniform(-6, 0.5))
        fixed_rounds = int(rng.integers(1, 40)) if rng.random() < 0.3 else None
        cap = timing.max_timed_calls(hint, budget, fixed_rounds)
        p = plan(per_call, budget, rounds=fixed_rounds, max_calls=dict.fromkeys(per_call, cap))
        assert all(calls <= cap for calls in p.calls().values()), (per_call, budget, hint)
        assert all(block >= 1 for block in p.blocks.values())
        if fixed_rounds is not None:
            assert p.rounds == fixed_rounds  # a cap never takes rounds the caller fixed


def test_a_cap_shortens_the_blocks_of_a_fast_variant_only() -> None:
    free = plan({"eager": 1e-3, "graph": 1e-5}, budget_s=1.0)
    capped = plan({"eager": 1e-3, "graph": 1e-5}, budget_s=1.0, max_calls={"graph": 5_000})
    assert capped.rounds == free.rounds and capped.blocks["eager"] == free.blocks["eager"]
    assert capped.calls()["graph"] <= 5_000 < free.calls()["graph"]
