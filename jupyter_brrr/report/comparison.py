"""Compare two measurements of the same code: what changed, by how much, and can it be trusted.

``diff(before, after)`` takes two reports (``Report`` objects, saved report JSON files, or
profiler traces) and returns a :class:`Comparison`. How each number is made:

- **Per run.** Every figure is per run of the code: a loaded trace whose profiler steps were
  found is already one step's (its median steady step, ``summary["steps"]``), and its steady
  steps' spans are its spread; a trace whose figures cover several steps together (CPU-only)
  has them divided by its step count (``runs.profiled``).
- **The span change** is ``speedup = before span / after span`` (each report's span per run: the
  median of its timed runs when it has them). Its range comes from both reports' timed runs
  (``summary.run_spans_s``, or a trace's steady steps): each median gets a distribution-free interval from the order
  statistics of its runs (the widest pair ``x(k)``, ``x(n+1-k)`` that still covers the median with
  at least 90% probability; with 5 runs that is the fastest and the slowest, 94%), and the
  speed-up's range is before-low / after-high .. before-high / after-low. The change is called
  **noise** when that range holds 1x, or when it is smaller than ``DRIFT`` (5%): two separate
  measurements of the same code on one machine differ by a few percent even where each one's
  runs agree to 1% (clocks under the power limit, other processes; bench/RESULTS.md shows
  capture-to-capture medians of a GPT-2 forward 1-5% apart on the H200), and a spread measured
  within one report cannot see that. So the same code measured twice is called noise unless the
  machine drifted by more than 5% between the two; a real 10% gain with runs that agree to a few
  percent is not. Without timed runs on both sides there is no spread: a change under ``DRIFT``
  is still noise, a larger one is "uncertain".
- **The host CPU's speed** moves in levels on shared machines (bench/RESULTS.md, host drift),
  and launch-bound or Python-heavy time moves with it. Each timed run records it (a fixed
  Python loop, ``summary.timing.host_loop_s``). When the two sides' host speeds differ by more
  than ``spread.HOST_LEVEL_CHANGE`` (15%) and that explains the whole change, the change is
  **noise**, and the reason says so: the span moved the same way, by no more than the host's
  ratio squared (the loop is a proxy: launch-bound time moved from a third to three times as
  much as it, in log terms), and on a GPU the GPU's busy time stayed within ``DRIFT``.
  Otherwise a note says that part of the change may be the host's. The loop does not see every change of the host's speed: when
  the caller knows that **the same code** ran both times (a named cell run again unchanged), a
  change with the same kernels and launches and the GPU busy as long (within ``DRIFT``) is the
  time the GPU waited for the host, and noise too.
- **The split** (compute, memory, other, idle) per run, side by side, with each part's share of
  its own span.
- **Ops** are matched by (name, input shapes, input dtypes); each op's time is its self GPU time
  (self CPU time in a report without GPU work) per run, its share that time over the span (over
  the summed op time on a CPU). Ops found on one side only "appeared" or "vanished" (fused into
  generated kernels, replaced by another op, or run with other shapes). Only ops that took time
  on at least one side are listed.
- **Each part, op and op category** gets a verdict of its own: "faster" (less time), "slower"
  or "noise". Each is timed in one profiled run per side, so it has no spread of its own: its
  change is noise when it is under ``DRIFT`` of its larger time (as the span's), under
  ``PART_FLOOR`` (1%) of the span (a slice of the run too thin to tell apart from scheduling
  and clock jitter), or when its own speed-up lies within the span's band of noise: the range
  the timed runs give the span's speed-up, divided by that speed-up (how far apart two runs of
  one side can be, as a ratio; a single run of a part can be no steadier than the runs
  around it).
- **The bottleneck shift** names the op (by name, all its shapes together) and the split part
  with the largest share before and after.
- **The Amdahl check** reads the earlier report's what-if at the speed-up each part actually got,
  predicted by replaying the step's dependencies where the before report has a step graph
  (``analysis/replay.py``, without the profiler's own cost): its first row predicts the after
  span from the before graph with the after side's op times (each op found on both sides at its
  own speed-up, the ops that vanished at that of the ops that appeared in their place, launches
  in proportion to the after side's count, synchronisations and blocking copies gone where the
  after step has at most half as many), and the measured speed-up beside it says what the
  replay could not see (host work that changed, work that moved between ops). Without a graph,
  a part with share p of the before span that became N times faster predicts an overall
  1 / ((1 - p) + p / N) if nothing else changed (Amdahl's law, which adds up times that may
  overlap).
- **Comparability**: device, GPU or CPU, torch version, math mode (where the reports record
  them), input shapes and dtypes of ops found on both sides, first run against warm, a profiled
  run's span against timed runs, peaks, and whether the code was the same (named runs).

The core imports no UI library: the views render a comparison's ``to_dict()``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.spread import HOST_LEVEL_CHANGE, SAME_CODE_DRIFT, prediction_band
from ..schema.comparison import (
    COMPARISON_MIME_TYPE,
    COMPARISON_SCHEMA,
    COMPARISON_VERSION,
    check_comparison,
)
from ..schema.report import SPLIT_PARTS
from ..schema.types import parse_document
from .report import Report, SchemaError, json_safe, steady_state_options
from .shown import ShownAsPage
from .summary import part_label, per_run_divisor

# Separate measurements of the same code differ by this much on one machine (see the module
# docstring); a smaller change is noise whatever the spreads say.
DRIFT = SAME_CODE_DRIFT
# Each median's interval covers it with at least this probability (order statistics).
MEDIAN_COVERAGE = 0.9
# A part's or op's change smaller than this share of the span is noise (see the docstring).
PART_FLOOR = 0.01
# Rows kept in the JSON form (the frames keep every row).
JSON_OPS_LIMIT = 200
JSON_KERNELS_LIMIT = 100
# A part must save at least this share of the before span to get an Amdahl check row.
AMDAHL_MIN_SAVING = 0.02

ReportLike = Report | str | PathLike | Mapping


# --- reading either side ------------------------------------------------------------------------


def as_report(value: ReportLike, *, what: str = "report") -> Report:
    """A Report from a Report, a report document (dict), a saved report JSON file, or a profiler
    trace file (Kineto JSON, optionally gzipped)."""
    if isinstance(value, Report):
        return value
    if isinstance(value, Mapping):
        return Report.from_json(dict(value))
    if not isinstance(value, (str, PathLike)):
        raise TypeError(
            f"jupyter_brrr.diff: the {what} must be a Report, a saved report (.json) or a "
            f"profiler trace file, not {type(value).__name__}."
        )
    path = Path(value)
    if path.is_dir():
        raise IsADirectoryError(
            f"jupyter_brrr.diff: the {what} {path.name!r} is a folder. Give one file: a report "
            "saved with report.save(), or a trace written by torch.profiler (for a job's "
            "folder, one rank's trace)."
        )
    if not os.path.lexists(path):  # a dangling link: load() says where it leads
        raise FileNotFoundError(
            f"jupyter_brrr.diff: the {what} file {path.name!r} does not exist. Give a report "
            "saved with report.save(), or a trace written by torch.profiler."
        )
    # A device, a FIFO or a socket is not opened here (a FIFO would block): load() refuses it.
    if path.is_file() and _is_report_file(path):
        try:
            return Report.from_json(_read_text(path))
        except (ValueError, KeyError, TypeError) as error:  # SchemaError among them
            raise SchemaError(
                f"jupyter_brrr.diff: the {what} file {path.name!r} looks like a saved report but "
                f"cannot be read ({error}). Save it again with report.save()."
            ) from error
    from .loading import load

    loaded = load(path)
    if not isinstance(loaded, Report):
        raise TypeError(
            f"jupyter_brrr.diff: the {what} {path.name!r} holds the traces of a job's ranks; "
            "compare one rank's trace file, or one report."
        )
    return loaded


def _read_text(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def _is_report_file(path: Path) -> bool:
    """Whether the file is a saved report rather than a trace: a report document starts with
    its schema name (``Report.to_dict`` writes it first)."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            head = f.read(200)
    except OSError:
        return False
    return b'"jupyter_brrr.report"' in head


