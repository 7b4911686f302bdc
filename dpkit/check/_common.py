"""Helpers shared by the exercise checkers: calling student code safely, reading numbers.

Every checker calls the student's function on a few inputs. :func:`call_number` does the
whole routine for the usual case, a function that returns one number: call, catch what it
raises, read the result as a finite float, check a range, and say what is wrong in a
failing :class:`~dpkit.check.Verdict` otherwise. :func:`call_checked` does the first step
only, for answers that are not one number (a pair, an array, an index or None). :func:`call`
is the building block for a checker that needs to look at a raised exception itself (an
exercise that asks for a ``ValueError``, say). :func:`compare_at` is the loop of the
checkers whose answer is one number with a known value at each test point: call, compare,
and say what is wrong at the first point that fails.

:func:`coerce` is the one place where an answer is read as numbers, whatever Python type
holds them: one number (a Python or NumPy scalar, a ``Fraction``, a ``Decimal``, an
``mpmath.mpf`` or any other :class:`numbers.Real`, a 0-d array or an array of size 1), a
whole number (a count, a dimension, a number of bits: any real equal to an integer, so that
a right count computed with floats passes), or a fixed number of them (a pair as a tuple, a
list or an array). It never rounds, and a ``bool`` is no number. :func:`number` is its
yes-or-no form.

The helpers never time the student's function: a function that loops forever is stopped by
whoever runs the checker (the notebook's interrupt, or the grading's cell time limit).

Every text a checker shows is a template with named fields passed through
:func:`dpkit.i18n.tr` (``tr("{where}, your function raised {error}").format(...)``), so
that a verdict reads in the student's language (:mod:`dpkit.i18n_check` holds the
translations); the values filled in are the same in every language.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import os
import traceback
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

from dpkit.check._verdict import Verdict
from dpkit.i18n import tr
from dpkit.rng import SecureRandom, replayable_secure_source

__all__ = ["call", "call_checked", "call_number", "coerce", "compare_at", "lent_generator",
           "lent_source", "number", "raised_in_dpkit", "shown"]

_SHOWN_LENGTH = 60   # longest repr of a student's result quoted in a verdict


def _derived(seed: int, purpose: bytes, size: int) -> bytes:
    """``size`` bytes derived from ``seed`` by BLAKE2b (keyed by ``purpose``): one way, so
    the seed of a lent randomness cannot be read back from its state."""
    if type(seed) is not int and not isinstance(seed, np.integer):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    return hashlib.blake2b(str(int(seed)).encode(), digest_size=size,
                           person=b"dpkit lent " + purpose).digest()


def lent_generator(seed: int) -> np.random.Generator:
    """The NumPy generator a check or a judge lends a student's function, seeded from
    ``seed`` but made like ``numpy.random.default_rng()`` in real use: a PCG64 whose seed
    sequence has 128 bits of entropy (derived from ``seed`` one way), so that an answer
    cannot tell a graded call from a real one by its seed (adversarial round 6, finding 4).

    Parameters
    ----------
    seed : int
        The seed the check or judge chose; the same seed gives the same generator.

    Returns
    -------
    numpy.random.Generator
        A fresh generator.

    Raises
    ------
    TypeError
        If ``seed`` is not an integer.

    >>> a, b = lent_generator(3), lent_generator(3)
    >>> a.random() == b.random(), a.bit_generator.seed_seq.entropy.bit_length() > 100
    (True, True)
    """
    entropy = int.from_bytes(_derived(seed, b"np", 16), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def lent_source(seed: int) -> SecureRandom:
    """The dpkit random source a check or a judge lends a student's function, seeded from
    ``seed`` but of the default secure source's class (a :class:`dpkit.rng.SecureRandom`,
    keyed with a key and nonce derived from ``seed`` one way), so that an answer cannot
    tell a graded call from real use by its source (adversarial round 6, finding 4). The
    course's sandbox sends it by value: the student's code gets a ``SecureRandom`` with the
    same key.

    Parameters
    ----------
    seed : int
        The seed the check or judge chose; the same seed gives the same stream.

    Returns
    -------
    SecureRandom
        A fresh source, for grading only (its stream is known to the grader).

    Raises
    ------
    TypeError
        If ``seed`` is not an integer.

    >>> lent_source(5).bits(32) == lent_source(5).bits(32), type(lent_source(5)).__name__
    (True, 'SecureRandom')
    """
    material = _derived(seed, b"dpkit", 44)
    return replayable_secure_source(material[:32], material[32:], lendable=True)


def call(fn: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call a student's function; return ``(result, None)`` or ``(None, error text)``.

    >>> call(lambda x: 1 / x, 0)
    (None, 'ZeroDivisionError: division by zero')
    """
    try:
        return fn(*args), None
    except Exception as error:  # any failure of student code becomes a readable verdict
        return None, _raised(error)   # a message the grader withholds is said so (N11)


