"""bench/html_size.py's executed tour: run where the tour's relative paths resolve, as from
``notebooks/``. Nothing here executes the tour (the bench does, for minutes)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import html_size  # noqa: E402


def test_the_size_bench_runs_the_tour_where_its_relative_paths_resolve(tmp_path: Path) -> None:
    # bench/html_size.py --executed ran the CPU tour from a bare temporary folder, where its last
    # cell's "../tests/data/gpt2_fwd_bf16_b8_s1024.json.gz" does not exist: the GPT-2 report, one
    # of the tour's report outputs, was missing from the size it measured.
    tour = json.loads((ROOT / "notebooks" / "tour.ipynb").read_text())
    code = "".join("".join(cell["source"]) for cell in tour["cells"] if cell["cell_type"] == "code")
    relative = re.findall(r'Path\("(\.\./[^"]+)"\)', code)
    assert relative  # the tour still reads a file of the checkout by a relative path
    folder = html_size.tour_folder(tmp_path)
    # The named cells' history goes beside the notebook: not into the checkout.
    assert ROOT not in folder.resolve().parents
    for path in relative:
        assert (folder / path).exists(), path
