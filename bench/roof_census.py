"""How many ops of the repository's traces read above their roof, and why (issue 9.1).

    python bench/roof_census.py [--details]

Loads every trace in tests/data (with its sub-folders) and bench/data/h200/zoo and counts, per
trace, the ops above 105% of their roof: all must carry a roof_flag (the reason), and the
table below says which reasons they are. Also lists, per trace, the roof each float32 matmul and
convolution was held against and how it was chosen (kernel names, recorded settings, assumed).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jupyter_brrr
from jupyter_brrr.costs.roofs import ROOF_TOLERANCE

ROOT = Path(__file__).resolve().parents[1]
TRACES = sorted((ROOT / "tests" / "data").rglob("*.json.gz")) + sorted(
    (ROOT / "bench" / "data" / "h200" / "zoo").glob("*.json.gz")
)


def reason(flag: str) -> str:
    """The kind of reason a flag gives, for counting."""
    text = flag.split(": ", 1)[-1]
    for key in (
        "Triton",
        "TF32",
        "Winograd",
        "FLOP model",
        "index in full",
        "L2 cache",
        "byte model",
    ):
        if key in text:
            return key
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--details", action="store_true", help="print every flagged op")
    args = parser.parse_args()
    total = unflagged = 0
    reasons: collections.Counter[str] = collections.Counter()
    print("| trace | ops above the roof | unflagged | fp32 matmul roof | fp32 conv roof |")
    print("| --- | --- | --- | --- | --- |")
    for path in TRACES:
        report = jupyter_brrr.load(path)
        ops = report.ops
        over = ops[ops["roof_fraction"] > ROOF_TOLERANCE]
        total += len(over)
        unflagged += int((over["roof_flag"] == "").sum())
        reasons.update(reason(flag) for flag in over["roof_flag"])
        mode = report.summary["math_mode"]

        def roof(key: str, mode: dict = mode) -> str:
            entry = mode.get(key)
            return f"{entry['roof']} ({entry['basis']})" if entry else "-"

        if len(over) or mode.get("fp32_matmul") or mode.get("fp32_conv"):
            name = path.relative_to(ROOT)
            print(
                f"| {name} | {len(over)} | {int((over['roof_flag'] == '').sum())} | "
                f"{roof('fp32_matmul')} | {roof('fp32_conv')} |"
            )
        if args.details:
            for row in over.itertuples():
                print(f"    {row.name} {row.shapes[:60]}: {row.roof_flag}")
    print(
        f"\n{len(TRACES)} traces: {total} ops above {ROOF_TOLERANCE:.0%} of their roof, "
        f"{unflagged} unflagged; reasons: {dict(reasons)}"
    )
    return 1 if unflagged else 0


if __name__ == "__main__":
    sys.exit(main())
