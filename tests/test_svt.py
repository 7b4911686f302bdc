"""dpkit.svt: AboveThreshold, Sparse, clipping-bound selection; exact comparisons, laziness,
noise scales (recorded and statistical), input validation.

Statistical tests use fixed seeds; each states its false-failure probability (the chance,
over seeds, that a correct implementation fails), always <= 1e-6.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpkit.svt as svt
from dpkit.rng import seeded
from dpkit.svt import (
    above_threshold,
    auto_avg,
    choose_clip_bound,
    clip_bound_runs,
    clipping,
    core,
    range_queries,
    sparse,
)


def constant_queries(answers):
    """Queries that ignore the data and return fixed answers (sensitivity-1 when the
    neighbouring answers differ by at most 1)."""
    return [lambda _d, a=a: a for a in answers]


class CountingStream:
    """A lazy stream of queries that records how many were pulled and evaluated."""

    def __init__(self, answer_of_index):
        self.answer_of_index = answer_of_index
        self.pulled = 0
        self.evaluated = 0

    def __iter__(self):
        for i in itertools.count():
            self.pulled += 1

            def query(_data, i=i):
                self.evaluated += 1
                return self.answer_of_index(i)

            yield query


# ----------------------------------------------------------------------- the grid

@given(st.fractions(min_value=-10**6, max_value=10**6), st.integers(0, 40))
def test_grid_rounding_commutes_with_adding_one(x, bits):
    # This is what keeps a sensitivity-1 query exactly sensitivity-1 after rounding.
    assert core.round_to_grid(x + 1, bits) == core.round_to_grid(x, bits) + 2**bits
    assert abs(core.round_to_grid(x, bits) - x * 2**bits) <= Fraction(1, 2)


@given(st.fractions(min_value=-10**6, max_value=10**6),
       st.fractions(min_value=-1, max_value=1), st.integers(0, 40))
def test_grid_rounding_keeps_sensitivity_one(x, shift, bits):
    assert abs(core.round_to_grid(x + shift, bits) - core.round_to_grid(x, bits)) <= 2**bits


@pytest.mark.parametrize("scale", [Fraction(2), Fraction(1, 1000), Fraction(10**9),
                                   Fraction(2 * 3 * 10**5), Fraction(1, 3)])
def test_grid_is_fine_and_never_coarser_than_one(scale):
    bits = core.grid_bits(scale)
    assert bits >= 0
    assert Fraction(1, 2**bits) <= min(1, scale / 2**20)
    if bits > 0:  # and it is the coarsest such grid
        assert Fraction(1, 2 ** (bits - 1)) > scale / 2**20


# ------------------------------------------------------------------- AboveThreshold

def test_returns_none_when_nothing_passes():
    # Answers 10**6 below the threshold: a pass needs a noise gap of 10**6 at scales 2 and 4
    # (probability < e**-(10**6/4)), so None is certain for all practical purposes.
    for seed in range(5):
        assert above_threshold(constant_queries([-10**6] * 20), None, 0, 1.0,
                               rng=seeded(seed)) is None
    assert above_threshold([], None, 0, 1.0, rng=seeded(0)) is None
    assert sparse(constant_queries([-10**6] * 20), None, 0, 1.0, 3, rng=seeded(0)) == []


def test_finds_the_query_far_above_the_threshold():
    answers = [-10**6] * 7 + [10**6] + [-10**6] * 5
    for seed in range(5):
        assert above_threshold(constant_queries(answers), None, 0, 1.0, rng=seeded(seed)) == 7


def test_stops_consuming_a_stream_at_the_first_pass():
    stream = CountingStream(lambda i: 10**6 if i >= 5 else -10**6)
    assert above_threshold(stream, None, 0, 1.0, rng=seeded(1)) == 5
    assert stream.evaluated == 6 and stream.pulled == 6


def test_sparse_consumes_a_stream_lazily_and_stops_at_c():
    stream = CountingStream(lambda i: 10**6 if i % 3 == 2 else -10**6)  # 2, 5, 8, ... pass
    assert sparse(stream, None, 0, 1.0, 3, rng=seeded(2)) == [2, 5, 8]
    assert stream.evaluated == 9 and stream.pulled == 9


def test_sparse_on_an_infinite_stream_of_passes():
    stream = CountingStream(lambda i: 10**6)
    assert sparse(stream, None, 0, 0.5, 4, rng=seeded(3)) == [0, 1, 2, 3]
    assert stream.evaluated == 4


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-6, 6), max_size=12), st.integers(1, 5), st.integers(0, 2**32))
def test_sparse_never_returns_more_than_c(answers, c, seed):
    found = sparse(constant_queries(answers), None, 0, 1.0, c, rng=seeded(seed))
    assert len(found) <= c
    assert found == sorted(set(found))
    assert all(0 <= i < len(answers) for i in found)


def test_queries_receive_the_data_and_floats_are_compared_exactly():
    data = np.array([0.1, 0.2, 0.7])
    queries = [lambda d: float(d.sum()) - 10**6, lambda d: float(d.sum()) + 10**6]
    assert above_threshold(queries, data, 1.0, 2.0, rng=seeded(0)) == 1


# ------------------------------------------------------------- recorded noise scales

@pytest.fixture
def recorder(monkeypatch):
    """Replace the noise source: record the scale of every value drawn, return zero noise.

    Single draws (the thresholds, and the query noise of the releases, one per query)
    record ``("one", scale)``; block draws (the query noise drawn ahead, on answers known in
    advance) record ``("block", scale, size)``.
    """
    scales = []

    def fake(scale, rng):
        scales.append(("one", scale))
        return 0

    def fake_block(scale, rng, size):
        scales.append(("block", scale, size))
        return [0] * size

    monkeypatch.setattr(core, "_discrete_laplace", fake)
    monkeypatch.setattr(core, "_discrete_laplace_block", fake_block)
    return scales


@pytest.mark.parametrize("epsilon", [1.0, 0.25, Fraction(1, 3), 7.5])
def test_above_threshold_noise_scales_are_2_and_4_over_epsilon(recorder, epsilon):
    # Three queries below the threshold and none passing (zero noise): one threshold draw,
    # then one query noise per query. In grid units of 2**-bits, the scales must be 2/ε and
    # 4/ε exactly.
    assert above_threshold(constant_queries([-1, -2, -3]), None, 0, epsilon) is None
    bits = core.grid_bits(2 / Fraction(epsilon))
    unit = Fraction(2**bits)
    t, q = 2 / Fraction(epsilon) * unit, 4 / Fraction(epsilon) * unit
    assert recorder == [("one", t), ("one", q), ("one", q), ("one", q)]


def test_sparse_uses_epsilon_over_c_and_refreshes_the_threshold(recorder):
    # Answers 0 pass with zero noise (0 >= 0): each pass ends a run, and a new run redraws
    # the threshold; each query draws its own noise. With c = 3 and ε = 1.5
    # each run has ε/3 = 1/2.
    epsilon, c = Fraction(3, 2), 3
    assert sparse(constant_queries([-1, 0, 0, -1, 0, 0]), None, 0, epsilon, c) == [1, 2, 4]
    run = epsilon / c
    unit = Fraction(2 ** core.grid_bits(2 / run))
    t, q = 2 / run * unit, 4 / run * unit
    assert recorder == [("one", t), ("one", q), ("one", q), ("one", t), ("one", q),
                        ("one", t), ("one", q), ("one", q)]


def test_answers_known_in_advance_draw_query_noise_in_blocks_of_the_same_scale(recorder):
    # On answers known in advance (the simulations' exact path) the query noise comes in
    # blocks of 8, 8, 16, 32, ... drawn ahead; a release draws one per query (above).
    assert core._svt(iter(enumerate([-1] * 40)), 0, Fraction(2), 1, seeded(0)) == []
    assert recorder == [("one", 4), ("block", 8, 8), ("block", 8, 8), ("block", 8, 16),
                        ("block", 8, 32)]


@pytest.mark.parametrize(("epsilon", "fixed_throughout"), [(1.0, False), (1e3, False),
                                                         (2.0**-50, False), (2.0**-51, True)])
def test_query_noise_docstring_states_which_blocks_have_a_fixed_cost(
        monkeypatch, epsilon, fixed_throughout):
    """The ``_QueryNoise`` docstring said block draws cost the same whatever the values; in
    fact blocks of more than 64 values (from the 129th query on) use the block-envelope
    sampler, whose running time depends on them. Which sampler runs is recorded here, and
    the docstring must state exactly that. A release draws one value per query, from the
    fixed-cost sampler throughout (every step does the same work)."""
    import dpkit._samplers.noise as noise

    used = []
    fixed_result, in_blocks = noise.fixed_result, noise._in_blocks

    def fixed(sampler, scale, count, shape, rng):
        used.append(("fixed", count))
        return fixed_result(sampler, scale, count, shape, rng)

    def envelope(table, count, rng):
        used.append(("envelope", count))
        return in_blocks(table, count, rng)

    monkeypatch.setattr(noise, "fixed_result", fixed)
    monkeypatch.setattr(noise, "_in_blocks", envelope)
    assert above_threshold(constant_queries([0] * 300), None, 10**30, epsilon,
                           rng=seeded(0)) is None
    assert used == [("fixed", 1)] * 301  # the threshold, then one per query
    used.clear()
    run_scale = 1 / Fraction(epsilon)
    bits = core.grid_bits(2 * run_scale)
    assert core._svt(iter(enumerate([0] * 300)), 10**30 * 2**bits, run_scale * 2**bits, 1,
                     seeded(0)) == []
    later = "fixed" if fixed_throughout else "envelope"
    assert used == [("fixed", 1),  # the threshold, then the queries' blocks
                    ("fixed", 8), ("fixed", 8), ("fixed", 16), ("fixed", 32), ("fixed", 64),
                    (later, 128), (later, 256)]
    doc = " ".join(core._QueryNoise.__doc__.split())
    assert "the first 128 queries (blocks of 8, 8, 16, 32 and 64 values" in doc
    assert "from the 129th query on, blocks of 128 values and more come from the " \
           "block-envelope sampler, whose running time depends on the values drawn" in doc
    assert "exceeds ``2**52`` grid units (one run's epsilon below ``2**-50``)" in doc
    assert "its running time does not depend on the values drawn" not in doc  # the old claim


def test_threshold_and_answers_are_rounded_to_the_grid(recorder):
    # With zero noise the comparison is exactly answer >= threshold, up to the half-step
    # rounding of both (ties up): 0.1 + 2**-30 and 0.1 are the same on a 2**-20 grid.
    bits = core.grid_bits(Fraction(2))
    assert bits == 19
    step = 2.0**-bits
    assert above_threshold(constant_queries([0.1 - step]), None, 0.1, 1.0) is None
    assert above_threshold(constant_queries([0.1 - 2**-30]), None, 0.1, 1.0) == 0


# ------------------------------------------------------------- statistical noise scales

def laplace_cdf(x, b):
    return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)


def prob_none(m, answer, threshold_scale, query_scale):
    """P(AboveThreshold returns None) for m queries with the same answer, threshold 0,
    continuous Laplace noise: E_ρ[F_ν(ρ - answer)^m]."""
    def integrand(r):
        return (0.5 / threshold_scale * math.exp(-abs(r) / threshold_scale)
                * laplace_cdf(r - answer, query_scale) ** m)
    reach = 80 * max(threshold_scale, query_scale) + abs(answer)  # the tails beyond: < e**-80
    return integrate.quad(integrand, -reach, reach, points=[0.0, answer], limit=400)[0]


@pytest.mark.parametrize(("m", "answer", "epsilon"), [(3, 0.0, 1.0), (1, 6.0, 1.0),
                                                      (1, 24.0, 0.25), (20, -4.0, 1.0)])
def test_outcome_frequencies_match_laplace_2_and_4_over_epsilon(m, answer, epsilon):
    """The frequency of ``None`` over 3000 runs matches the continuous-Laplace prediction.

    The discrete noise lives on a grid 2**20 times finer than its scale, so its
    probabilities differ from the continuous ones by ~1e-6, far below the test's resolution.
    Failing needs a two-sided exact binomial p-value < 2.5e-7 (four cases: false-failure
    probability <= 1e-6). Power: swapped scales (threshold 4/ε, queries 2/ε) predict 0.325
    instead of 0.1875 for the first case, 19 standard deviations away; query noise of
    4/(3ε) with threshold noise 4/ε (a published mistake) predicts a different value for
    the second (checked below). The last case (20 queries) also covers the query noise
    drawn in blocks after the first 8 single draws.
    """
    runs = 3000
    queries = constant_queries([answer] * m)
    nones = sum(above_threshold(queries, None, 0, epsilon, rng=seeded(1000 + r)) is None
                for r in range(runs))
    expected = prob_none(m, answer, 2 / epsilon, 4 / epsilon)
    p_value = stats.binomtest(nones, runs, expected).pvalue
    assert p_value >= 2.5e-7, (nones / runs, expected)
    # The test has power: the wrong noise scales predict frequencies it would reject.
    for wrong in [(4 / epsilon, 2 / epsilon), (4 / epsilon, 4 / (3 * epsilon)),
                  (2 / epsilon, 2 / epsilon)]:
        alternative = prob_none(m, answer, *wrong)
        if abs(alternative - expected) > 0.05:
            assert stats.binomtest(round(alternative * runs), runs, expected).pvalue < 2.5e-7


def test_sparse_frequency_matches_epsilon_over_c():
    # sparse with ε = 2, c = 2 runs AboveThreshold at ε = 1: the first query (answer 6)
    # is reported with probability 1 - P(None) at ε = 1 (0.8595). Same p-value rule
    # (false failure <= 2.5e-7).
    runs = 3000
    hits = sum(0 in sparse(constant_queries([6.0, -10**6]), None, 0, 2.0, 2,
                           rng=seeded(7000 + r)) for r in range(runs))
    expected = 1 - prob_none(1, 6.0, 2.0, 4.0)
    assert stats.binomtest(hits, runs, expected).pvalue >= 2.5e-7, (hits / runs, expected)


# ------------------------------------------------------------------ clipping bound

@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 50, allow_nan=False), min_size=1, max_size=40),
       st.lists(st.floats(0.01, 60), min_size=1, max_size=6, unique=True),
       st.integers(0, 30))
def test_clip_query_is_the_clipped_sum_difference_and_has_sensitivity_one(values, bounds,
                                                                          bits):
    bounds = sorted(bounds)
    data = np.array(values)
    one = 2**bits
    answers = clipping.clip_query_units(data, tuple(bounds), bits, max_rows=data.size)
    for b, units in zip(bounds, answers, strict=True):
        # Row by row: each row contributes floor(clip(v - b, 0, 1) * 2**bits).
        direct = -sum(math.floor(min(max(v - b, 0.0), 1.0) * one) for v in values)
        assert units == direct
        # ... which is sum(clip(v, 0, b)) - sum(clip(v, 0, b + 1)) up to one grid step a row
        exact = sum(Fraction(min(max(v, 0), b)) - Fraction(min(max(v, 0), b + 1))
                    for v in values)
        assert exact * one - len(values) <= units <= exact * one + len(values)
    # Removing a row moves every answer by at most one unit of sensitivity (2**bits).
    fewer = clipping.clip_query_units(data[1:], tuple(bounds), bits,
                                      max_rows=data.size)
    assert all(0 <= f - a <= one for a, f in zip(answers, fewer, strict=True))


def _clip_units_reference(values, grid, bits, max_rows):
    """The straightforward answer: one candidate at a time, the rows strictly between ``b``
    and ``b + 1`` visited one by one (float64 ``v - b``, rounded down, added exactly)."""
    ordered = np.sort(values)
    one = 2**bits
    answers = []
    for b in (float(b) for b in grid):
        low = int(np.searchsorted(ordered, b, side="right"))
        high = int(np.searchsorted(ordered, b + 1.0, side="left"))
        partial = sum(math.floor(min(float(v) - b, 1.0) * one) for v in ordered[low:high])
        answers.append(-((len(ordered) - max(low, high)) * one + partial))
    return answers


_CANDIDATES = st.one_of(
    st.integers(1, 60).map(float),                            # integers
    st.integers(0, 4095).map(lambda i: 36 + i / 4096),        # a fine dyadic grid
    st.floats(1e-6, 60),                                      # anything (off the grid)
    st.integers(1, 80).map(lambda e: 2.0**-e),                # tiny powers of two
    st.integers(40, 1000).map(lambda e: 2.0**e))              # huge


@settings(max_examples=300, deadline=None)
@given(st.lists(_CANDIDATES, min_size=1, max_size=12, unique=True),
       st.lists(st.tuples(st.integers(0, 11), st.sampled_from(
           [0.0, 0.5, 0.999, 1.0, 1e-9, 1 - 2**-40, 0.37, 2.0, -1.0])), min_size=1, max_size=30),
       st.sampled_from([0, 1, 12, 19, 30, 52, 53, 60, 83]),
       st.sampled_from([None, 2**16, 2**32]))
def test_clip_query_units_answers_every_candidate_as_the_reference_does(grid, rows, bits,
                                                                        max_rows):
    """The vectorised answers (one cumulative sum on the grid, flattened pairs off it, sums
    modulo 2**64 or as Python ints) equal the one-candidate-at-a-time reference bit for bit,
    with rows strictly between candidates b and b + 1 (where the two paths differ)."""
    grid = tuple(sorted(grid))
    values = np.array([grid[i % len(grid)] + offset for i, offset in rows])
    data = np.clip(values, 0.0, grid[-1] + 1.0)
    max_rows = data.size if max_rows is None else max_rows
    assert (clipping.clip_query_units(data, grid, bits, max_rows=max_rows)
            == _clip_units_reference(data, grid, bits, max_rows))


def test_choose_clip_bound_on_a_known_column():
    # 1000 rows at 40 and 100 rows at 95; candidates 10, 20, ..., 200; ε = 5: threshold
    # -20/ε = -4, noise scales 0.4 (threshold) and 0.8 (queries); the noise gap ν - ρ has
    # survival S(z) = (0.64 e^(-z/0.8) - 0.16 e^(-z/0.4)) / 0.96 <= (2/3) e^(-z/0.8).
    # * b <= 90: the query is <= -100, a pass needs a gap >= 96: probability < e**-110.
    # * b = 100: the query is 0, it passes unless the gap is < -4: S(4) = 0.0045.
    # So b = 100 except with probability 0.0045 per run (then b > 100 or None); more than
    # 5 such runs out of 40 has probability < C(40, 6)·0.0045**6 = 3e-8 (false failure).
    values = np.array([40.0] * 1000 + [95.0] * 100)
    bounds = list(range(10, 210, 10))
    chosen = [choose_clip_bound(values, 5.0, bounds=bounds, rng=seeded(s)) for s in range(40)]
    assert all(b is None or b >= 100 for b in chosen)
    assert sum(b == 100 for b in chosen) >= 35


def test_choose_clip_bound_returns_none_past_every_candidate():
    # Every value is 10**6 and every candidate below 1000: each query is -1000, the
    # threshold -20; passing needs a noise gap of 980 at scales 2 and 4 (prob < e**-240).
    values = np.full(1000, 1e6)
    assert choose_clip_bound(values, 1.0, bounds=[1, 10, 100, 999], rng=seeded(0)) is None


def test_clip_bound_runs_returns_one_candidate_per_run():
    # 100 values 0..99, ε = 1 (threshold -20, noise scales 2 and 4). A candidate b < 50
    # leaves >= 49 rows above it: passing needs a noise gap >= 29, probability
    # <= (2/3)e**(-29/4) = 4.7e-4, so a run stops below 50 with probability <= 0.024.
    # 25 or more such runs out of 50: probability < 1e-30 (false failure).
    values = np.arange(100.0)
    runs = clip_bound_runs(values, 1.0, bounds=range(1, 200), runs=50, rng=seeded(3))
    assert len(runs) == 50
    assert all(b is None or (isinstance(b, int) and 1 <= b < 200) for b in runs)
    assert sum(b is not None and b >= 50 for b in runs) > 25


def test_default_clip_bounds_are_integers_growing_by_about_one_percent():
    grid = svt.DEFAULT_CLIP_BOUNDS
    assert grid[:200] == tuple(range(1, 201))
    assert all(isinstance(b, int) for b in grid)
    assert all(b < c <= b + b // 100 + 1 for b, c in itertools.pairwise(grid))
    assert grid[-1] >= 2**40 > grid[-2]


@pytest.mark.parametrize("epsilon", [5e-324, 1e-300, 2.0**-65, 2.0**70, 1e300])
def test_epsilon_outside_the_exact_range_is_refused_clearly(epsilon):
    # Issue 9: ε = 5e-324 raised a bare OverflowError (its noise scale 2/ε is no float).
    for call in (lambda: above_threshold([lambda d: 0], None, 0, epsilon),
                 lambda: sparse([lambda d: 0], None, 0, epsilon, 1),
                 lambda: choose_clip_bound([1.0], epsilon, bounds=[1]),
                 lambda: auto_avg([1.0], epsilon),
                 lambda: range_queries([lambda d: 0], None, 1, 0, epsilon)):
        with pytest.raises(ValueError, match=r"epsilon.*\[2\*\*-64, 2\*\*64\]"):
            call()


def test_sparse_checks_each_runs_share_of_epsilon():
    with pytest.raises(ValueError, match=r"epsilon/3 \(one run's share\)"):
        sparse([lambda d: 0], None, 0, 2.0**-63, 3)
    assert sparse([lambda d: 0], None, -10**30, 2.0**-63, 2, rng=seeded(0)) == [0]


# ----------------------------------------------------------------------- validation

@pytest.mark.parametrize(("epsilon", "error"), [(0, ValueError), (-1.0, ValueError),
                                                (math.nan, ValueError), (math.inf, ValueError),
                                                ("1", TypeError), (None, TypeError)])
def test_bad_epsilon_is_refused_before_any_query_runs(epsilon, error):
    stream = CountingStream(lambda i: 0)
    with pytest.raises(error, match="epsilon"):
        above_threshold(stream, None, 0, epsilon)
    with pytest.raises(error, match="epsilon"):
        sparse(stream, None, 0, epsilon, 2)
    assert stream.evaluated == 0
    with pytest.raises(error, match="epsilon"):
        choose_clip_bound([1.0, 2.0], epsilon, bounds=[1, 2])


@pytest.mark.parametrize(("c", "error"), [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                          (2.0, TypeError), (True, TypeError)])
def test_bad_c_is_refused(c, error):
    with pytest.raises(error, match="c must be an integer"):
        sparse(constant_queries([1]), None, 0, 1.0, c)


def test_bad_threshold_queries_and_rng_are_refused():
    with pytest.raises(ValueError, match="threshold must be a finite number, got nan"):
        above_threshold(constant_queries([1]), None, math.nan, 1.0)
    with pytest.raises(TypeError, match="threshold must be a real number"):
        above_threshold(constant_queries([1]), None, "0", 1.0)
    with pytest.raises(TypeError, match="queries must be an iterable"):
        above_threshold(5, None, 0, 1.0)
    with pytest.raises(TypeError, match="queries must be an iterable"):
        above_threshold("abc", None, 0, 1.0)
    with pytest.raises(TypeError, match=r"queries\[1\] must be callable"):
        above_threshold([lambda d: -10**6, 3], None, 0, 1.0, rng=seeded(0))
    with pytest.raises(ValueError, match=r"queries\[0\]\(data\) must be a finite number"):
        above_threshold(constant_queries([math.nan]), None, 0, 1.0, rng=seeded(0))
    with pytest.raises(TypeError, match=r"queries\[0\]\(data\) must be a real number"):
        above_threshold(constant_queries(["3"]), None, 0, 1.0, rng=seeded(0))
    with pytest.raises(TypeError, match="rng must be None"):
        above_threshold(constant_queries([1]), None, 0, 1.0, rng=42)


@pytest.mark.parametrize(("values", "bounds", "error", "match"), [
    ([], [1], ValueError, "values must not be empty"),
    ([1.0, math.nan], [1], ValueError, "values must hold finite numbers"),
    ([[1.0, 2.0]], [1], ValueError, "values must have 1 dimension"),
    (["a"], [1], TypeError, "values must be an array of real numbers"),
    ([1.0], [], ValueError, "bounds must hold at least one"),
    ([1.0], [2, 1], ValueError, "bounds must be strictly increasing"),
    ([1.0], [1, 1], ValueError, "bounds must be strictly increasing"),
    ([1.0], [0, 1], ValueError, r"bounds\[0\] must be a finite number > 0"),
    ([1.0], [1, math.inf], ValueError, r"bounds\[1\] must be a finite number"),
    ([1.0], 5, TypeError, "bounds must be an iterable"),
    ([1.0], ["1"], TypeError, r"bounds\[0\] must be a real number"),
])
def test_bad_clip_bound_input_is_refused(values, bounds, error, match):
    with pytest.raises(error, match=match):
        choose_clip_bound(values, 1.0, bounds=bounds)


def test_bad_runs_and_clip_threshold_are_refused():
    with pytest.raises(ValueError, match="runs must be an integer in \\[1, 100000\\]"):
        clip_bound_runs([1.0], 1.0, bounds=[1], runs=0)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        choose_clip_bound([1.0], 1.0, bounds=[1], threshold=math.inf)
