"""Adversarial review round 15, C4: answers that behave only on the judges' input sizes and
ranges. Each earned 3/3 while the hidden inputs stopped at a bound published on the teaching
page: a Laplace release without noise for values of 10⁹ or more (2.4), an AboveThreshold
that redraws its threshold every 50 queries (7.2), an average that returns the exact mean
above 12,000 rows (7.3). The judges now draw sizes and magnitudes per grading over the whole
range (a sweep of the float range, long streams, big columns); each attack, and variants
stepping out at other sizes, fails, and correct answers still pass.

Every judge is deterministic given its generator: each test runs it once with the fixed
seed of ``tests/test_judges.py``. A correct answer fails with probability at most 1e-6 over
that seed (each judge's stated budget); an attack's catch is deterministic where it is a
noiseless release (the Laplace sweep and the big columns: caught whatever the seed) and of
the stated power for the redrawn thresholds (above 0.999 for m <= 500, from the exact laws).
"""

from __future__ import annotations

import numpy as np
import pytest
from model_answers import auto_avg_model  # tests/ is on sys.path under pytest
from test_judges import (
    SEED,
    at_exponentials,
    at_model,
    gauss_box_muller,
    gauss_fractions,
    gauss_model,
    laplace_exact,
    laplace_model,
    laplace_two_exponentials,
)

from dpkit.course.judges import (
    judge_above_threshold,
    judge_auto_avg,
    judge_gaussian_noise,
    judge_laplace_mechanism,
)


def run(judge, fn):
    return judge(fn, np.random.default_rng(SEED))


# ---------------------------------------------------------------- 2.4: the Laplace mechanism

def laplace_exact_beyond(limit):
    """The reviewer's answer (limit 1e9): the value itself, without noise, at |value| >= limit."""
    def my_laplace(value, sensitivity, epsilon, generator):
        if abs(value) >= limit:
            return float(value)
        return value + generator.laplace(0.0, sensitivity / epsilon)
    my_laplace.__name__ = f"laplace_exact_beyond_{limit:g}"
    return my_laplace


def laplace_exact_below(value, sensitivity, epsilon, generator):
    """The value without noise when it is tiny ("the noise would swamp it")."""
    if abs(value) < 1e-100:
        return float(value)
    return value + generator.laplace(0.0, sensitivity / epsilon)


def laplace_thousandth_beyond(value, sensitivity, epsilon, generator):
    """A thousandth of the noise for values of 10¹² or more."""
    shrink = 1e-3 if abs(value) >= 1e12 else 1.0
    return value + shrink * generator.laplace(0.0, sensitivity / epsilon)


@pytest.mark.parametrize("fn", [laplace_exact_beyond(1e9), laplace_exact_beyond(1e12),
                                laplace_exact_beyond(1e200), laplace_exact_beyond(1e300),
                                laplace_exact_below, laplace_thousandth_beyond],
                         ids=lambda fn: fn.__name__)
def test_laplace_noiseless_outside_the_old_ranges_is_a_privacy_violation(fn):
    """Passed before (values stopped at 10⁸); now a privacy violation whatever the seed:
    the sweep has a point beyond 10³⁰⁰ and one below 10⁻³⁰⁰, and one in each of 22 bands
    of about 27 decades between, every one with releases at the value."""
    verdict = run(judge_laplace_mechanism, fn)
    assert not verdict.passed and verdict.privacy, verdict
    assert "extreme hidden input" in verdict.message


@pytest.mark.parametrize("fn", [laplace_model, laplace_two_exponentials, laplace_exact])
def test_laplace_correct_answers_pass_the_sweep(fn):
    """NumPy's noise, a difference of exponentials and dpkit's exact mechanism, from 10⁻³⁰⁷
    to 10³⁰⁷: fail with probability at most 1e-6 (the sweep's share: 8e-8)."""
    verdict = run(judge_laplace_mechanism, fn)
    assert verdict.passed, verdict


# ---------------------------------------------------------------- 7.2: AboveThreshold

def at_refreshed(m):
    """The reviewer's answer for m = 50: the threshold noise redrawn every m queries."""
    def my_above_threshold(queries, data, threshold, epsilon, rng):
        generator = rng.numpy_generator()
        noisy = threshold + generator.laplace(0.0, 2 / epsilon)
        for index, query in enumerate(queries):
            if index and index % m == 0:
                noisy = threshold + generator.laplace(0.0, 2 / epsilon)
            if query(data) + generator.laplace(0.0, 4 / epsilon) >= noisy:
                return index
        return None
    my_above_threshold.__name__ = f"at_refreshed_every_{m}"
    return my_above_threshold


@pytest.mark.parametrize("m", [20, 50, 100, 300])
def test_above_threshold_redrawn_threshold_fails(m):
    """Passed before (at most 41 queries a call). The long streams catch it: from the exact
    laws at ε = 1 (:func:`dpkit.course.judges.svt.survival`), the longer stream (1,500
    to 3,000 queries, 2,000 runs) alone with probability above 0.999 for every m <= 500.
    A plain failure: its privacy loss lies on events too rare to certify by sampling."""
    verdict = run(judge_above_threshold, at_refreshed(m))
    assert not verdict.passed, verdict
    assert "long stream" in verdict.message and not verdict.privacy


