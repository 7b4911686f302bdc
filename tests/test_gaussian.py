"""Tests of dpkit.gaussian: calibration against a 60-digit reference, the mechanism, validation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from myst_text import exercise_text  # tests/ is on sys.path under pytest
from scipy import stats

from dpkit import naive
from dpkit.composition import optimal
from dpkit.gaussian import (
    BAO_MIN_EPSILON,
    analytic_sigma,
    bao_sigma,
    classic_sigma,
    delta_for_sigma,
    gaussian_mechanism,
    mechanism_parameters,
)
from dpkit.rng import RandomSource, seeded

mp.mp.dps = 60

# The grid the issue fixes: ε in [0.01, 20], δ from 0.5 down to 1e-30.
EPSILONS = [float(e) for e in np.geomspace(0.01, 20, 9)]
DELTAS = [0.5, 0.1, 1e-3, 1e-5, 1e-8, 1e-12, 1e-13, 1e-16, 1e-20, 1e-25, 1e-30]


def reference_delta(ratio: float, epsilon: float) -> mp.mpf:
    """δ(σ) for σ/Δ = ratio, in 60-digit arithmetic (the issue's formula, literally)."""
    s, e = mp.mpf(ratio), mp.mpf(epsilon)
    a, b = 1 / (2 * s), e * s

    def phi(t: mp.mpf) -> mp.mpf:
        return mp.erfc(-t / mp.sqrt(2)) / 2

    return phi(a - b) - mp.exp(e) * phi(-a - b)


def reference_sigma(epsilon: float, delta: float) -> mp.mpf:
    """The exact root of δ(σ) = delta (Δ = 1), by bisection on log σ in 60 digits."""
    target = mp.log(mp.mpf(delta))
    guess = mp.log(mp.mpf(analytic_sigma(1.0, epsilon, delta)))
    low, high = guess - mp.mpf("1e-6"), guess + mp.mpf("1e-6")
    assert mp.log(reference_delta(mp.exp(low), epsilon)) > target
    assert mp.log(reference_delta(mp.exp(high), epsilon)) < target
    for _ in range(80):  # 2e-6 / 2**80: far below the 1e-10 being tested
        mid = (low + high) / 2
        if mp.log(reference_delta(mp.exp(mid), epsilon)) > target:
            low = mid
        else:
            high = mid
    return mp.exp(high)


# ---------------------------------------------------------------- analytic_sigma

def test_analytic_sigma_matches_reference_on_the_grid() -> None:
    worst = 0.0
    for epsilon in EPSILONS:
        for delta in DELTAS:
            sigma = analytic_sigma(1.0, epsilon, delta)
            exact = reference_sigma(epsilon, delta)
            relative = float((sigma - exact) / exact)
            worst = max(worst, abs(relative))
            assert abs(relative) <= 1e-10, (epsilon, delta, relative)
            # Safe side, judged by the 60-digit profile, not by our own evaluation.
            assert reference_delta(sigma, epsilon) <= delta, (epsilon, delta)
    print(f"worst relative error of analytic_sigma on the grid: {worst:.2e}")


def test_analytic_sigma_safe_side_at_random_points() -> None:
    generator = np.random.default_rng(20180710)
    for _ in range(300):
        epsilon = float(10 ** generator.uniform(-3, 2.5))
        delta = float(10 ** generator.uniform(-250, math.log10(0.9)))
        sigma = analytic_sigma(1.0, epsilon, delta)
        assert reference_delta(sigma, epsilon) <= delta, (epsilon, delta)


def test_analytic_sigma_scales_with_sensitivity() -> None:
    base = analytic_sigma(1.0, 0.7, 1e-6)
    for sensitivity in (1e-6, 0.25, 3.0, 1e6):
        assert analytic_sigma(sensitivity, 0.7, 1e-6) == pytest.approx(base * sensitivity,
                                                                        rel=1e-14)


def test_analytic_sigma_is_monotone() -> None:
    by_epsilon = [analytic_sigma(1.0, e, 1e-6) for e in EPSILONS]
    assert all(a > b for a, b in itertools.pairwise(by_epsilon))
    by_delta = [analytic_sigma(1.0, 0.5, d) for d in DELTAS]
    assert all(a < b for a, b in itertools.pairwise(by_delta))


def test_analytic_sigma_known_value() -> None:
    # Balle & Wang 2018: at ε = 1, δ = 1e-5, Δ = 1 the analytic σ is about 3.73.
    assert analytic_sigma(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)


def test_analytic_sigma_extreme_parameters_stay_safe() -> None:
    for epsilon, delta in [(1e-6, 1e-300), (1e6, 0.5), (1e6, 1e-300), (50.0, 5e-324),
                           (0.01, 1 - 2**-53), (1e12, 1e-12)]:
        sigma = analytic_sigma(1.0, epsilon, delta)
        assert math.isfinite(sigma) and sigma > 0
        assert reference_delta(sigma, epsilon) <= delta, (epsilon, delta)


# ---------------------------------------------------------------- delta_for_sigma

def test_delta_for_sigma_is_an_accurate_upper_bound() -> None:
    for epsilon in EPSILONS:
        for sigma in (0.05, 0.3, 1.0, 3.0, 10.0, 40.0, 200.0, 900.0):
            exact = reference_delta(sigma, epsilon)
            if exact < mp.mpf("1e-300"):
                continue
            got = delta_for_sigma(sigma, 1.0, epsilon)
            assert got >= exact, (sigma, epsilon)
            assert got <= exact * (1 + mp.mpf("1e-8")), (sigma, epsilon)


@pytest.mark.parametrize(("low", "high", "bound"),
                         [(1e-4, 1e-2, 5e-6), (1e-2, 1.0, 5e-8), (1.0, 50.0, 1e-9)])
def test_delta_for_sigma_documented_error_bound(low: float, high: float, bound: float) -> None:
    """The docstring's claim: excess below 5e-6 (ε >= 1e-4), 5e-8 (ε >= 0.01), 1e-9 (ε >= 1),
    on a grid of ε and of σ/Δ covering δ from ~1 down to 1e-300 (measured worst cases:
    2.9e-6, 2.5e-8, 3.2e-10)."""
    mp.mp.dps = 50
    try:
        for epsilon in np.geomspace(low, high, 12):
            for ratio in np.geomspace(0.02, 40 / epsilon, 80):
                exact = reference_delta(float(ratio), float(epsilon))
                if exact < mp.mpf("1e-300"):
                    continue
                got = delta_for_sigma(float(ratio), 1.0, float(epsilon))
                assert exact <= got <= exact * (1 + mp.mpf(bound)), (ratio, epsilon)
    finally:
        mp.mp.dps = 60


def test_delta_for_sigma_inverts_analytic_sigma() -> None:
    for epsilon in (0.05, 1.0, 8.0):
        for delta in (1e-3, 1e-9, 1e-20):
            sigma = analytic_sigma(2.5, epsilon, delta)
            assert delta_for_sigma(sigma, 2.5, epsilon) <= delta
            # A σ one part in 1e9 smaller is no longer enough.
            assert delta_for_sigma(sigma * (1 - 1e-9), 2.5, epsilon) > delta


def test_delta_for_sigma_extremes() -> None:
    assert delta_for_sigma(1e-300, 1e300, 1.0) == 1.0          # σ/Δ underflows: δ → 1
    assert delta_for_sigma(1e300, 1e-300, 1.0) == math.ulp(0.0)  # σ/Δ overflows: δ → 0+
    # σ = 60Δ at ε = 1: δ ≈ e^-1800, below every float; the smallest positive float is
    # returned, never 0 (0 would under-report).
    assert reference_delta(60.0, 1.0) < mp.mpf("1e-700")
    assert delta_for_sigma(60.0, 1.0, 1.0) == math.ulp(0.0)


def test_delta_for_sigma_known_value() -> None:
    # σ = Δ = ε = 1: Φ(−1/2) − e Φ(−3/2) = 0.126936...
    assert delta_for_sigma(1.0, 1.0, 1.0) == pytest.approx(
        float(reference_delta(1.0, 1.0)), rel=1e-12)


# ---------------------------------------------------------------- classic_sigma

def test_classic_sigma_formula_rounded_up() -> None:
    for epsilon in (0.01, 0.1, 0.5, 0.999):
        for delta in (0.5, 1e-5, 1e-30):
            sigma = classic_sigma(3.0, epsilon, delta)
            exact = 3 * mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(delta))) / mp.mpf(epsilon)
            assert sigma > exact  # Theorem A.1 asks for a strict inequality
            assert sigma <= exact * (1 + mp.mpf("1e-14"))


