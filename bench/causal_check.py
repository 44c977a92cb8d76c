"""H200 acceptance of the replay: real changes, predicted from the before-capture, against CUDA events.

    PYTHONUNBUFFERED=1 python bench/causal_check.py [--only NAME,...] [--runs 30]
    python bench/causal_check.py --cpu-smoke    # tiny sizes on the CPU: the script runs through

Each case runs a step before and after a real change. Both are timed with CUDA events outside the
profiler (a sustained warm-up of at least ``--warmup`` seconds, then ``--runs`` runs, each of
``reps`` steps back to back: a steady loop's time per step), and both are profiled over a few
steps (``torch.profiler`` schedule, ``record_shapes=True``) and loaded. The prediction is the
diff's (``jupyter_brrr.diff(before, after)``, the first row of its Amdahl check): the after span
predicted from the before step's graph with the after side's op times (each op at its own
speed-up, the ops that vanished at the speed-up of those that appeared, launches in proportion to
the after side's count, synchronisations and blocking copies gone where the after step has at
most half as many), replayed without the profiler (``profiler=0``): what a user gets from a diff
of two captures. The ``explicit`` column is the change the case names, asked of the before
report alone (``launch=0`` for a CUDA graph, ``syncs=0``, ``copies="async"``; for a change to
what kernels cost, the after-capture's GPU busy time as one factor on all of them). A larger
batch is compared per item.

Printed as it goes: one row per case (model, change, host-bound?, measured, predicted, error,
explicit), then the median absolute error and the checks of issue 23 (median within 10%, none
off by more than 25%, no prediction above 1.2x where the measured gain is under 1.05x), then the
profiled span, ``predict(profiler=0)`` and the CUDA-event time of each step. Each case is
in its own try/except: one that fails prints its error and the rest go on. About 2 minutes on an
H200.

``--cpu-smoke`` runs every case that needs no CUDA graph nor torch.compile at tiny sizes on the CPU, timed by the
host clock, to check that the script runs through; its figures mean nothing (a CPU trace has no
GPU work to replay: its predictions print as n/a).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jupyter_brrr  # noqa: E402
from jupyter_brrr.capture import cupti  # noqa: E402
from jupyter_brrr.capture.clocks import host_loop_s  # noqa: E402

Step = Callable[[], object]
DEVICE = "cuda"
SMOKE = False  # --cpu-smoke: tiny sizes on the CPU


def size(full: int, smoke: int) -> int:
    """A case's size: ``smoke`` under --cpu-smoke."""
    return smoke if SMOKE else full


@dataclass
class Case:
    name: str
    model: str
    change: str
    before: Callable[[], Step]
    after: Callable[[], Step]
    # What the replay is asked: (before report, after report) -> predict() keyword arguments.
    spec: Callable[[object, object], dict]
    items_ratio: float = 1.0  # after's items per step over before's (a larger batch)
    cuda_only: bool = False  # CUDA graphs: left out of --cpu-smoke


def _busy(report) -> float:
    return float(report.summary["busy_s"])


def gpu_ratio(before, after) -> dict:
    return {"gpu": _busy(before) / _busy(after)}


def compiled(before, after) -> dict:
    launches = max(before.summary.get("launch_count") or 1, 1)
    kept = min((after.summary.get("launch_count") or 0) / launches, 1.0)
    return {"gpu": _busy(before) / _busy(after), "launch": kept}


# --- models ------------------------------------------------------------------------------------


def resnet(batch: int, fast: bool, depth: int = 50) -> Callable[[], Step]:
    def build() -> Step:
        import torchvision

        net = (
            torchvision.models.resnet50
            if depth == 50 and not SMOKE
            else torchvision.models.resnet18
        )
        model = net().to(DEVICE).eval()
        side = size(224, 32)
        x = torch.randn(size(batch, 2), 3, side, side, device=DEVICE)
        if fast:
            model = model.to(dtype=torch.bfloat16, memory_format=torch.channels_last)
            x = x.to(dtype=torch.bfloat16, memory_format=torch.channels_last)

        def step() -> object:
            with torch.no_grad():
                return model(x)

        return step

    return build


