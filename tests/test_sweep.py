"""The size sweep (jupyter_brrr/actions/sweep.py), run for real on the CPU: torch steps, steps
whose time is known (they advance the fake host clock of tests/conftest.py, so no budget or
timed run depends on how loaded the machine is), the CPU allocator's refusal as the
out-of-memory stop."""

from __future__ import annotations

import json
import threading

import pytest
import torch

import jupyter_brrr
from jupyter_brrr.actions import sweep as sweeps


def test_parse_sizes_reads_lists_and_doublings() -> None:
    assert sweeps.parse_sizes("batch=8,16,32") == ("batch", [8, 16, 32])
    assert sweeps.parse_sizes("n=8..512") == ("n", [8, 16, 32, 64, 128, 256, 512])
    assert sweeps.parse_sizes(" seq = 3..20") == ("seq", [3, 6, 12])


@pytest.mark.parametrize(
    "text, words",
    [
        ("batch", "NAME=SIZES"),
        ("1x=8,16", "NAME=SIZES"),
        ("batch=8,x", "whole numbers"),
        ("batch=0..8", "whole numbers"),
        ("batch=8", "at least two"),
        ("batch=16,8", "must grow"),
    ],
)
def test_bad_sizes_get_a_clear_error(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        sweeps.parse_sizes(text)


def test_a_doubling_s_ratio_is_normalised_to_a_doubling() -> None:
    assert sweeps.per_doubling(4.0, 4.0) == pytest.approx(2.0)
    assert sweeps.per_doubling(2.0, 2.0) == pytest.approx(2.0)
    assert sweeps.per_doubling(1.0, 8.0) == pytest.approx(1.0)


def test_the_verdict_follows_the_ratio_and_the_split() -> None:
    assert sweeps.verdict(1.05, {}, gpu=True)[0] == "overhead"
    idle = {"span_s": 1.0, "busy_s": 0.2, "compute_s": 0.1, "memory_s": 0.1}
    assert sweeps.verdict(1.05, idle, gpu=True)[0] == "overhead"
    # Twice the time, the GPU idle most of it: the launches doubled, still overhead.
    launches = {"span_s": 1.0, "busy_s": 0.1, "compute_s": 0.0, "memory_s": 0.1, "launches": 40}
    kind, why = sweeps.verdict(1.9, launches, gpu=True, before={"launches": 20})
    assert kind == "overhead" and "20 -> 40 kernel launches" in why
    weights = {"span_s": 1.0, "busy_s": 0.9, "compute_s": 0.1, "memory_s": 0.8}
    kind, why = sweeps.verdict(1.05, weights, gpu=True)
    assert kind == "fixed" and "memory-bound" in why
    assert sweeps.verdict(1.5, {}, gpu=True)[0] == "transition"
    compute = {"compute_s": 3.0, "memory_s": 1.0, "busy_s": 4.0}
    memory = {"compute_s": 1.0, "memory_s": 3.0, "busy_s": 4.0}
    assert sweeps.verdict(1.95, compute, gpu=True)[0] == "compute"
    assert sweeps.verdict(1.95, memory, gpu=True)[0] == "memory"
    assert sweeps.verdict(1.95, compute, gpu=False)[0] == "saturated"
    assert sweeps.verdict(3.0, compute, gpu=True)[0] == "superlinear"


def test_largest_size_solves_the_fit() -> None:
    assert sweeps.largest_size([10.0, 100.0], 1100.0) == 100
    assert sweeps.largest_size([1.0, 0.0, 0.0], 100.0) == 10  # quadratic: s**2 <= 100
    assert sweeps.largest_size([10.0, 2000.0], 1000.0) == 0  # the fixed part alone does not fit
    assert sweeps.largest_size([0.0, 100.0], 1000.0) is None  # no growth: no limit


def test_fixed_time_is_overhead_and_time_per_item_is_saturated(fake_clock) -> None:
    # Steps of known length: a fixed 20 ms per step, then 3 ms per item.
    fixed = jupyter_brrr.sweep(lambda n: fake_clock.sleep(0.02), [1, 2, 4], warmup=0, repeat=3)
    assert list(fixed.table["span_s"]) == pytest.approx([0.02, 0.02, 0.02])
    assert set(fixed.doublings["verdict"]) == {"overhead"}
    per_item = jupyter_brrr.sweep(
        lambda n: fake_clock.sleep(0.003 * n), [4, 8, 16], warmup=0, repeat=3
    )
    assert list(per_item.doublings["per_doubling"]) == pytest.approx([2.0, 2.0])
    assert set(per_item.doublings["verdict"]) == {"saturated"}
    # Throughput still doubles at the largest size: the knee lies beyond the sizes measured.
    assert fixed.best == 4 and fixed.knee is None


def test_a_torch_step_keeps_a_report_per_size_and_a_tidy_table(fake_clock) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))

    def step(batch: int) -> torch.Tensor:
        fake_clock.sleep(1e-3 * batch)  # by the host clock: all in the budget, however loaded
        return model(torch.randn(batch, 32))

    result = jupyter_brrr.sweep(step, [8, 16, 32], warmup=1, repeat=3, variable="batch")
    table = result.table
    assert list(table.index) == [8, 16, 32]
    assert set(table["status"]) == {"ok"}
    assert (table["items"] == [8.0, 16.0, 32.0]).all()
    assert (table["items_per_s"] == table["items"] / table["span_s"]).all()
    assert table["peak_memory_bytes"].isna().all()  # the CPU: not measured, and said so
    assert any("memory is not measured" in note for note in result.notes)
    assert result.runs_total == 3 * (1 + 3 + 1) + 3 * 3 * 3  # then 3 interleaved rounds of 3
    assert set(result.reports) == {8, 16, 32}
    mm = result.reports[32].ops
    assert mm["name"].str.contains("addmm").any()  # each point's own report, profiled
    assert len(result.doublings) == 2
    assert result.knee in (8, 16, 32) and result.best in (8, 16, 32)
    doc = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert doc["schema"] == "jupyter_brrr.sweep" and doc["variable"] == "batch"
    assert doc["points"]["columns"] == list(sweeps.POINT_COLUMNS)
    assert "Sweep of batch on CPU" in repr(result)


