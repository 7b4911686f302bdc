"""What grading needs to know of particular exercises, by their label in the book.

* :data:`FORBIDDEN`: the library functions an exercise's answer may not use, because the
  exercise asks the student to write that code (``ex-svt-above-threshold``: "write your own
  AboveThreshold"), with the reason the feedback gives. :func:`forbidden_use` finds them in
  the student's code **statically, in the grader's process** (the sandbox runs the student's
  code, which could undo any stub put in its own process): the answer and every earlier
  cell of the student's are read from the source.
* :data:`ABSOLUTE_TOLERANCE`, :data:`RELATIVE_TOLERANCE`: how closely a deterministic
  answer must agree with the model solution where 1e-6 (relative) is not what the statement
  asks for.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from dpkit.course.allowed import (
    import_feedback,
    reached_module,
    read_cells,
    unallowed_import,
)
from dpkit.course.escapes import (
    course_import,
    format_use,
    hook_use,
    library_use,
    shell_use,
    template_use,
)
from dpkit.course.lookups import expression_use, getter_use, match_use
from dpkit.course.magics import drop_magics
from dpkit.course.reading import (
    FUNCTIONS,
    LOOKUPS,
    Reading,
    answer_statements,
    constant_string,
    imported_names,
    match_names,
    method_kinds,
    own_attributes,
    own_binding,
    parameters_of,
    rebound,
    statement_bindings,
    unsealing,
    walk_running,
)
from dpkit.course.shown import check_use, checker_words

__all__ = ["ABSOLUTE_TOLERANCE", "DYNAMIC", "ENVIRONMENT", "FORBIDDEN", "FORBIDDEN_PACKAGES",
           "JUDGED", "RELATIVE_TOLERANCE", "environment_use", "forbidden_use"]

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
#: Per exercise: packages whose every function and class its answer may not use, by any name or
#: module (adversarial review 15, C3: ``dpkit.svt.core.sparse_on_answers`` and
#: ``dpkit.naive.svt._variant`` are AboveThreshold too); dpkit's private names (the grid's
#: ``dpkit._samplers.grid``, ``dpkit.laplace._laplace_grid``) are refused in every answer to a
#: FORBIDDEN or JUDGED exercise (:func:`~dpkit.course.escapes.library_use`).
FORBIDDEN_PACKAGES: dict[str, tuple[str, ...]] = {
    "ex-svt-above-threshold": ("dpkit.svt", "dpkit.naive.svt"),
}

#: Built-in functions that reach a name given as a string: refused (as a call or as a value) in
#: the code an answer to an exercise of :data:`FORBIDDEN` reaches, since no static reading can
#: follow them. ``getattr`` and its kin, ``vars``, ``locals`` and ``operator.attrgetter`` are
#: refused only where they could reach a forbidden function (see :func:`forbidden_use`).
DYNAMIC = frozenset({"eval", "exec", "compile", "__import__", "globals", "breakpoint"})
#: Names refused wherever they appear in the code an answer reaches (a bare name, an attribute,
#: an imported module or name, a keyword argument), used or not: modules and functions that
#: import a module, list an object's members, rebuild an object from bytes or reach the objects
#: of a running program by a name given as data (round 3 of the adversarial review reached
#: ``laplace_grid`` by ``pickle.loads(b"cdpkit.laplace\n…")``), and the foreign-function
#: interfaces (``ctypes``, ``_ctypes``, NumPy's ``ctypeslib``).
_DYNAMIC_NAMES = frozenset({
    "importlib", "imp", "inspect", "builtins", "pickle", "_pickle", "cPickle", "marshal",
    "dill", "cloudpickle", "joblib", "shelve", "copyreg", "copy_reg", "pydoc", "ctypes",
    "_ctypes", "ctypeslib",
    "runpy", "codeop", "pkgutil", "zipimport", "pdb", "bdb", "gc", "mock", "modules",
    "import_module", "getmembers", "getmembers_static", "getattr_static", "resolve_name",
    "locate", "get_type_hints", "ForwardRef", "read_pickle", "allow_pickle", "get_objects",
    "get_referents", "get_referrers", "_getframe", "settrace", "setprofile", "f_globals",
    "f_locals", "f_back", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
    # adversarial review 14, F1: the worker's import hook (only %%writefile files import)
    "meta_path", "path_hooks", "path_importer_cache",
    # review 15, C2: the IPython shell and what runs code given as a string through it;
    # singledispatch's register evaluates annotations written as strings; pandas' Styler
    # renders Jinja templates read from files and formats an index by a format string; an
    # audit hook is handed the objects of the worker's events
    "get_ipython", "_ip", "user_ns", "user_global_ns", "user_module", "run_cell",
    "run_cell_async", "run_line_magic", "run_cell_magic", "ev", "ex", "safe_execfile",
    "safe_run_module", "singledispatch", "singledispatchmethod", "from_custom_template",
    "format_index", "format_index_names", "addaudithook"})
#: Modules refused when the code reaches them under another name (``import code as c``): their
#: names are too common as variables to refuse as bare names.
_DYNAMIC_MODULES = frozenset({"code", "sys.modules", "sys._getframe"})
#: The only double-underscore names that code an answer reaches may use: the others
#: (``__dict__``, ``__globals__``, ``__subclasses__``, ``__code__``, ``__reduce__``,
#: ``__getattribute__`` …) list or rebuild objects by name. Operators (reflected and in place
#: too), the protocols of a class of one's own and a class's plain facts resolve nothing by
#: name.
_PLAIN_DUNDERS = frozenset({
    "__init__", "__new__", "__post_init__", "__name__", "__qualname__", "__module__",
    "__doc__", "__class__", "__slots__", "__len__", "__iter__", "__next__", "__reversed__",
    "__call__", "__enter__", "__exit__", "__repr__", "__str__", "__format__", "__bytes__",
    "__hash__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__",
    "__pos__", "__abs__", "__invert__", "__float__", "__int__", "__complex__", "__index__",
    "__bool__", "__round__", "__trunc__", "__floor__", "__ceil__", "__contains__",
    "__getitem__", "__setitem__", "__delitem__", "__missing__", "__copy__", "__deepcopy__",
    "__version__", "__match_args__", "__set_name__", "__init_subclass__",
    "__class_getitem__", "__all__",
    *(f"__{prefix}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv",
                                     "mod", "pow", "lshift", "rshift", "and", "or", "xor")
      for prefix in ("", "r", "i")),
    "__divmod__", "__rdivmod__"})
#: Double-underscore attributes allowed under a condition (see :func:`_dynamic`): setting or
#: deleting an attribute whose name the code spells (``object.__setattr__(self, "b", …)`` in a
#: frozen dataclass), and the function a decorator of the student's wraps (not one of the
#: library's).
_NAMED_DUNDERS = frozenset({"__setattr__", "__delattr__"})
_OWN_DUNDERS = frozenset({"__wrapped__", "__annotations__", "__defaults__",
                          "__kwdefaults__"})
#: The feedback's words for ``getattr(self, computed)`` in a class that is not sealed.
_UNSEALED = "on self (allowed only while"

#: The randomized exercises, judged by the law of their outputs (:mod:`dpkit.course.judges`).
JUDGED = frozenset({"ex-laplace-textbook", "ex-analytic-variance", "ex-svt-above-threshold",
                    "ex-svt-auto-avg", "ex-exp-sampler"})
#: What tells the grading sandbox from a notebook (adversarial review round 7, finding 2: ``if
#: sys.argv != [...]: return value``, no noise in real use): refused wherever the code an answer
#: to a :data:`JUDGED` exercise reaches spells them (an attribute, an import, a bare name the
#: student does not bind), since no test of outputs can see such a device.
ENVIRONMENT = frozenset({
    "argv", "orig_argv", "environ", "environb", "getenv", "get_ipython", "getuid",
    "geteuid", "getgid", "getegid", "getlogin", "getppid", "getpid", "getpwuid",
    "gethostname", "uname", "socket", "getpass", "platform", "timing", "modules",
    "getcwd", "isatty", "executable", "ipykernel", "IPython", "zmq", "jupyter_client",
    "importlib", "__import__", "builtins", "__builtins__",
    # adversarial review 12, F3: the interactive prompts, an event loop, the threads' native
    # ids and the hooks a kernel sets
    "ps1", "ps2", "get_running_loop", "get_native_id", "native_id", "excepthook",
    "breakpointhook",
    # round 13, F3: the sandbox's file system (no /etc, a 64 MiB /tmp) and the generator's
    # seeding, read by listing folders, a file system's size or the seed sequence
    "listdir", "scandir", "iterdir", "walk", "glob", "statvfs", "fstatvfs", "seed_seq",
    # round 13, F2: reads that time the page cache one sandbox leaves for the next
    "pread", "preadv", "posix_fadvise", "mmap", "madvise", "mincore",
    # round 15: where Python is installed (a private name, sys._base_executable, is refused
    # as every private name of a module is: :func:`~dpkit.course.escapes.library_part`)
    "prefix", "base_prefix", "exec_prefix", "base_exec_prefix"})
#: Builtins that run code given as data, which could reach any of the above: refused as bare
#: names only (``re.compile`` is another function).
_DYNAMIC_BUILTINS = frozenset({"eval", "exec", "compile"})
#: The words of :data:`ENVIRONMENT` as the refused names of the dynamic-lookup check
#: (:func:`_dynamic`) that :func:`environment_use` runs: ``getattr(os, "environ")``.
_ENVIRONMENT_BANNED = {word: word for word in ENVIRONMENT} | {"course": "dpkit.course"}
#: Methods that read an item by a key given as their first argument.
_KEYED = frozenset({"get", "pop", "setdefault", "__getitem__"})


def environment_use(label: str, answer: str, earlier: Iterable[str | tuple[str, str]]
                    ) -> str | None:
    """Why the student's answer to the randomized exercise ``label`` may not be graded
    because its code reads where it runs, or None (as :func:`forbidden_use` reads
    ``answer`` and ``earlier``).

    The judges see only outputs: an answer that adds noise in the grading sandbox and none
    in a notebook would pass them all (review round 7, finding 2). The worker looks like a
    kernel where it cheaply can (``sys.argv``), and this refuses the obvious signals: a
    word of :data:`ENVIRONMENT` (``sys.argv``, ``os.environ``, ``os.getuid``,
    ``get_ipython``, ``socket``, ``platform``, ``dpkit.timing`` …) in an import, as a bare
    name the student's code does not bind itself, or as an attribute, unless the student's
    code stores that attribute itself (``self.timing = []``) and the object read may hold
    no module (a parameter, an object of the student's; the result of a call may hold the
    modules of its object and arguments: ``[os].pop().environ`` is refused, adversarial
    review 10, A2); a word of :data:`ENVIRONMENT` as a constant key of something that may
    hold a module (``vars(m)["environ"]``, ``m.get("argv")``). And, as
    :func:`forbidden_use` refuses dynamic lookups, with the words of :data:`ENVIRONMENT` as
    the refused names: ``getattr`` and its kin with one of them or with a computed name
    (but on ``self`` in a method of the student's class whose methods are only called on
    an instance: :func:`_own_self`), ``vars`` of a module,
    ``__dict__`` and the other non-plain double-underscore names, ``pickle``, ``inspect``,
    ``gc`` and the rest of ``_DYNAMIC_NAMES``. ``unpadded`` (the book's idiom for
    simulations, ``with unpadded():``) is allowed; the state behind it is reached only
    through ``timing`` or private names. ``dpkit.check`` (a stand-in in the sandbox) may
    only be shown (:func:`~dpkit.course.shown.check_use`), and ``check`` and the checks'
    names count as words of :data:`ENVIRONMENT` for ``getattr`` and its kin. The course kit
    (``dpkit.course``, empty files in the sandbox but the worker) is refused as an import
    or an attribute of ``dpkit``; the shell, format fields, templates and private names
    as :func:`forbidden_use` refuses them. Other signals (the file system, the time, the parent
    process, the process's limits, a count of the function's own calls) stay open: the
    teacher reads the code.

    Returns
    -------
    str or None
        The feedback (what was refused, where), or None.

    >>> environment_use("ex-laplace-textbook", "import sys; x = sys.argv", [])[:45]
    'this exercise is judged by what your function'
    >>> environment_use("ex-laplace-interval", "import sys; x = sys.argv", []) is None
    True
    """
    if label not in JUDGED:
        return None
    cells = [(cell, "an earlier cell of yours") if isinstance(cell, str) else cell
             for cell in earlier]
    read, broken = read_cells([(answer, "its answer"), *cells])
    parsed = [(tree, place) for tree, place, _ in read]
    demand = ("this exercise is judged by what your function returns, so it may not depend "
              "on where it runs; ")
    if broken:
        return import_feedback(demand, broken)
    # Attributes the student's code defines itself (``self.timing = []``, a class's or a
    # dataclass's field, a namedtuple's), in any cell: an earlier answer is read again with
    # each later one; and the names it binds itself, in any cell.
    bound = {n for tree, _ in parsed for node in ast.walk(tree) for n in own_binding(node)}
    reading = Reading([tree for tree, _ in parsed],
                      lambda name: set() if name in bound or name in dir(builtins)
                      else {f"?{name}"}, calls_hold=True)
    stored = own_attributes(n for tree, _ in parsed for n in ast.walk(tree))
    for tree, place in parsed:
        parents = {id(child): node for node in ast.walk(tree)
                   for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            word = _environment_word(node, parents.get(id(node)), reading, stored, bound)
            if word:
                return (f"{demand}{_where(place, node)}, {word} reads the environment (the "
                        "command line, the user, the machine, the kernel) or may import "
                        "what does, which is not allowed in the code an answer here uses: "
                        "remove it, so the answer was not graded")
    for tree, place in parsed:
        found = library_use(reading, tree, (), False, None)
        if found:
            return (f"{demand}{_where(place, found[1])}, {found[0]} may not be used in the "
                    "code an answer here uses (it could tell the grader from a notebook), "
                    "so the answer was not graded")
    places = {id(node): place for tree, place in parsed for node in ast.walk(tree)}
    for tree, place in parsed:
        found = _dynamic(reading, {**_ENVIRONMENT_BANNED, **checker_words()}, tree,
                         places)
        if found:
            return (f"{demand}{_where(place, found[1])}, " + _dynamic_feedback(
                found, "it could read the environment: the command line, the user, the "
                "machine, the kernel"))
    found = check_use(reading, parsed)
    if found:
        return (f"{demand}{_where(found[1], found[0])}, {found[2]}: where your notebook is "
                "graded, the checks do not run in it (the grader runs them itself, in the "
                "test cells), so in the code an answer here uses a check may only be shown, "
                "at a cell's top level: print(dpkit.check.check_…(your_function)), or "
                "verdict = dpkit.check.check_…(your_function) then print(verdict), "
                "assert verdict.passed, verdict.message or if not verdict.passed: "
                "print(verdict.message); so the answer was not graded")
    unread = unallowed_import(read)
    return import_feedback(demand, unread) if unread else None


def _environment_word(node: ast.AST, parent: ast.AST | None, reading: Reading,
                      stored: set[str], bound: set[str]) -> str | None:
    """The word of :data:`ENVIRONMENT` (or the builtin of :data:`_DYNAMIC_BUILTINS`) by
    which ``node`` may read where the code runs, or None. ``dpkit.timing`` is reached only
    for ``unpadded`` (``from dpkit.timing import unpadded``, ``dpkit.timing.unpadded()``):
    its other names (the state behind the deadlines) are refused. ``from IPython.display
    import …`` (``display``, ``Markdown``) is allowed."""
    if isinstance(node, ast.Import):
        words = [p for a in node.names if a.name != "dpkit.timing" for p in a.name.split(".")]
    elif isinstance(node, ast.ImportFrom) and node.module == "dpkit.timing":
        words = [] if all(a.name == "unpadded" for a in node.names) else ["dpkit.timing"]
    elif isinstance(node, ast.ImportFrom) and node.module == "IPython.display":
        words = []                  # display() and Markdown in a notebook read nothing
    elif isinstance(node, ast.ImportFrom):
        words = [*(node.module or "").split("."), *(a.name for a in node.names)]
    elif isinstance(node, ast.Attribute) and node.attr == "course" and \
            "dpkit" in reading.paths(node.value):
        words = ["dpkit.course"]
    elif isinstance(node, ast.Attribute) and "dpkit.timing" in reading.paths(node.value):
        words = [] if node.attr == "unpadded" else [f"dpkit.timing.{node.attr}"]
    elif isinstance(node, ast.Attribute) and node.attr == "timing" and \
            "dpkit" in reading.paths(node.value):
        unpadded = isinstance(parent, ast.Attribute) and parent.attr == "unpadded"
        words = [] if unpadded else ["timing"]
    elif isinstance(node, ast.Attribute):
        words = [] if (node.attr in stored and not reading.paths(node.value)) \
            or node.attr in _DYNAMIC_BUILTINS else [node.attr]
    elif isinstance(node, ast.Name):
        if reading.builtin(node) in _DYNAMIC_BUILTINS:
            return node.id
        words = [node.id] if node.id not in bound else []
    elif isinstance(node, ast.Subscript) and reading.paths(node.value):
        words = [constant_string(node.slice) or ""]     # vars(m)["environ"], m.d["argv"]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _KEYED and node.args and reading.paths(node.func.value):
        words = [constant_string(node.args[0]) or ""]
    else:
        return None
    if isinstance(node, (ast.Import, ast.ImportFrom)) and course_import(node):
        return "dpkit.course"
    return next((w for w in words if w in ENVIRONMENT or w.startswith("dpkit.timing.")
                 or w in ("dpkit.timing", "dpkit.course")), None)


#: The IPython shell's methods among :data:`_DYNAMIC_NAMES` (their advice: remove them).
_SHELL_METHODS = frozenset({"get_ipython", "_ip", "user_ns", "user_global_ns", "user_module",
                            "run_cell", "run_cell_async", "run_line_magic", "run_cell_magic",
                            "ev", "ex", "safe_execfile", "safe_run_module"})
#: Absolute tolerances of the exercises whose statement bounds the accuracy asked for:
#: ``my_delta`` "must stay accurate down to δ ≈ 1e-25", so below that an error of a
#: millionth of 1e-25 is within the statement (a hidden input may have δ ≈ 1e-321).
ABSOLUTE_TOLERANCE = {"ex-analytic-profile": 1e-25 * 1e-6}
#: Relative tolerances other than 1e-6: the grid's noise scale differs from the textbook
#: Δ/ε by a factor of at most 1 + 2**-20 (about 9.5e-7), so 1e-6 could not tell the
#: exercise's answer from the mistake it is about; both are exact formulas of floats.
RELATIVE_TOLERANCE = {"ex-laplace-grid-scale": 1e-12}


def _library(path: str) -> bool:
    """Whether a path names a dpkit object, or an unknown object of the set-up cell."""
    return path == "dpkit" or path.startswith(("dpkit.", "?"))


def _locals_allowed(node: ast.Call, parents: dict[int, ast.AST], scoped: bool) -> bool:
    """``locals()`` (or ``vars()``) inside a function holds only its own variables; at a
    cell's top level, where it is ``globals()``, only to fill a format string."""
    if scoped:
        return True
    parent = parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg is None:
        parent = parents.get(id(parent))
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and \
        parent.func.attr in ("format", "format_map")


