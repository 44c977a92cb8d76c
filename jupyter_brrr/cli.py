"""The command line.

``python -m jupyter_brrr TRACE [--json OUT] [--target 30ms]``: the summary and top ops of a saved
trace, and how far it is from a target; with a folder, a glob pattern or several files, the job
report of their ranks.
``python -m jupyter_brrr diff BEFORE AFTER [--json OUT]``: what changed between two traces or
saved reports.
``python -m jupyter_brrr upgrade NOTEBOOK.ipynb [...] [--all]``: rewrite the reports a notebook
saved in an older report version (``--all``: every report) as ``%%brrr`` writes them today.

TRACE may also be a report saved by ``Report.save`` (shown as it was saved). Every failure is one
``error:`` line on stderr and exit status 2 (output to a full device too); a closed pipe
(``| head``) ends the output quietly with status 141, as it ends ``cat``, and ``--json`` is still
written; ``--json`` never writes over an input; names from the files are printed with their
control characters escaped, so that a hostile trace cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from .trace.events import TraceError

# What the shell reports for a command that a closed pipe ended (128 + SIGPIPE), as for cat.
BROKEN_PIPE_STATUS = 141


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _OUTPUT_LOST.clear()
    try:
        try:
            # "diff" is a command unless a file of that name is meant.
            if argv and argv[0] == "diff" and not Path("diff").exists():
                status = _diff(argv[1:])
            elif argv and argv[0] == "upgrade" and not Path("upgrade").exists():
                status = _upgrade(argv[1:])
            else:
                status = _report(argv)
        except SystemExit as done:  # argparse: --help, or a bad flag (its usage on stderr)
            status = done.code if isinstance(done.code, int) else int(done.code is not None) * 2
        sys.stdout.flush()  # the output's last block: a full device or a closed pipe shows here
    except OSError as error:  # argparse's --help, or the last flush
        if error.errno not in _LOST_OUTPUT:
            raise
        _lose_output(error)
        status = 0
    if not _OUTPUT_LOST:
        return status
    lost = _OUTPUT_LOST[0]
    if lost.errno == errno.EPIPE:
        return BROKEN_PIPE_STATUS  # the reader went away (| head): quietly, as cat and grep do
    return max(_fail(f"cannot write the output: {lost.strerror or lost}."), status)


def _show(text: str) -> None:
    """Print a part of the output. Where standard output is gone (a closed pipe) or full (a full
    device), the rest of the output goes nowhere, the command goes on (``--json`` is still
    written) and ``main`` ends with the status that says so."""
    if _OUTPUT_LOST:
        return
    try:
        print(text, flush=True)
    except OSError as error:
        if error.errno not in _LOST_OUTPUT:
            raise
        _lose_output(error)


def _lose_output(error: OSError) -> None:
    _OUTPUT_LOST.append(error)
    # Python flushes the stream again as it exits: that goes nowhere now, quietly.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose ``--help`` text goes through ``_show`` (argparse's own printing
    drops a write error: the help would be lost without a word)."""

    def print_help(self, file: Any = None) -> None:
        if file is not None:
            super().print_help(file)
        else:
            _show(self.format_help().rstrip("\n"))


_LOST_OUTPUT = (errno.EPIPE, errno.ENOSPC, errno.EIO)
_OUTPUT_LOST: list[OSError] = []  # the error that ended this run's output, if one did


def _report(argv: list[str]) -> int:
    parser = _Parser(
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
    from .report.report import Report, SchemaError
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
    source = args.trace[0] if len(args.trace) == 1 else args.trace
    if out is not None:
        refused = _refused_output(out, _inputs(source), "report")
        if refused:
            return _fail(refused)
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

        _show(job_text.render(report))
        if out is not None:
            try:
                _show(f"\nwritten: {_plain(report.save(out))}")
            except (OSError, ValueError) as error:
                return _fail(f"the report was not saved: {error}")
        return 0
    if goal is not None:
        report.set_target(goal)
    _show(text.render(report, top=max(args.top, 0)))
    if out is not None:
        try:
            written = report.save(out)
        except (OSError, ValueError) as error:
            return _fail(f"the report was not saved: {error}")
        _show(f"\nwritten: {', '.join(_plain(p) for p in written)}")
    return 0


def _plain(value: object) -> str:
    from .views import format as fmt

    return fmt.plain(str(value))


def _fail(message: object) -> int:
    """One ``error:`` line (control characters escaped) and exit status 2."""
    with contextlib.suppress(OSError):  # nowhere to say it (stderr full or closed): the status
        print(f"error: {_plain(message)}", file=sys.stderr, flush=True)
    return 2


def _inputs(source: str | list[str]) -> list[str]:
    """The files the command reads: the arguments, and the files a folder or a glob pattern
    among them stands for (the ranks of a job)."""
    from .report.job import JobError, rank_files

    given = [source] if isinstance(source, str) else list(source)
    try:
        return given + [str(path) for path in rank_files(source)]
    except (JobError, OSError):
        return given  # the reading says what is wrong with them


def _refused_output(out: Path, inputs: list[str], kind: str) -> str | None:
    """Why ``--json OUT`` cannot be written (an input, a folder, a device), checked before the
    reading, for a ``kind`` of document ("report"); None when it can."""
    from .report.writing import WriteRefused, check_target

    try:
        check_target(out, inputs, f"{kind}.json")
    except (OSError, WriteRefused) as error:
        return f"the {kind} was not saved: {error}"
    return None


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
    parser = _Parser(
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
    from .report.report import SchemaError
    from .report.writing import WriteRefused, write_file
    from .views import change

    out = Path(args.json) if args.json else None
    inputs = [args.before, args.after]
    if out is not None:
        refused = _refused_output(out, inputs, "comparison")
        if refused:
            return _fail(refused)
    try:
        comparison = diff(args.before, args.after)
    except (OSError, TraceError, SchemaError) as error:
        return _fail(error)
    _show(change.text(comparison.to_dict(), top=args.top))
    if out is not None:
        try:
            inputs += comparison._read_from()
            write_file(out, comparison.to_json().encode(), inputs=inputs, other_name="change.json")
        except (OSError, WriteRefused) as error:
            return _fail(f"the comparison was not saved: {error}")
        _show(f"\nwritten: {_plain(out)}")
    return 0


def _upgrade(argv: list[str]) -> int:
    parser = _Parser(
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
    from .report.writing import write_file
    from .schema.job import JOB_MIME_TYPE
    from .schema.report import MIME_TYPE, SCHEMA_VERSION, as_saved_by_browser
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
                write_file(path, text)
            except (OSError, ValueError) as error:  # a refusal (a device) is a ValueError
                return _fail(error)
        _show(f"{_plain(path)}: {upgraded} report(s) rewritten in report version {SCHEMA_VERSION}")
    return 0
