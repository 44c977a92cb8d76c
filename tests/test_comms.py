"""Collectives of one rank: names, nccl-tests' bandwidths, sizes from real NCCL and gloo traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_brrr.analysis import comms
from jupyter_brrr.trace import intervals
from jupyter_brrr.trace.events import read_trace

DATA = Path(__file__).parent / "data"
# Single NCCL ranks of multi-rank jobs, from Holistic Trace Analysis (tests/data/hta/README.md).
NCCL_RANK = DATA / "hta" / "nccl_a100_rank0_of2.json.gz"
SAMPLED_RANK = DATA / "hta" / "sampled_rank0_of128.json.gz"


@pytest.mark.parametrize(
    ("name", "op"),
    [
        ("c10d::allreduce_", "all_reduce"),
        ("nccl:all_reduce", "all_reduce"),
        ("gloo:all_reduce", "all_reduce"),
        (
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            "all_reduce",
        ),
        (
            "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "reduce_scatter",
        ),
        ("c10d::_allgather_base_", "all_gather"),
        ("nccl:_all_gather_base", "all_gather"),
        ("_c10d_functional::all_gather_into_tensor", "all_gather"),
        ("c10d::_reduce_scatter_base_", "reduce_scatter"),
        ("c10d::alltoall_base_", "all_to_all"),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "send_recv"),
        ("c10d::broadcast_", "broadcast"),
        ("c10d::reduce_", "reduce"),
        ("c10d::send", "send"),
        ("c10d::recv_", "recv"),
        ("c10d::barrier", "barrier"),
        ("allreduce", "all_reduce"),  # record_param_comms' Collective name
        ("aten::mm", None),
        (None, None),
    ],
)
def test_collective_names_of_every_spelling(name, op) -> None:
    assert comms.canonical_op(name) == op


def test_bus_bandwidth_factors_are_nccl_tests(n=8) -> None:
    # nccl-tests' doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and reduce-scatter
    # (n-1)/n, broadcast and reduce 1.
    assert comms.bus_factor("all_reduce", n) == pytest.approx(1.75)
    assert comms.bus_factor("all_gather", n) == pytest.approx(0.875)
    assert comms.bus_factor("reduce_scatter", n) == pytest.approx(0.875)
    assert comms.bus_factor("all_to_all", n) == pytest.approx(0.875)
    assert comms.bus_factor("broadcast", n) == 1.0
    assert comms.bus_factor("all_reduce", 1) is None  # no bus between one rank
    assert comms.bus_factor("barrier", n) is None
    algbw, busbw = comms.bandwidth("all_reduce", 1e9, 0.01, 4)
    assert algbw == pytest.approx(1e11) and busbw == pytest.approx(1.5e11)
    assert np.isnan(comms.bandwidth("all_reduce", 1e9, 0.0, 4)[0])


def test_dtype_names_and_sizes() -> None:
    assert comms.dtype_name("Float") == comms.dtype_name("float") == "float32"
    assert comms.dtype_name("c10::BFloat16") == "bfloat16"
    assert comms.element_size("BFloat16") == 2 and comms.element_size("Long") == 8
    assert comms.element_size("long int") == 8 and comms.element_size("TensorList") is None


def test_exposed_time_is_what_no_cut_covers() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        start = rng.uniform(0, 100, 20)
        end = start + rng.uniform(0, 10, 20)
        cut_start = rng.uniform(0, 100, 20)
        cut_end = cut_start + rng.uniform(0, 10, 20)
        kept_start, kept_end = intervals.subtract(start, end, cut_start, cut_end)
        grid = np.linspace(0, 110, 20001)[:-1] + 110 / 40000  # midpoints of a fine grid
        inside = ((grid[:, None] >= start) & (grid[:, None] < end)).any(1)
        cut = ((grid[:, None] >= cut_start) & (grid[:, None] < cut_end)).any(1)
        expected = np.count_nonzero(inside & ~cut) * 110 / 20000
        assert np.sum(kept_end - kept_start) == pytest.approx(expected, abs=0.05)
        assert np.all(np.diff(kept_start) > 0)


def test_gloo_calls_of_the_h200_ranks() -> None:
    # Two gloo ranks sharing the H200: DDP all-reduces of 4,196,352 floats, run on gloo's
    # worker threads (host annotations), matched to their c10d calls.
    trace = read_trace(DATA / "ranks" / "rank0_of2.step4.json.gz")
    calls = comms.collectives(trace)
    assert len(calls) == 24
    assert set(calls["op"]) == {"all_reduce"} and set(calls["where"]) == {"host"}
    assert set(calls["bytes"]) == {4_196_352 * 4}
    assert set(calls["dtype"]) == {"float32"}
    assert (calls["group"] == "0").all() and (calls["group_size"] == 2).all()
    # Every call is enqueued before its work starts, arrives after that and ends last.
    assert (calls["enqueue_s"] <= calls["start_s"] + 1e-9).all()
    assert (calls["start_s"] <= calls["arrival_s"]).all()
    assert (calls["arrival_s"] <= calls["end_s"]).all()


def test_nccl_sizes_come_from_the_kernels_args() -> None:
    # This trace has no shapes on its c10d ops: sizes are on the NCCL kernels' args only.
    trace = read_trace(NCCL_RANK)
    calls = comms.collectives(trace, comms.comm_args(NCCL_RANK))
    assert len(calls) == 21
    assert set(calls["where"]) == {"gpu"}
    reduces = calls[calls["op"] == "all_reduce"]
    assert 2_049_000 * 4 in set(reduces["bytes"])  # "In msg nelems": 2049000, "dtype": "Float"
    assert set(reduces["algorithm"]) == {"RING LL"}
    broadcasts = calls[calls["op"] == "broadcast"]
    assert set(broadcasts["bytes"]) == {53_120 * 4, 53 * 8}
    assert (calls["group_size"] == 2).all()
    # The reader keeps the kernels' collective fields too: the same sizes without the args pass.
    pd.testing.assert_series_equal(comms.collectives(trace)["bytes"], calls["bytes"])


def test_nccl_sizes_from_the_annotations_of_an_older_trace() -> None:
    # Rank 0 of 128, sampled: no kernel args; the nccl:<op> annotations hold the shapes, the
    # c10d calls the ops (all-to-all runs as NCCL SendRecv kernels).
    trace = read_trace(SAMPLED_RANK)
    calls = comms.collectives(trace, comms.comm_args(SAMPLED_RANK))
    assert set(calls["op"]) == {"all_to_all", "all_gather", "all_reduce"}
    assert 19_618_307 * 4 in set(calls["bytes"])  # nccl:all_reduce [[19618307]] float
    # All-gather's S is the gathered output (nccl-tests): the call's larger buffer.
    assert set(calls[calls["op"] == "all_gather"]["bytes"]) == {1_073_741_824}
    assert (calls["group_size"] == 128).all()


def test_a_rank_is_read_with_its_collectives_found_once_per_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job's rank reading asks for the whole trace's collectives once and the median step's
    once: the whole trace's kernel-table analysis (which only needs which events are
    collectives) asks for none, and each trace's call rows are found once for all askers."""
    from jupyter_brrr.report import job

    asked: list[int] = []
    found: list[int] = []
    collectives, find_call_rows = comms.collectives, comms._find_call_rows

    def counted_collectives(trace, args=None):
        asked.append(id(trace))
        return collectives(trace, args)

    def counted_call_rows(trace):
        found.append(id(trace))
        return find_call_rows(trace)

    monkeypatch.setattr(comms, "collectives", counted_collectives)
    monkeypatch.setattr(comms, "_find_call_rows", counted_call_rows)
    rank = job.read_rank(NCCL_RANK)
    assert len(rank.calls) > 0
    assert len(asked) == 2 and len(set(asked)) == 2  # the whole trace, its median step
    assert len(found) == len(set(found)) == 2


def test_call_rows_are_shared_read_only() -> None:
    trace = read_trace(NCCL_RANK)
    first = comms.call_of_rows(trace)
    assert comms.call_of_rows(trace) is first
    with pytest.raises(ValueError):
        first[0] = 5
