"""The byte model against the hardware: modelled minimum traffic beside Nsight Compute's DRAM bytes.

    python bench/ncu_bytes.py [--models gpt_fwd_bf16,lstm_train,dlrm_train,unet_block_fp16]
                              [--coverage 0.9] [--markdown]

For each model, ``bench/data/h200/ncu/<model>.ncu.csv.gz`` holds ``dram__bytes_read.sum +
dram__bytes_write.sum`` per kernel of one step (``ncu --clock-control none``), and
``bench/data/h200/zoo/<model>.json.gz`` a profiler trace of one step of the same model: the same
kernels in the same order (two runs of one process each, after the same warm-up). The kernels are
matched by order and name (the trace's and ncu's spellings of a name differ, so the names are
reduced to the kernel's own identifier and aligned with difflib). Each op call of the trace that
owns a cost model is then set beside the DRAM bytes of the kernels it ran, for the calls that
cover ``--coverage`` of the step's GPU time, largest first; one table per model and one summary
by op category. A ratio above 1 means the hardware moved more than the minimum model (a GEMM
re-reads tiles), below 1 that it moved less (the data was in L2, or the op touched a part of what
its arguments hold).
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import io
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jupyter_brrr  # noqa: E402

DATA = HERE / "data" / "h200"
MODELS = ("gpt_fwd_bf16", "lstm_train", "dlrm_train", "unet_block_fp16")


def read_ncu(path: Path) -> pd.DataFrame:
    """One row per profiled kernel, in launch order: name, dram_bytes, ncu_time_s."""
    with gzip.open(path, "rt") as f:
        lines = [line for line in f if not line.startswith("==")]
    raw = pd.read_csv(io.StringIO("".join(lines)), thousands=",")
    wide = raw.pivot_table(
        index=["ID", "Kernel Name"], columns="Metric Name", values="Metric Value", aggfunc="first"
    ).reset_index()
    wide = wide.sort_values("ID")
    return pd.DataFrame(
        {
            "name": wide["Kernel Name"].to_numpy(),
            "dram_bytes": (wide["dram__bytes_read.sum"] + wide["dram__bytes_write.sum"]).to_numpy(),
            "ncu_time_s": wide["gpu__time_duration.sum"].to_numpy() * 1e-9,
        }
    )


_NOISE = re.compile(r"\(anonymous namespace\)::|<unnamed>::|\bvoid\b|\bstd::|\bat::native::|\bat::")


def base_name(name: str) -> str:
    """The kernel's own identifier: without 'void', namespaces, template and call arguments."""
    text = _NOISE.sub("", str(name)).strip()
    depth = 0
    cut = len(text)
    for i, ch in enumerate(text):  # the first '<' or '(' at depth 0 ends the identifier
        if ch in "<(" and depth == 0:
            cut = i
            break
    text = text[:cut]
    return text.split("::")[-1].strip()


def match(trace_names: list[str], ncu_names: list[str]) -> list[tuple[int, int]]:
    """Pairs (trace index, ncu index) of the kernels that line up, by order and base name."""
    a = [base_name(n) for n in trace_names]
    b = [base_name(n) for n in ncu_names]
    pairs = []
    for block in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        pairs += [(block.a + i, block.b + i) for i in range(block.size)]
    return pairs