def test_classic_sigma_is_private_where_proven() -> None:
    # Theorem A.1, checked against the exact profile for ε < 1.
    for epsilon in (0.01, 0.1, 0.5, 0.9):
        for delta in (0.1, 1e-5, 1e-12):
            assert reference_delta(classic_sigma(1.0, epsilon, delta), epsilon) <= delta


@pytest.mark.parametrize("epsilon", [1.0, 1.5, 10.0])
def test_classic_sigma_refuses_epsilon_at_least_one(epsilon: float) -> None:
    with pytest.raises(ValueError, match="analytic_sigma") as info:
        classic_sigma(1.0, epsilon, 1e-5)
    assert "epsilon" in str(info.value) and repr(epsilon) in str(info.value)


def test_classic_sigma_tiny_and_subnormal_delta() -> None:
    # ln(1.25/δ) in log space: finite for δ = 1e-310 and 5e-324 (1.25/δ overflows).
    for delta in (1e-300, 1e-310, 5e-324):
        sigma = classic_sigma(1.0, 0.5, delta)
        exact = mp.sqrt(2 * (mp.log(mp.mpf(1.25)) - mp.log(mp.mpf(delta)))) / mp.mpf(0.5)
        assert exact < sigma <= exact * (1 + mp.mpf("1e-14"))
    assert classic_sigma(1.0, 0.5, 5e-324) == pytest.approx(77.1835845, rel=1e-8)
    with pytest.raises(ValueError, match="largest float"):
        classic_sigma(1e308, 1e-10, 1e-5)


