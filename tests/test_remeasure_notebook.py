"""Named runs in real kernels run by nbclient: a notebook executed, its kernel gone, then
executed again in the same folder by a new kernel, which finds the earlier runs beside the
notebook and compares against them. The saved notebook carries the comparison and no path."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from jupyter_brrr.schema.report import MIME_TYPE

SETUP = "%load_ext jupyter_brrr\nimport torch\nx = torch.randn(128, 128)"


def execute(folder: Path, cells: list[str], env: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in [SETUP, *cells]]
    client = NotebookClient(
        nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(folder)}}
    )
    client.execute(env=env)  # a fresh kernel each time, shut down at the end
    nbformat.write(nb, folder / "saved.ipynb")
    return nb


def report(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    (output,) = [o for o in cell.outputs if MIME_TYPE in o.get("data", {})]
    return output


def test_runs_survive_a_kernel_restart(tmp_path: Path, kernel_env: dict[str, str]) -> None:
    first = execute(
        tmp_path,
        [
            "%%brrr --name mm --warmup 1 --repeat 5\ny = x @ x",
            "%%brrr --name mm --warmup 1 --repeat 5\ny = x @ x",
        ],
        kernel_env,
    )
    assert report(first.cells[2]).data[MIME_TYPE]["change"]["after"]["run"] == 2
    assert (tmp_path / ".brrr_history" / "mm" / "run-0002.json.gz").is_file()

    second = execute(
        tmp_path,
        [
            "%brrr history mm",
            "%%brrr --name mm --warmup 1 --repeat 5\ny = (x @ x).relu()",
            "%brrr diff mm 1 3",
        ],
        kernel_env,
    )
    history = second.cells[1].outputs[0].data["text/plain"].splitlines()
    assert [line.split()[0] for line in history[1:]] == ["1", "2"]
    assert history[2].rstrip().endswith("same")  # run 2 ran the code of run 1
    output = report(second.cells[2])
    doc = output.data[MIME_TYPE]
    assert (doc["change"]["before"]["run"], doc["change"]["after"]["run"]) == (2, 3)
    assert [run["run"] for run in doc["history"]] == [1, 2, 3]
    assert doc["history"][2]["code_changed"] is True
    assert "Change since mm (run 2)" in output.data["text/html"]
    assert "change since mm (run 2):" in output.data["text/plain"]
    # %brrr diff shows a comparison, with its own JSON, static HTML and text.
    (diff_output,) = second.cells[3].outputs
    assert diff_output.data["application/vnd.jupyter-brrr.comparison+json"]["after"]["run"] == 3
    assert diff_output.data["text/plain"].startswith(
        "jupyter_brrr change: mm (run 1) -> mm (run 3)"
    )
    assert "aten::clamp_min" in diff_output.data["text/plain"]  # relu's op: it appeared
    # The saved notebook names no folder of this machine.
    saved = (tmp_path / "saved.ipynb").read_text()
    assert str(tmp_path) not in saved and json.loads(saved)["cells"]


def test_a_corrupt_store_gives_a_message_not_an_error(
    tmp_path: Path, kernel_env: dict[str, str]
) -> None:
    folder = tmp_path / ".brrr_history" / "mm"
    folder.mkdir(parents=True)
    (folder / "run-0001.json.gz").write_bytes(b"\x1f\x8b not really gzip")
    nb = execute(tmp_path, ["%%brrr --name mm\ny = x @ x"], kernel_env)
    outputs = nb.cells[1].outputs
    assert not [o for o in outputs if o.output_type == "error"]
    stream = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert ".brrr_history/mm/run-0001.json.gz could not be read" in stream
    assert report(nb.cells[1]).data[MIME_TYPE]["history"][0]["run"] == 2
