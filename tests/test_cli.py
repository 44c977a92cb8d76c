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


# --- upgrade: a saved notebook's older reports ---------------------------------------------------


def _notebook(path: Path, outputs: list[dict]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# notes"), nbformat.v4.new_code_cell("%%brrr\nx")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data=o) for o in outputs]
    nbformat.write(nb, str(path))


def test_upgrade_rewrites_a_version_1_report_and_leaves_the_rest(tmp_path: Path) -> None:
    from jupyter_brrr.schema.report import MIME_TYPE, SCHEMA_VERSION

    # tests/data/reports/small.json: the one report kept in version 1 (no "display"), as a
    # notebook saved by jupyter_brrr before version 2 holds it; beside it, one of this version.
    old = json.loads((ROOT / "tests" / "data" / "reports" / "small.json").read_text())
    assert old["version"] == 1 and "display" not in old
    current = json.loads((ROOT / "tests" / "data" / "reports" / "small_v2.json").read_text())
    path = tmp_path / "saved.ipynb"
    _notebook(
        path,
        [
            {MIME_TYPE: old, "text/plain": "<old report>"},
            {MIME_TYPE: current, "text/plain": "<current report>"},
            {"text/plain": "42"},
        ],
    )
    result = cli("upgrade", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{path}: 1 report(s) rewritten in report version {SCHEMA_VERSION}\n"
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    assert nb.cells[0].source == "# notes" and nb.cells[1].source == "%%brrr\nx"
    first, second, third = (o["data"] for o in nb.cells[1].outputs)
    # The old report: its whole output as %%brrr writes it today, the roofline's geometry too.
    assert first[MIME_TYPE]["version"] == SCHEMA_VERSION
    assert first[MIME_TYPE]["display"] == current["display"]
    assert {k: v for k, v in first[MIME_TYPE].items() if k not in ("version", "display")} == {
        k: v for k, v in current.items() if k not in ("version", "display")
    }
    assert first["text/plain"].startswith("jupyter_brrr report: cell [3]")
    assert "<table" in first["text/html"] and first["image/png"]
    # The others as they were.
    assert second == {MIME_TYPE: current, "text/plain": "<current report>"}
    assert third == {"text/plain": "42"}
    # Nothing left to upgrade: the file is not written again.
    before = path.stat().st_mtime_ns
    again = cli("upgrade", str(path))
    assert again.returncode == 0 and ": 0 report(s)" in again.stdout
    assert path.stat().st_mtime_ns == before


def test_upgrade_numbers_only_respells_whole_floats_and_nothing_else(tmp_path: Path) -> None:
    """JupyterLab saves 2.0 as 2: --numbers-only writes the documents that way, values kept."""
    from jupyter_brrr.schema.report import MIME_TYPE

    doc = json.loads((ROOT / "tests" / "data" / "reports" / "small_v2.json").read_text())
    doc["summary"]["span_s"] = 2.0  # a whole-valued float, as Python writes it
    path = tmp_path / "saved.ipynb"
    _notebook(path, [{MIME_TYPE: doc, "text/plain": "<report>"}])
    assert '"span_s": 2.0' in path.read_text()
    result = cli("upgrade", "--numbers-only", str(path))
    assert result.returncode == 0, result.stderr
    text = path.read_text()
    assert '"span_s": 2,' in text and '"span_s": 2.0' not in text
    import nbformat

    (output,) = nbformat.read(str(path), as_version=4).cells[1].outputs
    assert output["data"][MIME_TYPE] == doc and output["data"]["text/plain"] == "<report>"
    again = path.read_bytes()
    assert cli("upgrade", "--numbers-only", str(path)).returncode == 0
    assert path.read_bytes() == again  # nothing left to respell: the file is not written


def test_upgrade_refuses_what_is_not_a_notebook(tmp_path: Path) -> None:
    path = tmp_path / "notes.ipynb"
    path.write_text("not json")
    result = cli("upgrade", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {path}: cannot read it as a notebook")
    assert path.read_text() == "not json"


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
