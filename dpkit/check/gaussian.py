"""Checkers for the exercises of the Gaussian and analytic-Gaussian chapters.

Every checker is deterministic (fixed seeds and fixed test points) and returns a
:class:`~dpkit.check.Verdict` whose message says what was expected and what was found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.check._common import call as _call
from dpkit.check._common import number as _number
from dpkit.check._verdict import Verdict
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.plots.gaussian import vector_errors

__all__ = [
    "check_analytic_sigma",
    "check_classic_sigma",
    "check_crossover_dimension",
    "check_delta_for_sigma",
    "check_gaussian_noise",
    "check_l2_sensitivity",
]


def check_l2_sensitivity(fn: Callable[[int, float], float]) -> Verdict:
    """Check ``fn(k, c)``: the ℓ2 sensitivity of a vector query where one person changes at
    most ``k`` coordinates, each by at most ``c``. The answer is ``c·√k`` (the ℓ1
    sensitivity would be ``c·k``)."""
    details = []
    for k, c in ((1, 1.0), (4, 1.0), (10, 0.5), (100, 3.0), (2, 2.5)):
        got, error = _call(fn, k, c)
        if error:
            return Verdict(False, f"fn({k}, {c:g}) raised {error}", tuple(details))
        want = c * math.sqrt(k)
        value = _number(got)
        details.append(f"k={k}, c={c:g}: expected {want:.6g}, got {got!r}")
        if value is None or not math.isclose(value, want, rel_tol=1e-9):
            hint = ("that is the ℓ1 sensitivity c·k: the ℓ2 norm of a vector with k entries "
                    "equal to c is sqrt(k·c²)" if value is not None
                    and math.isclose(value, c * k, rel_tol=1e-9) else
                    "the worst change is a vector with k entries equal to c; take its ℓ2 norm")
            return Verdict(False, f"for k={k}, c={c:g} the ℓ2 sensitivity is {want:.6g}, got "
                           f"{got!r}; {hint}", tuple(details))
    return Verdict(True, "the ℓ2 sensitivity grows like √k, the ℓ1 sensitivity like k",
                   tuple(details))


def check_classic_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, delta)``: the classic σ = Δ·sqrt(2 ln(1.25/δ))/ε.

    Accepted when it matches :func:`dpkit.gaussian.classic_sigma` to 1e-9 relative on a grid
    of ε < 1, and raises ``ValueError`` for ε >= 1, where Theorem A.1 does not apply.
    """
    details = []
    for sensitivity, epsilon, delta in ((1.0, 0.5, 1e-5), (2.0, 0.1, 1e-3), (0.3, 0.9, 1e-9),
                                        (1.0, 0.01, 0.2)):
        got, error = _call(fn, sensitivity, epsilon, delta)
        if error:
            return Verdict(False, f"fn({sensitivity:g}, {epsilon:g}, {delta:g}) raised {error}",
                           tuple(details))
        want = classic_sigma(sensitivity, epsilon, delta)
        value = _number(got)
        details.append(f"Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g}: expected "
                       f"{want:.6g}, got {got!r}")
        if value is None or not math.isclose(value, want, rel_tol=1e-9):
            return Verdict(False, f"for Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g} the "
                           f"classic σ is {want:.6g}, got {got!r}", tuple(details))
    for epsilon in (1.0, 3.0):
        got, error = _call(fn, 1.0, epsilon, 1e-5)
        if error is None or not error.startswith("ValueError"):
            found = f"it returned {got!r}" if error is None else f"it raised {error}"
            return Verdict(False, f"at ε={epsilon:g} the classic calibration is not proven "
                           f"private: raise ValueError (pointing to the analytic Gaussian); "
                           f"{found}", tuple(details))
        details.append(f"ε={epsilon:g}: refused with {error}")
    return Verdict(True, "your classic σ is right, and you refuse ε ≥ 1 where its proof "
                   "does not hold", tuple(details))


def check_crossover_dimension(answer: Any, epsilon: float = 1.0, delta: float = 1e-5) -> Verdict:
    """Check the smallest dimension d at which the Gaussian mechanism (analytic σ, ℓ2
    sensitivity √d) adds less noise per coordinate than the Laplace mechanism (scale d/ε)."""
    want = next(d for d in range(1, 10_000)
                if vector_errors(d, epsilon, delta)[1] < vector_errors(d, epsilon, delta)[0])
    lap, gau = vector_errors(want, epsilon, delta)
    details = (f"at d={want}: Laplace std {lap:.4g}, Gaussian std {gau:.4g}",)
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, np.integer)):
        return Verdict(False, f"answer with an integer dimension, got {answer!r}", details)
    if int(answer) != want:
        direction = "too small" if answer < want else "too large"
        return Verdict(False, f"{answer} is {direction}: compare √2·d/ε with "
                       f"analytic_sigma(√d, ε, δ) for each d", details)
    return Verdict(True, f"from d = {want} on, the Gaussian mechanism adds less noise per "
                   f"coordinate (ε = {epsilon:g}, δ = {delta:g})", details)


# Test points (σ, Δ, ε) whose δ runs from ~0.5 down to ~1e-25.
_PROFILE_POINTS = ((0.5, 1.0, 1.0), (1.0, 1.0, 0.5), (2.0, 1.0, 1.0), (4.0, 1.0, 0.3),
                   (3.0, 1.0, 2.0), (8.0, 2.0, 1.5), (10.0, 1.0, 1.0), (30.0, 1.0, 0.2))


