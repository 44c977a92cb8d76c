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
