"""Hostile input (issue 11): files that are not traces, traces that are not what they seem,
reports that are not reports. Each gets a clear error (a ``TraceError`` or ``SchemaError``, or
from the CLI one ``error:`` line and exit status 2), never a crash, a hang, a wrong result or a
harmed input; the failure table (docs/failures.md) lists them.

The reader's agreement with the reference reading (``json.loads``, then msgspec on the whole
text: ``reference_reader.read_reference``) is checked on generated layouts (hypothesis) and on mutated
real traces (``bench/fuzz_load.py``, a bounded run here).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from checked import load_report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_reader import read_reference

import jupyter_brrr
from jupyter_brrr.report.report import Report, SchemaError
from jupyter_brrr.trace import events
from jupyter_brrr.trace.events import TraceError, parse_trace, read_trace
from jupyter_brrr.views import bundle, text

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
TABLES = ("ops", "kernels", "copies", "runtime", "annotations", "memory")
OP = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5}


def _same_tables(a: events.Trace, b: events.Trace) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert a.devices == b.devices and a.metadata == b.metadata


@contextlib.contextmanager
def _reader(module: object) -> Iterator[None]:
    """The compiled reader swapped for ``module`` (None: msgspec and the Python splitter)."""
    saved = events._scan
    events._scan = module
    try:
        yield
    finally:
        events._scan = saved


def _finishes(work: Callable[[], object], seconds: float = 30) -> object:
    """``work()``'s result or exception, failing the test if it does not finish in time."""
    result: list[object] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as error:  # the test inspects it
            result.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "it hangs"
    return result[0]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", *args], capture_output=True, text=True, cwd=cwd
    )


# --- 3. never overwrite the input ---------------------------------------------------------------


def test_the_cli_refuses_to_write_the_report_over_its_trace(tmp_path: Path) -> None:
    trace = tmp_path / "t.json.gz"
    trace.write_bytes((DATA / "coscos_eager.json.gz").read_bytes())
    before = trace.read_bytes()
    done = _cli(str(trace), "--json", str(trace))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "would replace it" in done.stderr
    assert trace.read_bytes() == before


