"""Exact samplers that consume random bits, and the power-of-two grid the safe mechanisms use.

Nothing in this module draws a floating-point random number or evaluates a transcendental
function in floating point to make a random decision. Every random choice is an exact
comparison between uniformly random bits and the binary expansion of a real number, and
those expansions are either computed exactly (rationals) or bracketed rigorously with
directed rounding in MPFR (through :mod:`gmpy2`), with more precision requested until the
comparison is decided. The samplers therefore draw from their target distributions *exactly*.

Samplers
--------
:func:`bernoulli_exp`
    ``True`` with probability ``exp(-gamma)``, for a rational ``gamma >= 0``
    (Canonne, Kamath & Steinke 2020, Algorithm 1).
:func:`discrete_laplace`
    ``P[X = x] ∝ exp(-|x| / scale)`` on the integers (a fixed-cost sampler for small
    requests, a vectorised block-envelope sampler for large arrays, see below).
:func:`discrete_gaussian`
    ``P[X = x] ∝ exp(-x² / (2 sigma2))`` on the integers (CKS 2020, Algorithm 3, for small
    requests; the block-envelope sampler for large arrays).

Exact exponentials
------------------
A geometric variable ``G`` with ``P[G >= n] = p**n`` has independent binary digits: digit
``i`` is 1 with probability ``p**(2**i) / (1 + p**(2**i))``, because
``(1 - p) p**n = (1 - p) ∏_i (p**(2**i))**n_i`` and ``∏_i (1 + p**(2**i)) = 1 / (1 - p)``.
For ``p = exp(-1/scale)`` each digit is a Bernoulli trial with a *fixed* irrational
probability, so the fixed-cost samplers below draw all digits of all draws at once. A
standard exponential ``E`` is its geometric integer part (``p = e**-1``) plus independent
fractional digits (digit ``k`` is 1 with probability ``1/(1 + e**(2**-k))``), so
``P[E > γ] = exp(-γ)`` decides a CKS acceptance step by comparing ``E``'s digits with a
float bracket of ``γ`` (IEEE-754 ``+ - * /`` are correctly rounded, so a relative margin
encloses the true value); a comparison the bracket cannot decide is finished in exact
rational arithmetic.

Vectorised sampling
-------------------
Arrays of more than 64 values (scales up to ``2**52``, ``σ`` up to ``2**51``) use the
block-envelope rejection sampler of :mod:`dpkit._envelope`: a table entry (the value 0, a
block of ``m = 2**L`` magnitudes, ``m`` about a sixteenth of the scale, or the far tail)
is drawn by lazy inversion against rigorously bracketed cumulative weights, a sign and an
offset in the block by uniform bits, and the proposal is accepted with probability
``ρ(x)/ρ(x*)`` (``x*`` the block's first magnitude), decided by comparing uniform bits with
integer thresholds on the offset (from MPFR logarithms rounded outwards), then with
polynomial brackets of ``exp(-γ)``, then with MPFR brackets when those cannot decide. The
random bits are read exactly as used (:mod:`dpkit._bitstream`): at most the entropy of the
distribution plus 16 bits a sample, which ``tests/test_envelope.py`` checks (Knuth & Yao
1976 show the entropy is the least an exact sampler can use on average, and that ``H + 2``
bits suffice); ``benchmarks/bits.py`` prints the count against the entropy.

Timing
------
A sampler whose loop count grows with ``|noise|`` tells anyone who can time a release how
large the noise was (Jin, McMurtry, Rubinstein & Ohrimenko, IEEE S&P 2022); CKS Algorithms 2
and 3 run one sample at a time are such samplers (kept, labelled, in :mod:`dpkit.naive.laplace`).
Requests of up to ``_FIXED_MAX = 64`` values (every scalar release, every SVT threshold)
therefore use *fixed-cost* samplers: every digit trial compares 64 random bits with the first
64 bits of its probability, all trials of all draws at once, so the random bytes read and
the NumPy operations run do not depend on the values drawn. What is and is not constant:

* Discrete Laplace (difference of two geometrics, no rejection): the cost is a function of
  the scale and the count only, except in two events that finish with loops of their own:
  a 64-bit tie (probability ``2**-64`` per trial) and a geometric beyond the ``2**I >=
  64·scale`` covered digits (probability ``<= e**-64`` per draw).
* Discrete Gaussian (CKS Algorithm 3): each round decides ``n + 1 + n // 2`` proposals at
  a fixed cost; rounds repeat until ``n`` are accepted. The *number of rounds* varies, but it
  depends only on which proposals were accepted, and accepted proposals are independent
  draws from the target whatever that pattern is, so it carries no information about the
  values returned. Exceptions as above, plus an undecided acceptance comparison
  (probability about ``2**-40`` per proposal) and proposals ``|y| >= 2**53`` (scales above
  about ``2**47``, never used by the mechanisms), which finish in exact arithmetic.
* Larger arrays use the block-envelope sampler (see "Vectorised sampling"), whose loops
  (rejection rounds, undecided comparisons reading more bits, the tail) run over the whole
  array of up to ``_BLOCK = 2**17`` values: their length depends on the values
  collectively, diluting any single value's influence but not removing it. **Residual
  channel, tail values:** a value far in the tail (beyond about 8 scales for the discrete
  Laplace, about 4σ for the discrete Gaussian) lies in a block of the envelope table whose
  probability is below the guide table's resolution, so it almost always adds a
  refinement pass (two more reads of the source and a few NumPy passes, tens of µs). An
  adversarial review measured, at ``n = 65`` values: that pass ran in about 3% of the
  calls whose largest ``|x|`` was below 4 scales and in about 74% of those holding a value
  beyond 8 scales. Only arrays of thousands of values dilute it (the pass then runs in
  nearly every call). A caller whose adversary can time releases of a few hundred values
  should release them in blocks of at most 64 (the fixed-cost path).
* Grid arithmetic (:func:`to_grid`, :func:`add_units`, :func:`from_grid`) on up to 64
  values always runs on exact Python integers: the path is chosen from the size alone, so
  neighbouring inputs take the same path whatever their magnitudes (:func:`exact_path`).
  **Residual channel, larger arrays:** above 64 values the arithmetic runs on ``int64``
  while every grid value is below ``2**61`` units (``|value| < 2**(61 + k)``, with ``k =
  grid_exponent(Δ, d)`` set by the sensitivity and the number ``d`` of coordinates, e.g.
  ``2**24`` for ``Δ = 10`` and ``d = 10**6``) and on Python ints, many times slower, as
  soon as one coordinate is beyond. That switch depends on the data: two neighbouring
  vectors on either side of the boundary take paths of visibly different speed, and a
  timing adversary can tell them apart. The same switch in :func:`add_units` also looks at
  the noise, so at noise scales near ``2**61`` units (very small ε on long vectors) it
  depends on the noise drawn as well. Always using the exact path would make a release
  of ``10**5`` values several times slower (``benchmarks/grid.py`` prints the factor), so
  it is not the default; a caller who releases large vectors whose coordinates may cross
  that boundary, and whose adversary can time the release, should keep the coordinates
  below it (clip them to a public bound well under ``2**(61 + k)``) or release them in
  blocks of at most 64. (A grid exponent outside ``[-1022, 1023]``, from a sensitivity
  near either end of the float range, also converts back on Python ints: a choice made
  from the public ``k`` alone.)
* Input conversion: a float64 NumPy array is converted in a few vectorised operations; a
  Python list in one pass (:func:`dpkit._checks.check_finite_array`) whose cost hardly
  depends on the types of its elements (ints, floats, Fractions alike), except that an
  element float64 cannot hold exactly is looked at again. A list is several times slower
  than an array, and an array's dtype is visible in its cost: pass a float64 array.
* Constant cost is not constant time: Python, the allocator, caches, the operating
  system's random source (:class:`dpkit.rng.SecureRandom` refills its buffer every 4096
  bytes, after a number of releases that does not depend on the noise) and other load make
  the running time vary, but that variation is independent of the noise drawn.

The power-of-two grid
---------------------
The safe mechanisms never add noise to a float. They round the query value to the grid
``2**k · Z`` (:func:`to_grid`, exact), add integer noise, and convert the exact result back to
the nearest float (:func:`from_grid`, a post-processing step). Rounding each coordinate moves
it by at most half a grid step, so the rounded query has ℓ1 sensitivity at most
``Δ + d·2**k`` and ℓ2 sensitivity at most ``Δ + √d·2**k`` (``d`` coordinates):
:func:`grid_sensitivity` returns those bounds in grid units, and :func:`grid_exponent` picks a
grid fine enough that the widening is at most a fraction ``2**-GRID_BITS`` of ``Δ``.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.
D. E. Knuth, A. C. Yao. *The complexity of nonuniform random number generation.* In
Algorithms and Complexity: New Directions and Recent Results, Academic Press, 1976.
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

from dpkit._checks import as_fraction, check_integer
from dpkit.rng import RandomSource

__all__ = [
    "GRID_BITS",
    "add_units",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "exact_path",
    "from_grid",
    "grid_exponent",
    "grid_sensitivity",
    "to_grid",
]

#: The grid step is at most ``2**-GRID_BITS`` times the sensitivity (divided by the widening).
GRID_BITS = 20

_BLOCK = 1 << 17          # samples drawn at once (arrays of 1 MB: NumPy passes stay in cache)
_VECTOR_MAX_SCALE = 2**52  # above this scale, arrays use the fixed-cost sampler (Python ints)
_INT64_SAFE = 2**62       # integers below this (in absolute value) are kept in int64 arrays
_SIZE = int | tuple[int, ...] | None


# ----------------------------------------------------------------------------- validation

def _positive_fraction(value: Any, name: str) -> Fraction:
    """Return ``value`` (int, Fraction or float) as an exact positive :class:`Fraction`."""
    result = as_fraction(value, name)
    if result <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return result


def _nonnegative_fraction(value: Any, name: str) -> Fraction:
    """Return ``value`` (int, Fraction or float) as an exact :class:`Fraction` >= 0."""
    result = as_fraction(value, name)
    if result < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return result


def _shape(size: Any) -> tuple[int, ...] | None:
    """Validate a ``size`` argument: None, a non-negative int or a tuple of them."""
    if size is None:
        return None
    if isinstance(size, tuple):
        return tuple(check_integer(s, "size", minimum=0) for s in size)
    return (check_integer(size, "size", minimum=0),)


def _source(rng: Any) -> RandomSource:
    """The samplers here are internal: they require an explicit source."""
    if not isinstance(rng, RandomSource):
        raise TypeError(f"rng must be a dpkit.rng.RandomSource (use dpkit.rng.resolve), got "
                        f"{rng!r} of type {type(rng).__name__}")
    return rng


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
    gamma = _nonnegative_fraction(gamma, "gamma")
    rng = _source(rng)
    return _bernoulli_exp(gamma, rng)


def _bernoulli_exp(gamma: Fraction, rng: RandomSource) -> bool:
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


def _floor_sqrt(value: Fraction) -> int:
    """``floor(sqrt(value))`` exactly, for a rational ``value >= 0``."""
    return math.isqrt(value.numerator // value.denominator)


def _gaussian_gamma(y: int, sigma2: Fraction, t: int) -> Fraction:
    """The CKS Algorithm 3 rejection exponent ``(|y| - sigma2/t)**2 / (2 sigma2)``."""
    return (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)


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


def _exp_neg_bounds(y: Fraction, precision: int) -> tuple[Any, Any]:
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


class _Expansion:
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

    def _prefix(self, nbits: int) -> int:
        precision = nbits + 64
        while True:
            lo, hi = self._bounds(precision)
            a = _floor_scaled(lo, nbits)
            b = _floor_scaled(hi, nbits)
            if a == b:
                return a
            precision *= 2


def _floor_scaled(value: Any, nbits: int) -> int:
    """``floor(value · 2**nbits)`` exactly, for a finite MPFR number ``value``."""
    numerator, denominator = value.as_integer_ratio()
    return int((int(numerator) << nbits) // int(denominator))


@functools.lru_cache(maxsize=4096)
def _logistic_expansion(y: Fraction) -> _Expansion:
    """Expansion of ``1 / (1 + exp(y))``: P[digit = 1] of a geometric with ``ln(1/p)·2**i = y``."""
    return _Expansion(functools.partial(_logistic_bounds, y))


@functools.lru_cache(maxsize=4096)
def _exp_neg_expansion(y: Fraction) -> _Expansion:
    """Expansion of ``exp(-y)``."""
    return _Expansion(functools.partial(_exp_neg_bounds, y))


def _uint8(rng: RandomSource, count: int) -> np.ndarray:
    """``count`` uniformly random bytes as a uint8 array."""
    return np.frombuffer(rng.bytes(count), dtype=np.uint8)


class _Columns:
    """The fixed thresholds of a Bernoulli matrix, with their bytes cached level by level."""

    def __init__(self, expansions: list[_Expansion]) -> None:
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


def _bernoulli_matrix(columns: _Columns | list[_Expansion], n: int,
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


_MARGIN = 2.0**-44  # relative width of float brackets: 512 units of roundoff, >= 64x the need


# ------------------------------------------------- fixed-cost samplers for small requests
#
# The one-at-a-time samplers of CKS 2020 run loops whose length grows with |noise|/scale, so
# the running time of a release reveals the noise (see dpkit.naive.laplace). Small requests
# (every scalar release, every SVT threshold) use the samplers below instead: each Bernoulli
# digit is decided by comparing 64 random bits with the first 64 bits of its probability, all
# digits of all draws at once, so the random bytes drawn and the NumPy operations run are the
# same whatever the values drawn. The exceptions are events of probability <= 2**-64 per
# digit (a tie of 64 bits) and <= e**-64 per geometric draw (beyond the covered digits); they
# finish exactly, with loops of their own.

_FIXED_MAX = 64          # requests up to this many samples use the fixed-cost sampler
_FIXED_TAIL_FACTOR = 64  # its digits cover [0, 64·scale): the tail has probability <= e**-64
_FIXED_FRACTION_DIGITS = 40  # fractional digits of E drawn for a fixed-cost Gaussian trial


def _prefix64(expansion: _Expansion) -> int:
    """The first 64 bits of an expansion, ``floor(q·2**64)``."""
    value = 0
    for level in range(8):
        value = (value << 8) | expansion.byte(level)
    return value


class _FixedColumns:
    """Thresholds of a fixed-cost Bernoulli matrix: expansions and their 64-bit prefixes."""

    def __init__(self, expansions: list[_Expansion]) -> None:
        self.expansions = tuple(expansions)
        self.prefixes = np.array([_prefix64(e) for e in expansions], dtype=np.uint64)



def _fixed_bernoulli(columns: _FixedColumns, n: int, rng: RandomSource) -> np.ndarray:
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


def _finish_tie(expansion: _Expansion, rng: RandomSource) -> bool:
    """``U < q`` once the first 8 bytes of ``U`` equal those of ``q``: compare further bytes."""
    level = 8
    while True:
        mine, theirs = rng.bits(8), expansion.byte(level)
        if mine != theirs:
            return mine < theirs
        level += 1


@functools.lru_cache(maxsize=256)
def _fixed_plan(scale: Fraction) -> tuple[int, _FixedColumns, Fraction]:
    """Digit count ``I`` (``2**I >= 64·scale``), digit thresholds plus tail trial, tail step."""
    top = max(1, math.ceil(_FIXED_TAIL_FACTOR * scale).bit_length())
    step = Fraction(2**top) / scale
    expansions = [_logistic_expansion(Fraction(2**i) / scale) for i in range(top)]
    return top, _FixedColumns([*expansions, _exp_neg_expansion(step)]), step


def _fixed_geometric(plan: tuple[int, _FixedColumns, Fraction], bits: np.ndarray,
                     rng: RandomSource) -> np.ndarray:
    """Geometric draws from their digit trials (``bits`` from :func:`_fixed_bernoulli`).

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
        while _bernoulli_exp(step, rng):
            high += 1
        values[index] += high << top
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _fixed_discrete_laplace(scale: Fraction, n: int, rng: RandomSource) -> np.ndarray:
    """``n`` exact discrete Laplace draws at a cost that does not depend on their values.

    The difference of two independent geometric variables with ``P[G = g] ∝ p**g`` has
    ``P[X = x] ∝ p**|x|``: no rejection step, so every call draws exactly
    ``16·n·(I + 1)`` random bytes (bar the events named in the section comment).
    """
    plan = _fixed_plan(scale)
    bits = _fixed_bernoulli(plan[1], 2 * n, rng)
    g = _fixed_geometric(plan, bits, rng)
    return g[:n] - g[n:]


