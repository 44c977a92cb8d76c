"""The documentation cannot go stale unseen: the reference lists every public name with the
code's own signature and every flag the parsers accept, every path the docs name exists, the
front end's README lists every source, and every message the failure table quotes is one the
code still writes (those that run on a CPU are run, and their output holds the quote)."""

from __future__ import annotations

import argparse
import ast
import gzip
import inspect
import json
import re
from pathlib import Path

import pytest

import jupyter_brrr
from jupyter_brrr import cli, record
from jupyter_brrr.notebook import job_controls
from jupyter_brrr.notebook.magic import BrrrMagics
from jupyter_brrr.trace.events import TraceError

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCE = (DOCS / "reference.md").read_text()
FAILURES = (DOCS / "failures.md").read_text()


def _section(text: str, heading: str) -> str:
    """The part of ``text`` under the heading ``heading`` (any level), up to the next heading of
    the same or a higher level."""
    found = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.MULTILINE)
    assert found, f"no heading {heading!r}"
    level = len(found.group(1))
    rest = text[found.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def _listed(flag: str, text: str) -> bool:
    """Whether a table row of ``text`` documents ``flag``: its first cell writes it as code
    (`--ab` or `--ab VARIANTS`, not `--ab-budget`)."""
    first_cells = [line.split("|")[1] for line in text.splitlines() if line.startswith("| ")]
    return any(re.search(rf"`{re.escape(flag)}[` ]", cell) for cell in first_cells)


def plain_signature(name: str, function: object) -> str:
    """``name(a, *args, b=1, **kwargs)``: the signature as reference.md writes it (no types)."""
    signature = inspect.signature(function)  # type: ignore[arg-type]
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    bare = signature.replace(parameters=params, return_annotation=inspect.Signature.empty)
    return f"{name}{bare}"


# --- the reference --------------------------------------------------------------------------


@pytest.mark.parametrize("name", jupyter_brrr.__all__)
def test_every_public_name_has_its_entry_and_its_signature(name: str) -> None:
    assert re.search(rf"^### `{name}`\s*$", REFERENCE, re.MULTILINE), f"no entry for {name}"
    value = getattr(jupyter_brrr, name)
    if inspect.isfunction(value):
        shown = plain_signature(name, value)
        assert shown in _section(REFERENCE, f"`{name}`"), f"reference.md should show {shown}"


@pytest.mark.parametrize("name", record.__all__)
def test_the_record_helpers_have_their_signatures(name: str) -> None:
    shown = plain_signature(f"record.{name}", getattr(record, name))
    assert shown in _section(REFERENCE, "`jupyter_brrr.record`"), shown


@pytest.mark.parametrize(
    "name", ["Report", "JobReport", "Comparison", "History", "SweepResult", "MemoryBreakdown"]
)
def test_the_data_objects_public_members_are_listed(name: str) -> None:
    section = _section(REFERENCE, f"`{name}`")
    cls = getattr(jupyter_brrr, name)
    for member, value in vars(cls).items():
        if member.startswith("_") or member in ("from_analysis",):
            continue
        if callable(value) or isinstance(value, property | classmethod | staticmethod):
            assert f"`{member}" in section or f", `{member}" in section or member in section, (
                f"{name}.{member} is not in reference.md"
            )


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings]


def test_every_flag_of_the_cell_magic_is_in_the_reference() -> None:
    section = _section(REFERENCE, "`%%brrr` (cell magic)")
    for flag in _options(BrrrMagics.brrr.parser):  # pyright: ignore[reportFunctionMemberAccess]  # magic_arguments puts its parser there
        assert _listed(flag, section), f"%%brrr {flag} is not in reference.md"


def test_every_command_of_the_line_magic_is_in_the_reference() -> None:
    section = _section(REFERENCE, "`%brrr` (line magic)")
    # The line magic's help, which %brrr's usage error prints too.
    commands = set(re.findall(r"^\s+%brrr (\w+)", BrrrMagics.brrr.__doc__ or "", re.MULTILINE))
    assert commands == {"history", "diff", "forget"}
    for command in commands:
        assert f"`%brrr {command}" in section, command


def test_every_option_of_the_job_magic_is_in_the_reference() -> None:
    section = _section(REFERENCE, "`%brrr_job`")
    for flag in (*job_controls.VALUE_OPTIONS, *job_controls.SWITCHES):
        assert _listed(flag, section), f"%brrr_job {flag} is not in reference.md"


