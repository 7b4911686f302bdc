"""Tests of the Laplace chapter's exercise checkers: right answers pass, typical mistakes
fail with the matching hint. The checkers use fixed seeds, so verdicts are deterministic;
the false-failure probability of a correct answer is stated in each checker's docstring."""

from __future__ import annotations

import math

import numpy as np

import dpkit
from dpkit.check import (
    Verdict,
    check_grid_scale,
    check_laplace_interval,
    check_laplace_mechanism,
    check_sum_count_sensitivity,
)
from dpkit.laplace import laplace_mechanism
from dpkit.rng import seeded


def test_sum_count_sensitivity() -> None:
    good = check_sum_count_sensitivity(lambda lo, hi: max(abs(lo), abs(hi)) + 1)
    assert isinstance(good, Verdict) and good.passed and "PASSED" in str(good)
    replaced = check_sum_count_sensitivity(lambda lo, hi: hi - lo + 1)
    assert not replaced.passed and "replaced" in replaced.message
    no_count = check_sum_count_sensitivity(lambda lo, hi: max(abs(lo), abs(hi)))
    assert not no_count.passed and "count" in no_count.message
    upper_only = check_sum_count_sensitivity(lambda lo, hi: hi + 1)
    assert not upper_only.passed and "negative" in upper_only.message
    for verdict in (replaced, upper_only):           # the formula is not given away
        assert "max(" not in verdict.message and "|lower|" not in verdict.message
    broken = check_sum_count_sensitivity(lambda lo, hi: 1 / 0)
    assert not broken.passed and "ZeroDivisionError" in broken.message


def test_interval() -> None:
    good = check_laplace_interval(lambda d, e, c: d / e * math.log(1 / (1 - c)))
    assert good.passed
    inverted = check_laplace_interval(lambda d, e, c: d / e * math.log(1 / c))
    assert not inverted.passed and "missing" in inverted.message
    doubled = check_laplace_interval(lambda d, e, c: d / e * math.log(2 / (1 - c)))
    assert not doubled.passed and "both tails" in doubled.message
    assert not check_laplace_interval(lambda d, e, c: "wide").passed


def test_laplace_interval_hint_uses_the_exercise_letter() -> None:
    """The exercise calls the half-width w (α is a false-positive rate in chapter 1)."""
    other = check_laplace_interval(lambda d, e, c: d / e)
    assert not other.passed and "for w" in other.message and "α" not in other.message


def test_mechanism_right_answers_pass() -> None:
    textbook = check_laplace_mechanism(lambda v, d, e, g: v + g.laplace(0.0, d / e))
    assert textbook.passed, str(textbook)
    inverse_cdf = check_laplace_mechanism(
        lambda v, d, e, g: v - d / e * np.sign(u := g.random() - 0.5) * np.log1p(-2 * abs(u)))
    assert inverse_cdf.passed, str(inverse_cdf)


def test_mechanism_mistakes_fail_with_hints() -> None:
    times = check_laplace_mechanism(lambda v, d, e, g: v + g.laplace(0.0, d * e))
    assert not times.passed and "Δ·ε" in times.message
    no_value = check_laplace_mechanism(lambda v, d, e, g: g.laplace(0.0, d / e))
    assert not no_value.passed and "centred" in no_value.message
    gaussian = check_laplace_mechanism(lambda v, d, e, g: v + g.normal(0.0, d / e))
    assert not gaussian.passed and "tails" in gaussian.message
    assert "generator.laplace" not in gaussian.message              # not the solution
    one_sided = check_laplace_mechanism(lambda v, d, e, g: v + g.exponential(d / e))
    assert not one_sided.passed and "symmetric" in one_sided.message
    vector = check_laplace_mechanism(lambda v, d, e, g: np.array([v, v]))
    assert not vector.passed and "not a finite number" in vector.message


def test_mechanism_audit_catches_a_sly_mistake() -> None:
    """Correct on the two KS test points, but too little noise when Δ = ε = 1."""

    def sly(v, d, e, g):
        scale = d / e if (d, e) != (1.0, 1.0) else 0.3
        return v + g.laplace(0.0, scale)

    verdict = check_laplace_mechanism(sly)
    assert not verdict.passed and "audit certifies" in verdict.message


