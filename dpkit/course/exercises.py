"""What grading needs to know of particular exercises, by their label in the book.

* :data:`FORBIDDEN`: the library functions an exercise's answer may not use, because the
  exercise asks the student to write that code (``ex-svt-above-threshold``: "write your own
  AboveThreshold"), with the reason the feedback gives. :func:`forbidden_use` finds them in
  the student's code **statically, in the grader's process** (the sandbox runs the student's
  code, which could undo any stub put in its own process): every name the answer reaches,
  through the helpers and aliases the student defined in any cell, is read from the source.
* :data:`ABSOLUTE_TOLERANCE`, :data:`RELATIVE_TOLERANCE`: how closely a deterministic
  answer must agree with the model solution where 1e-6 (relative) is not what the statement
  asks for.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from dpkit.course.worker import drop_magics

__all__ = ["ABSOLUTE_TOLERANCE", "DYNAMIC", "FORBIDDEN", "RELATIVE_TOLERANCE",
           "forbidden_use"]

#: Per exercise: (dotted names of the library functions its answer may not use, what the
#: exercise asks for). A name is matched by its last part wherever it appears (``from …
#: import``, an attribute of any module, a bare name), so an alias of the module or a copy of
#: the function in another module (the checkers import some) is caught too.
FORBIDDEN: dict[str, tuple[tuple[str, ...], str]] = {
    "ex-laplace-interval": (("dpkit.laplace.laplace_accuracy",),
                            "asks you to derive the interval's half-width yourself"),
    "ex-laplace-grid-scale": (("dpkit.laplace.laplace_grid",),
                              "asks you to compute the grid's noise scale yourself"),
    "ex-exp-precision": (("dpkit.exponential.compute_precision",),
                         "asks you to compute the analytic precision by hand"),
    "ex-svt-above-threshold": (("dpkit.svt.above_threshold", "dpkit.svt.above_threshold_runs",
                                "dpkit.svt.sparse", "dpkit.naive.svt.above_threshold"),
                               "asks you to write AboveThreshold yourself"),
}

#: Names by which code can reach a function without naming it: refused in the code an
#: answer to an exercise of :data:`FORBIDDEN` reaches, since no static reading can follow them.
DYNAMIC = frozenset({"getattr", "globals", "vars", "locals", "eval", "exec", "compile",
                     "__import__", "importlib", "__dict__", "__builtins__", "modules",
                     "__getattribute__", "attrgetter", "methodcaller"})

#: Absolute tolerances of the exercises whose statement bounds the accuracy asked for:
#: ``my_delta`` "must stay accurate down to δ ≈ 1e-25", so below that an error of a
#: millionth of 1e-25 is within the statement (a hidden input may have δ ≈ 1e-321).
ABSOLUTE_TOLERANCE = {"ex-analytic-profile": 1e-25 * 1e-6}
#: Relative tolerances other than 1e-6: the grid's noise scale differs from the textbook
#: Δ/ε by a factor of at most 1 + 2**-20 (about 9.5e-7), so 1e-6 could not tell the
#: exercise's answer from the mistake it is about; both are exact formulas of floats.
RELATIVE_TOLERANCE = {"ex-laplace-grid-scale": 1e-12}


def _references(node: ast.AST) -> tuple[set[str], set[str]]:
    """What ``node`` refers to: ``(named, free)``, the names it reaches through an attribute
    or an import (``s.above_threshold``, ``from dpkit.svt import above_threshold as f``),
    and the bare names it reads that it does not bind itself (a function's parameters and
    local variables are its own; a global it reads is free)."""
    named: set[str] = set()
    loaded: set[str] = set()
    local: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute):
            named.add(child.attr)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            named.update(part for alias in child.names for part in alias.name.split("."))
        elif isinstance(child, ast.Name):
            (loaded if isinstance(child.ctx, ast.Load) else local).add(child.id)
        elif isinstance(child, ast.arg):
            local.add(child.arg)
    for child in ast.walk(node):               # names a def or class binds are its own too
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(child.name)
    return named, loaded - local


def _bound(statement: ast.stmt) -> set[str]:
    """The names a top-level statement of a cell binds (a def, an assignment, an import)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    return {n.id for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def forbidden_use(label: str, answer: str, earlier: Iterable[str]) -> str | None:
    """Why the student's answer to exercise ``label`` may not be graded, or None.

    ``answer`` is the answer cell's code, ``earlier`` the student's code cells that ran
    before it (their own cells and their earlier answers). The code the answer reaches is
    the answer cell and, transitively, every top-level statement of ``earlier`` that binds a
    name it mentions (a helper, an alias ``f = above_threshold``, an ``import … as``). It
    may not mention a name of :data:`FORBIDDEN` for ``label``, nor a :data:`DYNAMIC` one.
    A cell that does not parse is skipped (the sandbox reports its error).

    >>> forbidden_use("ex-svt-above-threshold", "my = f", ["import dpkit.svt as s",
    ...                                                    "f = s.above_threshold"])[:40]
    'this exercise asks you to write AboveThr'
    >>> forbidden_use("ex-svt-above-threshold", "def my(q): return q", []) is None
    True
    """
    if label not in FORBIDDEN:
        return None
    names, why = FORBIDDEN[label]
    banned: dict[str, str] = {}
    for name in names:                          # the first of each last part names it
        banned.setdefault(name.rsplit(".", 1)[1], name)
    statements: list[ast.stmt] = []
    for source in earlier:
        try:
            statements += ast.parse(drop_magics(source)).body
        except SyntaxError:
            continue
    try:
        todo = [ast.parse(drop_magics(answer))]
    except SyntaxError:
        return None
    bound = set().union(*(_bound(statement) for statement in statements))
    named: set[str] = set()
    free: set[str] = set()
    seen: set[int] = set()
    while todo:
        more_named, more_free = _references(todo.pop())
        named |= more_named
        new, free = more_free - free, free | more_free
        for statement in statements:
            if id(statement) not in seen and _bound(statement) & new:
                seen.add(id(statement))
                todo.append(statement)
    # A bare name the student never binds comes from the set-up cell: the library's.
    reached = named | (free - bound)
    hit = sorted(reached & set(banned))
    if hit:
        return (f"this exercise {why}; {banned[hit[0]]} is not available in its answer "
                "(nor in the code it uses), so it was not graded")
    dynamic = sorted((named | free) & DYNAMIC)
    if dynamic:
        return (f"this exercise {why}; its answer (or the code it uses) looks names up "
                f"dynamically ({dynamic[0]}), which is not allowed here, so it was not graded")
    return None
