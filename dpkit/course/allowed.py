"""The modules that the code an answer to a FORBIDDEN or JUDGED exercise reaches may use.

The static reading (:mod:`dpkit.course.exercises`) follows names, not strings: a module
that runs code given as data (``timeit.timeit("…")``, ``cProfile.run``, ``yaml.unsafe_load``,
``string.Formatter().get_field``, an entry point's ``load()``) or starts a process running
it (``subprocess``, ``os.system``) hides that code from it (adversarial review 14, F2). So
instead of a list of refused modules, which every round extended, the code an answer to
those exercises reaches may import only the modules of :data:`ALLOWED_MODULES`, each
chosen by the question "can it run code given as data, or start a process?", and the
Python files the student's ``%%writefile`` cells write (:func:`read_cells`), which are read
as the student's code and are the only files the grading worker imports from its working
folder (:mod:`dpkit.course.worker`). An attribute of an allowed module that is another
module (``random._os``, ``typing.sys``, ``concurrent.futures.process.mp``) is judged as
that module (:func:`reached_module`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import types
import warnings
from collections.abc import Iterable

from dpkit.course.magics import drop_magics, written_file

__all__ = [
    "ALLOWED_MODULES",
    "allowed_module",
    "defined_in",
    "import_feedback",
    "names_object",
    "reached_module",
    "read_cells",
    "unallowed_import",
    "written_texts",
]

#: The modules (with their submodules) the code an answer to a FORBIDDEN or JUDGED exercise
#: reaches may import: the standard library's computation modules, the numerical packages
#: and dpkit (never ``dpkit.course``). Left out, among others: ``os``,
#: ``pathlib``, ``shutil``, ``subprocess``, ``asyncio`` and ``multiprocessing`` (they start
#: processes or reach the environment); ``string`` (``Formatter.get_field``), ``timeit``,
#: ``cProfile``, ``profile``, ``trace``, ``runpy``, ``code``, ``pdb`` (they run code given
#: as a string); ``importlib``, ``pkgutil``, ``pkg_resources``, ``importlib_metadata``,
#: ``yaml``, ``pickle``, ``marshal``, ``logging`` (``logging.config`` builds objects named
#: in data), ``inspect``, ``gc``, ``ctypes``; ``tqdm`` (no exercise needs it).
ALLOWED_MODULES = frozenset({
    "__future__", "abc", "array", "bisect", "cmath", "collections", "concurrent.futures",
    "contextlib", "copy", "dataclasses", "datetime", "decimal", "enum", "fractions",
    "functools", "hashlib", "heapq", "itertools", "json", "math", "numbers", "operator",
    "pprint", "queue", "random", "re", "secrets", "statistics", "struct", "sys", "textwrap",
    "threading", "time", "typing", "warnings",
    "numpy", "scipy", "pandas", "matplotlib", "mpmath", "gmpy2", "IPython.display", "dpkit"})
#: Parts of allowed packages that run code given as data or build and load native code:
#: ``pandas.eval`` (and ``DataFrame.query``'s engine), ``mpmath.identify`` (``eval`` of
#: its constants), ``numpy.f2py`` and ``numpy.testing``'s extension builder, the test kits;
#: that rebuild objects from bytes, which a pickle names by module and name (adversarial
#: review 15, C1: ``np.load(f, None, True)`` returned ``dpkit.svt.above_threshold``):
#: NumPy's ``.npy`` reader and loaders, pandas' pickle readers; that import a module
#: named in data and hand it back (``matplotlib.backends``' backend registry); and that
#: render Jinja templates, whose fields run lookups as code (pandas' Styler).
_EXCLUDED = ("dpkit.course", "numpy.f2py", "numpy.testing", "numpy.distutils",
             "numpy.ctypeslib", "numpy.lib.format", "numpy.lib.npyio",
             "pandas.core.computation", "pandas.testing", "pandas.util", "pandas.io.pickle",
             "pandas.compat.pickle_compat", "pandas.io.formats.style",
             "pandas.io.formats.style_render", "mpmath.identification", "matplotlib.testing",
             "matplotlib.backends")
#: Functions of allowed packages that evaluate a string as code or rebuild objects from
#: bytes, by a public path (their ``__module__`` may be the package's own): ``np.load``
#: whatever its arguments (``allow_pickle`` may be positional; no exercise loads files).
_EXCLUDED_FUNCTIONS = ("pandas.eval", "pandas.DataFrame.eval", "pandas.DataFrame.query",
                       "mpmath.identify", "mpmath.findpoly", "numpy.load",
                       "pandas.read_pickle")


def allowed_module(name: str) -> bool:
    """Whether the code an answer to a FORBIDDEN or JUDGED exercise reaches may use the
    module ``name`` (a dotted name): one of :data:`ALLOWED_MODULES` or a submodule of one,
    not an excluded part (``dpkit.course``, ``numpy.f2py``, ``numpy.lib.format``,
    ``pandas.core.computation`` …) nor a private submodule (``scipy._lib``, and dpkit's
    too, ``dpkit._samplers``: adversarial review 15, C3).

    Parameters
    ----------
    name : str
        The module's dotted name.

    Returns
    -------
    bool
        Whether it is allowed.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14, F2).

    >>> allowed_module("scipy.stats"), allowed_module("timeit"), allowed_module("dpkit.course")
    (True, False, False)
    >>> allowed_module("numpy.lib.format"), allowed_module("dpkit._samplers.grid")
    (False, False)
    """
    def under(prefix: str) -> bool:
        return name == prefix or name.startswith(f"{prefix}.")
    if not any(map(under, ALLOWED_MODULES)) or any(map(under, _EXCLUDED)):
        return False
    return not any(part.startswith("_") and not part.startswith("__")
                   for part in name.split("."))


def reached_module(path: str) -> str | None:
    """The module that is not allowed (:func:`allowed_module`) which the dotted ``path``
    (an allowed module, then attributes: ``random._os.system``, ``numpy.f2py.compile``)
    reaches, or None: its attributes are looked up, one by one, in the grader's process
    (never called), and a module among them that is not allowed, or a function defined
    in an excluded part (``pandas.eval``, ``mpmath.identify``), is named. A path that does
    not begin with an allowed module, or that cannot be followed, reaches nothing.

    Parameters
    ----------
    path : str
        A dotted path, as :class:`~dpkit.course.reading.Reading` gives it.

    Returns
    -------
    str or None
        The module's name, or None.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14, F2).

    >>> reached_module("random._os.system"), reached_module("math.pi")
    ('os', None)
    """
    parts = path.split(".")
    if parts[0] == "dpkit" or parts[0] not in {m.split(".")[0] for m in ALLOWED_MODULES}:
        return None
    value = _looked_up(parts[:1])
    for index in range(1, len(parts)):
        value = _looked_up(parts[:index + 1], value)
        if value is None:                        # an attribute the reading cannot follow
            return None
        for name in _EXCLUDED_FUNCTIONS:
            if value is _looked_up(name.split(".")):
                return name
        if isinstance(value, types.ModuleType) and not allowed_module(value.__name__):
            return value.__name__
        defined = _module_of(value)
        if defined is not None and any(
                defined == m or defined.startswith(f"{m}.") for m in _EXCLUDED):
            return defined
    return None


def defined_in(path: str) -> str | None:
    """The module that defines what the dotted ``path`` names in the grader's process
    (``dpkit.naive.above_threshold`` is defined in ``dpkit.naive.svt``): a module's own
    name, a function's or class's ``__module__``; None for a path that cannot be followed
    or names a plain value. Attributes are looked up, never called. Parameters, return
    value and errors as in :func:`reached_module`.

    Privacy guarantee: none by itself (reference: adversarial review 15, C3).

    >>> defined_in("dpkit.naive.above_threshold"), defined_in("math.pi")
    ('dpkit.naive.svt', None)
    """
    value = _looked_up(path.split("."))
    if isinstance(value, types.ModuleType):
        return value.__name__
    return _module_of(value)


def _module_of(value: object) -> str | None:
    """The ``__module__`` of a callable ``value`` (a function, a class), or None."""
    defined = getattr(value, "__module__", None) if callable(value) else None
    return defined if isinstance(defined, str) else None


def names_object(path: str) -> bool:
    """Whether the dotted ``path`` names an object in the grader's process: the longest
    module its first parts name is imported there (a private one too: ``dpkit._warming``)
    and the rest read as attributes, never called. Conservative: a module that exists but
    fails to import counts as something there.

    Parameters
    ----------
    path : str
        A dotted path, as :class:`~dpkit.course.reading.Reading` gives it.

    Returns
    -------
    bool
        Whether something is there (a module, a function, a value).

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: honest review 16, C1).

    >>> names_object("dpkit._samplers"), names_object("dpkit._gen")
    (True, False)
    """
    parts = path.split(".")
    for at in range(len(parts), 0, -1):
        name = ".".join(parts[:at])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if importlib.util.find_spec(name) is None:
                    continue
                value: object = importlib.import_module(name)
            except ModuleNotFoundError:
                continue
            except Exception:
                return True
            try:
                for part in parts[at:]:
                    value = getattr(value, part)
            except AttributeError:
                return False
            except Exception:
                return True
            return True
    return False


def _looked_up(parts: list[str], parent: object = None) -> object:
    """The object the dotted path ``parts`` names in the grader's process (its last part
    an attribute of ``parent`` if given, else of the object the rest names; a module of
    :data:`ALLOWED_MODULES` imported if it must be), or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if parent is None and len(parts) > 1:
                parent = _looked_up(parts[:-1])
            if parent is not None and hasattr(parent, parts[-1]):
                return getattr(parent, parts[-1])
            name = ".".join(parts)
            allowed = allowed_module(name) or any(m.startswith(f"{name}.")
                                                  for m in ALLOWED_MODULES)
            return importlib.import_module(name) if allowed else None
        except Exception:
            return None