def mlp(batch: int, variant: str = "eager") -> Callable[[], Step]:
    def build() -> Step:
        layers = [torch.nn.Linear(64, 64) for _ in range(20)]
        model = torch.nn.Sequential(*layers).to(DEVICE)
        x = torch.randn(batch, 64, device=DEVICE)
        if variant == "compile":
            fn = torch.compile(model)
            return lambda: _no_grad(fn, x)
        if variant == "graph":
            return _graphed(lambda: model(x))
        return lambda: _no_grad(model, x)

    return build


def _no_grad(fn: Callable, x: torch.Tensor) -> object:
    with torch.no_grad():
        return fn(x)


def _graphed(body: Callable[[], torch.Tensor]) -> Step:
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(stream):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        out = body()

    def step() -> object:
        graph.replay()
        return out

    return step


def elementwise_loop(variant: str) -> Callable[[], Step]:
    def build() -> Step:
        x = torch.randn(32, 32, device=DEVICE)

        def body() -> torch.Tensor:
            y = x
            for _ in range(100):
                y = y * 1.0001 + 0.001
            return y

        if variant == "graph":
            return _graphed(body)
        return body

    return build


def item_loop(sync: bool, side: int = 4096) -> Callable[[], Step]:
    """20 matmuls of (side, side) by (side, side / 2) bf16, each summed: with ``sync``, a
    ``.item()`` after each (a loop that logs its loss); at side 256 the syncs and launches set the
    step, at 4096 the matmuls."""

    def build() -> Step:
        w = torch.randn(size(side, 64), size(side // 2, 32), device=DEVICE, dtype=torch.bfloat16)
        x = torch.randn(size(side, 64), size(side, 64), device=DEVICE, dtype=torch.bfloat16)

        def with_item() -> object:
            total = 0.0
            for _ in range(20):
                total += (x @ w).sum().item()
            return total

        def without() -> object:
            total = torch.zeros((), device=DEVICE)
            for _ in range(20):
                total += (x @ w).sum()
            return total

        return with_item if sync else without

    return build


def host_copy(pinned: bool) -> Callable[[], Step]:
    def build() -> Step:
        w = torch.randn(size(2048, 64), size(2048, 64), device=DEVICE)
        host = torch.randn(size(4096, 64), size(2048, 64))
        if pinned and DEVICE == "cuda":
            host = host.pin_memory()
        return lambda: host.to(DEVICE, non_blocking=pinned) @ w

    return build


def attention(fused: bool, batch: int = 8, length: int = 2048) -> Callable[[], Step]:
    def build() -> Step:
        q, k, v = (
            torch.randn(
                size(batch, 1),
                size(16, 2),
                size(length, 64),
                64,
                device=DEVICE,
                dtype=torch.bfloat16,
            )
            for _ in range(3)
        )
        if fused:
            return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return lambda: (q @ k.transpose(-2, -1) / math.sqrt(64)).softmax(-1) @ v

    return build


def encoder(variant: str) -> Callable[[], Step]:
    def build() -> Step:
        layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True).to(DEVICE)
        layer.eval()
        x = torch.randn(size(32, 2), size(256, 16), 512, device=DEVICE)
        fn = torch.compile(layer) if variant == "compile" else layer

        def step() -> object:
            with torch.no_grad():
                if variant == "bf16":
                    with torch.autocast(DEVICE, dtype=torch.bfloat16):
                        return fn(x)
                return fn(x)

        return step

    return build


def block(variant: str) -> Callable[[], Step]:
    """Four transformer MLP blocks (Linear 256 -> 1024, GELU, Linear 1024 -> 256, a residual) at
    batch 4: host-bound on an H200."""

    def build() -> Step:
        layers = [
            torch.nn.Sequential(
                torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)
            )
            for _ in range(4)
        ]
        model = torch.nn.ModuleList(layers).to(DEVICE).eval()
        x = torch.randn(4, 256, device=DEVICE)

        def body() -> torch.Tensor:
            y = x
            for layer in model:
                y = y + layer(y)
            return y

        if variant == "graph":
            return _graphed(body)

        def step() -> object:
            with torch.no_grad():
                if variant == "bf16":
                    with torch.autocast(DEVICE, dtype=torch.bfloat16):
                        return body()
                return body()

        return step

    return build


