"""The GPU's idle time by cause (``report.idle``) on the H200 recordings of
``bench/advice_cases.py`` (tests/data/advice_cases/): each case's largest cause is the one its
workload was built to show.

Each test names what the trace records of the cause, on the case where it shows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import jupyter_brrr

RECORDED = Path(__file__).resolve().parent / "data" / "advice_cases"


def idle(name: str) -> pd.DataFrame:
    report = jupyter_brrr.load(RECORDED / f"{name}.json.gz")
    assert isinstance(report, jupyter_brrr.Report)
    return report.idle


def by_cause(frame: pd.DataFrame) -> pd.Series:
    """Seconds per cause, the largest first."""
    return frame.groupby("cause")["dur_s"].sum().sort_values(ascending=False)


def test_a_sync_every_iteration_is_synchronisation() -> None:
    """``.item()`` in a loop: the GPU drains at each copy back and waits for the host to launch
    the next iteration; the copy is the synchronisation's, not a host copy's. (The rest is
    mostly the first launch, 1 ms, before the span.)"""
    causes = by_cause(idle("item_sync"))
    assert causes.index[0] == "synchronisation", causes
    assert causes["synchronisation"] / causes.sum() > 0.5, causes


def test_a_launch_bound_loop_is_the_launch_path() -> None:
    """The GPU waits on the launch path, a third of it the profiler's records on that path
    (the profiler doubles the host's time in torch's ops and calls); nothing else gates it."""
    causes = by_cause(idle("launch_bound_loop"))
    assert causes.index[0] == "launch path", causes
    assert causes["launch path"] / causes.sum() > 0.6, causes
    assert (causes["launch path"] + causes["profiler"]) / causes.sum() > 0.99, causes


def test_the_host_work_before_the_first_gpu_work_is_idle_time() -> None:
    """The batch made on the host inside the step (``torch.randn`` on the CPU, 8.3 ms, then a
    4 ms sleep) runs before the step's first GPU work, outside the span, which starts at that
    work: the GPU idles through it all the same. It is the idle time before the span (negative
    starts) and it is CPU work: more than 12 ms of it, against 0.22 ms of idle in the span."""
    frame = idle("dataloader_stall")
    causes = by_cause(frame)
    assert causes.index[0] == "CPU work", causes
    before = frame[frame["start_s"] < 0]
    assert by_cause(before)["CPU work"] > 12e-3, before
    assert frame["start_s"].min() < -12e-3, frame
    # What the span holds keeps its times: the idle rows from the span's start on.
    assert frame.loc[frame["start_s"] >= 0, "dur_s"].sum() < 0.5e-3, frame


def test_a_blocking_host_to_device_copy_waits_as_a_host_copy() -> None:
    """A 128 MiB copy from pageable memory inside the step: after the copy the host waits for
    it (the copy call, then its own ``cudaStreamSynchronize``) before it launches the matmul.
    That wait is the host copy's, not a synchronisation the user wrote."""
    frame = idle("host_copy_in_step")
    causes = by_cause(frame)
    assert causes.index[0] == "host copy", causes
    assert "synchronisation" not in causes.index, causes
    assert set(frame.loc[frame["cause"] == "host copy", "op"]) == {"aten::to"}, frame


def test_pageable_copies_in_a_loop_wait_as_host_copies() -> None:
    """The same in a profiled loop (bench/causal_check.py's pinned_copy, before: a pageable copy
    then a matmul per step): the idle after each copy is the host copy's, and none of it is
    left once the copies are pinned and non-blocking (after)."""
    causal = RECORDED.parents[2] / "bench" / "data" / "h200" / "causal"
    before = jupyter_brrr.load(causal / "pinned_copy_before.json.gz")
    after = jupyter_brrr.load(causal / "pinned_copy_after.json.gz")
    assert isinstance(before, jupyter_brrr.Report) and isinstance(after, jupyter_brrr.Report)
    causes = by_cause(before.idle)
    assert causes.index[0] == "host copy", causes
    assert causes["host copy"] / causes.sum() > 0.9, causes
    assert "host copy" not in set(after.idle["cause"]), after.idle
