"""The notebook side of ``run_job``: the ``%brrr_job`` line magic, with a progress bar and Cancel.

In a front end where someone can click, the job runs in a worker thread: the cell ends at once
(the kernel stays usable), a progress bar and a Cancel button show under it, and the job report
replaces the "running" line in place when the job ends (through its display id, so the saved
notebook holds it). With ``--wait``, or where nobody can click (nbclient, nbconvert), the cell
blocks until the job ends, printing its progress; the kernel's interrupt stops the job. Either
way the report is stored in ``_brrr_job``.
"""

from __future__ import annotations

import html
import shlex
import threading
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import DisplayHandle, display

from ..capture.launch import JobCancelled, JobRunError, check_timeout, run_job
from .shell import widgets_enabled

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..report.job import JobReport

_USAGE = (
    "usage: %brrr_job [--nproc N] [--steps SKIP,WARMUP,RECORD] [--out DIR] [--timeout S] "
    "[--wait] script.py [args ...]"
)
# The options of %brrr_job (docs/reference.md lists each; tests/test_docs.py checks it does).
VALUE_OPTIONS = ("--nproc", "--steps", "--out", "--timeout")
SWITCHES = ("--wait", "-h", "--help")


class JobControls:
    """Progress bar, status line and Cancel for one job; the job runs in ``start()``'s thread.
    ``wait()`` blocks until it ends (tests, scripts); ``result`` / ``error`` hold the outcome."""

    def __init__(
        self, handle: DisplayHandle | None = None, shell: InteractiveShell | None = None
    ) -> None:
        import ipywidgets as w

        self.handle = handle
        self.shell = shell
        self.cancel_event = threading.Event()
        self.result: JobReport | None = None
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.progress = w.FloatProgress(value=0.0, min=0.0, max=1.0, layout=w.Layout(width="16em"))
        self.status = w.HTML("")
        self.cancel_button = w.Button(description="Cancel", button_style="warning")
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.widget = w.HBox([self.progress, self.cancel_button, self.status])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = "jupyter_brrr job progress (live only in a running kernel)"
        return bundle

    def start(self, script: str, args: list[str], **options: Any) -> None:
        self._say("starting")
        self._thread = threading.Thread(
            target=self._work, args=(script, args, options), name="jupyter_brrr-job", daemon=True
        )
        self._thread.start()

    def cancel(self) -> None:
        self.cancel_event.set()
        self.cancel_button.disabled = True
        self._say("cancelling: stopping every rank...")

    def wait(self, timeout: float | None = None) -> JobReport | None:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.result

    def _say(self, text: str) -> None:
        self.status.value = f"<span>{html.escape(text)}</span>"

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.value = fraction
        self._say(message)

    def _work(self, script: str, args: list[str], options: dict) -> None:
        try:
            job = run_job(
                script, *args, progress=self._progress, cancel=self.cancel_event, **options
            )
        except JobCancelled as error:
            self.error = error
            self._say(str(error))
        except Exception as error:  # shown, not raised: nobody waits on this thread
            self.error = error
            self._say(f"failed: {error}")
            if self.handle is not None:
                self.handle.update({"text/plain": f"%brrr_job: {error}"}, raw=True)
        else:
            self.result = job
            if self.shell is not None:
                self.shell.user_ns["_brrr_job"] = job
            self.progress.value = 1.0
            self._say("done: the report is below (and in _brrr_job)")
            if self.handle is not None:
                self.handle.update(job)
        finally:
            # The job has ended: its last word (done, cancelled, failed) stands alone.
            self.cancel_button.disabled = True
            self.cancel_button.layout.display = "none"


