"""A target's plan (``target.plan()``, ``report/target.py``): a report's ``target`` and the
``TargetPlan`` object's document.

    {"goal": {"text", "kind" ("time" | "throughput"), "value", "items", "unit", "span_s"},
     "span_s", "rate", "met", "gap_s", "speedup_needed",
     "fixes": [{"kind" ("part" | "op"), "part", "label", "time_s", "share", "remains_s",
                "closes", "needed_factor", "limit"}],
     "scale": null | {"kind": "replicas", "rate_per_gpu", "replicas", "gpus_per_replica", "gpus"}
                   | {"kind": "split", "busy_s", "idle_s", "exchanged_bytes",
                      "link_bytes_per_s", "link_source", "gpus",
                      "options": [{"gpus", "span_s", "comm_s"}]},
     "capacity": null | {"peak_bytes", "capacity_bytes", "gpus"},
     "lines": ["..."], "notes": ["..."]}

Infinite figures (a factor no fix reaches) are written as null. ``check_plan`` is its one entry
point.
"""

from __future__ import annotations

from .types import (
    LONGEST_S,
    Flag,
    ListOf,
    Nullable,
    Number,
    Object,
    OneOf,
    Text,
    Type,
    check_depth,
)

__all__ = ["PLAN", "PlanType", "check_plan"]

_TEXT = Text()
_MAYBE_TEXT = Nullable(_TEXT)
_MAYBE_SECONDS = Nullable(Number(low=0, high=LONGEST_S))
_MAYBE_AMOUNT = Nullable(Number(low=0))
_MAYBE_COUNT = Nullable(Number(low=0, whole=True))
_MAYBE_FLAG = Nullable(Flag())

_GOAL = Object(
    {"text": _TEXT},
    {
        "kind": Nullable(OneOf("time", "throughput")),
        "value": _MAYBE_AMOUNT,
        "items": _MAYBE_AMOUNT,
        "unit": _MAYBE_TEXT,
        "span_s": _MAYBE_SECONDS,
    },
    title="TargetGoal",
)
_FIX = Object(
    {},
    {
        "kind": Nullable(OneOf("part", "op")),
        "part": _MAYBE_TEXT,
        "label": _MAYBE_TEXT,
        "time_s": _MAYBE_SECONDS,
        "share": _MAYBE_AMOUNT,
        "remains_s": Nullable(Number(high=LONGEST_S)),
        # What plain Amdahl said remains, beside the replayed ``remains_s``, and how that was made.
        "amdahl_remains_s": Nullable(Number(high=LONGEST_S)),
        "predicted_by": _MAYBE_TEXT,
        "closes": _MAYBE_FLAG,
        "needed_factor": _MAYBE_AMOUNT,
        "limit": _MAYBE_AMOUNT,
    },
    title="TargetFix",
)
_OPTION = Object(
    {},
    {"gpus": _MAYBE_COUNT, "span_s": _MAYBE_SECONDS, "comm_s": _MAYBE_SECONDS},
    title="ScaleOption",
)
_SCALE = Object(
    {"kind": OneOf("replicas", "split")},
    {
        "rate_per_gpu": _MAYBE_AMOUNT,
        **{name: _MAYBE_COUNT for name in ("replicas", "gpus_per_replica", "gpus")},
        **{name: _MAYBE_SECONDS for name in ("busy_s", "idle_s")},
        **{name: _MAYBE_AMOUNT for name in ("exchanged_bytes", "link_bytes_per_s")},
        "link_source": _MAYBE_TEXT,
        "options": ListOf(_OPTION),
    },
    title="TargetScale",
)
_CAPACITY = Object(
    {},
    {"peak_bytes": _MAYBE_AMOUNT, "capacity_bytes": _MAYBE_AMOUNT, "gpus": _MAYBE_COUNT},
    title="TargetCapacity",
)
PLAN = Object(
    {"goal": _GOAL},
    {
        "span_s": _MAYBE_SECONDS,
        "rate": _MAYBE_AMOUNT,
        "met": _MAYBE_FLAG,
        "gap_s": Nullable(Number(high=LONGEST_S)),
        "speedup_needed": _MAYBE_AMOUNT,
        "fixes": ListOf(_FIX),
        "scale": Nullable(_SCALE),
        "capacity": Nullable(_CAPACITY),
        "lines": ListOf(_TEXT),
        "notes": ListOf(_TEXT),
    },
    title="TargetPlan",
)


def check_plan(doc: object, path: str = "") -> None:
    """Raise SchemaError, naming the first field that does not fit, unless ``doc`` is a
    target's plan this version reads (``path``: where it sits in a larger document)."""
    if not path:
        check_depth(doc)
    PLAN.check(doc, path)


class PlanType(Type):
    """A plan inside another document (a report's ``target``)."""

    expected = "a target's plan"

    schema = PLAN  # its layout, for json_schema

    def check(self, value: object, path: str) -> None:
        check_plan(value, path)
