"""Static PNG pictures of a report, drawn with Pillow (``canvas.py``).

They are what the static HTML (nbconvert, GitHub) and the ``image/png`` representation show:
- the span split as one stacked bar (compute / memory / other / idle);
- the roofline: log-log, this GPU's bandwidth ceiling and compute ceilings per dtype, their
  ridge points, one point per op row sized by GPU time and coloured by bound;
- for a report without GPU work, the top ops by self CPU time instead of a roofline, and no split.

The layout is fixed (640 px wide at 100 dpi, the sizes in points matplotlib's pictures had): no
layout engine, no artist tree, about thirty labels drawn straight onto the pixels, so the whole
output bundle stays within the ``%%brrr`` overhead budget (issue 26: matplotlib drew these in
80-110 ms a report; Pillow in a few). The pictures are cached per report. The sweep's and the
memory timeline's pictures (``sweep_memory.py``), shown only for ``--sweep`` and ``--memory``,
are still matplotlib's (``new_figure``, ``draw_pixels``).
"""

from __future__ import annotations

import contextlib
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
from .canvas import DPI, PT, Axes, Canvas, font_folder
from .geometry import roofline_geometry
from .style import COLOURS, LABELS

if TYPE_CHECKING:
    from ..report.report import Report

WIDTH_IN = 6.4
WIDTH = round(WIDTH_IN * DPI)
ROOF_HEIGHT_IN, SPLIT_HEIGHT_IN = 3.6, 1.0
_FONT = 8  # points, as the matplotlib pictures had
_DARK, _INK, _MUTED, _GRID = "#333333", "#222222", "#555555", "#eeeeee"


@dataclass(frozen=True)
class Pictures:
    """PNG bytes of one report's pictures (``None`` where a picture does not apply)."""

    split: bytes | None  # the span split bar (GPU reports only)
    main: bytes | None  # the roofline, or the top CPU ops for a report without GPU work
    combined: bytes | None  # split above main: the ``image/png`` of the output bundle


_cache: weakref.WeakKeyDictionary[Any, tuple[tuple, Pictures]] = weakref.WeakKeyDictionary()


def available() -> bool:
    """Whether the pictures can be drawn: Pillow and the DejaVu fonts that come with matplotlib
    (an optional dependency) are installed."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return font_folder() is not None


def preload() -> threading.Thread:
    """Import Pillow and open the fonts in a daemon thread, off the first report's path."""
    thread = threading.Thread(target=_load_quietly, name="jupyter_brrr-preload", daemon=True)
    thread.start()
    return thread


def _load_quietly() -> None:
    # Best effort: a failure here shows again, with its message, when a picture is drawn.
    with contextlib.suppress(Exception):
        canvas = Canvas(1, 1)
        for size in (_FONT - 1, _FONT - 0.5, _FONT, _FONT + 1.5):
            canvas.text_width("0", size)
        canvas.text_width("0", _FONT + 1, bold=True)


def draw(report: Report) -> Pictures:
    """The report's pictures, or none (``Pictures(None, None, None)``) when Pillow or the fonts
    are not installed or a picture fails to draw (with a warning): the tables must still show."""
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


def _key(report: Report) -> tuple:
    s = report.summary
    return (id(report.ops), len(report.ops), id(s), s.get("span_s"), s.get("busy_s"), report.name)