# --- the span change ---------------------------------------------------------------------------


def median_interval(
    times: Sequence[float], coverage: float = MEDIAN_COVERAGE
) -> tuple[float, float]:
    """A distribution-free interval for the median of ``times``: the order statistics
    ``x(k)``, ``x(n+1-k)`` with the largest ``k`` whose coverage (a binomial sum) is at least
    ``coverage``; the fastest and slowest run when even those cover less."""
    values = np.sort(np.asarray([t for t in times if _finite(t)], dtype=float))
    n = len(values)
    if n == 0:
        raise ValueError("median_interval needs at least one time")
    k = 1
    while k + 1 <= (n + 1) // 2 and _order_coverage(n, k + 1) >= coverage:
        k += 1
    return float(values[k - 1]), float(values[n - k])


def _relative_interval(times: Sequence[float]) -> tuple[float, float]:
    low, high = median_interval(times)
    median = float(np.median(times))
    return (low / median, high / median) if median > 0 else (1.0, 1.0)


def _order_coverage(n: int, k: int) -> float:
    """P(x(k) <= median <= x(n+1-k)) for n independent runs: 1 - 2 P(Binomial(n, 1/2) < k)."""
    below = sum(math.comb(n, i) for i in range(k)) / 2**n
    return 1.0 - 2.0 * below


