"""The package's version, written once: in package.json, which pyproject.toml reads it from
(``[tool.hatch.version]``), as the JupyterLab extension template does."""

from __future__ import annotations

import json
from functools import cache
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "jupyter-brrr"


@cache
def version() -> str:
    """The installed distribution's version; in a source tree that is not installed (the
    package put on the path by hand), the one package.json beside the package says."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    try:
        return str(json.loads((Path(__file__).parents[1] / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "0+unknown"
