"""The display methods every data object shares (a report, a job report, a comparison, a history,
a target plan, a size sweep, a memory breakdown, an A/B result): each asks the view registry,
``jupyter_brrr.views.render(obj, format)``, for one format. So the objects hold data and
``to_dict()``, and the views draw them, as pyinstrument's ``Session`` is drawn by
``Renderer.render(session)``.

The registry sits in the views layer, above every data object: its import inside ``_render`` is
the one upward import of the package (``tests/test_structure.py`` names it). It is made when an
object is first shown, so that the core runs without any view loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

from .writing import write_page

__all__ = ["Shown", "ShownAsPage"]


def _render() -> Callable[..., Any]:
    from ..views import render  # the view registry: the one upward import

    return render


class Shown:
    """``repr``, the notebook's display (``_repr_mimebundle_``, ``_repr_html_``) and ``lines``,
    each drawn by ``jupyter_brrr.views.render``."""

    def __repr__(self) -> str:
        return _render()(self, "text")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return _render()(self, "mimebundle")

    def _repr_html_(self) -> str:
        return _render()(self, "html")

    @property
    def lines(self) -> list[str]:
        """The plain-text view (``repr``), line by line."""
        return _render()(self, "text").splitlines()


class ShownAsPage(Shown):
    """``Shown``, and ``save_html``: an object the report app draws on a page of its own (a
    report, a job report, a comparison, a history)."""

    def save_html(self, path: str | PathLike, title: str | None = None) -> Path:
        """Write the object as one self-contained interactive HTML file: the app that draws it in
        JupyterLab, with BokehJS, inlined next to its JSON (it opens offline, from anywhere).
        The page is made first and written whole, through a temporary file beside ``path``: a
        failure (no app built, a bad path, a full disk) leaves no half page and an older file
        at ``path`` as it was. Never written over a file the object was read from (its trace),
        a folder or a device. Returns the path."""
        page = _render()(self, "standalone", title=title)
        # The document's kind ("report", "job", ...), for the file name a refusal suggests.
        mime = str(getattr(self, "mime_type", ""))
        kind = mime.removeprefix("application/vnd.jupyter-brrr.").removesuffix("+json")
        return write_page(path, page, kind or "page", inputs=self._read_from())

    def _read_from(self) -> list[str]:
        """The files the object was read from, which no save of it may write over."""
        return []
