"""Profilers that would nest (the user's around ours, ours around the user's, ours twice), work
in other threads, and the trace folders of killed processes. Real torch.profiler runs on CPU; the
cases that crash a process when they go wrong run in a real kernel."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import jupyter_brrr
from jupyter_brrr.capture import run as capture_module
from jupyter_brrr.capture.run import (
    STARTED_BETWEEN_MESSAGE,
    TAKEN_OVER_MESSAGE,
    ProfilerInUseError,
    _thread_note,
    _ThreadFacts,
    capture,
    remove_stale_trace_dirs,
)
from jupyter_brrr.schema.report import MIME_TYPE
from jupyter_brrr.trace.events import read_trace

DATA = Path(__file__).parent / "data"

x = torch.randn(64, 64)


def mm_events(prof) -> int:
    return sum(e.name == "aten::mm" for e in prof.events())


# --- a profiler around ours -------------------------------------------------------------------------


def test_profile_inside_a_users_profiler_refuses_and_the_users_keeps_its_events() -> None:
    ran = []
    with torch.profiler.profile() as outer:
        with pytest.raises(ProfilerInUseError, match="A torch profiler is already running"):
            jupyter_brrr.profile(lambda: ran.append(x @ x))
        x @ x
    assert ran == []  # refused before the code ran
    assert mm_events(outer) == 1  # the user's profiler has its event; nothing crashed
    assert capture(lambda: x @ x).report is not None  # and ours works after


def test_profile_inside_profile_refuses_with_the_reason() -> None:
    def outer():
        return jupyter_brrr.profile(lambda: x @ x)

    result = capture(outer)
    assert isinstance(result.error, ProfilerInUseError)
    assert "jupyter_brrr is already profiling this code" in str(result.error)
    assert result.report is not None  # the outer run's partial report
    assert not torch.autograd.profiler._is_profiler_enabled


# --- a profiler inside ours -------------------------------------------------------------------------


def test_code_that_starts_its_own_profiler_keeps_it_and_gets_no_report() -> None:
    kept = {}

    def cell():
        with torch.profiler.profile() as inner:
            y = x @ x
        kept["inner"] = inner
        return y

    result = capture(cell)
    assert result.report is None and result.error is None
    assert result.no_report == TAKEN_OVER_MESSAGE
    assert torch.equal(result.value, x @ x)
    assert mm_events(kept["inner"]) == 1
    assert not torch.autograd.profiler._is_profiler_enabled
    assert capture(lambda: x @ x).report is not None


def test_code_that_leaves_its_profiler_running_keeps_it_running() -> None:
    kept = {}

    def cell():
        prof = torch.profiler.profile()
        prof.start()
        kept["prof"] = prof
        return x @ x

    result = capture(cell)
    assert result.no_report == TAKEN_OVER_MESSAGE
    assert torch.autograd.profiler._is_profiler_enabled  # the user's, untouched
    x @ x
    kept["prof"].stop()
    assert mm_events(kept["prof"]) == 2


def test_a_profiler_started_during_the_warm_up_is_left_running() -> None:
    kept = []

    def cell():
        if not kept:
            kept.append(torch.profiler.profile())
            kept[0].start()
        return x @ x

    result = capture(cell, warmup=1, repeat=2)
    assert result.report is None and result.no_report == STARTED_BETWEEN_MESSAGE
    assert torch.autograd.profiler._is_profiler_enabled
    kept[0].stop()
    assert mm_events(kept[0]) == 3  # the warm-up's product and the two timed runs'
    assert result.value is None  # the runs' values are dropped as they end


def test_profile_raises_when_the_code_took_the_profiler_over() -> None:
    def cell():
        with torch.profiler.profile():
            return x @ x

    with pytest.raises(ProfilerInUseError, match="started a torch profiler of its own"):
        jupyter_brrr.profile(cell)


def test_profilers_in_a_real_kernel(tmp_path, kernel_env) -> None:
    """The issue's crashes (exit 139 at export) as a user meets them: %%brrr on cells that use
    a profiler, around one, and inside one; the kernel lives through all of them."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "%load_ext jupyter_brrr\nimport torch\nimport jupyter_brrr\nx = torch.randn(64, 64)",
        # A profiler inside the cell, as a with-block, and jupyter_brrr.profile() in the cell.
        "%%brrr\nwith torch.profiler.profile() as inner:\n    y = x @ x\ny.shape",
        "print('inner events', sum(e.name == 'aten::mm' for e in inner.events()))",
        "%%brrr\nr = jupyter_brrr.profile(lambda: x @ x)",
        # The user's profiler started in one cell and stopped in a later one, %%brrr between.
        "outer = torch.profiler.profile()\nouter.start()",
        "%%brrr\nz = x @ x\nz.shape",
        "outer.stop()\nprint('outer events', sum(e.name == 'aten::mm' for e in outer.events()))",
        "%%brrr --quiet\nw = x @ x",
        "print('report ops', len(_brrr.ops), 'alive')",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute(env=kernel_env)

    def text(i: int) -> str:
        return "".join(o.get("text", "") for o in nb.cells[i].outputs if o.output_type == "stream")

    def results(i: int) -> list:
        return [o for o in nb.cells[i].outputs if o.output_type == "execute_result"]

    assert "%%brrr: no report: The code started a torch profiler of its own" in text(1)
    assert results(1) and "64, 64" in results(1)[0].data["text/plain"]  # the value, as usual
    assert "inner events 1" in text(2)
    errors = [o for o in nb.cells[3].outputs if o.output_type == "error"]
    assert errors and errors[0].ename == "ProfilerInUseError"
    assert "jupyter_brrr is already profiling this code" in errors[0].evalue
    assert "%%brrr: no report: A torch profiler is already running" in text(5)
    assert "The cell ran once, as a plain cell." in text(5)
    assert results(5) and not any(MIME_TYPE in o.get("data", {}) for o in nb.cells[5].outputs)
    assert "outer events 1" in text(6)  # the user's profiler recorded the cell
    assert "alive" in text(8) and "report ops 0" not in text(8)