def _spelled(node: ast.AST, reading: Reading, parent: ast.AST | None,
             banned: dict[str, str]) -> str | None:
    """The identifier of a way to reach objects by a name given as data that ``node``
    itself spells where it may refer to that way, or None: a part of a module an import
    names, or a name it imports (not the name it binds with ``as``; nothing of ``from
    __future__ import``); a bare name the student's code does not bind itself (by a def, a
    class, a parameter, an assignment: ``modules = [...]`` is the student's own); an
    attribute (``x.modules`` may be ``sys.modules``); a keyword argument, unless of a call
    to a function of the student's that has that parameter. Of the double-underscore
    names, the plain ones are allowed; ``__setattr__`` and ``__delattr__`` only called
    with the attribute's name spelled (not a forbidden one); ``__wrapped__`` only of an
    object that holds nothing of a module (the student's own decorated function)."""
    if isinstance(node, ast.ImportFrom):
        if node.module == "__future__" and not node.level:
            return None
        words = [*(node.module or "").split("."), *(a.name for a in node.names)]
    elif isinstance(node, ast.Import):
        words = [part for a in node.names for part in a.name.split(".")]
    elif isinstance(node, ast.Name):
        words = [node.id] if node.id not in reading.own or _dunder(node.id) else []
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        words = [node.name] if _dunder(node.name) else []   # def __instancecheck__ (round 16)
    elif isinstance(node, ast.Attribute) and node.attr in _NAMED_DUNDERS:
        called = isinstance(parent, ast.Call) and parent.func is node and parent.args and \
            not parent.keywords
        name = constant_string(parent.args[-2 if node.attr == "__setattr__" else -1]) \
            if called and len(parent.args) >= (2 if node.attr == "__setattr__" else 1) \
            else None
        return None if name and name not in banned and not _unreadable(name) else \
            f"{node.attr} without the attribute's name spelled"
    elif isinstance(node, ast.Attribute) and node.attr in _OWN_DUNDERS:
        return f"{node.attr} of a library object" if reading.paths(node.value) else None
    elif isinstance(node, ast.Attribute):
        words = [node.attr]
    elif isinstance(node, ast.keyword) and node.arg:
        own = isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and any(
            node.arg in {a.arg for a in parameters_of(f.args)}
            for f in reading.functions.get(parent.func.id, []))
        words = [] if own else [node.arg]
    else:
        return None
    return next(filter(_unreadable, words), None)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _unreadable(name: str) -> bool:
    """Whether an identifier names a way to reach objects by a name given as data."""
    return name in _DYNAMIC_NAMES or (_dunder(name) and name not in _PLAIN_DUNDERS)


