"""What follows from the step's dependencies (analysis/causal.py): the what-if and the advice's
savings replayed on the step's graph, against hand-worked timelines and recorded H200 traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from checked import load_report
from test_replay import Timeline, _gpu_bound, _launch_bound

import jupyter_brrr
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.analysis import step_graph
from jupyter_brrr.analysis.replay import GRAPH_GAP_S
from jupyter_brrr.report.report import Report

DATA = Path(__file__).parent / "data"
US = 1e-6


def test_a_faster_gemm_on_a_launch_bound_mlp_gains_nothing_in_the_what_if() -> None:
    # 20 Linear(64) layers at batch 8 on the H200 (5 runs): the GPU idles 93% of the span.
    report = load_report(DATA / "tiny_mlp_eager.json.gz")
    assert report.summary["idle_s"] / report.summary["span_s"] > 0.9
    table = report.what_if()
    addmm = table[table["part"].str.startswith("aten::addmm")].iloc[0]
    # Amdahl on the span says 1.04x: the addmm kernels are 7.5% of it.
    amdahl = analysis.what_if(report.summary, report.ops)
    assert amdahl.loc[amdahl["part"] == addmm["part"], "speedup_at_2x"].iloc[0] > 1.035
    # Replayed: the GPU already waits for the host; faster kernels only lengthen the wait.
    assert addmm["speedup_at_2x"] == pytest.approx(1.0, abs=0.005)
    assert addmm["limit"] < 1.005
    # The host's work is what sets the span: twice as fast, nearly twice the speed.
    idle = table[table["part"] == "idle"].iloc[0]
    assert idle["speedup_at_2x"] > 1.9
    assert idle["change"] == "host work Nx faster"
    assert "replaying the step's dependencies" in table.attrs["predicted_by"]
    assert table.attrs["not_modelled"]


def test_the_what_if_of_a_gpu_bound_chain_is_amdahl_where_nothing_overlaps() -> None:
    report = _gpu_bound()
    table = report.what_if()
    gemm = table[table["part"].str.startswith("aten::mm")].iloc[0]
    # Kernels of 100 us, queued 1 us apart (the first 1 us after the step's start), 50 us at
    # 2x: 8 * 51 - 1 against 8 * 101 - 1, each gap less the profiler's record of its kernel.
    record = step_graph.PROFILER_PER_KERNEL_S / US
    before, after = 807 - 8 * record, 407 - 8 * record
    assert gemm["speedup_at_2x"] == pytest.approx(before / after)
    assert gemm["span_at_2x_s"] == pytest.approx(report.summary["span_s"] * after / before)
    # The host's work does not set this span.
    assert table.loc[table["part"] == "idle", "speedup_at_2x"].iloc[0] == pytest.approx(1.0)


def test_a_report_without_a_graph_gets_amdahl_and_says_so() -> None:
    report = _launch_bound()
    report.graph = None
    table = report.what_if()
    assert "Amdahl" in table.attrs["predicted_by"]


def _sync_loop_with_long_launches(n: int = 6) -> Report:
    """Each iteration (period 240 us): ten ops [T + 20 k, T + 20 k + 18], each launching a 1 us
    kernel (call [+4, +16], kernel at +17); then aten::item [T+200, T+236]: a copy to the host
    (call [+202, +206], copy [+207, +208]) and a synchronisation (call [+207, +210]). The GPU
    idles ~19 us before each kernel while the host launches: launch-bound, and synchronising
    every iteration."""
    t = Timeline()
    for i in range(n):
        start = 240.0 * i
        for k in range(10):
            t.op("aten::add", start + 20 * k, 18)
            c = t.call("cudaLaunchKernel", start + 20 * k + 4, 12)
            t.kernel("add_kernel", start + 20 * k + 17, 1, c)
        t.op("aten::item", start + 200, 36)
        c = t.call("cudaMemcpyAsync", start + 202, 4)
        t.copy("Memcpy DtoH (Device -> Pageable)", start + 207, 1, c, 4)
        t.call("cudaStreamSynchronize", start + 207, 3)
    return t.report()


def test_a_sync_loop_is_not_told_to_use_a_cuda_graph_before_the_syncs_go() -> None:
    report = _sync_loop_with_long_launches()
    causes = [r["cause"] for r in report.recommendations]
    assert "launch overhead" in causes
    launch = report.recommendations[causes.index("launch overhead")]
    # A CUDA graph cannot capture a synchronisation: the fix says they go first, and the saving
    # is the graph's once they have.
    assert launch["requires"] == "synchronisation"
    assert launch["fix"].startswith("First remove the step's synchronisations")
    assert "once the synchronisations are gone" in launch["detail"]
    if "synchronisation" in causes:
        assert causes.index("synchronisation") < causes.index("launch overhead")
    expected = (
        report.predict(profiler=0, syncs=0).span_s
        - report.predict(profiler=0, syncs=0, launch=0).span_s
    )
    assert launch["saving_s"] == pytest.approx(expected)
    assert launch["predicted_by"] == "predicted by replaying the step's dependencies"


def test_a_launch_bound_loop_without_syncs_is_told_to_use_a_cuda_graph_with_its_replayed_saving() -> (
    None
):
    report = _launch_bound()
    first = report.recommendations[0]
    assert first["cause"] == "launch overhead"
    assert first["requires"] is None
    base = report.predict(profiler=0)
    graph = report.predict(profiler=0, launch=0)
    # The replay's saving, or in a loop of calls the period less the graph's GPU floor: one
    # call's kernels and a graph gap each, one gap more than the replay of one call has.
    gap = GRAPH_GAP_S / base.span_s
    assert first["share"] == pytest.approx(1 - graph.span_s / base.span_s, abs=gap + 1e-9)
    assert first["speedup"] == pytest.approx(base.span_s / graph.span_s, rel=0.02)
    assert "Predicted by replaying the step's dependencies" in first["detail"]


def test_the_recorded_item_loop_removes_its_syncs_before_a_cuda_graph() -> None:
    report = load_report(DATA / "advice" / "item_sync.slow.json.gz")
    causes = [r["cause"] for r in report.recommendations]
    assert causes[0] == "synchronisation"
    # Its replayed saving against the fixed loop's own capture, replayed without the profiler
    # (1.11x against 1.09x), and against its CUDA events: 1.20x (bench/RESULTS.md), timed after
    # earlier captures in the same process, whose CUPTI callbacks slowed the slow side's
    # launches more than the fixed side's: within 10%.
    speedup = report.recommendations[0]["speedup"]
    fixed = load_report(DATA / "advice" / "item_sync.fixed.json.gz")
    replayed = report.predict(profiler=0).span_s / fixed.predict(profiler=0).span_s
    assert speedup == pytest.approx(replayed, rel=0.03)
    assert speedup == pytest.approx(1.2, rel=0.1)
    launch = report.recommendations[causes.index("launch overhead")]
    assert launch["requires"] == "synchronisation"


def test_a_stall_before_the_first_launch_is_saved_by_taking_cpu_work_off_the_path() -> None:
    # 13 ms of torch.randn and 4 ms of Python before a 1.5 ms GPU step (H200).
    report = load_report(DATA / "advice" / "dataloader_stall.slow.json.gz")
    first = report.recommendations[0]
    assert first["cause"] == "host stall"
    assert first["saving_s"] > 0.015
    assert first["changes"].startswith("no host work that launches nothing on the way")


def test_a_gpu_fix_on_a_gpu_bound_step_keeps_its_additive_saving() -> None:
    # fp32 GEMMs on the plain FP32 units: the GPU sets the span, so the replay agrees with the
    # sum (nothing overlaps them).
    report = load_report(DATA / "advice" / "fp32_matmul_tf32_off.slow.json.gz")
    first = report.recommendations[0]
    assert first["cause"] == "fp32 without tensor cores"
    assert first["saving_s"] == pytest.approx(first["saving_bound_s"], rel=0.02)


# --- the diff's check: the after span predicted from the before graph --------------------------


def _advice_pair(case: str) -> tuple[Path, Path, float]:
    import json

    slow = DATA / "advice" / f"{case}.slow.json.gz"
    fixed = DATA / "advice" / f"{case}.fixed.json.gz"
    times = [
        json.loads(p.with_name(p.name.replace(".json.gz", ".meta.json")).read_text())[
            "event_median_s"
        ]
        for p in (slow, fixed)
    ]
    return slow, fixed, times[0] / times[1]


@pytest.mark.parametrize(
    ("case", "tolerance"),
    [
        # .item() removed from the loop and the loop as a CUDA graph are checked on recordings
        # timed with CUPTI torn down after each capture (tests/test_replay_h200.py,
        # item_removed and loop_graph): advice/item_sync's and launch_bound_loop's CUDA-event
        # times followed earlier captures, their eager launches paying their callbacks.
        ("host_copy_in_step", 0.10),  # the copy out of the step (pageable, blocking)
        ("fp32_matmul_tf32_off", 0.10),  # TF32 on: each op at its own speed-up
        ("odd_vocab_lm_head", 0.05),  # the padded vocabulary
    ],
)
def test_the_diff_predicts_the_after_span_from_the_before_steps_graph(
    case: str, tolerance: float
) -> None:
    slow, fixed, measured_events = _advice_pair(case)
    comparison = jupyter_brrr.diff(slow, fixed)
    first = comparison.amdahl.iloc[0]
    assert first["kind"] == "replay" and first["predicted_by"] == "replay"
    # Against the change timed with CUDA events outside the profiler, on the H200.
    assert first["predicted_speedup"] == pytest.approx(measured_events, rel=tolerance)
    assert first["measured_speedup"] == pytest.approx(comparison.span.speedup)
    assert first["not_modelled"]
    from jupyter_brrr.views.change import amdahl_lines

    line = amdahl_lines(comparison.to_dict(), top=1)[0]
    assert line.startswith("Every op at its after time, replayed on the before step's")


def test_a_faster_kernel_on_a_launch_bound_step_is_not_predicted_as_the_span() -> None:
    # The hand-worked launch-bound loop, its kernels made 4x faster: the profiled diff's
    # Amdahl would give the kernels' share; the replay sees that the host sets the span.
    before = _launch_bound()
    faster = Timeline()
    for i in range(10):
        start = 20.0 * i
        faster.op("aten::mul", start, 12)
        c = faster.call("cudaLaunchKernel", start + 5, 5)
        faster.kernel("mul_kernel", start + 11, 0.5, c)
    comparison = jupyter_brrr.diff(before, faster.report())
    first = comparison.amdahl.iloc[0]
    # Without the profiler (half the 7 us in ops and of the 5 us call, the records' ends in
    # the 8 us between ops: test_replay) a period is 10 us; only the last kernel's end moves,
    # 1.5 us earlier.
    share = step_graph.PROFILER_HOST_SHARE
    period = 20 - share * (7 + 5) - min(share * 8, step_graph.RECORD_GAP_S / US)
    expected = (9 * period + 2) / (9 * period + 0.5)
    assert first["predicted_speedup"] == pytest.approx(expected, rel=1e-6)
    # Measured (the profiled spans): 182 / 180.5, as small.
    assert first["measured_speedup"] == pytest.approx(182 / 180.5, rel=1e-6)
    mul = comparison.amdahl.set_index("part").loc["aten::mul"]
    assert mul["predicted_by"] == "replay"
    assert mul["predicted_speedup"] == pytest.approx(expected, rel=1e-6)
    # Amdahl on the span would have said the kernels' 11% share got 4x faster: 1.09x.
    assert mul["share_before"] * (1 - 1 / 4) > 0.08


# --- the target plan ---------------------------------------------------------------------------


def test_the_target_plan_replays_the_fix_of_a_launch_bound_mlp() -> None:
    report = load_report(DATA / "tiny_mlp_eager.json.gz")
    report.set_target("0.5ms")
    target = report.target
    assert target is not None
    fixes = {fix["part"]: fix for fix in target["fixes"]}
    addmm = fixes["aten::addmm"]
    # Amdahl: 7.5% of the span, at most 1.08x; replayed, the GPU already waits for the host.
    assert addmm["amdahl_remains_s"] < 0.93 * target["span_s"]
    assert addmm["limit"] < 1.005
    assert not addmm["closes"]
    assert addmm["predicted_by"] == "predicted by replaying the step's dependencies"
    assert any(
        "aten::addmm" in line and "replaying the step's dependencies" in line
        for line in target["lines"]
    )


def test_the_target_plan_finds_the_factor_a_gpu_bound_fix_needs() -> None:
    # One fp32 GEMM sets the span (H200): 2.15x faster reaches a goal 2.15x below it.
    report = load_report(DATA / "advice" / "fp32_matmul_tf32_off.slow.json.gz")
    span = report.summary["span_s"]
    report.set_target(f"{span / 2.15 * 1e3:.6f}ms")
    assert report.target is not None
    mm = next(f for f in report.target["fixes"] if f["part"] == "aten::mm")
    assert mm["closes"]
    assert mm["needed_factor"] == pytest.approx(2.15, rel=0.01)


# --- who sets the span: the sweep's verdict per doubling ---------------------------------------


def test_the_gpu_share_of_the_critical_path_says_who_sets_the_span() -> None:
    from jupyter_brrr.analysis.causal import gpu_path_share

    host = load_report(DATA / "tiny_mlp_eager.json.gz")
    gpu = load_report(DATA / "advice" / "fp32_matmul_tf32_off.slow.json.gz")

    def share(report: Report) -> float:
        found = gpu_path_share(report.graph)
        assert found is not None  # each has a step graph with GPU work
        return found

    assert share(host) < 0.2
    assert share(gpu) > 0.9
    assert share(_gpu_bound()) > 0.9
    assert share(_launch_bound()) < 0.2


def test_a_doubling_where_the_gpu_overtakes_the_host_is_the_transition_not_fixed_work() -> None:
    from jupyter_brrr.actions import sweep as sweeps

    # Batch 32 leaves the GPU idle 44% (the host sets the span); batch 64 fills it: the time
    # barely grew, the GPU busy 95% of the larger span. The split alone said "fixed".
    small = {"span_s": 1.0, "busy_s": 0.56, "gpu_path_share": 0.3}
    large = {"span_s": 1.1, "busy_s": 1.05, "compute_s": 0.2, "memory_s": 0.85}
    assert sweeps.verdict(1.1, large, gpu=True, before=small)[0] == "fixed"  # no replay: as before
    kind, why = sweeps.verdict(1.1, {**large, "gpu_path_share": 0.9}, gpu=True, before=small)
    assert kind == "transition"
    assert "the GPU's work overtakes the host's here" in why
    # The host sets the span at both sizes: overhead, whatever the split.
    kind, _ = sweeps.verdict(1.1, {**large, "gpu_path_share": 0.4}, gpu=True, before=small)
    assert kind == "overhead"
    # The GPU already set it at the smaller size: fixed work.
    kind, _ = sweeps.verdict(
        1.1, {**large, "gpu_path_share": 0.9}, gpu=True, before={**small, "gpu_path_share": 0.8}
    )
    assert kind == "fixed"


def test_twice_the_launches_lengthen_a_launch_bound_loop_twice() -> None:
    # Every 20 us of host time is the launch path (the op that launches, its call, the Python
    # between): twice as long, each kernel still 2 us: 9 * 40 + 2 us.
    report = _launch_bound()
    assert report.predict(launch=2).span_s == pytest.approx((9 * 40 + 2) * US, rel=1e-6)


def _recorded_case(name: str) -> Report:
    """An advice case's H200 recording, analysed as the capture did (its CUDA-event span)."""
    import json

    from jupyter_brrr.costs import peaks as peak_table
    from jupyter_brrr.trace import events

    path = DATA / "advice_cases" / f"{name}.json.gz"
    meta = json.loads((DATA / "advice_cases" / f"{name}.meta.json").read_text())
    trace = events.read_trace(path)
    peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
    result = analysis.analyze(
        trace,
        peaks,
        span_s=meta["event_median_s"],
        span_source="cuda_events_unprofiled",
        math_mode=meta["math_mode"],
    )
    result.graph = step_graph.build(trace, result.kernels)
    return Report.from_analysis(result)


