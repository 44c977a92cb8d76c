"""A/B: the same code as eager, torch.compile and a CUDA graph, timed honestly, checked, explained.

The run, for each variant in turn (eager first, the baseline):

1. prepare: compile (the first call; its time is ``compile_s``) or warm up on a side stream and
   capture a CUDA graph (``compile_s`` is that time);
2. warm up ``warmup`` calls; the last one's output is compared with eager's (eager's last two
   are compared with each other first: code whose own output changes from run to run, random
   numbers or state, cannot be checked);

then all variants are timed together, interleaved, for about ``budget_s`` seconds each
(``timing.py``); then each is profiled once more, so that the comparison can say why one is
faster: the span split, kernel count, launches, and the ops that disappeared into fused kernels.

The verdicts:
- a speed-up is the median ratio of eager's block to the variant's block of the same round, with
  the interquartile range of those ratios (``timing.paired_speedup``);
- a torch.compile variant whose profiled run did eager's work exactly (the same kernels in the
  same number of launches on a GPU, the same torch ops on a CPU) and ran no compiled region fell
  back to eager as a whole: "fallback", with Dynamo's reason, and no speed-up (its difference from
  eager is noise between identical work, and the notes say how large);
- notes warn when a variant's blocks sat at two levels (``spread.levels``), and when eager's
  blocks disagree with the span of the report the A/B belongs to by more than their spreads.

A variant that fails is reported with its reason and line, and the others go on. ``cancel`` (a
``threading.Event``) stops the A/B between runs; Ctrl-C (KeyboardInterrupt) stops it too, is
re-raised, and leaves no profiler running.

With a ``snapshot`` (``snapshot.py``) of the state the code can change, each checked call (eager's
last two warm-up calls, each variant's last) starts from that state, so that a stateful cell's
outputs can be compared, and the state is put back when the A/B ends, however it ends.

Warnings raised during the A/B's own runs (torch's TF32 hint, Dynamo's "Profiler function ...
will be ignored") are not printed into the notebook: the first, plain run showed the code's
warnings already. They are listed in the result's notes instead. The A/B refuses to start while
another torch profiler runs (``ProfilerInUseError``): its runs would flood that profiler.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..analysis import spread
from ..analysis.spread import (
    HOST_LEVEL_CHANGE,
    host_findings,
    host_slowdown,
    round_hosts,
    steady_rounds,
)
from ..capture import clocks
from ..capture.clocks import fastest_host_loop_s, host_loop_s
from ..report.report import json_safe
from ..report.shown import Shown
from ..schema.report import SPLIT_PARTS
from . import timing
from .correctness import Check, compare_outputs, snapshot
from .stateful import stateful_findings, uses_random
from .variants import (
    VARIANT_KINDS,
    CompileEvents,
    DynamoWatch,
    Target,
    Variant,
    VariantSpec,
    describe_error,
    error_line,
    make_variant,
    parse_variants,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..report.report import Report
    from .snapshot import Snapshot

DEFAULT_BUDGET_S = 2.0
DEFAULT_WARMUP = 3
# Eager's blocks and the report's timed runs differ by more than their spreads and this: one of
# the two was measured in another state of the machine.
BASELINE_GAP = 0.05
# Names of the ops that a region compiled by torch.compile shows in a profile.
_COMPILED_REGION = ("Torch-Compiled Region", "CompiledFunction")
# The progress step and message of a variant's first calls, by kind (others just warm up).
_PREPARE_STEPS = {
    "compile": ("compiling", "compiling (first call)"),
    "graph": ("capturing", "warming up on a side stream and capturing"),
}


class _Cancelled(BaseException):  # BaseException: no ``except Exception`` on the way may eat it
    pass


@dataclass
class Progress:
    """Where an A/B is. ``step`` is "compiling", "capturing", "warming up", "timing",
    "profiling" or "done"; ``k`` of ``n`` the variant (1-based); ``new_step`` is True on the
    first report of a step (printers print those; bars follow every report)."""

    step: str
    variant: str | None
    k: int
    n: int
    fraction: float
    runs: int
    message: str
    new_step: bool = True


@dataclass
class VariantResult:
    """One variant's numbers. Times in seconds, per call; ``speedup`` against eager."""

    name: str
    kind: str
    mode: str | None = None
    times_s: list[float] = field(default_factory=list)  # per-call time of each timed block
    block: int = 0  # calls per timed block (after the first round, which is a pilot)
    timed_runs: int = 0  # calls in the timed blocks
    runs: int = 0  # every call: compile, warm-up, timed, profiled
    median_s: float | None = None
    iqr_s: float | None = None
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    verdict: str | None = None  # baseline, faster, slower, noise, fallback, failed, mismatch
    fallback_reason: str | None = None  # why torch.compile ran eager's code (verdict fallback)
    paired_rounds: int = 0  # rounds whose blocks the speed-up pairs with eager's
    correct: bool | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    check_detail: str = ""
    compile_s: float | None = None
    split: dict | None = None
    kernel_count: int | None = None
    launches: int | None = None
    graph_breaks: list[str] = field(default_factory=list)
    recompiles: int | None = None
    recompile_reasons: list[str] = field(default_factory=list)
    gain_from: str | None = None  # the split part whose time fell most
    why: str | None = None  # where the difference came from, in words
    error: str | None = None
    error_line: str | None = None
    notes: list[str] = field(default_factory=list)
    report: Report | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return json_safe(
            {
                "name": self.name,
                "median_s": self.median_s,
                "iqr_s": self.iqr_s,
                "runs": self.runs,
                "speedup": self.speedup,
                "speedup_low": self.speedup_low,
                "speedup_high": self.speedup_high,
                "verdict": self.verdict,
                "fallback_reason": self.fallback_reason,
                "paired_rounds": self.paired_rounds,
                "correct": self.correct,
                "max_abs_err": self.max_abs_err,
                "max_rel_err": self.max_rel_err,
                "compile_s": self.compile_s,
                "split": self.split,
                "kernel_count": self.kernel_count,
                "launches": self.launches,
                "graph_breaks": list(self.graph_breaks),
                "recompiles": self.recompiles,
                "error": self.error,
                "error_line": self.error_line,
            }
        )


