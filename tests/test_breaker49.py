"""Breaker review 49: commit ``9346e91`` (breaker review 48's F1 and F5 fixed: the wait's
deadline computed and the failed work's frames cleared inside the ``try`` that waits, a step's
start read first, the clock active until after its wait), attacked for the structure of padded
releases. No wall-clock timing: waits, the release lock, the collector and the active clocks are
recorded. A real SIGALRM (the caller's ``setitimer`` timeout, whose handler raises
``TimeoutError``) plays the caller's timeout; a C-only callable (``functools.partial`` of a
builtin, which CPython calls without a check for signals after it) makes the alarm fire at a
chosen place, so the handler runs at the next check: a Python function's first instruction
(``RESUME``), which no ``try`` of that function covers.

F1 (low-medium for code using the public ``padded()``; library releases held; open, a strict
xfail): an alarm while a ``with padded(...)`` block's last statement frees temporaries (all in C)
escapes at ``Deadline.__exit__``'s first instruction, before its ``try``: no wait, the lock held,
the collector off, the clock left active. Predates ``9346e91``. ``run_padded``, which every
library release uses, held: on Python 3.11 its call of the work checks for signals after the
work's frame is freed, still inside the block (a CPython detail). No pure-Python fix: ``with``
calls ``__exit__`` as a Python function.

F2 (low: a signal in the sub-microsecond window as the busy loop ends; open, strict xfails): the
alarm is handled at the first Python call in ``__exit__``'s ``finally`` (``contextlib.suppress``,
``_active()``), before ``_give_back``'s ``try``: the lock held, the collector off (the same gap
was at ``_give_back``'s entry before ``9346e91``) and, since review 48's F5 fix, the clock left
in ``_active()``, so the thread's later releases look nested and never re-warm. Fix (sketched by
the reviewer, not done): no Python call in that ``finally`` before the lock is given back.

F3 (low, availability; came with review 48's F1 fix; **fixed**): a deadline that cannot be
computed (``add_work(1e308)``: ``int(inf)``) made ``_wait`` retry for ever, holding the release
lock, at full CPU. Now a second failure to compute it raises.

F4 (low-medium where the caller arms timeouts; predates ``9346e91``; **fixed**): an alarm during
a step's wait (``Deadline.call`` waits before the caller's code) was raised at that step's
deadline with no new step started, so the rest of the release (dpkit's unwinding, the frames
cleared, the young collection, ``sparse``'s positives freed) ran past every deadline: the
recorded step starts ended ``[S0, S1, S2, S2]``. Now the wait is inside the ``try`` whose
``finally`` starts the next step, as for an error the query raises.
"""
from __future__ import annotations

import functools
import gc
import signal
from typing import Any

import pytest

import dpkit._unpadding as unpadding
import dpkit._warming as warming
import dpkit.timing as timing
from dpkit.laplace import laplace_mechanism
from dpkit.rng import seeded
from dpkit.timing import Cost, padded, run_padded

REAL_INSIDE = unpadding.inside_unpadded   # the real one (tests/conftest.py replaces it)


