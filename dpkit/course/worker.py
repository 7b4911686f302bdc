"""The process that runs a student's code, inside the sandbox (``python -m dpkit.course.worker``).

It is started by :class:`dpkit.course.sandbox.Sandbox` with two inherited file descriptors
(requests in, replies out) and does only what the grader asks, one request at a time:

``run``
    Execute the notebook's cells in the namespace of a real IPython shell named as
    ipykernel's (:mod:`dpkit.course.kernel`: ``In``, ``Out``, ``_``, ``exit``, ``open``,
    ``get_ipython()``, ``sys.ps1``, IPython's ``sys.excepthook``, inside a running asyncio
    event loop, top-level ``await`` allowed; IPython magics are never run, but ``%time``'s
    statement runs once and ``%%writefile`` writes its file: :func:`drop_magics`; no event
    hook runs, ``display(...)`` publishes nothing); ``sys.argv``
    and ``sys.orig_argv`` are an IPython kernel's, ``ipykernel`` is in ``sys.modules``,
    ``HOME`` and ``MPLBACKEND`` are a notebook's, and ``sys.flags``, ``''`` in
    ``sys.path``, the threads' names and the display hook's class read as a kernel's
    (:func:`_kernel_process`): the cheap signals of where code runs read "notebook",
    though the environment check refuses reading some of them; ``dpkit.check`` is a
    stand-in whose checks run nothing: :func:`stand_in_checks`); reply with
    each cell's error, if any, and where it was raised: the cell's name, which the grader
    sends with it ("your answer to Exercise 3.2"), and the line.
``get``
    Reply with the value of a name the cells defined.
``call``
    Call a function the cells defined with the arguments given and reply with its result
    or its error (in the shell's namespace and event loop, as a cell would call it). An
    argument the grader passed by reference (a query, a random source, a
    stream) is a :class:`Remote` here: calling it, or one of its public methods, asks the
    grader, which runs the real object and replies. The call runs inside
    :func:`dpkit.timing.unpadded`: its result is judged, never published, so the releases
    it makes need not wait for their deadlines.

Nothing here decides a grade: the grader judges the plain values that come back, with its
own pristine copies of the checkers. The student's code can read and write this process's
memory and file descriptors, which is the same power as returning any value it likes.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import importlib
import importlib.util
import json
import os
import re
import sys
import threading
import traceback
import types
import uuid
from collections.abc import Iterator
from typing import Any

from IPython.core import inputtransformer2

from dpkit._checks import check_integer
from dpkit.course import kernel
from dpkit.course.wire import GeneratorState, decode, dumps, encode, loads, returned
from dpkit.rng import RandomSource
from dpkit.timing import unpadded

_MESSAGE_LIMIT = 2000            # characters of an error message sent back
_BLOCK_BITS = 1 << 12            # the first block of bits a lent source asks for ...
_MOST_BLOCK_BITS = 1 << 20       # ... and the largest (each block is twice the last)
_MOST_SERVED = 1 << 16           # sizes served that are reported in one request, at most
#: dpkit's package folder: an error whose innermost frame is there was raised by dpkit.
_PACKAGE = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir))


class _Channel:
    """Line-delimited JSON over two file descriptors."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read = open(read_fd, "rb", buffering=0, closefd=False)
        self._write = write_fd
        self._pending = b""
        self._owner = os.getpid()

    def _check_owner(self) -> None:
        """A process the student's code forked must not answer the grader: it ends here."""
        if os.getpid() != self._owner:
            os._exit(0)

    def send(self, message: dict[str, Any]) -> None:
        self._check_owner()
        data = dumps(message)
        while data:
            data = data[os.write(self._write, data):]

    def receive(self) -> dict[str, Any]:
        self._check_owner()
        while b"\n" not in self._pending:
            chunk = self._read.read(1 << 16)
            if not chunk:
                raise SystemExit(0)           # the grader has gone: nothing left to do
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return loads(line)


_channel: _Channel
_shell: kernel.ZMQInteractiveShell   # the notebook's shell: its user_ns is the namespace
_cells: set[str] = set()          # the file names the cells were compiled under: "<name>"
_in_blocks: list[RemoteSource] = []  # the sources lent in blocks during the current call


