"""Helpers shared by the exercise checkers: calling student code safely, reading numbers.

Every checker calls the student's function on a few inputs. :func:`call_number` does the
whole routine for the usual case, a function that returns one number: call, catch what it
raises, read the result as a finite float, check a range, and say what is wrong in a
failing :class:`~dpkit.check.Verdict` otherwise. :func:`call_checked` does the first step
only, for answers that are not one number (a pair, an array, an index or None). :func:`call`
and :func:`number` are the two building blocks, for a checker that needs to look at a raised
exception itself (an exercise that asks for a ``ValueError``, say). :func:`whole_number`
reads an answer that is a count, a dimension or a number of bits: any real number equal to
an integer (``124``, ``np.int64(124)``, ``124.0``), so that a right count computed with
floats passes. :func:`compare_at` is the loop of the checkers whose answer is one number
with a known value at each test point: call, compare, and say what is wrong at the first
point that fails.

The helpers never time the student's function: a function that loops forever is stopped by
whoever runs the checker (the notebook's interrupt, or the grading's cell time limit).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from dpkit.check._verdict import Verdict

__all__ = ["call", "call_checked", "call_number", "compare_at", "number", "shown",
           "whole_number"]

_SHOWN_LENGTH = 60   # longest repr of a student's result quoted in a verdict


def call(fn: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call a student's function; return ``(result, None)`` or ``(None, error text)``.

    >>> call(lambda x: 1 / x, 0)
    (None, 'ZeroDivisionError: division by zero')
    """
    try:
        return fn(*args), None
    except Exception as error:  # any failure of student code becomes a readable verdict
        return None, f"{type(error).__name__}: {error}{_place(error)}"


def _place(error: Exception) -> str:
    """Where the student's code raised ``error``, when the grading sandbox says so (" (in
    your answer to Exercise 3.2, line 4)"); "" in a notebook, where the traceback shows it."""
    place = getattr(error, "where", None)
    return f" (in {place})" if isinstance(place, str) and place else ""


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None if it is not a finite real number.

    >>> number(2), number(float("nan")), number(True), number(10**400), number(1j)
    (2.0, None, None, None, None)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        value = float(value)
    except (OverflowError, TypeError, ValueError):  # 10**400, exotic Real types
        return None
    return value if math.isfinite(value) else None


