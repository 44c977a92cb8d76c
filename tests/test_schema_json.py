"""The schema as JSON Schema (``python -m jupyter_brrr.schema.export``), made from the Python
schema modules: every saved document follows it, and it refuses what the Python check refuses.
(The browser's types are generated from it: tests/test_schema_types.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.export import json_schemas, main
from jupyter_brrr.schema.types import SchemaError

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT / "tests" / "data" / "reports"
SCHEMAS = json_schemas()

# Each saved document and the kind whose JSON Schema it follows.
SAVED = {
    **{name: "report" for name in ("ab", "cpu_only", "empty", "named", "small", "small_v2")},
    **{name: "report" for name in ("sweep", "xss")},
    "job": "job",
    "comparison": "comparison",
    "history": "history",
    "history_run": "history_run",
    "plan": "plan",
    "plan_throughput": "plan",
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_every_saved_document_follows_its_json_schema(name: str) -> None:
    doc = json.loads((DOCUMENTS / f"{name}.json").read_text())
    jsonschema.validate(doc, SCHEMAS[SAVED[name]])


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("summary", "span_s"), "1"),
        (("summary", "timing", "median_s"), "x"),
        (("summary", "runs", "total"), -1),
        (("change", "span", "verdict"), "better"),
        (("target", "goal"), None),
        (("history", 0, "code_changed"), "yes"),
        (("notes",), [1]),
    ],
)
def test_what_the_python_check_refuses_the_json_schema_refuses(path: tuple, value: object) -> None:
    doc = json.loads((DOCUMENTS / "named.json").read_text())
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(SchemaError):
        Report.from_json(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMAS["report"])


def test_the_export_writes_one_file_per_kind(tmp_path: Path) -> None:
    main([str(tmp_path)])
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f"{kind}.schema.json" for kind in SCHEMAS)
    for path in tmp_path.iterdir():
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


def test_export_help_prints_usage_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """``--help`` is an option, not a folder: it once made a folder called ``--help``."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    assert "usage: python -m jupyter_brrr.schema.export" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
