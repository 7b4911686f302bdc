"""Breaker review 44: commit ``7815fba`` (breaker review 43's F2 fixed: ``_next_answer`` keeps each
query's answer, the caller's object, in ``streams[1]`` of the list the public function holds
through its wait, dropping the previous one first, in the caller's slot of
:meth:`dpkit.timing.Deadline.call`, and ``answers()`` converts ``streams[1]`` without binding it;
review 43's F1 fixed by reverting ``54ae8fe``'s hold of the positives, so review 42's F2 is open
again), attacked for the timing structure of ``above_threshold``, ``sparse`` and
``range_queries``. Nothing here waits or measures time: ``Deadline._wait`` is replaced by a
recorder, and nothing is re-warmed.

The principle checked: dpkit's own temporaries (values derived from the data: exact conversions,
noise) are freed before the wait, inside a step charged for them; the caller's objects (the
stream, the queries, the raw answers) in the caller's time (the slot inside ``Deadline.call``,
or after the release's wait).

F1 (low; review 42's F2, open, whose reason is incomplete; sparse's half had no test; fixed:
on an error the last step charges ``min(taken, c - 1)`` objects). After an
error (a query or the stream raises, an answer is refused), the positives found so far are freed
inside the last step, which charges nothing for them: ``range_queries``' keys (an index and the
exact answer, a Fraction) and ``sparse``'s indices (one int each from index 257: CPython caches
-5..256). ``7815fba`` leaves it open because "charging them would make the budget show their
number". Their number ``k`` is not the only possible charge: ``min(n, c)``, with ``n`` the answers
taken from the stream (the query calls, which the caller's code sees: the module notes of
:mod:`dpkit.svt.core` count the steps as public) and ``c`` a parameter, bounds ``k`` and is
public. A scratch copy of ``7815fba`` whose ``sparse_on_answers`` takes the clock and, on an
exception, charges ``min(answers taken, c)`` objects passes review 42's strict xfail (3 cases,
then XPASS), :func:`test_sparse_charges_the_positives_its_last_step_frees_after_an_error` and
``tests/test_breaker43.py``; two tests pin the old error-path budgets and would be updated with
such a fix: ``test_breaker41.py``'s ``test_step_budgets_are_pinned`` (30 ``raises``/``nan`` cases
of ``sparse`` and ``range_queries``) and ``test_timing.py``'s
``test_an_svt_error_waits_for_its_steps_deadline`` (6 cases: the refusal's step charges one or
two objects more). Severity: the data (``k``, a function of Sparse's transcript) can show
only through an overrun of that step, never in its padded time; the noise not at all. Each
positive's free is a few small objects (tens of ns, reasoned) against ``Cost.fixed`` times the
margin (12 U): an overrun needs thousands of positives before the error, so ``c`` in the
thousands. Review 42's test covers ``range_queries`` only; a fix there alone would leave
``sparse``. Fixed in :func:`dpkit.svt.core.sparse_on_answers`, for the three functions at
once: on an exception it charges the last step ``min(taken, c - 1)`` objects, ``taken`` the
answers it took (accepted before the error, so each could be a positive; the failing query's
call, or the refused answer, is not one) and ``c - 1`` because the ``c``-th positive ends the
runs, so an error never finds ``c`` held (``above_threshold``, ``c = 1``, is charged nothing,
and none of its budgets moved). Tighter than the ``min(answers taken, c)`` above, and as
public. The two pinned tests named above derive their new values from this rule (12 of the
30 error cases of ``test_step_budgets_are_pinned``, those at ``c = 3``; 4 of the 6 of
``test_an_svt_error_waits_for_its_steps_deadline``, whose raise steps keep their seconds:
``Cost.fixed`` covers one object); the normal paths' budgets are unchanged.

F2 (low; predates ``7815fba``; the caller's code in a slot; fixed: each step switches the
collector off again). The garbage collector is switched
off only when the outermost release's clock starts (``Deadline.__enter__``): a query (or the
stream) that calls ``gc.enable()`` -- itself, or through a library that re-enables it
unconditionally -- leaves it on for every later step of the release, and a release the caller's
code makes inside a slot does not switch it off either (it is not the outermost). A collection
then falls inside a step whenever the allocations of tracked objects (Fractions, tuples) cross
the collector's threshold, and how many a step makes can depend on the data (an int and a float
answer take different conversion paths); a young collection's pause is set by the objects
allocated since the last one, a full collection's by the whole heap (the data included):
milliseconds for a large heap, against a step's budget of about 0.56 ms (``Cost.fixed`` 6 U,
margin 2, at the U of 46.9 µs that review 41 quotes). Severity: the data can show only through
overruns, but large ones (reasoned, not measured), and only if the caller's code re-enables the
collector; the noise only if a draw's tracked allocations vary with it (not examined: the
fixed-cost sampler does the same work whatever it draws). The module notes of
:mod:`dpkit.timing` ("switched off from the clock's start to the end of the wait") are then
false. Fix: at the start of each step
(``Deadline.call``'s ``finally``) and of a nested release, switch it off again if the caller's
code switched it on, remembering to switch it back on after the outermost wait. A scratch copy
of ``7815fba`` doing so (``Deadline.call``'s ``finally`` switches it off if it is on and marks
the release to switch it on at its end; every release, nested too, switches it off if it is on
at its start) passes both cases of
:func:`test_the_collector_stays_off_in_the_steps_after_a_query_switched_it_on` and
``tests/test_first_use.py``'s collector test.

F3 (very low; ``7815fba``'s docstring of ``_next_answer``; fixed). "The last one is freed with
``streams``, after the release's wait": when the stream ends, the last answer is dropped by the
same ``del streams[1:]`` in the final call, in the caller's slot (recorded, all three functions).
It is held past the wait only when the release stops at a positive (``above_threshold``, the
``c``-th of ``sparse`` and ``range_queries``), and after a refused answer (with the exception).
Fix the wording; no test.

F4 (very low; documentation; ``_next_answer``'s docstring says it). No public note says
when an answer object only dpkit holds is freed: at the next query's call, or, for the one at
which the release stops, after its wait,
unpadded, before it returns (residual risks (2) and (4) of :mod:`dpkit.timing`, and the
functions' **Timing** notes, speak of its conversion only). Its freeing costs a time set by the
object (an int answer of 257 frees a block, 256 none; a caller's ``__del__``, or what the
object alone kept). That mirrors the query's own allocation of the answer, in the caller's time
(no new information), except for an object allocated before the release whose last other
reference the query dropped (``cache.pop(key)``). Suggest one sentence: keep a reference to an
answer whose freeing must not show. No test.

F5 (medium where it applies; predates ``7815fba``; a generator stream; fixed: whether a release
pads is decided when its clock starts). Whether a release waits
is read from the thread's :func:`dpkit.timing.unpadded` depth at every wait
(``Deadline._wait``, ``Deadline._end``), and the caller's code changes that depth between two
steps when a stream generator is suspended inside ``with unpadded():`` (a stream that runs
simulations to pick its next query, as the book teaches simulations to be run): every step
after the one that took the first item then ends with no wait. Recorded with the waits
counted (``_wait_until`` replaced): ``sparse`` on four queries waits 6 times from a list, 2
times from such a stream (the first step, and the one after the stream's ``with`` ended).
Severity: the data shows directly in the time, no overrun needed: those steps end when
dpkit's work on the answer does (its exact conversion, by type and length: the longest
Decimal costs about three times a Fraction, ``COST``'s notes; the comparison; the draws), so
the release takes the caller's code plus dpkit's unpadded work per query; the noise's share is
the fixed-cost draws' (not value-dependent). Only if the caller's code leaves the depth raised
across a step (a suspended generator, or an ``unpadded()`` entered and not exited); the
release itself was not wrapped in ``unpadded()``, which the docs forbid. Fix: decide once, when
the release's clock starts (``Deadline.__enter__``: padded unless the depth is positive
then), and let ``_wait`` and ``_end`` read that decision; a release the caller's code makes
inside ``unpadded()`` in a slot still decides for itself. A scratch copy of ``7815fba`` so
changed passes :func:`test_a_stream_suspended_inside_unpadded_leaves_the_release_padded`,
``tests/test_first_use.py`` (run alone) and ``tests/test_timing.py`` (but the 6 budget pins
that F1's fix changes, present in that scratch copy too).

The five tests below fail at ``7815fba`` and at ``f2b4ea4`` (main, whose ``dpkit`` is the same);
``tests/svt_steps.py`` is main's, byte for byte.

Held (probes in the review's scratch folder; recorded, not timed):

* (1) Every path, the three functions (``c = 2``; streams of two queries below, or one below
  and one above, then the stream's end, a query that raises, a stream that raises, NaN, an
  int of 1,300 bits, ``2**1001`` (refused by ``range_queries`` only), an item that is not
  callable), with the raw answers (an int subclass), the exact answers (``as_fraction``
  wrapped), the queries (yielded new by the stream) and the stream tracked: every raw answer
  and query is freed in a slot, or with the exception, or (the answer at which the release
  stops, and a stream stopped early) after the last wait; every exact answer, the exact ε and
  threshold, inside a step (the previous query's exact answer in the next step, charged one
  answer, or in the final step, charged ``Cost.fixed``; ``range_queries``' positives in its last
  step, charged ``len(found)``); nothing of dpkit's in a slot or after the last wait. The only
  deviation is F1.
* (2) ``as_fraction`` never returns its input and shares no object with it but CPython's cached
  small ints: recorded for ints (one and several digits, negative), an int subclass, exact
  Fractions (numerator and denominator beyond ``2**30``) and a subclass, floats, NumPy float64,
  int64, float32 and longdouble, Decimals, gmpy2 ``mpz`` and ``mpq``, a 1,200-bit int
  (``Fraction(n, d)`` computes ``n // 1``, a new int). So the held raw answer is never a dpkit
  temporary, ``range_queries``' positives hold dpkit's copy, and no dpkit work on an answer
  moved in time.
* (3) Re-entrancy: a release made by a query, or by an answer's ``__del__``, now runs in the
  slot (it ran inside dpkit's step before ``7815fba``) or, for the last answer, after the outer
  release's lock is given back; each release has its own held list. Threads: the held list is
  per call and the slot runs with the release lock held, as the query does; the last answer's
  ``__del__`` runs outside the lock (other load for another thread's release, residual risk (4),
  as a stream's clean-up since review 42). Generators passed directly: ``iter`` returns them,
  held as before. Warm-ups: the same code; their answers are held by the warm-up's lambdas, so
  no answer is freed in their slots, which are unpadded anyway. Memory: one raw answer alive at
  a time now (before, the previous one stayed bound while the next query ran); the last one
  lives through the last step and wait only, or as long as the caller keeps the exception
  (which already keeps ``data`` and the stream through ``run_padded``'s frame).
* (4) The budgets are unchanged (``tests/test_breaker41.py`` passes); a non-iterable ``queries``
  is refused inside the first step, waited for (its docstring's "at once" means before any
  query is called). Other process state the caller's code can change in a slot and dpkit reads
  in its later steps: the margin (:func:`dpkit.timing.set_margin`, public, the caller's
  choice); a tracer or profiler (``sys.settrace``, ``sys.setprofile``: instrumentation, other
  load); the collector (F2) and the ``unpadded`` depth (F5) are the two dpkit itself relies on.
* Test order: ``tests/test_first_use.py`` run right after ``test_breaker42.py`` or
  ``test_breaker43.py`` (two files, one process) fails 9 of its 23 tests, and passes alone
  (recorded on ``7815fba``; this file does the same); the full suite's order was not run here.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest
from svt_steps import CONVERT, HIGH, LOW, freed_in_last_step  # tests/ is on sys.path under pytest

import dpkit._warming as warming
import dpkit.svt.core as core
import dpkit.timing as timing
from dpkit.rng import seeded
from dpkit.svt import above_threshold, sparse


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Where each release would wait, ``("wait", objects charged in the step)`` is recorded
    instead (nothing waits); nothing is re-warmed; ``sparse`` is warmed up first."""
    log: list[Any] = []
    monkeypatch.setattr(timing.Deadline, "_wait",
                        lambda clock: log.append(("wait", clock._counts["objects"])))
    monkeypatch.setattr(warming, "cold", lambda work: None)
    sparse([lambda data: 1], None, 0, 1.0, 1, rng=seeded(42))
    log.clear()
    return log


