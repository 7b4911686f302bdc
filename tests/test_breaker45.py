"""Breaker review 45: commit ``a34c282`` (breaker review 44's F2 and F5 fixed in
:mod:`dpkit.timing`: ``Deadline.__enter__`` decides once whether a release pads, from the
thread's :func:`dpkit.timing.unpadded` depth when its clock starts; every release that finds the
garbage collector on switches it off and switches it on again at its end; ``Deadline.call``
switches it off again after the caller's code if that code switched it on). Nothing here waits
or measures time: ``_wait_until`` is replaced by a recorder, and nothing is re-warmed.

F1 (medium where it applies; predates ``a34c282``, whose fix covers only the release's own
steps; **fixed**, its three tests pass, and two more check what a block still covers and
what it does not: see the end of this paragraph). A stream generator
suspended inside ``with unpadded():`` kept the thread's depth raised for as long as it stays
suspended, and every release that *starts* meanwhile decides it is unpadded: (a) a release a
query makes in a later slot of the same release; (b) after the release stops at a positive
(``above_threshold`` always does), every release the thread makes while the caller holds the
stream: the caller's next ``laplace_mechanism``, or a second ``above_threshold`` on the rest of
the same stream, waits for no deadline (recorded: 0 waits against 1 and 3). (c) Across threads
the depth goes wrong for good: a generator that entered ``unpadded()`` in one thread and ends
in another leaves the first thread's depth at 1 and the second's at -1 (``not -1`` is False:
unpadded), or raises ``AttributeError`` in the second if it never used ``unpadded()``;
``_short_padded_waits`` restores the depth it saved, so a generator closed inside a warm-up's
padded round leaves the depth one too high. Severity: the data shows in the time directly
(dpkit's unpadded work on the values), no overrun needed; the noise only through the fixed-cost
draws' share. Only if the caller's code leaves a ``with unpadded():`` suspended at a ``yield``;
the caller never wrapped a release in it, which the docs forbid. The module notes' "a stream
that enters :func:`unpadded` between steps changes nothing" and ``unpadded``'s "this thread
only" are then false. Fix (sketch): make "inside :func:`unpadded`" mean a ``with unpadded():``
block whose frame is on the current call stack: ``unpadded()`` registers the frame that entered
it (process-wide, with a token its exit removes, whatever the thread), and
``Deadline.__enter__`` is unpadded only if a registered frame is the caller's or one of its
ancestors (a suspended generator's frame is on no stack; a stack walk, outside
the clock); ``_short_padded_waits`` becomes a thread-local override rather than a saved
depth. Cheaper and partial: ``Deadline.call`` refuses (a clear error naming the stream) the
caller's code that returns with the depth changed, and ``unpadded``'s docstring says a block
must not span a ``yield``. Fixed as sketched: there is no depth any more; ``unpadded()``
records the frame that runs its ``with`` statement in the process-wide ``_state.blocks`` (its
exit removes it, in whatever thread), and a release is unpadded only if one of those frames is
on its own call stack when its clock starts (``_inside_unpadded``: a stack walk before the
clock, skipped while no block exists; a ``ContextVar`` would not do: a generator runs in its
caller's context, so the value it sets stays visible to the caller while it is suspended, and
resetting it in another thread raises ``ValueError``); a warm-up's padded round is a
thread-local override (``warming``), saved and restored. ``tests/conftest.py`` no longer holds
a block across its fixture's ``yield`` (it would cover nothing): it makes
``_inside_unpadded`` answer yes in the thread that runs the test.

F2 (low; predates ``a34c282``; **fixed**, the test passes). A child created by ``fork`` in
another thread while a release has the collector off kept it off for good: the release that
would switch it on again does not exist in the child (``multiprocessing``'s default start
method on Linux before Python 3.14). Memory only (cycles never collected in the child), no
timing effect. Fixed: the process-wide ``_state.collector_off`` says that a running release
switched the collector off (it was on before); ``_after_fork_in_child`` switches it on again
unless the forking thread has a release running (releases run one at a time, so the one that
switched it off is then the forking thread's own, whose caller's code forked in a slot: it goes
on in the child and switches it on at its end, which a second test checks).

F3 (low; predates ``a34c282``; **fixed**, the test passes). An exception raised inside
``Deadline.__enter__`` after the release lock is taken (a ``KeyboardInterrupt`` during the
first calibration, ``reference()``, a few ms, or ``_fill_jitter_pool``) skipped ``__exit__``:
the thread kept the lock for good (every other thread's release and warm-up then blocks
forever), the collector stayed off, and a dead clock stayed in ``_active()``, so
``run_padded`` never re-warmed a function in that thread again (risk (5): cold functions
overrun, and an overrun shows the data). Fixed as proposed: ``__enter__`` undoes it all
(removes the clock, switches the collector back on if it switched it off, releases the lock)
on any ``BaseException`` after the lock is taken, then re-raises.

F4 (very low; documentation; not tested). The caller's code in an SVT step's slot runs with
the collector off (``sparse`` on 20,000 queries that each leave 1 KB of cyclic garbage held
22.9 MB at the last query, freed just after the release: an endless stream grows without
bound), and a ``gc.disable()`` it makes is undone when the release ends if the collector was
on at its start (recorded); the module notes ("Threads") say neither. Running the slots with
the collector on is no fix: whether a collection falls in a slot would depend on what dpkit's
previous step allocated. Say it in "Threads". Also ``unpadded``'s docstring says nothing of
the decision at the clock's start (a block entered in a query changes nothing for the
release running; a release made inside it is unpadded) nor of a block that spans a ``yield``.

A scratch copy of ``a34c282`` with the three fixes sketched above (frame-registered
``unpadded`` blocks, ``_short_padded_waits`` a thread-local override; the collector switched
off recorded per release and thread, switched on in a fork child with none of the forking
thread's; ``__enter__`` undoing on ``BaseException``) passes this file, ``test_breaker44.py``
and ``test_timing.py`` (179); ``test_first_use.py`` fails 4 tests that read the thread's depth
to tell unpadded warm-up rounds (its probes would read the clock's decision instead); and
``tests/conftest.py``'s ``with unpadded(): yield`` in a fixture is itself a block suspended at
a ``yield``, so under that fix it would no longer lift the padding (it needs a test-only
switch: both done with the fix of F1).

Held (probes in the review's scratch folder; recorded, not timed): (1) the collector: with it
on or off before, every public release (``laplace_mechanism``, ``sample_releases``,
``gaussian_mechanism``, ``randomized_response``, ``snapping_mechanism``,
``base2_exponential_mechanism``, ``choose_clip_bound``, ``auto_avg``,
``above_threshold_runs``) has it off at its wait and as before after it; ``above_threshold``,
``sparse`` and ``range_queries`` with queries that call ``gc.collect()``, ``gc.freeze()``,
``gc.enable()`` or make a release have it off at every exact conversion and every wait, and on
after. (2) The decision in ``__enter__`` reads only the depth, before ``reference()``, the
jitter pool and the clock's start; the warm-up and re-warm decisions of ``run_padded`` before
it read public state only. (3) ``unpadded()`` around a whole release, and releases a
simulation's queries make, are unpadded; a query that enters and leaves ``unpadded()`` changes
nothing for the release running; warm-ups' padded rounds (``_short_padded_waits`` sets the
depth to 0) decide padded, and ``warming`` (read at each wait) is set only inside them,
synchronously. (4) Threads: the decision is the entering thread's; the collector is read after
the release lock is taken and switched on before it is given back. All of F1--F3 predate
``a34c282`` (the same probes at ``85afd87`` record the same; there F1 (a)'s outer release
waited 4 times, not 6: review 44's F5).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from svt_steps import HIGH, LOW  # tests/ is on sys.path under pytest

import dpkit._warming as warming
import dpkit.timing as timing
from dpkit.laplace import laplace_mechanism
from dpkit.rng import seeded
from dpkit.svt import above_threshold


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each wait a release would make, recorded instead (nothing waits); nothing is
    re-warmed; the two releases used here are warmed up first, padded."""
    log: list[int] = []
    monkeypatch.setattr(timing, "_wait_until", lambda deadline: log.append(deadline) and False)
    monkeypatch.setattr(warming, "cold", lambda work: None)
    above_threshold([lambda data: 1], None, 0, 1.0, rng=seeded(42))
    laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(42))
    log.clear()
    return log


