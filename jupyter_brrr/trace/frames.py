"""Building blocks for the tidy tables, where pandas' general-purpose paths are too slow.

The op table groups tens of thousands of ops by (name, shapes, dtypes) and the cost model by
(name, arguments); pandas' multi-key ``groupby(...).agg`` costs more there than the rest of the
analysis, while one ``factorize`` per key and ``np.bincount`` sums cost a fraction of it. And a
frame built from arrays whose dtype is already right skips pandas' inference, which turns text
columns into pandas' string dtype (Arrow-backed where pyarrow is installed) at a cost of
several milliseconds per column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from typing import cast

import numpy as np
import pandas as pd

# Combined group numbers stay below this, well inside int64.
_MAX_CODE = 2**62
_NONE = np.array([None], dtype=object)


def group_codes(*keys: Sequence | np.ndarray | pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The group of each row over the key columns, and the first row of each group.

    Groups are numbered in the order of their first row; a missing value (None, NaN) is a key
    value like any other.
    """
    n = len(keys[0])
    if n == 0:  # nothing to group: pandas' fixed costs spared
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes = np.zeros(n, dtype=np.int64)
    size = 1  # codes are below this
    for key in keys:
        key = np.asarray(key)
        low, high = (int(key.min()), int(key.max())) if key.dtype.kind in "iu" else (0, -1)
        if low <= high < _MAX_CODE and size <= _MAX_CODE // (high - low + 1):
            # Integers (ids, codes from an earlier factorize) serve as their offset from the
            # least: no hashing of each key (the combined codes are factorized once, below).
            key_codes = key.astype(np.int64, copy=False)
            if low:
                key_codes = key_codes - low
            radix = high - low + 1
        else:
            key_codes, distinct = pd.factorize(key)
            # Missing values get code -1, made one more value here: pandas' own option for that
            # (use_na_sentinel=False) scans an object column for them first, at a cost.
            key_codes[key_codes < 0] = len(distinct)
            radix = len(distinct) + 1
        if size > _MAX_CODE // radix:
            # Renumbered before the combined number could overflow: then it stays below n.
            codes, distinct_codes = pd.factorize(codes)
            size = len(distinct_codes)
        codes *= radix  # in place: at a million rows a temporary is fresh memory to fault in
        codes += key_codes
        size *= radix
    codes = pd.factorize(codes)[0]
    # Groups are numbered by first row, so a group's first row is where the code passes all
    # the codes before it: no sort needed.
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = codes[1:] > np.maximum.accumulate(codes)[:-1]
    return codes.astype(np.int64, copy=False), np.flatnonzero(new_group)


def factorize_objects(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize`` of an object array (names), hashing its values as Python objects.

    pandas hashes an array of nothing but strings as text, byte by byte, at a cost that grows
    with their length (C++ kernel names run to hundreds of characters). With a leading None it
    takes the array as general objects: Python caches a string's hash, and the reader's equal
    names are one object, equal at the first comparison. The None gets code -1, like any
    missing value, and is dropped."""
    codes, distinct = pd.factorize(np.concatenate([_NONE, values]))
    return codes[1:], distinct


def group_sums(codes: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """Sum of ``values`` per group; NaN where every value of the group is NaN (pandas'
    ``sum(min_count=1)``), so "unknown" stays apart from zero."""
    values = np.asarray(values, dtype=float)
    known = ~np.isnan(values)
    sums = np.bincount(codes, weights=np.where(known, values, 0.0), minlength=groups).astype(float)
    sums[np.bincount(codes, weights=known, minlength=groups) == 0] = np.nan
    return sums


def frame(columns: Mapping[str, np.ndarray | Sequence | float | str]) -> pd.DataFrame:
    """A DataFrame of these columns as they are: no dtype inference, no copies.

    Text stays in object columns; scalars (``"calls": 1``) are broadcast."""
    # A column of one dimension or more has a length (a scalar is of none).
    n = next((len(cast(Sized, v)) for v in columns.values() if np.ndim(v)), 0)
    arrays = {
        name: np.asarray(values) if np.ndim(values) else np.full(n, values)
        for name, values in columns.items()
    }
    # Numbers go in as arrays, as they are. Anything else (text) goes in as a Series of its own
    # dtype, which pandas takes as it is, where it would infer a string dtype from an array;
    # one index object for all of them, or pandas would align (reindex) them to a common one.
    index = pd.RangeIndex(n)
    return pd.DataFrame(
        {
            name: values
            if values.dtype.kind in "biufc"
            else pd.Series(values, index=index, dtype=values.dtype, copy=False)
            for name, values in arrays.items()
        },
        index=index,
        copy=False,
    )
