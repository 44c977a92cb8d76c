"""The what-if the browser draws (analysis/whatif.py): each target's span replayed on the step's
graph at a few factors, carried by the report's JSON, the same numbers as ``report.what_if()``;
and Amdahl's law, labelled as such, for a report without a graph."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import jupyter_brrr
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.analysis import whatif
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.report import SchemaError, check_report

DATA = Path(__file__).parent / "data"


def _load(name: str) -> Report:
    report = jupyter_brrr.load(DATA / name)
    assert isinstance(report, Report)
    return report


@pytest.fixture(scope="module")
def mlp() -> Report:
    # 20 Linear(64) layers at batch 8 on the H200 (5 runs): the GPU idles 93% of the span.
    return _load("tiny_mlp_eager.json.gz")


def _targets(report: Report) -> dict[str, dict]:
    doc = report.to_dict()["what_if"]
    assert doc is not None
    return {t["id"]: t for t in doc["targets"]}


def test_the_report_carries_the_replayed_what_if_of_a_launch_bound_step(mlp: Report) -> None:
    doc = mlp.to_dict()
    check_report(doc)
    what_if = doc["what_if"]
    assert what_if["predicted_by"].startswith("predicted by replaying the step's dependencies")
    targets = {t["id"]: t for t in what_if["targets"]}
    # The parts of the split, the whole step's knobs and the top ops.
    assert {"part:compute", "part:idle", "knob:gpu", "knob:launch", "op:0"} <= set(targets)
    addmm = next(t for t in targets.values() if t["kind"] == "op" and t["name"] == "aten::addmm")
    # Amdahl on the span promises 1.04x for 2x faster addmm kernels; the GPU waits for the
    # host, so the replay gives nothing at any factor.
    assert max(abs(r - 1.0) for r in addmm["ratios"]) < 0.005
    assert addmm["limit"] < 1.005
    # The host's work sets the span: twice as fast, nearly twice the speed.
    idle = targets["part:idle"]
    assert whatif.interpolate(idle["factors"], idle["ratios"], 2.0) < 1 / 1.9
    assert idle["factors"][0] == 1 and idle["ratios"][0] == 1.0
    assert idle["factors"][-1] == whatif.MAX_FACTOR
    # Small: a few kB against the report's 47 kB.
    assert len(json.dumps(what_if)) < 8_000


def test_the_tab_and_report_what_if_give_the_same_numbers_at_the_curves_factors(
    mlp: Report,
) -> None:
    targets = _targets(mlp)
    span = mlp.summary["span_s"]
    factors = sorted({k for t in targets.values() for k in t["factors"] if k > 1})
    table = mlp.what_if(factors=tuple(factors)).set_index("id")
    assert set(table.index) == set(targets)
    for tid, target in targets.items():
        row = table.loc[tid]
        assert row["limit"] == pytest.approx(target["limit"], rel=1e-12)
        for k, ratio in zip(target["factors"], target["ratios"], strict=True):
            if k > 1 and target["scalable"]:
                assert row[f"span_at_{k:g}x_s"] == pytest.approx(span * ratio, rel=1e-12), tid
                assert row[f"speedup_at_{k:g}x"] == pytest.approx(1 / ratio, rel=1e-12), tid


@pytest.mark.parametrize(
    "trace", ["gpt2_fwd_bf16_b8_s1024.json.gz", "advice_cases/launch_bound_loop.json.gz"]
)
def test_between_its_factors_the_curve_is_close_to_the_replay(trace: str) -> None:
    report = _load(trace)
    assert report.graph is not None
    targets = {t.id: t for t in whatif.targets(report.graph, report.summary, report.ops)}
    worst = 0.0
    for tid, curve in _targets(report).items():
        if not curve["scalable"] or targets[tid].empty:
            continue
        for k in 10 ** np.linspace(0.1, 1.9, 7):
            exact = 1 / targets[tid].speedup(report.graph, k)
            shown = whatif.interpolate(curve["factors"], curve["ratios"], k)
            worst = max(worst, abs(shown - exact) / exact)
    # The slider's spans between the factors replayed: linear in 1/N, within 1% of the replay,
    # where the curve bends too (a launch-bound loop's launch path, once the GPU sets the span).
    assert worst < 0.01, worst


def test_the_syncs_are_removed_or_not_and_the_profiler_is_offered_where_the_span_has_it() -> None:
    report = _load("advice_cases/item_sync.json.gz")
    targets = _targets(report)
    syncs = targets["knob:syncs"]
    assert syncs["scalable"] is False and syncs["factors"] == [1.0]
    assert syncs["limit"] == pytest.approx(report.predict(profiler=0, syncs=0).speedup)
    # A loaded trace's span is the profiled run's: taking the profiler's cost out is a change.
    assert report.summary["span_source"].startswith("trace")
    profiler = targets["knob:profiler"]
    unprofiled = report.predict(profiler=0).span_s
    assert profiler["limit"] == pytest.approx(report.predict().span_s / unprofiled, rel=1e-9)
    assert profiler["limit"] > 1.01


def test_a_saved_report_keeps_its_what_if_and_an_older_one_has_none(mlp: Report) -> None:
    doc = json.loads(mlp.to_json())
    again = Report.from_json(doc)
    again.graph = None  # the curves are read back, not replayed again
    assert again.to_dict()["what_if"] == doc["what_if"]
    older = json.loads((DATA / "reports" / "small.json").read_text())
    assert older["version"] == 1
    report = Report.from_json(older)
    assert report.to_dict()["what_if"] is None
    assert "Amdahl" in report.what_if().attrs["predicted_by"]


def test_the_schema_refuses_a_what_if_that_does_not_fit(mlp: Report) -> None:
    doc = mlp.to_dict()
    doc["what_if"]["targets"][0]["ratios"] = "fast"
    with pytest.raises(SchemaError, match="what_if"):
        check_report(doc)


def test_a_cpu_ops_share_is_the_overviews_share_of_cpu_op_time() -> None:
    # The case: the timed span (unprofiled) shorter than the profiled run's op times.
    doc = json.loads((DATA / "reports" / "cpu_only.json").read_text())
    span = 0.004
    doc["summary"].update(span_s=span, idle_s=span)
    report = Report.from_json(doc)
    ops = report.ops
    total = float(ops["self_cpu_time_s"].fillna(ops["cpu_time_s"]).fillna(0).sum())
    assert total > span
    top = ops.nlargest(1, "self_cpu_time_s").iloc[0]
    table = analysis.what_if(report.summary, ops)
    row = table[table["kind"] == "op"].iloc[0]
    assert row["part"].startswith(top["name"])
    # The Overview's figure (of the profiled run's CPU op time), not its time over the span.
    assert row["share"] == pytest.approx(top["self_cpu_time_s"] / total)
    assert row["share"] < top["self_cpu_time_s"] / span
    assert row["speedup_at_2x"] == pytest.approx(1 / (1 - row["share"] / 2))
    assert math.isfinite(row["limit"])


def test_the_typescript_tests_fixture_reads_and_its_table_is_its_reports() -> None:
    # js/src/__tests__/whatif.spec.ts holds the tab to Python on this pair, written together
    # by tests/data/whatif/make_fixture.py (run it again after a change to the replay).
    folder = DATA / "whatif"
    report = Report.from_json((folder / "tiny_mlp.report.json").read_text())
    rows = json.loads((folder / "tiny_mlp.what_if.json").read_text())
    curves = report.to_dict()["what_if"]
    assert curves is not None
    assert {t["id"] for t in curves["targets"]} == {row["id"] for row in rows}
    for row in rows:
        target = next(t for t in curves["targets"] if t["id"] == row["id"])
        assert target["limit"] == pytest.approx(row["limit"], rel=1e-12)