@functools.lru_cache(maxsize=64)
def _fixed_gaussian_columns(scale: Fraction) -> _FixedColumns:
    """The trials of one Gaussian proposal: a geometric of ``scale``, then the digits of ``E``.

    ``E`` is a standard exponential: ``floor(E)`` is geometric with ``p = e**-1`` (digits
    ``i < 7`` cover ``[0, 128)``, the tail ``E >= 128`` has probability ``e**-128``) and
    fractional digit ``k`` is Bernoulli ``1/(1 + e**(2**-k))``, independent of the rest (see
    "Exact exponentials" in the module docstring).
    """
    geometric = _fixed_plan(scale)[1].expansions
    whole = _fixed_plan(Fraction(1))[1].expansions
    fraction = [_logistic_expansion(Fraction(1, 2**k))
                for k in range(1, _FIXED_FRACTION_DIGITS + 1)]
    return _FixedColumns([*geometric, *whole, *fraction])


class _GaussianSetup:
    """Everything a fixed-cost discrete Gaussian round needs for one ``sigma2``.

    ``weights`` packs a row of trials into (G, floor(E), fractional digits of E) by one
    integer matrix product (tail columns weigh 0; they are checked separately); it is None
    when the geometric may not fit in int64 (``I > 61``).
    """

    def __init__(self, sigma2: Fraction) -> None:
        self.t = _floor_sqrt(sigma2) + 1
        self.plan = _fixed_plan(Fraction(self.t))
        self.columns = _fixed_gaussian_columns(Fraction(self.t))
        self.whole_top = _fixed_plan(Fraction(1))[0]
        top = self.plan[0]
        self.width = top + 1
        self.tails = np.array([top, self.width + self.whole_top])
        self.weights = None
        if top <= 61:
            weights = np.zeros((self.columns.prefixes.size, 3), dtype=np.int64)
            powers = 2 ** np.arange(top, dtype=np.int64)
            weights[:top, 0] = powers
            weights[self.width:self.width + self.whole_top, 1] = powers[:self.whole_top]
            weights[self.width + self.whole_top + 1:, 2] = 2 ** np.arange(
                _FIXED_FRACTION_DIGITS - 1, -1, -1, dtype=np.int64)
            self.weights = weights