def test_save_refuses_the_trace_the_report_was_read_from(tmp_path: Path) -> None:
    trace = tmp_path / "run.json"
    trace.write_bytes(gzip.decompress((DATA / "coscos_eager.json.gz").read_bytes()))
    before = trace.read_bytes()
    report = load_report(trace)
    with pytest.raises(ValueError, match=r"run\.report\.json"):
        report.save(trace)
    link = tmp_path / "link.json"
    link.symlink_to(trace)
    with pytest.raises(ValueError, match="would replace it"):
        report.save(link)  # the same file by another name
    assert trace.read_bytes() == before
    written = report.save(tmp_path / "run.report.json")
    assert [p.name for p in written] == ["run.report.json", "run.report.trace.json.gz"]
    assert gzip.decompress(written[1].read_bytes()) == before
    assert (written[0].stat().st_mode & 0o777) == (0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_failed_save_leaves_no_half_file(tmp_path: Path, gpt2: Report) -> None:
    target = tmp_path / "report.json"
    target.write_text("the old report")

    def fail(*args: object, **kwargs: object) -> str:
        raise OSError(28, "No space left on device")

    report = Report.from_json(gpt2.to_json())
    report.to_json = fail  # type: ignore[method-assign]
    with pytest.raises(OSError):
        report.save(target)
    assert target.read_text() == "the old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_the_cli_says_when_it_cannot_save(tmp_path: Path) -> None:
    done = _cli(str(DATA / "coscos_eager.json.gz"), "--json", str(tmp_path / "no" / "r.json"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: the report was not saved")
    assert "Traceback" not in done.stderr


def test_the_cli_shows_a_saved_report(tmp_path: Path) -> None:
    jupyter_brrr.load(DATA / "coscos_eager.json.gz").save(tmp_path / "r.json")
    done = _cli(str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert "coscos_eager.json.gz" in done.stdout and "aten::cos" in done.stdout


# --- 4. files that never end, or block ----------------------------------------------------------


def test_a_device_and_a_fifo_are_refused_before_any_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (fifo, "a named pipe")):
        error = _finishes(lambda path=path: read_trace(path))
        assert isinstance(error, TraceError) and kind in str(error)
    done = _cli(str(fifo))
    assert done.returncode == 2 and "named pipe" in done.stderr


def test_text_that_is_not_json_is_refused_at_its_first_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = []
    original = events._blocks

    def counted(path: Path) -> Iterator[bytes]:
        for block in original(path):
            blocks.append(len(block))
            yield block

    monkeypatch.setattr(events, "_blocks", counted)
    for name, head in (("zeros", b""), ("opened", b'{"traceEvents": [')):
        path = tmp_path / name
        with path.open("wb") as f:
            f.write(head)
            f.truncate(64 << 20)  # 64 MB of NUL bytes, sparse
        blocks.clear()
        with pytest.raises(TraceError, match=r"the text is not JSON|cannot stand there"):
            read_trace(path)
        assert len(blocks) <= 2, "read on past the first bytes that cannot be JSON"


def test_the_header_is_found_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A long member before the events, read in small blocks: every byte is looked at a bounded
    # number of times (the search used to start again from the file's start at every block).
    scanned = []
    original = events._split

    def counted(buffer: bytearray, start: int, stop: int, state: int, first: bool) -> tuple:
        scanned.append(stop - start)
        return original(buffer, start, stop, state, first)

    monkeypatch.setattr(events, "_split", counted)
    monkeypatch.setattr(events, "_BLOCK_BYTES", 4096)
    header = {"distributedInfo": {"hosts": [f"node-{i}" for i in range(100_000)]}}
    text = json.dumps({**header, "traceEvents": [OP]}).encode()
    (tmp_path / "t.json").write_bytes(text)
    assert read_trace(tmp_path / "t.json").ops["name"].tolist() == ["aten::mm"]
    assert sum(scanned) <= 2 * len(text)


# --- 6. valid JSON read as json.load reads it -----------------------------------------------------


def test_a_nested_trace_events_key_is_not_the_events(tmp_path: Path) -> None:
    decoy = {**OP, "name": "nested"}
    doc = {"distributedInfo": {"rank": 0, "traceEvents": [decoy]}, "traceEvents": [OP]}
    for written in (json.dumps(doc), json.dumps(doc, indent=2)):
        assert parse_trace(written).ops["name"].tolist() == ["aten::mm"]
    # As in json.load, the last top-level array wins.
    twice = f'{{"traceEvents": [{json.dumps(decoy)}], "traceEvents": [{json.dumps(OP)}]}}'
    assert parse_trace(twice).ops["name"].tolist() == ["aten::mm"]


def _with_nested_separators(count: int) -> bytes:
    """Kineto's layout, where each event's args hold objects laid out at the events' own indent:
    Kineto's separator between events then also stands inside every event."""
    nested = json.dumps([{"a": 1}, {"b": 2}, {"c": 3}], indent=2)  # "\n  },\n  {" inside
    parts = []
    for i in range(count):
        event = json.dumps({**OP, "ts": 10 + i, "name": f"op{i}"}, indent=2)[:-2]
        parts.append("  " + event.replace("\n", "\n  ") + f',\n    "args": {{"x": {nested}}}\n  }}')
    return ('{\n  "traceEvents": [\n' + ",\n".join(parts) + "\n  ]\n}").encode()


@pytest.mark.parametrize("block", [17, 64, 100, 256, 1000])
def test_separators_inside_events_are_not_cuts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, block: int
) -> None:
    data = _with_nested_separators(60)
    path = tmp_path / "t.json"
    path.write_bytes(data)
    monkeypatch.setattr(events, "_BLOCK_BYTES", block)
    expected = read_reference(data)
    assert sorted(expected.ops["name"]) == sorted(f"op{i}" for i in range(60))
    for module in (events._scan, None):
        with _reader(module):
            _same_tables(read_trace(path), expected)


# Generated traces: events with nested args, metadata before and after the events, decoys, and
# every layout, read in blocks of any size, must read as the reference reads them, with the
# compiled reader and without it.
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_ID = st.one_of(st.integers(-5, 2**40), st.text(max_size=4), st.none())
_TIME = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6), st.none())
_EVENT = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "i", "f", "M"]),
        "cat": st.sampled_from(["cpu_op", "kernel", "cuda_runtime", "gpu_memcpy", "Trace", "x"]),
        "name": st.text(max_size=10),
    },
    optional={
        "pid": _ID,
        "tid": _ID,
        "ts": _TIME,
        "dur": _TIME,
        "args": st.fixed_dictionaries(
            {},
            optional={
                "External id": _ID,
                "correlation": _ID,
                "stream": _ID,
                "device": _ID,
                "Input Dims": _JSON,
                "Total Allocated": _TIME,
                "nested": _JSON,
            },
        ),
    },
)