#: The lazy answers of the three releases, before any test wraps them.
_QUERY_ANSWERS = core.query_answers


class _Key(int):
    """A query's index, as the key ``sparse`` keeps for a positive, recording its freeing."""

    log: ClassVar[list[Any]] = []

    def __del__(self) -> None:
        self.log.append("key freed")


def _keys_freed_in_last_step(monkeypatch: pytest.MonkeyPatch, events: list[Any], positives: int,
                             last: Callable[[Any], Any]) -> tuple[int, int]:
    """``sparse`` (``c = 100``) on ``positives`` answers above the threshold, one below, then the
    query ``last`` (it raises, or its answer is refused); return how many keys were freed in
    its last step (between its last two waits) and the objects that step charged."""
    def keyed(*args: Any) -> Iterator[tuple[Any, Any]]:
        for index, exact in _QUERY_ANSWERS(*args):
            yield _Key(index), exact

    monkeypatch.setattr(core, "query_answers", keyed)
    monkeypatch.setattr(_Key, "log", events)
    events.clear()
    queries = [lambda data: HIGH] * positives + [lambda data: LOW, last]
    with pytest.raises((ZeroDivisionError, ValueError)):
        sparse(queries, None, 0, 100.0, 100, rng=seeded(42))
    return freed_in_last_step(events, "key freed")