def _ruled_out_everywhere(report: Report, cause: str) -> dict:
    """The recommendation of ``cause`` that ``report`` rules out, checked in every view: not
    numbered among the recommendations (nor in the saved report's list, nor in the Try
    numbering), and said once under the list in the text and static HTML views."""
    from jupyter_brrr.views.text import summary_lines

    assert cause not in [r["cause"] for r in report.recommendations]
    (ruled,) = [r for r in report.ruled_out if r["cause"] == cause]
    doc = report.to_dict()
    assert cause not in [r["cause"] for r in doc["recommendations"]]
    assert [r["cause"] for r in doc["ruled_out"]] == [cause]
    again = Report.from_json(report.to_json())  # as a saved notebook holds it
    assert [r["cause"] for r in again.recommendations] == [
        r["cause"] for r in report.recommendations
    ]
    assert [r["ruled_out"] for r in again.ruled_out] == [ruled["ruled_out"]]
    text = "\n".join(summary_lines(report))
    listed = [line for line in text.splitlines() if line.startswith("* ")]
    assert not any(ruled["title"] in line for line in listed)
    assert f"Ruled out, as it cannot pay here: {cause} ({ruled['title']})" in text
    html = report._repr_html_()
    assert html.count(ruled["title"]) == 1
    assert html.index("What to try first") < html.index("Ruled out, as it cannot pay here")
    return ruled


