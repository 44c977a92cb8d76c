"""Fixes applied without editing the code, as A/B variants (actions/variants.py: tf32, bf16,
channels_last, cudnn_benchmark), and the verdict of a recommendation's fix against the replay's
prediction (actions/fixes.py). On the CPU: bf16 autocast and channels_last convolutions run;
TF32 and cuDNN's search are not applicable there, and say so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import jupyter_brrr
from jupyter_brrr.actions.fixes import FIX_OF_CAUSE, VERDICTS, judge, predicted_saving, try_fix
from jupyter_brrr.actions.variants import parse_variants
from jupyter_brrr.views.text import summary_lines

DATA = Path(__file__).parent / "data" / "advice"
QUICK = {"budget_s": 0.3, "rounds": 3, "cpu": True, "profile": False}


def _conv() -> tuple[torch.nn.Sequential, torch.Tensor]:
    torch.manual_seed(0)
    conv = torch.nn.Sequential(
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3)
    )
    return conv, torch.randn(4, 16, 24, 24)


def _load(name: str) -> jupyter_brrr.Report:
    report = jupyter_brrr.load(DATA / name)
    assert isinstance(report, jupyter_brrr.Report)
    return report


def test_the_fixes_are_variants_by_name() -> None:
    specs = parse_variants("tf32,bf16,channels_last,cudnn_benchmark")
    assert [(s.name, s.kind, s.mode) for s in specs[1:]] == [
        ("tf32", "fix", "tf32"),
        ("bf16", "fix", "bf16"),
        ("channels_last", "fix", "channels_last"),
        ("cudnn_benchmark", "fix", "cudnn_benchmark"),
    ]
    with pytest.raises(ValueError, match="a fix: tf32, bf16"):
        parse_variants("fp8")


def test_bf16_and_channels_last_run_on_the_cpu_and_tf32_says_why_not() -> None:
    conv, x = _conv()

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    result = jupyter_brrr.compare(step, x, variants="bf16,channels_last,tf32", **QUICK)
    bf16, last, tf32 = result["bf16"], result["channels_last"], result["tf32"]
    # bf16: computed in bf16 (a rounding error eager does not have), within bf16's tolerance.
    assert bf16.correct is True and bf16.max_rel_err and bf16.max_rel_err > 1e-4
    assert last.correct is True and last.median_s
    assert tf32.verdict == "failed" and "needs CUDA" in (tf32.error or "")
    # The variant converted the module for its own runs only.
    first = conv[0]
    assert isinstance(first, torch.nn.Conv2d) and first.weight.is_contiguous()
    # Settings are the user's again after the A/B.
    assert torch.get_float32_matmul_precision() == "highest"
    assert not torch.is_autocast_enabled("cpu")


def test_channels_last_converts_the_globals_a_cell_reads_only_while_it_runs() -> None:
    conv, x = _conv()
    seen: list[bool] = []
    namespace = {"conv": conv, "x": x, "torch": torch, "seen": seen}
    exec(
        "def cell():\n"
        "    seen.append(x.is_contiguous(memory_format=torch.channels_last))\n"
        "    with torch.no_grad():\n"
        "        return conv(x)\n",
        namespace,
    )
    cell = namespace["cell"]
    result = jupyter_brrr.compare(cell, variants="channels_last", **QUICK)
    assert result["channels_last"].correct is True
    assert True in seen and False in seen  # channels_last in the variant, as it was in eager
    assert namespace["x"] is x and x.is_contiguous()


def test_a_fix_of_a_recommendation_gets_a_verdict_with_its_prediction() -> None:
    # The H200 recording of a float32 NCHW convolution under autocast: its first
    # recommendation is channels_last, predicted by the replay; tried here on a CPU
    # convolution (the machinery, not the H200's figures).
    report = _load("conv_channels_first_autocast.slow.json.gz")
    assert report.recommendations[0]["cause"] == "layout"
    conv, x = _conv()

    def step(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return conv(x)

    entry = try_fix(report, 0, step, x, **QUICK)
    assert report.recommendations[0]["try"] is entry
    assert entry["fix"] == "channels_last" and entry["verdict"] in VERDICTS
    # The prediction is the replay's for the A/B's own eager time (a CPU's here, so the H200
    # step's GPU floor may leave it nothing to save: compared with the same call, not with 0)...
    assert entry["predicted_s"] == pytest.approx(
        predicted_saving(report, report.recommendations[0], entry["base_s"])
    )
    # ... and at the step's own H200 time the replay predicts a real saving.
    assert (predicted_saving(report, report.recommendations[0], report.summary["span_s"]) or 0) > 0
    assert entry["measured_s"] is not None and entry["correct"] is True
    assert entry["reason"]
    # Saved with the report and read back.
    again = jupyter_brrr.Report.from_json(report.to_json())
    assert again.recommendations[0]["try"]["verdict"] == entry["verdict"]


def test_a_small_gain_whose_rounds_all_exceed_one_is_not_refuted() -> None:
    # The tour's cell 22 on the H200 (ninth session): a CUDA graph predicted to save 0.0112 ms
    # of a 0.434 ms step (2.6%) measured 1.02x, its middle rounds 1.01-1.02x. The A/B calls a
    # gain under 2% noise; the verdict must not call it "no gain".
    predicted = {"predicted_s": 0.0112e-3, "predicted_low_s": 0.0060e-3}
    small = judge(0.434e-3, 1.02, 1.01, 1.02, predicted)
    assert small["verdict"] == "confirmed", small
    assert small["measured_s"] == pytest.approx(0.434e-3 * (1 - 1 / 1.02))
    short = judge(0.434e-3, 1.004, 1.002, 1.006, {**predicted, "predicted_low_s": 0.0100e-3})
    assert short["verdict"] == "smaller than predicted", short
    assert "predicted 0.0112 ms" in short["reason"]
    # A range that holds 1x, or lies below it, is refuted, and the reason says which.
    none = judge(0.434e-3, 1.01, 0.99, 1.03, predicted)
    assert none["verdict"] == "refuted" and none["reason"].startswith("no gain: 1.01x")
    slower = judge(0.434e-3, 0.9, 0.88, 0.93, predicted)
    assert slower["verdict"] == "refuted" and slower["reason"].startswith("slower: 0.90x")
    assert slower["measured_s"] < 0


def test_a_fix_that_cannot_run_here_or_needs_a_code_change_is_not_applicable() -> None:
    tf32 = _load("fp32_matmul_tf32_off.slow.json.gz")
    a = torch.randn(64, 64)
    entry = try_fix(tf32, 0, lambda a: a @ a, a, **QUICK)
    assert entry["fix"] == "tf32" and entry["verdict"] == "not applicable"
    assert "needs CUDA" in entry["reason"]
    attention = _load("hand_attention.slow.json.gz")
    entry = try_fix(attention, 0, lambda a: a @ a, a, **QUICK)
    assert entry["verdict"] == "not applicable" and "needs a code change" in entry["reason"]


# --- in the notebook: %%brrr --ab with a fix, --try-fixes ---------------------------------------------


@pytest.fixture(scope="module")
def ip(ipython_shell):
    ipython_shell.run_line_magic("load_ext", "jupyter_brrr")
    ipython_shell.run_cell(
        "import torch\n"
        "conv = torch.nn.Conv2d(16, 32, 3, padding=1)\n"
        "images = torch.randn(4, 16, 24, 24)"
    )
    return ipython_shell


def _cell(ip, line: str) -> str:
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        ip.run_cell_magic("brrr", line, "with torch.no_grad():\n    y = conv(images)\ny")
    return out.stdout


def test_a_cell_gets_the_fixes_as_variants_of_its_ab(ip) -> None:
    _cell(ip, "--cpu --ab bf16,channels_last --ab-budget 0.2")
    report = ip.user_ns["_brrr"]
    names = [v["name"] for v in report.ab["variants"]]
    assert names == ["eager", "bf16", "channels_last"]
    assert all(v["correct"] is True for v in report.ab["variants"][1:]), report.ab["variants"]
    # The namespace is the user's again: the input and the module in their own layout.
    assert ip.user_ns["images"].is_contiguous() and ip.user_ns["conv"].weight.is_contiguous()


def test_try_fixes_on_a_cell_without_recommendations_runs_nothing_and_says_so(ip) -> None:
    out = _cell(ip, "--cpu --try-fixes")
    report = ip.user_ns["_brrr"]
    assert report.recommendations == [] and report.ab is None
    assert "no recommendation has a fix that runs without editing the code" in out


def test_the_verdict_is_shown_with_its_recommendation_in_the_static_views() -> None:
    report = _load("fp32_matmul_tf32_off.slow.json.gz")
    a = torch.randn(64, 64)
    try_fix(report, 0, lambda a: a @ a, a, **QUICK)
    again = jupyter_brrr.Report.from_json(report.to_json())  # as a saved notebook holds it
    text = "\n".join(summary_lines(again))
    assert "Tried (tf32): not applicable" in text and "needs CUDA" in text
    html = again._repr_html_()
    assert "Tried (tf32): not applicable" in html


# --- the predicted saving of each fix against the H200's measurement ------------------------------
#
# bench/data/h200/fixes holds the H200 run of ``bench/advice_cases.py --try-fixes --keep`` (each
# case's report and trace, and every fix's row: the A/B's eager time ``base_s`` and the measured
# saving). The prediction is made again from the trace, as ``--replay-fixes`` does.

KEPT = Path(__file__).resolve().parents[1] / "bench" / "data" / "h200" / "fixes"


def _reanalysed(case: str) -> jupyter_brrr.Report:
    """The kept report of ``case`` analysed again from its trace (``--replay-fixes`` does)."""
    import sys

    sys.path.insert(0, str(KEPT.parents[2]))
    import advice_cases  # pyright: ignore[reportMissingImports]  # bench/, put on the path above

    return advice_cases.reanalyse(KEPT, case)


def _kept(case: str, fix: str) -> tuple[jupyter_brrr.Report, dict, dict]:
    import json

    report = _reanalysed(case)
    row = next(
        r
        for r in json.loads((KEPT / "fixes.json").read_text())
        if (r["case"], r["fix"]) == (case, fix)
    )
    cause = next(c for c, f in FIX_OF_CAUSE.items() if f == fix)
    # A fix the replay rules out (a CUDA graph in a loop the GPU's work fills) is predicted too.
    recommendation = next(
        r for r in [*report.recommendations, *report.ruled_out] if r["cause"] == cause
    )
    return report, recommendation, row


@pytest.mark.parametrize(
    "case",
    ["conv_channels_first_autocast", "fft_convolution", "stft_magnitude", "launch_bound_loop"],
)
def test_a_cuda_graph_saves_what_the_gpu_waits_beyond_its_own_work_in_back_to_back_calls(
    case: str,
) -> None:
    # The A/B times calls back to back: the host launches the next call while the GPU runs this
    # one. On the conv, FFT and STFT steps the GPU's own work (1.145, 0.139, 0.333 ms) is about
    # the eager call (1.151, 0.159, 0.334 ms): the graph measured 0.017, 0.015, 0.009 ms, where
    # one call on its own (the replay) waits 0.2, 0.13, 0.1 ms for launches.
    # The launch-bound loop's A/B was timed after earlier captures, when CUPTI's callbacks
    # slowed each eager launch (bench/profiler_aftereffect.py): the graph measured a saving 1%
    # above the eager step itself, where the replay, the profiler's cost out, saves 95% of it.
    report, recommendation, row = _kept(case, "graph")
    predicted = predicted_saving(report, recommendation, row["base_s"])
    assert predicted is not None
    tolerance = 0.07 if case == "launch_bound_loop" else 0.03
    assert abs(predicted - row["measured_s"]) < tolerance * row["step_s"], (predicted, row)


def test_compile_is_predicted_with_the_launches_its_fused_kernel_saves() -> None:
    # Five elementwise kernels become one: their launches go too, and the host no longer sets
    # the pace once the kernels are 5x shorter (0.374 ms predicted without; 0.497 measured).
    report, recommendation, row = _kept("elementwise_chain", "compile")
    predicted = predicted_saving(report, recommendation, row["base_s"])
    assert predicted is not None
    assert abs(predicted - row["measured_s"]) < 0.1 * row["step_s"], (predicted, row)


def test_channels_last_is_predicted_as_the_transposes_it_removes_replayed_once() -> None:
    # The convolution's kernels made shorter by the transposes' time (the advice's own saving,
    # 0.362 of its 0.683 ms), not by the saving already replayed from it (0.341 ms: a
    # prediction of 0.281 ms where the replay of the transposes gives 0.319).
    from jupyter_brrr.analysis import causal

    report, recommendation, _ = _kept("conv_channels_first_autocast", "channels_last")
    changes = causal.fix_changes(recommendation, report.graph)  # pyright: ignore[reportArgumentType]
    assert changes is not None
    (op,) = recommendation["ops"]
    transposes = recommendation["saving_bound_s"]
    factor = op["time_s"] / (op["time_s"] - transposes)
    assert changes["ops"] == {(op["name"], op["shapes"]): pytest.approx(factor)}


def test_channels_last_predicts_what_the_fixed_recording_saves() -> None:
    # The H200's slow and fixed recordings of the autocast NCHW convolution: the fixed one (model
    # and input channels_last) runs without cuDNN's two transposes, 1.346 -> 0.952 ms.
    import json

    from jupyter_brrr.analysis import analyze as analysis
    from jupyter_brrr.analysis import step_graph
    from jupyter_brrr.costs import peaks as peak_table
    from jupyter_brrr.trace import events

    def recorded(version: str) -> tuple[jupyter_brrr.Report, float]:
        path = DATA / f"conv_channels_first_autocast.{version}.json.gz"
        meta = json.loads(path.with_name(path.name.replace(".json.gz", ".meta.json")).read_text())
        trace = events.read_trace(path)
        peaks, _ = peak_table.peaks_for(analysis.device_name(trace), measure_if_unknown=False)
        result = analysis.analyze(
            trace,
            peaks,
            span_s=meta["event_median_s"],
            span_source="cuda_events_unprofiled",
            math_mode=meta["math_mode"],
        )
        result.graph = step_graph.build(trace, result.kernels)
        return jupyter_brrr.Report.from_analysis(result), meta["event_median_s"]

    slow, slow_s = recorded("slow")
    _, fixed_s = recorded("fixed")
    first = slow.recommendations[0]
    assert FIX_OF_CAUSE[first["cause"]] == "channels_last"
    predicted = predicted_saving(slow, first, slow_s)
    assert predicted is not None
    assert abs(predicted - (slow_s - fixed_s)) < 0.05 * slow_s, (predicted, slow_s - fixed_s)


# --- the pinned-copy fix -----------------------------------------------------------------------------


def test_channels_last_converts_the_tensors_a_closure_reads_only_while_it_runs() -> None:
    # bench/advice_cases.py's steps are closures: the H200 A/B of the NCHW convolution measured
    # no gain (1.00x) while the input stayed NCHW in the closure and only the module was converted.
    conv, x = _conv()
    seen: list[bool] = []

    def build() -> Callable[[], torch.Tensor]:
        def step() -> torch.Tensor:
            seen.append(x.is_contiguous(memory_format=torch.channels_last))
            with torch.no_grad():
                return conv(x)

        return step

    step = build()
    result = jupyter_brrr.compare(step, variants="channels_last", **QUICK)
    assert result["channels_last"].correct is True
    assert True in seen and False in seen  # channels_last in the variant, as it was in eager
    cells = [c.cell_contents for c in getattr(step, "__closure__", None) or ()]
    assert any(c is x for c in cells) and x.is_contiguous()


def test_the_tensors_a_cell_reads_are_found_in_its_globals_and_its_closure() -> None:
    from jupyter_brrr.actions.variants import slots_read

    host, weights = torch.randn(8, 4), torch.randn(4, 4)
    namespace: dict = {"weights": weights, "torch": torch}
    exec(
        "def make(host):\n    def cell():\n        return host @ weights\n    return cell\n",
        namespace,
    )
    cell = namespace["make"](host)
    slots = slots_read(cell)
    values = [slot.get() for slot in slots]
    assert any(v is host for v in values) and any(v is weights for v in values)
    # A slot is put back as it was: the variant swaps its copies in for each call only.
    for slot in slots:
        before = slot.get()
        slot.set("a copy")
        assert slot.get() == "a copy"
        slot.set(before)
    assert cell().shape == (8, 4)


def test_the_pinned_copy_fix_is_the_host_copys_and_says_why_not_on_the_cpu() -> None:
    assert FIX_OF_CAUSE["host copy"] == "pinned"
    assert [(s.name, s.kind) for s in parse_variants("pinned")[1:]] == [("pinned", "fix")]
    report = _load("host_copy_in_step.slow.json.gz")
    n = next(i for i, r in enumerate(report.recommendations) if r["cause"] == "host copy")
    host, w = torch.randn(256, 64), torch.randn(64, 64)

    def step() -> torch.Tensor:
        return host.to("cpu") @ w

    entry = try_fix(report, n, step, **QUICK)
    assert entry["fix"] == "pinned" and entry["verdict"] == "not applicable"
    assert "needs CUDA: pinned host memory" in entry["reason"]
    # Predicted as the copies made asynchronous from pinned memory.
    # The prediction is the replay's for the A/B's own eager time (a CPU's here, so the H200
    # step's GPU floor may leave it nothing to save: compared with the same call, not with 0)...
    assert entry["predicted_s"] == pytest.approx(
        predicted_saving(report, report.recommendations[0], entry["base_s"])
    )
    # ... and at the step's own H200 time the replay predicts a real saving.
    assert (predicted_saving(report, report.recommendations[0], report.summary["span_s"]) or 0) > 0
    assert not host.is_pinned()

    layer = torch.nn.Linear(64, 64)  # a module: its weights are no copy's source

    def makes_its_own() -> torch.Tensor:  # the data-loader case: a new host tensor each call
        return layer(torch.randn(256, 64).to("cpu"))

    entry = try_fix(report, n, makes_its_own, **QUICK)
    assert entry["verdict"] == "not applicable" and "no host tensor to pin" in entry["reason"]
    assert "pin_memory=True" in entry["reason"]


def test_the_pinned_copy_fix_saves_no_more_than_the_copy_on_a_step_with_a_long_host_lead_in() -> (
    None
):
    # The data-loader stall: 13 ms of host work before a 1.5 ms GPU step with an 0.8 ms copy.
    # The share the copy saves is of the whole call, host lead-in included (the A/B's calls run
    # it in series too), not of the GPU's span alone (7.6 ms predicted before).
    report = _reanalysed("dataloader_stall")
    copy = next(r for r in report.recommendations if r["cause"] == "host copy")
    predicted = predicted_saving(report, copy, report.summary["span_s"])
    assert predicted is not None and 0 < predicted <= copy["saving_bound_s"]


# --- the fix's settings: once around a block of timed calls, and the user's own after ------------

# torch.backends' float32 precisions (torch 2.9's API), by path.
_PRECISIONS = (
    *("", "cuda.matmul", "cudnn", "cudnn.conv", "cudnn.rnn"),
    *("mkldnn", "mkldnn.matmul", "mkldnn.conv", "mkldnn.rnn"),
)


def _precisions() -> dict[str, str]:
    import functools

    backends = torch.backends
    found = {
        path: functools.reduce(getattr, path.split("."), backends).fp32_precision  # pyright: ignore[reportAttributeAccessIssue]  # torch 2.9's API, untyped
        for path in _PRECISIONS
        if path
    }
    return {**found, "": backends.fp32_precision, "matmul": torch.get_float32_matmul_precision()}  # pyright: ignore[reportAttributeAccessIssue]  # torch 2.9's API, untyped


@pytest.fixture
def mixed_user_flags():
    """The user's TF32 flags set with torch 2.9's API, conv and RNN apart (which the legacy
    ``cudnn.allow_tf32`` cannot even read), the matmul's inherited ("none"); put back after."""
    if not hasattr(torch.backends, "fp32_precision"):
        pytest.skip("torch before 2.9 has no fp32_precision")
    before = _precisions()
    cudnn = torch.backends.cudnn
    cudnn.conv.fp32_precision, cudnn.rnn.fp32_precision = "tf32", "ieee"  # pyright: ignore[reportAttributeAccessIssue]  # torch 2.9's API, untyped
    torch.backends.cuda.matmul.fp32_precision = "none"  # pyright: ignore[reportAttributeAccessIssue]
    yield _precisions()
    for path in _PRECISIONS[1:]:
        import functools

        functools.reduce(getattr, path.split("."), torch.backends).fp32_precision = before[path]  # pyright: ignore[reportAttributeAccessIssue]  # torch 2.9's API, untyped


