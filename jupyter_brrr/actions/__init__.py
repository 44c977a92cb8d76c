"""Actions: run the profiled code again, in variants, and compare.

``compare(fn, *args, variants=("compile", "graph"))`` times eager against ``torch.compile`` and a
CUDA graph with a correctness check and says why one is faster (``ab.py``); the ``%%brrr --ab``
flag and the notebook controls (``controls.py``) do the same for a cell. The core modules need
only torch and pandas; ``controls`` imports ipywidgets.
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
