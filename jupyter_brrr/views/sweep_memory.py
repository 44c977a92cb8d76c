"""Static views of a size sweep and a memory breakdown (the report's ``sweep`` and ``memory``):
text lines, HTML sections with tables, and PNG pictures drawn from the JSON's own geometry (the
sweep's guides, the memory timeline), as the JupyterLab renderer draws them.

Sweep picture: time per step against size on log-log axes with the flat (overhead) and slope-1
(saturated) guides through the first point; throughput against size; the split per size as
stacked bars. Memory picture: the timeline by category, stacked, against the capacity.
"""

from __future__ import annotations

from typing import Any

from ..actions.sweep import KNEE_SHARE, guides
from ..schema.report import SPLIT_PARTS
from . import format as fmt
from .markup import escaped as _e
from .markup import img as _img
from .markup import section as _section
from .markup import table as _table
from .style import COLOURS, LABELS

MEMORY_COLOURS = {
    "parameters": "#4c78c8",
    "gradients": "#72b7b2",
    "optimizer_state": "#54a24b",
    "activations": "#e8833a",
    "temporaries": "#f2cf5b",
    "inputs": "#b279a2",
    "autograd_detail": "#ff9da6",
    "unknown": "#9d755d",
    "held_before": "#bab0ac",
}

__all__ = ["memory_html", "memory_lines", "memory_png", "sweep_html", "sweep_lines", "sweep_png"]


def rows(table: dict | None) -> list[dict]:
    if not table:
        return []
    return [dict(zip(table["columns"], row, strict=False)) for row in table["data"]]


# --- the sweep -------------------------------------------------------------------------------


def sweep_lines(doc: dict) -> list[str]:
    """The sweep's findings in words, from its JSON form."""
    var = doc.get("variable") or "size"
    points = rows(doc.get("points"))
    ok = [p for p in points if p.get("status") == "ok"]
    lines = [
        f"Sweep of {var} on {doc.get('device')}: {len(ok)} size{'s' if len(ok) != 1 else ''} "
        f"measured in {doc.get('elapsed_s') or 0:.1f} s ({doc.get('runs_total') or 0:,} runs)"
        + {
            "oom": f", stopped by OOM at {var}={doc.get('oom_at')}",
            "budget": ", stopped at the time budget",
            "cancelled": ", cancelled",
            "error": ", stopped by an error",
        }.get(doc.get("stopped") or "", "")
        + "."
    ]
    for d in rows(doc.get("doublings")):
        lines.append(f"{var} {d['from_size']} -> {d['to_size']}: {d['verdict']}: {d['why']}.")
    if doc.get("knee") is not None:
        best = next((p for p in ok if p["size"] == doc.get("best")), None)
        rate = f" ({best['items_per_s']:.4g} items/s)" if best and best.get("items_per_s") else ""
        lines.append(
            f"Knee at {var}={doc['knee']}: throughput within {KNEE_SHARE:.0%} of the best; "
            f"best measured {var}={doc.get('best')}{rate}."
        )
    fit = doc.get("fit")
    if fit:
        lines.append(
            f"Peak memory ~ {fmt.size(fit['fixed_bytes'])} + {fmt.size(fit['per_item_bytes'])} "
            f"per {var} ({fit['kind']} fit, within {fit['max_miss']:.1%} of the measured peaks)."
        )
        for row in rows(doc.get("capacity")):
            if row.get("this_gpu") and row.get("largest_size") is not None:
                lines.append(
                    f"Largest {var} that fits this GPU ({fmt.size(row['capacity_bytes'])} "
                    f"{fmt.REACHABLE_MEMORY}): about {row['largest_size']:,}."
                )
    confirmation = doc.get("confirmation")
    if confirmation:
        size = confirmation["size"]
        if confirmation.get("fits"):
            lines.append(
                f"Confirmed: {var}={size} fits (peak {fmt.size(confirmation.get('peak_bytes'))}, "
                f"predicted {fmt.size(confirmation.get('predicted_peak_bytes'))})."
            )
        else:
            lines.append(f"Not confirmed: {var}={size} ran out of memory.")
    lines.extend(doc.get("notes") or [])
    return lines


