"""``%%brrr`` in a real IPython shell, with a real torch.profiler run (CPU here)."""

from __future__ import annotations

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import CapturedIO, capture_output

import jupyter_brrr
from jupyter_brrr.schema.report import MIME_TYPE


@pytest.fixture(scope="module")
def ip(ipython_shell):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    return ipython_shell


def run(ip, code: str, line: str = "") -> tuple[object, CapturedIO]:
    with capture_output() as out:
        value = ip.run_cell_magic("brrr", line, code)
    return value, out


def test_cell_runs_like_a_plain_cell(ip) -> None:
    value, out = run(ip, "import torch\nx = torch.ones(64, 64)\ny = x @ x\ny.sum().item()")
    assert value == 64.0 * 64 * 64
    assert torch.equal(ip.user_ns["y"], torch.full((64, 64), 64.0))
    report = ip.user_ns["_brrr"]
    assert isinstance(report, jupyter_brrr.Report)
    assert report.summary["runs"]["total"] == 1
    assert "aten::mm" in set(report.ops["name"])
    # The displayed output is one bundle with the renderer's data and the static fallbacks.
    bundle = out.outputs[0].data
    assert MIME_TYPE in bundle and "text/html" in bundle and "text/plain" in bundle
    assert "No GPU work was recorded" in bundle["text/plain"]


def test_trailing_semicolon_hides_the_value(ip) -> None:
    value, _ = run(ip, "a = 3\na + 1;")
    assert value is None and ip.user_ns["a"] == 3


def test_warmup_and_repeat_count_runs(ip) -> None:
    ip.user_ns["calls"] = []
    run(ip, "calls.append(1)\ntorch.ones(8) * 2", "--warmup 2 --repeat 3 --quiet")
    assert len(ip.user_ns["calls"]) == 2 + 3 + 1
    runs = ip.user_ns["_brrr"].summary["runs"]
    assert runs == {"warmup": 2, "timed": 3, "profiled": 1, "total": 6}
    assert ip.user_ns["_brrr"].summary["warm"] is True
    assert ip.user_ns["_brrr"].summary["span_source"] == "host_clock_unprofiled"


def test_the_profiled_run_starts_from_the_cells_bindings_before_it(ip) -> None:
    # Warm-up and timed runs each leave y bound (as a plain re-run does); the profiled run must
    # not hold theirs, or its memory peak counts two outputs.
    ip.user_ns.update(refs=[], held=[], n=0)
    ip.user_ns.pop("y", None)
    cell = (
        "import weakref\n"
        "held.append(sum(r() is not None for r in refs))\n"
        "y = torch.ones(4096) * 2\n"
        "refs.append(weakref.ref(y))\n"
        "n = n + 1"
    )
    run(ip, cell, "--warmup 1 --repeat 2 --quiet")
    assert ip.user_ns["held"] == [0, 1, 1, 0]
    assert ip.user_ns["refs"][-1]() is ip.user_ns["y"]  # the variables are the profiled run's
    assert ip.user_ns["n"] == 1  # as after one plain run


def test_the_report_names_its_timing_protocol(ip) -> None:
    run(ip, "torch.ones(8) * 2", "--warmup 1 --repeat 3 --burst --quiet")
    report = ip.user_ns["_brrr"]
    assert report.summary["timing"]["protocol"] == "burst"
    assert report.summary["runs"] == {"warmup": 1, "timed": 3, "profiled": 1, "total": 5}
    assert report.summary["timing"]["timed_runs"] == 3
    with pytest.raises(UsageError, match="--burst changes the warm-up"):
        ip.run_cell_magic("brrr", "--burst", "1")


