"""This machine's speed, in the units of the releases' deadlines (:mod:`dpkit.timing`).

A deadline is a few constants (:class:`dpkit.timing.Cost`) times the time of fixed
workloads measured once per process: :func:`scalar_workload` (exact rational arithmetic of
the size of one scalar release's) and :func:`vector_workload` (one value's share of a
vectorised release). The workloads use no data, so the deadlines computed from them depend
on public quantities only; :func:`measure` keeps the fastest of :data:`REPEATS` runs of
each, so a busy moment at calibration lengthens the deadlines little.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["REPEATS", "VECTOR_VALUES", "Reference", "fastest", "measure", "scalar_workload",
           "vector_workload"]

#: Calibration: the fastest of this many runs of each workload.
REPEATS = 7
#: Values in the vectorised calibration workload.
VECTOR_VALUES = 8192


@dataclass(frozen=True)
class Reference:
    """This machine's speed, measured once per process (:func:`reference`).

    Attributes
    ----------
    scalar : float
        Seconds for a fixed workload of exact rational arithmetic of the kind one scalar
        release does (about 20 µs on a 2024 laptop core).
    vector : float
        Seconds per value of a fixed vectorised float64/int64 workload on 8,192 values.
    """

    scalar: float
    vector: float


def scalar_workload() -> None:
    """Exact arithmetic of the size of one scalar release's (fixed: no data)."""
    value = Fraction(7, 10)
    for shift in range(10):
        numerator, denominator = value.as_integer_ratio()
        quotient, remainder = divmod(numerator << 60, denominator << (shift & 15))
        value = Fraction(quotient + (remainder > denominator // 2), 1 << 50) + Fraction(1, 3)
    np.add(np.arange(8), 1)


def vector_workload(values: np.ndarray) -> None:
    """A vectorised pass of the size of one value's share of a vector release's."""
    scaled = np.rint(values * 1024.0)
    units = scaled.astype(np.int64)
    units += units
    np.multiply(units, 2.0**-10)


def fastest(work: object, repeats: int = REPEATS) -> float:
    """The fewest seconds ``work()`` took in ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        work()  # type: ignore[operator]
        best = min(best, time.perf_counter_ns() - start)
    return best * 1e-9


def measure() -> Reference:
    """Time the two workloads now: the fastest of :data:`REPEATS` runs of each.

    Returns
    -------
    Reference
        ``scalar`` in seconds, ``vector`` in seconds per value.

    >>> ref = measure()
    >>> 0 < ref.vector < ref.scalar
    True
    """
    values = np.linspace(-1.0, 1.0, VECTOR_VALUES)
    return Reference(scalar=fastest(scalar_workload),
                     vector=fastest(lambda: vector_workload(values)) / VECTOR_VALUES)
