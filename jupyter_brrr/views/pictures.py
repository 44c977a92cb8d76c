"""Static PNG pictures of a report, drawn with matplotlib's Agg canvas.

They are what the static HTML (nbconvert, GitHub) and the ``image/png`` representation show:
- the span split as one stacked bar (compute / memory / other / idle);
- the roofline: log-log, this GPU's bandwidth ceiling and compute ceilings per dtype, their
  ridge points, one point per op row sized by GPU time and coloured by bound;
- for a report without GPU work, the top ops by self CPU time instead of a roofline, and no split.

matplotlib is imported on first use (never by the core), through ``matplotlib.figure`` and the
Agg canvas only: no pyplot, so no global figure state and no GUI backend. Pictures are small
(640 px wide at 100 dpi) and cached per report, because the whole output bundle must stay
within the ``%%brrr`` overhead budget. ``preload()`` imports matplotlib in a background thread,
so that the first report of a session does not pay for the import (about 0.3 s).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..report import display
from ..schema.report import SPLIT_PARTS
from . import format as fmt
from .geometry import roofline_geometry
from .style import COLOURS, LABELS

if TYPE_CHECKING:
    from ..report.report import Report

WIDTH_IN, DPI = 6.4, 100
ROOF_HEIGHT_IN, SPLIT_HEIGHT_IN = 3.6, 1.0
_FONT = 8


@dataclass(frozen=True)
class Pictures:
    """PNG bytes of one report's pictures (``None`` where a picture does not apply)."""

    split: bytes | None  # the span split bar (GPU reports only)
    main: bytes | None  # the roofline, or the top CPU ops for a report without GPU work
    combined: bytes | None  # split above main: the ``image/png`` of the output bundle


_cache: weakref.WeakKeyDictionary[Any, tuple[tuple, Pictures]] = weakref.WeakKeyDictionary()


def available() -> bool:
    """Whether matplotlib can be imported (it is an optional dependency)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def preload() -> threading.Thread:
    """Import matplotlib in a daemon thread, so the first report need not wait for it."""
    thread = threading.Thread(target=_import_quietly, name="jupyter_brrr-preload", daemon=True)
    thread.start()
    return thread


def _import_quietly() -> None:
    # Best effort: a failure here shows again, with its message, when a picture is drawn.
    with contextlib.suppress(Exception):
        _mpl()


def draw(report: Report) -> Pictures:
    """The report's pictures, or none (``Pictures(None, None, None)``) when matplotlib is not
    installed or a picture fails to draw (with a warning): the tables must still show."""
    if not available():
        return Pictures(None, None, None)
    try:
        return pictures(report)
    except Exception as error:
        warnings.warn(f"jupyter_brrr could not draw the report's pictures: {error!r}", stacklevel=2)
        return Pictures(None, None, None)


def pictures(report: Report) -> Pictures:
    """All pictures of a report, cached as long as its figures do not change."""
    key = _key(report)
    hit = _cache.get(report)
    if hit is not None and hit[0] == key:
        return hit[1]
    result = _draw_all(report)
    _cache[report] = (key, result)
    return result


# --- drawing -------------------------------------------------------------------------------------


def _key(report: Report) -> tuple:
    s = report.summary
    return (id(report.ops), len(report.ops), id(s), s.get("span_s"), s.get("busy_s"), report.name)


def _mpl() -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    return Figure, _canvas_class()


@functools.cache
def _canvas_class() -> type:
    """The Agg canvas, drawing on one renderer per picture size for the whole process: a new
    renderer per picture would allocate its buffers again and lose matplotlib's text metrics,
    which it caches per renderer (the tick labels, axis titles and op names of one cell's
    reports repeat). The pixels are the same as on a fresh renderer (a test holds them)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

    @functools.lru_cache(maxsize=16)  # the sizes in use (a list's height follows its rows)
    def renderer(width: int, height: int, dpi: float) -> Any:
        return RendererAgg(width, height, dpi)

    class SharedRendererCanvas(FigureCanvasAgg):
        def get_renderer(self) -> Any:
            width, height = self.get_width_height(physical=True)
            return renderer(width, height, self.figure.dpi)

    return SharedRendererCanvas


# One picture at a time on the shared renderers (a report may be shown from another thread).
_drawing = threading.Lock()


