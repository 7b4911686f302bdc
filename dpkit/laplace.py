"""The Laplace mechanism: its scale, its accuracy, and a floating-point-safe implementation.

For a query ``f`` with ℓ1 sensitivity ``Δ`` (the most ``f`` can change between neighbouring
datasets, summed over its coordinates), releasing ``f(x) + Y`` with ``Y`` made of independent
``Laplace(Δ/ε)`` coordinates is ε-differentially private (Dwork, McSherry, Nissim & Smith
2006; Dwork & Roth 2014, Theorem 3.6).

The textbook implementation adds a floating-point Laplace sample to a float. Mironov (2012)
showed that this breaks privacy completely: the set of floats ``x + Y`` can reach depends on
``x``, so one release can reveal the input (see :mod:`dpkit.attacks.laplace`). That version
is kept, labelled, in :mod:`dpkit.naive.laplace`.

:func:`laplace_mechanism` here never adds noise to a float. It rounds the query to a
power-of-two grid ``2**k · Z`` (exact), adds *exact* discrete Laplace noise in grid units
(:func:`dpkit._samplers.noise.discrete_laplace`, built from random bits), and returns the float
nearest to the exact result. Rounding can move each coordinate by half a grid step, so the
noise is calibrated to the widened sensitivity ``(floor(Δ/2**k) + d)·2**k``; the grid is
chosen with ``d·2**k <= 2**-20·Δ``, so the noise is at most a fraction ``2**-20`` larger
than the textbook ``Δ/ε``, and **no ε is lost**. (Where ``d/ε`` is so large that this noise
would reach ``2**53`` grid steps, above about ``5.7·10**6``, the grid is coarsened up to
``d·2**k <= 2**-10·Δ``: see :func:`laplace_grid`.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import (
    as_array,
    check_epsilon,
    check_finite_array,
    check_integer,
    check_probability,
    check_real,
    check_shape,
    refuse_masked,
)
from dpkit._checks import check_sensitivity as _check_sensitivity
from dpkit._samplers.grid import (
    FLOAT_MAX,
    FLOAT_NOISE_MAX,
    ReleaseRange,
    grid_exponent,
    grid_sensitivity,
    noisy_scalar,
    noisy_values,
    release_range,
)
from dpkit._samplers.noise import discrete_laplace
from dpkit._samplers.tables import public_table
from dpkit.rng import resolve
from dpkit.timing import Cost, Deadline, kind_of, run_padded, warm_up_calls

__all__ = [
    "COARSE_BITS",
    "MAX_RELEASES",
    "RANGE_SCALES",
    "LaplaceGrid",
    "laplace_accuracy",
    "laplace_grid",
    "laplace_mechanism",
    "laplace_scale",
    "sample_releases",
]


#: The most releases :func:`sample_releases` draws in one call (its arrays take about
#: 8 bytes × a few per release); call it again for more.
MAX_RELEASES = 10**7

#: A release must stay within the float range for noise up to this many noise scales:
#: ``max|value| + RANGE_SCALES·(Δ/ε) <= largest float``. Larger noise has probability
#: ``exp(-RANGE_SCALES) < 2**-1074`` (below the smallest positive float).
RANGE_SCALES = 750

#: The grid may be coarsened to keep the noise's reach below ``2**53`` grid steps (the float
#: path, :func:`dpkit._samplers.grid.float_path`) while the rounding widens the sensitivity by
#: at most a fraction ``2**-COARSE_BITS`` (:func:`laplace_grid`).
COARSE_BITS = 10

#: The worst cost of :func:`laplace_mechanism` (see :mod:`dpkit.timing`; measured by
#: ``benchmarks/deadlines.py`` over adversarial inputs). ``fixed`` covers a scalar of the
#: slowest type (the longest Decimal or int accepted: median 5.1 U, 99.9th percentile 14 U on
#: a quiet core) at margin 2 (6 before, under which 6% of scalar releases of a Fraction
#: overran at load 3). One value in a container of Python objects (``[x]``, ``(x,)``, an
#: object array; one copy in :func:`sample_releases` off the float path) is converted as a
#: list's element, about 1.7 U more than a scalar at the median (every type, quiet core;
#: breaker review 31): such a release is charged one more object (``per_object``), and so
#: is one copy of a float in :func:`sample_releases`, whose type must not set its deadline.
#: ``large`` was 8 until the envelope sampler made one round of proposals (issue 18): its
#: work, unpadded on a core beside another busy one, was then 0.20-0.36 ms from 65 to 2,000
#: values (99.9th percentile at most 1.06 of the old margin-1 deadline), and the extra set-up
#: leaves more room at small sizes for a pre-emption by another program. ``per_vector_value``
#: stays 110: at 50 (tried in 99a5f55) the work still fitted, but the room left above about
#: 1,000 values halved, and padded releases of 20,000 values overran 30 times in 28,000
#: against 5 with 110 (load 1.6-3.1, breaker review 36, F1).
COST = Cost(fixed=8.0, per_value=0.05, large=12.0, per_vector_value=110.0, per_object=3.2)

#: The extra deadline, in ``U``, of a release of one value (a scalar, or a container of one:
#: either is one draw, by the same sampler) whose noise scale is far from the common ones,
#: which :data:`COST` does not cover. The scale's bits ``b`` are the bit length of its
#: numerator (in grid units) less that of its denominator: ``log2`` of the scale rounded down,
#: or up by one. On the float path, where ``b > 24`` (scales from ``2**25`` grid units, or from
#: just above ``2**24`` for some), the interval walk is longer: ``LONG_WALK``. Off it (see
#: "Timing" in :func:`laplace_mechanism`), the work is on Python integers whose length grows
#: with ``b`` (two geometrics of about ``b + 7`` digits beyond the walk's scales):
#: ``OFF_PATH[0] + OFF_PATH[1]·max(0, b - 55)``. Measured by ``benchmarks/deadlines.py``:
#: the work's 99th percentile at most 0.7 of the margin-1 deadline from ``b = 20`` to
#: ``b = 1094``, on a quiet core (in 7b7a5e6, when ``COST.fixed`` was 6: 3786e22 raised it
#: to 8).
LONG_WALK = 2.0
OFF_PATH = (5.0, 0.014)


def scalar_extra_work(scale_units: Fraction, floats: bool) -> float:
    """The extra deadline, in ``U``, of a release of one value (:data:`LONG_WALK` on the
    float path, :data:`OFF_PATH` off it): a function of the public scale and path only.

    >>> scalar_extra_work(Fraction(2**20), True), scalar_extra_work(Fraction(2**40), True)
    (0.0, 2.0)
    >>> scalar_extra_work(Fraction(2**25 - 1), True), scalar_extra_work(Fraction(2**25), True)
    (0.0, 2.0)
    >>> scalar_extra_work(Fraction(2**20), False), scalar_extra_work(Fraction(2**155), False)
    (5.0, 6.4)
    """
    if floats:   # scales below 2**53/750 grid units: never the two geometrics
        return draw_extra_work(scale_units)
    return OFF_PATH[0] + OFF_PATH[1] * max(0, _bits(scale_units) - 55)


def draw_extra_work(scale_units: Fraction) -> float:
    """The extra deadline, in ``U``, of one discrete Laplace draw at ``scale_units`` on
    Python integers, beyond the common scales: :data:`LONG_WALK` for a longer interval walk
    (``b > 24``), :data:`OFF_PATH` where two geometrics replace the walk (``b >= 54``, the
    scales from just below ``2**55``). :func:`dpkit.svt.range_queries` charges it for each
    answer it releases (breaker review 33, F3: the last step's work at the smallest ε, 30
    answers of ``2**1000 - 1``, was 1.5 times its margin-1 deadline at the median without it).

    Parameters
    ----------
    scale_units : Fraction or int
        The draw's noise scale in grid units: a public parameter the caller has validated.

    Returns
    -------
    float
        The extra work in ``U`` (0 at the common scales); a function of the scale only.

    Raises
    ------
    AttributeError
        If ``scale_units`` is not a Fraction or an int (it has no numerator): callers pass
        the scales they computed from validated parameters, never user input.

    >>> draw_extra_work(Fraction(2**24)), draw_extra_work(Fraction(2**40))
    (0.0, 2.0)
    >>> draw_extra_work(Fraction(2**54)), draw_extra_work(Fraction(2**155))
    (5.0, 6.4)
    """
    bits = _bits(scale_units)
    if bits >= 54:
        return OFF_PATH[0] + OFF_PATH[1] * max(0, bits - 55)
    return LONG_WALK if bits > 24 else 0.0


def _bits(scale_units: Fraction) -> int:
    """The bits ``b`` of a scale (see :data:`LONG_WALK`)."""
    return scale_units.numerator.bit_length() - scale_units.denominator.bit_length()


def _range_words(grid: LaplaceGrid, value: Any, sensitivity: Any, epsilon: Any
                 ) -> dict[str, Any]:
    return {"value": value, "bound": f"max|value| + {RANGE_SCALES}·(noise scale)",
            "noise": f"noise of scale sensitivity/epsilon = {grid.scale:.6g} "
                     f"(sensitivity={sensitivity!r}, epsilon={epsilon!r})"}


def _round_up(exact: Fraction) -> float:
    """The smallest float >= ``exact`` (for positive, in-range values)."""
    nearest = float(exact)
    return nearest if Fraction(nearest) >= exact else math.nextafter(nearest, math.inf)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """The scale ``b = Δ/ε`` of the Laplace noise for an ε-DP release, rounded up.

    Parameters
    ----------
    sensitivity : float
        The query's ℓ1 sensitivity ``Δ`` (finite, > 0); a value float64 cannot hold (a
        ``Fraction``) is rounded up.
    epsilon : float
        The privacy-loss parameter (finite, > 0); a value float64 cannot hold is rounded down.

    Returns
    -------
    float
        The smallest float ``>= Δ/ε``: rounding up adds noise, never removes privacy.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite and > 0, or ``Δ/ε`` overflows a float.

    Notes
    -----
    Privacy: Laplace noise of scale ``b >= Δ/ε`` gives ε-differential privacy
    (Dwork & Roth 2014, Theorem 3.6; Dwork et al. 2006).

    Examples
    --------
    >>> laplace_scale(1, 0.5)
    2.0
    """
    delta = _check_sensitivity(sensitivity, rounding="up")
    epsilon = check_epsilon(epsilon, rounding="down")
    exact = Fraction(delta) / Fraction(epsilon)
    if exact > FLOAT_MAX:
        raise ValueError(f"sensitivity/epsilon must fit in a float, got "
                         f"sensitivity={sensitivity!r}, epsilon={epsilon!r}")
    return _round_up(exact)


def laplace_accuracy(sensitivity: float, epsilon: float, beta: float) -> float:
    """Half-width ``α`` with ``P[|Laplace(Δ/ε)| > α] = β``: ``α = (Δ/ε)·ln(1/β)``.

    With probability ``1 - β`` the textbook Laplace mechanism's answer is within ``α`` of
    the true value (for a ``d``-coordinate query, use ``β/d`` per coordinate to bound all of
    them at once). :func:`laplace_mechanism` adds at most ``(1 + 2**-20)`` times more noise
    plus a rounding of at most ``2**-21·Δ`` (``(1 + 2**-10)`` and ``2**-11·Δ`` on a
    coarsened grid, only where ``d/ε`` exceeds about ``5.7·10**6``: see :func:`laplace_grid`).

    Parameters
    ----------
    sensitivity, epsilon : float
        As in :func:`laplace_scale`.
    beta : float
        Failure probability in (0, 1).

    Returns
    -------
    float
        An upper bound on ``α`` within a few units in the last place (a ``beta`` that
        float64 cannot hold is rounded down, which only raises ``α``).

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range, or ``α`` exceeds the largest
        float.

    Notes
    -----
    Dwork & Roth (2014), Theorem 3.8 (the tail ``P[|Y| >= t·b] = exp(-t)``).

    Why it is an upper bound: ``ln(1/β)`` is computed as ``-log(β)`` (or ``-log1p(β - 1)``
    for ``β > 1/2``, where ``β - 1`` is exact), never through the rounded ``1/β`` whose error
    dominates when ``ln(1/β)`` is tiny; the library logarithm is within one unit in the last
    place, the product adds half a unit, and the factor ``1 + 8·2**-53`` followed by a step to
    the next float covers both.

    Examples
    --------
    >>> laplace_accuracy(1.0, 1.0, 0.05) > 2.9957
    True
    >>> laplace_accuracy(1.0, 1.0, 5e-324)
    744.440071921382
    """
    scale = laplace_scale(sensitivity, epsilon)
    beta = check_probability(beta, "beta", open_low=True, open_high=True, rounding="down")
    log_inverse = -math.log1p(beta - 1.0) if beta > 0.5 else -math.log(beta)
    alpha = scale * log_inverse * (1 + 8 * 2.0**-53)
    if not math.isfinite(alpha):
        raise ValueError(f"the accuracy (sensitivity/epsilon)·ln(1/beta) exceeds the largest "
                         f"float for sensitivity={sensitivity!r}, epsilon={epsilon!r}, "
                         f"beta={beta!r}; use a larger epsilon or beta")
    return math.nextafter(alpha, math.inf)


@dataclass(frozen=True)
class LaplaceGrid:
    """How :func:`laplace_mechanism` discretises a query (see :func:`laplace_grid`).

    Attributes
    ----------
    exponent : int
        The grid is ``2**exponent · Z``.
    sensitivity_units : int
        ℓ1 sensitivity of the rounded query, in grid units: ``floor(Δ/2**k) + d``.
    scale_units : Fraction
        Discrete Laplace scale in grid units: ``sensitivity_units / ε`` (exact).
    scale : float
        The same scale in the query's units (rounded to nearest), at most
        ``(1 + 2**-20)·Δ/ε`` (``(1 + 2**-10)·Δ/ε`` on a coarsened grid).
    """

    exponent: int
    sensitivity_units: int
    scale_units: Fraction
    scale: float


def laplace_grid(sensitivity: float, epsilon: float, count: int = 1) -> LaplaceGrid:
    """The grid and exact noise scale the safe mechanism uses for a ``count``-coordinate query.

    Parameters
    ----------
    sensitivity : float
        ℓ1 sensitivity of the whole query (finite, > 0).
    epsilon : float
        Privacy-loss parameter (finite, > 0).
    count : int
        Number of coordinates (>= 1).

    Returns
    -------
    LaplaceGrid

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range, or ``epsilon`` is so small that
        the noise scale exceeds the largest float (the message gives the smallest epsilon
        that works).

    Notes
    -----
    The grid step ``2**k`` is the largest power of two with ``d·2**k <= 2**-20·Δ``
    (:func:`dpkit._samplers.grid.grid_exponent`), unless the noise would then reach
    ``2**53`` grid steps (``RANGE_SCALES·(floor(Δ/2**k) + d)/ε >= 2**53``: ``d/ε`` above
    about ``5.7·10**6``, e.g. ``10**5`` coordinates at ε below 0.0114): then the finest
    coarser step that keeps the reach below ``2**53``, if one with ``d·2**k <=
    2**-(COARSE_BITS)·Δ`` (:data:`COARSE_BITS` = 10) does, so that a float64 array stays on
    the constant-cost float path (:func:`dpkit._samplers.grid.add_to_floats`). Any grid is
    exactly private (the sensitivity in grid units, ``floor(Δ/2**k) + d``, counts the
    rounding); a coarser one only adds noise, a fraction at most ``2**-10`` (the step is then
    below ``2**-42`` noise scales). The choice is made from Δ, ε and d alone.

    A ``sensitivity`` that float64 cannot hold exactly is rounded up and an ``epsilon``
    rounded down (:func:`dpkit._checks.check_epsilon`): both only add noise, so the
    guarantee holds for the exact values given.

    Examples
    --------
    >>> from fractions import Fraction
    >>> grid = laplace_grid(1, Fraction(1, 10))
    >>> grid.sensitivity_units / grid.scale_units <= Fraction(1, 10)
    True
    """
    return _laplace_grid(_check_sensitivity(sensitivity, rounding="up"),
                         check_epsilon(epsilon, rounding="down"),
                         check_integer(count, "count", minimum=1))


def _reaches_far(units: int, epsilon: float) -> bool:
    """Whether ``RANGE_SCALES`` noise scales of ``units/ε`` reach ``2**53`` grid units."""
    return Fraction(RANGE_SCALES * units) / Fraction(epsilon) >= FLOAT_NOISE_MAX


@public_table(maxsize=256)
def _laplace_grid(delta: float, epsilon: float, count: int) -> LaplaceGrid:
    k = grid_exponent(delta, count)
    for coarser in range(k, grid_exponent(delta, count, bits=COARSE_BITS) + 1):
        if not _reaches_far(int(grid_sensitivity(delta, coarser, count)), epsilon):
            k = coarser    # the finest grid whose noise stays on the float path
            break
    units = int(grid_sensitivity(delta, k, count))
    widened = Fraction(units) * Fraction(2) ** k
    if widened / Fraction(epsilon) > FLOAT_MAX:
        smallest = _round_up(widened / FLOAT_MAX)
        raise ValueError(f"epsilon={epsilon!r} is too small: the noise scale "
                         f"sensitivity/epsilon would exceed the largest float; for "
                         f"sensitivity={delta!r} and {count} coordinate(s) epsilon must be "
                         f">= {smallest!r}")
    scale_units = Fraction(units) / Fraction(epsilon)
    return LaplaceGrid(exponent=k, sensitivity_units=units, scale_units=scale_units,
                       scale=float(scale_units * Fraction(2) ** k))


def laplace_mechanism(value: Any, sensitivity: float, epsilon: float, *,
                      rng: Any = None) -> float | np.ndarray:
    """Release ``value`` with ε-differential privacy, safely (exact discrete Laplace on a grid).

    Parameters
    ----------
    value : float or array_like of float
        The true query answer ``f(x)``: a number or an array of ``d`` coordinates.
    sensitivity : float
        The ℓ1 sensitivity ``Δ`` of the *whole* query: for neighbouring datasets,
        ``sum_i |f(x)_i - f(x')_i| <= Δ``.
    epsilon : float
        The privacy-loss parameter (finite, > 0).
    rng : None or dpkit.rng.RandomSource, keyword-only
        ``None`` (default) uses the operating system's secure generator; pass
        ``dpkit.rng.seeded(n)`` only for reproducible teaching and tests.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``value`` (a 0-d array included), else a float64 array of
        the same shape.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (array), or an argument has the wrong type.
    ValueError
        If ``value`` is empty (like every release function, it refuses an empty input
        rather than return an empty array: see :func:`dpkit._checks.check_nonempty`), holds
        NaN or infinity or is ragged (``[[1.0], 2.0]``), if
        ``sensitivity``/``epsilon`` are not finite and > 0, or if the release could leave
        the float range: ``max|value| + RANGE_SCALES·Δ/ε`` (:data:`RANGE_SCALES` = 750)
        must not exceed the largest float. This is checked before any noise is drawn, so
        whether an error is raised never depends on the noise; noise beyond 750 scales
        (probability below ``2**-1074``) would give ``±inf``.

    Notes
    -----
    **Privacy guarantee.** The release is exactly ε-differentially private with respect to
    any neighbouring inputs whose query values differ by at most ``Δ`` in ℓ1 norm; no ε is
    lost to floating point. Proof: with ``g = 2**k`` (:func:`laplace_grid`), rounding to the
    grid gives an integer vector ``r(x)`` with ``||r(x) - r(x')||_1 <= floor(Δ/g) + d = D``.
    Adding independent discrete Laplace noise ``P[z] ∝ exp(-ε|z|/D)`` (sampled exactly from
    random bits by :mod:`dpkit._samplers`: one value, a zero trial, a sign and a geometric
    magnitude decided from one uniform by the interval algorithm; 2 to 64 values, the
    difference of two geometric variables drawn digit by digit; neither rejects, unlike
    Canonne, Kamath & Steinke's (2020) sign-and-reject Algorithm 2; larger arrays, a
    block-envelope rejection sampler) changes the probability
    of any output by a factor at most ``exp(ε·||r(x)-r(x')||_1/D) <= e**ε``. Converting
    ``g·(r(x) + z)`` to the nearest float is post-processing.

    **Accuracy.** Each coordinate's error is ``g·z`` plus the rounding (``<= g/2``) plus the
    final float rounding; ``g·z`` is discrete Laplace with scale ``g·D/ε <= (1 + 2**-20)·Δ/ε``
    (``(1 + 2**-10)·Δ/ε`` where :func:`laplace_grid` coarsens the grid: ``d/ε`` above about
    ``5.7·10**6``).

    **Timing.** Float values (a float64 array, a float, a list of floats) are rounded,
    noised and converted back by the same vectorised passes whatever their magnitudes and
    binary expansions (:func:`dpkit._samplers.grid.add_to_floats`, chosen from the dtype,
    Δ, ε and d only; one float by the same steps on Python floats,
    :func:`dpkit._samplers.grid.noisy_scalar`); values float64 cannot hold (large ints,
    Fractions, Decimals), and every value when Δ, ε and d put the release off the float
    path (the noise's reach beyond ``2**53`` grid steps even on the coarsest grid: ``d/ε``
    above about ``5.9·10**9``; or a grid step outside ``2**-1021`` to ``2**969``), on
    exact Python integers, always (never ``int64`` by the values' magnitudes), with the
    deadline of Python objects (for one value, plus a time that grows with the bits of the
    noise scale: :data:`OFF_PATH`; on the float path, :data:`LONG_WALK` from about ``2**25``
    grid units).
    Up to 64 coordinates the noise comes from a fixed-cost sampler (see "Timing" in
    :mod:`dpkit._samplers`). And the call ends at a deadline set by d, the input's types
    and this machine's speed (:mod:`dpkit.timing`: what it covers), so the running time
    reveals neither the data nor the noise except when a release overruns its deadline (the
    work's slow tail, a busy machine; :func:`dpkit.timing.overruns` counts overruns, it does
    not prevent them). A
    float64 array gets the shortest deadline, so its dtype is public: one that NumPy took from
    numbers whose type depends on the data (``np.array([sum(rows)])``, int64 for no rows,
    float64 for rows of floats) shows in the time (breaker review 32); pass a list, or build
    the array with ``dtype=float``. The calibration is memoised per (Δ, ε, d). The privacy
    guarantee above assumes the *computed* ``f(x)`` has sensitivity ``Δ``: a float sum of
    clipped values can exceed it by a rounding (sum on an integer grid instead, as
    :func:`dpkit.svt.auto_avg` does).

    References: Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014), Theorem 3.6;
    Mironov (2012) for why the float version is unsafe; Canonne, Kamath & Steinke (2020).

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> release = laplace_mechanism(42.0, sensitivity=1.0, epsilon=0.5, rng=seeded(0))
    >>> isinstance(release, float)
    True
    """
    return run_padded(COST, _laplace_mechanism_work, value, sensitivity, epsilon, rng)


def _laplace_mechanism_work(clock: Deadline, value: Any, sensitivity: Any, epsilon: Any,
                            rng: Any) -> Any:
    """The work of :func:`laplace_mechanism`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    # Public first (errors raise at once): the shape, the parameters, the source.
    # A list or tuple is never a scalar: no need to build an object array just to ask.
    scalar = not isinstance(value, (np.ndarray, list, tuple)) and \
        as_array(value, "value", object).ndim == 0
    shape = None if scalar else check_shape(value, "value")  # elements not looked at
    size = 1 if shape is None else shape.size
    delta = _check_sensitivity(sensitivity, rounding="up")
    epsilon = check_epsilon(epsilon, rounding="down")
    source = resolve(rng)
    grid, span = _laplace_release(delta, epsilon, size)
    # Off the float path (public: Δ, ε, d) every value is added on Python ints: the deadline
    # of Python objects covers that, as for a list.
    kind = kind_of(value) if span.floats else "objects"
    clock.size(size, kind)  # errors padded from here
    if size == 1:  # one draw, whatever holds it ([x], (x,), a 0-d array): the scalar walk
        clock.add_work(scalar_extra_work(grid.scale_units, span.floats))
        if shape is not None and kind == "objects":
            clock.add("objects")  # a list's conversion: see COST
    refuse_masked(value, "value")  # which entries are masked is data: padded

    def draw(n: int) -> np.ndarray:
        return discrete_laplace(grid.scale_units, source, size=n)

    def words() -> dict[str, Any]:
        return _range_words(grid, value, sensitivity, epsilon)

    if shape is None:
        return noisy_scalar(check_real(value, "value", exact=True), span, draw, words)
    array = check_finite_array(shape, "value", exact=True, copy=False)
    released = noisy_values(array.reshape(-1), span, draw, words)
    if array.ndim == 0:  # a 0-d array gives a float, as gaussian_mechanism
        return float(released[0])
    return released.reshape(array.shape)


@public_table(maxsize=256)
def _laplace_release(delta: float, epsilon: float, count: int
                     ) -> tuple[LaplaceGrid, ReleaseRange]:
    """The grid of validated parameters and its release range (:data:`RANGE_SCALES`)."""
    grid = _laplace_grid(delta, epsilon, count)
    reach = RANGE_SCALES * grid.scale_units * Fraction(2) ** grid.exponent
    return grid, release_range(grid.exponent, reach)


def sample_releases(value: float, sensitivity: float, epsilon: float, n: int, *,
                    rng: Any = None) -> np.ndarray:
    """``n`` independent runs of :func:`laplace_mechanism` on the same scalar ``value``.

    For simulations and figures: the result has exactly the distribution of ``n`` separate
    calls ``laplace_mechanism(value, sensitivity, epsilon)``, drawn in one vectorised step.

    Parameters
    ----------
    value : float
        The true (scalar) query answer.
    sensitivity, epsilon : float
        As in :func:`laplace_mechanism`.
    n : int
        Number of releases, in ``[0, MAX_RELEASES]`` (:data:`MAX_RELEASES` = ``10**7``: the
        arrays must fit in memory).
    rng : None or dpkit.rng.RandomSource, keyword-only
        Source of randomness (secure default).

    Returns
    -------
    numpy.ndarray of float64, shape ``(n,)``

    Raises
    ------
    TypeError, ValueError
        For invalid input, ``n`` above :data:`MAX_RELEASES`, or a ``value`` the noise could
        push beyond the float range (as in :func:`laplace_mechanism`).

    Notes
    -----
    Privacy: each release is ε-DP; publishing all ``n`` of them costs ``n·ε`` by sequential
    composition (Dwork & Roth 2014, Theorem 3.14). Averaging them is exactly what that
    accounting protects against.

    Timing: the ``n`` copies of ``value`` are released as one array by the steps of
    :func:`laplace_mechanism` (each with the grid of one value): a float on the
    constant-cost float path; any other type (an int, a Fraction, a Decimal), or an ε so
    small that the noise leaves the float path (below about ``8.5·10**-11`` at Δ = 1), on
    exact Python integers. Either is padded to the deadline of ``n`` Python objects
    (:mod:`dpkit.timing`), plus one for ``n = 1`` (one copy in an object array), whatever
    the value's type: the type of one number may depend on the data (``sum`` of no rows is
    the int 0, of rows of floats a float), so it must not set the deadline (a float's
    shorter deadline let a timer tell ``0`` from ``0.5``: breaker review 32). ``n = 1``,
    one draw as in a scalar release, adds its extra time (:data:`LONG_WALK` or
    :data:`OFF_PATH`). A simulation that publishes nothing can skip the wait inside
    :func:`dpkit.timing.unpadded`. ``n = 0`` returns an empty array (the value is
    validated, not put on the grid).
    """
    return run_padded(COST, _sample_releases_work, value, sensitivity, epsilon, n, rng)


def _sample_releases_work(clock: Deadline, value: Any, sensitivity: Any, epsilon: Any, n: Any,
                          rng: Any) -> np.ndarray:
    """The work of :func:`sample_releases`, inside its deadline (``n`` values' worth): the
    release of ``n`` copies of ``value`` by :func:`dpkit._samplers.grid.noisy_values`, each
    with the grid of one value."""
    n = check_integer(n, "n", minimum=0, maximum=MAX_RELEASES)
    grid, span = _laplace_release(_check_sensitivity(sensitivity, rounding="up"),
                                  check_epsilon(epsilon, rounding="down"), 1)
    source = resolve(rng)
    # A float on the float path; any other type (an int, a Fraction: a float may not hold
    # it) on Python ints. The type of one number is data (``sum`` of no rows is the int 0:
    # timing.KINDS), so every type gets the deadline of objects (breaker review 32).
    floats = span.floats and isinstance(value, float)
    clock.size(n, "objects")  # from here on, an error is padded too
    if n == 1:  # one draw: the scalar walk (laplace_mechanism)
        clock.add_work(scalar_extra_work(grid.scale_units, span.floats))
        clock.add("objects")  # one copy in an object array: see COST
    value = check_real(value, "value", exact=True)
    copies = np.full(n, value, dtype=np.float64 if floats else object)

    def draw(count: int) -> np.ndarray:
        return discrete_laplace(grid.scale_units, source, size=count)

    if n == 0:
        return np.empty(0)
    return noisy_values(copies, span, draw,
                        lambda: _range_words(grid, value, sensitivity, epsilon))


warm_up_calls(_laplace_mechanism_work, laplace_mechanism, 1.0, 1.0)
warm_up_calls(_sample_releases_work, sample_releases, 1.0, 1.0, 65)
