"""The job schema's two sides, jupyter_brrr/schema.py and js/src/schema.ts, agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_brrr.schema import job as job_schema
from jupyter_brrr.schema import report as schema

TS = (Path(__file__).resolve().parents[1] / "js" / "src" / "schema.ts").read_text()


def _ts_constant(name: str) -> object:
    found = re.search(rf"export const {name} =\s+(.*?);\n", TS, re.S)
    assert found, f"{name} is not declared in js/src/schema.ts"
    value = found.group(1).strip().removesuffix(" as const")
    if value.startswith("["):
        return tuple(re.findall(r"'([^']*)'", value))
    return int(value) if value.isdigit() else value.strip("'")


@pytest.mark.parametrize(
    "name",
    [
        "JOB_SCHEMA_NAME",
        "JOB_SCHEMA_VERSION",
        "JOB_MIME_TYPE",
        "JOB_SPLIT_PARTS",
        "JOB_RANK_COLUMNS",
        "JOB_COLLECTIVE_COLUMNS",
        "JOB_STEP_COLUMNS",
        "JOB_CALL_COLUMNS",
        "JOB_LANE_COLUMNS",
    ],
)
def test_job_constants_agree(name: str) -> None:
    assert _ts_constant(name) == getattr(job_schema, name)


def test_job_summary_keys_agree() -> None:
    body = re.search(r"export interface IJobSummary \{(.*?)\n\}", TS, re.S).group(1)
    ts_keys = set(re.findall(r"^\s+(\w+)\??:", body, re.M))
    assert ts_keys == set(job_schema.JOB_SUMMARY_KEYS)


@pytest.mark.parametrize("name", ["REASONS", "CAUSES", "MODULE_COLUMNS"])
def test_advice_constants_agree(name: str) -> None:
    assert _ts_constant(name) == getattr(schema, name)


def _interface_keys(name: str) -> set[str]:
    body = re.search(rf"export interface {name} \{{(.*?)\n\}}", TS, re.S).group(1)
    return set(re.findall(r"^\s+(\w+)\??:", body, re.M))


def test_the_summary_has_the_same_keys_on_both_sides() -> None:
    """schema.Summary (what the analysis builds) and ISummary (what the renderer reads) name
    the same keys, and so do their run counts."""
    assert _interface_keys("ISummary") == set(schema.Summary.__annotations__)
    assert _interface_keys("IRuns") == set(schema.Runs.__annotations__)


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
    for options in ({}, {"warmup": 1, "repeat": 3}):
        report = jupyter_brrr.profile(lambda: x.cos(), **options)
        assert set(report.summary) == keys, options
        assert report.summary["warm"] is bool(options)


def test_the_op_and_module_rows_have_the_columns_python_writes() -> None:
    assert _interface_keys("IOpRow") == set(schema.OPS_COLUMNS)
    assert _interface_keys("IModuleRow") == set(schema.MODULE_COLUMNS)


def test_a_recommendation_has_the_keys_the_advice_writes() -> None:
    import jupyter_brrr

    report = jupyter_brrr.load(
        Path(__file__).resolve().parent / "data" / "advice" / "odd_vocab_lm_head.slow.json.gz"
    )
    written = set(report.recommendations[0])
    # "try" is written when the fix is tried (actions/fixes.py), "ruled_out" on those the
    # replay rules out (Report.ruled_out): not on a recommendation.
    assert not written & {"try", "ruled_out"}
    assert written | {"try", "ruled_out"} == _interface_keys("IRecommendation")

    assert set(report.recommendations[0]["ops"][0]) == _interface_keys("IAdviceOp")


def test_a_fix_that_cannot_pay_is_ruled_out_at_the_same_share_on_both_sides() -> None:
    assert float(str(_ts_constant("CANNOT_PAY_SHARE"))) == schema.CANNOT_PAY_SHARE


# --- the re-measure loop (comparison.py, history_store.py, target.py) and the job's rows ------------


def _top_keys(name: str) -> set[str]:
    """The members of a TS interface at its top level (two-space indent)."""
    body = re.search(rf"export interface {name} \{{(.*?)\n\}}", TS, re.S).group(1)
    return set(re.findall(r"^  (\w+)\??:", body, re.M))


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
    with tempfile.TemporaryDirectory() as folder:
        history_store.keep_run(slow, "mm", code="a", goal=parse_goal("1ms"), folder=folder)
        history_store.keep_run(fixed, "mm", code="b", folder=folder)
    history_store._stores.clear()
    return fixed.to_dict()


def test_comparison_constants_agree() -> None:
    from jupyter_brrr.report import comparison

    assert _ts_constant("COMPARISON_SCHEMA_NAME") == comparison.COMPARISON_SCHEMA
    assert _ts_constant("COMPARISON_SCHEMA_VERSION") == comparison.COMPARISON_VERSION
    assert _ts_constant("COMPARISON_MIME_TYPE") == comparison.COMPARISON_MIME_TYPE


def test_the_change_views_read_the_keys_a_named_run_writes(named_report: dict) -> None:
    change, history, target = (named_report[k] for k in ("change", "history", "target"))
    assert _top_keys("IComparison") == set(change)
    assert _top_keys("ISpanChange") == set(change["span"])
    assert _top_keys("IComparisonSide") == set(change["before"]) == set(change["after"])
    rows = {
        "IChangeSplitRow": "split",
        "IChangeOpRow": "ops",
        "IChangeCategoryRow": "by_category",
        "IChangeCountRow": "counts",
        "IAmdahlRow": "amdahl",
    }
    for interface, key in rows.items():
        assert _top_keys(interface) == set(change[key]["columns"]), interface
    assert change["amdahl"]["data"], "the case has an Amdahl row to read"
    assert _top_keys("IHistoryRun") == set(history[0]) == set(history[1])
    assert _top_keys("ITarget") == set(target)
    assert _top_keys("ITargetFix") == set(target["fixes"][0])
    goal = re.search(r"export interface ITarget \{.*?  goal: \{(.*?)\n  \};", TS, re.S).group(1)
    assert set(re.findall(r"^    (\w+)\??:", goal, re.M)) <= set(target["goal"])


@pytest.mark.parametrize(
    ("interface", "columns"),
    [
        ("IJobRankRow", "JOB_RANK_COLUMNS"),
        ("IJobCollectiveRow", "JOB_COLLECTIVE_COLUMNS"),
        ("IJobStepRow", "JOB_STEP_COLUMNS"),
        ("IJobCallRow", "JOB_CALL_COLUMNS"),
        ("IJobLaneRow", "JOB_LANE_COLUMNS"),
    ],
)
def test_the_job_rows_have_the_columns_python_writes(interface: str, columns: str) -> None:
    assert _top_keys(interface) == set(getattr(job_schema, columns))


@pytest.mark.parametrize(
    "name",
    [
        "SWEEP_POINT_COLUMNS",
        "SWEEP_DOUBLING_COLUMNS",
        "SWEEP_CAPACITY_COLUMNS",
        "SWEEP_VERDICTS",
        "MEMORY_CATEGORIES",
        "MEMORY_LARGEST_COLUMNS",
    ],
)
def test_sweep_and_memory_constants_agree(name: str) -> None:
    assert _ts_constant(name) == getattr(schema, name)


def test_the_sweep_and_memory_documents_have_the_keys_python_writes() -> None:
    import torch

    import jupyter_brrr

    result = jupyter_brrr.sweep(lambda n: torch.ones(n) * 2, [2, 4], warmup=0, repeat=1)
    assert set(result.to_dict()) == _interface_keys("ISweep")
    assert set(result.to_dict()["fit"] or {}) <= _interface_keys("ISweepFit")
    memory = jupyter_brrr.memory_breakdown(lambda: torch.ones(4096) * 2, warmup=0)
    doc = memory.to_dict()
    assert set(doc) == _interface_keys("IMemory")
    assert set(doc["timeline"]) == _interface_keys("IMemoryTimeline")
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
