"""The check with known answers (bench/advice_cases.py's CHECKS): each recorded workload gets
the answer the check names. Traces are recorded on a GPU (``python bench/advice_cases.py
--record`` on the H200 writes tests/data/advice_cases/; the 12 first cases also have their
H200 recordings in tests/data/advice/); sweeps and timings are recorded on the CPU too, and are
analysed again here from their measured points and runs, so that the check follows the code.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from jupyter_brrr.actions.sweep import analyse_points
from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.analysis.spread import findings
from jupyter_brrr.costs import peaks as peak_table
from jupyter_brrr.schema.report import CAUSES
from jupyter_brrr.trace import events
from jupyter_brrr.views.sweep_memory import sweep_lines

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "data" / "advice_cases"
EARLIER = ROOT / "tests" / "data" / "advice"  # the first 12 cases' H200 recordings
sys.path.insert(0, str(ROOT / "bench"))

import advice_cases  # noqa: E402

CHECKS = advice_cases.CHECKS
RECORD = "python bench/advice_cases.py --record"


def _of(kind: str) -> list[str]:
    return sorted(name for name, check in CHECKS.items() if check.kind == kind)


def test_the_check_has_twenty_cases_with_the_misfits_among_them() -> None:
    assert len(CHECKS) >= 20
    misfits = {
        *("fft_convolution", "stft_magnitude", "decode_gemv", "one_bf16_matmul", "int8_int_mm"),
        *("sweep_knee_beyond", "sweep_flat_fit", "warmup_first_runs"),
    }
    assert misfits <= set(CHECKS)
    for check in CHECKS.values():
        assert check.kind in ("trace", "sweep", "timing")
        if check.kind == "trace":
            # Each says something that can fail: a first cause with its op and fix, or what no
            # recommendation may say, or what an op's reason must say.
            assert check.cause or check.forbid or check.why, check.name
            assert check.cause is None or (check.cause in CAUSES and check.fix)
        else:
            assert (check.says and check.sizes) or check.kind == "timing"


def _trace(name: str) -> tuple[Path, dict]:
    for path in (RECORDED / f"{name}.json.gz", EARLIER / f"{name}.slow.json.gz"):
        if path.exists():
            meta = path.with_name(path.name.replace(".json.gz", ".meta.json"))
            return path, json.loads(meta.read_text())
    pytest.skip(f"{name}: not recorded yet; on the H200: {RECORD} --only {name}")


@pytest.mark.parametrize("name", _of("trace"))
def test_each_recorded_trace_gets_its_known_answer(name: str) -> None:
    check = CHECKS[name]
    path, meta = _trace(name)
    trace = events.read_trace(path)
    peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
    result = analysis.analyze(
        trace,
        peaks,
        span_s=meta["event_median_s"],
        span_source="cuda_events_unprofiled",
        math_mode=meta["math_mode"],
    )
    recommendations = result.recommendations
    titles = [r["title"] for r in recommendations]
    if check.cause:
        assert recommendations, name
        first = recommendations[0]
        names = " ".join(str(op.get("name", "")) for op in first["ops"])
        assert first["cause"] == check.cause, (name, titles)
        assert check.op in names, (name, first["ops"])
        assert check.fix in first["fix"], (name, first["fix"])
    for cause, op in check.forbid:
        for r in recommendations:
            named = " ".join(str(o.get("name", "")) for o in r["ops"]) + " " + r["title"]
            assert not (r["cause"] == cause and op in named), (name, r["title"])
    if check.why:
        op, words = check.why
        rows = result.ops[result.ops["name"] == op]
        assert len(rows), (name, op)
        assert any(words in str(why) for why in rows["why"]), (name, list(rows["why"]))


@pytest.mark.parametrize("name", _of("sweep"))
def test_each_recorded_sweep_says_what_its_sizes_show(name: str) -> None:
    path = RECORDED / f"{name}.sweep.json.gz"
    if not path.exists():
        pytest.skip(f"{name}: not recorded yet; on the H200: {RECORD} --only {name}")
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    rows = [dict(zip(doc["points"]["columns"], row, strict=True)) for row in doc["points"]["data"]]
    assert [row["size"] for row in rows] == list(CHECKS[name].sizes), "the sweep stopped early"
    result = analyse_points(
        doc["variable"],
        rows,
        device=doc["device"],
        gpu=doc["gpu"],
        capacity_bytes=doc.get("capacity_bytes"),
    )
    says = CHECKS[name].says
    assert any(says in note for note in result.notes), result.notes
    lines = sweep_lines(result.to_dict())
    assert any(says in line for line in lines)
    assert not any(line.startswith("Largest") for line in lines) or says != "fit is flat"


@pytest.mark.parametrize("name", _of("timing"))
def test_each_recorded_timing_gets_its_finding_first(name: str) -> None:
    path = RECORDED / f"{name}.timing.json"
    if not path.exists():
        pytest.skip(f"{name}: not recorded yet; {RECORD} --only {name}")
    times = json.loads(path.read_text())["times_s"]
    found = findings(times)
    assert found and found[0].kind == CHECKS[name].says, [f.text for f in found]
