"""Exact discrete Laplace and discrete Gaussian arrays by block-envelope rejection.

The target is a symmetric pmf ``P[X = x] ∝ ρ(x)`` on the integers with ``ρ`` decreasing in
``|x|``: ``ρ(x) = exp(-|x|/s)`` (discrete Laplace) or ``exp(-x²/(2σ²))`` (discrete
Gaussian). A draw is made of four independent pieces:

1. **An entry** ``b`` of a table. Entry 0 is the value 0 (weight ``ρ(0) = 1``). Entry
   ``j = 1 .. J`` is the block of magnitudes ``[x*_j, x*_j + m)``, ``x*_j = 1 + (j-1)·m``,
   ``m = 2**L`` about a sixteenth of the scale (``m = 1`` for scales below 32), with weight
   ``2·m·ρ(x*_j)``. Entry ``J + 1`` is the tail ``|x| >= x_T = 1 + J·m``, whose envelope
   ``ρ(x_T)·exp(-c·(|x| - x_T))`` (``c = 1/s``, or ``x_T/σ²``, which bounds the Gaussian
   because ``x² >= x_T² + 2·x_T·(x - x_T)``) has the weight ``2·ρ(x_T)/(1 - e**-c)``. ``x_T``
   is chosen so that the tail carries about ``2**-64`` of the mass.
2. **A sign** (one bit) and **an offset** ``R`` in the block (``L`` uniform bits).
3. **Acceptance** with probability ``ρ(x)/ρ(x*_j)`` (``exp(-γ)``, ``γ = R/s`` or
   ``R·(2x* + R)/(2σ²)``, at most about 0.6 by the choice of ``m`` and ``x_T``).
4. In the tail (probability about ``2**-64``): ``|x| - x_T`` geometric with ``P[G >= g] =
   e**(-c·g)`` and, for the Gaussian, acceptance with probability ``exp(-G²/(2σ²))`` (exact
   fixed-cost trials of :mod:`dpkit._samplers.bernoulli`).

Then ``P[propose x and accept] = ρ(x)/Σ weights`` for every ``x``: accepted values have
exactly the target distribution (rejection sampling, von Neumann 1951). A request of ``n``
values makes ``n`` proposals and spares (:func:`spare`: 4% more at ``10**5``, 48% at 65) in
one round, and keeps the first ``n`` accepted: accepted proposals are independent draws from
the target whatever the acceptance pattern, so which ones are kept depends only on that
pattern, never on accepted values. With blocks of width 1 (``m = 1``) every proposal is
accepted; with wider blocks about 97% are, since ``γ <= 1/16`` in most blocks; fewer than
``n`` accepted (then a second round, for the rest) has probability below ``2**-64``. The
sampler used to propose the rejected positions again, round after round until all were
accepted (issue 18): at 1,000 values two rounds in 40% of 5,000 releases, three in 57%, four
in 3%, five in 0.16%, each round about 100 µs (unpadded, core 1): a release's work varied
with how many proposals happened to be rejected, the slowest releases taking about 2.5 times
the median. The rounds revealed nothing about the values returned, but the deadline had to
cover the slowest. The spare proposals cost random bits: see "Random bits".

**The entry** is drawn by lazy inversion (Knuth & Yao 1976: an exact sampler needs, and can
get close to, the entropy of what it samples). The cumulative weights ``C_b`` are bracketed
once per scale in MPFR with directed rounding and stored as 62-bit fixed-point lower and upper
bounds. A draw reads ``G`` bits ``p`` (``G`` chosen per scale to minimise the expected bits)
and looks them up in a guide table that maps ``p`` to ``b`` when the whole interval
``[p, p + 1)·2**-G`` of uniforms lies between the bounds of ``C_b`` and ``C_{b+1}``. The rest
read 8 more bits and look them up in a second-level table built the same way for each
undecided ``p``; the few left read 16 more bits at a time and are decided against the
fixed-point bounds by binary search; after 62 bits, a comparison those bounds cannot decide
(each of the ``J + 1`` inner bounds ``C_b`` leaves one or two 62-bit prefixes undecided:
probability at most ``2·(J + 1)·2**-62``, below ``2**-50`` since ``J <= 1421``) continues
with more bits against MPFR brackets of higher precision, exactly.

**Acceptance** compares a uniform ``U`` with ``exp(-γ)``. The first ``k`` bits ``u`` of
``U`` (``k = 4`` to 10) decide most trials by integer thresholds on the offset: ``U <
exp(-γ)`` for sure when ``γ <= ln(2**k/(u + 1))``, and ``U >= exp(-γ)`` when ``γ >=
ln(2**k/u)``; as ``γ`` grows with ``R`` these are ``R <= yes[u]`` and ``R >= no[u]``,
computed once per scale (and per block for the Gaussian) from MPFR logarithms rounded
outwards. For each offset only the ``u`` whose interval ``[u, u + 1)·2**-k`` holds
``exp(-γ)`` is left undecided (two at a threshold's rounding): about ``2**-k`` of the
trials (at most ``2**-k + 2/m``, ``tests/test_envelope.py``). ``k`` starts at 7 and moves
to a byte boundary of a proposal's fields where one is near (down to 4, or up by at most 3
bits with the guide bits: :meth:`_EntryTable._plan`); more first bits cost bits (up to ``H +
16.5`` a value, at a scale or ``σ`` of ``2**40``: ``benchmarks/bits.py``) but save work.
With ``k = 3``, the Laplace's ``γ < 1/16 < ln(8/7)`` left ``u = 7`` undecided in every
block, an eighth of all proposals, and a release of ``10**6`` values took 1.2–1.3 times as
long (load 9–13 on 2 cores). The undecided few read 8 more bits at a time and
are compared with float brackets of ``exp(-γ)`` that use no transcendental function,
evaluated at the ends of a float bracket of ``γ`` and widened by ``2**-40`` (far more
than their rounding error): first
``1 - γ + γ²/2 - γ³/6 <= exp(-γ) <= 1 - γ + γ²/2`` (any ``γ >= 0``), then, for the few
still undecided, the Taylor partial sums of degree 7 and 8 (for ``0 <= γ <= 1`` the terms
decrease, so a sum ending on an odd power is below ``exp(-γ)`` and one ending on an even
power above; every block has ``γ < 1``, checked when the table is built). After 52 bits of
``U``, an undecided comparison (probability about ``2**-39``) continues with MPFR brackets
of ``exp(-γ)``.

Random bits: the fields of a proposal (guide bits, sign, offset, first acceptance bits) are
read together with :func:`dpkit._samplers.bits.read_fields`, exactly as many bits as used
(with up to 3 acceptance bits fewer, or up to 3 acceptance or guide bits more, when that
makes a proposal whole bytes, which is faster to split). ``benchmarks/bits.py`` prints the
bits per accepted sample against the entropy (at most ``H + 16.5`` over its scales, at
``2**40``, for ``10**5`` values, ``H + 15.5`` to ``H + 15.6`` before the spare proposals:
the accepted ones left unused, about ``N(1 - r) - n`` of them at the true rejection rate
``r``, 1,060 for the Laplace (``r`` 3.06%) and 1,720 for the Gaussian (2.43%) at ``10**5``,
add 0.6 and 1.0 bits a value there, more for shorter vectors: ``H + 20.4`` at 1,000 values,
``H + 40.9`` at 65, for the Gaussian; ``H + 10.4`` with the former 3 first acceptance bits);
``tests/test_envelope.py`` checks that they stay within the entropy plus 17 at ``10**5``.

Timing: one round of proposals, bar the event above; the loops (undecided entries and
acceptances, the tail) run over the whole array, so their number depends on all its values
together, not on one (see
"Timing" in :mod:`dpkit._samplers`). Within a pass, the selections on drawn values use bit
masks, not :func:`numpy.where`; a drawn prefix is located by counting comparisons
(:meth:`_EntryTable.locate`), not by :func:`numpy.searchsorted`; and the offsets of the
entry of 0 are cleared, and the tail looked for, in every call, not only in those that
drew such an entry (that pass once showed that a refined entry was 0: certified ε ≥ 2.2
from the fill's time, 65 values at scale 1000, unpadded).

References
----------
D. E. Knuth, A. C. Yao. *The complexity of nonuniform random number generation.* In
Algorithms and Complexity, Academic Press, 1976.
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (the target distributions and their exact one-at-a-time samplers).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._samplers.bernoulli import (
    bernoulli_exp_unchecked,
    fixed_bernoulli,
    fixed_geometric,
    fixed_plan,
)
from dpkit._samplers.bits import mask, read_fields
from dpkit._samplers.exact import MARGIN, exp_neg_bounds, floor_log2, floor_scaled
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

_FIXED_BITS = 62            # cumulative weights are stored as multiples of 2**-62
_ONE = 1 << _FIXED_BITS
_TAIL_BITS = 64             # the tail entry carries about 2**-64 of the envelope's mass
_BLOCKS_PER_SCALE = 16      # block width m = 2**L <= scale/16
_MAX_GUIDE_BITS = 16
_SUB_GUIDE_BITS = 8         # bits of an undecided entry's first second-level lookup
_MORE_GUIDE_BITS = 16       # bits added per later round to an undecided entry
_ACCEPT_BITS = 7            # first bits of the acceptance uniform (before byte alignment)
_LEAST_ACCEPT_BITS = 4      # ... and the fewest (2**-4 of the trials left undecided)
_MORE_ACCEPT_BITS = 8
_UNIFORM_BITS = 52          # acceptance uniforms are compared in float up to this many bits
_POLY_SLACK = 2.0**-40      # absolute widening of the Taylor brackets (rounding is < 2**-48)
_SETUP_PRECISION = 128      # MPFR precision of the table
_MAX_PADDING = 3            # extra bits a proposal may read to make its fields byte-aligned

#: A bound on the probability that a proposal is rejected, at every scale and ``σ²``
#: (measured at most 3.2%: a block of width ``m <= s/16`` rejects about ``m/(2s)`` of its
#: proposals; ``tests/test_envelope.py`` checks it).
SPARE_RATE = 0.035


def spare(n: int) -> int:
    """The extra proposals a request of ``n`` values makes: ``N = n + spare(n)`` proposals
    are expected to give ``n + 10·sqrt(n·r) + 12`` accepted at the rejection rate ``r =``
    :data:`SPARE_RATE`, and give fewer than ``n`` with probability below ``2**-64`` (the
    exact binomial tail, below ``2**-70`` for ``n`` from 1 to ``10**7``:
    ``tests/test_envelope.py``).

    >>> spare(65), spare(1000), spare(100_000)
    (31, 111, 4253)
    """
    return math.ceil((n + 10 * math.sqrt(n * SPARE_RATE) + 12) / (1 - SPARE_RATE)) - n


def _exact(value: Any) -> Fraction:
    """A finite MPFR number as an exact :class:`Fraction`."""
    return Fraction(*value.as_integer_ratio())


def _ceil_scaled(value: Any) -> int:
    """``ceil(value · 2**62)`` exactly, for a finite MPFR number ``value``."""
    numerator, denominator = value.as_integer_ratio()
    return -((-int(numerator) << _FIXED_BITS) // int(denominator))


class _LazyUniform:
    """A uniform ``U`` in [0, 1) of which the first ``nbits`` bits (``value``) are known."""

    def __init__(self, value: int, nbits: int, rng: RandomSource) -> None:
        self.value, self.nbits, self.rng = value, nbits, rng

    def below(self, bounds: Callable[[int], tuple[Any, Any]]) -> bool:
        """``U < q`` exactly, for ``q`` given by MPFR brackets ``bounds(precision)``.

        More bits of ``U`` (and more precision) are drawn until the interval of uniforms
        with the known prefix lies on one side of the bracket; this ends with probability 1.
        """
        while True:
            lo, hi = bounds(self.nbits + 64)
            left = Fraction(self.value, 1 << self.nbits)
            if left + Fraction(1, 1 << self.nbits) <= Fraction(*lo.as_integer_ratio()):
                return True
            if left >= Fraction(*hi.as_integer_ratio()):
                return False
            self.value = (self.value << 8) | self.rng.bits(8)
            self.nbits += 8


def _taylor(gamma: np.ndarray, degree: int) -> np.ndarray:
    """``sum_{i <= degree} (-gamma)**i / i!`` by Horner's rule (``0 <= gamma <= 1``).

    Every intermediate value lies in [0, 1], so each of the ``3·degree`` roundings errs by at
    most ``2**-53`` and the result by less than ``2**-48`` for ``degree <= 8``.
    """
    result = np.ones_like(gamma)
    for i in range(degree, 0, -1):
        result = 1.0 - gamma * result / i
    return result


def _exp_neg_bracket(gamma_lo: np.ndarray, gamma_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds ``lo <= exp(-γ) <= hi`` for any ``γ`` in ``[gamma_lo, gamma_hi]``, ``γ < 1``.

    For ``γ <= 1`` the terms of ``exp(-γ)``'s series decrease, so the partial sum ending on an
    odd power is below it and one ending on an even power above:
    ``exp(-γ) >= exp(-gamma_hi) >= S_7(gamma_hi)``, ``exp(-γ) <= S_8(gamma_lo)``.
    (``gamma_hi`` may exceed 1 by the float margin only; ``min(·, 1)`` keeps the lower bound
    below ``exp(-1) <= exp(-γ)`` then, up to far less than ``_POLY_SLACK``.)
    """
    lo = _taylor(np.minimum(gamma_hi, 1.0), 7) - _POLY_SLACK
    hi = _taylor(gamma_lo, 8) + _POLY_SLACK
    return lo, hi


