"""The history of named runs and its store beside the notebook: kept across a restart, bounded,
and a damaged store costs a message, never a crash."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from browser.pages import offline_page, page_data

import jupyter_brrr
from jupyter_brrr.report import history as history_store
from jupyter_brrr.report.history import (
    HISTORY_MIME_TYPE,
    STORE_DIRNAME,
    HistoryError,
    Store,
    folder_slug,
    trimmed,
)
from jupyter_brrr.report.report import Report
from jupyter_brrr.views import frame

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


@pytest.fixture(scope="module")
def reports() -> list[Report]:
    """Three real CPU profiles (warm, timed): a matmul, the same again, then half the work."""
    x = torch.randn(96, 96)
    y = torch.randn(48, 96)
    return [
        jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=3),
        jupyter_brrr.profile(lambda: (x @ x).relu(), warmup=1, repeat=3),
        jupyter_brrr.profile(lambda: (y @ x).relu(), warmup=1, repeat=3),
    ]


def test_runs_are_numbered_and_survive_a_restart(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    for report, code in zip(reports, ["a = x @ x", "a = x @ x", "a = y @ x"], strict=True):
        store.add("attention", report, code=code)
    history = store.history("attention")
    assert [r.run for r in history] == [1, 2, 3]
    # A restarted kernel: a new store on the same folder reads the runs back.
    again = Store(tmp_path)
    assert again.names() == ["attention"]
    restored = again.history("attention")
    assert [r.run for r in restored] == [1, 2, 3]
    assert restored[2].report.summary["span_s"] == pytest.approx(reports[1].summary["span_s"])
    rows = restored.rows()
    assert [row["code_changed"] for row in rows] == [None, False, True]
    assert rows[1]["verdict"] in ("noise", "faster", "slower")
    # Any two can be compared, by number or from the newest.
    comparison = restored.diff(1, 3)
    assert (comparison.before.run, comparison.after.run) == (1, 3)
    assert restored.diff().before.run == 2
    assert "[[48, 96], [96, 96]]" in set(comparison.appeared["shapes"])


def test_store_holds_runs_under_the_notebook_folder_only(
    tmp_path: Path, reports: list[Report]
) -> None:
    Store(tmp_path).add("my cell/1", reports[0], code="x")
    files = [p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()]
    slug = folder_slug("my cell/1")
    assert files == [Path(STORE_DIRNAME) / slug / "run-0001.json.gz"]
    assert slug.startswith("my_cell_1-") and folder_slug("my_cell_1") == "my_cell_1"
    doc = json.loads(gzip.decompress((tmp_path / files[0]).read_bytes()))
    assert doc["name"] == "my cell/1" and doc["report"]["schema"] == "jupyter_brrr.report"
    assert str(tmp_path) not in json.dumps(doc)  # no path of the user's machine inside


def test_a_stored_run_keeps_kernels_summed_by_name(gpt2: Report) -> None:
    small = trimmed(gpt2)
    assert len(small.kernels) == gpt2.kernels["name"].nunique() < len(gpt2.kernels)
    assert small.kernels["dur_s"].sum() == pytest.approx(gpt2.kernels["dur_s"].sum())
    assert small.kernels["count"].sum() == len(gpt2.kernels)
    assert len(small.cpu_ops) == 0 and len(small.ops) == len(gpt2.ops)


def test_a_stored_gpt2_run_is_small(tmp_path: Path, gpt2: Report) -> None:
    Store(tmp_path).add("gpt2", gpt2)
    (path,) = (tmp_path / STORE_DIRNAME / "gpt2").iterdir()
    assert path.stat().st_size < 100_000


def test_history_is_bounded(
    tmp_path: Path, reports: list[Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_store, "MAX_RUNS", 3)
    store = Store(tmp_path)
    for _ in range(5):
        store.add("loop", reports[0])
    assert [r.run for r in store.history("loop")] == [3, 4, 5]
    on_disk = sorted(p.name for p in (tmp_path / STORE_DIRNAME / "loop").iterdir())
    assert on_disk == ["run-0003.json.gz", "run-0004.json.gz", "run-0005.json.gz"]
    monkeypatch.setattr(history_store, "MAX_NAME_BYTES", 1)  # the newest two always stay
    store.add("loop", reports[0])
    assert len(list((tmp_path / STORE_DIRNAME / "loop").iterdir())) == 2


def test_damaged_files_are_skipped_with_a_message(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    store.add("attention", reports[0])
    store.add("attention", reports[1])
    folder = tmp_path / STORE_DIRNAME / "attention"
    (folder / "run-0001.json.gz").write_bytes(b"not gzip at all")
    (folder / "run-0003.json.gz").write_bytes(
        gzip.compress(b'{"schema": "jupyter_brrr.history_run", "version": 9}')
    )
    restarted = Store(tmp_path)
    history = restarted.history("attention")
    assert [r.run for r in history] == [2]
    text = "\n".join(history.messages)
    assert "run-0001.json.gz could not be read" in text and "Delete the file" in text
    assert "newer jupyter_brrr" in text
    # A new run does not overwrite the damaged files: it takes the next free number.
    entry, messages = restarted.add("attention", reports[2])
    assert entry.run == 4 and not messages
    assert (folder / "run-0001.json.gz").read_bytes() == b"not gzip at all"


def test_an_unwritable_store_keeps_runs_in_the_kernel(
    tmp_path: Path, reports: list[Report]
) -> None:
    (tmp_path / STORE_DIRNAME).write_text("a file where the store folder should be")
    store = Store(tmp_path)
    entry, messages = store.add("attention", reports[0])
    assert entry.run == 1 and len(store.history("attention")) == 1
    assert "kept in this kernel only" in messages[0]


def test_unknown_names_and_runs_say_what_exists(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    with pytest.raises(HistoryError, match="No runs of 'nothing' yet"):
        store.history("nothing")[1]
    store.add("attention", reports[0])
    with pytest.raises(HistoryError, match="a comparison needs two"):
        store.history("attention").diff()
    with pytest.raises(HistoryError, match="has no run 7; its runs: 1"):
        store.history("attention").diff(1, 7)


def test_forget_deletes_a_names_runs(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    store.add("attention", reports[0])
    store.add("other", reports[0])
    assert store.forget("attention") == (1, [])
    assert store.names() == ["other"] and len(store.history("attention")) == 0
    assert not (tmp_path / STORE_DIRNAME / "attention").exists()


def test_history_display(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    for report in reports:
        store.add("attention", report, code="same")
    history = store.history("attention")
    text = repr(history)
    assert text.splitlines()[0].split()[:4] == ["run", "when", "(UTC)", "span"]
    assert len(text.splitlines()) == 4
    html = frame.static_part(history._repr_mimebundle_()["text/html"])
    assert "jupyter_brrr history: attention (3 runs)" in html and "<script" not in html
    assert list(history.table.index) == [1, 2, 3]


def test_history_display_has_its_own_mime_type_with_static_fallbacks(
    tmp_path: Path, reports: list[Report]
) -> None:
    store = Store(tmp_path)
    for report, code in zip(reports, ["a = x @ x", "a = x @ x", "a = y @ x"], strict=True):
        store.add("attention", report, code=code)
    history = store.history("attention")
    bundle = history._repr_mimebundle_()
    assert set(bundle) == {HISTORY_MIME_TYPE, "text/html", "text/plain"}
    assert HISTORY_MIME_TYPE == "application/vnd.jupyter-brrr.history+json"
    doc = bundle[HISTORY_MIME_TYPE]
    # JSON-safe as the front end gets it (no NaN, no numpy), and no path of the user's machine.
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text) == doc
    assert str(tmp_path) not in text and STORE_DIRNAME not in text
    assert doc["schema"] == "jupyter_brrr.history" and doc["version"] == 1
    assert doc["name"] == "attention"
    assert doc["runs"] == history.rows()
    runs = doc["runs"]
    assert [r["run"] for r in runs] == [1, 2, 3]
    assert [r["code_changed"] for r in runs] == [None, False, True]
    assert runs[0]["verdict"] is None
    assert all(r["verdict"] in ("faster", "slower", "noise", "uncertain") for r in runs[1:])
    for run, report in zip(runs, reports, strict=True):
        assert run["span_s"] == pytest.approx(report.summary["span_s"])
        assert run["span_s"] == pytest.approx(
            sum(run[f"{p}_s"] for p in ("compute", "memory", "communication", "other", "idle"))
        )
    # The static fallbacks (nbconvert, GitHub, a front end without the extension) stay.
    html = frame.static_part(bundle["text/html"])
    assert "jupyter_brrr history: attention (3 runs)" in html and "<script" not in html
    assert frame.framed_doc(bundle["text/html"]) == doc  # the app in a frame, elsewhere
    assert html.count("<tr") == 4  # a head and one row per run
    assert bundle["text/plain"] == repr(history)
    assert len(bundle["text/plain"].splitlines()) == 4

    # A name with no runs yet: a document with no runs, which the extension says so for.
    empty = store.history("nothing")._repr_mimebundle_()
    assert empty[HISTORY_MIME_TYPE] == {
        "schema": "jupyter_brrr.history",
        "version": 1,
        "name": "nothing",
        "runs": [],
    }
    assert "(0 runs)" in empty["text/html"]


def test_notebook_folder_prefers_the_notebook_path(tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    assert history_store.notebook_folder({"__session__": str(notebook)}) == tmp_path
    # A path that is not a file here (a server-relative name) falls back to the working dir.
    assert history_store.notebook_folder({"__session__": "analysis.ipynb"}) == Path.cwd()
    assert history_store.notebook_folder({}) == Path.cwd()


# --- the standalone HTML file -------------------------------------------------------------------


def test_save_html_is_one_offline_file_with_the_app_and_the_runs(
    tmp_path: Path, reports: list[Report]
) -> None:
    """History.save_html: the bundle's app and styles inlined next to the history's JSON (the
    runs as rows() gives them, no store path), nothing loaded from elsewhere, the name as text."""
    name = "<img src=x onerror=alert(1)>"
    store = Store(tmp_path / "store")
    for report in reports:
        store.add(name, report, code="x")
    history = store.history(name)
    path = history.save_html(tmp_path / "runs.html")
    assert path == tmp_path / "runs.html"
    page = path.read_text(encoding="utf-8")
    offline_page(page)
    assert page_data(page) == json.loads(history.to_json()) == history.to_dict()
    assert page_data(page)["schema"] == "jupyter_brrr.history"
    assert [r["run"] for r in page_data(page)["runs"]] == [1, 2, 3]
    assert str(tmp_path) not in page
    assert "<img src=x" not in page
    assert "<title>jupyter_brrr history: &lt;img src=x onerror=alert(1)&gt;</title>" in page


def test_save_html_of_a_history_refuses_a_bad_path(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path / "store")
    store.add("mm", reports[0])
    history = store.history("mm")
    with pytest.raises(FileNotFoundError, match=r"the folder .*nowhere does not exist"):
        history.save_html(tmp_path / "nowhere" / "runs.html")
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match=r"it is a folder.*history\.html"):
        history.save_html(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "store"]
    assert list((tmp_path / "out").iterdir()) == []


# --- issue 21: the store keeps to the notebook's folder, reads only what is safe to read ---------


def _outside_and_notebook(tmp_path: Path) -> tuple[Path, Path]:
    """A notebook's folder, and a folder beside it holding a file of the user's named like a run."""
    outside, notebook = tmp_path / "outside", tmp_path / "notebook"
    outside.mkdir()
    notebook.mkdir()
    (outside / "run-0001.json.gz").write_bytes(b"the user's own file")
    return outside, notebook


@pytest.mark.parametrize("linked", ["the name's folder", "the store"])
def test_a_link_out_of_the_notebooks_folder_is_never_written_pruned_or_emptied(
    tmp_path: Path, reports: list[Report], monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    outside, notebook = _outside_and_notebook(tmp_path)
    if linked == "the store":
        (notebook / STORE_DIRNAME).symlink_to(outside)
        (outside / "attention").mkdir()
        (outside / "attention" / "run-0001.json.gz").write_bytes(b"theirs")
    else:
        (notebook / STORE_DIRNAME).mkdir()
        (notebook / STORE_DIRNAME / "attention").symlink_to(outside)
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    monkeypatch.setattr(history_store, "MAX_RUNS", 1)  # a prune would take the oldest file
    store = Store(notebook)
    for report in reports[:2]:
        _, messages = store.add("attention", report)
        assert "kept in this kernel only" in messages[0] and "leads outside" in messages[0]
    assert len(store.history("attention")) == 1  # kept in the kernel (a cap of 1 here)
    with pytest.raises(HistoryError, match=r"not deleted.*remove the link"):
        store.forget("attention")
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before


def test_run_files_that_are_links_are_neither_written_through_nor_deleted(
    tmp_path: Path, reports: list[Report]
) -> None:
    outside, notebook = _outside_and_notebook(tmp_path)
    folder = notebook / STORE_DIRNAME / "attention"
    folder.mkdir(parents=True)
    (folder / "run-0001.json.gz").symlink_to(outside / "run-0001.json.gz")
    (folder / "run-0002.json.gz").symlink_to(outside / "not-yet-there")
    entry, _ = Store(notebook).add("attention", reports[0])
    assert entry.run == 3 and not (outside / "not-yet-there").exists()
    removed, kept = Store(notebook).forget("attention")
    assert removed == 1 and len(kept) == 2 and "not a run file of ours" in kept[0]
    assert (outside / "run-0001.json.gz").read_bytes() == b"the user's own file"


def test_a_fifo_in_the_store_never_blocks(tmp_path: Path, reports: list[Report]) -> None:
    import threading

    Store(tmp_path).add("attention", reports[0])
    folder = tmp_path / STORE_DIRNAME / "attention"
    os.mkfifo(folder / "run-0002.json.gz")
    (folder / "run-0003.json.gz").symlink_to(folder / "run-0002.json.gz")
    found: list = []
    reading = threading.Thread(
        target=lambda: found.append((Store(tmp_path).names(), Store(tmp_path).history("attention")))
    )
    reading.start()
    reading.join(timeout=20)
    if reading.is_alive():  # blocked in open(): a writer lets it go, and the test fails
        with open(folder / "run-0002.json.gz", "wb"):
            pass
        pytest.fail("reading the store blocked on a FIFO")
    names, history = found[0]
    assert names == ["attention"] and [r.run for r in history] == [1]
    text = "\n".join(history.messages)
    assert "run-0002.json.gz" in text and "run-0003.json.gz" in text and "not a regular" in text


def test_a_gzip_bomb_in_the_store_is_bounded(tmp_path: Path, reports: list[Report]) -> None:
    import time
    import tracemalloc
    import zlib

    Store(tmp_path).add("attention", reports[0])
    # About 1 MB of gzip that inflates to 1 GiB: 1 MiB of zeros compressed once, its blocks
    # repeated (after a full flush the compressor starts afresh: each MiB compresses the same).
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    mib = b"\0" * (1 << 20)
    first = pack.compress(mib) + pack.flush(zlib.Z_FULL_FLUSH)
    again = pack.compress(mib) + pack.flush(zlib.Z_FULL_FLUSH)
    bomb = tmp_path / STORE_DIRNAME / "attention" / "run-0002.json.gz"
    bomb.write_bytes(first + again * 1023 + pack.flush())
    assert bomb.stat().st_size < 2_000_000
    tracemalloc.start()
    started = time.perf_counter()
    history = Store(tmp_path).history("attention")
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [r.run for r in history] == [1]
    assert (
        "run-0002.json.gz" in history.messages[0]
        and "inflates to more than" in (history.messages[0])
    )
    assert seconds < 5 and peak < 300_000_000, (seconds, peak)


def _run_file(doc: dict | str) -> bytes:
    return gzip.compress((doc if isinstance(doc, str) else json.dumps(doc)).encode())


def test_damaged_run_files_are_skipped_and_the_name_keeps_working(
    tmp_path: Path, reports: list[Report]
) -> None:
    store = Store(tmp_path)
    store.add("attention", reports[0])
    folder = tmp_path / STORE_DIRNAME / "attention"
    good = json.loads(gzip.decompress((folder / "run-0001.json.gz").read_bytes()))
    flipped = bytearray((folder / "run-0001.json.gz").read_bytes())
    for i in range(40, len(flipped) - 40, 97):
        flipped[i] ^= 0xFF
    damaged = {
        "run-0002.json.gz": _run_file(json.dumps(good).replace('"run": 1', '"run": 1e999')),
        "run-0003.json.gz": _run_file({**good, "run": 3, "target": 5}),
        "run-0004.json.gz": _run_file({**good, "run": 4, "target": ["30ms"]}),
        "run-0005.json.gz": _run_file(
            '{"schema": "jupyter_brrr.history_run", "version": 1, '
            '"name": "attention", "run": 5, "report": ' + "[" * 100_000 + "]" * 100_000 + "}"
        ),
        "run-0006.json.gz": bytes(flipped),
    }
    for name, data in damaged.items():
        (folder / name).write_bytes(data)
    history_store._stores.clear()  # a restarted kernel
    comparison, messages = history_store.keep_run(reports[1], "attention", folder=tmp_path)
    text = "\n".join(messages)
    assert all(f"{name} could not be read" in text for name in damaged), text
    assert comparison is not None and (comparison.before.run, comparison.after.run) == (1, 7)
    assert [row["run"] for row in reports[1].history or []] == [1, 7]
    again = Store(tmp_path).history("attention")
    assert [r.run for r in again] == [1, 7] and len(again.rows()) == 2


def test_a_full_disk_leaves_no_empty_run_file(tmp_path: Path, reports: list[Report]) -> None:
    from test_writes import _file_size_limit

    store = Store(tmp_path)
    with _file_size_limit(64):
        entry, messages = store.add("attention", reports[0])
    assert entry.run == 1 and "kept in this kernel only" in messages[0]
    assert list((tmp_path / STORE_DIRNAME / "attention").iterdir()) == []
    # Nothing on disk is "damaged" ever after: the next run is stored and read back cleanly.
    store.add("attention", reports[1])
    restarted = Store(tmp_path).history("attention")
    assert restarted.messages == [] and len(restarted) == 1


def test_forget_skips_a_folder_named_like_a_run_file(tmp_path: Path, reports: list[Report]) -> None:
    store = Store(tmp_path)
    store.add("attention", reports[0])
    store.add("attention", reports[1])
    (tmp_path / STORE_DIRNAME / "attention" / "run-0009.json.gz").mkdir()
    removed, kept = store.forget("attention")
    assert removed == 2 and kept == [
        f"{STORE_DIRNAME}/attention/run-0009.json.gz stayed: it is not a run file of ours."
    ]


def test_two_kernels_pruning_one_name_say_nothing(tmp_path: Path, reports: list[Report]) -> None:
    # Two processes adding to one name with a cap of 2 runs: each prunes files the other may have
    # pruned a moment before, which must pass without a word ("could not tidy ... No such file").
    reports[0].save(tmp_path / "report.json")
    script = (
        "import sys\n"
        "from jupyter_brrr.report import history as h\n"
        "from jupyter_brrr.report.report import Report\n"
        "h.MAX_RUNS = 2\n"
        "report = Report.from_json(open(sys.argv[2]).read())\n"
        "store = h.Store(sys.argv[1])\n"
        "said = [m for _ in range(200) for m in store.add('shared', report)[1]]\n"
        "print(said)\n"
    )
    command = [sys.executable, "-c", script, str(tmp_path), str(tmp_path / "report.json")]
    env = {"PYTHONPATH": str(DATA.parents[1]), "PATH": ""}
    kernels = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) for _ in "ab"]
    said = [kernel.communicate(timeout=300)[0] for kernel in kernels]
    assert all(kernel.returncode == 0 for kernel in kernels)
    assert said == ["[]\n", "[]\n"]
