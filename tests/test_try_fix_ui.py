"""Advice that proves itself, in the notebook (issue 24): the Try this fix buttons of the live
controls (notebook/controls.py) and the verdict they store; a fix that needs a code change as a
before/after snippet (analysis/code_change.py); and a recommendation's saving as a field of its
own (``"saving"``), which the static views read, while a report saved before it still shows its
sentence. The browser side: js/src/__tests__/advice.spec.ts and tests/test_browser_tryfix.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import torch

import jupyter_brrr
from jupyter_brrr.actions.fixes import FIX_OF_CAUSE, VERDICTS
from jupyter_brrr.analysis import code_change
from jupyter_brrr.notebook.controls import cell_controls
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.export import json_schemas
from jupyter_brrr.schema.report import TRY_VERDICTS, check_report
from jupyter_brrr.views import format as fmt
from jupyter_brrr.views.text import summary_lines

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CASES = DATA / "advice_cases"


def _case(name: str) -> Report:
    report = jupyter_brrr.load(CASES / f"{name}.json.gz")
    assert isinstance(report, Report)
    return report


class Handle:
    """Stands in for IPython's DisplayHandle: records what the report's output became."""

    def __init__(self) -> None:
        self.updates: list = []

    def update(self, obj) -> None:
        self.updates.append(json.loads(obj.to_json()))


# --- the schema ----------------------------------------------------------------------------------


def test_the_browser_knows_the_same_automatic_fixes_and_verdicts() -> None:
    ts = (ROOT / "js" / "src" / "schema.ts").read_text()
    body = re.search(r"export const FIX_OF_CAUSE: Record<string, string> = \{(.*?)\};", ts, re.S)
    assert body, "js/src/schema.ts has no FIX_OF_CAUSE"
    pairs = {k.strip("' \n"): v for k, v in re.findall(r"([^,{]+?): '(\w+)'", body.group(1))}
    assert pairs == FIX_OF_CAUSE
    assert TRY_VERDICTS == VERDICTS


def test_a_verdict_a_saving_and_a_code_change_are_declared_and_checked() -> None:
    report = _case("item_sync")
    report.recommendations[0]["try"] = {
        "fix": None,
        "verdict": "not applicable",
        "reason": "no automatic fix for synchronisation: it needs a code change",
    }
    doc = json.loads(report.to_json())
    check_report(doc)
    jsonschema.validate(doc, json_schemas()["report"])
    first = doc["recommendations"][0]
    assert first["saving"]["predicted_by"] == "replay"
    assert first["code_change"]["after"]
    for bad in ({"verdict": "maybe"}, {"verdict": "confirmed", "measured_s": "1 ms"}):
        first["try"] = bad
        with pytest.raises(jupyter_brrr.SchemaError):
            check_report(doc)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, json_schemas()["report"])


# --- the saving as a field -------------------------------------------------------------------------


def test_the_saving_is_a_field_the_static_views_read_and_an_older_report_still_shows_it() -> None:
    # A report written now: the replay's sentence, how it was made and what it did not model.
    recommendation = _case("item_sync").recommendations[0]
    saving = recommendation["saving"]
    assert (
        saving["text"].startswith("Predicted by replaying")
        and saving["text"] in (recommendation["detail"])
    )
    assert saving["seconds"] == recommendation["saving_s"] and saving["not_modelled"]
    # Read from the field: a detail that no longer ends with the sentence still shows it.
    report = _case("item_sync")
    report.recommendations[0]["detail"] = report.recommendations[0]["evidence"]
    html = report._repr_html_()
    assert saving["text"].replace("'", "&#x27;") in html
    assert "Not modelled: work that appears or vanishes" in html
    # A report saved before the field: the sentence found in the detail, as before.
    old = json.loads((DATA / "reports" / "history_run.json").read_text())["report"]
    assert "saving" not in old["recommendations"][0]
    older = Report.from_json(old)
    assert fmt.saving(older.recommendations[0]).startswith("Predicted by replaying")
    assert "this saves 1.81 ms, 61% of the time: 2.55x." in older._repr_html_()


def test_the_browsers_saving_fixture_is_what_the_code_writes_now() -> None:
    fixture = json.loads((DATA / "advice" / "recommendations_saving_field.json").read_text())
    now = json.loads(_case("item_sync").to_json())["recommendations"]
    for key in ("saving", "code_change", "cause"):
        assert [r.get(key) for r in fixture["recommendations"]] == [r.get(key) for r in now]


# --- fixes that need a code change -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "before", "after"),
    [
        ("hand_attention", "torch.softmax(scores", "scaled_dot_product_attention(q, k, v)"),
        ("odd_vocab_lm_head", "Linear(768, 50257", "Linear(768, 50304"),
        ("host_copy_in_step", 'model(x.to("cuda"))', 'x = x.to("cuda")  # once, before the loop'),
        ("item_sync", "total += loss.item()", "total = total.item()  # one wait"),
    ],
)
def test_a_fix_that_needs_a_code_change_shows_it_in_every_view(
    case: str, before: str, after: str
) -> None:
    report = _case(case)
    first = report.recommendations[0]
    # (A host copy's pinned non-blocking copy is an automatic fix too; moving it out of the
    # loop needs the code changed.)
    assert first["cause"] not in FIX_OF_CAUSE or first["cause"] == "host copy"
    snippet = first["code_change"]
    assert before in snippet["before"] and after in snippet["after"]
    text = "\n".join(summary_lines(report))
    assert f"  - {before}" in text or any(
        line.startswith("  - ") and before in line for line in text.splitlines()
    )
    assert any(line.startswith("  + ") and after in line for line in text.splitlines())
    html = report._repr_html_()
    assert "The change:" in html
    assert after.replace('"', "&quot;") in html
    # Saved and read back, as a notebook keeps it.
    assert Report.from_json(report.to_json()).recommendations[0]["code_change"] == snippet


def test_an_automatic_fix_has_no_snippet_and_the_cells_own_line_replaces_the_pattern() -> None:
    conv = _case("conv_channels_first_autocast").recommendations[0]
    assert conv["cause"] == "layout" and conv["code_change"] is None
    # Where --stack recorded the line that made the op, the snippet quotes the cell's line.
    recommendation = _case("item_sync").recommendations[0]
    item = next(op for op in recommendation["ops"] if op["name"] == "aten::item")
    item["line"] = "cell:3"
    change = code_change.code_change(recommendation)
    assert change is not None
    recommendation["code_change"] = change
    assert recommendation["code_change"]["line"] == "cell:3"
    source = "total = 0.0\nfor b in batches:\n    total += step(b).item()\n"
    code_change.with_lines([recommendation], source)
    assert recommendation["code_change"]["before"] == "total += step(b).item()"
    assert fmt.code_change_lines(recommendation)[:2] == [
        "The change (cell:3):",
        "- total += step(b).item()",
    ]


STACK_CELL = (
    "total = 0.0\n"
    "x = torch.randn(64, 64)\n"
    "for step in range(20):\n"
    "    loss = (x * 2 + 1).sum()\n"
    "    total += loss.item()\n"
    "q, k, v = torch.randn(3, 2, 4, 32, 16).unbind(0)\n"
    "scores = q @ k.transpose(-2, -1) / 4.0\n"
    "out = torch.softmax(scores, dim=-1) @ v\n"
)


@pytest.mark.parametrize(
    ("case", "line", "quoted"),
    [
        ("item_sync", "cell:5", "total += loss.item()"),
        ("hand_attention", "cell:8", "out = torch.softmax(scores, dim=-1) @ v"),
    ],
)
def test_the_snippet_quotes_the_line_that_stack_recorded_in_the_cell(
    ip, case: str, line: str, quoted: str
) -> None:
    """``%%brrr --stack`` through real IPython on a CPU cell that does what the H200 cases did
    (a loop that reads a loss with ``.item()``, hand-written attention): the cell's lines as the
    profiler's Python stacks recorded them, each op's ``"line"``. A CPU profile has no GPU time,
    so no advice rule fires on it (the synchronisation and attention rules read GPU gaps and
    kernels), and the H200 cases were recorded without ``--stack``: the recommendation is the
    H200's, its ops given the lines this cell's run recorded for the same ops, as an H200 run
    with ``--stack`` of this cell gives them. Then the snippet is made and the cell's own line put
    in, as the report and the magic do (``code_change.attach``, ``code_change.with_lines``)."""
    ip.run_cell(f"%%brrr --stack --quiet\n{STACK_CELL}")
    recorded = ip.user_ns["_brrr"]
    assert isinstance(recorded, Report) and recorded.recommendations == []
    lines = dict(zip(recorded.ops["name"], recorded.ops["line"], strict=True))
    recommendation = _case(case).recommendations[0]
    assert recommendation["code_change"]["line"] is None  # no stacks on the H200
    for op in recommendation["ops"]:
        op["line"] = lines[op["name"]]
    code_change.attach([recommendation])
    code_change.with_lines([recommendation], STACK_CELL)
    snippet = recommendation["code_change"]
    assert snippet["line"] == line
    assert snippet["before"] == quoted
    assert fmt.code_change_lines(recommendation)[:2] == [f"The change ({line}):", f"- {quoted}"]
    # A line number that does not name a line of the cell leaves the pattern in place.
    pattern = code_change.code_change(recommendation)
    assert pattern is not None and pattern["before"] != quoted
    beyond = {"code_change": {**pattern, "line": "cell:99"}}
    code_change.with_lines([beyond], STACK_CELL)
    assert beyond["code_change"]["before"] == pattern["before"]


# --- the verdict's words, the same on both sides ------------------------------------------------------


def test_the_verdict_says_measured_against_predicted_as_the_browser_does() -> None:
    # js/src/__tests__/advice.spec.ts expects the same sentence from verdictText.
    entry = {
        "fix": "bf16",
        "verdict": "smaller than predicted",
        "reason": "measured 1 ms saved, predicted 2 ms",
        "predicted_s": 0.002,
        "measured_s": 0.001,
        "measured_low_s": 0.0008,
        "measured_high_s": 0.0012,
    }
    assert fmt.tried({"try": entry}) == (
        "Tried (bf16): smaller than predicted: measured 1 ms saved (800 µs to 1.2 ms), "
        "predicted 2 ms saved. measured 1 ms saved, predicted 2 ms"
    )


# --- the live controls: Try this fix ----------------------------------------------------------------

CELL = "with torch.no_grad():\n    y = conv(images)\ny"


@pytest.fixture(scope="module")
def ip(ipython_shell):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_cell(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "conv = torch.nn.Conv2d(16, 32, 3, padding=1)\n"
        "images = torch.randn(4, 16, 24, 24)"
    )
    return ipython_shell


def _controls(ip, cell: str = CELL):
    # The H200's recording of a float32 NCHW convolution: its first recommendation is
    # channels_last, an automatic fix, tried here on this machine's CPU convolution.
    report = _case("conv_channels_first_autocast")
    handle = Handle()
    controls = cell_controls(ip, cell, name="cell [t]", report=report, handle=handle, cpu=True)
    controls.budget.value = 0.3
    return controls, report, handle


def test_each_automatic_fix_gets_a_try_button_that_stores_its_verdict(ip) -> None:
    controls, report, handle = _controls(ip)
    fixable = [n for n, r in enumerate(report.recommendations) if r["cause"] in FIX_OF_CAUSE]
    assert list(controls.fix_buttons) == fixable and 0 in fixable
    button = controls.fix_buttons[0]
    assert "jp-brrr-try-fix-0" in button._dom_classes
    assert button.description.startswith("Try this fix: 1. layout (channels_last)")
    button.click()
    assert controls.running and all(b.disabled for b in controls.fix_buttons.values())
    controls.wait(300)
    assert controls.error is None, controls.error
    entry = report.recommendations[0]["try"]
    assert entry["fix"] == "channels_last" and entry["verdict"] in VERDICTS
    assert entry["predicted_s"] is not None and entry["measured_s"] is not None
    assert entry["runs"] and entry["correct"] is True
    # The report's output was updated with the A/B and the verdict in it.
    last = handle.updates[-1]
    assert last["ab"]["variants"][1]["name"] == "channels_last"
    assert last["recommendations"][0]["try"]["verdict"] == entry["verdict"]
    assert fmt.tried(report.recommendations[0]) in controls.status.value.replace("&#x27;", "'")
    assert not any(b.disabled for b in controls.fix_buttons.values())
    # The static fallbacks of the updated report say it.
    html = Report.from_json(json.dumps(last))._repr_html_()
    assert "Tried (channels_last): " + entry["verdict"] in html


def test_try_this_fix_on_a_stateful_cell_asks_first_then_runs_that_fix(ip) -> None:
    cell = "with torch.no_grad():\n    conv.weight.mul_(1.0)\n    y = conv(images)\ny"
    controls, report, _handle = _controls(ip, cell)
    assert controls.findings
    controls.fix_buttons[0].click()
    assert not controls.running and controls.confirm_box.layout.display == "flex"
    # The A/B's run-count bound, for the fix's variant.
    runs = controls.estimate_runs(["channels_last"])
    assert f"would run it up to {runs:,} times" in controls.warning.value
    assert "try" not in report.recommendations[0]
    controls.confirm_button.click()
    controls.wait(300)
    assert controls.error is None, controls.error
    assert report.recommendations[0]["try"]["fix"] == "channels_last"


def test_cancel_stops_a_fix_and_leaves_no_verdict(ip) -> None:
    controls, report, handle = _controls(ip)
    controls.budget.value = 30.0
    controls.fix_buttons[0].click()
    controls.cancel_button.click()
    controls.wait(300)
    assert controls.result is not None and controls.result.cancelled
    assert "try" not in report.recommendations[0] and handle.updates == []
    assert "Cancelled after" in controls.status.value


def test_a_fix_tried_from_code_and_one_from_a_button_land_in_the_same_field() -> None:
    conv = torch.nn.Conv2d(16, 32, 3, padding=1)
    x = torch.randn(4, 16, 24, 24)
    report = _case("conv_channels_first_autocast")

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    entry = jupyter_brrr.try_fix(report, 0, step, x, budget_s=0.3, rounds=3, cpu=True)
    doc = json.loads(report.to_json())
    check_report(doc)
    assert doc["recommendations"][0]["try"]["verdict"] == entry["verdict"]
