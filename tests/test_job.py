"""Jobs: the traces of a distributed run's ranks, read together.

The main fixture records a real job: ``torchrun --nproc-per-node 4`` with the gloo backend on
the CPU, DDP, every rank writing its trace through ``jupyter_brrr.record.job_profiler``, rank 2
slowed on purpose (a sleep in the backward pass of each of its layers).
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from browser.pages import offline_page, page_data

import jupyter_brrr
from jupyter_brrr import JobReport, Report, SchemaError
from jupyter_brrr.report.job import JobError, load_job
from jupyter_brrr.schema.job import (
    JOB_COLLECTIVE_COLUMNS,
    JOB_RANK_COLUMNS,
    JOB_SCHEMA_VERSION,
    JOB_SPLIT_PARTS,
    JOB_STEP_COLUMNS,
    JOB_SUMMARY_KEYS,
)
from jupyter_brrr.views import frame

DATA = Path(__file__).parent / "data"
JOBS = Path(__file__).parent / "jobs"
SLOW_RANK = 2
DELAY_S = 0.05  # per layer, 4 layers: 0.2 s a step, well above a loaded machine's jitter
STEP_DELAY_S = 4 * DELAY_S
WORLD = 4


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, kernel_env) -> Path:
    """The folder of a 4-rank gloo DDP job recorded here, one trace per rank."""
    out = tmp_path_factory.mktemp("job")
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone"),
        *("--nproc-per-node", str(WORLD), str(JOBS / "ddp_gloo.py")),
        *(str(out), str(SLOW_RANK), str(DELAY_S)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=kernel_env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def job(recorded: Path) -> JobReport:
    loaded = jupyter_brrr.load(recorded)
    assert isinstance(loaded, JobReport)
    return loaded


def test_each_rank_writes_one_trace_named_and_labelled(recorded: Path) -> None:
    # wait 1, warm-up 1, record 3: the window closes at step 5.
    names = sorted(p.name for p in recorded.iterdir())
    assert names == [f"rank{r}_of{WORLD}.step5.json.gz" for r in range(WORLD)]
    for rank in range(WORLD):
        with gzip.open(recorded / f"rank{rank}_of{WORLD}.step5.json.gz") as f:
            doc = json.load(f)
        label = doc["jupyter_brrr"]
        assert (label["rank"], label["world_size"], label["step"]) == (rank, WORLD, 5)
        assert label["backend"] == "gloo"
        assert doc["distributedInfo"]["rank"] == rank


def test_a_folder_loads_as_a_job_and_one_file_as_a_report(recorded: Path, job: JobReport) -> None:
    assert isinstance(job, JobReport)
    assert list(job.ranks["rank"]) == list(range(WORLD))
    assert job.summary["world_size"] == WORLD and job.summary["backend"] == "gloo"
    assert job.summary["steps"] == [2, 3, 4]
    assert tuple(job.summary) == JOB_SUMMARY_KEYS
    assert isinstance(jupyter_brrr.load(recorded / "rank0_of4.step5.json.gz"), Report)
    # A glob and a list give the same job.
    by_glob = jupyter_brrr.load(str(recorded / "rank*.json.gz"))
    by_list = jupyter_brrr.load(sorted(recorded.glob("*.json.gz")))
    for other in (by_glob, by_list):
        assert isinstance(other, JobReport)
        pd.testing.assert_frame_equal(other.ranks, job.ranks)


def test_ranks_read_in_processes_give_what_one_process_gives(recorded: Path, job) -> None:
    serial = load_job(recorded, workers=1)
    pd.testing.assert_frame_equal(serial.ranks, job.ranks)
    pd.testing.assert_frame_equal(serial.collectives, job.collectives)


def test_the_slowed_rank_is_named_the_straggler(job: JobReport) -> None:
    straggler = job.summary["straggler"]
    assert straggler["rank"] == SLOW_RANK
    # Last at the 4 bucket all-reduces of each step, not at the 1 MB all-reduce after the
    # optimizer step (nobody is held back there: on a loaded machine any rank can come last by
    # a little): at most 12 of 15. Chance alone, among 4 ranks, would give about 0.25.
    assert straggler["share"] >= 0.6
    # Held back by about its sleep per step (the rest of its backward pass comes on top).
    assert 0.7 * STEP_DELAY_S < straggler["lateness_per_step_s"] < 2.0 * STEP_DELAY_S
    assert "straggler: rank 2 arrives last" in repr(job)
    assert job.recommendations[0]["kind"] in ("straggler", "overlap")
    assert any(a["kind"] == "straggler" and "Rank 2" in a["title"] for a in job.recommendations)


def test_the_straggler_is_told_apart_from_ranks_that_wait(job: JobReport) -> None:
    ranks = job.ranks.set_index("rank")
    slow = ranks.loc[SLOW_RANK]
    others = ranks.drop(SLOW_RANK)
    # It holds the others back and hardly waits; they wait about as long and are never late.
    assert slow["wait_s"] < 0.1 * slow["lateness_s"]
    assert (others["wait_s"] > 0.5 * slow["lateness_s"]).all()
    assert (others["lateness_s"] < 0.1 * slow["lateness_s"]).all()
    # Waiting is communication that nothing hides: it shows as exposed communication.
    assert (others["communication_s"] > others["wait_s"]).all()
    steps = job.steps[job.steps["rank"] == SLOW_RANK]
    assert (steps["lateness_s"] > 0.5 * STEP_DELAY_S).all()


def test_each_ranks_split_adds_up_to_its_span(job: JobReport) -> None:
    ranks = job.ranks
    parts = ranks[[f"{p}_s" for p in JOB_SPLIT_PARTS]].sum(axis=1)
    np.testing.assert_allclose(parts, ranks["span_s"], rtol=1e-9)
    assert (ranks[[f"{p}_s" for p in JOB_SPLIT_PARTS]] >= 0).all().all()
    # Exposed plus hidden communication is all of it; the overlap is the hidden share.
    np.testing.assert_allclose(
        ranks["communication_s"] + ranks["hidden_comm_s"], ranks["comm_s"], rtol=1e-9
    )
    np.testing.assert_allclose(ranks["overlap"], ranks["hidden_comm_s"] / ranks["comm_s"])
    assert ((ranks["overlap"] >= 0) & (ranks["overlap"] <= 1)).all()
    assert (ranks[["compute_s", "memory_s"]] == 0).all().all()  # a CPU job: no GPU bounds
    assert any("No GPU work" in note for note in job.notes)


def test_collectives_have_their_sizes_and_nccl_tests_bandwidths(job: JobReport) -> None:
    table = job.collectives
    known = table[table["bytes"] == 250_000 * 4].iloc[0]  # the explicit 1 MB all-reduce
    assert known["op"] == "all_reduce" and known["dtype"] == "float32"
    assert known["calls"] == 3 and known["group_size"] == WORLD and known["ranks"] == WORLD
    assert known["algbw"] == pytest.approx(1e6 / known["median_s"])
    assert known["busbw"] == pytest.approx(known["algbw"] * 2 * (WORLD - 1) / WORLD)
    assert np.isnan(known["link_peak"])  # gloo over TCP: no link peak applies
    buckets = table[table["bytes"] == (256 * 256 + 256) * 4].iloc[0]  # one layer per bucket
    assert buckets["calls"] == 4 * 3
    # Transfer times run from the last arrival: never longer than the call was.
    calls = job.calls
    assert ((calls["arrival_s"] <= calls["end_s"]) & (calls["start_s"] <= calls["end_s"])).all()


def test_clocks_of_different_hosts_are_aligned_on_the_collectives(recorded, job, tmp_path):
    # Rank 1's trace as if from another host whose clock reads 5 ms later: the job's figures
    # must not change beyond the clocks' noise.
    for path in recorded.iterdir():
        shutil.copy(path, tmp_path / path.name)
    shifted = tmp_path / "rank1_of4.step5.json.gz"
    with gzip.open(shifted) as f:
        doc = json.load(f)
    for event in doc["traceEvents"]:
        if isinstance(event.get("ts"), (int, float)):
            event["ts"] += 5000.0
    doc["host_name"] = "another-host"
    with gzip.open(shifted, "wt") as f:
        json.dump(doc, f)
    moved = jupyter_brrr.load(tmp_path)
    assert isinstance(moved, JobReport)
    offsets = moved.ranks.set_index("rank")["clock_offset_s"]
    noise = job.summary["straggler"]["noise_s"]
    assert offsets[1] - offsets.drop(1).mean() == pytest.approx(5e-3, abs=max(2 * noise, 1e-3))
    assert moved.summary["straggler"]["rank"] == SLOW_RANK
    assert moved.summary["straggler"]["lateness_s"] == pytest.approx(
        job.summary["straggler"]["lateness_s"], rel=0.2
    )
    assert any("aligned on the collectives" in note for note in moved.notes)
    assert (job.ranks["clock_offset_s"] == 0).all()  # one host: one clock, nothing aligned


def test_several_profiled_windows_load_the_last(recorded: Path, tmp_path: Path) -> None:
    # A schedule with repeat=2 writes a second trace per rank, at step 10.
    for path in recorded.iterdir():
        shutil.copy(path, tmp_path / path.name)
        with gzip.open(path) as f:
            doc = json.load(f)
        doc["jupyter_brrr"]["step"] = 10
        with gzip.open(tmp_path / path.name.replace("step5", "step10"), "wt") as f:
            json.dump(doc, f)
    job = jupyter_brrr.load(tmp_path)
    assert isinstance(job, JobReport)
    assert set(job.ranks["file"]) == {f"rank{r}_of4.step10.json.gz" for r in range(WORLD)}
    assert any("several profiled windows" in note for note in job.notes)


def test_bad_jobs_say_what_is_wrong(recorded: Path, tmp_path: Path) -> None:
    with pytest.raises(JobError, match="holds no trace files"):
        jupyter_brrr.load(tmp_path)
    with pytest.raises(JobError, match="matches no file"):
        jupyter_brrr.load(str(tmp_path / "rank*.json.gz"))
    for path in recorded.iterdir():
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / "rank3_of4.step5.json.gz"
    broken.write_bytes(broken.read_bytes()[:5000])
    with pytest.raises(JobError, match=r"1 of 4 rank traces could not be read: .*rank3_of4"):
        jupyter_brrr.load(tmp_path)
    broken.unlink()
    shutil.copy(tmp_path / "rank0_of4.step5.json.gz", tmp_path / "copy_rank0.json.gz")
    with pytest.raises(JobError, match="Rank 0 has 2 traces"):
        jupyter_brrr.load(tmp_path)


def test_json_round_trip_and_schema(job: JobReport) -> None:
    text = job.to_json()
    doc = json.loads(text)
    assert doc["schema"] == "jupyter_brrr.job" and doc["version"] == JOB_SCHEMA_VERSION
    assert doc["ranks"]["columns"] == list(JOB_RANK_COLUMNS)
    assert doc["collectives"]["columns"] == list(JOB_COLLECTIVE_COLUMNS)
    assert doc["steps"]["columns"] == list(JOB_STEP_COLUMNS)
    assert {"calls", "lanes"} <= set(doc)
    again = JobReport.from_json(text)
    assert again.to_json() == text
    assert again.summary["straggler"]["rank"] == SLOW_RANK
    with pytest.raises(KeyError, match="read from JSON"):
        again.rank(0)
    assert job.rank(SLOW_RANK).summary["device"] == "CPU"
    doc["version"] = JOB_SCHEMA_VERSION + 1
    with pytest.raises(SchemaError, match="Update jupyter_brrr"):
        JobReport.from_json(doc)


def test_lanes_lie_on_the_aligned_clock(job: JobReport) -> None:
    lanes = job.lanes
    assert set(lanes["part"]) >= {"other", "comm", "exposed"}
    assert set(lanes["rank"]) == set(range(WORLD))
    assert (lanes["end_s"] >= lanes["start_s"]).all()
    # Each rank's lane of its own work covers about its work time.
    for rank, row in job.ranks.set_index("rank").iterrows():
        mine = lanes[(lanes["rank"] == rank) & (lanes["part"] == "other")]
        assert (mine["end_s"] - mine["start_s"]).sum() >= row["work_s"] * 0.999


def test_static_views_show_the_job(job: JobReport) -> None:
    bundle = job._repr_mimebundle_()
    assert set(bundle) == {"application/vnd.jupyter-brrr.job+json", "text/html", "text/plain"}
    page = frame.static_part(bundle["text/html"])
    assert "<script" not in page and "<style" not in page and "<iframe" not in page
    assert "rank 2 (straggler)" in page and "Collectives" in page
    assert "straggler: rank 2" in bundle["text/plain"]
    json.dumps(bundle["application/vnd.jupyter-brrr.job+json"], allow_nan=False)


def test_names_from_traces_are_escaped(job: JobReport) -> None:
    hostile = JobReport.from_json(job.to_json())
    hostile.ranks.loc[0, "file"] = "<img src=x onerror=alert(1)>.json"
    hostile.notes.append("<script>alert(1)</script>")
    from jupyter_brrr.views import job_html

    page = job_html.render(hostile)
    assert "<script>" not in page and "<img src=x" not in page


def test_save_html_is_one_offline_file_with_the_app_and_the_job(
    job: JobReport, tmp_path: Path
) -> None:

    hostile = JobReport.from_json(job.to_json())
    hostile.name = "<script>alert(1)</script>"
    hostile.ranks.loc[0, "file"] = "<img src=x onerror=alert(1)>.json"
    path = hostile.save_html(tmp_path / "job.html")
    assert path == tmp_path / "job.html"
    page = path.read_text(encoding="utf-8")
    offline_page(page)
    assert page_data(page) == json.loads(hostile.to_json())
    assert JobReport.from_json(page_data(page)).to_json() == hostile.to_json()
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "<title>jupyter_brrr job: &lt;script&gt;" in page
    # A job is titled with its name (a loaded one's: its folder's), or as a job alone.
    named = job.save_html(tmp_path / "named.html").read_text(encoding="utf-8")
    assert f"<title>jupyter_brrr job: {job.name}</title>" in named and job.name
    hostile.name = ""
    plain = hostile.save_html(tmp_path / "plain.html").read_text(encoding="utf-8")
    assert "<title>jupyter_brrr job</title>" in plain


def test_save_html_of_a_job_refuses_a_bad_path_and_writes_nothing_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_brrr.views import standalone

    job = jupyter_brrr.load(DATA / "ranks")
    with pytest.raises(FileNotFoundError, match=r"the folder .*nowhere does not exist"):
        job.save_html(tmp_path / "nowhere" / "job.html")
    assert not (tmp_path / "nowhere").exists()
    # A folder in place of the file: the page is written beside it first, then refused and
    # taken away.
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match=r"it is a folder.*job\.html"):
        job.save_html(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert list((tmp_path / "out").iterdir()) == []
    # No app built: an older file at the path stays as it was.
    old = tmp_path / "job.html"
    old.write_text("older")
    monkeypatch.setattr(standalone, "BUILT", tmp_path / "nowhere")
    standalone.app.cache_clear()
    try:
        with pytest.raises(standalone.AppNotBuilt, match="jlpm build"):
            job.save_html(old)
    finally:
        standalone.app.cache_clear()
    assert old.read_text() == "older"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.html", "out"]


def test_cli_prints_the_job_and_writes_json(recorded: Path, tmp_path: Path) -> None:
    out = tmp_path / "job.json"
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", str(recorded), "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "4 of 4 ranks, gloo backend" in done.stdout
    assert "straggler: rank 2" in done.stdout
    assert JobReport.from_json(out.read_text()).summary["world_size"] == WORLD


# --- recorded elsewhere -----------------------------------------------------------------------------


def test_two_gloo_ranks_sharing_the_h200() -> None:
    # Recorded on the H200 (bench/h200_record.py): rank 1 runs twice the batch, gloo moves the
    # gradients through host memory. Its kernels take longer; the all-reduces dominate.
    job = jupyter_brrr.load(DATA / "ranks")
    assert isinstance(job, JobReport)
    assert job.summary["devices"] == ["NVIDIA H200"] and job.summary["gpu"]
    ranks = job.ranks.set_index("rank")
    assert ranks.loc[1, "compute_s"] > 1.4 * ranks.loc[0, "compute_s"]
    table = job.collectives
    assert list(table["op"]) == ["all_reduce"] and table["bytes"].iat[0] == 4_196_352 * 4
    assert table["calls"].iat[0] == 24 and table["where"].iat[0] == "host"
    # gloo's staging copies are communication: they count as neither compute nor hidden time.
    assert (ranks["communication_s"] > 0.8 * ranks["span_s"]).all()
    kinds = {a["kind"] for a in job.recommendations}
    assert {"overlap", "bandwidth"} <= kinds
    assert any("nccl backend" in a["detail"] for a in job.recommendations)


def test_one_nccl_rank_of_two() -> None:
    job = jupyter_brrr.load([DATA / "hta" / "nccl_a100_rank0_of2.json.gz"])
    assert isinstance(job, JobReport)
    assert job.summary["ranks"] == [0] and job.summary["world_size"] == 2
    assert any("1 of 2 ranks loaded" in note for note in job.notes)
    assert any("bandwidths are lower bounds" in note for note in job.notes)
    table = job.collectives
    assert (table["link_peak"] == 300e9).all()  # an A100 (SXM): NVLink 3
    assert "NVLink 3" in job.summary["link_source"]
    assert (table["ranks"] == 1).all()
    # One rank's times include its waits: no advice on the link from them.
    assert not any(a["kind"] == "bandwidth" for a in job.recommendations)
    row = job.ranks.iloc[0]
    assert 0 < row["communication_s"] <= row["comm_s"] <= row["span_s"]


def test_a_job_saved_into_its_own_traces_folder_leaves_the_folder_loadable(tmp_path) -> None:
    # job.save() and a rank's Report.save() (with the copy of its trace beside it) into the
    # folder of the traces: loading the folder again reads the traces, and says what it left.
    for path in (DATA / "ranks").iterdir():
        shutil.copy(path, tmp_path / path.name)
    job = jupyter_brrr.load(tmp_path)
    assert isinstance(job, JobReport)
    job.save(tmp_path / "job.json")
    job.rank(0).save(tmp_path / "rank0.json")
    again = jupyter_brrr.load(tmp_path)
    assert isinstance(again, JobReport)
    assert again.summary["ranks"] == job.summary["ranks"] == [0, 1]
    assert again.split().equals(job.split())
    assert "Left out" in again.notes[0] and "job.json" in again.notes[0]
    assert "rank0.trace.json.gz" in again.notes[0]
    assert isinstance(jupyter_brrr.load(str(tmp_path / "*.json*")), JobReport)  # a glob too


@pytest.mark.parametrize(
    ("rank", "world", "says"),
    [
        (-5, 2, "rank -5: ranks run from 0 to 1"),
        (10**20, 2, "rank 100000000000000000000: ranks run from 0 to 1"),
        (2, 2, "rank 2: ranks run from 0 to 1"),
        (0, 0, "world size of 0"),
        (0, 10**20, "world size of 100000000000000000000"),
    ],
)
def test_a_rank_outside_its_world_is_refused_with_the_file(tmp_path, rank, world, says) -> None:
    for path in (DATA / "ranks").iterdir():
        shutil.copy(path, tmp_path / path.name)
    damaged = tmp_path / "rank1_of2.step4.json.gz"
    trace = json.loads(gzip.decompress(damaged.read_bytes()))
    trace["distributedInfo"].update(rank=rank, world_size=world)
    damaged.write_bytes(gzip.compress(json.dumps(trace).encode()))
    with pytest.raises(JobError, match=rf"rank1_of2.step4.json.gz: the trace .*{says}"):
        jupyter_brrr.load(tmp_path)


# --- a rank that does twice the work: the critical path through the collectives ----------------

HEAVY_RANK = 1


def _record_twice(out: Path, env: dict, *mode: str) -> Path:
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone"),
        *("--nproc-per-node", "2", str(JOBS / "ddp_twice.py"), str(out), str(HEAVY_RANK)),
        *mode,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def twice_joins(tmp_path_factory, kernel_env) -> JobReport:
    """2 ranks, gloo, DDP: rank 1's batch is twice rank 0's; each layer's forward ends in an
    all-reduce that rank 0 reaches last (it first sleeps 1.5 layers' forward), a little late, as
    often as rank 1 reaches DDP's backward all-reduces last, much later."""
    job = jupyter_brrr.load(_record_twice(tmp_path_factory.mktemp("twice"), kernel_env, "joins"))
    assert isinstance(job, JobReport)
    return job


def test_a_rank_doing_twice_the_work_is_named_though_the_others_arrive_last_as_often(
    twice_joins: JobReport,
) -> None:
    straggler = twice_joins.summary["straggler"]
    ranks = twice_joins.ranks.set_index("rank")
    # Arriving last: not one rank most of the time (the count alone named nobody here).
    assert ranks.loc[0, "last_count"] >= 0.25 * ranks.loc[HEAVY_RANK, "last_count"]
    assert straggler["last_count"] / straggler["decided"] < 0.8
    # Its lateness is far more than the other's: the critical path runs through its work.
    assert ranks.loc[HEAVY_RANK, "lateness_s"] > 2 * ranks.loc[0, "lateness_s"]
    assert straggler["rank"] == HEAVY_RANK
    assert straggler["critical_share"] >= 0.6
    assert straggler["critical_cost_s"] == pytest.approx(
        ranks.loc[HEAVY_RANK, "lateness_s"], rel=0.25
    )
    advice = next(a for a in twice_joins.recommendations if a["kind"] == "straggler")
    assert "Rank 1" in advice["title"]
    assert "critical path through the collectives" in advice["detail"]


def test_a_rank_doing_twice_the_work_in_plain_ddp_is_named(tmp_path: Path, kernel_env) -> None:
    job = jupyter_brrr.load(_record_twice(tmp_path, kernel_env))
    assert isinstance(job, JobReport)
    straggler = job.summary["straggler"]
    assert straggler["rank"] == HEAVY_RANK
    assert straggler["critical_cost_s"] > 0
