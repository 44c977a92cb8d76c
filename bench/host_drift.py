"""Does launch-bound time move with the host CPU's own speed?

    python bench/host_drift.py [--seconds 60]

Launch-bound work on the H200 machine jumps between levels (bench/RESULTS.md, launch-bound
drift), and a CUDA graph's speed-up over it moves with them. This times, in rounds of about a
quarter of a second: a pure-Python loop (no torch), 200 dispatches of a small CPU torch op, and
a block of 50 launch-bound GPU calls (a 20-layer Linear(64, 64) MLP, CUDA events around the
block), and notes which CPU the process ran on. For the second half of the run the process is
pinned to one CPU. Prints each round relative to the run's median, so that one can see whether
the three move together (the CPU's speed) or only the GPU calls (the driver or the GPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from torch import nn


def python_loop() -> float:
    start = time.perf_counter()
    total = 0
    for i in range(20000):
        total += i * i
    return time.perf_counter() - start


def dispatch_loop(x: torch.Tensor) -> float:
    start = time.perf_counter()
    for _ in range(200):
        x.add_(1.0)
    return time.perf_counter() - start


def gpu_block(fn, calls: int = 50) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / calls


def current_cpu() -> int:
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[36])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)]).cuda()
    x = torch.randn(8, 64, device="cuda")
    small = torch.zeros(16)

    def mlp() -> None:
        with torch.no_grad():
            model(x)

    for _ in range(3):
        gpu_block(mlp)
    rounds: list[tuple[float, str, int, float, float, float]] = []
    start = time.perf_counter()
    pinned = False
    while (elapsed := time.perf_counter() - start) < args.seconds:
        if not pinned and elapsed > args.seconds / 2:
            cpus = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpus[len(cpus) // 2]})
            pinned = True
        rounds.append(
            (
                elapsed,
                "pinned" if pinned else "free",
                current_cpu(),
                python_loop(),
                dispatch_loop(small),
                gpu_block(mlp),
            )
        )
    medians = [statistics.median(r[k] for r in rounds) for k in (3, 4, 5)]
    print(
        f"{len(rounds)} rounds; medians: python loop {medians[0] * 1e3:.3f} ms, 200 dispatches "
        f"{medians[1] * 1e3:.3f} ms, MLP call {medians[2] * 1e3:.3f} ms (os cpus {os.cpu_count()})"
    )
    print("t s | mode | cpu | python | dispatch | MLP")
    step = max(1, len(rounds) // 60)
    for r in rounds[::step]:
        rel = [r[k] / medians[i] for i, k in enumerate((3, 4, 5))]
        print(f"{r[0]:5.1f} | {r[1]} | {r[2]:2d} | " + " | ".join(f"{v:.2f}" for v in rel))
    for mode in ("free", "pinned"):
        part = [r for r in rounds if r[1] == mode]
        if len(part) < 3:
            continue
        for i, (k, name) in enumerate(((3, "python"), (4, "dispatch"), (5, "MLP"))):
            values = [r[k] / medians[i] for r in part]
            q = statistics.quantiles(values, n=10)
            print(
                f"{mode} {name}: p10 {q[0]:.2f}, p50 {statistics.median(values):.2f}, p90 {q[-1]:.2f}"
            )
    # Do the GPU calls follow the host? Rank correlation of python-loop and MLP times.
    free = [r for r in rounds if r[1] == "free"]
    if len(free) > 5:
        import numpy as np

        a = np.argsort(np.argsort([r[3] for r in free]))
        b = np.argsort(np.argsort([r[5] for r in free]))
        c = np.argsort(np.argsort([r[4] for r in free]))
        print(
            f"rank correlation (free): python~MLP {np.corrcoef(a, b)[0, 1]:.2f}, "
            f"dispatch~MLP {np.corrcoef(c, b)[0, 1]:.2f}, python~dispatch {np.corrcoef(a, c)[0, 1]:.2f}"
        )


if __name__ == "__main__":
    main()
