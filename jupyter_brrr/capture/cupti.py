"""A capture leaves no profiler cost behind: Kineto asked to finalize CUPTI when it stops.

Kineto keeps CUPTI subscribed after a capture unless ``TEARDOWN_CUPTI=1`` (pytorch/pytorch
issue 144455), and its callbacks keep costing the host: on the H200 host a launch-bound MLP ran
0.30 ms per step before any capture and 0.39-0.42 ms after one, a ResNet-50's host 25-35%
slower, until the process ends (``bench/profiler_aftereffect.py``). That slows the user's own
code after ``%%brrr``, and every timed run taken after a capture in the same process (the next
cell's, the A/B's rounds). With ``TEARDOWN_CUPTI=1`` the same steps ran at their speed from
before the capture, and later captures re-initialise CUPTI lazily.

The variable is set only where the user has not set it (either way), on CUDA builds of 12.6
and later: before 12.6, re-initialising CUPTI after a teardown could crash a process that uses
CUDA graphs (torch itself keeps teardown off there when Inductor captures graphs).
"""

from __future__ import annotations

import os
import re
from typing import Any

TEARDOWN_VARIABLE = "TEARDOWN_CUPTI"
# The first CUDA release whose CUPTI re-initialises safely after a teardown with CUDA graphs.
SAFE_CUDA = (12, 6)

TEARDOWN_NOTE = (
    "jupyter_brrr set TEARDOWN_CUPTI=1 in this process, so that torch's profiler releases "
    "CUPTI when a capture ends: otherwise CUDA launches stay slower after it (about 30% for "
    "launch-bound code on an H200 host). Set TEARDOWN_CUPTI=0 before the first capture to "
    "keep torch's default."
)


def cuda_release(torch: Any) -> tuple[int, int] | None:
    """The CUDA release torch was built with, as (major, minor); None on ROCm or a CPU build."""
    if getattr(torch.version, "hip", None):
        return None
    found = re.match(r"(\d+)\.(\d+)", str(getattr(torch.version, "cuda", None) or ""))
    return (int(found[1]), int(found[2])) if found else None


def ask_teardown(torch: Any) -> str | None:
    """Set ``TEARDOWN_CUPTI=1`` for this process where that is safe and nobody chose a value.
    Returns ``TEARDOWN_NOTE`` when this call set it (once per process), else None."""
    if TEARDOWN_VARIABLE in os.environ:
        return None
    release = cuda_release(torch)
    if release is None or release < SAFE_CUDA:
        return None
    # Read by Kineto when a trace stops and when the next one starts (lazy re-initialisation):
    # it stays set for the process.
    os.environ[TEARDOWN_VARIABLE] = "1"
    return TEARDOWN_NOTE
