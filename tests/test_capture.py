"""The capture protocol on a CPU: what the profiled run may still hold of the earlier runs, the
timing summary every report carries, and the sustained warm-up's stopping rules (with a clock
made to fall and settle, since only a GPU has one)."""

from __future__ import annotations

import weakref

import pytest
import torch

import jupyter_brrr
from jupyter_brrr.capture import run as capture_module
from jupyter_brrr.capture.run import capture, protocol_of


def test_no_earlier_runs_value_is_held_while_a_run_runs() -> None:
    outputs: list[weakref.ref] = []
    held_at_start: list[int] = []

    def step() -> torch.Tensor:
        held_at_start.append(sum(ref() is not None for ref in outputs))
        out = torch.ones(4096) * 2
        outputs.append(weakref.ref(out))
        return out

    result = capture(step, warmup=1, repeat=3)
    assert result.error is None
    assert held_at_start == [0, 0, 0, 0, 0]  # warm-up, 3 timed, profiled
    assert outputs[-1]() is result.value  # the profiled run's value is the one returned


class Probe:
    """An object an autograd graph holds: alive exactly as long as that graph."""


class HoldsProbe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, probe: Probe) -> torch.Tensor:
        ctx.probe = probe  # the graph node keeps it, as it keeps saved activations
        return x * 2

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad * 2, None


def test_an_earlier_outputs_autograd_graph_is_gone_before_the_profiled_run() -> None:
    x = torch.randn(4096, requires_grad=True)
    graphs: list[weakref.ref] = []
    held_at_start: list[int] = []

    def step() -> torch.Tensor:
        held_at_start.append(sum(ref() is not None for ref in graphs))
        probe = Probe()
        graphs.append(weakref.ref(probe))
        return HoldsProbe.apply(x.exp(), probe)

    result = capture(step, warmup=2, repeat=2)
    assert result.value.grad_fn is not None
    assert graphs[-1]() is not None  # the returned output holds its own graph
    assert held_at_start == [0, 0, 0, 0, 0]


def test_a_cells_bindings_are_set_back_before_the_profiled_run() -> None:
    namespace = {"n": 0, "kept": [], "model": object()}
    model = namespace["model"]
    seen: list[tuple] = []

    def cell() -> None:
        seen.append((namespace["n"], "made" in namespace))
        namespace["n"] = namespace["n"] + 1
        namespace["made"] = torch.ones(8)
        namespace["kept"].append(1)

    capture(cell, warmup=1, repeat=2, namespace=namespace)
    # The profiled (last) run starts where a plain run of the cell would.
    assert seen == [(0, False), (1, True), (2, True), (0, False)]
    assert namespace["n"] == 1 and "made" in namespace
    assert namespace["model"] is model
    assert namespace["kept"] == [1, 1, 1, 1]  # a mutation in place cannot be undone


def test_one_run_leaves_the_namespace_alone() -> None:
    namespace = {"n": 0}

    def cell() -> None:
        namespace["n"] += 1

    capture(cell, namespace=namespace)
    assert namespace == {"n": 1}


def test_every_steady_report_carries_its_timed_runs_spread() -> None:
    report = jupyter_brrr.profile(lambda a: a @ a, torch.randn(64, 64), warmup=1, repeat=4)
    timing = report.summary["timing"]
    assert timing is not None
    assert timing["protocol"] == "burst"  # on a CPU the warm-up is the runs asked for
    assert timing["warmup_runs"] == 1 and timing["timed_runs"] == 4
    spans = report.summary["run_spans_s"]
    assert spans is not None
    assert timing["min_s"] == min(spans) and timing["max_s"] == max(spans)
    assert timing["min_s"] <= timing["q1_s"] <= timing["median_s"] <= timing["q3_s"]
    assert timing["median_s"] == report.summary["span_s"]
    assert timing["sm_clock_mhz"] == [] and timing["sensors"] == "no GPU"
    assert isinstance(timing["findings"], list)
    assert any("on the CPU the warm-up is the runs asked for" in n for n in report.notes)
    for key in ("memory_before_bytes", "memory_increase_bytes", "memory_after_bytes"):
        assert report.summary[key] is None  # no CUDA allocator: nothing, rather than 0
    again = jupyter_brrr.Report.from_json(report.to_json())
    assert again.summary["timing"] == timing


