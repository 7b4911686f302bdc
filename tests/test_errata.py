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
