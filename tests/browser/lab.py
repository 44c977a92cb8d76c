"""A real ``jupyter lab`` server for browser tests and benchmarks, and Chromium to drive it.

``LabServer`` starts ``jupyter lab`` on a free local port in its own process group, with a
temporary root dir, no token, ``--allow-root``, JupyterLab's news and update checks off, private
settings, workspaces, runtime and IPython dirs, and an environment for the kernels (for example
``TORCHINDUCTOR_CACHE_DIR``). ``stop()`` ends the server and, if it does not go in time, its
whole process group (its kernels included); it is safe to call twice.

``open_notebook`` opens a notebook in a Playwright page and waits for JupyterLab to show it;
with ``kernel=False`` the page is told not to start a kernel for it (as JupyterLab's
``notebook_starts_kernel = False`` does), so a saved report is shown with no kernel at all.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MIME_TYPE = "application/vnd.jupyter-brrr.report+json"
CHROMIUM = os.environ.get("BRRR_CHROMIUM", "/usr/bin/chromium")
# Chromium's flags for a headless run as root without a GPU or a network (each tried on the
# development machines: without --no-sandbox it does not start as root).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# A report root element that has finished drawing (or failed to).
REPORT_DONE = '.jp-brrr[data-state="done"], .jp-brrr[data-state="error"]'

_CONFIG = """\
c.ServerApp.open_browser = False
c.ServerApp.allow_root = True
c.ServerApp.ip = "127.0.0.1"
c.ServerApp.port_retries = 0
c.ServerApp.disable_check_xsrf = True
c.ServerApp.password = ""
c.IdentityProvider.token = ""
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
c.LabApp.expose_app_in_browser = True
c.NotebookNotary.db_file = ":memory:"
"""


def browser_marks(*, slow: bool = True) -> list:
    """The marks of a browser test module, called at its top: the module is skipped without
    Python Playwright or without Chromium, except where ``BRRR_REQUIRE_BROWSER`` is set (CI),
    where a missing Chromium is an error rather than a silent skip."""
    import pytest

    pytest.importorskip("playwright.sync_api", reason="Python Playwright is not installed")
    if not Path(CHROMIUM).exists() and os.environ.get("BRRR_REQUIRE_BROWSER"):
        raise RuntimeError(
            f"no Chromium at {CHROMIUM}: install Debian's chromium or set BRRR_CHROMIUM"
        )
    marks = [pytest.mark.browser, pytest.mark.slow] if slow else [pytest.mark.browser]
    return [
        *marks,
        pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
    ]


def _die_with_parent() -> None:
    """In the server's process, before exec: get SIGTERM when the test process dies (killed by
    a CI timeout, say), so that no server or kernel outlives it. Linux only; elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """``jupyter lab`` serving ``root``; its own files (config, settings, logs) go to ``work``."""

    def __init__(
        self,
        root: Path,
        work: Path,
        kernel_env: dict[str, str] | None = None,
        *,
        app: str = "jupyterlab",
    ) -> None:
        self.root = Path(root)
        # The module that serves: "jupyterlab" (``jupyter lab``) or "notebook" (``jupyter
        # notebook``, Notebook 7, whose pages are /tree and /notebooks/...).
        self.app = app
        self.work = Path(work)
        self.kernel_env = dict(kernel_env or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = self.work / "jupyter_lab.log"
        self._log = None

    # --- start and stop ---------------------------------------------------------------------

    def start(self, timeout: float = 120) -> LabServer:
        self.work.mkdir(parents=True, exist_ok=True)
        config = self.work / "jupyter_lab_config.py"
        extra = ""
        if importlib.util.find_spec("notebook") is not None:
            # Jupyter Notebook 7 (/tree, /notebooks/...) on the same server, also where the
            # package is importable without its config file (pip install --target).
            extra = 'c.ServerApp.jpserver_extensions = {"notebook": True}\n'
            # Notebook 7's page sets window.jupyterapp only where told (as JupyterLab's does).
            extra += "c.JupyterNotebookApp.expose_app_in_browser = True\n"
        config.write_text(_CONFIG + extra)
        settings = self.work / "lab-settings"
        notif = settings / "@jupyterlab" / "apputils-extension"
        notif.mkdir(parents=True, exist_ok=True)
        # "Would you like to get notified about news?" would cover part of every screenshot.
        (notif / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        env = dict(os.environ)
        env.update(
            {
                "JUPYTERLAB_SETTINGS_DIR": str(settings),
                "JUPYTERLAB_WORKSPACES_DIR": str(self.work / "lab-workspaces"),
                "JUPYTER_RUNTIME_DIR": str(self.work / "runtime"),
                "IPYTHONDIR": str(self.work / "ipython"),
                "MPLBACKEND": "Agg",
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.kernel_env)
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", self.app,
                f"--config={config}",
                "--allow-root",
                "--no-browser",
                "--ServerApp.open_browser=False",
                f"--port={self.port}",
                f"--ServerApp.root_dir={self.root}",
            ],
            cwd=str(self.root),
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() can end its kernels too
            preexec_fn=_die_with_parent,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"{self.url}/api/status", timeout=3) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.app} exited:\n{self.log_text()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab did not start in {timeout} s:\n{self.log_text()}"
                    )
                time.sleep(0.25)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            # SIGTERM: jupyter_server shuts its kernels down and exits. If it hangs, the group.
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        if proc is not None:
            # Kernels left in the server's group (the server died before shutting them down).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def log_text(self, tail: int = 20000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    # --- REST API -----------------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}/api/{path.lstrip('/')}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read()
        return json.loads(text) if text else None

    def kernels(self) -> list[dict]:
        return self.api("GET", "kernels")

    def sessions(self) -> list[dict]:
        return self.api("GET", "sessions")

    def shutdown_all_kernels(self, timeout: float = 60) -> None:
        """Delete every session and kernel, and wait until the server lists none."""
        for s in self.sessions():
            with contextlib.suppress(urllib.error.HTTPError):
                self.api("DELETE", f"sessions/{s['id']}")
        for k in self.kernels():
            with contextlib.suppress(urllib.error.HTTPError):
                self.api("DELETE", f"kernels/{k['id']}")
        deadline = time.monotonic() + timeout
        while self.kernels() or self.sessions():
            if time.monotonic() > deadline:
                raise RuntimeError(f"kernels still running: {self.kernels()}")
            time.sleep(0.25)

    def notebook(self, path: str) -> dict:
        """The notebook as the server has it on disk (the contents API)."""
        return self.api("GET", f"contents/{path}?content=1")["content"]


