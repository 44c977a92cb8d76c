"""Text and static HTML of the re-measure loop: a comparison (``diff``), a named cell's history and
a target's plan.

Each renderer reads the JSON form (``Comparison.to_dict()``, a report's ``history`` and
``target``), so a report read back from a saved notebook renders the same. The HTML follows
``views/html.py``: inline styles only, no script, every string from a report escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report.summary import CPU_PART_LABELS, PART_LABELS
from ..schema.report import SPLIT_PARTS
from . import format as fmt
from .markup import escaped as _e
from .markup import section as _section
from .markup import table as _table
from .style import MUTED as _MUTED

VERDICT_COLOURS = {
    "faster": "#2e7d32",
    "slower": "#c62828",
    "noise": "#666",
    "uncertain": "#8a6d00",
}


def _rows(table: Mapping | None) -> list[dict]:
    """A "split"-orientation table as a list of dicts."""
    if not table:
        return []
    columns = table.get("columns") or []
    return [dict(zip(columns, row, strict=False)) for row in table.get("data") or []]


def headline(doc: Mapping) -> str:
    """A comparison document's change in one line: "1.52x faster (1.45x-1.60x): 30.1 ms ->
    19.8 ms per run"."""
    span = doc["span"]
    before, after = span.get("before_s"), span.get("after_s")
    speedup, verdict = span.get("speedup"), span.get("verdict")
    times = f"{fmt.seconds(before)} -> {fmt.seconds(after)} per run"
    if speedup is None:
        return f"{verdict}: {times}"
    low, high = span.get("low"), span.get("high")
    rng = f" ({low:.2f}x-{high:.2f}x)" if low is not None and high is not None else ""
    if verdict == "faster":
        return f"{speedup:.2f}x faster{rng}: {times}"
    if verdict == "slower":
        slower = f" ({1 / high:.2f}x-{1 / low:.2f}x)" if low and high else ""
        return f"{1 / speedup:.2f}x slower{slower}: {times}"
    if verdict == "uncertain":
        way = f"{speedup:.2f}x faster" if speedup >= 1 else f"{1 / speedup:.2f}x slower"
        return f"{way}, uncertain (no spread to judge the noise by): {times}"
    change = after / before - 1 if before else 0.0
    return f"{verdict}: {change:+.1%}{rng}, {times}"


def _side(side: Mapping) -> str:
    name = side.get("name") or side.get("label") or ""
    run = side.get("run")
    return f"{name} (run {run})" if run is not None else str(name)


def _signed_seconds(value: Any) -> str:
    number = fmt.number(value)
    if number is None:
        return "-"
    if number == 0:
        return "0"
    return ("+" if number > 0 else "-") + fmt.seconds(abs(number))


def _count(value: Any) -> str:
    number = fmt.number(value)
    if number is None:
        return "-"
    return f"{number:,.0f}" if abs(number - round(number)) < 0.05 else f"{number:,.1f}"


def _share(value: Any) -> str:
    number = fmt.number(value)
    return "-" if number is None else f"{100 * number:.0f}%"


def _factor(value: Any) -> str:
    number = fmt.number(value)
    return "unbounded" if number is None else f"{number:.2f}x"


def _part_labels(doc: Mapping) -> dict[str, str]:
    return PART_LABELS if doc.get("gpu", True) else CPU_PART_LABELS


def _predicted(row: Mapping) -> str:
    """A predicted speed-up with its likely range where the row has one that is not a point:
    "1.80x (likely 1.60-2.00x)"."""
    text = _factor(row.get("predicted_speedup"))
    low, high = fmt.number(row.get("predicted_low")), fmt.number(row.get("predicted_high"))
    if low is None or high is None or not high > low * 1.005:
        return text
    return f"{text} (likely {low:.2f}-{high:.2f}x)"


def amdahl_lines(doc: Mapping, top: int = 3) -> list[str]:
    """The Amdahl check in words, one line per part that got faster."""
    labels = _part_labels(doc)
    lines = []
    for row in _rows(doc.get("amdahl"))[:top]:
        if row.get("kind") == "replay":
            lines.append(
                f"Every op at its after time, replayed on the before step's dependencies: "
                f"predicted {_predicted(row)} overall "
                f"({fmt.seconds(fmt.number(row.get('predicted_span_s')))}); measured "
                f"{_factor(row.get('measured_speedup'))}."
            )
            continue
        part = labels.get(row["part"], row["part"]) if row.get("kind") == "part" else row["part"]
        gone = fmt.number(row.get("time_after_s")) == 0
        got = "took no time after" if gone else f"got {_factor(row.get('part_speedup'))} faster"
        how = "replay" if row.get("predicted_by") == "replay" else "what-if"
        lines.append(
            f"{part} ({_share(row.get('share_before'))} of the span before) {got}: the "
            f"{how} predicted {_predicted(row)} overall "
            f"({fmt.seconds(fmt.number(row.get('predicted_span_s')))}); measured "
            f"{_factor(row.get('measured_speedup'))}."
        )
    return lines