def _draw_all(report: Report) -> Pictures:
    if report.empty:
        return Pictures(None, None, None)
    gpu = bool(report.summary.get("gpu"))
    split = split_canvas(report) if gpu and report.summary.get("span_s", 0) > 0 else None
    main = roofline_canvas(report) if gpu else cpu_ops_canvas(report)
    split_pixels = split.pixels() if split is not None else None
    main_pixels = main.pixels() if main is not None else None
    if split_pixels is not None and main_pixels is not None:
        # One palette for the three files: the combined picture is the two stacked, so it is
        # reduced to 256 colours once and the two are its parts (the reduction is most of the
        # cost of a file; the two pictures share their colours anyway).
        whole = _palette(np.concatenate([split_pixels, main_pixels], axis=0))
        height, width = split_pixels.shape[:2]
        split_png = _png(whole.crop((0, 0, width, height)))
        main_png = _png(whole.crop((0, height, width, whole.height)))
        return Pictures(split=split_png, main=main_png, combined=_png(whole))
    split_png = png_bytes(split_pixels) if split_pixels is not None else None
    main_png = png_bytes(main_pixels) if main_pixels is not None else None
    # One picture: the combined one is it, the same bytes (not encoded twice).
    return Pictures(split=split_png, main=main_png, combined=split_png or main_png)


def png_bytes(pixels: np.ndarray) -> bytes:
    """RGB pixels as a PNG file of 256 colours: the pictures are flat colours and antialiased
    edges, so a palette loses nothing that shows (at most a few levels on an edge's pixel) and
    makes the file a third the size, and quicker to write."""
    return _png(_palette(pixels))


def _palette(pixels: np.ndarray) -> Any:
    """RGB pixels as a Pillow image of 256 colours (fast octree, no dither)."""
    from PIL import Image  # a dependency of matplotlib

    return Image.fromarray(pixels).quantize(
        colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )


def _png(image: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


# --- matplotlib, for the sweep's and the memory timeline's pictures -------------------------------


def new_figure(height_in: float) -> Any:
    """A white matplotlib figure of the pictures' width and ``height_in`` inches, with no pyplot
    state."""
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH_IN, height_in), dpi=DPI, facecolor="white")


def draw_pixels(fig: Any) -> np.ndarray | None:
    """A matplotlib figure drawn into RGB pixels (height x width x 3); None for no figure."""
    if fig is None:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


# --- the span split ------------------------------------------------------------------------------


def split_canvas(report: Report) -> Canvas:
    """The span split as one stacked bar, its title above and its legend below."""
    s = report.summary
    span = float(s["span_s"])
    c = Canvas(WIDTH, round(SPLIT_HEIGHT_IN * DPI))
    busy = float(s.get("busy_s") or 0.0)
    c.text(
        0.02 * c.width,
        0.10 * c.height,
        f"GPU span {fmt.seconds(span)} {fmt.span_scope(s)}: busy {fmt.percent(busy, span)}, "
        f"idle {fmt.percent(span - busy, span)}",
        size=_FONT + 1.5,
        anchor="la",
    )
    shares = {
        part: (float(s.get(f"{part}_s") or 0.0) / span if span > 0 else 0.0) for part in SPLIT_PARTS
    }
    bar = Axes(
        (0.02 * c.width, 0.34 * c.height, 0.98 * c.width, 0.70 * c.height),
        (0.0, max(sum(shares.values()), 1.0)),
        (-0.5, 0.5),
    )
    c.axes.append(bar)
    gap = 0.4 * PT  # half of the white edge between the parts
    left = 0.0
    legend: list[tuple[str, str]] = []
    for part, share in shares.items():
        seconds = float(s.get(f"{part}_s") or 0.0)
        x0, x1 = bar.x(left), bar.x(left + share)
        if x1 - x0 > 2 * gap:
            c.rectangle(
                (x0 + gap, bar.box[1] + gap, x1 - gap, bar.box[3] - gap), fill=COLOURS[part]
            )
        if seconds > 0:
            legend.append(
                (COLOURS[part], f"{LABELS[part]} {fmt.seconds(seconds)} ({100 * share:.0f}%)")
            )
        if share >= 0.07:
            c.text(
                (x0 + x1) / 2,
                bar.y(0),
                f"{100 * share:.0f}%",
                size=_FONT + 1,
                colour="white",
                anchor="mm",
                bold=True,
            )
        left += share
    _row_legend(c, legend, centre_y=0.87 * c.height, size=_FONT - 0.5)
    return c


