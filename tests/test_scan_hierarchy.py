"""The op hierarchy's C functions (``_scan.nest``, ``_scan.factorize``) against the numpy and
pandas versions they stand in for, on the host events of the real traces of tests/data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from checked import TRACES

from jupyter_brrr.trace import events

_scan = pytest.importorskip("jupyter_brrr.trace._scan", reason="the compiled reader is not built")


def _host_events(monkeypatch: pytest.MonkeyPatch, path: Path) -> dict[str, np.ndarray]:
    """The host events the reader hands to the op hierarchy."""
    seen: list[dict[str, np.ndarray]] = []
    hierarchy = events._host_hierarchy

    def recording(host: dict[str, np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame]:
        seen.append(dict(host))  # the hierarchy uses its dict up
        return hierarchy(host)

    monkeypatch.setattr(events, "_host_hierarchy", recording)
    events.read_trace(path)
    return seen[0]


def _wanted(
    host: dict[str, np.ndarray], order: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three kinds of rows to find ancestors of, as the hierarchy asks: ops, and two kinds of
    scope told apart by name, so that the three differ."""
    category = host["cat"][order]
    names = host["name"][order]
    is_scope = category != "cpu_op"
    long_name = np.array([len(str(name)) > 20 for name in names], bool)
    return category == "cpu_op", is_scope & long_name, is_scope & ~long_name


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_c_nesting_gives_the_numpy_nesting(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    host = _host_events(monkeypatch, path)
    thread = events._thread_codes(host["pid"], host["tid"])
    order = events._nesting_order(thread, host["start_s"], host["dur_s"])
    wanted = _wanted(host, order)
    ours = events._nesting(thread[order], host["end_s"][order], wanted)
    theirs = events._nesting_numpy(thread[order], host["end_s"][order], wanted)
    assert len(ours) == len(theirs) == 6
    for column, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_array_equal(mine, reference, err_msg=f"output {column}")
    # What a parent is, checked apart from either version: an earlier row of the same thread
    # that ends no earlier than its child.
    parent, child = ours[0][ours[0] >= 0], np.flatnonzero(ours[0] >= 0)
    end = host["end_s"][order]
    assert (parent < child).all()
    assert (thread[order][parent] == thread[order][child]).all()
    assert (end[parent] + events._NESTING_SLACK >= end[child]).all()


def test_the_c_nesting_tolerates_a_child_ending_a_hair_late() -> None:
    """A child that ends within the slack after its parent stays its child; beyond, it does
    not; a new thread starts at the top level."""
    thread = np.array([0, 0, 0, 1], np.int64)
    end = np.array([10.0, 10.0 + 5e-10, 10.0 + 1e-6, 5.0])
    wanted = (np.ones(4, bool), np.zeros(4, bool), np.array([True, False, False, False]))
    ours = events._nesting(thread, end, wanted)
    theirs = events._nesting_numpy(thread, end, wanted)
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(mine, reference)
    np.testing.assert_array_equal(ours[0], [-1, 0, -1, -1])


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_c_factorize_gives_pandas_factorize(
    monkeypatch: pytest.MonkeyPatch, path: Path
) -> None:
    host = _host_events(monkeypatch, path)
    for name in ("dims", "types", "concrete", "strides", "name"):
        column = host[name]
        if isinstance(column, events._Coded):  # the merger's codes: as the texts they stand for
            column = column.objects()
        codes, distinct = _scan.factorize(column.tolist())
        expected_codes, expected_distinct = pd.factorize(column)
        np.testing.assert_array_equal(np.frombuffer(codes, np.int64), expected_codes, err_msg=name)
        assert distinct == list(expected_distinct), name


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_mergers_codes_give_the_shared_values_of_their_texts(
    monkeypatch: pytest.MonkeyPatch, path: Path
) -> None:
    """The shapes' texts and values decoded from the merger's codes (each distinct text once)
    equal those decoded from the column of texts they stand for, on all rows and on a part of
    them (where some distinct texts are not used), rows of equal text sharing one object."""
    host = _host_events(monkeypatch, path)
    for name in ("dims", "types", "concrete", "strides"):
        coded = host[name]
        if not len(coded):  # a trace without host events: an empty column, no codes
            continue
        assert isinstance(coded, events._Coded), name  # every chunk of these files is scanned
        assert coded.objects().dtype == object and len(coded) == len(coded.codes)
        for rows in (np.arange(len(coded)), np.arange(0, len(coded), 3)):
            texts, values = events._shared_values(coded[rows])
            expected_texts, expected_values = events._shared_values(coded.objects()[rows])
            assert texts.tolist() == expected_texts.tolist(), name
            assert values.tolist() == expected_values.tolist(), name
            for column in (texts, values):
                first = {}
                for code, value in zip(coded.codes[rows].tolist(), column.tolist(), strict=True):
                    assert first.setdefault(code, value) is value, name


def test_the_c_factorize_finds_equal_values_in_distinct_objects() -> None:
    values = [b"[1, 2]", None, bytes(bytearray(b"[1, 2]")), b"", b"[3]", None, b""]
    codes, distinct = _scan.factorize(values)
    assert np.frombuffer(codes, np.int64).tolist() == [0, -1, 0, 1, 2, -1, 1]
    assert distinct == [b"[1, 2]", b"", b"[3]"]
    with pytest.raises(TypeError):
        _scan.factorize([[1]])
    with pytest.raises(TypeError):
        _scan.factorize((b"a",))
