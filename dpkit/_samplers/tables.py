"""Tables built once per public parameter, with their build time kept out of deadlines.

The samplers keep tables keyed by a public parameter (a scale, ``σ²``): the fixed-cost
sampler's digit plan, the block envelope, the Gaussian's constants. Each is built at its
first use, which falls inside a release, and takes 0.2–50 ms: up to hundreds of times a
scalar release's deadline. A release that builds one would overrun its deadline, and an
overrunning release ends at a time that depends on its data. :func:`public_table` caches
such a builder (least recently used, as :func:`functools.lru_cache`) and passes the time
of each build, measured around the one cache lookup that built it (the build and the
eviction it caused) by the thread that built it, to :func:`dpkit.timing.public_work_took`,
which moves the deadlines running on that thread back by it. A build is public
work (its input is a public parameter), so moving the deadline by its time reveals the
parameter's cost, not the data.

Residual: whether a release builds a table depends on which were built before (the cache
state), and so does its time; that history is public except where the data choose the
parameter (the noise scale of the clipped sum in :func:`dpkit.svt.auto_avg` depends on the
bound chosen), where a later release's time can tell whether a table for that scale was
already there. A table evicted from a full cache is rebuilt, and counted the same way.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from dpkit import timing

__all__ = ["public_table"]

Builder = TypeVar("Builder", bound=Callable[..., Any])

_local = threading.local()


def public_table(maxsize: int) -> Callable[[Builder], Builder]:
    """Cache a builder of tables keyed by public parameters; report each build's time.

    Parameters
    ----------
    maxsize : int
        How many tables to keep (least recently used first out).

    Returns
    -------
    callable
        A decorator: the cached builder, with ``cache_info`` and ``cache_clear``. A lookup
        probes the cache once; on a miss, the time of that lookup (the build, and the
        eviction it caused) is reported by the thread that built, once: a build inside
        another build is counted in the outer one only. A build that raises is reported
        too, and caches nothing.

    Raises
    ------
    Exception
        Whatever the builder raises (and ``TypeError`` for an unhashable argument).

    **Guarantee.** A release that builds a table ends at its deadline moved back by the
    build's time (:func:`dpkit.timing.public_work_took`), so a build does not make it
    overrun; the builder's arguments must be public parameters (see the module notes for
    what the cache's state still shows).

    Examples
    --------
    >>> from dpkit._samplers.tables import public_table
    >>> @public_table(maxsize=8)
    ... def squares(n):
    ...     return tuple(k * k for k in range(n))
    >>> squares(4)
    (0, 1, 4, 9)
    >>> squares(4) is squares(4)          # built once, then looked up
    True
    >>> squares.cache_info().misses
    1
    """
    def decorate(build: Builder) -> Builder:
        def build_noting_it(*args: Any) -> Any:
            _local.built = True       # called by the cache on a miss only, in this thread
            return build(*args)

        cached = functools.lru_cache(maxsize=maxsize)(build_noting_it)

        @functools.wraps(build)
        def table(*args: Any) -> Any:
            if getattr(_local, "building", False):
                return cached(*args)  # inside an outer build: counted in the outer one
            _local.building = True
            _local.built = False
            start = time.perf_counter_ns()
            try:
                return cached(*args)  # one probe; a miss builds (and evicts) in this window
            finally:
                took = time.perf_counter_ns() - start
                _local.building = False
                if _local.built:
                    timing.public_work_took(took)

        table.cache_info = cached.cache_info  # type: ignore[attr-defined]
        table.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return table  # type: ignore[return-value]
    return decorate