def _dynamic(reading: Reading, banned: dict[str, str], tree: ast.AST,
             places: dict[int, str] | None = None) -> tuple[str, ast.AST] | None:
    """How ``tree`` looks a name up dynamically where it could reach a forbidden function
    (a short description) and the node that does, or None. With ``places`` (the cell's
    name of each node of the code read, for the feedback), ``getattr``
    (and its kin) with a computed name is allowed on ``self``: a method's first parameter
    that holds nothing of a module, in a sealed class (:func:`_own_self`)."""
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    scoped = {id(n) for f in ast.walk(tree) if isinstance(f, FUNCTIONS)
              for n in ast.walk(f)}
    for node in ast.walk(tree):
        why = _dynamic_node(reading, banned, node, parents, id(node) in scoped, places)
        if why:
            return why, node
    return None


def _own_self(node: ast.AST, parents: dict[int, ast.AST], reading: Reading
              ) -> ast.ClassDef | None:
    """The student's class whose method ``node`` is ``self`` of, or None: ``node`` is the
    first parameter of the method it is read in (a function defined in a class's body),
    not bound again there (:func:`_rebound`), may hold nothing of a module, and its class
    has no base that may be a library object (dpkit's, or the set-up cell's); the method
    is not decorated (but by the builtin ``property``). If its class is also
    :func:`~dpkit.course.reading.sealed`, ``getattr(self, name)`` finds only what the
    student's class and code define on an instance of it, and a forbidden function put
    there is named where it is put (honest review 11, F6)."""
    function = parents.get(id(node))
    while function is not None and not isinstance(function, FUNCTIONS):
        function = parents.get(id(function))
    if not isinstance(node, ast.Name) or not isinstance(function, ast.FunctionDef) or \
            not isinstance(parents.get(id(function)), ast.ClassDef):
        return None
    first = [*function.args.posonlyargs, *function.args.args][:1]
    cls = parents[id(function)]
    bases = cls.bases                          # a library class's attributes are not theirs
    plain = not function.decorator_list or \
        method_kinds(cls, reading).get(function.name) == "property"
    return cls if [a.arg for a in first] == [node.id] and \
        not rebound(function, node.id) and not reading.paths(node) and \
        not any(_library(p) for base in bases for p in reading.paths(base)) and plain \
        else None


