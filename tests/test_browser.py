"""Browser tests of the report in a real JupyterLab (issues 3 and 4), with Python Playwright and
Debian's Chromium.

One ``jupyter lab`` server for the session (tests/browser/lab.py: temp root, no token,
``--allow-root``, a free port, news and update checks off, private settings and workspaces, the
kernels' ``TORCHINDUCTOR_CACHE_DIR`` and ``TMPDIR`` under the test's temp dir) serves:

- ``cpu.ipynb``: ``%load_ext jupyter_brrr``, a small torch model on CPU and a
  ``%%brrr --warmup 1 --repeat 2`` cell, run in the browser (Run > Run All Cells);
- ``gpu.ipynb``: the saved output bundle of a real H200 report (GPT-2 forward, bf16), as
  IPython's display formatter makes it, so the GPU views are drawn from real data;
- ``xss.ipynb``: report bundles whose names carry HTML and script;
- ``saved.ipynb``: saved reports from tests/data/reports: a newer schema version, an empty
  report, an A/B with a mismatch and a failed variant, a CPU-only report; the report of a
  rank of a 2-rank gloo job (tests/data/ranks), with communication in its split; and a report
  of version 1 (small.json), as a notebook saved before version 2 holds it.

Notebooks with saved outputs open with no kernel at all (the page is served with JupyterLab's
``notebookStartsKernel`` off). Screenshots go to tests/artifacts/browser/ (git-ignored).
The tests share the server and the browser; each opens the pages it checks (a saved report's
page is fresh for each test), except the live CPU notebook, whose kernel runs once for the
module: its A/B is a module fixture, so the A/B test and the reopen test find it whichever runs
first. No test depends on another or on their order (`pytest --reverse` runs them backwards).

    python -m pytest tests/test_browser.py -v          # the whole browser suite
    python -m pytest -m "not browser"                  # everything else
"""

from __future__ import annotations

import copy
import functools
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
    REPORT_DONE,
    LabServer,
    app_errors,
    browser_marks,
    kernel_status,
    open_notebook,
    report_bundle,
    run_all_cells,
    write_notebook,
)
from browser.pages import rows_of

pytestmark = browser_marks()

DATA = REPO / "tests" / "data"
REPORTS = DATA / "reports"
ARTIFACTS = REPO / "tests" / "artifacts" / "browser"
GPU_TRACE = DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"
VIEWS = ["overview", "operators", "roofline", "timeline", "whatif"]
XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss=1</script>"
ERROR_MIME = "application/vnd.jupyter.error"

# Timeouts (ms). Generous: the machine may have 2 cores, shared with a kernel that compiles.
T_PAGE = 120_000
T_VIEW = 60_000
T_CELL = 180_000
T_AB = 420_000  # torch.compile on CPU with a cold cache (about 20 s alone), then timing

CPU_SETUP = """\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64), torch.nn.Tanh()
).eval()
x = torch.randn(8, 64)"""
CPU_CELL = """\
%%brrr --warmup 1 --repeat 2
with torch.no_grad():
    y = model(x)
y.sum()"""


# --- data ------------------------------------------------------------------------------------------


def load_doc(name: str) -> dict:
    return json.loads((REPORTS / f"{name}.json").read_text())


RANK_TRACE = DATA / "ranks" / "rank0_of2.step4.json.gz"


def rank_report():
    import jupyter_brrr

    return jupyter_brrr.load(RANK_TRACE)


def gpu_report():
    import jupyter_brrr

    report = jupyter_brrr.load(GPU_TRACE)
    assert isinstance(report, jupyter_brrr.Report)
    return report


@functools.cache
def _whatif_report():
    """The GPU report, loaded once for the What-if's questions to Python."""
    return gpu_report()


def xss_real_doc(doc: dict) -> dict:
    """A real report with its op names (and what refers to them) replaced by HTML and script."""
    doc = copy.deepcopy(doc)
    payloads = [XSS_IMG, XSS_SCRIPT, f"{XSS_IMG}&amp;{XSS_SCRIPT}"]
    ops = doc["ops"]
    i_name = ops["columns"].index("name")
    i_mod = ops["columns"].index("module")
    rename: dict[str, str] = {}
    for k, row in enumerate(ops["data"]):
        new = rename.setdefault(row[i_name], f"{payloads[len(rename) % 3]} #{len(rename)}")
        row[i_name] = new
        row[i_mod] = f"{XSS_SCRIPT}.layer{k % 3}"
    kern = doc["kernels"]
    i_op, i_kname = kern["columns"].index("op"), kern["columns"].index("name")
    for k, row in enumerate(kern["data"]):
        row[i_op] = rename.get(row[i_op], row[i_op])
        if k % 2:
            row[i_kname] = f"{XSS_IMG}{row[i_kname]}"
    cpu = doc["cpu_ops"]
    i_cname = cpu["columns"].index("name")
    for row in cpu["data"]:
        row[i_cname] = rename.get(row[i_cname], XSS_SCRIPT)
    doc["name"] = f"real report, {XSS_IMG}"
    doc["recommendations"] = [
        {**rec, "title": f"{XSS_SCRIPT} {rec.get('title', '')}"} if isinstance(rec, dict) else rec
        for rec in doc.get("recommendations") or []
    ]
    return doc


def plain_bundle(doc: dict, text: str) -> dict:
    return {MIME_TYPE: doc, "text/plain": text}


def build_root(root: Path) -> dict:
    """Write the notebooks; returns the report data that the tests check against."""
    from jupyter_brrr import Report

    write_notebook(
        root / "cpu.ipynb",
        [("%load_ext jupyter_brrr", []), (CPU_SETUP, []), (CPU_CELL, [])],
    )
    gpu = gpu_report()
    gpu_bundle = report_bundle(gpu)
    write_notebook(
        root / "gpu.ipynb",
        [(f"import jupyter_brrr\njupyter_brrr.load({GPU_TRACE.name!r})", [gpu_bundle])],
    )
    xss_report = Report.from_json((REPORTS / "xss.json").read_text())
    xss_bundle = report_bundle(xss_report)
    xss_real = xss_real_doc(gpu_bundle[MIME_TYPE])
    # The static fallback of the XSS report on its own (what a front end without the extension
    # shows), then the interactive reports.
    static_only = {k: v for k, v in xss_bundle.items() if k in ("text/html", "text/plain")}
    write_notebook(
        root / "xss.ipynb",
        [
            ("# tests/data/reports/xss.json", [xss_bundle]),
            ("# a real report, names replaced", [plain_bundle(xss_real, "<report>")]),
            ("# static HTML only", [static_only]),
        ],
    )
    write_notebook(
        root / "saved.ipynb",
        [
            ("# newer schema", [plain_bundle(load_doc("newer"), "<newer report>")]),
            ("# empty", [plain_bundle(load_doc("empty"), "<empty report>")]),
            ("# an A/B with a mismatch and a failure", [plain_bundle(load_doc("ab"), "<ab>")]),
            ("# CPU only", [plain_bundle(load_doc("cpu_only"), "<cpu only>")]),
            ("# a gloo rank", [report_bundle(rank_report())]),
            ("# version 1", [plain_bundle(load_doc("small"), "<version 1 report>")]),
        ],
    )
    return {"gpu": gpu_bundle[MIME_TYPE], "xss_real": xss_real}


