"""A named cell's runs (``report/history.py``): the history document, its rows in a report's
``history``, and the run files of the store.

    RUN = {"run", "created", "span_s", "compute_s", "memory_s", "communication_s", "other_s",
           "idle_s", "kernel_count", "launch_count", "warm", "device", "verdict" (against the
           run before, as a comparison's; null for the first), "speedup", "code_changed"
           (bool | null), "settings" (how it was measured, in words; absent from older reports)}

    HISTORY = {"schema": "jupyter_brrr.history", "version": 1, "name", "runs": [RUN, ...]}
        (``History.to_dict()``, ``%brrr history NAME``)

    RUN_FILE = {"schema": "jupyter_brrr.history_run", "version": 1, "name", "run",
                "code_sha1", "target": null | {"text", "items"}, "report": a report}
        (``.brrr_history/NAME/run-0001.json.gz``; its report is checked by ``check_report``)

``check_history``, ``check_run_file`` and ``RUN_ROWS`` (a report's ``history``) are the entry
points.
"""

from __future__ import annotations

from .comparison import VERDICTS
from .types import (
    LONGEST_S,
    Flag,
    ListOf,
    MapOf,
    Nullable,
    Number,
    Object,
    OneOf,
    Text,
    Type,
    check_depth,
    check_header,
)

__all__ = [
    "HISTORY_MIME_TYPE",
    "HISTORY_SCHEMA",
    "HISTORY_VERSION",
    "RUN_ROWS",
    "RUN_SCHEMA",
    "RUN_VERSION",
    "check_history",
    "check_run_file",
]

HISTORY_SCHEMA = "jupyter_brrr.history"
HISTORY_VERSION = 1
HISTORY_MIME_TYPE = "application/vnd.jupyter-brrr.history+json"
RUN_SCHEMA = "jupyter_brrr.history_run"
RUN_VERSION = 1

_TEXT = Text()
_MAYBE_TEXT = Nullable(_TEXT)
_MAYBE_SECONDS = Nullable(Number(low=0, high=LONGEST_S))
_MAYBE_AMOUNT = Nullable(Number(low=0))
_RUN_NUMBER = Number(low=1, whole=True)

_RUN_ROW = Object(
    {"run": _RUN_NUMBER},
    {
        "created": _MAYBE_TEXT,
        **{
            f"{part}_s": _MAYBE_SECONDS
            for part in ("span", "compute", "memory", "communication", "other", "idle")
        },
        "kernel_count": _MAYBE_AMOUNT,
        "launch_count": _MAYBE_AMOUNT,
        "warm": Nullable(Flag()),
        "device": _MAYBE_TEXT,
        "verdict": Nullable(OneOf(*VERDICTS)),
        "speedup": Nullable(Number(low=0, above=True)),
        "code_changed": Nullable(Flag()),
        "settings": _MAYBE_TEXT,
    },
    title="HistoryRun",
)
RUN_ROWS = ListOf(_RUN_ROW)
HISTORY = Object(
    {"schema": _TEXT, "version": _RUN_NUMBER, "name": _TEXT, "runs": RUN_ROWS}, title="History"
)
RUN_FILE = Object(
    {
        "schema": _TEXT,
        "version": _RUN_NUMBER,
        "name": _TEXT,
        "run": _RUN_NUMBER,
        "report": MapOf(Type()),  # checked by check_report
    },
    {
        "code_sha1": _MAYBE_TEXT,
        "target": Nullable(
            Object({}, {"text": _MAYBE_TEXT, "items": _MAYBE_AMOUNT}, title="HistoryRunGoal")
        ),
    },
    title="HistoryRunFile",
)


def check_history(doc: object) -> None:
    """Raise SchemaError, naming the first field that does not fit, unless ``doc`` is a
    history document this version reads."""
    check_depth(doc)
    check_header(doc, HISTORY_SCHEMA, HISTORY_VERSION, "history")
    HISTORY.check(doc, "")


def check_run_file(doc: object) -> None:
    """Raise SchemaError unless ``doc`` is a run file of the history store this version reads
    (all but its report, which ``check_report`` checks)."""
    check_depth(doc)
    check_header(doc, RUN_SCHEMA, RUN_VERSION, "history run")
    RUN_FILE.check(doc, "")
