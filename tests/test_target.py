"""``--target``: reading a goal, the gap, Amdahl's answer for the top bottleneck, and what
scaling out would take (replicas, a tensor-parallel split, capacity)."""

from __future__ import annotations

import math
from typing import cast

import pandas as pd
import pytest
import torch

import jupyter_brrr
from jupyter_brrr.report.report import Report
from jupyter_brrr.report.target import (
    Goal,
    TargetError,
    interconnect,
    parse_goal,
    plan,
    tensor_parallel_bytes,
)
from jupyter_brrr.schema.report import Summary


def gpu_report(
    parts: dict[str, float],
    ops: dict[str, float],
    *,
    device: str = "NVIDIA H200",
    peak_memory: float = 40e9,
    capacity: float = 141 * 2**30,
) -> Report:
    """A GPU report with this split (seconds per part) and these ops (GPU seconds by name)."""
    span = sum(parts.values())
    summary = {
        "span_s": span,
        **{f"{p}_s": parts.get(p, 0.0) for p in ("compute", "memory", "other", "idle")},
        "busy_s": span - parts.get("idle", 0.0),
        "gpu": True,
        "device": device,
        "runs": {"warmup": 1, "timed": 5, "profiled": 1, "total": 7},
        "peak_memory_bytes": peak_memory,
        "memory_capacity_bytes": capacity,
    }
    table = pd.DataFrame(
        {
            "name": list(ops),
            "shapes": ["[]"] * len(ops),
            "dtypes": ["[]"] * len(ops),
            "calls": [1] * len(ops),
            "gpu_time_s": list(ops.values()),
        }
    )
    # The keys the plan reads, as a report written by an older version has only some.
    partial = cast(Summary, summary)
    return Report(summary=partial, ops=table, kernels=pd.DataFrame(), name="model")


def article() -> Report:
    """100 ms per run: attention 60 ms, the MLP 30 ms, 10 ms idle."""
    return gpu_report(
        {"compute": 0.060, "memory": 0.030, "idle": 0.010}, {"attention": 0.060, "mlp": 0.030}
    )


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("30ms", "time", 0.030),
        ("250us", "time", 250e-6),
        ("0.5 s", "time", 0.5),
        ("2000/s", "throughput", 2000.0),
        ("2000 img/s", "throughput", 2000.0),
        ("1.5e3 tokens/s", "throughput", 1500.0),
    ],
)
def test_goals_are_read(text: str, kind: str, value: float) -> None:
    goal = parse_goal(text, items=64 if kind == "throughput" else None)
    assert (goal.kind, goal.value) == (kind, pytest.approx(value))


@pytest.mark.parametrize("text", ["30", "fast", "30 parsecs", "0ms", "-3ms", "/s"])
def test_unreadable_goals_say_how_to_write_one(text: str) -> None:
    with pytest.raises(TargetError, match=r"30ms|positive"):
        parse_goal(text)


@pytest.mark.parametrize("text", ["1e999ms", "1e400s", "1e999/s", "1e999 img/s"])
def test_goals_beyond_a_double_are_refused(text: str) -> None:
    with pytest.raises(TargetError, match=r"beyond any (time|rate) a double holds"):
        parse_goal(text, items=64)


def test_items_must_be_positive() -> None:
    with pytest.raises(TargetError, match="--items"):
        parse_goal("2000/s", items=0)


def test_article_attention_cannot_go_below_40_ms() -> None:
    """Attention is 60 of 100 ms: with it at zero, 40 ms remain, so 30 ms is out of its reach."""
    result = plan(article(), "30ms")
    assert result["gap_s"] == pytest.approx(0.070) and not result["met"]
    attention = next(f for f in result["fixes"] if f["kind"] == "op")
    assert attention["part"] == "attention"
    assert attention["remains_s"] == pytest.approx(0.040)
    assert attention["closes"] is False
    assert attention["limit"] == pytest.approx(2.5)
    assert any(
        "Fixing attention (60% of the span) cannot close it" in line for line in result["lines"]
    )
    assert any("40 ms would remain" in line for line in result["lines"])


def test_article_attention_can_reach_50_ms_when_six_times_faster() -> None:
    result = plan(article(), "50ms")
    attention = next(f for f in result["fixes"] if f["kind"] == "op")
    assert attention["closes"] is True
    # 40 ms + 60 ms / N = 50 ms: N = 6.
    assert attention["needed_factor"] == pytest.approx(6.0)
    # One fix can do it; splitting across GPUs is the other road, said as such.
    assert any(line.startswith("Or, splitting one run across") for line in result["lines"])


def test_a_met_target_says_so() -> None:
    result = plan(article(), "0.2 s")
    assert result["met"] and result["lines"][0].startswith("Target met: 100 ms per run")