def _finite(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


@dataclass
class SpanChange:
    """The span per run before and after, the speed-up (before / after) with its range, and a
    verdict: "faster", "slower", "noise" or "uncertain" (no spread to judge by)."""

    before_s: float
    after_s: float
    speedup: float
    low: float | None
    high: float | None
    verdict: str
    runs_before: int
    runs_after: int
    drift: float = DRIFT
    reason: str = ""
    # The host CPU's speed while each side's runs were timed (clocks.host_loop_s: seconds of a
    # fixed Python loop, lower is faster), where both reports recorded it.
    host_before_s: float | None = None
    host_after_s: float | None = None
    # What turned a change beyond the ranges into noise: "host" (the host CPU's own speed
    # changed), "same code" (the same code did the same GPU work), or "".
    explained_by: str = ""

    @property
    def change(self) -> float:
        """after / before - 1: -0.3 is 30% less time."""
        return self.after_s / self.before_s - 1.0 if self.before_s > 0 else math.nan


def span_change(
    before_s: float,
    after_s: float,
    before_runs: Sequence[float] | None = None,
    after_runs: Sequence[float] | None = None,
    *,
    drift: float = DRIFT,
    spread: str = "timed runs",
) -> SpanChange:
    """Judge a change of the span per run from ``before_s`` to ``after_s`` against the timed
    runs of each side (see the module docstring); ``spread`` names what the runs are."""
    before_runs = [float(t) for t in before_runs or [] if _finite(t)]
    after_runs = [float(t) for t in after_runs or [] if _finite(t)]
    if not (before_s > 0 and after_s > 0):
        return SpanChange(
            before_s, after_s, math.nan, None, None, "uncertain", len(before_runs),
            len(after_runs), drift, "one of the spans is zero: nothing ran on that side",
        )  # fmt: skip
    speedup = before_s / after_s
    small = abs(after_s / before_s - 1.0) < drift
    low = high = None
    if len(before_runs) >= 2 and len(after_runs) >= 2:
        # Each side's interval relative to its runs' median, around its span: the span can
        # differ from that median (a trace's span per step, a span raised to the busy time).
        b_low, b_high = _relative_interval(before_runs)
        a_low, a_high = _relative_interval(after_runs)
        low, high = speedup * b_low / a_high, speedup * b_high / a_low
    if low is not None and high is not None and low <= 1.0 <= high:
        verdict = "noise"
        reason = (
            f"the range of the speed-up from both sides' {spread} ({low:.2f}x-{high:.2f}x) "
            "holds 1x; more timed runs narrow it"
        )
    elif small:
        verdict = "noise"
        reason = (
            f"the change is under {drift:.0%}, what separate measurements of the same code "
            "differ by on one machine"
        )
    elif low is None:
        verdict = "uncertain"
        missing = [
            side for side, runs in (("before", before_runs), ("after", after_runs)) if len(runs) < 2
        ]
        reason = (
            f"no spread to judge it by: {' and '.join(missing)} had fewer than 2 timed runs "
            "(time both with --warmup 1 --repeat 5, or record several profiler steps)"
        )
    else:
        verdict = "faster" if speedup > 1 else "slower"
        reason = (
            f"the range from both sides' {spread} ({low:.2f}x-{high:.2f}x) excludes 1x and "
            f"the change is over {drift:.0%}"
        )
    return SpanChange(
        before_s, after_s, speedup, low, high, verdict, len(before_runs), len(after_runs), drift,
        reason,
    )  # fmt: skip


def host_explains(
    span: SpanChange,
    host_before_s: float | None,
    host_after_s: float | None,
    split: pd.DataFrame,
    *,
    gpu: bool,
) -> SpanChange:
    """``span`` with the host CPU's speed on both sides recorded, and its verdict turned to
    noise where the host's own change of speed explains the whole change (see the module
    docstring): the host's speed moved by more than spread.HOST_LEVEL_CHANGE, the span moved
    the same way by no more than the host's ratio squared (widened by the drift), and on a GPU
    the GPU's busy time stayed within the drift (the change is all time the GPU spent waiting
    for the host; code that got faster on the GPU changes its busy time)."""
    span.host_before_s, span.host_after_s = host_before_s, host_after_s
    if not (host_before_s and host_after_s) or span.verdict not in ("faster", "slower"):
        return span
    host = host_after_s / host_before_s  # > 1: the host ran slower on the after side
    if abs(host - 1.0) <= HOST_LEVEL_CHANGE:
        return span
    ratio = span.after_s / span.before_s
    # The loop is a proxy: on the H200 host, launch-bound time moved from a third to three
    # times as much as the loop did (in log terms), so the host is allowed its ratio squared.
    if host > 1.0:
        within = 1.0 < ratio <= host**2 * (1.0 + span.drift)
    else:
        within = host**2 * (1.0 - span.drift) <= ratio < 1.0
    if gpu and within:
        within = _same_busy(split, span.drift)
    if not within:
        return span
    way = "slower" if host > 1.0 else "faster"
    span.reason = (
        f"the host CPU itself ran {max(host, 1 / host):.2f}x {way} while the after side was "
        f"timed (a fixed Python loop: {host_before_s * 1e6:.0f} -> {host_after_s * 1e6:.0f} "
        f"µs), which explains the whole {span.change:+.1%}"
        + (", and the GPU's busy time did not change" if gpu else "")
        + ": time in Python, dispatch and launches follows the host's speed. Measure both "
        "again at one host speed, or compare them in one A/B (interleaved)"
    )
    span.verdict, span.explained_by = "noise", "host"
    return span


# --- the comparison ------------------------------------------------------------------------------


@dataclass
class Side:
    """What identifies one side of a comparison."""

    label: str
    name: str
    created: str | None
    source: str
    device: str
    per_run: int  # profiled runs (trace steps) the figures were divided by
    run: int | None = None  # the run number within a named history


@dataclass(repr=False)  # repr, display, lines and save_html: the views draw it (ShownAsPage)
class Comparison(ShownAsPage):
    """Two measurements side by side. Frames (all times in seconds per run):

    - ``split``: one row per part (compute, memory, other, idle, then span): ``before_s``,
      ``after_s``, ``delta_s``, ``before_share``, ``after_share``, ``verdict``.
    - ``ops``: one row per (name, shapes, dtypes) that took time on either side: ``calls_*``,
      ``time_*_s``, ``share_*``, ``delta_s`` (after - before), ``status``
      ("both", "appeared", "vanished"), ``verdict`` ("faster", "slower", "noise"), biggest
      time first.
    - ``by_name``: the same summed over shapes, one row per op name.
    - ``by_category``: the same summed per op category, with the number of ``ops`` rows.
    - ``kernels``: one row per kernel name: launches and time per run, ``status``.
    - ``counts``: kernels, launches, copies per run, before and after.
    - ``amdahl``: for each part (split part or op) that got faster: its share before, its own
      speed-up, the overall speed-up the what-if predicted from them (``predicted_low`` to
      ``predicted_high``: its likely range from both captures' own noise,
      ``analysis.spread.prediction_band``), and the one measured.
    """

    before: Side
    after: Side
    span: SpanChange
    split: pd.DataFrame
    ops: pd.DataFrame
    by_name: pd.DataFrame
    kernels: pd.DataFrame
    counts: pd.DataFrame
    amdahl: pd.DataFrame
    shift: list[str]
    warnings: list[str]
    notes: list[str] = field(default_factory=list)
    gpu: bool = True
    by_category: pd.DataFrame = field(default_factory=lambda: _by_category(_no_ops()))
    created: str = field(
        default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds")
    )
    before_report: Report | None = field(default=None, repr=False)
    after_report: Report | None = field(default=None, repr=False)

    def _read_from(self) -> list[str]:
        """The traces the two sides were read from, which no save may write over."""
        sides = (self.before_report, self.after_report)
        return [r.trace_path for r in sides if r is not None and r.trace_path]

    # --- questions a user asks ----------------------------------------------------------------

    @property
    def appeared(self) -> pd.DataFrame:
        """Ops that ran only after."""
        return self.ops[self.ops["status"] == "appeared"]

    @property
    def vanished(self) -> pd.DataFrame:
        """Ops that ran only before (fused, replaced, or run with other shapes)."""
        return self.ops[self.ops["status"] == "vanished"]

    @property
    def verdict(self) -> str:
        return self.span.verdict

    # --- JSON -----------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """The versioned JSON form (``schema: jupyter_brrr.comparison``)."""
        ops = self.ops.head(JSON_OPS_LIMIT)
        return {
            "schema": COMPARISON_SCHEMA,
            "version": COMPARISON_VERSION,
            "created": self.created,
            "gpu": self.gpu,
            "before": json_safe(asdict(self.before)),
            "after": json_safe(asdict(self.after)),
            "span": json_safe({**asdict(self.span), "change": self.span.change}),
            "split": _table(self.split.reset_index()),
            "ops": {**_table(ops), "total": len(self.ops)},
            "by_name": _table(self.by_name.head(JSON_OPS_LIMIT)),
            "by_category": _table(self.by_category),
            "kernels": {
                **_table(self.kernels.head(JSON_KERNELS_LIMIT)),
                "total": len(self.kernels),
            },
            "counts": _table(self.counts.reset_index()),
            "amdahl": _table(self.amdahl),
            "shift": list(self.shift),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes | Mapping) -> Comparison:
        """Read a comparison written by ``to_json`` (this version or older); a document that
        does not fit its schema raises ``SchemaError`` naming the bad field."""
        doc = parse_document(text, "comparison")
        check_comparison(
            doc
        )  # the one check (schema/comparison.py): a SchemaError naming the field
        assert isinstance(doc, dict)
        return cls(
            before=Side(**_known(Side, doc["before"])),
            after=Side(**_known(Side, doc["after"])),
            span=SpanChange(**_known(SpanChange, doc["span"])),
            split=_frame(doc["split"]).set_index("part"),
            ops=_frame(doc["ops"]),
            by_name=_frame(doc.get("by_name")),
            by_category=_frame(doc.get("by_category")),  # absent from older comparisons
            kernels=_frame(doc.get("kernels")),
            counts=_frame(doc["counts"]).set_index("what"),
            amdahl=_frame(doc.get("amdahl")),
            shift=list(doc.get("shift", [])),
            warnings=list(doc.get("warnings", [])),
            notes=list(doc.get("notes", [])),
            gpu=bool(doc.get("gpu", True)),
            created=doc.get("created") or "",
        )

    mime_type = COMPARISON_MIME_TYPE


# --- building it ---------------------------------------------------------------------------------


def diff(
    before: ReportLike,
    after: ReportLike,
    *,
    labels: tuple[str, str] = ("before", "after"),
    drift: float = DRIFT,
) -> Comparison:
    """Compare two measurements of the same code: ``before`` and ``after`` are Reports, saved
    report files (``report.save()``) or profiler traces. See the module docstring for how each
    number is made."""
    left = as_report(before, what="before")
    right = as_report(after, what="after")
    return compare_reports(left, right, labels=labels, drift=drift)


def compare_reports(
    before: Report,
    after: Report,
    *,
    labels: tuple[str, str] = ("before", "after"),
    drift: float = DRIFT,
    runs: tuple[int | None, int | None] = (None, None),
    code_same: bool | None = None,
) -> Comparison:
    """``diff`` of two Reports. ``runs`` are their run numbers in a named history, and
    ``code_same`` whether the same code ran (when the caller knows)."""
    b, a = Figures(before), Figures(after)
    gpu = b.gpu and a.gpu
    split = _split_table(b, a)
    counts = _counts(b, a)
    span = judge_span(b, a, split, counts, gpu=gpu, code_same=code_same, drift=drift)
    ops = _ops_table(b, a, gpu)
    by_name = _by_name(ops)
    by_category = _by_category(ops)
    scale = max(b.span, a.span)
    band = (
        (span.low / span.speedup, span.high / span.speedup)
        if span.low is not None and span.high is not None and span.speedup > 0
        else None
    )
    for table in (split, ops, by_name, by_category):
        table["verdict"] = part_verdicts(
            table["time_before_s" if "time_before_s" in table else "before_s"],
            table["time_after_s" if "time_after_s" in table else "after_s"],
            scale,
            drift=drift,
            band=band,
        )
    split.loc["span", "verdict"] = span.verdict
    comparison = Comparison(
        before=b.side(labels[0], runs[0]),
        after=a.side(labels[1], runs[1]),
        span=span,
        split=split,
        ops=ops,
        by_name=by_name,
        by_category=by_category,
        kernels=_kernels_table(b, a),
        counts=counts,
        amdahl=_amdahl(b, a, split, by_name, ops),
        shift=_shift(split, by_name, gpu),
        warnings=comparability(before, after, code_same=code_same),
        gpu=gpu,
        before_report=before,
        after_report=after,
    )
    comparison.notes = _notes(comparison, b, a)
    return comparison


def judge_span(
    b: Figures,
    a: Figures,
    split: pd.DataFrame | None = None,
    counts: pd.DataFrame | None = None,
    *,
    gpu: bool,
    code_same: bool | None = None,
    drift: float = DRIFT,
) -> SpanChange:
    """The span's change from ``b`` to ``a`` and its verdict (see the module docstring): the
    timed runs' ranges, then what the host's speed explains, then what the same code explains.
    ``split`` and ``counts`` are the comparison's tables, made here when not given."""
    spread = (
        b.spread_source
        if b.spread_source == a.spread_source
        else f"{b.spread_source} and {a.spread_source}"
    )
    split = _split_table(b, a) if split is None else split
    counts = _counts(b, a) if counts is None else counts
    span = span_change(b.span, a.span, b.run_spans, a.run_spans, drift=drift, spread=spread)
    span = host_explains(span, b.host_loop, a.host_loop, split, gpu=gpu)
    if code_same is True and gpu and span.verdict in ("faster", "slower"):
        span = _same_code_explains(span, split, counts)
    return span


def _busy(split: pd.DataFrame) -> tuple[float, float]:
    """The GPU's (or the ops') busy time per run before and after: the split less idle."""
    busy = split.loc[["compute", "memory", "other"]]
    return float(busy["before_s"].sum()), float(busy["after_s"].sum())


def _same_busy(split: pd.DataFrame, drift: float) -> bool:
    """The busy time moved by less than ``drift`` of the larger side."""
    before, after = _busy(split)
    return abs(after - before) < drift * max(before, after)


def _same_work(counts: pd.DataFrame) -> bool:
    """The same kernels and launches per run on both sides (within 1%)."""
    return all(
        _finite(counts.loc[w, "before"])
        and abs(counts.loc[w, "before"] - counts.loc[w, "after"])  # pyright: ignore[reportArgumentType, reportOperatorIssue]  # checked by _finite() / pandas stubs' loose scalar types
        <= 0.01 * max(counts.loc[w, "before"], 1)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        for w in ("kernels", "launches")
    )


def _same_code_explains(span: SpanChange, split: pd.DataFrame, counts: pd.DataFrame) -> SpanChange:
    """The same code (a named cell run twice unchanged) ran the same kernels in the same
    launches, and the GPU was busy as long: the change is time the GPU waited for the host,
    whose speed moves between measurements (on the H200 machine by 10-25% for a GPT-2 forward
    between captures 1.4 s apart, which the fixed Python loop did not always see). Noise."""
    if not (_same_work(counts) and _same_busy(split, span.drift)):
        return span
    busy_before, busy_after = _busy(split)
    span.reason = (
        f"the same code ran both times, with the same kernels and launches and the GPU busy as "
        f"long ({busy_before * 1e3:.3g} -> {busy_after * 1e3:.3g} ms): the {span.change:+.1%} is "
        "time the GPU waited for the host, whose speed moves between measurements"
    )
    span.verdict, span.explained_by = "noise", "same code"
    return span


class Figures:
    """One report's figures per run."""

    def __init__(self, report: Report) -> None:
        s = report.summary
        self.report = report
        self.summary = s
        self.gpu = bool(s.get("gpu"))
        self.per_run = per_run_divisor(s)
        self.span = _num(s.get("span_s")) / self.per_run
        # Residues of float subtraction (an idle time of 1e-19 s) are zero.
        self.parts = {
            p: v if abs(v) > 1e-12 else 0.0
            for p in SPLIT_PARTS
            for v in [_num(s.get(f"{p}_s")) / self.per_run]
        }
        # Timed runs (capture), else a loaded trace's steady profiler steps.
        self.run_spans = [float(t) for t in s.get("run_spans_s") or [] if _finite(t)]
        loops = [float(t) for t in (s.get("timing") or {}).get("host_loop_s") or [] if _finite(t)]
        self.host_loop = float(np.median(loops)) if loops else None
        self.spread_source = "timed runs"
        if len(self.run_spans) < 2:
            steps = _step_spans(report)
            if len(steps) >= 2:
                self.run_spans, self.spread_source = steps, "profiler steps"
        self.time_key = "gpu_time_s" if self.gpu else "self_cpu_time_s"
        # On a CPU the profiler slows the ops themselves: their times, from the profiled run,
        # are scaled to the unprofiled span (as the A/B does). Kernels keep their speed under
        # the profiler, so GPU times are kept.
        self.op_scale = 1.0
        profiled = s.get("profiled_span_s")
        if not self.gpu and _finite(profiled) and float(profiled) > 0 and self.span > 0:  # pyright: ignore[reportArgumentType]  # checked by _finite() / pandas stubs' loose scalar types
            self.op_scale = min(self.span * self.per_run / float(profiled), 1.0)  # pyright: ignore[reportArgumentType]  # checked by _finite() / pandas stubs' loose scalar types

    def parts_busy(self) -> float:
        """The GPU's busy time per run (the split's parts but idle)."""
        return sum(v for p, v in self.parts.items() if p != "idle")

    def side(self, label: str, run: int | None) -> Side:
        return Side(
            label=label,
            name=str(self.report.name or ""),
            created=self.report.created,
            source=str(self.report.source),
            device=str(self.summary.get("device") or ""),
            per_run=self.per_run,
            run=run,
        )

    def ops(self, key: str) -> pd.DataFrame:
        """The op table per run, with its time under ``key``."""
        ops = self.report.ops
        out = pd.DataFrame(
            {
                "name": _column(ops, "name", "").astype(str),
                "shapes": _column(ops, "shapes", "").astype(str),
                "dtypes": _column(ops, "dtypes", "").astype(str),
                "category": _column(ops, "category", "").fillna("").astype(str),
                "calls": pd.to_numeric(_column(ops, "calls", 0), errors="coerce") / self.per_run,
                "time": pd.to_numeric(_column(ops, key, 0.0), errors="coerce").fillna(0.0)
                * self.op_scale
                / self.per_run,
            }
        )
        # One row per key: a table read back from JSON may repeat one (aggregated older files).
        keys = ["name", "shapes", "dtypes"]
        if not out.duplicated(keys).any():
            return out
        return out.groupby(keys, as_index=False, sort=False).agg(
            category=("category", "first"), calls=("calls", "sum"), time=("time", "sum")
        )

    def op_total(self, key: str) -> float:
        """The denominator of an op's share: the span on a GPU, the summed op time on a CPU."""
        if key == "gpu_time_s":
            return self.span
        total = pd.to_numeric(_column(self.report.ops, key, 0.0), errors="coerce").sum()
        return float(total) * self.op_scale / self.per_run


def _step_spans(report: Report) -> list[float]:
    """The spans of a loaded trace's steady profiler steps (``report.steps``), if it has some."""
    table = getattr(report, "steps", None)
    if not isinstance(table, pd.DataFrame) or not len(table) or "span_s" not in table:
        return []
    steady = table[table["kind"] == "steady"] if "kind" in table else table
    return [float(t) for t in steady["span_s"] if _finite(t)]


def _num(value: Any) -> float:
    return float(value) if _finite(value) else 0.0


def _column(frame: pd.DataFrame, name: str, default: Any) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


def _split_table(b: Figures, a: Figures) -> pd.DataFrame:
    rows = []
    for part in (*SPLIT_PARTS, "span"):
        before = b.span if part == "span" else b.parts[part]
        after = a.span if part == "span" else a.parts[part]
        rows.append(
            {
                "part": part,
                "before_s": before,
                "after_s": after,
                "delta_s": after - before,
                "before_share": before / b.span if b.span > 0 else math.nan,
                "after_share": after / a.span if a.span > 0 else math.nan,
            }
        )
    return pd.DataFrame(rows).set_index("part")


def _ops_table(b: Figures, a: Figures, gpu: bool) -> pd.DataFrame:
    key = "gpu_time_s" if gpu else "self_cpu_time_s"
    merged = _outer_join(b.ops(key), a.ops(key), ["name", "shapes", "dtypes"], ["calls", "time"])
    merged = _pair_extra_arguments(merged)
    b_total, a_total = b.op_total(key), a.op_total(key)
    table = pd.DataFrame(
        {
            "name": merged["name"],
            "shapes": merged["shapes"],
            "dtypes": merged["dtypes"],
            "category": merged["category"],
            "calls_before": merged["calls_before"],
            "calls_after": merged["calls_after"],
            "time_before_s": merged["time_before"],
            "time_after_s": merged["time_after"],
            "share_before": merged["time_before"] / b_total if b_total > 0 else math.nan,
            "share_after": merged["time_after"] / a_total if a_total > 0 else math.nan,
            "delta_s": merged["time_after"] - merged["time_before"],
            "status": merged["status"].astype(str),
        }
    )
    # Ops that took no time on either side (views, allocations) say nothing about the change.
    worked = (table["time_before_s"] > 0) | (table["time_after_s"] > 0)
    table = table[worked]
    order = np.maximum(table["time_before_s"], table["time_after_s"])
    return table.iloc[np.argsort(-order.to_numpy(), kind="stable")].reset_index(drop=True)


def _outer_join(
    left: pd.DataFrame, right: pd.DataFrame, keys: list[str], values: list[str]
) -> pd.DataFrame:
    """The rows of both tables matched on ``keys`` (unique on each side): ``<value>_before``
    and ``<value>_after`` (0 where the row is missing), ``category`` where both have one (the
    after side's first), and a ``status``: "both", "vanished" (before only), "appeared" (after
    only). A dict lookup: pandas' merge costs tens of milliseconds on a report's few hundred
    text keys."""
    left_keys = list(zip(*(left[k].tolist() for k in keys), strict=True))
    right_keys = list(zip(*(right[k].tolist() for k in keys), strict=True))
    right_row = {key: i for i, key in enumerate(right_keys)}
    pairs = [(i, right_row.pop(key, -1)) for i, key in enumerate(left_keys)]
    pairs += [(-1, j) for j in right_row.values()]
    li = np.array([p[0] for p in pairs], dtype=int)
    ri = np.array([p[1] for p in pairs], dtype=int)
    texts = [*keys, "category"] if "category" in left and "category" in right else keys
    out: dict[str, np.ndarray] = {
        k: np.where(ri >= 0, _take(right[k], ri), _take(left[k], li)) for k in texts
    }
    for value in values:
        out[f"{value}_before"] = _take(left[value], li, 0.0).astype(float)
        out[f"{value}_after"] = _take(right[value], ri, 0.0).astype(float)
    status = np.where(li < 0, "appeared", np.where(ri < 0, "vanished", "both"))
    out["status"] = status.astype(object)
    return pd.DataFrame(out)


def _take(column: pd.Series, rows: np.ndarray, missing: Any = "") -> np.ndarray:
    """``column``'s values at ``rows``, ``missing`` where a row is -1."""
    values = column.to_numpy(dtype=object)
    taken = np.full(len(rows), missing, dtype=object)
    found = rows >= 0
    taken[found] = values[rows[found]]
    return taken


def _pair_extra_arguments(merged: pd.DataFrame) -> pd.DataFrame:
    """Join a vanished and an appeared row of one op whose input shapes agree but for
    arguments one side adds at the end (compiled code calls ``aten::mm`` with its ``out=``
    tensor): the same work, called another way. The before side's shapes are kept."""
    lone = merged["status"] != "both"
    if not lone.any():
        return merged
    names = set(merged.loc[merged["status"] == "vanished", "name"]) & set(
        merged.loc[merged["status"] == "appeared", "name"]
    )
    if not names:
        return merged
    drop = []
    for name in names:
        gone = merged.index[(merged["name"] == name) & (merged["status"] == "vanished")]
        new = list(merged.index[(merged["name"] == name) & (merged["status"] == "appeared")])
        for row in gone:
            before = _shape_list(merged.at[row, "shapes"])
            match = next(
                (i for i in new if _prefix_compatible(before, _shape_list(merged.at[i, "shapes"]))),
                None,
            )
            if match is None:
                continue
            new.remove(match)
            for column in ("calls_after", "time_after"):
                merged.at[row, column] = merged.at[match, column]  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            merged.at[row, "status"] = "both"
            drop.append(match)
    return merged.drop(index=drop)


def _shape_list(text: Any) -> list | None:
    """Input shapes from their text ("[[8, 64], [64, 64]]"), None where unreadable."""
    try:
        value = json.loads(str(text))
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _prefix_compatible(a: list | None, b: list | None) -> bool:
    """Whether one argument list extends the other (extra trailing arguments only)."""
    if a is None or b is None:
        return False
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) > 0 and long[: len(short)] == short


