"""Tests of :mod:`dpkit.audit`: Clopper–Pearson bounds, certified ε, naive vs safe Laplace.

Validity tests audit mechanisms whose true ε is known at confidence ``1 - 1e-7``: the audit's
guarantee is that the bound exceeds the true ε with probability at most 1e-7, which is the
false-failure probability of those tests. Power tests state their own bound in a comment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpkit.laplace
import dpkit.naive
from dpkit.attacks import ReachableOnly
from dpkit.audit import (
    binned_chi_square,
    clopper_pearson,
    epsilon_from_counts,
    epsilon_lower_bound,
    strongest_lower_bound,
)
from dpkit.rng import seeded

STRICT = 1 - 1e-7


def randomized_response(epsilon: float):
    """Keep the bit with probability e**ε/(1+e**ε): exactly ε-DP (and no better)."""
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))

    def mechanism(bit: int, rng) -> int:
        return bit if rng.uniform() < keep else 1 - bit

    return mechanism


# ---------------------------------------------------------------------- intervals

def test_clopper_pearson_closed_forms() -> None:
    n, alpha = 50, 0.05
    lo, hi = clopper_pearson(0, n, 1 - alpha)
    assert lo == 0.0 and hi == pytest.approx(1 - (alpha / 2) ** (1 / n), rel=1e-12)
    lo, hi = clopper_pearson(n, n, 1 - alpha)
    assert hi == 1.0 and lo == pytest.approx((alpha / 2) ** (1 / n), rel=1e-12)
    lo, hi = clopper_pearson(10, 100, 0.95)
    assert stats.binom.sf(9, 100, lo) == pytest.approx(0.025, rel=1e-9)
    assert stats.binom.cdf(10, 100, hi) == pytest.approx(0.025, rel=1e-9)


def test_epsilon_from_counts_edge_cases() -> None:
    assert epsilon_from_counts(0, 100, 0, 100) == 0.0          # nothing observed
    assert epsilon_from_counts(50, 100, 50, 100) == 0.0        # no difference
    one_sided = epsilon_from_counts(100, 100, 0, 100)
    assert 0 < one_sided < math.inf
    assert epsilon_from_counts(1000, 1000, 0, 1000) > one_sided   # more runs, more certainty
    assert epsilon_from_counts(0, 100, 100, 100) == one_sided    # symmetric
    assert epsilon_from_counts(100, 100, 0, 100, delta=0.5) < one_sided
    # 900/1000 vs 100/1000: the bound is below the point estimate ln 9 and above 1.5
    bound = epsilon_from_counts(900, 1000, 100, 1000)
    assert 1.5 < bound < math.log(9)


def test_validation() -> None:
    with pytest.raises(ValueError, match="k"):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="confidence"):
        epsilon_from_counts(1, 2, 1, 2, confidence=1.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_from_counts(1, 2, 1, 2, delta=1.0)
    with pytest.raises(ValueError, match="n"):
        epsilon_lower_bound(randomized_response(1), 0, 1, bool, n=0)
    with pytest.raises(ValueError, match="events"):
        strongest_lower_bound(randomized_response(1), 0, 1, {}, n=10)
    with pytest.raises(ValueError, match="edges"):
        binned_chi_square([1.0, 2.0], lambda x: x, [2.0, 1.0])


# ----------------------------------------------------------------- known mechanisms

def test_audit_of_randomized_response_is_valid_and_tight() -> None:
    epsilon = 1.0
    bound = epsilon_lower_bound(randomized_response(epsilon), 0, 1, lambda y: y == 0,
                                n=20_000, confidence=STRICT, rng=seeded(1))
    assert bound <= epsilon
    # power: the point estimate is 1.0 and the CP half-widths at 1-1e-7 are about 0.017 on
    # each probability, so the bound is near 0.9; below 0.7 would need a 10-sigma deviation
    assert bound > 0.7


def test_naive_laplace_fails_its_audit() -> None:
    """The LSB event: certain from input 0, impossible from input 1."""
    epsilon = 1.0

    def naive(value, rng):
        return dpkit.naive.laplace_mechanism(value, 1.0, epsilon, rng=rng)

    event = ReachableOnly(0.0, 1.0, 1.0, epsilon)
    bound = epsilon_lower_bound(naive, 0.0, 1.0, event, n=2000, confidence=0.95, rng=seeded(2))
    # with ~60% vs 0 of 2000 runs the certified bound is about ln(0.6 / 0.0018) = 5.8;
    # falling under 4 would need the event rate from input 0 to drop below 11% (impossible
    # bar a 30-sigma deviation)
    assert bound > 4 * epsilon


def test_safe_laplace_passes_the_same_audit() -> None:
    epsilon = 1.0

    def safe(value, rng):
        return dpkit.laplace.laplace_mechanism(value, 1.0, epsilon, rng=rng)

    event = ReachableOnly(0.0, 1.0, 1.0, epsilon)
    result = strongest_lower_bound(safe, 0.0, 1.0, {"LSB": event, "> 0.5": lambda y: y > 0.5},
                                   n=1500, confidence=STRICT, rng=seeded(3))
    assert result.epsilon <= epsilon


def test_strongest_lower_bound_default_events() -> None:
    """Default thresholds find the location shift of a safe Laplace, without exceeding ε."""
    epsilon = 2.0

    def safe(value, rng):
        return dpkit.laplace.laplace_mechanism(value, 1.0, epsilon, rng=rng)

    result = strongest_lower_bound(safe, 0.0, 1.0, n=2000, confidence=STRICT, rng=seeded(4),
                                   progress=True)
    assert result.epsilon <= epsilon
    assert result.event.startswith("output >")
    # power: the best threshold event has true log-ratio near 1.4-2 at ε = 2; the strict
    # CP bound on 2000 runs is still above 0.5 unless a >5-sigma deviation occurs
    assert result.epsilon > 0.5
    assert "ε >=" in str(result)


def test_default_events_need_scalar_outputs() -> None:
    with pytest.raises(ValueError, match="events="):
        strongest_lower_bound(lambda d, rng: np.zeros(2), 0, 1, n=5, rng=seeded(5))
