"""How the objects' documents are written: values made JSON-safe (``json_safe``: numpy scalars
to Python, NaN and infinities to null), and every file the package writes through one path,
``write_file``: a report's JSON and trace (``Report.save``), a job's (``JobReport.save``), the
standalone HTML pages (``save_html``), the command line's ``--json`` and the history store's run
files.

``write_file`` writes to a regular file or a new name only: a folder, a device, a FIFO or a
socket given as the path is refused in words (replacing a device node with a file is how a
"save" could break a system); so is a file the same call read (compared by resolved path and by
inode, so a hard link, a symbolic link or a folder's file counts too). Symbolic links are
followed: the file they lead to is written, the link stays. The data goes to a temporary file
beside the target, flushed to the disk, then replaces the target in one step: a failure (a full
disk, an interrupt) leaves the old file, never half or none of the new one, and its message
names the user's path, not the temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

__all__ = ["WriteRefused", "check_target", "json_safe", "json_value", "write_file", "write_page"]


class WriteRefused(ValueError):
    """A path that is not written, and why (a device, a FIFO, a socket, a file the same call
    read); the message says what to give instead."""


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


Inputs = Iterable[str | PathLike | None]


def check_target(path: str | PathLike, inputs: Inputs = (), other_name: str | None = None) -> Path:
    """The file ``path`` leads to (symbolic links followed), after checking that it may be
    written: its folder exists, it is a regular file or a new name, and it is none of ``inputs``
    (the files the same call read). Raises ``FileNotFoundError``, ``IsADirectoryError`` or
    ``WriteRefused`` with what to do; ``other_name`` is the file name a refusal suggests
    (beside ``path``, or in it when it is a folder)."""
    given = Path(path)
    target = Path(os.path.realpath(given))
    other_name = other_name or "out.json"
    instead = f" Give another name, such as {given.parent / other_name}."
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        found = None
    except OSError as error:  # a loop of links, a name too long, no permission to look
        raise WriteRefused(f"Cannot write {given}: {error.strerror or error}.{instead}") from None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise _os_error(
            errno.EISDIR,
            f"Cannot write {given}: it is a folder. Give the file's name, such as "
            f"{given / other_name}.",
        )
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise WriteRefused(
            f"Cannot write {given}: it is {_kind_of(found.st_mode)}, not a regular file, and "
            f"saving would replace it.{instead}"
        )
    if not target.parent.is_dir():
        raise _os_error(
            errno.ENOENT,
            f"Cannot write {given}: the folder {given.parent} does not exist (or is not a folder).",
        )
    for source in inputs:
        if source is not None and _same_file(target, found, Path(source)):
            raise WriteRefused(
                f"Cannot write {given}: it is {source}, a file this call read, and writing there "
                f"would replace it.{instead}"
            )
    return target


def write_file(
    path: str | PathLike,
    data: bytes | Callable[[BinaryIO], Any],
    *,
    inputs: Inputs = (),
    other_name: str | None = None,
    exclusive: bool = False,
) -> Path:
    """Write ``data`` (bytes, or a function that writes to the open file) to ``path`` whole or
    not at all, after ``check_target``; returns ``path``. Created as ``open`` would create it
    (the umask's permissions), or with the permissions of the file it replaces. ``exclusive``:
    never replace a file (``FileExistsError`` when the name is taken, as ``open(path, "x")``)."""
    given = Path(path)
    if exclusive and os.path.lexists(given):  # a link too: nothing is written where it leads
        raise FileExistsError(errno.EEXIST, f"{given} exists")
    target = check_target(given, inputs, other_name)
    write = data if callable(data) else (lambda out: out.write(data))
    try:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        # The temporary name is kept short: a long file name plus the suffix would pass the
        # 255 bytes a name may hold.
        prefix = f".{target.name[:64]}."
        handle, temporary = tempfile.mkstemp(prefix=prefix, dir=target.parent)
    except OSError as error:
        raise _naming(error, given) from None
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())  # a full disk shows here, not after the rename
        os.chmod(temporary, mode)
        if exclusive:
            os.link(temporary, target)  # fails when the name is taken: nothing is replaced
            os.unlink(temporary)
        else:
            os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError) and not isinstance(error, FileExistsError):
            raise _naming(error, given) from None
        raise
    return given


def write_page(path: str | PathLike, page: str, kind: str, inputs: Inputs = ()) -> Path:
    """Write an HTML page (made whole before this is called) to ``path``; returns it. ``kind``
    names the document ("report", "job", ...) in the file name a refusal suggests; ``inputs``
    are the files the page's document was read from."""
    return write_file(path, page.encode("utf-8"), inputs=inputs, other_name=f"{kind}.html")


def _same_file(target: Path, found: os.stat_result | None, source: Path) -> bool:
    """Whether ``source`` is the file ``target`` names: the same resolved path, or (it exists)
    the same inode on the same device."""
    if Path(os.path.realpath(source)) == target:
        return True
    try:
        other = os.stat(source)
    except OSError:
        return False
    return found is not None and (other.st_dev, other.st_ino) == (found.st_dev, found.st_ino)


def _kind_of(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link that leads to no file"
    return "not a regular file"


def _naming(error: OSError, given: Path) -> OSError:
    """The same error, its message naming the user's path (not the temporary file)."""
    return _os_error(error.errno, f"Cannot write {given}: {error.strerror or error}.")


def _os_error(code: int | None, message: str) -> OSError:
    """The ``OSError`` subclass of ``code`` (``FileNotFoundError`` for ENOENT...), whose text is
    ``message`` alone (no "[Errno N]" before it)."""
    kind = type(OSError(code, "")) if code is not None else OSError
    error = kind(message)
    error.errno = code
    return error


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # read by setting; set back at once
    os.umask(mask)
    return mask
