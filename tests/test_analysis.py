"""The analysis on the real H200 traces, against the CUDA-event ground truth in meta.json."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from checked import load_report

import jupyter_brrr
import jupyter_brrr.costs.peaks
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.trace import intervals
from jupyter_brrr.trace.events import parse_trace

DATA = Path(__file__).parent / "data"
META = json.loads((DATA / "meta.json").read_text())
H200_TRACES = [k for k in META if isinstance(META[k], dict)]


@pytest.fixture(scope="module")
def reports() -> dict[str, jupyter_brrr.Report]:
    return {name: load_report(DATA / f"{name}.json.gz") for name in H200_TRACES}


@pytest.mark.parametrize("name", H200_TRACES)
def test_parts_sum_to_span_and_busy_never_exceeds_truth(reports: dict, name: str) -> None:
    s = reports[name].summary
    parts = s["compute_s"] + s["memory_s"] + s["other_s"] + s["idle_s"]
    assert parts == pytest.approx(s["span_s"], rel=1e-9)
    assert s["compute_s"] + s["memory_s"] + s["other_s"] == pytest.approx(s["busy_s"], rel=1e-9)
    # Kernel busy time per iteration cannot exceed the CUDA-event time of an iteration.
    busy_per_iter = s["busy_s"] / META[name]["iters"]
    assert busy_per_iter <= META[name]["event_median_ms_per_iter"] * 1e-3
    assert s["device"] == "NVIDIA H200"
    assert "datasheet" in s["peaks"]["source"].lower() or s["peaks"]["measured"]


def test_coscos_busy_matches_cuda_events(reports: dict) -> None:
    s = reports["coscos_eager"].summary
    busy_per_iter = s["busy_s"] / META["coscos_eager"]["iters"]
    truth = META["coscos_eager"]["event_median_ms_per_iter"] * 1e-3
    assert busy_per_iter == pytest.approx(truth, rel=0.10)


def test_coscos_kernels_are_memory_bound(reports: dict) -> None:
    report = reports["coscos_eager"]
    assert set(report.kernels["bound"]) == {"memory"}
    cos = report.ops[report.ops["name"] == "aten::cos"].iloc[0]
    # 2**26 float32 values read and written: 4 bytes each way, 1 FLOP each.
    assert cos["flops"] / cos["calls"] == 2**26
    assert cos["bytes"] / cos["calls"] == 2 * 4 * 2**26
    assert cos["bound"] == "memory"
    assert 0.5 < cos["roof_fraction"] <= 1.05
    assert report.summary["memory_s"] / report.summary["busy_s"] > 0.99


def test_tiny_mlp_is_overhead_bound(reports: dict) -> None:
    report = reports["tiny_mlp_eager"]
    s = report.summary
    assert s["idle_s"] / s["span_s"] >= 0.80
    assert report.recommendations[0]["bottleneck"] == "overhead"
    assert "CUDA Graph" in report.recommendations[0]["detail"]
    addmm = report.ops[report.ops["name"] == "aten::addmm"]
    assert set(addmm["bound"]) == {"overhead"}


def test_gpt2_gemms_are_compute_bound_with_exact_flops(reports: dict) -> None:
    report = reports["gpt2_fwd_bf16_b8_s1024"]
    gemms = report.ops[report.ops["name"].isin(["aten::addmm", "aten::mm", "aten::bmm"])]
    assert len(gemms) > 0
    for row in gemms.itertuples():
        dims = json.loads(row.shapes)
        if row.name == "aten::addmm":
            (m, k), (_, n) = dims[1], dims[2]
        else:
            (m, k), (_, n) = dims[0], dims[1]
        per_call = row.flops / row.calls
        assert per_call == pytest.approx(2 * m * n * k, rel=0.01), row
    big = gemms[gemms["gpu_time_s"] > 50e-6]
    assert len(big) > 0 and set(big["bound"]) == {"compute"}
    assert report.summary["compute_s"] > 0.3 * report.summary["busy_s"]


def test_compiled_trace_runs_fewer_kernels(reports: dict) -> None:
    eager, compiled = reports["coscos_eager"], reports["coscos_compiled"]
    assert len(compiled.kernels) < len(eager.kernels)
    assert compiled.summary["busy_s"] < eager.summary["busy_s"]


def test_ops_table_has_the_public_columns(reports: dict) -> None:
    ops = reports["resnet50_train_amp_b64"].ops
    for column in ("name", "calls", "gpu_time_s", "flops", "bytes", "intensity", "bound"):
        assert column in ops.columns
    # Self GPU times add up to the kernel time: nothing counted twice.
    kernels = reports["resnet50_train_amp_b64"].kernels
    assert ops["gpu_time_s"].sum() == pytest.approx(kernels["dur_s"].sum(), rel=1e-9)
    assert (ops["total_gpu_time_s"] >= ops["gpu_time_s"] - 1e-12).all()
    conv = ops[ops["name"].isin(["aten::cudnn_convolution", "aten::convolution_backward"])]
    assert conv["flops"].notna().all()


def test_kernels_table(reports: dict) -> None:
    kernels = reports["gpt2_fwd_bf16_b8_s1024"].kernels
    for column in ("name", "op", "stream", "start_s", "dur_s", "bound"):
        assert column in kernels.columns
    assert kernels["start_s"].min() == 0
    assert (kernels["op"] != "").all()


def test_rocm_trace_without_known_peaks_says_so() -> None:
    report = load_report(DATA / "mi250_rocm_minitoy.json.gz")
    assert report.summary["gpu"]
    assert any("peak" in note.lower() for note in report.notes)
    with_device = load_report(
        DATA / "mi250_rocm_minitoy.json.gz", device="AMD Instinct MI250X / MI250"
    )
    assert with_device.summary["peaks"] is not None
    assert set(with_device.kernels["bound"]) - {"other"}


def test_cpu_only_trace() -> None:
    report = load_report(DATA / "cpu_only.json.gz")
    s = report.summary
    assert s["device"] == "CPU" and not s["gpu"]
    assert s["busy_s"] > 0
    assert any("No GPU work" in note for note in report.notes)
    assert report.recommendations == []


def test_interval_union_counts_overlap_once() -> None:
    start = np.array([0.0, 1.0, 5.0, 5.5])
    end = np.array([2.0, 3.0, 6.0, 5.7])
    assert intervals.union_length(start, end) == pytest.approx(4.0)
    assert list(intervals.gaps(start, end)) == [2.0]


def test_overlapping_streams_are_not_double_counted() -> None:
    kernels = pd.DataFrame(
        {
            "start_s": [0.0, 0.5, 2.0],
            "dur_s": [1.0, 1.0, 1.0],
            "bound": ["compute", "memory", "memory"],
        }
    )
    split = analysis.split_by_bound(kernels, True, pd.DataFrame())
    assert split["busy_s"] == pytest.approx(2.5)
    assert split["compute_s"] == pytest.approx(1.0)
    assert split["memory_s"] == pytest.approx(1.5)


def test_amdahl() -> None:
    assert analysis.amdahl(0.6, float("inf")) == pytest.approx(2.5)
    assert analysis.amdahl(0.5, 2) == pytest.approx(1 / 0.75)
    report = load_report(DATA / "tiny_mlp_eager.json.gz")
    # Amdahl's law on the span (report.what_if() replays the step's dependencies instead).
    table = analysis.what_if(report.summary, report.ops)
    idle = table[table["part"] == "idle"].iloc[0]
    share = report.summary["idle_s"] / report.summary["span_s"]
    assert idle["limit"] == pytest.approx(1 / (1 - share))
    assert idle["speedup_at_2x"] == pytest.approx(1 / ((1 - share) + share / 2))


def test_kernels_without_any_launching_op() -> None:
    # A CUDA graph replay launches its kernels from cudaGraphLaunch, with no aten op around it.
    with gzip.open(DATA / "coscos_eager.json.gz") as f:
        doc = json.loads(f.read())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "cpu_op"]
    trace = parse_trace(doc)
    assert len(trace.ops) == 0 and len(trace.kernels) == 6
    peaks, _ = jupyter_brrr.costs.peaks.peaks_for("NVIDIA H200", measure_if_unknown=False)
    result = analysis.analyze(trace, peaks)
    # No FLOP or byte count without an op; ATen's elementwise kernels are memory-bound by kind,
    # which their names say, and the labels say that is where the verdict comes from.
    assert set(result.kernels["category"]) == {"elementwise (by kernel name)"}
    assert set(result.kernels["bound"]) == {"memory"}
    assert result.kernels["flops"].isna().all() and result.kernels["bytes"].isna().all()
    assert result.summary["memory_s"] == pytest.approx(result.summary["busy_s"])
    assert result.summary["modelled_share"] == 0.0


def test_device_properties_are_those_of_the_gpu_the_kernels_ran_on(tmp_path: Path) -> None:
    # A machine whose first listed device is another GPU (say, a display card): the name, the
    # memory capacity and the peaks must all describe the H200 the kernels ran on.
    with gzip.open(DATA / "coscos_eager.json.gz") as f:
        doc = json.load(f)
    h200 = doc["deviceProperties"][0]
    other = {**h200, "id": 1, "name": "NVIDIA T400", "totalGlobalMem": 2 << 30, "numSms": 6}
    doc["deviceProperties"] = [other, h200]
    path = tmp_path / "two_gpus.json"
    path.write_text(json.dumps(doc))
    report = load_report(path)
    assert report.summary["device"] == "NVIDIA H200"
    assert report.summary["memory_capacity_bytes"] == h200["totalGlobalMem"]
    assert report.summary["peaks"] is not None
    assert "H200" in report.summary["peaks"]["device"]


# --- cost-model coverage -------------------------------------------------------------------------

ZOO = DATA / "zoo"
ZOO_TRACES = sorted(p.name.removesuffix(".json.gz") for p in ZOO.glob("*.json.gz"))
GRAPH_REPLAYS = {"tiny_mlp_reduce_overhead"}  # a CUDA graph replay: no shapes in the trace


@pytest.fixture(scope="module")
def zoo() -> dict[str, jupyter_brrr.Report]:
    return {name: load_report(ZOO / f"{name}.json.gz") for name in ZOO_TRACES}


@pytest.mark.parametrize("name", sorted(set(ZOO_TRACES) - GRAPH_REPLAYS))
def test_zoo_models_have_a_cost_model_for_their_gpu_time(zoo: dict, name: str) -> None:
    report = zoo[name]
    s = report.summary
    assert s["modelled_share"] >= 0.97, s["unmodelled_ops"]
    ops = report.ops
    share = ops["gpu_time_s"] / ops["gpu_time_s"].sum()
    significant = ops[share >= 0.005]
    assert significant["flops"].notna().all() and significant["bytes"].notna().all()
    assert set(significant["cost_model"]) <= {"formula", "shapes", "estimate"}
    # The share is that of the GPU events owned by an op with a model (its memsets do none of
    # its work: no FLOPs, category "memset").
    kernels = report.kernels
    owned = kernels["flops"].notna() | kernels["category"].isin(["communication", "memset"])
    assert s["modelled_share"] == pytest.approx(
        kernels.loc[owned, "dur_s"].sum() / kernels["dur_s"].sum()
    )
    assert not any("cost model" in note for note in report.notes)


def test_each_kernel_is_counted_once_by_the_outermost_op_that_ran_it() -> None:
    # native_batch_norm launches its kernels and, inside it, a copy_ launches one more: the
    # batch norm owns both. aten::batch_norm above it (a wrapper) owns nothing.
    report = load_report(DATA / "resnet50_train_amp_b64.json.gz")
    ops = report.ops
    norms = ops[ops["name"] == "aten::native_batch_norm"]
    assert len(norms) and norms["flops"].notna().all() and (norms["gpu_time_s"] > 0).all()
    kernels = report.kernels
    in_norm = kernels["op"] == "aten::native_batch_norm"
    assert in_norm.any() and kernels.loc[in_norm, "flops"].notna().all()
    wrappers = ops[ops["name"].isin(["aten::batch_norm", "aten::_batch_norm_impl_index"])]
    assert wrappers["flops"].isna().all() and (wrappers["gpu_time_s"] == 0).all()
    assert ops.loc[ops["name"] == "aten::copy_", "gpu_time_s"].sum() < kernels["dur_s"].sum()
    # The kernels' shares of the ops' costs add up to the ops' costs: nothing counted twice.
    assert kernels["flops"].sum() == pytest.approx(ops["flops"].sum())
    assert kernels["bytes"].sum() == pytest.approx(ops["bytes"].sum())
    assert report.summary["modelled_share"] is not None
    assert report.summary["modelled_share"] >= 0.97


def test_wrappers_leave_the_cost_to_the_op_that_ran() -> None:
    report = load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    ops = report.ops
    assert ops.loc[ops["name"] == "aten::linear", "flops"].isna().all()
    assert ops.loc[ops["name"] == "aten::addmm", "flops"].notna().all()
    assert report.summary["modelled_share"] is not None
    assert report.summary["modelled_share"] >= 0.99


def test_a_trace_without_shapes_says_so_and_how_to_record_them() -> None:
    report = load_report(DATA / "v100_resnet_ns.json.gz")
    assert report.summary["modelled_share"] == 0.0
    (note,) = [n for n in report.notes if "no input shapes" in n]
    assert "record_shapes=True" in note
    assert not any("cost model;" in n for n in report.notes)  # one note says why, not two
    # Its convolution and GEMM kernels are still named for what they are, marked as such.
    categories = set(report.kernels["category"])
    assert {"conv (by kernel name)", "elementwise (by kernel name)"} <= categories


def test_a_cuda_graph_replay_says_why_it_has_no_costs(zoo: dict) -> None:
    report = zoo["tiny_mlp_reduce_overhead"]
    s = report.summary
    assert s["modelled_share"] < 0.05
    assert s["unmodelled_ops"][0]["name"].startswith("Torch-Compiled Region")
    assert any("CUDA graph" in n and "max-autotune-no-cudagraphs" in n for n in report.notes)
    assert any("Torch-Compiled Region" in n and "cost model" in n for n in report.notes)
    kernels = report.kernels.set_index("name")
    triton = kernels.loc["triton_poi_fused_addmm_relu_0"]
    assert set(triton["category"]) == {"elementwise (by kernel name)"}
    assert set(triton["bound"]) == {"memory"}
    gemm = kernels[kernels.index.str.contains("gemmSN")]
    assert set(gemm["category"]) == {"matmul (by kernel name)"}
    assert set(gemm["bound"]) == {"other"}  # a GEMM's bound is not in its name


def test_estimates_are_labelled(zoo: dict) -> None:
    # AdamW over 77 tensors: its lists' shapes are not recorded; sized from the kernels.
    report = zoo["gpt_train_adamw"]
    ops = report.ops
    foreach = ops[ops["name"].str.startswith("aten::_foreach_") & (ops["gpu_time_s"] > 0)]
    assert len(foreach) == 7  # the foreach ops of one AdamW step
    assert (foreach["cost_model"] == "estimate").all() and foreach["bytes"].notna().all()
    assert report.summary["estimated_share"] > 0.1
    assert any("estimates" in n and "30 tensors" in n for n in report.notes)
    flex = zoo["flex_attention_bf16"]
    assert flex.summary["estimated_share"] == pytest.approx(1.0)
    assert any("flex attention" in n and "upper bound" in n for n in flex.notes)


def test_the_report_says_where_minimum_traffic_is_known_to_be_off(zoo: dict) -> None:
    (note,) = [n for n in zoo["lstm_train"].notes if "minimum traffic" in n]
    assert "cuDNN RNNs" in note and "L2" in note
    (note,) = [n for n in zoo["gpt_train_adamw"].notes if "minimum traffic" in n]
    assert "matrix products" in note


def test_split_has_a_communication_part_even_without_collectives(reports: dict) -> None:
    for report in reports.values():
        s = report.summary
        assert s["communication_s"] == 0.0 and s["communication_hidden_s"] == 0.0
        assert s["communication"] is None
        assert "communication" in report.split().index


# --- communication, the fifth part of the split -----------------------------------------------------


def _split_sums_to_span(summary: Mapping[str, Any]) -> None:
    parts = ("compute_s", "memory_s", "communication_s", "other_s", "idle_s")
    assert sum(summary[p] for p in parts) == pytest.approx(summary["span_s"], rel=1e-9)


def test_nccl_trace_shows_communication_as_its_own_part() -> None:
    report = load_report(DATA / "hta" / "nccl_a100_rank0_of2.json.gz")
    s = report.summary
    _split_sums_to_span(s)
    kernels = report.kernels
    comm = kernels[kernels["category"] == "communication"]
    assert len(comm) and comm["name"].str.startswith("ncclKernel_").all()
    # Exposed + hidden = the union of the collectives' kernels; exposed = where nothing else ran.
    start, end = comm["start_s"].to_numpy(), (comm["start_s"] + comm["dur_s"]).to_numpy()
    total = intervals.union_length(start, end)
    assert s["communication_s"] + s["communication_hidden_s"] == pytest.approx(total)
    rest = kernels[kernels["category"] != "communication"]
    everything = intervals.union_length(
        np.concatenate([start, rest["start_s"]]),
        np.concatenate([end, rest["start_s"] + rest["dur_s"]]),
    )
    working = intervals.union_length(rest["start_s"], rest["start_s"] + rest["dur_s"])
    assert s["communication_s"] == pytest.approx(everything - working)
    assert 0 < s["communication_s"] < total
    # Sizes from the kernels' own fields; two ranks: busbw = algbw for an all-reduce.
    info = s["communication"]
    assert info is not None
    assert info["backend"] == "nccl"
    assert info["link"]["bytes_per_s"] == 300e9 and "NVLink 3" in info["link"]["source"]
    rows = {(r["collective"], r["message_bytes"]): r for r in info["collectives"]}
    big = rows[("all_reduce", 6637568 * 4)]
    assert big["ranks"] == 2
    assert big["algbw_bytes_per_s"] == pytest.approx(
        big["message_bytes"] * big["calls"] / big["time_s"]
    )
    assert big["busbw_bytes_per_s"] == pytest.approx(big["algbw_bytes_per_s"])
    assert big["link_fraction"] == pytest.approx(big["busbw_bytes_per_s"] / 300e9)
    assert any(r["collective"] == "broadcast" for r in info["collectives"])
    # Collectives of known size count as modelled; this trace has no shapes for the rest.
    comm_share = comm["dur_s"].sum() / kernels["dur_s"].sum()
    assert s["modelled_share"] == pytest.approx(comm_share)
    assert any("record_shapes=True" in note for note in report.notes)


def test_collectives_of_a_128_rank_job_are_sized_from_their_ops_and_annotations() -> None:
    report = load_report(DATA / "hta" / "sampled_rank0_of128.json.gz")
    s = report.summary
    _split_sums_to_span(s)
    assert s["communication_s"] > 0
    assert s["communication"] is not None
    rows = s["communication"]["collectives"]
    kinds = {r["collective"] for r in rows}
    assert {"all_to_all", "all_gather", "all_reduce"} <= kinds
    a2a = next(
        r for r in rows if r["collective"] == "all_to_all" and r["message_bytes"] == 419430400
    )
    assert a2a["ranks"] == 128
    assert a2a["busbw_bytes_per_s"] == pytest.approx(a2a["algbw_bytes_per_s"] * 127 / 128)
    # DDP's all-reduce records no shapes on its op: its nccl:all_reduce annotation has them.
    assert all(r["message_bytes"] for r in rows)
    # 128 ranks span nodes: the GPU's own links do not decide, and the trace names no GPU.
    assert all(r["link_fraction"] is None for r in rows)


def test_gloo_ranks_wait_on_communication_and_the_straggler_computes() -> None:
    reports = [load_report(DATA / "ranks" / f"rank{r}_of2.step4.json.gz") for r in (0, 1)]
    for report in reports:
        s = report.summary
        _split_sums_to_span(s)
        info = s["communication"]
        assert info is not None
        assert info["backend"] == "gloo" and info["link"] is None
        (row,) = info["collectives"]
        assert row["collective"] == "all_reduce" and row["ranks"] == 2
        assert row["message_bytes"] == 4196352 * 4  # DDP's bucket, float
        assert row["algbw_bytes_per_s"] is None  # gloo reduces on the CPU: no GPU-time rate
        # gloo's copies to and from the host are communication, not host copies.
        kinds = set(report.kernels.loc[report.kernels["category"] == "communication", "kind"])
        assert kinds == {"memcpy"}
        assert s["modelled_share"] is not None and s["modelled_share"] > 0.97
        advice = [a for a in report.recommendations if a["bottleneck"] == "communication"]
        assert advice and "gloo" in advice[0]["detail"]
    rank0, rank1 = (r.summary for r in reports)
    # Rank 1 does twice the work: more compute, and rank 0 waits for it.
    assert rank1["compute_s"] > 1.4 * rank0["compute_s"]
    assert rank0["communication_s"] > rank1["communication_s"]
