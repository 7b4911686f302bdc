"""Parameter validation: the one place where dpkit checks its inputs.

Every public function of :mod:`dpkit` validates its arguments through these helpers, so
that bad input always fails the same way: a :class:`TypeError` for a value of the wrong
type, a :class:`ValueError` for a value out of range, and in both cases a message that
names the parameter, the value received and the valid range, for example::

    epsilon must be a finite number > 0, got nan

Nothing here clamps or repairs a value, and **nothing is rounded silently**. A value that
float64 cannot hold exactly (an ``int`` beyond ``2**53`` such as ``2**54 + 3``, a
:class:`fractions.Fraction` such as ``1/3``, a :class:`decimal.Decimal`, an ``np.longdouble``)
is either

* refused with a :class:`ValueError` that says why (the default), or
* returned exactly, as a :class:`~fractions.Fraction`, when the caller has an exact path
  (``exact=True``), or
* rounded in the direction the caller names as safe (``rounding="down"`` or ``"up"``): for
  example a mechanism calibrates with epsilon rounded *down* (more noise), an accountant
  records a spent epsilon rounded *up*.

Rounding to nearest would be unsafe: two neighbouring inputs ``2**54 + 2`` and ``2**54 + 3``
(distance 1) round to floats 4 apart, so noise calibrated for a sensitivity of 1 would no
longer hide the difference.

What "exactly" means -- the float64 range, and the size limits on exact values that keep
exact arithmetic within a release's deadline -- is :mod:`dpkit._exact`'s concern: this module
validates parameters and arrays with its conversions (:func:`dpkit._exact.exact_number`) and
shows every refused value with :func:`dpkit._exact.describe`.

Examples
--------
>>> from fractions import Fraction
>>> check_epsilon(Fraction(1, 10), rounding="down") <= Fraction(1, 10)
True
>>> check_real(2**54 + 3, "value")
Traceback (most recent call last):
...
ValueError: value=18014398509481987 is not exactly representable as a float64 ...
>>> check_real(2**54 + 3, "value", exact=True)
Fraction(18014398509481987, 1)
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from dpkit._exact import (
    MAX_ROW_DECIMAL_DIGITS,
    describe,
    exact_number,
    inexact_error,
    masked_error,
    round_fraction,
    too_long,
)

__all__ = [
    "as_array",
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_integer",
    "check_nonempty",
    "check_probability",
    "check_real",
    "check_rows_to_clip",
    "check_sensitivity",
    "check_shape",
    "refuse_masked",
]

Rounding = Literal["down", "up"] | None

_EXACT_INT = 2**53  # every integer of magnitude <= 2**53 is a float64


def check_real(value: Any, name: str, *, exact: bool = False) -> Any:
    """Return ``value`` as a finite ``float`` (or exactly, with ``exact=True``).

    Parameters
    ----------
    value : real number
        An ``int``, ``float``, :class:`fractions.Fraction`, :class:`decimal.Decimal` or NumPy
        real scalar (``np.longdouble`` included).
    name : str
        The parameter's name, used in error messages.
    exact : bool
        If true, a value float64 cannot hold exactly is returned as a :class:`Fraction`
        instead of being refused.

    Returns
    -------
    float, or (``exact=True`` only) Fraction

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool``, ``str``, ``None``, complex, arrays).
    ValueError
        If ``value`` is NaN, infinite, beyond the float64 range, a Decimal of non-zero
        magnitude below ``2**-1100`` (refused before its costly exact conversion), or (unless
        ``exact``) not exactly a float64.
    """
    result = exact_number(value, name)
    if isinstance(result, Fraction) and not exact:
        raise inexact_error(value, name, result)
    return result


def _check_real_in(value: Any, name: str, *, low: float, high: float,
                   low_open: bool, high_open: bool, rounding: Rounding = None) -> float:
    """Validate a real number in an interval; the message states the interval.

    A value float64 cannot hold is refused, or rounded in the direction ``rounding`` first.
    """
    if math.isinf(high):
        wanted = f"a finite number {'>' if low_open else '>='} {low:g}"
    else:
        wanted = (f"a number in {'(' if low_open else '['}{low:g}, "
                  f"{high:g}{')' if high_open else ']'}")
    exact = exact_number(value, name, wanted, bounded=False)  # a public parameter
    if isinstance(exact, Fraction):
        if rounding is None:
            raise inexact_error(value, name, exact)
        result = round_fraction(exact, rounding)
    else:
        result = exact
    below = result <= low if low_open else result < low
    above = result >= high if high_open else result > high
    if below or above:
        note = (f" (rounded {rounding} to the float {result!r})"
                if isinstance(exact, Fraction) else "")
        raise ValueError(f"{name} must be {wanted}, got {describe(value)}{note}")
    return result


def check_epsilon(epsilon: Any, name: str = "epsilon", *, rounding: Rounding = None) -> float:
    """Return a privacy-loss parameter epsilon as a ``float``: finite and > 0.

    Parameters
    ----------
    epsilon : real number
    name : str
        The parameter's name, used in error messages.
    rounding : {None, "down", "up"}
        What to do with an epsilon float64 cannot hold exactly (``Fraction(1, 10)``):
        ``None`` refuses it; ``"down"`` (a mechanism calibrating its noise: less epsilon,
        more noise) or ``"up"`` (an accountant recording what was spent) rounds it in that
        safe direction.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number.
    ValueError
        If ``epsilon`` is NaN, infinite, zero or negative (after rounding), or inexact with
        ``rounding=None``.
    """
    return _check_real_in(epsilon, name, low=0.0, high=math.inf,
                          low_open=True, high_open=True, rounding=rounding)


def check_delta(delta: Any, name: str = "delta", *, allow_zero: bool = False,
                rounding: Rounding = None) -> float:
    """Return delta, the additive slack of (ε, δ)-DP, as a ``float`` in (0, 1), or [0, 1).

    Parameters
    ----------
    delta : real number
    name : str
        The parameter's name, used in error messages.
    allow_zero : bool
        Accept ``delta == 0`` (pure differential privacy).
    rounding : {None, "down", "up"}
        As in :func:`check_epsilon`: ``"down"`` for a calibration, ``"up"`` for accounting.

    Raises
    ------
    TypeError
        If ``delta`` is not a real number.
    ValueError
        If ``delta`` is NaN or outside (0, 1) (or [0, 1) with ``allow_zero``) after rounding,
        or inexact with ``rounding=None``.
    """
    return _check_real_in(delta, name, low=0.0, high=1.0,
                          low_open=not allow_zero, high_open=True, rounding=rounding)


def check_sensitivity(sensitivity: Any, name: str = "sensitivity", *,
                      rounding: Rounding = None) -> float:
    """Return a query sensitivity as a ``float``: finite and > 0.

    ``rounding="up"`` is the safe direction when the sensitivity calibrates noise.

    Raises
    ------
    TypeError
        If ``sensitivity`` is not a real number.
    ValueError
        If ``sensitivity`` is NaN, infinite, zero or negative, or inexact with
        ``rounding=None``.
    """
    return _check_real_in(sensitivity, name, low=0.0, high=math.inf,
                          low_open=True, high_open=True, rounding=rounding)


def check_probability(p: Any, name: str, *, open_low: bool = False,
                      open_high: bool = False, rounding: Rounding = None) -> float:
    """Return a probability as a ``float`` in [0, 1] (ends optionally open).

    ``rounding`` is as in :func:`check_epsilon` (``None`` refuses a value that float64
    cannot hold exactly).

    Raises
    ------
    TypeError
        If ``p`` is not a real number.
    ValueError
        If ``p`` is NaN or outside the interval.
    """
    return _check_real_in(p, name, low=0.0, high=1.0, low_open=open_low,
                          high_open=open_high, rounding=rounding)


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
    if isinstance(value, (bool, np.bool_, np.timedelta64)) or \
            not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {describe(value)} "
                        f"of type {type(value).__name__}")
    result = int(value)
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        if maximum is None:
            wanted = f"an integer >= {minimum}"
        elif minimum is None:
            wanted = f"an integer <= {maximum}"
        else:
            wanted = f"an integer in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {wanted}, got {describe(result)}")
    return result


def check_bounds(lower: Any, upper: Any, name: str = "bounds", *,
                 strict: bool = True) -> tuple[float, float]:
    """Return finite bounds ``(lower, upper)`` with ``lower < upper`` (``<=`` if not strict).

    Raises
    ------
    TypeError
        If either bound is not a real number.
    ValueError
        If either bound is not finite, not exactly a float64, or they are out of order.
    """
    low = check_real(lower, f"{name}[0] (lower)")
    high = check_real(upper, f"{name}[1] (upper)")
    if low > high or (strict and low == high):
        relation = "<" if strict else "<="
        raise ValueError(f"{name} must satisfy lower {relation} upper, "
                         f"got lower={describe(lower)}, upper={describe(upper)}")
    return low, high


def check_nonempty(size: int, name: str, values: Any) -> None:
    """Refuse an empty input (``size`` 0) with a :class:`ValueError` naming ``name`` and the
    value received.

    Every release function refuses an empty input the same way (a release needs at least
    one value): an empty query has nothing to protect and no calibration (a 0-coordinate
    Gaussian, an average of nothing), and it usually means an upstream step selected no
    data, which returning an empty array would hide.

    Examples
    --------
    >>> check_nonempty(0, "values", [])
    Traceback (most recent call last):
    ...
    ValueError: values must not be empty (a release needs at least one value), got []
    """
    if size == 0:
        raise ValueError(f"{name} must not be empty (a release needs at least one value), "
                         f"got {describe(values)}")


def _position(flat_index: int, shape: tuple[int, ...]) -> Any:
    index = tuple(int(i) for i in np.unravel_index(flat_index, shape)) if shape else ()
    return index[0] if len(index) == 1 else index


def _element_name(name: str, flat_index: int, shape: tuple[int, ...]) -> str:
    if not shape:  # a scalar: the parameter itself (not "value[]")
        return name
    position = _position(flat_index, shape)
    return f"{name}[{', '.join(map(str, position)) if isinstance(position, tuple) else position}]"


def _nonfinite_error(name: str, value: Any, flat_index: int,
                     shape: tuple[int, ...]) -> ValueError:
    return ValueError(f"{name} must hold finite numbers only, got {value!r} at index "
                      f"{_position(flat_index, shape)}")


def _element(value: Any, name: str, flat_index: int, shape: tuple[int, ...]) -> Any:
    """One element of an object array, validated as :func:`check_real` (exactly)."""
    _check_element_is_real(value, name, flat_index, shape)
    return exact_number(value, _element_name(name, flat_index, shape))


def _check_element_is_real(value: Any, name: str, flat_index: int,
                           shape: tuple[int, ...]) -> None:
    """Refuse an element that is not a finite real number (any magnitude is accepted)."""
    if isinstance(value, np.ma.MaskedArray):  # np.ma.masked in a list: a hidden entry
        raise masked_error(name, f"a masked entry at index {_position(flat_index, shape)}")
    if isinstance(value, np.ndarray) and value.ndim == 0:  # [np.array(1.5)]: not ragged
        raise TypeError(f"{name} must hold real numbers, not 0-d arrays, got "
                        f"{describe(value)} at index {_position(flat_index, shape)} (take "
                        f"its number with .item(), or pass one array)")
    if isinstance(value, (list, tuple, np.ndarray)):  # NumPy keeps a ragged nesting as objects
        raise ValueError(f"{name} must be a rectangular array (nested sequences of equal "
                         f"lengths) of real numbers, got the sequence {describe(value)} at "
                         f"index {_position(flat_index, shape)}")
    if isinstance(value, (bool, np.bool_, np.timedelta64, np.datetime64)) or \
            not isinstance(value, (numbers.Real, Decimal)):
        wanted = ("be an array of real numbers" if isinstance(value, (str, bytes))
                  else "hold real numbers only (no bools)")
        raise TypeError(f"{name} must {wanted}, got {describe(value)} of type "
                        f"{type(value).__name__} at index {_position(flat_index, shape)}")
    if (isinstance(value, (float, np.floating)) and not np.isfinite(value)) or \
            (isinstance(value, Decimal) and not value.is_finite()):
        raise _nonfinite_error(name, value, flat_index, shape)


def _exact_elements(array: np.ndarray, name: str, exact: bool) -> np.ndarray:
    """Validate an object array element by element (each as :func:`check_real`)."""
    items = [_element(v, name, i, array.shape) for i, v in enumerate(array.flat)]
    return _assemble(items, array, name, exact)


def _assemble(items: list[float | Fraction], array: np.ndarray, name: str,
              exact: bool) -> np.ndarray:
    """float64 array of ``items``; an object array if one is inexact and ``exact``."""
    for i, item in enumerate(items):
        if isinstance(item, Fraction):
            if not exact:
                raise inexact_error(array.flat[i], _element_name(name, i, array.shape), item)
            result = np.empty(len(items), dtype=object)
            result[:] = items
            return result.reshape(array.shape)
    return np.array(items, dtype=np.float64).reshape(array.shape)


def _refuse_nonfinite(array: np.ndarray, name: str) -> None:
    """Raise for the first NaN or infinity of a float array (none: two reductions, no copy).

    ``min`` and ``max`` propagate NaN, and are finite only if every element is: a clean
    array costs two passes and no temporary; the element is located only to report it.
    """
    if np.isfinite(array.min()) and np.isfinite(array.max()):
        return
    index = int(np.flatnonzero(~np.isfinite(array))[0])
    raise _nonfinite_error(name, float(array.flat[index]), index, array.shape)


def _typed_to_float(array: np.ndarray, name: str, exact: bool, copy: bool) -> np.ndarray:
    """Convert an integer or float array to float64, refusing (or keeping) inexact values."""
    if array.dtype.kind == "f":
        _refuse_nonfinite(array, name)
        if array.dtype.itemsize <= 8:  # float16/32/64 convert to float64 exactly
            return array.astype(np.float64, copy=copy)
        with np.errstate(over="ignore"):
            converted = array.astype(np.float64)
        suspect = ~np.isfinite(converted) | (converted.astype(array.dtype) != array)
    else:
        converted = array.astype(np.float64)
        # |integer| <= 2**53 converts exactly: two reductions decide it for the whole array
        if -_EXACT_INT <= int(array.min()) and int(array.max()) <= _EXACT_INT:
            return converted
        suspect = (array > _EXACT_INT) | (array < -_EXACT_INT)
    if not suspect.any():
        return converted
    items: list[float | Fraction] = list(converted.ravel())
    for i in np.flatnonzero(suspect):
        items[i] = _element(array.flat[i], name, int(i), array.shape)
    return _assemble(items, array, name, exact)


_NESTING = (list, tuple, np.ndarray)


def _holds_masked(values: Any) -> bool:
    """Whether ``values`` is, or holds at any depth of lists, tuples and object arrays, a
    masked array or entry: one pass over the whole nesting (no recursion), with no early
    exit, so its time depends on the nesting, not on where a masked entry is. The types of
    a level's members are collected at C speed (a set of types); its members are visited
    one by one only where that level holds a nesting."""
    found = False
    pending = [values]
    while pending:
        item = pending.pop()
        if isinstance(item, np.ma.MaskedArray):
            found = True
            continue
        if isinstance(item, np.ndarray):
            if item.dtype != object:
                continue
            item = item.ravel().tolist()
        elif not isinstance(item, (list, tuple)):
            continue
        kinds = set(map(type, item))
        if any(issubclass(kind, _NESTING) for kind in kinds):
            pending.extend(item)
    return found


def refuse_masked(values: Any, name: str) -> None:
    """Refuse a :class:`numpy.ma.MaskedArray`, or a nesting of lists, tuples or object
    arrays holding one (masked rows, ``[[np.ma.masked]]``) at any depth, with a
    :class:`TypeError` that says to fill or compress it first.

    ``np.asarray`` drops a mask silently and returns the raw data, masked entries
    included, so a mechanism fed a masked array would release the values the caller
    meant to hide. :func:`as_array` calls this, so every array a mechanism validates goes
    through it.

    **Timing.** A top-level masked array is refused from its type alone (the container's
    type is public). The scan of a nesting reads every entry, masked or not, to the end
    (its time depends on the nesting's size only), but which entries are masked is data:
    a release calls this only after declaring its public size
    (:meth:`dpkit.timing.Deadline.size`), so that the refusal waits for the deadline; its
    structural checks before the size (:func:`check_shape`, ``as_array(..., nested=False)``)
    look at the container's type only.

    Examples
    --------
    >>> refuse_masked(np.ma.masked_array([1.0, 2.0], mask=[False, True]), "x")
    Traceback (most recent call last):
    ...
    TypeError: x must not be a numpy.ma.MaskedArray or hold masked entries, got a ...
    >>> refuse_masked([[1.0, np.ma.masked]], "x")
    Traceback (most recent call last):
    ...
    TypeError: x must not be a numpy.ma.MaskedArray or hold masked entries, got a ...
    """
    if isinstance(values, np.ma.MaskedArray):
        raise masked_error(name)
    if _holds_masked(values):
        raise masked_error(name, "a sequence holding a masked array or entry")


def as_array(values: Any, name: str, dtype: Any = None, *, nested: bool = True) -> np.ndarray:
    """``np.asarray(values, dtype)``, with a clear error for a ragged nesting or a mask.

    NumPy refuses nested sequences of unequal lengths (``[[1.0], 2.0]``) with a message
    that names no parameter; this one names ``name``, the value and what is expected. A
    masked array (whose mask ``np.asarray`` would drop) is refused (:func:`refuse_masked`).

    With ``nested=False`` only a top-level masked array is refused (from its type, in
    constant time), for a release's structural step before its public size: the caller
    must then call :func:`refuse_masked` once the size is declared, and pass
    ``dtype=object`` for a list (NumPy would otherwise convert a masked entry to NaN).

    Raises
    ------
    TypeError
        If ``values`` is a :class:`numpy.ma.MaskedArray` or (unless ``nested=False``) a
        nesting holding one.
    ValueError
        If ``values`` is not a rectangular nesting of sequences.

    Examples
    --------
    >>> as_array([[1.0], 2.0], "values")
    Traceback (most recent call last):
    ...
    ValueError: values must be a rectangular array (nested sequences of equal lengths), ...
    """
    if nested:
        refuse_masked(values, name)
    elif isinstance(values, np.ma.MaskedArray):
        raise masked_error(name)
    try:
        return np.asarray(values, dtype=dtype)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array (nested sequences of equal "
                         f"lengths), got {describe(values)}") from None


def _numbers_array(values: Any, name: str, ndim: int | None, *,
                   nested: bool = True) -> np.ndarray:
    """``values`` as an array, unconverted, for :func:`check_finite_array` and
    :func:`check_rows_to_clip`: a typed container keeps its dtype (it says what it holds);
    a list becomes an object array, because it may mix types that NumPy would coerce
    silently (bools, big ints), so its elements are looked at as given. Refuses strings and
    a wrong number of dimensions; ``nested`` is as in :func:`as_array`."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {describe(values)}")
    dtype = getattr(values, "dtype", None)
    typed = isinstance(values, np.ndarray) or (dtype is not None and dtype.kind != "O")
    array = as_array(values, name, dtype=None if typed else object, nested=nested)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    return array


