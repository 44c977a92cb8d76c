"""Tests of the cost model.

GEMM, convolution and attention FLOPs are checked against ``torch.utils.flop_counter`` by running
the real op under ``FlopCounterMode`` and costing the SAME call as the profiler recorded it (a CPU
trace exported with ``record_shapes=True``), so the argument layouts are the real ones. The fused
attention kernels exist only on GPUs: they run on meta tensors, which both the profiler and
FlopCounterMode follow. Elementwise ops, reductions, norms, softmax, gathers and copies are
checked against hand counts of FLOPs and bytes. The last tests use a real H200 trace.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from jupyter_brrr.costs import formula_registry as registry
from jupyter_brrr.costs import formulas
from jupyter_brrr.costs import model as costs
from jupyter_brrr.costs.dtypes import SCALAR_TYPE_CODES
from jupyter_brrr.costs.formulas.attention import ATTENTION_LAYOUTS
from jupyter_brrr.costs.formulas.convolution import CONV_LAYOUTS
from jupyter_brrr.costs.model import OpCost, add_costs, dtype_key, dtype_size, has_model, op_cost

DATA = Path(__file__).parent / "data"
GPT2_TRACE = DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"

F32, BF16, I64 = 4, 2, 8  # bytes per element


def _seeded(shape: tuple[int, ...], grad: bool = False, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(
        *shape, generator=torch.Generator().manual_seed(0), dtype=dtype
    ).requires_grad_(grad)


def _meta(*shape: int) -> torch.Tensor:
    return torch.empty(*shape, device="meta", dtype=torch.bfloat16, requires_grad=True)


# Each case is one small workload; the profiler records its ops, FlopCounterMode counts them.
X = (4, 8, 16)  # 512 elements
N = math.prod(X)
B, H, SQ, SK, D = 2, 3, 16, 12, 8  # attention sizes (SQ != SK catches swapped axes)


def _conv_backward(**kwargs: Any) -> None:
    x = _seeded((2, 4, 10, 10), grad=kwargs.pop("input_grad", True))
    w = _seeded((6, 4 // kwargs.get("groups", 1), 3, 3), grad=True)
    F.conv2d(x, w, None, **kwargs).sum().backward()


def _conv_transpose_backward() -> None:
    x, w = _seeded((2, 4, 5, 5), grad=True), _seeded((4, 3, 3, 3), grad=True)
    F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).sum().backward()


def _fused_attention(op: str, causal: bool) -> None:
    q, k, v = _meta(B, H, SQ, D), _meta(B, H, SK, D), _meta(B, H, SK, D)
    aten = torch.ops.aten
    if op == "flash":
        out = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)[0]
    elif op == "efficient":
        out = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal)[0]
    else:
        out = aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal)[0]
    out.backward(torch.empty_like(out))


def _embedding_bag() -> None:
    bag = torch.nn.EmbeddingBag(100, 8, mode="sum")
    indices = torch.arange(40) * 7 % 100
    bag(indices, torch.arange(0, 40, 4)).sum().backward()


def _fused_adamw() -> None:
    params = [torch.nn.Parameter(_seeded((4, 3))) for _ in range(3)]
    for p in params:
        p.grad = torch.ones_like(p)
    torch.optim.AdamW(params, lr=0.1, fused=True).step()


def _layer_norm_backward() -> None:
    x = _seeded(X, grad=True)
    w, b = _seeded((16,), grad=True), _seeded((16,), grad=True)
    F.layer_norm(x, (16,), w, b).sum().backward()


def _softmax_backward() -> None:
    x = _seeded(X, grad=True)
    (F.softmax(x, dim=-1) * _seeded(X)).sum().backward()


CASES: dict[str, Callable[[], Any]] = {
    "mm": lambda: _seeded((32, 16)) @ _seeded((16, 24)),
    "addmm": lambda: torch.addmm(_seeded((24,)), _seeded((32, 16)), _seeded((16, 24))),
    "bmm": lambda: torch.bmm(_seeded((5, 32, 16)), _seeded((5, 16, 24))),
    "baddbmm": lambda: torch.baddbmm(
        _seeded((5, 32, 24)), _seeded((5, 32, 16)), _seeded((5, 16, 24))
    ),
    "linear": lambda: F.linear(_seeded(X), _seeded((32, 16)), _seeded((32,))),
    "matmul": lambda: torch.matmul(_seeded((3, 5, 32, 16)), _seeded((16, 24))),
    "conv": lambda: _conv_backward(stride=2, padding=1),
    "conv_dilated": lambda: _conv_backward(padding=2, dilation=2, input_grad=False),
    "conv_grouped": lambda: _conv_backward(padding=1, groups=2),
    "conv_transpose": _conv_transpose_backward,
    "sdpa": lambda: F.scaled_dot_product_attention(
        _seeded((B, H, SQ, D)), _seeded((B, H, SK, D)), _seeded((B, H, SK, D))
    ),
    "sdpa_causal": lambda: F.scaled_dot_product_attention(
        _seeded((B, H, SQ, D)), _seeded((B, H, SQ, D)), _seeded((B, H, SQ, D)), is_causal=True
    ),
    **{
        f"{op}{suffix}": (lambda op=op, causal=causal: _fused_attention(op, causal))
        for op in ("flash", "efficient", "cudnn")
        for suffix, causal in (("", False), ("_causal", True))
    },
    "cos": lambda: _seeded(X).cos(),
    "add_broadcast": lambda: _seeded(X) + _seeded((16,)),
    "mul_scalar": lambda: _seeded(X) * 0.5,
    "add_inplace": lambda: _seeded(X).add_(_seeded((8, 1)), alpha=2),
    "gt": lambda: _seeded(X) > 0,
    "gelu": lambda: F.gelu(_seeded(X)),
    "sum_dim": lambda: _seeded(X).sum(dim=1),
    "sum_all": lambda: _seeded(X).sum(),
    "mean_keepdim": lambda: _seeded(X).mean(dim=-1, keepdim=True),
    "amax": lambda: _seeded(X).amax(dim=(0, 2)),
    "softmax": _softmax_backward,
    "log_softmax": lambda: F.log_softmax(_seeded(X), dim=1),
    "layer_norm": _layer_norm_backward,
    "rms_norm": lambda: F.rms_norm(_seeded(X), (16,), _seeded((16,))),
    "batch_norm": lambda: F.batch_norm(
        _seeded((2, 3, 5, 5)), torch.zeros(3), torch.ones(3), _seeded((3,)), _seeded((3,)), True
    ),
    "embedding": lambda: F.embedding(torch.arange(32).reshape(4, 8) % 10, _seeded((100, 16))),
    "to_bf16": lambda: _seeded(X).to(torch.bfloat16),
    "fill": lambda: _seeded(X).fill_(1.0).zero_(),
    # Hand models for what "every input read whole" gets wrong.
    "embedding_bag": _embedding_bag,
    "index_add": lambda: torch.zeros(10, 8).index_add_(
        0, torch.tensor([1, 3, 3]), torch.ones(3, 8)
    ),
    "scatter_add": lambda: torch.zeros(10, 8).scatter_add_(
        0, torch.tensor([[1] * 8, [3] * 8, [3] * 8]), torch.ones(3, 8)
    ),
    "index_put": lambda: torch.zeros(10, 8).index_put_(
        (torch.tensor([1, 3, 3]),), torch.ones(3, 8), accumulate=True
    ),
    "nll_loss": lambda: F.cross_entropy(
        _seeded((6, 5), grad=True), torch.tensor([0, 1, 2, 3, 4, 0])
    ).backward(),
    "fused_adamw": _fused_adamw,
    "foreach": lambda: torch._foreach_addcdiv_(  # pyright: ignore[reportPrivateImportUsage]  # public, underscored
        [torch.ones(3), torch.ones(2, 2)],
        [torch.ones(3), torch.ones(2, 2)],
        [torch.ones(3), torch.ones(2, 2)],
        0.5,
    ),
    # No formula here: costed from their output shapes on the meta device.
    "cat": lambda: torch.cat([torch.ones(3, 4), torch.ones(5, 4)]),
    "isneginf": lambda: torch.isneginf(torch.ones(7)),
    "upsample": lambda: F.interpolate(torch.ones(1, 2, 4, 4), scale_factor=2, mode="nearest"),
    "topk": lambda: torch.topk(_seeded((6, 10)), 3),
    "tensordot": lambda: torch.tensordot(
        _seeded((4, 5, 6)),
        _seeded((5, 6, 7)),
        ([1, 2], [0, 1]),  # pyright: ignore[reportArgumentType]  # torch takes two dim lists too
    ),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """Case name -> the cpu_op events (name, dims, types, concrete) the profiler recorded in it."""
    path = tmp_path_factory.mktemp("trace") / "cases.json"
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        for name, case in CASES.items():
            with torch.profiler.record_function(f"case:{name}"):
                case()
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    windows = {
        e["name"].removeprefix("case:"): (e["ts"], e["ts"] + e["dur"])
        for e in events
        if str(e.get("name", "")).startswith("case:")
    }
    ops: dict[str, list[dict]] = {name: [] for name in CASES}
    for e in events:
        if e.get("cat") != "cpu_op":
            continue
        for name, (start, end) in windows.items():
            if start <= e["ts"] <= end:
                ops[name].append(e)
    return ops


def _event(recorded: dict[str, list[dict]], case: str, op: str) -> dict:
    """The first call of ``op`` in ``case``, as the trace recorded it."""
    matches = [e for e in recorded[case] if e["name"] == op]
    assert matches, f"{op} not recorded in {case}: {sorted({e['name'] for e in recorded[case]})}"
    return matches[0]


def _cost(recorded: dict[str, list[dict]], case: str, op: str) -> OpCost:
    args = _event(recorded, case, op)["args"]
    cost = op_cost(op, args["Input Dims"], args["Input type"], args.get("Concrete Inputs"))
    assert cost is not None, (op, args)
    return cost


def _flop_counts(case: str) -> dict[str, int]:
    """FlopCounterMode's count per op ("aten::mm": ...) for one run of the case."""
    with FlopCounterMode(display=False) as counter:
        CASES[case]()
    return {
        str(op).replace(".", "::", 1): count
        for op, count in counter.get_flop_counts()["Global"].items()
    }


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------


