"""Reading a student's code without running it: what its names and attributes may hold.

The static checks of :mod:`dpkit.course.exercises` (the forbidden-call check and the
environment check) read the student's answer and earlier cells in the grader's process,
never running them: :class:`Reading` follows the names, aliases, attributes, arguments and
returns of that code with Python's scoping, and the helpers here say what a statement or
node binds. Nothing here judges: the checks decide what is refused.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

__all__ = ["FUNCTIONS", "LOOKUPS", "PLAIN_MODULES", "Reading", "answer_statements",
           "constant_string", "imported_names", "match_names", "method_kinds",
           "own_attributes", "own_binding", "parameters_of", "rebound", "sealed",
           "statement_bindings", "unsealing", "walk_outside", "walk_running"]

#: The builtins that look an attribute up by a name given as data.
LOOKUPS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: Nodes that define a function (its body runs later, when it is called).
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_MAX_PARTS = 12                                 # a dotted path longer than this is cut
#: Modules (and the set-up cells' usual names for them) whose functions return plain values
#: (numbers, arrays, generators, tables, times), never a module: with ``calls_hold``, a call
#: of one of their functions holds only what its arguments hold (:func:`_plain`).
PLAIN_MODULES = frozenset({"math", "cmath", "random", "time", "statistics", "fractions",
                           "decimal", "numpy", "np", "pandas", "pd", "scipy", "mpmath"})
#: Methods that store their arguments in the object they are called on.
_STORING = frozenset({"append", "extend", "insert", "update", "setdefault", "add",
                      "__setitem__", "__setattr__"})


def statement_bindings(statement: ast.stmt) -> set[str]:
    """The names a top-level statement of a cell binds (a def, an assignment, an import) or
    changes (``obj.attribute = …``, ``table[key] = …`` change ``obj``, ``table``)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    names = set()
    for node in walk_outside(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.ctx, ast.Store):
            names.add(_root(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _STORING:
            names.add(_root(node.func.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "setattr" and node.args:
            names.add(_root(node.args[0]))
    return names - {""}


def answer_statements(root: ast.Module, graded: str | None) -> set[int]:
    """The ``id`` of each top-level statement of the answer cell ``root`` read as the
    answer's own code, where no call is exempt
    (:func:`dpkit.course.exercises.forbidden_use`): all of them when ``graded`` is
    unknown; for a function or class ``graded``, the statements that bind it; for a value,
    every statement up to the last that binds it."""
    binding = [i for i, s in enumerate(root.body) if graded in statement_bindings(s)]
    if graded is None:
        return {id(s) for s in root.body}
    if all(isinstance(root.body[i], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for i in binding):
        return {id(root.body[i]) for i in binding}
    return {id(s) for s in root.body[:binding[-1] + 1]}


def _root(node: ast.expr) -> str:
    """The name ``a`` of ``a.b[c].d``, or ``""``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _own_names(scope: ast.AST) -> set[str]:
    """The names a function, lambda, class or comprehension binds in its own scope (its
    parameters, targets, assignments, imports, nested defs), minus its ``global`` ones."""
    names: set[str] = set()
    declared: set[str] = set()
    if isinstance(scope, FUNCTIONS):
        names.update(a.arg for a in parameters_of(scope.args))
        todo: list[ast.AST] = [scope.body] if isinstance(scope, ast.Lambda) else [*scope.body]
    elif isinstance(scope, ast.ClassDef):
        todo = [*scope.body]
    else:
        todo = [g.target for g in scope.generators]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return names - declared


def parameters_of(arguments: ast.arguments) -> list[ast.arg]:
    """The parameters a function's ``arguments`` declare."""
    return [*arguments.posonlyargs, *arguments.args, *filter(None, [arguments.vararg]),
            *arguments.kwonlyargs, *filter(None, [arguments.kwarg])]


def _split_scope(scope: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """The parts of a function, lambda, class or comprehension Python evaluates in the
    *enclosing* scope (decorators, defaults, annotations, bases, a comprehension's first
    iterable), and those it evaluates in the scope's own."""
    if isinstance(scope, FUNCTIONS):
        arguments = scope.args
        outer: list[ast.AST] = [*arguments.defaults, *filter(None, arguments.kw_defaults),
                                *(a.annotation for a in parameters_of(arguments)
                                  if a.annotation is not None)]
        if isinstance(scope, ast.Lambda):
            return outer, [scope.body]
        return [*outer, *scope.decorator_list, *filter(None, [scope.returns])], \
            [*scope.body]
    if isinstance(scope, ast.ClassDef):
        return [*scope.decorator_list, *scope.bases, *scope.keywords], [*scope.body]
    first, *rest = scope.generators
    inner: list[ast.AST] = [first.target, *first.ifs, *rest]
    inner += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    return [first.iter], inner


def walk_outside(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` in its own scope: not those of the functions, classes and
    comprehensions it holds, but their parts evaluated outside (a default, a decorator)."""
    found: list[ast.AST] = []
    todo = [node]
    while todo:
        child = todo.pop()
        found.append(child)
        if isinstance(child, _SCOPES) and child is not node:
            todo.extend(_split_scope(child)[0])
        else:
            todo.extend(ast.iter_child_nodes(child))
    return found


def walk_running(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` that run when it runs: those of :func:`walk_outside`, and the
    whole of each list, set or dict comprehension among them (nested ones too), which runs
    at once and keeps only its results; not a generator expression, lambda, function or
    class, whose body can run later (honest review 11, F4)."""
    found: list[ast.AST] = []
    todo = walk_outside(node)
    while todo:
        child = todo.pop()
        found.append(child)
        if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp)) and child is not node:
            todo.extend(part for inner in _split_scope(child)[1]     # a lambda there is
                        for part in walk_outside(ast.Expr(inner)))   # not entered
    return found


def _global_names(tree: ast.AST) -> set[int]:
    """The ``id`` of each :class:`ast.Name` of ``tree`` that reads a global (a name no
    enclosing function, lambda, class or comprehension binds), as Python scopes them: a
    default, a decorator, a base class or a comprehension's first iterable is evaluated
    in the enclosing scope, and a class's names are not seen by the functions and
    comprehensions in its body."""
    found: set[int] = set()
    # each enclosing scope: (the names it binds, whether it is a class body)
    todo: list[tuple[ast.AST, tuple[tuple[frozenset[str], bool], ...]]] = [(tree, ())]
    while todo:
        node, enclosing = todo.pop()
        if isinstance(node, ast.Name) and not any(node.id in s for s, _ in enclosing):
            found.add(id(node))
        if not isinstance(node, _SCOPES):
            todo.extend((child, enclosing) for child in ast.iter_child_nodes(node))
            continue
        outer, inner = _split_scope(node)
        seen = (*(e for e in enclosing if not e[1]),
                (frozenset(_own_names(node)), isinstance(node, ast.ClassDef)))
        todo.extend((child, enclosing) for child in outer)
        todo.extend((child, seen) for child in inner)
    return found


def imported_names(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """``(name bound, dotted path it is bound to)`` for each name an import binds."""
    if isinstance(node, ast.Import):
        return [(a.asname, a.name) if a.asname else (a.name.split(".")[0],
                                                      a.name.split(".")[0])
                for a in node.names]
    if node.level or not node.module:
        return []
    return [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names
            if a.name != "*"]


def _definition(node: ast.AST) -> list[str]:
    """The names ``node`` defines: a def, a class, a variable, an attribute it stores, the
    constant name ``setattr`` stores."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
        return [node.attr]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "setattr" and len(node.args) > 1 and constant_string(node.args[1]):
        return [constant_string(node.args[1])]
    name = _set_dunder(node)
    return [name] if name else []


def _set_dunder(node: ast.AST) -> str | None:
    """The attribute ``X.__setattr__(obj, "name", value)`` (or ``obj.__setattr__("name",
    value)``) sets, when the name is a constant."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "__setattr__" and len(node.args) >= 2 and not node.keywords:
        return constant_string(node.args[-2])
    return None


def own_binding(node: ast.AST) -> list[str]:
    """The names ``node`` binds as the student's own (a def, a class, a parameter, a
    variable, an exception caught, a pattern's capture), not by an import."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    return []


def constant_string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def own_attributes(nodes: Iterable[ast.AST]) -> set[str]:
    """The attribute names the student's code (all its ``nodes``) defines as its own: an attribute
    stored (``obj.name = …``, ``self._gen = gen``), a name bound in a class's body (a
    field, a method), the fields of a ``namedtuple(…)`` spelled as strings.

    Parameters
    ----------
    nodes : iterable of ast.AST
        Every node of the student's code (``ast.walk`` of each cell; a
        :class:`Reading`'s ``nodes``).

    Returns
    -------
    set of str
        The attribute names.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself; the environment check and the check of dpkit's
    private names exempt these names (reference: adversarial review 10, A2; honest
    review 16, C1).

    >>> sorted(own_attributes(ast.walk(ast.parse("class R: k = 1\\nr.x = r._gen = 2"))))
    ['_gen', 'k', 'x']
    """
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            found.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            found.update(n for statement in node.body for n in statement_bindings(statement))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                node.func, "attr", None)) == "namedtuple" and len(node.args) >= 2:
            fields = node.args[1]
            names = [constant_string(e) for e in fields.elts] \
                if isinstance(fields, (ast.List, ast.Tuple)) else \
                (constant_string(fields) or "").replace(",", " ").split()
            found.update(n for n in names if n)
    return found


class Reading:
    """What the names and attributes of some student code may hold, read without running
    it: the dotted path of each module or library object a name may be bound to (by an
    import, an alias, a helper that returns it, an argument passed to a helper, an
    attribute or a container it was stored in), flow-insensitively and conservatively.
    A call's result holds nothing, unless the call is to one of the student's own
    functions (then it holds what that function returns) or a static import.

    ``outside(name)``: the paths of a global name the student's code does not bind (the
    set-up cell's, or a builtin's). With ``calls_hold``, the result of any other call
    may hold the modules its arguments hold and, for a method (``obj.f(…)``), those
    ``obj`` holds (``[os].pop()`` may be ``os``; the top-level module only, so that
    chains of calls do not multiply the paths), except when ``obj`` is a module of
    :data:`PLAIN_MODULES` (``time.perf_counter()`` holds nothing): the environment check's
    reading (adversarial review 10, A2), stricter than the forbidden-call check's."""

    def __init__(self, trees: list[ast.AST], outside: Callable[[str], set[str]],
                 calls_hold: bool = False) -> None:
        self.outside, self.calls_hold = outside, calls_hold
        self.nodes = [node for tree in trees for node in ast.walk(tree)]
        self.globals = set().union(*(_global_names(tree) for tree in trees))
        self.names: dict[str, set[str]] = {}
        self.attributes: dict[str, set[str]] = {}
        #: What the value a ``match`` pattern is matched against may hold, by the pattern's id.
        self.matched: dict[int, set[str]] = {}
        self.functions: dict[str, list[ast.AST]] = {}
        #: The names the code itself gives to functions, classes, variables and attributes.
        self.defined = {n for node in self.nodes for n in _definition(node)}
        #: The bare names the code binds itself, not by an import.
        self.own = {n for node in self.nodes for n in own_binding(node)}
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.functions.setdefault(target.id, []).append(node.value)
        for _ in range(50):                     # to a fixed point: paths only grow
            before = ({k: len(v) for k, v in self.names.items()},
                      {k: len(v) for k, v in self.attributes.items()})
            self._bind_all()
            if before == ({k: len(v) for k, v in self.names.items()},
                          {k: len(v) for k, v in self.attributes.items()}):
                break

    def _bind(self, target: ast.AST, paths: set[str], value: ast.AST | None = None) -> None:
        if not paths:
            return
        if isinstance(target, ast.Name):
            self.names.setdefault(target.id, set()).update(paths)
        elif isinstance(target, ast.Attribute):
            self.attributes.setdefault(target.attr, set()).update(paths)
        elif isinstance(target, ast.Subscript):
            self._bind(target.value, paths)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, paths)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts) and not any(isinstance(e, ast.Starred) for e in value.elts)
            for index, element in enumerate(target.elts):
                self._bind(element, self.paths(value.elts[index]) if same else paths)

    def _bind_all(self) -> None:
        for node in self.nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name, path in imported_names(node):
                    self.names.setdefault(name, set()).add(path)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, self.paths(node.value), node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and \
                    node.value is not None:
                self._bind(node.target, self.paths(node.value), node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._bind(node.target, self.paths(node.iter))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self._bind(node.optional_vars, self.paths(node.context_expr))
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    self._bind_pattern(case.pattern, self.paths(node.subject))
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.ClassDef):    # a class's variables are attributes
                for name in _own_names(node):
                    self.attributes.setdefault(name, set()).update(self.names.get(name, ()))

    def _bind_pattern(self, pattern: ast.pattern, paths: set[str]) -> None:
        """A ``match`` pattern against a value that may hold ``paths`` (adversarial review
        round 7, finding 3): a capture (``x``, ``*rest``, ``**rest``, ``… as x``) binds the
        value; a class pattern's keyword ``name=p`` matches ``p`` against the value's
        attribute ``name``, a mapping pattern's string key against its item; a sequence's
        elements hold what the value holds, and a positional class pattern's what the value
        and its attributes that the class's ``__match_args__`` may name hold
        (:func:`match_names`; adversarial review 16, A)."""
        self.matched.setdefault(id(pattern), set()).update(paths)
        captured = pattern.name if isinstance(pattern, (ast.MatchAs, ast.MatchStar)) else \
            pattern.rest if isinstance(pattern, ast.MatchMapping) else None
        if captured and paths:
            self.names.setdefault(captured, set()).update(paths)
        for sub, held in _sub_patterns(pattern, paths, self):
            self._bind_pattern(sub, held)

    def _call(self, node: ast.Call) -> None:
        """Arguments passed to the student's functions of the callee's name bind their
        parameters; ``setattr(obj, "name", value)`` stores an attribute."""
        name = _callee(node.func)
        if name in LOOKUPS and len(node.args) == 3 and constant_string(node.args[1]):
            self.attributes.setdefault(constant_string(node.args[1]), set()).update(
                self.paths(node.args[2]))
        if _set_dunder(node):
            self.attributes.setdefault(_set_dunder(node), set()).update(
                self.paths(node.args[-1]))
        passed = set().union(*(self.paths(a) for a in node.args),
                             *(self.paths(k.value) for k in node.keywords))
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STORING:
            self._bind(node.func.value, passed)
        for function in self.functions.get(name, []) if passed else []:
            for parameter in ast.walk(function.args):
                if isinstance(parameter, ast.arg):
                    self.names.setdefault(parameter.arg, set()).update(passed)

    def builtin(self, node: ast.expr) -> str | None:
        """The builtin's name if ``node`` is a bare global name the student never binds."""
        return node.id if isinstance(node, ast.Name) and id(node) in self.globals and \
            node.id not in self.names and node.id not in self.functions else None

    def paths(self, node: ast.AST | None, seen: frozenset[int] = frozenset()) -> set[str]:
        """The dotted paths of what ``node`` may hold (empty: nothing of a module)."""
        if node is None or id(node) in seen:
            return set()
        seen = seen | {id(node)}
        if isinstance(node, ast.Name):
            found = set(self.names.get(node.id, ()))
            if id(node) in self.globals and node.id not in self.functions:
                found |= self.outside(node.id)
            return found
        if isinstance(node, ast.Attribute):
            return {".".join(f"{p}.{node.attr}".split(".")[:_MAX_PARTS])
                    for p in self.paths(node.value, seen)} | self.attributes.get(node.attr,
                                                                                   set())
        if isinstance(node, ast.Call):
            return self._result(node, seen)
        if isinstance(node, (ast.Constant, ast.Compare, ast.UnaryOp, ast.JoinedStr,
                             *FUNCTIONS)):
            return set()
        found = set()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                found |= self.paths(child, seen)
        return found

    def _result(self, node: ast.Call, seen: frozenset[int]) -> set[str]:
        builtin = self.builtin(node.func)
        name = constant_string(node.args[0]) if node.args else None
        if builtin == "__import__" and name:
            return {name.split(".")[0]}
        if builtin in ("getattr", "vars") and node.args:
            attribute = constant_string(node.args[1]) if len(node.args) > 1 else None
            base = self.paths(node.args[0], seen)
            return {f"{p}.{attribute}" for p in base} if attribute else base
        if name and any(p.endswith("import_module") for p in self.paths(node.func, seen)):
            return {name}
        if isinstance(node.func, ast.Lambda):
            return self.paths(node.func.body, seen)
        if builtin is not None:     # list, iter, next, dict(k=…) …: what their arguments hold
            return set().union(*(self.paths(a, seen) for a in [*node.args, *node.keywords]))
        found = {p.split(".", 1)[0] for q in _held(node, self, seen) for p in self.paths(q, seen)} \
            if self.calls_hold and not self.functions.get(_callee(node.func) or "") else set()
        for function in self.functions.get(_callee(node.func) or "", []):
            returns = [function.body] if isinstance(function, ast.Lambda) else [
                n.value for n in ast.walk(function)
                if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
            for value in returns:
                found |= self.paths(value, seen)
        return found


def _plain(reading: Reading, node: ast.expr, seen: frozenset[int]) -> bool:
    """Whether ``node``, the object of a method call, is one of :data:`PLAIN_MODULES`
    (or a module in it) and nothing else: its functions return plain values (numbers,
    arrays, generators, tables), never a module, so ``time.perf_counter()`` and
    ``np.random.default_rng(0)`` hold nothing (honest review 11, F2). A module's
    attribute the student's code stores (``math.stash = [os]``) holds what was stored,
    so ``math.stash.pop()`` still may hold ``os``."""
    paths = reading.paths(node, seen)
    return bool(paths) and all(p.lstrip("?").split(".")[0] in PLAIN_MODULES
                               for p in paths)


def _held(node: ast.Call, reading: Reading, seen: frozenset[int]) -> list[ast.expr]:
    """What a call's result may hold (with ``calls_hold``): its arguments, and the object
    of a method, unless that object is a module of :data:`PLAIN_MODULES` (:func:`_plain`)."""
    held = [node.func.value] if isinstance(node.func, ast.Attribute) and not _plain(
        reading, node.func.value, seen) else []
    return [*held, *node.args, *(k.value for k in node.keywords)]


def _callee(func: ast.expr) -> str | None:
    """The name a call's function is spelled by (``f`` of ``f(…)`` or ``obj.f(…)``)."""
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else None


def _sub_patterns(pattern: ast.pattern, paths: set[str], reading: Reading
                  ) -> list[tuple[ast.pattern, set[str]]]:
    """The patterns inside ``pattern`` and what each is matched against, for a value that
    may hold ``paths`` (``reading.attributes``: what the code stores in attributes by
    name; a class pattern's positional sub-patterns read the attributes
    :func:`match_names` gives)."""
    attributes = reading.attributes
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return [(pattern.pattern, paths)]
    if isinstance(pattern, (ast.MatchOr, ast.MatchSequence)):
        return [(p, paths) for p in pattern.patterns]
    if isinstance(pattern, ast.MatchClass):
        names = match_names(reading, pattern)
        read = paths | {f"{q}.{name}" for q in paths for name in names} | set().union(
            *(attributes.get(name, set()) for name in names))
        return [(p, read) for p in pattern.patterns] + [
            (p, {f"{q}.{name}" for q in paths} | attributes.get(name, set()))
            for name, p in zip(pattern.kwd_attrs, pattern.kwd_patterns, strict=True)]
    if isinstance(pattern, ast.MatchMapping):
        return [(p, {f"{q}.{constant_string(key)}" for q in paths}
                 if constant_string(key) else paths)
                for key, p in zip(pattern.keys, pattern.patterns, strict=True)]
    return []


def match_names(reading: Reading, pattern: ast.MatchClass) -> list[str]:
    """The attribute names a positional sub-pattern of the class pattern ``pattern`` may read
    (``case Point(x, y)`` reads the attributes ``Point.__match_args__`` names): for a class
    of the student's (a ``class`` statement of that name), the constant strings of its
    ``__match_args__`` and the names annotated in its body (a dataclass's or a
    ``NamedTuple``'s fields), and those of its bases of the same kind; none for another
    class (a builtin, a library class: their names are fixed, and one the student makes
    otherwise is refused, :func:`dpkit.course.lookups.match_use`).

    Parameters
    ----------
    reading : Reading
        The reading of the code ``pattern`` belongs to.
    pattern : ast.MatchClass
        A class pattern.

    Returns
    -------
    list of str
        The names, in no particular order (empty without positional sub-patterns).

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself (reference: adversarial review 16, A).

    >>> tree = ast.parse("class P:\\n    __match_args__ = ('x', 'y')\\n"
    ...                  "match v:\\n    case P(a, b): pass")
    >>> match_names(Reading([tree], lambda _n: set()), tree.body[1].cases[0].pattern)
    ['x', 'y']
    """
    if not pattern.patterns:
        return []
    names: list[str] = []
    todo, seen = [pattern.cls], set()
    while todo:
        cls = todo.pop()
        if not isinstance(cls, ast.Name) or cls.id in seen:
            continue
        seen.add(cls.id)
        for statement in (n for n in reading.nodes
                          if isinstance(n, ast.ClassDef) and n.name == cls.id):
            todo.extend(statement.bases)
            for node in statement.body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.append(node.target.id)
                elif isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "__match_args__"
                        for t in node.targets):
                    names.extend(filter(None, map(constant_string, ast.walk(node.value))))
    return list(dict.fromkeys(names))


def sealed(cls: ast.ClassDef, reading: Reading) -> bool:
    """Whether the methods of the student's class ``cls`` can be called only bound to an
    instance, so that their ``self`` is never a module: :func:`unsealing` finds nothing.

    Parameters
    ----------
    cls : ast.ClassDef
        A class statement of the student's code.
    reading : Reading
        The reading of all the code the answer may reach (``reading.nodes``).

    Returns
    -------
    bool
        True if no method of ``cls`` can be called with a ``self`` of the caller's choice.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself; it is what lets
    :func:`dpkit.course.exercises.environment_use` allow ``getattr(self, computed)``
    without opening a route to a module (reference: adversarial review 11, F3)."""
    return unsealing(cls, reading) is None


#: Decorators of a method whose function takes no caller-chosen ``self``: read anywhere
#: (``C.scale(…)``, ``C.laplace()``); a property's, read on an instance.
_NO_SELF = frozenset({"staticmethod", "classmethod"})


def method_kinds(cls: ast.ClassDef, reading: Reading) -> dict[str, str]:
    """The names ``def`` binds in the body of the student's class ``cls`` (its methods),
    each with its kind.

    Parameters
    ----------
    cls : ast.ClassDef
        A class statement of the student's code.
    reading : Reading
        The reading of the code (which names the student binds).

    Returns
    -------
    dict
        ``"static"`` for a name every def of which is decorated by the builtin
        ``staticmethod`` or ``classmethod`` alone, ``"property"`` by the builtin
        ``property`` alone, ``"method"`` for any other.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself; :func:`unsealing` reads it (reference: honest
    review 12, finding 2)."""
    kinds: dict[str, set[str]] = {}
    for f in cls.body:
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [d.id if isinstance(d, ast.Name) and d.id not in reading.own and
                          d.id not in reading.names else "" for d in f.decorator_list]
            kind = "static" if len(decorators) == 1 and decorators[0] in _NO_SELF else \
                "property" if decorators == ["property"] else "method"
            kinds.setdefault(f.name, set()).add(kind)
    return {name: kind.pop() if len(kind) == 1 else "method" for name, kind in kinds.items()}


def unsealing(cls: ast.ClassDef, reading: Reading) -> ast.AST | None:
    """The first node of the code that could call a method of the student's class ``cls``
    with a ``self`` of the caller's choice (adversarial review 11, F3: ``f = C.m; f(sys,
    "orig_" + "argv")``, ``C.m.__call__(os, …)``), or None (:func:`sealed`).

    Only the class's methods count (the names ``def`` binds in its body; honest review 12,
    finding 2: its fields, constants, dataclass fields and annotations read as ``self.x``
    hand out no function). Allowed: a method read and called on ``self`` (a method's first
    parameter) or on an instance: a name bound only to one (``x = C(…)``), a fresh one
    (``C(…).m(…)``), ``super()`` (``super().__init__(…)``); a method so read passed as
    the first argument of ``functools.partial`` (a bound method keeps its ``self``); a
    ``property`` read on such an instance; a ``staticmethod`` or ``classmethod`` read
    anywhere (no caller-chosen ``self``). ``C`` is a class of the student's, bound by its
    ``class`` statement alone, with no decorator of the student's and no base but
    ``object`` and such classes (not a metaclass). Refused: any other read of a method's
    name as an attribute, a string constant that spells it (``getattr(C, "m")``), the
    class body reading it as a bare name (``alias = m``), ``vars(…)`` of anything, a
    ``__new__``, a class keyword (``metaclass=``).

    Parameters
    ----------
    cls : ast.ClassDef
        A class statement of the student's code.
    reading : Reading
        The reading of all the code the answer may reach (``reading.nodes``).

    Returns
    -------
    ast.AST or None
        The node that unseals ``cls`` (its line is the feedback's), or None.

    Raises
    ------
    Nothing: the code is only read.

    Privacy guarantee: none by itself; what lets
    :func:`dpkit.course.exercises.environment_use` allow ``getattr(self, computed)``
    (reference: adversarial review 11, F3; honest review 12, finding 2)."""
    members = method_kinds(cls, reading)
    bindings = [(node, name) for node in reading.nodes for name in [
        *own_binding(node), *((a.asname or a.name).split(".")[0] for a in getattr(
            node, "names", ()) if isinstance(a, ast.alias))]]
    classes = [n for n in reading.nodes if isinstance(n, ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id in reading.own
        for decorator in n.decorator_list for d in ast.walk(decorator))]
    once = {n.name for n in classes} - {
        name for node, name in bindings if not isinstance(node, ast.ClassDef)}
    while True:         # whose bases are the student's such classes: ``C()`` is an instance
        kept = {n.name for n in classes if n.name in once and all(
            isinstance(b, ast.Name) and (b.id in once or b.id == "object") for b in n.bases)}
        if kept == once:
            break
        once = kept
    selves = {id(f): a.arg for f in cls.body if isinstance(f, FUNCTIONS) and
              members.get(f.name) in ("method", "property") and
              (not f.decorator_list or members[f.name] == "property") and
              f.name not in ("__init_subclass__", "__class_getitem__")
              for a in [*f.args.posonlyargs, *f.args.args][:1]}
    made: dict[str, bool] = {}                 # a name: bound only to an instance
    instances = {id(t) for node in reading.nodes if isinstance(node, ast.Assign) and
                 isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                 and node.value.func.id in once for t in node.targets}
    for node, name in bindings:
        made[name] = made.get(name, True) and id(node) in instances
    parents = {id(c): p for p in reading.nodes for c in ast.iter_child_nodes(p)}

    def instance(value: ast.expr) -> bool:     # ``self`` of a method of ``cls``, made, fresh
        if isinstance(value, ast.Call):        # ``C(…)``, ``super()``
            return isinstance(value.func, ast.Name) and (value.func.id in once or (
                reading.builtin(value.func) == "super" and not value.args and
                not value.keywords))
        if not isinstance(value, ast.Name):
            return False
        function = parents.get(id(value))
        while function is not None and not isinstance(function, FUNCTIONS):
            function = parents.get(id(function))
        return selves.get(id(function)) == value.id or made.get(value.id, False)

    def read(node: ast.Attribute) -> bool:     # a member read that keeps its ``self``
        kind, parent = members[node.attr], parents.get(id(node))
        if kind == "static":
            return True
        if not instance(node.value):
            return False
        if kind == "property" or (isinstance(parent, ast.Call) and parent.func is node):
            return True
        return isinstance(parent, ast.Call) and parent.args[:1] == [node] and \
            any(p.lstrip("?") == "functools.partial" for p in reading.paths(parent.func))

    in_body = {id(n) for n in walk_outside(cls)}
    for node in reading.nodes:
        if isinstance(node, ast.Attribute) and node.attr in members:
            if not read(node):
                return node
        elif constant_string(node) in members or (isinstance(node, ast.Name) and (
                reading.builtin(node) == "vars" or (
                    id(node) in in_body and node.id in members and
                    isinstance(node.ctx, ast.Load)))) or \
                (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.name == "__new__") or \
                (isinstance(node, ast.ClassDef) and node.keywords):
            return node
    return None


def rebound(function: ast.FunctionDef, name: str) -> bool:
    """Whether ``function``'s body binds ``name`` again in any way (assignment, augmented
    assignment, ``for``/``with``/``except ... as``, walrus, ``match`` capture, import,
    ``global``/``nonlocal``, ``del``): ``self += 0`` with an ``__add__`` that returns a
    module made ``self`` the module (adversarial review 12, F2)."""
    for node in (n for statement in function.body for n in ast.walk(statement)):
        if isinstance(node, ast.Name) and node.id == name and \
                isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            bound = [node.name]
        elif isinstance(node, ast.MatchMapping):
            bound = [node.rest]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound = node.names
        elif isinstance(node, ast.alias):
            bound = [node.asname or node.name.split(".")[0]]
        else:
            bound = []
        if name in bound:
            return True
    return False