@pytest.mark.parametrize("fn", [at_model, at_exponentials])
def test_above_threshold_correct_answers_pass_the_long_streams(fn):
    """NumPy's Laplace noise, or noise as a difference of exponentials: fail with
    probability at most 1e-6 (the long streams' share: 1.6e-7)."""
    verdict = run(judge_above_threshold, fn)
    assert verdict.passed, verdict


# ---------------------------------------------------------------- 7.3: auto_avg

def avg_exact_beyond(rows):
    """The reviewer's answer (12,000 rows): the exact mean on larger columns."""
    def my_auto_avg(values, epsilon, rng):
        values = np.asarray(values, dtype=float)
        if values.size > rows:
            return float(values.mean())
        return auto_avg_model(values, epsilon, rng)
    my_auto_avg.__name__ = f"avg_exact_beyond_{rows}"
    return my_auto_avg


@pytest.mark.parametrize("rows", [12_000, 20_000, 200_000])
def test_auto_avg_exact_mean_on_big_columns_is_a_privacy_violation(rows):
    """Passed before (columns of at most about 10,000 rows). The second big pair has more
    than 220,000 rows whatever the seed, and an exact mean hits its event in all 50 runs
    on one column and none on the other: a privacy violation whatever the seed."""
    verdict = run(judge_auto_avg, avg_exact_beyond(rows))
    assert not verdict.passed and verdict.privacy, verdict
    assert "large hidden column" in verdict.message


def avg_refusing_beyond(values, epsilon, rng):
    """A correct answer that refuses more rows than a public bound (10⁵ here)."""
    if len(values) > 100_000:
        raise ValueError("more rows than the public bound")
    return auto_avg_model(values, epsilon, rng)


@pytest.mark.parametrize("fn", [auto_avg_model, avg_refusing_beyond])
def test_auto_avg_correct_answers_pass_the_big_columns(fn):
    """The model (which refuses more than 65,536 rows, ``choose_clip_bound``'s default
    ``max_rows``) and one refusing beyond 10⁵: a refusal is private; fail with probability
    at most 1e-6 (the big pairs' share: 5e-8). Slow (the whole judge, about 4 min at load 8)."""
    verdict = run(judge_auto_avg, fn)
    assert verdict.passed, verdict


# ---------------------------------------------------------------- 4.3: Gaussian noise

def gauss_zero_beyond(limit):
    """No noise for σ beyond ``limit`` (the old hidden σ stopped at 20)."""
    def draws(sigma, size, generator):
        if sigma > limit:
            return np.zeros(size)
        return generator.normal(0.0, sigma, size)
    draws.__name__ = f"gauss_zero_beyond_{limit:g}"
    return draws


def gauss_zero_on_big_calls(sigma, size, generator):
    """No noise on calls of more than 5,000 draws (the old sizes stopped at 2,500)."""
    if size > 5000:
        return np.zeros(size)
    return generator.normal(0.0, sigma, size)


def gauss_zero_below(sigma, size, generator):
    """No noise for σ below 10⁻³ (the old hidden σ started at 0.05)."""
    if sigma < 1e-3:
        return np.zeros(size)
    return generator.normal(0.0, sigma, size)


@pytest.mark.parametrize("fn", [gauss_zero_beyond(20), gauss_zero_beyond(1e200),
                                gauss_zero_on_big_calls, gauss_zero_below],
                         ids=lambda fn: fn.__name__)
def test_gaussian_noiseless_outside_the_old_ranges_is_a_privacy_violation(fn):
    """Passed before; now a privacy violation whatever the seed (the sweep has σ beyond
    10²⁹⁰ and below 10⁻²⁹⁰, and one call of at least 20,000 draws)."""
    verdict = run(judge_gaussian_noise, fn)
    assert not verdict.passed and verdict.privacy, verdict


@pytest.mark.parametrize("fn", [gauss_model, gauss_box_muller, gauss_fractions])
def test_gaussian_correct_answers_pass_the_sweep(fn):
    """NumPy's normal, Box–Muller, exact fractions: fail with probability at most 1e-6."""
    verdict = run(judge_gaussian_noise, fn)
    assert verdict.passed, verdict


def test_a_count_query_crosses_the_wire_by_value():
    """The long streams' queries are evaluated in the worker (a query lent by reference costs
    a round trip, 0.1 to 0.2 ms: thousands per call): a ``CountQuery`` crosses as its index,
    is rebuilt as one, and a malformed one (an index not an int >= 0) is refused."""
    from dpkit.course.wire import CountQuery, WireError, decode, encode

    sent = encode([CountQuery(3)], lambda _value: 0)
    assert sent[0]["$obj"][0] == "CountQuery"
    back = decode(sent)[0]
    assert type(back) is CountQuery and back(np.array([0, 1, 2, 9])) == 9
    for bad in ("3", -1, 2.0, True):
        with pytest.raises(WireError):
            decode({"$obj": ["CountQuery", [encode(bad)]]})