def check_shape(values: Any, name: str, *, ndim: int | None = None) -> np.ndarray:
    """``values`` as an array whose elements are not looked at yet: its shape is public.

    The first, structural step of :func:`check_finite_array`, for a release that must
    declare its public size (:meth:`dpkit.timing.Deadline.size`) before it looks at any
    value: it refuses a string, a masked array, a ragged nesting, a wrong number of
    dimensions and an empty input; a typed container keeps its dtype, a list becomes an
    object array (no element is converted). Which entries of a nesting are masked is
    data, not structure: once the size is declared, call :func:`refuse_masked` on
    ``values``, then pass the result to :func:`check_finite_array`, which validates the
    elements.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_finite_array`, for the structure only.

    Examples
    --------
    >>> check_shape([[0.5], [2]], "values").shape
    (2, 1)
    """
    array = _numbers_array(values, name, ndim, nested=False)
    check_nonempty(array.size, name, values)
    return array


def check_finite_array(values: Any, name: str, *, ndim: int | None = None,
                       allow_empty: bool = False, exact: bool = False,
                       copy: bool = True) -> np.ndarray:
    """Return ``values`` as a float64 array with no NaN or infinity.

    Every element is validated like :func:`check_real`: a bool anywhere (``[0.0, True]``)
    is refused, and so is an element float64 cannot hold exactly (an int beyond ``2**53``, a
    ``Fraction``, an ``np.longdouble``) unless ``exact`` is true.

    Parameters
    ----------
    values : array_like of real numbers
    name : str
        The parameter's name, used in error messages.
    ndim : int, optional
        Required number of dimensions.
    allow_empty : bool
        Accept an array with no elements.
    exact : bool
        If true and some element is not exactly a float64, return an ``object`` array whose
        elements are floats and (for those elements) exact :class:`Fraction` values.
    copy : bool
        If false, a float64 NumPy array that passes is returned as is (not copied), so the
        check costs two reductions and no new array; the caller must then not modify the
        result (it is the caller's input). Other inputs are always converted into a new
        array.

    Raises
    ------
    TypeError
        If ``values`` does not hold real numbers (bools included), or is a
        ``numpy.ma.MaskedArray`` or holds masked entries (:func:`refuse_masked`: the raw
        values under a mask would otherwise be used).
    ValueError
        If it is empty (unless allowed), ragged (``[[1.0], 2.0]``), has the wrong shape,
        holds NaN, infinity, a value beyond the float64 range or a Decimal of non-zero
        magnitude below ``2**-1100`` (as :func:`check_real`), or (unless ``exact``) a value
        float64 cannot hold.

    Examples
    --------
    >>> check_finite_array([0.0, True], "values")
    Traceback (most recent call last):
    ...
    TypeError: values must hold real numbers only (no bools), got True of type bool at index 1
    """
    array = _numbers_array(values, name, ndim)
    if array.size == 0:
        if not allow_empty:
            check_nonempty(array.size, name, values)
        return np.zeros(array.shape, dtype=np.float64)
    if array.dtype.kind == "O":
        return _list_to_float(array, name, exact)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype}")
    return _typed_to_float(array, name, exact, copy)