def _dynamic_node(reading: Reading, banned: dict[str, str], node: ast.AST,
                  parents: dict[int, ast.AST], scoped: bool,
                  places: dict[int, str] | None = None) -> str | None:
    """How ``node`` itself looks a name up dynamically (see :func:`_dynamic`), or None;
    ``scoped``: whether it is inside a function. ``getattr(self, computed)`` in a method
    of a class that is not sealed names the line that unseals it (honest review 12,
    finding 2)."""
    def named(name: str) -> bool:       # an attribute name refused wherever it is spelled
        return name in banned or _unreadable(name)

    refused = _spelled(node, reading, parents.get(id(node)), banned) or \
        shell_use(reading, node, parents.get(id(node))) or \
        format_use(node, parents.get(id(node))) or template_use(reading, node) or \
        hook_use(node) or match_use(reading, node, parents, named) or \
        expression_use(reading, node) or getter_use(reading, node, parents.get(id(node)), named)
    if refused:
        return refused
    if isinstance(node, ast.ImportFrom) and node.module == "__future__" and \
            not node.level:
        return None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        paths = {p for _, p in imported_names(node)} | {a.name for a in node.names}
    elif isinstance(node, (ast.Name, ast.Attribute)):
        paths = reading.paths(node)
    else:
        paths = set()
    for path in (p.lstrip("?") for p in paths):
        if any(path == m or path.startswith(f"{m}.") for m in _DYNAMIC_MODULES) or \
                any(map(_unreadable, path.split("."))):
            return path
        reached = reached_module(path)
        if reached:                              # random._os, concurrent.futures.process.mp
            return f"{path} (it reaches {reached}, which is not allowed)"
    builtin = reading.builtin(node) if isinstance(node, ast.Name) else None
    if builtin in DYNAMIC or builtin == "__builtins__":
        return builtin
    call = parents.get(id(node))
    called = isinstance(call, ast.Call) and call.func is node
    if builtin in (*LOOKUPS, "vars", "locals") and not called:
        return f"{builtin} used as a value"
    if not called:
        return None
    if builtin in LOOKUPS:
        attribute = constant_string(call.args[1]) if len(call.args) > 1 else None
        cls = _own_self(call.args[0], parents, reading) \
            if attribute is None and places is not None and call.args else None
        unsealed = unsealing(cls, reading) if cls is not None else None
        if (attribute is None and (cls is None or unsealed is not None)) or \
                attribute in banned or _unreadable(attribute or ""):
            why = f"{builtin} with the name {attribute or 'computed at run time'}"
            if unsealed is None or places is None:
                return why
            return (f"{why} {_UNSEALED} {cls.name}'s methods are called only on an "
                    f"instance: {_where(places.get(id(unsealed), 'your code'), unsealed)}, "
                    f"{ast.unparse(unsealed).splitlines()[0][:50]} reaches one otherwise)")
    elif builtin in ("vars", "locals") and not call.args:
        if not _locals_allowed(call, parents, scoped):
            return f"{builtin}() outside a function"
    elif builtin == "vars" and (reading.paths(call.args[0]) or
                                not isinstance(call.args[0], ast.Name)):
        return "vars of a module, or of an object the reading cannot name"
    return None


