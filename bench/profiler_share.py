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
launch each), the same on a CPU tensor (no launch), a 20-layer Linear(64) MLP at batch 8.
"""

from __future__ import annotations

import argparse
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

    return {
        "pure Python (no op)": python,
        "sleep 200 us (no op)": sleep,
        "50 CUDA elementwise ops": elementwise(small),
        "50 CPU elementwise ops": elementwise(cpu),
        "20 x Linear(64) b8": linear,
    }


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
        f"{'share':>7s}  (PROFILER_HOST_SHARE {step_graph.PROFILER_HOST_SHARE:.2f} for torch's "
        "work, 0 for Python outside ops)"
    )
    for name in steps:
        outside = statistics.mean([before[name], after[name]])
        print(
            f"{name:26s} {before[name] * 1e6:9.1f} {inside[name] * 1e6:9.1f} "
            f"{after[name] * 1e6:9.1f} {inside[name] / outside:8.2f}x "
            f"{1 - outside / inside[name]:7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
