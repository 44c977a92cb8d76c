"""The A/B from a script: ``compare(fn, *args, variants=...)`` on CPU with real torch.compile.

torch.compile's first call in a process costs about 20 s with a cold cache on these machines, so
the compile tests share one result (``result``) and Inductor's cache lives in the session's tmp.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading

import numpy as np
import pandas as pd
import pytest
import torch
from checked import load_report

import jupyter_brrr
from jupyter_brrr.actions import ab, compare, parse_variants
from jupyter_brrr.actions.variants import DynamoWatch, VariantSpec
from jupyter_brrr.capture.run import ProfilerInUseError
from jupyter_brrr.report.report import Report
from jupyter_brrr.schema.report import SPLIT_PARTS
from jupyter_brrr.views import ab_text

VARIANT_KEYS = {
    "name",
    "median_s",
    "iqr_s",
    "runs",
    "speedup",
    "speedup_low",
    "speedup_high",
    "verdict",
    "correct",
    "max_abs_err",
    "max_rel_err",
    "compile_s",
    "split",
    "kernel_count",
    "graph_breaks",
    "recompiles",
    "error",
    "error_line",
    "launches",  # beyond the renderer's fields: kernel and graph launches per run
    "fallback_reason",  # why torch.compile ran eager's code (verdict "fallback")
    "paired_rounds",  # rounds behind the speed-up's ratios
}
DATA = os.path.join(os.path.dirname(__file__), "data")
cuda = torch.cuda.is_available()


def coscos(x: torch.Tensor) -> torch.Tensor:
    return x.cos().cos()


def wrong(x: torch.Tensor) -> torch.Tensor:
    return x.cos()  # one cos short: the check must catch it


def boom(x: torch.Tensor) -> torch.Tensor:
    x.sin()
    raise ValueError("boom in variant")


@pytest.fixture(scope="module")
def result() -> ab.ABResult:
    x = torch.randn(4096)
    return compare(
        coscos,
        x,
        variants=["compile", "graph", ("wrong", wrong), ("boom", boom)],
        budget_s=0.2,
    )


# --- the whole flow, with torch.compile on CPU -------------------------------------------------------


@pytest.mark.slow
def test_all_variants_eager_first(result) -> None:
    assert [v.name for v in result.variants] == ["eager", "compile", "graph", "wrong", "boom"]
    assert result.baseline == "eager"
    eager = result["eager"]
    assert eager.verdict == "baseline" and eager.speedup == 1.0
    assert eager.correct is True  # eager's own two runs agree: there is a reference
    assert result.device == ("CPU" if not cuda else torch.cuda.get_device_name())


@pytest.mark.slow
def test_compile_on_cpu(result) -> None:
    c = result["compile"]
    assert c.error is None, c.error
    assert c.correct is True and c.max_abs_err is not None and c.max_abs_err < 1e-4
    assert c.compile_s is not None and c.compile_s > 0  # the first call, apart
    assert c.median_s is not None and c.median_s > 0 and c.iqr_s is not None and c.iqr_s >= 0
    assert c.median_s < c.compile_s  # the steady state is not the first call
    assert c.verdict in ("faster", "slower", "noise")
    assert c.speedup_low <= c.speedup <= c.speedup_high
    assert c.graph_breaks == [] and c.recompiles == 0
    assert set(c.split) == {f"{part}_s" for part in SPLIT_PARTS} | {"span_s"}
    assert c.split["span_s"] == pytest.approx(c.median_s)
    assert c.report is not None and "compile" in c.report.name
    # The eager cos ops are gone from the compiled run: fused into generated code.
    assert "aten::cos" in result.fused_ops["compile"]


@pytest.mark.slow
@pytest.mark.skipif(cuda, reason="checks the message on a machine without CUDA")
def test_graph_needs_cuda(result) -> None:
    g = result["graph"]
    assert g.verdict == "failed"
    assert g.error.startswith("needs CUDA")
    assert g.median_s is None and g.runs == 0


@pytest.mark.slow
def test_wrong_result_is_caught(result) -> None:
    w = result["wrong"]
    assert w.correct is False and w.verdict == "mismatch"
    assert w.max_abs_err > 0.1
    assert w.median_s is not None  # timed, but its speed-up is marked untrustworthy
    assert any("wrong: OUTPUTS DIFFER" in note for note in result.notes)


@pytest.mark.slow
def test_failing_variant_is_reported_and_the_others_finish(result) -> None:
    b = result["boom"]
    assert b.verdict == "failed" and b.error == "ValueError: boom in variant"
    line = boom.__code__.co_firstlineno + 2
    assert b.error_line == f'line {line}: raise ValueError("boom in variant")'
    assert b.runs == 1
    for name in ("eager", "compile", "wrong"):
        assert result[name].median_s is not None
    assert any(note.startswith("boom failed") for note in result.notes)


@pytest.mark.slow
def test_the_notes_name_no_internal_field(result) -> None:
    """The notes are read by people: the first call is "the first call", as the tables call it,
    not the JSON's field name."""
    assert any("first call" in note for note in result.notes)
    internal = re.compile(r"\b[a-z]+_(?:s|ms|bytes|share)\b")
    assert not [note for note in result.notes if internal.search(note)]


