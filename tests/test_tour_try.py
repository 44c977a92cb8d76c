"""bench/tour_try_fixes.py's reading of the H200 tour: which cells it tries, runs or skips, and the
magic line it runs them with. Nothing here executes a cell."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from jupyter_brrr.notebook.magic import BrrrMagics, split_line

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import tour_try_fixes  # noqa: E402


def test_plan_of_the_h200_tour():
    cells = tour_try_fixes.plan()
    notebook = json.loads(tour_try_fixes.NOTEBOOK.read_text())["cells"]
    assert [c.index for c in cells] == [
        i for i, c in enumerate(notebook) if c["cell_type"] == "code"
    ]
    by_action = {a: [c.index for c in cells if c.action == a] for a in ("try", "run", "skip")}
    # The six plain %%brrr cells: MLP, cos chain, matmul, block, naive attention, SDPA.
    assert by_action["try"] == [4, 9, 14, 17, 20, 22]
    for index in by_action["try"]:
        assert cells[[c.index for c in cells].index(index)].source.startswith("%%brrr")
    # The sweep, the prefill/decode sweeps, --memory and what reads it, --ab, save_html.
    assert by_action["skip"] == [26, 28, 30, 31, 33, 35]
    # Set-up cells and cheap reads of the last report still run (later cells need them).
    assert {1, 3, 8, 13, 16, 19} <= set(by_action["run"])
    assert all(c.why for c in cells if c.action == "skip")


def test_classify_rules():
    assert tour_try_fixes.classify("%%brrr --warmup 1\nx = 1") == ("try", "")
    assert tour_try_fixes.classify("%%brrr --name a --target 1ms\nx = 1") == ("try", "")
    for line in ("%%brrr --sweep batch=8..64", "%%brrr --ab=compile", "%%brrr --memory"):
        assert tour_try_fixes.classify(f"{line}\nx = 1")[0] == "skip"
    assert tour_try_fixes.classify("s = jupyter_brrr.sweep(f, [1, 2])")[0] == "skip"
    assert tour_try_fixes.classify("_brrr_memory.table")[0] == "skip"
    assert tour_try_fixes.classify("_brrr.what_if()") == ("run", "")
    assert tour_try_fixes.classify("import torch\n%load_ext jupyter_brrr") == ("run", "")


def test_try_fixes_line_is_accepted_by_the_magic():
    cell = "%%brrr --name attention --warmup 1 --repeat 5 --target 1ms\nweights = q @ k\n"
    changed = tour_try_fixes.with_try_fixes(cell, 0.5)
    first, body = changed.split("\n", 1)
    assert body == "weights = q @ k\n"
    parser = BrrrMagics.brrr.parser  # pyright: ignore[reportFunctionMemberAccess]
    args = parser.parse_args(split_line(first.removeprefix("%%brrr"), ""))
    assert args.try_fixes and args.ab_budget == 0.5
    assert (args.name, args.warmup, args.repeat, args.target) == ("attention", 1, 5, "1ms")
