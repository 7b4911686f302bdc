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

The calibrations and the profile live in :mod:`dpkit.gaussian_calibration` (with their
numerical policy: every returned privacy quantity is rounded in the safe direction, σ up,
δ up) and are re-exported here; this module adds the mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_integer,
    check_real,
    check_sensitivity,
    check_shape,
    refuse_masked,
)
from dpkit._samplers.grid import (
    ReleaseRange,
    grid_sensitivity,
    noisy_scalar,
    noisy_values,
    release_range,
)
from dpkit._samplers.noise import discrete_gaussian
from dpkit._samplers.tables import public_table
from dpkit.gaussian_calibration import BAO_MIN_EPSILON as BAO_MIN_EPSILON
from dpkit.gaussian_calibration import (
    analytic_sigma,
    bao_sigma,
    classic_sigma,
    delta_for_sigma,
)
from dpkit.rng import resolve
from dpkit.timing import Cost, Deadline, kind_of, run_padded, warm_up_calls

__all__ = ["RANGE_SIGMAS", "GaussianParameters", "analytic_sigma", "bao_sigma", "classic_sigma",
           "delta_for_sigma", "gaussian_mechanism", "mechanism_parameters"]

#: The worst cost of :func:`gaussian_mechanism` (see :mod:`dpkit.timing`; measured by
#: ``benchmarks/deadlines.py`` over adversarial inputs). ``fixed`` covers a scalar of the
#: slowest type (the longest Decimal, a large int: median 7.1 U, 99.9th percentile 18 U on a
#: quiet core, the rejection rounds included) at margin 2 (7 before: the 99th percentile
#: of those types overran on a quiet core, and 8% of scalar releases of 2**53 + 1 at load 3).
#: One value in a container of Python objects is converted as a list's element, about
#: 1.7 U more than a scalar (99.9th percentile up to 24 U; breaker review 31): such a
#: release is charged one more object (``per_object``), as in :mod:`dpkit.laplace`.
#: ``large`` was 6 until the envelope sampler made one round of proposals (issue 18; see
#: :data:`dpkit.laplace.COST`, whose ``per_vector_value`` this one follows): the work's 99.9th
#: percentile was at most 1.19 of the margin-1 deadline from 65 to 2,000 values before that
#: change, which shortened the work.
COST = Cost(fixed=11.0, per_value=0.06, large=10.0, per_vector_value=110.0, per_object=3.2)


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
    epsilon_noise = math.nextafter(epsilon - eta, -math.inf)   # rounded down
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
    widened = math.nextafter(float(grid_d * Fraction(2) ** k), math.inf)  # Δ + √d·2**k, up
    sigma = calibrate(widened, epsilon_noise, delta_noise)
    return GaussianParameters(sigma=sigma, grid_exponent=k, grid_sensitivity=grid_d,
                              rounding_epsilon=eta, epsilon_noise=epsilon_noise,
                              delta_noise=delta_noise, method=method)


def _reserved_delta(delta: float, eta: float) -> float:
    """The δ the continuous calibration gets: ``δ·e^{-η}·(1 − 2**-40)``, rounded down."""
    reserved = math.nextafter(delta * math.exp(-eta), -math.inf)
    return math.nextafter(reserved * (1.0 - 2.0**-40), -math.inf)


def _smallest_delta(eta: float) -> float | None:
    """The smallest float δ < 1 with ``_reserved_delta(δ, eta) > 0`` (None if none)."""
    below_one = math.nextafter(1.0, -math.inf)
    if not _reserved_delta(below_one, eta) > 0.0:
        return None
    low, high = 0, np.float64(below_one).view(np.int64).item()  # bisection on the bits
    while high - low > 1:
        middle = (low + high) // 2
        if _reserved_delta(np.int64(middle).view(np.float64).item(), eta) > 0.0:
            high = middle
        else:
            low = middle
    return np.int64(high).view(np.float64).item()


@public_table(maxsize=256)
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
        A float for a scalar ``value`` (a 0-d array included), else a float64 array of
        the same shape. Each entry is the true value plus noise of standard deviation
        ≈ σ (the discrete Gaussian's variance is within 1e-20 relative of σ²).

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
    sigma2, sigma, span = _release_parameters(check_sensitivity(sensitivity),
                                              check_epsilon(epsilon), check_delta(delta),
                                              shape.size, method)
    source = resolve(rng)
    # Off the float path (public) the values are added on Python ints: objects' deadline.
    kind = kind_of(value) if span.floats else "objects"
    clock.size(shape.size, kind)  # errors padded from here
    container = shape.ndim > 0 or isinstance(value, np.ndarray)
    if shape.size == 1 and container and kind == "objects":
        clock.add("objects")  # a list's conversion: see COST
    refuse_masked(value, "value")  # which entries are masked is data: padded

    def draw(n: int) -> np.ndarray:
        return discrete_gaussian(sigma2, source, size=n)

    def words() -> dict[str, Any]:
        return {"value": value, "bound": f"max|value| + {RANGE_SIGMAS}·sigma",
                "noise": f"Gaussian noise of standard deviation sigma={sigma:.6g} "
                         f"(sensitivity={sensitivity!r}, epsilon={epsilon!r}, "
                         f"delta={delta!r})"}

    if not container:
        return noisy_scalar(check_real(value, "value", exact=True), span, draw, words)
    array = check_finite_array(shape, "value", exact=True, copy=False)  # read only
    released = noisy_values(array.reshape(-1), span, draw, words)
    return float(released[0]) if array.ndim == 0 else released.reshape(array.shape)


@public_table(maxsize=256)
def _release_parameters(sensitivity: float, epsilon: float, delta: float, dimension: int,
                        method: str) -> tuple[Fraction, float, ReleaseRange]:
    """``σ²`` in grid units, ``σ`` (:func:`_noise_parameters`) and the release range
    (:data:`RANGE_SIGMAS`), memoised."""
    k, sigma2, sigma = _noise_parameters(sensitivity, epsilon, delta, dimension, method)
    return sigma2, sigma, release_range(k, RANGE_SIGMAS * Fraction(sigma))


warm_up_calls(_gaussian_mechanism_work, gaussian_mechanism, 1.0, 1.0, 1e-6)