def compare(model: str, coverage: float) -> tuple[pd.DataFrame, dict]:
    report = jupyter_brrr.load(DATA / "zoo" / f"{model}.json.gz")
    # Each op call's modelled bytes, over all its GPU events (an op's cost is shared among them).
    call_bytes = report.kernels.groupby("op_row")["bytes"].sum(min_count=1)
    kernels = report.kernels
    kernels = kernels[kernels["kind"] == "kernel"].reset_index(drop=True)  # ncu sees kernels only
    ncu = read_ncu(DATA / "ncu" / f"{model}.ncu.csv.gz")
    pairs = match(kernels["name"].tolist(), ncu["name"].tolist())
    trace_rows = np.array([p[0] for p in pairs], dtype=int)
    ncu_rows = np.array([p[1] for p in pairs], dtype=int)
    kernels["dram_bytes"] = np.nan
    kernels.loc[trace_rows, "dram_bytes"] = ncu["dram_bytes"].to_numpy()[ncu_rows]
    info = {
        "model": model,
        "trace_kernels": len(kernels),
        "ncu_kernels": len(ncu),
        "matched": len(pairs),
    }
    # One row per op call that owns a cost (op_row), with its kernels' times and DRAM bytes.
    owned = kernels[kernels["op_row"] >= 0]
    calls = owned.groupby("op_row").agg(
        op=("op", "first"),
        category=("category", "first"),
        kernels=("name", "size"),
        kernel=("name", "first"),
        dur_s=("dur_s", "sum"),
        dram_bytes=("dram_bytes", lambda b: b.sum(min_count=1)),
        matched=("dram_bytes", lambda b: int(b.notna().sum())),
    )
    calls["modelled_bytes"] = call_bytes.reindex(calls.index).to_numpy()
    # Calls whose kernels all lined up; of a call with hundreds of kernels (a cuDNN RNN), one
    # that did not line up (a kernel ncu split or merged) leaves the rest comparable.
    complete = calls["matched"] >= np.where(calls["kernels"] >= 20, 0.99, 1.0) * calls["kernels"]
    calls = calls[calls["modelled_bytes"].notna() & complete]
    total = float(kernels["dur_s"].sum())
    calls = calls.sort_values("dur_s", ascending=False)
    calls["share"] = calls["dur_s"] / total
    calls["cumulative"] = calls["share"].cumsum()
    top = calls[calls["cumulative"].shift(fill_value=0.0) < coverage].copy()
    top["ratio"] = top["dram_bytes"] / top["modelled_bytes"]
    info["covered"] = float(top["share"].sum())
    return top, info


def _mb(x: float) -> str:
    return f"{x / 1e6:,.2f}"


def print_model(top: pd.DataFrame, info: dict, limit: int) -> None:
    print(
        f"\n### {info['model']}: {info['matched']} of {info['trace_kernels']} trace kernels "
        f"matched to {info['ncu_kernels']} ncu kernels; the calls below cover "
        f"{100 * info['covered']:.0f}% of the step's kernel time\n"
    )
    print("| op | first kernel | kernels | time us | modelled MB | DRAM MB (ncu) | DRAM / model |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in top.head(limit).itertuples():
        print(
            f"| {r.op} | {base_name(r.kernel)[:40]} | {r.kernels} | {r.dur_s * 1e6:,.1f} | "
            f"{_mb(r.modelled_bytes)} | {_mb(r.dram_bytes)} | {r.ratio:.2f} |"
        )
    if len(top) > limit:
        print(f"| ... {len(top) - limit} more calls | | | | | | |")


def by_category(frames: list[pd.DataFrame]) -> pd.DataFrame:
    allcalls = pd.concat(frames, ignore_index=True)
    grouped = allcalls.groupby("category").agg(
        calls=("op", "size"),
        time_s=("dur_s", "sum"),
        modelled=("modelled_bytes", "sum"),
        dram=("dram_bytes", "sum"),
        median_ratio=("ratio", "median"),
        low=("ratio", lambda r: r.quantile(0.1)),
        high=("ratio", lambda r: r.quantile(0.9)),
    )
    grouped["ratio"] = grouped["dram"] / grouped["modelled"]
    return grouped.sort_values("time_s", ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--coverage", type=float, default=0.9)
    parser.add_argument("--rows", type=int, default=25, help="calls shown per model")
    args = parser.parse_args()
    frames = []
    for model in args.models.split(","):
        top, info = compare(model, args.coverage)
        print_model(top, info, args.rows)
        frames.append(top)
    summary = by_category(frames)
    print("\n### By op category, all models (time-weighted ratio: DRAM bytes / modelled bytes)\n")
    print("| category | calls | time ms | modelled MB | DRAM MB | ratio | median | 10th-90th pct |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for cat, r in summary.iterrows():
        print(
            f"| {cat} | {r.calls} | {r.time_s * 1e3:.2f} | {_mb(r.modelled)} | {_mb(r.dram)} | "
            f"{r.ratio:.2f} | {r.median_ratio:.2f} | {r.low:.2f}-{r.high:.2f} |"
        )


if __name__ == "__main__":
    main()
