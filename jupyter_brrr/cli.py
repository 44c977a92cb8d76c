"""The command line.

``python -m jupyter_brrr TRACE [--json OUT] [--target 30ms]``: the summary and top ops of a saved
trace, and how far it is from a target; with a folder, a glob pattern or several files, the job
report of their ranks.
``python -m jupyter_brrr diff BEFORE AFTER [--json OUT]``: what changed between two traces or
saved reports.
``python -m jupyter_brrr upgrade NOTEBOOK.ipynb [...] [--all]``: rewrite the reports a notebook
saved in an older report version (``--all``: every report) as ``%%brrr`` writes them today.

TRACE may also be a report saved by ``Report.save`` (shown as it was saved). Every failure is one
``error:`` line on stderr and exit status 2; ``--json`` never writes over an input; names from
the files are printed with their control characters escaped, so that a hostile trace cannot
drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .trace.events import TraceError


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # "diff" is a command unless a file of that name is meant.
    if argv and argv[0] == "diff" and not Path("diff").exists():
        return _diff(argv[1:])
    if argv and argv[0] == "upgrade" and not Path("upgrade").exists():
        return _upgrade(argv[1:])
    return _report(argv)


def _report(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_brrr",
        description="Where the GPU time of a PyTorch profiler trace went: compute, memory "
        "bandwidth or overhead; for the traces of a distributed job's ranks, communication, "
        "overlap and stragglers too. 'python -m jupyter_brrr diff BEFORE AFTER' compares two; "
        "'python -m jupyter_brrr upgrade NOTEBOOK.ipynb' rewrites a notebook's older reports.",
    )
    parser.add_argument(
        "trace",
        nargs="+",
        help="a Kineto / Chrome-trace JSON file (.json or .json.gz), or a report saved by "
        "Report.save; or a folder, a glob pattern or several files holding one trace per rank "
        "of a job",
    )
    parser.add_argument(
        "--json",
        metavar="OUT",
        help="also write the report as JSON to OUT (for one trace, a copy of the trace beside it: "
        "OUT's name with .trace.json.gz, for Perfetto); never over an input",
    )
    parser.add_argument(
        "--device", help="GPU whose peaks to use when the trace's own is unknown (e.g. H100)"
    )
    parser.add_argument("--top", type=int, default=15, help="how many ops to list (default 15)")
    parser.add_argument(
        "--target",
        metavar="GOAL",
        help="a goal per run or step: a time (30ms) or a throughput (2000/s, with --items): "
        "the gap, what fixing the top bottleneck can give, what scaling out would take",
    )
    parser.add_argument(
        "--items", type=float, metavar="N", help="with --target RATE/s: items per run or step"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="for a job: read at most this many ranks at once, each in its own process "
        "(default: one per CPU)",
    )
    args = parser.parse_args(argv)

    from .report.loading import load
    from .report.report import Report, SchemaError, _same_file
    from .report.target import TargetError, parse_goal
    from .views import text

    goal = None
    if args.target is not None or args.items is not None:
        try:
            if args.target is None:
                raise TargetError("--items goes with --target RATE/s.")
            goal = parse_goal(args.target, args.items)
        except TargetError as error:
            return _fail(error)
    out = Path(args.json) if args.json else None
    if out is not None and any(_same_file(out, Path(p)) for p in args.trace):
        return _fail(
            f"--json {out} names an input file: writing the report there would replace it. "
            "Give another name for the report."
        )
    source = args.trace[0] if len(args.trace) == 1 else args.trace
    try:
        if isinstance(source, str) and _is_saved_report(Path(source)):
            report = Report.from_json(Path(source).read_bytes())
        else:
            report = load(source, device=args.device, workers=args.workers)
    except (TraceError, SchemaError) as error:
        return _fail(error)
    except OSError as error:
        return _fail(f"{source}: cannot read it ({error.strerror or error}).")
    from .report.job import JobReport

    if isinstance(report, JobReport):
        if goal is not None:
            return _fail("--target applies to one trace, not to a job.")
        from .views import job_text

        print(job_text.render(report))
        if out is not None:
            try:
                print(f"\nwritten: {_plain(report.save(out))}")
            except (OSError, ValueError) as error:
                return _fail(f"the report was not saved: {error}")
        return 0
    if goal is not None:
        report.set_target(goal)
    print(text.render(report, top=max(args.top, 0)))
    if out is not None:
        try:
            written = report.save(out)
        except (OSError, ValueError) as error:
            return _fail(f"the report was not saved: {error}")
        print(f"\nwritten: {', '.join(_plain(p) for p in written)}")
    return 0


def _plain(value: object) -> str:
    from .views import format as fmt

    return fmt.plain(str(value))


def _fail(message: object) -> int:
    """One ``error:`` line (control characters escaped) and exit status 2."""
    print(f"error: {_plain(message)}", file=sys.stderr)
    return 2


def _is_saved_report(path: Path) -> bool:
    """Whether ``path`` holds a report saved by ``Report.save`` (plain JSON that names the
    report schema near its start), rather than a trace."""
    from .schema.report import SCHEMA_NAME

    try:
        if not path.is_file():  # a FIFO would block the open: load() refuses it in words
            return False
        with path.open("rb") as f:
            head = f.read(512)
    except OSError:
        return False  # load() words the error
    return head.lstrip().startswith(b"{") and f'"schema": "{SCHEMA_NAME}"'.encode() in head


def _diff(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_brrr diff",
        description="What changed between two measurements of the same code: the span per run "
        "with its noise verdict, the split, the ops matched by name, shapes and dtypes, the "
        "bottleneck shift, and what differs besides the change.",
    )
    parser.add_argument("before", help="a profiler trace (.json, .json.gz) or a saved report")
    parser.add_argument("after", help="the same, after the change")
    parser.add_argument("--json", metavar="OUT", help="also write the comparison as JSON to OUT")
    parser.add_argument("--top", type=int, default=10, help="how many ops to list (default 10)")
    args = parser.parse_args(argv)

    from .report.comparison import diff
    from .report.report import SchemaError, _same_file
    from .views import change

    out = Path(args.json) if args.json else None
    if out is not None and any(_same_file(out, Path(p)) for p in (args.before, args.after)):
        return _fail(f"--json {out} names an input file: give another name for the comparison.")
    try:
        comparison = diff(args.before, args.after)
    except (OSError, TraceError, SchemaError) as error:
        return _fail(error)
    print(change.text(comparison.to_dict(), top=args.top))
    if out is not None:
        try:
            out.write_text(comparison.to_json())
        except OSError as error:
            return _fail(f"the comparison was not saved: {error}")
        print(f"\nwritten: {_plain(out)}")
    return 0


def _upgrade(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_brrr upgrade",
        description="Rewrite the jupyter_brrr reports saved in notebooks' outputs as %%brrr "
        "writes them today: each report of an older version is read back (Report.from_json) "
        "and its whole output (the report JSON, the static HTML, the picture, the text) written "
        "again. Cells, other outputs and metadata are left as they are; a notebook without "
        "such a report is not written.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK.ipynb")
    parser.add_argument(
        "--all",
        action="store_true",
        help="rewrite every report, of this version too (after a change of the static views)",
    )
    parser.add_argument(
        "--numbers-only",
        action="store_true",
        help="re-render nothing: only spell the numbers of every jupyter_brrr document as "
        "JupyterLab saves them (2.0 as 2), so that opening and saving the notebook changes nothing",
    )
    args = parser.parse_args(argv)
    try:
        import nbformat
    except ImportError:
        return _fail("upgrade reads notebooks with nbformat: pip install 'jupyter-brrr[notebook]'.")
    from .report.comparison import COMPARISON_MIME_TYPE
    from .report.history import HISTORY_MIME_TYPE
    from .report.report import Report, SchemaError
    from .report.writing import write_whole
    from .schema.report import JOB_MIME_TYPE, MIME_TYPE, SCHEMA_VERSION, as_saved_by_browser
    from .views import render

    documents = (MIME_TYPE, JOB_MIME_TYPE, COMPARISON_MIME_TYPE, HISTORY_MIME_TYPE)

    for path in args.notebooks:
        try:
            notebook = nbformat.read(str(path), as_version=4)
        except (OSError, ValueError) as error:  # nbformat's reader errors are ValueErrors
            return _fail(f"{path}: cannot read it as a notebook ({error}).")
        upgraded = 0
        for cell in notebook.cells:
            for output in cell.get("outputs", []):
                data = output.get("data") or {}
                if args.numbers_only:
                    for mime in documents:
                        respelled = as_saved_by_browser(data.get(mime))
                        # Equal values (2.0 == 2): compare the spelling.
                        if mime in data and json.dumps(respelled) != json.dumps(data[mime]):
                            data[mime] = nbformat.from_dict(respelled)
                            upgraded += 1
                    continue
                doc = data.get(MIME_TYPE)
                if not isinstance(doc, dict) or (
                    doc.get("version") == SCHEMA_VERSION and not args.all
                ):
                    continue
                try:
                    report = Report.from_json(dict(doc))
                except SchemaError as error:
                    return _fail(f"{path}: a report there cannot be read: {error}")
                output["data"] = nbformat.from_dict(render(report, "mimebundle"))
                upgraded += 1
        if upgraded:
            # Written whole, through a temporary file beside it: a failure leaves the notebook as
            # it was.
            text = (nbformat.writes(notebook).rstrip("\n") + "\n").encode("utf-8")
            try:
                write_whole(path, lambda out, text=text: out.write(text))
            except OSError as error:
                return _fail(f"{path}: cannot write it ({error.strerror or error}).")
        print(f"{_plain(path)}: {upgraded} report(s) rewritten in report version {SCHEMA_VERSION}")
    return 0
