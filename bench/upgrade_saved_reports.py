"""Rewrite the jupyter_brrr reports saved in notebooks' outputs in this version's format.

Each output that holds a report (its MIME type) is read back (``Report.from_json``, which reads
older schema versions), and its whole bundle is written again as ``%%brrr`` writes it today: the
report JSON in the current schema version, the static HTML, the PNG and the plain text. The rest
of the notebook (cells, other outputs, metadata) is left as it is.

With ``--numbers-only`` nothing is re-rendered: the documents of every jupyter_brrr MIME type
(report, job, comparison, history) keep their values and only their numbers are spelled as
JupyterLab saves them back (``schema.as_saved_by_browser``: ``2.0`` as ``2``), so that opening
and saving the notebook in JupyterLab leaves the file as it is.

    python bench/upgrade_saved_reports.py notebooks/tour_h200.ipynb [more.ipynb ...]
    python bench/upgrade_saved_reports.py --numbers-only notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat

from jupyter_brrr.report.comparison import COMPARISON_MIME_TYPE
from jupyter_brrr.report.history import HISTORY_MIME_TYPE
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.report import JOB_MIME_TYPE, MIME_TYPE, SCHEMA_VERSION, as_saved_by_browser
from jupyter_brrr.views import bundle

DOCUMENT_TYPES = (MIME_TYPE, JOB_MIME_TYPE, COMPARISON_MIME_TYPE, HISTORY_MIME_TYPE)


def upgrade(path: Path, *, numbers_only: bool = False) -> int:
    """Rewrite the reports saved in one notebook (with ``numbers_only``, respell the numbers of
    every jupyter_brrr document); returns how many outputs were rewritten."""
    notebook = nbformat.read(str(path), as_version=4)
    count = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            if numbers_only:
                for mime in DOCUMENT_TYPES:
                    if mime in data:
                        data[mime] = nbformat.from_dict(as_saved_by_browser(data[mime]))
                        count += 1
                continue
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
    parser.add_argument(
        "--numbers-only",
        action="store_true",
        help="only respell the documents' numbers as JupyterLab saves them; re-render nothing",
    )
    args = parser.parse_args()
    for path in args.notebooks:
        count = upgrade(path, numbers_only=args.numbers_only)
        if args.numbers_only:
            print(f"{path}: the numbers of {count} documents spelled as JupyterLab saves them")
        else:
            print(f"{path}: {count} reports now in schema version {SCHEMA_VERSION}")


if __name__ == "__main__":
    main()
