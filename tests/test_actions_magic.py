"""The A/B in the notebook: ``%%brrr --ab`` and the controls under a report (buttons clicked
from Python, the worker thread waited for), in a real IPython shell on CPU."""

from __future__ import annotations

import json
import re
import signal
import threading
import time

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import jupyter_brrr
from jupyter_brrr import magic
from jupyter_brrr.actions import controls as controls_module
from jupyter_brrr.actions.controls import ABControls, cell_controls
from jupyter_brrr.schema import MIME_TYPE

cuda = torch.cuda.is_available()


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "jupyter_brrr")
    shell.run_cell("import torch\nx = torch.randn(4096)")
    return shell


class Handle:
    """Stands in for IPython's DisplayHandle: records updates."""

    def __init__(self) -> None:
        self.updates: list = []

    def update(self, obj) -> None:
        self.updates.append(obj)


def run(ip, code: str, line: str = ""):
    with capture_output() as out:
        value = ip.run_cell_magic("brrr", line, code)
    return value, out


# --- %%brrr --ab ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ab_compile_updates_the_report_in_place(ip) -> None:
    ip.user_ns.pop("y", None)
    value, out = run(
        ip, "y = x.cos()\nprint('side effect')\nz = y.cos()\nz", "--ab compile --ab-budget 0.2"
    )
    assert torch.allclose(value, ip.user_ns["x"].cos().cos())
    report = ip.user_ns["_brrr"]
    assert report.ab is not None
    names = [v["name"] for v in report.ab["variants"]]
    assert names == ["eager", "compile"]
    compiled = report.ab["variants"][1]
    assert compiled["correct"] is True and compiled["compile_s"] > 0 and compiled["median_s"] > 0
    # The print is a graph break, listed with the cell's own line.
    assert any(b.startswith("line 2: print('side effect')") for b in compiled["graph_breaks"]), (
        compiled
    )
    assert report.ab["runs_total"] == sum(v["runs"] for v in report.ab["variants"])
    # Progress lines, then the result, on stdout (what nbclient stores).
    announced = re.search(r"the cell will run at most ([\d,]+) more times", out.stdout)
    assert announced, out.stdout
    assert report.ab["runs_total"] <= int(announced.group(1).replace(",", ""))  # a bound
    assert "compiling (first call): compile" in out.stdout
    assert "done:" in out.stdout
    # The report was displayed with a display id, then updated in place with the A/B.
    first, *rest = out.outputs
    assert MIME_TYPE in first.data and first.transient.get("display_id")
    updates = [o for o in rest if o.update]
    assert updates and updates[-1].transient["display_id"] == first.transient["display_id"]
    assert updates[-1].data[MIME_TYPE]["ab"]["variants"][1]["name"] == "compile"
    json.dumps(report.to_dict(), allow_nan=False)
    assert jupyter_brrr.Report.from_json(report.to_json()).ab == report.ab
    # The variables are as the plain run left them, and the cell still runs plainly.
    assert torch.equal(ip.user_ns["z"], value)
    assert not torch.autograd.profiler._is_profiler_enabled


def test_ab_graph_on_cpu_says_it_needs_cuda(ip) -> None:
    if cuda:
        pytest.skip("checks the message on a machine without CUDA")
    _, out = run(ip, "w = x * 2\nw", "--ab graph --ab-budget 0.05")
    ab = ip.user_ns["_brrr"].ab
    graph = ab["variants"][1]
    assert graph["name"] == "graph" and graph["verdict"] == "failed"
    assert graph["error"].startswith("needs CUDA")
    assert "graph: failed: needs CUDA" in out.stdout
    assert ab["variants"][0]["median_s"] is not None  # eager was still timed


def test_ab_warns_about_a_stateful_cell_and_counts_runs(ip) -> None:
    ip.user_ns["seen"] = []
    _, out = run(ip, "seen.append(1)\nx * 2", "--ab graph --ab-budget 0.05")
    assert "warning: the cell looks stateful" in out.stdout and "seen.append(1)" in out.stdout
    ab = ip.user_ns["_brrr"].ab
    assert len(ip.user_ns["seen"]) == 1 + ab["runs_total"]  # the plain run, then the A/B's
    assert any("looks stateful" in note for note in ab["notes"])


