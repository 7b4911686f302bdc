"""The CPU time of a process and its descendants, read from ``/proc``: the grader's
clock for the sandbox's time limits (:class:`dpkit.course.sandbox.Limits`; honest review
16, C3: wall-clock limits failed correct answers on a loaded grading machine)."""

from __future__ import annotations

import os
import time

__all__ = ["POLL", "CpuClock", "tree_cpu"]

#: How often a request's CPU time is read while the grader waits for its reply (seconds).
POLL = 0.5

_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int, among: set[int] | None = None) -> tuple[float, set[int]]:
    """The CPU time (user and system, seconds) of process ``pid`` and of every process
    descended from it, the children they reaped included, read from ``/proc`` (each
    process's ``stat``: a sandbox's processes stay below bubblewrap, which is the init of
    their PID namespace), and those processes. With ``among`` (processes found before),
    only those are read: a few files instead of every process's (what they started and
    reaped since is in their children's time). 0 if ``/proc`` cannot be read.

    Parameters
    ----------
    pid : int
        The process (a sandbox's bubblewrap, or a plain worker).
    among : set of int, optional
        The processes to read, as a previous call returned them.

    Returns
    -------
    tuple
        Seconds of CPU time, and the processes read.

    Raises
    ------
    Nothing.

    Privacy guarantee: none needed; the grader reads it, the worker never sees it
    (reference: honest review 16, C3).

    >>> tree_cpu(os.getpid())[0] > 0
    True
    """
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    names = [str(p) for p in among] if among is not None else \
        [e.name for e in _scandir("/proc") if e.name.isdigit()]
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
        except OSError:
            continue
        parents[int(name)] = int(fields[1])
        ticks[int(name)] = sum(int(f) for f in fields[11:15])
    found = {pid}
    for process in (sorted(parents) if among is None else []):
        chain, at = [], process
        while at not in found and at in parents and at not in chain and at > 1:
            chain.append(at)
            at = parents[at]
        if at in found:
            found.update(chain)
    found = found if among is None else set(among)
    return sum(ticks.get(p, 0) for p in found) / _TICK, found


def _scandir(path: str) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(path))
    except OSError:
        return []


class CpuClock:
    """The CPU time of one worker's processes (:func:`tree_cpu`), as a sandbox's requests
    read it: the processes found at the start (a few files to read) at a request's start
    and end, all of them found again while one runs (:meth:`over`) and once the worker has
    answered its first request (it is up: its interpreter has started). Readings only grow
    (:attr:`seen`), so a child's time, between its end and its parent's reaping it, is not
    lost.

    Parameters
    ----------
    pid : int or None
        The worker's process (None: no worker, every reading 0).
    """

    def __init__(self, pid: int | None) -> None:
        self.pid, self.seen, self._pids, self._up, self._polled = pid, 0.0, None, False, 0.0

    def read(self, whole: bool = False) -> float:
        """The CPU time (seconds), of all the worker's processes if ``whole`` (or none were
        found yet), else of those found last."""
        if self.pid is not None:
            seconds, self._pids = tree_cpu(self.pid, None if whole else self._pids)
            self.seen = max(self.seen, seconds)
        return self.seen

    def over(self, end: float) -> bool:
        """Whether the CPU time has passed ``end``, read at most every :data:`POLL` s."""
        if time.monotonic() - self._polled < POLL:
            return False
        self._polled = time.monotonic()
        return self.read(whole=True) > end

    def settled(self, alive: bool) -> float:
        """The CPU time at a request's end (read again if the worker is ``alive``; all its
        processes after its first request)."""
        if alive:
            self.read(whole=not self._up)
            self._up = True
        return self.seen
