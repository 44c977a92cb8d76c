"""The view registry: ``render(obj, format)`` draws any of the package's data objects in one of
its formats, as pyinstrument's ``Renderer.render(session)`` draws a session. The objects' own
display methods (``repr``, the notebook's ``_repr_mimebundle_`` and ``_repr_html_``, ``lines``,
``save_html``) are one mixin, ``report.shown.Shown``, that calls it.

Formats:

- ``"mimebundle"``: the notebook output, one bundle of representations (the object's own MIME
  type with its JSON where the JupyterLab renderer draws it, HTML, plain text; a report's
  picture as ``image/png``); front ends pick the richest one they can show. For the objects the
  app draws (those with a standalone page), the ``text/html`` is the app in a sandboxed frame
  with the static HTML as its fallback (``frame.py``): the interactive report in VS Code and
  hosted notebooks, the static one where no script runs.
- ``"text"``: plain text (``repr``, the CLI, ``text/plain``).
- ``"html"``: a static HTML fragment, no script (nbconvert, GitHub, ``text/html``).
- ``"standalone"``: the offline page of ``save_html``: the report app with the JSON inlined.
- ``"png"``: a picture, where the object has one (``None`` where it has nothing to draw or
  the picture libraries are missing).

What each object has (``formats(obj)`` says it too):

=================== ============================================ ===========================
object              its views                                    standalone, png
=================== ============================================ ===========================
``Report``          ``bundle``, ``text``, ``html``, ``pictures`` both
``JobReport``       ``job_text``, ``job_html``                   standalone
``Comparison``      ``change`` (the Change view)                 standalone
``History``         ``change`` (the runs table)                  standalone
``SavedHistory``    ``change`` (as a ``History``)                standalone
``TargetPlan``      ``change``                                   neither
``SweepResult``     ``sweep_memory``                             png
``MemoryBreakdown`` ``sweep_memory``                             png
``ABResult``        ``ab_text``                                  neither
=================== ============================================ ===========================

Views that read a document (a comparison's, a history's, a plan's, a sweep's) are given it made
once per call: ``to_dict()`` of a history compares each run with the one before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, overload

from ..actions.ab import ABResult
from ..actions.sweep import SweepResult
from ..capture.memory import MemoryBreakdown
from ..report.comparison import COMPARISON_MIME_TYPE, Comparison
from ..report.history import HISTORY_MIME_TYPE, History, SavedHistory
from ..report.job import JobReport
from ..report.report import Report
from ..report.target import TargetPlan
from ..schema.job import JOB_MIME_TYPE
from ..schema.report import as_saved_by_browser
from . import (
    ab_text,
    bundle,
    change,
    frame,
    html,
    job_html,
    job_text,
    pictures,
    standalone,
    text,
)
from . import sweep_memory as sweep_view
from .markup import wrap

__all__ = ["FORMATS", "VIEWS", "Format", "View", "formats", "render", "view_of"]

Format = Literal["mimebundle", "text", "html", "standalone", "png"]
FORMATS: tuple[Format, ...] = ("mimebundle", "text", "html", "standalone", "png")


@dataclass(frozen=True)
class View:
    """How one kind of object is drawn: a function per format it has."""

    text: Callable[[Any], str]
    html: Callable[[Any], str]
    mimebundle: Callable[[Any], dict]
    png: Callable[[Any], bytes | None] | None = None
    # The standalone page: the report app draws this object's JSON (js/src/standalone.ts).
    standalone: bool = False


def _of_document(
    text_of: Callable[[dict], str],
    html_of: Callable[[dict], str],
    mime_type: str | None = None,
    png_of: Callable[[dict], bytes | None] | None = None,
    standalone: bool = False,
) -> View:
    """The view of an object whose views read its document (``to_dict()``)."""

    def mimebundle(obj: Any) -> dict:
        doc = obj.to_dict()
        own = {mime_type: as_saved_by_browser(doc)} if mime_type else {}
        return {**own, "text/html": html_of(doc), "text/plain": text_of(doc)}

    return View(
        text=lambda obj: text_of(obj.to_dict()),
        html=lambda obj: html_of(obj.to_dict()),
        mimebundle=mimebundle,
        png=(lambda obj: png_of(obj.to_dict())) if png_of else None,
        standalone=standalone,
    )


def _job_bundle(job: JobReport) -> dict:
    return {
        JOB_MIME_TYPE: as_saved_by_browser(job.to_dict()),
        "text/html": job_html.render(job),
        "text/plain": job_text.render(job),
    }


def _plain_bundle(text_of: Callable[[Any], str], html_of: Callable[[Any], str]) -> Callable:
    return lambda obj: {"text/html": html_of(obj), "text/plain": text_of(obj)}


VIEWS: dict[type, View] = {
    Report: View(
        text=text.render,
        html=html.render,
        mimebundle=bundle.mimebundle,
        png=lambda report: pictures.draw(report).combined,
        standalone=True,
    ),
    JobReport: View(
        text=job_text.render, html=job_html.render, mimebundle=_job_bundle, standalone=True
    ),
    Comparison: _of_document(change.text, change.html, COMPARISON_MIME_TYPE, standalone=True),
    History: _of_document(
        change.history_doc_text, change.history_fragment, HISTORY_MIME_TYPE, standalone=True
    ),
    SavedHistory: _of_document(
        change.history_doc_text, change.history_fragment, HISTORY_MIME_TYPE, standalone=True
    ),
    TargetPlan: _of_document(change.target_text, change.target_fragment),
    SweepResult: _of_document(
        lambda doc: "\n".join(sweep_view.sweep_lines(doc)),
        lambda doc: wrap([sweep_view.sweep_html(doc)]),
        png_of=sweep_view.sweep_png,
    ),
    MemoryBreakdown: _of_document(
        lambda doc: "\n".join(sweep_view.memory_lines(doc)),
        lambda doc: wrap([sweep_view.memory_html(doc)]),
        png_of=sweep_view.memory_png,
    ),
    ABResult: View(
        text=ab_text.render,
        html=ab_text.fragment,
        mimebundle=_plain_bundle(ab_text.render, ab_text.fragment),
    ),
}


def view_of(obj: object) -> View:
    """The view of an object (of its class, or the nearest base class that has one)."""
    for cls in type(obj).__mro__:
        if cls in VIEWS:
            return VIEWS[cls]
    drawn = ", ".join(sorted(cls.__name__ for cls in VIEWS))
    raise TypeError(
        f"jupyter_brrr.views.render draws the package's data objects ({drawn}), "
        f"not {type(obj).__name__}."
    )


def formats(obj: object) -> tuple[Format, ...]:
    """The formats ``render`` can draw ``obj`` in."""
    view = view_of(obj)
    return tuple(
        f
        for f in FORMATS
        if (f != "standalone" or view.standalone) and (f != "png" or view.png is not None)
    )


@overload
def render(obj: object, format: Literal["mimebundle"] = ..., *, title: None = None) -> dict: ...
@overload
def render(
    obj: object, format: Literal["text", "html", "standalone"], *, title: str | None = None
) -> str: ...
@overload
def render(obj: object, format: Literal["png"], *, title: None = None) -> bytes | None: ...
def render(
    obj: object, format: Format = "mimebundle", *, title: str | None = None
) -> dict | str | bytes | None:
    """Draw a data object in one format (see the module docstring). ``title``: the standalone
    page's title (by default what the app's header says the object is).

    Raises ``TypeError`` for an object the registry does not draw, and ``ValueError`` for a
    format the object does not have, naming the ones it has."""
    view = view_of(obj)
    if format not in FORMATS:
        raise ValueError(f"No format {format!r}: the formats are {', '.join(FORMATS)}.")
    if format not in formats(obj):
        has = ", ".join(formats(obj))
        raise ValueError(f"A {type(obj).__name__} has no {format!r} view; it has: {has}.")
    if title is not None and format != "standalone":
        raise ValueError("render: a title is only for the 'standalone' page.")
    if format == "mimebundle":
        shown = view.mimebundle(obj)
        if view.standalone:
            mime = obj.mime_type  # pyright: ignore[reportAttributeAccessIssue]  # the app's documents have one
            title = standalone.default_title(obj)  # pyright: ignore[reportArgumentType]
            shown["text/html"] = frame.framed(shown[mime], shown["text/html"], title)
        return shown
    if format == "text":
        return view.text(obj)
    if format == "html":
        return view.html(obj)
    if format == "png":
        return view.png(obj) if view.png is not None else None
    return standalone.render(obj, title=title)  # pyright: ignore[reportArgumentType]  # formats() let only the app's documents through
