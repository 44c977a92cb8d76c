"""Small workloads with a known right answer, for checking the report's advice.

Each case has a ``slow`` version with one known problem and a ``fixed`` version with that problem
fixed as the advice should say, and names what the first recommendation must be about: its
``cause`` (one of ``jupyter_brrr.advice.CAUSES``) and the ``op`` it must name (a substring of one
of the ops it rests on). ``bench/gpu_check.py``
runs both versions live on a GPU and checks that the gain is where the advice said; the CPU tests
read traces of the slow versions recorded on the H200 (``tests/data/advice/``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

Step = Callable[[], object]


@dataclass
class Case:
    name: str
    about: str
    cause: str  # the reason class the first recommendation must give
    op: str  # a substring of the op (or kernel) it must name
    slow: Callable[[str], Step]
    fixed: Callable[[str], Step]


CASES: dict[str, Case] = {}


def case(name: str, about: str, cause: str, op: str, fixed: Callable[[str], Step]):
    def register(slow: Callable[[str], Step]) -> Callable[[str], Step]:
        CASES[name] = Case(name, about, cause, op, slow, fixed)
        return slow

    return register


def _lm_head(vocab: int) -> Callable[[str], Step]:
    def build(device: str) -> Step:
        x = torch.randn(8192, 768, device=device, dtype=torch.bfloat16)
        w = torch.randn(vocab, 768, device=device, dtype=torch.bfloat16)
        return lambda: F.linear(x, w)

    return build


case(
    "odd_vocab_lm_head",
    "LM head over a 50257-word vocabulary (not a multiple of 64), bf16",
    "tile quantisation",
    "aten::mm",
    fixed=_lm_head(50304),
)(_lm_head(50257))


def _matmul_fp32(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device)
    return lambda: a @ a


def _fp32_fixed(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device)

    def step() -> object:
        previous = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        try:
            return a @ a
        finally:
            torch.set_float32_matmul_precision(previous)

    return step


case(
    "fp32_matmul_tf32_off",
    "float32 8192^3 matmul with TF32 off (torch's default matmul precision 'highest')",
    "fp32 without tensor cores",
    "aten::mm",
    fixed=_fp32_fixed,
)(_matmul_fp32)


def _small_gemms(device: str) -> Step:
    xs = [torch.randn(64, 1024, device=device, dtype=torch.bfloat16) for _ in range(64)]
    w = torch.randn(1024, 1024, device=device, dtype=torch.bfloat16)
    return lambda: [x @ w for x in xs]


def _batched_gemm(device: str) -> Step:
    x = torch.randn(64 * 64, 1024, device=device, dtype=torch.bfloat16)
    w = torch.randn(1024, 1024, device=device, dtype=torch.bfloat16)
    return lambda: x @ w


case(
    "small_gemm",
    "64 GEMMs of 64 x 1024 x 1024, bf16: too little work to fill the GPU",
    "too little work",
    "aten::mm",
    fixed=_batched_gemm,
)(_small_gemms)


def _strided(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device)
    b = torch.randn(8192, 8192, device=device).t()  # a transposed view, read against a's layout
    return lambda: a + b


def _contiguous(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device)
    b = torch.randn(8192, 8192, device=device).t().contiguous()  # made contiguous once, outside
    return lambda: a + b


# Revision 2: revision 1 was `x * 2.0 + 1.0` on one transposed tensor, which PyTorch reads in its
# own layout at full bandwidth (0.275 ms against 0.282 fixed on the H200): nothing to find there.
case(
    "strided_elementwise",
    "an add of a float32 tensor and a transposed view of another: one input read against its "
    "layout",
    "strided",
    "aten::add",
    fixed=_contiguous,
)(_strided)


def _chain(device: str) -> Step:
    x = torch.randn(2**26, device=device)
    return lambda: x.sin().cos().exp().mul(0.5).add(1.0)


def _chain_compiled(device: str) -> Step:
    x = torch.randn(2**26, device=device)
    fn = torch.compile(lambda t: t.sin().cos().exp().mul(0.5).add(1.0))
    return lambda: fn(x)


case(
    "elementwise_chain",
    "five elementwise ops in a row on 2**26 float32 (five passes over memory)",
    "fusion",
    "aten::sin",
    fixed=_chain_compiled,
)(_chain)


def _loop(device: str) -> Step:
    x = torch.randn(32, 32, device=device)

    def step() -> object:
        y = x
        for _ in range(200):
            y = y * 1.0001 + 0.001
        return y

    return step


def _loop_graphed(device: str) -> Step:
    x = torch.randn(32, 32, device=device)

    def body() -> torch.Tensor:
        y = x
        for _ in range(200):
            y = y * 1.0001 + 0.001
        return y

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = body()

    def step() -> object:
        graph.replay()
        return out

    return step


case(
    "launch_bound_loop",
    "400 tiny elementwise kernels in a Python loop (32 x 32 floats)",
    "launch overhead",
    "aten::mul",
    fixed=_loop_graphed,
)(_loop)


def _qkv(device: str) -> tuple[torch.Tensor, ...]:
    return tuple(
        torch.randn(8, 16, 2048, 64, device=device, dtype=torch.bfloat16) for _ in range(3)
    )


def _naive_attention(device: str) -> Step:
    q, k, v = _qkv(device)

    def step() -> object:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return scores.softmax(dim=-1) @ v

    return step


def _sdpa(device: str) -> Step:
    q, k, v = _qkv(device)
    return lambda: F.scaled_dot_product_attention(q, k, v)


case(
    "hand_attention",
    "attention written by hand: softmax(Q K^T / sqrt(d)) V, bf16, 8 x 16 heads x 2048",
    "unfused attention",
    "aten::_softmax",
    fixed=_sdpa,
)(_naive_attention)


def _bags(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    table = torch.randn(2_000_000, 256, device=device)
    idx = torch.randint(0, 2_000_000, (65536, 32), device=device)  # 65536 bags of 32 rows
    return table, idx


def _embedding_then_sum(device: str) -> Step:
    table, idx = _bags(device)
    return lambda: F.embedding(idx, table).sum(dim=1)


def _embedding_bag(device: str) -> Step:
    table, idx = _bags(device)
    return lambda: F.embedding_bag(idx, table, mode="sum")


# Revision 3: revision 2 (16384 bags of 16 rows) gained little on the H200 (0.261 against 0.253
# ms recorded, 0.259 against 0.215 ms in a second process): embedding_bag's kernel gathers random
# rows no faster than the lookup, and at that size the sum's pass was a small part. At 65536 bags
# of 32 rows the sum's pass is a third of the step (1.82 against 1.25 ms). Revision 2's recordings
# are in superseded/r2/.
# Revision 2: revision 1 looked up 262144 rows of a float32 table against a bf16 one; the gather
# took the same time either way (0.228 and 0.221 ms on the H200: its per-element work, not its
# bytes, limits it), so halving the bytes was no fix.
case(
    "embedding_lookup",
    "embedding lookups summed per bag (65536 bags of 32 rows of a 2M x 256 float32 table) with "
    "F.embedding(...).sum(1): the gathered rows are written out and read back",
    "memory-bound gather",
    "aten::embedding",
    fixed=_embedding_bag,
)(_embedding_then_sum)


def _h2d(device: str) -> Step:
    w = torch.randn(4096, 4096, device=device)
    host = torch.randn(8192, 4096)  # pageable host memory, copied every step

    def step() -> object:
        return host.to(device) @ w

    return step


def _h2d_fixed(device: str) -> Step:
    w = torch.randn(4096, 4096, device=device)
    x = torch.randn(8192, 4096).to(device)  # moved once, outside the step
    return lambda: x @ w


case(
    "host_copy_in_step",
    "a 128 MiB host-to-device copy from pageable memory inside the step",
    "host copy",
    "aten::copy_",
    fixed=_h2d_fixed,
)(_h2d)


def _sync_operands(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    # About 0.1 ms of GPU work per iteration, as much as the host's turn-around after a sync: the
    # GPU idles while the host catches up (with less GPU work the host is the limit either way).
    w = torch.randn(4096, 2048, device=device, dtype=torch.bfloat16)
    x = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    return x, w


def _item_sync(device: str) -> Step:
    x, w = _sync_operands(device)

    def step() -> object:
        total = 0.0
        for _ in range(50):
            total += (x @ w).sum().item()  # waits for the GPU every iteration
        return total

    return step


def _no_sync(device: str) -> Step:
    x, w = _sync_operands(device)

    def step() -> object:
        total = torch.zeros((), device=device, dtype=torch.float32)
        for _ in range(50):
            total += (x @ w).sum()
        return total.item()

    return step


# Revision 2: revision 1 did 26 us of float32 work per iteration against about 90 us of host
# time, so the loop was host-bound with or without the sync (4.70 against 4.55 ms).
case(
    "item_sync",
    "a .item() in the loop: the host waits for 0.1 ms of bf16 matmul 50 times per step, then the "
    "GPU waits for the host",
    "synchronisation",
    "aten::item",
    fixed=_no_sync,
)(_item_sync)


def _conv_autocast(channels_last: bool) -> Callable[[str], Step]:
    def build(device: str) -> Step:
        conv = torch.nn.Conv2d(128, 128, 3, padding=1).to(device)
        x = torch.randn(64, 128, 112, 112, device=device)
        if channels_last:
            conv = conv.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)

        def step() -> object:
            with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                return conv(x)

        return step

    return build


case(
    "conv_channels_first_autocast",
    "a float32 NCHW convolution under bf16 autocast: layout transposes around cuDNN",
    "layout",
    "conv",
    fixed=_conv_autocast(True),
)(_conv_autocast(False))


def _stall(device: str) -> Step:
    w = torch.randn(2048, 2048, device=device)

    def step() -> object:
        batch = torch.randn(1024, 2048)  # "preprocessing" on the host, in the step
        time.sleep(0.004)
        return batch.to(device, non_blocking=False) @ w

    return step


def _prefetched(device: str) -> Step:
    w = torch.randn(2048, 2048, device=device)
    batch = torch.randn(1024, 2048).pin_memory().to(device, non_blocking=True)
    return lambda: batch @ w


case(
    "dataloader_stall",
    "host preprocessing (4 ms) inside the step while the GPU waits",
    "host stall",
    "",
    fixed=_prefetched,
)(_stall)


# --- the check with known answers (issue 24) -------------------------------------------------------
#
# CHECKS: at least 20 workloads, each with what the report must say about it: for a trace, the
# first recommendation's cause, the op it names and words of its fix (or what no recommendation
# may say, or words of an op's reason); for a sweep, words of its notes; for timed runs, the
# first finding's kind. It holds the 12 CASES above and the advice that did not fit its evidence
# on held-out H200 workloads. ``python bench/advice_cases.py --record`` records each into
# tests/data/advice_cases/ (traces where there is a GPU; sweeps and timings on either);
# tests/test_advice_cases.py reads the recordings and checks the answers.

_FIX_WORDS = {
    "odd_vocab_lm_head": "Pad that dimension",
    "fp32_matmul_tf32_off": "set_float32_matmul_precision('high')",
    "small_gemm": "torch.cat",
    "strided_elementwise": "contiguous",
    "elementwise_chain": "torch.compile",
    "launch_bound_loop": "CUDA Graph",
    "hand_attention": "scaled_dot_product_attention",
    "embedding_lookup": "embedding_bag",
    "host_copy_in_step": "pinned memory",
    "item_sync": ".item()",
    "conv_channels_first_autocast": "channels_last",
    "dataloader_stall": "DataLoader",
}


@dataclass
class Check:
    """One workload and what the report must say about it (see above). ``kind``: "trace" (a
    step profiled), "sweep" (``build(device)`` returns the step of one size) or "timing" (the
    step timed ``repeat`` runs after ``warmup``)."""

    name: str
    about: str
    kind: str
    build: Callable[[str], Callable]
    cause: str | None = None  # trace: the first recommendation's cause
    op: str = ""  # ... a substring of an op it names
    fix: str = ""  # ... words of its fix
    forbid: tuple[tuple[str, str], ...] = ()  # trace: (cause, op) no recommendation may have
    why: tuple[str, str] | None = None  # trace: (op, words) its reason must contain
    sizes: tuple[int, ...] = ()  # sweep: the sizes
    says: str = ""  # sweep: words a note must hold; timing: the first finding's kind
    gpu: bool = True  # needs a GPU to be recorded


CHECKS: dict[str, Check] = {
    name: Check(name, c.about, "trace", c.slow, c.cause, c.op, _FIX_WORDS[name])
    for name, c in CASES.items()
}


def check(**fields: object) -> Callable[[Callable], Callable]:
    def register(build: Callable) -> Callable:
        name = str(fields["name"])
        CHECKS[name] = Check(build=build, **fields)  # type: ignore[arg-type]
        return build

    return register


@check(
    name="fft_convolution",
    about="a windowed FFT convolution of 64 signals of 2**16 floats: rfft, a product, irfft",
    kind="trace",
    forbid=(("fusion", "_fft"),),
)
def _fft_convolution(device: str) -> Step:
    x = torch.randn(64, 2**16, device=device)
    k = torch.randn(64, 2**16, device=device)
    window = torch.hann_window(2**16, device=device)

    def step() -> object:
        spectrum = torch.fft.rfft(x * window) * torch.fft.rfft(k)
        return torch.fft.irfft(spectrum, n=x.shape[-1]) * 0.5

    return step


@check(
    name="stft_magnitude",
    about="the magnitude of an STFT of 32 signals of 2**18 floats (1024-point frames, hop 256)",
    kind="trace",
    forbid=(("fusion", "_fft"), ("fusion", "stft")),
)
def _stft(device: str) -> Step:
    x = torch.randn(32, 2**18, device=device)
    window = torch.hann_window(1024, device=device)
    return lambda: torch.stft(x, 1024, 256, window=window, return_complex=True).abs()


@check(
    name="decode_gemv",
    about="a decode step's projections: 8 GEMMs of [4, 1024] x [1024, 1024] bf16 (4 requests)",
    kind="trace",
    cause="too little work",
    op="aten::mm",
    fix="more requests per step",
    forbid=(("tile quantisation", ""),),
    why=("aten::mm", "reading its weights"),
)
def _decode_gemv(device: str) -> Step:
    weights = [torch.randn(1024, 1024, device=device, dtype=torch.bfloat16) for _ in range(8)]
    x = torch.randn(4, 1024, device=device, dtype=torch.bfloat16)

    def step() -> object:
        h = x
        for w in weights:
            h = h @ w
        return h

    return step


@check(
    name="one_bf16_matmul",
    about="a cell that is one 8192^3 bf16 matmul (near the roof): its idle is its own start",
    kind="trace",
    forbid=(("host stall", ""), ("launch overhead", "")),
)
def _one_matmul(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    return lambda: a @ b


@check(
    name="tiny_fp32_mlp",
    about="the tour's launch-bound MLP: 20 Linear(64, 64) on an [8, 64] float32 input, TF32 off "
    "(torch's default): cuBLAS's small-N kernels, which TF32 makes slower",
    kind="trace",
    cause="launch overhead",
    op="aten::addmm",
    fix="CUDA Graph",
    forbid=(("fp32 without tensor cores", ""),),
    why=("aten::addmm", "TF32 would not shorten it"),
)
def _tiny_fp32_mlp(device: str) -> Step:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(20)]).to(device)
    x = torch.randn(8, 64, device=device)

    def step() -> object:
        with torch.no_grad():
            return model(x)

    return step


@check(
    name="int8_int_mm",
    about="torch._int_mm of 8192^3 int8, both operands row-major",
    kind="trace",
    why=("aten::_int_mm", "kernel"),
)
def _int_mm(device: str) -> Step:
    a = torch.randint(-128, 127, (8192, 8192), device=device, dtype=torch.int8)
    b = torch.randint(-128, 127, (8192, 8192), device=device, dtype=torch.int8)
    return lambda: torch._int_mm(a, b)  # pyright: ignore[reportPrivateImportUsage]  # the public int8 GEMM


@check(
    name="sweep_knee_beyond",
    about="a sweep of a step with a fixed 5 ms of host work (a small matmul after it): "
    "throughput still doubles at the largest size",
    kind="sweep",
    sizes=(1, 2, 4, 8),
    says="knee lies beyond",
    gpu=False,
)
def _launch_bound_sizes(device: str) -> Callable[[int], object]:
    w = torch.randn(64, 64, device=device)

    def step(n: int) -> object:
        time.sleep(0.005)  # host work that does not grow with the size (a fixed 5 ms)
        return torch.randn(n, 64, device=device) @ w

    return step


@check(
    name="sweep_flat_fit",
    about="a sweep whose peak memory is 4 GB of weights held plus under 1 kB per item",
    kind="sweep",
    sizes=(8, 16, 32, 64),
    says="fit is flat",
)
def _flat_memory_sizes(device: str) -> Callable[[int], object]:
    held = torch.empty(int(3.85e9) // 4, device=device)  # weights, allocated before the step
    w = torch.randn(224, 224, device=device)

    def step(n: int) -> object:
        return (torch.randn(n, 224, device=device) @ w).sum() + held[0]

    return step


@check(
    name="warmup_first_runs",
    about="a step whose first two calls build a table (lazy set-up): slow after a one-run warm-up",
    kind="timing",
    says="warmup",
    gpu=False,
)
def _lazy_setup(device: str) -> Callable[[], object]:
    calls = []
    x = torch.randn(256, 256, device=device)

    def step() -> object:
        calls.append(1)
        if len(calls) <= 2:
            time.sleep(0.3)  # a first call's set-up: a compilation, a file read, a cache
        return x @ x

    return step


HERE = Path(__file__).resolve().parent
RECORDED = HERE.parent / "tests" / "data" / "advice_cases"


def record(names: list[str] | None = None, out=RECORDED) -> list[str]:
    """Record each check (``names``: all) into ``out``: a trace and its meta where there is a
    GPU (bench/h200_record.py's ``record``), a sweep's points, a timing's runs."""
    import gzip
    import json
    import sys
    import traceback

    sys.path.insert(0, str(HERE))
    import jupyter_brrr

    gpu = torch.cuda.is_available()
    device = "cuda" if gpu else "cpu"
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, item in CHECKS.items():
        if names and name not in names:
            continue
        if item.gpu and not gpu:
            lines.append(f"{name}: skipped (needs a GPU)")
            print(lines[-1], flush=True)
            continue
        try:
            if item.kind == "trace":
                import h200_record

                h200_record.record(
                    item.build(device), out / f"{name}.json.gz", {"case": name, "version": "slow"}
                )
                meta = json.loads((out / f"{name}.meta.json").read_text())
                lines.append(f"{name}: {meta['event_median_s'] * 1e3:.3f} ms/step")
            elif item.kind == "sweep":
                result = jupyter_brrr.sweep(item.build(device), list(item.sizes), repeat=5)
                doc = result.to_dict()
                doc["capacity_bytes"] = (result.fit or {}).get("capacity_bytes")
                with gzip.open(out / f"{name}.sweep.json.gz", "wt") as f:
                    json.dump(doc, f)
                lines.append(f"{name}: {len(result.points)} sizes, knee {result.knee}")
            else:
                # Exactly one warm-up run (burst: no sustained GPU warm-up after it).
                report = jupyter_brrr.profile(item.build(device), warmup=1, repeat=6, burst=True)
                runs = {"device": device, "times_s": list(report.summary["run_spans_s"] or [])}
                (out / f"{name}.timing.json").write_text(json.dumps(runs, indent=1))
                lines.append(f"{name}: {len(runs['times_s'])} timed runs")
        except Exception as error:  # one check's failure must not stop the others
            lines.append(f"{name}: FAILED {type(error).__name__}: {str(error)[:300]}")
            traceback.print_exc()
        finally:
            if gpu:
                torch.cuda.empty_cache()
        print(lines[-1], flush=True)
    return lines


def try_fixes(names: list[str] | None = None, budget_s: float = 2.0, keep: str = "") -> list[dict]:
    """Profile each trace check as ``jupyter_brrr.profile`` does, try every recommendation's
    automatic fix (``jupyter_brrr.try_fix``) and print case, advice, predicted, measured and
    verdict: the table of bench/RESULTS.md. Needs a GPU for the figures to mean anything.

    ``keep``: a folder where each case's report (``NAME.json`` and its trace) and every row
    (``fixes.json``) are written, so that predictions can be checked again without a GPU
    (``--replay-fixes FOLDER``)."""
    import json

    import jupyter_brrr
    from jupyter_brrr.actions.fixes import FIX_OF_CAUSE

    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = []
    print("| case | advice | fix | predicted ms | measured ms | verdict | step ms |")
    print("|---|---|---|---|---|---|---|")
    for name, item in CHECKS.items():
        if item.kind != "trace" or (names and name not in names):
            continue
        try:
            step = item.build(device)
            report = jupyter_brrr.profile(step, warmup=3, repeat=10)
            assert isinstance(report, jupyter_brrr.Report)
            span = float(report.summary["span_s"])
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                report.save(Path(keep) / f"{name}.json")
            for n, recommendation in enumerate(report.recommendations):
                if recommendation["cause"] not in FIX_OF_CAUSE:
                    continue
                entry = jupyter_brrr.try_fix(report, n, step, budget_s=budget_s)
                row = {"case": name, "rank": n + 1, "advice": recommendation["title"]}
                row.update(entry, step_s=span)
                rows.append(row)
                print_fix_row(name, n + 1, recommendation["title"], entry, span)
        except Exception as error:  # one case's failure must not stop the table
            print(f"| {name} | FAILED {type(error).__name__}: {str(error)[:200]} | | | | | |")
        finally:
            step = None
            if device == "cuda":
                torch.cuda.empty_cache()
    if keep:
        Path(keep, "fixes.json").write_text(json.dumps(rows, indent=1, default=str))
    print_fix_summary(rows, "case")
    return rows


def reanalyse(folder: Path, name: str):
    """The report of case ``name`` kept by ``try_fixes(keep=folder)``, analysed again from its
    trace with the current code: the span and math mode the capture measured (from the kept
    ``NAME.json``), the trace's events (``NAME.trace.json.gz``), no GPU needed."""
    import json

    from jupyter_brrr.analysis import analyze as analysis
    from jupyter_brrr.analysis import step_graph
    from jupyter_brrr.costs import peaks as peak_table
    from jupyter_brrr.report.report import Report
    from jupyter_brrr.trace import events

    kept = json.loads((folder / f"{name}.json").read_text())
    summary = kept["summary"]
    trace = events.read_trace(folder / f"{name}.trace.json.gz")
    peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
    result = analysis.analyze(
        trace,
        peaks,
        span_s=summary["span_s"],
        span_source=summary.get("span_source") or "trace",
        math_mode=(summary.get("math_mode") or {}).get("settings"),
    )
    result.graph = step_graph.build(trace, result.kernels)
    return Report.from_analysis(result, name=name)


def replay_fixes(folder: str, names: list[str] | None = None) -> list[dict]:
    """The table of ``try_fixes`` again from what it kept in ``folder`` (``--keep``), without a
    GPU: each case's trace analysed again and each fix's saving predicted with the current code,
    beside the saving the H200 measured then. The verdict follows the new prediction (a
    measured gain is what it was); ``rank`` is the recommendation's rank now."""
    import json

    from jupyter_brrr.actions import fixes

    where = Path(folder)
    kept = json.loads((where / "fixes.json").read_text())
    reports: dict = {}
    rows = []
    print("| case | advice | fix | predicted ms (then) | measured ms | verdict | step ms |")
    print("|---|---|---|---|---|---|---|")
    for old in kept:
        name = old["case"]
        if names and name not in names:
            continue
        if name not in reports:
            reports[name] = reanalyse(where, name)
        report = reports[name]
        row = dict(old, predicted_then_s=old.get("predicted_s"))
        # A fix the replay now rules out (it cannot pay) is still predicted, beside what it
        # measured then: rank "x".
        found = [
            (n, r)
            for n, r in [*enumerate(report.recommendations), *((None, r) for r in report.ruled_out)]
            if fixes.FIX_OF_CAUSE.get(r["cause"]) == old["fix"]
        ]
        if found:
            n, recommendation = found[0]
            row.update(rank=n + 1 if n is not None else "x", advice=recommendation["title"])
            row["predicted_s"] = fixes.predicted_saving(report, recommendation, old["base_s"])
            if old["verdict"] in ("confirmed", "smaller than predicted"):
                row["verdict"] = fixes.judge_gain(row["predicted_s"], old["measured_high_s"])
        else:
            row.update(rank=None, predicted_s=None)
        rows.append(row)
        print(
            f"| {name} | {row['rank'] or '-'}. {row['advice'][:60]} | {row['fix']} | "
            f"{ms(row['predicted_s'])} ({ms(row['predicted_then_s'])}) | "
            f"{ms(row['measured_s'])} | {row['verdict']} | {row['step_s'] * 1e3:.3g} |"
        )
    # The fixes the current code has that the kept run did not try (a new variant, a new
    # recommendation): predicted at the kept report's span, nothing measured yet.
    tried = {(r["case"], r["fix"]) for r in kept}
    for path in sorted(where.glob("*.trace.json.gz")):
        name = path.name.removesuffix(".trace.json.gz")
        if names and name not in names:
            continue
        report = reports.get(name) or reanalyse(where, name)
        span = float(report.summary["span_s"])
        for n, recommendation in enumerate(report.recommendations):
            fix = fixes.FIX_OF_CAUSE.get(recommendation["cause"])
            if fix is None or (name, fix) in tried:
                continue
            tried.add((name, fix))
            predicted = fixes.predicted_saving(report, recommendation, span)
            print(
                f"| {name} | {n + 1}. {recommendation['title'][:60]} | {fix} | "
                f"{ms(predicted)} (-) | - | not tried then | {span * 1e3:.3g} |"
            )
    print_fix_summary(rows, "case")
    return rows


def ms(value: object) -> str:
    return f"{value * 1e3:.3g}" if isinstance(value, float) else "-"


def print_fix_row(where: object, rank: int, title: str, entry: dict, span_s: float) -> None:
    """One row of the Try table: where (case or cell), advice, fix, predicted and measured
    saving in ms, verdict, the step's span."""
    print(
        f"| {where} | {rank}. {title[:60]} | {entry['fix']} | "
        f"{ms(entry.get('predicted_s'))} | {ms(entry.get('measured_s'))} | "
        f"{entry['verdict']} | {span_s * 1e3:.3g} |",
        flush=True,
    )


def print_fix_summary(rows: list[dict], where: str) -> None:
    """The Try table's last lines: the median |predicted - measured| over the step time of the
    rows with both, and the first recommendations refuted by their own Try (``row[where]``)."""
    import statistics

    errors = [
        abs(r["predicted_s"] - r["measured_s"]) / r["step_s"]
        for r in rows
        if isinstance(r.get("predicted_s"), float) and isinstance(r.get("measured_s"), float)
    ]
    if errors:
        print(
            f"median |predicted - measured| / step time over {len(errors)} fixes: "
            f"{statistics.median(errors):.1%}"
        )
    first_refuted = [r[where] for r in rows if r["rank"] == 1 and r["verdict"] == "refuted"]
    print(f"first recommendations refuted by their own Try: {first_refuted or 'none'}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=record.__doc__)
    parser.add_argument("--record", action="store_true", help="record the checks")
    parser.add_argument(
        "--try-fixes", action="store_true", help="try every automatic fix, print the table"
    )
    parser.add_argument(
        "--replay-fixes",
        default="",
        metavar="FOLDER",
        help="the --try-fixes table again from a --keep folder, predicted by the current code "
        "(no GPU needed)",
    )
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    parser.add_argument("--keep", default="", help="with --try-fixes: keep reports and rows here")
    args = parser.parse_args()
    only = [n for n in args.only.split(",") if n] or None
    if args.record:
        record(only)
    elif args.try_fixes:
        try_fixes(only, keep=args.keep)
    elif args.replay_fixes:
        replay_fixes(args.replay_fixes, only)
    else:
        for name, item in CHECKS.items():
            print(f"{name} [{item.kind}{', GPU' if item.gpu else ''}]: {item.about}")
