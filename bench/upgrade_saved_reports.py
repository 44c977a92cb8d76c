"""Rewrite the jupyter_brrr reports saved in notebooks' outputs in this version's format.

Each output that holds a report (its MIME type) is read back (``Report.from_json``, which reads
older schema versions), and its whole bundle is written again as ``%%brrr`` writes it today: the
report JSON in the current schema version, the static HTML, the PNG and the plain text. The rest
of the notebook (cells, other outputs, metadata) is left as it is.

    python bench/upgrade_saved_reports.py notebooks/tour_h200.ipynb [more.ipynb ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat

from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.report import MIME_TYPE, SCHEMA_VERSION
from jupyter_brrr.views import bundle


def upgrade(path: Path) -> int:
    """Rewrite the reports saved in one notebook; returns how many there were."""
    notebook = nbformat.read(str(path), as_version=4)
    count = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            if MIME_TYPE not in data:
                continue
            report = Report.from_json(dict(data[MIME_TYPE]))
            output["data"] = nbformat.from_dict(bundle.mimebundle(report))
            count += 1
    nbformat.write(notebook, str(path))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.notebooks:
        print(f"{path}: {upgrade(path)} reports now in schema version {SCHEMA_VERSION}")


if __name__ == "__main__":
    main()
