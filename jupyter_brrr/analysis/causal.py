"""What follows from the step's dependencies: the what-if and the advice's savings, replayed.

Adding up times that run concurrently and wait on each other counts the overlap twice: a 2x
faster kernel on a step where the GPU waits for the host saves nothing, however large its share
of the GPU's time. So every figure here is a prediction of ``replay.predict`` on the step's
graph, without the profiler's own cost (``profiler=0``: the user's step, not the profiled one),
read as a speed-up and applied to the report's span:

- **The what-if** is in ``whatif`` (the What-if tab's curves and ``Report.what_if``).
- **A recommendation's saving** (``replay_savings``): the change its fix makes, replayed. The
  synchronisations removed (``syncs=0``); launch overhead gone (``launch=0``, a CUDA graph; on a
  step that synchronises, a graph cannot capture the synchronisation, so it is predicted after
  the syncs are gone and says they must go first); a host stall taken off the critical path
  (``cpu=0``); copies made asynchronous (``copies="async"``); a fix to the kernels of some ops
  (a dtype, padding, fusion, a layout) as those ops' GPU time made shorter by the saving the
  advice found for them (their time over their time less that saving); a fusion's run of ops
  is one kernel, so its launches but one go too. The recommendations are ranked by these
  savings; a fix that needs another first comes after it. Only a wait that more launches
  follow stands in a CUDA graph's way (the wait at a call's end for its last kernels, a
  timer's or the profiler's, is outside what a graph captures).
- **In a loop of calls** (``loop_period``, ``fix_saving``): the host launches the next call
  while the GPU runs this one, so a call takes the longer of the GPU's busy time and the host's
  launch window, and a change to the GPU's work or the launch path saves no more than that
  period less the changed step's GPU work (a CUDA graph's kernels ``GRAPH_GAP_S`` apart): a
  graph on a step whose GPU work keeps the GPU busy cannot pay, however long the GPU waited
  for launches in one call on its own. ``fix_saving`` predicts a Try's saving (actions/fixes.py)
  from the A/B's eager time, calls back to back; the ranking caps with the replay's period.

What the replay cannot model is said with each figure (``Prediction.not_modelled``): work that
appears or vanishes with the change (fused or new kernels), contention between overlapping
kernels, the launch queue's depth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..schema.report import CANNOT_PAY_SHARE
from . import step_graph as sg
from .replay import GRAPH_GAP_S, Prediction, predict
from .spread import prediction_band
from .step_graph import StepGraph

__all__ = [
    "CANNOT_PAY_SHARE",
    "PREDICTED_BY",
    "cannot_pay",
    "fix_changes",
    "fix_saving",
    "gpu_path_share",
    "loop_period",
    "prerequisites",
    "replay_savings",
]

# The critical path's resources that are the GPU's own work (the rest is the host's).
GPU_RESOURCES = ("GPU kernel", "copy", "communication", "GPU wait")

PREDICTED_BY = "predicted by replaying the step's dependencies"
# A fix to some ops' kernels makes them at most this many times faster (the advice's saving can
# count rows it does not list).
_MAX_OP_FACTOR = 50.0


# --- the advice's savings -----------------------------------------------------------------------


def prerequisites(graph: StepGraph) -> dict:
    """What must go before a CUDA graph can capture the step: its synchronisations
    (``syncs=0``) and its blocking copies (``copies="async"``), where it has them."""
    awaited = np.unique(graph.await_host)
    # Only a wait that more launches follow stands in a graph's way: the wait at the end of a
    # call for its last kernels (a timer's, the profiler's) is outside what a graph captures.
    launches = np.flatnonzero(graph.h_kind == sg.LAUNCH)
    if len(awaited) and len(launches):
        last = np.full(len(graph.threads) or 1, -np.inf)
        np.maximum.at(last, graph.h_thread[launches], graph.h_start[launches])
        awaited = awaited[graph.h_start[awaited] < last[graph.h_thread[awaited]]]
    elif not len(launches):
        awaited = awaited[:0]
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
    # The advice's own saving on those kernels (kept as ``saving_bound_s`` once replayed: the
    # replayed saving is a span's, not the kernels').
    bound = recommendation.get("saving_bound_s", recommendation.get("saving_s"))
    saving = float(bound or 0.0)
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
    launches = int((graph.h_kind == sg.LAUNCH).sum())
    calls = [int(op.get("calls") or 0) for op in recommendation.get("ops") or []]
    if changes is not None and launches > 0 and sum(calls) > 0:
        if cause == "too little work":
            # One batched call for many: their launches go too (as a share of all the step's).
            changes["launch"] = max(1.0 - sum(calls) / launches, 0.0)
        elif cause == "fusion" and min(calls) > 0:
            # A fused run is one kernel: each run's launches but one go with its ops (a run
            # calls each of its ops once, so the runs are the fewest calls of one of them).
            changes["launch"] = max(1.0 - (sum(calls) - min(calls)) / launches, 0.0)
    return changes


def fix_changes(recommendation: Mapping[str, Any], graph: StepGraph) -> dict | None:
    """The change a recommendation's fix makes to the step, as ``replay.predict``'s keyword
    arguments (the module's docstring says which for each cause); None where the replay cannot
    model it. A CUDA graph on a step that synchronises is predicted after what it needs gone
    (``prerequisites``)."""
    changes = _changes_of(recommendation, graph)
    if changes is not None and recommendation.get("cause") == "launch overhead":
        changes = {**prerequisites(graph), **changes}
    return changes


# --- a loop of calls ----------------------------------------------------------------------------


def _busy(prediction: Prediction) -> float:
    """The GPU's busy time per step in a replay: the union of its nodes' intervals (streams that
    overlap count once), per copy of the step."""
    timeline = prediction.timeline
    starts, ends = timeline.g_s, timeline.g_e
    if not len(starts):
        return 0.0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    # A new busy stretch begins where a node starts after everything before it has ended.
    new = np.r_[True, starts[1:] > ends[:-1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(starts) - 1]
    return float((ends[last] - starts[first]).sum()) / max(timeline.plan.copies, 1)


def _gpu_floor(prediction: Prediction, changes: Mapping[str, Any]) -> float:
    """The least time a step can take per call once changed: its GPU work, replayed under the
    change, back to back; a CUDA graph's kernels follow each other at ``GRAPH_GAP_S``, less
    the profiler's record of each (``prediction`` is replayed without the profiler, and its
    replay takes that out of each gap too)."""
    busy = _busy(prediction)
    if changes.get("launch") == 0:
        gap = max(GRAPH_GAP_S - sg.PROFILER_PER_KERNEL_S, 0.0)
        busy += prediction.graph.gpu_count * gap
    return busy


def loop_period(graph: StepGraph, span_s: float) -> float:
    """The time per call in a loop of back-to-back calls, estimated from one call: the next
    call's launches overlap this call's GPU work, so a call takes the longer of the GPU's busy
    time and the host's launch window (replayed without the profiler), and no longer than one
    call measured on its own (``span_s``)."""
    base = predict(graph, profiler=0)
    if graph.mode == "period" or not graph.host_count:
        return span_s  # a profiler step of a loop: its span is already a period
    timeline = base.timeline
    launch = graph.h_kind[timeline.plan.host_perm % graph.host_count] == sg.LAUNCH
    if not launch.any():
        return span_s
    # The host's launch window, first launch to last: the host work before the first launch
    # (entering the call, and the profiler's own start in a trace of one run) is left out, as
    # the replay's estimate of it without the profiler is least sure there.
    window = float(timeline.h_e[launch].max() - timeline.h_s[launch].min())
    return max(_busy(base), min(window, span_s))


def _extent(prediction: Prediction) -> float:
    """The run's time in a replay: its span, and for one run (not a step of a loop) the host's
    lead-in before its first GPU work too (what a stall before the first launch costs)."""
    timeline, graph = prediction.timeline, prediction.graph
    if graph.mode != "latency" or not timeline.plan.n_host:
        return timeline.span_s
    begin = float(timeline.h_s[timeline.plan.main_begin[0]])
    return timeline.end - min(timeline.start, begin)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


# Changes that act on the GPU's work or the launch path only: in a loop of calls, these cannot
# make a call shorter than its GPU work once changed (``_gpu_floor``).
_GPU_SIDE = frozenset({"ops", "category", "launch"})


def _loop_cap(changes: Mapping[str, Any], after: Prediction, period_s: float) -> float | None:
    """The most a change can save per call in a loop of calls of ``period_s`` each: the period
    less the changed step's GPU floor; None for a change that acts on host work too."""
    if not changes or not set(changes) <= _GPU_SIDE:
        return None
    return max(period_s - _gpu_floor(after, changes), 0.0)


