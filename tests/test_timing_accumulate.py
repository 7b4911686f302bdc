"""``benchmarks/timing_accumulate.py`` keeps a row's calls under a hash of the code its
release function can run, and of no other: a change to one module restarts only the rows
whose function imports it.

Nothing is timed here; the checks read import graphs and syntax trees, and write made-up
chunks to a temporary store.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
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


def test_a_rows_chunks_are_stored_exactly_and_read_back_in_order(accumulate,
                                                                  tmp_path: Path) -> None:
    """Each chunk's timings go to a file of their own, written once (the store is committed:
    a commit adds only the new chunks), and a row read back has every chunk's timings, in
    order, to the nanosecond; a chunk file that does not match its log is an error, not a
    row with other calls. Nothing is timed: the chunks are made up."""
    pair = accumulate.all_pairs()[0]
    row = accumulate.Row(tmp_path, pair)
    chunks = [np.array([[10**9 + 7, 3, 2**40 + 1], [5, 6, 7]], dtype=np.int64),
              np.array([[1], [2**62 - 1]], dtype=np.int64)]
    for number, timings in enumerate(chunks):
        record = {"calls": timings.shape[1], "overruns": 0, "load_1min": 0.5, "load_end": 0.5,
                  "date": f"2026-11-28T10:0{number}:00+00:00", "seconds": 1.0}
        row._save(timings, record)
        row.chunks.append(record)
    names = sorted(path.name for path in row.folder.iterdir())
    assert names == [f"{accumulate.row_id(pair)}{end}" for end in
                     ("-0000.npy.xz", "-0001.npy.xz", ".json")]
    again = accumulate.Row(tmp_path, pair)
    assert again.x.tolist() == [10**9 + 7, 3, 2**40 + 1, 1]
    assert again.y.tolist() == [5, 6, 7, 2**62 - 1]
    assert again.calls == 4 and len(again.chunks) == 2
    row._chunk_file(1).write_bytes(row._chunk_file(0).read_bytes())
    with pytest.raises(RuntimeError, match=r"-0001\.npy\.xz: int64 \(2, 3\) timings, the "
                                           r"chunk log says \(2, 1\)"):
        accumulate.Row(tmp_path, pair)


def test_prune_deletes_only_the_folders_of_code_no_row_has(accumulate, tmp_path: Path) -> None:
    """``--prune`` removes the timings of old code and keeps every current row's."""
    pair = accumulate.all_pairs()[0]
    row = accumulate.Row(tmp_path, pair)
    row._save(np.zeros((2, 1), dtype=np.int64), {"calls": 1})
    (tmp_path / "0123456789ab").mkdir()
    (tmp_path / "0123456789ab" / "00000000-0000.npy.xz").write_bytes(b"")
    accumulate.prune(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [row.version]
