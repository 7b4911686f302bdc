"""Unsafe textbook Gaussian mechanisms and calibrations: **never use these to release data**.

Each function reproduces a mistake found in real Gaussian-mechanism code, so that the
analytic-Gaussian chapter can show it failing through :func:`dpkit.gaussian.delta_for_sigma`:

* :func:`gaussian_mechanism` adds floating-point NumPy noise with the classic σ, and applies
  the classic formula outside the range ε < 1 where it is proven;
* :func:`gaussian_mechanism_variance_bug` passes the variance σ² where NumPy's
  ``normal(loc, scale)`` expects the standard deviation;
* :func:`analytic_sigma_erf` solves the analytic equation with Φ(t) = (1 + erf(t/√2))/2,
  whose cancellation makes δ(σ) numerically zero below δ ≈ 1e-17 and noise-dominated well
  before that, so the solver stops too early and returns too little noise;
* :func:`analytic_sigma_wrong_sqrt` solves the analytic equation in the variable
  z = (εσ/Δ − Δ/2σ)/√2 with sqrt(z² + 1) where sqrt(z² + ε) belongs;
* :func:`analytic_sigma_newton` solves the same equation, in the form of Bao et al. (2021),
  by plain floating-point Newton iteration on G(x) = e^ε·F(√(x² + ε)) − F(x), with
  F(x) = ∫₀ˣ e^{−t²} dt, and by default with a mistaken derivative that circulates in
  informal notes on this method, e^ε·e^{−x²−1}·x/√(x² + 1) − e^{2x²} (three independent
  errors: ε → 1 twice, e^{−x²} → e^{2x²}), instead of e^{−x²}(x/√(x² + ε) − 1).

The safe versions are in :mod:`dpkit.gaussian`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import erf, log_ndtr

from dpkit._checks import check_delta, check_epsilon, check_finite_array, check_sensitivity
from dpkit.gaussian import analytic_sigma
from dpkit.rng import resolve

__all__ = [
    "analytic_sigma_erf",
    "analytic_sigma_newton",
    "analytic_sigma_wrong_sqrt",
    "gaussian_mechanism",
    "gaussian_mechanism_variance_bug",
    "newton_iterates",
]


def _add_float_noise(value: Any, scale: float, rng: Any) -> float | np.ndarray:
    """Return ``value + N(0, scale²)`` drawn by NumPy in floating point (the unsafe part)."""
    array = check_finite_array(value, "value")
    generator = resolve(rng).numpy_generator()
    noisy = array + generator.normal(0.0, scale, size=array.shape)
    return float(noisy) if noisy.ndim == 0 else noisy


def _checked(sensitivity: Any, epsilon: Any, delta: Any) -> tuple[float, float, float]:
    """``(sensitivity, epsilon, delta)`` checked as the safe versions check them."""
    return check_sensitivity(sensitivity), check_epsilon(epsilon), check_delta(delta)


def gaussian_mechanism(value: Any, sensitivity: Any, epsilon: Any, delta: Any,
                       rng: Any = None) -> float | np.ndarray:
    """**Unsafe.** The textbook Gaussian mechanism: ``value + N(0, σ²)`` with the classic σ.

    σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Theorem A.1), applied for every ε > 0
    although the theorem needs ε < 1, and the noise is a floating-point NumPy draw.

    Parameters
    ----------
    value : float or array_like
        The true query answer (a vector query has ℓ2 sensitivity ``sensitivity``).
    sensitivity : float
        ℓ2 sensitivity Δ.
    epsilon, delta : float
        Target privacy parameters.
    rng : None or dpkit.rng.RandomSource
        Seeds NumPy's generator (secure default source if None).

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    TypeError, ValueError
        On invalid parameters, as the safe version.

    Privacy
    -------
    For ε < 1, (ε, δ)-DP in exact arithmetic only; floating-point noise leaks through its
    low-order bits (Mironov 2012; Jin et al. 2022 for Gaussian noise). For ε ≥ 1 no theorem
    applies; in exact arithmetic the σ stays private up to ε ≈ 7.5–9.6 for δ between 1e-3
    and 1e-9 (earlier for larger δ, later for smaller) and under-noises beyond: at ε = 10,
    δ = 1e-3 the true δ is above 3e-3 (see :func:`dpkit.gaussian.delta_for_sigma`).

    References
    ----------
    C. Dwork and A. Roth, 2014, Theorem A.1.
    """
    sensitivity, epsilon, delta = _checked(sensitivity, epsilon, delta)
    sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    return _add_float_noise(value, sigma, rng)


def gaussian_mechanism_variance_bug(value: Any, sensitivity: Any, epsilon: Any, delta: Any,
                                    rng: Any = None) -> float | np.ndarray:
    """**Unsafe.** Analytic σ, but passed to NumPy as the variance: noise N(0, σ⁴).

    ``numpy.random.Generator.normal(loc, scale)`` takes the standard deviation; passing
    ``sigma**2`` gives noise of standard deviation σ². Whenever σ < 1 (small sensitivity
    or large ε) that is less noise than needed.

    Parameters
    ----------
    value : float or array_like
        The true query answer.
    sensitivity : float
        ℓ2 sensitivity Δ.
    epsilon, delta : float
        Target privacy parameters.
    rng : None or dpkit.rng.RandomSource
        Seeds NumPy's generator.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    TypeError, ValueError
        On invalid parameters.

    Privacy
    -------
    (ε, δ') with δ' = ``delta_for_sigma(sigma**2, sensitivity, epsilon)`` (exact arithmetic),
    which exceeds δ whenever σ < 1.
    """
    sigma = analytic_sigma(sensitivity, epsilon, delta)
    return _add_float_noise(value, sigma**2, rng)   # the bug: scale must be sigma


def _bisect_decreasing(profile: Callable[[float], float], delta: float) -> float:
    """Smallest σ/Δ on a 1e-12 relative grid with ``profile(σ/Δ) <= delta``, by bisection.

    The textbook solver: it trusts ``profile`` completely.
    """
    low, high = 1e-6, 1.0
    while profile(high) > delta:
        low, high = high, 2.0 * high
        if high > 1e12:
            raise ValueError(f"no sigma/sensitivity below 1e12 reaches delta={delta!r}")
    while profile(low) <= delta and low > 1e-300:
        low /= 2.0
    while high - low > 1e-12 * high:
        mid = 0.5 * (low + high)
        if profile(mid) > delta:
            low = mid
        else:
            high = mid
    return high


def analytic_sigma_erf(sensitivity: Any, epsilon: Any, delta: Any) -> float:
    """**Unsafe.** Analytic Gaussian σ with Φ(t) = (1 + erf(t/√2))/2: cancellation at small δ.

    Solves δ(σ) = δ by bisection with the profile written as a difference of two normal
    CDFs, each computed as ``0.5 * (1 + erf(t / sqrt(2)))``. For t below about −8.3,
    ``1 + erf`` is a difference of two numbers within 1e-16 of each other and rounds to
    0, and the profile is dominated by rounding noise long before: below δ ≈ 1e-13 the
    solver accepts a σ whose true δ is larger than requested. This is dpkit's
    re-implementation of the approach, with a relative stopping rule; the reference code of
    Balle and Wang also stops on an *absolute* tolerance |δ(σ) − δ| ≤ 1e-12, which on its
    own makes every target δ below about 1e-12 unattainable.

    Parameters
    ----------
    sensitivity, epsilon, delta : float
        As :func:`dpkit.gaussian.analytic_sigma`.

    Returns
    -------
    float
        A σ that is correct to ~1e-12 for moderate δ and too small for tiny δ.

    Raises
    ------
    TypeError, ValueError
        On invalid parameters.

    Privacy
    -------
    Gaussian noise with this σ is (ε, δ')-DP for δ' = ``delta_for_sigma(σ, Δ, ε)``, which
    exceeds δ when δ is below about 1e-13.

    References
    ----------
    B. Balle and Y.-X. Wang, ICML 2018: the equation solved is their Theorem 8.
    """
    sensitivity, epsilon, delta = _checked(sensitivity, epsilon, delta)
    root_half = math.sqrt(0.5)

    def phi(t: float) -> float:
        return 0.5 * (1.0 + float(erf(t * root_half)))

    def profile(ratio: float) -> float:
        a, b = 0.5 / ratio, epsilon * ratio
        return phi(a - b) - math.exp(epsilon) * phi(-a - b)

    return _bisect_decreasing(profile, delta) * sensitivity


def analytic_sigma_wrong_sqrt(sensitivity: Any, epsilon: Any, delta: Any) -> float:
    """**Unsafe.** Analytic Gaussian σ solved with sqrt(z² + 1) in place of sqrt(z² + ε).

    With z = (εσ/Δ − Δ/2σ)/√2 the profile reads δ = ½erfc(z) − e^ε·½erfc(sqrt(z² + ε)),
    because (εσ/Δ + Δ/2σ)² − (εσ/Δ − Δ/2σ)² = 2ε. Writing 1 for ε under the root (a
    derivation done at ε = 1 and never generalised) is exact at ε = 1 only: for ε > 1 it
    over-estimates the subtracted term, so the solver believes a too small σ suffices.
    Everything else is done carefully in log space.

    Parameters
    ----------
    sensitivity, epsilon, delta : float
        As :func:`dpkit.gaussian.analytic_sigma`.

    Returns
    -------
    float
        σ = Δ·(x + sqrt(x² + 2ε))/(2ε) for the z = x/√2 solving the mistaken equation.

    Raises
    ------
    TypeError, ValueError
        On invalid parameters.

    Privacy
    -------
    (ε, δ')-DP with δ' = ``delta_for_sigma(σ, Δ, ε)`` > δ for ε > 1.
    """
    sensitivity, epsilon, delta = _checked(sensitivity, epsilon, delta)

    def profile(ratio: float) -> float:
        x = epsilon * ratio - 0.5 / ratio
        wrong_y = math.sqrt(x * x + 2.0)   # the mistake: sqrt(2)·sqrt(z² + 1)
        log_p = float(log_ndtr(-x))
        log_r = epsilon + float(log_ndtr(-wrong_y)) - log_p
        return math.exp(log_p) * -math.expm1(log_r) if log_r < 0 else 0.0

    return _bisect_decreasing(profile, delta) * sensitivity


_DERIVATIVES = ("source", "correct")
_EXP_LIMIT = 709.0   # math.exp overflows float64 just above 709.78


def newton_iterates(epsilon: float, delta: float, *, derivative: str = "source",
                    max_iterations: int = 100) -> list[float]:
    """**Unsafe.** The Newton iterates x₀ = 0, x₁, … for χ, in plain floating point.

    Solves G(x) = (√π/2)(2δ − 1 + e^ε), which is erfc(x) − e^ε·erfc(√(x² + ε)) = 2δ
    rewritten with F(x) = ∫₀ˣ e^{−t²} dt = (√π/2)·erf(x), in plain floating point. The
    iteration stops when a step is below 1e-12·(1 + |x|), when an iterate is not finite, or
    after ``max_iterations`` steps. With ``derivative="source"`` the term e^{2x²} overflows
    float64 once an iterate passes |x| ≈ 18.8 (this happens for ε = 3, where the wrong
    derivative changes sign); the list then ends with ``nan``.

    Parameters
    ----------
    epsilon, delta : float
        Target privacy parameters (ε > 0, 0 < δ < 1).
    derivative : {"source", "correct"}
        ``"source"``: G'(x) written as e^ε·e^{−x²−1}·x/√(x² + 1) − e^{2x²} (wrong: it
        circulates in informal notes on this method);
        ``"correct"``: G'(x) = e^{−x²}(x/√(x² + ε) − 1).
    max_iterations : int
        Maximum number of Newton steps.

    Returns
    -------
    list of float
        The iterates, starting with x₀ = 0.

    Raises
    ------
    TypeError, ValueError
        On invalid parameters.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if derivative not in _DERIVATIVES:
        raise ValueError(f"derivative must be one of {list(_DERIVATIVES)}, got {derivative!r}")
    half_root_pi = 0.5 * math.sqrt(math.pi)
    target = half_root_pi * (2.0 * delta - 1.0 + math.exp(epsilon))
    x = 0.0
    iterates = [x]
    for _ in range(max_iterations):
        s = math.sqrt(x * x + epsilon)
        value = math.exp(epsilon) * half_root_pi * float(erf(s)) \
            - half_root_pi * float(erf(x)) - target
        if derivative == "source":   # the mistake (it circulates in informal notes)
            if 2.0 * x * x > _EXP_LIMIT:   # e^{2x²} overflows float64: the iteration breaks down
                iterates.append(math.nan)
                break
            slope = (math.exp(epsilon) * math.exp(-x * x - 1.0) * x / math.sqrt(x * x + 1.0)
                     - math.exp(2.0 * x * x))
        else:
            slope = math.exp(-x * x) * (x / s - 1.0)
        step = value / slope
        x -= step
        iterates.append(x)
        if not math.isfinite(x) or abs(step) < 1e-12 * (1.0 + abs(x)):
            break
    return iterates


def analytic_sigma_newton(sensitivity: Any, epsilon: Any, delta: Any, *,
                          derivative: str = "source", max_iterations: int = 100) -> float:
    """**Unsafe.** Analytic Gaussian σ from the last Newton iterate of :func:`newton_iterates`.

    σ = Δ/(√2(√(χ² + ε) − χ)) at the final iterate χ (Bao et al. 2021, Lemma 2.4). With the
    mistaken derivative, |G'| is overestimated by a factor that grows like e^{3x²}, so the
    steps shrink long before the root: for ε below about 2.47 the iteration crawls and stops
    at a χ far too small, and the σ returned is too small. For larger ε the wrong derivative
    turns positive on part of [0, 3], so steps can go the wrong way: at ε = 3 an iterate
    jumps far out and e^{2x²} overflows (``nan``), at ε = 5 the iterates first move away
    from the root (measured in ``book/analytic_gaussian.md``).
    Even with the correct derivative the plain-float G has no correct digits left at small
    δ (it is a difference of numbers near (√π/2)(e^ε − 1)); :func:`dpkit.gaussian.bao_sigma`
    solves the same equation safely.

    Parameters
    ----------
    sensitivity, epsilon, delta : float
        As :func:`dpkit.gaussian.analytic_sigma`.
    derivative : {"source", "correct"}
        See :func:`newton_iterates`.
    max_iterations : int
        Maximum number of Newton steps.

    Returns
    -------
    float
        The σ of the last iterate (``nan`` if the iteration broke down: an iterate that is
        not finite, or an overflow of the mistaken derivative).

    Raises
    ------
    TypeError, ValueError
        On invalid parameters.

    Privacy
    -------
    (ε, δ')-DP with δ' = ``delta_for_sigma(σ, Δ, ε)``; with the mistaken derivative δ' is
    orders of magnitude above δ.

    References
    ----------
    E. Bao, Y. Yang, X. Xiao and B. Ding, PVLDB 14(11), 2021, Lemma 2.4 (the equation).
    """
    sensitivity = check_sensitivity(sensitivity)
    chi = newton_iterates(epsilon, delta, derivative=derivative,
                          max_iterations=max_iterations)[-1]
    if not math.isfinite(chi):
        return math.nan
    s = math.sqrt(chi * chi + float(epsilon))
    return sensitivity / (math.sqrt(2.0) * (s - chi))
