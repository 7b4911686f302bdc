"""The numbers typed on the errata page (a plain Markdown page, not executed) are checked here.

Each test names the row and the sentence it asserts.
"""

from __future__ import annotations

import math
from pathlib import Path

from scipy.optimize import brentq

from dpkit.gaussian import delta_for_sigma

ERRATA = (Path(__file__).resolve().parent.parent / "book" / "errata.md").read_text()


def test_classic_gaussian_row() -> None:
    """"at ε = 10, δ = 10^{-3} the true δ is 3.4 × 10^{-3}"."""
    assert r"the true $\delta$ is $3.4 \times 10^{-3}$" in ERRATA
    sigma = math.sqrt(2 * math.log(1.25 / 1e-3)) / 10
    assert f"{delta_for_sigma(sigma, 1.0, 10.0):.1e}" == "3.4e-03"


def test_advanced_composition_plot_row() -> None:
    """"it crosses kε at k ≈ 73.7 for every ε" (2ε√(2k ln(1/δ)) = kε at k = 8 ln(1/δ), δ = 1e-4);
    "Theorem 3.20 at ε = 1 never beats kε" (its second term alone is k(e − 1) > k)."""
    assert r"$k \approx 73.7$" in ERRATA
    assert f"{8 * math.log(1 / 10e-5):.1f}" == "73.7"
    assert math.e - 1 > 1


def test_dwork_roth_example_row() -> None:
    """"Theorem 3.20 then gives a total of 1.0143, not 1; the exact inversion is 1/812.3"."""
    assert "a total of 1.0143" in ERRATA and "$1/812.3$" in ERRATA
    k, delta_prime = 10_000, math.exp(-32)

    def total(eps0: float) -> float:
        return math.sqrt(2 * k * math.log(1 / delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)

    assert f"{total(1 / 801):.4f}" == "1.0143"
    assert f"{1 / brentq(lambda e: total(e) - 1, 1e-6, 1e-2):.1f}" == "812.3"


def test_newton_derivative_row() -> None:
    """"The wrong one has the right sign only for ε below about 2.47"; "at ε = 1, δ = 10^{-5}
    the iteration stops after 100 steps at σ = 1.89 (true δ 9.6 × 10^{-3})"; "at ε = 3 an
    iterate is thrown far out and e^{2x²} overflows"; "at ε = 5 the iteration stops at
    σ = 0.550 (true δ 1.4 × 10^{-2})"."""
    import numpy as np

    from dpkit import naive

    assert "only for $\\varepsilon$ below about 2.47" in ERRATA
    xs = np.linspace(0.0, 3.0, 30_001)

    def wrong_max(epsilon: float) -> float:
        return float((np.exp(epsilon - xs**2 - 1) * xs / np.sqrt(xs**2 + 1)
                      - np.exp(2 * xs**2)).max())

    assert wrong_max(2.465) < 0 < wrong_max(2.475)
    iterates = naive.newton_iterates(1.0, 1e-5)
    sigma = naive.analytic_sigma_newton(1.0, 1.0, 1e-5)
    assert len(iterates) == 101 and f"{sigma:.2f}" == "1.89"
    assert r"$\sigma = 1.89$ (true $\delta$ $9.6 \times 10^{-3}$)" in ERRATA
    assert f"{delta_for_sigma(sigma, 1.0, 1.0):.1e}" == "9.6e-03"
    thrown = naive.newton_iterates(3.0, 1e-5)
    assert math.isnan(thrown[-1]) and abs(thrown[-2]) > 18.8
    assert math.isnan(naive.analytic_sigma_newton(1.0, 3.0, 1e-5))
    sigma5 = naive.analytic_sigma_newton(1.0, 5.0, 1e-5)
    assert f"{sigma5:.3f}" == "0.550"
    assert r"$\sigma = 0.550$ (true $\delta$ $1.4 \times 10^{-2}$)" in ERRATA
    assert f"{delta_for_sigma(sigma5, 1.0, 5.0):.1e}" == "1.4e-02"


def test_erf_row() -> None:
    """"the solved σ loses digits by δ = 10^{-12}, and from 10^{-17} on it no longer depends
    on δ, so the true δ exceeds the target by orders of magnitude"."""
    from dpkit import naive
    from dpkit.gaussian import analytic_sigma

    at = {d: naive.analytic_sigma_erf(1.0, 1.0, d) for d in (1e-12, 1e-17, 1e-20, 1e-25)}
    assert at[1e-12] != analytic_sigma(1.0, 1.0, 1e-12)
    assert at[1e-17] == at[1e-20] == at[1e-25]
    assert delta_for_sigma(at[1e-25], 1.0, 1.0) / 1e-25 > 1e6
