"""Cost-model coverage on the model zoo: how much of each model's GPU time jupyter_brrr can explain.

    python bench/zoo.py                               # live, on a GPU: every model of zoo_models
    python bench/zoo.py --traces bench/data/h200/zoo  # the recorded traces, on any machine
    python bench/zoo.py --models gru_fwd,moe_bf16 --markdown

Live, each model is built on the GPU and run through ``jupyter_brrr.profile`` (``--warmup``
warm-up runs, ``--repeat`` runs timed with CUDA events, one profiled run), as ``%%brrr
--warmup 1 --repeat 5`` runs a cell. With ``--traces`` each ``<model>.json.gz`` of the folder is
read with ``jupyter_brrr.load``. The same analysis code runs either way.

Per model it prints: the share of GPU time with a FLOP and byte model (``modelled_share``, and
how much of that is an estimate), the ops without a model, the ops of 0.5% or more of the GPU
time that lack a FLOP or a byte count (the goal: none), and the ops above their roof (achieved
over attainable > 100%: a formula or a peak is wrong there, or the data was in L2). Then one
table of all models. Exit status 1 when a model is below ``--goal`` (97%) or an op of 0.5% or
more has no model.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import jupyter_brrr  # noqa: E402

GOAL = 0.97  # of each model's GPU time modelled
SIGNIFICANT = 0.005  # an op with this share of a model's GPU time must have a FLOP and byte model


def model_row(name: str, report: jupyter_brrr.Report, seconds: float) -> dict:
    """The coverage figures of one model's report."""
    s = report.summary
    ops = report.ops
    gpu_total = float(ops["gpu_time_s"].sum())
    share = ops["gpu_time_s"] / gpu_total if gpu_total > 0 else ops["gpu_time_s"] * 0
    has_model = ops["flops"].notna() & ops["bytes"].notna()
    significant = ops[(share >= SIGNIFICANT) & ~has_model]
    missing = (
        significant.assign(share=share[significant.index])
        .groupby("name")["share"]
        .sum()
        .sort_values(ascending=False)
    )
    above = ops[ops["roof_fraction"] > 1.0]
    above = above.assign(share=share[above.index]).sort_values("roof_fraction", ascending=False)
    comm = s.get("communication") or {}
    return {
        "model": name,
        "modelled_share": s.get("modelled_share"),
        "estimated_share": s.get("estimated_share"),
        "unmodelled_ops": s.get("unmodelled_ops") or [],
        "significant_without_model": [{"name": n, "share": float(v)} for n, v in missing.items()],
        "above_roof": [
            {
                "name": r.name,
                "shapes": str(r.shapes)[:60],
                "roof_fraction": float(r.roof_fraction),
                "share": float(r.share),
                "cost_model": getattr(r, "cost_model", ""),
            }
            for r in above.head(5).itertuples()
        ],
        "span_ms": s["span_s"] * 1e3,
        "communication_ms": (s.get("communication_s") or 0.0) * 1e3,
        "collectives": len(comm.get("collectives") or []),
        "seconds": seconds,
    }


def from_traces(folder: Path, names: list[str] | None) -> list[dict]:
    rows = []
    paths = sorted(folder.glob("*.json.gz"))
    for path in paths:
        name = path.name.removesuffix(".json.gz")
        if names and name not in names:
            continue
        start = time.perf_counter()
        try:
            report = jupyter_brrr.load(path)
        except Exception as error:  # one bad trace must not hide the others
            rows.append({"model": name, "error": f"{type(error).__name__}: {error}"})
            continue
        rows.append(model_row(name, report, time.perf_counter() - start))
        print_model(rows[-1])
    return rows


def live(names: list[str] | None, warmup: int, repeat: int, budget_s: float) -> list[dict]:
    import torch
    import zoo_models

    if not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here: run with --traces DIR to analyse recorded traces.")
    deadline = time.time() + budget_s
    rows = []
    for name in names or zoo_models.ordered():
        if time.time() > deadline:
            rows.append({"model": name, "error": "skipped: time budget"})
            continue
        start = time.perf_counter()
        step = None
        try:
            step = zoo_models.MODELS[name]("cuda")
            report = jupyter_brrr.profile(step, warmup=warmup, repeat=repeat)
            rows.append(model_row(name, report, time.perf_counter() - start))
        except ModuleNotFoundError as error:  # torchvision, timm or transformers missing
            rows.append({"model": name, "error": f"skipped: {error}"})
        except Exception as error:
            rows.append({"model": name, "error": f"{type(error).__name__}: {str(error)[:300]}"})
            traceback.print_exc()
        finally:
            step = None
            gc.collect()
            torch.cuda.empty_cache()
        print_model(rows[-1])
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def print_model(row: dict) -> None:
    if "error" in row:
        print(f"== {row['model']}: {row['error']}", flush=True)
        return
    print(
        f"== {row['model']}: modelled {_pct(row['modelled_share'])} "
        f"(estimates {_pct(row['estimated_share'])}), span {row['span_ms']:.3f} ms, "
        f"analysed in {row['seconds']:.2f} s",
        flush=True,
    )
    if row["unmodelled_ops"]:
        ops = ", ".join(f"{o['name']} {_pct(o['share'])}" for o in row["unmodelled_ops"])
        print(f"   without a model: {ops}")
    for op in row["significant_without_model"]:
        print(f"   MISSING (>= 0.5%): {op['name']} {_pct(op['share'])}")
    for op in row["above_roof"]:
        print(
            f"   above its roof: {op['name']} {op['shapes']} at {op['roof_fraction']:.2f} of the "
            f"roof ({_pct(op['share'])} of GPU time, {op['cost_model']})"
        )


def table(rows: list[dict]) -> str:
    lines = [
        "| model | modelled | of it estimates | ops >= 0.5% without a model | ops above roof | without a model |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['error']} | | | | |")
            continue
        unmodelled = ", ".join(f"{o['name']} {_pct(o['share'])}" for o in r["unmodelled_ops"][:3])
        above = ", ".join(f"{o['name']} {o['roof_fraction']:.2f}" for o in r["above_roof"][:3])
        lines.append(
            f"| {r['model']} | {_pct(r['modelled_share'])} | {_pct(r['estimated_share'])} | "
            f"{len(r['significant_without_model'])} | {above or '-'} | {unmodelled or '-'} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, help="analyse the recorded traces in this folder")
    parser.add_argument("--models", help="comma-separated model names (default: all)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=540.0)
    parser.add_argument("--goal", type=float, default=GOAL)
    parser.add_argument("--markdown", action="store_true", help="print only the summary table")
    parser.add_argument("--out", default=os.environ.get("OUT"), help="write zoo.json here")
    args = parser.parse_args()
    names = args.models.split(",") if args.models else None
    if args.traces:
        rows = from_traces(args.traces, names)
    else:
        rows = live(names, args.warmup, args.repeat, args.budget_s)
    print()
    print(table(rows))
    done = [r for r in rows if "error" not in r]
    below = [r["model"] for r in done if (r["modelled_share"] or 0.0) < args.goal]
    missing = [r["model"] for r in done if r["significant_without_model"]]
    print(
        f"\n{len(done)} models analysed; {len(done) - len(below)} at or above "
        f"{100 * args.goal:.0f}% modelled"
        + (f"; below: {', '.join(below)}" if below else "")
        + (f"; ops >= 0.5% without a model in: {', '.join(missing)}" if missing else "")
    )
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "zoo.json").write_text(json.dumps(rows, indent=1))
    return 1 if below or missing else 0


if __name__ == "__main__":
    sys.exit(main())
