"""The power-of-two grid: exact conversion of query values to grid units and back.

The safe mechanisms never add noise to a float. They round the query value to the grid
``2**k · Z`` (:func:`to_grid`, exact), add integer noise (:func:`add_units`), and convert the
exact result back to the nearest float (:func:`from_grid`, a post-processing step). Rounding
each coordinate moves it by at most half a grid step, so the rounded query has ℓ1
sensitivity at most ``Δ + d·2**k`` and ℓ2 sensitivity at most ``Δ + √d·2**k`` (``d``
coordinates): :func:`grid_sensitivity` returns those bounds in grid units, and
:func:`grid_exponent` picks a grid fine enough that the widening is at most a fraction
``2**-GRID_BITS`` of ``Δ``.

Up to ``FIXED_MAX = 64`` values the arithmetic always runs on exact Python integers
(:func:`exact_path`, a choice from the size alone). The mechanisms' releases
(:func:`noisy_values`) take :func:`add_to_floats` when public quantities allow and exact
Python integers otherwise, whatever the values; called without ``exact``, :func:`to_grid`
and :func:`add_units` use ``int64`` on larger arrays while the values fit (a switch the
values choose: see "Timing" in :mod:`dpkit._samplers`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer
from dpkit._exact import describe
from dpkit._samplers.bits import mask
from dpkit._samplers.exact import (
    FIXED_MAX,
    INT64_SAFE,
    as_int_array,
    ceil_sqrt,
    floor_log2,
    object_ints,
    positive_fraction,
)

__all__ = [
    "FLOAT_K_RANGE",
    "FLOAT_MAX",
    "FLOAT_NOISE_MAX",
    "GRID_BITS",
    "ReleaseRange",
    "add_to_floats",
    "add_units",
    "check_float_range",
    "check_release_range",
    "exact_path",
    "far_inside",
    "float_path",
    "from_grid",
    "grid_exponent",
    "grid_sensitivity",
    "noisy_scalar",
    "noisy_values",
    "release_range",
    "to_grid",
]

#: The largest float64, exactly.
FLOAT_MAX = Fraction(np.finfo(np.float64).max)


#: The grid step is at most ``2**-GRID_BITS`` times the sensitivity (divided by the widening).
GRID_BITS = 20


def grid_exponent(sensitivity: Any, count: int = 1, *, norm: int = 1,
                  bits: int = GRID_BITS) -> int:
    """The exponent ``k`` of the grid ``2**k · Z`` for a query of ``count`` coordinates.

    ``k`` is the largest integer with ``w · 2**k <= sensitivity · 2**-bits``, where the
    widening ``w`` is ``count`` (ℓ1) or ``sqrt(count)`` (ℓ2): rounding to the grid then
    increases the sensitivity by at most a fraction ``2**-bits``.

    Parameters
    ----------
    sensitivity : real number > 0
        The query's ℓ1 (``norm=1``) or ℓ2 (``norm=2``) sensitivity.
    count : int >= 1
        Number of coordinates of the query.
    norm : {1, 2}
    bits : int >= 0

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.
    """
    delta = positive_fraction(sensitivity, "sensitivity")
    count = check_integer(count, "count", minimum=1)
    norm = _check_norm(norm)
    bits = check_integer(bits, "bits", minimum=0, maximum=200)
    widening = Fraction(count) if norm == 1 else ceil_sqrt(count)
    return floor_log2(delta / widening) - bits


def _check_norm(norm: Any) -> int:
    norm = check_integer(norm, "norm", minimum=1, maximum=2)
    return norm


def grid_sensitivity(sensitivity: Any, k: int, count: int = 1, *, norm: int = 1) -> Fraction:
    """An upper bound, in grid units, on the sensitivity of the query rounded to ``2**k · Z``.

    Rounding moves each of the ``count`` coordinates by at most ``2**(k-1)``, so for
    neighbours ``x, x'`` the rounded values differ by at most ``Δ + count·2**k`` (ℓ1) or
    ``Δ + sqrt(count)·2**k`` (ℓ2). In grid units the ℓ1 difference is an integer, so the
    ℓ1 bound is ``floor(Δ/2**k) + count``; the ℓ2 bound is ``Δ/2**k`` plus a dyadic upper bound
    on ``sqrt(count)``.

    Parameters
    ----------
    sensitivity : real number > 0
        The unrounded query's ℓ1 or ℓ2 sensitivity ``Δ``.
    k : int
        Grid exponent (see :func:`grid_exponent`).
    count : int >= 1
        Number of coordinates.
    norm : {1, 2}

    Returns
    -------
    Fraction
        ``D`` with ``||round(f(x)) - round(f(x'))|| <= D · 2**k`` for all neighbours.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.
    """
    delta = positive_fraction(sensitivity, "sensitivity")
    k = check_integer(k, "k")
    count = check_integer(count, "count", minimum=1)
    norm = _check_norm(norm)
    units = delta / Fraction(2) ** k
    if norm == 1:
        return Fraction(math.floor(units) + count)
    return units + ceil_sqrt(count)


def exact_path(size: int) -> bool:
    """Whether grid arithmetic on ``size`` values runs on Python ints (public choice).

    The path is chosen from the *size* alone, never from the values: every release of up to
    ``FIXED_MAX`` (64) values is computed on exact Python integers whatever its magnitude,
    so two neighbouring inputs take the same path. Larger arrays use ``int64`` while every
    value fits and Python ints otherwise: that switch depends on the values (see "Timing"
    in :mod:`dpkit._samplers`), the price of vectorised speed.
    """
    return size <= FIXED_MAX


def _round_units(value: Any, k: int) -> int:
    """``value / 2**k`` rounded to the nearest integer (ties to even), exactly.

    One code path for floats and Fractions alike (``as_integer_ratio``), so the cost does
    not depend on whether the value is a float64.
    """
    numerator, denominator = value.as_integer_ratio()
    if k <= 0:
        numerator <<= -k
    else:
        denominator <<= k
    quotient, remainder = divmod(numerator, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient & 1):
        quotient += 1
    return quotient


# Vectorised grid arithmetic on float64/int64 (the non-exact path): why it is exact.
#
# * Scaling by a power of two is exact in IEEE-754 binary64 unless the result leaves the
#   normal range: ``x · 2**j`` has the significand of ``x`` (at most 53 bits, also for a
#   subnormal ``x``) and only a new exponent. ``2.0**j`` is itself a float for
#   ``-1022 <= j <= 1023``, and a multiplication is correctly rounded, so ``x * 2.0**j`` is
#   the exact product whenever that product is a normal float; ``np.ldexp`` (slower) does
#   the same for any ``j``.
# * ``to_grid``: if ``x · 2**-k`` underflows (magnitude ``< 2**-1022``), the rounded result
#   is a float of magnitude ``< 2**-1022`` or zero, and so is the exact value: both round
#   to the integer 0, which is the exact answer since ``|x / 2**k| < 1/2``. If it overflows
#   the result is ±inf, which the range check below sends to the exact path. Otherwise it
#   is exact, and ``np.rint`` (round half to even, exact on floats) gives the exact nearest
#   integer. A float ``r`` with ``|r| < 2**62`` converts to ``int64`` exactly; ``max`` and
#   ``min`` decide that without a temporary array (NaN cannot occur: the caller validated
#   finite values, and a NaN would fail both comparisons and take the exact path).
# * ``from_grid``: ``int64 -> float64`` in NumPy is the C conversion, correctly rounded to
#   nearest-even on IEEE hardware, so ``float(u) = RN(u)``. Multiplying by ``2.0**k`` then
#   gives ``RN(u) · 2**k = RN(u · 2**k)`` (rounding commutes with power-of-two scaling) when
#   the product is normal and finite. ``|u| >= 1`` and ``k >= -1022`` rule out subnormal
#   results (where a second rounding would occur: double rounding); an overflow gives ±inf
#   exactly when the correctly rounded ``u · 2**k`` exceeds the largest float, which is also
#   what :func:`_units_to_float` returns. Hence the fast path for ``-1022 <= k <= 1023``;
#   other ``k`` (grid steps below ``2**-1022`` or above ``2**1023``, from sensitivities
#   near the ends of the float range) take the exact path.
# Zero: ``0.0 · 2**j`` and ``rint(-0.0)`` are signed zeros, which convert to the integer 0;
# ``int64`` 0 converts to ``+0.0``, as ``_units_to_float(0, k)`` does.
_SCALE_MIN, _SCALE_MAX = -1022, 1023  # 2.0**j is a normal float for j in this range
_IN_PLACE_CHUNK = 1 << 13  # elements converted at once in place (NumPy's temporary stays small)


def _in_place(operation: Callable[[np.ndarray, np.ndarray], Any], source: np.ndarray,
              target: np.ndarray) -> None:
    """``operation(source, out=target)`` for 1-d views of one memory block, by chunks.

    Element ``i`` of ``target`` occupies the bytes of element ``i`` of ``source`` (another
    dtype of the same size): NumPy would copy the whole source first to be safe; by chunks
    its copy is small and every element is read before it is overwritten.
    """
    for start in range(0, source.size, _IN_PLACE_CHUNK):
        operation(source[start:start + _IN_PLACE_CHUNK], target[start:start + _IN_PLACE_CHUNK])


def _float_units(values: np.ndarray, k: int) -> np.ndarray | None:
    """``rint(values / 2**k)`` as ``int64`` (exact, see above), or None if one is ``>= 2**62``.

    One output array and no other full-size temporary: the rounded floats are computed in
    the output's own memory (viewed as float64) and converted in place.
    """
    values = values.reshape(-1)
    out = np.empty(values.size, dtype=np.int64)
    scaled = out.view(np.float64)
    with np.errstate(over="ignore", under="ignore"):  # ±inf takes the exact path below
        if _SCALE_MIN <= -k <= _SCALE_MAX:
            np.multiply(values, 2.0 ** -k, out=scaled)
        else:  # |j| >= 2200 gives 0 or ±inf for every finite float, like any larger |j|
            np.ldexp(values, max(-2200, min(2200, -k)), out=scaled)
    np.rint(scaled, out=scaled)
    if scaled.size and not (scaled.max() < INT64_SAFE and scaled.min() > -INT64_SAFE):
        return None
    _in_place(lambda chunk, into: np.copyto(into, chunk, casting="unsafe"), scaled, out)
    return out


def _exact_dtype(values: np.ndarray) -> bool:
    """Whether an array must be rounded element by element (no float64 holds it exactly)."""
    return values.dtype.kind != "f" or values.dtype.itemsize > 8


def to_grid(values: np.ndarray, k: int, *, exact: bool | None = None) -> np.ndarray:
    """Round finite floats to the nearest multiple of ``2**k`` (ties to even), in grid units.

    Exact: ``values · 2**-k`` is computed exactly (power-of-two scaling) or in integer
    arithmetic. On the exact path (:func:`exact_path`: up to 64 values, chosen from the size
    alone) the result is always an ``object`` array of Python ints; otherwise an ``int64``
    array, or an ``object`` array if a value does not fit in 62 bits.

    Parameters
    ----------
    values : numpy.ndarray of float64, or object array of floats and Fractions
        Finite values (validated by the caller, e.g. ``check_finite_array(..., exact=True)``).
        An object array is rounded exactly from each element's exact value, so a value that
        float64 cannot hold (``2**54 + 3``) is never rounded to a float first; so is an
        integer or ``longdouble`` array.
    k : int
        Grid exponent.
    exact : bool, optional
        Force the Python-int path (``True``) or the vectorised one (``False``); default
        ``exact_path(values.size)``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from fractions import Fraction
    >>> to_grid(np.array([Fraction(2**54 + 3)], dtype=object), 0).tolist()
    [18014398509481987]
    >>> to_grid(np.array([0.75, -2.5]), -1).tolist()
    [2, -5]
    """
    values = np.asarray(values)
    if exact_path(values.size) if exact is None else exact:
        return object_ints([_round_units(v, k) for v in values.ravel().tolist()],
                            values.shape)
    if not _exact_dtype(values):
        units = _float_units(values.astype(np.float64, copy=False), k)
        if units is not None:
            return units.reshape(values.shape)
    return as_int_array([_round_units(v, k) for v in values.ravel().tolist()], values.shape)


def _within(array: np.ndarray, bound: int) -> bool:
    """``|array| < bound`` everywhere, by two reductions (no temporary, no ``abs`` overflow)."""
    return array.size == 0 or (int(array.max()) < bound and int(array.min()) > -bound)


def add_units(a: np.ndarray, b: np.ndarray, *, exact: bool | None = None,
              overwrite: bool = False) -> np.ndarray:
    """Exact sum of two integer arrays in grid units.

    On the exact path (:func:`exact_path` of ``a.size``, or ``exact=True``) the sum is
    always taken on Python ints. Otherwise ``int64``, unless an operand may come near
    ``2**62`` (``int64`` addition could wrap around silently): then Python ints. With
    ``overwrite=True`` an ``int64`` sum is stored in ``a`` itself (the caller no longer
    needs it), saving a new array.
    """
    a, b = np.asarray(a), np.asarray(b)
    python = exact_path(a.size) if exact is None else exact
    if not python and a.dtype == np.int64 and b.dtype == np.int64 and \
            _within(a, INT64_SAFE // 2) and _within(b, INT64_SAFE // 2):
        if overwrite and a.flags.writeable and np.broadcast_shapes(a.shape, b.shape) == a.shape:
            return np.add(a, b, out=a)
        return a + b
    total = [int(x) + int(y) for x, y in zip(a.ravel().tolist(),
                                              np.broadcast_to(b, a.shape).ravel().tolist(),
                                              strict=True)]
    return object_ints(total, a.shape) if python else as_int_array(total, a.shape)


def from_grid(units: np.ndarray, k: int, *, exact: bool | None = None,
              overwrite: bool = False) -> np.ndarray:
    """The floats nearest to ``units · 2**k`` (a deterministic post-processing step).

    Parameters
    ----------
    units : numpy.ndarray of int64 or of Python ints
    k : int
        Grid exponent.
    exact : bool, optional
        Force the Python-int path (``True``) or allow the ``int64`` one (``False``);
        default ``exact_path(units.size)``.
    overwrite : bool
        If true, an ``int64`` ``units`` (which the caller no longer needs) may be replaced
        by the result: the floats are then stored in its memory, and no new array is made.

    Returns
    -------
    numpy.ndarray of float64
    """
    units = np.asarray(units)
    python = exact_path(units.size) if exact is None else exact
    if not python and units.dtype == np.int64 and _SCALE_MIN <= k <= _SCALE_MAX:
        scale = 2.0 ** k
        with np.errstate(over="ignore"):  # ±inf is the nearest float (see above)
            if not (overwrite and units.flags.writeable and units.flags.c_contiguous):
                return np.multiply(units, scale)  # one rounding (see above)
            flat = units.reshape(-1)
            result = flat.view(np.float64)
            _in_place(lambda chunk, into: np.multiply(chunk, scale, out=into), flat, result)
        return result.reshape(units.shape)
    flat = [_units_to_float(int(u), k) for u in units.ravel().tolist()]
    return np.array(flat, dtype=np.float64).reshape(units.shape)


def _units_to_float(units: int, k: int) -> float:
    """Nearest float to ``units · 2**k`` (±inf beyond the range); one correctly rounded step."""
    try:
        return float(units << k) if k >= 0 else units / (1 << -k)
    except OverflowError:
        return math.inf if units > 0 else -math.inf


# ---------------------------------------------------- float64 releases at a constant cost

#: Grid exponents for which :func:`add_to_floats` applies: ``2.0**k`` and ``2.0**-k`` are
#: normal floats, values below the normal range all round to 0 units, and a release near
#: the largest float cannot overflow the intermediate ``t · 2**k`` (``|t| < 2**54``).
FLOAT_K_RANGE = (-1021, 969)
#: The noise ``add_to_floats`` takes, in grid units: ``|noise| < 2**53`` (exact in float64).
FLOAT_NOISE_MAX = 2**53


def float_path(dtype: np.dtype, k: int, reach_units: Fraction) -> bool:
    """Whether :func:`add_to_floats` serves a release (a choice from public quantities).

    ``dtype`` is the validated input's dtype (float64, not an ``object`` array of exact
    values), ``k`` the grid exponent, ``reach_units`` how far the noise may go in grid units
    (noise beyond it has probability below ``2**-1074``): it must stay below ``2**53``.
    """
    low, high = FLOAT_K_RANGE
    return dtype == np.float64 and low <= k <= high and reach_units < FLOAT_NOISE_MAX


_FLOAT_CHUNK = 1 << 14  # elements per pass of add_to_floats: its temporaries stay in cache


def add_to_floats(values: np.ndarray, k: int, noise: np.ndarray, *,
                  overwrite: bool = False) -> np.ndarray:
    """``RN((round(values / 2**k) + noise) · 2**k)`` at a cost independent of every value.

    The same vectorised passes run whatever the values' magnitudes and binary expansions
    and whatever the noise (two branches computed for every element, one selected), and
    the result is the one :func:`to_grid`, :func:`add_units` and :func:`from_grid` give,
    bit for bit. Why it is exact, for ``k`` in :data:`FLOAT_K_RANGE` and ``|noise| < 2**53``
    (``noise · 2**k`` is then an exact normal float, or 0):

    * *small* values, ``|x| < 2**(k + 52)``: ``x · 2**-k`` is exact (a power-of-two
      scaling of a normal result; values below ``2**(k-1)``, replaced by 0 first so no
      subnormal operand is ever multiplied, round to 0 units, as does their exact
      quotient for ``k >= -1021``), ``rint`` rounds it half to even, exactly, to an integer
      ``u`` with ``|u| <= 2**52``, and ``u · 2**k`` is exact; IEEE addition returns the
      correctly rounded exact sum ``RN((u + noise) · 2**k)``, a normal float or zero
      (``|u + noise| >= 1``, ``k >= -1021``; ``+0.0`` for a zero sum), never beyond the
      largest float (``|u + noise| < 2**54``, ``k + 54 <= 1023``);
    * *large* values, ``|x| >= 2**(k + 52)``: the last bit of ``x`` is worth at least
      ``2**k``, so ``x`` is already on the grid, and IEEE addition returns the correctly
      rounded exact sum ``RN(x + noise · 2**k)``, ±inf exactly when that sum rounds beyond
      the largest float (as :func:`from_grid` does).

    The passes run over chunks of ``2**14`` values, whose temporaries stay in the cache.

    Parameters
    ----------
    values : numpy.ndarray of float64
        Finite values.
    k : int
        Grid exponent, in :data:`FLOAT_K_RANGE`.
    noise : numpy.ndarray of integers
        The noise in grid units, one per value.
    overwrite : bool
        If true, an ``int64`` ``noise`` (which the caller no longer needs) may be replaced
        by the result: the floats are then stored in its memory, and no new array is made.

    Returns
    -------
    numpy.ndarray of float64
        If some ``|noise| >= 2**53`` (beyond the reach :func:`float_path` requires: an
        event of probability below ``2**-1074``), the chunk holding it is computed on Python
        ints, at a cost that depends on the values.

    Raises
    ------
    ValueError
        If ``k`` is outside :data:`FLOAT_K_RANGE`.

    Examples
    --------
    >>> add_to_floats(np.array([0.3, 2.0**60]), -2, np.array([1, -1])).tolist()
    [0.5, 1.152921504606847e+18]
    """
    low, high = FLOAT_K_RANGE
    if not low <= k <= high:
        raise ValueError(f"k={k} is outside {FLOAT_K_RANGE}")
    x = values.reshape(-1)
    try:
        n = np.asarray(noise, dtype=np.int64).reshape(-1)
    except OverflowError:  # beyond 2**63: exact, on Python ints
        return _exact_sum(x, k, np.asarray(noise).reshape(-1)).reshape(values.shape)
    ours = overwrite and isinstance(noise, np.ndarray) and noise.dtype == np.int64 and \
        noise.flags.writeable and noise.flags.c_contiguous
    out = n.view(np.float64) if ours else np.empty(x.size, dtype=np.float64)
    with np.errstate(over="ignore"):  # large values may overflow in x · 2**-k: not selected
        for start in range(0, x.size, _FLOAT_CHUNK):
            stop = start + _FLOAT_CHUNK
            _add_chunk(x[start:stop], k, n[start:stop], out[start:stop])
    return out.reshape(values.shape)


def _add_chunk(x: np.ndarray, k: int, noise: np.ndarray, out: np.ndarray) -> None:
    """:func:`add_to_floats` on one chunk (``out`` may share ``noise``'s memory)."""
    noise_float = noise.astype(np.float64)      # exact for |noise| < 2**53, checked here:
    if not (noise_float.max() < FLOAT_NOISE_MAX and noise_float.min() > -FLOAT_NOISE_MAX):
        out[:] = _exact_sum(x, k, np.asarray(noise, dtype=object))  # RN is monotone
        return
    noise_float *= 2.0 ** k
    magnitude = np.abs(x)
    # Selections by bit masks, not np.where: np.where's loop branches on each condition, so
    # its cost depended on the pattern of the values (branch mispredictions: one value in
    # two on either side of a threshold cost 66 µs more per 16,385 than all on one side,
    # and the work alone certified ε ≥ 1.1 from timing; breaker review 19).
    keep = mask(magnitude >= 2.0 ** (k - 1))
    x = (x.view(np.int64) & keep).view(np.float64)  # +0.0 below: 0 units, no subnormal product
    grid = np.multiply(x, 2.0 ** -k)
    np.rint(grid, out=grid)
    grid *= 2.0 ** k
    small = mask(magnitude < 2.0 ** (k + 52))      # on the grid below, the value itself above
    bits = grid.view(np.int64)
    bits &= small
    np.invert(small, out=small)
    small &= x.view(np.int64)
    bits |= small
    np.add(grid, noise_float, out=out)


def _exact_sum(x: np.ndarray, k: int, noise: np.ndarray) -> np.ndarray:
    """:func:`add_to_floats`'s result on Python ints (noise beyond its reach)."""
    total = add_units(to_grid(x, k, exact=True), np.asarray(noise, dtype=object), exact=True)
    return from_grid(total, k, exact=True)


@dataclass(frozen=True)
class ReleaseRange:
    """The public constants of releases on the grid ``2**k · Z`` whose noise reaches ``reach``.

    Built once per calibration (:func:`release_range`) and kept by the mechanisms with it,
    so that a release does no exact arithmetic on them.

    Attributes
    ----------
    k : int
        Grid exponent.
    reach : Fraction
        How far the noise may move a value, in the query's units (noise beyond it has
        probability below ``2**-1074``).
    floats : bool
        Whether a float64 request takes :func:`add_to_floats` (:func:`float_path`).
    largest : float
        The largest ``|value|`` the float path accepts (``L + reach <= FLOAT_MAX``, exactly).
    """

    k: int
    reach: Fraction
    floats: bool
    largest: float


def release_range(k: int, reach: Fraction) -> ReleaseRange:
    """The :class:`ReleaseRange` of grid exponent ``k`` and noise reach ``reach`` (public).

    Parameters
    ----------
    k : int
        Grid exponent.
    reach : Fraction
        The noise's reach in the query's units (> 0).

    Returns
    -------
    ReleaseRange

    Examples
    --------
    >>> release_range(-20, Fraction(750)).floats
    True
    """
    return ReleaseRange(k=k, reach=reach, floats=float_path(np.dtype(np.float64), k,
                                                            reach / Fraction(2) ** k),
                        largest=_largest_allowed(reach))


def noisy_values(values: np.ndarray, span: ReleaseRange, draw: Callable[[int], np.ndarray],
                 words: Callable[[], dict[str, Any]]) -> np.ndarray:
    """``values`` plus noise on the grid ``2**k · Z``, as the nearest floats (flat arrays).

    The shared last steps of the Laplace and Gaussian mechanisms: refuse a release noise
    could push beyond the float range (before any noise is drawn), draw the noise in grid
    units (``draw(n)``), add it and convert back: by :func:`add_to_floats` at a constant
    cost when ``span.floats`` allows (a choice from public quantities) and the values are
    float64, else always on exact Python ints (``exact=True``: never ``int64`` by the
    values' magnitudes, whose switch at ``2**61`` units a timer could see; breaker review
    23), whose cost the caller's deadline must cover (the ``"objects"`` kind of
    :mod:`dpkit.timing`).

    Parameters
    ----------
    values : numpy.ndarray, one dimension
        The validated query values (float64, or ``object`` holding exact values).
    span : ReleaseRange
        The grid exponent, the noise's reach and what follows from them.
    draw : callable
        ``draw(n)`` returns ``n`` noise values in grid units.
    words : callable
        ``words()`` returns ``value``, ``noise`` and ``bound`` for the range check's
        message; called only to refuse.

    Returns
    -------
    numpy.ndarray of float64

    Raises
    ------
    ValueError
        If ``max|value| + reach`` exceeds the largest float.
    """
    k = span.k
    if span.floats and values.dtype == np.float64:
        check_float_range(values, span, words)
        return add_to_floats(values, k, draw(values.size), overwrite=True)  # noise: ours
    units = to_grid(values, k, exact=True)
    check_release_range(units, k, span.reach, **words())
    return from_grid(add_units(units, draw(values.size), exact=True), k, exact=True)


_RINT = 2.0**52  # (y + c) - c with c = ±2**52 rounds |y| < 2**52 to an integer, ties to even


def noisy_scalar(value: float | Fraction, span: ReleaseRange,
                 draw: Callable[[int], np.ndarray],
                 words: Callable[[], dict[str, Any]]) -> float:
    """:func:`noisy_values` for one value, on Python floats when it is a float.

    The float path is :func:`add_to_floats`'s, step for step, on Python floats instead of
    one-element arrays: the same selections (by indexing a
    pair with a comparison, not by a branch), the same IEEE roundings, so bit for bit the
    same result; ``rint`` is ``(y + c) - c`` with ``c = copysign(2**52, y)``, exact for
    ``|y| < 2**52`` (where it is selected). The noise comes from ``draw(1)`` as an array
    and is converted by NumPy, whose cost does not depend on its magnitude (a Python
    int's conversion does). A value float64 cannot hold takes :func:`noisy_values`.

    Parameters
    ----------
    value : float or Fraction
        The validated query value (:func:`dpkit._checks.check_real` with ``exact=True``).
    span, draw, words
        As in :func:`noisy_values`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``|value| + reach`` exceeds the largest float.

    Examples
    --------
    >>> span = release_range(-2, Fraction(1))
    >>> noisy_scalar(0.3, span, lambda n: np.array([1]), dict)
    0.5
    """
    if not (span.floats and type(value) is float):
        return float(noisy_values(np.array([value]), span, draw, words)[0])
    check_float_range(value, span, words)
    magnitude = abs(value)
    raw = draw(1)
    noise = float(raw.astype(np.float64)[0])            # exact below 2**53
    if not abs(noise) < FLOAT_NOISE_MAX:    # beyond the reach: probability below 2**-1074
        # the drawn integers, not their float (which rounds beyond 2**53: review 24)
        return float(_exact_sum(np.array([value]), span.k, np.asarray(raw, dtype=object))[0])
    step, inverse = 2.0**span.k, 2.0**-span.k
    kept = (0.0, value)[magnitude >= 0.5 * step]        # +0.0 below: 0 units, no subnormal
    y = kept * inverse
    c = math.copysign(_RINT, y)
    on_grid = ((y + c) - c) * step
    return (value, on_grid)[magnitude < _RINT * step] + noise * step


# ------------------------------------------------------------------ the release's float range

_FAR_REACH = Fraction(10) ** 307  # with |value| < 2**1020 (about 1.1e307): far inside


def far_inside(size: int, largest: int, k: int, reach: Fraction) -> bool:
    """``True`` when ``|value| < 2**1020`` and the noise reach is below ``1e307``, so that
    :func:`check_release_range` may skip its exact comparison.

    ``largest`` is the largest ``|value|`` in grid units ``2**k``. Never for a release of
    up to 64 values (:func:`exact_path`), which always makes the exact comparison, so that
    its cost does not depend on the values' magnitude.
    """
    return (not exact_path(size) and reach < _FAR_REACH
            and largest.bit_length() + k <= 1020)


def check_release_range(units: np.ndarray, k: int, reach: Fraction, *, value: Any,
                        noise: str, bound: str) -> None:
    """Refuse, before any noise is drawn, a release that noise could push beyond the float
    range, so that whether an error is raised never depends on the noise.

    Parameters
    ----------
    units : numpy.ndarray of int64 or of Python ints
        The query values in grid units (:func:`to_grid`).
    k : int
        Grid exponent.
    reach : Fraction
        How far the noise may move a value, in the query's units: the mechanism chooses it
        so that noise beyond it has probability below ``2**-1074`` (750 Laplace scales, 40
        Gaussian standard deviations).
    value : object
        The value as the caller gave it, summarised for the message only when one is
        raised (:func:`dpkit._exact.describe`: formatting a large array costs more than
        the release).
    noise, bound : str
        For the message: the noise and its parameters (``"noise of scale ... (sensitivity=
        ..., epsilon=...)"``), and the bound in words (``"max|value| + 750·(noise scale)"``).

    Raises
    ------
    ValueError
        If ``max|value| + reach`` exceeds the largest float.
    """
    if units.size == 0:
        return
    if units.dtype == np.int64:
        largest = max(int(units.max()), -int(units.min()))  # no temporary, no abs overflow
    else:
        largest = max(abs(int(u)) for u in units.ravel().tolist())
    if far_inside(units.size, largest, k, reach):
        return
    _refuse_beyond(largest * Fraction(2) ** k, reach, value, noise, bound)


def check_float_range(values: np.ndarray | float, span: ReleaseRange,
                      words: Callable[[], dict[str, Any]]) -> None:
    """:func:`check_release_range` for float64 values (the :func:`add_to_floats` path): the
    same refusal, from two reductions (no temporary; one ``abs`` for a Python float) and
    a float comparison with ``span.largest``, whatever the values.

    Parameters
    ----------
    values : numpy.ndarray of float64, or float
    span : ReleaseRange
    words : callable
        As in :func:`noisy_values`: called only to refuse.

    Raises
    ------
    ValueError
        If ``max|value| + span.reach`` exceeds the largest float.
    """
    if isinstance(values, float):
        largest = abs(values)
    else:
        largest = max(float(values.max()), -float(values.min()))
    if not largest <= span.largest:   # a float comparison: the exact one took longer on
        _refuse_beyond(Fraction(largest), span.reach, **words())        # subnormals


def _largest_allowed(reach: Fraction) -> float:
    """The largest float ``L`` with ``L + reach <= FLOAT_MAX`` exactly (−inf if none), from
    the public ``reach`` alone: comparing a value with it is a float comparison, whose cost
    does not depend on the value (``Fraction(5e-324)`` costs 3 µs more than
    ``Fraction(0.1)``, breaker review 19)."""
    room = FLOAT_MAX - reach
    if room < 0:
        return -math.inf
    allowed = float(room)                       # to nearest: one step down if above
    return allowed if Fraction(allowed) <= room else math.nextafter(allowed, -math.inf)


def _refuse_beyond(largest: Fraction, reach: Fraction, value: Any, noise: str,
                   bound: str) -> None:
    if largest + reach > FLOAT_MAX:
        raise ValueError(
            f"value={describe(value)} is too close to the float range for {noise}: {bound} must "
            f"be at most the largest float {float(FLOAT_MAX)!r}, got max|value| = "
            f"{float(min(largest, FLOAT_MAX)):.6g}; the release could overflow to infinity")
