"""Chart geometry for every renderer: what to draw, not how.

The roofline's axis ranges, ceilings and their labels come from ``display.roofline``, which the
report JSON carries for the browser app too (``"display"``): the PNG picture and the app draw
the same geometry. Here the picture gets it with the points (one per op row with FLOPs, bytes
and GPU time) as numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..report import display

if TYPE_CHECKING:
    from ..report.report import Report


@dataclass
class RooflineGeometry:
    """What the roofline renderers draw: the report JSON's roofline spec (``display.roofline``:
    axis ranges, ceilings with their labels, the bandwidth slope) and the points, one per op
    row with FLOPs, bytes and GPU time."""

    spec: dict
    plotted: np.ndarray  # mask over report.ops
    x: np.ndarray  # intensity, FLOP/byte
    y: np.ndarray  # achieved FLOP/s
    t: np.ndarray  # GPU time, s


def roofline_geometry(report: Report) -> RooflineGeometry:
    """The geometry of a report's roofline (with no op to place: the ceilings')."""
    ops = report.ops
    spec = display.roofline(ops, report.summary.get("peaks") or None)
    flops = ops["flops"].to_numpy(float)
    nbytes = ops["bytes"].to_numpy(float)
    seconds = ops["gpu_time_s"].to_numpy(float)
    # The rows the spec placed: a point at infinity (a damaged 1e-320 s) is left out there too.
    plotted = display.placed_ops(ops)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = flops[plotted] / nbytes[plotted]
        y = flops[plotted] / seconds[plotted]
    return RooflineGeometry(spec, plotted, x, y, seconds[plotted])
