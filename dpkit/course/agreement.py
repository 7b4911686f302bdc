"""Grading a deterministic answer by agreement with the model solution, and the feedback
texts grading shares.

:func:`agrees_with` runs the public check once around the student's function to learn the
kind of arguments it takes, then compares the student's function with the model solution on
nearby inputs drawn at grading time (from the course's secret), so that a formula right only
on the public inputs fails. :func:`short`, :func:`described` and :func:`clean_text` keep
feedback readable: valid UTF-8, one line, at most :data:`FEEDBACK_LIMIT` characters.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from dpkit.course.judges._base import error_text, returned_text
from dpkit.rng import RandomSource

__all__ = ["FEEDBACK_LIMIT", "PUBLIC_WITHHELD", "agrees_with", "clean_text", "described",
           "noted", "public_feedback", "short"]

#: The most characters of one piece of feedback (a longer one is cut, with "…").
FEEDBACK_LIMIT = 400


def clean_text(text: str) -> str:
    """``text`` as valid UTF-8 (a lone surrogate would stop every later write)."""
    return str(text).encode("utf-8", "replace").decode("utf-8")


def short(text: str) -> str:
    text = " ".join(clean_text(text).split())
    return text if len(text) <= FEEDBACK_LIMIT else text[:FEEDBACK_LIMIT - 1] + "…"


def noted(feedback: str, notes: list[str]) -> str:
    """``feedback`` followed by each of ``notes`` (" | note: …"), on one line within
    :data:`FEEDBACK_LIMIT`: the parts are cut, not the whole, so every note survives
    (honest review 15, F5: the note naming the added cell that raised was cut to
    "note: a…"). A part shorter than its fair share is kept whole; the longer ones share
    the rest equally, each ending in "…" where cut.

    Parameters
    ----------
    feedback : str
        The exercise's feedback.
    notes : list of str
        What to add after it (an added cell's error, a changed set-up cell).

    Returns
    -------
    str
        At most :data:`FEEDBACK_LIMIT` characters.

    >>> noted("a" * 500, ["the cell you added above it raised SyntaxError"])[-59:]
    'aaa… | note: the cell you added above it raised SyntaxError'
    >>> len(noted("a" * 500, ["b" * 500, "c" * 500])) <= FEEDBACK_LIMIT
    True
    """
    parts = [" ".join(clean_text(part).split()) for part in (feedback, *notes)]
    room = FEEDBACK_LIMIT - len(" | note: ") * len(notes)
    if sum(map(len, parts)) <= room:
        return " | note: ".join(parts)
    sizes: dict[int, int] = {}
    for rank, index in enumerate(sorted(range(len(parts)), key=lambda i: len(parts[i]))):
        sizes[index] = min(len(parts[index]), room // (len(parts) - rank))
        room -= sizes[index]
    return " | note: ".join(part if len(part) <= sizes[i] else part[:sizes[i] - 1] + "…"
                            for i, part in enumerate(parts))


def described(error: BaseException) -> str:
    """``error`` for the feedback: its type, message and where it was raised. An
    ImportError's message names the module only, not the file it was looked for in (a path
    of the grader's machine; honest review 15), and a SyntaxError's says its place once.

    >>> error = SyntaxError("expected ':' (<your answer to Exercise 2.2>, line 1)")
    >>> error.where = "your answer to Exercise 2.2, line 1"
    >>> described(error)
    "SyntaxError: expected ':' (in your answer to Exercise 2.2, line 1)"
    >>> described(ImportError("cannot import name 'f' from 'dpkit.laplace' "
    ...                       "(/srv/grader/dpkit/laplace.py)"))
    "ImportError: cannot import name 'f' from 'dpkit.laplace'"
    """
    where = getattr(error, "where", None)
    message = str(error)
    if isinstance(error, ImportError):
        message = re.sub(r" \((?:unknown location|[^()]*[/\\][^()]*)\)$", "", message)
    if where:                       # a SyntaxError's "(<cell>, line 2)": said once, below
        message = re.sub(r" \(<[^<>]*>, line \d+\)$", "", message)
    name = type(error).__name__ + (f": {message}" if message else "")
    return short(name + (f" (in {where})" if where else ""))


def _perturb(value: Any, rng: np.random.Generator) -> Any:
    """An input near ``value`` drawn at grading time (None, bools and others unchanged)."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value) + int(rng.integers(1, 4)) if value > 0 else value
    if isinstance(value, (float, np.floating)):
        if 0 <= value <= 1:            # a probability, a share or a small ε: stays in [0, 1]
            return float(value * rng.uniform(0.55, 0.95))
        return float(value * rng.uniform(1.1, 1.9))
    return value


def _cases(calls: list[tuple[Any, ...]], rng: np.random.Generator, most: int = 40
           ) -> list[tuple[tuple[Any, ...], bool]]:
    """The public check's calls, then calls that mix their arguments: ``(args, mixed)``.

    A mixed call takes each argument from one of the public calls of the same arity (all
    such combinations, or ``most`` of them drawn at random). Moved copies of the public
    calls alone keep every sign and order relation among one call's arguments, so a
    formula right only on that pattern would pass; mixed calls stay within each argument's
    public range but break those relations. A student's function that raises on a mixed
    call is not failed for it (the exercise may not cover that combination); one that
    returns a different value from the model's is.
    """
    cases = [(args, False) for args in calls]
    arities = sorted({len(args) for args in calls})
    for arity in arities:
        same = [args for args in calls if len(args) == arity]
        if len(same) ** arity <= 20_000:
            combos = [c for c in itertools.product(range(len(same)), repeat=arity)
                      if len(set(c)) > 1]                        # not a public call itself
            combos = [combos[k] for k in rng.permutation(len(combos))[:most]]
        else:
            combos = [tuple(rng.integers(len(same), size=arity)) for _ in range(most)]
        cases += [(tuple(same[c][i] for i, c in enumerate(combo)), True) for combo in combos]
    return cases


def _same(a: Any, b: Any, rtol: float = 1e-6, atol: float = 0.0) -> bool:
    """Whether two answers agree to ``rtol`` (and ``atol``). One number held in a NumPy array
    of size 1 counts as that number, as the public checks read it
    (:func:`dpkit.check._common.coerce`)."""
    try:
        a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return bool(a == b)
    if a_arr.shape != b_arr.shape:
        if not (a_arr.size == b_arr.size == 1
                and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray))):
            return False
        a_arr, b_arr = a_arr.reshape(()), b_arr.reshape(())
    return bool(np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=True))