def test_quiet_shows_nothing_and_name_is_kept(
    ip, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a named run's history goes beside "the notebook": here
    _, out = run(ip, "torch.ones(4) + 1", "--quiet --name mine")
    assert out.outputs == []
    assert ip.user_ns["_brrr"].name == "mine"


def test_single_run_says_it_includes_first_run_costs(ip) -> None:
    run(ip, "torch.ones(4) + 1", "--quiet")
    assert any("first-run costs" in note for note in ip.user_ns["_brrr"].notes)


def test_help_runs_nothing(ip) -> None:
    ip.user_ns["ran"] = False
    value, out = run(ip, "ran = True", "--help")
    assert value is None and ip.user_ns["ran"] is False
    assert "--warmup" in out.stdout and "--repeat" in out.stdout and "--cpu" in out.stdout
    assert "--burst" in out.stdout
    # As the usage of an error (below): the cell magic named as it is typed, no reST "::" line;
    # the same for IPython's own help (%%brrr?), which prints the magic's docstring.
    for text in (out.stdout, ip.find_cell_magic("brrr").__doc__):
        assert text.startswith("usage: %%brrr [-h] [--warmup N]"), text[:200]
        assert "::" not in [line.strip() for line in text.splitlines()]
        assert "\n  %brrr [" not in text and "::\n" not in text
        assert "Profile the GPU work of this cell" in text and "--sweep-budget" in text


@pytest.mark.parametrize("line", ["--bogus", "--warmup x", "--repeat 0", "--warmup -1"])
def test_bad_flags_print_usage(ip, line: str) -> None:
    with pytest.raises(UsageError, match="--warmup") as raised:
        ip.run_cell_magic("brrr", line, "1")
    # The usage names the cell magic (two %), as the user types it, with no reST "::" line
    # (IPython's help formatter writes one before the usage).
    message = str(raised.value)
    assert "usage: %%brrr [-h] [--warmup N]" in message
    assert "::" not in message.splitlines() and "\n  %brrr" not in message


def test_empty_cell(ip) -> None:
    value, out = run(ip, "   \n")
    assert value is None and "empty" in out.stdout


def test_cell_without_torch_ops(ip) -> None:
    value, out = run(ip, "z = sum(range(10))\nz")
    assert value == 45
    assert "no torch operations" in out.stdout


def test_error_is_reraised_with_partial_report(ip) -> None:
    code = "import torch\nw = torch.ones(8, 8) @ torch.ones(8, 8)\nraise ValueError('boom in cell')"
    with capture_output() as out, pytest.raises(ValueError, match="boom in cell") as info:
        ip.run_cell_magic("brrr", "", code)
    # The traceback reaches the cell's own line.
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    filename, line = frames[-1]
    assert filename.startswith("<ipython-input") or "ipykernel" in filename or "/tmp" in filename
    assert line == 3  # the raise, the cell's third line
    assert torch.equal(ip.user_ns["w"], torch.full((8, 8), 8.0))
    report = ip.user_ns["_brrr"]
    assert "aten::mm" in set(report.ops["name"])
    assert any("raised an error" in note for note in report.notes)
    assert out.outputs, "the partial report is shown"
    assert not torch.autograd.profiler._is_profiler_enabled


def test_error_in_shell_shows_the_cell_line(ip) -> None:
    with capture_output() as out:
        result = ip.run_cell("%%brrr\nimport torch\nq = torch.ones(2)\n1 / 0\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "1 / 0" in out.stdout + out.stderr


def test_keyboard_interrupt_stops_profiler(ip) -> None:
    with capture_output(), pytest.raises(KeyboardInterrupt):
        ip.run_cell_magic("brrr", "", "torch.ones(3) * 2\nraise KeyboardInterrupt")
    assert not torch.autograd.profiler._is_profiler_enabled
    value, _ = run(ip, "5 + 5", "--quiet")
    assert value == 10


def test_out_of_memory_error_explains_and_kernel_stays_usable(ip) -> None:
    code = "big = torch.ones(16)\nraise torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 80 GiB')"
    with capture_output(), pytest.raises(torch.cuda.OutOfMemoryError) as info:
        ip.run_cell_magic("brrr", "", code)
    assert any("ran out of memory" in note for note in info.value.__notes__)  # pyright: ignore[reportAttributeAccessIssue]  # set on 3.10 too
    value, _ = run(ip, "6 * 7", "--quiet")
    assert value == 42


def test_hundred_runs_leave_no_profiler_active(ip) -> None:
    for _ in range(100):
        run(ip, "torch.ones(4) + 1", "--quiet")
    assert not torch.autograd.profiler._is_profiler_enabled
    # A fresh profiler can still start: none is left holding Kineto.
    with torch.profiler.profile() as prof:
        torch.ones(2) + 1
    events = prof.events()
    assert events is not None and len(events) > 0


def test_cpu_flag(ip) -> None:
    run(ip, "torch.ones(4) + 1", "--cpu --quiet")
    assert ip.user_ns["_brrr"].summary["device"] == "CPU"


def test_report_is_named_after_the_cells_prompt(ip) -> None:
    # IPython counts the next cell before this one runs: the name must use this cell's number.
    prompt = ip.execution_count
    with capture_output():
        ip.run_cell("%%brrr --quiet\ntorch.ones(2) + 1", store_history=True)
    assert ip.user_ns["_brrr"].name == f"cell [{prompt}]"


def test_a_printing_cell_prints_once_however_often_it_runs(ipython_shell) -> None:
    # --warmup 2 --repeat 3 runs the cell 6 times: its output is the first run's, as a plain
    # cell's, and the rest is counted.
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_cell("import torch\nfrom IPython.display import display")
    with capture_output() as out:
        ipython_shell.run_cell_magic(
            "brrr",
            "--warmup 2 --repeat 3",
            "print('from the cell')\ndisplay('shown by the cell')\ny = torch.ones(8).cos()",
        )
    assert out.stdout.count("from the cell") == 1
    assert sum("shown by the cell" in str(o.data) for o in out.outputs) == 1
    assert "its other runs' (5 lines and 5 displays) is not shown" in out.stdout
    with capture_output() as out:
        ipython_shell.run_cell("print('a plain cell prints')")
    assert out.stdout == "a plain cell prints\n"  # the streams are the shell's again


def test_top_level_await_runs_as_in_a_plain_cell(ipython_shell) -> None:
    # IPython runs a plain cell's top-level await (autoawait); so does %%brrr, each run of it.
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_cell("import asyncio\nimport torch")
    with capture_output():
        value = ipython_shell.run_cell_magic(
            "brrr",
            "--warmup 1 --repeat 2",
            "await asyncio.sleep(0)\ny = torch.ones(4).cos()\nawait asyncio.sleep(0, result=y.sum())",
        )
    assert float(value) == pytest.approx(4 * torch.tensor(1.0).cos().item())
    assert ipython_shell.user_ns["_brrr"].summary["runs"]["total"] == 4
    ipython_shell.run_line_magic("autoawait", "False")  # as a plain cell then: a SyntaxError
    try:
        with pytest.raises(SyntaxError), capture_output():
            ipython_shell.run_cell_magic("brrr", "", "await asyncio.sleep(0)")
    finally:
        ipython_shell.run_line_magic("autoawait", "True")


@pytest.mark.slow
def test_top_level_await_in_a_kernel(tmp_path, kernel_env) -> None:
    # In a kernel, its event loop runs the cell that runs the magic: the cell's awaits run in a
    # loop of their own, and the kernel's loop serves the next cells as before.
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_brrr\nimport asyncio\nimport torch"),
        nbformat.v4.new_code_cell(
            "%%brrr --warmup 1 --repeat 2\nawait asyncio.sleep(0.001)\n"
            "y = torch.ones(4).cos()\nawait asyncio.sleep(0, result=float(y.sum()))"
        ),
        nbformat.v4.new_code_cell("await asyncio.sleep(0.001, result='the kernel awaits')"),
    ]
    NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    ).execute(env=kernel_env)
    brrr, after = nb.cells[1].outputs, nb.cells[2].outputs
    assert not [o for o in brrr + after if o.output_type == "error"], brrr + after
    assert any(MIME_TYPE in o.get("data", {}) for o in brrr)
    value = next(o for o in brrr if o.output_type == "execute_result")
    assert float(value.data["text/plain"]) == pytest.approx(4 * torch.tensor(1.0).cos().item())
    assert after[0].data["text/plain"] == "'the kernel awaits'"