#: Said of an error whose message the grading sandbox withheld (hidden tests have run in
#: the notebook, and the message could carry their inputs).
WITHHELD = ("its message is not shown once hidden tests have run, since it could carry "
            "their inputs: run that cell in your notebook to read it")


def _place(error: Exception) -> str:
    """Where the student's code raised ``error``, when the grading sandbox says so (" (in
    your answer to Exercise 3.2, line 4)"); "" in a notebook, where the traceback shows it."""
    place = getattr(error, "where", None)
    return tr(" (in {place})").format(place=place) if isinstance(place, str) and place else ""


def _raised(error: Exception) -> str:
    """"ZeroDivisionError: division by zero (in …)", or, for an error whose message the
    grading sandbox withheld, its type, where, and why the message is missing. A message
    that dpkit's own lent objects raise in the student's code (a bits-only source's refusal,
    fixed English texts that a grader matches) is shown in the current language; the
    student's own messages are quoted as they are."""
    if getattr(error, "withheld", False):
        return tr("{error}{place} ({why})").format(error=type(error).__name__,
                                                   place=_place(error), why=tr(WITHHELD))
    message = tr(str(error)) if raised_in_dpkit(error) else str(error)

    return f"{type(error).__name__}{': ' + message if message else ''}{_place(error)}"


def _stand_in(value: Any) -> bool:
    """Whether ``value`` is the grading sandbox's stand-in for a returned value that cannot
    cross to the grader (:class:`dpkit.course.wire.Unreadable`), whose repr says so."""
    return getattr(type(value), "unreadable", False) is True


def _kind(value: Any) -> str:
    """What ``value`` is, when its repr does not say it: " (an array of shape (2,))"."""
    if isinstance(value, np.ndarray):
        return tr(" (an array of shape {shape})").format(shape=value.shape)
    if value is None or isinstance(value, float) or _stand_in(value):
        return ""
    return tr(" (of type {type})").format(type=type(value).__name__)


def _one(value: Any, *, whole: bool, finite: bool) -> tuple[Any, str | None]:
    """One number, as :func:`coerce` reads it with ``length=None``."""
    noun = tr("a whole number") if whole else tr("a finite number")
    given = value
    refused = tr("{value}{kind}, not {noun}")
    if isinstance(value, np.ndarray):
        if value.size != 1:
            return None, tr("{value}{kind}, not {noun}: one number is expected (a scalar, "
                            "or an array of size 1)").format(value=shown(value),
                                                             kind=_kind(value), noun=noun)
        value = value.item()      # a Python scalar (or the object an object array holds)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, Decimal)):
        return None, refused.format(value=shown(given), kind=_kind(given), noun=noun)
    if whole:
        if isinstance(value, numbers.Integral):
            return int(value), None
        try:
            integer = int(value)      # truncates; exact for any finite float
        except (OverflowError, TypeError, ValueError):  # inf, nan, exotic Real types
            return None, refused.format(value=shown(given), kind=_kind(given), noun=noun)
        if integer != value:
            return None, refused.format(value=shown(given), kind=_kind(given), noun=noun)
        return integer, None
    try:
        real = float(value)
    except (OverflowError, TypeError, ValueError):  # 10**400, exotic Real types
        return None, tr("{value}{kind}, not {noun} (beyond the float range)").format(
            value=shown(given), kind=_kind(given), noun=noun)
    if math.isnan(real) or (finite and math.isinf(real)):
        return None, refused.format(value=shown(given), kind=_kind(given), noun=noun)
    return real, None