def _by_name(ops: pd.DataFrame) -> pd.DataFrame:
    columns = [
        "calls_before",
        "calls_after",
        "time_before_s",
        "time_after_s",
        "share_before",
        "share_after",
        "delta_s",
    ]
    if not len(ops):
        return pd.DataFrame(columns=["name", *columns])
    grouped = ops.groupby("name", sort=False)[columns].sum().reset_index()
    order = np.maximum(grouped["time_before_s"], grouped["time_after_s"])
    return grouped.iloc[np.argsort(-order.to_numpy(), kind="stable")].reset_index(drop=True)


_SUMMED = [
    "calls_before",
    "calls_after",
    "time_before_s",
    "time_after_s",
    "share_before",
    "share_after",
    "delta_s",
]


def _no_ops() -> pd.DataFrame:
    return pd.DataFrame(columns=["name", "category", *_SUMMED, "status"])


def _by_category(ops: pd.DataFrame) -> pd.DataFrame:
    """The op table summed per op category (matmul, attention, elementwise, ...; "" where an op
    has none), with the number of op rows in each; largest time first."""
    if not len(ops):
        return pd.DataFrame(columns=["category", "ops", *_SUMMED])
    grouped = ops.assign(category=ops["category"].fillna("").astype(str)).groupby(
        "category", sort=False
    )
    table = grouped[_SUMMED].sum()
    table.insert(0, "ops", grouped.size())
    table = table.reset_index()
    order = np.maximum(table["time_before_s"], table["time_after_s"])
    return table.iloc[np.argsort(-order.to_numpy(), kind="stable")].reset_index(drop=True)