def written_texts(cells: Iterable[str]) -> dict[str, str]:
    """The text each file that the ``%%writefile`` cells among ``cells`` write holds once
    they have run, by its name: ``-a`` appends to the text, a plain write replaces it.

    Parameters
    ----------
    cells : iterable of str
        The cells, in the order they run.

    Returns
    -------
    dict
        File name (as the cell spells it, ``~`` expanded) to text.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14, F1).

    >>> written_texts(["%%writefile h.py\\nX = (\\n", "%%writefile -a h.py\\n1)\\n"])
    {'h.py': 'X = (\\n1)\\n'}
    """
    texts: dict[str, str] = {}
    for source in cells:
        written = written_file(source)
        if written is not None:
            name, append, body = written
            texts[name] = (texts.get(name, "") if append else "") + body
    return texts


def read_cells(cells: Iterable[tuple[str, str]]
               ) -> tuple[list[tuple[ast.Module, str, bool]], tuple[str, str] | None]:
    """The code the static reading reads: each cell's Python
    (:func:`~dpkit.course.magics.drop_magics`), parsed, with its name in feedback and
    False (a cell that does not parse is skipped: the worker reports its error); after a
    cell that writes a Python file with ``%%writefile`` (the worker writes it, and an
    ``import`` runs it: honest review 13, F6), the text the file then holds (``-a``
    appends: :func:`written_texts`) with True, read as the student's code in that cell.
    The lines of a file the cell writes whole (or appends to an empty one) are numbered as
    the cell's, those of a file it appends to as the file's.

    Parameters
    ----------
    cells : iterable of (str, str)
        Each cell's source and its name in feedback, in the order they run.

    Returns
    -------
    tuple
        The list of ``(tree, place, whether a file)``, and ``(file name, place)`` of a
        Python file whose final text does not parse (None if all do): its pieces, each
        unreadable alone, could make a module that runs unread code (adversarial review
        14, F1), so the caller refuses the answer.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14, F1).
    """
    read: list[tuple[ast.Module, str, bool]] = []
    texts: dict[str, str] = {}
    broken: dict[str, str] = {}
    for source, place in cells:
        try:
            read.append((ast.parse(drop_magics(source)), place, False))
        except SyntaxError:
            pass
        written = written_file(source)
        if written is None or not written[0].endswith(".py"):
            continue
        name, append, body = written
        before = texts.get(name, "") if append else ""
        texts[name] = text = before + body
        broken.pop(name, None)
        try:
            module = ast.parse(text)
        except SyntaxError:
            broken[name] = place
            continue
        if before:
            where = f"{place} (the file {name} as it stands after this cell)"
        else:
            ast.increment_lineno(module, len(source.splitlines()) - len(body.splitlines()))
            where = f"{place} (the file {name} it writes)"
        read.append((module, where, True))
    return read, next(iter(broken.items()), None)