def grid_noise_scale(sensitivity, epsilon, d, widening=None):
    g = 2.0 ** (math.floor(math.log2(sensitivity / d)) - 20)
    return (math.floor(sensitivity / g) + (d if widening is None else widening)) * g / epsilon


def test_grid_scale() -> None:
    good = check_grid_scale(grid_noise_scale)
    assert good.passed, str(good)
    textbook = check_grid_scale(lambda d, e, n: d / e)
    assert not textbook.passed and "textbook" in textbook.message
    units = check_grid_scale(lambda d, e, n: grid_noise_scale(d, e, n) * 2.0**20)
    assert not units.passed and "grid units" in units.message
    one = check_grid_scale(lambda d, e, n: grid_noise_scale(d, e, n, widening=1))
    assert not one.passed and "d coordinates" in one.message
    assert not check_grid_scale(lambda d, e, n: None).passed


def test_verdicts_do_not_give_the_answer_away() -> None:
    """A wrong answer's verdict never prints the expected value."""
    for verdict, answer in (
            (check_sum_count_sensitivity(lambda lo, hi: 7.0), "91"),
            (check_laplace_interval(lambda d, e, c: 1.0), "2.99"),
            (check_grid_scale(lambda d, e, n: 1.0), "2.0000019")):
        assert not verdict.passed
        assert answer not in str(verdict)


def test_mechanism_rounded_releases_are_named() -> None:
    """Rounded releases fail with a verdict that says they are rounded (student review 19:
    one decimal passed, and an integer rounding got a hint about the tails)."""
    for digits, step in ((1, "0.1"), (None, "1")):
        verdict = check_laplace_mechanism(
            lambda v, d, e, g, n=digits: round(v + g.laplace(0.0, d / e), n))
        assert not verdict.passed, str(verdict)
        assert "rounded" in verdict.message and f"multiples of {step}." in verdict.message
        assert "tails" not in verdict.message
    # dpkit's own mechanism (noise on a grid 2**-20·Δ fine) repeats a few values among
    # 4,000 releases, far fewer than the threshold: it is not taken for rounded.
    with dpkit.timing.unpadded():
        verdict = check_laplace_mechanism(
            lambda v, d, e, g: laplace_mechanism(v, d, e, rng=seeded(int(g.integers(2**32)))))
    assert verdict.passed, str(verdict)


def test_mechanism_audit_detail_explains_its_confidence() -> None:
    verdict = check_laplace_mechanism(lambda v, d, e, g: v + g.laplace(0.0, d / e))
    audit = [line for line in verdict.details if line.startswith("audit")]
    assert len(audit) == 1 and "wrong with probability at most 1e-7" in audit[0]


def test_grid_scale_names_a_grid_step_that_ignores_delta_and_d() -> None:
    """A step fixed at 2**-20 (right for Δ = d = 1 only) is named as the mistake."""
    def fixed_step(sensitivity, epsilon, d):
        return (math.floor(sensitivity * 2.0**20) + d) * 2.0**-20 / epsilon

    verdict = check_grid_scale(fixed_step)
    assert not verdict.passed and "Δ=91" in verdict.message
    assert "largest power of two" in verdict.message and "smaller" in verdict.message

    def doubled_step(sensitivity, epsilon, d):
        g = 2.0 ** (math.floor(math.log2(sensitivity / d)) - 19)
        return (math.floor(sensitivity / g) + d) * g / epsilon

    verdict = check_grid_scale(doubled_step)
    assert not verdict.passed and "(yours is larger)" in verdict.message


def test_the_grid_scale_solution_needs_its_guard_loops() -> None:
    """The example in the solution of ex-laplace-grid-scale: ``math.log2`` rounds
    ``2**10·(1 - 2**-53)`` to exactly 10.0, so ``floor(log2(·))`` gives 10 where the largest
    ``k`` with ``2**k <= x`` is 9 (and ``Δ = 2**30·(1 - 2**-53)``, ``d = 1`` hits it)."""
    x = 2.0**10 * (1 - 2.0**-53)
    assert math.log2(x) == 10.0
    assert 2.0**10 > x >= 2.0**9
    sensitivity = 2.0**30 * (1 - 2.0**-53)
    assert sensitivity * 2.0**-20 == x
    assert math.floor(math.log2(sensitivity * 2.0**-20 / 1)) == 10