def test_items_count_what_a_step_processes() -> None:
    result = jupyter_brrr.sweep(
        lambda n: torch.ones(n).sum(), [2, 4], warmup=0, repeat=2, items=lambda n: 10 * n
    )
    assert list(result.table["items"]) == [20.0, 40.0]


def test_the_sweep_stops_cleanly_where_memory_runs_out() -> None:
    # The CPU allocator refuses a petabyte: the sweep records it as its out-of-memory stop.
    def step(n: int) -> torch.Tensor:
        return torch.empty(n, dtype=torch.uint8)

    result = jupyter_brrr.sweep(step, [1024, 2048, 2**50, 2**51], warmup=0, repeat=2)
    assert result.stopped == "oom" and result.oom_at == 2**50, (result.table, result.notes)
    assert list(result.table["status"]) == ["ok", "ok", "oom"], (result.table, result.notes)
    assert "OOM at size=1125899906842624" in repr(result)
    assert torch.ones(3).sum().item() == 3.0  # still usable


def test_the_time_budget_stops_before_a_point_that_would_pass_it(fake_clock) -> None:
    # 3 runs per size (2 timed, 1 profiled) of 10 ms per item: 0.12 s at 4, then 0.24 s at 8;
    # 16 would take about 0.48 s more, past the 0.5 s budget.
    result = jupyter_brrr.sweep(
        lambda n: fake_clock.sleep(0.01 * n), [4, 8, 16, 32], warmup=0, repeat=2, budget_s=0.5
    )
    assert result.stopped == "budget"
    assert [p.size for p in result.points] == [4, 8]
    assert any("Stopped before size=16" in n and "took 0.24 s" in n for n in result.notes), (
        result.notes
    )


def test_cancel_stops_between_points() -> None:
    cancel = threading.Event()
    seen = []

    def progress(step: sweeps.SweepProgress) -> None:
        seen.append(step.size)
        if step.k == 2:
            cancel.set()

    result = jupyter_brrr.sweep(
        lambda n: torch.ones(n), [1, 2, 4], warmup=0, repeat=1, cancel=cancel, progress=progress
    )
    assert seen == [1, 2]
    assert result.stopped == "cancelled" and list(result.table.index) == [1, 2]


def test_an_error_at_the_first_size_is_raised_and_a_later_one_recorded() -> None:
    with pytest.raises(ZeroDivisionError) as raised:
        jupyter_brrr.sweep(lambda n: 1 / 0, [1, 2], warmup=0, repeat=1)
    assert "failed at the first size, size=1" in raised.value.__notes__[-1]  # pyright: ignore[reportAttributeAccessIssue]  # set on 3.10 too

    def step(n: int) -> torch.Tensor:
        if n > 2:
            raise ValueError("too big for this step")
        return torch.ones(n)

    result = jupyter_brrr.sweep(step, [1, 2, 4, 8], warmup=0, repeat=1)
    assert result.stopped == "error"
    assert list(result.table["status"]) == ["ok", "ok", "error"]
    assert "too big" in result.table["error"].iloc[-1]


