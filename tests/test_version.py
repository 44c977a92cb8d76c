"""The version is written once, in package.json: pyproject.toml reads it from there
(``[tool.hatch.version]``), and ``jupyter_brrr.__version__`` is the installed distribution's."""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

import jupyter_brrr
from jupyter_brrr import _version

ROOT = Path(__file__).resolve().parents[1]


def _package_json_version() -> str:
    return json.loads((ROOT / "package.json").read_text())["version"]


def test_installed_metadata_the_module_and_package_json_agree() -> None:
    written = _package_json_version()
    assert metadata.version("jupyter-brrr") == written
    assert jupyter_brrr.__version__ == written


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11's")
def test_pyproject_reads_the_version_from_package_json_alone() -> None:
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    source = pyproject["tool"]["hatch"]["version"]
    assert source["path"] == "package.json"
    # What hatch's regex source finds: the first match, in multiline mode.
    found = re.search(source["pattern"], (ROOT / "package.json").read_text(), re.MULTILINE)
    assert found is not None and found.group("version") == _package_json_version()
    # And nothing else in the package writes a version of its own.
    for path in (ROOT / "jupyter_brrr").rglob("*.py"):
        assert not re.search(r"^__version__ = ", path.read_text(), re.MULTILINE), path


def test_a_source_tree_that_is_not_installed_reads_package_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_version.metadata, "version", not_installed)
    _version.version.cache_clear()
    try:
        assert _version.version() == _package_json_version()
    finally:
        _version.version.cache_clear()