def _draw_all(report: Report) -> Pictures:
    if report.empty:
        return Pictures(None, None, None)
    gpu = bool(report.summary.get("gpu"))
    split = (
        draw_pixels(_split_figure(report)) if gpu and report.summary.get("span_s", 0) > 0 else None
    )
    main = draw_pixels(_roofline_figure(report) if gpu else _cpu_ops_figure(report))
    split_png = png_bytes(split) if split is not None else None
    main_png = png_bytes(main) if main is not None else None
    if split is not None and main is not None:
        combined = png_bytes(np.concatenate([split, main], axis=0))
    else:  # one picture: the combined one is it, the same bytes (not encoded twice)
        combined = split_png or main_png
    return Pictures(split=split_png, main=main_png, combined=combined)


def draw_pixels(fig: Any) -> np.ndarray | None:
    """A matplotlib figure drawn into RGB pixels (height x width x 3); None for no figure."""
    if fig is None:
        return None
    _, canvas_class = _mpl()
    canvas = canvas_class(fig)
    with _drawing:
        canvas.draw()
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def png_bytes(pixels: np.ndarray) -> bytes:
    """RGB pixels as a PNG file."""
    from PIL import Image  # a dependency of matplotlib

    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG", compress_level=6)
    return out.getvalue()


def new_figure(height_in: float) -> Any:
    """A white figure of the pictures' width and ``height_in`` inches, with no pyplot state."""
    figure_class, _ = _mpl()
    fig = figure_class(figsize=(WIDTH_IN, height_in), dpi=DPI, facecolor="white")
    return fig


def _split_figure(report: Report) -> Any:
    s = report.summary
    span = float(s["span_s"])
    fig = new_figure(SPLIT_HEIGHT_IN)
    ax = fig.add_axes((0.02, 0.30, 0.96, 0.36))
    left = 0.0
    handles = []
    for part in SPLIT_PARTS:
        seconds = float(s.get(f"{part}_s") or 0.0)
        share = seconds / span if span > 0 else 0.0
        bar = ax.barh(
            0, share, left=left, height=1.0, color=COLOURS[part], edgecolor="white", linewidth=0.8
        )
        if seconds > 0:
            handles.append((bar, f"{LABELS[part]} {fmt.seconds(seconds)} ({100 * share:.0f}%)"))
        if share >= 0.07:
            ax.text(
                left + share / 2,
                0,
                f"{100 * share:.0f}%",
                ha="center",
                va="center",
                fontsize=_FONT + 1,
                color="white",
                fontweight="bold",
            )
        left += share
    ax.set_xlim(0, max(left, 1.0))
    ax.set_ylim(-0.5, 0.5)
    ax.set_axis_off()
    busy = float(s.get("busy_s") or 0.0)
    fig.text(
        0.02,
        0.90,
        f"GPU span {fmt.seconds(span)} {fmt.span_scope(s)}: busy {fmt.percent(busy, span)}, idle {fmt.percent(span - busy, span)}",
        fontsize=_FONT + 1.5,
        va="top",
        ha="left",
    )
    fig.legend(
        [h for h, _ in handles],
        [label for _, label in handles],
        loc="lower center",
        bbox_to_anchor=(0.5, -0.03),
        ncol=max(len(handles), 1),
        fontsize=_FONT - 0.5,
        frameon=False,
        handlelength=1.0,
        handleheight=0.8,
        columnspacing=1.2,
        handletextpad=0.4,
    )
    return fig


def _draw_ceilings(ax: Any, spec: dict) -> None:
    """The roofline's ceilings on ``ax``."""
    (xmin, xmax), (ymin, ymax) = spec["x_range"], spec["y_range"]
    # Ceilings: the bandwidth slope up to the highest ridge, a flat roof per peak (those the ops
    # were held against drawn dark and labelled left of their ridge point, where no op can be;
    # the others faint).
    slope = spec["bandwidth"]
    if slope:
        ax.plot(slope["x"], slope["y"], color="#333333", linewidth=1.4, zorder=2)
        # Label the slope along it, just above, where the line is inside the plot.
        bw, top_ridge = slope["bytes_per_s"], slope["x"][1]
        x0 = math.sqrt(max(xmin * 1.5, ymin * 3 / bw) * top_ridge) / 2
        ax_w, ax_h = WIDTH_IN * DPI * 0.86, ROOF_HEIGHT_IN * DPI * 0.74
        angle = math.degrees(
            math.atan((ax_h / math.log10(ymax / ymin)) / (ax_w / math.log10(xmax / xmin)))
        )
        ax.annotate(
            slope["label"],
            xy=(x0, bw * x0),
            xytext=(0, 3),
            textcoords="offset points",
            rotation=angle,
            rotation_mode="anchor",
            fontsize=_FONT - 0.5,
            color="#333333",
        )
    for ceiling in spec["ceilings"]:
        used, ridge, peak = ceiling["used"], ceiling["ridge"], ceiling["flops_per_s"]
        ax.plot(
            ceiling["x"],
            [peak, peak],
            color="#333333" if used else "#b0b0b0",
            linewidth=1.4 if used else 0.8,
            linestyle="-" if used else (0, (4, 3)),
            zorder=2,
        )
        if not used:
            continue
        if ridge is not None:
            ax.plot([ridge], [peak], marker="D", markersize=3.5, color="#333333", zorder=3)
        ax.annotate(
            ceiling["label"],
            xy=(ridge if ridge is not None else xmin, peak),
            xytext=(-4 if ridge is not None else 4, 3),
            textcoords="offset points",
            ha="right" if ridge is not None else "left",
            va="bottom",
            fontsize=_FONT - 1,
            color="#222222",
            zorder=3,
        )


