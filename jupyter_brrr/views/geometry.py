"""Chart geometry computed once for every renderer: what to draw, not how.

Pure numpy on the report's frames (no plotting library), so that the PNG pictures (matplotlib)
and the bokeh figures draw the same points, ceilings and axis ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..report import Report


def _ceilings(peaks: dict | None) -> list[tuple[float, str]]:
    """Compute ceilings, highest first, with the dtypes that share each one named together."""
    if not peaks or not peaks.get("flops"):
        return []
    by_value: dict[float, list[str]] = {}
    for dtype, value in peaks["flops"].items():
        if value and value > 0:
            by_value.setdefault(float(value), []).append(str(dtype))
    return [(value, "/".join(names)) for value, names in sorted(by_value.items(), reverse=True)]


@dataclass
class RooflineGeometry:
    """What both roofline renderers (the PNG picture and the bokeh figure) draw: one point per op row
    with FLOPs, bytes and GPU time, the ceilings, and axis ranges that hold the points, the
    ridge points and the ceilings."""

    peaks: dict
    bandwidth: float | None
    ceilings: list[tuple[float, str]]
    plotted: np.ndarray  # mask over report.ops
    x: np.ndarray  # intensity, FLOP/byte
    y: np.ndarray  # achieved FLOP/s
    t: np.ndarray  # GPU time, s
    xmin: float
    xmax: float
    ymin: float
    ymax: float


def roofline_geometry(report: Report) -> RooflineGeometry:
    """The roofline of a report's op rows: the points with FLOPs, bytes and GPU time, this
    GPU's ceilings and the axis ranges that hold them."""
    ops = report.ops
    peaks = report.summary.get("peaks") or {}
    bw = float(peaks["bandwidth"]) if peaks.get("bandwidth") else None
    ceilings = _ceilings(peaks)
    flops = ops["flops"].to_numpy(float)
    nbytes = ops["bytes"].to_numpy(float)
    seconds = ops["gpu_time_s"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        plotted = (flops > 0) & (nbytes > 0) & (seconds > 0)
        x = flops[plotted] / nbytes[plotted]
        y = flops[plotted] / seconds[plotted]
    xs = list(x) + [v / bw for v, _ in ceilings if bw]
    ys = list(y) + [v for v, _ in ceilings]
    xmin = min(xs) / 4 if xs else 0.01
    xmax = max(xs) * 6 if xs else 1e4
    ymax = max(ys) * 4 if ys else 1e15
    ymin = min(ys) / 4 if ys else ymax / 1e6
    if bw:
        ymin = min(ymin, bw * xmin * 2)
    return RooflineGeometry(
        peaks, bw, ceilings, plotted, x, y, seconds[plotted], xmin, xmax, ymin, ymax
    )
