"""The merge of the compiled reader's chunks in C (``_scan.merge``) against the Python merge it
replaced, on the real traces of tests/data cut at many chunk boundaries.

The Python merge (kept here as the oracle, as it was in ``events.py``) renumbered every coded
field's distinct texts over all chunks with a dict, joined all columns of all events, and then
sorted the events into kinds with numpy. The C merger sorts each chunk into kinds as it comes,
keeping only the fields each kind needs. Both must give the same columns, value for value.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from checked import TRACES

from jupyter_brrr.trace import events

_scan = pytest.importorskip("jupyter_brrr.trace._scan", reason="the compiled reader is not built")


def _python_merge(chunks: list[tuple]) -> tuple[np.ndarray, np.ndarray, list[list[bytes]]]:
    """``events._merge_scanned`` as it was: the chunks' columns joined, one numbering of the
    distinct texts of each coded field."""
    coded, numbered = len(events._SCANNED_CODED), len(events._SCANNED_NUMBERS)
    codes = [np.frombuffer(c[1], np.int32).reshape(coded, c[0]) for c in chunks]
    numbers = [np.frombuffer(c[2], np.float64).reshape(numbered, c[0]) for c in chunks]
    texts, joined = [], []
    for index in range(coded):
        merged: dict[bytes, int] = {}
        renumbered = []
        for chunk, chunk_codes in zip(chunks, codes, strict=True):
            renumber = [merged.setdefault(text, len(merged)) for text in chunk[3][index]]
            renumbered.append(np.array([*renumber, -1], np.int32)[chunk_codes[index]])
        texts.append(list(merged))
        joined.append(np.concatenate(renumbered))
    return np.stack(joined), np.concatenate(numbers, axis=1), texts


def _python_columns(chunks: list[tuple]) -> events._Columns:
    """``_Columns._sort_scanned`` as it was, over all chunks at once."""
    columns = events._Columns()
    codes, numbers, texts = _python_merge(chunks)
    code = dict(zip(events._SCANNED_CODED, codes, strict=True))
    number = dict(zip(events._SCANNED_NUMBERS, numbers, strict=True))
    values = {
        name: events._distinct_values(name, distinct)
        for name, distinct in zip(events._SCANNED_CODED, texts, strict=True)
    }
    phases, categories = values["ph"], values["cat"]
    kind_of_pair = np.array([[columns._codes[(p, c)] for c in categories] for p in phases])
    kinds = kind_of_pair[code["ph"], code["cat"]]
    normalised = np.array([columns._codes.categories.get(c, c) for c in categories], object)
    for kind_code, kind in enumerate(events._FIELDS):
        rows = np.flatnonzero(kinds == kind_code)
        if not len(rows):
            continue
        parts = columns.parts[kind]
        for name in events._FIELDS[kind]:
            if name in events._FLOAT_FIELDS:
                parts[name].append(number[name][rows])
                continue
            codes_here = code[name][rows]
            if name == "cat":
                category = normalised[codes_here]
                if kind == "host":
                    scope = np.array([*map(events._is_attribution_scope, values["name"])], bool)
                    if scope.any():
                        category[scope[code["name"][rows]]] = events._SCOPE
                parts[name].append(category)
            elif name in events._ID_FIELDS:
                used = np.flatnonzero(np.bincount(codes_here + 1, minlength=1)) - 1
                ids = events._ids(values[name][used].tolist())
                lookup = np.empty(len(values[name]), ids.dtype)
                lookup[used] = ids
                parts[name].append(lookup[codes_here])
            else:
                parts[name].append(values[name][codes_here])
    other = kinds == events._OTHER_COMPLETE
    if other.any():
        ts = number["ts"][other]
        columns.timed += int(np.isfinite(ts).sum())
        columns.first_ts = float(np.nanmin(ts, initial=columns.first_ts))
    instants = np.flatnonzero(kinds == events._INSTANT)
    totals = values["total_allocated"][code["total_allocated"][instants]]
    sampled = instants[np.not_equal(totals, None)]  # pyright: ignore[reportArgumentType, reportCallIssue]  # numpy stubs: loose scalar types
    columns.memory += zip(
        number["ts"][sampled].tolist(),
        values["device_id"][code["device_id"][sampled]].tolist(),
        values["total_allocated"][code["total_allocated"][sampled]].tolist(),
        strict=True,
    )
    return columns


def _read_recording(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple:
    """The file's columns as the reader merges them, and the scanned chunks it merged."""
    recorded: list[tuple] = []
    merge = events._Columns.add_scanned

    def add_scanned(self: events._Columns, scanned: tuple) -> None:
        recorded.append(scanned)
        merge(self, scanned)

    monkeypatch.setattr(events._Columns, "add_scanned", add_scanned)
    _, columns = events._Parser(events._utf8_blocks(events._blocks(path))).parse()
    return columns, recorded


