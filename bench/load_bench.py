"""Trace loading and analysis speed and memory, side by side with Holistic Trace Analysis.

    python bench/load_bench.py --hta-python /path/to/hta-venv/bin/python [--repeat 5]

HTA lives in its own virtual environment (``pip install holistictraceanalysis``), so each tool
runs in a fresh subprocess of its own interpreter: its import is not timed, and peak memory is
the growth of the process's maximum resident set during the load (ru_maxrss after minus before).
Each figure is the median of ``--repeat`` fresh processes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = {
    "V100 ResNet (69k events)": ROOT / "tests/data/v100_resnet_ns.json.gz",
    "H200 ResNet-50 train (22k events)": ROOT / "tests/data/resnet50_train_amp_b64.json.gz",
}

OURS = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import jupyter_brrr, jupyter_brrr.analysis, jupyter_brrr.costs, pandas, numpy, msgspec
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
report = jupyter_brrr.load({path!r})
split = report.split()
seconds = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": seconds, "peak_kb": after - before}}))
"""

HTA = """
import json, logging, resource, sys, time
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
analysis = TraceAnalysis(trace_dir={folder!r})
breakdown = analysis.get_gpu_kernel_breakdown(visualize=False)
seconds = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": seconds, "peak_kb": after - before}}))
"""


def run(python: str, code: str) -> dict:
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(python: str, code: str, repeat: int) -> dict:
    results = [run(python, code) for _ in range(repeat)]
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--hta-python", required=True, help="python of a venv with holistictraceanalysis"
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for label, path in TRACES.items():
        with gzip.open(path) as f:
            raw = f.read()
        events = len(json.loads(raw)["traceEvents"])
        with tempfile.TemporaryDirectory() as folder:
            # HTA reads a folder of rank traces.
            shutil.copy(path, Path(folder) / path.name)
            hta = median_of(args.hta_python, HTA.format(folder=folder), args.repeat)
        ours = median_of(sys.executable, OURS.format(root=str(ROOT), path=str(path)), args.repeat)
        rows.append((label, events, len(raw), ours, hta))
    print(
        "| trace | events | JSON MB | jupyter_brrr s | HTA s | speed-up | jupyter_brrr events/s | peak MB (ours / HTA) | ours peak / JSON |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, events, size, ours, hta in rows:
        print(
            f"| {label} | {events:,} | {size / 1e6:.1f} | {ours['seconds']:.3f} | {hta['seconds']:.3f} | "
            f"{hta['seconds'] / ours['seconds']:.1f}x | {events / ours['seconds']:,.0f} | "
            f"{ours['peak_kb'] / 1e3:.0f} / {hta['peak_kb'] / 1e3:.0f} | {ours['peak_kb'] * 1e3 / size:.2f} |"
        )


if __name__ == "__main__":
    main()
