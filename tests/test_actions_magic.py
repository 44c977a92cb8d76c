"""The A/B in the notebook: ``%%brrr --ab`` and the controls under a report (buttons clicked
from Python, the worker thread waited for), in a real IPython shell on CPU."""

from __future__ import annotations

import copy
import json
import re
import signal
import threading
import time
import warnings

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import jupyter_brrr
from jupyter_brrr.actions import ab as ab_module
from jupyter_brrr.actions.timing import MIN_ROUNDS
from jupyter_brrr.notebook import controls as controls_module
from jupyter_brrr.notebook import magic, shell
from jupyter_brrr.notebook.controls import ABControls, cell_controls
from jupyter_brrr.notebook.notebook_cell import NotebookCell
from jupyter_brrr.schema.report import MIME_TYPE

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
    assert out.stdout.count("side effect") == 1  # the first run's; the A/B's runs' counted
    assert any(n.startswith("Output: the A/B's") for n in report.ab["notes"])
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


TRAINING_SETUP = """
import torch
lin = torch.nn.Linear(1, 1, bias=False)
torch.nn.init.constant_(lin.weight, 1.0)
opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
inp = torch.ones(4, 1)
counter = torch.ones(1)
grown = []
weight = lin.weight
"""
# The cases in one cell: a training step, x.add_(1), a list that grows, a file written.
TRAINING_CELL = (
    "loss = lin(inp).sum()\nloss.backward()\nopt.step()\nopt.zero_grad()\n"
    "counter.add_(1)\ngrown.append(1)\n"
    "with open(log_path, 'a') as log:\n    log.write('x')\nloss.detach()"
)


def training_state(ip) -> tuple:
    ns = ip.user_ns
    momentum = ns["opt"].state[ns["weight"]]["momentum_buffer"]
    with open(ns["log_path"]) as log:
        writes = log.read().count("x")
    weight = float(ns["weight"].detach())
    return weight, float(momentum), float(ns["counter"]), len(ns["grown"]), writes


@pytest.fixture
def training(ip, tmp_path):
    ip.run_cell(TRAINING_SETUP)
    ip.user_ns["log_path"] = str(tmp_path / "log.txt")
    return ip


def test_ab_never_reruns_a_stateful_cell_without_the_flag(training) -> None:
    ip = training
    _, out = run(ip, TRAINING_CELL, "--ab graph --ab-budget 0.05 --quiet")
    # One plain run: weight 1 - 0.1 * 4, the momentum buffer, the counter, the list, the file.
    assert training_state(ip) == pytest.approx((0.6, 4.0, 2.0, 1, 1))
    # Said even with --quiet: what was found, what the flag does, what cannot be undone.
    text = out.stdout
    assert "not run: the cell looks stateful" in text and "line 3: opt.step()" in text
    assert "line 5: counter.add_(1)" in text and "line 6: grown.append(1)" in text
    assert "--ab-stateful restore" in text and "--ab-stateful keep" in text
    assert "every run would do again: line 7; line 8 (files, iterators)" in text
    assert ip.user_ns["_brrr"].ab is None


def test_ab_stateful_restore_puts_everything_back(training) -> None:
    ip = training
    _, out = run(ip, TRAINING_CELL, "--ab graph --ab-budget 0.05 --ab-stateful restore")
    ab = ip.user_ns["_brrr"].ab
    runs = ab["runs_total"]
    # However slow the machine, eager is timed in at least MIN_ROUNDS rounds (the graph cannot
    # run on a CPU).
    assert runs >= MIN_ROUNDS
    # As after the one plain run, in the same objects; only the file kept the runs' writes.
    assert training_state(ip) == pytest.approx((0.6, 4.0, 2.0, 1, 1 + runs))
    assert ip.user_ns["weight"] is ip.user_ns["lin"].weight
    text = out.stdout
    assert "copied " in text and " in counter, grown, " in text
    assert "cannot be undone: line 8: log.write('x')" in text
    assert "put back as the first run left it: " in text and "grown (list: " in text
    # Each checked run started from the same state: eager's outputs agree with each other.
    eager = ab["variants"][0]
    assert eager["correct"] is True, ab["notes"]
    notes = " ".join(ab["notes"])
    assert "all of it was put back as the first run left it" in notes
    assert "Not undone: line 7" in notes