def test_a_quoted_name_is_one_name_in_every_command(
    ip, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One parser (POSIX quotes) for the cell's --name and the line's names: "my model" is the
    # name my model in each, where the cell kept the quotes and forget found no runs.
    from jupyter_brrr.report.comparison import Comparison
    from jupyter_brrr.report.history import History, store_for

    monkeypatch.chdir(tmp_path)
    ip.run_cell("import torch")
    run(ip, "torch.ones(4) + 1", '--quiet --name "my model"')
    run(ip, "torch.ones(4) + 1", "--quiet --name 'my model'")
    assert ip.user_ns["_brrr"].name == "my model"
    assert store_for(tmp_path).names() == ["my model"]
    with capture_output():
        runs = ip.run_line_magic("brrr", 'history "my model"')
        change = ip.run_line_magic("brrr", "diff 'my model' 1 2")
    assert isinstance(runs, History) and len(runs) == 2 and isinstance(change, Comparison)
    with capture_output() as out:
        ip.run_line_magic("brrr", 'forget "my model"')
    assert "the runs of 'my model' are gone (2 stored file(s) deleted)" in out.stdout
    assert store_for(tmp_path).names() == []


def test_a_damaged_run_file_costs_a_message_not_the_name(
    ip, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from jupyter_brrr.report import history

    monkeypatch.chdir(tmp_path)
    ip.run_cell("import torch")
    run(ip, "torch.ones(4) + 1", "--name mine")
    damaged = tmp_path / history.STORE_DIRNAME / "mine" / "run-0002.json.gz"
    damaged.write_bytes(
        gzip.compress(
            b'{"schema": "jupyter_brrr.history_run", "version": 1, "name": "mine", "run": 1e999}'
        )
    )
    history._stores.clear()  # a restarted kernel reads the store again
    with capture_output() as out:
        ip.run_cell_magic("brrr", "--name mine", "torch.ones(4) + 1")
    assert "run-0002.json.gz could not be read" in out.stdout
    assert [row["run"] for row in ip.user_ns["_brrr"].history] == [1, 3]
    history._stores.clear()
    with capture_output() as out:
        runs = ip.run_line_magic("brrr", "history mine")
    assert [r.run for r in runs] == [1, 3] and "run-0002.json.gz" in out.stdout


def test_an_error_in_the_cell_shows_the_cells_own_traceback(ip) -> None:
    """As in a plain cell: the cell's number and line, the cell's frames, and none of
    jupyter_brrr's own (the capture, the timed run, the runner of the cell)."""
    ip.run_cell("import torch", store_history=True)
    number = ip.execution_count
    with capture_output() as out:
        result = ip.run_cell(
            "%%brrr\ny = torch.ones(3)\nraise ValueError('boom in the cell')\n",
            store_history=True,
        )
    assert isinstance(result.error_in_exec, ValueError)
    shown = out.stdout + out.stderr
    assert f"Cell In[{number}], line 2" in shown, shown
    assert "----> 2 raise ValueError('boom in the cell')" in shown
    assert "jupyter_brrr" not in shown.split("Traceback", 1)[1], shown


@pytest.mark.parametrize(
    "flags",
    ["--sweep n=2,4", "--name tb_remeasure", "--ab compile --ab-budget 0.5"],
    ids=["sweep", "remeasure", "ab"],
)
def test_an_error_shows_the_cells_own_traceback_on_every_path(ip, flags: str) -> None:
    """The sweep, a named (re-measured) run and an A/B run the cell through other frames of
    jupyter_brrr than the plain capture: the error still reads as in a plain cell."""
    ip.run_cell("import torch\nn = 2", store_history=True)
    number = ip.execution_count
    with capture_output() as out:
        result = ip.run_cell(
            f"%%brrr {flags}\ny = torch.ones(n)\nraise ValueError('boom in the cell')\n",
            store_history=True,
        )
    assert isinstance(result.error_in_exec, ValueError)
    shown = out.stdout + out.stderr
    assert f"Cell In[{number}], line 2" in shown, shown
    assert "----> 2 raise ValueError('boom in the cell')" in shown
    frames = [line for line in shown.splitlines() if line.startswith("File ")]
    assert not [line for line in frames if "jupyter_brrr" in line], shown


def test_memory_lists_the_cell_lines_that_allocated(ip) -> None:
    """The Memory tab's largest allocations name the cell's line that made each (the line a
    torch function was called from), not the first line of the cell's code (0)."""
    cell = "import torch\na = torch.ones(512, 512)\n\nb = torch.zeros(1024, 1024)\n"
    run(ip, cell, "--memory --cpu")
    memory = ip.user_ns["_brrr"].memory
    rows = [
        dict(zip(memory["largest"]["columns"], r, strict=True)) for r in memory["largest"]["data"]
    ]
    lines = {r["bytes"]: r["line"] for r in rows}
    assert lines[4 * 1024 * 1024] == "cell:4" and lines[4 * 512 * 512] == "cell:2", rows
