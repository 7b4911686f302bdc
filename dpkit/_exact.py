"""Exact scalar conversion and size limits: what dpkit accepts as an exact number.

The foundation under :mod:`dpkit._checks`: a real number (an ``int``, ``float``,
:class:`fractions.Fraction`, :class:`decimal.Decimal` or NumPy real scalar) is converted here
to a float when float64 holds it exactly, else to its exact :class:`~fractions.Fraction`
(:func:`exact_number`, :func:`as_fraction`), or rounded in a direction the caller names
(:func:`round_fraction`); nothing is rounded to nearest silently. Every message of dpkit
shows the value it refuses through :func:`describe`.

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
that does not grow with the value's length, before any arithmetic on them
(:func:`too_long` tells it from those sizes alone). Error messages summarise what they
show (:func:`describe`), so that a 100,000-digit value neither floods a message nor
breaks it (Python refuses to print an int of more than 4,300 digits).

Examples
--------
>>> from fractions import Fraction
>>> exact_number(2**54 + 3, "value")
Fraction(18014398509481987, 1)
>>> as_fraction(0.1, "value") == Fraction(3602879701896397, 36028797018963968)
True
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
    "MAX_ROW_DECIMAL_DIGITS",
    "as_fraction",
    "describe",
    "exact_number",
    "inexact_error",
    "masked_error",
    "round_fraction",
    "too_long",
]

_FLOAT_MAX = Fraction(sys.float_info.max)
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
#: The most digits a Decimal *row* to clip may have (the clipping functions of
#: :mod:`dpkit.svt` round each row to a float and need no exact arithmetic on it): the
#: digits that fit in :data:`_DECIMAL_MAX_EXTRA_BYTES` bytes of coefficient, 19 per 8
#: bytes. A longer one is refused from its size in memory, before it is read (a Decimal
#: built by arithmetic may hold a larger buffer than its digits need: its size decides).
MAX_ROW_DECIMAL_DIGITS = 19 * _DECIMAL_MAX_EXTRA_BYTES // 8


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


def masked_error(name: str, found: str = "a numpy.ma.MaskedArray") -> TypeError:
    """The :class:`TypeError` for a masked array or entry (``found`` says which) passed as
    ``name``: dpkit reads no masks, so it says to fill or compress it first."""
    return TypeError(f"{name} must not be a numpy.ma.MaskedArray or hold masked entries, got "
                     f"{found}: dpkit does not read masks, so the raw values under the mask "
                     f"would be released; fill or compress it first (e.g. "
                     f"{name}.filled(fill_value) or {name}.compressed()) and pass a plain array")


def _type_error(value: Any, name: str) -> TypeError:
    if isinstance(value, np.ma.MaskedArray):  # np.ma.masked: a masked entry, not a number
        return masked_error(name, "a masked entry")
    return TypeError(f"{name} must be a real number (int, float, fractions.Fraction, "
                     f"decimal.Decimal or a NumPy real scalar), got {describe(value)} "
                     f"of type {type(value).__name__}")


def exact_number(value: Any, name: str, wanted: str = "a finite number", *,
                 bounded: bool = True) -> float | Fraction:
    """Validate a finite real number in the float range; return it exactly.

    Returns a ``float`` when float64 holds the value exactly, else its exact
    :class:`Fraction`. Bools, strings and other non-numbers raise :class:`TypeError`; NaN,
    infinity and magnitudes beyond the largest float raise :class:`ValueError`, and so
    (if ``bounded``: a value that may be data) does an exact value beyond
    :data:`MAX_EXACT_BITS` bits or :data:`MAX_DECIMAL_DIGITS` digits. A public parameter
    (``bounded=False``: epsilon, delta, a sensitivity) may be longer: its cost is public.
    ``wanted`` is what the message for NaN or infinity says the value must be.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a bool, a string, ``None``, a masked entry).
    ValueError
        If it is NaN, infinite, beyond the float64 range, a Decimal of non-zero magnitude
        below ``2**-1100``, or (if ``bounded``) longer than the limits above.
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


def inexact_error(value: Any, name: str, exact: Fraction) -> ValueError:
    """The :class:`ValueError` for ``value`` (exactly ``exact``), passed as ``name`` where
    only a float64 is accepted: it says why dpkit does not round it to the nearest float."""
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


def too_long(value: Any) -> bool:
    """Whether an element is beyond what :func:`exact_number` accepts, or may be (a Decimal
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


def as_fraction(value: Any, name: str) -> Fraction:
    """Return a finite real number exactly as a :class:`fractions.Fraction`.

    Floats convert exactly (a float is a dyadic rational), and so do ints, Fractions,
    Decimals and long doubles: no rounding happens. Ints and Fractions are accepted beyond
    the float range (an exact computation needs none), up to :data:`MAX_EXACT_BITS` bits
    (an int, a numerator, a denominator); the other types must be finite and within the
    float64 range, and a Decimal 0 or of magnitude at least ``2**-1100`` (see
    :func:`exact_number`).

    Raises
    ------
    TypeError, ValueError
        As :func:`exact_number`, and for an int, numerator or denominator of more than
        :data:`MAX_EXACT_BITS` bits.
    """
    if isinstance(value, Fraction):
        return _bounded_fraction(value.numerator, value.denominator, value=value, name=name)
    if isinstance(value, numbers.Integral) and \
            not isinstance(value, (bool, np.bool_, np.timedelta64)):
        return _bounded_fraction(value, 1, value=value, name=name)
    result = exact_number(value, name)
    return result if isinstance(result, Fraction) else Fraction(result)
