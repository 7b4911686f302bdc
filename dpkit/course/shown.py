"""Whether the code of an answer to a randomized exercise only *shows* a check's verdict.

In the grading sandbox :mod:`dpkit.check` is a stand-in whose checks return a placeholder
(:func:`dpkit.course.worker.stand_in_checks`), so a verdict that steers the student's code
would tell the sandbox from a notebook. :func:`check_use` (run by
:func:`dpkit.course.exercises.environment_use`) finds the first use of a check other than
to show it; the code is only read, never run.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Callable

from dpkit.course.reading import Reading, constant_string

__all__ = ["check_use", "checker_words"]


@functools.cache
def checker_words() -> dict[str, str]:
    """``check`` and the public names of :mod:`dpkit.check` (``Verdict``, the checks),
    each mapped to itself: refused names for the dynamic-lookup check.

    Returns
    -------
    dict
        ``{word: word}``.

    Raises
    ------
    Nothing.

    Privacy guarantee: none (reference: honest review 11, F5)."""
    from dpkit.course.sandbox import check_names
    return {word: word for word in set().union(*check_names().values(), {"check"})}


#: A verdict's attributes that may be shown (:func:`check_use`).
_SHOWN = frozenset({"passed", "message", "details"})
#: What could catch what ``print`` shows (:func:`check_use`).
_CATCHERS = frozenset({"stdout", "redirect_stdout", "dup2"})


def check_use(reading: Reading, parsed: list[tuple[ast.Module, str]]
              ) -> tuple[ast.AST, str, str] | None:
    """The first use of ``dpkit.check`` in the code of an answer to a randomized exercise
    other than to show a check's verdict.

    In the sandbox ``dpkit.check`` is a stand-in whose checks return a placeholder
    (:func:`dpkit.course.worker.stand_in_checks`), so any use of a check's result, of a
    check or of the module by the code could tell the sandbox from a notebook. Allowed,
    each in a statement where a cell's top level runs (the top level itself, and the
    branches of an ``if`` whose test involves no check and no verdict: ``if __name__ ==
    "__main__":``, ``if RUN_CHECKS:``, honest review 13, F5; the body of ``with
    unpadded():``, of a ``for`` loop with no
    ``else`` (over functions: ``for f in [f1, f2]: print(check(f))``), of a ``try:``
    whose handlers and ``else`` only show): a check called as an expression statement
    (``dpkit.check.check_…(f)``), or as an argument of ``print``, ``display`` (the
    builtin, the worker's or IPython's) or ``pprint.pprint``, with constant keywords only,
    or of an f-string
    there, or in an ``assert``, or as the test of an ``if`` whose branches only show
    (``print``/``display`` of constants and verdicts, ``pass``: honest review 12, finding
    3); a name bound to a check's result by ``verdict = …`` whose every read is one of
    those or a bare ``verdict`` line, which IPython shows (honest review 14)
    (``print(verdict)``, ``assert verdict.passed, verdict.message``, ``if not
    verdict.passed: print(verdict.message)``; ``.passed``, ``.message`` and ``.details``
    may be shown too, and ``not``, ``and``/``or``, comparisons with constants and
    conditional expressions of them: ``print("OK" if verdict.passed else
    verdict.message)``). ``import dpkit.check``, ``from dpkit.check import check_…`` and
    ``from dpkit import check`` bind names read as the module or the check (not ``import
    *``). Once a check is shown, nothing may spell ``stdout``, ``redirect_stdout`` or
    ``dup2``, which could catch what ``print`` writes (but ``sys.stdout.flush()``).

    Parameters
    ----------
    reading : Reading
        The reading of the code the answer may reach.
    parsed : list of (ast.Module, str)
        Each cell of that code, parsed, with its name in feedback.

    Returns
    -------
    tuple or None
        ``(node, place, what)``: the node, its cell's name and what it does, or None.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself; it keeps a randomized answer's code from telling
    the grading sandbox from a notebook by the checks (reference: honest review 11, F5;
    honest review 12, finding 3)."""
    words = set(checker_words())

    def reaches(paths: set[str]) -> bool:
        for path in paths:
            parts = path.lstrip("?").split(".")
            if (parts[0] == "dpkit" and words.intersection(parts[1:])) or (
                    path.startswith("?") and parts[0] in words and parts[0] not in reading.names):
                return True
        return False

    verdicts: dict[str, tuple[ast.AST, str]] = {}
    # the names a check's result may be bound to, for what the branches of an ``if`` on a
    # verdict may show (a name bound otherwise is refused where it is bound)
    named = frozenset(t.id for tree, _ in parsed for n in ast.walk(tree)
                      if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                      and reaches(reading.paths(n.value.func)) for t in n.targets
                      if isinstance(t, ast.Name))
    tops: list[tuple[ast.Module, str, _Shows]] = []
    for tree, place in parsed:
        shows = _Shows({id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)},
                       set(), reading, named, reaches)
        shows.top = shows.positions(tree.body)
        tops.append((tree, place, shows))
        top, parents = shows.top, shows.parents
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
            if call is not None and (shows.shown(call) or (
                    isinstance(holder, ast.Expr) and id(holder) in top)):
                continue
            if call is not None and isinstance(holder, ast.Assign) and id(holder) in top \
                    and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
                verdicts[holder.targets[0].id] = (node, place)
                continue
            return node, place, f"{ast.unparse(node)[:60]} is used other than to be shown"
    for tree, place, shows in tops:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in verdicts and \
                    isinstance(node.ctx, ast.Load) and not shows.shown(node):
                return node, place, (f"{node.id}, a check's verdict, is used other than to "
                                     "be shown")
    if verdicts or any(reaches(reading.paths(n)) for tree, _, _ in tops for n in ast.walk(tree)
                       if isinstance(n, (ast.Name, ast.Attribute))):
        for tree, place, shows in tops:
            for node in ast.walk(tree):
                spelled = {node.attr} if isinstance(node, ast.Attribute) else \
                    {node.id} if isinstance(node, ast.Name) else \
                    {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else \
                    {constant_string(node)} if isinstance(node, ast.Constant) else set()
                if spelled & _CATCHERS and not shows.flushed(node):
                    return node, place, (f"{(spelled & _CATCHERS).pop()} could catch what a "
                                         "check shows")
    return None


@dataclasses.dataclass
class _Shows:
    """Where in one cell a check may be shown (:func:`check_use`): ``parents`` of its
    nodes, ``top`` the ids of the statements that run as the cell's top level does,
    ``named`` the names a check's result may be bound to, ``reaches`` whether paths of the
    reading may hold ``dpkit.check`` or a check."""

    parents: dict[int, ast.AST]
    top: set[int]
    reading: Reading
    named: frozenset[str]
    reaches: Callable[[set[str]], bool]

    def positions(self, body: list[ast.stmt]) -> set[int]:
        """The ids of the statements of ``body`` and of those that run as it does: the
        branches of an ``if`` whose test involves no check and no verdict (``if __name__
        == "__main__":``, ``if RUN_CHECKS:``: a check shown there steers nothing through
        its verdict), the body of ``with unpadded():``, of a ``for`` loop with no
        ``else``, of a ``try`` whose handlers and ``else`` only show, and the branches of
        an ``if`` that only show (the verdict may be its test)."""
        found: set[int] = set()
        for statement in body:
            found.add(id(statement))
            if isinstance(statement, ast.If) and (self.unchecked(statement.test) or
                                                  self.only_shows([statement])):
                inner = [*statement.body, *statement.orelse]
            elif isinstance(statement, ast.With) and all(
                    self.unpadded(item) for item in statement.items):
                inner = statement.body
            elif isinstance(statement, (ast.For, ast.AsyncFor)) and not statement.orelse:
                inner = statement.body
            elif isinstance(statement, ast.Try) and self.only_shows(statement.orelse) and all(
                    self.only_shows(h.body, {h.name} - {None}) for h in statement.handlers):
                inner = [*statement.body, *statement.orelse, *statement.finalbody,
                         *(s for h in statement.handlers for s in h.body)]
            else:
                continue
            found |= self.positions(inner)
        return found

    def unchecked(self, test: ast.expr) -> bool:
        """Whether ``test`` involves no check, no verdict and not ``dpkit.check``."""
        return not any(
            (isinstance(node, ast.Name) and node.id in self.named) or
            (isinstance(node, (ast.Name, ast.Attribute, ast.Call)) and
             self.reaches(self.reading.paths(node))) for node in ast.walk(test))

    def unpadded(self, item: ast.withitem) -> bool:
        """Whether ``item`` is ``unpadded()`` of :mod:`dpkit.timing` (imported, or the
        set-up cell's name the student does not bind), bound to nothing."""
        call = item.context_expr
        return item.optional_vars is None and isinstance(call, ast.Call) and \
            not call.args and not call.keywords and any(
                p in ("dpkit.timing.unpadded", "?unpadded")     # or the set-up cell's
                for p in self.reading.paths(call.func))

    def only_shows(self, body: list[ast.stmt], own: set[str] = frozenset()) -> bool:
        """Whether each statement of ``body`` only shows what a verdict tells (or ``own``,
        an exception caught): ``pass``, ``print``/``display`` of constants, of the names a
        verdict may be bound to, their ``.passed``, ``.message`` or ``.details``,
        f-strings, ``not``, ``and``/``or``, comparisons and conditional expressions of
        those, and ``if`` statements whose test and branches are such: no call, so
        nothing the verdict would steer runs."""
        for statement in body:
            if isinstance(statement, ast.Pass):
                continue
            if isinstance(statement, ast.If) and self.safe(statement.test, own) and \
                    self.only_shows([*statement.body, *statement.orelse], own):
                continue
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not (isinstance(call, ast.Call) and _shows(call.func, self.reading) and
                    all(self.safe(a, own) for a in call.args) and
                    all(isinstance(k.value, ast.Constant) and k.arg for k in call.keywords)):
                return False
        return True

    def safe(self, value: ast.expr, own: set[str]) -> bool:
        """Whether showing ``value`` runs nothing of the student's (:meth:`only_shows`)."""
        for node in ast.walk(value):
            if isinstance(node, ast.Attribute):
                if node.attr not in _SHOWN or not isinstance(node.value, ast.Name):
                    return False
            elif isinstance(node, ast.Name):
                if node.id not in self.named | own or not isinstance(node.ctx, ast.Load):
                    return False
            elif not isinstance(node, (ast.Constant, ast.JoinedStr, ast.FormattedValue,
                                       ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
                                       ast.boolop, ast.cmpop, ast.unaryop, ast.expr_context)):
                return False
        return True

    def shown(self, node: ast.expr) -> bool:
        """Whether ``node`` (a check's result, or a name bound to one) is only shown:
        itself, its ``.passed``, ``.message`` or ``.details``, ``not``, ``and``/``or``, a
        comparison, a conditional expression or an f-string of those, as a positional
        argument of ``print`` or ``display`` called as a statement where the cell's top
        level runs (:meth:`positions`), as the test or message of an ``assert`` there, or
        as the test of an ``if`` there whose branches only show (:meth:`only_shows`)."""
        parents, top = self.parents, self.top
        parent = parents.get(id(node))
        while True:
            if isinstance(parent, ast.Attribute) and parent.attr in _SHOWN:
                pass
            elif isinstance(parent, ast.FormattedValue) and parent.value is node:
                parent = parents.get(id(parent))                    # the f-string
            elif not (isinstance(parent, (ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp))
                      and all(self.safe(part, set()) for part in ast.iter_child_nodes(parent)
                              if part is not node and isinstance(part, ast.expr))):
                break
            node, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.Assert):
            return id(parent) in top
        if isinstance(parent, ast.Expr):        # a bare ``verdict`` line: IPython shows it
            return id(parent) in top
        if isinstance(parent, ast.If) and parent.test is node:
            return id(parent) in top and self.only_shows([*parent.body, *parent.orelse])
        statement = parents.get(id(parent))
        return isinstance(parent, ast.Call) and any(a is node for a in parent.args) and \
            _shows(parent.func, self.reading) and \
            all(isinstance(k.value, ast.Constant) and k.arg for k in parent.keywords) and \
            isinstance(statement, ast.Expr) and id(statement) in top

    def flushed(self, node: ast.AST) -> bool:
        """Whether ``node`` is the ``stdout`` of ``sys.stdout.flush()``, which catches
        nothing (honest review 12, finding 3)."""
        flush = self.parents.get(id(node))
        call = self.parents.get(id(flush))
        return isinstance(node, ast.Attribute) and node.attr == "stdout" and \
            isinstance(flush, ast.Attribute) and flush.attr == "flush" and \
            isinstance(call, ast.Call) and call.func is flush and not call.args and \
            not call.keywords and "sys" in {p.lstrip("?") for p in self.reading.paths(
                node.value)} <= {"sys"}


def _shows(func: ast.expr, reading: Reading) -> bool:
    """Whether ``func`` is ``print`` (the builtin), ``display`` (the worker's, or
    IPython's imported from ``IPython.display``) or the standard library's
    ``pprint.pprint`` (honest review 14), not a name the student's code binds."""
    if isinstance(func, ast.Attribute):
        return func.attr == "pprint" and "pprint" not in reading.defined and \
            {path.lstrip("?") for path in reading.paths(func)} == {"pprint.pprint"}
    if not isinstance(func, ast.Name) or func.id not in ("print", "display", "pprint") or \
            func.id in reading.own or func.id in reading.functions:
        return False
    if func.id == "pprint":
        return reading.names.get(func.id, set()) == {"pprint.pprint"}
    return reading.names.get(func.id, set()) <= (
        {"IPython.display.display"} if func.id == "display" else set())
