"""Building blocks of the static HTML: escaped text, tables, sections, PNG images.

Only inline ``style`` attributes, so that a fragment survives HTML sanitizers (nbconvert,
GitHub). Shared by the report's HTML (``html``), the change and target sections (``change``) and
the job report (``job_html``), which import it rather than each other.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any

from . import format as fmt

_TABLE = 'style="border-collapse:collapse;font-size:12px;margin:4px 0"'
_TH = 'style="text-align:left;padding:2px 8px;border-bottom:1px solid #999"'
_TD = 'style="padding:2px 8px;border-bottom:1px solid #e5e5e5;text-align:left"'
_TDR = 'style="padding:2px 8px;border-bottom:1px solid #e5e5e5;text-align:right;white-space:nowrap"'

# The longest string put into the HTML whole: a trace's op name can be a megabyte, which the
# report's data keeps; the page shows its start and an ellipsis.
TEXT_LIMIT = 2000
NAME_LIMIT = 120  # an op name in a table cell (the whole of it, up to TEXT_LIMIT, on hover)


def escaped(value: Any, limit: int = TEXT_LIMIT) -> str:
    """``value`` as text, cut to ``limit`` characters and HTML-escaped (quotes too)."""
    return escape(fmt.short(value, limit), quote=True)


def img(png: bytes | None, alt: str, width: int = 640) -> str:
    """A PNG as a data URI image; nothing for no picture."""
    if not png:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<div><img src="data:image/png;base64,{data}" alt="{escaped(alt)}" width="{width}" '
        f'style="max-width:100%;height:auto"></div>'
    )


def table(head: list[str], rows: list[list[str] | str], right: set[int] | None = None) -> str:
    """A table of HTML cells; a row given as a string is one cell spanning all columns."""
    right = right or set()
    th = "".join(f"<th {_TH}>{h}</th>" for h in head)
    body = "".join(
        f'<tr><td {_TD} colspan="{len(head)}">{row}</td></tr>'
        if isinstance(row, str)
        else "<tr>"
        + "".join(f"<td {_TDR if i in right else _TD}>{cell}</td>" for i, cell in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table {_TABLE}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def section(title: str) -> str:
    """A section heading (``title`` is HTML: escape it first)."""
    return f'<div style="font-weight:bold;margin:10px 0 2px 0">{title}</div>'


def wrap(parts: list[str]) -> str:
    """The fragment's outer element around its non-empty parts."""
    body = "".join(p for p in parts if p)
    return f'<div class="jupyter-brrr-static" style="font-size:13px;max-width:900px">{body}</div>'