def _changed_ops(doc: Mapping, top: int) -> list[dict]:
    rows = _rows(doc.get("ops"))
    rows.sort(key=lambda r: -abs(fmt.number(r.get("delta_s")) or 0.0))
    return rows[:top]


# --- text ---------------------------------------------------------------------------------------


def text(doc: Mapping, top: int = 10) -> str:
    """A comparison document as plain text."""
    before, after = doc["before"], doc["after"]
    device = after.get("device") or before.get("device") or ""
    lines = [f"jupyter_brrr change: {_side(before)} -> {_side(after)} — {device}", headline(doc)]
    lines += [f"  {line}" for line in doc.get("shift") or []]
    labels = _part_labels(doc)
    lines.append(f"{'per run':<28} {'before':>10} {'after':>10} {'change':>10}  share")
    for row in _rows(doc.get("split")):
        part = row["part"]
        label = "span" if part == "span" else labels.get(part, part)
        share = (
            ""
            if part == "span"
            else f"  {_share(row.get('before_share'))} -> {_share(row.get('after_share'))}"
        )
        lines.append(
            f"  {label:<26} {fmt.seconds(fmt.number(row['before_s'])):>10} "
            f"{fmt.seconds(fmt.number(row['after_s'])):>10} "
            f"{_signed_seconds(row['delta_s']):>10}{share}"
        )
    counts = [
        f"{r['what']} {_count(r.get('before'))} -> {_count(r.get('after'))}"
        for r in _rows(doc.get("counts"))
        if fmt.number(r.get("before")) is not None or fmt.number(r.get("after")) is not None
    ]
    if counts:
        lines.append("  " + ", ".join(counts) + " per run")
    amdahl = amdahl_lines(doc)
    if amdahl:
        lines.append("Amdahl check:")
        lines += [f"  {line}" for line in amdahl]
    ops = _changed_ops(doc, top)
    if ops:
        header = f"{'op (largest changes)':<44} {'before':>10} {'after':>10} {'change':>10}  status"
        lines += [header, "-" * len(header)]
        for r in ops:
            lines.append(
                f"{fmt.short(r['name'], 44):<44} {fmt.seconds(fmt.number(r['time_before_s'])):>10} "
                f"{fmt.seconds(fmt.number(r['time_after_s'])):>10} "
                f"{_signed_seconds(r['delta_s']):>10}  {r['status']}"
            )
    lines += [f"warning: {w}" for w in doc.get("warnings") or []]
    lines += [f"note: {n}" for n in doc.get("notes") or []]
    return "\n".join(lines)


def history_text(history: Sequence[Mapping], name: str = "") -> str:
    """A named cell's runs, one line each."""
    if not history:
        return f"No runs of {name!r} yet." if name else "No runs yet."
    lines = [
        f"{'run':>4}  {'when (UTC)':<19}  {'span':>10}  {'vs previous':<24} "
        f"{'compute':>8} {'memory':>8} {'other':>8} {'idle':>8}  {'kernels':>8}  code"
    ]
    for row in history:
        span = fmt.number(row.get("span_s")) or 0.0
        parts = " ".join(f"{fmt.percent(row.get(f'{p}_s') or 0.0, span):>8}" for p in SPLIT_PARTS)
        versus = _versus(row)
        code = {True: "changed", False: "same", None: ""}[row.get("code_changed")]
        when = str(row.get("created") or "")[:19].replace("T", " ")
        lines.append(
            f"{row.get('run', ''):>4}  {when:<19}  {fmt.seconds(span):>10}  {versus:<24} "
            f"{parts}  {_count(row.get('kernel_count')):>8}  {code}"
        )
    return "\n".join(lines)


def history_doc_text(doc: Mapping) -> str:
    """A history document (``History.to_dict()``) as text: its runs, one line each."""
    return history_text(doc.get("runs") or [], str(doc.get("name") or ""))


def _versus(row: Mapping) -> str:
    verdict = row.get("verdict")
    speedup = fmt.number(row.get("speedup"))
    if not verdict:
        return "-"
    if verdict == "faster" and speedup:
        return f"{speedup:.2f}x faster"
    if verdict == "slower" and speedup:
        return f"{1 / speedup:.2f}x slower"
    return str(verdict)


def target_lines(target: Mapping) -> list[str]:
    """A target's plan in words."""
    return [str(line) for line in target.get("lines") or []]


