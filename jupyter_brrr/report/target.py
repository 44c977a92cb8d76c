"""A target for the code: time per run (``30ms``) or throughput (``2000/s`` with items per run).

``plan(report, "30ms")`` says how far the measurement is from the goal and what could close the
gap. How each number is made:

- **The goal as a span.** A time target is the span per run it names; a throughput target of R
  items per second with ``items`` items per run is a span of ``items / R`` (without ``items``, R is
  runs per second).
- **The gap** is the span per run minus that goal; the speed-up needed is span / goal.
- **Fixing the top bottleneck** (Amdahl): for the largest part of the split and the largest op
  (by name), what remains if that part took no time at all is ``span - part``. When that is at or
  under the goal the fix can close the gap, and the part must get ``part / (goal - (span - part))``
  times faster; when it is above, no speed-up of that part alone reaches the goal.
- **Scaling out**, the other road (an estimate, and labelled so), on a GPU whenever the goal is
  not met:
  * throughput: replicas (data parallel) at the measured speed each, ``ceil(goal rate / rate)``
    GPUs; every replica holds the whole state, so each must fit in one GPU's memory;
  * time per run: splitting one run across n GPUs (tensor parallel, in one node), at best
    ``busy / n + idle + communication``: the GPU work divides, the idle time (the host's
    launches and Python) does not, and the split exchanges activations. The exchange is
    estimated as in Megatron-style tensor parallelism: half the weight matmuls all-reduce their
    output, the smaller of their input and output activation (one [tokens, width] tensor per
    pair of matmuls), costing ``2 (n - 1) / n * bytes / link bandwidth`` with the link's
    per-direction bandwidth from ``peaks.INTERCONNECTS``. Convolutions and other ops add no exchange
    here, so for them the estimate is a floor.
  * capacity: when the peak memory exceeds one GPU's memory, the state must be split across
    ``ceil(peak / capacity)`` GPUs (weights, activations and temporaries split evenly, at best).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..costs.peaks import NODE_GPUS, interconnect
from ..schema.plan import check_plan
from ..schema.report import SPLIT_PARTS
from ..schema.types import parse_document
from . import display
from .shown import Shown
from .summary import part_label, per_run_divisor
from .writing import json_safe

if TYPE_CHECKING:
    from .report import Report

_TIME_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0}
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(us|µs|ms|s|sec|min)\s*$", re.I)
_RATE = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([A-Za-z_][A-Za-z_ ]*?)?\s*/\s*(s|sec|second)\s*$",
    re.I,
)

_ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
# Weight matmuls, and where their activation input and weight sit among the input shapes.
_WEIGHT_MATMULS = {
    "aten::mm": (0, 1),
    "aten::addmm": (1, 2),
    "aten::linear": (0, 1),
    "aten::matmul": (0, 1),
}


class TargetError(ValueError):
    """A target that cannot be read; the message says how to write one."""


@dataclass(frozen=True)
class Goal:
    """What the user asked for: ``kind`` "time" (``value`` seconds per run) or "throughput"
    (``value`` items per second, ``items`` items per run)."""

    text: str
    kind: str
    value: float
    items: float | None = None
    unit: str = ""

    @property
    def span_s(self) -> float:
        """The span per run that meets the goal."""
        if self.kind == "time":
            return self.value
        return (self.items or 1.0) / self.value

    def rate(self, span_s: float) -> float:
        """Items (or runs) per second at this span per run."""
        return (self.items or 1.0) / span_s if span_s > 0 else math.inf

    @property
    def unit_name(self) -> str:
        return self.unit or ("items" if self.items else "runs")


def parse_goal(text: str, items: float | None = None) -> Goal:
    """Read ``30ms``, ``250us``, ``0.5s`` (time per run) or ``2000/s``, ``2000 img/s``
    (throughput, with ``items`` per run; without it, runs per second)."""
    raw = str(text).strip()
    if items is not None and not (math.isfinite(float(items)) and float(items) > 0):
        raise TargetError(f"--items must be a positive number of items per run, not {items!r}.")
    match = _TIME.match(raw)
    if match:
        value = float(match.group(1)) * _TIME_UNITS[match.group(2).lower()]
        if not value > 0:
            raise TargetError(f"The target {raw!r} is zero: give a positive time per run.")
        if not math.isfinite(value):
            raise TargetError(
                f"The target {raw!r} is beyond any time a double holds: give a time per run "
                "such as 30ms."
            )
        return Goal(text=raw, kind="time", value=value)
    match = _RATE.match(raw)
    if match:
        value = float(match.group(1))
        if not value > 0:
            raise TargetError(f"The target {raw!r} is zero: give a positive rate.")
        if not math.isfinite(value):
            raise TargetError(
                f"The target {raw!r} is beyond any rate a double holds: give a rate such as 2000/s."
            )
        unit = (match.group(2) or "").strip()
        return Goal(
            text=raw,
            kind="throughput",
            value=value,
            items=None if items is None else float(items),
            unit=unit,
        )
    raise TargetError(
        f"Cannot read the target {raw!r}. Write a time per run with its unit (30ms, 250us, "
        "0.5s) or a throughput per second (2000/s, or 2000 img/s with --items 64: the items "
        "one run processes)."
    )


# --- the plan ----------------------------------------------------------------------------------


def plan(report: Report, goal: Goal | str, items: float | None = None) -> dict:
    """The target's plan for this report, JSON-safe: the gap, what fixing the top bottleneck
    can give, and what scaling out would take. ``lines`` say it in words."""
    if not isinstance(goal, Goal):
        goal = parse_goal(goal, items)
    s = report.summary
    per_run = per_run_divisor(s)
    span = float(s.get("span_s") or 0.0) / per_run
    gpu = bool(s.get("gpu"))
    out: dict[str, Any] = {
        "goal": {**asdict(goal), "span_s": goal.span_s},
        "span_s": span,
        "rate": goal.rate(span) if goal.kind == "throughput" else None,
        "met": span <= goal.span_s,
        "gap_s": span - goal.span_s,
        "speedup_needed": span / goal.span_s,
        "fixes": [],
        "scale": None,
        "capacity": _capacity(s),
        "lines": [],
        "notes": [],
    }
    if span <= 0:
        out["lines"] = ["The report has no span to hold against the target: nothing ran."]
        return json_safe(out)
    out["fixes"] = [
        f for f in (_top_part(s, span, per_run, gpu), _top_op(report, span, per_run)) if f
    ]
    graph = report.graph if gpu and report.graph is not None and report.graph.gpu_count else None
    for fix in out["fixes"]:
        fix.update(_fix_figures(fix["time_s"], span, goal.span_s))
        if graph is not None:
            fix.update(_replayed_fix(graph, fix, span, goal.span_s))
    # Scaling out is the other road to the goal: shown whenever the goal is not met (after
    # the fixes, which may be the cheaper road when one can close the gap).
    if not out["met"] and gpu:
        out["scale"] = (
            _replicas(goal, span, out["capacity"])
            if goal.kind == "throughput"
            else _split(report, s, span, per_run, goal.span_s)
        )
    out["lines"], out["notes"] = _words(goal, out, gpu)
    return json_safe(out)


def _capacity(s: Mapping) -> dict | None:
    peak, capacity = s.get("peak_memory_bytes"), s.get("memory_capacity_bytes")
    if not capacity:
        capacity = (s.get("peaks") or {}).get("memory_bytes")
    if not peak or not capacity:
        return None
    return {
        "peak_bytes": float(peak),
        "capacity_bytes": float(capacity),
        "gpus": max(math.ceil(float(peak) / float(capacity)), 1),
    }


def _top_part(s: Mapping, span: float, per_run: int, gpu: bool) -> dict | None:
    parts = {p: float(s.get(f"{p}_s") or 0.0) / per_run for p in SPLIT_PARTS}
    part = max(parts, key=lambda p: parts[p])
    if parts[part] <= 0:
        return None
    label = part_label(part, gpu)
    return {"kind": "part", "part": part, "label": label, "time_s": parts[part]}


def _top_op(report: Report, span: float, per_run: int) -> dict | None:
    ops = report.ops
    key = "gpu_time_s" if report.summary.get("gpu") else "self_cpu_time_s"
    if not len(ops) or key not in ops or "name" not in ops:
        return None
    by_name = pd.to_numeric(ops[key], errors="coerce").fillna(0.0).groupby(ops["name"]).sum()
    if not len(by_name) or by_name.max() <= 0:
        return None
    name = str(by_name.idxmax())
    # Op times of a CPU report come from the profiled run: never more than the span.
    seconds = min(float(by_name.max()) / per_run, span)
    return {"kind": "op", "part": name, "label": name, "time_s": seconds}


def _fix_figures(part_s: float, span: float, goal_s: float) -> dict:
    """What remains with the part gone, whether that reaches the goal, and how much faster the
    part must get (Amdahl)."""
    remains = span - part_s
    share = part_s / span
    closes = remains <= goal_s
    if span <= goal_s:
        needed = 1.0
    elif remains < goal_s:
        needed = part_s / (goal_s - remains)
    else:
        needed = math.inf  # with the part at zero time exactly at the goal, or never
    return {
        "share": share,
        "remains_s": remains,
        "closes": closes,
        "needed_factor": needed,
        "limit": 1.0 / (1.0 - share) if share < 1 else math.inf,
    }


# A part made "infinitely" faster: the replay's limit.
_LIMIT_FACTOR = 1e6


def _replayed_fix(graph: Any, fix: Mapping, span: float, goal_s: float) -> dict:
    """``_fix_figures`` predicted by replaying the step's dependencies (without the profiler's
    own cost), its speed-ups applied to the report's span: what remains with the part at no
    time, and the factor it needs (found by bisection: the span only shrinks as the part gets
    faster). An op is its GPU work; a part of the split its kernels of that bound; idle time
    the host's work (what shortens it)."""
    from ..analysis.replay import predict

    part = str(fix["part"])

    def changes(k: float) -> dict:
        if fix["kind"] == "op":
            return {"ops": {part: k}}
        if part == "idle":
            return {"host": k}
        if part == "other":
            return {"category": {"other": k, "overhead": k}}
        return {"category": {part: k}}

    def span_at(k: float) -> float:
        return span / predict(graph, profiler=0, **changes(k)).speedup

    remains = span_at(_LIMIT_FACTOR)
    closes = remains <= goal_s
    if span <= goal_s:
        needed = 1.0
    elif not closes:
        needed = math.inf
    else:
        low, high = 1.0, _LIMIT_FACTOR
        for _ in range(24):
            middle = math.sqrt(low * high)
            low, high = (middle, high) if span_at(middle) > goal_s else (low, middle)
        needed = high if high < _LIMIT_FACTOR / 2 else math.inf
    return {
        "remains_s": remains,
        "closes": closes,
        "needed_factor": needed,
        "limit": span / remains if remains > 0 else math.inf,
        "amdahl_remains_s": span - float(fix["time_s"]),
        "predicted_by": "predicted by replaying the step's dependencies",
    }