def test_each_family_registers_its_own_formulas() -> None:
    """Every formula comes from a module of ``costs.formulas``, each of those registers some,
    and an op name cannot get a second formula (two families claiming one op)."""
    defined_in = {
        getattr(formula, "func", formula).__module__
        for formula in [*registry.FORMULAS.values(), *registry.LAUNCH_FORMULAS.values()]
    }
    families = {f"jupyter_brrr.costs.formulas.{name}" for name in formulas.__all__}
    assert defined_in <= families
    # compiled registers by name prefix only
    assert families - defined_in == {"jupyter_brrr.costs.formulas.compiled"}
    assert registry.formula_for("triton_poi_fused_add_0") is not None
    with pytest.raises(ValueError, match="aten::mm has a formula already"):
        registry.add(lambda args: None, "aten::mm")
    with pytest.raises(ValueError, match="aten::index has a formula already"):
        registry.add(lambda args: None, "aten::index")


def test_dtype_key_and_size() -> None:
    assert dtype_key("c10::BFloat16") == "bf16" and dtype_size("c10::BFloat16") == 2
    assert dtype_key("float") == "fp32" and dtype_size("float") == 4
    assert dtype_key("double") == "fp64" and dtype_size("double") == 8
    assert dtype_key("c10::Half") == "fp16"
    assert dtype_key("c10::Float8_e4m3fn") == "fp8" and dtype_size("c10::Float8_e4m3fn") == 1
    assert dtype_key("signed char") == "int8"
    # Wider integers run on the CUDA cores: the fp32 peak, not the int8 tensor cores.
    assert dtype_key("long int") == "fp32" and dtype_size("long int") == 8
    assert dtype_size("bool") == 1
    for not_a_tensor in ("Scalar", "ScalarList", "TensorList", "", "double[]"):
        assert dtype_key(not_a_tensor) is None and dtype_size(not_a_tensor) is None


