"""The compiled columnar reader (``jupyter_brrr/_scan.c``) gives exactly what msgspec gives.

msgspec stays the reference: every table read with the compiled reader must equal the one read
with msgspec alone, and the reader must decline (return None) whatever it does not know, so that
msgspec decides the result or the error.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_brrr.trace import events
from jupyter_brrr.trace.events import TraceError, parse_trace, read_trace

_scan = pytest.importorskip("jupyter_brrr.trace._scan", reason="the compiled reader is not built")

DATA = Path(__file__).parent / "data"
TABLES = ("ops", "kernels", "copies", "runtime", "annotations", "memory")


class _Counting:
    """Wraps the reader to count the chunks it read and the ones it declined."""

    def __init__(self) -> None:
        self.read = self.declined = 0

    def scan(self, buffer: bytearray, start: int, stop: int) -> tuple | None:
        result = _scan.scan(buffer, start, stop)
        if result is None:
            self.declined += 1
        else:
            self.read += 1
        return result

    def __getattr__(self, name: str) -> object:
        return getattr(_scan, name)  # split, and the merger's functions


def _both_ways(monkeypatch: pytest.MonkeyPatch, read) -> tuple:
    counting = _Counting()
    monkeypatch.setattr(events, "_scan", counting)
    compiled = read()
    monkeypatch.setattr(events, "_scan", None)
    reference = read()
    monkeypatch.setattr(events, "_scan", _scan)  # the real reader again (the fixture ends it)
    return compiled, reference, counting


def _assert_same_tables(compiled: events.Trace, reference: events.Trace) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(compiled, name), getattr(reference, name))


def test_the_built_reader_is_not_older_than_its_source() -> None:
    source = Path(events.__file__).with_name("_scan.c")
    if source.exists():  # a source tree (an installed wheel has no .c)
        assert Path(_scan.__file__).stat().st_mtime >= source.stat().st_mtime, (
            "jupyter_brrr/_scan.c changed after the reader was built: run `pip install -e .` again"
        )


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json.gz")), ids=lambda p: p.name)
def test_every_trace_reads_the_same_as_with_msgspec(
    monkeypatch: pytest.MonkeyPatch, path: Path
) -> None:
    compiled, reference, counting = _both_ways(monkeypatch, lambda: read_trace(path))
    assert counting.read >= 1 and counting.declined == 0
    _assert_same_tables(compiled, reference)
    assert compiled.devices == reference.devices
    assert compiled.metadata == reference.metadata
    assert compiled.origin_us == reference.origin_us


def test_small_chunks_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 4 kB: hundreds of chunks, each with its own distinct values to merge.
    monkeypatch.setattr(events, "_BLOCK_BYTES", 4096)
    path = DATA / "resnet50_train_amp_b64.json.gz"
    compiled, reference, counting = _both_ways(monkeypatch, lambda: read_trace(path))
    assert counting.read > 100
    _assert_same_tables(compiled, reference)


def _kineto_layout(events_: list[dict]) -> bytes:
    """Events written the way Kineto writes them: one object per event at two spaces of indent."""
    body = ",\n".join("  " + json.dumps(e, indent=2).replace("\n", "\n  ") for e in events_)
    return ('{\n  "traceEvents": [\n' + body + '\n  ]\n, "displayTimeUnit": "ms"}').encode()


_ODD_EVENTS = [
    # Escapes in names, a unicode name, string and missing ids, null fields, a nested args value,
    # a number with an exponent, a negative duration, a memory sample.
    {"ph": "X", "cat": "cpu_op", "name": 'aten::"quoted"\n\u00e9\u4e2d', "pid": 1, "tid": 2,
     "ts": 10.5, "dur": 2e1, "args": {"External id": 7, "Input Dims": [[2, 3], []],
                                     "Input type": ["float", ""], "nested": {"a": [1, {"b": None}]}}},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": "gpu 0", "tid": "stream 7", "ts": 11.25,
     "dur": -1, "args": {"External id": 7, "correlation": 3, "stream": 7, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10.75,
     "dur": 0.25, "args": {"External id": 7, "correlation": 3}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 12,
     "dur": 1, "args": {"stream": "7", "device": None, "bytes": 1 << 40, "correlation": None}},
    {"ph": "X", "cat": "cpu_op", "name": "no args", "pid": 1, "tid": 2, "ts": 13, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "null args", "pid": 1, "tid": 2, "ts": 14, "args": None},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 15,
     "args": {"Total Allocated": 1024, "Device Id": 0, "Bytes": 512}},
    {"ph": "i", "name": "marker", "ts": 15.5, "args": {"Total Allocated": None}},
    {"ph": "f", "id": 1, "pid": 1, "tid": 2, "ts": 16, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "ts": 9, "dur": 20, "pid": True},
]  # fmt: skip


def test_odd_but_valid_events_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _kineto_layout(_ODD_EVENTS)
    compiled, reference, counting = _both_ways(monkeypatch, lambda: parse_trace(data))
    assert counting.read >= 1 and counting.declined == 0
    _assert_same_tables(compiled, reference)
    assert compiled.ops["name"].iloc[0] == 'aten::"quoted"\n\u00e9\u4e2d'
    assert compiled.memory["allocated_bytes"].tolist() == [1024]


@pytest.mark.parametrize(
    "odd",
    [
        {"ph": "X", "n\\u0061me": "escaped key"},  # the key is "name", written with an escape
        {"ph": "X", "cat": "cpu_op", "name": "a", "ts": "12.5"},  # a time as a string
        {"ph": 1, "cat": "cpu_op", "name": "a", "ts": 1},  # a phase that is not a string
        {"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "args": [1]},  # args not an object
        {"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "ts_again": 2},  # a key twice
        {"ph": "X", "cat": "cpu_op", "name": "a", "ts": "big"},  # beyond a double's range
    ],
)
def test_the_reader_declines_what_it_does_not_know(
    monkeypatch: pytest.MonkeyPatch, odd: dict
) -> None:
    ok = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 5, "dur": 2, "pid": 1, "tid": 1}
    data = (
        _kineto_layout([ok, odd])
        .replace(b"n\\\\u0061me", b"n\\u0061me")
        .replace(b'"ts_again"', b'"ts"')
        .replace(b'"big"', b"1e400")
    )

    def read() -> object:
        try:
            return parse_trace(data)
        except TraceError as e:
            return str(e)

    compiled, reference, counting = _both_ways(monkeypatch, read)
    # The chunk with the odd event is declined; the one before it is read. A chunk that does not
    # read at all is cut again by structure, and declined once more before its error is given.
    assert counting.declined == (2 if isinstance(reference, str) else 1)
    if isinstance(reference, str):
        assert compiled == reference  # the same error, worded by msgspec
    else:
        _assert_same_tables(compiled, reference)


def test_a_declined_chunk_between_read_ones_keeps_the_file_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Runtime calls keep the file's order in their table (here against their times).
    calls = [
        {"ph": "X", "cat": "cuda_runtime", "name": f"call{i}", "pid": 1, "tid": 1,
         "ts": 300 - i, "dur": 0.5}
        for i in range(300)
    ]  # fmt: skip
    calls[150]["ts"] = "150"  # a time as a string: that chunk goes to msgspec
    path = tmp_path / "trace.json"
    path.write_bytes(_kineto_layout(calls))
    monkeypatch.setattr(events, "_BLOCK_BYTES", 2048)  # about 20 chunks
    compiled, reference, counting = _both_ways(monkeypatch, lambda: read_trace(path))
    assert counting.declined == 1 and counting.read > 10
    pd.testing.assert_frame_equal(compiled.runtime, reference.runtime)
    assert compiled.runtime["name"].tolist() == [f"call{i}" for i in range(300)]


@pytest.mark.parametrize(
    "text",
    [b"[{]", b'[{"ts": 1.}]', b'[{"ts": 01}]', b'[{"ts": NaN}]', b'[{"name": "a\x01"}]',
     b'[{"name": "\\x"}]', b'[{"ph": "X"} {"ph": "X"}]', b'[{"ph": "X"}] extra', b"[" * 300,
     b'[{"args": {"a": [1, 2}}]', b'[{"ts": 1e}]', b'[{"ts": -}]', b'[{"ph": tru}]'],
)  # fmt: skip
def test_invalid_json_is_declined(text: bytes) -> None:
    assert _scan.scan(text, 0, len(text)) is None


def test_numbers_are_read_exactly_as_python_reads_them() -> None:
    rng = random.Random(7)
    texts = ["0", "-0", "1", "0.1", "123.456", "1e3", "-2.5E-3", "1712195495519689.047"]
    for _ in range(3000):
        integer = str(rng.randrange(10 ** rng.randrange(0, 20)))
        decimals = "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 12)))
        text = ("-" if rng.random() < 0.2 else "") + integer + (f".{decimals}" if decimals else "")
        if rng.random() < 0.1:
            text += f"e{rng.randrange(-30, 30)}"
        texts.append(text)
    array = ("[" + ",".join(f'{{"ts": {t}}}' for t in texts) + "]").encode()
    count, _, numbers, _ = _scan.scan(array, 0, len(array))
    ts = np.frombuffer(numbers, np.float64)[:count]
    expected = np.array([float(t) for t in texts])
    mismatched = [t for t, a, b in zip(texts, ts, expected, strict=True) if a != b]
    assert not mismatched
    assert np.array_equal(np.signbit(ts), np.signbit(expected))


def test_a_real_chunk_has_the_columns_the_docstring_promises() -> None:
    with gzip.open(DATA / "coscos_eager.json.gz") as f:
        doc = json.load(f)
    text = json.dumps(doc["traceEvents"]).encode()
    count, codes, numbers, uniques = _scan.scan(text, 0, len(text))
    assert count == len(doc["traceEvents"])
    codes = np.frombuffer(codes, np.int32).reshape(_scan.FIELD_COUNT, count)
    names = [json.loads(uniques[2][c]) if c >= 0 else None for c in codes[2]]
    assert names == [e.get("name") for e in doc["traceEvents"]]
    dur = np.frombuffer(numbers, np.float64).reshape(_scan.NUMBER_COUNT, count)[1]
    expected = [e.get("dur", np.nan) for e in doc["traceEvents"]]
    np.testing.assert_array_equal(dur, np.array(expected, dtype=float))


def _read_in_child(path: str, results: object) -> None:
    results.put(len(read_trace(path).kernels))  # type: ignore[attr-defined]


def test_a_forked_child_reads_with_threads_of_its_own() -> None:
    # The parent's reader threads do not exist in a forked child; a pool carried over would
    # wait forever for them.
    import multiprocessing

    path = str(DATA / "resnet50_train_amp_b64.json.gz")
    expected = len(read_trace(path).kernels)  # the parent's pool now exists
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_read_in_child, args=(path, results))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the child hung reading a trace"
    assert results.get(timeout=5) == expected


def test_damaged_text_is_read_as_msgspec_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random damage to a real trace: whatever the reader makes of a chunk, the tables or the
    error must be msgspec's (and the process must survive: this is C)."""
    with gzip.open(DATA / "coscos_eager.json.gz") as f:
        clean = f.read()
    rng = random.Random(11)
    alphabet = b'{}[]",:\\ \n0123456789.-eEtrufalsnX\x00\xff'
    results = {"read": 0, "declined": 0}
    for _ in range(300):
        text = bytearray(clean)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(text))
            action = rng.randrange(3)
            if action == 0:
                text[at] = rng.choice(alphabet)
            elif action == 1:
                del text[at : at + rng.randrange(1, 40)]
            else:
                text[at:at] = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 5)))

        def read(data: bytes = bytes(text)) -> object:
            try:
                return parse_trace(data)
            except TraceError as e:
                return str(e)

        compiled, reference, counting = _both_ways(monkeypatch, read)
        results["read"] += counting.read
        results["declined"] += counting.declined
        if isinstance(reference, str) or isinstance(compiled, str):
            assert compiled == reference
        else:
            _assert_same_tables(compiled, reference)
    assert results["read"] > 50 and results["declined"] > 50  # both paths were exercised


