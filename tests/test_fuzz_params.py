"""Hypothesis fuzzing of every public function's parameters.

The contract (DESIGN.md, "Parameters"): bad input raises ``ValueError`` or ``TypeError``
whose message names the parameter; never a NaN, a bare ``OverflowError`` /
``ZeroDivisionError`` / ``RecursionError``, a hang or a silent clamp. Each public function
is called with values drawn from a pool of hostile inputs (NaN, ±inf, ±0, subnormals, 1e300,
the largest float, ints beyond 2**53 and beyond the float range, Fractions, long doubles,
NumPy scalars, bools, None, strings, complex numbers) mixed with ordinary ones, and:

* an exception must be ``ValueError``/``TypeError`` (or an exception the function documents,
  e.g. ``BudgetExceeded``) whose message names one of the function's parameters;
* a result must hold no NaN; calibrations (scales, σ, ε, δ) must be finite, and in the safe
  direction of the exact value where one is computed here with 60-digit arithmetic;
* every call must finish within ``CALL_SECONDS`` (a timer interrupts it otherwise).

Hypothesis runs derandomized (``derandomize=True``, no example database), so a run is
reproducible, with a bounded number of examples per function.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from dpkit import (
    composition,
    exponential,
    gaussian,
    laplace,
    randomized_response,
    snapping,
    svt,
)
from dpkit.composition import Accountant, BudgetExceeded
from dpkit.exponential import Eta, InexactArithmeticError
from dpkit.rng import seeded

CALL_SECONDS = 5
EXAMPLES = 30
# No shrinking phase: a failure reports the first failing input (reproducible, since the
# run is derandomized) and the time a failing run takes stays bounded.
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                phases=(Phase.explicit, Phase.generate),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
mpmath.mp.dps = 60

HOSTILE_REALS = [
    math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308,
    1e-300, 1e300, -1e300, 1.7976931348623157e308, 10**400, -(10**400), 2**53 + 1, 2**54 + 3,
    2**64, Fraction(1, 3), Fraction(1, 10), Fraction(1, 10**400), Fraction(10**400, 3),
    np.longdouble(1) / 3, np.longdouble("1e-4000"), np.longdouble("1e4000"), np.float32(0.5),
    np.int64(2**62), np.uint64(2**64 - 1), np.float16(65504), True, False, None, "1", b"1",
    1 + 0j, [1.0], np.array(1.0), np.array([1.0, 2.0]),
]
ORDINARY_REALS = st.one_of(
    st.floats(min_value=1e-6, max_value=1e6),
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.fractions(max_denominator=10**6),
)
REAL = st.one_of(st.sampled_from(HOSTILE_REALS), ORDINARY_REALS)
PROBABILITY = st.one_of(REAL, st.floats(min_value=0.0, max_value=1.0))
COUNT = st.one_of(st.sampled_from([-1, 0, 1, 3, 2**64, 10**400, 1.5, 2.0, True, None, "3",
                                   np.int64(4), Fraction(3)]),
                  st.integers(min_value=0, max_value=20))
ARRAY = st.one_of(
    st.lists(REAL, min_size=0, max_size=4),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4),
    st.sampled_from([np.array([2**62 + 513], np.int64), np.array([2**64 - 1], np.uint64),
                     np.array([1, 2], np.longdouble), np.array([[1.0]]), np.array([], float),
                     np.array(["a"]), np.array([True, False]), [0.0, True], "abc", None, 3.0]),
)
BOOLS = st.one_of(st.lists(st.booleans(), min_size=1, max_size=4).map(np.array), ARRAY)


class Hang(Exception):
    """A call did not finish within CALL_SECONDS."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"call did not finish within {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _nan_free(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isnan(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind != "f" or not np.isnan(value).any()
    if isinstance(value, (tuple, list)):
        return all(_nan_free(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(_nan_free(getattr(value, f.name)) for f in dataclasses.fields(value))
    return True


REFUSED = object()  # what _call returns for an accepted refusal


#: Python's own messages: an OverflowError carrying one of them was not raised on purpose.
_BUILTIN_OVERFLOW = ("too large to convert", "integer division result too large",
                     "math range error", "too many digits", "does not support Infinity")


def _documents_overflow(function: Callable[..., Any]) -> bool:
    """Whether the function's docstring lists OverflowError among the errors it raises."""
    return "OverflowError" in (getattr(function, "__doc__", None) or "")


def _call(function: Callable[..., Any], params: tuple[str, ...], *args: Any,
          allowed: tuple[type[BaseException], ...] = (), **kwargs: Any) -> Any:
    """Call under the time limit; judge an exception; return the result (or REFUSED).

    Accepted: ``ValueError``/``TypeError`` naming a parameter; the exceptions in
    ``allowed``; an ``OverflowError`` the function documents, with its own message (not one
    of Python's, which would mean it escaped unplanned).
    """
    try:
        with _time_limit(CALL_SECONDS):
            result = function(*args, **kwargs)
    except allowed:
        return REFUSED
    except OverflowError as error:
        if not _documents_overflow(function) or any(m in str(error) for m in _BUILTIN_OVERFLOW):
            raise
        return REFUSED
    except (ValueError, TypeError) as error:
        message = str(error)
        assert any(name in message for name in params), (
            f"error does not name any of {params}: {type(error).__name__}: {message}")
        return REFUSED
    assert _nan_free(result), f"NaN in the result {result!r}"
    return result


def _finite_positive(value: Any) -> None:
    assert isinstance(value, float) and math.isfinite(value) and value > 0, value


# --------------------------------------------------------------- all functions, all inputs

def _rng_kw() -> dict[str, Any]:
    return {"rng": seeded(0)}


SPECS: list[tuple[str, Callable[..., Any], tuple[tuple[str, Any], ...], Callable[[Any], None]
                  | None, tuple[type[BaseException], ...], dict[str, Any]]] = [
    ("laplace_scale", laplace.laplace_scale, (("sensitivity", REAL), ("epsilon", REAL)),
     _finite_positive, (), {}),
    ("laplace_accuracy", laplace.laplace_accuracy,
     (("sensitivity", REAL), ("epsilon", REAL), ("beta", PROBABILITY)), _finite_positive, (),
     {}),
    ("laplace_grid", laplace.laplace_grid,
     (("sensitivity", REAL), ("epsilon", REAL), ("count", COUNT)), None, (), {}),
    ("laplace_mechanism", laplace.laplace_mechanism,
     (("value", st.one_of(REAL, ARRAY)), ("sensitivity", REAL), ("epsilon", REAL)), None, (),
     {"rng": None}),
    ("sample_releases", laplace.sample_releases,
     (("value", REAL), ("sensitivity", REAL), ("epsilon", REAL), ("n", COUNT)), None, (),
     {"rng": None}),
    ("snapping_grid", snapping.snapping_grid,
     (("sensitivity", REAL), ("epsilon", REAL), ("bound", REAL)),
     lambda g: _finite_positive(g.epsilon), (), {}),
    ("snapping_epsilon", snapping.snapping_epsilon,
     (("sensitivity", REAL), ("epsilon", REAL), ("bound", REAL)), _finite_positive, (), {}),
    ("snapping_mechanism", snapping.snapping_mechanism,
     (("value", st.one_of(REAL, ARRAY)), ("sensitivity", REAL), ("epsilon", REAL),
      ("bound", REAL)), None, (), {"rng": None}),
    ("classic_sigma", gaussian.classic_sigma,
     (("sensitivity", REAL), ("epsilon", REAL), ("delta", PROBABILITY)), _finite_positive, (),
     {}),
    ("analytic_sigma", gaussian.analytic_sigma,
     (("sensitivity", REAL), ("epsilon", REAL), ("delta", PROBABILITY)), _finite_positive, (),
     {}),
    ("delta_for_sigma", gaussian.delta_for_sigma,
     (("sigma", REAL), ("sensitivity", REAL), ("epsilon", REAL)),
     lambda d: None if 0 < d <= 1 else pytest.fail(f"delta {d!r} outside (0, 1]"), (), {}),
    ("mechanism_parameters", gaussian.mechanism_parameters,
     (("sensitivity", REAL), ("epsilon", REAL), ("delta", PROBABILITY), ("dimension", COUNT)),
     lambda p: _finite_positive(p.sigma), (), {}),
    ("gaussian_mechanism", gaussian.gaussian_mechanism,
     (("value", st.one_of(REAL, ARRAY)), ("sensitivity", REAL), ("epsilon", REAL),
      ("delta", PROBABILITY)), None, (), {"rng": None}),
    ("sequential", composition.sequential, (("epsilons", ARRAY), ("deltas", ARRAY)), None, (),
     {}),
    ("advanced", composition.advanced,
     (("epsilon", REAL), ("delta", PROBABILITY), ("k", COUNT), ("delta_prime", PROBABILITY)),
     None, (), {}),
    ("advanced_heterogeneous", composition.advanced_heterogeneous,
     (("epsilons", ARRAY), ("deltas", ARRAY), ("delta_prime", PROBABILITY)), None, (), {}),
    ("advanced_epsilon_per_mechanism", composition.advanced_epsilon_per_mechanism,
     (("epsilon_total", REAL), ("delta_prime", PROBABILITY), ("k", COUNT)), None, (), {}),
    ("advanced_epsilon_per_mechanism_exact", composition.advanced_epsilon_per_mechanism_exact,
     (("epsilon_total", REAL), ("delta_prime", PROBABILITY), ("k", COUNT)), None, (), {}),
    ("advanced_crossover", composition.advanced_crossover,
     (("epsilon", REAL), ("delta_prime", PROBABILITY)), None, (), {}),
    ("optimal", composition.optimal,
     (("epsilon", REAL), ("delta", PROBABILITY), ("k", COUNT), ("delta_prime", PROBABILITY)),
     None, (), {}),
    ("optimal_delta", composition.optimal_delta,
     (("epsilon", REAL), ("delta", PROBABILITY), ("k", COUNT), ("epsilon_total", REAL)), None,
     (), {}),
    ("optimal_epsilon_per_mechanism", composition.optimal_epsilon_per_mechanism,
     (("epsilon_total", REAL), ("delta_prime", PROBABILITY), ("k", COUNT)), None, (), {}),
    ("gaussian_rho", composition.gaussian_rho, (("sensitivity", REAL), ("sigma", REAL)),
     _finite_positive, (), {}),
    ("pure_to_zcdp", composition.pure_to_zcdp, (("epsilon", REAL),), _finite_positive, (), {}),
    ("zcdp_to_dp", composition.zcdp_to_dp, (("rho", REAL), ("delta", PROBABILITY)),
     _finite_positive, (), {}),
    ("Accountant", Accountant, (("epsilon", REAL), ("delta", PROBABILITY)), None, (), {}),
    ("Accountant.spend", lambda epsilon, delta: Accountant(1.0, 1e-6).spend(epsilon, delta),
     (("epsilon", REAL), ("delta", PROBABILITY)), None, (BudgetExceeded,), {}),
    ("Accountant.spend_gaussian",
     lambda sigma, sensitivity, epsilon, delta: Accountant(
         1.0, 1e-3, composition="zcdp").spend_gaussian(sigma, sensitivity, epsilon, delta),
     (("sigma", REAL), ("sensitivity", REAL), ("epsilon", REAL), ("delta", PROBABILITY)),
     None, (BudgetExceeded,), {}),
    ("Eta", Eta, (("x", COUNT), ("y", COUNT), ("z", st.sampled_from([1, 2, 7])),), None, (),
     {}),
    ("Eta.from_epsilon", Eta.from_epsilon, (("epsilon", REAL), ("sensitivity", REAL)), None,
     (), {}),
    ("Eta.epsilon", lambda sensitivity: Eta(3, 2).epsilon(sensitivity),
     (("sensitivity", REAL),), _finite_positive, (), {}),
    ("compute_precision",
     lambda utility_min, utility_max, max_outcomes: exponential.compute_precision(
         utility_min, utility_max, max_outcomes, Eta(1, 1)),
     (("utility_min", REAL), ("utility_max", REAL), ("max_outcomes", COUNT)), None,
     (InexactArithmeticError,), {}),
    ("base2_exponential_mechanism",
     lambda utilities, utility_min, utility_max, rng: exponential.base2_exponential_mechanism(
         utilities, Eta(1, 1), utility_min=utility_min, utility_max=utility_max, rng=rng),
     (("utilities", ARRAY), ("utility_min", REAL), ("utility_max", REAL)), None,
     (InexactArithmeticError,), {"rng": None}),
    ("probabilities",
     lambda utilities: exponential.probabilities(utilities, Eta(1, 1)),
     (("utilities", ARRAY),), None, (), {}),
    ("truth_probability", randomized_response.truth_probability, (("epsilon", REAL),), None,
     (), {}),
    ("randomized_response", randomized_response.randomized_response,
     (("answers", BOOLS), ("epsilon", REAL)), None, (), {"rng": None}),
    ("debias", randomized_response.debias, (("yes_fraction", st.one_of(PROBABILITY, ARRAY)),
                                            ("epsilon", REAL)), None, (), {}),
    ("debiased_std", randomized_response.debiased_std,
     (("true_fraction", PROBABILITY), ("n", COUNT), ("epsilon", REAL)), None, (), {}),
    ("above_threshold",
     lambda answer, threshold, epsilon, rng: svt.above_threshold(
         [lambda d: answer], None, threshold, epsilon, rng=rng),
     (("answer", REAL), ("threshold", REAL), ("epsilon", REAL)), None, (), {"rng": None}),
    ("sparse",
     lambda answer, threshold, epsilon, c, rng: svt.sparse(
         [lambda d: answer] * 3, None, threshold, epsilon, c, rng=rng),
     (("answer", REAL), ("threshold", REAL), ("epsilon", REAL), ("c", COUNT)), None, (),
     {"rng": None}),
    ("range_queries",
     lambda answer, c, threshold, epsilon, rng: svt.range_queries(
         [lambda d: answer] * 2, None, c, threshold, epsilon, rng=rng),
     (("answer", REAL), ("c", COUNT), ("threshold", REAL), ("epsilon", REAL)), None, (),
     {"rng": None}),
    ("choose_clip_bound",
     lambda values, epsilon, bounds, threshold, max_rows, rng: svt.choose_clip_bound(
         values, epsilon, bounds=bounds, threshold=threshold, max_rows=max_rows, rng=rng),
     (("values", ARRAY), ("epsilon", REAL), ("bounds", ARRAY), ("threshold", REAL),
      ("max_rows", COUNT)), None, (), {"rng": None}),
    ("clip_bound_runs",
     lambda values, epsilon, runs, rng: svt.clip_bound_runs(
         values, epsilon, bounds=(1, 2, 4), runs=runs, rng=rng),
     (("values", ARRAY), ("epsilon", REAL), ("runs", COUNT)), None, (), {"rng": None}),
    ("auto_avg",
     lambda values, epsilon, bounds, max_rows, rng: svt.auto_avg(
         values, epsilon, bounds=bounds, max_rows=max_rows, rng=rng),
     (("values", ARRAY), ("epsilon", REAL), ("bounds", ARRAY), ("max_rows", COUNT)), None, (),
     {"rng": None}),
    ("auto_avg_runs",
     lambda values, epsilon, runs, rng: svt.auto_avg_runs(values, epsilon, runs=runs,
                                                          bounds=(1, 2, 4), rng=rng),
     (("values", ARRAY), ("epsilon", REAL), ("runs", COUNT)), None, (), {"rng": None}),
]
# Parameters a message may name besides the fuzzed ones (an answer of a query is reported
# as ``queries[i](data)``; a budget's delta as ``delta``).
_ALIASES = {"answer": "queries", "utility_min": "utility bounds",
            "utility_max": "utility bounds", "utilities": "utility"}


@pytest.mark.parametrize(("function", "params", "check", "allowed", "extra"),
                         [s[1:] for s in SPECS], ids=[s[0] for s in SPECS])
@FUZZ
@given(data=st.data())
def test_hostile_parameters(function: Callable[..., Any], params: tuple[tuple[str, Any], ...],
                            check: Callable[[Any], None] | None,
                            allowed: tuple[type[BaseException], ...], extra: dict[str, Any],
                            data: st.DataObject) -> None:
    kwargs = {name: data.draw(strategy, label=name) for name, strategy in params}
    names = tuple(name for name, _ in params) + tuple(
        _ALIASES[n] for n, _ in params if n in _ALIASES)
    if "rng" in extra:
        kwargs["rng"] = seeded(0)
    result = _call(function, names, allowed=allowed, **kwargs)
    if result is not REFUSED and check is not None:
        check(result)


# A valid value for every fuzzed parameter: the sweep below replaces one at a time.
VALID: dict[str, Any] = {
    "sensitivity": 1.0, "epsilon": 0.5, "delta": 1e-6, "beta": 0.1, "count": 2, "value": 1.0,
    "n": 3, "sigma": 2.0, "dimension": 2, "epsilons": [0.5, 0.5], "deltas": [0.0, 0.0],
    "k": 3, "delta_prime": 1e-6, "epsilon_total": 1.0, "rho": 0.5, "x": 1, "y": 2, "z": 1,
    "utility_min": 0, "utility_max": 3, "max_outcomes": 3, "utilities": [0, 1, 2],
    "answers": np.array([True, False]), "yes_fraction": 0.5, "true_fraction": 0.5,
    "answer": 1.0, "threshold": 0.0, "c": 1, "values": [1.0, 2.0], "bounds": [1, 2, 4],
    "runs": 2, "bound": 100.0, "max_rows": 1000,
}
SWEEP_VALUES = [*HOSTILE_REALS, -1, 2**64, 10**400, 1.5, [0.0, True],
                np.array([2**64 - 1], np.uint64), np.array([1, 2], np.longdouble),
                np.array([], float), [1e308, 1e308], [[1.0], 2.0]]


@pytest.mark.parametrize(("function", "params", "check", "allowed", "extra"),
                         [s[1:] for s in SPECS], ids=[s[0] for s in SPECS])
def test_each_hostile_value_alone(function: Callable[..., Any],
                                  params: tuple[tuple[str, Any], ...],
                                  check: Callable[[Any], None] | None,
                                  allowed: tuple[type[BaseException], ...],
                                  extra: dict[str, Any]) -> None:
    """Deterministic sweep: each hostile value in each parameter, the others valid. Every
    violation is listed (a failure message is a list of minimal reproductions)."""
    names = tuple(name for name, _ in params) + tuple(
        _ALIASES[n] for n, _ in params if n in _ALIASES)
    violations = []
    for name, _ in params:
        for hostile in SWEEP_VALUES:
            kwargs = {p: VALID[p] for p, _ in params}
            kwargs[name] = hostile
            if "rng" in extra:
                kwargs["rng"] = seeded(0)
            try:
                result = _call(function, names, allowed=allowed, **kwargs)
                if result is not REFUSED and check is not None:
                    check(result)
            except BaseException as error:  # collected, reported together below
                if isinstance(error, KeyboardInterrupt):
                    raise
                violations.append(f"{name}={hostile!r:.45}: {type(error).__name__}: "
                                  f"{str(error)[:90]}")
    assert not violations, f"{len(violations)} violations:\n" + "\n".join(violations)


# ------------------------------------------------------------- exact, safe-direction checks

POSITIVE = st.one_of(st.floats(min_value=1e-300, max_value=1e300),
                     st.fractions(min_value=Fraction(1, 10**6), max_value=10**6).filter(
                         lambda f: f > 0))
EPSILON = st.one_of(st.floats(min_value=1e-6, max_value=50.0),
                    st.fractions(min_value=Fraction(1, 1000), max_value=20).filter(
                        lambda f: f > 0))


@FUZZ
@given(sensitivity=POSITIVE, epsilon=POSITIVE)
@example(sensitivity=1, epsilon=Fraction(1, 10))
def test_laplace_scale_rounds_up(sensitivity: Any, epsilon: Any) -> None:
    """``laplace_scale >= Δ/ε`` exactly (a Fraction ε included), or a clear refusal."""
    scale = _call(laplace.laplace_scale, ("sensitivity", "epsilon"), sensitivity, epsilon)
    if scale is not REFUSED:
        assert Fraction(scale) >= Fraction(sensitivity) / Fraction(epsilon)


@FUZZ
@given(sensitivity=POSITIVE, epsilon=EPSILON)
@example(sensitivity=1, epsilon=Fraction(1, 10))
def test_laplace_grid_never_spends_more_than_epsilon(sensitivity: Any, epsilon: Any) -> None:
    """The grid's exact noise scale gives at most ε: units/scale_units <= ε (finding 6)."""
    grid = _call(laplace.laplace_grid, ("sensitivity", "epsilon"), sensitivity, epsilon)
    if grid is not REFUSED:
        assert Fraction(grid.sensitivity_units) / grid.scale_units <= Fraction(epsilon)


@FUZZ
@given(sensitivity=POSITIVE, epsilon=EPSILON,
       beta=st.floats(min_value=5e-324, max_value=1.0, exclude_max=True))
@example(sensitivity=1.0, epsilon=1.0, beta=0.75)
@example(sensitivity=1.0, epsilon=1.0, beta=5e-324)
def test_laplace_accuracy_is_an_upper_bound(sensitivity: Any, epsilon: Any,
                                            beta: float) -> None:
    """``laplace_accuracy >= (Δ/ε)·ln(1/β)`` (60 digits), finite (finding 9)."""
    alpha = _call(laplace.laplace_accuracy, ("sensitivity", "epsilon", "beta"), sensitivity,
                  epsilon, beta)
    if alpha is not REFUSED:
        _finite_positive(alpha)
        exact = (mpmath.mpf(Fraction(sensitivity).numerator) / Fraction(sensitivity).denominator
                 / (mpmath.mpf(Fraction(epsilon).numerator) / Fraction(epsilon).denominator)
                 * mpmath.log(1 / mpmath.mpf(beta)))
        assert mpmath.mpf(alpha) >= exact, (alpha, exact)


@FUZZ
@given(sensitivity=st.floats(min_value=1e-6, max_value=1e6),
       epsilon=st.floats(min_value=1e-4, max_value=0.999),
       delta=st.floats(min_value=5e-324, max_value=0.5))
@example(sensitivity=1.0, epsilon=0.5, delta=1e-310)
@example(sensitivity=1.0, epsilon=0.5, delta=5e-324)
def test_classic_sigma_is_finite_and_rounds_up(sensitivity: float, epsilon: float,
                                               delta: float) -> None:
    """``classic_sigma > Δ·sqrt(2 ln(1.25/δ))/ε`` (60 digits) and finite, or a refusal
    naming delta (finding 9)."""
    sigma = _call(gaussian.classic_sigma, ("sensitivity", "epsilon", "delta"), sensitivity,
                  epsilon, delta)
    if sigma is not REFUSED:
        _finite_positive(sigma)
        exact = (mpmath.mpf(sensitivity) * mpmath.sqrt(2 * mpmath.log(1.25 / mpmath.mpf(delta)))
                 / mpmath.mpf(epsilon))
        assert mpmath.mpf(sigma) > exact


def _exact_delta(sigma: float, sensitivity: float, epsilon: float) -> mpmath.mpf:
    s, d, e = mpmath.mpf(sigma), mpmath.mpf(sensitivity), mpmath.mpf(epsilon)
    return (mpmath.ncdf(d / (2 * s) - e * s / d)
            - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d))


@FUZZ
@given(sigma=st.floats(min_value=0.05, max_value=100.0),
       epsilon=st.floats(min_value=1e-4, max_value=20.0))
def test_delta_for_sigma_rounds_up_within_its_stated_error(sigma: float,
                                                           epsilon: float) -> None:
    """Never below the exact δ; excess below the documented 2e-8 (ε >= 0.01) or 1e-7
    (ε >= 1e-4) relative (finding 8)."""
    delta = gaussian.delta_for_sigma(sigma, 1.0, epsilon)
    exact = _exact_delta(sigma, 1.0, epsilon)
    if exact < 1e-300:
        return
    assert mpmath.mpf(delta) >= exact
    bound = 2e-8 if epsilon >= 0.01 else 1e-7
    assert (mpmath.mpf(delta) - exact) / exact < bound, float((delta - exact) / exact)


@FUZZ
@given(spends=st.lists(st.fractions(min_value=Fraction(1, 50), max_value=1,
                                    max_denominator=50),
                       min_size=1, max_size=8),
       last=st.floats(min_value=5e-324, max_value=1e-12))
@example(spends=[Fraction(1, 3)] * 3, last=5e-17)
def test_accountant_never_exceeds_an_exact_budget(spends: list[Fraction], last: float) -> None:
    """The exact sum of the accepted epsilons never exceeds the budget (finding 6)."""
    budget = Accountant(1.0)
    accepted = Fraction(0)
    for epsilon in [*spends, last]:
        try:
            budget.spend(epsilon)
        except BudgetExceeded:
            continue
        accepted += Fraction(epsilon)
    assert accepted <= 1, f"accepted {accepted} = {float(accepted)!r} > budget 1"


@FUZZ
@given(threshold=st.one_of(st.floats(min_value=-1e30, max_value=-1e3),
                           st.integers(min_value=-(2**100), max_value=-1000)))
@example(threshold=-(2**44))
@example(threshold=-1e20)
def test_far_threshold_is_passed_at_once(threshold: Any) -> None:
    """A threshold far below every query makes the first candidate pass (its failure
    probability is below exp(-200)); an int64 overflow must not turn that into None or a
    bare OverflowError (finding 4). A refusal naming threshold is also acceptable."""
    chosen = _call(svt.choose_clip_bound, ("threshold",), [1, 2, 3], 1.0, bounds=[1, 2, 3],
                   threshold=threshold, rng=seeded(0))
    refused = chosen is REFUSED
    assert refused or chosen == 1, chosen
    runs = _call(svt.clip_bound_runs, ("threshold",), [1, 2, 3], 1.0, bounds=[1, 2, 3],
                 runs=64, threshold=threshold, rng=seeded(1))
    if runs is not REFUSED:
        assert runs == [1] * 64, f"{runs.count(None)} of 64 runs returned None"
    elif not refused:
        pytest.fail("choose_clip_bound accepted the threshold but clip_bound_runs refused it")


# ----------------------------------------------------------------- Eta: no hang, no overflow

def _eta_worker(x: int, y: int, z: int, pipe: Any) -> None:
    try:
        eta = Eta(x, y, z)
        eta.reduced()
        pipe.send(("accepted", eta.epsilon(1), eta.eta))
    except Exception as error:  # the parent judges the type and message
        pipe.send((type(error).__name__, str(error), None))


def _eta_outcome(x: int, y: int, z: int, seconds: float = 3.0) -> tuple[str, Any, Any]:
    """Build ``Eta(x, y, z)`` and use it in a forked child (big-integer powers cannot be
    interrupted in-process); ``("hang", ...)`` if it does not finish in time."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_eta_worker, args=(x, y, z, child))
    process.start()
    ready = parent.poll(seconds)
    outcome = parent.recv() if ready else ("hang", None, None)
    if process.is_alive():
        process.kill()
    process.join()
    return outcome


@pytest.mark.parametrize(("x", "y", "z"), [(3, 2, 10**400), (3, 2, 10**8), (1, 10**6, 10**6),
                                           (1, 1, 1), (3, 2, 7)],
                         ids=["3-2-10**400", "3-2-10**8", "1-10**6-10**6", "1-1-1", "3-2-7"])
def test_eta_refused_or_usable(x: int, y: int, z: int) -> None:
    """An accepted Eta must be usable (finite ε, η; no hang); otherwise the constructor
    refuses it with a message naming the parameter (finding 10)."""
    kind, first, second = _eta_outcome(x, y, z)
    if kind == "accepted":
        assert math.isfinite(first) and math.isfinite(second), (first, second)
        return
    assert kind in ("ValueError", "TypeError"), f"{kind}: {first}"
    assert any(name in first for name in ("x", "y", "z")), first
