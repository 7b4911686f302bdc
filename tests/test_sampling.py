"""Tests of the exact samplers and grid helpers in :mod:`dpkit._samplers`.

Statistical tests use fixed seeds and fail only when a chi-square or binomial p-value is
below ``ALPHA = 1e-7``: under a correct sampler that happens with probability 1e-7 per test
(the p-value is uniform under the null hypothesis; chi-square asymptotically), well under the
1e-6 budget. Each family has a power check showing the same test rejects a slightly wrong
distribution.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

import dpkit._warming
import dpkit.gaussian
import dpkit.laplace
import dpkit.timing
from dpkit._samplers import bernoulli as bernoulli_module
from dpkit._samplers import noise as noise_module
from dpkit._samplers.bernoulli import (
    _Columns,
    _finish_ties,
    bernoulli_exp,
    bernoulli_matrix,
    fixed_plan,
)
from dpkit._samplers.exact import (
    Expansion,
    as_int_array,
    exp_neg_bounds,
    exp_neg_expansion,
    floor_sqrt,
    logistic_expansion,
)
from dpkit._samplers.fixed_cost import (
    _exceeds_exact_all,
    _fixed_gaussian_columns,
    _fixed_gaussian_setup,
    _gamma_bracket,
    _gamma_constants,
    _gaussian_gamma,
)
from dpkit._samplers.grid import (
    GRID_BITS,
    _round_units,
    _units_to_float,
    add_units,
    exact_path,
    from_grid,
    grid_exponent,
    grid_sensitivity,
    to_grid,
)
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.audit import binned_chi_square
from dpkit.naive.laplace import cks_discrete_laplace
from dpkit.rng import RandomSource, seeded

ALPHA = 1e-7


def laplace_cdf(scale: float):
    """CDF of the discrete Laplace ``P[x] ∝ exp(-|x|/scale)`` at real points."""
    p = math.exp(-1.0 / scale)

    def cdf(x: np.ndarray) -> np.ndarray:
        k = np.floor(x)
        upper = 1.0 - p ** (k + 1) / (1.0 + p)
        lower = p ** (-k) / (1.0 + p)
        return np.where(k >= 0, upper, lower)

    return cdf


def gaussian_cdf(sigma2: float, half_width: int = 4000):
    """CDF of the discrete Gaussian: exact sums for small σ², normal CDF for large σ².

    For σ >= 100 the discrete Gaussian's CDF at half-integers differs from the normal CDF by
    less than exp(-2π²σ²) (Poisson summation), far below anything a test can see.
    """
    sigma = math.sqrt(sigma2)
    if sigma >= 100:
        return lambda x: stats.norm.cdf(np.floor(x) + 0.5, scale=sigma)
    support = np.arange(-half_width, half_width + 1)
    weights = np.exp(-support.astype(float) ** 2 / (2 * sigma2))
    cumulative = np.cumsum(weights) / weights.sum()
    return lambda x: np.interp(np.floor(x), support, cumulative, left=0.0, right=1.0)


def edges_for(scale: float, width: int = 9) -> np.ndarray:
    """Half-integer cut points covering ±width·scale (the test merges thin bins)."""
    step = max(1, int(scale // 8))
    reach = int(width * scale) + 2
    return np.arange(-reach, reach + step, step) + 0.5


# ----------------------------------------------------------------------- bernoulli_exp

@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_frequency(gamma: Fraction) -> None:
    rng = seeded(11)
    n = 20_000
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(n))
    p = math.exp(-gamma)
    if gamma == 0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > ALPHA


def test_bernoulli_exp_power() -> None:
    rng = seeded(12)
    n = 20_000
    hits = sum(bernoulli_exp(Fraction(1, 3), rng) for _ in range(n))
    assert stats.binomtest(hits, n, math.exp(-0.36)).pvalue < ALPHA


# -------------------------------------------------------------------- discrete Laplace

def test_discrete_laplace_one_at_a_time() -> None:
    rng = seeded(21)
    scale = Fraction(3, 2)
    samples = np.array([discrete_laplace(scale, rng) for _ in range(20_000)])
    assert binned_chi_square(samples, laplace_cdf(1.5), edges_for(1.5)) > ALPHA


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3), Fraction(2001, 2),
                                   Fraction(3001, 2), Fraction(2**20 + 1, 7)])
def test_discrete_laplace_vector(scale: Fraction) -> None:
    rng = seeded(22)
    samples = discrete_laplace(scale, rng, size=200_000)
    assert samples.dtype == np.int64 and samples.shape == (200_000,)
    assert binned_chi_square(samples, laplace_cdf(float(scale)), edges_for(float(scale))) > ALPHA


def test_discrete_laplace_power() -> None:
    rng = seeded(23)
    samples = discrete_laplace(Fraction(3), rng, size=200_000)
    assert binned_chi_square(samples, laplace_cdf(3.1), edges_for(3.1)) < ALPHA


def test_discrete_laplace_shapes_and_reproducibility() -> None:
    a = discrete_laplace(Fraction(2), seeded(3), size=(4, 5))
    b = discrete_laplace(Fraction(2), seeded(3), size=(4, 5))
    assert a.shape == (4, 5)
    np.testing.assert_array_equal(a, b)
    assert isinstance(discrete_laplace(2, seeded(3)), int)
    assert discrete_laplace(Fraction(2), seeded(3), size=0).shape == (0,)


def test_discrete_laplace_huge_scale_exact_path() -> None:
    values = discrete_laplace(Fraction(2**60), seeded(4), size=3)
    assert values.shape == (3,)
    assert all(abs(int(v)) < 2**70 for v in values)


# ------------------------------------------------------------------- discrete Gaussian

def test_discrete_gaussian_one_at_a_time() -> None:
    rng = seeded(31)
    samples = np.array([discrete_gaussian(Fraction(2), rng) for _ in range(10_000)])
    assert binned_chi_square(samples, gaussian_cdf(2.0), edges_for(1.5, 8)) > ALPHA


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(9), Fraction(123456, 10),
                                    Fraction(2**40 + 3, 3)])
def test_discrete_gaussian_vector(sigma2: Fraction) -> None:
    rng = seeded(32)
    samples = discrete_gaussian(sigma2, rng, size=100_000)
    sigma = math.sqrt(sigma2)
    assert binned_chi_square(samples, gaussian_cdf(float(sigma2)), edges_for(sigma, 7)) > ALPHA


def test_discrete_gaussian_power() -> None:
    rng = seeded(33)
    samples = discrete_gaussian(Fraction(9), rng, size=100_000)
    assert binned_chi_square(samples, gaussian_cdf(9.4), edges_for(3.0, 7)) < ALPHA


# ------------------------------------------------------------- exactness of the internals

@pytest.mark.parametrize("y", [Fraction(1, 3), Fraction(2), Fraction(1, 2**10),
                               Fraction(2**19, 1048577)])
def test_expansions_match_high_precision(y: Fraction) -> None:
    mpmath.mp.prec = 400
    logistic = 1 / (1 + mpmath.exp(mpmath.mpf(y.numerator) / y.denominator))
    exp_neg = mpmath.exp(-mpmath.mpf(y.numerator) / y.denominator)
    for value, expansion in [(logistic, logistic_expansion(y)),
                             (exp_neg, exp_neg_expansion(y))]:
        prefix = int(mpmath.floor(value * mpmath.mpf(2) ** 160))
        digits = [(prefix >> (8 * (19 - j))) & 0xFF for j in range(20)]
        assert [expansion.byte(j) for j in range(20)] == digits


def test_bernoulli_matrix_frequencies() -> None:
    """Each column is Bernoulli(q) for its own q (ties resolved with further bytes)."""
    ys = [Fraction(1, 5), Fraction(3), Fraction(1, 1000)]
    expansions = [exp_neg_expansion(y) for y in ys]
    bits = bernoulli_matrix(expansions, 100_000, seeded(41))
    for column, y in enumerate(ys):
        hits = int(bits[:, column].sum())
        assert stats.binomtest(hits, 100_000, math.exp(-y)).pvalue > ALPHA


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-(2**52), 2**52), min_size=1, max_size=20),
       st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(10**9)))
def test_gamma_bracket_encloses_exact_value(ys: list[int], sigma2: Fraction) -> None:
    t = floor_sqrt(sigma2) + 1
    lo, hi = _gamma_bracket(np.array(ys, dtype=np.int64), _gamma_constants(sigma2, t))
    for y, a, b in zip(ys, lo, hi, strict=True):
        exact = _gaussian_gamma(y, sigma2, t)
        assert Fraction(float(a)) <= exact <= Fraction(float(b))


# ------------------------------------------------------------------------------ grid

@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(-1100, 1100))
def test_to_grid_is_exact_rounding(value: float, k: int) -> None:
    units = to_grid(np.array([value]), k)[0]
    exact = Fraction(value) / Fraction(2) ** k
    assert int(units) == round(exact)          # Python rounds Fractions half to even


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**80), 2**80), st.integers(-1000, 900))
def test_from_grid_is_nearest_float(units: int, k: int) -> None:
    array = as_int_array([units], (1,))
    result = from_grid(array, k)[0]
    assert result == float(Fraction(units) * Fraction(2) ** k)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1e6), st.integers(1, 50), st.sampled_from([1, 2]),
       st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=50), st.data())
def test_rounded_query_respects_widened_sensitivity(sensitivity: float, count: int, norm: int,
                                                    base: list[float], data) -> None:
    x = np.resize(np.array(base), count)
    direction = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=count,
                                            max_size=count)))
    size = np.linalg.norm(direction, ord=norm)
    if size == 0:
        return
    shift = direction / size * sensitivity * 0.999999   # ||shift|| <= sensitivity
    k = grid_exponent(sensitivity, count, norm=norm)
    bound = grid_sensitivity(sensitivity, k, count, norm=norm)
    y = x + shift                                       # float rounding may lengthen it:
    exact = [Fraction(v) - Fraction(u) for u, v in zip(x, y, strict=True)]
    length = (sum(abs(e) for e in exact) if norm == 1
              else math.sqrt(sum(e * e for e in exact)))
    assume(length <= sensitivity * (1 - 1e-9))          # keep true neighbours only
    a = to_grid(x, k)
    b = to_grid(y, k)
    moved = Fraction(sum(abs(int(i) - int(j)) for i, j in zip(a, b, strict=True)))
    if norm == 2:
        squared = sum((int(i) - int(j)) ** 2 for i, j in zip(a, b, strict=True))
        assert squared <= bound**2
    else:
        assert moved <= bound
    widening = count if norm == 1 else math.sqrt(count)
    assert widening * 2.0**k <= sensitivity * 2.0**-GRID_BITS
    assert widening * 2.0 ** (k + 1) > sensitivity * 2.0**-GRID_BITS * (1 - 1e-9)


def test_grid_sensitivity_values() -> None:
    assert grid_sensitivity(1, -3) == 9             # floor(8) + 1
    assert grid_sensitivity(1.1, -1, 3) == 2 + 3
    assert grid_sensitivity(1, 0, 4, norm=2) == 3   # 1 + sqrt(4)
    assert grid_exponent(1) == -20
    assert grid_exponent(3, 4, norm=2) == -20        # log2(3/2) = 0.58


# ------------------------------------------------------------------------- validation

BAD_REALS = [0, -1, -0.5, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("bad", BAD_REALS)
def test_bad_parameters_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace(bad, seeded(0))
    with pytest.raises(ValueError, match="sigma2"):
        discrete_gaussian(bad, seeded(0))
    if bad != 0:
        with pytest.raises(ValueError, match="gamma"):
            bernoulli_exp(bad, seeded(0))


@given(st.one_of(st.text(), st.none(), st.booleans(), st.complex_numbers()))
def test_bad_types_are_refused(bad) -> None:
    with pytest.raises(TypeError):
        discrete_laplace(bad, seeded(0))
    with pytest.raises(TypeError):
        discrete_gaussian(bad, seeded(0))


def test_bad_rng_and_size() -> None:
    with pytest.raises(TypeError, match="rng"):
        discrete_laplace(1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        discrete_gaussian(1, None)
    with pytest.raises(ValueError, match="size"):
        discrete_laplace(1, seeded(0), size=-1)
    with pytest.raises(TypeError, match="size"):
        discrete_gaussian(1, seeded(0), size=2.5)
    with pytest.raises(ValueError, match="norm"):
        grid_exponent(1, norm=3)


# ------------------------------------------------------- fixed cost: timing independence

class CountingSource(RandomSource):
    """A seeded stream that counts the random bits it hands out (pooled bits not yet used
    excluded)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.inner = seeded(seed)
        self.count = 0

    def bytes(self, n: int) -> bytes:
        self.count += n
        return self.inner.bytes(n)

    def consumed(self) -> int:
        return 8 * self.count - self._pool_bits


