"""Start JupyterLab on the chapters: the command behind ``make lab``, also used by its test.

Every ``.md`` file opens as a notebook on a double click (jupytext's "Jupytext Notebook"
viewer is made the default for Markdown through the settings override shipped in
``scripts/lab_settings/overrides.json``), MyST directives render (jupyterlab-myst) in every
cell as soon as the chapter opens (the same file turns notebook windowing off: a windowed
notebook shows a cell below the fold as raw source until the browser finds idle time), and the
server starts as root too: ``--allow-root`` only switches off the refusal to run with user
id 0 and changes nothing for anybody else. The widgets are live: ``DPKIT_WIDGET_MODE``
(``static`` while the book is built) is removed from the server's and so the kernels'
environment.

Usage: ``python scripts/lab.py [more jupyter lab options]``.
"""

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "scripts" / "lab_settings"


def lab_command(notebook_dir: Path = ROOT / "book", extra: Sequence[str] = ()) -> list[str]:
    """Return the command line that serves ``notebook_dir`` in JupyterLab.

    Parameters
    ----------
    notebook_dir : Path
        The folder shown in the file browser (the chapters, ``book/``, by default).
    extra : sequence of str
        More ``jupyter lab`` options (the test adds ``--no-browser``, a port and a token).

    Returns
    -------
    list of str
        The arguments, starting with this Python running ``-m jupyterlab``.
    """
    return [
        sys.executable, "-m", "jupyterlab",
        f"--notebook-dir={notebook_dir}",
        "--ServerApp.contents_manager_class=jupytext.TextFileContentsManager",
        f"--LabApp.app_settings_dir={SETTINGS}",
        "--allow-root",
        *extra,
    ]


def lab_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Return ``environ`` without ``DPKIT_WIDGET_MODE``, so that the widgets are live."""
    return {key: value for key, value in environ.items() if key != "DPKIT_WIDGET_MODE"}


def main(argv: Sequence[str]) -> None:
    """Replace this process with the JupyterLab server on ``book/``; ``argv`` are passed on."""
    command = lab_command(extra=argv)
    os.execve(command[0], command, lab_environment())


if __name__ == "__main__":
    main(sys.argv[1:])