# --- threads ------------------------------------------------------------------------------------------


WORKER_THREAD = """
import threading, torch, jupyter_brrr
x = torch.randn(64, 64)

def cell():
    worker = threading.Thread(target=lambda: [torch.mm(x, x) for _ in range(3)])
    worker.start()
    worker.join()
    return x.cos()

report = jupyter_brrr.profile(cell)
mm = report.ops["name"] == "aten::mm"
print(int(report.ops.loc[mm, "calls"].sum()))
print([n for n in report.notes if "thread" in n])
"""


def test_ops_in_worker_threads_are_recorded_and_said() -> None:
    # In a fresh process: once torch.compile has run in a process (earlier tests do), only the
    # code's own thread is recorded (the test below).
    out = subprocess.run(
        [sys.executable, "-c", WORKER_THREAD], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "3"  # recorded, from the other thread
    (note,) = ast.literal_eval(out[1])
    assert note.startswith("Torch ops ran on 1 thread besides the one that ran the code")


def test_a_single_threaded_run_has_no_thread_note() -> None:
    report = capture(lambda: x @ x).report
    assert report is not None
    assert not [n for n in report.notes if "thread" in n]


def test_thread_note_where_torch_cannot_record_other_threads() -> None:
    trace = read_trace(DATA / "cpu_only.json.gz")
    own = int(trace.ops["tid"].iloc[0])
    facts = _ThreadFacts(own, all_recorded=False, started=2, names={})
    note = _thread_note(trace, facts)
    assert note is not None
    assert note.startswith("The code ran work on 2 other threads")
    assert "missing from the op table" in note
    assert _thread_note(trace, _ThreadFacts(own, False, 0, {})) is None


COMPILED_THEN_THREAD = """
import threading, torch, jupyter_brrr
import torch._inductor.runtime.triton_heuristics  # as after torch.compile made Triton kernels
x = torch.randn(64, 64)

done, release = threading.Event(), threading.Event()

def work():
    [torch.mm(x, x) for _ in range(3)]
    done.set()
    release.wait()  # still alive when the capture ends: a thread the code left running

def cell():
    threading.Thread(target=work).start()
    done.wait()
    return x.cos()

report = jupyter_brrr.profile(cell)
release.set()
print("mm" if "aten::mm" in set(report.ops["name"]) else "no mm")
print([n for n in report.notes if "thread" in n][0])
"""


def test_after_torch_compile_only_the_codes_thread_is_recorded_and_the_note_says_why() -> None:
    # PyTorch's all-threads recording drops the tensors of Triton kernel launches (no costs for
    # compiled code), so once Triton kernels may run only the code's thread is recorded.
    out = subprocess.run(
        [sys.executable, "-c", COMPILED_THEN_THREAD], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "no mm"
    assert out[1].startswith("The code ran work on 1 other thread")
    assert "torch.compile's Triton kernels ran in this process" in out[1]


def test_torchs_own_autograd_thread_is_not_a_worker_thread() -> None:
    """On a GPU the backward runs on torch's autograd thread (pt_autograd_0): its ops are the
    code's own, recorded as always, not a thread the code started."""
    trace = read_trace(DATA / "resnet50_train_amp_b64.json.gz")
    assert set(trace.ops["tid"]) == {410, 684}
    autograd = {684: "pt_autograd_0"}
    assert _thread_note(trace, _ThreadFacts(410, True, 0, autograd)) is None
    note = _thread_note(trace, _ThreadFacts(410, True, 0, {}))
    assert note is not None and "1 thread besides" in note


# --- trace folders of killed processes -----------------------------------------------------------------


def dead_process() -> tuple[int, int]:
    """The pid and start time of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    started = capture_module._start_time(child.pid)
    child.wait()
    return child.pid, started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process facts from /proc")
def test_stale_trace_folders_of_ended_processes_are_removed(tmp_path) -> None:
    namespace = capture_module._pid_namespace()
    pid, started = dead_process()
    folders = {
        "dead": f"jupyter_brrr_{namespace}-{pid}-{started}_abc123",
        "alive": f"jupyter_brrr_{capture_module._process_tag()}_def456",
        "other_namespace": f"jupyter_brrr_{namespace + 1}-{pid}-{started}_ghi789",
        "reused_pid": f"jupyter_brrr_{namespace}-{os.getpid()}-{capture_module._start_time(os.getpid()) + 1}_x1",
        "old_form_recent": "jupyter_brrr_k3j2h1",
        "old_form_stale": "jupyter_brrr_q9w8e7",
        "not_ours": "jupyter_brrrr_zzz",
    }
    for name in folders.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "trace-1.json").write_text("{}")
    week_and_a_day = time.time() - 8 * 24 * 3600
    stale = tmp_path / folders["old_form_stale"]
    os.utime(stale / "trace-1.json", (week_and_a_day, week_and_a_day))
    os.utime(stale, (week_and_a_day, week_and_a_day))
    removed = remove_stale_trace_dirs(str(tmp_path))
    assert sorted(removed) == sorted(
        str(tmp_path / folders[k]) for k in ("dead", "reused_pid", "old_form_stale")
    )
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {folders[k] for k in ("alive", "other_namespace", "old_form_recent", "not_ours")}


def test_a_new_process_cleans_up_at_its_first_capture(tmp_path) -> None:
    """A killed kernel's folder is gone after the next process's first capture."""
    code = (
        "import os, signal, torch\n"
        "import jupyter_brrr.capture.run as c\n"
        "c.capture(lambda: torch.ones(2) + 1)\n"
        "print(c._trace_dir.name, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -9
    folder = killed.stdout.strip().splitlines()[-1]
    assert os.path.isdir(folder) and os.listdir(folder)  # left behind
    second = subprocess.run(
        [sys.executable, "-c", code.replace("os.kill(os.getpid(), signal.SIGKILL)\n", "")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 0, second.stderr
    assert not os.path.exists(folder)
