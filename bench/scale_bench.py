"""Trace loading at scale: the V100 trace repeated N times end to end, loaded and analysed.

    python bench/scale_bench.py [--copies 1,2,5] [--repeat 3]

Each copy is shifted in time by the trace's span and its correlation / External ids by an
offset, so that the result is one longer run, written in Kineto's own layout (one event per
object at two spaces of indent, so it is read in chunks like a real file). Prints, per size,
the events, the JSON size, the load time (``load().split()``, best of ``--repeat`` in one
process after one load to warm up), events per second, and the peak traced by tracemalloc
against the JSON's size: the figures should grow linearly, the memory ratio stay flat.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jupyter_brrr  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", default="1,2,5")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(SOURCE) as f:
        doc = json.load(f)
    print("| copies | events | JSON MB | load s (best) | events/s | peak MB | peak / JSON |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for copies in (int(c) for c in args.copies.split(",")):
            big = repeated(doc, copies)
            path = Path(folder) / f"v100_x{copies}.json"
            write_kineto_layout(big, path)
            size = path.stat().st_size
            jupyter_brrr.load(path).split()  # the file in the page cache, the code warm
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                jupyter_brrr.load(path).split()
                best = min(best, time.perf_counter() - start)
            tracemalloc.start()
            jupyter_brrr.load(path)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            n = len(big["traceEvents"])
            print(
                f"| {copies} | {n:,} | {size / 1e6:.1f} | {best:.3f} | {n / best:,.0f} | "
                f"{peak / 1e6:.0f} | {peak / size:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
