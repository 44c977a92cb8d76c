"""The speeds that tests used to bound by the wall clock, measured here instead (a timed test
fails on a loaded machine; a benchmark reports): costing a trace of 100,000 ops, and the MIME
bundle (HTML, text, pictures) of the ResNet-50 report. Each figure is the median of
``--repeat`` runs in this process, after one warm run (imports, matplotlib's fonts), next to
the budget that the old test held it to.

    python bench/speed_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

import jupyter_brrr  # noqa: E402
from jupyter_brrr.costs.model import add_costs  # noqa: E402
from jupyter_brrr.views import bundle  # noqa: E402

DATA = ROOT / "tests" / "data"
GPT2_TRACE = DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"
RESNET = DATA / "resnet50_train_amp_b64.json.gz"


def _large_ops(rows: int) -> pd.DataFrame:
    """The CPU ops of one GPT-2 step, repeated to ``rows`` rows (as a long trace repeats them)."""
    with gzip.open(GPT2_TRACE, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    frame = pd.DataFrame(
        {
            "name": [e["name"] for e in ops],
            "dims": [e.get("args", {}).get("Input Dims") for e in ops],
            "types": [e.get("args", {}).get("Input type") for e in ops],
            "concrete": [e.get("args", {}).get("Concrete Inputs") for e in ops],
        }
    )
    return pd.concat([frame] * (rows // len(frame) + 1), ignore_index=True)


def _median_s(setup: Callable[[], Any], call: Callable[[Any], Any], repeat: int) -> float:
    """The median time of ``call(setup())``, the setup untimed and fresh for each run."""
    call(setup())  # warm: imports, fonts
    times = []
    for _ in range(repeat):
        made = setup()
        start = time.perf_counter()
        call(made)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    big = _large_ops(100_000)
    rows = [
        (f"add_costs, {len(big):,} ops", _median_s(lambda: big, add_costs, args.repeat), 5.0),
        (
            "bundle.mimebundle, ResNet-50 report (freshly loaded)",
            _median_s(lambda: jupyter_brrr.load(RESNET), bundle.mimebundle, args.repeat),
            1.0,
        ),
    ]
    print(f"| what | median of {args.repeat} (s) | budget (s) |")
    print("|---|---|---|")
    for what, seconds, budget in rows:
        print(f"| {what} | {seconds:.3f} | {budget:g} |")


if __name__ == "__main__":
    main()
