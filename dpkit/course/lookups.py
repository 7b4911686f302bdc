"""Attribute lookups by a name computed at run time found in adversarial review 16, and the
rules that close them (:mod:`dpkit.course.exercises` applies them, with the rest of its
dynamic-lookup check, to the code an answer to a FORBIDDEN or JUDGED exercise reaches):

* **Class patterns.** ``match obj: case K(found): …`` reads ``getattr(obj,
  K.__match_args__[0])``, and ``isinstance`` (which the match consults first) asks a
  metaclass's ``__instancecheck__``, so a class made at run time with a computed
  ``__match_args__`` is ``getattr`` with a computed name on any object (A: 3/3 on 2.2, 2.4
  and 7.2). :func:`match_use` allows a positional sub-pattern only with a builtin class, a
  library class, or a class of the student's own ``class`` statement (bound by nothing
  else, with no decorator of the student's, its bases and keywords of these kinds), whose
  attributes the reading then follows by the names its ``__match_args__`` and fields give
  (:func:`~dpkit.course.reading.match_names`); ``__match_args__`` may only be set in a
  class's body to constant strings that name nothing refused; the string
  ``"__match_args__"``, a class whose base is ``type`` or ``type(…)`` (a metaclass of
  one's own) and ``type(name, bases, namespace)`` but with a dict written out whose keys
  are plain constant names are refused. (A ``def`` of a
  double-underscore name that is not plain, ``__instancecheck__``, ``__getattr__`` …, is
  refused with the other such names.)
* **Expression strings.** pandas' ``DataFrame.eval`` and ``DataFrame.query`` evaluate a
  string in which ``@name.attr(…)`` looks names and attributes up and calls functions (B:
  ``frame.eval("@lib.laplace_accuracy(…)")``, 3/3 on 2.2 and 2.4). Only their paths were
  refused, and a frame made by a call has none; :func:`expression_use` refuses the
  attributes ``eval`` and ``query`` of anything, unless the student's code defines the name
  itself (``self.query = …``, a method of their own), and ``getattr(x, "eval")``.
* **Getter factories.** ``operator.attrgetter`` and ``operator.methodcaller`` look a name
  given as data up; stored in a dict or wrapped in ``functools.partial`` they lost their
  path (C: ``dict(get=operator.attrgetter)["get"]("laplace.laplace_accuracy")(dpkit)``,
  3/3). :func:`getter_use` allows them only called where they are named, with every name
  a constant string that names nothing refused; any other use (a value, an attribute of
  theirs) is refused, as ``getattr`` used as a value is. ``operator.itemgetter`` reads
  items, not attributes (``sorted(pairs, key=operator.itemgetter(1))``), and is allowed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from dpkit.course.reading import (
    LOOKUPS,
    Reading,
    constant_string,
    own_attributes,
    own_binding,
)

__all__ = ["EXPRESSIONS", "GETTERS", "expression_use", "getter_use", "match_use"]

#: The methods that evaluate a string as an expression (pandas' ``DataFrame.eval`` and
#: ``DataFrame.query``: their ``@name`` looks names and attributes up).
EXPRESSIONS = frozenset({"eval", "query"})
#: The getter factories of :mod:`operator` that look attributes up by a name given as data.
GETTERS = frozenset({"operator.attrgetter", "operator.methodcaller"})
#: The library metaclasses a class of the student's may not derive from.
_METACLASSES = frozenset({"type", "ABCMeta", "EnumMeta", "EnumType"})


def _builtin(reading: Reading, node: ast.expr) -> str | None:
    """The builtin's name if ``node`` is a bare global name the student's code binds
    nowhere (:meth:`Reading.builtin` also answers for a name bound to what holds no path)."""
    name = reading.builtin(node)
    return name if name is not None and name not in reading.own else None


def _library(reading: Reading, node: ast.expr) -> bool:
    """Whether ``node`` names a library object the student's code did not make: a name
    (``Fraction``) or attributes of a name (``fractions.Fraction``) that the code binds
    only by an import or not at all, none of whose attributes the code defines
    (``math.K = K``)."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    return isinstance(node, ast.Name) and node.id not in reading.own and \
        not any(a in reading.defined for a in attributes)


