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
    stand-in whose checks return a placeholder: :func:`stand_in_checks`); reply with
    each cell's error, if any, and where it was raised: the cell's name, which the grader
    sends with it ("your answer to Exercise 3.2"), and the line.
``get``
    Reply with the value of a name the cells defined.
``call``
    Call a function the cells defined with the arguments given and reply with its result
    or its error (in the shell's namespace and event loop, as a cell would call it; by
    handle, what a check shown in the running cell was given: :func:`_show`). An
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

import asyncio
import builtins
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import traceback
import types
import uuid
from collections.abc import Iterator
from typing import Any

from dpkit._checks import check_integer
from dpkit.course import kernel
from dpkit.course.magics import drop_magics, write_file, written_file
from dpkit.course.wire import (
    RUN_IN_GRADER,
    GeneratorState,
    WireError,
    decode,
    dumps,
    encode,
    loads,
    returned,
)
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
_in_cell = [False]                # whether a cell runs (not a function the grader calls)
_shown: dict[int, Any] = {}       # what a check shown in a cell was given, while it runs
_written: dict[str, str] = {}     # the text each %%writefile cell left, by absolute path


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
            with _running(True):
                await kernel.run_cell(_shell, str(source), drop_magics(str(source)), filename)
            write_file(str(source))
            _wrote(str(source))
        except BaseException as error:
            errors.append(_error(error))
        else:
            errors.append(None)
    return errors


def _wrote(source: str) -> None:
    """Remember the text a ``%%writefile`` cell ``source`` left in its file (``-a``
    appends), the only text :class:`_WrittenOnly` imports from that file."""
    written = written_file(source)
    if written is not None:
        name, append, body = written
        path = os.path.abspath(name)
        _written[path] = (_written.get(path, "") if append else "") + body


class _WrittenOnly(importlib.abc.MetaPathFinder):
    """First in ``sys.meta_path``: a top-level module found anywhere but the folders of
    ``sys.path`` when the worker started (the standard library, site-packages, dpkit's) is
    imported only if it is a ``.py`` file holding, unchanged, the text a ``%%writefile``
    cell wrote there (and that text is what runs), and never in place of an installed
    module of the same name: a file written or overwritten at run time (``open(…).write``),
    or named as an installed module (``tabulate.py``), would run code the static reading of
    answers never read (adversarial review 14, F1). Otherwise an ImportError says why."""

    def __init__(self, installed: list[str]) -> None:
        self.installed = installed
        self.roots = [os.path.realpath(p) for p in installed]

    def _installed_at(self, location: str) -> bool:
        real = os.path.realpath(location)
        return any(real == root or real.startswith(root + os.sep) for root in self.roots)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if path is not None:                     # a submodule: its package was judged
            return None
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is None:
            return None
        origin = spec.origin if spec.has_location else None
        places = [origin] if origin else list(spec.submodule_search_locations or [])
        if places and all(map(self._installed_at, places)):
            return None                          # the standard library's, an installed one
        text = _written.get(os.path.abspath(origin)) if origin else None
        if importlib.machinery.PathFinder.find_spec(name, self.installed) is not None:
            why = "it has the name of an installed module, which it would hide"
        elif text is None or not origin.endswith(".py") or _file_text(origin) != text:
            why = ("only the Python files your %%writefile cells write are imported when "
                   "grading, as they wrote them (not one written or changed another way)")
        else:
            return importlib.util.spec_from_loader(name, _TextLoader(text, origin),
                                                   origin=origin)
        raise ImportError(f"{name} ({places[0] if places else name}) is not imported: {why}",
                          name=name)


#: What a figure hook set at run time raises (issue #17: the static reading refuses the
#: hooks it sees; a key computed at run time or a style file it cannot read reaches here).
HOOKS_REFUSED = ("matplotlib's figure.hooks may not be set when grading: matplotlib would "
                 "import and call the module:function strings it names, code the grader "
                 "never read")


def guard_matplotlib() -> None:
    """Make matplotlib refuse ``figure.hooks`` in this process, now if it is imported,
    else when it is: setting a non-empty list raises ValueError (:data:`HOOKS_REFUSED`),
    and so does reading one that got past the validator (``dict.__setitem__`` on
    ``rcParams``), as ``pyplot.figure`` does before it imports and calls the hooks.

    Returns
    -------
    None

    Raises
    ------
    Nothing (the guarded reads and writes raise ValueError later).

    Privacy guarantee: none by itself (reference: issue #17, round 16).
    """
    if "matplotlib" in sys.modules:
        _refuse_hooks(sys.modules["matplotlib"])
        return

    class _Guard(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
            if name != "matplotlib":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module: types.ModuleType) -> None:
                    run(module)
                    _refuse_hooks(module)

                spec.loader.exec_module = exec_module       # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, _Guard())


def _refuse_hooks(matplotlib: types.ModuleType) -> None:
    """:func:`guard_matplotlib` on the imported ``matplotlib``."""
    validators, params = matplotlib.rcsetup._validators, type(matplotlib.rcParams)
    plain, read = validators["figure.hooks"], params.__getitem__

    def validate(value: Any) -> list[str]:
        hooks = plain(value)
        if hooks:
            raise ValueError(HOOKS_REFUSED)
        return hooks

    def getitem(self: Any, key: str) -> Any:
        value = read(self, key)
        if key == "figure.hooks" and value:
            raise ValueError(HOOKS_REFUSED)
        return value

    validators["figure.hooks"] = validate
    params.__getitem__ = getitem