# --- notebooks --------------------------------------------------------------------------------


def report_bundle(report: Any) -> dict:
    """The display bundle of a report, as IPython's display formatter makes it for an output."""
    from IPython.core.formatters import DisplayFormatter

    data, _metadata = DisplayFormatter().format(report)
    return data


def display_output(bundle: dict) -> Any:
    import nbformat

    data = dict(bundle)
    # nbformat stores binary data as base64 text; IPython's formatter already gives text.
    for key, value in list(data.items()):
        if isinstance(value, bytes):
            data[key] = base64.b64encode(value).decode("ascii")
    return nbformat.v4.new_output("display_data", data=data, metadata={})


def write_notebook(path: Path, cells: list[tuple[str, list[dict]]]) -> None:
    """A notebook of code cells, each (source, [output bundles]); written as a file that the
    server has never signed: untrusted, as a notebook received from someone else is."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for i, (source, bundles) in enumerate(cells, start=1):
        cell = nbformat.v4.new_code_cell(source)
        if bundles:
            cell.execution_count = i
            cell.outputs = [display_output(b) for b in bundles]
        nb.cells.append(cell)
    nbformat.write(nb, str(path))


# --- the browser ------------------------------------------------------------------------------


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def _no_kernel_route(route: Any) -> None:
    """Serve JupyterLab's page with ``notebookStartsKernel`` off: the notebook opens with no
    kernel (``c.LabServerApp.notebook_starts_kernel = False``, for this one page)."""
    if route.request.resource_type != "document":
        route.continue_()
        return
    response = route.fetch()
    body = response.text()
    patched = body.replace('"notebookStartsKernel": true', '"notebookStartsKernel": false')
    if patched == body:
        raise AssertionError("JupyterLab's page has no notebookStartsKernel option to turn off")
    route.fulfill(response=response, body=patched)


def open_notebook(
    context: Any, url: str, path: str, *, kernel: bool, timeout: float = 120_000
) -> Any:
    """A new page with JupyterLab showing the notebook ``path`` (its cells attached)."""
    global _pages_opened
    _pages_opened += 1
    page = context.new_page()
    page.brrr_errors = []  # console errors and uncaught exceptions of the page
    page.on("console", lambda m: page.brrr_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.brrr_errors.append(f"pageerror: {e}"))
    if not kernel:
        # Every JupyterLab page (also one that JupyterLab redirects to another workspace).
        page.route(f"{url}/lab/**", _no_kernel_route)
    # A workspace of its own (JupyterLab would redirect a second page on the same workspace to
    # a new one), reset: nothing that earlier pages opened is restored.
    workspace = f"brrr-test-{os.getpid()}-{_pages_opened}"
    page.goto(f"{url}/lab/workspaces/{workspace}/tree/{path}?reset", timeout=timeout)
    page.wait_for_function(
        """p => { const a = window.jupyterapp; if (!a) return false;
                 const w = a.shell.currentWidget;
                 return !!(w && w.context && w.context.path === p && w.context.isReady
                           && w.content && w.content.widgets && w.content.widgets.length > 0); }""",
        arg=path,
        timeout=timeout,
    )
    starts = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.kernelPreference.shouldStart"
    )
    if starts != kernel:
        raise AssertionError(
            f"{path}: the notebook would start a kernel: {starts}, wanted {kernel}"
        )
    return page


_pages_opened = 0


def kernel_status(page: Any) -> str | None:
    """The current notebook's kernel status in the page (None: no kernel)."""
    return page.evaluate(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   const k = w && w.sessionContext && w.sessionContext.session
                             && w.sessionContext.session.kernel;
                   return k ? k.status : null; }"""
    )


def wait_kernel_idle(page: Any, timeout: float) -> None:
    """Wait until the current notebook's kernel has started and is idle."""
    page.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   const k = w.sessionContext.session && w.sessionContext.session.kernel;
                   return !!k && k.status === 'idle'; }""",
        timeout=timeout,
    )


def run_all_cells(page: Any, timeout: float) -> None:
    """Once the kernel is idle, Run > Run All Cells from the menu, as a user does (JupyterLab's
    and Notebook 7's menus alike)."""
    wait_kernel_idle(page, timeout)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def app_errors(errors: list[str]) -> list[str]:
    """The console errors that come from the report renderer or BokehJS."""
    return [e for e in errors if "brrr" in e.lower() or "bokeh" in e.lower()]


def rank_rows(root: Any, ranks: list[dict]) -> Any:
    """The Ranks tab's rows (a Playwright locator), checked to be one per rank of the job's
    JSON, in its order."""
    rows = root.locator('[data-testid="brrr-rank-row"]')
    assert rows.evaluate_all("rs => rs.map(r => Number(r.dataset.rank))") == [
        r["rank"] for r in ranks
    ]
    return rows


def history_rows(root: Any, runs: list[dict]) -> Any:
    """The runs table of a history (a Playwright locator), checked against its ``runs`` (the
    history's rows): newest first, each with its run number, its verdict against the run
    before, and its span as the page formats it."""
    from jupyter_brrr.report import display

    rows = root.locator('[data-testid="brrr-history-table"] tbody tr')
    assert rows.evaluate_all("rs => rs.map(r => [Number(r.dataset.run), r.dataset.verdict])") == [
        [r["run"], r["verdict"] or ""] for r in reversed(runs)
    ]
    for i, r in enumerate(reversed(runs)):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[0] == str(r["run"])
        assert cells[2] == display.seconds(r["span_s"])
    return rows
