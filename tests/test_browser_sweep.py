"""Browser test of the Sweep and Memory tabs (issue 12): a saved, untrusted notebook whose output
is a real report with a size sweep and a memory breakdown (made here on the CPU), opened in a real
JupyterLab with no kernel, in Debian's Chromium."""

from __future__ import annotations

import json
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
        yield server, json.loads(json.dumps(bundle[MIME_TYPE]))
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab, browser):
    """The notebook in the session's Chromium (conftest: one Playwright driver per thread)."""
    server, _doc = lab
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


def test_a_saved_sweep_opens_in_its_tab_with_the_guides_and_verdicts(page, lab):
    _server, doc = lab
    root = page.locator(".jp-brrr").first
    assert root.get_attribute("data-state") == "done"
    _open(page, root, "sweep")
    panel = root.locator('[data-panel="sweep"]')
    summary = panel.locator('[data-testid="brrr-sweep-summary"]').inner_text()
    assert "Sweep of batch on CPU" in summary
    chart = panel.locator('[data-testid="brrr-sweep-time"]')
    series = chart.locator("[data-series]").evaluate_all("gs => gs.map(g => g.dataset.series)")
    assert series == ["flat (overhead)", "slope 1 (saturated)", "measured"]
    ok = [p for p in _rows(doc["sweep"]["points"]) if p["status"] == "ok"]
    assert chart.locator('[data-series="measured"] circle').count() == len(ok)
    verdicts = panel.locator('[data-testid="brrr-sweep-doublings"] tbody tr').evaluate_all(
        "trs => trs.map(tr => tr.dataset.verdict)"
    )
    assert verdicts == [d["verdict"] for d in _rows(doc["sweep"]["doublings"])]
    bars = panel.locator('[data-testid="brrr-sweep-split"] rect')
    assert bars.count() >= len(ok)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "saved_sweep.png"))
    assert app_errors(page.brrr_errors) == []


def test_the_memory_tab_shows_what_held_the_peak(page, lab):
    _server, doc = lab
    root = page.locator(".jp-brrr").first
    _open(page, root, "memory")
    panel = root.locator('[data-panel="memory"]')
    shown = panel.locator('[data-testid="brrr-memory-breakdown"] tbody tr').evaluate_all(
        "trs => trs.map(tr => tr.dataset.category)"
    )
    held = {name for name, value in doc["memory"]["at_peak"].items() if value > 0}
    assert set(shown) == held | {"unattributed"}
    timeline = panel.locator('[data-testid="brrr-memory-timeline"]')
    parts = timeline.locator("polygon").evaluate_all("ps => ps.map(p => p.dataset.part)")
    assert "parameters" in parts and "gradients" in parts
    assert panel.locator('[data-testid="brrr-memory-largest"] tbody tr').count() == len(
        doc["memory"]["largest"]["data"]
    )
    root.screenshot(path=str(ARTIFACTS / "saved_memory.png"))
    assert app_errors(page.brrr_errors) == []
