"""Record real traces and hardware facts on a GPU, for the CPU tests and the cost-model work.

    python bench/h200_record.py --out DIR [--budget-s 420] [--parts zoo,cases,clocks,ncu,ranks]

Writes, under DIR:
- ``zoo.tar``: one Kineto trace per zoo model (``bench/zoo_models.py``), recorded as ``%%brrr``
  records (CPU + CUDA activities, shapes), after warm-up, with ``<name>.meta.json``: the median
  time of one step by CUDA events without the profiler, the math-mode settings, torch's version;
- ``cases.tar``: the same for each advice case (``bench/advice_cases.py``), slow and fixed;
- ``clocks.json``: per-run times, SM clock and power over 40 sustained runs of a compute-bound
  model (does the clock drop at the power limit, and when);
- ``ncu.tar``: Nsight Compute's DRAM bytes and duration per kernel for one step of a few zoo
  models, with the kernel order of the trace of the same step, to referee the byte model;
- ``ranks.tar``: per-rank traces of a 2-rank DDP job with the gloo backend sharing the GPU.

Only torch and the standard library: this records data; it does not use jupyter_brrr.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import advice_cases  # noqa: E402
import zoo_models  # noqa: E402


def event_times(step, reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return times


def record(step, path: Path, meta: dict) -> None:
    """Warm up, time without the profiler, profile one step, write the trace and its meta."""
    t0 = time.perf_counter()
    step()  # the first call: compilation, cuDNN/cuBLAS handles
    torch.cuda.synchronize()
    meta["first_call_s"] = time.perf_counter() - t0
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = event_times(step, 15)
    meta["event_median_s"] = statistics.median(times)
    meta["event_times_s"] = times
    meta["math_mode"] = zoo_models.math_mode()
    meta["torch"] = torch.__version__
    meta["device"] = torch.cuda.get_device_name()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        step()
        torch.cuda.synchronize()
    meta["allocated_before_bytes"] = base
    meta["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
    raw = path.with_suffix("")  # name.json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as src, gzip.open(str(raw) + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    path.with_name(path.name.replace(".json.gz", ".meta.json")).write_text(
        json.dumps(meta, indent=1)
    )


def run_zoo(folder: Path, deadline: float, only: list[str] | None) -> list[str]:
    lines = []
    for name in only or zoo_models.ordered():
        if time.time() > deadline:
            lines.append(f"{name}: skipped (time budget)")
            continue
        t0 = time.perf_counter()
        try:
            step = zoo_models.MODELS[name]("cuda")
            record(
                step, folder / f"{name}.json.gz", {"name": name, "about": zoo_models.ABOUT[name]}
            )
            meta = json.loads((folder / f"{name}.meta.json").read_text())
            lines.append(
                f"{name}: {meta['event_median_s'] * 1e3:.3f} ms/step, "
                f"{(folder / f'{name}.json.gz').stat().st_size / 1e3:.0f} kB, {time.perf_counter() - t0:.1f} s"
            )
        except Exception as error:  # one model's failure must not stop the zoo
            lines.append(f"{name}: FAILED {type(error).__name__}: {str(error)[:300]}")
            traceback.print_exc()
        finally:
            step = None
            torch.cuda.empty_cache()
        print(lines[-1], flush=True)
    return lines


def run_cases(folder: Path, deadline: float) -> list[str]:
    lines = []
    for name, case in advice_cases.CASES.items():
        for version in ("slow", "fixed"):
            if time.time() > deadline:
                lines.append(f"{name}/{version}: skipped (time budget)")
                continue
            try:
                step = getattr(case, version)("cuda")
                record(
                    step, folder / f"{name}.{version}.json.gz", {"case": name, "version": version}
                )
                meta = json.loads((folder / f"{name}.{version}.meta.json").read_text())
                lines.append(f"{name}/{version}: {meta['event_median_s'] * 1e3:.3f} ms/step")
            except Exception as error:
                lines.append(f"{name}/{version}: FAILED {type(error).__name__}: {str(error)[:300]}")
                traceback.print_exc()
            finally:
                step = None
                torch.cuda.empty_cache()
            print(lines[-1], flush=True)
    return lines


def run_clocks(out: Path) -> list[str]:
    """Per-run time, SM clock and power over sustained runs of a compute-bound model."""
    step = zoo_models.MODELS["llama_blocks_bf16"]("cuda")
    rows = []
    try:
        clock_ok = torch.cuda.clock_rate() is not None
    except Exception as error:
        clock_ok = f"{type(error).__name__}: {error}"
    torch.cuda.synchronize()
    time.sleep(2.0)  # let the GPU settle to idle clocks
    for i in range(60):
        (t,) = event_times(step, 1)
        row = {"run": i, "time_s": t}
        try:
            row["sm_clock_mhz"] = torch.cuda.clock_rate()
            row["power_mw"] = torch.cuda.power_draw()
        except Exception as error:
            row["error"] = str(error)[:200]
        rows.append(row)
    (out / "clocks.json").write_text(
        json.dumps({"clock_api": str(clock_ok), "runs": rows}, indent=1)
    )
    first = [r["time_s"] for r in rows[:5]]
    last = [r["time_s"] for r in rows[-30:]]
    return [
        f"clocks: first 5 runs median {statistics.median(first) * 1e3:.3f} ms, last 30 median "
        f"{statistics.median(last) * 1e3:.3f} ms; clocks {[r.get('sm_clock_mhz') for r in rows[::6]]}"
    ]


NCU_MODELS = ("gpt_fwd_bf16", "lstm_train", "dlrm_train", "unet_block_fp16")


def ncu_child(name: str, out: str) -> None:
    """Under ncu: warm up outside the profiled range, then one step inside it."""
    step = zoo_models.MODELS[name]("cuda")
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def _ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for candidate in sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu")) + sorted(
        Path("/usr/local/cuda").glob("bin/ncu")
    ):
        return str(candidate)
    return None


def run_ncu(folder: Path, deadline: float) -> list[str]:
    ncu = _ncu()
    if ncu is None:
        return ["ncu: not found"]
    lines = []
    for name in NCU_MODELS:
        remaining = deadline - time.time()
        if remaining < 30:
            lines.append(f"ncu {name}: skipped (time budget)")
            continue
        csv = folder / f"{name}.ncu.csv"
        cmd = [
            ncu,
            "--clock-control",
            "none",
            "--profile-from-start",
            "off",
            "--csv",
            "--metrics",
            "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum",
            sys.executable,
            __file__,
            "--ncu-child",
            name,
        ]
        t0 = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=min(150, remaining))
            csv.write_text(done.stdout)
            (folder / f"{name}.ncu.err").write_text(done.stderr[-20000:])
            kernels = done.stdout.count("dram__bytes_read.sum")
            lines.append(
                f"ncu {name}: rc {done.returncode}, {kernels} kernel rows, {time.perf_counter() - t0:.0f} s"
            )
        except subprocess.TimeoutExpired:
            lines.append(f"ncu {name}: timed out")
        print(lines[-1], flush=True)
    return lines


RANK_SCRIPT = r"""
import os, sys, torch, torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(0)
net = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(8)]).cuda()
ddp = nn.parallel.DistributedDataParallel(net, bucket_cap_mb=8)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(256 * (1 + rank), 2048, device="cuda")  # rank 1 does twice the work: a straggler
def step():
    opt.zero_grad()
    ddp(x).pow(2).mean().backward()
    opt.step()
