"""One schema per document kind (``jupyter_brrr/schema/``): every reader checks its document at
the door, and what it accepts every view can draw.

The property: a saved document of any kind (``tests/data/reports``: reports, the job report, the
comparison, the history document and a run file, the target plans), mutated at random (a key
deleted, a value of the wrong type, null, a huge, negative or NaN number, deep nesting, a long
string, an array for an object, a table's column dropped), is either refused by its reader with
``SchemaError`` (nothing else), or draws in every format the view registry offers, ``repr`` and
the standalone page. ``bench/schema_fuzz.py`` makes the cases; it runs longer from the command
line (``bench/RESULTS.md``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

from jupyter_brrr import views
from jupyter_brrr.report.comparison import Comparison
from jupyter_brrr.report.history import SavedHistory, run_from_json
from jupyter_brrr.report.job import JobReport
from jupyter_brrr.report.report import Report
from jupyter_brrr.report.target import TargetPlan
from jupyter_brrr.schema.types import MAX_DEPTH, SchemaError

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT / "tests" / "data" / "reports"


def _fuzz():
    spec = importlib.util.spec_from_file_location("schema_fuzz", ROOT / "bench" / "schema_fuzz.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["schema_fuzz"] = module
    spec.loader.exec_module(module)
    return module


def _doc(name: str) -> dict:
    return json.loads((DOCUMENTS / f"{name}.json").read_text())


def _failures(result: dict) -> str:
    return "\n\n".join(
        f"case {case} ({outcome.kind}): {'; '.join(outcome.mutations)}\n{outcome.error}"
        for case, outcome in result["failures"][:5]
    )


def test_ten_thousand_mutated_documents_are_refused_or_drawn() -> None:
    fuzz = _fuzz()
    # Without pictures (as an install without matplotlib) and with the text and HTML left to
    # the notebook bundle that holds them: the next test draws pictures and every format.
    result = fuzz.run(10_000, seed=21, pictures=0.0, every=False, quiet=True)
    assert not result["failures"], _failures(result)
    counts = result["counts"]
    assert sum(counts.values()) == 10_000
    for kind in fuzz.SOURCES:
        # Each kind gets its share, and its mutations land on both sides of the schema.
        assert counts[(kind, "rejected")] >= 500, (kind, counts)
        assert counts[(kind, "rendered")] >= 100, (kind, counts)


def test_mutated_documents_draw_with_pictures_in_every_format() -> None:
    fuzz = _fuzz()
    result = fuzz.run(200, seed=22, pictures=0.1, every=True, quiet=True)
    assert not result["failures"], _failures(result)
    assert sum(n for (_, outcome), n in result["counts"].items() if outcome == "rendered") >= 15


def test_the_saved_documents_of_every_kind_are_read_and_drawn() -> None:
    objects = [
        Report.from_json(_doc("named")),
        Comparison.from_json(_doc("comparison")),
        JobReport.from_json(_doc("job")),
        SavedHistory.from_json(_doc("history")),
        TargetPlan.from_json(_doc("plan")),
        TargetPlan.from_json(_doc("plan_throughput")),
    ]
    for obj in objects:
        for format in views.formats(obj):
            views.render(obj, format)
        assert repr(obj)
    run = run_from_json(_doc("history_run"))
    assert run.name == "mm" and run.run == 2 and run.report.summary["span_s"] > 0


# --- each reader names the bad field --------------------------------------------------------------


def _set(doc: dict, path: str, value: object) -> dict:
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


def _drop(doc: dict, path: str) -> dict:
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        node = node[key]
    del node[last]
    return doc


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        # Fields the report's schema let through, and the views then crashed on.
        ("named", lambda d: _set(d, "summary.timing.median_s", "x"), "summary.timing.median_s: expected a number from 0 to 1e.09 or null, got \"x\""),
        ("named", lambda d: _set(d, "summary.timing.findings", [{"text": 1}]), r"summary.timing.findings\[0\].kind: missing"),
        ("named", lambda d: _set(d, "summary.run_spans_s", [0.1, None]), r"summary.run_spans_s\[1\]: expected a number"),
        ("named", lambda d: _set(d, "change.span.verdict", "better"), "change.span.verdict: expected one of 'faster'"),
        ("named", lambda d: _drop(d, "change.split"), "change.split: missing"),
        ("named", lambda d: _set(d, "change.before", 3), "change.before: expected an object, got 3"),
        ("named", lambda d: _set(d, "change.schema", "x"), "change: Not a jupyter_brrr comparison"),
        ("named", lambda d: _set(d, "target", 1.5), "target: expected an object, got 1.5"),
        ("named", lambda d: _set(d, "target.goal", None), "target.goal: expected an object, got null"),
        ("named", lambda d: _set(d, "target.lines", "faster"), "target.lines: expected an array"),
        ("named", lambda d: _set(d, "history.0.code_changed", "yes"), r"history\[0\].code_changed: expected true or false or null"),
        ("named", lambda d: _set(d, "history.0.run", {}), r"history\[0\].run: expected a whole number"),
        ("sweep", lambda d: _set(d, "sweep.fit", {"kind": "linear"}), "sweep.fit.per_item_bytes: missing"),
        ("sweep", lambda d: _set(d, "sweep.confirmation", {"fits": True}), "sweep.confirmation.size: missing"),
        ("sweep", lambda d: _set(d, "memory.peak_time_s", None), "memory.peak_time_s: expected a number"),
        ("sweep", lambda d: _set(d, "memory.at_peak.activations", None), "memory.at_peak.activations: expected a number"),
        ("ab", lambda d: _set(d, "display", _deep(MAX_DEPTH + 5)), "nested more than 64 levels deep"),
    ],
)  # fmt: skip
def test_a_bad_report_names_its_bad_field(name: str, change, message: str) -> None:
    doc = change(_doc(name))
    with pytest.raises(SchemaError, match=message):
        Report.from_json(doc)
    with pytest.raises(SchemaError, match=message):
        Report.from_json(json.dumps(doc))


def _deep(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _drop(d, "span"), "span: missing"),
        (lambda d: _drop(d, "before.per_run"), "before.per_run: missing"),
        (lambda d: _set(d, "span.speedup", 0), "span.speedup: expected a number above 0"),
        (lambda d: _set(d, "span.runs_before", "5"), "span.runs_before: expected a whole number"),
        (lambda d: _set(d, "split.columns", ["before_s", "after_s"]), r"split.data\[0\]: expected an array of 2 cells"),
        (lambda d: _set(d, "counts", {"columns": [], "data": []}), "counts.columns: no 'what' column"),
        (lambda d: _set(d, "ops.data.0.10", "x"), r"ops.data\[0\] column 'delta_s'"),
        (lambda d: _set(d, "amdahl.data.0.5", -1.0), r"amdahl.data\[0\] column 'part_speedup'"),
        (lambda d: _set(d, "notes", _deep(200)), "nested more than 64 levels deep"),
        (lambda d: _set(d, "version", 99), "This comparison has schema version 99"),
    ],
)  # fmt: skip
def test_a_bad_comparison_names_its_bad_field(change, message: str) -> None:
    # Before its schema: KeyError, TypeError, ZeroDivisionError or RecursionError.
    doc = change(_doc("comparison"))
    with pytest.raises(SchemaError, match=message):
        Comparison.from_json(doc)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _drop(d, "ranks"), "ranks: missing"),
        (lambda d: _set(d, "summary", []), "summary: expected an object, got an array"),
        (lambda d: _set(d, "summary.straggler", "rank 1"), "summary.straggler: expected an object"),
        (lambda d: _set(d, "summary.ranks", [0, -1]), r"summary.ranks\[1\]: expected a whole number from 0"),
        (lambda d: _set(d, "ranks.data.0.5", "slow"), r"ranks.data\[0\] column 'span_s'"),
        (lambda d: _set(d, "recommendations", [{"title": "t"}]), r"recommendations\[0\].detail: missing"),
        (lambda d: _set(d, "lanes", 7), "lanes: expected an object, got 7"),
        (lambda d: _set(d, "notes", _deep(500)), "nested more than 64 levels deep"),
    ],
)  # fmt: skip
def test_a_bad_job_report_names_its_bad_field(change, message: str) -> None:
    doc = change(_doc("job"))
    with pytest.raises(SchemaError, match=message):
        JobReport.from_json(doc)


def test_a_job_report_without_optional_tables_and_columns_draws() -> None:
    # A writer that left out the rank's span and every table but the two required ones.
    doc = _doc("job")
    ranks = doc["ranks"]
    at = ranks["columns"].index("span_s")
    del ranks["columns"][at]
    for row in ranks["data"]:
        del row[at]
    for table in ("steps", "calls", "lanes"):
        del doc[table]
    job = JobReport.from_json(doc)
    for format in views.formats(job):
        views.render(job, format)
    assert "rank" in repr(job)


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("history", lambda d: _set(d, "runs", {}), "runs: expected an array"),
        ("history", lambda d: _set(d, "runs.0.verdict", 1), r"runs\[0\].verdict: expected one of"),
        ("history", lambda d: _drop(d, "name"), "name: missing"),
        ("history_run", lambda d: _set(d, "run", 1e999), "run: expected a whole number"),
        ("history_run", lambda d: _set(d, "target", "1ms"), "target: expected an object"),
        ("history_run", lambda d: _set(d, "report.summary.span_s", "1"), "report: summary.span_s: expected a number"),
        ("plan", lambda d: _set(d, "fixes.0.time_s", "1"), r"fixes\[0\].time_s: expected a number"),
        ("plan", lambda d: _set(d, "scale.kind", "more"), "scale.kind: expected one of 'replicas', 'split'"),
        ("plan", lambda d: _drop(d, "goal"), "goal: missing"),
    ],
)  # fmt: skip
def test_bad_histories_runs_and_plans_name_their_bad_field(kind, change, message) -> None:
    doc = change(_doc(kind))
    read = {
        "history": SavedHistory.from_json,
        "history_run": run_from_json,
        "plan": TargetPlan.from_json,
    }[kind]
    with pytest.raises(SchemaError, match=message):
        read(doc)


def test_text_that_is_not_json_or_nests_too_deep_is_a_schema_error() -> None:
    for read in (Comparison.from_json, JobReport.from_json, SavedHistory.from_json):
        for text in ("not json", "[" * 100_000, '{"schema": '):
            with pytest.raises(SchemaError, match=r"the text is not JSON|Not a jupyter_brrr"):
                read(text)


def test_a_report_whose_numbers_column_is_all_null_or_missing_draws() -> None:
    # An ops table without its time column (as an older writer), or with it all null: the
    # frame's column is numeric (NaN), so the text view can rank the ops.
    for change in ("drop", "null"):
        doc = _doc("cpu_only")
        ops = doc["ops"]
        at = ops["columns"].index("self_cpu_time_s")
        calls = ops["columns"].index("calls")
        for row in ops["data"]:
            row[calls] = None
            if change == "null":
                row[at] = None
        if change == "drop":
            del ops["columns"][at]
            for row in ops["data"]:
                del row[at]
        report = Report.from_json(doc)
        assert report.ops["self_cpu_time_s"].dtype.kind == "f"
        for format in views.formats(report):
            views.render(report, format)
        assert "aten::" in repr(report)


def _drop_column(doc: dict, path: str, column: str) -> dict:
    table = doc
    for key in path.split("."):
        table = table[key]
    at = table["columns"].index(column)
    del table["columns"][at]
    for row in table["data"]:
        del row[at]
    return doc


@pytest.mark.parametrize(
    ("name", "change"),
    [
        # Each crashed a view (the fuzz run found them) though the schema accepted it.
        ("small", lambda d: _set(d, "summary.peaks", {"a": [1, {"b": None}]})),
        ("sweep", lambda d: _drop_column(d, "memory.largest", "bytes")),
        ("sweep", lambda d: _set(d, "memory.largest.data.0.1", None)),
        ("ab", lambda d: _set(d, "ops.data.0.6", 5e-324)),  # a GPU time that overflows a rate
        ("ab", lambda d: _set(d, "ops.data.0.5", None)),  # calls
    ],
)
def test_documents_the_schema_accepts_draw_without_a_warning(name: str, change) -> None:
    report = Report.from_json(change(_doc(name)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for format in views.formats(report):
            views.render(report, format)
        repr(report)


def test_a_job_straggler_with_a_null_count_is_refused() -> None:
    doc = _set(_doc("job"), "summary.straggler.varies.1", None)
    with pytest.raises(
        SchemaError, match=r"summary\.straggler\.varies\.1: expected a whole number"
    ):
        JobReport.from_json(doc)
