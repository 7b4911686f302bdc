"""Ways around the static reading found in adversarial review 15, and the rules that close
them (:mod:`dpkit.course.exercises` applies them to the code an answer to a FORBIDDEN or
JUDGED exercise reaches):

* **The IPython shell.** ``exit`` and ``quit`` are IPython objects that held the shell
  (``exit._ip.user_ns[…]``, ``quit._ip.ev("…")`` ran code given as a string, C2), and the
  history names (``In``, ``Out``, ``_``, ``_i3`` …) hold what earlier cells showed and
  tell a live session from the grader's (``len(In)``): :func:`shell_use` allows ``exit()``
  and ``quit()`` only as calls and refuses the history names the student does not bind.
* **Format fields.** ``"{0._os.environ}".format(random)`` looks an attribute up as
  ``getattr`` does (H1): :func:`format_use` reads a format string written out in the code
  with :class:`string.Formatter` (here, in the grader's process) and refuses a field with
  ``.`` or ``[…]`` (also in a nested format spec), ``.format``/``.format_map`` on anything
  but a string written out (a computed format string cannot be read) unless every argument
  is written out (``df.style.format("{:.1f}")``, honest review 16, C2), and the strings
  ``"format"`` and ``"format_map"`` (``getattr(s, "format")``, ``methodcaller``). A
  ``%``-format reads only a mapping's keys (``"%(x)s" % d``), never an attribute, and
  ``string.Template`` (whose module may not be imported) reads only keys: neither is
  refused.
* **Templates.** pandas' ``Styler`` (``df.style``) holds a Jinja environment whose
  templates look attributes up as code does (``df.style.env.from_string("{{ … }}")`` read
  ``os.environ``): :func:`template_use` refuses the Styler's environment, loader and
  templates and Jinja's ways to make a template, unless the student's code defines the
  name itself (``df.style`` itself, which renders pandas' own templates, is allowed).
* **Matplotlib's figure hooks.** ``rcParams["figure.hooks"]`` names ``module:function``
  strings that ``pyplot.figure`` imports and calls on every new figure: a module outside
  the allow-list, a function no reading sees (round 16, issue #17). :func:`hook_use`
  refuses the setting wherever it can be spelled (a key ``"figure.hooks"``, the ``hooks``
  of ``matplotlib.rc("figure", hooks=…)``) and the ``module://`` backends, which import a
  module named in data the same way; the worker (:mod:`dpkit.course.worker`) refuses a
  hook that reaches matplotlib by a key the reading cannot see (computed, or in a style
  file).
* **dpkit's private names and packages.** :func:`library_part` refuses a dpkit path with a
  private part (``dpkit.laplace._laplace_grid``, ``dpkit.naive.svt._variant``,
  ``dpkit._samplers``, C3) and, for an exercise that forbids whole packages, any path in
  them or to a function or class they define, by whatever name it is reached
  (``dpkit.svt.core.sparse_on_answers``, ``dpkit.naive.above_threshold``).
"""

from __future__ import annotations

import ast
import functools
import re
import string

from dpkit.course.allowed import ALLOWED_MODULES, defined_in, names_object
from dpkit.course.reading import Reading, imported_names, own_attributes, walk_running

__all__ = ["course_import", "format_use", "hook_use", "library_part", "library_use",
           "shell_use", "template_use"]

#: IPython's history names in a kernel's namespace (``_``, ``__``, ``___``, ``_i``,
#: ``_ii``, ``_iii``, ``_iN``, ``_N``, ``_ih``, ``_oh``, ``_dh``, ``In``, ``Out``).
_HISTORY = re.compile(r"In|Out|_ih|_oh|_dh|_{1,3}|_i{1,3}|_i?\d+")
_FORMATTER = string.Formatter()
#: ``df.style`` (pandas' Styler) and Jinja's ways to make a template from a string or a
#: file (review 15: ``df.style.env.from_string("{{ … }}").render()`` ran its lookups).
_TEMPLATES = frozenset({
    "env", "loader", "template_html", "template_html_table", "template_html_style",
    "template_latex", "template_string", "template_typst", "from_string",
    "compile_expression", "from_code", "get_template", "select_template",
    "get_or_select_template"})
_FORMAT_METHODS = frozenset({"format", "format_map"})
#: Matplotlib's setting of ``module:function`` hooks, its name within the ``figure`` group
#: (``matplotlib.rc("figure", hooks=…)``), and the prefix of a backend named as a module.
_HOOKS, _HOOK_KEY, _MODULE_BACKEND = "figure.hooks", "hooks", "module://"


