"""The what-if: the span if one part of the step got N times faster, predicted by replaying the
step's dependencies (``replay.predict``), for the browser's What-if tab and ``Report.what_if``.

What can be made faster (``targets``): each part of the split (the GPU work of a bound: compute,
memory, communication, "other" for the rest; idle time is not a thing to make faster, so its row
is the host's work made faster, ``host=N``, what shortens it), the whole step's knobs (all GPU
work, ``gpu=N``; the launch path, ``launch=1/N``, a CUDA graph in the limit; the
synchronisations removed, ``syncs=0``, which cannot be halved; the profiler's own cost,
``profiler=1/N``, where the span is the profiled run's) and the top ops by GPU time.

Every prediction is a speed-up of the replay against the unchanged replay, both without the
profiler's own cost (the user's step, not the profiled one; the profiler's row against the
profiled replay), applied to the report's span: ``span_s / speedup``.

The browser cannot replay the graph, so the report carries each target's curve (``curves``):
the span's ratio to the unchanged replay at a few factors between 1 and ``MAX_FACTOR``, and its
limit. The tab interpolates between them linearly in 1/N (exact at those factors). A replayed
span is convex and piecewise linear in 1/N (the longest of the step's paths, each a straight
line in 1/N), bent where another resource starts to set the span: between two factors it lies
below their chord and above the neighbouring chords extended, so a factor is added where those
bounds leave the widest gap (where the curve bends), until no gap is wider than ``TOLERANCE``
of the span (at most ``CURVE_POINTS`` factors). ``table`` replays the factors asked for exactly,
so the two agree at the curve's factors and within that gap between them (under 1% on the
recorded traces of tests/data).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from . import step_graph as sg
from .replay import Changes, predict
from .step_graph import StepGraph

__all__ = ["MAX_FACTOR", "PREDICTED_BY", "Target", "curves", "interpolate", "table", "targets"]

PREDICTED_BY = "predicted by replaying the step's dependencies (without the profiler's own cost)"
# The What-if tab's slider reaches 100x.
MAX_FACTOR = 100.0
# A factor that stands for "infinitely faster" (the limit).
LIMIT_FACTOR = 1e6
# The curve's first factors, then more where it can stray this far (as a share of the span)
# from the straight line between two, at most CURVE_POINTS factors in all.
START_FACTORS = (1.0, math.sqrt(2.0), 2.0, 10.0, math.sqrt(10 * MAX_FACTOR), MAX_FACTOR)
TOLERANCE = 0.003
CURVE_POINTS = 12
# The top ops by GPU time that the what-if offers.
TOP_OPS = 6
# Span sources that include the profiler's own cost (the profiler's row is offered only there).
PROFILED_SOURCES = ("trace", "trace_step", "cuda_events_profiled", "host_clock_profiled")
SPLIT_PARTS = ("compute", "memory", "communication", "other", "idle")
PART_WORDS = {
    "compute": "Compute-bound GPU work",
    "memory": "Memory-bound GPU work",
    "communication": "Communication",
    "other": "Other GPU work",
    "idle": "Idle time: the host's work",
}


@dataclass(frozen=True)
class Target:
    """One thing the what-if can make faster: ``id`` (the tab's: ``part:compute``,
    ``knob:launch``, ``op:0``), ``kind`` (part, knob, op), ``key`` (the part, the knob, or the
    op's name and shapes), ``label``, ``time_s`` and ``share`` of the span (where it has one),
    ``scalable`` (False: removed or not, the synchronisations) and ``changes``, the replay's
    changes at a factor."""

    id: str
    kind: str
    key: str
    label: str
    time_s: float | None
    share: float | None
    scalable: bool
    changes: Callable[[float], dict]
    profiled: bool = False  # against the profiled replay (the profiler's own row)
    name: str | None = None
    shapes: str | None = None

    @property
    def empty(self) -> bool:
        """A part or op with no time: nothing to make faster (idle time of none still has the
        host's work)."""
        return self.kind != "knob" and self.key != "idle" and (self.time_s or 0.0) <= 0

    def speedup(self, graph: StepGraph, factor: float) -> float:
        """The step's speed-up at ``factor`` (any factor above 1 for one not scalable)."""
        if factor == 1 or self.empty:
            return 1.0
        if self.profiled:
            # Against the profiled replay (predict's baseline is at the same profiler setting).
            return predict(graph).span_s / predict(graph, **self.changes(factor)).span_s
        return predict(graph, profiler=0, **self.changes(factor)).speedup

    def words(self) -> str:
        """The change replayed, in words."""
        if self.key == "launch":
            return "launch path Nx shorter (gone in the limit: a CUDA graph)"
        if self.key == "profiler":
            return "the profiler's own cost Nx smaller (gone in the limit)"
        return Changes(**self.changes(2.0)).words().replace("2x", "Nx")


def _part_changes(part: str) -> Callable[[float], dict]:
    if part == "idle":
        return lambda k: {"host": k}
    if part == "other":
        return lambda k: {"category": {"other": k, "overhead": k}}
    return lambda k: {"category": {part: k}}


def _at_limit(factor: float) -> float:
    return 0.0 if factor >= LIMIT_FACTOR else 1.0 / factor


def targets(
    graph: StepGraph, summary: Mapping[str, Any], ops: pd.DataFrame, top: int = TOP_OPS
) -> list[Target]:
    """What the what-if offers for this step (see the module's docstring)."""
    span = float(summary.get("span_s") or 0.0)

    def share(seconds: float | None) -> float | None:
        if seconds is None or span <= 0:
            return None
        return min(max(seconds, 0.0) / span, 1.0)

    out = []
    for part in SPLIT_PARTS:
        seconds = float(summary.get(f"{part}_s") or 0.0)
        out.append(
            Target(
                f"part:{part}",
                "part",
                part,
                PART_WORDS[part],
                seconds,
                share(seconds),
                True,
                _part_changes(part),
            )
        )
    busy = summary.get("busy_s")
    out.append(
        Target(
            "knob:gpu",
            "knob",
            "gpu",
            "All GPU work",
            float(busy) if busy is not None else None,
            share(float(busy)) if busy is not None else None,
            True,
            lambda k: {"gpu": k},
        )
    )
    launches = int((graph.h_kind == sg.LAUNCH).sum())
    if launches:
        out.append(
            Target(
                "knob:launch",
                "knob",
                "launch",
                "Launch overhead (in the limit: a CUDA graph)",
                None,
                None,
                True,
                lambda k: {"launch": _at_limit(k)},
            )
        )
    if (graph.h_kind == sg.SYNC).any():
        out.append(
            Target(
                "knob:syncs",
                "knob",
                "syncs",
                "Synchronisations removed",
                None,
                None,
                False,
                lambda k: {"syncs": 0},
            )
        )
    if summary.get("span_source", "trace") in PROFILED_SOURCES:
        out.append(
            Target(
                "knob:profiler",
                "knob",
                "profiler",
                "The profiler's own cost",
                None,
                None,
                True,
                lambda k: {"profiler": _at_limit(k)},
                profiled=True,
            )
        )
    timed = ops[ops["gpu_time_s"].fillna(0) > 0] if len(ops) else ops
    ranked = timed.nlargest(top, "gpu_time_s") if len(timed) else timed
    for i, (name, shapes, seconds) in enumerate(
        zip(
            ranked["name"].tolist(),
            ranked["shapes"].tolist(),
            ranked["gpu_time_s"].tolist(),
            strict=True,
        )
    ):
        shapes = str(shapes or "")
        out.append(
            Target(
                f"op:{i}",
                "op",
                f"{name} {shapes}".strip(),
                f"{name} {shapes}".strip(),
                float(seconds),
                share(float(seconds)),
                True,
                lambda k, key=(str(name), shapes): {"ops": {key: k}},
                name=str(name),
                shapes=shapes,
            )
        )
    return out


def _line(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float]:
    """The line through two points (x, y): its slope and intercept."""
    slope = (q[1] - p[1]) / (q[0] - p[0])
    return slope, p[1] - slope * p[0]


def _worst(points: list[tuple[float, float]], i: int) -> tuple[float, float]:
    """How far the curve can stray from the straight line between points i and i + 1 (x = 1/N,
    in increasing x), and where: a replayed span is convex in x (the longest of the step's
    paths, each a straight line in x), so it lies below that chord and above the lines through
    the neighbouring points extended; the gap is widest where those lines cross (where the curve
    bends, if it bends once). An end interval has one such line: its middle is asked."""
    (xa, ya), (xb, yb) = points[i], points[i + 1]
    chord = _line((xa, ya), (xb, yb))
    lines = []
    if i > 0:
        lines.append(_line(points[i - 1], points[i]))
    if i + 2 < len(points):
        lines.append(_line(points[i + 1], points[i + 2]))
    if len(lines) < 2:
        middle = 1 / math.sqrt((1 / xa) * (1 / xb))
        (slope, cut) = lines[0]
        far = xa if i == 0 else xb  # the end the neighbouring line does not pass through
        gap = chord[0] * far + chord[1] - (slope * far + cut)
        return max(gap, 0.0), middle
    (s1, c1), (s2, c2) = lines
    if abs(s1 - s2) < 1e-15:
        return 0.0, (xa + xb) / 2
    cross = (c2 - c1) / (s1 - s2)
    if not xa < cross < xb:
        return 0.0, (xa + xb) / 2
    gap = chord[0] * cross + chord[1] - max(s1 * cross + c1, s2 * cross + c2)
    # Not at an end: a point there tells nothing new.
    inside = min(max(cross, xa + 0.02 * (xb - xa)), xb - 0.02 * (xb - xa))
    return max(gap, 0.0), inside


def _curve(ratio_at: Callable[[float], float]) -> list[tuple[float, float]]:
    """The span's ratio to the unchanged replay at factors from 1 to ``MAX_FACTOR``: the
    ``START_FACTORS``, then a point where the curve can stray most from the straight line
    between two of them (``_worst``), while it can stray more than ``TOLERANCE``, at most
    ``CURVE_POINTS`` in all."""
    by_x = {1 / k: ratio_at(k) for k in START_FACTORS}
    while len(by_x) < CURVE_POINTS:
        points = sorted(by_x.items())
        gap, x = max(_worst(points, i) for i in range(len(points) - 1))
        if gap <= TOLERANCE:
            break
        by_x[x] = ratio_at(1 / x)
    return sorted((1 / x, y) for x, y in by_x.items())


def curves(graph: StepGraph, summary: Mapping[str, Any], ops: pd.DataFrame) -> dict | None:
    """The report's ``what_if`` field: each target's curve for the browser (see the module's
    docstring). None without GPU work in the graph or a span."""
    span = float(summary.get("span_s") or 0.0)
    if not graph.gpu_count or span <= 0:
        return None
    rows = []
    for target in targets(graph, summary, ops):
        if target.scalable and not target.empty:
            points = _curve(lambda k, t=target: 1.0 / t.speedup(graph, k))
        else:
            points = [(1.0, 1.0)]
        limit = target.speedup(graph, LIMIT_FACTOR)
        rows.append(
            {
                "id": target.id,
                "kind": target.kind,
                "key": target.key,
                "label": target.label,
                "name": target.name,
                "shapes": target.shapes,
                "time_s": target.time_s,
                "share": target.share,
                "scalable": target.scalable,
                "change": target.words(),
                "factors": [k for k, _ in points],
                "ratios": [r for _, r in points],
                "limit": limit,
            }
        )
    return {
        "predicted_by": PREDICTED_BY,
        "not_modelled": predict(graph).not_modelled,
        "max_factor": MAX_FACTOR,
        "targets": rows,
    }


def interpolate(factors: list[float], ratios: list[float], factor: float) -> float:
    """The span's ratio at ``factor`` from a curve: linear in 1/N between its factors (what the
    tab does; exact at them), the last ratio beyond the last factor."""
    if factor <= factors[0]:
        return ratios[0]
    for (a, ya), (b, yb) in itertools.pairwise(zip(factors, ratios, strict=True)):
        if factor <= b:
            return ya + (yb - ya) * (1 / a - 1 / factor) / (1 / a - 1 / b)
    return ratios[-1]


def table(
    graph: StepGraph,
    summary: Mapping[str, Any],
    ops: pd.DataFrame,
    factors: tuple[float, ...] = (2, 10),
) -> pd.DataFrame:
    """The what-if as a frame, each factor replayed exactly: one row per target (``id``, as the
    tab's; ``kind``: category for a part of the split, knob, op; ``part``: the part, the knob or
    the op's name and shapes; ``time_s``, ``share`` of the span, ``speedup_at_<N>x``,
    ``span_at_<N>x_s``, ``limit``: the speed-up at an unbounded factor, ``change``: the change
    replayed, in words)."""
    span = float(summary["span_s"])
    rows = []
    for target in targets(graph, summary, ops):
        row: dict[str, Any] = {
            "id": target.id,
            "kind": "category" if target.kind == "part" else target.kind,
            "part": target.key,
            "time_s": target.time_s,
            "share": target.share,
        }
        for factor in factors:
            speedup = target.speedup(graph, float(factor) if target.scalable else LIMIT_FACTOR)
            row[f"speedup_at_{factor:g}x"] = speedup
            row[f"span_at_{factor:g}x_s"] = span / speedup
        row["limit"] = target.speedup(graph, LIMIT_FACTOR)
        row["change"] = target.words()
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["predicted_by"] = PREDICTED_BY
    frame.attrs["not_modelled"] = predict(graph).not_modelled
    return frame