def part_verdicts(
    before_s: Any,
    after_s: Any,
    span_s: float,
    *,
    drift: float = DRIFT,
    band: tuple[float, float] | None = None,
) -> np.ndarray:
    """The verdict of each part's or op's change from ``before_s`` to ``after_s`` (seconds per
    run): "faster", "slower", or "noise" when the change is under ``drift`` of its larger time,
    under ``PART_FLOOR`` of ``span_s``, or when its speed-up (before / after) lies within
    ``band``, the span's band of noise (see the module docstring)."""
    before = np.nan_to_num(np.asarray(before_s, dtype=float))
    after = np.nan_to_num(np.asarray(after_s, dtype=float))
    delta = after - before
    beyond = (np.abs(delta) >= drift * np.maximum(before, after)) & (
        np.abs(delta) >= PART_FLOOR * span_s
    )
    beyond &= delta != 0
    if band is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(after > 0, before / np.where(after > 0, after, 1.0), np.inf)
        beyond &= (ratio < band[0]) | (ratio > band[1])
    return np.where(beyond, np.where(delta < 0, "faster", "slower"), "noise").astype(object)


def _kernels_table(b: Figures, a: Figures) -> pd.DataFrame:
    def per_name(fig: Figures) -> pd.DataFrame:
        k = fig.report.kernels
        if not len(k) or "name" not in k:
            return pd.DataFrame(columns=["name", "launches", "time"])
        count = pd.to_numeric(_column(k, "count", 1), errors="coerce").fillna(1)
        frame = pd.DataFrame(
            {
                "name": k["name"].astype(str),
                "launches": count / fig.per_run,
                "time": pd.to_numeric(k["dur_s"], errors="coerce").fillna(0.0) / fig.per_run,
            }
        )
        return frame.groupby("name", as_index=False, sort=False).sum()

    merged = _outer_join(per_name(b), per_name(a), ["name"], ["launches", "time"])
    table = pd.DataFrame(
        {
            "name": merged["name"],
            "launches_before": merged["launches_before"],
            "launches_after": merged["launches_after"],
            "time_before_s": merged["time_before"],
            "time_after_s": merged["time_after"],
            "status": merged["status"],
        }
    )
    table["delta_s"] = table["time_after_s"] - table["time_before_s"]
    order = np.maximum(table["time_before_s"], table["time_after_s"])
    return table.iloc[np.argsort(-order.to_numpy(), kind="stable")].reset_index(drop=True)  # pyright: ignore[reportAttributeAccessIssue]  # numpy/pandas stubs: loose scalar types


