"""The standalone HTML file of a report (``report.save_html(path)``): the same TypeScript app
that draws the report in JupyterLab and Notebook 7 (``js/src/app.ts``), with BokehJS inside it,
inlined next to the report JSON in ONE file. It opens offline, from anywhere, and looks like
the notebook view.

The app is built by ``jlpm build`` (``js/build-standalone.js``) into ``jupyter_brrr/standalone/``
(``report.js`` and ``report.css``), which the wheel ships. The report JSON sits in a
``<script type="application/json">`` block, which browsers never run; the app reads it as data
and sets every string from it as text (as the safe MIME renderer does).
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..report import Report

BUILT = Path(__file__).resolve().parent.parent / "standalone"
# The ids js/src/standalone.ts looks for.
DATA_ID = "jupyter-brrr-report"
ROOT_ID = "jupyter-brrr-root"

# Characters that could end the JSON's script block or change how the page parses it: written
# as JSON escapes, which JSON.parse reads back as the same characters.
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


class AppNotBuilt(RuntimeError):
    """The standalone app (``jupyter_brrr/standalone/report.js``) is missing."""


@cache
def app() -> tuple[str, str]:
    """The built app's script and styles."""
    script, styles = BUILT / "report.js", BUILT / "report.css"
    if not script.exists() or not styles.exists():
        raise AppNotBuilt(
            f"The standalone report app is not built ({script} is missing): in a source "
            "checkout run `jlpm build` (or `pip install -e .`), or reinstall jupyter-brrr."
        )
    # A script block ends at the first "</script" whatever the JavaScript means by it.
    text = re.sub(r"</(script)", r"<\\/\1", script.read_text(encoding="utf-8"), flags=re.I)
    return text, styles.read_text(encoding="utf-8")


def report_json(report: Report) -> str:
    """The report JSON, safe inside a script block."""
    text = report.to_json()
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


def render(report: Report, title: str | None = None) -> str:
    """The whole page, as text."""
    script, styles = app()
    title = title or f"jupyter_brrr report{': ' + str(report.name) if report.name else ''}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="jupyter_brrr">\n'
        f"<title>{escape(title)}</title>\n<style>\n{styles}\n</style>\n</head>\n"
        '<body class="jp-brrr-page">\n'
        f'<div id="{ROOT_ID}"></div>\n'
        f'<script type="application/json" id="{DATA_ID}">{report_json(report)}</script>\n'
        f"<script>\n{script}\n</script>\n"
        "</body>\n</html>\n"
    )


def save_html(report: Report, path: str | PathLike, title: str | None = None) -> Path:
    """Write the page to ``path``; returns it."""
    path = Path(path)
    page = render(report, title)
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["AppNotBuilt", "render", "report_json", "save_html"]
