"""What the notebook front end asks of IPython's shell, in one place, and how its long-running
flags print their progress.

The rest of the package never sees the shell: the front end reads the user's namespace, the
cell's source and the kernel from it, and passes plain values (a namespace dict, names, code)
down to the core and the actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .cell_output import show

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

# The names this tool binds in the user's namespace: its results, not the user's state.
RESULT_NAMES = frozenset(
    {"_brrr", "_brrr_ab", "_brrr_change", "_brrr_job", "_brrr_sweep", "_brrr_memory"}
)


def hidden_names(shell: InteractiveShell) -> set[str]:
    """Names of the user namespace that are the shell's (``In``, ``Out``, ``_``) or this tool's
    (``_brrr``), not the user's state."""
    return {*getattr(shell, "user_ns_hidden", {}), *RESULT_NAMES}


def prompt_number(shell: InteractiveShell) -> int:
    """The number in this cell's prompt: IPython counts the next cell before this one runs."""
    result = getattr(shell.displayhook, "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if count is not None else shell.execution_count


def widgets_enabled(shell: object) -> bool:
    """Whether to show controls (buttons, progress): a Jupyter kernel (not a terminal) whose
    current request comes from a front end where someone can click, and ipywidgets installed.

    Front ends with a person at them (JupyterLab, Notebook, VS Code) send ``allow_stdin``;
    nbclient, nbconvert and papermill do not. There nobody can click, and widgets would only
    leave widget state and scripts in the saved notebook: ``--ab`` is the way there.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None or not getattr(kernel, "_allow_stdin", False):
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def progress_printers(
    flag: str, quiet: bool
) -> tuple[Callable[[str], None], Callable[[str], None]]:
    """``say`` and ``tell`` for a long-running flag (``--ab``, ``--sweep``): lines prefixed with
    ``%%brrr FLAG:``. ``say`` is progress, silent with ``--quiet``; ``tell`` is what concerns the
    user's data, printed even then."""

    def tell(text: str) -> None:
        show(f"%%brrr {flag}: {text}")  # past the cell's hidden output (cell_output)

    def say(text: str) -> None:
        if not quiet:
            tell(text)

    return say, tell
