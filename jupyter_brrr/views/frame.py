"""The ``text/html`` of a notebook output where the front end has no jupyter_brrr extension but
runs scripts (VS Code, Google Colab and other hosted notebooks): the report app itself, the one
``save_html`` writes (``standalone.py``), in a sandboxed frame, next to the static fallback.

The output, in order:

- an ``<iframe sandbox="allow-scripts" srcdoc="..." hidden>``: a page that holds the app
  (script and styles) and the document's JSON, each gzip-compressed and base64-encoded (the app
  is 1.25 MB as it is, 0.46 MB so), and a few lines that decompress them with the browser's
  ``DecompressionStream`` and start the app. The frame has an opaque origin: it reaches neither
  the notebook page nor its cookies, and loads nothing from the network;
- the static fallback (``html.py``, ``job_html.py``, ``change.py``): tables and pictures, no
  script, for nbconvert, GitHub and any front end that runs no script;
- a short script that shows the frame (at height 0) and, once the app inside says it has drawn
  its first view (``js/src/standalone.ts`` posts its height), gives the frame that height and
  hides the fallback, in the same step. So one report is seen at a time: the fallback where no
  script runs (or where the app does not start), the app where it draws.

JupyterLab and Notebook 7 never show this: the bundle holds the document under the app's own
MIME type, which the extension's renderer draws at a better rank than ``text/html``.

The switch ``JUPYTER_BRRR_HTML`` (an environment variable of the kernel, read at each display:
``%env JUPYTER_BRRR_HTML=static`` in a notebook) chooses the ``text/html``: ``app`` (the
default) the frame and the fallback, ``static`` the fallback alone. The app costs about 0.5 MB
per output, which only front ends without the extension use; ``static`` leaves it out (notebooks
kept in git, read in JupyterLab or Notebook 7, or on GitHub). The default is ``app`` because an
output outlives the front end it was made in: a notebook run in JupyterLab and opened later in VS
Code or Colab shows the interactive report only if every output carries the app (one copy per
notebook cannot serve: Colab draws each output in its own frame, and a cell moved, cleared or run
again would take the one copy with it), and the kernel cannot know where a saved notebook will be
opened.

Everything is a function of the document only (gzip's time stamp is 0), so drawing an output
again gives the same bytes.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import warnings
from functools import cache
from html import escape, unescape

from .standalone import DATA_ID, ROOT_ID, AppNotBuilt, app

__all__ = [
    "FALLBACK_CLASS",
    "FRAME_CLASS",
    "HTML_ENV",
    "HTML_MODES",
    "framed",
    "framed_doc",
    "html_mode",
    "packed",
    "static_part",
]

# The switch: the output's text/html is the app with its fallback, or the fallback alone.
HTML_ENV = "JUPYTER_BRRR_HTML"
HTML_MODES = ("app", "static")

# The class of the output's outer element, and of the fallback inside it.
FRAME_CLASS = "jp-brrr-framed"
FALLBACK_CLASS = "jp-brrr-fallback"
APP_ID, STYLES_ID, DOC_ID = "jupyter-brrr-app", "jupyter-brrr-styles", "jupyter-brrr-doc"
# The kind of message the app in a frame posts its height with (js/src/standalone.ts).
_MESSAGE = "jupyter_brrr.frame"

# Inside the frame: decompress the styles, the document and the app, put them where the
# standalone entry (js/src/standalone.ts) looks for them, and run the app.
_LOADER = f"""
(async () => {{
  const unpack = id => {{
    const text = atob(document.getElementById(id).textContent.trim());
    const bytes = Uint8Array.from(text, c => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  }};
  const [styles, doc, app] = await Promise.all(
    ['{STYLES_ID}', '{DOC_ID}', '{APP_ID}'].map(unpack)
  );
  const style = document.createElement('style');
  style.textContent = styles;
  document.head.appendChild(style);
  const data = document.createElement('script');
  data.type = 'application/json';
  data.id = '{DATA_ID}';
  data.textContent = doc;
  document.body.appendChild(data);
  const script = document.createElement('script');
  script.textContent = app;
  document.body.appendChild(script);
}})();
"""

# Outside the frame (in the notebook's output): show the frame once the app has drawn, at the
# height it says, and hide the fallback then. A front end that runs scripts runs this one; the
# frame is found from the script itself (front ends run a copy of it in its place).
_SHOW = f"""
(() => {{
  const script = document.currentScript;
  const boxes = document.querySelectorAll('.{FRAME_CLASS}:not([data-shown])');
  const box = (script && script.closest('.{FRAME_CLASS}')) || boxes[boxes.length - 1];
  if (!box) return;
  box.dataset.shown = 'frame';
  const frame = box.querySelector(':scope > iframe');
  const fallback = box.querySelector(':scope > .{FALLBACK_CLASS}');
  frame.hidden = false;
  window.addEventListener('message', event => {{
    const said = event.data;
    if (event.source !== frame.contentWindow || !said || said.kind !== '{_MESSAGE}') return;
    frame.style.height = Math.ceil(Number(said.height) || 0) + 'px';
    fallback.hidden = true;
    box.dataset.shown = 'app';
  }});
}})();
"""


def _pack(data: bytes, level: int = 9) -> str:
    return base64.b64encode(gzip.compress(data, compresslevel=level, mtime=0)).decode("ascii")


@cache
def _packed_app() -> tuple[str, str]:
    """The built app's script and styles, compressed (once per process)."""
    script, styles = app()
    return _pack(script.encode("utf-8")), _pack(styles.encode("utf-8"))


def packed(doc: dict) -> str:
    """A document's JSON, compressed as the frame reads it."""
    # Level 6, not 9: a document is packed on every display (the app once per process), and
    # 9 takes twice as long for 2-3% fewer bytes (a 1.9 MB report: 44 against 24 ms).
    return _pack(json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8"), 6)


def html_mode() -> str:
    """What the outputs' ``text/html`` holds now: ``"app"`` (the default) or ``"static"``, from
    ``$JUPYTER_BRRR_HTML``. Any other value warns and draws the app."""
    value = os.environ.get(HTML_ENV, "").strip().lower()
    if not value:
        return "app"
    if value not in HTML_MODES:
        warnings.warn(
            f"{HTML_ENV}={value!r} is neither 'app' nor 'static': the outputs carry the app.",
            stacklevel=2,
        )
        return "app"
    return value


def framed(doc: dict, fallback: str, title: str) -> str:
    """The output's ``text/html``: the app in a sandboxed frame, drawing ``doc`` (a document of
    the app: a report's, a job report's, a comparison's, a history's), and ``fallback`` (the
    static HTML) where no script runs. Just ``fallback`` where the app is not built, or where
    ``$JUPYTER_BRRR_HTML`` is ``static``."""
    if html_mode() == "static":
        return fallback
    try:
        script, styles = _packed_app()
    except AppNotBuilt:
        return fallback
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head>"
        f'<body class="jp-brrr-page jp-brrr-in-frame"><div id="{ROOT_ID}"></div>'
        f'<script type="text/plain" id="{STYLES_ID}">{styles}</script>'
        f'<script type="text/plain" id="{DOC_ID}">{packed(doc)}</script>'
        f'<script type="text/plain" id="{APP_ID}">{script}</script>'
        f"<script>{_LOADER}</script></body></html>"
    )
    return (
        f'<div class="{FRAME_CLASS}">'
        f'<iframe sandbox="allow-scripts" hidden title="{escape(title)}" '
        'style="display:block;width:100%;height:0;border:0" '
        f'srcdoc="{escape(page, quote=True)}"></iframe>'
        f'<div class="{FALLBACK_CLASS}">{fallback}</div>'
        f"<script>{_SHOW}</script></div>"
    )


_FRAMED = re.compile(
    rf'^<div class="{FRAME_CLASS}"><iframe [^>]*></iframe><div class="{FALLBACK_CLASS}">'
    r"(.*)</div><script>[^<]*</script></div>$",
    re.S,
)


def static_part(text_html: str) -> str:
    """The static fallback of an output's ``text/html`` (the whole of it where it is not
    framed): what nbconvert, GitHub and front ends that run no script show."""
    match = _FRAMED.match(text_html)
    return match.group(1) if match else text_html


def framed_doc(text_html: str) -> dict | None:
    """The document the app in an output's frame draws (``None`` where it is not framed)."""
    srcdoc = re.search(r'<iframe [^>]*\bsrcdoc="([^"]*)"', text_html)
    if srcdoc is None:
        return None
    page = unescape(srcdoc.group(1))
    (blob,) = re.findall(rf'<script type="text/plain" id="{DOC_ID}">([^<]*)</script>', page)
    return json.loads(gzip.decompress(base64.b64decode(blob)))
