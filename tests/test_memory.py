"""What holds the peak (jupyter_brrr/memory.py), on the CPU with torch's own memory profiler:
sizes are hand counts of the tensors the code makes."""

from __future__ import annotations

import json

import pytest
import torch

from jupyter_brrr.capture import memory

FLOAT = 4


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024)
    )


def test_a_training_step_s_peak_is_its_state_and_adds_up() -> None:
    model = _mlp()
    optimizer = torch.optim.Adam(model.parameters())
    x = torch.randn(256, 256)

    def step() -> None:
        model(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    result = memory.memory_breakdown(step, warmup=1)
    params = sum(p.numel() for p in model.parameters()) * FLOAT
    parts = result.at_peak
    assert parts["parameters"] == params
    assert parts["gradients"] == params
    # Adam: exp_avg and exp_avg_sq per parameter, and a step count (one float) per parameter.
    assert 2 * params <= parts["optimizer_state"] <= 2 * params + 64
    # The parts add up to what the allocator counted (on the CPU: the run's increase).
    assert abs(result.unattributed_bytes) <= 0.02 * result.peak_bytes
    assert sum(parts.values()) + result.unattributed_bytes == pytest.approx(result.peak_bytes)
    assert any("On the CPU" in note for note in result.notes)
    assert set(result.timeline["category"]) == {*memory.CATEGORIES, "allocated"}


def test_a_forward_s_peak_is_activations_with_the_op_and_line_that_made_them() -> None:
    model = _mlp()
    x = torch.randn(2048, 256, requires_grad=True)

    def forward() -> torch.Tensor:
        hidden = model(x)
        return (hidden * hidden).sum()  # autograd keeps hidden for the backward

    result = memory.memory_breakdown(forward, warmup=0)
    activations = result.at_peak["activations"] + result.at_peak["autograd_detail"]
    # Kept for the backward: the first Linear's output (ReLU's input, its mask) and the second's.
    assert activations >= 2 * 2048 * 1024 * FLOAT
    top = result.largest.iloc[0]
    assert top["bytes"] == 2048 * 1024 * FLOAT
    assert top["op"] in ("aten::linear", "aten::relu", "aten::mul")
    assert str(top["line"]).startswith("test_memory.py:")
    doc = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert doc["schema"] == "jupyter_brrr.memory"
    assert len(doc["timeline"]["times_s"]) == len(doc["timeline"]["allocated"])
    assert "Peak memory on CPU" in repr(result)


def test_advice_separates_capacity_from_speed() -> None:
    def made(at_peak: dict[str, float], capacity: float | None) -> memory.MemoryBreakdown:
        return memory.MemoryBreakdown(
            device="GPU",
            gpu=True,
            peak_bytes=sum(at_peak.values()),
            peak_time_s=0.0,
            before_bytes=0.0,
            capacity_bytes=capacity,
            at_peak={c: at_peak.get(c, 0.0) for c in memory.CATEGORIES},
            unattributed_bytes=0.0,
        )

    activations = made({"activations": 30e9, "parameters": 2e9}, 24e9)
    text = " ".join(memory.advice(activations))
    assert "does not fit" in text and "checkpointing" in text and "bf16" in text
    assert "not how fast" in text
    state = made({"parameters": 20e9, "gradients": 20e9, "optimizer_state": 40e9}, 80e9 * 0.9)
    text = " ".join(memory.advice(state))
    assert "split the model and its state across GPUs" in text
    roomy = memory.advice(made({"activations": 1e9}, 80e9))
    assert len(roomy) == 1 and "room to grow" in roomy[0]


def test_code_that_allocates_nothing_gets_a_clear_error() -> None:
    with pytest.raises(ValueError, match="allocated no memory"):
        memory.memory_breakdown(lambda: None, warmup=0)


def test_the_capacity_advice_says_the_memory_is_what_the_process_can_reach() -> None:
    """The capacity a breakdown holds is what this process can reach (the device's memory less
    the CUDA context's and other processes'): 149 GB on an H200 whose device memory reads
    150 GB. The advice says which, so that the two never read as one figure twice."""
    from jupyter_brrr.capture.memory import MemoryBreakdown, advice

    result = MemoryBreakdown(
        device="NVIDIA H200",
        gpu=True,
        peak_bytes=4.56e9,
        peak_time_s=0.001,
        before_bytes=0.0,
        capacity_bytes=149.4e9,
        at_peak={"activations": 4.0e9, "parameters": 0.56e9},
        unattributed_bytes=0.0,
    )
    (line,) = advice(result)
    assert "of the 149 GB this process can reach on the GPU" in line, line
    assert "this GPU's" not in line
