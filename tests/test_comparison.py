"""``jupyter_brrr.diff``: matching, the noise verdict, comparability warnings, the Amdahl check and
the displays, on real H200 traces and timings (tests/data/advice: each case recorded slow and
fixed, with 15 CUDA-event times per step; bench/data/h200/zoo: 36 models' step times) and on real
CPU profiles. The article's arithmetic is checked on a hand-made report."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
import pytest
import torch
from browser.pages import offline_page, page_data
from checked import load_report

import jupyter_brrr
from jupyter_brrr.report import comparison as comparison_module
from jupyter_brrr.report.comparison import (
    COMPARISON_MIME_TYPE,
    COMPARISON_SCHEMA,
    Comparison,
    median_interval,
    part_verdicts,
    span_change,
)
from jupyter_brrr.report.report import Report, SchemaError
from jupyter_brrr.schema.report import Summary
from jupyter_brrr.views import frame

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
ADVICE = DATA / "advice"
ZOO = ROOT / "bench" / "data" / "h200" / "zoo"


def advice(case: str, version: str) -> Report:
    """An advice case's H200 trace, with the CUDA-event times of its steps recorded beside it
    as the report's timed runs (as %%brrr --repeat 15 would have them)."""
    report = load_report(ADVICE / f"{case}.{version}.json.gz")
    meta = json.loads((ADVICE / f"{case}.{version}.meta.json").read_text())
    report.summary["run_spans_s"] = meta["event_times_s"]
    report.summary["math_mode"] = meta["math_mode"]
    report.summary["torch_version"] = meta["torch"]
    return report


def step_times() -> dict[str, list[float]]:
    """Every recorded H200 workload's 15 step times (CUDA events), in recording order."""
    times = {}
    # The advice cases' recordings, and those of the cases' earlier definitions (superseded/):
    # each one the same code timed 15 times.
    for path in sorted([*ZOO.glob("*.meta.json"), *ADVICE.rglob("*.meta.json")]):
        times[str(path)] = json.loads(path.read_text())["event_times_s"]  # names repeat
    return times


def article_report(attention_s: float, mlp_s: float = 0.030, idle_s: float = 0.010) -> Report:
    """The follow-up article's example: attention and an MLP on a GPU, plus some idle time."""
    span = attention_s + mlp_s + idle_s
    ops = pd.DataFrame(
        {
            "name": ["attention", "mlp"],
            "shapes": ["[[8, 1024, 768]]", "[[8, 1024, 768]]"],
            "dtypes": ["[bf16]", "[bf16]"],
            "category": ["attention", "matmul"],
            "calls": [1, 1],
            "gpu_time_s": [attention_s, mlp_s],
            "dtype": ["bf16", "bf16"],
        }
    )
    summary = {
        "span_s": span,
        "busy_s": attention_s + mlp_s,
        "compute_s": attention_s + mlp_s,
        "memory_s": 0.0,
        "other_s": 0.0,
        "idle_s": idle_s,
        "gpu": True,
        "device": "NVIDIA H200",
        "runs": {"warmup": 1, "timed": 5, "profiled": 1, "total": 7},
        # Runs that agree within 1%, as a GPU-bound step's do.
        "run_spans_s": [span * f for f in (0.995, 0.998, 1.0, 1.003, 1.006)],
        "warm": True,
        "span_source": "cuda_events_unprofiled",
        "kernel_count": 2,
        "launch_count": 2,
    }
    # The keys the comparison reads, as a report written by an older version has only some.
    partial = cast(Summary, summary)
    return Report(summary=partial, ops=ops, kernels=pd.DataFrame(), name="block")


# --- the article's example ------------------------------------------------------------------------


def test_article_example_speedup_shift_and_amdahl() -> None:
    before, after = article_report(0.060), article_report(0.020)
    comparison = jupyter_brrr.diff(before, after)
    assert comparison.span.speedup == pytest.approx(100 / 60)  # 1.67x
    assert comparison.verdict == "faster"
    assert comparison.shift[0] == (
        "mlp is now the largest share: 30% -> 50% (the largest before, attention: 60% -> 33%)."
    )
    row = comparison.amdahl.set_index("part").loc["attention"]
    assert row["share_before"] == pytest.approx(0.6)
    assert row["part_speedup"] == pytest.approx(3.0)
    # Amdahl: 1 / ((1 - 0.6) + 0.6 / 3) = 1.67x, and nothing else moved: measured the same.
    assert row["predicted_speedup"] == pytest.approx(1 / (0.4 + 0.2))
    assert row["measured_speedup"] == pytest.approx(row["predicted_speedup"])
    assert row["limit"] == pytest.approx(2.5)
    text = repr(comparison)
    assert "1.67x faster" in text and "mlp is now the largest share: 30% -> 50%" in text


