"""Zero-concentrated differential privacy (Bun & Steinke 2016) and its conversions.

Gaussian mechanisms compose by adding ``rho = sensitivity**2 / (2 sigma**2)``
(:func:`gaussian_rho`, Prop. 1.6 and Lemma 1.7); a pure epsilon-DP mechanism is
``epsilon**2 / 2``-zCDP (:func:`pure_to_zcdp`, Prop. 1.4); :func:`zcdp_to_dp` converts the
sum of the rhos to ``(epsilon, delta)``-DP (Prop. 1.3).
"""

from __future__ import annotations

import math

import gmpy2

from dpkit._checks import check_delta, check_epsilon, check_sensitivity
from dpkit.composition._rounding import float_up, log_inv_up, wide_round_up

__all__ = ["MAX_RATIO", "gaussian_rho", "pure_to_zcdp", "zcdp_to_dp"]

#: The largest ``sensitivity / sigma`` (:func:`gaussian_rho`) and ``epsilon``
#: (:func:`pure_to_zcdp`) accepted: ``MAX_RATIO**2 / 2`` is below the largest float.
MAX_RATIO = math.sqrt(1.7976931348623157e308) * math.sqrt(2) * (1 - 2**-50)


def gaussian_rho(sensitivity: float, sigma: float) -> float:
    """The zCDP parameter of the Gaussian mechanism: ``rho = sensitivity**2 / (2 sigma**2)``.

    Parameters
    ----------
    sensitivity : float
        The L2 sensitivity, finite and > 0.
    sigma : float
        The noise standard deviation, finite and > 0.

    Returns
    -------
    float
        ``rho``, rounded up.

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range, or if ``sensitivity / sigma``
        exceeds :data:`MAX_RATIO` (about ``1.9e154``), so that ``rho`` would not fit a float.

    Notes
    -----
    ``rho`` is computed as ``(sensitivity / sigma)**2 / 2``, the ratio first, so tiny or
    huge parameters of similar size (``gaussian_rho(1e-200, 1e-200) == 0.5``) do not
    overflow or underflow on the way.

    **Privacy guarantee.** Adding ``N(0, sigma^2)`` noise to a query of L2 sensitivity
    ``sensitivity`` is ``rho``-zCDP (Bun & Steinke 2016, Prop. 1.6), and zCDP composes by
    adding the rhos (Lemma 1.7).
    """
    sensitivity = check_sensitivity(sensitivity)
    sigma = check_sensitivity(sigma, "sigma")
    with wide_round_up():
        ratio = gmpy2.mpfr(sensitivity) / sigma
        rho = ratio * ratio / 2
    if ratio > MAX_RATIO:
        raise ValueError(f"sensitivity / sigma must be at most MAX_RATIO = {MAX_RATIO:.6g} "
                         f"(so that rho = (sensitivity/sigma)**2 / 2 fits a float), got "
                         f"sensitivity={sensitivity!r}, sigma={sigma!r}")
    return float_up(rho)


def pure_to_zcdp(epsilon: float) -> float:
    """The zCDP parameter of a pure epsilon-DP mechanism: ``rho = epsilon**2 / 2`` (rounded up).

    Parameters
    ----------
    epsilon : float
        Finite and > 0.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        If ``epsilon`` is of the wrong type, not > 0, or above :data:`MAX_RATIO` (about
        ``1.9e154``, where ``epsilon**2 / 2`` would not fit a float).

    Notes
    -----
    **Privacy guarantee.** Every epsilon-DP mechanism is ``epsilon**2 / 2``-zCDP
    (Bun & Steinke 2016, Prop. 1.4).
    """
    epsilon = check_epsilon(epsilon)
    if epsilon > MAX_RATIO:
        raise ValueError(f"epsilon must be a finite number in (0, MAX_RATIO = "
                         f"{MAX_RATIO:.6g}] (so that rho = epsilon**2 / 2 fits a float), "
                         f"got {epsilon!r}")
    with wide_round_up():
        rho = gmpy2.mpfr(epsilon) * epsilon / 2
    return float_up(rho)


def zcdp_to_dp(rho: float, delta: float) -> float:
    """Convert rho-zCDP to (epsilon, delta)-DP: ``epsilon = rho + 2 sqrt(rho ln(1/delta))``.

    Parameters
    ----------
    rho : float
        The zCDP parameter, finite and > 0.
    delta : float
        The target delta, in (0, 1).

    Returns
    -------
    float
        ``epsilon``, rounded up.

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range, or if ``rho`` is so large
        (close to the largest float) that ``epsilon`` would not fit a float.

    Notes
    -----
    **Privacy guarantee.** A rho-zCDP mechanism is ``(epsilon, delta)``-DP for this epsilon
    (Bun & Steinke 2016, Prop. 1.3): Markov's inequality on ``e^((alpha-1) L)`` bounds the
    privacy loss tail by ``e^((alpha-1)(rho alpha - epsilon))``, and ``alpha = 1 +
    sqrt(ln(1/delta)/rho)`` makes that ``delta``. This is the standard conversion, not the
    tightest known one (Canonne, Kamath & Steinke 2020 give a tighter one); dpkit uses it.

    Examples
    --------
    >>> round(zcdp_to_dp(0.5, 1e-6), 4)
    5.7565
    """
    rho = check_epsilon(rho, "rho")
    delta = check_delta(delta)
    log_term = log_inv_up(delta)
    with wide_round_up():
        r = gmpy2.mpfr(rho)
        epsilon = float_up(r + 2 * gmpy2.sqrt(r * log_term))
    if not math.isfinite(epsilon):
        raise ValueError(f"rho={rho!r} is too large for delta={delta!r}: the converted "
                         f"epsilon = rho + 2 sqrt(rho ln(1/delta)) exceeds the largest float")
    return epsilon
