"""Tests of the exponential chapter's exercise checkers and figure builders.

The sampler checker's chi-square test uses a fixed seed, so its verdicts are
deterministic; a correct sampler would fail it with probability ≤ 1e-6 over seeds.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from dpkit.attacks import zero_rounding_attack
from dpkit.check import (
    Verdict,
    check_division_free_sampler,
    check_eta_choice,
    check_precision,
    check_underflow_threshold,
)
from dpkit.exponential import Eta, compute_precision
from dpkit.plots.exponential import (
    attack_rates_figure,
    distribution_figure,
    losses_for_exponent,
    time_per_sample_figure,
)
from dpkit.rng import seeded
from dpkit.widgets import Param, explore

# --------------------------------------------------------------------------------------
# Checkers


def test_underflow_threshold_checker() -> None:
    assert check_underflow_threshold(1491, 1.0).passed          # exp(-745.5) == 0.0
    assert not check_underflow_threshold(1490, 1.0).passed      # exp(-745) is subnormal
    assert not check_underflow_threshold(1492, 1.0).passed      # not the first one
    assert check_underflow_threshold(2981, 0.5).passed
    verdict = check_underflow_threshold("1491")
    assert isinstance(verdict, Verdict) and not verdict and "integer" in verdict.message


def smallest_private_x(epsilon: float, sensitivity: int, y: int = 12) -> int:
    return next(x for x in range(1, 1 << y) if Eta(x, y).epsilon(sensitivity) <= epsilon)


def test_eta_choice_checker_accepts_exactly_the_smallest_x() -> None:
    # Issue 12: the exercise asks for the smallest x with y = 12; the checker used to
    # accept any private η using 90 % of the budget.
    x = smallest_private_x(1.0, 2)
    verdict = check_eta_choice(Eta(x, 12), 1.0, 2)
    assert verdict.passed and "PASSED" in str(verdict)
    too_much = check_eta_choice(Eta(x - 1, 12), 1.0, 2)
    assert not too_much and "more than the budget" in too_much.message
    not_smallest = check_eta_choice(Eta(x + 1, 12), 1.0, 2)       # private, 99 % of ε
    assert not not_smallest and "not the smallest" in not_smallest.message
    assert str(x) not in not_smallest.message                     # no answer given away
    other_y = check_eta_choice(Eta.from_epsilon(1.0, 2), 1.0, 2)  # private, other y
    assert not other_y and "y = 12" in other_y.message
    assert not check_eta_choice(0.72, 1.0)
    assert check_eta_choice(Eta(smallest_private_x(2.0, 1), 12), 2.0).passed


def test_precision_checker() -> None:
    eta = Eta(1243, 11)
    right = compute_precision(0, 100, 1000, eta)
    assert right == 11 * 100 + 10
    assert check_precision(right, 0, 100, 1000, eta).passed
    assert "Too few" in check_precision(right - 1, 0, 100, 1000, eta).message
    assert not check_precision(right + 1, 0, 100, 1000, eta)
    assert not check_precision(float(right), 0, 100, 1000, eta)


def correct_uniform(total: int, rng) -> int:
    while True:                              # uniform integer in [0, total) from bits
        t = rng.bits(total.bit_length())
        if t < total:
            return t


def correct_sampler(weights: list[int], rng) -> int:
    t = correct_uniform(sum(weights), rng)
    for i, w in enumerate(weights):
        if t < w:
            return i
        t -= w
    raise AssertionError("unreachable")


def test_division_free_sampler_checker() -> None:
    assert check_division_free_sampler(correct_sampler).passed

    def with_floats(weights, rng):
        r = rng.uniform() * sum(weights)
        return int(np.searchsorted(np.cumsum(weights), r, side="right"))

    verdict = check_division_free_sampler(with_floats)
    assert not verdict and "uniform" in verdict.message

    def with_randbelow(weights, rng):              # correct, but the exercise says bits only
        t = rng.randbelow(sum(weights))
        for i, w in enumerate(weights):
            if t < w:
                return i
            t -= w
        raise AssertionError("unreachable")

    verdict = check_division_free_sampler(with_randbelow)
    assert not verdict and "rng.bits(k) only" in verdict.message

    def off_by_one(weights, rng):                # ignores the first weight's share
        t = correct_uniform(sum(weights), rng)
        for i, w in enumerate(weights):
            if t <= w:
                return i
            t -= w
        return len(weights) - 1

    assert not check_division_free_sampler(off_by_one)
    assert "index" in check_division_free_sampler(lambda w, rng: len(w)).message


# --------------------------------------------------------------------------------------
# Figures


def test_distribution_figure_shows_the_underflow() -> None:
    assert np.array_equal(losses_for_exponent(1.0, 745)[:3], [1490, 1491, 1491])
    fine = distribution_figure(1.0, 0.0)
    broken = distribution_figure(1.0, 745.0)
    assert isinstance(fine, Figure) and len(broken.axes) == 1
    assert "0 outcome(s) impossible" in fine.axes[0].get_title()
    assert "naive P(o1) = 1.000" in broken.axes[0].get_title()
    assert "15 outcome(s) impossible" in broken.axes[0].get_title()
    crashed = distribution_figure(2.0, 760.0)           # every naive weight underflows
    assert "divides 0 by 0" in crashed.axes[0].get_title()


def test_other_figures_and_static_widget() -> None:
    figure = time_per_sample_figure([10, 100], {"naive": [1e-5, 2e-5],
                                                "fast (exact)": [3e-5, math.nan]})
    assert len(figure.axes[0].get_lines()) == 2
    result = zero_rounding_attack(trials=50, rng=seeded(3))
    assert "inf" in attack_rates_figure(result).axes[0].get_title()
    widget = explore(distribution_figure, Param("epsilon", [1.0], label="ε"),
                     Param("exponent", [0.0, 745.0]), mode="static")
    assert widget is not None
