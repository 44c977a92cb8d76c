"""Press "Try this fix" on every plain ``%%brrr`` cell of the H200 tour, and print the table of
``bench/advice_cases.py --try-fixes`` for it.

The tour's code cells run in order in one ``IPython`` ``InteractiveShell`` (IPython alone, no
kernel), ``%load_ext jupyter_brrr`` included, as the notebook does. Each plain ``%%brrr`` cell
runs with ``--try-fixes --ab-budget BUDGET`` added to its own line: the magic profiles the cell,
then runs every recommendation's automatic fix as a variant of the A/B on the state copy, with
the output check and the run-count bound, and stores each verdict in the recommendation's
``"try"``. That is what a user gets from the Try this fix control, so the rows are read from
the report the cell leaves in ``_brrr``. A fix the A/B did not run (a stateful cell refused, a
variant that could not be built) gets the row "no verdict", with the magic's words.

Cells not run, and why (``plan`` decides from the cell's text, so the rules hold for a changed
notebook too):

- ``%%brrr --sweep`` (section 6's batch sweep): several sizes, each with its own timed runs, a
  minute's budget by default; a sweep has no recommendations to try.
- ``%%brrr --memory`` (section 6): one more run under the memory profiler, and the cell calls
  ``backward()`` (gradients accumulate: ``--try-fixes`` refuses a stateful cell without
  ``--ab-stateful``).
- ``%%brrr --ab`` (section 7): the tour's own A/B of compile and graph, the comparison
  ``--try-fixes`` makes anyway for the MLP cell of section 1.
- a cell calling ``jupyter_brrr.sweep`` (section 6's prefill/decode sweeps: ten sizes), writing
  a file (``save_html``) or loading a trace (``jupyter_brrr.load``): long, or nothing to try;
- a cell reading what a skipped cell made (``_brrr_sweep``, ``_brrr_memory``).

Every other code cell (the set-up cells, ``_brrr.ops``, ``what_if()``, ``%brrr history``) runs
as written. The notebook picks its own device (``cuda`` where torch sees one), so
``--cpu-smoke`` hides the GPUs from torch before it is imported (``CUDA_VISIBLE_DEVICES=""``)
and the tour takes its CPU sizes: the GPU path is the same code with nothing hidden.

The cells run in a temporary working directory, so that ``--name``'s history store
(``.brrr_history/``, in the working directory where there is no notebook file) is written there,
never into ``notebooks/``. The notebook is only read.

    python bench/tour_try_fixes.py                 # on the H200
    python bench/tour_try_fixes.py --cpu-smoke     # here: that it runs through
    python bench/tour_try_fixes.py --list          # the plan, nothing run
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "tour_h200.ipynb"

# %%brrr flags that make a cell something else than one profile (see the module docstring).
_LONG_FLAGS = {
    "--sweep": "a sweep: several sizes with their own timed runs, nothing to try",
    "--ab": "the tour's own A/B comparison (--try-fixes makes one per cell anyway)",
    "--memory": "one more run under the memory profiler, and the cell trains (stateful)",
}
# Code that runs long, writes files or has nothing to try.
_LONG_CALLS = {
    "jupyter_brrr.sweep(": "sweeps at ten sizes (long)",
    ".save_html(": "writes a file, nothing to try",
    "jupyter_brrr.load(": "loads a trace, nothing to try",
    "%brrr job": "a job runs long",
}
# Names only skipped cells make.
_MADE_BY_SKIPPED = ("_brrr_sweep", "_brrr_memory")


@dataclass
class Cell:
    index: int  # the cell's index in the notebook (markdown cells counted)
    source: str
    action: str  # "try" (a plain %%brrr cell), "run" (as written) or "skip"
    why: str = ""


def classify(source: str) -> tuple[str, str]:
    """What to do with a code cell: ("try", ""), ("run", "") or ("skip", why)."""
    first = source.lstrip().split("\n", 1)[0]
    if first.startswith("%%brrr"):
        words = first.split()
        for flag, why in _LONG_FLAGS.items():
            if any(w == flag or w.startswith(flag + "=") for w in words):
                return "skip", why
        return "try", ""
    for call, why in _LONG_CALLS.items():
        if call in source:
            return "skip", why
    for name in _MADE_BY_SKIPPED:
        if re.search(rf"\b{name}\b", source):
            return "skip", f"reads {name}, which a skipped cell makes"
    return "run", ""


def plan(notebook: Path = NOTEBOOK) -> list[Cell]:
    """The notebook's code cells in order, each with what this script does with it."""
    cells = json.loads(notebook.read_text())["cells"]
    planned = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = cell["source"]
        source = "".join(source) if isinstance(source, list) else source
        action, why = classify(source)
        planned.append(Cell(index, source, action, why))
    return planned


