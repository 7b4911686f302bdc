"""The judge of the Laplace exercise (one release ``value + Lap(Δ/ε)``), and the helpers that make
hidden inputs as real ones are written, which the Gaussian judge
(:mod:`dpkit.course.judges.gaussian`) shares."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.check._common import lent_generator
from dpkit.course.judges._base import (
    EXTREME_WHERE,
    Judgement,
    PrivacyViolation,
    Raised,
    Rejection,
    apart,
    binomial_reject,
    call,
    gamma_reject,
    judged,
    ks_reject,
    on_extreme,
    real,
    rounding_errors,
    seeds,
    too_little_noise,
)
from dpkit.course.judges.coding import NEAR as _NEAR
from dpkit.course.judges.coding import REPEAT as _REPEAT
from dpkit.course.judges.coding import fraction_rounding as _fraction_rounding
from dpkit.course.judges.coding import in_turn as _in_turn
from dpkit.course.judges.coding import same_seed_leak as _same_seed_leak
from dpkit.course.judges.coding import two_workers as _two_workers

__all__ = ["ALPHA_PRIVACY", "LAPLACE_CALLS", "SEEDED_ALIKE", "WHERE", "far_from_one",
           "judge_laplace_mechanism", "log_uniform", "written"]

SEEDED_ALIKE = ("called twice with generators seeded alike, your function returned different "
                 "{}: draw the noise from the `generator` argument, and from nothing else")

_FAR_FROM_ONE = math.log(1.5)   # hidden Δ, ε, Δ/ε at least this far from 1 (log scale)
#: The exact mechanism's lattice (2⁻²⁰Δ fine: 2⁻²⁰ε ≤ 5e-5 scales for ε ≤ 50, its CDF then
#: within 2.4e-5 of the continuous one) and the float rounding of ``value + noise``
#: (``|value|/b ≤ 5e9``: at most 1e-6 scales) vs the continuous law, in KS distance.
_LATTICE_SLACK = 3e-5
#: After a failure: an answer whose noise is at least the right one is called a privacy
#: violation with probability at most this (:func:`too_little_noise`).
ALPHA_PRIVACY = 1e-6
_LAPLACE_TAIL = 4.0             # |noise| > 4b: probability e^-4 under Lap(b)
#: Probability bound of those events for a correct answer: ``P(|x| ≤ t) = 1 − e^{−t} ≤ t``
#: for Lap(1); the sum (difference) of two independent Lap(1) has density at most 1/4, so
#: ``P(|x ± y| ≤ t) ≤ t/2`` each, ``≤ t`` for either; 5% more covers the exact mechanism's
#: lattice and the float rounding (at most 1e-4 scales in all, 5e-4 allowed).
_NEAR_BOUND = 1.05 * _NEAR
#: Probability bound of an *exact* release at the value (noise exactly 0.0) for a correct
#: answer: NumPy's continuous noise only by float rounding (``|noise| ≤ ulp(value)/2``,
#: at most 1e-6 scales with ``|value|/b ≤ 5e9``: probability ≤ 1e-6); dpkit's exact
#: mechanism puts at most ``grid/(2b) = 2⁻²¹ε ≤ 2.4e-5`` (ε ≤ 50) on its lattice's 0.
_EXACT_LAPLACE = 3e-5

# Laplace: 10 hidden pairs of cases (20 cases) of 600 releases, 16 repeated seeds.
_LAPLACE_PAIRS, _LAPLACE_DRAWS, _LAPLACE_REPEATS = 10, 600, 16
_LAPLACE_CASES = 2 * _LAPLACE_PAIRS
#: The first extreme case: pairs 7 to 9 (values to 10⁸, ε to 50 or from 0.01, Δ to 1000
#: or from 0.01), far outside the public check's, where an error is not a tripwire
#: (:func:`~dpkit.course.judges._base.on_extreme`).
_LAPLACE_EXTREME = 2 * (_LAPLACE_PAIRS - 3)
_LAPLACE_DOMAIN = "any finite value and any Δ, ε > 0"
_ALPHA_LAPLACE_POOLED, _ALPHA_LAPLACE_SCALE, _ALPHA_LAPLACE_CASE = 1.4e-7, 1.4e-7, 6e-9
_ALPHA_LAPLACE_ATOM, _ALPHA_LAPLACE_PAIRED, _ALPHA_LAPLACE_NEIGHBOURS = 5e-8, 1e-7, 5e-8
_ALPHA_LAPLACE_DECADES = 5e-8
_ALPHA_LAPLACE_EXACT = 5e-8
#: The same-seed test (adversarial review round 7, E1: the value written into the low bits
#: of the release): per pair, this many of the first case's seeds lent again to the second
#: case; flagged at :data:`~dpkit.course.judges.coding.ALPHA_SAME_SEED` (1e-7).
_LAPLACE_SAME_SEED = 30
#: The range sweep (adversarial review round 15, C4c: an answer that released values of
#: 10⁹ or more without noise passed, the hidden values stopping at 10⁸): this many
#: points over the whole float range, drawn per grading (:func:`_sweep_cases`), this many
#: releases each; too little noise on any of them is a violation, found by
#: :func:`too_little_noise` at :data:`_ALPHA_SWEEP` (taken from the per-case tests).
_SWEEP_POINTS, _SWEEP_DRAWS = 24, 20
_ALPHA_SWEEP = 8e-8
#: Added to each ``|release − value|/b`` of the sweep: the float rounding of
#: ``value + noise`` (``|value|/b <= 10⁸``: at most 3e-8 scales) and the exact
#: mechanism's lattice (at most 5e-6 scales for ε <= 5) move a size by less.
_SWEEP_SLACK = 1e-4
#: A sweep point whose releases are rounded coarser than this many scales (read from their
#: digits: :func:`~dpkit.course.judges._base.rounding_errors`) is not judged (rounding
#: after the noise is post-processing).
_SWEEP_COARSE = 0.05
#: Calls of the student's function one :func:`judge_laplace_mechanism` makes (at most).
LAPLACE_CALLS = _LAPLACE_CASES * _LAPLACE_DRAWS + _LAPLACE_REPEATS \
    + _LAPLACE_PAIRS * _LAPLACE_SAME_SEED + _SWEEP_POINTS * _SWEEP_DRAWS

WHERE = "on a hidden input"


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """A number log-uniform in ``[low, high]`` (``0 < low <= high``), drawn from ``rng``.

    Returns
    -------
    float
        ``exp(U)``, ``U`` uniform in ``[log low, log high]``.
    """
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def far_from_one(*values: float) -> bool:
    """Whether every one of the positive ``values`` is at least a factor 1.5 from 1 (so
    that the usual wrong formulas, ``Δ·ε`` for ``Δ/ε``, ``σ²`` for ``σ``, differ).

    Returns
    -------
    bool
        ``|log v| >= log 1.5`` for every ``v``.
    """
    return all(abs(math.log(v)) >= _FAR_FROM_ONE for v in values)


#: How each pair's value, Δ and ε are written, shuffled over the 10 pairs: mostly full
#: precision (a mean, ε = ln 3), some rounded (two decimals, four significant digits), some
#: whole or short (a count, Δ = 1, ε = 0.5), so that an answer keyed on the format of its
#: inputs (adversarial review round 3, N1: exact unless the inputs are "round") meets both.
#: Groups of ordinary pairs that share Δ and ε, with values decades apart: each pair's
#: value is the previous one's times 10 (times 10 or 1,000 for the last pair of a group of
#: two), so that the decades alternate in parity (review round 3, N12).
_GROUPS = ((0, 1, 2), (3, 4))
_LEADERS = tuple(group[0] for group in _GROUPS)
_FOLLOWERS = tuple(pair for group in _GROUPS for pair in group[1:])
_VALUE_FORMATS = ("full",) * 4 + ("cents",) * 3 + ("whole",) * 3
_PARAMETER_FORMATS = ("full",) * 4 + ("short",) * 3 + ("shorter",) * 3


def written(x: float, how: str) -> float:
    """``x`` as the format ``how`` writes it.

    Parameters
    ----------
    x : float
        The number.
    how : str
        ``"full"`` (unchanged), ``"cents"`` (two decimals), ``"whole"``, ``"short"`` (four
        significant digits) or ``"shorter"`` (two).

    Returns
    -------
    float
        ``x`` so written.
    """
    return {"full": x, "cents": round(x, 2), "whole": float(round(x)),
            "short": float(f"{x:.4g}"), "shorter": float(f"{x:.2g}")}[how]


def _laplace_cases(rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """Hidden (value, Δ, ε), in pairs of neighbouring values that share Δ and ε.

    Pairs 0 to 6: Δ, ε in [0.1, 5] and values of either sign from 0.1 to 10,000 (pairs 0
    to 2 share Δ and ε, as do pairs 3 and 4: :data:`_GROUPS`; the first's value is from 1
    to 10 in size, the next ones' that size times 10, 100, or 10 or 1,000: values decades
    apart, of one scale); pair 7: values from 10⁴ to 10⁸; pair 8: ε in [0.01, 0.1] or
    [5, 50]; pair 9: Δ in [0.01, 0.1] or [5, 1000] (the exercise allows any finite value
    and any Δ, ε > 0). Always Δ, ε, Δ/ε, Δ·ε away from 1, so that every usual wrong scale
    (Δ·ε, ε/Δ, Δ, 1/ε, (Δ + 1)/ε, …) differs from Δ/ε, by 20% or more where Δ <= 5. Each
    pair's value, Δ and ε are written in one of the formats of :data:`_VALUE_FORMATS` and
    :data:`_PARAMETER_FORMATS`, shuffled; the second value of a pair is the first plus an
    odd number of cents (at most 0.09), or of units (at most 9) if it is whole."""
    value_formats = [str(f) for f in rng.permutation(_VALUE_FORMATS)]
    delta_formats, epsilon_formats = ([str(f) for f in rng.permutation(_PARAMETER_FORMATS)]
                                      for _ in range(2))
    cases: list[tuple[float, float, float]] = []
    first = 1.0                             # the last value's size, before its format
    while len(cases) < _LAPLACE_CASES:
        pair = len(cases) // 2
        delta, epsilon = log_uniform(rng, 0.1, 5.0), log_uniform(rng, 0.1, 5.0)
        low, high = 0.1, 1e4
        if pair in _LEADERS:
            low, high = 1.0, 10.0
        elif pair in _FOLLOWERS:
            delta, epsilon = cases[-1][1], cases[-1][2]
        elif pair == _LAPLACE_PAIRS - 3:
            low, high = 1e4, 1e8
        elif pair == _LAPLACE_PAIRS - 2:
            epsilon = log_uniform(rng, *((0.01, 0.1) if rng.random() < 0.5 else (5.0, 50.0)))
        elif pair == _LAPLACE_PAIRS - 1:
            delta = log_uniform(rng, *((0.01, 0.1) if rng.random() < 0.5 else (5.0, 1e3)))
        if pair not in _FOLLOWERS:
            delta = written(delta, delta_formats[pair])
            epsilon = written(epsilon, epsilon_formats[pair])
        if not far_from_one(delta, epsilon, delta / epsilon, delta * epsilon):
            continue
        sign = float(rng.choice([-1.0, 1.0]))
        jump = 10.0 ** int(rng.choice([1, 3])) if (pair - 1, pair) in _GROUPS else 10.0
        drawn = first * jump if pair in _FOLLOWERS else log_uniform(rng, low, high)
        first = drawn
        value = written(sign * drawn, value_formats[pair])
        step = 1.0 if value_formats[pair] == "whole" else 0.01
        neighbour = value + step * (2 * int(rng.integers(0, 5)) + 1)
        if step == 0.01 and value_formats[pair] == "cents":
            neighbour = round(neighbour, 2)
        cases += [(value, delta, epsilon), (neighbour, delta, epsilon)]
    return cases


def _sweep_cases(rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """The range sweep's hidden ``(value, Δ, ε)``, drawn per grading over the whole float
    range: one value with ``|value|`` in ``[10³⁰⁰, 10³⁰⁷]``, one in ``[10⁻³⁰⁷, 10⁻³⁰⁰]``,
    and :data:`_SWEEP_POINTS` − 2 log-uniform in the equal bands that split
    ``[10⁻³⁰⁰, 10³⁰⁰]``, each of a random sign, at full precision; ε log-uniform in
    ``[0.1, 5]``; the scale ``b = Δ/ε`` log-uniform between ``max(10⁻³⁰⁰, |value|·10⁻⁸)``
    and ``min(10³⁰⁰, |value|·10³)`` (so that the noise is neither lost to the value's
    rounding nor overflows), ``Δ = b·ε``.

    >>> cases = _sweep_cases(np.random.default_rng(0))
    >>> len(cases), max(abs(v) for v, _, _ in cases) >= 1e300
    (24, True)
    >>> 0 < min(abs(v) for v, _, _ in cases) <= 1e-300
    True
    """
    bands = [(300.0, 307.0), (-307.0, -300.0)]
    edges = np.linspace(-300.0, 300.0, _SWEEP_POINTS - 1)
    bands += list(itertools.pairwise(edges.tolist()))
    cases = []
    for low, high in bands:
        size = 10.0 ** float(rng.uniform(low, high))
        value = float(rng.choice([-1.0, 1.0])) * size
        epsilon = log_uniform(rng, 0.1, 5.0)
        least = max(1e-300, size * 1e-8)
        scale = log_uniform(rng, least, max(least, min(1e300, size * 1e3)))
        cases.append((value, scale * epsilon, epsilon))
    return cases


def _sweep_releases(worker: Callable[..., Any], cases: list[tuple[float, float, float]],
                    table: np.ndarray) -> np.ndarray | Raised:
    """The range sweep's releases (``table[i, j]``: the seed of release ``j`` of point
    ``i``), or the first error (or result that is not a finite number) on it."""
    releases = np.empty(table.shape)
    for i, (value, delta, epsilon) in enumerate(cases):
        for j, seed in enumerate(table[i].tolist()):
            try:
                releases[i, j] = real(call(worker, value, delta, epsilon,
                                           lent_generator(seed), where=EXTREME_WHERE),
                                      where=EXTREME_WHERE)
            except Raised as error:
                return error
    return releases


def _judge_sweep(cases: list[tuple[float, float, float]], releases: np.ndarray) -> bool:
    """Whether the range sweep's releases show too little noise (a privacy violation) on
    some point. A point whose releases are rounded coarser than :data:`_SWEEP_COARSE`
    scales (read from their digits, in units of a power of two near ``b``: rounding after
    the noise is post-processing, and ``round(x, 6)`` is coarse at ``b = 10⁻²⁰⁰``) is left
    out.

    Each point's sizes ``|release − value|/b`` plus :data:`_SWEEP_SLACK` are stochastically
    at least Exp(1) for an answer with Lap(b) noise (float64 or dpkit's exact mechanism),
    so :func:`too_little_noise` (per point and pooled, and the tail beyond 4 scales) calls
    such an answer too noiseless with probability at most :data:`_ALPHA_SWEEP`."""
    groups = []
    for (value, delta, epsilon), got in zip(cases, releases, strict=True):
        scale = delta / epsilon
        power = math.frexp(scale)[1]    # read in units of about b: 10⁻³⁰⁰ has 300 decimals
        if float(np.max(rounding_errors(np.ldexp(got, -power)))) \
                <= _SWEEP_COARSE * math.ldexp(scale, -power):
            groups.append(np.abs(got - value) / scale + _SWEEP_SLACK)
    return bool(groups) and too_little_noise(groups, stats.gamma.cdf, _LAPLACE_TAIL,
                                             math.exp(-_LAPLACE_TAIL), _ALPHA_SWEEP)


_WRONG_SCALES: tuple[tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]], ...] = (
    ("Δ·ε", lambda d, e: d * e), ("ε/Δ", lambda d, e: e / d), ("Δ/(2ε)", lambda d, e: d / (2 * e)),
    ("2Δ/ε", lambda d, e: 2 * d / e), ("1/ε", lambda d, e: 1 / e), ("Δ", lambda d, e: d),
    ("(Δ + 1)/ε", lambda d, e: (d + 1) / e), ("Δ/ε²", lambda d, e: d / e**2),
)


def _scale_hint(distance: np.ndarray, delta: np.ndarray, epsilon: np.ndarray) -> str:
    """Name the wrong scale the releases fit, if one of the usual ones does."""
    for name, scale in _WRONG_SCALES:
        per_case = np.mean(distance / scale(delta, epsilon), axis=1)
        if np.all(np.abs(per_case - 1) < 0.15):
            return f"your noise scale looks like {name}, but it must be Δ/ε"
    return ""


def judge_laplace_mechanism(fn: Callable[[float, float, float, np.random.Generator], Any],
                            rng: np.random.Generator) -> Judgement:
    """Hidden test of ``fn(value, sensitivity, epsilon, generator)``: one release
    ``value + Lap(Δ/ε)`` with NumPy noise (exercise ``ex-laplace-textbook``).

    **Hidden inputs** (from ``rng``): 10 pairs of cases ``(value, Δ, ε)``; the two cases of
    a pair share Δ and ε, and their values differ by an odd number of cents up to 0.09 (of
    units up to 9 for whole values): neighbours. Pairs 0 to 6: ``Δ, ε`` log-uniform in
    ``[0.1, 5]``, values of either sign up to ``10⁴``, five of them in two groups sharing Δ
    and ε (pairs 0 to 2, pairs 3 and 4) whose values are decades apart (from 1 to 10, then
    10 times more, 100 or 1,000 times more); pair 7: values in ``[10⁴, 10⁸]``; pair 8: ε
    in ``[0.01, 0.1]`` or ``[5, 50]``; pair 9: Δ in ``[0.01, 0.1]`` or ``[5, 1000]`` (the
    exercise allows any value and any Δ, ε > 0); always ``Δ, ε, Δ/ε, Δ·ε`` at least a
    factor 1.5 from 1 (so that Δ·ε, ε/Δ, Δ/(2ε), 1/ε, Δ, (Δ + 1)/ε differ from Δ/ε). The
    inputs are written as real ones are, shuffled over the pairs: values at full float
    precision (4 pairs), with two decimals (3) or whole (3); Δ and ε each at full
    precision (4), with 4 significant digits (3) or 2 (3). 600 releases per case, each
    with a fresh generator seeded from ``rng`` (:func:`~dpkit.check._common.lent_generator`:
    made like ``default_rng()``, 128 bits of entropy), the 12,000 calls in a secret random
    order that interleaves the cases, each made at random in one of two fresh workers
    (new sandboxed processes that ran the notebook's cells and nothing else:
    :func:`~dpkit.course.judges._base.apart`).

    **Tests**, with their false-failure probabilities for a correct answer:

    * every release is a finite real number, and 16 releases repeated with generators
      seeded alike are equal (the exercise says the noise comes from ``generator``): 0;
    * pooled Kolmogorov–Smirnov test of the 12,000 transforms ``F_{value, Δ/ε}(release)``
      against uniform, DKW bound: 1.4e-7;
    * the noise's spread: ``Σ |release − value|/(Δ/ε)`` against Gamma(12000, 1),
      two-sided: 1.4e-7 (catches a scale 8% too small with probability 0.99);
    * per case, a KS test and the spread test (a function right on some inputs only, a
      lookup table of the public check's inputs, errors of opposite signs on different
      inputs): 20 × (6e-9 + 6e-9);
    * the range sweep (adversarial review round 15, C4c: an answer that released values
      of 10⁹ or more without noise passed when the hidden values stopped at 10⁸): the 24
      points of :func:`_sweep_cases`, drawn per grading over the whole float range
      (``|value|`` from 10⁻³⁰⁷ to 10³⁰⁷, one point beyond 10³⁰⁰ and one below 10⁻³⁰⁰, the
      scale ``b`` from ``|value|·10⁻⁸`` to ``|value|·10³``), 20 releases each, made in the
      last worker after its other calls; ``|release − value|/b`` (plus 1e-4 for the
      rounding) must not be smaller than Exp(1), per point, pooled or in the tail
      (:func:`too_little_noise`, :func:`_judge_sweep`): 8e-8. A point whose releases
      are rounded coarser than 0.05 scales is left out;
    * a point mass: the number of releases within ``0.01·Δ/ε`` of the value, one-sided
      exact binomial test against ``1.05·0.01`` (``P = 1 − e^{−0.01}`` for Lap(1)): 5e-8;
      and the number exactly at the value against ``3e-5`` (float rounding: at most 1e-6;
      the exact mechanism's lattice: ``2⁻²¹ε ≤ 2.4e-5``): 5e-8;
    * independence: in each worker's order of calls, and in each case's calls, the
      disjoint pairs of consecutive noises (two offsets each) whose sum or difference is
      within ``0.01·Δ/ε`` of 0 (probability at most 0.01 for independent Laplace noises,
      whose sum has density at most 1/(4b)), one-sided binomial tests: 4 × 2.5e-8;
    * a scale that depends on the value: per pair, the first case's share of the pair's
      ``Σ|noise|/b`` is Beta(600, 600) for one Laplace scale, whatever it is; the
      squares of its normal scores summed over the pairs, χ²(10), upper tail: 5e-8; and
      across the pairs of a group (one Δ and ε, values decades apart), the Helmert
      shares of the pairs' sums (Beta(1200j, 1200), independent), χ²(3): 5e-8;
    * the value in the low digits (adversarial review round 7, E1): per pair, the
      second case is called again with the generators of 30 of the first case's
      releases (300 calls), each in the *other* worker at a random place among the calls
      (:func:`~dpkit.course.judges.coding.two_workers`: no worker sees a seed twice, so
      an answer that remembers its generators cannot tell these calls, round 10, L1).
      Noise that does not depend on the value, then any rounding, gives gaps
      ``(r − r') − (v − v')`` within the rounding the releases show
      (:func:`_same_seed_leak`: 4 units of their last binary, decimal or significant
      digit, 4 steps of the finest power of two they use, 4 ulps of the values), or,
      rounded to a grid their digits do not show (step ``s``: ``b/1000``, ``b/2²⁰``),
      one of two values that changes with the seed. A pair is coded when 20 or more of
      its 30 gaps lie beyond that allowance but within ``0.01·Δ/ε`` and either are one
      value other than ``−(v − v')``, the two cases not on one lattice (an additive code;
      the value rounded to a grid plus noise rounded to it is exempt: round 14) or the
      two cases share two different low bytes (a code in the low bits); an honest grid is
      coded with probability ``p³⁰ + (1 − p)³⁰``, ``p = ((v − v') mod s)/s``, 2/31 on
      average (simulated: 0.028 to 0.081 per pair for grids of b/3 to b/2²⁰, 0 for digit
      roundings and floats); flagged at 8 coded pairs of 10 (``Binomial(10, 2/31)``):
      1e-7. Noise whose draws depend on the value has gaps of the order of the noise;
    * the value in the offset from a grid (round 10, A1; round 11, F5): a pair whose gaps
      (within one scale) mostly take two values ``s`` apart (20 of 30), the lower plus
      ``v − v'`` no multiple of ``s``, 3/4 of each case's releases on a grid of step ``s``;
      flagged at 2 such pairs: 0 (an honest rounding: one grid, or one gap, 0);
    * the value below a rounding of the release's own binade or decade (round 12, F0):
      a pair with 20 of 30 gaps flagged whose two cases hold one offset each, different,
      in 3/4 of their distinct releases, in one frame ``Q = 2^(e − t)`` or ``10^(d − t)``
      read per release (at most 0.01 scales; :func:`~dpkit.course.judges.coding.same_seed_leak`);
      flagged at 2 such pairs: below 1e-20 (an honest rounding fixes every digit below it);
      or whose 20 of 30 flagged gaps are spread (neither one value nor two) and beyond the
      steps of the lattices around their releases (round 13, F1: the code's offset below a
      grid scrambled by a hash of the grid index): at most 1.1e-13 per pair (an honest
      grid's gaps are one or two values, or within its steps but near a change of step).

    In all at most **1e-6** (Bonferroni). NumPy's float Laplace noise has exactly this law;
    ``dpkit.laplace.laplace_mechanism`` (exact noise on a grid 2⁻²⁰Δ fine, at most
    5e-5 scales for ε ≤ 50, scale widened by at most 2⁻²⁰) is within 3e-5 of it in KS
    distance, which the thresholds allow, as the 5% margin of the near-zero bounds allows
    its grid, and its mean ``|noise|/b`` is off by about 1e-6 relative, 0.0001 of a
    standard error. Float rounding of ``value + noise`` (``|value|/b ≤ 5e9``) moves a
    noise by at most 1e-6 scales.

    **Errors**: an error, or a result that is not a finite number, on pairs 0 to 6 ends
    the judge as :class:`~dpkit.course.judges._base.Raised` (no point for the exercise:
    privacy unchecked); on the extreme pairs 7 to 9 (and on the range sweep) it stops their
    calls, the tests above
    run on pairs 0 to 6 alone (a violation there is still one), and then it is a plain
    failure that keeps the public point (a defensive guard is honest;
    :func:`~dpkit.course.judges._base.on_extreme`).

    **Calls**: 12,796 (:data:`LAPLACE_CALLS`; 480 on the range sweep), in two workers
    started in turn for the test (a process start and the notebook's cells: about 2 s each,
    busy 2-core machine).
    **Privacy**: the law of the release at each input is the whole mechanism, so too little
    noise (a wrong scale), one noise reused for every release, or noise that depends on the
    value all fail the distribution tests. A failure is a **privacy violation**
    (:class:`PrivacyViolation`: no point for the exercise) when the releases equal the
    value, repeat one noise, or have less noise than Lap(Δ/ε) on some hidden input
    (:func:`too_little_noise` on ``|noise|/b``: smaller per case or pooled, or fewer beyond
    4b than ``e^-4``, as Gaussian noise has); when too many releases are (almost) the value
    (a point mass: the release is the value with positive probability, not ε-DP for any ε);
    when consecutive noises cancel or repeat (averaging or subtracting releases reveals the
    value); or when the scale differs between the neighbouring values of a pair (the ratio
    of the densities at two neighbours is then unbounded in the tails). An answer with at
    least that much noise, independent from call to call and of one Laplace scale per (Δ, ε)
    (a scale too large, (Δ + 1)/ε) is called one with probability at most 1e-6. The releases
    alone cannot tell too little noise from a private post-processing that pulls them toward
    a point (half the release shows half the noise on small values): such an answer, not the
    exercise's ``value + Lap(Δ/ε)`` either, is called a violation too. **Resolution**: a
    scale 5% too small everywhere is caught about 4 times in 10 (a scale 8% too small 99
    times in 100); a scale 10% off either way, by the value, on every pair; a scale 10% off
    either way by the parity of the value's decade about 9 times in 10 (28 of 30 simulated
    graders); an answer exact unless its inputs are short decimals, always; an atom of 1% or
    more at the value; cancelling or repeated noises in 2% or more of consecutive pairs.
    A release whose low digits carry the value (an additive code, the same for every
    seed, or a code in the low byte of the significand, on 8 pairs of 10; a code in the
    offset from a grid, or below a rounding of the release's own binade or decade, on 2) is
    a privacy violation too: one release gives the value
    back. A privacy failure the releases' own rounding explains (float32 or 8
    significant digits at values of 10⁴ to 10⁸: releases at the value, repeated noises)
    is a plain failure (:func:`_rounded_verdict`: rounding after the noise is
    post-processing): the privacy tests run again without the pairs rounded above b/20
    (units read from the releases other than the value) and with the atom and pairing
    tests blind to the cases rounded above 3e-5 scales; a violation there still is one.
    **Not judged**: that the noise is drawn in floating point (the exercise asks for it;
    Mironov's attack concerns the exact floats, which no test of the law sees), or
    rounded before the value is added (each release shows ``value mod s``); a code
    within 4 units of the releases' own rounding (an answer that rounds its releases can
    still choose among the few grid points nearest its noisy value), one that moves a
    release by more than 0.01 scales, one hidden under a rounding of its own (its gap
    changes with the seed) outside the low byte of the significand, the offset from
    one grid and the digits below a binade's or decade's rounding, or one on fewer than 8
    pairs (an offset code, or one below a binade's rounding: 2; one equal on most
    neighbours, coarser than their difference, is on few); a code in only some of the
    releases (round 10, L2: simulated, 5 graders each, a low-bits code in 80% of the
    releases is caught 5 times, in 70% once, in 50% or 3% never; each coded release still gives
    its value away); too little noise, or an atom, hidden under a rounding coarser than b/20
    (that pair fails plainly), or an atom or repeated noises under one coarser than 3e-5 scales;
    an answer that remembers its generators where the two workers are one process (a local
    function: the judge's own tests) or share files (grading without a sandbox); dependence
    between releases other than consecutive ones, or weaker than exact cancellation; departures
    confined to inputs or events the hidden cases never meet (the sweep draws 24 points per
    grading: a backdoor keyed to a narrow band of values, or to ``|value|/b`` beyond 10⁸, where
    float noise is lost in the value's rounding anyway, is met by chance or not at all); an
    answer that detects where it
    runs (the grading sandbox rather than a notebook) and adds noise only there: no test of
    outputs sees it, the teacher reads the code (the static check refuses the obvious
    environment reads).
    """
    cases = _laplace_cases(rng)
    seed_table = seeds(rng, (_LAPLACE_CASES, _LAPLACE_DRAWS))
    # the calls' order, secret: the cases interleaved at random (call t is of case labels[t])
    labels = rng.permutation(np.repeat(np.arange(_LAPLACE_CASES), _LAPLACE_DRAWS))
    calls, order, _, probed = _two_workers(rng, labels, _LAPLACE_DRAWS, _LAPLACE_SAME_SEED,
                                           _LAPLACE_REPEATS)  # over two workers (round 10, L1)
    sweep = _sweep_cases(rng)           # drawn last: the inputs above are unchanged
    sweep_seeds = seeds(rng, (_SWEEP_POINTS, _SWEEP_DRAWS))

    def release(worker: Callable[..., Any], c: int, seed: int) -> float | Raised:
        """Case ``c``'s release with ``seed``; on an extreme case, its error returned."""
        value, delta, epsilon = cases[c]
        where = EXTREME_WHERE if c >= _LAPLACE_EXTREME else WHERE
        try:
            return real(call(worker, value, delta, epsilon, lent_generator(seed),
                             where=where), where=where)
        except Raised as error:
            if c < _LAPLACE_EXTREME:
                raise
            return error

    def body() -> str:
        releases = np.empty((_LAPLACE_CASES, _LAPLACE_DRAWS))
        again = np.empty((_LAPLACE_PAIRS, _LAPLACE_SAME_SEED))   # the same-seed calls
        broken: Raised | None = None     # the first error on an extreme case
        repeated = {}       # (c, j): release j of case c, asked again in its worker
        worker = fn
        with apart(fn, 2) as workers:       # in turn, never together (review round 11, F1)
            for worker, c, j, probe in _in_turn(calls, workers):
                if broken is None or c < _LAPLACE_EXTREME:  # a probe: case 2p + 1 …
                    got = release(worker, c, int(seed_table[c - (probe >= 0), j]))
                    if probe == _REPEAT:                    # … with case 2p's seed j
                        repeated[c, j] = got
                    elif isinstance(got, Raised):
                        broken = got
                    elif probe < 0:
                        releases[c, j] = got
                    else:
                        again.flat[probe] = got
            swept = _sweep_releases(worker, sweep, sweep_seeds)     # the last worker's
        kept = _LAPLACE_CASES if broken is None else _LAPLACE_EXTREME
        if any(c < kept and got != releases[c, j] for (c, j), got in repeated.items()):
            raise Rejection(SEEDED_ALIKE.format("releases"))
        # an extreme case that raised leaves its pair out of the same-seed test
        leak = _same_seed_leak(cases, releases, list(again[:kept // 2]), probed)
        try:
            verdict = _rounded_verdict(cases[:kept], releases[:kept], order[order < kept])
        except PrivacyViolation:
            raise
        except Rejection:
            if leak:
                raise PrivacyViolation(leak) from None
            raise
        if leak:
            raise PrivacyViolation(leak)
        if not isinstance(swept, Raised) and _judge_sweep(sweep, swept):
            raise PrivacyViolation(f"{EXTREME_WHERE}, your releases have less noise than "
                                   "Lap(Δ/ε): add the same noise whatever the size of the "
                                   "value, Δ and ε")
        for error in (broken, swept):
            if isinstance(error, Raised):
                raise on_extreme(error, _LAPLACE_DOMAIN)
        return verdict

    return judged(body)


def _in_call_order(table: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``table[c, j]`` (the ``j``-th call of case ``c``) in the order of the calls."""
    position = np.empty(labels.size, dtype=np.int64)
    position[np.argsort(labels, kind="stable")] = np.arange(labels.size)
    return table.ravel()[position]


def _near_pairs(sequences: list[np.ndarray], alpha: float) -> bool:
    """Whether too many pairs of consecutive noises (in scales) cancel or repeat.

    For each offset (0 and 1), the disjoint pairs ``(x[i], x[i + 1])`` of every sequence,
    ``i = offset, offset + 2, …``, are independent for a correct answer, and each has
    ``|x[i] + x[i + 1]| <= t`` or ``|x[i] - x[i + 1]| <= t`` (t = :data:`_NEAR`) with
    probability at most :data:`_NEAR_BOUND`: a one-sided exact binomial test per offset,
    at ``alpha/2`` each."""
    if not sequences or not any(x.size > 1 for x in sequences):
        return False                            # every case left out: nothing to test
    for offset in (0, 1):
        first = [x[offset:x.size - 1:2] for x in sequences]
        second = [x[offset + 1::2][:f.size] for x, f in zip(sequences, first, strict=True)]
        a, b = np.concatenate(first), np.concatenate(second)
        near = (np.abs(a + b) <= _NEAR) | (np.abs(a - b) <= _NEAR)
        if binomial_reject(int(near.sum()), near.size, _NEAR_BOUND, alpha / 2, "greater"):
            return True
    return False


def _laplace_structure(distance: np.ndarray, noise_in_scales: np.ndarray,
                       labels: np.ndarray,
                       groups: tuple[tuple[int, ...], ...] = _GROUPS,
                       rounded: np.ndarray | None = None) -> str:
    """The privacy failures the marginal law of one release can hide, or ``""``.

    Cases marked ``rounded`` (their releases' own rounding can make these events) are
    left out of the first two tests.

    * releases (almost) at the value: the count of ``|noise| <= 0.01b`` (probability at most
      :data:`_NEAR_BOUND`) and of releases exactly at it (:data:`_EXACT_LAPLACE`),
      one-sided exact binomial tests;
    * noises that depend on each other: :func:`_near_pairs` on the calls' (secret) order
      and on each case's own calls in their order, at half the share each;
    * a scale that depends on the value: for each pair of neighbouring cases, the share of
      the first in the pair's ``Σ|noise|/b`` is Beta(n, n) (for Laplace noise of any one
      scale); its normal scores' squares sum to χ²(pairs), one-sided test; and across the
      pairs of each of ``groups`` (:data:`_GROUPS`: one Δ and ε, values decades apart), the
      share of the pairs before the j-th in the sum up to it, Beta(2nj, 2n), likewise.
    """
    sharp = np.ones(distance.shape[0], dtype=bool) if rounded is None else ~rounded
    near = int(np.sum(distance[sharp] <= _NEAR))
    exact = int(np.sum(distance[sharp] == 0))
    if binomial_reject(near, distance[sharp].size, _NEAR_BOUND, _ALPHA_LAPLACE_ATOM, "greater") or \
            binomial_reject(exact, distance.size, _EXACT_LAPLACE, _ALPHA_LAPLACE_EXACT,
                            "greater"):
        return ("too many of your releases are (almost) exactly the true value, far more "
                "than Laplace noise puts there; a release that equals the value with some "
                "probability is not ε-DP for any ε")
    in_order = _in_call_order(noise_in_scales, labels)[sharp[labels]]
    if _near_pairs([in_order], _ALPHA_LAPLACE_PAIRED / 2) or \
            _near_pairs(list(noise_in_scales[sharp]), _ALPHA_LAPLACE_PAIRED / 2):
        return ("the noises of different releases depend on each other (too many of them "
                "cancel or repeat, so that averaging or subtracting releases reveals the "
                "value): every release must draw fresh noise from its own `generator`")
    totals = distance.sum(axis=1)
    first, second = totals[0::2], totals[1::2]
    n = distance.shape[1]
    scores = stats.norm.ppf(stats.beta.cdf(first / (first + second), n, n))
    pairs = first + second      # a group's pairs: one (Δ, ε), values decades apart
    # Helmert contrasts: the share of the pairs before j in the sum up to j is
    # Beta(2nj, 2n), independent of one another and of the pairs' own shares
    apart = stats.norm.ppf([stats.beta.cdf(pairs[list(g[:j])].sum() / pairs[list(g[:j + 1])]
                                           .sum(), 2 * n * j, 2 * n)
                            for g in groups if g[-1] < pairs.size for j in range(1, len(g))])
    if stats.chi2.sf(float(np.sum(scores**2)), scores.size) < _ALPHA_LAPLACE_NEIGHBOURS or \
            (apart.size > 0 and stats.chi2.sf(float(np.sum(apart**2)), apart.size) <
             _ALPHA_LAPLACE_DECADES):
        return ("your noise scale changes with the value (it differs between values with "
                "the same Δ and ε, neighbouring or decades apart): the scale must be Δ/ε "
                "whatever the value; a scale taken from the data is not ε-DP for any ε")
    return ""


def _laplace_verdict(cases: list[tuple[float, float, float]], releases: np.ndarray,
                     labels: np.ndarray,
                     groups: tuple[tuple[int, ...], ...] = _GROUPS,
                     rounded: np.ndarray | None = None) -> str:
    values, deltas, epsilons = (np.array(column)[:, None] for column in zip(*cases, strict=True))
    scales = deltas / epsilons
    noise = releases - values
    if np.all(noise == 0):
        raise PrivacyViolation("your releases equal the true value: add Laplace noise to it")
    sharp = slice(None) if rounded is None else ~rounded
    if np.unique(np.round((noise / scales)[sharp], 9)).size < noise[sharp].size // 2:
        raise PrivacyViolation("your releases repeat the same noise: draw fresh noise from "
                               "`generator` for every release")
    transforms = stats.laplace.cdf(noise / scales)
    distance = np.abs(noise) / scales
    spreads = distance.mean(axis=1)
    structure = _laplace_structure(distance, noise / scales, labels, groups, rounded)
    scale_wrong = gamma_reject(float(distance.sum()), distance.size, _ALPHA_LAPLACE_SCALE)
    shape_wrong = ks_reject(transforms.ravel(), _ALPHA_LAPLACE_POOLED, _LATTICE_SLACK)
    wrong_cases = [c for c in range(len(cases))
                   if ks_reject(transforms[c], _ALPHA_LAPLACE_CASE, _LATTICE_SLACK)
                   or gamma_reject(float(distance[c].sum()), distance[c].size,
                                   _ALPHA_LAPLACE_CASE)]
    if not (scale_wrong or shape_wrong or wrong_cases):
        if structure:
            raise PrivacyViolation(structure)
        return ("your releases are consistent with value + Lap(Δ/ε) on inputs you have not "
                "seen, independent from one release to the next (a noise scale 8% too "
                "small would have been caught with probability 0.99 or more; smaller "
                "departures can go unseen)")
    hint = _scale_hint(np.abs(noise), np.broadcast_to(deltas, noise.shape),
                       np.broadcast_to(epsilons, noise.shape))
    below = float(np.mean(noise < 0))
    off = [float(spreads[c]) for c in wrong_cases] or [float(spreads.mean())]
    if hint:
        pass
    elif below < 0.3 or below > 0.7:
        hint = "the noise must be centred at 0: negative as often as positive"
    elif all(abs(x - 1) < 0.2 for x in off):
        hint = ("the noise does not have the Laplace shape: compare its tails with "
                "P[|noise| > t] = exp(−t/b), b = Δ/ε")
    elif all(x < 1 for x in off):
        hint = (f"too little noise (as little as {min(off):.2g} times the spread of "
                "Lap(Δ/ε)): the release is not ε-differentially private")
    elif all(x > 1 for x in off):
        hint = f"too much noise (up to {max(off):.2g} times the spread of Lap(Δ/ε))"
    else:
        hint = ("on some inputs too much noise, on others too little: make sure value, "
                "sensitivity and epsilon are all used, in the scale Δ/ε")
    scope = "some hidden inputs" if len(wrong_cases) < len(cases) else "hidden inputs"
    private = not too_little_noise(list(distance), stats.gamma.cdf, _LAPLACE_TAIL,
                                   math.exp(-_LAPLACE_TAIL), ALPHA_PRIVACY)
    message = f"on {scope} your releases are not distributed as value + Lap(Δ/ε); {hint}"
    if private and structure:
        raise PrivacyViolation(structure)
    raise (Rejection if private else PrivacyViolation)(message)


#: Rounded releases (:func:`_rounding_units`): above ``_ROUNDED`` noise scales a value
#: on the rounding's grid is released exactly with probability about ``unit/b``, above
#: the :data:`_EXACT_LAPLACE` the exact-value test allows, and noises repeat, so the
#: atom and pairing tests leave the case out; above ``_COARSE`` scales (float32 or 8
#: significant digits at values of 10⁴ to 10⁸) every privacy test leaves its pair out.
_ROUNDED, _COARSE = _EXACT_LAPLACE, 1 / 20


def _rounding_units(cases: list[tuple[float, float, float]],
                    releases: np.ndarray) -> np.ndarray:
    """Per case, the unit of the last digit its releases use (:func:`rounding_errors`,
    one unit), in noise scales, judged from the releases other than the value itself, or,
    when the releases repeat (a grid such as ``round(x/s)*s``, whose products are
    full-precision floats: continuous noise repeats with probability about 0), the least
    gap between two of their values, if larger (honest review 9, F5), or, for releases
    rounded to fractions of bounded denominator, the basin around the value itself, if
    larger (twice :func:`~dpkit.course.judges.coding.fraction_rounding` of the value among
    the first 64 releases: a short decimal, of small denominator, has a wide one; honest
    review 15, F4); ``0`` for a case whose releases take one value (no noise, as far as
    they show)."""
    units = np.zeros(len(cases))
    for c, ((value, delta, epsilon), got) in enumerate(zip(cases, releases, strict=True)):
        moved = got[got != value]
        if np.unique(got).size > 1 and moved.size:
            unit = float(np.max(rounding_errors(moved, ulps=1)))
            distinct = np.unique(moved)          # repeats away from the value: a grid
            if 1 < distinct.size < moved.size:
                unit = max(unit, float(np.min(np.diff(distinct))))
            unit = max(unit, 2 * float(_fraction_rounding(np.append(moved[:64], value))[-1]))
            units[c] = unit * epsilon / delta
    return units


def _rounded_verdict(cases: list[tuple[float, float, float]], releases: np.ndarray,
                     labels: np.ndarray) -> str:
    """:func:`_laplace_verdict`, except that a privacy violation the releases' own
    rounding can explain is a plain failure (honest review round 8, H5: rounding after
    the noise is post-processing, ε-DP, yet it puts releases at the value and makes
    noises repeat). The verdict is run again without the pairs rounded above
    :data:`_COARSE` scales (the groups of :data:`_GROUPS` kept whole) and with the atom
    and pairing tests blind to the cases rounded above :data:`_ROUNDED`: a violation
    there still is one."""
    try:
        return _laplace_verdict(cases, releases, labels)
    except PrivacyViolation:
        units = _rounding_units(cases, releases)
        if not np.any(units > _ROUNDED):
            raise
        fine = [p for p in range(len(cases) // 2) if max(units[2 * p:2 * p + 2]) <= _COARSE]
        kept = [c for p in fine for c in (2 * p, 2 * p + 1)]
        new = {old: i for i, old in enumerate(fine)}
        groups = tuple(tuple(new[p] for p in g) for g in _GROUPS if all(p in new for p in g))
        index = np.full(len(cases), -1)
        index[kept] = np.arange(len(kept))
        if fine:
            try:
                _laplace_verdict([cases[c] for c in kept], releases[kept],
                                 index[labels][np.isin(labels, kept)], groups,
                                 units[kept] > _ROUNDED)
            except Rejection:
                pass
        worst = int(np.argmax(units))
        scale = cases[worst][1] / cases[worst][2]
        raise Rejection(f"on some hidden inputs your releases are rounded to about "
                        f"{units[worst] * scale:.2g}, too coarse for noise of scale "
                        f"{scale:.2g}: they are not distributed as value + Lap(Δ/ε); keep "
                        "the release at full (float64) precision") from None
