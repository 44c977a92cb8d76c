"""Browser test of the Sweep and Memory tabs (issue 12): a saved, untrusted notebook whose output
is a real report with a size sweep and a memory breakdown (made here on the CPU), opened in a real
JupyterLab with no kernel, in Debian's Chromium."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.lab import (
    MIME_TYPE,
    REPO,
    LabServer,
    app_errors,
    browser_marks,
    open_notebook,
    report_bundle,
    write_notebook,
)

pytestmark = browser_marks()

ARTIFACTS = REPO / "tests" / "artifacts" / "browser"
T_PAGE = 120_000


def _sweep_report():
    """A real CPU report of a small MLP, with its sweep over the batch and its memory breakdown."""
    import torch

    import jupyter_brrr

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(batch: int) -> None:
        model(torch.randn(batch, 32)).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()

    result = jupyter_brrr.sweep(step, [4, 8, 16, 32], warmup=1, repeat=2, variable="batch")
    assert result.best is not None
    report = result.reports[result.best]
    report.sweep = result.to_dict()
    report.memory = jupyter_brrr.memory_breakdown(step, 64).to_dict()
    return report


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep-root")
    work = tmp_path_factory.mktemp("sweep-work")
    report = _sweep_report()
    bundle = report_bundle(report)
    write_notebook(
        root / "sweep.ipynb", [("%%brrr --sweep batch=4..32 --memory\nstep()", [bundle])]
    )
    server = LabServer(root, work)
    server.start()
    try:
        yield server, json.loads(json.dumps(bundle[MIME_TYPE])), report
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab, browser):
    """The notebook in the session's Chromium (conftest: one Playwright driver per thread)."""
    server, _doc, _report = lab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = open_notebook(context, server.url, "sweep.ipynb", kernel=False, timeout=T_PAGE)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-brrr')]
                 .some(e => e.dataset.state === 'done' || e.dataset.state === 'error')""",
        timeout=T_PAGE,
    )
    yield page
    context.close()


def _open(page, root, view: str) -> None:
    root.locator(f'[data-testid="brrr-tab-{view}"]').click()
    panel = root.locator(f'[data-panel="{view}"]')
    page.wait_for_function(
        "el => el.dataset.state === 'done' || el.dataset.state === 'error'",
        arg=panel.element_handle(),
        timeout=60_000,
    )
    assert panel.get_attribute("data-state") == "done", panel.inner_text()


def _rows(table: dict) -> list[dict]:
    return [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]


SPLIT_KEYS = ["compute", "memory", "communication", "other", "idle"]  # js/src/model.ts


def _series(chart) -> dict[str, list[dict]]:
    """What a Bokeh chart of these tabs drew (js/src/charts_sweep.ts's test hook): each series'
    points in data coordinates and on the page, computed from the plot's scales."""
    assert chart.locator("canvas").count() >= 1
    box = chart.bounding_box()
    assert box is not None and box["width"] > 250 and box["height"] > 200, box
    drawn = chart.evaluate("el => el.jupyterBrrrSeries()")
    names = [s["name"] for s in drawn]
    assert len(set(names)) == len(names), names
    return {s["name"]: s["points"] for s in drawn}  # in drawing order


def _hover(page, point: dict, text: str) -> str:
    """Move onto a drawn point (from outside, so that Bokeh sees the pointer arrive); the text
    of the tooltip that shows ``text``."""
    page.mouse.move(point["px"] - 200, point["py"] - 200)
    page.mouse.move(point["px"], point["py"], steps=4)
    page.mouse.move(point["px"] + 1, point["py"])
    tip = page.locator(".jp-brrr-tip").filter(has_text=text).first
    tip.wait_for(state="visible", timeout=30_000)
    return tip.inner_text()


def _check_sweep(page, panel, doc: dict) -> None:
    """The Sweep tab's charts against the report: the time per size on log-log axes with both
    guides, a marker per measured size in the colour of its doubling's verdict (hover: the
    verdict), the throughput, and each size's split as shares that add up to the whole."""
    ok = [p for p in _rows(doc["sweep"]["points"]) if p["status"] == "ok" and p["span_s"] > 0]
    doublings = _rows(doc["sweep"]["doublings"])
    time = _series(panel.locator('[data-testid="brrr-sweep-time"]'))
    assert list(time) == ["flat (overhead)", "slope 1 (saturated)", "measured"]
    measured = time["measured"]
    assert [p["x"] for p in measured] == [p["size"] for p in ok]
    # One time unit for all points: the drawn values are the spans scaled alike.
    scale = measured[0]["y"] / ok[0]["span_s"]
    assert scale in (1, 1e3, 1e6)
    assert [p["y"] for p in measured] == pytest.approx([p["span_s"] * scale for p in ok])
    # Log axes: equal ratios are equal distances; longer times are higher up the page.
    pxs = [p["px"] for p in measured]
    assert pxs == sorted(pxs) and len(set(pxs)) == len(pxs)
    per_doubling = [
        (b["px"] - a["px"]) / math.log2(b["x"] / a["x"]) for a, b in itertools.pairwise(measured)
    ]
    assert max(per_doubling) == pytest.approx(min(per_doubling), rel=0.02)
    by_time = sorted(range(len(ok)), key=lambda i: ok[i]["span_s"])
    assert [measured[i]["py"] for i in by_time] == sorted((p["py"] for p in measured), reverse=True)
    flat = time["flat (overhead)"]
    assert flat[0]["py"] == pytest.approx(flat[1]["py"], abs=0.5)  # flat is flat
    slope = time["slope 1 (saturated)"]
    assert slope[1]["py"] < slope[0]["py"]
    # Hover the last size: its tooltip names the verdict of the doubling that reached it.
    last = doublings[-1]
    assert last["to_size"] == measured[-1]["x"]
    panel.locator('[data-testid="brrr-sweep-time"]').scroll_into_view_if_needed()
    text = _hover(
        page,
        _series(panel.locator('[data-testid="brrr-sweep-time"]'))["measured"][-1],
        f"batch = {last['to_size']}",
    )
    assert f"from {last['from_size']}" in text and last["verdict"] in text

    throughput = _series(panel.locator('[data-testid="brrr-sweep-throughput"]'))["throughput"]
    rated = [p for p in ok if (p["items_per_s"] or 0) > 0]
    assert [p["x"] for p in throughput] == [p["size"] for p in rated]
    best = max(range(len(rated)), key=lambda i: rated[i]["items_per_s"])
    assert min(range(len(rated)), key=lambda i: throughput[i]["py"]) == best

    split = _series(panel.locator('[data-testid="brrr-sweep-split"]'))
    parts = [k for k in SPLIT_KEYS if any((p[f"{k}_s"] or 0) > 0 for p in ok)]
    assert list(split) == parts
    for i, point in enumerate(ok):
        total = sum(max(0.0, point[f"{k}_s"] or 0) for k in parts)
        bottom = 0.0
        for k in parts:
            middle = split[k][i]["y"]  # the middle of the part's segment, in % of the bar
            share = 2 * (middle - bottom)
            assert share == pytest.approx(100 * max(0.0, point[f"{k}_s"] or 0) / total, abs=1e-6)
            bottom += share
        assert bottom == pytest.approx(100)


def _check_memory(page, panel, doc: dict) -> None:
    """The Memory tab's timeline against the report: one stacked series per category that holds
    bytes, the allocator's total as steps, and a tooltip per area."""
    t = doc["memory"]["timeline"]
    held = [c for i, c in enumerate(t["categories"]) if any(v > 0 for v in t["bytes"][i][:-1])]
    chart = panel.locator('[data-testid="brrr-memory-timeline"]')
    drawn = _series(chart)
    assert list(drawn) == [*held, "allocated"]
    assert "parameters" in held and "gradients" in held
    assert len(drawn["allocated"]) == len(t["times_s"])
    k = t["categories"].index("parameters")
    n_held = sum(1 for v in t["bytes"][k][:-1] if v > 0)
    assert len(drawn["parameters"]) == n_held
    # The allocator's total, in one byte unit for all moments.
    first = next(i for i, v in enumerate(t["allocated"]) if v > 0)
    unit = drawn["allocated"][first]["y"] / t["allocated"][first]
    assert any(unit == pytest.approx(u) for u in (1, 1e-3, 1e-6, 1e-9)), unit
    assert [p["y"] for p in drawn["allocated"]] == pytest.approx([v * unit for v in t["allocated"]])
    parameters = drawn["parameters"][len(drawn["parameters"]) // 2]
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 500
    point = next(p for p in _series(chart)["parameters"] if p["x"] == parameters["x"])
    text = _hover(page, point, "parameters")
    assert "bytes" in text and "all categories" in text


def test_a_saved_sweep_opens_in_its_tab_with_the_guides_and_verdicts(page, lab):
    _server, doc, _report = lab
    root = page.locator(".jp-brrr").first
    assert root.get_attribute("data-state") == "done"
    _open(page, root, "sweep")
    panel = root.locator('[data-panel="sweep"]')
    summary = panel.locator('[data-testid="brrr-sweep-summary"]').inner_text()
    assert "Sweep of batch on CPU" in summary
    verdicts = panel.locator('[data-testid="brrr-sweep-doublings"] tbody tr').evaluate_all(
        "trs => trs.map(tr => tr.dataset.verdict)"
    )
    assert verdicts == [d["verdict"] for d in _rows(doc["sweep"]["doublings"])]
    _check_sweep(page, panel, doc)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "saved_sweep.png"))
    assert app_errors(page.brrr_errors) == []


