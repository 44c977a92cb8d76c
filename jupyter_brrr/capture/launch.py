"""``run_job``: run a training script under torchrun with profiling on, and load its job report.

Each rank runs the script through ``_job_child`` under ``record.job_profiler``: a step is one
``optimizer.step()`` (or one ``jupyter_brrr.record.step()`` where the script calls it), the first
``wait`` steps are skipped, ``warmup`` warm the profiler up, ``active`` are recorded, and each
rank writes its trace into the output folder. Ranks report their step into a progress folder
that ``run_job`` polls for its ``progress`` callback; ``cancel`` (a ``threading.Event``), a
timeout or an interrupt ends the whole process group, and so does the end of the process that
called ``run_job``, however it ends (``_job_torchrun``: a killed kernel leaves no rank running).
This module imports no UI library: the notebook's progress bar and Cancel button
(``notebook.job_controls``) are built on it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ._job_child import DIR_ENV, STEPS_ENV
from ._job_torchrun import PARENT_ENV
from .recording import PROGRESS_ENV

if TYPE_CHECKING:
    from ..report.job import JobReport

__all__ = ["JobCancelled", "JobRunError", "run_job"]

_POLL_S = 0.2
_GRACE_S = 5.0  # between asking the ranks to stop and killing them
_LOG_TAIL = 3000


class JobRunError(RuntimeError):
    """The job failed, timed out or wrote no trace; the message says which, with its log's end."""


class JobCancelled(JobRunError):
    """The job was cancelled (Cancel, or an interrupt) and its processes ended."""


def check_timeout(timeout: float) -> float:
    """``timeout`` if it is a positive number of seconds; else ``JobRunError``."""
    if not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
        raise JobRunError(
            f"timeout={timeout!r}: give a positive number of seconds (or no timeout)."
        )
    return float(timeout)


def most_ranks() -> int:
    """The most ranks ``run_job`` starts on this host: four per CPU core (gloo ranks sharing
    cores only wait on each other beyond that), at least 8."""
    return max(8, 4 * (os.cpu_count() or 1))