def _counts(b: Figures, a: Figures) -> pd.DataFrame:
    rows = []
    for what, key in (
        ("kernels", "kernel_count"),
        ("launches", "launch_count"),
        ("copies", "copy_count"),
    ):
        before, after = b.summary.get(key), a.summary.get(key)
        rows.append(
            {
                "what": what,
                "before": float(before) / b.per_run if _finite(before) else math.nan,  # pyright: ignore[reportArgumentType]  # checked by _finite() / pandas stubs' loose scalar types
                "after": float(after) / a.per_run if _finite(after) else math.nan,  # pyright: ignore[reportArgumentType]  # checked by _finite() / pandas stubs' loose scalar types
            }
        )
    return pd.DataFrame(rows).set_index("what")


def _amdahl(
    b: Figures,
    a: Figures,
    split: pd.DataFrame,
    by_name: pd.DataFrame,
    ops: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The what-if of the before report, read at the speed-up each part actually got: replayed
    on the before step's dependencies where the before report has a step graph (the first row
    then puts every op at its after time: the whole change as the replay sees it), else by
    Amdahl's law on the span."""
    columns = [
        "kind",
        "part",
        "share_before",
        "time_before_s",
        "time_after_s",
        "part_speedup",
        "predicted_speedup",
        "predicted_low",
        "predicted_high",
        "predicted_span_s",
        "measured_speedup",
        "limit",
        "predicted_by",
        "not_modelled",
    ]
    if not (b.span > 0 and a.span > 0):
        return pd.DataFrame(columns=columns)
    measured = b.span / a.span
    graph = b.report.graph if b.gpu and a.gpu else None
    if graph is not None and not graph.gpu_count:
        graph = None
    candidates = [("part", part, row.before_s, row.after_s) for part, row in split.iterrows()]
    candidates = [c for c in candidates if c[1] != "span"]
    candidates += [
        ("op", r.name, r.time_before_s, r.time_after_s) for r in by_name.head(20).itertuples()
    ]
    rows = []
    if graph is not None and ops is not None and len(ops):
        whole = _replayed_change(b, a, ops)
        if whole is not None:
            rows.append({**whole, "measured_speedup": measured})
    for kind, part, before, after in candidates:
        # A part is never more than its span (op times of a profiled CPU run can be).
        before, after = min(before, b.span), min(after, a.span)
        saving = before - after
        if before <= 0 or saving < AMDAHL_MIN_SAVING * b.span:
            continue
        share = min(before / b.span, 1.0)
        factor = before / after if after > 0 else math.inf
        predicted_span = b.span - before + max(after, 0.0)
        predicted = b.span / predicted_span if predicted_span > 0 else math.inf
        limit = 1.0 / (1.0 - share) if share < 1 else math.inf
        how = "Amdahl"
        replayed = (
            _replay_part(graph, kind, str(part), factor)
            if graph is not None and part != "idle"
            else None
        )
        if replayed is not None:
            predicted, limit = replayed
            predicted_span = b.span / predicted
            how = "replay"
        rows.append(
            {
                "kind": kind,
                "part": part,
                "share_before": share,
                "time_before_s": before,
                "time_after_s": after,
                "part_speedup": factor,
                "predicted_speedup": predicted,
                "predicted_span_s": predicted_span,
                "measured_speedup": measured,
                "limit": limit,
                "predicted_by": how,
            }
        )
    for row in rows:  # each prediction's likely range, from both captures' own noise
        row["predicted_low"], row["predicted_high"] = prediction_band(
            row["predicted_speedup"], b.summary, a.summary
        )
    table = pd.DataFrame(rows, columns=columns)
    if len(table):
        saving = table["time_before_s"] - table["time_after_s"]
        saving[table["kind"] == "replay"] = math.inf  # the whole change first
        table = table.iloc[np.argsort(-saving.to_numpy(), kind="stable")].reset_index(drop=True)
    return table


# A part made "infinitely" faster, for the limit of a replayed row.
_LIMIT_FACTOR = 1e6


def _replay_part(graph: Any, kind: str, part: str, factor: float) -> tuple[float, float] | None:
    """A part's replayed overall speed-up at its measured factor, and its limit (without the
    profiler: the user's step)."""
    from ..analysis.replay import predict

    def changes(k: float) -> dict:
        if kind == "op":
            return {"ops": {part: k}}
        if part == "other":
            return {"category": {"other": k, "overhead": k}}
        return {"category": {part: k}}

    factor = min(factor, _LIMIT_FACTOR)
    if not factor > 0:
        return None
    speedup = predict(graph, profiler=0, **changes(factor)).speedup
    limit = predict(graph, profiler=0, **changes(_LIMIT_FACTOR)).speedup
    return speedup, limit


