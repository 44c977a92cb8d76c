"""A cell as a function for the A/B: it must behave like the plain cell over the namespace."""

from __future__ import annotations

import pytest
import torch

from jupyter_brrr.actions.cell_function import UNSET, CellNotSupported
from jupyter_brrr.actions.variants import describe_error, error_line
from jupyter_brrr.notebook.notebook_cell import NotebookCell


@pytest.fixture(scope="module")
def ip(ipython_shell):
    return ipython_shell


def cell_target(shell, text: str):
    """The function form of a cell, as the A/B builds it."""
    return NotebookCell.from_shell(shell, text).function()


def test_variables_and_last_value(ip) -> None:
    ip.user_ns.update(x=torch.ones(3), scale=2.0)
    target = cell_target(ip, "y = x * scale\nz = y + 1\nz.sum()")
    assert target.params == ("y", "z")
    assert target.has_value
    value = target.run()
    assert value.item() == 9.0
    assert torch.equal(ip.user_ns["z"], torch.full((3,), 3.0))


def test_without_a_last_expression_the_output_is_the_bound_names(ip) -> None:
    ip.user_ns["x"] = torch.ones(2)
    target = cell_target(ip, "a = x + 1\nb = a * 2")
    out = target.run()
    assert set(out) == {"a", "b"} and torch.equal(out["b"], torch.full((2,), 4.0))
    assert cell_target(
        ip, "c = x + 1\nc;"
    ).has_value  # a trailing expression with ; is still the output


def test_reads_the_previous_value_like_a_plain_rerun(ip) -> None:
    ip.user_ns["counter"] = 1
    target = cell_target(ip, "counter = counter + 1")
    target.run()
    target.run()
    assert ip.user_ns["counter"] == 3


def test_imports_defs_loops_and_handlers(ip) -> None:
    source = (
        "import math as m\n"
        "from os import path\n"
        "def twice(v):\n"
        "    return 2 * v\n"
        "total = 0\n"
        "for i in range(3):\n"
        "    total += twice(i)\n"
        "try:\n"
        "    1 / 0\n"
        "except ZeroDivisionError as err:\n"
        "    caught = True\n"
        "squares = [k * k for k in range(3)]\n"
        "total"
    )
    target = cell_target(ip, source)
    assert "err" not in target.params and "k" not in target.params
    assert target.run() == 6
    ns = ip.user_ns
    assert ns["m"].pi > 3 and ns["twice"](2) == 4 and ns["i"] == 2 and ns["caught"] is True
    assert ns["squares"] == [0, 1, 4]


def test_global_statement_and_conditional_names(ip) -> None:
    ip.user_ns.pop("maybe", None)
    target = cell_target(ip, "global g\ng = 5\nif False:\n    maybe = 1\ng")
    assert "g" not in target.params
    assert target.run() == 5
    assert ip.user_ns["g"] == 5
    assert "maybe" not in ip.user_ns  # never bound: not written as UNSET
    assert UNSET is not None


def test_del_removes_the_name(ip) -> None:
    ip.user_ns["tmp"] = 1
    target = cell_target(ip, "y2 = tmp + 1\ndel tmp")
    target.run()
    assert "tmp" not in ip.user_ns and ip.user_ns["y2"] == 2


def test_snapshot_and_restore_put_bindings_back(ip) -> None:
    ip.user_ns["w"] = "before"
    ip.user_ns.pop("fresh", None)
    target = cell_target(ip, "w = 'after'\nfresh = 1")
    snapshot = target.snapshot()
    target.run()
    assert ip.user_ns["w"] == "after"
    target.restore(snapshot)
    assert ip.user_ns["w"] == "before" and "fresh" not in ip.user_ns


def test_line_magics_in_the_cell_work(ip) -> None:
    target = cell_target(ip, "%env BRRR_TEST_VAR=1\nv = 3\nv")
    assert target.run() == 3


@pytest.mark.parametrize("source", ["from math import *\ny = pi", "await something()"])
def test_unsupported_cells(ip, source: str) -> None:
    with pytest.raises(CellNotSupported):
        cell_target(ip, source)


def test_errors_point_at_the_cell_line(ip) -> None:
    ip.user_ns["x"] = torch.ones(2)
    target = cell_target(ip, "y = x + 1\nz = y.sum().item()\nq = 1 / 0\nq")
    with pytest.raises(ZeroDivisionError) as info:
        target.run()
    assert error_line(info.value, target.home_files) == "line 3: q = 1 / 0"


def test_error_line_follows_the_cause_chain(ip) -> None:
    """A failed CUDA graph capture ends in torch's error at the end of capture; the user's line is
    in the error that broke the capture (its __context__)."""
    target = cell_target(
        ip, "y = 1\nraise RuntimeError('operation not permitted when stream is capturing')"
    )
    try:
        try:
            target.run()
        finally:
            raise RuntimeError(
                "CUDA error: operation failed due to a previous error during capture"
            )
    except RuntimeError as error:
        outer = error
    assert error_line(outer, target.home_files) == (
        "line 2: raise RuntimeError('operation not permitted when stream is capturing')"
    )
    text = describe_error(outer)
    assert text.startswith("CUDA graph capture failed") and ".item()" in text
    assert "operation not permitted when stream is capturing" in text


def test_error_line_from_dynamo_message(ip) -> None:
    """torch.compile fails while tracing, before the cell's frame runs: the line is in the message."""
    target = cell_target(ip, "a = 1\nb = a + 1\nc = b * 2")
    error = RuntimeError(
        f'Unsupported: ...\nfrom user code:\n   File "{target.filename}", line 2, in f\n'
    )
    assert error_line(error, target.home_files) == "line 2: b = a + 1"