_FLOAT_BITS = 1024  # an int of more bits is beyond the float range: 2**1024 rounds to inf
# A Fraction n/d with gap = n.bit_length() - d.bit_length() lies in (2**(gap-1), 2**(gap+1))
# in magnitude: beyond 2**1026 (inf) for a gap over 1026, below 2**-1080 (rounding to 0,
# under half the smallest subnormal 2**-1074) for a gap under -1080.
_GAP_ABOVE_FLOATS = 1026
_GAP_BELOW_FLOATS = -1080


def _nearest_float(value: Any) -> float:
    """A real number rounded to the nearest float64 (ties to even); beyond the float range,
    ``±inf``.

    An int of more than 1024 bits, or a Fraction whose parts' bit lengths put it beyond the
    float range or below half the smallest subnormal (:func:`_row_too_long`'s thresholds),
    is rounded from its bit lengths and signs alone, in constant time: ``float()`` of a
    long int, a Fraction's ``float()`` and its comparisons all take a time that grows with
    its length. Any other value (a bounded length) goes through ``float()``, which rounds
    correctly and raises :class:`OverflowError` where the rounding overflows (from
    ``2**1024 - 2**970`` up).
    """
    if isinstance(value, int):
        if value.bit_length() > _FLOAT_BITS:
            return -math.inf if value < 0 else math.inf
    elif isinstance(value, numbers.Rational) and not isinstance(value, np.generic):
        numerator = int(value.numerator)
        gap = numerator.bit_length() - int(value.denominator).bit_length()
        if gap > _GAP_ABOVE_FLOATS:
            return -math.inf if numerator < 0 else math.inf
        if gap < _GAP_BELOW_FLOATS:
            return -0.0 if numerator < 0 else 0.0
    try:
        return float(value)
    except OverflowError:  # a bounded int or Fraction rounding beyond the float range
        return -math.inf if value < 0 else math.inf


