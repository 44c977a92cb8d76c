"""The committed notebooks stay byte for byte as they are when opened and saved in a real
JupyterLab without running anything (issue 25, section 3).

JupyterLab holds the outputs as JavaScript values and saves them with JSON.stringify; the
server writes the file with nbformat. A report whose numbers Python spelled ``2.0`` came back
``2``, and an opened notebook was rewritten on its first save. Each notebook under notebooks/ is
opened twice, from a copy in the server's root:

- with no kernel (as a shared notebook is read): every tab of every report is drawn, the
  notebook must not be marked modified, and saving it must leave the file unchanged;
- with a kernel: JupyterLab writes the kernel's ``language_info`` into the notebook's metadata
  when the kernel starts (its own behaviour, for any notebook: a notebook run on another
  Python is modified by that alone), so the copy carries this kernel's ``language_info``
  first, as it would had it last run here; then nothing else may change.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.lab import (
    REPO,
    LabServer,
    app_errors,
    browser_marks,
    open_notebook,
    wait_kernel_idle,
)

pytestmark = browser_marks()

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
DOCUMENT_TYPES = (
    "application/vnd.jupyter-brrr.report+json",
    "application/vnd.jupyter-brrr.job+json",
    "application/vnd.jupyter-brrr.comparison+json",
    "application/vnd.jupyter-brrr.history+json",
)
T_PAGE = 120_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean-root")
    work = tmp_path_factory.mktemp("clean-work")
    server = LabServer(root, work, kernel_env={"OMP_NUM_THREADS": "1"})
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(60_000)
    yield ctx
    ctx.close()


def documents_in(path: Path) -> int:
    """How many outputs of the notebook hold a jupyter_brrr document."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return sum(
        any(mime in (output.get("data") or {}) for mime in DOCUMENT_TYPES)
        for cell in nb.cells
        for output in cell.get("outputs", [])
    )


def with_kernel_language(source: Path, target: Path) -> None:
    """A copy of the notebook with the ``language_info`` this environment's kernel reports
    (the server's ``python3`` kernel runs this interpreter), written by nbformat as the server
    writes notebooks."""
    import nbformat
    from ipykernel.ipkernel import IPythonKernel

    nb = nbformat.read(str(source), as_version=4)
    nb.metadata["language_info"] = dict(IPythonKernel.language_info)
    nbformat.write(nb, str(target))


def draw_every_tab(page, n_documents: int) -> int:
    """Wait until the notebook's reports have drawn, then click every tab of each; returns how
    many tabs were drawn."""
    page.wait_for_function(
        """n => [...document.querySelectorAll('.jp-brrr')]
                 .filter(e => e.dataset.state === 'done').length >= n""",
        arg=n_documents,
        timeout=T_PAGE,
    )
    drawn = 0
    roots = page.locator(".jp-brrr")
    for i in range(roots.count()):
        root = roots.nth(i)
        tabs = root.locator('[data-testid^="brrr-tab-"]')
        for j in range(tabs.count()):
            view = tabs.nth(j).get_attribute("data-testid").removeprefix("brrr-tab-")
            tabs.nth(j).click()
            panel = root.locator(f'[data-panel="{view}"]')
            page.wait_for_function(
                "el => el.dataset.state === 'done' || el.dataset.state === 'error'",
                arg=panel.element_handle(),
                timeout=T_PAGE,
            )
            assert panel.get_attribute("data-state") == "done", panel.inner_text()
            drawn += 1
    return drawn


def dirty(page) -> bool:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")


def save(page) -> None:
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.save()")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=T_PAGE
    )


def assert_same_file(before: bytes, path: Path) -> None:
    after = path.read_bytes()
    if after != before:
        diff = list(
            difflib.unified_diff(
                before.decode().splitlines(), after.decode().splitlines(), "before", "after", n=1
            )
        )
        changed = sum(1 for line in diff[2:] if line[:1] in "+-")
        pytest.fail(f"saving rewrote {changed} lines of {path.name}:\n" + "\n".join(diff[:40]))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_shared_notebook_opened_without_a_kernel_is_saved_unchanged(
    notebook: Path, server: LabServer, context
) -> None:
    path = server.root / f"nokernel_{notebook.name}"
    path.write_bytes(notebook.read_bytes())
    before = path.read_bytes()
    n_documents = documents_in(path)
    page = open_notebook(context, server.url, path.name, kernel=False, timeout=T_PAGE)
    try:
        tabs = draw_every_tab(page, n_documents)
        if n_documents:
            assert tabs >= n_documents, "no report showed its tabs"
        assert not dirty(page), "opening the notebook marked it modified"
        save(page)
        assert_same_file(before, path)
        assert app_errors(page.brrr_errors) == []
    finally:
        page.close()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_opened_with_a_kernel_is_saved_unchanged(
    notebook: Path, server: LabServer, context
) -> None:
    path = server.root / f"kernel_{notebook.name}"
    with_kernel_language(notebook, path)
    before = path.read_bytes()
    n_documents = documents_in(path)
    page = open_notebook(context, server.url, path.name, kernel=True, timeout=T_PAGE)
    try:
        wait_kernel_idle(page, T_PAGE)
        if n_documents:
            page.wait_for_function(
                """n => [...document.querySelectorAll('.jp-brrr')]
                         .filter(e => e.dataset.state === 'done').length >= n""",
                arg=n_documents,
                timeout=T_PAGE,
            )
        assert not dirty(page), "opening the notebook with a kernel marked it modified"
        save(page)
        assert_same_file(before, path)
        assert app_errors(page.brrr_errors) == []
    finally:
        page.close()
        server.shutdown_all_kernels()
