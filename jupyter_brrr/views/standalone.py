"""The standalone HTML page of a report (``report.save_html(path)``), a job report
(``job.save_html(path)``), a comparison (``jupyter_brrr.diff(...).save_html(path)``) or a named
cell's runs (``jupyter_brrr.history(name).save_html(path)``), the registry's ``"standalone"``
format (``save_html`` writes it whole, ``report/writing.py``): the same TypeScript app that draws
it in JupyterLab and Notebook 7 (``js/src/app.ts``, ``js/src/job_app.ts``), with BokehJS inside
it, inlined next to the JSON in ONE file. It opens offline, from anywhere, and looks like the
notebook view.

The app is built by ``jlpm build`` (``js/build-standalone.js``) into ``jupyter_brrr/standalone/``
(``report.js`` and ``report.css``), which the wheel ships; one script draws every kind of
document, picking the app by the JSON's schema (``js/src/standalone.ts``). The JSON sits in a
``<script type="application/json">`` block, which browsers never run; the app reads it as data
and sets every string from it as text (as the safe MIME renderer does).
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from ..report.comparison import COMPARISON_MIME_TYPE, Comparison, Side
from ..report.history import HISTORY_MIME_TYPE
from ..schema.job import JOB_MIME_TYPE

if TYPE_CHECKING:
    from ..report.history import History, SavedHistory
    from ..report.job import JobReport
    from ..report.report import Report

    # What a page can hold: each has ``to_json()`` and ``mime_type``.
    Document = Report | JobReport | Comparison | History | SavedHistory

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


def report_json(report: Document) -> str:
    """The document's JSON (a report's, a job report's, ...), safe inside a script block."""
    text = report.to_json()
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


_KINDS = {JOB_MIME_TYPE: "job", COMPARISON_MIME_TYPE: "comparison", HISTORY_MIME_TYPE: "history"}


def kind_of(report: Document) -> str:
    """What the page holds, in a word: "job" (a job report), "comparison", "history" or
    "report"."""
    return _KINDS.get(report.mime_type, "report")


def default_title(report: Document) -> str:
    """The page's title when none is given: what the app's header says it is."""
    if isinstance(report, Comparison):

        def side(s: Side) -> str:
            label = s.name or s.label
            return f"{label} (run {s.run})" if s.run is not None else label

        return f"jupyter_brrr change: {side(report.before)} \u2192 {side(report.after)}"
    name = report.name
    return f"jupyter_brrr {kind_of(report)}{': ' + str(name) if name else ''}"


def render(report: Document, title: str | None = None) -> str:
    """The whole page, as text."""
    script, styles = app()
    title = title or default_title(report)
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


__all__ = ["AppNotBuilt", "default_title", "kind_of", "render", "report_json"]
