"""``%%brrr --sweep`` and ``--memory`` in a real IPython shell on the CPU: the variable set before
each run, the report of the best size with the sweep in its JSON, stateful cells refused or
restored, bad flags refused."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jupyter_brrr import Report
from jupyter_brrr.schema import MIME_TYPE


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "jupyter_brrr")
    shell.run_cell(
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), "
        "torch.nn.Linear(256, 64))"
    )
    return shell


def run(ip, code: str, line: str = ""):
    with capture_output() as out:
        value = ip.run_cell_magic("brrr", line, code)
    return value, out


def test_sweep_sets_the_variable_and_shows_the_best_size_s_report(ip) -> None:
    ip.user_ns["seen"] = []
    _, out = run(
        ip,
        "seen.append(batch)\ny = model(torch.randn(batch, 64))",
        "--sweep batch=4..16 --warmup 1 --repeat 2 --sweep-stateful keep",
    )
    assert sorted(set(ip.user_ns["seen"])) == [4, 8, 16]
    # Warm-up, timed and profiled runs, then 3 interleaved rounds of 2 timed runs.
    assert ip.user_ns["seen"].count(4) == 1 + 2 + 1 + 3 * 2
    assert "the cell runs at least 30 times" in out.stdout
    result = ip.user_ns["_brrr_sweep"]
    assert list(result.table.index) == [4, 8, 16]
    report = ip.user_ns["_brrr"]
    assert report is result.reports[result.best]
    assert report.sweep["variable"] == "batch"
    assert "batch=4 (1/3)" in out.stdout
    shown = [o.data for o in out.outputs if MIME_TYPE in o.data]
    assert len(shown) == 1
    doc = json.loads(json.dumps(shown[0][MIME_TYPE]))
    assert doc["sweep"]["points"]["columns"][0] == "size"
    assert Report.from_json(doc).sweep == doc["sweep"]  # what the saved notebook holds reads back
    html = shown[0]["text/html"]
    assert "Sweep of batch" in html and "data:image/png;base64," in html
    assert "Sweep of batch on CPU" in shown[0]["text/plain"]


def test_a_stateful_cell_is_not_swept_without_a_yes(ip) -> None:
    ip.user_ns["log"] = []
    _, out = run(ip, "log.append(n)", "--sweep n=1,2")
    assert ip.user_ns["log"] == []
    assert "--sweep-stateful restore" in out.stdout and "did not run" in out.stdout


def test_restore_puts_the_state_back_before_each_size_and_at_the_end(ip) -> None:
    seen: list[tuple[int, float]] = []  # outside the notebook's state: not put back

    def note(n: int, total: float) -> None:
        seen.append((n, total))

    ip.run_cell("w = torch.zeros(3)")
    ip.user_ns["note"] = note
    run(
        ip,
        "note(n, float(w.sum()))\nw.add_(1.0)",
        "--sweep n=1,2 --warmup 1 --repeat 2 --sweep-stateful restore",
    )
    # Each size starts from w == 0 (put back before it), then each of its 4 runs adds 3; each
    # block of 2 runs in the interleaved rounds starts from it again.
    assert [total for n, total in seen if n == 2] == [0.0, 3.0, 6.0, 9.0, *[0.0, 3.0] * 3]
    assert float(ip.user_ns["w"].sum()) == 0.0  # and after the sweep, as before the cell


def test_memory_adds_the_breakdown_to_the_report(ip) -> None:
    _, out = run(ip, "h = model(torch.randn(512, 64)).relu()", "--memory")
    report = ip.user_ns["_brrr"]
    assert report.memory is not None
    assert report.memory["at_peak"]["parameters"] > 0
    shown = next(o.data for o in out.outputs if MIME_TYPE in o.data)
    assert "What holds the peak memory" in shown["text/html"]
    assert shown[MIME_TYPE]["memory"]["schema"] == "jupyter_brrr.memory"


@pytest.mark.parametrize(
    "line, words",
    [
        ("--sweep batch", "NAME=SIZES"),
        ("--sweep batch=8,4", "must grow"),
        ("--sweep-budget 5", "goes with --sweep"),
        ("--sweep n=1,2 --sweep-budget 0", "positive"),
        ("--sweep n=1,2 --ab compile", "separate runs"),
    ],
)
def test_bad_sweep_flags_get_the_usage(ip, line: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        ip.run_cell_magic("brrr", line, "y = 1")


def test_an_error_at_the_first_size_is_the_cell_s_own(ip) -> None:
    with pytest.raises(ZeroDivisionError), capture_output():
        ip.run_cell_magic("brrr", "--sweep n=1,2", "y = n / 0")
    assert ip.run_cell("1 + 1").success  # the kernel stays usable
