"""Tests of the grouped fixed-cost trials (:func:`dpkit._samplers.bernoulli.fixed_below`) and of
the scalar release path on Python floats (:func:`dpkit._samplers.grid.noisy_scalar`).

A request of up to two rows (a scalar discrete Gaussian's round of two proposals) decides its
Bernoulli trials ``GROUP = 8`` at a time: one uniform of 72 bits per group, inverted against
the group's joint cumulative distribution (a scalar discrete Laplace draw uses the interval
walk instead, ``tests/test_interval.py``). These tests check the thresholds against an
independent computation (mpmath at 200 digits), the joint outcomes against the exact pmf,
the resolution of ties, the fixed number of random bytes per small request, and that the
scalar float path gives :func:`add_to_floats`'s result bit for bit.

Statistical tests use fixed seeds and fail a correct sampler with probability at most 1e-6:
the chi-square threshold is the quantile at ``1 - 1e-6`` (asymptotic, bins expecting at
least 20 draws), the binomial tests are exact (two-sided p-value below 1e-6). Each has a
power check: the same test rejects a deliberately wrong variant.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpkit._samplers import bernoulli as bernoulli_module
from dpkit._samplers.base2 import CountingSource
from dpkit._samplers.bernoulli import (
    GROUP,
    GROUP_BITS,
    FixedColumns,
    _cdf_bounds,
    _finish_ties,
    fixed_below,
    fixed_plan,
    group_thresholds,
)
from dpkit._samplers.exact import Expansion, exp_neg_expansion, logistic_expansion
from dpkit._samplers.fixed_cost import _fixed_gaussian_setup
from dpkit._samplers.grid import add_to_floats, noisy_scalar, noisy_values, release_range
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.rng import seeded

ALPHA = 1e-6
mpmath.mp.dps = 200


def exact_pmf(ys: list[Fraction]) -> list[mpmath.mpf]:
    """The joint pmf of independent trials ``P[trial i] = 1/(1 + e**y_i)`` (outcome bit ``i``
    is trial ``i``), at 200 digits, independently of :func:`group_cdf`."""
    qs = [1 / (1 + mpmath.exp(mpmath.mpf(y.numerator) / y.denominator)) for y in ys]
    pmf = []
    for outcome in range(1 << len(qs)):
        p = mpmath.mpf(1)
        for i, q in enumerate(qs):
            p *= q if outcome >> i & 1 else 1 - q
        pmf.append(p)
    return pmf


@pytest.mark.parametrize("scale", [Fraction(5, 2), Fraction(2**21 + 2), Fraction(1, 3)])
def test_group_thresholds_are_the_exact_prefixes(scale: Fraction) -> None:
    """``T_j = floor(F_j·2**72)``, with ``F`` summed from an independent 200-digit pmf."""
    top = fixed_plan(scale)[0]
    ys = [Fraction(2**i) / scale for i in range(min(top, GROUP))]
    pmf = exact_pmf(ys)
    cdf = list(np.cumsum(pmf[:-1]))
    want = [int(mpmath.floor(f * 2**GROUP_BITS)) for f in cdf]
    assert group_thresholds(tuple(logistic_expansion(y) for y in ys)) == want


def test_a_table_of_thresholds_holds_each_group_in_a_row() -> None:
    """The Gaussian's three fields start groups of their own; padding never counts."""
    setup = _fixed_gaussian_setup(Fraction(9))
    columns = setup.columns
    assert sum(len(g) for g in columns.groups) == len(columns.expansions)
    assert columns.weights.shape == (len(columns.groups), 3)
    assert (columns.weights > 0).sum(axis=1).tolist() == [1] * len(columns.groups)
    for row, size in enumerate(columns.sizes):
        assert (columns.high[row, size:] == 2**64 - 1).all()
        assert (columns.low[row, size:] == 255).all()


