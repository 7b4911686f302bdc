"""The grading worker's kernel: IPython's own shell, set up as ipykernel sets it up, without
ZeroMQ (adversarial review 12, F3).

A notebook's code runs in an ipykernel kernel, whose namespace and process hold things a
plain interpreter has not: ``In``/``Out`` and the other history names, ``exit`` and ``quit``
of IPython's type, ``open`` wrapped, ``get_ipython()``, ``sys.ps1``, IPython's
``sys.excepthook`` while a cell runs, a running asyncio event loop. An answer that tests any
of them could tell the grading worker (:mod:`dpkit.course.worker`) from a notebook and add
noise only when graded. Rather than imitate each, the worker runs the cells in a real
:class:`IPython.core.interactiveshell.InteractiveShell`, whose subclass here bears
ipykernel's names (``ipykernel.zmqshell.ZMQInteractiveShell``, its display hook's
``ipykernel.displayhook.ZMQShellDisplayHook``, ``exit`` a ``ZMQExitAutocall``), so the
values are IPython's own. IPython is already imported with dpkit's other dependencies;
making the shell costs about 20 ms of the worker's start.

What differs from a kernel on purpose: the cells are compiled by the worker (magics are
never run, :func:`dpkit.course.magics.drop_magics`; ``In`` shows each cell as IPython
transforms it, as in a notebook), no event is fired and nothing is published; the history
is kept in memory; ``exit`` and ``quit`` are :class:`ZMQExitAutocall` objects of this
module that hold no reference to the shell (IPython's held it as ``_ip``, and
``exit._ip.ev("…")`` ran code the static reading never read: adversarial review 15,
C2). ``In`` holds the notebook's cells only (the set-up cell and the student's): the
grader's tests never run here. IPython's files (``~/.ipython``) are written in the
worker's own home, inside the sandbox, and nowhere else.
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import inspect
import os
import sys
import types
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.history import HistoryManager
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.profiledir import ProfileDir
from traitlets import Any as AnyTrait
from traitlets import Instance, Type, default
from traitlets.config import Config


class ZMQShellDisplayHook(DisplayHook):
    """The shell's display hook, named as ipykernel's (``Out[n]``, ``_``: IPython's own)."""

    __module__ = "ipykernel.displayhook"


class ZMQExitAutocall:
    """``exit`` and ``quit``, by the name of IPython's class, holding nothing: calling one
    asks the shell to exit, which in a kernel ends the session once the cell has run and
    in the worker does nothing (it keeps answering the grader's calls)."""

    __module__ = "IPython.core.autocall"

    def __call__(self, keep_kernel: bool = False) -> None:
        """Do nothing, as the worker's shell does when asked to exit."""


class IPythonKernel:
    """``get_ipython().kernel``, by its class's name: the shell and the execution count."""

    __module__ = "ipykernel.ipkernel"

    def __init__(self, shell: InteractiveShell) -> None:
        self.shell = shell
        self.session_id = str(uuid.uuid4())

    @property
    def execution_count(self) -> int:
        return self.shell.execution_count


class ZMQInteractiveShell(InteractiveShell):
    """IPython's shell, by ipykernel's shell's name, with its ``exit`` type, display hook
    class, ``kernel`` and ``parent_header``; history in memory, no profile but the
    worker's home's (or none, if the home cannot be written)."""

    __module__ = "ipykernel.zmqshell"

    displayhook_class = Type(ZMQShellDisplayHook)
    exiter = Instance(ZMQExitAutocall)
    kernel = AnyTrait()
    parent_header = AnyTrait()

    @default("exiter")
    def _default_exiter(self) -> ZMQExitAutocall:
        return ZMQExitAutocall()

    def init_profile_dir(self, profile_dir: Any) -> None:
        if os.access(self.ipython_dir, os.W_OK):
            super().init_profile_dir(profile_dir)
        else:
            self.profile_dir = ProfileDir()      # no location: nothing is written

    def init_history(self) -> None:
        self.history_manager = HistoryManager(shell=self, parent=self, hist_file=":memory:")
        self.configurables.append(self.history_manager)


def _ipython_dir() -> str:
    """``~/.ipython`` where the home can be written (the sandbox's private home), else the
    working folder, which exists: IPython then makes no folder anywhere."""
    home = os.path.expanduser("~")
    return os.path.join(home, ".ipython") if os.access(home, os.W_OK) else os.getcwd()


def start(connection_file: str) -> ZMQInteractiveShell:
    """Make the shell, as a kernel's: its ``config`` has ipykernel's sections, its namespace
    is ``__main__``'s (``sys.modules["__main__"]``), and ``warnings.filters`` gets the
    filter ipykernel's shell adds. Returns the shell, whose ``user_ns`` the cells run in."""
    config = Config({"IPKernelApp": {"connection_file": connection_file}, "ScriptMagics": {}})
    before = list(warnings.filters)
    shell = ZMQInteractiveShell.instance(config=config, ipython_dir=_ipython_dir())
    warnings.filterwarnings("ignore", message=".*Trio's signal handling code might have "
                            "collided.*", category=RuntimeWarning)
    _order_filters(before)
    shell.kernel = IPythonKernel(shell)
    shell.parent_header = {}
    shell.builtin_trap.__enter__()          # get_ipython, display: builtins, as in a kernel
    shell.display_trap.__enter__()          # sys.displayhook: the shell's, for good
    return shell


def _python_default(entry: tuple[Any, ...]) -> bool:
    """Whether a ``warnings.filters`` entry is one of Python's own (no message, a builtin
    category) rather than one an imported module added (numpy's, say)."""
    return entry[1] is None and getattr(entry[2], "__module__", "") == "builtins"


def _order_filters(before: list[tuple[Any, ...]]) -> None:
    """Put the filters the shell added where a kernel has them: in a kernel the shell comes
    first and the set-up cell's imports (numpy) add theirs in front of it afterwards; here
    the worker imported them before making the shell."""
    added = [entry for entry in warnings.filters if entry not in before]
    warnings.filters[:] = ([e for e in before if not _python_default(e)] + added
                           + [e for e in before if _python_default(e)])
    warnings._filters_mutated()             # type: ignore[attr-defined]


def _header(shell: ZMQInteractiveShell) -> dict[str, Any]:
    """An ``execute_request``'s header, as ``get_ipython().parent_header`` shows it."""
    session = shell.kernel.session_id
    header = {"msg_id": f"{session}_{os.getpid()}_{shell.execution_count}",
              "msg_type": "execute_request", "username": "username", "session": session,
              "date": datetime.datetime.now(datetime.UTC), "version": "5.4"}
    return {"header": header, "msg_id": header["msg_id"], "msg_type": "execute_request",
            "parent_header": {}, "metadata": {}, "content": {}, "buffers": []}


@contextlib.contextmanager
def executing(shell: ZMQInteractiveShell) -> Iterator[None]:
    """While a cell (or a function it defined) runs: IPython's ``sys.excepthook``, as
    :meth:`InteractiveShell.run_code` sets it."""
    old, sys.excepthook = sys.excepthook, shell.excepthook
    try:
        yield
    finally:
        sys.excepthook = old


async def run_cell(shell: ZMQInteractiveShell, source: str, code: str, filename: str) -> None:
    """Run one cell: ``source`` as the notebook holds it (``In``, ``_i``: as IPython
    transforms it), ``code`` its Python (compiled under ``filename``; a last expression's
    value goes to ``Out`` and ``_`` through the display hook, as in a kernel). The
    execution count goes up before the cell runs, whether it fails or not, as IPython's.
    A top-level ``await`` is awaited in the running event loop, as a kernel's
    ``run_cell_async`` does (honest review 13, F4).

    Raises
    ------
    BaseException
        What the cell raised (a :class:`SyntaxError` if it does not compile).
    """
    count = shell.execution_count
    try:
        shown = shell.transform_cell(source)
    except Exception:                       # IPython cannot read it: the cell as written
        shown = source
    shell.history_manager.store_inputs(count, shown, source)
    shell.parent_header = _header(shell)
    shell.execution_count = count + 1       # before the cell runs, as IPython counts
    tree = ast.parse(code, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    with executing(shell):
        await _execute(compile(tree, filename, "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT),
                       shell.user_ns)
        if last is not None:                # shown, as IPython's "last_expr"
            await _execute(compile(ast.Interactive([last]), filename, "single",
                                   ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), shell.user_ns)


async def _execute(code: types.CodeType, namespace: dict[str, Any]) -> None:
    """Run ``code`` in ``namespace``, awaiting it if it has a top-level ``await``."""
    result = eval(code, namespace)
    if code.co_flags & inspect.CO_COROUTINE:
        await result
