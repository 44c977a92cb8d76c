"""What the A/B (``%%brrr --ab``), the sweep (``--sweep``) and ``--memory`` do to the user's
state, in a real IPython shell on the CPU: each runs the cell many times, and afterwards every
kind of state is as one plain run leaves it (or as before the cell, for a restored sweep), or it
was named before anything ran and only ``keep`` runs the cell. The claim "put back" is checked.
"""

from __future__ import annotations

import os
import sys
import time

import pytest
from IPython.utils.capture import capture_output

import jupyter_brrr
from jupyter_brrr.notebook.controls import cell_controls

AB = "--ab graph --ab-budget 0.05"  # on the CPU the graph fails at once; eager is timed
SWEEP = "--sweep n=1,2 --warmup 1 --repeat 2"


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "jupyter_brrr")
    shell.run_cell("import torch\nx = torch.randn(256)\nn = 1")
    return shell


def run(ip, code: str, line: str = ""):
    with capture_output() as out:
        ip.run_cell_magic("brrr", line, code)
    return out


SETUP = """
import array, collections, os, queue
import pandas as pd
tally = collections.Counter({'n': 5})
order = collections.OrderedDict([('a', 1), ('b', 2)])
q = queue.Queue()
doubles = array.array('d')
class Tally:
    calls = 0
frame = pd.DataFrame({'n': [0, 0]})
os.environ.pop('BRRR_STATE_RUNS', None)
"""
# Each line changes one kind of state that the issue found kept (or corrupted) after the A/B.
CELL = """
tally['n'] += 1
order.move_to_end('a')
q.put(1)
doubles.append(1.0)
Tally.calls += 1
frame.loc[0, 'n'] += 1
os.environ['BRRR_STATE_RUNS'] = str(int(os.environ.get('BRRR_STATE_RUNS', '0')) + 1)
y = x * n
"""


def state(ip) -> dict:
    ns = ip.user_ns
    return {
        "tally": dict(ns["tally"]),
        "tally type": type(ns["tally"]).__name__,
        "order": list(ns["order"]),
        "q": ns["q"].qsize(),
        "doubles": list(ns["doubles"]),
        "calls": ns["Tally"].calls,
        "frame": ns["frame"]["n"].tolist(),
        "environ": os.environ.get("BRRR_STATE_RUNS"),
    }


AFTER_ONE_RUN = {
    "tally": {"n": 6},
    "tally type": "Counter",
    "order": ["b", "a"],
    "q": 1,
    "doubles": [1.0],
    "calls": 1,
    "frame": [1, 0],
    "environ": "1",
}
BEFORE_THE_CELL = {
    "tally": {"n": 5},
    "tally type": "Counter",
    "order": ["a", "b"],
    "q": 0,
    "doubles": [],
    "calls": 0,
    "frame": [0, 0],
    "environ": None,
}


@pytest.fixture
def stateful(ip):
    ip.run_cell(SETUP)
    assert state(ip) == BEFORE_THE_CELL
    yield ip
    os.environ.pop("BRRR_STATE_RUNS", None)


def test_the_ab_puts_every_kind_of_state_back_exactly(stateful) -> None:
    """A Counter (which came back as ``Counter({('n', 5): 1})``), an OrderedDict's order, a
    queue.Queue, an array.array, a class attribute, a DataFrame updated in place and
    os.environ: as one run leaves them, after hundreds of runs."""
    ip = stateful
    out = run(ip, CELL, f"{AB} --ab-stateful restore")
    runs = ip.user_ns["_brrr"].ab["runs_total"]
    assert runs > 5
    assert state(ip) == AFTER_ONE_RUN
    notes = " ".join(ip.user_ns["_brrr"].ab["notes"])
    assert "all of it was put back as the first run left it" in notes and "checked" in notes
    text = out.stdout
    assert "put back as the first run left it: " in text
    for said in ("tally (Counter)", "q (queue: ", "Tally (class attributes)", "frame (DataFrame)"):
        assert said in text, said
    assert "os.environ (1 variable)" in text


def test_a_restored_sweep_puts_every_kind_of_state_back_as_before_the_cell(stateful) -> None:
    ip = stateful
    out = run(ip, CELL, f"{SWEEP} --sweep-stateful restore")
    assert ip.user_ns["_brrr_sweep"].runs_total > 10
    assert state(ip) == BEFORE_THE_CELL
    assert "not put back" not in out.stdout


def test_memory_puts_every_kind_of_state_back_after_its_run(stateful) -> None:
    ip = stateful
    run(ip, CELL, "--memory")
    assert ip.user_ns["_brrr"].memory is not None
    assert state(ip) == AFTER_ONE_RUN


HOOKED = """
acts = []
def keep(module, args, out):
    acts.append(out.sum())
lin = torch.nn.Linear(4, 4)
lin.register_forward_hook(keep)
inp = torch.ones(2, 4)
"""


def test_a_list_filled_by_a_notebook_hook_is_put_back(ip) -> None:
    """The cell names only ``lin``; the forward hook of the notebook that it fires appends to
    ``acts``: neither flagged nor restored before (thousands of entries after the A/B)."""
    ip.run_cell(HOOKED)
    run(ip, "lin(inp)", AB)
    assert ip.user_ns["_brrr"].ab["runs_total"] > 5
    assert len(ip.user_ns["acts"]) == 1
    ip.run_cell(HOOKED)
    run(ip, "lin(inp) * n", SWEEP)
    assert ip.user_ns["_brrr_sweep"].runs_total > 10
    assert ip.user_ns["acts"] == []  # as before the cell: none of the sweep's runs' entries
    assert ip.user_ns["n"] == 2  # the sweep's variable keeps its last size
    ip.run_cell(HOOKED)
    run(ip, "lin(inp)", "--memory")
    assert len(ip.user_ns["acts"]) == 1