def test_a_host_slower_than_its_best_is_said_in_the_report(monkeypatch) -> None:
    from jupyter_brrr.capture import clocks
    from jupyter_brrr.views.format import timed_runs

    # The host's own speed read as the same 100 us after every timed run, and as its best.
    monkeypatch.setattr(capture_module, "host_loop_s", lambda: 100e-6)
    monkeypatch.setattr(clocks, "_fastest_host_loop_s", 100e-6)
    report = jupyter_brrr.profile(lambda a: a @ a, torch.randn(64, 64), warmup=1, repeat=4)
    timing = report.summary["timing"]
    assert timing is not None
    assert timing["host_loop_s"] == [100e-6] * 4 and timing["host_slowdown"] == pytest.approx(1.0)
    assert "host_slow" not in [f["kind"] for f in timing["findings"]]
    assert not any("The host CPU ran" in n for n in report.notes)
    # The host's best as read earlier in this process, ten times faster than now: every timed
    # run of the next report ran at a slower host level.
    monkeypatch.setattr(clocks, "_fastest_host_loop_s", 10e-6)
    slow = jupyter_brrr.profile(lambda a: a @ a, torch.randn(64, 64), warmup=1, repeat=4)
    timing = slow.summary["timing"]
    assert timing is not None
    assert timing["host_slowdown"] == pytest.approx(10.0)
    assert [f["kind"] for f in timing["findings"]].count("host_slow") == 1
    assert any("The host CPU ran" in n and "slower during the timed runs" in n for n in slow.notes)
    line = timed_runs(slow.summary) or ""
    assert "slower than its best" in line and "host_slow" not in line


def test_one_profiled_run_says_so() -> None:
    report = jupyter_brrr.profile(lambda a: a + 1, torch.ones(4))
    timing = report.summary["timing"]
    assert timing is not None
    assert timing["protocol"] == "single" and timing["timed_runs"] == 0
    assert timing["median_s"] is None and timing["findings"] == []


def test_protocols() -> None:
    assert protocol_of(warmup=0, repeat=1, gpu=True, burst=False) == "single"
    assert protocol_of(warmup=1, repeat=5, gpu=True, burst=False) == "sustained"
    assert protocol_of(warmup=0, repeat=5, gpu=True, burst=True) == "burst"
    assert protocol_of(warmup=1, repeat=5, gpu=False, burst=False) == "burst"
    with pytest.raises(ValueError, match="burst"):
        capture(lambda: None, burst=True)


# --- the sustained warm-up, with a clock made to fall and settle --------------------------------
# Each run advances the fake host clock (tests/conftest.py) by a known time and the SM clock
# follows that host clock, so the warm-up's stops are exact on any machine.


class FakeSensors:
    """An SM clock that follows ``clock_at(seconds since made)`` by the fake host clock."""

    available = True
    unavailable = None

    def __init__(self, host, clock_at) -> None:
        self.host = host
        self.start = host.now()
        self.clock_at = clock_at

    def sm_clock_mhz(self) -> float:
        return self.clock_at(self.host.now() - self.start)

    def power_w(self) -> float:
        return 700.0


@pytest.fixture
def quick_warmup(monkeypatch: pytest.MonkeyPatch, fake_clock):
    """The warm-up's constants scaled down twenty-fold, on the fake host clock."""
    monkeypatch.setattr(capture_module, "WARMUP_S", 0.05)
    monkeypatch.setattr(capture_module, "WARMUP_CAP_S", 0.5)
    monkeypatch.setattr(capture_module, "CLOCK_SETTLE_S", 0.05)
    monkeypatch.setattr(capture_module, "CLOCK_SAMPLE_S", 0.005)
    return fake_clock


def warm_up(fn, sensors, at_least: int = 0, sustained: bool = True):
    runs = {"warmup": 0}
    warm = capture_module._warm_up(fn, at_least, sustained, False, sensors, runs)
    assert runs["warmup"] == warm.runs
    return warm


