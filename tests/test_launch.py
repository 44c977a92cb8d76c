"""run_job and %brrr_job: a real script under a real torchrun (gloo on the CPU), with progress,
Cancel and failures."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

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


def test_once_the_job_has_ended_its_status_stands_without_cancel(in_tmp) -> None:
    # Issue 25's "Cancel beside Done", in the job's controls: a disabled Cancel stayed beside
    # the job's last word. A script that fails to start ends the job at once.
    controls = JobControls()
    assert controls.cancel_button.layout.display is None  # shown while the job runs
    controls.start(str(in_tmp / "no_such_script.py"), [], nproc=1, out="traces")
    controls.wait(60)
    assert controls.error is not None and "failed" in controls.status.value
    assert controls.cancel_button.layout.display == "none"


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
        alive = [pid for pid in _pids_running("jupyter_brrr.capture._job")]
        if not alive:
            break
        time.sleep(0.1)
    assert not alive


def _pids_running(text: str, folder: Path | None = None) -> list[int]:
    """The processes whose command line holds ``text`` and whose working folder is ``folder``
    (default: this one's)."""
    found = []
    where = str(folder or Path.cwd())
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in command and where in _cwd(entry):
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


def test_a_crash_at_exit_after_every_trace_keeps_the_job_and_says_so(in_tmp) -> None:
    # A rank that aborts in the interpreter's teardown, after its script returned and its
    # trace was written, has lost nothing: the job loads, with a note on the exit code.
    script = Path(__file__).parent / "jobs" / "abort_at_exit.py"
    job = run_job(script, "6", "exit", nproc=1, steps=(1, 1, 2), out="traces")
    assert [p.name for p in (in_tmp / "traces").glob("*.json.gz")] == ["rank0_of1.step4.json.gz"]
    assert any("after every rank's script had returned" in n for n in job.notes), job.notes
    # An abort inside the profiled steps is a failed job, as before.
    with pytest.raises(JobRunError, match="The job failed"):
        run_job(script, "6", "now", nproc=1, steps=(1, 1, 2), out="traces_now")


def test_run_job_refuses_bad_requests_before_starting(in_tmp) -> None:
    with pytest.raises(JobRunError, match="no such script"):
        run_job("missing.py")
    with pytest.raises(JobRunError, match="at least one recorded"):
        run_job(SCRIPT, steps=(1, 1, 0))
    (in_tmp / "old").mkdir()
    (in_tmp / "old" / "rank0_of2.step4.json.gz").write_bytes(b"")
    with pytest.raises(JobRunError, match="already holds traces"):
        run_job(SCRIPT, out="old")


def test_run_job_refuses_an_output_file_and_impossible_ranks_or_timeouts(in_tmp) -> None:
    (in_tmp / "notes.txt").write_text("mine")
    with pytest.raises(JobRunError, match="is a file, not a folder"):
        run_job(SCRIPT, out="notes.txt")
    assert (in_tmp / "notes.txt").read_text() == "mine"
    with pytest.raises(JobRunError, match="at least one rank"):
        run_job(SCRIPT, nproc=-5)
    with pytest.raises(JobRunError, match="give at most"):
        run_job(SCRIPT, nproc=10**20)  # would have torchrun fork until the host gives out
    for timeout in (float("nan"), float("inf"), 0, -1):
        with pytest.raises(JobRunError, match="positive number of seconds"):
            run_job(SCRIPT, timeout=timeout)
    assert sorted(p.name for p in in_tmp.iterdir()) == ["notes.txt"]  # nothing was started


def test_bad_magic_lines_get_the_usage(ipython_shell, capsys) -> None:
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    for line, says in [
        ("--out 'traces train.py", "No closing quotation"),
        ("--timeout nan train.py", "positive number of seconds"),
        ("--timeout inf train.py", "positive number of seconds"),
        ("-x train.py", "unknown option -x"),
        ("--nproc", "needs a value"),
    ]:
        with pytest.raises(UsageError, match=says) as caught:
            _parse(line)
        assert "usage: %brrr_job" in str(caught.value)
    # -h, like --help, prints the help and runs nothing (it is not a script named -h).
    assert ipython_shell.run_line_magic("brrr_job", "-h") is None
    assert "To stop a job" in capsys.readouterr().out


def test_the_magic_refuses_an_output_file_and_impossible_ranks_before_starting(
    ipython_shell, in_tmp
) -> None:
    """Through ``%brrr_job`` itself: a UsageError that says what to give, the file untouched,
    nothing started (not even the line on how to stop a job), the kernel usable."""
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    (in_tmp / "notes.txt").write_text("mine")
    for line, says in [
        (f"--wait --out notes.txt {SCRIPT}", "notes.txt is a file, not a folder"),
        (f"--wait --nproc -5 {SCRIPT}", "nproc=-5: a job needs at least one rank"),
        (f"--wait --nproc {10**20} {SCRIPT}", "give at most"),
        (f"--wait --timeout nan {SCRIPT}", "positive number of seconds"),
    ]:
        with capture_output() as out, pytest.raises(UsageError, match=says):
            ipython_shell.run_line_magic("brrr_job", line)
        assert "interrupt the kernel" not in out.stdout, line
    assert (in_tmp / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in in_tmp.iterdir()) == ["notes.txt"]
    assert ipython_shell.run_cell("print('still usable')").success


def test_the_magic_line_is_options_then_the_script_and_its_arguments() -> None:
    parsed = _parse("--nproc 4 --steps 0,1,2 --wait train.py --lr 3")
    assert parsed is not None
    options, script, args, wait = parsed
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


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_a_killed_kernel_takes_its_job_with_it(tmp_path, kernel_env) -> None:
    # A real kernel runs %brrr_job (blocking: nbclient's way, no front end to click in) on a
    # job that would run for minutes; the kernel is SIGKILLed, as the OOM killer or a crashed
    # host would. torchrun and every rank must end with it, within seconds.
    from jupyter_client.manager import start_new_kernel
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    temporary = tmp_path / "tmp"  # the kernel's temporary folder, to see what is left there
    temporary.mkdir()
    env = {**kernel_env, "TMPDIR": str(temporary)}
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    survivors: list[int] = []
    try:
        kc.execute("%load_ext jupyter_brrr")
        kc.execute(f"%brrr_job --nproc 2 --steps 1,1,2 --out traces {SCRIPT} 1 0.05 100000")
        deadline = time.monotonic() + 120
        while len(_pids_running("-m jupyter_brrr.capture._job_child", tmp_path)) < 2:  # the ranks
            assert time.monotonic() < deadline, "the job's ranks never started"
            time.sleep(0.2)
        job = _pids_running("jupyter_brrr.capture._job", tmp_path)  # torchrun and the ranks
        assert len(job) == 3
        assert isinstance(km.provisioner, LocalProvisioner)  # a local kernel: its process id
        assert km.provisioner.pid is not None
        os.kill(km.provisioner.pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            survivors = [pid for pid in job if _alive(pid)]
            if not survivors:
                break
            time.sleep(0.1)
        assert not survivors, f"still running {15} s after the kernel died: {survivors}"
        assert list(temporary.glob("brrr_progress_*")) == []  # torchrun removed it, ending
    finally:
        for pid in survivors:  # the test's own job, should it have outlived the kernel
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead and waiting to be reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_where_no_parent_death_signal_exists_a_watcher_ends_the_orphan(tmp_path) -> None:
    # The fallback of tie_to_parent (not Linux): a thread polls the parent's pid. A parent
    # starts a child tied to it that way, then exits at once; the child must end within
    # seconds, by the signal it asked for.
    import subprocess
    import sys

    child = (
        "import os, signal, time\n"
        "from jupyter_brrr.capture import _job_torchrun as t\n"
        "t._parent_death_signal = lambda signum: False\n"
        "t.tie_to_parent(int(os.environ['PARENT']), signal.SIGTERM)\n"
        "open(os.environ['READY'], 'w').write(str(os.getpid()))\n"
        "time.sleep(120)\n"
    )
    ready = tmp_path / "ready"
    parent = (
        "import os, subprocess, sys, time\n"
        f"env = dict(os.environ, PARENT=str(os.getpid()), READY={str(ready)!r})\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}], env=env)\n"
        f"while not os.path.exists({str(ready)!r}): time.sleep(0.05)\n"
    )
    subprocess.run([sys.executable, "-c", parent], check=True, timeout=60)
    pid = int(ready.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
