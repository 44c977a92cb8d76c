"""One report, one set of numbers: every report saved in ``tests/data/reports`` and in both tours
(``notebooks/tour_h200.ipynb`` as committed, ``notebooks/tour.ipynb`` executed here by nbclient)
drawn in every view — the interactive app in Chromium (the page ``save_html`` writes: the app of
the JupyterLab renderer and of the notebook's frame), the static HTML, the text, and the alt text
of the static HTML's pictures — quotes the same headline figures: the span, GPU busy, the GPU's
idle time, the CPU op time, the peak memory and the first recommendation's saving.

The figures expected are read from each report's JSON here, and spelled by the shared number
rules (``report/display.py``, which ``js/src/format.ts`` follows); each view must show each of them
that it shows at all, spelled so, and the app must show every one.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tempfile
from collections.abc import Mapping
from html import unescape
from pathlib import Path
from typing import Any, cast

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.lab import REPO, app_errors, browser_marks

from jupyter_brrr.report import display
from jupyter_brrr.report.report import Report, SchemaError
from jupyter_brrr.schema.report import MIME_TYPE
from jupyter_brrr.views import render

pytestmark = browser_marks(slow=True)

REPORTS = REPO / "tests" / "data" / "reports"
TOURS = REPO / "notebooks"
DONE = '.jp-brrr[data-state="done"], .jp-brrr[data-state="error"]'


def _saved_reports() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(REPORTS.glob("*.json")):
        doc = json.loads(path.read_text())
        try:
            Report.from_json(doc)
        except (SchemaError, KeyError, TypeError, ValueError):
            continue  # a job report, a comparison, a history, a plan or a sweep
        found.append((path.name, doc))
    return found


def _notebook_reports(nb: dict, name: str) -> list[tuple[str, dict]]:
    docs = [
        output["data"][MIME_TYPE]
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if MIME_TYPE in output.get("data", {})
    ]
    return [(f"{name}[{i}]", doc) for i, doc in enumerate(docs)]


@pytest.fixture(scope="module")
def reports(kernel_env: dict[str, str]) -> list[tuple[str, Report]]:
    import nbformat
    from nbclient import NotebookClient

    tour = nbformat.read(TOURS / "tour.ipynb", as_version=4)
    with tempfile.TemporaryDirectory() as folder:  # its named cells write their history there
        # Beside a link to tests/, as notebooks/ is: the tour's last cell loads
        # ../tests/data/gpt2_fwd_bf16_b8_s1024.json.gz, and shows nothing where it is missing.
        (Path(folder) / "tests").symlink_to(REPO / "tests", target_is_directory=True)
        (Path(folder) / "notebooks").mkdir()
        NotebookClient(
            tour,
            kernel_name="python3",
            timeout=300,
            resources={"metadata": {"path": str(Path(folder) / "notebooks")}},
        ).execute(env=kernel_env)
    h200 = json.loads((TOURS / "tour_h200.ipynb").read_text())
    executed = _notebook_reports(json.loads(nbformat.writes(tour)), "tour")
    # Every report of the CPU tour, its GPT-2 trace's too.
    assert "gpt2_fwd_bf16_b8_s1024.json.gz" in [doc.get("name") for _, doc in executed]
    found = [*_saved_reports(), *_notebook_reports(h200, "tour_h200"), *executed]
    assert len(found) > 20
    return [(name, Report.from_json(doc)) for name, doc in found]


def _share(value: float) -> str:
    """A fraction as a whole percentage, as every view rounds it (halves up, as JavaScript)."""
    return f"{math.floor(100 * value + 0.5)}%"


def headline(report: Report) -> dict[str, str]:
    """The headline figures of a report, from its JSON, as every view must spell them."""
    s = report.summary
    span = float(s.get("span_s") or 0.0)
    figures: dict[str, str] = {}
    if report.empty:
        return figures
    if span > 0:
        figures["span"] = display.seconds(span)
    if s.get("gpu"):
        figures["GPU busy"] = _share(min(1.0, float(s["busy_s"]) / span))
        figures["idle"] = display.seconds(s.get("idle_s"))
    else:
        own = report.ops["self_cpu_time_s"].where(
            report.ops["self_cpu_time_s"].notna(), report.ops["cpu_time_s"]
        )
        figures["CPU op time"] = display.seconds(float(own.fillna(0.0).sum()))
    if s.get("gpu") and s.get("peak_memory_bytes") is not None:
        figures["peak memory"] = display.nbytes(s["peak_memory_bytes"])
    first = report.recommendations[0] if report.recommendations else None
    if first is not None and first.get("cause") and first.get("share") is not None:
        figures["saving"] = _share(float(first["share"]))
    return figures


def _text_figures(text: str) -> dict[str, str]:
    found = {}
    patterns = {
        "span": r"\bspan ([\d.]+ \S+)",
        "GPU busy": r"GPU busy (\d+%)",
        "idle": r"\bidle ([\d.]+ \S+) \(",
        "CPU op time": r"CPU op time ([\d.]+ \S+)",
        "peak memory": r"peak memory ([\d.]+ \S+)",
        "saving": r"^\* \[[^\]]*, up to (\d+%)\]",
    }
    for name, pattern in patterns.items():
        match = re.search(pattern, text, re.M)
        if match:
            found[name] = match.group(1)
    return found


def _html_figures(html: str) -> dict[str, str]:
    rows = dict(
        (unescape(label), unescape(value))
        for label, value in re.findall(
            r"<tr><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td></tr>", html.split("</table>")[0]
        )
    )
    found = {}
    for name, row, pattern in [
        ("span", "span", r"^([\d.]+ \S+)"),
        ("GPU busy", "GPU busy", r"^(\d+%)"),
        ("CPU op time", "CPU op time", r"^([\d.]+ \S+)"),
        ("peak memory", "peak memory", r"^([\d.]+ \S+)"),
    ]:
        match = re.search(pattern, rows.get(row, ""))
        if match:
            found[name] = match.group(1)
    saving = re.search(r"· up to (\d+%)</span>", html)
    if saving:
        found["saving"] = saving.group(1)
    return found


def _alt_figures(html: str) -> dict[str, str]:
    alts = " | ".join(unescape(a) for a in re.findall(r'<img [^>]*alt="([^"]*)"', html))
    found = {}
    for name, pattern in [
        ("span", r"span split of ([\d.]+ \S+):"),
        ("idle", r"\bidle ([\d.]+ \S+) \("),
        ("CPU op time", r"top ops by self CPU time, of ([\d.]+ \S+) "),
    ]:
        match = re.search(pattern, alts)
        if match:
            found[name] = match.group(1)
    return found


def _app_figures(page) -> dict[str, str]:
    """The headline figures as the app's Overview shows them."""
    return page.evaluate(
        """() => {
          const root = document.querySelector('.jp-brrr');
          const text = sel => root.querySelector(sel)?.textContent.trim() ?? null;
          const found = {
            span: text('[data-testid="brrr-card-span"] .jp-brrr-card-value'),
            'GPU busy': text('[data-testid="brrr-card-busy"] .jp-brrr-card-value'),
            idle: text('.jp-brrr-legend-item[data-part="idle"] .jp-brrr-legend-value'),
            'CPU op time': text('[data-testid="brrr-card-cpu"] .jp-brrr-card-value'),
            'peak memory': text('[data-testid="brrr-card-mem"] .jp-brrr-card-value'),
          };
          const rec = root.querySelector('.jp-brrr-rec');
          const saving = rec && rec.dataset.cause
            ? (rec.querySelector('.jp-brrr-rec-share')?.textContent ?? '').match(/(\\d+%)/)
            : null;
          if (saving) found.saving = saving[1];
          for (const k of Object.keys(found)) if (found[k] === null) delete found[k];
          return found;
        }"""
    )


