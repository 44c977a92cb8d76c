"""Fixtures shared by the test modules: one real IPython shell, one Inductor cache, the
environment of a real kernel, Chromium for the browser tests, JavaScript's JSON round trip
(Node.js), and the GPT-2 report; and ``--reverse``, which runs the tests backwards (no test may
depend on another's state)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

import jupyter_brrr
from jupyter_brrr.report.report import Report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="session")
def ipython_shell():
    """The test IPython shell: ``start_ipython`` makes it on the first call and returns None
    after, so later callers take the running one."""
    return start_ipython() or get_ipython()


@pytest.fixture(scope="session", autouse=True)
def inductor_cache(tmp_path_factory):
    """Inductor's cache in this session's tmp (not a shared folder of the machine), unless set."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "inductor_cache")
    yield
    os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)


@pytest.fixture(scope="session")
def kernel_env(inductor_cache) -> dict[str, str]:
    """The environment for a real kernel: it imports jupyter_brrr from this checkout even where
    it is not installed, and inherits this session's Inductor cache (nothing is written into
    the repository)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse",
        action="store_true",
        help="run the collected tests in reverse order (each must set up its own state)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--reverse"):
        items.reverse()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the live controls' widgets that the in-process shell made, while their comms can
    still close: left to the interpreter's shutdown, every widget's ``__del__`` prints a
    KeyError (its comm manager is gone), hundreds of lines after pytest's summary."""
    widgets = sys.modules.get("ipywidgets")
    if widgets is None:
        return
    # A comm whose manager forgot it raises KeyError once, after marking itself closed, so
    # each retry gets further.
    for _ in range(100_000):
        try:
            widgets.Widget.close_all()
            return
        except KeyError:
            continue


@pytest.fixture(scope="session")
def browser():
    """Chromium (tests/browser/lab.py), one for the session: Playwright's sync API allows one
    driver per thread, so the browser test modules share it."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from browser.lab import launch_chromium

    with sync_playwright() as p:
        chromium = launch_chromium(p)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def gpt2() -> Report:
    """The H200 GPT-2 forward trace (bf16, batch 8 x 1024), loaded."""
    report = jupyter_brrr.load(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz")
    assert isinstance(report, Report)
    return report


@pytest.fixture(scope="session")
def js_round_trip() -> Callable[[str], str]:
    """JSON text as a browser front end gives it back: ``JSON.stringify(JSON.parse(text))``,
    run by Node.js (which builds the extension, so it is on the PATH wherever the package was
    installed from source)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node.js on the PATH")

    def round_trip(text: str) -> str:
        script = (
            "let s = '';"
            "process.stdin.setEncoding('utf8');"
            "process.stdin.on('data', c => { s += c; });"
            "process.stdin.on('end', () => process.stdout.write(JSON.stringify(JSON.parse(s))));"
        )
        done = subprocess.run(
            [node, "-e", script], input=text, capture_output=True, text=True, check=True
        )
        return done.stdout

    return round_trip


class FakeClock:
    """A host clock that moves only when told: ``sleep`` advances it at once (after
    pyinstrument's fake_time_util). A step that calls ``sleep(0.01)`` takes exactly 10 ms by
    every budget, deadline and host-timed run of jupyter_brrr, on any machine, however loaded."""

    def __init__(self) -> None:
        self.time = 1000.0

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """jupyter_brrr's host clock (``capture.clocks.now``) replaced by a ``FakeClock``."""
    from jupyter_brrr.capture import clocks

    clock = FakeClock()
    monkeypatch.setattr(clocks, "now", clock.now)
    return clock
