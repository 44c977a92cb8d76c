"""What the renderers draw, computed once: number formatting, the roofline's geometry and the
dtype whose peak the overview quotes.

The report JSON carries the specs under ``"display"`` (schema version 2 on), so the browser app
(``js/src``: JupyterLab, Notebook 7, the standalone HTML file) only draws them; the PNG pictures
(``views/pictures.py``) draw the same geometry. The formatting rules here and in
``js/src/format.ts`` are one definition in two languages, held together by the cases in
``tests/data/display_cases.json``, which both test suites (pytest and vitest) check.

- **Numbers**: 3 significant digits without trailing zeros (``45.9``, ``4.8``, ``70``), written
  out between 0.001 and 1e6 and in exponent form outside (``1.23e+6``); rounding half away
  from zero on the exact binary value, as JavaScript's ``toFixed`` and ``toExponential`` do; a
  missing value is an em dash.
- **Times**: s, ms, µs or ns, the largest unit that keeps the number at 1 or more.
- **Quantities**: SI prefixes k to E (``787 TFLOP/s``); bytes in decimal units (``1.69 GB``).
- **Main dtype**: the roof (float32 on TF32 tensor cores counts as tf32) with the most modelled
  FLOPs among the ops with GPU time whose roof has a peak; the first such roof among the ops on
  a tie.
- **Roofline**: one point per op row with FLOPs, bytes and GPU time at (FLOPs / bytes, FLOPs /
  GPU time); the compute ceilings, one per distinct peak with the dtypes that share it; the
  bandwidth slope up to the highest ridge; axes from a quarter of the smallest to 6x (x) and 4x
  (y) the largest of the points and ridges, the y axis at most 7 decades deep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

DASH = "\u2014"
_SI = (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
ROOF_DECADES = 7  # the roofline's y axis shows this many decades below its top


def finite(x: Any) -> float | None:
    """A finite float, or None."""
    if x is None or isinstance(x, bool):
        return None
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _fixed(x: float, decimals: int) -> str:
    """JavaScript's ``x.toFixed(decimals)``: ties away from zero on the exact binary value."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def _exponential(x: float, decimals: int) -> str:
    """JavaScript's ``x.toExponential(decimals)``: ``1.23e+6``, ``-4.56e-7``."""
    exact = Decimal(x)
    sign = "-" if exact < 0 else ""
    exact = abs(exact)
    exponent = exact.adjusted()
    mantissa = (exact.scaleb(-exponent)).quantize(
        Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP
    )
    if mantissa >= 10:  # 9.995 -> 10.0: one more decade
        exponent += 1
        mantissa = (exact.scaleb(-exponent)).quantize(
            Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP
        )
    return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def sig(x: Any, digits: int = 3) -> str:
    """A number to ``digits`` significant digits, without trailing zeros (format.ts ``sig``)."""
    value = finite(x)
    if value is None:
        return DASH
    if value == 0:
        return "0"
    a = abs(value)
    if a >= 1e6 or a < 1e-3:
        mantissa, exponent = _exponential(value, digits - 1).split("e")
        return f"{_trim(mantissa)}e{exponent}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    return _trim(_fixed(value, min(decimals, 6)))


def _trim(text: str) -> str:
    """ "4.80" -> "4.8", "100.0" -> "100", "1.00" -> "1"."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def seconds(x: Any) -> str:
    """A duration: ``45.9 ms``, ``67.7 µs`` (format.ts ``fmtTime``)."""
    value = finite(x)
    if value is None:
        return DASH
    a = abs(value)
    if a == 0:
        return "0 s"
    if a >= 1:
        return f"{sig(value)} s"
    if a >= 1e-3:
        return f"{sig(value * 1e3)} ms"
    if a >= 1e-6:
        return f"{sig(value * 1e6)} \u00b5s"
    return f"{sig(value * 1e9)} ns"


def quantity(x: Any, unit: str) -> str:
    """A quantity with an SI prefix: ``787 TFLOP/s`` (format.ts ``fmtSI``)."""
    value = finite(x)
    if value is None:
        return DASH
    a = abs(value)
    for prefix, scale in _SI:
        if a >= scale:
            return f"{sig(value / scale)} {prefix}{unit}"
    return f"{sig(value)} {unit}"


def rate(x: Any, unit: str) -> str:
    """A per-second figure with an SI prefix, ``787 TFLOP/s``; a dash where there is none
    (missing, or not above zero)."""
    value = finite(x)
    return DASH if value is None or value <= 0 else quantity(value, unit)


def percent(part: float, whole: float) -> str:
    """``part`` as a whole percentage of ``whole``: ``27%``; a dash where ``whole`` is not above
    zero."""
    return f"{100 * part / whole:.0f}%" if whole > 0 else DASH


def nbytes(x: Any) -> str:
    """Bytes in decimal units: ``1.69 GB``, ``512 B`` (format.ts ``fmtBytes``)."""
    value = finite(x)
    if value is None:
        return DASH
    units = ("B", "kB", "MB", "GB", "TB")
    i = 0
    while abs(value) >= 1000 and i < len(units) - 1:
        value /= 1000
        i += 1
    if i == 0:
        return f"{_round_half_up(value)} B"
    return f"{sig(value)} {units[i]}"


def _round_half_up(value: float) -> int:
    """JavaScript's ``Math.round`` (halves up, towards +infinity)."""
    return math.floor(value + 0.5)


# --- the specs -----------------------------------------------------------------------------------


