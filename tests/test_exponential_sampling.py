"""Tests of the samplers behind the base-2 exponential mechanism (dpkit._samplers.base2).

The fast sampler decides with rigorous floating-point bounds and falls back to MPFR and
then exact arithmetic; these tests check the bounds against exact values, force every
fallback level, and compare each level's output distribution with the exact one.

Statistical tests reject when a p-value is below 1e-7, so each fails a correct sampler with
probability ≤ 1e-7; there are 8 of them here, ≤ 8e-7 < 1e-6 in all (union bound).
"""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from scipy import stats

from dpkit._samplers import base2 as sampling
from dpkit.exponential import Eta, base2_exponential_mechanism, probabilities
from dpkit.rng import RandomSource, seeded

ALPHA = 1e-7


def exact_weights(k: np.ndarray, x: int, y: int) -> list[Fraction]:
    base = Fraction(x, 2 ** y)
    return [base ** int(v) for v in k]


def cumulative_sums(weights: list[Fraction]) -> list[Fraction]:
    return list(itertools.accumulate(weights))


def exact_index(cumulative: list[Fraction], v: Fraction, *, strict: bool = False) -> int:
    """#{j : C_j ≤ v·T} (or < with strict): the outcome for the uniform point v."""
    target = v * cumulative[-1]
    return (bisect.bisect_left if strict else bisect.bisect_right)(cumulative, target)


# --------------------------------------------------------------------------------------
# Level 0: rigorous double bounds


@pytest.mark.parametrize("x, y", [(1, 1), (3, 2), (1243, 11), (2**31 - 1, 31), (657, 31)])
def test_weight_bounds_bracket_exact_powers(x: int, y: int) -> None:
    rng = np.random.default_rng(x)
    small = np.concatenate([np.arange(40), rng.integers(0, 3000, 60)]).astype(np.int64)
    lo, hi = sampling.weight_bounds(small, x, y)
    for k, a, b in zip(small, lo, hi, strict=True):
        w = Fraction(x, 2 ** y) ** int(k)
        assert Fraction(a) <= w <= Fraction(b)
        assert b == 0 or (b - a) <= 1e-14 * b or b < 1e-300      # and they are tight
    huge = np.concatenate([rng.integers(0, 2**40, 50), [2**53 - 1, 2**20, 2**30 + 7]])
    lo, hi = sampling.weight_bounds(huge.astype(np.int64), x, y)
    base = sampling.exact_base(x, y)
    for k, a, b in zip(huge, lo, hi, strict=True):
        with sampling.directed_context(300, gmpy2.RoundDown):
            below = base ** int(k)
        with sampling.directed_context(300, gmpy2.RoundUp):
            above = base ** int(k)
        assert a <= below and above <= b


def test_weight_bounds_multiply_every_public_chunk() -> None:
    """With the tables of a public span (F4: built before the clock), every chunk is
    multiplied in whatever the exponents; the bounds still bracket the exact powers, and an
    exponent beyond the tables is refused rather than bounded wrongly."""
    x, y = 1243, 11
    tables = sampling.PowerTables(None, sampling._chunk_tables(x, y, 2**53 - 1))
    assert len(tables.chunks) == 6
    k = np.array([0, 1, 7, 1023, 1024, 5000, 2**20 + 3], dtype=np.int64)
    lo, hi = sampling.weight_bounds(k, x, y, tables)
    for power, a, b in zip(k, lo, hi, strict=True):
        w = Fraction(x, 2**y) ** int(power)
        assert Fraction(a) <= w <= Fraction(b)
    narrow = sampling.PowerTables(None, sampling._chunk_tables(x, y, 1023))
    with pytest.raises(ValueError, match="needs more than the 1 chunk tables"):
        sampling.weight_bounds(k, x, y, narrow)


