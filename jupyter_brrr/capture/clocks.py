"""The GPU's SM clock and power draw, and the host CPU's own speed, read while the code runs.

Both come from the driver's management library through torch: ``torch.cuda.clock_rate`` (MHz)
and ``torch.cuda.power_draw`` (mW), which need the ``nvidia-ml-py`` package on NVIDIA GPUs
(``amdsmi`` on ROCm). Each is the driver's figure "over the past sample period", between 1/6 s
and 1 s depending on the GPU: a reading taken after a run describes the last fraction of a
second, which is what a clock that changes over hundreds of milliseconds needs.

Without the package, without a GPU, or where the driver refuses, ``GpuSensors.unavailable``
says why and every reading is None: nothing here may fail the user's code.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

# The host CPU's speed moves in levels on shared machines: on the H200 machine a fixed
# pure-Python loop, 200 torch CPU dispatches and a launch-bound GPU model all ran 1.5-1.8x
# slower together for 1-2 s at a time, pinned to one CPU or not (bench/RESULTS.md, host drift).
# Launch-bound time follows it, so a time measured then is only comparable with one measured
# at the same host speed. HOST_LOOP is that fixed loop; the fastest of a few repeats is the
# reading (an interrupt inflates one repeat; a slow level inflates them all).
HOST_LOOP_ITERATIONS = 2000
HOST_LOOP_REPEATS = 3
_fastest_host_loop_s: float | None = None


def now() -> float:
    """The host clock, in seconds from an arbitrary start: what the budgets, deadlines and
    warm-up of jupyter_brrr read, and the span of a run timed on the host. Read through this
    module (``clocks.now()``), never imported by name, so that a test can put a fake clock in
    its place (the fake_clock fixture of the tests, after pyinstrument's fake_time_util)."""
    return time.perf_counter()


class GpuSensors:
    """Reads the current device's SM clock (MHz) and power draw (W), or says why it cannot."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self._torch: Any = None
        try:
            import torch

            if not torch.cuda.is_available():
                self.unavailable = "no GPU"
                return
            self._torch = torch
            torch.cuda.clock_rate()  # one read now: a missing package or driver shows here
        except ModuleNotFoundError:
            self.unavailable = (
                "no SM clock or power readings: install nvidia-ml-py (pip install nvidia-ml-py), "
                "which torch.cuda.clock_rate() and power_draw() use"
            )
        except Exception as error:  # the driver's library refused: say so, never fail
            self.unavailable = (
                f"no SM clock or power readings ({type(error).__name__}: {str(error)[:120]})"
            )

    @property
    def available(self) -> bool:
        return self.unavailable is None

    def sm_clock_mhz(self) -> float | None:
        if self.unavailable is not None:
            return None
        with contextlib.suppress(Exception):
            return float(self._torch.cuda.clock_rate())
        return None

    def power_w(self) -> float | None:
        if self.unavailable is not None:
            return None
        with contextlib.suppress(Exception):
            return float(self._torch.cuda.power_draw()) / 1e3
        return None


def settled(samples: list[tuple[float, float]], window_s: float, tolerance: float) -> bool:
    """Whether an SM clock read at ``(seconds, MHz)`` ``samples`` has stopped falling: the lowest
    reading of the last ``window_s`` is no more than ``tolerance`` below the lowest of the
    window before it (or, where that window holds no reading, of the last reading before it).
    Readings from before the last two windows do not count: an idle clock read before the
    work began must not make a falling clock look settled. True without two readings to
    compare (no clock to wait for)."""
    if len(samples) < 2:
        return True
    end = samples[-1][0]
    recent = [mhz for t, mhz in samples if t > end - window_s]
    before = [mhz for t, mhz in samples if end - 2 * window_s < t <= end - window_s]
    if not before:
        earlier = [mhz for t, mhz in samples if t <= end - window_s]
        if not earlier:
            return False  # every reading is recent: too soon to tell
        before = earlier[-1:]
    return min(recent) >= min(before) * (1.0 - tolerance)


def host_loop_s() -> float:
    """Seconds a fixed pure-Python loop takes now: the host CPU's own speed (lower is faster).
    Kept as the fastest reading of this process too (``fastest_host_loop_s``)."""
    global _fastest_host_loop_s
    best = float("inf")
    # The real clock, not now(): this measures the CPU itself, which a fake clock cannot.
    for _ in range(HOST_LOOP_REPEATS):
        start = time.perf_counter()
        total = 0
        for i in range(HOST_LOOP_ITERATIONS):
            total += i * i
        best = min(best, time.perf_counter() - start)
    if _fastest_host_loop_s is None or best < _fastest_host_loop_s:
        _fastest_host_loop_s = best
    return best


def fastest_host_loop_s() -> float | None:
    """The fastest ``host_loop_s`` reading of this process so far: the host at its best."""
    return _fastest_host_loop_s


__all__ = [
    "GpuSensors",
    "fastest_host_loop_s",
    "host_loop_s",
    "settled",
]
