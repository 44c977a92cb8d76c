"""Browser test of Try this fix (issue 24) in a real JupyterLab with Chromium and a real kernel:
a cell shows a report and its live controls, the Overview's Try this fix button runs the fix in
the kernel (through the controls' own button: the same confirmation, run bound, progress and
Cancel), the verdict appears in place in the Overview and in the A/B tab, and the saved notebook
holds it in the report and in its static HTML.

The report is the H200's recording of a float32 NCHW convolution (its first recommendation:
channels_last, an automatic fix): a CPU profile has no GPU time to advise on, so no CPU cell
yields a recommendation. The fix is tried on this machine's CPU convolution of the same shape,
the machinery under test; the figures are this CPU's, against the H200 replay's share.
"""

from __future__ import annotations

import re
import shutil
import sys
import uuid
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
    run_all_cells,
    write_notebook,
)

pytestmark = browser_marks()

CASE = REPO / "tests" / "data" / "advice_cases" / "conv_channels_first_autocast.json.gz"
ARTIFACTS = REPO / "tests" / "artifacts" / "browser"  # git-ignored screenshots
T_PAGE = 120_000
T_RUN = 300_000

SETUP = (
    "import torch\n"
    "import jupyter_brrr\n"
    "from jupyter_brrr.notebook.controls import cell_controls\n"
    "torch.manual_seed(0)\n"
    "conv = torch.nn.Conv2d(16, 32, 3, padding=1)\n"
    "images = torch.randn(4, 16, 24, 24)"
)
SHOW = (
    "# The H200's report of this convolution, and the controls that try its fixes on the cell\n"
    "report = jupyter_brrr.load('conv.json.gz')\n"
    "handle = display(report, display_id=True)\n"
    "controls = cell_controls(get_ipython(), 'with torch.no_grad():\\n    y = conv(images)\\ny',\n"
    "                         name='conv', report=report, handle=handle, cpu=True)\n"
    "controls.budget.value = 0.5\n"
    "controls"
)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, kernel_env):
    root = tmp_path_factory.mktemp("tryfix-root")
    work = tmp_path_factory.mktemp("tryfix-work")
    # One intra-op thread: on a 2-core machine shared with Chromium, two make tiny ops slow.
    server = LabServer(root, work, kernel_env={**kernel_env, "OMP_NUM_THREADS": "1"})
    server.start()
    try:
        yield server, root
    finally:
        server.stop()


def _notebook_with_the_report(root: Path) -> str:
    """A notebook, in a folder of its own under the server's root, whose cells show the H200's
    report and the live controls that try its fixes; returns its path."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    (root / name).mkdir()
    shutil.copy(CASE, root / name / "conv.json.gz")
    path = f"{name}/tryfix.ipynb"
    write_notebook(root / path, [(SETUP, []), (SHOW, [])])
    return path


def _run_all_click_try_and_save(page, server: LabServer, path: str, shot: str) -> None:
    """In a page showing the notebook (JupyterLab's or Notebook 7's, whose app both expose as
    ``window.jupyterapp``): run all cells from the menu, click the Overview's Try this fix, see
    the verdict appear in place and in the A/B tab, save, and find it in the saved notebook."""
    run_all_cells(page, T_PAGE)
    cell = page.locator(".jp-CodeCell").nth(1)
    report = cell.locator(".jp-brrr")
    # The report and its live controls (the widget's own Try this fix button).
    page.wait_for_function(
        """c => !!c.querySelector('.jp-brrr[data-state="done"]')
               && !!c.querySelector('button.jp-brrr-try-fix-0')
               || !!document.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]')""",
        arg=cell.element_handle(),
        timeout=T_PAGE,
    )
    assert cell.locator("button.jp-brrr-try-fix-0").count() == 1, cell.inner_text()
    first = report.locator("li.jp-brrr-rec").first
    assert first.get_attribute("data-cause") == "layout"
    assert first.locator('[data-testid="brrr-rec-try"]').count() == 0

    # Click the Overview's Try this fix: progress and a Cancel show while it runs.
    first.locator('[data-testid="brrr-try-fix"]').click()
    first.locator('[data-testid="brrr-try-cancel"]').wait_for(state="visible", timeout=60_000)
    status = first.locator('[data-testid="brrr-try-status"]').inner_text()
    assert re.search(r"runs so far|Starting|warm|compil|time", status, re.I), status

    # The verdict, in place: the Overview is redrawn with it (and stays open).
    verdict = report.locator(
        '[data-testid="brrr-recommendations"] li.jp-brrr-rec[data-cause="layout"] '
        '[data-testid="brrr-rec-try"]'
    )
    verdict.wait_for(timeout=T_RUN)
    assert report.get_attribute("data-active-tab") == "overview"
    shown = verdict.inner_text()
    assert shown.startswith("Tried (channels_last): "), shown
    assert verdict.get_attribute("data-verdict") in (
        "confirmed",
        "smaller than predicted",
        "refuted",
        "not applicable",
    )
    assert "measured" in shown and "predicted" in shown, shown
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report.screenshot(path=str(ARTIFACTS / shot))
    # And in the A/B tab.
    report.locator('[data-testid="brrr-tab-ab"]').click()
    fixes = report.locator('[data-testid="brrr-ab-fixes"]')
    fixes.wait_for(timeout=30_000)
    assert shown in fixes.inner_text()

    # Saved: the verdict is in the report and in its static HTML fallback.
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "p => { const w = window.jupyterapp.shell.currentWidget;"
        " return w.context.path === p && !w.context.model.dirty; }",
        arg=path,
        timeout=60_000,
    )
    saved = server.notebook(path)
    outputs = [o for o in saved["cells"][1]["outputs"] if MIME_TYPE in o.get("data", {})]
    assert len(outputs) == 1
    entry = outputs[0]["data"][MIME_TYPE]["recommendations"][0]["try"]
    assert entry["fix"] == "channels_last" and entry["verdict"] == verdict.get_attribute(
        "data-verdict"
    )
    static = outputs[0]["data"]["text/html"]
    static = "".join(static) if isinstance(static, list) else static
    assert f"Tried (channels_last): {entry['verdict']}" in static
    assert app_errors(page.brrr_errors) == []