def test_reset_puts_state_back_before_each_point() -> None:
    log: list[int] = []
    resets = []

    def reset() -> None:
        resets.append(len(log))
        log.clear()

    jupyter_brrr.sweep(lambda n: log.append(n), [1, 2], warmup=1, repeat=2, reset=reset, rounds=0)
    # Each point starts from an empty log (4 runs per point were appended before each reset).
    assert resets == [0, 4, 4] and log == []


def test_bad_arguments_are_refused_before_running() -> None:
    ran = []
    with pytest.raises(ValueError, match="budget_s"):
        jupyter_brrr.sweep(ran.append, [1, 2], budget_s=0)
    with pytest.raises(ValueError, match="must grow"):
        jupyter_brrr.sweep(ran.append, [2, 1])
    assert ran == []


def test_interleaved_rounds_cancel_a_drift_between_sizes(fake_clock) -> None:
    # The machine gets twice slower after the first size's capture (4 calls): measured size by
    # size, doubling the size looks like 4x the time; timed again in interleaved rounds, 2x.
    calls = []

    def step(n: int) -> None:
        calls.append(n)
        fake_clock.sleep(0.01 * n * (1 if len(calls) <= 4 else 2))

    drifted = jupyter_brrr.sweep(step, [1, 2], warmup=0, repeat=3, rounds=0)
    assert drifted.doublings["per_doubling"].iloc[0] == pytest.approx(4.0)
    calls.clear()
    fair = jupyter_brrr.sweep(step, [1, 2], warmup=0, repeat=3, rounds=2)
    assert fair.doublings["per_doubling"].iloc[0] == pytest.approx(2.0), (
        fair.table[["span_s", "q1_s", "q3_s"]],
        fair.notes,
        calls,
    )
    assert any("interleaved rounds" in note for note in fair.notes)
    table = fair.table
    assert (table["q1_s"] <= table["span_s"]).all() and (table["span_s"] <= table["q3_s"]).all()


def test_cancel_during_the_interleaved_rounds_keeps_the_sizes_measured() -> None:
    cancel = threading.Event()
    calls = []

    def step(n: int) -> None:
        calls.append(n)
        if len(calls) == 8:  # both sizes captured (3 runs each), in the first round
            cancel.set()

    result = jupyter_brrr.sweep(step, [1, 2], warmup=0, repeat=2, rounds=3, cancel=cancel)
    assert result.stopped == "cancelled"
    assert list(result.table["status"]) == ["ok", "ok"]
    assert len(calls) < 6 + 3 * 2 * 2


def test_the_rounds_at_the_hosts_best_speed_give_the_times(monkeypatch, fake_clock) -> None:
    """The host slows down for the last four of seven rounds (its readings replayed as on the
    H200 machine: 90 us, then 170 us; the step takes 3x as long meanwhile, as launch-bound work
    did there): most runs are slow, yet the times are those of the rounds at the host's best,
    and the note says so."""
    from jupyter_brrr.actions import sweep as sweep_module

    readings = iter([90e-6, 90e-6, 90e-6, 170e-6, 170e-6, 170e-6, 170e-6, 90e-6])  # before each
    slow = {"now": False}

    def host_loop_s() -> float:
        value = next(readings)
        slow["now"] = value > 100e-6  # the rounds after a slow reading are slow
        return value

    def step(n: int) -> None:
        fake_clock.sleep(0.01 * n * (3 if slow["now"] else 1))

    monkeypatch.setattr(sweep_module, "host_loop_s", host_loop_s)
    result = jupyter_brrr.sweep(step, [1, 2], warmup=0, repeat=2, rounds=7)
    spans = result.table["span_s"].tolist()
    assert spans == pytest.approx([0.01, 0.02])
    note = next(n for n in result.notes if "host CPU's own speed changed" in n)
    assert "the 2 of 7 rounds at its best speed" in note


def test_the_static_sweep_pictures_split_bars_add_up_to_100_percent() -> None:
    """A saved sweep whose profiled steps' parts add up to 1.1-4.6x the timed median span: the
    static picture's split bars are shares of each profiled step, at most 100% each."""
    import json
    from pathlib import Path

    from jupyter_brrr.views.sweep_memory import rows, split_shares, sweep_png

    doc = json.loads((Path(__file__).parent / "data" / "reports" / "sweep.json").read_text())
    points = [p for p in rows(doc["sweep"]["points"]) if p.get("status") == "ok"]
    stacks = [sum(bar) for bar in zip(*split_shares(points).values(), strict=True)]
    assert stacks and all(abs(total - 1.0) < 1e-9 for total in stacks), stacks
    assert sweep_png(doc["sweep"]).startswith(b"\x89PNG")  # pyright: ignore[reportOptionalMemberAccess]
