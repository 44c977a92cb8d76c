"""Compiles the columnar trace reader (``jupyter_brrr/trace/_scan.c``) when the wheel is built, in
place, so that an editable install imports it from the source tree too.

The reader uses CPython's limited API of 3.10 (``Py_LIMITED_API`` in the C file), so it is built
as ``_scan.abi3.so`` and the wheel is tagged ``cp310-abi3-<platform>``: one wheel for CPython
3.10 and every later version (``.ci/build-dist`` gives it a manylinux platform tag). A
free-threaded CPython has no limited API: there it is built for that version alone.

Without a working C compiler the build goes on with a warning: jupyter_brrr then reads every
trace with msgspec alone, which gives the same tables about half as fast.
"""

from __future__ import annotations

import sysconfig
import tempfile
from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script where hatchling is absent (``python hatch_build.py``)
    BuildHookInterface = object  # type: ignore[assignment,misc]


class ScanBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return  # the sdist ships the C source
        try:
            built = _build_in_place(Path(self.root))
        except Exception as error:  # any compiler or linker failure: fall back, but say so
            self.app.display_warning(
                f"jupyter_brrr: the compiled trace reader was not built ({error}); traces will "
                "be read by msgspec alone, about half as fast. Install a C compiler and the "
                "Python headers, then reinstall, to build it."
            )
            return
        if version == "editable":
            return  # imported from the source tree, where it was just built
        build_data["pure_python"] = False
        if _free_threaded():
            build_data["infer_tag"] = True  # for this one version, cp313-cp313t
        else:
            build_data["tag"] = f"{ABI3_PYTHON}-abi3-{_platform_tag()}"
        build_data["force_include"][str(built)] = f"jupyter_brrr/trace/{built.name}"


# The oldest CPython whose limited API _scan.c keeps to (its Py_LIMITED_API, 0x030A0000).
ABI3_PYTHON = "cp310"


def _platform_tag() -> str:
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _free_threaded() -> bool:
    """A free-threaded CPython (3.13t) has no limited API: the reader builds for it alone."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _build_in_place(root: Path) -> Path:
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    limited = not _free_threaded()
    extension = Extension(
        "jupyter_brrr.trace._scan",
        sources=["jupyter_brrr/trace/_scan.c"],
        py_limited_api=limited,
        define_macros=[] if limited else [("SCAN_FULL_C_API", "1")],
    )
    distribution = Distribution({"name": "jupyter-brrr", "ext_modules": [extension]})
    distribution.script_name = "hatch_build.py"
    distribution.src_root = str(root)
    command = build_ext(distribution)
    command.inplace = True
    with tempfile.TemporaryDirectory() as temp:
        command.build_temp = command.build_lib = temp
        command.ensure_finalized()
        command.run()
    built = root / command.get_ext_filename("jupyter_brrr.trace._scan")
    # A build for one Python version (``_scan.cpython-311-...so``, from before the reader kept to
    # the limited API) would be imported before the abi3 one: it goes.
    for stale in built.parent.glob("_scan.cpython-*"):
        if stale != built:
            stale.unlink()
    return built


if __name__ == "__main__":
    # ``python hatch_build.py``: build the reader in place without installing the package, e.g.
    # on a GPU machine that runs bench/ scripts from a copy of the source tree.
    print(_build_in_place(Path(__file__).resolve().parent))
