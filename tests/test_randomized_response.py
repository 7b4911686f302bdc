"""dpkit.randomized_response: the exact ε guarantee, unbiasedness, validation, the checks."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from myst_text import exercise_text  # tests/ is on sys.path under pytest
from scipy import stats

import dpkit
from dpkit.randomized_response import debias, debiased_std, randomized_response, truth_probability

mpmath.mp.dps = 50


@pytest.mark.parametrize("epsilon", [1e-6, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 36.7])
def test_truth_probability_never_exceeds_e_to_the_epsilon(epsilon):
    p = truth_probability(epsilon)
    ratio = mpmath.mpf(p.numerator) / (p.denominator - p.numerator)
    assert ratio <= mpmath.exp(mpmath.mpf(epsilon))
    # and is not needlessly conservative: the 53-bit grid costs little epsilon
    lost = mpmath.mpf(epsilon) - mpmath.log(ratio)
    assert lost < (1e-9 if epsilon <= 5 else 1e-2) or epsilon > 30
    assert 2**53 % p.denominator == 0


def test_reports_follow_the_truth_probability():
    # binomial test on 200,000 reports; false-failure probability 1e-7 (fixed seed)
    answers = np.zeros(200_000, dtype=bool)
    reports = randomized_response(answers, 0.7, rng=dpkit.rng.seeded(1))
    p = float(truth_probability(0.7))
    assert stats.binomtest(int(reports.sum()), reports.size, 1 - p).pvalue > 1e-7


def test_debias_is_unbiased_in_simulation():
    truth = np.arange(100_000) < 24_000
    estimates = [debias(randomized_response(truth, 1.0, rng=dpkit.rng.seeded(s)).mean(), 1.0)
                 for s in range(20)]
    std = debiased_std(0.24, 100_000, 1.0) / np.sqrt(20)
    # |mean - 0.24| > 5.5 std has probability < 1e-7 under the normal approximation
    assert abs(np.mean(estimates) - 0.24) < 5.5 * std


def test_validation():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        randomized_response(np.array([True]), 0)
    with pytest.raises(TypeError, match="answers must be an array of bool"):
        randomized_response([1, 0], 1.0)
    with pytest.raises(ValueError, match="yes_fraction"):
        debias(1.5, 1.0)
    with pytest.raises(ValueError, match="yes_fraction"):
        debias([0.2, -0.1], 1.0)


def test_checks_accept_right_and_refuse_wrong_answers():
    right = dpkit.check.check_truth_probability(lambda e: np.exp(e) / (1 + np.exp(e)))
    wrong = dpkit.check.check_truth_probability(lambda e: 1 / (1 + np.exp(e)))
    assert right.passed and not wrong.passed
    # the verdict reports what the answer implies, not the answer itself
    assert "below 1/2" in wrong.message and "exp(" not in wrong.message
    noisy = dpkit.check.check_truth_probability(
        lambda e: 0.5 + 0.4 * (np.exp(e) / (1 + np.exp(e)) - 0.5))
    assert not noisy.passed and "less than e^ε" in noisy.message
    assert "PASSED" in str(right) and "Passed" in right._repr_html_()

    def estimate(y, e):
        p = np.exp(e) / (1 + np.exp(e))
        return (y - (1 - p)) / (2 * p - 1)

    assert dpkit.check.check_debias(estimate).passed
    clipped = dpkit.check.check_debias(lambda y, e: min(max(estimate(y, e), 0.0), 1.0))
    assert not clipped.passed and "leave [0, 1]" in clipped.message
    assert not dpkit.check.check_debias(lambda y, e: y).passed


def test_truth_probability_is_exact_fraction():
    assert isinstance(truth_probability(1.0), Fraction)


@pytest.mark.parametrize("epsilon", [5e-324, 1e-300, 1e-16])
def test_too_small_epsilon_cannot_be_debiased(epsilon):
    """Issue 9: p rounds to 1/2, so 2p - 1 = 0; a ValueError naming the limit, not a
    ZeroDivisionError. The limit itself is the first informative epsilon."""
    with pytest.raises(ValueError, match="epsilon must be at least MIN_DEBIAS_EPSILON"):
        debias(0.5, epsilon)
    with pytest.raises(ValueError, match="MIN_DEBIAS_EPSILON"):
        debiased_std(0.5, 10, epsilon)
    limit = dpkit.randomized_response.MIN_DEBIAS_EPSILON
    assert truth_probability(limit) > Fraction(1, 2)
    assert truth_probability(np.nextafter(limit, 0)) == Fraction(1, 2)
    assert debias(0.5, limit) == 0.5


def test_debiased_std_of_a_population_beyond_the_float_range():
    """n = 10**400 used to raise a bare OverflowError; sqrt(n) is exact enough by halving."""
    assert debiased_std(0.5, 10**400, 1.0) == pytest.approx(debiased_std(0.5, 100, 1.0) * 1e-199,
                                                            rel=1e-14)


def test_ragged_answers_are_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="answers must be a rectangular array"):
        randomized_response([[True], False], 1.0)
    with pytest.raises(ValueError, match="yes_fraction must be a rectangular array"):
        debias([[0.5], 0.5], 1.0)


def test_two_questions_solution_numbers():
    """The numbers of the model solution of ex-intro-two-questions (the introduction)."""
    text = exercise_text("intro", "ex-intro-two-questions")
    epsilon, n = 1.0, 32_561
    t = math.exp(epsilon / 2)
    q_a, q_b = t / (1 + t), (math.exp(epsilon) + 1) / (math.exp(epsilon) + 3)
    p = math.exp(epsilon) / (math.exp(epsilon) + 3)  # 4-ary randomized response
    assert q_b == pytest.approx(p + (1 - p) / 3)
    var_a, var_b = (q * (1 - q) / (n * (2 * q - 1) ** 2) for q in (q_a, q_b))
    # design A is randomized response at epsilon/2: dpkit's standard deviation for fixed
    # people is this one, whatever their share; for a random sample with share pi it adds
    # the sampling variance pi(1 - pi)/n
    pi = 0.24
    assert debiased_std(pi, n, epsilon / 2) ** 2 == pytest.approx(var_a)
    assert debiased_std(pi, n, epsilon / 2, sampled=True) ** 2 == pytest.approx(
        var_a + pi * (1 - pi) / n)
    # the closed forms of part 3
    assert var_a / var_b == pytest.approx(t * (t + 1) ** 2 / (2 * (t * t + 1)))
    assert (2 * q_b - 1) / (2 * q_a - 1) == pytest.approx((t + 1) ** 2 / (t * t + 3))
    # the odds of a right first bit: the geometric and the arithmetic mean of e^eps and 1
    assert q_a / (1 - q_a) == pytest.approx(math.sqrt(math.exp(epsilon) * 1))
    assert q_b / (1 - q_b) == pytest.approx((math.exp(epsilon) + 1) / 2)
    for printed in ("a common parameter $\\varepsilon' > \\varepsilon/2$ on both answers",
                    "are $e^{\\varepsilon/2}$ in A, the geometric mean",
                    "$(e^\\varepsilon + 1)/2$ in B, their arithmetic mean"):
        assert printed in text, printed
    for printed in (f"q_A \\approx {q_a:.4f}", f"q_B \\approx {q_b:.4f}",
                    f"about ${math.sqrt(var_a):.4f}$ (A)", f"${math.sqrt(var_b):.4f}$ (B)",
                    f"variance of A is ${var_a / var_b:.2f}$ times"):
        assert printed in text, printed
    # design B wins at every epsilon > 0, by the ratio of part 3
    for eps in (1e-3, 0.1, 1.0, 5.0, 20.0):
        u = math.exp(eps / 2)
        assert (u + 1) ** 2 / (u * u + 3) > 1
        assert (u * u + 1) / 2 > u        # AM > GM, so q_B > q_A


def test_debiased_std_is_for_fixed_people_unless_sampled():
    """Student review of the promise chapter, finding 1: the chapter compares the local
    standard deviation for Adult's fixed people with the central sqrt(2)/ε, so it must not
    include the variance of sampling the people: 173 people, not 190 (both printed by the
    docstring's examples). The fixed-people value does not depend on the share."""
    rich, n, epsilon = 7_841, 32_561, 1.0
    p = float(truth_probability(epsilon))
    fixed = math.sqrt(p * (1 - p) / n) / (2 * p - 1)
    for share in (0.0, rich / n, 0.5, 1.0):
        assert debiased_std(share, n, epsilon) == pytest.approx(fixed, rel=1e-12)
        assert debiased_std(share, n, epsilon, sampled=False) == debiased_std(share, n, epsilon)
    assert round(n * debiased_std(rich / n, n, epsilon)) == 173
    assert round(n * debiased_std(rich / n, n, epsilon, sampled=True)) == 190
    with pytest.raises(TypeError, match="sampled must be True or False, got 'yes'"):
        debiased_std(0.5, 10, 1.0, sampled="yes")


def test_debiased_std_matches_a_simulation_of_fixed_people():
    """The spread of the de-biased share of the same 1,000 people (a quarter of them 'yes')
    over 4,000 seeded surveys: its sample variance divided by the claimed variance is
    chi-square/(k - 1) with k - 1 = 3999 degrees of freedom (normal approximation of the
    binomial; the estimate is a sum of 1,000 independent bits). Two-sided bounds at
    probability 1e-7 each: false-failure probability 2e-7 (fixed seed)."""
    n, yes, epsilon, surveys = 1_000, 250, 1.0, 4_000
    truth = np.arange(n) < yes
    generator = dpkit.rng.seeded(11)
    estimates = [debias(randomized_response(truth, epsilon, rng=generator).mean(), epsilon)
                 for _ in range(surveys)]
    ratio = np.var(estimates, ddof=1) / debiased_std(yes / n, n, epsilon) ** 2
    dof = surveys - 1
    assert stats.chi2.ppf(1e-7, dof) / dof < ratio < stats.chi2.isf(1e-7, dof) / dof
    # the sampled variance is about 1.2 times larger here: the test tells them apart
    sampled = debiased_std(yes / n, n, epsilon, sampled=True) ** 2
    assert sampled / debiased_std(yes / n, n, epsilon) ** 2 > stats.chi2.isf(1e-7, dof) / dof


def test_a_near_miss_truth_probability_is_shown_relative_to_e_to_the_epsilon():
    """Student review of the intro, check feedback: p + 1e-7 at ε = 0.1 was reported as
    "a factor 1.105, more than e^ε", and 1.105 is e^0.1 to the printed digits. The message
    now gives the ratio's relative distance from e^ε."""
    verdict = dpkit.check.check_truth_probability(
        lambda e: math.exp(e) / (1 + math.exp(e)) + 1e-7)
    assert not verdict.passed
    assert "e^ε × (1 + 4e-07), more than e^ε: not ε-DP" in verdict.message
    low = dpkit.check.check_truth_probability(lambda e: math.exp(e) / (1 + math.exp(e)) - 1e-7)
    assert "e^ε × (1 − 4e-07), less than e^ε" in low.message
