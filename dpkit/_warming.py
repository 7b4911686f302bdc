"""Which release functions have gone cold, and the fixed public inputs that warm them up
(:mod:`dpkit.timing`: its first warm-up, and the short re-warm after a pause or a fork).

A release function warmed up once (:func:`dpkit.timing.warm_up_with`) goes cold again: after
a pause its code and data leave the CPU's caches (other processes run meanwhile), and in a
child created by ``fork`` every page it touches first is copied (about 300–600 minor page
faults). Either made the next release overrun its deadline many times over (measured on a
loaded 2-core machine: 2–3.5 times after a sleep of 1 ms to 1 s, about 18 times in a fork
child), and an overrun shows the data. So each work function's last release is stamped
with the clock (:func:`released`), a fork child forgets every stamp, and the next release
of a function whose stamp is missing or older than :data:`REWARM_AFTER_NS` first re-runs a
short warm-up of it (:func:`cold`; run by :func:`dpkit.timing.run_padded`).

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