def _error(error: BaseException) -> dict[str, Any]:
    """An error as the grader sees it: type name, message, the line in a cell (the
    innermost frame in a notebook cell: a function defined in a cell and called by the
    grader fails "in <that cell's name>, line N"), and whether dpkit's own code raised it
    (:func:`dpkit.check._common.raised_in_dpkit`: a lent source's ``bits``, say)."""
    where = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename in _cells:
            where = f"{frame.filename[1:-1]}, line {frame.lineno}"
    if isinstance(error, SyntaxError) and error.filename in _cells:
        where = f"{error.filename[1:-1]}, line {error.lineno}"
    message = str(error)
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + "…"
    return {"op": "error", "type": type(error).__name__, "message": message, "where": where,
            "in_dpkit": _in_dpkit(error)}


def _in_dpkit(error: BaseException) -> bool:
    """Whether dpkit's own code raised ``error`` (the innermost frame of its traceback is in
    dpkit's package), as :func:`dpkit.check._common.raised_in_dpkit` tells in the grader's
    process (this module does not import the checkers)."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and os.path.realpath(frames[-1].filename).startswith(
        _PACKAGE + os.sep)


def _remote(ident: int, kind: str) -> Any:
    if kind in ("source", "blocks"):
        return RemoteSource(ident, blocks=kind == "blocks")
    return Remote(ident)


def _callback(ident: int, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    _channel.send({"op": "callback", "handle": ident, "method": method,
                   "args": encode(list(args), _refuse), "kwargs": encode(kwargs, _refuse)})
    reply = _channel.receive()
    if reply.get("op") == "result":
        return decode(reply.get("value"), _remote)
    name = str(reply.get("type", "RuntimeError"))
    error_type = getattr(builtins, name, None)
    if not (isinstance(error_type, type) and issubclass(error_type, Exception)):
        error_type = RuntimeError
    raise error_type(str(reply.get("message", "")))


def _refuse(value: Any) -> int:
    raise TypeError(f"a value of type {type(value).__name__} cannot be passed to the "
                    "grader's objects")


class Remote:
    """An object of the grader's, passed by reference: every use is a request. Only the
    grader decides which uses it serves (calling a query, drawing from a random source,
    iterating a stream); no attribute of it can be read."""

    __slots__ = ("_ident",)

    def __init__(self, ident: int) -> None:
        object.__setattr__(self, "_ident", ident)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _callback(self._ident, "__call__", args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Method(self._ident, name)

    def __iter__(self) -> Any:
        return _callback(self._ident, "__iter__", (), {})

    def __next__(self) -> Any:
        return _callback(self._ident, "__next__", (), {})

    def __len__(self) -> int:
        return _callback(self._ident, "__len__", (), {})

    def __getitem__(self, key: Any) -> Any:
        return _callback(self._ident, "__getitem__", (key,), {})


class _Method:
    """``remote.name``: calling it asks the grader to call that method."""

    __slots__ = ("_ident", "_name")

    def __init__(self, ident: int, name: str) -> None:
        self._ident, self._name = ident, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _callback(self._ident, self._name, args, kwargs)


class RemoteSource(RandomSource):
    """A random source of the grader's, passed by reference: each draw is a request.

    It is a real :class:`dpkit.rng.RandomSource` here, so dpkit's mechanisms accept it, but
    every public method runs on the grader's object, whose restrictions (a checker may
    allow ``bits(k)`` only) therefore hold.

    **Bits in blocks.** A round trip to the grader costs tens of microseconds, so a sampler
    that reads one bit at a time (bit-by-bit rejection, the Fast Dice Roller) would make
    millions of them. When the grader lends a source whose bits are one plain stream
    (``blocks``: :class:`dpkit.check.exponential.BitsOnly`), ``bits(k)`` is served here
    from a block of at least 4,096 bits fetched in one request, lowest bits first, and the
    sizes ``k`` served go back to the grader's object with the next request and at the
    end of the call (:func:`_return_sources`), which records them as it recorded each
    draw before. The bits are the same i.i.d. uniform bits, so every draw has the same
    law; what is left of a block at the end of the call is dropped, never served again.

    The unread rest of a block is in this process, which the student's code can read.
    That does not weaken the judges: a sampler that reads ahead is still a function of
    i.i.d. uniform bits that no other call sees, and its law is what the tests judge (the
    seeded repeats draw the same blocks). What needs each draw answered when it is made
    stays a request per draw: the judge's scripted enumeration
    (:class:`dpkit.course.judges.sampler.ScriptedBits`, lent as a plain ``source``), whose
    exactness assumes the sampler sees no bit before asking for it.
    """

    def __init__(self, ident: int, *, blocks: bool = False) -> None:
        super().__init__()
        self._ident = ident
        self._blocks = blocks
        self._block_bits = _BLOCK_BITS           # the size of the next block asked for
        self._served: list[int] = []             # sizes served since the last request
        if blocks:
            _in_blocks.append(self)

    def _forget(self) -> None:
        """A copy starts with no bits of the block (they are never served twice) and reports
        the sizes it serves itself."""
        super()._forget()
        self._served = []
        if self._blocks:
            _in_blocks.append(self)

    def _ask(self, method: str, *args: Any) -> Any:
        return _callback(self._ident, method, args, {})

    def bytes(self, n: int) -> bytes:
        return self._ask("bytes", n)

    def bits(self, k: int) -> int:
        if not self._blocks:
            return self._ask("bits", k)
        if type(k) is not int or k < 0:                   # the common case skips the check
            k = check_integer(k, "k", minimum=0)
        with self._lock:
            if k > self._pool_bits:
                size = max(self._block_bits, k - self._pool_bits)
                self._pool |= self._ask("block", size, self._take_served()) << self._pool_bits
                self._pool_bits += size
                self._block_bits = min(2 * self._block_bits, _MOST_BLOCK_BITS)
            value = self._pool & ((1 << k) - 1)
            self._pool >>= k
            self._pool_bits -= k
            self._served.append(k)
            if len(self._served) >= _MOST_SERVED:
                self._ask("block", 0, self._take_served())
        return value

    def _take_served(self) -> list[int]:
        served, self._served = self._served, []
        return served

    def _give_back(self) -> None:
        """End of the call: report the sizes served, and drop the rest of the block."""
        with self._lock:
            self._pool = self._pool_bits = 0
            if self._served:
                self._ask("block", 0, self._take_served())

    def randbelow(self, n: int) -> int:
        return self._ask("randbelow", n)

    def bernoulli(self, p: Any) -> bool:
        return self._ask("bernoulli", p)

    def uniform(self) -> float:
        return self._ask("uniform")

    def uint64(self, size: Any) -> Any:
        return self._ask("uint64", size)

    def uniforms(self, size: Any) -> Any:
        return self._ask("uniforms", size)

    def __repr__(self) -> str:
        return "<the grader's random source>"


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
      %timeit -o …`` runs the statement and binds None;
    * every other line magic (``%matplotlib inline``, ``%run x.py``), shell escape
      (``!ls``) and help line (``f?``, ``?f``, ``np.*lap*?``) becomes ``pass`` (with its
      indentation, so an indented block stays valid); ``x = %magic`` binds None and
      ``x = !cmd`` an empty list;
    * a cell magic on the cell's first line: ``%%time``, ``%%timeit`` and ``%%capture``
      keep their body (``%%timeit``'s set-up statement on the first line runs first,
      ``%%capture``'s name is bound to None); ``%%writefile`` and every other cell magic
      (``%%bash``, ``%%html``, ``%%script`` …) leave no Python: the worker writes
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
    ``%%capture`` binds (to None), or nothing."""
    if name == "timeit":
        return _timeit_statement(line)
    words = [w for w in line.split() if not w.startswith("-")]
    if name == "capture" and words and words[0].isidentifier():
        return f"{words[0]} = None"
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
        return f"{indent}{statement}; {target} None"
    if not target:
        return before + "pass"
    return before + ("[]" if node.func.attr == "getoutput" else "None")


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


