"""Parameter validation: the one place where dpkit checks its inputs.

Every public function of :mod:`dpkit` validates its arguments through these helpers, so
that bad input always fails the same way: a :class:`TypeError` for a value of the wrong
type, a :class:`ValueError` for a value out of range, and in both cases a message that
names the parameter, the value received and the valid range, for example::

    epsilon must be a finite number > 0, got nan

Nothing here clamps or repairs a value. Each helper returns the validated value converted
to a plain Python type (``float`` or ``int``) or a NumPy array, so callers never work on
unchecked input.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "as_fraction",
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_integer",
    "check_probability",
    "check_real",
    "check_sensitivity",
]


def _describe(value: Any) -> str:
    """Render a received value for an error message (short, unambiguous)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a finite ``float``.

    Parameters
    ----------
    value : real number
        An ``int``, ``float``, :class:`fractions.Fraction` or NumPy real scalar.
    name : str
        The parameter's name, used in error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool``, ``str``, ``None``, complex, arrays).
    ValueError
        If ``value`` is NaN or infinite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)} "
                        f"of type {type(value).__name__}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be a finite number, got {_describe(value)}")
    return result


def _check_real_in(value: Any, name: str, *, low: float, high: float,
                   low_open: bool, high_open: bool) -> float:
    """Validate a real number in an interval; the message states the interval."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)} "
                        f"of type {type(value).__name__}")
    result = float(value)
    below = result <= low if low_open else result < low
    above = result >= high if high_open else result > high
    if not math.isfinite(result) or below or above:
        if math.isinf(high) and math.isinf(low):
            wanted = "a finite number"
        elif math.isinf(high):
            wanted = f"a finite number {'>' if low_open else '>='} {low:g}"
        else:
            wanted = (f"a number in {'(' if low_open else '['}{low:g}, "
                      f"{high:g}{')' if high_open else ']'}")
        raise ValueError(f"{name} must be {wanted}, got {_describe(value)}")
    return result


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return a privacy-loss parameter epsilon as a ``float``: finite and > 0.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number.
    ValueError
        If ``epsilon`` is NaN, infinite, zero or negative.
    """
    return _check_real_in(epsilon, name, low=0.0, high=math.inf,
                          low_open=True, high_open=True)


def check_delta(delta: Any, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Return a failure probability delta as a ``float`` in (0, 1), or [0, 1).

    Parameters
    ----------
    delta : real number
    name : str
        The parameter's name, used in error messages.
    allow_zero : bool
        Accept ``delta == 0`` (pure differential privacy).

    Raises
    ------
    TypeError
        If ``delta`` is not a real number.
    ValueError
        If ``delta`` is NaN or outside (0, 1) (or [0, 1) with ``allow_zero``).
    """
    return _check_real_in(delta, name, low=0.0, high=1.0,
                          low_open=not allow_zero, high_open=True)


def check_sensitivity(sensitivity: Any, name: str = "sensitivity") -> float:
    """Return a query sensitivity as a ``float``: finite and > 0.

    Raises
    ------
    TypeError
        If ``sensitivity`` is not a real number.
    ValueError
        If ``sensitivity`` is NaN, infinite, zero or negative.
    """
    return _check_real_in(sensitivity, name, low=0.0, high=math.inf,
                          low_open=True, high_open=True)


def check_probability(p: Any, name: str, *, open_low: bool = False,
                      open_high: bool = False) -> float:
    """Return a probability as a ``float`` in [0, 1] (ends optionally open).

    Raises
    ------
    TypeError
        If ``p`` is not a real number.
    ValueError
        If ``p`` is NaN or outside the interval.
    """
    return _check_real_in(p, name, low=0.0, high=1.0, low_open=open_low,
                          high_open=open_high)


def check_integer(value: Any, name: str, *, minimum: int | None = None,
                  maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` in ``[minimum, maximum]``.

    Integral floats (``3.0``) are refused: a size or count must be an integer.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (``bool`` included).
    ValueError
        If ``value`` is outside the range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)} "
                        f"of type {type(value).__name__}")
    result = int(value)
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        if maximum is None:
            wanted = f"an integer >= {minimum}"
        elif minimum is None:
            wanted = f"an integer <= {maximum}"
        else:
            wanted = f"an integer in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {wanted}, got {result}")
    return result


def check_bounds(lower: Any, upper: Any, name: str = "bounds", *,
                 strict: bool = True) -> tuple[float, float]:
    """Return finite bounds ``(lower, upper)`` with ``lower < upper`` (``<=`` if not strict).

    Raises
    ------
    TypeError
        If either bound is not a real number.
    ValueError
        If either bound is not finite or they are out of order.
    """
    low = check_real(lower, f"{name}[0] (lower)")
    high = check_real(upper, f"{name}[1] (upper)")
    if low > high or (strict and low == high):
        relation = "<" if strict else "<="
        raise ValueError(f"{name} must satisfy lower {relation} upper, "
                         f"got lower={_describe(lower)}, upper={_describe(upper)}")
    return low, high


def check_finite_array(values: Any, name: str, *, ndim: int | None = None,
                       allow_empty: bool = False) -> np.ndarray:
    """Return ``values`` as a float64 array with no NaN or infinity.

    Parameters
    ----------
    values : array_like of real numbers
    name : str
        The parameter's name, used in error messages.
    ndim : int, optional
        Required number of dimensions.
    allow_empty : bool
        Accept an array with no elements.

    Raises
    ------
    TypeError
        If ``values`` does not hold real numbers.
    ValueError
        If it is empty (unless allowed), has the wrong shape, or holds NaN or infinity.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {_describe(values)}")
    array = np.asarray(values)
    if array.dtype == object and array.size:
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                   for v in array.flat):
            raise TypeError(f"{name} must hold real numbers only, got {_describe(values)}")
    elif array.dtype.kind not in "iuf" and not (array.size == 0 and allow_empty):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    if array.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        position = index[0] if len(index) == 1 else index
        raise ValueError(f"{name} must hold finite numbers only, got "
                         f"{float(array[index])!r} at index {position}")
    return array


def as_fraction(value: Any, name: str) -> Fraction:
    """Return a finite real number exactly as a :class:`fractions.Fraction`.

    Floats convert exactly (a float is a dyadic rational), so no rounding happens.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_real`.
    """
    check_real(value, name)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, numbers.Rational):
        return Fraction(value.numerator, value.denominator)
    return Fraction(float(value))
