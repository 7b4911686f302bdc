"""The averaging attack, the composition experiment, the exercise checkers and the figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

import dpkit.check as check
import dpkit.timing
from dpkit import rng as dprng
from dpkit.attacks.composition import (
    averaging_attack,
    averaging_attack_success_rate,
    averaging_success_probability,
    composition_experiment,
    simulate_privacy_loss,
)
from dpkit.composition import (
    Accountant,
    BudgetExceeded,
    advanced,
    optimal,
    optimal_epsilon_per_mechanism,
)
from dpkit.laplace import laplace_mechanism
from dpkit.plots import composition as plots

#: ``dpkit.timing``'s own test for a ``with unpadded():`` block on the stack, taken before
#: conftest.py's fixture replaces it for each test.
_INSIDE_UNPADDED = dpkit.timing._inside_unpadded


# ------------------------------------------------------------------ averaging attack
def test_exact_success_probability_matches_closed_forms():
    # one answer: P(|Laplace(2)| < 1/2) = 1 - e^(-1/4)
    assert averaging_success_probability(0.5, 1) == pytest.approx(1 - math.exp(-0.25))
    # two answers: P(|Z1 + Z2| < 1) for Laplace(2), from the density of the sum
    # (1/(4b))(1 + |s|/b) e^(-|s|/b): 2 (1/8) * 2 (2 - 2.5 e^(-1/2))
    assert averaging_success_probability(0.5, 2) == pytest.approx(
        0.5 * (2 - 2.5 * math.exp(-0.5)), abs=1e-8)
    values = [averaging_success_probability(0.5, n) for n in (1, 3, 10, 30, 100, 300)]
    assert values == sorted(values) and values[-1] > 0.99


def test_averaging_attack_recovers_the_count_from_the_safe_mechanism():
    """100 answers at epsilon = 2 (Laplace scale 1/2): the mean noise has variance
    2 * (1/2)^2 / 100 = 0.005, so by Chebyshev P(|mean| >= 1/2) <= 0.02 per attack. Over 10
    attacks, 5 or more fail with probability P(Bin(10, 0.02) >= 5) = 7.4e-7 <= 1e-6
    (scipy.stats.binom.sf(4, 10, 0.02)), so we require at least 6 successes."""
    source = dprng.seeded(11)
    wins = 0
    for _ in range(10):
        result = averaging_attack(lambda: laplace_mechanism(7841.0, 1.0, 2.0, rng=source), 100)
        assert result.queries == 100 and not result.refused
        wins += result.estimate == 7841
    assert wins >= 6


def test_accountant_stops_the_attack():
    source = dprng.seeded(12)
    budget = Accountant(1.0)

    def query():
        budget.spend(0.5, label="count >50K")  # refuses before anything is released
        return laplace_mechanism(7841.0, 1.0, 0.5, rng=source)

    result = averaging_attack(query, 400)
    assert result.refused and result.queries == 2
    assert len(budget.history) == 2
    with pytest.raises(BudgetExceeded):
        query()


def test_simulated_success_rate_is_consistent_with_the_exact_probability():
    """Binomial check: 2000 attacks with success probability p; the rate is within
    5.5 standard deviations of p except with probability <= 2 * exp(-5.5^2 / 2) < 1e-6
    (normal tail; the binomial with n p (1 - p) >= 100 is close to normal)."""
    for n in (10, 50):
        p = averaging_success_probability(0.5, n)
        rate = averaging_attack_success_rate(1000, 0.5, n, trials=2000, rng=dprng.seeded(n))
        assert abs(rate - p) <= 5.5 * math.sqrt(p * (1 - p) / 2000)


def test_attack_validation():
    with pytest.raises(ValueError, match="n_queries"):
        averaging_attack(lambda: 1.0, 0)
    with pytest.raises(ValueError, match="answers"):
        averaging_attack(lambda: float("nan"), 3)
    with pytest.raises(ValueError, match=r"trials \* n_queries"):
        averaging_attack_success_rate(1, 0.5, 10**5, trials=10**3)
    with pytest.raises(ValueError, match="epsilon"):
        averaging_success_probability(-1, 3)


# ------------------------------------------------------------------ composition experiment
def test_composition_experiment_runs_the_chosen_database_and_is_adaptive():
    seen = []

    def choose(view):
        seen.append(len(view))
        return 10, 11, lambda x, rng: x + len(view)

    assert composition_experiment(choose, 3, 0) == (10, 11, 12)
    assert composition_experiment(choose, 3, 1) == (11, 12, 13)
    assert seen == [0, 1, 2, 0, 1, 2]
    with pytest.raises(ValueError, match="world must be"):
        composition_experiment(choose, 3, 2)



def test_composition_experiment_runs_its_releases_without_deadlines(monkeypatch):
    """The experiment is a simulation: its rounds run inside ``dpkit.timing.unpadded`` (so
    the composition chapter's 4,000 releases do not each wait for a deadline), and its view
    is the same as the releases' outputs outside. Deterministic."""
    # the real test of a block on the stack, not the test suite's own stand-in (conftest.py)
    monkeypatch.setattr(dpkit.timing, "_inside_unpadded", _INSIDE_UNPADDED)
    inside = []

    def choose(view):
        def mechanism(x, source):
            inside.append(_INSIDE_UNPADDED())
            return laplace_mechanism(float(x), 1.0, 1.0, rng=source)
        return 10, 11, mechanism

    view = composition_experiment(choose, 3, 0, rng=dprng.seeded(4))
    assert not _INSIDE_UNPADDED()                # the block ended on the way out
    assert inside == [True, True, True]
    source = dprng.seeded(4)
    assert view == tuple(laplace_mechanism(10.0, 1.0, 1.0, rng=source) for _ in range(3))

def test_randomized_response_loss_attains_the_optimal_delta():
    """For randomized response the measured delta at the optimal epsilon is delta' itself
    (it is the worst case). With 200,000 experiments the estimate E[(1 - e^(eps - L))+] of
    delta' = 0.01 has standard deviation <= sqrt(0.01 / 200000) = 2.2e-4 (each term is in
    [0, 1] with mean 0.01, so its variance is <= 0.01). We allow 6 sd: by the normal
    approximation (200,000 terms) the false-failure probability is 2e-9 <= 1e-6."""
    eps, k, dp = 0.2, 50, 0.01
    losses = simulate_privacy_loss(eps, k, mechanism="randomized_response", trials=200_000,
                                   rng=dprng.seeded(5))
    target = optimal(eps, 0, k, dp)[0]
    measured = np.mean(-np.minimum(np.expm1(target - losses), 0))
    assert abs(measured - dp) <= 6 * math.sqrt(dp / 200_000)
    # the mean loss is k eps tanh(eps/2) (the drift advanced composition bounds by
    # k eps (e^eps - 1)); standard error <= 2 sqrt(k) eps / sqrt(200000)
    assert abs(losses.mean() - k * eps * math.tanh(eps / 2)) < 6 * 2 * math.sqrt(k) * eps / 447
    laplace = simulate_privacy_loss(eps, k, trials=20_000, rng=dprng.seeded(6))
    assert laplace.max() <= k * eps and laplace.min() >= -k * eps
    assert np.mean(laplace > advanced(eps, 0, k, dp)[0]) <= dp


def test_simulation_validation():
    with pytest.raises(ValueError, match="mechanism must be one of"):
        simulate_privacy_loss(0.1, 5, mechanism="gaussian")
    with pytest.raises(ValueError, match=r"trials \* k"):
        simulate_privacy_loss(0.1, 10**5, trials=10**3)


# ------------------------------------------------------------------ exercise checkers
def _thm_3_20(epsilon, k, delta_prime):
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * math.expm1(
        epsilon)


def test_check_advanced_composition():
    right = check.check_advanced_composition(_thm_3_20)
    assert right.passed
    wrong = check.check_advanced_composition(
        lambda e, k, d: math.sqrt(2 * k * math.log(1 / d)) * e + k * e * e)
    assert not wrong.passed and "k·ε²" in wrong.message
    near = check.check_advanced_composition(
        lambda e, k, d: 2 * e * math.sqrt(2 * k * math.log(1 / d)))
    assert not near.passed and "per-mechanism budget" in near.message
    crash = check.check_advanced_composition(lambda e, k, d: 1 / 0)
    assert not crash.passed and "ZeroDivisionError" in crash.message
    # The book numbers its own theorems by chapter: a message names the chapter's theorem and
    # corollary, never Dwork & Roth's numbers 3.20 and 3.21 (student review, finding 1).
    for verdict in (right, wrong, near):
        assert "3.2" not in str(verdict), verdict


def test_check_crossover():
    def crossover(epsilon, delta_prime):
        if math.exp(epsilon) >= 2:
            return None
        k = 1
        while _thm_3_20(epsilon, k, delta_prime) >= k * epsilon:
            k += 1
        return k

    assert check.check_crossover(crossover).passed
    assert not check.check_crossover(lambda e, d: 70).passed
    off = check.check_crossover(lambda e, d: None if crossover(e, d) is None
                                else crossover(e, d) - 1)
    assert not off.passed and "not strictly below" in off.message
    want = crossover(0.1, 1e-5)
    late = check.check_crossover(lambda e, d: None if crossover(e, d) is None
                                 else crossover(e, d) + 3)
    assert not late.passed and "smaller k" in late.message
    for verdict in (off, late):  # the verdict does not give the answer away
        assert f"k={want} " not in verdict.message and f"got {want}" not in str(verdict)
    for verdict in (check.check_crossover(crossover), off, late):  # no Dwork & Roth number
        assert "3.20" not in str(verdict), verdict


def test_check_per_query_epsilon():
    best = optimal_epsilon_per_mechanism(1.0, 1e-6, 100)
    assert check.check_per_query_epsilon(best).passed
    assert not check.check_per_query_epsilon(best * 1.01).passed
    wasteful = check.check_per_query_epsilon(0.01)
    assert not wasteful.passed and "wasteful" in wasteful.message
    assert f"{best:.6g}" not in str(wasteful) and f"{best:.4g}" not in str(wasteful)
    assert not check.check_per_query_epsilon("0.02").passed


def _exact_largest_per_query(k: int, delta_prime: float, total: float):
    """The exact largest per-query epsilon (mpmath, 40 digits, bisection on the profile)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        def profile(eps):
            return sum(mpmath.binomial(k, j) * max(0, mpmath.exp((k - j) * eps)
                                                   - mpmath.exp(total + j * eps))
                       for j in range(k + 1)) / (1 + mpmath.exp(eps)) ** k
        low, high = mpmath.mpf("0.01"), mpmath.mpf(1)
        for _ in range(140):
            middle = (low + high) / 2
            low, high = (middle, high) if profile(middle) <= delta_prime else (low, middle)
        return low


def test_check_per_query_epsilon_accepts_the_exact_answer_and_other_correct_ways():
    # optimal() rounds its total up, safely: at the exact answer it gives 1.0000000000003.
    # The exact answer, rounded to the nearest float or a few ulps either way, passes; so do
    # bisections on the binomial sum in floats (another correct way), and the library's own.
    exact = _exact_largest_per_query(100, 1e-6, 1.0)
    nearest = float(exact)
    assert optimal(nearest, 0.0, 100, 1e-6)[0] > 1.0  # the case the checker used to reject
    for ulps in (-3, 0, 1, 3):
        answer = nearest + ulps * math.ulp(nearest)
        assert check.check_per_query_epsilon(answer).passed, ulps

    def float_profile(eps):
        return sum(math.comb(100, j) * max(0.0, math.exp((100 - j) * eps)
                                           - math.exp(1.0 + j * eps))
                   for j in range(101)) / (1 + math.exp(eps)) ** 100

    low, high = 0.01, 1.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if float_profile(middle) <= 1e-6 else (low, middle)
    assert check.check_per_query_epsilon(low).passed
    assert check.check_per_query_epsilon(high).passed
    # Truly over budget, even by a little, still fails; so does the nearest misreading.
    for wrong in (nearest * (1 + 1e-10), nearest * (1 + 1e-6),
                  optimal_epsilon_per_mechanism(1.0, 1e-6, 99)):
        verdict = check.check_per_query_epsilon(wrong)
        assert not verdict.passed and "exceed the budget" in verdict.message
        assert "1.000000 > 1" not in verdict.message  # enough digits to see the excess


def test_check_queries_needed():
    verdict = check.check_queries_needed(124)
    assert verdict.passed
    assert averaging_success_probability(0.5, 124) >= 0.95 > averaging_success_probability(
        0.5, 123)
    assert not check.check_queries_needed(150.0).passed
    for wrong in (50, 123, 125, 400):  # wrong answers never reveal the right one
        verdict = check.check_queries_needed(wrong)
        assert not verdict.passed and "124" not in str(verdict)
    assert "too few" in check.check_queries_needed(123).message
    assert "smallest" in check.check_queries_needed(125).message
    # The verdict of ex-comp-attack does not answer ex-comp-attack-guarantee, the next
    # exercise: what basic composition certifies for those answers, 124 × 0.5 = 62.
    right = check.check_queries_needed(124)
    assert right.passed and "62" not in str(right) and "certif" not in str(right)


# ------------------------------------------------------------------ figures
@pytest.mark.parametrize("builder,kwargs", [
    (plots.composition_figure, {"epsilon0": 0.1, "delta_prime": 1e-6}),
    (plots.composition_figure, {"epsilon0": 1.0, "delta_prime": 1e-9}),
    (plots.textbook_crossover_figure, {}),
    (plots.privacy_loss_figure, {"trials": 2000}),
    (plots.averaging_attack_figure, {"trials": 20, "n_max": 40}),
    (plots.privacy_loss_distributions_figure, {"epsilon0": 0.5}),
])
def test_figures_build_and_are_deterministic(builder, kwargs):
    first, second = builder(**kwargs), builder(**kwargs)
    assert isinstance(first, Figure)
    lines = [[np.asarray(line.get_ydata()).tolist() for line in fig.axes[0].get_lines()]
             for fig in (first, second)]
    assert lines[0] == lines[1]
