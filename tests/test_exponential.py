"""Tests of dpkit.exponential: Eta, compute_precision, probabilities, the mechanism.

Statistical tests: each chi-square test below rejects when its p-value is below 1e-7, so a
correct sampler fails it with probability at most 1e-7 (chi-square approximation with every
expected count ≥ 5 after merging bins); the file runs 8 such tests, a false-failure
probability ≤ 8e-7 < 1e-6 (union bound). Seeds are fixed, so the outcome is reproducible.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from myst_text import exercise_text  # tests/ is on sys.path under pytest
from scipy import stats

from dpkit._exact import as_fraction
from dpkit._samplers.base2 import full_precision_sample
from dpkit.datasets import load_adult
from dpkit.exponential import (
    DEFAULT_MAX_PRECISION,
    Eta,
    InexactArithmeticError,
    base2_exponential_mechanism,
    compute_precision,
    probabilities,
)
from dpkit.rng import seeded

ALPHA = 1e-7     # per chi-square test; see the module docstring


def chi_square_pvalue(samples: list[int], expected: tuple[Fraction, ...]) -> float:
    """Chi-square goodness of fit, bins with expected count < 5 merged into one."""
    n = len(samples)
    counts = np.bincount(samples, minlength=len(expected)).astype(float)
    assert counts.size == len(expected), "sampler returned an index out of range"
    means = np.array([float(p) * n for p in expected])
    big = means >= 5
    observed = [*counts[big], counts[~big].sum()]
    predicted = [*means[big], means[~big].sum()]
    if predicted[-1] < 5:      # fold a small remainder into the largest bin
        largest = int(np.argmax(predicted[:-1]))
        observed[largest] += observed.pop()
        predicted[largest] += predicted.pop()
    return float(stats.chisquare(observed, predicted).pvalue)


# --------------------------------------------------------------------------------------
# Eta


def test_eta_exact_base_and_reduction() -> None:
    assert Eta(1, 1).eta == 1.0
    assert Eta(3, 2, 2).base == Fraction(9, 16)
    assert Eta(6, 4, 2).reduced() == (9, 6)        # (6/16)**2 = 36/256 = 9/64
    assert Eta(1, 3, 2).reduced() == (1, 6)
    assert "1243" in str(Eta.from_epsilon(1.0))


@pytest.mark.parametrize("kwargs, error", [
    (dict(x=0, y=2), ValueError), (dict(x=4, y=2), ValueError), (dict(x=1, y=0), ValueError),
    (dict(x=1, y=1, z=0), ValueError), (dict(x=1.0, y=1), TypeError),
    (dict(x=1, y=True), TypeError), (dict(x="1", y=1), TypeError),
])
def test_eta_validation(kwargs: dict, error: type) -> None:
    with pytest.raises(error, match=r"(x|y|z) must be"):
        Eta(**kwargs)


def reference_epsilon(eta: Eta, sensitivity: int) -> mp.mpf:
    x, y = eta.reduced()
    with mp.workdps(60):
        return 2 * sensitivity * (y * mp.log(2) - mp.log(x))


@pytest.mark.parametrize("epsilon", [1e-6, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 300.0])
@pytest.mark.parametrize("sensitivity", [1, 3])
@pytest.mark.parametrize("bits", [4, 10, 20])
def test_from_epsilon_is_safe_and_maximal(epsilon: float, sensitivity: int, bits: int) -> None:
    eta = Eta.from_epsilon(epsilon, sensitivity, bits=bits)
    assert eta.x % 2 == 1 and eta.z == 1
    # Safe: the rounded-up guarantee and the 60-digit truth are both within the budget.
    assert eta.epsilon(sensitivity) <= epsilon
    assert reference_epsilon(eta, sensitivity) <= epsilon
    # Maximal within the documented family: one step larger η exceeds the budget.
    target = epsilon / (2 * math.log(2) * sensitivity)
    y0 = bits + max(0, math.ceil(target), math.ceil(-math.log2(target)))
    x0 = eta.x << (y0 - eta.y)
    if x0 > 1:
        assert Eta(x0 - 1, y0).epsilon(sensitivity) > epsilon
    # And the budget is used well: relative shortfall ≲ 2**-bits / (η ln 2), with margin.
    assert eta.epsilon(sensitivity) >= epsilon * (1 - 4 * 2.0 ** -bits / min(target, 1))


@pytest.mark.parametrize(("epsilon", "sensitivity", "bits"), [
    (1.0, 1e6, 64),          # y = 85: the old walk took about 2**31 steps (~9 hours)
    (1e-300, 2**40, 53),     # y = 1091: 2**1038 steps
    (0.5, 1, 64),            # y = 66: about 2**12 steps
    (5e-324, 1, 64),         # y = 1139, η about 2**-1075
    (300.0, 3, 64)])         # η* > 1: y = 137, x has 65 bits, about 2**12 steps
def test_from_epsilon_walks_a_few_steps_to_the_documented_eta(
        monkeypatch: pytest.MonkeyPatch, epsilon: float, sensitivity: float, bits: int) -> None:
    """The search starts from ``⌈2**y·exp(-ε/2Δ)⌉`` computed exactly, so it checks a
    handful of candidates, whatever ``y``.

    It used to round that start to 53 bits (``gmpy2.ceil`` outside the precise context),
    then walk one unit at a time, up to ``2**(y - 53)`` steps:
    ``Eta.from_epsilon(1.0, 1e6, bits=64)`` would have run about nine hours. Counted here
    as calls of the guarantee's evaluation (no timing); the old code failed at the 17th.
    """
    import dpkit.exponential_eta as module

    calls: list[tuple[int, int, int]] = []
    evaluate = module._epsilon_upper

    def counted(x: int, y: int, delta: int) -> float:
        calls.append((x, y, delta))
        assert len(calls) <= 16, "the search walks one unit at a time from a far start"
        return evaluate(x, y, delta)

    monkeypatch.setattr(module, "_epsilon_upper", counted)
    eta = Eta.from_epsilon(epsilon, sensitivity, bits=bits)
    assert len(calls) <= 3
    monkeypatch.undo()
    # The documented result: the smallest x (largest η) of the family x·2**-y0, y0 fixed
    # by the docstring's formula, whose guarantee does not exceed epsilon.
    delta = math.ceil(sensitivity)
    log2_target = math.log2(epsilon) - math.log2(2 * math.log(2)) - math.log2(delta)
    y0 = bits + max(0, math.ceil(2.0**log2_target), math.ceil(-log2_target))
    x0 = eta.x << (y0 - eta.y)
    assert eta.x % 2 == 1 and eta.z == 1
    assert Eta(x0, y0).epsilon(sensitivity) <= epsilon
    assert Eta(x0 - 1, y0).epsilon(sensitivity) > epsilon
    with mp.workdps(1200):  # η can be 2**-1076: y - log2(x) cancels that many bits
        exact = 2 * delta * (y0 * mp.log(2) - mp.log(x0))
        assert exact <= epsilon < 2 * delta * (y0 * mp.log(2) - mp.log(x0 - 1))


@pytest.mark.parametrize("eta", [Eta(1, 1), Eta(3, 2, 5), Eta(1243, 11), Eta(2**40 - 1, 40)])
def test_epsilon_rounds_up_tightly(eta: Eta) -> None:
    for sensitivity in (1, 2, 7):
        exact = reference_epsilon(eta, sensitivity)
        value = eta.epsilon(sensitivity)
        assert value >= exact
        assert value - exact <= 4 * math.ulp(value)


def test_epsilon_uses_rounded_sensitivity() -> None:
    # After randomized rounding a loss of sensitivity 0.5 can move by 1: charged as 1.
    eta = Eta(3, 2)
    assert eta.epsilon(0.5) == eta.epsilon(1) == eta.epsilon()
    assert eta.epsilon(1.5) == eta.epsilon(2)
    with pytest.raises(ValueError, match="sensitivity must be"):
        eta.epsilon(0)
    with pytest.raises(ValueError, match="epsilon must be"):
        Eta.from_epsilon(float("nan"))
    with pytest.raises(ValueError, match="bits must be"):
        Eta.from_epsilon(1.0, bits=0)


# --------------------------------------------------------------------------------------
# compute_precision


def test_analytic_precision_formula() -> None:
    eta = Eta(1243, 11)     # X = 1243 odd, Y = 11
    assert compute_precision(0, 10, 5, eta) == 11 * 10 + 3
    assert compute_precision(-2.5, 7.25, 1000, eta) == 11 * (8 + 3) + 10
    assert compute_precision(3, 3, 1, eta) == 2
    assert compute_precision(0, 4, 8, Eta(6, 4, 2)) == 6 * 4 + 4     # reduced: 9 / 2**6


@pytest.mark.parametrize("eta, low, high, n", [
    (Eta(3, 2), 0, 5, 7), (Eta(1243, 11), -3, 12, 100), (Eta(1, 1), 0, 200, 3),
    (Eta.from_epsilon(0.3), 0, 40, 1000)])
def test_empirical_precision_is_a_doubling_at_least_the_analytic(eta, low, high, n) -> None:
    analytic = compute_precision(low, high, n, eta)
    empirical = compute_precision(low, high, n, eta, method="empirical")
    assert empirical >= analytic
    assert empirical // 53 == 2 ** round(math.log2(empirical // 53))   # 53 · 2**j
    assert empirical < 2 * analytic or empirical == 53


def test_analytic_precision_is_sufficient_and_tight() -> None:
    eta, n = Eta(1243, 11), 5
    worst = [0, 0, 0, 0, 9]                      # n - 1 heaviest weights and the lightest
    p = compute_precision(0, 9, n, eta)
    rng = seeded(3)
    for method in ("full", "fast"):
        base2_exponential_mechanism(worst, eta, utility_min=0, utility_max=9, rng=rng,
                                    method=method, precision=p)
    # Tight: one bit fewer and the exact arithmetic traps (the internal sampler, since the
    # mechanism refuses p - 1 up front).
    with pytest.raises(InexactArithmeticError, match="rounded"):
        full_precision_sample(np.array([0, 0, 0, 0, 9]), *eta.reduced(), p - 1, rng)


@pytest.mark.parametrize("method", ["fast", "full", "search"])
@pytest.mark.parametrize("utilities", [[0, 0, 0, 0, 9], [0, 1, 2, 3, 4], [5, 5, 5, 5, 5]])
def test_precision_below_the_bound_is_refused_whatever_the_data(method, utilities) -> None:
    # Issue 9, finding 7: precision=2 used to pass the fast path and fail the full path on
    # the same public inputs, so raising depended on the data. Now every method refuses a
    # precision below the analytic bound before looking at the utilities.
    eta = Eta(1243, 11)
    p = compute_precision(0, 9, 5, eta)
    for bits in (2, p - 1):
        with pytest.raises(ValueError, match=f"precision must be at least {p} bits.*got {bits}"):
            base2_exponential_mechanism(utilities, eta, utility_min=0, utility_max=9,
                                        method=method, precision=bits, rng=seeded(1))
    assert 0 <= base2_exponential_mechanism(utilities, eta, utility_min=0, utility_max=9,
                                            method=method, precision=p, rng=seeded(1)) < 5


@pytest.mark.parametrize("arguments, error, message", [
    (dict(x=3, y=2, z=10**400), ValueError, "z must be an integer in"),
    (dict(x=3, y=2**21), ValueError, "y·z must be at most"),
    (dict(x=3, y=2**10, z=2**11), ValueError, "y·z must be at most"),
    (dict(x=Fraction(3), y=2), TypeError, "x must be an integer"),
    (dict(x=3, y=2.0), TypeError, "y must be an integer"),
    (dict(x=4, y=2), ValueError, "x must be an integer in"),
])
def test_eta_refuses_out_of_range_parameters(arguments, error, message) -> None:
    with pytest.raises(error, match=message):
        Eta(**arguments)


@pytest.mark.parametrize("call, error, message", [
    (lambda: Eta.from_epsilon(1e300), ValueError, "must be at most"),
    (lambda: Eta.from_epsilon(float("nan")), ValueError, "epsilon"),
    (lambda: Eta(3, 2).epsilon(10**400), ValueError, "sensitivity"),
    (lambda: Eta(3, 2).epsilon(float("nan")), ValueError, "sensitivity"),
])
def test_eta_conversions_refuse_extreme_values(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("utilities, error, message", [
    ([0, 2**60 + 1], ValueError, r"utilities\[1\] = 1152921504606846977"),
    (np.array([0, 2**60 + 1]), ValueError, r"utilities\[1\]"),
    ([0, 10**400], ValueError, r"utilities\[1\]"),
    ([0, Fraction(1, 3)], ValueError, "exactly representable"),
    (np.array([0, 1], dtype=np.longdouble) / 3, ValueError, "exactly representable"),
    ([0.0, True], TypeError, "booleans"),
    ([0.0, float("nan")], ValueError, "finite"),
])
def test_mechanism_refuses_inexact_or_odd_utilities(utilities, error, message) -> None:
    for method in ("fast", "full", "search"):
        with pytest.raises(error, match=message):
            base2_exponential_mechanism(utilities, Eta(3, 2), utility_min=0, utility_max=1,
                                        method=method, rng=seeded(0))


@pytest.mark.parametrize("bounds, message", [
    ((0, 10**400), "utility_max must be a real number within"),
    ((Fraction(1, 3), 1), "utility_min must be a real number within"),
    ((0, 2**53), "within ±2\\*\\*53"),
])
def test_mechanism_refuses_inexact_bounds(bounds, message) -> None:
    with pytest.raises(ValueError, match=message):
        base2_exponential_mechanism([0, 1], Eta(3, 2), utility_min=bounds[0],
                                    utility_max=bounds[1], rng=seeded(0))


def test_exact_edge_values_are_accepted() -> None:
    # Subnormal fractions, exact Fractions and float32 values are exact doubles: accepted.
    for utilities in ([0, 5e-324], [0, Fraction(1, 2)], np.array([0, 0.1], dtype=np.float32)):
        assert base2_exponential_mechanism(utilities, Eta(3, 2), utility_min=0,
                                           utility_max=Fraction(1), rng=seeded(0)) in (0, 1)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(0, 30), st.integers(-5, 5),
       st.sampled_from([Eta(1, 1), Eta(3, 2), Eta(1243, 11), Eta(6, 4, 2), Eta(5, 3, 3)]),
       st.integers(0, 2**32 - 1))
def test_analytic_precision_suffices_for_every_vector(n, span, low, eta, seed) -> None:
    # Worst case (n - 1 losses at the bottom, one at the top) and a random vector: the
    # full-precision sampler never meets an inexact operation at the analytic precision.
    p = compute_precision(low, low + span, n, eta)
    random = np.random.default_rng(seed).uniform(low - 1, low + span + 1, size=n)
    for losses in ([low] * (n - 1) + [low + span], random):
        base2_exponential_mechanism(losses, eta, utility_min=low, utility_max=low + span,
                                    method="full", precision=p, rng=seeded(seed))


def test_precision_errors() -> None:
    eta = Eta(3, 2)
    with pytest.raises(InexactArithmeticError, match="max_precision"):
        compute_precision(0, 10**6, 10, eta, max_precision=1000)
    with pytest.raises(ValueError, match="method must be"):
        compute_precision(0, 1, 2, eta, method="guess")
    with pytest.raises(ValueError, match="max_outcomes must be"):
        compute_precision(0, 1, 0, eta)
    with pytest.raises(ValueError, match="utility bounds must satisfy"):
        compute_precision(2, 1, 2, eta)
    with pytest.raises(TypeError, match="eta must be"):
        compute_precision(0, 1, 2, 0.5)


def test_sampling_grid_check_raises_even_when_sums_are_exact() -> None:
    # Weights 1, 1/2, 1/2 (base 1/2) sum exactly to 2 at 1 bit, but a 1-bit grid on [0, 2)
    # cannot separate the cumulative weight 1.5: the draw would be biased, so it raises.
    from dpkit._samplers import base2 as sampling
    with pytest.raises(InexactArithmeticError, match="too small to sample exactly"):
        sampling.full_precision_sample(np.array([0, 1, 1]), 1, 1, 1, seeded(0))
    assert sampling.full_precision_sample(np.array([0, 1, 1]), 1, 1, 2, seeded(0)) in (0, 1, 2)


# --------------------------------------------------------------------------------------
# probabilities


def test_probabilities_small_cases() -> None:
    half = Eta(1, 1)
    assert probabilities([0, 1], half) == (Fraction(2, 3), Fraction(1, 3))
    # 0.5 rounds to 0 or 1 with probability 1/2 each: (1/2 + 2/3) / 2 = 7/12.
    assert probabilities([0, 0.5], half) == (Fraction(7, 12), Fraction(5, 12))
    # Clamping to [0, 2]: 100 acts as 2, -5 as 0.
    assert probabilities([-5, 100], half, utility_min=0, utility_max=2) == (
        Fraction(4, 5), Fraction(1, 5))
    # Shift invariance: only differences of losses matter.
    assert probabilities([10, 11, 13], Eta(3, 2)) == probabilities([0, 1, 3], Eta(3, 2))


def test_probabilities_sum_to_one_and_refuse_too_many_roundings() -> None:
    p = probabilities(np.linspace(0, 3, 9), Eta(5, 3))
    assert sum(p) == 1 and all(v > 0 for v in p)
    with pytest.raises(ValueError, match="non-integer"):
        probabilities(np.arange(20) + 0.5, Eta(5, 3))


def test_laplace_as_exponential_mechanism() -> None:
    # u(o) = |f(d) - o| on an integer grid gives the two-sided geometric (discrete Laplace).
    eta, f = Eta(3, 2), 4
    grid = np.arange(-20, 30)
    p = probabilities(np.abs(f - grid), eta)
    b = eta.base
    weights = [b ** abs(f - o) for o in grid]
    assert p == tuple(w / sum(weights) for w in weights)
    # The chapter's claim: between f = 0 and f = 1 the largest ratio is 2**η, not the
    # generic 2**(2η), up to the edge of the finite grid [-40, 40] (a factor 1 + b**40).
    grid = np.arange(-40, 41)
    p0, p1 = probabilities(np.abs(grid), eta), probabilities(np.abs(1 - grid), eta)
    ratio = max(max(a / c, c / a) for a, c in zip(p0, p1, strict=True))
    assert 1 / b <= ratio <= (1 + b ** 40) / b


# --------------------------------------------------------------------------------------
# Privacy: exact probability ratios on neighbouring inputs


def _ratio_bound_holds(u: list[float], v: list[float], eta: Eta, sensitivity: int,
                       low: float, high: float) -> bool:
    """P_u(i) ≤ 2**(2ηΔ) P_v(i) for all i, checked exactly: P_u(i) · b**(2Δ) ≤ P_v(i)."""
    p = probabilities(u, eta, utility_min=low, utility_max=high)
    q = probabilities(v, eta, utility_min=low, utility_max=high)
    factor = eta.base ** (2 * sensitivity)
    return all(a * factor <= c and c * factor <= a for a, c in zip(p, q, strict=True))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(-4, 4)), min_size=1, max_size=6),
       st.sampled_from([Eta(1, 1), Eta(3, 2), Eta(1243, 11), Eta(5, 3, 2)]))
def test_privacy_ratio_with_random_rounding(pairs: list[tuple[int, int]], eta: Eta) -> None:
    # Losses on a quarter grid (so some are non-integers), neighbours moving by ≤ 1: the
    # randomized rounding must keep every probability ratio within 2**(2η·1).
    u = [a / 4 for a, _ in pairs]
    v = [a / 4 + s / 4 for a, s in pairs]
    assert _ratio_bound_holds(u, v, eta, 1, -1.0, 11.0)


def test_privacy_ratio_sensitivity_two_and_clamping() -> None:
    eta = Eta(3, 2)
    rng = np.random.default_rng(7)
    for _ in range(40):
        u = rng.integers(-5, 15, size=5).astype(float)
        v = u + rng.integers(-2, 3, size=5)
        assert _ratio_bound_holds(list(u), list(v), eta, 2, 0.0, 10.0)
    # The check can fail: a loss moving by 6 exceeds what Δ = 1 allows.
    assert not _ratio_bound_holds([0, 0], [0, 6], eta, 1, 0.0, 10.0)


# --------------------------------------------------------------------------------------
# The mechanism: exact distribution (both methods), validation


CASES = {
    "integers, clamped": ([0, 1, 2, 3.5, 10], Eta.from_epsilon(1.0), 0, 8),
    "negatives, fractions": ([-3.25, 0, 0.75, 2, 2, -4.5], Eta(3, 2), -4, 4),
    "u(o) = o": (list(range(60)), Eta.from_epsilon(2.0), 0, 60),
    "tiny fractions": ([0, 2.0**-70, 1 - 2.0**-60, 1], Eta(1, 1), 0, 1),
}


@pytest.mark.parametrize("method", ["fast", "full"])
@pytest.mark.parametrize("case", list(CASES))
def test_output_distribution_is_exact(case: str, method: str) -> None:
    utilities, eta, low, high = CASES[case]
    expected = probabilities(utilities, eta, utility_min=low, utility_max=high)
    rng = seeded(list(CASES).index(case) * 2 + (method == "full"))
    samples = [base2_exponential_mechanism(utilities, eta, utility_min=low, utility_max=high,
                                           rng=rng, method=method) for _ in range(12000)]
    assert chi_square_pvalue(samples, expected) > ALPHA


def test_default_rng_and_reproducibility() -> None:
    u, eta = [0, 1, 2], Eta(3, 2)
    assert base2_exponential_mechanism(u, eta, utility_min=0, utility_max=2) in (0, 1, 2)
    a = [base2_exponential_mechanism(u, eta, utility_min=0, utility_max=2, rng=seeded(4))
         for _ in range(5)]
    b = [base2_exponential_mechanism(u, eta, utility_min=0, utility_max=2, rng=seeded(4))
         for _ in range(5)]
    assert a == b
    assert base2_exponential_mechanism([7.3], eta, utility_min=0, utility_max=9) == 0


@pytest.mark.parametrize("utilities, error, message", [
    ([0, float("nan")], ValueError, "utilities must hold finite numbers only, got nan"),
    ([0, float("inf")], ValueError, "finite"),
    ([], ValueError, "utilities must not be empty"),
    ([[0, 1]], ValueError, "dimension"),
    ("abc", TypeError, "utilities must be"),
    ([0, None], TypeError, "utilities must hold real numbers"),
    ([Fraction(1, 3), 0], ValueError, "exactly representable"),
])
def test_mechanism_rejects_bad_utilities(utilities, error, message) -> None:
    with pytest.raises(error, match=message):
        base2_exponential_mechanism(utilities, Eta(3, 2), utility_min=0, utility_max=1)
    with pytest.raises(error, match=message):
        probabilities(utilities, Eta(3, 2))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(utility_min=2, utility_max=1), ValueError, "lower <= upper"),
    (dict(utility_min=float("nan"), utility_max=1), ValueError, "finite"),
    (dict(utility_min=0, utility_max=2.0**60), ValueError, "2\\*\\*53"),
    (dict(eta=0.5), TypeError, "eta must be a dpkit.exponential.Eta"),
    (dict(method="exact"), ValueError, "method must be one of"),
    (dict(precision=1.5), TypeError, "precision must be an integer"),
    (dict(precision=1), ValueError, "precision must be"),
    (dict(max_outcomes=1), ValueError, "max_outcomes must be"),
    (dict(rng=42), TypeError, "rng must be"),
])
def test_mechanism_rejects_bad_parameters(kwargs, error, message) -> None:
    arguments = dict(utilities=[0, 1], eta=Eta(3, 2), utility_min=0, utility_max=1) | kwargs
    with pytest.raises(error, match=message):
        base2_exponential_mechanism(**arguments)


@pytest.mark.parametrize("method", ["fast", "full", "search"])
@pytest.mark.parametrize("precision", [DEFAULT_MAX_PRECISION + 1, 2**62, 10**400],
                         ids=["2**27+1", "2**62", "10**400"])
def test_precision_is_bounded_before_the_clock_starts(monkeypatch, method, precision) -> None:
    """F9: the precision sets the deadline; 2**50 bits made a release wait for months and
    2**62 raised a bare OverflowError from the wait. It is refused, with its range, before
    the clock starts (run_padded is never reached)."""
    import dpkit.exponential as module

    monkeypatch.setattr(module, "run_padded",
                        lambda *args: pytest.fail("the clock started before validation"))
    message = rf"precision must be an integer in \[2, {DEFAULT_MAX_PRECISION}\], got "
    with pytest.raises(ValueError, match=message):
        base2_exponential_mechanism([0, 1], Eta(3, 2), utility_min=0, utility_max=1,
                                    method=method, precision=precision)


def test_the_largest_precision_is_accepted_and_cannot_lift_the_analytic_limit() -> None:
    """The limit is inclusive, and it is the analytic bound's own: an explicit precision
    no longer raises the ceiling on the analytic bound (it used to, up to any size)."""
    eta = Eta(3, 2)
    assert base2_exponential_mechanism([0, 1], eta, utility_min=0, utility_max=1,
                                       precision=DEFAULT_MAX_PRECISION, rng=seeded(0)) in (0, 1)
    wide = 2**26                                      # analytic bound 2·2**26 + 2 > 2**27
    with pytest.raises(InexactArithmeticError, match="max_precision=134217728"):
        base2_exponential_mechanism([0, 1], eta, utility_min=0, utility_max=wide,
                                    precision=DEFAULT_MAX_PRECISION, rng=seeded(0))


def test_fractions_that_are_floats_are_accepted() -> None:
    p = probabilities([Fraction(1, 2), Fraction(0)], Eta(1, 1))
    assert p == (Fraction(5, 12), Fraction(7, 12))
    assert base2_exponential_mechanism([Fraction(1, 2), 0], Eta(1, 1), utility_min=0,
                                       utility_max=1, rng=seeded(0)) in (0, 1)


# --------------------------------------------------------------------------------------
# Chapter claims: the utility theorem and Proposition 3.6, checked exactly


@pytest.mark.parametrize("epsilon", [0.01, 0.1])
def test_utility_theorem_holds_exactly_on_the_occupation_counts(epsilon) -> None:
    # Chapter, "The utility theorem": exact P[B] ≤ e^-t, with 2Δ/ε replaced by 1/(η ln 2).
    counts = np.array([4140, 4099, 4066, 3770, 3650, 3295, 2002, 1597, 1370, 994, 928, 649,
                       149, 9])
    eta = Eta.from_epsilon(epsilon)
    exact = probabilities(-counts.astype(float), eta, utility_min=-40000, utility_max=0)
    for t in (0.5, 1.0, 2.0, 4.0):
        c = (math.log(counts.size) + t) / (eta.eta * math.log(2))
        bad = counts <= counts.max() - c
        assert sum(p for p, b in zip(exact, bad, strict=True) if b) <= math.exp(-t)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 8000), min_size=2, max_size=8),
       st.sampled_from([Eta(3, 2), Eta(1243, 11), Eta(1, 1)]))
def test_rounding_moves_probabilities_by_less_than_two_eta(thousandths, eta) -> None:
    # Chapter, Proposition "Randomized rounding changes each probability by at most 2^±2η".
    losses = [v / 1000 for v in thousandths]
    rounded = probabilities(losses, eta, utility_min=0, utility_max=8)
    mp.mp.dps = 60
    base = mp.mpf(eta.base.numerator) / eta.base.denominator
    weights = [base ** mp.mpf(u) for u in losses]
    bound = mp.mpf(2) ** (2 * mp.mpf(eta.eta))
    for r, w in zip(rounded, weights, strict=True):
        ratio = (mp.mpf(r.numerator) / r.denominator) / (w / sum(weights))
        assert 1 / bound < ratio < bound


def test_exact_budgets_and_sensitivities_round_in_the_safe_direction() -> None:
    # Issue 9, finding 6 for this module: float(Fraction(1, 10)) is above 1/10.
    for budget in (Fraction(1, 10), Fraction(1, 3), Fraction(7, 5), np.longdouble("0.1")):
        eta = Eta.from_epsilon(budget)
        assert Fraction(eta.epsilon()) <= as_fraction(budget, "budget")
    just_above_two = Fraction(2 * 10**30 + 1, 10**30)        # float() would give 2.0
    assert Eta(3, 2).epsilon(just_above_two) == Eta(3, 2).epsilon(3)
    assert Eta(3, 2).epsilon(np.longdouble(2) + np.finfo(np.longdouble).eps * 2) \
        == Eta(3, 2).epsilon(3)


@pytest.mark.parametrize("y", [2**53 + 1, 2**64, 10**400, 10**5000],
                         ids=["2**53+1", "2**64", "10**400", "10**5000"])
def test_eta_with_a_huge_y_is_refused_without_building_2_to_the_y(y) -> None:
    """Issue 9: x's range 2**y was built before y·z was checked (MemoryError, 'too many
    digits'). A ``y`` beyond Python's int-to-str limit (4,300 digits) is summarised in the
    message (:func:`dpkit._exact.describe`), which ``repr`` could not print."""
    with pytest.raises(ValueError, match="y·z must be at most"):
        Eta(1, y)


def test_an_eta_crosses_the_grading_wire_by_value() -> None:
    """The sandbox's wire sends an Eta as its integers and rebuilds it from the module that
    defines it (moving the class without the wire's entry made it unsendable)."""
    from dpkit.course.wire import decode, encode

    eta = Eta(3, 2, 5)
    sent = encode(eta)
    assert sent["$obj"][0] == "Eta"
    assert decode(sent) == eta


@pytest.mark.parametrize("epsilon, sensitivity", [
    (0.5, 1.7976931348623157e308), (0.5, np.int64(2**62)), (5e-324, 1),
    (5e-324, 1.7976931348623157e308), (1.0, np.int64(3))])
def test_from_epsilon_at_the_extremes_is_safe_and_tight(epsilon, sensitivity) -> None:
    """Issue 9: a huge sensitivity gave 'math domain error', np.int64(2**62) wrapped to a
    negative epsilon and hung. The base is now found to within one unit, and its ε is
    computed without cancellation (log1p), so it is both safe and close to the budget."""
    eta = Eta.from_epsilon(epsilon, sensitivity)
    spent = eta.epsilon(sensitivity)
    assert 0 < spent <= epsilon
    assert spent >= epsilon * (1 - 2**-8)
    with mp.workdps(3000):  # η can be 2**-2000: y - log2(x) cancels that many bits
        exact = -2 * eta.z * mp.log(mp.mpf(eta.x) / mp.mpf(2) ** eta.y) * math.ceil(
            Fraction(sensitivity))
        assert mp.mpf(spent) >= exact


def test_eta_epsilon_of_a_sensitivity_beyond_the_float_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"sensitivity=.* is too large"):
        Eta(1, 1).epsilon(1.7976931348623157e308)