def test_ab_stateful_keep_leaves_what_the_runs_did(training) -> None:
    ip = training
    _, out = run(ip, TRAINING_CELL, "--ab graph --ab-budget 0.05 --ab-stateful keep")
    runs = ip.user_ns["_brrr"].ab["runs_total"]
    weight, _, counter, grown, writes = training_state(ip)
    assert counter == 2.0 + runs and grown == 1 + runs and writes == 1 + runs
    assert weight < 0.0  # trained further
    assert "--ab-stateful keep: every run changes the cell's state" in out.stdout


def test_ab_finds_state_changed_in_a_notebook_function(training) -> None:
    ip = training
    ip.run_cell(
        "def train_step():\n    loss = lin(inp).sum()\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n    return loss"
    )
    _, out = run(ip, "train_step()", "--ab graph --ab-budget 0.05")
    assert "not run: the cell looks stateful" in out.stdout
    assert "in train_step(), line 4: opt.step()" in out.stdout
    _, out = run(ip, "train_step()", "--ab graph --ab-budget 0.05 --ab-stateful restore")
    assert float(ip.user_ns["weight"].detach()) == pytest.approx(
        0.6 - 0.4 - 0.9 * 0.4 * 0.1 * 10, rel=1e-5
    )


def test_ab_puts_back_state_the_code_did_not_show(ip) -> None:
    """A BatchNorm in training mode updates its running statistics on every forward: the cell
    looks pure, its state changes, and the A/B puts it back."""
    ip.run_cell("bn = torch.nn.BatchNorm1d(4)\nfeatures = torch.randn(16, 4) + 3")
    reference = copy.deepcopy(ip.user_ns["bn"])
    reference(ip.user_ns["features"])
    after_one = reference.running_mean  # one forward, as the plain run of the cell makes
    _, out = run(ip, "bn(features).sum()", "--ab graph --ab-budget 0.05")
    assert "not run" not in out.stdout
    assert torch.equal(ip.user_ns["bn"].running_mean, after_one)  # not after ~1,000 runs
    assert int(ip.user_ns["bn"].num_batches_tracked) == 1
    assert "put back as the first run left it: bn (" in out.stdout


def test_state_too_large_to_copy_is_not_rerun(training, monkeypatch) -> None:
    """Past the memory a copy may take, a stateful cell is refused, by the flag and the button,
    and says what to do; a pure-looking cell still runs."""
    from jupyter_brrr.actions import snapshot

    monkeypatch.setattr(snapshot, "default_max_bytes", lambda: 8)
    ip = training
    _, out = run(ip, TRAINING_CELL, "--ab graph --ab-budget 0.05 --ab-stateful restore")
    assert "not run: the state this cell can change cannot be copied (" in out.stdout
    assert "more than 8 bytes" in out.stdout and "--ab-stateful keep" in out.stdout
    assert training_state(ip) == pytest.approx((0.6, 4.0, 2.0, 1, 1))
    controls, report, _ = controls_for(ip, TRAINING_CELL, budget=0.05)
    assert "The state cannot be copied here" in controls._confirmation_text(["graph"])
    controls.request(["graph"])
    controls.confirm_button.click()
    controls.wait(60)
    assert "Not run: the state this cell can change cannot be copied" in controls.status.value
    assert report.ab is None and training_state(ip) == pytest.approx((0.6, 4.0, 2.0, 1, 1))
    _, out = run(ip, "x * 2", "--ab graph --ab-budget 0.05")
    assert "no copy of the state" in out.stdout and ip.user_ns["_brrr"].ab is not None