def test_every_view_quotes_the_same_headline_figures(reports, browser, tmp_path) -> None:
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
    disagree: list[str] = []
    try:
        for i, (name, report) in enumerate(reports):
            want = headline(report)
            html = render(report, "html")
            views = {
                "text": _text_figures(render(report, "text")),
                "static HTML": _html_figures(html),
                "alt text": _alt_figures(html),
            }
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(f"brrr page error: {e}"))
            page.goto(report.save_html(tmp_path / f"report{i}.html").as_uri())
            page.wait_for_selector(DONE, timeout=60_000)
            views["app"] = _app_figures(page)
            assert not app_errors(errors), (name, errors)
            page.close()
            for view, shown in views.items():
                for figure, value in shown.items():
                    if figure not in want:
                        disagree.append(f"{name}: {view} shows a {figure} ({value}) it has not")
                    elif value != want[figure]:
                        disagree.append(
                            f"{name}: {view} says {figure} {value}, the report {want[figure]}"
                        )
            # The app shows every headline figure; the text and the static HTML the ones
            # they have a place for.
            missing = set(want) - set(views["app"])
            if missing:
                disagree.append(f"{name}: the app shows no {', '.join(sorted(missing))}")
            for view in ("text", "static HTML"):
                for figure in {"span", "GPU busy", "CPU op time", "saving"} & set(want):
                    if figure not in views[view]:
                        disagree.append(f"{name}: the {view} shows no {figure}")
    finally:
        context.close()
    assert not disagree, "\n".join(disagree)


