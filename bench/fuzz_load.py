"""Hostile traces through ``jupyter_brrr.load``: mutated real traces, each checked against the
reference reading.

    python bench/fuzz_load.py [--cases 10000] [--seed 1] [--batch 250] [--timeout 20] [--workers 1]
    python bench/fuzz_load.py --case 1234 [--seed 1]      # one case again, with its details

Each case is a small real trace (the ``*.json.gz`` files of ``tests/data`` and
``bench/data/h200/zoo`` under 64 kB) changed by one to three mutations: bytes replaced, cut,
repeated or inserted (among them tokens that have broken readers: lone surrogate escapes,
malformed UTF-8, NaN, 1e400, a nested ``"traceEvents"``, Kineto's separator, deep brackets,
control characters); a field of an event or of the device properties given a hostile value (an
object, a huge or negative number, a string, 3,000 levels of nesting, a 100 kB name); the
events written again compact, indented or in Kineto's layout, gzipped, with a UTF-8 BOM or as
UTF-16. Each case is read in blocks of a random size (64 B to 1 MB), so that cuts and
separators fall anywhere. It is written to a file and loaded by ``jupyter_brrr.load``; the
outcome is compared with the reference path, ``tests/reference_reader.py`` (``json.loads`` with
msgspec's stricter rules, then msgspec on the whole text: no compiled reader, no chunks):

- crash: ``load`` raised anything but ``TraceError``, or the process died;
- hang: a case ran longer than ``--timeout`` seconds;
- differs: ``load`` gave a report where the reference failed or the other way round, or the
  event tables of ``read_trace`` differ from the reference's;
- broken report: the report's JSON (strict: no NaN), ``Report.from_json`` of it, its text or
  its ``repr`` failed.

Cases run in child processes, ``--batch`` at a time, so that a crash or a hang is caught and
named (with the case number, to run again with ``--case``). Prints the counts of outcomes and
every failure; exits 1 if there was any.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for folder in ("tests/data", "tests/data/advice", "bench/data/h200/zoo")
    for p in (ROOT / folder).glob("*.json.gz")
    if p.stat().st_size < 64_000
)
BLOCK_SIZES = (64, 257, 1000, 4096, 65_536, 1 << 20)

# Tokens that have broken readers, inserted as they are into the text.
TOKENS = [
    b"\\ud800", b"\\udc00", b"\\ud83d\\ude00", b"\\ud800\\u0041", b"\\u0000", b"\\x", b"\\",
    b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\x00", b"\x1b",
    b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1" * 5000, b"-0", b"1.",
    b'"traceEvents": [', b'"traceEvents":[{"ph":"X","cat":"kernel","ts":1,"dur":1}],',
    b"},{", b"}, {", b"\n  },\n  {", b"\n  ]", b"[" * 300, b"[" * 3000, b"{" * 50,
    b"\xef\xbb\xbf", b",", b"]", b"}", b'"', b":", b"null", b"true", b'{"a":', b",,",
]  # fmt: skip
ALPHABET = b'{}[]",:\\ \n\t\r0123456789.-+eEtrufalsnX\x00\x1f\x7f\xff\xc3\xa9'

# Values given to a field of an event (or of a device's properties).
HOSTILE_VALUES = [
    lambda: {}, lambda: {"a": [1, {"b": None}]}, lambda: [], lambda: [1, [2, [3]]],
    lambda: "12.5", lambda: "x", lambda: "", lambda: True, lambda: False, lambda: None,
    lambda: -1, lambda: 0, lambda: 2**63, lambda: 2**64 + 1, lambda: -(2**63) - 1,
    lambda: 10**30, lambda: 10**400, lambda: 1e300, lambda: -1e300, lambda: 0.5, lambda: 5e-324,
    lambda: "\x1b]0;pwned\x07\x1b[2J", lambda: "\ud800", lambda: "a\u202eb\u0000c",
    lambda: "<b>&amp;</b>", lambda: "x" * 100_000, lambda: _nested(100), lambda: "_deep_",
]  # fmt: skip
# 3,000 levels of nesting, put into the text after it is written (json's encoder would recurse).
DEEP = (b'"_deep_"', b"[" * 3000 + b"]" * 3000)
EVENT_FIELDS = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id")
ARGS_FIELDS = (
    *("External id", "correlation", "stream", "device", "bytes", "Input Dims"),
    *("Input type", "Concrete Inputs", "Total Allocated", "Device Id", "grid"),
)
DEVICE_FIELDS = ("id", "name", "totalGlobalMem", "numSms", "computeMajor")


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


# --- making a case ---------------------------------------------------------------------------------


def kineto_layout(doc: dict, rng: random.Random) -> bytes:
    """The document in Kineto's layout: members at two spaces, one event per object."""
    members = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items() if k != "traceEvents"]
    if "traceEvents" in doc:
        events = doc["traceEvents"]
        if isinstance(events, list):
            body = ",\n".join("  " + json.dumps(e, indent=2).replace("\n", "\n  ") for e in events)
            text = '  "traceEvents": [\n' + body + "\n  ]"
        else:
            text = f'  "traceEvents": {json.dumps(events)}'
        members.insert(rng.randrange(len(members) + 1), text)
    return ("{\n" + ",\n".join(members) + "\n}\n").encode("utf-8", "surrogatepass").replace(*DEEP)