def outcomes_of(columns: FixedColumns, draws: int, seed: int) -> np.ndarray:
    rng = seeded(seed)
    return np.concatenate([fixed_below(columns, 10_000, rng).sum(axis=2)[:, 0]
                           for _ in range(draws // 10_000)])


def chi_square_exceeds(outcomes: np.ndarray, pmf: list[mpmath.mpf]) -> bool:
    """Pearson's test on bins expecting >= 20 draws (the others merged): whether the
    statistic exceeds the chi-square quantile at 1 - 1e-6."""
    n = outcomes.size
    observed = np.bincount(outcomes, minlength=len(pmf)).astype(float)
    expected = np.array([float(p) for p in pmf]) * n
    keep = expected >= 20
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 20:                       # merge the rest into the smallest kept bin
        smallest = int(np.argmin(exp[:-1]))
        obs[smallest] += obs[-1]
        exp[smallest] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    statistic = float(((obs - exp) ** 2 / exp).sum())
    return statistic > stats.chi2.isf(ALPHA, obs.size - 1)


def test_grouped_outcomes_follow_the_exact_joint_distribution() -> None:
    """The eight lowest digits of a geometric of scale 5/2 (outcomes ``P ∝ p**o``, ``o <
    256``), 200,000 draws against the exact pmf. Power: thresholds built for scale 2.4."""
    ys = [Fraction(2**i) / Fraction(5, 2) for i in range(GROUP)]
    pmf = exact_pmf(ys)
    columns = FixedColumns([logistic_expansion(y) for y in ys])
    assert not chi_square_exceeds(outcomes_of(columns, 200_000, 41), pmf)
    wrong = FixedColumns([logistic_expansion(Fraction(2**i) / Fraction(12, 5))
                          for i in range(GROUP)])
    assert chi_square_exceeds(outcomes_of(wrong, 200_000, 42), pmf)


def test_tied_thresholds_share_the_uniform_they_continue() -> None:
    """Two thresholds with one 72-bit prefix (``F_0 = (1-t)(1-q)`` and ``F_1 = 1-q``, ``t =
    e**-56``): a tie continues the *same* uniform against both, so it lies between them
    (one counted) only with probability ``(F_1 - F_0)·2**72`` given the tie (about 0.0013).
    Exact binomial tests; power: fresh bytes per threshold put it between them about half
    of the time."""
    group = (exp_neg_expansion(Fraction(56)), logistic_expansion(Fraction(1, 3)))
    tied = [Expansion(functools.partial(_cdf_bounds, group, j)) for j in (0, 1)]
    prefixes = [t._prefix(GROUP_BITS) for t in tied]
    assert prefixes[0] == prefixes[1]
    low, high = (Fraction(t._prefix(400), 2**400) for t in tied)
    between = float((high - low) * 2**GROUP_BITS)
    above = float(1 - (high * 2**GROUP_BITS - prefixes[1]))   # P[U > F_1 | tie]
    rng = seeded(43)
    counts = np.array([_finish_ties(tied, GROUP_BITS // 8, rng) for _ in range(4000)])
    assert stats.binomtest(int((counts == 1).sum()), 4000, between).pvalue > ALPHA
    assert stats.binomtest(int((counts == 2).sum()), 4000, above).pvalue > ALPHA
    broken = np.array([sum(_finish_ties([t], GROUP_BITS // 8, rng) for t in tied)
                       for _ in range(4000)])
    assert stats.binomtest(int((broken == 1).sum()), 4000, between).pvalue < ALPHA


def read_bytes(draw, calls: int, seed: int) -> set[int]:
    rng = seeded(seed)
    used = set()
    for _ in range(calls):
        counter = CountingSource(rng)
        draw(counter)
        used.add(counter.count // 8)
    return used


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(5, 2), Fraction(2**21 + 2),
                                   Fraction(2**40 + 1, 3)])
def test_a_small_laplace_request_reads_64_bits_a_trial(scale: Fraction) -> None:
    """A request of three values reads 64 random bits a trial, ``8·(I + 1)`` bytes per
    geometric, whatever the noise (false failure: a tie or a tail, below 2**-60 over these
    draws); one value reads the interval walk's ``B`` bits instead (``tests/test_interval.py``)."""
    plan = fixed_plan(scale)
    assert read_bytes(lambda rng: discrete_laplace(scale, rng, size=3), 50, 45) == {
        6 * 8 * (plan[0] + 1)}


@pytest.mark.parametrize(("scale", "bits"), [(Fraction(1), 144), (Fraction(2**21 + 2), 576),
                                             (Fraction(2**53, 750), 1008)])
def test_two_grouped_geometrics_read_nine_bytes_a_group(scale: Fraction, bits: int) -> None:
    """Two rows of grouped trials (two geometric draws, as a scalar Laplace draw read them
    before the interval walk) read 9 bytes per group of 8 trials: 144, 576 and 1008 bits at
    scales 1, ``2**21 + 2`` and ``2**53/750`` (compared in ``dpkit._samplers.interval``)."""
    columns = fixed_plan(scale)[1]
    assert read_bytes(lambda rng: fixed_below(columns, 2, rng), 50, 44) == {bits // 8}


# ------------------------------------------------------------------ the scalar float path

def adversarial_values(k: int, rng: np.random.Generator) -> list[float]:
    """Values at every magnitude around the grid ``2**k``: ties, subnormals, ±0, the edges
    of the exact range (``2**(k + 52)``), the largest floats."""
    step = 2.0**k
    fixed = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, step / 2, -step / 2,
             1.5 * step, 2.5 * step, step * 2**51 + step / 2, step * 2**52 - step,
             step * 2**52, step * 2**53 + 2 * step, 1.7976931348623157e308 / 4]
    random = (rng.standard_normal(200) * 2.0 ** rng.integers(-60, 80, 200)).tolist()
    return [v for v in fixed + random if abs(v) <= 1e307]


def mismatches(release, k: int) -> list[tuple[float, int]]:
    """The (value, noise) pairs where ``release`` differs from :func:`add_to_floats`."""
    span = release_range(k, Fraction(2) ** (k + 40))        # noise of 2**40 units at most
    assert span.floats
    generator = np.random.default_rng(48)
    wrong = []
    for value in adversarial_values(k, generator):
        for noise in (0, 1, -1, 2**52 - 1, -(2**52 - 1)):
            want = add_to_floats(np.array([value]), k, np.array([noise]))[0]
            got = release(value, span, lambda n, z=noise: np.array([z]), dict)
            if np.float64(got).view(np.int64) != want.view(np.int64):
                wrong.append((value, noise))
    return wrong


def half_up(value: float, span, draw, words) -> float:
    """A broken variant: rounds half away from zero instead of half to even."""
    step = 2.0**span.k
    units = math.floor(abs(value) / step + 0.5) if abs(value) < step * 2**52 else None
    on_grid = value if units is None else math.copysign(units * step, value)
    return on_grid + float(draw(1)[0]) * step


@pytest.mark.parametrize("k", [-20, -1, 0, 7, -1021, 900])
def test_the_scalar_float_path_is_add_to_floats_bit_for_bit(k: int) -> None:
    """Deterministic: every value and noise (0, ±1, ±(2**52 - 1)) gives the same float, to
    the bit, as :func:`add_to_floats` (which ``tests/test_grid.py`` checks against exact
    arithmetic). Power: rounding half away from zero differs on the ties."""
    assert mismatches(noisy_scalar, k) == []
    assert mismatches(half_up, k)


def test_the_scalar_path_refuses_what_the_array_path_refuses() -> None:
    span = release_range(0, Fraction(2**1020))
    words = lambda: {"value": 1.0, "noise": "n", "bound": "b"}  # noqa: E731
    for release in (lambda: noisy_scalar(1.7e308, span, lambda n: np.array([0]), words),
                    lambda: noisy_values(np.array([1.7e308]), span,
                                         lambda n: np.zeros(n, np.int64), words)):
        with pytest.raises(ValueError, match="too close to the float range"):
            release()
    assert noisy_scalar(2.0**1020, span, lambda n: np.array([0]), words) == 2.0**1020


def test_scalar_tails_finish_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the digits covering only ``[0, scale)`` (tail factor 1), a tail trial is set in
    about a third of the scalar draws: the interval walks then hand their trials to the exact
    tail loop (Laplace) or to the exact tail and acceptance of that round (Gaussian,
    :func:`dpkit._samplers.interval_gaussian.interval_gaussian`). Chi-square against the exact
    distributions (p-value above 1e-7, as in ``tests/test_sampling.py``); power: the same
    test rejects a scale 10% larger."""
    from test_sampling import edges_for, gaussian_cdf, laplace_cdf  # tests/ is on sys.path

    from dpkit._samplers import fixed_cost
    from dpkit._samplers.interval import interval_plan
    from dpkit._samplers.interval_gaussian import gaussian_plan
    from dpkit.audit import binned_chi_square

    monkeypatch.setattr(bernoulli_module, "_FIXED_TAIL_FACTOR", 1)
    caches = (fixed_plan, fixed_cost._fixed_gaussian_columns, _fixed_gaussian_setup,
              interval_plan, gaussian_plan)
    for cache in caches:
        cache.cache_clear()
    try:
        rng = seeded(49)
        laplace = np.array([discrete_laplace(Fraction(5), rng) for _ in range(20_000)])
        assert np.abs(laplace).max() > 8 * 5
        assert binned_chi_square(laplace, laplace_cdf(5.0), edges_for(5.0)) > 1e-7
        assert binned_chi_square(laplace, laplace_cdf(5.5), edges_for(5.0)) < 1e-7
        gauss = np.array([discrete_gaussian(Fraction(9), rng) for _ in range(10_000)])
        assert binned_chi_square(gauss, gaussian_cdf(9.0), edges_for(3.0, width=5)) > 1e-7
        assert binned_chi_square(gauss, gaussian_cdf(10.9), edges_for(3.0, width=5)) < 1e-7
    finally:
        for cache in caches:
            cache.cache_clear()