def test_the_memory_tab_shows_what_held_the_peak(page, lab):
    _server, doc, _report = lab
    root = page.locator(".jp-brrr").first
    _open(page, root, "memory")
    panel = root.locator('[data-panel="memory"]')
    shown = panel.locator('[data-testid="brrr-memory-breakdown"] tbody tr').evaluate_all(
        "trs => trs.map(tr => tr.dataset.category)"
    )
    held = {name for name, value in doc["memory"]["at_peak"].items() if value > 0}
    assert set(shown) == held | {"unattributed"}
    _check_memory(page, panel, doc)
    assert panel.locator('[data-testid="brrr-memory-largest"] tbody tr').count() == len(
        doc["memory"]["largest"]["data"]
    )
    root.screenshot(path=str(ARTIFACTS / "saved_memory.png"))
    assert app_errors(page.brrr_errors) == []


def test_both_tabs_draw_offline_in_the_standalone_file(lab, browser, tmp_path):
    """report.save_html: the same charts from the bundled app, with no network."""
    _server, doc, report = lab
    path = report.save_html(tmp_path / "sweep.html")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    remote: list[str] = []
    errors: list[str] = []

    def refuse(route) -> None:
        remote.append(route.request.url)
        route.abort()

    try:
        context.route(re.compile(r"^(?!file:).*"), refuse)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"brrr page error: {e}"))
        page.goto(path.as_uri())
        page.wait_for_selector('.jp-brrr[data-state="done"]', timeout=T_PAGE)
        root = page.locator(".jp-brrr").first
        _open(page, root, "sweep")
        _check_sweep(page, root.locator('[data-panel="sweep"]'), doc)
        _open(page, root, "memory")
        _check_memory(page, root.locator('[data-panel="memory"]'), doc)
        assert remote == [], f"the page asked the network for {remote}"
        assert app_errors(errors) == []
    finally:
        context.close()
