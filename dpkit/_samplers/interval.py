"""One discrete Laplace draw from one uniform: the interval algorithm over its Bernoulli trials.

A scalar release's noise ``X`` (``P[X = x] ∝ p**|x|``, ``p = e**(-1/scale)``) is decided by
independent Bernoulli trials: the tail of the magnitude (``G >= 2**I``, probability
``p**(2**I) <= e**-64``), whether ``X = 0`` (probability ``z = (1 - p)/(1 + p)``), the sign
(1/2), and the ``I`` binary digits of ``G = |X| - 1``, a geometric variable (digit ``i`` is 1
with probability ``p**(2**i)/(1 + p**(2**i))``, see "Exact exponentials" in
:mod:`dpkit._samplers.bernoulli`); ``X = 0`` if the zero trial is set, else ``±(1 + G)``.
:func:`interval_laplace` decides all of them from **one** uniform ``U`` of ``B`` random
bits (Han & Hoshi 1997, the interval algorithm; arithmetic decoding): with ``U`` in the
current interval ``[A, C)`` and the next trial's probability ``q``, the split point is ``S
= A + (1 - q)(C - A)``; the trial is 0 if ``U < S`` (the interval becomes ``[A, S)``), else
1 (``[S, C)``). The outcomes' intervals partition ``[0, 1)`` with lengths equal to their
probabilities, so the draw is exact.

Fixed point, rigorously: ``A``, ``C`` and ``S`` are kept as integers at ``P = B + 64``
bits, with a proven bound ``E`` on their error (the trials' probabilities bracketed in
MPFR; each step adds at most its bracket's width plus 2 units, :func:`interval_walk`), and
a trial is decided when ``U``'s cell ``[u, u + 1)·2**-B`` lies wholly on one side of ``[S -
E, S + E]``. Otherwise (a *tie*) the draw reads one more byte of ``U`` and walks again at
a higher precision, until no comparison is undecided (it ends with probability 1: ``U``
differs from every split point almost surely, and the error bounds shrink to 0).

Tie probability, and ``B``: a tie at a node ``v`` needs ``|U - S_v| < ε = 2**-B + 2·e``,
``e = Σ_j (δ_j + 2)`` units of ``2**-P`` (``δ_j`` the width of trial ``j``'s bracket), so
its probability is at most ``min(ε, p_v0) + min(ε, p_v1)`` over ``v``'s children. Summed over
all nodes, with ``min(ε, π) <= ε**s·π**(1-s)`` (``0 < s <= 1``) and the trials independent:
``P[tie] <= 2·ε**s·Σ_{k=0..D} Π_{j<k} (q_j**(1-s) + (1 - q_j)**(1-s))`` (a Rényi entropy of
order ``1 - s`` of the trials). :func:`uniform_bits` picks the least multiple of 8 for ``B``
that makes this (rounded up in MPFR, over ``s = 32/64 ... 63/64``) at most ``2**-64``: 80
bits at scale 1, 104 at the Laplace mechanism's scalar scale (``2**21 + 2`` grid units),
120 at ``2**53/750`` (the largest scale of its float path), 136 at ``2**60``: the entropy
``H`` plus 71 to 81 bits from scale 1/64 to ``2**300`` (``tests/test_interval.py``,
``benchmarks/bits.py``), against 144, 576 and 1008 bits for two geometrics' grouped trials
(:func:`dpkit._samplers.bernoulli.fixed_below`). Walking the trials of a difference of two
geometrics instead would need a larger ``B``: the walk decides the pair, whose entropy is
nearly twice ``H``.

Fixed cost: every draw reads ``B`` bits and runs ``D = I + 3`` steps of the same Python
operations (both children computed, one selected by indexing a tuple with the decided
bit, no branch on it), on operands whose sizes do not depend on the path (positions offset
by ``2**(P + 1)``). What Python cannot make constant: its integer subtraction and
comparison scan the leading equal 30-bit digits of their operands (at most ``P/30``).
Measured unpadded and interleaved (3000 calls each, load 2 to 4 on 2 cores), the walk's
median times spread over about 0.2 µs of 12 µs at ``2**21 + 2`` and 0.25 µs of 20 µs at
``2**53/750`` between uniforms (random ones, and ones crafted to give ``±1``, ``±2**26``,
``±2**48``: breaker review 28); the digits are then assembled after a leading ``1 << 9``, on
ints of the same sizes whatever their values, and the signed value is computed in int64
from the low word (breaker review 29: Python ints there took 151 to 218 ns by value). The
release's deadline (:mod:`dpkit.timing`) pads what remains. A tie (probability ``<=
2**-64``) or a tail (``<= e**-64``) finishes with loops of its own.

Scales: the walk's cost grows as ``D·P``, about ``log2(scale)**2``, while a scalar release's
deadline did not depend on the scale; at ε = 1e-120 (about ``2**419`` grid units) every scalar
Laplace release overran it, and its time then showed the noise (breaker review 28). So
:func:`dpkit._samplers.fixed_cost.fixed_discrete_laplace` walks only scales whose geometric
has at most :data:`MAX_DIGITS` digits (scales up to just below ``2**55``, which
covers the Laplace mechanism's float path, ``2**53/750`` at most); above, one value is the
difference of two geometrics whose two rows of trials are grouped, 8 trials to a uniform of 72
random bits (:func:`dpkit._samplers.bernoulli.fixed_below`: 144 bytes at ``2**56``, against
1,024 at 64 random bits a trial, as for 2 to 64 values). Measured
after that change (core 0, load 3.5 on 2 cores, 100 releases each): the unpadded scalar
release took 89 µs (median) at ε = 1e-12 and 187 µs at ε = 1e-300 against a 335 µs
deadline, with 2 and 12 overruns; between two sources crafted to give different noise
(short of the tail trial), 2,000 calls a side certified ε 0 at 1e-300 and at 1e-120 (the
walk for every scale: 2.33 and 3.85). A source crafted to force the tail trial (an event of
probability ``<= e**-64`` per geometric) still shows in the time (breaker review 29:
certified 4.0 at 1e-12 to 1e-120), the documented exception. At such ε the work neared
the deadline (17.7% of 40,000 releases at ε = 1e-120 overran at load 2.9). Now a scalar
Laplace release's deadline grows with the bits of its scale (:data:`dpkit.laplace.LONG_WALK`
and :data:`dpkit.laplace.OFF_PATH`): at margin 1, on a quiet core, at most 3 of 300
releases overran for each of 12 (Δ, ε) pairs from ε = 1 to 5e-324, three values each
(measured in 7b7a5e6, when :data:`dpkit.laplace.COST`'s ``fixed`` was 6: 3786e22 raised it
to 8).

References
----------
T. S. Han, M. Hoshi. *Interval algorithm for random number generation.* IEEE Trans. Inf.
Theory 43(2):599-611, 1997.
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithm 2 (a sign and a geometric magnitude, a
negative zero rejected; here the zero has a trial of its own, so nothing is rejected).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import gmpy2
import numpy as np

from dpkit._samplers.bernoulli import fixed_geometric, fixed_plan, scaled_bounds
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

GUARD = 64            # fixed-point bits beyond the uniform's: P = B + GUARD
MAX_DIGITS = 61       # the largest geometric (digits) a scalar draw walks: module docstring
TIE_BITS = 64         # a draw ties with probability at most 2**-TIE_BITS
TAIL, ZERO, SIGN, DIGITS = 0, 1, 2, 3       # the trials' order in a walk


class IntervalPlan(NamedTuple):
    """What a scalar draw at one scale needs: the geometric's plan (:func:`fixed_plan`),
    the uniform's bits ``B``, the precision ``P`` and the walk's steps at ``P``
    (:func:`step_constants`)."""

    plan: tuple
    bits: int
    precision: int
    steps: tuple[tuple[int, int, int], ...]


def trial_bounds(plan: tuple, precision: int) -> list[tuple[int, int]]:
    """Integer bounds ``lo <= q·2**precision <= hi`` of each trial's probability ``q``, in the
    walk's order: the tail, the zero trial, the sign, the geometric's digits.

    The zero trial's ``z = (1 - p)/(1 + p) = 1 - 2·q_0`` (``q_0`` the geometric's digit 0,
    ``1/(1 + e**(1/scale))``), bounded exactly from ``q_0``'s bounds.
    """
    top, columns, _ = plan
    digits = [scaled_bounds(e, precision) for e in columns.expansions]
    one = 1 << precision
    low, high = digits[0]
    zero = (max(0, one - 2 * high), one - 2 * low)
    return [digits[top], zero, (one >> 1, one >> 1), *digits[:top]]


def uniform_bits(trials: list[tuple[int, int]], precision: int,
                 acceptance: bool = False) -> int:
    """The least multiple of 8 for ``B`` whose tie bound (module docstring) is ``<=
    2**-TIE_BITS``, from the trials' bounds at ``precision`` bits (any precision: the bounds
    enclose the true probabilities), rounded in the safe direction.

    With ``F_s = Σ_{k=0..D} Π_{j<k} f_j(s)``, ``f_j(s) = q_j**(1-s) + (1 - q_j)**(1-s)``
    (upper bounds from the trials' brackets, MPFR rounding up), the bound holds when
    ``s·(B - 1/64) >= TIE_BITS + 1 + log2 F_s``, given ``-log2 ε >= B - 1/64``, which
    :func:`interval_plan` checks. With ``acceptance``, the trials end with one more trial
    whose probability ``a`` depends on the path (a rejection sampler's acceptance,
    :mod:`dpkit._samplers.interval_gaussian`): its children add ``Σ_leaves π**(1-s)·(a**(1-s)
    + (1 - a)**(1-s)) <= 2·Π_j f_j(s)`` to ``F_s``.
    """
    best = None
    with gmpy2.context(precision=64, round=gmpy2.RoundUp):
        unit = gmpy2.mpfr(2) ** -precision
        ups = [(gmpy2.mpfr(hi) * unit, (gmpy2.mpfr(1 << precision) - lo) * unit)
               for lo, hi in trials]
        for k in range(32, 64):
            s = gmpy2.mpfr(k) / 64
            total = product = gmpy2.mpfr(1)
            for q, not_q in ups:
                product *= q ** (1 - s) + not_q ** (1 - s)
                total += product
            if acceptance:
                total += 2 * product
            need = (TIE_BITS + 1 + gmpy2.log2(total)) / s + gmpy2.mpfr(1) / 64
            best = need if best is None else min(best, need)
    return 8 * int(gmpy2.ceil(best / 8))


@public_table(maxsize=256)
def interval_plan(scale: Fraction) -> IntervalPlan:
    """The :class:`IntervalPlan` of a scale (public: a cached table).

    ``-log2 ε >= B - 1/64`` (:func:`uniform_bits`) holds when the walk's error bound ``e =
    Σ_j (δ_j + 2)`` units of ``2**-P`` has ``2e <= 2**(GUARD - 8)`` (``ε = 2**-B·(1 +
    2e·2**-GUARD)``), checked here (``e`` is about ``3·D``).
    """
    plan = fixed_plan(scale)
    bits = uniform_bits(trial_bounds(plan, 128), 128)
    precision = bits + GUARD
    trials = trial_bounds(plan, precision)
    steps = step_constants(trials, precision)
    if 2 * steps[-1][2] > 2 ** (GUARD - 8):
        raise ValueError(f"the interval walk's error bound is too wide at scale {scale}: "
                         f"{steps[-1][2]} units")
    return IntervalPlan(plan, bits, precision, steps)


def step_constants(trials: list[tuple[int, int]], precision: int
                   ) -> tuple[tuple[int, int, int], ...]:
    """Each trial's constants in a walk at ``precision`` bits: ``r = 2**P - q_hi`` (within
    ``δ = q_hi - q_lo`` of ``(1 - q)·2**P``), ``2r``, and the bound ``E`` on the error of that
    step's split point, ``Σ (δ + 2)`` over the trials up to it (:func:`interval_walk`)."""
    one, error, steps = 1 << precision, 0, []
    for lo, hi in trials:
        error += hi - lo + 2
        steps.append((one - hi, 2 * (one - hi), error))
    return tuple(steps)


