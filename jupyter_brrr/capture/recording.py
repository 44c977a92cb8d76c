"""Recording a distributed job: one trace per rank, named and labelled with its rank, world size
and the profiler step that closed its window.

In a training script run by ``torchrun``::

    from jupyter_brrr.record import job_profiler

    with job_profiler("traces/") as prof:  # skips 1 step, warms up 1, records 3
        for batch in loader:
            train_step(batch)
            prof.step()

or, with a ``torch.profiler.profile`` of your own,
``on_trace_ready=jupyter_brrr.record.trace_handler("traces/")``. Each rank writes
``rank<R>_of<W>.step<N>.json.gz``; the trace's metadata carries the same under the key
``jupyter_brrr`` (``rank``, ``world_size``, ``step``, ``backend``, ``host``), next to the
``distributedInfo`` that PyTorch writes while the process group is up. Then
``jupyter_brrr.load("traces/")`` reads the job.

``jupyter_brrr.run_job`` runs a script under torchrun with this switched on (``_job_child``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

from . import cupti

__all__ = ["job_profiler", "rank_and_world", "step", "trace_handler"]

# Set by run_job for its ranks: where each rank says how far it got.
PROGRESS_ENV = "BRRR_JOB_PROGRESS"


def rank_and_world() -> tuple[int, int]:
    """This process's rank and the job's world size: from torch.distributed when its process
    group is up, else from torchrun's environment (RANK, WORLD_SIZE), else 0 of 1."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def _backend() -> str | None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return str(dist.get_backend())
    return None


def trace_path(folder: str | PathLike[str], rank: int, world: int, step: int) -> Path:
    """Where a rank's trace goes: ``<folder>/rank<R>_of<W>.step<N>.json.gz``."""
    return Path(folder) / f"rank{rank}_of{world}.step{step}.json.gz"


def trace_handler(folder: str | PathLike[str]) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler that writes each rank's trace into ``folder`` (made if
    missing), named and labelled with its rank, world size and step."""
    folder = Path(folder)

    def write(prof: Any) -> None:
        rank, world = rank_and_world()
        step_number = int(prof.step_num)
        label = {
            "rank": rank,
            "world_size": world,
            "step": step_number,
            "backend": _backend(),
            "host": socket.gethostname(),
        }
        folder.mkdir(parents=True, exist_ok=True)
        path = trace_path(folder, rank, world, step_number)
        _export_labelled(prof, path, label)
        report_progress(state="written", step=step_number, trace=path.name)

    return write


def _export_labelled(prof: Any, path: Path, label: dict) -> None:
    """Export the trace gzipped, with ``label`` as its top-level ``jupyter_brrr`` key.

    Kineto's export takes no metadata once the trace is collected (``add_metadata_json`` only
    reaches a running trace), so the key goes in as text after the document's opening brace,
    while the file is compressed (by ISA-L: several times faster than zlib's default level).
    """
    from isal import igzip

    handle, raw = tempfile.mkstemp(suffix=".json", prefix="brrr_trace_")
    os.close(handle)
    try:
        prof.export_chrome_trace(raw)

        def compress(out: BinaryIO) -> None:
            with open(raw, "rb") as source, igzip.IGzipFile(fileobj=out, mode="wb") as target:
                head = source.read(1 << 16)
                brace = head.index(b"{") + 1
                key = b'\n  "jupyter_brrr": ' + json.dumps(label).encode() + b","
                target.write(head[:brace] + key + head[brace:])
                shutil.copyfileobj(source, target, 1 << 20)

        from ..report.writing import write_file

        # Whole or not at all, and never onto a device or a folder given as the path.
        write_file(path, compress)
    finally:
        os.unlink(raw)


def job_profiler(
    folder: str | PathLike[str],
    *,
    wait: int = 1,
    warmup: int = 1,
    active: int = 3,
    repeat: int = 1,
    record_shapes: bool = True,
    **kwargs: Any,
) -> Any:
    """A ``torch.profiler.profile`` for a training loop that calls ``prof.step()`` once per
    step: it skips ``wait`` steps (the first one pays for warm-up), warms up for ``warmup``,
    records ``active`` steps (``repeat`` times), and writes each rank's trace into ``folder``.

    CPU and, where there is one, CUDA activity are recorded, with shapes (the cost model needs
    them). Other keyword arguments go to ``torch.profiler.profile``.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
        # The rank's steps after the recorded ones keep their speed (capture/cupti.py).
        cupti.ask_teardown(torch)
    kwargs.setdefault("activities", activities)
    profiler = profile(
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=trace_handler(folder),
        record_shapes=record_shapes,
        **kwargs,
    )
    return _Counted(profiler, wait + warmup + active)


class _Counted:
    """The profiler, with each ``step()`` reported to ``run_job``'s progress bar.

    torch prints a line on file descriptor 2 each time a profiler starts and stops (USDT ...
    profiler_start), which a notebook shows under the cell: the calls in which the profiler
    starts and stops (entering, each step, leaving) are silenced; only torch's profiler and
    ``trace_handler`` run inside them, never the script's own code."""

    def __init__(self, profiler: Any, steps: int) -> None:
        self.profiler = profiler
        self.steps = steps
        self.done = 0

    def __enter__(self) -> _Counted:
        global _ACTIVE
        with _quiet_native_stderr():
            self.profiler.__enter__()
        _ACTIVE = self
        report_progress(state="running", step=0, steps=self.steps)
        return self

    def __exit__(self, *exc: Any) -> Any:
        global _ACTIVE
        _ACTIVE = None
        with _quiet_native_stderr():
            return self.profiler.__exit__(*exc)

    def step(self) -> None:
        """End one training step (call it once per step, after the optimizer's)."""
        with _quiet_native_stderr():
            self.profiler.step()
        self.done += 1
        report_progress(state="running", step=self.done, steps=self.steps)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.profiler, name)


def _quiet_native_stderr() -> Any:
    """``capture.run.quiet_native_stderr``, imported on first use: a training script that
    imports ``jupyter_brrr.record`` does not load the analysis."""
    from .run import quiet_native_stderr

    return quiet_native_stderr()


_ACTIVE: _Counted | None = None
# Set once the script steps the profiler itself: the optimizer hook then stays out of it.
_MANUAL = False


def step() -> None:
    """End one training step of the profiler that ``job_profiler`` (or ``run_job``) started in
    this process; nothing where none runs. Under ``run_job`` a step is otherwise each
    ``optimizer.step()``: a script that steps several optimizers per training step calls this
    once per step instead (from the first call on, optimizer steps no longer count)."""
    global _MANUAL
    _MANUAL = True
    if _ACTIVE is not None:
        _ACTIVE.step()


def optimizer_stepped() -> None:
    """``run_job``'s optimizer post-hook: one step, unless the script steps by itself."""
    if _ACTIVE is not None and not _MANUAL:
        _ACTIVE.step()


def report_progress(**fields: Any) -> None:
    """Write this rank's progress where ``run_job`` reads it (nothing outside ``run_job``)."""
    folder = os.environ.get(PROGRESS_ENV)
    if not folder:
        return
    rank, _world = rank_and_world()
    path = Path(folder) / f"rank{rank}.json"
    temporary = path.with_suffix(".tmp")
    previous = {}
    if path.exists():
        try:
            previous = json.loads(path.read_text())
        except ValueError:
            previous = {}
    temporary.write_text(json.dumps(previous | fields))
    temporary.replace(path)  # atomic: the reader never sees half a file
