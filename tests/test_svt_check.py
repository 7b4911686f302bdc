"""dpkit.check for the sparse vector chapter: reference answers pass, typical mistakes fail.
Figures of dpkit.plots.svt: pure functions returning matplotlib Figures.

The checkers' statistical parts reject at p < 1e-7 (two tests), so the reference answer
fails with probability < 2e-7; the wrong answers below are rejected deterministically or
far beyond that threshold (their frequencies are 0.126 against 0.1875 over 2000 runs:
p ~ 1e-13, checked at the fixed seeds).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

import dpkit.naive
from dpkit.check import (
    check_above_threshold,
    check_auto_avg,
    check_little_noise_cost,
    check_sparse_scales,
)
from dpkit.laplace import laplace_mechanism
from dpkit.plots.svt import (
    CLIP_GRIDS,
    audit_figure,
    auto_avg_error_figure,
    clip_bound_figure,
    clip_query_figure,
    clip_query_values,
    naive_cost_figure,
    stream_figure,
)
from dpkit.svt import DEFAULT_CLIP_BOUNDS, choose_clip_bound


def reference_above_threshold(queries, data, threshold, epsilon, rng):
    generator = rng.numpy_generator()
    noisy_threshold = threshold + generator.laplace(0, 2 / epsilon)
    for index, query in enumerate(queries):
        if query(data) + generator.laplace(0, 4 / epsilon) >= noisy_threshold:
            return index
    return None


def fresh_threshold_each_query(queries, data, threshold, epsilon, rng):
    generator = rng.numpy_generator()
    for index, query in enumerate(queries):
        if query(data) + generator.laplace(0, 4 / epsilon) >= (
                threshold + generator.laplace(0, 2 / epsilon)):
            return index
    return None


def random_index_when_none(queries, data, threshold, epsilon, rng):
    found = reference_above_threshold(queries, data, threshold, epsilon, rng)
    return 0 if found is None else found


def reads_the_whole_stream(queries, data, threshold, epsilon, rng):
    return reference_above_threshold(list(queries), data, threshold, epsilon, rng)


def doubled_scales(queries, data, threshold, epsilon, rng):
    """Private but too noisy: Lap(4/ε) and Lap(8/ε)."""
    return reference_above_threshold(queries, data, threshold, epsilon / 2, rng)


def test_too_much_noise_is_not_only_blamed_on_redrawn_noise():
    """Honest-student review 7: an AboveThreshold with doubled noise scales was told only
    to "draw the threshold noise once and a fresh query noise per query", which it does;
    the hint now names the scales too."""
    verdict = check_above_threshold(doubled_scales)
    assert not verdict.passed and "frequencies" in verdict.message
    assert "noise scales are not 2/ε and 4/ε" in verdict.message


def test_check_above_threshold():
    assert check_above_threshold(reference_above_threshold).passed
    verdict = check_above_threshold(fresh_threshold_each_query)
    assert not verdict.passed and "frequencies" in verdict.message
    verdict = check_above_threshold(random_index_when_none)
    assert not verdict.passed and "return None" in verdict.message
    verdict = check_above_threshold(reads_the_whole_stream)
    assert not verdict.passed and "one at a time" in verdict.message


def reference_auto_avg(values, epsilon, rng):
    bound = choose_clip_bound(values, epsilon / 3, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)
    noisy_sum = laplace_mechanism(float(np.clip(values, 0, bound).sum()), bound, epsilon / 3,
                                  rng=rng)
    noisy_count = laplace_mechanism(float(len(values)), 1.0, epsilon / 3, rng=rng)
    return noisy_sum / noisy_count


def test_check_auto_avg():
    assert check_auto_avg(reference_auto_avg).passed
    verdict = check_auto_avg(lambda v, e, rng: dpkit.naive.auto_avg(v, e, bounds=range(1, 200),
                                                                    rng=rng))
    assert not verdict.passed and "noisy count of rows" in verdict.message
    assert not check_auto_avg(lambda v, e, rng: float(np.mean(v)) + 5).passed
    assert not check_auto_avg(lambda v, e, rng: 1 / 0).passed


def test_check_sparse_scales_and_little_noise_cost():
    assert check_sparse_scales(lambda e, c: (2 * c / e, 4 * c / e)).passed
    assert "ε/c" in check_sparse_scales(lambda e, c: (2 / e, 4 / e)).message
    assert "swapped" in check_sparse_scales(lambda e, c: (4 * c / e, 2 * c / e)).message
    assert "too little" in check_sparse_scales(lambda e, c: (c / e, 2 * c / e)).message
    assert not check_sparse_scales(lambda e, c: 3).passed
    assert check_little_noise_cost(lambda e, c: (1 + 6 * c) / 4 * e).passed
    assert "grow with c" in check_little_noise_cost(lambda e, c: 1.75 * e).message
    assert not check_little_noise_cost(lambda e, c: e).passed
    verdict = check_little_noise_cost(lambda e, c: c * (e / 4 + 3 * e / 2))
    assert not verdict.passed and "only once" in verdict.message


def test_figures_are_figures():
    for grid in CLIP_GRIDS:
        assert isinstance(clip_bound_figure(1.0, grid, "age", runs=20), Figure)
    assert isinstance(clip_bound_figure(0.1, next(iter(CLIP_GRIDS)), "capital-gain", runs=20),
                      Figure)
    assert isinstance(auto_avg_error_figure(epsilons=(0.1, 1.0), runs=10), Figure)
    assert isinstance(naive_cost_figure(), Figure)
    assert isinstance(audit_figure({"a": (1.0, 2.5, float("inf")), "b": (1.0, 0.4, 1.0)}),
                      Figure)
    assert isinstance(stream_figure([-30, -20, -10, 0], [1, 2, 3, 4], -5, 1.0), Figure)
    assert isinstance(clip_query_figure(("age",), 1.0), Figure)


def test_clip_query_values_count_the_rows_above_each_bound():
    # q_b = -(rows >= b + 1) - (fractions of rows in (b, b + 1)), here with no fractions.
    values = [1, 2, 3, 3, 10]
    assert clip_query_values(values, [1, 2, 3, 9, 10], 1.0).tolist() == [-4, -3, -1, -1, 0]


def test_checker_failures_do_not_state_the_answer():
    # The expected scales or cost must not appear in a failing verdict (issue 12).
    verdict = check_sparse_scales(lambda e, c: (c / e, 2 * c / e))
    text = verdict.message + " ".join(verdict.details)
    assert not verdict.passed and "(2.0, 4.0)" not in text and "4.0" not in text
    verdict = check_little_noise_cost(lambda e, c: e)
    text = verdict.message + " ".join(verdict.details)
    assert not verdict.passed and "1.75" not in text


def test_auto_avg_checker_does_not_state_the_sensitivities():
    def too_little_noise(values, epsilon, rng):
        return float(np.mean(values)) + 5.0  # wrong in a way unrelated to the denominator

    verdict = check_auto_avg(too_little_noise)
    assert not verdict.passed
    assert "sensitivity b" not in verdict.message and "sensitivity 1" not in verdict.message


def _auto_avg_variant(sum_sensitivity_one=False, exact_count=False):
    def variant(values, epsilon, rng):
        bound = choose_clip_bound(values, epsilon / 3, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)
        clipped = float(np.clip(values, 0, bound).sum())
        noisy_sum = laplace_mechanism(clipped, 1.0 if sum_sensitivity_one else bound,
                                      epsilon / 3, rng=rng)
        count = (float(len(values)) if exact_count
                 else laplace_mechanism(float(len(values)), 1.0, epsilon / 3, rng=rng))
        return noisy_sum / count
    return variant


def test_check_auto_avg_catches_too_little_sum_noise_and_an_exact_count():
    # Both variants are accurate (they pass the closeness tests) but not private.
    # Statistical part: a correct answer fails with probability < 1e-7 (checker docstring).
    assert check_auto_avg(_auto_avg_variant()).passed
    verdict = check_auto_avg(_auto_avg_variant(sum_sensitivity_one=True))
    assert not verdict.passed and "too little noise" in verdict.message
    assert "sensitivity b" not in verdict.message
    verdict = check_auto_avg(_auto_avg_variant(exact_count=True))
    assert not verdict.passed and "denominator" in verdict.message
