"""dpkit as a package: the wheel ``pip install .`` builds, installed where Jupyter runs.

Builds the wheel with pip, as ``pip install .`` does (from a copy of the files it reads, so
that setuptools' ``build/`` stays out of the working tree; the build backend comes from
PyPI, as for any ``pip install``), and installs it with ``--no-deps`` into a new virtual
environment without the system's site-packages. The dependencies are the ones this
environment has installed, made visible to the new one by a ``.pth`` file: nothing is
downloaded. Every check then runs in that environment, from an empty folder and without
``PYTHONPATH``, so that the repository's ``dpkit/`` cannot be imported by mistake.

Checked: the wheel holds every module of ``dpkit/`` and the data it reads; the modules
import with only what ``pip install dpkit``, ``dpkit[book]`` and ``dpkit[book,course]``
install (:data:`NEEDS`); the installed dpkit releases with the Laplace mechanism and loads
the Adult data; and a chapter (``book/laplace.md``) runs top to bottom in a kernel of the
new environment.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
#: What the build reads: pyproject.toml maps data/ and scripts/lab_settings/ into dpkit.
SOURCES = ["pyproject.toml", "README.md", "dpkit", "data", "scripts/lab_settings"]
#: The extras each part of dpkit needs besides the core dependencies (numpy, scipy, gmpy2,
#: cryptography); a module that no key names (itself or a package above it) needs the core
#: alone.
NEEDS = {
    "dpkit.audit": ("book",),  # tqdm
    "dpkit.datasets": ("book",),  # pandas
    "dpkit.attacks": ("book",),  # dpkit.audit, for the sparse vector attack
    "dpkit.check": ("book",),  # dpkit.plots, dpkit.datasets, dpkit.audit
    "dpkit.plots": ("book",),
    "dpkit.widgets": ("book",),
    "dpkit.course": ("book", "course"),
}
CHAPTER = ROOT / "book" / "laplace.md"

# Run in the new environment: import the given modules with only the distributions that
# `pip install dpkit[EXTRAS]` would install (those dpkit requires, transitively, as the
# installed metadata says) importable from the dependencies' folders, and print the
# failures as JSON.
IMPORT_WITH_ONLY = textwrap.dedent('''
    import importlib, importlib.metadata as md, json, sys, sysconfig, traceback
    from importlib.machinery import PathFinder
    from pathlib import Path
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    extras, modules = sys.argv[1].split(",") if sys.argv[1] else [], sys.argv[2:]
    installed, todo = set(), [("dpkit", frozenset(extras))]
    while todo:
        name, with_extras = todo.pop()
        try:
            requires = md.distribution(name).requires or []
        except md.PackageNotFoundError:
            continue
        for requirement in map(Requirement, requires):
            key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
            marker = requirement.marker
            if key not in installed and (marker is None or any(
                    marker.evaluate({"extra": e}) for e in ["", *with_extras])):
                installed.add(key)
                todo.append(key)
    installed = {name for name, _ in installed}
    importable = {top for top, dists in md.packages_distributions().items()
                  if any(canonicalize_name(d) in installed for d in dists)}

    # The dependencies' folders leave sys.path; their allowed top-level names stay found.
    dependencies = Path(sysconfig.get_paths()["purelib"], "dependencies.pth").read_text().split()
    sys.path[:] = [p for p in sys.path if p not in dependencies]

    class Only:
        def find_spec(self, name, path=None, target=None):
            if path is None and name in importable:
                return PathFinder.find_spec(name, dependencies)
            return None

        def find_distributions(self, context=md.DistributionFinder.Context()):
            there = md.DistributionFinder.Context(name=context.name, path=dependencies)
            return (d for d in md.MetadataPathFinder.find_distributions(there)
                    if canonicalize_name(d.metadata["Name"]) in installed)

    sys.meta_path.append(Only())
    failures = {}
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:
            failures[module] = traceback.format_exc(limit=-2)
    print(json.dumps(failures))
''')

# Run in the new environment: use the installed dpkit as a reader of the book would.
USE_THE_LIBRARY = textwrap.dedent('''
    import json, dpkit, dpkit.laplace
    from dpkit.course.lab import settings_dir
    from dpkit.datasets import adult_path, load_adult
    from dpkit.rng import seeded
    release = dpkit.laplace.laplace_mechanism(10.0, 1.0, 0.5, rng=seeded(1))
    print(json.dumps({"dpkit": dpkit.__file__, "adult": str(adult_path()),
                      "rows": len(load_adult()), "release": release,
                      "settings": sorted(p.relative_to(settings_dir()).as_posix()
                                         for p in settings_dir().rglob("*.json"))}))
''')

# Run in the new environment: execute a chapter in a kernel started by that environment's
# Jupyter (the native python3 kernel: this Python), then report which dpkit it imported.
RUN_A_CHAPTER = textwrap.dedent('''
    import json, sys, jupytext, nbclient, nbformat
    notebook = jupytext.read(sys.argv[1])
    notebook.cells.append(nbformat.v4.new_code_cell("import dpkit; print(dpkit.__file__)"))
    nbclient.NotebookClient(notebook, kernel_name="python3", timeout=60,
                            resources={"metadata": {"path": "."}}).execute()
    print(json.dumps(notebook.cells[-1].outputs[0]["text"].strip()))
''')


def _run(python: Path, script: str, *args: str, cwd: Path, timeout: float = 60) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DPKIT_WIDGET_MODE", "PYTHONSTARTUP")}
    result = subprocess.run([str(python), "-c", script, *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from the repository's files."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--quiet",
                    "--wheel-dir", str(work / "dist")], check=True, timeout=300)
    (built,) = (work / "dist").glob("dpkit-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> tuple[Path, Path]:
    """(the new environment's Python, an empty folder to run in): the wheel installed
    without dependencies, which come from this environment's site-packages."""
    work = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / "env")],
                   check=True, timeout=120)
    python = work / "env" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(_run(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=work))
    ours = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    (site / "dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--no-index", "--quiet", str(wheel)], check=True, timeout=300)
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere


def test_the_wheel_holds_every_module_and_the_data_it_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "dpkit").rglob("*.py")}
    assert modules <= names, f"missing from the wheel: {sorted(modules - names)}"
    data = {"dpkit/_data/adult.csv", "dpkit/_data/README.md"}
    settings = {f"dpkit/course/_lab_settings/{p.relative_to(ROOT / 'scripts/lab_settings')}"
                for p in (ROOT / "scripts" / "lab_settings").rglob("*.json")}
    assert data | settings <= names, f"missing: {sorted((data | settings) - names)}"
    outside = {n for n in names if not n.startswith(("dpkit/", "dpkit-"))}
    assert not outside, f"the wheel installs files outside dpkit: {sorted(outside)}"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("dpkit/_data/adult.csv") == (ROOT / "data" / "adult.csv").read_bytes()


def _needs(module: str) -> tuple[str, ...]:
    for prefix, extras in NEEDS.items():
        if module == prefix or module.startswith(prefix + "."):
            return extras
    return ()


@pytest.mark.parametrize("extras", [(), ("book",), ("book", "course")],
                         ids=["core", "book", "book+course"])
def test_each_module_imports_with_what_its_extras_install(venv, extras):
    python, elsewhere = venv
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "dpkit").rglob("*.py") if p.name != "__main__.py")
    wanted = [m for m in modules if set(_needs(m)) <= set(extras)]
    failures = json.loads(_run(python, IMPORT_WITH_ONLY, ",".join(extras), *wanted,
                               cwd=elsewhere))
    assert not failures, "\n".join(f"{m}:\n{tb}" for m, tb in failures.items())


def test_the_installed_dpkit_releases_and_loads_its_data(venv):
    python, elsewhere = venv
    used = json.loads(_run(python, USE_THE_LIBRARY, cwd=elsewhere))
    installed = Path(used["dpkit"]).resolve()
    assert installed.is_relative_to(python.parent.parent.resolve()), installed
    assert Path(used["adult"]).resolve().is_relative_to(installed.parent)
    assert used["rows"] == 32_561
    assert abs(used["release"] - 10.0) < 100
    assert used["settings"] == ["overrides.json", "student/jupyter_server_config.json",
                                "student/labconfig/page_config.json"]
    assert (python.parent / ("dpkit-course.exe" if os.name == "nt" else "dpkit-course")
            ).is_file()


def test_a_chapter_runs_in_a_kernel_of_the_new_environment(venv):
    python, elsewhere = venv
    imported = json.loads(_run(python, RUN_A_CHAPTER, str(CHAPTER), cwd=elsewhere,
                               timeout=180))
    assert Path(imported).resolve().is_relative_to(python.parent.parent.resolve()), imported