for _ in range(3):
    step()
torch.cuda.synchronize()
out = sys.argv[1]
def ready(prof):
    prof.export_chrome_trace(f"{out}/rank{rank}_of{world}.step{prof.step_num}.json")
acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
sched = torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
with torch.profiler.profile(activities=acts, record_shapes=True, schedule=sched, on_trace_ready=ready) as prof:
    for _ in range(4):
        step()
        torch.cuda.synchronize()
        prof.step()
dist.destroy_process_group()
"""


def run_ranks(folder: Path) -> list[str]:
    script = folder / "rank_job.py"
    script.write_text(RANK_SCRIPT)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        "29533",
        str(script),
        str(folder),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return ["ranks: timed out"]
    (folder / "ranks.log").write_text(done.stdout[-5000:] + done.stderr[-10000:])
    for raw in folder.glob("*.json"):
        with open(raw, "rb") as src, gzip.open(str(raw) + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        raw.unlink()
    return [f"ranks: rc {done.returncode}, files {sorted(p.name for p in folder.iterdir())}"]


def pack(folder: Path, tar_path: Path, limit: float = 15e6) -> None:
    """Tar the folder into ``tar_path``, or into ``name.0.tar``, ``name.1.tar``... of at most
    ``limit`` bytes each (the device tool returns files of up to 16 MiB)."""
    parts: list[list[Path]] = [[]]
    size = 0
    for path in sorted(folder.iterdir()):
        if size + path.stat().st_size > limit and parts[-1]:
            parts.append([])
            size = 0
        parts[-1].append(path)
        size += path.stat().st_size
    for i, paths in enumerate(parts):
        target = tar_path if len(parts) == 1 else tar_path.with_suffix(f".{i}.tar")
        with tarfile.open(target, "w") as tar:
            for path in paths:
                tar.add(path, arcname=path.name)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--budget-s", type=float, default=420)
    parser.add_argument("--parts", default="zoo,cases,clocks,ncu,ranks")
    parser.add_argument("--only", default="")
    parser.add_argument("--ncu-child", default="")
    args = parser.parse_args()
    if args.ncu_child:
        ncu_child(args.ncu_child, args.out)
        return 0
    start = time.time()
    deadline = start + args.budget_s
    out = Path(args.out)
    parts = args.parts.split(",")
    work = Path(tempfile.mkdtemp(prefix="brrr_record_"))
    summary = [f"torch {torch.__version__}, {torch.cuda.get_device_name()}"]
    # Order: the cheap, essential parts first; the zoo's compiled models and ncu last.
    if "cases" in parts:
        (work / "cases").mkdir()
        summary += run_cases(work / "cases", deadline)
        pack(work / "cases", out / "cases.tar")
    if "clocks" in parts:
        summary += run_clocks(out)
    if "ranks" in parts:
        (work / "ranks").mkdir()
        summary += run_ranks(work / "ranks")
        pack(work / "ranks", out / "ranks.tar")
    if "zoo" in parts:
        (work / "zoo").mkdir()
        only = args.only.split(",") if args.only else None
        summary += run_zoo(work / "zoo", deadline - 130 if "ncu" in parts else deadline, only)
        pack(work / "zoo", out / "zoo.tar")
    if "ncu" in parts:
        (work / "ncu").mkdir()
        summary += run_ncu(work / "ncu", deadline)
        pack(work / "ncu", out / "ncu.tar")
    summary.append(f"total {time.time() - start:.0f} s")
    (out / "summary.txt").write_text("\n".join(summary))
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
