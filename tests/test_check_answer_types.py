"""A right answer passes whatever numeric type holds it; a wrong one fails in any type.

From an honest-student review: right answers lost points because of their Python type
(a NumPy array of two numbers for a pair, a 0-d array or an array of size 1 for a number),
and a 1-based index got a hint about reading the stream. Every checker reads numbers with
``dpkit.check._common.coerce``; these tests hold each checker to it. Deterministic: the
statistical checkers use fixed seeds (their false-failure probabilities, below 1e-6, are
stated in their docstrings).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from model_answers import auto_avg_model  # tests/ is on sys.path under pytest

import dpkit.check as check
from dpkit.audit import guessing_bound, tradeoff_bound
from dpkit.check.composition import _best_per_query, _laplace_profile
from dpkit.check.promise import _rr_delta
from dpkit.composition import advanced, advanced_crossover
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.laplace import laplace_accuracy, laplace_grid
from dpkit.randomized_response import debias


def _sparse_scales(epsilon: float, c: int) -> np.ndarray:
    return np.array([2 * c / epsilon, 4 * c / epsilon])


def _above_threshold(first: int) -> Callable[..., Any]:
    """AboveThreshold whose indices count from ``first``."""
    def above_threshold(queries, data, threshold, epsilon, rng):
        generator = rng.numpy_generator()
        noisy_threshold = threshold + generator.laplace(0.0, 2 / epsilon)
        for index, query in enumerate(queries, first):
            if query(data) + generator.laplace(0.0, 4 / epsilon) >= noisy_threshold:
                return index
        return None
    return above_threshold


# ------------------------------------------------------------------ the reported cases

def test_exercise_7_1_a_pair_given_as_a_numpy_array_passes() -> None:
    """Before: "your function returned array([2., 4.]), not two numbers"."""
    verdict = check.check_sparse_scales(_sparse_scales)
    assert verdict.passed, verdict
    swapped = check.check_sparse_scales(lambda e, c: _sparse_scales(e, c)[::-1])
    assert not swapped.passed and "swapped" in swapped.message


def test_exercise_7_1_an_array_of_the_wrong_size_is_refused_naming_its_shape() -> None:
    verdict = check.check_sparse_scales(lambda e, c: np.array([2 / e, 4 / e, 1.0]))
    assert not verdict.passed
    assert verdict.message == ("for epsilon=1, c=1, your function returned array([2., 4., "
                               "1.]) (an array of shape (3,)), not 2 finite numbers: the "
                               "shape must be (2,); the pair (threshold scale, query scale) "
                               "is expected")
    nan = check.check_sparse_scales(lambda e, c: (2 / e, math.nan))
    assert not nan.passed and "its item 1 is nan, not a finite number" in nan.message


def test_exercise_5_7_a_0d_array_passes() -> None:
    """Before: "your function returned array(0.39346934), not a finite number"."""
    verdict = check.check_laplace_profile(lambda e, e0: np.array(_laplace_profile(e, e0)))
    assert verdict.passed, verdict
    tail = check.check_laplace_profile(lambda e, e0: np.array(0.5 + 0.5 * _laplace_profile(
        e, e0)) if e < e0 else np.array(0.0))
    assert not tail.passed and "P[L > ε]" in tail.message


def test_exercise_2_4_an_array_of_size_one_passes() -> None:
    """``generator.laplace(value, scale, size=1)``. Before: "your function returned
    array([10.04785447]), not a finite number"; the audit would then have raised."""
    verdict = check.check_laplace_mechanism(lambda v, d, e, g: g.laplace(v, d / e, size=1))
    assert verdict.passed, verdict
    times = check.check_laplace_mechanism(lambda v, d, e, g: g.laplace(v, d * e, size=1))
    assert not times.passed and "Δ·ε" in times.message
    two = check.check_laplace_mechanism(lambda v, d, e, g: g.laplace(v, d / e, size=2))
    assert not two.passed and "(an array of shape (2,))" in two.message


