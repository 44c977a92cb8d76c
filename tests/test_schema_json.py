"""The schema as JSON Schema (``python -m jupyter_brrr.schema.export``), made from the Python
schema modules, and the browser's reader held to it: every member a TypeScript interface of
``js/src/schema.ts`` reads is declared by the Python schema of that part of the document, with
the same kind of value. (The TypeScript side is still written by hand: this test is what keeps
it to the one schema.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.export import json_schemas, main
from jupyter_brrr.schema.types import SchemaError

ROOT = Path(__file__).resolve().parents[1]
TS = (ROOT / "js" / "src" / "schema.ts").read_text()
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

# Each interface of the browser's reader and where its object sits in a kind's document
# (through arrays of such objects).
INTERFACES = {
    "ISummary": ("report", "summary"),
    "IRuns": ("report", "summary", "runs"),
    "ITiming": ("report", "summary", "timing"),
    "IRecommendation": ("report", "recommendations"),
    "ISaving": ("report", "recommendations", "saving"),
    "ICodeChange": ("report", "recommendations", "code_change"),
    "ITryVerdict": ("report", "recommendations", "try"),
    "ISweep": ("report", "sweep"),
    "ISweepFit": ("report", "sweep", "fit"),
    "IMemory": ("report", "memory"),
    "IWhatIf": ("report", "what_if"),
    "IWhatIfTarget": ("report", "what_if", "targets"),
    "IComparison": ("comparison",),
    "ISpanChange": ("comparison", "span"),
    "IComparisonSide": ("comparison", "before"),
    "IHistoryRun": ("history", "runs"),
    "ITarget": ("plan",),
    "ITargetFix": ("plan", "fixes"),
    "IJobSummary": ("job", "summary"),
}


def _object_at(kind: str, *path: str) -> dict:
    schema = SCHEMAS[kind]

    def resolved(node: dict) -> dict:
        ref = node.get("$ref", "")
        return schema["$defs"][ref.removeprefix("#/$defs/")] if ref else node

    node = schema
    for key in path:
        node = resolved(node["properties"][key])
        node = next((n for n in node.get("anyOf", [node]) if n.get("type") != "null"), node)
        node = resolved(node)
        if node.get("type") == "array":
            node = resolved(node["items"])
    return node


def _ts_members(name: str) -> dict[str, str]:
    body = re.search(rf"export interface {name} \{{(.*?)\n\}}", TS, re.S)
    assert body, f"{name} is not declared in js/src/schema.ts"
    return dict(re.findall(r"^  (\w+)\??: ([^;]+);", body.group(1), re.M))


def _ts_kind(text: str) -> str:
    text = text.replace("| null", "").replace("null |", "").strip()
    if text.startswith("{"):
        return "any"  # an object or array of objects written inline: the regex cannot tell
    if text.endswith("[]") or text.startswith(("Array<", "(")):
        return "array"
    if text in ("number", "string", "boolean"):
        return text
    if text.startswith(("'", '"')):
        return "string"
    return "object"


def _json_kind(schema: dict) -> str:
    schema = next((s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), schema)
    if "const" in schema:
        return "string"
    kind = schema.get("type")
    if kind == "integer":
        return "number"
    return kind if isinstance(kind, str) else "any"


@pytest.mark.parametrize("interface", sorted(INTERFACES))
def test_what_the_browser_reads_is_declared_by_the_schema(interface: str) -> None:
    declared = _object_at(*INTERFACES[interface])["properties"]
    for member, ts_type in _ts_members(interface).items():
        assert member in declared, (
            f"js/src/schema.ts {interface}.{member} is read by the browser, but the Python "
            f"schema ({'.'.join(INTERFACES[interface])}) does not declare it"
        )
        kind = _json_kind(declared[member])
        if "any" not in (kind, _ts_kind(ts_type)):
            assert _ts_kind(ts_type) == kind, (interface, member, ts_type, declared[member])


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
