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

import dpkit.laplace
import dpkit.naive
from dpkit.attacks import laplace_lsb_attack, measure_lsb_attack, textbook_reachable
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