def test_every_environment_variable_the_package_reads_is_in_the_reference() -> None:
    """Every ``JUPYTER_BRRR_*`` name in the package's code has its row, and the HTML switch's
    row names each value the code accepts."""
    from jupyter_brrr.views import frame

    code = "\n".join(p.read_text() for p in (ROOT / "jupyter_brrr").rglob("*.py"))
    names = set(re.findall(r"[\"'](JUPYTER_BRRR_[A-Z_]+)[\"']", code))
    assert frame.HTML_ENV in names
    section = _section(REFERENCE, "Environment variables")
    for name in names:
        assert _listed(name, section), f"${name} is not in reference.md"
    (row,) = [line for line in section.splitlines() if line.startswith(f"| `{frame.HTML_ENV}`")]
    for mode in frame.HTML_MODES:
        assert f"`{mode}`" in row, mode
    assert frame.HTML_ENV in (DOCS / "guide.md").read_text()


def _help_flags(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The options that the command line's own ``--help`` lists."""
    assert cli.main([*argv, "--help"]) == 0
    text = capsys.readouterr().out
    options = text[text.index("options:") :]
    flags: set[str] = set()
    for line in options.splitlines():
        named = re.match(r"^  (-\S.*?)(?:\s{2,}|$)", line)  # "  -h, --help   show this help"
        if named:
            flags.update(re.findall(r"(?<![\w-])(-{1,2}[a-z][a-z-]*)", named.group(1)))
    return sorted(flags)


@pytest.mark.parametrize(
    ("argv", "heading"), [([], "Reading a trace"), (["diff"], "`diff`"), (["upgrade"], "`upgrade`")]
)
def test_every_flag_of_the_command_line_is_in_the_reference(
    argv: list[str], heading: str, capsys: pytest.CaptureFixture[str]
) -> None:
    section = _section(_section(REFERENCE, "`python -m jupyter_brrr`"), heading)
    flags = _help_flags(argv, capsys)
    assert "--help" in flags and len(flags) >= 2
    for flag in flags:
        assert _listed(flag, section), f"python -m jupyter_brrr {' '.join([*argv, flag])}"


# --- paths and links ------------------------------------------------------------------------

WRITTEN = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    ROOT / "js" / "README.md",
    *sorted(DOCS.glob("*.md")),
]


# The changelog names what was removed too.
CURRENT = [page for page in WRITTEN if page.name != "CHANGELOG.md"]