@dataclass(repr=False)  # repr, display and lines: the views draw it (Shown)
class ABResult(Shown):
    """The comparison. ``variants`` baseline (eager) first; ``result["compile"]`` picks one;
    ``table`` is a DataFrame; ``to_dict()`` is what goes into ``Report.ab``. Its text and HTML
    come from the views (``views/ab_text.py``)."""

    variants: list[VariantResult]
    notes: list[str] = field(default_factory=list)
    baseline: str = "eager"
    fused_ops: dict[str, list[str]] = field(default_factory=dict)
    runs_total: int = 0
    cancelled: bool = False
    device: str = "CPU"
    budget_s: float = DEFAULT_BUDGET_S
    rounds: int = 0
    elapsed_s: float = 0.0
    stateful: list[str] = field(default_factory=list)
    # The host CPU's speed before each round and after the last (clocks.host_loop_s), and
    # their median over the fastest reading of this process (1 = the host at its best):
    # launch-bound eager time, and a speed-up over it, follow the host's speed.
    host_loop_s: list[float] = field(default_factory=list)
    host_slowdown: float | None = None
    # The rounds the medians and speed-ups use: every round, or those at the host's best speed.
    rounds_used: int = 0
    restored: Any = None  # what the snapshot put back (``snapshot.Restored``), when there was one

    def __getitem__(self, name: str) -> VariantResult:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(f"no variant {name!r}; variants: {', '.join(v.name for v in self.variants)}")

    @property
    def reports(self) -> dict[str, Report]:
        """The profiled run of each variant."""
        return {v.name: v.report for v in self.variants if v.report is not None}

    @property
    def table(self) -> pd.DataFrame:
        """One row per variant: timing, speed-up, correctness, compile time, split, counts."""
        import pandas as pd

        rows = []
        for v in self.variants:
            split = v.split or {}
            rows.append(
                {
                    "variant": v.name,
                    "median_s": v.median_s,
                    "iqr_s": v.iqr_s,
                    "speedup": v.speedup,
                    "speedup_low": v.speedup_low,
                    "speedup_high": v.speedup_high,
                    "verdict": v.verdict,
                    "fallback_reason": v.fallback_reason,
                    "correct": v.correct,
                    "max_abs_err": v.max_abs_err,
                    "max_rel_err": v.max_rel_err,
                    "compile_s": v.compile_s,
                    **{f"{part}_s": split.get(f"{part}_s") for part in SPLIT_PARTS},
                    "kernel_count": v.kernel_count,
                    "launches": v.launches,
                    "graph_breaks": len(v.graph_breaks),
                    "recompiles": v.recompiles,
                    "gain_from": v.gain_from,
                    "runs": v.runs,
                    "error": v.error,
                }
            )
        return pd.DataFrame(rows).set_index("variant")

    def to_dict(self) -> dict:
        """The JSON-safe form stored in ``Report.ab`` (no NaN: missing numbers are None)."""
        return json_safe(
            {
                "variants": [v.to_dict() for v in self.variants],
                "notes": list(self.notes),
                "baseline": self.baseline,
                "fused_ops": {k: list(v) for k, v in self.fused_ops.items()},
                "runs_total": self.runs_total,
            }
        )


def compare(
    fn: Callable[..., Any],
    *args: Any,
    variants: Any = ("compile", "graph"),
    budget_s: float = DEFAULT_BUDGET_S,
    warmup: int = DEFAULT_WARMUP,
    rounds: int | None = None,
    cpu: bool = False,
    profile: bool = True,
    check: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[Progress], None] | None = None,
    max_runs: int | None = None,
    **kwargs: Any,
) -> ABResult:
    """Compare ``fn(*args, **kwargs)`` as eager, torch.compile and a CUDA graph.

    ``variants``: names (``"compile"``, ``"compile:reduce-overhead"``, ``"graph"``; a
    comma-separated string works too), ``(name, callable)`` pairs for your own variants (called
    with the same arguments), or a mapping of them. Eager is always the baseline.
    ``budget_s``: timing per variant, in seconds. ``warmup``: calls per variant after compiling
    or capturing, before timing. ``rounds`` fixes the number of interleaved timing rounds.
    ``cpu``: time with the host clock and profile CPU ops only. ``profile``: profile each
    variant once more to explain the difference. ``rtol``/``atol`` override the per-dtype
    tolerances of the output check. ``cancel``: set it (from another thread, or from
    ``progress``) to stop between runs; the result then has ``cancelled=True``. ``max_runs``:
    the most times ``fn`` may run in all (``estimate_runs`` gives the bound for a call time);
    a variant that would run more is timed in shorter blocks.

    ``fn`` runs many times (the result's ``runs_total`` says how many): it should not change
    state (train, append, write files).
    """
    target = Target.of(fn, args, kwargs)
    return run(
        target,
        variants,
        budget_s=budget_s,
        warmup=warmup,
        rounds=rounds,
        cpu=cpu,
        profile=profile,
        check=check,
        rtol=rtol,
        atol=atol,
        cancel=cancel,
        progress=progress,
        max_runs=max_runs,
    )


def estimate_runs(
    variants: Any,
    per_call_s: float | None,
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    warmup: int = DEFAULT_WARMUP,
    rounds: int | None = None,
    profile: bool = True,
) -> int:
    """The most times an A/B runs the code, announced from one run's time ``per_call_s`` (the
    report's span; 1 ms when unknown): pass it to ``run`` or ``compare`` as ``max_runs`` and
    they stay under it. Each variant may make ``timing.max_timed_calls`` timed calls (its
    budget at ``timing.SPEEDUP_ALLOWANCE`` times that speed) besides its fixed runs (compiling
    or capturing, warm-up, the profiled run); a variant faster still gets shorter blocks, not
    more calls. The real count is usually lower: a variant at eager's speed makes about
    ``budget_s / per_call_s`` timed calls."""
    specs = parse_variants(variants)
    timed = timing.max_timed_calls(per_call_s, budget_s, rounds)
    return sum(_fixed_runs(spec, warmup, profile) + timed for spec in specs)


def _fixed_runs(spec: VariantSpec, warmup: int, profile: bool) -> int:
    """Runs of a variant besides its timed blocks: preparing, warming up, the profiled run."""
    return VARIANT_KINDS[spec.kind].prepare_runs + warmup + (1 if profile else 0)


def _timed_caps(
    specs: list[VariantSpec],
    max_runs: int | None,
    warmup: int,
    profile: bool,
    rounds: int | None,
) -> dict[str, int] | None:
    """Each variant's share of ``max_runs`` for its timed calls (equal shares once the fixed
    runs are set aside, as ``estimate_runs`` counts them); None without a bound."""
    if max_runs is None:
        return None
    fixed = sum(_fixed_runs(spec, warmup, profile) for spec in specs)
    share = (max_runs - fixed) // len(specs)
    least = 2 * (rounds if rounds is not None else timing.MIN_ROUNDS)
    if share < least:
        raise ValueError(
            f"max_runs={max_runs} is too few for this A/B: compiling, capturing, warm-up and "
            f"profiling take {fixed} runs, and each of the {len(specs)} variants needs at least "
            f"{least} timed calls; allow {fixed + least * len(specs)} or more."
        )
    return {spec.name: share for spec in specs}