def test_exercise_2_4_the_audit_reads_releases_as_the_first_test_does() -> None:
    """A release that turns unreadable during the audit fails with a verdict (before: the
    audit raised out of the checker)."""
    calls = 0

    def fails_late(value: float, sensitivity: float, epsilon: float,
                   generator: np.random.Generator) -> Any:
        nonlocal calls
        calls += 1
        return value + generator.laplace(0.0, sensitivity / epsilon) if calls <= 8000 else "x"

    verdict = check.check_laplace_mechanism(fails_late)
    assert not verdict.passed
    assert verdict.message.startswith("in the audit, for value=0, Δ=1, ε=1, your function "
                                      "returned 'x' (of type str)")


def test_exercise_7_2_a_one_based_index_is_named_off_by_one() -> None:
    """Before: "expected 3, got 4; take the queries one at a time (no len(), no list()) and
    stop at the first pass", which sent the student looking at the wrong thing."""
    verdict = check.check_above_threshold(_above_threshold(1))
    assert not verdict.passed
    assert "off by one, one more than the index of the query that passed" in verdict.message
    assert "Indices count from 0" in verdict.message
    assert "one at a time" not in verdict.message
    below = check.check_above_threshold(_above_threshold(-1))
    assert not below.passed and "off by one, one less than" in below.message


def test_exercise_7_2_other_wrong_indices_keep_the_stream_hint() -> None:
    """Only the right index shifted by one is called off by one."""
    verdict = check.check_above_threshold(_above_threshold(2))
    assert not verdict.passed and "off by one" not in verdict.message
    assert "expected 3, got 5; take the queries one at a time" in verdict.message
    assert check.check_above_threshold(_above_threshold(0)).passed


@pytest.mark.parametrize("index, why", [
    (lambda i: np.array([i, i]), "array([3, 3]) (an array of shape (2,)), not a whole number"),
    (lambda i: i + 0.5, "3.5, not a whole number"),
    (lambda i: str(i), "'3' (of type str), not a whole number"),
])
def test_exercise_7_2_an_index_that_is_no_whole_number_is_refused(index, why) -> None:
    """Before: an array of two indices made the checker raise ValueError (the truth value
    of an array), and '3' got the stream hint."""
    def above_threshold(queries, data, threshold, epsilon, rng):
        found = _above_threshold(0)(queries, data, threshold, epsilon, rng)
        return None if found is None else index(found)

    verdict = check.check_above_threshold(above_threshold)
    assert not verdict.passed
    assert f"your function returned {why}" in verdict.message
    assert verdict.message.endswith("AboveThreshold returns the index of a query, or None")


# ------------------------------------------------ every checker of a numeric function

# A right answer of every checker whose answer is a function returning one number (or None).
_RIGHT: dict[str, Callable[..., Any]] = {
    "check_guessing_accuracy": guessing_bound,
    "check_tradeoff": tradeoff_bound,
    "check_rr_delta": _rr_delta,
    "check_truth_probability": lambda e: math.exp(e) / (1 + math.exp(e)),
    "check_debias": lambda y, e: float(debias(y, e)),
    "check_rr_epsilon": lambda p: abs(math.log(p / (1 - p))),
    "check_kary_truth_probability": lambda e, k: math.exp(e) / (math.exp(e) + k - 1),
    "check_sum_count_sensitivity": lambda lower, upper: max(abs(lower), abs(upper)) + 1,
    "check_laplace_interval": lambda d, e, c: laplace_accuracy(d, e, 1 - c),
    "check_laplace_mechanism": lambda v, d, e, g: v + g.laplace(0.0, d / e),
    "check_grid_scale": lambda d, e, k: laplace_grid(d, e, k).scale,
    "check_l2_sensitivity": lambda k, c: c * math.sqrt(k),
    "check_classic_sigma": classic_sigma,
    "check_delta_for_sigma": delta_for_sigma,
    "check_analytic_sigma": analytic_sigma,
    "check_newton_derivative": lambda x, e: math.exp(-x * x) * (x / math.sqrt(x * x + e) - 1),
    "check_little_noise_cost": lambda e, c: (1 + 6 * c) / 4 * e,
    "check_auto_avg": auto_avg_model,
    "check_advanced_composition": lambda e, k, d: advanced(e, 0.0, k, d)[0],
    "check_crossover": advanced_crossover,
    "check_laplace_profile": _laplace_profile,
}
# The checkers of a function whose answer is not one number, and where they are tested.
_NOT_ONE_NUMBER = {
    "check_sparse_scales": "a pair: test_exercise_7_1_*",
    "check_gaussian_noise": "an array of draws: test_gaussian_noise_*",
    "check_above_threshold": "an index or None: test_exercise_7_2_*",
    "check_division_free_sampler": "an int index, by design (test_check_common)",
}


