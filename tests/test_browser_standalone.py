"""The standalone HTML file (``save_html`` of a report, a job report, a comparison or a history)
in Chromium, opened from disk with every request that is not a file refused: the bundle's apps
draw every view, offline, from the document in the page, as they do in JupyterLab
(test_browser.py and test_browser_remeasure.py check the same figures there).

Each test writes its own file and opens its own page: no test depends on another, or on their
order. No jupyter server is needed.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.lab import REPO, app_errors, browser_marks, history_rows, rank_rows
from browser.pages import rows_of

pytestmark = browser_marks(slow=False)

DATA = REPO / "tests" / "data"
ARTIFACTS = REPO / "tests" / "artifacts" / "browser"
GPU_TRACE = DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"
VIEWS = ["overview", "operators", "roofline", "timeline", "whatif"]
DONE = '.jp-brrr[data-state="done"], .jp-brrr[data-state="error"]'
T_VIEW = 60_000


@pytest.fixture(scope="module")
def gpu_report():
    import jupyter_brrr

    return jupyter_brrr.load(GPU_TRACE)


class Opened:
    """A standalone page, with what it asked the network for and the errors it logged."""

    def __init__(self, page, remote: list[str], errors: list[str]) -> None:
        self.page, self.remote, self.errors = page, remote, errors
        self.root = page.locator(".jp-brrr").first


@pytest.fixture
def open_file(browser, tmp_path):
    """Write a report (or a job report, comparison, history) with save_html and open the file
    in a fresh page (offline)."""
    contexts = []

    def open_(report) -> Opened:
        path = report.save_html(tmp_path / f"report{len(contexts)}.html")
        context = browser.new_context(viewport={"width": 1300, "height": 1000})
        contexts.append(context)
        remote: list[str] = []
        errors: list[str] = []

        def refuse(route) -> None:
            remote.append(route.request.url)
            route.abort()

        context.route(re.compile(r"^(?!file:).*"), refuse)
        context.add_init_script(
            """
            window.__brrrInjected = [];
            new MutationObserver(list => {
              for (const m of list) for (const n of m.addedNodes) {
                if (!(n instanceof Element)) continue;
                for (const e of [n, ...n.querySelectorAll('img,script,iframe,object,embed')])
                  if (/^(IMG|SCRIPT|IFRAME|OBJECT|EMBED)$/.test(e.tagName) && e.closest('.jp-brrr'))
                    window.__brrrInjected.push(e.outerHTML.slice(0, 200));
              }
            }).observe(document, {childList: true, subtree: true});
            """
        )
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"brrr page error: {e}"))
        page.goto(path.as_uri())
        page.wait_for_selector(DONE, timeout=T_VIEW)
        return Opened(page, remote, errors)

    yield open_
    for context in contexts:
        context.close()


def open_view(opened: Opened, view: str) -> None:
    root = opened.root
    root.locator(f'[data-testid="brrr-tab-{view}"]').click()
    panel = root.locator(f'[data-panel="{view}"]')
    opened.page.wait_for_function(
        "el => el.dataset.state === 'done' || el.dataset.state === 'error'",
        arg=panel.element_handle(),
        timeout=T_VIEW,
    )
    assert panel.get_attribute("data-state") == "done", panel.inner_text()
    opened.page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


def test_every_view_draws_offline_from_the_report_in_the_file(open_file, gpu_report):
    doc = json.loads(gpu_report.to_json())
    opened = open_file(gpu_report)
    root = opened.root
    assert root.get_attribute("data-state") == "done"
    tabs = root.locator(".jp-brrr-tab").evaluate_all("els => els.map(e => e.dataset.tab)")
    assert tabs == VIEWS  # the notebook view's tabs (no A/B in this report)
    header = root.locator(".jp-brrr-header").inner_text()
    assert "NVIDIA H200" in header and "span" in header and "GPU busy" in header
    parts = root.locator('[data-testid="brrr-split"] [data-part]').evaluate_all(
        "els => els.map(e => e.dataset.part)"
    )
    assert set(parts) == {"compute", "memory", "other", "idle"}
    causes = root.locator(".jp-brrr-rec").evaluate_all("els => els.map(e => e.dataset.cause)")
    assert causes == [r["cause"] for r in doc["recommendations"]]

    open_view(opened, "operators")
    assert root.locator('tr[data-testid="brrr-op-row"]').count() == min(
        200, len(doc["ops"]["data"])
    )
    assert root.locator('[data-testid="brrr-opbars"] canvas').count() >= 1

    open_view(opened, "roofline")
    chart = root.locator('[data-testid="brrr-roofline"]')
    n_points = sum(
        1
        for o in rows_of(doc["ops"])
        if (o["flops"] or 0) > 0 and (o["bytes"] or 0) > 0 and (o["gpu_time_s"] or 0) > 0
    )
    assert n_points > 10
    assert len(chart.evaluate("el => el.jupyterBrrrPoints()")) == n_points

    open_view(opened, "timeline")
    caption = root.locator('[data-panel="timeline"] .jp-brrr-caption').inner_text()
    assert f"{len(doc['kernels']['data']):,} kernels" in caption

    open_view(opened, "whatif")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "standalone_whatif.png"))
    assert opened.remote == [], f"the page asked the network for {opened.remote}"
    assert app_errors(opened.errors) == []


def test_roofline_tooltip_in_the_file(open_file, gpu_report):
    opened = open_file(gpu_report)
    page, root = opened.page, opened.root
    open_view(opened, "roofline")
    chart = root.locator('[data-testid="brrr-roofline"]')
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    points = [
        p
        for p in chart.evaluate("el => el.jupyterBrrrPoints()")
        if box["x"] + 12 < p["x"] < box["x"] + box["width"] - 60
        and box["y"] + 12 < p["y"] < box["y"] + box["height"] - 40
    ]

    def gap(p: dict) -> float:
        return min(
            (math.dist((p["x"], p["y"]), (q["x"], q["y"])) for q in points if q is not p),
            default=1e9,
        )

    point = max(points, key=gap)
    page.mouse.move(box["x"] - 30, box["y"] - 30)
    page.mouse.move(point["x"], point["y"], steps=4)
    tip = page.locator(".jp-brrr-tip").filter(
        has=page.locator(".jp-brrr-tip-title", has_text=point["name"])
    )
    tip.first.wait_for(state="visible", timeout=15_000)
    text = tip.first.inner_text()
    for label in ("shapes", "GPU time", "FLOP/s", "bytes/s", "% of roof", "bound"):
        assert label in text, text
    assert app_errors(opened.errors) == []


def test_whatif_slider_in_the_file(open_file, gpu_report):
    """The saved file's What-if: the span replayed on the step's dependencies, report.what_if()'s
    in Python at the same factor."""
    span = gpu_report.summary["span_s"]
    opened = open_file(gpu_report)
    root = opened.root
    open_view(opened, "whatif")
    root.locator('[data-testid="brrr-whatif-target"]').select_option("part:idle")
    root.locator('[data-testid="brrr-whatif-slider"]').fill("1")
    want = gpu_report.what_if(factors=(10,)).set_index("id").loc["part:idle", "span_at_10x_s"]
    assert want < span
    shown = float(root.locator('[data-testid="brrr-whatif-span"]').get_attribute("data-seconds"))
    assert shown == pytest.approx(want, rel=1e-9)
    method = root.locator('[data-testid="brrr-whatif-method"]')
    assert method.get_attribute("data-method") == "replay"
    assert app_errors(opened.errors) == []


def test_names_with_markup_stay_text_in_the_file(open_file, gpu_report):
    payload = '<img src=x onerror="window.__xss=1"></script><script>window.__xss=2</script>'
    report = type(gpu_report).from_json(gpu_report.to_json())
    report.name = payload
    report.ops = report.ops.assign(name=[f"{payload} #{i}" for i in range(len(report.ops))])
    opened = open_file(report)
    for view in VIEWS[1:]:
        open_view(opened, view)
    assert opened.root.locator(".jp-brrr-title").inner_text() == payload
    assert opened.page.evaluate("() => window.__xss") is None
    assert opened.page.evaluate("() => window.__brrrInjected") == []
    assert opened.remote == []


def test_a_report_of_a_newer_version_says_so_in_the_file(open_file, gpu_report, monkeypatch):
    from jupyter_brrr.report import report as report_module

    monkeypatch.setattr(report_module, "SCHEMA_VERSION", 99)
    opened = open_file(gpu_report)
    assert opened.root.get_attribute("data-state") == "error"
    assert "newer jupyter_brrr" in opened.root.locator('[data-testid="brrr-error"]').inner_text()


# --- a job report's file: the job app's tabs, offline ----------------------------------------------


def test_a_job_reports_tabs_draw_offline_from_its_file(open_file):
    """job.save_html: the Ranks and Timeline tabs of a real 2-rank gloo job (recorded on the
    H200, tests/data/ranks) drawn by the job app of the bundle, with no network, and a job name
    with markup in it kept as text."""
    import jupyter_brrr
    from jupyter_brrr.report import display

    fmt_time = display.seconds  # js/src/format.ts's fmtTime: what the page shows
    job = jupyter_brrr.load(DATA / "ranks")
    job.name = '<img src=x onerror="window.__xss=1">'
    doc = json.loads(job.to_json())
    opened = open_file(job)
    root = opened.root
    assert root.get_attribute("data-state") == "done", root.inner_text()
    tabs = root.locator(".jp-brrr-tab").evaluate_all("els => els.map(e => e.dataset.tab)")
    assert tabs == ["ranks", "rank-timeline"]  # the notebook's job view's tabs
    assert root.get_attribute("data-active-tab") == "ranks"
    assert root.locator(".jp-brrr-title").inner_text() == f"jupyter_brrr job: {job.name}"
    header = root.locator(".jp-brrr-header").inner_text()
    assert "2 of 2 ranks" in header and "gloo backend" in header and "NVIDIA H200" in header

    # The Ranks tab: one row per rank with the JSON's figures, the collectives, the straggler.
    ranks = rows_of(doc["ranks"])
    rows = rank_rows(root, ranks)
    for i, r in enumerate(ranks):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[1] == fmt_time(r["span_s"])
        assert cells[7] == fmt_time(r["communication_s"])
    assert root.locator('[data-testid="brrr-rank-bar"]').count() == len(ranks)
    collectives = rows_of(doc["collectives"])
    assert root.locator('[data-testid="brrr-collective-row"]').evaluate_all(
        "rs => rs.map(r => r.dataset.op)"
    ) == [c["op"] for c in collectives]
    assert root.locator('[data-testid="brrr-straggler"]').inner_text().strip()

    # The Timeline tab: a BokehJS chart, a lane per rank, every collective call of the JSON.
    open_view(opened, "rank-timeline")
    timeline = root.locator('[data-testid="brrr-rank-timeline"]')
    assert timeline.locator("canvas").count() >= 1
    assert timeline.get_attribute("data-lanes") == str(len(ranks))
    assert timeline.get_attribute("data-calls") == str(len(doc["calls"]["data"])) != "0"
    # The arrow keys move between the tabs, as in the notebook.
    root.locator('[data-testid="brrr-tab-rank-timeline"]').focus()
    opened.page.keyboard.press("ArrowLeft")
    opened.page.wait_for_function(
        "el => el.dataset.activeTab === 'ranks'", arg=root.element_handle()
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "standalone_job.png"))
    assert opened.page.evaluate("() => window.__xss") is None
    assert opened.page.evaluate("() => window.__brrrInjected") == []
    assert opened.remote == [], f"the page asked the network for {opened.remote}"
    assert app_errors(opened.errors) == []


def test_a_comparison_and_a_history_draw_offline_from_their_files(open_file, tmp_path):
    """jupyter_brrr.diff(...).save_html and History.save_html: the Change view of a real
    eager -> compiled comparison and the runs chart and table of a named cell's runs (kept in a
    store in this test's folder), each drawn by its app of the bundle with no network."""
    import jupyter_brrr
    from jupyter_brrr.report import display
    from jupyter_brrr.report import history as history_store

    fmt_time = display.seconds  # js/src/format.ts's fmtTime: what the page shows

    # The comparison: the Change view alone, its verdict and its ops as the JSON has them.
    comparison = jupyter_brrr.diff(DATA / "coscos_eager.json.gz", DATA / "coscos_compiled.json.gz")
    doc = json.loads(comparison.to_json())
    opened = open_file(comparison)
    root = opened.root
    assert root.get_attribute("data-state") == "done", root.inner_text()
    assert root.locator(".jp-brrr-tab").evaluate_all("els => els.map(e => e.dataset.tab)") == [
        "change"
    ]
    assert root.locator(".jp-brrr-title").inner_text().startswith("jupyter_brrr change: ")
    open_view(opened, "change")
    headline = root.locator('[data-testid="brrr-change-headline"]')
    assert headline.get_attribute("data-verdict") == doc["span"]["verdict"]
    assert fmt_time(doc["span"]["before_s"]) in headline.inner_text()
    assert fmt_time(doc["span"]["after_s"]) in headline.inner_text()
    ops = rows_of(doc["ops"])
    vanished = [o for o in ops if o["status"] == "vanished"]
    assert vanished
    root.locator('[data-testid="brrr-change-filter-all"]').click()
    assert root.locator('[data-testid="brrr-change-op"]').count() == len(ops)
    assert root.locator('[data-testid="brrr-change-op"][data-status="vanished"]').count() == len(
        vanished
    )
    for line in doc["shift"]:
        assert line in root.locator('[data-testid="brrr-change-shift"]').inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "standalone_comparison.png"))
    assert opened.remote == [], f"the page asked the network for {opened.remote}"
    assert app_errors(opened.errors) == []

    # The history: two runs of a name, kept with the store's own function.
    store = history_store.Store(tmp_path / "store")
    for side in ("slow", "fixed"):
        run = jupyter_brrr.load(DATA / "advice" / f"fp32_matmul_tf32_off.{side}.json.gz")
        assert isinstance(run, jupyter_brrr.Report)
        store.add("mm", run)
    history = store.history("mm")
    runs = json.loads(history.to_json())["runs"]
    opened = open_file(history)
    root = opened.root
    assert root.get_attribute("data-state") == "done", root.inner_text()
    assert root.locator(".jp-brrr-tab").evaluate_all("els => els.map(e => e.dataset.tab)") == [
        "history"
    ]
    assert root.locator(".jp-brrr-title").inner_text() == "jupyter_brrr history: mm"
    assert "2 runs" in root.locator(".jp-brrr-chips").inner_text()
    open_view(opened, "history")
    chart = root.locator('[data-testid="brrr-history-chart"]')
    assert chart.locator("canvas").count() >= 1
    assert chart.get_attribute("data-runs") == "2"
    points = chart.evaluate("el => el.jupyterBrrrRuns()")
    assert [p["run"] for p in points] == [r["run"] for r in runs] == [1, 2]
    assert [p["span_s"] for p in points] == pytest.approx([r["span_s"] for r in runs])
    # The runs table, newest first, with each run's span and verdict against the run before.
    history_rows(root, runs)
    root.screenshot(path=str(ARTIFACTS / "standalone_history.png"))
    assert opened.page.evaluate("() => window.__brrrInjected") == []
    assert opened.remote == [], f"the page asked the network for {opened.remote}"
    assert app_errors(opened.errors) == []


