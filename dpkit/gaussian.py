"""The Gaussian mechanism: classic and analytic calibration, the privacy profile, a safe sampler.

Adding Gaussian noise N(0, σ²I) to a query ``f`` whose ℓ2 sensitivity is
``Δ`` gives (ε, δ)-differential privacy for every pair (ε, δ) on the mechanism's *privacy
profile* (Balle & Wang 2018, Theorem 8)::

    δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε · Φ(−Δ/2σ − εσ/Δ).

This module offers

* :func:`classic_sigma`: the textbook calibration of Dwork & Roth (2014), Theorem A.1,
  proven only for ε < 1;
* :func:`delta_for_sigma`: the exact profile above, evaluated with log-space normal CDFs and
  rounded up;
* :func:`analytic_sigma`: the smallest σ whose profile is at most δ (Balle & Wang 2018,
  Theorem 8 and Algorithm 1), rounded up;
* :func:`gaussian_mechanism`: the mechanism itself, floating-point safe: exact discrete
  Gaussian noise (Canonne, Kamath & Steinke 2020) on a power-of-two grid.

Numerical policy
----------------
Every returned privacy quantity is rounded in the safe direction: σ up, δ up. The profile is
computed as ``exp(L1) * -expm1(log r)`` with ``L1 = log Φ(-x)``, ``log r = ε + log Φ(-y) - L1``
(``x = εσ/Δ - Δ/2σ``, ``y = εσ/Δ + Δ/2σ``), using :func:`scipy.special.log_ndtr`, so that no
difference of two nearly equal probabilities is ever formed and no tail underflows. A
first-order model of the floating-point error of that evaluation (each elementary error
counted once, times a slack of 16) is added before the result is returned. It is a model,
not a proof: the tests confirm against 50- and 60-digit references, on grids of ε, σ and δ
(and at random points), that ``delta_for_sigma`` never under-reports δ and ``analytic_sigma``
never returns a σ whose true δ exceeds the target.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import erfc, erfcx, log_ndtr

from dpkit._checks import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_integer,
    check_sensitivity,
    check_shape,
)
from dpkit._exact import describe
from dpkit._samplers.grid import grid_sensitivity, noisy_values
from dpkit._samplers.noise import discrete_gaussian
from dpkit.rng import resolve
from dpkit.timing import Cost, Deadline, kind_of, run_padded

__all__ = ["RANGE_SIGMAS", "GaussianParameters", "analytic_sigma", "bao_sigma", "classic_sigma",
           "delta_for_sigma", "gaussian_mechanism", "mechanism_parameters"]

#: The worst cost of :func:`gaussian_mechanism` (see :mod:`dpkit.timing`; measured by
#: ``benchmarks/deadlines.py`` over adversarial inputs).
COST = Cost(fixed=5.0, per_value=0.06, large=6.0, per_vector_value=110.0, per_object=1.2)

_UNIT = 2.0**-53  # unit roundoff of IEEE double
_SQRT_HALF = math.sqrt(0.5)
# Slack on the first-order error bound of the profile evaluation: the bound counts each
# elementary error once; real libm/scipy errors are a few units in the last place, and
# the tests compare against a 60-digit mpmath reference to confirm the bound holds.
_ERROR_SLACK = 16.0


def _up(x: float) -> float:
    """The next float above ``x`` (turns a round-to-nearest result into an upper bound)."""
    return math.nextafter(x, math.inf)


def _down(x: float) -> float:
    """The next float below ``x``."""
    return math.nextafter(x, -math.inf)


def _log_profile(ratio: float, epsilon: float) -> tuple[float, float]:
    """Return ``(log δ, err)`` for σ/Δ = ``ratio``: the profile's log and a bound on its error.

    ``err`` bounds the absolute error of the returned ``log δ`` (a relative error of δ).
    With ``x = b - a`` and ``y = b + a`` (``a = Δ/2σ``, ``b = εσ/Δ``), δ = Φ(−x)·(1 − r) with
    ``r = e^ε Φ(−y) / Φ(−x)``. ``log Φ(−x)`` comes from :func:`scipy.special.log_ndtr`.
    For ``x >= 0``, ``log r`` is computed from the scaled complementary error function
    ``erfcx(t) = e^{t²} erfc(t)``: since ``y² − x² = 4ab = 2ε`` exactly, the Gaussian
    factors cancel on paper and ``r = erfcx(y/√2) / erfcx(x/√2)``, which keeps ``1 − r``
    accurate when it is small (large σ, small ε). For ``x < 0``, r is far from 1 and
    ``log r = ε + log Φ(−y) − log Φ(−x)`` is used.
    """
    a = 0.5 / ratio              # Δ / 2σ
    b = epsilon * ratio          # εσ / Δ
    x = b - a
    y = b + a
    log_p = float(log_ndtr(-x))  # log Φ(Δ/2σ − εσ/Δ)
    if log_p == -math.inf:       # x > 1e154: δ <= Φ(−x) < exp(−1e308)
        return -math.inf, 0.0
    # a and b carry one rounding each, x and y one more: their absolute error is at most
    # `shift`. d log Φ(−t)/dt lies in [−(|t| + 1), 0].
    shift = 2.0 * _UNIT * (a + b)
    err_p = (abs(x) + 1.0) * shift + 4.0 * _UNIT * abs(log_p)
    if x >= 0.0:
        # |d log erfcx(t/√2)/dt| <= 0.8 for t >= 0; erfcx and log add a few ulps.
        log_r = math.log(float(erfcx(y * _SQRT_HALF))) - math.log(float(erfcx(x * _SQRT_HALF)))
        err_r = 1.6 * shift + 12.0 * _UNIT * (1.0 + abs(log_r))
    else:
        log_q = float(log_ndtr(-y))  # log Φ(−Δ/2σ − εσ/Δ)
        log_r = epsilon + log_q - log_p
        err_q = (y + 1.0) * shift + 4.0 * _UNIT * abs(log_q)
        err_r = err_p + err_q + 2.0 * _UNIT * (epsilon + abs(log_p) + abs(log_q))
    if not log_r < 0.0:
        # Rounding swamped 1 − r (x and y both beyond 1e150 or so): fall back on the
        # bound δ <= Φ(−x), which always holds.
        return log_p, _ERROR_SLACK * err_p
    one_minus_r = -math.expm1(log_r)
    log_delta = log_p + math.log(one_minus_r)
    err = err_p + err_r * (1.0 - one_minus_r) / one_minus_r + 4.0 * _UNIT * (abs(log_delta) + 1.0)
    return log_delta, _ERROR_SLACK * err


def _log_delta_upper(ratio: float, epsilon: float) -> float:
    """An upper bound on log δ(σ) for σ/Δ = ``ratio`` (``0.0``, i.e. δ <= 1, if no better)."""
    log_delta, err = _log_profile(ratio, epsilon)
    bound = _up(log_delta + err)
    return min(bound, 0.0) if not math.isnan(bound) else 0.0


def delta_for_sigma(sigma: Any, sensitivity: Any, epsilon: Any) -> float:
    """Return the exact δ for which Gaussian noise of standard deviation σ gives (ε, δ)-DP.

    This is the privacy profile of the Gaussian mechanism (Balle & Wang 2018, Theorem 8):

    ::

        δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε · Φ(−Δ/2σ − εσ/Δ),

    the smallest δ such that adding N(0, σ²I) to a query of ℓ2 sensitivity
    Δ is (ε, δ)-differentially private. It is tight: a smaller δ is false for some pair of
    neighbouring inputs.

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise (not the variance), finite and > 0.
    sensitivity : float
        ℓ2 sensitivity Δ of the query, finite and > 0.
    epsilon : float
        Privacy-loss parameter ε, finite and > 0.

    Returns
    -------
    float
        δ(σ) in (0, 1], rounded up: never below the true value. The excess is the error
        bound added for safety. Measured against a 50-digit reference on a grid of
        ε ∈ [1e-4, 50] and σ/Δ with δ >= 1e-300 (``tests/test_gaussian.py``), it stays below
        1e-9 relative for ε >= 1, below 5e-8 for ε >= 0.01 and below 5e-6 for ε >= 1e-4
        (where 1 − r is small and the bound is loose). When δ is subnormal the float spacing
        dominates; when the true δ is below the smallest positive float, the smallest
        positive float is returned.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is NaN, infinite, zero or negative.

    Privacy
    -------
    Not a mechanism; it states the guarantee of :func:`gaussian_mechanism`-style noise.

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy:
    Analytical Calibration and Optimal Denoising", ICML 2018, Theorem 8.

    Examples
    --------
    >>> round(delta_for_sigma(1.0, 1.0, 1.0), 6)
    0.126937
    """
    sigma = check_sensitivity(sigma, "sigma")
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    ratio = sigma / sensitivity
    if ratio == 0.0:     # σ/Δ below the float range: δ is within 1e-300 of 1
        return 1.0
    if math.isinf(ratio):
        return math.ulp(0.0)
    upper = _log_delta_upper(ratio, epsilon)
    if upper >= 0.0:
        return 1.0
    return max(_up(math.exp(upper)), math.ulp(0.0))


def classic_sigma(sensitivity: Any, epsilon: Any, delta: Any) -> float:
    """Return the classic Gaussian-mechanism σ = Δ·sqrt(2 ln(1.25/δ)) / ε, rounded up.

    Dwork & Roth (2014), Theorem A.1: for 0 < ε < 1 and c² > 2 ln(1.25/δ), Gaussian noise
    with σ ≥ cΔ/ε on a query of ℓ2 sensitivity Δ is (ε, δ)-DP. The value returned is
    strictly above Δ·sqrt(2 ln(1.25/δ))/ε (every floating-point step is rounded up), so it
    meets the theorem's strict inequality.

    The proof bounds the privacy loss with a tail inequality that needs ε < 1; for ε ≥ 1
    this function refuses, because no theorem covers the formula there. Judged by the exact
    profile (:func:`delta_for_sigma`, Δ = 1), the formula's σ happens to stay private up to
    ε ≈ 7.46 (δ = 1e-3), 8.42 (δ = 1e-5), 9.62 (δ = 1e-9), and under-noises beyond (at
    ε = 10, δ = 1e-3 its true δ is above 3e-3). Use :func:`analytic_sigma`, which is exact
    for every ε > 0 and never larger than this value.

    Parameters
    ----------
    sensitivity : float
        ℓ2 sensitivity Δ, finite and > 0.
    epsilon : float
        Privacy-loss parameter, in (0, 1).
    delta : float
        The additive slack δ of (ε, δ)-DP, in (0, 1).

    Returns
    -------
    float
        The standard deviation σ.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is out of range, in particular if ``epsilon >= 1`` (the message
        points to :func:`analytic_sigma`).

    Privacy
    -------
    Gaussian noise with this σ gives (ε, δ)-DP (Dwork & Roth 2014, Theorem A.1).

    References
    ----------
    C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014,
    Appendix A, Theorem A.1.

    Examples
    --------
    >>> round(classic_sigma(1.0, 0.5, 1e-5), 4)
    9.6896
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if epsilon >= 1.0:
        raise ValueError(
            f"epsilon must be a number in (0, 1) for classic_sigma (Dwork–Roth Theorem A.1 is "
            f"proven only for epsilon < 1), got {epsilon!r}; use "
            f"dpkit.gaussian.analytic_sigma(sensitivity, epsilon, delta), which is exact for "
            f"every epsilon > 0")
    # ln(1.25/δ) = ln 1.25 − ln δ in log space (1.25/δ overflows for δ < 1.25/MAX_FLOAT,
    # e.g. subnormal δ). Each step rounded to nearest and then moved one float up (down for
    # the subtracted ln δ): an upper bound provided log and sqrt are faithful (error < 1 ulp),
    # which glibc and IEEE sqrt guarantee.
    log_term = _up(_up(math.log(1.25)) - _down(math.log(delta)))
    c = _up(math.sqrt(2.0 * log_term))
    sigma = _up(_up(c * sensitivity) / epsilon)
    if math.isinf(sigma):
        raise ValueError(f"sensitivity={sensitivity!r}, epsilon={epsilon!r}, delta={delta!r} "
                         f"need a sigma above the largest float")
    return sigma


