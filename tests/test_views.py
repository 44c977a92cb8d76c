"""The views of a report: PNG pictures, static HTML, the output bundle and the standalone HTML
file, on real H200 traces, a CPU-only trace, a live CPU report, the A/B example and a report
whose names are XSS payloads."""

from __future__ import annotations

import base64
import html as html_module
import io
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pytest
from browser.pages import offline_page, page_data
from checked import load_report

import jupyter_brrr
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.report import MIME_TYPE
from jupyter_brrr.views import bundle, formats, html, pictures, render, standalone
from jupyter_brrr.views import format as fmt
from jupyter_brrr.views.style import LABELS

DATA = Path(__file__).parent / "data"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
XSS = (
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "</script><script>alert(3)</script>",
    '"><svg onload=alert(4)>',
)
# Markup that must never reach a page from report strings.
RAW = ("<img src=x", "<script>alert", "<svg onload", "onerror=alert(1)>")


@pytest.fixture(scope="module")
def resnet() -> Report:
    return load_report(DATA / "resnet50_train_amp_b64.json.gz")


@pytest.fixture(scope="module")
def cpu_trace() -> Report:
    return load_report(DATA / "cpu_only.json.gz")


@pytest.fixture(scope="module")
def cpu_live() -> Report:
    import torch

    model = torch.nn.Sequential(*[torch.nn.Linear(32, 32) for _ in range(4)])
    x = torch.randn(4, 32)

    def step() -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    return jupyter_brrr.profile(step, cpu=True)


@pytest.fixture(scope="module")
def ab() -> Report:
    return Report.from_json((DATA / "reports" / "ab.json").read_text())


def xss_report(source: Report) -> Report:
    """A real report whose every string (ops, shapes, modules, kernels, CPU ops, notes, advice,
    device, peaks' source, A/B variants and errors) is an XSS payload."""
    doc = json.loads(source.to_json())
    report = Report.from_json(doc)
    n = len(XSS)
    ops = report.ops.copy()
    ops["name"] = [XSS[i % n] + " aten::x<&>" for i in range(len(ops))]
    ops["shapes"] = [XSS[(i + 1) % n] for i in range(len(ops))]
    ops["module"] = XSS[3]
    ops["category"] = [XSS[i % n] if i < 3 else c for i, c in enumerate(ops["category"])]
    report.ops = ops
    kernels = report.kernels.copy()
    kernels["name"] = [XSS[i % n] for i in range(len(kernels))]
    kernels["op"] = XSS[0]
    report.kernels = kernels
    cpu_ops = report.cpu_ops.copy()
    cpu_ops["name"] = [XSS[i % n] for i in range(len(cpu_ops))]
    report.cpu_ops = cpu_ops
    report.name = XSS[1]
    report.notes = [*report.notes, XSS[0]]
    report.summary = report.summary.copy()
    report.summary["device"] = XSS[2]
    peaks = report.summary.get("peaks")
    if peaks:
        report.summary["peaks"] = {**peaks, "source": XSS[3]}
    report.recommendations = [
        {"bottleneck": XSS[0], "title": XSS[1], "detail": XSS[2], "share": 0.5}
    ]
    report.ab = {
        "variants": [
            {
                "name": XSS[0],
                "median_s": 1e-3,
                "iqr_s": 1e-5,
                "speedup": 1.5,
                "speedup_low": 1.4,
                "speedup_high": 1.6,
                "verdict": XSS[1],
                "correct": False,
                "max_abs_err": 0.5,
                "error": XSS[2],
            }
        ],
        "notes": [XSS[3]],
    }
    return report


def png_size(data: bytes | None) -> tuple[int, int]:
    assert data is not None, "no picture"
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    assert data[12:16] == b"IHDR"
    size = pictures.png_size(data)
    try:
        from PIL import Image
    except ImportError:  # the header is enough
        return size
    image = Image.open(io.BytesIO(data))
    image.verify()
    assert image.size == size
    return size


# --- pictures ------------------------------------------------------------------------------------


