"""Number and text formatting shared by all the views (text, static HTML, pictures, bokeh)."""

from __future__ import annotations

import math
from typing import Any


def number(value: Any) -> float | None:
    """A report value as a float; None where it is missing, not a number, or NaN."""
    if value is None:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(result) else result


def short(text: Any, limit: int) -> str:
    """Text cut to ``limit`` characters with an ellipsis; None as ""."""
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def si(value: float, _pos: Any = None) -> str:
    """An axis tick with an SI prefix: 1e12 -> "1T" (a matplotlib formatter's signature)."""
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:g}{prefix}"
    return f"{value:g}"


def seconds(value: float | None) -> str:
    """1.23 s, 4.56 ms, 7.8 us."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"


def rate(value: float | None, unit: str) -> str:
    """A per-second figure with an SI prefix: 787 TFLOP/s, 4.24 TB/s."""
    if value is None or (isinstance(value, float) and (math.isnan(value) or value <= 0)):
        return "-"
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def size(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    for prefix, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.0f} B"


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def runs(runs: dict) -> str:
    """How many times the code ran, in words."""
    total = runs.get("total", 1)
    parts = []
    if runs.get("warmup"):
        parts.append(f"{runs['warmup']} warm-up")
    if runs.get("timed"):
        parts.append(f"{runs['timed']} timed")
    if runs.get("profiled"):
        parts.append(f"{runs['profiled']} profiled")
    times = "once" if total == 1 else f"{total} times"
    return f"ran {times}" + (f" ({', '.join(parts)})" if len(parts) > 1 else "")


def span_source(summary: dict) -> str:
    """Where the span per run comes from, in words (``summary["span_source"]``, as capture
    writes it: ``cuda_events_unprofiled``, ``host_clock_profiled``, ...; ``trace`` for a file)."""
    source = str(summary.get("span_source") or "trace")
    if source == "trace":
        return "from the trace"
    clock = "CUDA events" if source.startswith("cuda_events") else "the host clock"
    if source.endswith("_profiled"):
        return f"the profiled run, timed with {clock}"
    timed = (summary.get("runs") or {}).get("timed", 0)
    return f"median of {timed} unprofiled runs timed with {clock}"