def test_sustained_warm_up_waits_for_the_clock_to_settle(quick_warmup) -> None:
    def clock(t: float) -> float:  # boost, then a fall from 0.02 s to 0.2 s, then flat
        return 1980.0 if t < 0.02 else max(1750.0, 1980.0 - (t - 0.02) * 230.0 / 0.18)

    host = quick_warmup
    warm = warm_up(lambda: host.sleep(0.002), FakeSensors(host, clock))
    assert warm.ended == "settled"
    # Past the fall (within 1% of its floor) and the 50 ms it must then hold: not at the cap.
    assert 0.2 <= warm.seconds <= 0.25
    assert warm.clock_start_mhz == 1980.0 and warm.clock_end_mhz == 1750.0


def test_a_clock_that_keeps_falling_stops_at_the_cap(quick_warmup) -> None:
    host = quick_warmup
    warm = warm_up(lambda: host.sleep(0.002), FakeSensors(host, lambda t: 1980.0 - 400.0 * t))
    assert warm.ended == "cap"
    # No run started that would end past the cap by the last run's time (2 ms).
    assert 0.5 - 0.002 - 1e-9 <= warm.seconds <= 0.5 + 1e-9


def test_a_slow_cell_warms_up_once(quick_warmup) -> None:
    # One run takes 0.3 s: a second would end past the 0.5 s cap.
    host = quick_warmup
    warm = warm_up(lambda: host.sleep(0.3), FakeSensors(host, lambda t: 1980.0 - 400.0 * t))
    assert warm.runs == 1 and warm.ended == "cap"


def test_without_a_clock_the_warm_up_is_time_based(quick_warmup) -> None:
    host = quick_warmup
    warm = warm_up(lambda: host.sleep(0.002), None)
    assert warm.ended == "time" and 0.05 - 1e-9 <= warm.seconds <= 0.052 + 1e-9
    assert warm.runs in (25, 26)  # 50 ms of 2 ms runs


def test_the_runs_asked_for_come_first_and_burst_stops_there(quick_warmup) -> None:
    calls = []
    warm = warm_up(lambda: calls.append(1), None, at_least=3, sustained=False)
    assert warm.runs == 3 == len(calls) and warm.ended == "runs"
    calls.clear()
    host = quick_warmup
    warm = warm_up(lambda: host.sleep(0.03), None, at_least=4)  # 0.12 s: past the time
    assert warm.runs == 4 and warm.ended == "time"


def test_tiny_cells_stop_at_the_run_cap(quick_warmup, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture_module, "WARMUP_MAX_RUNS", 7)
    monkeypatch.setattr(capture_module, "WARMUP_S", 10.0)
    warm = warm_up(lambda: None, None)
    assert warm.runs == 7 and warm.ended == "max runs"


def test_the_protocol_note_says_what_the_profiled_run_took_and_quotes_real_quartiles() -> None:
    from jupyter_brrr.capture.run import _protocol_note

    timing = {
        "clock": "cuda_events",
        "protocol": "sustained",
        "warmup_runs": 20,
        "warmup_s": 0.5,
        "warmup_sm_clock_mhz": [None, None],
        "warmup_ended": "settled",
        "timed_runs": 3,
        "min_s": 300e-6,
        "q1_s": 350e-6,
        "median_s": 400e-6,
        "q3_s": 6.2e-3,
        "max_s": 12e-3,
        "sm_clock_mhz": [],
        "power_w": [],
        "sensors": None,
    }
    # Three runs: the extremes, not interpolated quartiles called the IQR; a profiled run faster
    # than the median is not called inflated.
    note = _protocol_note(timing, "magic", 168e-6, 400e-6)
    assert "min 300 µs, max 12 ms" in note and "IQR" not in note
    assert "(0.42x), faster than the median timed run" in note and "inflated" not in note
    note = _protocol_note({**timing, "timed_runs": 5}, "magic", 800e-6, 400e-6)
    assert "min 300 µs, IQR 350 µs - 6.2 ms" in note
    assert "(2.00x): that much the profiler inflated it" in note
