"""``%%brrr --sweep`` and ``--memory`` in a real IPython shell on the CPU: the variable set before
each run, the report of the best size with the sweep in its JSON, stateful cells refused or
restored, bad flags refused."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jupyter_brrr import Report
from jupyter_brrr.schema.report import MIME_TYPE


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


def test_sweep_sets_the_variable_and_shows_the_best_size_s_report(ip, fake_clock) -> None:
    ip.user_ns["seen"] = []
    ip.user_ns["clock"] = fake_clock  # each size's time known: all in the budget, however loaded
    _, out = run(
        ip,
        "seen.append(batch)\nclock.sleep(1e-3 * batch)\ny = model(torch.randn(batch, 64))",
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
        ("--sweep n=1,2 --sweep-budget inf", "positive number of seconds"),
        ("--sweep n=1,2 --sweep-budget nan", "positive number of seconds"),
        # The sweep leaves its variable bound: these would break later cells.
        ("--sweep print=1,2", "print is a name Python or IPython uses itself"),
        ("--sweep get_ipython=1,2", "get_ipython is a name Python or IPython uses"),
        ("--sweep __builtins__=1,2", "__builtins__ is a name Python or IPython uses"),
        ("--sweep In=1,2", "In is a name"),
        ("--sweep _=1,2", "_ is a name"),
        ("--sweep for=1,2", "for is a Python keyword"),
        # One run's flags: a sweep measures several sizes.
        ("--sweep n=1,2 --name attention", "--name goes with one run of the cell"),
        ("--sweep n=1,2 --target 30ms", "--target goes with one run of the cell"),
    ],
)
def test_bad_sweep_flags_get_the_usage(ip, line: str, words: str) -> None:
    before = dict(ip.user_ns)
    with pytest.raises(UsageError, match=words):
        ip.run_cell_magic("brrr", line, "y = n")
    assert "y" not in ip.user_ns or ip.user_ns["y"] is before.get("y")  # nothing ran
    assert ip.run_cell("print('still printing')").success


def test_a_sweep_of_a_variable_the_cell_never_reads_says_so_and_runs_nothing(ip) -> None:
    # The cell builds its input from a fixed size: every "size" would run the same work, and
    # its flat time would read as overhead.
    ip.user_ns["runs"] = 0
    ip.run_cell("def step():\n    global runs\n    runs += 1\n    return model(torch.randn(8, 64))")
    _, out = run(ip, "y = step()", "--sweep batch=8..32 --sweep-stateful keep")
    assert "never reads batch" in out.stdout and "x = torch.randn(batch, 1024)" in out.stdout
    assert ip.user_ns["runs"] == 0 and "overhead" not in out.stdout
    # A notebook function that reads it is reading it.
    ip.run_cell("def sized():\n    return model(torch.randn(batch, 64))")
    _, out = run(ip, "y = sized()", "--sweep batch=4,8 --warmup 1 --repeat 2")
    assert "never reads" not in out.stdout and ip.user_ns["_brrr_sweep"].variable == "batch"


def test_an_error_at_the_first_size_is_the_cell_s_own(ip) -> None:
    with pytest.raises(ZeroDivisionError), capture_output():
        ip.run_cell_magic("brrr", "--sweep n=1,2", "y = n / 0")
    assert ip.run_cell("1 + 1").success  # the kernel stays usable


@pytest.mark.slow
def test_a_front_end_sees_a_progress_bar_that_becomes_text(kernel_env) -> None:
    """In a real kernel, asked as JupyterLab asks (allow_stdin): a progress bar while the sweep
    runs, moved per size, then replaced through its display id by a line of text (the saved
    notebook holds no widget), and the report below it."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", env=kernel_env)
    try:

        def execute(code: str) -> list[dict]:
            msg_id = kc.execute(code, allow_stdin=True)
            msgs = []
            while True:
                m = kc.get_iopub_msg(timeout=180)
                msgs.append(m)
                done = m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                if done and m["parent_header"].get("msg_id") == msg_id:
                    return msgs

        execute("%load_ext jupyter_brrr\nimport torch")
        msgs = execute("%%brrr --sweep n=2,4,8 --repeat 2\ny = torch.ones(n) * 2")
        widget = "application/vnd.jupyter.widget-view+json"
        bar_output = next(m["content"] for m in msgs if widget in m["content"].get("data", {}))
        bar_id = bar_output["transient"]["display_id"]
        values = [
            m["content"]["data"]["state"]["value"]
            for m in msgs
            if m["msg_type"] == "comm_msg"
            and isinstance(m["content"]["data"].get("state", {}).get("value"), float)
        ]
        assert values[-1] == pytest.approx(2 / 3)  # the bar moved to the last size
        final = [
            m["content"]
            for m in msgs
            if m["msg_type"] == "update_display_data"
            and m["content"]["transient"]["display_id"] == bar_id
        ]
        assert final and set(final[-1]["data"]) == {"text/plain"}
        assert "ran to n=8 (3/3)" in final[-1]["data"]["text/plain"]
        reports = [m for m in msgs if MIME_TYPE in m["content"].get("data", {})]
        assert len(reports) == 1 and reports[0]["content"]["data"][MIME_TYPE]["sweep"]
        streams = "".join(m["content"].get("text", "") for m in msgs if m["msg_type"] == "stream")
        assert "n=2 (1/3)" not in streams  # the bar, not printed lines
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_printing_cell_prints_once_in_a_sweep(ip) -> None:
    _, out = run(
        ip,
        "print('from the cell', batch)\ny = model(torch.randn(batch, 64))",
        "--sweep batch=4,8 --warmup 1 --repeat 2",
    )
    assert out.stdout.count("from the cell") == 1 and "from the cell 4" in out.stdout
    runs = ip.user_ns["_brrr_sweep"].runs_total
    assert f"its {runs - 1:,} other runs' ({runs - 1:,} lines) is not shown" in out.stdout
