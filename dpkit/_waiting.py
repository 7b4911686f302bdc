"""How a release waits for its deadline (:mod:`dpkit.timing`): the busy loop, the random
extra wait (the jitter) drawn from a pool of the OS's random bytes read ahead, and, after
an error, the clearing of the failed work's frames before the wait.

Private: :mod:`dpkit.timing` is the interface.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from types import CodeType, TracebackType

__all__ = ["JITTER_BYTES", "clear_work_frames", "fill_jitter_pool", "jitter_ns", "wait_until"]

JITTER_BYTES = 2             # a jitter of up to 2**16 / 32 ns, about 2 µs
JITTER_BUFFER = 4096

#: Each thread's pool of OS bytes (attribute ``jitter``).
pool = threading.local()


def jitter_ns() -> int:
    """A random extra wait, uniform on ``[0, 2048)`` ns, from the OS's random bytes.

    Ending exactly at the deadline would leave sub-microsecond traces of the work: the
    phase at which the busy loop last reads the clock, and the state the work left in the
    caches. A random extra wait, independent of the data and the noise, blurs them.

    Each thread keeps its own pool of OS bytes, topped up before each clock starts
    (:func:`fill_jitter_pool`), so reading the OS (about 10 µs) never falls inside a
    deadline; a child created by ``fork`` drops it, so parent and child never wait the same
    extra waits."""
    bytes_ = getattr(pool, "jitter", b"")
    if len(bytes_) < JITTER_BYTES:        # not reached after fill_jitter_pool
        bytes_ = os.urandom(JITTER_BUFFER)
    pool.jitter = bytes_[JITTER_BYTES:]
    return int.from_bytes(bytes_[:JITTER_BYTES], "little") >> 5


def fill_jitter_pool() -> None:
    """Make sure this thread's pool holds the next jitter (:func:`jitter_ns`): called just
    before a clock starts (a release's, or a step's), so the OS is read outside every
    deadline. Whether it reads depends on how many waits the thread made, not on data."""
    bytes_ = getattr(pool, "jitter", b"")
    if len(bytes_) < JITTER_BYTES:
        pool.jitter = bytes_ + os.urandom(JITTER_BUFFER)


def _drop_pool() -> None:
    """In a child created by ``fork``: drop the forking thread's pool (the parent uses the
    same bytes next)."""
    pool.__dict__.pop("jitter", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_pool)


def wait_until(deadline_ns: int) -> bool:
    """Wait until ``perf_counter_ns() >= deadline_ns``; whether the deadline had passed.

    The wait is a busy loop however long it is: it never sleeps. A process that sleeps
    gives its core away, and the scheduler (Linux's CFS) favours it on waking by the CPU
    time it left unused; so under CPU contention a release whose work was shorter, and
    which therefore slept longer, woke and ended earlier. Measured with the timing audit's
    pair ``laplace_mechanism``, 1,000 int64 values, one ``2**53`` vs ``2**53 + 1`` (its
    work differs), at load 13 on 2 cores, 1,000 calls per side: with a sleep for waits
    above 2 ms, a median shift of +2.2 ms and a single-timing guesser right 62.4% of the
    time; with this busy loop, +0.08 ms and 47.7% (chance). Spinning makes every release
    use its core for the whole deadline, whatever its work, which is what the scheduler
    sees; the price is CPU time, not wall time.

    A busy loop cannot stop the scheduler from pre-empting the work itself. With another
    CPU-bound program on the same core, a release is pre-empted for a few milliseconds at a
    time, and one whose work is longer is more often pre-empted before its work is done, so
    it ends later (work plus pre-emption, against a pre-emption during the wait) and overruns
    more often. Measured on 2026-11-28: ``laplace_mechanism`` on two of the longest Decimals
    against two floats (0.5), sharing its core with ``while 1: pass``, 10,000 interleaved
    calls a side, in two runs: 794 and 1,054 counted overruns against 301 and 482, a
    single-timing guesser right 51.8% and 51.9% of the time (certified ε 0, the audit's pass
    line 52%); on a core of its own, 3,000 calls a side, 1 overrun against 0 and 51.0%. Ending
    a late release on a doubling schedule instead (the predictive mitigation of Askarov,
    Zhang & Myers, CCS 2010: the end time tells only how many doublings the lateness needed)
    did not help: 51.5% and 53.9% (certified ε 0.17) in the same experiment, because what
    differs most is whether the work overran at all (the slowest input's work nears its
    allowance), which the schedule makes a clearer step. Co-locating a program with a
    release is other load (residual risk 1 in :mod:`dpkit.timing`)."""
    if time.perf_counter_ns() >= deadline_ns:
        return True
    while time.perf_counter_ns() < deadline_ns:
        pass
    return False


def clear_work_frames(trace: TracebackType | None, stop: CodeType) -> None:
    """Clear the frames of a failed release's work (as :func:`traceback.clear_frames`), from
    the outermost down to the first frame running ``stop`` (:meth:`dpkit.timing.Deadline.call`),
    if the error came through one: the frames below it are the caller's code, whose objects
    are freed with the exception, in the caller's time, not inside the step (breaker review
    42, F1). A frame still executing cannot be cleared and is skipped; clearing a suspended
    generator's frame closes the generator (its ``finally`` runs: breaker review 43, F3),
    as :func:`traceback.clear_frames` did."""
    while trace is not None:
        with contextlib.suppress(RuntimeError):
            trace.tb_frame.clear()
        if trace.tb_frame.f_code is stop:
            return
        trace = trace.tb_next
