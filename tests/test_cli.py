"""``python -m jupyter_brrr``: a trace's report with a target, and ``diff`` of two traces or saved
reports, run as a user runs them (a real process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


TRACE = ROOT / "tests" / "data" / "gpt2_fwd_bf16_b8_s1024.json.gz"


def _run_into(stdout: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [(str(TRACE),), ("diff", str(TRACE), str(TRACE)), ("--help",)],
    ids=["report", "diff", "help"],
)
def test_output_to_a_full_device_is_one_error_line(args, tmp_path) -> None:
    with open("/dev/full", "w") as full:
        result = _run_into(full.fileno(), *args)
    assert result.returncode == 2
    assert result.stderr == "error: cannot write the output: No space left on device.\n"


def test_output_to_a_closed_pipe_ends_quietly_and_still_writes_the_json(tmp_path) -> None:
    # The reader is gone before the first line is written (`| head` that has read enough):
    # no traceback, the status a shell shows for cat there, and --json written all the same.
    read, write = os.pipe()
    os.close(read)
    try:
        result = _run_into(write, str(TRACE), "--json", str(tmp_path / "out.json"))
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (141, "")
    assert jupyter_brrr.Report.from_json((tmp_path / "out.json").read_bytes()).summary["span_s"]
