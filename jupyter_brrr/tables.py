"""Building blocks for the tidy tables, where pandas' general-purpose paths are too slow.

The op table groups tens of thousands of ops by (name, shapes, dtypes) and the cost model by
(name, arguments); pandas' multi-key ``groupby(...).agg`` costs more there than the rest of the
analysis, while one ``factorize`` per key and ``np.bincount`` sums cost a fraction of it. And a
frame built from arrays whose dtype is already right skips pandas' inference, which turns text
columns into pandas' string dtype (Arrow-backed where pyarrow is installed) at a cost of
several milliseconds per column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def group_codes(*keys: Sequence | np.ndarray | pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The group of each row over the key columns, and the first row of each group.

    Groups are numbered in the order of their first row; a missing value (None, NaN) is a key
    value like any other.
    """
    n = len(keys[0])
    codes = np.zeros(n, dtype=np.int64)
    for key in keys:
        # Missing values get code -1, made one more value here: pandas' own option for that
        # (use_na_sentinel=False) scans an object column for them first, at a cost.
        key_codes, distinct = pd.factorize(np.asarray(key))
        key_codes[key_codes < 0] = len(distinct)
        # Re-factorized after each key, so the combined number stays below n * (distinct + 1).
        codes = pd.factorize(codes * (len(distinct) + 1) + key_codes)[0]
    # Groups are numbered by first row, so a group's first row is where the code passes all
    # the codes before it: no sort needed.
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = codes[1:] > np.maximum.accumulate(codes)[:-1]
    return codes.astype(np.int64, copy=False), np.flatnonzero(new_group)


def group_sums(codes: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """Sum of ``values`` per group; NaN where every value of the group is NaN (pandas'
    ``sum(min_count=1)``), so "unknown" stays apart from zero."""
    values = np.asarray(values, dtype=float)
    known = ~np.isnan(values)
    sums = np.bincount(codes, weights=np.where(known, values, 0.0), minlength=groups).astype(float)
    sums[np.bincount(codes, weights=known, minlength=groups) == 0] = np.nan
    return sums


def frame(columns: dict[str, np.ndarray | Sequence]) -> pd.DataFrame:
    """A DataFrame of these columns as they are: no dtype inference, no copies.

    Text stays in object columns; scalars (``"calls": 1``) are broadcast."""
    n = next((len(v) for v in columns.values() if np.ndim(v)), 0)
    arrays = {
        name: np.asarray(values) if np.ndim(values) else np.full(n, values)
        for name, values in columns.items()
    }
    # One index object for every column: pandas then takes the columns as they are, where
    # columns with an index each would be aligned (reindexed) to a common one.
    index = pd.RangeIndex(n)
    return pd.DataFrame(
        {
            name: pd.Series(values, index=index, dtype=values.dtype, copy=False)
            for name, values in arrays.items()
        },
        index=index,
        copy=False,
    )
