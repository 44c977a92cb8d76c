"""Trace loading at scale: the V100 trace repeated N times end to end, loaded and analysed.

    python bench/scale_bench.py [--copies 1,2,5] [--repeat 3] [--layouts kineto,compact]

Each copy is shifted in time by the trace's span and its correlation / External ids by an
offset, so that the result is one longer run, written in each layout: ``kineto`` (Kineto's own:
one event per object at two spaces of indent, cut into chunks at its separator) and
``compact`` (``json.dumps`` without spaces or newlines, as other tools write traces: cut into
chunks by structure, ``_scan.split``). Each load runs in a fresh process. Prints, per size and
layout, the events, the JSON size, the load time (``load().split()``, best of ``--repeat``
after one load to warm up), events per second, the peak traced by tracemalloc and the growth
of the process's peak resident memory during the first load (``ru_maxrss`` after it, less
before it), each against the JSON's size: the figures should grow linearly, the memory ratios
stay flat, and compact JSON stay within 1.5x the file and 2x Kineto's time (issue 11).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SOURCE = ROOT / "tests/data/v100_resnet_ns.json.gz"
ID_OFFSET = 10_000_000


def repeated(doc: dict, copies: int) -> dict:
    events = doc["traceEvents"]
    times = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(times) - min(times) + 1000
    out = []
    for k in range(copies):
        for event in events:
            event = dict(event)
            if isinstance(event.get("ts"), (int, float)):
                event["ts"] += k * span
            if isinstance(event.get("id"), int):
                event["id"] += k * ID_OFFSET
            if isinstance(event.get("args"), dict):
                args = dict(event["args"])
                for key in ("correlation", "External id"):
                    if isinstance(args.get(key), int):
                        args[key] += k * ID_OFFSET
                event["args"] = args
            out.append(event)
    return {**doc, "traceEvents": out}


def write_kineto_layout(doc: dict, path: Path) -> None:
    with path.open("w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "traceEvents": [\n')
        f.write(
            ",\n".join(
                "  " + json.dumps(e, indent=2).replace("\n", "\n  ") for e in doc["traceEvents"]
            )
        )
        f.write("\n  ]\n}\n")


def write_compact(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(doc, separators=(",", ":")))


WRITERS = {"kineto": write_kineto_layout, "compact": write_compact}

# One load measured in a process of its own: memory first (the process's peak so far is the
# imports and a small load), then the time of later loads.
MEASURE = """
import json, resource, sys, time, tracemalloc
sys.path.insert(0, {root!r})
import jupyter_brrr
jupyter_brrr.load({small!r}).split()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start()
jupyter_brrr.load({path!r}).split()
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
best = float("inf")
for _ in range({repeat}):
    start = time.perf_counter()
    jupyter_brrr.load({path!r}).split()
    best = min(best, time.perf_counter() - start)
print(json.dumps({{"best": best, "traced": traced, "grown": grown}}))
"""


def measure(path: Path, repeat: int) -> dict:
    code = MEASURE.format(root=str(ROOT), small=str(SOURCE), path=str(path), repeat=repeat)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", default="1,2,5")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layouts", default="kineto,compact")
    args = parser.parse_args()
    with gzip.open(SOURCE) as f:
        doc = json.load(f)
    print(
        "| copies | layout | events | JSON MB | load s (best) | events/s | traced peak MB "
        "| traced / JSON | RSS growth MB | RSS growth / JSON |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for copies in (int(c) for c in args.copies.split(",")):
            big = repeated(doc, copies)
            n = len(big["traceEvents"])
            for layout in args.layouts.split(","):
                path = Path(folder) / f"v100_x{copies}.{layout}.json"
                WRITERS[layout](big, path)
                size = path.stat().st_size
                result = measure(path, args.repeat)
                path.unlink()
                print(
                    f"| {copies} | {layout} | {n:,} | {size / 1e6:.1f} | {result['best']:.3f} | "
                    f"{n / result['best']:,.0f} | {result['traced'] / 1e6:.0f} | "
                    f"{result['traced'] / size:.2f} | {result['grown'] / 1e6:.0f} | "
                    f"{result['grown'] / size:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
