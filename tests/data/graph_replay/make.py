"""Writes replay_steps.json.gz: the Kineto layout of a CUDA graph replayed under the profiler.

    python tests/data/graph_replay/make.py

Made from a real H200 trace (``tests/data/zoo/tiny_mlp_reduce_overhead.json.gz``: a 20-layer
Linear(64,64) MLP, batch 8, under ``torch.compile(mode="reduce-overhead")``, which replays one
CUDA graph of 40 kernels). Its ``cudaGraphLaunch`` runtime call, the 40 kernels that carry the
launch's correlation id and the ac2g flows are kept as they are; what changes is what a plain
``torch.cuda.CUDAGraph.replay()`` (no torch op around it) gives, as Kineto writes it
(``libkineto/src/output_json.cpp``: a runtime call or kernel with no linked op gets no
"External id"):

- no cpu_op around the launch, so neither the launch nor its kernels carry an "External id";
- a loop of four ``ProfilerStep#N`` ranges (``prof.step()``), one replay in each, each launch and
  its kernels with a correlation id of their own, the GPU work shifted by the step's start;
- ``prof.step()``'s own ``ProfilerStep#N`` user annotations and their GPU projections.

The script that this stands for (run on a GPU it writes the real thing)::

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = model(x)
    with torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True) as prof:
        for _ in range(4):
            g.replay()
            prof.step()
        torch.cuda.synchronize()
"""

import copy
import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "zoo" / "tiny_mlp_reduce_overhead.json.gz"
STEPS = 4
STEP_US = 125.0  # host time of one step: the launch call (105 us), then prof.step()


def main() -> None:
    trace = json.loads(gzip.decompress(SOURCE.read_bytes()))
    events = trace["traceEvents"]
    launch = next(e for e in events if e.get("name") == "cudaGraphLaunch")
    correlation = launch["args"]["correlation"]
    kernels = [
        e
        for e in events
        if e.get("cat") == "kernel" and e.get("args", {}).get("correlation") == correlation
    ]
    meta = [e for e in events if e.get("ph") == "M"]
    t0 = launch["ts"] - 20.0
    gpu_lag = kernels[0]["ts"] - launch["ts"]  # the GPU runs behind the host
    out = list(meta)
    for step in range(STEPS):
        start = t0 + step * STEP_US
        shift = start + 20.0 - launch["ts"]
        corr = correlation + 100 * step
        host_id = 60000 + step
        out.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": launch["pid"],
                "tid": launch["tid"],
                "ts": start,
                "dur": STEP_US - 5.0,
                "args": {"External id": host_id, "Record function id": 0, "Ev Idx": step},
            }
        )
        call = copy.deepcopy(launch)
        call["ts"] = launch["ts"] + shift
        call["args"] = {"cbid": launch["args"]["cbid"], "correlation": corr}
        out.append(call)
        out.append(
            {
                "ph": "s",
                "id": corr,
                "pid": call["pid"],
                "tid": call["tid"],
                "ts": call["ts"],
                "cat": "ac2g",
                "name": "ac2g",
            }
        )
        first = None
        last_end = None
        for kernel in kernels:
            k = copy.deepcopy(kernel)
            k["ts"] = kernel["ts"] + shift
            k["args"].pop("External id", None)
            k["args"]["correlation"] = corr
            out.append(k)
            out.append(
                {
                    "ph": "f",
                    "id": corr,
                    "pid": k["pid"],
                    "tid": k["tid"],
                    "ts": k["ts"],
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )
            first = k["ts"] if first is None else first
            last_end = k["ts"] + k["dur"]
        assert first is not None  # every step launched kernels
        out.append(
            {
                "ph": "X",
                "cat": "gpu_user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": kernels[0]["pid"],
                "tid": kernels[0]["tid"],
                "ts": first - 0.001,
                "dur": last_end - first + 0.002,
                "args": {"External id": host_id},
            }
        )
    sync_ts = t0 + STEPS * STEP_US + gpu_lag
    out.append(
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaDeviceSynchronize",
            "pid": launch["pid"],
            "tid": launch["tid"],
            "ts": sync_ts,
            "dur": 8.0,
            "args": {"cbid": 165, "correlation": correlation + 1000},
        }
    )
    out.append(
        {
            "ph": "X",
            "cat": "Trace",
            "ts": t0 - 50.0,
            "dur": STEPS * STEP_US + gpu_lag + 100.0,
            "pid": "Spans",
            "tid": "PyTorch Profiler",
            "name": "PyTorch Profiler (0)",
            "args": {"Op count": 0},
        }
    )
    trace["traceEvents"] = out
    target = HERE / "replay_steps.json.gz"
    target.write_bytes(gzip.compress(json.dumps(trace, indent=1).encode(), mtime=0))
    print(f"wrote {target} ({len(out)} events)")


if __name__ == "__main__":
    main()
