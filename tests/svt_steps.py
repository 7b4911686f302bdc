"""What the breaker reviews of the sparse vector functions' steps share (41 to 44): answers
the noise never crosses, the exact conversion before any test wraps it, the three releases
at one run's ε of 1, and a stream whose clean-up the tests watch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dpkit.svt.core as core
from dpkit.rng import seeded
from dpkit.svt import above_threshold, range_queries, sparse

HIGH, LOW = 10**30, -(10**30)   # never crossed by the noise at the ε used here

#: The exact conversion of query answers, before any test wraps it.
CONVERT = core.as_fraction

#: name -> release(queries, c) at one run's ε of 1.
RELEASES: dict[str, Callable[[Any, int], Any]] = {
    "above_threshold": lambda q, c: above_threshold(q, None, 0, 1.0, rng=seeded(42)),
    "sparse": lambda q, c: sparse(q, None, 0, 1.0 * c, c, rng=seeded(42)),
    "range_queries": lambda q, c: range_queries(q, None, c, 0, 2.0 * c, rng=seeded(42)),
}


class HighStream:
    """An iterable whose ``__iter__`` is a generator (the caller's code) of queries answering
    :data:`HIGH`, which calls ``on_close`` in its ``finally``."""

    def __init__(self, on_close: Callable[[], None]) -> None:
        self.on_close = on_close

    def __iter__(self) -> Iterator[Callable[[Any], Any]]:
        try:
            while True:
                yield lambda data: HIGH
        finally:
            self.on_close()


def freed_in_last_step(events: list[Any], marker: str) -> tuple[int, int]:
    """From a release's recorded ``events`` (a wait is a tuple whose second item is the objects
    its step charged): how many ``marker`` events fell in the last step, between the last two
    waits, and the objects that step charged."""
    waits = [i for i, event in enumerate(events) if isinstance(event, tuple)]
    return events[waits[-2]:waits[-1]].count(marker), events[waits[-1]][1]