def test_ab_stateful_needs_ab(ip) -> None:
    with pytest.raises(UsageError, match="--ab-stateful goes with --ab"):
        ip.run_cell_magic("brrr", "--ab-stateful restore", "1")
    with pytest.raises(UsageError):
        ip.run_cell_magic("brrr", "--ab graph --ab-stateful sure", "1")


def test_ab_keeps_torch_warnings_of_its_own_runs_out_of_the_notebook(ip) -> None:
    """The plain run shows the code's warning; the A/B's runs do not show it again (with an
    'always' filter every run would), and the A/B's notes list it."""
    code = "import warnings\nwarnings.warn('from the cell')\nx * 2"

    def count(shown: list) -> int:
        return sum("from the cell" in str(w.message) for w in shown)

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        run(ip, code, "--quiet")
        assert count(shown) == 1
        run(ip, code, "--ab graph --ab-budget 0.05")
        assert count(shown) == 2  # the second plain run's, none of the A/B's
        assert warnings.showwarning is not ab_module._show_unless_ours  # put back after
    ab = ip.user_ns["_brrr"].ab
    assert ab["runs_total"] > 10
    notes = " ".join(ab["notes"])
    assert (
        "Warnings during the A/B's runs (not printed in the notebook): UserWarning: from the cell ("
        in notes
    )


@pytest.mark.parametrize(
    "line",
    [
        "--ab turbo",
        "--ab compile:fastest",
        "--ab ''",
        "--ab compile --ab-budget 0",
        "--ab compile --ab-budget inf",
        "--ab compile --ab-budget nan",
    ],
)
def test_bad_ab_flags(ip, line: str) -> None:
    with pytest.raises(UsageError, match="--ab"):
        ip.run_cell_magic("brrr", line, "1")


def test_a_target_beyond_a_double_is_refused(ip) -> None:
    with pytest.raises(UsageError, match="--target: The target '1e999ms' is beyond"):
        ip.run_cell_magic("brrr", "--target 1e999ms", "1")


def test_help_documents_the_ab_syntax(ip) -> None:
    _, out = run(ip, "1", "--help")
    assert "--ab VARIANTS" in out.stdout and "compile:MODE" in out.stdout
    assert "reduce-overhead" in out.stdout and "--ab-budget" in out.stdout


def test_ctrl_c_during_the_ab_stops_it_and_leaves_the_kernel_usable(ip) -> None:
    ip.user_ns["hits"] = [0]
    code = "hits[0] += 1\nif hits[0] == 3:\n    raise KeyboardInterrupt\nx + 1"
    with capture_output() as out, pytest.raises(KeyboardInterrupt):
        ip.run_cell_magic("brrr", "--ab graph --ab-budget 0.05 --ab-stateful restore", code)
    assert "interrupted" in out.stdout
    assert ip.user_ns["hits"] == [1]  # put back as the plain run left it
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
    monkeypatch.setattr(magic, "widgets_enabled", lambda shell: True)
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
        assert "needs a CUDA GPU" in str(controls.graph_button.tooltip)
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
    assert controls.cancel_button.layout.display == "none"  # "Done" stands alone
    assert "c1" not in ip.user_ns  # the A/B left the namespace as it found it


def test_the_buttons_and_the_flag_leave_the_same_results(ip) -> None:
    """One A/B entry point: a click, like --ab, puts the result in the report, in its output
    and in _brrr_ab, and plans its runs from the same estimate."""
    ip.user_ns.pop("_brrr_ab", None)
    controls, report, handle = controls_for(ip, "x.cos() - 1", budget=0.1)
    planned = controls.estimate_runs(["graph"])
    assert planned == ab_module.estimate_runs(
        ["graph"], report.summary["span_s"] or report.summary["wall_s"], budget_s=0.1
    )
    controls.request(["graph"])  # on a machine without CUDA the graph fails fast: still a result
    result = controls.wait(120)
    assert result is not None and not result.cancelled, controls.status.value
    assert result.runs_total <= planned
    assert ip.user_ns["_brrr_ab"] is result
    assert report.ab == result.to_dict() and handle.updates == [report]
    ip.user_ns.pop("_brrr_ab")
    run(ip, "x.cos() - 1", "--ab graph --ab-budget 0.1")
    flag_result = ip.user_ns["_brrr_ab"]
    assert ip.user_ns["_brrr"].ab == flag_result.to_dict()
    assert [v.name for v in flag_result.variants] == [v.name for v in result.variants]


