"""The report: a plain data object (pandas frames and a summary) with a versioned JSON form.

It is what every layer above the analysis consumes: the notebook display, the CLI, the browser
renderer (through ``to_json``) and the A/B actions. It holds no UI code: ``repr``, the notebook
display and ``save_html`` ask the view registry (``jupyter_brrr.views.render``, through
``Shown``).
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import numpy as np
import pandas as pd

from ..analysis import analyze as analysis
from ..analysis import causal, code_change, whatif
from ..analysis.analyze import steady_state_options
from ..analysis.modules import path_pattern
from ..analysis.step_graph import GRAPH_LIMIT, StepGraph
from ..schema.report import (
    CPU_OP_COLUMNS,
    KERNEL_COLUMNS,
    MIME_TYPE,
    MODULE_COLUMNS,
    NUMERIC_COLUMNS,
    OPS_COLUMNS,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    SPLIT_PARTS,
    STEP_COLUMNS,
    SchemaError,
    Summary,
    check_report,
)
from . import display
from .shown import ShownAsPage
from .target import Goal, TargetPlan, plan
from .writing import check_target, json_safe, json_value, write_file

if TYPE_CHECKING:
    from ..analysis.replay import Prediction

__all__ = ["Report", "SchemaError", "json_safe", "steady_state_options"]

AMDAHL = "Amdahl's law on the span (no step graph to replay: times that overlap are added up)"
# Past this many launches the JSON carries kernels aggregated by name, op and stream; the full
# list stays in the frame and in the saved trace.
KERNEL_LIMIT = 20_000
CPU_OP_LIMIT = 5_000


class Report(ShownAsPage):
    """One profiled run (or loaded trace): where the time went.

    Attributes:
        summary: span and its split (``span_s``, ``busy_s``, ``compute_s``, ``memory_s``,
            ``other_s``, ``idle_s``), ``device``, ``peaks``, ``runs``, memory figures, totals.
        ops: one row per op name and input shapes (see ``schema.OPS_COLUMNS``).
        kernels: one row per GPU kernel, copy or set (see ``schema.KERNEL_COLUMNS``).
        cpu_ops: top-level host ops, for the timeline.
        steps: a loaded trace's profiler steps, one row each (see ``schema.STEP_COLUMNS``):
            their spans and splits; empty unless the trace marks several.
        modules: the module tree, one row per ``nn.Module`` path with the time of its subtree
            (see ``schema.MODULE_COLUMNS``); empty where no op ran in a module.
        notes: caveats that qualify the numbers.
        recommendations: what to try first, biggest share first.
        ruled_out: the recommendations the step's replay says cannot pay here, each with
            ``"ruled_out"`` saying why (``causal.cannot_pay``): shown below the list, not
            numbered in it (``try_fix(n)`` counts ``recommendations`` only).
        ab: the A/B comparison, once one has run.
        change: a named run's comparison against the previous run of its name
            (``Comparison.to_dict()``), or None.
        history: a named run's history, one dict per run of its name (``History.rows()``).
        target: the plan for a target (``target.plan``), when one was given.
        sweep: a size sweep of the same code (``SweepResult.to_dict()``), when one ran.
        memory: what held the peak memory (``MemoryBreakdown.to_dict()``), when asked for.
    """

    def __init__(
        self,
        *,
        summary: Summary,
        ops: pd.DataFrame,
        kernels: pd.DataFrame,
        cpu_ops: pd.DataFrame | None = None,
        notes: list[str] | None = None,
        recommendations: list[dict] | None = None,
        ruled_out: list[dict] | None = None,
        name: str = "",
        source: str = "profile",
        created: str | None = None,
        ab: dict | None = None,
        trace_path: str | None = None,
        steps: pd.DataFrame | None = None,
        change: dict | None = None,
        history: list[dict] | None = None,
        target: dict | None = None,
        modules: pd.DataFrame | None = None,
        sweep: dict | None = None,
        memory: dict | None = None,
        graph: StepGraph | None = None,
        what_if: dict | None = None,
    ) -> None:
        self.summary = summary
        self.ops = ops
        self.kernels = kernels
        self.cpu_ops = (
            cpu_ops if cpu_ops is not None else pd.DataFrame(columns=list(CPU_OP_COLUMNS))
        )
        self.notes = list(notes or [])
        # A fix that cannot pay is not numbered among the recommendations; a report written
        # before the split has it in the one list, and gets it moved here too.
        self.recommendations, self.ruled_out = causal.cannot_pay(
            [*(recommendations or []), *(ruled_out or [])], float(summary.get("span_s") or 0.0)
        )
        self.name = name
        self.source = source
        self.created = created or datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.ab = ab
        self.trace_path = trace_path
        self.steps = (
            steps
            if steps is not None and len(steps.columns)
            else pd.DataFrame(columns=list(STEP_COLUMNS))
        )
        self.change = change
        self.history = history
        self.target = target
        self.sweep = sweep
        self.memory = memory
        self.modules = (
            modules
            if modules is not None and len(modules.columns)
            else pd.DataFrame(columns=list(MODULE_COLUMNS))
        )
        self.graph = graph
        # The what-if's replayed curves for the browser (analysis/whatif.py): computed on the
        # first to_dict(), not in load() (a hundred replays), or read from a saved report.
        self._what_if = what_if

    @classmethod
    def from_analysis(cls, result: analysis.Analysis, **kwargs: Any) -> Report:
        result.complete()
        # The savings replayed on the step's dependencies, and ranked by them (analysis.causal).
        recommendations = causal.replay_savings(
            result.recommendations, result.graph, result.summary
        )
        # A fix that needs a code change shows it (analysis.code_change).
        code_change.attach(recommendations)
        return cls(
            summary=result.summary,
            ops=result.ops,
            kernels=result.kernels,
            cpu_ops=result.cpu_ops,
            notes=result.notes,
            recommendations=recommendations,
            steps=result.steps,
            modules=result.modules,
            graph=result.graph,
            **kwargs,
        )

    # --- questions a user asks --------------------------------------------------------------

    def what_if(self, factors: tuple[float, ...] = (2, 10)) -> pd.DataFrame:
        """The span if one part of the split (compute, memory, communication, other; idle: the
        host's work), the whole step's GPU work, launch path, synchronisations or profiler's
        cost, or one of the top ops got faster, predicted by replaying the step's dependencies
        (``analysis.whatif.table``; ``frame.attrs`` says what it could not model): the numbers
        of the What-if tab. A report without a step graph (GPU work) gets Amdahl's law on the
        span, which adds up times that overlap: ``frame.attrs["predicted_by"]`` says which."""
        if self._replayable():
            assert self.graph is not None
            return whatif.table(self.graph, self.summary, self.ops, factors)
        frame = analysis.what_if(self.summary, self.ops, factors)
        frame.attrs["predicted_by"] = AMDAHL
        return frame

    def _replayable(self) -> bool:
        return bool(self.graph is not None and self.graph.gpu_count and self.summary.get("gpu"))

    def what_if_curves(self) -> dict | None:
        """What the What-if tab draws: each target's replayed span at a few factors
        (``analysis.whatif.curves``); None where the report cannot replay (the tab shows
        Amdahl's law, labelled as such). Computed once."""
        if self._what_if is None and self._replayable():
            assert self.graph is not None
            self._what_if = whatif.curves(self.graph, self.summary, self.ops)
        return self._what_if

    def predict(
        self,
        *,
        gpu: float = 1.0,
        ops: Mapping[Any, float] | None = None,
        category: Mapping[str, float] | None = None,
        modules: Mapping[str, float] | None = None,
        launch: float = 1.0,
        syncs: float = 1.0,
        host: float = 1.0,
        copies: str | None = None,
        profiler: float = 1.0,
        cpu: float = 1.0,
    ) -> Prediction:
        """The step's span if something changed, predicted by replaying the step's dependencies
        (``jupyter_brrr.replay`` says how each change acts and what it cannot model).

        ``gpu=2``: all GPU work twice as fast; ``ops={"aten::mm": 2}`` (or ``{("aten::mm",
        shapes): 2}``), ``category={"memory": 2}`` (a bound or a kernel category),
        ``modules={"model.layer1": 2}``: that GPU work; ``launch=0``: no launch overhead (a CUDA
        graph); ``syncs=0``: no synchronisations; ``host=2``: host work twice as fast;
        ``copies="async"``: copies asynchronous from pinned memory; ``profiler=0``: the step
        without the profiler's own cost; ``cpu=0``: host work that launches nothing (CPU ops,
        Python, the data loader) off the critical path. Combinable. Returns a ``Prediction`` (``span_s``,
        ``speedup``, ``critical_path``, ``not_modelled``).
        """
        from ..analysis.replay import predict

        return predict(
            self._step_graph(),
            gpu=gpu,
            ops=dict(ops or {}),
            category=dict(category or {}),
            modules=dict(modules or {}),
            launch=launch,
            syncs=syncs,
            host=host,
            copies=copies,
            profiler=profiler,
            cpu=cpu,
        )

    @property
    def critical_path(self) -> pd.DataFrame:
        """The segments that set the step's span, in time order: ``resource`` (host op, python,
        data loader, profiler, launch, sync, GPU kernel, copy, communication, GPU wait, host
        thread), ``start_s`` (from the span's start), ``dur_s``, ``name``, ``op``."""
        return self.predict().critical_path

    @property
    def idle(self) -> pd.DataFrame:
        """The GPU's idle time in the step by cause: one row per idle interval and cause
        (``start_s``, ``dur_s``, ``cause``: launch path, synchronisation, host copy, CPU work,
        data loader, profiler, another stream, kernel gap; ``op``). For one run, the host's work
        before the op that launched the first GPU work is idle too, before the span: a negative
        ``start_s``. Empty without a step graph."""
        from ..analysis.replay import idle_causes

        if self.graph is None:
            return pd.DataFrame(columns=["start_s", "dur_s", "cause", "op"])
        return idle_causes(self.graph)

    def _step_graph(self) -> StepGraph:
        if self.graph is None:
            raise ValueError(
                "This report carries no step graph, so it cannot predict: it was written by a "
                "jupyter_brrr from before the replay, has no GPU or host events, or its step had "
                f"more than {GRAPH_LIMIT:,} events, more than a report's JSON keeps. Load the "
                "trace again (jupyter_brrr.load(path); a saved report's trace is beside it as "
                "<name>.trace.json.gz) to predict."
            )
        return self.graph

    def set_target(self, goal: Goal | str, items: float | None = None) -> TargetPlan:
        """Hold the report against a target, ``"30ms"`` per run or ``"2000/s"`` (``items`` per
        run): the gap, whether fixing the top bottleneck can close it, and what scaling out
        would take. The plan is kept in ``report.target`` (and shown with the report)."""
        self.target = plan(self, goal, items)
        return TargetPlan(self.target)

    def split(self) -> pd.Series:
        """The span split, in seconds: compute, memory, other, idle."""
        summary = cast(Mapping[str, Any], self.summary)  # the parts' keys, by name
        return pd.Series({k: summary[f"{k}_s"] for k in SPLIT_PARTS})

    @property
    def empty(self) -> bool:
        return len(self.ops) == 0 and len(self.kernels) == 0

    # --- JSON ---------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        kernels, aggregated = _kernels_for_json(self.kernels)
        cpu_ops = (
            self.cpu_ops.nlargest(CPU_OP_LIMIT, "dur_s")
            if len(self.cpu_ops) > CPU_OP_LIMIT
            else self.cpu_ops
        )
        # The tables are made JSON-safe cell by cell as they are written; json_safe walks the rest.
        return {
            "schema": SCHEMA_NAME,
            "version": SCHEMA_VERSION,
            "name": json_safe(self.name),
            "source": json_safe(self.source),
            "created": json_safe(self.created),
            "summary": json_safe(self.summary),
            "notes": json_safe(self.notes),
            "recommendations": json_safe(self.recommendations),
            # What was considered and cannot pay here (causal.cannot_pay), with why.
            "ruled_out": json_safe(self.ruled_out),
            "ops": frame_to_table(self.ops, OPS_COLUMNS),
            "kernels": {
                **frame_to_table(kernels, KERNEL_COLUMNS),
                "aggregated": aggregated,
                "total": len(self.kernels),
            },
            "cpu_ops": frame_to_table(cpu_ops.sort_values("start_s"), CPU_OP_COLUMNS),
            "steps": frame_to_table(self.steps, STEP_COLUMNS),
            "modules": frame_to_table(self.modules, MODULE_COLUMNS),
            "ab": json_safe(self.ab),
            # The re-measure loop (comparison.py, history.py, target.py); null when not used.
            "change": json_safe(self.change),
            "history": json_safe(self.history),
            "target": json_safe(self.target),
            # The size sweep and the memory breakdown (actions/sweep.py, memory.py).
            "sweep": json_safe(self.sweep),
            "memory": json_safe(self.memory),
            # What the renderers draw, computed once here (display.py): they only draw it.
            "display": json_safe(display.specs(self.ops, self.summary)),
            # The step's dependency graph (step_graph.py), what predict() replays; null where
            # there is none or it is over GRAPH_LIMIT nodes.
            "graph": self.graph.to_dict()
            if self.graph is not None and self.graph.size <= GRAPH_LIMIT
            else None,
            # The What-if tab's replayed curves (analysis/whatif.py); null without a graph.
            "what_if": json_safe(self.what_if_curves()),
        }

    def to_json(self, indent: int | None = None) -> str:
        """The versioned JSON form (see ``jupyter_brrr.schema``)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes | dict) -> Report:
        """Read a report written by ``to_json`` (this schema version or older).

        The document is checked against the schema first (``schema.check_report``): one that
        does not fit raises ``SchemaError`` naming the bad field, never an error later in a
        view.
        """
        if isinstance(text, str | bytes | bytearray):
            try:
                doc = json.loads(text)
            except (ValueError, RecursionError) as error:
                hint = ""
                if isinstance(text, str) and len(text) < 4096 and Path(text).suffix == ".json":
                    hint = " To read a saved file, pass its text: Report.from_json(Path(p).read_text())."
                raise SchemaError(f"Not a report: the text is not JSON ({error}).{hint}") from None
        else:
            doc = text
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_NAME:
            raise SchemaError(
                "Not a jupyter_brrr report: the document has no 'schema': 'jupyter_brrr.report'."
            )
        version = doc.get("version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise SchemaError(
                f"This report has schema version {version}; this jupyter_brrr reads up to "
                f"version {SCHEMA_VERSION}. Update jupyter_brrr (pip install -U jupyter-brrr)."
            )
        check_report(doc)
        return cls(
            # A document's summary: an older writer's may lack the later keys.
            summary=cast(Summary, _with_split_parts(doc["summary"])),
            ops=table_to_frame(doc["ops"], OPS_COLUMNS, NUMERIC_COLUMNS["ops"]),
            kernels=table_to_frame(doc["kernels"], KERNEL_COLUMNS, NUMERIC_COLUMNS["kernels"]),
            cpu_ops=table_to_frame(doc.get("cpu_ops"), CPU_OP_COLUMNS, NUMERIC_COLUMNS["cpu_ops"]),
            notes=doc.get("notes") or [],
            recommendations=doc.get("recommendations") or [],
            ruled_out=doc.get("ruled_out") or [],
            name=doc.get("name") or "",
            source=doc.get("source") or "profile",
            created=doc.get("created"),
            ab=_ab_with_split_parts(doc.get("ab")),
            steps=_with_step_parts(
                table_to_frame(doc.get("steps"), STEP_COLUMNS, NUMERIC_COLUMNS["steps"])
            ),  # absent from older reports
            change=doc.get("change"),
            history=doc.get("history"),
            target=doc.get("target"),
            modules=table_to_frame(
                doc.get("modules"), MODULE_COLUMNS, NUMERIC_COLUMNS["modules"]
            ),  # absent from older reports
            sweep=doc.get("sweep"),  # absent from older reports
            memory=doc.get("memory"),
            graph=_graph(doc.get("graph")),  # absent from older reports
            what_if=doc.get("what_if"),  # likewise
        )

    def save(self, path: str | PathLike) -> list[Path]:
        """Write the report JSON to ``path`` and, when there is one, the raw trace beside it
        (``<stem>.trace.json.gz``, for Perfetto or chrome://tracing). Returns the files.

        Never writes over the trace the report was read from, a folder, a device or a FIFO:
        ``path`` naming one raises (``WriteRefused``, a ``ValueError``, for the trace) with what
        to give instead. Each file is written whole or not at all (``writing.write_file``).
        """
        path = Path(path)
        source = Path(self.trace_path) if self.trace_path else None
        inputs = self._read_from()
        other = _report_name(path).name
        check_target(path, inputs, other)
        written = [write_file(path, self.to_json().encode(), inputs=inputs, other_name=other)]
        if source is not None and source.exists():
            stem = path.name.removesuffix(".json")
            trace_out = path.with_name(f"{stem}.trace.json.gz")
            if same_file(trace_out, source):
                pass  # a loaded trace saved beside itself: it is already there
            else:
                zipped = source.suffix == ".gz"
                write_file(trace_out, lambda out: _copy(source, out, zipped), inputs=inputs)
            written.append(trace_out)
        return written

    def _read_from(self) -> list[str]:
        """The files this report was read from, which no save of it may write over."""
        return [self.trace_path] if self.trace_path else []

    mime_type = MIME_TYPE


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one existing file (through links too)."""
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def _report_name(path: Path) -> Path:
    """Another name for a report that was to be saved over its trace: ``run.report.json``."""
    stem = path.name
    for suffix in (".gz", ".json"):
        stem = stem.removesuffix(suffix)
    return path.with_name(f"{stem}.report.json")


def _copy(source: Path, out: BinaryIO, zipped: bool) -> None:
    """Copy a trace into ``out``, gzipped (a gzipped trace as it is)."""
    with source.open("rb") as f:
        if zipped:
            shutil.copyfileobj(f, out)
        else:
            with gzip.GzipFile(fileobj=out, mode="wb") as packed:
                shutil.copyfileobj(f, packed)


def _graph(doc: Any) -> StepGraph | None:
    if doc is None:
        return None
    try:
        return StepGraph.from_dict(doc)
    except ValueError as error:
        raise SchemaError(str(error)) from None


def _with_split_parts(summary: dict) -> dict:
    """A summary with every part of the split: one written before a part existed (the
    communication part) had none of it."""
    if not isinstance(summary, dict) or summary.get("span_s") is None:
        return summary
    missing = {f"{part}_s": 0.0 for part in SPLIT_PARTS if f"{part}_s" not in summary}
    return {**summary, **missing} if missing else summary


def _with_step_parts(steps: pd.DataFrame) -> pd.DataFrame:
    """A steps table with every part of the split (older ones had no communication)."""
    written = "communication_s" in steps and steps["communication_s"].notna().any()
    if len(steps) and not written:
        steps = steps.assign(communication_s=0.0)
    return steps


def _ab_with_split_parts(ab: Any) -> Any:
    if not isinstance(ab, dict) or not isinstance(ab.get("variants"), list):
        return ab
    variants = [
        {**v, "split": _with_split_parts(v["split"])}
        if isinstance(v, dict) and isinstance(v.get("split"), dict)
        else v
        for v in ab["variants"]
    ]
    return {**ab, "variants": variants}


def frame_to_table(frame: pd.DataFrame, columns: tuple[str, ...]) -> dict:
    """The ``columns`` of ``frame`` that it has, as a document's table: ``{"columns", "data"}``
    (rows of JSON values); ``table_to_frame`` reads it back."""
    present = [c for c in columns if c in frame.columns]
    # Column by column (``tolist`` gives Python values): itertuples indexes every column once
    # per table, which cost more than the rows of a short table.
    cells = [_json_column(frame[c]) for c in present]
    return {
        "columns": present,
        "data": [list(row) for row in zip(*cells, strict=True)] if cells else [],
    }


def _json_column(column: pd.Series) -> list:
    """A column's cells as ``json_value`` makes them, a whole numeric column at once (a report's
    kernel table has 100k cells): floats with null for NaN and infinities, ints, booleans."""
    kind = column.dtype.kind if isinstance(column.dtype, np.dtype) else "O"
    if kind == "f":
        values = column.to_numpy()
        cells = values.astype(float).tolist()
        for i in np.flatnonzero(~np.isfinite(values)).tolist():
            cells[i] = None
        return cells
    if kind in "iub":
        return column.to_numpy().tolist()  # Python ints and booleans
    return [json_value(v) for v in column.tolist()]


def table_to_frame(
    table: dict | None, columns: tuple[str, ...] = (), numeric: frozenset[str] = frozenset()
) -> pd.DataFrame:
    """A table of a report document, with every known column (one a writer left out is all
    missing values, so that the views find it); the ``numeric`` columns as numbers (a missing
    one, or one all null, is NaN: a column of objects cannot be sorted or summed)."""
    if not table:
        frame = pd.DataFrame(columns=list(columns))
    else:
        frame = pd.DataFrame(table["data"], columns=table["columns"])
        for name in columns:
            if name not in frame.columns:
                frame[name] = None
    for name in numeric & set(frame.columns):
        if frame[name].dtype == object:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype(float)
    return frame


def _kernels_for_json(kernels: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    if len(kernels) <= KERNEL_LIMIT:
        return kernels, False
    grouped = kernels.groupby(["name", "op", "stream"], sort=False).agg(
        category=("category", "first"),
        start_s=("start_s", "min"),
        dur_s=("dur_s", "sum"),
        count=("count", "sum"),
        bound=("bound", "first"),
        module=("module", lambda paths: path_pattern(list(paths))),
    )
    sums = kernels.groupby(["name", "op", "stream"], sort=False)[["flops", "bytes"]].sum(
        min_count=1
    )
    return grouped.join(sums).reset_index().sort_values("dur_s", ascending=False), True