def run(
    target: Target,
    variants: Any,
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    warmup: int = DEFAULT_WARMUP,
    rounds: int | None = None,
    cpu: bool = False,
    profile: bool = True,
    check: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[Progress], None] | None = None,
    max_runs: int | None = None,
    report: Report | None = None,
    snapshot: Snapshot | None = None,
) -> ABResult:
    """The A/B of a ``Target`` (``compare`` for functions, the magic and controls for cells).

    ``max_runs``: the most runs in all, as ``estimate_runs`` announced them. ``report``: the
    report of the same code that the A/B belongs to; its timed span is checked against eager's.
    ``snapshot``: the state the code can change (``snapshot.Snapshot``), put back before each
    checked call and when the A/B ends.
    """
    import torch

    if budget_s <= 0 or not math.isfinite(budget_s):
        raise ValueError(f"budget_s must be a positive number of seconds (got {budget_s}).")
    if warmup < 1:
        raise ValueError(
            f"warmup must be 1 or more (got {warmup}): the check and the timing plan use it."
        )
    from ..capture.run import check_can_profile

    specs = parse_variants(variants)
    check_can_profile()  # before the first run: never under another profiler
    caps = _timed_caps(specs, max_runs, warmup, profile, rounds)
    gpu = not cpu and torch.cuda.is_available()
    reset = snapshot.reset if snapshot is not None and snapshot.complete else None
    run_state = _Run(target, specs, gpu, warmup, check, rtol, atol, cancel, progress, reset)
    run_state.caps = caps
    run_state.report = report
    started = clocks.now()
    result: ABResult | None = None
    restored = None
    with _own_warnings() as caught:
        try:
            with DynamoWatch(target.home_files) as watch:
                run_state.watch = watch
                try:
                    run_state.prepare_all()
                    run_state.time_all(budget_s, rounds)
                    if profile:
                        run_state.profile_all()
                except _Cancelled:
                    run_state.cancelled = True
            run_state.tell("done", None, 1.0, "done")
            result = run_state.result(budget_s, clocks.now() - started)
        finally:
            run_state.release()
            if snapshot is not None:
                restored = snapshot.restore()  # after release: no graph holds the tensors
    result.restored = restored
    result.notes.extend(_state_notes(restored, snapshot, reset is not None, result.runs_total))
    result.notes.extend(_warning_notes(caught))
    _remove_local_paths(result)
    return result


def _local_prefixes() -> list[tuple[str, str]]:
    """Folders of this machine that error messages and Dynamo's reasons can name (installed
    packages, the Python, the home folder), and what a shared notebook shows instead."""
    import site
    import sys

    prefixes = [
        (p, "<site-packages>") for p in (*site.getsitepackages(), site.getusersitepackages())
    ]
    prefixes += [(sys.prefix, "<python>"), (sys.base_prefix, "<python>")]
    prefixes.append((os.path.expanduser("~"), "~"))
    # Longest first, so that a package folder inside the home folder is named as a package's.
    return sorted(
        ((p.rstrip(os.sep), name) for p, name in prefixes if p and len(p.rstrip(os.sep)) > 1),
        key=lambda item: -len(item[0]),
    )


def local_paths_removed(text: str, prefixes: list[tuple[str, str]] | None = None) -> str:
    """``text`` with this machine's folders replaced (``~/data.csv``, ``<site-packages>/x.py``):
    what goes into a report is shared with the notebook."""
    for prefix, name in prefixes if prefixes is not None else _local_prefixes():
        text = text.replace(prefix, name)
    return text


def _remove_local_paths(result: ABResult) -> None:
    prefixes = _local_prefixes()

    def clean(text: str | None) -> str | None:
        return None if text is None else local_paths_removed(text, prefixes)

    result.notes = [clean(n) or "" for n in result.notes]
    for v in result.variants:
        v.error, v.error_line, v.why = clean(v.error), clean(v.error_line), clean(v.why)
        v.check_detail = clean(v.check_detail) or ""
        v.graph_breaks = [clean(b) or "" for b in v.graph_breaks]
        v.recompile_reasons = [clean(r) or "" for r in v.recompile_reasons]
        v.notes = [clean(n) or "" for n in v.notes]


def _state_notes(restored: Any, snapshot: Snapshot | None, reset: bool, runs: int) -> list[str]:
    if snapshot is None or restored is None:
        return []
    notes = []
    if reset:
        notes.append(
            "Each checked call (eager's last two warm-up calls, each variant's last) started "
            "from the state the first run left, so that the outputs of code that changes state "
            "can be compared."
        )
    if (restored.changed or restored.random_state) and restored.exact:
        notes.append(
            f"State: the A/B's {runs:,} runs changed {restored.describe()}; all of it was put "
            "back as the first run left it (the same objects, so other references see it too), "
            "and checked against the copy after."
        )
    elif restored.changed or restored.random_state:
        notes.append(
            f"State: the A/B's {runs:,} runs changed {restored.describe()}; it was put back as "
            "the first run left it, but not all of it holds:"
        )
    elif restored.exact:
        notes.append(
            f"State: none of {snapshot.survey.describe()} had changed after the A/B's "
            f"{runs:,} runs."
        )
    for problem in restored.problems():
        notes.append(f"{problem[0].upper()}{problem[1:]}.")
    return notes


# --- the A/B's own warnings -------------------------------------------------------------------------

_QUIET_LOCK = threading.Lock()
_QUIET_THREADS: dict[int, list[Any]] = {}  # thread id -> what its runs warned or logged
_QUIET_SAVED: list[Any] = []
_QUIET_HANDLERS: list[logging.Handler] = []