def test_amdahl_check_shows_when_other_parts_moved_too() -> None:
    before = article_report(0.060)
    after = article_report(0.020, mlp_s=0.045)  # the MLP got slower meanwhile
    row = jupyter_brrr.diff(before, after).amdahl.set_index("part").loc["attention"]
    assert row["predicted_speedup"] == pytest.approx(1 / 0.6)
    assert row["measured_speedup"] == pytest.approx(100 / 75)


# --- matching ---------------------------------------------------------------------------------------


def test_ops_are_matched_by_name_shapes_and_dtypes() -> None:
    comparison = jupyter_brrr.diff(
        advice("fp32_matmul_tf32_off", "slow"), advice("fp32_matmul_tf32_off", "fixed")
    )
    (mm,) = comparison.ops[comparison.ops["name"] == "aten::mm"].itertuples()
    assert mm.status == "both" and mm.shapes == "[[8192, 8192], [8192, 8192]]"
    assert mm.time_before_s == pytest.approx(0.0215, rel=0.02)
    assert mm.time_after_s == pytest.approx(0.00292, rel=0.02)
    assert mm.delta_s == pytest.approx(mm.time_after_s - mm.time_before_s)
    # Self GPU times sum to the kernel time of each side.
    for side in ("before", "after"):
        report = comparison.before_report if side == "before" else comparison.after_report
        assert report is not None
        assert comparison.ops[f"time_{side}_s"].sum() == pytest.approx(
            report.kernels["dur_s"].sum()
        )


def test_fusion_shows_vanished_ops_and_the_fused_kernel() -> None:
    comparison = jupyter_brrr.diff(
        advice("elementwise_chain", "slow"), advice("elementwise_chain", "fixed")
    )
    assert set(comparison.vanished["name"]) == {
        "aten::cos",
        "aten::exp",
        "aten::mul",
        "aten::sin",
        "aten::add",
    }
    assert list(comparison.appeared["name"]) == ["triton_poi_fused_add_cos_exp_mul_sin_0"]
    counts = comparison.counts
    assert (counts.loc["kernels", "before"], counts.loc["kernels", "after"]) == (5, 1)
    # The gain is memory-bound time: fewer passes over memory.
    split = comparison.split
    assert split["delta_s"].drop("span").idxmin() == "memory"
    # The whole change replayed on the before step's graph first, then the parts that gained.
    assert comparison.amdahl.iloc[0]["kind"] == "replay"
    assert comparison.amdahl.iloc[1]["part"] == "memory"


def test_compiled_trace_pairs_ops_called_with_an_out_argument() -> None:
    """Inductor calls aten::addmm with its out= tensor: the same op with one more argument."""
    comparison = jupyter_brrr.diff(
        DATA / "gpt2_fwd_bf16_b8_s1024.json.gz", DATA / "gpt2_fwd_bf16_compiled.json.gz"
    )
    addmm = comparison.ops[comparison.ops["name"] == "aten::addmm"]
    assert len(addmm) == 4 and (addmm["status"] == "both").all()
    # The eager shapes are kept: the compiled call's extra out= tensor is not in them.
    assert "[[2304], [8192, 768], [768, 2304], [], []]" in set(addmm["shapes"])
    # The LM head's vocabulary was padded (50257 -> 50264): different work, said so.
    assert any("aten::mm: [[8192, 768], [768, 50257]]" in w for w in comparison.warnings)
    assert "aten::addmm" not in " ".join(w for w in comparison.warnings if "shapes" in w)


