"""Plain-text rendering of a job report: the CLI, ``repr(job)`` and the ``text/plain`` fallback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..schema.job import JOB_SPLIT_PARTS
from . import format as fmt

if TYPE_CHECKING:
    from ..report.job import JobReport

# Past this many rows the per-step table is left to ``job.steps``.
STEP_ROWS = 40


def title(job: JobReport) -> str:
    s = job.summary
    loaded = len(s.get("ranks") or [])
    devices = ", ".join(s.get("devices") or []) or "unknown device"
    name = f": {job.name}" if job.name else ""
    return (
        f"jupyter_brrr job{name} — {loaded} of {s.get('world_size', loaded)} ranks, "
        f"{s.get('backend', 'unknown')} backend, {devices}"
    )


def straggler_line(job: JobReport) -> str:
    """Who holds the others back, in one sentence, with the figures behind it."""
    straggler = job.summary.get("straggler") or {}
    if len(job.summary.get("ranks") or []) < 2:
        return "straggler: needs two ranks or more"
    decided = straggler.get("decided", 0)
    noise = fmt.seconds(fmt.number(straggler.get("noise_s")))
    if straggler.get("rank") is None:
        varies = straggler.get("varies") or {}
        if not decided:
            return (
                f"straggler: none: at every collective the ranks arrive within the clocks' "
                f"noise ({noise}) of each other"
            )
        counts = ", ".join(f"rank {r} {c}" for r, c in sorted(varies.items(), key=lambda x: -x[1]))
        return (
            f"straggler: none consistent: the last rank varies ({counts} of {decided} "
            f"collectives decided beyond {noise} of clock noise)"
        )
    per_step = fmt.number(straggler.get("lateness_per_step_s"))
    late = (
        f"{fmt.seconds(per_step)} late per step"
        if per_step is not None
        else f"{fmt.seconds(straggler.get('lateness_s'))} late in all"
    )
    wait = fmt.number(straggler.get("others_wait_per_step_s"))
    waits = (
        f"the others wait {fmt.seconds(wait)} per step (median)"
        if wait is not None
        else f"the others wait {fmt.seconds(straggler.get('others_wait_s'))} (median)"
    )
    return (
        f"straggler: rank {straggler['rank']} arrives last at {straggler['last_count']} of "
        f"{decided} collectives (beyond {noise} of clock noise), {late}; {waits}"
    )


def communication_line(job: JobReport) -> str:
    s = job.summary
    overlap = fmt.number(s.get("overlap"))
    exposed = fmt.number(s.get("exposed_share"))
    return (
        f"communication: {fmt.seconds(s.get('comm_s'))} per rank (mean), "
        + (f"{100 * overlap:.0f}% hidden behind the rank's own work" if overlap is not None else "")
        + (f", exposed {100 * exposed:.0f}% of the span" if exposed is not None else "")
    )


def cell_text(value: Any, kind: str) -> str:
    number = fmt.number(value)
    if kind == "s":
        return fmt.seconds(number)
    if kind == "%":
        return "-" if number is None else f"{100 * number:.0f}%"
    if kind == "B":
        return fmt.size(number)
    if kind == "B/s":
        return fmt.rate(number, "B/s")
    if kind == "n":
        return "-" if number is None else f"{number:,.0f}"
    return str(value)


def table_lines(frame: Any, columns: list[tuple[str, str, str, int]]) -> list[str]:
    """A fixed-width table: (column, heading, kind, width) per column, kinds as ``cell_text``."""
    head = " ".join(f"{heading:>{width}}" for _c, heading, _k, width in columns)
    lines = [head, "-" * len(head)]
    for row in frame.to_dict("records"):
        lines.append(
            " ".join(
                f"{fmt.short(cell_text(row.get(column), kind), width):>{width}}"
                for column, _h, kind, width in columns
            )
        )
    return lines


RANK_COLUMNS = [
    ("rank", "rank", "", 4),
    ("span_s", "span", "s", 9),
    *((f"{p}_s", "comm exp." if p == "communication" else p, "s", 9) for p in JOB_SPLIT_PARTS),
    ("comm_s", "comm", "s", 9),
    ("overlap", "overlap", "%", 7),
    ("last_count", "last", "n", 5),
    ("lateness_s", "late", "s", 9),
    ("wait_s", "wait", "s", 9),
]
COLLECTIVE_COLUMNS = [
    ("group", "group", "", 6),
    ("op", "op", "", 14),
    ("bytes", "size", "B", 9),
    ("dtype", "dtype", "", 9),
    ("calls", "calls", "n", 6),
    ("time_s", "time", "s", 9),
    ("median_s", "median", "s", 9),
    ("algbw", "algbw", "B/s", 11),
    ("busbw", "busbw", "B/s", 11),
    ("link_fraction", "of link", "%", 7),
    ("algorithm", "NCCL algo", "", 11),
]
STEP_COLUMNS = [
    ("rank", "rank", "", 4),
    ("step", "step", "", 5),
    ("kind", "kind", "", 7),
    ("span_s", "span", "s", 9),
    ("comm_s", "comm", "s", 9),
    ("exposed_comm_s", "exposed", "s", 9),
    ("lateness_s", "late", "s", 9),
    ("wait_s", "wait", "s", 9),
]


def render(job: JobReport) -> str:
    lines = [title(job), straggler_line(job), communication_line(job), ""]
    lines += table_lines(job.ranks, RANK_COLUMNS)
    if len(job.collectives):
        lines += ["", "collectives (time: from the last rank's arrival to the end)"]
        lines += table_lines(job.collectives, COLLECTIVE_COLUMNS)
    if 0 < len(job.steps) <= STEP_ROWS:
        lines += ["", "profiler steps"]
        lines += table_lines(job.steps, STEP_COLUMNS)
    elif len(job.steps):
        lines += ["", f"{len(job.steps)} rank-steps: see job.steps"]
    lines.append("")
    lines += [f"note: {note}" for note in job.notes]
    lines += [f"* {a['title']}: {a['detail']}" for a in job.recommendations]
    return "\n".join(lines).rstrip()
