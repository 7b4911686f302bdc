"""Tests of the floating-point attacks on the exponential mechanism and of the naive code.

The attacks must succeed on dpkit.naive (an outcome possible on one input is impossible on
its neighbour: infinite privacy loss) and fail on dpkit.exponential (exact privacy loss
within the guarantee; empirical rates consistent with the exact distribution).

Statistical tests reject when a binomial p-value is below 1e-7 (exact binomial test), so a
correct implementation fails each with probability ≤ 1e-7; there are 10 of them here,
≤ 1e-6 in all (union bound). Seeds are fixed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpkit.attacks import (
    truncated_addition_attack,
    truncated_addition_inputs,
    zero_rounding_attack,
    zero_rounding_inputs,
)
from dpkit.exponential import Eta
from dpkit.naive import exponential_mechanism, exponential_mechanism_probabilities
from dpkit.rng import seeded

ALPHA = 1e-7


def consistent(rate: float, trials: int, probability: Fraction) -> bool:
    """An exact two-sided binomial test of an observed rate against a probability."""
    p = float(probability)
    if p in (0.0, 1.0):
        return rate == p
    return stats.binomtest(round(rate * trials), trials, p).pvalue > ALPHA


# --------------------------------------------------------------------------------------
# Zero rounding (underflow)


@pytest.mark.parametrize("epsilon, x", [(1.0, 1490), (0.5, 2980)])
def test_zero_rounding_inputs_sit_on_the_underflow_threshold(epsilon: float, x: int) -> None:
    inputs = zero_rounding_inputs(epsilon, 100)
    assert inputs.d[0] == x and set(inputs.d[1:]) == {x + 1} and set(inputs.d_prime) == {x}
    assert np.exp(-epsilon * x / 2) > 0 and np.exp(-epsilon * (x + 1) / 2) == 0
    assert np.max(np.abs(inputs.d - inputs.d_prime)) <= 1          # neighbours, Δ = 1


@pytest.mark.parametrize("epsilon", [1.0, 0.5])
def test_zero_rounding_attack_breaks_naive_and_not_exact(epsilon: float) -> None:
    trials = 600
    result = zero_rounding_attack(epsilon, 100, trials=trials, rng=seeded(11))
    # Naive: o₁ is certain on d, 1/100 on d' — a ratio of 100 where e^ε is allowed.
    assert result.naive_probabilities[0] == 1
    assert abs(result.naive_probabilities[1] - Fraction(1, 100)) < 1e-15
    assert result.naive_rates[0] == 1.0
    assert consistent(result.naive_rates[1], trials, result.naive_probabilities[1])
    assert result.naive_success > result.success_bound
    assert result.naive_privacy_loss == math.inf and result.impossible == 99
    # Exact: the true base-2 distribution, privacy loss within the guarantee.
    b = Eta.from_epsilon(epsilon).base
    assert result.exact_probabilities == (1 / (1 + 99 * b), Fraction(1, 100))
    for rate, probability in zip(result.exact_rates, result.exact_probabilities, strict=True):
        assert consistent(rate, trials, probability)
    assert result.exact_privacy_loss <= result.exact_epsilon <= epsilon
    assert result.exact_success < result.success_bound
    assert "zero-rounding" in result.summary() and "inf" in str(result)


# --------------------------------------------------------------------------------------
# Truncated addition (absorption)


def test_truncated_addition_inputs_are_neighbours_and_absorbed() -> None:
    inputs = truncated_addition_inputs(30.0, 1000)
    assert np.max(np.abs(inputs.d - inputs.d_prime)) <= 1 + 1e-12
    assert np.array_equal(inputs.exact_d, inputs.exact_d.round())
    assert np.max(np.abs(inputs.exact_d - inputs.exact_d_prime)) <= inputs.sensitivity
    naive = exponential_mechanism_probabilities(inputs.d, 30.0)
    assert all(p == 0 for p in naive[1:-1])      # absorbed: impossible outcomes
    assert naive[0] > 1 - 1e-13


def test_truncated_addition_attack_breaks_naive_and_not_exact() -> None:
    trials = 400
    result = truncated_addition_attack(trials=trials, rng=seeded(12))
    assert result.naive_privacy_loss == math.inf and result.impossible == 998
    assert result.naive_rates[0] == 1.0
    assert abs(float(result.naive_probabilities[1]) - 0.63) < 0.01
    assert consistent(result.naive_rates[1], trials, result.naive_probabilities[1])
    assert result.exact_privacy_loss <= result.exact_epsilon <= 30
    for rate, probability in zip(result.exact_rates, result.exact_probabilities, strict=True):
        assert consistent(rate, trials, probability)
    # On the fine grid, the exact mechanism aims at the same distribution as the naive one.
    assert abs(float(result.exact_probabilities[1]) - 0.63) < 0.02


@pytest.mark.parametrize("call, message", [
    (lambda: zero_rounding_inputs(1e-12), "epsilon must be >= 1e-10"),
    (lambda: zero_rounding_inputs(1.0, 1), "n_outcomes must be"),
    (lambda: truncated_addition_inputs(5.0), "use epsilon >= 30"),
    (lambda: truncated_addition_inputs(30.0, p_neighbour=1.0), "p_neighbour must be"),
    (lambda: truncated_addition_inputs(30.0, resolution=0), "resolution must be"),
    (lambda: zero_rounding_attack(trials=0), "trials must be"),
    (lambda: zero_rounding_attack(float("nan")), "epsilon must be"),
])
def test_attack_validation(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------------------
# The naive mechanism itself


def test_naive_distribution_is_what_the_float_code_does() -> None:
    u = np.array([0.0, 1.0, 2.0, 0.5])
    exact = exponential_mechanism_probabilities(u, 1.0)
    assert sum(exact) == 1 and all(p.denominator <= 2**53 for p in exact)
    ideal = np.exp(-u / 2) / np.exp(-u / 2).sum()
    assert np.allclose([float(p) for p in exact], ideal, rtol=0, atol=1e-15)
    rng, trials = seeded(13), 20000
    draws = np.bincount([exponential_mechanism(u, 1.0, rng=rng) for _ in range(trials)],
                        minlength=4)
    expected = [float(p) * trials for p in exact]
    assert stats.chisquare(draws, expected).pvalue > ALPHA
    assert exponential_mechanism_probabilities([3.0, 3.0], 2.0) == (Fraction(1, 2),
                                                                    Fraction(1, 2))


def test_naive_refuses_bad_input_and_fails_like_the_original() -> None:
    with pytest.raises(ValueError, match="utilities must hold finite numbers only"):
        exponential_mechanism([0.0, float("nan")], 1.0)
    with pytest.raises(ValueError, match="epsilon must be"):
        exponential_mechanism([0.0], -1.0)
    with pytest.raises(ZeroDivisionError, match="underflowed"):
        exponential_mechanism([5000.0, 6000.0], 1.0)
    assert exponential_mechanism([1.0], 1.0) == 0