def test_a_cuda_graph_replay_owns_the_time_after() -> None:
    comparison = jupyter_brrr.diff(
        advice("launch_bound_loop", "slow"), advice("launch_bound_loop", "fixed")
    )
    # After, a bare CUDAGraph.replay(): its launch is the op that owns the replayed kernels.
    assert comparison.shift[0].startswith("cudaGraphLaunch is now the largest share")
    # The replay op has no cost model (a graph's kernels carry no shapes); their names say they
    # are pointwise, which is memory-bound (analysis._NAME_CLASSES).
    assert comparison.shift[1].startswith("The largest part of the span is now memory-bound time")
    counts = comparison.counts
    assert (counts.loc["launches", "before"], counts.loc["launches", "after"]) == (400, 1)
    assert comparison.amdahl.iloc[0]["kind"] == "replay"
    assert comparison.amdahl.iloc[1]["part"] == "idle"


def test_a_trace_with_several_steps_is_compared_per_step() -> None:
    path = DATA / "ranks" / "rank0_of2.step4.json.gz"
    report = load_report(path)
    steady = report.steps[report.steps["kind"] == "steady"]["span_s"]
    assert len(steady) == 2
    comparison = jupyter_brrr.diff(path, path)
    # The report's figures are already one step's (its median steady step): not divided again.
    assert comparison.span.before_s == pytest.approx(report.summary["span_s"])
    assert comparison.before.per_run == 1
    # The steady steps' spans are the spread.
    assert comparison.span.runs_before == 2 and "profiler steps" in comparison.span.reason
    low, high = steady.min() / steady.max(), steady.max() / steady.min()
    assert (comparison.span.low, comparison.span.high) == (pytest.approx(low), pytest.approx(high))
    assert comparison.verdict == "noise"


# --- noise ----------------------------------------------------------------------------------------


def test_median_interval_uses_order_statistics() -> None:
    assert median_interval([5, 1, 3, 2, 4]) == (1, 5)  # n=5: min and max cover 94%
    assert median_interval(list(range(1, 11))) == (2, 9)  # n=10: x(2), x(9) cover 98%
    assert median_interval(list(range(1, 21))) == (6, 15)  # n=20: x(6), x(15) cover 96%


def test_same_code_twice_is_noise_in_nine_of_ten() -> None:
    """Each recorded H200 workload's 15 step times as three measurements of 5 runs: every pair
    is the same code measured twice."""
    verdicts = []
    for times in step_times().values():
        groups = [times[0:5], times[5:10], times[10:15]]
        for a, b in ((0, 1), (1, 2), (0, 2)):
            change = span_change(
                float(np.median(groups[a])), float(np.median(groups[b])), groups[a], groups[b]
            )
            verdicts.append(change.verdict)
    assert len(verdicts) >= 180  # 60 workloads or more
    assert verdicts.count("noise") / len(verdicts) >= 0.9, pd.Series(verdicts).value_counts()


def test_a_real_ten_percent_gain_is_found_where_the_runs_agree() -> None:
    """The same pairs with the later measurement 10% faster: found wherever each side's runs
    agree within 6% (min to max), as a GPU-bound step's do, unless the host drifted between the
    two measurements enough to eat the gain below 5% (item_sync's recording: its second five
    runs 6% slower than its first); within the noise of wilder ones, it is not claimed."""
    found, stable = [], []
    for times in step_times().values():
        groups = [times[0:5], times[5:10], times[10:15]]
        for a, b in ((0, 1), (1, 2), (0, 2)):
            faster = [t / 1.1 for t in groups[b]]
            change = span_change(
                float(np.median(groups[a])), float(np.median(faster)), groups[a], faster
            )
            spread = max((max(g) - min(g)) / np.median(g) for g in (groups[a], groups[b]))
            net = np.median(groups[a]) / np.median(faster)
            (stable if spread < 0.06 and net > 1.05 else found).append(change.verdict)
    assert len(stable) >= 40
    assert stable.count("faster") == len(stable)
    assert "slower" not in found


def test_no_spread_means_uncertain_unless_the_change_is_small() -> None:
    assert span_change(0.010, 0.0098).verdict == "noise"  # under 5%
    change = span_change(0.010, 0.005)
    assert change.verdict == "uncertain" and "--repeat 5" in change.reason
    assert span_change(0.010, 0.005, [0.010] * 3, [0.005] * 3).verdict == "faster"