def capacity_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The sweep's capacity table with each row's memory labelled by what it is: this GPU's is
    what this process can reach (the fit's limit here), the others' their datasheet figure. The
    datasheet row of this GPU's own model is left out: beside the memory it really has, a second
    figure for the same board reads as a contradiction."""
    table = list(rows(doc.get("capacity")))
    here = {str(r["device"]).removesuffix(" (this GPU)") for r in table if r.get("this_gpu")}
    return [
        {
            **r,
            "memory": f"{fmt.size(r['capacity_bytes'])} "
            + (fmt.REACHABLE_MEMORY if r.get("this_gpu") else fmt.NOMINAL_MEMORY),
        }
        for r in table
        if r.get("this_gpu") or r["device"] not in here
    ]


def sweep_html(doc: dict) -> str:
    var = _e(doc.get("variable") or "size")
    points = rows(doc.get("points"))
    head = [var, "status", "time per step", "items/s", "compute", "memory", "idle", "peak memory"]
    body: list[list[str] | str] = []
    for p in points:
        span = p.get("span_s")
        body.append(
            [
                _e(p.get("size")),
                _e(p.get("status")),
                _e(fmt.seconds(span)),
                _e(f"{p['items_per_s']:.4g}" if p.get("items_per_s") else "-"),
                *(
                    _e(fmt.percent(p.get(f"{part}_s") or 0.0, span) if span else "-")
                    for part in ("compute", "memory", "idle")
                ),
                _e(fmt.size(p.get("peak_memory_bytes")) if p.get("peak_memory_bytes") else "-"),
            ]
        )
        if p.get("error"):
            body.append(f'<span style="color:#c62828;font-size:11px">{_e(p["error"])}</span>')
    doublings = [
        [
            _e(f"{d['from_size']} → {d['to_size']}"),
            _e(f"x{d['per_doubling']:.2f}"),
            f"<b>{_e(d['verdict'])}</b>",
            _e(d["why"]),
        ]
        for d in rows(doc.get("doublings"))
    ]
    parts = [_section(f"Sweep of {var}"), _table(head, body, right={0, 2, 3, 4, 5, 6, 7})]
    if doublings:
        parts.append(
            _table([var, "time per doubling", "verdict", "why"], doublings, right={0, 1})  # type: ignore[arg-type]
        )
    capacity = [
        [_e(c["device"]), _e(c["memory"]), _e(_count(c.get("largest_size")))]
        for c in capacity_rows(doc)
    ]
    if capacity:
        parts.append(
            _table(["GPU", "memory", f"largest {var} that fits"], capacity, right={1, 2})  # type: ignore[arg-type]
        )
    lines = sweep_lines(doc)[1:]
    lines = [line for line in lines if " -> " not in line]  # the doublings are in their table
    parts.append(
        '<ul style="margin:2px 0;padding-left:20px;font-size:12px">'
        + "".join(f"<li>{_e(line)}</li>" for line in lines)
        + "</ul>"
    )
    parts.append(_img(_safe_png(sweep_png, doc), f"time per step against {var}, log-log"))
    return "".join(parts)


def _count(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"


def split_shares(points: list[dict]) -> dict[str, list[float]]:
    """Each point's split as shares of the step it was measured in: the parts come from the
    profiled run (slower or faster than the timed median, ``span_s``), so they are shares of
    their own sum, and each bar adds up to 100%."""
    totals = [sum(p.get(f"{part}_s") or 0.0 for part in SPLIT_PARTS) for p in points]
    return {
        part: [
            (p.get(f"{part}_s") or 0.0) / total if total > 0 else 0.0
            for p, total in zip(points, totals, strict=True)
        ]
        for part in SPLIT_PARTS
    }


def sweep_png(doc: dict) -> bytes | None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, PercentFormatter

    from .pictures import WIDTH_IN, draw_pixels, new_figure, png_bytes

    points = [p for p in rows(doc.get("points")) if p.get("status") == "ok" and p.get("span_s")]
    if len(points) < 2:
        return None
    var = doc.get("variable") or "size"
    fig = new_figure(2.6)
    fig.set_size_inches(WIDTH_IN, 2.6)
    sizes = [p["size"] for p in points]
    spans = [p["span_s"] for p in points]
    ax = fig.add_subplot(1, 3, 1)
    guide = doc.get("guides") or guides(points)
    if guide:
        ax.plot(*zip(*guide["flat"], strict=True), ls="--", c="#d65f5f", lw=1, label="flat")
        ax.plot(*zip(*guide["linear"], strict=True), ls="--", c="#4c78c8", lw=1, label="slope 1")
    ax.plot(sizes, spans, "o-", c="#333", ms=3, lw=1.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # Times in their units at 1, 2 and 5 of each decade: a sweep's steps often span less than a
    # decade, where decade ticks alone would name one time, and matplotlib's minor labels
    # (4x10^-3, 3x10^-3 ...) overlap.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt.seconds(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title("time per step", fontsize=8)
    ax.set_xlabel(var, fontsize=8)
    ax.legend(fontsize=6, frameon=False)
    ax2 = fig.add_subplot(1, 3, 2)
    ax2.plot(sizes, [p.get("items_per_s") or 0 for p in points], "o-", c="#54a24b", ms=3)
    ax2.set_xscale("log", base=2)
    ax2.set_title("items per second", fontsize=8)
    ax2.set_xlabel(var, fontsize=8)
    ax3 = fig.add_subplot(1, 3, 3)
    bottom = [0.0] * len(points)
    labels = [str(s) for s in sizes]
    for part, shares in split_shares(points).items():
        ax3.bar(labels, shares, bottom=bottom, color=COLOURS[part], label=LABELS[part])
        bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
    ax3.set_title("split of the profiled step", fontsize=8)
    ax3.set_xlabel(var, fontsize=8)
    ax3.set_ylim(0, 1)
    ax3.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("seconds per step", fontsize=7)
    ax2.set_ylabel("items/s", fontsize=7)
    for axis in (ax, ax2, ax3):
        axis.tick_params(labelsize=6)
    ax3.tick_params(axis="x", labelrotation=90)
    fig.tight_layout()
    return png_bytes(draw_pixels(fig))  # pyright: ignore[reportArgumentType]  # the figure was drawn: draw_pixels returns pixels


# --- memory ---------------------------------------------------------------------------------


def memory_lines(doc: dict) -> list[str]:
    """The breakdown in words, from its JSON form."""
    peak = doc.get("peak_bytes") or 0.0
    parts = doc.get("at_peak") or {}
    shown = ", ".join(
        f"{name.replace('_', ' ')} {fmt.size(value)} ({value / peak:.0%})"
        for name, value in sorted(parts.items(), key=lambda kv: -kv[1])
        if value > 0 and peak > 0
    )
    lines = [
        f"Peak memory on {doc.get('device')}: {fmt.size(peak)} at "
        f"{(fmt.number(doc.get('peak_time_s')) or 0.0) * 1e3:.3g} ms"
        + (
            f" of {fmt.size(doc['capacity_bytes'])} {fmt.REACHABLE_MEMORY}"
            if doc.get("capacity_bytes")
            else ""
        )
        + f": {shown}; unattributed {fmt.size(doc.get('unattributed_bytes') or 0.0)}."
    ]
    table = doc.get("largest") or {"columns": [], "data": []}
    for row in table["data"][:5]:
        r = dict(zip(table["columns"], row, strict=False))
        where = f" at {r['line']}" if r.get("line") else ""
        made = f"made by {r['op']}{where}" if r.get("op") else "there before the run"
        category = str(r.get("category") or "").replace("_", " ")
        lines.append(f"  {fmt.size(fmt.number(r.get('bytes')))} {category} {made}")
    lines.extend(doc.get("advice") or [])
    lines.extend(doc.get("notes") or [])
    return lines


def memory_html(doc: dict) -> str:
    peak = doc.get("peak_bytes") or 0.0
    parts_rows = [
        [_e(name.replace("_", " ")), _e(fmt.size(value)), _e(fmt.percent(value, peak))]
        for name, value in sorted((doc.get("at_peak") or {}).items(), key=lambda kv: -kv[1])
        if value
    ]
    parts_rows.append(
        [
            "unattributed",
            _e(fmt.size(doc.get("unattributed_bytes") or 0.0)),
            _e(fmt.percent(doc.get("unattributed_bytes") or 0.0, peak)),
        ]
    )
    largest = [
        [
            _e(fmt.size(fmt.number(r.get("bytes")))),
            _e((r.get("category") or "").replace("_", " ")),
            _e(r.get("op") or "there before the run"),
            _e(r.get("line") or ""),
        ]
        for r in rows(doc.get("largest"))
    ]
    lines = memory_lines(doc)
    out = [
        _section("What holds the peak memory"),
        f"<div>{_e(lines[0])}</div>",
        _table(["category", "at the peak", "share"], parts_rows, right={1, 2}),  # type: ignore[arg-type]
    ]
    if largest:
        out.append(_table(["size", "category", "made by", "line"], largest, right={0}))  # type: ignore[arg-type]
    advice = list(doc.get("advice") or [])
    if advice:  # capacity, apart from speed
        out.append(
            '<ul style="margin:2px 0;padding-left:20px;font-size:12px">'
            + "".join(f"<li>{_e(line)}</li>" for line in advice)
            + "</ul>"
        )
    out.append(_img(_safe_png(memory_png, doc), "memory timeline by category"))
    return "".join(out)


def memory_png(doc: dict) -> bytes | None:
    from .pictures import WIDTH_IN, draw_pixels, new_figure, png_bytes

    timeline = doc.get("timeline") or {}
    times = timeline.get("times_s") or []
    if len(times) < 2:
        return None
    fig = new_figure(2.4)
    fig.set_size_inches(WIDTH_IN, 2.4)
    ax = fig.add_subplot(1, 1, 1)
    capacity = doc.get("capacity_bytes")
    # The capacity line only where it does not flatten the timeline (a peak of a quarter or more).
    shown = capacity if capacity and (doc.get("peak_bytes") or 0.0) >= 0.25 * capacity else None
    peak = max(doc.get("peak_bytes") or 0.0, shown or 0.0)
    gib, unit = (2**30, "GiB") if peak >= 2**30 else (2**20, "MiB")
    series = [[v / gib for v in values] for values in timeline["bytes"]]
    names = timeline["categories"]
    ms = [t * 1e3 for t in times]
    ax.stackplot(
        ms,
        *series,
        labels=[n.replace("_", " ") for n in names],
        colors=[MEMORY_COLOURS.get(n, "#999") for n in names],
        step="post",
    )
    if timeline.get("allocated"):
        ax.step(
            ms,
            [v / gib for v in timeline["allocated"]],
            where="post",
            c="#000",
            lw=0.8,
            label="allocator",
        )
    if shown:
        ax.axhline(shown / gib, c="#c62828", ls="--", lw=1, label="capacity")
    elif capacity:
        ax.set_title(f"capacity {fmt.size(capacity)}: far above this peak", fontsize=8)
    ax.set_xlabel("ms from the run's start", fontsize=8)
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=6)
    ax.legend(fontsize=6, frameon=False, loc="upper left", ncol=3)
    fig.tight_layout()
    return png_bytes(draw_pixels(fig))  # pyright: ignore[reportArgumentType]  # the figure was drawn: draw_pixels returns pixels


def _safe_png(draw: Any, doc: dict) -> bytes | None:
    """A picture where matplotlib is installed and the document can be drawn."""
    from .pictures import available

    if not available():
        return None
    try:
        return draw(doc)
    except Exception:  # a picture is a convenience: the tables carry the figures
        return None
