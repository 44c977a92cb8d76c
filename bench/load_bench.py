"""Trace loading and analysis speed and memory, side by side with Holistic Trace Analysis.

    python bench/load_bench.py [--hta-python /path/to/hta-venv/bin/python] [--repeat 5]

HTA lives in its own virtual environment (``pip install holistictraceanalysis``), so each tool
runs in fresh subprocesses of its own interpreter, its imports done before the clock starts.
jupyter_brrr: ``load()`` (read, link kernels to ops, cost, analyse); HTA: ``TraceAnalysis`` plus
``get_gpu_kernel_breakdown``. Times: the first load in a process and a second one in the same
process, each the median of ``--repeat`` processes. Memory: the peak traced by ``tracemalloc``
(Python objects and numpy arrays) during one load, in a process of its own. The last column
times jupyter_brrr's reading alone (``events.read_trace``: the event tables, linked, before
costs and analysis), second load, for the events-per-second figure of the reader.
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

_OURS = (
    f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
    "import jupyter_brrr, jupyter_brrr.analysis.analyze, jupyter_brrr.trace.events\n"
    "import jupyter_brrr.report.report\n"
)
SETUP = {
    "ours": _OURS,
    "ours-read": _OURS,
    "hta": "import logging; logging.disable(logging.CRITICAL)\n"
    "from hta.trace_analysis import TraceAnalysis\n",
}
WORK = {
    "ours": "jupyter_brrr.load({path!r}).split()",
    "ours-read": "jupyter_brrr.trace.events.read_trace({path!r})",
    "hta": "TraceAnalysis(trace_dir={folder!r}).get_gpu_kernel_breakdown(visualize=False)",
}
TIMED = """
import json, time
{setup}
start = time.perf_counter(); {work}; first = time.perf_counter() - start
start = time.perf_counter(); {work}; second = time.perf_counter() - start
print(json.dumps({{"first": first, "second": second}}))
"""
TRACED = """
import json, tracemalloc
{setup}
tracemalloc.start(); {work}
print(json.dumps({{"peak": tracemalloc.get_traced_memory()[1]}}))
"""


def run(python: str, code: str) -> dict:
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(python: str, tool: str, repeat: int, memory: bool = True, **where: str) -> dict:
    work = WORK[tool].format(**where)
    times = [run(python, TIMED.format(setup=SETUP[tool], work=work)) for _ in range(repeat)]
    result = {key: statistics.median(t[key] for t in times) for key in ("first", "second")}
    if memory:
        result["peak"] = run(python, TRACED.format(setup=SETUP[tool], work=work))["peak"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--hta-python",
        default=None,
        help="python of a venv with holistictraceanalysis (without it, jupyter_brrr alone)",
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from jupyter_brrr.trace import events

    reader = "compiled (jupyter_brrr._scan)" if events._scan else "msgspec alone (_scan not built)"
    print(f"jupyter_brrr's reader: {reader}, up to {events._PENDING_CHUNKS} chunks at once")
    rows = []
    for label, path in TRACES.items():
        with gzip.open(path) as f:
            raw = f.read()
        count = len(json.loads(raw)["traceEvents"])
        hta = {"first": float("nan"), "second": float("nan"), "peak": float("nan")}
        if args.hta_python:
            with tempfile.TemporaryDirectory() as folder:
                shutil.copy(path, Path(folder) / path.name)  # HTA reads a folder of rank traces
                hta = measure(args.hta_python, "hta", args.repeat, folder=folder)
        ours = measure(sys.executable, "ours", args.repeat, path=str(path))
        ours["read"] = measure(sys.executable, "ours-read", args.repeat, False, path=str(path))
        rows.append((label, count, len(raw), ours, hta))
    print(
        "| trace | events | JSON MB | first load s (ours / HTA) | speed-up | second load s "
        "(ours / HTA) | speed-up | ours events/s (second) | peak MB (ours / HTA) | ours peak / JSON "
        "| ours, reading only: s (events/s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, count, size, ours, hta in rows:
        print(
            f"| {label} | {count:,} | {size / 1e6:.1f} | {ours['first']:.3f} / {hta['first']:.3f} | "
            f"{hta['first'] / ours['first']:.1f}x | {ours['second']:.3f} / {hta['second']:.3f} | "
            f"{hta['second'] / ours['second']:.1f}x | {count / ours['second']:,.0f} | "
            f"{ours['peak'] / 1e6:.0f} / {hta['peak'] / 1e6:.0f} | {ours['peak'] / size:.2f} | "
            f"{ours['read']['second']:.3f} ({count / ours['read']['second']:,.0f}) |"
        )


if __name__ == "__main__":
    main()
