"""A small drawing surface for the report's static pictures: Pillow's ImageDraw with the DejaVu Sans
font that matplotlib ships, sized in points at the pictures' 100 dpi as matplotlib sizes them.

Why not matplotlib: its text layout, glyph rendering and artist tree cost 80-110 ms per report
(issue 26), most of a ``%%brrr`` cell's display, for pictures of a few bars, lines, dots and
about thirty labels. Here the same picture takes a few milliseconds. Everything is drawn at
``SCALE`` times the size and reduced (a box filter), which antialiases lines and dots; the
texts are FreeType's antialiased glyphs at the picture's size, drawn on top. Each text drawn is recorded with its box (``Canvas.texts``), so tests can read what a
picture says and check that it lies inside the picture.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DPI = 100
PT = DPI / 72  # pixels per point
SCALE = 2  # drawn at twice the size, then reduced: antialiasing

_FONT_FILES = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}


@functools.cache
def font_folder() -> Path | None:
    """Where matplotlib keeps its DejaVu fonts (found without importing matplotlib), or None."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf"
    return folder if all((folder / name).is_file() for name in _FONT_FILES.values()) else None


@functools.cache
def _font(size_pt: float, bold: bool) -> Any:
    from PIL import ImageFont

    folder = font_folder()
    if folder is None:
        raise RuntimeError("matplotlib's DejaVu Sans fonts are not installed")
    # The basic layout: left-to-right text (op names, numbers), and no dependency on libraqm.
    return ImageFont.truetype(
        str(folder / _FONT_FILES[bold]),
        size_pt * PT,
        layout_engine=ImageFont.Layout.BASIC,
    )


@functools.lru_cache(maxsize=2048)
def _text_mask(
    text: str, size: float, bold: bool, anchor: str, angle: float
) -> tuple[Any, tuple[int, int]]:
    """A text's coverage (an "L" image) and where its top left lies from the anchor point;
    cached, as tick labels, titles and op names repeat from one report to the next."""
    from PIL import Image, ImageDraw

    font = _font(size, bold)
    if not angle:
        left, top, right, bottom = font.getbbox(text, anchor=anchor)
        mask = Image.new("L", (max(right - left, 1), max(bottom - top, 1)), 0)
        ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font, anchor=anchor)
        return mask, (left, top)
    # Drawn with the anchor at the centre of a square, turned about the centre, cut to the ink.
    half = math.ceil(font.getlength(text) + size * PT) + 2
    mask = Image.new("L", (2 * half, 2 * half), 0)
    ImageDraw.Draw(mask).text((half, half), text, fill=255, font=font, anchor=anchor)
    mask = mask.rotate(angle, resample=Image.Resampling.BICUBIC)
    box = mask.getbbox() or (half, half, half + 1, half + 1)
    return mask.crop(box), (box[0] - half, box[1] - half)


@functools.cache
def rgba(colour: str, alpha: float = 1.0) -> tuple[int, int, int, int]:
    """'#4c78c8' (or a named colour) with an opacity, as Pillow's RGBA tuple."""
    from PIL import ImageColor

    r, g, b = ImageColor.getrgb(colour)[:3]
    return r, g, b, round(255 * alpha)