def _own_class(reading: Reading, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether the class ``node`` names is a builtin, a library class, or the student's
    class made by a ``class`` statement alone (its name bound by nothing else), with no
    decorator of the student's and bases and keywords of these kinds (or ``object``)."""
    if _builtin(reading, node) is not None or _library(reading, node):
        return True
    if not isinstance(node, ast.Name) or node.id in seen:
        return False
    statements = [n for n in reading.nodes if isinstance(n, ast.ClassDef) and n.name == node.id]
    others = any(node.id in own_binding(n) or node.id in {
        (a.asname or a.name).split(".")[0] for a in getattr(n, "names", ())
        if isinstance(a, ast.alias)} for n in reading.nodes if not isinstance(n, ast.ClassDef))
    return bool(statements) and not others and all(
        not any(isinstance(d, ast.Name) and d.id in reading.own
                for decorator in s.decorator_list for d in ast.walk(decorator)) and
        all(_own_class(reading, b, seen | {node.id})
            for b in [*s.bases, *(k.value for k in s.keywords)])
        for s in statements)


def _metaclass(reading: Reading, base: ast.expr) -> bool:
    """Whether the base class ``base`` may be a metaclass: the builtin ``type``, a call of
    it, or a library class named like one (``abc.ABCMeta``)."""
    if isinstance(base, ast.Call):
        return _builtin(reading, base.func) == "type"
    return _builtin(reading, base) == "type" or any(
        p.rsplit(".", 1)[-1].lstrip("?") in _METACLASSES for p in reading.paths(base))


def match_use(reading: Reading, node: ast.AST, parents: dict[int, ast.AST],
              refused: Callable[[str], bool]) -> str | None:
    """How ``node`` may look an attribute up by a name computed at run time through a class
    pattern or a class made at run time (see the module's docstring), or None.

    Parameters
    ----------
    reading : Reading
        The reading of the code ``node`` belongs to.
    node : ast.AST
        The node.
    parents : dict
        Each node's parent, by ``id``.
    refused : callable
        Whether an attribute name is refused (a forbidden function's, an environment word).

    Returns
    -------
    str or None
        What is refused, for the feedback, or None.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself (reference: adversarial review 16, A).

    >>> tree = ast.parse("K = make(name)\\nmatch obj:\\n    case K(found): pass")
    >>> pattern = tree.body[1].cases[0].pattern
    >>> match_use(Reading([tree], lambda _n: set()), pattern, {}, lambda _n: False)[:44]
    "a class pattern's positional capture with K "
    """
    if isinstance(node, ast.MatchClass) and node.patterns and \
            not _own_class(reading, node.cls):
        return (f"a class pattern's positional capture with {ast.unparse(node.cls)} (it "
                "reads the attributes the class's __match_args__ names, and only a class of "
                "your own class statement, a builtin or a library class may be used so)")
    if constant_string(node) == "__match_args__" or (
            isinstance(node, ast.Attribute) and node.attr == "__match_args__" and
            not isinstance(node.ctx, ast.Load)):
        return "__match_args__ set other than in a class's body"
    if isinstance(node, ast.Name) and node.id == "__match_args__" and \
            not isinstance(node.ctx, ast.Load):
        statement = parents.get(id(node))
        names = [constant_string(e) for e in getattr(getattr(statement, "value", None),
                                                     "elts", [None])]
        if not (isinstance(statement, ast.Assign) and statement.targets == [node] and
                isinstance(statement.value, (ast.Tuple, ast.List)) and
                isinstance(parents.get(id(statement)), ast.ClassDef)) or \
                None in names or any(map(refused, names)):
            return ("__match_args__ other than a tuple of constant strings set in a "
                    "class's body, none of them refused")
    if isinstance(node, ast.ClassDef) and any(
            _metaclass(reading, b) for b in [*node.bases, *(k.value for k in node.keywords)]):
        return f"a metaclass of your own ({node.name})"
    if isinstance(node, ast.Call) and _builtin(reading, node.func) == "type" and \
            len(node.args) + len(node.keywords) > 1 and not _plain_namespace(node):
        return ("type(name, bases, namespace) with a namespace other than a dict written "
                "out with plain names as keys, which makes a class at run time")
    return None


def _plain_namespace(call: ast.Call) -> bool:
    """Whether ``type(name, bases, namespace)`` gets a dict written out whose keys are
    constant strings, none a double-underscore name (``%timeit -o``'s result object)."""
    keys = [constant_string(k) for k in getattr(call.args[2], "keys", [None])] \
        if len(call.args) == 3 and not call.keywords else [None]
    return isinstance(call.args[2], ast.Dict) and None not in keys and \
        not any(k.startswith("__") for k in keys)


def expression_use(reading: Reading, node: ast.AST) -> str | None:
    """How ``node`` may evaluate a string as an expression: the attribute ``eval`` or
    ``query`` (pandas' ``DataFrame.eval``, ``DataFrame.query``) that the student's code
    does not define itself, or ``getattr`` (and its kin) with one of those names.

    Parameters
    ----------
    reading : Reading
        The reading of the code ``node`` belongs to.
    node : ast.AST
        The node.

    Returns
    -------
    str or None
        What is refused, for the feedback, or None.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself (reference: adversarial review 16, B).

    >>> tree = ast.parse("frame.eval('a + b')")
    >>> expression_use(Reading([tree], lambda _n: set()), tree.body[0].value.func)[:40]
    'frame.eval (pandas evaluates its string '
    """
    name = node.attr if isinstance(node, ast.Attribute) else constant_string(
        node.args[1]) if isinstance(node, ast.Call) and len(node.args) > 1 and \
        _builtin(reading, node.func) in LOOKUPS else None
    if name not in EXPRESSIONS or name in own_attributes(reading.nodes):
        return None
    return (f"{ast.unparse(node)[:40]} (pandas evaluates its string as code, whose @names "
            "look names and attributes up: write the computation in Python, "
            "frame['a'] + frame['b'], frame[frame['a'] > 0])")


def getter_use(reading: Reading, node: ast.AST, parent: ast.AST | None,
               refused: Callable[[str], bool]) -> str | None:
    """How ``node`` may look an attribute up through ``operator.attrgetter`` or
    ``operator.methodcaller``: one of them anywhere but called where it is named, or called
    with a name that is not a constant string or names something refused (or ``eval``,
    ``query``, ``format``); ``from operator import *``, which binds them unseen.

    Parameters
    ----------
    reading : Reading
        The reading of the code ``node`` belongs to.
    node : ast.AST
        The node.
    parent : ast.AST or None
        Its parent.
    refused : callable
        Whether an attribute name is refused (a forbidden function's, an environment word,
        a double-underscore name that is not plain).

    Returns
    -------
    str or None
        What is refused, for the feedback, or None.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself (reference: adversarial review 16, C).

    >>> tree = ast.parse("import operator\\ntools = dict(get=operator.attrgetter)")
    >>> getter_use(Reading([tree], lambda _n: set()), tree.body[1].value.keywords[0].value,
    ...            tree.body[1].value.keywords[0], lambda _n: False)
    'operator.attrgetter used as a value'
    """
    if isinstance(node, ast.ImportFrom) and not node.level and any(
            a.name == "*" for a in node.names) and node.module in {
            g.rsplit(".", 1)[0] for g in GETTERS}:
        return (f"from {node.module} import * (it binds operator.attrgetter and "
                "methodcaller by names the reading cannot follow)")
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
        return None
    paths = {p.lstrip("?") for p in reading.paths(node)}
    getters = {p for p in paths if any(p == g or p.startswith(f"{g}.") for g in GETTERS)}
    if not getters:
        return None
    if isinstance(node, ast.Call) and _builtin(reading, node.func) not in LOOKUPS:
        return None             # list([g]), a call of one's own: the getter in it is refused
    if not (isinstance(parent, ast.Call) and parent.func is node and getters <= GETTERS):
        return f"{sorted(getters)[0]} used as a value"
    # attrgetter's arguments are all names; methodcaller's first, the rest its arguments
    names = [constant_string(a) for a in parent.args[:1 if getters == {
        "operator.methodcaller"} else None]]
    if not names or None in names or (parent.keywords and getters != {
            "operator.methodcaller"}) or any(
            refused(part) or part in EXPRESSIONS or part in ("format", "format_map")
            for n in names for part in n.split(".")):
        return f"{sorted(getters)[0]} with a name computed at run time or refused"
    return None