CASES = [
    Case(
        "resnet50_b32_bf16_cl",
        "ResNet-50 b32",
        "fp32 NCHW -> bf16 channels_last",
        resnet(32, False),
        resnet(32, True),
        gpu_ratio,
    ),
    Case(
        "resnet50_b256_bf16_cl",
        "ResNet-50 b256",
        "fp32 NCHW -> bf16 channels_last",
        resnet(256, False),
        resnet(256, True),
        gpu_ratio,
    ),
    Case(
        "resnet50_b32_to_b64",
        "ResNet-50 b32",
        "batch 32 -> 64 (per item)",
        resnet(32, False),
        resnet(64, False),
        gpu_ratio,
        items_ratio=2.0,
    ),
    Case(
        "mlp_graph",
        "20 x Linear(64) b8",
        "eager -> CUDA graph",
        mlp(8),
        mlp(8, "graph"),
        lambda b, a: {"launch": 0},
        cuda_only=True,
    ),
    Case(
        "mlp_compile",
        "20 x Linear(64) b8",
        "eager -> torch.compile",
        mlp(8),
        mlp(8, "compile"),
        compiled,
    ),
    Case(
        "mlp_b8_to_b64",
        "20 x Linear(64) b8",
        "batch 8 -> 64 (per item)",
        mlp(8),
        mlp(64),
        gpu_ratio,
        items_ratio=8.0,
    ),
    Case(
        "loop_graph",
        "200 tiny elementwise ops",
        "eager -> CUDA graph",
        elementwise_loop("eager"),
        elementwise_loop("graph"),
        lambda b, a: {"launch": 0},
        cuda_only=True,
    ),
    Case(
        "item_removed",
        ".item() loop (bf16 matmul)",
        "remove .item() from the loop",
        item_loop(True),
        item_loop(False),
        lambda b, a: {"syncs": 0},
    ),
    Case(
        "pinned_copy",
        "host copy + matmul",
        "pageable -> pinned non-blocking copy",
        host_copy(False),
        host_copy(True),
        lambda b, a: {"copies": "async"},
    ),
    Case(
        "sdpa",
        "attention 8x16x2048x64 bf16",
        "hand-written -> SDPA",
        attention(False),
        attention(True),
        gpu_ratio,
    ),
    Case(
        "encoder_compile",
        "TransformerEncoderLayer b32",
        "eager -> torch.compile",
        encoder("eager"),
        encoder("compile"),
        compiled,
    ),
    Case(
        "encoder_bf16",
        "TransformerEncoderLayer b32",
        "fp32 -> bf16 autocast",
        encoder("eager"),
        encoder("bf16"),
        gpu_ratio,
    ),
    # Host-bound: the .item() loop and attention at small sizes, a dtype and layout change at a
    # small batch, and small MLP blocks.
    Case(
        "item_removed_small",
        ".item() loop (256 bf16 matmul)",
        "remove .item() from the loop",
        item_loop(True, side=256),
        item_loop(False, side=256),
        lambda b, a: {"syncs": 0},
    ),
    Case(
        "sdpa_small",
        "attention 1x16x128x64 bf16",
        "hand-written -> SDPA",
        attention(False, batch=1, length=128),
        attention(True, batch=1, length=128),
        gpu_ratio,
    ),
    Case(
        "resnet18_b1_bf16_cl",
        "ResNet-18 b1",
        "fp32 NCHW -> bf16 channels_last",
        resnet(1, False, depth=18),
        resnet(1, True, depth=18),
        gpu_ratio,
    ),
    Case(
        "block_graph",
        "4 MLP blocks 256-1024 b4",
        "eager -> CUDA graph",
        block("eager"),
        block("graph"),
        lambda b, a: {"launch": 0},
        cuda_only=True,
    ),
    Case(
        "block_bf16",
        "4 MLP blocks 256-1024 b4",
        "fp32 -> bf16 autocast",
        block("eager"),
        block("bf16"),
        gpu_ratio,
    ),
]


# --- measuring --------------------------------------------------------------------------------


def _sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _reps(step: Step) -> int:
    """Steps per timed run: enough back to back for about 4 ms (a steady loop's time per step)."""
    for _ in range(3):
        step()
    _sync()
    one = time.perf_counter()
    step()
    _sync()
    one = time.perf_counter() - one
    return max(1, min(50, int(0.004 / max(one, 1e-6))))


