"""A notebook output's ``text/html`` as a front end without the jupyter_brrr extension shows it
(VS Code, Google Colab and other hosted notebooks; ``jupyter_brrr/views/frame.py``): in Chromium,
on a page of its own, with no JupyterLab on it and every network request refused. Where scripts
run, the report app draws in its sandboxed frame, every tab of it, and the static fallback is
hidden; where they do not, the fallback is all there is.

Each document the app draws is checked: every saved report in ``tests/data/reports`` that Python
reads, a real GPU report, a job report, a comparison and a named cell's runs. No jupyter server is
needed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.lab import REPO, app_errors, browser_marks

pytestmark = browser_marks(slow=False)

DATA = REPO / "tests" / "data"
REPORTS = DATA / "reports"
T_VIEW = 60_000
DONE = '.jp-brrr[data-state="done"], .jp-brrr[data-state="error"]'


def documents(tmp_path: Path) -> dict[str, object]:
    """Every kind of document the app draws, by name."""
    import jupyter_brrr
    from jupyter_brrr.report.history import Store
    from jupyter_brrr.report.job import JobReport
    from jupyter_brrr.report.report import Report, SchemaError

    docs: dict[str, object] = {}
    for path in sorted(REPORTS.glob("*.json")):
        text = path.read_text()
        if '"jupyter_brrr.job"' in text[:200]:
            docs[path.stem] = JobReport.from_json(text)
            continue
        try:
            docs[path.stem] = Report.from_json(text)
        except SchemaError:
            continue  # a newer schema: Python writes no output for it
    gpu = jupyter_brrr.load(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    assert isinstance(gpu, Report)
    docs["gpt2"] = gpu
    faster = Report.from_json(gpu.to_json())
    faster.ops["gpu_time_s"] = faster.ops["gpu_time_s"] / 2
    docs["comparison"] = jupyter_brrr.diff(gpu, faster)
    store = Store(tmp_path / "store")
    for report in (docs["small_v2"], docs["cpu_only"], docs["small_v2"]):
        store.add("attention", report, code="x = f(y)")  # pyright: ignore[reportArgumentType]
    docs["history"] = store.history("attention")
    return docs


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    """The ``text/html`` of every document's notebook output."""
    return {
        name: obj._repr_mimebundle_()["text/html"]  # pyright: ignore[reportAttributeAccessIssue]
        for name, obj in documents(tmp_path_factory.mktemp("frame")).items()
    }


class Shown:
    """A page that holds one output's ``text/html`` alone, with what it asked the network for
    and the errors it logged."""

    def __init__(self, browser, fragment: str, scripts: bool = True) -> None:
        self.context = browser.new_context(
            viewport={"width": 1000, "height": 900}, java_script_enabled=scripts
        )
        self.remote: list[str] = []
        self.errors: list[str] = []

        def refuse(route) -> None:
            self.remote.append(route.request.url)
            route.abort()

        self.context.route(re.compile(".*"), refuse)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"brrr page error: {e}"))
        self.page.set_content(
            f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{fragment}</body></html>'
        )


@pytest.fixture
def show(browser):
    shown: list[Shown] = []

    def show_(fragment: str, scripts: bool = True) -> Shown:
        shown.append(Shown(browser, fragment, scripts))
        return shown[-1]

    yield show_
    for s in shown:
        s.context.close()


NAMES = [
    "ab",
    "cpu_only",
    "empty",
    "job",
    "named",
    "small",
    "small_v2",
    "sweep",
    "xss",
    "gpt2",
    "comparison",
    "history",
]