def shell_use(reading: Reading, node: ast.AST, parent: ast.AST | None) -> str | None:
    """What of the IPython shell ``node`` reaches: ``exit`` or ``quit`` (a global name the
    student's code does not bind) other than called, ``exit()``; a history name of the
    shell the student's code does not bind. None otherwise.

    Parameters
    ----------
    reading : Reading
        The reading of the code ``node`` belongs to.
    node : ast.AST
        The node.
    parent : ast.AST or None
        Its parent.

    Returns
    -------
    str or None
        What is refused, for the feedback, or None.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 15, C2).

    >>> tree = ast.parse("exit._ip")
    >>> shell_use(Reading([tree], lambda _name: set()), tree.body[0].value.value, None)
    'exit used other than as a call exit() (it may hold the IPython shell)'
    """
    name = reading.builtin(node) if isinstance(node, ast.Name) and \
        isinstance(node.ctx, ast.Load) and node.id not in reading.own else None
    if name in ("exit", "quit") and not (isinstance(parent, ast.Call) and
                                         parent.func is node):
        return f"{name} used other than as a call {name}() (it may hold the IPython shell)"
    if name is not None and _HISTORY.fullmatch(name):
        return f"{name} (the IPython shell's history)"
    return None


def template_use(reading: Reading, node: ast.AST) -> str | None:
    """How ``node`` may reach a Jinja template, whose fields run lookups as code: an
    attribute of :data:`_TEMPLATES` that the student's code does not define. None
    otherwise.

    Parameters, return value and errors as in :func:`shell_use` (``reading`` and
    ``node``; what is refused, for the feedback, or None; nothing raised).

    Privacy guarantee: none by itself (reference: adversarial review 15, H1).

    >>> tree = ast.parse("t = frame.style.env")
    >>> template_use(Reading([tree], lambda _n: set()), tree.body[0].value)
    "env (pandas' Styler renders Jinja templates, whose fields run lookups as code)"
    """
    if not isinstance(node, ast.Attribute) or node.attr not in _TEMPLATES or \
            node.attr in reading.defined:
        return None
    return (f"{node.attr} (pandas' Styler renders Jinja templates, whose fields run "
            "lookups as code)")


def hook_use(node: ast.AST) -> str | None:
    """How ``node`` may set matplotlib's figure hooks or a backend named as a module, which
    import a module named in data and call a function of it on every new figure: a string
    written out that names ``figure.hooks`` (``rcParams["figure.hooks"] = …``,
    ``rc_context({"figure.hooks": …})``, ``rcParams.update``, ``style.use`` with a dict),
    the string ``"hooks"`` or a keyword argument ``hooks`` (``rc("figure", hooks=…)``), a
    string that starts with ``module://`` (``matplotlib.use("module://…")``). None
    otherwise.

    Parameters, return value and errors as in :func:`shell_use` (``node``; what is
    refused, for the feedback, or None; nothing raised).

    Privacy guarantee: none by itself (reference: issue #17, round 16; matplotlib's
    ``pyplot.figure``, which imports each ``module:function`` of ``figure.hooks``).

    >>> hook_use(ast.parse("rcParams['figure.hooks'] = ['m:f']").body[0].targets[0].slice)
    "the string 'figure.hooks' (matplotlib imports and calls the hooks it names)"
    >>> hook_use(ast.parse("rc('figure', hooks=['m:f'])").body[0].value.keywords[0])
    'the keyword hooks= (matplotlib imports and calls the hooks it names)'
    >>> hook_use(ast.Constant("figure.dpi")) is None
    True
    """
    why = "(matplotlib imports and calls the hooks it names)"
    if isinstance(node, ast.keyword) and node.arg == _HOOK_KEY:
        return f"the keyword {_HOOK_KEY}= {why}"
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    if _HOOKS in node.value or node.value.strip() == _HOOK_KEY:
        return f"the string {node.value[:40]!r} {why}"
    if node.value.lstrip().startswith(_MODULE_BACKEND):
        return (f"the string {node.value[:40]!r} (a backend named as a module, which "
                "matplotlib imports)")
    return None

def _lookup_field(text: str, depth: int = 0) -> str | None:
    """The first field of the format string ``text`` that looks an attribute or an item up
    (``0._os``, ``a[k]``), in a nested format spec too, or None (also if ``text`` is not
    a valid format string: ``str.format`` would raise on it)."""
    try:
        parsed = list(_FORMATTER.parse(text))
    except ValueError:
        return None
    for _, field, spec, _ in parsed:
        if field and ("." in field or "[" in field):
            return field
        inner = _lookup_field(spec, depth + 1) if spec and depth < 2 else None
        if inner:
            return inner
    return None


