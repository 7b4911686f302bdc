"""dpkit.svt applications: auto_avg and range_queries on the Adult data; budget accounting.

Statistical tests use fixed seeds and state their false-failure probability (<= 1e-6).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

import mpmath as mp
import numpy as np
import pytest
from myst_text import exercise_text  # tests/ is on sys.path under pytest

import dpkit.naive
from dpkit.datasets import load_adult
from dpkit.rng import seeded
from dpkit.svt import above_threshold_runs, auto_avg, auto_avg_runs, clipping, range_queries, ranges


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_auto_avg_on_adult_age_is_within_half_a_year_at_epsilon_1(adult):
    """20 seeds, each within 0.5 of the true mean age 38.58.

    Error budget at ε = 1 (each step ε/3: threshold -60, threshold noise scale 6, query
    noise scale 12; n = 32,561):
    * the bound b is chosen <= 70 only if some query with >= 540 people above it passes:
      probability <= 70 · (2/3)e**(-(540 - 60)/12) < 2e-16; then the clipping bias is
      <= 0.09;
    * it overshoots past b = 189 only if the next 100 candidates after 90 all fail:
      E[F_ν(ρ - 60)**100] = 1.8e-8 (numerical integration over the threshold noise);
    * the count noise (scale 3) stays within 62 and, for b <= 189, the sum noise (scale
      <= 567) within the remaining slack with probability >= 1 - 5e-9.
    So one seed misses by more than 0.5 with probability <= 2.3e-8; twenty: <= 4.6e-7.
    """
    ages = adult["age"].to_numpy(dtype=np.float64)
    truth = ages.mean()
    results = [auto_avg(ages, 1.0, rng=seeded(seed)) for seed in range(20)]
    assert all(abs(r - truth) <= 0.5 for r in results), results


def test_auto_avg_spends_a_third_each_with_the_right_sensitivities(monkeypatch):
    calls = []
    real_release, real_runs = clipping.release_on_grid, clipping._clip_bound_runs

    def release(units, sensitivity_units, epsilon, k, rng, size):
        calls.append(("release", Fraction(sensitivity_units) * Fraction(2) ** k, epsilon))
        return real_release(units, sensitivity_units, epsilon, k, rng, size)

    def runs(values, epsilon, bounds, threshold, count, rng, max_rows):
        calls.append(("svt", None, epsilon))
        return real_runs(values, epsilon, bounds, threshold, count, rng, max_rows)

    monkeypatch.setattr(clipping, "release_on_grid", release)
    monkeypatch.setattr(clipping, "_clip_bound_runs", runs)
    values = np.array([1.0, 2.0, 3.0] * 300)
    for epsilon in (1.0, 0.1, 0.3, 7.0):
        calls.clear()
        auto_avg(values, epsilon, bounds=[1, 2, 3, 4], rng=seeded(0))
        kinds = [c[0] for c in calls]
        assert kinds == ["svt", "release", "release"]
        assert all(c[2] == Fraction(epsilon) / 3 for c in calls)     # exact equal thirds
        assert calls[2][1] == 1                                        # count: sensitivity 1
        assert 0.99 < calls[1][1] / 4 <= 1 or calls[1][1] in (1, 2, 3)  # sum: <= b, ~b


def test_auto_avg_falls_back_to_the_largest_candidate():
    # Every value is 10**6 and the candidates stop at 3: no query can pass (each is
    # -1000, the threshold -60: a noise gap of 940 at scales 6 and 12 has probability
    # < e**-78), so the values are clipped at 3 and the average is 3 up to noise of scale
    # 9/1000 on the sum's side and 3/1000 relative on the count's (> 0.5 off: < e**-50).
    values = np.full(1000, 1e6)
    for seed in range(3):
        assert abs(auto_avg(values, 1.0, bounds=[1, 2, 3], rng=seeded(seed)) - 3) < 0.5


def test_auto_avg_can_return_the_bound_it_used():
    """return_bound=True adds step 1's bound (or the fallback) to the same release: the
    average is the one the plain call returns with the same source."""
    values = np.array([30.0, 40.0, 50.0] * 1000)
    average, bound = auto_avg(values, 1.0, rng=seeded(4), return_bound=True)
    assert average == auto_avg(values, 1.0, rng=seeded(4))
    assert bound in clipping.DEFAULT_CLIP_BOUNDS and 50 <= bound <= 100
    # the fallback of the test above: every candidate fails, the largest one is used
    assert auto_avg(np.full(1000, 1e6), 1.0, bounds=[1, 2, 3], rng=seeded(0),
                    return_bound=True)[1] == 3
    with pytest.raises(TypeError, match="return_bound"):
        auto_avg(values, 1.0, rng=seeded(0), return_bound=1)


def test_the_naive_auto_avg_returns_about_one_whatever_the_column(adult):
    # Its "average" is a noisy clipped sum over another noisy clipped sum. At ε = 1 both
    # noises have scale 3b, while the clipped sum is >= b·#(values >= b) >= 0.5·n·b for
    # b <= 40 and >= 1.2e6 above (n = 32,561): relative scale <= 6/n, so the ratio is
    # 0.1 away from 1 only after noise of ~500 scales (probability < e**-400). The safe
    # version's 0.5-year bound holds as in the first test (one seed: <= 2.3e-8; the
    # hours-per-week column is bounded by 99 with >= 60 people at the top, the same case).
    for column in ("age", "hours-per-week"):
        values = adult[column].to_numpy(dtype=np.float64)
        got = dpkit.naive.auto_avg(values, 1.0, bounds=range(1, 150), rng=seeded(1))
        assert abs(got - 1.0) < 0.1
        assert abs(auto_avg(values, 1.0, rng=seeded(1)) - values.mean()) < 0.5


def test_auto_avg_runs_shape_and_spread(adult):
    ages = adult["age"].to_numpy(dtype=np.float64)
    runs = auto_avg_runs(ages, 1.0, runs=50, rng=seeded(3))
    assert runs.shape == (50,)
    # The error budget of the 20-seed test with a 1-year margin: <= 5.9e-9 per run
    # (b > 402 after 195 failing candidates: 4.7e-9), so 50 runs fail with <= 3e-7.
    assert np.all(np.abs(runs - ages.mean()) <= 1.0)
    assert len(set(runs.tolist())) > 40  # independent runs differ


def age_band_queries():
    return [lambda d, lo=lo: int(((d >= lo) & (d < lo + 10)).sum()) for lo in range(10, 100, 10)]


def test_range_queries_on_adult_age_bands(adult):
    # True counts of the bands 10-19, ..., 90-99: 1657, 8054, 8613, 7175, 4418, 2015, 508,
    # 78, 43. Threshold 5000, c = 3, ε = 1: Sparse runs at ε/6 (noise scales 12 and 24).
    # Bands 20-49 are >= 2175 above the threshold and 10-19 is 3343 below it, so the picks
    # are bands 1, 2, 3 unless a noise gap of ~2000 occurs (probability < e**-80). The
    # answers get Laplace noise of scale 6 (ε/6 each): within 200 except with probability
    # 3·e**-33.
    ages = adult["age"].to_numpy()
    truth = [q(ages) for q in age_band_queries()]
    for seed in range(3):
        released = range_queries(age_band_queries(), ages, 3, 5000, 1.0, rng=seeded(seed))
        assert [i for i, _ in released] == [1, 2, 3]
        assert all(abs(value - truth[i]) < 200 for i, value in released)


def test_range_queries_budget_and_laziness(monkeypatch):
    recorded = []
    real = ranges.release_on_grid

    def release(units, sensitivity_units, epsilon, k, rng, size):
        recorded.append((Fraction(sensitivity_units) * Fraction(2) ** k, epsilon, size))
        return real(units, sensitivity_units, epsilon, k, rng, size)

    monkeypatch.setattr(ranges, "release_on_grid", release)
    evaluated = []

    def stream():
        for i in range(10**9):
            def query(_d, i=i):
                evaluated.append(i)
                return 10**6 if i % 2 else -10**6
            yield query

    for epsilon, c in ((1.0, 3), (0.3, 7), (2.5, 1)):
        recorded.clear()
        evaluated.clear()
        released = range_queries(stream(), None, c, 0, epsilon, rng=seeded(4))
        assert [i for i, _ in released] == list(range(1, 2 * c, 2))
        assert evaluated == list(range(2 * c))  # nothing after the c-th pick
        # c answers, sensitivity exactly 1, exactly ε/(2c) each: half the budget.
        assert recorded == [(1, Fraction(epsilon) / (2 * c), 1)] * c


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: auto_avg([1.0, 2.0], 0.0), ValueError, "epsilon must be a finite number > 0"),
    (lambda: auto_avg([1.0, math.nan], 1.0), ValueError, "values must hold finite"),
    (lambda: auto_avg([1.0], 1.0, bounds=[]), ValueError, "bounds must hold at least one"),
    (lambda: auto_avg_runs([1.0], 1.0, runs=0), ValueError,
     r"runs must be an integer in \[1, 100000\]"),
    (lambda: range_queries([], None, 0, 0, 1.0), ValueError, "c must be an integer >= 1"),
    (lambda: range_queries([], None, 1, math.inf, 1.0), ValueError, "threshold must be"),
    (lambda: range_queries(3, None, 1, 0, 1.0), TypeError, "queries must be an iterable"),
    (lambda: range_queries([], None, 1, 0, -1), ValueError, "epsilon must be"),
])
def test_bad_input_is_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------ above_threshold_runs and Theorem 3.24


def test_above_threshold_runs_matches_the_exact_none_probability():
    # Three queries answering 0, threshold 0, ε = 1: P[None] = 0.1876 (numerical
    # integration over the threshold noise, as dpkit.check does). Hoeffding: 20,000 runs
    # stray by more than 0.0194 with probability <= 2·exp(-2·20000·0.0194²) < 6e-7.
    from dpkit.check.svt import _prob_none

    runs = above_threshold_runs([0, 0, 0], 0, 1.0, runs=20_000, rng=seeded(7))
    assert abs(np.mean(runs == -1) - _prob_none(3, 0.0, 1.0)) < 0.0194
    assert set(runs.tolist()) <= {-1, 0, 1, 2}


def test_above_threshold_runs_refuses_bad_input():
    with pytest.raises(ValueError, match="answers must not be empty"):  # as every release
        above_threshold_runs([], 0, 1.0, runs=1)
    with pytest.raises(TypeError, match="answers must be an iterable"):
        above_threshold_runs(3, 0, 1.0, runs=1)
    with pytest.raises(ValueError, match="answers\\[1\\]"):
        above_threshold_runs([0, math.nan], 0, 1.0, runs=1)
    with pytest.raises(ValueError, match="runs must be an integer in \\[1, 100000\\]"):
        above_threshold_runs([0], 0, 1.0, runs=0)


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_theorem_3_24_accuracy_on_the_adult_stream(adult, epsilon):
    # The chapter's check: "how many people are older than a", a = 17..90, threshold -500,
    # beta = 0.05, alpha = 8(ln k + ln(2/beta))/ε. The theorem bounds P[error > alpha] by
    # beta; Hoeffding: the failures exceed beta·n + 372 with probability <= exp(-2·372²/n)
    # < 1e-6 for n = 20,000. (The chapter prints the observed count: far below.)
    ages = adult["age"].to_numpy()
    answers = np.array([-int((ages > a).sum()) for a in range(17, 91)])
    k, beta, n, threshold = len(answers), 0.05, 20_000, -500
    alpha = 8 * (np.log(k) + np.log(2 / beta)) / epsilon
    stops = above_threshold_runs(answers, threshold, epsilon, runs=n, rng=seeded(12))
    last = np.where(stops >= 0, stops, k - 1)
    highest = np.maximum.accumulate(answers)
    below = np.where(stops > 0, highest[np.maximum(stops - 1, 0)], -np.inf)
    below = np.where(stops < 0, highest[-1], below) - threshold
    above = np.where(stops >= 0, threshold - answers[last], -np.inf)
    failures = int((np.maximum(below, above) > alpha).sum())
    assert failures <= beta * n + 372


def test_relative_threshold_solution_numbers(adult):
    """The claims and numbers of ex-svt-relative-threshold (sparse vector chapter): the
    fraction's sensitivity 1/2, the linearised query's 0.99 and its non-monotone moves (exact
    fractions, every dataset of up to 4 ages from a small domain), and the answer on Adult."""
    from itertools import combinations_with_replacement

    text = exercise_text("sparse_vector", "ex-svt-relative-threshold")
    f = Fraction(1, 100)

    def older(data, a):
        return sum(x > a for x in data)

    ages = range(17, 22)
    pairs = [(d, (*d, x)) for n in range(5) for d in combinations_with_replacement(ages, n)
             for x in ages]
    fraction_moves = {abs(Fraction(older(d, a), len(d)) - Fraction(older(e, a), len(e)))
                      for d, e in pairs if d for a in ages}
    assert max(fraction_moves) == Fraction(1, 2)
    assert (Fraction(older((90,), 17), 1), Fraction(older((17, 90), 17), 2)) == (1, Fraction(1, 2))
    query_moves = {f * len(e) - older(e, a) - (f * len(d) - older(d, a))
                   for d, e in pairs for a in ages}
    assert query_moves == {f, f - 1} and max(map(abs, query_moves)) == Fraction(99, 100)
    up = [a for a in range(17, 91) if f * 1 - older((50,), a) > 0]        # adding age 50 to
    down = [a for a in range(17, 91) if f * 1 - older((50,), a) < 0]      # any dataset
    assert up == list(range(50, 91)) and down == list(range(17, 50))
    ages_adult = adult["age"].to_numpy()
    n = len(ages_adult)
    answer = next(a for a in range(17, 91) if older(ages_adult, a) <= f * n)
    assert (n, float(f * n), answer) == (32_561, 325.61, 74)
    assert (older(ages_adult, 73), older(ages_adult, 74)) == (337, 286)
    for printed in ("32{,}561", "325.61", "337 people are older than 73", "286 older than 74",
                    "the answer is 74", "\\max(f, 1 - f) = 0.99", "sensitivity is $1/2$"):
        assert printed in text, printed


# ------------------------------ exact output probabilities of AboveThreshold (continuous noise)

def _laplace_cdf_piece(shift: Fraction, scale: Fraction, right: bool) -> dict:
    """``F(t - shift)`` for the CDF ``F`` of Lap(scale), on the side ``t >= shift``
    (``right``) or ``t < shift``, as ``{rate: coefficient}`` for ``Σ coefficient·e^(rate·t)``."""
    if right:
        return {Fraction(0): mp.mpf(1), -1 / scale: -mp.exp(mp.mpf(shift) / scale) / 2}
    return {1 / scale: mp.exp(-mp.mpf(shift) / scale) / 2}


def _exponential_sum_integral(terms: dict, low: Fraction | None, high: Fraction | None):
    """``∫ Σ coefficient·e^(rate·t) dt`` over ``[low, high]`` (``None``: an infinite end; the
    terms then vanish there)."""
    total = mp.mpf(0)
    for rate, coefficient in terms.items():
        if rate == 0:
            total += coefficient * (mp.mpf(high) - mp.mpf(low))
        else:
            r = mp.mpf(rate.numerator) / rate.denominator
            ends = [0 if end is None else mp.exp(r * mp.mpf(end)) for end in (high, low)]
            total += coefficient * (ends[0] - ends[1]) / r
    return total


def _above_threshold_probabilities(answers, threshold, tau_scale, nu_scale) -> list:
    """The exact probabilities (mpmath, 40 digits) that AboveThreshold with continuous
    Lap(tau_scale) threshold noise and Lap(nu_scale) query noise outputs ``0, ..., k - 1`` and
    ``None`` (last), for rational answers and threshold: the integral over the threshold noise
    ``t`` of ``Π_{i<j} F(T + t - q_i)·(1 - F(T + t - q_j))``, a sum of exponentials between
    the breakpoints ``0`` and ``q_i - T``, integrated in closed form piece by piece."""
    shifts = [Fraction(a) - Fraction(threshold) for a in answers]
    cuts = [None, *sorted({Fraction(0), *shifts}), None]

    def integral(factors: list[tuple[Fraction, bool]]):
        total = mp.mpf(0)
        for low, high in pairwise(cuts):
            inside = high - 1 if low is None else low + 1 if high is None else (low + high) / 2
            terms = {(1 if inside < 0 else -1) / tau_scale: 1 / (2 * mp.mpf(tau_scale))}
            for shift, above in factors:
                piece = _laplace_cdf_piece(shift, nu_scale, inside >= shift)
                if above:    # 1 - F
                    piece = {rate: -c for rate, c in piece.items()}
                    piece[Fraction(0)] = piece.get(Fraction(0), 0) + 1
                product: dict = {}
                for rate, c in terms.items():
                    for rate2, c2 in piece.items():
                        product[rate + rate2] = product.get(rate + rate2, 0) + c * c2
                terms = product
            total += _exponential_sum_integral(terms, low, high)
        return total

    below = [(shift, False) for shift in shifts]
    with mp.workdps(40):
        return [integral([*below[:j], (shifts[j], True)]) for j in range(len(shifts))] + [
            integral(below)]


def _worst_log_ratio(first, second, tau_scale, nu_scale):
    p = _above_threshold_probabilities(first, 0, tau_scale, nu_scale)
    q = _above_threshold_probabilities(second, 0, tau_scale, nu_scale)
    with mp.workdps(40):
        assert abs(sum(p) - 1) < 1e-30 and abs(sum(q) - 1) < 1e-30
        return max(abs(mp.log(a / b)) for a, b in zip(p, q, strict=True))


def test_exact_above_threshold_probabilities_match_the_known_ones():
    # Three answers 0, threshold 0, ε = 1 (scales 2 and 4): P[None] = 3/16, as
    # test_svt.prob_none integrates; one answer: P[0] = 1/2 by symmetry.
    p = _above_threshold_probabilities([0, 0, 0], 0, Fraction(2), Fraction(4))
    assert float(p[-1]) == pytest.approx(0.1875, rel=1e-12)
    assert float(_above_threshold_probabilities([0], 0, Fraction(2), Fraction(4))[0]) == 0.5


@pytest.mark.parametrize("epsilon", [Fraction(1, 2), Fraction(1), Fraction(2)])
def test_relative_threshold_queries_need_only_half_the_query_noise(epsilon):
    """ex-svt-relative-threshold, part 2: AboveThreshold on q_a = f·n - o_a (threshold 0) with
    Lap(2/ε) threshold noise *and* Lap(2/ε) query noise is ε-DP, although the stream is not
    monotone. Exact output probabilities (closed-form integrals, no sampling) on 60 random
    add/remove neighbour pairs (fixed seed) stay within the proof's bound e^(0.995ε) <= e^ε
    (at f = 0.01; e^((1 + max(f, 1 - f))ε/2) in general), for every output and None. Power: a
    stream whose changes span an interval of length 2 (two queries up, one down) breaks ε with
    the same halved noise, and not with the full noise."""
    import random

    rng = random.Random(20)
    scale = 2 / epsilon
    ages = (1, 2, 3, 4)

    def queries(data, f):
        return [f * len(data) - sum(x > a for x in data) for a in ages]

    worst = Fraction(0)
    for _ in range(60):
        f = Fraction(rng.choice([1, 20, 50, 80, 99]), 100)
        data = tuple(rng.randint(1, 5) for _ in range(rng.randint(0, 6)))
        added = (*data, rng.randint(1, 5))
        ratio = _worst_log_ratio(queries(data, f), queries(added, f), scale, scale)
        assert ratio <= (1 + max(f, 1 - f)) / 2 * epsilon, (f, data, added)
        worst = max(worst, ratio)
    assert worst > epsilon / 2           # the check is not vacuous
    assert _worst_log_ratio([4, 4, -6], [5, 5, -7], scale, scale) > epsilon
    assert _worst_log_ratio([4, 4, -6], [5, 5, -7], scale, 2 * scale) <= epsilon
    text = exercise_text("sparse_vector", "ex-svt-relative-threshold")
    for printed in ("Half the query noise still suffices",
                    "e^{0.99\\varepsilon/2}e^{\\varepsilon/2} = e^{0.995\\varepsilon}",
                    "four times its halved query noise $2/\\varepsilon$",
                    "AboveThreshold on the queries $-r_a$ with threshold $-f$"):
        assert printed in text, printed
    assert "the full query noise" not in text     # the old, false claim