def _replayed_change(b: Figures, a: Figures, ops: pd.DataFrame) -> dict | None:
    """The after span predicted from the before step's graph with the after side's op times:
    each op (name and shapes) found on both sides at its own speed-up; the work of the ops that
    vanished at the speed-up of what appeared in their place (their time before over the
    appeared ops' time after: fused or retyped kernels doing that work); the host's work part by
    part as the after step measured it (the launch path, CPU ops, Python outside ops, the data
    loader, calls other than launches: ``replay.host_work``), both sides at the faster capture's
    host speed; launch calls in proportion to the after
    side's count (a CUDA graph: almost none); synchronisations and blocking copies gone where
    the after step has none."""
    from ..analysis import step_graph as sg
    from ..analysis.replay import host_work, predict

    graph = b.report.graph
    if graph is None:
        return None
    by_shape = ops.groupby(["name", "shapes"], sort=False)[["time_before_s", "time_after_s"]].sum()
    factors: dict[Any, float] = {}
    vanished_s = appeared_s = 0.0
    for (name, shapes), row in by_shape.iterrows():  # pyright: ignore[reportGeneralTypeIssues]
        before, after = float(row["time_before_s"]), float(row["time_after_s"])
        if before > 0 and after > 0:
            factors[(str(name), str(shapes))] = min(max(before / after, 1e-3), _LIMIT_FACTOR)
        elif before > 0:
            vanished_s += before
            factors[(str(name), str(shapes))] = math.nan  # filled below
        elif after > 0:
            appeared_s += after
    replaced = min(vanished_s / appeared_s, _LIMIT_FACTOR) if appeared_s > 0 else _LIMIT_FACTOR
    factors = {k: (replaced if math.isnan(v) else v) for k, v in factors.items()}
    changes: dict[str, Any] = {"ops": factors}
    after_graph = a.report.graph
    drift = host_speed = 1.0
    if after_graph is not None:
        # The host's work as the after side measured it, part by part: a CUDA graph's launch
        # path gone, autocast's casts dispatched, a larger batch's extra launches.
        work_b = {k: v / b.per_run for k, v in host_work(graph).items()}
        work_a = {k: v / a.per_run for k, v in host_work(after_graph).items()}
        # Both sides at one host speed, the faster capture's: the host's speed drifts between
        # two captures (by up to 1.7x on the H200 host, bench/RESULTS.md), and the same fixed
        # piece of CPU work (an op's start to its first child's, of the ops both sides record)
        # shows by how much. The before
        # step's own host work is made that much faster too, in the prediction and in the
        # unchanged replay it is compared with.
        measured_drift = sg.host_drift(graph, after_graph)
        if measured_drift is not None:
            drift, host_speed = measured_drift, max(measured_drift, 1.0)
        path_b = work_b.pop("launch") + work_b.pop("glue")
        path_a = work_a["launch"] + work_a["glue"]
        if path_b > 0:  # the launch path: dispatch and the Python between launches
            changes["launch"] = path_a / path_b * drift
        changes["host_parts"] = {k: work_a[k] / v * drift for k, v in work_b.items() if v > 0}
    # Launch calls in proportion to the after side's count, at the before side's cost each:
    # a CUDA graph's one launch call precedes its kernels, it does not space them out.
    launches_b = _num(b.summary.get("launch_count")) / b.per_run
    launches_a = _num(a.summary.get("launch_count")) / a.per_run
    counted = launches_b > 0 and launches_a >= 0
    if after_graph is not None:
        changes["host_parts"]["launch calls"] = launches_a / launches_b if counted else 1.0
    elif counted and launches_a != launches_b:
        changes["launch"] = launches_a / launches_b

    def waits(g: Any) -> tuple[int, int]:
        """How many synchronising calls and blocking copies the step waited in."""
        if g is None or not len(g.await_host):
            return 0, 0
        nodes = np.unique(g.await_host)
        return int((g.h_kind[nodes] == sg.SYNC).sum()), int(g.h_blocking[nodes].sum())

    (sync_b, block_b), (sync_a, block_a) = waits(graph), waits(after_graph)
    # Most of them gone (a loop's .item() removed, one read at the end kept): all of them.
    if after_graph is not None and sync_b and sync_a <= sync_b // 2:
        changes["syncs"] = 0
    if after_graph is not None and block_b and block_a <= block_b // 2:
        changes["copies"] = "async"
    prediction = predict(graph, profiler=0, host=host_speed, **changes)
    speedup = predict(graph, profiler=0, host=host_speed).span_s / prediction.span_s
    busy_b, busy_a = b.parts_busy(), a.parts_busy()
    return {
        "kind": "replay",
        "part": "the whole change, replayed on the before step's dependencies",
        "share_before": min(busy_b / b.span, 1.0) if b.span > 0 else math.nan,
        "time_before_s": busy_b,
        "time_after_s": busy_a,
        "part_speedup": busy_b / busy_a if busy_a > 0 else math.inf,
        "predicted_speedup": speedup,
        "predicted_span_s": b.span / speedup,
        "limit": math.nan,
        "predicted_by": "replay",
        "not_modelled": "; ".join(prediction.not_modelled),
    }


def _shift(split: pd.DataFrame, by_name: pd.DataFrame, gpu: bool) -> list[str]:
    """The largest share before and after, in words: of the ops and of the split."""
    lines = []
    owned_after = len(by_name) and by_name["share_after"].max() > 0
    if len(by_name) and not owned_after and by_name["share_before"].max() > 0:
        lines.append(
            "After, no op owns GPU time: the kernels ran without a torch op around them (a "
            "CUDA graph replays them so); the kernel table shows them."
        )
    elif len(by_name) and by_name["share_before"].max() > 0:
        top_before = by_name.loc[by_name["share_before"].idxmax()]  # pyright: ignore[reportArgumentType, reportCallIssue]  # checked by _finite() / pandas stubs' loose scalar types
        top_after = by_name.loc[by_name["share_after"].idxmax()]  # pyright: ignore[reportArgumentType, reportCallIssue]  # checked by _finite() / pandas stubs' loose scalar types
        if top_before["name"] == top_after["name"]:
            lines.append(
                f"{top_after['name']} is still the largest share: "
                f"{_pct(top_before['share_before'])} -> {_pct(top_after['share_after'])}."
            )
        else:
            lines.append(
                f"{top_after['name']} is now the largest share: "
                f"{_pct(top_after['share_before'])} -> {_pct(top_after['share_after'])} "
                f"(the largest before, {top_before['name']}: "
                f"{_pct(top_before['share_before'])} -> {_pct(top_before['share_after'])})."
            )
    parts = split.drop(index="span")
    if parts["before_share"].notna().any() and parts["after_share"].notna().any():
        first = parts["before_share"].idxmax()
        now = parts["after_share"].idxmax()
        if first == now:
            lines.append(
                f"The largest part of the span is still {part_label(now, gpu)}: "
                f"{_pct(parts.loc[now, 'before_share'])} -> {_pct(parts.loc[now, 'after_share'])}."
            )
        else:
            lines.append(
                f"The largest part of the span is now {part_label(now, gpu)}: "
                f"{_pct(parts.loc[now, 'before_share'])} -> {_pct(parts.loc[now, 'after_share'])} "
                f"(was {part_label(first, gpu)}: {_pct(parts.loc[first, 'before_share'])} -> "
                f"{_pct(parts.loc[first, 'after_share'])})."
            )
    return lines


def _pct(value: Any) -> str:
    return f"{100 * float(value):.0f}%" if _finite(value) else "-"


def _notes(c: Comparison, b: Figures, a: Figures) -> list[str]:
    notes = [f"The change is {c.span.verdict}: {c.span.reason}."] if c.span.reason else []
    if b.per_run > 1 or a.per_run > 1:
        notes.append(
            "Figures are per run: a trace's totals are divided by its profiler steps "
            f"(before {b.per_run}, after {a.per_run})."
        )
    # A change made of idle time with the same kernels and launches is the host's doing: the
    # host's speed drifts between measurements (bench/RESULTS.md: launch-bound spans on the
    # H200 host jump between levels 30-50% apart).
    if c.span.verdict in ("faster", "slower") and c.gpu:
        idle = c.split.loc["idle"]
        total = c.split.loc["span", "delta_s"]
        same_work = _same_work(c.counts)
        if same_work and total != 0 and idle["delta_s"] / total > 0.7:
            notes.append(
                "Most of the change is idle time (the host's time between launches), with the "
                "same kernels and launches on both sides: the host's speed itself drifts "
                "between measurements (by 30-50% on some machines). If you did not change the "
                "host-side code, measure both again, or compare them in one A/B (interleaved)."
            )
    hb, ha = c.span.host_before_s, c.span.host_after_s
    if hb and ha and abs(ha / hb - 1.0) > HOST_LEVEL_CHANGE and c.span.explained_by != "host":
        way = "slower" if ha > hb else "faster"
        notes.append(
            f"The host CPU itself ran {max(ha / hb, hb / ha):.2f}x {way} while the after side was "
            f"timed (a fixed Python loop: {hb * 1e6:.0f} -> {ha * 1e6:.0f} µs): time in Python, "
            "dispatch and launches moved with it, so part of the change may be the host's."
        )
    return notes