@pytest.mark.parametrize("utilities", [[-2.0**40, 0], [816773.119063142, 0.5]])
def test_probabilities_refuse_weights_too_wide_to_compute(utilities) -> None:
    """Issue 9: [-2**40, 0] raised MemoryError (2**40-bit weights); the second hung."""
    with pytest.raises(ValueError, match="MAX_PROBABILITY_BITS"):
        probabilities(utilities, Eta(1, 1))


def test_ragged_utilities_are_refused_naming_the_parameter() -> None:
    with pytest.raises(ValueError, match="utilities must be a rectangular array"):
        probabilities([[1.0], 2.0], Eta(1, 1))
    with pytest.raises(ValueError, match="utilities must be a rectangular array"):
        base2_exponential_mechanism([[1.0], 2.0], Eta(1, 1), utility_min=0, utility_max=2)


@pytest.mark.parametrize("method", ["fast", "full", "search"])
def test_precision_8_for_range_8_is_refused_for_every_vector(method) -> None:
    """The brief's example: [0,0,0,0] returned and [0,8,8,8] raised with precision=8."""
    for utilities in ([0, 0, 0, 0], [0, 8, 8, 8]):
        with pytest.raises(ValueError, match="precision must be at least 11 bits"):
            base2_exponential_mechanism(utilities, Eta(1, 1), utility_min=0, utility_max=8,
                                        precision=8, method=method, rng=seeded(0))


