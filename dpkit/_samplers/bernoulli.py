"""Exact Bernoulli trials from random bits, and geometric variables from their digits.

* :func:`bernoulli_exp`: ``True`` with probability ``exp(-gamma)`` for a rational
  ``gamma >= 0`` (Canonne, Kamath & Steinke 2020, Algorithm 1), one trial at a time.
* :func:`bernoulli_matrix`: many trials against irrational thresholds at once, each
  comparing uniformly random bytes with the threshold's binary expansion until they differ.
* :func:`fixed_bernoulli`, :func:`fixed_plan`, :func:`fixed_geometric`: the fixed-cost
  trials (64 random bits each, whatever the outcome) and the geometric variables built from
  them, for the fixed-cost samplers of :mod:`dpkit._samplers.fixed_cost`.

Exact exponentials
------------------
A geometric variable ``G`` with ``P[G >= n] = p**n`` has independent binary digits: digit
``i`` is 1 with probability ``p**(2**i) / (1 + p**(2**i))``, because
``(1 - p) p**n = (1 - p) ∏_i (p**(2**i))**n_i`` and ``∏_i (1 + p**(2**i)) = 1 / (1 - p)``.
For ``p = exp(-1/scale)`` each digit is a Bernoulli trial with a *fixed* irrational
probability, so the fixed-cost samplers draw all digits of all draws at once. A standard
exponential ``E`` is its geometric integer part (``p = e**-1``) plus independent fractional
digits (digit ``k`` is 1 with probability ``1/(1 + e**(2**-k))``), so ``P[E > γ] =
exp(-γ)`` decides a CKS acceptance step by comparing ``E``'s digits with a float bracket of
``γ`` (IEEE-754 ``+ - * /`` are correctly rounded, so a relative margin encloses the true
value); a comparison the bracket cannot decide is finished in exact rational arithmetic.

Fixed cost: every trial of :func:`fixed_bernoulli` compares 64 random bits with the first
64 bits of its probability; only a tie (probability ``2**-64``) reads more. A geometric
draw covers the digits ``2**i < 64·scale``; the tail beyond them (probability
``<= e**-64``) finishes with a loop of its own.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithm 1.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np

from dpkit._samplers.exact import (
    Expansion,
    check_source,
    exp_neg_expansion,
    logistic_expansion,
    nonnegative_fraction,
)
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

# ------------------------------------------------------------------ one exact sample (CKS)

def bernoulli_exp(gamma: Fraction | int, rng: RandomSource) -> bool:
    """Return ``True`` with probability exactly ``exp(-gamma)``.

    Parameters
    ----------
    gamma : Fraction or int
        A rational number >= 0 (a float is converted exactly).
    rng : RandomSource
        The source of random bits.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``gamma`` is not a real number or ``rng`` is not a :class:`RandomSource`.
    ValueError
        If ``gamma`` is negative or not finite.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), Algorithm 1. For ``gamma <= 1``, draw ``A_k ~
    Bernoulli(gamma/k)`` for ``k = 1, 2, ...`` until the first failure ``K``; ``K`` is odd
    with probability ``sum_j (-gamma)**j / j! = exp(-gamma)``. For ``gamma > 1`` the event is
    split into ``floor(gamma)`` trials of ``exp(-1)`` and one of ``exp(-frac(gamma))``.
    Only exact rational Bernoulli trials are used.
    """
    gamma = nonnegative_fraction(gamma, "gamma")
    rng = check_source(rng)
    return bernoulli_exp_unchecked(gamma, rng)


def bernoulli_exp_unchecked(gamma: Fraction, rng: RandomSource) -> bool:
    """:func:`bernoulli_exp` for a ``gamma`` already validated as a :class:`Fraction` >= 0."""
    whole = gamma.numerator // gamma.denominator
    for _ in range(whole):
        if not _bernoulli_exp_unit(Fraction(1), rng):
            return False
    return _bernoulli_exp_unit(gamma - whole, rng)


def _bernoulli_exp_unit(gamma: Fraction, rng: RandomSource) -> bool:
    """CKS Algorithm 1 for ``0 <= gamma <= 1``."""
    k = 1
    while rng.bernoulli(gamma / k):
        k += 1
    return k % 2 == 1


# --------------------------------------------- many trials against irrational thresholds

def _uint8(rng: RandomSource, count: int) -> np.ndarray:
    """``count`` uniformly random bytes as a uint8 array."""
    return np.frombuffer(rng.bytes(count), dtype=np.uint8)


class _Columns:
    """The fixed thresholds of a Bernoulli matrix, with their bytes cached level by level."""

    def __init__(self, expansions: list[Expansion]) -> None:
        self.expansions = tuple(expansions)
        self._levels: list[np.ndarray] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.expansions)

    def level(self, j: int) -> np.ndarray:
        """Byte ``j`` of every threshold, as a uint8 array.

        The cache is shared by every thread (the column objects are module-level caches), so
        the check-then-append runs under a lock: without it two threads could append the same
        level twice and shift every later level, silently changing the sampled distribution.
        """
        if j < len(self._levels):
            return self._levels[j]
        with self._lock:
            while len(self._levels) <= j:
                k = len(self._levels)
                self._levels.append(
                    np.array([e.byte(k) for e in self.expansions], dtype=np.uint8))
            return self._levels[j]


def bernoulli_matrix(columns: _Columns | list[Expansion], n: int,
                      rng: RandomSource) -> np.ndarray:
    """An ``(n, R)`` bool array: column ``j`` holds ``n`` exact Bernoulli(q_j) trials.

    Each trial compares an infinite uniformly random bit string with the expansion of
    ``q_j``, one byte at a time: ``True`` iff the random string is below ``q_j``. Only ties
    (equal bytes, probability 1/256 per byte) draw further bytes.
    """
    if not isinstance(columns, _Columns):
        columns = _Columns(columns)
    width = len(columns)
    first = columns.level(0)
    u = _uint8(rng, n * width).reshape(n, width)
    below = u < first
    ties = np.flatnonzero(u == first)
    level = 1
    while ties.size:
        digits = columns.level(level)[ties % width]
        fresh = _uint8(rng, ties.size)
        decided = fresh != digits
        below.flat[ties[decided]] = fresh[decided] < digits[decided]
        ties = ties[~decided]
        level += 1
    return below


def _pack(bits: np.ndarray) -> np.ndarray:
    """Rows of little-endian bits (an ``(n, R)`` bool array, ``R <= 64``) as uint64 integers."""
    n = bits.shape[0]
    packed = np.packbits(bits, axis=1, bitorder="little")
    if packed.shape[1] == 8:
        return packed.view("<u8")[:, 0].copy()
    wide = np.zeros((n, 8), dtype=np.uint8)
    wide[:, :packed.shape[1]] = packed
    return wide.view("<u8")[:, 0].copy()
# ------------------------------------------------------------------- fixed-cost trials

_FIXED_TAIL_FACTOR = 64  # its digits cover [0, 64·scale): the tail has probability <= e**-64


def _prefix64(expansion: Expansion) -> int:
    """The first 64 bits of an expansion, ``floor(q·2**64)``."""
    value = 0
    for level in range(8):
        value = (value << 8) | expansion.byte(level)
    return value


class FixedColumns:
    """Thresholds of a fixed-cost Bernoulli matrix: expansions and their 64-bit prefixes."""

    def __init__(self, expansions: list[Expansion]) -> None:
        self.expansions = tuple(expansions)
        self.prefixes = np.array([_prefix64(e) for e in expansions], dtype=np.uint64)



def fixed_bernoulli(columns: FixedColumns, n: int, rng: RandomSource) -> np.ndarray:
    """An ``(n, R)`` bool array of exact Bernoulli(q_j) trials, 8 random bytes per trial.

    ``U < q`` is decided by the first 64 bits ``u`` of ``U``: below the prefix ``P`` of ``q``
    it is true, above it false; only ``u == P`` (probability ``2**-64``) reads further bytes.
    """
    width = columns.prefixes.size
    u = np.frombuffer(rng.bytes(8 * n * width), dtype="<u8").reshape(n, width)
    below = u < columns.prefixes
    ties = u == columns.prefixes
    if ties.any():                                          # probability 2**-64 per trial
        for index in np.flatnonzero(ties):
            below.flat[index] = _finish_tie(columns.expansions[index % width], rng)
    return below


def _finish_tie(expansion: Expansion, rng: RandomSource) -> bool:
    """``U < q`` once the first 8 bytes of ``U`` equal those of ``q``: compare further bytes."""
    level = 8
    while True:
        mine, theirs = rng.bits(8), expansion.byte(level)
        if mine != theirs:
            return mine < theirs
        level += 1


@public_table(maxsize=256)
def fixed_plan(scale: Fraction) -> tuple[int, FixedColumns, Fraction]:
    """Digit count ``I`` (``2**I >= 64·scale``), digit thresholds plus tail trial, tail step."""
    top = max(1, math.ceil(_FIXED_TAIL_FACTOR * scale).bit_length())
    step = Fraction(2**top) / scale
    expansions = [logistic_expansion(Fraction(2**i) / scale) for i in range(top)]
    return top, FixedColumns([*expansions, exp_neg_expansion(step)]), step


def fixed_geometric(plan: tuple[int, FixedColumns, Fraction], bits: np.ndarray,
                     rng: RandomSource) -> np.ndarray:
    """Geometric draws from their digit trials (``bits`` from :func:`fixed_bernoulli`).

    Returns int64 if every value fits (always when ``I <= 61`` and no tail), else Python ints.
    """
    top, _, step = plan
    tail = bits[:, top]                                     # probability <= e**-64 each
    if top <= 61 and not tail.any():
        return _pack(bits[:, :top]).astype(np.int64)
    tails = np.flatnonzero(tail)
    values = [int.from_bytes(np.packbits(row[:top], bitorder="little").tobytes(), "little")
              for row in bits]
    for index in tails:
        high = 1
        while bernoulli_exp_unchecked(step, rng):
            high += 1
        values[index] += high << top
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
