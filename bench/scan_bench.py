"""The compiled trace reader alone (``jupyter_brrr/trace/_scan.c``): ``scan`` and ``split`` on a
real trace, each the best of ``--repeat`` calls, for one or more builds of the reader side by side.

    python bench/scan_bench.py                              # the reader this checkout built
    python bench/scan_bench.py old/_scan.cpython-311-x86_64-linux-gnu.so jupyter_brrr/trace/_scan.abi3.so

Each build is loaded from its file (``ExtensionFileLoader``), so two builds of the same source
(the limited API and the full one, say) are timed in one process, in turns (``--rounds``), on
the same text: ``scan`` reads the trace's events (as a bytearray, as the loader passes them),
``split`` finds the cuts of the whole file's top-level object (bytes).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.machinery
import importlib.util
import json
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "data" / "v100_resnet_ns.json.gz"


def load_build(path: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader("jupyter_brrr.trace._scan", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def best(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="*", type=Path)
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    builds = args.builds or sorted((ROOT / "jupyter_brrr" / "trace").glob("_scan.*.so"))
    modules = {path: load_build(path) for path in builds}
    with gzip.open(args.trace) as f:
        whole = f.read()
    events = bytearray(json.dumps(json.loads(whole)["traceEvents"]).encode())
    print(f"{args.trace.name}: events {len(events) / 1e6:.1f} MB, file {len(whole) / 1e6:.1f} MB")
    print("| round | build | scan ms | scan MB/s | split ms | split MB/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for round_ in range(1, args.rounds + 1):
        for path, scan in modules.items():
            s = best(lambda scan=scan: scan.scan(events, 0, len(events)), args.repeat)
            c = best(lambda scan=scan: scan.split(whole, 1, len(whole), 0, False), args.repeat)
            print(
                f"| {round_} | {path.name} | {s * 1e3:.2f} | {len(events) / s / 1e6:.0f} "
                f"| {c * 1e3:.2f} | {len(whole) / c / 1e6:.0f} |"
            )


if __name__ == "__main__":
    main()
