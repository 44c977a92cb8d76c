"""How much slower does each kind of host work run inside a torch.profiler capture?

    PYTHONUNBUFFERED=1 python bench/profiler_share.py [--seconds 1.0]

The replay takes the profiler's cost out of a profiled step as a share of the host's time in
torch's ops and runtime calls (``analysis.step_graph.PROFILER_HOST_SHARE``), and leaves Python
that calls no op as it was. This measures both directly, in one fresh process: each kind of work
is timed by the host clock per step (the GPU synchronised after each batch of steps), outside a
capture, inside one (CPU and CUDA activities, ``record_shapes=True``: how jupyter_brrr and
bench/causal_check.py capture), and outside again (CUPTI torn down after the capture, as
jupyter_brrr asks: ``capture/cupti.py``). The share is 1 - outside / inside, printed beside the
constant. Kinds: a pure-Python loop, a sleep, 50 elementwise ops on a small CUDA tensor (a
launch each), the same on a CPU tensor (no launch), a 20-layer Linear(64) MLP at batch 8, the
same in bf16 (cuBLASLt's matmuls, launched through the driver API: what the difference costs is
``PROFILER_PER_DRIVER_LAUNCH_S`` a launch), and one cuDNN attention call (SDPA at 1x16x128x64 bf16: a library that makes driver calls the trace
does not show).

On a GPU it then measures the GPU's side: the time per kernel of 200 kernels that run back to
back (a CUDA graph's replay of elementwise kernels and of matmuls, small and large, and an eager
stream that the host keeps full), by CUDA events around them, outside a capture and inside one,
and the host's time in one launch of the small graph. CUPTI's
records of each kernel cost the GPU time too; the difference per kernel is what the replay
takes out of a profiled stream's chain (``analysis.step_graph.PROFILER_PER_KERNEL_S``), and the
launch's share inside a capture what it takes out of a graph launch's call
(``GRAPH_LAUNCH_SHARE``).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_brrr.analysis import step_graph
from jupyter_brrr.capture import cupti

Step = Callable[[], object]
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def kinds() -> dict[str, Step]:
    small = torch.randn(32, 32, device=DEVICE)
    cpu = torch.randn(32, 32)
    mlp = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(20)]).to(DEVICE)
    x = torch.randn(8, 64, device=DEVICE)
    # In bf16 the same layers' matmuls go through cuBLASLt, launched by the driver API.
    mlp_bf16 = copy.deepcopy(mlp).to(torch.bfloat16)
    x_bf16 = x.to(torch.bfloat16)

    def python() -> object:
        total = 0
        for i in range(2000):
            total += i * i
        return total

    def sleep() -> object:
        time.sleep(200e-6)
        return None

    def elementwise(t: torch.Tensor) -> Step:
        def step() -> object:
            y = t
            for _ in range(50):
                y = y * 1.0001
            return y

        return step

    def linear() -> object:
        with torch.no_grad():
            return mlp(x)

    def linear_bf16() -> object:
        with torch.no_grad():
            return mlp_bf16(x_bf16)

    q = torch.randn(1, 16, 128, 64, device=DEVICE, dtype=torch.bfloat16)

    def attention() -> object:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)

    return {
        "pure Python (no op)": python,
        "sleep 200 us (no op)": sleep,
        "50 CUDA elementwise ops": elementwise(small),
        "50 CPU elementwise ops": elementwise(cpu),
        "20 x Linear(64) b8": linear,
        "20 x Linear(64) b8 bf16": linear_bf16,
        "SDPA 1x16x128x64 bf16": attention,
    }


KERNELS = 200


def _graphed(work: Callable[[], object]) -> Callable[[], None]:
    """A CUDA graph of KERNELS calls of ``work`` (one kernel each), its replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            work()  # warm-up on the capture stream (cuBLAS's workspace, say)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(KERNELS):
            work()
    return graph.replay


def gpu_chains() -> dict[str, Step]:
    """Work of KERNELS kernels that run back to back on one stream."""
    tiny, larger = torch.randn(1024, device="cuda"), torch.randn(4 << 20, device="cuda")
    a = torch.randn(8, 64, device="cuda")
    w = torch.randn(64, 64, device="cuda")
    big_a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    out, big_out = torch.empty(8, 64, device="cuda"), torch.empty_like(big_a)

    def eager() -> None:
        for _ in range(KERNELS):
            larger.mul_(1.0)

    return {
        "graph, mul_ of 1k floats": _graphed(lambda: tiny.mul_(1.0)),
        "graph, mul_ of 4M floats": _graphed(lambda: larger.mul_(1.0)),
        "graph, mm 8x64x64 fp32": _graphed(lambda: torch.mm(a, w, out=out)),
        "graph, mm 2048^3 bf16": _graphed(lambda: torch.mm(big_a, big_a, out=big_out)),
        "eager, mul_ of 4M floats": eager,
    }


