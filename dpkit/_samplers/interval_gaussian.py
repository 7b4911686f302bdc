"""One discrete Gaussian draw, each round of CKS Algorithm 3 decided from one uniform.

The method. Canonne, Kamath & Steinke (2020, Algorithm 3) propose ``Y``, discrete Laplace
of scale ``t``, and accept it with probability ``a(Y) = exp(-γ)``, ``γ = (|Y| -
σ²/t)²/(2σ²)``; an accepted ``Y`` has ``P[Y = y] ∝ exp(-y²/(2σ²))`` (``|y|/t + γ(y) =
y²/(2σ²) + σ²/(2t²)``, for any ``t > 0``), and a rejection starts afresh.
:func:`interval_gaussian` decides all the trials of a round from **one** uniform ``U`` of
``B`` bits (Han & Hoshi 1997, as :mod:`dpkit._samplers.interval` does for the Laplace draw):
the proposal's trials (the tail, the zero trial, the sign, the ``I`` digits of the
magnitude: fixed probabilities), then the acceptance trial, whose probability ``a(|Y|)`` is
computed on the path walked (the interval algorithm allows conditional probabilities: the
outcomes' intervals still partition ``[0, 1)`` with lengths equal to their probabilities).
A rejected round draws a fresh uniform: continuing inside the rejected interval would spend
the rejected proposal's entropy (about ``log2(2e·t)`` bits) of ``U``'s precision a round,
and deep rounds would tie. ``t`` is ``floor(σ)`` or ``floor(σ) + 1``, whichever accepts
more (:func:`proposal_scale`; about 0.76 for large ``σ``, 0.70 at ``σ = 1``).

The acceptance probability, rigorously and by fixed operations (:func:`accept_step`): with
``σ² = n/d``, ``γ = (m·d·t - n)²/(2·n·d·t²)`` for ``m = |Y|``, an exact integer square; ``g
= floor(γ·2**W)`` (``W = P + 8``) by a multiplication with a rounded-down reciprocal (the
product is within 1/2 below ``γ·2**W``, so ``γ·2**W - 3/2 < g <= γ·2**W``), capped at ``G =
ceil((P + 1)·ln 2·2**W)`` (beyond it ``a < 2**-(P+1)``). ``exp(-g·2**-W)`` is the product of
``1 - x + x²/2`` for the low ``L = floor(2W/3)`` bits of ``g`` (``x < 2**(L-W)``: error
below 1 unit of ``2**-W``) and of ``J`` table entries for the bytes above
(``floor(exp(-v·2**(L+8j-W))·2**W)``, MPFR rounded down, :func:`exp_table`), each product
floored: a lower bound ``A`` with ``A <= exp(-g·2**-W)·2**W <= A + 2J + 2``. So ``q_hi =
min(floor((A + 2J + 2)/2**8) + 1, 2**P)`` bounds ``a·2**P`` above, within ``Δ = ceil((2J +
132)/2**8) + 1`` units (``g``'s error adds at most 3/2 units of ``2**-W``, the cap at most
``2**7``); ``tests/test_interval_gaussian.py`` and ``tests/test_breaker30.py`` check the
bracket against mpmath. Every operand carries an offset that fixes its bit length (``g``
offset by ``2**(W+h)``, the product by ``2**(W+1)``, the acceptance's ``r' = 2**(P+1) -
q_hi`` in ``[2**P, 2**(P+1))``); a table index is the value of a byte of ``g``.

Exactness of the walk: each split point is computed within a proven error bound ``E``
(:func:`dpkit._samplers.interval.interval_walk`; the acceptance step adds ``Δ + 2`` units);
a comparison those bounds cannot decide (a *tie*) reads one more byte of the round's
uniform and walks the round again at a higher precision.

Tie bound, and ``B``: as for the Laplace walk, ``P[tie] <= Σ_w min(ε, p_w)`` over the
non-root nodes ``w`` of a round's tree (``p_w`` the probability of its interval, ``ε =
2**-B + 2E·2**-P``), at most ``ε**s·Σ_w p_w**(1-s)``; the acceptance trial's children add
``Σ_y π_y**(1-s)·(a_y**(1-s) + (1 - a_y)**(1-s)) <= 2·Π_j f_j(s)`` to the proposal's sum
(:func:`dpkit._samplers.interval.uniform_bits` with ``acceptance``). ``B`` is 80 bits at
σ = 1, 88 at σ = 100 and 120 at the Gaussian mechanism's scalar σ (about ``2**40`` grid
units); a draw reads ``B`` bits a round, ``B/(1 - ρ)`` on average (``ρ`` a round's rejection
probability, :func:`rejection_bound`): at most 114, 116 and 158, the entropy plus at most
112, 108 and 116 (``tests/test_interval_gaussian.py``; ``benchmarks/bits.py`` counts them).

Cost: a round reads ``B`` bits and runs the same operations whatever its values (``D = I +
3`` steps of :func:`dpkit._samplers.interval.walk`, then :func:`accept_step`). The number of
rounds varies: it depends only on which rounds rejected, and an accepted value is a draw
from the target independent of that pattern (CKS 2020, Algorithm 3: the rounds are
independent, and the value of the round that accepts has the target distribution whatever
the rounds before it did), so the time carries nothing about the value returned (the
argument of :func:`dpkit._samplers.fixed_cost.fixed_discrete_gaussian`). Measured unpadded
and interleaved (3000 calls each, load 2.9 on 2 cores, core 0), a round's median times for
uniforms giving different values (rejected, small, negative, large, ``u = 0``) spread over
0.27 µs of 26.1 µs at the mechanism's σ and 0.08 µs of 8.0 µs at σ = 1; :func:`accept_step`'s
over 0.07 µs of 3.9 µs from ``m = 0`` to ``m = 2**I``. Only proposals of at most
``MAX_DIGITS`` digits are walked (:func:`walks`; "Scales" in
:mod:`dpkit._samplers.interval`). Residual events,
each finished exactly by loops of their own: a tie (probability ``<= 2**-64`` a round,
``B``'s choice) and a tail (``|Y| > 2**I``, ``<= e**-64`` a round: the magnitude's high
part and that round's acceptance are drawn exactly from fresh bits, CKS Algorithm 1).

References
----------
T. S. Han, M. Hoshi. *Interval algorithm for random number generation.* IEEE Trans. Inf.
Theory 43(2):599-611, 1997.
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithms 1 and 3.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import gmpy2
import numpy as np

from dpkit._samplers.bernoulli import bernoulli_exp_unchecked, fixed_geometric, fixed_plan
from dpkit._samplers.exact import floor_scaled, floor_sqrt
from dpkit._samplers.interval import (
    DIGITS,
    GUARD,
    LEAD,
    MAX_DIGITS,
    SIGN,
    TAIL,
    ZERO,
    lead_value,
    signed_value,
    step_constants,
    trial_bounds,
    uniform_bits,
    walk,
)
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

EXTRA = 8             # the exponential's working precision W = P + EXTRA
CHUNK = 8             # bits of g per table
_UP, _DOWN = gmpy2.RoundUp, gmpy2.RoundDown


class ExpTable(NamedTuple):
    """Fixed-point ``exp(-g·2**-W)`` at one width ``W`` (:func:`exp_table`): ``low`` bits of
    ``g`` by the quadratic, the tables for the ``CHUNK``-bit pieces above (entries offset by
    ``2**(W+1)``), the cap ``G``, the error bound ``2J + 2`` and ``h`` (``G < 2**(W+h-1)``)."""

    width: int
    low: int
    tables: tuple[tuple[int, ...], ...]
    cap: int
    error: int
    high: int


@public_table(maxsize=64)
def exp_table(width: int) -> ExpTable:
    """The :class:`ExpTable` of width ``W = P + EXTRA`` (public: depends on ``W`` only)."""
    precision = width - EXTRA
    with gmpy2.context(precision=64, round=_UP):
        cap = int(gmpy2.ceil((precision + 1) * gmpy2.log(2) * gmpy2.mpfr(2) ** width))
    high = (cap >> width).bit_length() + 1
    low = 2 * width // 3
    count = -(-(width + high - low) // CHUNK)
    offset = 1 << (width + 1)
    tables = []
    with gmpy2.context(precision=width + 32, round=_DOWN):
        for j in range(count):
            step = gmpy2.mpfr(2) ** (low + CHUNK * j - width)     # exact: a power of two
            tables.append(tuple(floor_scaled(gmpy2.exp(-v * step), width) + offset
                                for v in range(1 << CHUNK)))
    return ExpTable(width, low, tuple(tables), cap, 2 * count + 2, high)


class AcceptConstants(NamedTuple):
    """The public integers of :func:`accept_step` for one ``σ²`` and precision."""

    factor: int          # d·u
    shift_in: int        # 3·2**b - n·v - lead·d·u: x = (m + lead)·d·u + shift_in
    twice_offset: int    # 6·2**b
    square_offset: int   # 9·2**(2b) + 2**(2b)
    reciprocal: int      # floor(2**(W + S)/(2·n·d·u²))
    raise_g: int         # 2**(S + W + h2) - 2**(2b)·reciprocal
    shift: int           # S = 2b + 1
    cap: int             # 2**(W + h2) + G
    mask: int            # 2**L - 1
    low: int             # L
    start: int           # 2**(W+1) + 2**W - 1
    width: int
    restore: int         # 3·2**(W+1)
    tables: tuple[tuple[int, ...], ...]
    error: int           # 2J + 2
    top: int             # 2**(P+2) - 1
    one: int             # 2**P
    width_units: int     # Δ: q_hi - a·2**P <= Δ


def accept_constants(sigma2: Fraction, t: Fraction, top: int, precision: int
                     ) -> AcceptConstants:
    """The :class:`AcceptConstants` for magnitudes ``m <= 2**top`` at ``precision`` (with ``t =
    u/v``, ``γ = (m·d·u - n·v)²/(2·n·d·u²)``), ``m`` given as ``m + lead``, ``lead = LEAD <<
    top`` (:func:`dpkit._samplers.interval.lead_value`)."""
    table = exp_table(precision + EXTRA)
    width = table.width
    n, d = sigma2.numerator, sigma2.denominator
    u, v = t.numerator, t.denominator
    b = max(n * v, ((1 << top) + 1) * d * u).bit_length()      # |m·d·u - n·v| < 2**b
    shift = 2 * b + 1
    reciprocal = (1 << (width + shift)) // (2 * n * d * u * u)
    chunks = len(table.tables)
    raised = max(reciprocal.bit_length() - width, table.low + CHUNK * chunks - width)
    return AcceptConstants(
        factor=d * u, shift_in=3 * (1 << b) - n * v - (LEAD << top) * d * u,
        twice_offset=6 * (1 << b),
        square_offset=10 * (1 << (2 * b)), reciprocal=reciprocal,
        raise_g=(1 << (shift + width + raised)) - (reciprocal << (2 * b)), shift=shift,
        cap=(1 << (width + raised)) + table.cap, mask=(1 << table.low) - 1, low=table.low,
        start=(3 << width) - 1, width=width, restore=3 << (width + 1),
        tables=table.tables, error=table.error, top=(1 << (precision + 2)) - 1,
        one=1 << precision, width_units=-(-(table.error + 132) // 256) + 1)


def accept_step(led: int, k: AcceptConstants) -> int:
    """``r' = 2**P + r``, ``r = 2**P - q_hi``, for the acceptance probability ``a(m) =
    exp(-γ)``: ``q_hi`` bounds ``a(m)·2**P`` above within ``k.width_units`` (module docstring).
    ``led = m + (LEAD << I)``, ``0 <= m <= 2**I``: the same operations on operands of fixed
    bit lengths whatever ``m``."""
    x = led * k.factor + k.shift_in                # d + 3·2**b, in (2**(b+1), 2**(b+2))
    square = x * (x - k.twice_offset) + k.square_offset    # d² + 2**(2b)
    g = (square * k.reciprocal + k.raise_g) >> k.shift     # floor(γ·2**W) + 2**(W + h2)
    g = (g, k.cap)[g > k.cap]
    low = g & k.mask
    acc = k.start - low + ((low * low) >> (k.width + 1))   # 2**(W+1) + lower bound
    rest = g >> k.low
    for table in k.tables:
        entry = table[rest & 255]
        rest >>= CHUNK
        acc = ((acc * entry) >> k.width) - ((acc + entry) << 1) + k.restore
    r = k.top - ((acc + k.error) >> EXTRA)                 # 2**(P+1) - q_hi
    return (r, k.one)[r < k.one]                           # q_hi <= 2**P


def rejection_bound(sigma2: Fraction, t: Fraction) -> gmpy2.mpfr:
    """An upper bound on ``ρ``, the probability that a round with proposal scale ``t`` rejects.

    A round accepts with probability ``Σ_y P[Y = y]·a(y) = tanh(1/(2t))·exp(-σ²/(2t²))·Σ_y
    exp(-y²/(2σ²))`` (``P[Y = 0] = (1 - p)/(1 + p) = tanh(1/(2t))``, ``p = e**(-1/t)``), and
    the sum is at least 1 (its term ``y = 0``) and at least ``sqrt(2π)·σ`` (Poisson summation:
    it is ``sqrt(2π)·σ·Σ_k exp(-2π²σ²k²)``). Each factor is rounded down in MPFR, ``1 -``
    their product up.
    """
    with gmpy2.context(precision=64, round=_DOWN):
        zero = gmpy2.tanh(gmpy2.mpfr(gmpy2.mpq(t.denominator, 2 * t.numerator)))
        with gmpy2.context(precision=64, round=_UP):
            exponent = gmpy2.mpfr(gmpy2.mpq(sigma2.numerator * t.denominator**2,
                                            sigma2.denominator * 2 * t.numerator**2))
        mass = gmpy2.sqrt(2 * gmpy2.const_pi()
                          * gmpy2.mpfr(gmpy2.mpq(sigma2.numerator, sigma2.denominator)))
        accept = zero * gmpy2.exp(-exponent) * max(gmpy2.mpfr(1), mass)
    with gmpy2.context(precision=64, round=_UP):
        return 1 - accept


class GaussianPlan(NamedTuple):
    """What a scalar draw at one ``σ²`` needs: the proposal's scale ``t`` and plan
    (:func:`dpkit._samplers.bernoulli.fixed_plan`), a round's uniform bits ``B``, and the
    walk's constants at ``P = B + GUARD``: the proposal's steps, the acceptance's
    constants and its error bound (:func:`round_constants`)."""

    sigma2: Fraction
    t: Fraction
    plan: tuple
    bits: int
    precision: int
    steps: tuple[tuple[int, int, int], ...]
    accept: AcceptConstants
    error: int


def round_constants(sigma2: Fraction, t: Fraction, plan: tuple, precision: int
                    ) -> tuple[tuple[tuple[int, int, int], ...], AcceptConstants, int]:
    """A round's proposal steps, acceptance constants and acceptance error bound (units of
    ``2**-precision``: the proposal's last bound plus ``Δ + 2``) at ``precision``."""
    accept = accept_constants(sigma2, t, plan[0], precision)
    steps = step_constants(trial_bounds(plan, precision), precision)
    return steps, accept, steps[-1][2] + accept.width_units + 2


