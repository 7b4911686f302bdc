"""JupyterLab for the course: ``python -m dpkit.course lab`` (``make lab``, ``scripts/lab.py``).

One lab serves a folder, the current one by default. From the root of a clone of the
repository that is everything a student works on: the chapters (``book/*.md``, where the
file browser opens), the student notebooks (``_build/notebooks/student/``, written by the
``notebooks`` command) and the released assignments (``_build/course/release/<chapter>/``,
written by ``assignments``).

* **Chapters open as notebooks.** A ``.md`` file opens in jupytext's notebook view on a
  double click and MyST directives render (jupyterlab-myst) in every cell at once: both
  settings are in ``overrides.json`` in :func:`settings_dir`.
* **Opening a chapter changes nothing.** :class:`ChapterContentsManager` gives JupyterLab
  the kernel's metadata with the notebook, so it is not marked modified (and autosave does
  not rewrite it), and a save writes back the bytes read: its docstring says how.
* **Students see no instructor tooling.** The student lab adds the Jupyter configuration
  folder ``student/`` of :func:`settings_dir` to ``JUPYTER_CONFIG_PATH``: its
  ``labconfig/page_config.json`` disables nbgrader's Formgrader, Create Assignment and
  Course List in JupyterLab and its ``jupyter_server_config.json`` their server parts, so
  the Nbgrader menu holds the Assignment List and notebooks keep the Validate button.
  ``--instructor`` leaves nbgrader whole.
* **Live widgets, any user.** ``DPKIT_WIDGET_MODE`` (``static`` while the book is built) is
  removed from the environment of the server and so of its kernels; ``--allow-root`` only
  lifts the refusal to run as user id 0.

The server runs in this process (no shell, no ``make``: the same on Windows). Options this
command does not know are passed to JupyterLab, in the ``--name=value`` form, e.g.
``--port=9999 --no-browser``.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from jupytext import TextFileContentsManager

PROG = "python -m dpkit.course lab"
#: The jupytext notebook metadata filter a chapter is saved with: the default one (the front
#: matter's ``jupytext`` and ``kernelspec``) without jupytext's version stamps, nor itself.
NO_VERSION_STAMPS = ("-jupytext.text_representation.format_version,"
                     "-jupytext.text_representation.jupytext_version,"
                     "-jupytext.notebook_metadata_filter")
_CHECKOUT = Path(__file__).resolve().parents[2]


def settings_dir() -> Path:
    """Return the folder of the lab's settings.

    ``scripts/lab_settings`` in the repository; the wheel carries it as the package data
    ``dpkit.course._lab_settings`` (see ``pyproject.toml``).
    """
    try:
        return Path(resources.files("dpkit.course._lab_settings").joinpath("overrides.json")
                    ).parent
    except ModuleNotFoundError:
        return _CHECKOUT / "scripts" / "lab_settings"


def lab_arguments(root: Path, extra: Sequence[str] = ()) -> list[str]:
    """Return the ``jupyter lab`` options that serve ``root``, then ``extra``.

    The file browser opens in ``root/book`` when there is one.
    """
    manager = f"{ChapterContentsManager.__module__}.{ChapterContentsManager.__qualname__}"
    if manager.startswith("__main__."):  # run as python -m dpkit.course.lab
        manager = f"dpkit.course.lab.{ChapterContentsManager.__qualname__}"
    arguments = [
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.contents_manager_class={manager}",
        f"--LabApp.app_settings_dir={settings_dir()}",
        "--allow-root",
    ]
    if (root / "book").is_dir():
        arguments.append("--ContentsManager.preferred_dir=book")
    return [*arguments, *extra]


def lab_environment(*, instructor: bool = False,
                    environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Return the environment of the lab's server (and kernels), made from ``environ``.

    Without ``DPKIT_WIDGET_MODE``; with the student settings first on
    ``JUPYTER_CONFIG_PATH`` unless ``instructor``; and, when this dpkit is a source
    checkout rather than an installed package, with the checkout first on ``PYTHONPATH``,
    so that the server and the kernels import this same dpkit.
    """
    env = {key: value for key, value in environ.items() if key != "DPKIT_WIDGET_MODE"}
    if not instructor:
        _prepend(env, "JUPYTER_CONFIG_PATH", settings_dir() / "student")
    if (_CHECKOUT / "pyproject.toml").is_file():
        _prepend(env, "PYTHONPATH", _CHECKOUT)
    return env


def _prepend(env: dict[str, str], name: str, folder: Path) -> None:
    env[name] = os.pathsep.join([str(folder), *filter(None, [env.get(name)])])