def test_a_cuda_graph_on_a_step_whose_gpu_work_fills_a_loop_of_calls_is_ruled_out() -> None:
    # The autocast NCHW convolution: one call on its own waits ~0.2 ms for launches, but its
    # host launches in 1.1 ms what the GPU runs in 1.15: back to back, the GPU never waits (the
    # H200's A/B measured 0.017 ms saved by a graph). The wait at the end of the call (the
    # timer's) is no synchronisation a graph must lose first. "Saves up to 0%" is no
    # recommendation: it is ruled out, with why.
    report = _recorded_case("conv_channels_first_autocast")
    assert [r["cause"] for r in report.recommendations] == ["layout"]
    launch = _ruled_out_everywhere(report, "launch overhead")
    assert launch["requires"] is None
    assert not launch["fix"].startswith("First remove")
    assert launch["saving_s"] < 0.02 * report.summary["span_s"]
    assert "cannot pay there" in launch["detail"]
    assert launch["ruled_out"].startswith("in a loop of calls the host launches the next call")


def test_a_saved_report_with_a_fix_that_cannot_pay_in_its_list_shows_it_ruled_out() -> None:
    # Saved by the H200 before the split (bench/data/h200/fixes_2): the graph that cannot pay
    # was recommendation 2 ("saves up to 0%"); the STFT's strided read of a mul replayed as 0 us
    # (43 us added up) was recommendation 4.
    kept = Path(__file__).resolve().parents[1] / "bench" / "data" / "h200"
    conv = Report.from_json((kept / "fixes_2" / "conv_channels_first_autocast.json").read_text())
    assert [r["cause"] for r in conv.recommendations] == ["layout"]
    launch = _ruled_out_everywhere(conv, "launch overhead")
    assert launch["ruled_out"].startswith("in a loop of calls this is at most the time per call")
    stft = Report.from_json((kept / "fixes" / "stft_magnitude.json").read_text())
    assert [r["cause"] for r in stft.recommendations] == ["host stall", "launch overhead", "fusion"]
    strided = _ruled_out_everywhere(stft, "strided")
    assert strided["ruled_out"].startswith(
        "replaying the step's dependencies, it saves 0 µs (adding up times gave 43.3 µs)"
    )


def test_a_launch_bound_recording_keeps_its_graph_saving_in_a_loop() -> None:
    report = _recorded_case("launch_bound_loop")
    first = report.recommendations[0]
    assert first["cause"] == "launch overhead" and first["requires"] is None
    assert first["share"] > 0.85
