"""The privacy profile, probabilistic vs approximate DP, Corollary 3.21 and the zCDP
conversion: the statements of the composition chapter, each checked numerically.

All tests are deterministic (no sampling), so none has a false-failure probability.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit import check
from dpkit.composition import (
    advanced,
    advanced_epsilon_per_mechanism,
    optimal_delta,
    zcdp_to_dp,
)
from dpkit.gaussian import analytic_sigma, delta_for_sigma
from dpkit.plots.composition import gaussian_privacy_loss, laplace_privacy_loss

mp.mp.dps = 40


# ------------------------------------------------------------------ thm-privacy-profile
@pytest.mark.parametrize("sigma,epsilon", [
    *((sigma, epsilon) for sigma in (0.3, 0.5, 1.0, 3.0) for epsilon in (0.01, 0.1, 0.5, 1.0, 2.0)),
    (10.0, 0.01), (10.0, 0.1), (10.0, 0.3),
])
def test_gaussian_profile_from_the_loss_matches_delta_for_sigma(sigma, epsilon):
    """Chapter: "E[(1 − e^(ε−L))₊] against delta_for_sigma ... largest relative gap" — the
    formula of thm-privacy-profile, integrated over L ~ N(ρ, 2ρ), is Balle & Wang's δ."""
    exact = delta_for_sigma(sigma, 1.0, epsilon)
    assert exact > 1e-12  # the grid stays where quadrature of the tail is accurate
    assert gaussian_privacy_loss(sigma).profile(epsilon) == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("epsilon0", [0.05, 0.5, 1.0, 3.0])
def test_laplace_loss_distribution_and_profile(epsilon0):
    loss = laplace_privacy_loss(epsilon0)
    continuous = float(mp.quad(lambda x: 0.25 * mp.exp((x - epsilon0) / 2),
                               [-epsilon0, epsilon0]))
    assert sum(p for _, p in loss.atoms) + continuous == pytest.approx(1.0, abs=1e-14)
    assert loss.tail(-math.inf) == pytest.approx(1.0, abs=1e-12)  # atoms + density
    for fraction in (0.0, 0.25, 0.5, 0.9, 0.999):
        epsilon = fraction * epsilon0
        closed = -math.expm1((epsilon - epsilon0) / 2)
        assert loss.profile(epsilon) == pytest.approx(closed, rel=1e-9)
    assert loss.profile(epsilon0) == 0.0  # the Laplace mechanism is epsilon0-DP
    assert loss.profile(2 * epsilon0) == 0.0


def test_laplace_loss_matches_the_densities_it_comes_from():
    """L(y) = (|y − Δ| − |y|)/b with y ~ Laplace(b): P[L > ℓ] from the noise distribution."""
    epsilon0 = 0.7
    scale = 1 / epsilon0  # Δ = 1
    loss = laplace_privacy_loss(epsilon0)
    for level in (-0.5, 0.0, 0.3, 0.69):
        # L > level  <=>  y < (1 - level * b) / 2 for y in (0, 1), plus the atom at y <= 0
        threshold = (1 - level * scale) / 2
        direct = 1 - 0.5 * math.exp(-threshold / scale)
        assert loss.tail(level) == pytest.approx(direct, rel=1e-9)


# ------------------------------------------------------------------ PDP vs (ε, δ)-DP
def test_gaussian_is_approx_dp_but_not_probabilistic_dp():
    """Chapter: "The mechanism is (1, 1e-5)-DP, yet its loss exceeds 1 about {pdp_ratio}
    times more often than 1e-5" (glued; here asserted to be more than ten times)."""
    sigma = analytic_sigma(1.0, 1.0, 1e-5)
    loss = gaussian_privacy_loss(sigma)
    assert delta_for_sigma(sigma, 1.0, 1.0) <= 1e-5
    assert loss.profile(1.0) <= 1e-5 * (1 + 1e-9)
    assert loss.tail(1.0) > 10 * 1e-5


@pytest.mark.parametrize("sigma", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("epsilon,gap", [(0.1, 0.05), (0.5, 0.5), (1.0, 1.0)])
def test_loss_tail_proposition(sigma, epsilon, gap):
    """prop-loss-tail: P[L > ε'] ≤ δ(ε) / (1 − e^(ε − ε')), and profile ≤ tail (PDP ⇒ DP)."""
    loss = gaussian_privacy_loss(sigma)
    delta = delta_for_sigma(sigma, 1.0, epsilon)
    assert loss.tail(epsilon + gap) <= delta / -math.expm1(-gap) * (1 + 1e-9)
    assert loss.profile(epsilon) <= loss.tail(epsilon)


# ------------------------------------------------------------------ Corollary 3.21
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 0.999999), st.floats(1e-300, math.exp(-0.5)), st.integers(1, 10**7))
def test_corollary_3_21_holds_under_the_stated_hypotheses(total, delta_prime, k):
    """cor-advanced-budget: for ε' < 1 and δ' ≤ e^(−1/2) the rule always succeeds."""
    epsilon = advanced_epsilon_per_mechanism(total, delta_prime, k)
    assert epsilon <= total / (2 * math.sqrt(2 * k * math.log(1 / delta_prime))) * (1 + 1e-12)
    assert advanced(epsilon, 0.0, k, delta_prime)[0] <= total