def with_try_fixes(source: str, budget_s: float) -> str:
    """The %%brrr cell with ``--try-fixes --ab-budget`` on its magic line."""
    first, _, body = source.lstrip().partition("\n")
    return f"{first} --try-fixes --ab-budget {budget_s:g}\n{body}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--budget-s", type=float, default=None, help="A/B timing per fix (1 s)")
    parser.add_argument("--only", default="", help="comma-separated cell indices to try")
    parser.add_argument(
        "--deadline-s",
        type=float,
        default=100.0,
        help="start no cell to try after this many seconds (default 100)",
    )
    parser.add_argument("--cpu-smoke", action="store_true", help="on the CPU, tiny budget")
    parser.add_argument("--list", action="store_true", help="print the plan, run nothing")
    parser.add_argument("--notebook", default=str(NOTEBOOK))
    args = parser.parse_args()
    budget_s = args.budget_s if args.budget_s is not None else (0.2 if args.cpu_smoke else 1.0)
    only = {int(i) for i in args.only.split(",") if i}
    if args.cpu_smoke:
        # Before torch is imported (by jupyter_brrr or the tour's first cell).
        os.environ["CUDA_VISIBLE_DEVICES"] = ""

    cells = plan(Path(args.notebook))
    for cell in cells:
        wanted = cell.action != "try" or not only or cell.index in only
        note = cell.why if cell.action == "skip" else ("" if wanted else "not in --only")
        print(
            f"# cell {cell.index}: {cell.action if wanted else 'run'}{': ' + note if note else ''}"
        )
    if args.list:
        return 0

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from jupyter_brrr.actions.fixes import FIX_OF_CAUSE

    # The Try table's rows and summary, as advice_cases.py prints them (imported here, after
    # the smoke run hid the GPUs: advice_cases imports torch).
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from advice_cases import print_fix_row, print_fix_summary

    shell = InteractiveShell.instance(colors="nocolor")
    rows: list[dict] = []
    started = time.monotonic()
    workdir = tempfile.TemporaryDirectory(prefix="tour_try_")
    os.chdir(workdir.name)
    print("| cell | advice | fix | predicted ms | measured ms | verdict | step ms |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for cell in cells:
        if cell.action == "skip":
            continue
        trying = cell.action == "try" and (not only or cell.index in only)
        if trying and time.monotonic() - started > args.deadline_s:
            print(f"| {cell.index} | not run: past --deadline-s {args.deadline_s:g} | | | | | |")
            continue
        source = with_try_fixes(cell.source, budget_s) if trying else cell.source
        if trying:  # so that a cell that leaves no report is not read as the previous one's
            shell.user_ns["_brrr"] = None
        cell_started = time.monotonic()
        with capture_output() as out:
            result = shell.run_cell(source, store_history=True)
        said = [line for line in out.stdout.splitlines() if line.startswith("%%brrr")]
        if not result.success:
            error = result.error_in_exec or result.error_before_exec
            print(f"| {cell.index} | FAILED {type(error).__name__}: {str(error)[:200]} | | | | | |")
            print("\n".join(f"#   {line}" for line in (out.stdout + out.stderr).splitlines()[-15:]))
            continue
        if not trying:
            continue
        for line in said:
            if line.startswith("%%brrr --try-fixes:"):
                print(f"#   {line[:300]}")
        report = shell.user_ns.get("_brrr")
        if report is None or report.empty:
            print(f"| {cell.index} | no report: {' / '.join(said)[:200]} | | | | | |")
            continue
        span = float(report.summary["span_s"])
        fixable = [
            (n, r) for n, r in enumerate(report.recommendations) if r["cause"] in FIX_OF_CAUSE
        ]
        if not fixable:
            first = report.recommendations[0]["title"][:60] if report.recommendations else "-"
            print(
                f"| {cell.index} | no automatic fix (first: {first}) | - | - | - | - | "
                f"{span * 1e3:.3g} |"
            )
        for n, recommendation in fixable:
            entry = recommendation.get("try") or {
                "fix": FIX_OF_CAUSE[recommendation["cause"]],
                "verdict": "no verdict",
                "reason": " / ".join(
                    line for line in said if "--try-fixes" in line or "--ab" in line
                ),
            }
            row = {"cell": cell.index, "rank": n + 1, "advice": recommendation["title"]}
            row.update(entry, step_s=span)
            rows.append(row)
            print_fix_row(cell.index, n + 1, recommendation["title"], entry, span)
            if entry["verdict"] in ("no verdict", "not applicable"):
                print(f"#   {entry.get('reason', '')[:300]}")
        print(f"# cell {cell.index}: {time.monotonic() - cell_started:.1f} s", flush=True)
    print_fix_summary(rows, "cell")
    print(f"# total {time.monotonic() - started:.1f} s", flush=True)
    os.chdir(Path(__file__).resolve().parent.parent)
    workdir.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