@pytest.mark.parametrize(
    "line", ["--ab turbo", "--ab compile:fastest", "--ab ''", "--ab compile --ab-budget 0"]
)
def test_bad_ab_flags(ip, line: str) -> None:
    with pytest.raises(UsageError, match="--ab"):
        ip.run_cell_magic("brrr", line, "1")


def test_help_documents_the_ab_syntax(ip) -> None:
    _, out = run(ip, "1", "--help")
    assert "--ab VARIANTS" in out.stdout and "compile:MODE" in out.stdout
    assert "reduce-overhead" in out.stdout and "--ab-budget" in out.stdout


def test_ctrl_c_during_the_ab_stops_it_and_leaves_the_kernel_usable(ip) -> None:
    ip.user_ns["hits"] = [0]
    code = "hits[0] += 1\nif hits[0] == 3:\n    raise KeyboardInterrupt\nx + 1"
    with capture_output() as out, pytest.raises(KeyboardInterrupt):
        ip.run_cell_magic("brrr", "--ab graph --ab-budget 0.05", code)
    assert "interrupted" in out.stdout
    assert not torch.autograd.profiler._is_profiler_enabled
    value, _ = run(ip, "6 * 7", "--quiet")
    assert value == 42


def test_no_ab_for_a_cell_without_torch_ops(ip) -> None:
    _, out = run(ip, "q = 1 + 1", "--ab compile")
    assert "no A/B" in out.stdout
    assert ip.user_ns["_brrr"].ab is None


# --- the controls ---------------------------------------------------------------------------------------


def controls_for(
    ip, code: str, budget: float = 0.2
) -> tuple[ABControls, jupyter_brrr.Report, Handle]:
    report = jupyter_brrr.profile(lambda: ip.user_ns["x"].cos())
    handle = Handle()
    controls = cell_controls(ip, code, name="cell [t]", report=report, handle=handle)
    controls.budget.value = budget
    return controls, report, handle


def test_magic_shows_controls_in_a_kernel(ip, monkeypatch) -> None:
    monkeypatch.setattr(magic, "_widgets_enabled", lambda shell: True)
    _, out = run(ip, "x * 3")
    assert len(out.outputs) == 2  # the report, then the controls as their own output
    assert MIME_TYPE in out.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in out.outputs[1].data
    _, quiet = run(ip, "x * 3", "--quiet")
    assert quiet.outputs == []
    _, with_ab = run(ip, "x * 3", "--ab graph --ab-budget 0.05")
    assert all("application/vnd.jupyter.widget-view+json" not in o.data for o in with_ab.outputs)


def test_no_cuda_disables_the_graph_button_with_the_reason(ip) -> None:
    controls, _, _ = controls_for(ip, "x.cos()")
    if cuda:
        assert not controls.graph_button.disabled
    else:
        assert controls.graph_button.disabled
        assert "needs a CUDA GPU" in controls.graph_button.tooltip
        assert "needs a CUDA GPU" in controls.graph_reason.value
    assert "re-runs this cell at most" in controls.estimate.value
    assert list(controls.mode.options) == [
        "default",
        "reduce-overhead",
        "max-autotune-no-cudagraphs",
        "max-autotune",
    ]


@pytest.mark.slow
def test_try_compile_button_runs_the_ab_and_updates_the_report(ip) -> None:
    ip.user_ns.pop("c1", None)
    controls, report, handle = controls_for(ip, "c1 = x.cos()\nc1.cos()")
    controls.compile_button.click()  # returns at once: the A/B runs in a worker thread
    assert controls.running or controls.result is not None
    result = controls.wait(300)
    assert result is not None and not result.cancelled, controls.status.value
    assert controls.error is None
    assert [v.name for v in result.variants] == ["eager", "compile"]
    assert result["compile"].correct is True
    assert report.ab == result.to_dict()
    assert handle.updates == [report]  # the report output was updated in place
    assert "Done:" in controls.status.value
    assert not controls.compile_button.disabled and controls.cancel_button.disabled
    assert "c1" not in ip.user_ns  # the A/B left the namespace as it found it


