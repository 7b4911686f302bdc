"""Exact arithmetic shared by the samplers: rational floors and roots, rigorous MPFR brackets
of ``exp(-y)`` and of the logistic function, lazily computed binary expansions, and the
public size thresholds.

The bottom of :mod:`dpkit._samplers`: it imports nothing else from the package. An
:class:`Expansion` holds the binary digits of an irrational probability (``exp`` of a
nonzero rational, irrational by Lindemann's theorem), computed to the precision a
comparison needs and cached, so every random comparison against it is exact.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._exact import as_fraction
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

# Sizes and ranges, public: every choice made from them depends on a request's size or on
# public parameters, never on the values drawn or the data.
FIXED_MAX = 64           # requests of up to 64 values: fixed-cost samplers, exact grid arithmetic
INT64_SAFE = 2**62       # integers below this (in absolute value) are kept in int64 arrays
MARGIN = 2.0**-44        # relative width of float brackets: 512 units of roundoff, >= 64x the need


# ------------------------------------------------------------------ validation and integers

def positive_fraction(value: Any, name: str) -> Fraction:
    """Return ``value`` (int, Fraction or float) as an exact positive :class:`Fraction`."""
    result = as_fraction(value, name)
    if result <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return result


def nonnegative_fraction(value: Any, name: str) -> Fraction:
    """Return ``value`` (int, Fraction or float) as an exact :class:`Fraction` >= 0."""
    result = as_fraction(value, name)
    if result < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return result


def check_source(rng: Any) -> RandomSource:
    """The samplers here are internal: they require an explicit source."""
    if not isinstance(rng, RandomSource):
        raise TypeError(f"rng must be a dpkit.rng.RandomSource (use dpkit.rng.resolve), got "
                        f"{rng!r} of type {type(rng).__name__}")
    return rng


def floor_sqrt(value: Fraction) -> int:
    """``floor(sqrt(value))`` exactly, for a rational ``value >= 0``."""
    return math.isqrt(value.numerator // value.denominator)


def floor_log2(value: Fraction) -> int:
    """``floor(log2(value))`` exactly, for a rational ``value > 0``."""
    guess = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** guess > value:
        guess -= 1
    return guess


def ceil_sqrt(count: int) -> Fraction:
    """A dyadic upper bound on ``sqrt(count)`` within ``2**-32`` (exact for squares)."""
    root = math.isqrt(count)
    if root * root == count:
        return Fraction(root)
    return Fraction(math.isqrt(count << 64) + 1, 1 << 32)


# ----------------------------------------------- binary expansions of irrational thresholds

_DOWN = gmpy2.RoundDown
_UP = gmpy2.RoundUp


def _logistic_bounds(y: Fraction, precision: int) -> tuple[Any, Any]:
    """Rigorous MPFR bounds ``lo <= 1/(1 + exp(y)) <= hi`` (``y`` rational)."""
    q = gmpy2.mpq(y.numerator, y.denominator)
    with gmpy2.context(precision=precision, round=_UP):
        big = 1 + gmpy2.exp(gmpy2.mpfr(q))
    with gmpy2.context(precision=precision, round=_DOWN):
        small = 1 + gmpy2.exp(gmpy2.mpfr(q))
        lo = 1 / big
    with gmpy2.context(precision=precision, round=_UP):
        hi = 1 / small
    return lo, hi


def exp_neg_bounds(y: Fraction, precision: int) -> tuple[Any, Any]:
    """Rigorous MPFR bounds ``lo <= exp(-y) <= hi`` (``y`` rational)."""
    q = gmpy2.mpq(y.numerator, y.denominator)
    with gmpy2.context(precision=precision, round=_UP):
        y_up = gmpy2.mpfr(q)
    with gmpy2.context(precision=precision, round=_DOWN):
        y_down = gmpy2.mpfr(q)
        lo = gmpy2.exp(-y_up)
    with gmpy2.context(precision=precision, round=_UP):
        hi = gmpy2.exp(-y_down)
    return lo, hi


class Expansion:
    """The binary expansion of a real ``q`` in (0, 1), one byte at a time, exactly.

    ``bounds(precision)`` must return MPFR numbers ``lo <= q <= hi`` that tighten as the
    precision grows. ``q`` must not be a dyadic rational (the expansions used here are of
    ``exp`` of a nonzero rational, irrational by Lindemann's theorem), so every prefix is
    eventually determined.
    """

    def __init__(self, bounds: Callable[[int], tuple[Any, Any]]) -> None:
        self._bounds = bounds
        self._bytes: list[int] = []
        self._lock = threading.Lock()

    def byte(self, level: int) -> int:
        """Byte ``level`` (0 = most significant): ``floor(q·256**(level+1)) % 256``.

        Thread-safe: the cache only grows, under a lock, so a thread never sees a shorter list.
        """
        known = self._bytes
        if level < len(known):
            return known[level]
        with self._lock:
            if level >= len(self._bytes):
                count = max(level + 1, 2 * len(self._bytes), 8)
                prefix = self._prefix(8 * count)
                self._bytes = [(prefix >> (8 * (count - 1 - j))) & 0xFF for j in range(count)]
            return self._bytes[level]

    def bounds(self, precision: int) -> tuple[Any, Any]:
        """Rigorous bounds ``lo <= q <= hi`` at ``precision`` bits (tighter as it grows)."""
        return self._bounds(precision)

    def _prefix(self, nbits: int) -> int:
        precision = nbits + 64
        while True:
            lo, hi = self._bounds(precision)
            a = floor_scaled(lo, nbits)
            b = min(floor_scaled(hi, nbits), (1 << nbits) - 1)   # q < 1, even if hi = 1
            if a == b:
                return a
            precision *= 2


_MPFR = type(gmpy2.mpfr(0))


def floor_scaled(value: Any, nbits: int) -> int:
    """``floor(value · 2**nbits)`` exactly, for a finite MPFR number (or a Fraction) ``value``.

    A value in ``[0, 2**-nbits)`` gives 0 at once: its ratio's denominator can have
    ``2**30`` bits (``exp(-y)`` for a huge ``y`` rounds up to the least MPFR number), whose
    division took 0.6 s.
    """
    if isinstance(value, _MPFR) and value >= 0 and (value == 0
                                                     or gmpy2.get_exp(value) <= -nbits):
        return 0                            # value < 2**get_exp(value) <= 2**-nbits
    numerator, denominator = value.as_integer_ratio()
    return int((int(numerator) << nbits) // int(denominator))


@public_table(maxsize=4096)
def logistic_expansion(y: Fraction) -> Expansion:
    """Expansion of ``1 / (1 + exp(y))``: P[digit = 1] of a geometric with ``ln(1/p)·2**i = y``."""
    return Expansion(functools.partial(_logistic_bounds, y))


@public_table(maxsize=4096)
def exp_neg_expansion(y: Fraction) -> Expansion:
    """Expansion of ``exp(-y)``."""
    return Expansion(functools.partial(exp_neg_bounds, y))


# ------------------------------------------------------------------------ integer arrays

def as_int_array(values: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """Python ints as an int64 array, or an object array if one does not fit."""
    if all(-INT64_SAFE < v < INT64_SAFE for v in values):
        return np.array(values, dtype=np.int64).reshape(shape)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array.reshape(shape)


def object_ints(items: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """Python ints as an object array of ``shape`` (the exact path keeps them unbounded)."""
    result = np.empty(len(items), dtype=object)
    result[:] = items
    return result.reshape(shape)
