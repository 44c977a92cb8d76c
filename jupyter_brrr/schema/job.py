"""The job report's JSON form (``JobReport.to_dict()``, ``report/job.py``): the ranks of one
torch.distributed run, drawn by the Ranks view. ``check_job`` is its one entry point.
"""

from __future__ import annotations

from .types import (
    LONGEST_S,
    Flag,
    ListOf,
    MapOf,
    Nullable,
    Number,
    Object,
    Scalar,
    Table,
    Text,
    Type,
    check_depth,
    check_header,
)

# --- the job report (job.py): the ranks of one torch.distributed run ----------------------------
#
# A document of its own, drawn by the Ranks view; tables in the same "split" orientation:
#
#     {"schema": "jupyter_brrr.job", "version": 1, "name", "created",
#      "summary": {"ranks": [0, 1], "world_size", "backend", "devices", "gpu", "hosts",
#                  "one_clock", "steps", "span_s", "comm_s", "exposed_comm_s", "exposed_share",
#                  "overlap", "work_median_s", "work_max_s", "busiest_rank", "imbalance",
#                  "link_source", "collective_calls",
#                  "straggler": {"rank" (null: none), "decided", "collectives", "noise_s",
#                                "last_count", "share", "lateness_s", "others_wait_s", "steps",
#                                "lateness_per_step_s", "others_wait_per_step_s", "varies"}},
#      "notes": [...], "recommendations": [{"kind", "title", "detail", "share"}],
#      "ranks": {...}, "collectives": {...}, "steps": {...}, "calls": {...}, "lanes": {...}}

JOB_SCHEMA_NAME = "jupyter_brrr.job"
JOB_SCHEMA_VERSION = 1
JOB_MIME_TYPE = "application/vnd.jupyter-brrr.job+json"

# The job summary's keys (job._summary writes exactly these).
JOB_SUMMARY_KEYS = (
    *("ranks", "world_size", "backend", "devices", "gpu", "hosts", "one_clock", "steps"),
    *("span_s", "comm_s", "exposed_comm_s", "exposed_share", "overlap"),
    *("work_median_s", "work_max_s", "busiest_rank", "imbalance", "straggler"),
    *("link_source", "collective_calls"),
)

# A rank's span, split by priority; communication_s is the exposed part. They sum to span_s.
JOB_SPLIT_PARTS = ("compute", "memory", "other", "communication", "idle")

JOB_RANK_COLUMNS = (
    "rank",
    "file",
    "host",
    "device",
    "backend",
    "span_s",  # first to last activity of the rank (GPU work, communication)
    *(f"{part}_s" for part in JOB_SPLIT_PARTS),
    "work_s",  # the rank's own work: compute + memory + other
    "comm_s",  # all communication, hidden or not
    "hidden_comm_s",  # communication that overlapped the rank's own work
    "overlap",  # hidden_comm_s / comm_s
    "calls",  # collective calls in the trace
    "last_count",  # collectives it arrived last at, beyond the clocks' noise
    "lateness_s",  # how long it held the others back, summed
    "wait_s",  # how long it waited for the last rank, summed
    "clock_offset_s",  # taken off its times to align the ranks (0 on one host)
)

JOB_COLLECTIVE_COLUMNS = (
    "group",  # process group name
    "group_size",
    "op",  # all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, ...
    "bytes",  # S as nccl-tests counts it
    "dtype",
    "where",  # "gpu" (NCCL kernels) or "host" (gloo)
    "calls",  # per rank
    "time_s",  # summed transfer time (from the last arrival to the end)
    "median_s",  # median transfer time of one call
    "algbw",  # bytes / median_s
    "busbw",  # algbw x nccl-tests' factor for the op and group size
    "link_peak",  # per-direction interconnect bandwidth of the GPU, where known
    "link_fraction",  # busbw / link_peak
    "algorithm",  # NCCL's algorithm and protocol, from the kernel name
    "ranks",  # ranks each call was matched on (the fewest); with 1 its time includes waiting
)

JOB_STEP_COLUMNS = (
    "rank",
    "step",  # ProfilerStep#N
    "kind",  # first, steady or partial (steps.py); "" without GPU work
    "start_s",  # its window's start, on the job's aligned clock
    "span_s",  # its window: on the GPU timeline as steps.py tiles it, else its host range
    "compute_s",
    "memory_s",
    "other_s",
    "comm_s",
    "exposed_comm_s",
    "last_count",
    "lateness_s",
    "wait_s",
)

JOB_CALL_COLUMNS = (
    "rank",
    "instance",  # "group/step/place": the same collective on every rank
    "group",
    "op",
    "bytes",
    "dtype",
    "where",
    "step",
    "enqueue_s",
    "arrival_s",
    "start_s",
    "end_s",
)

# Each rank's activity on the job's aligned clock: part is compute, memory, other, comm or
# exposed (communication with no work beside it).
JOB_LANE_COLUMNS = ("rank", "part", "start_s", "end_s")


