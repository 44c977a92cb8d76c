"""Types of the compiled trace reader (``_scan.c``; its source says what each value holds)."""

from typing import Any

FIELD_COUNT: int
NUMBER_COUNT: int

def scan(buffer: bytes | bytearray, start: int, stop: int, /) -> Any | None:
    """The events of the JSON array ``buffer[start:stop]`` as (count, codes, numbers, uniques),
    or None where the chunk holds what the reader does not know."""

def split(
    buffer: bytes | bytearray, start: int, stop: int, state: int, first: bool, /
) -> tuple[int, int, int, int]:
    """Where the values of a JSON container end in ``buffer[start:stop]``: (cut, close, state,
    bad)."""

def merger(kinds: tuple[tuple[int, ...], ...], /) -> object:
    """A merger of scanned chunks into the columns of each kind: ``kinds[k]`` the field
    numbers kind ``k`` keeps (a coded field's index, or ``FIELD_COUNT`` + a number's)."""

def merge(merger: object, chunk: tuple, kind_of_pair: bytes, /) -> None:
    """A scanned chunk's events sorted into kinds by ``kind_of_pair`` (int8, one per pair of
    the chunk's phase and category codes, the missing ones last), after the chunks before."""

def take(merger: object, /) -> tuple[tuple[tuple[bytearray, ...], ...], int, float]:
    """The kinds' columns merged since the last take, and the count and least time of the
    other timed events."""

def texts(merger: object, /) -> tuple[list[bytes], ...]:
    """The distinct texts of each coded field, by merged code."""

def nest(
    thread: bytes | bytearray, end: bytes | bytearray, flags: bytes | bytearray, slack: float, /
) -> tuple[bytearray, bytearray, bytearray, bytearray, bytearray, bytearray]:
    """Of host events sorted by (thread, start, longest first), int64 thread codes and float64
    ends, a flags byte each: (parent, nearest ancestor with flag bit 0, 1, 2, depth, top) as
    int64 columns, -1 for none."""

def factorize(values: list[Any], /) -> tuple[bytearray, list[Any]]:
    """The int64 code of each value (-1 for None) and the distinct values in order of first
    appearance, as ``pandas.factorize``."""
