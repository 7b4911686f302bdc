"""Mironov's snapping mechanism: floating-point Laplace noise made safe by rounding and clamping.

The textbook Laplace mechanism adds a floating-point sample to a float, and the set of floats
it can output depends on the input (Mironov 2012; :mod:`dpkit.attacks.laplace`).
:func:`dpkit.laplace.laplace_mechanism` avoids floating-point noise altogether. Mironov's
own fix keeps it, and removes what the low-order bits reveal:

    ``clamp_B( round_Λ( clamp_B(f(D)) ⊕ S ⊗ λ ⊗ LN(U*) ) )``

where ``U*`` is uniform over *all* doubles in (0, 1) (each with probability its ulp),
``LN`` is a correctly rounded natural logarithm, ``S`` a random sign, ``⊕``/``⊗`` are
floating-point operations, ``round_Λ`` rounds to the nearest multiple of ``Λ`` (the smallest
power of two ``>= λ``; ties toward +∞) and ``clamp_B`` clips to ``[-B, B]``. Mironov (2012)
proves it ``(1/λ + 2**-49·B/λ)``-differentially private for a query of
sensitivity 1 when ``λ < B < 2**46·λ``: a little more than the ``1/λ`` of the ideal Laplace
mechanism (:func:`snapping_epsilon` computes it).

How dpkit meets the theorem's assumptions:

* ``U*`` is built from random bits exactly as Mironov describes: the exponent ``-e`` with
  ``e`` geometric (``P[e = k] = 2**-k``, read as the position of the first 1 in 1022 random
  bits; past them, a uniform nonzero subnormal) and 52 uniform mantissa bits.
* ``LN`` is MPFR's logarithm (gmpy2) in the IEEE double context (53 bits, round to
  nearest, double exponent range): MPFR returns the *correctly rounded* result for every
  input, which is exactly what the proof assumes (Mironov suggests CRlibm for the same
  reason; ``math.log`` is only faithful).
* The theorem is for sensitivity 1. A query of sensitivity ``Δ`` is run in units of
  ``s``, the smallest power of two ``>= Δ``: ``fl(f(D)/s)`` has sensitivity at most 1
  (dividing by a power of two is exact above ``2**-1022``, and below it the rounding to
  the nearest subnormal cannot push two values within 1 of each other further apart), and
  the result is multiplied back by ``s`` exactly. The noise scale in the query's units is
  ``s/ε``, which is ``Δ/ε`` when ``Δ`` is a power of two (counts: ``Δ = 1``) and at most
  twice it otherwise.
* ``round_Λ`` is computed exactly on the integer ratio of the float.

References
----------
I. Mironov. *On significance of the least significant bits for differential privacy.*
ACM CCS 2012 (the snapping mechanism and its privacy theorem).

Examples
--------
>>> from dpkit.rng import seeded
>>> release = snapping_mechanism(40.0, 1.0, 0.5, bound=1000.0, rng=seeded(3))
>>> release % 2.0 == 0 and -1000.0 <= release <= 1000.0     # a multiple of Λ = 2, in [-B, B]
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._checks import (
    as_array,
    check_epsilon,
    check_finite_array,
    check_real,
    check_shape,
    refuse_masked,
)
from dpkit._checks import check_sensitivity as _check_sensitivity
from dpkit._exact import (
    describe,
    round_fraction,
)
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource, resolve
from dpkit.timing import Cost, Deadline, kind_of, run_padded, warm_up_calls

__all__ = ["COST", "SnappingGrid", "snapping_epsilon", "snapping_grid", "snapping_mechanism"]

#: The worst cost of :func:`snapping_mechanism` (see :mod:`dpkit.timing`; measured by
#: ``benchmarks/deadlines.py`` over adversarial inputs).
COST = Cost(fixed=4.0, per_value=1.0, large=4.0, per_vector_value=60000.0, per_object=3.0)

#: The theorem's conditions: ``λ < B < 2**46·λ`` (in sensitivity-1 units).
MAX_BOUND_RATIO = 2**46

_IEEE_DOUBLE = gmpy2.ieee(64)   # 53 bits, round to nearest, the double exponent range
_EXPONENT_BITS = 1022           # U* in [2**-1022, 1) from these; below: a subnormal
_EXPONENT_RANGE = 400           # sensitivity and epsilon in [2**-400, 2**400]


@dataclass(frozen=True)
class SnappingGrid:
    """The parameters :func:`snapping_mechanism` uses, in the query's own units.

    Attributes
    ----------
    unit : float
        ``s``, the smallest power of two ``>= Δ``: the mechanism runs on ``f/s``.
    scale : float
        The Laplace scale ``λ = s·λ₁``, where ``λ₁`` is the smallest float ``>= 1/ε``.
    step : float
        ``Λ``, the smallest power of two ``>= λ``: every output that is not ``±B`` is a
        multiple of it.
    bound : float
        ``B``: inputs and outputs are clamped to ``[-B, B]``.
    epsilon : float
        The ε that Mironov's theorem certifies, ``1/λ₁ + 2**-49·(B/s)/λ₁``, rounded up.
    """

    unit: float
    scale: float
    step: float
    bound: float
    epsilon: float


def _power_of_two_at_least(x: float) -> int:
    """The exponent ``k`` of the smallest power of two ``2**k >= x`` (x > 0, finite)."""
    mantissa, exponent = math.frexp(x)        # x = mantissa·2**exponent, mantissa in [1/2, 1)
    return exponent - 1 if mantissa == 0.5 else exponent


def snapping_grid(sensitivity: float, epsilon: float, bound: float) -> SnappingGrid:
    """The unit, noise scale, grid step and certified ε of the snapping mechanism.

    Parameters
    ----------
    sensitivity : float
        The query's sensitivity ``Δ`` (finite, > 0; a value float64 cannot hold is
        rounded up).
    epsilon : float
        The ε asked for (finite, > 0; a value float64 cannot hold is rounded down). It
        sets the noise scale ``λ₁ = 1/ε`` (rounded up) in units of ``s``.
    bound : float
        ``B``, the public clamping bound (finite, > 0). Mironov's theorem needs
        ``λ < B < 2**46·λ``, with ``λ = s/ε`` the noise scale.

    Returns
    -------
    SnappingGrid

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is out of range (``sensitivity`` and ``epsilon`` must lie in
        ``[2**-400, 2**400]``, so that every step stays far from float underflow and
        overflow), or ``bound`` violates the theorem's conditions (the message names the
        valid range of ``bound``).

    Notes
    -----
    Privacy: the certified ε is Mironov's (2012) ``1/λ + 2**-49·B/λ`` for the
    sensitivity-1 query ``f/s`` (``λ = λ₁``, ``B = bound/s``), computed exactly and rounded up.

    Examples
    --------
    >>> grid = snapping_grid(1.0, 0.5, 1000.0)
    >>> grid.scale, grid.step, grid.epsilon > 0.5
    (2.0, 2.0, True)
    """
    delta = _check_sensitivity(sensitivity, rounding="up")
    epsilon = check_epsilon(epsilon, rounding="down")
    bound = check_real(bound, "bound")
    if not bound > 0:
        raise ValueError(f"bound must be a finite number > 0, got bound={bound!r}")
    return _snapping_grid(delta, epsilon, bound)


@public_table(maxsize=256)
def _snapping_grid(delta: float, epsilon: float, bound: float) -> SnappingGrid:
    k = _power_of_two_at_least(delta)
    if not -_EXPONENT_RANGE <= k <= _EXPONENT_RANGE:
        raise ValueError(f"sensitivity must be in [2**-{_EXPONENT_RANGE}, 2**{_EXPONENT_RANGE}] "
                         f"for the snapping mechanism, got sensitivity={delta!r}")
    if not 2.0**-_EXPONENT_RANGE <= epsilon <= 2.0**_EXPONENT_RANGE:
        raise ValueError(f"epsilon must be in [2**-{_EXPONENT_RANGE}, 2**{_EXPONENT_RANGE}] "
                         f"for the snapping mechanism, got epsilon={epsilon!r}")
    unit = math.ldexp(1.0, k)
    scale_1 = round_fraction(1 / Fraction(epsilon), "up")   # λ₁ >= 1/ε
    bound_1 = math.ldexp(bound, -k)
    if math.ldexp(bound_1, k) != bound or not math.isfinite(scale_1 * unit * 2**47):
        raise ValueError(f"sensitivity={delta!r}, epsilon={epsilon!r}, bound={bound!r} leave "
                         f"the float range the snapping mechanism needs; rescale the query")
    low, high = Fraction(scale_1), MAX_BOUND_RATIO * Fraction(scale_1)
    if not low < Fraction(bound_1) < high:
        raise ValueError(
            f"bound must satisfy λ < bound < 2**46·λ for Mironov's theorem, where λ = "
            f"{scale_1 * unit!r} is the noise scale (sensitivity rounded up to the power of two "
            f"{unit!r}, divided by epsilon={epsilon!r}); valid range "
            f"({scale_1 * unit!r}, {float(high) * unit!r}), got bound={bound!r}")
    certified = 1 / Fraction(scale_1) + Fraction(bound_1) / (Fraction(scale_1) * 2**49)
    return SnappingGrid(unit=unit, scale=scale_1 * unit,
                        step=math.ldexp(1.0, _power_of_two_at_least(scale_1) + k),
                        bound=bound, epsilon=round_fraction(certified, "up"))


def snapping_epsilon(sensitivity: float, epsilon: float, bound: float) -> float:
    """The ε that Mironov's theorem certifies for :func:`snapping_mechanism`, rounded up.

    Parameters
    ----------
    sensitivity, epsilon, bound : float
        As in :func:`snapping_mechanism`.

    Returns
    -------
    float
        ``1/λ₁ + 2**-49·B₁/λ₁`` rounded up to a float, with ``λ₁`` the smallest float
        ``>= 1/ε`` and ``B₁ = bound/s`` (``s`` the smallest power of two ``>= Δ``): always
        a little more than ``epsilon``.

    Raises
    ------
    TypeError, ValueError
        As :func:`snapping_grid`: in particular when ``bound`` is outside ``(λ, 2**46·λ)``,
        the range where the theorem holds.

    Notes
    -----
    Mironov (2012): the snapping mechanism is ``(1/λ + 2**-49·B/λ)``-DP for
    sensitivity-1 queries when ``λ < B < 2**46·λ``.

    Examples
    --------
    >>> snapping_epsilon(1.0, 0.5, 1000.0)   # 0.5 + 2**-49·1000/2
    0.5000000000008882
    >>> snapping_epsilon(1.0, 0.5, 1.0)
    Traceback (most recent call last):
    ...
    ValueError: bound must satisfy λ < bound < 2**46·λ for Mironov's theorem, where λ = 2.0 is \
the noise scale (sensitivity rounded up to the power of two 1.0, divided by epsilon=0.5); \
valid range (2.0, 140737488355328.0), got bound=1.0
    """
    return snapping_grid(sensitivity, epsilon, bound).epsilon


def _uniform_double(source: RandomSource) -> float:
    """``U*``: a double in (0, 1), each drawn with probability its ulp (Mironov 2012).

    The exponent: ``U* in [2**-e, 2**-e+1)`` with ``P[e = k] = 2**-k``, ``e`` being the
    position of the first 1 among 1022 random bits (always all 1022 are drawn, so the cost
    does not depend on ``e``). The 52 mantissa bits are uniform. If all 1022 bits are 0
    (probability ``2**-1022``), ``U*`` is a uniform nonzero subnormal.
    """
    bits = source.bits(_EXPONENT_BITS)
    mantissa = source.bits(52)
    if bits == 0:
        while mantissa == 0:
            mantissa = source.bits(52)
        return math.ldexp(float(mantissa), -1074)
    first_one = (bits & -bits).bit_length()          # 1-based position of the lowest 1
    return math.ldexp(float((1 << 52) | mantissa), -52 - first_one)


def _correctly_rounded_log(u: float) -> float:
    """``LN(u)``: the double nearest to ``ln(u)`` (MPFR, round to nearest, 53 bits)."""
    return float(_IEEE_DOUBLE.log(u))


def _round_to_step(y: float, exponent: int) -> int:
    """The integer ``n`` with ``n·2**exponent`` the multiple of ``2**exponent`` nearest to
    ``y``, ties toward +∞: ``floor(y/2**exponent + 1/2)``, exactly."""
    numerator, denominator = y.as_integer_ratio()             # denominator: a power of two
    if exponent >= 0:
        denominator <<= exponent
    else:
        numerator <<= -exponent
    return (2 * numerator + denominator) // (2 * denominator)


def _snap_one(x: float, grid: SnappingGrid, source: RandomSource) -> float:
    """One release in units of ``s`` (``x`` a double; see the module notes)."""
    bound = grid.bound / grid.unit
    scale = grid.scale / grid.unit
    step_exponent = _power_of_two_at_least(grid.step / grid.unit)
    clamped = min(max(x, -bound), bound)
    sign = 1.0 if source.bits(1) else -1.0
    noisy = clamped + (sign * scale) * _correctly_rounded_log(_uniform_double(source))
    snapped = math.ldexp(float(_round_to_step(noisy, step_exponent)), step_exponent)
    return min(max(snapped, -bound), bound)


def _as_unit_double(value: float | Fraction, grid: SnappingGrid, name: str) -> float:
    """``fl(value/s)``, clamped first if ``value`` is beyond ``±B`` (exactly, so a huge
    int or Fraction is clamped too); a value inside that float64 cannot hold is refused."""
    if value >= grid.bound:
        return grid.bound / grid.unit
    if value <= -grid.bound:
        return -grid.bound / grid.unit
    if isinstance(value, Fraction):
        raise ValueError(f"{name} must be exactly a float64 inside [-bound, bound] (the "
                         f"snapping mechanism's theorem is about doubles), got "
                         f"{describe(value)}; "
                         f"round it yourself, knowing the rounding may add to its sensitivity")
    return value / grid.unit


def snapping_mechanism(value: Any, sensitivity: float, epsilon: float, bound: float, *,
                       rng: Any = None) -> float | np.ndarray:
    """Release ``value`` with Mironov's snapping mechanism (floating-point Laplace, made safe).

    Parameters
    ----------
    value : float or array_like of float
        The true query answer ``f(x)``: a number, or an array released coordinate by
        coordinate (each coordinate is one release: see the privacy guarantee).
    sensitivity : float
        The sensitivity ``Δ`` of each coordinate (finite, > 0).
    epsilon : float
        The ε asked for (finite, > 0); the ε certified is slightly larger
        (:func:`snapping_epsilon`).
    bound : float
        ``B``, a public bound: inputs are clamped to ``[-B, B]`` before the noise and the
        output after it. Must satisfy ``λ < B < 2**46·λ`` with ``λ = s/ε`` the noise scale
        (``s`` the smallest power of two ``>= Δ``).
    rng : None or dpkit.rng.RandomSource, keyword-only
        ``None`` (default) uses the operating system's secure generator; pass
        ``dpkit.rng.seeded(n)`` only for reproducible teaching and tests.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``value`` (a 0-d array included), else a float64 array of
        the same shape. Each output is a multiple of ``Λ`` (:func:`snapping_grid`) or
        ``±B``, and lies in ``[-B, B]``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (array), or an argument has the wrong type.
    ValueError
        If ``value`` is empty, holds NaN or infinity, or holds a value inside ``(-B, B)``
        that float64 cannot hold exactly; if ``sensitivity``/``epsilon`` are not finite
        and > 0; or if ``bound`` is outside ``(λ, 2**46·λ)`` (message gives the range).

    Notes
    -----
    **Privacy guarantee.** Each coordinate's release is ε'-differentially private for
    neighbouring inputs whose values differ by at most ``Δ``, with
    ``ε' = snapping_epsilon(Δ, ε, B) = 1/λ₁ + 2**-49·(B/s)/λ₁`` (``λ₁`` the smallest float
    ``>= 1/ε``), slightly more than ε; a ``d``-coordinate array whose coordinates may all
    change costs ``d·ε'`` by composition. This is Mironov's theorem (2012) for
    the sensitivity-1 query ``fl(f/s)``, whose assumptions the implementation meets: ``U*``
    uniform over all doubles in (0, 1) built from random bits, a correctly rounded
    logarithm (MPFR), exact rounding to multiples of ``Λ``. Unlike
    :func:`dpkit.laplace.laplace_mechanism`, it needs the public bound ``B`` and loses a
    little ε; outputs are clamped to ``[-B, B]``, which biases values near ``±B``.

    **Accuracy.** Laplace noise of scale ``λ = s/ε`` plus a rounding of at most ``Λ/2 <= λ``.

    **Timing.** The random bits drawn do not depend on the noise (1022 bits for the
    exponent, always); MPFR's logarithm and Python's integer arithmetic may take a time
    that depends on the values, so the call ends at a deadline set by the number of
    values, their container and this machine's speed (:mod:`dpkit.timing`), except when a
    busy machine makes it overrun (:func:`dpkit.timing.overruns`).

    References: Mironov (2012), the snapping mechanism.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> release = snapping_mechanism(42.0, sensitivity=1.0, epsilon=0.5, bound=1000.0,
    ...                              rng=seeded(0))
    >>> isinstance(release, float), release % snapping_grid(1.0, 0.5, 1000.0).step
    (True, 0.0)
    """
    return run_padded(COST, _snapping_mechanism_work, value, sensitivity, epsilon, bound, rng)


def _snapping_mechanism_work(clock: Deadline, value: Any, sensitivity: Any, epsilon: Any,
                             bound: Any, rng: Any) -> Any:
    """The work of :func:`snapping_mechanism`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    # Public first (errors raise at once): the shape, the parameters, the source.
    scalar = not isinstance(value, (np.ndarray, list, tuple)) and \
        as_array(value, "value", object).ndim == 0
    shape = None if scalar else check_shape(value, "value")  # elements not looked at
    grid = snapping_grid(sensitivity, epsilon, bound)
    source = resolve(rng)
    clock.size(1 if shape is None else shape.size, kind_of(value))  # errors now padded
    refuse_masked(value, "value")  # which entries are masked is data: padded
    if shape is None:
        values = np.array([check_real(value, "value", exact=True)], dtype=object)
    else:
        values = check_finite_array(shape, "value", exact=True, copy=False)
    flat = values.reshape(-1)
    units = [_as_unit_double(v, grid, "value") for v in flat.tolist()]
    released = np.array([_snap_one(x, grid, source) for x in units]) * grid.unit
    if scalar or values.ndim == 0:  # a 0-d array too, as gaussian_mechanism
        return float(released[0])
    return released.reshape(values.shape)


warm_up_calls(_snapping_mechanism_work, snapping_mechanism, 1.0, 1.0, 1000.0)
