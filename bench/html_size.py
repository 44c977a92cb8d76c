"""Size of the standalone HTML file (``report.save_html``) of the tour's reports, and of the
executed tours with each ``$JUPYTER_BRRR_HTML`` setting.

Reads every report saved in a notebook's outputs (``notebooks/tour_h200.ipynb`` by default),
writes each one with ``save_html`` into a temporary folder, and prints a markdown table of the
file sizes, with the size of the report JSON for comparison. Run it on two checkouts to compare
(``PYTHONPATH=<checkout> python bench/html_size.py``).

``--executed`` then prints the size of the executed tours, with ``JUPYTER_BRRR_HTML`` unset
(each output's ``text/html`` carries the app) and ``static`` (the fallback alone): the CPU tour
(``notebooks/tour.ipynb``) executed by nbclient in a kernel of this interpreter, once per
setting (a few minutes), and the H200 tour with every report output drawn again from its saved
JSON (what running it on the H200 would write, without a GPU).

    python bench/html_size.py [--notebook notebooks/tour_h200.ipynb] [--executed]
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument(
        "--executed", action="store_true", help="the executed tours' sizes, per JUPYTER_BRRR_HTML"
    )
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
    if args.executed:
        executed_sizes(args.notebook)


HTML_ENV = "JUPYTER_BRRR_HTML"
SETTINGS = {"app (default)": "", "static": "static"}


def _size(nb: dict) -> int:
    """The notebook's size as Jupyter writes it (nbformat: indent 1, sorted keys)."""
    import nbformat

    return len((nbformat.writes(nbformat.from_dict(nb)) + "\n").encode("utf-8"))


def tour_folder(folder: Path) -> Path:
    """Where to run the tour from: a folder of its own inside ``folder`` (the tour's named cells
    write their history beside the notebook, which must not land in the checkout), from which
    the tour's relative paths (``../tests/data/...``: the GPT-2 trace of its last cell) reach
    this checkout's files, as they do from ``notebooks/``."""
    notebooks = folder / "notebooks"
    notebooks.mkdir()
    (folder / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    return notebooks


def _executed_cpu_tour(setting: str) -> tuple[int, float]:
    import nbformat
    from nbclient import NotebookClient

    tour = ROOT / "notebooks" / "tour.ipynb"
    nb = nbformat.read(tour, as_version=4)
    env = {**os.environ, HTML_ENV: setting}
    with tempfile.TemporaryDirectory() as folder:
        client = NotebookClient(
            nb,
            kernel_name="python3",
            timeout=600,
            resources={"metadata": {"path": str(tour_folder(Path(folder)))}},
        )
        start = time.perf_counter()
        client.execute(env=env)
        seconds = time.perf_counter() - start
    return _size(nb), seconds


def _redrawn(notebook: Path, setting: str) -> int:
    """The notebook with every report output drawn again by this checkout."""
    from jupyter_brrr.report.report import Report
    from jupyter_brrr.views import render

    nb = json.loads(notebook.read_text(encoding="utf-8"))
    before = os.environ.get(HTML_ENV)
    os.environ[HTML_ENV] = setting
    try:
        for cell in nb["cells"]:
            for output in cell.get("outputs", []):
                if MIME_TYPE in output.get("data", {}):
                    output["data"] = render(Report.from_json(output["data"][MIME_TYPE]))
    finally:
        if before is None:
            os.environ.pop(HTML_ENV)
        else:
            os.environ[HTML_ENV] = before
    return _size(nb)


def executed_sizes(notebook: Path) -> None:
    tour = ROOT / "notebooks" / "tour.ipynb"
    print(f"\n| {HTML_ENV} | {tour.name} executed (CPU) | {notebook.name} redrawn |")
    print("| --- | ---: | ---: |")
    print(
        f"| (as committed) | {tour.stat().st_size / 1e6:.2f} MB | "
        f"{notebook.stat().st_size / 1e6:.2f} MB |"
    )
    for label, setting in SETTINGS.items():
        size, seconds = _executed_cpu_tour(setting)
        print(
            f"| {label} | {size / 1e6:.2f} MB (ran in {seconds:.0f} s) | "
            f"{_redrawn(notebook, setting) / 1e6:.2f} MB |"
        )


if __name__ == "__main__":
    main()
