"""What a cell prints and displays when ``%%brrr`` runs it again: the first run's output is the
cell's, the other runs' is counted, not shown.

A plain cell prints once. ``%%brrr`` runs it more often: the warm-up, timed and profiled runs of
``--warmup``/``--repeat``, a sweep's runs at every size, the A/B's thousands. Each would print
(or ``display()``) again, flooding the output and the saved notebook with copies. While
``hidden_output`` is active in a thread, what that thread writes to ``sys.stdout`` and
``sys.stderr`` and what it displays through the shell is counted and dropped; other threads (the
user's cells, while the buttons' A/B runs in a worker thread) print as before. The tool's own
lines go out with ``show``.

Output that does not pass through Python's streams (a C library writing to the file descriptor,
a subprocess) is not seen here.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["HiddenOutput", "first_run_shown", "hidden_output", "show"]

T = TypeVar("T")


@dataclass
class HiddenOutput:
    """What the runs of one ``hidden_output`` printed and displayed and nobody saw."""

    lines: int = 0
    displays: int = 0
    open: bool = False  # inside ``shown()``: output passes

    @property
    def any(self) -> bool:
        return bool(self.lines or self.displays)

    def describe(self) -> str:
        """``"12 lines and 3 displays"``."""
        parts = []
        if self.lines:
            parts.append(f"{self.lines:,} line{'s' if self.lines != 1 else ''}")
        if self.displays:
            parts.append(f"{self.displays:,} display{'s' if self.displays != 1 else ''}")
        return " and ".join(parts) or "nothing"

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        """Let this thread's output through (the run whose output is the cell's)."""
        was, self.open = self.open, True
        try:
            yield
        finally:
            self.open = was


def first_run_shown(fn: Callable[..., T], output: HiddenOutput) -> Callable[..., T]:
    """``fn``, whose first call's output is shown and later calls' hidden by ``output``."""
    first = True

    def run(*args: Any) -> T:
        nonlocal first
        if first:
            first = False
            with output.shown():
                return fn(*args)
        return fn(*args)

    return run


def show(text: str) -> None:
    """Print a line of the tool's own (progress, results) to the notebook, hidden output or
    not."""
    stream = sys.stdout
    print(text, file=stream.stream if isinstance(stream, _Stream) else stream, flush=True)


_LOCK = threading.Lock()
_HIDING: dict[int, HiddenOutput] = {}  # thread id -> its runs' hidden output
_SAVED: dict[str, Any] = {}  # what the filters replaced (stdout, stderr, display_pub), the shell


def _hiding() -> HiddenOutput | None:
    hidden = _HIDING.get(threading.get_ident())
    return None if hidden is None or hidden.open else hidden


class _Stream:
    """``sys.stdout`` or ``sys.stderr`` while some thread hides its output."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        hidden = _hiding()
        if hidden is None:
            return self.stream.write(text)
        hidden.lines += text.count("\n")
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _hiding() is None:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, ipykernel's own attributes
        return getattr(self.stream, name)


class _DisplayPublisher:
    """The shell's ``display_pub`` while some thread hides its output: ``display()``,
    ``update_display()`` and ``clear_output()`` from a hiding thread go nowhere."""

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher

    def publish(self, *args: Any, **kwargs: Any) -> None:
        hidden = _hiding()
        if hidden is None:
            self.publisher.publish(*args, **kwargs)
        else:
            hidden.displays += 1

    def clear_output(self, *args: Any, **kwargs: Any) -> None:
        if _hiding() is None:
            self.publisher.clear_output(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.publisher, name)


@contextlib.contextmanager
def hidden_output(shell: Any = None) -> Iterator[HiddenOutput]:
    """Hide (and count) what this thread prints, and displays through ``shell`` (default: the
    running IPython's), until the block ends; ``HiddenOutput.shown()`` lets a run's output
    through."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    hidden = HiddenOutput()
    ident = threading.get_ident()
    with _LOCK:
        if not _HIDING:
            _install(shell)
        _HIDING[ident] = hidden
    try:
        yield hidden
    finally:
        with _LOCK:
            _HIDING.pop(ident, None)
            if not _HIDING:
                _uninstall(shell)


def _install(shell: Any) -> None:
    _SAVED["shell"] = shell
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        _SAVED[name] = stream
        setattr(sys, name, _Stream(stream))
    publisher = getattr(shell, "display_pub", None)
    if publisher is not None:
        _SAVED["display_pub"] = publisher
        shell.display_pub = _DisplayPublisher(publisher)


def _uninstall(shell: Any) -> None:
    shell = _SAVED.get("shell", shell)
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        # Put back what was there, unless someone replaced the filter meanwhile (then theirs
        # stays, and it holds ours no longer either way once it is done).
        if isinstance(stream, _Stream):
            setattr(sys, name, _SAVED.get(name, stream.stream))
    publisher = getattr(shell, "display_pub", None)
    if isinstance(publisher, _DisplayPublisher):
        shell.display_pub = _SAVED.get("display_pub", publisher.publisher)
    _SAVED.clear()