@functools.lru_cache(maxsize=64)
def _fixed_gaussian_setup(sigma2: Fraction) -> _GaussianSetup:
    return _GaussianSetup(sigma2)


def _fixed_discrete_gaussian(sigma2: Fraction, n: int, rng: RandomSource) -> np.ndarray:
    """``n`` exact discrete Gaussian draws, each proposal decided at a value-independent cost.

    CKS Algorithm 3: a proposal is a random sign times a geometric ``G`` of scale ``t``
    (drawn as in :func:`_fixed_discrete_laplace`), rejected if it is ``(-, 0)`` (which
    makes it discrete Laplace) and otherwise accepted when ``E > γ(Y)``: ``E`` is drawn with
    a fixed number of digits and compared with a float bracket of ``γ``
    (:func:`_gamma_bracket`); a comparison those digits cannot decide (probability about
    ``2**-40``) continues exactly. Each round proposes ``n + 1 + n // 2`` candidates; rounds
    repeat until ``n`` are accepted. The number of rounds depends only on *which* proposals
    were accepted, and the accepted values are independent draws from the target whatever
    that pattern is, so it carries no information about the values returned.
    """
    setup = _fixed_gaussian_setup(sigma2)
    t, width = setup.t, setup.width
    out: list[np.ndarray] = []
    need = n
    m = n + 1 + n // 2
    while need > 0:
        bits = _fixed_bernoulli(setup.columns, m, rng)
        negative = (np.frombuffer(rng.bytes(m), dtype=np.uint8) & 1).astype(bool)
        if setup.weights is not None and not bits[:, setup.tails].any():
            packed = bits.astype(np.int64) @ setup.weights
            g = packed[:, 0]
            y = np.where(negative, -g, g)
            accept = _fixed_accept(y, packed[:, 1], packed[:, 2], sigma2, t, rng)
        else:                                   # tails or huge scales: probability <= e**-64
            g = _fixed_geometric(setup.plan, bits[:, :width], rng)
            y = np.where(negative, -g, g)
            accept = _exceeds_exact_all(y, bits[:, width:], setup.whole_top, sigma2, t, rng)
        accept &= ~(negative & (g == 0))
        kept = y[accept][:need]
        out.append(kept)
        need -= kept.size
    return np.concatenate(out)


