"""What each rank of ``run_job`` runs: ``python -m jupyter_brrr.capture._job_child SCRIPT ARGS...``.

The user's script runs as ``__main__`` (its arguments, its folder first on ``sys.path``) under
``record.job_profiler``, which advances one step at each ``optimizer.step()`` of any optimizer
(a global post-hook), or only at ``jupyter_brrr.record.step()`` once the script calls that. The
schedule and the trace folder come from the environment ``run_job`` sets. A rank ends when
torchrun ends (``_job_torchrun.tie_to_parent``), so that no rank outlives a killed kernel.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
from pathlib import Path

from . import recording as record
from ._job_torchrun import TORCHRUN_ENV, tie_to_parent

DIR_ENV = "BRRR_JOB_DIR"
STEPS_ENV = "BRRR_JOB_STEPS"  # "wait,warmup,active"


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m jupyter_brrr.capture._job_child SCRIPT [ARGS...]")
    script, *args = argv
    if TORCHRUN_ENV in os.environ:  # started by run_job's torchrun: end with it
        tie_to_parent(int(os.environ[TORCHRUN_ENV]), signal.SIGKILL)
    wait, warmup, active = (int(n) for n in os.environ.get(STEPS_ENV, "1,1,3").split(","))
    from torch.optim.optimizer import register_optimizer_step_post_hook

    profiler = record.job_profiler(os.environ[DIR_ENV], wait=wait, warmup=warmup, active=active)
    with profiler:
        hook = register_optimizer_step_post_hook(lambda *_: record.optimizer_stepped())
        sys.argv = [script, *args]
        sys.path.insert(0, str(Path(script).resolve().parent))
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            hook.remove()
    record.report_progress(state="done")


if __name__ == "__main__":
    main(sys.argv[1:])
