"""Which release functions have gone cold, and the fixed public inputs that warm them up
(:mod:`dpkit.timing`: the first warm-up, and the short re-warm after a pause or a fork).

A release function warmed up once (:func:`dpkit.timing.warm_up_with`) goes cold again: during
a pause other processes empty the CPU's caches of its code and data, and in a child created
by ``fork`` each page it touches first is copied (about 260–410 minor page faults in the
first release). Either made the next release overrun its deadline, and an overrun shows
the data. So the end of each release of a work function that returned is stamped with the
clock (:func:`released`; a refused call, before its clock or after, is no warmth: refusals
every few ms once kept a function's stamp fresh while its release paths went cold, breaker
review 8), a fork child forgets every stamp, and a release of a function whose
stamp is missing or older than :data:`REWARM_AFTER_NS` (10 ms) first re-runs a short
warm-up, before its clock starts (:func:`cold`, ``dpkit.timing._rewarm``): its warm-up
releases once on every value of :func:`warm_up_values` with the default source, unpadded,
then once on the first through the padded path (short waits). Its inputs are fixed public
values and it sees none of the release's arguments, so it does the same work whatever the
data; whether it runs depends on a clock reading (the time since the last release, which
ended at its deadline) and on the fork, never on the data. It never runs inside a
deadline (not in a release made inside another, nor inside ``unpadded``).

**Cost.** For a release within 10 ms of the last one of its function, the check and the
stamp, about 0.8 µs, both outside the deadline. Otherwise,
one re-warm (median of 9, after a 50 ms pause, 2-core machine at load 5):
``randomized_response`` 1.0 ms, ``above_threshold`` 1.8, ``base2_exponential_mechanism`` 7.0,
``laplace_mechanism`` 2.4–7.6, ``sample_releases`` 7.9, ``snapping_mechanism`` 8.4,
``sparse`` and ``above_threshold_runs`` 11, ``range_queries`` 12, ``gaussian_mechanism`` 13,
``choose_clip_bound`` 21 and ``auto_avg`` 33 ms; about the same once per function in a fork
child. A caller releasing more often than every 10 ms never pays it.

**Measured** (the first release after ``warm_up()`` in 20 fresh processes per case: its work
time over its margin-2 deadline, median, and how many of the 20 overran; load 5–9 on 2
cores; before → after):

================  ========================  ========================  ========================
release           after a 0.1 s sleep       after a 1 s sleep         first in a fork child
================  ========================  ========================  ========================
randomized resp.  2.85, 20/20 → 0.47, 0/20  3.23, 20/20 → 0.46, 1/20  17.4, 20/20 → 0.56, 1/20
laplace           1.08, 19/20 → 0.28, 0/20  1.20, 20/20 → 0.27, 0/20  5.19, 20/20 → 0.31, 0/20
gaussian          1.32, 20/20 → 0.37, 0/20  1.44, 19/20 → 0.37, 0/20  13.2, 20/20 → 0.42, 0/20
above_threshold   0.82,  4/20 → 0.18, 1/20  0.97,  6/20 → 0.18, 1/20  6.52, 20/20 → 0.24, 1/20
================  ========================  ========================  ========================

The worst of the 20 went from 2.1–643 times the deadline to 0.32–13.7 (the one overrun of
a case: other load taking the core mid-release).

**What remains.** A pause shorter than 10 ms also cools a function on a loaded machine (the
first ``randomized_response`` after a 1 ms sleep took about 2 times its deadline in 8 of 8
processes at load 10, and still does); a release with a seeded source after a
pause runs the seeded source's code cold (the re-warm uses the default source only); and
other load can still take the core mid-release (the single overruns left, 1 in 20).

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

__all__ = ["REWARM_AFTER_NS", "SMALL_MAX", "call_releases", "cold", "registered", "released",
           "warm_up_values"]

#: Requests of up to this many values use the fixed-cost samplers and their own costs.
SMALL_MAX = 64
#: A work function not released for this long (ns, by :func:`time.perf_counter_ns`) is
#: re-warmed before its next release: a public clock reading, never the data.
REWARM_AFTER_NS = 10_000_000

#: work function -> its warm-up releases, once its first warm-up has run (kept to re-warm).
registered: dict[Callable[..., Any], list[Callable[[Any, Any], object]]] = {}
#: work function -> ``perf_counter_ns()`` when its last release ended.
_last: dict[Callable[..., Any], int] = {}
_lock = threading.Lock()


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


def cold(work: Callable[..., Any]) -> bool:
    """Whether ``work``, warmed up once, has no release ending in the last
    :data:`REWARM_AFTER_NS` (none at all in a fork child): it needs a re-warm."""
    if work not in registered:
        return False
    with _lock:
        last = _last.get(work)
    return last is None or time.perf_counter_ns() - last > REWARM_AFTER_NS


def released(work: Callable[..., Any]) -> None:
    """Stamp the end of a release (or a warm-up) of ``work`` with the clock."""
    now = time.perf_counter_ns()
    with _lock:
        _last[work] = now


def _forget() -> None:
    """In a child created by ``fork``: every function is cold (its pages are copied at
    first touch), and the lock is new (a parent thread may have held it)."""
    global _lock
    _lock = threading.Lock()
    _last.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
