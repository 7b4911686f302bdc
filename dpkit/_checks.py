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

An exact value must lie within the float64 range (magnitude at most the largest float). A
:class:`~decimal.Decimal` must moreover be 0 or of magnitude at least ``2**-1100``: its exact
conversion builds ``10**|exponent|`` (``Decimal("1e-99999999")`` would take minutes), so
one beyond that range is refused from its exponent alone, before any conversion.

An exact value must also be of bounded *size*, because exact arithmetic costs more for
longer numbers and a release's deadline (:mod:`dpkit.timing`) covers a bounded cost
only: an ``int``, or the numerator or denominator of a ``Fraction`` (or of a long
double's exact ratio), has at most :data:`MAX_EXACT_BITS` (1,200) bits -- every float's
exact ratio has at most 1,075 --, and a Decimal at most :data:`MAX_DECIMAL_DIGITS` (360)
significant digits, the last of them worth at least ``10**-360`` (so that its exact ratio
has at most 1,200 bits too; ``benchmarks/deadlines.py`` measured 800 digits at ``1e-332``
six times costlier than a Decimal ``0.1``, beyond what the deadlines cover). Larger
ones are refused from ``int.bit_length()`` and the Decimal's size in memory, at a cost
that does not grow with the value's length, before any arithmetic on them. Error
messages summarise what they show (:func:`describe`), so that a 100,000-digit value
neither floods a message nor breaks it (Python refuses to print an int of more than
4,300 digits).

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

import itertools
import math
import numbers
import reprlib
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

import numpy as np

__all__ = [
    "MAX_DECIMAL_DIGITS",
    "MAX_EXACT_BITS",
    "as_array",
    "as_fraction",
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
    "describe",
    "refuse_masked",
    "round_fraction",
]

Rounding = Literal["down", "up"] | None

_FLOAT_MAX = Fraction(sys.float_info.max)
_EXACT_INT = 2**53  # every integer of magnitude <= 2**53 is a float64
#: The smallest non-zero magnitude of a Decimal accepted (2**-1100, below the smallest
#: subnormal float 2**-1074 and than every grid step the mechanisms use): converting a
#: Decimal exactly builds ``10**|exponent|``, so ``Decimal("1e-99999999")`` would take
#: seconds to minutes of big-integer work; it is refused from its exponent alone.
_DECIMAL_MIN_EXPONENT = -1100

#: The most bits an exact value may have: an ``int``, or the numerator or the denominator
#: of a Fraction (a long double is bounded by its format instead). Every float's exact
#: ratio fits (at most 1,024 bits above, 1,075 below), and ``benchmarks/deadlines.py``
#: shows that the releases' deadlines cover the arithmetic on values of this size.
MAX_EXACT_BITS = 1200
#: The most significant digits a Decimal may have, and the smallest exponent of its last
#: digit is ``-MAX_DECIMAL_DIGITS``: its exact ratio then has at most 1,196 bits above and
#: below (see :data:`MAX_EXACT_BITS`).
MAX_DECIMAL_DIGITS = 360
#: A Decimal's size in memory beyond its coefficient (``Decimal(0).__sizeof__()``): a
#: coefficient takes at most 8 bytes per 19 digits (CPython's ``_decimal``), so a Decimal
#: that holds at most :data:`MAX_DECIMAL_DIGITS` digits takes at most 152 more bytes.
_DECIMAL_BASE_BYTES = Decimal(0).__sizeof__()
_DECIMAL_MAX_EXTRA_BYTES = 256   # > 8·ceil(360/19) = 152: refused unread beyond it


#: Numbers of up to this many bits are printed (then cut to 60 characters); longer ones
#: are summarised by their size, so a message's cost does not grow with theirs.
_PRINTED_BITS = 4000


class _Summary(reprlib.Repr):
    """:func:`reprlib.repr`, with huge numbers summarised rather than printed: at a cost
    that does not grow with their length, and never beyond Python's int-to-str limit."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 3, 4, 4, 4
        self.maxstring = self.maxother = self.maxlong = 60

    def repr1(self, x: Any, level: int) -> str:
        # By isinstance, not by type name as reprlib does, so that subclasses are covered.
        if isinstance(x, int) and not isinstance(x, bool):
            return self.repr_int(x, level)
        for kind, method in ((Fraction, self.repr_Fraction), (Decimal, self.repr_Decimal),
                             (np.ndarray, self.repr_ndarray)):
            if isinstance(x, kind):
                return method(x, level)
        return super().repr1(x, level)

    def repr_int(self, x: int, level: int) -> str:
        bits = int.bit_length(x)
        if bits <= _PRINTED_BITS:
            return int.__repr__(x)
        sign = "-" if int.__lt__(x, 0) else ""
        return f"<int of {bits} bits: {sign}2**{bits - 1} or more>"

    def repr_Fraction(self, x: Fraction, level: int) -> str:
        top, bottom = abs(x.numerator).bit_length(), x.denominator.bit_length()
        if max(top, bottom) <= _PRINTED_BITS:
            return repr(x)
        return f"<Fraction: {top}-bit numerator, {bottom}-bit denominator>"

    def repr_Decimal(self, x: Decimal, level: int) -> str:
        if x.is_finite() and \
                x.__sizeof__() - _DECIMAL_BASE_BYTES > _DECIMAL_MAX_EXTRA_BYTES:
            return f"<Decimal of more than {MAX_DECIMAL_DIGITS} digits, about 1e{x.adjusted()}>"
        return repr(x)

    def repr_ndarray(self, x: np.ndarray, level: int) -> str:
        if x.dtype != object:
            return reprlib.Repr.repr_instance(self, x, level)  # NumPy summarises it
        head = self.repr1(list(itertools.islice(x.flat, self.maxlist)), level - 1)
        return f"<object array of shape {x.shape}, starting {head}>"


_SUMMARY = _Summary()


def describe(value: Any) -> str:
    """Render a received value for an error message: short, unambiguous, and at a cost that
    does not grow with the value's size (a huge int, Fraction or Decimal is summarised by
    its size; a long list by its first items).

    Every message of dpkit that shows a value formats it with this function.

    Examples
    --------
    >>> describe(10**5000)
    '<int of 16610 bits: 2**16609 or more>'
    >>> describe(2**54 + 3)
    '18014398509481987'
    >>> describe([0.5, 1.5])
    '[0.5, 1.5]'
    """
    try:
        text = _SUMMARY.repr(value)
    except Exception:  # a user's type whose repr fails
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 60 else text[:57] + "..."




def _type_error(value: Any, name: str) -> TypeError:
    if isinstance(value, np.ma.MaskedArray):  # np.ma.masked: a masked entry, not a number
        return _masked_error(name, "a masked entry")
    return TypeError(f"{name} must be a real number (int, float, fractions.Fraction, "
                     f"decimal.Decimal or a NumPy real scalar), got {describe(value)} "
                     f"of type {type(value).__name__}")


def _exact_number(value: Any, name: str, wanted: str = "a finite number", *,
                  bounded: bool = True) -> float | Fraction:
    """Validate a finite real number in the float range; return it exactly.

    Returns a ``float`` when float64 holds the value exactly, else its exact
    :class:`Fraction`. Bools, strings and other non-numbers raise :class:`TypeError`; NaN,
    infinity and magnitudes beyond the largest float raise :class:`ValueError`, and so
    (if ``bounded``: a value that may be data) does an exact value beyond
    :data:`MAX_EXACT_BITS` bits or :data:`MAX_DECIMAL_DIGITS` digits. A public parameter
    (``bounded=False``: epsilon, delta, a sensitivity) may be longer: its cost is public.
    """
    if isinstance(value, (bool, np.bool_, np.timedelta64, np.datetime64)):
        raise _type_error(value, name)
    if isinstance(value, float):  # float and np.float64
        if not math.isfinite(value):
            raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
        return float(value)
    if isinstance(value, numbers.Integral):
        # Every int takes the same steps below (no shortcut for |value| <= 2**53), so the
        # cost does not reveal on which side of 2**53 the value lies.
        integer = int(value)
        if integer.bit_length() > 1024:  # beyond the float range: refused unread
            raise _range_error(value, name)
        exact = Fraction(integer)
    elif isinstance(value, np.floating):  # float16, float32, longdouble
        if not np.isfinite(value):
            raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
        with np.errstate(over="ignore"):
            nearest = float(value)
        if nearest == value:  # exact (a signed zero keeps its sign)
            return nearest
        # Never refused for its length: a long double's ratio is bounded by its format
        # (at most 16,446 bits), so its cost is too.
        exact = _float_range_fraction(*value.as_integer_ratio(), value=value, name=name,
                                      bounded=False)
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
        exact = _decimal_fraction(value, name, bounded=bounded)
    elif isinstance(value, numbers.Rational):
        exact = _float_range_fraction(value.numerator, value.denominator, value=value,
                                      name=name, bounded=bounded)
    else:
        raise _type_error(value, name)
    if abs(exact) > _FLOAT_MAX:
        raise _range_error(value, name)
    nearest = float(exact)
    return nearest if Fraction(nearest) == exact else exact


def _range_error(value: Any, name: str) -> ValueError:
    return ValueError(f"{name} must be a finite number within the float64 range "
                      f"(magnitude <= {sys.float_info.max!r}), got {describe(value)}")


def _float_range_fraction(numerator: Any, denominator: Any, *, value: Any, name: str,
                          bounded: bool) -> Fraction:
    """:func:`_bounded_fraction`, refusing first, from the bit lengths alone, a ratio of
    magnitude at least ``2**1024`` (beyond the float range, whatever its length)."""
    numerator, denominator = int(numerator), int(denominator)
    if numerator.bit_length() - denominator.bit_length() > 1024:
        raise _range_error(value, name)
    return _bounded_fraction(numerator, denominator, value=value, name=name, bounded=bounded)


def _bounded_fraction(numerator: Any, denominator: Any, *, value: Any, name: str,
                      bounded: bool = True) -> Fraction:
    """``Fraction(numerator, denominator)``, refusing first (if ``bounded``), from the bit
    lengths alone (no arithmetic, no gcd), a numerator or denominator of more than
    :data:`MAX_EXACT_BITS` bits."""
    numerator, denominator = int(numerator), int(denominator)
    if bounded and max(numerator.bit_length(), denominator.bit_length()) > MAX_EXACT_BITS:
        raise ValueError(
            f"{name} must be an exact number whose numerator and denominator have at most "
            f"{MAX_EXACT_BITS} bits (exact arithmetic on longer numbers would take longer "
            f"than a release's deadline covers: see dpkit.timing), got {describe(value)} "
            f"(numerator of {numerator.bit_length()} bits, denominator of "
            f"{denominator.bit_length()} bits)")
    return Fraction(numerator, denominator)


def _decimal_fraction(value: Decimal, name: str, *, bounded: bool = True) -> Fraction:
    """A finite Decimal's exact value, refusing first, from its exponent alone (no big
    numbers built), a magnitude far outside the float64 range.

    ``Fraction(Decimal("1e-99999999"))`` builds ``10**99999999`` (seconds, and the grid
    arithmetic on it much longer): the cost of an exact conversion grows with the size of
    the exponent, not with the length of what the caller wrote. A non-zero magnitude below
    ``2**-1100`` or above the largest float is refused; within that range the conversion
    costs at most ``10**332`` times the coefficient's own digits.
    """
    if value.is_zero():
        return Fraction(0)
    adjusted = value.adjusted()  # 10**adjusted <= |value| < 10**(adjusted + 1)
    # 10**-332 < 2**-1100 and 10**309 > largest float: outside for sure, without converting
    inside = -332 <= adjusted <= 308
    if inside and bounded:
        _refuse_long_decimal(value, name)
    exact = Fraction(value) if inside else None
    if exact is None or not Fraction(1, 2**-_DECIMAL_MIN_EXPONENT) <= abs(exact) <= _FLOAT_MAX:
        raise ValueError(
            f"{name} must be 0 or a number of magnitude between 2**{_DECIMAL_MIN_EXPONENT} "
            f"and the largest float {sys.float_info.max!r} (a Decimal is converted to an "
            f"exact fraction, whose size grows with 10**|exponent|, so one this far outside "
            f"the float64 range is refused before any conversion), got {describe(value)}")
    return exact


def _refuse_long_decimal(value: Decimal, name: str) -> None:
    """Refuse a Decimal of more than :data:`MAX_DECIMAL_DIGITS` significant digits, or
    whose last digit is worth less than ``10**-MAX_DECIMAL_DIGITS``.

    Its size in memory, read in constant time, bounds its digits: one too large to hold
    608 digits or fewer is refused unread; otherwise its digits are read (at most 608: a
    bounded cost)."""
    if value.__sizeof__() - _DECIMAL_BASE_BYTES <= _DECIMAL_MAX_EXTRA_BYTES:
        _, digits, exponent = value.as_tuple()
        if len(digits) <= MAX_DECIMAL_DIGITS and exponent >= -MAX_DECIMAL_DIGITS:
            return
    raise ValueError(
        f"{name} must be a Decimal of at most {MAX_DECIMAL_DIGITS} significant digits, "
        f"the last worth at least 1e-{MAX_DECIMAL_DIGITS} (exact arithmetic on longer "
        f"numbers would take longer than a release's deadline covers: see dpkit.timing), "
        f"got {describe(value)}")


def _inexact_error(value: Any, name: str, exact: Fraction) -> ValueError:
    return ValueError(
        f"{name}={describe(value)} is not exactly representable as a float64 (the nearest "
        f"float is {float(exact)!r}); dpkit does not round it silently, because rounding can "
        f"move neighbouring inputs further apart than the sensitivity allows. Round it "
        f"yourself (for example pass float({name})) only if your sensitivity accounts for "
        f"that rounding.")


def round_fraction(exact: Fraction, rounding: Literal["down", "up"]) -> float:
    """The float next to a rational in the float range, rounded ``"down"`` or ``"up"``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> third = Fraction(1, 3)
    >>> round_fraction(third, "down") < third < round_fraction(third, "up")
    True
    """
    nearest = float(exact)
    if rounding == "down" and Fraction(nearest) > exact:
        return math.nextafter(nearest, -math.inf)
    if rounding == "up" and Fraction(nearest) < exact:
        return math.nextafter(nearest, math.inf)
    return nearest


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
    result = _exact_number(value, name)
    if isinstance(result, Fraction) and not exact:
        raise _inexact_error(value, name, result)
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
    exact = _exact_number(value, name, wanted, bounded=False)  # a public parameter
    if isinstance(exact, Fraction):
        if rounding is None:
            raise _inexact_error(value, name, exact)
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
    return _exact_number(value, _element_name(name, flat_index, shape))


def _check_element_is_real(value: Any, name: str, flat_index: int,
                           shape: tuple[int, ...]) -> None:
    """Refuse an element that is not a finite real number (any magnitude is accepted)."""
    if isinstance(value, np.ma.MaskedArray):  # np.ma.masked in a list: a hidden entry
        raise _masked_error(name, f"a masked entry at index {_position(flat_index, shape)}")
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
                raise _inexact_error(array.flat[i], _element_name(name, i, array.shape), item)
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


def _masked_error(name: str, found: str = "a numpy.ma.MaskedArray") -> TypeError:
    return TypeError(f"{name} must not be a numpy.ma.MaskedArray or hold masked entries, got "
                     f"{found}: dpkit does not read masks, so the raw values under the mask "
                     f"would be released; fill or compress it first (e.g. "
                     f"{name}.filled(fill_value) or {name}.compressed()) and pass a plain array")


def _holds_masked(values: Any) -> bool:
    """Whether ``values`` is, or holds at any depth of lists, tuples and object arrays, a
    masked array or entry (one pass over the nesting, no recursion)."""
    pending = [values]
    while pending:
        item = pending.pop()
        if isinstance(item, np.ma.MaskedArray):
            return True
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, np.ndarray) and item.dtype == object:
            pending.extend(item.flat)
    return False


def refuse_masked(values: Any, name: str) -> None:
    """Refuse a :class:`numpy.ma.MaskedArray`, or a nesting of lists, tuples or object
    arrays holding one (masked rows, ``[[np.ma.masked]]``) at any depth, with a
    :class:`TypeError` that says to fill or compress it first.

    ``np.asarray`` drops a mask silently and returns the raw data, masked entries
    included, so a mechanism fed a masked array would release the values the caller
    meant to hide. :func:`as_array` calls this, so every array a mechanism validates goes
    through it.

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
        raise _masked_error(name)
    if _holds_masked(values):
        raise _masked_error(name, "a sequence holding a masked array or entry")


