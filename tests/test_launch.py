"""run_job and %brrr_job: a real script under a real torchrun (gloo on the CPU), with progress,
Cancel and failures."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_brrr.capture.launch import JobCancelled, JobRunError, run_job
from jupyter_brrr.notebook.job_controls import JobControls, _parse

SCRIPT = Path(__file__).parent / "jobs" / "ddp_plain.py"


@pytest.fixture
def in_tmp(tmp_path, kernel_env, monkeypatch):
    """Run in a fresh folder, with this checkout importable by the ranks."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", kernel_env["PYTHONPATH"])
    return tmp_path


@pytest.mark.slow
def test_brrr_job_runs_a_plain_script_and_names_the_slowed_rank(ipython_shell, in_tmp) -> None:
    # The script has no profiler code: run_job steps at each optimizer.step(). Rank 1 sleeps
    # 60 ms before each forward; --wait blocks as nbclient would.
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_line_magic(
        "brrr_job", f"--wait --nproc 2 --steps 1,1,2 --out traces {SCRIPT} 1 0.06 5"
    )
    job = ipython_shell.user_ns["_brrr_job"]
    assert sorted(p.name for p in (in_tmp / "traces").glob("*.json.gz")) == [
        "rank0_of2.step4.json.gz",
        "rank1_of2.step4.json.gz",
    ]
    assert (in_tmp / "traces" / "job.log").exists()
    assert job.summary["steps"] == [2, 3]  # 1 skipped, 1 warm-up, 2 recorded
    straggler = job.summary["straggler"]
    assert straggler["rank"] == 1
    assert 0.04 < straggler["lateness_per_step_s"] < 0.12
    assert "Recorded by run_job" in job.notes[0]


@pytest.mark.slow
def test_cancel_stops_every_rank(in_tmp) -> None:
    controls = JobControls()
    controls.start(str(SCRIPT), ["1", "0.05", "100000"], nproc=2, out="traces")
    deadline = time.monotonic() + 120
    while "profiling" not in controls.status.value and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "profiling" in controls.status.value, controls.status.value
    controls.cancel()
    controls.wait(60)
    assert isinstance(controls.error, JobCancelled)
    assert "Cancelled" in controls.status.value and controls.cancel_button.disabled
    # No rank survives its job.
    for _ in range(50):
        alive = [pid for pid in _pids_running("jupyter_brrr._job_child")]
        if not alive:
            break
        time.sleep(0.1)
    assert not alive


def _pids_running(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in command and str(Path.cwd()) in _cwd(entry):
                found.append(int(entry.name))
    return found


def _cwd(entry: Path) -> str:
    try:
        return os.readlink(entry / "cwd")
    except OSError:
        return ""


@pytest.mark.slow
def test_a_failing_script_says_why(in_tmp) -> None:
    with pytest.raises(JobRunError, match="failing on purpose"):
        run_job(SCRIPT, "fail", "0", "0", nproc=2, out="traces")


def test_run_job_refuses_bad_requests_before_starting(in_tmp) -> None:
    with pytest.raises(JobRunError, match="no such script"):
        run_job("missing.py")
    with pytest.raises(JobRunError, match="at least one recorded"):
        run_job(SCRIPT, steps=(1, 1, 0))
    (in_tmp / "old").mkdir()
    (in_tmp / "old" / "rank0_of2.step4.json.gz").write_bytes(b"")
    with pytest.raises(JobRunError, match="already holds traces"):
        run_job(SCRIPT, out="old")


def test_the_magic_line_is_options_then_the_script_and_its_arguments() -> None:
    options, script, args, wait = _parse("--nproc 4 --steps 0,1,2 --wait train.py --lr 3")
    assert options == {"nproc": 4, "steps": (0, 1, 2)} and wait
    assert (script, args) == ("train.py", ["--lr", "3"])  # the script's own options stay its
    with pytest.raises(UsageError, match="needs a script"):
        _parse("--nproc 2")
    with pytest.raises(UsageError, match="not a valid value"):
        _parse("--steps 1,2 train.py")


def test_progress_is_reported_on_the_callers_thread_once_per_change(in_tmp) -> None:
    seen: list[tuple[float, str]] = []
    threads = set()

    def progress(fraction: float, message: str) -> None:
        seen.append((fraction, message))
        threads.add(threading.get_ident())

    with pytest.raises(JobRunError):
        run_job(SCRIPT, "fail", "0", "0", nproc=1, out="traces", progress=progress)
    assert seen[0] == (0.0, "starting 1 rank")
    assert len(seen) == len(set(seen)) and threads == {threading.get_ident()}