def fix_saving(
    graph: StepGraph | None, recommendation: Mapping[str, Any], period_s: float
) -> float | None:
    """The saving per call of the recommendation's fix (``fix_changes``) in a loop of calls that
    take ``period_s`` each (the A/B's eager time: calls back to back): the replay's share of its
    own step applied to ``period_s``, and for a change to the GPU's work or the launch path no
    more than ``period_s`` less the changed GPU work (``_gpu_floor``: a CUDA graph cannot
    remove the time the GPU is busy, only the time it waits for launches that the loop does not
    already hide). None where the replay cannot model the change."""
    if graph is None or not graph.gpu_count:
        return None
    changes = fix_changes(recommendation, graph)
    if changes is None:
        return None
    base = predict(graph, profiler=0)
    after = predict(graph, profiler=0, **changes)
    cap = _loop_cap(changes, after, period_s)
    # A change to host work: a call's host lead-in before its first GPU work runs in series
    # with the rest in a loop too, so it is part of the call the share is of (``_extent``).
    measure = (lambda p: p.span_s) if cap is not None else _extent
    whole = measure(base)
    if whole <= 0:
        return None
    saving = max(whole - measure(after), 0.0) / whole * period_s
    return min(saving, cap) if cap is not None else saving


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
    period = loop_period(graph, predict(graph, profiler=0).span_s)  # in the replay's time
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
            if isinstance(item.get("saving"), dict):
                item["saving"] = {**item["saving"], "not_modelled": item["not_modelled"]}
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
        # In a loop the next call's launches overlap this call's GPU work: no change to the
        # GPU's work or the launch path saves more than the loop's period less its GPU floor.
        cap = None if first else _loop_cap(changes, after, period)
        # Said with the figure where it takes off more than a rounding (2% of the span, as for
        # the additive bound below).
        looped = cap is not None and cap < saving - 0.02 * span
        if cap is not None and cap < saving:
            saving = cap
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
        low, high = prediction_band(saving, summary)
        likely = f" (likely {_ms(low)} to {_ms(high)})" if high > low * 1.005 else ""
        bound = (
            f"Predicted by replaying the step's dependencies (without the profiler), this saves "
            f"{_ms(saving)}{likely}, {share:.0%} of the time{condition}: {speedup:.2f}x"
            + (
                f" (adding up times gave {_ms(float(added))})."
                if isinstance(added, int | float) and abs(float(added) - saving) > 0.02 * span
                else "."
            )
        )
        floor = _gpu_floor(after, changes)
        if looped:
            bound += (
                f" In a loop of calls this is at most the time per call (about {_ms(period)}) "
                f"less the GPU's own work once changed ({_ms(floor)}): the "
                "host launches the next call while the GPU runs this one"
                + (", so this fix cannot pay there." if saving <= 0.02 * span else ".")
            )
        if share < CANNOT_PAY_SHARE:
            item["ruled_out"] = (
                "in a loop of calls the host launches the next call while the GPU runs this "
                f"one, and the GPU's own work once changed ({_ms(floor)}) fills the time per "
                f"call (about {_ms(period)})"
                if looped
                else _no_gain(saving, added, span)
            )
        item["detail"] = f"{item.get('evidence', '')} {item.get('fix', '')} {bound}".strip()
        item["saving"] = {
            "text": bound,
            "seconds": saving,
            "low_s": low,
            "high_s": high,
            "predicted_by": "replay",
            "not_modelled": list(after.not_modelled),
        }
        out.append(item)
    out.sort(key=lambda item: -float(item.get("saving_s") or 0.0))
    return _after_what_they_need(out)


