"""Reading a trace needs no torch: the aten calls without a hand formula are costed from the
shipped meta table (``costs/meta_table.json``), with the same numbers torch's meta device gives,
and the local GPU is looked for only where a GPU driver is present."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import jupyter_brrr
from jupyter_brrr.costs import _meta
from jupyter_brrr.report.report import Report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
# The shared traces, as copied into tests/data (the H200 recordings and HTA's test data).
SHARED = sorted(DATA.glob("*.json.gz")) + sorted((DATA / "hta").glob("*.json.gz"))

_FRESH_LOAD = """
import json, sys
import jupyter_brrr
from jupyter_brrr.costs import peaks
jupyter_brrr.load(sys.argv[1])
print(json.dumps({
    "torch": "torch" in sys.modules,
    "dynamo": "torch._dynamo" in sys.modules,
    "driver": peaks._gpu_driver_present(),
}))
"""


def test_the_shared_traces_are_all_here() -> None:
    assert len(SHARED) == 13


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_loading_a_shared_trace_in_a_fresh_process_imports_no_torch(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_LOAD, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert not seen["dynamo"]
    # Where a GPU driver is present, a trace naming an unknown GPU may ask torch for this one.
    assert not seen["torch"] or seen["driver"]


@pytest.fixture
def meta_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple]]:
    """The calls that went to the meta device (torch) while the test ran."""
    calls: list[tuple] = []
    run_on_meta = _meta.footprint_on_meta

    def recording(*key: object) -> object:
        calls.append(key)
        return run_on_meta(*key)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(_meta, "footprint_on_meta", recording)
    _meta._meta_cost.cache_clear()
    yield calls
    _meta._meta_cost.cache_clear()


def _cost_columns(path: Path) -> pd.DataFrame:
    report = jupyter_brrr.load(path)
    assert isinstance(report, Report)
    ops = report.ops
    return ops[["name", "shapes", "flops", "bytes", "category", "dtype", "cost_model"]].reset_index(
        drop=True
    )


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_the_shipped_table_costs_a_trace_as_the_meta_device_does(
    path: Path, meta_calls: list[tuple], monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = _cost_columns(path)
    assert meta_calls == []  # every call of a shared trace is in the table
    monkeypatch.setattr(_meta, "_shipped", dict)  # the table set aside: torch's meta device
    _meta._meta_cost.cache_clear()
    on_meta = _cost_columns(path)
    pd.testing.assert_frame_equal(shipped, on_meta, check_exact=True)
    if "shapes" in set(shipped["cost_model"]):
        assert meta_calls  # the comparison did run the meta device


def test_every_shipped_footprint_is_what_the_meta_device_gives_now() -> None:
    table = _meta._shipped()
    assert table  # the file ships with the package and reads back
    for key, footprint in table.items():
        assert _meta.footprint_on_meta(*key) == footprint, key


def test_an_unknown_gpu_is_looked_for_with_torch_only_where_a_driver_is() -> None:
    code = (
        "import json, sys; from jupyter_brrr.costs import peaks\n"
        "index, other = peaks._local_gpu_named('NVIDIA Imaginary 9000')\n"
        "print(json.dumps([index, peaks._gpu_driver_present(), 'torch' in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    index, driver, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert index is None
    assert imported == driver


_COUNTS = """
import json, sys
import torch
import torch.nn.functional as F
from jupyter_brrr.costs import _meta

def meta(*shape):
    return torch.empty(shape, device="meta")

# Ops whose meta kernels are C++: counting them imports nothing more. (Many others' meta
# kernels are Python references that import Dynamo themselves: linear's addmm, cos, cat.)
native = [
    lambda: torch.tensordot(meta(4, 5, 6), meta(5, 6, 7), ([1, 2], [0, 1])),  # composite: mm
    lambda: torch.einsum("bij,bjk->bik", meta(2, 3, 4), meta(2, 4, 5)),  # composite: bmm
    lambda: F.conv2d(meta(2, 3, 16, 16), meta(8, 3, 3, 3), padding=1),
    lambda: torch.arange(0, 10, device="meta"),  # no formula: nothing counted
]
others = [
    lambda: F.linear(meta(8, 16), meta(32, 16), meta(32)),
    lambda: F.scaled_dot_product_attention(meta(2, 4, 64, 32), meta(2, 4, 64, 32), meta(2, 4, 64, 32)),
    lambda: meta(7, 7).cos(),  # no formula: nothing counted
]
ours = []
for i, case in enumerate(native + others):
    with _meta._flop_counter() as counter:
        case()
    ours.append(counter.get_total_flops())
    if i == len(native) - 1:
        dynamo = "torch._dynamo" in sys.modules
from torch.utils.flop_counter import FlopCounterMode
theirs = []
for case in native + others:
    with FlopCounterMode(display=False) as counter:
        case()
    theirs.append(counter.get_total_flops())
print(json.dumps([ours, theirs, dynamo]))
"""


def test_a_call_not_in_the_table_counts_as_flop_counter_does_without_dynamo() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COUNTS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    ours, theirs, dynamo = json.loads(done.stdout.strip().splitlines()[-1])
    assert ours == theirs
    assert [n > 0 for n in ours] == [True, True, True, False, True, True, False]
    assert not dynamo  # FlopCounterMode's own mode imports it on first use