def test_gpu_pictures_are_pngs_of_the_right_size(gpt2: Report) -> None:
    pics = pictures.pictures(gpt2)
    assert png_size(pics.split) == (640, 100)
    assert png_size(pics.main) == (640, 360)
    assert png_size(pics.combined) == (640, 460)
    # Cached: drawing happens once per report.
    assert pictures.pictures(gpt2) is pics


@pytest.mark.parametrize("name", ["cpu_trace", "cpu_live"])
def test_cpu_pictures_show_top_ops_and_no_split(name: str, request: pytest.FixtureRequest) -> None:
    report = request.getfixturevalue(name)
    pics = pictures.pictures(report)
    assert pics.split is None
    width, height = png_size(pics.main)
    assert width == 640 and 100 <= height <= 360
    assert pics.combined == pics.main


def test_pictures_with_cached_text_are_those_drawn_afresh(
    gpt2: Report, resnet: Report, cpu_trace: Report
) -> None:
    """The canvas keeps each text's rendered glyphs for the next picture (tick labels, titles
    and op names repeat): the pixels are those drawn with an empty cache, on the first picture
    and on the ones after it."""
    from jupyter_brrr.views import canvas

    drawings = [
        lambda: pictures.split_canvas(gpt2),
        lambda: pictures.roofline_canvas(gpt2),
        lambda: pictures.roofline_canvas(resnet),
        lambda: pictures.cpu_ops_canvas(cpu_trace),
    ]
    for _ in range(2):
        for make in drawings:
            cached = make().pixels()  # pyright: ignore[reportOptionalMemberAccess]  # each of these draws
            canvas._text_mask.cache_clear()
            assert np.array_equal(cached, make().pixels())  # pyright: ignore[reportOptionalMemberAccess]