def test_throughput_target_needs_replicas() -> None:
    report = gpu_report({"compute": 0.008, "idle": 0.002}, {"aten::mm": 0.008})
    result = plan(report, parse_goal("20000 img/s", items=64))
    # 64 items per 10 ms is 6,400 img/s: 20,000 img/s needs ceil(3.125) = 4 replicas.
    assert result["rate"] == pytest.approx(6400)
    assert result["scale"]["replicas"] == 4 and result["scale"]["gpus"] == 4
    assert any("4 replicas at 6,400 img/s each" in line for line in result["lines"])


def test_throughput_without_items_counts_runs() -> None:
    result = plan(article(), "50/s")
    assert result["goal"]["span_s"] == pytest.approx(0.020)
    assert any("give --items N" in note for note in result["notes"])


def test_split_across_gpus_with_communication() -> None:
    """A GPU-bound run of 100 ms, target 30 ms: no single part can do it, the GPU work divides
    across GPUs and the idle time does not."""
    report = gpu_report(
        {"compute": 0.050, "memory": 0.045, "idle": 0.005},
        {"aten::mm": 0.05, "aten::add": 0.045},
    )
    result = plan(report, "30ms")
    scale = result["scale"]
    assert scale["kind"] == "split" and scale["link_bytes_per_s"] == 450e9
    # No weight matmul shapes here: no exchange, so 95 / n + 5 <= 30 from n = 4.
    assert scale["exchanged_bytes"] == 0 and scale["gpus"] == 4
    (line,) = [line for line in result["lines"] if line.startswith("Splitting one run across")]
    assert line.startswith(
        "Splitting one run across 4 GPUs (tensor parallel, an estimate) could reach it: "
        "28.8 ms = GPU work 95 ms / 4 + idle 5 ms (the host's share, not divided) + "
        "communication 0 s"
    )
    assert any("fits on one GPU" in line for line in result["lines"])


def test_host_overhead_does_not_divide_across_gpus() -> None:
    report = gpu_report({"compute": 0.010, "idle": 0.090}, {"aten::mm": 0.010})
    result = plan(report, "30ms")
    assert result["scale"]["gpus"] is None
    (line,) = [line for line in result["lines"] if "does not reach it" in line]
    assert "the idle time alone, 90 ms" in line and "CUDA graphs" in line


def test_capacity_beyond_one_gpu() -> None:
    report = gpu_report(
        {"compute": 0.050, "idle": 0.050}, {"aten::mm": 0.05}, peak_memory=200e9, capacity=80e9
    )
    result = plan(report, "10ms")
    assert result["capacity"]["gpus"] == 3
    assert any("split across at least 3 GPUs" in line for line in result["lines"])


def test_tensor_parallel_exchange_matches_megatron_on_gpt2(gpt2: Report) -> None:
    """GPT-2 small, batch 8 x 1024, bf16: Megatron all-reduces one [8192, 768] activation per
    pair of matmuls (2 per layer, 12 layers), and the LM head is half a pair."""
    activation = 8 * 1024 * 768 * 2
    expected = 12 * 2 * activation + activation / 2
    # The trace holds 2 iterations of the forward pass (tests/data/meta.json).
    assert tensor_parallel_bytes(gpt2.ops, per_run=2) == pytest.approx(expected)


def test_interconnect_figures_come_from_the_table() -> None:
    h200, a100, l4 = (
        interconnect(name) for name in ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4")
    )
    assert h200 is not None and h200[0] == 450e9
    assert a100 is not None and a100[0] == 300e9
    assert l4 is not None and "PCIe" in l4[1]
    assert interconnect("some unknown GPU") is None


def test_unknown_interconnect_says_the_communication_is_unknown() -> None:
    report = gpu_report(
        {"compute": 0.095, "idle": 0.005}, {"aten::mm": 0.095}, device="Mystery GPU"
    )
    result = plan(report, "30ms")
    assert any("no interconnect figure is known" in line for line in result["lines"])


def test_cpu_report_states_the_gap_without_scaling_out() -> None:
    x = torch.randn(64, 64)
    report = jupyter_brrr.profile(lambda: x @ x, warmup=1, repeat=3, target="1us")
    target = report.target
    assert target is not None
    assert target["goal"]["text"] == "1us" and not target["met"]
    assert target["scale"] is None
    assert any("no GPU work" in note for note in target["notes"])
    assert "target 1us:" in repr(report)
    assert "Target: 1us" in report._repr_mimebundle_()["text/html"]


def test_profile_refuses_a_bad_target_before_running() -> None:
    calls = []
    with pytest.raises(TargetError):
        jupyter_brrr.profile(lambda: calls.append(1), target="soon")
    assert calls == []


def test_set_target_returns_the_plan_and_keeps_it() -> None:
    report = article()
    result = report.set_target("30ms")
    assert report.target is result.to_dict() and not result.met
    assert repr(result).startswith("jupyter_brrr target: 30ms\n70 ms over the target")
    assert Report.from_json(report.to_json()).target == report.target
    assert math.isclose(Goal("2000/s", "throughput", 2000.0, items=64).span_s, 0.032)
