"""The published distributions work where they will be installed: ``.ci/build-dist`` builds
the sdist and the wheel and checks them (auditwheel, abi3audit, twine), then the wheel is
installed into a fresh virtual environment with no Node.js on the PATH, as a user on a machine
without a JavaScript toolchain would install it (``pip install "jupyter-brrr[notebook]"``), and
there it profiles a function on the CPU, writes the standalone page and shows its JupyterLab
extension enabled.

Slow (about 5 minutes: the build, twice an isolated build environment, and the install): the
fresh environment gets the CPU build of torch first, so that nothing pulls a CUDA build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NODE_TOOLS = ("node", "nodejs", "npm", "npx", "yarn", "jlpm", "corepack")


def _run(args: list[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited with {done.returncode}:\n"
            f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
        )
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(["bash", str(ROOT / ".ci" / "build-dist"), str(out)], timeout=1500, cwd=ROOT)
    return out


def _path_without_node(bin_dir: Path, shadow: Path) -> str:
    """A PATH with the venv's bin first and every other folder of this PATH, where a folder
    that holds Node.js (or a tool that runs it) stands in as a folder of links to everything
    else it holds."""
    parts = [str(bin_dir)]
    for i, folder in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        here = Path(folder)
        if not folder or not here.is_dir():
            continue
        if not any((here / tool).exists() for tool in NODE_TOOLS):
            parts.append(folder)
            continue
        stand_in = shadow / str(i)
        stand_in.mkdir(parents=True)
        for entry in here.iterdir():
            if entry.name not in NODE_TOOLS:
                (stand_in / entry.name).symlink_to(entry)
        parts.append(str(stand_in))
    return os.pathsep.join(parts)


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A fresh venv with the built wheel and its notebook extra; (its python, its environment)."""
    (wheel,) = dist.glob("*.whl")
    home = tmp_path_factory.mktemp("wheel-venv")
    venv = home / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not key.startswith(("JUPYTER", "BRRR_"))
    }
    env["PATH"] = _path_without_node(venv / "bin", home / "path")
    env["JUPYTER_CONFIG_DIR"] = str(home / "jupyter-config")
    env["JUPYTER_DATA_DIR"] = str(home / "jupyter-data")
    env["IPYTHONDIR"] = str(home / "ipython")
    python = venv / "bin" / "python"
    assert shutil.which("node", path=env["PATH"]) is None
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, "torch==2.13.0"], timeout=900, env=env, cwd=home)
    _run([*pip, f"{wheel}[notebook]"], timeout=900, env=env, cwd=home)
    return python, env


def test_the_wheel_installs_without_node_and_profiles_a_function(installed, tmp_path) -> None:
    python, env = installed
    script = textwrap.dedent(
        """
        import json, shutil, sys
        import torch
        import jupyter_brrr
        from jupyter_brrr.trace import _scan

        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU()).eval()
        x = torch.randn(16, 64)

        def forward():
            with torch.no_grad():
                return model(x)

        report = jupyter_brrr.profile(forward, warmup=1, repeat=3, cpu=True)
        page = report.save_html("report.html")
        print(json.dumps({
            "module": jupyter_brrr.__file__,
            "scan": _scan.__file__,
            "node": shutil.which("node"),
            "ops": sorted(set(report.ops["name"])),
            "runs": report.summary["runs"],
            "timing": report.summary["timing"]["protocol"],
            "page_bytes": page.stat().st_size,
        }))
        """
    )
    done = _run([str(python), "-c", script], timeout=600, env=env, cwd=tmp_path)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    venv = python.parent.parent
    # From the venv, not from this checkout; the compiled reader is the abi3 build.
    assert Path(found["module"]).is_relative_to(venv)
    assert Path(found["scan"]).name == "_scan.abi3.so"
    assert Path(found["scan"]).is_relative_to(venv)
    assert found["node"] is None
    assert "aten::addmm" in found["ops"], found["ops"]
    assert found["runs"]["timed"] == 3 and found["timing"] == "burst"
    # The standalone app (report.js and BokehJS) is inlined from the wheel: over a megabyte.
    assert found["page_bytes"] > 1_000_000


def test_the_wheel_brings_its_jupyterlab_extension_enabled(installed, tmp_path) -> None:
    python, env = installed
    jupyter = python.parent / "jupyter"
    listed = _run([str(jupyter), "labextension", "list"], timeout=300, env=env, cwd=tmp_path)
    lines = (listed.stdout + listed.stderr).splitlines()
    ours = [line for line in lines if "jupyter-brrr" in line]
    assert ours and "enabled" in ours[0] and "OK" in ours[0], lines
    # Notebook 7, which the notebook extra brings, finds the same prebuilt extension.
    version = _run(
        [str(python), "-c", "import notebook; print(notebook.__version__)"],
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert int(version.stdout.strip().split(".")[0]) >= 7
