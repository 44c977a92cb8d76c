"""What %%brrr costs on top of the bare profiler: a cell's wall time under %%brrr (capture,
analysis, display with every representation) against the same cell under a bare
``torch.profiler.profile`` plus ``key_averages()``, side by side in one run.

    python bench/magic_overhead.py [--repeat 5] [--device cpu|cuda]

Target (issue 2): brrr <= 1.2 x bare + 0.5 s. A second row times a named run
(``%%brrr --name``: the comparison with the previous run and the history store, kept in a
temporary folder), against the same budget. The module paths (on by default: a range per module
call in the profiled run) are timed against ``--no-modules`` on the encoder and on a 12-block
GPT-like model of named submodules (109 module calls per run), and ``--stack`` (a range
per torch call, with the user's line) on the latter. Each figure is printed as wall time and as
CPU time of the process (all its threads: torch's intra-op pool too), which a loaded machine
disturbs less; ``--encoder-only`` times the encoder's rows alone, and ``--quiet`` adds a row of
``%%brrr --quiet`` without the display, so the display's own cost reads as the difference.

Issue 26's goal: every representation at most 30 ms over the bare run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SETUP = """
import torch
from torch import nn
device = "{device}"
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
model = nn.TransformerEncoder(layer, 4).to(device).eval()
x = torch.randn(8, 128, 256, device=device)
"""
CELL = "with torch.no_grad():\n    y = model(x)\ny.shape"

# 109 module calls per forward: 12 blocks of 9 modules and the Sequential (no fused fast path).
GPT_SETUP = """
class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, h):
        q, k, v = self.qkv(self.ln_1(h)).chunk(3, dim=-1)
        h = h + self.proj(nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))
        return h + self.mlp(self.ln_2(h))

gpt = nn.Sequential(*[Block(256) for _ in range(12)]).to(device).eval()
"""
GPT_CELL = "with torch.no_grad():\n    y = gpt(x)\ny.shape"

BARE = """
from torch.profiler import profile, ProfilerActivity
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
with profile(activities=activities, record_shapes=True) as prof:
    with torch.no_grad():
        y = model(x)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--encoder-only", action="store_true", help="the encoder's rows only")
    parser.add_argument("--quiet", action="store_true", help="a row without the display too")
    args = parser.parse_args()

    from IPython.core.formatters import format_display_data
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    ip = start_ipython()
    ip.run_line_magic("load_ext", "jupyter_brrr")
    ip.run_cell(SETUP.format(device=args.device))
    ip.run_cell(GPT_SETUP)
    gpt_bare = BARE.replace("y = model(x)", "y = gpt(x)")
    # One of each first, so imports and first-call costs stay out of both.
    ip.run_cell(BARE)
    ip.run_cell(gpt_bare)
    with capture_output():
        ip.run_cell_magic("brrr", "--quiet", CELL)
        ip.run_cell_magic("brrr", "--quiet --stack", GPT_CELL)

    def timed_brrr(line: str, cell: str = CELL, shown: bool = True) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        with capture_output():
            ip.run_cell_magic("brrr", line, cell)
            if shown:
                # --quiet skips display: format the report as the notebook would, every
                # representation.
                format_display_data(ip.user_ns["_brrr"])
        return time.perf_counter() - start, time.process_time() - cpu

    def timed_bare(code: str) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        ip.run_cell(code)
        return time.perf_counter() - start, time.process_time() - cpu

    rows: dict[str, list[tuple[float, float]]] = {}
    bare: dict[str, list[tuple[float, float]]] = {"encoder": [], "gpt": []}
    encoder = f"4-layer transformer encoder, {args.device}"
    gpt = f"12-block GPT-like, 109 module calls, {args.device}"
    home = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the named runs' store goes beside "the notebook": here, a temp folder
        try:
            timed_brrr("--quiet --name bench")  # the first named run has nothing to compare
            for _ in range(args.repeat):
                bare["encoder"].append(timed_bare(BARE))
                if args.quiet:
                    rows.setdefault(encoder + ", --quiet (no display)", []).append(
                        timed_brrr("--quiet", shown=False)
                    )
                for label, line in (
                    ("", "--quiet"),
                    (", --name (vs the previous run)", "--quiet --name bench"),
                    (", --no-modules", "--quiet --no-modules"),
                ):
                    rows.setdefault(encoder + label, []).append(timed_brrr(line))
                if args.encoder_only:
                    continue
                bare["gpt"].append(timed_bare(gpt_bare))
                for label, line in (
                    (" (module paths)", "--quiet"),
                    (", --no-modules", "--quiet --no-modules"),
                    (", --stack", "--quiet --stack"),
                ):
                    rows.setdefault(gpt + label, []).append(timed_brrr(line, GPT_CELL))
        finally:
            os.chdir(home)
    print(
        "| cell | bare profiler + key_averages: wall / CPU (s) | %%brrr incl. display: wall / CPU (s) "
        "| over bare: wall / CPU (ms) | budget 1.2x + 0.5 s | within |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for label, times in rows.items():
        base = bare["gpt" if label.startswith("12-block") else "encoder"]
        b, b_cpu = (statistics.median(t[k] for t in base) for k in (0, 1))
        m, m_cpu = (statistics.median(t[k] for t in times) for k in (0, 1))
        budget = 1.2 * b + 0.5
        print(
            f"| {label} | {b:.3f} / {b_cpu:.3f} | {m:.3f} / {m_cpu:.3f} "
            f"| {1e3 * (m - b):.0f} / {1e3 * (m_cpu - b_cpu):.0f} | {budget:.3f} "
            f"| {'yes' if m <= budget else 'NO'} |"
        )


if __name__ == "__main__":
    main()
