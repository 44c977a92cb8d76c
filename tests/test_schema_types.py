"""The browser's document types (js/src/generated/schema_types.ts) are generated from the Python
schema: the checked-in file is what the generator writes from the schema as it is now, so that a
field changed in Python without regenerating fails here (and the TypeScript that reads it fails
to compile once it is regenerated)."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jupyter_brrr.schema import report
from jupyter_brrr.schema.export import typescript_input
from jupyter_brrr.schema.types import Nullable, Number, Object

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "js" / "src" / "generated" / "schema_types.ts"
GENERATOR = ROOT / "js" / "generate-schema-types.mjs"
REGENERATE = "jlpm schema:types"


def _generate(into: Path, schema_input: dict[str, Any] | None = None) -> str:
    """What the generator writes from ``schema_input`` (the Python schema as it is now)."""
    node = shutil.which("node")
    assert node, "node is needed to generate the TypeScript types (js/generate-schema-types.mjs)"
    assert (ROOT / "node_modules" / "json-schema-to-typescript").is_dir(), (
        "json-schema-to-typescript is not installed: run jlpm install"
    )
    out = into / "schema_types.ts"
    subprocess.run(
        [node, str(GENERATOR), str(out)],
        input=json.dumps(schema_input or typescript_input()),
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    return out.read_text()


def _stale_message(checked_in: str, fresh: str) -> str:
    diff = "".join(
        difflib.unified_diff(
            checked_in.splitlines(keepends=True),
            fresh.splitlines(keepends=True),
            "js/src/generated/schema_types.ts (checked in)",
            "generated from jupyter_brrr/schema/ now",
            n=1,
        )
    )
    return (
        "js/src/generated/schema_types.ts is stale: the Python schema changed since it was "
        f"generated. Regenerate it with `{REGENERATE}` (then jlpm build) and commit it.\n{diff}"
    )


def test_the_generated_types_are_what_the_python_schema_makes_now(tmp_path: Path) -> None:
    fresh = _generate(tmp_path)
    checked_in = GENERATED.read_text()
    assert checked_in == fresh, _stale_message(checked_in, fresh)


def test_a_field_changed_in_python_makes_the_checked_in_types_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: a summary field made nullable in Python (as a change of the
    schema would) gives other types than the checked-in ones, and the message says how to
    regenerate them."""
    summary = report.REPORT.required["summary"]
    assert isinstance(summary, Object)
    changed = {**summary.required, "span_s": Nullable(Number(low=0))}
    monkeypatch.setattr(summary, "required", changed)
    fresh = _generate(tmp_path, typescript_input())
    checked_in = GENERATED.read_text()
    assert fresh != checked_in
    assert "+  span_s: number | null;" in _stale_message(checked_in, fresh)
    assert REGENERATE in _stale_message(checked_in, fresh)


def test_the_generated_constants_are_the_python_ones() -> None:
    """Each constant the browser shares with Python is declared in the generated file with the
    Python value (a name, a version, a table's columns in order)."""
    text = GENERATED.read_text()
    for name, value in typescript_input()["constants"].items():
        found = re.search(rf"^export const {name} =\s+(.*?)(?: as const)?;$", text, re.M | re.S)
        assert found, f"{name} is not declared in js/src/generated/schema_types.ts"
        # The file's quotes are single (prettier); no constant holds a quote of its own.
        assert json.loads(found.group(1).replace("'", '"')) == json.loads(json.dumps(value)), name
