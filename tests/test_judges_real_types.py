"""Honest answers that return a real number of another type (``mpmath.mpf``, ``Decimal``,
a NumPy scalar) keep their points: the sandbox's wire carries them, and the checkers read
them (honest-student review 6, finding 1)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest

import dpkit.check as check
from dpkit.check._common import coerce
from dpkit.course.wire import WireError, decode, encode


def _across(value: Any) -> Any:
    """``value`` as the grader receives it from the sandbox."""
    return decode(encode(value))


def _my_delta(sigma: float, sensitivity: float, epsilon: float) -> mpmath.mpf:
    """The Gaussian privacy profile in 60-digit arithmetic (the honest answer to 4.1)."""
    with mpmath.workdps(60):
        s, e = mpmath.mpf(sigma) / sensitivity, mpmath.mpf(epsilon)
        phi = lambda t: mpmath.erfc(-t / mpmath.sqrt(2)) / 2  # noqa: E731
        return phi(1 / (2 * s) - e * s) - mpmath.exp(e) * phi(-1 / (2 * s) - e * s)


def test_an_mpf_answer_to_4_1_passes_across_the_wire() -> None:
    verdict = check.check_delta_for_sigma(lambda *a: _across(_my_delta(*a)))
    assert verdict.passed, verdict


@pytest.mark.parametrize("value", [
    mpmath.mpf(1) / 3, mpmath.mpf(3), mpmath.mpf("1e-400"), mpmath.mpf("-1e100000000"),
    Decimal("2.995"), Decimal("1e-999"), Decimal("-Infinity"), Fraction(1, 3),
    np.longdouble(1) / 3, np.float32(0.1), np.int64(-7), np.uint8(200)])
def test_a_real_number_crosses_as_the_value_the_checker_reads(value: Any) -> None:
    """Exactly (an mpf at 60 digits stays a 60-digit fraction), or as the float that
    :func:`coerce` reads when it rounds to 0 or ±inf."""
    sent = _across(value)
    assert coerce(sent, finite=False) == coerce(value, finite=False)
    assert coerce(value, finite=False)[1] is None
    if isinstance(value, mpmath.mpf) and math.isfinite(value) and float(value) != 0:
        assert mpmath.mpf(sent.numerator) / sent.denominator == value if isinstance(
            sent, Fraction) else sent == value


def test_a_real_number_inside_a_tuple_crosses() -> None:
    assert _across((mpmath.mpf(2), Decimal("0.5"))) == (2, Fraction(1, 2))


def test_a_decimal_answer_is_read_as_a_number_in_jupyter_too() -> None:
    assert coerce(Decimal("2.5")) == (2.5, None)
    assert coerce(Decimal("124"), whole=True) == (124, None)
    assert coerce(Decimal("124.5"), whole=True)[1] is not None
    assert coerce(Decimal("NaN"))[1] is not None


def test_a_value_that_is_no_real_number_is_still_refused() -> None:
    for value in (1j, mpmath.mpc(1, 1), object()):
        with pytest.raises(WireError):
            encode(value)


def test_a_value_that_cannot_cross_is_reported_as_returned_not_raised() -> None:
    """What the worker sends for a value that cannot cross: the checks say the function
    returned it, with what to do; a hidden test does not quote its type's name (the
    student's to choose)."""
    from dpkit.course.judges._base import returned_text
    from dpkit.course.wire import Unreadable, returned

    sent = decode(returned(mpmath.mpc(1, 1)))
    assert isinstance(sent, Unreadable)
    verdict = check.check_delta_for_sigma(lambda *a: sent)
    assert not verdict.passed
    assert "returned <a value of type mpc, which cannot be graded: return a number>" in \
        verdict.message and "raised" not in verdict.message, verdict
    assert returned_text(decode(returned(type("seen_0_5", (), {})()))) == \
        "a value that cannot be graded (return a number)"
    for hostile in ({"$unreadable": "x" * 41}, {"$unreadable": "a b"}, {"$unreadable": 3}):
        with pytest.raises(WireError):
            decode(hostile)
