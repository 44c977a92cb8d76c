"""The tour notebook, executed by nbclient in a real kernel, then shared: (b) converted to HTML by
nbconvert, (c) read where no JavaScript runs (as GitHub shows notebooks). The JupyterLab views (a)
are the browser tests' job.

The notebook is executed once per session (about 20 s on a CPU, one torch.compile included)."""

from __future__ import annotations

import base64
import difflib
import json
import re
import shutil
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_brrr.schema.report import MIME_TYPE, SCHEMA_NAME
from jupyter_brrr.views import frame

ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "notebooks" / "tour.ipynb"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def brrr_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith("%%brrr")]


def report_outputs(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [
        o
        for o in cell.outputs
        if o.output_type in ("display_data", "execute_result") and MIME_TYPE in o.data
    ]


@pytest.fixture(scope="session")
def executed(kernel_env: dict[str, str]) -> Iterator[tuple[nbformat.NotebookNode, float]]:
    nb = nbformat.read(TOUR, as_version=4)
    # kernel "python3" with argv "python" runs this interpreter (jupyter_client substitutes
    # sys.executable), so the kernel sees the same environment as the tests.
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(TOUR.parent)}},
    )
    # The tour's named cells keep their runs beside it: gone again after the tests, unless the
    # folder was there before (someone ran the tour).
    store = TOUR.parent / ".brrr_history"
    existed = store.exists()
    start = time.perf_counter()
    try:
        client.execute(env=kernel_env)
        yield nb, time.perf_counter() - start
    finally:
        if not existed:
            shutil.rmtree(store, ignore_errors=True)