# --- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """The jupyter lab server; yields (server, report data). Stopped even when a test fails."""
    root = tmp_path_factory.mktemp("lab-root")
    work = tmp_path_factory.mktemp("lab-work")
    data = build_root(root)
    (work / "tmp").mkdir()
    server = LabServer(
        root,
        work,
        kernel_env={
            "TORCHINDUCTOR_CACHE_DIR": str(work / "inductor-cache"),
            "TMPDIR": str(work / "tmp"),
            # One intra-op thread: on a 2-core machine shared with Chromium, two OpenMP threads
            # make tiny ops 100x slower whenever a core is busy.
            "OMP_NUM_THREADS": "1",
        },
    )
    server.start()
    try:
        yield server, data
    finally:
        server.stop()
        log = server.log_text()
        (ARTIFACTS / "jupyter_lab.log").parent.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "jupyter_lab.log").write_text(log)


@pytest.fixture(scope="session")
def server(lab) -> LabServer:
    return lab[0]


@pytest.fixture(scope="session")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(30_000)
    # Record any img / script / iframe / object / embed put into a report (even if removed
    # later), and any request for the payload's "x".
    ctx.add_init_script(
        """
        window.__brrrInjected = [];
        new MutationObserver(list => {
          for (const m of list) for (const n of m.addedNodes) {
            if (!(n instanceof Element)) continue;
            const els = [n, ...n.querySelectorAll('img,script,iframe,object,embed')];
            for (const e of els) {
              if (/^(IMG|SCRIPT|IFRAME|OBJECT|EMBED)$/.test(e.tagName) && e.closest('.jp-brrr'))
                window.__brrrInjected.push(e.outerHTML.slice(0, 200));
            }
          }
        }).observe(document, {childList: true, subtree: true});
        """
    )
    yield ctx
    ctx.close()


def _open_with_reports(context, server, path: str, n_reports: int, *, kernel: bool = False):
    page = open_notebook(context, server.url, path, kernel=kernel, timeout=T_PAGE)
    if n_reports:
        wait_reports(page, n_reports)
    return page


@pytest.fixture(scope="module")
def _cpu_page(context, server):
    """cpu.ipynb with a kernel: Run > Run All Cells, then the report of the %%brrr cell."""
    page = open_notebook(context, server.url, "cpu.ipynb", kernel=True, timeout=T_PAGE)
    run_all_cells(page, T_PAGE)
    # The report, or a traceback (then fail at once, with it).
    page.wait_for_function(
        f"""() => !!document.querySelector('{REPORT_DONE}')
                  || !!document.querySelector('[data-mime-type="{ERROR_MIME}"]')""",
        timeout=T_CELL,
    )
    errors = page.locator(f'[data-mime-type="{ERROR_MIME}"]')
    if errors.count():
        pytest.fail(f"a cell of cpu.ipynb failed:\n{errors.first.inner_text()}")
    yield page
    page.close()


# The saved-report pages are opened fresh for each test (a test's sorting, filtering or theme
# never reaches another); the live CPU page, whose kernel ran the notebook, is shared by the
# module, and each test that uses it brings it to the front (a page in the background gets no
# animation frames: BokehJS would not paint, hover tooltips would not show) and opens the view
# it checks.


@pytest.fixture
def gpu_page(context, server):
    page = _open_with_reports(context, server, "gpu.ipynb", 1)
    yield page
    page.close()


@pytest.fixture
def saved_page(context, server):
    page = _open_with_reports(context, server, "saved.ipynb", 6)
    yield page
    page.close()


@pytest.fixture
def cpu_page(_cpu_page):
    _cpu_page.bring_to_front()
    return _cpu_page


# --- helpers ---------------------------------------------------------------------------------------


def wait_reports(page, n: int, timeout: float = T_PAGE) -> None:
    """Wait until n report roots have finished drawing (or failed)."""
    page.wait_for_function(
        """n => [...document.querySelectorAll('.jp-brrr')]
                 .filter(e => e.dataset.state === 'done' || e.dataset.state === 'error')
                 .length >= n""",
        arg=n,
        timeout=timeout,
    )


def painted(page) -> None:
    """Wait two animation frames: what was drawn is on screen (canvas included)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def open_view(page, root, view: str, timeout: float = T_VIEW) -> float:
    """Click a report tab and wait until its view is drawn; its render time in ms."""
    root.locator(f'[data-testid="brrr-tab-{view}"]').click()
    panel = root.locator(f'[data-panel="{view}"]')
    page.wait_for_function(
        "el => el.dataset.state === 'done' || el.dataset.state === 'error'",
        arg=panel.element_handle(),
        timeout=timeout,
    )
    assert panel.get_attribute("data-state") == "done", panel.inner_text()
    assert root.get_attribute("data-active-tab") == view
    painted(page)
    return float(panel.get_attribute("data-render-ms"))


def shot(target, artifacts: Path, name: str) -> None:
    target.screenshot(path=str(artifacts / f"{name}.png"))


def table_rows(root) -> list[list[str]]:
    """The operators table's cells, as shown (row by row; the name without its caret and the
    module line under it)."""
    return root.locator('[data-testid="brrr-ops-table"]').evaluate(
        """t => [...t.querySelectorAll('tr[data-testid="brrr-op-row"]')].map(tr =>
                 [...tr.children].map(td => {
                   const c = td.cloneNode(true);
                   c.querySelectorAll('.jp-brrr-op-where').forEach(e => e.remove());
                   return c.textContent.replace(/^[\\u25b8\\u25be]/, '').trim();
                 }))"""
    )


def table_header(root) -> list[str]:
    return root.locator('[data-testid="brrr-ops-table"] thead th').evaluate_all(
        "ths => ths.map(th => th.dataset.key)"
    )


def expected_order(ops: list[dict], key: str, desc: bool) -> list[dict]:
    """The renderer's sort: stable, nulls (and empty strings) last in either direction."""
    present = [o for o in ops if o[key] is not None and o[key] != ""]
    missing = [o for o in ops if o[key] is None or o[key] == ""]
    return sorted(present, key=lambda o: o[key], reverse=desc) + missing


