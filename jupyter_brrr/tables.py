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
        key_codes, distinct = pd.factorize(np.asarray(key), use_na_sentinel=False)
        # Re-factorized after each key, so the combined number stays below n * len(distinct).
        codes = pd.factorize(codes * len(distinct) + key_codes)[0]
    first = np.unique(codes, return_index=True)[1] if n else np.empty(0, dtype=np.int64)
    return codes.astype(np.int64, copy=False), first


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
    return pd.DataFrame(
        {
            name: pd.Series(values, dtype=values.dtype, copy=False)
            for name, values in arrays.items()
        },
        copy=False,
    )