@magics_class
class JobMagics(Magics):
    """Holds the ``%brrr_job`` line magic."""

    @property
    def ip(self) -> InteractiveShell:
        """The shell the magic is registered with (IPython sets it before any call)."""
        assert self.shell is not None
        return self.shell

    @line_magic
    def brrr_job(self, line: str) -> Any:
        """Run a training script under torchrun with every rank profiled, then show the job's
        report: each rank's split with communication, overlap, the collectives' bandwidth and
        the straggler.

            %brrr_job [--nproc N] [--steps SKIP,WARMUP,RECORD] [--out DIR] [--timeout S] [--wait]
                      script.py [args ...]

        --nproc N         ranks on this host (default 2)
        --steps S,W,R     training steps skipped, warmed up and recorded (default 1,1,3); a step
                          is one optimizer.step(), or one jupyter_brrr.record.step() where the
                          script calls it
        --out DIR         where the traces and job.log go (default brrr_traces/<script>-<time>)
        --timeout S       stop the job after S seconds
        --wait            block the cell until the job ends (what nbclient and nbconvert get)

        Without --wait, in JupyterLab or Notebook, the job runs in the background with a
        progress bar and Cancel; the report appears in this cell's output when it ends. The
        report is stored in ``_brrr_job``; ``jupyter_brrr.load(DIR)`` reads the traces again.

        To stop a job: Cancel; with --wait (or under nbclient), the kernel's interrupt. torchrun
        and every rank also end with the kernel, however it ends (a restart, a shutdown, a
        kill): no rank is left running.
        """
        parsed = _parse(line)
        if parsed is None:
            return None
        options, script, args, wait = parsed
        if wait or not widgets_enabled(self.ip):
            return self._run_blocking(script, args, options)
        handle = display(
            {
                "text/plain": f"%brrr_job: running {script}; the report appears here. Cancel "
                "stops it, as does restarting the kernel."
            },
            raw=True,
            display_id=True,
        )
        controls = JobControls(handle=handle, shell=self.ip)
        display(controls)
        controls.start(script, args, **options)
        return None

    def _run_blocking(self, script: str, args: list[str], options: dict) -> Any:
        seen: list[str] = []

        def progress(_fraction: float, message: str) -> None:
            if not seen:  # the job starts now (a refused one never gets here)
                print("%brrr_job: interrupt the kernel to stop the job.", flush=True)
            if not seen or seen[-1] != message:
                seen.append(message)
                print(f"%brrr_job: {message}", flush=True)

        try:
            job = run_job(script, *args, progress=progress, **options)
        except KeyboardInterrupt:
            print("%brrr_job: interrupted: every rank was stopped.")
            raise
        except JobRunError as error:
            raise UsageError(f"%brrr_job: {error}") from None
        self.ip.user_ns["_brrr_job"] = job
        display(job)
        return None


def _parse(line: str) -> tuple[dict, str, list[str], bool] | None:
    """The options, the script, its arguments and --wait: options come before the script;
    everything after it is the script's. None for ``-h``/``--help`` (the help is printed)."""
    try:
        words = shlex.split(line)
    except ValueError as error:  # an unbalanced quote
        raise UsageError(f"%brrr_job: {error} in {line!r}.\n{_USAGE}") from None
    options: dict[str, Any] = {}
    wait = False
    i = 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        if word == "--wait":
            wait = True
            i += 1
            continue
        if word in ("-h", "--help"):
            print(JobMagics.brrr_job.__doc__ or _USAGE)
            return None
        if word not in VALUE_OPTIONS:
            raise UsageError(f"unknown option {word}.\n{_USAGE}")
        if i + 1 >= len(words):
            raise UsageError(f"{word} needs a value.\n{_USAGE}")
        value = words[i + 1]
        try:
            if word == "--nproc":
                options["nproc"] = int(value)
            elif word == "--steps":
                parts = tuple(int(n) for n in value.split(","))
                if len(parts) != 3:
                    raise ValueError(value)
                options["steps"] = parts
            elif word == "--out":
                options["out"] = value
            else:
                options["timeout"] = check_timeout(float(value))
        except (ValueError, JobRunError) as error:
            why = f" {error}" if isinstance(error, JobRunError) else ""
            raise UsageError(f"{word} {value}: not a valid value.{why}\n{_USAGE}") from None
        i += 2
    if i >= len(words):
        raise UsageError(f"%brrr_job needs a script to run.\n{_USAGE}")
    return options, words[i], words[i + 1 :], wait