def test_profiled_cpu_runs_of_the_same_code_are_noise_or_uncertain() -> None:
    x = torch.randn(128, 128)
    before = jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=5)
    after = jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=5)
    comparison = jupyter_brrr.diff(before, after)
    assert comparison.span.runs_before == comparison.span.runs_after == 5
    assert set(comparison.ops["status"]) == {"both"}
    assert not comparison.warnings


# --- comparability ----------------------------------------------------------------------------------


def test_comparability_names_what_differs() -> None:
    before, after = advice("fp32_matmul_tf32_off", "slow"), advice("fp32_matmul_tf32_off", "fixed")
    after.summary["device"] = "NVIDIA H100 80GB HBM3"
    after.summary["torch_version"] = "2.13.0+cu130"
    # The fixed case sets the precision inside its step only: its recorded mode is the default.
    assert after.summary["math_mode"]["float32_matmul_precision"] == "highest"
    after.summary["math_mode"] = {**after.summary["math_mode"], "float32_matmul_precision": "high"}
    warnings = jupyter_brrr.diff(before, after).warnings
    text = "\n".join(warnings)
    assert "Different devices: NVIDIA H200 before, NVIDIA H100 80GB HBM3 after." in text
    assert "Different torch versions: 2.11.0+cu130 before, 2.13.0+cu130 after." in text
    assert "float32_matmul_precision 'highest' -> 'high'" in text


def test_math_mode_recorded_by_captures_is_compared() -> None:
    x = torch.randn(64, 64)
    before = jupyter_brrr.profile(lambda: x @ x)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        after = jupyter_brrr.profile(lambda: x @ x)
    finally:
        torch.set_float32_matmul_precision(previous)
    (warning,) = [w for w in jupyter_brrr.diff(before, after).warnings if "math mode" in w]
    assert f"float32_matmul_precision {previous!r} -> 'high'" in warning


def test_different_shapes_and_dtypes_are_flagged() -> None:
    comparison = jupyter_brrr.diff(
        advice("odd_vocab_lm_head", "slow"), advice("odd_vocab_lm_head", "fixed")
    )
    (shapes,) = [w for w in comparison.warnings if w.startswith("Different input shapes")]
    assert "aten::mm: [[8192, 768], [768, 50257]] -> [[8192, 768], [768, 50304]]" in shapes
    # By name the matmul is still one op, 7.7x faster.
    mm = comparison.by_name.set_index("name").loc["aten::mm"]
    assert mm["time_before_s"] / mm["time_after_s"] == pytest.approx(7.66, rel=0.02)

    x32, x16 = torch.randn(64, 64), torch.randn(64, 64).to(torch.bfloat16)
    a = jupyter_brrr.profile(lambda: x32 @ x32)
    b = jupyter_brrr.profile(lambda: x16 @ x16)
    (dtypes,) = [w for w in jupyter_brrr.diff(a, b).warnings if "compute dtypes" in w]
    assert "aten::mm" in dtypes and "fp32" in dtypes and "bf16" in dtypes


def test_first_run_against_warm_and_profiled_against_timed() -> None:
    x = torch.randn(64, 64)
    cold = jupyter_brrr.profile(lambda: x @ x)
    warm = jupyter_brrr.profile(lambda: x @ x, warmup=1, repeat=3)
    text = "\n".join(jupyter_brrr.diff(cold, warm).warnings)
    assert "The before report is a first run" in text and "warmup=1, repeat=5" in text
    assert "The before span comes from a profiled run" in text
    both_cold = "\n".join(jupyter_brrr.diff(cold, cold).warnings)
    assert "Both reports are first runs" in both_cold


def test_gpu_against_cpu_is_flagged(gpt2: Report) -> None:
    x = torch.randn(64, 64)
    cpu = jupyter_brrr.profile(lambda: x @ x)
    warnings = jupyter_brrr.diff(gpt2, cpu).warnings
    assert warnings[0].startswith("Only the before report has GPU work")


# --- inputs, JSON and displays -------------------------------------------------------------------------


def test_saved_reports_and_traces_are_read(tmp_path: Path) -> None:
    report = advice("hand_attention", "slow")
    report.save(tmp_path / "slow.json")
    comparison = jupyter_brrr.diff(tmp_path / "slow.json", ADVICE / "hand_attention.fixed.json.gz")
    assert comparison.before.name == "hand_attention.slow.json.gz"
    assert comparison.span.runs_before == 15 and comparison.span.runs_after == 0
    assert comparison.verdict == "uncertain"
    assert "aten::_cudnn_attention_forward" in set(comparison.appeared["name"])
    assert {"aten::bmm", "aten::_softmax"} <= set(comparison.vanished["name"])