def launch_call_s(replay: Step, seconds: float) -> float:
    """The host's time in one graph launch (``replay()``), the GPU idle before each."""
    times = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        torch.cuda.synchronize()
        begin = time.perf_counter()
        replay()
        times.append(time.perf_counter() - begin)
    torch.cuda.synchronize()
    return statistics.median(times)


def per_kernel_s(step: Step, seconds: float) -> float:
    """The median GPU time per kernel of ``step``, by CUDA events around each run."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        # A sleeping kernel first, so that the host has queued all of the chain before it runs.
        torch.cuda._sleep(20_000_000)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / KERNELS)
    return statistics.median(times)


def per_step_s(step: Step, seconds: float, batch: int = 20) -> float:
    """The median host time per step over batches of ``batch`` steps, for ``seconds``."""
    for _ in range(3):
        step()
    _sync()
    times = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        begin = time.perf_counter()
        for _ in range(batch):
            step()
        _sync()
        times.append((time.perf_counter() - begin) / batch)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per kind and condition")
    args = parser.parse_args()
    cupti.ask_teardown(torch)
    steps = kinds()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    before = {name: per_step_s(step, args.seconds) for name, step in steps.items()}
    with torch.profiler.profile(activities=activities, record_shapes=True):
        inside = {name: per_step_s(step, args.seconds) for name, step in steps.items()}
    after = {name: per_step_s(step, args.seconds) for name, step in steps.items()}
    device = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU"
    print(f"torch {torch.__version__} on {device}; the host time per step, microseconds")
    print(
        f"{'work':26s} {'outside':>9s} {'inside':>9s} {'after':>9s} {'slowdown':>9s} "
        f"{'share':>7s} {'inside - outside':>17s}  (PROFILER_HOST_SHARE {step_graph.PROFILER_HOST_SHARE:.2f} for torch's "
        "work, 0 for Python outside ops)"
    )
    for name in steps:
        outside = statistics.mean([before[name], after[name]])
        print(
            f"{name:26s} {before[name] * 1e6:9.1f} {inside[name] * 1e6:9.1f} "
            f"{after[name] * 1e6:9.1f} {inside[name] / outside:8.2f}x "
            f"{1 - outside / inside[name]:7.2f} {(inside[name] - outside) * 1e6:17.1f}"
        )
    if DEVICE != "cuda":
        return 0
    chains = gpu_chains()
    gpu_before = {name: per_kernel_s(step, args.seconds) for name, step in chains.items()}
    with torch.profiler.profile(activities=activities, record_shapes=True):
        gpu_inside = {name: per_kernel_s(step, args.seconds) for name, step in chains.items()}
    gpu_after = {name: per_kernel_s(step, args.seconds) for name, step in chains.items()}
    launch = chains["graph, mul_ of 1k floats"]
    launch_before = launch_call_s(launch, args.seconds)
    with torch.profiler.profile(activities=activities, record_shapes=True):
        launch_inside = launch_call_s(launch, args.seconds)
    launch_after = launch_call_s(launch, args.seconds)
    print(
        f"\nthe GPU's time per kernel of {KERNELS} back to back, by CUDA events, microseconds "
        f"(PROFILER_PER_KERNEL_S {step_graph.PROFILER_PER_KERNEL_S * 1e6:.3f})"
    )
    print(f"{'chain':30s} {'outside':>9s} {'inside':>9s} {'after':>9s} {'inside - outside':>17s}")
    for name in chains:
        outside = statistics.mean([gpu_before[name], gpu_after[name]])
        print(
            f"{name:30s} {gpu_before[name] * 1e6:9.3f} {gpu_inside[name] * 1e6:9.3f} "
            f"{gpu_after[name] * 1e6:9.3f} {(gpu_inside[name] - outside) * 1e6:17.3f}"
        )
    outside = statistics.mean([launch_before, launch_after])
    print(
        f"\none graph launch of {KERNELS} kernels, the host's time in the call, microseconds: "
        f"outside {launch_before * 1e6:.1f}, inside {launch_inside * 1e6:.1f}, after "
        f"{launch_after * 1e6:.1f}: {launch_inside / outside:.2f}x, "
        f"{(launch_inside - outside) / KERNELS * 1e6:.2f} µs a kernel, share "
        f"{1 - outside / launch_inside:.3f} (GRAPH_LAUNCH_SHARE {step_graph.GRAPH_LAUNCH_SHARE:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