@st.composite
def _trace_texts(draw: st.DrawFn) -> bytes:
    events_ = draw(st.lists(_EVENT, max_size=25))
    members = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["deviceProperties", "distributedInfo", "x", "trace"]), _JSON
            ),
            max_size=3,
        )
    )
    doc_members: list[tuple[str, object]] = []
    for key, value in members:
        if key == "deviceProperties":
            value = [{"id": 0, "name": "G", "totalGlobalMem": 1 << 30, "numSms": 10}]
        elif key == "distributedInfo" and draw(st.booleans()):
            value = {"traceEvents": draw(st.lists(_EVENT, max_size=3))}  # a decoy
        doc_members.append((key, value))
    at = draw(st.integers(0, len(doc_members)))
    doc_members.insert(at, ("traceEvents", events_))
    if draw(st.booleans()):
        doc_members.insert(0, ("traceEvents", draw(st.lists(_EVENT, max_size=3))))  # overridden
    layout = draw(st.sampled_from(["kineto", "compact", "spaced", "indent"]))
    if layout == "kineto":
        parts = []
        for key, value in doc_members:
            if key == "traceEvents":
                assert isinstance(value, list)
                body = ",\n".join(
                    "  " + json.dumps(e, indent=2).replace("\n", "\n  ") for e in value
                )
                parts.append(f'  "traceEvents": [\n{body}\n  ]')
            else:
                parts.append(f"  {json.dumps(key)}: {json.dumps(value, indent=2)}")
        text = "{\n" + ",\n".join(parts) + "\n}"
    else:
        separators = (",", ":") if layout == "compact" else None
        indent = draw(st.sampled_from([1, 2, 3])) if layout == "indent" else None
        text = (
            "{"
            + ",".join(
                f"{json.dumps(k)}:{json.dumps(v, separators=separators, indent=indent)}"
                for k, v in doc_members
            )
            + "}"
        )
    return text.encode()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(text=_trace_texts(), block=st.sampled_from([1, 7, 64, 500, 1 << 20]))
def test_generated_layouts_read_as_the_reference_reads_them(text: bytes, block: int) -> None:
    saved = events._BLOCK_BYTES
    events._BLOCK_BYTES = block
    try:
        outcomes = []
        for module in (events._scan, None):
            with _reader(module):
                try:
                    outcomes.append(parse_trace(text))
                except TraceError as error:
                    outcomes.append(str(error))
    finally:
        events._BLOCK_BYTES = saved
    try:
        reference: events.Trace | str = read_reference(text)
    except TraceError as error:
        reference = str(error)
    doc = json.loads(text)  # valid JSON by construction
    assert isinstance(doc, dict)
    for outcome in outcomes:
        assert isinstance(outcome, str) == isinstance(reference, str), (outcome, reference)
        if not isinstance(outcome, str):
            _same_tables(outcome, reference)  # type: ignore[arg-type]
    assert outcomes[0] == outcomes[1] if isinstance(reference, str) else True
    if not isinstance(reference, str):
        # And what json.load holds: the last top-level array's ops, nested decoys left out.
        expected = sorted(
            e["name"]
            for e in doc["traceEvents"]
            if e["ph"] == "X"
            and e["cat"] == "cpu_op"
            and isinstance(e.get("ts"), int | float)
            and not isinstance(e.get("ts"), bool)
        )
        assert sorted(reference.ops["name"]) == expected