def check_delta_for_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sigma, sensitivity, epsilon)``: the Gaussian privacy profile δ(σ).

    Accepted when it agrees with :func:`dpkit.gaussian.delta_for_sigma` to 1e-6 relative at
    points where δ runs from about 0.5 down to 1e-25: a version built on 1 − erf fails the
    small ones.
    """
    details = []
    for sigma, sensitivity, epsilon in _PROFILE_POINTS:
        got, error = _call(fn, sigma, sensitivity, epsilon)
        if error:
            return Verdict(False, f"fn({sigma:g}, {sensitivity:g}, {epsilon:g}) raised {error}",
                           tuple(details))
        want = delta_for_sigma(sigma, sensitivity, epsilon)
        value = _number(got)
        details.append(f"σ={sigma:g}, Δ={sensitivity:g}, ε={epsilon:g}: expected {want:.6e}, "
                       f"got {got!r}")
        if value is None or not math.isclose(value, want, rel_tol=1e-6):
            hint = ("at such small δ, Φ computed as (1 + erf)/2 has no correct digits left: "
                    "use scipy.special.ndtr, or log_ndtr in log space" if want < 1e-12 else
                    "δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)")
            return Verdict(False, f"for σ={sigma:g}, Δ={sensitivity:g}, ε={epsilon:g} the "
                           f"profile is {want:.6e}, got {got!r}; {hint}", tuple(details))
    return Verdict(True, "your profile is accurate from δ ≈ 0.5 down to δ ≈ 1e-25",
                   tuple(details))


_SIGMA_POINTS = ((1.0, 1.0, 1e-5), (1.0, 0.1, 1e-3), (2.0, 5.0, 1e-8), (1.0, 0.5, 1e-12),
                 (0.5, 10.0, 1e-3), (1.0, 1.0, 1e-20))


def check_analytic_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, delta)``: the analytic Gaussian σ.

    Accepted when it is within 1e-6 relative of :func:`dpkit.gaussian.analytic_sigma` and
    never below it by more than 1e-9 relative (a smaller σ is not private), including at
    ε > 1 and at δ = 1e-20.
    """
    details = []
    for sensitivity, epsilon, delta in _SIGMA_POINTS:
        got, error = _call(fn, sensitivity, epsilon, delta)
        if error:
            return Verdict(False, f"fn({sensitivity:g}, {epsilon:g}, {delta:g}) raised {error}",
                           tuple(details))
        want = analytic_sigma(sensitivity, epsilon, delta)
        value = _number(got)
        details.append(f"Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g}: expected {want:.10g}, "
                       f"got {got!r}")
        if value is None or value <= 0:
            return Verdict(False, f"σ must be a positive number, got {got!r}", tuple(details))
        if value < want * (1 - 1e-9):
            true_delta = delta_for_sigma(value, sensitivity, epsilon)
            return Verdict(False, f"for Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g} your σ "
                           f"{value:.10g} is too small: its true δ is {true_delta:.6e} > "
                           f"{delta:g}. Return the upper end of your bracket", tuple(details))
        if value > want * (1 + 1e-6):
            return Verdict(False, f"for Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g} your σ "
                           f"{value:.10g} is private but larger than needed ({want:.10g}): "
                           f"tighten the search", tuple(details))
    return Verdict(True, "your calibration is tight and always on the safe side",
                   tuple(details))


def check_gaussian_noise(fn: Callable[[float, int, np.random.Generator], Any]) -> Verdict:
    """Check ``fn(sigma, size, generator)``: ``size`` draws of N(0, σ²) from a NumPy generator.

    Two Kolmogorov–Smirnov tests of 4,000 draws each (σ = 0.3 and σ = 4) against N(0, σ²)
    with fixed seeds; a correct function fails one with probability below 1e-6.
    """
    details = []
    for sigma, seed in ((0.3, 1), (4.0, 2)):
        got, error = _call(fn, sigma, 4000, np.random.default_rng(seed))
        if error:
            return Verdict(False, f"fn({sigma:g}, 4000, generator) raised {error}",
                           tuple(details))
        draws = np.asarray(got, dtype=float) if got is not None else np.empty(0)
        if draws.shape != (4000,) or not np.all(np.isfinite(draws)):
            return Verdict(False, f"expected an array of 4000 finite draws, got shape "
                           f"{draws.shape}", tuple(details))
        std = float(draws.std())
        pvalue = float(stats.kstest(draws / sigma, "norm").pvalue)
        details.append(f"σ={sigma:g}: sample std {std:.4f}, KS p-value {pvalue:.2g}")
        if pvalue < 5e-7:
            if math.isclose(std, sigma**2, rel_tol=0.1):
                hint = ("the spread is σ², not σ: numpy's normal(loc, scale) takes the "
                        "standard deviation, not the variance")
            else:
                hint = f"expected N(0, {sigma:g}²), the sample std is {std:.4f}"
            return Verdict(False, f"the draws do not follow N(0, σ²) at σ={sigma:g}: {hint}",
                           tuple(details))
    return Verdict(True, "your noise has standard deviation σ", tuple(details))
