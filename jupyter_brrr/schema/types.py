"""The types a document is checked against, shared by every document kind's schema module
(``report``, ``comparison``, ``job``, ``history``, ``plan``).

Each kind declares its layout once, as a tree of the types below, and has one entry point
(``check_report``, ``check_comparison``, ...) that every reader of it calls before anything else
reads it. A document that does not fit raises ``SchemaError`` with the path of the first bad field
(``summary.timing.median_s: expected a number, got "x"``), so that no view stumbles on it later.
Keys not declared are accepted as they are (a newer writer may add some); tables may carry extra
columns; a missing optional key reads as absent.

Documents nested deeper than ``MAX_DEPTH`` are refused before any of this runs: no document of
the package comes near it, and walking (or drawing, or writing) one recursively would overflow
Python's stack.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "LARGEST",
    "LONGEST_S",
    "MAX_DEPTH",
    "Derived",
    "Flag",
    "ListOf",
    "MapOf",
    "Nullable",
    "Number",
    "Object",
    "OneOf",
    "Scalar",
    "SchemaError",
    "Table",
    "Text",
    "Type",
    "check_depth",
    "check_header",
    "is_number",
    "json_schema",
    "json_schema_body",
    "parse_document",
    "shown",
]


class SchemaError(ValueError):
    """A document this version cannot read: the message names the field and why."""


# No figure of a document comes near these: a larger one is damage, and would overflow where
# the views add, scale or take logarithms of figures. Seconds: a run of 30 years; amounts
# (FLOPs, bytes, rates, counts): 1e30.
LONGEST_S = 1e9
LARGEST = 1e30

# The deepest nesting of arrays and objects a document may have. A report holds a comparison
# whose tables hold rows of cells: about 6 levels; a newer writer has room to spare.
MAX_DEPTH = 64


def shown(value: object) -> str:
    """A value as an error message quotes it: short, and NaN by name."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, float) and value != value:
        return "NaN"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:39] + "…"


def check_depth(doc: object, limit: int = MAX_DEPTH) -> None:
    """Raise SchemaError if ``doc`` nests arrays and objects more than ``limit`` deep (walked
    without recursion, so that the check itself cannot overflow)."""
    stack: list[tuple[object, int, str]] = [(doc, 0, "")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, dict):
            items: Iterable[tuple[str, object]] = (
                (f"{path}.{k}" if path else str(k), v) for k, v in value.items()
            )
        elif isinstance(value, list):
            items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
        else:
            continue
        if depth >= limit:
            raise SchemaError(
                f"{path or 'the document'}: nested more than {limit} levels deep (no document "
                "of jupyter_brrr is; it is damaged)"
            )
        stack.extend((item, depth + 1, where) for where, item in items)


def parse_document(text: str | bytes | bytearray | Mapping, what: str) -> object:
    """The document in ``text`` (JSON text, or a document already read), as a plain value; text
    that is not JSON (or nests too deep for the JSON reader) raises SchemaError."""
    if isinstance(text, str | bytes | bytearray):
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as error:
            raise SchemaError(f"Not a {what}: the text is not JSON ({error}).") from None
    return dict(text) if isinstance(text, Mapping) else text


def check_header(doc: object, name: str, version: int, what: str, path: str = "") -> None:
    """Raise SchemaError unless ``doc`` is an object naming schema ``name`` at a version up to
    ``version`` (``what``: the kind of document, in words; ``path``: where it sits in a larger
    document)."""
    at = f"{path}: " if path else ""
    if not isinstance(doc, dict) or doc.get("schema") != name:
        raise SchemaError(f"{at}Not a jupyter_brrr {what}: the document has no 'schema': '{name}'.")
    found = doc.get("version")
    if isinstance(found, bool) or not isinstance(found, int) or found < 1:
        where = f"{path}.version" if path else "version"
        raise SchemaError(f"{where}: expected a whole number from 1, got {shown(found)}")
    if found > version:
        raise SchemaError(
            f"{at}This {what} has schema version {found} (written by a newer jupyter_brrr); "
            f"this jupyter_brrr reads up to version {version}. Update jupyter_brrr "
            "(pip install -U jupyter-brrr)."
        )


class Type:
    """One kind of JSON value (here: any); ``check`` raises SchemaError naming ``path``."""

    expected = "a value"

    def fits(self, value: object) -> bool:
        return True

    def check(self, value: object, path: str) -> None:
        if not self.fits(value):
            raise SchemaError(f"{path}: expected {self.expected}, got {shown(value)}")


class Text(Type):
    expected = "a string"

    def fits(self, value: object) -> bool:
        return isinstance(value, str)


class OneOf(Type):
    """One of a few strings."""

    def __init__(self, *choices: str) -> None:
        self.choices = choices
        self.expected = "one of " + ", ".join(repr(c) for c in choices)

    def fits(self, value: object) -> bool:
        return isinstance(value, str) and value in self.choices