@pytest.mark.slow
def test_mode_menu_picks_the_compile_mode(ip) -> None:
    controls, _, _ = controls_for(ip, "x.cos() * 3", budget=0.1)
    controls.mode.value = "max-autotune-no-cudagraphs"
    controls.compile_button.click()
    result = controls.wait(300)
    assert result is not None
    assert [v.name for v in result.variants] == ["eager", "compile:max-autotune-no-cudagraphs"]


def test_stateful_cell_needs_a_confirm_click(ip) -> None:
    ip.user_ns["log"] = []
    controls, report, _ = controls_for(ip, "log.append(1)\nx * 2", budget=0.05)
    # The graph button works on any machine for this check: no CUDA means it fails fast.
    controls.request(["graph"])
    assert not controls.running and controls.result is None
    assert controls.confirm_box.layout.display == "flex"
    warning = controls.warning.value
    assert "looks stateful" in warning and "log.append(1)" in warning
    assert "would run it up to" in warning  # how many runs, at most
    assert "Before the A/B, " in warning and " in log" in warning  # what is copied and put back
    assert "Cannot be undone" not in warning
    assert controls.confirm_button.description == "Run, then put state back"
    controls.dismiss_button.click()
    assert controls.confirm_box.layout.display == "none" and ip.user_ns["log"] == []
    controls.request(["graph"])
    controls.confirm_button.click()
    result = controls.wait(120)
    assert result is not None and report.ab is not None
    assert result.runs_total > 10
    assert ip.user_ns["log"] == []  # put back as it was before the A/B
    assert "Put back as the first run left it: log (list: " in controls.status.value


def test_confirmation_says_what_cannot_be_undone(ip, tmp_path) -> None:
    ip.user_ns["out_path"] = str(tmp_path / "out.txt")
    controls, _, _ = controls_for(ip, "with open(out_path, 'a') as f:\n    f.write('x')\nx * 2")
    controls.request(["graph"])
    warning = controls.warning.value
    assert "<b>Cannot be undone</b>, every run does it again:" in warning
    assert "f.write(&#x27;x&#x27;)" in warning  # escaped
    controls.dismiss_button.click()
    assert not (tmp_path / "out.txt").exists()  # nothing ran