class _Layout:
    """Where a target's magnitudes lie: the blocks, the tail and the exponent ``γ`` of an offset.

    Entry 0 is the value 0, entries ``1 .. J`` (``blocks``) the blocks of ``width = 2**L``
    magnitudes starting at ``xstar[j]``, entry ``J + 1`` (``tail``) the magnitudes from
    ``tail_start`` on (see the module docstring).
    """

    def __init__(self, kind: str, parameter: Fraction) -> None:
        self.kind, self.parameter = kind, parameter
        if kind == "laplace":
            spread = float(parameter)
            reach = _TAIL_BITS * math.log(2) * spread
            self.log_width = max(0, floor_log2(parameter / _BLOCKS_PER_SCALE))
        else:
            spread = math.sqrt(float(parameter))
            reach = math.sqrt(2 * _TAIL_BITS * math.log(2)) * spread
            self.log_width = max(0, floor_log2(parameter / _BLOCKS_PER_SCALE**2) // 2)
        self.width = 1 << self.log_width
        self.blocks = max(1, math.ceil((reach - 1) / self.width))       # J
        self.tail_start = 1 + self.blocks * self.width                  # x_T
        self.tail = self.blocks + 1                                     # the tail's entry
        self.xstar = np.array([0] + [1 + j * self.width for j in range(self.blocks)],
                              dtype=np.int64)
        if kind == "laplace":
            self.tail_rate = 1 / parameter
            self.float_denominator = float(parameter)                   # γ = R/s
        else:
            self.tail_rate = Fraction(self.tail_start) / parameter
            self.float_denominator = float(2 * parameter)               # γ = R(2x*+R)/(2σ²)

    def exponent(self, x: int) -> Fraction:
        """``a`` with ``ρ(x) = exp(-a)``."""
        if self.kind == "laplace":
            return x / self.parameter
        return Fraction(x * x) / (2 * self.parameter)

    def gamma(self, offset: np.ndarray, xstar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Float bounds of ``γ`` (``R/s`` or ``R(2x* + R)/(2σ²)``).

        ``R < 2**49`` converts exactly; ``2x* + R < 2**56`` with relative error ``<= 2**-53``,
        and the product and quotient (with the correctly rounded denominator) add three
        more such errors: the float is within ``5·2**-53`` (relative) of ``γ``, far inside
        the relative margin ``MARGIN = 2**-44`` (which also covers its own rounding).
        """
        r = offset.astype(np.float64)
        if self.kind == "laplace":
            gamma = r / self.float_denominator
        else:
            gamma = r * (2 * xstar + offset).astype(np.float64) / self.float_denominator
        return gamma * (1.0 - MARGIN), gamma * (1.0 + MARGIN)

    def exact_gamma(self, offset: int, xstar: int) -> Fraction:
        if self.kind == "laplace":
            return offset / self.parameter
        return Fraction(offset * (2 * xstar + offset)) / (2 * self.parameter)


class _EntryTable:
    """The entries' cumulative weights, bracketed, and the guide tables that draw an entry.

    Also fixes the number of acceptance bits read with each proposal (``accept_bits``),
    chosen together with the guide bits so that a proposal fills whole bytes.
    """

    def __init__(self, layout: _Layout) -> None:
        self.layout = layout
        self._cdf_cache: dict[int, tuple[list[Any], list[Any]]] = {}
        lows, highs = self._cdf(_SETUP_PRECISION)
        self.lo = np.array([min(floor_scaled(v, _FIXED_BITS), _ONE) for v in lows],
                           dtype=np.int64)
        self.hi = np.array([min(_ceil_scaled(v), _ONE) for v in highs], dtype=np.int64)
        self.lo[0] = self.hi[0] = 0
        self.lo[-1] = self.hi[-1] = _ONE
        # ``hi`` cut into rows of about sqrt(J) bounds (the last padded with bounds no
        # prefix reaches) and the first bound of each row, for :meth:`locate`
        width = math.isqrt(self.hi.size - 1) + 1
        rows = np.full(-(-self.hi.size // width) * width, np.iinfo(np.int64).max,
                       dtype=np.int64)
        rows[:self.hi.size] = self.hi
        self.hi_rows = rows.reshape(-1, width)
        self.row_starts = self.hi_rows[1:, 0].copy()
        self.guide_bits, self.accept_bits, guide = self._plan()
        self.guide = guide.astype(np.int32)         # np.take with a uint16 index: no intp copy
        # Second level: for each undecided guide prefix, a table over the next bits.
        self.sub_bits = max(0, min(_SUB_GUIDE_BITS, _FIXED_BITS - self.guide_bits))
        open_prefixes = np.flatnonzero(guide < 0)
        self.sub_start = np.zeros(guide.size, dtype=np.int64)
        self.sub_start[open_prefixes] = np.arange(open_prefixes.size) << self.sub_bits
        longer = (open_prefixes[:, None] << self.sub_bits) + np.arange(1 << self.sub_bits)
        self.sub_guide = self.decide_public(longer.ravel(), self.guide_bits + self.sub_bits).astype(
            np.int32)

    def _cdf(self, precision: int) -> tuple[list[Any], list[Any]]:
        """MPFR bounds of ``C_0 = 0, C_1, ..., C_{J+2} = 1`` (cumulative weights / total)."""
        if precision in self._cdf_cache:
            return self._cdf_cache[precision]
        layout = self.layout
        exps = [exp_neg_bounds(layout.exponent(int(x)), precision)
                for x in layout.xstar[1:]]
        t_lo, t_hi = exp_neg_bounds(layout.exponent(layout.tail_start), precision)
        c_lo, c_hi = exp_neg_bounds(layout.tail_rate, precision)
        weight = 2 * layout.width                 # a power of two: products below are exact
        with gmpy2.context(precision=precision, round=gmpy2.RoundUp):
            denominator_up = 1 - c_lo
            highs = [gmpy2.mpfr(1)] + [e_hi * weight for _, e_hi in exps]
        with gmpy2.context(precision=precision, round=gmpy2.RoundDown):
            denominator_down = 1 - c_hi
            lows = [gmpy2.mpfr(1)] + [e_lo * weight for e_lo, _ in exps]
            lows.append(2 * t_lo / denominator_up)
            sums_lo = list(np.cumsum([gmpy2.mpfr(0), *lows]))
        with gmpy2.context(precision=precision, round=gmpy2.RoundUp):
            highs.append(2 * t_hi / denominator_down)
            sums_hi = list(np.cumsum([gmpy2.mpfr(0), *highs]))
            cdf_hi = [s / sums_lo[-1] for s in sums_hi]
        with gmpy2.context(precision=precision, round=gmpy2.RoundDown):
            cdf_lo = [s / sums_hi[-1] for s in sums_lo]
        cdf_lo[-1] = cdf_hi[-1] = gmpy2.mpfr(1)
        self._cdf_cache[precision] = (cdf_lo, cdf_hi)
        return cdf_lo, cdf_hi

    def decide(self, prefix: np.ndarray, nbits: int) -> np.ndarray:
        """The entry of every uniform starting with ``prefix`` (``nbits`` bits), or -1.

        ``b`` is returned only when ``[prefix, prefix + 1)·2**-nbits`` lies in
        ``[C_b, C_{b+1})`` for sure: its left end is at least the upper bound of ``C_b``
        and its right end at most the lower bound of ``C_{b+1}``.
        """
        start = prefix << (_FIXED_BITS - nbits)
        return self._inside(start, nbits, self.locate(start))

    def decide_public(self, prefix: np.ndarray, nbits: int) -> np.ndarray:
        """:meth:`decide` for public prefixes (building the guide tables: every prefix of a
        width), by NumPy's binary search, whose cost depends on the prefixes, not only on
        their number: faster on many sorted keys, never used on drawn bits."""
        start = prefix << (_FIXED_BITS - nbits)
        return self._inside(start, nbits, np.searchsorted(self.hi, start, side="right") - 1)

    def _inside(self, start: np.ndarray, nbits: int, entry: np.ndarray) -> np.ndarray:
        """``entry`` where ``[start, start + 2**(62 - nbits))`` lies inside it, else -1."""
        inside = start + (1 << (_FIXED_BITS - nbits)) <= self.lo[entry + 1]
        entry |= mask(~inside)                          # -1 outside: no branch per value
        return entry

    def locate(self, start: np.ndarray) -> np.ndarray:
        """The largest ``b`` with ``hi[b] <= start``, for every ``0 <= start < 2**62``.

        ``np.searchsorted(hi, start, side="right") - 1``, by counting: the rows of bounds
        whose first bound is at most ``start``, then the bounds at most ``start`` in the
        last such row (the bounds never decrease), about ``2·sqrt(J)`` comparisons per key
        whatever the keys. NumPy's binary search loops for a number of steps, and takes
        branches, that depend on the keys and on their order.
        """
        key = start[:, None]
        row = np.sum(self.row_starts <= key, axis=1, dtype=np.int64)
        inside = np.sum(self.hi_rows[row] <= key, axis=1, dtype=np.int64)
        return row * self.hi_rows.shape[1] + inside - 1

    def _plan(self) -> tuple[int, int, np.ndarray]:
        """Guide bits ``G``, first acceptance bits ``k`` and the guide table.

        ``G`` minimises the expected entry bits ``G + 16·P[undecided]``. A proposal's fields
        (``G + 1 + L + k`` bits) are split fastest by :func:`read_fields` when they fill
        whole bytes, which matters more than the ``2**-k`` of trials the first acceptance
        bits leave undecided (a Laplace release of ``10**5`` values at scale ``2**38``: 51
        bits with ``k = 7`` took 1.25 times as long as 48 bits with ``k = 4``, same process,
        load 12). So ``k`` starts at ``_ACCEPT_BITS = 7`` (when there is an acceptance step)
        and drops to the byte boundary below if that keeps ``k >= _LEAST_ACCEPT_BITS = 4``;
        otherwise ``G`` or ``k`` grow one bit at a time to the boundary above, if at most
        ``_MAX_PADDING = 3`` bits away, where a bit saves more expected bits later
        (``16·ΔP[undecided]`` against ``8·2**-(k+1)``). Hence ``4 <= k <= 10``.
        """
        undecided = {bits: float(np.mean(self.decide_public(np.arange(1 << bits, dtype=np.int64),
                                                      bits) < 0))
                     for bits in range(1, _MAX_GUIDE_BITS + 1)}
        guide_bits = min(undecided, key=lambda b: b + _MORE_GUIDE_BITS * undecided[b])
        log_width = self.layout.log_width
        accept_bits = _ACCEPT_BITS if log_width else 0
        beyond = (guide_bits + 1 + log_width + accept_bits) % 8     # bits past a whole byte
        if accept_bits and accept_bits - beyond >= _LEAST_ACCEPT_BITS:
            accept_bits -= beyond                       # to the byte boundary below
        if (-(guide_bits + 1 + log_width + accept_bits)) % 8 > _MAX_PADDING:
            return guide_bits, accept_bits, self.decide_public(
                np.arange(1 << guide_bits, dtype=np.int64), guide_bits)
        while (guide_bits + 1 + log_width + accept_bits) % 8:
            guide_gain = (_MORE_GUIDE_BITS * (undecided[guide_bits] - undecided[guide_bits + 1])
                          if guide_bits < _MAX_GUIDE_BITS else -1.0)
            accept_gain = _MORE_ACCEPT_BITS * 2.0 ** -(accept_bits + 1) if accept_bits else -1.0
            if guide_gain < 0 and accept_gain < 0:
                break                                   # no byte alignment: the slower split
            if guide_gain >= accept_gain:
                guide_bits += 1
            else:
                accept_bits += 1
        guide = self.decide_public(np.arange(1 << guide_bits, dtype=np.int64), guide_bits)
        return guide_bits, accept_bits, guide

    def refine(self, prefix: np.ndarray, nbits: int, rng: RandomSource) -> np.ndarray:
        """Entries for uniforms whose first ``nbits`` bits the guide could not decide."""
        result = np.full(prefix.size, -1, dtype=np.int64)
        pending = np.arange(prefix.size)
        if self.sub_bits and nbits == self.guide_bits:  # the second-level tables first
            (fresh,) = read_fields(rng, prefix.size, (self.sub_bits,))
            result[:] = self.sub_guide[self.sub_start[prefix] + fresh]
            prefix = (prefix << self.sub_bits) | fresh.astype(np.int64)
            nbits += self.sub_bits
            pending = np.flatnonzero(result < 0)
            prefix = prefix[pending]
        while pending.size:
            if nbits >= _FIXED_BITS:                        # probability <= 2(J + 1)·2**-62
                for j, value in zip(pending, prefix, strict=True):
                    result[j] = self._exact_entry(int(value), rng)
                break
            more = min(_MORE_GUIDE_BITS, _FIXED_BITS - nbits)
            (fresh,) = read_fields(rng, pending.size, (more,))
            prefix = (prefix << more) | fresh.astype(np.int64)
            nbits += more
            found = self.decide(prefix, nbits)
            done = found >= 0
            result[pending[done]] = found[done]
            pending, prefix = pending[~done], prefix[~done]
        return result

    def _exact_entry(self, prefix: int, rng: RandomSource) -> int:
        """The entry of ``U`` given its first 62 bits, against MPFR brackets of the ``C_b``."""
        uniform = _LazyUniform(prefix, _FIXED_BITS, rng)
        entry = int(np.searchsorted(self.hi, prefix, side="right")) - 1   # C_entry <= U
        while entry < self.layout.tail and not uniform.below(
                functools.partial(self._boundary, entry + 1)):
            entry += 1
        return entry

    def _boundary(self, b: int, precision: int) -> tuple[Any, Any]:
        lows, highs = self._cdf(precision)
        return lows[b], highs[b]


class _Acceptance:
    """Exact trials ``U < exp(-γ)`` for the offsets of a proposal (blocks wider than 1 only).

    Integer thresholds on the offset decide most trials from the first ``accept_bits`` bits
    of ``U``; float Taylor brackets, then MPFR brackets, decide the rest.
    """

    def __init__(self, layout: _Layout, accept_bits: int) -> None:
        self.layout, self.accept_bits = layout, accept_bits
        self.accept_yes, self.accept_no = self._thresholds()
        size = 1 << accept_bits                     # u below first_undecided: every R accepted
        rows = (self.accept_yes.reshape(-1, size) >= layout.width - 1).astype(np.int32)
        first = rows.sum(axis=1, dtype=np.int32)    # ones, then zeros: yes[u] falls with u
        first[0] = size if layout.kind == "gaussian" else first[0]  # the entry of 0: R = 0
        self.first_undecided = int(first[0]) if layout.kind == "laplace" else first
        self.least_undecided = int(first.min())     # u below it: accepted in every entry

    def _thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """Offsets that decide acceptance from the first ``k`` bits ``u`` of ``U``.

        ``U`` in ``[u, u + 1)·2**-k`` is below ``exp(-γ)`` whatever its other bits when
        ``γ <= ln(2**k/(u + 1))``, and not below it when ``γ >= ln(2**k/u)``. ``γ`` grows
        with the offset ``R``, so these are ``R <= yes[u]`` and ``R >= no[u]`` (one row for
        the Laplace, ``γ = R/s``; one row per entry for the Gaussian, where
        ``R(2x* + R) <= A`` is ``R <= isqrt(A + x*²) - x*``). The logarithms are MPFR
        bounds rounded outwards, and the thresholds are integers rounded inwards, so the
        decisions are exact.
        """
        size = 1 << self.accept_bits
        log_lo, log_hi = [], []
        for u in range(size):
            with gmpy2.context(precision=_SETUP_PRECISION, round=gmpy2.RoundDown):
                log_lo.append(_exact(gmpy2.log(gmpy2.mpfr(gmpy2.mpq(size, u + 1)))))
            with gmpy2.context(precision=_SETUP_PRECISION, round=gmpy2.RoundUp):
                log_hi.append(_exact(gmpy2.log(gmpy2.mpfr(gmpy2.mpq(size, max(u, 1))))))
        kind, parameter, xstar = self.layout.kind, self.layout.parameter, self.layout.xstar
        never = 1 << 62                                  # R < 2**49: never reached
        if kind == "laplace":
            yes = [math.floor(parameter * v) for v in log_lo]
            no = [never] + [math.ceil(parameter * v) for v in log_hi[1:]]
            return np.array(yes, dtype=np.int64), np.array(no, dtype=np.int64)
        low = [math.floor(2 * parameter * v) for v in log_lo]
        high = [math.ceil(2 * parameter * v) for v in log_hi]
        yes, no = [], []
        for x in [*xstar.tolist(), int(xstar[-1])]:       # entries, then the tail
            square = x * x
            yes += [min(math.isqrt(a + square) - x, never) for a in low]
            no += [never] + [min(math.isqrt(b + square - 1) + 1 - x, never) for b in high[1:]]
        return np.array(yes, dtype=np.int64), np.array(no, dtype=np.int64)

    def accept(self, entry: np.ndarray, offset: np.ndarray, uniform: np.ndarray,
                rng: RandomSource) -> np.ndarray:
        """Exact trials ``U < exp(-γ)``, ``U`` starting with the ``accept_bits`` bits given.

        The first bits decide most trials through the integer thresholds of
        :meth:`_thresholds`; the undecided few get more bits and the float Taylor brackets
        of :func:`_exp_neg_bracket`, then MPFR brackets.
        """
        layout = self.layout
        result = np.ones(offset.size, dtype=bool)
        slow = np.flatnonzero(uniform >= self.least_undecided)  # u below: accepted whatever R is
        if layout.kind == "gaussian":                   # the entry's own bound, on those only
            slow = slow[uniform[slow] >= self.first_undecided[entry[slow]]]
        if not slow.size:
            return result
        offset, uniform = offset[slow].astype(np.int64, copy=False), uniform[slow].astype(
            np.int64, copy=False)
        index = uniform if layout.kind == "laplace" else (entry[slow] << self.accept_bits) + uniform
        yes = offset <= self.accept_yes[index]
        no = offset >= self.accept_no[index]
        result[slow[no]] = False
        keep = np.flatnonzero(~(yes | no))
        if not keep.size:
            return result
        result[slow[keep]] = False                      # until decided below
        pending = slow[keep]
        offset, xstar, uniform = offset[keep], layout.xstar[entry[pending]], uniform[keep]
        nbits = self.accept_bits
        gamma_lo, gamma_hi = layout.gamma(offset, xstar)
        # 1 - γ + γ²/2 - γ³/6 <= exp(-γ) <= 1 - γ + γ²/2 for every γ >= 0 (Taylor's
        # remainder); cheap, and enough for the next 8 bits. Float error < 2**-50 for γ < 1.
        lower = 1.0 - gamma_hi * (1.0 - gamma_hi / 2 * (1.0 - gamma_hi / 3)) - _POLY_SLACK
        upper = 1.0 - gamma_lo * (1.0 - gamma_lo / 2) + _POLY_SLACK
        pending_local = np.arange(pending.size)
        precise = False
        while pending.size:
            if not precise and nbits > self.accept_bits:   # later rounds: degree 7/8
                lower, upper = _exp_neg_bracket(gamma_lo[pending_local], gamma_hi[pending_local])
                precise = True
            if nbits >= _UNIFORM_BITS:                  # probability about 2**-39
                for j, i, value in zip(pending, pending_local, uniform, strict=True):
                    gamma = layout.exact_gamma(int(offset[i]), int(xstar[i]))
                    result[j] = _LazyUniform(int(value), nbits, rng).below(
                        functools.partial(exp_neg_bounds, gamma))
                break
            more = min(_MORE_ACCEPT_BITS, _UNIFORM_BITS - nbits)
            (fresh,) = read_fields(rng, pending.size, (more,))
            uniform = (uniform << more) | fresh.astype(np.int64)
            nbits += more
            step = 2.0**-nbits
            yes = (uniform + 1) * step <= lower
            no = uniform * step >= upper
            result[pending[yes]] = True
            keep = ~(yes | no)
            pending, pending_local, uniform = pending[keep], pending_local[keep], uniform[keep]
            lower, upper = lower[keep], upper[keep]
        return result


class Envelope:
    """The table, guide and acceptance rule for one distribution (see the module docstring).

    ``layout`` places the entries, ``table`` draws an entry, ``acceptance`` (None for blocks
    of width 1, where every proposal is accepted) decides a proposal.
    """

    def __init__(self, kind: str, parameter: Fraction) -> None:
        self.kind, self.parameter = kind, parameter
        self.layout = layout = _Layout(kind, parameter)
        self.table = _EntryTable(layout)
        self.acceptance = (_Acceptance(layout, self.table.accept_bits) if layout.log_width
                           else None)
        max_gamma = layout.exact_gamma(layout.width - 1, int(layout.xstar[-1]))
        if max_gamma >= 1:          # the Taylor brackets of the acceptance need γ < 1
            raise AssertionError(f"block too wide: γ reaches {float(max_gamma)}")

    def _tail_value(self, rng: RandomSource) -> int | None:
        """A magnitude from the tail entry, or None if the Gaussian's acceptance fails."""
        layout = self.layout
        plan = fixed_plan(1 / layout.tail_rate)
        g = int(fixed_geometric(plan, fixed_bernoulli(plan[1], 1, rng), rng)[0])
        if self.kind == "gaussian" and not bernoulli_exp_unchecked(
                Fraction(g * g) / (2 * self.parameter), rng):
            return None
        return layout.tail_start + g

    def _fill(self, out: np.ndarray, rng: RandomSource) -> np.ndarray:
        """Propose ``out.size`` values into ``out``; return the indices of the rejected ones."""
        layout, table = self.layout, self.table
        n = out.size
        prefix, sign, offset, uniform = (               # uint64 fields (< 2**52) as int64
            f.view(np.int64) if f.dtype == np.uint64 else f for f in read_fields(
                rng, n, (table.guide_bits, 1, layout.log_width, table.accept_bits)))
        entry = np.take(table.guide, prefix)            # int32 entries
        undecided = np.flatnonzero(entry < 0)
        if undecided.size:
            entry[undecided] = table.refine(prefix[undecided].astype(np.int64, copy=False),
                                            table.guide_bits, rng)
        # Whatever the entries drawn: the same passes (no test of whether one is 0 or the
        # tail, no branch per value).
        offset &= mask(entry != 0, offset.dtype)        # the entry of 0 has no offset
        tails = np.flatnonzero(entry == layout.tail)
        if tails.size:                                  # probability about 2**-64
            entry = np.minimum(entry, layout.blocks)      # the tail's magnitudes are set below
        np.take(layout.xstar, entry, out=out, mode="clip")  # entries in [0, J]; "raise" buffers
        out += offset                                   # magnitudes < 2**58
        if self.acceptance is not None:                 # offset 0 (γ = 0): accepted
            accept = self.acceptance.accept(entry, offset, uniform, rng)
        else:
            accept = np.ones(n, dtype=bool)
        for j in tails:                                 # probability about 2**-64
            value = self._tail_value(rng)
            if value is None:
                accept[j] = False
            elif value >= 2**62:
                raise OverflowError("noise magnitude beyond 2**62 (never in practice)")
            else:
                out[j], accept[j] = value, True
        flip = sign.view(np.int8)                       # a 1-bit field is uint8
        np.negative(flip, out=flip)                     # -1 where the sign bit is 1, else 0
        out ^= flip                                     # two's complement: -x = (x ^ -1) + 1
        out -= flip
        return np.flatnonzero(~accept)

    def sample(self, n: int, rng: RandomSource, out: np.ndarray | None = None,
               block: int | None = None) -> np.ndarray:
        """``n`` exact draws as an int64 array (written into ``out`` if given).

        One round of ``n + spare(n)`` proposals (:func:`spare`), ``block`` at a time (all at
        once if ``block`` is None); the first ``n`` accepted, in order, are the draws. Accepted
        proposals are independent draws from the target, whatever the acceptance pattern, so
        the first ``n`` of them are ``n`` independent exact draws. Fewer than ``n`` accepted
        (probability below ``2**-64``: :func:`spare`): another round for the rest.
        """
        if out is None:
            out = np.empty(n, dtype=np.int64)
        filled = 0
        while filled < n:
            need = n - filled
            count = need + spare(need)
            proposals = np.empty(count, dtype=np.int64)
            step = max(1, count if block is None else block)
            accepted = np.ones(count, dtype=bool)
            for start in range(0, count, step):
                accepted[self._fill(proposals[start:start + step], rng) + start] = False
            taken = proposals[accepted][:need]
            out[filled:filled + taken.size] = taken
            filled += taken.size
        return out


@public_table(maxsize=64)
def laplace_envelope(scale: Fraction) -> Envelope:
    """The envelope of the discrete Laplace with this scale (built once per scale)."""
    return Envelope("laplace", scale)


@public_table(maxsize=64)
def gaussian_envelope(sigma2: Fraction) -> Envelope:
    """The envelope of the discrete Gaussian with this ``σ²`` (built once per ``σ²``)."""
    return Envelope("gaussian", sigma2)