def _show_unless_ours(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` while an A/B runs: a warning from a thread running an A/B is
    kept; any other (the user's other cells, in the main thread) is shown as before."""
    caught = _QUIET_THREADS.get(threading.get_ident())
    if caught is not None:
        caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))
        return
    shown = _QUIET_SAVED[0] if _QUIET_SAVED else warnings._showwarning_orig  # type: ignore[attr-defined]
    shown(message, category, filename, lineno, file, line)


class _LogUnlessOurs(logging.Filter):
    """On the handlers that print log records (torch's, the root's): a warning that torch
    logs from a thread running an A/B (Dynamo's "Profiler function ... will be ignored") is
    kept, not printed; errors and other threads' records pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        caught = _QUIET_THREADS.get(record.thread) if record.thread is not None else None
        # Debug and info records print only where the user asked for them (TORCH_LOGS).
        if caught is None or not logging.WARNING <= record.levelno < logging.ERROR:
            return True
        caught.append(record)
        return False


_LOG_FILTER = _LogUnlessOurs()


def _printing_handlers() -> list[logging.Handler]:
    """The handlers that can print torch's log records: torch gives many of its loggers a
    stream handler of their own (``torch._dynamo``, ``torch._inductor`` ...), plus the root's
    and logging's last resort."""
    handlers: dict[int, logging.Handler] = {}
    loggers = [logging.getLogger()]
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if (name == "torch" or name.startswith("torch.")) and isinstance(logger, logging.Logger):
            loggers.append(logger)
    for logger in loggers:
        for handler in logger.handlers:
            # Streams (the notebook's stderr), not files nor torch's structured trace.
            if type(handler) is logging.StreamHandler:
                handlers[id(handler)] = handler
    if logging.lastResort is not None:
        handlers[id(logging.lastResort)] = logging.lastResort
    return list(handlers.values())


@contextlib.contextmanager
def _own_warnings() -> Iterator[list[Any]]:
    """Keep the warnings and torch's log warnings of this thread's runs (the A/B's) out of the
    notebook, and collect them. Per thread, unlike ``warnings.catch_warnings``: the buttons run
    the A/B in a worker thread while the user may run other cells."""
    caught: list[Any] = []
    ident = threading.get_ident()
    with _QUIET_LOCK:
        if not _QUIET_THREADS:
            if warnings.showwarning is not _show_unless_ours:
                _QUIET_SAVED[:] = [warnings.showwarning]
                warnings.showwarning = _show_unless_ours
            _QUIET_HANDLERS[:] = _printing_handlers()
            for handler in _QUIET_HANDLERS:
                handler.addFilter(_LOG_FILTER)
        _QUIET_THREADS[ident] = caught
    try:
        yield caught
    finally:
        with _QUIET_LOCK:
            _QUIET_THREADS.pop(ident, None)
            if not _QUIET_THREADS:
                if warnings.showwarning is _show_unless_ours and _QUIET_SAVED:
                    warnings.showwarning = _QUIET_SAVED[0]
                for handler in _QUIET_HANDLERS:
                    handler.removeFilter(_LOG_FILTER)
                _QUIET_HANDLERS.clear()


def _warning_notes(caught: list[Any]) -> list[str]:
    """One note listing what the A/B's runs warned (deprecations of torch's internals left
    out: the plain run showed the code's own)."""
    counts: dict[str, int] = {}
    for item in caught:
        if isinstance(item, logging.LogRecord):
            text, kind = item.getMessage(), f"{item.name} logged"
        elif issubclass(item.category, (DeprecationWarning, PendingDeprecationWarning)):
            continue
        else:
            text, kind = str(item.message), item.category.__name__
        if not text.strip():
            continue
        key = f"{kind}: {text.strip().splitlines()[0][:300]}"
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    listed = "; ".join(
        f"{text}{f' ({n} times)' if n > 1 else ''}" for text, n in list(counts.items())[:5]
    )
    more = f" and {len(counts) - 5} more" if len(counts) > 5 else ""
    return [f"Warnings during the A/B's runs (not printed in the notebook): {listed}{more}."]


# --- the run ----------------------------------------------------------------------------------------


class _State:
    """One variant during the run."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.times: list[float] = []
        self.rounds_timed: list[int] = []  # the round of each of ``times``
        self.block = 0
        self.timed_runs = 0
        self.per_call: float | None = None
        self.check: Check | None = None
        self.error_text: str | None = None
        self.error_line: str | None = None
        self.events = CompileEvents()
        self.report: Report | None = None
        self.notes: list[str] = []

    @property
    def name(self) -> str:
        return self.variant.name

    @property
    def ok(self) -> bool:
        return self.error_text is None

    def fail(self, error: BaseException, home_files: frozenset[str]) -> None:
        self.error_text = describe_error(error)
        self.error_line = error_line(error, home_files)
        # The traceback holds the failed frames' tensors: let them go.
        error.__traceback__ = None


class _Run:
    def __init__(
        self,
        target: Target,
        specs: list[VariantSpec],
        gpu: bool,
        warmup: int,
        check: bool,
        rtol: float | None,
        atol: float | None,
        cancel: threading.Event | None,
        progress: Callable[[Progress], None] | None,
        reset: Callable[[], Any] | None = None,
    ) -> None:
        self.target = target
        self.reset = reset
        self.gpu = gpu
        self.warmup = warmup
        self.check = check
        self.rtol, self.atol = rtol, atol
        self.cancel = cancel
        self.progress = progress
        self.timer = timing.Timer(gpu)
        self.states = [_State(make_variant(spec, target, gpu)) for spec in specs]
        self.watch: DynamoWatch | None = None
        self.cancelled = False
        self.rounds = 0
        self.host_loops: list[float] = []  # the host's speed before each round, after the last
        self.steady: set[int] | None = None  # the rounds the medians and speed-ups use
        self.notes: list[str] = []
        self.reference: Any = None
        self.reference_ok = False
        self.caps: dict[str, int] | None = None  # timed calls allowed per variant
        self.capped: set[str] = set()  # variants whose blocks the caps shortened
        self.report: Report | None = None  # the report the A/B belongs to
        self._last_step: tuple[str, str | None] | None = None

    # --- bookkeeping ---

    @property
    def runs(self) -> int:
        return sum(s.variant.runs for s in self.states)

    def stop_if_cancelled(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise _Cancelled

    def tell(self, step: str, state: _State | None, fraction: float, message: str) -> None:
        if self.progress is None:
            return
        # Timing moves from variant to variant every block: it is one step for printers.
        key = (step, state.name if state and step != "timing" else None)
        new = key != self._last_step
        self._last_step = key
        k = self.states.index(state) + 1 if state is not None else 0
        try:
            self.progress(
                Progress(
                    step,
                    state.name if state else None,
                    k,
                    len(self.states),
                    min(fraction, 1.0),
                    self.runs,
                    message,
                    new,
                )
            )
        except _Cancelled:
            raise
        except Exception as error:  # a broken progress display must not break the A/B
            self.notes.append(
                f"The progress callback failed and was switched off "
                f"({type(error).__name__}: {error})."
            )
            self.progress = None
        # A progress callback may set the cancel event: honour it right away.
        if step != "done":
            self.stop_if_cancelled()

    def collect(self, state: _State) -> None:
        if self.watch is not None:
            state.events.add(self.watch.take())

    # --- phase 1: prepare, warm up, check ---

    def prepare_all(self) -> None:
        n = len(self.states)
        for k, state in enumerate(self.states):
            self.stop_if_cancelled()
            if self.watch is not None:
                self.watch.take()  # nothing from before belongs to this variant
            step, what = _PREPARE_STEPS.get(state.variant.spec.kind, ("warming up", "warming up"))
            self.tell(step, state, 0.3 * k / n, f"{what}: {state.name} (variant {k + 1} of {n})")
            try:
                self._prepare(state, k, n)
            except _Cancelled:
                raise
            except Exception as error:
                state.fail(error, self.target.home_files)
            finally:
                self.collect(state)
            if k == 0 and not state.ok:
                # Without a baseline there is nothing to compare against.
                for other in self.states[1:]:
                    other.error_text = "not run: eager (the baseline) failed"
                self.notes.append(f"eager failed: {state.error_text}")
                return

    def _prepare(self, state: _State, k: int, n: int) -> None:
        variant = state.variant
        variant.prepare(self.timer)
        if variant.prepare_s is not None:
            self.tell(
                "warming up",
                state,
                0.3 * (k + 0.5) / n,
                f"warming up: {state.name} (variant {k + 1} of {n})",
            )
        self.collect(state)
        times: list[float] = []
        outputs: list[Any] = []
        for i in range(self.warmup):
            self.stop_if_cancelled()
            keep = self.check and i >= self.warmup - (2 if k == 0 else 1)
            if keep and self.reset is not None:
                self.reset()  # checked calls start from the same state
            variant.runs += 1  # counted before the call: a run that fails ran too
            elapsed, value = self.timer.once(variant.call)
            times.append(elapsed)
            if keep:
                outputs.append(snapshot(value))
            del value
            self.collect(state)
        # The first warm-up call may still pay first-run costs: plan with the best of the rest.
        state.per_call = min(times[1:] or times)
        if not self.check:
            return
        if k == 0:
            self.reference = outputs[-1]
            if len(outputs) == 2:
                same = compare_outputs(outputs[0], outputs[1], rtol=self.rtol, atol=self.atol)
                state.check = same
                self.reference_ok = same.correct is not False
                if not self.reference_ok:
                    state.check = Check(
                        None, detail=f"eager's output changes from run to run ({same.detail})"
                    )
                    random = self.target.source is not None and uses_random(self.target.source)
                    self.notes.append(
                        "Outputs not checked: eager's own output differs between two runs"
                        + (
                            " (the code draws random numbers)"
                            if random
                            else " (random numbers, or state the code changes)"
                        )
                        + ", so there is no fixed result to compare the variants with. Create random inputs "
                        "in another cell, or seed inside the code, to get a check."
                    )
            else:
                self.reference_ok = True
            return
        if self.reference_ok and outputs:
            # A fix that lowers the precision (TF32, bf16) is held to that precision's
            # tolerances, unless the caller gave their own.
            loose = variant.tolerance if self.rtol is None and self.atol is None else None
            rtol, atol = loose if loose is not None else (self.rtol, self.atol)
            state.check = compare_outputs(
                self.reference, outputs[-1], rtol=rtol, atol=atol, lowered=loose is not None
            )

    # --- phase 2: interleaved timing ---

    def time_all(self, budget_s: float, rounds: int | None) -> None:
        self.reference = None  # the reference outputs are no longer needed: free their memory
        if not self.states[0].ok:
            return
        alive = [s for s in self.states if s.ok]
        plan = self._plan(alive, budget_s, rounds)
        self._use(plan, alive)
        by_name = {s.name: s for s in alive}
        names = [s.name for s in alive]
        n = len(names)
        r = 0
        replanned = False
        while r < self.rounds:
            self.host_loops.append(host_loop_s())
            for name in timing.rotation(names, r):
                state = by_name[name]
                if not state.ok:
                    continue
                self.stop_if_cancelled()
                k = names.index(name)
                self.tell(
                    "timing",
                    state,
                    0.3 + 0.6 * (r + k / n) / self.rounds,
                    f"timing variant {k + 1} of {n} ({name}): round {r + 1} of {self.rounds}, "
                    f"{state.block:,} calls per block",
                )
                try:
                    # What the variant sets once (a fix's backend flags) is set outside the
                    # timed calls and put back before the next variant's block.
                    with state.variant.held():
                        state.times.append(self.timer.block(state.variant.call, state.block))
                    state.rounds_timed.append(r)
                except _Cancelled:
                    raise
                except Exception as error:
                    state.fail(error, self.target.home_files)
                finally:
                    state.variant.runs += state.block
                    state.timed_runs += state.block
                    self.collect(state)
            if not self.states[0].ok:
                self.notes.append(
                    "eager failed while timing: the speed-ups use the runs before that."
                )
                return
            if r == 0 and rounds is None and not replanned and self._replan(alive, budget_s):
                # The pilot's blocks were sized on a misjudged call: start the rounds afresh.
                replanned = True
                for state in alive:
                    state.times.clear()
                    state.rounds_timed.clear()
                self.host_loops.clear()
                continue
            r += 1
        self.host_loops.append(host_loop_s())  # after the last round: each round has two

    def _kept(self, state: _State) -> tuple[list[int], list[float]]:
        """A variant's rounds and block times in the rounds the speed-ups use."""
        pairs = list(zip(state.rounds_timed, state.times, strict=True))
        if self.steady is not None:
            pairs = [(r, t) for r, t in pairs if r in self.steady]
        return [r for r, _ in pairs], [t for _, t in pairs]

    def _plan(self, alive: list[_State], budget_s: float, rounds: int | None) -> timing.Plan:
        """The plan for the variants still running, within what is left of their caps."""
        per_call = {s.name: s.per_call or 0.0 for s in alive}
        caps = None
        if self.caps is not None:
            caps = {s.name: max(self.caps[s.name] - s.timed_runs, 1) for s in alive}
        plan = timing.plan(per_call, budget_s, rounds=rounds, max_calls=caps)
        if caps is not None:
            free = timing.plan(per_call, budget_s, rounds=rounds).calls()
            self.capped |= {name for name, calls in plan.calls().items() if calls < free[name]}
        return plan

    def _use(self, plan: timing.Plan, alive: list[_State]) -> None:
        self.rounds = plan.rounds
        for state in alive:
            state.block = plan.blocks[state.name]

    def _replan(self, alive: list[_State], budget_s: float) -> bool:
        """The first round is a pilot, as in ``blocked_autorange``: warm-up calls, each timed
        alone with a sync, can misjudge a call by far (the sync itself, a busy machine). Where a
        first block says a call takes under half or over twice the estimate, plan again; True
        when it did."""
        measured = {s.name: s.times[0] for s in alive if s.ok and s.times}
        off = [
            s
            for s in alive
            if s.name in measured
            and not 0.5 <= measured[s.name] / max(s.per_call or 0.0, 1e-12) <= 2.0
        ]
        if not off:
            return False
        for state in alive:
            if state.name in measured:
                state.per_call = measured[state.name]
        self._use(self._plan(alive, budget_s, None), alive)
        return True

    # --- phase 3: profile each variant once ---

    def profile_all(self) -> None:
        from ..capture.run import capture

        alive = [s for s in self.states if s.ok and s.times]
        for i, state in enumerate(alive):
            self.stop_if_cancelled()
            self.tell(
                "profiling",
                state,
                0.9 + 0.1 * i / max(len(alive), 1),
                f"profiling {state.name} once (why it is faster)",
            )
            name = f"{self.target.name} [{state.name}]" if self.target.name else state.name
            try:
                captured = capture(state.variant.call, cpu=not self.gpu, name=name, source="ab")
            except Exception as error:  # the profiler itself (start, export, analysis) failed
                state.notes.append(
                    f"{state.name}: profiling failed ({describe_error(error)}); its timing stands, "
                    "without the explanation of why it is faster"
                )
                continue
            state.variant.runs += 1
            self.collect(state)
            if isinstance(captured.error, KeyboardInterrupt):
                raise captured.error
            if captured.error is not None:
                state.notes.append(
                    f"{state.name}: the profiled run failed ({describe_error(captured.error)})"
                )
                captured.error.__traceback__ = None
                continue
            state.report = captured.report

    # --- the result ---

    def result(self, budget_s: float, elapsed_s: float) -> ABResult:
        base = self.states[0]
        # Rounds at the host's best speed (spread.steady_rounds): launch-bound eager time
        # follows the host, a CUDA graph's does not, so a speed-up over rounds at mixed levels
        # depends on how many were slow.
        self.steady = steady_rounds(self.host_loops, timing.MIN_ROUNDS)
        stats = [timing.stats(self._kept(s)[1]) for s in self.states]
        results = [self._variant_result(s, st) for s, st in zip(self.states, stats, strict=True)]
        fused = {}
        base_result = results[0]
        for state, res in zip(self.states[1:], results[1:], strict=True):
            if (
                state.variant.spec.kind in ("compile", "custom")
                and base.report is not None
                and state.report is not None
            ):
                fused[res.name] = fused_ops(base.report, state.report)
        for res in results[1:]:
            _explain(base_result, res, fused.get(res.name, []), self.gpu)
        device = "CPU"
        if self.gpu:
            import torch

            device = torch.cuda.get_device_name()
        result = ABResult(
            variants=results,
            fused_ops=fused,
            runs_total=self.runs,
            cancelled=self.cancelled,
            device=device,
            budget_s=budget_s,
            rounds=self.rounds,
            elapsed_s=elapsed_s,
            host_loop_s=list(self.host_loops),
            host_slowdown=host_slowdown(self.host_loops, fastest_host_loop_s()),
            rounds_used=len(self.steady) if self.steady is not None else self.rounds,
        )
        result.notes = self._notes(result, budget_s)
        if self.target.source:
            result.stateful = [str(f) for f in stateful_findings(self.target.source)]
            if result.stateful and self.reset is None:  # with a snapshot, the state notes say more
                result.notes.append(
                    f"The code looks stateful ({'; '.join(result.stateful[:3])}): each of the "
                    f"{result.runs_total:,} runs may have changed that state."
                )
        return result

    def _variant_result(self, state: _State, stats: timing.Stats | None) -> VariantResult:
        variant = state.variant
        spec = variant.spec
        res = VariantResult(
            name=spec.name,
            kind=spec.kind,
            mode=spec.mode,
            runs=variant.runs,
            block=state.block,
            timed_runs=state.timed_runs,
        )
        res.times_s = list(state.times)
        res.compile_s = variant.prepare_s
        res.graph_breaks = list(state.events.graph_breaks)
        res.recompile_reasons = list(state.events.recompile_reasons)
        res.recompiles = state.events.recompiles if spec.kind == "compile" else None
        res.notes = [*state.notes, *variant.notes, *state.events.notes]
        res.error, res.error_line = state.error_text, state.error_line
        if state.check is not None:
            res.correct = state.check.correct
            res.max_abs_err, res.max_rel_err = state.check.max_abs_err, state.check.max_rel_err
            res.check_detail = state.check.detail
            res.notes.extend(state.check.notes)
        if stats is not None:
            res.median_s, res.iqr_s = stats.median, stats.iqr
        is_base = spec.kind == "eager"
        base = self.states[0]
        if is_base and stats is not None:
            res.speedup = res.speedup_low = res.speedup_high = 1.0
            res.verdict = "baseline"
        elif stats is not None:
            sp = timing.paired_speedup(
                dict(zip(*self._kept(base), strict=True)),
                dict(zip(*self._kept(state), strict=True)),
            )
            if sp is not None:
                res.speedup, res.speedup_low, res.speedup_high, res.verdict = (
                    sp.value,
                    sp.low,
                    sp.high,
                    sp.verdict,
                )
                res.paired_rounds = sp.rounds
        if spec.kind == "compile" and stats is not None and base.report and state.report:
            evidence = same_work(base.report, state.report)
            if evidence is not None:
                res.verdict = "fallback"
                res.speedup = res.speedup_low = res.speedup_high = None
                res.fallback_reason = _fallback_reason(state, evidence)
        if res.error is not None or stats is None:
            res.verdict = "failed"
            if res.error is None:
                res.error = "cancelled before it was timed" if self.cancelled else "not timed"
        elif res.correct is False and not is_base:
            res.verdict = "mismatch"
        if state.report is not None:
            res.report = state.report
            res.split = _split(state.report, res.median_s)
            res.kernel_count = (
                int(state.report.summary.get("kernel_count") or 0) if self.gpu else None
            )
            res.launches = state.report.summary.get("launch_count") if self.gpu else None
        return res

    def _notes(self, result: ABResult, budget_s: float) -> list[str]:
        clock = "CUDA events" if self.gpu else "the host clock"
        notes = []
        if self.rounds:
            notes.append(
                f"Timing: each variant was warmed up ({self.warmup} calls after compiling or capturing), then "
                f"timed in {self.rounds} interleaved rounds (order rotated each round, about {budget_s:g} s per "
                f"variant); each measurement is a block of back-to-back calls timed with {clock}. Median and "
                "IQR are of each variant's per-call times. A speed-up is the median of the rounds' ratios "
                "(eager's block over the variant's block of the same round, so that a change of the "
                "machine's speed between rounds cancels), its range the middle half of those ratios; a "
                f"speed-up whose range holds 1x, or under {timing.MIN_EFFECT:.0%}, is noise."
            )
        if self.capped:
            notes.append(
                f"{', '.join(sorted(self.capped))}: timed in shorter blocks than the budget allows, to "
                "stay within the number of runs announced before the A/B (the variant is much faster "
                "than the run that number was made from)."
            )
        if any(v.compile_s is not None for v in result.variants):
            notes.append(
                "The first call of a variant (compiling; for a CUDA graph: warm-up and capture) is "
                "timed apart and kept out of the medians."
            )
        if self.steady is not None:
            hosts = round_hosts(self.host_loops)
            best = min(hosts)
            notes.append(
                f"Medians and speed-ups are from the {len(self.steady)} of {len(hosts)} rounds in "
                "which the host CPU ran at its best speed of this A/B (a fixed Python loop within "
                f"{HOST_LEVEL_CHANGE:.0%} of {best * 1e6:.0f} µs); in the others it ran up to "
                f"{max(hosts) / best:.2f}x slower, which lengthens launch-bound eager time and "
                "inflates a speed-up over it by as much as the share of slow rounds."
            )
        for finding in host_findings(self.host_loops, fastest_host_loop_s(), what="rounds"):
            if finding.kind == "host" and self.steady is not None:
                continue  # the note above says how far the host's speed moved
            notes.append(
                f"{finding.text} A speed-up over launch-bound or Python-heavy eager code (a CUDA "
                "graph's, above all) is larger when the host is slower: compare it only with A/Bs "
                "at the same host speed."
            )
        notes.extend(self.notes)
        notes.extend(agreement_notes(result, self.report, self.gpu))
        for v in result.variants:
            if v.verdict == "fallback":
                notes.append(_fallback_note(v, result.variants[0]))
            if v.verdict == "mismatch":
                notes.append(
                    f"{v.name}: OUTPUTS DIFFER from eager ({v.check_detail}): its speed-up is not a valid "
                    "comparison until that is understood."
                )
            if v.error and not v.error.startswith("not run"):
                notes.append(
                    f"{v.name} failed: {v.error}"
                    + (f" (at {v.error_line})" if v.error_line else "")
                )
            if v.graph_breaks:
                notes.append(
                    f"{v.name}: {len(v.graph_breaks)} graph break(s): "
                    + " | ".join(v.graph_breaks[:5])
                )
            if v.recompiles:
                notes.append(
                    f"{v.name}: {v.recompiles} recompile(s): " + " | ".join(v.recompile_reasons[:5])
                )
            # A fallback's own note above says that torch.compile fell back, and why.
            frame_fallback = "torch.compile fell back to eager for a frame"
            notes.extend(
                n for n in v.notes if v.verdict != "fallback" or not n.startswith(frame_fallback)
            )
            if v.why:
                notes.append(v.why)
        if self.cancelled:
            notes.append(
                f"Cancelled after {self.runs:,} runs: variants not timed are marked failed."
            )
        return notes

    # --- cleanup ---

    def release(self) -> None:
        """Drop graphs, compiled functions and outputs, so their memory can be reused."""
        for state in self.states:
            with contextlib.suppress(Exception):
                state.variant.close()
        self.reference = None
        gc.collect()
        if self.gpu:
            import torch

            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:  # a device error was already reported as a variant's failure
                pass


# --- checking the baseline --------------------------------------------------------------------------


def same_work(base: Report, variant: Report) -> str | None:
    """How ``variant``'s profiled run did exactly ``base``'s work, in words, or None where it
    did not: no compiled region, and on a GPU the same kernels (by name and count) in the same
    number of launches; on a CPU the same torch ops (by name and calls)."""
    names = variant.ops["name"].astype(str) if len(variant.ops) else []
    if any(name.startswith(_COMPILED_REGION) for name in names):
        return None
    if base.summary.get("gpu") and variant.summary.get("gpu"):
        kernels = _counts(base.kernels, "count")
        launches = base.summary.get("launch_count")
        if (
            not kernels
            or kernels != _counts(variant.kernels, "count")
            or launches != variant.summary.get("launch_count")
        ):
            return None
        total = sum(kernels.values())
        return f"the same {total:,} kernels in the same {launches:,} launches as eager"
    if base.summary.get("gpu") or variant.summary.get("gpu"):
        return None
    ops = _counts(base.ops, "calls", torch_ops=True)
    if not ops or ops != _counts(variant.ops, "calls", torch_ops=True):
        return None
    return f"the same {sum(ops.values()):,} torch op calls as eager"


def _counts(table: pd.DataFrame, weight: str, *, torch_ops: bool = False) -> dict[str, int]:
    """Occurrences per name in a kernel or op table (rows may stand for several)."""
    if not len(table) or "name" not in table:
        return {}
    names = table["name"].astype(str)
    weights = table[weight].fillna(1) if weight in table else 1
    counts = names.to_frame("name").assign(n=weights).groupby("name", sort=False)["n"].sum()
    if torch_ops:
        counts = counts[counts.index.str.contains("::")]
    return {str(name): int(n) for name, n in counts.items() if n}


def _fallback_reason(state: _State, evidence: str) -> str:
    """Dynamo's own reason for running eager's code, where it gave one; the evidence always."""
    marker = "torch.compile fell back to eager for a frame: "
    reasons = list(state.events.graph_breaks)  # these name the user's line
    reasons += [n.removeprefix(marker) for n in state.events.notes if n.startswith(marker)]
    reason = reasons[0] if reasons else "Dynamo compiled no graph of it"
    return f"{reason} (it ran {evidence})"


def _fallback_note(v: VariantResult, base: VariantResult) -> str:
    text = f"{v.name}: unchanged: torch.compile fell back to eager: {v.fallback_reason}."
    if v.median_s and base.median_s:
        text += (
            f" Timed at {_ms(v.median_s)} against eager's {_ms(base.median_s)} "
            f"({v.median_s / base.median_s - 1:+.1%}): the noise of this machine between identical work."
        )
    return text


def agreement_notes(result: ABResult, report: Report | None, gpu: bool) -> list[str]:
    """Warnings that the timing disagrees with itself: a variant's blocks at two levels, and
    eager's blocks against the timed span of ``report``, the report the A/B belongs to."""
    notes = []
    for v in result.variants:
        two = spread.levels(v.times_s)
        if two is not None and v.verdict != "failed":
            notes.append(
                f"{v.name}: its timed blocks sat at two levels, {_ms(two.low_s)} ({len(two.low)} "
                f"blocks) and {_ms(two.high_s)} ({len(two.high)}): the machine changed speed during "
                "the A/B (the host CPU, the GPU clock, another process). The speed-ups pair blocks "
                "of the same round, which cancels a change between rounds; the median time stands "
                "for one level only."
            )
    note = _baseline_disagreement(report, result.variants[0], gpu)
    if note:
        notes.append(note)
    return notes


def _baseline_disagreement(report: Report | None, base: VariantResult, gpu: bool) -> str | None:
    """A warning when eager's median per call is further from the report's timed span than
    their spreads (and ``BASELINE_GAP``) allow; None where they agree or cannot be compared (a
    report of one profiled run, another device)."""
    if report is None or base.median_s is None or not base.times_s:
        return None
    summary = report.summary
    if not str(summary.get("span_source", "")).endswith("_unprofiled"):
        return None
    if bool(summary.get("gpu")) != gpu:
        return None
    runs = timing.stats(summary.get("run_spans_s") or [])
    span = runs.median if runs is not None else summary.get("span_s")
    if not span:
        return None
    eager = timing.stats(base.times_s)
    gap = base.median_s / span - 1.0
    allowed = BASELINE_GAP + (runs.spread if runs else 0.0) + (eager.spread if eager else 0.0)
    if abs(gap) <= allowed:
        return None
    count = f"median of {runs.n} timed runs" if runs else "its timed span"
    return (
        f"The A/B's eager baseline, {_ms(base.median_s)} per call, differs from the report's span, "
        f"{_ms(span)} ({count}), by {gap:+.0%}, more than their spreads allow ({allowed:.0%}): the "
        "machine ran at another speed during one of them (the host CPU's level, the GPU clock, "
        "another process), or the code runs differently back to back than once at a time. The "
        "speed-ups compare blocks of the same round and hold; each absolute time holds for the "
        "state it was measured in."
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.4g} µs"


# --- explaining the difference --------------------------------------------------------------------


def _split(report: Report, median_s: float | None) -> dict:
    """The variant's span split: busy parts from its profiled run, the span from the timed median
    (the profiler inflates idle time), idle the rest.

    On a GPU the kernels run at the same speed under the profiler, so their times are kept. On a
    CPU the profiler slows the ops themselves, so the profiled run's shares are applied to the
    median instead.
    """
    summary = report.summary
    parts = {f"{p}_s": float(summary.get(f"{p}_s") or 0.0) for p in SPLIT_PARTS if p != "idle"}
    # A host collective (gloo) while the GPU waits is part of the split, not idle.
    busy = float(summary.get("busy_s") or sum(parts.values()))
    busy += float(summary.get("host_communication_s") or 0.0)
    span = median_s if median_s is not None else float(summary.get("span_s") or busy)
    profiled = summary.get("profiled_span_s") or summary.get("wall_s")
    if not summary.get("gpu") and profiled and profiled > 0:
        scale = min(span / float(profiled), 1.0)
        parts = {k: v * scale for k, v in parts.items()}
        busy *= scale
    return {**parts, "idle_s": max(span - busy, 0.0), "span_s": span}


def fused_ops(base: Report, variant: Report) -> list[str]:
    """Ops that did work in the eager run and no longer appear in the variant's: they went
    into fused (generated) kernels. On a GPU only ops that launched kernels count."""
    ops = base.ops
    if not len(ops) or "name" not in ops:
        return []
    if base.summary.get("gpu") and "kernels" in ops:
        ops = ops[ops["kernels"].fillna(0) > 0]
    names = ops[ops["name"].astype(str).str.contains("::")]
    if not base.summary.get("gpu"):
        # On a CPU there is no kernel to tell work from bookkeeping: leave out allocations,
        # views and wrappers, which compiled code does not call but which did no work either.
        short = names["name"].astype(str).str.split("::").str[-1]
        names = names[~short.isin(_NO_WORK_OPS) & ~short.str.startswith("empty")]
    order = "gpu_time_s" if base.summary.get("gpu") and "gpu_time_s" in names else "cpu_time_s"
    if order in names:
        names = names.sort_values(order, ascending=False)
    present = set(variant.ops["name"].astype(str)) if len(variant.ops) else set()
    seen: list[str] = []
    for name in names["name"].astype(str):
        if name not in present and name not in seen:
            seen.append(name)
    return seen


_NO_WORK_OPS = {
    "view",
    "_unsafe_view",
    "reshape",
    "_reshape_alias",
    "as_strided",
    "t",
    "transpose",
    "permute",
    "expand",
    "detach",
    "alias",
    "squeeze",
    "unsqueeze",
    "slice",
    "select",
    "lift_fresh",
    "resolve_conj",
    "resolve_neg",
    "to",
    "contiguous",
    "set_",
    "resize_",
}

_PART_WHY = {
    "idle": "GPU idle time: the CPU-side overhead (Python, dispatch, kernel launches) that kept the GPU waiting",
    "memory": "memory-bound kernel time: fewer passes over memory",
    "compute": "compute-bound kernel time",
    "other": "time in other GPU work (copies, unmodelled or launch-sized kernels)",
}
_PART_WHY_CPU = {
    "idle": "time outside torch ops (Python, the framework)",
    "other": "time in torch ops on the CPU",
    "memory": "memory-bound time",
    "compute": "compute-bound time",
}


def _explain(base: VariantResult, res: VariantResult, fused: list[str], gpu: bool) -> None:
    """Name where the time went: the split part that changed most, counts, fused ops."""
    if res.verdict not in ("faster", "slower"):
        return
    if base.split is None or res.split is None or base.median_s is None or res.median_s is None:
        return
    deltas = {  # a split written before a part existed (communication) has none of it
        p: (base.split.get(f"{p}_s") or 0.0) - (res.split.get(f"{p}_s") or 0.0) for p in SPLIT_PARTS
    }
    saved = base.median_s - res.median_s
    part = (
        max(deltas, key=lambda p: deltas[p]) if saved > 0 else min(deltas, key=lambda p: deltas[p])
    )
    res.gain_from = part if saved > 0 else None
    ms = 1e3
    change = "faster" if saved > 0 else "slower"
    why = (_PART_WHY if gpu else _PART_WHY_CPU)[part]
    text = (
        f"Why {res.name} is {abs(saved) * ms:.3g} ms {change} per run: mostly {why} "
        f"({base.split[f'{part}_s'] * ms:.3g} -> {res.split[f'{part}_s'] * ms:.3g} ms)."
    )
    counts = []
    if base.kernel_count is not None and res.kernel_count is not None:
        counts.append(f"kernels {base.kernel_count:,} -> {res.kernel_count:,}")
    if base.launches is not None and res.launches is not None:
        counts.append(f"launches {base.launches:,} -> {res.launches:,}")
    if counts:
        text += " " + ", ".join(counts).capitalize() + "."
    if fused:
        fused_kernels = []
        if res.report is not None and len(res.report.kernels):
            names = dict.fromkeys(res.report.kernels["name"].astype(str))
            fused_kernels = [k for k in names if "fused" in k][:3]
        if fused_kernels:
            text += f" Fused away: {', '.join(fused[:8])} (into {', '.join(fused_kernels)})."
        else:
            # No fused kernel ran: the ops were replaced (say, by a plain GEMM call), not fused.
            text += f" Replaced by compiled code: {', '.join(fused[:8])}."
    res.why = text


__all__ = [
    "ABResult",
    "Progress",
    "VariantResult",
    "compare",
    "estimate_runs",
    "fused_ops",
    "run",
    "same_work",
]