def test_report_pictures_are_drawn_without_matplotlib() -> None:
    """matplotlib's layout and glyph rendering cost 80-110 ms a report (issue 26): the report's
    pictures are Pillow's, with the fonts matplotlib ships, and matplotlib is not imported."""
    code = (
        "import sys, jupyter_brrr\n"
        "from jupyter_brrr.views import pictures\n"
        f"for name in ('gpt2_fwd_bf16_b8_s1024', 'cpu_only'):\n"
        f"    r = jupyter_brrr.load({str(DATA)!r} + '/' + name + '.json.gz')\n"
        "    assert pictures.pictures(r).main[:4] == b'\\x89PNG'\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("which", ["gpt2", "resnet", "cpu_trace", "cpu_live"])
def test_every_text_of_a_picture_lies_inside_it(which: str, request: pytest.FixtureRequest) -> None:
    """No label is cut at the picture's edge (a long op name is shortened with an ellipsis to
    the room left of its bar)."""
    report = request.getfixturevalue(which)
    gpu = bool(report.summary.get("gpu"))
    drawn = (
        [pictures.split_canvas(report), pictures.roofline_canvas(report)]
        if gpu
        else [pictures.cpu_ops_canvas(report)]
    )
    for picture in drawn:
        assert picture is not None and picture.texts
        for text in picture.texts:
            left, top, right, bottom = text.box
            assert left >= 0 and right <= picture.width, text
            assert top >= 0 and bottom <= picture.height, text


def test_the_split_picture_says_the_split_and_its_legend(gpt2: Report) -> None:
    s = cast(Mapping[str, Any], gpt2.summary)  # read by name: the split's parts
    span = float(s["span_s"])
    said = [t.text for t in pictures.split_canvas(gpt2).texts]
    assert said[0].startswith(f"GPU span {fmt.seconds(span)} ")
    for part in ("compute", "memory", "other", "idle"):
        seconds = float(s[f"{part}_s"])
        assert f"{LABELS[part]} {fmt.seconds(seconds)} ({100 * seconds / span:.0f}%)" in said


def test_the_top_ops_picture_names_each_op_and_its_time(cpu_trace: Report) -> None:
    rows = cpu_trace.ops.nlargest(12, "self_cpu_time_s")
    total = float(cpu_trace.ops["self_cpu_time_s"].sum())
    said = [t.text for t in pictures.cpu_ops_canvas(cpu_trace).texts]  # pyright: ignore[reportOptionalMemberAccess]  # a CPU report draws
    assert said[-1] == "Top ops by self CPU time (no GPU work recorded: no roofline)"
    for name, value in zip(rows["name"], rows["self_cpu_time_s"], strict=True):
        assert f" {fmt.seconds(value)} ({fmt.percent(value, total)})" in said
        assert any(t.startswith(str(name).removeprefix("aten::")[:20]) for t in said), name


def test_a_single_picture_is_encoded_once(cpu_trace: Report) -> None:
    pics = pictures._draw_all(cpu_trace)
    assert pics.combined is pics.main


@pytest.mark.parametrize(
    "trace",
    [
        "tiny_mlp_eager",
        "coscos_eager",
        "coscos_compiled",
        "a100_alexnet",
        "triton_example",
        "v100_resnet_ns",
    ],
)
def test_pictures_for_every_trace(trace: str) -> None:
    report = load_report(DATA / f"{trace}.json.gz")
    pics = pictures.pictures(report)
    assert png_size(pics.main)[0] == 640
    assert pics.split is None or png_size(pics.split) == (640, 100)


def test_pictures_of_a_report_without_peaks(gpt2: Report) -> None:
    report = Report.from_json(gpt2.to_json())
    report.summary["peaks"] = None
    assert png_size(pictures.pictures(report).main) == (640, 360)


def test_core_imports_no_ui_library() -> None:
    code = (
        "import sys, jupyter_brrr\n"
        f"r = jupyter_brrr.load({str(DATA / 'coscos_eager.json.gz')!r})\n"
        "r.to_json(); repr(r)\n"
        "bad = [m for m in ('matplotlib', 'bokeh', 'PIL', 'ipywidgets') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- static HTML and the bundle ------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


ALLOWED_TAGS = {
    "div",
    "span",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "b",
    "code",
    "img",
}


def assert_static(fragment: str) -> None:
    lowered = fragment.lower()
    for tag in ("<script", "<iframe", "<style", "<link", "<object", "<embed"):
        assert tag not in lowered, f"{tag} in the static HTML"
    parser = _Tags()
    parser.feed(fragment)
    assert parser.tags
    for tag, attrs in parser.tags:
        assert tag in ALLOWED_TAGS, tag
        for key, value in attrs:
            # Inline style attributes are fine; event handlers and other sources are not.
            assert key in {"style", "class", "title", "alt", "width", "colspan", "src"}, key
            if key == "src":
                assert tag == "img" and value and value.startswith("data:image/png;base64,")


@pytest.mark.parametrize("name", ["gpt2", "resnet", "cpu_trace", "cpu_live", "ab"])
def test_static_html_is_safe_and_complete(name: str, request: pytest.FixtureRequest) -> None:
    report = request.getfixturevalue(name)
    fragment = html.render(report)
    assert_static(fragment)
    assert "<table" in fragment
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', fragment)
    gpu = report.summary.get("gpu")
    assert len(images) == (2 if gpu else 1)
    for image in images:
        png_size(base64.b64decode(image))
    assert ("Top 15 of" if len(report.ops) > 15 else "Top ") in fragment
    if gpu:
        assert "What to try first" in fragment and "GPU busy" in fragment
        # Each recommendation's saving sentence under its fix: replayed where the step's graph
        # is known (the traces' reports), an additive bound where it is not (an older report).
        for advice in (a for a in report.recommendations if a.get("cause")):
            detail = advice["detail"]
            at = max(detail.rfind("Predicted by replaying"), detail.rfind("At best"))
            assert at >= 0, detail
            assert html_module.escape(detail[at:]) in fragment
        if name in ("gpt2", "resnet"):
            assert "Predicted by replaying the step&#x27;s dependencies" in fragment


@pytest.mark.parametrize(
    ("source", "label"),
    [
        ("cuda_events_unprofiled", "median of 5 unprofiled runs timed with CUDA events"),
        ("host_clock_unprofiled", "median of 5 unprofiled runs timed with the host clock"),
        ("cuda_events_profiled", "the profiled run, timed with CUDA events"),
        ("host_clock_profiled", "the profiled run, timed with the host clock"),
        ("trace", "from the trace"),
    ],
)
def test_span_source_says_where_the_span_comes_from(gpt2: Report, source: str, label: str) -> None:
    # Every value capture writes, in the text and the static HTML alike.
    summary = {**gpt2.summary, "span_source": source, "runs": {"timed": 5, "total": 7}}
    report = Report.from_json(json.dumps({**json.loads(gpt2.to_json()), "summary": summary}))
    assert f"per run ({label})" in repr(report)
    assert f"per run ({label})" in html.render(report)


def test_the_timed_runs_clocks_and_the_cells_memory_are_shown(gpt2: Report) -> None:
    # The summary as a sustained capture on the H200 writes it (numbers of one such run).
    timing = {
        "protocol": "sustained",
        "clock": "cuda_events",
        "warmup_runs": 142,
        "warmup_s": 1.02,
        "warmup_ended": "settled",
        "warmup_sm_clock_mhz": [1980.0, 1740.0],
        "timed_runs": 5,
        "min_s": 6.78e-3,
        "q1_s": 6.8e-3,
        "median_s": 6.83e-3,
        "q3_s": 6.86e-3,
        "max_s": 6.9e-3,
        "spread": 0.06e-3 / 6.83e-3,
        "sm_clock_mhz": [1755.0, 1740.0, 1740.0, 1725.0, 1740.0],
        "power_w": [699.0, 700.0, 698.0, 700.0, 699.0],
        "sensors": None,
        "findings": [{"kind": "trend", "text": "The timed runs got steadily slower ..."}],
    }
    memory = {
        "peak_memory_bytes": 1.5e9,
        "memory_before_bytes": 1.1e9,
        "memory_increase_bytes": 0.4e9,
        "memory_after_bytes": 1.3e9,
    }
    summary = {**gpt2.summary, "timing": timing, **memory}
    report = Report.from_json(json.dumps({**json.loads(gpt2.to_json()), "summary": summary}))
    rows = dict(html.key_figures(report))
    assert rows["timed runs"] == (
        "5 runs: min 6.78 ms, median 6.83 ms, IQR 6.8 ms - 6.86 ms (0.9%); sustained warm-up, "
        "142 runs in 1 s; SM clock 1725-1755 MHz, power 698-700 W; THE RUNS DISAGREE (trend: "
        "see the notes)"
    )
    assert rows["peak memory"] == (
        "1.5 GB of 150 GB device memory (1%): 1.1 GB allocated before the run, + 400 MB by one run"
    )
    # Three runs: their quartiles are interpolated, so the line quotes the extremes, and the
    # spread as the range's share of the median, never as an IQR.
    three = {**timing, "timed_runs": 3, "spread": 5.841}
    assert fmt.timed_runs({**summary, "timing": three}).startswith(  # pyright: ignore[reportOptionalMemberAccess]
        "3 runs: min 6.78 ms, median 6.83 ms, max 6.9 ms (range 584.1% of the median); "
    )
    text = repr(report)
    assert "timed runs: 5 runs: min 6.78 ms" in text
    assert "allocated before the run, + 400 MB by one run" in text
    # A loaded trace has no timed runs: no line for them.
    assert "timed runs" not in dict(html.key_figures(gpt2))


def test_a_fallback_reads_unchanged(ab: Report) -> None:
    doc = json.loads(ab.to_json())
    compiled = next(v for v in doc["ab"]["variants"] if v["name"] != "eager")
    compiled.update(verdict="fallback", speedup=None, fallback_reason="line 3: no RNN")
    report = Report.from_json(json.dumps(doc))
    assert report.ab is not None
    row = next(r for r in html.ab_rows(report.ab) if r["variant"] == compiled["name"])
    assert row["verdict"] == "unchanged: fell back to eager" and row["speedup"] == "\u2014"


def test_ab_table(ab: Report) -> None:
    fragment = html.render(ab)
    assert "A/B comparison" in fragment
    for text in (
        "torch.compile",
        "CUDA graph",
        "1.67x (1.63–1.70)",
        "faster",
        "outputs differ",
        "failed",
    ):
        assert text in fragment
    assert "out of shared memory" in fragment  # the error of the failed variant, in full


@pytest.mark.parametrize("name", ["gpt2", "cpu_trace"])
def test_xss_report_is_escaped_in_static_html(name: str, request: pytest.FixtureRequest) -> None:
    report = xss_report(request.getfixturevalue(name))
    fragment = html.render(report)
    assert_static(fragment)
    for raw in RAW:
        assert raw not in fragment
    assert "&lt;img src=x onerror=alert(1)&gt;" in fragment
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in fragment
    assert "aten::x&lt;&amp;&gt;" in fragment
    text = bundle.mimebundle(report)["text/plain"]
    assert XSS[0] in text  # plain text keeps the names as they are


@pytest.mark.parametrize("name", ["gpt2", "cpu_live", "ab"])
def test_bundle(name: str, request: pytest.FixtureRequest) -> None:
    report = request.getfixturevalue(name)
    data = bundle.mimebundle(report)
    assert set(data) == {MIME_TYPE, "text/html", "image/png", "text/plain"}
    assert data[MIME_TYPE]["schema"] == "jupyter_brrr.report"
    json.dumps(data[MIME_TYPE], allow_nan=False)
    png = base64.b64decode(data["image/png"])
    assert png == pictures.pictures(report).combined
    png_size(png)
    assert data["text/plain"].startswith("jupyter_brrr report")
    assert report._repr_mimebundle_().keys() == data.keys()


def test_bundle_without_matplotlib(gpt2: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pictures, "available", lambda: False)
    data = bundle.mimebundle(gpt2)
    assert "image/png" not in data
    assert "<table" in data["text/html"] and "data:image/png" not in data["text/html"]
    assert_static(data["text/html"])


def test_empty_report(cpu_trace: Report) -> None:
    empty = Report(
        summary=cpu_trace.summary.copy(),
        ops=cpu_trace.ops.iloc[:0],
        kernels=cpu_trace.kernels.iloc[:0],
    )
    assert empty.empty
    fragment = html.render(empty)
    assert "nothing to show" in fragment
    assert_static(fragment)
    assert "image/png" not in bundle.mimebundle(empty)
    # Every format draws it; it has no picture.
    assert render(empty, "png") is None
    assert render(empty, "text") == repr(empty)
    assert page_data(render(empty, "standalone")) == json.loads(empty.to_json())


# --- the standalone HTML file -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "cpu_live", "ab"])
def test_save_html_is_one_offline_file_with_the_app_and_the_report(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    report = request.getfixturevalue(name)
    path = report.save_html(tmp_path / "report.html")
    page = path.read_text(encoding="utf-8")
    # One offline file: the app (with BokehJS in it) and its styles inlined, the same for
    # every report, and the whole report as to_json writes it.
    assert offline_page(page) == json.loads(report.to_json())
    script, styles = standalone.app()
    assert "jp-brrr" in styles and "Bokeh" in script
    assert Report.from_json(page_data(page)).to_dict() == report.to_dict()


def test_save_html_escapes_xss(gpt2: Report, tmp_path: Path) -> None:
    report = xss_report(gpt2)
    page = report.save_html(tmp_path / "xss.html").read_text(encoding="utf-8")
    for raw in (*RAW, *XSS):
        assert raw not in page
    # The data block ends at its own "</script>", not at a payload's: up to there it is the
    # whole report.
    assert page_data(page) == json.loads(report.to_json())
    assert page_data(page)["name"] == XSS[1]
    assert "&lt;script&gt;" in page.split("<style>")[0]  # the title, escaped


def test_save_html_without_a_built_app_says_how_to_build_it(
    gpt2: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(standalone, "BUILT", tmp_path / "nowhere")
    standalone.app.cache_clear()
    try:
        with pytest.raises(standalone.AppNotBuilt, match="jlpm build"):
            gpt2.save_html(tmp_path / "report.html")
    finally:
        standalone.app.cache_clear()
    assert not (tmp_path / "report.html").exists()


def test_save_html_refuses_a_bad_path_and_leaves_no_half_file(gpt2: Report, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"the folder .*nowhere does not exist"):
        gpt2.save_html(tmp_path / "nowhere" / "report.html")
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match=r"it is a folder.*report\.html"):
        gpt2.save_html(tmp_path / "out")
    # The page went to a temporary file beside the folder first: it is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    # Over an older file: the new page, whole.
    (tmp_path / "report.html").write_text("older")
    page = gpt2.save_html(tmp_path / "report.html").read_text(encoding="utf-8")
    assert page_data(page) == json.loads(gpt2.to_json())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "report.html"]


def test_standalone_html_size_stays_small(gpt2: Report, tmp_path: Path) -> None:
    # BokehJS without MathJax and WebGL (see js/standalone-stub.js): the bokeh export this
    # replaces was 2.2 MB for a small report (bench/RESULTS.md).
    script, styles = standalone.app()
    app_bytes = len(script.encode()) + len(styles.encode())
    assert app_bytes < 1_600_000
    page = gpt2.save_html(tmp_path / "report.html")
    # The page is the app and the report (its "<", ">" and "&" written as \u003c and so on).
    assert page.stat().st_size < app_bytes + 1.1 * len(gpt2.to_json().encode()) + 10_000


def test_a_large_aggregated_report_is_drawn_in_every_format(
    resnet: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A report read back from JSON past the kernel limit carries aggregated kernels.
    from jupyter_brrr.report import report as report_module

    monkeypatch.setattr(report_module, "KERNEL_LIMIT", 100)
    back = Report.from_json(resnet.to_json())
    assert len(back.kernels) < len(resnet.kernels)
    assert isinstance(back.kernels, pd.DataFrame)
    assert formats(back) == ("mimebundle", "text", "html", "standalone", "png")
    drawn = {f: render(back, f) for f in formats(back)}
    assert drawn["text"] == repr(back) and drawn["html"] == back._repr_html_()
    mimebundle, page = drawn["mimebundle"], drawn["standalone"]
    assert isinstance(mimebundle, dict) and isinstance(page, str)
    assert mimebundle[MIME_TYPE] == page_data(page) == back.to_dict()
    assert png_size(drawn["png"])[0] > 0  # pyright: ignore[reportArgumentType]  # a GPU report has a picture


def test_a_picture_failure_keeps_the_report(gpt2: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(report: Report) -> None:
        raise RuntimeError("no fonts")

    monkeypatch.setattr(pictures, "pictures", broken)
    with pytest.warns(UserWarning, match="no fonts"):
        data = bundle.mimebundle(Report.from_json(gpt2.to_json()))
    assert "image/png" not in data and "<table" in data["text/html"]


def test_a_sweep_names_each_memory_figure_of_the_gpu_once_with_its_meaning() -> None:
    """An H200 sweep: the memory this process can reach (149 GB, the fit's limit here) is the
    one figure for this GPU; the datasheet row of the same board (151 GB) is left out, and the
    other boards' figures say they are nominal."""
    import gzip

    from jupyter_brrr.views import sweep_memory

    path = DATA / "advice_cases" / "sweep_flat_fit.sweep.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    page = sweep_memory.sweep_html(doc)
    assert "149 GB this process can reach" in page, page
    assert "151 GB" not in page
    rows = sweep_memory.capacity_rows(doc)
    assert [r["device"] for r in rows if "NVIDIA H200" in r["device"]] == ["NVIDIA H200 (this GPU)"]
    assert all(r["memory"].endswith(" nominal") for r in rows if not r["this_gpu"])
    assert "17.2 GB nominal" in page


# A number of microseconds, spelled "us" (issue 25: "us" and "µs" both appeared in one report).
_ASCII_MICROSECONDS = re.compile(r"\d us\b")


def _words(doc: object) -> list[str]:
    """Every string a saved document holds, at any depth."""
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [w for value in doc.values() for w in _words(value)]
    if isinstance(doc, list):
        return [w for value in doc for w in _words(value)]
    return []


def test_microseconds_are_spelled_one_way_in_every_word_of_a_report(gpt2: Report) -> None:
    # The GPT-2 trace's ruled-out launch fix: the replay's words said "this saves 0 us".
    words = _words(json.loads(gpt2.to_json()))
    assert [w for w in words if _ASCII_MICROSECONDS.search(w)] == []
    assert any("µs" in w for w in words)
    for shown in ("text", "html"):
        assert not _ASCII_MICROSECONDS.search(html_module.unescape(str(render(gpt2, shown))))