def interval_walk(steps: tuple[tuple[int, int, int], ...], u: int, nbits: int,
                  precision: int) -> tuple[list[bool], bool]:
    """The trials' outcomes for a uniform ``U`` in ``[u, u + 1)·2**-nbits``, and whether a
    comparison was undecided (then the outcomes are not to be used).

    ``steps`` come from :func:`step_constants` at ``precision`` ``P``. Positions are integers in
    units of ``2**-P``: ``a``, ``c`` approximate the interval's ends ``A``, ``C`` and ``s = a +
    floor(r·(c - a)/2**P)`` its split ``S = A + (1 - q)(C - A)``. With ``|a - A|, |c - C| <=
    e``, ``s - S = (1 - ρ)(a - A) + ρ(c - C) + (r - ρ·2**P)(c - a)/2**P - frac`` (``ρ = 1 -
    q``), so ``|s - S| <= e + δ + 2``: the errors add up along the walk, to at most the step's
    ``E``. The trial is 1 if ``u_lo >= s + E`` (then ``U >= S``), 0 if ``u_hi <= s - E``,
    undecided otherwise. Every step computes both children and selects one by indexing, whatever
    ``U``: the same operations on operands of the same sizes (positions carry an offset ``K =
    2**(P + 1)``; ``floor(r·(W + K)/2**P) - 2r = floor(r·W/2**P)``).
    """
    one = 1 << precision
    offset = one << 1
    cell = 1 << (precision - nbits)
    _, _, outcomes, tied = walk(steps, offset, offset + one,
                                (u << (precision - nbits)) + offset, cell, precision)
    return outcomes, tied