def format_use(node: ast.AST, parent: ast.AST | None = None) -> str | None:
    """How ``node`` looks a name up through a format string: ``.format`` or
    ``.format_map`` on a string written out whose fields use ``.`` or ``[…]``; on anything
    else (a computed string, ``str.format``, a pandas Styler), unless it is called with
    arguments that are all written out (numbers, strings whose fields look nothing up,
    ``None``, and lists, tuples, sets and dicts of them: ``df.style.format("{:.1f}")``,
    ``df.style.format(precision=1)``, ``fmt.format(2.0)``); the string ``"format"`` or
    ``"format_map"``. None otherwise.

    A computed format string could look attributes up, but only on the arguments it is
    given, and a field reads attributes and items, never calls: from a number, a string or
    ``None`` no module is reached. So the object's kind need not be known (``s.style`` is
    a pandas Styler on a table and a string on a Series with the label ``"style"``); a
    Styler's format strings, applied to the table's cells, are checked too (honest
    review 16, C2).

    Parameters, return value and errors as in :func:`shell_use` (``node``; what is
    refused, for the feedback, or None; nothing raised).

    Privacy guarantee: none by itself (reference: adversarial review 15, H1).

    >>> format_use(ast.parse("'{0._os.environ}'.format(random)").body[0].value.func)
    "the format field {0._os.environ} (a field's . or [ ] looks an attribute or item up)"
    >>> format_use(ast.parse("'{:.3f} {0}'.format(x)").body[0].value.func) is None
    True
    >>> call = ast.parse("df.style.format(precision=1)").body[0].value
    >>> format_use(call.func, call) is None
    True
    """
    if isinstance(node, ast.Constant) and node.value in _FORMAT_METHODS:
        return f"the string {node.value!r} (it reaches str.{node.value})"
    if not isinstance(node, ast.Attribute) or node.attr not in _FORMAT_METHODS:
        return None
    if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        if isinstance(parent, ast.Call) and parent.func is node and all(
                _inert(a) for a in [*parent.args, *parent.keywords]):
            return None
        return (f".{node.attr} on a format string that is not written out in the code, "
                "with arguments that are not all written out (a computed format string "
                "could look their attributes up)")
    field = _lookup_field(node.value.value)
    return None if field is None else (
        f"the format field {{{field}}} (a field's . or [ ] looks an attribute or item up)")


def _inert(node: ast.AST) -> bool:
    """Whether ``node``, an argument, is written out: a number, ``None``, a string whose
    fields look nothing up, a list, tuple, set or dict of them (no ``**mapping``)."""
    if isinstance(node, ast.keyword):
        return node.arg is not None and _inert(node.value)
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict,
                              ast.UnaryOp, ast.USub, ast.UAdd, ast.Load, ast.expr_context))
               and not (isinstance(n, ast.Constant) and isinstance(n.value, str)
                        and _lookup_field(n.value))
               and not (isinstance(n, ast.Dict) and None in n.keys)
               for n in ast.walk(node))


