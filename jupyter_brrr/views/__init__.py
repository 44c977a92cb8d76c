"""Renderers of a Report: one module per output format, all fed the same Report.

- ``text``: plain text (the CLI, ``repr``, ``text/plain``).
- ``html``: static HTML tables and pictures (nbconvert, GitHub: no script).
- ``pictures``: PNG pictures (matplotlib) of the span split and the roofline, for the HTML.
- ``figures``: bokeh figures (``report.figure(kind)``) and the standalone HTML export.
- ``bundle``: the notebook output bundle (the renderer's MIME data plus the static fallbacks).
"""
