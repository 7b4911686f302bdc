"""IPython's syntax in a notebook's cells, turned into the Python the grader runs and reads.

A cell may hold magics (``%time``, ``%%writefile``), shell escapes (``!ls``) and help lines
(``my_laplace?``) that Jupyter accepts and plain Python does not. :func:`drop_magics` keeps a
cell's Python, line for line, and recognises that syntax where IPython does (at the start of a
logical line, never inside brackets or after a backslash: honest review 13). A magic is never
run: it could hide code from the static reading of answers (:mod:`dpkit.course.exercises`).
The sandboxed worker (:mod:`dpkit.course.worker`) and the static reading use this module
alike, so both see the same Python.
"""

from __future__ import annotations

import ast
import importlib
import os
import re

from IPython.core import inputtransformer2

#: The line magics whose statement runs, once, as plain Python: the rest of the line
#: after the options (``%time x = f()``, ``%timeit -n 10 -o f()``).
_TIMED = frozenset({"time", "timeit"})
#: The cell magics whose body is Python that runs, once, as plain Python (``%%timeit``'s
#: line, after the options, is its set-up statement, run first; ``%%capture``'s is the
#: name it binds, here to None).
_PYTHON_BODY = frozenset({"time", "timeit", "capture"})
_TIMEIT_OPTION = re.compile(r"\s*-(?:[tcqo]+|[nrp]\s*\d+)(?=\s|$)")
#: IPython's finders of its one-line syntax, in its order (``x = %magic``, ``x = !cmd``,
#: ``%magic``/``!cmd``/``?name``, ``name?``): each recognises it at the start of a
#: logical line only, never inside brackets or after a backslash.
_FINDERS = (inputtransformer2.MagicAssign, inputtransformer2.SystemAssign,
            inputtransformer2.EscapedCommand, inputtransformer2.HelpEnd)
_CLEANUPS = (inputtransformer2.leading_indent, inputtransformer2.classic_prompt,
             inputtransformer2.ipython_prompt)


def drop_magics(source: str) -> str:
    """A cell's Python, as the grading worker runs it and the static reading reads it: the
    cell with IPython's syntax decided, magic by magic. Magics are never run (``%run``,
    ``!cmd`` or ``%%bash`` could hide code from the reading); what a notebook's magic
    would run as Python runs here as plain Python, once.

    IPython's own transformer (:mod:`IPython.core.inputtransformer2`) finds the magics,
    shell escapes and help lines, so they are recognised where a kernel recognises them:
    at the start of a logical line, indented too, never in a continuation line (``% x``
    or ``!= y`` inside brackets, black's style). Then:

    * ``%time stmt`` and ``%timeit [options] stmt`` become ``stmt``, run once and not
      timed; ``x = %time expr`` binds ``expr``'s value, as IPython does, and ``t =
      %timeit -o …`` runs the statement once and binds an object with the attributes of
      IPython's ``TimeitResult`` (``t.average``, ``t.best`` … of that one run);
    * every other line magic (``%matplotlib inline``, ``%run x.py``), shell escape
      (``!ls``) and help line (``f?``, ``?f``, ``np.*lap*?``) becomes ``pass`` (with its
      indentation, so an indented block stays valid); ``x = %magic`` binds None and
      ``x = !cmd`` an empty list;
    * a cell magic on the cell's first line: ``%%time``, ``%%timeit`` and ``%%capture``
      keep their body (``%%timeit``'s set-up statement on the first line runs first,
      ``%%capture``'s name is bound to an object with the attributes of IPython's
      ``CapturedIO``, empty: the body's output is not captured); ``%%writefile`` and
      every other cell magic (``%%bash``, ``%%html``, ``%%script`` …) leave no Python:
      the worker writes
      ``%%writefile``'s file itself (:func:`written_file`);
    * IPython's autocall escapes (``/f x``, ``,f a b``) become the call IPython makes.

    Each replacement keeps its lines (empty lines where it is shorter), so line numbers
    stay the cell's. Top-level ``await`` is left as it is: the worker runs it as a kernel
    does (:func:`dpkit.course.kernel.run_cell`).

    Parameters
    ----------
    source : str
        The cell, as the notebook holds it.

    Returns
    -------
    str
        Its Python, one line for each of the cell's (no final newline).

    Raises
    ------
    Nothing: a cell IPython cannot tokenize stays as it is, and fails to compile in the
    worker, which names its line.

    Privacy guarantee: none by itself; the worker and the static reading see the same
    Python (reference: honest review 13, F1, F2, F6; IPython's ``inputtransformer2``).

    >>> drop_magics("print('%.2f'\\n      % 0.5)\\n%time x = 1\\n!rm -rf ~")
    "print('%.2f'\\n      % 0.5)\\nx = 1\\npass"
    """
    lead, rest = _cleaned(source)
    magic = _cell_magic(rest)
    if magic is not None:
        name, line, body = magic
        first = _first_line(name, line)
        rest = [first + "\n", *(drop_magics("".join(body)).split("\n")
                                if name in _PYTHON_BODY else [""] * len(body))]
    else:
        try:
            rest = _line_magics(rest)
        except SyntaxError:              # not Python: compiling the cell says where
            pass
    return "\n".join([""] * lead + [line.rstrip("\n") for line in rest])


