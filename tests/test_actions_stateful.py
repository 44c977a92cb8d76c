"""The stateful-code heuristics that make the controls ask before re-running a cell."""

from __future__ import annotations

import pytest

from jupyter_brrr.actions.stateful import cannot_undo, stateful_findings, uses_random


def kinds(source: str) -> dict[int, str]:
    return {f.line: f.kind for f in stateful_findings(source)}


@pytest.mark.parametrize(
    "source",
    [
        "y = model(x)\ny",
        "y = x.cos().cos()",
        "import torch\nx = torch.ones(3)\nx = x * 2\nx.add_(1)\nx += 1\nx",
        "acc = []\nacc.append(1)\nd = {}\nd['a'] = 1\nd.update(b=2)",
        "with torch.no_grad():\n    y = model(x)",
        "def f(t):\n    t.relu_()\n    return t\ny = f(x.clone())",
        "out = [layer(x) for layer in layers]",
    ],
)
def test_pure_cells_have_no_findings(source: str) -> None:
    assert stateful_findings(source) == []


def test_training_step() -> None:
    source = "loss = model(x).sum()\nloss.backward()\nopt.step()\nopt.zero_grad()\n"
    assert kinds(source) == {2: "training", 3: "training", 4: "training"}


def test_in_place_updates_of_outside_tensors() -> None:
    source = (
        "for p in model.parameters():\n"
        "    p.add_(1)\n"
        "    p.data -= 0.1 * p.grad\n"
        "w = model.weight\n"
        "w.mul_(2)\n"
        "torch.nn.init.normal_(bias)\n"
        "state[0] = 1\n"
    )
    assert kinds(source) == {
        2: "in-place",
        3: "in-place",
        5: "in-place",
        6: "in-place",
        7: "mutation",
    }


def test_appends_rebinding_files_globals_iterators() -> None:
    source = (
        "history.append(1)\n"
        "h = layer(h)\n"
        "step += 1\n"
        "with open('log.txt', 'a') as f:\n"
        "    f.write('x')\n"
        "torch.save(model, 'm.pt')\n"
        "global g\n"
        "batch = next(it)\n"
        "os.remove('old.pt')\n"
        "del tmp\n"
    )
    found = kinds(source)
    assert found[1] == "mutation"
    assert found[2] == "rebind" and found[3] == "rebind"
    assert found[4] == "file" and found[5] == "file" and found[6] == "file" and found[9] == "file"
    assert found[7] == "global"
    assert found[8] == "iterator"
    assert found[10] == "delete"


def test_finding_text_names_the_line() -> None:
    (finding,) = stateful_findings("y = 1\nopt.step()\n")
    assert str(finding).startswith("line 2: opt.step()")


def test_syntax_error_gives_nothing() -> None:
    assert stateful_findings("def (") == []


def test_uses_random() -> None:
    assert uses_random("x = torch.randn(3)")
    assert uses_random("y = F.dropout(x, 0.1)")
    assert not uses_random("y = x.cos()")


def test_threads_and_queues_are_found() -> None:
    """A thread the cell starts runs on after a restore: found, and among what no copy puts
    back and what keeps changing; a queue's put and get_nowait change it."""
    from jupyter_brrr.actions.stateful import keeps_changing

    source = (
        "threading.Thread(target=work).start()\n"
        "pool.submit(work)\n"
        "q.put(1)\n"
        "q.get_nowait()\n"
        "t = threading.Timer(1.0, work)\n"
    )
    findings = stateful_findings(source)
    assert kinds(source) == {1: "thread", 2: "thread", 3: "mutation", 4: "mutation", 5: "thread"}
    assert [f.line for f in keeps_changing(findings)] == [1, 2, 5]
    assert [f.line for f in cannot_undo(findings)] == [1, 2, 5]
    assert "starts a thread or process" in str(findings[0])
