"""The standalone HTML file of a report (``report.save_html(path)``) or of a job report
(``job.save_html(path)``): the same TypeScript app that draws it in JupyterLab and Notebook 7
(``js/src/app.ts``, ``js/src/job_app.ts``), with BokehJS inside it, inlined next to the JSON in
ONE file. It opens offline, from anywhere, and looks like the notebook view.

The app is built by ``jlpm build`` (``js/build-standalone.js``) into ``jupyter_brrr/standalone/``
(``report.js`` and ``report.css``), which the wheel ships; one script draws both kinds of
document, the job app where the JSON's schema says it is a job report. The JSON sits in a
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

from ..report import _write_whole
from ..schema import JOB_MIME_TYPE

if TYPE_CHECKING:
    from ..job import JobReport
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


def report_json(report: Report | JobReport) -> str:
    """The report (or job report) JSON, safe inside a script block."""
    text = report.to_json()
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


def kind_of(report: Report | JobReport) -> str:
    """What the page holds, in its title's words: "job" (a job report) or "report"."""
    return "job" if report.mime_type == JOB_MIME_TYPE else "report"


def render(report: Report | JobReport, title: str | None = None) -> str:
    """The whole page, as text."""
    script, styles = app()
    title = (
        title or f"jupyter_brrr {kind_of(report)}{': ' + str(report.name) if report.name else ''}"
    )
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


def save_html(report: Report | JobReport, path: str | PathLike, title: str | None = None) -> Path:
    """Write the page to ``path``; returns it. The page is made first and written whole, through
    a temporary file beside it: a failure (no app built, a bad path, a full disk) leaves no half
    page, and an older file at ``path`` as it was."""
    path = Path(path)
    page = render(report, title).encode("utf-8")
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"Cannot write {path}: the folder {path.parent} does not exist (or is not a folder)."
        )
    try:
        _write_whole(path, lambda out: out.write(page))
    except IsADirectoryError as err:
        raise IsADirectoryError(
            f"Cannot write {path}: it is a folder. Give the file's name, such as "
            f"{path / (kind_of(report) + '.html')}."
        ) from err
    except OSError as err:
        raise type(err)(f"Cannot write {path}: {err.strerror or err}.") from err
    return path


__all__ = ["AppNotBuilt", "kind_of", "render", "report_json", "save_html"]