def test_every_saved_report_is_checked(outputs: dict[str, str]) -> None:
    assert sorted(outputs) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_app_draws_every_tab_in_its_frame_offline(show, outputs, name: str) -> None:
    shown = show(outputs[name])
    page = shown.page
    page.wait_for_selector('.jp-brrr-framed[data-shown="app"]', timeout=T_VIEW)
    assert page.locator("body > *").count() == 1  # the output alone: no JupyterLab here
    # One report at a time: the app, not the fallback.
    assert page.locator(".jp-brrr-fallback").is_hidden()
    frame_box = page.locator(".jp-brrr-framed > iframe").bounding_box()
    assert frame_box is not None and frame_box["height"] > 100
    assert page.locator("iframe").get_attribute("sandbox") == "allow-scripts"
    app = page.frame_locator(".jp-brrr-framed > iframe")
    root = app.locator(".jp-brrr").first
    root.wait_for(state="attached", timeout=T_VIEW)  # the frame said it has drawn (above)
    assert root.get_attribute("data-state") == "done", root.inner_text()
    tabs = root.locator(".jp-brrr-tab").evaluate_all("els => els.map(e => e.dataset.tab)")
    assert tabs
    for tab in tabs:
        root.locator(f'[data-testid="brrr-tab-{tab}"]').click()
        panel = root.locator(f'[data-panel="{tab}"]')
        panel.wait_for(state="visible", timeout=T_VIEW)
        state = panel.get_attribute("data-state")
        for _ in range(600):
            if state in ("done", "error"):
                break
            page.wait_for_timeout(100)
            state = panel.get_attribute("data-state")
        assert state == "done", f"{name}: the {tab} tab: {panel.inner_text()}"
    # The frame follows the app's height (each tab has its own).
    drawn = root.evaluate("el => el.getBoundingClientRect().height")
    page.wait_for_function(
        "h => Math.abs(document.querySelector('.jp-brrr-framed > iframe')"
        ".getBoundingClientRect().height - h) < 20",
        arg=drawn,
        timeout=T_VIEW,
    )
    assert shown.remote == [], f"the output asked the network for {shown.remote}"
    assert shown.errors == [], shown.errors
    assert app_errors(shown.errors) == []


@pytest.mark.parametrize("name", ["gpt2", "job", "comparison", "history"])
def test_without_scripts_the_static_fallback_is_all_there_is(show, outputs, name: str) -> None:
    shown = show(outputs[name], scripts=False)
    page = shown.page
    fallback = page.locator(".jp-brrr-fallback")
    assert fallback.is_visible()
    assert page.locator("table").first.is_visible()
    assert page.locator("iframe").is_hidden()
    assert len(fallback.inner_text()) > 200
    assert shown.remote == []


# The width of a JupyterLab output at a 1000 px window (issue 25: a 942 px output).
OUTPUT_WIDTH = 942


def key_columns_fit(frame, table_testid: str) -> dict:
    """Where the table's headers end against its scrolling box, and whether its first column
    is pinned."""
    return frame.locator(f'[data-testid="{table_testid}"]').evaluate(
        """t => {
          const box = t.parentElement.getBoundingClientRect();
          const heads = [...t.querySelectorAll('thead th')].map(th => {
            const r = th.getBoundingClientRect();
            return [th.textContent.replace(/[\\u25be\\u25b4]/g, '').trim(), r.left, r.right];
          });
          return {
            left: box.left, right: box.right, heads,
            pinned: getComputedStyle(t.querySelector('tbody td')).position,
          };
        }"""
    )


@pytest.mark.parametrize(
    ("name", "tab", "table", "keys"),
    [
        (
            "gpt2",
            "operators",
            "brrr-ops-table",
            ["op", "self GPU", "total GPU", "TFLOP/s", "GB/s", "FLOP/B", "% of roof", "bound"],
        ),
        ("comparison", "change", "brrr-change-ops-table", ["op", "before", "after", "verdict"]),
    ],
)
def test_the_op_tables_key_columns_show_in_a_notebook_output(
    show, outputs, name: str, tab: str, table: str, keys: list[str]
) -> None:
    shown = show(f'<div style="width:{OUTPUT_WIDTH}px">{outputs[name]}</div>')
    page = shown.page
    page.wait_for_selector('.jp-brrr-framed[data-shown="app"]', timeout=T_VIEW)
    frame = page.frame_locator(".jp-brrr-framed > iframe")
    frame.locator(f'[data-testid="brrr-tab-{tab}"]').click()
    frame.locator(f'[data-testid="{table}"] tbody td').first.wait_for(timeout=T_VIEW)
    fit = key_columns_fit(frame, table)
    assert fit["right"] - fit["left"] < OUTPUT_WIDTH
    heads = {label: (left, right) for label, left, right in fit["heads"]}
    for key in keys:
        left, right = heads[key]
        assert fit["left"] - 1 <= left and right <= fit["right"] + 1, (key, fit)
    # Where a narrower output has to scroll, the op's name stays in view.
    assert fit["pinned"] == "sticky"
    assert shown.errors == []