def _check_kinds(flat: np.ndarray, name: str, shape: tuple[int, ...], *,
                 bounded: bool = False, rows: bool = False) -> None:
    """Refuse a non-number, checking each *type* present once (not each element); with
    ``bounded``, also refuse an element too long for exact arithmetic (:func:`too_long`),
    before any element is converted; with ``rows``, only one too long to round to a float
    at a cost that does not depend on its length (:func:`_row_too_long`)."""
    kinds = set(map(type, flat))
    for kind in kinds:
        if issubclass(kind, (bool, np.bool_, np.timedelta64, np.datetime64, list, tuple,
                             np.ndarray, str, bytes)) or \
                not issubclass(kind, (numbers.Real, Decimal)):
            index = next(i for i, v in enumerate(flat) if type(v) is kind)
            _check_element_is_real(flat[index], name, index, shape)
    if bounded and any(issubclass(kind, (Decimal, numbers.Rational))
                       and not issubclass(kind, np.generic) for kind in kinds):
        for index, value in enumerate(flat):
            if (_row_too_long if rows else too_long)(value):
                if rows and isinstance(value, Decimal):
                    raise _long_row_error(value, name, index, shape)
                _element(value, name, index, shape)  # raises, from the sizes alone


def _long_row_error(value: Decimal, name: str, flat_index: int,
                    shape: tuple[int, ...]) -> ValueError:
    """The error for a Decimal row too long to round to a float in a bounded time."""
    return ValueError(
        f"{_element_name(name, flat_index, shape)} must be a Decimal of at most "
        f"{MAX_ROW_DECIMAL_DIGITS} digits (a row is rounded to a float; a longer one, judged "
        f"from its size in memory before it is read, would take a time that grows with its "
        f"length), got {describe(value)}")