def _simulating_stream() -> Iterator[Any]:
    """The caller's stream: picks its queries by simulations inside ``unpadded()`` and
    yields them from inside that block (a query below the threshold, then one above)."""
    with timing.unpadded():
        while True:
            yield lambda data: LOW
            yield lambda data: HIGH


def test_releases_after_a_stream_left_suspended_inside_unpadded_are_padded(
        waits: list[int]) -> None:
    """F1 (b): ``above_threshold`` stops at the stream's first positive, the caller keeps the
    stream; the caller's next release, and a second ``above_threshold`` on the rest of the
    stream, must wait for their deadlines (the review also accepted refusing such a stream;
    the fix pads). At ``a34c282`` they waited 0 times; fixed."""
    stream = _simulating_stream()
    try:
        above_threshold(stream, None, 0, 1.0, rng=seeded(1))
        assert len(waits) == 3                   # the first step, two queries' steps
        waits.clear()
        laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(2))
        after = len(waits)
        waits.clear()
        above_threshold(stream, None, 0, 1.0, rng=seeded(3))
        assert (after, len(waits)) == (1, 3)
    finally:
        stream.close()   # its ``with unpadded()`` exits here


def test_a_release_a_query_makes_while_the_stream_is_suspended_inside_unpadded_is_padded(
        waits: list[int]) -> None:
    """F1 (a): a query that makes a release (in its slot) gets it padded, whatever the
    stream around it does with ``unpadded()``. At ``a34c282`` the releases made while the
    stream is suspended inside the block waited 0 times: ``[1, 0, 0]``; fixed."""
    inner: list[int] = []

    def query(data: Any) -> Any:
        before = len(waits)
        laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(4))
        inner.append(len(waits) - before)
        return LOW

    def stream() -> Iterator[Any]:
        yield query
        with timing.unpadded():      # simulations that pick the next queries
            yield query
            yield query

    above_threshold(stream(), None, 0, 1.0, rng=seeded(1))
    assert inner == [1, 1, 1]