DTYPES = [
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]


def test_trace_type_names_and_dtype_codes_match_torch(tmp_path: Path) -> None:
    """The profiler's type names and the dtype codes in Concrete Inputs are what we map."""
    path = tmp_path / "dtypes.json"
    with torch.profiler.profile(record_shapes=True) as prof:
        for dtype in DTYPES:
            torch.ops.aten.alias(torch.empty(2, dtype=dtype))
    prof.export_chrome_trace(str(path))
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "cpu_op"]
    names = [e["args"]["Input type"][0] for e in events if e["name"] == "aten::alias"]
    codes = [int(e["args"]["Concrete Inputs"][1]) for e in events if e["name"] == "aten::empty"]
    for dtype, name, code in zip(DTYPES, names, codes, strict=True):
        assert dtype_size(name) == dtype.itemsize, (dtype, name)
        assert SCALAR_TYPE_CODES[code] == name, (dtype, code)


# --------------------------------------------------------------------------------------------
# Matrix products against FlopCounterMode
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["mm", "addmm", "bmm", "baddbmm"])
def test_gemm_flops_match_flop_counter(recorded: dict, case: str) -> None:
    op = f"aten::{case}"
    assert _cost(recorded, case, op).flops == _flop_counts(case)[op]


def test_gemm_bytes_and_category(recorded: dict) -> None:
    mm = _cost(recorded, "mm", "aten::mm")
    assert mm == OpCost(2 * 32 * 24 * 16, (32 * 16 + 16 * 24 + 32 * 24) * F32, "matmul", "fp32")
    addmm = _cost(recorded, "addmm", "aten::addmm")
    assert addmm.bytes == (24 + 32 * 16 + 16 * 24 + 32 * 24) * F32  # the bias is read once


def test_linear_and_matmul_wrappers_match_their_kernels(recorded: dict) -> None:
    counted = _flop_counts("linear")
    linear, addmm = (
        _cost(recorded, "linear", "aten::linear"),
        _cost(recorded, "linear", "aten::addmm"),
    )
    assert linear.flops == addmm.flops == counted["aten::addmm"] == 2 * 32 * 32 * 16
    assert linear.bytes == (N + 32 * 16 + 32 + 4 * 8 * 32) * F32
    matmul = _cost(recorded, "matmul", "aten::matmul")
    assert matmul.flops == sum(_flop_counts("matmul").values()) == 2 * 15 * 32 * 24 * 16


# --------------------------------------------------------------------------------------------
# Convolution against FlopCounterMode
# --------------------------------------------------------------------------------------------

CONV_OPS = ("aten::conv2d", "aten::convolution", "aten::_convolution", "aten::mkldnn_convolution")


@pytest.mark.parametrize("case", ["conv", "conv_dilated", "conv_grouped"])
def test_conv_forward_matches_flop_counter(recorded: dict, case: str) -> None:
    expected = _flop_counts(case)["aten::convolution"]
    for op in CONV_OPS:  # the wrappers and the CPU kernel op read the same layout differently
        assert _cost(recorded, case, op).flops == expected, op


def test_conv_bytes(recorded: dict) -> None:
    # 2x4x10x10 input, 6x4x3x3 weight, stride 2, padding 1 -> 2x6x5x5 output.
    cost = _cost(recorded, "conv", "aten::convolution")
    assert cost.bytes == (2 * 4 * 10 * 10 + 6 * 4 * 3 * 3 + 2 * 6 * 5 * 5) * F32
    assert cost.category == "conv" and cost.dtype == "fp32"


@pytest.mark.parametrize("case", ["conv", "conv_dilated", "conv_transpose"])
def test_conv_backward_matches_flop_counter(recorded: dict, case: str) -> None:
    cost = _cost(recorded, case, "aten::convolution_backward")
    assert cost.flops == _flop_counts(case)["aten::convolution_backward"]


def test_conv_backward_follows_output_mask(recorded: dict) -> None:
    forward = _cost(recorded, "conv_dilated", "aten::convolution").flops
    event = _event(recorded, "conv_dilated", "aten::convolution_backward")
    assert event["args"]["Concrete Inputs"][10] == "[False, True, False]"  # no input gradient
    cost = _cost(recorded, "conv_dilated", "aten::convolution_backward")
    assert cost.flops == forward
    # grad_out and input are read, grad_weight written; the weight is not needed.
    assert cost.bytes == (2 * 6 * 10 * 10 + 2 * 4 * 10 * 10 + 6 * 4 * 3 * 3) * F32


def test_grouped_conv_backward_counts_the_true_weight_gradient(recorded: dict) -> None:
    """flop_counter counts the weight gradient of a grouped convolution ``groups`` times; we
    count it like the forward (the same multiply-adds)."""
    forward = _cost(recorded, "conv_grouped", "aten::convolution").flops
    cost = _cost(recorded, "conv_grouped", "aten::convolution_backward")
    assert cost.flops == 2 * forward
    assert _flop_counts("conv_grouped")["aten::convolution_backward"] == (1 + 2) * forward


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------


def test_sdpa_cpu_matches_flop_counter_math(recorded: dict) -> None:
    """FlopCounterMode counts nothing for the CPU flash kernel; the math backend's two batched
    products are the reference."""
    with sdpa_kernel(SDPBackend.MATH):
        reference = sum(_flop_counts("sdpa").values())
    assert reference == 4 * B * H * SQ * SK * D
    for op in (
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    ):
        assert _cost(recorded, "sdpa", op).flops == reference, op
    public = _cost(recorded, "sdpa", "aten::scaled_dot_product_attention")
    assert public.bytes == (2 * B * H * SQ * D + 2 * B * H * SK * D) * F32  # q, k, v, out
    assert public.category == "attention"
    kernel = _cost(recorded, "sdpa", "aten::_scaled_dot_product_flash_attention_for_cpu")
    assert kernel.bytes == public.bytes + B * H * SQ * F32  # plus the logsumexp it returns


def test_sdpa_causal_is_half_by_hand(recorded: dict) -> None:
    """FlopCounterMode does not halve causal attention; the hand count does."""
    hand = 4 * B * H * SQ * SQ * D / 2
    for op in (
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    ):
        assert _cost(recorded, "sdpa_causal", op).flops == hand, op