def test_bad_inputs_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"'missing\.json' does not exist"):
        jupyter_brrr.diff(tmp_path / "missing.json", ADVICE / "hand_attention.fixed.json.gz")
    with pytest.raises(TypeError, match="a Report, a saved report"):
        jupyter_brrr.diff(42, ADVICE / "hand_attention.fixed.json.gz")  # pyright: ignore[reportArgumentType]  # the wrong type is the test
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "jupyter_brrr.report", "version": 1, "summary": ')
    with pytest.raises(SchemaError, match="looks like a saved report but cannot be read"):
        jupyter_brrr.diff(broken, ADVICE / "hand_attention.fixed.json.gz")
    newer = json.loads((DATA / "reports" / "newer.json").read_text())
    with pytest.raises(SchemaError, match="Update jupyter_brrr"):
        jupyter_brrr.diff(newer, ADVICE / "hand_attention.fixed.json.gz")


def test_json_round_trip_is_versioned() -> None:
    comparison = jupyter_brrr.diff(
        advice("hand_attention", "slow"), advice("hand_attention", "fixed")
    )
    doc = json.loads(comparison.to_json())
    assert doc["schema"] == COMPARISON_SCHEMA and doc["version"] == 1
    again = Comparison.from_json(comparison.to_json())
    assert again.span.speedup == pytest.approx(comparison.span.speedup)
    assert again.verdict == "faster" and again.shift == comparison.shift
    pd.testing.assert_frame_equal(again.split, comparison.split, check_dtype=False)
    assert list(again.ops["name"]) == list(comparison.ops["name"])
    assert repr(again) == repr(comparison)
    doc["version"] = 99
    with pytest.raises(SchemaError, match="version 99"):
        Comparison.from_json(doc)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)


def test_display_is_static_html_and_text_and_escapes_names() -> None:
    doc = json.loads((DATA / "reports" / "xss.json").read_text())
    before, after = Report.from_json(doc), Report.from_json(doc)
    after.ops["gpu_time_s"] = after.ops["gpu_time_s"] / 2
    bundle = jupyter_brrr.diff(before, after)._repr_mimebundle_()
    assert set(bundle) == {COMPARISON_MIME_TYPE, "text/html", "text/plain"}
    parser = _Tags()
    parser.feed(frame.static_part(bundle["text/html"]))
    assert not parser.tags & {"script", "iframe", "style", "img"}
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in bundle["text/html"]
    assert bundle[COMPARISON_MIME_TYPE]["schema"] == COMPARISON_SCHEMA


def test_html_shows_the_change_side_by_side() -> None:
    comparison = jupyter_brrr.diff(article_report(0.060), article_report(0.020))
    html = comparison._repr_mimebundle_()["text/html"]
    assert "1.67x faster" in html and "Per run, side by side" in html
    assert (
        "Amdahl check" in html and "the what-if predicted 1.67x (likely 1.59-1.75x) overall" in html
    )
    assert "mlp is now the largest share: 30% -&gt; 50%" in html
    # Each part, category and op with its verdict; the MLP did not move.
    assert "By op category" in html and html.count(">faster</span>") >= 3
    assert ">within noise</span>" in html


def test_comparison_json_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comparison_module, "JSON_OPS_LIMIT", 50)
    resnet = DATA / "resnet50_train_amp_b64.json.gz"
    comparison = jupyter_brrr.diff(resnet, resnet)
    doc = comparison.to_dict()
    total = len(comparison.ops)
    assert total > 150
    assert len(doc["ops"]["data"]) == 50 and doc["ops"]["total"] == total
    assert len(doc["kernels"]["data"]) == doc["kernels"]["total"] == len(comparison.kernels)
    assert math.isclose(comparison.span.speedup, 1.0)


# --- verdicts per part, op and category -------------------------------------------------------------