# --- 7. clear errors, not raw exceptions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            '{"traceEvents": [{"ph": "X", "ts": 1, "args": {"a": '
            + "[" * 10_000
            + "]" * 10_000
            + "}}]}",
            "nested too deeply",
        ),
        ({"traceEvents": [OP, {**OP, "pid": {"a": 1}}]}, r"traceEvents\[1\]\.pid: expected"),
        (
            {"deviceProperties": [1], "traceEvents": [OP]},
            r"deviceProperties\[0\]: expected `object`",
        ),
        (
            {"deviceProperties": [{"id": 0, "totalGlobalMem": "80GB"}], "traceEvents": [OP]},
            r"deviceProperties\[0\]\.totalGlobalMem: expected `int \| null`, got `str`",
        ),
        ({"traceEvents": [OP, {**OP, "ts": [1]}]}, r"traceEvents\[1\]\.ts: expected"),
    ],
    ids=["deep args", "object pid", "number device", "text memory", "array ts"],
)
def test_bad_traces_give_a_clear_error_in_load_and_the_cli(
    tmp_path: Path, doc: dict | str, message: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(TraceError, match=message):
        jupyter_brrr.load(path)
    done = _cli(str(path))
    assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def _example() -> dict:
    return json.loads((DATA / "reports" / "ab.json").read_text())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["summary"].pop("span_s"), "summary.span_s: missing"),
        (lambda d: d["summary"].update(span_s="1"), 'summary.span_s: expected a number from 0 to 1e.09, got "1"'),
        (lambda d: d.update(version="1"), 'version: expected a whole number from 1 to 1e.30, got "1"'),
        (lambda d: d["summary"].update(busy_s=float("inf")), "summary.busy_s: expected a number from 0"),
        (lambda d: d["summary"].update(compute_s=1e308), "summary.compute_s: expected a number from 0"),
        (lambda d: d["summary"].update(compute_s=1.0), "summary: the parts of the span"),
        (lambda d: d["summary"].update(runs=[]), "summary.runs: expected an object, got an array"),
        (lambda d: d["summary"]["runs"].update(total=-1), "summary.runs.total: expected a whole number from 0"),
        (lambda d: d["ops"]["data"][0].pop(), r"ops.data\[0\]: expected an array of 27 cells"),
        (lambda d: d["ops"]["data"][0].__setitem__(5, "many"), r"ops.data\[0\] column 'calls'"),
        (lambda d: d["kernels"].update(data={}), "kernels.data: expected an array"),
        (lambda d: d.update(notes=[1]), r"notes\[0\]: expected a string, got 1"),
        (lambda d: d["recommendations"][0].update(title=None), r"recommendations\[0\].title"),
        (lambda d: d["ab"]["variants"][0].update(speedup="fast"), r"ab.variants\[0\].speedup"),
        (lambda d: d.update(summary=None), "summary: expected an object, got null"),
    ],
)  # fmt: skip
def test_a_bad_report_document_names_its_bad_field(change: Callable, message: str) -> None:
    doc = _example()
    change(doc)
    with pytest.raises(SchemaError, match=message):
        Report.from_json(json.dumps(doc))


def _paths(value: object, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from _paths(item, (*path, index))


def test_every_field_of_a_report_given_a_wrong_value_is_refused_or_renders() -> None:
    # Each field of the example report set to each hostile value in turn: from_json refuses it
    # with SchemaError, or the report renders (text, repr, the notebook bundle) without error.
    doc = _example()
    hostile = ["1", 1e308, -1.0, True, None, [], {}, "\x1b[2J<b>", 2**70]
    rendered = refused = 0
    for path in list(_paths(doc))[1:]:
        for value in hostile:
            changed = json.loads(json.dumps(doc))
            parent = changed
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
            try:
                report = Report.from_json(json.dumps(changed))
            except SchemaError:
                refused += 1
                continue
            text.render(report)
            repr(report)
            bundle.mimebundle(report)
            rendered += 1
    assert refused > 100 and rendered > 100


def test_text_that_is_not_a_report_is_a_schema_error() -> None:
    for bad in ("not json", "[" * 100_000, '{"schema": "jupyter_brrr.report"', "run.json"):
        with pytest.raises(SchemaError, match="Not a report"):
            Report.from_json(bad)


# --- 9. the compiled reader and msgspec agree --------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [b'"\\ud800"', b'"\\udc00x"', b'"\\ud800\\u0041"', b'"\xff"', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b"1e400"],
    ids=["high surrogate", "low surrogate", "unpaired", "0xff", "encoded surrogate", "overlong", "1e400"],
)  # fmt: skip
def test_a_bad_value_in_a_skipped_field_fails_on_both_paths(value: bytes) -> None:
    data = b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "grid": %s}]}'
    outcomes = []
    for module in (events._scan, None):
        with _reader(module):
            try:
                outcomes.append(parse_trace(data % value))
            except TraceError as error:
                outcomes.append(str(error))
    if value == b"1e400":  # not converted where it is skipped, by either reader
        _same_tables(outcomes[0], outcomes[1])  # type: ignore[arg-type]
        return
    assert isinstance(outcomes[0], str) and outcomes[0] == outcomes[1]
    with pytest.raises(TraceError):
        read_reference(data % value)