def test_the_simulations_a_stream_runs_inside_its_block_stay_unpadded(
        waits: list[int]) -> None:
    """What the F1 fix keeps: while the stream runs (the release takes its next query), the
    block is on the stack, so the simulations it runs inside the block skip their deadlines;
    a query that wraps its own simulation in ``unpadded()`` does too; the release around them
    waits at every step (the first, three queries', the stream's end)."""
    simulated: list[int] = []

    def simulate() -> None:
        before = len(waits)
        laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(7))
        simulated.append(len(waits) - before)

    def query(data: Any) -> Any:
        with timing.unpadded():
            simulate()
        return LOW

    def stream() -> Iterator[Any]:
        with timing.unpadded():
            for _ in range(3):
                simulate()                      # picks the next query
                yield query

    above_threshold(stream(), None, 0, 1.0, rng=seeded(1))
    assert (simulated, len(waits)) == ([0] * 6, 5)


def test_only_a_with_statement_around_the_release_unpads_it(waits: list[int]) -> None:
    """As ``unpadded``'s docstring says: a ``with unpadded():`` around the release unpads it;
    a block that a ``contextlib.contextmanager`` function holds across its ``yield``, or that
    ``ExitStack.enter_context`` entered (its frame has returned), covers nothing."""
    @contextlib.contextmanager
    def simulating() -> Iterator[None]:
        with timing.unpadded():
            yield

    counts = []
    for enter in (timing.unpadded, simulating):
        before = len(waits)
        with enter():
            laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(8))
        counts.append(len(waits) - before)
    before = len(waits)
    with contextlib.ExitStack() as stack:
        stack.enter_context(timing.unpadded())
        laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(8))
    assert [*counts, len(waits) - before] == [0, 1, 1]