def assert_no_xss(page) -> None:
    assert page.evaluate("() => window.__xss") is None, "a payload ran"
    assert page.evaluate("() => window.__brrrInjected") == [], "markup was put into a report"


# --- 1. views of a saved GPU report, and of a live CPU report ---------------------------------------


def test_gpu_report_views(gpu_page, lab, artifacts):
    """A real H200 report (saved output, no kernel): every view draws, from the report's data."""
    page, (server, data) = gpu_page, lab
    doc = data["gpu"]
    s = doc["summary"]
    root = page.locator(".jp-brrr").first
    assert root.get_attribute("data-state") == "done"
    # JupyterLab draws the report's own MIME type, never its text/html (the app in a frame, for
    # front ends without the extension): one report on the page, not two.
    assert page.locator(".jp-brrr-framed, .jp-brrr-fallback, iframe[srcdoc]").count() == 0
    # No kernel for this notebook (the live CPU notebook's may run, whichever test came first).
    assert kernel_status(page) is None
    assert "gpu.ipynb" not in [session["path"] for session in server.sessions()]
    header = root.locator(".jp-brrr-header").inner_text()
    assert "NVIDIA H200" in header and "span" in header and "GPU busy" in header

    # Overview: the split bar, one segment per part with its time.
    bar = root.locator('[data-testid="brrr-split"]')
    bar.wait_for(state="visible")
    parts = bar.locator("[data-part]").evaluate_all("els => els.map(e => e.dataset.part)")
    assert set(parts) == {"compute", "memory", "other", "idle"}, parts
    assert root.locator('[data-testid="brrr-recommendations"]').count() == 1
    # Each recommendation with its cause, evidence, fix and saving at best.
    recs = root.locator(".jp-brrr-rec")
    causes = recs.evaluate_all("els => els.map(e => e.dataset.cause)")
    assert causes == [r["cause"] for r in doc["recommendations"]]
    tiles = recs.nth(causes.index("tile quantisation"))
    assert "50304" in tiles.locator(".jp-brrr-rec-detail").inner_text()
    assert tiles.locator(".jp-brrr-rec-fix").count() == 1
    saving = recs.first.locator(".jp-brrr-rec-saving").inner_text()
    assert saving.startswith("Predicted by replaying the step's dependencies"), saving
    assert saving == doc["recommendations"][0]["detail"][-len(saving) :]
    root.scroll_into_view_if_needed()
    shot(root, artifacts, "gpu_1_overview")

    # Operators: a row per op row of the report, bars drawn.
    open_view(page, root, "operators")
    assert len(table_rows(root)) == min(200, len(doc["ops"]["data"]))
    assert root.locator('[data-testid="brrr-opbars"] canvas').count() >= 1
    # Why an op is far under its roof: its reason, the evidence in the tooltip.
    head = root.locator('.jp-brrr-reason[data-reason="tile quantisation"]').first
    assert "N = 50257" in head.get_attribute("title")
    # A loaded trace has no module paths: no tree.
    assert root.locator('[data-testid="brrr-module-tree"]').count() == 0
    shot(root, artifacts, "gpu_2_operators")

    # Roofline: one point per op with FLOPs, bytes and GPU time.
    open_view(page, root, "roofline")
    chart = root.locator('[data-testid="brrr-roofline"]')
    assert chart.locator("canvas").count() >= 1
    n_points = sum(
        1
        for o in rows_of(doc["ops"])
        if (o["flops"] or 0) > 0 and (o["bytes"] or 0) > 0 and (o["gpu_time_s"] or 0) > 0
    )
    assert n_points > 10
    assert len(chart.evaluate("el => el.jupyterBrrrPoints()")) == n_points
    shot(root, artifacts, "gpu_3_roofline")

    # Timeline: kernels per stream.
    open_view(page, root, "timeline")
    assert root.locator('[data-testid="brrr-timeline"] canvas').count() >= 1
    caption = root.locator('[data-panel="timeline"] .jp-brrr-caption').inner_text()
    n_kernels = len(doc["kernels"]["data"])
    assert f"{n_kernels:,} kernels" in caption, caption
    shot(root, artifacts, "gpu_4_timeline")

    # What-if: starts on the largest part of the span.
    open_view(page, root, "whatif")
    parts_s = {k: s[f"{k}_s"] for k in ("compute", "memory", "other", "idle")}
    largest = max(parts_s, key=parts_s.__getitem__)
    assert root.locator('[data-testid="brrr-whatif-target"]').input_value() == f"part:{largest}"
    shot(root, artifacts, "gpu_5_whatif")
    assert app_errors(page.brrr_errors) == []


def test_cpu_report_live(cpu_page, server, artifacts):
    """%%brrr run in the browser on CPU: the cell's value, the report and its views, controls."""
    page = cpu_page
    cell = page.locator(".jp-CodeCell").nth(2)
    root = cell.locator(".jp-brrr")
    assert root.get_attribute("data-state") == "done", root.inner_text()
    open_view(page, root, "overview")  # whichever test ran before (the A/B shows its tab)
    # The cell ran like a plain cell: its last value is shown.
    assert "tensor(" in cell.locator(".jp-OutputArea-executeResult").inner_text()
    assert "CPU only" in root.locator('[data-testid="brrr-device"]').inner_text()
    assert root.locator('[data-testid="brrr-cpu-only"]').count() == 1
    assert "4 times" in root.locator('[data-testid="brrr-card-runs"]').inner_text()
    root.scroll_into_view_if_needed()
    shot(cell, artifacts, "cpu_1_overview")

    open_view(page, root, "operators")
    rows = table_rows(root)
    names = {r[0] for r in rows}
    assert "aten::addmm" in names and "aten::tanh" in names, names
    # Each op under the module that ran it; the module tree with the time of each subtree.
    where = root.locator(".jp-brrr-op-where").all_inner_texts()
    assert "model.0" in where and "model.3" in where, where
    tree = root.locator('[data-testid="brrr-module-row"]')
    assert tree.first.get_attribute("data-path") == "model"
    assert {"model.0", "model.1", "model.2", "model.3"} <= set(
        tree.evaluate_all("rows => rows.map(r => r.dataset.path)")
    )
    tree.first.click()  # closes the root
    assert tree.count() == 1 or tree.nth(1).get_attribute("data-path") == ""
    tree.first.click()
    shot(root, artifacts, "cpu_2_operators")
    # No GPU: the roofline says why it is empty.
    open_view(page, root, "roofline")
    assert "No GPU was found" in root.locator('[data-panel="roofline"]').inner_text()
    open_view(page, root, "timeline")  # CPU ops over time
    assert root.locator('[data-testid="brrr-timeline"] canvas').count() >= 1
    shot(root, artifacts, "cpu_4_timeline")
    open_view(page, root, "whatif")
    # No GPU: the targets are ops by CPU time, the largest first.
    assert root.locator('[data-testid="brrr-whatif-target"]').input_value() == "op:0"
    assert float(root.locator('[data-testid="brrr-whatif-span"]').get_attribute("data-seconds")) > 0
    shot(root, artifacts, "cpu_5_whatif")
    open_view(page, root, "overview")

    # The A/B controls, a separate output under the report.
    assert cell.get_by_role("button", name="Try torch.compile").is_enabled()
    assert cell.get_by_role("button", name="Try CUDA Graph").is_disabled()
    assert "needs a CUDA GPU" in cell.inner_text()
    assert app_errors(page.brrr_errors) == []