def _holding(right: Callable[..., Any], kind: Callable[[Any], Any]) -> Callable[..., Any]:
    """``right`` with each number it returns put in ``kind`` (None stays None)."""
    def answer(*args: Any) -> Any:
        value = right(*args)
        return None if value is None else kind(value)
    return answer


def test_the_table_covers_every_checker_of_a_function() -> None:
    import inspect

    takes_function = {name for name in dir(check) if name.startswith("check_")
                      and next(iter(inspect.signature(getattr(check, name)).parameters))
                      in ("fn", "sampler")}
    assert set(_RIGHT) | set(_NOT_ONE_NUMBER) == takes_function
    assert not set(_RIGHT) & set(_NOT_ONE_NUMBER)


@pytest.mark.parametrize("name", sorted(_RIGHT))
@pytest.mark.parametrize("kind", [np.float64, np.array, lambda x: np.array([x])],
                         ids=["numpy scalar", "0-d array", "size-1 array"])
def test_a_right_number_passes_in_any_numpy_holder(name: str, kind: Callable) -> None:
    """Before: every checker but one refused the 0-d and the size-1 arrays."""
    verdict = getattr(check, name)(_holding(_RIGHT[name], kind))
    assert verdict.passed, verdict


@pytest.mark.parametrize("name", sorted(_RIGHT))
def test_a_wrong_number_fails_in_any_numpy_holder(name: str) -> None:
    """Reading a size-1 array lets no wrong answer through (2x + 1 is wrong at every point
    of every checker, and far outside the statistical checkers' tolerance)."""
    verdict = getattr(check, name)(_holding(_RIGHT[name], lambda x: np.array([2 * x + 1])))
    assert not verdict.passed, verdict


def test_gaussian_noise_draws_in_a_list_tuple_or_array_pass_and_others_are_refused() -> None:
    for kind in (np.asarray, list, tuple):
        verdict = check.check_gaussian_noise(lambda s, n, g, kind=kind: kind(g.normal(0.0, s, n)))
        assert verdict.passed, verdict
    column = check.check_gaussian_noise(lambda s, n, g: g.normal(0.0, s, (n, 1)))
    assert not column.passed and "(an array of shape (4000, 1))" in column.message
    assert "the shape must be (4000,)" in column.message
    flags = check.check_gaussian_noise(lambda s, n, g: g.normal(0.0, s, n) > 0)
    assert not flags.passed and "its item 0 is" in flags.message    # booleans: no draws
    text = check.check_gaussian_noise(lambda s, n, g: [str(x) for x in g.normal(0.0, s, n)])
    assert not text.passed and "(of type str), not a finite number" in text.message


def test_a_per_query_epsilon_passes_in_any_numpy_holder() -> None:
    best = _best_per_query(1.0, 1e-6, 100)
    for kind in (np.float64, np.array, lambda x: np.array([x])):
        verdict = check.check_per_query_epsilon(kind(best))
        assert verdict.passed, verdict
    for wrong in (np.array([2 * best]), np.array([best, best]), np.array([True]), "0.01"):
        assert not check.check_per_query_epsilon(wrong).passed, wrong
    assert check.check_per_query_epsilon(np.array([best, best])).message.startswith(
        "expected a positive number, got array([")
