"""The package's architecture, as tests: imports go one way, no cycles, sizes stay readable.

The layers, bottom up (a module may import its own layer and the layers below it, never a
layer above; README.md's module table and DESIGN.md describe the same order):

0. foundation: ``dpkit`` (its ``__init__`` imports nothing eagerly), ``_exact``, ``_checks``,
   ``rng``, ``timing``
1. ``_samplers``: the exact samplers and the power-of-two grid (private)
2. the DP core: the mechanisms, ``composition``, ``audit``, ``datasets``
3. the teaching versions: ``naive`` and ``attacks``
4. ``i18n``, ``i18n_check``: the language of figures, widgets and checkers, and their message
   catalogues (above the DP core, so that no mechanism can depend on it)
5. ``plots``: figure builders
6. ``check`` and ``widgets``: exercise checkers, sliders
7. ``course``: notebooks, assignments and grading

Every import counts, including those inside functions (an import made lazily to dodge a
cycle is still a cycle). The graph is read from the source with :mod:`ast`, so the test
needs no import side effects and names the offending line.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "dpkit"

LAYERS = (
    ("foundation", ("dpkit", "dpkit._exact", "dpkit._checks", "dpkit.rng", "dpkit._calibration",
                    "dpkit._waiting", "dpkit._warming", "dpkit._unpadding", "dpkit.timing")),
    ("samplers", ("dpkit._samplers",)),
    ("core", ("dpkit.randomized_response", "dpkit.laplace", "dpkit.gaussian",
              "dpkit.gaussian_calibration", "dpkit.exponential", "dpkit.exponential_eta",
              "dpkit.svt", "dpkit.composition", "dpkit.audit", "dpkit.datasets",
              "dpkit.snapping")),
    ("teaching versions", ("dpkit.naive", "dpkit.attacks")),
    ("language", ("dpkit.i18n", "dpkit.i18n_check")),
    ("plots", ("dpkit.plots",)),
    ("checkers and widgets", ("dpkit.check", "dpkit.widgets")),
    ("course tooling", ("dpkit.course",)),
)
MAX_MODULE_LINES = 800
MAX_CLASS_LINES = 150


@dataclasses.dataclass(frozen=True)
class Import:
    """One ``import``/``from … import`` of a dpkit module, where it is written."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} imports {self.target} (line {self.line})"


def modules_under(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """``{dotted name: path}`` of every module of the package at ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = modules_under(ROOT)


def imports_of(module: str, modules: dict[str, pathlib.Path] = MODULES) -> list[Import]:
    """Every import of a dpkit module written in ``module``'s source, lazy ones included.

    ``from base import name`` names the module ``base.name`` if there is one, else ``base``.
    """
    path = modules[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno) for alias in node.names
                      if alias.name.split(".")[0] == "dpkit"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            if base.split(".")[0] == "dpkit":
                found += [Import(module, f"{base}.{alias.name}"
                                 if f"{base}.{alias.name}" in modules else base, node.lineno)
                          for alias in node.names]
    return [i for i in found if i.target != module]


def layer_of(module: str) -> int:
    """The index of the layer whose prefix matches ``module`` most closely (``dpkit`` itself
    matches only the package's ``__init__``)."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "dpkit" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > len(best[1]):
                    best = (index, prefix)
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in "
                             f"tests/test_layout.py and to README.md's module table")
    return best[0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def _graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    return {m: {i.target for i in imports_of(m, modules) if i.target in modules}
            for m in modules}


def test_every_module_belongs_to_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_name_existing_modules() -> None:
    """An import of a dpkit path that is no module (a stale path after a move) fails here."""
    stale = [str(i) for m in MODULES for i in imports_of(m) if i.target not in MODULES]
    assert stale == []


def test_no_import_cycle() -> None:
    assert _cycles(_graph(MODULES)) == []


def test_imports_go_down_the_layers() -> None:
    upward = []
    for module in MODULES:
        for found in imports_of(module):
            if found.target in MODULES and layer_of(found.target) > layer_of(module):
                upward.append(f"{found}: layer '{LAYERS[layer_of(module)][0]}' may not "
                              f"import layer '{LAYERS[layer_of(found.target)][0]}'")
    assert upward == []


def test_no_private_name_crosses_a_module() -> None:
    """``from dpkit.x import _y`` (``_y`` not a module) couples a module to another's
    internals; a name shared inside a private package is public there instead."""
    crossing = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dpkit"):
                crossing += [f"{module} line {node.lineno}: {node.module}.{alias.name}"
                             for alias in node.names if alias.name.startswith("_")
                             and f"{node.module}.{alias.name}" not in MODULES]
    assert crossing == []


def code_lines(node: ast.ClassDef) -> int:
    """A class's lines less its docstrings and its methods' (the numpydoc sections a public
    class owes its users are not what makes a class do too much)."""
    docstrings = sum(body[0].end_lineno - body[0].lineno + 1
                     for inner in ast.walk(node)
                     if isinstance(inner, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                     and (body := inner.body) and isinstance(body[0], ast.Expr)
                     and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str))
    return node.end_lineno - node.lineno + 1 - docstrings


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_and_class_sizes(module: str) -> None:
    path = MODULES[module]
    source = path.read_text()
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines; split it by concern"
    long = [f"{node.name}: {code_lines(node)} lines of code"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ClassDef) and code_lines(node) > MAX_CLASS_LINES]
    assert long == []


# ------------------------------------------------------------------------ the test can fail

def test_a_cycle_and_an_upward_import_are_caught() -> None:
    """The checks above see a planted cycle and order the layers as documented."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert layer_of("dpkit._samplers.grid") < layer_of("dpkit.laplace")
    assert layer_of("dpkit.laplace") < layer_of("dpkit.check.laplace")
    assert layer_of("dpkit.check") < layer_of("dpkit.course.assignments")
    with pytest.raises(AssertionError, match="belongs to no layer"):
        layer_of("dpkit.unknown_module")
    counted = ast.parse('class A:\n    """Doc\n    string."""\n\n    def f(self):\n'
                        '        """One line."""\n        return 1\n').body[0]
    assert code_lines(counted) == 7 - 2 - 1


def test_lazy_and_relative_imports_are_read(tmp_path: pathlib.Path) -> None:
    """A relative import, an import inside a function and a package re-export all count."""
    package = tmp_path / "dpkit" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "dpkit" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from .low import x\n")
    (package / "low.py").write_text("def f():\n    from dpkit.sub import high\n")
    (package / "high.py").write_text("from dpkit import sub\n")
    modules = modules_under(tmp_path / "dpkit")
    assert {i.target for i in imports_of("dpkit.sub.low", modules)} == {"dpkit.sub.high"}
    assert {i.target for i in imports_of("dpkit.sub", modules)} == {"dpkit.sub.low"}
    assert _cycles(_graph(modules)) == [["dpkit.sub", "dpkit.sub.high", "dpkit.sub.low"]]