def _drawn(report: Report) -> tuple[float, float]:
    """The length of the run the Timeline draws (its kernels and CPU ops, from the earliest
    CPU op or 0 to the last end) and the GPU's idle time in it (the red lane)."""
    kernels = report.kernels.dropna(subset=["start_s", "dur_s"])
    ops = report.cpu_ops.dropna(subset=["start_s"])
    ends = [*(kernels["start_s"] + kernels["dur_s"]), *(ops["start_s"] + ops["dur_s"].fillna(0))]
    start, end = min([0.0, *ops["start_s"]]), max([0.0, *ends])
    idle, reached = 0.0, 0.0
    starts = kernels["start_s"]
    for a, b in sorted(zip(starts, starts + kernels["dur_s"].clip(0), strict=True)):
        idle += max(0.0, a - reached)
        reached = max(reached, b)
    return end - start, idle + max(0.0, end - reached)


def test_the_timeline_says_which_run_it_draws(browser, tmp_path) -> None:
    """The Timeline draws the profiled run as traced (here 871 µs of trace for a 558 µs timed
    span): its caption gives that run's own length and idle time, and the timed runs' apart."""
    h200 = json.loads((TOURS / "tour_h200.ipynb").read_text())
    (_, doc), *_ = _notebook_reports(h200, "tour_h200")
    report = Report.from_json(doc)
    s = report.summary
    assert s["timing"] is not None
    assert s["timing"]["timed_runs"] > 0
    length, idle = _drawn(report)
    assert abs(length - s["span_s"]) > 0.1 * s["span_s"]  # the two runs differ
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
    try:
        page = context.new_page()
        page.goto(report.save_html(tmp_path / "report.html").as_uri())
        page.wait_for_selector(DONE, timeout=60_000)
        page.locator('[data-testid="brrr-tab-timeline"]').click()
        caption = page.locator('[data-panel="timeline"] .jp-brrr-caption')
        caption.wait_for(timeout=60_000)
        text = caption.inner_text()
    finally:
        context.close()
    drawn = f"the profiled run, as traced: {display.seconds(length)}, GPU idle "
    assert f"{drawn}{display.seconds(idle)} (red lane)" in text, text
    timed = f"the timed runs: span {display.seconds(s['span_s'])} per run, GPU idle "
    assert f"{timed}{display.seconds(s['idle_s'])} per run" in text, text


def test_the_sweep_tab_gives_this_gpus_memory_once_with_its_meaning(browser, tmp_path) -> None:
    """An H200 sweep (tests/data/advice_cases): the app's capacity table, as the static HTML
    (tests/test_views.py), gives this GPU the memory this process can reach (149 GB), leaves out
    the datasheet row of the same board (151 GB), and calls the other boards' figures nominal."""
    import gzip

    h200 = json.loads((TOURS / "tour_h200.ipynb").read_text())
    (_, doc), *_ = _notebook_reports(h200, "tour_h200")
    report = Report.from_json(doc)
    path = REPO / "tests" / "data" / "advice_cases" / "sweep_flat_fit.sweep.json.gz"
    report.sweep = json.loads(gzip.decompress(path.read_bytes()))
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
    try:
        page = context.new_page()
        page.goto(report.save_html(tmp_path / "report.html").as_uri())
        page.wait_for_selector(DONE, timeout=60_000)
        page.locator('[data-testid="brrr-tab-sweep"]').click()
        table = page.locator('[data-testid="brrr-sweep-capacity"]')
        table.wait_for(timeout=60_000)
        rows = table.locator("tbody tr").evaluate_all(
            "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))"
        )
    finally:
        context.close()
    h200_rows = [r for r in rows if "NVIDIA H200" in r[0]]
    assert h200_rows == [["NVIDIA H200 (this GPU)", "149 GB this process can reach", "—"]], rows
    assert ["Tesla V100-SXM2-16GB", "17.2 GB nominal", "—"] in rows, rows


def test_the_split_legend_gives_whole_percentages_as_the_other_views(browser, tmp_path) -> None:
    """The Overview's split legend: each part's share of the span in whole percent, as the
    static picture's legend (views/pictures.py) and every other share in the report."""
    from jupyter_brrr.schema.report import SPLIT_PARTS

    h200 = json.loads((TOURS / "tour_h200.ipynb").read_text())
    (_, doc), *_ = _notebook_reports(h200, "tour_h200")
    report = Report.from_json(doc)
    s = cast(Mapping[str, Any], report.summary)  # read by name: the split's parts
    span = float(s["span_s"])
    want = {
        part: f"{100 * float(s[f'{part}_s']) / span:.0f}%"
        for part in SPLIT_PARTS
        if float(s.get(f"{part}_s") or 0.0) > 0
    }
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
    try:
        page = context.new_page()
        page.goto(report.save_html(tmp_path / "report.html").as_uri())
        page.wait_for_selector(DONE, timeout=60_000)
        items = page.locator(".jp-brrr-legend-item").evaluate_all(
            "els => els.map(e => [e.dataset.part, "
            "e.querySelector('.jp-brrr-legend-pct').textContent])"
        )
    finally:
        context.close()
    shown = {part: pct for part, pct in items if part in want}
    assert shown == want, items
