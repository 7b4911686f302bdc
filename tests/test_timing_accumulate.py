"""``benchmarks/timing_accumulate.py`` keeps a row's calls under a hash of the code its
release function can run, and of no other: a change to one module restarts only the rows
whose function imports it.

Nothing is timed here; the checks read import graphs and syntax trees.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import dpkit

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
ROOT = Path(dpkit.__file__).resolve().parent


@pytest.fixture(scope="module")
def accumulate():
    sys.path.insert(0, str(BENCHMARKS))   # the script imports ``timing`` from its folder
    try:
        import timing_accumulate
        yield timing_accumulate
    finally:
        sys.path.remove(str(BENCHMARKS))


def _names(paths) -> set[str]:
    return {str(path.relative_to(ROOT)) for path in paths}


def test_a_rows_modules_are_those_its_function_imports(accumulate) -> None:
    """Randomized response runs neither the Laplace samplers nor the SVT; the Laplace
    mechanism runs no SVT; every function's own module and the padding are in its set."""
    response = _names(accumulate.row_modules("randomized_response"))
    laplace = _names(accumulate.row_modules("laplace_mechanism"))
    clipping = _names(accumulate.row_modules("choose_clip_bound"))
    assert {"timing.py", "_waiting.py", "randomized_response.py"} <= response
    assert "laplace.py" not in response and "_samplers/grid.py" not in response
    assert {"timing.py", "laplace.py", "_samplers/grid.py"} <= laplace
    assert not any(name.startswith("svt/") for name in laplace)
    assert {"svt/clipping.py", "svt/core.py", "timing.py"} <= clipping


def test_a_change_restarts_only_the_rows_whose_function_imports_it(accumulate,
                                                                    monkeypatch) -> None:
    """Changing the code of ``svt/clipping.py`` changes the version of the clipping rows
    and keeps that of the Laplace rows."""
    pairs = {pair.function: pair for pair in accumulate.all_pairs()}
    before = {name: accumulate.row_version(pairs[name])
              for name in ("laplace_mechanism", "choose_clip_bound")}
    code = accumulate._code

    def edited(path: Path) -> bytes:
        return code(path) + (b"# edited" if path.name == "clipping.py" else b"")

    monkeypatch.setattr(accumulate, "_code", edited)
    assert accumulate.row_version(pairs["laplace_mechanism"]) == before["laplace_mechanism"]
    assert accumulate.row_version(pairs["choose_clip_bound"]) != before["choose_clip_bound"]


def test_no_audited_module_imports_inside_a_function(accumulate) -> None:
    """The import graph covers what a function can run only if no module imports another
    later, from inside a function (``import`` in a body, ``importlib.import_module`` or
    ``import_module``, ``__import__``, ``sys.modules``: breaker review 33). The
    package's lazy ``__getattr__`` (``dpkit.svt`` on first use) is the one exception, and
    no audited module reaches it: none imports the bare package ``dpkit``."""
    functions = {pair.function for pair in accumulate.all_pairs()}
    paths = {path for name in functions for path in accumulate.row_modules(name)}
    late = []
    for path in sorted(paths):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)) or (
                            isinstance(inner, ast.Attribute)
                            and inner.attr in {"import_module", "__import__", "modules"}) or (
                            isinstance(inner, ast.Name)
                            and inner.id in {"import_module", "__import__"}):
                        late.append(f"{path.relative_to(ROOT)}:{node.name}")
            if isinstance(node, ast.Import) and any(a.name == "dpkit" for a in node.names):
                late.append(f"{path.relative_to(ROOT)}: import dpkit")
    assert late == ["__init__.py:__getattr__"]
