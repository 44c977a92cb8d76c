"""Every document kind's schema as JSON Schema, from the Python schema modules (the one
source): ``python -m jupyter_brrr.schema.export [FOLDER]`` writes one ``<kind>.schema.json``
per kind (or prints them all as one JSON object).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .comparison import COMPARISON, COMPARISON_SCHEMA
from .history import HISTORY, HISTORY_SCHEMA, RUN_FILE, RUN_SCHEMA
from .job import JOB, JOB_SCHEMA_NAME
from .plan import PLAN
from .report import REPORT, SCHEMA_NAME
from .types import Type, json_schema

__all__ = ["KINDS", "json_schemas"]

# Each kind: its layout and the name its documents carry in "schema" (a plan carries none).
KINDS: dict[str, tuple[Type, str | None]] = {
    "report": (REPORT, SCHEMA_NAME),
    "comparison": (COMPARISON, COMPARISON_SCHEMA),
    "job": (JOB, JOB_SCHEMA_NAME),
    "history": (HISTORY, HISTORY_SCHEMA),
    "history_run": (RUN_FILE, RUN_SCHEMA),
    "plan": (PLAN, None),
}


def json_schemas() -> dict[str, dict[str, Any]]:
    """One JSON Schema per document kind."""
    out: dict[str, dict[str, Any]] = {}
    for kind, (layout, name) in KINDS.items():
        schema: dict[str, Any] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"jupyter_brrr {kind}",
            **json_schema(layout),
        }
        if name is not None:
            schema["properties"]["schema"] = {"const": name}
        out[kind] = schema
    return out


def main(argv: list[str]) -> None:
    """``python -m jupyter_brrr.schema.export [FOLDER]``: every document kind's JSON Schema,
    printed as one JSON object, or written into FOLDER as ``KIND.schema.json`` files."""
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_brrr.schema.export",
        description="The JSON Schema of every document kind jupyter_brrr writes.",
    )
    parser.add_argument(
        "folder", nargs="?", help="write KIND.schema.json files here (default: print them)"
    )
    args = parser.parse_args(argv)
    schemas = json_schemas()
    if args.folder is None:
        print(json.dumps(schemas, indent=1))
        return
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    for kind, schema in schemas.items():
        (folder / f"{kind}.schema.json").write_text(json.dumps(schema, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
