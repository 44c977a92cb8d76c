"""Does launch overhead change after the first profiler session in a process?

    python bench/launch_drift.py

A launch-bound workload (20 x Linear(64, 64), batch 8) timed with CUDA events in blocks of 200
runs (median per block): six blocks, one torch.profiler session, six more blocks. If the
profiler leaves its CUDA activity hooks behind, every block after it is slower; if not, the
blocks differ by the machine's own drift only. Run it in a fresh process.
"""

from __future__ import annotations

import statistics

import torch
from torch import nn


def block_median(fn, runs: int = 200) -> float:
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)]).cuda()
    x = torch.randn(8, 64, device="cuda")

    def run() -> None:
        with torch.no_grad():
            model(x)

    before = [block_median(run) for _ in range(6)]
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, record_shapes=True):
        run()
        torch.cuda.synchronize()
    after = [block_median(run) for _ in range(6)]
    print("| blocks of 200 runs, ms per run (median) | before the profiler | after |")
    print("| --- | --- | --- |")
    print(
        f"| tiny MLP | {', '.join(f'{t:.3f}' for t in before)} | {', '.join(f'{t:.3f}' for t in after)} |"
    )
    ratio = statistics.median(after) / statistics.median(before)
    print(f"after / before: {ratio:.3f}")


if __name__ == "__main__":
    main()
