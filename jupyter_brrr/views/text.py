"""Plain-text rendering: the CLI, ``repr(report)`` and the ``text/plain`` fallback.

Every string from the report (names, the device, notes, advice) is shown through ``_text``: its
control characters escaped (a trace's names can hold a terminal's escape sequences) and cut to
a length that keeps a line a line (the report's data keeps the whole name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..schema.report import SPLIT_PARTS
from . import change
from . import format as fmt

if TYPE_CHECKING:
    from ..report.report import Report


# The longest name or sentence shown whole; longer ones end in an ellipsis.
TEXT_LIMIT = 300


def _text(value: object, limit: int = TEXT_LIMIT) -> str:
    return fmt.short(fmt.plain(value), limit)


def summary_lines(report: Report) -> list[str]:
    s = cast("Mapping[str, Any]", report.summary)  # read by name: split parts too
    span = s["span_s"]
    name = f": {_text(report.name, 120)}" if report.name else ""
    title = f"jupyter_brrr report{name} — {_text(s['device'], 120)}"
    lines = [title]
    if s.get("gpu"):
        lines.append(
            f"span {fmt.seconds(span)} {fmt.span_label(s)}, "
            f"GPU busy {fmt.percent(s['busy_s'], span)}; {fmt.runs(s['runs'])}"
        )
        lines += [f"  {line}" for line in fmt.steps_lines(s)]
        parts = ", ".join(
            f"{name} {fmt.seconds(s[f'{name}_s'])} ({fmt.percent(s[f'{name}_s'], span)})"
            for name in SPLIT_PARTS
        )
        lines.append(f"  {parts}")
        peaks = s.get("peaks")
        if peaks:
            lines.append(
                f"  achieved {fmt.rate(s.get('achieved_flops_per_s'), 'FLOP/s')} and "
                f"{fmt.rate(s.get('achieved_bytes_per_s'), 'B/s')} while busy; peaks used: {_text(peaks.get('source') or 'unknown')}"
            )
        if fmt.memory(s):
            lines.append(f"  peak memory {fmt.memory(s)}")
    elif report.empty:
        lines.append(f"no torch operations were recorded ({fmt.runs(s['runs'])})")
    else:
        op_time = fmt.seconds(fmt.cpu_op_time(report.ops))
        lines.append(
            f"CPU op time {op_time} {fmt.profiled_scope(s)}; span {fmt.seconds(span)} "
            f"{fmt.span_label(s)}; {fmt.runs(s['runs'])}"
        )
    if fmt.timed_runs(s):
        lines.append(f"  timed runs: {fmt.timed_runs(s)}")
    for note in report.notes:
        lines.append(f"note: {_text(note, 3 * TEXT_LIMIT)}")
    for advice in report.recommendations[:3]:
        cause = advice.get("cause")
        share = advice.get("share")
        tag = (
            f"[{_text(cause, 40)}, up to {100 * share:.0f}%] "
            if cause and share is not None
            else ""
        )
        lines.append(f"* {tag}{_text(advice['title'])}: {_text(advice['detail'], 3 * TEXT_LIMIT)}")
        if fmt.tried(advice):
            lines.append(f"  {_text(fmt.tried(advice), 2 * TEXT_LIMIT)}")
        lines += [f"  {_text(line)}" for line in fmt.code_change_lines(advice)]
    if report.ruled_out:
        lines.append(_text(fmt.ruled_out(report.ruled_out), 3 * TEXT_LIMIT))
    if report.target or report.change:
        if report.target:
            goal = (report.target.get("goal") or {}).get("text", "")
            target = " ".join(change.target_lines(report.target))
            lines.append(_text(f"target {goal}: {target}", 3 * TEXT_LIMIT))
        lines += [_text(line, 3 * TEXT_LIMIT) for line in change.report_lines(report.change)]
    return lines


def _calls(value: object) -> str:
    """A count of calls ("-" where a document has none)."""
    number = fmt.number(value)
    return "-" if number is None else f"{number:.0f}"


def ops_lines(report: Report, top: int = 10) -> list[str]:
    ops = report.ops
    if not len(ops):
        return []
    gpu = report.summary.get("gpu")
    key = "gpu_time_s" if gpu else "self_cpu_time_s"
    rows = ops.nlargest(top, key)
    header = (
        f"{'op':<44} {'calls':>6} {'time':>10} {'share':>6} {'FLOP/s':>12} {'B/s':>11} {'bound':>9}"
        + (
            "  why under its roof"
            if gpu and "reason" in ops and (ops["reason"] != "").any()
            else ""
        )
    )
    total = report.summary["span_s"] if gpu else max(ops[key].sum(), 1e-12)
    lines = [header, "-" * len(header)]
    for r in rows.itertuples():
        name = _text(r.name, 44)
        lines.append(
            f"{name:<44} {_calls(r.calls):>6} {fmt.seconds(getattr(r, key)):>10} "
            f"{fmt.percent(getattr(r, key), total):>6} {fmt.rate(r.flops_per_s, 'FLOP/s'):>12} "
            f"{fmt.rate(r.bytes_per_s, 'B/s'):>11} {_text(r.bound, 9):>9}"
            + (f"  {_text(r.reason, 30)}" if getattr(r, "reason", "") else "")
        )
    return lines


def modules_lines(report: Report, top: int = 12) -> list[str]:
    """The module tree, depth first, the larger subtree first: time with submodules, share."""
    tree = report.modules
    if not len(tree):
        return []
    gpu = bool(report.summary.get("gpu"))
    key = "gpu_time_s" if gpu else "cpu_time_s"
    total = report.summary["span_s"] if gpu else max(tree.loc[tree["depth"] == 0, key].sum(), 1e-12)
    header = f"{'module':<48} {'time':>10} {'share':>6} {'itself':>10}"
    lines = [header, "-" * len(header)]
    for r in fmt.tree_order(tree, key)[:top]:
        depth = max(int(r["depth"]), 0)
        name = str(r["path"]).rsplit(".", 1)[-1] if r["path"] else "(no module)"
        label = _text("  " * depth + name, 48)
        lines.append(
            f"{label:<48} {fmt.seconds(r[key]):>10} {fmt.percent(r[key], total):>6} "
            f"{fmt.seconds(r[f'self_{key}']):>10}"
        )
    return lines


def steps_table_lines(report: Report) -> list[str]:
    """Each profiler step of a loaded trace: its kind, span and split."""
    steps = report.steps
    if not len(steps):
        return []
    header = f"{'step':<24} {'kind':<8} {'span':>9} " + " ".join(
        f"{name:>9}" for name in SPLIT_PARTS
    )
    lines = [header, "-" * len(header)]
    for r in steps.itertuples():
        lines.append(
            f"{fmt.short(r.step, 24):<24} {r.kind:<8} {fmt.seconds(r.span_s):>9} "  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            + " ".join(
                f"{fmt.percent(getattr(r, f'{name}_s'), r.span_s):>9}"  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
                for name in SPLIT_PARTS  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
            )
        )
    return lines


def render(report: Report, top: int = 10) -> str:
    lines = summary_lines(report)
    if report.sweep or report.memory:
        from . import sweep_memory as sweep_view

        if report.sweep:
            lines += ["", *(_text(x, 3 * TEXT_LIMIT) for x in sweep_view.sweep_lines(report.sweep))]
        if report.memory:
            lines += [
                "",
                *(_text(x, 3 * TEXT_LIMIT) for x in sweep_view.memory_lines(report.memory)),
            ]
    if len(report.steps):
        lines += ["", *steps_table_lines(report)]
    if len(report.ops):
        lines += ["", *ops_lines(report, top)]
    if len(report.modules):
        lines += ["", *modules_lines(report)]
    return "\n".join(lines)