def relayout(doc: dict, rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        return kineto_layout(doc, rng)
    if choice == 1:
        text = json.dumps(doc, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)
    elif choice == 2:
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    else:
        text = json.dumps(doc, indent=rng.choice((1, 2, 4, "\t")), sort_keys=rng.random() < 0.3)
    return text.encode("utf-8", "surrogatepass").replace(*DEEP)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    text = bytearray(data)
    at = rng.randrange(len(text) + 1)
    action = rng.randrange(7)
    if action == 0 and text:
        text[min(at, len(text) - 1)] = rng.choice(ALPHABET)
    elif action == 1:
        del text[at : at + rng.choice((1, 2, 5, 40, 1000))]
    elif action == 2:
        text[at:at] = bytes(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 6)))
    elif action == 3:
        text[at:at] = rng.choice(TOKENS)
    elif action == 4:
        start = rng.randrange(len(text) + 1)
        text[at:at] = text[start : start + rng.randrange(1, 4000)]
    elif action == 5:
        del text[at:]  # truncated
    else:
        # A token where Kineto's separator is: the cut would fall there.
        separator = text.find(b"\n  },\n  {", at)
        if separator >= 0:
            text[separator + rng.randrange(10) : separator] = rng.choice(TOKENS)
    return bytes(text)


def mutate_doc(doc: dict, rng: random.Random) -> None:
    events = doc.get("traceEvents")
    action = rng.randrange(10)
    if action <= 4 and isinstance(events, list) and events:
        event = rng.choice(events)
        if not isinstance(event, dict):
            return
        if action <= 2:
            event[rng.choice(EVENT_FIELDS)] = rng.choice(HOSTILE_VALUES)()
        else:
            args = event.setdefault("args", {})
            if isinstance(args, dict):
                args[rng.choice(ARGS_FIELDS)] = rng.choice(HOSTILE_VALUES)()
    elif action == 5:
        devices = doc.get("deviceProperties")
        if isinstance(devices, list) and devices and isinstance(devices[0], dict):
            devices[0][rng.choice(DEVICE_FIELDS)] = rng.choice(HOSTILE_VALUES)()
        else:
            doc["deviceProperties"] = rng.choice(HOSTILE_VALUES)()
    elif action == 6 and isinstance(events, list):
        # A nested "traceEvents" that must not be read, placed before the real one.
        nested = {"traceEvents": copy.deepcopy(events[: rng.randrange(1, 5)])}
        doc.pop("traceEvents")
        doc["distributedInfo"] = nested
        doc["traceEvents"] = events
    elif action == 7 and isinstance(events, list) and events:
        at = rng.randrange(len(events))
        if rng.random() < 0.5:
            events.insert(at, copy.deepcopy(events[rng.randrange(len(events))]))
        else:
            del events[at : at + rng.randrange(1, 20)]
    elif action == 8:
        doc[rng.choice(("traceEvents", "displayTimeUnit", "traceName", "schemaVersion"))] = (
            rng.choice(HOSTILE_VALUES)()
        )
    elif isinstance(events, list) and events:
        event = rng.choice(events)
        if isinstance(event, dict):
            event["name"] = rng.choice(
                ("x" * rng.choice((1000, 1_000_000)), "\x1b[31mred\x1b[0m\r\n\t", "ä" * 50)
            )


def make_case(index: int, seed: int) -> tuple[bytes, int, list[str]]:
    """Case ``index``: its bytes, the block size to read it in, and what was done to it."""
    rng = random.Random(seed * 1_000_003 + index)
    source = rng.choice(SOURCES)
    raw = gzip.decompress(source.read_bytes())
    steps = [source.name]
    doc = None
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.45:
            if doc is None:
                with contextlib.suppress(ValueError, RecursionError):
                    doc = json.loads(raw)
            if isinstance(doc, dict):
                mutate_doc(doc, rng)
                raw = relayout(doc, rng)
                steps.append("field or layout")
                continue
        raw = mutate_bytes(raw, rng)
        doc = None
        steps.append("bytes")
    wrap = rng.randrange(10)
    if wrap == 0:
        raw, steps = gzip.compress(raw, compresslevel=1), [*steps, "gzip"]
    elif wrap == 1:
        raw, steps = b"\xef\xbb\xbf" + raw, [*steps, "BOM"]
    elif wrap == 2:
        with contextlib.suppress(UnicodeError):
            raw, steps = raw.decode().encode("utf-16"), [*steps, "UTF-16"]
    return raw, rng.choice(BLOCK_SIZES), steps


# --- checking a case ---------------------------------------------------------------------------------