def _replicas(goal: Goal, span: float, capacity: dict | None) -> dict:
    rate = goal.rate(span)
    replicas = max(math.ceil(goal.value / rate - 1e-9), 1)
    per_replica = capacity["gpus"] if capacity else 1
    return {
        "kind": "replicas",
        "rate_per_gpu": rate,
        "replicas": replicas,
        "gpus_per_replica": per_replica,
        "gpus": replicas * per_replica,
    }


def tensor_parallel_bytes(ops: pd.DataFrame, per_run: int = 1) -> float:
    """Bytes one run's tensor-parallel split would all-reduce (see the module docstring): half
    of the sum, over weight matmuls, of the smaller of their activation input and output."""
    if not len(ops) or "name" not in ops or "shapes" not in ops:
        return 0.0
    total = 0.0
    for row in ops[ops["name"].isin(list(_WEIGHT_MATMULS))].itertuples():
        # Wrappers (aten::linear over aten::addmm) carry no FLOPs of their own: skip them, or
        # the same matmul counts twice.
        if not _finite_positive(getattr(row, "flops", None)):
            continue
        shapes = _shapes(row.shapes)
        x_at, w_at = _WEIGHT_MATMULS[row.name]
        if shapes is None or len(shapes) <= max(x_at, w_at):
            continue
        x, w = shapes[x_at], shapes[w_at]
        if len(w) != 2 or len(x) < 2:
            continue  # not a weight matmul (a batched product: attention, local to a split)
        rows = math.prod(x[:-1])
        width_out = w[0] if row.name == "aten::linear" else w[1]
        element = _ELEMENT_BYTES.get(str(getattr(row, "dtype", "") or ""), 4)
        smaller = min(rows * x[-1], rows * width_out) * element
        total += smaller * float(getattr(row, "calls", 1) or 1) / per_run
    return total / 2


