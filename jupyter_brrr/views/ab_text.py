"""Text and static HTML of an A/B comparison on its own (``jupyter_brrr.compare(...)``, the
``--ab`` flag's result): a heading, one line per variant and the notes. Inside a report the A/B is
a section of its HTML (``html.ab_table``) and a tab of the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import html
from .markup import wrap

if TYPE_CHECKING:
    from ..actions.ab import ABResult, VariantResult


def variant_lines(result: ABResult) -> list[str]:
    """One plain line per variant, baseline first: its time, speed-up and correctness."""
    return [variant_line(v) for v in result.variants]


def variant_line(v: VariantResult) -> str:
    def ms(x: float | None) -> str:
        return "-" if x is None else f"{x * 1e3:.4g} ms"

    if v.verdict == "failed":
        return f"{v.name}: failed: {v.error}" + (f" (at {v.error_line})" if v.error_line else "")
    text = f"{v.name}: {ms(v.median_s)} per run (IQR {ms(v.iqr_s)})"
    if v.verdict == "fallback":
        text += f", unchanged: fell back to eager ({v.fallback_reason})"
    elif v.verdict != "baseline" and v.speedup is not None:
        text += f", {v.speedup:.2f}x ({v.speedup_low:.2f}-{v.speedup_high:.2f}x): {v.verdict}"
    if v.correct is True:
        text += ", outputs match"
    elif v.correct is False:
        # No finite error where the outputs differ in shape, dtype or type, or in NaNs: the
        # check's detail says what differed.
        what = f"max abs err {v.max_abs_err:.3g}" if v.max_abs_err is not None else v.check_detail
        text += f", OUTPUTS DIFFER ({what})"
    if v.compile_s is not None:
        text += f", first call {v.compile_s:.3g} s"
    if v.graph_breaks:
        text += f", {len(v.graph_breaks)} graph break(s)"
    if v.recompiles:
        text += f", {v.recompiles} recompile(s)"
    return text


def render(result: ABResult) -> str:
    """The A/B as plain text: ``repr(result)``."""
    head = f"A/B on {result.device}: {result.runs_total:,} runs in {result.elapsed_s:.1f} s"
    if result.cancelled:
        head += " (cancelled)"
    return "\n".join(
        [
            head,
            *(f"  {line}" for line in variant_lines(result)),
            *(f"- {n}" for n in result.notes),
        ]
    )


def fragment(result: ABResult) -> str:
    """The static HTML fragment: the A/B section of a report's HTML, on its own."""
    return wrap([html.ab_table(result.to_dict())])
