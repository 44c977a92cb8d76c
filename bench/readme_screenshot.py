"""The README's screenshot: a report of notebooks/tour_h200.ipynb as JupyterLab shows it.

A real ``jupyter lab`` (tests/browser/lab.py) serves a notebook of one cell of the H200 tour,
with its saved output; Chromium opens it with no kernel, and the cell (its ``%%brrr`` line and
the interactive report under it, down to its first recommendation) is captured, then stored with
a palette of 256 colours to keep the file small.

    python bench/readme_screenshot.py [--cell 17] [--out docs/images/report.png]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import nbformat
from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser.lab import REPORT_DONE, LabServer, launch_chromium, open_notebook  # noqa: E402

TOUR = ROOT / "notebooks" / "tour_h200.ipynb"


def one_cell_notebook(index: int, path: Path) -> None:
    tour = nbformat.read(str(TOUR), as_version=4)
    nb = nbformat.v4.new_notebook(metadata=tour.metadata)
    nb.cells = [tour.cells[index]]
    nbformat.write(nb, str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", type=int, default=17, help="the tour cell to show")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "report.png")
    parser.add_argument("--width", type=int, default=1100, help="the page's width in pixels")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root, work = Path(temp, "root"), Path(temp, "work")
        root.mkdir()
        one_cell_notebook(args.cell, root / "report.ipynb")
        with LabServer(root, work) as server, sync_playwright() as p:
            browser = launch_chromium(p)
            context = browser.new_context(viewport={"width": args.width, "height": 2000})
            page = open_notebook(context, server.url, "report.ipynb", kernel=False)
            page.wait_for_selector(REPORT_DONE, timeout=120_000)
            # The file browser closed, so that the notebook takes the page's width.
            page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
            page.wait_for_timeout(1500)  # the charts redraw at the new width
            # The cell from its top to the end of the first recommendation: the split, the key
            # figures and what to try first (the notes below would make it twice as tall).
            cell = page.locator(".jp-CodeCell").first.bounding_box()
            advice = page.locator(".jp-brrr-rec").first.bounding_box()
            assert cell is not None and advice is not None
            bottom = advice["y"] + advice["height"] + 12
            clip = {
                "x": cell["x"],
                "y": cell["y"],
                "width": cell["width"],
                "height": bottom - cell["y"],
            }
            shot = page.screenshot(clip=clip)
            browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(args.out, optimize=True)
    print(f"{args.out}: {image.width} x {image.height}, {args.out.stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
