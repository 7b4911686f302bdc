"""Tests of the helpers every exercise checker uses to call a student's function
(``dpkit.check._common``), and of every checker on answers that are not numbers at all.

Deterministic: no randomness is involved in any verdict asserted here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpkit.check as check
from dpkit.check import Verdict
from dpkit.check._common import call_checked, call_number, coerce, shown
from dpkit.exponential import Eta


def _raises(*_args: object) -> float:
    raise ZeroDivisionError("division by zero")


def _number_of(result: object) -> float | Verdict:
    return call_number(lambda: result, where="at p=0.5", low=0.0, high=1.0)


@pytest.mark.parametrize("result, kind", [("0.5", " (of type str)"), (None, ""),
                                          ([0.5], " (of type list)"), ((0.5,), " (of type tuple)"),
                                          (0.5j, " (of type complex)"),
                                          ({"p": 0.5}, " (of type dict)")])
def test_a_non_number_is_refused_with_its_repr_and_type(result: object, kind: str) -> None:
    verdict = _number_of(result)
    assert isinstance(verdict, Verdict) and not verdict.passed
    assert verdict.message == (f"at p=0.5, your function returned {result!r}{kind}, not a "
                               "finite number")


@pytest.mark.parametrize("result", [math.nan, math.inf, -math.inf, np.float64("nan"),
                                    np.float32("inf"), 10**400])
def test_nan_inf_and_integers_beyond_the_float_range_are_refused(result: object) -> None:
    verdict = _number_of(result)
    assert isinstance(verdict, Verdict) and not verdict.passed
    assert "not a finite number" in verdict.message


@pytest.mark.parametrize("result", [True, False, np.True_, np.False_])
def test_a_bool_is_not_a_number(result: object) -> None:
    """True == 1 and False == 0 are in range, but a bool answers no numeric exercise."""
    verdict = _number_of(result)
    assert isinstance(verdict, Verdict) and "not a finite number" in verdict.message


@pytest.mark.parametrize("result, want", [(np.float64(0.25), 0.25), (np.float32(0.5), 0.5),
                                          (np.int64(1), 1.0), (Fraction(1, 4), 0.25),
                                          (0, 0.0), (1, 1.0)])
def test_numpy_scalars_and_other_reals_are_read_as_floats(result: object, want: float) -> None:
    value = _number_of(result)
    assert type(value) is float and value == want


@pytest.mark.parametrize("result", [np.array(0.25), np.array([0.25]), np.array([[0.25]]),
                                    np.array([0.25], dtype=np.float32),
                                    np.array([Fraction(1, 4)], dtype=object)])
def test_a_number_in_an_array_of_size_one_is_read_as_that_number(result: object) -> None:
    """``np.array(0.25)`` (a 0-d array, what NumPy reductions sometimes give) and
    ``generator.laplace(v, b, size=1)`` (shape (1,)) hold one number: they are that number
    (before: refused as "not a finite number")."""
    value = _number_of(result)
    assert type(value) is float and value == 0.25


@pytest.mark.parametrize("result, shape", [(np.array([0.25, 0.5]), "(2,)"),
                                           (np.zeros((2, 1)), "(2, 1)"),
                                           (np.array([]), "(0,)")])
def test_an_array_of_another_size_is_refused_naming_its_shape(result: object,
                                                               shape: str) -> None:
    verdict = _number_of(result)
    assert isinstance(verdict, Verdict) and not verdict.passed
    assert verdict.message == (f"at p=0.5, your function returned {result!r} (an array of "
                               f"shape {shape}), not a finite number: one number is expected "
                               "(a scalar, or an array of size 1)")


@pytest.mark.parametrize("result", [np.array(True), np.array([False]), np.array(["0.5"]),
                                    np.array([math.nan]), np.array(np.inf), np.array([0.5j]),
                                    np.array([None], dtype=object)])
def test_an_array_of_size_one_holding_no_finite_number_is_refused(result: object) -> None:
    verdict = _number_of(result)
    assert isinstance(verdict, Verdict) and not verdict.passed
    assert verdict.message.endswith(f"{shown(result)} (an array of shape {result.shape}), not "
                                    "a finite number")


def test_coerce_reads_whole_numbers_without_rounding() -> None:
    assert coerce(np.array([124.0]), whole=True) == (124, None)
    assert coerce(np.array(7), whole=True) == (7, None)
    assert coerce(10**400, whole=True) == (10**400, None)
    for wrong in (np.array([2.5]), 2.5, np.float64(124.000001), Fraction(5, 2)):
        value, why = coerce(wrong, whole=True)
        assert value is None and why.endswith("not a whole number"), why
    for not_a_count in (True, np.array([True]), "124", math.nan, math.inf, None):
        value, why = coerce(not_a_count, whole=True)
        assert value is None and "not a whole number" in why, why


def test_coerce_reads_a_fixed_number_of_numbers() -> None:
    for pair in ((2.0, 4), [2, 4.0], np.array([2.0, 4.0]), np.array([2, 4]),
                 (np.float32(2.0), np.array(4.0)), (np.array([2.0]), np.int64(4))):
        value, why = coerce(pair, length=2)
        assert why is None and value == (2.0, 4.0) and all(type(v) is float for v in value)
    assert coerce((3, 4.0), length=2, whole=True) == ((3, 4), None)


@pytest.mark.parametrize("value, why", [
    ((1.0, 2.0, 3.0), "(1.0, 2.0, 3.0) (a tuple of 3 items), not 2 finite numbers"),
    ([1.0], "[1.0] (a list of 1 item), not 2 finite numbers"),
    (np.array([1.0, 2.0, 3.0]), "array([1., 2., 3.]) (an array of shape (3,)), not 2 finite "
                                "numbers: the shape must be (2,)"),
    (np.array([[1.0, 2.0]]), "array([[1., 2.]]) (an array of shape (1, 2)), not 2 finite "
                             "numbers: the shape must be (2,)"),
    (3.0, "3.0, not 2 finite numbers (a tuple, a list or an array of shape (2,))"),
    ("ab", "'ab' (of type str), not 2 finite numbers (a tuple, a list or an array of shape "
           "(2,))"),
    ((1.0, math.nan), "(1.0, nan): its item 1 is nan, not a finite number"),
    ((True, 1.0), "(True, 1.0): its item 0 is True (of type bool), not a finite number"),
    (np.array([1.0, np.inf]), f"array([ 1., inf]): its item 1 is {np.float64(np.inf)!r}, "
                              "not a finite number"),
    (np.array([1, 0], dtype=bool), f"array([ True, False]): its item 0 is {np.True_!r} (of "
                                   f"type {type(np.True_).__name__}), not a finite number"),
])
def test_coerce_refuses_a_wrong_number_of_numbers_saying_what_it_got(value: object,
                                                                       why: str) -> None:
    assert coerce(value, length=2) == (None, why)


def test_inf_is_refused_unless_allowed_and_nan_always() -> None:
    assert coerce(math.inf) == (None, "inf, not a finite number")
    assert coerce(np.array([-math.inf]), finite=False) == (-math.inf, None)
    assert coerce(math.nan, finite=False) == (None, "nan, not a finite number")
    assert coerce(10**400) == (None, f"{shown(10**400)} (of type int), not a finite number "
                                     "(beyond the float range)")


def test_an_exception_in_the_students_function_becomes_a_verdict() -> None:
    verdict = call_number(_raises, 1.0, 2.0, where="at epsilon=1, delta=2", details=["a", "b"])
    assert isinstance(verdict, Verdict) and not verdict.passed
    assert verdict.message == ("at epsilon=1, delta=2, your function raised "
                               "ZeroDivisionError: division by zero")
    assert verdict.details == ("a", "b")


def test_the_arguments_reach_the_students_function() -> None:
    assert call_number(lambda a, b: a - b, 5, 3, where="here") == 2.0


def test_an_interrupt_is_not_swallowed() -> None:
    """A time limit (the notebook's interrupt, nbgrader's cell timeout) must stop the checker
    rather than become a verdict about the student's function."""
    def interrupted() -> float:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        call_number(interrupted, where="here")