def walk(steps: tuple[tuple[int, int, int], ...], a: int, c: int, u_lo: int, cell: int,
         precision: int) -> tuple[int, int, list[bool], bool]:
    """The steps of :func:`interval_walk` from the interval ``[a, c)`` (offset positions):
    the final interval, the outcomes and whether a comparison was undecided."""
    offset = 2 << precision
    tied = False
    outcomes = []
    for r, twice_r, error in steps:
        split = a + ((r * (c - a + offset)) >> precision) - twice_r
        above = u_lo - split
        bit = above >= error                                  # U >= S: the trial is 1
        tied |= (above < error) & (above + cell > -error)
        a, c = ((a, split), (split, c))[bit]
        outcomes.append(bit)
    return a, c, outcomes, tied


#: The magnitude's digits are assembled after this leading value: above the cached small
#: ints, so a draw of 1 allocates the same ints as a large one.
LEAD = 1 << 9
_MASKS = tuple(np.int64((1 << top) - 1) for top in range(62))   # the digits of a low word
_ONE = np.int64(1)


def lead_value(digits: list[bool]) -> tuple[int, int]:
    """``(lead + Σ_i 2**i·digits[i], lead)``, ``lead = LEAD << len(digits)``: the digits
    assembled after a leading ``LEAD``, by the same additions on ints of the same sizes
    whatever the digits (breaker review 28, F3)."""
    g = LEAD
    for bit in reversed(digits):
        g = g + g + bit
    return g, LEAD << len(digits)


