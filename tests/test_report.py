"""The report's public surface: JSON round trip, save, profile(), the CLI."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from checked import load_report

import jupyter_brrr
from jupyter_brrr import Report, SchemaError
from jupyter_brrr.schema.report import (
    CAPTURE_SUMMARY_KEYS,
    KERNEL_COLUMNS,
    OPS_COLUMNS,
    SCHEMA_VERSION,
    SUMMARY_KEYS,
)

DATA = Path(__file__).parent / "data"


def test_summary_has_the_public_keys(gpt2: Report) -> None:
    for key in SUMMARY_KEYS:
        assert key in gpt2.summary
    assert gpt2.summary["peaks"] is not None
    assert set(gpt2.summary["peaks"]) >= {"device", "source", "flops", "bandwidth"}


def interface_fields(name: str) -> list[str]:
    """The field names of a document type the browser's types are generated with
    (js/src/generated/schema_types.ts, from the Python schema)."""
    text = (Path(__file__).parents[1] / "js" / "src" / "generated" / "schema_types.ts").read_text()
    body = re.search(r"export interface " + name + r" \{(.*?)\n\}", text, re.S)
    assert body, name
    return re.findall(r"^  (\w+)\??:", body.group(1), re.M)


def test_a_captured_summary_has_the_capture_keys_on_both_sides() -> None:
    report = jupyter_brrr.profile(lambda a: a * 2, torch.ones(8), warmup=1, repeat=3)
    assert set(SUMMARY_KEYS) | set(CAPTURE_SUMMARY_KEYS) <= set(report.summary)
    # The browser's generated types declare each of them, and every field of the timing.
    assert set(CAPTURE_SUMMARY_KEYS) <= set(interface_fields("IRawSummary"))
    assert report.summary["timing"] is not None
    assert set(interface_fields("IRawTiming")) == set(report.summary["timing"])
    assert "fallback_reason" in interface_fields("IRawABVariant")


def test_json_round_trip(gpt2: Report) -> None:
    text = gpt2.to_json()
    doc = json.loads(text)
    assert doc["version"] == SCHEMA_VERSION
    assert doc["ops"]["columns"] == list(OPS_COLUMNS)
    assert doc["kernels"]["columns"] == list(KERNEL_COLUMNS)
    again = Report.from_json(text)
    assert again.to_json() == text
    pd.testing.assert_series_equal(
        again.ops["gpu_time_s"], gpt2.ops["gpu_time_s"], check_names=False
    )
    assert again.summary == json.loads(json.dumps(gpt2.summary))


def test_newer_schema_is_refused_clearly(gpt2: Report) -> None:
    doc = gpt2.to_dict()
    doc["version"] = SCHEMA_VERSION + 1
    with pytest.raises(SchemaError, match="Update jupyter_brrr"):
        Report.from_json(json.dumps(doc))
    with pytest.raises(SchemaError, match="Not a jupyter_brrr report"):
        Report.from_json('{"hello": 1}')


def test_save_writes_report_and_trace(gpt2: Report, tmp_path: Path) -> None:
    files = gpt2.save(tmp_path / "gpt2.json")
    assert [f.name for f in files] == ["gpt2.json", "gpt2.trace.json.gz"]
    assert Report.from_json(files[0].read_text()).summary["device"] == "NVIDIA H200"
    # The trace beside it is the raw one, loadable by Perfetto and by us.
    with gzip.open(files[1]) as f:
        assert json.loads(f.read())["traceEvents"]
    assert len(load_report(files[1]).kernels) == len(gpt2.kernels)


def test_large_reports_aggregate_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_brrr.report import report as report_module

    resnet = load_report(DATA / "resnet50_train_amp_b64.json.gz")
    monkeypatch.setattr(report_module, "KERNEL_LIMIT", 100)
    doc = resnet.to_dict()
    assert doc["kernels"]["aggregated"] is True
    assert doc["kernels"]["total"] == len(resnet.kernels)
    counts = pd.DataFrame(doc["kernels"]["data"], columns=doc["kernels"]["columns"])
    assert counts["count"].sum() == len(resnet.kernels)
    assert counts["dur_s"].sum() == pytest.approx(resnet.kernels["dur_s"].sum())


def test_resnet_report_json_stays_small() -> None:
    resnet = load_report(DATA / "resnet50_train_amp_b64.json.gz")
    assert len(resnet.to_json()) < 2_000_000


def test_profile_a_function_on_cpu() -> None:
    calls = []

    def step(a: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        calls.append(1)
        return (a @ a) * scale

    report = jupyter_brrr.profile(step, torch.ones(32, 32), scale=2.0, warmup=1, repeat=2)
    assert len(calls) == 1 + 2 + 1
    assert report.summary["runs"]["total"] == 4
    assert "aten::mm" in set(report.ops["name"])
    mm = report.ops[report.ops["name"] == "aten::mm"].iloc[0]
    assert mm["flops"] == 2 * 32**3
    assert not torch.autograd.profiler._is_profiler_enabled


def test_profile_reraises_errors() -> None:
    def broken() -> None:
        torch.ones(2) + 1
        raise RuntimeError("broken step")

    with pytest.raises(RuntimeError, match="broken step"):
        jupyter_brrr.profile(broken)
    assert not torch.autograd.profiler._is_profiler_enabled


def test_cli_prints_summary_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_brrr",
            str(DATA / "tiny_mlp_eager.json.gz"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "NVIDIA H200" in result.stdout
    assert "idle" in result.stdout and "aten::addmm" in result.stdout
    assert Report.from_json(out.read_text()).summary["kernel_count"] == 100


def test_cli_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", str(bad)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "bad.json" in result.stderr and "truncated" in result.stderr


def test_profiling_prints_nothing_on_the_native_stderr(capfd: pytest.CaptureFixture) -> None:
    # Some torch builds log a Kineto line on file descriptor 2 at each profiler start and stop,
    # which a notebook shows under the cell; the capture silences exactly those two calls.
    jupyter_brrr.profile(lambda: torch.ones(4) + 1)
    assert "profiler_st" not in capfd.readouterr().err


def test_save_beside_the_trace_it_was_loaded_from(tmp_path: Path) -> None:
    # Reloading a saved report's trace and saving again under the same name: the trace is
    # already where save() would copy it.
    trace = tmp_path / "run.trace.json.gz"
    shutil.copyfile(DATA / "tiny_mlp_eager.json.gz", trace)
    before = trace.read_bytes()
    written = load_report(trace).save(tmp_path / "run.json")
    assert written == [tmp_path / "run.json", trace]
    assert trace.read_bytes() == before


def test_reports_written_before_the_communication_part_read_it_as_zero() -> None:
    doc = json.loads((DATA / "reports" / "small.json").read_text())
    assert "communication_s" not in doc["summary"]
    report = Report.from_json(doc)
    split = report.split()
    assert split["communication"] == 0.0
    assert split.sum() == pytest.approx(doc["summary"]["span_s"])
    # And their A/B splits too.
    ab = Report.from_json((DATA / "reports" / "ab.json").read_text()).ab
    assert ab is not None
    assert all(v["split"]["communication_s"] == 0.0 for v in ab["variants"] if v.get("split"))


def test_modelled_share_and_cost_model_travel_in_the_json(gpt2: Report) -> None:
    doc = json.loads(gpt2.to_json())
    assert 0.99 <= doc["summary"]["modelled_share"] <= 1.0
    column = doc["ops"]["columns"].index("cost_model")
    assert {row[column] for row in doc["ops"]["data"]} <= {"formula", "shapes", "estimate", ""}
