"""Number and text formatting shared by all the views (text, static HTML, pictures).

Times, rates and sizes follow the rules of ``display.py``, which the browser app
(``js/src/format.ts``) shares: the same value reads the same in every view."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..report import display


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


# Characters a terminal acts on or that reorder text (ANSI escapes start with ESC, a window
# title with OSC; bidirectional overrides make text read differently than it is): in plain
# text they are shown as escapes, never sent as they are.
_CONTROL = {
    code: ascii(chr(code))[1:-1]
    for code in (
        *range(0x20),
        *range(0x7F, 0xA0),
        *range(0x200B, 0x2010),
        *range(0x2028, 0x202F),
        *range(0x2066, 0x206A),
        0xFEFF,
    )
}


def plain(text: Any) -> str:
    """Text safe to print to a terminal: control, bidirectional and invisible format
    characters as Python escapes (``\x1b``, ``\n``, ``\u202e``); None as ""."""
    return ("" if text is None else str(text)).translate(_CONTROL)


def si(value: float, _pos: Any = None) -> str:
    """An axis tick with an SI prefix: 1e12 -> "1T" (a matplotlib formatter's signature)."""
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:g}{prefix}"
    return f"{value:g}"


def seconds(value: float | None) -> str:
    """1.23 s, 4.56 ms, 7.80 µs: the rule the browser app shares (``display.seconds``)."""
    return display.seconds(value)


def rate(value: float | None, unit: str) -> str:
    """A per-second figure with an SI prefix: 787 TFLOP/s, 4.80 TB/s (``display.rate``); a dash
    where there is none (missing, or not above zero)."""
    return display.rate(value, unit)


def size(value: float | None) -> str:
    """Bytes in decimal units: 1.69 GB (``display.nbytes``)."""
    return display.nbytes(value)


def percent(part: float, whole: float) -> str:
    """27% (``display.percent``)."""
    return display.percent(part, whole)


def runs(runs: Mapping[str, Any]) -> str:
    """How many times the code ran, in words."""
    total = runs.get("total", 1)
    if total is None:  # a loaded trace: it says how many profiler steps it holds, if any
        profiled = runs.get("profiled")
        if profiled:
            return f"{profiled} profiler steps in the trace"
        return "how often the code ran is not recorded (a loaded trace)"
    parts = []
    if runs.get("warmup"):
        parts.append(f"{runs['warmup']} warm-up")
    if runs.get("timed"):
        parts.append(f"{runs['timed']} timed")
    if runs.get("profiled"):
        parts.append(f"{runs['profiled']} profiled")
    times = "once" if total == 1 else f"{total} times"
    return f"ran {times}" + (f" ({', '.join(parts)})" if len(parts) > 1 else "")


def span_source(summary: Mapping[str, Any]) -> str:
    """Where the span per run comes from, in words (``summary["span_source"]``, as capture
    writes it: ``cuda_events_unprofiled``, ``host_clock_profiled``, ...; ``trace`` for a file,
    ``trace_step`` for the median step of a file with several profiler steps)."""
    source = str(summary.get("span_source") or "trace")
    if source == "trace_step":
        steps = summary.get("steps") or {}
        return (
            f"the median of {steps.get('steady', '?')} steady profiler steps in the trace, "
            f"{steps.get('median_step', '?')}"
        )
    if source == "trace":
        return "from the trace"
    clock = "CUDA events" if source.startswith("cuda_events") else "the host clock"
    if source.endswith("_profiled"):
        return f"the profiled run, timed with {clock}"
    timed = (summary.get("runs") or {}).get("timed", 0)
    return f"median of {timed} unprofiled runs timed with {clock}"


def span_scope(summary: Mapping[str, Any]) -> str:
    """What the span covers, in two or three words: "per run", "per step" (the median step of
    a loaded trace) or "for the whole trace" (a loaded trace that marks no profiler steps)."""
    source = summary.get("span_source", "trace")
    if source == "trace_step":
        return "per step"
    if source == "trace" and (summary.get("runs") or {}).get("total", 1) is None:
        return "for the whole trace"
    return "per run"


def span_label(summary: Mapping[str, Any]) -> str:
    """What the span covers and where it comes from, in words."""
    scope = span_scope(summary)
    if scope == "for the whole trace":
        return f"{scope} (it marks no profiler steps: how many runs it holds is unknown)"
    return f"{scope} ({span_source(summary)})"