def default_folder(script: str | PathLike) -> Path:
    """``brrr_traces/<script>-<date>-<time>`` in the working folder."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("brrr_traces") / f"{Path(script).stem}-{stamp}"


def torchrun_command(
    script: str | PathLike, args: Sequence[str], nproc: int, python: str | None = None
) -> list[str]:
    """The command ``run_job`` starts: torchrun on one host (through ``_job_torchrun``, which
    ties its life to the caller's), each rank running the script through
    ``jupyter_brrr.capture._job_child``."""
    return [
        python or sys.executable,
        "-m",
        "jupyter_brrr.capture._job_torchrun",
        "--standalone",
        "--nproc-per-node",
        str(nproc),
        "--module",
        "jupyter_brrr.capture._job_child",
        str(script),
        *map(str, args),
    ]


def run_job(
    script: str | PathLike,
    *args: str,
    nproc: int = 2,
    steps: tuple[int, int, int] = (1, 1, 3),
    out: str | PathLike | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    progress: Callable[[float, str], None] | None = None,
    cancel: threading.Event | None = None,
    workers: int | None = None,
) -> JobReport:
    """Run ``script`` with ``args`` under torchrun on ``nproc`` ranks of this host, profiling
    each rank, and return the job report of their traces.

    ``steps`` = (skipped, warm-up, recorded) training steps, a step being one
    ``optimizer.step()`` (or one ``jupyter_brrr.record.step()``, where the script calls it).
    The traces, and the job's output in ``job.log``, go to ``out`` (default
    ``brrr_traces/<script>-<time>``). ``progress(fraction, message)`` is called as the ranks
    advance; setting ``cancel`` stops the job (``JobCancelled``), as does ``timeout`` seconds
    (``JobRunError``). A failing script raises ``JobRunError`` with the end of its output.
    """
    script = Path(script)
    if not script.is_file():
        raise JobRunError(f"{script}: no such script. Give the path of a Python training script.")
    if nproc < 1:
        raise JobRunError(f"nproc={nproc}: a job needs at least one rank.")
    if nproc > most_ranks():
        raise JobRunError(
            f"nproc={nproc}: run_job starts every rank on this host, which has "
            f"{os.cpu_count()} CPU cores; give at most {most_ranks()} ranks."
        )
    if timeout is not None:
        timeout = check_timeout(timeout)
    wait, warmup, active = (int(n) for n in steps)
    if min(wait, warmup) < 0 or active < 1:
        raise JobRunError(
            f"steps={steps}: give (skipped, warm-up, recorded) steps, at least one recorded."
        )
    folder = Path(out) if out is not None else default_folder(script)
    if folder.exists() and not folder.is_dir():
        raise JobRunError(
            f"{folder} is a file, not a folder: the job writes one trace per rank and its log "
            "into a folder. Give a new or empty folder."
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise JobRunError(
            f"{folder}: cannot make the folder ({error.strerror or error})."
        ) from None
    stale = [p.name for p in folder.iterdir() if p.name.endswith((".json", ".json.gz"))]
    if stale:
        raise JobRunError(
            f"{folder} already holds traces ({', '.join(sorted(stale)[:3])}...): they would mix "
            "with this job's. Give an empty or new folder."
        )
    progress_dir = Path(tempfile.mkdtemp(prefix="brrr_progress_"))
    child_env = dict(os.environ if env is None else env)
    child_env.update(
        {
            DIR_ENV: str(folder.resolve()),
            STEPS_ENV: f"{wait},{warmup},{active}",
            PROGRESS_ENV: str(progress_dir),
            PARENT_ENV: str(os.getpid()),  # torchrun ends with this process
        }
    )
    command = torchrun_command(script, args, nproc)
    log_path = folder / "job.log"
    total = wait + warmup + active
    report = progress or (lambda _f, _m: None)
    last = (0.0, _starting(nproc))
    report(*last)
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env,
            start_new_session=True,  # its own process group: Cancel ends every rank
        )
        try:
            while process.poll() is None:
                if cancel is not None and cancel.is_set():
                    _stop(process)
                    raise JobCancelled(f"Cancelled; the job's output is in {log_path}.")
                if timeout is not None and time.monotonic() - started > timeout:
                    _stop(process)
                    raise JobRunError(
                        f"The job ran past its timeout of {timeout:g} s and was stopped."
                        + _tail(log_path)
                    )
                now = _progress(progress_dir, nproc, total)
                if now != last:  # a callback per change, not per poll
                    report(*now)
                    last = now
                time.sleep(_POLL_S)
        except KeyboardInterrupt:
            _stop(process)
            raise
        finally:
            finished = _finished_ranks(progress_dir)
            _remove(progress_dir)
    traces = sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))
    teardown = None
    if process.returncode != 0:
        if len(finished) < nproc or len(traces) < nproc:
            raise JobRunError(
                f"The job failed (torchrun exit code {process.returncode})." + _tail(log_path)
            )
        # Every rank's script returned and its trace was written before the failure: a crash
        # in the interpreter's teardown (gloo's threads have aborted there), after the work.
        teardown = (
            f"The job ended with torchrun exit code {process.returncode} after every rank's "
            f"script had returned and written its trace (a crash at interpreter exit, outside "
            f"the profiled steps); the traces are complete. Its output is in {log_path}."
        )
    if not traces:
        raise JobRunError(
            f"The script ran but no rank wrote a trace. A step is one optimizer.step(): it took "
            f"fewer than {wait + warmup + 1} steps (skipped {wait}, warm-up {warmup}, then at "
            "least one recorded), or stepped no optimizer; call jupyter_brrr.record.step() once "
            "per training step, or pass fewer steps." + _tail(log_path)
        )
    report(1.0, f"loading {len(traces)} traces")
    from ..report.job import load_job

    job = load_job(folder, workers=workers, name=script.name)
    job.notes.insert(
        0,
        f"Recorded by run_job: {shlex.join(['torchrun', *command[3:]])}; steps: {wait} skipped, "
        f"{warmup} warm-up, {active} recorded; traces in {folder}.",
    )
    if teardown:
        job.notes.insert(1, teardown)
    return job


def _rank_progress(folder: Path) -> dict[str, dict]:
    """Each rank's last progress (``record.report_progress``), by its file's name."""
    seen = {}
    for path in folder.glob("rank*.json"):
        with contextlib.suppress(OSError, ValueError):
            seen[path.stem] = json.loads(path.read_text())
    return seen


def _finished_ranks(folder: Path) -> set[str]:
    """The ranks whose script returned and whose profiler ended (their progress says "done")."""
    return {rank for rank, state in _rank_progress(folder).items() if state.get("state") == "done"}


def _progress(folder: Path, nproc: int, total: int) -> tuple[float, str]:
    """How far the ranks got: the slowest rank's steps of ``total``."""
    seen = _rank_progress(folder)
    if not seen:
        return 0.0, _starting(nproc)
    done = [min(int(s.get("step", 0)), total) for s in seen.values()]
    written = sum(1 for s in seen.values() if s.get("trace"))
    slowest = min(done) if len(seen) == nproc else 0
    message = f"{len(seen)} of {nproc} ranks profiling, step {slowest} of {total}"
    if written:
        message = f"{written} of {nproc} traces written"
    return min(slowest / total, 1.0), message


def _starting(nproc: int) -> str:
    return f"starting {nproc} rank{'s' if nproc != 1 else ''}"


def _stop(process: subprocess.Popen) -> None:
    """Ask the job's whole process group to stop, then kill what is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGTERM)
        else:  # pragma: no cover - Windows
            process.terminate()
    try:
        process.wait(_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if hasattr(os, "killpg"):
                os.killpg(process.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows
                process.kill()
        process.wait()


def _tail(log_path: Path) -> str:
    try:
        text = log_path.read_bytes()[-_LOG_TAIL:].decode(errors="replace")
    except OSError:
        return ""
    return f" Its output ends ({log_path}):\n{text}"


def _remove(folder: Path) -> None:
    """Remove the progress folder, which torchrun may have removed already (it does as it
    ends)."""
    shutil.rmtree(folder, ignore_errors=True)