@pytest.mark.parametrize("last", [lambda data: 1 // 0, lambda data: math.nan],
                         ids=["raise", "nan"])
def test_sparse_charges_the_positives_its_last_step_frees_after_an_error(
        monkeypatch: pytest.MonkeyPatch, events: list[Any], last: Callable[[Any], Any]) -> None:
    """F1 (``sparse``'s half of review 42's F2): after 5 positives, a query that raises or
    answers NaN: the keys freed in the last step, beyond those freed after no positive, must be
    charged to that step (a public bound such as ``min(answers taken, c)`` would do). At
    ``7815fba`` 5 more are freed and the step's budget is the same; since the fix it charges
    5 more objects, ``min(6, 99) - min(1, 99)``."""
    freed_none, charged_none = _keys_freed_in_last_step(monkeypatch, events, 0, last)
    freed_five, charged_five = _keys_freed_in_last_step(monkeypatch, events, 5, last)
    assert freed_five - freed_none <= charged_five - charged_none, \
        (freed_none, charged_none, freed_five, charged_five)


@pytest.mark.parametrize("nested", [False, True], ids=["steps", "nested release"])
def test_the_collector_stays_off_in_the_steps_after_a_query_switched_it_on(
        monkeypatch: pytest.MonkeyPatch, events: list[Any], nested: bool) -> None:
    """F2: a query that switches the garbage collector on (``gc.enable()``) must not leave it on
    inside the release's later steps, nor inside a release the query then makes. Whether it
    is on is recorded at each exact conversion of an answer (inside a step). At ``7815fba`` it
    is on from the first query's step (and in the nested release's steps)."""
    above_threshold([lambda data: 1], None, 0, 1.0, rng=seeded(42))   # warmed up first
    seen: list[tuple[str, bool]] = []

    def convert(value: Any, name: str) -> Any:
        seen.append((name, gc.isenabled()))
        return CONVERT(value, name)

    monkeypatch.setattr(core, "as_fraction", convert)

    def query(data: Any) -> Any:
        gc.enable()
        if nested:
            above_threshold([lambda inner: LOW], None, 0, 1.0, rng=seeded(7))
        return LOW

    enabled = gc.isenabled()
    gc.enable()
    try:
        sparse([query, query], None, 0, 2.0, 2, rng=seeded(42))
    finally:
        if not enabled:
            gc.disable()
    answers = [on for name, on in seen if name.startswith("queries")]
    assert len(answers) == (4 if nested else 2) and not any(answers), seen


class _SimulatingStream:
    """The caller's stream: picks its queries inside :func:`dpkit.timing.unpadded` (where it
    could run simulations) and yields them from inside that block."""

    def __iter__(self) -> Iterator[Callable[[Any], Any]]:
        with timing.unpadded():
            for _ in range(4):
                yield lambda data: LOW


def test_a_stream_suspended_inside_unpadded_leaves_the_release_padded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """F5: a release started padded waits at the end of every step (here 6: the first, four
    queries', the stream's end), whatever the caller's code does to :func:`dpkit.timing.
    unpadded`'s depth in between. At ``7815fba`` a stream generator suspended inside
    ``unpadded()`` switches the waits of the steps after its first item off: 2 waits."""
    waits: list[int] = []
    monkeypatch.setattr(timing, "_wait_until", lambda deadline: waits.append(deadline) and False)
    monkeypatch.setattr(warming, "cold", lambda work: None)
    sparse([lambda data: 1], None, 0, 2.0, 2, rng=seeded(42))   # warmed up first
    waits.clear()
    sparse(iter([lambda data: LOW] * 4), None, 0, 2.0, 2, rng=seeded(42))
    assert len(waits) == 6
    waits.clear()
    sparse(_SimulatingStream(), None, 0, 2.0, 2, rng=seeded(42))
    assert len(waits) == 6