def steps_lines(summary: Mapping[str, Any]) -> list[str]:
    """A loaded trace's profiler steps in words: the spread of the steady steps, the steps set
    apart, and the whole trace's span and split. [] when it has none."""
    steps = summary.get("steps")
    if not steps:
        return []
    lines = [
        f"per step: median {seconds(steps['median_s'])} ({steps['median_step']}), fastest "
        f"{seconds(steps['fastest_s'])} ({steps['fastest_step']}), slowest "
        f"{seconds(steps['slowest_s'])} ({steps['slowest_step']}) over {steps['steady']} "
        "steady steps"
    ]
    for step in steps.get("set_apart") or []:
        lines.append(f"set apart: {step['step']} ({step['kind']}), {seconds(step['span_s'])}")
    total = steps.get("total") or {}
    whole = total.get("span_s") or 0.0
    parts = ", ".join(
        f"{name} {percent(total.get(f'{name}_s') or 0.0, whole)}"
        for name in ("compute", "memory", "other", "idle")
    )
    lines.append(f"whole trace ({steps['count']} steps): {seconds(whole)}; {parts}")
    return lines


def timed_runs(summary: Mapping[str, Any]) -> str | None:
    """The timed runs' spread, protocol and clocks in one line (``summary["timing"]``, written
    by ``capture``); None for a report without timed runs (one profiled run, a loaded trace)."""
    timing = summary.get("timing") or {}
    if not timing.get("timed_runs") or timing.get("median_s") is None:
        return None
    # The spread is the IQR over the median, or the range over it for fewer than four runs
    # (analysis/spread.py): quote the ends it is measured between.
    share = f"{100 * (number(timing.get('spread')) or 0):.1f}%"
    if timing["timed_runs"] >= 4:
        width = f"IQR {seconds(timing.get('q1_s'))} - {seconds(timing.get('q3_s'))} ({share})"
    else:
        width = f"max {seconds(timing.get('max_s'))} (range {share} of the median)"
    text = (
        f"{timing['timed_runs']} runs: min {seconds(timing.get('min_s'))}, median "
        f"{seconds(timing['median_s'])}, {width}"
    )
    protocol = timing.get("protocol")
    warmup = timing.get("warmup_runs") or 0
    text += f"; {protocol} warm-up, {warmup:,} run{'s' if warmup != 1 else ''}"
    if number(timing.get("warmup_s")) is not None:
        text += f" in {timing['warmup_s']:.2g} s"
    clocks = [c for c in timing.get("sm_clock_mhz") or [] if c is not None]
    power = [p for p in timing.get("power_w") or [] if p is not None]
    if clocks:
        text += f"; SM clock {_span_of(clocks, 'MHz')}"
        if power:
            text += f", power {_span_of(power, 'W')}"
    kinds = [f.get("kind") for f in timing.get("findings") or []]
    slowdown = number(timing.get("host_slowdown"))
    if "host_slow" in kinds and slowdown is not None:
        text += f"; host CPU {slowdown:.2f}x slower than its best"
    disagree = [kind for kind in kinds if kind != "host_slow"]
    if disagree:
        text += f"; THE RUNS DISAGREE ({', '.join(disagree)}: see the notes)"
    return text


def _span_of(values: list[float], unit: str) -> str:
    low, high = min(values), max(values)
    return f"{low:.0f} {unit}" if round(low) == round(high) else f"{low:.0f}-{high:.0f} {unit}"


# One label per meaning of a GPU's memory, in every view (the app's in js/src/format.ts):
# what the board has (torch's total_memory), what this process's allocator may reach (its
# memory fraction, less what the CUDA context and other processes hold), a datasheet's figure.
DEVICE_MEMORY = "device memory"
REACHABLE_MEMORY = "this process can reach"
NOMINAL_MEMORY = "nominal"


def memory(summary: Mapping[str, Any]) -> str | None:
    """Peak memory against capacity, with what was there before and one run's increase; None
    where no peak is known."""
    peak = number(summary.get("peak_memory_bytes"))
    if peak is None:
        return None
    capacity = number(summary.get("memory_capacity_bytes"))
    text = size(peak)
    if capacity:
        text += f" of {size(capacity)} {DEVICE_MEMORY} ({percent(peak, capacity)})"
    before = number(summary.get("memory_before_bytes"))
    increase = number(summary.get("memory_increase_bytes"))
    if before is not None and increase is not None:
        text += f": {size(before)} allocated before the run, + {size(increase)} by one run"
    return text


def tree_order(tree: Any, key: str) -> list[dict]:
    """The rows of a module tree (``schema.MODULE_COLUMNS``) depth first, the larger subtree
    (by ``key``) first among siblings; the ops outside modules last."""
    rows = tree.to_dict("records")
    children: dict[str, list[dict]] = {}
    for r in rows:
        if r["path"]:
            children.setdefault(str(r["parent"]), []).append(r)
    ordered: list[dict] = []

    def visit(parent: str) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: -(number(r[key]) or 0.0)):
            ordered.append(r)
            visit(str(r["path"]))

    visit("")
    ordered += [r for r in rows if not r["path"]]
    return ordered


