"""Exactness at the edges of dpkit.svt (issue 9, findings 4 and 5, and float64-exactness).

Each test here failed on main before the fix it guards:

* a public threshold beyond int64's reach overflowed silently in the vectorised runs of
  AboveThreshold (``choose_clip_bound`` returned ``None`` in about half the runs) or raised a
  bare ``OverflowError``;
* ``auto_avg``'s clipped sum, summed with ``math.fsum``, moved by ``b + 1`` when one row of
  value ``b`` was added (rounding is not shift-invariant);
* values that float64 cannot hold were rounded silently.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import dpkit._exact as exact
import dpkit.svt as svt
from dpkit.rng import seeded
from dpkit.svt import above_threshold, auto_avg, choose_clip_bound, clip_bound_runs, clipping, core
from dpkit.svt.clipping import DEFAULT_MAX_ROWS as ROWS

# ------------------------------------------------------------- finding 4: int64 overflow


@pytest.mark.parametrize("threshold", [-2**44, -2**62, -1e20, -10**40, Fraction(-10**30, 7)])
def test_a_far_lower_threshold_is_passed_by_the_first_candidate(threshold):
    # Every query (between -3 and 0) is far above the threshold; with noise scales 2 and 4
    # the first candidate fails only if a noise gap of more than 2**40 occurs: probability
    # below exp(-2**37) per run. Main returned None in about half the runs at -2**44
    # (int64 wrap-around) and raised OverflowError at -1e20.
    for seed in range(10):
        assert choose_clip_bound([1, 2, 3], 1, bounds=[1, 2, 3], threshold=threshold,
                                 rng=seeded(seed)) == 1
    assert clip_bound_runs([1, 2, 3], 1, bounds=[1, 2, 3], threshold=threshold, runs=50,
                           rng=seeded(1)) == [1] * 50


@pytest.mark.parametrize("threshold", [2**44, 2**62, 1e20])
def test_a_far_higher_threshold_is_passed_by_no_candidate(threshold):
    # The mirror image: no query can reach it (same probability bound).
    assert clip_bound_runs([1, 2, 3], 1, bounds=[1, 2, 3], threshold=threshold, runs=20,
                           rng=seeded(2)) == [None] * 20


def test_first_passes_takes_the_exact_path_for_a_large_threshold(monkeypatch):
    calls = []
    real = core._svt

    def exact(*args):
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(core, "_svt", exact)
    core.first_passes([0, -1, -2], -2**61, Fraction(1), 3, seeded(0), bound=2)
    assert calls == [-2**61] * 3
    calls.clear()
    core.first_passes([0, -1, -2], -2**61 + 1, Fraction(1), 3, seeded(0), bound=2)
    assert calls == []  # int64 is exact below 2**61


# ------------------------------------------------------- finding 5: the clipped sum


def test_clipped_sum_moves_by_at_most_b_where_fsum_moves_by_b_plus_one():
    # Issue 9's example: b = 2**39 + 2**19 - 1 and 32,768 rows equal to b (exact sum
    # 2**54 + 2**34 - 2**15, a float); one more row of b gives an exact sum that is 3 mod 4
    # where floats are spaced by 4, so the correctly rounded fsum moves by b + 1.
    b = float(2**39 + 2**19 - 1)
    small = np.full(32768, b)
    large = np.full(32769, b)
    assert math.fsum(large) - math.fsum(small) == b + 1  # the old computation's excess
    total_small, ceiling, k = clipping._clipped_sum_units(small, b, Fraction(1, 3), ROWS)
    total_large, ceiling_large, k_large = clipping._clipped_sum_units(large, b, Fraction(1, 3),
                                                                      ROWS)
    assert (ceiling, k) == (ceiling_large, k_large)
    assert Fraction(ceiling) * Fraction(2) ** k <= Fraction(b)  # sensitivity <= b
    assert 0 <= total_large - total_small <= ceiling


@pytest.mark.parametrize("bound", [1.0, 3.0, 90.0, 99999.0, float(2**40), 0.1, 1e-300])
def test_clipped_sum_units_are_floors_on_the_grid(bound):
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.uniform(-bound, 2 * bound, 500), [0.0, bound, 5e-324]])
    total, ceiling, k = clipping._clipped_sum_units(data, bound, Fraction(1, 3), ROWS)
    step = Fraction(2) ** k
    assert step <= Fraction(bound) / 2**20
    expected = sum(math.floor(Fraction(min(max(v, 0.0), bound)) / step) for v in data)
    assert total == expected
    assert ceiling == math.floor(Fraction(bound) / step)
    # Adding any one row moves the total by at most the ceiling.
    for extra in (bound, 2 * bound, bound / 3, -1.0):
        more, _, _ = clipping._clipped_sum_units(np.append(data, extra), bound, Fraction(1, 3),
                                                 ROWS)
        assert 0 <= more - total <= ceiling


def test_auto_avg_releases_the_integer_grid_sum(monkeypatch):
    seen = []
    real = clipping.release_on_grid

    def release(units, sensitivity_units, epsilon, k, rng, size):
        seen.append((units, sensitivity_units, k))
        return real(units, sensitivity_units, epsilon, k, rng, size)

    b = float(2**39 + 2**19 - 1)
    # once before recording: the first call in a process runs the warm-up's releases first
    # (breaker review 35: alone, this test recorded a warm-up's sum)
    auto_avg(np.full(32769, b), 1.0, bounds=[b], rng=seeded(0))
    monkeypatch.setattr(clipping, "release_on_grid", release)
    auto_avg(np.full(32769, b), 1.0, bounds=[b], rng=seeded(0))
    assert seen[0] == clipping._clipped_sum_units(np.full(32769, b), b, Fraction(1, 3), ROWS)
    assert seen[1] == (32769, 1, 0)


# --------------------------------------------- values float64 cannot hold exactly


@pytest.mark.parametrize("bound", [2**53 + 1, Fraction(1, 3)])
def test_bounds_float64_cannot_hold_are_refused(bound):
    with pytest.raises(ValueError, match=r"bounds\[1\]"):
        choose_clip_bound([1.0, 2.0], 1.0, bounds=[0.5, bound])
    with pytest.raises(ValueError, match=r"bounds\[1\]"):
        auto_avg([1.0, 2.0], 1.0, bounds=[0.5, bound])


def test_integer_and_fraction_answers_are_compared_exactly():
    # ε = 2**60: noise scales 2**-59 and 2**-58, so the comparison is decided by the exact
    # gap of 1/4 (a noise gap that large has probability below exp(-2**55)). Rounded to
    # float64, 2**62 + 1 becomes 2**62 and would fail.
    threshold = 2**62 + Fraction(3, 4)
    for answer in (2**62 + 1, Fraction(2**64 + 4, 4)):
        assert above_threshold([lambda d, a=answer: a], None, threshold, 2.0**60,
                               rng=seeded(0)) == 0


def _refuses(check, value):
    try:
        check(value)
    except (TypeError, ValueError):
        return True
    return False


def test_long_double_answers_are_exact_or_refused():
    # np.longdouble(2**62) + 1 is exact in x87 extended precision, not in float64.
    answer = np.longdouble(2**62) + 1
    if Fraction(float(answer)) == Fraction(2**62 + 1):
        pytest.skip("np.longdouble is float64 on this platform")
    query = [lambda d: answer]
    try:
        found = above_threshold(query, None, 2**62 + Fraction(3, 4), 2.0**60, rng=seeded(0))
    except (TypeError, ValueError) as error:
        assert "queries[0](data)" in str(error)
    else:
        assert exact.as_fraction(answer, "x") == 2**62 + 1  # compared exactly
        assert found == 0


@pytest.mark.parametrize(("extra", "same_as"), [
    (np.int64(2**53 + 1), 201.0), (2**53, 201.0), (2**53 + 1, 201.0), (2**60 + 1, 201.0),
    (10**400, 201.0), (-(10**400), 0.0), (Fraction(10**400, 3), 201.0),
    (Fraction(1, 3), 1 / 3), (Decimal("1e400"), 201.0), (np.longdouble(2**62) + 1, 201.0),
], ids=["int64-2**53+1", "2**53", "2**53+1", "2**60+1", "10**400", "-10**400", "10**400/3",
        "1/3", "Decimal-1e400", "longdouble-2**62+1"])
def test_every_finite_row_is_clipped_not_refused(extra, same_as):
    # Break 3: [30.0]*100 + [2**53] was released while + [2**53 + 1] raised ValueError, so
    # the error revealed the row. Every finite row is now clipped exactly: one beyond
    # max(bounds) + 1 = 201 gives exactly the release of the row 201.0 (same seed).
    data = [30.0] * 100
    bounds = list(range(1, 201))
    assert choose_clip_bound([*data, extra], 1.0, bounds=bounds, rng=seeded(3)) \
        == choose_clip_bound([*data, same_as], 1.0, bounds=bounds, rng=seeded(3))
    assert auto_avg([*data, extra], 1.0, bounds=bounds, rng=seeded(4)) \
        == auto_avg([*data, same_as], 1.0, bounds=bounds, rng=seeded(4))
    assert auto_avg(np.array([*data, extra], dtype=object), 1.0, bounds=bounds,
                    rng=seeded(4)) == auto_avg([*data, same_as], 1.0, bounds=bounds,
                                               rng=seeded(4))


@pytest.mark.parametrize(("bad", "error"), [
    (float("nan"), ValueError), (math.inf, ValueError), (Decimal("-inf"), ValueError),
    (True, TypeError), ("30", TypeError), (None, TypeError),
])
def test_rows_outside_the_domain_are_still_refused(bad, error):
    # The input domain (finite real numbers) is the caller's precondition; the error names
    # the parameter and the row.
    with pytest.raises(error, match=r"values.*index 2"):
        choose_clip_bound([1.0, 2.0, bad], 1.0, bounds=[1, 2])
    with pytest.raises(error, match=r"values.*index 2"):
        auto_avg(np.array([1.0, 2.0, bad], dtype=object), 1.0)


# ------------------------------------------- parameter ranges (the fuzz harness's findings)


@pytest.mark.parametrize("answer", [10**400, -(10**400), Fraction(10**400, 3), 2**1000 + 1],
                         ids=["10**400", "-10**400", "10**400/3", "2**1000+1"])
def test_range_queries_refuses_an_answer_whose_release_is_not_a_float(answer, monkeypatch):
    # Main raised a bare OverflowError converting the noisy answer. The refusal must come
    # from the answer alone: it is raised before any noise for that query is drawn.
    drawn = []
    real = core._discrete_laplace_block
    monkeypatch.setattr(core, "_discrete_laplace_block",
                        lambda *args: drawn.append(args) or real(*args))
    # (10**400, of 1,329 bits, is refused as longer than MAX_EXACT_BITS = 1,200 bits.)
    with pytest.raises(ValueError, match=r"queries\[0\]\(data\) must be (at most 2\*\*1000|"
                                         r"an exact number whose numerator and denominator "
                                         r"have at most 1200 bits)"):
        svt.range_queries([lambda d: answer] * 2, None, 1, 0.0, 0.5, rng=seeded(0))
    assert drawn == []


def test_range_queries_releases_an_answer_at_the_limit():
    # 2**1000 is accepted; with noise scale 4 the release is 2**1000 as a float (the noise is
    # far below half an ulp of 2**1000).
    released = svt.range_queries([lambda d: 2**1000], None, 1, 0.0, 0.5, rng=seeded(0))
    assert released == [(0, float(2**1000))]


@pytest.mark.parametrize("bounds", [np.array(1.0), np.array([[1.0, 2.0]])])
def test_bounds_must_be_one_dimensional(bounds):
    # Main raised numpy's "iteration over a 0-d array", naming no parameter.
    with pytest.raises(ValueError, match=r"bounds must be a one-dimensional.*shape"):
        choose_clip_bound([1.0, 2.0], 1.0, bounds=bounds)
    with pytest.raises(ValueError, match=r"bounds must be a one-dimensional.*shape"):
        auto_avg([1.0, 2.0], 1.0, bounds=bounds)


@pytest.mark.parametrize("runs", [svt.MAX_RUNS + 1, 2**53 + 1, 10**44, np.int64(2**62),
                                  np.uint64(2**64 - 1)],
                         ids=["MAX_RUNS+1", "2**53+1", "10**44", "int64", "uint64"])
def test_runs_above_the_maximum_are_refused(runs):
    # Main tried to allocate the bulk noise: MemoryError or numpy's dimension error.
    match = rf"runs must be an integer in \[1, {svt.MAX_RUNS}\]"
    with pytest.raises(ValueError, match=match):
        clip_bound_runs([1.0], 1.0, bounds=[1, 2], runs=runs)
    with pytest.raises(ValueError, match=match):
        svt.auto_avg_runs([1.0], 1.0, bounds=[1, 2], runs=runs)
    with pytest.raises(ValueError, match=match):
        svt.above_threshold_runs([0.0], 0.0, 1.0, runs=runs)


@pytest.mark.parametrize("epsilon", [2**53 + 1, np.int64(2**62), 2**65],
                         ids=["2**53+1", "int64-2**62", "2**65"])
def test_a_large_epsilon_keeps_every_noise_scale_at_least_one_grid_unit(epsilon, monkeypatch):
    # Main released the count with noise scale 3/ε on the integers and the sum on a grid
    # b·2**-20: at ε = 2**53 the scales were about 2**-51 grid units, where the exact
    # sampler's set-up cost explodes (the fuzz harness's 5 s hang).
    scales = []
    real = core.discrete_laplace

    def record(scale, rng, size=None):
        scales.append(Fraction(scale))
        return real(scale, rng, size=size)

    monkeypatch.setattr(core, "discrete_laplace", record)
    # Noise of a few grid units, far below 1e-9 here (the grids are finer than 2**-50).
    assert abs(auto_avg([1.0, 2.0], epsilon, bounds=[1, 2, 4], rng=seeded(0)) - 1.5) < 1e-9
    assert len(scales) == 4 and min(scales) >= 1  # threshold, queries, sum, count
    scales.clear()
    assert svt.range_queries([lambda d: 7], None, 1, 0, epsilon, rng=seeded(0)) == [(0, 7.0)]
    assert min(scales) >= 1


def test_auto_avg_rounds_a_ratio_beyond_the_float_range_to_inf():
    # b = 1e308 and three rows of 1e308: the noisy sum often exceeds the float range. Main
    # raised OverflowError (an error depending on the noise); the exact ratio is rounded
    # once, overflowing to ±inf as IEEE 754 does, and never NaN.
    results = [auto_avg([1e308] * 3, 1.0, bounds=[1e308], rng=seeded(s)) for s in range(5)]
    assert all(not math.isnan(r) for r in results)
    assert all(math.isinf(r) or abs(r) <= 1.8e308 for r in results)