FUSED = {
    "flash": "aten::_scaled_dot_product_flash_attention",
    "efficient": "aten::_scaled_dot_product_efficient_attention",
    "cudnn": "aten::_scaled_dot_product_cudnn_attention",
}


@pytest.mark.parametrize("kind", sorted(FUSED))
def test_fused_attention_matches_flop_counter(recorded: dict, kind: str) -> None:
    forward, backward = FUSED[kind], f"{FUSED[kind]}_backward"
    counted = _flop_counts(kind)
    assert _cost(recorded, kind, forward).flops == counted[forward] == 4 * B * H * SQ * SK * D
    assert _cost(recorded, kind, backward).flops == counted[backward]
    assert counted[backward] == 2.5 * counted[forward]
    # FlopCounterMode ignores the causal mask; we count half.
    causal = f"{kind}_causal"
    counted = _flop_counts(causal)
    assert _cost(recorded, causal, forward).flops == counted[forward] / 2
    assert _cost(recorded, causal, backward).flops == counted[backward] / 2


def test_attention_backward_bytes(recorded: dict) -> None:
    cost = _cost(recorded, "efficient", "aten::_scaled_dot_product_efficient_attention_backward")
    q, kv = B * H * SQ * D * BF16, B * H * SK * D * BF16
    lse = B * H * 32 * F32  # the efficient kernel pads its logsumexp to 32 rows
    philox = 2 * I64  # seed and offset, 0-d tensors
    reads = q + 2 * kv + q + q + lse + philox  # grad_out, q, k, v, out, logsumexp, philox
    assert cost.bytes == reads + q + 2 * kv  # writes grad_q, grad_k, grad_v


def test_argument_positions_match_torch_schemas() -> None:
    """The hard-coded positions of is_causal, stride, ... name those arguments in torch."""

    def names(op: str) -> list[str]:
        packet = getattr(torch.ops.aten, op.removeprefix("aten::"))
        overload = getattr(packet, packet.overloads()[0])  # default, or conv_transpose2d.input
        return [a.name for a in overload._schema.arguments]

    for op, layout in ATTENTION_LAYOUTS.items():
        expected = "custom_mask_type" if layout.mask_type else "is_causal"
        assert names(op)[layout.causal] == expected, op
        if not isinstance(layout.lse, bool):
            assert names(op)[layout.lse] == "compute_log_sumexp", op
    for op, layout in CONV_LAYOUTS.items():
        for field in ("bias", "stride", "padding", "dilation", "output_padding", "groups"):
            position = getattr(layout, field)
            if position is not None:
                assert names(op)[position] == field, (op, field)
        if not isinstance(layout.transposed, bool):
            assert names(op)[layout.transposed] == "transposed", op


# --------------------------------------------------------------------------------------------
# Hand counts: elementwise, reductions, softmax, norms, gathers, copies
# --------------------------------------------------------------------------------------------


def test_elementwise_hand_counts(recorded: dict) -> None:
    assert _cost(recorded, "cos", "aten::cos") == OpCost(N, 2 * N * F32, "elementwise", "fp32")
    # [4, 8, 16] + [16]: both read once, the broadcast output written once.
    add = _cost(recorded, "add_broadcast", "aten::add")
    assert add == OpCost(N, (N + 16 + N) * F32, "elementwise", "fp32")
    # x * 0.5: the Python number arrives as a 0-d double tensor, one element.
    mul = _cost(recorded, "mul_scalar", "aten::mul")
    assert mul.flops == N and mul.bytes == 2 * N * F32 + 8
    # In place with alpha=2 (a multiply-add): reads both, writes the first.
    add_ = _cost(recorded, "add_inplace", "aten::add_")
    assert add_ == OpCost(2 * N, (N + 8 + N) * F32, "elementwise", "fp32")
    gt = _cost(recorded, "gt", "aten::gt")  # a comparison writes bool
    assert gt == OpCost(N, N * F32 + N * 1, "elementwise", "fp32")
    gelu = _cost(recorded, "gelu", "aten::gelu")
    assert gelu == OpCost(5 * N, 2 * N * F32, "elementwise", "fp32")


def test_reduction_hand_counts(recorded: dict) -> None:
    assert _cost(recorded, "sum_dim", "aten::sum") == OpCost(
        N, (N + 4 * 16) * F32, "reduction", "fp32"
    )
    assert _cost(recorded, "sum_all", "aten::sum").bytes == (N + 1) * F32
    assert _cost(recorded, "mean_keepdim", "aten::mean").bytes == (N + 4 * 8) * F32
    assert _cost(recorded, "amax", "aten::amax").bytes == (N + 8) * F32


def test_softmax_hand_counts(recorded: dict) -> None:
    assert _cost(recorded, "softmax", "aten::_softmax") == OpCost(
        5 * N, 2 * N * F32, "softmax", "fp32"
    )
    assert _cost(recorded, "log_softmax", "aten::_log_softmax").flops == 5 * N
    backward = _cost(recorded, "softmax", "aten::_softmax_backward_data")
    assert backward == OpCost(4 * N, 3 * N * F32, "softmax", "fp32")  # grad, output -> grad_input


def test_norm_hand_counts(recorded: dict) -> None:
    rows = 4 * 8
    native = _cost(recorded, "layer_norm", "aten::native_layer_norm")
    # 5 FLOPs per element for mean, variance and normalising, plus weight and bias.
    assert native.flops == 7 * N
    assert native.bytes == (N + 16 + 16 + N + 2 * rows) * F32  # out, mean, rstd
    assert native.category == "norm"
    assert _cost(recorded, "layer_norm", "aten::layer_norm").bytes == (N + 16 + 16 + N) * F32
    backward = _cost(recorded, "layer_norm", "aten::native_layer_norm_backward")
    assert backward.flops == 2 * 7 * N
    # grad_out, input, mean, rstd, weight; the bias only says whether grad_bias is wanted.
    reads = (N + N + 2 * rows + 16) * F32
    assert backward.bytes == reads + (N + 16 + 16) * F32  # grad_input, grad_weight, grad_bias
    rms = _cost(recorded, "rms_norm", "aten::_fused_rms_norm")
    assert rms.flops == 4 * N and rms.bytes == (N + 16 + N + rows) * F32
    bn = _cost(recorded, "batch_norm", "aten::native_batch_norm")
    n, c = 2 * 3 * 5 * 5, 3
    assert bn.flops == 7 * n
    # input and four per-channel tensors read; output, saved stats and running stats written.
    assert bn.bytes == (n + 4 * c + n + 2 * c + 2 * c) * F32