def tried(advice: Mapping[str, Any]) -> str:
    """The verdict of a recommendation's fix, tried (``actions/fixes.py``), in words; "" when
    it was not tried."""
    entry = advice.get("try")
    if not isinstance(entry, Mapping) or not entry.get("verdict"):
        return ""
    fix = f" ({entry['fix']})" if entry.get("fix") else ""

    def known(key: str) -> float | None:
        value = entry.get(key)
        return float(value) if isinstance(value, int | float) and math.isfinite(value) else None

    figures = []
    measured, low, high = known("measured_s"), known("measured_low_s"), known("measured_high_s")
    if measured is not None:
        within = (
            f" ({seconds(low)} to {seconds(high)})" if low is not None and high is not None else ""
        )
        figures.append(f"measured {seconds(measured)} saved{within}")
    predicted = known("predicted_s")
    if predicted is not None:
        p_low, p_high = known("predicted_low_s"), known("predicted_high_s")
        likely = (
            f" (likely {seconds(p_low)} to {seconds(p_high)})"
            if p_low is not None and p_high is not None and p_high > p_low * 1.005
            else ""
        )
        figures.append(f"predicted {seconds(predicted)} saved{likely}")
    said = f": {', '.join(figures)}" if figures else ""
    return f"Tried{fix}: {entry['verdict']}{said}. {entry.get('reason') or ''}".strip()


def cpu_op_time(ops: Any) -> float:
    """The CPU op time every view quotes for a report without GPU work: the op rows' own CPU
    time (self time; an op's whole time where it has none) summed, the time PyTorch ops took in
    the profiled run(s), each instant counted once, which the op table's shares add up to. The
    browser app sums the same (``js/src/model.ts``, ``opCpuTime``)."""
    if ops is None or not len(ops):
        return 0.0
    own = ops.get("self_cpu_time_s")
    whole = ops.get("cpu_time_s")
    if own is not None and whole is not None:
        own = own.where(own.notna(), whole)
    times = own if own is not None else whole
    return 0.0 if times is None else float(times.fillna(0.0).sum())


def profiled_scope(summary: Mapping[str, Any]) -> str:
    """Which run the op times come from, in words: "in the profiled run", "in the 3 profiled
    runs", "in the trace" (a loaded one). The browser app says the same (``profiledScope``)."""
    runs = summary.get("runs") or {}
    if runs.get("total") is None:
        return "in the trace"
    profiled = int(runs.get("profiled") or 1)
    return "in the profiled run" if profiled == 1 else f"in the {profiled} profiled runs"


def saving(advice: Mapping[str, Any]) -> str:
    """What a recommendation saves, as its writer said it: the ``saving`` field's sentence, with
    what the prediction could not model; in an older report, the detail's last sentence (the
    replay's "Predicted by replaying ..." or the additive bound's "At best ...")."""
    field = advice.get("saving")
    if isinstance(field, Mapping) and field.get("text"):
        text = str(field["text"])
        missing = [str(m) for m in field.get("not_modelled") or [] if m]
        return f"{text} Not modelled: {'; '.join(missing)}." if missing else text
    detail = str(advice.get("detail", ""))
    at = max(detail.rfind("Predicted by replaying"), detail.rfind("At best"))
    return detail[at:] if at >= 0 else ""


def ruled_out(items: Sequence[Mapping[str, Any]]) -> str:
    """The recommendations the step's replay rules out (``Report.ruled_out``), as one line under
    the list: what was considered and why it cannot pay here; "" when there are none."""
    said = [
        f"{item.get('cause') or 'advice'} ({item.get('title', '')}): {item.get('ruled_out', '')}"
        for item in items
    ]
    return f"Ruled out, as it cannot pay here: {'; '.join(said)}." if said else ""


def code_change_lines(advice: Mapping[str, Any]) -> list[str]:
    """A fix's code change (``analysis/code_change.py``) as diff-like lines: a heading, then
    ``- `` before and ``+ `` after; [] where the fix needs none."""
    snippet = advice.get("code_change")
    if not isinstance(snippet, Mapping) or not snippet.get("after"):
        return []
    where = f" ({snippet['line']})" if snippet.get("line") else ""
    return [
        f"The change{where}:",
        *(f"- {line}" for line in str(snippet.get("before") or "").splitlines()),
        *(f"+ {line}" for line in str(snippet["after"]).splitlines()),
    ]