def test_each_part_op_and_category_gets_its_own_noise_verdict() -> None:
    # Attention 60 -> 20 ms is a real change; the MLP moving 30.0 -> 30.6 ms (2%) is noise.
    before, after = article_report(0.060), article_report(0.020, mlp_s=0.0306)
    comparison = jupyter_brrr.diff(before, after)
    ops = comparison.ops.set_index("name")["verdict"]
    assert ops.to_dict() == {"attention": "faster", "mlp": "noise"}
    categories = comparison.by_category.set_index("category")
    assert categories["verdict"].to_dict() == {"attention": "faster", "matmul": "noise"}
    assert categories.loc["attention", "ops"] == 1
    assert categories.loc["attention", "delta_s"] == pytest.approx(-0.040)
    split = comparison.split["verdict"].to_dict()
    assert split["compute"] == "faster" and split["idle"] == "noise"
    assert split["span"] == comparison.verdict == "faster"
    doc = comparison.to_dict()
    assert "verdict" in doc["ops"]["columns"] and doc["by_category"]["data"]
    assert Comparison.from_json(doc).by_category["category"].tolist() == ["attention", "matmul"]


def test_a_part_change_under_one_percent_of_the_span_is_noise() -> None:
    # 10x faster, but 0.5% of a 100 ms span: too thin a slice of one profiled run to tell.
    verdicts = part_verdicts([0.0005, 0.010, 0.010, 0.0], [0.00005, 0.012, 0.0104, 0.002], 0.1)
    assert verdicts.tolist() == ["noise", "slower", "noise", "slower"]


def test_a_part_moving_within_the_spans_band_of_noise_is_noise() -> None:
    # Runs of each side 20% apart: a part 15% faster is within it, one 30% faster is not, nor
    # one that appeared.
    band = (0.8, 1.25)
    verdicts = part_verdicts([0.010, 0.010, 0.0], [0.0087, 0.0077, 0.002], 0.1, band=band)
    assert verdicts.tolist() == ["noise", "faster", "slower"]


# --- the host CPU's own speed ------------------------------------------------------------------


def timed_on_host(report: Report, host_loop_s: float) -> Report:
    """``report`` with its timed runs' host readings (clocks.host_loop_s) set to ``host_loop_s``."""
    report.summary["timing"] = {"host_loop_s": [host_loop_s * f for f in (1.0, 1.01, 0.99)]}
    return report


def test_a_change_the_host_speed_explains_is_noise_and_says_why() -> None:
    # The same kernels; the GPU waited 20 ms more for a host that ran 1.3x slower.
    before = timed_on_host(article_report(0.060, idle_s=0.010), 100e-6)
    after = timed_on_host(article_report(0.060, idle_s=0.030), 130e-6)
    comparison = jupyter_brrr.diff(before, after)
    assert comparison.span.change == pytest.approx(0.2)
    assert comparison.verdict == "noise"
    assert "host CPU itself ran 1.30x slower" in comparison.span.reason
    assert "GPU's busy time did not change" in comparison.span.reason
    assert "(a fixed Python loop: 100 -> 130 µs)" in comparison.span.reason
    assert comparison.span.explained_by == "host"
    assert comparison.span.host_before_s == pytest.approx(100e-6)
    # Kept in the saved form, which the Change tab reads.
    doc = comparison.to_dict()
    assert doc["span"]["host_after_s"] == pytest.approx(130e-6)
    assert Comparison.from_json(comparison.to_json()).span.reason == comparison.span.reason
    # The same change at one host speed is the code's (or the host-side code's): slower.
    same_host = jupyter_brrr.diff(
        timed_on_host(article_report(0.060, idle_s=0.010), 100e-6),
        timed_on_host(article_report(0.060, idle_s=0.030), 101e-6),
    )
    assert same_host.verdict == "slower"
    assert not any("host CPU itself" in note for note in same_host.notes)


def test_a_change_the_host_speed_cannot_explain_keeps_its_verdict() -> None:
    # Twice the span with a host only 1.3x slower: more than the host can explain.
    slower = jupyter_brrr.diff(
        timed_on_host(article_report(0.060, idle_s=0.010), 100e-6),
        timed_on_host(article_report(0.060, idle_s=0.110), 130e-6),
    )
    assert slower.verdict == "slower"
    assert any("host CPU itself ran 1.30x slower" in note for note in slower.notes)
    # Attention got faster on the GPU while the host also sped up: the GPU's busy time moved,
    # so the gain is not the host's alone.
    faster = jupyter_brrr.diff(
        timed_on_host(article_report(0.060), 100e-6),
        timed_on_host(article_report(0.052), 75e-6),
    )
    assert faster.verdict == "faster"
    assert any("part of the change may be the host's" in note for note in faster.notes)
    # A host that changed the other way cannot explain it either.
    against = jupyter_brrr.diff(
        timed_on_host(article_report(0.060, idle_s=0.010), 100e-6),
        timed_on_host(article_report(0.060, idle_s=0.030), 75e-6),
    )
    assert against.verdict == "slower"


