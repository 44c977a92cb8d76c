"""Static HTML of a job report: per-rank split bars, the rank, collective and step tables.

No script, iframe or style block: inline ``style`` attributes only, and the split bars are
plain ``div`` boxes whose widths are the parts' shares, so nbconvert, GitHub and front-ends
without the extension show it. Every string from the traces (file names, ops, hosts, notes)
is escaped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..schema.job import JOB_SPLIT_PARTS
from . import format as fmt
from . import job_text
from .markup import escaped as _e
from .markup import section as _section
from .markup import table as _table
from .markup import wrap as _wrap
from .style import COLOURS, LABELS
from .style import MUTED as _MUTED

if TYPE_CHECKING:
    from ..report.job import JobReport

# Communication's colour; the other parts keep the single-rank report's (style.COLOURS).
COMMUNICATION_COLOUR = "#17a2b8"
PART_COLOURS = {**COLOURS, "communication": COMMUNICATION_COLOUR}
PART_LABELS = {**LABELS, "communication": "Communication (exposed)"}
_BAR_WIDTH_PX = 520


def _bars(job: JobReport) -> str:
    """One stacked bar per rank, all on the scale of the longest span; the straggler marked."""
    ranks = job.ranks
    if not len(ranks):
        return ""
    longest = max(float(fmt.number(v) or 0.0) for v in ranks["span_s"]) or 1.0
    straggler = (job.summary.get("straggler") or {}).get("rank")
    rows = []
    for row in ranks.to_dict("records"):
        boxes = []
        for part in JOB_SPLIT_PARTS:
            seconds = fmt.number(row.get(f"{part}_s")) or 0.0
            width = _BAR_WIDTH_PX * seconds / longest
            if width < 0.5:
                continue
            boxes.append(
                f'<div title="{_e(PART_LABELS[part])}: {_e(fmt.seconds(seconds))}" '
                f'style="display:inline-block;height:14px;width:{width:.1f}px;'
                f'background:{PART_COLOURS[part]}"></div>'
            )
        label = f"rank {row['rank']}" + (" (straggler)" if row["rank"] == straggler else "")
        hidden = fmt.number(row.get("hidden_comm_s"))
        rows.append(
            '<tr><td style="padding:1px 8px 1px 0;white-space:nowrap;font-size:12px">'
            f"{_e(label)}</td>"
            f'<td style="padding:1px 0;white-space:nowrap;line-height:0">{"".join(boxes)}</td>'
            f'<td style="padding:1px 8px;font-size:11px;{_MUTED};white-space:nowrap">'
            f"{_e(fmt.seconds(fmt.number(row.get('span_s'))))}"
            + (f", {_e(fmt.seconds(hidden))} comm. hidden" if hidden else "")
            + "</td></tr>"
        )
    legend = " ".join(
        f'<span style="white-space:nowrap"><span style="display:inline-block;width:10px;'
        f'height:10px;background:{PART_COLOURS[p]}"></span> {_e(PART_LABELS[p])}</span>'
        for p in JOB_SPLIT_PARTS
    )
    return (
        _section("Each rank's span")
        + f'<table style="border-collapse:collapse">{"".join(rows)}</table>'
        + f'<div style="font-size:11px;margin:2px 0 6px 0">{legend}</div>'
    )


def _frame_table(frame: Any, columns: list[tuple[str, str, str, int]]) -> str:
    head = [_e(heading) for _c, heading, _k, _w in columns]
    body: list[list[str] | str] = [
        [_e(job_text.cell_text(row.get(column), kind)) for column, _h, kind, _w in columns]
        for row in frame.to_dict("records")
    ]
    right = {i for i, (_c, _h, kind, _w) in enumerate(columns) if kind}
    return _table(head, body, right=right)


def _advice(job: JobReport) -> str:
    if not job.recommendations:
        return ""
    items = "".join(
        f"<li><b>{_e(a.get('title', ''))}</b>: {_e(a.get('detail', ''))}</li>"
        for a in job.recommendations
    )
    return (
        _section("What to try first") + f'<ul style="margin:2px 0;padding-left:20px">{items}</ul>'
    )


def render(job: JobReport) -> str:
    """The static HTML fragment of a job report."""
    parts = [
        f'<div style="font-weight:bold;font-size:14px;margin-bottom:4px">{_e(job_text.title(job))}</div>',
        f"<div>{_e(job_text.straggler_line(job))}</div>",
        f"<div>{_e(job_text.communication_line(job))}</div>",
        _bars(job),
        _advice(job),
        _section("Ranks") + _frame_table(job.ranks, job_text.RANK_COLUMNS),
    ]
    if len(job.collectives):
        parts.append(
            _section("Collectives (time: from the last rank's arrival to the end)")
            + _frame_table(job.collectives, job_text.COLLECTIVE_COLUMNS)
        )
    if 0 < len(job.steps) <= job_text.STEP_ROWS:
        parts.append(_section("Profiler steps") + _frame_table(job.steps, job_text.STEP_COLUMNS))
    if job.notes:
        items = "".join(f"<li>{_e(note)}</li>" for note in job.notes)
        parts.append(
            f'<ul style="margin:6px 0;padding-left:20px;font-size:11px;{_MUTED}">{items}</ul>'
        )
    return _wrap(parts)