def test_a_stream_ended_in_another_thread_leaves_both_threads_padded(
        waits: list[int]) -> None:
    """F1 (c): a stream generator that entered ``unpadded()`` in this thread and ends in
    another (its block entered here, exited there) leaves both threads' releases padded. At
    ``a34c282`` this thread's depth stayed 1 and the other's went to -1: neither waited;
    fixed."""
    def stream() -> Iterator[Any]:
        with timing.unpadded():
            yield lambda data: HIGH
            yield lambda data: HIGH

    started = stream()
    next(started)                               # entered here
    seen: dict[str, Any] = {}

    def other() -> None:
        try:
            with timing.unpadded():             # a simulation this thread ran earlier
                pass
            for _ in started:                   # the stream ends here
                pass
            before = len(waits)
            laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(5))
            seen["other"] = len(waits) - before
        except Exception as error:              # reported below, not lost in the thread
            seen["error"] = error

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    before = len(waits)
    laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(6))
    assert (seen, len(waits) - before) == ({"other": 1}, 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_child_of_a_query_finishes_its_release_with_the_collector_off_then_on(
        waits: list[int]) -> None:
    """F2, the other case: the caller's query forks in its slot, in the release's own thread.
    In the child the release goes on (the query returns to it), so the collector stays off
    until the release ends, as in the parent, and is on after it; its waits are made."""
    enabled, parent = gc.isenabled(), os.getpid()
    gc.enable()
    read, write = os.pipe()
    in_slot: list[bool] = []
    children: list[int] = []

    def query(data: Any) -> Any:
        pid = os.fork()
        if pid == 0:
            in_slot.append(gc.isenabled())
        else:
            children.append(pid)
        return LOW

    try:
        try:
            above_threshold([query, lambda data: LOW], None, 0, 1.0, rng=seeded(1))
        finally:
            if os.getpid() != parent:        # the child, whatever happened: report and leave
                try:
                    os.write(write, json.dumps([in_slot, gc.isenabled(), len(waits)]).encode())
                finally:
                    os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            child = json.loads(pipe.read())
        os.waitpid(children[0], 0)
        assert (child, gc.isenabled()) == ([[False], True, len(waits)], True) and waits
    finally:
        if not enabled:
            gc.disable()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_child_of_another_thread_gets_the_collector_back(waits: list[int]) -> None:
    """F2: while a release in this thread has switched the collector off (a query runs in
    its slot), another thread forks; in the child, where that release does not exist, the
    collector must be on again. At ``a34c282`` it stayed off in the child; fixed."""
    enabled = gc.isenabled()
    gc.enable()
    in_slot, forked = threading.Event(), threading.Event()
    child: dict[str, bytes] = {}

    def query(data: Any) -> Any:
        in_slot.set()
        forked.wait(60)                         # the fork happens while the release runs
        return LOW

    def forker() -> None:
        in_slot.wait(60)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:                            # the child: report and leave at once
            os.write(write, b"1" if gc.isenabled() else b"0")
            os._exit(0)
        os.waitpid(pid, 0)
        child["collector"] = os.read(read, 1)
        os.close(read)
        os.close(write)
        forked.set()

    thread = threading.Thread(target=forker)
    thread.start()
    try:
        above_threshold([query], None, 0, 1.0, rng=seeded(1))
    finally:
        thread.join()
        if not enabled:
            gc.disable()
    assert child == {"collector": b"1"}


def test_an_interrupt_while_the_clock_starts_leaves_no_lock_collector_or_clock(
        waits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """F3: a ``KeyboardInterrupt`` raised in ``Deadline.__enter__`` after the release lock is
    taken (here in ``_fill_jitter_pool``) must leave the lock free for other threads, the
    collector as it was, and no clock running in this thread. At ``a34c282`` all three were
    left behind; fixed (``__enter__`` undoes them and re-raises)."""
    fill = timing._fill_jitter_pool
    raised: list[bool] = []

    def interrupted() -> None:
        if not raised:
            raised.append(True)
            raise KeyboardInterrupt
        fill()

    enabled, running = gc.isenabled(), list(timing._active())
    lock = timing._state.releases
    gc.enable()
    monkeypatch.setattr(timing, "_fill_jitter_pool", interrupted)
    free: list[bool] = []
    try:
        with pytest.raises(KeyboardInterrupt):
            laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(1))
        collector, left = gc.isenabled(), [c for c in timing._active() if c not in running]

        def take() -> None:
            got = lock.acquire(blocking=False)
            free.append(got)
            if got:
                lock.release()

        thread = threading.Thread(target=take)
        thread.start()
        thread.join()
    finally:                                    # undo what the interrupt left, for later tests
        while lock._is_owned():
            lock.release()
        timing._active()[:] = running
        if not enabled:
            gc.disable()
        else:
            gc.enable()
    assert (free, collector, left) == ([True], True, [])