def _paths(reading: Reading, node: ast.AST) -> set[str]:
    """The dotted paths ``node`` refers to: what an import names, what a name or an
    attribute may hold."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names} | {p for _, p in imported_names(node)}
    if isinstance(node, ast.ImportFrom):
        module = {node.module} if node.module and not node.level else set()
        return module | {p for _, p in imported_names(node)}
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
        return {p.lstrip("?") for p in reading.paths(node)}
    return set()


_defined_in = functools.lru_cache(maxsize=4096)(defined_in)
#: The first parts of the modules whose private names are refused.
_ROOTS = frozenset(m.split(".")[0] for m in ALLOWED_MODULES) | {"dpkit"}


def library_part(reading: Reading, node: ast.AST, packages: tuple[str, ...] = ()
                 ) -> str | None:
    """The path ``node`` refers to that the code an answer reaches may not use: one of
    dpkit or an allowed module with a private part (a module or attribute whose name
    starts with ``_``, not a double-underscore name: ``dpkit.laplace._laplace_grid``,
    ``sys._base_executable``, ``warnings._getcategory``), or, with ``packages``, one in
    them or naming a function, class or module that one of them defines (looked up in the
    grader's process, :func:`~dpkit.course.allowed.defined_in`). None otherwise. A private
    part that is an attribute the student's code stores itself (``self._gen = gen``, a
    field of its class: :func:`~dpkit.course.reading.own_attributes`) and that
    names nothing of the library there is theirs: the reading follows arguments into
    parameters flow-insensitively, so ``self`` of a student's class may "hold" ``dpkit``
    when the function is called with a dpkit object (honest review 16, C1).

    Parameters, return value and errors as in :func:`shell_use` (``reading`` and
    ``node``; the path and why, for the feedback, or None; nothing raised), and
    ``packages`` (tuple of str): dotted names of the packages refused as a whole.

    Privacy guarantee: none by itself (reference: adversarial review 15, C3).

    >>> library_part(Reading([], lambda _n: set()),
    ...              ast.parse("from dpkit.naive.svt import _variant").body[0])
    'dpkit.naive.svt._variant (a private name of dpkit)'
    """
    def within(name: str | None, package: str) -> bool:
        return name is not None and (name == package or name.startswith(f"{package}."))

    for path in sorted(_paths(reading, node)):
        parts = path.split(".")
        if parts[0] not in _ROOTS:
            continue
        private = [at for at, part in enumerate(parts)
                   if part.startswith("_") and not part.startswith("__")]
        stored = own_attributes(reading.nodes) if private else set()
        if any(parts[at] not in stored or names_object(".".join(parts[:at + 1]))
               for at in private):
            return f"{path} (a private name of {parts[0]})"
        for package in packages:
            if within(path, package) or within(_defined_in(path), package):
                return f"{path} (part of {package}, which this exercise forbids as a whole)"
    return None


def library_use(reading: Reading, tree: ast.AST, packages: tuple[str, ...],
                  calls: bool, known: Reading | None) -> tuple[str, ast.AST] | None:
    """A dpkit path ``tree`` refers to that may not be used (:func:`library_part`) and the
    node that does, or None. With ``calls`` (an earlier cell's statement), a function
    called where it is named, when the statement runs (an experiment), does not count, nor
    does an import that binds nothing new: ``import dpkit.svt`` (it binds ``dpkit``), or
    a name the set-up cell (``known``) binds to the same path.

    Parameters
    ----------
    reading : Reading
        The reading of the code ``tree`` belongs to.
    tree : ast.AST
        A cell's code, or one statement of it.
    packages : tuple of str
        Dotted names of the packages refused as a whole.
    calls : bool
        Whether ``tree`` is an earlier cell's statement.
    known : Reading or None
        The reading of the set-up cell, if known.

    Returns
    -------
    tuple or None
        What :func:`library_part` says and the node, or None.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 15, C3).

    >>> tree = ast.parse("print(dpkit._samplers.grid.grid_exponent(1))")
    >>> reading = Reading([tree], lambda name: {name})
    >>> library_use(reading, tree.body[0], (), True, None) is None     # an experiment
    True
    >>> library_use(reading, tree.body[0], (), False, None)[0]
    'dpkit._samplers.grid.grid_exponent (a private name of dpkit)'
    """
    skipped: set[int] = set()
    if calls:
        for call in walk_running(ast.Module([tree], [])):
            func = call.func if isinstance(call, ast.Call) else None
            while isinstance(func, ast.Attribute):
                skipped.add(id(func))
                func = func.value
            skipped.add(id(func))
    for node in ast.walk(tree):
        if id(node) in skipped or (calls and node is tree and _rebinding(node, known)):
            continue
        found = library_part(reading, node, packages)
        if found:
            return found, node
    return None


def _rebinding(node: ast.AST, known: Reading | None) -> bool:
    """Whether the import ``node`` binds only what is bound already: ``import a.b`` (it
    binds ``a``) or names the set-up cell ``known`` binds to the same paths."""
    if isinstance(node, ast.Import):
        return all(a.asname is None for a in node.names)
    return isinstance(node, ast.ImportFrom) and known is not None and all(
        known.names.get(name) == {path} for name, path in imported_names(node))


def course_import(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether ``node`` imports the course kit (``dpkit.course``): no exercise needs it,
    and in the sandbox its modules but the worker's are empty files, so that
    ``hasattr(dpkit.course.grading, "grade")`` would tell the sandbox from a notebook
    (adversarial review 11)."""
    names = [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        names = [f"{node.module}.{n}" for n in names] if node.module and not node.level \
            else []
    return any(n == "dpkit.course" or n.startswith("dpkit.course.") for n in names)