# --- 2. sort the operators table -------------------------------------------------------------------


def test_operators_sort(gpu_page, lab, artifacts):
    page, (_server, data) = gpu_page, lab
    ops = rows_of(data["gpu"]["ops"])
    root = page.locator(".jp-brrr").first
    open_view(page, root, "operators")
    keys = table_header(root)
    i_name, i_calls = keys.index("name"), keys.index("calls")

    def shown(column: int) -> list[str]:
        return [r[column] for r in table_rows(root)]

    # Initially: self GPU time, largest first.
    assert root.locator('th[data-key="gpu_time_s"]').get_attribute("data-sort") == "desc"
    assert shown(i_name) == [o["name"] for o in expected_order(ops, "gpu_time_s", True)]

    # Calls: numbers sort largest first, a second click reverses.
    calls = root.locator('th[data-key="calls"]')
    calls.click()
    assert calls.get_attribute("data-sort") == "desc"
    assert calls.get_attribute("aria-sort") == "descending"
    want = expected_order(ops, "calls", True)
    assert [int(c.replace(",", "")) for c in shown(i_calls)] == [o["calls"] for o in want]
    assert shown(i_name) == [o["name"] for o in want]
    assert shown(i_calls) != sorted(shown(i_calls), key=lambda c: int(c.replace(",", "")))
    calls.click()
    assert calls.get_attribute("data-sort") == "asc"
    want = expected_order(ops, "calls", False)
    assert [int(c.replace(",", "")) for c in shown(i_calls)] == [o["calls"] for o in want]
    assert shown(i_name) == [o["name"] for o in want]

    # Names: text sorts A to Z first (the browser's localeCompare), then Z to A.
    name = root.locator('th[data-key="name"]')
    name.click()
    assert name.get_attribute("data-sort") == "asc"
    names = shown(i_name)
    by_locale = page.evaluate("ns => ns.slice().sort((a, b) => a.localeCompare(b))", names)
    assert names == by_locale and sorted(names) == sorted(o["name"] for o in ops)
    name.click()
    assert name.get_attribute("data-sort") == "desc"
    assert shown(i_name) == by_locale[::-1]  # equal names are equal strings: ties do not show
    shot(root, artifacts, "gpu_2_operators_sorted_by_name_desc")

    # Back to the default order for the tests that follow.
    root.locator('th[data-key="gpu_time_s"]').click()
    assert root.locator('th[data-key="gpu_time_s"]').get_attribute("data-sort") == "desc"


def test_operators_filter_expand_group(gpu_page, lab, artifacts):
    page, (_server, data) = gpu_page, lab
    ops = rows_of(data["gpu"]["ops"])
    kernels = rows_of(data["gpu"]["kernels"])
    root = page.locator(".jp-brrr").first
    open_view(page, root, "operators")
    keys = table_header(root)
    count = root.locator('[data-testid="brrr-count"]')
    assert count.inner_text() == f"{len(ops)} op rows"

    # Filter: name, shapes, category, module or bound contains the text (any case).
    word = "Norm"
    fields = ("name", "shapes", "category", "module", "bound")
    want = [o for o in ops if any(word.lower() in (o[f] or "").lower() for f in fields)]
    assert 0 < len(want) < len(ops)
    root.locator('[data-testid="brrr-filter"]').fill(word)
    page.wait_for_function(
        "([el, text]) => el.textContent === text",
        arg=[count.element_handle(), f"{len(want)} of {len(ops)} op rows"],
    )
    shown = table_rows(root)
    assert [r[keys.index("name")] for r in shown] == [
        o["name"] for o in expected_order(want, "gpu_time_s", True)
    ]

    # Expand the first row: the kernels that this op launched, the longest first.
    first = expected_order(want, "gpu_time_s", True)[0]
    root.locator('[data-testid="brrr-op-row"]').first.click()
    detail = root.locator('[data-testid="brrr-op-detail"]')
    assert detail.count() == 1
    assert root.locator('[data-testid="brrr-op-row"]').first.get_attribute("aria-expanded") == (
        "true"
    )
    mine = [k for k in kernels if k["op"] == first["name"]]
    longest: dict[str, float] = {}
    for k in mine:
        longest[k["name"]] = longest.get(k["name"], 0) + (k["dur_s"] or 0)
    top = max(longest, key=longest.__getitem__)
    assert top in detail.locator(".jp-brrr-kname").first.get_attribute("title")
    assert f"{len(mine)} kernel rows launched by {first['name']}" in detail.inner_text()
    shot(root, artifacts, "gpu_2_operators_filtered_expanded")
    root.locator('[data-testid="brrr-op-row"]').first.click()  # collapse
    assert detail.count() == 0
    root.locator('[data-testid="brrr-filter"]').fill("")
    page.wait_for_function(
        "([el, text]) => el.textContent === text",
        arg=[count.element_handle(), f"{len(ops)} op rows"],
    )

    # Group the bars by category: the chart is drawn again.
    # (Bokeh draws into a shadow root: the plot's host element is replaced.)
    bars = root.locator('[data-testid="brrr-opbars"]')
    before = bars.evaluate_handle("el => el.lastElementChild")
    root.locator('[data-testid="brrr-groupby"]').select_option("category")
    page.wait_for_function(
        "([el, old]) => el.lastElementChild !== old && el.lastElementChild.childElementCount > 0",
        arg=[bars.element_handle(), before],
    )
    bars.locator("canvas").first.wait_for(state="visible")
    root.locator('[data-testid="brrr-groupby"]').select_option("op")


# --- 3. hover a roofline point ---------------------------------------------------------------------


def roofline_points(chart) -> list[dict]:
    return chart.evaluate("el => el.jupyterBrrrPoints()")


