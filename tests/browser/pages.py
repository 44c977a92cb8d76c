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


def offline_page(page: str) -> dict:
    """Checks that a standalone page is one offline file: it loads nothing from elsewhere (no
    remote script, style, image or frame, no remote style import), inlines the bundle's app and
    styles, and has exactly two script blocks (its JSON, never run, and the app). Returns the
    JSON it carries."""
    from jupyter_brrr.views import standalone

    assert not REMOTE.search(page), "the page loads something from elsewhere"
    assert not re.search(r"@import|url\(\s*[\"']?(?:https?:)?//", page), "a style from elsewhere"
    script, styles = standalone.app()
    assert script in page and styles in page
    assert len(re.findall(r"<script\b", page)) == 2
    return page_data(page)