HELPERS = """
import threading
import time

seen = []
release = threading.Event()

def record(value):
    seen.append(value)

def _later():
    release.wait(30)
    seen.append('late')

def start_worker():
    threading.Thread(target=_later, name='brrr-late', daemon=True).start()
"""


@pytest.fixture
def helpers(ip, tmp_path, monkeypatch):
    """A module of the user's own, beside the notebook."""
    (tmp_path / "brrr_state_helpers.py").write_text(HELPERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    ip.run_cell("import brrr_state_helpers as helpers")
    module = sys.modules["brrr_state_helpers"]
    yield module
    module.release.set()  # the threads' late appends, before the module goes
    time.sleep(0.2)
    sys.modules.pop("brrr_state_helpers", None)


def test_a_global_of_the_user_s_module_is_put_back(ip, helpers) -> None:
    run(ip, "helpers.record(1)\nx * 2", AB)
    assert ip.user_ns["_brrr"].ab["runs_total"] > 5
    assert helpers.seen == [1]
    run(ip, "helpers.record(n)\nx * n", SWEEP)
    assert ip.user_ns["_brrr_sweep"].runs_total > 10
    assert helpers.seen == [1]  # as before the cell: none of the sweep's runs' records


def test_threads_the_runs_left_running_are_named_not_claimed_put_back(ip, helpers) -> None:
    """The thread starts in the user's module, where the cell's check does not look: the A/B
    runs, and says after that the threads its runs started still run (they append when they
    are let go, after the restore)."""
    out = run(ip, "helpers.start_worker()\nx * 2", AB)
    notes = " ".join(ip.user_ns["_brrr"].ab["notes"])
    threads = ip.user_ns["_brrr"].ab["runs_total"]  # one per run, each waiting to append
    assert f"Still running: {threads:,} threads brrr-late (_later()), started by the runs" in notes
    assert "all of it was put back" not in notes
    assert f"still running: {threads:,} threads brrr-late (_later())" in out.stdout


THREADED = """
import threading, time
ticks = []
def tick_later():
    time.sleep(0.3)
    ticks.append(1)
"""
THREAD_CELL = "threading.Thread(target=tick_later, daemon=True).start()\nx * n"


def test_a_cell_that_starts_a_thread_runs_again_only_with_keep(ip) -> None:
    """What the thread does after a restore cannot be put back: named before running, and
    ``restore`` refused (it would claim what does not hold); ``keep`` is the way."""
    ip.run_cell(THREADED)
    out = run(ip, THREAD_CELL, AB)
    text = out.stdout
    assert "not run: the cell looks stateful" in text
    assert "starts a thread or process" in text
    assert "No copy can put back what it changes" in text and "--ab-stateful keep" in text
    assert ip.user_ns["_brrr"].ab is None
    out = run(ip, THREAD_CELL, f"{AB} --ab-stateful restore")
    assert "not run: the cell changes state that no copy can put back" in out.stdout
    assert ip.user_ns["_brrr"].ab is None
    # The buttons: the confirmation names it, and a confirmed click runs nothing.
    report = jupyter_brrr.profile(lambda: ip.user_ns["x"].cos())
    controls = cell_controls(ip, THREAD_CELL, name="cell [t]", report=report, handle=None)
    controls.budget.value = 0.05
    confirmation = controls._confirmation_text(["graph"])
    assert "<b>No copy can put back</b>" in confirmation and "starts a thread" in confirmation
    controls.request(["graph"])
    controls.confirm_button.click()
    controls.wait(60)
    assert "Not run: the cell changes state that no copy can put back" in controls.status.value
    out = run(ip, THREAD_CELL, f"{SWEEP} --sweep-stateful restore")
    assert "not run: the cell changes state that no copy can put back" in out.stdout
    out = run(ip, THREAD_CELL, f"{SWEEP}")
    assert "--sweep-stateful keep" in out.stdout and "The cell did not run." in out.stdout
    time.sleep(0.4)
    assert len(ip.user_ns["ticks"]) == 2  # the two A/B cells' plain runs' threads, no more
    assert ip.run_cell("print('still usable')").success


def test_a_queue_whose_items_cannot_be_read_is_named_and_refused(ip) -> None:
    ip.run_cell("import queue\nsq = queue.SimpleQueue()")
    out = run(ip, "sq.put(1)\nx * 2", f"{AB} --ab-stateful restore")
    assert "not run: the cell changes state that no copy can put back" in out.stdout
    assert "sq: a queue.SimpleQueue, whose items cannot be copied" in out.stdout
    assert ip.user_ns["sq"].qsize() == 1  # the plain run's item only


def test_what_changes_again_after_the_restore_is_said(ip) -> None:
    """Each restore lets go of a Ghost whose finalizer puts a new one in the list: the check
    after the restore finds the list is not as the copy, and the A/B says so."""
    ip.run_cell(
        "calm = False\nhaunted = []\n"
        "class Ghost:\n    def __del__(self):\n        if not calm:\n            haunted.append(Ghost())\n"
    )
    out = run(ip, "haunted.append(Ghost())\nx * 2", f"{AB} --ab-stateful restore")
    notes = " ".join(ip.user_ns["_brrr"].ab["notes"])
    assert "Not put back: haunted (list) differ from the copy after the restore" in notes
    assert "all of it was put back" not in notes
    assert "put back, but not all of it holds: " in out.stdout
    ip.run_cell("calm = True\nhaunted.clear()")
