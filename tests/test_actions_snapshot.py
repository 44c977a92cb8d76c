"""Snapshots of the state a cell can change, put back in place: real modules, optimizers,
tensors and containers, changed the way an A/B's runs change them."""

from __future__ import annotations

import collections
import io
import itertools
import linecache
import random

import numpy as np
import pytest
import torch

from jupyter_brrr.actions.snapshot import Snapshot, names_used, notebook_functions, survey
from jupyter_brrr.actions.stateful import cannot_undo, notebook_findings


def notebook(code: str) -> dict:
    """A namespace as a notebook's cells leave it: functions defined there have it as globals,
    and their source is in ``linecache`` under the cell's name, as IPython registers it."""
    namespace: dict = {"__name__": "__main__"}
    filename = f"<cell-{next(_cells)}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), namespace)
    return namespace


_cells = itertools.count()


TRAINING = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
opt = torch.optim.Adam(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
inp = torch.randn(8, 4)
weight = model[0].weight          # the user's own reference to a parameter

def train_step():
    loss = model(inp).square().mean()
    loss.backward()
    opt.step()
    sched.step()
    opt.zero_grad()
    return loss

loss = train_step()               # the first, plain run
"""


def test_training_step_is_put_back_as_after_one_run() -> None:
    ns = notebook(TRAINING)
    model, opt = ns["model"], ns["opt"]
    after_one = {k: v.clone() for k, v in model.state_dict().items()}
    state_one = {k: v.clone() for k, v in opt.state[ns["weight"]].items()}
    lr_one = opt.param_groups[0]["lr"]
    snapshot = Snapshot.take(ns, names_used(ns, "loss = train_step()\nloss"))
    assert snapshot.complete
    for _ in range(20):  # what an A/B does
        exec("loss = train_step()", ns)
    assert not torch.equal(model[0].weight, after_one["0.weight"])
    restored = snapshot.restore()
    assert not restored.failed
    assert {"model", "opt", "sched", "loss"} <= set(restored.names)
    for key, value in model.state_dict().items():
        assert torch.equal(value, after_one[key]), key  # weights, running stats, batch count
    # The same objects: the user's reference and the optimizer's keys see the values.
    assert ns["weight"] is model[0].weight and torch.equal(ns["weight"], after_one["0.weight"])
    assert ns["model"] is model and ns["opt"] is opt
    state = opt.state[ns["weight"]]
    assert set(state) == set(state_one)
    for key, value in state_one.items():
        assert torch.equal(state[key], value), key  # exp_avg, exp_avg_sq and the step count
    assert opt.param_groups[0]["lr"] == lr_one and ns["sched"].last_epoch == 1
    assert model[0].weight.grad is None  # zero_grad() left it None after the first run
    # A second restore finds nothing to do.
    again = snapshot.restore()
    assert not again.changed and not again.random_state


def test_in_place_updates_and_shape_changes_are_undone() -> None:
    ns = notebook(
        "import torch\nx = torch.ones(3)\nv = x[:2]\nh = torch.zeros(2, dtype=torch.int64)"
    )
    x, v, h = ns["x"], ns["v"], ns["h"]
    snapshot = Snapshot.take(ns, ["x", "v", "h"])
    for _ in range(5):
        x.add_(1)
    x.unsqueeze_(0)  # an in-place change of shape
    h.data = torch.full((7,), 0.5, dtype=torch.float64)  # of dtype and storage
    restored = snapshot.restore()
    assert ns["x"] is x and x.shape == (3,) and torch.equal(x, torch.ones(3))
    assert torch.equal(v, torch.ones(2)) and v.data_ptr() == x.data_ptr()  # the view sees it
    assert h.dtype == torch.int64 and torch.equal(h, torch.zeros(2, dtype=torch.int64))
    assert restored.changed["x"] == ["tensor"] and "h" in restored.changed


def test_containers_are_put_back_in_place() -> None:
    ns = notebook(
        "import collections\n"
        "seen = []\nseen.append(1)\n"
        "cache = {'a': 1}\ntags = {'x'}\nq = collections.deque([1])\nbuf = bytearray(b'ab')\n"
        "class Box:\n    def __init__(self):\n        self.count = 0\n        self.items = []\n"
        "class Slot:\n    __slots__ = ('n',)\n"
        "box = Box()\nslot = Slot()\nslot.n = 1\n"
        "alias = seen\n"
    )
    snapshot = Snapshot.take(ns, ["seen", "cache", "tags", "q", "buf", "box", "slot"])
    for i in range(4202):
        ns["seen"].append(i)
    ns["cache"]["b"] = 2
    ns["tags"].add("y")
    ns["q"].appendleft(0)
    ns["buf"].extend(b"cd")
    ns["box"].count += 5
    ns["box"].items.append("x")
    ns["box"].extra = True
    ns["slot"].n = 99
    restored = snapshot.restore()
    assert ns["seen"] == [1] and ns["alias"] is ns["seen"]
    assert ns["cache"] == {"a": 1} and ns["tags"] == {"x"} and list(ns["q"]) == [1]
    assert ns["buf"] == bytearray(b"ab")
    assert vars(ns["box"]) == {"count": 0, "items": []} and ns["slot"].n == 1
    assert "list: 4,203 -> 1 items" in restored.describe()


def test_rebound_and_new_names_are_put_back() -> None:
    ns = notebook("import torch\nx = torch.ones(1)\n")
    old = ns["x"]
    snapshot = Snapshot.take(ns, ["x", "y"])
    ns["x"] = ns["x"] + 1  # what ``x = x + 1`` does
    ns["y"] = 3  # a name the runs bound
    restored = snapshot.restore()
    assert ns["x"] is old and "y" not in ns
    assert restored.changed == {"x": ["name rebound"], "y": ["name bound by the runs, removed"]}


def test_gradients_requires_grad_and_inference_tensors() -> None:
    ns = notebook(
        "import torch\n"
        "w = torch.nn.Parameter(torch.ones(3))\n"
        "(w * 2).sum().backward()\n"
        "with torch.inference_mode():\n    cache = torch.zeros(2)\n"
    )
    w, grad = ns["w"], ns["w"].grad
    snapshot = Snapshot.take(ns, ["w", "cache"])
    (w * 2).sum().backward()  # accumulates: 4
    w.requires_grad_(False)
    with torch.inference_mode():
        ns["cache"].add_(5)
    snapshot.restore()
    assert w.requires_grad and w.grad is grad and torch.equal(grad, torch.full((3,), 2.0))
    assert torch.equal(ns["cache"], torch.zeros(2))


def test_random_state_numpy_arrays_and_generators() -> None:
    ns = notebook(
        "import numpy as np, random, torch\n"
        "arr = np.zeros(4)\nrng = np.random.default_rng(0)\ngen = torch.Generator().manual_seed(1)\n"
        "r = random.Random(2)\n"
    )
    torch.manual_seed(3)
    expected = torch.rand(2)
    torch.manual_seed(3)
    snapshot = Snapshot.take(ns, ["arr", "rng", "gen", "r"])
    ns["arr"] += 1
    ns["rng"].random(5)
    torch.rand(3, generator=ns["gen"])
    ns["r"].random()
    torch.rand(7)
    random.random()
    restored = snapshot.restore()
    assert restored.random_state and "the random number generators" in restored.describe()
    assert torch.equal(torch.rand(2), expected)  # the global generator is back too
    assert not ns["arr"].any()
    assert ns["rng"].random() == np.random.default_rng(0).random()
    assert torch.equal(
        torch.rand(1, generator=ns["gen"]),
        torch.rand(1, generator=torch.Generator().manual_seed(1)),
    )
    assert ns["r"].random() == random.Random(2).random()


def test_reset_leaves_the_random_state_alone() -> None:
    ns = notebook("import torch\nx = torch.zeros(2)\n")
    snapshot = Snapshot.take(ns, ["x"])
    ns["x"].add_(1)
    torch.rand(5)
    state = torch.get_rng_state()
    restored = snapshot.reset()
    assert torch.equal(ns["x"], torch.zeros(2)) and not restored.random_state
    assert torch.equal(torch.get_rng_state(), state)


def test_names_used_follow_notebook_functions_and_classes() -> None:
    ns = notebook(
        TRAINING
        + "class Trainer:\n    def run(self):\n        return train_step()\n"
        + "trainer = Trainer()\nunrelated = [1, 2, 3]\n"
    )
    names = names_used(ns, "trainer.run()")
    # Through the method and train_step's globals; attribute names (``.square``) are not names.
    assert {"trainer", "train_step", "model", "inp", "opt", "sched"} <= set(names)
    assert "unrelated" not in names and "square" not in names
    assert [f.__name__ for f in notebook_functions(ns, "loss = train_step()")] == ["train_step"]
    assert "In" not in names_used({"In": []}, "In.append(1)", hidden={"In"})


def test_findings_inside_the_notebook_functions_a_cell_calls() -> None:
    ns = notebook(TRAINING)
    found = notebook_findings(ns, "loss = train_step()\nloss")
    assert {f.kind for f in found} == {"training"}
    assert all(f.function == "train_step" for f in found)
    assert any(str(f).startswith("in train_step(), line 13: opt.step()") for f in found), found
    # A function the cell defines itself is read with the cell, as before.
    assert notebook_findings(ns, "def train_step():\n    return 1\ntrain_step()") == []


def test_what_cannot_be_undone_is_named() -> None:
    ns = notebook("import io\nlog = io.StringIO()\nit = iter(range(10))\n")
    plan = survey(ns, ["log", "it"])
    assert any(item.startswith("log: an open file") for item in plan.irreversible)
    assert any(item.startswith("it: an iterator") for item in plan.irreversible)
    found = notebook_findings(ns, "with open('a.txt', 'a') as f:\n    f.write('x')\nb = next(it)")
    assert [f.kind for f in cannot_undo(found)] == ["file", "file", "iterator"]


def test_too_much_state_is_not_copied_and_says_why() -> None:
    ns = notebook("import torch\nbig = torch.zeros(1000)\nsmall = [1]\n")
    plan = survey(ns, ["big", "small"], max_bytes=100)
    assert not plan.complete and "more than 100 bytes" in plan.limit and "big" in plan.limit
    snapshot = Snapshot.take(ns, ["big", "small"], max_bytes=100)
    assert not snapshot.complete
    ns["small"].append(2)
    ns["big"].add_(1)
    ns["small_rebound"] = 1
    snapshot.restore()  # the bindings only: nothing was copied
    assert ns["small"] == [1, 2] and float(ns["big"][0]) == 1.0


def test_survey_counts_before_copying() -> None:
    ns = notebook(TRAINING)
    plan = survey(ns, names_used(ns, "train_step()"))
    params = sum(p.numel() * p.element_size() for p in ns["model"].state_dict().values())
    assert plan.complete and plan.tensor_bytes >= params
    assert plan.describe().startswith(f"{plan.tensors} tensors (")
    assert "model" in plan.roots and "torch" not in plan.roots


def test_infrastructure_and_library_functions_are_not_walked() -> None:
    class Widget:  # stands in for an object of a package that is not the user's state
        __module__ = "ipywidgets.widgets.widget"

        def __init__(self) -> None:
            self.value = []

    ns = {"__name__": "__main__", "w": Widget(), "f": random.random, "buf": io.BytesIO()}
    plan = survey(ns, ["w", "f"])
    assert plan.containers == 0 and plan.roots == []


def test_equal_values_with_nan_are_not_reported_as_changed() -> None:
    ns = notebook("import torch\nx = torch.tensor([float('nan'), 1.0])\n")
    snapshot = Snapshot.take(ns, ["x"])
    assert snapshot.restore().changed == {}


@pytest.mark.parametrize("kind", ["list", "dict", "set", "deque"])
def test_unchanged_containers_are_left_alone(kind: str) -> None:
    value = {
        "list": [1],
        "dict": {"a": 1},
        "set": {1},
        "deque": collections.deque([1]),
    }[kind]
    snapshot = Snapshot.take({"v": value}, ["v"])
    assert snapshot.restore().changed == {}


def test_the_namespace_itself_is_never_a_container_to_put_back() -> None:
    ns = notebook("class Holder:\n    pass\nholder = Holder()\n")
    ns["holder"].scope = ns  # an object that keeps globals()
    snapshot = Snapshot.take(ns, ["holder"])
    ns["made_later"] = 1  # the user's next cell, say
    snapshot.restore()
    assert ns["made_later"] == 1


# --- every container put back by its own type's semantics ---------------------------------------


class Recording(dict):
    """A dict whose own ``__setitem__`` transforms what it stores: a restore must not go
    through it (the items are put back as they were stored)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, [value])