def _forbidden(reading: Reading, banned: dict[str, str], tree: ast.AST, *,
               calls: bool = False,
               rebinds: frozenset[str] = frozenset()) -> tuple[str, ast.AST] | None:
    """The forbidden function ``tree`` refers to (its last part) and the node that does,
    or None; with ``calls``
    (an earlier cell's statement, not the answer), a function called where it is named,
    when the statement runs (``print(above_threshold(…))``, an experiment, also in a list,
    set or dict comprehension; not in a function, lambda or generator expression, which
    could run later: :func:`~dpkit.course.reading.walk_running`), does not count: such a use
    binds it nowhere the answer could reach. Nor, with ``calls``, does a statement
    ``from <module> import <name>`` (no other name bound) that re-imports a function of
    ``rebinds``, which the set-up cell already binds to that same name: it binds nothing
    new, and every use of the name is read as a use of the function."""
    called = {id(n.func) for n in walk_running(ast.Module([tree], []))
              if isinstance(n, ast.Call)} \
        if calls else set()
    for node in ast.walk(tree):
        if id(node) in called:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                _library(node.module):
            hit = ["course"] if course_import(node) else [
                a.name for a in node.names if a.name in banned and not (
                    calls and node is tree and a.asname in (None, a.name) and
                    a.name in rebinds and f"{node.module}.{a.name}" == banned[a.name])]
        elif isinstance(node, ast.Import):
            hit = [part for a in node.names if _library(a.name)
                   for part in a.name.split(".") if part in banned]
        elif isinstance(node, ast.Attribute) and node.attr in banned:
            base = reading.paths(node.value)    # nothing known: a library object, unless
            hit = [node.attr] if any(map(_library, base)) or (   # the code defines the name
                not base and node.attr not in reading.defined) else []
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            hit = [p.rsplit(".", 1)[-1].lstrip("?") for p in reading.paths(node)
                   if _library(p) and p.rsplit(".", 1)[-1].lstrip("?") in banned]
        elif isinstance(node, (ast.MatchClass, ast.MatchMapping)):
            # a class pattern's keyword reads the attribute it names, a mapping
            # pattern's key the item (round 7, finding 3): as ``subject.name`` would
            base = reading.matched.get(id(node), set())
            names = [*node.kwd_attrs, *match_names(reading, node)] \
                if isinstance(node, ast.MatchClass) else [
                constant_string(key) for key in node.keys]
            hit = [n for n in names if n in banned and (any(map(_library, base)) or (
                not base and isinstance(node, ast.MatchClass) and n not in reading.defined))]
        else:
            hit = []
        if hit:
            return hit[0], node
    return None


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(drop_magics(source))
    except SyntaxError:
        return None