@pytest.mark.parametrize("page", CURRENT, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_path_the_docs_name_exists(page: Path) -> None:
    text = page.read_text()
    for path in sorted(set(re.findall(r"jupyter_brrr/[\w/]+\.py", text))):
        assert (ROOT / path).is_file(), f"{page.name} names {path}, which does not exist"
    for path in sorted(set(re.findall(r"(?<![\w/])(?:bench|tests|\.ci)/[\w./-]+\w", text))):
        assert (ROOT / path).exists(), f"{page.name} names {path}, which does not exist"


@pytest.mark.parametrize("page", WRITTEN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", page.read_text()):
        assert (page.parent / target).exists(), f"{page.name} links to {target}"


def test_the_front_end_readme_lists_every_source() -> None:
    text = (ROOT / "js" / "README.md").read_text()
    sources = [
        p
        for p in (ROOT / "js").rglob("*")
        if p.is_file()
        and p.suffix in (".ts", ".js", ".css")
        and "__tests__" not in p.parts
        and "lib" not in p.relative_to(ROOT / "js").parts[:1]
    ]
    assert len(sources) > 20
    for source in sources:
        assert f"`{source.relative_to(ROOT / 'js').as_posix()}`" in text, source


def test_the_readme_keeps_the_two_commands_and_the_first_screen() -> None:
    text = (ROOT / "README.md").read_text()
    first_screen = "\n".join(text.splitlines()[:60])
    assert 'pip install "jupyter-brrr[notebook]"' in first_screen
    assert "docs/images/report.png" in first_screen
    assert "bash .ci/run" in first_screen
    assert "jupyter nbconvert --to notebook --execute notebooks/tour.ipynb" in first_screen
    assert "CUDA" in first_screen
    assert len(text) < 12_000, "the README is the first screen and links; the rest is in docs/"


# --- the failure table ----------------------------------------------------------------------


def _quotes(text: str) -> list[str]:
    """The messages the failure table quotes: double-quoted text in its rows, outside code."""
    rows = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    rows = re.sub(r"`[^`]*`", "`", rows)
    return [q for q in re.findall(r'"([^"|]{12,})"', rows)]


def _strings_in(paths: list[Path]) -> list[str]:
    """Every string the code writes: constants (implicit concatenation joined, as Python joins
    it) and the literal parts of f-strings, each part a piece of its own."""
    found: list[str] = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
    return found


CODE_STRINGS = _strings_in(
    [*sorted((ROOT / "jupyter_brrr").rglob("*.py")), Path(argparse.__file__)]
)


def _in_code(piece: str) -> bool:
    return any(piece in s for s in CODE_STRINGS)


def test_the_failure_table_quotes_enough() -> None:
    assert len(_quotes(FAILURES)) >= 40


@pytest.mark.parametrize("quote", _quotes(FAILURES))
def test_every_quoted_message_is_one_the_code_writes(quote: str) -> None:
    # "..." stands for what the message fills in (a path, a number, a name).
    for piece in (p.strip() for p in quote.split("...")):
        if len(piece) >= 6:
            assert _in_code(piece), f"failures.md quotes {piece!r}, which no code writes"


OP = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5}
TRACES: dict[str, bytes] = {
    "empty": b"",
    "binary": b"\x00\x01\x02 not a trace",
    "cut": json.dumps({"traceEvents": [OP] * 10}).encode()[:-20],
    "comma": ('{"traceEvents": [' + json.dumps(OP) + ",,]}").encode(),
    "array": b"[1, 2]",
    "no events": b'{"a": 1}',
    "object pid": json.dumps({"traceEvents": [OP, {**OP, "pid": {"a": 1}}]}).encode(),
    "30 years": json.dumps({"traceEvents": [{**OP, "ts": 0}, {**OP, "ts": 1.7e15}]}).encode(),
    "bad utf-8": b'{"traceEvents": [{"ph": "X", "name": "\xff\xfe", "ts": 1}]}',
    "deep": (
        '{"traceEvents": [{"ph": "X", "ts": 1, "args": {"a": '
        + "[" * 10_000
        + "]" * 10_000
        + "}}]}"
    ).encode(),
}


@pytest.mark.parametrize("case", sorted(TRACES))
def test_a_bad_trace_gets_the_message_the_table_quotes(tmp_path: Path, case: str) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(TRACES[case])
    with pytest.raises(TraceError) as raised:
        jupyter_brrr.load(path)
    message = str(raised.value)
    quoted = [q for q in _quotes(FAILURES) if all(p.strip() in message for p in q.split("..."))]
    assert quoted, f"failures.md quotes nothing of what a {case} trace gets: {message}"


def test_a_damaged_gzip_gets_the_message_the_table_quotes(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": [OP] * 100}).encode())[:-30])
    with pytest.raises(TraceError, match="the gzip stream is damaged or truncated"):
        jupyter_brrr.load(path)
    assert '"the gzip stream is damaged or truncated' in FAILURES


CELL = "import torch\nx = torch.ones(4) @ torch.ones(4)"
MAGIC_LINES = [
    ("brrr", "--bogus", CELL),
    ("brrr", "--warmup -1", CELL),
    ("brrr", "--ab-budget inf --ab graph", CELL),
    ("brrr", "--sweep-budget nan --sweep batch=1,2", CELL),
    ("brrr", "--target 1e999ms", CELL),
    ("brrr", "--items 3", CELL),
    ("brrr", "--sweep batch=1,2 --name x", CELL),
    ("brrr", "--sweep batch=1,2 --ab graph", CELL),
    ("brrr", "--sweep class=1,2", CELL),
    ("brrr", "--sweep print=1,2", CELL),
    ("brrr", "bogus", None),
    ("brrr", "diff", None),
    ("brrr_job", "--bogus train.py", None),
    ("brrr_job", "--timeout nan train.py", None),
    ("brrr_job", "--nproc 2", None),
]


@pytest.mark.parametrize(("magic", "line", "cell"), MAGIC_LINES)
def test_a_bad_flag_gets_the_message_the_table_quotes(
    ipython_shell: object, magic: str, line: str, cell: str | None
) -> None:
    from IPython.core.error import UsageError

    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")  # type: ignore[attr-defined]
    with pytest.raises(UsageError) as raised:
        if cell is None:
            ipython_shell.run_line_magic(magic, line)  # type: ignore[attr-defined]
        else:
            ipython_shell.run_cell_magic(magic, line, cell)  # type: ignore[attr-defined]
    message = str(raised.value)
    quoted = [q for q in _quotes(FAILURES) if all(p.strip() in message for p in q.split("..."))]
    assert quoted, f"failures.md quotes nothing of what %{magic} {line} gets: {message}"