class Pairs(list):
    def __setitem__(self, index, value) -> None:
        raise AssertionError("a restore must not call a subclass's __setitem__")


def _containers() -> dict:
    import array
    import queue

    import pandas as pd

    recording = Recording()
    dict.__setitem__(recording, "a", 1)
    pq: queue.PriorityQueue = queue.PriorityQueue()
    for n in (5, 1, 3):
        pq.put(n)
    fifo: queue.Queue = queue.Queue()
    fifo.put("first")
    lifo: queue.LifoQueue = queue.LifoQueue()
    lifo.put("top")
    return {
        "counter": collections.Counter({"n": 5, "m": 1}),
        "ordered": collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)]),
        "default": collections.defaultdict(list, {"k": [1]}),
        "recording": recording,
        "plain": {"x": 1},
        "tags": {"x", "y"},
        "frozen": frozenset({1}),
        "items": [1, 2],
        "pairs": Pairs([1, 2]),
        "window": collections.deque([1, 2], maxlen=3),
        "buf": bytearray(b"ab"),
        "doubles": array.array("d", [1.5, 2.5]),
        "codes": array.array("b", [1]),
        "values": np.arange(4.0),
        "objects": np.array([[1], "s"], dtype=object),
        "t": torch.arange(3.0),
        "fifo": fifo,
        "lifo": lifo,
        "heap": pq,
        "frame": pd.DataFrame({"n": [1, 2], "s": ["a", "b"]}, index=pd.Index([10, 20], name="i")),
        "series": pd.Series([1.0, float("nan")], name="col"),
    }


