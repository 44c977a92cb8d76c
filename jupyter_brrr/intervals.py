"""Interval arithmetic on GPU activity: unions across streams, so overlap counts once."""

from __future__ import annotations

import numpy as np


def merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals as sorted, disjoint (start, end) arrays."""
    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    start, end = np.asarray(start, float)[order], np.asarray(end, float)[order]
    reach = np.maximum.accumulate(end)
    # A new segment begins where an interval starts after everything before it has ended.
    begins = np.ones(len(start), dtype=bool)
    begins[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(begins)
    last = np.append(first[1:] - 1, len(start) - 1)
    return start[first], reach[last]


def union_length(start: np.ndarray, end: np.ndarray) -> float:
    """Total time covered by at least one interval."""
    merged_start, merged_end = merge(start, end)
    return float(np.sum(merged_end - merged_start))


def gaps(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lengths of the idle gaps between the merged intervals."""
    merged_start, merged_end = merge(start, end)
    return merged_start[1:] - merged_end[:-1]
