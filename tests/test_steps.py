"""Per-run figures from loaded traces with several profiler steps (issue 9, section 5).

The reference for the V100 trace (five ``ProfilerStep#`` marks, 480 ms in all) is computed here
from the raw JSON with the standard library: each kernel's launch (its runtime call, by
correlation id) places it in a step, and a GPU that runs behind the host ends step N's work
where step N+1's begins.
"""

from __future__ import annotations

import gzip
import itertools
import json
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pytest
from checked import load_report

from jupyter_brrr import Report
from jupyter_brrr.schema.report import SPLIT_PARTS, STEP_COLUMNS
from jupyter_brrr.views import html, text
from jupyter_brrr.views.pictures import Pictures

DATA = Path(__file__).parent / "data"
V100 = DATA / "v100_resnet_ns.json.gz"


@pytest.fixture(scope="module")
def v100() -> Report:
    return load_report(V100)


def raw_steps(path: Path) -> list[dict]:
    """Each host ProfilerStep of the file, with the first start and last end (seconds) of the
    kernels launched inside it and their count."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    steps = sorted(
        (e for e in events if e.get("name", "").startswith("ProfilerStep#") and e.get("ph") == "X"),
        key=lambda e: e["ts"],
    )
    launches = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    found = [{"name": s["name"], "host_start": s["ts"], "start": [], "end": []} for s in steps]
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        launch = launches[e["args"]["correlation"]]
        step = max(i for i, s in enumerate(steps) if s["ts"] <= launch)
        found[step]["start"].append(e["ts"])
        found[step]["end"].append(e["ts"] + e["dur"])
    return [
        {
            "name": s["name"],
            "host_start": s["host_start"] * 1e-6,
            "gpu_start": min(s["start"]) * 1e-6,
            "gpu_end": max(s["end"]) * 1e-6,
            "events": len(s["start"]),
        }
        for s in found
    ]


def test_a_multi_step_trace_reports_per_step_spans(v100: Report) -> None:
    reference = raw_steps(V100)
    assert [s["name"] for s in reference] == [f"ProfilerStep#{n}" for n in range(101, 106)]
    # The GPU runs behind the host here: each step's work starts when the previous one's ends.
    expected = [reference[0]["gpu_end"] - reference[0]["host_start"]] + [
        b["gpu_end"] - a["gpu_end"] for a, b in itertools.pairwise(reference)
    ]
    steps = v100.steps
    assert list(steps.columns) == list(STEP_COLUMNS)
    assert steps["step"].tolist() == [s["name"] for s in reference]
    assert steps["span_s"].to_numpy() == pytest.approx(expected, abs=1e-6)
    assert steps["kernels"].tolist() == [s["events"] for s in reference]
    assert steps["kind"].tolist() == ["first", "steady", "steady", "steady", "steady"]
    # 95-101 ms per step, not the 35-96 ms of the host's step ranges nor 480 ms in all.
    assert steps["span_s"].min() > 0.094 and steps["span_s"].max() < 0.102
    # The steps tile the trace's GPU work.
    assert steps["span_s"].sum() == pytest.approx(
        reference[-1]["gpu_end"] - reference[0]["host_start"]
    )


def test_per_run_figures_are_those_of_the_median_steady_step(v100: Report) -> None:
    s = cast(Mapping[str, Any], v100.summary)  # read by name: the split's parts too
    steady = v100.steps[v100.steps["kind"] == "steady"]
    median_row = v100.steps[v100.steps["step"] == s["steps"]["median_step"]].iloc[0]
    assert median_row["kind"] == "steady"
    assert s["span_s"] == pytest.approx(median_row["span_s"])
    assert abs(s["span_s"] - statistics.median(steady["span_s"])) < 0.5e-3
    assert s["span_source"] == "trace_step"
    for part in ("busy", *SPLIT_PARTS):
        assert s[f"{part}_s"] == pytest.approx(median_row[f"{part}_s"], abs=1e-9), part
    assert sum(s[f"{p}_s"] for p in SPLIT_PARTS) == pytest.approx(s["span_s"])
    # The op and kernel tables are that step's: one step of ResNet-50 runs 53 convolutions.
    assert len(v100.kernels) == median_row["kernels"]
    convs = v100.ops[v100.ops["name"] == "aten::cudnn_convolution"]
    assert convs["calls"].sum() == 53
    assert s["kernel_count"] + s["copy_count"] == median_row["kernels"]
    assert s["runs"] == {"warmup": None, "timed": None, "profiled": 5, "total": None}


def test_the_spread_and_the_whole_trace_are_labelled(v100: Report) -> None:
    steps = v100.summary["steps"]
    assert steps is not None
    table = v100.steps
    steady = table[table["kind"] == "steady"]
    assert (steps["count"], steps["steady"]) == (5, 4)
    assert steps["fastest_s"] == pytest.approx(steady["span_s"].min())
    assert steps["slowest_s"] == pytest.approx(steady["span_s"].max())
    assert steps["set_apart"] == [
        {"step": "ProfilerStep#101", "kind": "first", "span_s": pytest.approx(table["span_s"][0])}
    ]
    total = steps["total"]
    assert total["span_s"] == pytest.approx(table["span_s"].sum())
    assert sum(total[f"{p}_s"] for p in SPLIT_PARTS) == pytest.approx(total["span_s"])
    assert 0.47 < total["span_s"] < 0.49
    lines = text.render(v100)
    assert (
        "per step (the median of 4 steady profiler steps in the trace, ProfilerStep#103)" in lines
    )
    assert "fastest 95.4 ms (ProfilerStep#105)" in lines
    assert "set apart: ProfilerStep#101 (first), 101 ms" in lines
    assert "whole trace (5 steps): 484 ms" in lines
    assert "ran 5 times" not in lines and "5 profiler steps in the trace" in lines
    fragment = html.render(v100, pictures=Pictures(None, None, None))
    assert "The 5 profiler steps of the trace" in fragment
    assert "whole trace (5 steps)" in fragment
    assert any("Set apart: ProfilerStep#101 (the first step" in note for note in v100.notes)


def test_a_step_cut_short_is_set_apart_as_partial() -> None:
    report = load_report(DATA / "mi250_rocm_minitoy.json.gz")
    steps = report.steps
    # The profiler stopped right after its last prof.step(): ProfilerStep#2 launched nothing.
    assert steps["kind"].tolist() == ["steady", "partial"]
    assert steps["kernels"].tolist() == [16, 0]
    assert report.summary["steps"] is not None
    assert report.summary["steps"]["median_step"] == "ProfilerStep#1"
    assert report.summary["span_s"] == pytest.approx(steps["span_s"][0])


def test_a_trace_without_steps_says_its_figures_cover_the_whole_trace() -> None:
    report = load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    assert report.summary["steps"] is None and not len(report.steps)
    assert report.summary["runs"]["total"] is None
    assert report.summary["span_s"] == pytest.approx(report.summary["trace_span_s"])
    assert "for the whole trace" in text.render(report)
    assert any("marks no profiler steps" in note for note in report.notes)


def test_steps_survive_json_and_older_reports_read(v100: Report) -> None:
    again = Report.from_json(v100.to_json())
    pd.testing.assert_frame_equal(again.steps, v100.steps, check_dtype=False)
    assert again.summary["steps"] == json.loads(json.dumps(v100.summary["steps"]))
    doc = v100.to_dict()
    del doc["steps"]  # a report written before steps existed
    older = Report.from_json(json.dumps(doc))
    assert list(older.steps.columns) == list(STEP_COLUMNS) and not len(older.steps)
    assert "profiler steps of the trace" not in html.render(
        older, pictures=Pictures(None, None, None)
    )


def test_a_trace_without_shapes_says_why_its_split_is_all_other(v100: Report) -> None:
    # Recorded without record_shapes=True: no op can have a cost, and the report says so
    # rather than calling 99% of the GPU time "kernels without a cost model".
    assert v100.summary["shapes_recorded"] is False
    assert any("record_shapes=True" in note for note in v100.notes)
    # Without costs, no advice rests on an op's roofline: only the host side has evidence.
    assert all(a["bottleneck"] == "overhead" for a in v100.recommendations)
    assert not (v100.ops["reason"] != "").any()
    gpt2 = load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    assert gpt2.summary["shapes_recorded"] is True
    assert not any("record_shapes" in note for note in gpt2.notes)


def test_a_load_finds_the_profiler_steps_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run count, the step windows and a rank's step table share one reading of the steps,
    and the windows found from it are those found afresh."""
    from jupyter_brrr.analysis import steps
    from jupyter_brrr.report import job
    from jupyter_brrr.report import trace_report as trace_analysis
    from jupyter_brrr.trace import events

    found = []
    real = steps.host_steps

    def counted(trace: events.Trace) -> pd.DataFrame:
        found.append(real(trace))
        return found[-1]

    monkeypatch.setattr(steps, "host_steps", counted)
    report = load_report(V100)
    assert report.summary["steps"] is not None
    assert len(found) == 1 and len(found[0]) == report.summary["steps"]["count"] == 5
    found.clear()
    rank = job.read_rank(DATA / "ranks" / "rank0_of2.step4.json.gz")
    assert len(found) == 1 and len(rank.steps) == len(found[0])

    trace = events.read_trace(V100)
    kernels = trace_analysis.whole_trace(trace)[0].kernels
    given = steps.find_steps(trace, kernels, host=real(trace))
    afresh = steps.find_steps(trace, kernels)
    assert given is not None and afresh is not None
    pd.testing.assert_frame_equal(given.table, afresh.table)