def coerce(value: Any, *, length: int | None = None, whole: bool = False,
           finite: bool = True) -> tuple[Any, str | None]:
    """Read an answer as one number, or as ``length`` numbers, whatever type holds them.

    Every checker reads a numeric answer with this helper, so that a right answer is never
    refused for its Python type, and a wrong one is never let through by a conversion.

    Parameters
    ----------
    value : object
        The answer (or what the student's function returned).
    length : int, optional
        None (the default): one number is expected, given as a Python or NumPy scalar, a
        ``Fraction``, a ``Decimal``, an ``mpmath.mpf`` (any :class:`numbers.Real`), a
        0-d array or an array of size 1 (of any shape). Otherwise exactly ``length``
        numbers, as a tuple, a list or an array of shape ``(length,)``, each item read as
        one number.
    whole : bool
        If true, each number must be a real equal to an integer (``124``, ``124.0``,
        ``np.float64(124.0)``, ``np.array([124])``) and is returned as an ``int``; nothing
        is rounded, so ``124.5`` is refused.
    finite : bool
        If false, ±inf is accepted (as a float; never as a whole number). NaN is always
        refused.

    Returns
    -------
    tuple
        ``(answer, None)``: a ``float`` (an ``int`` if ``whole``), or a tuple of
        ``length`` of them; or ``(None, why)`` where ``why`` quotes ``value`` (cut to 60
        characters, see :func:`shown`), says what it is when its repr does not (its type,
        an array's shape) and what was expected: a sentence's end, after "your function
        returned" or "got". A ``bool``, a string, None, a complex number, NaN, ±inf (unless
        ``finite`` is false), an integer beyond the float range (unless ``whole``), an
        array of the wrong size and, where one number is expected, a list or a tuple (even
        of one number) are refused.

    Examples
    --------
    >>> coerce(3), coerce(np.float32(0.5)), coerce(np.array(3.0)), coerce(np.array([[3.0]]))
    ((3.0, None), (0.5, None), (3.0, None), (3.0, None))
    >>> coerce([1, np.float64(2.5)], length=2), coerce(np.array([2.0, 4.0]), length=2)
    (((1.0, 2.5), None), ((2.0, 4.0), None))
    >>> coerce(124.0, whole=True), coerce(np.array([124]), whole=True)
    ((124, None), (124, None))
    >>> for answer in (float("nan"), True, "0.5"):
    ...     print(coerce(answer)[1])
    nan, not a finite number
    True (of type bool), not a finite number
    '0.5' (of type str), not a finite number
    >>> print(coerce(np.array([0.5, 0.5]))[1])  # doctest: +NORMALIZE_WHITESPACE
    array([0.5, 0.5]) (an array of shape (2,)), not a finite number: one number is
    expected (a scalar, or an array of size 1)
    >>> print(coerce(np.array([2.5]), whole=True)[1])
    array([2.5]) (an array of shape (1,)), not a whole number
    >>> print(coerce((1.0, 2.0, 3.0), length=2)[1])
    (1.0, 2.0, 3.0) (a tuple of 3 items), not 2 finite numbers
    >>> print(coerce(np.array([[1.0, 2.0]]), length=2)[1])
    array([[1., 2.]]) (an array of shape (1, 2)), not 2 finite numbers: the shape must be (2,)
    >>> print(coerce((1.0, math.inf), length=2)[1])
    (1.0, inf): its item 1 is inf, not a finite number
    >>> coerce(-math.inf, finite=False)
    (-inf, None)
    >>> from decimal import Decimal
    >>> coerce(Decimal("2.5")), coerce(Decimal("124"), whole=True), coerce(Decimal("NaN"))[1]
    ((2.5, None), (124, None), "Decimal('NaN') (of type Decimal), not a finite number")
    """
    if length is None:
        return _one(value, whole=whole, finite=finite)
    noun = (tr("{length} whole numbers") if whole
            else tr("{length} finite numbers")).format(length=length)
    if isinstance(value, np.ndarray):
        if value.shape != (length,):
            return None, tr("{value}{kind}, not {noun}: the shape must be ({length},)").format(
                value=shown(value), kind=_kind(value), noun=noun, length=length)
    elif isinstance(value, (tuple, list)):
        if len(value) != length:
            items = (tr("{value} (a {container} of {count} item), not {noun}")
                     if len(value) == 1 else
                     tr("{value} (a {container} of {count} items), not {noun}"))
            return None, items.format(value=shown(value), container=type(value).__name__,
                                      count=len(value), noun=noun)
    else:
        return None, tr("{value}{kind}, not {noun} (a tuple, a list or an array of shape "
                        "({length},))").format(value=shown(value), kind=_kind(value),
                                               noun=noun, length=length)
    read = []
    for i, item in enumerate(value):
        one, why = _one(item, whole=whole, finite=finite)
        if why is not None:
            return None, tr("{value}: its item {index} is {why}").format(
                value=shown(value), index=i, why=why)
        read.append(one)
    return tuple(read), None


