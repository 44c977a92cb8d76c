"""What the renderers draw, computed once (jupyter_brrr/display.py): the formatting that the
Python views and the browser app share, checked against the cases that js/src/format.ts is
checked against too (tests/data/display_cases.json); the main dtype and the roofline's geometry
that the report JSON carries; and reports of the previous schema version.

    python tests/test_display.py    # rewrites tests/data/display_cases.json from the Python side
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from checked import load_report

DATA = Path(__file__).parent / "data"
CASES = DATA / "display_cases.json"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_brrr.analysis.analyze import amdahl  # noqa: E402
from jupyter_brrr.report import display  # noqa: E402
from jupyter_brrr.report.report import Report  # noqa: E402
from jupyter_brrr.schema.report import SCHEMA_VERSION  # noqa: E402
from jupyter_brrr.views import style  # noqa: E402

# The values of display_cases.json: boundaries of units and notations, halves (rounded away from
# zero on the exact binary value, as JavaScript does), negatives and missing values.
SIG = [None, 0, 1e-10, 4.4e-9, 5e-7, 1e-6, 9.995e-4, 0.0012345, 0.0125, 0.125, 0.3333333, 0.5,
       1, 1.0005, 2.675, 9.995, 12.345, 99.95, 999.5, 1234.5, 45873.2, 999999.4, 1e6, 123456789,
       2.5e15, -0.0034, -1234.5]  # fmt: skip
SECONDS = [None, 0, 1e-12, 3.21e-9, 6.77e-5, 9.9999e-4, 1e-3, 0.0459, 0.1235, 1, 2.5, 63.5, 4000,
           -0.0021, 5.55e-7]  # fmt: skip
QUANTITY = [(None, "FLOP/s"), (0, "FLOP/s"), (7.87e14, "FLOP/s"), (4.8e12, "B/s"),
            (1.26e12, "B/s"), (999.5, "B/s"), (1500, "B"), (1.98e15, "FLOP/s"),
            (3.3e18, "FLOP/s"), (42, "FLOP"), (6.7e13, "FLOP/s"), (1e9, "B/s")]  # fmt: skip
BYTES = [None, 0, 512, 999.4, 999.6, 1000, 1_690_000_000, 150e9, 1.5e12, 2.5e15, 12345]
AMDAHL = [(0, 2), (0.25, 2), (0.5, 10), (0.6, 1e9), (0.9, 3.3), (1, 2), (1, 100), (0.403, 31.62)]


def cases() -> dict:
    return {
        "about": "Formatting, Amdahl and style cases that jupyter_brrr/display.py (tests/test_display.py) "
        "and js/src/format.ts (js/src/__tests__/format.spec.ts) both check: one definition in two "
        "languages. Written from the Python side by `python tests/test_display.py`.",
        "sig": [[v, display.sig(v)] for v in SIG],
        "seconds": [[v, display.seconds(v)] for v in SECONDS],
        "quantity": [[v, unit, display.quantity(v, unit)] for v, unit in QUANTITY],
        "bytes": [[v, display.nbytes(v)] for v in BYTES],
        "amdahl": [[p, n, amdahl(p, n), None if p >= 1 else 1 / (1 - p)] for p, n in AMDAHL],
        # One colour and one label per bottleneck (views/style.py; js/src/colors.ts).
        "style": {"colours": style.COLOURS, "labels": style.LABELS},
    }


def write_cases() -> None:
    lines = [f'  "about": {json.dumps(cases()["about"])}']
    for key, rows in cases().items():
        if key == "style":
            lines.append(f'  "style": {json.dumps(rows, ensure_ascii=False)}')
        elif key != "about":
            body = ",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in rows)
            lines.append(f'  "{key}": [\n{body}\n  ]')
    CASES.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


# --- formatting --------------------------------------------------------------------------------


def test_the_shared_cases_are_what_python_writes_today() -> None:
    # The browser app is checked against the same file (vitest): both sides write these.
    assert json.loads(CASES.read_text(encoding="utf-8")) == json.loads(json.dumps(cases()))


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.125, "0.125"), (2.675, "2.67"), (0.0125, "0.0125"), (1234.5, "1235"), (999.5, "1000")],
)
def test_halves_round_as_javascript_does_on_the_exact_binary_value(value: float, text: str) -> None:
    # 2.675 is 2.67499999... in binary: down; 1234.5 and 999.5 are exact halves: away from zero.
    assert display.sig(value) == text


def test_times_use_the_largest_unit_that_keeps_one_or_more() -> None:
    assert display.seconds(0.0459) == "45.9 ms"
    assert display.seconds(6.77e-5) == "67.7 µs"
    assert display.seconds(None) == display.seconds(float("nan")) == "\u2014"
    assert display.quantity(7.87e14, "FLOP/s") == "787 TFLOP/s"
    assert display.nbytes(1.69e9) == "1.69 GB"


def test_the_views_format_times_with_the_shared_rule(gpt2_report: Report) -> None:
    from jupyter_brrr.views import format as fmt
    from jupyter_brrr.views import text

    assert fmt.seconds(6.77e-5) == display.seconds(6.77e-5)
    assert fmt.rate(4.8e12, "B/s") == display.quantity(4.8e12, "B/s")
    assert fmt.size(1.69e9) == display.nbytes(1.69e9)
    out = text.render(gpt2_report)
    assert "µs" in out and " us " not in out


# --- the specs the report JSON carries ---------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_report() -> Report:
    return load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")


def test_the_report_json_carries_the_display_specs(gpt2_report: Report) -> None:
    doc = json.loads(gpt2_report.to_json())
    assert doc["version"] == SCHEMA_VERSION == 2
    spec = doc["display"]["roofline"]
    assert doc["display"]["main_dtype"] == "bf16"
    placed = gpt2_report.ops[
        (gpt2_report.ops["flops"] > 0)
        & (gpt2_report.ops["bytes"] > 0)
        & (gpt2_report.ops["gpu_time_s"] > 0)
    ]
    x = placed["flops"] / placed["bytes"]
    y = placed["flops"] / placed["gpu_time_s"]
    (xmin, xmax), (ymin, ymax) = spec["x_range"], spec["y_range"]
    assert xmin <= x.min() and x.max() <= xmax
    assert y.max() <= ymax and ymin <= ymax / 1e7
    peaks = gpt2_report.summary["peaks"]
    assert peaks is not None
    bw = peaks["bandwidth"]
    assert spec["bandwidth"]["label"] == "memory 4.8 TB/s"
    labels = [c["label"] for c in spec["ceilings"]]
    assert "bf16, fp16 990 TFLOP/s (ridge 206 FLOP/B)" in labels or any(
        "bf16" in label and "990 TFLOP/s" in label for label in labels
    )
    for c in spec["ceilings"]:
        assert c["ridge"] == pytest.approx(c["flops_per_s"] / bw)
        assert xmin <= c["ridge"] <= xmax
    peaks_desc = [c["flops_per_s"] for c in spec["ceilings"]]
    assert peaks_desc == sorted(peaks_desc, reverse=True)
    assert next(c for c in spec["ceilings"] if "bf16" in c["dtypes"])["used"]


def test_the_main_dtype_is_the_roof_of_most_flops_with_a_peak() -> None:
    import pandas as pd

    ops = pd.DataFrame(
        {
            "flops": [5e9, 3e9, 4e9, 9e9, 1e12],
            "gpu_time_s": [1e-3, 1e-3, 1e-3, 1e-3, 0.0],
            "dtype": ["float32", "bf16", "bf16", "int4", "fp8"],
            "roof": ["tf32", "", None, "", ""],
        }
    )
    peaks = {"flops": {"bf16": 9.9e14, "tf32": 4.9e14, "fp8": 2e15}}
    # bf16: 7e9 (its roof taken from its dtype); tf32: 5e9; int4 has no peak, fp8 no GPU time.
    assert display.main_dtype(ops, peaks) == "bf16"
    assert display.main_dtype(ops, {"flops": {"tf32": 1.0}}) == "tf32"
    assert display.main_dtype(ops, None) is None


def test_a_report_of_the_previous_version_opens_and_gets_the_specs() -> None:
    doc = json.loads((DATA / "reports" / "small.json").read_text())
    assert doc["version"] == 1 and "display" not in doc
    report = Report.from_json(doc)
    again = json.loads(report.to_json())
    assert again["version"] == SCHEMA_VERSION
    assert again["display"]["roofline"]["ceilings"]
    # The browser app reads this file for a report of this version (js/src/__tests__).
    written = json.loads((DATA / "reports" / "small_v2.json").read_text())
    assert written["display"] == again["display"]
    assert {k: v for k, v in written.items() if k not in ("version", "display")} == {
        k: v for k, v in again.items() if k not in ("version", "display")
    }


def test_a_report_without_gpu_work_has_no_roofline() -> None:
    report = Report.from_json((DATA / "reports" / "cpu_only.json").read_text())
    assert json.loads(report.to_json())["display"] == {"main_dtype": None, "roofline": None}


def test_the_roofline_picture_draws_the_carried_geometry(gpt2_report: Report) -> None:
    from jupyter_brrr.views import pictures

    spec = json.loads(gpt2_report.to_json())["display"]["roofline"]
    picture = pictures.roofline_canvas(gpt2_report)
    (ax,) = picture.axes
    assert ax.x_range == pytest.approx(tuple(spec["x_range"]))
    assert ax.y_range == pytest.approx(tuple(spec["y_range"]))
    texts = {t.text for t in picture.texts}
    used = [c["label"] for c in spec["ceilings"] if c["used"]]
    assert used and set(used) <= texts
    assert spec["bandwidth"]["label"] in texts


def test_the_saved_tour_notebook_holds_reports_of_this_version() -> None:
    # Rewritten by `python -m jupyter_brrr upgrade --all` when the format changes: the committed
    # notebook opens with its results, in JupyterLab and on GitHub (its static fallback).
    from jupyter_brrr.schema.report import MIME_TYPE, check_report

    notebook = json.loads((DATA.parent.parent / "notebooks" / "tour_h200.ipynb").read_text())
    docs = [
        output["data"][MIME_TYPE]
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if MIME_TYPE in output.get("data", {})
    ]
    assert len(docs) >= 6
    for doc in docs:
        check_report(doc)
        assert doc["version"] == SCHEMA_VERSION
        assert doc["display"] == json.loads(Report.from_json(doc).to_json())["display"]


def test_numbers_round_trip_in_the_shared_rule() -> None:
    for value in (1.5, 0.000123, 98765.4321, 3.3e18):
        assert math.isclose(float(display.sig(value, 12)), value, rel_tol=1e-11)


if __name__ == "__main__":
    write_cases()
    print(f"wrote {CASES}")
