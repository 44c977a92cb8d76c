"""Compiles the columnar trace reader (``jupyter_brrr/trace/_scan.c``) when the wheel is built, in
place, so that an editable install imports it from the source tree too.

Without a working C compiler the build goes on with a warning: jupyter_brrr then reads every
trace with msgspec alone, which gives the same tables about half as fast.
"""

from __future__ import annotations

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
        build_data["infer_tag"] = True
        build_data["force_include"][str(built)] = f"jupyter_brrr/trace/{built.name}"


def _build_in_place(root: Path) -> Path:
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    extension = Extension("jupyter_brrr.trace._scan", sources=["jupyter_brrr/trace/_scan.c"])
    distribution = Distribution({"name": "jupyter-brrr", "ext_modules": [extension]})
    distribution.script_name = "hatch_build.py"
    distribution.src_root = str(root)
    command = build_ext(distribution)
    command.inplace = True
    with tempfile.TemporaryDirectory() as temp:
        command.build_temp = command.build_lib = temp
        command.ensure_finalized()
        command.run()
    return root / command.get_ext_filename("jupyter_brrr.trace._scan")


if __name__ == "__main__":
    # ``python hatch_build.py``: build the reader in place without installing the package, e.g.
    # on a GPU machine that runs bench/ scripts from a copy of the source tree.
    print(_build_in_place(Path(__file__).resolve().parent))
