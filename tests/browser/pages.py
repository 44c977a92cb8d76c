"""What a standalone HTML page (``save_html`` of a report or a job) carries: the JSON the app
draws, and anything it would fetch from elsewhere (a page must load nothing)."""

from __future__ import annotations

import json
import re

# Anything a page could load from elsewhere: a script, style, image or frame with a remote
# address (an http(s) URL, or a protocol-relative one).
REMOTE = re.compile(
    r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//", re.IGNORECASE
)


def page_data(page: str) -> dict:
    """The JSON that a standalone page carries."""
    (block,) = re.findall(
        r'<script type="application/json" id="jupyter-brrr-report">(.*?)</script>', page, re.S
    )
    return json.loads(block)


def rows_of(table: dict) -> list[dict]:
    """A report table ({columns, data}, pandas' "split" orientation) as a list of dicts."""
    return [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