def proposal_scale(sigma2: Fraction) -> Fraction:
    """``t``: the candidate whose lower bound on the acceptance probability
    (:func:`rejection_bound`) is largest: ``floor(σ)`` and ``floor(σ) + 1`` for ``σ >= 1``,
    ``2**-i`` for ``σ < 1`` (``2**-i >= σ/16``). CKS Algorithm 3 is exact for any ``t > 0``
    (``|y|/t + γ(y) = y²/(2σ²) + σ²/(2t²)``); ``t`` near ``σ`` accepts most (about 0.76 for
    large ``σ``, 0.70 at ``σ = 1``), and a rejected round costs ``B`` more bits."""
    root = floor_sqrt(sigma2)
    if root >= 1:
        candidates = [Fraction(root), Fraction(root + 1)]
    else:
        candidates = [Fraction(1, 2**i) for i in range(6 + sigma2.denominator.bit_length())
                      if Fraction(1, 2**(2 * i)) >= sigma2 / 256]
    return min(candidates, key=lambda t: rejection_bound(sigma2, t))


@public_table(maxsize=64)
def gaussian_plan(sigma2: Fraction) -> GaussianPlan:
    """The :class:`GaussianPlan` of ``σ²`` (public: a cached table)."""
    t = proposal_scale(sigma2)
    plan = fixed_plan(t)
    bits = uniform_bits(trial_bounds(plan, 128), 128, acceptance=True)
    precision = bits + GUARD
    steps, accept, error = round_constants(sigma2, t, plan, precision)
    if 2 * error > 2 ** (GUARD - 8):
        raise ValueError(f"the interval walk's error bound is too wide at sigma2 {sigma2}: "
                         f"{error} units")
    return GaussianPlan(sigma2, t, plan, bits, precision, steps, accept, error)


