"""The ops of a report by ``nn.Module``: each op row's modules as one pattern, and the module tree
with the time of each subtree.

Each op call carries the path of the module that ran it (``events``: from the ranges
``attribution`` opens, or a trace's Python stacks). An op-table row groups calls of one name and
shapes, often from many modules (the same ``addmm`` in each of 12 layers): its ``module`` is their
paths as one pattern, the parts where they differ replaced by ``*`` (``model.h.*.mlp.c_fc``), or
their common start followed by ``.*`` where they differ in depth. Its ``line``: the line the
calls came from, or the line of the most calls and how many others.

The tree (``module_tree``): one row per module path and every path above it, with the op calls
made directly in it and below it, their kernels, and their GPU time (each GPU event's time once,
in the module of the op that owns it) and self CPU time; ``(no module)`` holds the ops outside
any module (a ``path`` of ""). Subtree figures add up the rows below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema.report import MODULE_COLUMNS
from ..trace.frames import frame

__all__ = ["MODULE_COLUMNS", "call_pattern", "call_sources", "module_tree", "path_pattern"]


def path_pattern(paths: list[str]) -> str:
    """Several module paths as one: ``["m.h.0.fc", "m.h.1.fc"]`` -> ``"m.h.*.fc"``."""
    distinct = list(dict.fromkeys(p for p in paths if p))
    if not distinct:
        return ""
    if len(distinct) == 1:
        return distinct[0]
    parts = [p.split(".") for p in distinct]
    if len({len(p) for p in parts}) == 1:
        return ".".join(
            column[0] if len(set(column)) == 1 else "*" for column in zip(*parts, strict=True)
        )
    common = []
    for column in zip(*parts, strict=False):
        if len(set(column)) > 1:
            break
        common.append(column[0])
    return ".".join([*common, "*"])


def _per_group(codes: np.ndarray, values: np.ndarray, groups: int) -> list[list[tuple[str, int]]]:
    """The distinct values of each group, in order of first appearance, with their counts
    (as repeated entries kept once: ``[(value, count), ...]``)."""
    found: list[dict[str, int]] = [{} for _ in range(groups)]
    if not len(codes):
        return [[] for _ in range(groups)]
    value_codes, distinct = pd.factorize(values)
    pairs, counts = np.unique(codes * (len(distinct) + 1) + value_codes + 1, return_counts=True)
    for pair, count in zip(pairs.tolist(), counts.tolist(), strict=True):
        group, value = divmod(pair, len(distinct) + 1)
        if value:
            found[group][str(distinct[value - 1])] = count
    return [list(d.items()) for d in found]


def call_pattern(codes: np.ndarray, modules: np.ndarray, groups: int) -> np.ndarray:
    """Per op-table group: its calls' module paths as one pattern ("" where none had one)."""
    result = np.empty(groups, dtype=object)
    result.fill("")
    if not groups or not np.any(modules != ""):
        return result
    for group, found in enumerate(_per_group(codes, modules, groups)):
        if found:
            result[group] = path_pattern([path for path, _ in found])
    return result


def call_sources(codes: np.ndarray, sources: np.ndarray, groups: int) -> np.ndarray:
    """Per op-table group: the source line of its calls, or the line of most calls and how many
    other lines (``cell:3 (+2 lines)``)."""
    result = np.empty(groups, dtype=object)
    result.fill("")
    if not groups or not np.any(sources != ""):
        return result
    for group, found in enumerate(_per_group(codes, sources, groups)):
        if found:
            found.sort(key=lambda item: -item[1])
            more = len(found) - 1
            result[group] = found[0][0] + (
                f" (+{more} line{'s' if more > 1 else ''})" if more else ""
            )
    return result


def module_tree(ops: dict[str, np.ndarray], owner: np.ndarray) -> pd.DataFrame:
    """The module tree of the op calls ``ops`` (``module``, ``gpu_s``: GPU time owned,
    ``self_cpu_s``), with ``owner``: each GPU event's owning call (see the module docstring).
    Empty where no call has a module."""
    module = ops["module"]
    if not len(module) or not np.any(module != ""):
        return pd.DataFrame(columns=list(MODULE_COLUMNS))
    codes, paths = pd.factorize(module)
    n = len(paths)
    owned = owner[owner >= 0]
    kernels_per_call = np.bincount(owned, minlength=len(module))
    direct = {
        "calls": np.bincount(codes, minlength=n).astype(float),
        "kernels": np.bincount(codes, weights=kernels_per_call, minlength=n),
        "self_gpu_time_s": np.bincount(codes, weights=ops["gpu_s"], minlength=n),
        "self_cpu_time_s": np.bincount(codes, weights=ops["self_cpu_s"], minlength=n),
    }
    # Every path and every path above it; the figures of a path go to each one above.
    rows: dict[str, dict[str, float]] = {}

    def row(path: str) -> dict[str, float]:
        if path not in rows:
            rows[path] = dict.fromkeys(
                (
                    "calls",
                    "kernels",
                    "self_gpu_time_s",
                    "gpu_time_s",
                    "self_cpu_time_s",
                    "cpu_time_s",
                ),
                0.0,
            )
        return rows[path]

    for index, path in enumerate(paths):
        path = str(path)
        own = row(path)
        own["self_gpu_time_s"] += direct["self_gpu_time_s"][index]
        own["self_cpu_time_s"] += direct["self_cpu_time_s"][index]
        parts = path.split(".") if path else [""]
        for depth in range(len(parts)):
            above = row(".".join(parts[: depth + 1]))
            above["calls"] += direct["calls"][index]
            above["kernels"] += direct["kernels"][index]
            above["gpu_time_s"] += direct["self_gpu_time_s"][index]
            above["cpu_time_s"] += direct["self_cpu_time_s"][index]
    ordered = sorted(rows, key=_tree_order)
    table = {
        "path": np.array(ordered, dtype=object),
        "parent": np.array(
            [p.rsplit(".", 1)[0] if "." in p else "" for p in ordered], dtype=object
        ),
        "depth": np.array([p.count(".") if p else -1 for p in ordered], dtype=np.int64),
    }
    for key in ("calls", "kernels"):
        table[key] = np.array([rows[p][key] for p in ordered], dtype=np.int64)
    for key in ("self_gpu_time_s", "gpu_time_s", "self_cpu_time_s", "cpu_time_s"):
        table[key] = np.array([rows[p][key] for p in ordered], dtype=float)
    return frame({name: table[name] for name in MODULE_COLUMNS})


def _tree_order(path: str) -> tuple:
    """Parents before children, siblings in natural order (``h.2`` before ``h.10``), the ops
    outside any module last."""
    return (path == "", [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split(".")])