def bytes_and_noise(sample, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random bits used by each of ``n`` calls of ``sample(rng)`` and the value each returned."""
    source = CountingSource(seed)
    used, values = np.empty(n), np.empty(n)
    for i in range(n):
        before = source.consumed()
        values[i] = sample(source)
        used[i] = source.consumed() - before
    return used, values


def independence_p_value(used: np.ndarray, values: np.ndarray) -> float:
    """Fisher's exact test of "more bits than the least" against "|value| above its median".

    Exact under independence (conditional on the margins), whatever the distributions.
    """
    more = used > used.min()
    large = np.abs(values) > np.median(np.abs(values))
    table = [[int(np.sum(more & large)), int(np.sum(more & ~large))],
             [int(np.sum(~more & large)), int(np.sum(~more & ~large))]]
    return stats.fisher_exact(table).pvalue


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3), Fraction(2**20 + 1, 7),
                                   Fraction(2**53 + 1, 3)])
def test_scalar_laplace_draws_the_same_bytes_whatever_the_noise(scale: Fraction) -> None:
    """Every scalar draw uses exactly the same number of random bits.

    False failure: only a 64-bit tie (2**-64 per trial) or a tail event (e**-64 per draw)
    changes the count: below 1e-13 over these 3000 draws.
    """
    used, values = bytes_and_noise(lambda rng: discrete_laplace(scale, rng), 3000, 31)
    assert np.unique(used).size == 1
    assert np.unique(values).size > 2


def test_one_at_a_time_sampler_fails_the_same_check() -> None:
    """Power: dpkit's former scalar sampler uses more random bits for larger noise."""
    used, values = bytes_and_noise(lambda rng: cks_discrete_laplace(Fraction(3), rng), 3000, 32)
    assert np.unique(used).size > 1
    assert independence_p_value(used, values) < 1e-7


def test_scalar_gaussian_rounds_are_independent_of_the_noise() -> None:
    """The bits a scalar Gaussian draw uses (its number of rounds) carry no information.

    Fisher's exact test is exact under independence: false failure <= 1e-7.
    """
    sigma2 = Fraction(1, 20)                    # low acceptance: second rounds are common
    used, values = bytes_and_noise(lambda rng: discrete_gaussian(sigma2, rng), 12000,
                                   33)
    assert np.unique(used).size > 1
    assert independence_p_value(used, values) > 1e-7


def test_small_requests_take_the_fixed_cost_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The releases' own draws, not their warm-ups: those release 65 values too (a first
    warm-up in this process, or a re-warm after a pause of 10 ms), so they run first and
    no re-warm runs meanwhile (the test failed when run alone, and could under load)."""
    def refuse(*args):
        raise AssertionError("vectorised path used for a small request")

    dpkit.timing.warm_up()
    monkeypatch.setattr(dpkit._warming, "cold", lambda work: False)
    monkeypatch.setattr(noise_module, "_in_blocks", refuse)
    rng = seeded(34)
    dpkit.laplace.laplace_mechanism(1.0, 1.0, 1.0, rng=rng)
    dpkit.laplace.laplace_mechanism(np.zeros(64), 1.0, 1.0, rng=rng)
    dpkit.gaussian.gaussian_mechanism(1.0, 1.0, 1.0, 1e-6, rng=rng)
    discrete_gaussian(Fraction(9), rng, size=(8, 8))
    with pytest.raises(AssertionError):
        discrete_laplace(Fraction(9), rng, size=65)


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(5, 2), Fraction(2**20 + 1, 7)])
def test_fixed_cost_laplace_distribution(scale: Fraction) -> None:
    rng = seeded(35)
    samples = np.concatenate([discrete_laplace(scale, rng, size=64)
                              for _ in range(1000)])
    assert binned_chi_square(samples, laplace_cdf(float(scale)), edges_for(float(scale))) > ALPHA


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(9), Fraction(123456, 10)])
def test_fixed_cost_gaussian_distribution(sigma2: Fraction) -> None:
    rng = seeded(36)
    samples = np.concatenate([discrete_gaussian(sigma2, rng, size=64)
                              for _ in range(400)])
    sigma = math.sqrt(sigma2)
    assert binned_chi_square(samples, gaussian_cdf(float(sigma2)),
                             edges_for(sigma, width=5)) > ALPHA


def test_fixed_cost_gaussian_power() -> None:
    rng = seeded(37)
    samples = np.concatenate([discrete_gaussian(Fraction(9), rng, size=64)
                              for _ in range(400)])
    assert binned_chi_square(samples, gaussian_cdf(10.0), edges_for(3.0, width=5)) < ALPHA


def test_fixed_cost_rare_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tails, ties and exact acceptance: force them often and check the distribution."""
    monkeypatch.setattr(bernoulli_module, "_FIXED_TAIL_FACTOR", 1)
    caches = (fixed_plan, _fixed_gaussian_columns,
              _fixed_gaussian_setup)
    for cache in caches:
        cache.cache_clear()
    try:
        rng = seeded(38)
        samples = np.concatenate([discrete_laplace(Fraction(5), rng, size=64)
                                  for _ in range(600)])
        assert np.abs(samples).max() > 8 * 5
        assert binned_chi_square(samples, laplace_cdf(5.0), edges_for(5.0)) > ALPHA
        gauss = np.concatenate([discrete_gaussian(Fraction(9), rng, size=64)
                                for _ in range(300)])   # tails in most rounds: exact path
        assert binned_chi_square(gauss, gaussian_cdf(9.0), edges_for(3.0, width=5)) > ALPHA
        # Given a 64-bit tie, U < q iff the rest of U is below the rest of q (uniform on
        # [0, 1)): probability frac(q·2**64), computed from the expansion.
        q = logistic_expansion(Fraction(1, 3))
        hits = [_finish_ties([q], 8, rng) == 0 for _ in range(4000)]
        rest = float(Fraction(q._prefix(128) % 2**64, 2**64))
        assert stats.binomtest(sum(hits), 4000, rest).pvalue > ALPHA
        # The exact fallback of the Gaussian acceptance: with every digit of E zero,
        # E < 2**-40 < γ (rejected); with E >= 128 (tail digit set), E > γ (accepted).
        y = np.array([0, 3, -7] * 5, dtype=object)
        digits = np.zeros((15, 48), dtype=bool)
        assert not _exceeds_exact_all(y, digits, 7, Fraction(9), 4, rng).any()
        digits[:, 7] = True
        assert _exceeds_exact_all(y, digits, 7, Fraction(9), 4, rng).all()
    finally:
        for cache in caches:
            cache.cache_clear()


