"""Trace loading on the real traces in tests/data (copied from shared/traces), and bad files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from jupyter_brrr.trace import events
from jupyter_brrr.trace.events import TraceError, parse_trace, read_trace

DATA = Path(__file__).parent / "data"
TRACES = sorted(DATA.glob("*.json.gz"))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_every_trace_loads_and_links_kernels(path: Path) -> None:
    trace = read_trace(path)
    assert len(trace.ops) > 0
    assert (trace.ops["end_s"] >= trace.ops["start_s"]).all()
    assert trace.ops["start_s"].min() >= 0
    if len(trace.kernels):
        # Every kernel is tied to the op that launched it.
        assert (trace.kernels["op"] >= 0).all(), trace.kernels.loc[
            trace.kernels["op"] < 0, "name"
        ].head()
        launched_by = trace.ops.iloc[trace.kernels["op"]]
        # ... and that op was running when the launch happened, so it starts before the kernel.
        assert (
            launched_by["start_s"].to_numpy() <= trace.kernels["start_s"].to_numpy() + 1e-6
        ).all()


def test_cpu_only_trace_has_no_gpu_events() -> None:
    trace = read_trace(DATA / "cpu_only.json.gz")
    assert len(trace.kernels) == 0 and len(trace.copies) == 0
    assert len(trace.annotations) > 0


def test_rocm_trace_reads_hip_fields() -> None:
    trace = read_trace(DATA / "mi250_rocm_minitoy.json.gz")
    assert len(trace.kernels) == 14
    assert set(trace.copies["kind"]) == {"memcpy"}
    assert (trace.kernels["device"] == 2).all()
    assert set(trace.ops.iloc[trace.kernels["op"]]["name"]) >= {"aten::addmm"}


def test_nanosecond_trace_keeps_microsecond_times() -> None:
    # displayTimeUnit "ns" changes only how viewers display times: ts and dur stay microseconds.
    trace = read_trace(DATA / "v100_resnet_ns.json.gz")
    assert trace.metadata["displayTimeUnit"] == "ns"
    assert 1e-6 < trace.kernels["dur_s"].median() < 1e-3
    assert len(trace.kernels) == 4350


def test_old_trace_links_through_runtime_call() -> None:
    # In this A100 trace the kernels' External id is their correlation id, not the op's id.
    trace = read_trace(DATA / "a100_alexnet.json.gz")
    conv = trace.kernels[trace.kernels["name"].str.contains("scudnn")]
    assert set(trace.ops.iloc[conv["op"]]["name"]) == {"aten::cudnn_convolution"}


def test_kernels_without_runtime_call_link_by_external_id() -> None:
    # No runtime call carries the kernels' correlation ids: the External id names the op, and of
    # two ops with one id (a reused id), the later one launched the kernel.
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 5}
    kernel = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "dur": 2}
    doc = {
        "traceEvents": [
            {**op, "name": "aten::mm", "ts": 0, "args": {"External id": 7}},
            {**op, "name": "aten::add", "ts": 10, "args": {"External id": 8}},
            {**op, "name": "aten::mul", "ts": 20, "args": {"External id": 7}},
            {**kernel, "name": "k7", "ts": 30, "args": {"External id": 7, "correlation": 99}},
            {**kernel, "name": "k8", "ts": 40, "args": {"External id": 8}},
            {**kernel, "name": "k9", "ts": 50, "args": {"External id": 9}},
        ]
    }
    trace = parse_trace(doc)
    launched = dict(zip(trace.kernels["name"], trace.kernels["op"], strict=True))
    names = trace.ops["name"].tolist()
    assert names[launched["k7"]] == "aten::mul"
    assert names[launched["k8"]] == "aten::add"
    assert launched["k9"] == -1


def test_hierarchy_parents_enclose_children() -> None:
    trace = read_trace(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    ops = trace.ops
    child = ops[ops["parent"] >= 0]
    parent = ops.iloc[child["parent"]]
    assert (parent["start_s"].to_numpy() <= child["start_s"].to_numpy() + 1e-9).all()
    assert (parent["end_s"].to_numpy() >= child["end_s"].to_numpy() - 1e-9).all()
    assert (child["depth"].to_numpy() == parent["depth"].to_numpy() + 1).all()
    mlp = read_trace(DATA / "tiny_mlp_eager.json.gz").ops
    addmm_parents = mlp.loc[mlp["name"] == "aten::addmm", "parent"]
    assert (mlp.loc[addmm_parents, "name"] == "aten::linear").all()
    assert (ops.loc[ops["top"] == ops.index, "parent"] == -1).all()
    assert (ops["self_cpu_s"] <= ops["dur_s"] + 1e-12).all()


def test_chunked_read_matches_whole_read(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read_trace(DATA / "tiny_mlp_eager.json.gz")
    # Blocks of 4 kB cut the file into hundreds of pieces, many mid-event.
    monkeypatch.setattr(events, "_BLOCK_BYTES", 4096)
    chunked = read_trace(DATA / "tiny_mlp_eager.json.gz")
    for name in ("ops", "kernels", "runtime"):
        pd.testing.assert_frame_equal(getattr(whole, name), getattr(chunked, name))


def test_parse_compact_json_and_dict() -> None:
    with gzip.open(DATA / "coscos_eager.json.gz") as f:
        doc = json.loads(f.read())
    from_dict = parse_trace(doc)
    compact = parse_trace(json.dumps(doc, separators=(",", ":")))
    assert len(from_dict.kernels) == len(compact.kernels) == 6
    assert from_dict.devices[0]["name"] == "NVIDIA H200"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such file"):
        read_trace(tmp_path / "nope.json")


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text("hello, this is not JSON")
    with pytest.raises(TraceError, match=r"notes\.json: not a PyTorch profiler trace"):
        read_trace(path)


def test_json_that_is_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"learning_rate": 0.1}))
    with pytest.raises(TraceError, match="no timed events"):
        read_trace(path)


def test_truncated_json(tmp_path: Path) -> None:
    with gzip.open(DATA / "tiny_mlp_eager.json.gz") as f:
        raw = f.read()
    path = tmp_path / "cut.json"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(TraceError, match=r"cut\.json: .*truncated"):
        read_trace(path)


def test_truncated_gzip(tmp_path: Path) -> None:
    raw = (DATA / "tiny_mlp_eager.json.gz").read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(TraceError, match=r"cut\.json\.gz: the gzip stream is damaged or truncated"):
        read_trace(path)


def test_damaged_gzip(tmp_path: Path) -> None:
    raw = bytearray((DATA / "tiny_mlp_eager.json.gz").read_bytes())
    raw[len(raw) // 2 : len(raw) // 2 + 64] = bytes(64)  # a run of zeros inside the deflate data
    path = tmp_path / "damaged.json.gz"
    path.write_bytes(bytes(raw))
    with pytest.raises(TraceError, match=r"damaged\.json\.gz: the gzip stream is damaged"):
        read_trace(path)


def test_events_without_fields(tmp_path: Path) -> None:
    # Field-less events (no ts, no args) are skipped, not fatal, as long as some are usable.
    doc = {
        "traceEvents": [
            {"ph": "X", "name": "x"},
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 5, "dur": 2},
        ]
    }
    trace = parse_trace(doc)
    assert list(trace.ops["name"]) == ["aten::add"]
    # An explicit "args": null reads as no args.
    doc["traceEvents"].append(
        {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "ts": 9, "args": None}
    )
    assert list(parse_trace(doc).ops["name"]) == ["aten::add", "aten::mul"]
    with pytest.raises(TraceError, match="no timed events"):
        parse_trace({"traceEvents": [{"ph": "X", "name": "x"}]})


def test_empty_events(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no timed events"):
        parse_trace({"traceEvents": []})


def test_module_scope_from_a_live_trace_with_stacks(tmp_path: Path) -> None:
    # with_stack=True records "nn.Module: Linear_0" ranges; each op gets its innermost module.
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    with torch.profiler.profile(record_shapes=True, with_stack=True) as prof:
        model(torch.randn(2, 8))
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    ops = read_trace(tmp_path / "trace.json").ops
    module_of = dict(zip(ops["name"], ops["module"], strict=False))
    assert module_of["aten::addmm"] == "Linear_0"
    assert module_of["aten::relu"] == "ReLU_0"
    assert module_of["aten::randn"] == ""


def test_trace_with_only_the_profilers_own_events_is_empty_not_broken() -> None:
    # What a cell that ran no torch op records: the profiler's own range, and nothing else.
    doc = {
        "traceEvents": [
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 10, "dur": 5}
        ]
    }
    trace = parse_trace(doc)
    assert len(trace.ops) == 0 and len(trace.kernels) == 0


def test_kernels_keep_their_grid_and_what_collectives_move() -> None:
    trace = read_trace(DATA / "hta" / "nccl_a100_rank0_of2.json.gz")
    kernels = trace.kernels
    assert all(isinstance(g, list) and len(g) == 3 for g in kernels["grid"])
    nccl = kernels[kernels["name"].str.startswith("ncclKernel_AllReduce")].iloc[0]
    assert nccl["collective"] == "allreduce" and nccl["comm_dtype"] == "Float"
    assert nccl["group_size"] == 2 and nccl["in_nelems"] == nccl["out_nelems"] > 0
    assert kernels.loc[~kernels["name"].str.startswith("nccl"), "collective"].isna().all()


def test_annotations_keep_their_shapes() -> None:
    # Old NCCL traces record a collective's buffer on its "nccl:all_reduce" annotation only.
    annotations = read_trace(DATA / "hta" / "sampled_rank0_of128.json.gz").annotations
    nccl = annotations[
        (annotations["name"] == "nccl:all_reduce") & (annotations["where"] == "host")
    ]
    assert len(nccl) and all(isinstance(d, list) and len(d) == 1 for d in nccl["dims"])
    assert set(nccl["types"].map(tuple)) == {("float",)}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "msgspec"])
def test_missing_and_negative_durations_are_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compiled: bool
) -> None:
    # The times are converted in place (_build): a missing or negative duration becomes 0 s
    # on either reader, and the start is the same shift of ts.
    if not compiled:
        monkeypatch.setattr(events, "_scan", None)
    ops = [
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, **extra}
        for name, ts, extra in [
            ("aten::a", 100.0, {"dur": 10.0}),
            ("aten::b", 200.5, {}),
            ("aten::c", 300.0, {"dur": -4.0}),
        ]
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": ops}))
    trace = read_trace(path)
    got = trace.ops.set_index("name")
    assert got["dur_s"].to_dict() == pytest.approx({"aten::a": 1e-5, "aten::b": 0, "aten::c": 0})
    assert got["start_s"].to_dict() == pytest.approx(
        {"aten::a": 0.0, "aten::b": 100.5e-6, "aten::c": 200e-6}
    )
    assert (got["end_s"] == got["start_s"] + got["dur_s"]).all()