def test_corollary_3_21_needs_the_delta_prime_hypothesis():
    """Chapter: "with k = 1, δ' = 0.9 and ε' = 0.5 the rule gives ε ≈ 0.545, and the theorem's
    total is printed below. (That single mechanism is still (0.5, 0.9)-DP ...)"."""
    epsilon = 0.5 / (2 * math.sqrt(2 * math.log(1 / 0.9)))
    assert round(epsilon, 3) == 0.545
    assert advanced(epsilon, 0.0, 1, 0.9)[0] > 0.5
    assert optimal_delta(epsilon, 0.0, 1, 0.5) <= 0.9
    with pytest.raises(ValueError, match="delta_prime <= e"):
        advanced_epsilon_per_mechanism(0.5, 0.9, 1)


# ------------------------------------------------------------------ zCDP -> (ε, δ)
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 2.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3, 0.3])
def test_zcdp_to_dp_is_the_stated_bound_and_its_proof_step(rho, delta):
    """thm-zcdp-to-dp part 2, exactly as `zcdp_to_dp` computes it: ε = ρ + 2√(ρ ln(1/δ)),
    and the optimal order α = 1 + √(ln(1/δ)/ρ) makes the Markov bound exactly δ."""
    epsilon = zcdp_to_dp(rho, delta)
    r, d = mp.mpf(rho), mp.mpf(delta)
    exact = r + 2 * mp.sqrt(r * mp.log(1 / d))
    assert epsilon >= exact and epsilon <= exact * (1 + 1e-14)
    alpha = 1 + mp.sqrt(mp.log(1 / d) / r)
    assert mp.exp((alpha - 1) * (alpha * r - exact)) == pytest.approx(float(d), rel=1e-20)
    # no other order does better (g is convex in alpha; check neighbours)
    for other in (alpha * 0.9, 1 + (alpha - 1) * 1.1):
        assert r * other + mp.log(1 / d) / (other - 1) >= exact


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-2])
def test_zcdp_conversion_is_valid_for_the_gaussian(sigma, delta):
    """A Gaussian with ρ = Δ²/(2σ²) is ρ-zCDP; its exact δ at zcdp_to_dp(ρ, δ) is ≤ δ."""
    rho = 1 / (2 * sigma**2)
    epsilon = zcdp_to_dp(rho, delta)
    assert delta_for_sigma(sigma, 1.0, epsilon) <= delta


def test_gaussian_renyi_divergence_is_rho_alpha():
    """ex-comp-gaussian-zcdp: D_α(N(0,σ²) ‖ N(Δ,σ²)) = αΔ²/(2σ²), by quadrature."""
    sigma, shift = mp.mpf(1.3), mp.mpf(1)

    def integrand(y, alpha):
        return mp.npdf(y, 0, sigma) ** alpha * mp.npdf(y, shift, sigma) ** (1 - alpha)

    for alpha in (mp.mpf("1.5"), mp.mpf(2), mp.mpf(7)):
        integral = mp.quad(lambda y, a=alpha: integrand(y, a), [-mp.inf, 0, mp.inf])
        divergence = mp.log(integral) / (alpha - 1)
        assert divergence == pytest.approx(float(alpha * shift**2 / (2 * sigma**2)), rel=1e-15)


# ------------------------------------------------------------------ the new checker
def _right(epsilon, epsilon0):
    return 0.0 if epsilon >= epsilon0 else -math.expm1((epsilon - epsilon0) / 2)


def test_check_laplace_profile_accepts_the_profile_and_hides_it():
    assert check.check_laplace_profile(_right).passed
    wrong = {
        "no cut-off": lambda e, e0: -math.expm1((e - e0) / 2),
        "tail probability": lambda e, e0: 0.0 if e >= e0 else 1 - 0.5 * math.exp((e - e0) / 2),
        "pure-DP guess": lambda e, e0: 0.0 if e >= e0 else 1 - math.exp(e - e0),
        "raises": lambda e, e0: 1 / 0,
        "not a number": lambda e, e0: "0.1",
    }
    for name, fn in wrong.items():
        verdict = check.check_laplace_profile(fn)
        assert not verdict.passed, name
        assert "e^((" not in str(verdict) and "expm1" not in str(verdict), name
    assert "P[L > ε]" in check.check_laplace_profile(wrong["tail probability"]).message


# ------------------------------------------------------------------ doctests
@pytest.mark.parametrize("module", ["dpkit.plots.composition", "dpkit.check.composition",
                                    "dpkit.attacks.composition"])
def test_doctests_of_the_chapter_modules(module):
    import doctest
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert failures == 0