def pick_isolated(points: list[dict], box: dict, margin: float = 12) -> dict:
    """The point farthest from its neighbours, inside the chart (away from the legends)."""
    inside = [
        p
        for p in points
        if box["x"] + margin < p["x"] < box["x"] + box["width"] - 60
        and box["y"] + margin < p["y"] < box["y"] + box["height"] - 40
    ]
    assert inside, (points[:5], box)

    def gap(p: dict) -> float:
        others = [math.dist((p["x"], p["y"]), (q["x"], q["y"])) for q in points if q is not p]
        return min(others, default=1e9)

    return max(inside, key=gap)


def hover_roofline_point(page, root) -> tuple[dict, dict]:
    """Open the roofline and move the mouse onto its most isolated point, from outside the chart
    as a mouse does; returns the point and the chart's box."""
    open_view(page, root, "roofline")
    chart = root.locator('[data-testid="brrr-roofline"]')
    chart.scroll_into_view_if_needed()
    painted(page)
    box = chart.bounding_box()
    point = pick_isolated(roofline_points(chart), box)
    page.mouse.move(box["x"] - 30, box["y"] - 30)
    page.mouse.move(point["x"], point["y"], steps=4)
    return point, box


def test_roofline_hover(gpu_page, lab, artifacts):
    page, (_server, data) = gpu_page, lab
    root = page.locator(".jp-brrr").first
    point, box = hover_roofline_point(page, root)
    ops = {o["name"]: o for o in rows_of(data["gpu"]["ops"])}
    assert point["name"] in ops
    tip = page.locator(".jp-brrr-tip").filter(
        has=page.locator(".jp-brrr-tip-title", has_text=point["name"])
    )
    tip.first.wait_for(state="visible", timeout=15_000)
    text = tip.first.inner_text()
    assert tip.first.locator(".jp-brrr-tip-title").inner_text() == point["name"]
    for label in ("shapes", "GPU time", "FLOP/s", "bytes/s", "% of roof", "bound"):
        assert label in text, text
    assert ops[point["name"]]["bound"] in text
    shot(root, artifacts, "gpu_3_roofline_hover")

    # Away from the points: the tooltip goes.
    page.mouse.move(box["x"] - 30, box["y"] - 30)
    tip.first.wait_for(state="hidden", timeout=15_000)


# --- 4. the what-if slider -------------------------------------------------------------------------


TIME_UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def parse_time(text: str) -> float:
    m = re.fullmatch(r"\s*([0-9.,]+)\s*(s|ms|µs|us|ns)\s*", text)
    assert m, text
    return float(m.group(1).replace(",", "")) * TIME_UNITS[m.group(2)]


def shown_projection(root) -> tuple[float, float, float, float]:
    """The slider's factor N and the predicted span, speed-up and limit the tab shows."""
    slider = root.locator('[data-testid="brrr-whatif-slider"]')
    n = 10 ** float(slider.input_value())
    el = root.locator('[data-testid="brrr-whatif-span"]')
    seconds = float(el.get_attribute("data-seconds"))
    assert parse_time(el.inner_text()) == pytest.approx(seconds, rel=6e-3)  # 3 digits shown
    speedup = float(root.locator('[data-testid="brrr-whatif-speedup"]').get_attribute("data-value"))
    limit = float(root.locator('[data-testid="brrr-whatif-limit"]').get_attribute("data-value"))
    return n, seconds, speedup, limit


def check_replayed(root, target: str, span: float, rel: float = 1e-9) -> float:
    """The tab's predicted span for ``target`` at the slider's N is ``report.what_if()``'s in
    Python for the same N and target (exact at the factors the report's curve replayed, within
    ``rel`` between them), and so are its speed-up and limit."""
    n, seconds, speedup, limit = shown_projection(root)
    row = _whatif_report().what_if(factors=(n,)).set_index("id").loc[target]
    assert seconds == pytest.approx(row[f"span_at_{n:g}x_s"], rel=rel)
    assert speedup == pytest.approx(row[f"speedup_at_{n:g}x"], rel=rel)
    assert speedup == pytest.approx(span / seconds, rel=1e-9)
    assert limit == pytest.approx(row["limit"], rel=1e-9)
    return n