def test_gather_hand_counts(recorded: dict) -> None:
    # 32 indices into a 100 x 16 table: only the 32 fetched rows are read.
    expected = OpCost(0, 32 * I64 + 2 * 32 * 16 * F32, "embedding", "fp32")
    assert _cost(recorded, "embedding", "aten::embedding") == expected
    assert _cost(recorded, "embedding", "aten::index_select") == expected
    gpt2 = op_cost(
        "aten::embedding",
        [[50257, 768], [8, 1024], [], [], []],
        ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"],
        ["", "", "-1", "False", "False"],
    )
    assert gpt2 == OpCost(0, 8192 * I64 + 2 * 8192 * 768 * BF16, "embedding", "bf16")


def test_broadcast_inputs_are_read_once() -> None:
    """An input that is an expanded view (a stride of 0, from the trace's Input Strides) holds
    fewer elements than its shape: its repeats come from cache, so it is counted once."""
    # GPT-2's position embedding: position ids [1024] expanded over a batch of 8.
    dims = [[1024, 768], [8, 1024], [], [], []]
    types = ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]
    concrete = ["", "", "-1", "False", "False"]
    positions = op_cost("aten::embedding", dims, types, concrete, strides=[[768, 1], [0, 1]])
    assert positions == OpCost(
        0, 1024 * I64 + 1024 * 768 * BF16 + 8192 * 768 * BF16, "embedding", "bf16"
    )
    # A bias broadcast over the rows of an add: read once; the FLOPs stay one per output.
    add = op_cost(
        "aten::add",
        [[4096, 1024], [4096, 1024], []],
        ["float", "float", "Scalar"],
        ["", "", "1"],
        strides=[[1024, 1], [0, 1], []],
    )
    plain = op_cost(
        "aten::add", [[4096, 1024], [4096, 1024], []], ["float", "float", "Scalar"], ["", "", "1"]
    )
    assert add is not None and plain is not None
    assert add.flops == plain.flops == 4096 * 1024
    assert plain.bytes - add.bytes == (4096 - 1) * 1024 * F32
    # Strides that do not fit the shapes are ignored rather than guessed at.
    assert op_cost("aten::embedding", dims, types, concrete, strides=[[1], [0]]) == op_cost(
        "aten::embedding", dims, types, concrete
    )


def test_copy_hand_counts(recorded: dict) -> None:
    cast = OpCost(0, N * F32 + N * BF16, "copy", "bf16")  # read float, write bfloat16
    assert _cost(recorded, "to_bf16", "aten::_to_copy") == cast
    assert _cost(recorded, "to_bf16", "aten::copy_") == cast
    assert _cost(recorded, "fill", "aten::fill_") == OpCost(0, N * F32, "copy", "fp32")
    assert _cost(recorded, "fill", "aten::zero_") == OpCost(0, N * F32, "copy", "fp32")
    # Without a dtype argument _to_copy keeps the dtype (a device copy).
    same = op_cost("aten::_to_copy", [[10], [], []], ["c10::Half", "", ""], ["", "", ""])
    assert same == OpCost(0, 2 * 10 * 2, "copy", "fp16")


def test_zero_dim_tensor_is_one_element_and_scalars_are_free() -> None:
    tensor = op_cost("aten::add", [[100], [], []], ["float", "float", "Scalar"], ["", "", "1"])
    scalar = op_cost("aten::add", [[100], [], []], ["float", "Scalar", "Scalar"], ["", "2", "1"])
    assert tensor is not None and scalar is not None
    assert tensor.bytes == (100 + 1 + 100) * F32
    assert scalar.bytes == (100 + 100) * F32


# --------------------------------------------------------------------------------------------
# The real H200 trace
# --------------------------------------------------------------------------------------------


