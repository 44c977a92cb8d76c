"""The advice against cases with a known right answer, recorded on the H200 (tests/data/advice/,
bench/advice_cases.py): the first recommendation names the right cause and op, the fixed
version no longer gets it, and its predicted saving matches the gain the fixed version measured.

Each recorded trace is analysed as %%brrr would analyse it: with the span the CUDA events timed
around unprofiled runs and the math mode recorded with it (its .meta.json).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import jupyter_brrr
from jupyter_brrr.analysis import advice, limits
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.costs import peaks as peak_table
from jupyter_brrr.schema.report import CAUSES, REASONS
from jupyter_brrr.trace import events

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CASES_DIR = DATA / "advice"
SUPERSEDED = CASES_DIR / "superseded"
sys.path.insert(0, str(ROOT / "bench"))

import advice_cases  # noqa: E402

CASES = advice_cases.CASES


def recorded(folder: Path, name: str, version: str) -> tuple[analysis.Analysis, dict]:
    path = folder / f"{name}.{version}.json.gz"
    meta = json.loads(path.with_name(f"{name}.{version}.meta.json").read_text())
    trace = events.read_trace(path)
    peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
    result = analysis.analyze(
        trace,
        peaks,
        span_s=meta["event_median_s"],
        span_source="cuda_events_unprofiled",
        math_mode=meta["math_mode"],
    )
    return result, meta


def current(name: str, version: str) -> tuple[analysis.Analysis, dict]:
    if not (CASES_DIR / f"{name}.{version}.json.gz").exists():
        # bench/advice_cases.py changed this case after the H200 recorded it (its old recording
        # is in superseded/): h200_record.py --parts cases records it again.
        pytest.skip(f"{name}: not recorded since the case changed; record it on the H200")
    return recorded(CASES_DIR, name, version)


def names_of(recommendation: dict) -> str:
    return " ".join(str(op.get("name", "")) for op in recommendation["ops"])


def test_every_case_names_a_cause_the_advice_knows() -> None:
    assert len(CASES) >= 12
    assert {case.cause for case in CASES.values()} <= set(CAUSES)
    assert set(advice.CAUSES) == set(CAUSES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_recommendation_names_the_cause_and_the_op(name: str) -> None:
    case = CASES[name]
    result, _ = current(name, "slow")
    assert result.recommendations, name
    first = result.recommendations[0]
    assert first["cause"] == case.cause, (name, [r["title"] for r in result.recommendations])
    assert case.op in names_of(first), (name, first["ops"])
    # What it rests on is in its words: the ops it names, and what it would save at best.
    assert first["evidence"] and first["fix"]
    assert "At best this saves" in first["detail"]
    assert 0 < first["share"] <= 1 and first["saving_s"] > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fixed_version_no_longer_gets_that_recommendation_first(name: str) -> None:
    case = CASES[name]
    result, _ = current(name, "fixed")
    if result.recommendations:
        first = result.recommendations[0]
        assert not (first["cause"] == case.cause and case.op in names_of(first)), (name, first)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_saving_predicted_is_the_gain_the_fix_measured(name: str) -> None:
    # The fixed version, timed by CUDA events on the H200, gained what the first recommendation
    # said fixing its cause could save at best: at least 60% of it (the advice found the real
    # cost), and no more than all the recommendations together (no gain it did not see).
    slow, slow_meta = current(name, "slow")
    _, fixed_meta = current(name, "fixed")
    measured = 1 - fixed_meta["event_median_s"] / slow_meta["event_median_s"]
    predicted = slow.recommendations[0]["share"]
    everything = min(sum(r["share"] for r in slow.recommendations), 1.0)
    assert measured >= 0.6 * predicted, (name, measured, predicted)
    assert measured <= everything + 0.1, (name, measured, everything)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_loaded_trace_gets_the_same_first_cause(name: str) -> None:
    # jupyter_brrr.load() has no CUDA-event span: the trace's own GPU span (and the host's
    # lead-in before its first GPU work) gives the same answer.
    current(name, "slow")
    report = jupyter_brrr.load(CASES_DIR / f"{name}.slow.json.gz")
    assert report.recommendations[0]["cause"] == CASES[name].cause, name


def test_recommendations_are_ranked_by_their_saving() -> None:
    for path in sorted(CASES_DIR.glob("*.json.gz")):
        savings = [r["saving_s"] for r in jupyter_brrr.load(path).recommendations]
        assert savings == sorted(savings, reverse=True), path.name


# --- the superseded recordings: read honestly ------------------------------------------------


def test_one_transposed_input_read_in_its_own_layout_is_not_called_strided() -> None:
    # Revision 1 of strided_elementwise: x * 2 + 1 on a transposed view. PyTorch writes the
    # result in x's layout and reads it at 88% of the memory roof: nothing strided to fix, and
    # the H200 timed the contiguous version no faster (0.282 against 0.275 ms).
    result, _ = recorded(SUPERSEDED, "strided_elementwise", "slow")
    assert not (result.ops["reason"] == "strided").any()
    assert "strided" not in {r["cause"] for r in result.recommendations}


def test_a_gather_at_its_roof_gets_no_big_promise() -> None:
    # Revision 1 of embedding_lookup: one gather near the memory roof, whose bf16 version took
    # the same time. No recommendation may promise much there.
    for version in ("slow", "fixed"):
        result, _ = recorded(SUPERSEDED, "embedding_lookup", version)
        assert all(r["share"] < 0.3 for r in result.recommendations), version


def test_a_host_bound_loop_with_an_item_is_not_blamed_on_the_sync() -> None:
    # Revision 1 of item_sync: 26 us of GPU work against ~90 us of host time per iteration.
    # Without the sync the host is still the limit (the H200: 4.70 against 4.55 ms), so the
    # first recommendation is the launches, and any about the sync promises little.
    result, meta = recorded(SUPERSEDED, "item_sync", "slow")
    _, fixed = recorded(SUPERSEDED, "item_sync", "fixed")
    assert result.recommendations[0]["cause"] == "launch overhead"
    sync = [r for r in result.recommendations if r["cause"] == "synchronisation"]
    assert all(r["share"] < 0.1 for r in sync)
    assert 1 - fixed["event_median_s"] / meta["event_median_s"] < 0.1


# --- what limits each op --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2() -> jupyter_brrr.Report:
    report = jupyter_brrr.load(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    assert isinstance(report, jupyter_brrr.Report)
    return report


@pytest.fixture(scope="module")
def resnet() -> jupyter_brrr.Report:
    report = jupyter_brrr.load(DATA / "resnet50_train_amp_b64.json.gz")
    assert isinstance(report, jupyter_brrr.Report)
    return report


def test_the_lm_head_names_its_odd_dimension_and_the_size_to_pad_it_to(gpt2) -> None:
    head = gpt2.ops[gpt2.ops["shapes"] == "[[8192, 768], [768, 50257]]"].iloc[0]
    assert head["regime"] == "compute" and head["roof_fraction"] < 0.15
    assert head["reason"] == "tile quantisation"
    assert "N = 50257" in head["why"] and "50304" in head["why"]
    assert "align1" in head["why"]  # the kernel cuBLAS fell back to says so
    tiles = next(r for r in gpt2.recommendations if r["cause"] == "tile quantisation")
    assert tiles["ops"][0]["shapes"] == head["shapes"]
    assert "the arithmetic units are the limit" not in " ".join(
        r["detail"].lower() for r in gpt2.recommendations
    )


def test_regime_and_limit_are_told_apart(resnet) -> None:
    # The first convolution of ResNet-50, NCHW under autocast: below the ridge (memory side), at
    # 4% of its roof, so not limited by memory: its time goes to cuDNN's layout transpositions.
    stem = resnet.ops[resnet.ops["shapes"].str.startswith("[[64, 3, 224, 224], [64, 3, 7, 7]")]
    stem = stem[stem["name"] == "aten::cudnn_convolution"].iloc[0]
    assert stem["regime"] == "memory" and stem["roof_fraction"] < 0.1
    assert stem["reason"] == "layout" and "nchwToNhwc" in stem["why"]
    for row in resnet.ops.itertuples():
        assert row.reason in ("", *REASONS)
        if row.reason and row.reason not in ("fp32 without tensor cores", "layout"):
            assert row.roof_fraction < limits.LOOKED_AT, row.name
        if row.reason:
            assert row.regime in ("compute", "memory")


def test_a_grid_smaller_than_the_gpu_is_named_with_its_blocks(resnet) -> None:
    little = resnet.ops[resnet.ops["reason"] == "too little work"]
    assert len(little)
    assert all(" block" in why and "threads" in why for why in little["why"])
    assert any("on 132 SMs" in why for why in little["why"])
    assert all(why.startswith("probably") for why in little["why"])


def test_wave_quantisation_names_the_waves_and_their_efficiency(resnet) -> None:
    waves = resnet.ops[resnet.ops["reason"] == "wave quantisation"]
    assert len(waves)
    for why in waves["why"]:
        assert "waves of" in why and "wave efficiency of" in why


def test_resident_blocks_follow_registers_shared_memory_and_threads() -> None:
    h200 = limits.Device(sms=132, shared_memory_per_sm=233472)
    # 128 threads at 254 registers: 4 warps of 8192 registers, 2 blocks in 65536.
    assert h200.resident_blocks(128, 254, 32768) == 2
    # 384 threads and 164 kB of shared memory: 1.
    assert h200.resident_blocks(384, 168, 164308) == 1
    # 128 threads, 32 registers, no shared memory: the 2048 threads per SM bound it at 16.
    assert h200.resident_blocks(128, 32, 0) == 16


def test_a_memset_does_no_arithmetic(gpt2) -> None:
    sets = gpt2.kernels[gpt2.kernels["kind"] == "memset"]
    assert len(sets)
    assert (sets["category"] == "memset").all() and (sets["bound"] == "other").all()
    assert sets["flops"].isna().all()


def test_no_advice_for_what_the_code_already_does(gpt2, resnet) -> None:
    # GPT-2 here is bf16 and calls SDPA: no bf16 advice and no fused-attention advice.
    assert not {"bf16", "unfused attention"} & {r["cause"] for r in gpt2.recommendations}
    assert "bf16 autocast" not in " ".join(r["detail"] for r in gpt2.recommendations)
    # ResNet-50 has no attention at all.
    assert "scaled_dot_product_attention" not in " ".join(
        r["detail"] for r in resnet.recommendations
    )


def test_tf32_advice_only_where_float32_ran_on_the_fp32_units() -> None:
    bert = jupyter_brrr.load(DATA.parent.parent / "bench/data/h200/zoo/hf_bert_fp32.json.gz")
    assert bert.recommendations[0]["cause"] == "fp32 without tensor cores"
    # Convolutions ran on TF32 (cuDNN's default): no TF32 advice for them.
    resnet_fp32 = jupyter_brrr.load(
        DATA.parent.parent / "bench/data/h200/zoo/resnet50_fp32_infer.json.gz"
    )
    assert isinstance(resnet_fp32, jupyter_brrr.Report)
    assert "allow_tf32 = True" not in " ".join(r["detail"] for r in resnet_fp32.recommendations)
    plain = resnet_fp32.ops[resnet_fp32.ops["reason"] == "fp32 without tensor cores"]
    # Only its classifier's matmul ran on the FP32 units (matmul TF32 is off by default).
    assert set(plain["category"]) == {"matmul"}


def test_attention_through_sdpa_s_math_path_is_told_apart_from_attention_by_hand() -> None:
    zoo = DATA.parent.parent / "bench/data/h200/zoo"
    math_path = jupyter_brrr.load(zoo / "sdpa_backends.json.gz")
    by_hand = jupyter_brrr.load(CASES_DIR / "hand_attention.slow.json.gz")
    first = next(r for r in math_path.recommendations if r["cause"] == "unfused attention")
    assert "math" in first["title"]
    assert "ran its unfused math path" not in by_hand.recommendations[0]["title"]


# --- strides, on real profiler traces -------------------------------------------------------------


def _strides_of(fn) -> dict[str, tuple[object, object]]:
    import torch

    with torch.profiler.profile(record_shapes=True) as prof:
        fn()
    path = Path(prof_path := str(Path(__file__).parent / "artifacts" / "strides.json"))
    path.parent.mkdir(exist_ok=True)
    prof.export_chrome_trace(prof_path)
    trace = events.read_trace(path)
    found: dict[str, tuple[object, object]] = {}
    for row in trace.ops.itertuples():
        if (
            isinstance(row.name, str)
            and row.name.startswith("aten::")
            and row.name not in found
            and row.strides
        ):
            found[row.name] = (row.dims, row.strides)
    return found


def test_strided_reads_are_told_from_layouts_that_agree() -> None:
    import torch

    a, b = torch.randn(256, 256), torch.randn(256, 256)
    mixed = _strides_of(lambda: a + b.t())["aten::add"]
    assert limits.call_strided(*mixed, "elementwise")
    agreeing = _strides_of(lambda: a.t() * 2.0)["aten::mul"]  # read in its own layout
    assert not limits.call_strided(*agreeing, "elementwise")
    stepped = _strides_of(lambda: a[:, ::2] + 1.0)["aten::add"]  # every other element
    assert limits.call_strided(*stepped, "elementwise")
    broadcast = _strides_of(lambda: a + b[0])["aten::add"]  # a row added to every row
    assert not limits.call_strided(*broadcast, "elementwise")
    assert not limits.call_strided(*mixed, "matmul")


def test_causes_map_onto_the_three_bottlenecks() -> None:
    assert set(advice._BOTTLENECK) == set(CAUSES)
    assert set(advice._BOTTLENECK.values()) <= {
        "compute",
        "memory",
        "overhead",
        "other",
        "communication",
    }


def test_shares_are_of_the_report_s_time() -> None:
    for name in ("launch_bound_loop", "dataloader_stall"):
        result, meta = current(name, "slow")
        first = result.recommendations[0]
        assert first["saving_s"] <= meta["event_median_s"] * 1.0001
        assert np.isclose(first["share"], first["saving_s"] / meta["event_median_s"], rtol=1e-6)