def analytic_sigma(sensitivity: Any, epsilon: Any, delta: Any) -> float:
    """Return the smallest σ for which Gaussian noise gives (ε, δ)-DP (the analytic Gaussian).

    Balle & Wang (2018), Theorem 8: Gaussian noise N(0, σ²I) on a query of
    ℓ2 sensitivity Δ is (ε, δ)-DP if and only if δ(σ) ≤ δ, where δ(σ) is the privacy profile
    computed by :func:`delta_for_sigma`. δ(σ) decreases in σ, so the optimal σ solves
    δ(σ) = δ; this function solves it (Algorithm 1 of the paper solves the same equation in
    another variable) with Brent's method on log σ over an upper bound of log δ(σ), then
    steps σ up until the upper bound is at most δ.

    Valid for every ε > 0 (unlike :func:`classic_sigma`). Never larger than the classic σ
    where that one applies, and 1.16–2.17× smaller for ε ∈ {0.1, 0.5}, δ ∈ [1e-12, 1e-3].

    Parameters
    ----------
    sensitivity : float
        ℓ2 sensitivity Δ, finite and > 0.
    epsilon : float
        Privacy-loss parameter, finite and > 0.
    delta : float
        The additive slack δ of (ε, δ)-DP, in (0, 1).

    Returns
    -------
    float
        σ, on the safe side: δ(σ) ≤ delta holds for the exact profile (verified in the
        tests against a 60-digit reference). Its relative distance to the exact optimum is
        below 1e-10 for ε in [0.01, 20] and δ in [1e-30, 0.5].

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is NaN, infinite or out of range.

    Privacy
    -------
    Gaussian noise with this σ gives (ε, δ)-DP, and no smaller σ does (up to the 1e-10
    rounding margin).

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy:
    Analytical Calibration and Optimal Denoising", ICML 2018, Theorem 8 and Algorithm 1.

    Examples
    --------
    >>> round(analytic_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    ratio = _analytic_ratio(epsilon, delta)
    sigma = _up(ratio * sensitivity)
    if math.isinf(sigma):
        raise ValueError(f"sensitivity={sensitivity!r}, epsilon={epsilon!r}, delta={delta!r} "
                         f"need a sigma above the largest float")
    return sigma


def _analytic_ratio(epsilon: float, delta: float) -> float:
    """Smallest σ/Δ (rounded up) with an upper bound on δ(σ) at most ``delta``."""
    target = math.log(delta)

    def gap(log_ratio: float) -> float:
        return _log_delta_upper(math.exp(log_ratio), epsilon) - target

    # Bracket the root of the decreasing function gap(log σ/Δ), starting near the answer.
    start = math.log(math.sqrt(2.0 * (math.log(1.25) - target) + 1.0)) - math.log(epsilon)
    low = high = min(max(start, -600.0), 600.0)
    step = 1.0
    while gap(low) <= 0.0:
        low -= step
        step *= 2.0
        if low < -700.0:
            raise ValueError(f"epsilon={epsilon!r}, delta={delta!r} need sigma/sensitivity "
                             f"below 1e-300; no float calibration is possible")
    step = 1.0
    while gap(high) > 0.0:
        high += step
        step *= 2.0
        if high > 700.0:
            raise ValueError(f"epsilon={epsilon!r}, delta={delta!r} need sigma/sensitivity "
                             f"above 1e300; no float calibration is possible")
    root = brentq(gap, low, high, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    ratio = math.exp(root)
    for _ in range(200):
        if _log_delta_upper(ratio, epsilon) <= target:
            return ratio
        ratio *= 1.0 + 2.0**-48
    ratio = math.exp(high)  # brentq keeps gap(high) <= 0: a safe fallback
    while _log_delta_upper(ratio, epsilon) > target:  # pragma: no cover - defensive
        ratio = _up(ratio * 2.0)
    return ratio


#: The smallest ε for which :func:`bao_sigma` resolves every δ in (0, 1) (tested).
BAO_MIN_EPSILON = 1e-11


class _Unresolved(ArithmeticError):
    """erfc(χ) and e^ε·erfc(√(χ² + ε)) agree to float64 precision: P(χ) is not resolved."""


def _log_two_delta(chi: float, epsilon: float) -> tuple[float, float]:
    """Return ``(log P(χ), d log P/dχ)`` for P(χ) = erfc(χ) − e^ε·erfc(√(χ² + ε)).

    P is 2δ in the parametrisation of Bao et al. (2021). With s = √(χ² + ε), s² − χ² = ε
    exactly, so for χ >= 0 the ratio r = e^ε erfc(s)/erfc(χ) equals erfcx(s)/erfcx(χ) and
    no tail underflows; for χ < 0, erfc(χ) lies in (1, 2) and is used directly. The
    derivative is P'(χ) = (2/√π)·e^{−χ²}·(χ/s − 1), divided by P.
    """
    s = math.sqrt(chi * chi + epsilon)
    if chi >= 0.0:
        log_e = math.log(float(erfcx(chi)))          # log erfc(χ) + χ²
        log_r = math.log(float(erfcx(s))) - log_e
        if not log_r < 0.0:
            raise _Unresolved
        log_p_scaled = log_e + math.log(-math.expm1(log_r))   # log P + χ²
    else:
        log_erfc = math.log(float(erfc(chi)))
        log_r = epsilon + math.log(float(erfcx(s))) - s * s - log_erfc
        if not log_r < 0.0:
            raise _Unresolved
        log_p_scaled = log_erfc + math.log(-math.expm1(log_r)) + chi * chi
    # P'/P = (2/√π)(χ/s − 1)·e^{−χ²}/P; χ/s − 1 = −ε/(s(s + χ)) when χ >= 0 (no cancellation).
    slope = -epsilon / (s * (s + chi)) if chi >= 0.0 else chi / s - 1.0
    derivative = 2.0 / math.sqrt(math.pi) * slope * math.exp(-log_p_scaled)
    return log_p_scaled - chi * chi, derivative


def _bao_chi(epsilon: float, delta: float) -> float:
    """Solve erfc(χ) − e^ε·erfc(√(χ² + ε)) = 2δ for χ by safeguarded Newton in log space.

    log P(χ) is decreasing in χ, so a bracket [low, high] with log P(low) > log 2δ >
    log P(high) is kept; a Newton step that leaves it is replaced by bisection.
    """
    target = math.log(2.0) + math.log(delta)
    low, high = -1.0, 1.0
    while _log_two_delta(low, epsilon)[0] <= target:
        low *= 2.0
    while _log_two_delta(high, epsilon)[0] > target:
        high *= 2.0
        if high > 1e150:
            raise ValueError(f"epsilon={epsilon!r}, delta={delta!r}: no float chi solves "
                             f"the equation")
    chi = 0.5 * (low + high)
    for _ in range(200):
        value, derivative = _log_two_delta(chi, epsilon)
        gap = value - target
        if gap > 0.0:
            low = chi
        else:
            high = chi
        step = gap / derivative
        candidate = chi - step
        if not low < candidate < high:
            candidate = 0.5 * (low + high)
        if abs(candidate - chi) <= 4e-16 * max(1.0, abs(chi)) or high - low <= 4e-16 * max(
                1.0, abs(chi)):
            return candidate
        chi = candidate
    return chi  # pragma: no cover - Newton with bisection converges far sooner


def bao_sigma(sensitivity: Any, epsilon: Any, delta: Any) -> float:
    """Return the analytic Gaussian σ through the parametrisation of Bao et al. (2021).

    The profile of :func:`delta_for_sigma`, written in the variable
    χ = (εσ/Δ − Δ/2σ)/√2, reads (Bao, Yang, Xiao & Ding 2021, Lemma 2.4)::

        erfc(χ) − e^ε · erfc(√(χ² + ε)) = 2δ,      σ = Δ / (√2 (√(χ² + ε) − χ)).

    It is the same equation as Balle & Wang's Theorem 8: Φ(−t) = erfc(t/√2)/2, and
    (εσ/Δ + Δ/2σ)²/2 = χ² + ε. This function solves it for χ by Newton's method with the
    correct derivative e^{−χ²}(χ/√(χ² + ε) − 1) (up to the factor 2/√π), in log space and
    safeguarded by bisection, then maps χ to σ with √(χ² + ε) − χ = ε/(√(χ² + ε) + χ)
    (no cancellation). The σ found is then stepped up until the certified upper bound on
    δ(σ) used by :func:`analytic_sigma` is at most δ, so the result is on the safe side by
    the same test. It agrees with :func:`analytic_sigma` to 1e-10 relative (tested on a
    grid); it exists to show that the two parametrisations are one calibration.

    Parameters
    ----------
    sensitivity : float
        ℓ2 sensitivity Δ, finite and > 0.
    epsilon : float
        Privacy-loss parameter, finite and > 0.
    delta : float
        The additive slack δ of (ε, δ)-DP, in (0, 1).

    Returns
    -------
    float
        σ, rounded up: δ(σ) ≤ delta for the exact profile.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is NaN, infinite or out of range, or σ would leave the float range,
        or ε is so small (below ``BAO_MIN_EPSILON`` = 1e-11 at the tiniest δ) that the
        float64 solver cannot resolve the equation; :func:`analytic_sigma` covers that case.

    Privacy
    -------
    Gaussian noise with this σ gives (ε, δ)-DP (Balle & Wang 2018, Theorem 8).

    References
    ----------
    E. Bao, Y. Yang, X. Xiao and B. Ding, "CGM: An Enhanced Mechanism for Streaming Data
    Collection with Local Differential Privacy", PVLDB 14(11), 2021, Lemma 2.4;
    B. Balle and Y.-X. Wang, ICML 2018, Theorem 8.

    Examples
    --------
    >>> round(bao_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    try:
        chi = _bao_chi(epsilon, delta)
    except _Unresolved:
        raise ValueError(
            f"bao_sigma: epsilon={epsilon!r} is too small for delta={delta!r}: the float64 "
            f"solver cannot resolve erfc(chi) - e^epsilon*erfc(sqrt(chi^2 + epsilon)) there; "
            f"epsilon >= {BAO_MIN_EPSILON} works for every delta in (0, 1), and "
            f"analytic_sigma covers this case") from None
    s = math.sqrt(chi * chi + epsilon)
    gap = epsilon / (s + chi) if chi >= 0.0 else s - chi   # √(χ² + ε) − χ
    ratio = _up(1.0 / (math.sqrt(2.0) * gap))
    target = math.log(delta)
    for _ in range(400):
        if _log_delta_upper(ratio, epsilon) <= target:
            break
        ratio *= 1.0 + 2.0**-48
    else:  # pragma: no cover - the Newton root is within a few ulps of the answer
        ratio = _analytic_ratio(epsilon, delta)
    sigma = _up(ratio * sensitivity)
    if math.isinf(sigma) or sigma == 0.0:
        raise ValueError(f"sensitivity={sensitivity!r}, epsilon={epsilon!r}, delta={delta!r} "
                         f"need a sigma outside the float range")
    return sigma


# ------------------------------------------------------------------------ the mechanism

#: The grid step is at most 2**-GRID_MARGIN_BITS times σ: noise spans ~2**40 grid points.
GRID_MARGIN_BITS = 40
#: Outputs farther than TAIL·σ from the centre in some coordinate are charged to δ.
_TAIL = 40.0
# log of the probability budget for that tail: log d − (TAIL − 2**-40)²/2 <= log d − _TAIL_LOG.
_TAIL_LOG = 799.0
_METHODS = ("analytic", "classic")
#: A release must stay within the float range for noise up to this many σ: ``max|value| +
#: RANGE_SIGMAS·σ <= largest float`` (larger noise: probability below d·e^-800 < 2**-1074).
RANGE_SIGMAS = 40


@dataclass(frozen=True)
class GaussianParameters:
    """How :func:`gaussian_mechanism` calibrates its discrete noise (all values rounded safely).

    Attributes
    ----------
    sigma : float
        Standard deviation of the noise, in the units of the query.
    grid_exponent : int
        The query is rounded to the grid ``2**grid_exponent · Z``.
    grid_sensitivity : Fraction
        ℓ2 sensitivity of the rounded query, in grid units (Δ/2**k + √d, rounded up).
    rounding_epsilon : float
        η: an upper bound on the ε lost by using a discrete rather than a continuous
        Gaussian (both directions of the comparison), reserved from the budget.
    epsilon_noise, delta_noise : float
        The (ε, δ) the continuous calibration was run with: ``epsilon - rounding_epsilon``
        and ``delta · exp(-rounding_epsilon) · (1 - 2**-40)``, both rounded down.
    method : str
        ``"analytic"`` or ``"classic"``.
    """

    sigma: float
    grid_exponent: int
    grid_sensitivity: Fraction
    rounding_epsilon: float
    epsilon_noise: float
    delta_noise: float
    method: str


def _calibrator(method: Any) -> Any:
    """Return the σ calibration named by ``method``."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, one of {list(_METHODS)}, got {method!r} "
                        f"of type {type(method).__name__}")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {list(_METHODS)}, got {method!r}")
    return analytic_sigma if method == "analytic" else classic_sigma


def mechanism_parameters(sensitivity: Any, epsilon: Any, delta: Any, dimension: int = 1, *,
                         method: str = "analytic") -> GaussianParameters:
    """Return the calibration :func:`gaussian_mechanism` uses for a ``dimension``-vector query.

    The mechanism adds exact discrete Gaussian noise on a power-of-two grid. Its guarantee
    is derived by comparing it, output by output, with the *continuous* Gaussian mechanism
    followed by rounding to the grid (which is (ε', δ')-DP by post-processing when σ is
    calibrated for ε', δ' and the rounded query's sensitivity). With s = σ/2**k grid
    points per standard deviation, each coordinate's probabilities differ between the two
    by a factor at most exp((|v| + 1/4)/(2s²)) at distance v from the centre (and by the
    Poisson-summation factor θ = Σ_m exp(−2π²s²m²), within exp(1e-300) of 1 here). On the
    set where every coordinate is within 40·s of the centre this gives a total loss
    η <= d·40/s + √d·D/(2s²) + d/(4s²) over the two directions (D: the rounded query's ℓ2
    sensitivity in grid units): the factor from discrete to continuous on one input times
    the factor from continuous to discrete on its neighbour is at most exp(η). Outside that
    set, the discrete Gaussian puts probability at most d·exp(−799), charged to δ. The
    calibration reserves both: the continuous σ is computed for ε − η and
    δ·e^{−η}(1 − 2**-40), so the mechanism is exactly (ε, δ)-DP.
    With s >= 2**40, η is about 4e-11·d.

    Parameters
    ----------
    sensitivity : float
        ℓ2 sensitivity Δ of the query, finite and > 0.
    epsilon : float
        Privacy-loss parameter, finite and > 0 (< 1 for ``method="classic"``).
    delta : float
        The additive slack δ of (ε, δ)-DP, in (0, 1).
    dimension : int
        Number of coordinates d of the query, 1 <= d <= 2**36.
    method : {"analytic", "classic"}
        Calibration of σ: :func:`analytic_sigma` (default) or :func:`classic_sigma`.

    Returns
    -------
    GaussianParameters

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range (``method="classic"`` with ε >= 1 included), or if
        ε and δ are too small for the rounding reserve (η > ε/1000, δ < d·e^{-771}, or δ
        such as 5e-324 with δ·e^{-η}(1 − 2**-40) rounding to 0), or ε is so large that
        δ·e^{-η} underflows (ε <= 1e15 never does, for δ >= 1e-300).

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (the noise and its sampler); B. Balle and Y.-X. Wang, ICML 2018,
    Theorem 8 (the continuous calibration).
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    dimension = check_integer(dimension, "dimension", minimum=1, maximum=2**36)
    calibrate = _calibrator(method)
    # A lower bound on the final σ: the final calibration has a larger sensitivity and a
    # smaller (ε, δ), and σ is monotone in each.
    sigma_floor = calibrate(sensitivity, epsilon, delta)
    k = math.frexp(sigma_floor)[1] - 1 - GRID_MARGIN_BITS   # 2**k <= σ_floor / 2**40
    s_min = math.ldexp(sigma_floor, -k)                    # exact; >= 2**40
    grid_d = grid_sensitivity(sensitivity, k, dimension, norm=2)
    # η, every term rounded up (a factor 1 + 1e-12 covers the few roundings of floats).
    eta = (dimension * _TAIL / s_min
           + math.sqrt(dimension) * float(grid_d) / (2.0 * s_min * s_min)
           + dimension / (4.0 * s_min * s_min) + dimension * 1e-300) * (1.0 + 1e-12)
    if not eta <= epsilon * 1e-3:
        raise ValueError(f"epsilon={epsilon!r} is too small for a {dimension}-dimensional "
                         f"query: the discrete-noise reserve {eta:.3g} exceeds epsilon/1000")
    if math.log(dimension) - _TAIL_LOG > math.log(delta) - 40.0 * math.log(2.0):
        raise ValueError(f"delta={delta!r} is too small for a {dimension}-dimensional query: "
                         f"the tail reserve needs delta >= {dimension} * exp(-771)")
    epsilon_noise = _down(epsilon - eta)
    delta_noise = _reserved_delta(delta, eta)
    # delta's fault if no epsilon could help (eta >= 0) and some delta < 1 works at this eta
    if not delta_noise > 0.0 and not _reserved_delta(delta, 0.0) > 0.0 and \
            (smallest := _smallest_delta(eta)) is not None:
        raise ValueError(f"delta={delta!r} is too small for the discrete-noise reserve: the "
                         f"noise is calibrated for delta·exp(-eta)·(1 - 2**-40) rounded down "
                         f"(eta={eta:.3g}), which is 0; for epsilon={epsilon!r} and a "
                         f"{dimension}-dimensional query delta must be in [{smallest!r}, 1)")
    if not delta_noise > 0.0:
        raise ValueError(f"epsilon={epsilon!r} is too large for delta={delta!r} and a "
                         f"{dimension}-dimensional query: the noise is so small that the "
                         f"discrete-noise reserve eta={eta:.3g} makes delta*exp(-eta) underflow "
                         f"to 0; the valid range needs delta*exp(-eta) > 0, so lower epsilon "
                         f"(epsilon <= 1e15 works for every delta >= 1e-300 and dimension "
                         f"<= 2**36) or raise delta")
    widened = _up(float(grid_d * Fraction(2) ** k))   # Δ + √d·2**k, rounded up
    sigma = calibrate(widened, epsilon_noise, delta_noise)
    return GaussianParameters(sigma=sigma, grid_exponent=k, grid_sensitivity=grid_d,
                              rounding_epsilon=eta, epsilon_noise=epsilon_noise,
                              delta_noise=delta_noise, method=method)


def _reserved_delta(delta: float, eta: float) -> float:
    """The δ the continuous calibration gets: ``δ·e^{-η}·(1 − 2**-40)``, rounded down."""
    return _down(_down(delta * math.exp(-eta)) * (1.0 - 2.0**-40))


def _smallest_delta(eta: float) -> float | None:
    """The smallest float δ < 1 with ``_reserved_delta(δ, eta) > 0`` (None if none)."""
    if not _reserved_delta(_down(1.0), eta) > 0.0:
        return None
    low, high = 0, np.float64(_down(1.0)).view(np.int64).item()  # bisection on the bits
    while high - low > 1:
        middle = (low + high) // 2
        if _reserved_delta(np.int64(middle).view(np.float64).item(), eta) > 0.0:
            high = middle
        else:
            low = middle
    return np.int64(high).view(np.float64).item()


@functools.lru_cache(maxsize=256)
def _noise_parameters(sensitivity: float, epsilon: float, delta: float, dimension: int,
                      method: str) -> tuple[int, Fraction, float]:
    """Grid exponent ``k``, the discrete Gaussian's ``σ²`` in grid units and ``σ``, memoised.

    Keyed by *validated* parameters (the caller checks them first), so the cache holds one
    entry per distinct calibration and a repeated release skips :func:`mechanism_parameters`
    (the cost of a calibration does not depend on the data or the noise either way).
    """
    params = mechanism_parameters(sensitivity, epsilon, delta, dimension, method=method)
    k = params.grid_exponent
    return k, (Fraction(params.sigma) / Fraction(2) ** k) ** 2, params.sigma


def gaussian_mechanism(value: Any, sensitivity: Any, epsilon: Any, delta: Any, *,
                       method: str = "analytic", rng: Any = None) -> float | np.ndarray:
    """Release ``value`` with Gaussian noise: (ε, δ)-DP and floating-point safe.

    The query value (a number or an array of any shape, treated as one vector) is rounded
    exactly to a power-of-two grid about 2**-40 σ fine, exact discrete Gaussian noise
    (Canonne, Kamath & Steinke 2020, Algorithm 3, drawn from random bits) is added to the
    integer grid coordinates, and the exact result is converted to the nearest floats. No
    floating-point random number is ever added to a float, so the low-order-bit attack of
    Mironov (2012) has nothing to read. σ and the grid come from
    :func:`mechanism_parameters`.

    Parameters
    ----------
    value : float or array_like of float
        The true query answer; every entry finite.
    sensitivity : float
        ℓ2 sensitivity Δ of the whole vector: ``||f(x) − f(x')||₂ <= Δ`` for neighbours.
    epsilon : float
        Privacy-loss parameter, > 0 (< 1 with ``method="classic"``).
    delta : float
        The additive slack δ of (ε, δ)-DP, in (0, 1).
    method : {"analytic", "classic"}
        How σ is calibrated: :func:`analytic_sigma` (default, optimal) or
        :func:`classic_sigma` (Dwork–Roth Theorem A.1, ε < 1 only).
    rng : None or dpkit.rng.RandomSource
        Source of random bits; ``None`` (default) is the operating system's secure source.
        A seeded source is for teaching only.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``value``, else a float64 array of the same shape. Each entry
        is the true value plus noise of standard deviation ≈ σ (the discrete Gaussian's
        variance is within 1e-20 relative of σ²).

    Raises
    ------
    TypeError
        If ``value`` is not numeric, or another argument has the wrong type.
    ValueError
        If ``value`` is empty (as for every release function) or holds NaN or infinity, a
        parameter is out of range, or noise could push the release beyond the float range
        (``max|value| + RANGE_SIGMAS·σ``, 40 σ, must not exceed the largest float; checked
        before any noise is drawn, as in :func:`dpkit.laplace.laplace_mechanism`).

    Privacy
    -------
    (ε, δ)-differentially private for queries of ℓ2 sensitivity Δ, exactly as stated (no
    rounding loss to add): the ε lost to discreteness, about 4e-11 per coordinate, is
    reserved inside the budget (see :func:`mechanism_parameters`). The output of the
    conversion to floats is post-processing. Timing: as
    :func:`dpkit.laplace.laplace_mechanism` (float values by the same vectorised passes
    whatever their values; the call ends at a deadline set by public sizes, types and
    parameters: :mod:`dpkit.timing`). The calibration is memoised per validated (Δ, ε, δ,
    d, method).

    References
    ----------
    B. Balle and Y.-X. Wang, ICML 2018, Theorem 8; C. Dwork and A. Roth, 2014, Theorem A.1;
    C. L. Canonne, G. Kamath and T. Steinke, NeurIPS 2020; I. Mironov, CCS 2012.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> release = gaussian_mechanism([10.0, 20.0], 1.0, 1.0, 1e-5, rng=seeded(0))
    >>> release.shape
    (2,)
    """
    return run_padded(COST, _gaussian_mechanism_work, value, sensitivity, epsilon, delta,
                      method, rng)


def _gaussian_mechanism_work(clock: Deadline, value: Any, sensitivity: Any, epsilon: Any,
                             delta: Any, method: Any, rng: Any) -> Any:
    """The work of :func:`gaussian_mechanism`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    # Public first (errors raise at once): the shape, the parameters, the source.
    shape = check_shape(value, "value")  # elements not looked at
    _calibrator(method)
    k, sigma2, sigma = _noise_parameters(check_sensitivity(sensitivity),
                                         check_epsilon(epsilon), check_delta(delta),
                                         shape.size, method)
    source = resolve(rng)
    clock.size(shape.size, kind_of(value))  # from here on, an error is padded too
    array = check_finite_array(shape, "value", exact=True, copy=False)  # read only
    words = {"value": describe(value), "bound": f"max|value| + {RANGE_SIGMAS}·sigma",
             "noise": f"Gaussian noise of standard deviation sigma={sigma:.6g} "
                      f"(sensitivity={sensitivity!r}, epsilon={epsilon!r}, "
                      f"delta={delta!r})"}
    released = noisy_values(array.reshape(-1), k, RANGE_SIGMAS * Fraction(sigma),
                            lambda n: discrete_gaussian(sigma2, source, size=n), words)
    return float(released[0]) if array.ndim == 0 else released.reshape(array.shape)