def whole_number(value: Any) -> int | None:
    """``value`` as an ``int`` if it is a real number equal to an integer, else None.

    Every checker whose answer is an integer (a count, a dimension, a number of bits)
    reads it with this helper, so that a right answer computed with floats (``124.0``,
    ``math.ceil`` of a NumPy float, ``np.float64(124.0)``) passes as the integer it equals.
    A ``bool`` is not a number here (``True == 1``, but it answers no counting question);
    a string, NaN, ±inf or a non-integral real give None.

    >>> whole_number(124), whole_number(124.0), whole_number(np.float64(29.0))
    (124, 124, 29)
    >>> whole_number(124.5), whole_number(True), whole_number("124"), whole_number(math.inf)
    (None, None, None, None)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        whole = int(value)              # truncates; exact for any finite float
    except (OverflowError, TypeError, ValueError):  # inf, nan, exotic Real types
        return None
    return whole if whole == value else None


def shown(value: Any) -> str:
    """``repr(value)``, cut to 60 characters, for quoting a student's result in a verdict.

    >>> shown(0.5), shown(10**100)
    ('0.5', '10000000000000000000000000000000000000000000000000000000000… (101 characters)')
    """
    text = repr(value)
    if len(text) <= _SHOWN_LENGTH:
        return text
    return f"{text[:_SHOWN_LENGTH - 1]}… ({len(text)} characters)"


def call_checked(fn: Callable[..., Any], *args: Any, where: str, details: Sequence[str] = (),
                 explain: Callable[[Exception], str] | None = None) -> Any:
    """Call a student's function; return its result, or a failing Verdict if it raised.

    Parameters
    ----------
    fn : callable
        The student's function.
    *args
        The arguments of this call.
    where : str
        The test point, as the opening phrase of a sentence ("at epsilon=0.5",
        "on five queries far below the threshold"): the verdict starts with it.
    details : sequence of str
        What the checker has established so far; the failing verdict carries it.
    explain : callable, optional
        Maps the raised exception to a hint appended to the message ("" for none), for an
        exercise where one kind of exception has a known cause.

    Returns
    -------
    object or Verdict
        ``fn(*args)``; or a failing :class:`~dpkit.check.Verdict` naming the exception when
        ``fn`` raised one, or when ``fn`` returned a Verdict itself (a Verdict is never the
        answer to an exercise, and a passing one must not pass for the checker's own).
        The caller tells the two apart with ``isinstance(result, Verdict)``.

    Examples
    --------
    >>> print(call_checked(lambda x: 1 / x, 0, where="at x=0"))
    NOT YET: at x=0, your function raised ZeroDivisionError: division by zero
    >>> call_checked(lambda x: [x, x], 2, where="at x=2")
    [2, 2]
    """
    try:
        result = fn(*args)
    except Exception as error:  # any failure of student code becomes a readable verdict
        hint = explain(error) if explain is not None else ""
        return Verdict(False, f"{where}, your function raised {type(error).__name__}: "
                       f"{error}{_place(error)}{'; ' + hint if hint else ''}",
                       tuple(details))
    if isinstance(result, Verdict):
        return Verdict(False, f"{where}, your function returned a Verdict, not an answer",
                       tuple(details))
    return result


def _interval(low: float | None, high: float | None, strict: bool) -> str:
    left = "(−∞" if low is None else ("(" if strict else "[") + f"{low:g}"
    right = "∞)" if high is None else f"{high:g}" + (")" if strict else "]")
    return f"{left}, {right}"


def call_number(fn: Callable[..., Any], *args: Any, where: str, low: float | None = None,
                high: float | None = None, strict: bool = False, need: str | None = None,
                details: Sequence[str] = ()) -> float | Verdict:
    """Call a student's function that should return one number; return it as a float, or
    a failing Verdict that says what is wrong.

    The routine of every checker, in order: call ``fn(*args)`` and catch what it raises
    (:func:`call_checked`); read the result as a finite real number (:func:`number`: a
    ``bool``, a string, None, a container, NaN, ±inf or an integer beyond the float range is
    refused; a NumPy scalar is read as a float); check that it lies between ``low`` and
    ``high``. The verdict never contains an expected value, only the interval the caller
    asks for.

    Parameters
    ----------
    fn, *args, where, details
        As in :func:`call_checked`: the function, this call's arguments, the test point
        (the opening phrase of every failing verdict) and what was established so far.
    low, high : float, optional
        The range the answer must lie in (None: unbounded on that side).
    strict : bool
        If true, the ends themselves are out of range: ``low < value < high``; otherwise
        ``low <= value <= high``.
    need : str, optional
        The sentence a value out of range gets, saying what the range means ("a probability
        lies between 0 and 1"); by default "the answer must lie in [low, high]".

    Returns
    -------
    float or Verdict
        The result as a finite float, or a failing :class:`~dpkit.check.Verdict`; the
        caller tells them apart with ``isinstance(result, Verdict)`` and returns the
        Verdict.

    Examples
    --------
    >>> call_number(lambda p: p / 2, 0.5, where="at p=0.5", low=0.0, high=1.0)
    0.25
    >>> for answer in (lambda p: 1 / 0, lambda p: float("nan"), lambda p: 2 * p):
    ...     print(call_number(answer, 0.75, where="at p=0.75", low=0.0, high=1.0))
    NOT YET: at p=0.75, your function raised ZeroDivisionError: division by zero
    NOT YET: at p=0.75, your function returned nan, not a finite number
    NOT YET: at p=0.75, your function returned 1.5: the answer must lie in [0, 1]
    """
    result = call_checked(fn, *args, where=where, details=details)
    if isinstance(result, Verdict):
        return result
    value = number(result)
    if value is None:
        return Verdict(False, f"{where}, your function returned {shown(result)}, not a "
                       "finite number", tuple(details))
    too_low = low is not None and (value <= low if strict else value < low)
    too_high = high is not None and (value >= high if strict else value > high)
    if too_low or too_high:
        why = need or f"the answer must lie in {_interval(low, high, strict)}"
        return Verdict(False, f"{where}, your function returned {value!r}: {why}",
                       tuple(details))
    return value


def compare_at(fn: Callable[..., Any], points: Iterable[tuple[Any, ...]],
               reference: Callable[..., float], *, label: Callable[..., str],
               wrong: Callable[..., str], rel_tol: float, at: str = "for",
               tally: bool = False) -> tuple[str, ...] | Verdict:
    """Call a student's function at fixed test points and compare each result with the right
    value; return what was established, or the failing Verdict of the first wrong point.

    At each point ``args``, :func:`call_number` calls ``fn(*args)`` (a failing verdict opens
    with ``f"{at} {label(*args)}"``), and the result is right when it lies within a relative
    ``rel_tol`` of ``reference(*args)``.

    Parameters
    ----------
    fn : callable
        The student's function.
    points : iterable of tuple
        The arguments of each call, in order.
    reference : callable
        ``reference(*args)``: the right value at that point (never shown).
    label : callable
        ``label(*args)``: the point as text (``"k=4, c=1"``), in the details and the verdict.
    wrong : callable
        ``wrong(value, want, *args)``: what is wrong with ``value``, the end of the failing
        verdict's sentence after ``f"{at} {label(*args)}"``; it must not state ``want``.
    rel_tol : float
        The relative tolerance of :func:`math.isclose`.
    at : str
        The words before the label in a failing verdict (``"for"``, ``"at"``).
    tally : bool
        If true, every point is recorded as ``"{label}: got {value!r}, right"`` (``wrong``
        for the failing one, which the failing verdict then lists too); otherwise a right
        point only, as ``"{label}: {value!r} is right"``.

    Returns
    -------
    tuple of str or Verdict
        The details of every point when all are right (the caller writes the passing
        verdict), or a failing :class:`~dpkit.check.Verdict`; the caller tells them apart
        with ``isinstance(result, Verdict)``, as with :func:`call_number`.

    Examples
    --------
    >>> points, double = [(1.0,), (3.0,)], lambda x: 2 * x
    >>> options = dict(label=lambda x: f"x={x:g}", rel_tol=1e-9,
    ...                wrong=lambda value, want, x: f"your double {value!r} is wrong")
    >>> compare_at(lambda x: x + x, points, double, **options)
    ('x=1: 2.0 is right', 'x=3: 6.0 is right')
    >>> print(compare_at(lambda x: x + 1, points, double, **options))
    NOT YET: for x=3 your double 4.0 is wrong
      - x=1: 2.0 is right
    """
    details: list[str] = []
    for args in points:
        point = label(*args)
        value = call_number(fn, *args, where=f"{at} {point}", details=details)
        if isinstance(value, Verdict):
            return value
        want = reference(*args)
        right = math.isclose(value, want, rel_tol=rel_tol)
        if tally:
            details.append(f"{point}: got {value!r}, {'right' if right else 'wrong'}")
        if not right:
            return Verdict(False, f"{at} {point} {wrong(value, want, *args)}", tuple(details))
        if not tally:
            details.append(f"{point}: {value!r} is right")
    return tuple(details)