def _label_largest(
    ax: Any,
    names: Any,
    x: np.ndarray,
    y: np.ndarray,
    order: np.ndarray,
    floor: float,
    x_range: tuple[float, float],
) -> None:
    """Names on the largest points (up to four), none twice and none over another."""
    xmin, xmax = x_range
    placed: list[tuple[float, float]] = []
    named: set[str] = set()
    span_x = math.log10(xmax) - math.log10(xmin)
    for i in order[:8]:
        name = _short(names[i], 22)  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        lx, ly = math.log10(x[i]), math.log10(max(y[i], floor))
        if name in named or any(abs(lx - px) < 1.2 and abs(ly - py) < 0.35 for px, py in placed):
            continue  # the same name, or it would overlap a label already drawn
        placed.append((lx, ly))
        named.add(name)
        right_edge = (lx - math.log10(xmin)) / span_x > 0.78
        ax.annotate(
            name,
            xy=(x[i], max(y[i], floor)),
            xytext=(-8 if right_edge else 8, -3),
            textcoords="offset points",
            ha="right" if right_edge else "left",
            fontsize=_FONT - 1,
            color="#222222",
            zorder=5,
        )
        if len(placed) == 4:
            break


def _roofline_axes(ax: Any) -> None:
    """The roofline's log axes: decade ticks in SI units, labels, a light grid."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    # No minor ticks: on log axes they are most of the drawing time.
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(fmt.si))
    ax.yaxis.set_major_formatter(FuncFormatter(fmt.si))
    ax.tick_params(labelsize=_FONT, length=3)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)", fontsize=_FONT)
    ax.set_ylabel("achieved FLOP/s", fontsize=_FONT)
    ax.grid(True, which="major", color="#eeeeee", linewidth=0.6, zorder=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _roofline_figure(report: Report) -> Any:
    from matplotlib.lines import Line2D

    ops = report.ops
    peaks = report.summary.get("peaks") or {}
    g = roofline_geometry(report)
    spec = g.spec
    plotted, x, y, t = g.plotted, g.x, g.y, g.t
    (xmin, xmax), (ymin, ymax) = spec["x_range"], spec["y_range"]
    bounds = ops["bound"].astype(str).to_numpy()[plotted]
    flagged = (
        ops["roof_flag"].fillna("").astype(str).to_numpy()[plotted] != ""
        if "roof_flag" in ops
        else np.zeros(int(np.count_nonzero(plotted)), dtype=bool)
    )
    # Points far below the rest (a scalar op at kFLOP/s) sit on the floor as triangles: the
    # axis is at most display.ROOF_DECADES deep.
    floor = ymax / 10**display.ROOF_DECADES

    fig = new_figure(ROOF_HEIGHT_IN)
    ax = fig.add_axes((0.11, 0.13, 0.86, 0.74))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)

    _draw_ceilings(ax, spec)

    if len(t):
        tmax = float(t.max())
        size = (4 + 15 * np.sqrt(t / tmax)) ** 2
        colours = np.array([COLOURS.get(b, COLOURS["other"]) for b in bounds], dtype=object)
        order = np.argsort(-t)  # big points first, so small ones stay visible on top
        below = y < floor
        for marker, chosen in (("o", ~below[order]), ("v", below[order])):
            idx = order[chosen]
            if not len(idx):
                continue
            ax.scatter(
                x[idx],
                np.where(below[idx], floor, y[idx]),
                s=size[idx] if marker == "o" else 30,
                # Hollow: above its roof, a model or peak mismatch, not an achievement.
                c=[
                    "none" if hollow else c
                    for c, hollow in zip(colours[idx], flagged[idx], strict=True)
                ],
                alpha=0.6,
                edgecolors=list(colours[idx]),
                linewidths=0.8,
                marker=marker,
                zorder=4,
                clip_on=False,
            )
        names = ops["name"].astype(str).to_numpy()[plotted]
        _label_largest(ax, names, x, y, order, floor, (xmin, xmax))
    else:
        ax.text(
            0.5,
            0.5,
            "no GPU op with a FLOP model: nothing to place on the roofline",
            transform=ax.transAxes,
            ha="center",
            fontsize=_FONT,
            color="#555555",
        )

    legend_bounds = [b for b in ("compute", "memory", "overhead", "other") if b in set(bounds)]
    if legend_bounds:
        handles = [
            Line2D([], [], marker="o", linestyle="", markersize=6, color=COLOURS[b], alpha=0.8)
            for b in legend_bounds
        ]
        ax.legend(
            handles,
            [LABELS[b] for b in legend_bounds],
            loc="lower right",
            fontsize=_FONT - 0.5,
            frameon=True,
            framealpha=0.9,
            edgecolor="#dddddd",
            handletextpad=0.2,
            borderaxespad=0.4,
            title="bound",
            title_fontsize=_FONT - 0.5,
        )

    _roofline_axes(ax)

    device = str(report.summary.get("device", "GPU"))
    if peaks and peaks.get("source"):
        source = str(peaks["source"]).removeprefix(device).strip()
        source = f" (peaks: {source or peaks['source']})"
    else:
        source = " (no peak figures known: no ceilings)"
    fig.text(0.11, 0.975, _short(f"Roofline: {device}{source}", 78), fontsize=_FONT + 1.5, va="top")
    seconds = ops["gpu_time_s"].to_numpy(float)
    hidden = seconds[(seconds > 0) & ~plotted].sum()
    total = seconds[seconds > 0].sum()
    footnote = "a point per op and shapes, sized by GPU time"
    if hidden > 0 and total > 0:
        footnote += f"; not shown (no FLOPs/model): {100 * hidden / total:.0f}% of GPU time"
    if len(t) and (y < floor).any():
        footnote += "; \u25bc below the chart"
    fig.text(0.11, 0.915, footnote, fontsize=_FONT - 1, color="#555555", va="top")
    return fig


def _cpu_ops_figure(report: Report, top: int = 12) -> Any:
    ops = report.ops
    if not len(ops):
        return None
    rows = ops.nlargest(top, "self_cpu_time_s")
    rows = rows[rows["self_cpu_time_s"] > 0]
    # The height follows the number of bars, so a short list stays a small picture.
    height = min(ROOF_HEIGHT_IN, 0.95 + 0.22 * max(len(rows), 3))
    fig = new_figure(height)
    ax = fig.add_axes((0.40, 0.45 / height, 0.50, 1 - 0.8 / height))
    labels = [
        _short(f"{n} {s}" if s and s != "[]" else str(n), 48)
        for n, s in zip(rows["name"].astype(str), rows["shapes"].astype(str), strict=True)
    ]
    values = rows["self_cpu_time_s"].to_numpy(float)[::-1]
    positions = np.arange(len(values))
    ax.barh(positions, values, color=COLOURS["cpu"], height=0.7)
    ax.set_yticks(positions, labels[::-1], fontsize=_FONT - 0.5)
    ax.set_ylim(len(values) - max(len(values), 3) - 0.5, len(values) - 0.5)
    total = float(ops["self_cpu_time_s"].sum())
    for pos, value in zip(positions, values, strict=True):
        ax.text(
            value,
            pos,
            f" {fmt.seconds(value)} ({fmt.percent(value, total)})",
            va="center",
            fontsize=_FONT - 1,
            color="#333333",
        )
    ax.set_xlim(0, float(values.max()) * 1.35 if len(values) else 1)
    ax.tick_params(labelsize=_FONT - 0.5, length=2)
    ax.xaxis.set_major_formatter(_seconds_formatter())
    ax.set_xlabel("self CPU time", fontsize=_FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.text(
        0.02,
        1 - 0.1 / height,
        "Top ops by self CPU time (no GPU work recorded: no roofline)",
        fontsize=_FONT + 1.5,
        va="top",
    )
    return fig


def _seconds_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: "0" if v == 0 else fmt.seconds(v))


def _short(text: str, limit: int) -> str:
    # Control characters would be missing glyphs (and a warning) in the picture: escaped.
    return fmt.short(fmt.plain(text).removeprefix("aten::"), limit)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (for tests and sanity checks)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


__all__ = [
    "Pictures",
    "available",
    "draw_pixels",
    "new_figure",
    "pictures",
    "png_bytes",
    "png_size",
    "preload",
]