def _cleaned(source: str) -> tuple[int, list[str]]:
    """The number of empty lines that begin ``source``, and its other lines (each ending in
    a newline) cleaned as IPython cleans a cell: a common indentation and ``>>>`` or
    ``In [1]:`` prompts removed."""
    lines = source.splitlines()
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    rest = [line + "\n" for line in lines[lead:]]
    for cleanup in _CLEANUPS:
        rest = cleanup(rest)
    return lead, rest


def _cell_magic(lines: list[str]) -> tuple[str, str, list[str]] | None:
    """``(name, the rest of its line, its body's lines)`` of the cell magic that begins the
    (cleaned) cell ``lines``, as IPython reads it, or None."""
    if not lines or not lines[0].startswith("%%") or re.match(r"%%\w+\?", lines[0]):
        return None
    name, _, line = lines[0][2:].rstrip().partition(" ")
    return name, line, lines[1:]


def _first_line(name: str, line: str) -> str:
    """What runs of a cell magic's first line: ``%%timeit``'s set-up statement, the name
    ``%%capture`` binds (to an empty stand-in of ``CapturedIO``), or nothing."""
    if name == "timeit":
        return _timeit_statement(line)
    words = [w for w in line.split() if not w.startswith("-")]
    if name == "capture" and words and words[0].isidentifier():
        return f"{words[0]} = {_CAPTURED}"
    return ""


def _timeit_statement(line: str) -> str:
    """``%timeit``'s statement: its line without the options (``-n 10 -r 3 -o``)."""
    while (match := _TIMEIT_OPTION.match(line)) is not None:
        line = line[match.end():]
    return line.strip()


def _line_magics(lines: list[str]) -> list[str]:
    """``lines`` with each magic, shell escape or help line IPython finds replaced
    (:func:`drop_magics`), one at a time, as IPython transforms them."""
    for _ in range(inputtransformer2.TRANSFORM_LOOP_LIMIT):
        tokens = inputtransformer2.make_tokens_by_line(lines)
        found = sorted((f for f in (c.find(tokens) for c in _FINDERS) if f is not None),
                       key=inputtransformer2.TokenTransformBase.sortby)
        for finder in found:
            try:
                changed = finder.transform(lines)
            except SyntaxError:
                continue
            at, column = finder.start_line, finder.start_col
            new = _replacement(changed[at][:column], changed[at][column:].rstrip("\n"))
            lines = [*changed[:at], new + "\n",
                     *["\n"] * (len(lines) - len(changed)), *changed[at + 1:]]
            break
        else:
            return lines
    return lines


