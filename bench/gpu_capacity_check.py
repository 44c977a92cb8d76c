"""GPU rows of issue 12 (the size sweep and memory capacity), run with bench/gpu_check.py's
table and machinery:

    python3 bench/gpu_capacity_check.py --only sweep,capacity [--out DIR]

``sweep``: a tiny MLP from batch 8 to 512 is overhead (time ratio per doubling under 1.3); a
bf16 GEMM and x.cos().cos() on tensors past the L2 double per doubling (1.8-2.2, compute and
memory); an attention layer's prefill grows into compute, its decode step (one token against a
KV cache) is fixed memory-bound work. ``capacity``: a training step's peak breakdown adds up to the allocator's peak within
2%; a sweep under a 2.5 GiB memory fraction ends cleanly at the OOM and predicts the largest
batch within 10% of the one found by bisection. Core only (no IPython).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check
from gpu_check import MIB, row


def check_sweep() -> None:
    """Issue 12: the batch-doubling verdicts. A tiny MLP from batch 8 to 512 barely slows
    (overhead); a large bf16 GEMM and x.cos().cos() on tensors past the L2 double their time per
    doubling (compute, memory). Inputs are slices of one tensor made once, so a step allocates
    only its output."""
    from jupyter_brrr.actions.sweep import sweep

    print("sweep", flush=True)
    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)]).cuda()
    x = torch.randn(512, 64, device="cuda")

    def mlp(batch: int) -> object:
        with torch.no_grad():
            return model(x[:batch])

    # A sustained warm-up per size (about 1 s): a launch-bound span moves with the host's speed,
    # and the interleaved rounds (the default) cancel what drift remains.
    result = sweep(mlp, [8, 16, 32, 64, 128, 256, 512], warmup=3, repeat=5)
    d = result.doublings
    launches = result.table["launches"]
    # A doubling whose kernel launches grew (cuBLAS choosing a GEMM with a reduction kernel at
    # some batch) may take longer and still be overhead: the ratio is held to 1.3 elsewhere.
    same = [
        launches[b] <= 1.2 * launches[a] for a, b in zip(d["from_size"], d["to_size"], strict=True)
    ]
    row(
        "sweep: tiny MLP batch 8..512, largest time ratio per doubling (same launches)",
        d["per_doubling"][same].max() if any(same) else float("nan"),
        1.3,
        "x",
        bool(
            any(same)
            and (d["per_doubling"][same] < 1.3).all()
            and (d["verdict"] == "overhead").all()
        ),
        f"ratios {[round(r, 2) for r in d['per_doubling']]}, verdicts {list(d['verdict'])}; "
        f"launches {list(launches)}; spans {[f'{t * 1e3:.3g} ms' for t in result.table['span_s']]}; "
        f"{result.elapsed_s:.1f} s",
    )
    _decode_and_prefill_rows()
    _doubling_rows("sweep: bf16 GEMM [n,8192]x[8192,8192]", _gemm_sweep(), "compute")
    _doubling_rows("sweep: x.cos().cos() float32 2**25..2**28", _cos_sweep(), "memory")
    gc.collect()
    torch.cuda.empty_cache()


def _decode_and_prefill_rows() -> None:
    """The tour's attention layer (width 8192, 64 heads, bf16; 512 MiB of weights): prefill of a
    prompt of n tokens grows into compute-bound work; decode of one token against a cache of n
    tokens reads every weight for that token, a fixed amount of memory-bound work."""
    from jupyter_brrr.actions.sweep import sweep

    d_model, n_heads, lengths = 8192, 64, [512, 1024, 2048, 4096, 8192]
    head_dim, dtype = d_model // n_heads, torch.bfloat16
    w_q, w_k, w_v, w_o = (
        torch.randn(d_model, d_model, device="cuda", dtype=dtype) / d_model**0.5 for _ in range(4)
    )
    cache_k, cache_v = (
        torch.randn(1, n_heads, lengths[-1], head_dim, device="cuda", dtype=dtype) for _ in range(2)
    )

    def heads_of(t: torch.Tensor) -> torch.Tensor:
        return t.view(1, -1, n_heads, head_dim).transpose(1, 2)

    def prefill(length: int) -> object:
        x = torch.randn(1, length, d_model, device="cuda", dtype=dtype)
        with torch.no_grad():
            q, k, v = (heads_of(x @ w) for w in (w_q, w_k, w_v))
            out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return out.transpose(1, 2).reshape(1, length, d_model) @ w_o

    def decode(length: int) -> object:
        x = torch.randn(1, 1, d_model, device="cuda", dtype=dtype)
        with torch.no_grad():
            q = heads_of(x @ w_q)
            k, v = cache_k[:, :, :length], cache_v[:, :, :length]
            out = nn.functional.scaled_dot_product_attention(q, k, v)
            return out.transpose(1, 2).reshape(1, 1, d_model) @ w_o

    pre = sweep(prefill, lengths, variable="tokens", warmup=3, repeat=5)
    d = pre.doublings
    row(
        "sweep: prefill 512..8192 tokens, last doubling's verdict compute",
        d["per_doubling"].iloc[-1],
        2.0,
        "x",
        d["verdict"].iloc[-1] == "compute",
        f"ratios {[round(r, 2) for r in d['per_doubling']]}, verdicts {list(d['verdict'])}",
    )
    dec = sweep(decode, lengths, variable="cache", warmup=3, repeat=5, items=lambda n: 1)
    d, t = dec.doublings, dec.table
    memory_bound = bool((t["memory_s"] > t["compute_s"]).all())
    row(
        "sweep: decode 1 token against a cache of 512..8192, verdicts fixed or memory",
        d["per_doubling"].max(),
        1.3,
        "x",
        bool(d["verdict"].isin(["fixed", "memory"]).all()) and memory_bound,
        f"ratios {[round(r, 2) for r in d['per_doubling']]}, verdicts {list(d['verdict'])}; "
        f"memory-bound split at every size: {memory_bound}; "
        f"spans {[f'{x * 1e6:.0f} us' for x in t['span_s']]}",
    )


def _gemm_sweep() -> Any:
    from jupyter_brrr.actions.sweep import sweep

    a = torch.randn(32768, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    return sweep(lambda n: a[:n] @ w, [2048, 4096, 8192, 16384, 32768], warmup=3, repeat=5)


def _cos_sweep() -> Any:
    from jupyter_brrr.actions.sweep import sweep

    v = torch.randn(2**28, device="cuda")
    return sweep(lambda n: v[:n].cos().cos(), [2**25, 2**26, 2**27, 2**28], warmup=3, repeat=5)


def _doubling_rows(check: str, result: Any, kind: str, floor_s: float = 50e-6) -> None:
    """The doublings past the launch floor (the smaller point over ``floor_s``): ratio 1.8-2.2
    and the verdict ``kind``."""
    table = result.table
    d = result.doublings
    past = d[[table.at[size, "span_s"] > floor_s for size in d["from_size"]]]
    ok = bool(
        len(past)
        and past["per_doubling"].between(1.8, 2.2).all()
        and (past["verdict"] == kind).all()
    )
    row(
        f"{check}: time ratio per doubling (median), verdict {kind}",
        past["per_doubling"].median() if len(past) else float("nan"),
        2.0,
        "x",
        ok,
        f"ratios {[round(r, 2) for r in past['per_doubling']]}, verdicts "
        f"{list(past['verdict'])}; spans {[f'{s * 1e3:.3g} ms' for s in table['span_s']]}",
    )


def _fits(step: Callable[[int], object], size: int) -> bool:
    """Whether one run of ``step(size)`` fits (no out-of-memory error)."""
    try:
        step(size)
        torch.cuda.synchronize()
        return True
    except torch.OutOfMemoryError as error:
        import traceback

        traceback.clear_frames(error.__traceback__)
        return False
    finally:
        gc.collect()
        torch.cuda.empty_cache()


def _breakdown_row() -> None:
    """A training step's peak (a 12-layer MLP of width 2048 with Adam, batch 4096): the parts
    from torch's memory profiler add up to the allocator's peak within 2%."""
    from jupyter_brrr.capture.memory import memory_breakdown

    model = nn.Sequential(*[m for _ in range(12) for m in (nn.Linear(2048, 2048), nn.GELU())])
    model = model.cuda()
    optimizer = torch.optim.Adam(model.parameters())
    x = torch.randn(4096, 2048, device="cuda")

    def train_step() -> None:
        model(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    result = memory_breakdown(train_step, warmup=2)
    allocator = result.allocator_peak_bytes or float("nan")
    parts = sum(result.at_peak.values())
    row(
        "memory: a training step's breakdown against the allocator's peak",
        parts / MIB,
        allocator / MIB,
        "MiB",
        abs(parts - allocator) <= 0.02 * allocator
        and abs(result.peak_bytes - allocator) <= 0.001 * allocator,
        "; ".join(f"{k} {v / MIB:.0f}" for k, v in result.at_peak.items() if v > 0)
        + f"; unattributed {result.unattributed_bytes / MIB:.1f} MiB; top {result.largest_rows[:2]}",
    )


def check_capacity() -> None:
    """Issue 12: where OOM starts. A training step (forward and backward of 16 Linear(1024, 1024)
    with ReLU, fp32) whose activations grow with the batch, under a 2.5 GiB memory fraction (so
    the OOM comes early and cheap): the sweep ends cleanly at the OOM, and the largest batch it
    predicts from the fitted peaks is within 10% of the largest that fits, found by bisection."""
    from jupyter_brrr.actions.sweep import sweep

    print("capacity", flush=True)
    _breakdown_row()  # its model and optimizer are gone when it returns
    gc.collect()
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(2.5 * 2**30 / total)
    try:
        layers = [m for _ in range(16) for m in (nn.Linear(1024, 1024), nn.ReLU())]
        model = nn.Sequential(*layers).cuda()

        def train_step(batch: int) -> object:
            x = torch.randn(batch, 1024, device="cuda")
            loss = model(x).square().mean()
            loss.backward()
            model.zero_grad(set_to_none=False)
            return loss.detach()

        sizes = [512 * 2**k for k in range(8)]  # 512 .. 65536
        result = sweep(train_step, sizes, warmup=1, repeat=3, burst=True)
        still = torch.ones(4, device="cuda").sum().item() == 4.0
        row(
            "capacity: the sweep ends cleanly at the OOM",
            result.oom_at or 0,
            sizes[-1],
            "batch",
            result.stopped == "oom" and still and result.fit is not None,
            f"stopped {result.stopped} at {result.oom_at}; fit {result.fit and result.fit['kind']}",
        )
        predicted = (result.fit or {}).get("predicted_largest") or 0
        last_ok = max(p.size for p in result.points if p.status == "ok")
        low, high = last_ok, result.oom_at or sizes[-1]
        while high - low > max(low // 200, 1):  # bisection to 0.5%
            mid = (low + high) // 2
            low, high = (mid, high) if _fits(train_step, mid) else (low, mid)
        row(
            "capacity: predicted largest batch against the measured one",
            predicted,
            low,
            "batch",
            abs(predicted / low - 1) <= 0.10 if low else False,
            f"confirmation {result.confirmation}; per item "
            f"{(result.fit or {}).get('per_item_bytes', 0) / 1024:.0f} KiB",
        )
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        gc.collect()
        torch.cuda.empty_cache()


gpu_check.CHECKS.update({"sweep": check_sweep, "capacity": check_capacity})

if __name__ == "__main__":
    sys.exit(gpu_check.main())