def _tf32_variant(fn: Callable[[], object]):
    from jupyter_brrr.actions.variants import Target, make_variant

    # Made for the GPU's A/B but not prepared: prepare() would refuse (no CUDA here); calling
    # it applies the fix's settings all the same.
    return make_variant(parse_variants("tf32")[1], Target.of(fn), gpu=True)


def test_the_tf32_fix_puts_the_users_own_flags_back_exactly_even_on_an_error(
    mixed_user_flags,
) -> None:
    seen: list[str] = []

    def step() -> None:
        seen.append(torch.backends.cuda.matmul.fp32_precision)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]  # torch 2.9's API, untyped
        assert torch.backends.cudnn.conv.fp32_precision == "tf32"  # pyright: ignore[reportAttributeAccessIssue]
        assert torch.backends.cudnn.rnn.fp32_precision == "tf32"  # pyright: ignore[reportAttributeAccessIssue]

    variant = _tf32_variant(step)
    variant.call()  # one call on its own (a warm-up call): the settings around it
    assert _precisions() == mixed_user_flags
    with variant.held():  # a block of timed calls
        for _ in range(3):
            variant.call()
    assert seen == ["tf32"] * 4
    assert _precisions() == mixed_user_flags
    with pytest.raises(ZeroDivisionError), variant.held():
        variant.call()
        raise ZeroDivisionError  # the A/B's Cancel, or the user's code failing
    assert _precisions() == mixed_user_flags