def _compact_events(count: int, nested: bool) -> bytes:
    """Compact JSON (no spaces) of ``count`` runtime calls; ``nested``: every tenth with "},{"
    inside a string and inside a nested args value, where a byte search would cut wrongly."""
    calls = []
    for i in range(count):
        call = {"ph": "X", "cat": "cuda_runtime", "name": f"call{i}", "pid": 1, "tid": 1,
                "ts": i, "dur": 0.5, "args": {"correlation": i}}  # fmt: skip
        if nested and i % 10 == 0:
            call["name"] = f'call{i} "}},{{" in a name'
            call["args"]["nested"] = [{"a": 1}, {"b": 2}]
        calls.append(call)
    return json.dumps({"traceEvents": calls}, separators=(",", ":")).encode()


@pytest.mark.parametrize("nested", [False, True], ids=["plain", "nested separators"])
def test_compact_json_is_cut_at_its_own_separator(
    monkeypatch: pytest.MonkeyPatch, nested: bool
) -> None:
    # Compact JSON learns its separator ("},{") from the first cut by structure, and is cut by a
    # byte search from then on: _scan.split reads the first block only, not every block on the
    # calling thread. Where the separator also stands inside events, the wrong cuts are refused
    # by the reader and the file is cut by structure: the same tables either way.
    data = _compact_events(3000, nested)
    monkeypatch.setattr(events, "_BLOCK_BYTES", 4096)  # about 70 blocks
    split_bytes = []
    split = events._split

    def counting_split(buffer: bytearray, start: int, stop: int, state: int, first: bool):
        split_bytes.append(stop - start)
        return split(buffer, start, stop, state, first)

    monkeypatch.setattr(events, "_split", counting_split)
    compiled, reference, _ = _both_ways(monkeypatch, lambda: parse_trace(data))
    _assert_same_tables(compiled, reference)
    assert compiled.runtime["name"].tolist()[1:3] == ["call1", "call2"]
    monkeypatch.setattr(events, "_split", split)
    split_bytes.clear()
    monkeypatch.setattr(events, "_split", counting_split)
    parse_trace(data)
    if nested:
        assert sum(split_bytes) > len(data) / 2  # cut by structure after the first wrong cut
    else:
        assert sum(split_bytes) < 3 * 4096  # the first block or so, then byte searches