def _row_too_long(value: Any) -> bool:
    """Whether a row is too long to round to the nearest float at a cost that does not
    depend on its length, from sizes read in constant time. An int, or a Fraction whose
    parts' bit lengths put it beyond the float range (or below its smallest subnormal),
    is rounded by :func:`_nearest_float` from its bit lengths and sign to ``±inf`` (or
    ``±0``) whatever its length; any other value is as :func:`too_long`."""
    if isinstance(value, numbers.Integral):
        return False
    if isinstance(value, numbers.Rational) and not isinstance(value, np.generic):
        gap = int(value.numerator).bit_length() - int(value.denominator).bit_length()
        if not _GAP_BELOW_FLOATS <= gap <= _GAP_ABOVE_FLOATS:
            return False
    return too_long(value)


def _equals(nearest: float, value: Any) -> bool:
    """``nearest == value`` exactly (NumPy would compare an ``np.int64`` as a float)."""
    return nearest == (int(value) if isinstance(value, np.integer) else value)


def _list_to_float(array: np.ndarray, name: str, exact: bool) -> np.ndarray:
    """An object array (from a list) as float64 in one pass, whatever the element types.

    Every element is rounded to the nearest float and compared with it exactly (Python's
    ``==`` between a float and an int, Fraction or Decimal is exact; see :func:`_equals`),
    so ints, floats and Fractions cost about the same: the running time does not reveal
    which rows are not floats. Only an element that is inexact or not finite is looked at
    again (and a list holding one is refused, or kept exactly, anyway).
    """
    flat = array.ravel()
    _check_kinds(flat, name, array.shape, bounded=True)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            floats = np.fromiter(map(_nearest_float, flat), dtype=np.float64, count=flat.size)
            same = np.fromiter(map(_equals, floats.tolist(), flat), dtype=bool,
                               count=flat.size)
    except (ValueError, ArithmeticError):  # a signalling NaN: the element-wise check says so
        return _exact_elements(array, name, exact)
    bad = ~(same & np.isfinite(floats))
    if not bad.any():
        return floats.reshape(array.shape)
    items: list[float | Fraction] = floats.tolist()
    for i in np.flatnonzero(bad).tolist():
        items[i] = _element(flat[i], name, i, array.shape)
    return _assemble(items, array, name, exact)