def test_whatif_slider(gpu_page, lab, artifacts):
    """The GPU report's What-if: each span replayed on the step's dependencies, the numbers of
    report.what_if() in Python for the same question."""
    page, (_server, data) = gpu_page, lab
    s = data["gpu"]["summary"]
    span = s["span_s"]
    assert data["gpu"]["what_if"] is not None
    root = page.locator(".jp-brrr").first
    open_view(page, root, "whatif")
    method = root.locator('[data-testid="brrr-whatif-method"]')
    assert method.get_attribute("data-method") == "replay"
    assert "predicted by replaying the step's dependencies" in method.inner_text()
    target = root.locator('[data-testid="brrr-whatif-target"]')
    slider = root.locator('[data-testid="brrr-whatif-slider"]')

    # Idle time (the host's work), made 10x faster (value set, input event sent): a factor
    # the report's curve replayed, so exact.
    target.select_option("part:idle")
    slider.fill("1")
    assert check_replayed(root, "part:idle", span) == pytest.approx(10)
    assert root.locator('[data-testid="brrr-whatif-n"]').inner_text().startswith("10")
    # Between the replayed factors: interpolated, close to the replay.
    slider.fill("1.5")
    assert check_replayed(root, "part:idle", span, rel=0.01) == pytest.approx(10**1.5)

    # Every target the tab offers, at 10x and 100x.
    offered = target.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert {"knob:gpu", "knob:launch", "part:compute"} <= set(offered)
    assert set(offered) == {t["id"] for t in data["gpu"]["what_if"]["targets"]}
    for tid in offered:
        target.select_option(tid)
        if slider.is_disabled():  # the synchronisations: removed or not
            assert root.locator('[data-testid="brrr-whatif-n"]').inner_text() == "removed"
            check_replayed(root, tid, span)
            continue
        for value in ("1", "2"):
            slider.fill(value)
            check_replayed(root, tid, span)

    # The op with the most self GPU time, the slider dragged with the mouse to its end (100x).
    ops = [o for o in rows_of(data["gpu"]["ops"]) if (o["gpu_time_s"] or 0) > 0]
    top = max(ops, key=lambda o: o["gpu_time_s"])  # first of the largest, as the sort is stable
    target.select_option("op:0")
    assert top["name"] in target.locator("option:checked").inner_text()
    slider.fill("1")
    slider.scroll_into_view_if_needed()
    b = slider.bounding_box()
    page.mouse.move(b["x"] + b["width"] * 0.3, b["y"] + b["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] + 40, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()
    assert float(slider.input_value()) == pytest.approx(2.0)
    assert check_replayed(root, "op:0", span) == pytest.approx(100)
    shot(root, artifacts, "gpu_5_whatif_op_100x")
    assert app_errors(page.brrr_errors) == []


def test_whatif_slider_keyboard(gpu_page, lab):
    """A keyboard user moves the slider with the arrow keys."""
    page, (_server, data) = gpu_page, lab
    s = data["gpu"]["summary"]
    root = page.locator(".jp-brrr").first
    open_view(page, root, "whatif")
    root.locator('[data-testid="brrr-whatif-target"]').select_option("part:idle")
    slider = root.locator('[data-testid="brrr-whatif-slider"]')
    slider.fill("1")
    slider.focus()
    page.keyboard.press("ArrowLeft")
    assert float(slider.input_value()) == pytest.approx(0.99)
    check_replayed(root, "part:idle", s["span_s"], rel=0.01)


def test_dark_theme(gpu_page, artifacts):
    """JupyterLab Dark: the report follows the theme (screenshots to look at)."""
    page = gpu_page
    root = page.locator(".jp-brrr").first
    light_bg = root.evaluate("el => getComputedStyle(el).backgroundColor")

    def theme(name: str) -> None:
        page.evaluate(
            "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", name
        )
        page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=name)
        painted(page)

    open_view(page, root, "roofline")  # drawn in the light theme first
    renders = page.evaluate("() => (window.jupyterBrrrRenderTiming || []).length")
    theme("JupyterLab Dark")
    try:
        assert root.evaluate("el => getComputedStyle(el).backgroundColor") != light_bg
        # Charts are canvas drawings in the theme's colours: the report redraws on the switch.
        page.wait_for_function(
            "n => (window.jupyterBrrrRenderTiming || []).length > n", arg=renders
        )
        for view in ("overview", "roofline", "timeline"):
            open_view(page, root, view)
            shot(root, artifacts, f"dark_{view}")
    finally:  # a user setting: put it back
        theme("JupyterLab Light")


# --- 6. XSS ----------------------------------------------------------------------------------------


def test_xss_names_are_text(context, server, lab, artifacts):
    data = lab[1]
    requests: list[str] = []

    def on_request(r) -> None:
        requests.append(r.url)

    context.on("request", on_request)  # from the first byte: an <img src=x> would fetch "x"
    page = _open_with_reports(context, server, "xss.ipynb", 2)
    try:
        roots = page.locator(".jp-brrr")
        assert roots.count() == 2
        for k in range(2):
            root = roots.nth(k)
            root.scroll_into_view_if_needed()
            assert root.get_attribute("data-state") == "done", root.inner_text()
            tabs = root.locator("[data-testid^=brrr-tab-]").evaluate_all(
                "els => els.map(e => e.dataset.tab)"
            )
            for view in tabs:
                open_view(page, root, view)
            # Every path that shows a name: an expanded op, the roofline and timeline tooltips.
            open_view(page, root, "operators")
            root.locator('[data-testid="brrr-op-row"]').first.click()
            assert root.locator('[data-testid="brrr-op-detail"]').count() == 1
            point, box = hover_roofline_point(page, root)
            tip_title = page.locator(".jp-brrr-tip-title", has_text=point["name"]).first
            tip_title.wait_for(state="visible", timeout=15_000)
            assert tip_title.inner_text() == point["name"]  # the markup, as text
            shot(root, artifacts, f"xss_{k}_roofline_hover")
            page.mouse.move(box["x"] - 20, box["y"] - 20)
            open_view(page, root, "timeline")
            tl = root.locator('[data-testid="brrr-timeline"]')
            tl.scroll_into_view_if_needed()
            tb = tl.bounding_box()
            for fx in (0.2, 0.4, 0.6, 0.8):
                for fy in (0.3, 0.6):
                    page.mouse.move(tb["x"] + tb["width"] * fx, tb["y"] + tb["height"] * fy)
            page.mouse.move(tb["x"] - 20, tb["y"] - 20)
            shot(root, artifacts, f"xss_{k}_timeline")
            open_view(page, root, "operators")
            shot(root, artifacts, f"xss_{k}_operators")
            open_view(page, root, "overview")
            shot(root, artifacts, f"xss_{k}_overview")

            # The names are there, as text; no element of theirs is.
            text = root.evaluate("el => el.textContent")
            assert XSS_IMG in text and XSS_SCRIPT in text
            assert root.locator("img, script, iframe, object, embed").count() == 0
        assert "&amp;" in roots.nth(0).evaluate("el => el.textContent")  # not decoded
        real = roots.nth(1)
        assert data["xss_real"]["name"] in real.locator(".jp-brrr-title").inner_text()

        # The static HTML fallback of the same report, shown on its own (sanitized by JupyterLab
        # as the notebook is untrusted; the Python side escapes the names anyway).
        static = page.locator(".jp-CodeCell").nth(2).locator(".jp-OutputArea-output")
        static.scroll_into_view_if_needed()
        assert XSS_SCRIPT in static.inner_text()
        # Untrusted, its frame and script are gone: the fallback is what shows.
        assert static.locator("iframe, script").count() == 0
        assert static.locator("table").first.is_visible()

        painted(page)
        assert_no_xss(page)
        assert not [u for u in requests if re.search(r"/x(\?|$)", u)], requests
    finally:
        context.remove_listener("request", on_request)
        page.close()


# --- 7. newer schema, empty report -----------------------------------------------------------------


def test_newer_and_empty_messages(saved_page, artifacts):
    page = saved_page
    newer, empty = page.locator(".jp-brrr").nth(0), page.locator(".jp-brrr").nth(1)
    assert newer.get_attribute("data-state") == "error"
    msg = newer.locator('[data-testid="brrr-error"]').inner_text()
    assert "newer jupyter_brrr (schema version 99)" in msg, msg
    assert "Update jupyter_brrr" in msg, msg
    assert newer.locator("[data-testid^=brrr-tab-]").count() == 0
    newer.scroll_into_view_if_needed()
    shot(newer, artifacts, "saved_newer")

    assert empty.get_attribute("data-state") == "done"
    assert "No GPU work was recorded in this cell." in empty.inner_text()
    empty.scroll_into_view_if_needed()
    shot(empty, artifacts, "saved_empty_overview")
    for view in VIEWS[1:]:
        open_view(page, empty, view)
        panel = empty.locator(f'[data-panel="{view}"]')
        assert panel.locator('[data-testid="brrr-empty"]').count() == 1, view
    assert app_errors(page.brrr_errors) == []


def test_saved_ab_and_cpu_only(saved_page, artifacts):
    """A saved A/B (mismatch and failure shown loudly) and a CPU-only report."""
    page = saved_page
    ab, cpu = page.locator(".jp-brrr").nth(2), page.locator(".jp-brrr").nth(3)
    variants = load_doc("ab")["ab"]["variants"]
    ab.scroll_into_view_if_needed()
    open_view(page, ab, "ab")
    rows = ab.locator('[data-testid="brrr-ab-row"]')
    assert rows.count() == len(variants)
    for k, v in enumerate(variants):
        assert v["name"] in rows.nth(k).inner_text()
    assert ab.locator('[data-testid="brrr-ab-alert"]').count() == 1
    assert "MISMATCH" in ab.locator('[data-testid="brrr-ab-mismatch"]').inner_text()
    assert "failed" in rows.nth(3).inner_text()
    shot(ab, artifacts, "saved_ab")

    cpu.scroll_into_view_if_needed()
    assert "No GPU was found" in cpu.inner_text()
    open_view(page, cpu, "operators")
    assert "Top ops by self CPU time" in cpu.inner_text()
    # The table sorts as the chart does: by self CPU time, with the inclusive time beside it.
    keys = table_header(cpu)
    assert keys.index("self_cpu_time_s") < keys.index("cpu_time_s")
    assert cpu.locator('th[data-key="self_cpu_time_s"]').get_attribute("data-sort") == "desc"
    ops = rows_of(load_doc("cpu_only")["ops"])
    want = [o["name"] for o in expected_order(ops, "self_cpu_time_s", True)]
    assert [row[keys.index("name")] for row in table_rows(cpu)] == want[: len(table_rows(cpu))]
    shot(cpu, artifacts, "saved_cpu_only_operators")

    # One share, one label: the Overview's share of the top op and the What-if's (issue 25).
    open_view(page, cpu, "overview")
    top_row = cpu.locator(".jp-brrr-section", has_text="Top ops by CPU time").locator("tbody tr")
    cells = top_row.first.locator("td").all_inner_texts()
    name, overview_share = cells[0], cells[-1]
    open_view(page, cpu, "whatif")
    label = cpu.locator('[data-testid="brrr-whatif-target"] option:checked').inner_text()
    assert label.startswith(name) and f"({overview_share} of CPU op time)" in label, label
    method = cpu.locator('[data-testid="brrr-whatif-method"]')
    assert method.get_attribute("data-method") == "amdahl"
    assert "Amdahl" in method.inner_text()
    assert app_errors(page.brrr_errors) == []


def test_saved_rank_shows_communication_and_the_cost_model(saved_page, artifacts):
    """A rank of a gloo job: communication is its own part of the split, and the overview says
    how much of the GPU time has a cost model."""
    page = saved_page
    root = page.locator(".jp-brrr").nth(4)
    root.scroll_into_view_if_needed()
    s = rank_report().summary
    bar = root.locator('[data-testid="brrr-split"]')
    bar.wait_for(state="visible")
    parts = bar.locator("[data-part]").evaluate_all("els => els.map(e => e.dataset.part)")
    assert "communication" in parts, parts
    legend = root.locator('.jp-brrr-legend-item[data-part="communication"]').inner_text()
    assert "Communication" in legend
    card = root.locator('[data-testid="brrr-card-modelled"]').inner_text()
    assert s["modelled_share"] is not None
    assert f"{100 * s['modelled_share']:.1f}%" in card.replace("\n", " ")
    assert "cost model" in card.lower()
    shot(root, artifacts, "saved_rank_communication")
    assert app_errors(page.brrr_errors) == []


def test_a_saved_version_1_report_shows_its_tables_and_says_how_to_upgrade(saved_page, artifacts):
    """A report saved before the JSON carried the roofline's geometry (version 1): with no kernel
    there is no Python to upgrade it, so the app draws what its tables hold and says, where the
    geometry is missing, how to get it back."""
    page = saved_page
    root = page.locator(".jp-brrr").nth(5)
    root.scroll_into_view_if_needed()
    doc = load_doc("small")
    assert doc["version"] == 1 and "display" not in doc
    assert root.get_attribute("data-state") == "done"
    assert root.locator('[data-testid="brrr-split"]').count() == 1
    # The DOM's text, not the rendered text: JupyterLab leaves cells out of view unrendered
    # (content-visibility), where inner_text() reads nothing although the card is drawn.
    card = root.locator('[data-testid="brrr-card-flops"]').text_content() or ""
    assert "saved by an older jupyter_brrr" in card, card
    shot(root, artifacts, "saved_v1_overview")
    open_view(page, root, "operators")
    assert table_rows(root)  # the ops, from the table alone
    open_view(page, root, "roofline")
    panel = root.locator('[data-panel="roofline"]')
    assert panel.locator('[data-testid="brrr-empty"]').count() == 1
    text = panel.inner_text()
    assert "saved by an older jupyter_brrr" in text and "python -m jupyter_brrr upgrade" in text
    shot(root, artifacts, "saved_v1_roofline")
    open_view(page, root, "timeline")
    assert root.locator('[data-panel="timeline"]').get_attribute("data-state") == "done"
    # No replayed curves in a version 1 report: the What-if is Amdahl's law, and says so.
    open_view(page, root, "whatif")
    method = root.locator('[data-testid="brrr-whatif-method"]')
    assert method.get_attribute("data-method") == "amdahl"
    assert "Amdahl's law on the span" in (method.text_content() or "")
    shown = root.locator('[data-testid="brrr-whatif-span"]').get_attribute("data-seconds")
    assert float(shown) > 0
    assert app_errors(page.brrr_errors) == []


# --- 8. issue 4: the "Try torch.compile" button ----------------------------------------------------


@pytest.fixture(scope="module")
def cpu_ab(_cpu_page, artifacts) -> dict:
    """The "Try torch.compile" button pressed once on the live CPU report (whichever test asks
    first): what the page showed when the A/B result arrived."""
    page = _cpu_page
    page.bring_to_front()
    cell = page.locator(".jp-CodeCell").nth(2)
    root = cell.locator(".jp-brrr")
    tabs_before = root.locator('[data-testid="brrr-tab-ab"]').count()

    # A shorter time budget (ipywidgets sends the value on Enter).
    budget = cell.locator(".widget-text", has=page.locator("label", has_text="s / variant"))
    budget.locator("input").fill("0.5")
    budget.locator("input").press("Enter")
    cell.get_by_text("about 0.5 s of timing each").wait_for(timeout=30_000)

    button = cell.get_by_role("button", name="Try torch.compile")
    button.click()
    # A stateful-looking cell asks first; this one should not, but confirm if asked.
    confirm = cell.get_by_role("button", name="Run anyway")
    page.wait_for_function(
        """([cellEl]) => !!cellEl.querySelector('.jp-brrr [data-testid="brrr-tab-ab"]')
                     || [...cellEl.querySelectorAll('button')].some(
                          b => b.textContent.includes('Run anyway') && b.offsetParent !== null)
                     || [...cellEl.querySelectorAll('button')].some(
                          b => b.textContent.includes('Try torch.compile') && b.disabled)""",
        arg=[cell.element_handle()],
        timeout=30_000,
    )
    if confirm.is_visible():
        confirm.click()
    # The A/B runs in the kernel (the button is disabled meanwhile), then updates the report
    # and says "Done: ..." (or says why not: failed, cancelled, not run).
    page.wait_for_function(
        """([cellEl]) => {
             const text = [...cellEl.querySelectorAll('.widget-html')]
               .map(e => e.textContent).join('\\n');
             if (/The A\\/B failed|Cancelled after|Not run\\./.test(text)) return true;
             return /Done:/.test(text) && !!cellEl.querySelector(
               '.jp-brrr[data-active-tab="ab"][data-state="done"]');
           }""",
        arg=[cell.element_handle()],
        timeout=T_AB,
    )
    status = cell.locator(".widget-html").filter(
        has_text=re.compile(r"Done:|The A/B failed|Cancelled after|Not run\.")
    )
    root.scroll_into_view_if_needed()
    shot(cell, artifacts, "cpu_6_ab")
    return {
        "tabs_before": tabs_before,
        "status": status.first.inner_text(),
        "active_tab": root.get_attribute("data-active-tab"),
        "reports": page.locator(".jp-brrr").count(),
        "rows": root.locator('[data-testid="brrr-ab-row"]').count(),
        "text": root.locator('[data-panel="ab"]').inner_text(),
    }


def test_ab_button_updates_report(cpu_page, cpu_ab):
    page = cpu_page
    cell = page.locator(".jp-CodeCell").nth(2)
    assert cpu_ab["tabs_before"] == 0  # no A/B before the button
    assert "Done:" in cpu_ab["status"], cpu_ab["status"]
    assert cpu_ab["active_tab"] == "ab"  # shown as soon as it arrived
    assert cpu_ab["reports"] == 1  # updated in place, not a second report
    assert cpu_ab["rows"] >= 2
    assert "eager" in cpu_ab["text"] and "compile" in cpu_ab["text"], cpu_ab["text"]
    assert cell.get_by_role("button", name="Try torch.compile").is_enabled()
    assert page.locator(".jp-brrr").count() == 1
    assert app_errors(page.brrr_errors) == []


# --- 5 (+8). save, reopen the saved copy with no kernel ---------------------------------------------


def test_saved_notebook_reopens_without_kernel(cpu_page, cpu_ab, context, server, artifacts):
    import nbformat

    page = cpu_page
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w.context.path === 'cpu.ipynb' && !w.context.model.dirty; }",
        timeout=60_000,
    )
    saved = server.notebook("cpu.ipynb")
    outputs = saved["cells"][2]["outputs"]
    reports = [o["data"][MIME_TYPE] for o in outputs if MIME_TYPE in o.get("data", {})]
    assert len(reports) == 1, [list(o.get("data", {})) for o in outputs]
    assert reports[0]["ab"], "the A/B result is not in the saved notebook"

    # Copies of the saved notebook, as this user reopens it (signed by this server: trusted) and
    # as someone else would receive it (not signed: untrusted). The live page keeps its kernel,
    # for the other tests; the copies must start none.
    reopened = server.api("POST", "contents", {"copy_from": "cpu.ipynb"})["path"]
    nb = nbformat.read(str(server.root / "cpu.ipynb"), as_version=4)
    nb.metadata["shared_by"] = "someone else"
    nbformat.write(nb, str(server.root / "cpu_shared.ipynb"))

    for name in (reopened, "cpu_shared.ipynb"):
        page2 = _open_with_reports(context, server, name, 1)
        try:
            root = page2.locator(".jp-brrr").first
            assert root.get_attribute("data-state") == "done", root.inner_text()
            assert kernel_status(page2) is None, "a kernel was started"
            trusted = page2.evaluate(
                "() => window.jupyterapp.shell.currentWidget.content.widgets[2].model.trusted"
            )
            assert trusted is (name == reopened)
            # The interactive views, drawn from the saved data.
            for view in VIEWS[1:]:
                open_view(page2, root, view)
            open_view(page2, root, "overview")
            if name == "cpu_shared.ipynb":
                root.scroll_into_view_if_needed()
                shot(page2.locator(".jp-CodeCell").nth(2), artifacts, "reopened_overview")
            # Issue 4: the A/B result persisted with the notebook.
            open_view(page2, root, "ab")
            assert root.locator('[data-testid="brrr-ab-row"]').count() == cpu_ab["rows"]
            assert root.locator('[data-panel="ab"]').inner_text() == cpu_ab["text"]
            if name == "cpu_shared.ipynb":
                shot(page2.locator(".jp-CodeCell").nth(2), artifacts, "reopened_ab")
            assert app_errors(page2.brrr_errors) == []
            sessions = [s["path"] for s in server.sessions()]
            assert name not in sessions, f"a kernel was started: {sessions}"
        finally:
            page2.close()


