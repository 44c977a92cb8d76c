"""``python -m jupyter_brrr``: a trace's report with a target, and ``diff`` of two traces or saved
reports, run as a user runs them (a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jupyter_brrr

ROOT = Path(__file__).resolve().parents[1]
ADVICE = ROOT / "tests" / "data" / "advice"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )


def test_diff_of_two_traces(tmp_path: Path) -> None:
    out = tmp_path / "change.json"
    result = cli(
        "diff",
        str(ADVICE / "elementwise_chain.slow.json.gz"),
        str(ADVICE / "elementwise_chain.fixed.json.gz"),
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("jupyter_brrr change: elementwise_chain.slow.json.gz ->")
    assert "4.25x faster, uncertain" in lines[1]
    assert (
        "triton_poi_fused_add_cos_exp_mul_sin_0 is now the largest share: 0% -> 100%"
        in result.stdout
    )
    assert json.loads(out.read_text())["schema"] == "jupyter_brrr.comparison"


def test_diff_of_a_saved_report_and_a_trace(tmp_path: Path) -> None:
    jupyter_brrr.load(ADVICE / "small_gemm.slow.json.gz").save(tmp_path / "before.json")
    result = cli("diff", "before.json", str(ADVICE / "small_gemm.fixed.json.gz"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "jupyter_brrr change: small_gemm.slow.json.gz -> small_gemm.fixed.json.gz" in result.stdout
    )


def test_diff_of_a_missing_file_says_so() -> None:
    result = cli("diff", "nowhere.json.gz", str(ADVICE / "small_gemm.fixed.json.gz"))
    assert result.returncode == 2
    assert "'nowhere.json.gz' does not exist" in result.stderr


def test_trace_with_a_target() -> None:
    result = cli(str(ADVICE / "hand_attention.slow.json.gz"), "--target", "1ms")
    assert result.returncode == 0, result.stderr
    assert "target 1ms: 1.31 ms over the target: 2.31 ms per run against 1 ms" in result.stdout
    bad = cli(str(ADVICE / "hand_attention.slow.json.gz"), "--target", "soon")
    assert bad.returncode == 2 and "Cannot read the target 'soon'" in bad.stderr
