"""The notebook front end: everything that sees IPython's shell.

- ``magic``: the ``%%brrr`` cell magic (and ``%brrr history|diff|forget``);
- ``cell``: a cell parsed once, as its exec form (the profiled run) and its function form (the
  A/B's variants);
- ``ab``: the A/B of a cell, one entry point for ``--ab`` and the buttons;
- ``controls``: the A/B buttons (ipywidgets);
- ``job_controls``: ``%brrr_job``, with progress and Cancel;
- ``shell``: what is read from the shell (namespace, prompt number, whether someone can click).

The core and ``actions`` never import IPython: this package passes them plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext jupyter_brrr``: registers the ``%%brrr`` cell magic and ``%brrr_job``."""
    from ..views import pictures
    from .job_controls import JobMagics
    from .magic import BrrrMagics

    ipython.register_magics(BrrrMagics)
    ipython.register_magics(JobMagics)
    pictures.preload()  # Pillow's import and the fonts, off the first report's path
