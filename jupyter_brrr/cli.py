"""``python -m jupyter_brrr TRACE [--json OUT]``: the summary and top ops of a saved trace."""

from __future__ import annotations

import argparse
import sys

from .events import TraceError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_brrr",
        description="Where the GPU time of a PyTorch profiler trace went: compute, memory bandwidth or overhead.",
    )
    parser.add_argument("trace", help="a Kineto / Chrome-trace JSON file (.json or .json.gz)")
    parser.add_argument(
        "--json",
        metavar="OUT",
        help="also write the report as JSON to OUT, and a copy of the trace beside it "
        "(OUT's name with .trace.json.gz, for Perfetto)",
    )
    parser.add_argument(
        "--device", help="GPU whose peaks to use when the trace's own is unknown (e.g. H100)"
    )
    parser.add_argument("--top", type=int, default=15, help="how many ops to list (default 15)")
    args = parser.parse_args(argv)

    from . import load
    from .views import text

    try:
        report = load(args.trace, device=args.device)
    except TraceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(text.render(report, top=args.top))
    if args.json:
        written = report.save(args.json)
        print(f"\nwritten: {', '.join(str(p) for p in written)}")
    return 0
