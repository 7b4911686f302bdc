"""Composition formulas against high-precision mpmath references, properties, validation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from myst_text import exercise_text  # tests/ is on sys.path under pytest

from dpkit import composition as comp
from dpkit.composition import (
    advanced,
    advanced_crossover,
    advanced_epsilon_per_mechanism,
    advanced_epsilon_per_mechanism_exact,
    advanced_heterogeneous,
    gaussian_rho,
    optimal,
    optimal_delta,
    optimal_epsilon_per_mechanism,
    pure_to_zcdp,
    sequential,
    zcdp_to_dp,
)
from dpkit.composition.optimal import LossDistribution

mp.mp.dps = 50


# ------------------------------------------------------------------ mpmath references
def mp_advanced(epsilon, k, delta_prime):
    e = mp.mpf(epsilon)
    return mp.sqrt(2 * k * mp.log(1 / mp.mpf(delta_prime))) * e + k * e * mp.expm1(e)


def mp_delta(groups, epsilon_total):
    """Exact hockey-stick divergence of composed randomized responses (Murtagh–Vadhan 2016,
    Thm 1.5), summed directly: sum over outcomes of max(0, P - e^g Q)."""
    g = mp.mpf(epsilon_total)
    outcomes = [(mp.mpf(0), mp.mpf(1))]  # (loss, probability under P)
    for epsilon, k in groups:
        e = mp.mpf(epsilon)
        p_minus = 1 / (1 + mp.exp(e))  # probability of a -epsilon step under P
        new = []
        for j in range(k + 1):
            weight = mp.binomial(k, j) * (1 - p_minus) ** (k - j) * p_minus**j
            new.append(((k - 2 * j) * e, weight))
        outcomes = [(a + b, pa * pb) for a, pa in outcomes for b, pb in new]
    return mp.fsum(p * (1 - mp.exp(g - loss)) for loss, p in outcomes if loss > g)


def mp_optimal(epsilon, k, delta_prime):
    """Exact optimal epsilon: on (L_{j+1}, L_j], delta(g) = A_j - e^g B_j, solved directly."""
    e, target = mp.mpf(epsilon), mp.mpf(delta_prime)
    p_minus = 1 / (1 + mp.exp(e))
    a = b = mp.mpf(0)
    for j in range(k + 1):
        loss = (k - 2 * j) * e
        if loss <= 0:
            break
        p = mp.binomial(k, j) * (1 - p_minus) ** (k - j) * p_minus**j
        a, b = a + p, b + p * mp.exp(-loss)
        if a > target:
            g = mp.log((a - target) / b)
            if g >= loss - 2 * e:  # inside this piece
                return max(g, mp.mpf(0))
    return mp.mpf(0)


def smallest_float_at_least(x):
    """The float nearest to the exact rational ``x`` from above."""
    f = float(x)
    return f if Fraction(f) >= x else float(np.nextafter(f, math.inf))


# ------------------------------------------------------------------ the issue's numbers
def test_reference_point_from_the_issue():
    assert sequential([0.1] * 100)[0] == pytest.approx(10, abs=1e-12)
    assert round(advanced(0.1, 0, 100, 1e-6)[0], 4) == 6.3082
    assert round(optimal(0.1, 0, 100, 1e-6)[0], 4) == 4.7746


@pytest.mark.parametrize("epsilon,k,delta_prime,adv,opt", [
    (0.1, 100, 1e-6, 6.3082, 4.7746),
    (0.01, 1000, 1e-6, 1.7628, 1.3654),
    (0.5, 20, 1e-5, 17.2170, 9.8594),
])
def test_the_chapters_table(epsilon, k, delta_prime, adv, opt):
    assert sequential([epsilon] * k)[0] == pytest.approx(10, abs=1e-12)
    assert round(advanced(epsilon, 0, k, delta_prime)[0], 4) == adv
    assert round(optimal(epsilon, 0, k, delta_prime)[0], 4) == opt


def test_optimal_beats_basic_at_epsilon_one():
    """The chapter: at eps = 1 Thm 3.20 never wins, but the optimal total does."""
    assert round(optimal(1.0, 0, 50, 1e-4)[0]) == 43
    assert round(optimal(1.0, 0, 100, 1e-4)[0]) == 76
    for k in (10, 20, 50, 100):
        assert optimal(1.0, 0, k, 1e-4)[0] < k < advanced(1.0, 0, k, 1e-4)[0]


def test_example_3_7_numbers():
    """Dwork & Roth's Example 3.7: k = 10,000, delta' = e^-32, total epsilon 1."""
    k, dp = 10_000, math.exp(-32)
    assert advanced_epsilon_per_mechanism(1.0, dp, k) == pytest.approx(1 / 1600, rel=1e-12)
    exact = advanced_epsilon_per_mechanism_exact(1.0, dp, k)
    assert 1 / exact == pytest.approx(812.318, abs=1e-3)
    # the example's 1/801 does not satisfy Thm 3.20 with total 1: it overshoots by 1.4 %
    assert advanced(1 / 801, 0, k, dp)[0] == pytest.approx(1.01435, abs=1e-5)
    assert advanced(exact, 0, k, dp)[0] <= 1.0


def test_crossover_values_from_the_issue():
    assert advanced_crossover(0.1, 1e-5) == 29
    assert advanced(0.1, 0, 28, 1e-5)[0] >= 2.8
    assert advanced(0.1, 0, 29, 1e-5)[0] < 2.9
    assert advanced_crossover(1.0, 1e-5) is None
    assert advanced_crossover(math.log(2), 1e-5) is None  # e^eps = 2: equality at best
    # Near & Abuah's plotted curve 2 eps sqrt(2k ln(1/delta)) with delta = 10e-5 = 1e-4
    # crosses k eps at k = 8 ln(1e4) = 73.7, whatever eps: the "about 70" of the book.
    assert 8 * math.log(1 / 10e-5) == pytest.approx(73.68, abs=0.01)
    for k in range(1, 200):  # at eps = 1 the real Thm 3.20 never beats k eps
        assert advanced(1.0, 0, k, 1e-4)[0] > k


# ------------------------------------------------------------------ sequential
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1e-6, 10), min_size=1, max_size=30),
       st.floats(0, 1e-3))
def test_sequential_is_the_exact_sum_rounded_up(epsilons, delta):
    deltas = [delta] * len(epsilons)
    eps, dl = sequential(epsilons, deltas)
    assert eps == smallest_float_at_least(sum(Fraction(e) for e in epsilons))
    assert dl == smallest_float_at_least(sum(Fraction(d) for d in deltas))


def test_sequential_rounds_point_one_up():
    # float 0.1 is 0.1000000000000000055..., so ten of them exceed 1
    assert sequential([0.1] * 10)[0] > 1.0
    assert sequential([0.25] * 4) == (1.0, 0.0)
    assert sequential(np.array([0.5, 0.5]), np.array([1e-6, 0])) == (1.0, 1e-6)


# ------------------------------------------------------------------ advanced
@pytest.mark.parametrize("epsilon,delta,k,delta_prime", [
    (0.1, 0, 100, 1e-6), (0.01, 1e-7, 1000, 1e-6), (0.5, 0, 20, 1e-5), (1.0, 0, 1, 0.5),
    (1e-4, 0, 10**6, 1e-12), (3.0, 1e-9, 7, 1e-3), (1 / 801, 0, 10_000, math.exp(-32)),
])
def test_advanced_matches_mpmath_and_rounds_up(epsilon, delta, k, delta_prime):
    eps, dl = advanced(epsilon, delta, k, delta_prime)
    ref = mp_advanced(epsilon, k, delta_prime)
    assert mp.mpf(eps) >= ref
    assert (mp.mpf(eps) - ref) / ref < 1e-14
    ref_delta = k * mp.mpf(delta) + mp.mpf(delta_prime)
    assert mp.mpf(dl) >= ref_delta and (mp.mpf(dl) - ref_delta) / ref_delta < 1e-14


def test_heterogeneous_advanced_reduces_to_thm_3_20():
    a = advanced_heterogeneous([0.3] * 50, None, 1e-6)
    b = advanced(0.3, 0, 50, 1e-6)
    assert a[0] == pytest.approx(b[0], rel=1e-14) and a[1] == b[1]
    assert advanced_heterogeneous([0.3, 0.1], [1e-7, 0], 1e-6)[1] >= 1.1e-6


@pytest.mark.parametrize("epsilons", [[0.5, 0.5, 0.1, 0.1, 0.1, 0.1], [1.0, 0.2, 0.2, 0.2]])
def test_heterogeneous_advanced_is_a_true_bound(epsilons):
    """The heterogeneous Thm 3.20 is checked against the exact optimal privacy profile."""
    delta_prime = 1e-2
    eps, _ = advanced_heterogeneous(epsilons, None, delta_prime)
    groups = [(e, epsilons.count(e)) for e in sorted(set(epsilons))]
    assert mp_delta(groups, eps) <= delta_prime


# ------------------------------------------------------------------ per-mechanism budgets
@pytest.mark.parametrize("total,delta_prime,k", [
    (1.0, 1e-6, 100), (0.5, 1e-5, 1000), (0.99, math.exp(-32), 10_000), (0.1, 0.1, 1)])
def test_corollary_3_21_rounds_down_and_holds(total, delta_prime, k):
    eps = advanced_epsilon_per_mechanism(total, delta_prime, k)
    ref = mp.mpf(total) / (2 * mp.sqrt(2 * k * mp.log(1 / mp.mpf(delta_prime))))
    assert mp.mpf(eps) <= ref and (ref - mp.mpf(eps)) / ref < 1e-14
    assert mp_advanced(eps, k, delta_prime) <= total


def test_subnormal_delta_prime_does_not_overflow():
    tiny = 5e-324
    eps, dl = advanced(0.1, 0, 10, tiny)
    assert mp.mpf(eps) >= mp_advanced(0.1, 10, tiny) and dl == tiny
    per = advanced_epsilon_per_mechanism_exact(1.0, tiny, 10)
    assert advanced(per, 0, 10, tiny)[0] <= 1.0 < advanced(float(np.nextafter(per, 1)), 0, 10,
                                                           tiny)[0]
    assert optimal(0.1, 0, 10, tiny)[0] == sequential([0.1] * 10)[0]


def test_corollary_3_21_refuses_outside_its_hypothesis():
    # epsilon_total = 50 with delta' = 0.5: the corollary's eps no longer satisfies Thm 3.20
    with pytest.raises(ValueError, match=r"Corollary 3\.21"):
        advanced_epsilon_per_mechanism(50.0, 0.5, 1)


@pytest.mark.parametrize("total,delta_prime,k", [
    (1.0, math.exp(-32), 10_000), (1.0, 1e-6, 100), (10.0, 1e-5, 20), (0.01, 1e-9, 5)])
def test_exact_inversion_is_the_largest_valid_epsilon(total, delta_prime, k):
    eps = advanced_epsilon_per_mechanism_exact(total, delta_prime, k)
    assert mp_advanced(eps, k, delta_prime) <= total
    root = mp.findroot(lambda e: mp_advanced(e, k, delta_prime) - total, mp.mpf(eps))
    assert (root - mp.mpf(eps)) / root < 1e-14
    assert eps >= advanced_epsilon_per_mechanism(min(total, 0.999), delta_prime, k)


def test_optimal_per_mechanism_beats_the_others():
    eps = optimal_epsilon_per_mechanism(1.0, 1e-6, 100)
    assert optimal(eps, 0, 100, 1e-6)[0] <= 1.0
    assert optimal(float(np.nextafter(eps, 1)) * (1 + 1e-9), 0, 100, 1e-6)[0] > 1.0
    assert eps > advanced_epsilon_per_mechanism_exact(1.0, 1e-6, 100) > 1.0 / 100 * 1.5
    # k = 1 with a generous delta': the per-mechanism epsilon exceeds the total
    single = optimal_epsilon_per_mechanism(1.0, 0.2, 1)
    assert single > 1.0
    assert mp_delta([(single, 1)], 1.0) <= 0.2


# ------------------------------------------------------------------ optimal
@pytest.mark.parametrize("epsilon,k,delta_prime", [
    (0.1, 100, 1e-6), (0.01, 1000, 1e-6), (0.5, 20, 1e-5), (1.0, 10, 1e-3),
    (0.2, 1, 0.05), (2.0, 50, 1e-10), (0.05, 2000, 1e-8),
])
def test_optimal_matches_mpmath(epsilon, k, delta_prime):
    eps, dl = optimal(epsilon, 0, k, delta_prime)
    assert dl == delta_prime
    assert mp_delta([(epsilon, k)], eps) <= delta_prime  # the returned epsilon is valid
    ref = mp_optimal(epsilon, k, delta_prime)
    assert ref <= mp.mpf(eps) <= ref * (1 + 1e-6) + 1e-12  # and tight


def test_optimal_is_valid_at_k_ten_thousand():
    eps, _ = optimal(0.01, 0, 10_000, 1e-6)
    assert mp_delta([(0.01, 10_000)], eps) <= 1e-6
    assert mp_delta([(0.01, 10_000)], eps * (1 - 1e-6)) > 1e-6


def test_optimal_with_approximate_mechanisms():
    eps, dl = optimal(0.1, 1e-7, 100, 1e-6)
    assert eps == optimal(0.1, 0, 100, 1e-6)[0]
    ref = 1 - (1 - mp.mpf(1e-7)) ** 100 * (1 - mp.mpf(1e-6))
    assert ref <= mp.mpf(dl) <= ref * (1 + 1e-14)
    assert dl <= 100 * 1e-7 + 1e-6


def test_optimal_edge_cases():
    # a huge delta' makes every epsilon >= 0 valid ... down to 0
    assert optimal(0.01, 0, 4, 0.99)[0] == 0.0
    # a tiny delta': the optimal total reaches k * epsilon but never exceeds it
    assert optimal(1.0, 0, 3, 1e-300)[0] <= sequential([1.0] * 3)[0]
    assert optimal(1.0, 0, 1, 1e-300)[0] == 1.0
    # k = 10^5 runs and stays below advanced
    big = optimal(0.001, 0, 10**5, 1e-6)[0]
    assert big < advanced(0.001, 0, 10**5, 1e-6)[0]


@pytest.mark.parametrize("epsilon,k,total", [(0.1, 100, 4.7746), (0.5, 20, 3.0),
                                             (0.1, 100, 0.0), (1.0, 5, 10.0)])
def test_optimal_delta_matches_mpmath(epsilon, k, total):
    got = optimal_delta(epsilon, 0, k, total)
    ref = mp_delta([(epsilon, k)], total)
    assert ref <= mp.mpf(got) <= ref * (1 + 1e-7) + mp.mpf(1e-300)


def test_heterogeneous_optimal_of_the_accountant_matches_mpmath():
    """Murtagh & Vadhan's Thm 1.5 with two distinct epsilons, summed over all outcomes."""
    budget = comp.Accountant(10.0, 1e-3)
    epsilons = [0.3] * 6 + [0.1] * 9
    for epsilon in epsilons:
        budget.spend(epsilon)
    eps, delta = budget.totals().optimal
    assert delta == 1e-3
    groups = [(0.1, 9), (0.3, 6)]
    assert mp_delta(groups, eps) <= 1e-3 < mp_delta(groups, eps * (1 - 1e-6))