@dataclass(frozen=True)
class Axes:
    """A plot area of a canvas: its box in pixels (left, top, right, bottom) and the data ranges
    its edges stand for, on linear or log scales."""

    box: tuple[float, float, float, float]
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    log: bool = False

    def _share(self, value: float, lo: float, hi: float) -> float:
        if self.log:
            return (math.log10(value) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return (value - lo) / (hi - lo)

    def x(self, value: float) -> float:
        """The pixel column of ``value`` on the x axis."""
        left, _, right, _ = self.box
        return left + self._share(value, *self.x_range) * (right - left)

    def y(self, value: float) -> float:
        """The pixel row of ``value`` on the y axis (up is larger)."""
        _, top, _, bottom = self.box
        return bottom - self._share(value, *self.y_range) * (bottom - top)


@dataclass(frozen=True)
class TextBox:
    """A text drawn on a canvas and the box it covers, in the picture's pixels."""

    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom


class Canvas:
    """A white picture ``width`` x ``height`` pixels. Coordinates are the picture's pixels (x to
    the right, y down, floats); sizes are points and line widths points, as in matplotlib."""

    def __init__(self, width: int, height: int) -> None:
        from PIL import Image, ImageDraw

        self.width, self.height = width, height
        self._image = Image.new("RGB", (width * SCALE, height * SCALE), "white")
        self._draw = ImageDraw.Draw(self._image, "RGBA")  # RGBA: fills blend by their alpha
        self.texts: list[TextBox] = []
        self._texts: list[tuple[tuple[int, int], Any, tuple[int, int, int, int]]] = []
        self.axes: list[Axes] = []  # the plot areas drawn, for tests

    # --- text ------------------------------------------------------------------------------------

    def text_width(self, text: str, size: float, bold: bool = False) -> float:
        """How wide ``text`` is at ``size`` points, in pixels."""
        return _font(size, bold).getlength(text)

    def fit(self, text: str, size: float, width: float) -> str:
        """``text``, cut with an ellipsis until it is at most ``width`` pixels wide."""
        if self.text_width(text, size) <= width:
            return text
        while len(text) > 1 and self.text_width(text + "…", size) > width:
            text = text[:-1]
        return text.rstrip() + "…"

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float,
        colour: str = "#000000",
        anchor: str = "ls",
        bold: bool = False,
        angle: float = 0.0,
    ) -> TextBox:
        """``text`` with its ``anchor`` (Pillow's: ``l``/``m``/``r`` then ``a`` top, ``m``
        middle, ``s`` baseline, ``d`` bottom) at (x, y), turned ``angle`` degrees
        anticlockwise about that point. Texts lie above every shape (they are drawn last, at
        the picture's own size: hinted glyphs, and a quarter of the pixels to render)."""
        mask, (dx, dy) = _text_mask(text, size, bold, anchor, round(angle, 2))
        left, top = round(x) + dx, round(y) + dy
        self._texts.append(((left, top), mask, rgba(colour)))
        drawn = TextBox(text, (left, top, left + mask.width, top + mask.height))
        self.texts.append(drawn)
        return drawn

    # --- shapes ----------------------------------------------------------------------------------

    def line(
        self,
        points: list[tuple[float, float]],
        *,
        colour: str,
        width: float,
        alpha: float = 1.0,
        dash: tuple[float, float] | None = None,
    ) -> None:
        """A polyline ``width`` points wide; ``dash``: (on, off) lengths in points."""
        fill, px = rgba(colour, alpha), max(1, round(width * PT * SCALE))
        scaled = [(x * SCALE, y * SCALE) for x, y in points]
        if dash is None:
            self._draw.line(scaled, fill=fill, width=px, joint="curve")
            return
        on, off = (d * PT * SCALE for d in dash)
        for (x0, y0), (x1, y1) in itertools.pairwise(scaled):
            length = math.hypot(x1 - x0, y1 - y0)
            at = 0.0
            while at < length:
                end = min(at + on, length)
                self._draw.line(
                    [
                        (x0 + (x1 - x0) * at / length, y0 + (y1 - y0) * at / length),
                        (x0 + (x1 - x0) * end / length, y0 + (y1 - y0) * end / length),
                    ],
                    fill=fill,
                    width=px,
                )
                at = end + off

    def rectangle(
        self,
        box: tuple[float, float, float, float],
        *,
        fill: str | None = None,
        alpha: float = 1.0,
        outline: str | None = None,
        width: float = 0.8,
        radius: float = 0.0,
    ) -> None:
        """A rectangle (left, top, right, bottom), filled and/or outlined ``width`` points, its
        corners rounded ``radius`` points."""
        left, top, right, bottom = (v * SCALE for v in box)
        self._draw.rounded_rectangle(
            (left, top, max(left, right - 1), max(top, bottom - 1)),
            radius=radius * PT * SCALE,
            fill=rgba(fill, alpha) if fill else None,
            outline=rgba(outline) if outline else None,
            width=max(1, round(width * PT * SCALE)) if outline else 0,
        )

    def marker(
        self,
        x: float,
        y: float,
        *,
        shape: str,
        size: float,
        fill: str | None,
        edge: str | None = None,
        edge_width: float = 0.8,
        alpha: float = 1.0,
    ) -> None:
        """A matplotlib marker ``size`` points across at (x, y): ``o`` a circle, ``v`` a
        triangle pointing down, ``D`` a diamond; ``fill`` None for a hollow one."""
        r = size * PT * SCALE / 2
        cx, cy = x * SCALE, y * SCALE
        fill_rgba = rgba(fill, alpha) if fill else None
        edge_rgba = rgba(edge, alpha) if edge else None
        px = max(1, round(edge_width * PT * SCALE)) if edge else 0
        if shape == "o":
            self._draw.ellipse(
                (cx - r, cy - r, cx + r, cy + r), fill=fill_rgba, outline=edge_rgba, width=px
            )
            return
        if shape == "v":
            corners = [(cx - r, cy - r), (cx + r, cy - r), (cx, cy + r)]
        elif shape == "D":
            d = r * math.sqrt(2)  # matplotlib's diamond: the unit square turned 45 degrees
            corners = [(cx, cy - d), (cx + d, cy), (cx, cy + d), (cx - d, cy)]
        else:
            raise ValueError(f"no marker {shape!r}")
        self._draw.polygon(corners, fill=fill_rgba, outline=edge_rgba, width=px)

    # --- out -------------------------------------------------------------------------------------

    def pixels(self) -> np.ndarray:
        """The picture as RGB pixels (height x width x 3): the shapes reduced to its size, the
        texts on them."""
        from PIL import ImageDraw

        image = self._image.reduce(SCALE)
        draw = ImageDraw.Draw(image, "RGBA")
        for origin, mask, colour in self._texts:
            draw.bitmap(origin, mask, fill=colour)
        return np.asarray(image)


__all__ = ["DPI", "PT", "SCALE", "Axes", "Canvas", "TextBox", "font_folder", "rgba"]