def _content(report: Report) -> str:
    """A report's JSON without the time it was made."""
    return json.dumps({**report.to_dict(), "created": None}, sort_keys=True)


@pytest.mark.parametrize(
    ("path", "steps_count"),
    [(V100, 5), (DATA / "gpt2_fwd_bf16_b8_s1024.json.gz", 0), (DATA / "cpu_only.json.gz", 0)],
    ids=lambda p: getattr(p, "name", p),
)
def test_a_load_analyses_once_and_reports_what_two_analyses_did(
    monkeypatch: pytest.MonkeyPatch, path: Path, steps_count: int
) -> None:
    """A trace with profiler steps has its median step analysed; of the whole trace only the
    kernel table is made, which is what the step windows read: the report is the same as when
    the whole trace was analysed in full first."""
    from jupyter_brrr.analysis import analyze as analysis
    from jupyter_brrr.report import job

    real = analysis.analyze
    calls: list[bool] = []

    def counted(*args: object, **kwargs: object) -> analysis.Analysis:
        calls.append(bool(kwargs.get("kernels_only")))
        return real(*args, **kwargs)  # pyright: ignore[reportArgumentType]

    def in_full(*args: object, **kwargs: object) -> analysis.Analysis:
        kwargs.pop("kernels_only", None)
        return real(*args, **kwargs)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(analysis, "analyze", counted)
    report = load_report(path)
    assert isinstance(report, Report)
    assert calls.count(False) == 1  # one full analysis
    assert calls.count(True) == (1 if steps_count else 0)
    assert (report.summary.get("steps") or {}).get("count", 0) == steps_count

    monkeypatch.setattr(analysis, "analyze", in_full)  # as before: the whole in full, then the step
    twice = load_report(path)
    assert isinstance(twice, Report)
    assert _content(report) == _content(twice)

    if steps_count:  # a job's rank reads the whole trace's kernel table too
        rank_path = DATA / "ranks" / "rank0_of2.step4.json.gz"
        monkeypatch.setattr(analysis, "analyze", counted)
        once = job.read_rank(rank_path)
        monkeypatch.setattr(analysis, "analyze", in_full)
        full = job.read_rank(rank_path)
        assert _content(once.report) == _content(full.report)
        assert once.split == full.split
        pd.testing.assert_frame_equal(once.steps, full.steps)


