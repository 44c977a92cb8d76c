"""Static HTML: tables only, every string escaped, no script, iframe or style block.

It is what nbconvert and GitHub show; the JupyterLab renderer replaces it with the interactive
report.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from . import format as fmt
from . import text

if TYPE_CHECKING:
    from ..report import Report

_COLOURS = {"compute": "#4C72B0", "memory": "#DD8452", "other": "#8C8C8C", "idle": "#E5E5E5"}


def _split_bar(report: Report) -> str:
    s = report.summary
    span = s["span_s"]
    if not s.get("gpu") or span <= 0:
        return ""
    cells = []
    for name, colour in _COLOURS.items():
        share = s[f"{name}_s"] / span
        if share <= 0:
            continue
        cells.append(
            f'<td style="width:{100 * share:.2f}%;background:{colour};padding:2px 4px;'
            f'white-space:nowrap;overflow:hidden" title="{name}">{name} {100 * share:.0f}%</td>'
        )
    return f'<table style="width:100%;border-collapse:collapse"><tr>{"".join(cells)}</tr></table>'


def _ops_table(report: Report, top: int = 15) -> str:
    ops = report.ops
    if not len(ops):
        return ""
    key = "gpu_time_s" if report.summary.get("gpu") else "self_cpu_time_s"
    rows = ops.nlargest(top, key)
    head = "".join(
        f"<th>{h}</th>" for h in ("op", "shapes", "calls", "time", "FLOP/s", "bytes/s", "% of roof", "bound")
    )
    body = []
    for r in rows.itertuples():
        roof = "-" if r.roof_fraction != r.roof_fraction else f"{100 * r.roof_fraction:.0f}%"
        body.append(
            "<tr>"
            f"<td>{escape(str(r.name))}</td><td>{escape(str(r.shapes))[:80]}</td><td>{r.calls}</td>"
            f"<td>{fmt.seconds(getattr(r, key))}</td><td>{fmt.rate(r.flops_per_s, 'FLOP/s')}</td>"
            f"<td>{fmt.rate(r.bytes_per_s, 'B/s')}</td><td>{roof}</td><td>{escape(str(r.bound))}</td>"
            "</tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render(report: Report) -> str:
    lines = text.summary_lines(report)
    summary = "".join(f"<div>{escape(line)}</div>" for line in lines)
    return f'<div class="jupyter-brrr-static">{summary}{_split_bar(report)}{_ops_table(report)}</div>'