def _write_file(source: str) -> None:
    """Write the file of a ``%%writefile [-a] name`` cell (:func:`written_file`) in the
    working folder, as IPython does, so that a module written so can be imported."""
    written = written_file(source)
    if written is not None:
        name, append, body = written
        with open(name, "a" if append else "w", encoding="utf-8") as file:
            file.write(body)
        importlib.invalidate_caches()


def _cell_name(names: Any, index: int) -> str:
    name = names[index] if isinstance(names, list) and index < len(names) else None
    if not isinstance(name, str) or not name or len(name) > 80 or "\n" in name:
        name = f"cell {index + 1}"
    return name


async def _run(cells: list[str], names: Any = None) -> list[dict[str, Any] | None]:
    errors: list[dict[str, Any] | None] = []
    for index, source in enumerate(cells):
        filename = f"<{_cell_name(names, index)}>"
        _cells.add(filename)
        try:
            await kernel.run_cell(_shell, str(source), drop_magics(str(source)), filename)
            _write_file(str(source))
        except BaseException as error:
            errors.append(_error(error))
        else:
            errors.append(None)
    return errors


def _generator(value: Any, made: list[Any]) -> Any:
    """A NumPy generator the grader sent by value, rebuilt here (a copy: its bit generator's
    state and its seed sequence, so ``spawn`` gives the children the grader's would)."""
    if not isinstance(value, GeneratorState):
        return value
    generator = value.rebuild()
    made.append(generator)
    return generator


