"""Every file the package writes goes through one path (``report.writing.write_file``): never over
a file the same call read, never onto a device, a FIFO or a folder, symbolic links followed, whole
or not at all, and an error that names the user's path. Real files, real FIFOs, real device nodes
(made with mknod where the tests run as root), the command line as a real process."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import jupyter_brrr
from jupyter_brrr.report.job import JobReport
from jupyter_brrr.report.report import Report
from jupyter_brrr.report.writing import WriteRefused, write_file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
TRACE = DATA / "cpu_only.json.gz"
ADVICE = DATA / "advice"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_brrr", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=180,
    )


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    copy = tmp_path / "run.json.gz"
    shutil.copyfile(TRACE, copy)
    return copy


@pytest.fixture
def ranks(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    shutil.copytree(DATA / "ranks", folder)
    return folder


@pytest.fixture(params=["fifo", "device"])
def device(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A node that is not a regular file: a FIFO, or a character device like /dev/null (its
    numbers, 1:3) where the tests may make one."""
    path = tmp_path / f"a_{request.param}"
    if request.param == "fifo":
        os.mkfifo(path)
    else:
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node needs root")
    return path


# --- never over an input -----------------------------------------------------------------------


def test_save_html_refuses_the_trace_it_was_read_from(trace: Path) -> None:
    before = trace.read_bytes()
    report = jupyter_brrr.load(trace)
    with pytest.raises(WriteRefused, match=r"run\.json\.gz, a file this call read"):
        report.save_html(trace)
    linked = trace.with_name("also.json.gz")
    os.link(trace, linked)  # a hard link: another name, the same file
    with pytest.raises(WriteRefused, match="a file this call read"):
        report.save_html(linked)
    assert trace.read_bytes() == before


def test_comparison_save_html_refuses_either_trace(tmp_path: Path) -> None:
    before, after = tmp_path / "before.json.gz", tmp_path / "after.json.gz"
    shutil.copyfile(ADVICE / "small_gemm.slow.json.gz", before)
    shutil.copyfile(ADVICE / "small_gemm.fixed.json.gz", after)
    comparison = jupyter_brrr.diff(before, after)
    for side in (before, after):
        with pytest.raises(WriteRefused, match="a file this call read"):
            comparison.save_html(side)
    assert before.read_bytes() == (ADVICE / "small_gemm.slow.json.gz").read_bytes()


def test_job_save_and_save_html_refuse_a_ranks_trace(ranks: Path) -> None:
    job = jupyter_brrr.load(ranks)
    rank0 = ranks / "rank0_of2.step4.json.gz"
    for save in (job.save, job.save_html):
        with pytest.raises(WriteRefused, match="a file this call read"):
            save(rank0)
    assert rank0.read_bytes() == (DATA / "ranks" / rank0.name).read_bytes()
    # Saved into its own folder under a new name, the folder still loads.
    job.save(ranks / "job.json")
    again = jupyter_brrr.load(ranks)
    assert isinstance(again, JobReport) and sorted(again.summary["ranks"]) == [0, 1]


@pytest.mark.parametrize("given", ["folder", "glob"])
def test_cli_json_refuses_a_file_the_folder_or_glob_stands_for(ranks: Path, given: str) -> None:
    rank0 = ranks / "rank0_of2.step4.json.gz"
    source = str(ranks) if given == "folder" else str(ranks / "rank*.json.gz")
    result = cli(source, "--json", str(rank0))
    assert result.returncode == 2, result.stdout
    assert "a file this call read" in result.stderr and "Traceback" not in result.stderr
    assert rank0.read_bytes() == (DATA / "ranks" / rank0.name).read_bytes()


def test_cli_diff_json_refuses_an_input_through_a_link(tmp_path: Path, trace: Path) -> None:
    link = tmp_path / "link.json.gz"
    link.symlink_to(trace)
    result = cli("diff", str(trace), str(ADVICE / "small_gemm.fixed.json.gz"), "--json", str(link))
    assert result.returncode == 2 and "a file this call read" in result.stderr
    assert trace.read_bytes() == TRACE.read_bytes() and link.is_symlink()


