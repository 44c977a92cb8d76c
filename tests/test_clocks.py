"""SM clock readings: when a clock has settled, and what a machine without NVML readings says."""

from __future__ import annotations

import pytest
import torch

from jupyter_brrr.analysis import spread
from jupyter_brrr.capture import clocks
from jupyter_brrr.capture.clocks import GpuSensors, settled


def falling_then_flat(until: float, step: float = 0.02) -> list[tuple[float, float]]:
    """Readings every ``step`` s: 1980 MHz, falling from 0.2 s to 1750 MHz at 0.5 s, then flat."""
    out: list[tuple[float, float]] = []
    t = 0.0
    while t <= until + 1e-9:
        mhz = 1980.0 if t < 0.2 else max(1750.0, 1980.0 - (t - 0.2) * 230.0 / 0.3)
        out.append((round(t, 6), mhz))
        t += step
    return out


def test_a_falling_clock_is_not_settled_until_it_has_been_flat_for_a_window() -> None:
    assert not settled(falling_then_flat(0.4), 0.1, 0.01)
    assert not settled(falling_then_flat(0.55), 0.1, 0.01)  # flat for only 0.05 s
    assert settled(falling_then_flat(0.75), 0.1, 0.01)


def test_a_low_idle_reading_before_the_work_does_not_count() -> None:
    # The clock read before the first run may be an idle one: far below the boost clock.
    samples = [(0.0, 345.0), *falling_then_flat(0.4)[1:]]
    assert not settled(samples, 0.1, 0.01)


def test_slow_runs_compare_with_the_last_reading_before_the_window() -> None:
    assert settled([(0.0, 1980.0), (1.5, 1975.0)], 0.3, 0.01)
    assert not settled([(0.0, 1980.0), (1.5, 1750.0)], 0.3, 0.01)
    assert not settled([(0.0, 1980.0), (0.05, 1750.0)], 0.3, 0.01)  # too soon to tell


def test_without_readings_there_is_nothing_to_wait_for() -> None:
    assert settled([], 0.3, 0.01)
    assert settled([(0.0, 1980.0)], 0.3, 0.01)


def test_sensors_say_why_there_are_no_readings() -> None:
    sensors = GpuSensors()
    if torch.cuda.is_available() and sensors.available:
        clock, power = sensors.sm_clock_mhz(), sensors.power_w()
        assert clock is not None and clock > 0 and power is not None and power > 0
    elif torch.cuda.is_available():  # no nvidia-ml-py, or the driver refused: said, not raised
        assert str(sensors.unavailable).startswith("no SM clock or power readings")
        assert sensors.sm_clock_mhz() is None
    else:
        assert sensors.unavailable == "no GPU"
        assert sensors.sm_clock_mhz() is None and sensors.power_w() is None


def test_the_host_loop_is_timed_and_its_fastest_reading_kept() -> None:
    readings = [clocks.host_loop_s() for _ in range(5)]
    assert all(0 < r < 0.1 for r in readings)
    fastest = clocks.fastest_host_loop_s()
    assert fastest is not None and fastest <= min(readings)
    assert spread.host_slowdown([2e-4, 3e-4, None, 4e-4], 2e-4) == pytest.approx(1.5)
    assert spread.host_slowdown([], 2e-4) is None and spread.host_slowdown([2e-4], None) is None


def test_steady_rounds_keep_the_rounds_at_the_hosts_best_speed() -> None:
    # Readings before each round and after the last: a round is as slow as either side of it.
    readings = [91e-6, 95e-6, 100e-6, 170e-6, 180e-6, 150e-6, 93e-6, 92e-6]
    assert spread.round_hosts(readings) == [95e-6, 100e-6, 170e-6, 180e-6, 180e-6, 150e-6, 93e-6]
    assert spread.steady_rounds(readings, minimum=2) == {0, 1, 6}
    assert spread.steady_rounds(readings, minimum=4) is None  # too few at the best: keep all
    assert spread.steady_rounds([91e-6, 95e-6, 100e-6], minimum=2) is None  # one level
    assert spread.steady_rounds([], minimum=2) is None
