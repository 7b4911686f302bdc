"""The warm-ups each release function registers (:func:`warm_up_with`), which release
functions have gone cold, and the fixed public inputs that warm them up (:mod:`dpkit.timing`
runs them: the first warm-up, and the re-warms after a pause or a fork).

A release function warmed up once (:func:`dpkit.timing.warm_up_with`) goes cold again: during
a pause other processes empty the CPU's caches of its code and data, and in a child created
by ``fork`` each page it touches first is copied (about 260–410 minor page faults in the
first release). Either made the next release overrun its deadline, and an overrun shows
the data. So the end of each release of a work function that returned is stamped with the
clock (:func:`released`; a refused call, before its clock or after, is no warmth: refusals
every few ms once kept a function's stamp fresh while its release paths went cold, breaker
review 8), a fork child forgets every stamp, and a release first re-warms its function,
before its clock starts, by the time since that stamp (:func:`cold`,
``dpkit.timing._rewarm``):

* **full**, if the stamp is missing or older than :data:`REWARM_AFTER_NS` (10 ms): its
  warm-up releases once on every value of :func:`warm_up_values`, unpadded, then once on the
  first through the padded path (short waits);
* **light**, if it is older than :data:`LIGHT_REWARM_AFTER_NS` (50 µs): only the padded
  release on the first value (a pause of 0.1 ms cools a function on a loaded machine).

A re-warm uses the default source, or a new ``seeded(0)`` if the release's source is a
seeded one (:func:`rewarm_source`: the seeded source's code is warmed too; the caller's
source object is never called, so none of its bytes are read). Its inputs are fixed public
values and it sees none of the release's data, so it does the same work whatever the data;
whether it runs depends on a clock reading (the time since the last release, which ended
at its deadline), on the fork and on the kind of source the caller chose, not on the data
the release is given. The time since the last release is the caller's own code between the
two, which may depend on its data: a caller whose code there takes a few µs longer on some
data makes the next release re-warm more often, and so take about 0.3-0.9 ms longer
(breaker review 46, F1, open: ``above_threshold_runs`` of 64 answers, one caller spinning
10 µs more before each call, certified ε 0.37 at 5,000 calls per side; a caller whose code
between releases takes a fixed time shows nothing).
It never runs inside a deadline (not in a release made inside another, nor inside
``unpadded``).

**Cost** (outside every deadline). Within 50 µs of the last release of its function, the
check and the stamp: 2–5 µs at load 5–6, as before the light re-warm. A light re-warm
(median of 18, 2-core machine at load 5–7): 0.28 ms (``randomized_response``), 0.28
(``laplace_mechanism``), 0.38 (``gaussian_mechanism``), 0.36–0.41 (``above_threshold``).
``base2_exponential_mechanism``'s, two outcomes by its default method (its warm-up takes
no scalar: until breaker review 27 its light re-warm was one refusal, which warms nothing),
costs about twice ``laplace_mechanism``'s: 0.35 ms against 0.17–0.19 ms beyond a release
back to back, in the same run (median of 60, load 1.4).
A full one, after a 50 ms pause at load 5: ``randomized_response`` 1.0 ms,
``above_threshold`` 1.8, ``base2_exponential_mechanism`` 7.0, ``laplace_mechanism``
2.4–7.6, ``sample_releases`` 7.9, ``snapping_mechanism`` 8.4, ``sparse`` and
``above_threshold_runs`` 11, ``range_queries`` 12, ``gaussian_mechanism`` 13,
``choose_clip_bound`` 21 and ``auto_avg`` 33 ms; about the same once per function in a fork
child. **The trade-off:** a caller releasing back to back pays a light re-warm only when
other load stretches a gap past 50 µs (5–16 of 400 releases with gaps of 20 µs), but one
that leaves 0.1–1 ms between releases pays one on every release: over 400 releases at load
4–5, the mean call went from 0.11–0.12 ms to 0.65–0.91 ms (``randomized_response``, whose
deadline is about 60 µs), 0.86–0.96 to 1.15–1.74 ms (``laplace_mechanism``) and 0.90–0.98
to 1.46–1.88 ms (``gaussian_mechanism``). Re-warming fully after 1 ms instead (a shorter
:data:`REWARM_AFTER_NS`) helped as much after pauses of 1–3 ms (medians 0.29–0.46 of the
deadline, load 6.5–9) but cost 1.0–3.2 ms a release, and nothing below 1 ms: not taken.
(The threshold is :data:`LIGHT_REWARM_AFTER_NS`; no public setting changes it.)

**Measured.** The first release after ``warm_up()`` in 20 fresh processes per case, before
the re-warms (its work time over its margin-2 deadline, median, and how many of the 20
overran; load 5–9 on 2 cores; before → after the full re-warm):

================  ========================  ========================  ========================
release           after a 0.1 s sleep       after a 1 s sleep         first in a fork child
================  ========================  ========================  ========================
randomized resp.  2.85, 20/20 → 0.47, 0/20  3.23, 20/20 → 0.46, 1/20  17.4, 20/20 → 0.56, 1/20
laplace           1.08, 19/20 → 0.28, 0/20  1.20, 20/20 → 0.27, 0/20  5.19, 20/20 → 0.31, 0/20
gaussian          1.32, 20/20 → 0.37, 0/20  1.44, 19/20 → 0.37, 0/20  13.2, 20/20 → 0.42, 0/20
above_threshold   0.82,  4/20 → 0.18, 1/20  0.97,  6/20 → 0.18, 1/20  6.52, 20/20 → 0.24, 1/20
================  ========================  ========================  ========================

Short pauses and seeded sources (the same measure, after 5 releases back to back and a
sleep; 3 fresh processes × 3 sleeps per case, load 5.1–6.8 on 2 cores; median, and
overruns of 9, of 18 after the longer sleeps; before the light re-warm and the seeded
re-warm → after):

================  ==================  ==================  ==================  ====================
release           0.1 ms              1 ms                3 ms                10 and 50 ms
================  ==================  ==================  ==================  ====================
randomized resp.  1.00, 5 → 0.37, 0   1.21, 9 → 0.37, 0   1.80, 9 → 0.39, 1   0.33, 0 → 0.34, 0
  seeded source   1.04, 7 → 0.58, 0   1.34, 9 → 0.61, 1   1.42, 8 → 0.63, 0   1.29, 18 → 0.57, 3
laplace           0.45, 1 → 0.32, 0   0.53, 2 → 0.35, 0   0.71, 2 → 0.33, 0   0.30, 0 → 0.30, 0
  seeded source   0.56, 1 → 0.37, 0   0.44, 0 → 0.34, 0   0.58, 1 → 0.36, 0   0.42, 1 → 0.33, 0
gaussian          0.64, 3 → 0.44, 0   0.66, 1 → 0.47, 0   0.74, 3 → 0.49, 0   0.41, 0 → 0.41, 1
  seeded source   0.69, 1 → 0.52, 0   0.68, 0 → 0.52, 0   0.80, 2 → 0.52, 0   0.55, 0 → 0.48, 2
================  ==================  ==================  ==================  ====================

(``above_threshold`` runs in steps, the last of which stayed below 0.03 of its deadline in
every case, before and after.) A seeded ``randomized_response`` overran in 18 of 18
releases after a full re-warm with the default source only, and in 3 of 18 now.

**What remains.** (1) Warmth is kept per function, not per path: after 0.1 s of releases
back to back on one path (``laplace_mechanism`` on scalars, say), a release on another path
of the same function (65 values, 1000 values, a list) took a median 0.70–0.91 of its
deadline against 0.42–0.57 on the same path, and overran in 3–7 of 18 trials against 2–4
(load 7.5–8.1). Keying warmth on the request's path needs the path before the clock from
public inputs only: the first argument's length will not do (for ``choose_clip_bound`` and
``auto_avg`` it is the number of rows, private; their public size is ``max_rows``), so each
release would have to name its public path to :func:`dpkit.timing.run_padded`; not done.
(2) A source of the caller's own class (not a seeded one) runs its code cold after a pause:
the re-warm cannot make a new one with fixed public state, and a copy of it might replay
its bytes. (3) Other load can still take the core mid-release (the single overruns left).

Private: :mod:`dpkit.timing` is the interface.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit.rng import SeededRandom, seeded

__all__ = ["LIGHT_REWARM_AFTER_NS", "PADDED_WARM_UP_ROUNDS", "REWARM_AFTER_NS", "SMALL_MAX",
           "WARM_UP_ROUNDS", "call_releases", "cold", "end_warm_up", "pending", "registered",
           "released", "rewarm_source", "start_warm_up", "warm_up_calls", "warm_up_values",
           "warm_up_with"]

#: Requests of up to this many values use the fixed-cost samplers and their own costs.
SMALL_MAX = 64
#: A work function not released for this long (ns, by :func:`time.perf_counter_ns`) is
#: re-warmed before its next release: a public clock reading, never the data.
REWARM_AFTER_NS = 10_000_000
#: A work function not released for this long (ns), but not for :data:`REWARM_AFTER_NS`,
#: gets a light re-warm: its first warm-up value once through the padded path.
LIGHT_REWARM_AFTER_NS = 50_000
#: How many times each warm-up runs with each source (:func:`warm_up_with`): Python 3.11
#: specialises a function's code after 8 calls or so.
WARM_UP_ROUNDS = 8
#: How many of those rounds, the last ones, run padded (:func:`warm_up_with`): the wait, the
#: jitter and its pool of OS bytes are then warm too. Their waits end at most
#: ``dpkit.timing._WARM_UP_WAIT_NS`` after the work (some deadlines are long, set by a public
#: bound such as ``max_rows`` in :mod:`dpkit.svt`), and their overruns are not counted.
PADDED_WARM_UP_ROUNDS = 1

#: work function -> its warm-up releases not yet run (:func:`warm_up_with`).
pending: dict[Callable[..., Any], list[Callable[[Any, Any], object]]] = {}
#: work function -> its warm-up releases while they run (put back in :data:`pending` in a fork
#: child: a warm-up cut short by the fork runs again).
_running: dict[Callable[..., Any], list[Callable[[Any, Any], object]]] = {}
#: work function -> its warm-up releases, once its first warm-up has run (kept to re-warm).
registered: dict[Callable[..., Any], list[Callable[[Any, Any], object]]] = {}
#: work function -> ``perf_counter_ns()`` when its last release ended.
_last: dict[Callable[..., Any], int] = {}
_lock = threading.Lock()


def warm_up_with(work: Callable[..., Any], release: Callable[[Any, Any], object]) -> None:
    """Warm ``work`` up before its first deadline, so first-use work falls outside every
    release (residual risk 5 in :mod:`dpkit.timing`).

    The first time :func:`dpkit.timing.run_padded` is called with ``work`` in a process, before its
    clock starts, it first calls ``release(value, rng)`` on each of :func:`warm_up_values` (scalars,
    short and long float64 arrays, an int64 array, lists of floats, Decimals, Fractions and large
    ints, a list holding a NaN), :data:`WARM_UP_ROUNDS` times with the default source (``rng=None``)
    and as many with a seeded one (a source's code is warmed by use too): inside
    :func:`dpkit.timing.unpadded` but for the last :data:`PADDED_WARM_UP_ROUNDS`, which run the
    padded path (the deadline, the jitter, the busy loop), each wait cut to at most
    ``dpkit.timing._WARM_UP_WAIT_NS``, their overruns not counted.
    ``release`` makes releases of ``value`` through ``work`` (the function's other arguments fixed
    and public, ``rng`` passed on); its outputs are discarded, and a ``ValueError`` or ``TypeError``
    (a kind the function refuses, the NaN) is the point for the refusal path, and is dropped.

    **Guarantee.** The first-use work of the paths the warm-up takes (every value kind,
    both sources, the wait itself) is done before the first release's clock starts, so it
    does not make that release overrun; a path it does not take (a source of the caller's
    own class) still can (residual risk 5).

    Parameters
    ----------
    work : callable
        The work function a release passes to :func:`dpkit.timing.run_padded`.
    release : callable
        ``release(value, rng)``. Several may be given for one ``work`` (a release and its
        vectorised runs), by several calls.

    Returns
    -------
    None
        Registered only: it runs once per process, at the first
        :func:`dpkit.timing.run_padded` of ``work`` or at :func:`dpkit.timing.warm_up`.

    Raises
    ------
    Exception
        Nothing here; an error other than ``ValueError`` or ``TypeError`` raised by
        ``release`` during the warm-up propagates from that first
        :func:`dpkit.timing.run_padded`.

    Examples
    --------
    >>> from dpkit.timing import Cost, run_padded, warm_up_with
    >>> def work(clock, value):
    ...     clock.size(1)
    ...     return value * 2
    >>> sources = []
    >>> def release(value, rng):
    ...     sources.append("default" if rng is None else "seeded")
    ...     return run_padded(Cost(fixed=0.0), work, value)
    >>> warm_up_with(work, release)
    >>> run_padded(Cost(fixed=0.0), work, 21)   # warms ``work`` up first, then releases
    42
    >>> sorted(set(sources)), sources.count("default") == sources.count("seeded")
    (['default', 'seeded'], True)
    >>> before = len(sources)
    >>> run_padded(Cost(fixed=0.0), work, 1), len(sources) < 2 * before  # once (a re-warm is short)
    (2, True)
    """
    with _lock:
        pending.setdefault(work, []).append(release)


def warm_up_calls(work: Callable[..., Any], function: Callable[..., Any], *args: Any,
                  prepare: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
    """Warm ``work`` up with calls of a release function on each warm-up value: the usual
    :func:`warm_up_with` (and its guarantee), whose ``release`` is
    ``function(prepare(value), *args, rng=rng, **kwargs)``.

    Parameters
    ----------
    work : callable
        The work function ``function`` passes to :func:`dpkit.timing.run_padded`.
    function : callable
        The public release function, called with the value first and ``rng`` by keyword.
    *args, **kwargs
        Its other arguments: fixed public values.
    prepare : callable, optional
        Turns each warm-up value into the value ``function`` takes (queries answering it,
        bits); default: the value as it is.

    Returns
    -------
    None

    Raises
    ------
    Exception
        As :func:`warm_up_with`.

    Examples
    --------
    >>> from dpkit.timing import Cost, run_padded, warm_up_calls
    >>> def work(clock, values):
    ...     clock.size(len(values))
    ...     return [v * 2 for v in values]
    >>> calls = []
    >>> def double(values, scale, *, rng=None):
    ...     calls.append((type(values).__name__, scale, rng is None))
    ...     return run_padded(Cost(fixed=0.0), work, values)
    >>> warm_up_calls(work, double, 3, prepare=lambda value: [value])
    >>> double([21], 3)
    [42]
    >>> sorted(set(calls))   # prepared values; the seeded source, then the default one
    [('list', 3, False), ('list', 3, True)]
    """
    def release(value: Any, rng: Any) -> object:
        return function(value if prepare is None else prepare(value), *args, rng=rng,
                        **kwargs)

    warm_up_with(work, release)


def start_warm_up(work: Callable[..., Any]) -> list[Callable[[Any, Any], object]] | None:
    """The warm-up releases of ``work`` to run now, moved from :data:`pending` to the running
    ones; None if there are none (run already, or by another thread meanwhile)."""
    with _lock:
        releases = pending.pop(work, None)
        if releases is not None:
            _running[work] = releases
    return releases


def end_warm_up(work: Callable[..., Any]) -> None:
    """The warm-up of ``work`` has ended (run, or cut short by an error)."""
    with _lock:
        del _running[work]


def warm_up_values() -> list[Any]:
    """Public inputs of every kind and size class a release takes different paths on."""
    return [0.5, 0.1, 2**60 + 1, np.linspace(0.0, 1.0, 4), np.linspace(0.0, 1.0, SMALL_MAX + 1),
            np.arange(SMALL_MAX + 1), [0.1, 0.5], [Decimal("0.1")] * 2, [Fraction(1, 3)] * 2,
            [2**60 + 1] * 2, [0.1, float("nan")]]


def call_releases(releases: Iterable[Callable[[Any, Any], object]], values: list[Any],
                  sources: Iterable[Any], rounds: int) -> None:
    """Call each warm-up ``release(value, rng)`` on every value, ``rounds`` times with each
    source; refusals (``ValueError``, ``TypeError``) are the path warmed, and are dropped."""
    for rng in sources:
        for _ in range(rounds):
            for release in releases:
                for value in values:
                    try:
                        release(value, rng)
                    except (TypeError, ValueError):
                        pass


def cold(work: Callable[..., Any]) -> str | None:
    """The re-warm ``work`` needs, if warmed up once: ``"full"`` if no release of it ended in
    the last :data:`REWARM_AFTER_NS` (none at all in a fork child), ``"light"`` if none in
    the last :data:`LIGHT_REWARM_AFTER_NS`, else None."""
    if work not in registered:
        return None
    with _lock:
        last = _last.get(work)
    pause = None if last is None else time.perf_counter_ns() - last
    if pause is None or pause > REWARM_AFTER_NS:
        return "full"
    return "light" if pause > LIGHT_REWARM_AFTER_NS else None


def rewarm_source(args: tuple[Any, ...]) -> Any:
    """The source a re-warm uses: a new ``seeded(0)`` if a release's arguments hold a seeded
    source (the seeded code is warmed; the caller's source is never called, so none of its
    bytes are read), else None (the default source). Which kind of source a caller passes
    is the caller's choice, public."""
    for arg in args:
        if isinstance(arg, SeededRandom):
            return seeded(0)
    return None


def released(work: Callable[..., Any]) -> None:
    """Stamp the end of a release (or a warm-up) of ``work`` with the clock."""
    now = time.perf_counter_ns()
    with _lock:
        _last[work] = now


def _forget() -> None:
    """In a child created by ``fork``: every function is cold (its pages are copied at
    first touch), a warm-up a parent thread was running runs again, and the lock is new (a
    parent thread may have held it)."""
    global _lock
    _lock = threading.Lock()
    _last.clear()
    pending.update(_running)
    _running.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