def target_text(target: Mapping) -> str:
    """A target's plan on its own (``TargetPlan``), as text: the goal, the plan, its notes."""
    goal = (target.get("goal") or {}).get("text", "")
    notes = [f"note: {n}" for n in target.get("notes") or []]
    return "\n".join([f"jupyter_brrr target: {goal}", *target_lines(target), *notes])


# --- static HTML -------------------------------------------------------------------------------------


def _verdict_html(doc: Mapping) -> str:
    verdict = str(doc["span"].get("verdict") or "")
    colour = VERDICT_COLOURS.get(verdict, "#333")
    return f'<div style="font-size:13px"><b style="color:{colour}">{_e(headline(doc))}</b></div>'


def _verdict_cell(verdict: Any) -> str:
    """A part's, op's or category's verdict, coloured ("" in older comparisons)."""
    if not verdict:
        return ""
    text = "within noise" if verdict == "noise" else str(verdict)
    return f'<span style="color:{VERDICT_COLOURS.get(str(verdict), "#333")}">{_e(text)}</span>'


def _list(items: Sequence[str], muted: bool = False) -> str:
    if not items:
        return ""
    style = f"margin:2px 0;padding-left:20px;font-size:{'11' if muted else '12'}px"
    if muted:
        style += f";{_MUTED}"
    return f'<ul style="{style}">' + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def html_body(doc: Mapping, top: int = 12) -> str:
    """A comparison as an HTML fragment without its title (for a report's section)."""
    labels = _part_labels(doc)
    parts = [_verdict_html(doc), _list(doc.get("shift") or [])]
    warnings = doc.get("warnings") or []
    if warnings:
        parts.append(
            '<div style="color:#8a4b00;font-size:12px;margin-top:4px">Not like for like:</div>'
            + _list(warnings)
        )
    split_rows: list[list[str] | str] = []
    for row in _rows(doc.get("split")):
        part = row["part"]
        split_rows.append(
            [
                _e("span" if part == "span" else labels.get(part, part)),
                fmt.seconds(fmt.number(row["before_s"])),
                fmt.seconds(fmt.number(row["after_s"])),
                _e(_signed_seconds(row["delta_s"])),
                "" if part == "span" else _share(row.get("before_share")),
                "" if part == "span" else _share(row.get("after_share")),
                _verdict_cell(row.get("verdict")),
            ]
        )
    for row in _rows(doc.get("counts")):
        if fmt.number(row.get("before")) is None and fmt.number(row.get("after")) is None:
            continue
        before, after = fmt.number(row.get("before")), fmt.number(row.get("after"))
        delta = after - before if before is not None and after is not None else None
        split_rows.append(
            [
                _e(row["what"]),
                _count(before),
                _count(after),
                "-" if delta is None else f"{delta:+,.0f}",
                "",
                "",
                "",
            ]
        )
    parts.append(
        _section("Per run, side by side")
        + _table(
            ["", "before", "after", "change", "share before", "share after", "verdict"],
            split_rows,
            right={1, 2, 3, 4, 5},
        )
    )
    categories = _rows(doc.get("by_category"))
    if categories:
        parts.append(
            _section("By op category")
            + _table(
                ["category", "op rows", "before", "after", "change", "share", "verdict"],
                [
                    [
                        _e(r.get("category") or "(none)"),
                        _count(r.get("ops")),
                        fmt.seconds(fmt.number(r.get("time_before_s"))),
                        fmt.seconds(fmt.number(r.get("time_after_s"))),
                        _e(_signed_seconds(r.get("delta_s"))),
                        f"{_share(r.get('share_before'))} -> {_share(r.get('share_after'))}",
                        _verdict_cell(r.get("verdict")),
                    ]
                    for r in categories[:top]
                ],
                right={1, 2, 3, 4, 5},
            )
        )
    amdahl = amdahl_lines(doc)
    if amdahl:
        parts.append(_section("Amdahl check: the what-if against the measurement") + _list(amdahl))
    ops = _changed_ops(doc, top)
    if ops:
        body: list[list[str] | str] = []
        for r in ops:
            status = str(r.get("status"))
            colour = {"appeared": "#2e7d32", "vanished": "#c62828"}.get(status)
            status_html = (
                f'<span style="color:{colour}">{_e(status)}</span>' if colour else _e(status)
            )
            body.append(
                [
                    f"<code>{_e(r['name'])}</code>",
                    f'<span style="font-size:11px">{_e(fmt.short(r.get("shapes"), 60))}</span>',
                    fmt.seconds(fmt.number(r["time_before_s"])),
                    fmt.seconds(fmt.number(r["time_after_s"])),
                    _e(_signed_seconds(r["delta_s"])),
                    f"{_share(r.get('share_before'))} -> {_share(r.get('share_after'))}",
                    status_html,
                    _verdict_cell(r.get("verdict")),
                ]
            )
        total = (doc.get("ops") or {}).get("total", len(ops))
        parts.append(
            _section(_e(f"Ops with the largest changes ({len(ops)} of {total:,})"))
            + _table(
                ["op", "shapes", "before", "after", "change", "share", "status", "verdict"],
                body,
                right={2, 3, 4, 5},
            )
        )
    parts.append(_list(doc.get("notes") or [], muted=True))
    return "".join(p for p in parts if p)


