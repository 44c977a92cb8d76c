"""A named cell's history: every run under one name, in the kernel and in a small store beside
the notebook, so that it survives a restart.

``%%brrr --name attention`` adds each run to the history of "attention"; ``history("attention")``
(or ``%brrr history attention``) lists the runs, and any two can be compared.

The store is one folder, ``.brrr_history/``, in the notebook's folder (the folder of the notebook
file when the kernel knows it, else the kernel's working directory, which front ends set to the
notebook's folder): nothing is written anywhere else. Each run is one gzipped JSON file,
``.brrr_history/<name>/run-0003.json.gz``, holding the report without its per-launch kernel list
(kernels are kept summed by name, which is what a comparison reads) and without its timeline.
Per name the newest ``MAX_RUNS`` runs are kept, and older ones go while a name's files hold more
than ``MAX_NAME_BYTES``. A file that cannot be read (damaged, not a regular file, inflating past
``MAX_RUN_BYTES``) is skipped with a message that names it; the store never stops a cell.
Nothing is written, pruned or deleted outside the notebook's folder: a ``.brrr_history`` or a
name's folder that is a symbolic link leading out of it is refused for those (the run stays in
the kernel), and only our own regular run files are ever deleted. Run files are written through
``writing.write_file`` (whole or not at all: a full disk leaves no empty run file). Reports and
comparisons carry run numbers and times, never the store's path.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..schema.history import (
    HISTORY_MIME_TYPE,
    HISTORY_SCHEMA,
    HISTORY_VERSION,
    RUN_SCHEMA,
    RUN_VERSION,
    check_history,
    check_run_file,
)
from ..schema.report import SPLIT_PARTS
from ..schema.types import parse_document
from .comparison import Comparison, Figures, compare_reports, judge_span
from .report import Report, SchemaError
from .shown import ShownAsPage
from .writing import write_file

STORE_DIRNAME = ".brrr_history"
MAX_RUNS = 50
MAX_NAME_BYTES = 20_000_000
# What one run file may inflate to (a stored GPT-2 run is about 200 kB): a gzip bomb in the store
# costs this much, not gigabytes.
MAX_RUN_BYTES = 64_000_000
# A history's own document, drawn by the extension (js/src/job_app.ts HistoryApp): the same
# chart and runs table as the report's Change tab.
_RUN_FILE = re.compile(r"^run-(\d+)\.json\.gz$")


class HistoryError(ValueError):
    """A history question that has no answer (an unknown name or run); the message says what
    exists."""


@dataclass
class Run:
    """One run of a named cell."""

    name: str
    run: int
    report: Report
    code_sha1: str | None = None
    target: dict | None = None  # the goal it was given: {"text", "items"}

    @property
    def created(self) -> str:
        return self.report.created


@dataclass(repr=False)  # repr, display, lines and save_html: the views draw it (ShownAsPage)
class History(ShownAsPage):
    """The runs of one name, oldest first. ``history[3]`` is run 3; ``history[-1]`` the newest."""

    name: str
    runs: list[Run] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __getitem__(self, run: int) -> Run:
        """Run number ``run`` (1, 2, ...), or counted from the newest when negative."""
        if run < 0:
            if -run > len(self.runs):
                raise HistoryError(self._missing(run))
            return self.runs[run]
        for entry in self.runs:
            if entry.run == run:
                return entry
        raise HistoryError(self._missing(run))

    def _missing(self, run: int) -> str:
        if not self.runs:
            return f"No runs of {self.name!r} yet: run a cell with %%brrr --name {self.name}."
        numbers = ", ".join(str(r.run) for r in self.runs)
        return f"{self.name!r} has no run {run}; its runs: {numbers} (or -1 for the newest)."

    @property
    def last(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    def report(self, run: int = -1) -> Report:
        """The report of one run (without its per-launch kernel list and timeline)."""
        return self[run].report

    def diff(self, before: int = -2, after: int = -1) -> Comparison:
        """Compare two runs (run numbers, or negative from the newest): by default the last two."""
        if len(self.runs) < 2 and before == -2 and after == -1:
            raise HistoryError(
                f"{self.name!r} has {len(self.runs)} run(s): a comparison needs two. Run the "
                f"cell again with %%brrr --name {self.name}."
            )
        left, right = self[before], self[after]
        return compare_reports(
            left.report,
            right.report,
            labels=(f"run {left.run}", f"run {right.run}"),
            runs=(left.run, right.run),
            code_same=_same_code(left, right),
        )

    def rows(self) -> list[dict]:
        """One JSON-safe dict per run: its span and split per run, counts, and the verdict
        against the run before it (what the history table and chart show)."""
        rows = []
        previous: Run | None = None
        for entry in self.runs:
            figures = Figures(entry.report)
            s = entry.report.summary
            row: dict[str, Any] = {
                "run": entry.run,
                "created": entry.created,
                "span_s": figures.span,
                **{f"{p}_s": figures.parts[p] for p in SPLIT_PARTS},
                "kernel_count": _per_run(s.get("kernel_count"), figures.per_run),
                "launch_count": _per_run(s.get("launch_count"), figures.per_run),
                "warm": s.get("warm"),
                "device": s.get("device"),
                "verdict": None,
                "speedup": None,
                "code_changed": None,
                "settings": run_settings(entry),
            }
            if previous is not None:
                before = Figures(previous.report)
                same = _same_code(previous, entry)
                # The verdict diff() gives these two runs (the Change tab's), without its tables.
                change = judge_span(before, figures, gpu=before.gpu and figures.gpu, code_same=same)
                row["verdict"] = change.verdict
                row["speedup"] = change.speedup if math.isfinite(change.speedup) else None
                row["code_changed"] = None if same is None else not same
            rows.append(row)
            previous = entry
        from .report import json_safe

        return json_safe(rows)

    @property
    def table(self) -> pd.DataFrame:
        """The runs as a frame, one row per run."""
        return pd.DataFrame(self.rows()).set_index("run") if self.runs else pd.DataFrame()

    def to_dict(self) -> dict:
        """The versioned JSON form (``schema: jupyter_brrr.history``): the name and its runs as
        ``rows()`` gives them (no path: the store's place is never in it)."""
        return {
            "schema": HISTORY_SCHEMA,
            "version": HISTORY_VERSION,
            "name": self.name,
            "runs": self.rows(),
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    mime_type = HISTORY_MIME_TYPE


@dataclass(repr=False)
class SavedHistory(ShownAsPage):
    """A history read back from its document (``History.to_json()``): its name and its runs as
    rows, without their reports. The views draw it as they draw a ``History``."""

    name: str
    runs: list[dict] = field(default_factory=list)

    @classmethod
    def from_json(cls, text: str | bytes | Mapping) -> SavedHistory:
        """Read a history document; one that does not fit its schema raises ``SchemaError``
        naming the bad field."""
        doc = parse_document(text, "history")
        check_history(doc)
        assert isinstance(doc, dict)
        return cls(name=doc["name"], runs=list(doc["runs"]))

    def to_dict(self) -> dict:
        return {
            "schema": HISTORY_SCHEMA,
            "version": HISTORY_VERSION,
            "name": self.name,
            "runs": self.runs,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    mime_type = HISTORY_MIME_TYPE


def run_settings(entry: Run) -> str:
    """How a run was measured, in words: "1 warm-up, 5 timed, 1 profiled (burst), target 30ms"
    (a loaded trace: its source), for the history's table and chart."""
    s = entry.report.summary
    runs = s.get("runs") if isinstance(s.get("runs"), Mapping) else {}
    counts = [
        f"{int(runs[key])} {word}"
        for key, word in (("warmup", "warm-up"), ("timed", "timed"), ("profiled", "profiled"))
        if isinstance(runs.get(key), int | float) and runs[key]
    ]
    text = ", ".join(counts) or str(entry.report.source or "")
    timing = s.get("timing")
    if not isinstance(timing, Mapping):
        timing = {}
    if timing.get("protocol") and timing["protocol"] != "single":
        text += f" ({timing['protocol']})"
    if s.get("warm") is False:
        text += ", first run"
    if entry.target and entry.target.get("text"):
        items = entry.target.get("items")
        text += f", target {entry.target['text']}" + (f" of {items} items" if items else "")
    return text


def _per_run(value: Any, per_run: int) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number / per_run if math.isfinite(number) else None


def _same_code(a: Run, b: Run) -> bool | None:
    if a.code_sha1 is None or b.code_sha1 is None:
        return None
    return a.code_sha1 == b.code_sha1


def code_hash(code: str) -> str:
    """The hash a run keeps of its cell's code (the code itself is in the notebook)."""
    return hashlib.sha1(code.strip().encode("utf-8")).hexdigest()


# --- the store ---------------------------------------------------------------------------------------


def folder_slug(name: str) -> str:
    """A folder name for a history name: its safe characters, and a hash of the whole name when
    any had to go (so "a/b" and "a_b" stay apart)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60].lstrip(".")
    if slug != name:
        slug = f"{slug or 'name'}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"
    return slug


class Store:
    """The histories of one folder, read from disk once per name and kept in memory."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.root = self.folder / STORE_DIRNAME
        self._histories: dict[str, History] = {}

    def names(self) -> list[str]:
        """The names with runs, in memory or on disk."""
        names = {name for name, h in self._histories.items() if h.runs}
        if self.root.is_dir():
            for entry in sorted(self.root.iterdir()):
                if entry.is_dir() and entry.name not in {folder_slug(n) for n in names}:
                    name = _name_in(entry)
                    if name is not None:
                        names.add(name)
        return sorted(names)

    def history(self, name: str) -> History:
        """The runs of ``name`` (read from disk the first time)."""
        if name not in self._histories:
            self._histories[name] = self._read(name)
        return self._histories[name]

    def add(
        self,
        name: str,
        report: Report,
        *,
        code: str | None = None,
        target: Mapping | None = None,
    ) -> tuple[Run, list[str]]:
        """Keep a new run of ``name``; returns it and messages (a store that could not be
        written: the run is then kept in this kernel only)."""
        history = self.history(name)
        messages: list[str] = []
        folder = self.root / folder_slug(name)
        number = max([r.run for r in history.runs] + _numbers_on_disk(folder) + [0]) + 1
        entry = Run(
            name=name,
            run=number,
            report=trimmed(report),
            code_sha1=code_hash(code) if code is not None else None,
            target=dict(target) if target else None,
        )
        outside = self._outside(folder)
        try:
            if outside:
                raise OSError(outside)
            entry.run = _write(folder, entry)
        except OSError as error:
            messages.append(
                f"history of {name!r}: run {number} is kept in this kernel only, the store "
                f"beside the notebook could not be written ({type(error).__name__}: "
                f"{error.strerror or error})."
            )
        history.runs.append(entry)
        del history.runs[:-MAX_RUNS]
        if not outside:
            messages += _prune(folder)
        return entry, messages

    def forget(self, name: str) -> tuple[int, list[str]]:
        """Delete the runs of ``name``, in memory and on disk: only our own run files (regular
        files named ``run-NNNN.json.gz``), never outside the notebook's folder (a linked folder:
        ``HistoryError``, nothing deleted). Returns how many files went, and what stayed."""
        folder = self.root / folder_slug(name)
        outside = self._outside(folder)
        if outside:
            raise HistoryError(f"the runs of {name!r} were not deleted: {outside}.")
        self._histories.pop(name, None)
        removed, kept = 0, []
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if not _is_run_file(path):
                    kept.append(path.name)
                    continue
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue  # another kernel deleted it first
                removed += 1
            if not kept:
                folder.rmdir()
        messages = [
            f"{STORE_DIRNAME}/{folder.name}/{entry} stayed: it is not a run file of ours."
            for entry in kept
        ]
        return removed, messages

    def _outside(self, folder: Path) -> str | None:
        """Why the store must not write or delete in ``folder``: it leads out of the notebook's
        folder (a symbolic link); None when it is inside."""
        home = self.folder.resolve()
        if folder.resolve().is_relative_to(home):
            return None
        return (
            f"{STORE_DIRNAME}/{folder.name} leads outside the notebook's folder, to "
            f"{folder.resolve()} (a symbolic link); remove the link to keep runs beside the "
            "notebook"
        )

    def _read(self, name: str) -> History:
        history = History(name)
        folder = self.root / folder_slug(name)
        if not folder.exists():
            return history
        if not folder.is_dir():
            history.messages.append(
                f"history of {name!r}: {STORE_DIRNAME}/{folder.name} beside the notebook is "
                "not a folder, so no earlier runs were read and new ones stay in this kernel."
            )
            return history
        for path in sorted(folder.iterdir(), key=lambda p: _run_number(p) or 0):
            if _run_number(path) is None:
                continue
            try:
                entry = _read_run(path)
                if entry.name != name:
                    raise SchemaError(f"it holds a run of {entry.name!r}")
            # Whatever a damaged file makes the reading raise (RecursionError, OverflowError
            # ...): the file is skipped, the name keeps working.
            except Exception as error:
                history.messages.append(
                    f"history of {name!r}: {STORE_DIRNAME}/{folder.name}/{path.name} could not be "
                    f"read ({type(error).__name__}: {error}); it was skipped. Delete the file "
                    "to silence this."
                )
                continue
            history.runs.append(entry)
        del history.runs[:-MAX_RUNS]
        return history


def trimmed(report: Report) -> Report:
    """The report as a history keeps it: kernels summed by name, no timeline, no comparison."""
    kernels = report.kernels
    if len(kernels) and {"name", "dur_s"} <= set(kernels.columns):
        defaults = {"op": "", "category": "", "bound": "other", "count": 1}
        kernels = kernels.assign(**{c: v for c, v in defaults.items() if c not in kernels})
        grouped = (
            kernels.groupby("name", sort=False)
            .agg(
                op=("op", "first"),
                category=("category", "first"),
                dur_s=("dur_s", "sum"),
                count=("count", "sum"),
                bound=("bound", "first"),
            )
            .reset_index()
        )
        grouped["stream"] = None
        grouped["start_s"] = 0.0
    else:
        grouped = kernels
    return Report(
        summary=dict(report.summary),  # pyright: ignore[reportArgumentType]  # filtered: only files with a run number
        ops=report.ops,
        kernels=grouped,
        notes=report.notes,
        recommendations=report.recommendations,
        ruled_out=report.ruled_out,
        name=report.name,
        source=report.source,
        created=report.created,
        ab=report.ab,
        steps=report.steps,
    )


def _run_number(path: Path) -> int | None:
    match = _RUN_FILE.match(path.name)
    return int(match.group(1)) if match else None


def _numbers_on_disk(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return [n for n in (_run_number(p) for p in folder.iterdir()) if n is not None]


def _write(folder: Path, entry: Run) -> int:
    """Write the run's file under a new number (exclusive create: two kernels on one folder
    never overwrite each other); returns the number used."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": RUN_SCHEMA,
        "version": RUN_VERSION,
        "name": entry.name,
        "run": entry.run,
        "code_sha1": entry.code_sha1,
        "target": entry.target,
        "report": entry.report.to_dict(),
    }
    number = entry.run
    while True:
        data = gzip.compress(json.dumps(doc, allow_nan=False).encode("utf-8"), compresslevel=6)
        try:
            write_file(folder / f"run-{number:04d}.json.gz", data, exclusive=True)
            return number
        except FileExistsError:
            number += 1
            doc["run"] = number


def _read_run(path: Path) -> Run:
    entry = run_from_json(_read_document(path))
    # What the history shows of the run must work: a damaged one is skipped here, not later.
    run_settings(entry)
    Figures(entry.report)
    return entry


def run_from_json(doc: object) -> Run:
    """A run of the store from its file's document; one that does not fit the schema
    (``schema.history.check_run_file``, then its report's) raises ``SchemaError`` naming the
    bad field."""
    check_run_file(doc)
    assert isinstance(doc, dict)
    try:
        report = Report.from_json(doc["report"])
    except SchemaError as error:
        raise SchemaError(f"report: {error}") from None
    return Run(
        name=doc["name"],
        run=doc["run"],
        report=report,
        code_sha1=doc.get("code_sha1"),
        target=doc.get("target"),
    )


def _read_document(path: Path) -> dict:
    """A run file's document: a regular file only (a FIFO, or a link to one, is refused before
    it could block), inflated to at most ``MAX_RUN_BYTES``."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # a device is not even opened
        raise SchemaError("it is not a regular file")
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # and a FIFO put there since: no block
    with os.fdopen(handle, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SchemaError("it is not a regular file")
        packed = f.read(MAX_RUN_BYTES + 1)
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # a gzip stream
    text = inflate.decompress(packed, MAX_RUN_BYTES)
    if inflate.unconsumed_tail or len(packed) > MAX_RUN_BYTES:
        raise SchemaError(f"it inflates to more than {MAX_RUN_BYTES:,} bytes")
    if not inflate.eof:
        raise SchemaError("the gzip stream is truncated")
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("schema") != RUN_SCHEMA:
        raise SchemaError("not a jupyter_brrr history run")
    return doc


def _is_run_file(path: Path) -> bool:
    """Whether ``path`` is one of our run files: its name, and a regular file (not a link)."""
    try:
        return _run_number(path) is not None and stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except FileNotFoundError:  # another kernel on the same name pruned it
        return 0


def _name_in(folder: Path) -> str | None:
    """The history name stored in a folder's newest readable run file."""
    files = sorted((p for p in folder.iterdir() if _run_number(p) is not None), key=_run_number)  # pyright: ignore[reportArgumentType, reportCallIssue]  # filtered: only files with a run number
    for path in reversed(files):
        try:
            name = _read_document(path).get("name")
        except Exception:  # a damaged file: the next one may name it
            continue
        if isinstance(name, str):
            return name
    return None


def _prune(folder: Path) -> list[str]:
    """Drop the oldest run files beyond MAX_RUNS, and while the name's files hold more than
    MAX_NAME_BYTES (the newest two always stay)."""
    if not folder.is_dir():
        return []
    try:
        files = sorted((p for p in folder.iterdir() if _is_run_file(p)), key=_run_number)  # pyright: ignore[reportArgumentType, reportCallIssue]  # filtered: only files with a run number
        sizes = [_size(p) for p in files]
        while len(files) > 2 and (len(files) > MAX_RUNS or sum(sizes) > MAX_NAME_BYTES):
            # missing_ok: another kernel on the same name may have pruned it first
            files.pop(0).unlink(missing_ok=True)
            sizes.pop(0)
    except OSError as error:
        return [f"history: could not tidy {STORE_DIRNAME}/{folder.name} ({error})."]
    return []


# --- a named run --------------------------------------------------------------------------------


def keep_run(
    report: Report,
    name: str,
    *,
    code: str | None = None,
    goal: Any = None,
    folder: str | os.PathLike | None = None,
) -> tuple[Comparison | None, list[str]]:
    """Add ``report`` to the history of ``name`` and give it what a named run shows: the
    change since the previous run (``report.change``), the runs of the name
    (``report.history``) and the plan for ``goal`` (a ``target.Goal``; by default the name's
    last one), in ``report.target``. Returns the comparison (None for a first run) and messages
    for the user (a damaged or unwritable store)."""
    from .target import TargetError, parse_goal

    store = store_for(folder)
    runs = store.history(name)
    messages = list(runs.messages)
    runs.messages.clear()
    previous = runs.last
    if goal is None and previous is not None and previous.target:
        try:
            goal = parse_goal(previous.target["text"], previous.target.get("items"))
        except (TargetError, KeyError, TypeError):
            goal = None  # a target this version cannot read: the run goes on without one
    if goal is not None:
        report.set_target(goal)
    kept_goal = {"text": goal.text, "items": goal.items} if goal is not None else None
    entry, written = store.add(name, report, code=code, target=kept_goal)
    messages += written
    comparison = None
    if previous is not None:
        comparison = runs.diff(previous.run, entry.run)
        comparison.after_report = report  # the full report, not the stored copy
        report.change = comparison.to_dict()
    report.history = runs.rows()
    return comparison, messages


# --- where the store is --------------------------------------------------------------------------

_stores: dict[Path, Store] = {}


def notebook_folder(user_ns: Mapping | None = None) -> Path:
    """The folder of the notebook this kernel runs: from the notebook path front ends give the
    kernel (VS Code's ``__vsc_ipynb_file__``, Jupyter's ``__session__``) when it is an existing
    absolute path, else the working directory (where Jupyter starts a notebook's kernel)."""
    for key in ("__vsc_ipynb_file__", "__session__"):
        value = (user_ns or {}).get(key)
        if isinstance(value, str) and os.path.isabs(value) and os.path.isfile(value):
            return Path(value).parent
    return Path.cwd()


def store_for(folder: str | os.PathLike | None = None) -> Store:
    """The store of ``folder`` (default: the working directory), one per folder and process."""
    path = Path(folder) if folder is not None else Path.cwd()
    key = path.resolve()
    if key not in _stores:
        _stores[key] = Store(path)
    return _stores[key]


def history(name: str, folder: str | os.PathLike | None = None) -> History:
    """The runs of ``%%brrr --name NAME`` cells, from this kernel and the store beside the
    notebook (``folder``; by default the notebook's folder as ``%%brrr`` finds it)."""
    if folder is None:
        folder = notebook_folder(_user_namespace())
    return store_for(folder).history(name)


def _user_namespace() -> Mapping | None:
    """The namespace of ``__main__``: in IPython (a notebook's kernel), the user's namespace,
    where front ends put the notebook's path; in a script, its globals. Read without importing
    IPython, which only the notebook front end does."""
    main = sys.modules.get("__main__")
    return vars(main) if main is not None else None