def test_a_fix_that_cannot_pay_is_ruled_out_below_the_list_in_the_file(open_file):
    """The H200's autocast NCHW convolution, saved before the split with its CUDA graph that
    cannot pay as recommendation 2 ("saves up to 0%"): the Overview numbers the layout fix
    alone, and says the graph was ruled out, and why, in one line below the list."""
    import jupyter_brrr

    saved = REPO / "bench" / "data" / "h200" / "fixes_2" / "conv_channels_first_autocast.json"
    report = jupyter_brrr.Report.from_json(saved.read_text())
    opened = open_file(report)
    section = opened.root.locator('[data-testid="brrr-recommendations"]')
    causes = section.locator("ol > li.jp-brrr-rec").evaluate_all(
        "els => els.map(e => e.dataset.cause)"
    )
    assert causes == ["layout"]
    assert "saves up to 0%" not in section.inner_text()
    line = section.locator('[data-testid="brrr-ruled-out"]')
    assert line.inner_text().startswith(
        "Ruled out, as it cannot pay here: launch overhead (The GPU waits for launches 11% of "
        "the time): in a loop of calls this is at most the time per call"
    )
    # Below the list, not in it.
    assert line.evaluate("el => el.previousElementSibling.tagName") == "OL"
    assert app_errors(opened.errors) == []