def _fixed_accept(y: np.ndarray, whole: np.ndarray, fraction: np.ndarray, sigma2: Fraction,
                  t: int, rng: RandomSource) -> np.ndarray:
    """``E_j > γ(y_j)`` from ``floor(E) < 2**I`` and the first fractional digits of ``E`` (as an
    integer), with an exact fallback when undecided."""
    low = whole + fraction * 2.0**-_FIXED_FRACTION_DIGITS     # exact: < 2**7, 40 digits
    gamma_lo, gamma_hi = _gamma_bracket(y, sigma2, t)
    accept = low > gamma_hi
    undecided = np.flatnonzero(~accept & (low + 2.0**-_FIXED_FRACTION_DIGITS > gamma_lo))
    for j in undecided:                                       # probability about 2**-40
        accept[j] = _exceeds_exact(Fraction(float(low[j])), Fraction(1, 2**_FIXED_FRACTION_DIGITS),
                                   _gaussian_gamma(int(y[j]), sigma2, t),
                                   _FIXED_FRACTION_DIGITS, rng)
    return accept


def _exceeds_exact_all(y: np.ndarray, e_bits: np.ndarray, whole_top: int, sigma2: Fraction,
                       t: int, rng: RandomSource) -> np.ndarray:
    """The rare rounds with huge proposals or a tail event: every trial in exact arithmetic."""
    weights = 2 ** np.arange(_FIXED_FRACTION_DIGITS - 1, -1, -1, dtype=np.int64)
    fraction = e_bits[:, whole_top + 1:].astype(np.int64) @ weights
    accept = np.zeros(len(y), dtype=bool)
    for j, row in enumerate(e_bits):
        whole = int.from_bytes(np.packbits(row[:whole_top], bitorder="little").tobytes(),
                               "little")
        if row[whole_top]:
            step = 2**whole_top                 # floor(E) >= 2**I: memoryless tail
            whole += step
            while _bernoulli_exp(Fraction(step), rng):
                whole += step
        low = whole + Fraction(int(fraction[j]), 2**_FIXED_FRACTION_DIGITS)
        accept[j] = _exceeds_exact(low, Fraction(1, 2**_FIXED_FRACTION_DIGITS),
                                   _gaussian_gamma(int(y[j]), sigma2, t),
                                   _FIXED_FRACTION_DIGITS, rng)
    return accept