def _rows_as_floats(array: np.ndarray, name: str) -> np.ndarray:
    """An object array of real numbers as float64, by one pass whatever the element types.

    The types are checked per *kind* (a set of the types present), and every element goes
    through the same conversion, so the cost hardly depends on which rows are ints,
    floats or Fractions. Only a row that comes out non-finite is looked at again. A
    Fraction longer than exact arithmetic accepts, or a Decimal of more than
    :data:`~dpkit._exact.MAX_ROW_DECIMAL_DIGITS` digits (:func:`_row_too_long`), is
    refused first, from its size alone, unless it lies beyond the float range (an int of
    any size, say): rounding it would take a time that grows with its length.
    """
    flat = array.ravel()
    _check_kinds(flat, name, array.shape, bounded=True, rows=True)
    with np.errstate(over="ignore"):  # a long double beyond the float range
        result = np.fromiter(map(_nearest_float, flat), dtype=np.float64, count=flat.size)
    for i in np.flatnonzero(~np.isfinite(result)):
        _check_element_is_real(flat[i], name, int(i), array.shape)  # NaN or infinity
    return result.reshape(array.shape)


def check_rows_to_clip(values: Any, name: str, low: float, high: float, *,
                       ndim: int | None = None) -> np.ndarray:
    """Return one value per row as float64, clipped to ``[low, high]`` (floats).

    Any finite real number is accepted, however large or however far from a float64, up to
    a bounded length (within the float range, a Fraction whose numerator and denominator
    have at most :data:`~dpkit._exact.MAX_EXACT_BITS` bits, a Decimal of at most
    :data:`~dpkit._exact.MAX_ROW_DECIMAL_DIGITS` (608) digits -- a row is only rounded,
    so the 360 digits of exact arithmetic do not apply, and a Decimal is judged by its size
    in memory, which for one built by arithmetic may exceed what its digits need --; ints
    of any size): each row
    is rounded to its nearest float64 (``±inf`` beyond the float range), then clipped.
    Rounding to nearest is monotone and the bounds are floats, so a row outside the range
    is clipped *exactly* (``2**53 + 1`` or ``10**400`` above ``high`` becomes ``high``), and
    a row inside it moves by at most half an ulp, a function of that row alone: each row's
    contribution stays in ``[low, high]``, so a caller's sensitivity (computed for rows in
    that range) is unchanged. Unlike :func:`check_finite_array`, no finite row of bounded length is
    refused, so no error reveals that one row is huge or not a float64.

    What is refused -- a NaN or infinity, a bool, a string, any other non-number, a ragged
    nesting, a Fraction or Decimal too long to round in a time that does not depend on its
    length -- is outside the input domain (finite real numbers of bounded length). That
    domain is a precondition the caller must enforce on the data before a release: the
    error itself reveals that some row is outside it.

    Raises
    ------
    TypeError
        If ``values`` does not hold real numbers (bools included), or is a masked array
        (:func:`refuse_masked`).
    ValueError
        If it is empty, ragged, has the wrong number of dimensions, or holds NaN, infinity,
        or a Fraction or Decimal longer than the limits above.

    Examples
    --------
    >>> check_rows_to_clip([30, 2**53 + 1, -10**400], "values", 0.0, 1e6).tolist()
    [30.0, 1000000.0, 0.0]
    """
    array = _numbers_array(values, name, ndim)
    check_nonempty(array.size, name, values)
    if array.dtype.kind == "O":
        return np.clip(_rows_as_floats(array, name), low, high)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype}")
    if array.dtype.kind == "f":
        _refuse_nonfinite(array, name)
    with np.errstate(over="ignore"):  # round to nearest (a long double may overflow)
        return np.clip(array.astype(np.float64), low, high)
