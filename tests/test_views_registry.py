"""The view registry, ``jupyter_brrr.views.render(obj, format)``: every data object drawn in each
format it has, and the objects' display methods (``report.shown``) giving the registry's output.
The objects are real: CPU profiles, a diff of two real traces, a named cell's history, a size
sweep, a memory breakdown and an A/B run here, a job report as Python writes it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import torch
from browser.pages import page_data
from IPython.core.formatters import DisplayFormatter

import jupyter_brrr
from jupyter_brrr.report.comparison import COMPARISON_MIME_TYPE
from jupyter_brrr.report.history import HISTORY_MIME_TYPE, Store
from jupyter_brrr.report.job import JobReport
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.job import JOB_MIME_TYPE
from jupyter_brrr.schema.report import MIME_TYPE
from jupyter_brrr.views import FORMATS, formats, frame, render

DATA = Path(__file__).parent / "data"
ADVICE = DATA / "advice"
PNG = b"\x89PNG\r\n\x1a\n"
PAGES = ("mimebundle", "text", "html", "standalone")


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    x = torch.randn(16, 32)
    report = jupyter_brrr.profile(lambda: model(x), warmup=1, repeat=3)
    store = Store(tmp_path_factory.mktemp("history"))
    store.add("mlp", report, code="model(x)")
    store.add("mlp", jupyter_brrr.profile(lambda: model(x[:8]), warmup=1, repeat=3), code="x[:8]")
    return {
        "report": report,
        "job": JobReport.from_json((DATA / "reports" / "job.json").read_text()),
        "comparison": jupyter_brrr.diff(
            ADVICE / "small_gemm.slow.json.gz", ADVICE / "small_gemm.fixed.json.gz"
        ),
        "history": store.history("mlp"),
        "target": Report.from_json(report.to_json()).set_target("1us"),
        "sweep": jupyter_brrr.sweep(lambda n: model(torch.randn(n, 32)), [8, 16], repeat=2),
        "memory": jupyter_brrr.memory_breakdown(lambda: model(x).sum().backward(), cpu=True),
        "ab": jupyter_brrr.compare(
            lambda: model(x), variants=[("half", lambda: model(x[:8]))], budget_s=0.05
        ),
    }


HAS = {
    "report": FORMATS,
    "job": PAGES,
    "comparison": PAGES,
    "history": PAGES,
    "target": ("mimebundle", "text", "html"),
    "sweep": ("mimebundle", "text", "html", "png"),
    "memory": ("mimebundle", "text", "html", "png"),
    "ab": ("mimebundle", "text", "html"),
}
OWN_MIME = {
    "report": MIME_TYPE,
    "job": JOB_MIME_TYPE,
    "comparison": COMPARISON_MIME_TYPE,
    "history": HISTORY_MIME_TYPE,
}


@pytest.mark.parametrize("name", HAS)
def test_each_object_is_drawn_in_each_format_it_has(name: str, objects: dict) -> None:
    obj = objects[name]
    assert formats(obj) == HAS[name]
    text = render(obj, "text")
    html = render(obj, "html")
    bundle = render(obj, "mimebundle")
    assert text and "\x1b" not in text
    assert html.startswith('<div class="jupyter-brrr-static"') and "<script" not in html
    # The bundle: the object's own JSON where the app draws it, and the same text and HTML.
    assert bundle["text/plain"] == text
    # A report's carries its pictures.
    assert frame.static_part(bundle["text/html"]) == html or name == "report"
    if name in OWN_MIME:
        assert bundle[OWN_MIME[name]] == json.loads(json.dumps(obj.to_dict()))  # pyright: ignore[reportAttributeAccessIssue]  # every drawn object has to_dict
        # Where the front end has no extension: the app in a frame draws the same document.
        assert frame.framed_doc(bundle["text/html"]) == bundle[OWN_MIME[name]]
    else:
        assert set(bundle) == {"text/html", "text/plain"}
        assert bundle["text/html"] == html and frame.framed_doc(html) is None
    if "standalone" in HAS[name]:
        page = render(obj, "standalone")
        assert page_data(page) == json.loads(obj.to_json())  # pyright: ignore[reportAttributeAccessIssue]  # the app's documents have to_json
    if "png" in HAS[name]:
        png = render(obj, "png")
        assert png is not None and png.startswith(PNG)


@pytest.mark.parametrize("name", HAS)
def test_the_display_methods_are_the_registry(name: str, objects: dict) -> None:
    obj = objects[name]
    assert repr(obj) == render(obj, "text")
    assert obj._repr_html_() == render(obj, "html")
    # What IPython puts in a notebook output: the registry's bundle.
    data, _metadata = DisplayFormatter().format(obj)
    bundle = render(obj, "mimebundle")
    if "image/png" in bundle:
        assert base64.b64decode(data["image/png"]) == base64.b64decode(bundle["image/png"])
    assert {k: v for k, v in data.items() if k != "image/png"} == {
        k: v for k, v in bundle.items() if k != "image/png"
    }
    if name != "target":  # a plan's lines are its own words (below)
        assert obj.lines == render(obj, "text").splitlines()
    assert hasattr(obj, "save_html") == ("standalone" in HAS[name])


def test_a_plan_keeps_its_own_lines_and_repr_adds_the_goal(objects: dict) -> None:
    plan = objects["target"]
    assert plan.lines == plan.to_dict()["lines"] and plan.lines
    text = repr(plan).splitlines()
    assert text[0] == "jupyter_brrr target: 1us"
    assert text[1 : 1 + len(plan.lines)] == plan.lines


@pytest.mark.parametrize("name", ["report", "job", "comparison", "history"])
def test_save_html_writes_the_standalone_page(name: str, objects: dict, tmp_path: Path) -> None:
    obj = objects[name]
    path = obj.save_html(tmp_path / "page.html", title="mine")
    page = path.read_text(encoding="utf-8")
    assert "<title>mine</title>" in page
    assert page_data(page) == json.loads(obj.to_json())
    with pytest.raises(IsADirectoryError, match=f"it is a folder.*{name}\\.html"):
        obj.save_html(tmp_path)


def test_what_the_registry_does_not_draw_is_refused_in_words(objects: dict) -> None:
    with pytest.raises(TypeError, match=r"draws the package's data objects .* not int"):
        render(3, "text")
    with pytest.raises(ValueError, match="No format 'pdf': the formats are mimebundle, text"):
        render(objects["report"], "pdf")  # pyright: ignore[reportArgumentType, reportCallIssue]  # a wrong format on purpose
    with pytest.raises(ValueError, match="A SweepResult has no 'standalone' view; it has: "):
        render(objects["sweep"], "standalone")
    with pytest.raises(ValueError, match="a title is only for the 'standalone' page"):
        render(objects["report"], "html", title="x")


def test_the_html_switch_leaves_the_app_out_of_every_output(ipython_shell, monkeypatch) -> None:
    """``%env JUPYTER_BRRR_HTML=static`` in a notebook: the next outputs' ``text/html`` is the
    static fallback alone (no frame, no app), the renderer's JSON still there; ``app`` (and
    nothing set) puts the app back. An unknown value warns and keeps the app."""
    from IPython.utils.capture import capture_output

    # Set (empty: the default) so that monkeypatch takes the variable away again afterwards.
    monkeypatch.setenv(frame.HTML_ENV, "")
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.user_ns["torch"] = torch

    def shown(setting: str | None) -> dict:
        if setting is not None:
            ipython_shell.run_line_magic("env", f"{frame.HTML_ENV}={setting}")
        with capture_output() as out:
            ipython_shell.run_cell_magic("brrr", "", "x = torch.ones(32, 32)\ny = x @ x")
        (output,) = out.outputs
        return output.data

    default = shown(None)
    static = shown("static")
    assert "<iframe" not in static["text/html"] and frame.framed_doc(static["text/html"]) is None
    assert static["text/html"].startswith('<div class="jupyter-brrr-static"')
    assert MIME_TYPE in static and len(static["text/html"]) < len(default["text/html"]) / 3
    assert frame.framed_doc(default["text/html"]) == default[MIME_TYPE]
    assert frame.framed_doc(shown("app")["text/html"]) is not None
    with pytest.warns(UserWarning, match="neither 'app' nor 'static'"):
        assert frame.framed_doc(shown("statc")["text/html"]) is not None
