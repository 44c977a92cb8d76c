"""Size of the standalone HTML file (``report.save_html``) of the tour's reports.

Reads every report saved in a notebook's outputs (``notebooks/tour_h200.ipynb`` by default),
writes each one with ``save_html`` into a temporary folder, and prints a markdown table of the
file sizes, with the size of the report JSON for comparison. Run it on two checkouts to compare
(``PYTHONPATH=<checkout> python bench/html_size.py``).

    python bench/html_size.py [--notebook notebooks/tour_h200.ipynb]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIME_TYPE = "application/vnd.jupyter-brrr.report+json"


def reports(notebook: Path) -> list[dict]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [
        output["data"][MIME_TYPE]
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if MIME_TYPE in output.get("data", {})
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", type=Path, default=ROOT / "notebooks" / "tour_h200.ipynb")
    args = parser.parse_args()

    import jupyter_brrr
    from jupyter_brrr.report.report import Report

    print(f"jupyter_brrr from {Path(jupyter_brrr.__file__).parent}")
    print("| report | JSON | HTML | write time | scripts from elsewhere |")
    print("| --- | ---: | ---: | ---: | --- |")
    total = 0
    with tempfile.TemporaryDirectory() as folder:
        for i, doc in enumerate(reports(args.notebook)):
            report = Report.from_json(doc)
            start = time.perf_counter()
            path = report.save_html(Path(folder) / f"report{i}.html")
            seconds = time.perf_counter() - start
            page = path.read_text(encoding="utf-8")
            remote = re.findall(r"<(?:script|link)[^>]*(?:src|href)\s*=\s*[\"']?https?:", page)
            size = path.stat().st_size
            total += size
            print(
                f"| {report.name} | {len(json.dumps(doc)) / 1e3:.0f} kB | {size / 1e6:.2f} MB "
                f"| {seconds:.2f} s | {len(remote)} |"
            )
    print(f"\ntotal {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
