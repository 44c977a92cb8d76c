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


def subtract(
    start: np.ndarray, end: np.ndarray, cut_start: np.ndarray, cut_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The time covered by the first intervals and by none of the second, as sorted, disjoint
    (start, end) arrays (communication not hidden behind compute, say)."""
    start, end = merge(start, end)
    cut_start, cut_end = merge(cut_start, cut_end)
    if not len(start) or not len(cut_start):
        return start, end
    # The boundaries of both sets in time order; a point is kept where it lies inside a kept
    # interval and outside every cut one. Counting the boundaries passed says which.
    points = np.concatenate([start, end, cut_start, cut_end])
    inside = np.concatenate([np.ones(len(start)), -np.ones(len(end))])
    cut = np.concatenate([np.ones(len(cut_start)), -np.ones(len(cut_end))])
    kept_step = np.concatenate([inside, np.zeros(len(cut))])
    cut_step = np.concatenate([np.zeros(len(inside)), cut])
    # At equal times, ends come before starts: touching intervals do not overlap.
    order = np.lexsort((np.concatenate([inside, cut]), points))
    points = points[order]
    kept = np.cumsum(kept_step[order]) > 0
    covered = np.cumsum(cut_step[order]) > 0
    state = kept & ~covered  # the state from each point to the next
    lengths = np.diff(points)
    chosen = state[:-1] & (lengths > 0)
    return merge(points[:-1][chosen], points[1:][chosen])


def clipped_length(start: np.ndarray, end: np.ndarray, low: float, high: float) -> float:
    """Time covered by disjoint intervals within ``[low, high]``."""
    return float(np.sum(np.maximum(np.minimum(end, high) - np.maximum(start, low), 0.0)))