def _change_every_container(ns: dict) -> None:
    """What an A/B's runs do to them, each by its own methods."""
    ns["counter"].update({"n": 1, "new": 2})
    ns["counter"]["m"] -= 1
    ns["ordered"].move_to_end("a")  # the same items, another order
    ns["default"].default_factory = set
    ns["default"]["new"].add(1)
    ns["recording"]["b"] = 2
    ns["plain"]["x"] = 2
    ns["tags"].discard("x")
    ns["tags"].add("z")
    ns["items"].append(3)
    list.append(ns["pairs"], 3)
    ns["window"].append(3)
    ns["window"].append(4)  # past maxlen: the first item falls out
    ns["buf"].extend(b"cd")
    ns["doubles"].append(3.5)
    ns["doubles"][0] = -1.0
    ns["codes"].pop()
    ns["values"] += 1
    ns["objects"][1] = "changed"
    ns["t"].mul_(2)
    ns["fifo"].put("second")
    ns["fifo"].get()
    ns["fifo"].task_done()
    ns["lifo"].put("new top")
    ns["heap"].get()
    ns["heap"].put(0)
    ns["frame"].loc[10, "n"] = 99
    ns["frame"]["added"] = 1.0
    ns["frame"].attrs["note"] = "set by a run"
    ns["series"].iloc[1] = 2.0
    ns["series"].name = "renamed"