def discrete_laplace(scale: Fraction | int, rng: RandomSource,
                     size: _SIZE = None) -> int | np.ndarray:
    """Exact samples of the discrete Laplace distribution ``P[X = x] ∝ exp(-|x|/scale)``.

    Parameters
    ----------
    scale : Fraction or int
        A rational number > 0 (a float is converted exactly).
    rng : RandomSource
        The source of random bits (use :func:`dpkit.rng.resolve` on a user's ``rng``).
    size : int or tuple of int, optional
        ``None`` (default) returns one Python ``int``; otherwise an array of that shape.

    Returns
    -------
    int or numpy.ndarray
        An ``int64`` array (``object`` holding Python ints if a value does not fit).

    Raises
    ------
    TypeError
        If ``scale`` is not a real number, ``size`` not an integer (tuple) or ``rng`` not a
        :class:`RandomSource`.
    ValueError
        If ``scale`` is not a finite number > 0 or ``size`` is negative.

    Notes
    -----
    Privacy: adding this noise to an integer-valued query with sensitivity ``D`` (ℓ1) gives
    ``(D/scale)``-differential privacy, because ``P[x]/P[x'] <= exp(|x - x'|/scale)``.
    Up to 64 values (and any count at scales above ``2**52``): the fixed-cost sampler, a
    difference of two geometric variables whose digits are drawn 64 bits at a time, so the
    running time does not depend on the noise (see "Timing" in the module docstring for the
    exceptions, of probability ``<= 2**-64`` per trial). Larger arrays: the exact
    block-envelope sampler of :mod:`dpkit._envelope` (the same distribution, far fewer
    random bits). Canonne, Kamath &
    Steinke (2020) give the distribution's privacy and a one-at-a-time sampler (Algorithm 2).

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> discrete_laplace(3, seeded(0), size=4).shape
    (4,)
    """
    scale = _positive_fraction(scale, "scale")
    rng = _source(rng)
    shape = _shape(size)
    count = 1 if shape is None else math.prod(shape)
    if count <= _FIXED_MAX or scale > _VECTOR_MAX_SCALE:
        return _fixed_result(_fixed_discrete_laplace, scale, count, shape, rng)
    from dpkit._envelope import laplace_envelope  # imports this module: import when used
    return _in_blocks(laplace_envelope(scale), count, rng).reshape(shape)


# --------------------------------------------------------------- vectorised discrete Gaussian

