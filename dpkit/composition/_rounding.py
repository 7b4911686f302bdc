"""Directed rounding and exact float search, shared by every module of :mod:`dpkit.composition`.

The contexts below implement the package's rounding rule (composed epsilons and deltas
rounded *up*, per-mechanism budgets *down*; see :mod:`dpkit.composition`):
:func:`round_up` and :func:`round_down` round each IEEE double operation the safe way,
:func:`wide_round_up` keeps MPFR's exponent range for intermediate results, and
:func:`exact_context` sums floats without error. :func:`largest_float_below` and
:func:`smallest_float_above` invert a monotone bound exactly by bisecting over the floats'
bit patterns with :func:`first_failing`, the integer bisection every search here shares.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gmpy2
import numpy as np


def round_up() -> gmpy2.context:
    """An IEEE double context rounding every operation towards +infinity."""
    return gmpy2.context(gmpy2.ieee(64), round=gmpy2.RoundUp)


def round_down() -> gmpy2.context:
    """An IEEE double context rounding every operation towards -infinity."""
    return gmpy2.context(gmpy2.ieee(64), round=gmpy2.RoundDown)


def wide_round_up() -> gmpy2.context:
    """A 53-bit context rounding up, with MPFR's wide exponent range: intermediate results
    neither underflow to a subnormal (which would lose all relative precision) nor overflow;
    the final value is converted to a double with :func:`float_up`."""
    return gmpy2.context(precision=53, round=gmpy2.RoundUp)


def exact_context() -> gmpy2.context:
    """A context wide enough that sums of floats are exact (2200 bits cover the whole double
    range, 2^-1074 to 2^1024, with 100 bits to spare for carries), rounding up if ever not."""
    return gmpy2.context(precision=2200, round=gmpy2.RoundUp)


def float_up(value: Any) -> float:
    """``value`` (an exact or wide mpfr) rounded up to a double."""
    with round_up():
        return float(gmpy2.mpfr(value))


def float_down(value: Any) -> float:
    """``value`` (an exact or wide mpfr) rounded down to a double."""
    with round_down():
        return float(gmpy2.mpfr(value))


def finite(value: Any, what: str) -> float:
    """Return ``float(value)``; raise OverflowError if the bound does not fit a float."""
    result = float(value)
    if not math.isfinite(result):
        raise OverflowError(f"{what} overflows a float; the inputs are too large to be "
                            f"a meaningful privacy guarantee")
    return result


def log_inv_up(delta: float) -> gmpy2.mpfr:
    """An upper bound on ``ln(1/delta)``: ``-ln(delta)`` with the log rounded down (exact
    negation), which cannot overflow even for subnormal ``delta``."""
    with round_down():
        return -gmpy2.log(gmpy2.mpfr(delta))


def first_failing(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest integer ``n`` in ``(low, high]`` with ``not holds(n)``, by bisection.

    ``holds`` must be monotone (true on an initial segment), true at ``low`` and false at
    ``high``; neither end is evaluated.
    """
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            low = middle
        else:
            high = middle
    return high


def _bits(value: float) -> int:
    """The bit pattern of a float >= 0: an integer that orders the floats as they compare."""
    return np.float64(value).view(np.int64).item()


def _float(bits: int) -> float:
    return np.int64(bits).view(np.float64).item()


def largest_float_below(predicate: Any, low: float, high: float) -> float:
    """Largest float ``x`` in ``[low, high]`` with ``predicate(x)``, for a monotone predicate.

    ``predicate(low)`` must hold and ``predicate`` must be true on an initial segment.
    Bisects on the floats' bit patterns, so it ends exactly (at most 64 evaluations).
    """
    if predicate(high):
        return high
    return _float(first_failing(lambda bits: predicate(_float(bits)), _bits(low), _bits(high)) - 1)


def smallest_float_above(predicate: Any, low: float, high: float) -> float:
    """Smallest float ``x`` in ``(low, high]`` with ``predicate(x)``; ``predicate(high)``
    must hold, ``predicate(low)`` must not, and ``predicate`` must be monotone."""
    return _float(first_failing(lambda bits: not predicate(_float(bits)), _bits(low), _bits(high)))
