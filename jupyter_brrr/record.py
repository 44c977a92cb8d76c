"""Recording a distributed job from a training script: ``from jupyter_brrr.record import job_profiler``.

The public face of ``capture/recording.py`` (which says how the traces are named and labelled)::

    with job_profiler("traces/") as prof:  # skips 1 step, warms up 1, records 3
        for batch in loader:
            train_step(batch)
            prof.step()

or ``on_trace_ready=jupyter_brrr.record.trace_handler("traces/")`` on a profiler of your own, and
``jupyter_brrr.record.step()`` where a step is not one ``optimizer.step()``.
"""

from .capture.recording import job_profiler, rank_and_world, step, trace_handler

__all__ = ["job_profiler", "rank_and_world", "step", "trace_handler"]