_TEXT = Text()
_MAYBE_TEXT = Nullable(_TEXT)
_SECONDS = Nullable(Number(low=0, high=LONGEST_S))
_TIME = Nullable(Number(high=LONGEST_S))  # a time on the job's clock, or an offset: any sign
_MAYBE_AMOUNT = Nullable(Number(low=0))
_MAYBE_COUNT = Nullable(Number(low=0, whole=True))
_RANK = Number(low=0, high=1e9, whole=True)
_MAYBE_FLAG = Nullable(Flag())

_STRAGGLER = Object(
    {},
    {
        "rank": Nullable(_RANK),
        **{name: _MAYBE_COUNT for name in ("decided", "collectives", "last_count", "steps")},
        **{
            name: _SECONDS
            for name in (
                *("noise_s", "lateness_s", "others_wait_s", "lateness_per_step_s"),
                "others_wait_per_step_s",
            )
        },
        "share": _MAYBE_AMOUNT,
        "varies": MapOf(Number(low=0, whole=True)),  # last arrivals per rank: never null
    },
    title="JobStraggler",
)
_SUMMARY = Object(
    {},
    {
        "ranks": ListOf(_RANK),
        "world_size": _MAYBE_COUNT,
        "backend": _MAYBE_TEXT,
        "devices": ListOf(_TEXT),
        "gpu": _MAYBE_FLAG,
        "hosts": ListOf(_TEXT),
        "one_clock": _MAYBE_FLAG,
        "steps": ListOf(Scalar()),
        **{
            name: _SECONDS
            for name in ("span_s", "comm_s", "exposed_comm_s", "work_median_s", "work_max_s")
        },
        **{name: _MAYBE_AMOUNT for name in ("exposed_share", "overlap", "imbalance")},
        "busiest_rank": Nullable(_RANK),
        "straggler": Nullable(_STRAGGLER),
        "link_source": _MAYBE_TEXT,
        "collective_calls": _MAYBE_COUNT,
    },
    title="JobSummary",
)
_RANK_CELLS: dict[str, Type] = {
    "rank": _RANK,
    **{name: _MAYBE_TEXT for name in ("file", "host", "device", "backend")},
    **{
        name: _SECONDS
        for name in JOB_RANK_COLUMNS
        if name.endswith("_s") and name != "clock_offset_s"
    },
    "clock_offset_s": _TIME,
    "overlap": _MAYBE_AMOUNT,
    **{name: _MAYBE_COUNT for name in ("calls", "last_count")},
}
_COLLECTIVE_CELLS: dict[str, Type] = {
    **{name: Scalar() for name in ("group", "dtype", "where", "algorithm")},
    "op": _MAYBE_TEXT,
    **{name: _MAYBE_COUNT for name in ("group_size", "calls", "ranks")},
    **{name: _SECONDS for name in ("time_s", "median_s")},
    **{name: _MAYBE_AMOUNT for name in ("bytes", "algbw", "busbw", "link_peak", "link_fraction")},
}
_STEP_CELLS: dict[str, Type] = {
    "rank": _RANK,
    "kind": _MAYBE_TEXT,
    "start_s": _TIME,
    **{name: _SECONDS for name in JOB_STEP_COLUMNS if name.endswith("_s") and name != "start_s"},
    "last_count": _MAYBE_COUNT,
}
_CALL_CELLS: dict[str, Type] = {
    "rank": _RANK,
    **{name: _TIME for name in ("enqueue_s", "arrival_s", "start_s", "end_s")},
    "bytes": _MAYBE_AMOUNT,
}
_LANE_CELLS: dict[str, Type] = {
    "rank": _RANK,
    "part": _TEXT,
    "start_s": _TIME,
    "end_s": _TIME,
}
_RECOMMENDATION = Object(
    {"title": _TEXT, "detail": _TEXT},
    {"kind": _MAYBE_TEXT, "share": Nullable(Number())},
    title="JobRecommendation",
)
JOB = Object(
    {
        "schema": _TEXT,
        "version": Number(low=1, whole=True),
        "summary": _SUMMARY,
        "ranks": Table(_RANK_CELLS, needs=("rank",), row="JobRankRow", columns=JOB_RANK_COLUMNS),
        "collectives": Table(
            _COLLECTIVE_CELLS, row="JobCollectiveRow", columns=JOB_COLLECTIVE_COLUMNS
        ),
    },
    {
        "name": _MAYBE_TEXT,
        "created": _MAYBE_TEXT,
        "notes": ListOf(_TEXT),
        "recommendations": ListOf(_RECOMMENDATION),
        "steps": Nullable(
            Table(_STEP_CELLS, needs=("rank",), row="JobStepRow", columns=JOB_STEP_COLUMNS)
        ),
        "calls": Nullable(
            Table(
                _CALL_CELLS,
                {"total": _MAYBE_COUNT},
                needs=("rank",),
                row="JobCallRow",
                columns=JOB_CALL_COLUMNS,
            )
        ),
        "lanes": Nullable(
            Table(_LANE_CELLS, needs=("rank",), row="JobLaneRow", columns=JOB_LANE_COLUMNS)
        ),
    },
    title="Job",
)


def check_job(doc: object) -> None:
    """Raise SchemaError, naming the first field that does not fit, unless ``doc`` is a job
    report document this version reads."""
    check_depth(doc)
    check_header(doc, JOB_SCHEMA_NAME, JOB_SCHEMA_VERSION, "job report")
    JOB.check(doc, "")