def test_median_solution_numbers() -> None:
    """The claims and numbers of ex-exp-median (exponential chapter): the loss's sensitivity
    (1 under add/remove, 2 under substitution, by brute force on small datasets), the
    median's move of 73, the utility bound, and the precision of the exact mechanism."""
    from itertools import combinations_with_replacement

    text = exercise_text("exponential_base2", "ex-exp-median")

    def loss(data: tuple[int, ...], o: int) -> int:
        return abs(sum(x < o for x in data) - sum(x > o for x in data))

    ages = range(17, 22)   # a small domain: every dataset of up to 4 ages, every outcome
    datasets = [d for n in range(5) for d in combinations_with_replacement(ages, n)]
    added = max(abs(loss(d, o) - loss((*d, x), o)) for d in datasets for x in ages for o in ages)
    swapped = max(abs(loss(d, o) - loss((*d[1:], x), o))
                  for d in datasets if d for x in ages for o in ages)
    assert (added, swapped) == (1, 2)
    assert (loss((17, 17), 50), loss((17, 90), 50)) == (2, 0)

    def lower_median(data: tuple[int, ...]) -> int:
        return sorted(data)[math.ceil(len(data) / 2) - 1]

    assert lower_median((17, 90)) == 17 and lower_median((17, 90, 90)) == 90
    c = 2 / 0.5 * (math.log(74) + math.log(20))
    assert c == pytest.approx(4 * math.log(1480)) and round(c, 1) == 29.2
    assert c / 32_561 < 0.001
    eta = Eta.from_epsilon(0.5)
    assert eta == Eta(1595, 11) and eta.reduced() == (1595, 11) and (74).bit_length() == 7
    assert compute_precision(0, 2**16, 74, eta) == 11 * 65536 + 7 == 720_903
    largest = (DEFAULT_MAX_PRECISION - 7) // 11
    assert DEFAULT_MAX_PRECISION == 2**27 and largest == 12_201_611
    assert compute_precision(0, largest, 74, eta) == DEFAULT_MAX_PRECISION
    with pytest.raises(InexactArithmeticError, match="above max_precision"):
        compute_precision(0, largest + 1, 74, eta)
    for printed in ("1595", "4 \\ln 1480 \\approx 29.2", "720{,}903", "12{,}201{,}611",
                    "134{,}217{,}721/11"):
        assert printed in text, printed
    # on Adult only the median age meets the bound
    adult = tuple(int(x) for x in load_adult()["age"])
    ages_adult = np.array(adult)
    losses = {o: abs(int((ages_adult < o).sum()) - int((ages_adult > o).sum()))
              for o in range(17, 91)}
    best = min(losses.values())
    assert (best, lower_median(adult), losses[36], losses[38]) == (57, 37, 1813, 1628)
    assert [o for o in losses if losses[o] <= best + c] == [37]
    # the substitution variant of part 3
    substitution = Eta.from_epsilon(0.5, 2)
    assert substitution == Eta(3615, 12) and substitution.reduced() == (3615, 12)
    assert compute_precision(0, 2**16, 74, substitution) == 12 * 65536 + 7 == 786_439
    # more than N rows: losses above utility_max are clamped to it (the same distribution)
    eta = Eta.from_epsilon(0.5)
    assert (probabilities([0, 5, 10, 20, 90], eta, utility_min=0, utility_max=10)
            == probabilities([0, 5, 10, 10, 10], eta, utility_min=0, utility_max=10))
    for printed in ("$\\mathrm{OPT} = 57$, at the median age 37", "losses 1813 and 1628",
                    "only age 37 meets the bound", "`Eta(3615, 12)`", "$786{,}439$ bits",
                    "(whose $n$ is the number of outcomes, here 74)",
                    "a loss above $N$ counts as $N$", "whether $\\lvert D\\rvert > N$"):
        assert printed in text, printed
    assert "$n$ of the data" not in text and "\\lceil n/2" not in text   # rows: |D|, not n