def check_case(data: bytes, block_bytes: int, path: Path) -> tuple[str, str]:
    """(outcome, detail): "loaded" or "refused" when load agrees with the reference, else
    "crash", "differs" or "broken report"."""
    import pandas as pd
    from reference_reader import read_reference  # tests/: the tests' oracle

    import jupyter_brrr
    from jupyter_brrr.trace import events
    from jupyter_brrr.trace.events import TraceError
    from jupyter_brrr.views import text

    events._BLOCK_BYTES = block_bytes
    path.write_bytes(data)
    try:
        reference = read_reference(data)
    except TraceError:
        reference = None
    try:
        report = jupyter_brrr.load(path)
    except TraceError as error:
        if reference is not None:
            return "differs", f"load refused what the reference reads: {error}"
        return "refused", str(error)
    except Exception:
        return "crash", traceback.format_exc(limit=4)
    if reference is None:
        return "differs", "load gave a report where the reference refused the file"
    trace = events.read_trace(path)
    for name in ("ops", "kernels", "copies", "runtime", "annotations", "memory"):
        try:
            pd.testing.assert_frame_equal(getattr(trace, name), getattr(reference, name))
        except AssertionError as error:
            return "differs", f"{name}: {str(error)[:500]}"
    if trace.devices != reference.devices or trace.metadata != reference.metadata:
        return "differs", "device properties or metadata"
    try:
        document = report.to_json()
        jupyter_brrr.Report.from_json(document)
        text.render(report)
        repr(report)
    except Exception:
        return "broken report", traceback.format_exc(limit=4)
    return "loaded", ""


def run_child(start: int, count: int, seed: int) -> None:
    """Cases start .. start + count - 1, one JSON line before and after each (the parent names a
    case that crashed or hung by the last "start" line it saw)."""
    import warnings

    warnings.simplefilter("ignore")  # a hostile number may make numpy warn; not a failure here
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.json"
        for index in range(start, start + count):
            data, block, steps = make_case(index, seed)
            print(json.dumps({"start": index}), flush=True)
            outcome, detail = check_case(data, block, path)
            line = {"case": index, "outcome": outcome, "detail": detail, "steps": steps}
            print(json.dumps(line), flush=True)


def run_cases(cases: int, seed: int, batch: int, timeout: float, workers: int = 1) -> list[dict]:
    """All the cases, in child processes (``workers`` at once); one result per case."""
    starts = range(0, cases, batch)
    with ThreadPoolExecutor(workers) as pool:
        batches = pool.map(
            lambda start: run_batch(start, min(start + batch, cases), seed, timeout), starts
        )
        return [result for results in batches for result in results]


def run_batch(next_case: int, end: int, seed: int, timeout: float) -> list[dict]:
    """Cases ``next_case`` .. ``end`` - 1 in child processes, one after another."""
    results: list[dict] = []
    while next_case < end:
        count = end - next_case
        command = [sys.executable, __file__, "--child", f"{next_case},{count}", "--seed", str(seed)]
        started = None
        deadline = time.monotonic() + timeout * count
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:
            assert child.stdout is not None
            for line in child.stdout:
                message = json.loads(line)
                if "start" in message:
                    started = message["start"]
                    deadline = time.monotonic() + timeout
                else:
                    results.append(message)
                    started = None
                if time.monotonic() > deadline:
                    break
            hung = child.poll() is None and started is not None
            if hung:
                child.kill()
            returncode = child.wait()
        done = {r["case"] for r in results}
        if started is None and not set(range(next_case, next_case + count)) <= done:
            raise RuntimeError(f"the fuzzing child failed on its own (exit {returncode})")
        if started is not None:
            kind = "hang" if hung else "crash"
            detail = f"the process {'hung' if hung else f'died (exit {returncode})'}"
            results.append({"case": started, "outcome": kind, "detail": detail, "steps": []})
            next_case = started + 1
        else:
            next_case += count
    return results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds one case may take")
    parser.add_argument("--workers", type=int, default=1, help="child processes at once")
    parser.add_argument("--case", type=int, help="run one case in this process and show it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the reference reader
    if args.child:
        start, count = map(int, args.child.split(","))
        run_child(start, count, args.seed)
        return 0
    if args.case is not None:
        data, block, steps = make_case(args.case, args.seed)
        print(f"case {args.case}: {' + '.join(steps)}, {len(data):,} bytes, blocks of {block}")
        with tempfile.TemporaryDirectory() as folder:
            outcome, detail = check_case(data, block, Path(folder) / "case.json")
        print(outcome, detail, sep="\n")
        return 0
    began = time.perf_counter()
    results = run_cases(args.cases, args.seed, args.batch, args.timeout, args.workers)
    elapsed = time.perf_counter() - began
    counts = Counter(r["outcome"] for r in results)
    failures = [r for r in results if r["outcome"] not in ("loaded", "refused")]
    print(
        f"{len(results):,} cases (seed {args.seed}) in {elapsed:.0f} s, {os.cpu_count()} CPUs: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))
    )
    for failure in failures:
        print(f"case {failure['case']}: {failure['outcome']} ({' + '.join(failure['steps'])})")
        print("   ", failure["detail"].strip().replace("\n", "\n    "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