def _shapes(text: Any) -> list[list[int]] | None:
    try:
        value = ast.literal_eval(str(text))
    except (ValueError, SyntaxError):
        return None
    if not isinstance(value, list):
        return None
    shapes = []
    for item in value:
        if isinstance(item, list) and all(isinstance(d, int) for d in item):
            shapes.append(item)
        else:
            shapes.append([])
    return shapes


def _finite_positive(value: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number > 0


def _split(report: Report, s: Mapping, span: float, per_run: int, goal_s: float) -> dict:
    busy = float(s.get("busy_s") or 0.0) / per_run
    idle = max(span - busy, 0.0)
    link = interconnect(str(s.get("device") or ""))
    exchanged = tensor_parallel_bytes(report.ops, per_run)
    out: dict[str, Any] = {
        "kind": "split",
        "busy_s": busy,
        "idle_s": idle,
        "exchanged_bytes": exchanged,
        "link_bytes_per_s": link[0] if link else None,
        "link_source": link[1] if link else None,
        "gpus": None,
        "options": [],
    }
    for n in range(2, NODE_GPUS + 1):
        comm = 2 * (n - 1) / n * exchanged / link[0] if link else math.nan
        total = busy / n + idle + (comm if link else 0.0)
        out["options"].append({"gpus": n, "span_s": total, "comm_s": comm})
        if out["gpus"] is None and total <= goal_s and link:
            out["gpus"] = n
    return out


def _rate(value: float) -> str:
    """A rate as people write it: 178,432 or 2.5."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


# --- in words ------------------------------------------------------------------------------------


def _words(goal: Goal, plan: dict, gpu: bool) -> tuple[list[str], list[str]]:
    """The plan in words, carried in its document (the app shows them as they are), its times
    and sizes written by the rules every view follows (``display``)."""
    span, goal_s = plan["span_s"], goal.span_s
    lines: list[str] = []
    notes: list[str] = []
    if goal.kind == "time":
        now, wanted = f"{display.seconds(span)} per run", f"{display.seconds(goal_s)}"
    else:
        unit = goal.unit_name
        now = f"{_rate(plan['rate'])} {unit}/s ({display.seconds(span)} per run)"
        wanted = f"{_rate(goal.value)} {unit}/s ({display.seconds(goal_s)} per run)"
        if goal.items is None:
            notes.append(
                "The throughput counts runs of the code per second: give --items N (items=N) for "
                "the items one run processes."
            )
    if plan["met"]:
        lines.append(
            f"Target met: {now} against {wanted}, {display.seconds(goal_s - span)} to spare "
            f"({goal_s / span:.2f}x)."
        )
        return lines, notes
    lines.append(
        f"{display.seconds(plan['gap_s'])} over the target: {now} against {wanted}; it needs "
        f"{plan['speedup_needed']:.2f}x."
    )
    for fix in plan["fixes"]:
        what = fix["label"]
        share = f"{100 * fix['share']:.0f}%"
        replayed = (
            ", predicted by replaying the step's dependencies" if fix.get("predicted_by") else ""
        )
        if fix["closes"]:
            needed = fix["needed_factor"]
            how = "taking no time at all" if math.isinf(needed) else f"{needed:.3g}x faster"
            lines.append(
                f"Fixing {what} ({share} of the span) can close it: it must get {how} "
                f"(with it at zero, {display.seconds(fix['remains_s'])} would remain{replayed})."
            )
        else:
            lines.append(
                f"Fixing {what} ({share} of the span) cannot close it: even at zero time "
                f"{display.seconds(fix['remains_s'])} would remain (at most {fix['limit']:.2f}x"
                f"{replayed})."
            )
    scale = plan.get("scale")
    capacity = plan.get("capacity")
    other_road = any(f["closes"] for f in plan["fixes"])
    either = "Or, scaling out" if other_road else "Scaling out"
    splitting = "Or, splitting" if other_road else "Splitting"
    if scale and scale["kind"] == "replicas":
        lines.append(
            f"{either} (an estimate): {scale['replicas']} replicas at "
            f"{_rate(scale['rate_per_gpu'])} {goal.unit_name}/s each reach it "
            f"({scale['gpus']} GPU{'s' if scale['gpus'] > 1 else ''}; data parallel, each "
            "replica runs the whole code on its share of the items)."
        )
        notes.append(
            "Replicas assume the items split evenly and each GPU keeps this speed; data-parallel "
            "training adds an all-reduce of the gradients each step, not counted here."
        )
    elif scale and scale["kind"] == "split":
        link = scale["link_bytes_per_s"]
        if link is None:
            lines.append(
                f"{splitting} one run across GPUs: no "
                "interconnect figure is known for this GPU, so the communication cannot be "
                "estimated."
            )
        elif scale["gpus"] is not None:
            option = scale["options"][scale["gpus"] - 2]
            lines.append(
                f"{splitting} one run across {scale['gpus']} GPUs (tensor parallel, an "
                f"estimate) could reach it: {display.seconds(option['span_s'])} = GPU work "
                f"{display.seconds(scale['busy_s'])} / {scale['gpus']} + idle "
                f"{display.seconds(scale['idle_s'])} (the host's share, not divided) + "
                f"communication {display.seconds(option['comm_s'])} (all-reduce of "
                f"{display.nbytes(scale['exchanged_bytes'])} of activations over "
                f"{link / 1e9:.0f} GB/s per direction)."
            )
        else:
            best = min(scale["options"], key=lambda o: o["span_s"])
            if scale["idle_s"] >= goal_s:
                why = (
                    f"the idle time alone, {display.seconds(scale['idle_s'])} (the host launching "
                    "work and running Python), is over the target, and more GPUs do not shorten "
                    "it: remove the overhead first (CUDA graphs, torch.compile)"
                )
            else:
                why = (
                    f"the best, {display.seconds(best['span_s'])} on {best['gpus']} GPUs, stays over "
                    "it (the host's idle time does not divide and communication grows)"
                )
            lines.append(
                f"{splitting} one run across up to {NODE_GPUS} "
                f"GPUs of one node (tensor parallel, an estimate) does not reach it: {why}."
            )
        if link is not None:
            notes.append(
                f"Interconnect: {scale['link_source']}. The exchange is estimated from the weight "
                "matmuls' activations, as Megatron-style tensor parallelism all-reduces them; "
                "convolutions and other ops add none here, so for them it is a floor."
            )
    if capacity and capacity["gpus"] > 1:
        lines.append(
            f"Capacity: the peak memory, {display.nbytes(capacity['peak_bytes'])}, exceeds one GPU's "
            f"{display.nbytes(capacity['capacity_bytes'])}: the state must be split across at least "
            f"{capacity['gpus']} GPUs."
        )
    elif capacity and scale:
        lines.append(
            f"Capacity: the peak memory, {display.nbytes(capacity['peak_bytes'])} of "
            f"{display.nbytes(capacity['capacity_bytes'])}, fits on one GPU."
        )
    if not gpu:
        notes.append(
            "This report has no GPU work: the times are the CPU's, and scaling out across GPUs "
            "is not estimated."
        )
    return lines, notes


class TargetPlan(Shown):
    """A target's plan (``plan()``'s dict in ``.doc``); the views draw it (``Shown``)."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc

    @classmethod
    def from_json(cls, text: str | bytes | Mapping) -> TargetPlan:
        """Read a plan (``to_dict()``'s JSON, or a report's ``target``); one that does not fit
        its schema raises ``SchemaError`` naming the bad field."""
        doc = parse_document(text, "target's plan")
        check_plan(doc)
        assert isinstance(doc, dict)
        return cls(doc)

    @property
    def met(self) -> bool:
        return bool(self.doc.get("met"))

    @property
    def lines(self) -> list[str]:  # the plan's own words, not the text view's lines
        """The plan in words, as its document carries them: the gap, the fixes, scaling out,
        capacity (``repr`` adds the goal and the notes)."""
        return list(self.doc.get("lines") or [])

    def to_dict(self) -> dict:
        return self.doc