def forbidden_use(label: str, answer: str, earlier: Iterable[str | tuple[str, str]],
                  setup: str | None = None, graded: str | None = None) -> str | None:
    """Why the student's answer to exercise ``label`` may not be graded, or None.

    ``answer`` is the answer cell's code, ``earlier`` the student's code cells that ran
    before it (their own cells and their earlier answers), each a source or a pair
    ``(source, name in feedback)`` ("the cell you added above Exercise 2.2"), ``setup``
    the assignment's set-up cell (None: unknown, so every global name the student does not
    bind may be a library object). The code the answer may reach is the answer cell and
    **every** statement of ``earlier`` (one can bind a name dynamically: ``globals()[…] =``,
    ``exec``, ``np.f = …``), read with Python's scoping (a default, a decorator, a base
    class and a comprehension's first iterable are evaluated in the enclosing scope; a
    class's names are not seen by the functions in its body). In an earlier cell, a
    forbidden function called where it is named when the statement runs (an experiment)
    does not count, nor does re-importing it by the name the set-up cell already binds it
    to (``from dpkit.laplace import laplace_accuracy`` at a cell's top level). The same
    holds for a top-level statement of the answer cell (a self-check ``assert
    half_width(…) == laplace_accuracy(…)``, honest review 15, F2) when ``graded``, the name
    the tests read, is given and the statement cannot change it: for a function (``graded``
    bound by ``def`` or ``class`` only) every statement that does not bind it, for a value
    (``bits = …``) the statements after the last that binds it; the statements that do
    (the ``def``, its defaults and decorators) are read as the answer's own code.

    That code may not refer to a function of :data:`FORBIDDEN` for ``label``: by a bare name
    the set-up cell binds to it, by an import from dpkit (``from dpkit.svt import
    above_threshold as f``), or as an attribute of something that may hold a dpkit module
    (``dpkit.svt.above_threshold``, ``s.above_threshold`` after ``import dpkit.svt as s`` or
    ``s = dpkit.svt``), following aliases, helpers and arguments, and ``match`` patterns: a
    class pattern's keyword reads the attribute it names (``case object(above_threshold=at)``
    on a dpkit module, or on a value the reading cannot name unless the code defines that
    name), a mapping pattern's string key the item it names, and a capture binds what it
    matches. An attribute of another
    object (``scipy.sparse``) does not count, nor one of an object the reading cannot name
    if the code itself defines that name (``self.above_threshold`` of its own class); a
    builtin's result (``next(iter([dpkit.svt]))``) holds what its arguments hold. Nor may
    it look a name up where static reading cannot follow it: the builtins of
    :data:`DYNAMIC`; a word of ``_DYNAMIC_NAMES`` (``pickle``, ``marshal``, ``inspect``,
    ``importlib``, ``pydoc``, ``gc``, ``modules``, ``allow_pickle`` …) where it may refer
    to the module or function it names: imported (``import math, pickle`` too), as an
    attribute (``sys.modules``), as a keyword argument, or as a bare name the student's
    code does not bind itself (a variable, parameter, function or class of the student's
    named ``modules`` or ``inspect`` is theirs); ``code`` as a module; any
    double-underscore name but the plain ones of ``_PLAIN_DUNDERS`` (operators, reflected
    and in place too, ``__slots__``, ``__module__``, ``__post_init__`` …), ``__setattr__``
    and ``__delattr__`` called with the attribute's name spelled, and ``__wrapped__``,
    ``__annotations__``, ``__defaults__`` and ``__kwdefaults__`` of the student's own
    function (``__dict__``, ``__globals__``, ``__subclasses__``,
    ``__getattribute__`` are refused); ``getattr`` (and ``hasattr``, ``setattr``,
    ``delattr``, ``operator.attrgetter``) with a computed name (but on ``self`` in a
    method of the student's own class whose methods are only called on an instance:
    :func:`_own_self`) or a forbidden one, ``vars``
    of a module or of anything but a plain name, and ``locals()`` (or ``vars()``) at a
    cell's top level except to fill a format string. ``from __future__ import`` is
    allowed. The course kit, ``dpkit.course``, is refused like a forbidden function (no
    exercise needs it). A cell that does not parse is skipped (the sandbox reports its
    error). A cell's Python is :func:`~dpkit.course.magics.drop_magics`'s, as the sandbox
    runs it, and a Python file a cell writes with ``%%writefile`` (importable in the
    sandbox) is read as that cell's code, its ``from … import`` never exempt: the text the
    file holds once the cell has run (``-a`` appends), the answer refused if it does not
    parse. Last, that code may import only the modules of
    :data:`~dpkit.course.allowed.ALLOWED_MODULES` and ``%%writefile`` files (nor reach
    another module as an attribute: ``random._os``), as :func:`environment_use`'s may
    (:func:`~dpkit.course.allowed.unallowed_import`, adversarial review 14). Nor may it
    reach the IPython shell (``get_ipython``, ``exit`` other than called, the history
    names), a format field's lookups, pandas' Jinja templates, or a private name of dpkit
    or of an allowed module (:mod:`dpkit.course.escapes`, adversarial review 15), nor
    look an attribute up by a name computed at run time through a ``match`` class pattern,
    a data frame's ``eval`` or ``query``, or a getter of :mod:`operator` used as a value
    (:mod:`dpkit.course.lookups`, adversarial review 16); for an
    exercise of :data:`FORBIDDEN_PACKAGES`, anything of those packages.

    Returns
    -------
    str or None
        The feedback: the exercise's demand, what was refused, and where (the cell's name
        and line), or None if the answer may be graded.

    >>> forbidden_use("ex-svt-above-threshold", "my = f", ["import dpkit.svt as s",
    ...                                                    "f = s.above_threshold"])[:40]
    'this exercise asks you to write AboveThr'
    >>> forbidden_use("ex-svt-above-threshold", "def my(q): return q", []) is None
    True
    >>> print(forbidden_use("ex-svt-above-threshold", "def my(q): return math.pi",
    ...                     [("import math, pickle", "the cell you added above 7.2")]))
    ... # doctest: +NORMALIZE_WHITESPACE
    this exercise asks you to write AboveThreshold yourself; in the cell you added above
    7.2, line 1, pickle may not be imported in the code an answer here uses, even unused
    (it finds or rebuilds objects by names given as data): remove the import (and import
    each module you use by its own name), so the answer was not graded
    """
    if label not in FORBIDDEN:
        return None
    names, why = FORBIDDEN[label]
    banned: dict[str, str] = {}
    for name in [*names, "dpkit.course"]:       # the first of each last part names it
        banned.setdefault(name.rsplit(".", 1)[1], name)
    cells = [(cell, "an earlier cell of yours") if isinstance(cell, str) else cell
             for cell in earlier]
    root = _parsed(answer)
    if root is None:
        return None
    read, broken = read_cells([*cells, (answer, "its answer")])
    read = [r for r in read if r[1] != "its answer" or r[2]]
    if broken:
        return import_feedback(f"this exercise {why}; ", broken)
    statements = [(s, place) for tree, place, _ in read for s in tree.body]
    # a file's ``from dpkit.… import <name>`` is reached as ``helper.<name>``: never exempt
    written = {id(s) for tree, _, module in read if module for s in tree.body}
    bound = set().union(*(statement_bindings(statement) for statement in
                          [*(s for s, _ in statements), *root.body]))
    trees: list[tuple[ast.AST, str]] = [(root, "its answer"), *statements]
    own = answer_statements(root, graded)
    known = Reading([_parsed(setup) or ast.Module([], [])], lambda _name: set()) \
        if setup is not None else None

    def outside(name: str) -> set[str]:          # a global the student's code never binds
        if name in bound or name in dir(builtins):
            return set()
        return set(known.names.get(name, ())) if known else {f"?{name}"}

    # A forbidden function the set-up cell binds by its own name (re-importing it binds
    # nothing new: honest round 7, F3).
    rebinds = frozenset(name for name, full in banned.items()
                        if known and known.names.get(name) == {full})
    reading = Reading([t for t, _ in trees], outside)
    for tree, place in [*((s, "its answer") for s in root.body), *statements]:
        found = _forbidden(reading, banned, tree, calls=id(tree) not in own,
                           rebinds=frozenset() if id(tree) in written else rebinds)
        if found:
            ran = place == "its answer" and graded and any(   # a call, at the top level
                isinstance(n, ast.Call) and n.func is found[1]
                for n in walk_running(ast.Module([tree], [])))
            return (f"this exercise {why}; {banned[found[0]]} is forbidden in its answer "
                    f"and in the code the answer uses, and it is used "
                    f"{_where(place, found[1])}, so the answer was not graded" + (
                        f" (a comparison with it belongs below the line that sets "
                        f"{graded}, or in a cell of your own below the answer)"
                        if ran else ""))
    for tree, place in [*((s, "its answer") for s in root.body), *statements]:
        found = library_use(reading, tree, FORBIDDEN_PACKAGES.get(label, ()),
                            id(tree) not in own and id(tree) not in written, known)
        if found:
            return (f"this exercise {why}; {found[0]} is forbidden in its answer and in the "
                    f"code the answer uses, and it is used {_where(place, found[1])}, so the "
                    "answer was not graded")
    places = {id(node): place for tree, place in trees for node in ast.walk(tree)}
    for tree, place in trees:
        found = _dynamic(reading, banned, tree, places)
        if found:
            return f"this exercise {why}; {_where(place, found[1])}, " + \
                _dynamic_feedback(found, "")
    unread = unallowed_import([(root, "its answer", False), *read])
    return import_feedback(f"this exercise {why}; ", unread) if unread else None