def test_optimal_delta_inverts_optimal():
    eps, _ = optimal(0.1, 0, 100, 1e-6)
    assert optimal_delta(0.1, 0, 100, eps) <= 1e-6 * (1 + 1e-7)


def test_loss_distribution_error_bound_covers_the_float_error():
    """The stated relative error bound of the log-space sum holds against mpmath."""
    for epsilon, k, g in [(0.01, 10_000, 5.0), (0.1, 2000, 10.0), (1.0, 300, 60.0)]:
        dist = LossDistribution.from_groups([(epsilon, k)])
        got = mp.e ** mp.mpf(dist.log_delta(g))
        ref = mp_delta([(epsilon, k)], g)
        assert abs(got - ref) / ref <= dist.error


# ------------------------------------------------------------------ properties
_GRID_EPS = [0.001, 0.01, 0.1, 0.5, 1.0, 2.0]
_GRID_K = [1, 2, 10, 100, 1000]
_GRID_DP = [1e-9, 1e-6, 1e-3]


@pytest.mark.parametrize("epsilon", _GRID_EPS)
def test_optimal_below_advanced_and_basic_on_a_grid(epsilon):
    for k in _GRID_K:
        basic = sequential([epsilon] * k)[0]
        for dp in _GRID_DP:
            opt = optimal(epsilon, 0, k, dp)[0]
            assert opt <= basic
            assert opt <= advanced(epsilon, 0, k, dp)[0]


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-3, 3.0), st.integers(1, 400), st.floats(1e-12, 0.5))
def test_monotone_in_k(epsilon, k, dp):
    assert advanced(epsilon, 0, k, dp)[0] < advanced(epsilon, 0, k + 1, dp)[0]
    assert optimal(epsilon, 0, k, dp)[0] <= optimal(epsilon, 0, k + 1, dp)[0]
    assert sequential([epsilon] * k)[0] < sequential([epsilon] * (k + 1))[0]


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-3, 3.0), st.floats(1.01, 2.0), st.integers(1, 300), st.floats(1e-12, 0.5))
def test_monotone_in_epsilon(epsilon, factor, k, dp):
    larger = epsilon * factor
    assert advanced(epsilon, 0, k, dp)[0] < advanced(larger, 0, k, dp)[0]
    assert optimal(epsilon, 0, k, dp)[0] <= optimal(larger, 0, k, dp)[0]


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-3, 3.0), st.integers(1, 300), st.floats(1e-12, 0.5))
def test_optimal_below_advanced_and_basic(epsilon, k, dp):
    opt = optimal(epsilon, 0, k, dp)[0]
    assert opt <= advanced(epsilon, 0, k, dp)[0]
    assert opt <= sequential([epsilon] * k)[0]