def _trace_ops(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return [e for e in events if e.get("cat") == "cpu_op"]


@pytest.fixture(scope="module")
def gpt2_ops() -> list[dict]:
    return _trace_ops(GPT2_TRACE)


def test_gpt2_gemms_are_2mnk(gpt2_ops: list[dict]) -> None:
    gemms = [e for e in gpt2_ops if e["name"] in ("aten::mm", "aten::addmm", "aten::bmm")]
    assert len(gemms) > 40
    for event in gemms:
        dims, types = event["args"]["Input Dims"], event["args"]["Input type"]
        a, b = (dims[0], dims[1]) if event["name"] != "aten::addmm" else (dims[1], dims[2])
        batch = a[0] if event["name"] == "aten::bmm" else 1
        m, k, n = a[-2], a[-1], b[-1]
        assert b[-2] == k
        cost = op_cost(event["name"], dims, types, event["args"]["Concrete Inputs"])
        assert cost is not None
        assert cost.flops == 2 * batch * m * n * k  # addmm: the bias add is not counted
        assert cost.category == "matmul" and cost.dtype == "bf16"


def test_gpt2_attention_is_causal(gpt2_ops: list[dict]) -> None:
    for name in ("aten::_scaled_dot_product_cudnn_attention", "aten::_cudnn_attention_forward"):
        event = next(e for e in gpt2_ops if e["name"] == name)
        args = event["args"]
        cost = op_cost(name, args["Input Dims"], args["Input type"], args["Concrete Inputs"])
        assert cost is not None
        assert cost.flops == 4 * 8 * 12 * 1024 * 1024 * 64 / 2
        assert cost.bytes == 4 * 8 * 12 * 1024 * 64 * BF16  # q, k, v, out; no logsumexp


def test_every_modelled_op_in_the_traces_gets_a_cost() -> None:
    for path in sorted(DATA.glob("*.json.gz")):
        for event in _trace_ops(path):
            args = event.get("args", {})
            if not has_model(event["name"]) or args.get("Input Dims") is None:
                continue
            if costs.has_launch_model(event["name"]) and not all(args["Input Dims"]):
                continue  # a list of over 30 tensors: sized from its kernels, none here
            cost = op_cost(
                event["name"], args["Input Dims"], args["Input type"], args.get("Concrete Inputs")
            )
            assert cost is not None, (path.name, event["name"], args)
            assert cost.flops >= 0 and cost.bytes >= 0


def test_unknown_ops_and_missing_shapes_give_none(gpt2_ops: list[dict]) -> None:
    view = next(e for e in gpt2_ops if e["name"] == "aten::view")["args"]
    assert not has_model("aten::view")
    assert op_cost("aten::view", view["Input Dims"], view["Input type"]) is None
    # A template whose arguments fit no matrix product: no estimate rather than a wrong one.
    assert op_cost("triton_tem_fused_mm_0", [[8, 8], [9, 8], [3, 3]], ["float"] * 3) is None
    assert has_model("aten::mm")
    assert op_cost("aten::mm", None, None) is None  # a trace without shapes
    assert op_cost("aten::mm", [[2, 3]], ["float"]) is None  # an unexpected layout
    # A conv whose padding was given as a string ("same"): the trace leaves it empty.
    conv = op_cost(
        "aten::conv2d",
        [[2, 3, 10, 10], [6, 3, 3, 3], [], [], [], [], []],
        ["float", "float", "", "ScalarList", "", "ScalarList", "Scalar"],
        ["", "", "", "[1, 1]", "", "[1, 1]", "1"],
    )
    assert conv is None


# --------------------------------------------------------------------------------------------
# add_costs
# --------------------------------------------------------------------------------------------


def _frame(ops: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": [e["name"] for e in ops],
            "dims": [e.get("args", {}).get("Input Dims") for e in ops],
            "types": [e.get("args", {}).get("Input type") for e in ops],
            "concrete": [e.get("args", {}).get("Concrete Inputs") for e in ops],
        }
    )


def test_add_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    mm = ([[64, 32], [32, 16]], ["float", "float"], ["", ""])
    ops = pd.DataFrame(
        {
            "name": ["aten::mm", "aten::view", "aten::mm", "aten::mm", "aten::cos", "aten::mm"],
            "dims": [mm[0], [[4], []], None, mm[0], [[10]], [[8, 8], [8, 8]]],
            "types": [mm[1], ["float", "ScalarList"], None, mm[1], ["c10::Half"], mm[1]],
            "concrete": [mm[2], ["", "[4]"], None, mm[2], [""], mm[2]],
        },
        index=[10, 11, 12, 13, 14, 15],
    )
    calls = []
    original = costs.op_cost
    monkeypatch.setattr(costs, "op_cost", lambda *a, **k: calls.append(a[0]) or original(*a, **k))
    out = add_costs(ops)
    assert len(calls) == 3  # mm twice with the same arguments is costed once; no-shape rows never
    assert list(out.index) == list(ops.index)
    assert list(out.columns) == [*ops.columns, "flops", "bytes", "category", "dtype", "source"]
    assert out["flops"].dtype == float and out["bytes"].dtype == float
    flops = out["flops"]
    assert flops[10] == flops[13] == 2 * 64 * 32 * 16
    assert out.loc[15, "flops"] == 2 * 8**3
    assert out.loc[14, "bytes"] == 2 * 10 * 2 and out.loc[14, "dtype"] == "fp16"
    for row in (11, 12):  # no model; no shapes
        assert np.isnan(flops[row]) and np.isnan(out["bytes"][row])
        assert out.loc[row, "category"] == "" and out.loc[row, "dtype"] == ""
    assert list(out["category"]) == ["matmul", "", "", "matmul", "elementwise", "matmul"]
    assert "flops" not in ops  # the input is left alone


def test_add_costs_empty_and_without_concrete() -> None:
    empty = add_costs(pd.DataFrame({"name": [], "dims": [], "types": [], "concrete": []}))
    assert list(empty.columns)[-5:] == ["flops", "bytes", "category", "dtype", "source"]
    no_concrete = add_costs(
        pd.DataFrame({"name": ["aten::mm"], "dims": [[[2, 3], [3, 4]]], "types": [["float"] * 2]})
    )
    assert no_concrete["flops"].tolist() == [2 * 2 * 3 * 4]


