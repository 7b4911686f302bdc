"""Tests of Mironov's snapping mechanism (:mod:`dpkit.snapping`).

Statistical tests use fixed seeds; each states its false-failure probability (at most 1e-6
for a correct implementation). Each was checked to fail on a deliberately broken variant
(no rounding to Λ, floor instead of nearest, a 53-bit uniform, a textbook sampler): see
the note in each test.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from scipy import stats

from dpkit.attacks import ReachableOnly, measure_lsb_attack
from dpkit.audit import epsilon_lower_bound
from dpkit.rng import seeded
from dpkit.snapping import (
    _correctly_rounded_log,
    _uniform_double,
    snapping_epsilon,
    snapping_grid,
    snapping_mechanism,
)
from dpkit.timing import unpadded

FAIL = 1e-6   # false-failure probability of every statistical test below


def _up(exact: Fraction) -> float:
    """The smallest float >= exact (hand-written, independent of the module)."""
    nearest = float(exact)
    return nearest if Fraction(nearest) >= exact else math.nextafter(nearest, math.inf)


# ------------------------------------------------------------------ the certified ε

@pytest.mark.parametrize(("sensitivity", "epsilon", "bound", "exact"), [
    # 1/λ + 2**-49·B/λ with λ = 1/ε (sensitivity 1): 0.5 + 2**-49·1000/2
    (1.0, 0.5, 1000.0, Fraction(1, 2) + Fraction(500, 2**49)),
    # 1 + 2**20·2**-49 = 1 + 2**-29, a float: no rounding at all
    (1.0, 1.0, 2.0**20, 1 + Fraction(1, 2**29)),
    # Δ = 3 runs in units of s = 4: λ₁ = 1/0.25 = 4, B₁ = 10000/4 = 2500
    (3.0, 0.25, 10_000.0, Fraction(1, 4) + Fraction(2500, 4 * 2**49)),
    # Δ = 0.5 = s: B₁ = 2·B = 200
    (0.5, 2.0, 100.0, Fraction(2) + Fraction(200 * 2, 2**49)),
])
def test_certified_epsilon_matches_hand_computation(sensitivity, epsilon, bound, exact):
    certified = snapping_epsilon(sensitivity, epsilon, bound)
    assert certified == _up(exact)
    assert Fraction(certified) >= exact > Fraction(math.nextafter(certified, 0))


def test_certified_epsilon_rounds_the_scale_up_for_an_inexact_inverse():
    # 1/0.1 (the float) is 9.99999999999999944...: λ₁ is the next float up, 10.0, so the
    # certified ε uses 1/λ₁ = 1/10, at most the float 0.1 asked for, plus 2**-49·B/λ₁.
    grid = snapping_grid(1.0, 0.1, 1000.0)
    assert grid.scale == 10.0 and grid.step == 16.0
    assert grid.epsilon == _up(Fraction(1, 10) + Fraction(100, 2**49))
    # 1/3 (the float) has 1/ε = 3.0000000000000002 exactly representable? it is not: up.
    third = snapping_grid(1.0, 1 / 3, 100.0)
    assert Fraction(third.scale) >= 1 / Fraction(1 / 3)
    assert Fraction(math.nextafter(third.scale, 0)) < 1 / Fraction(1 / 3)
    assert third.step == 4.0


def test_grid_in_query_units():
    grid = snapping_grid(3.0, 0.25, 10_000.0)
    assert (grid.unit, grid.scale, grid.step, grid.bound) == (4.0, 16.0, 16.0, 10_000.0)
    grid = snapping_grid(1.0, 0.3, 1000.0)         # λ = 3.33…, Λ = 4
    assert grid.step == 4.0 and 3.3 < grid.scale < 3.4


# ------------------------------------------------------------------ refusals

@pytest.mark.parametrize(("bound", "fragment"), [
    (2.0, "got bound=2.0"),                      # B = λ: the theorem needs λ < B
    (1.5, "got bound=1.5"),
    (2.0 * 2**46, "got bound=140737488355328.0"),  # B = 2**46·λ is refused too
    (0.0, "bound must be a finite number > 0, got bound=0.0"),
    (-5.0, "bound must be a finite number > 0, got bound=-5.0"),
])
def test_bound_outside_the_theorem_is_refused(bound, fragment):
    with pytest.raises(ValueError, match="bound") as caught:
        snapping_epsilon(1.0, 0.5, bound)
    assert fragment in str(caught.value)
    if bound > 0:
        assert "valid range (2.0, 140737488355328.0)" in str(caught.value)
    with pytest.raises(ValueError, match="bound"):
        snapping_mechanism(0.0, 1.0, 0.5, bound, rng=seeded(0))


def test_bounds_just_inside_the_theorem_are_accepted():
    assert snapping_epsilon(1.0, 0.5, math.nextafter(2.0, 3.0)) > 0.5
    assert snapping_epsilon(1.0, 0.5, math.nextafter(2.0**47, 0.0)) < 0.5 + 2.0**-3 + 1e-12


@pytest.mark.parametrize(("kwargs", "error", "fragment"), [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": math.nan}, ValueError, "epsilon"),
    ({"sensitivity": -1.0}, ValueError, "sensitivity"),
    ({"sensitivity": math.inf}, ValueError, "sensitivity"),
    ({"bound": math.nan}, ValueError, "bound"),
    ({"bound": "10"}, TypeError, "bound"),
    ({"value": math.nan}, ValueError, "value"),
    ({"value": []}, ValueError, "value"),
    ({"value": Fraction(1, 3)}, ValueError, "value must be exactly a float64"),
    ({"value": [0.5, Decimal("0.1")]}, ValueError, "value must be exactly a float64"),
    ({"value": True}, TypeError, "value"),
])
def test_invalid_parameters_are_refused(kwargs, error, fragment):
    args = {"value": 1.0, "sensitivity": 1.0, "epsilon": 0.5, "bound": 1000.0} | kwargs
    with pytest.raises(error, match=fragment):
        snapping_mechanism(args.pop("value"), **args, rng=seeded(0))


def test_exact_values_beyond_the_bound_are_clamped_exactly():
    with unpadded():
        out = snapping_mechanism([Fraction(10**30, 3), -(2**80 + 1), Decimal("1e5")], 1.0,
                                 1.0, 1000.0, rng=seeded(1))
    assert out.dtype == np.float64 and np.all(np.abs(out) <= 1000.0)


# ------------------------------------------------------------------ the output set

@pytest.mark.parametrize(("sensitivity", "epsilon", "bound"), [
    (1.0, 1.0, 10.5),       # B is not a multiple of Λ = 1: outputs are integers or ±10.5
    (3.0, 0.7, 60.0),       # s = 4, λ = 5.71…, Λ = 8
    (0.01, 50.0, 0.1),      # s = 2**-6, Λ = 2**-12
])
def test_outputs_are_multiples_of_step_within_bound(sensitivity, epsilon, bound):
    """Fails without the rounding to Λ (checked: ``no_rounding`` variant)."""
    grid = snapping_grid(sensitivity, epsilon, bound)
    values = np.array([0.0, 0.3, -0.3, 5e-324, -5e-324, 1e300, -1e300, bound,
                       math.nextafter(bound, 0), 0.1 * bound, -0.7 * bound])
    with unpadded():
        out = np.concatenate([snapping_mechanism(values, sensitivity, epsilon, bound,
                                                 rng=seeded(seed)) for seed in range(60)])
    assert np.all(np.abs(out) <= bound)
    on_grid = np.array([Fraction(x) % Fraction(grid.step) == 0 for x in out])
    assert np.all(on_grid | (np.abs(out) == bound))
    assert len(np.unique(out)) > 5             # not a constant


def test_scalar_and_array_shapes():
    with unpadded():
        scalar = snapping_mechanism(3, 1.0, 1.0, 100.0, rng=seeded(2))
        matrix = snapping_mechanism(np.zeros((2, 3)), 1.0, 1.0, 100.0, rng=seeded(2))
        listed = snapping_mechanism([1.0, 2.0], 1.0, 1.0, 100.0, rng=seeded(2))
    assert isinstance(scalar, float)
    assert matrix.shape == (2, 3) and matrix.dtype == np.float64
    assert listed.shape == (2,)


def test_seeded_releases_repeat():
    with unpadded():
        first = snapping_mechanism(np.zeros(20), 1.0, 1.0, 100.0, rng=seeded(9))
        again = snapping_mechanism(np.zeros(20), 1.0, 1.0, 100.0, rng=seeded(9))
    assert np.array_equal(first, again)


# ------------------------------------------------------------------ the distribution

def _ideal(value: float, scale: float, step: float, bound: float, support: np.ndarray
           ) -> np.ndarray:
    """P[round_Λ(value + Laplace(scale)) = k·Λ] for each k in ``support`` (ties have
    probability 0), with the two tails folded into the first and last cells."""
    def cdf(t: np.ndarray) -> np.ndarray:
        return np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0) / scale),
                        1 - 0.5 * np.exp(-np.maximum(t, 0) / scale))
    lower = cdf(support * step - step / 2 - value)
    upper = cdf(support * step + step / 2 - value)
    probabilities = upper - lower
    probabilities[0] += lower[0]
    probabilities[-1] += 1 - upper[-1]
    return probabilities


@pytest.mark.parametrize(("value", "epsilon"), [(0.0, 1.0), (0.3, 1.0), (-2.7, 0.8)])
def test_distribution_matches_rounded_laplace(value, epsilon):
    """Chi-square test of the counts of each multiple of Λ against the exact probabilities
    of the rounded Laplace distribution (B = 1000 makes clamping invisible: its probability
    is below e**-900). Floating-point rounding moves each probability by about 2**-50,
    far below what 20,000 draws can see. False failure: 1e-6.

    Fails (checked) with floor instead of round-to-nearest, with noise of the wrong scale,
    and without the random sign."""
    n, bound = 20_000, 1000.0
    grid = snapping_grid(1.0, epsilon, bound)
    with unpadded():
        out = snapping_mechanism(np.full(n, value), 1.0, epsilon, bound, rng=seeded(11))
    units = np.round(out / grid.step).astype(int)
    centre = round(value / grid.step)
    support = centre + np.arange(-4, 5)
    counts = np.array([np.sum(np.clip(units, support[0], support[-1]) == k) for k in support])
    expected = n * _ideal(value, grid.scale, grid.step, bound, support)
    assert expected.min() > 5
    statistic = float(np.sum((counts - expected) ** 2 / expected))
    assert statistic < stats.chi2.isf(FAIL, df=support.size - 1), (counts, expected)


def test_uniform_double_covers_all_doubles_in_proportion_to_their_ulp():
    """U* is uniform on (0, 1) (Kolmogorov–Smirnov) *and* uses the full exponent range:
    in [1/4, 1/2) half the draws have a last bit of weight 2**-54, which no multiple of
    2**-53 has. Fails (checked) with the 53-bit uniform ``bits(53)·2**-53``. False failure:
    1e-6 for each of the two tests."""
    source = seeded(21)
    draws = np.array([_uniform_double(source) for _ in range(20_000)])
    assert np.all((draws > 0) & (draws < 1))
    statistic = stats.kstest(draws, "uniform").statistic
    assert statistic < stats.kstwo(n=draws.size).isf(FAIL)
    quarter = draws[(draws >= 0.25) & (draws < 0.5)]
    fine = int(np.sum(np.mod(quarter, 2.0**-53) != 0))
    low, high = stats.binom.ppf([FAIL / 2, 1 - FAIL / 2], quarter.size, 0.5)
    assert low <= fine <= high
    tiny = np.sum(draws < 2.0**-10)              # P = 2**-10: the exponent is geometric
    assert stats.binom.sf(tiny - 1, draws.size, 2.0**-10) > FAIL / 2
    assert stats.binom.cdf(tiny, draws.size, 2.0**-10) > FAIL / 2


def test_uniform_double_reaches_subnormals_when_all_exponent_bits_are_zero():
    class Zeros:
        def bits(self, k: int) -> int:
            self.calls = getattr(self, "calls", 0) + 1
            return 0 if self.calls < 3 else 5   # 1022 zero bits, then mantissa 0 (redrawn)

    u = _uniform_double(Zeros())        # type: ignore[arg-type]
    assert u == 5 * 2.0**-1074


def test_log_is_correctly_rounded():
    """LN(u) equals ln(u) computed with 300 bits and rounded once to the nearest double.
    Fails (checked) with the product log2(u)·ln 2 in floating point."""
    source = seeded(4)
    wide = gmpy2.context(precision=300)
    for _ in range(3000):
        u = _uniform_double(source)
        exact = Fraction(*wide.log(u).as_integer_ratio())
        assert _correctly_rounded_log(u) == float(exact)
    assert _correctly_rounded_log(math.nextafter(1.0, 0)) == -(2.0**-53)


# ------------------------------------------------------------------ the attack

def _snap(value: float, sensitivity: float, epsilon: float, *, rng):
    return snapping_mechanism(value, sensitivity, epsilon, 1000.0, rng=rng)


def test_lsb_attack_is_no_better_than_the_certified_bound():
    """Mironov's LSB attack (dpkit.attacks.laplace), run on 1,500 releases from input 0 and
    1,500 from input 1 at ε = 0.5: its accuracy (a coin flip when undecided) is a mean of
    3,000 independent scores in [0, 1], so by Hoeffding it exceeds its expectation, at most
    e**ε'/(1 + e**ε') for an ε'-DP mechanism, by sqrt(ln(1e6)/6000) ≈ 0.048 with
    probability at most 1e-6.

    Fails (checked): without the rounding to Λ (accuracy ≈ 0.70) and with the textbook
    sampler without rounding (≈ 0.82), against a threshold of about 0.67."""
    epsilon, n = 0.5, 1500
    certified = snapping_epsilon(1.0, epsilon, 1000.0)
    with unpadded():
        result = measure_lsb_attack(_snap, 1.0, epsilon, n=n, rng=seeded(5))
    allowed = math.exp(certified) / (1 + math.exp(certified))
    assert result.accuracy <= allowed + math.sqrt(math.log(1 / FAIL) / (4 * n)), result


@pytest.mark.parametrize("event_name", ["reachable only from 0", "bits below 2**-53"])
def test_audit_with_low_bit_events_certifies_no_more_than_claimed(event_name):
    """The audit of dpkit.audit with an event that looks at the low-order bits: "reachable
    by the textbook sampler from 0 only" (the LSB attack's event) and "|y| < 1/2 and y not
    a multiple of 2**-53" (no release from 1 by the float sum 1 + noise can be one).
    Clopper–Pearson at confidence 1 - 1e-6: a bound above the certified ε has probability
    at most 1e-6. Fails (checked) on the variants without rounding to Λ."""
    epsilon = 1.0
    if event_name == "reachable only from 0":
        event = ReachableOnly(0.0, 1.0, sensitivity=1.0, epsilon=epsilon)
    else:
        def event(y: float) -> bool:
            return abs(y) < 0.5 and y % 2.0**-53 != 0
    with unpadded():
        bound = epsilon_lower_bound(
            lambda value, source: _snap(value, 1.0, epsilon, rng=source), 0.0, 1.0, event,
            n=2000, confidence=1 - FAIL, rng=seeded(8))
    assert bound <= snapping_epsilon(1.0, epsilon, 1000.0)
