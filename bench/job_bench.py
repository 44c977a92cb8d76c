"""Loading a job (one trace per rank), side by side with Holistic Trace Analysis' multi-rank load.

    python bench/job_bench.py [--hta-python /path/to/hta-venv/bin/python] [--ranks 8] [--repeat 3]

The ranks are made from a real NCCL rank (tests/data/hta/nccl_a100_rank0_of2.json.gz, 40k events,
A100): its events repeated 2.5 times one after another (ids offset so that links stay
unique) for about 100k events per rank, each rank's clock shifted by a few tens of
microseconds and its ``distributedInfo`` given its rank of ``--ranks``. Written gzipped, in
Kineto's layout, as PyTorch writes them.

Timed in fresh subprocesses of each tool's own interpreter, imports done before the clock
starts, median of ``--repeat`` processes: jupyter_brrr's ``load(folder)`` (each rank read and
analysed in a process of its own, one per CPU up to the rank count; then matched across ranks),
the same with ``workers=1`` (one process, rank after rank), and HTA's
``TraceAnalysis(trace_dir=folder)`` (its parser, a process pool over the ranks).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests/data/hta/nccl_a100_rank0_of2.json.gz"
_ID_KEYS = ("External id", "correlation", "Ev Idx", "Record function id")

SETUP = {
    "ours": f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
    "import jupyter_brrr, jupyter_brrr.report.job, jupyter_brrr.analysis.comms\n",
    "hta": "import logging; logging.disable(logging.CRITICAL)\n"
    "from hta.trace_analysis import TraceAnalysis\n",
}
WORK = {
    "ours": "jupyter_brrr.load({folder!r}).summary",
    "ours-serial": "jupyter_brrr.load({folder!r}, workers=1).summary",
    "hta": "TraceAnalysis(trace_dir={folder!r})",
}
TIMED = """
import json, resource, time
{setup}
def cpu():
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
start, used = time.perf_counter(), cpu()
{work}
print(json.dumps({{"seconds": time.perf_counter() - start, "cpu": cpu() - used}}))
"""


def make_ranks(folder: Path, ranks: int, copies: float = 2.5) -> int:
    """Write ``ranks`` traces into ``folder``; returns the events per rank."""
    with gzip.open(SOURCE) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    start = min(e["ts"] for e in timed)
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - start + 1000.0
    top_id = max(
        (e.get("args", {}).get(k, 0) for e in events for k in _ID_KEYS),
        key=lambda v: v if isinstance(v, (int, float)) else 0,
    )
    repeated = []
    for copy in range(int(copies + 0.999)):
        limit = start + span * min(copies - copy, 1.0)
        for event in events:
            ts = event.get("ts")
            if copy and not isinstance(ts, (int, float)):
                continue  # metadata events once
            if isinstance(ts, (int, float)) and ts > limit:
                continue
            event = json.loads(json.dumps(event))
            if isinstance(ts, (int, float)):
                event["ts"] = ts + copy * span
            for key in _ID_KEYS:
                value = event.get("args", {}).get(key)
                if isinstance(value, int) and value >= 0:
                    event["args"][key] = value + copy * (int(top_id) + 1)
            if "id" in event and isinstance(event["id"], int):
                event["id"] += copy * (int(top_id) + 1)
            repeated.append(event)
    for rank in range(ranks):
        skew = 37.0 * rank  # microseconds: the ranks' clocks disagree a little
        rank_events = [
            {**e, "ts": e["ts"] + skew} if isinstance(e.get("ts"), (int, float)) else e
            for e in repeated
        ]
        info = dict(doc["distributedInfo"], rank=rank, world_size=ranks)
        info["pg_config"] = [dict(info["pg_config"][0], pg_size=ranks, ranks=list(range(ranks)))]
        header = {k: v for k, v in doc.items() if k != "traceEvents"}
        header["distributedInfo"] = info
        with gzip.open(folder / f"rank{rank}_of{ranks}.json.gz", "wt") as f:
            f.write(_kineto_layout(header, rank_events))
    return len(repeated)


def _kineto_layout(header: dict, events: list[dict]) -> str:
    """The document as Kineto writes it: the events one object per block at two spaces of
    indent (the layout whose chunks the reader cuts without parsing)."""
    head = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in header.items())
    body = ",\n".join("  {\n    " + json.dumps(e)[1:-1] + "\n  }" for e in events)
    return "{\n" + head + ',\n  "traceEvents": [\n' + body + "\n  ]\n}"


def run(python: str, code: str) -> dict:
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(python: str, tool: str, folder: str, repeat: int) -> list[dict]:
    code = TIMED.format(setup=SETUP[tool.split("-")[0]], work=WORK[tool].format(folder=folder))
    return [run(python, code) for _ in range(repeat)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--hta-python", help="python of a venv with holistictraceanalysis (left out: no HTA row)"
    )
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tools = ("ours", "ours-serial", "hta") if args.hta_python else ("ours", "ours-serial")
    with tempfile.TemporaryDirectory() as folder:
        count = make_ranks(Path(folder), args.ranks)
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
        runs = {
            tool: measure(
                args.hta_python if tool == "hta" else sys.executable, tool, folder, args.repeat
            )
            for tool in tools
        }
    print(
        f"{args.ranks} ranks x {count:,} events ({size / 1e6:.1f} MB gzipped in all), "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; median of "
        f"{args.repeat} processes (min-max). CPU s: user + system time of the process and its "
        "children, what the load costs on an idle machine of any size."
    )
    print("| tool | load s | CPU s | vs HTA (load s) |")
    print("| --- | --- | --- | --- |")
    labels = {
        "ours": "jupyter_brrr load(folder), ranks in parallel processes",
        "ours-serial": "jupyter_brrr load(folder, workers=1)",
        "hta": "HTA TraceAnalysis(trace_dir=folder)",
    }
    hta = statistics.median(r["seconds"] for r in runs["hta"]) if "hta" in runs else None
    for tool, results in runs.items():
        seconds = [r["seconds"] for r in results]
        median = statistics.median(seconds)
        cpu = statistics.median(r["cpu"] for r in results)
        versus = f"{hta / median:.1f}x" if hta else "-"
        print(
            f"| {labels[tool]} | {median:.2f} ({min(seconds):.2f}-{max(seconds):.2f}) | "
            f"{cpu:.2f} | {versus} |"
        )


if __name__ == "__main__":
    main()
