"""Hostile documents of every kind through their readers and every renderer.

    python bench/schema_fuzz.py [--cases 100000] [--seed 1] [--pictures 0.02] [--full]
    python bench/schema_fuzz.py --case 1234 [--seed 1]      # one case again, with its details

Each case starts from a real saved document in ``tests/data/reports`` (the reports, the job
report, the comparison, the history document and a history run file, the target plans; made by
the package, ``make_documents.py`` says how) with its tables cut to their first rows (unless
``--full``: the cut keeps a case cheap, and the mutations reach the same fields), and changes
it by one to three mutations at random places: a key deleted; a value replaced by one of the
wrong type, null, a huge, negative, tiny or NaN number, a 100,000-character or hostile string,
200 levels of nesting; an array turned into an object or the other way round, emptied, or an
item repeated or dropped; a table's column dropped (as a writer that never had it) or filled
with one value (all null, text, a number).

Each mutated document goes to its kind's reader (``Report.from_json``, ``Comparison.from_json``,
``JobReport.from_json``, ``SavedHistory.from_json`` and ``history.run_from_json``,
``TargetPlan.from_json``). The reader either raises ``SchemaError`` (rejected), or the object it
gives must draw in every format the view registry offers for it (``views.formats``), ``repr``
and ``save_html``'s page (rendered); a run file's report is drawn in a ``History`` of two runs
after the original one. Anything else, a warning included (a picture that could not be drawn,
an overflow), is a failure, printed with the case number, the kind, the mutations and the
traceback. Pictures (Pillow, and matplotlib for a sweep's) cost milliseconds to seconds a case:
they are drawn in a share ``--pictures`` of the cases and left out of the others, as for an
install without matplotlib.
With ``--bundle-only`` (the CI run) the "text" and "html" formats are left to the notebook
bundle, which holds both.

Prints the counts (tried, rejected, rendered, failures, per kind); exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jupyter_brrr import views  # noqa: E402
from jupyter_brrr.report.comparison import Comparison  # noqa: E402
from jupyter_brrr.report.history import History, SavedHistory, run_from_json  # noqa: E402
from jupyter_brrr.report.job import JobReport  # noqa: E402
from jupyter_brrr.report.report import Report  # noqa: E402
from jupyter_brrr.report.target import TargetPlan  # noqa: E402
from jupyter_brrr.schema.types import SchemaError  # noqa: E402

DOCUMENTS = ROOT / "tests" / "data" / "reports"
# The saved documents of each kind (newer.json is a report of a version this one refuses).
SOURCES: dict[str, tuple[str, ...]] = {
    "report": (*("ab", "cpu_only", "empty", "named", "small", "small_v2", "sweep", "xss"),),
    "job": ("job",),
    "comparison": ("comparison",),
    "history": ("history", "history_run"),
    "plan": ("plan", "plan_throughput"),
}
ROWS_KEPT = 3  # rows of each table kept in a cut document

HUGE_STRING = "x" * 100_000
HOSTILE: list[Callable[[], Any]] = [
    lambda: None, lambda: "x", lambda: "1", lambda: "", lambda: True, lambda: False,
    lambda: 0, lambda: 1, lambda: -1, lambda: 0.5, lambda: -0.0, lambda: 5e-324,
    lambda: 1e308, lambda: -1e308, lambda: 2**70, lambda: -(2**70), lambda: 10**400,
    lambda: math.nan, lambda: math.inf, lambda: -math.inf,
    lambda: [], lambda: {}, lambda: [1, "a", None], lambda: {"a": [1, {"b": None}]},
    lambda: HUGE_STRING, lambda: "\x1b]0;pwned\x07\x1b[2J", lambda: "<b>&amp;</b>\u202e",
    lambda: "\ud800", lambda: _nested(200), lambda: _nested(30),
]  # fmt: skip
NUMBERS = [0, -1, -1e-9, 1e-300, 1e30, 1e300, -1e300, 2**63, math.nan, math.inf]


def _nested(depth: int) -> Any:
    value: Any = []
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def cut(value: Any) -> Any:
    """The document with each table's rows (the "data" beside "columns") cut to the first
    ROWS_KEPT."""
    if isinstance(value, dict):
        out = {k: cut(v) for k, v in value.items()}
        if isinstance(out.get("data"), list) and "columns" in out:
            out["data"] = out["data"][:ROWS_KEPT]
        return out
    if isinstance(value, list):
        return [cut(v) for v in value]
    return value


@dataclass
class Source:
    kind: str
    name: str
    text: str  # the (cut) document as JSON: each case reads a fresh copy of it
    paths: list[tuple] = field(default_factory=list)
    containers: list[tuple] = field(default_factory=list)  # of the tables and objects


def sources(full: bool = False) -> list[Source]:
    out = []
    for kind, names in SOURCES.items():
        for name in names:
            doc = json.loads((DOCUMENTS / f"{name}.json").read_text())
            if not full:
                doc = cut(doc)
            paths = list(_paths(doc))
            out.append(Source(kind, name, json.dumps(doc), paths, _containers(doc, paths)))
    return out


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _pick(paths: list[tuple], containers: list[tuple], rng: random.Random) -> tuple:
    """A place to change: any field, or (a third of the time) a table or an object, which
    the fields inside them outnumber."""
    if containers and rng.random() < 0.33:
        return rng.choice(containers)
    return rng.choice(paths[1:]) if len(paths) > 1 else ()


def _containers(doc: Any, paths: list[tuple]) -> list[tuple]:
    """The paths of the tables and objects of ``doc``."""
    out = []
    for path in paths[1:]:
        found = _parent(doc, path)
        if found is not None and isinstance(found[0][found[1]], dict):
            out.append(path)
    return out


def _parent(doc: Any, path: tuple) -> tuple[Any, Any] | None:
    """The container holding ``path`` and its key there, if the path still leads somewhere."""
    node = doc
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None
        if not isinstance(node, dict | list):
            return None
    if not path or not isinstance(node, dict | list):
        return None
    if isinstance(node, dict) and path[-1] not in node:
        return None
    if isinstance(node, list) and not (isinstance(path[-1], int) and path[-1] < len(node)):
        return None
    return node, path[-1]


def mutate(doc: dict, source: Source, rng: random.Random) -> str:
    """Change ``doc`` in place at one random place; returns what was done, in words."""
    for _ in range(20):
        path = _pick(source.paths, source.containers, rng)
        found = _parent(doc, path)
        if found is None:
            continue
        node, key = found
        value = node[key]
        where = ".".join(map(str, path))
        action = rng.randrange(10)
        if action == 9 and _is_table(value) and value["columns"]:
            column = rng.randrange(len(value["columns"]))
            name = value["columns"][column]
            if rng.random() < 0.5:  # as a writer that never had the column
                del value["columns"][column]
                for row in value["data"]:
                    del row[column]
                return f"drop column {name!r} of {where}"
            filler = rng.choice((None, None, "", "x", 0, -1, 1e30, True))
            for row in value["data"]:
                row[column] = filler
            return f"column {name!r} of {where} all {filler!r}"
        if action == 0 and isinstance(node, dict):
            del node[key]
            return f"delete {where}"
        if action == 1 and isinstance(value, int | float) and not isinstance(value, bool):
            node[key] = rng.choice(NUMBERS)
            return f"number {where} = {node[key]!r}"
        if action == 2 and isinstance(value, list):
            node[key] = {str(i): v for i, v in enumerate(value)}
            return f"array to object {where}"
        if action == 3 and isinstance(value, dict):
            node[key] = list(value.values()) if rng.random() < 0.5 else list(value.items())
            return f"object to array {where}"
        if action == 4 and isinstance(value, list):
            choice = rng.randrange(3)
            if choice == 0 or not value:
                node[key] = []
                return f"empty {where}"
            if choice == 1:
                value.append(value[rng.randrange(len(value))])
                return f"repeat an item of {where}"
            value.pop(rng.randrange(len(value)))
            return f"drop an item of {where}"
        if action == 5:
            node[key] = None
            return f"null {where}"
        made = rng.choice(HOSTILE)()
        node[key] = made
        return f"set {where} = {_short(made)}"
    return "nothing"


def _is_table(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("columns"), list)
        and isinstance(value.get("data"), list)
        and all(
            isinstance(row, list) and len(row) == len(value["columns"]) for row in value["data"]
        )
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


# --- reading and drawing ----------------------------------------------------------------------------


def _read(kind: str, doc: Any, first: Any) -> list[object]:
    """The objects a document gives (raises SchemaError for one its reader refuses)."""
    if kind == "report":
        return [Report.from_json(doc)]
    if kind == "job":
        return [JobReport.from_json(doc)]
    if kind == "comparison":
        return [Comparison.from_json(doc)]
    if kind == "plan":
        return [TargetPlan.from_json(doc)]
    if first is not None:  # a run file: its run drawn after the original one, and alone
        run = run_from_json(doc)
        first = run_from_json(first)
        first.run, first.name, run.run = 1, run.name, max(run.run, 2)
        return [History(run.name, [first, run]), History(run.name, [run])]
    return [SavedHistory.from_json(doc)]


def _draw(obj: object, pictures: bool, every: bool) -> None:
    """Draw ``obj`` in each format it has, and its ``repr``. Without ``every``, the "text" and
    "html" formats are left to the notebook bundle, which holds them (its "text/plain" and
    "text/html" are made by the same functions, from the same object)."""
    for format in views.formats(obj):
        if (format == "png" and not pictures) or (format in ("text", "html") and not every):
            continue
        drawn = views.render(obj, format)
        if format == "mimebundle":
            assert isinstance(drawn, dict) and {"text/plain", "text/html"} <= set(drawn)
    repr(obj)


@contextlib.contextmanager
def _without_matplotlib() -> Iterator[None]:
    """matplotlib and Pillow unimportable, as in an install without them: the views leave
    pictures out."""
    blocked = ("matplotlib", "PIL")
    saved = {name: sys.modules[name] for name in list(sys.modules) if name.startswith(blocked)}
    for name in blocked:
        sys.modules[name] = None  # pyright: ignore[reportArgumentType]  # blocks the import
    try:
        yield
    finally:
        for name in blocked:
            del sys.modules[name]
        sys.modules.update(saved)


@dataclass
class Outcome:
    kind: str
    result: str  # "rejected", "rendered" or "failure"
    mutations: list[str]
    error: str = ""


def run_case(source: Source, seed: int, case: int, pictures: bool, every: bool = True) -> Outcome:
    rng = random.Random(f"{seed}:{case}")
    doc = json.loads(source.text)
    mutations = [mutate(doc, source, rng) for _ in range(rng.choice((1, 1, 2, 3)))]
    first = json.loads(source.text) if source.name == "history_run" else None
    try:
        objects = _read(source.kind, doc, first)
    except SchemaError:
        return Outcome(source.kind, "rejected", mutations)
    except Exception:
        return Outcome(source.kind, "failure", mutations, "reading: " + traceback.format_exc())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning is a failure too (as in the tests)
            for obj in objects:
                if pictures:
                    _draw(obj, True, every)
                else:
                    with _without_matplotlib():
                        _draw(obj, False, every)
    except Exception:
        return Outcome(source.kind, "failure", mutations, "drawing: " + traceback.format_exc())
    return Outcome(source.kind, "rendered", mutations)


def source_of(pool: list[Source], case: int) -> Source:
    """The document case number ``case`` starts from: the kinds in turn, and each kind's
    documents in turn (every kind gets the same share of the cases)."""
    kinds = list(SOURCES)
    kind = kinds[case % len(kinds)]
    of_kind = [s for s in pool if s.kind == kind]
    return of_kind[(case // len(kinds)) % len(of_kind)]


def run(
    cases: int,
    seed: int,
    pictures: float,
    full: bool = False,
    every: bool = True,
    quiet: bool = False,
) -> dict:
    """Run ``cases`` cases; returns the counts and the failures."""
    pool = sources(full)
    picker = random.Random(seed)
    counts: Counter[tuple[str, str]] = Counter()
    failures: list[tuple[int, Outcome]] = []
    started = time.perf_counter()
    for case in range(cases):
        source = source_of(pool, case)
        outcome = run_case(source, seed, case, picker.random() < pictures, every)
        counts[(source.kind, outcome.result)] += 1
        if outcome.result == "failure":
            failures.append((case, outcome))
            if not quiet:
                print(f"case {case} ({source.name}): {'; '.join(outcome.mutations)}")
                print(outcome.error)
    return {
        "cases": cases,
        "counts": counts,
        "failures": failures,
        "seconds": time.perf_counter() - started,
    }


def summary(result: dict) -> str:
    counts: Counter = result["counts"]
    kinds = sorted({kind for kind, _ in counts})
    total = Counter()
    for (_, outcome), n in counts.items():
        total[outcome] += n
    lines = [
        f"{result['cases']} mutations tried in {result['seconds']:.1f} s: "
        f"{total['rejected']} rejected (SchemaError), {total['rendered']} rendered, "
        f"{total['failure']} failures"
    ]
    for kind in kinds:
        lines.append(
            f"  {kind:<10} {sum(n for (k, _), n in counts.items() if k == kind):>7} tried, "
            f"{counts[(kind, 'rejected')]:>7} rejected, {counts[(kind, 'rendered')]:>7} rendered, "
            f"{counts[(kind, 'failure')]:>5} failures"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--pictures", type=float, default=0.02, help="share of cases drawn with pictures"
    )
    parser.add_argument("--full", action="store_true", help="whole documents, tables uncut")
    parser.add_argument(
        "--bundle-only",
        action="store_true",
        help="leave the text and html formats to the notebook bundle that holds them (the CI run)",
    )
    parser.add_argument("--case", type=int, help="run one case and print it")
    args = parser.parse_args()
    if args.case is not None:
        source = source_of(sources(args.full), args.case)
        outcome = run_case(source, args.seed, args.case, pictures=True)
        print(f"case {args.case} ({source.kind}, {source.name}): {outcome.result}")
        print("\n".join(f"  {m}" for m in outcome.mutations))
        print(outcome.error)
        return int(outcome.result == "failure")
    result = run(args.cases, args.seed, args.pictures, args.full, not args.bundle_only)
    print(summary(result))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
