"""Views: every data object drawn in every format, through one registry.

``render(obj, format)`` (``registry``) draws a report, job report, comparison, history, target
plan, size sweep, memory breakdown or A/B result as a notebook bundle (``"mimebundle"``), plain
text, static HTML, the standalone offline page or, where there is one, a PNG picture; the
objects' display methods call it (``report.shown.Shown``). One module per output format:

- ``text``: a report as plain text (the CLI, ``repr``, ``text/plain``).
- ``html``: a report's static HTML tables and pictures (nbconvert, GitHub: no script).
- ``pictures``: PNG pictures (Pillow, ``canvas``) of the span split and the roofline, for the HTML.
- ``bundle``: a report's notebook output bundle (the renderer's MIME data plus the static
  fallbacks).
- ``standalone``: the standalone HTML page (``save_html``): the TypeScript app of the JupyterLab
  renderer, built into ``jupyter_brrr/standalone/``, with the document's JSON.
- ``job_text``, ``job_html``: a many-rank job's report; ``change``: a comparison, a named cell's
  history and a target's plan; ``sweep_memory``: a size sweep and a memory breakdown;
  ``ab_text``: an A/B comparison on its own.

Shared by them, so that they import these rather than each other: ``style`` (colours and
labels), ``format`` (numbers and units as text, by the rules of ``report/display.py``),
``markup`` (static HTML building blocks) and ``geometry`` (chart geometry, pure numpy: the
roofline's comes from ``display.py``, which the report JSON carries for the browser app too).
"""

from .registry import FORMATS, formats, render

__all__ = ["FORMATS", "formats", "render"]