def _file_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


class _TextLoader(importlib.abc.Loader):
    """Runs the text a ``%%writefile`` cell wrote as the module (:class:`_WrittenOnly`)."""

    def __init__(self, text: str, path: str) -> None:
        self.text, self.path = text, path

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.path
        exec(compile(self.text, self.path, "exec"), module.__dict__)


@contextlib.contextmanager
def _running(cell: bool) -> Iterator[None]:
    """While a cell runs (``cell``) or a function the grader calls does (not ``cell``):
    only a cell's shown check is run by the grader (:func:`_show`)."""
    before, _in_cell[0] = _in_cell[0], cell
    try:
        yield
    finally:
        _in_cell[0] = before


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
    while (request := _channel.receive()).get("op") != "exit":
        if request.get("op") == "run":     # a cell runs here, at the top, never nested
            try:
                reply = {"op": "ran",
                         "errors": await _run(list(request["cells"]), request.get("names"))}
            except BaseException as error:
                reply = _error(error)
            reply["id"] = request.get("id")
        else:
            reply = _answer(request, namespace)
        _channel.send(reply)


def _answer(request: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """The reply to one of the grader's requests but ``run`` (``get``, ``callable``,
    ``call``: see the module docstring), also while a shown check waits (:func:`_show`)."""
    op, ident = request.get("op"), request.get("id")
    try:
        if op == "get":
            name = str(request["name"])
            if name not in namespace:
                raise NameError(f"name {name!r} is not defined")
            reply = {"op": "result", "value": encode(namespace[name])}
        elif op == "callable":
            reply = {"op": "result", "value": callable(namespace.get(str(request["name"])))}
        elif op == "call":
            function = _shown.get(request["handle"]) if "handle" in request else \
                namespace.get(str(request["name"]))
            if not callable(function):
                raise NameError(f"{request.get('name', 'what a check was given')!r} is "
                                "not a function your notebook defines")
            generators: list[Any] = []
            args = [_generator(a, generators)
                    for a in decode(request.get("args", []), _remote)]
            kwargs = {k: _generator(v, generators)
                      for k, v in decode(request.get("kwargs", {}), _remote).items()}
            with unpadded(), _returning_sources(), kernel.executing(_shell), \
                    _running(False):
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
    return reply


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
    def check(*args: Any, **kwargs: Any) -> StandInVerdict:
        if name in RUN_IN_GRADER:
            _show(name, args, kwargs)
        return StandInVerdict(True, f"{name}: {NOT_RUN_HERE}")
    check.__name__ = check.__qualname__ = name
    return check


def _show(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A randomized exercise's check shown in a cell: the grader runs the real one, as a
    notebook does, and this process answers its calls of the student's function (the
    handles of what the check was given, in :data:`_shown`) until it says ``checked``
    (:mod:`dpkit.course.showing`). Nothing comes back but that word. Not from a function
    the grader calls, nor inside another shown check: nothing is run then (the grader
    refuses it too)."""
    if not _in_cell[0] or _shown:
        return

    def handle(value: Any) -> int:
        _shown[len(_shown) + 1] = value
        return len(_shown)

    try:
        message = {"op": "check", "name": name, "args": encode(list(args), handle),
                   "kwargs": encode(kwargs, handle)}
        _channel.send(message)
        while (request := _channel.receive()).get("op") != "checked":
            if request.get("op") == "exit":
                os._exit(0)                     # the grader has gone
            _channel.send(_answer(request, _shell.user_ns))
    except WireError:                           # what it was given cannot be sent: not run
        pass
    finally:
        _shown.clear()


def stand_in_checks(names: dict[str, list[str]]) -> None:
    """Put a stand-in ``dpkit.check`` (and its submodules) in ``sys.modules``: the same
    public names (``names``: by submodule, ``""`` the package's own), each check returning
    :data:`NOT_RUN_HERE` as a passing :class:`StandInVerdict`.

    The checkers are not in the sandbox (:mod:`dpkit.course.sandbox`: a value answer could
    search for itself with its own public check), yet every exercise says "check it with
    ``dpkit.check.…``", and a student who does so in the answer cell must not lose the
    exercise to an ``AttributeError`` (honest review 11, F5). A value check calls nothing
    (it stops at the first wrong value, so a function that counts its calls could search
    for its answer with it). A randomized exercise's check
    (:data:`~dpkit.course.wire.RUN_IN_GRADER`) shown in a cell is run by the grader on
    what it was given, calling the student's function back here as the check does in a
    notebook, its verdict thrown away (:func:`_show`, :mod:`dpkit.course.showing`): a
    placeholder returned at once, calling nothing, told the sandbox from a notebook by the
    clock or a count of calls (adversarial review 12, F4). The placeholder tells it no more
    than the missing checkers did: :func:`dpkit.course.exercises.environment_use` refuses,
    in the code of an answer to a randomized exercise, any use of ``dpkit.check`` but a
    check called to be shown (``print(dpkit.check.check_…(f))``)."""
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
    guard_matplotlib()
    sys.meta_path.insert(0, _WrittenOnly([p for p in sys.path if p]))
    _shell = kernel.start(_KERNEL_ARGV[2])
    loop = asyncio.new_event_loop()      # running while cells run and the grader calls
    asyncio.set_event_loop(loop)

    loop.run_until_complete(_serve(_shell.user_ns))


if __name__ == "__main__":
    main()
