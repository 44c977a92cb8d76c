"""Fixtures shared by the test modules: one real IPython shell, one Inductor cache."""

from __future__ import annotations

import os

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython


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
