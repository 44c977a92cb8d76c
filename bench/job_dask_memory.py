"""The memory of a job read on Dask workers, against one rank read alone (issue 26, the ``dask`` extra).

    python bench/job_dask_memory.py [--ranks 8] [--workers 2]

A job read on a cluster should need, on each worker, about what one rank's reading needs: the
worker reads its ranks one after another and sends back each rank's report, so nothing of a
rank's trace should stay behind. This writes the same job as ``bench/job_bench.py`` (``--ranks``
ranks of ~100k events each), then, each in fresh processes:

- **one rank alone**: a process that imports jupyter_brrr and reads one rank (``read_rank``,
  what a worker runs per task): its RSS after the imports, and its peak while reading;
- **the job on a local cluster** of ``--workers`` worker processes (one thread each, a memory
  limit of 1.5 GiB as in ``tests/test_job_dask.py``): each worker's RSS once it has imported the
  reading, its peak over ``load(folder, executor=client)``, its RSS after, and how many ranks it
  read.

The bound the issue asks for, memory bounded by one rank: each worker's peak over its own start
at most what one rank needs (the one-rank process' peak over its RSS after the imports, plus
the rank's result, which the worker holds pickled while it sends it), however many ranks it
reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from job_bench import make_ranks  # noqa: E402

# Peaks are the kernel's high-water mark of this process' memory (VmHWM), reset where the
# measured part starts. (``ru_maxrss`` would not do: a process started by fork and exec keeps
# its parent's high-water mark, so a worker's reads the peak of the script that started it.)
MEMORY = """
def rss():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
    kb = lambda name: int(fields[name].split()[0]) * 1024
    return {"rss": kb("VmRSS"), "peak_rss": kb("VmHWM")}

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the present RSS
"""

ONE_RANK = """
import json, sys
sys.path.insert(0, {root!r})
{memory}
import jupyter_brrr, jupyter_brrr.report.job as job
reset_peak()
before = rss()["rss"]
report = job.read_rank({path!r}, None, None)
peak = rss()["peak_rss"]
import pickle
print(json.dumps({{"imports_rss": before, "peak_rss": peak,
                  "result_bytes": len(pickle.dumps(report, protocol=5))}}))
"""

ON_CLUSTER = """
import json, sys
sys.path.insert(0, {root!r})
from distributed import Client, LocalCluster, get_task_stream
import jupyter_brrr, jupyter_brrr.report.job
{memory}
def warm():  # what a worker holds before its first task: the imports of the reading
    import jupyter_brrr, jupyter_brrr.report.job  # noqa: F401
    reset_peak()
    return rss()

cluster = LocalCluster(n_workers={workers}, threads_per_worker=1, processes=True,
                       memory_limit="1.5GiB", dashboard_address=None)
with cluster, Client(cluster) as client:
    start = client.run(warm)
    with get_task_stream(client) as stream:
        job = jupyter_brrr.load({folder!r}, executor=client)
    after = client.run(rss)
    tasks = {{}}
    for task in stream.data:
        if task["key"].startswith("read_rank"):
            tasks[task["worker"]] = tasks.get(task["worker"], 0) + 1
    print(json.dumps({{"ranks": len(job.reports), "start": start, "after": after,
                      "tasks": tasks}}))
"""


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def mb(value: float) -> str:
    return f"{value / 1e6:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        count = make_ranks(Path(folder), args.ranks)
        first = sorted(Path(folder).iterdir())[0]
        one = run(ONE_RANK.format(root=str(ROOT), memory=MEMORY, path=str(first)))
        cluster = run(
            ON_CLUSTER.format(root=str(ROOT), memory=MEMORY, folder=folder, workers=args.workers)
        )
    one_rank = one["peak_rss"] - one["imports_rss"]
    # A worker also holds the rank's result while it sends it (pickled) and its own buffers.
    bound = one_rank + one["result_bytes"]
    print(
        f"{args.ranks} ranks x {count:,} events, a local cluster of {args.workers} worker "
        f"processes (1 thread each), {os.cpu_count()} CPUs; {cluster['ranks']} rank reports."
    )
    print(
        f"One rank read alone: RSS {mb(one['imports_rss'])} after the imports, peak "
        f"{mb(one['peak_rss'])}: the reading needs {mb(one_rank)}; its result pickles to "
        f"{mb(one['result_bytes'])}. Bound per worker: {mb(bound)} (reading + result)."
    )
    print("| worker | ranks read | RSS before | peak | peak - before | vs the bound | RSS after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for number, (worker, start) in enumerate(sorted(cluster["start"].items())):
        after = cluster["after"][worker]
        grown = after["peak_rss"] - start["rss"]
        worst = max(worst, grown / bound)
        print(
            f"| {number} | {cluster['tasks'].get(worker, 0)} | {mb(start['rss'])} | "
            f"{mb(after['peak_rss'])} | {mb(grown)} | {grown / bound:.2f}x | "
            f"{mb(after['rss'])} |"
        )
    verdict = "within" if worst <= 1.0 else "NOT within"
    print(
        f"Largest worker growth {worst:.2f}x the bound of one rank (its reading and its "
        f"result): {verdict}. Run with twice the --ranks: a worker that keeps what it read "
        "grows with the ranks it reads; one bounded by a rank does not."
    )


if __name__ == "__main__":
    main()