def _no_gain(saving: float, added: object, span: float) -> str:
    """Why a fix the replay predicts no gain for is ruled out."""
    return (
        f"replaying the step's dependencies, it saves {_ms(saving)}"
        + (
            f" (adding up times gave {_ms(float(added))})"
            if isinstance(added, int | float) and float(added) > saving + 0.02 * span
            else ""
        )
        + ": the time it removes runs alongside other work that sets the span"
    )


def cannot_pay(recommendations: list[dict], span_s: float) -> tuple[list[dict], list[dict]]:
    """The recommendations split in two: those to rank, and those the step's replay says cannot
    pay (a saving under ``CANNOT_PAY_SHARE`` of the step), each with ``"ruled_out"``: why, in
    words. A report written before the split (its replayed recommendations all in one list)
    gets the same: the reason from its saving's sentence. An additive bound is never ruled out
    (the detectors keep only savings of ``advice.MIN_SHARE`` and more)."""
    kept: list[dict] = []
    ruled: list[dict] = []
    for item in recommendations:
        field = item.get("saving")
        saving: dict = field if isinstance(field, dict) else {}
        replayed = (
            item.get("predicted_by") == PREDICTED_BY or saving.get("predicted_by") == "replay"
        )
        share = item.get("share")
        if not item.get("ruled_out") and not (
            replayed and isinstance(share, int | float) and share < CANNOT_PAY_SHARE
        ):
            kept.append(item)
            continue
        reason = item.get("ruled_out")
        if not reason:
            text = str(saving.get("text") or item.get("detail") or "")
            at = text.find("In a loop of calls")
            reason = (
                text[at:].removesuffix(".").replace("In a loop", "in a loop", 1)
                if at >= 0
                else _no_gain(
                    float(item.get("saving_s") or 0.0), item.get("saving_bound_s"), span_s
                )
            )
        ruled.append({**item, "ruled_out": reason})
    return kept, ruled


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
