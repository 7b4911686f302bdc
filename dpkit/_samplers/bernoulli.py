"""Exact Bernoulli trials from random bits, and geometric variables from their digits.

* :func:`bernoulli_exp`: ``True`` with probability ``exp(-gamma)`` for a rational
  ``gamma >= 0`` (Canonne, Kamath & Steinke 2020, Algorithm 1), one trial at a time.
* :func:`bernoulli_matrix`: many trials against irrational thresholds at once, each
  comparing uniformly random bytes with the threshold's binary expansion until they differ.
* :func:`fixed_bernoulli`, :func:`fixed_below`, :func:`fixed_plan`,
  :func:`fixed_geometric`: the fixed-cost trials (a request of up to two rows, a scalar
  Gaussian round's proposals: 72 random bits per group of 8 trials; larger requests: 64
  random bits per trial, whatever the outcome) and the geometric variables built from
  them, for the fixed-cost samplers of :mod:`dpkit._samplers.fixed_cost` (a scalar
  discrete Laplace draw decides its trials by the interval walk of
  :mod:`dpkit._samplers.interval` instead).

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

Fixed cost: a request of up to ``GROUPED_ROWS = 2`` rows (a scalar Gaussian round's two
proposals) decides its trials ``GROUP = 8`` at a time: the
``2**8`` joint outcomes of a group are drawn by inversion, comparing one uniform of 72 bits
with the 72-bit prefixes of all 255 points of their cumulative distribution (scanned in
full); only a tie (probability below ``255·2**-72 < 2**-64`` per group) reads more. A
larger request compares 64 random bits with the first 64 bits of each trial's probability;
only a tie (probability ``2**-64`` per trial) reads more. A geometric draw covers the
digits ``i < I``, ``I = bit_length(ceil(64·scale))`` (so ``2**I > 64·scale``); the tail
beyond them (probability ``<= e**-64``) finishes with a loop of its own. Either way the
bytes read and the NumPy passes run are set by the request's size and the public scale: at
a scale of ``2**21`` units, two geometric draws
read 576 bits grouped against 3,712 at 64 bits a trial (a discrete Laplace draw of
entropy 23.4 bits, ``benchmarks/bits.py``; the interval walk reads 104). Each group costs
its entropy plus the 64 bits that keep a tie below ``2**-64``; fewer, larger groups would
save bits but scan ``2**g`` thresholds each.

Why groups are exact: the trials are independent, so a group's outcome ``O`` (trial ``i``
is bit ``i``) has ``P[O <= j] = F_j``, a sum of products of the trials' probabilities,
bracketed rigorously (:func:`group_cdf`); ``O = #{j : U > F_j}`` for a uniform ``U``, and
``u > T_j`` (``u`` the first 72 bits of ``U``, ``T_j = floor(F_j·2**72)``) proves ``U >
F_j``, ``u < T_j`` disproves it, ``u = T_j`` is finished by reading more of ``U``
(:func:`_finish_ties`). ``F_j`` is irrational (Lindemann), so ``U = F_j`` has probability
0.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithm 1.
"""

from __future__ import annotations

import functools
import math
import threading
from fractions import Fraction

import numpy as np