def _where(place: str, node: ast.AST) -> str:
    """"in <the cell's name>, line N"."""
    line = getattr(node, "lineno", None)
    return f"in {place}" + (f", line {line}" if line else "")


def _dynamic_feedback(found: tuple[str, ast.AST], could: str) -> str:
    """The feedback's end for the dynamic lookup ``found``: an import of a module that
    finds objects by names given as data is said to be refused as an import (honest review
    16, M4); anything else looks names up dynamically (``could``: what it could reach)."""
    what, node = found
    if isinstance(node, (ast.Import, ast.ImportFrom)) and \
            not what.rsplit(".", 1)[-1].startswith("singledispatch"):
        return (f"{what} may not be imported in the code an answer here uses, even unused "
                f"(it finds or rebuilds objects by names given as data{'; ' * bool(could)}"
                f"{could}): remove the import (and import each module you use by its own "
                "name), so the answer was not graded")
    return (f"{what} looks names up dynamically{f' ({could})' if could else ''}, which is "
            f"not allowed in the code an answer here uses: {_advice(found)}, so the answer "
            "was not graded")


def _advice(found: tuple[str, ast.AST]) -> str:
    """What to do instead of the dynamic lookup ``found``."""
    what, node = found
    if what.rsplit(".", 1)[-1].startswith("singledispatch"):
        return ("remove it (its register evaluates annotations written as strings, which "
                "could name anything): branch on isinstance(…) instead")
    if "(it reaches" in what or what.rsplit(".", 1)[-1] in _SHELL_METHODS:
        return ("remove it (the code an answer here uses may not reach it: it rebuilds "
                "objects from bytes, imports what data names, or runs code through the "
                "IPython shell; magics are not run where your notebook is graded)")
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "remove it (and import each module you use by its own name)"
    if isinstance(node, ast.Name) and what == node.id and what in _DYNAMIC_NAMES:
        return (f"if {what} is a name of your own, bind it in your code (or rename it); "
                "otherwise remove it")
    if "format" in what:
        return ("write the value with an f-string, or call .format on a format string "
                "written out whose fields name no attribute or item ({0}, {:.3f})")
    if "IPython" in what:
        return "remove it (the code an answer here uses may not reach the IPython shell)"
    if what.startswith(("a class pattern", "__match_args__", "a metaclass", "type(name")):
        return ("match with keyword patterns (case Point(x=x, y=y)) or a class of your own "
                "class statement, and make no class at run time")
    if what.startswith("operator."):
        return ("call operator.attrgetter or methodcaller where you name them, with the "
                "names written out (operator.attrgetter(\"score\")), or use a lambda")
    if _UNSEALED in what:
        return ("call the class's methods only on an instance (self.m(…), obj.m(…) with "
                "obj = YourClass(…)), or use a dict of functions instead of getattr: "
                "NOISES = {\"laplace\": laplace_noise}, then NOISES[kind](…)")
    last = what.rsplit(".", 1)[-1].split()[0]
    if _dunder(last) and last not in _NAMED_DUNDERS:
        return (f"remove {last} (of the double-underscore names only the plain ones, such "
                "as __init__ or __name__, are allowed)")
    return ("say the name in the code instead (getattr with a computed name, eval, exec, "
            "pickle, inspect, __dict__-like attributes and import tricks are refused)")
