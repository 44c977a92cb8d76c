"""What %%brrr costs on top of the bare profiler: a cell's wall time under %%brrr (capture,
analysis, display with every representation) against the same cell under a bare
``torch.profiler.profile`` plus ``key_averages()``, side by side in one run.

    python bench/magic_overhead.py [--repeat 5] [--device cpu|cuda]

Target (issue 2): brrr <= 1.2 x bare + 0.5 s. A second row times a named run
(``%%brrr --name``: the comparison with the previous run and the history store, kept in a
temporary folder), against the same budget.
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
    args = parser.parse_args()

    from IPython.core.formatters import format_display_data
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    ip = start_ipython()
    ip.run_line_magic("load_ext", "jupyter_brrr")
    ip.run_cell(SETUP.format(device=args.device))
    # One of each first, so imports and first-call costs stay out of both.
    ip.run_cell(BARE)
    with capture_output():
        ip.run_cell_magic("brrr", "--quiet", CELL)

    def timed_brrr(line: str) -> float:
        start = time.perf_counter()
        with capture_output():
            ip.run_cell_magic("brrr", line, CELL)
            # --quiet skips display: format the report as the notebook would, every representation.
            format_display_data(ip.user_ns["_brrr"])
        return time.perf_counter() - start

    bare, brrr, named = [], [], []
    home = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the named runs' store goes beside "the notebook": here, a temp folder
        try:
            timed_brrr("--quiet --name bench")  # the first named run has nothing to compare
            for _ in range(args.repeat):
                start = time.perf_counter()
                ip.run_cell(BARE)
                bare.append(time.perf_counter() - start)
                brrr.append(timed_brrr("--quiet"))
                named.append(timed_brrr("--quiet --name bench"))
        finally:
            os.chdir(home)
    b = statistics.median(bare)
    budget = 1.2 * b + 0.5
    print(
        "| cell | bare profiler + key_averages (s) | %%brrr incl. display (s) | budget 1.2x + 0.5 s | within |"
    )
    print("| --- | --- | --- | --- | --- |")
    for label, times in (("", brrr), (", --name (vs the previous run)", named)):
        m = statistics.median(times)
        print(
            f"| 4-layer transformer encoder, {args.device}{label} | {b:.3f} | {m:.3f} | {budget:.3f} | {'yes' if m <= budget else 'NO'} |"
        )


if __name__ == "__main__":
    main()
