"""The A/B buttons under a report: Try torch.compile, Try CUDA Graph, a Try this fix per
recommendation whose fix runs without editing the code (``actions/fixes.py``), a time budget,
progress, Cancel. ipywidgets, shown as an output of their own under the report.

Try this fix runs the fix's variant against eager like the other buttons, then stores the
verdict (measured against the saving the replay predicted) in the recommendation's ``"try"``
before the report's output is updated in place. The report's own Overview has a Try this fix
button too (``js/src/views/overview.ts``): it presses this one (found by its class,
``jp-brrr-try-fix-N``) and mirrors the status and Cancel below.

A button callback runs on the kernel's main thread and blocks it: while it runs, no other
message (a Cancel click) is handled. So a click only checks and starts; the A/B runs in a worker
thread that looks at a ``threading.Event`` between runs. Cancel sets the event; so does the
kernel's interrupt (the stop button, Ctrl-C), through a SIGINT handler put in place while the
click is handled (see ``_arm_interrupt``). Widget updates from the worker are comm messages,
which ipykernel sends from any thread; the report is updated in place through its display id.

A cell that looks stateful is never re-run without a click on the confirmation, which lists what
was found, what will be copied and put back after (``snapshot.py``), and what cannot be undone.
"""

from __future__ import annotations

import html
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING, Any

from ..actions import ab
from ..actions.fixes import FIX_OF_CAUSE, verdict
from ..actions.snapshot import StateNotCopied
from ..actions.variants import COMPILE_MODES
from .cell_ab import CellAB, OutputHandle
from .notebook_cell import NotebookCell
from .shell import hidden_names

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..report.report import Report

_PROGRESS_INTERVAL_S = 0.1  # at most this often a widget update (each one is a comm message)


