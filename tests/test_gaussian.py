"""Tests of dpkit.gaussian: calibration against a 60-digit reference, the mechanism, validation."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma

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


def test_classic_formula_under_noises_outside_its_range() -> None:
    # The book's example: ε = 10, δ = 1e-3. The formula's σ gives a true δ above 1e-3.
    sigma = math.sqrt(2 * math.log(1.25 / 1e-3)) / 10
    assert reference_delta(sigma, 10.0) > 3e-3
    assert analytic_sigma(1.0, 10.0, 1e-3) > sigma


def test_classic_over_analytic_ratio_range() -> None:
    ratios = [classic_sigma(1.0, e, d) / analytic_sigma(1.0, e, d)
              for e in (0.1, 0.5) for d in np.geomspace(1e-12, 1e-3, 40)]
    assert 1.16 <= min(ratios) < 1.17
    assert 2.16 < max(ratios) <= 2.17


def test_analytic_never_exceeds_classic() -> None:
    for epsilon in (0.01, 0.3, 0.99):
        for delta in (0.4, 1e-4, 1e-25):
            assert analytic_sigma(1.0, epsilon, delta) < classic_sigma(1.0, epsilon, delta)


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