def test_classic_formula_under_noises_outside_its_range() -> None:
    # The book's example: ε = 10, δ = 1e-3. The formula's σ gives a true δ above 1e-3.
    sigma = math.sqrt(2 * math.log(1.25 / 1e-3)) / 10
    assert reference_delta(sigma, 10.0) > 3e-3
    assert analytic_sigma(1.0, 10.0, 1e-3) > sigma


def test_classic_formula_crossings() -> None:
    # analytic_gaussian.md: "the classic σ stays private up to ε ≈ 7.46 (δ = 1e-3), 8.42
    # (1e-5), 9.62 (1e-9)", i.e. where the classic σ equals the analytic σ.
    from dpkit.plots.gaussian import classic_crossing_epsilon, classic_formula_sigma

    for delta, crossing in ((1e-3, 7.4635), (1e-5, 8.4198), (1e-9, 9.6237)):
        found = classic_crossing_epsilon(delta)
        assert found == pytest.approx(crossing, abs=1e-4)
        below, above = found * (1 - 1e-6), found * (1 + 1e-6)
        assert reference_delta(classic_formula_sigma(below, delta), below) < delta
        assert reference_delta(classic_formula_sigma(above, delta), above) > delta
        assert classic_formula_sigma(below, delta) > analytic_sigma(1.0, below, delta)
        assert classic_formula_sigma(above, delta) < analytic_sigma(1.0, above, delta)
    # gaussian.md's old table: at ε = 5, δ = 1e-5 the formula's σ is private (δ = 1.35e-6).
    assert float(reference_delta(classic_formula_sigma(5.0, 1e-5), 5.0)) == pytest.approx(
        1.349e-6, rel=1e-3)


def test_classic_over_analytic_ratio_range() -> None:
    ratios = [classic_sigma(1.0, e, d) / analytic_sigma(1.0, e, d)
              for e in (0.1, 0.5) for d in np.geomspace(1e-12, 1e-3, 40)]
    assert 1.16 <= min(ratios) < 1.17
    assert 2.16 < max(ratios) <= 2.17


def test_analytic_never_exceeds_classic() -> None:
    for epsilon in (0.01, 0.3, 0.99):
        for delta in (0.4, 1e-4, 1e-25):
            assert analytic_sigma(1.0, epsilon, delta) < classic_sigma(1.0, epsilon, delta)


# ---------------------------------------------------------------- Bao et al.'s form

def test_bao_sigma_agrees_with_analytic_sigma() -> None:
    # analytic_gaussian.md: the two calibrations agree to 1e-10 (printed on the page).
    worst = 0.0
    for epsilon in [*EPSILONS, 1e-3, 50.0]:
        for delta in [*DELTAS, 1e-100, 1e-300, 0.9]:
            a, b = analytic_sigma(1.0, epsilon, delta), bao_sigma(1.0, epsilon, delta)
            worst = max(worst, abs(a - b) / a)
    assert worst < 1e-10


def test_bao_sigma_is_safe_and_tight() -> None:
    for epsilon in (0.01, 0.5, 3.0, 20.0):
        for delta in (0.3, 1e-6, 1e-20):
            sigma = bao_sigma(2.0, epsilon, delta)
            assert reference_delta(sigma / 2.0, epsilon) <= delta
            assert sigma == pytest.approx(2.0 * float(reference_sigma(epsilon, delta)),
                                          rel=1e-10)


def test_bao_equation_is_the_profile() -> None:
    # erfc(χ) − e^ε erfc(√(χ² + ε)) = 2δ(σ) with χ = (εσ/Δ − Δ/2σ)/√2 (the substitution).
    for ratio, epsilon in ((0.7, 0.5), (3.0, 1.0), (0.2, 8.0)):
        r, e = mp.mpf(ratio), mp.mpf(epsilon)
        chi = (e * r - 1 / (2 * r)) / mp.sqrt(2)
        lhs = mp.erfc(chi) - mp.exp(e) * mp.erfc(mp.sqrt(chi**2 + e))
        assert mp.almosteq(lhs, 2 * reference_delta(ratio, epsilon), rel_eps=mp.mpf("1e-50"))
        assert mp.almosteq(1 / (mp.sqrt(2) * (mp.sqrt(chi**2 + e) - chi)), r,
                           rel_eps=mp.mpf("1e-50"))


