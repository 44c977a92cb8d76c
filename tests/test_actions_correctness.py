"""Output checks of the A/B: dtype-aware tolerances, nested outputs, error sizes."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import pytest
import torch

from jupyter_brrr.actions.correctness import compare_outputs, snapshot, tolerance


def test_identical_tensors_match() -> None:
    x = torch.randn(100)
    check = compare_outputs(x, x.clone())
    assert check.correct is True and check.max_abs_err == 0.0 and check.max_rel_err == 0.0


def test_rounding_differences_match_but_real_errors_do_not() -> None:
    x = torch.randn(1000)
    assert compare_outputs(x, x * (1 + 1e-6)).correct is True
    wrong = compare_outputs(x, x + 1e-2)
    assert wrong.correct is False
    assert wrong.max_abs_err == pytest.approx(1e-2, rel=1e-3)
    assert "elements outside" in wrong.detail


def test_tolerances_depend_on_dtype() -> None:
    assert tolerance(torch.float64)[0] < tolerance(torch.float32)[0] < tolerance(torch.bfloat16)[0]
    assert tolerance(torch.float16)[0] <= tolerance(torch.bfloat16)[0]
    x = torch.randn(1000)
    off = x * (1 + 2e-3)
    assert compare_outputs(x, off).correct is False  # float32: 0.2% is wrong
    assert compare_outputs(x.bfloat16(), off.bfloat16()).correct is True  # bf16: within rounding
    previous = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")  # TF32: float32 results keep 10 bits
        assert tolerance(torch.float32)[0] >= 1e-3
    finally:
        torch.set_float32_matmul_precision(previous)


def test_low_precision_outliers_pass_on_the_rms_rule() -> None:
    torch.manual_seed(0)
    b = torch.randn(100_000).bfloat16()
    c = b.clone()
    c[::1000] *= 1.05  # 0.1% of elements a few ulps off
    check = compare_outputs(b, c)
    assert check.correct is True
    assert check.notes and "RMS" in check.notes[0]
    c[::2] *= 1.5  # half of them far off: wrong
    assert compare_outputs(b, c).correct is False


def test_nested_structures() -> None:
    x = torch.randn(4, 4)
    Pair = namedtuple("Pair", "a b")
    ref = {"out": [x, (x.sum(), 3)], "pair": Pair(x, 2.5), "name": "ok", "none": None}
    same = {
        "out": [x.clone(), (x.sum().clone(), 3)],
        "pair": Pair(x.clone(), 2.5),
        "name": "ok",
        "none": None,
    }
    assert compare_outputs(ref, same).correct is True
    changed = {**same, "out": [x.clone(), (x.sum() + 1, 3)]}
    check = compare_outputs(ref, changed)
    assert check.correct is False and "['out'][1][0]" in check.detail
    assert compare_outputs(ref, {**same, "name": "other"}).correct is False
    assert compare_outputs(ref, {"out": same["out"]}).correct is False  # missing keys
    assert compare_outputs([1, 2], [1, 2, 3]).correct is False


def test_shape_and_dtype_mismatches() -> None:
    x = torch.randn(3, 4)
    assert "shape" in compare_outputs(x, x.T).detail
    assert "dtype" in compare_outputs(x, x.double()).detail
    assert compare_outputs(x, x.tolist()).correct is False


def test_scalars_integers_and_numpy() -> None:
    assert compare_outputs(3, 3).correct is True
    assert compare_outputs(3, 4).correct is False
    assert compare_outputs(1.0, 1.0 + 1e-9).correct is True
    assert compare_outputs(1.0, 1.1).correct is False
    assert compare_outputs(2.0, torch.tensor(2.0)).correct is True  # a 0-d tensor for a float
    assert compare_outputs(np.ones(3), np.ones(3)).correct is True
    assert compare_outputs(torch.arange(5), torch.tensor([0, 1, 2, 4, 4])).correct is False
    assert compare_outputs(True, True).correct is True


def test_nan_and_inf_in_both_are_equal() -> None:
    y = torch.tensor([math.nan, math.inf, -math.inf, 1.0])
    assert compare_outputs(y, y.clone()).correct is True
    check = compare_outputs(y, torch.tensor([1.0, math.inf, -math.inf, 1.0]))
    assert check.correct is False
    assert check.max_abs_err is None or math.isfinite(check.max_abs_err)  # no inf in JSON


def test_objects_that_cannot_be_compared_are_not_a_mismatch() -> None:
    check = compare_outputs({"torch": torch, "f": print}, {"torch": torch, "f": print})
    assert check.correct is None and "nothing to compare" in check.detail
    assert compare_outputs(None, None).correct is None
    assert compare_outputs(None, torch.ones(1)).correct is False


def test_snapshot_is_not_overwritten() -> None:
    x = torch.ones(3)
    kept = snapshot({"a": [x]})
    x.add_(1)
    assert torch.equal(kept["a"][0], torch.ones(3))


def test_overrides() -> None:
    x = torch.randn(100)
    assert compare_outputs(x, x + 1e-2, atol=0.1).correct is True


def test_rms_rule_bounds_depend_on_dtype() -> None:
    torch.manual_seed(0)
    x = torch.randn(10_000)
    drift = x * (1 + 3e-2 * torch.randn(10_000))  # about 3% rounding-like noise everywhere
    assert compare_outputs(x.bfloat16(), drift.bfloat16()).correct is True
    assert compare_outputs(x, drift).correct is False  # float32 allows 0.1% RMS, not 3%
    assert compare_outputs(x.bfloat16(), (x * 2).bfloat16()).correct is False  # a wrong result
    # Tolerances given by the caller are elementwise: the RMS rule does not widen them.
    assert compare_outputs(x.bfloat16(), drift.bfloat16(), rtol=1e-3, atol=1e-3).correct is False
