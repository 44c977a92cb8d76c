"""Deprecated: bokeh figures of a report (``report.figure(kind)``, which warns).

The interactive report is drawn by one app, the TypeScript renderer in ``js/src`` (JupyterLab,
Notebook 7, and the standalone HTML file of ``views/standalone.py``); these figures are kept
for the users of ``report.figure()`` until it is removed.

``figure(report, kind)`` returns a bokeh model that a user can restyle (``report.figure(...)``):

- ``"split"``: the span split (compute / memory / other / idle) as one stacked bar; for a report
  without GPU work, self CPU time by op category.
- ``"ops"``: the top ops by time as bars coloured by bound, time by category, and a sortable
  table of all ops.
- ``"roofline"``: log-log, the bandwidth ceiling and compute ceilings per dtype with their ridge
  points, one point per op row sized by time and coloured by bound; hover shows name, shapes,
  time, FLOP/s, bytes/s and % of the roof. Without GPU work: the top ops by CPU time.
- ``"timeline"``: kernels per stream over the span (idle gaps are the white space), top-level
  CPU ops in lanes above; zoom and pan along time.
- ``"whatif"``: Amdahl's law: the projected span if each part in turn got twice as fast
  (``analysis.amdahl``; the report app's What-if tab has the slider).

Strings from the report reach the page only as data (tooltips, table cells, select options and
canvas text, which bokeh escapes or draws as text) or through ``html.escape`` (the header).
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analysis.analyze import amdahl
from ..schema.report import SPLIT_PARTS
from . import format as fmt
from .geometry import roofline_geometry
from .style import COLOURS, LABELS

if TYPE_CHECKING:
    from ..report.report import Report

KINDS = ("split", "ops", "roofline", "timeline", "whatif")
WIDTH = 900
_NAME_LIMIT = 200  # kernel names reach thousands of characters (templates): tooltips show this much
_TOP_OPS = 25
# Op categories of a report without GPU work (no bounds there, so any distinct colours).
_CATEGORY_PALETTE = (
    "#3fa36b",
    "#4c78c8",
    "#e8833a",
    "#9467bd",
    "#d65f5f",
    "#8c564b",
    "#e377c2",
    "#8c8c8c",
)


def figure(report: Report, kind: str = "roofline") -> Any:
    """A bokeh model of one view of the report (see the module docstring for the kinds)."""
    builders = {
        "split": split_figure,
        "ops": ops_figure,
        "roofline": roofline_figure,
        "timeline": timeline_figure,
        "whatif": whatif_figure,
    }
    if kind not in builders:
        raise ValueError(f"Unknown figure kind {kind!r}: choose one of {', '.join(KINDS)}.")
    return builders[kind](report)


# --- shared helpers ----------------------------------------------------------------------------


def _plot(**kwargs: Any) -> Any:
    from bokeh.plotting import figure as bokeh_figure

    kwargs.setdefault("width", WIDTH)
    kwargs.setdefault("toolbar_location", "right")
    fig = bokeh_figure(**kwargs)
    fig.title.text_font_size = "13px"  # pyright: ignore[reportAttributeAccessIssue, reportOptionalMemberAccess]  # bokeh's title is a Title model
    fig.xaxis.axis_label_text_font_style = "normal"
    fig.yaxis.axis_label_text_font_style = "normal"
    return fig


def _label(name: Any, shapes: Any, limit: int = 60) -> str:
    name = str(name).removeprefix("aten::")
    shapes = (
        "" if shapes is None or (isinstance(shapes, float) and math.isnan(shapes)) else str(shapes)
    )
    return fmt.short(f"{name} {shapes}".strip() if shapes and shapes != "[]" else name, limit)


def _num(value: Any) -> float:
    """A report value as a float, NaN where missing (for bokeh columns)."""
    number = fmt.number(value)
    return math.nan if number is None else number


def _roof_text(value: Any, flag: str = "") -> str:
    number = _num(value)
    if flag:  # above its roof: a model or peak mismatch, not shown as achieved
        return f"above its roof: {flag}"
    return "-" if math.isnan(number) else f"{100 * number:.0f}%"


def _flags(rows: pd.DataFrame) -> list[str]:
    """Each row's over-roof flag ("" for none, and in reports written before flags existed)."""
    if "roof_flag" not in rows:
        return [""] * len(rows)
    return rows["roof_flag"].fillna("").astype(str).tolist()


