"""The reference reading of a trace, the oracle of the trace reader's tests
(``tests/test_hostile.py``) and benchmarks (``bench/fuzz_load.py``, ``bench/gpu_check.py``).

``read_trace`` streams a file in chunks through the compiled reader (or msgspec, chunk by
chunk); this reads the whole text at once, by ``json.loads``'s rules and msgspec's, and builds
the tables with the reader's own decoder and table builder, so that a difference between the two
is a difference in the streaming. Kept out of the package: nothing a user runs reads a trace
this way.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import msgspec

from jupyter_brrr.trace import events
from jupyter_brrr.trace.events import Trace, TraceError

__all__ = ["read_reference"]


def read_reference(data: bytes) -> Trace:
    """The reference reading of a trace held in memory: the whole text checked by
    ``json.loads`` (which refuses what is not JSON, and malformed UTF-8 anywhere), with
    msgspec's stricter rules where they differ (no NaN or Infinity literal, no lone surrogate
    escape), then decoded whole by msgspec, one piece, without the compiled reader or chunks.
    ``read_trace`` must give the same tables, or also fail."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        text = data.decode(json.detect_encoding(data))
        # Integers as floats: the values are only checked here (msgspec reads them below), and
        # an int of thousands of digits is JSON, which int() would refuse.
        doc = json.loads(text, parse_constant=_refuse_constant, parse_int=float)
        _refuse_lone_surrogates(doc)
        meta = events._FILE_DECODER.decode(text.encode())
    except (ValueError, RecursionError, msgspec.DecodeError) as error:
        raise TraceError(f"<reference>: {type(error).__name__}: {error}") from None
    meta.deviceProperties = events._check_devices(meta.deviceProperties)
    columns = events._Columns()
    columns.add(meta.traceEvents)
    return events._build(meta, columns, None)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _refuse_lone_surrogates(doc: Any) -> None:
    """Raise ValueError on a string with a lone surrogate (json.loads takes one, msgspec not)."""
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and re.search("[\ud800-\udfff]", value):
            raise ValueError("a lone surrogate")
