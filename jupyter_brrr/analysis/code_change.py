"""The change a fix needs in the user's code, as a short before/after snippet.

Four causes have a fix that no variant of the A/B can apply (``actions/fixes.py``), because it
changes what the code computes or where: pad an odd dimension (tile quantisation), call SDPA in
place of hand-written attention, copy the data to the GPU once instead of each step, and keep a
running value on the GPU instead of reading it with ``.item()``. Each gets ``"code_change"``:
``{"before", "after", "line"}``. ``before`` is the cell's own line where ``--stack`` recorded
which line made the op (``"line"``: ``cell:3``) and the cell's source is known (``with_lines``,
called by the magic); otherwise, and always for ``after``, a short pattern of the change, with
the sizes the evidence names (the padded size, the layer's width).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["attach", "code_change", "with_lines"]

_SYNC_OPS = ("aten::item", "aten::_local_scalar_dense")


def _dims(shapes: str) -> list[list[int]]:
    """The input shapes of an op row (``"[[8192, 768], [768, 50257]]"``); [] where unreadable."""
    try:
        value = ast.literal_eval(shapes) if shapes else []
    except (ValueError, SyntaxError):
        return []
    if not isinstance(value, list):
        return []
    return [d for d in value if isinstance(d, list) and all(isinstance(n, int) for n in d)]


def _pad(recommendation: Mapping[str, Any]) -> dict | None:
    found = re.search(r"Padding (\d+) to (\d+)", str(recommendation.get("evidence", "")))
    if found is None:
        return None
    odd, padded = found.group(1), found.group(2)
    shapes = [_dims(str(op.get("shapes") or "")) for op in recommendation.get("ops") or []]
    mm = next((s for s in shapes if len(s) == 2 and len(s[0]) == 2 and len(s[1]) == 2), None)
    if mm is not None and str(mm[1][1]) == odd:  # the output width: a layer's out_features
        width = mm[1][0]
        return {
            "before": f"head = torch.nn.Linear({width}, {odd}, bias=False)\nlogits = head(x)",
            "after": (
                f"head = torch.nn.Linear({width}, {padded}, bias=False)  # {odd} padded\n"
                f"logits = head(x)[..., :{odd}]  # the {int(padded) - int(odd)} extra columns unused"
            ),
        }
    return {
        "before": f"size = {odd}",
        "after": f"size = {padded}  # {odd} padded to a multiple of 64; the extra part unused",
    }


def _attention(_recommendation: Mapping[str, Any]) -> dict:
    return {
        "before": (
            "scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))\n"
            "out = torch.softmax(scores, dim=-1) @ v"
        ),
        "after": (
            "# one fused kernel; is_causal=True or attn_mask=... for a mask\n"
            "out = torch.nn.functional.scaled_dot_product_attention(q, k, v)"
        ),
    }


def _host_copy(_recommendation: Mapping[str, Any]) -> dict:
    return {
        "before": 'for step in range(steps):\n    out = model(x.to("cuda"))',
        "after": (
            'x = x.to("cuda")  # once, before the loop\n'
            "for step in range(steps):\n"
            "    out = model(x)\n"
            '# new data each step: x.pin_memory() once, then x.to("cuda", non_blocking=True)'
        ),
    }


def _item(recommendation: Mapping[str, Any]) -> dict | None:
    names = {str(op.get("name") or "") for op in recommendation.get("ops") or []}
    if not names & set(_SYNC_OPS):
        return None
    return {
        "before": (
            "total = 0.0\nfor batch in batches:\n    loss = step(batch)\n    total += loss.item()"
        ),
        "after": (
            'total = torch.zeros((), device="cuda")\n'
            "for batch in batches:\n"
            "    loss = step(batch)\n"
            "    total += loss.detach()  # stays on the GPU: no wait\n"
            "total = total.item()  # one wait, after the loop"
        ),
    }


_SNIPPETS = {
    "tile quantisation": _pad,
    "unfused attention": _attention,
    "host copy": _host_copy,
    "synchronisation": _item,
}
# The op whose line is the one to change, by cause (the first of the recommendation's ops with a
# line otherwise).
_LINE_OPS = {"synchronisation": _SYNC_OPS, "unfused attention": ("aten::_softmax", "aten::softmax")}


def _line(recommendation: Mapping[str, Any]) -> str:
    ops = [op for op in recommendation.get("ops") or [] if op.get("line")]
    wanted = _LINE_OPS.get(str(recommendation.get("cause")), ())
    first = next((op for op in ops if op.get("name") in wanted), ops[0] if ops else None)
    return str(first["line"]) if first else ""


def code_change(recommendation: Mapping[str, Any]) -> dict | None:
    """The snippet of a recommendation whose fix needs a code change (None for the others, and
    where the evidence does not name what to change)."""
    make = _SNIPPETS.get(str(recommendation.get("cause")))
    snippet = make(recommendation) if make else None
    if snippet is None:
        return None
    return {**snippet, "line": _line(recommendation) or None}


def attach(recommendations: list[dict]) -> list[dict]:
    """The recommendations, each with its ``"code_change"`` (None where it needs none)."""
    for recommendation in recommendations:
        recommendation["code_change"] = code_change(recommendation)
    return recommendations


def with_lines(recommendations: list[dict], source: str) -> None:
    """Put the cell's own line (``source``: the cell's code) as the ``before`` of each snippet
    whose line ``--stack`` recorded in that cell (``cell:N``)."""
    lines = source.splitlines()
    for recommendation in recommendations:
        snippet = recommendation.get("code_change")
        found = re.fullmatch(r"cell:(\d+)", str((snippet or {}).get("line") or ""))
        if snippet is None or found is None:
            continue
        number = int(found.group(1))
        if 1 <= number <= len(lines) and lines[number - 1].strip():
            snippet["before"] = lines[number - 1].strip()
