"""record: one trace per rank, named and labelled, from a profiler of the user's own."""

from __future__ import annotations

import gzip
import json

import torch
from torch.profiler import ProfilerActivity, profile, schedule

import jupyter_brrr
from jupyter_brrr import JobReport, Report, record
from jupyter_brrr.capture import recording


def test_trace_handler_names_and_labels_a_rank_outside_torchrun(tmp_path, monkeypatch) -> None:
    # No process group and no torchrun environment: rank 0 of 1.
    for name in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    x = torch.randn(64, 64)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=0, warmup=1, active=2),
        on_trace_ready=record.trace_handler(tmp_path / "traces"),
        record_shapes=True,
    ) as prof:
        for _ in range(3):
            x @ x
            prof.step()
    path = tmp_path / "traces" / "rank0_of1.step3.json.gz"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    with gzip.open(path) as f:
        doc = json.load(f)
    assert doc["jupyter_brrr"]["rank"] == 0 and doc["jupyter_brrr"]["world_size"] == 1
    assert doc["jupyter_brrr"]["step"] == 3 and doc["jupyter_brrr"]["backend"] is None
    assert isinstance(jupyter_brrr.load(path), Report)
    job = jupyter_brrr.load(path.parent)
    assert isinstance(job, JobReport) and job.summary["ranks"] == [0]
    assert any("No collective was found" in note for note in job.notes)
    assert job.summary["steps"] == [1, 2]


def test_step_outside_a_job_profiler_does_nothing(monkeypatch) -> None:
    monkeypatch.setattr(recording, "_ACTIVE", None)
    monkeypatch.setattr(recording, "_MANUAL", False)
    record.step()  # no profiler: nothing to step, no error
    assert recording._MANUAL  # from now on, optimizer steps no longer count


def test_rank_and_world_from_torchrun_environment(monkeypatch) -> None:
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "8")
    assert record.rank_and_world() == (3, 8)