def unallowed_import(read: list[tuple[ast.Module, str, bool]]
                     ) -> tuple[str, ast.AST, str] | None:
    """An import that the code ``read`` (:func:`read_cells`) may not make:
    ``(module, node, place)``, or None. Allowed: the modules of :func:`allowed_module`,
    and a Python file one of the cells writes with ``%%writefile`` (read as the student's
    code), unless its name is that of an installed module, which the worker would not
    import (:mod:`dpkit.course.worker`). A relative import has nothing to be relative to
    in a notebook.

    Parameters
    ----------
    read : list
        What :func:`read_cells` returns first.

    Returns
    -------
    tuple or None
        The module's name, the import and the cell's name in feedback, or None.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14, F1 and F2).
    """
    # a module of the working folder: ``helper.py`` or ``./helper.py`` (honest review 14),
    # not a file in another folder, nor a package's (the worker imports neither)
    written = {os.path.normpath(place.rsplit("(the file ", 1)[1].rsplit(".py", 1)[0])
               for _, place, module in read if module}
    for tree, place, _ in read:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                return "." * node.level + (node.module or ""), node, place
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                top = name.split(".", 1)[0]
                own = top in written and name == top and importlib.util.find_spec(top) \
                    is None
                if not own and not allowed_module(name):
                    return name, node, place
    return None