def _state_of(ns: dict) -> dict:
    """Everything a container holds, as its type defines it (order, factory, counts)."""
    import copy

    def queue_state(q) -> tuple:
        return type(q), list(q.queue), q.unfinished_tasks

    state = {}
    for name, value in ns.items():
        if name.startswith("__"):
            continue
        if hasattr(value, "mutex"):
            state[name] = queue_state(value)
        elif isinstance(value, (np.ndarray, torch.Tensor)):
            state[name] = (type(value), value.dtype, value.shape, value.tolist())
        elif hasattr(value, "to_dict") and hasattr(value, "attrs"):  # pandas
            state[name] = (type(value), value.copy(deep=True), dict(value.attrs))
        else:
            extra = getattr(value, "default_factory", None)
            items = list(value.items()) if isinstance(value, dict) else value
            state[name] = (type(value), copy.deepcopy(items), extra)
    return state


def _same_state(a: dict, b: dict) -> None:
    import pandas as pd

    assert a.keys() == b.keys()
    for name in a:
        if isinstance(a[name][1], (pd.DataFrame, pd.Series)):
            (ta, fa, attrs_a), (tb, fb, attrs_b) = a[name], b[name]
            assert ta is tb and attrs_a == attrs_b, name
            # values, dtypes, labels and their dtypes and names, the Series' name, exactly
            check = (
                pd.testing.assert_frame_equal
                if ta is pd.DataFrame
                else pd.testing.assert_series_equal
            )
            check(fa, fb, check_exact=True)
        else:
            assert a[name] == b[name], name


