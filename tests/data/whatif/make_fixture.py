"""Writes the What-if fixture the TypeScript tests read (js/src/__tests__/whatif.spec.ts):

    python tests/data/whatif/make_fixture.py

- ``tiny_mlp.report.json``: the report of ``tests/data/tiny_mlp_eager.json.gz`` (a launch-bound
  MLP on the H200), with its ``what_if`` curves, as the browser gets it;
- ``tiny_mlp.what_if.json``: ``report.what_if(factors=FACTORS)`` in Python, one object per row:
  the numbers the tab must show (at the curves' factors exactly, between them within the
  interpolation's error).

Both come from one run, so the TypeScript test holds the tab to Python on the same numbers; run
this again after a change to the replay to follow it.
"""

from __future__ import annotations

import json
from pathlib import Path

import jupyter_brrr

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent / "tiny_mlp_eager.json.gz"
# The curves' factors that every curve has, and three between them.
FACTORS = (2.0, 10.0, 100.0, 1.5, 5.0, 30.0)


def documents() -> tuple[dict, list[dict]]:
    report = jupyter_brrr.load(TRACE)
    assert isinstance(report, jupyter_brrr.Report)
    doc = report.to_dict()
    doc["created"] = "2026-12-02T00:00:00+00:00"
    table = report.what_if(factors=FACTORS)
    rows = [
        {k: None if v is None or v != v else v for k, v in row.items()}  # NaN: none
        for row in table.astype(object).to_dict(orient="records")
    ]
    return doc, rows


def _text(doc: object) -> str:
    return json.dumps(doc, indent=1, allow_nan=False, sort_keys=True) + "\n"


def texts() -> dict[str, str]:
    doc, rows = documents()
    return {"tiny_mlp.report.json": _text(doc), "tiny_mlp.what_if.json": _text(rows)}


def main() -> None:
    for name, text in texts().items():
        (HERE / name).write_text(text)


if __name__ == "__main__":
    main()
