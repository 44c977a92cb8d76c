"""The roofline follows the math mode that ran: roofs per op, their basis, and the over-roof flags.

Real traces only: the H200 zoo (recorded with PyTorch's defaults, the settings in each
``.meta.json``), the advice case with TF32 off and on, and the A100/V100/MI250 traces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from checked import known_peaks, load_report

import jupyter_brrr
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.capture.run import math_mode
from jupyter_brrr.costs import peaks, roofs
from jupyter_brrr.schema.report import OPS_COLUMNS, ROOF_BASES
from jupyter_brrr.trace.events import read_trace

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
ZOO = ROOT / "bench" / "data" / "h200" / "zoo"
# Every profiler trace kept as test data (a recorded sweep, ``*.sweep.json.gz``, is a sweep
# document, not a trace).
ALL_TRACES = sorted(
    p for p in DATA.rglob("*.json.gz") if not p.name.endswith(".sweep.json.gz")
) + sorted(ZOO.glob("*.json.gz"))
H200 = known_peaks("NVIDIA H200")


@pytest.fixture(scope="module")
def loaded() -> dict[Path, jupyter_brrr.Report]:
    return {path: load_report(path) for path in ALL_TRACES}


def fp32_rows(report: jupyter_brrr.Report, category: str):
    ops = report.ops
    return ops[(ops["dtype"] == "fp32") & (ops["category"] == category) & (ops["roof"] != "")]


# --- the peaks table ---------------------------------------------------------------------------

# Which parts have TF32 tensor cores: NVIDIA Ampere and later, AMD CDNA3 (MI300X/MI325X, "XF32").
NO_TF32 = re.compile(r"V100|T4|MI250")


@pytest.mark.parametrize("row", peaks.KNOWN_GPUS, ids=lambda row: row.device)
def test_every_known_gpu_has_tf32_exactly_when_it_has_the_units(row: peaks.Peaks) -> None:
    if NO_TF32.search(row.device):
        assert "tf32" not in row.flops
        assert row.roof_key("tf32") == "fp32"
    else:
        assert row.roof_key("tf32") == "tf32"
        # Datasheet dense TF32: half the FP16 rate on every part listed (GeForce and A10G: the
        # FP32-accumulate FP16 rate), never below plain FP32.
        assert row.flops["tf32"] == pytest.approx(row.flops["fp16"] / 2, rel=0.02), row.device
        assert row.flops["tf32"] >= row.flops["fp32"]


def test_roof_key_names_the_figure_flops_for_uses() -> None:
    v100 = known_peaks("Tesla V100-SXM2-16GB")
    for dtype in ("tf32", "bf16", "fp16", "fp32", "int8", None):
        assert v100.flops[v100.roof_key(dtype)] == v100.flops_for(dtype)
    assert v100.roof_key("bf16") == "fp32"  # no bf16 tensor cores
    assert H200.roof_key("tf32") == "tf32"


# --- kernel names --------------------------------------------------------------------------------

# Names copied from the traces in tests/data and bench/data/h200/zoo.
TF32_NAMES = [
    "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
    "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock"
    "22ImplicitGemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi16EEENS_10tfloat32_tE",
]
FP32_NAMES = [
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
    "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize256x64x8_stage3_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
    "ampere_sgemm_128x128_tn",
    "void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*, float const*, float const*, int)",
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(cutlass_80_simt_sgemm_64x64_8x5_nn_align1::Params)",
    "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int)",
    "void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*)",
    "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true>",
]
SILENT_NAMES = [
    "conv2d_c1_k1_nhwc",
    "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NTT",
    "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1",
    "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>",
    "Memset (Device)",
]


def test_kernel_names_tell_tf32_from_plain_fp32() -> None:
    names = np.array([*TF32_NAMES, *FP32_NAMES, *SILENT_NAMES, None], dtype=object)
    tf32, fp32, _fewer = roofs.kernel_units(names)
    expected_tf32 = [True] * len(TF32_NAMES) + [False] * (len(names) - len(TF32_NAMES))
    expected_fp32 = [False] * len(TF32_NAMES) + [True] * len(FP32_NAMES)
    expected_fp32 += [False] * (len(SILENT_NAMES) + 1)
    assert tf32.tolist() == expected_tf32
    assert fp32.tolist() == expected_fp32


@pytest.mark.parametrize("meta", sorted(ZOO.glob("*.meta.json")), ids=lambda p: p.stem)
def test_roofs_read_from_kernel_names_agree_with_the_recorded_settings(meta: Path) -> None:
    settings = json.loads(meta.read_text())["math_mode"]
    report = load_report(meta.with_name(meta.name.replace(".meta.json", ".json.gz")))
    for category, allowed in (
        ("matmul", settings["matmul_allow_tf32"]),
        ("conv", settings["cudnn_allow_tf32"]),
    ):
        told = fp32_rows(report, category)
        told = told[told["roof_basis"] == "kernel"]
        if not allowed:  # TF32 was forbidden: no kernel may have used it
            assert set(told["roof"]) <= {"fp32"}, (category, told[["name", "roof"]])


def test_fp32_convolutions_with_pytorch_defaults_run_on_tf32() -> None:
    for name in ("resnet50_fp32_infer", "resnet18_train_fp32"):
        report = load_report(ZOO / f"{name}.json.gz")
        convs = fp32_rows(report, "conv")
        big = convs[convs["bound"] == "compute"]
        assert len(big) >= 10 and set(big["roof"]) == {"tf32"}, name
        assert set(big["roof_basis"]) == {"kernel"}, name
        # Held against TF32 they sit below their roof (against FP32 they read 118-502%).
        assert big["roof_fraction"].max() <= roofs.ROOF_TOLERANCE, name
        assert big["roof_fraction"].median() > 0.1, name
        assert report.summary["math_mode"]["fp32_conv"]["roof"] == "tf32"
        detail = " ".join(a["detail"] for a in report.recommendations)
        # TF32 is on already: no advice to turn it on.
        assert "allow_tf32 = True" not in detail, name


def test_bert_fp32_matmuls_ran_with_tf32_off() -> None:
    report = load_report(ZOO / "hf_bert_fp32.json.gz")
    matmuls = fp32_rows(report, "matmul")
    assert len(matmuls) and set(matmuls["roof"]) == {"fp32"}
    assert set(matmuls["roof_basis"]) == {"kernel"}


@pytest.mark.parametrize(("case", "roof"), [("slow", "fp32"), ("fixed", "tf32")])
def test_the_tf32_advice_case_is_held_against_the_roof_that_ran(case: str, roof: str) -> None:
    report = load_report(DATA / "advice" / f"fp32_matmul_tf32_off.{case}.json.gz")
    mm = report.ops[(report.ops["name"] == "aten::mm") & (report.ops["roof"] != "")].iloc[0]
    assert (mm["roof"], mm["roof_basis"], mm["bound"]) == (roof, "kernel", "compute")
    assert 0.5 < mm["roof_fraction"] <= roofs.ROOF_TOLERANCE  # the fixed one read 562% before
    compute = next(a for a in report.recommendations if a["bottleneck"] == "compute")
    if case == "slow":
        assert compute["cause"] == "fp32 without tensor cores"
        assert "set_float32_matmul_precision('high')" in compute["detail"]
        assert "of its fp32 roof" in compute["detail"]
    else:
        assert compute["cause"] == "bf16"
        assert "set_float32_matmul_precision" not in compute["detail"]
        assert "already run on TF32" in compute["detail"]


def test_a_mixed_a100_trace_holds_each_matmul_against_its_own_units() -> None:
    report = load_report(
        DATA / "hta" / "sampled_rank0_of128.json.gz", device="NVIDIA A100-SXM4-80GB"
    )
    matmuls = fp32_rows(report, "matmul")
    by_roof = matmuls.groupby(["roof", "roof_basis"]).size().to_dict()
    # ampere_sgemm_* calls on FP32, cutlass_80_tensorop_s1688gemm_* calls on TF32, and two calls
    # whose kernels do not tell: PyTorch's default for matmuls, FP32, said to be assumed.
    assert by_roof[("fp32", "kernel")] > 0 and by_roof[("tf32", "kernel")] > 0
    assert by_roof[("fp32", "assumed")] > 0
    assert any(note.startswith("Roof assumed") for note in report.notes)
    assert report.summary["math_mode"]["fp32_matmul"]["roof"] == "mixed"


def test_a_recorded_setting_decides_where_kernel_names_do_not_tell() -> None:
    trace = read_trace(DATA / "hta" / "sampled_rank0_of128.json.gz")
    a100 = peaks.lookup("NVIDIA A100-SXM4-80GB")
    for allowed, roof in ((True, "tf32"), (False, "fp32")):
        result = analysis.analyze(trace, a100, math_mode={"matmul_tf32": allowed})
        silent = result.ops[result.ops["roof_basis"] == "setting"]
        assert len(silent) and set(silent["roof"]) == {roof}
        assert not (result.ops["roof_basis"] == "assumed").any()
        assert result.summary["math_mode"]["settings"] == {"matmul_tf32": allowed}


def test_a_gpu_without_tf32_holds_fp32_against_fp32() -> None:
    trace = read_trace(DATA / "hta" / "sampled_rank0_of128.json.gz")
    v100 = known_peaks("Tesla V100-SXM2-16GB")
    result = analysis.analyze(trace, v100, math_mode={"matmul_tf32": True})
    matmuls = result.ops[(result.ops["dtype"] == "fp32") & (result.ops["category"] == "matmul")]
    assert set(matmuls["roof"]) <= {"fp32", ""}
    assert set(matmuls["roof_basis"]) <= {"dtype", ""}


# --- no figure above its roof unflagged -----------------------------------------------------------


def test_every_op_above_its_roof_is_flagged_with_a_reason(loaded: dict) -> None:
    flagged_total = 0
    for path, report in loaded.items():
        ops = report.ops
        assert list(ops.columns) == list(OPS_COLUMNS), path
        assert set(ops["roof_basis"]) <= {*ROOF_BASES, ""}, path
        fraction = ops["roof_fraction"].to_numpy(dtype=float)
        flag = ops["roof_flag"].to_numpy(dtype=object)
        over = fraction > roofs.ROOF_TOLERANCE
        assert all(flag[over]), (path, ops[over & (flag == "")][["name", "roof_fraction"]])
        assert not any(flag[~over]), path
        flagged_total += int(over.sum())
        # What stays above the roof is a byte model or the L2 cache, never a wrong roof: held
        # against the wrong units an op reads 5-7x its roof. A compute-bound one is an estimate
        # whose FLOPs are an upper bound (flex attention's block mask is not in the trace).
        flagged = ops[over]
        estimate = flagged["cost_model"] == "estimate"
        assert ((flagged["bound"] == "memory") | estimate).all(), (path, flagged[["name", "bound"]])
        assert flagged.loc[flagged["bound"] == "compute", "roof_flag"].str.contains("mask").all()
        assert (flagged["roof_fraction"] < 2.5).all(), (path, flagged[["name", "roof_fraction"]])
        if over.any():
            assert any("roof_flag" in note for note in report.notes), path
    assert (
        flagged_total < 60
    )  # 83 ops read above their roof before the roofs followed the math mode


def test_advice_never_quotes_a_share_of_peak_above_the_roof(loaded: dict) -> None:
    for path, report in loaded.items():
        for advice in report.recommendations:
            for share in re.findall(r"at (\d+)% of", advice["detail"]):
                assert int(share) <= 100 * roofs.ROOF_TOLERANCE, (path, advice["detail"])


def test_gather_with_an_expanded_index_reads_it_once_per_row() -> None:
    """The embedding of the zoo's GPT as torch.gather: an index [8192] expanded over the 768
    columns (Input Strides [1, 0]). Counted in full it read 1.3-1.8x the roof; each row's index
    is read once (the repeats come from cache), the gathered rows and the output in full."""
    report = load_report(ZOO / "gpt_fwd_bf16.json.gz")
    gather = report.ops[report.ops["name"] == "aten::gather"].iloc[0]
    assert gather["shapes"] == "[[50304, 768], [], [8192, 768], [], [8192, 768]]"
    rows, width = 8192, 768
    assert gather["bytes"] == 2 * rows * width * 2 + rows * 8  # fetched + written bf16, index
    assert gather["roof_fraction"] <= roofs.ROOF_TOLERANCE and not gather["roof_flag"]


# --- the settings recorded at capture ---------------------------------------------------------


def test_capture_records_the_math_mode_the_code_ran_with() -> None:
    matmul = torch.backends.cuda.matmul
    before = torch.get_float32_matmul_precision()
    x = torch.randn(64, 64)

    def code() -> torch.Tensor:
        torch.set_float32_matmul_precision("high")  # the cell changes it before its work
        return x @ x

    try:
        report = jupyter_brrr.profile(code)
    finally:
        torch.set_float32_matmul_precision(before)
    settings = report.summary["math_mode"]["settings"]
    assert settings["matmul_tf32"] is True and settings["float32_matmul_precision"] == "high"
    assert settings["conv_tf32"] is torch.backends.cudnn.allow_tf32
    assert set(settings) >= {
        "cudnn_allow_tf32",
        "fp16_reduced_precision_reduction",
        "bf16_reduced_precision_reduction",
        "autocast",
    }
    assert torch.get_float32_matmul_precision() == before and matmul.allow_tf32 is (
        before != "highest"
    )
    json.dumps(report.to_dict())  # JSON-safe


def test_math_mode_reads_mixed_legacy_and_new_settings() -> None:
    matmul = torch.backends.cuda.matmul
    if not hasattr(matmul, "fp32_precision"):
        pytest.skip("this torch has no fp32_precision API")
    legacy = torch.get_float32_matmul_precision()
    new = matmul.fp32_precision
    try:
        torch.set_float32_matmul_precision("high")
        matmul.fp32_precision = "ieee"  # now the legacy getter raises
        with pytest.raises(RuntimeError):
            _ = matmul.allow_tf32
        mode = math_mode()
        assert mode["matmul_tf32"] is False and mode["matmul_fp32_precision"] == "ieee"
        assert mode["matmul_allow_tf32"] is None
    finally:
        torch.set_float32_matmul_precision(legacy)
        matmul.fp32_precision = new
    assert math_mode()["matmul_allow_tf32"] is (legacy != "highest")
