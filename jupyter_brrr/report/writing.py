"""How the objects' documents are written: values made JSON-safe (``json_safe``: numpy scalars
to Python, NaN and infinities to null), and files written whole or not at all (a report's JSON
and trace, ``Report.save``; the standalone HTML pages, ``save_html``), through a temporary file
beside the target, so that a failure (a full disk, an interrupt, no app built) leaves the old
file, never half of the new one.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

__all__ = ["json_safe", "json_value", "write_page", "write_whole"]


def json_safe(value: Any) -> Any:
    """A JSON-safe copy: numpy scalars to Python, NaN and infinities to null, anything else that
    JSON cannot hold to its text."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return json_value(value)


def json_value(value: Any) -> Any:
    """One JSON-safe value: a number, text, a boolean or null; anything else as its text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    return str(value)


def write_whole(path: Path, write: Callable[[BinaryIO], Any]) -> None:
    """Write a file through a temporary one beside it. Created as ``open`` would create it (the
    umask's permissions), or with the permissions of the file it replaces."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_page(path: str | PathLike, page: str, kind: str) -> Path:
    """Write an HTML page (made whole before this is called) to ``path``; returns it. ``kind``
    names the document ("report", "job", ...) in the file name a refusal suggests."""
    path = Path(path)
    data = page.encode("utf-8")
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"Cannot write {path}: the folder {path.parent} does not exist (or is not a folder)."
        )
    try:
        write_whole(path, lambda out: out.write(data))
    except IsADirectoryError as err:
        raise IsADirectoryError(
            f"Cannot write {path}: it is a folder. Give the file's name, such as "
            f"{path / (kind + '.html')}."
        ) from err
    except OSError as err:
        raise type(err)(f"Cannot write {path}: {err.strerror or err}.") from err
    return path


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # read by setting; set back at once
    os.umask(mask)
    return mask
