"""What a report's notebook display costs: ``render(report, "mimebundle")`` (the report JSON, the
static HTML with its pictures, the frame, the text and the ``image/png``) on a fresh copy of three
loaded reports, and the pictures alone, in CPU milliseconds (median of ``--repeat``), with the
size of the pictures' PNGs. The reports: the CPU-only one (the top-ops picture), GPT-2 forward on
an H200 (split and roofline, 325 kB of JSON) and ResNet-50 training (1.9 MB of JSON).

    python bench/display_bench.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jupyter_brrr  # noqa: E402
from jupyter_brrr.report.report import Report  # noqa: E402
from jupyter_brrr.views import pictures, render  # noqa: E402

DATA = ROOT / "tests" / "data"


def _cpu_ms(make: Callable[[], Report], call: Callable[[Report], object], repeat: int) -> float:
    """The median CPU time of ``call`` on a fresh report from ``make`` (made untimed)."""
    call(make())  # warm: imports, fonts, the app's page
    times = []
    for _ in range(repeat):
        report = make()
        start = time.process_time()
        call(report)
        times.append(time.process_time() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    documents = {
        "cpu_only": (DATA / "reports" / "cpu_only.json").read_text(),
        "gpt2_fwd_bf16_b8_s1024": jupyter_brrr.load(
            DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"
        ).to_json(),
        "resnet50_train_amp_b64": jupyter_brrr.load(
            DATA / "resnet50_train_amp_b64.json.gz"
        ).to_json(),
    }
    print(
        "| report | mimebundle (CPU ms) | of which pictures (CPU ms) | PNG bytes (split + main + combined) |"
    )
    print("| --- | --- | --- | --- |")
    for name, text in documents.items():

        def make(text: str = text) -> Report:
            return Report.from_json(text)

        bundle_ms = _cpu_ms(make, lambda r: render(r, "mimebundle"), args.repeat)
        pictures_ms = _cpu_ms(make, pictures.pictures, args.repeat)
        drawn = pictures.pictures(make())
        sizes = " + ".join(
            str(len(p)) if p else "-" for p in (drawn.split, drawn.main, drawn.combined)
        )
        print(f"| {name} | {bundle_ms:.1f} | {pictures_ms:.1f} | {sizes} |")


if __name__ == "__main__":
    main()