def agrees_with(student: Callable[..., Any], reference: Callable[..., Any],
                check: Callable[[Callable[..., Any]], Any], rng: np.random.Generator, *,
                max_cases: int = 40, atol: float = 0.0,
                rtol: float = 1e-6) -> tuple[bool, str]:
    """Compare a student's function with the model solution on inputs drawn now.

    The public ``check`` is run once with a recorder around ``student`` to learn what kind
    of arguments the function takes; each recorded call is then moved to nearby inputs
    drawn from ``rng`` (a generator seeded from the course's secret, so the inputs are
    known to nobody in advance) and the two functions are compared there. Calls whose
    reference output is random (two reference calls disagree) or raises are skipped.
    ``atol`` is an absolute tolerance for an exercise whose statement bounds the accuracy
    it asks for (:data:`ABSOLUTE_TOLERANCE`), ``rtol`` a relative one
    (:data:`RELATIVE_TOLERANCE`).

    Returns
    -------
    (bool, str)
        Whether every compared case agrees (relative tolerance ``rtol``, absolute ``atol``), and
        a message that names the failing input without giving the expected value away.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> agrees_with(lambda x: 2 * x, lambda x: x + x, lambda f: f(1.0) == 2.0, rng)
    (True, '1 hidden case agrees')
    >>> agrees_with(lambda x: 2 * x, lambda x: x * x, lambda f: f(2.0) == 4.0, rng)[0]
    False
    """
    calls: list[tuple[Any, ...]] = []

    def recorder(*args: Any) -> Any:
        calls.append(copy.deepcopy(args))
        return student(*args)

    try:
        passed = check(recorder)
    except Exception as error:
        return False, f"the public check could not run: {described(error)}"
    if not passed:
        return False, "the public check does not pass"
    compared = 0
    for args, mixed in _cases(calls[:max_cases], rng):
        if any(isinstance(a, (RandomSource, np.random.Generator)) for a in args):
            continue                # a randomized answer is judged by its distribution
        moved = tuple(_perturb(a, rng) for a in args)
        try:
            expected = reference(*copy.deepcopy(moved))
            again = reference(*copy.deepcopy(moved))
        except Exception:  # outside the reference's domain: nothing to compare
            continue
        if not _same(expected, again):
            continue
        shown = short(", ".join(repr(a) for a in moved))
        try:
            got = student(*copy.deepcopy(moved))
        except Exception as error:
            if mixed:           # a combination the exercise may not cover: not held against it
                continue
            return False, f"on a hidden input ({shown}) your function raised {error_text(error)}"
        compared += 1
        if not _same(got, expected, rtol=rtol, atol=atol):
            return False, f"on a hidden input ({shown}) your function returned " \
                          f"{returned_text(got)}, which is not right"
    return True, f"{compared} hidden case{'s agree' if compared != 1 else ' agrees'}"