def test_cancel_button_stops_the_worker(ip) -> None:
    # 2 x 600 s of timing if nothing stopped it; the waits are generous for a loaded machine
    # and still well short of that.
    controls, report, handle = controls_for(ip, "x.cos() + 1", budget=600)
    assert controls.cancel_button.layout.display == "none"  # nothing to cancel yet
    controls.start(["graph"])
    deadline = time.monotonic() + 120
    while (
        "timing" not in controls.status.value and controls.running and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    assert "timing" in controls.status.value
    assert controls.cancel_button.layout.display is None  # shown while it runs
    controls.cancel_button.click()
    result = controls.wait(300)
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


def test_a_failing_ab_leaves_the_controls_usable(ip, monkeypatch) -> None:
    controls, report, _ = controls_for(ip, "x.cos()")

    def broken(self):
        raise RuntimeError("could not build the target")

    monkeypatch.setattr(NotebookCell, "function", broken)
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

    assert shell.widgets_enabled(Shell())
    Shell.kernel._allow_stdin = False  # nbclient, nbconvert, papermill
    assert not shell.widgets_enabled(Shell())
    assert not shell.widgets_enabled(object())  # a terminal IPython


def test_ab_in_a_notebook_run_by_nbclient(tmp_path, kernel_env) -> None:
    """The flag path in a real kernel: the saved notebook holds the A/B in the report output
    (nbclient applies the display update), and no widget output."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_brrr\nimport torch\nx = torch.randn(1024)"),
        # A cell that prints and displays: the A/B runs it hundreds of times.
        nbformat.v4.new_code_cell(
            "%%brrr --ab graph --ab-budget 0.05\nprint('from the cell')\n"
            "display('shown by the cell')\ny = x.cos()\ny"
        ),
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
    # The cell's output is its first run's, once; the A/B's runs' is counted, not saved.
    assert text.count("from the cell") == 1
    shown = [o for o in outputs if "shown by the cell" in o.get("data", {}).get("text/plain", "")]
    assert len(shown) == 1
    assert re.search(r"the A/B's runs' \([\d,]+ lines and [\d,]+ displays\) is not shown", text)
    assert any(n.startswith("Output: the A/B's") for n in ab["notes"])
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

        set_budget(600)  # the most the box takes: 2 x 600 s of timing, if nothing stopped it
        send(buttons["Try torch.compile"], {"method": "custom", "content": {"event": "click"}})
        wait_for(lambda m: status_text(m).startswith("timing variant"), 240)
        km.interrupt_kernel()
        # Between runs, not after the budget: a wait generous for a loaded machine, and still
        # well short of the 2 x 600 s.
        wait_for(lambda m: status_text(m).startswith("Cancelled after"), 300)
        out = execute("print(6 * 7)")
        assert any(m["content"].get("text") == "42\n" for m in out if m["msg_type"] == "stream")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.slow
def test_ab_compile_leaves_no_dynamo_names_in_the_namespace(ip) -> None:
    # Dynamo installs __compiled_fn_*, __resume_at_* ... into the globals of the code it
    # compiles: the cell's namespace. The A/B's private copy of the cell is never run again, so
    # its names go; those of the user's own compiled function stay, and it still runs.
    ip.run_cell("own = torch.compile(lambda t: t.sin() * 2)\nown_out = own(x)")
    theirs = {n for n in ip.user_ns if n.startswith("__compiled_fn")}
    assert theirs  # the user's own compile put its names there
    before = set(ip.user_ns)
    run(ip, "y = x.cos()\nprint('a graph break')\nz = y.cos()\nz", "--ab compile --ab-budget 0.2")
    assert ip.user_ns["_brrr"].ab["variants"][1]["graph_breaks"]  # resume functions were made
    added = {n for n in set(ip.user_ns) - before if n.startswith("__")}
    assert added == set(), added
    assert theirs <= set(ip.user_ns)
    assert torch.equal(ip.user_ns["own"](ip.user_ns["x"]), ip.user_ns["own_out"])


@pytest.mark.slow
def test_reset_after_an_ab_compile_prints_no_tracebacks(ip) -> None:
    # %reset empties the namespace; when Dynamo's compiled code then goes (torch._dynamo.reset,
    # the kernel's end), its cleanup hooks delete the names they installed: the A/B's must not
    # fail for finding them gone.
    import gc
    import sys

    torch._dynamo.reset()  # compiled code of earlier tests goes, while its names are there
    gc.collect()
    run(ip, "y = x.cos()\nprint('a graph break')\nz = y.cos()\nz", "--ab compile --ab-budget 0.2")
    unraisable: list = []
    saved, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        with capture_output() as out:
            assert ip.run_cell("%reset -f").success
            torch._dynamo.reset()
            gc.collect()
    finally:
        sys.unraisablehook = saved
        ip.run_cell("import torch\nx = torch.randn(4096)")  # as the fixture made it
    assert [u.exc_value for u in unraisable] == [] and "Traceback" not in out.stderr
