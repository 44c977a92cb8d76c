"""Writes the saved documents of the kinds other than a report, next to the reports here:

    python tests/data/reports/make_documents.py

Each is what the package writes for a named cell measured twice on an H200 (the advice cases'
fp32 matmul with TF32 off, then on: ``tests/data/advice/fp32_matmul_tf32_off.{slow,fixed}``),
kept in a history store of its own:

- ``comparison.json``: ``diff(slow, fixed).to_json()`` (``jupyter_brrr.comparison``);
- ``plan.json``: ``target.plan(fixed, "10us")`` (a time goal, scaled out by a split) and
  ``plan_throughput.json``: ``plan(fixed, "1000000 items/s", items=64)`` (replicas);
- ``history.json``: the name's history document (``History.to_json()``);
- ``history_run.json``: the store's file of the second run, ungzipped
  (``jupyter_brrr.history_run``, its report trimmed as the store keeps it).

The property test (``tests/test_schema_property.py``) and ``bench/schema_fuzz.py`` mutate them.
"""

import gzip
import json
import tempfile
from pathlib import Path

import jupyter_brrr
from jupyter_brrr.report import history as history_store
from jupyter_brrr.report.target import parse_goal, plan

HERE = Path(__file__).resolve().parent
ADVICE = HERE.parent / "advice"


def _write(name: str, doc: dict) -> None:
    (HERE / name).write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")


def main() -> None:
    slow = jupyter_brrr.load(ADVICE / "fp32_matmul_tf32_off.slow.json.gz")
    fixed = jupyter_brrr.load(ADVICE / "fp32_matmul_tf32_off.fixed.json.gz")
    assert isinstance(slow, jupyter_brrr.Report) and isinstance(fixed, jupyter_brrr.Report)
    _write("comparison.json", jupyter_brrr.diff(slow, fixed).to_dict())
    _write("plan.json", plan(fixed, "10us"))
    _write("plan_throughput.json", plan(fixed, "1000000 items/s", items=64))
    with tempfile.TemporaryDirectory() as folder:
        history_store.keep_run(slow, "mm", code="a", goal=parse_goal("10us"), folder=folder)
        history_store.keep_run(fixed, "mm", code="b", folder=folder)
        _write("history.json", history_store.history("mm", folder=folder).to_dict())
        run = next((Path(folder) / history_store.STORE_DIRNAME).glob("*/run-0002.json.gz"))
        _write("history_run.json", json.loads(gzip.decompress(run.read_bytes())))
    history_store._stores.clear()


if __name__ == "__main__":
    main()