@pytest.mark.parametrize("value, strict, inside", [
    (0.0, False, True), (1.0, False, True), (0.0, True, False), (1.0, True, False),
    (-1e-300, False, False), (math.nextafter(1.0, 2.0), False, False),
    (math.nextafter(0.0, 1.0), True, True), (math.nextafter(1.0, 0.0), True, True),
    (-5.0, False, False), (5.0, True, False)])
def test_the_range_on_both_sides(value: float, strict: bool, inside: bool) -> None:
    result = call_number(lambda: value, where="at p=0.5", low=0.0, high=1.0, strict=strict)
    if inside:
        assert result == value
    else:
        assert isinstance(result, Verdict) and not result.passed
        interval = "(0, 1)" if strict else "[0, 1]"
        assert result.message == (f"at p=0.5, your function returned {value!r}: the answer "
                                  f"must lie in {interval}")


def test_one_sided_ranges_and_a_custom_sentence() -> None:
    assert call_number(lambda: 1e300, where="here", low=0.0) == 1e300
    below = call_number(lambda: -0.5, where="here", low=0.0, need="ε is never negative")
    assert isinstance(below, Verdict) and below.message == ("here, your function returned "
                                                            "-0.5: ε is never negative")
    above = call_number(lambda: 2.0, where="here", high=1.0)
    assert isinstance(above, Verdict) and above.message.endswith("must lie in (−∞, 1]")
    positive = call_number(lambda: 0.0, where="here", low=0.0, strict=True)
    assert isinstance(positive, Verdict) and positive.message.endswith("must lie in (0, ∞)")


