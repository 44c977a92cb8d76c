"""A job's ranks read on a Dask cluster (the ``dask`` extra): a local cluster of two worker
processes, each bounded in memory, gives the same job report as the local reading."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import jupyter_brrr
from jupyter_brrr.report.job import JobError, JobReport

DATA = Path(__file__).parent / "data"
# One rank's reading at a time per worker process: a worker holds one rank's trace and report.
WORKER_MEMORY = "1.5GiB"


def _without_time(doc: dict) -> str:
    return re.sub(r'"created": "[^"]*"', '"created": ""', json.dumps(doc, sort_keys=True))


@pytest.fixture(scope="module")
def client():  # a dask.distributed.Client
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        memory_limit=WORKER_MEMORY,
        dashboard_address=None,  # pyright: ignore[reportArgumentType]  # None: no dashboard, as distributed's docs say
    )
    with cluster, Client(cluster) as connected:
        yield connected


def test_a_job_read_on_a_dask_cluster_is_the_local_job(client) -> None:
    from distributed import get_task_stream

    folder = DATA / "ranks"
    local = jupyter_brrr.load(folder, workers=1)
    assert isinstance(local, JobReport)
    with get_task_stream(client) as stream:
        remote = jupyter_brrr.load(folder, executor=client)
    assert isinstance(stream, get_task_stream)  # what its untyped __enter__ gives
    assert isinstance(remote, type(local))
    assert _without_time(remote.to_dict()) == _without_time(local.to_dict())
    assert sorted(remote.reports) == sorted(local.reports) == [0, 1]
    # The readings ran on the cluster's worker processes, one task per rank.
    readings = [task for task in stream.data if task["key"].startswith("read_rank")]
    assert len(readings) == 2
    assert {task["worker"] for task in readings} <= set(client.scheduler_info()["workers"])


def test_an_unreadable_rank_on_the_cluster_names_its_file(client, tmp_path: Path) -> None:
    for path in (DATA / "ranks").iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    broken = tmp_path / "rank1_of2.step4.json.gz"
    broken.write_bytes(b"not a trace")
    with pytest.raises(JobError, match=r"1 of 2 rank traces could not be read: .*rank1_of2"):
        jupyter_brrr.load(tmp_path, executor=client)


def test_each_rank_future_is_dropped_once_read(tmp_path: Path) -> None:
    """A cluster keeps a task's result while the client holds its future: read_ranks drops each
    future as soon as its rank is read, so a worker need not hold every rank it read until the
    last (bench/job_dask_memory.py measures the workers)."""
    import gc
    import weakref
    from concurrent.futures import Future, ThreadPoolExecutor

    for copy in range(3):
        for path in (DATA / "ranks").iterdir():
            (tmp_path / f"{copy}_{path.name}").write_bytes(path.read_bytes())
    alive_when_read: list[int] = []
    futures: list[weakref.ref[Future]] = []

    class Tracked(Future):
        def result(self, timeout=None):
            gc.collect()
            alive_when_read.append(sum(ref() is not None for ref in futures))
            return super().result(timeout)

    class Executor:
        def __init__(self) -> None:
            self.pool = ThreadPoolExecutor(2)

        def submit(self, fn, *args):
            tracked = Tracked()
            done = self.pool.submit(fn, *args)
            done.add_done_callback(
                lambda f: (
                    tracked.set_exception(f.exception())
                    if f.exception()
                    else tracked.set_result(f.result())
                )
            )
            futures.append(weakref.ref(tracked))
            return tracked

    executor = Executor()
    with pytest.raises(JobError, match="Rank 0 has 3 traces"):  # read, then refused
        jupyter_brrr.load(sorted(tmp_path.iterdir()), executor=executor)
    executor.pool.shutdown()
    # When the k-th rank is read, only it and those not read yet are still held.
    assert alive_when_read == list(range(6, 0, -1))
