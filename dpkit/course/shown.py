"""Whether the code of an answer to a randomized exercise only *shows* a check's verdict.

In the grading sandbox :mod:`dpkit.check` is a stand-in whose checks return a placeholder
(:func:`dpkit.course.worker.stand_in_checks`), so a verdict that steers the student's code
would tell the sandbox from a notebook. :func:`check_use` (run by
:func:`dpkit.course.exercises.environment_use`) finds the first use of a check other than
to show it; the code is only read, never run.
"""

from __future__ import annotations

import ast
import functools

from dpkit.course.reading import Reading, constant_string

__all__ = ["check_use", "checker_words"]


@functools.cache
def checker_words() -> dict[str, str]:
    """``check`` and the public names of :mod:`dpkit.check` (``Verdict``, the checks)."""
    from dpkit.course.sandbox import check_names
    return {word: word for word in set().union(*check_names().values(), {"check"})}


#: A verdict's attributes that may be shown (:func:`check_use`).
_SHOWN = frozenset({"passed", "message", "details"})
#: What could catch what ``print`` shows (:func:`check_use`).
_CATCHERS = frozenset({"stdout", "redirect_stdout", "dup2"})


def check_use(reading: Reading, parsed: list[tuple[ast.Module, str]]
              ) -> tuple[ast.AST, str, str] | None:
    """The first use of ``dpkit.check`` in the code of an answer to a randomized exercise
    other than to show a check's verdict: ``(node, place, what)``, or None.

    In the sandbox ``dpkit.check`` is a stand-in whose checks return a placeholder
    (:func:`dpkit.course.worker.stand_in_checks`), so any use of a check's result, of a
    check or of the module by the code could tell the sandbox from a notebook. Allowed,
    each in a statement at a cell's top level: a check called as an expression statement
    (``dpkit.check.check_…(f)``), or as an argument of ``print`` or ``display`` (the
    builtin, the worker's or IPython's, with constant keywords only), or of an f-string
    there, or in an ``assert``; a name bound to a check's result by ``verdict = …`` whose
    every read is one of those (``print(verdict)``, ``assert verdict.passed,
    verdict.message``; ``.passed``, ``.message`` and ``.details`` may be shown too).
    ``import dpkit.check``, ``from dpkit.check import check_…`` and ``from dpkit import
    check`` bind names read as the module or the check (not ``import *``). Once a check is
    shown, nothing may spell ``stdout``, ``redirect_stdout`` or ``dup2``, which could
    catch what ``print`` writes."""
    words = set(checker_words())

    def reaches(paths: set[str]) -> bool:
        for path in paths:
            parts = path.lstrip("?").split(".")
            if (parts[0] == "dpkit" and words.intersection(parts[1:])) or (
                    path.startswith("?") and parts[0] in words and parts[0] not in reading.names):
                return True
        return False

    verdicts: dict[str, tuple[ast.AST, str]] = {}
    tops: list[tuple[ast.Module, str, dict[int, ast.AST]]] = []
    for tree, place in parsed:
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        tops.append((tree, place, parents))
        top = {id(statement) for statement in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and any(
                    a.name == "*" for a in node.names) and (node.module or "").split(".")[0] \
                    == "dpkit":
                return node, place, f"from {node.module} import * binds unknown names"
            if isinstance(node, ast.pattern):
                paths = reading.matched.get(id(node), set())
            elif isinstance(node, ast.Call) or (isinstance(node, (ast.Name, ast.Attribute))
                                                and isinstance(node.ctx, ast.Load)):
                paths = reading.paths(node)
            else:
                continue
            parent = parents.get(id(node))
            if not reaches(paths) or (isinstance(parent, ast.Attribute) and
                                      parent.value is node):
                continue                      # the attribute read of it is judged instead
            call = parent if isinstance(parent, ast.Call) and parent.func is node else None
            holder = parents.get(id(call)) if call is not None else None
            if call is not None and (_shown(call, parents, top, reading) or (
                    isinstance(holder, ast.Expr) and id(holder) in top)):
                continue
            if call is not None and isinstance(holder, ast.Assign) and id(holder) in top \
                    and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
                verdicts[holder.targets[0].id] = (node, place)
                continue
            return node, place, f"{ast.unparse(node)[:60]} is used other than to be shown"
    for tree, place, parents in tops:
        top = {id(statement) for statement in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in verdicts and \
                    isinstance(node.ctx, ast.Load) and not _shown(node, parents, top, reading):
                return node, place, (f"{node.id}, a check's verdict, is used other than to "
                                     "be shown")
    if verdicts or any(reaches(reading.paths(n)) for tree, _, _ in tops for n in ast.walk(tree)
                       if isinstance(n, (ast.Name, ast.Attribute))):
        for tree, place, _ in tops:
            for node in ast.walk(tree):
                spelled = {node.attr} if isinstance(node, ast.Attribute) else \
                    {node.id} if isinstance(node, ast.Name) else \
                    {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else \
                    {constant_string(node)} if isinstance(node, ast.Constant) else set()
                if spelled & _CATCHERS:
                    return node, place, (f"{(spelled & _CATCHERS).pop()} could catch what a "
                                         "check shows")
    return None


def _shown(node: ast.expr, parents: dict[int, ast.AST], top: set[int],
           reading: Reading) -> bool:
    """Whether ``node`` (a check's result, or a name bound to one) is only shown: itself,
    its ``.passed``, ``.message`` or ``.details``, or an f-string of those, as a positional
    argument of ``print`` or ``display`` called as a statement at the cell's top level, or
    as the test or message of an ``assert`` there (:func:`check_use`)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.attr in _SHOWN:
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.FormattedValue) and parent.value is node:
        node = parents.get(id(parent))                    # the f-string
        parent = parents.get(id(node))
    if isinstance(parent, ast.Assert):
        return id(parent) in top
    statement = parents.get(id(parent))
    return isinstance(parent, ast.Call) and any(a is node for a in parent.args) and \
        _shows(parent.func, reading) and \
        all(isinstance(k.value, ast.Constant) and k.arg for k in parent.keywords) and \
        isinstance(statement, ast.Expr) and id(statement) in top


def _shows(func: ast.expr, reading: Reading) -> bool:
    """Whether ``func`` is ``print`` (the builtin) or ``display`` (the worker's, or
    IPython's imported from ``IPython.display``), not a name the student's code binds."""
    if not isinstance(func, ast.Name) or func.id not in ("print", "display") or \
            func.id in reading.own or func.id in reading.functions:
        return False
    return reading.names.get(func.id, set()) <= (
        {"IPython.display.display"} if func.id == "display" else set())