def test_a_verdict_returned_by_the_student_never_passes() -> None:
    """A student's function that returns a passing Verdict must not pass for the checker's."""
    forged = Verdict(True, "looks right")
    for helper in (call_checked, call_number):
        verdict = helper(lambda: forged, where="at x=1")
        assert isinstance(verdict, Verdict) and not verdict.passed
        assert verdict.message == "at x=1, your function returned a Verdict, not an answer"
    assert not check.check_truth_probability(lambda epsilon: forged).passed


def test_call_checked_returns_any_result_and_explains_an_exception() -> None:
    assert call_checked(lambda: (1, "a"), where="here") == (1, "a")
    assert call_checked(lambda: None, where="here") is None

    def explain(error: Exception) -> str:
        return "a float overflowed" if isinstance(error, OverflowError) else ""

    def overflows() -> float:
        return float(10**400)

    verdict = call_checked(overflows, where="On big weights", explain=explain)
    assert isinstance(verdict, Verdict)
    assert verdict.message == ("On big weights, your function raised OverflowError: int too "
                               "large to convert to float; a float overflowed")
    plain = call_checked(_raises, where="here", explain=explain)
    assert isinstance(plain, Verdict) and plain.message.endswith("division by zero")


def test_shown_cuts_long_results() -> None:
    assert shown([1, 2]) == "[1, 2]"
    long = shown(list(range(100)))
    assert len(long) < 90 and long.startswith("[0, 1, 2") and long.endswith("(390 characters)")


# Every checker that takes a function, with arguments after the function where needed.
_FUNCTION_CHECKERS = [
    "check_guessing_accuracy", "check_rr_delta", "check_tradeoff", "check_truth_probability",
    "check_debias", "check_rr_epsilon", "check_kary_truth_probability",
    "check_sum_count_sensitivity", "check_laplace_interval", "check_laplace_mechanism",
    "check_grid_scale", "check_l2_sensitivity", "check_classic_sigma", "check_delta_for_sigma",
    "check_analytic_sigma", "check_gaussian_noise", "check_newton_derivative",
    "check_sparse_scales", "check_little_noise_cost", "check_above_threshold",
    "check_auto_avg", "check_advanced_composition", "check_crossover",
    "check_laplace_profile", "check_division_free_sampler",
]
_BAD_ANSWERS = {
    "raises": _raises,
    "raises TypeError": lambda *args: [*args] + 1,
    "nan": lambda *_: math.nan,
    "a string": lambda *_: "0.5",
    "beyond floats": lambda *_: 10**400,
    "a dict": lambda *_: {},
}


@pytest.mark.parametrize("name", _FUNCTION_CHECKERS)
@pytest.mark.parametrize("answer", list(_BAD_ANSWERS), ids=str)
def test_every_checker_fails_a_broken_answer_with_a_verdict(name: str, answer: str) -> None:
    """No checker crashes on a function that raises or returns no usable number, and none
    quotes a huge result whole (before the shared helper: three composition checkers raised
    OverflowError on 10**400, the division-free sampler checker let a TypeError through, the
    Gaussian-noise checker raised on a dict, and the others quoted all 401 digits)."""
    verdict = getattr(check, name)(_BAD_ANSWERS[answer])
    assert isinstance(verdict, Verdict) and not verdict.passed, verdict
    assert verdict.message and len(verdict.message) < 400, verdict.message


def test_the_list_above_holds_every_checker_of_a_function() -> None:
    import inspect

    takes_function = {name for name in dir(check) if name.startswith("check_")
                      and next(iter(inspect.signature(getattr(check, name)).parameters))
                      in ("fn", "sampler")}
    assert takes_function == set(_FUNCTION_CHECKERS)


def _crossover_as_float(epsilon: float, delta_prime: float) -> float | None:
    from dpkit.composition import advanced_crossover

    k = advanced_crossover(epsilon, delta_prime)
    return None if k is None else float(k)