def _gamma_bracket(y: np.ndarray, sigma2: Fraction, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds ``lo <= γ <= hi`` for ``γ = (|y| - sigma2/t)**2 / (2 sigma2)``, int64 ``y``.

    Error analysis (IEEE 754, round to nearest, ``u = 2**-53``): ``a = |y|`` converts
    exactly (``< 2**53``); ``c = fl(sigma2/t)`` and ``s = fl(2 sigma2)`` carry relative errors
    ``<= u``. With ``d = a - sigma2/t``, the computed ``fl(fl(fl(a - c)**2) / s)`` equals
    ``(d + e)**2 / (2 sigma2) · (1 + η)`` with ``|e| <= u·sigma2/t`` and ``|η| <= 5.01u``.
    Since ``t > σ``, ``|2de| / (2σ²) <= u·sqrt(2γ)`` and ``e²/(2σ²) <= u²``, so the error is
    below ``8u·(γ̃ + 1)`` for the computed ``γ̃``. The bracket ``γ̃ ± _MARGIN·(γ̃ + 1)`` is 64
    times wider than that, which also absorbs the roundings of the bracket itself. Values
    ``|y| >= 2**53`` get ``[0, inf]``, which sends them to the exact rational comparison.
    """
    magnitude = np.abs(y)
    centre, denominator = _gamma_constants(sigma2, t)
    d = magnitude.astype(np.float64) - centre
    gamma = d * d / denominator
    margin = _MARGIN * (gamma + 1.0)
    lo, hi = np.maximum(gamma - margin, 0.0), gamma + margin
    if magnitude.size and int(magnitude.max()) >= 2**53:
        huge = magnitude >= 2**53
        lo, hi = np.where(huge, 0.0, lo), np.where(huge, np.inf, hi)
    return lo, hi


@functools.lru_cache(maxsize=64)
def _gamma_constants(sigma2: Fraction, t: int) -> tuple[float, float]:
    """``fl(sigma2/t)`` and ``fl(2·sigma2)``, correctly rounded (see :func:`_gamma_bracket`)."""
    return float(sigma2 / t), float(2 * sigma2)


def _exceeds_exact(low: Fraction, width: Fraction, gamma: Fraction, digits: int,
                   rng: RandomSource) -> bool:
    """Continue the digit-wise comparison ``E > gamma`` in exact arithmetic."""
    k = digits
    while True:
        if low > gamma:
            return True
        if low + width <= gamma:
            return False
        k += 1
        width /= 2
        expansion = _logistic_expansion(Fraction(1, 2**k))
        if _bernoulli_matrix([expansion], 1, rng)[0, 0]:
            low += width


def discrete_gaussian(sigma2: Fraction | int, rng: RandomSource,
                      size: _SIZE = None) -> int | np.ndarray:
    """Exact samples of the discrete Gaussian ``P[X = x] ∝ exp(-x²/(2·sigma2))`` on the integers.

    Parameters
    ----------
    sigma2 : Fraction or int
        The variance parameter ``σ²``, a rational number > 0 (a float is converted exactly).
    rng : RandomSource
        The source of random bits.
    size : int or tuple of int, optional
        ``None`` (default) returns one Python ``int``; otherwise an array of that shape.

    Returns
    -------
    int or numpy.ndarray
        An ``int64`` array (``object`` holding Python ints if a value does not fit).

    Raises
    ------
    TypeError
        If ``sigma2`` is not a real number, ``size`` not an integer (tuple) or ``rng`` not a
        :class:`RandomSource`.
    ValueError
        If ``sigma2`` is not a finite number > 0 or ``size`` is negative.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), Algorithm 3 (discrete Laplace proposal with scale
    ``t = floor(σ) + 1``, accepted with probability ``exp(-(|Y| - σ²/t)²/(2σ²))``). Up to 64
    values, each proposal is drawn and decided at a fixed cost and the number of rounds is
    independent of the values returned (see "Timing" in the module docstring); larger arrays
    use the block-envelope sampler of :mod:`dpkit._envelope` instead of Algorithm 3 (the
    same distribution, see "Vectorised sampling").
    Privacy (CKS 2020, Theorem 4): for an integer query with ℓ2 sensitivity ``D``, adding
    independent discrete Gaussian noise to each coordinate satisfies ``(D²/(2σ²))``-zCDP and
    is (ε, δ)-DP whenever the continuous Gaussian's privacy profile allows it.
    """
    sigma2 = _positive_fraction(sigma2, "sigma2")
    rng = _source(rng)
    shape = _shape(size)
    count = 1 if shape is None else math.prod(shape)
    if count <= _FIXED_MAX or sigma2 > _VECTOR_MAX_SCALE**2 // 4:
        return _fixed_result(_fixed_discrete_gaussian, sigma2, count, shape, rng)
    from dpkit._envelope import gaussian_envelope  # imports this module: import when used
    return _in_blocks(gaussian_envelope(sigma2), count, rng).reshape(shape)


def _in_blocks(envelope: Any, count: int, rng: RandomSource) -> np.ndarray:
    """``count`` draws from a :class:`dpkit._envelope._Envelope`, ``_BLOCK`` at a time."""
    out = np.empty(count, dtype=np.int64)
    for start in range(0, count, _BLOCK):
        stop = min(count, start + _BLOCK)
        envelope.sample(stop - start, rng, out[start:stop])
    return out


def _fixed_result(sampler: Callable[[Fraction, int, RandomSource], np.ndarray],
                  parameter: Fraction, count: int, shape: tuple[int, ...] | None,
                  rng: RandomSource) -> int | np.ndarray:
    """Run a fixed-cost sampler in blocks of ``_FIXED_MAX``; one ``int`` if ``shape`` is None."""
    if count == 0:
        values = np.empty(0, dtype=np.int64)
    elif count <= _FIXED_MAX:
        values = sampler(parameter, count, rng)
    else:
        values = np.concatenate([sampler(parameter, min(_FIXED_MAX, count - start), rng)
                                 for start in range(0, count, _FIXED_MAX)])
    if shape is None:
        return int(values[0])
    if values.dtype == np.int64:
        return values.reshape(shape)
    return _as_int_array([int(v) for v in values], shape)


def _as_int_array(values: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """Python ints as an int64 array, or an object array if one does not fit."""
    if all(-_INT64_SAFE < v < _INT64_SAFE for v in values):
        return np.array(values, dtype=np.int64).reshape(shape)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array.reshape(shape)


# ------------------------------------------------------------------------- the grid

def _floor_log2(value: Fraction) -> int:
    """``floor(log2(value))`` exactly, for a rational ``value > 0``."""
    guess = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** guess > value:
        guess -= 1
    return guess


def _ceil_sqrt(count: int) -> Fraction:
    """A dyadic upper bound on ``sqrt(count)`` within ``2**-32`` (exact for squares)."""
    root = math.isqrt(count)
    if root * root == count:
        return Fraction(root)
    return Fraction(math.isqrt(count << 64) + 1, 1 << 32)


def grid_exponent(sensitivity: Any, count: int = 1, *, norm: int = 1,
                  bits: int = GRID_BITS) -> int:
    """The exponent ``k`` of the grid ``2**k · Z`` for a query of ``count`` coordinates.

    ``k`` is the largest integer with ``w · 2**k <= sensitivity · 2**-bits``, where the
    widening ``w`` is ``count`` (ℓ1) or ``sqrt(count)`` (ℓ2): rounding to the grid then
    increases the sensitivity by at most a fraction ``2**-bits``.

    Parameters
    ----------
    sensitivity : real number > 0
        The query's ℓ1 (``norm=1``) or ℓ2 (``norm=2``) sensitivity.
    count : int >= 1
        Number of coordinates of the query.
    norm : {1, 2}
    bits : int >= 0

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.
    """
    delta = _positive_fraction(sensitivity, "sensitivity")
    count = check_integer(count, "count", minimum=1)
    norm = _check_norm(norm)
    bits = check_integer(bits, "bits", minimum=0, maximum=200)
    widening = Fraction(count) if norm == 1 else _ceil_sqrt(count)
    return _floor_log2(delta / widening) - bits


def _check_norm(norm: Any) -> int:
    norm = check_integer(norm, "norm", minimum=1, maximum=2)
    return norm


def grid_sensitivity(sensitivity: Any, k: int, count: int = 1, *, norm: int = 1) -> Fraction:
    """An upper bound, in grid units, on the sensitivity of the query rounded to ``2**k · Z``.

    Rounding moves each of the ``count`` coordinates by at most ``2**(k-1)``, so for
    neighbours ``x, x'`` the rounded values differ by at most ``Δ + count·2**k`` (ℓ1) or
    ``Δ + sqrt(count)·2**k`` (ℓ2). In grid units the ℓ1 difference is an integer, so the
    ℓ1 bound is ``floor(Δ/2**k) + count``; the ℓ2 bound is ``Δ/2**k`` plus a dyadic upper bound
    on ``sqrt(count)``.

    Parameters
    ----------
    sensitivity : real number > 0
        The unrounded query's ℓ1 or ℓ2 sensitivity ``Δ``.
    k : int
        Grid exponent (see :func:`grid_exponent`).
    count : int >= 1
        Number of coordinates.
    norm : {1, 2}

    Returns
    -------
    Fraction
        ``D`` with ``||round(f(x)) - round(f(x'))|| <= D · 2**k`` for all neighbours.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.
    """
    delta = _positive_fraction(sensitivity, "sensitivity")
    k = check_integer(k, "k")
    count = check_integer(count, "count", minimum=1)
    norm = _check_norm(norm)
    units = delta / Fraction(2) ** k
    if norm == 1:
        return Fraction(math.floor(units) + count)
    return units + _ceil_sqrt(count)


def exact_path(size: int) -> bool:
    """Whether grid arithmetic on ``size`` values runs on Python ints (public choice).

    The path is chosen from the *size* alone, never from the values: every release of up to
    ``_FIXED_MAX`` (64) values is computed on exact Python integers whatever its magnitude,
    so two neighbouring inputs take the same path. Larger arrays use ``int64`` while every
    value fits and Python ints otherwise: that switch depends on the values (see "Timing"
    in the module docstring), the price of vectorised speed.
    """
    return size <= _FIXED_MAX


def _round_units(value: Any, k: int) -> int:
    """``value / 2**k`` rounded to the nearest integer (ties to even), exactly.

    One code path for floats and Fractions alike (``as_integer_ratio``), so the cost does
    not depend on whether the value is a float64.
    """
    numerator, denominator = value.as_integer_ratio()
    if k <= 0:
        numerator <<= -k
    else:
        denominator <<= k
    quotient, remainder = divmod(numerator, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient & 1):
        quotient += 1
    return quotient


def _object_ints(items: list[int], shape: tuple[int, ...]) -> np.ndarray:
    result = np.empty(len(items), dtype=object)
    result[:] = items
    return result.reshape(shape)


# Vectorised grid arithmetic on float64/int64 (the non-exact path): why it is exact.
#
# * Scaling by a power of two is exact in IEEE-754 binary64 unless the result leaves the
#   normal range: ``x · 2**j`` has the significand of ``x`` (at most 53 bits, also for a
#   subnormal ``x``) and only a new exponent. ``2.0**j`` is itself a float for
#   ``-1022 <= j <= 1023``, and a multiplication is correctly rounded, so ``x * 2.0**j`` is
#   the exact product whenever that product is a normal float; ``np.ldexp`` (slower) does
#   the same for any ``j``.
# * ``to_grid``: if ``x · 2**-k`` underflows (magnitude ``< 2**-1022``), the rounded result
#   is a float of magnitude ``< 2**-1022`` or zero, and so is the exact value: both round
#   to the integer 0, which is the exact answer since ``|x / 2**k| < 1/2``. If it overflows
#   the result is ±inf, which the range check below sends to the exact path. Otherwise it
#   is exact, and ``np.rint`` (round half to even, exact on floats) gives the exact nearest
#   integer. A float ``r`` with ``|r| < 2**62`` converts to ``int64`` exactly; ``max`` and
#   ``min`` decide that without a temporary array (NaN cannot occur: the caller validated
#   finite values, and a NaN would fail both comparisons and take the exact path).
# * ``from_grid``: ``int64 -> float64`` in NumPy is the C conversion, correctly rounded to
#   nearest-even on IEEE hardware, so ``float(u) = RN(u)``. Multiplying by ``2.0**k`` then
#   gives ``RN(u) · 2**k = RN(u · 2**k)`` (rounding commutes with power-of-two scaling) when
#   the product is normal and finite. ``|u| >= 1`` and ``k >= -1022`` rule out subnormal
#   results (where a second rounding would occur: double rounding); an overflow gives ±inf
#   exactly when the correctly rounded ``u · 2**k`` exceeds the largest float, which is also
#   what :func:`_units_to_float` returns. Hence the fast path for ``-1022 <= k <= 1023``;
#   other ``k`` (grid steps below ``2**-1022`` or above ``2**1023``, from sensitivities
#   near the ends of the float range) take the exact path.
# Zero: ``0.0 · 2**j`` and ``rint(-0.0)`` are signed zeros, which convert to the integer 0;
# ``int64`` 0 converts to ``+0.0``, as ``_units_to_float(0, k)`` does.
_SCALE_MIN, _SCALE_MAX = -1022, 1023  # 2.0**j is a normal float for j in this range
_IN_PLACE_CHUNK = 1 << 13  # elements converted at once in place (NumPy's temporary stays small)


def _in_place(operation: Callable[[np.ndarray, np.ndarray], Any], source: np.ndarray,
              target: np.ndarray) -> None:
    """``operation(source, out=target)`` for 1-d views of one memory block, by chunks.

    Element ``i`` of ``target`` occupies the bytes of element ``i`` of ``source`` (another
    dtype of the same size): NumPy would copy the whole source first to be safe; by chunks
    its copy is small and every element is read before it is overwritten.
    """
    for start in range(0, source.size, _IN_PLACE_CHUNK):
        operation(source[start:start + _IN_PLACE_CHUNK], target[start:start + _IN_PLACE_CHUNK])


def _float_units(values: np.ndarray, k: int) -> np.ndarray | None:
    """``rint(values / 2**k)`` as ``int64`` (exact, see above), or None if one is ``>= 2**62``.

    One output array and no other full-size temporary: the rounded floats are computed in
    the output's own memory (viewed as float64) and converted in place.
    """
    values = values.reshape(-1)
    out = np.empty(values.size, dtype=np.int64)
    scaled = out.view(np.float64)
    with np.errstate(over="ignore", under="ignore"):  # ±inf takes the exact path below
        if _SCALE_MIN <= -k <= _SCALE_MAX:
            np.multiply(values, 2.0 ** -k, out=scaled)
        else:  # |j| >= 2200 gives 0 or ±inf for every finite float, like any larger |j|
            np.ldexp(values, max(-2200, min(2200, -k)), out=scaled)
    np.rint(scaled, out=scaled)
    if scaled.size and not (scaled.max() < _INT64_SAFE and scaled.min() > -_INT64_SAFE):
        return None
    _in_place(lambda chunk, into: np.copyto(into, chunk, casting="unsafe"), scaled, out)
    return out


def _exact_dtype(values: np.ndarray) -> bool:
    """Whether an array must be rounded element by element (no float64 holds it exactly)."""
    return values.dtype.kind != "f" or values.dtype.itemsize > 8


def to_grid(values: np.ndarray, k: int, *, exact: bool | None = None) -> np.ndarray:
    """Round finite floats to the nearest multiple of ``2**k`` (ties to even), in grid units.

    Exact: ``values · 2**-k`` is computed exactly (power-of-two scaling) or in integer
    arithmetic. On the exact path (:func:`exact_path`: up to 64 values, chosen from the size
    alone) the result is always an ``object`` array of Python ints; otherwise an ``int64``
    array, or an ``object`` array if a value does not fit in 62 bits.

    Parameters
    ----------
    values : numpy.ndarray of float64, or object array of floats and Fractions
        Finite values (validated by the caller, e.g. ``check_finite_array(..., exact=True)``).
        An object array is rounded exactly from each element's exact value, so a value that
        float64 cannot hold (``2**54 + 3``) is never rounded to a float first; so is an
        integer or ``longdouble`` array.
    k : int
        Grid exponent.
    exact : bool, optional
        Force the Python-int path (``True``) or the vectorised one (``False``); default
        ``exact_path(values.size)``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from fractions import Fraction
    >>> to_grid(np.array([Fraction(2**54 + 3)], dtype=object), 0).tolist()
    [18014398509481987]
    >>> to_grid(np.array([0.75, -2.5]), -1).tolist()
    [2, -5]
    """
    values = np.asarray(values)
    if exact_path(values.size) if exact is None else exact:
        return _object_ints([_round_units(v, k) for v in values.ravel().tolist()],
                            values.shape)
    if not _exact_dtype(values):
        units = _float_units(values.astype(np.float64, copy=False), k)
        if units is not None:
            return units.reshape(values.shape)
    return _as_int_array([_round_units(v, k) for v in values.ravel().tolist()], values.shape)


def _within(array: np.ndarray, bound: int) -> bool:
    """``|array| < bound`` everywhere, by two reductions (no temporary, no ``abs`` overflow)."""
    return array.size == 0 or (int(array.max()) < bound and int(array.min()) > -bound)


def add_units(a: np.ndarray, b: np.ndarray, *, exact: bool | None = None,
              overwrite: bool = False) -> np.ndarray:
    """Exact sum of two integer arrays in grid units.

    On the exact path (:func:`exact_path` of ``a.size``, or ``exact=True``) the sum is
    always taken on Python ints. Otherwise ``int64``, unless an operand may come near
    ``2**62`` (``int64`` addition could wrap around silently): then Python ints. With
    ``overwrite=True`` an ``int64`` sum is stored in ``a`` itself (the caller no longer
    needs it), saving a new array.
    """
    a, b = np.asarray(a), np.asarray(b)
    python = exact_path(a.size) if exact is None else exact
    if not python and a.dtype == np.int64 and b.dtype == np.int64 and \
            _within(a, _INT64_SAFE // 2) and _within(b, _INT64_SAFE // 2):
        if overwrite and a.flags.writeable and np.broadcast_shapes(a.shape, b.shape) == a.shape:
            return np.add(a, b, out=a)
        return a + b
    total = [int(x) + int(y) for x, y in zip(a.ravel().tolist(),
                                              np.broadcast_to(b, a.shape).ravel().tolist(),
                                              strict=True)]
    return _object_ints(total, a.shape) if python else _as_int_array(total, a.shape)


def from_grid(units: np.ndarray, k: int, *, exact: bool | None = None,
              overwrite: bool = False) -> np.ndarray:
    """The floats nearest to ``units · 2**k`` (a deterministic post-processing step).

    Parameters
    ----------
    units : numpy.ndarray of int64 or of Python ints
    k : int
        Grid exponent.
    exact : bool, optional
        Force the Python-int path (``True``) or allow the ``int64`` one (``False``);
        default ``exact_path(units.size)``.
    overwrite : bool
        If true, an ``int64`` ``units`` (which the caller no longer needs) may be replaced
        by the result: the floats are then stored in its memory, and no new array is made.

    Returns
    -------
    numpy.ndarray of float64
    """
    units = np.asarray(units)
    python = exact_path(units.size) if exact is None else exact
    if not python and units.dtype == np.int64 and _SCALE_MIN <= k <= _SCALE_MAX:
        scale = 2.0 ** k
        with np.errstate(over="ignore"):  # ±inf is the nearest float (see above)
            if not (overwrite and units.flags.writeable and units.flags.c_contiguous):
                return np.multiply(units, scale)  # one rounding (see above)
            flat = units.reshape(-1)
            result = flat.view(np.float64)
            _in_place(lambda chunk, into: np.multiply(chunk, scale, out=into), flat, result)
        return result.reshape(units.shape)
    flat = [_units_to_float(int(u), k) for u in units.ravel().tolist()]
    return np.array(flat, dtype=np.float64).reshape(units.shape)


def _units_to_float(units: int, k: int) -> float:
    """Nearest float to ``units · 2**k`` (±inf beyond the range); one correctly rounded step."""
    try:
        return float(units << k) if k >= 0 else units / (1 << -k)
    except OverflowError:
        return math.inf if units > 0 else -math.inf