@pytest.mark.parametrize("k, x, y", [
    (np.arange(300), 1243, 11),                         # u(o) = o, geometric weights
    (np.array([0, 1, 1, 2, 5, 0, 3] * 20), 3, 2),
    (np.zeros(500, dtype=np.int64), 1, 1),              # uniform: boundaries at j/n
    (np.array([0, 60, 61, 1, 2000, 0]), 1, 1),          # absorbed and underflowing weights
])
def test_float_bracket_contains_the_exact_outcome(k, x, y) -> None:
    k = np.asarray(k, dtype=np.int64)
    cumulative = cumulative_sums(exact_weights(k, x, y))
    # Adversarial points: next to every cumulative boundary, plus random ones.
    points = set()
    for c in cumulative:
        centre = int(c / cumulative[-1] * 2**53)
        points.update(p for p in (centre - 1, centre, centre + 1) if 0 <= p < 2**53)
    random_points = {int(p) for p in np.random.default_rng(1).integers(0, 2**53, 200)}
    ambiguous = 0
    for point in sorted(points | random_points):
        first, last = sampling._float_level(k, x, y, point)
        low = exact_index(cumulative, Fraction(point, 2**53))
        high = exact_index(cumulative, Fraction(point + 1, 2**53), strict=True)
        assert first <= low and high <= last, (point, first, last, low, high)
        ambiguous += point in random_points and first != last
    assert ambiguous == 0       # the bounds are tight: random points are decided at once


# --------------------------------------------------------------------------------------
# Forcing every level: the output distribution stays exact

K = np.array([0, 1, 1, 2, 5, 0, 3, 9], dtype=np.int64)
X, Y = 3, 2
#: Level 0's tables without level 1's: the draws level 0 leaves go to the MPFR levels.
NO_LEVEL_1 = sampling.PowerTables(sampling.power_tables(X, Y, 9).direct, ())


def _pvalue(samples: list[int]) -> float:
    expected = np.array([float(w) for w in exact_weights(K, X, Y)])
    expected = expected / expected.sum() * len(samples)
    counts = np.bincount(samples, minlength=K.size)
    big = expected >= 5
    assert big.all() and counts.size == K.size
    return float(stats.chisquare(counts, expected).pvalue)


@pytest.mark.parametrize("options", [
    dict(),                                         # level 0 decides (almost always)
    dict(start="mp"),                               # MPFR levels from the start
    dict(start="exact"),                            # exact level from the start
    dict(float_slack=0.5),                          # level 0 always hands over (to level 1)
    dict(float_slack=0.5, tables=NO_LEVEL_1),       # level 0 hands over to MPFR
    dict(start="mp", mp_precisions=(2, 3)),         # coarse MPFR levels: often ambiguous
    dict(float_slack=0.5, mp_precisions=(2,), tables=NO_LEVEL_1),  # float → MPFR → exact
], ids=["float", "mp", "exact", "float-to-fixed", "float-to-mp", "coarse-mp", "float-mp-exact"])
def test_every_level_samples_the_exact_distribution(options: dict) -> None:
    rng = seeded(20 + len(options) * 7 + len(str(options)))
    draws = 10000 if len(options) < 2 else 4000      # the coarse levels are slower
    samples = [sampling.fast_sample(K, X, Y, rng, precision=200, **options)
               for _ in range(draws)]
    assert _pvalue(samples) > ALPHA


def test_levels_agree_draw_by_draw() -> None:
    # The outcome is a function of the lazily drawn uniform V only: with the same random
    # stream, levels that draw V's bits in the same order return the same outcomes.
    def run(**options):
        rng = seeded(9)
        return [sampling.fast_sample(K, X, Y, rng, precision=200, **options)
                for _ in range(1500)]

    assert run() == run(start="exact")                 # 53 bits decide in both
    assert run(start="mp") == run(float_slack=0.5)     # both extend V to 320 bits first


def test_exact_level_is_reached_and_raises_on_low_precision() -> None:
    calls = []

    def precision() -> int:
        calls.append(1)
        return 4

    with pytest.raises(sampling.InexactArithmeticError):
        sampling.fast_sample(K, X, Y, seeded(0), precision=precision, start="exact")
    assert calls == [1]
    # On the fast path the precision callback is never needed.
    sampling.fast_sample(K, X, Y, seeded(0), precision=precision)
    assert calls == [1]


