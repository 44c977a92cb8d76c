"""What follows from the step's dependencies: the what-if and the advice's savings, replayed.

Adding up times that run concurrently and wait on each other counts the overlap twice: a 2x
faster kernel on a step where the GPU waits for the host saves nothing, however large its share
of the GPU's time. So every figure here is a prediction of ``replay.predict`` on the step's
graph, without the profiler's own cost (``profiler=0``: the user's step, not the profiled one),
read as a speed-up and applied to the report's span:

- **The what-if** (``what_if``): for each part of the span and each of the top ops by GPU time,
  the span at each factor. A part of the split is the GPU work of that bound (compute, memory,
  communication; "other" is the rest of the GPU's work); idle time is not a thing to make
  faster, so its row is the host's work made faster (``host=k``), what shortens it.
- **A recommendation's saving** (``replay_savings``): the change its fix makes, replayed. The
  synchronisations removed (``syncs=0``); launch overhead gone (``launch=0``, a CUDA graph; on a
  step that synchronises, a graph cannot capture the synchronisation, so it is predicted after
  the syncs are gone and says they must go first); a host stall taken off the critical path
  (``cpu=0``); copies made asynchronous (``copies="async"``); a fix to the kernels of some ops
  (a dtype, padding, fusion, a layout) as those ops' GPU time made shorter by the saving the
  advice found for them (their time over their time less that saving). The recommendations are
  ranked by these savings; a fix that needs another first comes after it.

What the replay cannot model is said with each figure (``Prediction.not_modelled``): work that
appears or vanishes with the change (fused or new kernels), contention between overlapping
kernels, the launch queue's depth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from . import step_graph as sg
from .replay import Prediction, predict
from .step_graph import StepGraph

__all__ = ["PREDICTED_BY", "gpu_path_share", "prerequisites", "replay_savings", "what_if"]

# The critical path's resources that are the GPU's own work (the rest is the host's).
GPU_RESOURCES = ("GPU kernel", "copy", "communication", "GPU wait")

PREDICTED_BY = "predicted by replaying the step's dependencies"
# A factor large enough to stand for "infinitely faster" (the limit of a what-if row).
_LIMIT_FACTOR = 1e6
# A fix to some ops' kernels makes them at most this many times faster (the advice's saving can
# count rows it does not list).
_MAX_OP_FACTOR = 50.0


def _speedup(graph: StepGraph, **changes: Any) -> float:
    prediction = predict(graph, profiler=0, **changes)
    return prediction.speedup


def _part_changes(part: str, factor: float) -> dict:
    if part == "idle":
        return {"host": factor}
    if part == "other":
        return {"category": {"other": factor, "overhead": factor}}
    return {"category": {part: factor}}


def what_if(
    graph: StepGraph,
    summary: Mapping[str, Any],
    ops: pd.DataFrame,
    factors: tuple[float, ...] = (2, 10),
    parts: tuple[str, ...] = ("compute", "memory", "communication", "other", "idle"),
) -> pd.DataFrame:
    """The span if one part of the split, or one of the top five ops by GPU time, got faster,
    predicted by replaying the step's graph: one row per part (``kind``, ``part``, ``time_s``,
    ``share`` of the span, ``speedup_at_<N>x``, ``span_at_<N>x_s``, ``limit``: the speed-up at
    an unbounded factor, ``change``: the change replayed, in words)."""
    span = float(summary["span_s"])
    rows = []
    targets: list[tuple[str, str, float, Any]] = [
        ("category", part, float(summary.get(f"{part}_s") or 0.0), part) for part in parts
    ]
    top = ops.nlargest(5, "gpu_time_s") if len(ops) else ops
    for name, shapes, seconds in zip(
        top["name"].tolist(), top["shapes"].tolist(), top["gpu_time_s"].tolist(), strict=True
    ):
        targets.append(("op", f"{name} {shapes}".strip(), float(seconds), (name, shapes)))
    for kind, name, seconds, key in targets:
        row: dict[str, Any] = {
            "kind": kind,
            "part": name,
            "time_s": seconds,
            "share": min(seconds / span, 1.0) if span > 0 else 0.0,
        }

        def changes(factor: float, kind: str = kind, key: Any = key) -> dict:
            if kind == "op":
                return {"ops": {(key[0], str(key[1] or "")): factor}}
            return _part_changes(key, factor)

        for factor in factors:
            speedup = _speedup(graph, **changes(factor)) if seconds > 0 or key == "idle" else 1.0
            row[f"speedup_at_{factor:g}x"] = speedup
            row[f"span_at_{factor:g}x_s"] = span / speedup
        row["limit"] = (
            _speedup(graph, **changes(_LIMIT_FACTOR)) if seconds > 0 or key == "idle" else 1.0
        )
        row["change"] = _words(changes(2.0)).replace("2x", "Nx")
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["predicted_by"] = PREDICTED_BY + " (without the profiler's own cost)"
    frame.attrs["not_modelled"] = predict(graph).not_modelled
    return frame


def _words(changes: Mapping[str, Any]) -> str:
    from .replay import Changes

    return Changes(**changes).words()


# --- the advice's savings -----------------------------------------------------------------------


def prerequisites(graph: StepGraph) -> dict:
    """What must go before a CUDA graph can capture the step: its synchronisations
    (``syncs=0``) and its blocking copies (``copies="async"``), where it has them."""
    awaited = graph.await_host
    needs: dict[str, Any] = {}
    if len(awaited) and (graph.h_kind[awaited] == sg.SYNC).any():
        needs["syncs"] = 0
    if len(awaited) and graph.h_blocking[awaited].any():
        needs["copies"] = "async"
    return needs


def _op_changes(recommendation: Mapping[str, Any]) -> dict | None:
    """A fix to some ops' kernels: those ops' GPU time made shorter by the saving found."""
    listed = [
        op
        for op in recommendation.get("ops") or []
        if op.get("name") and op.get("shapes") is not None and (op.get("time_s") or 0) > 0
    ]
    total = float(sum(op["time_s"] for op in listed))
    saving = float(recommendation.get("saving_s") or 0.0)
    if total <= 0 or saving <= 0:
        return None
    factor = min(total / max(total - saving, total / _MAX_OP_FACTOR), _MAX_OP_FACTOR)
    return {"ops": {(str(op["name"]), str(op["shapes"])): factor for op in listed}}


def _changes_of(recommendation: Mapping[str, Any], graph: StepGraph) -> dict | None:
    cause = recommendation.get("cause")
    if cause == "synchronisation":
        return {"syncs": 0}
    if cause == "launch overhead":
        return {"launch": 0}
    if cause == "host stall":
        return {"cpu": 0}
    if cause == "host copy":
        return {"copies": "async"}
    if cause == "communication":
        return None  # hiding collectives behind compute is a reordering the replay cannot make
    changes = _op_changes(recommendation)
    if changes is not None and cause == "too little work":
        # One batched call for many: their launches go too (as a share of all the step's).
        launches = int((graph.h_kind == sg.LAUNCH).sum())
        calls = sum(int(op.get("calls") or 0) for op in recommendation.get("ops") or [])
        if launches > 0 and calls > 0:
            changes["launch"] = max(1.0 - calls / launches, 0.0)
    return changes


def _extent(prediction: Prediction) -> float:
    """The run's time in a replay: its span, and for one run (not a step of a loop) the host's
    lead-in before its first GPU work too (what a stall before the first launch costs)."""
    timeline, graph = prediction.timeline, prediction.graph
    if graph.mode != "latency" or not timeline.plan.n_host:
        return timeline.span_s
    begin = float(timeline.h_s[timeline.plan.main_begin[0]])
    return timeline.end - min(timeline.start, begin)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} us"


def replay_savings(
    recommendations: list[dict], graph: StepGraph | None, summary: Mapping[str, Any]
) -> list[dict]:
    """The recommendations with their savings predicted by replaying the step (see the module's
    docstring), ranked by them; a fix that needs another first right after it. Each keeps the
    additive bound it had as ``saving_bound_s`` and gains ``predicted_by``, ``changes`` and
    ``not_modelled``; one the replay cannot model (communication) keeps its bound and says so."""
    span = float(summary.get("span_s") or 0.0)
    if graph is None or not recommendations or span <= 0 or not graph.gpu_count:
        return recommendations
    needs = prerequisites(graph)
    out = []
    for recommendation in recommendations:
        item = dict(recommendation)
        item["requires"] = None
        changes = _changes_of(item, graph)
        if changes is None:
            item["saving_bound_s"] = item.get("saving_s")
            item["predicted_by"] = "an additive bound: the replay cannot model this change"
            item["changes"] = ""
            item["not_modelled"] = ["the change itself (collectives hidden behind compute)"]
            out.append(item)
            continue
        first: dict = {}
        if item.get("cause") == "launch overhead" and needs:
            first = needs
        base = predict(graph, profiler=0)
        before = predict(graph, profiler=0, **first) if first else base
        after = predict(graph, profiler=0, **{**first, **changes})
        # A stall before the first launch costs the run its time too: counted for the fix that
        # takes CPU work off the critical path.
        measure = _extent if "cpu" in changes else (lambda p: p.span_s)
        whole = measure(base)
        saving = max(measure(before) - measure(after), 0.0)
        share = min(saving / whole, 1.0) if whole > 0 else 0.0
        speedup = 1.0 / (1.0 - share) if share < 1 else math.inf
        item["saving_bound_s"] = item.get("saving_s")
        item["saving_s"], item["share"], item["speedup"] = saving, share, speedup
        item["predicted_by"] = PREDICTED_BY
        item["changes"] = after.changes
        item["not_modelled"] = after.not_modelled
        condition = ""
        if first:
            item["requires"] = "synchronisation" if "syncs" in first else "host copy"
            what = " and ".join(
                w
                for w, k in (("synchronisations", "syncs"), ("blocking copies", "copies"))
                if k in first
            )
            item["fix"] = (
                f"First remove the step's {what}: a CUDA graph cannot capture one, and the GPU's "
                f"idle time follows them. Then: {item.get('fix', '')}"
            )
            condition = f" once the {what} are gone"
        added = item.get("saving_bound_s")
        bound = (
            f"Predicted by replaying the step's dependencies (without the profiler), this saves "
            f"{_ms(saving)}, {share:.0%} of the time{condition}: {speedup:.2f}x"
            + (
                f" (adding up times gave {_ms(float(added))})."
                if isinstance(added, int | float) and abs(float(added) - saving) > 0.02 * span
                else "."
            )
        )
        item["detail"] = f"{item.get('evidence', '')} {item.get('fix', '')} {bound}".strip()
        out.append(item)
    out.sort(key=lambda item: -float(item.get("saving_s") or 0.0))
    return _after_what_they_need(out)


def _after_what_they_need(items: list[dict]) -> list[dict]:
    """A recommendation that needs another's fix first goes right after it."""
    for item in list(items):
        causes = [i.get("cause") for i in items]
        needed = item.get("requires")
        if needed in causes:
            here, at = items.index(item), causes.index(needed)
            if here < at:
                items.insert(at, items.pop(here))
    return items


def gpu_path_share(graph: StepGraph | None) -> float | None:
    """The share of the step's critical path (replayed without the profiler's own cost) that is
    the GPU's work (kernels, copies, communication, waits between streams): above one half the
    GPU sets the span, below it the host does. None without a graph with GPU work."""
    if graph is None or not graph.gpu_count:
        return None
    path = predict(graph, profiler=0).critical_path
    total = float(path["dur_s"].sum()) if len(path) else 0.0
    if total <= 0:
        return None
    return float(path.loc[path["resource"].isin(GPU_RESOURCES), "dur_s"].sum()) / total
