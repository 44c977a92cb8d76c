"""The comparison's JSON form (``Comparison.to_dict()``, ``report/comparison.py``): a document of
its own (``diff``'s result saved, the Change tab) and a named run's ``change`` inside a report.

    {"schema": "jupyter_brrr.comparison", "version": 1, "created", "gpu",
     "before"/"after": SIDE = {"label", "name", "created", "source", "device", "per_run", "run"},
     "span": {"before_s", "after_s", "speedup" (null: a side took no time), "low", "high",
              "verdict" ("faster" | "slower" | "noise" | "uncertain"), "reason", "runs_before",
              "runs_after", "drift", "change", "host_before_s", "host_after_s", "explained_by"},
     "split": table (part, before_s, after_s, delta_s, before_share, after_share, verdict),
     "ops": table (name, shapes, dtypes, category, calls_*, time_*_s, share_*, delta_s, status
            "both" | "appeared" | "vanished", verdict) + "total",
     "by_name": table, "by_category": table (category, ops, calls_*, time_*_s, share_*,
            delta_s, verdict; absent from older comparisons), "kernels": table + "total",
     "counts": table (what, before, after),
     "amdahl": table (kind, part, share_before, time_before_s, time_after_s, part_speedup,
               predicted_speedup, predicted_low, predicted_high (its likely range:
               analysis.spread.prediction_band; absent from older comparisons),
               predicted_span_s, measured_speedup, limit),
     "shift": ["..."], "warnings": ["..."], "notes": ["..."]}

``check_comparison`` is its one entry point (``Comparison.from_json`` and a report's ``change``).
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
    Table,
    Text,
    Type,
    check_depth,
    check_header,
)

__all__ = [
    "COMPARISON",
    "COMPARISON_MIME_TYPE",
    "COMPARISON_SCHEMA",
    "COMPARISON_VERSION",
    "VERDICTS",
    "ComparisonType",
    "check_comparison",
]

COMPARISON_SCHEMA = "jupyter_brrr.comparison"
COMPARISON_VERSION = 1
COMPARISON_MIME_TYPE = "application/vnd.jupyter-brrr.comparison+json"
VERDICTS = ("faster", "slower", "noise", "uncertain")

_TEXT = Text()
_MAYBE_TEXT = Nullable(_TEXT)
_SECONDS = Number(low=0, high=LONGEST_S)
_MAYBE_SECONDS = Nullable(_SECONDS)
_DELTA = Nullable(Number(high=LONGEST_S))  # a change of time: either sign
_MAYBE_AMOUNT = Nullable(Number(low=0))
_MAYBE_COUNT = Nullable(Number(low=0, whole=True))
# A speed-up or its range's ends: above zero (null where a side took no time).
_FACTOR = Nullable(Number(low=0, above=True))

_SIDE = Object(
    {
        "label": _TEXT,
        "name": _TEXT,
        "created": _MAYBE_TEXT,
        "source": _TEXT,
        "device": _TEXT,
        "per_run": Number(low=1, whole=True),
    },
    {"run": _MAYBE_COUNT},
    title="ComparisonSide",
)
_SPAN = Object(
    {
        "before_s": _SECONDS,
        "after_s": _SECONDS,
        "speedup": _FACTOR,
        "low": _FACTOR,
        "high": _FACTOR,
        "verdict": OneOf(*VERDICTS),
        "runs_before": Number(low=0, whole=True),
        "runs_after": Number(low=0, whole=True),
    },
    {
        "drift": Number(low=0, high=1),
        "reason": _TEXT,
        "change": Nullable(Number()),
        "host_before_s": _MAYBE_SECONDS,
        "host_after_s": _MAYBE_SECONDS,
        "explained_by": _TEXT,
    },
    title="SpanChange",
)
_PART_VERDICT = Nullable(OneOf(*VERDICTS, ""))
_SPLIT = Table(
    {
        "part": _TEXT,
        **{name: _MAYBE_SECONDS for name in ("before_s", "after_s")},
        "delta_s": _DELTA,
        **{name: _MAYBE_AMOUNT for name in ("before_share", "after_share")},
        "verdict": _PART_VERDICT,
    },
    needs=("part", "before_s", "after_s", "delta_s"),
    always=True,
    row="ChangeSplitRow",
)
_OP_CELLS: dict[str, Type] = {
    "name": _TEXT,
    **{name: _MAYBE_TEXT for name in ("shapes", "dtypes", "category")},
    **{name: _MAYBE_AMOUNT for name in ("calls_before", "calls_after", "ops")},
    **{name: _MAYBE_SECONDS for name in ("time_before_s", "time_after_s")},
    **{name: _MAYBE_AMOUNT for name in ("share_before", "share_after")},
    "delta_s": _DELTA,
    "status": Nullable(OneOf("both", "appeared", "vanished")),
    "verdict": _PART_VERDICT,
}
_TOTAL = {"total": _MAYBE_COUNT}
# The columns of the op and category tables (comparison.py writes these).
_OP_COLUMNS = (
    *("name", "shapes", "dtypes", "category", "calls_before", "calls_after"),
    *("time_before_s", "time_after_s", "share_before", "share_after", "delta_s", "status"),
    "verdict",
)
_BY_NAME_COLUMNS = (
    *("name", "calls_before", "calls_after", "time_before_s", "time_after_s"),
    *("share_before", "share_after", "delta_s", "verdict"),
)
_OPS = Table(
    _OP_CELLS,
    _TOTAL,
    needs=("name", "time_before_s", "time_after_s", "delta_s", "status"),
    row="ChangeOpRow",
    columns=_OP_COLUMNS,
)
_BY_NAME = Table(_OP_CELLS, needs=("name",), row="ChangeByNameRow", columns=_BY_NAME_COLUMNS)
_BY_CATEGORY = Table(
    {**_OP_CELLS, "category": _MAYBE_TEXT},
    needs=(),
    row="ChangeCategoryRow",
    columns=("category", "ops", *_BY_NAME_COLUMNS[1:]),
)
_KERNELS = Table(
    {
        **_OP_CELLS,
        **{name: _MAYBE_AMOUNT for name in ("launches_before", "launches_after")},
    },
    _TOTAL,
    needs=("name",),
    row="ChangeKernelRow",
    columns=(
        *("name", "launches_before", "launches_after", "time_before_s", "time_after_s"),
        *("status", "delta_s"),
    ),
)
_COUNTS = Table(
    {"what": _TEXT, "before": Nullable(Number()), "after": Nullable(Number())},
    needs=("what",),
    always=True,
    row="ChangeCountRow",
)
_AMDAHL = Table(
    {
        "kind": _MAYBE_TEXT,
        "part": _TEXT,
        "share_before": _MAYBE_AMOUNT,
        **{name: _MAYBE_SECONDS for name in ("time_before_s", "time_after_s", "predicted_span_s")},
        **{
            name: _FACTOR
            for name in (
                "part_speedup",
                "predicted_speedup",
                "predicted_low",
                "predicted_high",
                "measured_speedup",
                "limit",
            )
        },
    },
    needs=("part",),
    row="AmdahlRow",
    columns=(
        *("kind", "part", "share_before", "time_before_s", "time_after_s", "part_speedup"),
        *("predicted_speedup", "predicted_low", "predicted_high", "predicted_span_s"),
        *("measured_speedup", "limit", "predicted_by", "not_modelled"),
    ),
)
COMPARISON = Object(
    {
        "schema": _TEXT,
        "version": Number(low=1, whole=True),
        "before": _SIDE,
        "after": _SIDE,
        "span": _SPAN,
        "split": _SPLIT,
        "ops": _OPS,
        "counts": _COUNTS,
    },
    {
        "created": _MAYBE_TEXT,
        "gpu": Flag(),
        "by_name": Nullable(_BY_NAME),
        "by_category": Nullable(_BY_CATEGORY),  # absent from older comparisons
        "kernels": Nullable(_KERNELS),
        "amdahl": Nullable(_AMDAHL),
        **{name: ListOf(_TEXT) for name in ("shift", "warnings", "notes")},
    },
    title="Comparison",
)


def check_comparison(doc: object, path: str = "") -> None:
    """Raise SchemaError, naming the first field that does not fit, unless ``doc`` is a
    comparison document this version reads (``path``: where it sits in a larger document)."""
    if not path:
        check_depth(doc)
    check_header(doc, COMPARISON_SCHEMA, COMPARISON_VERSION, "comparison", path)
    COMPARISON.check(doc, path)


class ComparisonType(Type):
    """A comparison inside another document (a report's ``change``)."""

    expected = "a comparison"

    schema = COMPARISON  # its layout, for json_schema

    def check(self, value: object, path: str) -> None:
        check_comparison(value, path)
