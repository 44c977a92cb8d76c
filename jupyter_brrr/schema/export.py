"""Every document kind's schema as JSON Schema, from the Python schema modules (the one
source): ``python -m jupyter_brrr.schema.export [FOLDER]`` writes one ``<kind>.schema.json``
per kind (or prints them all as one JSON object).

``--typescript`` prints what the browser's types are generated from (``jlpm schema:types``
writes ``js/src/generated/schema_types.ts`` with it): one JSON Schema of every kind, its named
types under ``$defs``, and the constants the browser shares with Python (schema names,
versions, MIME types, the tables' columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import comparison, history, job, report
from .comparison import COMPARISON, COMPARISON_SCHEMA
from .history import HISTORY, HISTORY_SCHEMA, RUN_FILE, RUN_SCHEMA
from .job import JOB, JOB_SCHEMA_NAME
from .plan import PLAN
from .report import REPORT, SCHEMA_NAME
from .types import Object, Type, json_schema_body

__all__ = ["CONSTANTS", "KINDS", "json_schemas", "typescript_input"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Each kind: its layout and the name its documents carry in "schema" (a plan carries none).
KINDS: dict[str, tuple[Type, str | None]] = {
    "report": (REPORT, SCHEMA_NAME),
    "comparison": (COMPARISON, COMPARISON_SCHEMA),
    "job": (JOB, JOB_SCHEMA_NAME),
    "history": (HISTORY, HISTORY_SCHEMA),
    "history_run": (RUN_FILE, RUN_SCHEMA),
    "plan": (PLAN, None),
}


# What the browser shares with Python besides the types: js/src/generated/schema_types.ts
# declares each of these, with this value (arrays "as const").
CONSTANTS: dict[str, object] = {
    **{
        name: getattr(report, name)
        for name in (
            *("SCHEMA_NAME", "SCHEMA_VERSION", "MIME_TYPE", "CAUSES", "REASONS"),
            "CANNOT_PAY_SHARE",
        )
    },
    **{
        name: getattr(report, name)
        for name in (
            *("OPS_COLUMNS", "KERNEL_COLUMNS", "CPU_OP_COLUMNS", "STEP_COLUMNS"),
            *("MODULE_COLUMNS", "SWEEP_POINT_COLUMNS", "SWEEP_DOUBLING_COLUMNS"),
            *("SWEEP_CAPACITY_COLUMNS", "SWEEP_VERDICTS", "MEMORY_CATEGORIES"),
            "MEMORY_LARGEST_COLUMNS",
        )
    },
    "COMPARISON_SCHEMA_NAME": comparison.COMPARISON_SCHEMA,
    "COMPARISON_SCHEMA_VERSION": comparison.COMPARISON_VERSION,
    "COMPARISON_MIME_TYPE": comparison.COMPARISON_MIME_TYPE,
    "HISTORY_SCHEMA_NAME": history.HISTORY_SCHEMA,
    "HISTORY_SCHEMA_VERSION": history.HISTORY_VERSION,
    "HISTORY_MIME_TYPE": history.HISTORY_MIME_TYPE,
    "JOB_SCHEMA_NAME": job.JOB_SCHEMA_NAME,
    "JOB_SCHEMA_VERSION": job.JOB_SCHEMA_VERSION,
    "JOB_MIME_TYPE": job.JOB_MIME_TYPE,
    **{
        name: getattr(job, name)
        for name in (
            *("JOB_SPLIT_PARTS", "JOB_RANK_COLUMNS", "JOB_COLLECTIVE_COLUMNS"),
            *("JOB_STEP_COLUMNS", "JOB_CALL_COLUMNS", "JOB_LANE_COLUMNS"),
        )
    },
}


def _document(layout: Type, name: str | None, defs: dict[str, Any]) -> dict[str, Any]:
    """A document kind's top level, written out (its named types into ``defs``), with the
    name its documents carry in "schema" as a constant."""
    body = json_schema_body(layout, defs)
    if name is not None:
        body["properties"]["schema"] = {"const": name}
    return body


def json_schemas() -> dict[str, dict[str, Any]]:
    """One JSON Schema per document kind, its named types under ``$defs``."""
    out: dict[str, dict[str, Any]] = {}
    for kind, (layout, name) in KINDS.items():
        defs: dict[str, Any] = {}
        body = _document(layout, name, defs)
        out[kind] = {"$schema": DIALECT, **body, "title": f"jupyter_brrr {kind}", "$defs": defs}
    return out


def typescript_input() -> dict[str, Any]:
    """What js/generate-schema-types.mjs makes the browser's types of: ``schema``, one JSON
    Schema whose ``$defs`` hold every kind's top level (by its title) and every named type (the
    tables' row types among them), an object of one document per kind; ``constants``:
    CONSTANTS."""
    defs: dict[str, Any] = {}
    kinds = {}
    for kind, (layout, name) in KINDS.items():
        assert isinstance(layout, Object) and layout.title, "each kind's layout has a title"
        defs[layout.title] = _document(layout, name, defs)
        kinds[kind] = {"$ref": f"#/$defs/{layout.title}"}
    schema = {
        "$schema": DIALECT,
        "title": "Documents",
        "type": "object",
        "properties": kinds,
        "additionalProperties": False,
        "$defs": defs,
    }
    return {"schema": schema, "constants": CONSTANTS}


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
    parser.add_argument(
        "--typescript",
        action="store_true",
        help="print what js/generate-schema-types.mjs makes the browser's types of",
    )
    args = parser.parse_args(argv)
    if args.typescript:
        print(json.dumps(typescript_input(), indent=1))
        return
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
