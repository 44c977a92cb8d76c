"""What ``run_job`` starts: ``python -m jupyter_brrr.capture._job_torchrun TORCHRUN_ARGS...``,
torchrun in this process once its life is tied to the process that started it.

``run_job`` gives torchrun a session of its own (so that Cancel can signal the whole job), and
torchrun gives each rank one too, so nothing that ends the kernel reaches them: a kernel that is
killed (the OOM killer, a restart that had to SIGKILL it) would leave the job running, holding
GPUs and writing traces. So each link of the chain ends with the one before it:

- this process (torchrun) gets SIGTERM when its parent, the kernel, ends (when the kernel's
  thread that started it ends: ``run_job`` waits in it for the job); torchrun then stops its
  ranks as it does on Cancel, and removes the progress folder that ``run_job`` would have;
- each rank (``_job_child``) gets SIGKILL when torchrun ends, whatever ended it.

On Linux the kernel delivers the signal (``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread
watches the parent's pid. The parent's pid comes in ``PARENT_ENV``: a parent that ended before
the link was made is noticed too.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

PARENT_ENV = "BRRR_JOB_PARENT"  # the pid this process must not outlive
TORCHRUN_ENV = "BRRR_JOB_TORCHRUN"  # torchrun's pid, which each rank must not outlive
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_WATCH_S = 0.5


def tie_to_parent(parent: int, signum: int) -> None:
    """Have this process get ``signum`` when ``parent``, its parent process, ends (at once if it
    already has)."""
    if not (sys.platform.startswith("linux") and _parent_death_signal(signum)):
        threading.Thread(
            target=_watch, args=(parent, signum), name="jupyter_brrr-parent-watch", daemon=True
        ).start()
    if os.getppid() != parent:  # it ended before the link was made: this process was adopted
        os.kill(os.getpid(), signum)


def _parent_death_signal(signum: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, signum)``: Linux sends ``signum`` when the parent ends."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, signum: int) -> None:
    """Where the kernel cannot signal a parent's death: poll for it (an adopted process's parent
    pid changes)."""
    while os.getppid() == parent:
        time.sleep(_WATCH_S)
    os.kill(os.getpid(), signum)


def main(argv: list[str]) -> None:
    from torch.distributed import run
    from torch.distributed.elastic.multiprocessing.api import SignalException

    from .recording import PROGRESS_ENV

    parent = int(os.environ[PARENT_ENV])
    tie_to_parent(parent, signal.SIGTERM)
    os.environ[TORCHRUN_ENV] = str(os.getpid())  # the ranks' environment
    try:
        run.main(argv)
    except SignalException:
        # Stopped (the kernel ended, or Cancel): torchrun has stopped its ranks. A dying kernel's
        # threads may signal again, one by one, as each takes the parent's place and exits.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # Where the kernel died, nobody else would remove the progress folder (run_job removes
        # it too, and tolerates finding it gone).
        progress = os.environ.get(PROGRESS_ENV)
        if progress and Path(progress).name.startswith("brrr_progress_"):
            shutil.rmtree(progress, ignore_errors=True)
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
