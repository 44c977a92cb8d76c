"""Why is one ResNet-50 step's host slower in one causal_check case than in another?

    python bench/dispatch_drift.py [--seconds 0.4] [--rounds 3]

In every H200 recording of ``bench/causal_check.py``, resnet50_b32_to_b64's before-step (fp32
NCHW ResNet-50 at batch 32, no_grad) runs 8.2-9.1 ms by CUDA events, host-bound, while
resnet50_b32_bf16_cl's before-step, the same code, runs 5.3 ms (GPU-bound: 4.96 ms of kernels).
The two cases differ in what alternates with the step (a batch-64 fp32 ResNet-50, or a batch-32
bf16 channels_last one) and in what ran before them (resnet50_b256_bf16_cl runs between).

This times the batch-32 fp32 step in rounds, alone and alternated with each partner, and in the
order causal_check runs them: per condition its CUDA-event time per step, its host time per step
(the time to enqueue one step with the GPU's queue empty: the host's own dispatch), the time of a
pure-Python loop (the CPU's speed), and the caching allocator's segments. Each condition builds
fresh models, as causal_check's cases do, and frees them after.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

import torch
import torchvision

Step = Callable[[], object]


def resnet(batch: int, fast: bool) -> Step:
    model = torchvision.models.resnet50().cuda().eval()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    if fast:
        model = model.to(dtype=torch.bfloat16, memory_format=torch.channels_last)
        x = x.to(dtype=torch.bfloat16, memory_format=torch.channels_last)

    def step() -> object:
        with torch.no_grad():
            return model(x)

    return step


def python_loop_s() -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(20000):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return best


def timed(step: Step, seconds: float) -> tuple[list[float], list[float]]:
    """CUDA-event times per step (5 steps back to back) and host enqueue times of one step."""
    events, hosts = [], []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        torch.cuda.synchronize()
        begin = time.perf_counter()
        step()
        hosts.append(time.perf_counter() - begin)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            step()
        end.record()
        end.synchronize()
        events.append(start.elapsed_time(end) * 1e-3 / 5)
    return events, hosts


def condition(name: str, partner: Callable[[], Step] | None, args: argparse.Namespace) -> None:
    step = resnet(32, False)
    other = partner() if partner else None
    for _ in range(3):
        step()
        if other:
            other()
    events, hosts, others = [], [], []
    for _ in range(args.rounds):
        e, h = timed(step, args.seconds)
        events += e
        hosts += h
        if other:
            others += timed(other, args.seconds)[0]
    loop = python_loop_s()
    segments = torch.cuda.memory_stats().get("segment.all.current", 0)
    partner_ms = f"{statistics.median(others) * 1e3:7.3f}" if others else "      -"
    print(
        f"{name:44s} {statistics.median(events) * 1e3:8.3f} {statistics.median(hosts) * 1e3:8.3f} "
        f"{min(hosts) * 1e3:8.3f} {partner_ms} {loop * 1e6:8.1f} {segments:9d}",
        flush=True,
    )
    del step, other
    gc.collect()
    torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=0.4, help="per side and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(
        f"{'b32 fp32 ResNet-50 step, condition':44s} {'CUDA ms':>8s} {'host ms':>8s} "
        f"{'host min':>8s} {'partner':>7s} {'loop µs':>8s} {'segments':>9s}"
    )
    condition("alone", None, args)
    condition("beside b32 bf16 channels_last", lambda: resnet(32, True), args)
    condition("beside b64 fp32", lambda: resnet(64, False), args)
    condition("alone again", None, args)
    # causal_check's order: the b256 case between them.
    big_before, big_after = resnet(256, False), resnet(256, True)
    for _ in range(5):
        big_before()
        big_after()
    torch.cuda.synchronize()
    del big_before, big_after
    gc.collect()
    torch.cuda.empty_cache()
    condition("alone, after b256 fp32 and bf16 ran", None, args)
    condition("beside b64 fp32, after b256", lambda: resnet(64, False), args)
    condition("beside b32 bf16 channels_last, after b256", lambda: resnet(32, True), args)


if __name__ == "__main__":
    main()