def interval_laplace(scale: Fraction, rng: RandomSource) -> np.ndarray:
    """One exact discrete Laplace draw ``P[X = x] ∝ exp(-|x|/scale)``, as a 1-value array.

    Parameters
    ----------
    scale : Fraction
        The scale, a rational number > 0 (validated by the caller).
    rng : RandomSource
        The source of random bits.

    Returns
    -------
    numpy.ndarray
        One value: ``int64`` when the geometric's digits fit (``I <= 61``) and no tail,
        else ``object`` (Python ints), as :func:`dpkit._samplers.bernoulli.fixed_geometric`.

    Notes
    -----
    Reads ``B`` random bits (:func:`interval_plan`: 104 at ``2**21 + 2``), more only on a tie
    (probability ``<= 2**-64``) or a tail (``<= e**-64``); the walk's steps do not depend on
    the value drawn (module docstring). Exact: the interval algorithm (Han & Hoshi 1997)
    with rigorous brackets. Privacy: as :func:`dpkit._samplers.noise.discrete_laplace`.
    """
    plan = interval_plan(scale)
    data = rng.read(plan.bits // 8)
    outcomes, tied = interval_walk(plan.steps, int.from_bytes(data, "big"), plan.bits,
                                   plan.precision)
    while tied:                                              # probability <= 2**-64
        data += rng.read(1)
        precision = 8 * len(data) + GUARD
        steps = step_constants(trial_bounds(plan.plan, precision), precision)
        outcomes, tied = interval_walk(steps, int.from_bytes(data, "big"), 8 * len(data),
                                       precision)
    top = plan.plan[0]
    digits = outcomes[DIGITS:]
    g, lead = lead_value(digits)   # g carries lead: ints of the same sizes whatever the digits
    if outcomes[TAIL]:                                      # probability <= e**-64
        g = lead + int(fixed_geometric(plan.plan, np.array([[*digits, True]]), rng)[0])
    return signed_value(g, lead, top, outcomes)


def signed_value(g: int, lead: int, top: int, outcomes: list[bool]) -> np.ndarray:
    """The draw, ``0`` if the zero trial is set, else ``±(G + 1)``, as a 1-value array, from
    ``g = lead + G`` (:func:`lead_value`) and the walk's outcomes. With ``I <= 61`` digits and
    no tail: int64 from ``g``'s low word (the digits; the lead bit masked off or in the high
    word), the same work whatever the value, no Python int of its size (brk29 F2); else
    Python ints in an ``object`` array."""
    flip = -int(outcomes[SIGN])                              # -1 if negative: no branch
    if top <= 61 and not outcomes[TAIL]:
        low = np.frombuffer(g.to_bytes(16, "little"), dtype="<i8")[0] & _MASKS[top]
        out = np.empty(1, dtype=np.int64)
        out[0] = (((low + _ONE) * np.int64(1 - outcomes[ZERO])) ^ np.int64(flip)) - flip
        return out
    out = np.empty(1, dtype=object)
    out[0] = (((g - lead + 1) * (1 - outcomes[ZERO])) ^ flip) - flip
    return out
