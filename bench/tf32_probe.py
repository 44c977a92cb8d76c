"""Why the TF32 fix made the tour's launch-bound MLP slower on the H200 (issue 24).

    PYTHONUNBUFFERED=1 python bench/tf32_probe.py [--calls 2000] [--rounds 7]
    python bench/tf32_probe.py --cpu-smoke    # the host-side figures only: the script runs through

On the H200 the Try of TF32 on the tour's cell 4 (20 ``nn.Linear(64, 64)`` on an [8, 64] input,
float32) measured 0.72x, 0.175 ms slower per call, where the replay predicted the ~1 us its
matmuls could gain. Until this session the variant set TF32's flags (``torch.backends``) and put
them back around every call; it now sets them once around each timed block
(``Variant.held``). This script separates the suspects, each timed with CUDA events over
``--calls`` calls back to back, interleaved over ``--rounds`` rounds (the median per call):

- ``eager``: TF32 off (the user's flags, here torch's defaults);
- ``tf32 set once``: TF32 allowed around the block (``variants.tf32_allowed``), as the variant
  now runs;
- ``tf32 per call``: allowed and put back around each call, as the variant ran before;
- ``flags per call, tf32 off``: the same per-call setting with the block's flags off, the cost
  of the setting alone.

Then, per call: the host's cost of setting and putting back the flags (legacy ``allow_tf32`` and
torch 2.9's ``fp32_precision``, in us), and the kernels one call launches with TF32 off and on
(``torch.profiler``: names and count; cuBLAS may pick a split-K kernel plus a reduction for TF32
on tiny GEMMs, which a launch-bound step pays as launches). Last, the A/B's own Try
(``jupyter_brrr.compare(step, variants="tf32")``).

What to read: if ``tf32 set once`` is about ``eager`` and ``tf32 per call`` is slower, the
slowdown was the per-call flags, and the A/B's speed-up is now about 1.0x. If ``tf32 set once``
is slower too and TF32 launches more kernels per call, the slowdown is cuBLAS's TF32 kernels
for these shapes (the replay cannot predict kernels that appear with a change: it should say
so for a launch-bound step).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from jupyter_brrr.actions.variants import tf32_allowed


def host_cost_us(setter, n: int = 20_000) -> float:
    start = time.perf_counter()
    for _ in range(n):
        setter()
    return (time.perf_counter() - start) / n * 1e6


def legacy_flip() -> None:
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    saved = (matmul.allow_tf32, cudnn.allow_tf32, torch.get_float32_matmul_precision())
    matmul.allow_tf32, cudnn.allow_tf32 = True, True
    torch.set_float32_matmul_precision("high")
    matmul.allow_tf32, cudnn.allow_tf32 = saved[0], saved[1]
    torch.set_float32_matmul_precision(saved[2])


def current_flip() -> None:
    with tf32_allowed():
        pass


def kernels_of(step, device: str) -> Counter:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    step()
    with profile(activities=activities) as prof:
        step()
        if device == "cuda":
            torch.cuda.synchronize()
    return Counter(
        e.name
        for e in prof.events()
        if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cpu-smoke", action="store_true")
    args = parser.parse_args()
    device = "cpu" if args.cpu_smoke or not torch.cuda.is_available() else "cuda"
    print(f"torch {torch.__version__}, {device}", flush=True)

    print(
        f"host cost of setting and putting back TF32's flags: legacy {host_cost_us(legacy_flip):.2f} us, "
        f"as the variant sets them (tf32_allowed) {host_cost_us(current_flip):.2f} us per call"
    )

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(20)]).to(device)
    x = torch.randn(8, 64, device=device)

    def step() -> torch.Tensor:
        with torch.no_grad():
            return mlp(x)

    def per_call() -> torch.Tensor:
        with tf32_allowed():
            return step()

    def flags_then_off() -> torch.Tensor:
        # The per-call setting's cost alone: set and put back, the call with TF32 off.
        with tf32_allowed():
            pass
        return step()

    cases = {
        "eager": (contextlib.nullcontext, step),
        "tf32 set once": (tf32_allowed, step),
        "tf32 per call": (contextlib.nullcontext, per_call),
        "flags per call, tf32 off": (contextlib.nullcontext, flags_then_off),
    }
    if device == "cuda":
        print("kernels per call, TF32 off:", dict(kernels_of(step, device)))
        with tf32_allowed():
            print("kernels per call, TF32 on: ", dict(kernels_of(step, device)))

    times: dict[str, list[float]] = {name: [] for name in cases}
    calls = args.calls if device == "cuda" else 50
    for r in range(args.rounds):
        names = list(cases)
        for name in names[r % len(names) :] + names[: r % len(names)]:
            around, call = cases[name]
            with around():
                for _ in range(20):
                    call()
                if device == "cuda":
                    torch.cuda.synchronize()
                    start, end = (
                        torch.cuda.Event(enable_timing=True),
                        torch.cuda.Event(enable_timing=True),
                    )
                    start.record()
                    for _ in range(calls):
                        call()
                    end.record()
                    end.synchronize()
                    times[name].append(start.elapsed_time(end) * 1e-3 / calls)
                else:
                    t = time.perf_counter()
                    for _ in range(calls):
                        call()
                    times[name].append((time.perf_counter() - t) / calls)
    base = statistics.median(times["eager"])
    print("| case | ms per call | vs eager |")
    print("|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1e3:.4f} | {base / median:.3f}x |")

    if device == "cuda":
        import jupyter_brrr

        result = jupyter_brrr.compare(step, variants="tf32", budget_s=2.0, profile=False)
        fixed = result["tf32"]
        print(
            f"A/B's Try of tf32 now: {fixed.speedup}x "
            f"({fixed.speedup_low} to {fixed.speedup_high}), verdict {fixed.verdict}, "
            f"eager {result['eager'].median_s * 1e3:.4f} ms, tf32 {fixed.median_s * 1e3:.4f} ms"
        )


if __name__ == "__main__":
    main()
