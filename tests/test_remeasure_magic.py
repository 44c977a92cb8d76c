"""The re-measure loop in a real IPython shell: ``%%brrr --name`` keeps each run and shows the
change since the previous one, ``%brrr history|diff|forget``, ``--target``, and the history
surviving a (simulated) restart. Each test works in its own folder: the store is written beside
the notebook, here the working directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import CapturedIO, capture_output

import jupyter_brrr
from jupyter_brrr.report import history as history_store
from jupyter_brrr.report.comparison import Comparison
from jupyter_brrr.report.history import STORE_DIRNAME, History
from jupyter_brrr.schema.report import MIME_TYPE


@pytest.fixture
def ip(ipython_shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    monkeypatch.chdir(tmp_path)
    history_store._stores.clear()
    ipython_shell.run_cell("import torch\nx = torch.randn(96, 96)\nh = torch.randn(48, 96)")
    yield ipython_shell
    history_store._stores.clear()
    for name in ("_brrr_change",):
        ipython_shell.user_ns.pop(name, None)


def cell(ip, code: str, line: str) -> tuple[Any, CapturedIO]:
    """What the cell magic returned (whatever the cell's value is) and what it printed."""
    with capture_output() as out:
        value = ip.run_cell_magic("brrr", line, code)
    return value, out


def line(ip, text: str) -> tuple[Any, CapturedIO]:
    """What the line magic returned (a History, a Comparison, None) and what it printed."""
    with capture_output() as out:
        value = ip.run_line_magic("brrr", text)
    return value, out


def test_named_runs_show_the_change_since_the_previous_run(ip, tmp_path: Path) -> None:
    cell(ip, "y = (x @ x).relu()", "--name attn --warmup 1 --repeat 3")
    report = ip.user_ns["_brrr"]
    assert report.change is None and [r["run"] for r in report.history] == [1]
    _, second = cell(ip, "y = (h @ x).relu()", "--name attn --warmup 1 --repeat 3")
    report = ip.user_ns["_brrr"]
    change = report.change
    assert change["schema"] == "jupyter_brrr.comparison"
    assert (change["before"]["run"], change["after"]["run"]) == (1, 2)
    assert [r["run"] for r in report.history] == [1, 2]
    assert report.history[1]["code_changed"] is True
    # How each run was measured, for the history's table and chart.
    assert report.history[1]["settings"] == "1 warm-up, 3 timed, 1 profiled (burst)"
    assert isinstance(ip.user_ns["_brrr_change"], Comparison)
    # The one output of the cell carries the comparison: JSON, static HTML and text.
    (output,) = second.outputs
    data = output.data
    assert data[MIME_TYPE]["change"] == json.loads(json.dumps(change))
    assert "Change since attn (run 1)" in data["text/html"]
    assert "Runs of this name" in data["text/html"]
    assert "change since attn (run 1):" in data["text/plain"]
    # Nothing in the output names the folder the store is in.
    assert str(tmp_path) not in json.dumps(data)
    assert (tmp_path / STORE_DIRNAME / "attn" / "run-0002.json.gz").is_file()


def test_history_diff_and_forget_line_magics(ip) -> None:
    for code in ("y = x @ x", "y = x @ x", "y = h @ x"):
        cell(ip, code, "--name mm --quiet --warmup 1 --repeat 3")
    history, _ = line(ip, "history mm")
    assert isinstance(history, History) and [r.run for r in history] == [1, 2, 3]
    assert jupyter_brrr.history("mm") is history  # the API finds the same store
    assert history.rows()[1]["code_changed"] is False
    _, out = line(ip, "history")
    assert out.stdout.strip() == "mm: 3 runs"
    comparison, _ = line(ip, "diff mm 1 3")
    assert (comparison.before.run, comparison.after.run) == (1, 3)
    comparison, _ = line(ip, "diff mm")
    assert (comparison.before.run, comparison.after.run) == (2, 3)
    assert ip.user_ns["_brrr_change"] is comparison
    _, out = line(ip, "forget mm")
    assert "the runs of 'mm' are gone (3 stored file(s) deleted)" in out.stdout
    _, out = line(ip, "history mm")
    assert "no runs of 'mm' yet" in out.stdout


def test_history_survives_a_restart(ip, tmp_path: Path) -> None:
    cell(ip, "y = x @ x", "--name persist --quiet --warmup 1 --repeat 3")
    cell(ip, "y = x @ x", "--name persist --quiet --warmup 1 --repeat 3")
    # A restarted kernel has no history in memory: only the store beside the notebook.
    history_store._stores.clear()
    history, _ = line(ip, "history persist")
    assert [r.run for r in history] == [1, 2]
    cell(ip, "y = h @ x", "--name persist --quiet --warmup 1 --repeat 3")
    report = ip.user_ns["_brrr"]
    assert report.change["before"]["run"] == 2 and report.change["after"]["run"] == 3
    assert [r["run"] for r in report.history] == [1, 2, 3]


def test_a_damaged_store_is_reported_and_the_cell_still_runs(ip, tmp_path: Path) -> None:
    folder = tmp_path / STORE_DIRNAME / "broken"
    folder.mkdir(parents=True)
    (folder / "run-0001.json.gz").write_bytes(b"garbage")
    value, out = cell(ip, "y = x @ x\ny.shape", "--name broken")
    assert tuple(value) == (96, 96)
    assert "run-0001.json.gz could not be read" in out.stdout
    assert ip.user_ns["_brrr"].history[0]["run"] == 2  # the damaged file keeps its number
    assert (folder / "run-0001.json.gz").read_bytes() == b"garbage"


def test_target_flag_and_the_name_keeps_it(ip) -> None:
    _, out = cell(ip, "y = x @ x", "--name goal --warmup 1 --repeat 3 --target 1us")
    report = ip.user_ns["_brrr"]
    assert report.target["goal"]["text"] == "1us" and not report.target["met"]
    html = out.outputs[0].data["text/html"]
    assert "Target: 1us" in html and "over the target" in html
    # The next run of the name is held against the same target without repeating it.
    cell(ip, "y = x @ x", "--name goal --quiet --warmup 1 --repeat 3")
    assert ip.user_ns["_brrr"].target["goal"]["text"] == "1us"
    cell(ip, "y = x @ x", "--quiet --target 2000/s --items 96")
    target = ip.user_ns["_brrr"].target
    assert target["goal"]["kind"] == "throughput" and target["goal"]["items"] == 96


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("--target soon", "Cannot read the target 'soon'"),
        ("--target 30", "Cannot read the target '30'"),
        ("--items 8", "--items goes with --target"),
        ("--target 2000/s --items 0", "--items must be a positive number"),
    ],
)
def test_bad_target_flags_are_refused_before_running(ip, flags: str, message: str) -> None:
    ip.user_ns["ran"] = False
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("brrr", flags, "ran = True")
    assert ip.user_ns["ran"] is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bogus", "unknown command 'bogus'"),
        ("diff", "takes a name"),
        ("diff mm one two", "runs are numbers"),
        ("history a b", "takes one name"),
        ("--warmup 1", "unknown command '--warmup'"),
    ],
)
def test_bad_line_magics_print_usage(ip, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic("brrr", text)


def test_line_magic_help_and_unknown_runs(ip) -> None:
    _, out = line(ip, "")
    assert "%brrr history [NAME]" in out.stdout and "%%brrr (two %)" in out.stdout
    cell(ip, "y = x @ x", "--name once --quiet")
    with pytest.raises(UsageError, match="a comparison needs two"):
        ip.run_line_magic("brrr", "diff once")
    with pytest.raises(UsageError, match="has no run 5"):
        ip.run_line_magic("brrr", "diff once 1 5")


def test_an_unnamed_cell_keeps_no_history(ip, tmp_path: Path) -> None:
    cell(ip, "y = x @ x", "--quiet")
    assert ip.user_ns["_brrr"].history is None
    assert not (tmp_path / STORE_DIRNAME).exists()


def test_a_failing_named_cell_is_not_kept(ip, tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), capture_output():
        ip.run_cell_magic("brrr", "--name fails", "y = x @ x\n1 / 0")
    assert not (tmp_path / STORE_DIRNAME).exists()