def test_full_precision_matches_fast_distribution_on_large_range() -> None:
    # u(o) = o for 400 outcomes with a small η: weights spread over 400 levels.
    eta = Eta.from_epsilon(0.05)
    utilities = np.arange(400.0)
    expected = probabilities(utilities, eta)
    for method, seed in (("fast", 31), ("full", 32)):
        rng = seeded(seed)
        samples = [base2_exponential_mechanism(utilities, eta, utility_min=0,
                                               utility_max=400, rng=rng, method=method)
                   for _ in range(1500 if method == "full" else 6000)]
        deciles = np.searchsorted(np.cumsum([float(p) for p in expected]),
                                  np.linspace(0.1, 0.9, 9))
        bins = np.searchsorted(deciles, samples, side="left")     # bin 0: s ≤ deciles[0]
        mass = np.diff([0, *np.cumsum([float(p) for p in expected])[deciles], 1])
        observed = np.bincount(bins, minlength=10)
        assert stats.chisquare(observed, mass * len(samples)).pvalue > ALPHA


def test_large_outcome_space_is_fast_and_sane() -> None:
    # 10**6 outcomes, u(o) = o, ε = 1: P(index ≥ 40) = b**40 < 1e-12.
    eta = Eta.from_epsilon(1.0)
    utilities = np.arange(1_000_000, dtype=float)
    rng = seeded(5)
    draws = [base2_exponential_mechanism(utilities, eta, utility_min=0, utility_max=10**6,
                                         rng=rng) for _ in range(3)]
    assert all(0 <= d < 40 for d in draws)


# --------------------------------------------------------------------------------------
# Randomized rounding with random bits


class _Scripted(RandomSource):
    """A source whose uint64 draws are scripted (to force the 64-bit tie)."""

    def __init__(self, words: list[int], inner: RandomSource) -> None:
        super().__init__()
        self.words, self.inner = words, inner

    def bytes(self, n: int) -> bytes:
        return self.inner.bytes(n)

    def uint64(self, size):  # type: ignore[override]
        return np.array(self.words[:size], dtype=np.uint64)


def test_bernoulli_dyadic_resolves_ties_exactly() -> None:
    f = 2.0**-20 + 2.0**-70                     # a double with bits beyond the first 64
    threshold = 1 << 44                         # its first 64 bits
    hits = 0
    inner = seeded(1)
    for _ in range(4000):   # tie on the first 64 bits: up with probability 2**-6 exactly
        hits += bool(sampling.bernoulli_dyadic(np.array([f]), _Scripted([threshold], inner))[0])
    assert stats.binomtest(hits, 4000, 2.0**-6).pvalue > ALPHA
    below = sampling.bernoulli_dyadic(np.array([f, 0.25]), _Scripted([threshold - 1, 2**62],
                                                                      inner))
    assert below.tolist() == [True, False]      # 64 bits decide: U < f, then U = f exactly
    assert sampling.bernoulli_dyadic(np.array([0.25]), _Scripted([2**62 - 1], inner))[0]


def test_bernoulli_dyadic_frequency() -> None:
    f = np.full(20000, 0.3)
    hits = int(sampling.bernoulli_dyadic(f, seeded(8)).sum())
    assert stats.binomtest(hits, 20000, 0.3).pvalue > ALPHA


def test_handover_probability_is_small_and_grows_with_n() -> None:
    x, y = Eta.from_epsilon(1.0).reduced()
    assert sampling.handover_probability(np.array([0]), x, y) == 0.0
    small = sampling.handover_probability(np.arange(1000, dtype=np.int64), x, y)
    large = sampling.handover_probability(np.arange(100_000, dtype=np.int64), x, y)
    assert 0 < small < large < 1e-6
    # Uniform weights put n boundaries at j/n, each with its own bracket: the worst case.
    uniform = sampling.handover_probability(np.zeros(1000, dtype=np.int64), x, y)
    assert small < uniform < 1e-6