def _roofs(rows: pd.DataFrame) -> list[str]:
    """The roof each row was held against (its dtype in reports written before roofs)."""
    column = rows["roof"] if "roof" in rows else rows["dtype"]
    return column.fillna("").astype(str).tolist()


def _gpu(report: Report) -> bool:
    return bool(report.summary.get("gpu"))


def _time_column(report: Report) -> str:
    return "gpu_time_s" if _gpu(report) else "self_cpu_time_s"


# --- split -------------------------------------------------------------------------------------


def split_figure(report: Report) -> Any:
    """The span split as one stacked bar (CPU reports: self CPU time by op category)."""
    from bokeh.models import ColumnDataSource, HoverTool, LabelSet

    s = report.summary
    if _gpu(report):
        span = float(s.get("span_s") or 0.0)
        parts = [(LABELS[p], float(s.get(f"{p}_s") or 0.0), COLOURS[p]) for p in SPLIT_PARTS]
        total = span
        title = f"GPU span {fmt.seconds(span)} {fmt.span_scope(s)}: busy {fmt.percent(float(s.get('busy_s') or 0), span)}"
    else:
        ops = report.ops
        by_category = (
            ops.assign(
                category=ops["category"].replace("", "uncategorised").fillna("uncategorised")
            )
            .groupby("category")["self_cpu_time_s"]
            .sum()
            .sort_values(ascending=False)
            if len(ops)
            else pd.Series(dtype=float)
        )
        if len(by_category) > len(_CATEGORY_PALETTE):
            rest = by_category.iloc[len(_CATEGORY_PALETTE) - 1 :].sum()
            by_category = pd.concat(
                [
                    by_category.iloc[: len(_CATEGORY_PALETTE) - 1],
                    pd.Series({"other categories": rest}),
                ]
            )
        parts = [
            (str(name), float(value), _CATEGORY_PALETTE[i % len(_CATEGORY_PALETTE)])
            for i, (name, value) in enumerate(by_category.items())
        ]
        total = sum(p[1] for p in parts)
        title = f"No GPU work: self CPU time {fmt.seconds(total)} by op category"
    left = np.cumsum([0.0] + [p[1] for p in parts[:-1]]) if parts else np.array([])
    scale = 1e3  # milliseconds on the axis
    data = {
        "part": [p[0] for p in parts],
        "left": list(left * scale),
        "right": [(lft + p[1]) * scale for lft, p in zip(left, parts, strict=True)],
        "colour": [p[2] for p in parts],
        "time": [fmt.seconds(p[1]) for p in parts],
        "share": [fmt.percent(p[1], total) for p in parts],
        "label": [
            fmt.percent(p[1], total) if total > 0 and p[1] / total >= 0.06 else "" for p in parts
        ],
        "y": [0.0] * len(parts),
    }
    data["middle"] = [(a + b) / 2 for a, b in zip(data["left"], data["right"], strict=True)]
    source = ColumnDataSource(data)
    fig = _plot(
        height=170,
        title=title,
        tools="xpan,xwheel_zoom,reset,save",
        y_range=(-0.6, 0.6),
        x_range=(0, max(total, 1e-9) * 1e3),
    )
    bars = fig.hbar(
        y="y",
        left="left",
        right="right",
        height=0.8,
        color="colour",
        line_color="white",
        source=source,
        legend_field="part",
    )
    fig.add_layout(
        LabelSet(
            x="middle",
            y="y",
            text="label",
            source=source,
            text_align="center",
            text_baseline="middle",
            text_color="white",
            text_font_size="12px",
            text_font_style="bold",
        )
    )
    fig.add_tools(
        HoverTool(
            renderers=[bars], tooltips=[("part", "@part"), ("time", "@time"), ("share", "@share")]
        )
    )
    fig.yaxis.visible = False
    fig.ygrid.visible = False
    fig.xaxis.axis_label = "ms per run" if _gpu(report) else "ms of self CPU time (profiled run)"
    fig.legend.orientation = "horizontal"
    fig.legend.location = "bottom_center"
    fig.legend.label_text_font_size = "11px"
    fig.add_layout(fig.legend[0], "below")
    return fig


# --- ops ---------------------------------------------------------------------------------------


def _ops_source_data(report: Report, rows: pd.DataFrame) -> dict:
    key = _time_column(report)
    total = (
        float(report.summary.get("span_s") or 0.0) if _gpu(report) else float(report.ops[key].sum())
    )
    seconds = rows[key].to_numpy(float)
    return {
        "name": [fmt.short(n, _NAME_LIMIT) for n in rows["name"].astype(str)],
        "shapes": [fmt.short(s, _NAME_LIMIT) for s in rows["shapes"].fillna("").astype(str)],
        "dtype": rows["dtype"].fillna("").astype(str).tolist()
        if "dtype" in rows
        else [""] * len(rows),
        "category": rows["category"].fillna("").astype(str).tolist(),
        "module": rows["module"].fillna("").astype(str).tolist()
        if "module" in rows
        else [""] * len(rows),
        "calls": rows["calls"].fillna(0).astype(int).tolist(),
        "ms": list(seconds * 1e3),
        "time": [fmt.seconds(v) for v in seconds],
        "share": [fmt.percent(v, total) for v in seconds],
        "flops_s": [fmt.rate(_num(v), "FLOP/s") for v in rows["flops_per_s"]],
        "tflops": [_num(v) / 1e12 for v in rows["flops_per_s"]],
        "gbytes": [_num(v) / 1e9 for v in rows["bytes_per_s"]],
        "roof_fraction": [_num(v) for v in rows["roof_fraction"]],
        "bytes_s": [fmt.rate(_num(v), "B/s") for v in rows["bytes_per_s"]],
        "roof": [
            _roof_text(v, str(flag))
            for v, flag in zip(rows["roof_fraction"], _flags(rows), strict=True)
        ],
        "bound": rows["bound"].fillna("").astype(str).tolist(),
        "colour": [COLOURS.get(b, COLOURS["other"]) for b in rows["bound"].fillna("").astype(str)],
    }


def _ops_bar(report: Report, top: int = _TOP_OPS, title: str | None = None) -> Any:
    from bokeh.models import ColumnDataSource, HoverTool

    key = _time_column(report)
    ops = report.ops
    rows = ops.nlargest(top, key) if len(ops) else ops
    rows = rows[rows[key] > 0] if len(rows) else rows
    data = _ops_source_data(report, rows)
    if not _gpu(report):
        data["colour"] = [COLOURS["cpu"]] * len(rows)
    # Factors must be unique: the rank keeps two shapes of one op apart.
    factors = [
        f"{i + 1}. {_label(n, s, 48)}"
        for i, (n, s) in enumerate(zip(rows["name"], rows["shapes"], strict=True))
    ]
    data["factor"] = factors
    source = ColumnDataSource(data)
    fig = _plot(
        height=max(220, 22 * len(factors) + 80),
        y_range=list(reversed(factors)),
        title=title or f"Top {len(factors)} ops by {'GPU' if _gpu(report) else 'self CPU'} time",
        tools="xpan,xwheel_zoom,box_zoom,reset,save",
    )
    bars = fig.hbar(y="factor", right="ms", left=0, height=0.75, color="colour", source=source)
    tooltips = [
        ("op", "@name"),
        ("shapes", "@shapes"),
        ("calls", "@calls"),
        ("time", "@time (@share)"),
    ]
    if _gpu(report):
        tooltips += [
            ("FLOP/s", "@flops_s"),
            ("bytes/s", "@bytes_s"),
            ("% of roof", "@roof"),
            ("bound", "@bound"),
        ]
    tooltips.append(("module", "@module"))
    fig.add_tools(HoverTool(renderers=[bars], tooltips=tooltips))
    fig.x_range.start = 0
    fig.xaxis.axis_label = "GPU time (ms)" if _gpu(report) else "self CPU time (ms)"
    fig.yaxis.major_label_text_font_size = "11px"
    fig.ygrid.visible = False
    return fig


def _category_bar(report: Report) -> Any:
    from bokeh.models import ColumnDataSource, HoverTool

    key = _time_column(report)
    ops = report.ops
    by = (
        ops.assign(category=ops["category"].fillna("").replace("", "uncategorised"))
        .groupby("category")[key]
        .sum()
    )
    by = by[by > 0].sort_values(ascending=False)
    total = float(by.sum())
    factors = [str(c) for c in by.index]
    source = ColumnDataSource(
        {
            "factor": factors,
            "ms": list(by.to_numpy(float) * 1e3),
            "time": [fmt.seconds(v) for v in by],
            "share": [fmt.percent(v, total) for v in by],
        }
    )
    fig = _plot(
        height=max(180, 22 * len(factors) + 80),
        y_range=list(reversed(factors)),
        title="Time by op category",
        tools="reset,save",
    )
    bars = fig.hbar(
        y="factor",
        right="ms",
        left=0,
        height=0.75,
        color=COLOURS["cpu" if not _gpu(report) else "compute"],
        source=source,
    )
    fig.add_tools(
        HoverTool(renderers=[bars], tooltips=[("category", "@factor"), ("time", "@time (@share)")])
    )
    fig.x_range.start = 0
    fig.xaxis.axis_label = "ms"
    fig.ygrid.visible = False
    return fig


def _ops_table(report: Report, limit: int = 500) -> Any:
    from bokeh.models import (
        ColumnDataSource,
        DataTable,
        NumberFormatter,
        StringFormatter,
        TableColumn,
    )

    key = _time_column(report)
    rows = report.ops.nlargest(limit, key) if len(report.ops) else report.ops
    data = _ops_source_data(report, rows)
    source = ColumnDataSource(data)
    text = StringFormatter()
    columns = [
        TableColumn(field="name", title="op", width=200, formatter=text),
        TableColumn(field="shapes", title="shapes", width=220, formatter=text),
        TableColumn(field="category", title="category", width=80, formatter=text),
        TableColumn(field="calls", title="calls", width=50),
        TableColumn(
            field="ms", title="time (ms)", width=70, formatter=NumberFormatter(format="0.000")
        ),
        TableColumn(field="share", title="share", width=50, formatter=text),
    ]
    if _gpu(report):
        columns += [
            TableColumn(
                field="tflops",
                title="TFLOP/s",
                width=70,
                formatter=NumberFormatter(format="0.00", nan_format="-"),
            ),
            TableColumn(
                field="gbytes",
                title="GB/s",
                width=70,
                formatter=NumberFormatter(format="0.0", nan_format="-"),
            ),
            TableColumn(
                field="roof_fraction",
                title="% of roof",
                width=60,
                formatter=NumberFormatter(format="0%", nan_format="-"),
            ),
            TableColumn(field="bound", title="bound", width=70, formatter=text),
        ]
    columns.append(TableColumn(field="module", title="module", width=120, formatter=text))
    return DataTable(
        source=source, columns=columns, width=WIDTH, height=320, sortable=True, index_position=None
    )


def ops_figure(report: Report) -> Any:
    """Top ops as bars (coloured by bound), time by category, and a sortable table of the ops."""
    from bokeh.layouts import column

    if not len(report.ops):
        return _message("No ops were recorded.")
    return column(_ops_bar(report), _category_bar(report), _ops_table(report))


# --- roofline ----------------------------------------------------------------------------------


def roofline_figure(report: Report) -> Any:
    """The roofline of the ops on this GPU (reports without GPU work: the top ops by CPU time)."""
    from bokeh.models import ColumnDataSource, HoverTool, Label

    if not _gpu(report):
        if not len(report.ops):
            return _message("No ops were recorded.")
        return _ops_bar(
            report, title="No GPU work was recorded: no roofline. Top ops by self CPU time"
        )
    ops = report.ops
    peaks = report.summary.get("peaks") or {}
    g = roofline_geometry(report)  # the geometry the report JSON carries (display.roofline)
    spec = g.spec
    rows, x, y, t = ops[g.plotted], g.x, g.y, g.t
    (xmin, xmax), (ymin, ymax) = spec["x_range"], spec["y_range"]

    device = report.summary.get("device", "GPU")
    source_text = (
        f" (peaks: {peaks['source']})" if peaks.get("source") else " (no peak figures known)"
    )
    fig = _plot(
        height=480,
        x_axis_type="log",
        y_axis_type="log",
        x_range=(xmin, xmax),
        y_range=(ymin, ymax),
        title=f"Roofline: {device}{source_text}",
        tools="pan,wheel_zoom,box_zoom,reset,save",
        active_scroll="wheel_zoom",
    )
    fig.xaxis.axis_label = "arithmetic intensity (FLOP / byte)"
    fig.yaxis.axis_label = "achieved FLOP/s"
    _decade_ticks(fig.xaxis, xmin, xmax)
    _decade_ticks(fig.yaxis, ymin, ymax)
    slope = spec["bandwidth"]
    if slope:
        fig.line(slope["x"], slope["y"], line_color="#333333", line_width=2)
        x0 = math.sqrt(slope["x"][0] * slope["x"][1]) / 2
        fig.add_layout(
            Label(
                x=x0,
                y=slope["bytes_per_s"] * x0,
                text=slope["label"],
                text_font_size="11px",
                text_color="#333333",
                y_offset=4,
            )
        )
    for ceiling in spec["ceilings"]:
        strong, ridge, peak = ceiling["used"], ceiling["ridge"], ceiling["flops_per_s"]
        fig.line(
            ceiling["x"],
            [peak, peak],
            line_color="#333333" if strong else "#aaaaaa",
            line_width=2 if strong else 1,
            line_dash="solid" if strong else "dashed",
        )
        if ridge is not None:
            fig.scatter(
                [ridge], [peak], marker="diamond", size=9, color="#333333" if strong else "#aaaaaa"
            )
        fig.add_layout(
            Label(
                x=ridge if ridge is not None else xmin,
                y=peak,
                text=ceiling["label"],
                text_font_size="11px" if strong else "9px",
                text_color="#222222" if strong else "#999999",
                text_align="right",
                x_offset=-6,
                y_offset=2,
            )
        )
    if len(rows):
        data = _ops_source_data(report, rows)
        tmax = float(t.max())
        data.update(
            {
                "x": list(x),
                "y": list(y),
                "size": list(7 + 26 * np.sqrt(t / tmax)),
                "intensity": [f"{v:.3g} FLOP/B" for v in x],
            }
        )
        renderers = []
        for bound in ("compute", "memory", "overhead", "other"):
            mask = [b == bound or (bound == "other" and b not in COLOURS) for b in data["bound"]]
            if not any(mask):
                continue
            sub = {
                k: [v for v, m in zip(values, mask, strict=True) if m] for k, values in data.items()
            }
            renderers.append(
                fig.scatter(
                    "x",
                    "y",
                    size="size",
                    source=ColumnDataSource(sub),  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
                    fill_color=COLOURS.get(bound, COLOURS["other"]),
                    line_color=COLOURS.get(bound, COLOURS["other"]),
                    fill_alpha=0.6,
                    hover_fill_alpha=1.0,
                    legend_label=LABELS.get(bound, bound),
                )
            )
        fig.add_tools(
            HoverTool(
                renderers=renderers,
                tooltips=[
                    ("op", "@name"),
                    ("shapes", "@shapes"),
                    ("dtype", "@dtype"),
                    ("calls", "@calls"),
                    ("GPU time", "@time (@share of the span)"),
                    ("FLOP/s", "@flops_s"),
                    ("bytes/s", "@bytes_s"),
                    ("intensity", "@intensity"),
                    ("% of roof", "@roof"),
                    ("bound", "@bound"),
                ],
            )
        )
        fig.legend.location = "bottom_right"
        fig.legend.title = "bound"
        fig.legend.label_text_font_size = "11px"
    else:
        fig.add_layout(
            Label(
                x=math.sqrt(xmin * xmax),
                y=math.sqrt(ymin * ymax),
                text="no GPU op with a FLOP model",
                text_align="center",
            )
        )
    return fig


def _decade_ticks(axis: Any, low: float, high: float) -> None:
    """Ticks at powers of ten labelled with SI prefixes (1k, 10T), with no formatter code."""
    from bokeh.models import FixedTicker

    exponents = range(math.floor(math.log10(low)) - 4, math.ceil(math.log10(high)) + 5)
    ticks = [10.0**e for e in exponents]
    axis.ticker = FixedTicker(ticks=ticks)
    axis.major_label_overrides = {t: fmt.si(t) for t in ticks}


# --- timeline ----------------------------------------------------------------------------------


def timeline_figure(report: Report, limit: int = 50_000) -> Any:
    """Kernels per stream over the span, top-level CPU ops in lanes above; zoom and pan in time."""
    from bokeh.models import ColumnDataSource, HoverTool

    kernels = report.kernels
    cpu = report.cpu_ops
    lanes: list[str] = []
    fig_sources = []
    if len(kernels) and "start_s" in kernels:
        k = kernels.nlargest(limit, "dur_s") if len(kernels) > limit else kernels
        streams = (
            k["stream"].astype(str) if "stream" in k else pd.Series(["?"] * len(k), index=k.index)
        )
        lane = ("GPU stream " + streams).tolist()
        start = k["start_s"].to_numpy(float) * 1e3
        dur = k["dur_s"].to_numpy(float)
        bound = (
            k["bound"].fillna("other").astype(str).tolist() if "bound" in k else ["other"] * len(k)
        )
        fig_sources.append(
            (
                "kernel",
                {
                    "lane": lane,
                    "left": list(start),
                    "right": list(start + dur * 1e3),
                    "name": [fmt.short(n, _NAME_LIMIT) for n in k["name"].astype(str)],
                    "op": k["op"].fillna("").astype(str).tolist() if "op" in k else [""] * len(k),
                    "start": [
                        fmt.seconds(v / 1e3) if v >= 0 else "-" + fmt.seconds(-v / 1e3)
                        for v in start
                    ],
                    "time": [fmt.seconds(v) for v in dur],
                    "bound": bound,
                    "colour": [COLOURS.get(b, COLOURS["other"]) for b in bound],
                },
            )
        )
        lanes_gpu = sorted(set(lane), key=lambda s: (len(s), s))
    else:
        lanes_gpu = []
    if len(cpu) and "start_s" in cpu:
        c = cpu.nlargest(limit, "dur_s") if len(cpu) > limit else cpu
        lane = ("CPU thread " + c["tid"].astype(str)).tolist()
        start = c["start_s"].to_numpy(float) * 1e3
        dur = c["dur_s"].to_numpy(float)
        fig_sources.append(
            (
                "cpu",
                {
                    "lane": lane,
                    "left": list(start),
                    "right": list(start + dur * 1e3),
                    "name": [fmt.short(n, _NAME_LIMIT) for n in c["name"].astype(str)],
                    "op": [""] * len(c),
                    "start": [
                        fmt.seconds(v / 1e3) if v >= 0 else "-" + fmt.seconds(-v / 1e3)
                        for v in start
                    ],
                    "time": [fmt.seconds(v) for v in dur],
                    "bound": ["cpu"] * len(c),
                    "colour": [COLOURS["cpu"]] * len(c),
                },
            )
        )
        lanes_cpu = sorted(set(lane))
    else:
        lanes_cpu = []
    lanes = list(reversed(lanes_gpu)) + list(reversed(lanes_cpu))  # categorical y runs bottom-up
    if not lanes:
        return _message("Nothing to draw on a timeline.")
    aggregated = len(kernels) and "count" in kernels and (kernels["count"].fillna(1) > 1).any()
    title = "Timeline: kernels per stream, top-level CPU ops above (scroll to zoom, drag to pan)"
    if aggregated:
        title += "; kernels aggregated by name (start = first launch, length = total time)"
    fig = _plot(
        height=max(200, 60 * len(lanes) + 90),
        y_range=lanes,
        title=title,
        tools="xpan,xwheel_zoom,box_zoom,reset,save",
        active_scroll="xwheel_zoom",
        active_drag="xpan",
        output_backend="webgl",
    )
    renderers = []
    for _kind, data in fig_sources:
        renderers.append(
            fig.hbar(
                y="lane",
                left="left",
                right="right",
                height=0.7,
                color="colour",
                line_color=None,
                source=ColumnDataSource(data),
            )
        )
    fig.add_tools(
        HoverTool(
            renderers=renderers,
            tooltips=[
                ("name", "@name"),
                ("op", "@op"),
                ("start", "@start"),
                ("duration", "@time"),
                ("bound", "@bound"),
            ],
        )
    )
    fig.xaxis.axis_label = "ms from the first kernel" if lanes_gpu else "ms"
    fig.ygrid.visible = False
    return fig


# --- what-if -----------------------------------------------------------------------------------


def _whatif_parts(report: Report) -> tuple[float, list[tuple[str, float]]]:
    """The base time and (part, seconds) pairs a speed-up can apply to."""
    if _gpu(report):
        span = float(report.summary.get("span_s") or 0.0)
        table = report.what_if()
        parts = []
        for row in table.itertuples():
            if row.time_s <= 0:  # pyright: ignore[reportOperatorIssue]  # numpy/pandas stubs: loose scalar types
                continue
            label = (
                LABELS.get(row.part, row.part)  # pyright: ignore[reportArgumentType, reportCallIssue]  # numpy/pandas stubs: loose scalar types
                if row.kind == "category"
                else f"op: {fmt.short(row.part, 70)}"
            )
            parts.append((label, float(row.time_s)))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        return span, parts
    ops = report.ops
    base = float(ops["self_cpu_time_s"].sum()) if len(ops) else 0.0
    top = ops.nlargest(8, "self_cpu_time_s") if len(ops) else ops
    parts = [
        (f"op: {_label(r.name, r.shapes, 70)}", float(r.self_cpu_time_s))  # pyright: ignore[reportArgumentType]  # numpy/pandas stubs: loose scalar types
        for r in top.itertuples()
        if r.self_cpu_time_s > 0  # pyright: ignore[reportOperatorIssue]  # numpy/pandas stubs: loose scalar types
    ]
    return base, parts


def whatif_figure(report: Report, factor: float = 2.0) -> Any:
    """Amdahl's law: the projected span if each part in turn got ``factor`` times faster
    (``analysis.amdahl``; the report app's What-if tab has the slider)."""
    from bokeh.models import ColumnDataSource, HoverTool, LabelSet, Span

    base, parts = _whatif_parts(report)
    parts.sort(key=lambda part: -part[1])  # the biggest part first: it is the one to fix first
    if base <= 0 or not parts:
        return _message("Nothing to project: no time was recorded.")
    base_ms = base * 1e3
    shares = [min(seconds / base, 1.0) for _, seconds in parts]
    factors = [f"{i + 1}. {name}" for i, (name, _) in enumerate(parts)]

    limits = [("∞" if p >= 1 else f"{1 / (1 - p):.2f}x") for p in shares]
    source = ColumnDataSource(
        {
            "factor": factors,
            "part": [name for name, _ in parts],
            "share": shares,
            "share_text": [f"{100 * p:.0f}%" for p in shares],
            "time": [fmt.seconds(seconds) for _, seconds in parts],
            "projected": [base_ms / amdahl(p, factor) for p in shares],
            "floor": [base_ms * (1 - p) for p in shares],
            "limit_text": limits,
            "label": [
                f"{base_ms / amdahl(p, factor):.3g} ms ({amdahl(p, factor):.2f}x; limit {lim})"
                for p, lim in zip(shares, limits, strict=True)
            ],
        }
    )
    what = "span" if _gpu(report) else "self CPU time"
    fig = _plot(
        height=max(220, 30 * len(factors) + 90),
        y_range=list(reversed(factors)),
        x_range=(0, base_ms * 1.45),
        title=f"What if one part got N times faster? Projected {what} (now {fmt.seconds(base)})",
        tools="save",
    )
    bars = fig.hbar(
        y="factor",
        left=0,
        right="projected",
        height=0.7,
        color=COLOURS["compute"],
        alpha=0.75,
        source=source,
    )
    fig.scatter(
        x="floor",
        y="factor",
        marker="dash",
        size=18,
        angle=math.pi / 2,
        color="#222222",
        source=source,
    )
    fig.add_layout(
        Span(
            location=base_ms,
            dimension="height",
            line_color="#d65f5f",
            line_dash="dashed",
            line_width=2,
        )
    )
    fig.add_layout(
        LabelSet(
            x="projected",
            y="factor",
            text="label",
            source=source,
            x_offset=4,
            text_baseline="middle",
            text_font_size="10px",
        )
    )
    fig.add_tools(
        HoverTool(
            renderers=[bars],
            tooltips=[
                ("part", "@part"),
                ("time", "@time (@share_text)"),
                ("Amdahl limit", "@limit_text"),
            ],
        )
    )
    fig.xaxis.axis_label = (
        f"projected {what} (ms); dashed red line: now; black tick: the part takes no time"
    )
    fig.ygrid.visible = False
    fig.yaxis.major_label_text_font_size = "11px"

    return fig


# --- messages ----------------------------------------------------------------------------


def _message(text: str) -> Any:
    from bokeh.models import Div

    return Div(text=f"<p>{escape(text)}</p>", width=WIDTH)