# Every checker whose answer is an integer: (call with the answer, the right answer).
_INTEGER_CHECKERS = {
    "check_queries_needed": (check.check_queries_needed, 124),
    "check_underflow_threshold": (check.check_underflow_threshold, 1491),
    "check_precision": (lambda a: check.check_precision(a, 0, 100, 1000,
                                                        Eta.from_epsilon(1.0)), None),
    "check_crossover_dimension": (check.check_crossover_dimension, None),
}


def _right_answer(name: str) -> int:
    checker, right = _INTEGER_CHECKERS[name]
    if right is None:
        right = next(n for n in range(1, 10_000) if checker(n).passed)
    return right


def _size_one(value: object) -> np.ndarray:
    return np.array([value])


@pytest.mark.parametrize("name", list(_INTEGER_CHECKERS))
@pytest.mark.parametrize("kind", [int, float, np.float64, np.int64, Fraction, np.array,
                                  _size_one], ids=["int", "float", "float64", "int64",
                                                   "Fraction", "0-d array", "size-1 array"])
def test_an_integer_answer_passes_whatever_real_type_holds_it(name: str, kind: type) -> None:
    """124.0 is the integer 124: a count computed with floats (math.ceil of a NumPy float,
    a bisection on floats) must not get 0 points (before: the composition, underflow and
    precision checkers refused every float; every checker refused 0-d and size-1 arrays)."""
    checker, _ = _INTEGER_CHECKERS[name]
    right = _right_answer(name)
    verdict = checker(kind(right))
    assert verdict.passed, verdict


@pytest.mark.parametrize("name", list(_INTEGER_CHECKERS))
def test_an_integer_answer_is_still_judged(name: str) -> None:
    checker, _ = _INTEGER_CHECKERS[name]
    right = _right_answer(name)
    for wrong in (right + 0.5, float(right + 1), True, str(right), math.nan, math.inf,
                  np.array([right + 0.5]), np.array(right - 1), np.array([right, right]),
                  np.array([True]), [right]):
        verdict = checker(wrong)
        assert not verdict.passed, wrong
        if isinstance(wrong, np.ndarray) and wrong.size != 1:
            assert "(an array of shape (2,))" in verdict.message, verdict.message


def test_a_function_answering_a_count_may_return_an_integer_valued_float() -> None:
    assert check.check_crossover(_crossover_as_float).passed
    assert not check.check_crossover(lambda e, d: None if _crossover_as_float(e, d) is None
                                     else _crossover_as_float(e, d) + 0.5).passed


def test_every_checker_reads_integers_with_the_one_helper() -> None:
    """No checker tests for int types itself: they share ``coerce(..., whole=True)`` (the
    sampler's index is the exception: it must index a list, so it stays an int)."""
    import ast
    from pathlib import Path

    import dpkit.check

    for path in Path(dpkit.check.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance":
                kinds = ast.unparse(node.args[1])
                if "Integral" in kinds or "np.integer" in kinds:
                    assert path.name == "_common.py" or (path.name == "exponential.py"
                                                         and "index" in ast.unparse(node)), \
                        f"{path.name}: {ast.unparse(node)}"


def test_a_verdict_says_where_the_sandbox_saw_the_error() -> None:
    """In grading, an error the student's function raised carries where it was raised
    (``where``, set by the sandbox); the verdict names that place, not "cell 1"."""
    def raises_in_the_sandbox(*_args: object) -> float:
        error = ZeroDivisionError("division by zero")
        error.where = "your answer to Exercise 3.2, line 4"  # type: ignore[attr-defined]
        raise error

    verdict = call_checked(raises_in_the_sandbox, where="at x=0")
    assert isinstance(verdict, Verdict)
    assert verdict.message == ("at x=0, your function raised ZeroDivisionError: division by "
                               "zero (in your answer to Exercise 3.2, line 4)")
    assert call_checked(_raises, where="at x=0").message.endswith("division by zero")


def test_a_withheld_message_is_said_so_not_left_as_a_dangling_colon():
    """Honest review 8, H4: once hidden tests have run, the grading sandbox withholds a
    student error's message; the public check then said "raised NameError: (in …)". It now
    names the type and the place, and says why the message is missing and how to read it."""
    from dpkit.check._common import call, call_checked

    def failing(*_args):
        error = NameError("")
        error.where, error.withheld = "your answer to Exercise 2.6, line 10", True
        raise error

    verdict = call_checked(failing, 1, where="for x=1")
    text = str(verdict)
    assert "NameError (in your answer to Exercise 2.6, line 10)" in text, text
    assert "run that cell in your notebook" in text and "NameError:" not in text, text
    assert "run that cell" in call(failing, 1)[1]
    assert call(lambda: 1 / 0)[1] == "ZeroDivisionError: division by zero"