class ABControls:
    """The controls of one report. ``widget`` is what is displayed; ``wait()`` blocks until a
    running A/B is done (for tests and scripts); ``result`` holds the last one."""

    def __init__(
        self,
        cell_ab: CellAB,
        *,
        cuda: bool | None = None,
        budget_s: float = ab.DEFAULT_BUDGET_S,
        shell: InteractiveShell | None = None,
    ) -> None:
        """``cell_ab`` is the A/B a click runs (the cell, its report and display handle); a cell
        it finds stateful makes a click ask first. ``shell``: its kernel's interrupt cancels a
        running A/B."""
        import ipywidgets as w

        if cuda is None:
            import torch

            cuda = torch.cuda.is_available()
        self.cell_ab = cell_ab
        self.report = cell_ab.report
        self.cpu = cpu = cell_ab.cpu
        self.shell = shell
        self.findings = cell_ab.findings
        self.result: ab.ABResult | None = None
        self.error: BaseException | None = None
        self.cancel_event = threading.Event()
        self._thread: threading.Thread | None = None
        # Held while Cancel writes its status and while the worker writes its last one, so that
        # a click at the very end cannot leave "Cancelling..." over the result.
        self._status_lock = threading.Lock()
        self._busy = False
        self._pending: tuple[list[str], int | None] | None = None
        self.fix_index: int | None = None  # the recommendation whose fix the running A/B tries
        self._last_update = 0.0

        self.compile_button = w.Button(
            description="Try torch.compile",
            tooltip="Compare this cell as eager and as torch.compile (mode on the right)",
            layout=w.Layout(width="auto"),
        )
        self.mode = w.Dropdown(
            options=list(COMPILE_MODES), value="default", layout=w.Layout(width="16em")
        )
        if not cuda:
            reason = "CUDA Graph: needs a CUDA GPU, and torch.cuda.is_available() is False here."
        elif cpu:
            reason = "CUDA Graph: the report was made with --cpu; profile without it to try a CUDA graph."
        else:
            reason = ""
        self.graph_button = w.Button(
            description="Try CUDA Graph",
            disabled=bool(reason),
            tooltip=reason
            or "Compare this cell as eager and captured once into a CUDA graph, then replayed",
            layout=w.Layout(width="auto"),
        )
        self.graph_reason = w.HTML(
            f"<span style='opacity:0.7'>{html.escape(reason)}</span>" if reason else ""
        )
        self.budget = w.BoundedFloatText(
            value=budget_s,
            min=0.1,
            max=600.0,
            step=0.5,
            description="s / variant",
            tooltip="Seconds of timing per variant (compile time comes on top)",
            layout=w.Layout(width="12em"),
        )
        self.estimate = w.HTML("")
        self.progress = w.FloatProgress(
            value=0.0, min=0.0, max=1.0, layout=w.Layout(width="16em", visibility="hidden")
        )
        self.status = w.HTML("")
        self.status.add_class("jp-brrr-ab-status")
        # Shown only while an A/B runs: after it, "Done" or "Cancelled" stands alone.
        self.cancel_button = w.Button(
            description="Cancel",
            button_style="warning",
            disabled=True,
            layout=w.Layout(display="none"),
        )
        self.cancel_button.add_class("jp-brrr-ab-cancel")
        self.fix_buttons = self._fix_buttons()
        self.warning = w.HTML("")
        self.confirm_button = w.Button(
            description="Run, then put state back",
            button_style="danger",
            tooltip="Copy the state the cell can change, run the A/B, put the state back",
            layout=w.Layout(width="auto"),
        )
        self.dismiss_button = w.Button(description="Don't run")
        self.confirm_box = w.VBox(
            [self.warning, w.HBox([self.confirm_button, self.dismiss_button])],
            layout=w.Layout(display="none"),
        )
        self.widget = w.VBox(
            [
                w.HBox([self.compile_button, self.mode, self.graph_button, self.budget]),
                self.graph_reason,
                w.HBox(list(self.fix_buttons.values()), layout=w.Layout(flex_flow="row wrap")),
                self.estimate,
                self.confirm_box,
                w.HBox([self.progress, self.cancel_button, self.status]),
            ]
        )
        self.compile_button.on_click(lambda _b: self.request([self._compile_spec()]))
        self.graph_button.on_click(lambda _b: self.request(["graph"]))
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.confirm_button.on_click(lambda _b: self._confirm())
        self.dismiss_button.on_click(lambda _b: self._dismiss())
        self.budget.observe(lambda _change: self._show_estimate(), names="value")
        self.mode.observe(lambda _change: self._show_estimate(), names="value")
        self._show_estimate()

    def _fix_buttons(self) -> dict[int, Any]:
        """A Try this fix button per recommendation whose fix the A/B can apply, by its index."""
        import ipywidgets as w

        buttons = {}
        for n, recommendation in enumerate(self.report.recommendations):
            fix = FIX_OF_CAUSE.get(str(recommendation.get("cause")))
            if fix is None:
                continue
            button = w.Button(
                description=f"Try this fix: {n + 1}. {recommendation['cause']} ({fix})",
                tooltip=(
                    f"Compare this cell as eager and with the fix ({fix}), and the saving "
                    "measured with the one predicted"
                ),
                layout=w.Layout(width="auto"),
            )
            button.add_class(f"jp-brrr-try-fix-{n}")
            button.on_click(lambda _b, n=n, fix=fix: self.request([fix], fix_index=n))
            buttons[n] = button
        return buttons

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        """The widget, with a plain-text fallback that says what it is: a saved notebook shown
        without a kernel (GitHub, nbconvert) has no buttons to show."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = (
            "jupyter_brrr A/B controls (Try torch.compile, Try CUDA Graph): live only in a running kernel."
        )
        return bundle

    # --- state -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> ab.ABResult | None:
        """Block until the running A/B (if any) is done; its result."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.result

    def _compile_spec(self) -> str:
        return "compile" if self.mode.value == "default" else f"compile:{self.mode.value}"

    def estimate_runs(self, variants: list[str]) -> int:
        return self.cell_ab.estimate_runs(variants, float(self.budget.value))

    def _show_estimate(self) -> None:
        runs = self.estimate_runs([self._compile_spec()])
        text = (
            f"Each A/B re-runs this cell at most {runs:,} times (eager and the variant, about "
            f"{float(self.budget.value):g} s of timing each, plus compiling), then shows the "
            "comparison in the report above."
        )
        if self.findings:
            text += " <b>The cell looks stateful</b>: you will be asked to confirm."
        self.estimate.value = f"<span style='opacity:0.7'>{text}</span>"

    # --- actions -----------------------------------------------------------------------------------

    def request(self, variants: list[str], fix_index: int | None = None) -> None:
        """A button was clicked: start, or first ask for confirmation on a stateful cell.
        ``fix_index``: the recommendation whose fix ``variants`` is (Try this fix)."""
        if self.running:
            return
        if self.findings:
            self._pending = (variants, fix_index)
            self.warning.value = self._confirmation_text(variants)
            self.confirm_box.layout.display = "flex"
            self.status.value = "Waiting for confirmation."
            return
        self.start(variants, fix_index=fix_index)

    def _confirmation_text(self, variants: list[str]) -> str:
        runs = self.estimate_runs(variants)
        items = "".join(f"<li>{html.escape(str(f))}</li>" for f in self.findings[:6])
        if len(self.findings) > 6:
            items += f"<li>and {len(self.findings) - 6} more</li>"
        text = (
            f"<b>This cell looks stateful</b>, and the A/B would run it up to {runs:,} times, "
            f"each run changing that state (training the model further, growing a list, "
            f"writing files):<ul>{items}</ul>"
        )
        plan = None
        if self.findings:
            try:
                plan = self.cell_ab.survey()
            except Exception as error:  # a namespace that cannot be walked: say so, ask anyway
                text += html.escape(f"(What the cell can change could not be listed: {error}.) ")
        if plan is not None and plan.complete:
            text += html.escape(
                f"Before the A/B, {plan.describe()} are copied; they are put back when it ends "
                "(and before each checked run), so the variables stay as the first run left "
                "them. Until it ends, do not run cells that change them. "
            )
        elif plan is not None:
            text += html.escape(
                f"The state cannot be copied here ({plan.limit}): the A/B will not run. "
            )
        blocked = self.cell_ab.cannot_put_back(plan) if plan is not None else []
        if blocked:
            lines = "".join(f"<li>{html.escape(item)}</li>" for item in blocked[:6])
            text += (
                "<b>No copy can put back</b> what it changes, so the A/B will not run (it would "
                "claim what does not hold; <code>%%brrr --ab ... --ab-stateful keep</code> runs "
                f"it, keeping what the runs do):<ul>{lines}</ul>"
            )
        undoable = self.cell_ab.undoable
        if undoable:
            lines = "".join(f"<li>{html.escape(str(f))}</li>" for f in undoable[:6])
            text += f"<b>Cannot be undone</b>, every run does it again:<ul>{lines}</ul>"
        return text + "Run it?"

    def _confirm(self) -> None:
        pending, self._pending = self._pending, None
        self.confirm_box.layout.display = "none"
        if pending:
            self.start(pending[0], fix_index=pending[1])

    def _dismiss(self) -> None:
        self._pending = None
        self.confirm_box.layout.display = "none"
        self.status.value = "Not run."

    def start(self, variants: list[str], fix_index: int | None = None) -> None:
        """Start the A/B of ``variants`` (against eager) in a worker thread; with
        ``fix_index``, then the verdict of that recommendation's fix."""
        if self.running:
            return
        self.fix_index = fix_index
        self.cancel_event = threading.Event()
        self.result, self.error = None, None
        self._busy = True
        self._set_running(True)
        self.status.value = "Starting..."
        _arm_interrupt(self.shell, self.cancel_event)
        self._thread = threading.Thread(
            target=self._work,
            args=(list(variants), float(self.budget.value)),
            name="jupyter_brrr A/B",
            daemon=True,
        )
        self._thread.start()

    def cancel(self) -> None:
        """Stop the running A/B after the current run (a compile in progress finishes first)."""
        with self._status_lock:
            if self._busy:
                self.cancel_event.set()
                self.status.value = (
                    "Cancelling after the current run (a compile in progress finishes first)..."
                )

    # --- the worker ----------------------------------------------------------------------------------

    def _work(self, variants: list[str], budget_s: float) -> None:
        try:
            # The same A/B as --ab: it puts the state back when it ends (cancelled or failed
            # too) and, unless cancelled, updates the report, its output and _brrr_ab.
            fix_index = self.fix_index
            result = self.cell_ab.run(
                variants,
                budget_s=budget_s,
                cancel=self.cancel_event,
                progress=self._progress,
                before_update=None if fix_index is None else self._store_verdict,
            )
            self.result = result
            state = _state_line(result)
            if result.cancelled:
                status = html.escape(
                    f"Cancelled after {result.runs_total:,} runs: the report is unchanged. {state}"
                )
            else:
                from ..views import ab_text
                from ..views import format as fmt

                lines = "<br>".join(html.escape(line) for line in ab_text.variant_lines(result))
                status = (
                    f"Done: {result.runs_total:,} runs in {result.elapsed_s:.1f} s. "
                    f"{html.escape(state)}<br>{lines}"
                )
                if fix_index is not None:
                    tried = fmt.tried(self.report.recommendations[fix_index])
                    status += f"<br><b>{html.escape(tried)}</b>"
        except StateNotCopied as error:
            self.error = error
            status = html.escape(f"Not run: {error}")
        except BaseException as error:  # the worker must end cleanly, whatever the cell did
            self.error = error
            status = html.escape(f"The A/B failed: {type(error).__name__}: {error}")
        finally:
            _disarm_interrupt(self.cancel_event)
            with self._status_lock:
                self.status.value = status
                self._busy = False
            self._set_running(False)

    def _store_verdict(self, result: ab.ABResult) -> None:
        """The tried fix's verdict, in its recommendation's ``"try"`` (before the report's
        output is updated, so that it shows with the A/B)."""
        if self.fix_index is None:
            return
        recommendation = self.report.recommendations[self.fix_index]
        fix = FIX_OF_CAUSE[str(recommendation["cause"])]
        recommendation["try"] = verdict(recommendation, result, fix, self.report)

    def _progress(self, step: ab.Progress) -> None:
        now = time.monotonic()
        if not step.new_step and now - self._last_update < _PROGRESS_INTERVAL_S:
            return
        self._last_update = now
        self.progress.value = step.fraction
        if not self.cancel_event.is_set():
            self.status.value = html.escape(f"{step.message} ({step.runs:,} runs so far)")

    def _set_running(self, running: bool) -> None:
        self.compile_button.disabled = running
        self.mode.disabled = running
        self.graph_button.disabled = running or bool(self.graph_reason.value)
        self.budget.disabled = running
        for button in self.fix_buttons.values():
            button.disabled = running
        self.cancel_button.disabled = not running
        self.cancel_button.layout.display = None if running else "none"
        self.progress.layout.visibility = "visible" if running else "hidden"
        if running:
            self.progress.value = 0.0


