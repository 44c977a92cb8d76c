"""The numpy building blocks of the tables agree with pandas' own groupby and constructors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd

from jupyter_brrr.trace.events import read_trace
from jupyter_brrr.trace.frames import frame, group_codes, group_sums

DATA = Path(__file__).parent / "data"


def test_group_codes_match_pandas_groupby_on_a_real_trace() -> None:
    ops = read_trace(DATA / "resnet50_train_amp_b64.json.gz").ops
    keys = [ops["name"], ops["shapes"], ops["dtypes"]]
    codes, first = group_codes(*keys)
    expected = ops.groupby(["name", "shapes", "dtypes"], sort=False, dropna=False).ngroup()
    np.testing.assert_array_equal(codes, expected.to_numpy())
    # The first row of each group holds that group's keys, in order of first appearance.
    assert (np.diff(first) > 0).all()
    np.testing.assert_array_equal(codes[first], np.arange(len(first)))


def test_group_codes_treat_missing_values_as_a_key() -> None:
    codes, first = group_codes(np.array(["a", None, "a", None], dtype=object), [1, 1, 1, 2])
    assert codes.tolist() == [0, 1, 0, 2]
    assert first.tolist() == [0, 1, 3]
    empty_codes, empty_first = group_codes(np.array([], dtype=object))
    assert len(empty_codes) == 0 and len(empty_first) == 0


def test_group_codes_of_integer_keys_of_any_range_match_groupby() -> None:
    # Integer keys serve as their offset from the least where the combined number fits, and
    # are factorized where it would not: ids as Kineto writes them (pids, thread ids near
    # 2**31), negative numbers, and ranges too wide to combine all give groupby's numbering.
    rng = np.random.default_rng(7)
    n = 2000
    keys = {
        "pid": rng.choice([3101, 3102], n),
        "tid": rng.choice([2**31 - 5, 140_000_123_456, 7], n),
        "negative": rng.integers(-3, 3, n),
        "wide": rng.choice([-(2**62), 0, 2**62], n),
        "name": rng.choice(np.array(["a", None, "b"], dtype=object), n),
    }
    for columns in (["pid", "tid"], ["negative", "wide", "pid"], ["wide", "wide", "name", "tid"]):
        table = pd.DataFrame({f"k{i}": keys[c] for i, c in enumerate(columns)})
        codes, first = group_codes(*(keys[c] for c in columns))
        expected = table.groupby(list(table.columns), sort=False, dropna=False).ngroup()
        np.testing.assert_array_equal(codes, expected.to_numpy(), err_msg=str(columns))
        np.testing.assert_array_equal(codes[first], np.arange(len(first)))


def test_group_sums_keep_unknown_apart_from_zero() -> None:
    codes = np.array([0, 0, 1, 1, 2])
    values = np.array([1.0, np.nan, np.nan, np.nan, 0.0])
    sums = group_sums(codes, values, 3)
    expected = pd.Series(values).groupby(codes).sum(min_count=1).to_numpy()
    np.testing.assert_array_equal(sums, expected)  # [1, nan, 0]
    assert group_sums(np.array([], dtype=np.int64), np.array([]), 0).dtype == float


def test_frame_keeps_dtypes_and_broadcasts_scalars() -> None:
    names = np.array(["aten::mm", "aten::add"], dtype=object)
    table = frame({"name": names, "calls": 1, "time_s": np.array([1.0, 2.0])})
    assert table["name"].dtype == object  # not inferred to pandas' string dtype
    assert table["calls"].tolist() == [1, 1]
    assert table["time_s"].dtype == float
    assert list(table.columns) == ["name", "calls", "time_s"]


def test_trace_tables_link_like_the_json_says() -> None:
    # Each kernel's launching op, found through numpy lookups, is the op whose thread and time
    # hold the runtime call with the kernel's correlation id, read here straight from the JSON.
    path = DATA / "tiny_mlp_eager.json.gz"
    trace = read_trace(path)
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    launch_ts = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    origin = trace.origin_us
    ops = trace.ops
    assert len(trace.kernels) and (trace.kernels["op"] >= 0).all()
    for kernel in trace.kernels.itertuples():
        assert isinstance(kernel.op, int)  # the launching op's row
        op = ops.iloc[kernel.op]
        t = (launch_ts[kernel.correlation] - origin) * 1e-6
        assert op.start_s <= t + 1e-9 <= op.end_s + 2e-9