def test_live_captures_record_the_host_speed_of_each_timed_run() -> None:
    x = torch.randn(64, 64)
    before = jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=5)
    timing = before.summary["timing"]
    assert timing is not None
    loops = timing["host_loop_s"]
    assert len(loops) == 5 and all(0 < t < 0.1 for t in loops)
    fastest = timing["host_loop_fastest_s"]
    assert 0 < fastest <= min(loops)
    comparison = jupyter_brrr.diff(
        before, jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=5)
    )
    assert comparison.span.host_before_s == pytest.approx(float(np.median(loops)))


def test_the_same_code_with_the_same_gpu_work_is_noise_whatever_the_host_loop_saw() -> None:
    """A named cell run twice unchanged (bench/RESULTS.md: a GPT-2 forward 17% slower in the
    second capture with the fixed loop 27% faster): the same kernels and launches and the GPU
    busy as long, so the change is the GPU waiting for the host."""
    before = timed_on_host(article_report(0.060, idle_s=0.010), 100e-6)
    after = timed_on_host(article_report(0.060, idle_s=0.027), 73e-6)
    unknown = comparison_module.compare_reports(before, after)
    assert unknown.verdict == "slower"  # without knowing the code was the same
    same = comparison_module.compare_reports(before, after, code_same=True)
    assert same.verdict == "noise"
    assert "the same code ran both times, with the same kernels and launches" in same.span.reason
    assert same.span.explained_by == "same code" and unknown.span.explained_by == ""
    # The GPU's own time moved: the same code on other data, or another GPU state. Not noise.
    busier = comparison_module.compare_reports(
        before, timed_on_host(article_report(0.075, idle_s=0.010), 100e-6), code_same=True
    )
    assert busier.verdict == "slower"


# --- the standalone HTML file -------------------------------------------------------------------


def test_save_html_is_one_offline_file_with_the_app_and_the_comparison(tmp_path: Path) -> None:
    """jupyter_brrr.diff(...).save_html: the bundle's app and styles inlined next to the
    comparison's JSON (data, never run), nothing loaded from elsewhere, names kept as text."""
    before = load_report(DATA / "coscos_eager.json.gz")
    after = load_report(DATA / "coscos_compiled.json.gz")
    before.name, after.name = "<script>alert(1)</script>", "compiled & fused"
    comparison = jupyter_brrr.diff(before, after)
    path = comparison.save_html(tmp_path / "change.html")
    assert path == tmp_path / "change.html"
    page = path.read_text(encoding="utf-8")
    offline_page(page)
    assert page_data(page) == json.loads(comparison.to_json())
    assert page_data(page)["schema"] == COMPARISON_SCHEMA
    assert Comparison.from_json(page_data(page)).to_json() == comparison.to_json()
    assert "<script>alert" not in page
    # Titled as the app's header: both sides, escaped.
    assert (
        "<title>jupyter_brrr change: &lt;script&gt;alert(1)&lt;/script&gt; \u2192 "
        "compiled &amp; fused</title>" in page
    )
    titled = comparison.save_html(tmp_path / "titled.html", title="eager vs compiled")
    assert "<title>eager vs compiled</title>" in titled.read_text(encoding="utf-8")


def test_save_html_of_a_comparison_refuses_a_bad_path(tmp_path: Path) -> None:
    comparison = jupyter_brrr.diff(article_report(0.060), article_report(0.020))
    with pytest.raises(FileNotFoundError, match=r"the folder .*nowhere does not exist"):
        comparison.save_html(tmp_path / "nowhere" / "change.html")
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match=r"it is a folder.*comparison\.html"):
        comparison.save_html(tmp_path / "out")
    # Nothing half written: no temporary file left beside the folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert list((tmp_path / "out").iterdir()) == []