def _state_line(result: ab.ABResult) -> str:
    restored = result.restored
    if restored is None:
        return ""
    return " ".join(f"{line[0].upper()}{line[1:]}." for line in restored.lines())


def cell_controls(
    shell: InteractiveShell,
    text: str,
    *,
    name: str,
    report: Report,
    handle: OutputHandle | None,
    cpu: bool = False,
) -> ABControls:
    """The controls for the cell ``text`` profiled as ``report``. The cell becomes a function
    only when a button is clicked, with the namespace as it is then; the state it can change is
    copied then and put back after the A/B (``actions.snapshot``)."""
    code = NotebookCell.from_shell(shell, text)
    cell_ab = CellAB(code, report, name=name, hidden=hidden_names(shell), cpu=cpu, handle=handle)
    return ABControls(cell_ab, shell=shell)


# --- the kernel's interrupt ------------------------------------------------------------------------

_ACTIVE: set[threading.Event] = set()
_LOCK = threading.Lock()
_PREVIOUS: dict[str, Any] = {}


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """While an A/B runs in the worker: cancel it. Otherwise: what was there before (ipykernel
    ignores SIGINT between requests)."""
    with _LOCK:
        active = list(_ACTIVE)
    if active:
        for event in active:
            event.set()
        return
    previous = _PREVIOUS.get("handler")
    if callable(previous) and previous is not _on_sigint:
        previous(signum, frame)


def _arm_interrupt(shell: object, event: threading.Event) -> None:
    """Make the kernel's interrupt cancel the A/B.

    ipykernel puts the default SIGINT handler in place while it handles a request and restores
    its saved one (SIG_IGN) after: an interrupt while the kernel is idle, as it is while our
    worker runs, does nothing. Replacing the saved handler during the click's request makes
    ipykernel itself install ``_on_sigint`` when the request ends; the handler falls back to the
    old behaviour when no A/B runs. Without an ipykernel (tests, terminals) only Cancel works.
    """
    with _LOCK:
        _ACTIVE.add(event)
    kernel = getattr(shell, "kernel", None)
    if kernel is None or threading.current_thread() is not threading.main_thread():
        return
    saved = getattr(kernel, "saved_sigint_handler", None)
    if saved is None or saved is _on_sigint:
        return
    _PREVIOUS["handler"] = saved
    kernel.saved_sigint_handler = _on_sigint


def _disarm_interrupt(event: threading.Event) -> None:
    with _LOCK:
        _ACTIVE.discard(event)
