"""Fixes applied without editing the code, as A/B variants (actions/variants.py: tf32, bf16,
channels_last, cudnn_benchmark), and the verdict of a recommendation's fix against the replay's
prediction (actions/fixes.py). On the CPU: bf16 autocast and channels_last convolutions run;
TF32 and cuDNN's search are not applicable there, and say so."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import jupyter_brrr
from jupyter_brrr.actions.fixes import VERDICTS, try_fix
from jupyter_brrr.actions.variants import parse_variants
from jupyter_brrr.views.text import summary_lines

DATA = Path(__file__).parent / "data" / "advice"
QUICK = {"budget_s": 0.3, "rounds": 3, "cpu": True, "profile": False}


def _conv() -> tuple[torch.nn.Sequential, torch.Tensor]:
    torch.manual_seed(0)
    conv = torch.nn.Sequential(
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3)
    )
    return conv, torch.randn(4, 16, 24, 24)


def _load(name: str) -> jupyter_brrr.Report:
    report = jupyter_brrr.load(DATA / name)
    assert isinstance(report, jupyter_brrr.Report)
    return report


def test_the_fixes_are_variants_by_name() -> None:
    specs = parse_variants("tf32,bf16,channels_last,cudnn_benchmark")
    assert [(s.name, s.kind, s.mode) for s in specs[1:]] == [
        ("tf32", "fix", "tf32"),
        ("bf16", "fix", "bf16"),
        ("channels_last", "fix", "channels_last"),
        ("cudnn_benchmark", "fix", "cudnn_benchmark"),
    ]
    with pytest.raises(ValueError, match="a fix: tf32, bf16"):
        parse_variants("fp8")


def test_bf16_and_channels_last_run_on_the_cpu_and_tf32_says_why_not() -> None:
    conv, x = _conv()

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    result = jupyter_brrr.compare(step, x, variants="bf16,channels_last,tf32", **QUICK)
    bf16, last, tf32 = result["bf16"], result["channels_last"], result["tf32"]
    # bf16: computed in bf16 (a rounding error eager does not have), within bf16's tolerance.
    assert bf16.correct is True and bf16.max_rel_err and bf16.max_rel_err > 1e-4
    assert last.correct is True and last.median_s
    assert tf32.verdict == "failed" and "needs CUDA" in (tf32.error or "")
    # The variant converted the module for its own runs only.
    first = conv[0]
    assert isinstance(first, torch.nn.Conv2d) and first.weight.is_contiguous()
    # Settings are the user's again after the A/B.
    assert torch.get_float32_matmul_precision() == "highest"
    assert not torch.is_autocast_enabled("cpu")


def test_channels_last_converts_the_globals_a_cell_reads_only_while_it_runs() -> None:
    conv, x = _conv()
    seen: list[bool] = []
    namespace = {"conv": conv, "x": x, "torch": torch, "seen": seen}
    exec(
        "def cell():\n"
        "    seen.append(x.is_contiguous(memory_format=torch.channels_last))\n"
        "    with torch.no_grad():\n"
        "        return conv(x)\n",
        namespace,
    )
    cell = namespace["cell"]
    result = jupyter_brrr.compare(cell, variants="channels_last", **QUICK)
    assert result["channels_last"].correct is True
    assert True in seen and False in seen  # channels_last in the variant, as it was in eager
    assert namespace["x"] is x and x.is_contiguous()


def test_a_fix_of_a_recommendation_gets_a_verdict_with_its_prediction() -> None:
    # The H200 recording of a float32 NCHW convolution under autocast: its first
    # recommendation is channels_last, predicted by the replay; tried here on a CPU
    # convolution (the machinery, not the H200's figures).
    report = _load("conv_channels_first_autocast.slow.json.gz")
    assert report.recommendations[0]["cause"] == "layout"
    conv, x = _conv()

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    entry = try_fix(report, 0, step, x, **QUICK)
    assert report.recommendations[0]["try"] is entry
    assert entry["fix"] == "channels_last" and entry["verdict"] in VERDICTS
    assert entry["predicted_s"] is not None and entry["predicted_s"] > 0
    assert entry["measured_s"] is not None and entry["correct"] is True
    assert entry["reason"]
    # Saved with the report and read back.
    again = jupyter_brrr.Report.from_json(report.to_json())
    assert again.recommendations[0]["try"]["verdict"] == entry["verdict"]


def test_a_fix_that_cannot_run_here_or_needs_a_code_change_is_not_applicable() -> None:
    tf32 = _load("fp32_matmul_tf32_off.slow.json.gz")
    a = torch.randn(64, 64)
    entry = try_fix(tf32, 0, lambda a: a @ a, a, **QUICK)
    assert entry["fix"] == "tf32" and entry["verdict"] == "not applicable"
    assert "needs CUDA" in entry["reason"]
    attention = _load("hand_attention.slow.json.gz")
    entry = try_fix(attention, 0, lambda a: a @ a, a, **QUICK)
    assert entry["verdict"] == "not applicable" and "needs a code change" in entry["reason"]


# --- in the notebook: %%brrr --ab with a fix, --try-fixes ---------------------------------------------


@pytest.fixture(scope="module")
def ip(ipython_shell):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_cell(
        "import torch\n"
        "conv = torch.nn.Conv2d(16, 32, 3, padding=1)\n"
        "images = torch.randn(4, 16, 24, 24)"
    )
    return ipython_shell


def _cell(ip, line: str) -> str:
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        ip.run_cell_magic("brrr", line, "with torch.no_grad():\n    y = conv(images)\ny")
    return out.stdout


def test_a_cell_gets_the_fixes_as_variants_of_its_ab(ip) -> None:
    _cell(ip, "--cpu --ab bf16,channels_last --ab-budget 0.2")
    report = ip.user_ns["_brrr"]
    names = [v["name"] for v in report.ab["variants"]]
    assert names == ["eager", "bf16", "channels_last"]
    assert all(v["correct"] is True for v in report.ab["variants"][1:]), report.ab["variants"]
    # The namespace is the user's again: the input and the module in their own layout.
    assert ip.user_ns["images"].is_contiguous() and ip.user_ns["conv"].weight.is_contiguous()


def test_try_fixes_on_a_cell_without_recommendations_runs_nothing_and_says_so(ip) -> None:
    out = _cell(ip, "--cpu --try-fixes")
    report = ip.user_ns["_brrr"]
    assert report.recommendations == [] and report.ab is None
    assert "no recommendation has a fix that runs without editing the code" in out


def test_the_verdict_is_shown_with_its_recommendation_in_the_static_views() -> None:
    report = _load("fp32_matmul_tf32_off.slow.json.gz")
    a = torch.randn(64, 64)
    try_fix(report, 0, lambda a: a @ a, a, **QUICK)
    again = jupyter_brrr.Report.from_json(report.to_json())  # as a saved notebook holds it
    text = "\n".join(summary_lines(again))
    assert "Tried (tf32): not applicable" in text and "needs CUDA" in text
    html = again._repr_html_()
    assert "Tried (tf32): not applicable" in html
