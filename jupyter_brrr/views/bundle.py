"""The notebook output bundle of a report: one output, several representations.

- the custom MIME type: the report JSON, for the JupyterLab renderer (live and in saved
  notebooks, no kernel needed), its numbers spelled as the browser saves them back, so that
  opening and saving a notebook leaves it byte for byte as it was;
- ``text/html``: static key figures, tables and PNG pictures as data URIs (no script, iframe or
  style block), for nbconvert, GitHub and front-ends without our extension;
- ``image/png``: the split bar above the roofline (or the top CPU ops), base64;
- ``text/plain``: for terminals.

Front-ends pick the richest one they can render. The pictures need Pillow and the fonts that come
with matplotlib; without them the bundle has no ``image/png`` and the HTML only tables. Everything here runs after every ``%%brrr``
cell, inside its overhead budget: pictures are drawn once per report and cached.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from ..schema.report import MIME_TYPE, as_saved_by_browser
from . import html, pictures, text

if TYPE_CHECKING:
    from ..report.report import Report


def mimebundle(report: Report) -> dict:
    drawn = pictures.draw(report)
    bundle = {
        MIME_TYPE: as_saved_by_browser(report.to_dict()),
        "text/html": html.render(report, drawn),
        "text/plain": text.render(report),
    }
    if drawn.combined:
        bundle["image/png"] = base64.b64encode(drawn.combined).decode("ascii")
    return bundle