class Flag(Type):
    expected = "true or false"

    def fits(self, value: object) -> bool:
        return isinstance(value, bool)


class Number(Type):
    """A finite number (not a boolean), at least ``low`` where given (above it with
    ``above``); ``whole`` for counts."""

    def __init__(
        self,
        low: float | None = None,
        high: float = LARGEST,
        whole: bool = False,
        above: bool = False,
    ) -> None:
        self.low, self.high, self.whole, self.above = low, high, whole, above
        kind = "a whole number" if whole else "a number"
        if low is None:
            self.expected = f"{kind} of at most {high:g} in size"
        elif above:
            self.expected = f"{kind} above {low:g}, to {high:g}"
        else:
            self.expected = f"{kind} from {low:g} to {high:g}"

    def fits(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.whole and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if abs(value) > self.high:
            return False
        if self.low is None:
            return True
        return value > self.low if self.above else value >= self.low


class Scalar(Type):
    expected = "a string, number, boolean or null"

    def fits(self, value: object) -> bool:
        if isinstance(value, float):
            return math.isfinite(value) and abs(value) <= LARGEST
        if isinstance(value, int) and not isinstance(value, bool):
            return abs(value) <= LARGEST
        return value is None or isinstance(value, str | bool)


class Nullable(Type):
    def __init__(self, inner: Type) -> None:
        self.inner = inner
        self.expected = f"{inner.expected} or null"

    def fits(self, value: object) -> bool:
        return value is None or self.inner.fits(value)

    def check(self, value: object, path: str) -> None:
        if value is None:
            return
        if type(self.inner).check is Type.check:
            super().check(value, path)  # one value: "expected a number or null"
        else:
            self.inner.check(value, path)  # a container: the path of the bad field inside it


class ListOf(Type):
    def __init__(self, item: Type) -> None:
        self.item = item
        self.expected = "an array"

    def fits(self, value: object) -> bool:
        return isinstance(value, list) and all(self.item.fits(item) for item in value)

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, list):
            raise SchemaError(f"{path}: expected an array, got {shown(value)}")
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]")


class MapOf(Type):
    """An object whose values all have one type (any keys)."""

    def __init__(self, value: Type) -> None:
        self.value = value
        self.expected = "an object"

    def fits(self, value: object) -> bool:
        return isinstance(value, dict) and all(self.value.fits(v) for v in value.values())

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"{path}: expected an object, got {shown(value)}")
        for key, item in value.items():
            self.value.check(item, f"{path}.{key}")


class Object(Type):
    """An object with ``required`` and ``optional`` keys of given types (others accepted);
    ``title``: its name in the JSON Schema's ``$defs`` and in the TypeScript generated from it
    (an object without one is written inline where it is used)."""

    def __init__(
        self,
        required: Mapping[str, Type],
        optional: Mapping[str, Type] | None = None,
        title: str | None = None,
    ) -> None:
        self.required, self.optional, self.title = required, optional or {}, title
        self.expected = "an object"

    def fits(self, value: object) -> bool:
        try:
            self.check(value, "")
        except SchemaError:
            return False
        return True

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"{path or 'the document'}: expected an object, got {shown(value)}")
        prefix = f"{path}." if path else ""
        for key, kind in self.required.items():
            if key not in value:
                raise SchemaError(f"{prefix}{key}: missing ({kind.expected} is required)")
            kind.check(value[key], prefix + key)
        for key, kind in self.optional.items():
            if key in value:
                kind.check(value[key], prefix + key)


class Derived(Type):
    """A part the reader computes again from the rest of the document (a report's ``display``),
    so that any value reads: not checked. ``schema`` is its layout as the writer writes it, for
    the JSON Schema and the TypeScript generated from it."""

    def __init__(self, schema: Type) -> None:
        self.schema = schema


def is_number(kind: Type) -> bool:
    """Whether ``kind`` is a number, or a number or null (a missing number: NaN in a frame)."""
    return isinstance(kind, Number) or (
        isinstance(kind, Nullable) and isinstance(kind.inner, Number)
    )