def _fresh_columns() -> _Columns:
    return _Columns([Expansion(functools.partial(exp_neg_bounds,
                                                                    Fraction(k, 7)))
                              for k in range(1, 9)])


def test_columns_levels_thread_safe() -> None:
    """Threads filling one shared column cache get the levels a single thread computes.

    Deterministic check (no statistics): with a 1 µs switch interval the unlocked
    check-then-append appended some levels twice in every run tried, shifting later levels.
    """
    depth = 40
    want = _fresh_columns()
    expected = [want.level(j).copy() for j in range(depth)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(5):
            shared = _fresh_columns()
            barrier = threading.Barrier(8)

            def work(cols: _Columns = shared, gate: threading.Barrier = barrier) -> None:
                gate.wait()
                for j in range(depth):
                    cols.level(j)

            threads = [threading.Thread(target=work) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(shared._levels) == depth
            for j in range(depth):
                np.testing.assert_array_equal(shared.level(j), expected[j])
    finally:
        sys.setswitchinterval(old)


@pytest.mark.parametrize("big", [2.0**21, 2.0**61, 2.0**100, 1e308])
def test_grid_path_depends_on_the_size_only(big: float) -> None:
    # Break 1: the int64 / Python-int switch depended on the values, so neighbours one
    # sensitivity apart could take paths of different speed. Up to 64 values the path is
    # the exact one whatever the magnitudes.
    k = -40
    for values in (np.array([1.0, -2.5]), np.array([big, -big]),
                   np.array([Fraction(2**80 + 1), 0.5], dtype=object)):
        units = to_grid(values, k)
        assert units.dtype == object and all(type(u) is int for u in units)
        assert units.tolist() == [round(Fraction(v) / Fraction(2) ** k) for v in values]
        noise = np.array([3, -(2**40)], dtype=np.int64)
        total = add_units(units, noise)
        assert total.dtype == object
        assert total.tolist() == [u + int(n) for u, n in zip(units, noise, strict=True)]
        released = from_grid(total, k)
        assert released.tolist() == [float(Fraction(t) * Fraction(2) ** k) for t in total]
    assert exact_path(64) and not exact_path(65)


def test_round_units_ties_to_even() -> None:
    assert [_round_units(Fraction(x, 2), 0) for x in (-3, -1, 1, 3, 5)] \
        == [-2, 0, 0, 2, 2]
    assert _round_units(0.75, -1) == 2 and _round_units(-2.5, -1) == -5
    assert _round_units(6.0, 2) == 2 and _round_units(10.0, 2) == 2
    assert _units_to_float(2**2000, 0) == math.inf
    assert _units_to_float(-(2**2000), -1) == -math.inf
