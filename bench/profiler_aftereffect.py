"""Does code run slower after a torch.profiler capture has ended?

    python bench/profiler_aftereffect.py [--captures 4] [--seconds 1.5]
    TEARDOWN_CUPTI=1 python bench/profiler_aftereffect.py    # Kineto finalizes CUPTI at the end
    python bench/profiler_aftereffect.py --via brrr    # captures by jupyter_brrr.profile

Kineto leaves CUPTI initialised after a capture unless ``TEARDOWN_CUPTI=1`` (pytorch/pytorch
issue 144455): its callbacks may keep costing the host after the profiler has stopped. Every
timed run that follows a capture in one process (the A/B's rounds, causal_check's runs, the
user's own code after ``%%brrr``) would then measure a slower host. This times, in a fresh
process, a launch-bound step (a 20-layer Linear(64) MLP at batch 8: almost all host launch
cost) and a ResNet-50 batch-32 fp32 step (CUDA events, and the host's time to enqueue one step)
before any capture, then after each of ``--captures`` captures of the ResNet step (CPU and CUDA
activities, ``record_shapes=True``, as causal_check takes them), alternating the two steps in
rounds of ``--seconds`` each, and a pure-Python loop as the CPU's own speed. ``--via brrr``
captures with ``jupyter_brrr.profile`` instead, which asks for the teardown itself
(``jupyter_brrr/capture/cupti.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torchvision
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

Step = Callable[[], object]


def python_loop_s() -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(20000):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return best


def timed(step: Step, seconds: float, reps: int) -> tuple[float, float]:
    """Median CUDA-event time per step (``reps`` back to back) and median host enqueue time of
    one step with the GPU's queue empty."""
    events, hosts = [], []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        torch.cuda.synchronize()
        begin = time.perf_counter()
        step()
        hosts.append(time.perf_counter() - begin)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            step()
        end.record()
        end.synchronize()
        events.append(start.elapsed_time(end) * 1e-3 / reps)
    return statistics.median(events), statistics.median(hosts)


def capture(step: Step, via: str) -> None:
    if via == "brrr":
        import jupyter_brrr

        jupyter_brrr.profile(step)
        return
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    schedule = torch.profiler.schedule(wait=1, warmup=2, active=4, repeat=1)
    with torch.profiler.profile(
        activities=acts, record_shapes=True, schedule=schedule, on_trace_ready=lambda p: None
    ) as prof:
        for _ in range(7):
            step()
            prof.step()
    torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--captures", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--via", choices=("torch", "brrr"), default="torch")
    args = parser.parse_args()
    mlp = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)]).cuda()
    x_mlp = torch.randn(8, 64, device="cuda")
    resnet = torchvision.models.resnet50().cuda().eval()
    x_img = torch.randn(32, 3, 224, 224, device="cuda")

    def mlp_step() -> object:
        with torch.no_grad():
            return mlp(x_mlp)

    def resnet_step() -> object:
        with torch.no_grad():
            return resnet(x_img)

    for _ in range(5):
        mlp_step()
        resnet_step()
    torch.cuda.synchronize()
    print(
        f"torch {torch.__version__} on {torch.cuda.get_device_name()}; "
        f"TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI', '(unset)')}; captures by {args.via}"
    )
    print(
        f"{'after':14s} {'MLP ms':>8s} {'MLP host':>8s} {'R50 ms':>8s} {'R50 host':>8s} "
        f"{'loop µs':>8s}"
    )
    for index in range(args.captures + 1):
        rows = []
        for _ in range(2):  # two rounds each, alternating
            rows.append(
                (*timed(mlp_step, args.seconds / 2, 20), *timed(resnet_step, args.seconds / 2, 3))
            )
        mlp_ms, mlp_host, r50_ms, r50_host = (statistics.median(c) for c in zip(*rows, strict=True))
        label = "no capture" if index == 0 else f"{index} capture{'s' if index > 1 else ''}"
        print(
            f"{label:14s} {mlp_ms * 1e3:8.3f} {mlp_host * 1e3:8.3f} {r50_ms * 1e3:8.3f} "
            f"{r50_host * 1e3:8.3f} {python_loop_s() * 1e6:8.1f}",
            flush=True,
        )
        if index < args.captures:
            capture(resnet_step, args.via)


if __name__ == "__main__":
    main()