def test_try_this_fix_runs_in_the_kernel_and_its_verdict_is_shown_and_saved(lab, browser) -> None:
    server, root = lab
    path = _notebook_with_the_report(root)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = open_notebook(context, server.url, path, kernel=True, timeout=T_PAGE)
    try:
        _run_all_click_try_and_save(page, server, path, "tryfix_overview.png")
    finally:
        page.close()
        context.close()


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory, kernel_env):
    """``jupyter notebook`` (Notebook 7) serving a root of its own, with a real kernel."""
    pytest.importorskip(
        "notebook", reason="Jupyter Notebook 7 (the notebook package) is not installed"
    )
    root = tmp_path_factory.mktemp("tryfix-nb7-root")
    work = tmp_path_factory.mktemp("tryfix-nb7-work")
    server = LabServer(
        root, work, kernel_env={**kernel_env, "OMP_NUM_THREADS": "1"}, app="notebook"
    )
    server.start()
    try:
        yield server, root
    finally:
        server.stop()


def test_try_this_fix_in_notebook7_runs_in_the_kernel_and_its_verdict_is_shown_and_saved(
    notebook7, browser
) -> None:
    """The same click in Jupyter Notebook 7's own page (/notebooks/...), served by ``jupyter
    notebook``: the report's renderer and the widget's comm are Notebook 7's, not JupyterLab's."""
    server, root = notebook7
    path = _notebook_with_the_report(root)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.brrr_errors = []
    page.on("console", lambda m: page.brrr_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.brrr_errors.append(f"pageerror: {e}"))
    try:
        page.goto(f"{server.url}/notebooks/{path}", timeout=T_PAGE)
        # Notebook 7's app, not JupyterLab's: its notebook page has no dock panel or launcher.
        page.wait_for_function(
            """p => { const a = window.jupyterapp; if (!a) return false;
                     const w = a.shell.currentWidget;
                     return a.name === 'Jupyter Notebook' && !!(w && w.context
                            && w.context.path === p && w.context.isReady); }""",
            arg=path,
            timeout=T_PAGE,
        )
        assert page.locator("#jp-main-dock-panel").count() == 0
        _run_all_click_try_and_save(page, server, path, "tryfix_notebook7_overview.png")
    finally:
        page.close()
        context.close()


def test_the_standalone_file_shows_the_verdict_and_the_code_change_and_no_dead_button(
    browser, tmp_path
) -> None:
    import torch

    import jupyter_brrr

    conv = torch.nn.Conv2d(16, 32, 3, padding=1)
    images = torch.randn(4, 16, 24, 24)

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    tried = jupyter_brrr.load(CASE)
    assert isinstance(tried, jupyter_brrr.Report)
    entry = jupyter_brrr.try_fix(tried, 0, step, images, budget_s=0.3, rounds=3, cpu=True)
    needs_code = jupyter_brrr.load(CASE.parent / "item_sync.json.gz")
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        for report, name in ((tried, "tried.html"), (needs_code, "item_sync.html")):
            page = context.new_page()
            page.goto(report.save_html(tmp_path / name).as_uri())
            page.wait_for_selector('.jp-brrr[data-state="done"]', timeout=60_000)
            recs = page.locator('[data-testid="brrr-recommendations"]')
            # No kernel here: no Try this fix button that could not run.
            assert recs.locator('[data-testid="brrr-try-fix"]').count() == 0
            if name == "tried.html":
                verdict = recs.locator('[data-testid="brrr-rec-try"]').first
                assert verdict.get_attribute("data-verdict") == entry["verdict"]
                assert verdict.inner_text().startswith("Tried (channels_last): ")
            else:
                change = recs.locator('[data-testid="brrr-rec-change"]').first
                assert "total += loss.item()" in change.locator(".jp-brrr-code-before").inner_text()
                assert "total = total.item()" in change.locator(".jp-brrr-code-after").inner_text()
                saving = recs.locator('[data-testid="brrr-rec-saving"]').first
                assert saving.get_attribute("data-predicted-by") == "replay"
                assert saving.inner_text() == needs_code.recommendations[0]["saving"]["text"]
            page.close()
    finally:
        context.close()