def as_array(values: Any, name: str, dtype: Any = None) -> np.ndarray:
    """``np.asarray(values, dtype)``, with a clear error for a ragged nesting or a mask.

    NumPy refuses nested sequences of unequal lengths (``[[1.0], 2.0]``) with a message
    that names no parameter; this one names ``name``, the value and what is expected. A
    masked array (whose mask ``np.asarray`` would drop) is refused (:func:`refuse_masked`).

    Raises
    ------
    TypeError
        If ``values`` is a :class:`numpy.ma.MaskedArray` or a list or tuple of them.
    ValueError
        If ``values`` is not a rectangular nesting of sequences.

    Examples
    --------
    >>> as_array([[1.0], 2.0], "values")
    Traceback (most recent call last):
    ...
    ValueError: values must be a rectangular array (nested sequences of equal lengths), ...
    """
    refuse_masked(values, name)
    try:
        return np.asarray(values, dtype=dtype)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array (nested sequences of equal "
                         f"lengths), got {describe(values)}") from None


def _numbers_array(values: Any, name: str, ndim: int | None) -> np.ndarray:
    """``values`` as an array, unconverted, for :func:`check_finite_array` and
    :func:`check_rows_to_clip`: a typed container keeps its dtype (it says what it holds);
    a list becomes an object array, because it may mix types that NumPy would coerce
    silently (bools, big ints), so its elements are looked at as given. Refuses strings and
    a wrong number of dimensions."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {describe(values)}")
    dtype = getattr(values, "dtype", None)
    typed = isinstance(values, np.ndarray) or (dtype is not None and dtype.kind != "O")
    array = as_array(values, name, dtype=None if typed else object)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    return array


def check_shape(values: Any, name: str, *, ndim: int | None = None) -> np.ndarray:
    """``values`` as an array whose elements are not looked at yet: its shape is public.

    The first, structural step of :func:`check_finite_array`, for a release that must
    declare its public size (:meth:`dpkit.timing.Deadline.size`) before it looks at any
    value: it refuses a string, a mask, a ragged nesting, a wrong number of dimensions and
    an empty input; a typed container keeps its dtype, a list becomes an object array.
    Pass the result to :func:`check_finite_array`, which then validates the elements.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_finite_array`, for the structure only.

    Examples
    --------
    >>> check_shape([[0.5], [2]], "values").shape
    (2, 1)
    """
    array = _numbers_array(values, name, ndim)
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


def _nearest_float(value: Any) -> float:
    """A real number rounded to the nearest float64; beyond the float range, ±inf."""
    try:
        return float(value)
    except OverflowError:  # an int or Fraction beyond the float range
        return math.inf if value > 0 else -math.inf


def _check_kinds(flat: np.ndarray, name: str, shape: tuple[int, ...], *,
                 bounded: bool = False, rows: bool = False) -> None:
    """Refuse a non-number, checking each *type* present once (not each element); with
    ``bounded``, also refuse an element too long for exact arithmetic (:func:`_too_long`),
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
            if (_row_too_long if rows else _too_long)(value):
                _element(value, name, index, shape)  # raises, from the sizes alone


def _row_too_long(value: Any) -> bool:
    """Whether a row is too long to round to the nearest float at a cost that does not
    depend on its length, from sizes read in constant time. An int, or a Fraction whose
    parts' bit lengths put it beyond the float range (or below its smallest subnormal),
    rounds at once to ``±inf`` (or ``±0``) whatever its length; any other value is as
    :func:`_too_long`."""
    if isinstance(value, numbers.Integral):
        return False
    if isinstance(value, numbers.Rational) and not isinstance(value, np.generic):
        gap = int(value.numerator).bit_length() - int(value.denominator).bit_length()
        if not -1080 <= gap <= 1026:
            return False
    return _too_long(value)


def _too_long(value: Any) -> bool:
    """Whether an element is beyond what :func:`_exact_number` accepts, or may be (a Decimal
    too large to count its digits), from sizes read in constant time: such an element is
    refused before the conversion to float that every element goes through."""
    if isinstance(value, Decimal):
        return value.is_finite() and \
            value.__sizeof__() - _DECIMAL_BASE_BYTES > _DECIMAL_MAX_EXTRA_BYTES
    if isinstance(value, numbers.Integral):
        return not isinstance(value, np.generic) and int(value).bit_length() > 1024
    if isinstance(value, numbers.Rational):
        return max(int(value.numerator).bit_length(),
                   int(value.denominator).bit_length()) > MAX_EXACT_BITS
    return False


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
    Fraction or Decimal longer than exact arithmetic accepts (:func:`_too_long`) is
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
    the length exact arithmetic accepts (within the float range, a Fraction whose numerator
    and denominator have at most :data:`MAX_EXACT_BITS` bits, a Decimal of at most
    :data:`MAX_DECIMAL_DIGITS` digits; ints of any size): each row is rounded to its
    nearest float64 (``±inf`` beyond the float range), then clipped. Rounding to nearest
    is monotone and the bounds are floats, so a row outside the range is clipped *exactly*
    (``2**53 + 1`` or ``10**400`` above ``high`` becomes ``high``), and a row inside it
    moves by at most half an ulp, a function of that row alone: each row's contribution
    stays in ``[low, high]``, so a caller's sensitivity (computed for rows in that range)
    is unchanged. Unlike :func:`check_finite_array`, no finite row of bounded length is
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


def as_fraction(value: Any, name: str) -> Fraction:
    """Return a finite real number exactly as a :class:`fractions.Fraction`.

    Floats convert exactly (a float is a dyadic rational), and so do ints, Fractions,
    Decimals and long doubles: no rounding happens. Ints and Fractions are accepted beyond
    the float range (an exact computation needs none), up to :data:`MAX_EXACT_BITS` bits
    (an int, a numerator, a denominator); the other types must be finite and within the
    float64 range, and a Decimal 0 or of magnitude at least ``2**-1100`` (see
    :func:`check_real`).

    Raises
    ------
    TypeError, ValueError
        As :func:`check_real` (but a value float64 cannot hold is accepted), and for an int,
        numerator or denominator of more than :data:`MAX_EXACT_BITS` bits.
    """
    if isinstance(value, Fraction):
        return _bounded_fraction(value.numerator, value.denominator, value=value, name=name)
    if isinstance(value, numbers.Integral) and \
            not isinstance(value, (bool, np.bool_, np.timedelta64)):
        return _bounded_fraction(value, 1, value=value, name=name)
    result = check_real(value, name, exact=True)
    return result if isinstance(result, Fraction) else Fraction(result)