# --- never onto a device, a FIFO or a folder ---------------------------------------------------


def test_every_writer_refuses_a_device_and_leaves_it(
    device: Path, trace: Path, ranks: Path
) -> None:
    report = jupyter_brrr.load(trace)
    job = jupyter_brrr.load(ranks)
    comparison = jupyter_brrr.diff(trace, ADVICE / "small_gemm.fixed.json.gz")
    link = device.with_name("out.json")
    link.symlink_to(device)  # a link to it: refused where it leads
    for target in (device, link):
        for save in (report.save, report.save_html, job.save, job.save_html, comparison.save_html):
            with pytest.raises(WriteRefused, match=r"not a regular file.*Give another name"):
                save(target)
    kind = stat.S_ISFIFO if "fifo" in device.name else stat.S_ISCHR
    assert kind(device.lstat().st_mode) and link.is_symlink()
    assert not [p for p in device.parent.iterdir() if p.name.startswith(".")]  # no temporary


def test_cli_json_refuses_a_device(device: Path) -> None:
    for args in ([str(TRACE)], ["diff", str(TRACE), str(ADVICE / "small_gemm.fixed.json.gz")]):
        result = cli(*args, "--json", str(device))
        assert result.returncode == 2 and "not a regular file" in result.stderr
    assert not stat.S_ISREG(device.lstat().st_mode)


def test_a_link_to_a_file_writes_the_file_and_keeps_the_link(tmp_path: Path, trace: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    jupyter_brrr.load(trace).save(link)
    assert link.is_symlink() and real.read_text().startswith('{"schema": "jupyter_brrr.report"')


# --- whole or not at all, and errors that name the user's path ---------------------------------


def test_a_long_file_name_is_written(tmp_path: Path, trace: Path) -> None:
    # A legal name; the temporary file's name beside it must still be one.
    path = tmp_path / ("r" * 236 + ".json")  # its trace copy beside it: 250 characters
    report = jupyter_brrr.load(trace)
    assert isinstance(report, Report)
    assert report.save(path)[0] == path and path.stat().st_size > 0


def test_a_failed_write_keeps_the_old_file_and_names_the_users_path(
    tmp_path: Path, trace: Path
) -> None:
    path = tmp_path / "out.json"
    path.write_text("the old report")
    with _file_size_limit(64), pytest.raises(OSError) as raised:  # a disk that fills up
        jupyter_brrr.load(trace).save(path)
    assert f"Cannot write {path}" in str(raised.value) and ".out.json." not in str(raised.value)
    assert path.read_text() == "the old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "run.json.gz"]


def test_exclusive_never_replaces_a_file_nor_writes_through_a_link(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    elsewhere = tmp_path / "elsewhere"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(elsewhere)
    for path in (taken, dangling):
        with pytest.raises(FileExistsError):
            write_file(path, b"new", exclusive=True)
    assert taken.read_text() == "mine" and not elsewhere.exists()


def test_diff_of_a_folder_or_a_device_says_what_it_is(tmp_path: Path, device: Path) -> None:
    fixed = ADVICE / "small_gemm.fixed.json.gz"
    with pytest.raises(IsADirectoryError, match="is a folder"):
        jupyter_brrr.diff(tmp_path, fixed)
    with pytest.raises(Exception, match="not a regular file") as raised:
        jupyter_brrr.diff(device, fixed)
    assert "does not exist" not in str(raised.value)
    result = cli("diff", str(tmp_path), str(fixed))
    assert result.returncode == 2 and "is a folder" in result.stderr


class _file_size_limit:
    """Files this process writes may grow to ``limit`` bytes (``RLIMIT_FSIZE``): a write past it
    fails with EFBIG, as on a full disk (the signal that would end the process is ignored)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __enter__(self) -> None:
        import resource
        import signal

        self.old = resource.getrlimit(resource.RLIMIT_FSIZE)
        self.handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.limit, self.old[1]))

    def __exit__(self, *exc: object) -> None:
        import resource
        import signal

        resource.setrlimit(resource.RLIMIT_FSIZE, self.old)
        signal.signal(signal.SIGXFSZ, self.handler)