def import_feedback(demand: str, found: tuple[str, ast.AST, str] | str) -> str:
    """The feedback on a module the answer's code may not import (:func:`unallowed_import`),
    a module an attribute reaches (its name) or, with ``found`` a file's name and place
    from :func:`read_cells`, a ``%%writefile`` file that does not parse.

    Parameters
    ----------
    demand : str
        What the exercise asks, the feedback's beginning.
    found : tuple or str
        What :func:`unallowed_import` found; a ``(file, place)`` pair; or a module's name.

    Returns
    -------
    str
        The feedback.

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: adversarial review 14).
    """
    allowed = ", ".join(sorted(ALLOWED_MODULES))          # __future__ too (honest review 16)
    rule = (f"the code an answer here uses may import only {allowed} (not dpkit.course) and "
            "the Python files your %%writefile cells write")
    if isinstance(found, tuple) and len(found) == 2:
        name, place = found
        return (f"{demand}in {place}, the file {name} that your %%writefile cells write "
                "is not valid Python once they have all run, so the answer was not graded")
    if isinstance(found, str):
        return (f"{demand}{found} is reached through an attribute of a module, and {rule}, "
                "so the answer was not graded")
    name, node, place = found
    line = getattr(node, "lineno", None)
    where = f"{demand}in {place}" + (f", line {line}" if line else "")
    if not name.startswith(".") and importlib.util.find_spec(name.split(".", 1)[0]) is None:
        return (f"{where}, {name} is neither installed nor a file the grader reads, so the "
                "answer was not graded: put that code in a cell, or in one file in the "
                "notebook's folder written by %%writefile and imported by its name "
                "(%%writefile helper.py, then import helper); a package, or a file in a "
                "subfolder, is not read")
    return (f"{where}, {name} may not be imported: {rule} (a file written any other way, "
            "or named as an installed module, is not imported when grading), so the answer "
            "was not graded")
