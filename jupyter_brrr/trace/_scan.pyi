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