# --- 10. control characters -----------------------------------------------------------------------


def test_terminal_escapes_in_names_are_shown_escaped(tmp_path: Path) -> None:
    name = "aten::mm\x1b]0;owned\x07\x1b[2J\u202e"
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [{**OP, "name": name}]}))
    done = _cli(str(path))
    assert done.returncode == 0
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "aten::mm\\x1b]0;owned" in done.stdout
    report = load_report(path)
    assert "\x1b" not in repr(report)
    assert report.ops["name"].iloc[0] == name  # the data keeps the name as it is


# --- 12. the minor ones -----------------------------------------------------------------------


def test_a_bom_and_utf16_text_read_as_utf8(tmp_path: Path) -> None:
    text = json.dumps({"traceEvents": [OP]})
    for name, data in (("bom", b"\xef\xbb\xbf" + text.encode()), ("utf16", text.encode("utf-16"))):
        (tmp_path / name).write_bytes(data)
        assert read_trace(tmp_path / name).ops["name"].tolist() == ["aten::mm"]


def test_a_symlink_loop_is_called_a_loop(tmp_path: Path) -> None:
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    with pytest.raises(TraceError, match="form a loop"):
        read_trace(tmp_path / "a.json")
    (tmp_path / "c.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(TraceError, match="which does not exist"):
        read_trace(tmp_path / "c.json")


def test_a_megabyte_name_is_cut_in_the_views_and_whole_in_the_data(tmp_path: Path) -> None:
    name = "aten::" + "x" * 1_000_000
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [{**OP, "name": name}]}))
    report = load_report(path)
    outputs = bundle.mimebundle(report)
    assert len(outputs["text/html"]) < 50_000 and "…" in outputs["text/html"]
    assert len(outputs["text/plain"]) < 5_000 and "…" in outputs["text/plain"]
    names = outputs[report.mime_type]["ops"]
    assert names["data"][0][names["columns"].index("name")] == name


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_error_positions_are_the_file_s_not_a_chunk_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, block: int
) -> None:
    monkeypatch.setattr(events, "_BLOCK_BYTES", block)
    good = [{**OP, "ts": i} for i in range(300)]
    text = json.dumps({"traceEvents": good}, indent=2)
    at = text.index('"ts": 250')
    broken = text[:at] + '"ts": @' + text[at + len('"ts": 250') :]
    (tmp_path / "t.json").write_text(broken)
    with pytest.raises(TraceError, match=f"at byte {at + 6:,} of the JSON text"):
        read_trace(tmp_path / "t.json")
    typed = json.dumps({"traceEvents": [*good[:250], {**OP, "ph": 5}]}, indent=2)
    (tmp_path / "t.json").write_text(typed)
    with pytest.raises(TraceError, match=r"traceEvents\[250\]\.ph: expected `str`"):
        read_trace(tmp_path / "t.json")


# --- the fuzz run ----------------------------------------------------------------------------------


def test_mutated_traces_load_as_the_reference_reads_them() -> None:
    # A bounded run of the fuzzing benchmark: every mutated trace gives the reference's outcome
    # through load(), with no crash or hang (10,000 cases: bench/RESULTS.md).
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fuzz_load.py"), "--cases", "300", "--seed", "7"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "300 cases" in done.stdout
