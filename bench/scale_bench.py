"""Trace loading at scale: the V100 trace repeated N times end to end, loaded and analysed.

    python bench/scale_bench.py [--copies 1,2,5] [--repeat 3] [--layouts kineto,compact]
    python bench/scale_bench.py --copies 58 --layouts kineto --folder big --write-only

Each copy is shifted in time by the trace's span and its correlation / External ids by an
offset, so that the result is one longer run, written in each layout: ``kineto`` (Kineto's own:
one event per object at two spaces of indent, cut into chunks at its separator) and
``compact`` (``json.dumps`` without spaces or newlines, as other tools write traces: cut into
chunks by structure, ``_scan.split``). Each load runs in a fresh process. Prints, per size and
layout, the events, the JSON size, the load time (``load().split()``, best of ``--repeat``
after two loads to warm up), events per second, the peak traced by tracemalloc, and the growth
of the resident memory during the process's first load (sampled every millisecond, less what
the process held after its imports; Linux only), each against the JSON's size: the figures
should grow linearly, the memory ratios stay flat, and compact JSON stay within 1.5x the file
and 2x Kineto's time (issue 11). The files are written copy by copy (``write_streamed``), so a
gigabyte's worth needs no more memory than the trace itself; ``--folder`` keeps them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
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
    """Kineto's layout: the other members first (the device properties with them, so that both
    layouts carry the same content), then one event per object at two spaces of indent."""
    with path.open("w") as f:
        f.write("{\n")
        for key, value in doc.items():
            if key != "traceEvents":
                f.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        f.write('  "traceEvents": [\n')
        f.write(
            ",\n".join(
                "  " + json.dumps(e, indent=2).replace("\n", "\n  ") for e in doc["traceEvents"]
            )
        )
        f.write("\n  ]\n}\n")


def write_compact(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(doc, separators=(",", ":")))


WRITERS = {"kineto": write_kineto_layout, "compact": write_compact}

# Placeholders for the values that change from copy to copy, in an event's text template.
_SHIFTED = {
    "ts": "@@ts@@",
    "id": "@@id@@",
    "correlation": "@@correlation@@",
    "External id": "@@xid@@",
}


def _template(event: dict, layout: str) -> tuple[list[str], list[tuple[str, float]]]:
    """An event's text cut around its shifted values: (the text pieces, (key, value) per gap)."""
    event, shifted = dict(event), []
    if isinstance(event.get("ts"), (int, float)):
        shifted.append(("ts", event["ts"]))
        event["ts"] = _SHIFTED["ts"]
    if isinstance(event.get("id"), int):
        shifted.append(("id", event["id"]))
        event["id"] = _SHIFTED["id"]
    if isinstance(event.get("args"), dict):
        event["args"] = dict(event["args"])
        for key in ("correlation", "External id"):
            if isinstance(event["args"].get(key), int):
                shifted.append((key, event["args"][key]))
                event["args"][key] = _SHIFTED[key]
    if layout == "kineto":
        text = "  " + json.dumps(event, indent=2).replace("\n", "\n  ")
    else:
        text = json.dumps(event, separators=(",", ":"))
    order = {f'"{mark}"': key for key, mark in _SHIFTED.items()}
    pieces = re.split("(" + "|".join(map(re.escape, order)) + ")", text)
    keys = [order[piece] for piece in pieces[1::2]]
    values = dict(shifted)
    return pieces[0::2], [(key, values[key]) for key in keys]


def write_streamed(doc: dict, copies: int, layout: str, path: Path) -> None:
    """What ``WRITERS[layout](repeated(doc, copies), path)`` writes, streamed copy by copy, so that
    a file of gigabytes is written without holding its events (``--keep``)."""
    events = doc["traceEvents"]
    times = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(times) - min(times) + 1000
    templates = [_template(e, layout) for e in events]
    with path.open("w") as f:
        if layout == "kineto":
            f.write("{\n")
            for key, value in doc.items():
                if key != "traceEvents":
                    f.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
            f.write('  "traceEvents": [\n')
            head, tail, between = "", "\n  ]\n}\n", ",\n"
        else:
            marker = "@@events@@"
            head, tail = json.dumps({**doc, "traceEvents": marker}, separators=(",", ":")).split(
                json.dumps(marker)
            )
            head, between = head + "[", ","
            tail = "]" + tail
        f.write(head)
        for k in range(copies):
            out = []
            for pieces, shifted in templates:
                text = [pieces[0]]
                for piece, (key, value) in zip(pieces[1:], shifted, strict=True):
                    shift = k * span if key == "ts" else k * ID_OFFSET
                    text += (json.dumps(value + shift), piece)
                out.append("".join(text))
            f.write(between * (k > 0) + between.join(out))
        f.write(tail)


# Loads measured in a process of their own: first the growth of the resident memory during
# one load (sampled every millisecond from /proc, against what the process held after its
# imports), then the peak traced by tracemalloc during a second, then the best time of more.
MEASURE = """
import json, os, resource, sys, threading, time, tracemalloc
sys.path.insert(0, {root!r})
import jupyter_brrr, jupyter_brrr.analysis.analyze, jupyter_brrr.trace.events
import jupyter_brrr.report.report
page = os.sysconf("SC_PAGE_SIZE")
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
base = peak = resident()
done = False
def sample():
    global peak
    while not done:
        peak = max(peak, resident())
        time.sleep(0.001)
sampler = threading.Thread(target=sample)
sampler.start()
jupyter_brrr.load({path!r}).split()
done = True
sampler.join()
grown = max(peak, resident()) - base
tracemalloc.start()
jupyter_brrr.load({path!r}).split()
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
best = float("inf")
for _ in range({repeat}):
    start = time.perf_counter()
    jupyter_brrr.load({path!r}).split()
    best = min(best, time.perf_counter() - start)
print(json.dumps({{"best": best, "traced": traced, "grown": grown}}))
"""


def measure(path: Path, repeat: int) -> dict:
    code = MEASURE.format(root=str(ROOT), path=str(path), repeat=repeat)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", default="1,2,5")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layouts", default="kineto,compact")
    parser.add_argument(
        "--folder",
        type=Path,
        help="write the files here and keep them (one already there is reused); default: a "
        "temporary folder, each file deleted once measured",
    )
    parser.add_argument(
        "--write-only", action="store_true", help="write the files into --folder, measure nothing"
    )
    args = parser.parse_args()
    with gzip.open(SOURCE) as f:
        doc = json.load(f)
    if not args.write_only:
        print(
            "| copies | layout | events | JSON MB | load s (best) | events/s | traced peak MB "
            "| traced / JSON | RSS growth MB | RSS growth / JSON |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.folder or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        timed = sum(isinstance(e.get("ts"), (int, float)) for e in doc["traceEvents"])
        for copies in (int(c) for c in args.copies.split(",")):
            n = len(doc["traceEvents"]) * copies
            for layout in args.layouts.split(","):
                path = folder / f"v100_x{copies}.{layout}.json"
                if not path.exists():
                    write_streamed(doc, copies, layout, path)
                size = path.stat().st_size
                if args.write_only:
                    print(f"{path}: {n:,} events ({timed * copies:,} timed), {size / 1e6:.1f} MB")
                    continue
                result = measure(path, args.repeat)
                if args.folder is None:
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