def _c_spin(result: bool) -> Any:
    """A callable run from C (a ``__del__`` or ``__bool__`` slot) that spins ~0.1 s in C,
    with no eval-breaker check, and returns ``result``."""
    if result:
        return functools.partial(all, b"\x01" * (3 * 10**7))   # re-iterable: every call spins
    return functools.partial(any, bytes(3 * 10**7))


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Padded releases (the real stack walk, no block), each wait recorded, not made; no
    re-warm; the SIGALRM handler raises TimeoutError; the state is checked and restored."""
    monkeypatch.setattr(timing, "_inside_unpadded", REAL_INSIDE)
    log: list[int] = []
    monkeypatch.setattr(timing, "_wait_until", lambda deadline: log.append(deadline) and False)
    laplace_mechanism(0.5, 1.0, 1.0, rng=seeded(1))          # warmed up
    monkeypatch.setattr(warming, "cold", lambda work: None)
    log.clear()

    def handler(signum: int, frame: Any) -> None:
        raise TimeoutError("the caller's alarm")

    old = signal.signal(signal.SIGALRM, handler)
    enabled = gc.isenabled()
    gc.enable()
    try:
        yield log
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        # undo whatever a failed test left behind, so that later tests run
        timing._active().clear()
        while timing._state.releases._is_owned():
            timing._state.releases.release()
        if enabled:
            gc.enable()
        else:
            gc.disable()
        timing._state.collector_off = False


def _state() -> dict[str, Any]:
    return {"lock held": timing._state.releases._is_owned(), "active": len(timing._active()),
            "collector on": gc.isenabled()}


CLEAN = {"lock held": False, "active": 0, "collector on": True}


# ---------------------------------------------------------------------------------------------
# F1: an alarm that fires while the work's frame is freed (its temporaries, after its last
# check) is handled at Deadline.__exit__'s first instruction, outside its try.

def _work_freeing_at_return(clock: Any, value: Any) -> Any:
    clock.size(1)
    # the work's temporaries, freed with its frame, in order: the first arms the alarm
    arm = Arm()  # noqa: F841
    spin = Spin()  # noqa: F841
    return value


class Arm:
    __del__ = functools.partial(signal.setitimer, signal.ITIMER_REAL, 0.002)


class Spin:
    __del__ = _c_spin(True)


def test_held_run_padded_an_alarm_while_the_works_temporaries_are_freed_still_waits(
        waits: list[int]) -> None:
    """HELD (passes on 9346e91, Python 3.11): ``run_padded`` calls the work as
    ``work(clock, *args)``, a CALL_FUNCTION_EX, which checks for signals after the work's frame
    is freed, inside the ``with`` body: the alarm is raised there and waits. What it tries:
    ``run_padded``'s ``with Deadline(...)`` frees the work's locals when the work returns
    (by design, before the wait: their dealloc takes a data-dependent time, all in C, with no
    check for signals). An alarm that fires then (here: armed by one temporary's finalizer,
    firing while another's C finalizer runs, standing for a long dealloc of the data's
    temporaries) is handled at the next check: the first instruction of
    ``Deadline.__exit__``, before its ``try``. The error then leaves at the end of the work
    (no wait at all), and ``__exit__``'s ``finally`` never runs: the release lock stays held
    by this thread (every other thread's release blocks for ever), the collector stays off
    for the process, and the dead clock stays in ``_active()`` (this thread's later releases
    never re-warm: ``run_padded`` takes them for nested releases)."""
    with pytest.raises(TimeoutError):
        run_padded(Cost(fixed=1.0), _work_freeing_at_return, 1)
    assert (len(waits), _state()) == (1, CLEAN)


@pytest.mark.xfail(strict=True, reason="open (low-medium for padded() users): breaker "
                   "review 49 F1, a signal at __exit__'s first instruction")
def test_a_padded_block_an_alarm_while_its_last_statements_temporaries_are_freed_waits(
        waits: list[int]) -> None:
    """F1. The same through the public :func:`padded`: the block's last statement frees its
    temporaries (``del``, a reassignment, or the return of a Python function it calls, whose
    locals are freed with no check after: an inlined Python-to-Python call), all in C; an
    alarm that fires meanwhile is handled at ``Deadline.__exit__``'s first instruction,
    outside its ``try``: no wait (the error's time is the end of the work), and
    ``__exit__``'s ``finally`` is skipped: the lock stays held, the collector off, the clock
    in ``_active()``."""
    with pytest.raises(TimeoutError):
        with padded(Cost(fixed=1.0)) as clock:
            clock.size(1)
            arm, spin = Arm(), Spin()
            del arm, spin
    assert (len(waits), _state()) == (1, CLEAN)


# ---------------------------------------------------------------------------------------------
# F2: an alarm that fires after the wait, before _give_back's try: review 48 F5's fix moved
# _active().remove (with contextlib.suppress: three Python calls) into __exit__'s finally,
# before _give_back.

class _Late:
    """The busy loop's answer ("not late"), whose truth test spins in C: the alarm fires
    there, at the very end of the wait, and is handled at the next check."""
    __bool__ = _c_spin(False)


@pytest.mark.xfail(strict=True, reason="open (low): breaker review 49 F2, a signal at "
                   "the first Python call of __exit__'s finally")
def test_an_alarm_at_the_end_of_the_wait_gives_the_lock_back(
        waits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """An alarm that fires as the busy loop ends (after its last check) is handled at the
    first Python call after it: ``contextlib.suppress(ValueError)`` in ``__exit__``'s
    ``finally`` (its ``__init__``'s first instruction), which runs before ``_give_back``
    and outside any ``try``: the release ended on time, but ``_give_back`` is skipped and
    ``_active().remove`` too: the lock stays held, the collector off, the clock active."""
    def wait_until(deadline: int) -> Any:
        waits.append(deadline)
        signal.setitimer(signal.ITIMER_REAL, 0.002)
        return _Late()

    monkeypatch.setattr(timing, "_wait_until", wait_until)
    with pytest.raises(TimeoutError):
        laplace_mechanism(0.5, 1.0, 1.0, rng=seeded(3))
    assert (len(waits), _state()) == (1, CLEAN)


@pytest.mark.xfail(strict=True, reason="open (low): breaker review 49 F2")
def test_after_such_an_alarm_the_next_release_still_rewarms(
        waits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The consequence for timing: the dead clock left in ``_active()`` makes every later
    release of this thread look nested, so a cold function is never re-warmed before its
    clock (residual risk 5's fix undone: its first release after a pause overruns, by a
    data-dependent amount)."""
    def wait_until(deadline: int) -> Any:
        waits.append(deadline)
        signal.setitimer(signal.ITIMER_REAL, 0.002)
        return _Late()

    monkeypatch.setattr(timing, "_wait_until", wait_until)
    with pytest.raises(TimeoutError):
        laplace_mechanism(0.5, 1.0, 1.0, rng=seeded(3))
    monkeypatch.setattr(timing, "_wait_until", lambda deadline: waits.append(deadline) and False)
    rewarms: list[object] = []
    monkeypatch.setattr(timing, "_rewarm", lambda work, source: rewarms.append(work))
    monkeypatch.setattr(warming, "cold", lambda work: "full")
    laplace_mechanism(0.5, 1.0, 1.0, rng=seeded(4))
    assert len(rewarms) == 1


# ---------------------------------------------------------------------------------------------
# F3: a deadline that cannot be computed makes _wait spin for ever (review 48 F1's fix moved
# the computation inside the loop that catches every error and tries again).

def test_a_deadline_that_cannot_be_computed_raises_instead_of_spinning(
        waits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """``Deadline._wait`` computes the deadline inside ``while True: try: ... except
    BaseException: error = error or caught``: an error that is not a one-off signal (here
    ``OverflowError`` from ``int(inf)``: a deadline of ``add_work(1e308)`` units, accepted by
    ``add_work``) is caught and the computation retried for ever, at 100% CPU, holding the
    process's release lock (every other thread's release blocks). Before review 48's fix it
    raised. Bounded here: from the 50th attempt the budget is 0 s."""
    calls: list[int] = []
    real = timing.Deadline.seconds

    def seconds(self: Any) -> float:
        calls.append(1)
        if len(calls) >= 50:
            return 0.0                 # let it stop, after 49 failed attempts
        return real(self)

    monkeypatch.setattr(timing.Deadline, "seconds", seconds)
    with pytest.raises(OverflowError):
        with padded(Cost(fixed=1.0)) as clock:
            clock.size(1)
            clock.add_work(1e308)
    assert len(calls) <= 3, f"{len(calls)} attempts at an impossible deadline"


# ---------------------------------------------------------------------------------------------
# F4: an alarm during a step's wait (before the caller's code) is raised at that step's
# deadline; the unwinding, the frames' clearing and the young collection that follow then run
# past every deadline: no step is started for them.

@pytest.mark.parametrize("release", ["above_threshold", "sparse"])
def test_an_alarm_in_a_steps_wait_gets_the_unwinding_step(
        waits: list[int], monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    """Review 47 F7's fix raises an error a signal handler raises during a wait when that
    wait's deadline is reached. In a release in steps the wait may be a step's
    (``Deadline.call`` waits before the caller's code): the error then leaves that step at its
    deadline, and everything the release still does (the unwinding of dpkit's frames, the
    positives ``sparse`` frees, ``_end``'s clearing of the work's frames and its young
    collection of the work's garbage) runs after it; ``_end``'s wait counts from the same
    step's start, already reached, so it does not wait (above_threshold: the same budget
    plus a new jitter; sparse: plus the positives' charge only). A query that raises the same
    error instead gets a step of its own (review 48's test of the same name). Recorded: each
    wait's step start; the last wait must start a step not already waited for."""
    from dpkit.svt import above_threshold, sparse
    above_threshold([lambda data: 1], None, 0, 1.0, rng=seeded(42))    # warmed up first
    sparse([lambda data: 1], None, 0, 1.0, 1, rng=seeded(42))
    waits.clear()
    starts: list[int] = []
    real_wait = timing.Deadline._wait

    def wait(self: Any) -> None:
        starts.append(self._start)
        real_wait(self)

    monkeypatch.setattr(timing.Deadline, "_wait", wait)
    fired: list[bool] = []

    def wait_until(deadline: int) -> bool:
        if len(waits) == 2 and not fired:       # the wait before the third query
            fired.append(True)
            signal.raise_signal(signal.SIGALRM)  # the caller's alarm, during the busy loop
        waits.append(deadline)
        return False

    monkeypatch.setattr(timing, "_wait_until", wait_until)
    queries = [lambda data: 100.0, lambda data: -100.0, lambda data: -100.0,
               lambda data: -100.0]
    with pytest.raises(TimeoutError):
        if release == "sparse":
            sparse(queries, None, 0, 1.0, 3, rng=seeded(5))
        else:
            above_threshold(queries[1:], None, 0, 1.0, rng=seeded(5))
    assert fired
    assert starts[-1] not in starts[:-1], f"the last wait reused a step's start: {starts}"