from dpkit._samplers.exact import (
    Expansion,
    check_source,
    exp_neg_expansion,
    floor_scaled,
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
    return np.frombuffer(rng.read(count), dtype=np.uint8)


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
GROUP = 8                # trials of a grouped row decided together, by one uniform
GROUP_BITS = 64 + GROUP  # that uniform's bits: undecided with probability < 2**-64
GROUPED_ROWS = 2         # requests of up to this many rows are grouped (public choice)
_OUTCOMES = 1 << GROUP


def scaled_bounds(expansion: Expansion, precision: int) -> tuple[int, int]:
    """Integers ``lo <= q·2**precision <= hi`` for the probability ``q`` of an expansion."""
    lo, hi = expansion.bounds(precision + 8)
    return floor_scaled(lo, precision), floor_scaled(hi, precision) + 1


def group_cdf(expansions: tuple[Expansion, ...], precision: int) -> tuple[list[int], list[int]]:
    """Bounds on the cumulative distribution of a group of independent trials, fixed point.

    Outcome ``o`` (``0 <= o < 2**g``) has trial ``i`` true iff bit ``i`` of ``o`` is set;
    ``F_j = P[O <= j]``. Returns integers ``lo[j] <= F_j·2**precision <= hi[j]`` for ``j <
    2**g - 1``: products of rigorous bounds of the trials' probabilities, rounded down
    (``lo``) or up (``hi``), all terms positive.
    """
    one = 1 << precision
    lows, highs = [one], [one]
    for expansion in expansions:
        q_lo, q_hi = scaled_bounds(expansion, precision)
        not_lo, not_hi = max(0, one - q_hi), one - q_lo
        lows = ([(x * not_lo) >> precision for x in lows]
                + [(x * q_lo) >> precision for x in lows])
        highs = ([-((-x * not_hi) >> precision) for x in highs]
                 + [-((-x * q_hi) >> precision) for x in highs])
    cdf_lo, cdf_hi, low_sum, high_sum = [], [], 0, 0
    for low, high in zip(lows[:-1], highs[:-1], strict=True):
        low_sum += low
        high_sum += high
        cdf_lo.append(low_sum)
        cdf_hi.append(min(one, high_sum))
    return cdf_lo, cdf_hi


def group_thresholds(expansions: tuple[Expansion, ...]) -> list[int]:
    """``floor(F_j·2**GROUP_BITS)`` for every threshold of :func:`group_cdf`, exactly.

    ``F_j`` is irrational (a non-constant rational function of ``e**(1/scale)``, by
    Lindemann's theorem), so more precision always settles its prefix; and ``F_j < 1``, so
    its prefix is at most ``2**GROUP_BITS - 1`` even when its upper bound is 1 (a trial of
    probability below ``2**-precision`` at every precision, such as ``e**-(2**I/scale)`` at
    a scale near ``2**-1000``).
    """
    precision = 2 * GROUP_BITS
    while True:
        lows, highs = group_cdf(expansions, precision)
        shift = precision - GROUP_BITS
        thresholds = [low >> shift for low in lows]
        if thresholds == [min(high >> shift, (1 << GROUP_BITS) - 1) for high in highs]:
            return thresholds
        precision *= 2


def _cdf_bounds(expansions: tuple[Expansion, ...], j: int, precision: int
                ) -> tuple[Fraction, Fraction]:
    """Bounds of ``F_j`` at ``precision`` bits (an :class:`Expansion`'s ``bounds``)."""
    lows, highs = group_cdf(expansions, precision)
    return Fraction(lows[j], 1 << precision), Fraction(highs[j], 1 << precision)


class FixedColumns:
    """Thresholds of a fixed-cost Bernoulli matrix, for both ways of deciding its trials.

    * ``prefixes``: each trial's first 64 bits (one uniform of 64 bits per trial).
    * ``high``, ``low``: the trials of each field (``fields`` gives their numbers of
      trials; one field by default) in consecutive groups of ``GROUP`` (a field's last
      group may be shorter). A group's ``2**g`` joint outcomes are drawn by inversion of
      their cumulative distribution ``F`` (:func:`group_cdf`), whose ``2**g - 1``
      thresholds are kept as ``GROUP_BITS``-bit prefixes, a ``uint64`` and a byte, one row
      per group, padded to ``2**GROUP - 1`` with ``2**GROUP_BITS - 1`` (standing for 1:
      never below a uniform).
    * ``weights``: a ``(groups, fields)`` float matrix: the groups' outcomes (the numbers
      of thresholds below their uniforms, :func:`fixed_below`) times it are the fields'
      values, ``sum_i 2**i·trial_i`` (group ``k`` of a field weighs ``2**(GROUP·k)``).
    """

    def __init__(self, expansions: list[Expansion], fields: tuple[int, ...] | None = None
                 ) -> None:
        self.expansions = tuple(expansions)
        self.prefixes = np.array([_prefix64(e) for e in expansions], dtype=np.uint64)
        groups, owners, start = [], [], 0
        for field, length in enumerate(fields or (len(self.expansions),)):
            for k, first in enumerate(range(start, start + length, GROUP)):
                groups.append(self.expansions[first:min(first + GROUP, start + length)])
                owners.append((field, k))
            start += length
        self.groups = tuple(groups)
        self.sizes = [(1 << len(group)) - 1 for group in self.groups]
        self.high = np.full((len(groups), _OUTCOMES - 1), 2**64 - 1, dtype=np.uint64)
        self.low = np.full((len(groups), _OUTCOMES - 1), 255, dtype=np.uint8)
        self.weights = np.zeros((len(groups), len(fields or (0,))))
        for row, group in enumerate(groups):
            thresholds = group_thresholds(group)
            self.high[row, :len(thresholds)] = [t >> GROUP for t in thresholds]
            self.low[row, :len(thresholds)] = [t & (_OUTCOMES - 1) for t in thresholds]
            field, k = owners[row]
            # beyond the float range: inf (the sums are used only while they are exact)
            self.weights[row, field] = 2.0 ** (GROUP * k) if GROUP * k < 1024 else math.inf
        self.shifts = np.arange(GROUP, dtype=np.int64)
        self.positions = np.concatenate([GROUP * row + np.arange(len(group))
                                         for row, group in enumerate(groups)])


def _prefix64(expansion: Expansion) -> int:
    """The first 64 bits of an expansion, ``floor(q·2**64)``."""
    value = 0
    for level in range(8):
        value = (value << 8) | expansion.byte(level)
    return value


def fixed_bernoulli(columns: FixedColumns, n: int, rng: RandomSource) -> np.ndarray:
    """An ``(n, R)`` bool array of exact Bernoulli(q_j) trials, at a value-independent cost.

    Up to ``GROUPED_ROWS`` rows (a public choice), the trials are decided ``GROUP`` at a
    time (:func:`fixed_below`, ``GROUP_BITS`` random bits per group); larger requests
    compare 64 random bits ``u`` with each trial's 64-bit prefix ``P``: ``u < P`` proves
    ``U < q`` and ``u > P`` disproves it; only ``u == P`` (probability ``2**-64``) reads
    further bytes.
    """
    if n <= GROUPED_ROWS:
        return trials_of(columns, fixed_below(columns, n, rng))
    width = columns.prefixes.size
    u = np.frombuffer(rng.read(8 * n * width), dtype="<u8").reshape(n, width)
    below = u < columns.prefixes
    ties = u == columns.prefixes
    if ties.any():                                          # probability 2**-64 per trial
        for index in np.flatnonzero(ties):
            expansion = columns.expansions[index % width]
            below.flat[index] = _finish_ties([expansion], 8, rng) == 0
    return below


def trials_of(columns: FixedColumns, below: np.ndarray) -> np.ndarray:
    """The ``(n, R)`` trials of grouped decisions (:func:`fixed_below`): a group's outcome
    is the number of its thresholds below its uniform, and its trial ``i`` is bit ``i``."""
    outcomes = below.sum(axis=2, dtype=np.int64)
    bits = (outcomes[:, :, None] >> columns.shifts) & 1
    return bits.astype(bool).reshape(len(outcomes), -1).take(columns.positions, axis=1)


def fixed_below(columns: FixedColumns, n: int, rng: RandomSource) -> np.ndarray:
    """An ``(n, groups, 2**GROUP - 1)`` bool array: which thresholds ``F_j`` of each group lie
    below its uniform ``U`` (a prefix of each row, the thresholds being sorted).

    Every group of every row reads 9 random bytes, a uniform ``u`` of ``GROUP_BITS`` bits
    (a ``uint64`` and a byte), and compares it with every threshold's prefix ``T_j``: ``u >
    T_j`` proves ``U > F_j`` and ``u < T_j`` proves ``U < F_j``, by the same NumPy passes
    whatever ``u``. Only ``u == T_j`` (probability below ``2**GROUP·2**-GROUP_BITS =
    2**-64`` per group) reads further bytes (:func:`_finish_ties`).
    """
    size = n * len(columns.groups)
    data = rng.read(9 * size)
    high = np.frombuffer(data, dtype="<u8", count=size).reshape(n, -1, 1)
    low = np.frombuffer(data, dtype=np.uint8, offset=8 * size).reshape(n, -1, 1)
    level = high == columns.high
    below = high > columns.high
    below |= level & (low > columns.low)
    level &= low == columns.low
    if level.any():                                     # probability < 2**-64 per group
        for row, group in zip(*np.nonzero(level.any(axis=2)), strict=True):
            expansions = columns.groups[group]
            tied = [int(j) for j in np.flatnonzero(level[row, group])
                    if j < columns.sizes[group]]
            above = _finish_ties([Expansion(functools.partial(_cdf_bounds, expansions, j))
                                  for j in tied], GROUP_BITS // 8, rng)
            below[row, group, tied[:above]] = True     # the lowest thresholds tied
    return below


def _finish_ties(thresholds: list[Expansion], known: int, rng: RandomSource) -> int:
    """How many of ``thresholds`` lie below a uniform ``U`` whose first ``known`` bytes equal
    theirs: ``U``'s further bytes, drawn as needed and shared by all of them, are compared
    with each threshold's expansion until they differ (``U`` equals none with probability 1).
    """
    drawn: list[int] = []
    above = 0
    for threshold in thresholds:
        level = known
        while True:
            if level - known == len(drawn):
                drawn.append(rng.bits(8))
            mine, theirs = drawn[level - known], threshold.byte(level)
            if mine != theirs:
                above += mine > theirs
                break
            level += 1
    return above


@public_table(maxsize=256)
def fixed_plan(scale: Fraction) -> tuple[int, FixedColumns, Fraction]:
    """Digit count ``I`` (``2**I > 64·scale``), digit thresholds plus tail trial, tail step."""
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