# --- comparability ---------------------------------------------------------------------------------


def comparability(before: Report, after: Report, *, code_same: bool | None = None) -> list[str]:
    """What differs between the two measurements besides the change itself, in words."""
    b, a = before.summary, after.summary
    warnings = []
    if bool(b.get("gpu")) != bool(a.get("gpu")):
        which = "before" if b.get("gpu") else "after"
        warnings.append(
            f"Only the {which} report has GPU work; the other timed CPU ops: the two measure "
            "different things."
        )
    if (b.get("device") or "") != (a.get("device") or ""):
        warnings.append(
            f"Different devices: {b.get('device') or 'unknown'} before, "
            f"{a.get('device') or 'unknown'} after."
        )
    tb, ta = b.get("torch_version"), a.get("torch_version")
    if tb and ta and tb != ta:
        warnings.append(f"Different torch versions: {tb} before, {ta} after.")
    warnings += _math_mode(b.get("math_mode"), a.get("math_mode"))
    warnings += _shapes_and_dtypes(before.ops, after.ops)
    warnings += _warmth(before, after)
    warnings += _span_sources(before, after)
    pb, pa = (b.get("peaks") or {}), (a.get("peaks") or {})
    if pb and pa and (pb.get("source"), pb.get("device")) != (pa.get("source"), pa.get("device")):
        warnings.append(
            f"The ops were classified against different peaks ({pb.get('source')} before, "
            f"{pa.get('source')} after): compute- and memory-bound times may move between parts "
            "without the kernels changing."
        )
    if code_same is True:
        warnings.append(
            "The same code ran both times: a change beyond the noise comes from the machine "
            "or the data, not the code."
        )
    return warnings


def _math_mode(before: Any, after: Any) -> list[str]:
    """The math-mode settings that differ (``summary["math_mode"]["settings"]``, recorded by a
    capture; a loaded trace records none)."""
    if isinstance(before, Mapping) and "settings" in before:
        before = before["settings"]
    if isinstance(after, Mapping) and "settings" in after:
        after = after["settings"]
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return []
    changed = [
        f"{key} {before.get(key)!r} -> {after.get(key)!r}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
    if not changed:
        return []
    return [
        "Different math mode (the precision matmuls and convolutions may use): "
        + "; ".join(changed)
        + ". If that was not the change you meant, results and speed both differ for that reason."
    ]


def _shapes_and_dtypes(before: pd.DataFrame, after: pd.DataFrame, examples: int = 3) -> list[str]:
    """Ops that ran on both sides but never with the same input shapes (arguments one side adds
    at the end aside), or never in the same compute dtype."""
    if not len(before) or not len(after) or "name" not in before or "name" not in after:
        return []
    key = "gpu_time_s" if "gpu_time_s" in before else "self_cpu_time_s"
    weight = (
        pd.to_numeric(before[key], errors="coerce").groupby(before["name"]).sum()
        if key in before
        else pd.Series(dtype=float)
    )
    out = []
    checks = (
        ("shapes", "input shapes", _shapes_overlap),
        ("dtype", "compute dtypes", lambda x, y: bool(x & y)),
    )
    for column, what, overlap in checks:
        if column not in before or column not in after:
            continue
        left, right = _text_sets(before, column), _text_sets(after, column)
        differ = [
            name for name in left.keys() & right.keys() if not overlap(left[name], right[name])
        ]
        if not differ:
            continue
        # The ops with most time first: they matter most.
        differ.sort(key=lambda name: -float(weight.get(name, 0.0) or 0.0))
        shown = "; ".join(
            f"{name}: {_first(left[name])} -> {_first(right[name])}" for name in differ[:examples]
        )
        more = f" and {len(differ) - examples} more" if len(differ) > examples else ""
        out.append(
            f"Different {what} for {len(differ)} op(s) that ran on both sides ({shown}{more}). "
            "If that was not the change you made, the two measure different work."
        )
    return out


def _text_sets(ops: pd.DataFrame, column: str) -> dict[str, frozenset[str]]:
    """Each op name's distinct non-empty texts in ``column`` (a loop: a few hundred rows, where
    a pandas groupby with a Python function costs far more)."""
    sets: dict[str, set[str]] = {}
    for name, value in zip(ops["name"].tolist(), ops[column].tolist(), strict=True):
        if isinstance(value, str) and value:
            sets.setdefault(str(name), set()).add(value)
    return {name: frozenset(values) for name, values in sets.items()}


def _shapes_overlap(left: frozenset[str], right: frozenset[str]) -> bool:
    if left & right:
        return True
    parsed_right = [_shape_list(r) for r in right]
    return any(_prefix_compatible(_shape_list(x), y) for x in left for y in parsed_right)


def _first(values: frozenset[str]) -> str:
    text = sorted(values)[0]
    more = f" (+{len(values) - 1} more)" if len(values) > 1 else ""
    return (text if len(text) <= 80 else text[:79] + "…") + more


def _warmth(before: Report, after: Report) -> list[str]:
    wb, wa = before.summary.get("warm"), after.summary.get("warm")
    if wb is None or wa is None:
        return []
    if wb != wa:
        cold = "before" if not wb else "after"
        source = before.source if not wb else after.source
        return [
            f"The {cold} report is a first run (module loading, allocator growth, compilation "
            f"included), the other is warm: time both with {steady_state_options(source)}."
        ]
    if not wb:
        return [
            "Both reports are first runs: first-run costs differ from run to run. Time both with "
            f"{steady_state_options(before.source)} for a fair comparison."
        ]
    return []


def _span_sources(before: Report, after: Report) -> list[str]:
    def timed(report: Report) -> bool | None:
        if report.source == "trace":
            return None  # a loaded trace's span is its own extent
        return bool((report.summary.get("runs") or {}).get("timed"))

    tb, ta = timed(before), timed(after)
    if tb is None or ta is None or tb == ta:
        return []
    profiled = "before" if not tb else "after"
    return [
        f"The {profiled} span comes from a profiled run, the other from timed runs without the "
        "profiler: the profiler slows the host (1.3-2.2x spans measured on the H200), so part "
        "of the change is the tool's own overhead."
    ]


# --- JSON tables ----------------------------------------------------------------------------------


def _known(kind: type, fields: Mapping) -> dict:
    """The fields of a dataclass ``kind`` that ``fields`` has (a newer writer may add others;
    a null speed-up is the NaN it was written from)."""
    names = {f.name for f in dataclasses.fields(kind)}
    known = {k: v for k, v in fields.items() if k in names}
    if kind is SpanChange and known.get("speedup") is None:
        known["speedup"] = math.nan
    return known


def _table(frame: pd.DataFrame) -> dict:
    return {
        "columns": [str(c) for c in frame.columns],
        # Column by column (``tolist`` gives Python values), as the report's tables are made.
        "data": [
            list(row)
            for row in zip(*(json_safe(frame[c].tolist()) for c in frame.columns), strict=True)
        ]
        if len(frame.columns)
        else [],
    }


def _frame(table: Mapping | None) -> pd.DataFrame:
    if not table:
        return pd.DataFrame()
    frame = pd.DataFrame(table["data"], columns=table["columns"])
    # null in JSON is a missing number: NaN in numeric columns, as the frames had it.
    for column in frame.columns:
        if (
            frame[column].dtype == object
            and frame[column].map(lambda v: v is None or isinstance(v, (int, float))).all()
        ):
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame
