"""Static HTML: key figures, pictures and tables; no script, iframe or style block.

It is what nbconvert and GitHub show (the JupyterLab renderer replaces it with the interactive
report). Only inline ``style`` attributes are used, and the two pictures (the span split and the
roofline, or the top CPU ops) are PNG data URIs, so the fragment survives HTML sanitizers and
needs no JavaScript. Every string that comes from a report (op and kernel names, shapes, module
paths, notes, variant names, error messages) is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..analysis.analyze import SHORT_S, steady_state_options
from ..report import display
from ..schema.report import SPLIT_PARTS
from . import change
from . import format as fmt
from . import pictures as picture_module
from .markup import NAME_LIMIT
from .markup import escaped as _e
from .markup import img as _img
from .markup import section as _section
from .markup import table as _table
from .markup import wrap as _wrap
from .pictures import Pictures
from .style import COLOURS, LABELS
from .style import MUTED as _MUTED

if TYPE_CHECKING:
    from ..report.report import Report

__all__ = ["AB_COLUMNS", "COLOURS", "LABELS", "ab_rows", "ab_table", "key_figures", "render"]

# --- key figures ---------------------------------------------------------------------------------


def _warm(report: Report) -> str:
    warm = report.summary.get("warm")
    if warm is True:
        return "warm: first-run costs excluded"
    if warm is False:
        options = steady_state_options(report.source)
        return f"includes first-run costs (use {options} for steady-state numbers)"
    return "unknown (loaded trace)"


def modelled_text(summary: Mapping[str, Any]) -> str:
    """'99% of the GPU time has FLOP and byte counts (12% estimated)', in words."""
    text = f"{100 * float(summary['modelled_share']):.0f}% of the GPU time has FLOP and byte counts"
    estimated = fmt.number(summary.get("estimated_share"))
    if estimated:
        text += f" ({100 * estimated:.0f}% estimated)"
    missing = summary.get("unmodelled_ops") or []
    if float(summary["modelled_share"]) < 0.97 and missing:
        text += "; without: " + ", ".join(
            f"{op['name']} {100 * float(op['share']):.0f}%" for op in missing[:3]
        )
    return text


def key_figures(report: Report) -> list[tuple[str, str]]:
    """The overview's figures as (label, value) pairs, plain text (escape before use)."""
    s = report.summary
    span = float(s.get("span_s") or 0.0)
    rows: list[tuple[str, str]] = []
    peaks = s.get("peaks") or None
    device = str(s.get("device", ""))
    if peaks and peaks.get("source"):
        device += f" (peaks: {peaks['source']})"
    rows.append(("device", device))
    if s.get("gpu"):
        busy = float(s.get("busy_s") or 0.0)
        rows.append(("span", f"{fmt.seconds(span)} {fmt.span_label(s)}"))
        rows += [("steps", line) for line in fmt.steps_lines(s)]
        if timed := fmt.timed_runs(s):
            rows.append(("timed runs", timed))
        gaps = s.get("idle_gap_count")
        idle = f"idle {fmt.percent(span - busy, span)}" + (f" in {gaps:,} gaps" if gaps else "")
        rows.append(("GPU busy", f"{fmt.percent(busy, span)} ({fmt.seconds(busy)}); {idle}"))
        achieved = fmt.number(s.get("achieved_flops_per_s"))
        dtype = display.main_dtype(report.ops, peaks)
        peak_flops = (peaks or {}).get("flops", {}).get(dtype) if dtype else None
        value = f"{fmt.rate(achieved, 'FLOP/s')} while busy"
        if achieved and peak_flops:
            value += f" ({fmt.percent(achieved, peak_flops)} of the {dtype} peak, {fmt.rate(peak_flops, 'FLOP/s')})"
        rows.append(("compute", value))
        bandwidth = fmt.number(s.get("achieved_bytes_per_s"))
        peak_bw = fmt.number((peaks or {}).get("bandwidth"))
        value = f"{fmt.rate(bandwidth, 'B/s')} while busy"
        if bandwidth and peak_bw:
            value += f" ({fmt.percent(bandwidth, peak_bw)} of {fmt.rate(peak_bw, 'B/s')})"
        rows.append(("memory traffic", value))
        modelled = fmt.number(s.get("modelled_share"))
        if modelled is not None:
            rows.append(("cost model", modelled_text(s)))
        kernels = int(s.get("kernel_count") or 0)
        copies = int(s.get("copy_count") or 0)
        short = int(s.get("short_kernel_count") or 0)
        rows.append(
            (
                "kernels",
                f"{kernels:,} kernels, {copies:,} copies "
                f"({short:,} kernels shorter than {fmt.seconds(SHORT_S)})",
            )
        )
    else:
        op_time = fmt.seconds(fmt.cpu_op_time(report.ops))
        rows.append(("CPU op time", f"{op_time} {fmt.profiled_scope(s)}"))
        rows.append(("span", f"{fmt.seconds(span)} {fmt.span_label(s)}"))
        if timed := fmt.timed_runs(s):
            rows.append(("timed runs", timed))
    if memory := fmt.memory(s):
        rows.append(("peak memory", memory))
    rows.append(("runs", f"{fmt.runs(s.get('runs') or {})}; {_warm(report)}"))
    return rows


def _key_figures(report: Report) -> str:
    rows = "".join(
        f'<tr><td style="padding:1px 8px 1px 0;text-align:left;{_MUTED}">{_e(label)}</td>'
        f'<td style="padding:1px 0;text-align:left">{_e(value)}</td></tr>'
        for label, value in key_figures(report)
    )
    return f'<table style="border-collapse:collapse;font-size:12px">{rows}</table>'


# --- lists and tables ----------------------------------------------------------------------------


def _recommendations(report: Report, top: int = 3) -> str:
    items = []
    for advice in report.recommendations[:top]:
        bottleneck = str(advice.get("bottleneck", "other"))
        colour = COLOURS.get("idle" if bottleneck == "overhead" else bottleneck, COLOURS["other"])
        share = fmt.number(advice.get("share"))
        cause = str(advice.get("cause") or "")
        if cause:
            # Written by the advice module: what it rests on, what to do, what it saves.
            tag = f"{cause} · up to {100 * share:.0f}%" if share is not None else cause
            body = (
                f"<div>{_e(advice.get('evidence', ''))}</div>"
                f'<div style="font-style:italic">{_e(advice.get("fix", ""))}</div>'
                f'<div style="{_MUTED}">{_e(fmt.saving(advice))}</div>'
            )
            if fmt.tried(advice):
                body += f'<div style="font-weight:bold">{_e(fmt.tried(advice))}</div>'
            change_lines = fmt.code_change_lines(advice)
            if change_lines:
                body += (
                    f'<div style="{_MUTED}">{_e(change_lines[0])}</div>'
                    '<div style="margin:2px 0;font-size:11px;white-space:pre-wrap;'
                    f'font-family:monospace">{_e(chr(10).join(change_lines[1:]))}</div>'
                )
        else:  # an older report: one sentence
            tag = f"{bottleneck} {100 * share:.0f}%" if share is not None else bottleneck
            body = f"{_e(advice.get('detail', ''))}"
        items.append(
            f'<li style="margin-bottom:4px"><span style="background:{colour};color:white;'
            f'padding:0 4px;border-radius:3px;font-size:11px">{_e(tag)}</span> '
            f"<b>{_e(advice.get('title', ''))}</b>{body}</li>"
        )
    ruled_out = (
        f'<div class="jp-brrr-ruled-out" style="font-size:11px;{_MUTED}">'
        f"{_e(fmt.ruled_out(report.ruled_out))}</div>"
        if report.ruled_out
        else ""
    )
    if not items:
        return _section("What to try first") + ruled_out if ruled_out else ""
    return (
        _section("What to try first")
        + f'<ul style="margin:2px 0;padding-left:20px">{"".join(items)}</ul>'
        + ruled_out
    )


def _notes(report: Report) -> str:
    if not report.notes:
        return ""
    items = "".join(f"<li>{_e(note)}</li>" for note in report.notes)
    return f'<ul style="margin:6px 0;padding-left:20px;font-size:11px;{_MUTED}">{items}</ul>'


def _ops_table(report: Report, top: int = 15) -> str:
    ops = report.ops
    if not len(ops):
        return ""
    gpu = bool(report.summary.get("gpu"))
    key = "gpu_time_s" if gpu else "self_cpu_time_s"
    rows = ops.nlargest(top, key)
    total = float(report.summary.get("span_s") or 0.0) if gpu else float(ops[key].sum())
    head = ["op", "shapes", "calls", "GPU time" if gpu else "self CPU time", "share"]
    if gpu:
        head += ["FLOP/s", "bytes/s", "% of roof", "bound", "why under its roof"]
    body: list[list[str] | str] = []
    for r in rows.itertuples():
        seconds = fmt.number(getattr(r, key)) or 0.0
        shapes = str(r.shapes)
        shapes = fmt.short(shapes, 80)
        module = str(getattr(r, "module", "") or "")
        source = str(getattr(r, "line", "") or "")
        where = " · ".join(part for part in (module, source) if part)
        where_html = (
            f'<div style="font-size:10px;{_MUTED}">{_e(fmt.short(where, 60))}</div>'
            if where
            else ""
        )
        row = [
            _name_cell(r.name) + where_html,
            f'<span style="font-size:11px">{_e(shapes)}</span>',
            _e(r.calls),
            fmt.seconds(seconds),
            fmt.percent(seconds, total),
        ]
        if gpu:
            roof = fmt.number(r.roof_fraction)
            roof_name = str(getattr(r, "roof", "") or "")
            flag = str(getattr(r, "roof_flag", "") or "")
            bound = str(r.bound)
            colour = COLOURS.get(bound)
            bound_html = f'<span style="color:{colour}">{_e(bound)}</span>' if colour else _e(bound)
            row += [
                fmt.rate(fmt.number(r.flops_per_s), "FLOP/s"),
                fmt.rate(fmt.number(r.bytes_per_s), "B/s"),
                _roof_cell(roof, roof_name, flag),
                bound_html,
                _reason_cell(r),
            ]
        body.append(row)
    title = f"Top {len(rows)} of {len(ops):,} ops by {'GPU' if gpu else 'self CPU'} time"
    return _section(_e(title)) + _table(head, body, right={2, 3, 4, 5, 6, 7})


def _reason_cell(row: Any) -> str:
    """The op's regime and, far under its roof, the reason (the evidence as a tooltip)."""
    regime = str(getattr(row, "regime", "") or "")
    reason = str(getattr(row, "reason", "") or "")
    why = str(getattr(row, "why", "") or "")
    if not reason:
        return f'<span style="{_MUTED}">{_e(regime + " side") if regime else ""}</span>'
    return f'<span title="{_e(why)}">{_e(reason)}</span>'


def _modules_table(report: Report, top: int = 20) -> str:
    """The module tree: each module's time with its submodules, indented, largest first among
    siblings; the first ``top`` rows."""
    tree = getattr(report, "modules", None)
    if tree is None or not len(tree):
        return ""
    gpu = bool(report.summary.get("gpu"))
    key = "gpu_time_s" if gpu else "cpu_time_s"
    total = (
        float(report.summary.get("span_s") or 0.0)
        if gpu
        else float(tree.loc[tree["depth"] == 0, key].sum())
    )
    rows = fmt.tree_order(tree, key)[:top]
    body: list[list[str] | str] = []
    for r in rows:
        depth = max(int(r["depth"]), 0)
        name = str(r["path"]).rsplit(".", 1)[-1] if r["path"] else "(no module)"
        body.append(
            [
                f'<span style="padding-left:{12 * depth}px" title="{_e(r["path"])}">'
                f"<code>{_e(name)}</code></span>",
                fmt.seconds(fmt.number(r[key])),
                fmt.percent(fmt.number(r[key]) or 0.0, total),
                fmt.seconds(fmt.number(r[f"self_{key}"])),
                _e(r["calls"]),
            ]
        )
    head = ["module", "GPU time" if gpu else "CPU time", "share", "in itself", "op calls"]
    more = f" (the first {top} of {len(tree):,})" if len(tree) > top else ""
    return _section(f"By module{more}") + _table(head, body, right={1, 2, 3, 4})


def _roof_cell(fraction: float | None, roof: str, flag: str) -> str:
    """The share of the roof and which roof; an op above its roof shows the reason instead (a
    model or peak mismatch is not an achievement)."""
    if fraction is None:
        return display.DASH
    if flag:
        return f'<span title="{_e(flag)}">over its {_e(roof)} roof</span>'
    return f"{100 * fraction:.0f}% {_e(roof)}".strip()


def _name_cell(name: Any) -> str:
    """An op name in a table cell, cut to ``NAME_LIMIT`` with the longer text on hover."""
    text = "" if name is None else str(name)
    if len(text) <= NAME_LIMIT:
        return f"<code>{_e(text)}</code>"
    return f'<code title="{_e(text)}">{_e(text, NAME_LIMIT)}</code>'


AB_COLUMNS = (
    ("variant", "variant"),
    ("median", "median"),
    ("iqr", "IQR"),
    ("speedup", "speed-up (range)"),
    ("verdict", "verdict"),
    ("correctness", "correctness"),
    ("compile", "compile time"),
    ("error", "error"),
)


def ab_rows(ab: dict) -> list[dict[str, str]]:
    """The A/B table as plain text, one dict per variant keyed as ``AB_COLUMNS`` (escape before
    use)."""
    rows = []
    for v in ab.get("variants") or []:
        speedup = fmt.number(v.get("speedup"))
        low, high = fmt.number(v.get("speedup_low")), fmt.number(v.get("speedup_high"))
        if speedup is None:
            speed = display.DASH
        elif low is not None and high is not None and (low, high) != (speedup, speedup):
            speed = f"{speedup:.2f}x ({low:.2f}–{high:.2f})"
        else:
            speed = f"{speedup:.2f}x"
        err = fmt.number(v.get("max_abs_err"))
        if v.get("correct") is True:
            correctness = "same outputs" + (f" (max abs err {err:.2g})" if err else "")
        elif v.get("correct") is False:
            correctness = "outputs differ" + (
                f" (max abs err {err:.2g})" if err is not None else ""
            )
        else:
            correctness = display.DASH
        error = " ".join(str(v.get("error") or "").split())
        rows.append(
            {
                "variant": str(v.get("name", "")),
                "median": fmt.seconds(fmt.number(v.get("median_s"))),
                "iqr": fmt.seconds(fmt.number(v.get("iqr_s"))),
                "speedup": speed,
                "verdict": (
                    "unchanged: fell back to eager"
                    if v.get("verdict") == "fallback"
                    else str(v.get("verdict") or display.DASH)
                ),
                "correctness": correctness,
                "compile": fmt.seconds(fmt.number(v.get("compile_s"))),
                "error": fmt.short(error, 300),
            }
        )
    return rows


def ab_table(ab: dict) -> str:
    """An A/B comparison (``ABResult.to_dict()``, a report's ``ab``) as a section: its table and
    notes."""
    rows = ab_rows(ab)
    if not rows:
        return ""
    body: list[list[str] | str] = []
    for row in rows:
        colour = {"faster": "#2e7d32", "slower": "#c62828", "failed": "#c62828"}.get(row["verdict"])
        cells = {key: _e(value) for key, value in row.items()}
        if colour:
            cells["verdict"] = f'<b style="color:{colour}">{cells["verdict"]}</b>'
        if row["correctness"].startswith("outputs differ"):
            cells["correctness"] = f'<b style="color:#c62828">{cells["correctness"]}</b>'
        body.append([cells[key] for key, _title in AB_COLUMNS[:-1]])
        if row["error"]:
            body.append(
                f'<span style="color:#c62828;font-size:11px">{cells["variant"]}: {cells["error"]}</span>'
            )
    head = [title for _key, title in AB_COLUMNS[:-1]]
    notes = "".join(f"<li>{_e(n)}</li>" for n in ab.get("notes") or [])
    notes_html = (
        f'<ul style="margin:2px 0;padding-left:20px;font-size:11px;{_MUTED}">{notes}</ul>'
        if notes
        else ""
    )
    return _section("A/B comparison") + _table(head, body, right={1, 2, 3}) + notes_html


def _remeasure(report: Report) -> str:
    """A target's plan, and a named run's change since its previous run with its runs."""
    parts = []
    if report.target:
        parts.append(change.target_html(report.target))
    if report.change or report.history:
        parts.append(change.report_section(report.change, report.history))
    return "".join(parts)


# --- the fragment --------------------------------------------------------------------------------


def render(report: Report, pictures: Pictures | None = None) -> str:
    """The static HTML fragment. ``pictures`` are drawn here when not given (when Pillow is
    installed); ``Pictures(None, None, None)`` leaves them out."""
    if pictures is None:
        pictures = picture_module.draw(report)
    s = report.summary
    parts = [_title(report)]
    if report.empty:
        parts += [f"<div>{_e(EMPTY)}</div>", _notes(report)]
        return _wrap(parts)
    parts.append(_key_figures(report))
    if s.get("gpu"):
        split_alt = f"span split of {fmt.seconds(s.get('span_s'))}: " + ", ".join(
            f"{name} {fmt.seconds(s.get(f'{name}_s'))} ({fmt.percent(s.get(f'{name}_s') or 0.0, s.get('span_s') or 0.0)})"
            for name in SPLIT_PARTS
        )
        parts.append(_img(pictures.split, split_alt) or f"<div>{_e(split_alt)}</div>")
    parts.append(_recommendations(report))
    parts.append(_remeasure(report))
    if report.ab:
        parts.append(ab_table(report.ab))
    if report.sweep or report.memory:
        from . import sweep_memory as sweep_view

        if report.sweep:
            parts.append(sweep_view.sweep_html(report.sweep))
        if report.memory:
            parts.append(sweep_view.memory_html(report.memory))
    main_alt = (
        "roofline of the ops on this GPU"
        if s.get("gpu")
        else f"top ops by self CPU time, of {fmt.seconds(fmt.cpu_op_time(report.ops))} "
        f"{fmt.profiled_scope(s)}"
    )
    parts.append(_img(pictures.main, main_alt))
    parts.append(_steps_table(report))
    parts.append(_ops_table(report))
    parts.append(_modules_table(report))
    parts.append(_notes(report))
    return _wrap(parts)


def _steps_table(report: Report) -> str:
    """Each profiler step of a loaded trace: its kind, span and split."""
    steps = report.steps
    if not len(steps):
        return ""
    head = ["step", "kind", "span", *SPLIT_PARTS]
    body: list[list[str] | str] = [
        [
            f"<code>{_e(r.step)}</code>",
            _e(r.kind),
            fmt.seconds(fmt.number(r.span_s)),
            *(
                fmt.percent(fmt.number(getattr(r, f"{name}_s")) or 0.0, fmt.number(r.span_s) or 0.0)
                for name in SPLIT_PARTS
            ),
        ]
        for r in steps.itertuples()
    ]
    title = f"The {len(steps)} profiler steps of the trace"
    return _section(_e(title)) + _table(head, body, right=set(range(2, 3 + len(SPLIT_PARTS))))


EMPTY = (
    "The code ran no torch operations: there is nothing to show. Profile code that calls "
    "PyTorch (a model's forward, tensor maths) to get a report."
)


def _title(report: Report) -> str:
    title = f"jupyter_brrr report{': ' + str(report.name) if report.name else ''}"
    return f'<div style="font-weight:bold;font-size:14px;margin-bottom:4px">{_e(title)}</div>'