def test_add_costs_costs_each_distinct_call_once(gpt2_ops: list[dict], monkeypatch) -> None:
    # What keeps it fast on a large trace (its time: bench/speed_bench.py): a trace of 100,000
    # ops that repeat the calls of one GPT-2 step costs those calls once each, not per row.
    frame = _frame(gpt2_ops)
    big = pd.concat([frame] * (100_000 // len(frame) + 1), ignore_index=True)
    assert len(big) > 100_000
    calls: list[str] = []

    def counted(name, *args, **kwargs):
        calls.append(name)
        return op_cost(name, *args, **kwargs)

    monkeypatch.setattr(costs, "op_cost", counted)
    expected = add_costs(frame)["flops"].sum() * (len(big) // len(frame))
    per_step = len(calls)
    assert 0 < per_step < len(frame)
    calls.clear()
    out = add_costs(big)
    assert len(calls) == per_step
    assert out["flops"].sum() == pytest.approx(expected)


def test_inductor_fused_kernels_get_an_estimate() -> None:
    # The op a compiled kernel appears as carries its tensor arguments: in, out, and xnumel.
    cost = op_cost(
        "triton_poi_fused_cos_0",
        [[67108864], [67108864], []],
        ["float", "float", "Scalar"],
        ["", "", "67108864"],
    )
    assert cost is not None and cost.category == "fused"
    assert cost.bytes == 2 * 4 * 67108864
    assert cost.flops == 67108864
    assert cost.source == "estimate"
    assert has_model("triton_red_fused_sum_1")


# --------------------------------------------------------------------------------------------
# Hand models for gathers, scatters, losses and optimizers (hand counts)
# --------------------------------------------------------------------------------------------


def test_embedding_bag_reads_only_the_rows_it_fetches(recorded: dict) -> None:
    # weight [100, 8], 40 indices in 10 bags of 4, sum mode.
    cost = _cost(recorded, "embedding_bag", "aten::_embedding_bag")
    assert cost.flops == 40 * 8  # one add per fetched element
    fetched = 40 * 8 * F32  # 40 rows of the 100-row table
    written = 10 * 8 * F32 + 40 * I64 + 10 * I64  # bags, offset2bag, bag_size
    assert cost.bytes == 40 * I64 + 10 * I64 + fetched + written
    assert cost.category == "embedding" and cost.source == "formula"


def test_embedding_bag_backward_writes_the_dense_gradient_whole(recorded: dict) -> None:
    cost = _cost(recorded, "embedding_bag", "aten::_embedding_bag_dense_backward")
    assert cost.flops == 40 * 8
    # Reads each index's bag gradient row, the indices, offset2bag and bag sizes; writes the
    # whole [100, 8] gradient.
    assert cost.bytes == 40 * 8 * F32 + 40 * I64 + 40 * I64 + 10 * I64 + 100 * 8 * F32


def test_scatters_touch_only_their_slices(recorded: dict) -> None:
    index_add = _cost(recorded, "index_add", "aten::index_add_")
    # 3 indices, 3 source rows of 8 into a [10, 8] tensor: the 24 touched elements are read
    # and written, not the whole tensor.
    assert index_add.flops == 24
    assert index_add.bytes == 3 * I64 + 24 * F32 + 24 * F32 + 24 * F32
    scatter = _cost(recorded, "scatter_add", "aten::scatter_add_")
    assert scatter.flops == 24
    assert scatter.bytes == 24 * I64 + 24 * F32 + 24 * F32 + 24 * F32
    put = _cost(recorded, "index_put", "aten::index_put_")
    assert put.flops == 24  # accumulate: one add per value
    assert put.bytes == 24 * F32 * 3  # values read, slices read and written


def test_nll_loss_reads_only_what_its_targets_pick(recorded: dict) -> None:
    forward = _cost(recorded, "nll_loss", "aten::nll_loss_forward")
    # [6, 5] log-probabilities, 6 targets, mean: reads 6 targets and 6 picked values.
    assert forward.flops == 6
    assert forward.bytes == 6 * I64 + 6 * F32 + F32 + F32  # the loss, the total weight
    backward = _cost(recorded, "nll_loss", "aten::nll_loss_backward")
    assert backward.flops == 6
    assert backward.bytes == F32 + 6 * I64 + F32 + 6 * 5 * F32  # writes the whole gradient


def test_fused_adamw_hand_count(recorded: dict) -> None:
    cost = _cost(recorded, "fused_adamw", "aten::_fused_adamw_")
    elements = 3 * 4 * 3
    assert cost.flops == 14 * elements
    # Reads params, grads, exp_avg, exp_avg_sq; writes params, exp_avg, exp_avg_sq.
    assert cost.bytes == 7 * elements * F32
    assert cost.category == "optimizer" and cost.source == "formula"


def test_foreach_ops_cost_every_tensor_of_their_lists(recorded: dict) -> None:
    cost = _cost(recorded, "foreach", "aten::_foreach_addcdiv_")
    elements = 3 + 4
    assert cost.flops == 3 * elements  # addcdiv: 3 FLOPs per element
    assert cost.bytes == 3 * elements * F32 + elements * F32  # three lists read, one written


def test_lists_beyond_30_tensors_are_sized_from_their_kernels() -> None:
    # The profiler leaves out the shapes of lists of more than 30 tensors; the multi-tensor
    # kernel's blocks (65536 elements each at most) and the model's parameters size them.
    shapes = [[1000, 100]] * 40 + [[100]] * 40
    params = costs.parameter_chunks(shapes)
    elements = 40 * 100_000 + 40 * 100
    assert params == (40 * 2 + 40, elements, 80)
    kernel = (
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
        "(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
        "BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, std::multiplies<float>, float>(...)"
    )
    dims, types, concrete = [[], []], ["TensorList", "Scalar"], ["", "0.5"]
    exact = op_cost(
        "aten::_foreach_mul_", dims, types, concrete, launch=costs.launch_hint(kernel, 120, params)
    )
    assert exact is not None and exact.source == "estimate" and exact.dtype == "bf16"
    assert exact.bytes == 2 * elements * BF16 and exact.flops == elements
    # One block per parameter: a list of per-parameter scalars (Adam's step counts).
    steps = op_cost(
        "aten::_foreach_mul_", dims, types, concrete, launch=costs.launch_hint(kernel, 80, params)
    )
    assert steps is not None and steps.flops == 80
    # Blocks that fit neither: at most a full chunk each, an upper bound.
    other = op_cost(
        "aten::_foreach_mul_", dims, types, concrete, launch=costs.launch_hint(kernel, 7, params)
    )
    assert other is not None and other.flops == 7 * 65536
    assert op_cost("aten::_foreach_mul_", dims, types, concrete) is None  # nothing to size it


def test_kernel_names_give_the_element_type() -> None:
    cat = costs.launch_hint(
        "void at::native::CatArrayBatchedCopy<c10::Half, unsigned int, 4>", None
    )
    assert cat is not None and cat.dtype == "c10::Half"
    opaque = "CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3>"
    opaque_hint = costs.launch_hint(opaque, None)
    assert opaque_hint is not None and opaque_hint.dtype == "c10::Half"
    assert costs.launch_hint("ampere_sgemm_128x64_nn", None) is None
    index = costs.launch_hint("void at::native::index_elementwise_kernel<128, 4, lambda>(long)", 10)
    assert index is not None and index.per_block == 512 and index.blocks == 10


# --------------------------------------------------------------------------------------------
# The general rule: any aten op from its output shapes on the meta device
# --------------------------------------------------------------------------------------------


def test_ops_without_a_formula_are_costed_from_their_output_shapes(recorded: dict) -> None:
    cat = _cost(recorded, "cat", "aten::cat")
    assert (cat.flops, cat.bytes, cat.category) == (0, 2 * 8 * 4 * F32, "copy")
    assert cat.source == "shapes"
    isneginf = _cost(recorded, "isneginf", "aten::isneginf")
    assert (isneginf.flops, isneginf.bytes) == (7, 7 * F32 + 7)  # pointwise; a bool output
    upsample = _cost(recorded, "upsample", "aten::upsample_nearest2d")
    assert (upsample.flops, upsample.bytes) == (0, 32 * F32 + 128 * F32)
    topk = _cost(recorded, "topk", "aten::topk")
    assert topk.flops == 60 and topk.bytes == 60 * F32 + 18 * F32 + 18 * I64


def test_composite_ops_get_flop_counters_count(recorded: dict) -> None:
    # tensordot has no formula here; on the meta device it dispatches to mm, which
    # FlopCounterMode counts: the same count as running the real op under it.
    cost = _cost(recorded, "tensordot", "aten::tensordot")
    assert cost.flops == _flop_counts("tensordot")["aten::mm"] == 2 * 4 * 7 * 30
    assert cost.source == "shapes"


def test_meta_fallback_is_skipped_when_asked_and_for_unrecorded_arguments() -> None:
    assert (
        op_cost(
            "aten::cat", [[[3, 4], [5, 4]], []], ["TensorList", "Scalar"], ["", "0"], fallback=False
        )
        is None
    )
    # A dim the trace did not record: a default would be a guess.
    assert op_cost("aten::cat", [[[3, 4], [5, 4]], []], ["TensorList", "Scalar"], ["", ""]) is None
    # More than 30 tensors: the list's shapes are not recorded.
    assert op_cost("aten::cat", [[], []], ["TensorList", "Scalar"], ["", "0"]) is None
    assert op_cost("aten::not_an_op", [[2]], ["float"]) is None
    assert op_cost("c10d::allreduce_", [[[4]]], ["TensorList"]) is None  # aten ops only


def test_meta_costs_run_once_per_distinct_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_brrr.costs import _meta

    _meta._meta_cost.cache_clear()
    frame = pd.DataFrame(
        {
            "name": ["aten::isneginf"] * 1000,
            "dims": [[[5, 5]]] * 1000,
            "types": [["float"]] * 1000,
            "concrete": [[""]] * 1000,
        }
    )
    columns = costs.cost_columns(frame, fallback=np.ones(len(frame), dtype=bool))
    assert (columns["flops"] == 25).all() and set(columns["source"]) == {"shapes"}
    assert _meta._meta_cost.cache_info().misses == 1
    # Rows not marked for the fallback get no cost, and leave the meta device alone.
    columns = costs.cost_columns(frame.head(3))
    assert np.isnan(columns["flops"]).all()


# --------------------------------------------------------------------------------------------
# Recurrent layers (cuDNN, from H200 traces) against FlopCounterMode on the meta device
# --------------------------------------------------------------------------------------------


def _first_op(path: Path, name: str) -> dict:
    return next(e for e in _trace_ops(path) if e["name"] == name)["args"]


@pytest.mark.parametrize(
    ("trace", "layer", "pointwise"),
    [("lstm_train", torch.nn.LSTM, 23), ("gru_fwd", torch.nn.GRU, 19)],
)
def test_cudnn_rnn_gemm_flops_match_flop_counter(trace: str, layer: type, pointwise: int) -> None:
    # The same layer (2 layers, input 256, hidden 512, batch first) on the meta device: torch's
    # own implementation is a matmul per step, which FlopCounterMode counts.
    args = _first_op(DATA / "zoo" / f"{trace}.json.gz", "aten::_cudnn_rnn")
    cost = op_cost(
        "aten::_cudnn_rnn", args["Input Dims"], args["Input type"], args["Concrete Inputs"]
    )
    batch, steps, _ = args["Input Dims"][0]
    net = layer(256, 512, num_layers=2, batch_first=True, device="meta")
    with FlopCounterMode(display=False) as counter:
        net(torch.empty(batch, steps, 256, device="meta"))
    gemm = counter.get_total_flops()
    assert cost is not None and cost.category == "rnn"
    assert cost.flops == gemm + pointwise * batch * steps * 512 * 2


def test_cudnn_rnn_backward_doubles_the_gemms_for_the_weight_gradient() -> None:
    path = DATA / "zoo" / "lstm_train.json.gz"
    forward = _first_op(path, "aten::_cudnn_rnn")
    backward = _first_op(path, "aten::_cudnn_rnn_backward")
    f = op_cost(
        "aten::_cudnn_rnn", forward["Input Dims"], forward["Input type"], forward["Concrete Inputs"]
    )
    b = op_cost(
        "aten::_cudnn_rnn_backward",
        backward["Input Dims"],
        backward["Input type"],
        backward["Concrete Inputs"],
    )
    gemm = 2 * 64 * 128 * (2048 * 256 + 2048 * 512 + 2 * 2048 * 512)
    assert f is not None and b is not None
    assert b.flops == 2 * gemm + 2 * (f.flops - gemm)


def test_inductor_templates_get_their_ops_flops() -> None:
    mm = op_cost("triton_tem_fused_mm_0", [[64, 32], [32, 16], [64, 16]], ["c10::BFloat16"] * 3)
    assert mm is not None and mm.flops == 2 * 64 * 16 * 32 and mm.category == "matmul"
    assert mm.source == "estimate" and mm.bytes == (64 * 32 + 32 * 16 + 64 * 16) * BF16
    # Flex attention (H200 trace): q (k and v are the same tensor), its statistics, the block
    # mask, the output: dense attention's FLOPs at the query's dtype, labelled an estimate.
    args = _first_op(
        DATA / "zoo" / "flex_attention_bf16.json.gz", "triton_tem_fused_flex_attention_0"
    )
    flex = op_cost(
        "triton_tem_fused_flex_attention_0",
        args["Input Dims"],
        args["Input type"],
        args["Concrete Inputs"],
    )
    assert flex is not None and flex.category == "attention" and flex.dtype == "bf16"
    assert flex.flops == 4 * 8 * 16 * 2048 * 2048 * 128
