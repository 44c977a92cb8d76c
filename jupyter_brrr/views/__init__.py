"""Renderers of a Report: one module per output format, all fed the same Report.

- ``text``: plain text (the CLI, ``repr``, ``text/plain``).
- ``html``: static HTML tables and pictures (nbconvert, GitHub: no script).
- ``bundle``: the notebook output bundle (the renderer's MIME data plus the static fallbacks).
"""