# ------------------------------------------------------------------ zCDP
@pytest.mark.parametrize("rho,delta", [(0.5, 1e-6), (1e-4, 1e-9), (3.0, 0.1)])
def test_zcdp_conversion_matches_mpmath(rho, delta):
    got = zcdp_to_dp(rho, delta)
    ref = mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * mp.log(1 / mp.mpf(delta)))
    assert ref <= mp.mpf(got) <= ref * (1 + 1e-14)


def test_rho_of_gaussian_and_pure_round_up():
    assert Fraction(gaussian_rho(1.0, 3.0)) >= Fraction(1, 18)
    assert gaussian_rho(1.0, 3.0) == pytest.approx(1 / 18, rel=1e-15)
    assert gaussian_rho(2.0, 1.0) == 2.0
    assert Fraction(pure_to_zcdp(0.1)) >= Fraction(0.1) ** 2 / 2


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("call,exc,match", [
    (lambda: sequential([]), ValueError, "epsilons must not be empty"),
    (lambda: sequential([0.1, float("nan")]), ValueError, r"epsilons\[1\]"),
    (lambda: sequential([0.1, -1]), ValueError, r"epsilons\[1\] must be a finite number > 0"),
    (lambda: sequential(0.1), TypeError, "sequence"),
    (lambda: sequential("0.1"), TypeError, "sequence"),
    (lambda: sequential([0.1], [1.0]), ValueError, r"deltas\[0\]"),
    (lambda: sequential([0.1], [0, 0]), ValueError, "same length"),
    (lambda: sequential(np.ones((2, 2))), ValueError, "one-dimensional"),
    (lambda: sequential([1e308, 1e308]), OverflowError, "overflows"),
    (lambda: advanced(0, 0, 10, 1e-6), ValueError, "epsilon must be"),
    (lambda: advanced(0.1, 0, 0, 1e-6), ValueError, "k must be an integer >= 1"),
    (lambda: advanced(0.1, 0, 10.0, 1e-6), TypeError, "k must be an integer"),
    (lambda: advanced(0.1, 0, 10, 0), ValueError, "delta_prime must be"),
    (lambda: advanced(0.1, 1, 10, 1e-6), ValueError, "delta must be"),
    (lambda: advanced(1000.0, 0, 10, 1e-6), OverflowError, "overflows"),
    (lambda: optimal(float("inf"), 0, 10, 1e-6), ValueError, "epsilon must be"),
    (lambda: optimal(1e308, 0, 3, 1e-6), OverflowError, "overflows"),
    (lambda: optimal(0.1, 0, 10**7, 1e-6), ValueError, "k must be an integer in"),
    (lambda: optimal(0.1, 0, True, 1e-6), TypeError, "k must be an integer"),
    (lambda: optimal(0.1, 0, 10, 1.0), ValueError, "delta_prime"),
    (lambda: optimal_delta(0.1, 0, 10, -1.0), ValueError, "epsilon_total"),
    (lambda: advanced_epsilon_per_mechanism(0, 1e-6, 10), ValueError, "epsilon_total"),
    (lambda: advanced_epsilon_per_mechanism_exact(1, 1e-6, 0), ValueError, "k must be"),
    (lambda: advanced_crossover(0.1, 2.0), ValueError, "delta_prime"),
    (lambda: zcdp_to_dp(0, 1e-6), ValueError, "rho must be"),
    (lambda: zcdp_to_dp(1.0, 0), ValueError, "delta must be"),
    (lambda: gaussian_rho(1.0, 0.0), ValueError, "sigma must be"),
    (lambda: gaussian_rho("1", 1.0), TypeError, "sensitivity must be a real number"),
    # issue 9: beyond the float range, a ValueError naming the parameters and the limit
    (lambda: gaussian_rho(1.0, 5e-324), ValueError, "sensitivity / sigma must be at most"),
    (lambda: gaussian_rho(1e300, 1.0), ValueError, "MAX_RATIO"),
    (lambda: pure_to_zcdp(1e300), ValueError, r"epsilon must be a finite number in \(0, MAX"),
    (lambda: zcdp_to_dp(1.7976931348623157e308, 1e-6), ValueError, "rho=.* is too large"),
    (lambda: advanced_epsilon_per_mechanism(1e300, 1e-6, 3), ValueError, "does not certify"),
])
def test_bad_input_is_refused_with_a_clear_message(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_zcdp_parameters_of_tiny_or_huge_inputs():
    """The ratio is taken before squaring (issue 9): no spurious overflow or underflow."""
    assert gaussian_rho(1e-200, 1e-200) == 0.5
    assert gaussian_rho(1e200, 1e200) == 0.5
    assert pure_to_zcdp(comp.MAX_RATIO) < math.inf
    assert gaussian_rho(1.0, 1e300) == 5e-324  # 5e-601 rounded up, never to 0


def test_advanced_composition_of_tiny_epsilons_is_not_absurdly_loose():
    """Σε² used to underflow to the smallest subnormal (rounded up), giving 1e-161 for
    k = 27 mechanisms at ε = 1e-300; the wide-exponent computation gives ~2.7e-299."""
    total = advanced(1e-300, 0.0, 27, 1e-6)[0]
    exact = math.sqrt(2 * 27 * math.log(1e6)) * 1e-300
    assert exact <= total < exact * (1 + 1e-12)


@pytest.mark.parametrize("epsilon", [5e-324, 1e-310, 1e-300, 0.69, 0.693147, 0.7, 710.0,
                                     1e300])
def test_advanced_crossover_ends_at_the_extremes(epsilon):
    """It used to walk one k at a time forever for ε <= 1e-300 and to overflow at ε = 710.
    The answer is the smallest k that beats sequential composition."""
    k = advanced_crossover(epsilon, 1e-6)
    if epsilon >= 0.7:
        assert k is None
        return
    assert advanced(epsilon, 0.0, k, 1e-6)[0] < k * epsilon
    if epsilon < 0.693:  # next to ln 2 the safe rounding, not the theorem, decides k - 1
        assert k == 1 or advanced(epsilon, 0.0, k - 1, 1e-6)[0] >= (k - 1) * epsilon


@pytest.mark.parametrize("epsilon_total", [1e300, 1.7976931348623157e308, 2**64])
def test_per_mechanism_budgets_of_huge_totals(epsilon_total):
    """Thm 3.20's total beyond the float range exceeds the target: a search ends, no
    OverflowError."""
    exact = advanced_epsilon_per_mechanism_exact(epsilon_total, 1e-6, 3)
    assert advanced(exact, 0.0, 3, 1e-6)[0] <= epsilon_total
    assert optimal_epsilon_per_mechanism(epsilon_total, 1e-6, 3) >= exact


def test_too_many_distinct_epsilons_are_refused_by_the_exact_computation():
    groups = [(0.1 + i / 1000, 200) for i in range(4)]
    with pytest.raises(ValueError, match="#P-hard"):
        LossDistribution.from_groups(groups)


def test_module_doctests():
    import doctest

    failures, _ = doctest.testmod(comp, optionflags=doctest.ELLIPSIS)
    assert failures == 0


@pytest.mark.parametrize("module", ["basic", "advanced", "optimal", "zcdp", "accountant"])
def test_submodule_doctests(module):
    """The package re-exports its functions; their doctests run in the defining modules."""
    import doctest
    import importlib

    failures, attempted = doctest.testmod(importlib.import_module(f"dpkit.composition.{module}"),
                                          optionflags=doctest.ELLIPSIS)
    assert failures == 0 and attempted > 0


def test_optimal_delta_at_the_float_limit_has_no_nan_on_the_way():
    """k·ε beyond the largest float: the losses are ±inf, in order, and no NaN (or
    warning about one) appears: the answer is the exact δ = 1."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert comp.optimal_delta(1.7976931348623157e308, 0.0, 3, 1.0) == 1.0
        assert comp.optimal_delta(1e300, 0.0, 2, 1.0) == 1.0


def test_rr_slope_solution_numbers():
    """The numbers printed in the solution of ex-comp-rr-slope (composition chapter)."""
    epsilon, k, delta_prime = 0.1, 100, 1e-6
    mu = epsilon * math.tanh(epsilon / 2)
    assert mu == pytest.approx(epsilon * math.expm1(epsilon) / (math.exp(epsilon) + 1))
    assert round(k * mu, 3) == 0.500
    tail = epsilon * math.sqrt(2 * k * math.log(1 / delta_prime))
    assert round(tail, 3) == 5.257
    assert round(k * mu + tail, 2) == 5.76
    assert round(k * epsilon * math.expm1(epsilon), 3) == 1.052
    assert round(k * epsilon * math.expm1(epsilon) + tail, 2) == 6.31
    assert round(optimal(epsilon, 0, k, delta_prime)[0], 2) == 4.77
    assert 0.75 * (1 - math.exp(-1)) > 0.47

    def epsilon_2(n: int) -> float:
        return n * mu - 2 * epsilon * math.sqrt(n) - 1

    assert round(epsilon_2(k), 2) == -2.50
    first_positive = next(n for n in range(1, 10_000) if epsilon_2(n) > 0)
    assert first_positive == 1983
    assert all(epsilon_2(n) > 0 for n in range(first_positive, first_positive + 1000))


def test_pure_zcdp_solution_numbers():
    """The claims and numbers of ex-comp-pure-zcdp (composition chapter), in 50-digit
    arithmetic: E_P[L] <= mu for eps-DP pairs, D_alpha <= mu + (alpha - 1) eps^2 / 2 <=
    alpha eps^2 / 2, randomized response's D_alpha -> mu as alpha -> 1, and the ratios."""
    text = exercise_text("composition", "ex-comp-pure-zcdp")

    def mu(eps):
        return eps * mp.tanh(eps / 2)

    def rr_renyi(eps, alpha):   # D_alpha of randomized response, as the solution writes it
        return mp.log((mp.exp(alpha * eps) + mp.exp((1 - alpha) * eps)) / (1 + mp.exp(eps))) / (
            alpha - 1)

    for eps in (mp.mpf("0.01"), mp.mpf("0.1"), mp.mpf(1), mp.mpf(3)):
        assert mu(eps) == pytest.approx(eps * mp.expm1(eps) / (mp.exp(eps) + 1), rel=1e-40)
        assert mu(eps) <= eps**2 / 2 and mu(eps) < eps * mp.expm1(eps)
        # the chord of s ln s on [e^-eps, e^eps] at s = 1, with lambda = 1 / (1 + e^eps)
        lam = 1 / (1 + mp.exp(eps))
        assert lam * mp.exp(eps) + (1 - lam) * mp.exp(-eps) == pytest.approx(1, rel=1e-40)
        assert lam * eps * mp.exp(eps) - (1 - lam) * eps * mp.exp(-eps) == pytest.approx(
            mu(eps), rel=1e-40)
        p = mp.exp(eps) / (1 + mp.exp(eps))
        assert eps * (2 * p - 1) == pytest.approx(mu(eps), rel=1e-40)
        assert rr_renyi(eps, 1 + mp.mpf("1e-20")) == pytest.approx(mu(eps), rel=1e-15)
        for alpha in (mp.mpf("1.001"), mp.mpf("1.5"), mp.mpf(2), mp.mpf(10), mp.mpf(100)):
            direct = mp.log(p * mp.exp((alpha - 1) * eps) + (1 - p) * mp.exp(-(alpha - 1) * eps))
            assert rr_renyi(eps, alpha) == pytest.approx(direct / (alpha - 1), rel=1e-40)
            assert rr_renyi(eps, alpha) <= mu(eps) + (alpha - 1) * eps**2 / 2 <= alpha * eps**2 / 2
    # Part 1 on random eps-DP pairs: p/q in [e^-eps, e^eps], both summing to 1 (fixed seed).
    gen = np.random.default_rng(22)
    for _ in range(2000):
        eps, n = float(gen.uniform(0.01, 3)), int(gen.integers(2, 6))
        q = gen.dirichlet(np.ones(n))
        s = np.exp(gen.uniform(-eps, eps, size=n))
        s = s / (q @ s)                      # rescaled so that sum q s = 1 ...
        if s.min() < math.exp(-eps) or s.max() > math.exp(eps):
            continue                         # ... which may leave the interval: skip those
        kl = float(q @ (s * np.log(s)))
        assert kl <= float(mu(eps)) * (1 + 1e-9) + 1e-15
    for eps, digits, printed in ((1, 3, "1.082"), (mp.mpf("0.1"), 4, "1.0008")):
        ratio = (mp.mpf(eps) ** 2 / 2) / mu(mp.mpf(eps))
        assert mp.nstr(ratio, digits + 1) == printed and printed in text
