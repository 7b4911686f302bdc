"""dpkit._checks: every validator refuses bad input with a message naming the parameter."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit import _checks as c

BAD_EPSILONS = [0, 0.0, -1, -1e-300, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("value", BAD_EPSILONS)
def test_epsilon_refuses_out_of_range(value):
    with pytest.raises(ValueError, match=r"^epsilon must be a finite number > 0, got"):
        c.check_epsilon(value)


@pytest.mark.parametrize("value", ["1", None, True, 1j, [1.0]])
def test_epsilon_refuses_wrong_types(value):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        c.check_epsilon(value)


def test_nan_message_shows_nan():
    with pytest.raises(ValueError, match="got nan"):
        c.check_epsilon(float("nan"))


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_epsilon_accepts_positive_finite(value):
    assert c.check_epsilon(value) == value


@given(st.one_of(st.integers(1, 10**6), st.fractions(min_value=Fraction(1, 10**6),
                                                     max_value=10**6),
                 st.floats(min_value=1e-10, max_value=1e10).map(np.float32)))
def test_epsilon_accepts_other_real_types(value):
    assert c.check_epsilon(value, rounding="down") == pytest.approx(float(value))
    assert c.check_epsilon(value, rounding="down") <= c.as_fraction(value, "v") \
        <= c.check_epsilon(value, rounding="up")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_delta_accepts_exactly_the_open_unit_interval(value):
    if 0 < value < 1:
        assert c.check_delta(value) == value
    else:
        with pytest.raises(ValueError, match=r"delta must be a number in \(0, 1\)"):
            c.check_delta(value)


def test_delta_allow_zero():
    assert c.check_delta(0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        c.check_delta(1, allow_zero=True)


@pytest.mark.parametrize("value", [0, -2, math.nan, math.inf])
def test_sensitivity(value):
    with pytest.raises(ValueError, match="sensitivity must be a finite number > 0"):
        c.check_sensitivity(value)


def test_custom_name_in_message():
    with pytest.raises(ValueError, match=r"^epsilon_total must"):
        c.check_epsilon(-1, "epsilon_total")


def test_integer():
    assert c.check_integer(np.int64(5), "n", minimum=1) == 5
    with pytest.raises(TypeError, match="n must be an integer"):
        c.check_integer(3.0, "n")
    with pytest.raises(TypeError):
        c.check_integer(True, "n")
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 3\], got 4"):
        c.check_integer(4, "k", minimum=1, maximum=3)
    with pytest.raises(ValueError, match="k must be an integer >= 0, got -1"):
        c.check_integer(-1, "k", minimum=0)


def test_bounds():
    assert c.check_bounds(0, 1) == (0.0, 1.0)
    assert c.check_bounds(2, 2, strict=False) == (2.0, 2.0)
    with pytest.raises(ValueError, match="bounds must satisfy lower < upper"):
        c.check_bounds(1, 0)
    with pytest.raises(ValueError, match="lower"):
        c.check_bounds(math.nan, 1)


def test_probability():
    assert c.check_probability(1, "p") == 1.0
    with pytest.raises(ValueError, match=r"p must be a number in \(0, 1\]"):
        c.check_probability(0, "p", open_low=True)


def test_finite_array():
    out = c.check_finite_array([1, 2, 3], "values")
    assert out.dtype == np.float64 and out.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match=r"must hold finite numbers only, got nan at index 1"):
        c.check_finite_array([1, math.nan], "values")
    with pytest.raises(ValueError, match="must not be empty"):
        c.check_finite_array([], "values")
    assert c.check_finite_array([], "values", allow_empty=True).size == 0
    with pytest.raises(TypeError):
        c.check_finite_array(["a"], "values")
    with pytest.raises(TypeError):
        c.check_finite_array("abc", "values")
    with pytest.raises(ValueError, match="dimension"):
        c.check_finite_array([[1.0]], "values", ndim=1)


def test_as_fraction_is_exact():
    assert c.as_fraction(0.1, "x") == Fraction(3602879701896397, 36028797018963968)
    assert c.as_fraction(3, "x") == 3
    assert c.as_fraction(Fraction(1, 3), "x") == Fraction(1, 3)
    with pytest.raises(ValueError):
        c.as_fraction(math.inf, "x")