def test_every_container_type_comes_back_exactly_as_its_type_defines_it() -> None:
    """The issue's Counter({'n': 5}) came back as Counter({('n', 5): 1}): ``clear`` then
    ``Counter.update(pairs)``, which counts. Each type round-trips: its items, their order where
    the type keeps one, a defaultdict's factory, a queue's unfinished tasks, a frame's dtypes,
    labels and attrs; in the same objects; and a second change and restore too."""
    ns = {"__name__": "__main__", **_containers()}
    objects = {name: value for name, value in ns.items() if not name.startswith("__")}
    before = _state_of(ns)
    snapshot = Snapshot.take(ns, list(objects))
    assert snapshot.complete
    for _ in range(2):  # between runs (reset) and at the end (restore)
        _change_every_container(ns)
        restored = snapshot.restore()
        assert restored.failed == [] and restored.differ == [], restored
        assert all(ns[name] is value for name, value in objects.items())
        _same_state(_state_of(ns), before)
    assert ns["counter"] == collections.Counter({"n": 5, "m": 1})
    assert list(ns["ordered"]) == ["a", "b", "c"] and ns["default"].default_factory is list
    assert dict.__getitem__(ns["recording"], "a") == 1 and "b" not in ns["recording"]
    assert ns["heap"].get() == 1  # still a heap
    changed = restored.describe()
    assert "counter (Counter: 3 -> 2 items)" in changed and "ordered (OrderedDict)" in changed
    assert "doubles (array.array: 3 -> 2 items)" in changed and "fifo (queue)" in changed
    assert "frame (DataFrame)" in changed and "series (Series)" in changed


def test_a_restore_through_a_subclass_override_is_not_taken() -> None:
    ns = {"pairs": Pairs([1])}
    snapshot = Snapshot.take(ns, ["pairs"])
    list.append(ns["pairs"], 2)
    snapshot.restore()  # Pairs.__setitem__ would raise
    assert list(ns["pairs"]) == [1]


def test_a_numpy_array_that_changed_shape_is_said_not_put_back() -> None:
    ns = {"a": np.zeros(3)}
    snapshot = Snapshot.take(ns, ["a"])
    ns["a"].resize(5, refcheck=False)
    restored = snapshot.restore()
    assert restored.failed and "cannot take another shape in place" in restored.failed[0]
    assert restored.differ == ["a (array)"] and not restored.exact


# --- state the cell changes without naming it -------------------------------------------------


def test_a_hook_defined_in_the_notebook_has_its_globals_put_back() -> None:
    """The cell names only the model; the forward hook it fires appends to a list of the
    notebook: that list is state too."""
    ns = notebook(
        "import torch\n"
        "acts = []\n"
        "def keep(module, args, out):\n    acts.append(out.sum())\n"
        "model = torch.nn.Linear(2, 2)\n"
        "model.register_forward_hook(keep)\n"
        "x = torch.ones(1, 2)\n"
        "model(x)\n"
    )
    snapshot = Snapshot.take(ns, names_used(ns, "model(x)"))
    assert "acts" in snapshot.survey.names
    for _ in range(50):
        ns["model"](ns["x"])
    restored = snapshot.restore()
    assert len(ns["acts"]) == 1 and "acts (list: 51 -> 1 items)" in restored.describe()