#: A failed public test's feedback once hidden tests have run in the notebook.
PUBLIC_WITHHELD = ("not passed (its message is not shown once hidden tests have run in "
                   "this notebook, since it could quote what your code returned: run the "
                   "check in your notebook to read it)")


def public_feedback(message: str, passed: bool, *, withheld: bool,
                    error: BaseException | None = None) -> str:
    """The public test's part of the feedback. A failure's message quotes what the
    student's function returned (60 characters of a string, the digits of a number): once
    hidden tests have run in the notebook, that could carry their inputs into the grades
    (adversarial review round 8, X1), so it is replaced by :data:`PUBLIC_WITHHELD`; the
    student reads it by running the same check in the notebook.

    A failure because the function raised is kept: the check's own words come first
    (``"for x=1, your function raised ValueError (in …)"``) and the error's message is
    withheld already. So is the reason of a failure because the function raised
    ``error`` (the student's own error that the message names, honest review 15: an
    ``assert`` where ``ValueError`` is asked got "not passed" and nothing else): its type
    and line, never its message (:func:`~dpkit.course.judges._base.error_text`).

    >>> error = AssertionError("the hidden inputs")
    >>> error.where = "your answer to Exercise 3.3, line 2"
    >>> print(public_feedback("at ε=1 …: it raised AssertionError (…)", False,
    ...                       withheld=True, error=error))
    ... # doctest: +NORMALIZE_WHITESPACE
    public test: not passed: your function raised AssertionError (in your answer to
    Exercise 3.3, line 2) on one of the check's inputs (the check's message is not shown
    once hidden tests have run in this notebook: run the check in your notebook to read it)
    >>> public_feedback("your half-width 3.2 is too small", False, withheld=True)[:25]
    'public test: not passed ('
    >>> public_feedback("at x=1, your function raised NameError (in …)", False,
    ...                  withheld=True)
    'public test: at x=1, your function raised NameError (in …)'
    >>> public_feedback("right", True, withheld=True)
    'public test: right'
    """
    first = message.find(_RAISED)
    raised = first >= 0 and message.startswith("raised ", first + len(_RAISED))
    if not (passed or raised or not withheld) and error is not None:
        return short(f"public test: not passed: your function raised {error_text(error)} on "
                     "one of the check's inputs (the check's message is not shown once "
                     "hidden tests have run in this notebook: run the check in your notebook "
                     "to read it)")
    return f"public test: {short(message) if passed or raised or not withheld else PUBLIC_WITHHELD}"


_RAISED = ", your function "
