"""A check shown in a randomized answer, run by the grader as it runs in a notebook.

In the sandbox ``dpkit.check`` is a stand-in (:func:`dpkit.course.worker.stand_in_checks`)
whose checks return a passing placeholder. A placeholder that returns at once, calling
nothing, told the sandbox from a notebook: an answer that timed its own shown check (or
counted its function's calls) added noise only where it was graded (adversarial review 12,
F4). So the stand-in of a check of :data:`~dpkit.course.wire.RUN_IN_GRADER` (the checks
the randomized exercises name) asks the grader to run the real check, here, on a handle to
what it was given; the check calls the student's function back in the worker, with the
arguments and the random sources it makes in a notebook, and its verdict is thrown away:
the stand-in returns its placeholder whatever it was. The student's function sees the calls
it sees in a notebook, and the shown check takes about the time it takes there.

Value checks are not run: they stop at the first wrong value, so a function that counts
its calls could search for its answer with them.
"""

from __future__ import annotations

import contextlib
from typing import Any

from dpkit.course.wire import RUN_IN_GRADER, WireError, decode

__all__ = ["run_shown"]


class _Shown:
    """What a shown check was given (the student's function), in the worker: a call runs
    it there (:meth:`dpkit.course.sandbox.Sandbox.call` with its handle). An error that
    stopped the worker is kept in ``stopped``: the cell that showed the check fails with
    it."""

    __name__ = "your function"

    def __init__(self, sandbox: Any, ident: int, stopped: list[Exception]) -> None:
        self._sandbox, self._ident, self._stopped = sandbox, ident, stopped

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._sandbox.call(self._ident, *args, **kwargs)
        except Exception as error:
            if not self._sandbox.alive:
                self._stopped.append(error)
            raise

    def __repr__(self) -> str:
        return "<your function>"


def run_shown(sandbox: Any, request: dict[str, Any], during: Any, deadline: float) -> None:
    """Run, in the grader, the check a cell running in ``sandbox`` shows, as a notebook
    would, and throw its verdict away.

    ``request`` is the worker's message (``{"op": "check", "name": ..., "args": ...,
    "kwargs": ...}``, what the check was given: plain values, and handles to the worker's
    objects, the student's function). It is run only if ``during``, the operation of the
    request the grader is waiting on, is ``"run"`` (a cell runs: not while the grader
    calls a function, and so never inside another shown check, whose calls are ``"call"``
    requests) and its name is one of :data:`~dpkit.course.wire.RUN_IN_GRADER`; otherwise
    nothing is called. The check's calls are requests made within the cell's request: they
    end by ``deadline`` (the cell's) and their time is counted once, as the cell's
    (``sandbox.left`` and its kin are put back). The verdict, or an error of the check,
    reaches neither the worker nor the grade.

    Parameters
    ----------
    sandbox : Sandbox
        The sandbox whose cell shows the check.
    request : dict
        The worker's ``check`` message.
    during : object
        The ``op`` of the grader's request in progress.
    deadline : float
        When that request's time is up (``time.monotonic()``).

    Returns
    -------
    None

    Raises
    ------
    Exception
        The error of a call that stopped the worker (a time-out, a crash): the cell
        fails with it, as the request it is part of.

    Privacy guarantee: none needed; the check's inputs are the public check's, its fixed
    seeds included, and nothing of its result crosses to the worker (reference:
    adversarial review 12, F4).
    """
    name = request.get("name")
    if during != "run" or name not in RUN_IN_GRADER:
        return
    import dpkit.check

    stopped: list[Exception] = []
    try:
        args = decode(request.get("args", []), lambda ident, _kind: _Shown(
            sandbox, ident, stopped))
        kwargs = decode(request.get("kwargs", {}), lambda ident, _kind: _Shown(
            sandbox, ident, stopped))
    except WireError:
        return
    if not isinstance(args, list) or not isinstance(kwargs, dict) or \
            not all(isinstance(key, str) for key in kwargs):
        return
    saved = sandbox.deadline, sandbox.left, sandbox.test_left, sandbox.wall_left
    sandbox.deadline = min(sandbox.deadline, deadline)
    try:
        with contextlib.suppress(Exception):      # the verdict, or the check's error: unused
            getattr(dpkit.check, name)(*args, **kwargs)
    finally:
        sandbox.deadline, sandbox.left, sandbox.test_left, sandbox.wall_left = saved
    if not sandbox.alive:
        raise stopped[0] if stopped else RuntimeError("your code stopped the sandbox")