@pytest.mark.slow
def test_runs_are_counted(result) -> None:
    assert result.runs_total == sum(v.runs for v in result.variants)
    eager = result["eager"]
    assert eager.timed_runs >= eager.block * (result.rounds - 1)
    assert eager.runs == ab.DEFAULT_WARMUP + eager.timed_runs + 1  # + 1 profiled


@pytest.mark.slow
def test_ab_dict_is_json_safe_and_round_trips(result) -> None:
    doc = result.to_dict()
    assert set(doc) == {"variants", "notes", "baseline", "fused_ops", "runs_total"}
    for variant in doc["variants"]:
        assert set(variant) == VARIANT_KEYS
        assert variant["verdict"] in (
            "baseline",
            "faster",
            "slower",
            "noise",
            "fallback",
            "failed",
            "mismatch",
        )
        assert isinstance(variant["graph_breaks"], list)
    text = json.dumps(doc, allow_nan=False)  # no NaN or infinity anywhere
    assert json.loads(text) == doc
    report = result.reports["eager"]
    report.ab = doc
    again = Report.from_json(report.to_json())
    assert again.ab == doc


@pytest.mark.slow
def test_table_and_text(result) -> None:
    table = result.table
    assert isinstance(table, pd.DataFrame)
    assert list(table.index) == ["eager", "compile", "graph", "wrong", "boom"]
    assert {
        "median_s",
        "speedup",
        "verdict",
        "correct",
        "compile_s",
        "idle_s",
        "kernel_count",
    } <= set(table)
    assert table.loc["wrong", "verdict"] == "mismatch"
    text = repr(result)
    assert "OUTPUTS DIFFER" in text and "boom: failed" in text


