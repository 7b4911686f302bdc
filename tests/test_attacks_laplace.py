"""Mironov's LSB attack: certain on the textbook mechanism, no better than chance on the safe one.

False-failure probabilities (fixed seeds; bounds by Hoeffding's inequality, ``P[mean -
E[mean] >= t] <= exp(-2 m t²)`` for ``m`` independent trials in [0, 1]):

* naive, "decided >= 50 %" with 2·2000 releases whose true decided rate is about 60 %:
  ``exp(-2·4000·0.08²) = e**-51``;
* safe, accuracy <= e**ε/(1+e**ε) + 0.045 with 4000 releases: differential privacy bounds the
  true accuracy of any attack by ``e**ε/(1+e**ε)``, so a failure needs a deviation of 0.045:
  ``exp(-2·4000·0.045²) = 9e-8``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpkit.laplace
import dpkit.naive
from dpkit.attacks import (
    laplace_lsb_attack,
    learn_timing_profile,
    measure_lsb_attack,
    measure_timing_attack,
    textbook_reachable,
    timing_attack,
)
from dpkit.rng import seeded


@pytest.mark.parametrize("lam", [1, 10])
def test_attack_is_certain_on_the_textbook_mechanism(lam: int) -> None:
    result = measure_lsb_attack(dpkit.naive.laplace_mechanism, 1.0, 1 / lam, n=2000,
                                rng=seeded(lam))
    assert result.decided >= 0.5
    assert result.correct_when_decided == 1.0            # a decision is never wrong
    assert result.accuracy > result.bound                  # the ε-DP promise is broken


@pytest.mark.parametrize("lam", [1, 10])
def test_attack_is_no_better_than_chance_on_the_safe_mechanism(lam: int) -> None:
    epsilon = 1 / lam
    result = measure_lsb_attack(dpkit.laplace.laplace_mechanism, 1.0, epsilon, n=2000,
                                rng=seeded(100 + lam))
    assert result.accuracy <= math.exp(epsilon) / (1 + math.exp(epsilon)) + 0.045
    assert result.correct_when_decided < 0.75               # far from certain


def test_correct_interval_is_the_clopper_pearson_interval_of_the_decisions() -> None:
    from dpkit.attacks.laplace import LSBAttackResult
    from dpkit.audit import clopper_pearson

    # 2·500 releases, 40 % decided: 400 decisions, 230 of them right.
    result = LSBAttackResult(500, 0.4, 230 / 400, 0.5375, 0.73)
    assert result.correct_interval() == clopper_pearson(230, 400)
    assert result.correct_interval(0.99) == clopper_pearson(230, 400, 0.99)
    assert LSBAttackResult(500, 0.0, float("nan"), 0.5, 0.73).correct_interval() == (0.0, 1.0)
    with pytest.raises(ValueError, match="confidence"):
        LSBAttackResult(500, 0.0, float("nan"), 0.5, 0.73).correct_interval(1.5)


def test_textbook_outputs_are_reachable_from_their_input() -> None:
    releases = dpkit.naive.laplace_mechanism(np.full(500, 3.0), 2.0, 0.5, rng=seeded(1))
    assert textbook_reachable(releases, 3.0, 2.0, 0.5).all()


def test_attack_names_the_input() -> None:
    releases = dpkit.naive.laplace_mechanism(np.ones(300), 1.0, 1.0, rng=seeded(2))
    guesses = laplace_lsb_attack(releases, 1.0, 1.0)
    assert set(np.unique(guesses)) <= {-1, 1}                # never wrongly says "0"
    assert (guesses == 1).mean() > 0.4


def test_attack_validation() -> None:
    with pytest.raises(ValueError, match="candidates"):
        laplace_lsb_attack([1.0], 1.0, 1.0, candidates=[0.0])
    with pytest.raises(ValueError, match="releases"):
        laplace_lsb_attack([np.nan], 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        textbook_reachable([1.0], 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="n"):
        measure_lsb_attack(dpkit.naive.laplace_mechanism, n=0)


# ------------------------------------------------------------------ the timing attack
# (no timing asserts: the leaky sampler's exposed loop count stands in for its running time)

def counted_release(value: float, rng) -> tuple[float, int]:
    noise, trials = dpkit.naive.leaky_discrete_laplace(2, rng)
    return value + noise, trials


def test_leaky_sampler_is_exact_discrete_laplace() -> None:
    """Chi-square against P[x] ∝ exp(-|x|/2); false failure <= 1e-7 (fixed seed)."""
    rng = seeded(41)
    values = np.array([dpkit.naive.leaky_discrete_laplace(2, rng)[0] for _ in range(20_000)])
    support = np.arange(-8, 9)
    p = np.exp(-np.abs(support) / 2)
    p /= np.exp(-np.abs(np.arange(-200, 201)) / 2).sum()
    observed = [np.sum(values == k) for k in support] + [np.sum(np.abs(values) > 8)]
    expected = np.append(p, 1 - p.sum()) * values.size
    assert stats.chisquare(observed, expected).pvalue > 1e-7


def test_loop_count_grows_with_the_noise() -> None:
    rng = seeded(42)
    draws = [dpkit.naive.leaky_discrete_laplace(2, rng) for _ in range(2000)]
    noise, trials = np.array(draws).T
    assert np.all(trials >= np.abs(noise) + 1)
    assert stats.spearmanr(trials, np.abs(noise)).statistic > 0.8


def test_timing_attack_beats_differential_privacy_on_the_leaky_sampler() -> None:
    """With the loop count, the attack names the input far above e**ε/(1+e**ε).

    Expected accuracy about 0.82 (bound 0.62); failing needs the 2000-release mean to fall
    by 0.1: Hoeffding, exp(-2·2000·0.1²) = e**-40. Likewise the noise-size guess (expected
    about 0.93, chance about 0.54): failure needs a drop of 0.19, probability < e**-100.
    """
    result = measure_timing_attack({"leaky": counted_release}, (0.0, 1.0), scale=2.0,
                                   epsilon=0.5, n_train=2000, n_test=2000,
                                   rng=seeded(43))["leaky"]
    assert result.accuracy >= result.bound + 0.1
    assert result.gain >= 0.1
    assert result.size_accuracy >= result.size_chance + 0.2


def test_timing_attack_gains_nothing_from_a_cost_independent_of_the_noise() -> None:
    """A cost that carries no information (a random number) cannot raise the accuracy.

    Given the learned profile, the attack with an independent cost is a randomised rule on
    the output, so its expected accuracy is at most that of the likelihood rule on the
    output alone (``output_only``): the expected gain is <= 0. The gain is a mean of 8000
    independent terms in [-1, 1]; by Hoeffding it exceeds 0.06 with probability at most
    exp(-8000·0.06²/2) = 5.6e-7. The noise-size guess is a function of the cost only, so
    it is right with probability P[|noise| > training median] (about 0.5, within 0.02 bar
    probability 1e-9 for 4000 training releases); 8000 test releases stay within 0.03 of it
    bar exp(-2·8000·0.03²) = 5.6e-7.
    """
    noise_free = np.random.default_rng(44)

    def random_cost(value: float, rng) -> tuple[float, float]:
        return dpkit.laplace.laplace_mechanism(value, 1.0, 0.5, rng=rng), noise_free.random()

    result = measure_timing_attack({"dpkit": random_cost}, (0.0, 1.0), scale=2.0, epsilon=0.5,
                                   n_train=4000, n_test=8000, rng=seeded(45))["dpkit"]
    assert result.gain <= 0.06
    assert abs(result.size_accuracy - 0.5) <= 0.05


def test_output_only_attack_is_the_nearest_candidate() -> None:
    guesses = timing_attack([0.2, 0.9, -3.0, 4.0], [0, 0, 0, 0], (0.0, 1.0), 2.0, None)
    np.testing.assert_array_equal(guesses, [0, 1, 0, 1])


def test_timing_attack_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="candidates"):
        timing_attack([0.0], [1.0], (0.0,), 2.0, None)
    with pytest.raises(ValueError, match="same length"):
        learn_timing_profile([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="scale"):
        leaky = dpkit.naive.leaky_discrete_laplace
        leaky(0, seeded(1))