class ChapterContentsManager(TextFileContentsManager):
    """jupytext's contents manager, except that opening and saving a chapter changes nothing.

    When a notebook opens, JupyterLab sets its ``kernelspec`` to the kernel's (with the
    kernel's display name, ``Python 3 (ipykernel)``) and adds the ``language_info`` the
    kernel reports. A chapter spells its kernelspec its own way (``Python 3``) and, being
    text, has no ``language_info``: the notebook showed as modified as soon as it opened,
    and a save (or an autosave) rewrote the chapter's front matter, with jupytext's version
    stamps (``format_version``, ``jupytext_version``) added as well.

    Here a text notebook is handed out with the metadata the kernel will set (the kernel
    spec's name, display name and language; for a Python kernel, ipykernel's
    ``language_info`` on this Python), so JupyterLab has nothing to change. When it is
    saved with the kernel its file names, the file's own kernelspec is written back, and a
    text notebook with a front matter is written with the notebook metadata filter
    :data:`NO_VERSION_STAMPS` unless it has a filter of its own (a text notebook without
    one, such as ``book/teaching.md``, reads as ``-all`` and stays without). jupytext never
    writes ``language_info`` into a text notebook.

    The filter is set per notebook, not in a ``jupytext.toml``: a configuration file's
    filter overrides a notebook's own, and would give the pages without a front matter one.
    """

    def get(self, path: str, content: bool = True, type: str | None = None,
            format: str | None = None, **kwargs: Any) -> dict[str, Any]:
        model = super().get(path, content=content, type=type, format=format, **kwargs)
        if content and _is_text_notebook(model, path):
            metadata = model["content"]["metadata"]
            kernel = self._kernel_metadata(metadata.get("kernelspec", {}).get("name"))
            if kernel:
                metadata["kernelspec"] = kernel["kernelspec"]
                if "language_info" in kernel:
                    metadata.setdefault("language_info", kernel["language_info"])
        return model

    def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        if _is_text_notebook(model, path) and model.get("content"):
            metadata = model["content"]["metadata"]
            metadata.setdefault("jupytext", {}).setdefault("notebook_metadata_filter",
                                                           NO_VERSION_STAMPS)
            if self.file_exists(path):
                on_disk = super().get(path)["content"]["metadata"].get("kernelspec")
                kernelspec = metadata.get("kernelspec")
                if on_disk and kernelspec and kernelspec.get("name") == on_disk.get("name"):
                    metadata["kernelspec"] = on_disk
        return super().save(model, path)

    def _kernel_metadata(self, name: str | None) -> dict[str, Any] | None:
        """The kernelspec JupyterLab records for kernel ``name`` (None: the default kernel,
        which JupyterLab starts for a notebook that names none) and, for a Python kernel,
        the language_info it reports; None for an unknown kernel."""
        from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager, NoSuchKernel

        specs = getattr(self.parent, "kernel_spec_manager", None) or KernelSpecManager()
        kernels = getattr(self.parent, "kernel_manager", None)
        name = name or getattr(kernels, "default_kernel_name", NATIVE_KERNEL_NAME)
        try:
            spec = specs.get_kernel_spec(name)
        except NoSuchKernel:
            return None
        kernel: dict[str, Any] = {"kernelspec": {
            "name": name, "display_name": spec.display_name, "language": spec.language}}
        if spec.language == "python":
            from ipykernel.ipkernel import IPythonKernel

            kernel["language_info"] = copy.deepcopy(IPythonKernel.language_info)
        return kernel


def _is_text_notebook(model: Mapping[str, Any], path: str) -> bool:
    return model.get("type") == "notebook" and not path.endswith(".ipynb")


def _places(root: Path) -> list[str]:
    """Where the chapters, notebooks and assignments are in a clone at ``root``, or how to
    make them; nothing for another folder."""
    if not (root / "book").is_dir():
        return []
    made_by = {
        "chapters": ("book", ""),
        "notebooks": ("_build/notebooks/student", "notebooks book _build/notebooks"),
        "assignments": ("_build/course/release", "assignments book _build/course"),
    }
    return [f"  {what:<12} {folder}/" if (root / folder).is_dir()
            else f"  {what:<12} none yet: python -m dpkit.course {command}"
            for what, (folder, command) in made_by.items()]


def parser() -> argparse.ArgumentParser:
    """The command line of the lab command."""
    formatter = argparse.RawDescriptionHelpFormatter
    top = argparse.ArgumentParser(
        prog=PROG, formatter_class=formatter,
        description="Open JupyterLab on FOLDER: the chapters (book/*.md) as notebooks, the\n"
                    "student notebooks (_build/notebooks/student/) and the released\n"
                    "assignments (_build/course/release/). Options it does not know go to\n"
                    "JupyterLab, in the --name=value form.",
        epilog="examples:\n"
               f"  {PROG}                 a student's lab on the current folder\n"
               f"  {PROG} --instructor    the teacher's, with nbgrader's Formgrader\n"
               f"  {PROG} . --port=9999 --no-browser")
    top.add_argument("folder", metavar="FOLDER", type=Path, nargs="?", default=Path("."),
                     help="the folder to serve (default: the current one, e.g. the root "
                          "of a clone of the repository)")
    top.add_argument("--instructor", action="store_true",
                     help="the teacher's lab: with nbgrader's Formgrader, Create Assignment "
                          "and Course List")
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the folder in JupyterLab until the server stops; return the exit code."""
    command = parser()
    args, options = command.parse_known_args(argv)
    if not args.folder.is_dir():
        command.error(f"folder {str(args.folder)!r} does not exist or is not a folder")
    root = args.folder.resolve()
    who = ("instructor (all of nbgrader)" if args.instructor else
           "student (nbgrader's Assignment List; --instructor for the Formgrader)")
    print(f"JupyterLab on {root}, for the {who}:", *_places(root), sep="\n", file=sys.stderr)
    environment = lab_environment(instructor=args.instructor)
    os.environ.clear()
    os.environ.update(environment)
    from jupyterlab.labapp import LabApp

    LabApp.launch_instance(lab_arguments(root, options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