def test_the_tf32_fix_sets_its_flags_once_per_block_not_in_each_call(monkeypatch) -> None:
    from jupyter_brrr.actions import variants

    entered: list[int] = []
    real = variants.tf32_allowed

    def counted():
        entered.append(1)
        return real()

    monkeypatch.setattr(variants, "tf32_allowed", counted)
    calls: list[int] = []
    variant = _tf32_variant(lambda: calls.append(1))
    with variant.held():
        for _ in range(50):
            variant.call()
    assert (len(calls), len(entered)) == (50, 1)


def test_the_ab_sets_a_fixs_settings_once_around_each_timed_block(monkeypatch) -> None:
    # TF32 needs CUDA; bf16 runs on the CPU and is a Fixed variant too: the settings a user
    # makes once (TF32's flags, cuDNN's search, converted tensors) are entered once per timed
    # block, not per call (autocast stays around each call, as a user writes it).
    from jupyter_brrr.actions.variants import Fixed

    entered: list[int] = []
    real = Fixed._settings

    def counted(self):
        entered.append(1)
        return real(self)

    monkeypatch.setattr(Fixed, "_settings", counted)
    a = torch.randn(32, 32)
    # A call that does next to nothing: blocks of many calls, however loaded the CPU.
    result = jupyter_brrr.compare(lambda: a, variants="bf16", **QUICK)
    fixed = result["bf16"]
    assert fixed.correct is True
    # The warm-up calls each enter it (one at a time); the timed calls enter it once a block
    # (a pilot round may be timed again once replanned).
    assert fixed.timed_runs > 10 * 2 * QUICK["rounds"]
    assert len(entered) <= fixed.runs - fixed.timed_runs + 2 * QUICK["rounds"]