def number(value: Any) -> float | None:
    """``value`` as a finite float, read as :func:`coerce` reads one number, or None.

    >>> number(2), number(np.array([2.5])), number(float("nan")), number(True), number(1j)
    (2.0, 2.5, None, None, None)
    """
    return coerce(value)[0]


def shown(value: Any) -> str:
    """``repr(value)``, cut to 60 characters, for quoting a student's result in a verdict.

    >>> shown(0.5), shown(10**100)
    ('0.5', '10000000000000000000000000000000000000000000000000000000000… (101 characters)')
    """
    text = repr(value)
    if len(text) <= _SHOWN_LENGTH or _stand_in(value):
        return text
    return tr("{start}… ({length} characters)").format(start=text[:_SHOWN_LENGTH - 1],
                                                       length=len(text))


_PACKAGE = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir))


def raised_in_dpkit(error: BaseException) -> bool:
    """Whether dpkit's own code raised ``error`` (a random source lent to the student's
    code, which refuses a draw or fails to serve it, or a dpkit function it called), not
    the student's code: then a hint about the student's arithmetic does not apply.

    An error rebuilt from the grading sandbox, whose traceback stays there, says which in its
    ``raised_in_dpkit`` attribute (set by the grader from the worker's report); otherwise
    dpkit raised it if the innermost frame of its traceback is in dpkit's package.

    Parameters
    ----------
    error : BaseException
        An error the student's function raised.

    Returns
    -------
    bool

    >>> def refused(rng):
    ...     return rng.bits(-1)
    >>> try:
    ...     refused(lent_source(1))
    ... except ValueError as error:
    ...     raised_in_dpkit(error)
    True
    >>> raised_in_dpkit(ZeroDivisionError("division by zero"))
    False
    """
    said = getattr(error, "raised_in_dpkit", None)
    if isinstance(said, bool):
        return said
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and os.path.realpath(frames[-1].filename).startswith(
        _PACKAGE + os.sep)


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
        "on five queries far below the threshold"), in the current language (the caller
        passes it through :func:`dpkit.i18n.tr`): the verdict starts with it.
    details : sequence of str
        What the checker has established so far; the failing verdict carries it.
    explain : callable, optional
        Maps the raised exception to a hint appended to the message ("" for none), for an
        exercise where one kind of exception has a known cause (in the current language).

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
        said = (tr("{where}, your function raised {error}; {hint}") if hint
                else tr("{where}, your function raised {error}"))
        return Verdict(False, said.format(where=where, error=_raised(error), hint=hint),
                       tuple(details))
    if isinstance(result, Verdict):
        return Verdict(False, tr("{where}, your function returned a Verdict, not an "
                                 "answer").format(where=where), tuple(details))
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
    (:func:`call_checked`); read the result as one finite number (:func:`coerce`: a NumPy
    scalar, a 0-d array or an array of size 1 is read as the float it holds; a ``bool``, a
    string, None, another container, NaN, ±inf or an integer beyond the float range is
    refused); check that it lies between ``low`` and ``high``. The verdict never contains
    an expected value, only the interval the caller asks for.

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
        lies between 0 and 1", in the current language); by default "the answer must lie
        in [low, high]".


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
    >>> call_number(lambda p: np.array([p / 2]), 0.5, where="at p=0.5")
    0.25
    """
    result = call_checked(fn, *args, where=where, details=details)
    if isinstance(result, Verdict):
        return result
    value, why = coerce(result)
    if why is not None:
        return Verdict(False, tr("{where}, your function returned {why}").format(
            where=where, why=why), tuple(details))
    too_low = low is not None and (value <= low if strict else value < low)
    too_high = high is not None and (value >= high if strict else value > high)
    if too_low or too_high:
        why = need or tr("the answer must lie in {interval}").format(
            interval=_interval(low, high, strict))
        return Verdict(False, tr("{where}, your function returned {value!r}: {why}").format(
            where=where, value=value, why=why), tuple(details))
    return value



def compare_at(fn: Callable[..., Any], points: Iterable[tuple[Any, ...]],
               reference: Callable[..., float], *, label: Callable[..., str],
               wrong: Callable[..., str], rel_tol: float, at: str | None = None,
               tally: bool = False) -> tuple[str, ...] | Verdict:
    """Call a student's function at fixed test points and compare each result with the right
    value; return what was established, or the failing Verdict of the first wrong point.

    At each point ``args``, :func:`call_number` calls ``fn(*args)`` (a failing verdict opens
    with ``at.format(point=label(*args))``), and the result is right when it lies within a
    relative ``rel_tol`` of ``reference(*args)``.

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
        verdict's sentence after the test point; it must not state ``want``.
    rel_tol : float
        The relative tolerance of :func:`math.isclose`.
    at : str, optional
        The test point as the opening phrase of a failing verdict, a template with the field
        ``{point}`` already in the current language (``tr("at {point}")``); by default
        ``tr("for {point}")``.
    tally : bool
        If true, every point is recorded as ``"{label}: got {value!r}, right"`` (``wrong``
        for the failing one, which the failing verdict then lists too); otherwise a right
        point only, as ``"{label}: {value!r} is right"`` (both in the current language).

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
    opening = tr("for {point}") if at is None else at
    for args in points:
        point = label(*args)
        where = opening.format(point=point)
        value = call_number(fn, *args, where=where, details=details)
        if isinstance(value, Verdict):
            return value
        want = reference(*args)
        right = math.isclose(value, want, rel_tol=rel_tol)
        if tally:
            details.append((tr("{point}: got {value!r}, right") if right else
                            tr("{point}: got {value!r}, wrong")).format(point=point,
                                                                        value=value))
        if not right:
            return Verdict(False, tr("{where} {wrong}").format(
                where=where, wrong=wrong(value, want, *args)), tuple(details))
        if not tally:
            details.append(tr("{point}: {value!r} is right").format(point=point, value=value))
    return tuple(details)