def gaussian_round(steps: tuple[tuple[int, int, int], ...], accept: AcceptConstants,
                   error: int, u: int, nbits: int, precision: int
                   ) -> tuple[list[bool], bool, bool]:
    """One round for a uniform ``U`` in ``[u, u + 1)·2**-nbits``: the proposal's outcomes
    (:func:`dpkit._samplers.interval.walk`), whether the acceptance trial accepted, and
    whether a comparison was undecided (then nothing is to be used)."""
    one = 1 << precision
    offset = one << 1
    cell = 1 << (precision - nbits)
    u_lo = (u << (precision - nbits)) + offset
    a, c, outcomes, tied = walk(steps, offset, offset + one, u_lo, cell, precision)
    g, lead = lead_value(outcomes[DIGITS:])
    r = accept_step((g + 1, lead)[outcomes[ZERO]], accept)     # m + lead, m = 0 if zero
    span = c - a + offset
    split = a + ((r * span) >> precision) - span - (r << 1) + offset   # a + floor(r·(c-a)/2**P)
    above = u_lo - split
    tied |= (above < error) & (above + cell > -error)
    return outcomes, above >= error, tied                       # U >= S: accept


def interval_gaussian(sigma2: Fraction, rng: RandomSource) -> np.ndarray:
    """One exact discrete Gaussian draw ``P[X = x] ∝ exp(-x²/(2·sigma2))``, as a 1-value array.

    Parameters
    ----------
    sigma2 : Fraction
        ``σ²``, a rational number > 0 (validated by the caller).
    rng : RandomSource
        The source of random bits.

    Returns
    -------
    numpy.ndarray
        One value: ``int64`` when the proposal's digits fit (``I <= 61``) and no tail, else
        ``object`` (Python ints), as :func:`dpkit._samplers.interval.interval_laplace`.

    Notes
    -----
    Reads ``B`` random bits a round (:func:`gaussian_plan`: 120 at the Gaussian mechanism's
    scalar σ; a round accepts with probability about 0.76), more only on a tie (probability
    ``<= 2**-64`` a round) or a tail (``<= e**-64`` a round); each round runs the same
    operations whatever its values, and the number of rounds is independent of the value
    returned (module docstring). Exact:
    CKS Algorithm 3 walked by the interval algorithm (Han & Hoshi 1997) with rigorous
    brackets. Privacy: as :func:`dpkit._samplers.noise.discrete_gaussian`.
    """
    plan = gaussian_plan(sigma2)
    while True:                                   # rounds: each accepts with probability ~0.76
        data = rng.read(plan.bits // 8)
        outcomes, accepted, tied = gaussian_round(plan.steps, plan.accept, plan.error,
                                                  int.from_bytes(data, "big"), plan.bits,
                                                  plan.precision)
        while tied:                                          # probability <= 2**-64 a round
            data += rng.read(1)
            precision = 8 * len(data) + GUARD
            outcomes, accepted, tied = gaussian_round(
                *round_constants(sigma2, plan.t, plan.plan, precision),
                int.from_bytes(data, "big"), 8 * len(data), precision)
        if outcomes[TAIL]:                                   # probability <= e**-64 a round
            value = _tail_round(plan, outcomes, rng)
            if value is not None:
                out = np.empty(1, dtype=object)
                out[0] = value
                return out
        elif accepted:
            break
    g, lead = lead_value(outcomes[DIGITS:])
    return signed_value(g, lead, plan.plan[0], outcomes)


@public_table(maxsize=64)
def walks(sigma2: Fraction) -> bool:
    """Whether a scalar draw at ``σ²`` is walked: its proposal has at most ``MAX_DIGITS``
    digits (``t < 2**55``, which covers the Gaussian mechanism's ``σ`` of about ``2**40``
    grid units); the walk's cost grows as ``log2(σ)**2`` while a release's deadline does
    not (see "Scales" in :mod:`dpkit._samplers.interval`). Public: a cached table."""
    return fixed_plan(proposal_scale(sigma2))[0] <= MAX_DIGITS


def _tail_round(plan: GaussianPlan, outcomes: list[bool], rng: RandomSource) -> int | None:
    """A round whose proposal reached the tail (``|Y| > 2**I``): its magnitude's high part
    (:func:`dpkit._samplers.bernoulli.fixed_geometric`) and its acceptance (CKS Algorithm 1,
    :func:`dpkit._samplers.bernoulli.bernoulli_exp_unchecked`) from fresh bits, exactly;
    the value if accepted, else None (the next round starts)."""
    digits = outcomes[DIGITS:]
    g = int(fixed_geometric(plan.plan, np.array([[*digits, True]]), rng)[0])
    magnitude = (g + 1) * (1 - outcomes[ZERO])
    gamma = (magnitude - plan.sigma2 / plan.t) ** 2 / (2 * plan.sigma2)
    if not bernoulli_exp_unchecked(gamma, rng):
        return None
    flip = -int(outcomes[SIGN])
    return (magnitude ^ flip) - flip