def test_tour_is_committed_without_outputs() -> None:
    nb = nbformat.read(TOUR, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    sources = "\n".join(c.source for c in nb.cells)
    assert "TODO" not in sources and "XXX" not in sources
    assert len(brrr_cells(nb)) == 9


def test_tour_executes_on_cpu_quickly(executed: tuple[nbformat.NotebookNode, float]) -> None:
    nb, seconds = executed
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, errors
    # Includes one torch.compile of the MLP for the A/B cell (about 20 s with a cold cache).
    assert seconds < 180, f"the tour took {seconds:.0f} s"


def test_each_brrr_cell_shows_one_report_bundle(
    executed: tuple[nbformat.NotebookNode, float],
) -> None:
    nb, _ = executed
    for cell in brrr_cells(nb):
        outputs = report_outputs(cell)
        assert len(outputs) == 1, cell.source
        data = outputs[0].data
        assert {MIME_TYPE, "text/html", "image/png", "text/plain"} <= set(data)
        assert data[MIME_TYPE]["schema"] == SCHEMA_NAME
        assert data[MIME_TYPE]["ops"]["data"], "the report has ops"
        assert base64.b64decode(data["image/png"])[:8] == PNG_SIGNATURE


def test_tour_ab_cell_compares_variants(executed: tuple[nbformat.NotebookNode, float]) -> None:
    nb, _ = executed
    (cell,) = [c for c in brrr_cells(nb) if "--ab" in c.source]
    ab = report_outputs(cell)[0].data[MIME_TYPE]["ab"]
    variants = {v["name"]: v for v in ab["variants"]}
    assert variants["compile"]["correct"] is True and variants["compile"]["median_s"] > 0
    # No GPU in CI: the CUDA graph variant fails with a reason, the others still finish.
    assert variants["graph"]["verdict"] == "failed" and "CUDA" in variants["graph"]["error"]


def test_tour_helpers_ran(executed: tuple[nbformat.NotebookNode, float]) -> None:
    nb, _ = executed
    text = "\n".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "speedup_at_2x" in text  # _brrr.what_if()
    assert "aten::addmm" in text  # _brrr.ops.head()
    assert "BokehJS inlined" in text  # save_html
    assert "NVIDIA H200" in text  # the GPT-2 trace from the test data


def test_tour_remeasure_section_compares_the_named_runs(
    executed: tuple[nbformat.NotebookNode, float],
) -> None:
    nb, _ = executed
    named = [c for c in brrr_cells(nb) if "--name attention" in c.source]
    assert len(named) == 2
    first, second = (report_outputs(c)[0].data[MIME_TYPE] for c in named)
    assert first["change"] is None and first["target"]["goal"]["text"] == "1ms"
    change = second["change"]
    assert (change["before"]["run"], change["after"]["run"]) == (1, 2)
    assert second["target"]["goal"]["text"] == "1ms"  # the name kept its target
    assert [run["run"] for run in second["history"]] == [1, 2]
    ops = {row[0]: row for row in change["ops"]["data"]}
    status = change["ops"]["columns"].index("status")
    assert ops["aten::bmm"][status] == "vanished"
    assert any("attention" in name and row[status] == "appeared" for name, row in ops.items())
    (fragment,) = [o.data["text/html"] for o in report_outputs(named[1])]
    assert "Change since attention (run 1)" in fragment
    history = next(c for c in nb.cells if c.source.startswith("%brrr history attention"))
    text = history.outputs[0].data["text/plain"]
    assert len(text.splitlines()) == 3 and "changed" in text.splitlines()[2]
    # The saved notebook names no folder of this machine.
    assert str(ROOT) not in json.dumps([c.get("outputs", []) for c in nb.cells])


def test_the_executed_tour_is_saved_back_unchanged_by_jupyterlab(
    executed: tuple[nbformat.NotebookNode, float], js_round_trip
) -> None:
    """Opened and saved in JupyterLab, the executed tour stays byte for byte the file nbclient
    wrote: the front end holds the notebook as the contents API sends it (nbformat's model as
    JSON) and sends back JSON.stringify of it, which the server writes with nbformat. (The
    browser itself does it in tests/test_browser_clean.py, for the committed notebooks.)"""
    nb, _ = executed
    written = nbformat.writes(nb)
    sent = json.dumps(nbformat.reads(written, as_version=4))
    saved = nbformat.writes(nbformat.from_dict(json.loads(js_round_trip(sent))))
    changed = [
        line
        for line in difflib.unified_diff(written.splitlines(), saved.splitlines(), n=0)
        if line[:1] in "+-"
    ]
    assert saved == written, f"{len(changed) - 2} lines rewritten: {changed[:12]}"


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.images: list[str] = []
        self.frames: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        elif tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        elif tag == "iframe":
            self.frames.append(dict(attrs))


def test_nbconvert_html_shows_the_static_report(
    executed: tuple[nbformat.NotebookNode, float],
) -> None:
    from nbconvert import HTMLExporter

    nb, _ = executed
    page, _ = HTMLExporter().from_notebook_node(nb)
    bare, _ = HTMLExporter().from_notebook_node(nbformat.read(TOUR, as_version=4))
    parsed, parsed_bare = _Page(), _Page()
    parsed.feed(page)
    parsed_bare.feed(bare)
    reports = len(brrr_cells(nb)) + 1  # the seven cells and the GPT-2 trace
    # Each of our outputs adds one hidden sandboxed frame (the app, for a browser that runs
    # scripts) and one inline script that shows it: nothing loaded from elsewhere.
    framed = reports + 1  # ... and %brrr history
    added = parsed.scripts[len(parsed_bare.scripts) :]
    assert parsed.scripts[: len(parsed_bare.scripts)] == parsed_bare.scripts
    assert added == [{}] * framed
    assert len(parsed.frames) == framed
    for attrs in parsed.frames:
        assert attrs["sandbox"] == "allow-scripts" and "hidden" in attrs and attrs["srcdoc"]
        assert "src" not in attrs
    # ... and the static table of %brrr history
    assert page.count('class="jupyter-brrr-static"') == reports + 1
    pictures = [src for src in parsed.images if src.startswith("data:image/png;base64,")]
    assert len(pictures) >= reports
    assert page.count("ops by self CPU time") >= 4 or page.count("ops by GPU time") >= 4
    assert "What to try first" in page  # the GPT-2 trace's recommendations
    assert page.count("<table") >= 2 * reports  # key figures and top ops, per report


def test_no_javascript_view_has_tables_and_pictures(
    executed: tuple[nbformat.NotebookNode, float],
) -> None:
    # Where no JavaScript runs (GitHub), a front-end picks text/html or image/png: both carry
    # the report on their own, and the HTML's static fallback has no script, iframe or style
    # block (the app's frame beside it, for front ends that run scripts, shows instead there).
    nb, _ = executed
    for cell in [*brrr_cells(nb), nb.cells[-1]]:
        (output,) = report_outputs(cell)
        fragment = frame.static_part(output.data["text/html"])
        for forbidden in ("<script", "<iframe", "<style"):
            assert forbidden not in fragment.lower()
        assert "<table" in fragment
        images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', fragment)
        assert images
        assert all(base64.b64decode(i)[:8] == PNG_SIGNATURE for i in images)
        assert base64.b64decode(output.data["image/png"])[:8] == PNG_SIGNATURE
        assert output.data["text/plain"].startswith("jupyter_brrr report")


def test_torch_profiler_log_lines_stay_out_of_the_saved_outputs(
    kernel_env: dict[str, str], tmp_path: Path
) -> None:
    """torch (2.13) prints "USDT:... profiler_start" and "... profiler_stop" from C++ on file
    descriptor 2 each time a profiler starts and stops, which ipykernel sends to the notebook:
    the profilers jupyter_brrr starts (a cell's run, ``--memory``'s run, ``memory_breakdown``)
    leave none in the saved outputs, while the cell's own stderr, from Python and from a C
    library writing on descriptor 2 itself, is kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_brrr"),
        nbformat.v4.new_code_cell(
            "%%brrr --memory\n"
            "import os, sys, torch\n"
            "print('the cell on stderr', file=sys.stderr)\n"
            "os.write(2, b'the cell on descriptor 2\\n')\n"
            "x = torch.ones(64, 64) @ torch.ones(64, 64)"
        ),
        nbformat.v4.new_code_cell(
            "import jupyter_brrr\n"
            "jupyter_brrr.memory_breakdown(lambda: torch.ones(64, 64) @ torch.ones(64, 64))"
        ),
    ]
    client = NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    # ipykernel sends descriptor 2 to the notebook, as in a user's JupyterLab, only where it
    # does not see itself under pytest.
    env = {k: v for k, v in kernel_env.items() if k != "PYTEST_CURRENT_TEST"}
    client.execute(env=env)
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    errors = [o for c in saved.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    stderr = "".join(o.text for c in saved.cells for o in c.outputs if o.get("name") == "stderr")
    assert "the cell on stderr" in stderr and "the cell on descriptor 2" in stderr
    assert "USDT" not in path.read_text() and "profiler_start" not in path.read_text()


def test_the_record_helpers_leave_no_torch_profiler_log_lines(
    kernel_env: dict[str, str], tmp_path: Path
) -> None:
    """``job_profiler``'s profiler starts and stops inside ``prof.step()`` (its schedule) and at
    the ``with``'s ends: torch's "USDT:... profiler_start/stop" lines stay out of the saved
    outputs, while the loop's own stderr (Python's and a C library's on descriptor 2) is kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os, sys, torch\n"
            "from jupyter_brrr.record import job_profiler\n"
            f"with job_profiler({str(tmp_path / 'traces')!r}, wait=1, warmup=1, active=2) as prof:\n"
            "    for i in range(5):\n"
            "        x = torch.ones(64, 64) @ torch.ones(64, 64)\n"
            "        print(f'the loop on stderr {i}', file=sys.stderr)\n"
            "        os.write(2, f'the loop on descriptor 2 {i}\\n'.encode())\n"
            "        prof.step()\n"
            # ipykernel forwards descriptor 2 from a thread of its own: a line written just
            # before the cell ends can reach the notebook after the cell has (a race of
            # ipykernel's, seen once in CI, not of the profiler's silencing).
            "import time; time.sleep(0.5)\n"
            "print(sorted(os.listdir(" + repr(str(tmp_path / "traces")) + ")))"
        ),
    ]
    client = NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    # As in test_torch_profiler_log_lines_stay_out_of_the_saved_outputs: ipykernel sends
    # descriptor 2 to the notebook only where it does not see itself under pytest.
    env = {k: v for k, v in kernel_env.items() if k != "PYTEST_CURRENT_TEST"}
    client.execute(env=env)
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    errors = [o for c in saved.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    stdout = "".join(o.text for c in saved.cells for o in c.outputs if o.get("name") == "stdout")
    assert "rank0_of1.step" in stdout, stdout  # the profiler did record
    stderr = "".join(o.text for c in saved.cells for o in c.outputs if o.get("name") == "stderr")
    for i in range(5):
        assert f"the loop on stderr {i}" in stderr and f"the loop on descriptor 2 {i}" in stderr
    assert "USDT" not in path.read_text() and "profiler_start" not in path.read_text()
