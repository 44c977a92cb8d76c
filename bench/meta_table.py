"""Make ``jupyter_brrr/costs/meta_table.json``: the meta-device footprints of the aten calls
without a hand formula that the shared traces and the test traces hold, so that reading them
needs no torch.

    python bench/meta_table.py TRACE_OR_FOLDER [...]

Each trace is loaded with the shipped table set aside, every call that goes to torch's meta
device is recorded with what it gave, and the table is written sorted (stable diffs). Run it
with the torch the tests use; the footprints are torch's meta kernels' output shapes and
``FlopCounterMode``'s counts, so a new torch version may warrant running it again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jupyter_brrr  # noqa: E402
from jupyter_brrr.costs import _meta  # noqa: E402


def traces(arguments: list[str]) -> list[Path]:
    found: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        found += sorted(path.rglob("*.json.gz")) if path.is_dir() else [path]
    return found


def main() -> None:
    seen: dict[tuple, object] = {}
    run_on_meta = _meta.footprint_on_meta

    def recording(*key: object) -> object:
        footprint = run_on_meta(*key)  # pyright: ignore[reportArgumentType]
        seen[key] = _meta.footprint_to_json(footprint)
        return footprint

    _meta._shipped = lambda: {}  # every call on the meta device, none from the old table
    _meta.footprint_on_meta = recording
    for path in traces(sys.argv[1:] or [str(ROOT / "tests/data")]):
        try:
            jupyter_brrr.load(path)
        except Exception as error:  # not a trace (a report, a notebook): skip it
            print(f"skipped {path.name}: {type(error).__name__}")
            continue
        print(f"{path.name}: {len(seen)} calls so far")
    rows = [([*key], value) for key, value in seen.items()]
    rows.sort(key=lambda row: json.dumps(row[0]))
    text = json.dumps(rows, separators=(",", ":"))
    (ROOT / "jupyter_brrr/costs/meta_table.json").write_text(text + "\n")
    print(f"{len(rows)} calls, {len(text):,} bytes")


if __name__ == "__main__":
    main()
