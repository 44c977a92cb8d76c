"""Kineto traces of GPU work written out event by event, for advice about cases no CPU can
record: the ops as torch.profiler records them (names, ``Input Dims``, ``Input type``, ``Input
Strides``), each launching its kernels through ``cudaLaunchKernel`` with the launch fields CUPTI
writes (grid, block, registers, shared memory), on the H200 of a real recording's
``deviceProperties``. The document goes through the real loading path (``parse_trace``,
``analyze``), as a trace read from a file does.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from jupyter_brrr.analysis import analyze as analysis
from jupyter_brrr.costs import peaks as peak_table
from jupyter_brrr.trace.events import parse_trace

DATA = Path(__file__).parent / "data"
# The header of an H200 recording (tests/data/advice): its device properties and versions.
_H200 = DATA / "advice" / "small_gemm.slow.json.gz"

_TYPES = {"fp32": "float", "bf16": "c10::BFloat16", "fp16": "c10::Half", "int8": "signed char"}
_SIZES = {"float": 4, "c10::BFloat16": 2, "c10::Half": 2, "signed char": 1, "int": 4}


def contiguous(dims: list[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(dims):
        strides.append(step)
        step *= size
    return strides[::-1]


class GpuTimeline:
    """Host ops and launches on thread 1, kernels on stream 7; times in microseconds."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.correlation = 0
        self.now = 0.0  # where the host is

    def op(
        self,
        name: str,
        inputs: list[list[int]],
        types: list[str],
        dur: float,
        *,
        start: float | None = None,
        concrete: list[str] | None = None,
    ) -> float:
        """A CPU op (``types``: "fp32", "bf16"... per tensor input, else the profiler's own
        "Scalar", "ScalarList" or ""; ``concrete``: the profiler's "Concrete Inputs", the values
        of the scalar arguments); returns its start."""
        start = self.now if start is None else start
        self.events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": name,
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": dur,
                "args": {
                    "External id": len(self.events) + 1,
                    "Input Dims": inputs,
                    "Input type": [_TYPES.get(t, t) for t in types],
                    "Input Strides": [contiguous(d) if d else [] for d in inputs],
                    "Concrete Inputs": concrete or ["" for _ in inputs],
                },
            }
        )
        return start

    def launch(
        self,
        kernel: str,
        at: float,
        kernel_start: float,
        kernel_dur: float,
        *,
        grid: tuple[int, int, int] = (1024, 1, 1),
        block: tuple[int, int, int] = (128, 1, 1),
        registers: int = 32,
        shared_memory: int = 0,
    ) -> None:
        """A cudaLaunchKernel at host time ``at`` (4 us long) and its kernel."""
        self.correlation += 1
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": at,
                "dur": 4.0,
                "args": {"correlation": self.correlation},
            }
        )
        self.events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": kernel,
                "pid": 0,
                "tid": 7,
                "ts": kernel_start,
                "dur": kernel_dur,
                "args": {
                    "stream": 7,
                    "device": 0,
                    "context": 1,
                    "correlation": self.correlation,
                    "registers per thread": registers,
                    "shared memory": shared_memory,
                    "grid": list(grid),
                    "block": list(block),
                },
            }
        )

    def sync(self, at: float, dur: float) -> None:
        self.correlation += 1
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaDeviceSynchronize",
                "pid": 1,
                "tid": 1,
                "ts": at,
                "dur": dur,
                "args": {"correlation": self.correlation},
            }
        )

    def document(self) -> dict:
        with gzip.open(_H200, "rt") as f:
            header = {k: v for k, v in json.load(f).items() if k != "traceEvents"}
        base = 5_000_000_000.0  # timestamps as a trace has them: far from zero
        events = [{**e, "ts": e["ts"] + base} for e in self.events]
        return {**header, "traceName": "timeline.json", "traceEvents": events}

    def analyse(self, span_s: float | None = None) -> analysis.Analysis:
        """The analysis %%brrr makes of it, with ``span_s`` the span timed around unprofiled
        runs (None: the trace's own span, as for a loaded file)."""
        trace = parse_trace(self.document())
        peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
        return analysis.analyze(
            trace,
            peaks,
            span_s=span_s,
            span_source="cuda_events_unprofiled" if span_s is not None else "trace",
        )


def one_kernel_op(
    timeline: GpuTimeline,
    name: str,
    inputs: list[list[int]],
    types: list[str],
    kernel: str,
    kernel_us: float,
    *,
    host_us: float = 20.0,
    gpu_at: float | None = None,
    concrete: list[str] | None = None,
    **launch: object,
) -> float:
    """An op that launches one kernel: the host spends ``host_us`` in it, the kernel starts
    once the launch is done and the GPU is free (``gpu_at``: when the previous kernel ended).
    Returns the kernel's end."""
    start = timeline.now
    timeline.op(name, inputs, types, host_us, start=start, concrete=concrete)
    at = start + host_us - 6.0
    kernel_start = max(at + 5.0, gpu_at or 0.0)
    timeline.launch(kernel, at, kernel_start, kernel_us, **launch)  # type: ignore[arg-type]
    timeline.now = start + host_us + 1.0
    return kernel_start + kernel_us