def _timed_runs(step: Step, runs: int, reps: int, warmup_s: float) -> list[float]:
    """``runs`` times per step after a sustained warm-up of ``warmup_s`` (CUDA events; the host
    clock under --cpu-smoke)."""
    start = time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        for _ in range(reps):
            step()
        _sync()
    times = []
    for _ in range(runs):
        if DEVICE != "cuda":
            begin_s = time.perf_counter()
            for _ in range(reps):
                step()
            times.append((time.perf_counter() - begin_s) / reps)
            continue
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(reps):
            step()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e-3 / reps)
    return times


def sandwiched_rounds(
    steps: dict[str, Step],
    folder: Path,
    name: str,
    runs: int,
    warmup_s: float,
    rounds: int = 3,
) -> dict:
    """Both steps timed and captured in alternating rounds (before, after, before, ...), each
    capture between two halves of its own side's timed runs. This host's speed drifts by up to
    1.8x within seconds (a fixed Python loop runs at two speeds), and a host-bound step's
    speed-up moves with it: a capture is held against the runs taken within a fraction of a
    second of it, and both sides of one round against each other. Returns the times in round
    order (``before_s``, ``after_s``: ``runs // rounds`` per round), the captures' paths per
    side and round, and the host's speed (``capture.clocks.host_loop_s``) just before each
    capture and after each side's round."""
    reps = {side: _reps(step) for side, step in steps.items()}
    per_round = max(2, runs // rounds)
    out: dict = {f"{side}_s": [] for side in steps}
    out["paths"] = {side: [] for side in steps}
    out["host_loop_s"] = {side: [] for side in steps}
    out["capture_host_loop_s"] = {side: [] for side in steps}
    for index in range(rounds):
        for side, step in steps.items():
            out[f"{side}_s"] += _timed_runs(step, per_round // 2, reps[side], warmup_s / rounds)
            out["capture_host_loop_s"][side].append(host_loop_s())
            out["paths"][side].append(profiled_trace(step, folder, f"{name}_{side}_{index}"))
            # A short warm-up again: the profiler's teardown leaves the host's caches cold.
            out[f"{side}_s"] += _timed_runs(step, per_round - per_round // 2, reps[side], 0.05)
            out["host_loop_s"][side].append(host_loop_s())
    return out


def median_round(paths: list[Path]) -> int:
    """The round whose before-capture has the median span per step: the host's speed moves
    between rounds, and the capture in the middle is the one the timed runs' median most likely
    shared. Both sides are taken from that round."""
    spans = [jupyter_brrr.load(p).summary["span_s"] or 0.0 for p in paths]
    order = sorted(range(len(spans)), key=spans.__getitem__)
    return order[len(order) // 2]


def round_path(folder: Path, name: str, side: str, index: int, chosen: int | None) -> Path:
    """Where a recording keeps a side's capture of a round: the chosen round's as
    ``NAME_SIDE.json.gz`` (what --replay loads by default), the others with their round's
    number."""
    if index == chosen:
        return folder / f"{name}_{side}.json.gz"
    return folder / f"{name}_{side}_{index}.json.gz"


def profiled(step: Step, folder: Path, name: str):
    return jupyter_brrr.load(profiled_trace(step, folder, name))


def profiled_trace(step: Step, folder: Path, name: str) -> Path:
    path = folder / f"{name}.json.gz"
    acts = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=1, warmup=2, active=4, repeat=1)
    with torch.profiler.profile(
        activities=acts,
        record_shapes=True,
        schedule=schedule,
        on_trace_ready=lambda p: p.export_chrome_trace(str(path)),
    ) as prof:
        for _ in range(7):
            step()
            prof.step()
    _sync()
    return path


def diff_prediction(before, after) -> tuple[float, float, float]:
    """The diff's replayed speed-up: the after span predicted from the before step's graph with
    the after side's op times, and its likely range (``analysis.spread.prediction_band``, from
    both captures' steps); NaN where the before report has no graph to replay."""
    table = jupyter_brrr.diff(before, after).amdahl
    rows = table[table["kind"] == "replay"] if len(table) else table
    if not len(rows):
        return math.nan, math.nan, math.nan
    row = rows.iloc[0]
    return tuple(float(row[k]) for k in ("predicted_speedup", "predicted_low", "predicted_high"))  # pyright: ignore[reportReturnType]  # three floats


def round_medians(times: list[float], rounds: int = 3) -> list[float]:
    """The median of each timing round's runs (``interleaved_times``: rounds in order)."""
    per = max(1, len(times) // rounds)
    return [statistics.median(times[i * per : (i + 1) * per]) for i in range(rounds)]


def measured_range(times_before: list[float], times_after: list[float]) -> tuple[float, float]:
    """The measured speed-up's range over the rounds (each round's before median over its after
    median): how far the ground truth itself moved within the call."""
    ratios = [
        b / a for b, a in zip(round_medians(times_before), round_medians(times_after), strict=True)
    ]
    return min(ratios), max(ratios)


def capture_round_speedup(kept: dict) -> float:
    """The speed-up measured in the rounds the two captures were taken in (each side's runs
    around its capture, ``sandwiched_rounds``): the ground truth at the host speed the captures
    saw. NaN where the recording predates the field."""
    chosen = kept.get("capture_round") or {}
    if chosen.get("before") is None or chosen.get("after") is None:
        return math.nan
    before = round_medians(kept["before_s"])[chosen["before"]]
    return before / round_medians(kept["after_s"])[chosen["after"]]


def every_round(folder: Path, name: str, kept: dict) -> list[tuple[float, float]]:
    """Each round's prediction (its own two captures) and measured speed-up (its own runs),
    where the recording kept every round's captures."""
    rounds, chosen = kept.get("rounds_kept") or 0, (kept.get("capture_round") or {}).get("before")
    pairs = []
    for index in range(rounds):
        before, after = (
            jupyter_brrr.load(round_path(folder, name, side, index, chosen))
            for side in ("before", "after")
        )
        measured = round_medians(kept["before_s"])[index] / round_medians(kept["after_s"])[index]
        pairs.append((diff_prediction(before, after)[0], measured))
    return pairs


def explicit_prediction(case: Case, before, after) -> tuple[float, dict]:
    if before.graph is None or not before.graph.gpu_count:
        return math.nan, {}
    change = case.spec(before, after)
    base = before.predict(profiler=0)
    return base.span_s / before.predict(profiler=0, **change).span_s, change


def _x(value: float) -> str:
    return f"{value:8.3f}x" if value == value else f"{'n/a':>9s}"


def _ms(seconds: float, width: int) -> str:
    return f"{seconds * 1e3:.3f}ms".rjust(width) if seconds == seconds else "n/a".rjust(width)


def _pct(value: float) -> str:
    return f"{value:+7.1%}" if value == value else f"{'n/a':>7s}"


def own_round(kept: dict, report, side: str = "before") -> tuple[float, float, float]:
    """A side's capture held against its own timing round (the round it was taken in, where
    the recording says which): that round's CUDA-event median, the host's speed ratio (the loop
    before the capture over the loop after that round's runs), and ``predict(profiler=0)`` with
    the host's work scaled by that ratio. NaN where the recording predates these fields
    (bench/data/h200/causal*, 2026-12-02)."""
    nan = (math.nan, math.nan, math.nan)
    chosen = (kept.get("capture_round") or {}).get(side)
    loops = (kept.get("host_loop_s") or {}).get(side)
    capture_loops = (kept.get("capture_host_loop_s") or {}).get(side)
    if chosen is None or not loops or not capture_loops or report.graph is None:
        return nan
    event = round_medians(kept[f"{side}_s"])[chosen]
    ratio = capture_loops[chosen] / loops[chosen]  # > 1: the host ran slower at the capture
    scaled = report.predict(profiler=0, host=ratio).span_s if report.graph.gpu_count else math.nan
    return event, ratio, scaled


def profiler_row(name: str, report, times: list[float], own: tuple) -> tuple:
    """A step's profiled span, ``predict(profiler=0)``, CUDA-event median, whether it is
    host-bound (GPU idle over 30% of the span), and its own round (``own_round``)."""
    span = report.summary["span_s"] or math.nan
    host_bound = (report.summary["idle_s"] or 0.0) / span > 0.3 if span == span else False
    unprofiled = (
        report.predict(profiler=0).span_s
        if report.graph is not None and report.graph.gpu_count
        else math.nan
    )
    return (name, span, unprofiled, statistics.median(times), host_bound, own)


def print_band_summary(rows: list[tuple]) -> None:
    """The predictions judged by their bands, beside the plain error: a measured median inside
    the predicted band is confirmed; the rounds' range overlapping the band is a weaker yes."""
    inside = [r[0].name for r in rows if r[5] <= r[1] <= r[6]]
    overlap = [r[0].name for r in rows if r[5] <= r[8] and r[7] <= r[6]]
    print(
        f"measured inside the predicted band (confirmed): {len(inside)} of {len(rows)}; "
        f"the rounds' range overlaps the band: {len(overlap)} of {len(rows)}"
    )
    missed = [r[0].name for r in rows if r[0].name not in overlap]
    if missed:
        print("  neither: " + ", ".join(missed))


def print_capture_summary(rows: list[tuple]) -> None:
    """The same checks against the speed-up measured around the captures themselves (their own
    rounds' runs: ``capture_round_speedup``), and over every round's own pair of captures
    where the recording kept them."""
    own = [r for r in rows if r[9] == r[9]]
    if not own:
        return
    errors = [r[2] / r[9] - 1 for r in own]
    worst = max(range(len(own)), key=lambda i: abs(errors[i]))
    false = [r[0].name for r in own if r[9] < 1.05 and r[2] > 1.2]
    print(
        f"against the rounds the captures were taken in: median absolute error "
        f"{statistics.median(abs(e) for e in errors):.1%} over {len(own)} cases; largest "
        f"{errors[worst]:+.1%} ({own[worst][0].name}); no prediction above 1.2x under 1.05x "
        f"measured: {'yes' if not false else 'NO: ' + ', '.join(false)}"
    )
    pairs = [(r[0].name, p, m) for r in own for p, m in r[10] if p == p]
    if pairs:
        each = [abs(p / m - 1) for _, p, m in pairs]
        per_case = [
            statistics.median(abs(p / m - 1) for p, m in r[10] if p == p) for r in own if r[10]
        ]
        print(
            f"every round's own captures against its own runs: median absolute error "
            f"{statistics.median(each):.1%} over {len(pairs)} rounds of {len(per_case)} cases "
            f"(median of each case's median {statistics.median(per_case):.1%}; largest "
            f"{max(each):.1%})"
        )


def print_profiler_rows(profiler_rows: list[tuple]) -> None:
    """Each step's profiled span, ``predict(profiler=0)`` and CUDA-event time (the before-step,
    then its after-step); where the
    recording says which round the capture followed, that round's CUDA-event time and the
    prediction at that round's host speed (``own_round``)."""
    print(
        f"\n{'step':24s} {'host':>5s} {'profiled':>10s} {'profiler=0':>11s} "
        f"{'CUDA events':>12s} {'error':>7s} {'its round':>10s} {'host x':>7s} "
        f"{'at its host':>12s} {'error':>7s}"
    )
    for name, span, unprofiled, event, host_bound, (own, ratio, scaled) in profiler_rows:
        print(
            f"{name:24s} {'yes' if host_bound else 'no':>5s} {_ms(span, 10)} "
            f"{_ms(unprofiled, 11)} {_ms(event, 12)} {_pct(unprofiled / event - 1)} "
            f"{_ms(own, 10)} {ratio:7.2f} {_ms(scaled, 12)} {_pct(scaled / own - 1)}"
        )
    for which, rows in (
        ("before-steps", [r for r in profiler_rows if not r[0].startswith(" ")]),
        ("steps of both sides", profiler_rows),
    ):
        host = [abs(r[2] / r[3] - 1) for r in rows if r[4] and r[2] == r[2]]
        own = [abs(r[5][2] / r[5][0] - 1) for r in rows if r[4] and r[5][2] == r[5][2]]
        if host:
            print(
                f"host-bound {which}: median |profiler=0 / CUDA events - 1| = "
                f"{statistics.median(host):.1%} ({len(host)} steps)"
                + (
                    f"; against their own round at its host speed {statistics.median(own):.1%}"
                    if own
                    else ""
                )
            )


def measure_case(case: Case, args: argparse.Namespace, folder: Path) -> tuple:
    """One case measured on the GPU: both steps timed and captured in alternating rounds
    (``sandwiched_rounds``); every capture kept in ``folder``, the median round's loaded.
    Returns the two reports and what ``cases.json`` keeps of the case."""
    steps = {"before": case.before(), "after": case.after()}
    measured = sandwiched_rounds(steps, folder, case.name, args.runs, args.warmup)
    chosen = median_round(measured["paths"]["before"])
    for side, paths in measured["paths"].items():
        for index, path in enumerate(paths):
            path.replace(round_path(folder, case.name, side, index, chosen))
    before = jupyter_brrr.load(round_path(folder, case.name, "before", chosen, chosen))
    after = jupyter_brrr.load(round_path(folder, case.name, "after", chosen, chosen))
    del steps
    # The capture's round and the host's speed (a fixed Python loop) after each
    # round's timed runs and before each capture: what --replay needs to hold a
    # capture against its own round, at its own host speed.
    kept = {
        "before_s": measured["before_s"],
        "after_s": measured["after_s"],
        "capture_round": {"before": chosen, "after": chosen},
        "rounds_kept": len(measured["paths"]["before"]),
        "host_loop_s": measured["host_loop_s"],
        "capture_host_loop_s": measured["capture_host_loop_s"],
    }
    return before, after, kept


def print_summary(rows: list[tuple]) -> None:
    """The checks of issue 23 over the cases' rows: the median and largest error, the cases'
    spread over models and host-bound steps, false gains; then the same by bands and against
    the rounds the captures were taken in."""
    errors = [abs(r[3]) for r in rows]
    median = statistics.median(errors)
    print(
        f"\nmedian absolute error {median:.1%} over {len(rows)} cases "
        f"({sum(r[4] for r in rows)} host-bound): "
        f"{'within' if median <= 0.10 else 'NOT within'} 10%"
    )
    worst = max(rows, key=lambda r: abs(r[3]))
    print(
        f"largest error {worst[3]:+.1%} ({worst[0].name}): "
        f"{'within' if abs(worst[3]) <= 0.25 else 'NOT within'} 25%"
    )
    host = sum(r[4] for r in rows)
    models = len({r[0].model for r in rows})
    print(
        f"{len(rows)} changes on {models} models, {host} host-bound: "
        + ("at least" if len(rows) >= 12 and models >= 6 and 2 * host >= len(rows) else "NOT")
        + " 12 changes on 6 models, half of them host-bound"
    )
    false = [r[0].name for r in rows if r[1] < 1.05 and r[2] > 1.2]
    print(
        "no prediction above 1.2x where the measured gain is under 1.05x: "
        + ("yes" if not false else "NO: " + ", ".join(false))
    )
    print_band_summary(rows)
    print_capture_summary(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up")
    parser.add_argument(
        "--cpu-smoke", action="store_true", help="tiny sizes on the CPU: check it runs through"
    )
    parser.add_argument(
        "--keep", default="", help="a folder to keep the traces and the CUDA-event times in"
    )
    parser.add_argument(
        "--replay",
        default="",
        help="a folder --keep wrote: predict again from its traces and times, no GPU needed",
    )
    args = parser.parse_args()
    # Captured as jupyter_brrr captures: CUPTI released when each ends, so the timed runs after
    # a capture run at the process's own speed (jupyter_brrr/capture/cupti.py).
    cupti.ask_teardown(torch)
    global DEVICE, SMOKE
    if args.cpu_smoke:
        DEVICE, SMOKE = "cpu", True
        args.runs, args.warmup = min(args.runs, 3), 0.0
    wanted = {n for n in args.only.split(",") if n}
    cases = [
        c
        for c in CASES
        # The smoke run leaves out CUDA graphs, and torch.compile (minutes of C++ on a CPU).
        if (not wanted or c.name in wanted)
        and not (SMOKE and (c.cuda_only or "compile" in c.change))
    ]
    if args.replay:
        where = f"the traces and times kept in {args.replay}"
    else:
        where = torch.cuda.get_device_name() if DEVICE == "cuda" else "the CPU (smoke run)"
    models = len({c.model for c in cases})
    teardown = os.environ.get(cupti.TEARDOWN_VARIABLE, "unset")
    print(
        f"torch {torch.__version__} on {where}; {len(cases)} cases on {models} models; "
        f"TEARDOWN_CUPTI={teardown}"
    )
    header = (
        f"{'case':24s} {'model':28s} {'change':36s} {'host':>5s} {'measured':>9s} "
        f"{'predicted':>9s} {'error':>7s} {'explicit':>9s} {'likely (band)':>15s} "
        f"{'rounds measured':>15s} {'in':>4s} {'at capture':>10s} {'error':>7s}"
    )
    print(header)
    rows, profiler_rows = [], []
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.replay:
            folder = Path(args.replay)
            kept = json.loads((folder / "cases.json").read_text())
        else:
            folder = (
                Path(args.keep)
                if args.keep
                else Path(stack.enter_context(tempfile.TemporaryDirectory()))
            )
            folder.mkdir(parents=True, exist_ok=True)
            kept = {}
        for case in cases:
            try:
                if args.replay:
                    if case.name not in kept:
                        continue
                    times_before, times_after = (
                        kept[case.name]["before_s"],
                        kept[case.name]["after_s"],
                    )
                    before = jupyter_brrr.load(folder / f"{case.name}_before.json.gz")
                    after = jupyter_brrr.load(folder / f"{case.name}_after.json.gz")
                else:
                    before, after, kept[case.name] = measure_case(case, args, folder)
                    times_before, times_after = (
                        kept[case.name]["before_s"],
                        kept[case.name]["after_s"],
                    )
                    (folder / "cases.json").write_text(json.dumps(kept, indent=1))
                before_s, after_s = statistics.median(times_before), statistics.median(times_after)
                predicted, low, high = (
                    v * case.items_ratio for v in diff_prediction(before, after)
                )
                lo_m, hi_m = (
                    v * case.items_ratio for v in measured_range(times_before, times_after)
                )
                explicit, change = explicit_prediction(case, before, after)
                explicit *= case.items_ratio
                measured = before_s / after_s * case.items_ratio
                summary = before.summary
                span = summary["span_s"] or math.nan
                host_bound = (summary["idle_s"] or 0.0) / span > 0.3 if span == span else False
                error = predicted / measured - 1
                at_capture = capture_round_speedup(kept[case.name]) * case.items_ratio
                rounds = [
                    (p * case.items_ratio, m * case.items_ratio)
                    for p, m in every_round(folder, case.name, kept[case.name])
                ]
                if predicted == predicted:
                    rows.append(
                        (
                            case,
                            measured,
                            predicted,
                            error,
                            host_bound,
                            low,
                            high,
                            lo_m,
                            hi_m,
                            at_capture,
                            rounds,
                        )
                    )
                for side, report in (("before", before), ("after", after)):
                    profiler_rows.append(
                        profiler_row(
                            case.name if side == "before" else "  after",
                            report,
                            kept[case.name][f"{side}_s"],
                            own_round(kept[case.name], report, side),
                        )
                    )
                words = ", ".join(
                    f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in change.items()
                )
                inside = "yes" if low <= measured <= high else "no"
                print(
                    f"{case.name:24s} {case.model:28s} {case.change:36s} "
                    f"{'yes' if host_bound else 'no':>5s} {measured:8.3f}x {_x(predicted)} "
                    f"{_pct(error)} {_x(explicit)} {low:7.2f}-{high:<7.2f} {lo_m:7.2f}-{hi_m:<7.2f} "
                    f"{inside:>4s} {at_capture:9.3f}x {_pct(predicted / at_capture - 1)}"
                    f"   ({words}; {before_s * 1e3:.3f} -> {after_s * 1e3:.3f} ms)"
                )
            except Exception as error:  # one case failing leaves the others to run
                print(f"{case.name:24s} FAILED: {type(error).__name__}: {error}")
                traceback.print_exc(limit=3)
            finally:
                if DEVICE == "cuda":
                    torch.cuda.empty_cache()
    if rows:
        print_summary(rows)
    if profiler_rows:
        print_profiler_rows(profiler_rows)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