def test_globals_of_the_user_s_own_module_are_put_back(tmp_path, monkeypatch) -> None:
    """A ``helpers.py`` beside the notebook: what its functions append to and rebind is put back;
    an installed package's globals are not walked."""
    import importlib
    import sys

    (tmp_path / "helpers_state.py").write_text(
        "seen = []\ncalls = 0\n"
        "def record(x):\n    global calls\n    calls += 1\n    seen.append(x)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    helpers = importlib.import_module("helpers_state")
    try:
        ns = notebook("")
        ns["helpers"] = helpers
        ns["np"] = np
        helpers.record(1)
        snapshot = Snapshot.take(ns, names_used(ns, "helpers.record(1)\nnp.pi"))
        for i in range(100):
            helpers.record(i)
        restored = snapshot.restore()
        assert helpers.seen == [1] and helpers.calls == 1
        assert "helpers_state.seen (list: 101 -> 1 items)" in restored.describe()
        assert "helpers_state.calls (name rebound)" in restored.describe()
        assert not any(root.startswith("numpy") for root in snapshot.survey.roots)
    finally:
        sys.modules.pop("helpers_state", None)


def test_module_attributes_the_cell_assigns_are_put_back() -> None:
    import types

    lib = types.ModuleType("lib")  # stands in for an installed module: no file of the user's
    inner = types.ModuleType("lib.inner")
    inner.__dict__["level"] = 0
    lib.__dict__.update(flag=False, inner=inner)  # a module's attributes, set as an import does
    ns = notebook("")
    ns["lib"] = lib
    source = "lib.flag = not lib.flag\nlib.inner.level += 1"
    assert {"lib.flag", "lib.inner.level"} <= set(names_used(ns, source))
    snapshot = Snapshot.take(ns, names_used(ns, source))
    for _ in range(3):
        exec(source, ns)
    snapshot.restore()
    assert lib.flag is False and lib.inner.level == 0


def test_class_attributes_of_the_notebook_s_classes_are_put_back() -> None:
    ns = notebook(
        "class Counter:\n    total = 0\n    registry = []\n"
        "    def bump(self):\n        type(self).total += 1\n        self.registry.append(1)\n"
        "c = Counter()\n"
    )
    snapshot = Snapshot.take(ns, names_used(ns, "c.bump()"))
    for _ in range(10):
        ns["c"].bump()
    ns["Counter"].added = True
    restored = snapshot.restore()
    assert ns["Counter"].total == 0 and ns["Counter"].registry == []
    assert not hasattr(ns["Counter"], "added")
    assert "class attributes" in restored.describe()


def test_os_environ_is_put_back(monkeypatch) -> None:
    import os

    monkeypatch.setenv("BRRR_TEST_KEPT", "1")
    monkeypatch.delenv("BRRR_TEST_NEW", raising=False)
    snapshot = Snapshot.take({"__name__": "__main__"}, [])
    os.environ["BRRR_TEST_KEPT"] = "changed"
    os.environ["BRRR_TEST_NEW"] = "x"
    restored = snapshot.restore()
    assert os.environ["BRRR_TEST_KEPT"] == "1" and "BRRR_TEST_NEW" not in os.environ
    assert "os.environ (2 variables)" in restored.describe()


def test_queues_whose_items_cannot_be_read_cannot_be_restored() -> None:
    import queue

    ns = {"__name__": "__main__", "q": queue.SimpleQueue(), "box": {"inner": queue.SimpleQueue()}}
    plan = survey(ns, ["q", "box"])
    assert len(plan.cannot_restore) == 2
    assert plan.cannot_restore[0].startswith("q: a queue.SimpleQueue, whose items cannot be copied")


def test_what_changes_again_after_the_restore_is_named_not_claimed() -> None:
    """An object whose finalizer puts a new one of itself into a list each time one is let go:
    every restore of the list lets one go, so the list never holds what the copy holds. The
    check after the restore says so (rather than "put back")."""
    ns = notebook(
        "calm = False\n"
        "class Ghost:\n"
        "    def __del__(self):\n        if not calm:\n            haunted.append(Ghost())\n"
        "haunted = []\n"
    )
    snapshot = Snapshot.take(ns, ["haunted", "Ghost"])
    ns["haunted"].append(ns["Ghost"]())
    restored = snapshot.restore()
    assert restored.differ == ["haunted (list)"] and not restored.exact
    assert "not put back: haunted (list) differ from the copy" in restored.problems()[0]
    ns["calm"] = True
    ns["haunted"].clear()


def test_a_finalizer_that_changes_state_once_is_put_back_too() -> None:
    """A restore lets go of the runs' objects; their finalizers may change what was already
    put back. The check finds it, and the second pass puts it back: then the claim holds."""
    ns = notebook(
        "class Noisy:\n    def __del__(self):\n        freed.append(1)\nfreed = []\nitems = []\n"
    )
    snapshot = Snapshot.take(ns, ["freed", "items", "Noisy"])
    ns["items"].append(ns["Noisy"]())
    restored = snapshot.restore()
    assert ns["freed"] == [] and ns["items"] == [] and restored.exact


def test_threads_the_runs_started_are_named() -> None:
    import threading

    ns = notebook(
        "import threading\nstop = threading.Event()\nticks = []\n"
        "def spin():\n    while not stop.wait(0.001):\n        ticks.append(1)\n"
    )
    snapshot = Snapshot.take(ns, ["ticks", "spin"])
    worker = threading.Thread(target=ns["spin"], name="spinner", daemon=True)
    worker.start()
    try:
        restored = snapshot.restore()
        assert restored.threads == ["thread spinner (spin())"] and not restored.exact
        assert "still running: thread spinner (spin())" in " ".join(restored.problems())
    finally:
        ns["stop"].set()
        worker.join()