def _assert_same_columns(merged: events._Columns, reference: events._Columns) -> None:
    for kind in events._FIELDS:
        ours, theirs = merged.take_arrays(kind), reference.take_arrays(kind)
        assert ours.keys() == theirs.keys()
        for name in ours:
            assert ours[name].dtype == theirs[name].dtype, (kind, name)
            if ours[name].dtype == object:
                assert ours[name].tolist() == theirs[name].tolist(), (kind, name)
            else:
                np.testing.assert_array_equal(ours[name], theirs[name], err_msg=f"{kind}.{name}")
    assert merged.memory == reference.memory
    assert merged.timed == reference.timed
    assert merged.first_ts == reference.first_ts


@pytest.mark.parametrize("block", [1 << 20, 1 << 16, 1 << 12], ids=["1MB", "64kB", "4kB"])
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_c_merge_gives_the_python_merges_columns(
    monkeypatch: pytest.MonkeyPatch, path: Path, block: int
) -> None:
    # Blocks of 4 kB cut a trace into hundreds of chunks, most events' neighbours in another.
    monkeypatch.setattr(events, "_BLOCK_BYTES", block)
    merged, chunks = _read_recording(monkeypatch, path)
    assert chunks
    _assert_same_columns(merged, _python_columns(chunks))


def _tiny_chunk(names: list[bytes], name_codes: list[int]) -> tuple:
    """A scanned chunk of ``len(name_codes)`` complete runtime events with the given names."""
    text = (
        b"["
        + b",".join(
            b'{"ph":"X","cat":"cuda_runtime","name":%s,"ts":%d}' % (names[c], i)
            for i, c in enumerate(name_codes)
        )
        + b"]"
    )
    return _scan.scan(text, 0, len(text))


def test_the_merger_refuses_what_is_not_a_chunk_and_keeps_its_rows() -> None:
    merger = _scan.merger(events._MERGED_FIELD_NUMBERS)
    chunk = _tiny_chunk([b'"a"', b'"b"'], [0, 1, 0])
    runtime = events._KIND_CODES["runtime"]
    table = bytes([runtime, 253, 253, 253])  # (X, cuda_runtime): runtime; else skipped
    _scan.merge(merger, chunk, table)
    count, codes, numbers, uniques = chunk
    bad_codes = bytearray(codes)
    bad_codes[events._SCANNED_CODED.index("name") * count * 4] = 7  # a name code past the texts
    with pytest.raises(ValueError, match="outside"):
        _scan.merge(merger, (count, bytes(bad_codes), numbers, uniques), table)
    with pytest.raises(ValueError, match="table"):
        _scan.merge(merger, chunk, table[:3])
    with pytest.raises(ValueError, match="not a chunk"):
        _scan.merge(merger, (count + 1, codes, numbers, uniques), table)
    with pytest.raises(TypeError):
        _scan.merge(merger, (count, codes, numbers, (*uniques[:-1], (b"x",))), table)
    with pytest.raises(ValueError, match="PyCapsule"):
        _scan.merge(object(), chunk, table)
    # The failed calls appended nothing: the runtime kind holds the first chunk's three rows.
    merged, timed, first_ts = _scan.take(merger)
    names = events._MERGED_FIELDS["runtime"].index("name")
    assert np.frombuffer(merged[runtime][names], np.int32).tolist() == [0, 1, 0]
    assert _scan.texts(merger)[events._SCANNED_CODED.index("name")] == [b'"a"', b'"b"']
    assert (timed, first_ts) == (0, float("inf"))
    empty, _, _ = _scan.take(merger)  # a take empties the columns
    assert all(len(column) == 0 for kind in empty for column in kind)


def test_the_merger_holds_its_texts_until_it_goes() -> None:
    chunk = _tiny_chunk([b'"a name seen once"'], [0, 0])
    text = chunk[3][events._SCANNED_CODED.index("name")][0]
    before = sys.getrefcount(text)
    merger = _scan.merger(events._MERGED_FIELD_NUMBERS)
    _scan.merge(merger, chunk, bytes([events._KIND_CODES["runtime"], 253, 253, 253]))
    assert sys.getrefcount(text) == before + 1  # one reference, in the merger's texts
    for _ in range(100):
        _scan.merge(merger, chunk, bytes([events._KIND_CODES["runtime"], 253, 253, 253]))
        _scan.take(merger)
        _scan.texts(merger)
    assert sys.getrefcount(text) == before + 1
    del merger
    assert sys.getrefcount(text) == before
