"""The notebook output bundle of a report: one output, several representations.

The custom MIME type carries the data for the JupyterLab renderer (live and in saved notebooks);
``text/html`` is static (tables and pictures, no script) for nbconvert and GitHub; ``text/plain``
for terminals. Front-ends pick the richest one they can render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..schema import MIME_TYPE
from . import html, text

if TYPE_CHECKING:
    from ..report import Report


def mimebundle(report: Report) -> dict:
    return {
        MIME_TYPE: report.to_dict(),
        "text/html": html.render(report),
        "text/plain": text.render(report),
    }
