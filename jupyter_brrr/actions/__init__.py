"""Actions: run the profiled code again, in variants, and compare.

``compare(fn, *args, variants=("compile", "graph"))`` times eager against ``torch.compile`` and a
CUDA graph with a correctness check and says why one is faster (``ab.py``); the size sweep
(``sweep.py``) runs it at growing sizes. The ``%%brrr --ab`` flag and the buttons under a report
(``jupyter_brrr/notebook/cell_ab.py`` and ``jupyter_brrr/notebook/controls.py``, the only ones
that import IPython and ipywidgets) do the same for a cell; this layer needs only torch, numpy
and pandas.
"""

from __future__ import annotations

from .ab import ABResult, Progress, VariantResult, compare, estimate_runs
from .variants import COMPILE_MODES, VariantSpec, parse_variants

__all__ = [
    "COMPILE_MODES",
    "ABResult",
    "Progress",
    "VariantResult",
    "VariantSpec",
    "compare",
    "estimate_runs",
    "parse_variants",
]