class Table(Type):
    """A table in pandas' "split" orientation: known columns' cells typed, rows all as long as
    the columns; ``needs``: columns a table with rows must have (what its readers index; by
    default "name" where the table has one), or any table with ``always``; ``row``: the name of
    its row type (one object per row, keyed by column) in the JSON Schema's ``$defs`` and the
    TypeScript generated from it, whose keys are ``columns`` (the columns its writer writes,
    in order; by default the typed ones)."""

    def __init__(
        self,
        cells: Mapping[str, Type],
        extra: Mapping[str, Type] | None = None,
        needs: tuple[str, ...] | None = None,
        always: bool = False,
        row: str | None = None,
        columns: tuple[str, ...] | None = None,
    ) -> None:
        self.cells, self.extra, self.always, self.row = cells, extra or {}, always, row
        self.columns = columns if columns is not None else tuple(cells)
        self.needs = needs if needs is not None else (("name",) if "name" in cells else ())
        self.expected = "a table"

    def check(self, value: object, path: str) -> None:
        Object({"columns": ListOf(Text()), "data": ListOf(Type())}, self.extra).check(value, path)
        assert isinstance(value, dict)
        columns, rows = value["columns"], value["data"]
        if len(set(columns)) != len(columns):
            raise SchemaError(f"{path}.columns: a column is named twice")
        for index, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(columns):
                raise SchemaError(
                    f"{path}.data[{index}]: expected an array of {len(columns)} cells (one per "
                    f"column), got {shown(row) if not isinstance(row, list) else len(row)}"
                )
        if rows or self.always:
            for name in self.needs:
                if name not in columns:
                    raise SchemaError(f"{path}.columns: no {name!r} column")
        for position, column in enumerate(columns):
            kind = self.cells.get(column, Scalar())
            for index, row in enumerate(rows):
                if not kind.fits(row[position]):
                    raise SchemaError(
                        f"{path}.data[{index}] column {column!r}: expected {kind.expected}, "
                        f"got {shown(row[position])}"
                    )


# --- the same types as JSON Schema --------------------------------------------------------------------
#
# Each type above written as JSON Schema (draft 2020-12), so that another reader (the browser,
# whose types are generated from it into js/src/generated/; a tool of the user's) can be held
# to the one schema. A table's cells depend on the column a cell is in, which JSON Schema cannot
# say: a table carries its cells' schemas under "x-cells" (by column name) and the columns it
# needs under "x-needs". Objects with a title, and tables' row types, are written once under
# "$defs" and referred to where they are used ("x-row": a table's row type), so that a
# generator of code names them.


def json_schema(kind: Type, defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``kind`` as a JSON Schema; with ``defs``, each titled object (and each table's row type)
    inside it is put there by its title and referred to as ``#/$defs/<title>``. Two different
    types of one title raise ValueError."""
    if defs is not None and isinstance(kind, Object) and kind.title:
        return _define(kind.title, json_schema_body(kind, defs), defs)
    return json_schema_body(kind, defs)


def json_schema_body(kind: Type, defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``kind`` as a JSON Schema, written out here even where it has a title (what a titled
    type's entry in ``$defs`` holds, and a document's top level)."""
    if isinstance(kind, Nullable):
        return {"anyOf": [json_schema(kind.inner, defs), {"type": "null"}]}
    if isinstance(kind, OneOf):
        return {"type": "string", "enum": list(kind.choices)}
    if isinstance(kind, Text):
        return {"type": "string"}
    if isinstance(kind, Flag):
        return {"type": "boolean"}
    if isinstance(kind, Number):
        out: dict = {"type": "integer" if kind.whole else "number", "maximum": kind.high}
        if kind.low is None:
            out["minimum"] = -kind.high
        else:
            out["exclusiveMinimum" if kind.above else "minimum"] = kind.low
        return out
    if isinstance(kind, Scalar):
        return {"type": ["string", "number", "boolean", "null"]}
    if isinstance(kind, ListOf):
        return {"type": "array", "items": json_schema(kind.item, defs)}
    if isinstance(kind, MapOf):
        return {"type": "object", "additionalProperties": json_schema(kind.value, defs)}
    if isinstance(kind, Object):
        fields = {**kind.required, **kind.optional}
        return {
            **({"title": kind.title} if kind.title else {}),
            "type": "object",
            "required": list(kind.required),
            "properties": {key: json_schema(value, defs) for key, value in fields.items()},
        }
    if isinstance(kind, Table):
        out = {
            "type": "object",
            "required": ["columns", "data"],
            "properties": {
                "columns": {"type": "array", "items": {"type": "string"}},
                "data": {"type": "array", "items": {"type": "array"}},
                **{key: json_schema(value, defs) for key, value in kind.extra.items()},
            },
            "x-cells": {column: json_schema(cell, defs) for column, cell in kind.cells.items()},
            "x-needs": list(kind.needs),
        }
        if defs is not None and kind.row:
            cells = {column: kind.cells.get(column, Scalar()) for column in kind.columns}
            row = Object(cells, title=kind.row)
            out["x-row"] = json_schema(row, defs)
        return out
    inner = getattr(kind, "schema", None)
    return json_schema(inner, defs) if isinstance(inner, Type) else {}


def _define(title: str, body: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Put ``body`` into ``defs`` under ``title``; a reference to it."""
    if defs.setdefault(title, body) != body:
        raise ValueError(f"two different types are titled {title!r} in one schema")
    return {"$ref": f"#/$defs/{title}"}