@pytest.mark.slow
def test_mode_menu_picks_the_compile_mode(ip) -> None:
    controls, _, _ = controls_for(ip, "x.cos() * 3", budget=0.1)
    controls.mode.value = "max-autotune-no-cudagraphs"
    controls.compile_button.click()
    result = controls.wait(300)
    assert [v.name for v in result.variants] == ["eager", "compile:max-autotune-no-cudagraphs"]


def test_stateful_cell_needs_a_confirm_click(ip) -> None:
    ip.user_ns["log"] = []
    controls, report, _ = controls_for(ip, "log.append(1)\nx * 2", budget=0.05)
    # The graph button works on any machine for this check: no CUDA means it fails fast.
    controls.request(["graph"])
    assert not controls.running and controls.result is None
    assert controls.confirm_box.layout.display == "flex"
    assert "looks stateful" in controls.warning.value and "log.append(1)" in controls.warning.value
    assert "would run it up to" in controls.warning.value  # how many runs, at most
    controls.dismiss_button.click()
    assert controls.confirm_box.layout.display == "none" and ip.user_ns["log"] == []
    controls.request(["graph"])
    controls.confirm_button.click()
    result = controls.wait(120)
    assert result is not None and report.ab is not None
    if not cuda:  # (a graph replay runs the kernels, not the Python: it appends nothing)
        assert len(ip.user_ns["log"]) == result.runs_total