# --- CUDA graph replays -----------------------------------------------------------------------

REPLAYS = DATA / "graph_replay" / "replay_steps.json.gz"  # tests/data/graph_replay/make.py


def test_graph_replays_with_no_op_around_them_load_and_belong_to_their_launch() -> None:
    # torch.cuda.CUDAGraph.replay() in a loop of prof.step(): no torch op anywhere, so the 40
    # kernels of each replay carry only the cudaGraphLaunch call's correlation id. The GPU runs
    # behind the host, so a replay's kernels start in the next step's host range: each step
    # holds its own replay's kernels only through the launch call.
    report = load_report(REPLAYS)
    with gzip.open(REPLAYS) as f:
        events = json.load(f)["traceEvents"]
    launches = [e for e in events if e.get("name") == "cudaGraphLaunch"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(launches) == 4 and len(kernels) == 160
    assert report.steps["kernels"].tolist() == [40, 40, 40, 40]
    first_kernel_of_step_1 = min(
        k["ts"] for k in kernels if k["args"]["correlation"] == launches[1]["args"]["correlation"]
    )
    step_2 = next(
        e for e in events if e.get("name") == "ProfilerStep#2" and e["cat"] == "user_annotation"
    )
    assert first_kernel_of_step_1 > step_2["ts"]  # after the next step began on the host
    assert report.ops["name"].tolist() == ["cudaGraphLaunch"]
    row = report.ops.iloc[0]
    assert row["calls"] == 1  # the median step's replay
    assert set(report.kernels["op"]) == {"cudaGraphLaunch"} and len(report.kernels) == 40
    assert report.summary["steps"] is not None
    step = report.steps.set_index("step").loc[report.summary["steps"]["median_step"]]
    assert row["gpu_time_s"] == pytest.approx(step["busy_s"], rel=1e-6)
    assert "graph" in " ".join(report.notes)  # why these kernels have no FLOPs or bytes


def test_a_real_bare_replay_is_one_op_that_owns_its_kernels() -> None:
    # Recorded on the H200 (torch 2.11): g.replay() of a 400-kernel loop, no op around it; the
    # launch and its kernels carry no External id, as in the hand-built trace above.
    report = load_report(DATA / "advice" / "launch_bound_loop.fixed.json.gz")
    assert report.ops["name"].tolist() == ["cudaGraphLaunch"]
    assert report.ops.iloc[0]["kernels"] == 400 == len(report.kernels)
    assert set(report.kernels["op"]) == {"cudaGraphLaunch"}


def test_a_live_h200_trace_of_replays_in_steps_loads_each_step_with_its_replay() -> None:
    # bench/gpu_check.py --only graph_replay on the H200 (torch 2.11): a captured 20-layer
    # Linear(64, 64) MLP replayed once per prof.step(), five steps, no op around the replays.
    report = load_report(DATA / "graph_replay" / "h200_replay_steps.json.gz")
    assert report.steps["kernels"].tolist() == [20] * 5  # one eager run launches 20
    assert report.ops["name"].tolist() == ["cudaGraphLaunch"]
    assert set(report.kernels["op"]) == {"cudaGraphLaunch"} and len(report.kernels) == 20
    assert report.summary["steps"] is not None
    step = report.steps.set_index("step").loc[report.summary["steps"]["median_step"]]
    assert report.ops.iloc[0]["gpu_time_s"] == pytest.approx(step["busy_s"], rel=1e-6)


def test_gpu_events_that_no_op_or_call_launched_load_in_steps() -> None:
    # The same trace without its runtime calls: nothing links the kernels to the host, and the
    # trace has no op at all. Each kernel goes to the step its own start falls in (it ran
    # behind the host: the first step gets none).
    with gzip.open(REPLAYS) as f:
        trace = json.load(f)
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("cat") != "cuda_runtime"]
    report = load_report(_written(trace))
    assert report.ops.empty
    assert report.steps["kernels"].tolist()[1:] == [40, 40, 40]
    assert set(report.kernels["op"]) == {""}
    assert "(no op: a CUDA graph replay" in " ".join(report.notes)


def test_a_graph_launched_inside_an_op_keeps_that_op() -> None:
    # torch.compile(mode="reduce-overhead") on the H200: the cudaGraphLaunch runs inside
    # "Torch-Compiled Region"; its kernels are that op's, and no op of the launch is added.
    report = load_report(DATA / "zoo" / "tiny_mlp_reduce_overhead.json.gz")
    assert "cudaGraphLaunch" not in set(report.ops["name"])
    graph_kernels = report.kernels[report.kernels["name"].str.startswith("triton_poi_fused")]
    assert set(graph_kernels["op"]) == {"Torch-Compiled Region: 4/0"}


def _written(trace: dict) -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="brrr_replay_"))
    path = folder / "trace.json"
    path.write_text(json.dumps(trace))
    return path