def _row_legend(c: Canvas, entries: list[tuple[str, str]], centre_y: float, size: float) -> None:
    """A legend of coloured squares and labels in one row, centred on the picture."""
    em = size * PT
    handle_w, handle_h, pad, spacing = 1.0 * em, 0.8 * em, 0.4 * em, 1.2 * em
    widths = [handle_w + pad + c.text_width(label, size) for _, label in entries]
    x = (c.width - sum(widths) - spacing * max(len(entries) - 1, 0)) / 2
    for (colour, label), width in zip(entries, widths, strict=True):
        c.rectangle(
            (x, centre_y - handle_h / 2, x + handle_w, centre_y + handle_h / 2), fill=colour
        )
        c.text(x + handle_w + pad, centre_y, label, size=size, anchor="lm")
        x += width + spacing


# --- the roofline --------------------------------------------------------------------------------


def _decades(lo: float, hi: float, numticks: int = 12) -> list[float]:
    """The powers of ten within [lo, hi], every one or every few (at most ``numticks`` - 1),
    as matplotlib's ``LogLocator(base=10, numticks=12)`` places them."""
    first, last = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    stride = max(math.ceil((last - first + 1) / (numticks - 1)), 1)
    return [10.0**k for k in range(first, last + 1, stride)]


def _clip_to(axes: Axes, points: list[tuple[float, float]]) -> list[tuple[float, float]] | None:
    """A segment between two data points, cut to the axes' ranges (in log space), or None."""
    (x0, y0), (x1, y1) = ((math.log10(x), math.log10(y)) for x, y in points)
    (xlo, xhi), (ylo, yhi) = (
        (math.log10(a), math.log10(b)) for a, b in (axes.x_range, axes.y_range)
    )
    t0, t1 = 0.0, 1.0
    dx, dy = x1 - x0, y1 - y0
    for p, q in ((-dx, x0 - xlo), (dx, xhi - x0), (-dy, y0 - ylo), (dy, yhi - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
    if t0 > t1:
        return None
    return [(10 ** (x0 + t * dx), 10 ** (y0 + t * dy)) for t in (t0, t1)]


def _log_axes(c: Canvas, ax: Axes) -> None:
    """The roofline's log axes: a light grid and decade ticks in SI units, labels, the left and
    bottom spines."""
    left, top, right, bottom = ax.box
    tick, pad = 3 * PT, 3.5 * PT
    xticks, yticks = _decades(*ax.x_range), _decades(*ax.y_range)
    for v in xticks:
        c.line([(ax.x(v), top), (ax.x(v), bottom)], colour=_GRID, width=0.6)
    for v in yticks:
        c.line([(left, ax.y(v)), (right, ax.y(v))], colour=_GRID, width=0.6)
    c.line([(left, top), (left, bottom), (right, bottom)], colour="#000000", width=0.8)
    for v in xticks:
        c.line([(ax.x(v), bottom), (ax.x(v), bottom + tick)], colour="#000000", width=0.8)
        c.text(ax.x(v), bottom + tick + pad, fmt.si(v), size=_FONT, anchor="ma")
    widest = 0.0
    for v in yticks:
        c.line([(left - tick, ax.y(v)), (left, ax.y(v))], colour="#000000", width=0.8)
        label = c.text(left - tick - pad, ax.y(v), fmt.si(v), size=_FONT, anchor="rm")
        widest = max(widest, label.box[2] - label.box[0])
    line_h = _FONT * PT * 1.2
    c.text(
        (left + right) / 2,
        bottom + tick + pad + line_h + 4 * PT,
        "arithmetic intensity (FLOP / byte)",
        size=_FONT,
        anchor="ma",
    )
    c.text(
        left - tick - pad - widest - 4 * PT - line_h / 2,
        (top + bottom) / 2,
        "achieved FLOP/s",
        size=_FONT,
        anchor="mm",
        angle=90,
    )


def _draw_ceilings(c: Canvas, ax: Axes, spec: dict) -> None:
    """The roofline's ceilings: the bandwidth slope up to the highest ridge, a flat roof per
    peak (those the ops were held against drawn dark and labelled left of their ridge point,
    where no op can be; the others faint)."""
    xmin = ax.x_range[0]
    slope = spec["bandwidth"]
    if slope:
        bw = slope["bytes_per_s"]
        segment = _clip_to(ax, list(zip(slope["x"], slope["y"], strict=True)))
        if segment:
            c.line([(ax.x(x), ax.y(y)) for x, y in segment], colour=_DARK, width=1.4)
        # Labelled along the slope, just above it, where the line is inside the plot.
        (ymin, _), top_ridge = ax.y_range, slope["x"][1]
        x0 = math.sqrt(max(xmin * 1.5, ymin * 3 / bw) * top_ridge) / 2
        angle = math.degrees(
            math.atan2(ax.y(bw * x0) - ax.y(bw * x0 * 10), ax.x(x0 * 10) - ax.x(x0))
        )
        c.text(
            ax.x(x0),
            ax.y(bw * x0) - 3 * PT,  # 3 points above the line's point, turned about its start
            slope["label"],
            size=_FONT - 0.5,
            colour=_DARK,
            anchor="ls",
            angle=angle,
        )
    for ceiling in spec["ceilings"]:
        used, ridge, peak = ceiling["used"], ceiling["ridge"], ceiling["flops_per_s"]
        x0, x1 = (min(max(v, ax.x_range[0]), ax.x_range[1]) for v in ceiling["x"])
        c.line(
            [(ax.x(x0), ax.y(peak)), (ax.x(x1), ax.y(peak))],
            colour=_DARK if used else "#b0b0b0",
            width=1.4 if used else 0.8,
            dash=None if used else (4 * 0.8, 3 * 0.8),  # matplotlib's dashes scale with the width
        )
        if not used:
            continue
        if ridge is not None:
            c.marker(ax.x(ridge), ax.y(peak), shape="D", size=3.5, fill=_DARK)
        c.text(
            ax.x(ridge if ridge is not None else xmin) + (-4 if ridge is not None else 4) * PT,
            ax.y(peak) - 3 * PT,
            ceiling["label"],
            size=_FONT - 1,
            colour=_INK,
            anchor="rd" if ridge is not None else "ld",
        )


def _label_largest(
    c: Canvas,
    ax: Axes,
    names: Any,
    x: np.ndarray,
    y: np.ndarray,
    order: np.ndarray,
    floor: float,
) -> None:
    """Names on the largest points (up to four), none twice and none over another."""
    xmin, xmax = ax.x_range
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
        c.text(
            ax.x(float(x[i])) + (-8 if right_edge else 8) * PT,
            ax.y(max(float(y[i]), floor)) + 3 * PT,
            name,
            size=_FONT - 1,
            colour=_INK,
            anchor="rs" if right_edge else "ls",
        )
        if len(placed) == 4:
            break


def _bound_legend(c: Canvas, ax: Axes, bounds: list[str]) -> None:
    """The legend of the points' colours, in a framed box at the axes' lower right."""
    size = _FONT - 0.5
    em = size * PT
    labels = [LABELS[b] for b in bounds]
    row = 1.5 * em  # a label's height and matplotlib's labelspacing of half an em
    handle, textpad, border = 2.0 * em, 0.2 * em, 0.4 * em
    inner = max(
        handle + textpad + max(c.text_width(t, size) for t in labels), c.text_width("bound", size)
    )
    width = inner + 2 * border
    height = border + row * (1 + len(labels)) + border - 0.5 * em
    right, bottom = ax.box[2] - border, ax.box[3] - border
    left, top = right - width, bottom - height
    c.rectangle(
        (left, top, right, bottom), fill="white", alpha=0.9, outline="#dddddd", radius=0.2 * size
    )
    c.text((left + right) / 2, top + border + em / 2, "bound", size=size, anchor="mm")
    for n, (bound, label) in enumerate(zip(bounds, labels, strict=True)):
        cy = top + border + em / 2 + row * (n + 1)
        c.marker(left + border + handle / 2, cy, shape="o", size=6, fill=COLOURS[bound], alpha=0.8)
        c.text(left + border + handle + textpad, cy, label, size=size, anchor="lm")


def roofline_canvas(report: Report) -> Canvas:
    """The roofline: the ceilings, a point per op row, the largest named, the bounds' legend."""
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

    c = Canvas(WIDTH, round(ROOF_HEIGHT_IN * DPI))
    ax = Axes(
        (0.11 * c.width, 0.13 * c.height, 0.97 * c.width, 0.87 * c.height),
        (xmin, xmax),
        (ymin, ymax),
        log=True,
    )
    c.axes.append(ax)
    _log_axes(c, ax)
    _draw_ceilings(c, ax, spec)

    if len(t):
        tmax = float(t.max())
        diameters = 4 + 15 * np.sqrt(t / tmax)  # points, as matplotlib's sizes (pt^2) had them
        order = np.argsort(-t)  # big points first, so small ones stay visible on top
        below = y < floor
        for triangles in (False, True):
            for i in order[below[order] == triangles]:
                colour = COLOURS.get(str(bounds[i]), COLOURS["other"])
                c.marker(
                    ax.x(float(x[i])),
                    ax.y(floor if triangles else float(y[i])),
                    shape="v" if triangles else "o",
                    size=math.sqrt(30) if triangles else float(diameters[i]),
                    # Hollow: above its roof, a model or peak mismatch, not an achievement.
                    fill=None if flagged[i] else colour,
                    edge=colour,
                    alpha=0.6,
                )
        names = ops["name"].astype(str).to_numpy()[plotted]
        _label_largest(c, ax, names, x, y, order, floor)
    else:
        left, top, right, bottom = ax.box
        c.text(
            (left + right) / 2,
            (top + bottom) / 2,
            "no GPU op with a FLOP model: nothing to place on the roofline",
            size=_FONT,
            colour=_MUTED,
            anchor="ms",
        )

    legend_bounds = [b for b in ("compute", "memory", "overhead", "other") if b in set(bounds)]
    if legend_bounds:
        _bound_legend(c, ax, legend_bounds)

    device = str(report.summary.get("device", "GPU"))
    if peaks and peaks.get("source"):
        source = str(peaks["source"]).removeprefix(device).strip()
        source = f" (peaks: {source or peaks['source']})"
    else:
        source = " (no peak figures known: no ceilings)"
    c.text(
        ax.box[0],
        0.025 * c.height,
        _short(f"Roofline: {device}{source}", 78),
        size=_FONT + 1.5,
        anchor="la",
    )
    seconds = ops["gpu_time_s"].to_numpy(float)
    hidden = seconds[(seconds > 0) & ~plotted].sum()
    total = seconds[seconds > 0].sum()
    footnote = "a point per op and shapes, sized by GPU time"
    if hidden > 0 and total > 0:
        footnote += f"; not shown (no FLOPs/model): {100 * hidden / total:.0f}% of GPU time"
    if len(t) and (y < floor).any():
        footnote += "; \u25bc below the chart"
    c.text(ax.box[0], 0.085 * c.height, footnote, size=_FONT - 1, colour=_MUTED, anchor="la")
    return c


# --- the top CPU ops -----------------------------------------------------------------------------


def _nice_ticks(hi: float, length_px: float, size: float) -> list[float]:
    """Ticks from 0 to ``hi`` at a step of 1, 2, 2.5 or 5 times a power of ten, as many as fit
    along ``length_px`` at three font sizes apart (matplotlib's ``AutoLocator``)."""
    if hi <= 0:
        return [0.0]
    bins = max(int(length_px / PT / (3 * size)), 1)
    raw = hi / bins
    scale = 10.0 ** math.floor(math.log10(raw))
    step = next(m * scale for m in (1, 2, 2.5, 5, 10) if m * scale >= raw * (1 - 1e-9))
    return [n * step for n in range(int(hi / step + 1e-9) + 1)]


def cpu_ops_canvas(report: Report, count: int = 12) -> Canvas | None:
    """The ``count`` top ops by self CPU time as horizontal bars, the largest first."""
    ops = report.ops
    if not len(ops):
        return None
    rows = ops.nlargest(count, "self_cpu_time_s")
    rows = rows[rows["self_cpu_time_s"] > 0]
    # The height follows the number of bars, so a short list stays a small picture.
    height_in = min(ROOF_HEIGHT_IN, 0.95 + 0.22 * max(len(rows), 3))
    c = Canvas(WIDTH, round(height_in * DPI))
    values = rows["self_cpu_time_s"].to_numpy(float)
    n = len(values)
    hi = float(values.max()) * 1.35 if n else 1.0
    ax = Axes(
        (0.40 * c.width, 0.35 * DPI, 0.90 * c.width, c.height - 0.45 * DPI),
        (0.0, hi),
        (-0.5, max(n, 3) - 0.5),  # row 0 at the top: y counts down from the largest
    )
    c.axes.append(ax)
    left, top, right, bottom = ax.box

    def row_y(i: int) -> float:  # the centre of the i-th largest bar
        return ax.y(max(n, 3) - 1 - i)

    total = float(ops["self_cpu_time_s"].sum())
    bar_half = 0.35 * (bottom - top) / max(n, 3)
    tick, pad = 2 * PT, 3.5 * PT
    label_room = left - tick - pad - 4
    for i, (name, shapes, value) in enumerate(
        zip(rows["name"].astype(str), rows["shapes"].astype(str), values, strict=True)
    ):
        cy = row_y(i)
        c.rectangle((left, cy - bar_half, ax.x(value), cy + bar_half), fill=COLOURS["cpu"])
        label = _short(f"{name} {shapes}" if shapes and shapes != "[]" else name, 48)
        c.line([(left - tick, cy), (left, cy)], colour="#000000", width=0.8)
        c.text(
            left - tick - pad,
            cy,
            c.fit(label, _FONT - 0.5, label_room),
            size=_FONT - 0.5,
            anchor="rm",
        )
        c.text(
            ax.x(value),
            cy,
            f" {fmt.seconds(value)} ({fmt.percent(value, total)})",
            size=_FONT - 1,
            colour=_DARK,
            anchor="lm",
        )
    c.line([(left, top), (left, bottom), (right, bottom)], colour="#000000", width=0.8)
    for v in _nice_ticks(hi, right - left, _FONT - 0.5):
        c.line([(ax.x(v), bottom), (ax.x(v), bottom + tick)], colour="#000000", width=0.8)
        c.text(
            ax.x(v),
            bottom + tick + pad,
            "0" if v == 0 else fmt.seconds(v),
            size=_FONT - 0.5,
            anchor="ma",
        )
    c.text(
        (left + right) / 2,
        bottom + tick + pad + (_FONT - 0.5) * PT * 1.2 + 4 * PT,
        "self CPU time",
        size=_FONT,
        anchor="ma",
    )
    c.text(
        0.02 * c.width,
        0.10 * DPI,
        "Top ops by self CPU time (no GPU work recorded: no roofline)",
        size=_FONT + 1.5,
        anchor="la",
    )
    return c


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
    "cpu_ops_canvas",
    "draw_pixels",
    "new_figure",
    "pictures",
    "png_bytes",
    "png_size",
    "preload",
    "roofline_canvas",
    "split_canvas",
]