def test_cancel_button_stops_the_worker(ip) -> None:
    controls, report, handle = controls_for(ip, "x.cos() + 1", budget=60)
    controls.start(["graph"])
    deadline = time.monotonic() + 30
    while (
        "timing" not in controls.status.value and controls.running and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    controls.cancel_button.click()
    result = controls.wait(30)
    assert not controls.running
    assert result is not None and result.cancelled
    assert "Cancelled after" in controls.status.value
    assert report.ab is None and handle.updates == []  # the report is unchanged
    assert not torch.autograd.profiler._is_profiler_enabled
    value, _ = run(ip, "5 + 5", "--quiet")
    assert value == 10


def test_kernel_interrupt_cancels_a_running_ab() -> None:
    class Kernel:
        saved_sigint_handler = signal.SIG_IGN

    class Shell:
        kernel = Kernel()

    shell = Shell()
    event = threading.Event()
    controls_module._arm_interrupt(shell, event)
    # ipykernel restores this handler when the click's request ends: it is now ours.
    assert shell.kernel.saved_sigint_handler is controls_module._on_sigint
    controls_module._on_sigint(signal.SIGINT, None)
    assert event.is_set()
    controls_module._disarm_interrupt(event)
    event.clear()
    controls_module._on_sigint(signal.SIGINT, None)  # no A/B running: ignored, as before
    assert not event.is_set()


def test_a_failing_ab_leaves_the_controls_usable(ip) -> None:
    controls, report, _ = controls_for(ip, "x.cos()")

    def broken():
        raise RuntimeError("could not build the target")

    controls.make_target = broken
    controls.compile_button.click()
    controls.wait(30)
    assert isinstance(controls.error, RuntimeError)
    assert "could not build the target" in controls.status.value
    assert not controls.compile_button.disabled and report.ab is None


def test_controls_only_where_someone_can_click(monkeypatch) -> None:
    class Kernel:
        _allow_stdin = True

    class Shell:
        kernel = Kernel()

    assert magic._widgets_enabled(Shell())
    Shell.kernel._allow_stdin = False  # nbclient, nbconvert, papermill
    assert not magic._widgets_enabled(Shell())
    assert not magic._widgets_enabled(object())  # a terminal IPython


def test_ab_in_a_notebook_run_by_nbclient(tmp_path, kernel_env) -> None:
    """The flag path in a real kernel: the saved notebook holds the A/B in the report output
    (nbclient applies the display update), and no widget output."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_brrr\nimport torch\nx = torch.randn(1024)"),
        nbformat.v4.new_code_cell("%%brrr --ab graph --ab-budget 0.05\ny = x.cos()\ny"),
    ]
    NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    ).execute(env=kernel_env)
    outputs = nb.cells[1].outputs
    assert not [o for o in outputs if o.output_type == "error"], outputs
    reports = [o for o in outputs if o.output_type == "display_data" and MIME_TYPE in o.data]
    assert len(reports) == 1
    ab = reports[0].data[MIME_TYPE]["ab"]
    assert ab is not None and [v["name"] for v in ab["variants"]] == ["eager", "graph"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "%%brrr --ab: eager vs graph" in text and "done:" in text
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert any(o.output_type == "execute_result" for o in outputs)  # the cell's value, as usual


@pytest.mark.slow
def test_controls_in_a_real_kernel(kernel_env) -> None:
    """The buttons as JupyterLab drives them: comm messages to a real ipykernel. A click starts
    the worker; the report output is updated through its display id; the kernel's interrupt
    (the stop button) cancels a running A/B; the kernel stays usable."""
    import queue

    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", env=kernel_env)
    try:

        def execute(code: str) -> list[dict]:
            msg_id = kc.execute(code, allow_stdin=True)  # as JupyterLab sends it
            msgs = []
            while True:
                m = kc.get_iopub_msg(timeout=120)
                msgs.append(m)
                done = m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                if done and m["parent_header"].get("msg_id") == msg_id:
                    return msgs

        def send(comm_id: str, data: dict) -> None:
            kc.session.send(kc.shell_channel.socket, "comm_msg", {"comm_id": comm_id, "data": data})

        def set_budget(seconds: float) -> None:
            send(budget, {"method": "update", "state": {"value": seconds}, "buffer_paths": []})

        def wait_for(predicate, seconds: float = 120) -> dict:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                try:
                    m = kc.get_iopub_msg(timeout=1)
                except queue.Empty:
                    continue
                if predicate(m):
                    return m
            raise AssertionError("timed out")

        def status_text(m: dict) -> str:
            if m["msg_type"] != "comm_msg":
                return ""
            value = m["content"]["data"].get("state", {}).get("value")
            return value if isinstance(value, str) else ""

        execute("%load_ext jupyter_brrr\nimport torch\nx = torch.randn(4096)")
        msgs = execute("%%brrr\nx.cos().cos()")
        displays = [m["content"] for m in msgs if m["msg_type"] == "display_data"]
        report_id = next(d["transient"]["display_id"] for d in displays if MIME_TYPE in d["data"])
        widget = next(
            d for d in displays if "application/vnd.jupyter.widget-view+json" in d["data"]
        )
        assert "live only in a running kernel" in widget["data"]["text/plain"]
        states = {
            m["content"]["comm_id"]: m["content"]["data"]["state"]
            for m in msgs
            if m["msg_type"] == "comm_open"
        }
        buttons = {
            s.get("description"): c
            for c, s in states.items()
            if s.get("_model_name") == "ButtonModel"
        }
        budget = next(
            c for c, s in states.items() if s.get("_model_name") == "BoundedFloatTextModel"
        )
        assert states[buttons["Try CUDA Graph"]]["disabled"] is (not cuda)

        set_budget(0.2)
        send(buttons["Try torch.compile"], {"method": "custom", "content": {"event": "click"}})
        update = wait_for(lambda m: m["msg_type"] == "update_display_data", 240)
        assert update["content"]["transient"]["display_id"] == report_id
        ab = update["content"]["data"][MIME_TYPE]["ab"]
        assert [v["name"] for v in ab["variants"]] == ["eager", "compile"]
        wait_for(lambda m: status_text(m).startswith("Done:"))

        set_budget(120)
        send(buttons["Try torch.compile"], {"method": "custom", "content": {"event": "click"}})
        wait_for(lambda m: status_text(m).startswith("timing variant"), 240)
        km.interrupt_kernel()
        interrupted = time.monotonic()
        wait_for(lambda m: status_text(m).startswith("Cancelled after"), 30)
        assert time.monotonic() - interrupted < 10  # between runs, not after the 2 x 120 s
        out = execute("print(6 * 7)")
        assert any(m["content"].get("text") == "42\n" for m in out if m["msg_type"] == "stream")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