@pytest.mark.slow
def test_graph_breaks_and_recompiles_are_listed() -> None:
    calls = [0]

    def breaking(x: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        y = x.cos()
        print("a graph break")
        return y.cos() * calls[0]

    r = compare(breaking, torch.randn(256), variants="compile", budget_s=0.1, profile=False)
    c = r["compile"]
    assert c.error is None, c.error
    assert any("print" in text for text in c.graph_breaks), c.graph_breaks
    assert any(text.startswith("line ") for text in c.graph_breaks)
    assert (
        c.recompiles is not None and c.recompiles >= 1
    )  # calls[0] changes every call: a guard on it fails
    assert any("guard failed" in reason for reason in c.recompile_reasons)
    # The output changes every run, eager's too: there is nothing fixed to check against.
    assert r["eager"].correct is None and c.correct is None
    assert any("Outputs not checked" in note for note in r.notes)


# --- without compiling --------------------------------------------------------------------------------


def test_top_level_compare_and_custom_variants() -> None:
    calls = []

    def f(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return x * 2

    r = jupyter_brrr.compare(f, torch.ones(8), variants=[("same", f)], budget_s=0.05, warmup=2)
    assert [v.name for v in r.variants] == ["eager", "same"]
    assert r["same"].correct is True and r["same"].verdict in ("faster", "slower", "noise")
    assert len(calls) == r.runs_total  # every run counted, no more, no less


def test_a_shape_mismatch_says_what_differed() -> None:
    # No finite error to show: the line gives the check's detail, not a made-up "inf".
    r = compare(coscos, torch.ones(8), variants=[("short", lambda x: x[:4])], budget_s=0.05)
    short = r["short"]
    assert short.verdict == "mismatch" and short.max_abs_err is None
    line = ab_text.variant_lines(r)[1]
    assert "OUTPUTS DIFFER (output: shape (8,) vs (4,))" in line and "inf" not in line


def test_cancel_from_the_progress_callback() -> None:
    cancel = threading.Event()
    steps = []

    def progress(p: ab.Progress) -> None:
        steps.append(p.step)
        if p.step == "timing":
            cancel.set()

    r = compare(
        coscos,
        torch.ones(16),
        variants=[("same", coscos)],
        budget_s=5.0,
        cancel=cancel,
        progress=progress,
    )
    assert r.cancelled
    assert "timing" in steps and "profiling" not in steps
    assert all(v.verdict == "failed" and "cancelled" in str(v.error) for v in r.variants)
    assert any("Cancelled after" in note for note in r.notes)
    assert not torch.autograd.profiler._is_profiler_enabled


def test_cancel_from_another_thread_stops_between_runs(fake_clock) -> None:
    # Each call takes 2 ms by the host clock (the fake one: a 2 x 60 s budget of them would be
    # 60,000 calls); the 50th waits until the other thread has cancelled.
    cancel = threading.Event()
    cancelling = threading.Event()
    cancelled_before: list[bool] = []  # per call: whether the cancel was set when it started

    def slow(x: torch.Tensor) -> torch.Tensor:
        cancelled_before.append(cancel.is_set())
        fake_clock.sleep(0.002)
        if len(cancelled_before) == 50:
            cancelling.set()
            assert cancel.wait(120)
        return x + 1

    box = {}
    worker = threading.Thread(
        target=lambda: box.setdefault(
            "r", compare(slow, torch.ones(4), variants=[("b", slow)], budget_s=60, cancel=cancel)
        )
    )
    worker.start()
    assert cancelling.wait(120)
    cancel.set()
    worker.join(120)
    assert not worker.is_alive()
    r = box["r"]
    assert r.cancelled
    # The run under way ends its block, and no other starts.
    assert cancelled_before.count(False) > 0 and len(cancelled_before) < 1000
    assert cancelled_before.count(True) < max(1, *(v.block for v in r.variants))


def test_keyboard_interrupt_stops_and_propagates() -> None:
    calls = [0]

    def interrupted(x: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return x + 1

    with pytest.raises(KeyboardInterrupt):
        compare(interrupted, torch.ones(4), variants=[("same", interrupted)], budget_s=0.05)
    assert calls[0] == 3
    assert not torch.autograd.profiler._is_profiler_enabled


def test_eager_failure_fails_everything_plainly() -> None:
    def broken(x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("eager is broken")

    r = compare(broken, torch.ones(2), variants=[("other", coscos)], budget_s=0.05)
    assert r["eager"].verdict == "failed" and "eager is broken" in str(r["eager"].error)
    assert r["other"].verdict == "failed" and str(r["other"].error).startswith("not run")
    assert any(note.startswith("eager failed") for note in r.notes)
    json.dumps(r.to_dict(), allow_nan=False)


def test_parse_variants() -> None:
    specs = parse_variants("compile, compile:reduce-overhead ,graph")
    assert [(s.name, s.kind, s.mode) for s in specs] == [
        ("eager", "eager", None),
        ("compile", "compile", None),
        ("compile:reduce-overhead", "compile", "reduce-overhead"),
        ("graph", "graph", None),
    ]
    assert parse_variants(["eager", "compile:default"])[1].name == "compile"
    custom = parse_variants({"mine": coscos, "fast": "compile:max-autotune"})
    assert [s.kind for s in custom] == ["eager", "custom", "compile"]
    assert parse_variants([VariantSpec("x", "custom", fn=coscos)])[1].fn is coscos
    for bad in ("compile:fastest", "turbo", ["graph", "graph"], [3]):
        with pytest.raises(ValueError):
            parse_variants(bad)


def test_estimate_runs_grows_with_budget_and_variants() -> None:
    one = ab.estimate_runs(["compile"], 1e-3, budget_s=1.0)
    assert one > 2 * ab.DEFAULT_WARMUP
    assert ab.estimate_runs(["compile"], 1e-3, budget_s=2.0) > one
    assert ab.estimate_runs(["compile", "graph"], 1e-3, budget_s=1.0) > one
    assert ab.estimate_runs(["compile"], None) > 0  # no time known: still a bound


@pytest.mark.parametrize("hint_factor", [10.0, 1.0, 0.1])
def test_the_announced_runs_bound_the_real_calls(hint_factor: float, fake_clock) -> None:
    # Eager takes about 2 ms, the variant about 100x less: an estimate that assumed every variant
    # as fast as eager (issue 15: 6-15x too low) is beaten by the fast one; and the time it is
    # made from may be a first, slower run (10x) or a luckier one (0.1x).
    calls = {"eager": 0, "fast": 0}

    def slow(x: torch.Tensor) -> torch.Tensor:
        calls["eager"] += 1
        fake_clock.sleep(0.002)
        return x + 1

    def fast(x: torch.Tensor) -> torch.Tensor:
        calls["fast"] += 1
        fake_clock.sleep(0.00002)
        return x + 1

    variants = [("fast", fast)]
    announced = ab.estimate_runs(variants, 0.002 * hint_factor, budget_s=0.2)
    result = compare(slow, torch.ones(4), variants=variants, budget_s=0.2, max_runs=announced)
    assert result.runs_total == calls["eager"] + calls["fast"]  # the count is the real one
    assert result.runs_total <= announced
    assert result["fast"].verdict == "faster" and result["eager"].median_s == pytest.approx(0.002)
    if hint_factor == 10.0:
        # The fast variant would have run about 2,000 times in its 0.2 s: it was held back.
        assert calls["fast"] < 1000
        assert any("shorter blocks" in note for note in result.notes)


def test_too_few_runs_allowed_is_refused() -> None:
    with pytest.raises(ValueError, match="max_runs=12 is too few"):
        compare(coscos, torch.ones(2), variants=[("same", coscos)], max_runs=12)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        compare(coscos, torch.ones(2), budget_s=0)
    with pytest.raises(ValueError):
        compare(coscos, torch.ones(2), warmup=0)


# --- explaining the difference, on real H200 traces -----------------------------------------------------


def test_fused_ops_and_launches_from_h200_traces() -> None:
    eager = load_report(os.path.join(DATA, "coscos_eager.json.gz"))
    compiled = load_report(os.path.join(DATA, "coscos_compiled.json.gz"))
    assert ab.fused_ops(eager, compiled) == ["aten::cos"]
    # 3 iterations in each trace: eager launched 2 kernels per run, compiled 1 fused one.
    assert eager.summary["launch_count"] == 6 and compiled.summary["launch_count"] == 3
    assert eager.summary["kernel_count"] == 6 and compiled.summary["kernel_count"] == 3


def test_split_uses_the_timed_median_for_idle_time() -> None:
    report = load_report(os.path.join(DATA, "tiny_mlp_eager.json.gz"))
    busy = report.summary["busy_s"]
    split = ab._split(report, median_s=busy + 1e-3)
    assert split["idle_s"] == pytest.approx(1e-3)
    assert split["span_s"] == pytest.approx(busy + 1e-3)
    parts = split["compute_s"] + split["memory_s"] + split["other_s"]
    assert parts == pytest.approx(busy)


def test_explanation_names_the_idle_time_a_graph_removes() -> None:
    def variant(
        name: str, median: float, idle: float, kernels: int, launches: int
    ) -> ab.VariantResult:
        return ab.VariantResult(
            name=name,
            kind="graph" if name == "graph" else "eager",
            median_s=median,
            verdict="baseline" if name == "eager" else "faster",
            split={
                "compute_s": 0.0,
                "memory_s": 0.0,
                "other_s": 5e-5,
                "idle_s": idle,
                "span_s": median,
            },
            kernel_count=kernels,
            launches=launches,
        )

    base = variant("eager", 475e-6, 425e-6, 20, 20)
    graph = variant("graph", 50e-6, 0.0, 20, 1)
    ab._explain(base, graph, [], gpu=True)
    assert graph.gain_from == "idle"
    assert graph.why is not None
    assert "idle time" in graph.why and "launches 20 -> 1" in graph.why.lower()
    assert "Fused" not in graph.why and "Replaced" not in graph.why

    # Ops gone from a compiled variant: fused where a fused kernel ran, else replaced.
    compiled = variant("compile", 100e-6, 50e-6, 21, 2)
    ab._explain(base, compiled, ["aten::addmm"], gpu=True)
    assert compiled.why is not None
    assert "Replaced by compiled code: aten::addmm." in compiled.why
    assert "Fused" not in compiled.why
    compiled.report = load_report(os.path.join(DATA, "coscos_compiled.json.gz"))
    ab._explain(base, compiled, ["aten::cos"], gpu=True)
    assert compiled.why is not None
    assert "Fused away: aten::cos (into triton_poi_fused_cos_0)." in compiled.why


# --- a baseline that holds -------------------------------------------------------------------------


def test_a_variant_doing_eagers_work_is_the_same_work_and_a_compiled_one_is_not() -> None:
    eager = load_report(os.path.join(DATA, "coscos_eager.json.gz"))
    compiled = load_report(os.path.join(DATA, "coscos_compiled.json.gz"))
    again = load_report(os.path.join(DATA, "coscos_eager.json.gz"))
    assert ab.same_work(eager, again) == "the same 6 kernels in the same 6 launches as eager"
    assert ab.same_work(eager, compiled) is None  # a compiled region, one fused kernel
    # The same kernels in fewer launches (a CUDA graph) is not the same work either.
    replayed = load_report(os.path.join(DATA, "coscos_eager.json.gz"))
    replayed.summary["launch_count"] = 1
    assert ab.same_work(eager, replayed) is None
    cpu = load_report(os.path.join(DATA, "cpu_only.json.gz"))
    assert str(ab.same_work(cpu, cpu)).startswith("the same ")
    assert ab.same_work(cpu, eager) is None


@pytest.mark.slow
def test_a_model_dynamo_cannot_compile_reads_fell_back() -> None:
    # Dynamo declines nn.GRU as a whole (torch._dynamo.config.allow_rnn is off): the compiled
    # function runs eager's code, and whatever its timing says, it is neither faster nor slower.
    torch.manual_seed(0)
    gru = torch.nn.GRU(16, 32, num_layers=2, batch_first=True).eval()

    def gru_forward(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return gru(x)[0]

    result = compare(gru_forward, torch.randn(4, 12, 16), variants=["compile"], budget_s=0.2)
    c = result["compile"]
    assert c.verdict == "fallback", result
    assert c.speedup is None and c.speedup_low is None and c.median_s is not None
    assert c.fallback_reason is not None
    assert "RNN, GRU, or LSTM" in c.fallback_reason
    assert "torch op calls as eager" in c.fallback_reason
    assert c.correct is True
    assert "unchanged: fell back to eager" in repr(result)
    note = next(n for n in result.notes if n.startswith("compile: unchanged"))
    assert "noise of this machine between identical work" in note
    assert result.to_dict()["variants"][1]["verdict"] == "fallback"


def test_paired_rounds_are_counted() -> None:
    r = compare(coscos, torch.ones(64), variants=[("same", coscos)], budget_s=0.05, rounds=6)
    # Every round, unless the host CPU changed speed meanwhile: then those at its best.
    assert r["same"].paired_rounds == r.rounds_used
    assert r.rounds_used == 6 or any(
        n.startswith("Medians and speed-ups are from") for n in r.notes
    )
    assert r["same"].verdict in ("noise", "faster", "slower")


def blocks(name: str, times: list[float]) -> ab.VariantResult:
    median = sorted(times)[len(times) // 2]
    return ab.VariantResult(name=name, kind="eager", times_s=times, median_s=median)


def test_blocks_at_two_levels_are_warned_about() -> None:
    eager = blocks("eager", [1e-3, 1.01e-3, 0.99e-3, 1e-3, 1.02e-3, 1e-3])
    graph = blocks("graph", [1e-4, 1e-4, 1.01e-4, 1.6e-4, 1.61e-4, 1.6e-4])
    notes = ab.agreement_notes(ab.ABResult(variants=[eager, graph]), None, gpu=False)
    assert len(notes) == 1 and notes[0].startswith("graph: its timed blocks sat at two levels")
    assert "(3 blocks)" in notes[0]


def test_a_baseline_far_from_the_reports_span_is_warned_about(fake_clock) -> None:
    delay = [0.004]

    def step(x: torch.Tensor) -> torch.Tensor:
        fake_clock.sleep(delay[0])
        return x + 1

    x = torch.ones(4)
    report = jupyter_brrr.profile(step, x, warmup=1, repeat=5)
    span = report.summary["span_s"]

    def eager_at(median: float) -> ab.ABResult:
        times = [median * f for f in (0.99, 1.0, 1.0, 1.01, 1.0)]
        eager = ab.VariantResult(name="eager", kind="eager", times_s=times, median_s=median)
        return ab.ABResult(variants=[eager])

    def warned(result: ab.ABResult, of: Report | None = report) -> bool:
        return any("eager baseline" in n for n in ab.agreement_notes(result, of, gpu=False))

    assert not warned(eager_at(span))
    assert not warned(eager_at(span * 1.03))  # within BASELINE_GAP
    assert warned(eager_at(span * 3))
    # A report of one profiled run has no timed span to hold the baseline to.
    single = copy.copy(report)
    single.summary = report.summary.copy()
    single.summary["span_source"] = "host_clock_profiled"
    assert not warned(eager_at(span * 3), single)

    # Live: the code got ten times slower since the report (a machine at another speed).
    delay[0] = 0.04
    slower = ab.run(ab.Target.of(step, (x,)), [("same", step)], budget_s=0.1, report=report)
    note = next(n for n in slower.notes if "eager baseline" in n)
    assert "differs from the report's span" in note and "median of 5 timed runs" in note


def test_dynamo_watch_reads_graph_break_and_recompile_messages() -> None:
    watch = DynamoWatch(frozenset({"<cell-1>"}))
    message = (
        "Graph break in user code at <cell-1>:3\n"
        "Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call:\n\n"
        "Failed to trace builtin operator\n"
        "  Explanation: Dynamo does not know how to trace builtin operator `print`\n"
        "  Hint: Avoid calling builtin `print`\n\n"
        "User code traceback:\n  File ..."
    )
    assert watch._graph_break(message) == (
        "line 3: Failed to trace builtin operator: Dynamo does not know how to trace builtin operator `print`"
    )
    reason = '1/0: n == 1      # z = y * n  # <cell-1>:6 in f\nUser stack trace:\n  File "<cell-1>", line 6, in f\n'
    assert watch._recompile(reason) == "line 6: guard failed: n == 1"
    assert watch._graph_break("something else") is None


def test_no_local_folder_in_a_variants_error() -> None:
    """An error that names a file in the home folder or the installed packages is kept, with
    those folders replaced: the A/B goes into shared notebooks."""
    import os
    import site

    home_file = os.path.join(os.path.expanduser("~"), "data", "train.csv")
    package_file = os.path.join(site.getsitepackages()[0], "somepkg", "mod.py")

    def missing(x):
        raise FileNotFoundError(f"no {home_file} (while importing {package_file})")

    r = compare(coscos, torch.ones(2), variants=[("reader", missing)], budget_s=0.05)
    error = r["reader"].error
    assert error is not None
    assert "no ~/data/train.csv (while importing <site-packages>/somepkg/mod.py)" in error
    text = json.dumps(r.to_dict()) + "\n".join(ab_text.variant_lines(r))
    assert os.path.expanduser("~") + os.sep not in text and site.getsitepackages()[0] not in text


def test_compare_inside_a_users_profiler_refuses_before_running() -> None:
    calls = []
    with torch.profiler.profile() as outer, pytest.raises(ProfilerInUseError):
        compare(lambda t: calls.append(t.cos()), torch.ones(2), variants="graph", budget_s=0.05)
    events = outer.events()
    assert events is not None
    assert calls == [] and not [e for e in events if e.name == "aten::cos"]


def test_torch_log_warnings_of_the_ab_runs_are_kept_out_of_the_output() -> None:
    """torch logs some warnings (Dynamo's "Profiler function ... will be ignored") through
    stream handlers of its own loggers: during the A/B's runs they are listed in its notes, not
    printed; before and after, the same logger prints as usual."""
    import io
    import logging

    stream = io.StringIO()
    logger = logging.getLogger("torch.brrr_test")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.propagate = False
    try:

        def chatty(x):
            logger.warning("record function will be ignored")
            return x.cos()

        chatty(torch.ones(2))
        assert stream.getvalue().count("will be ignored") == 1
        r = compare(chatty, torch.ones(2), variants=[("same", chatty)], budget_s=0.05)
        assert stream.getvalue().count("will be ignored") == 1  # none of the A/B's runs
        assert r.runs_total > 10
        assert any(
            "torch.brrr_test logged: record function will be ignored (" in n for n in r.notes
        ), r.notes
        logger.warning("after: will be ignored")
        assert "after: will be ignored" in stream.getvalue() and not handler.filters
    finally:
        logger.removeHandler(handler)


def test_the_host_speed_of_each_round_is_read_and_a_slow_host_told(monkeypatch) -> None:
    from jupyter_brrr.actions import ab as ab_module
    from jupyter_brrr.capture import clocks

    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    # The fixed loop's readings replayed (a real one moves with the machine's load): the host
    # steady at 100 µs, its best in this process.
    monkeypatch.setattr(ab_module, "host_loop_s", lambda: 100e-6)
    monkeypatch.setattr(clocks, "_fastest_host_loop_s", 100e-6)
    r = jupyter_brrr.compare(f, torch.ones(8), variants=[("same", f)], budget_s=0.05)
    assert r.host_loop_s == [100e-6] * (r.rounds + 1)  # before each round, after the last
    assert r.host_slowdown == pytest.approx(1.0)
    assert not any("slower during the rounds" in n for n in r.notes)
    # The host's best as read earlier in this process, ten times faster: the A/B says that its
    # speed-ups were measured on a slower host.
    monkeypatch.setattr(clocks, "_fastest_host_loop_s", 10e-6)
    slow = jupyter_brrr.compare(f, torch.ones(8), variants=[("same", f)], budget_s=0.05)
    assert slow.host_slowdown is not None and slow.host_slowdown > 5
    assert any("slower during the rounds" in n and "same host speed" in n for n in slow.notes)


def test_speedups_use_the_rounds_at_the_hosts_best_speed(monkeypatch) -> None:
    """The host readings replayed from an H200 A/B of a GRU (bench/RESULTS.md, host drift): the
    host at its usual 91-100 us for the fixed loop, with slow episodes at 150-180 us. The rounds
    whose readings (before and after) were slow are left out of the medians and speed-ups."""
    from jupyter_brrr.actions import ab as ab_module

    readings = iter([91e-6, 95e-6, 100e-6, 170e-6, 180e-6, 150e-6] + [93e-6] * 10_000)
    monkeypatch.setattr(ab_module, "host_loop_s", lambda: next(readings))

    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    r = jupyter_brrr.compare(f, torch.ones(8), variants=[("same", f)], budget_s=0.2, rounds=12)
    assert r.rounds == 12 and len(r.host_loop_s) == 13
    # Rounds 2-5 touch a slow reading (each round takes the slower of its two).
    assert r["same"].paired_rounds == r.rounds_used == 8
    assert r["eager"].median_s == pytest.approx(
        float(np.median([t for k, t in enumerate(r["eager"].times_s) if k not in (2, 3, 4, 5)]))
    )
    note = next(n for n in r.notes if n.startswith("Medians and speed-ups are from"))
    assert "the 8 of 12 rounds" in note and "1.94x slower" in note