@contextlib.contextmanager
def _returning_sources() -> Iterator[None]:
    """At the end of a call, however it ends, each source lent in blocks reports the sizes
    it served and drops the rest of its block (:class:`RemoteSource`)."""
    try:
        yield
    finally:
        _return_sources()


def _return_sources() -> None:
    sources = list(_in_blocks)
    _in_blocks.clear()
    for source in sources:
        # A report feeds the grader's records (hints), never the result: one that fails
        # (a copy kept past its call, whose handle is gone) is not the call's error.
        with contextlib.suppress(Exception):
            source._give_back()


async def _serve(namespace: dict[str, Any]) -> None:
    """Answer the grader's requests until it says ``exit``: inside a running asyncio event
    loop (:func:`main`), as a kernel runs its cells and what they call."""
    while True:
        request = _channel.receive()
        op, ident = request.get("op"), request.get("id")
        try:
            if op == "exit":
                return
            if op == "run":
                reply = {"op": "ran",
                         "errors": await _run(list(request["cells"]), request.get("names"))}
            elif op == "get":
                name = str(request["name"])
                if name not in namespace:
                    raise NameError(f"name {name!r} is not defined")
                reply = {"op": "result", "value": encode(namespace[name])}
            elif op == "callable":
                reply = {"op": "result", "value": callable(namespace.get(str(request["name"])))}
            elif op == "call":
                function = namespace.get(str(request["name"]))
                if not callable(function):
                    raise NameError(f"{request['name']!r} is not a function your notebook "
                                    "defines")
                generators: list[Any] = []
                args = [_generator(a, generators)
                        for a in decode(request.get("args", []), _remote)]
                kwargs = {k: _generator(v, generators)
                          for k, v in decode(request.get("kwargs", {}), _remote).items()}
                with unpadded(), _returning_sources(), kernel.executing(_shell):
                    # the grader's calls are judged, never published: no deadlines
                    value = function(*args, **kwargs)
                reply = {"op": "result", "value": returned(value),
                         "generators": [encode(GeneratorState.of(g, i))
                                        for i, g in enumerate(generators)]}
            else:
                raise ValueError(f"unknown request {op!r}")
        except BaseException as error:
            reply = _error(error)
        reply["id"] = ident
        _channel.send(reply)


#: ``sys.argv`` as ``ipykernel`` sets it in a notebook's kernel: its launcher and the
#: connection file, so that an answer cannot tell the sandbox by it.
_KERNEL_ARGV = [getattr(importlib.util.find_spec("ipykernel_launcher"), "origin", None) or
                os.path.join(os.path.dirname(os.__file__), "site-packages",
                             "ipykernel_launcher.py"), "-f",
                os.path.join(os.path.expanduser("~"), ".local", "share", "jupyter", "runtime",
                             f"kernel-{uuid.uuid4()}.json")]


def _kernel_module() -> None:
    """Put ``ipykernel`` in ``sys.modules`` as a notebook's kernel has it (``"ipykernel" in
    sys.modules`` told the sandbox from a notebook: adversarial review 10, A2): the
    package, its ``__init__`` not run (it would import ZeroMQ), its submodules importable,
    its version read (``ipykernel.version_info``: ipywidgets reads it once a shell exists)."""
    spec = importlib.util.find_spec("ipykernel")
    module = importlib.util.module_from_spec(spec) if spec else types.ModuleType("ipykernel")
    sys.modules.setdefault("ipykernel", module)
    with contextlib.suppress(ImportError):   # its version, as its __init__ has it
        version = importlib.import_module("ipykernel._version")
        for name in ("__version__", "version_info", "kernel_protocol_version",
                     "kernel_protocol_version_info"):
            setattr(module, name, getattr(version, name))


def _idle() -> None:
    threading.Event().wait()


def _watch_pipe_fd() -> None:      # named as ipykernel's thread that reads a pipe
    _idle()