def html(doc: Mapping) -> str:
    """A comparison as a standalone static HTML fragment."""
    before, after = doc["before"], doc["after"]
    title = f"jupyter_brrr change: {_side(before)} -> {_side(after)}"
    device = after.get("device") or before.get("device") or ""
    head = (
        f'<div style="font-weight:bold;font-size:14px;margin-bottom:4px">{_e(title)}</div>'
        f'<div style="font-size:12px;{_MUTED}">{_e(device)}</div>'
    )
    return (
        '<div class="jupyter-brrr-static" style="font-size:13px;max-width:900px">'
        f"{head}{html_body(doc)}</div>"
    )


def history_html(history: Sequence[Mapping], top: int = 20) -> str:
    """A named cell's runs as a table (the newest ``top``)."""
    if len(history) < 2:
        return ""
    rows: list[list[str] | str] = []
    for row in list(history)[-top:]:
        span = fmt.number(row.get("span_s")) or 0.0
        verdict = str(row.get("verdict") or "")
        colour = VERDICT_COLOURS.get(verdict)
        versus = _e(_versus(row))
        if colour and verdict in ("faster", "slower"):
            versus = f'<span style="color:{colour}">{versus}</span>'
        rows.append(
            [
                _e(row.get("run")),
                _e(str(row.get("created") or "")[:19].replace("T", " ")),
                fmt.seconds(span),
                versus,
                *[fmt.percent(row.get(f"{p}_s") or 0.0, span) for p in SPLIT_PARTS],
                _count(row.get("kernel_count")),
                _e({True: "changed", False: "same", None: ""}[row.get("code_changed")]),
            ]
        )
    head = ["run", "when (UTC)", "span", "vs previous", *SPLIT_PARTS, "kernels", "code"]
    return _section("Runs of this name") + _table(
        head, rows, right={2, *range(4, 5 + len(SPLIT_PARTS))}
    )


def target_html(target: Mapping) -> str:
    lines = target_lines(target)
    if not lines:
        return ""
    met = target.get("met")
    colour = "#2e7d32" if met else "#c62828"
    first = f'<div style="font-size:13px"><b style="color:{colour}">{_e(lines[0])}</b></div>'
    notes = _list(target.get("notes") or [], muted=True)
    return (
        _section(_e(f"Target: {target.get('goal', {}).get('text', '')}"))
        + first
        + _list(lines[1:])
        + notes
    )


def history_fragment(doc: Mapping) -> str:
    """A history document (``History.to_dict()``) as a static HTML fragment: its title and, from
    two runs on, the table of runs."""
    runs = doc.get("runs") or []
    table = history_html(runs) if len(runs) >= 2 else ""
    title = (
        f"jupyter_brrr history: {doc.get('name') or ''} "
        f"({len(runs)} run{'s' if len(runs) != 1 else ''})"
    )
    return (
        '<div class="jupyter-brrr-static" style="font-size:13px;max-width:900px">'
        f'<div style="font-weight:bold;font-size:14px">{_e(title)}</div>{table}</div>'
    )


def target_fragment(target: Mapping) -> str:
    """A target's plan on its own (``TargetPlan``) as a static HTML fragment."""
    return (
        '<div class="jupyter-brrr-static" style="font-size:13px;max-width:900px">'
        f"{target_html(target)}</div>"
    )


def report_section(report_change: Mapping | None, history: Sequence[Mapping] | None) -> str:
    """What a named report adds to its static HTML: the change against the previous run and
    the table of runs."""
    parts = []
    if report_change:
        before = report_change.get("before") or {}
        parts.append(_section(_e(f"Change since {_side(before)}")) + html_body(report_change))
    if history:
        parts.append(history_html(history))
    return "".join(parts)


def report_lines(report_change: Mapping | None) -> list[str]:
    """What a named report adds to its text: the change in a few lines."""
    if not report_change:
        return []
    before = report_change.get("before") or {}
    lines = [f"change since {_side(before)}: {headline(report_change)}"]
    lines += [f"  {line}" for line in report_change.get("shift") or []]
    lines += [f"  {line}" for line in amdahl_lines(report_change, top=1)]
    lines += [f"  warning: {w}" for w in report_change.get("warnings") or []]
    return lines