def _replacement(before: str, call: str) -> str:
    """The Python for IPython's call ``call`` (``get_ipython().run_line_magic('time',
    'f()')``), which follows ``before`` (an indentation, or ``x = ``) on its line."""
    target = before.strip()
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        node = None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            ast.unparse(node.func.value) == "get_ipython()"):
        return before + call                 # an autocall: the call IPython makes
    args = [a.value for a in node.args if isinstance(a, ast.Constant)]
    name = args[0] if node.func.attr == "run_line_magic" and args else None
    if name in _TIMED and len(args) == 2:
        statement = args[1].strip() if name == "time" else _timeit_statement(args[1])
        if not statement:
            return before + ("None" if target else "pass")
        if not target:
            return before + statement
        if name == "time" and _expression(statement):
            return before + f"({statement})"
        indent = before[:len(before) - len(before.lstrip())]
        if name == "timeit":
            return f"{indent}{_timed(statement, target)}"
        return f"{indent}{statement}; {target} None"
    if not target:
        return before + "pass"
    return before + ("[]" if node.func.attr == "getoutput" else "None")


#: What ``t = %timeit -o stmt`` binds: an object with the attributes of IPython's
#: ``TimeitResult``, from the one run of the statement (honest review 15, F1: a correct
#: answer that printed ``t.average`` failed when None was bound).
_TIMEIT_RESULT = ('type("TimeitResult", (), {{"loops": 1, "repeat": 1, "best": {run}, '
                  '"worst": {run}, "average": {run}, "stdev": 0.0, "all_runs": [{run}], '
                  '"timings": [{run}], "compile_time": 0.0}})()')
#: What ``%%capture out`` binds: an object with the attributes of IPython's ``CapturedIO``
#: (the body's output is not captured: it runs as plain Python); no ``__call__``, which
#: the reading refuses in a class made at run time (honest and adversarial reviews 16).
_CAPTURED = ('type("CapturedIO", (), {"stdout": "", "stderr": "", "outputs": [], '
             '"show": lambda self: None})()')


def _timed(statement: str, target: str) -> str:
    """One line that runs ``statement`` once, timed, and binds ``target`` (``t =``) to a
    stand-in for IPython's ``TimeitResult``, using only names the reading allows."""
    run = "_dpkit_run"
    return (f"import time as _dpkit_clock; _dpkit_start = _dpkit_clock.perf_counter(); "
            f"{statement}; {run} = _dpkit_clock.perf_counter() - _dpkit_start; "
            f"{target} {_TIMEIT_RESULT.format(run=run)}")


def _expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def written_file(source: str) -> tuple[str, bool, str] | None:
    """What a ``%%writefile [-a] name`` cell writes: ``(name, whether it appends, the
    body)``, or None for any other cell. The worker writes it in its working folder, as
    IPython does; :func:`drop_magics` gives such a cell no Python, and the static reading
    reads a ``.py`` file's body as the student's code
    (:func:`dpkit.course.exercises.forbidden_use`).

    Parameters
    ----------
    source : str
        The cell, as the notebook holds it.

    Returns
    -------
    tuple or None
        ``(name, append, body)``: the file's name (``~`` expanded, quotes removed), True for
        ``-a``/``--append``, and the text written (the cell after its first line).

    Raises
    ------
    Nothing.

    Privacy guarantee: none by itself (reference: honest review 13, F6).

    >>> written_file("%%writefile -a helper.py\\nX = 1\\n")
    ('helper.py', True, 'X = 1\\n')
    """
    magic = _cell_magic(_cleaned(source)[1])
    if magic is None or magic[0] != "writefile":
        return None
    words = magic[1].split()
    append = bool({"-a", "--append"} & set(words))
    name = " ".join(w for w in words if w not in ("-a", "--append"))
    if len(name) > 1 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1]
    return os.path.expanduser(name), append, "".join(magic[2])


def write_file(source: str) -> None:
    """Write the file of a ``%%writefile [-a] name`` cell (:func:`written_file`) in the
    working folder, as IPython does, so that a module written so can be imported."""
    written = written_file(source)
    if written is not None:
        name, append, body = written
        with open(name, "a" if append else "w", encoding="utf-8") as file:
            file.write(body)
        importlib.invalidate_caches()


