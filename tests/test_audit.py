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
    guessing_bound,
    strongest_lower_bound,
    tradeoff_bound,
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


# ------------------------------------------------------ trade-off and guessing bounds

def _tight_pair(epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The four-outcome pair of Kairouz, Oh & Viswanath (2015) whose tests meet the bound."""
    p = (1 - delta) * math.exp(epsilon) / (1 + math.exp(epsilon))
    q = (1 - delta) / (1 + math.exp(epsilon))
    return np.array([delta, p, q, 0.0]), np.array([0.0, q, p, delta])


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [0.0, 1e-3, 0.2])
def test_tradeoff_bound_is_attained_and_never_beaten(epsilon: float, delta: float) -> None:
    on_d, on_d_prime = _tight_pair(epsilon, delta)
    # the pair is (ε, δ)-DP: every event obeys the definition (16 events, both orders)
    for mask in range(16):
        event = np.array([(mask >> i) & 1 for i in range(4)], dtype=bool)
        assert on_d[event].sum() <= math.exp(epsilon) * on_d_prime[event].sum() + delta + 1e-12
        assert on_d_prime[event].sum() <= math.exp(epsilon) * on_d[event].sum() + delta + 1e-12
    # every test obeys the bound, and the threshold tests "reject when the outcome index is
    # >= t" for t <= 3 lie on it (t = 4, never rejecting, is dominated by t = 3 when δ > 0)
    for mask in range(16):
        reject = np.array([(mask >> i) & 1 for i in range(4)], dtype=bool)
        alpha, beta = on_d[reject].sum(), on_d_prime[~reject].sum()
        assert beta >= tradeoff_bound(alpha, epsilon, delta) - 1e-12
    for t in range(4):
        alpha = on_d[t:].sum()
        beta = on_d_prime[:t].sum()
        assert beta == pytest.approx(tradeoff_bound(alpha, epsilon, delta), abs=1e-12)


def test_tradeoff_bound_shape_and_guessing_consistency() -> None:
    alphas = np.linspace(0, 1, 2001)
    for epsilon, delta in ((0.5, 0.0), (1.0, 0.01), (2.0, 0.3)):
        betas = np.array([tradeoff_bound(a, epsilon, delta) for a in alphas])
        assert betas[0] == pytest.approx(1 - delta) and betas[-1] == 0.0
        assert np.all(np.diff(betas) <= 1e-15)                       # non-increasing
        # the best guess minimises α + β; the grid contains the kink at (1-δ)/(1+e^ε)
        # only approximately, so allow the grid step
        best = 1 - np.min(alphas + betas) / 2
        assert best == pytest.approx(guessing_bound(epsilon, delta), abs=1e-3)
        assert best <= guessing_bound(epsilon, delta) + 1e-12


def test_guessing_bound_values_and_extremes() -> None:
    assert guessing_bound(1.0) == pytest.approx(math.e / (1 + math.e), rel=1e-15)
    assert guessing_bound(1.0, 0.5) == pytest.approx((math.e + 0.5) / (1 + math.e), rel=1e-15)
    assert guessing_bound(1000.0) == 1.0                              # no overflow
    assert guessing_bound(1e-300, 0.2) == pytest.approx(0.6)


def test_bounds_validate_their_arguments() -> None:
    with pytest.raises(ValueError, match="alpha"):
        tradeoff_bound(1.5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        tradeoff_bound(0.5, -1.0)
    with pytest.raises(ValueError, match="delta"):
        guessing_bound(1.0, 1.0)
    with pytest.raises((TypeError, ValueError), match="epsilon"):
        guessing_bound(float("nan"))


def test_randomized_response_guessing_meets_the_bound() -> None:
    """Guessing 'the report is the truth' is right with probability p = bound (ε = 1).

    With 400,000 reports the standard deviation of the accuracy is 7e-4; the test allows
    6 standard deviations (false-failure probability about 2e-9).
    """
    epsilon, n = 1.0, 400_000
    mechanism = randomized_response(epsilon)
    source = seeded(11)
    right = sum(mechanism(1, source) == 1 for _ in range(n // 2))
    right += sum(mechanism(0, source) == 0 for _ in range(n // 2))
    assert abs(right / n - guessing_bound(epsilon)) < 6 * 7e-4


def _one_sided(answer: bool, rng) -> bool:
    """Randomizes 'yes' answers only (the promise chapter's faulty survey): a 'yes' report
    proves a true 'yes'."""
    return bool(answer) and rng.uniform() < 0.73


@pytest.mark.parametrize("first", ["report yes", "report no"])
def test_a_tie_keeps_the_first_event_and_the_printout_names_the_certifying_one(first) -> None:
    """An event and its complement have the same bound; the audit keeps the one listed first
    (it used to pick by rounding noise), and when the complement certifies, the result says
    so and prints the complement's counts, not the chosen event's (student review of the
    promise chapter, finding 3). Deterministic: a seeded source."""
    events = {"report yes": bool, "report no": lambda report: not report}
    ordered = {first: events[first], **events}
    result = strongest_lower_bound(_one_sided, True, False, ordered, n=500, rng=seeded(8))
    assert result.event == first
    assert result.complement == (first == "report no")
    k0, k1 = result.counts
    yes0, yes1 = (k0, k1) if first == "report yes" else (result.n - k0, result.n - k1)
    assert yes1 == 0 < yes0  # a 'yes' report never comes from a true 'no'
    assert f": {yes0}/{result.n} vs 0/{result.n})" in str(result)
    named = "the complement of event 'report no'" if result.complement else "event 'report yes'"
    assert named in str(result)
    assert result.epsilon == epsilon_from_counts(k0, result.n, k1, result.n)
