"""Tests of the random binary search (Ilvento 2020, Algorithm 3), the bounded rejection
(Algorithm 4) and the bit counter of :mod:`dpkit._samplers.base2`.

Exactness is checked by exhaustive enumeration: a source that replays every bit string of
a given length shows which outcome each uniform point gives. The statistical tests reject
when a p-value is below 1e-7; there are 3 of them, so a correct sampler fails this module
with probability ≤ 3e-7 < 1e-6 (union bound), and with the fixed seeds never does.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpkit._samplers import base2 as sampling
from dpkit.exponential import Eta, base2_exponential_mechanism, probabilities
from dpkit.rng import RandomSource, seeded

ALPHA = 1e-7


class Exhausted(Exception):
    """The replayed bit string ran out: the sampler asked for more bits."""


class Replay(RandomSource):
    """Hands out the bits of ``point`` (``length`` bits, most significant first)."""

    def __init__(self, point: int, length: int) -> None:
        super().__init__()
        self.point, self.left = point, length

    def bytes(self, n: int) -> bytes:
        raise AssertionError("the samplers under test draw bits only")

    def bits(self, k: int) -> int:
        if k > self.left:
            raise Exhausted
        self.left -= k
        return (self.point >> self.left) & ((1 << k) - 1)


@pytest.mark.parametrize("k, x, y", [
    ([0, 1, 2], 3, 2), ([0, 0, 0, 1], 1, 1), ([2, 0, 5, 1, 1], 5, 3), ([0], 3, 2),
    ([0, 3, 3, 1, 2, 0, 4], 1243, 11),
])
def test_integer_weights_are_the_scaled_exact_weights(k, x, y) -> None:
    weights = sampling.integer_weights(np.array(k), x, y)
    scale = Fraction(2) ** (y * max(k))
    assert [Fraction(w) for w in weights] == [Fraction(x, 2**y) ** v * scale for v in k]


@pytest.mark.parametrize("k, x, y", [
    ([0, 1, 2], 3, 2), ([0, 0, 0, 1], 1, 1), ([2, 0, 5, 1, 1], 5, 3), ([0, 0, 0], 3, 2),
    ([0, 1, 1, 2], 7, 3),
])
def test_random_binary_search_enumerated_exactly(k, x, y) -> None:
    # Every uniform point t in [0, 2**m) of one round: t < T gives the outcome whose
    # cumulative interval holds t, using at most m bits; t ≥ T (the dummy ⊥) starts a new
    # round. So each round returns i for exactly
    # w_i of the 2**m points: probability w_i / T overall (Lemma 3.7, first half).
    weights = sampling.integer_weights(np.array(k), x, y)
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    m = (total - 1).bit_length()
    hits = [0] * len(k)
    for t in range(1 << m):
        index = sampling.search_round(cumulative, Replay(t, m))
        if t >= total:
            assert index is None
            continue
        assert cumulative[index] > t and (index == 0 or cumulative[index - 1] <= t)
        hits[index] += 1
    assert hits == weights


def test_random_binary_search_mechanism_matches_exact_probabilities() -> None:
    # Non-integer losses exercise the randomized rounding before the search.
    eta = Eta(5, 3)
    utilities = [0.0, 0.5, 1.25, 2.0, 3.75, 1.0]
    exact = np.array([float(p) for p in probabilities(utilities, eta, utility_min=0,
                                                       utility_max=4)])
    rng, draws = seeded(37), 12_000
    counts = np.bincount([base2_exponential_mechanism(utilities, eta, utility_min=0,
                                                      utility_max=4, method="search",
                                                      rng=rng) for _ in range(draws)],
                         minlength=len(utilities))
    assert stats.chisquare(counts, exact * draws).pvalue > ALPHA


def test_random_binary_search_uses_fewer_bits_than_a_full_point() -> None:
    # Lemma 3.7, second half, on u(o) = o: Algorithm 2 draws p bits per round; the search
    # stops as soon as the bits decide, far below p on average (and never above m per round).
    n, eta = 200, Eta.from_epsilon(1.0)
    k = np.arange(n, dtype=np.int64)
    x, y = eta.reduced()
    counter = sampling.CountingSource(seeded(5))
    for _ in range(200):
        sampling.random_binary_search_sample(k, x, y, counter)
    search_mean = counter.count / 200
    p = y * (n - 1) + n.bit_length()
    assert search_mean < p / 20
    counter = sampling.CountingSource(seeded(5))
    for _ in range(50):
        base2_exponential_mechanism(k.astype(float), eta, utility_min=0, utility_max=n - 1,
                                    method="full", rng=counter)
    assert counter.count / 50 >= p


@pytest.mark.parametrize("total", [1, 5, 8, 9, 13])
def test_bounded_rejection_enumerated_exactly(total) -> None:
    # Algorithm 4 with r rounds: over all r·b-bit strings, each value below total comes out
    # equally often, None exactly (2**b - total)**r times, and every string is read whole
    # (the same number of bits whatever the outcome).
    rounds, bits = 2, (total - 1).bit_length()
    outcomes: dict[int | None, int] = {}
    for string in range(1 << (rounds * bits)):
        source = Replay(string, rounds * bits)
        value = sampling.get_random_value(total, source, rounds=rounds)
        assert source.left == 0
        outcomes[value] = outcomes.get(value, 0) + 1
    failures = outcomes.pop(None, 0)
    assert failures == ((1 << bits) - total) ** rounds
    assert sorted(outcomes) == list(range(total))
    assert len(set(outcomes.values())) == 1


def test_bounded_rejection_failure_rate_and_unbounded_uniformity() -> None:
    rng = seeded(11)
    total = 9                       # acceptance 9/16: failure (7/16)**r
    draws = 20_000
    values = [sampling.get_random_value(total, rng) for _ in range(draws)]
    counts = np.bincount(values, minlength=total)
    assert stats.chisquare(counts).pvalue > ALPHA
    failures = sum(sampling.get_random_value(total, rng, rounds=3) is None
                   for _ in range(draws))
    rate = (7 / 16) ** 3
    assert stats.binomtest(failures, draws, rate).pvalue > ALPHA


def test_counting_source_counts_bits_and_bytes() -> None:
    counter = sampling.CountingSource(seeded(0))
    counter.bits(3)
    counter.uint64(2)               # 16 bytes
    assert counter.count == 3 + 128
