"""Advice that did not fit its evidence on held-out H200 workloads (issue 24), each case made
again: the GPU ones as Kineto traces written event by event and read through the real loading
path (tests/gpu_timeline.py), the sweep and the timings where a CPU runs them for real.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from gpu_timeline import GpuTimeline, one_kernel_op

import jupyter_brrr
from jupyter_brrr.actions import sweep as sweeps
from jupyter_brrr.analysis.spread import findings, warmup
from jupyter_brrr.views.sweep_memory import sweep_lines

ROOT_DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "h200" / "fixes"

_MUL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> > >(int, float, float)"
)
_R2C = (
    "void regular_fft<256u, EPT_16, 16u, 2u, (padding_t)1, (twiddle_t)0, "
    "(loadstore_modifier_t)2, (layout_t)0, unsigned int, float>(kernel_arguments_t<unsigned int>)"
)
_C2R = "void regular_fft_c2r<256u, EPT_16, 16u>(kernel_arguments_t<unsigned int>)"


def _fft(t: GpuTimeline, name: str, inner: str, dims: list[int], kind: str, gpu: float) -> float:
    """torch.fft.rfft / irfft as the profiler records them: the public op around ATen's
    _fft_r2c / _fft_c2r, whose cuFFT kernel is the one launched."""
    start = t.now
    kept = ["", "ScalarList", "Scalar", "Scalar"]
    t.op(name, [dims, [], [], []], [kind, "", "Scalar", ""], 40.0, start=start)
    t.now = start + 2
    concrete = ["", "[1]", "0", "True"] if "r2c" in inner else ["", "[1]", "2", "65536"]
    end = one_kernel_op(
        t,
        inner,
        [dims, [], [], []],
        [kind, *kept[1:]],
        _R2C if "r2c" in inner else _C2R,
        30.0,
        host_us=36,
        gpu_at=gpu,
        concrete=concrete,
        grid=(2048, 1, 1),
        block=(256, 1, 1),
    )
    t.now = start + 41
    return end


def _fft_convolution(repeats: int = 4) -> GpuTimeline:
    """A windowed FFT convolution of 64 signals of 2**16 floats, four times: x * window, rfft,
    a product of spectra, irfft, each a kernel of its own."""
    t = GpuTimeline()
    b, n, half = 64, 1 << 16, (1 << 15) + 1
    gpu = 0.0
    for _ in range(repeats):
        gpu = one_kernel_op(
            t,
            "aten::mul",
            [[b, n], [n]],
            ["fp32", "fp32"],
            _MUL,
            9.0,
            gpu_at=gpu,
            grid=(4096, 1, 1),
        )
        gpu = _fft(t, "aten::fft_rfft", "aten::_fft_r2c", [b, n], "float", gpu)
        complex_mul = _MUL.replace("float", "c10::complex<float>")
        gpu = one_kernel_op(
            t,
            "aten::mul",
            [[b, half], [b, half]],
            ["c10::complex<float>", "c10::complex<float>"],
            complex_mul,
            14.0,
            gpu_at=gpu,
            grid=(4096, 1, 1),
        )
        gpu = _fft(t, "aten::fft_irfft", "aten::_fft_c2r", [b, half], "c10::complex<float>", gpu)
    t.sync(t.now, gpu - t.now + 2)
    return t


def test_an_fft_is_no_elementwise_op_to_fuse() -> None:
    # Before: "Fuse 8 runs of elementwise ops (largest: aten::mul -> aten::_fft_c2r)", 52% of
    # the time. cuFFT's kernels are library calls Inductor does not fuse with the products
    # around them.
    result = _fft_convolution().analyse()
    ops = result.ops.set_index("name")
    assert ops.loc["aten::_fft_r2c", "category"] == "copy"  # no FLOPs modelled, no pointwise tag
    assert "fusion" not in {r["cause"] for r in result.recommendations}
    assert "elementwise" not in " ".join(r["title"] for r in result.recommendations)


def test_copies_next_to_elementwise_ops_are_still_fused() -> None:
    # The rule keeps what Inductor does fuse: x.clone() * 2 + 1 on 2**24 floats, three kernels.
    t = GpuTimeline()
    gpu = 0.0
    n = 1 << 24
    copy = "void at::native::vectorized_elementwise_kernel<4, at::native::direct_copy_kernel>()"
    for _ in range(3):
        gpu = one_kernel_op(t, "aten::clone", [[n], []], ["fp32", ""], copy, 60.0, gpu_at=gpu)
        gpu = one_kernel_op(t, "aten::mul", [[n], []], ["fp32", "Scalar"], _MUL, 60.0, gpu_at=gpu)
        gpu = one_kernel_op(
            t, "aten::add", [[n], [], []], ["fp32", "Scalar", "Scalar"], _MUL, 60.0, gpu_at=gpu
        )
    t.sync(t.now, gpu - t.now + 2)
    first = t.analyse().recommendations[0]
    assert first["cause"] == "fusion"
    assert "aten::clone" in first["title"] and "aten::mul" in first["title"]


def _decode(rows: int) -> GpuTimeline:
    """A decode step's projections: 8 GEMMs of [rows, 1024] x [1024, 1024] bf16, as cuBLAS runs
    them on the H200 (kv_cache_decode_bf16's kernel: 16 blocks of 384 threads)."""
    t = GpuTimeline()
    gpu = 0.0
    for _ in range(8):
        gpu = one_kernel_op(
            t,
            "aten::mm",
            [[rows, 1024], [1024, 1024]],
            ["bf16", "bf16"],
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
            5.5,
            host_us=12,
            gpu_at=gpu,
            grid=(16, 1, 1),
            block=(384, 1, 1),
            registers=168,
            shared_memory=164308,
        )
    t.sync(t.now, gpu - t.now + 2)
    return t


def test_a_decode_gemv_is_limited_by_reading_its_weights_not_by_tiles() -> None:
    # Before: "tile quantisation: M = 4 is not a multiple of 8", and "Pad aten::mm's odd
    # dimension". Four rows against a 1024 x 1024 weight: each weight read serves four rows.
    result = _decode(4).analyse()
    mm = result.ops[result.ops["name"] == "aten::mm"].iloc[0]
    assert mm["reason"] == "too little work"
    assert "reading its weights" in mm["why"] and "4 rows" in mm["why"]
    assert "Batching the requests" in mm["why"] and "1024 x 1024 weight (2 MiB)" in mm["why"]
    assert "tile quantisation" not in {r["cause"] for r in result.recommendations}
    first = result.recommendations[0]
    assert first["title"].startswith("Batch the requests")
    assert re.search(r"calls, [\d.]+ µs per kernel", first["evidence"]), first["evidence"]
    assert "more requests per step" in first["fix"]
    # 64 rows is a GEMM, not a GEMV: the rule keeps out of it.
    big = _decode(64).analyse().ops
    assert "reading its weights" not in big[big["name"] == "aten::mm"].iloc[0]["why"]


def _int_mm(kernel: str) -> GpuTimeline:
    t = GpuTimeline()
    end = one_kernel_op(
        t,
        "aten::_int_mm",
        [[8192, 8192], [8192, 8192]],
        ["int8", "int8"],
        kernel,
        18000.0,
        host_us=30,
        grid=(4096, 1, 1),
        block=(256, 1, 1),
        registers=128,
    )
    t.sync(t.now, end - t.now + 2)
    return t


def test_an_int8_matmul_far_under_its_roof_names_the_kernel_that_ran() -> None:
    # Before: "at 3% of its int8 roof: the trace does not show why".
    gemv_kernel = (
        "void cublasLt::gemmk1_kernel<int, int, 256, 5, false, false, false, false, false, "
        "false, cublasGemvTensorStridedBatched<signed char const> >(cublasGemmk1Params<int>)"
    )
    ops = _int_mm(gemv_kernel).analyse().ops
    row = ops[ops["name"] == "aten::_int_mm"].iloc[0]
    assert row["dtype"] == "int8" and row["roof"] == "int8" and row["roof_fraction"] < 0.1
    assert "cublasLt::gemmk1_kernel" in row["why"]
    assert "is not a tensor-core kernel" in row["why"]
    # A kernel whose name says tensor cores (xmma, IMMA): no such claim.
    tensor_cores = _int_mm("sm90_xmma_gemm_s8s8_s32_tn_n_tilesize128x128x128").analyse().ops
    why = tensor_cores[tensor_cores["name"] == "aten::_int_mm"].iloc[0]["why"]
    assert "tensor-core" not in why and "the trace does not show why" in why


def test_the_idle_of_a_one_kernel_cell_is_not_blamed_on_data_loading() -> None:
    # One 8192^3 bf16 matmul at 789 TFLOP/s (1.39 ms), the host in no torch op for 300 us
    # before it (the profiler starting, the cell's Python), timed 24% longer than its kernel.
    # Before: "host stall ... a DataLoader with num_workers > 0 and pin_memory=True", 18%.
    t = GpuTimeline()
    t.now = 300.0
    end = one_kernel_op(
        t,
        "aten::mm",
        [[8192, 8192], [8192, 8192]],
        ["bf16", "bf16"],
        "nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_TNN",
        1393.0,
        host_us=30,
        grid=(132, 1, 1),
        block=(384, 1, 1),
        registers=168,
        shared_memory=200000,
    )
    t.sync(t.now, end - t.now + 2)
    result = t.analyse(span_s=1393e-6 * 1.243)
    assert result.summary["idle_s"] > 0.15 * result.summary["span_s"]
    assert not [r for r in result.recommendations if r["bottleneck"] == "overhead"]
    assert "DataLoader" not in " ".join(r["detail"] for r in result.recommendations)


def test_host_work_before_the_first_launch_is_still_a_stall() -> None:
    # A batch made on the host (a 4 ms CPU op, then 2 ms of Python) before the step's one
    # kernel: that lead-in is the step's own work, and a DataLoader would take it off.
    t = GpuTimeline()
    t.op("aten::randn", [[], [], [], [], []], ["ScalarList", "", "", "", ""], 4000.0, start=0.0)
    t.now = 6000.0
    end = one_kernel_op(
        t,
        "aten::mm",
        [[4096, 4096], [4096, 4096]],
        ["bf16", "bf16"],
        "nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_TNN",
        200.0,
        host_us=30,
        grid=(132, 1, 1),
        block=(384, 1, 1),
        registers=168,
        shared_memory=200000,
    )
    t.sync(t.now, end - t.now + 2)
    result = t.analyse(span_s=6.3e-3)
    first = result.recommendations[0]
    assert first["cause"] == "host stall" and "aten::randn" in first["evidence"]
    assert first["saving_s"] > 5e-3  # the Python between the op and the launch counts too


def test_a_knee_at_the_largest_size_while_throughput_grows_lies_beyond() -> None:
    # A fixed 20 ms per step: throughput doubles with every doubling up to the last size.
    # Before: "Knee at size=4 ... best measured size=4".
    result = jupyter_brrr.sweep(lambda n: time.sleep(0.02), [1, 2, 4], warmup=0, repeat=3)
    assert result.knee is None and result.best == 4
    (note,) = [n for n in result.notes if "knee lies beyond" in n]
    assert "size=4" in note and "sweep larger sizes" in note
    lines = sweep_lines(result.to_dict())
    assert not any(line.startswith("Knee at") for line in lines)
    assert note in lines


def test_a_knee_inside_the_sizes_measured_is_still_given() -> None:
    # 20 ms per item: each size costs the same per item, so the knee is the first size. (At 3 ms
    # a loaded machine's oversleep, ~10 ms a call, made throughput grow with the size.)
    per_item = jupyter_brrr.sweep(lambda n: time.sleep(0.02 * n), [4, 8, 16], warmup=0, repeat=3)
    assert per_item.knee is not None
    assert not [n for n in per_item.notes if "knee lies beyond" in n]


def _gpu_sweep(fixed: float, per_item: float, sizes: list[int]) -> sweeps.SweepResult:
    """A GPU sweep's points as the magic records them (span, items, peak memory per size),
    analysed against the H200's 141 GB reachable."""
    rows = []
    for size in sizes:
        row = dict.fromkeys(sweeps.POINT_COLUMNS)
        span = 1e-3 * (1 + size / 64)
        row.update(
            size=size,
            status="ok",
            span_s=span,
            items=float(size),
            items_per_s=size / span,
            peak_memory_bytes=fixed + per_item * size,
            compute_s=1e-3,
            memory_s=0.0,
            busy_s=1e-3,
            idle_s=0.0,
        )
        rows.append(row)
    return sweeps.analyse_points(
        "batch", rows, device="NVIDIA H200", gpu=True, capacity_bytes=141e9
    )


def test_a_flat_memory_fit_predicts_no_largest_batch() -> None:
    # The held-out sweep: 3.85 GB + 895 B per item over batches of 8 to 64. Before: "Largest
    # batch that fits this GPU: about 162,533,394" (and the like for every GPU of the table).
    result = _gpu_sweep(3.85e9, 895.0, [8, 16, 32, 64])
    assert result.fit is not None and result.fit["per_item_bytes"] == pytest.approx(895, rel=1e-3)
    assert result.capacities[0]["this_gpu"]
    assert all(row["largest_size"] is None for row in result.capacities)
    (note,) = [n for n in result.notes if "fit is flat" in n]
    assert "895 B" in note and "3.85 GB" in note
    assert not any("Largest batch" in line for line in sweep_lines(result.to_dict()))


def test_the_largest_batch_is_extrapolated_only_so_far() -> None:
    # 1 GB + 10 MB per item, measured to 64: 141 GB fits about 14,000 on the H200, over 8x 64.
    far = _gpu_sweep(1e9, 10e6, [8, 16, 32, 64])
    assert all(
        row["largest_size"] is None or row["largest_size"] <= 8 * 64 for row in far.capacities
    )
    assert any("over 8x the largest measured (64)" in n for n in far.notes)
    # 1 GB + 1 GB per item: 80 GB fits 79, within 8x of 64: given.
    near = _gpu_sweep(1e9, 1e9, [8, 16, 32, 64])
    sizes = {row["device"]: row["largest_size"] for row in near.capacities}
    assert any(size and size > 64 for size in sizes.values())
    assert not [n for n in near.notes if "guess" in n or "flat" in n]


def test_a_first_run_outlier_is_a_warm_up_problem() -> None:
    # A one-run warm-up of a CPU cell whose first timed run still compiled: 0.95 s, then 10 ms.
    # Before: "The timed runs sat at two levels 9418% apart ... the median, 480 ms, lies between
    # them".
    times = [0.95, 0.90, 0.0100, 0.0101, 0.0102]
    assert warmup(times) == 2
    (found,) = findings(times)
    assert found.kind == "warmup"
    assert "The first timed 2 runs" in found.text and "warm up more (--warmup 3" in found.text
    assert "the settled runs' is 10.1 ms" in found.text
    assert "two levels" not in found.text
    assert warmup([0.95, 0.0100, 0.0101, 0.0102]) == 1
    # Runs that change level later, or alternate, are no warm-up.
    assert warmup([0.010, 0.010, 0.011, 0.030, 0.031, 0.030]) == 0
    assert warmup([0.030, 0.010, 0.031, 0.010, 0.030, 0.011]) == 0


def test_a_real_first_run_on_the_cpu_is_named_as_warm_up() -> None:
    # jupyter_brrr.profile with no warm-up of a function whose first call builds a cache.
    cache: dict[str, object] = {}

    def step() -> object:
        if "table" not in cache:
            time.sleep(0.3)  # a first call's set-up: a compilation, a file read
            cache["table"] = 1
        time.sleep(0.004)
        return cache["table"]

    report = jupyter_brrr.profile(step, warmup=0, repeat=5)
    timing = report.summary["timing"] or {}
    kinds = [f["kind"] for f in timing["findings"]]
    assert kinds[0] == "warmup", timing["findings"]


def test_the_stft_reflection_pad_joins_the_window_product_it_is_fused_into() -> None:
    # The H200's recorded STFT (bench/data/h200/fixes): Inductor folds the reflection pad into
    # the window's product, so the fusion advice counts pad -> mul as a run (before: only
    # abs -> abs, predicting 0.018 ms against the compile's 0.083 ms measured).
    trace = ROOT_DATA / "stft_magnitude.trace.json.gz"
    report = jupyter_brrr.load(trace)
    fusion = next(r for r in report.recommendations if r["cause"] == "fusion")
    names = [op["name"] for op in fusion["ops"]]
    assert names[:2] == ["aten::reflection_pad1d", "aten::mul"], names
    assert "aten::abs" in names and "aten::_fft_r2c" not in names
    # The pad's output is larger than its input by the border: the evidence says so.
    assert "on tensors of one size but for a pad's border" in fusion["evidence"], fusion
    chain = jupyter_brrr.load(ROOT_DATA / "elementwise_chain.trace.json.gz")
    plain = next(r for r in chain.recommendations if r["cause"] == "fusion")
    assert "on tensors of one size take" in plain["evidence"], plain["evidence"]
