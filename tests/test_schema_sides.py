"""What Python writes is what its schema (jupyter_brrr/schema/) declares, and so what the
browser's types, generated from that schema (js/src/generated/schema_types.ts, IRaw*), carry:
the keys of each document part and the columns of each table. (That the generated file is the
schema's own is tests/test_schema_types.py; the parsed types of js/src/schema.ts are derived
from the generated ones, so the TypeScript compiler holds them to it.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_brrr.schema import job as job_schema
from jupyter_brrr.schema import report as schema

SRC = Path(__file__).resolve().parents[1] / "js" / "src"
# The generated document types.
TS = (SRC / "generated" / "schema_types.ts").read_text()


def test_job_summary_keys_agree() -> None:
    assert _interface_keys("IRawJobSummary") == set(job_schema.JOB_SUMMARY_KEYS)


def _interface_keys(name: str) -> set[str]:
    """The members of a TS interface at its top level (two-space indent)."""
    found = re.search(rf"export interface {name} \{{(.*?)\n\}}", TS, re.S)
    assert found, f"{name} is not declared in js/src/generated/schema_types.ts"
    return set(re.findall(r"^  (\w+)\??:", found.group(1), re.M))


def test_the_summary_has_the_same_keys_on_both_sides() -> None:
    """schema.Summary (what the analysis builds) and ISummary (what the renderer reads) name
    the same keys, and so do their run counts."""
    assert _interface_keys("IRawSummary") == set(schema.Summary.__annotations__)
    assert _interface_keys("IRawRuns") == set(schema.Runs.__annotations__)


def test_the_analysis_builds_the_whole_summary() -> None:
    """Every report the analysis makes (a loaded trace with and without profiler steps, one
    without GPU work, a profiled call) has every key of schema.Summary and no other."""
    import torch

    import jupyter_brrr

    data = Path(__file__).resolve().parent / "data"
    keys = set(schema.Summary.__annotations__)
    for name in ("coscos_eager", "mi250_rocm_minitoy", "cpu_only"):
        report = jupyter_brrr.load(data / f"{name}.json.gz")
        assert set(report.summary) == keys, name
    assert jupyter_brrr.load(data / "mi250_rocm_minitoy.json.gz").summary["steps"] is not None
    x = torch.randn(64)
    tried: list[dict[str, Any]] = [{}, {"warmup": 1, "repeat": 3}]
    for options in tried:
        report = jupyter_brrr.profile(lambda: x.cos(), **options)
        assert set(report.summary) == keys, options
        assert report.summary["warm"] is bool(options)


def test_the_op_and_module_rows_have_the_columns_python_writes() -> None:
    assert _interface_keys("IRawOpRow") == set(schema.OPS_COLUMNS)
    assert _interface_keys("IRawModuleRow") == set(schema.MODULE_COLUMNS)


def test_a_recommendation_has_the_keys_the_advice_writes() -> None:
    import jupyter_brrr

    report = jupyter_brrr.load(
        Path(__file__).resolve().parent / "data" / "advice" / "odd_vocab_lm_head.slow.json.gz"
    )
    written = set(report.recommendations[0])
    # "try" is written when the fix is tried (actions/fixes.py), "ruled_out" on those the
    # replay rules out (Report.ruled_out): not on a recommendation.
    assert not written & {"try", "ruled_out"}
    assert written | {"try", "ruled_out"} == _interface_keys("IRawRecommendation")
    assert set(report.recommendations[0]["ops"][0]) == _interface_keys("IRawAdviceOp")


# --- the re-measure loop (comparison.py, history_store.py, target.py) and the job's rows ------------


@pytest.fixture(scope="module")
def named_report():
    """A named run's report with a change, its history and a target, as %%brrr --name makes it
    (the advice cases' slow and fixed fp32 matmul, kept in a store of their own)."""
    import tempfile

    import jupyter_brrr
    from jupyter_brrr.report import history as history_store
    from jupyter_brrr.report.target import parse_goal

    data = Path(__file__).resolve().parent / "data" / "advice"
    slow = jupyter_brrr.load(data / "fp32_matmul_tf32_off.slow.json.gz")
    fixed = jupyter_brrr.load(data / "fp32_matmul_tf32_off.fixed.json.gz")
    assert isinstance(slow, jupyter_brrr.Report) and isinstance(fixed, jupyter_brrr.Report)
    with tempfile.TemporaryDirectory() as folder:
        history_store.keep_run(slow, "mm", code="a", goal=parse_goal("1ms"), folder=folder)
        history_store.keep_run(fixed, "mm", code="b", folder=folder)
    history_store._stores.clear()
    return fixed.to_dict()


def test_the_change_views_read_the_keys_a_named_run_writes(named_report: dict) -> None:
    change, history, target = (named_report[k] for k in ("change", "history", "target"))
    assert _interface_keys("IRawComparison") == set(change)
    assert _interface_keys("IRawSpanChange") == set(change["span"])
    assert _interface_keys("IRawComparisonSide") == set(change["before"]) == set(change["after"])
    rows = {
        "IRawChangeSplitRow": "split",
        "IRawChangeOpRow": "ops",
        "IRawChangeCategoryRow": "by_category",
        "IRawChangeCountRow": "counts",
        "IRawAmdahlRow": "amdahl",
    }
    for interface, key in rows.items():
        assert _interface_keys(interface) == set(change[key]["columns"]), interface
    assert change["amdahl"]["data"], "the case has an Amdahl row to read"
    assert _interface_keys("IRawHistoryRun") == set(history[0]) == set(history[1])
    assert _interface_keys("IRawTargetPlan") == set(target)
    assert _interface_keys("IRawTargetFix") == set(target["fixes"][0])
    assert _interface_keys("IRawTargetGoal") == set(target["goal"])


@pytest.mark.parametrize(
    ("interface", "columns"),
    [
        ("IRawJobRankRow", "JOB_RANK_COLUMNS"),
        ("IRawJobCollectiveRow", "JOB_COLLECTIVE_COLUMNS"),
        ("IRawJobStepRow", "JOB_STEP_COLUMNS"),
        ("IRawJobCallRow", "JOB_CALL_COLUMNS"),
        ("IRawJobLaneRow", "JOB_LANE_COLUMNS"),
    ],
)
def test_the_job_rows_have_the_columns_python_writes(interface: str, columns: str) -> None:
    assert _interface_keys(interface) == set(getattr(job_schema, columns))


def test_the_sweep_and_memory_documents_have_the_keys_python_writes() -> None:
    import torch

    import jupyter_brrr

    result = jupyter_brrr.sweep(lambda n: torch.ones(n) * 2, [2, 4], warmup=0, repeat=1)
    assert set(result.to_dict()) == _interface_keys("IRawSweep")
    assert set(result.to_dict()["fit"] or {}) <= _interface_keys("IRawSweepFit")
    memory = jupyter_brrr.memory_breakdown(lambda: torch.ones(4096) * 2, warmup=0)
    doc = memory.to_dict()
    assert set(doc) == _interface_keys("IRawMemory")
    assert set(doc["timeline"]) == _interface_keys("IRawMemoryTimeline")
    assert set(doc["at_peak"]) == set(schema.MEMORY_CATEGORIES)


def test_the_example_named_run_and_job_have_what_python_writes(named_report: dict) -> None:
    """tests/data/reports/named.json and job.json, which the browser app's unit tests read
    (js/src/__tests__/remeasure.spec.ts), carry the keys and columns Python writes today."""
    import jupyter_brrr

    reports = Path(__file__).resolve().parent / "data" / "reports"
    named = json.loads((reports / "named.json").read_text())
    for key in ("change", "history", "target"):
        assert named[key], key
    change = named["change"]
    assert set(change) == set(named_report["change"])
    for table in ("split", "ops", "by_category", "counts", "amdahl"):
        assert change[table]["columns"] == named_report["change"][table]["columns"], table
    assert set(named["history"][0]) == set(named_report["history"][0])
    assert set(named["target"]) == set(named_report["target"])

    job = json.loads((reports / "job.json").read_text())
    again = json.loads(
        jupyter_brrr.load(Path(__file__).resolve().parent / "data" / "ranks").to_json()
    )
    assert set(job["summary"]) == set(again["summary"]) == set(job_schema.JOB_SUMMARY_KEYS)
    for table in ("ranks", "collectives", "steps", "calls", "lanes"):
        assert job[table]["columns"] == again[table]["columns"], table
        assert len(job[table]["data"]) == len(again[table]["data"]), table


def test_the_sweep_example_reads_back_whole() -> None:
    """tests/data/reports/sweep.json, a CPU report with its sweep and memory breakdown (the
    vitest suite reads the same file)."""
    import json

    from jupyter_brrr import Report

    doc = json.loads(
        (Path(__file__).resolve().parent / "data" / "reports" / "sweep.json").read_text()
    )
    report = Report.from_json(doc)
    assert report.sweep == doc["sweep"] and report.memory == doc["memory"]
    assert doc["sweep"]["points"]["columns"] == list(schema.SWEEP_POINT_COLUMNS)
    assert set(doc["memory"]["at_peak"]) == set(schema.MEMORY_CATEGORIES)


# Numbers whose spelling JSON.stringify changes, or might: whole floats (below and above 2**53,
# up to where JavaScript turns to exponents), negative zero, exponents both ways.
AWKWARD_NUMBERS = [
    0.0,
    -0.0,
    1.0,
    -3.0,
    2.5,
    1e-7,
    1.5e-5,
    123456789.0,
    4.8e12,
    2.0**53,
    2.0**53 + 2,
    1.2345678901234567e19,
    1e20,
    1e21,
    1.5e300,
    5e-324,
    3,
    -(2**40),
]


def test_a_document_in_a_notebook_output_survives_javascripts_json_unchanged(
    js_round_trip,
) -> None:
    """What a front end saves back (JSON.stringify of what it parsed) is what the kernel wrote,
    value for value and character for character; without the respelling it is not."""
    doc = {
        "numbers": AWKWARD_NUMBERS,
        "nested": {"table": [[1.0, "2.0", None, True], [0.5, "x", False, 7.0]]},
    }
    written = json.dumps(schema.as_saved_by_browser(doc))
    assert json.dumps(json.loads(js_round_trip(written))) == written
    # The same values, as the doubles a reader parses (1 == 1.0, 0 == -0.0).
    assert json.loads(written, parse_int=float) == json.loads(json.dumps(doc), parse_int=float)
    plain = json.dumps(doc)
    assert json.dumps(json.loads(js_round_trip(plain))) != plain


def test_an_ab_variants_split_and_the_display_have_the_keys_python_writes() -> None:
    """A variant's split has the summary's parts and the span (actions/ab.py); the display
    (views/display.py) has the roofline's geometry, its bandwidth slope and its ceilings."""
    import jupyter_brrr

    parts = {f"{part}_s" for part in schema.SPLIT_PARTS} | {"span_s"}
    assert parts == _interface_keys("IRawABSplit")
    report = jupyter_brrr.load(Path(__file__).resolve().parent / "data" / "coscos_eager.json.gz")
    display = report.to_dict()["display"]
    assert set(display) == _interface_keys("IRawDisplay")
    roofline = display["roofline"]
    assert set(roofline) == _interface_keys("IRawRooflineSpec")
    assert roofline["bandwidth"] and roofline["ceilings"]
    assert set(roofline["bandwidth"]) == _interface_keys("IRawRooflineBandwidth")
    for ceiling in roofline["ceilings"]:
        assert set(ceiling) == _interface_keys("IRawRooflineCeiling")