def test_bao_sigma_validates() -> None:
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            bao_sigma(1.0, bad, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        bao_sigma(1.0, 1.0, 1.0)
    with pytest.raises(TypeError):
        bao_sigma("1", 1.0, 1e-5)


# ---------------------------------------------------------------- validation

bad_positive = st.one_of(
    st.floats(max_value=0.0), st.just(math.nan), st.just(math.inf), st.just(-math.inf))
bad_delta = st.one_of(
    st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(math.nan))
not_real = st.one_of(st.text(max_size=3), st.none(), st.just(True), st.just(1j),
                     st.lists(st.floats(), max_size=2))


@settings(max_examples=40, deadline=None)
@given(value=bad_positive)
def test_bad_epsilon_refused(value: float) -> None:
    for fn in (analytic_sigma, classic_sigma):
        with pytest.raises(ValueError, match="epsilon"):
            fn(1.0, value, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        delta_for_sigma(1.0, 1.0, value)


@settings(max_examples=40, deadline=None)
@given(value=bad_delta)
def test_bad_delta_refused(value: float) -> None:
    for fn in (analytic_sigma, classic_sigma):
        with pytest.raises(ValueError, match=r"delta must be a number in \(0, 1\)"):
            fn(1.0, 0.5, value)


@settings(max_examples=40, deadline=None)
@given(value=bad_positive)
def test_bad_sensitivity_and_sigma_refused(value: float) -> None:
    for fn in (analytic_sigma, classic_sigma):
        with pytest.raises(ValueError, match="sensitivity"):
            fn(value, 0.5, 1e-5)
    with pytest.raises(ValueError, match="sigma"):
        delta_for_sigma(value, 1.0, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        delta_for_sigma(1.0, value, 1.0)


@settings(max_examples=30, deadline=None)
@given(value=not_real)
def test_wrong_types_refused(value: object) -> None:
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        analytic_sigma(1.0, value, 1e-5)
    with pytest.raises(TypeError, match="delta must be a real number"):
        classic_sigma(1.0, 0.5, value)
    with pytest.raises(TypeError, match="sigma must be a real number"):
        delta_for_sigma(value, 1.0, 1.0)


# ---------------------------------------------------------------- the mechanism

class NoFloatSource(RandomSource):
    """A seeded byte source whose float draws fail: exact samplers must never use them."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self._inner = seeded(seed)

    def bytes(self, n: int) -> bytes:
        return self._inner.bytes(n)

    def uniform(self) -> float:
        raise AssertionError("a float was drawn")

    def uniforms(self, size: int | tuple[int, ...]) -> np.ndarray:
        raise AssertionError("floats were drawn")

    def numpy_generator(self) -> np.random.Generator:
        raise AssertionError("a NumPy generator was used")


@pytest.mark.parametrize("dimension", [1, 10, 5000])
@pytest.mark.parametrize("method, epsilon", [("analytic", 1.0), ("analytic", 8.0),
                                             ("classic", 0.5)])
def test_mechanism_parameters_guarantee(dimension: int, method: str, epsilon: float) -> None:
    delta = 1e-7
    params = mechanism_parameters(2.0, epsilon, delta, dimension, method=method)
    k = params.grid_exponent
    s = mp.mpf(params.sigma) / mp.mpf(2) ** k
    assert s >= 2**40
    # The rounded query's ℓ2 sensitivity in grid units: at least Δ/2**k + √d.
    assert params.grid_sensitivity >= Fraction(2.0) / Fraction(2) ** k + Fraction(
        math.isqrt(dimension))
    d_grid = mp.mpf(params.grid_sensitivity.numerator) / params.grid_sensitivity.denominator
    if math.isqrt(dimension) ** 2 != dimension:  # √d irrational: strictly more than √d
        assert d_grid > mp.mpf(2) / mp.mpf(2) ** k + mp.sqrt(dimension)
    # The continuous Gaussian with this σ on the rounded query: (ε_noise, δ_noise)-DP.
    assert reference_delta(s / d_grid, params.epsilon_noise) <= params.delta_noise
    # The reserve covers the discrete-vs-continuous loss η (recomputed here in 60 digits)...
    eta = (dimension * mp.mpf(40) / s + mp.sqrt(dimension) * d_grid / (2 * s * s)
           + mp.mpf(dimension) / (4 * s * s))
    assert params.rounding_epsilon >= eta
    assert params.rounding_epsilon <= 1e-10 * dimension
    # ...and the budget closes: ε_noise + η <= ε, e^η δ_noise + d·e^-799 <= δ.
    assert mp.mpf(params.epsilon_noise) + mp.mpf(params.rounding_epsilon) <= epsilon
    tail = dimension * mp.exp(-(40 - mp.mpf(2) ** -40) ** 2 / 2)
    assert mp.exp(params.rounding_epsilon) * params.delta_noise + tail <= delta
    # The price of safety is negligible: σ within 1e-8 of the continuous calibration.
    fn = analytic_sigma if method == "analytic" else classic_sigma
    assert params.sigma == pytest.approx(fn(2.0, epsilon, delta), rel=1e-6)


def test_mechanism_noise_is_gaussian_with_the_calibrated_sigma() -> None:
    # Kolmogorov–Smirnov test of 20,000 standardised noise values against N(0, 1). The
    # discrete Gaussian on a grid of 2**-40 σ differs from N(0, σ²) in Kolmogorov distance
    # by < 1e-11, far below the test's resolution (~0.04 at this p-value), so the KS p-value
    # is uniform and failing when p < 1e-7 has false-failure probability 1e-7.
    value = np.full(20_000, 123.25)
    released = gaussian_mechanism(value, 1.5, 0.9, 1e-6, rng=seeded(11))
    sigma = mechanism_parameters(1.5, 0.9, 1e-6, value.size).sigma
    assert stats.kstest((released - value) / sigma, "norm").pvalue > 1e-7


def test_mechanism_mean_and_variance() -> None:
    # 40,000 draws. The sample mean has sd σ/200: |mean| > 5.4 sd has probability 6.7e-8.
    # n·var/σ² is chi-square with n degrees of freedom (mean known): a relative deviation
    # over 5.4·sqrt(2/n) has probability 7.1e-8 (scipy.stats.chi2, two-sided). Together
    # the false-failure probability is below 1.4e-7.
    sigma = mechanism_parameters(1.0, 2.0, 1e-5, 40_000).sigma
    noise = gaussian_mechanism(np.zeros(40_000), 1.0, 2.0, 1e-5, rng=seeded(5))
    assert abs(noise.mean()) < 5.4 * sigma / 200
    assert abs(noise.var() / sigma**2 - 1) < 5.4 * math.sqrt(2 / 40_000)


def test_mechanism_scalar_shape_and_grid() -> None:
    release = gaussian_mechanism(7.0, 1.0, 1.0, 1e-5, rng=seeded(1))
    assert isinstance(release, float)
    matrix = gaussian_mechanism([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 1.0, 1.0, 1e-5,
                                rng=seeded(1))
    assert matrix.shape == (2, 3) and matrix.dtype == np.float64
    # Every output is an exact multiple of the grid step (noise never touches a float).
    k = mechanism_parameters(1.0, 1.0, 1e-5, 6).grid_exponent
    units = np.ldexp(matrix, -k)
    assert np.all(units == np.rint(units))


def test_mechanism_is_reproducible_with_a_seed_and_uses_no_floats() -> None:
    first = gaussian_mechanism(np.arange(5.0), 1.0, 1.0, 1e-5, rng=seeded(3))
    again = gaussian_mechanism(np.arange(5.0), 1.0, 1.0, 1e-5, rng=seeded(3))
    other = gaussian_mechanism(np.arange(5.0), 1.0, 1.0, 1e-5, rng=seeded(4))
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    exact = gaussian_mechanism(np.arange(5.0), 1.0, 1.0, 1e-5, rng=NoFloatSource(3))
    assert np.array_equal(exact, first)


def test_mechanism_handles_huge_values() -> None:
    release = gaussian_mechanism([1e300, -1e300, 0.0], 1.0, 1.0, 1e-5, rng=seeded(2))
    assert release[0] == 1e300 and release[1] == -1e300 and abs(release[2]) < 100


def test_mechanism_default_source_is_secure() -> None:
    release = gaussian_mechanism(0.0, 1.0, 1.0, 1e-5)
    assert math.isfinite(release)


@pytest.mark.parametrize("bad, error, text", [
    (math.nan, ValueError, "value must be a finite number, got nan"),  # as laplace_mechanism
    ([1.0, math.inf], ValueError, "value must hold finite numbers"),
    ([], ValueError, "value must not be empty"),
    ("12", TypeError, "value must be an array of real numbers"),
])
def test_mechanism_refuses_bad_values(bad: object, error: type, text: str) -> None:
    with pytest.raises(error, match=text):
        gaussian_mechanism(bad, 1.0, 1.0, 1e-5, rng=seeded(0))


def test_mechanism_refuses_bad_parameters() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        gaussian_mechanism(1.0, 1.0, 1.0, 1e-5, method="optimal")
    with pytest.raises(TypeError, match="method must be a str"):
        gaussian_mechanism(1.0, 1.0, 1.0, 1e-5, method=None)
    with pytest.raises(ValueError, match="analytic_sigma"):
        gaussian_mechanism(1.0, 1.0, 2.0, 1e-5, method="classic")
    with pytest.raises(TypeError, match="rng must be None"):
        gaussian_mechanism(1.0, 1.0, 1.0, 1e-5, rng=42)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_mechanism(1.0, 1.0, -1.0, 1e-5)
    with pytest.raises(ValueError, match="too small"):
        mechanism_parameters(1.0, 1e-9, 1e-5, 10_000)
    with pytest.raises(ValueError, match="dimension"):
        mechanism_parameters(1.0, 1.0, 1e-5, 0)


# ---------------------------------------------------------------- the naive versions

def test_naive_erf_calibration_under_noises_at_tiny_delta() -> None:
    # Fine at moderate δ ...
    sigma = naive.analytic_sigma_erf(1.0, 1.0, 1e-5)
    assert sigma == pytest.approx(analytic_sigma(1.0, 1.0, 1e-5), rel=1e-9)
    # ... but the cancellation in 1 + erf makes it return too little noise at tiny δ.
    for delta in (1e-17, 1e-20):
        sigma = naive.analytic_sigma_erf(1.0, 1.0, delta)
        assert reference_delta(sigma, 1.0) > 2 * delta


def test_naive_wrong_sqrt_calibration() -> None:
    # Exact at ε = 1 (where sqrt(z² + 1) = sqrt(z² + ε)), too little noise for ε > 1.
    assert naive.analytic_sigma_wrong_sqrt(1.0, 1.0, 1e-5) == pytest.approx(
        analytic_sigma(1.0, 1.0, 1e-5), rel=1e-9)
    for epsilon in (2.0, 5.0):
        sigma = naive.analytic_sigma_wrong_sqrt(1.0, epsilon, 1e-5)
        assert reference_delta(sigma, epsilon) > 1000 * 1e-5


def test_naive_newton_source_derivative_gives_too_little_noise() -> None:
    # analytic_gaussian.md, (analytic-gauss-newton): with the source material's derivative,
    # 100 Newton steps stop far from χ; the σ is about half the right one and its true δ is
    # hundreds of times the target. The correct derivative converges in a few dozen steps.
    for epsilon, delta in ((0.5, 1e-5), (1.0, 1e-5), (2.0, 1e-5)):
        right = analytic_sigma(1.0, epsilon, delta)
        wrong = naive.analytic_sigma_newton(1.0, epsilon, delta)
        assert wrong < 0.6 * right
        assert reference_delta(wrong, epsilon) > 500 * delta
        assert len(naive.newton_iterates(epsilon, delta)) == 101   # never converged
        fixed = naive.analytic_sigma_newton(1.0, epsilon, delta, derivative="correct")
        assert fixed == pytest.approx(right, rel=1e-9)
    # still too small after 100,000 steps
    slow = naive.analytic_sigma_newton(1.0, 1.0, 1e-5, max_iterations=100_000)
    assert reference_delta(slow, 1.0) > 10 * 1e-5
    # plain-float G cancels at small δ: the correct derivative no longer lands on the safe
    # side at δ = 1e-12
    tiny = naive.analytic_sigma_newton(1.0, 1.0, 1e-12, derivative="correct")
    assert reference_delta(tiny, 1.0) > 1e-12
    with pytest.raises(ValueError, match="derivative"):
        naive.newton_iterates(1.0, 1e-5, derivative="other")


def test_naive_mechanisms_noise_scale() -> None:
    # KS tests against the noise each naive version really adds (p < 1e-7 fails: false-
    # failure probability 1e-7 each, 2e-7 together).
    zeros = np.zeros(5000)
    textbook = naive.gaussian_mechanism(zeros, 1.0, 0.5, 1e-5, rng=seeded(8))
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert stats.kstest(textbook / sigma, "norm").pvalue > 1e-7
    buggy = naive.gaussian_mechanism_variance_bug(zeros, 0.1, 5.0, 1e-5, rng=seeded(8))
    sigma = analytic_sigma(0.1, 5.0, 1e-5)
    assert sigma < 1
    assert stats.kstest(buggy / sigma**2, "norm").pvalue > 1e-7
    # The true δ of the noise actually added is far above the target.
    assert delta_for_sigma(sigma**2, 0.1, 5.0) > 100 * 1e-5
    assert isinstance(naive.gaussian_mechanism(1.0, 1.0, 0.5, 1e-5, rng=seeded(1)), float)


# ---------------------------------------------------------------- figures

def test_figures_are_pure_and_small() -> None:
    from matplotlib.figure import Figure

    from dpkit.plots import gaussian as plots

    cases = [(plots.laplace_vs_gaussian_figure, {"dimension": 50, "epsilon": 0.5}),
             (plots.sigma_calibration_figure, {"epsilon": 2.0, "delta": 1e-9}),
             (plots.sigma_calibration_figure, {"epsilon": 0.1, "delta": 1e-3}),
             (plots.classic_validity_figure, {}), (plots.privacy_profile_figure, {}),
             (plots.erf_calibration_figure, {})]
    for builder, kwargs in cases:
        figure = builder(**kwargs)
        assert isinstance(figure, Figure)
        width, height = figure.get_size_inches()
        # nominal width 6.4 in, drawn at 0.75 of it and 160 dpi: 768 px, the column width;
        # nominal height 3.6 in, or 4.6 in when a legend sits below the panels
        assert width == pytest.approx(4.8) and 2.7 - 1e-9 <= height <= 3.45 + 1e-9
        assert figure.dpi == 160


def test_vector_errors_crossover() -> None:
    from dpkit.plots.gaussian import vector_errors

    # d = 1: Laplace (pure DP, scale 1/ε) beats the Gaussian; d = 1000: the Gaussian wins by
    # √d/√(ln(1.25/δ)), because its noise follows the ℓ2 sensitivity √d and Laplace's the ℓ1 d.
    lap, gau = vector_errors(1, 0.5)
    assert lap < gau
    lap, gau = vector_errors(1000, 0.5)
    assert lap / 10 < gau < lap / 9   # gaussian.md prints the ratio 9.2x at d = 1000
    assert lap == pytest.approx(math.sqrt(2) * 2000)
    with pytest.raises(ValueError, match="analytic_sigma"):
        vector_errors(10, 1.0)


def test_figure_png_fills_the_column() -> None:
    # _style: a new_figure (nominal 6.4 in) renders 768 px wide whatever dpi a caller asks
    # below 160, so figures and widget frames fill the book's column; a plain Figure keeps
    # the caller's dpi; the same call gives the same bytes.
    import io

    from matplotlib.figure import Figure
    from PIL import Image

    from dpkit.plots._style import figure_png, new_figure

    figure, (ax,) = new_figure()
    ax.plot([0, 1], [0, 1])
    for dpi in (72, 100):
        width, height = Image.open(io.BytesIO(figure_png(figure, dpi=dpi))).size
        assert (width, height) == (768, 432)
    assert figure_png(figure, dpi=72) == figure_png(figure, dpi=72)
    plain = Figure(figsize=(2, 2))
    plain.subplots().plot([0, 1], [0, 1])
    assert Image.open(io.BytesIO(figure_png(plain, dpi=200))).size == (400, 400)
    with pytest.raises(TypeError, match="Figure"):
        figure_png("not a figure")


def test_bao_sigma_names_the_range_it_cannot_resolve() -> None:
    # Break report: bao_sigma(1, 1e-12, 5e-324) raised a bare "math domain error".
    with pytest.raises(ValueError, match=r"epsilon=1e-12 is too small for delta=5e-324.*"
                                         r"epsilon >= 1e-11.*analytic_sigma"):
        bao_sigma(1, 1e-12, 5e-324)
    # The documented range: epsilon >= BAO_MIN_EPSILON resolves every delta.
    for delta in (5e-324, 1e-300, 1e-100, 1e-20, 1e-5, 0.4, 0.999):
        assert bao_sigma(1, BAO_MIN_EPSILON, delta) > 0


def test_gaussian_mechanism_huge_epsilon_is_a_clear_error() -> None:
    # Break report: delta * exp(-eta) underflowed, giving "delta must be in (0, 1), got -1e-323".
    with pytest.raises(ValueError, match=r"epsilon=1e\+100 is too large for delta=0.5.*underflow"):
        gaussian_mechanism(0.0, 1.0, 1e100, 0.5)
    # The bound the message states: epsilon <= 1e15 works for delta >= 1e-300, d <= 2**36.
    for delta in (0.999, 1e-5, 1e-300):
        for dimension in (1, 1000, 2**36):
            for sensitivity in (1e-300, 1.0, 1e300):
                mechanism_parameters(sensitivity, 1e15, delta, dimension)


@pytest.mark.parametrize("value", [1.7976931348623157e308, -1.7976931348623157e308,
                                   [0.0, -1.7976931348623157e308]])
def test_gaussian_release_that_could_overflow_is_refused_whatever_the_noise(value) -> None:
    """At the float limit with σ about 2**973, ``gaussian_mechanism`` returned ``±inf`` for
    seeds 0, 3, 5, 6, 7, 8 (and a float for the others) where ``laplace_mechanism``
    refuses. Now every seed refuses, before any noise is drawn, with the same check (shared,
    ``dpkit._samplers.grid.check_release_range``): ``max|value| + 40·σ`` must fit."""
    for seed in range(10):
        with pytest.raises(ValueError, match=r"^value=.* is too close to the float range for "
                                             r"Gaussian noise of standard deviation sigma=.*"
                                             r"max\|value\| \+ 40·sigma must be at most"):
            gaussian_mechanism(value, 2.0**971, 1.0, 1e-5, rng=seeded(seed))
    # inside the documented bound, releases are finite
    sigma = mechanism_parameters(2.0**971, 1.0, 1e-5).sigma
    limit = 1.7976931348623157e308 - 41 * sigma
    for seed in range(10):
        assert math.isfinite(gaussian_mechanism(limit, 2.0**971, 1.0, 1e-5, rng=seeded(seed)))
        assert math.isfinite(gaussian_mechanism(-limit, 2.0**971, 1.0, 1e-5, rng=seeded(seed)))


@pytest.mark.parametrize("delta", [5e-324, 1e-323])
def test_gaussian_mechanism_with_a_subnormal_delta_blames_delta(delta: float) -> None:
    """``gaussian_mechanism(..., delta=5e-324)`` said "epsilon=1.0 is too large for
    delta=5e-324 ... lower epsilon", but no epsilon works: the reserve δ·e^{-η}(1 − 2**-40)
    rounds down to 0 for any η >= 0. The error now names delta and the smallest that works,
    which does (and the float below it does not)."""
    with pytest.raises(ValueError, match=rf"^delta={delta!r} is too small for the "
                                         r"discrete-noise reserve.*delta must be in "
                                         r"\[1.5e-323, 1\)") as refused:
        gaussian_mechanism(1.0, 1.0, 1.0, delta, rng=seeded(0))
    assert "epsilon=1.0 is too large" not in str(refused.value)
    assert math.isfinite(gaussian_mechanism(1.0, 1.0, 1.0, 1.5e-323, rng=seeded(0)))
    assert mechanism_parameters(1.0, 1e3, 1.5e-323).delta_noise > 0
    with pytest.raises(ValueError, match=r"^delta=1e-323 is too small"):
        mechanism_parameters(1.0, 1e3, math.nextafter(1.5e-323, 0.0))
    # Where a smaller epsilon would help, epsilon is still the one named.
    with pytest.raises(ValueError, match=r"^epsilon=1e\+100 is too large for delta=5e-324"):
        gaussian_mechanism(0.0, 1.0, 1e100, 5e-324)


def test_the_circulating_wrong_derivative_overestimates_by_about_2chi2_e3chi2_over_epsilon():
    """analytic_gaussian's "Under the hood": the wrong derivative's |G'| over the true one
    grows faster than e^(3χ²), like 2χ² e^(3χ²)/ε once χ² is well above ε."""
    def ratio(chi: float, eps: float) -> float:
        true = math.exp(-chi**2) * (1 - chi / math.sqrt(chi**2 + eps))
        wrong = (math.exp(eps) * math.exp(-chi**2 - 1) * chi / math.sqrt(chi**2 + 1)
                 - math.exp(2 * chi**2))
        assert true > 0 > wrong
        return -wrong / true

    for eps in (0.01, 0.1, 0.5):
        ratios = [ratio(chi, eps) / math.exp(3 * chi**2) for chi in (1.0, 2.0, 3.0)]
        assert ratios == sorted(ratios) and ratios[0] > 1       # faster than e^(3χ²)
        for chi in (2.0, 3.0):
            predicted = 2 * chi**2 * math.exp(3 * chi**2) / eps
            assert 1 <= ratio(chi, eps) / predicted < 1.1


def test_any_epsilon_solution_numbers():
    """The claims and numbers of the model solution of ex-gaussian-any-epsilon."""
    text = exercise_text("gaussian", "ex-gaussian-any-epsilon")
    delta = mp.mpf("1e-5")
    a, c = mp.sqrt(2 * mp.log(1 / delta)), mp.sqrt(2 * mp.log(mp.mpf("1.25") / delta))

    def tail_sigma(epsilon):
        return (a + mp.sqrt(a**2 + 2 * epsilon)) / (2 * epsilon)

    threshold = 2 * c * (c - a)
    # the calibration meets the tail condition with equality, and is private by the exact
    # profile at every epsilon, the large ones included
    for epsilon in (0.01, 0.3, 0.5, 1, 2, 5, 20, 100):
        x = tail_sigma(mp.mpf(epsilon))
        assert epsilon * x - 1 / (2 * x) == pytest.approx(float(a), rel=1e-12)
        assert delta_for_sigma(float(x), 1.0, float(epsilon)) <= 1e-5
        # smaller than the classic sigma exactly below the threshold
        assert (tail_sigma(mp.mpf(epsilon)) < c / epsilon) == (epsilon < threshold)
    assert tail_sigma(threshold) == pytest.approx(float(c / threshold), rel=1e-12)
    for printed in (f"a \\approx {float(a):.4f}", f"c \\approx {float(c):.4f}",
                    f"about ${float(threshold):.3f}$", f"$a/c \\approx {float(a / c):.3f}$",
                    f"${float(tail_sigma(mp.mpf('0.5'))):.3f}$ (new)",
                    f"${classic_sigma(1.0, 0.5, 1e-5):.3f}$ (classic)",
                    f"${float(tail_sigma(mp.mpf(2))):.3f}$ against ${float(c / 2):.3f}$",
                    f"gives ${analytic_sigma(1.0, 2.0, 1e-5):.3f}$, below both",
                    "why is that number not a guarantee here?", "near $\\varepsilon \\approx 8.4$"):
        assert printed in text, printed
    # the classic sigma at epsilon = 2 is in fact private, by the exact delta
    assert delta_for_sigma(float(c / 2), 1.0, 2.0) <= 1e-5
    assert analytic_sigma(1.0, 2.0, 1e-5) < float(c / 2) < float(tail_sigma(mp.mpf(2)))


def test_stacking_solution_numbers():
    """The claims and numbers of the model solution of ex-analytic-stacking."""
    text = exercise_text("analytic_gaussian", "ex-analytic-stacking")
    # part 1: the joint privacy loss of independent releases is N(mu^2/2, mu^2) under D
    # (N(-mu^2/2, mu^2) under D'), and its exact delta is the profile at Delta/sigma = mu
    sensitivities, sigmas = (1.0, 2.0, 0.5), (3.0, 5.0, 1.5)
    mu = math.sqrt(sum((d / s) ** 2 for d, s in zip(sensitivities, sigmas, strict=True)))
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        e, m = mp.mpf(epsilon), mp.mpf(mu)
        tail = mp.ncdf((m**2 / 2 - e) / m) - mp.exp(e) * mp.ncdf((-(m**2) / 2 - e) / m)
        assert delta_for_sigma(1.0, mu, epsilon) == pytest.approx(float(tail), rel=1e-9)
    # part 2: ten counts under (1, 1e-6) together, against (0.1, 1e-7) each
    sigma = analytic_sigma(math.sqrt(10), 1.0, 1e-6)
    assert sigma == pytest.approx(math.sqrt(10) * analytic_sigma(1.0, 1.0, 1e-6), rel=1e-12)
    assert delta_for_sigma(sigma, math.sqrt(10), 1.0) <= 1e-6
    assert delta_for_sigma(sigma * (1 - 1e-6), math.sqrt(10), 1.0) > 1e-6
    basic = analytic_sigma(1.0, 0.1, 1e-7)
    for printed in (f"$\\approx {sigma:.2f}$ ($\\sqrt{{10}}$",
                    f"$\\approx {analytic_sigma(1.0, 1.0, 1e-6):.3f}$",
                    f"$\\approx {basic:.2f}$ for each", f"${basic / sigma:.2f}$ times the noise",
                    f"${(basic / sigma) ** 2:.2f}$ times the variance"):
        assert printed in text, printed
    # part 3: only as a pure guarantee; at delta > 0, 100 Laplace releases at 0.01 (0.01-DP
    # each) compose optimally to 0.3923 (printed rounded up), against 1 added up
    epsilon_total, delta_total = optimal(0.01, 0.0, 100, 1e-6)
    assert math.ceil(epsilon_total * 1000) / 1000 == 0.393 and delta_total == 1e-6
    assert "$(0.393, 10^{-6})$-DP" in text and "as a pure $\\varepsilon$-DP guarantee" in text