def _roofs(ops: pd.DataFrame) -> np.ndarray:
    """Each op row's roof: the dtype it was held against (its dtype in older reports)."""
    roof = ops["roof"] if "roof" in ops else pd.Series([None] * len(ops), index=ops.index)
    dtype = ops["dtype"] if "dtype" in ops else pd.Series([None] * len(ops), index=ops.index)
    roof = roof.where(roof.notna() & (roof.astype(str) != ""), dtype)
    return roof.fillna("").astype(str).to_numpy()


def _column(ops: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as floats, 0 where missing (all 0 where the table has no such column)."""
    if name not in ops:
        return np.zeros(len(ops))
    return pd.to_numeric(ops[name], errors="coerce").fillna(0).to_numpy(float)


def placed_ops(ops: pd.DataFrame) -> np.ndarray:
    """The op rows a roofline can place: FLOPs, bytes and GPU time all known and positive, and
    the point they make finite (a damaged document's 1e-320 s would put it at infinity)."""
    flops, nbytes, time_s = (_column(ops, c) for c in ("flops", "bytes", "gpu_time_s"))
    known = (flops > 0) & (nbytes > 0) & (time_s > 0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        finite = np.isfinite(flops / np.where(known, nbytes, 1.0)) & np.isfinite(
            flops / np.where(known, time_s, 1.0)
        )
    return known & finite


def main_dtype(ops: pd.DataFrame, peaks: dict | None) -> str | None:
    """The roof of most of the modelled GPU FLOPs among the roofs with a peak (module docstring)."""
    flops_peaks = (peaks or {}).get("flops") or {}
    if not len(ops) or not flops_peaks:
        return None
    flops, seconds_ = _column(ops, "flops"), _column(ops, "gpu_time_s")
    totals: dict[str, float] = {}  # in the order the roofs first appear among the ops
    for roof, f, t in zip(_roofs(ops), flops, seconds_, strict=True):
        if roof and roof in flops_peaks and f > 0 and t > 0:
            totals[roof] = totals.get(roof, 0.0) + f
    if not totals:
        return None
    best = max(totals.values())
    return next(roof for roof, total in totals.items() if total == best)


def ceilings(peaks: dict | None) -> list[tuple[float, list[str]]]:
    """Compute ceilings, highest first: (peak FLOP/s, the dtypes with that peak)."""
    groups: dict[float, list[str]] = {}
    for dtype, value in sorted(
        ((str(d), finite(v)) for d, v in ((peaks or {}).get("flops") or {}).items()),
        key=lambda item: -(item[1] or 0.0),
    ):
        if value is not None and value > 0:
            groups.setdefault(value, []).append(dtype)
    # The dtypes of a ceiling in name order: a report's peaks may list them in any order (a
    # measured table and a reloaded one differ), and the label must not depend on it.
    return [(peak, sorted(dtypes)) for peak, dtypes in groups.items()]


def roofline(ops: pd.DataFrame, peaks: dict | None) -> dict:
    """The roofline's geometry (module docstring); with no op row to place, the ceilings'."""
    placed = placed_ops(ops)
    flops = _column(ops, "flops")[placed]
    x = flops / _column(ops, "bytes")[placed]
    y = flops / _column(ops, "gpu_time_s")[placed]
    bw = finite((peaks or {}).get("bandwidth"))
    bw = bw if bw is not None and bw > 0 else None
    groups = ceilings(peaks)
    xs = [*x, *(peak / bw for peak, _ in groups if bw)]
    ys = [*y, *(peak for peak, _ in groups)]
    xmin, xmax = (min(xs) / 4, max(xs) * 6) if xs else (0.01, 1e4)
    ymax = max(ys) * 4 if ys else 1e15
    ymin = min(ys) / 4 if ys else ymax / 1e6
    if bw:
        ymin = min(ymin, bw * xmin * 2)
    # Points far below the rest (a scalar op at kFLOP/s) must not squash the plot.
    ymin = max(ymin, ymax / 10**ROOF_DECADES / 1.5)
    used_roofs = set(_roofs(ops)[placed])
    used = [bool(used_roofs & set(dtypes)) for _, dtypes in groups]
    if groups and not any(used):
        used[0] = True  # none of the ops' roofs has a peak: the highest stands for them
    return {
        "x_range": [xmin, xmax],
        "y_range": [ymin, ymax],
        "bandwidth": (
            {
                "bytes_per_s": bw,
                "x": [xmin, groups[0][0] / bw],
                "y": [bw * xmin, groups[0][0]],
                "label": f"memory {quantity(bw, 'B/s')}",
            }
            if bw and groups
            else None
        ),
        "ceilings": [
            {
                "flops_per_s": peak,
                "dtypes": dtypes,
                "ridge": peak / bw if bw else None,
                "x": [peak / bw if bw else xmin, xmax],
                "label": f"{', '.join(dtypes)} {quantity(peak, 'FLOP/s')}"
                + (f" (ridge {sig(peak / bw)} FLOP/B)" if bw else ""),
                "used": is_used,
            }
            for (peak, dtypes), is_used in zip(groups, used, strict=True)
        ],
    }


def specs(ops: pd.DataFrame, summary: Mapping[str, Any]) -> dict:
    """The report JSON's ``"display"``: what the renderers draw."""
    peaks = summary.get("peaks") or None
    gpu = bool(summary.get("gpu", True))
    return {
        "main_dtype": main_dtype(ops, peaks) if gpu else None,
        "roofline": roofline(ops, peaks) if gpu and placed_ops(ops).any() else None,
    }
