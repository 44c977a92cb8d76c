"""What the step graph and its replay cost, against their budgets.

    python bench/replay_bench.py [--repeat 7]

1. ``load()`` of the V100 ResNet trace (69k events), whose median profiler step gets its graph:
   the load's time, and what building the graph (``step_graph.build``, inside the load) and one
   replay of it add, against the budget of 20% of the rest of the load.
2. One ``predict()`` (a replay of the unchanged graph and one of the changed) on a step of 100k
   events (a hand-made loop of 33,334 ops, each with its launch call and kernel, and an
   ``.item()``-like synchronisation every 500 ops), against the budget of 50 ms.

Each figure is the median of ``--repeat`` runs in this process after one warm-up run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jupyter_brrr  # noqa: E402
from jupyter_brrr.analysis import step_graph  # noqa: E402
from jupyter_brrr.analysis import steps as step_windows  # noqa: E402
from jupyter_brrr.analysis.replay import predict, replay  # noqa: E402
from jupyter_brrr.report import trace_report  # noqa: E402
from jupyter_brrr.trace.events import parse_trace, read_trace  # noqa: E402

V100 = ROOT / "tests/data/v100_resnet_ns.json.gz"


def _median(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _v100_step() -> tuple:
    trace = read_trace(V100)
    whole, _, _ = trace_report.whole_trace(trace)
    windows = step_windows.find_steps(trace, whole.kernels)
    assert windows is not None
    row = windows.median
    step = step_windows.step_trace(trace, windows, row)
    result = trace_report.analysis.analyze(step, None, advise=False)
    host_range = (float(windows.host_start[row]), float(windows.host_end[row]))
    return step, result.kernels, host_range


def _big_step(ops: int = 33_334, sync_every: int = 500) -> step_graph.StepGraph:
    events = []
    for i in range(ops):
        correlation = i + 1
        start = 12.0 * i
        events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mul",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": 9,
            }
        )
        name = "cudaStreamSynchronize" if i % sync_every == sync_every - 1 else "cudaLaunchKernel"
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": name,
                "pid": 1,
                "tid": 1,
                "ts": start + 3,
                "dur": 4,
                "args": {"correlation": correlation},
            }
        )
        if name == "cudaLaunchKernel":
            events.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": "k",
                    "pid": 0,
                    "tid": 7,
                    "ts": start + 8,
                    "dur": 3,
                    "args": {"stream": 7, "device": 0, "correlation": correlation},
                }
            )
    trace = parse_trace({"traceEvents": events})
    graph = step_graph.build(trace)
    assert graph is not None
    return graph


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    load_s = _median(lambda: jupyter_brrr.load(V100), args.repeat)
    step, kernels, host_range = _v100_step()
    build_s = _median(lambda: step_graph.build(step, kernels, host_range=host_range), args.repeat)
    graph = step_graph.build(step, kernels, host_range=host_range)
    assert graph is not None
    replay_s = _median(lambda: replay(graph), args.repeat)
    rest = load_s - build_s
    added = (build_s + replay_s) / rest
    print(
        f"V100 ResNet trace, its median step's graph: {graph.host_count:,} host and "
        f"{graph.gpu_count:,} GPU nodes"
    )
    print(
        f"  load() {load_s * 1e3:8.1f} ms, of which building the graph {build_s * 1e3:6.1f} ms;"
        f" one replay {replay_s * 1e3:6.2f} ms"
    )
    print(
        f"  building + replaying add {added:6.1%} to the rest of the load  (budget: 20%)  "
        f"{'ok' if added <= 0.2 else 'OVER'}"
    )

    big = _big_step()
    events = 3 * 33_334 - 33_334 // 500

    def cold() -> None:
        # The first predict() on a graph: its replay plan, the unchanged replay and the changed.
        big.__dict__.pop("_replay_plan", None)
        big.__dict__.pop("_baselines", None)
        predict(big, gpu=2)

    predict_s = _median(cold, args.repeat)
    later_s = _median(lambda: predict(big, ops={"aten::mul": 2}), args.repeat)
    print(
        f"A step of {events:,} events ({big.host_count:,} host and {big.gpu_count:,} GPU nodes, "
        f"{int((big.h_kind == step_graph.SYNC).sum())} synchronisations)"
    )
    print(
        f"  first predict(gpu=2) {predict_s * 1e3:8.1f} ms  (budget: 50 ms)  "
        f"{'ok' if predict_s < 0.05 else 'OVER'}; each later predict {later_s * 1e3:.1f} ms"
    )
    return 0 if added <= 0.2 and predict_s < 0.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())