def _kernel_process() -> None:
    """Make the cheap facts of this process read as an ipykernel kernel's (ipykernel 7.4,
    adversarial review 11, F2 and F7), once the worker has imported what it needs:
    ``sys.orig_argv`` (the launcher's command line, with :data:`_KERNEL_ARGV`'s connection
    file), ``''`` in ``sys.path`` after the standard library (files the student writes in
    the working folder are importable, as in a kernel, and shadow no module the worker
    has imported) and no longer the package's folder first, and the kernel's eight idle
    daemon threads,
    by their names (``threading.active_count()`` is 9). What stays apart (the limits, the
    user, the session, ``sys.stdout``'s type) is in the book's grading policy."""
    sys.orig_argv = [sys.executable, "-m", "ipykernel_launcher", *_KERNEL_ARGV[1:]]
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.dirname(_PACKAGE):
        del sys.path[0]          # the package's folder: dpkit is imported, a kernel has none
    site = next((i for i, p in enumerate(sys.path) if p.endswith("-packages")), len(sys.path))
    sys.path.insert(site, "")
    poller = threading.Thread(target=_idle, daemon=True)      # "Thread-1", started last
    poller.name = "Thread-1"
    threads = [threading.Thread(target=_idle, name=name, daemon=True)
               for name in ("IOPub", "Heartbeat")]
    threads += [threading.Thread(target=_watch_pipe_fd, daemon=True) for _ in range(2)]
    threads += [threading.Thread(target=_idle, name=name, daemon=True)
                for name in ("Control", "Shell channel", "IPythonHistorySavingThread")]
    stack = threading.stack_size(1 << 16)   # idle: a small stack each (RLIMIT_AS)
    try:
        for thread in [*threads, poller]:
            thread.start()
    except RuntimeError:                       # the user's process limit is reached
        pass
    finally:
        threading.stack_size(stack)


#: What every stand-in check returns in the sandbox (:func:`stand_in_checks`).
NOT_RUN_HERE = ("not run here: when your notebook is graded, the grader runs this check "
                "itself, in the test cell below your answer")


class StandInVerdict:
    """What ``dpkit.check.Verdict`` is in the sandbox, and what a stand-in check returns:
    ``passed`` (True, so that ``assert verdict.passed`` holds), ``message``, ``details``."""

    __slots__ = ("details", "message", "passed")

    def __init__(self, passed: bool, message: str, details: tuple[str, ...] = ()) -> None:
        self.passed, self.message, self.details = passed, message, tuple(details)

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __str__(self) -> str:
        return self.message

    __repr__ = __str__


def _stand_in(name: str) -> Any:
    def check(*_args: Any, **_kwargs: Any) -> StandInVerdict:
        return StandInVerdict(True, f"{name}: {NOT_RUN_HERE}")
    check.__name__ = check.__qualname__ = name
    return check


def stand_in_checks(names: dict[str, list[str]]) -> None:
    """Put a stand-in ``dpkit.check`` (and its submodules) in ``sys.modules``: the same
    public names (``names``: by submodule, ``""`` the package's own), each check returning
    :data:`NOT_RUN_HERE` as a passing :class:`StandInVerdict` and running nothing.

    The checkers are not in the sandbox (:mod:`dpkit.course.sandbox`: a value answer could
    search for itself with its own public check), yet every exercise says "check it with
    ``dpkit.check.…``", and a student who does so in the answer cell must not lose the
    exercise to an ``AttributeError`` (honest review 11, F5). The stand-in cannot be
    searched with, and it tells the sandbox from a notebook no more than the missing
    checkers did: :func:`dpkit.course.exercises.environment_use` refuses, in the code of an
    answer to a randomized exercise, any use of ``dpkit.check`` but a check called to be
    shown (``print(dpkit.check.check_…(f))``)."""
    package = types.ModuleType("dpkit.check", "Stand-in checkers: the grader runs the real ones.")
    package.__path__ = []
    for part, listed in names.items():
        module = types.ModuleType(f"dpkit.check.{part}") if part else package
        for name in listed:
            setattr(module, name, StandInVerdict if name == "Verdict" else _stand_in(name))
        if part:
            setattr(package, part, module)
            sys.modules[module.__name__] = module
    sys.modules["dpkit.check"] = package
    sys.modules["dpkit"].check = package         # type: ignore[attr-defined]


def main() -> None:
    """Serve the grader on the descriptors named in ``DPKIT_WORKER_FDS`` (``read,write``)."""
    global _channel, _shell
    read_fd, write_fd = (int(x) for x in os.environ.pop("DPKIT_WORKER_FDS").split(","))
    _channel = _Channel(read_fd, write_fd)
    sys.argv = _KERNEL_ARGV      # as an IPython kernel's (review round 7, finding 2)
    _kernel_module()
    stand_in_checks(json.loads(os.environ.pop("DPKIT_CHECK_NAMES", "{}")))
    _kernel_process()
    _shell = kernel.start(_KERNEL_ARGV[2])
    loop = asyncio.new_event_loop()      # running while cells run and the grader calls
    asyncio.set_event_loop(loop)

    loop.run_until_complete(_serve(_shell.user_ns))


if __name__ == "__main__":
    main()
