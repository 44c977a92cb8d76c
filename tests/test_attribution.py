"""Which module and which line ran each op: real profiler runs on the CPU, through profile() and
%%brrr in a real IPython shell."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from IPython.utils.capture import capture_output
from torch import nn

import jupyter_brrr
from jupyter_brrr.analysis import modules
from jupyter_brrr.capture import attribution
from jupyter_brrr.report.report import Report
from jupyter_brrr.trace.events import read_trace


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(32, 32)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x)) + x  # the line the block's ops come from


def model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(Block(), Block(), nn.Linear(32, 4))


def hook_counts() -> tuple[int, int]:
    from torch.nn.modules import module as hooks

    return len(hooks._global_forward_pre_hooks), len(hooks._global_forward_hooks)


def recorded_ops(report: Report) -> pd.DataFrame:
    """The op calls of the trace a profiled run wrote (it keeps one: asserted)."""
    assert report.trace_path is not None
    return read_trace(report.trace_path).ops


def test_profile_attributes_each_op_to_its_module_path() -> None:
    net, x = model(), torch.randn(8, 32)
    before = hook_counts()
    report = jupyter_brrr.profile(net, x)
    assert hook_counts() == before  # the hooks are gone
    calls = recorded_ops(report)
    addmm = calls[calls["name"] == "aten::addmm"]
    assert list(addmm["module"]) == ["Sequential.0.fc", "Sequential.1.fc", "Sequential.2"]
    gelu = calls[calls["name"] == "aten::gelu"]
    assert list(gelu["module"]) == ["Sequential.0.act", "Sequential.1.act"]
    # The op table groups the two blocks' calls: their paths become one pattern.
    table = report.ops.set_index(["name", "shapes"])
    assert table.loc[("aten::gelu", "[[8, 32], []]"), "module"] == "Sequential.*.act"
    assert not calls["name"].str.startswith(attribution.MODULE_PREFIX).any()


def test_the_module_tree_adds_up_each_subtree() -> None:
    net, x = model(), torch.randn(8, 32)
    report = jupyter_brrr.profile(lambda: net(x).sum())  # the closure's module, by its name
    tree = report.modules.set_index("path")
    assert {"net", "net.0", "net.0.fc", "net.0.act", "net.1", "net.2", ""} <= set(tree.index)
    assert tree.loc["net", "depth"] == 0 and tree.loc["net.0.fc", "parent"] == "net.0"
    calls = recorded_ops(report)
    direct = calls.groupby("module").agg(calls=("name", "size"), self_cpu=("self_cpu_s", "sum"))
    for path in tree.index:
        children = tree[(tree["parent"] == path) & (tree.index != "")]
        own = direct.loc[path] if path in direct.index else None
        own_calls = int(own["calls"]) if own is not None else 0
        own_cpu = float(own["self_cpu"]) if own is not None else 0.0
        assert tree.loc[path, "self_cpu_time_s"] == pytest.approx(own_cpu)
        if path:
            assert tree.loc[path, "calls"] == own_calls + children["calls"].sum()
            assert tree.loc[path, "cpu_time_s"] == pytest.approx(
                own_cpu + children["cpu_time_s"].sum()
            )
    # The sum of the result ran outside every module: under "".
    assert tree.loc["", "depth"] == -1 and tree.loc["", "calls"] == direct.loc["", "calls"]
    json_tree = jupyter_brrr.Report.from_json(report.to_json()).modules
    assert list(json_tree["path"]) == list(report.modules["path"])


def test_the_hooks_go_even_when_the_forward_raises() -> None:
    class Broken(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise RuntimeError("broken on purpose")

    net = nn.Sequential(nn.Linear(4, 4), Broken())
    before = hook_counts()
    with pytest.raises(RuntimeError, match="broken on purpose"):
        jupyter_brrr.profile(net, torch.randn(2, 4))
    assert hook_counts() == before


def test_compiled_code_in_reach_turns_the_hooks_off() -> None:
    net = model()
    compiled = torch.compile(net)  # not called: nothing compiles here
    found = attribution.for_call(compiled, (torch.randn(2, 32),), {})
    assert found.paths == {} and "torch.compile" in found.compiled
    step = torch.compile(lambda t: t * 2)
    assert "torch.compile'd function" in attribution.for_call(step, (), {}).compiled
    cell = compile("y = compiled(x)", "<cell>", "exec")
    namespace = {"compiled": compiled, "x": torch.randn(2, 32)}
    assert attribution.for_code(cell, namespace).compiled
    plain = attribution.for_code(compile("y = net(x)", "<cell>", "exec"), {"net": net})
    assert not plain.compiled and plain.paths[id(net[0].fc)] == "net.0.fc"
    with plain.active():
        pass
    assert plain.notes == []
    with found.active():
        pass
    assert "recompile" in found.notes[0]


def test_modules_are_found_through_functions_and_objects() -> None:
    net = model()

    class Trainer:
        def __init__(self) -> None:
            self.model = net

    namespace = {"trainer": Trainer(), "torch": torch}

    def step() -> torch.Tensor:
        return namespace["trainer"].model(torch.randn(2, 32))

    found = attribution.for_code(compile("out = trainer.model(x)", "<cell>", "exec"), namespace)
    assert found.paths[id(net[1].act)] == "trainer.model.1.act"
    # A module held by a variable and by a bigger model is named by its place in the model.
    both = {"block": net[0], "net": net}
    found = attribution.for_code(compile("net(x); block(x)", "<cell>", "exec"), both)
    assert found.paths[id(net[0].fc)] == "net.0.fc"


def test_path_patterns() -> None:
    assert modules.path_pattern(["m.h.0.fc", "m.h.1.fc", "m.h.11.fc"]) == "m.h.*.fc"
    assert modules.path_pattern(["m.a", "m.a"]) == "m.a"
    assert modules.path_pattern(["m.h.0.fc", "m.head"]) == "m.*"
    assert modules.path_pattern(["", "m.x"]) == "m.x"
    assert modules.path_pattern([]) == ""


def test_stack_marks_the_user_s_line() -> None:
    net, x = model(), torch.randn(8, 32)
    report = jupyter_brrr.profile(net, x, stack=True)
    calls = recorded_ops(report)
    line = Block.forward.__code__.co_firstlineno + 1  # the forward's one line
    add = calls[calls["name"] == "aten::add"]
    assert set(add["line"]) == {f"test_attribution.py:{line}"}
    table = report.ops[report.ops["name"] == "aten::add"]
    assert table["line"].iloc[0] == f"test_attribution.py:{line}"
    assert not calls["name"].str.startswith(attribution.LINE_PREFIX).any()


# --- %%brrr ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ip(ipython_shell):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.user_ns["net"] = model()
    ipython_shell.user_ns["x"] = torch.randn(8, 32)
    return ipython_shell


def brrr(ip, code: str, line: str = "--quiet") -> jupyter_brrr.Report:
    with capture_output():
        ip.run_cell_magic("brrr", line, code)
    return ip.user_ns["_brrr"]


def test_the_magic_attributes_ops_to_the_cell_s_modules(ip) -> None:
    report = brrr(ip, "y = net(x)")
    calls = recorded_ops(report)
    assert set(calls.loc[calls["name"] == "aten::addmm", "module"]) == {
        "net.0.fc",
        "net.1.fc",
        "net.2",
    }
    assert "net" in set(report.modules["path"])


def test_stack_gives_the_cell_s_line_and_no_modules_turns_them_off(ip) -> None:
    report = brrr(ip, "a = x * 2\nb = net(a)\nc = b.sum()", "--quiet --stack --no-modules")
    calls = recorded_ops(report)
    source = dict(zip(calls["name"], calls["line"], strict=False))
    assert source["aten::mul"] == "cell:1"
    assert source["aten::addmm"] == "cell:2"  # the call into the model, from the cell
    assert source["aten::sum"] == "cell:3"
    assert (calls["module"] == "").all()
    assert report.modules.empty


def test_the_ranges_read_the_same_with_either_reader(monkeypatch) -> None:
    # The compiled reader sets jupyter_brrr's ranges apart once per distinct name, msgspec's
    # path per event: the same tables either way.
    from jupyter_brrr.trace import events

    net, x = model(), torch.randn(8, 32)
    path = jupyter_brrr.profile(net, x, stack=True).trace_path
    assert path is not None
    compiled = read_trace(path)
    monkeypatch.setattr(events, "_scan", None)
    reference = read_trace(path)
    for table in ("ops", "annotations"):
        assert getattr(compiled, table).equals(getattr(reference, table)), table
    assert set(compiled.ops["module"]) >= {"Sequential.0.fc", "Sequential.2"}
