"""Renderers of a Report: one module per output format, all fed the same Report.

- ``text``: plain text (the CLI, ``repr``, ``text/plain``).
- ``html``: static HTML tables and pictures (nbconvert, GitHub: no script).
- ``pictures``: PNG pictures (matplotlib) of the span split and the roofline, for the HTML.
- ``standalone``: the standalone HTML file (``report.save_html``, ``job.save_html``): the
  TypeScript app of the JupyterLab renderer, built into ``jupyter_brrr/standalone/``, with the
  report's (or job report's) JSON.
- ``figures``: deprecated bokeh figures (``report.figure(kind)``).
- ``bundle``: the notebook output bundle (the renderer's MIME data plus the static fallbacks).
- ``job_text``, ``job_html``: a many-rank job's report; ``change``: a run against its previous
  run, and a target's plan.

Shared by them, so that they import these rather than each other: ``style`` (colours and
labels), ``format`` (numbers and units as text), ``markup`` (static HTML building blocks) and
``geometry`` (chart geometry, pure numpy, for every chart library: the roofline's comes from
``display.py``, which the report JSON carries for the browser app too).
"""
