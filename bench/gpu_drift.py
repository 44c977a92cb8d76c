"""Which of the GPU's speeds moves when GPU-bound time shifts between captures?

    python bench/gpu_drift.py [--seconds 30]

Three GPU-bound workloads, timed by CUDA events in turn (round robin, one call each) for
``--seconds``: a bf16 8192^2 x 4096 matmul (tensor cores), a 1 GiB copy (HBM) and a GPT-2 small
forward (both, plus ~200 launches). Prints, for every second, each workload's median relative to
its median over the whole run, with the SM and memory clocks and power the driver reported. If
all three shift together at a constant clock, something outside the process shares the GPU; if
only the copy moves, the memory; if only GPT-2, its launches (the host).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn


def timed(fn) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    src = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, norm_first=True)
    model = nn.Sequential(nn.TransformerEncoder(layer, 12), nn.Linear(768, 50257, bias=False))
    model = model.cuda().to(torch.bfloat16).eval()
    x = torch.randn(8, 1024, 768, device="cuda", dtype=torch.bfloat16)

    def gpt2() -> None:
        with torch.no_grad():
            model(x)

    work = {"matmul": lambda: a @ b, "copy": lambda: dst.copy_(src), "gpt2": gpt2}
    for fn in work.values():
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    rows: list[tuple[int, str, float]] = []
    sensors: dict[int, tuple[float, float, float]] = {}
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < args.seconds:
        second = int(elapsed)
        for name, fn in work.items():
            rows.append((second, name, timed(fn)))
        if second not in sensors:
            try:
                import pynvml

                handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
                mem_clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)
            except Exception:
                mem_clock = float("nan")
            sensors[second] = (
                torch.cuda.clock_rate(),
                mem_clock,
                torch.cuda.power_draw() / 1e3,
            )
    overall = {n: statistics.median([t for _, m, t in rows if m == n]) for n in work}
    print("ms over the run: " + ", ".join(f"{n} {overall[n]:.3f}" for n in work))
    print("second | " + " | ".join(work) + " | SM MHz | mem MHz | W")
    for second in sorted(sensors):
        cells = []
        for name in work:
            times = [t for s, m, t in rows if s == second and m == name]
            cells.append(f"{statistics.median(times) / overall[name]:.3f}" if times else "-")
        sm, mem, watts = sensors[second]
        print(f"{second:3d} | " + " | ".join(cells) + f" | {sm:.0f} | {mem:.0f} | {watts:.0f}")
    for name in work:
        times = sorted(t for _, m, t in rows if m == name)
        q = statistics.quantiles(times, n=20)
        print(
            f"{name}: {len(times)} calls, p5 {q[0] / overall[name]:.3f}, "
            f"p95 {q[-1] / overall[name]:.3f} of the median"
        )


if __name__ == "__main__":
    main()
