"""dpkit.naive SVT variants: they reproduce the published noise scales and behaviours."""

from __future__ import annotations

import math

import pytest

import dpkit.naive as naive
import dpkit.naive.svt as naive_svt
from dpkit.rng import seeded


def constant_queries(answers):
    return [lambda _d, a=a: a for a in answers]


@pytest.fixture
def scales(monkeypatch):
    """Record the scale of every noise draw and return zero noise."""
    recorded = []

    def fake(self, scale):
        recorded.append(scale)
        return 0.0

    monkeypatch.setattr(naive_svt._TextbookNoise, "__call__", fake)
    return recorded


def test_published_noise_scales(scales):
    # Lyu, Su & Li (2017), Figure 1, with ε = 2, sensitivity 1. Answers 0 pass (0 >= 0)
    # with zero noise; answers -1 do not.
    eps = 2.0
    naive.above_threshold(constant_queries([-1, -1]), None, 0, eps)
    assert scales == [0.0, 1 / eps, 1 / eps]            # exact threshold, Lap(1/ε) each
    scales.clear()
    naive.svt_release_answers(constant_queries([-1, 0, 0]), None, 0, eps, 2)
    assert scales == [2 / eps] + [2 * 2 / eps] * 3      # Lap(2/ε), Lap(2c/ε); no refresh
    scales.clear()
    naive.svt_little_query_noise(constant_queries([-1, 0]), None, 0, eps, 1)
    assert scales == [4 / eps] + [4 / (3 * eps)] * 2    # Lap(4/ε), Lap(4/(3ε))
    scales.clear()
    naive.svt_no_query_noise(constant_queries([0, -1, 0]), None, 0, eps)
    assert scales == [2 / eps, 0.0, 0.0, 0.0]           # no query noise, no cutoff
    scales.clear()
    naive.svt_no_cutoff(constant_queries([0, 0, 0]), None, 0, eps)
    assert scales == [2 / eps] + [2 / eps] * 3          # Lap(2/ε) each, no cutoff
    scales.clear()
    naive.above_threshold_random_index(constant_queries([-1, 0]), None, 0, eps)
    assert scales == [2 / eps, 4 / eps, 4 / eps]        # Dwork & Roth's scales


def test_outputs_follow_each_variant(scales):
    answers = constant_queries([0, -1, 0, 0, 5])
    assert naive.svt_no_cutoff(answers, None, 0, 1.0) == [0, 2, 3, 4]
    assert naive.svt_little_query_noise(answers, None, 0, 1.0, 2) == [0, 2]
    assert naive.svt_release_answers(answers, None, 0, 1.0, 3) == [(0, 0.0), (2, 0.0),
                                                                     (3, 0.0)]
    assert naive.above_threshold(constant_queries([-1, -2]), None, 0, 1.0) is None


def test_the_random_index_bug_makes_up_an_answer():
    # Nothing can pass (answers 10**9 below), yet an index comes back, and not always the
    # same one: 30 seeds all giving the same index of 5 has probability 5**-29.
    queries = constant_queries([-10**9] * 5)
    got = {naive.above_threshold_random_index(queries, None, 0, 1.0, seeded(s))
           for s in range(30)}
    assert got <= set(range(5)) and len(got) > 1


def test_no_query_noise_counterexample_is_exact():
    # Answers (1, 0): "query 1 only" needs 1 < T̂ and 0 >= T̂: impossible. Answers (0, 1):
    # probability P(0 < T̂ <= 1) = (1 - e**-0.5)/2 = 0.197; 300 runs with no occurrence
    # has probability 0.803**300 < 1e-28.
    def run(answers, seed):
        qs = constant_queries(answers)
        return naive.svt_no_query_noise(qs, None, 0, 1.0, seeded(seed))

    assert not any(run([1, 0], s) == [1] for s in range(300))
    assert any(run([0, 1], s) == [1] for s in range(300))


def test_naive_variants_validate_their_input():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        naive.svt_no_cutoff(constant_queries([0]), None, 0, math.nan)
    with pytest.raises(ValueError, match="c must be an integer >= 1"):
        naive.svt_release_answers(constant_queries([0]), None, 0, 1.0, 0)
    with pytest.raises(TypeError, match=r"queries\[0\]\(data\) must be a real number"):
        naive.above_threshold(constant_queries(["x"]), None, 0, 1.0)
    with pytest.raises(TypeError, match="queries must be a sequence"):
        naive.above_threshold_random_index(iter(constant_queries([0])), None, 0, 1.0)
    with pytest.raises(ValueError, match="at least one query"):
        naive.above_threshold_random_index([], None, 0, 1.0)
    with pytest.raises(ValueError, match="bounds must be strictly increasing"):
        naive.auto_avg([1.0, 2.0], 1.0, bounds=[2, 1])


def test_docstrings_state_the_true_privacy():
    for name, cost in [("svt_release_answers", "True: not ε'-DP"),
                       ("svt_little_query_noise", "True: ((1 + 6c)/4)·ε-DP"),
                       ("svt_no_query_noise", "True: ∞"), ("svt_no_cutoff", "True: ∞"),
                       ("above_threshold", "True privacy: nε"),
                       ("above_threshold_random_index", "True privacy: ε"),
                       ("auto_avg", "True privacy: ε")]:
        assert cost in getattr(naive, name).__doc__