# --- 9. Jupyter Notebook 7 -------------------------------------------------------------------------


def test_notebook7_renders_report(context, server, artifacts):
    """The same saved report in Jupyter Notebook 7: /tree, then /notebooks/gpu.ipynb."""
    pytest.importorskip(
        "notebook", reason="Jupyter Notebook 7 (the notebook package) is not installed"
    )
    # Its own copy: Notebook 7 starts a kernel for the notebook it opens, which the tests that
    # open gpu.ipynb with no kernel must not find.
    path = server.api("POST", "contents", {"copy_from": "gpu.ipynb"})["path"]
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(f"{server.url}/tree", timeout=T_PAGE)
        page.get_by_text(path).first.wait_for(timeout=T_PAGE)
        page.goto(f"{server.url}/notebooks/{path}", timeout=T_PAGE)
        wait_reports(page, 1)
        root = page.locator(".jp-brrr").first
        assert root.get_attribute("data-state") == "done", root.inner_text()
        # As in JupyterLab: the report's own MIME type, never its text/html (the app in a
        # frame and the static fallback): one report on the page.
        assert page.locator(".jp-brrr").count() == 1
        assert page.locator(".jp-brrr-framed, .jp-brrr-fallback, iframe[srcdoc]").count() == 0
        for view in VIEWS[1:]:
            open_view(page, root, view)
        shot(root, artifacts, "notebook7_gpu_whatif")
        open_view(page, root, "roofline")
        shot(page, artifacts, "notebook7_gpu_roofline_page")
        assert app_errors(errors) == []
    finally:
        page.close()
        for session in server.sessions():
            if session["path"] == path:
                server.api("DELETE", f"sessions/{session['id']}")
