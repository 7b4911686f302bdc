"""Statistical tests of the exact samplers, one set per sampler path.

:func:`dpkit._samplers.noise.discrete_laplace` and
:func:`dpkit._samplers.noise.discrete_gaussian` route a request by its size and scale: one
sample at a time (``size=None``, and small sizes), the block-envelope sampler of
:mod:`dpkit._samplers.envelope` for arrays (pure inversion, block width 1, below scale 32;
blocks of width ``2**L`` with an acceptance step above, including the mechanisms' scales)
and, for the very largest scales, the fixed-cost sampler again. The cases below cover each
route as :mod:`dpkit._samplers.noise` defines them today (the case ids name the route); the
tests only use the public call ``sampler(scale, rng, size)`` and the exact
target distribution, so they stay valid if the routing changes.

Four categories, as in the test suites of mature DP libraries:

* ``chi_square``: Pearson's goodness of fit against the exact pmf, on bins that each expect
  at least 20 samples; fail above the chi-square quantile at ``1 - 1e-6``.
* ``tail``: the mass beyond a few scales, a two-sided exact binomial test.
* ``symmetry``: positive vs negative counts (sign test) and a bin-by-bin mirror comparison
  (sum of ``(c+ - c-)**2 / (c+ + c-)``, chi-square with one degree per bin pair).
* ``log_ratio``: for outputs ``x`` and ``x + 1`` (and, for large scales, all even ``x`` in a
  range against ``x + 1``), the ratio of the two probabilities must be inside the exact
  privacy band (``e**±1/scale`` for the discrete Laplace, ``exp(±|2x+1|/(2σ²))`` for the
  discrete Gaussian), up to a Clopper–Pearson interval.

False-failure probability: every test fails a correct sampler with probability at most
1e-6 (asymptotically for the chi-square statistics; exactly for the binomial and
Clopper–Pearson tests): thresholds are computed from ``1e-6`` (Bonferroni-divided where a
test makes several comparisons). Seeds are fixed, so a run is reproducible.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from dpkit import audit
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.rng import seeded

ALPHA = 1e-6
MIN_EXPECTED = 20


@dataclass(frozen=True)
class SamplerCase:
    id: str
    kind: str            # "laplace" or "gaussian"
    parameter: Fraction  # the Laplace scale or the Gaussian sigma2
    size: int | None     # per call; None: one sample per call
    total: int           # samples in all
    seed: int

    @property
    def spread(self) -> float:
        """The scale (Laplace) or σ (Gaussian), as a float."""
        if self.kind == "laplace":
            return float(self.parameter)
        return math.sqrt(float(self.parameter))


CASES = [
    SamplerCase("laplace-one-at-a-time", "laplace", Fraction(5, 2), None, 20_000, 1),
    SamplerCase("laplace-one-at-a-time-scale-1/3", "laplace", Fraction(1, 3), None, 20_000, 20),
    SamplerCase("laplace-one-at-a-time-2**21", "laplace", 2**21 + Fraction(1, 3), None, 20_000,
                21),
    SamplerCase("laplace-few-per-call", "laplace", Fraction(5, 2), 4, 20_000, 2),
    SamplerCase("laplace-inversion", "laplace", Fraction(5, 2), 1_000_000, 1_000_000, 3),
    SamplerCase("laplace-inversion-scale-1/3", "laplace", Fraction(1, 3), 1_000_000,
                1_000_000, 4),
    SamplerCase("laplace-inversion-scale-63/2", "laplace", Fraction(63, 2), 1_000_000,
                1_000_000, 5),
    SamplerCase("laplace-envelope-scale-33", "laplace", Fraction(33), 1_000_000, 1_000_000, 9),
    SamplerCase("laplace-envelope", "laplace", Fraction(12001, 4), 1_000_000, 1_000_000, 6),
    SamplerCase("laplace-mechanism-2**21", "laplace", 2**21 + Fraction(1, 3), 1_000_000,
                1_000_000, 10),
    SamplerCase("laplace-envelope-2**40", "laplace", 2**40 + Fraction(1, 3), 1_000_000,
                1_000_000, 7),
    SamplerCase("laplace-large-scale-2**60", "laplace", Fraction(2**60), 4_000, 20_000, 8),
    SamplerCase("gaussian-one-at-a-time", "gaussian", Fraction(9, 2), None, 10_000, 11),
    SamplerCase("gaussian-one-at-a-time-sigma-2**23", "gaussian", Fraction(2**46), None,
                10_000, 22),
    SamplerCase("gaussian-few-per-call", "gaussian", Fraction(9, 2), 4, 10_000, 12),
    SamplerCase("gaussian-inversion", "gaussian", Fraction(100), 1_000_000, 1_000_000, 13),
    SamplerCase("gaussian-inversion-sigma2-1/4", "gaussian", Fraction(1, 4), 1_000_000,
                1_000_000, 14),
    SamplerCase("gaussian-envelope-sigma-40", "gaussian", Fraction(1600), 1_000_000,
                1_000_000, 18),
    SamplerCase("gaussian-envelope", "gaussian", 2**22 + Fraction(1, 3), 1_000_000, 1_000_000,
                15),
    SamplerCase("gaussian-mechanism-sigma-2**23", "gaussian", Fraction(2**46), 1_000_000,
                1_000_000, 19),
    SamplerCase("gaussian-envelope-2**80", "gaussian", Fraction(2**80), 1_000_000, 1_000_000,
                16),
    SamplerCase("gaussian-large-scale-2**106", "gaussian", Fraction(2**106), 2_000, 6_000,
                17),
]
IDS = [c.id for c in CASES]


# ---------------------------------------------------------------------- exact distributions

def _laplace_cdf(scale: Fraction) -> Callable[[int], float]:
    """``P[X <= x]`` for integer ``x``: ``P[X >= k] = p**k/(1+p)`` for ``k >= 1``."""
    p = math.exp(-1 / float(scale))

    def cdf(x: int) -> float:
        if x >= 0:
            return 1.0 - math.exp(-float(Fraction(x + 1) / scale)) / (1 + p)
        return math.exp(-float(Fraction(-x) / scale)) / (1 + p)
    return cdf


def _gaussian_cdf(sigma2: Fraction) -> Callable[[int], float]:
    """``P[X <= x]``: an exact sum for moderate σ; for σ >= 2**11 the normal CDF at
    ``x + 1/2``, whose error (midpoint rule, and the normaliser's Poisson-summation term
    below exp(-2π²σ²)) is below 1e-7 relative."""
    sigma = math.sqrt(float(sigma2))
    if sigma < 2**11:
        reach = int(40 * sigma) + 2
        xs = np.arange(-reach, reach + 1)
        weights = np.exp(-(xs.astype(np.float64) ** 2) / (2 * float(sigma2)))
        cumulative = np.cumsum(weights) / weights.sum()

        def cdf(x: int) -> float:
            if x < -reach:
                return 0.0
            return float(cumulative[min(x, reach) + reach])
        return cdf
    return lambda x: float(special.ndtr((x + 0.5) / sigma))


def _cdf(case: SamplerCase) -> Callable[[int], float]:
    return _laplace_cdf(case.parameter) if case.kind == "laplace" \
        else _gaussian_cdf(case.parameter)


def _pmf_ratio_band(case: SamplerCase, low: int, high: int) -> tuple[float, float]:
    """Bounds on ``P[x + 1] / P[x]`` over ``low <= x <= high`` (the exact privacy band)."""
    if case.kind == "laplace":
        b = 1 / float(case.parameter)
        return math.exp(-b), math.exp(b)
    worst = max(abs(2 * low + 1), abs(2 * high + 1))
    b = worst / (2 * float(case.parameter)) * (1 + 1e-12)
    return math.exp(-b), math.exp(b)


# ---------------------------------------------------------------------------- the samples

@functools.cache
def _samples(case_id: str) -> tuple[int, ...] | np.ndarray:
    case = next(c for c in CASES if c.id == case_id)
    sampler = discrete_laplace if case.kind == "laplace" else discrete_gaussian
    source = seeded(case.seed)
    if case.size is None:
        draws = [np.array([sampler(case.parameter, source)], dtype=object)
                 for _ in range(case.total)]
    else:
        draws = [np.asarray(sampler(case.parameter, source, size=case.size))
                 for _ in range(case.total // case.size)]
    if all(d.dtype == np.int64 for d in draws):
        return np.sort(np.concatenate(draws))
    values = sorted(int(v) for d in draws for v in d)
    if all(abs(v) < 2**62 for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def _count_le(samples: np.ndarray, x: int) -> int:
    """How many samples are ``<= x`` (samples sorted; exact for Python-int arrays too)."""
    if samples.dtype == object:
        return bisect.bisect_right(samples, x)
    return int(np.searchsorted(samples, x, side="right"))


def _edges(case: SamplerCase, reach: float) -> list[int]:
    """Integer cut points ``e``: bins ``(-inf, e0], (e0, e1], ...``; about 120 of them."""
    limit = max(2, math.ceil(reach * case.spread))
    width = max(1, limit // 60)
    return list(range(-limit, limit + 1, width))


def _merged_bins(case: SamplerCase, edges: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Observed and expected counts, adjacent bins merged until each expects >= 20."""
    samples = _samples(case.id)
    n = len(samples)
    cdf = _cdf(case)
    cum_p = [0.0] + [cdf(e) for e in edges] + [1.0]
    cum_c = [0] + [_count_le(samples, e) for e in edges] + [n]
    observed, expected = [], []
    p_acc, c_acc = 0.0, 0
    for i in range(len(cum_p) - 1):
        p_acc += cum_p[i + 1] - cum_p[i]
        c_acc += cum_c[i + 1] - cum_c[i]
        if p_acc * n >= MIN_EXPECTED:
            observed.append(c_acc)
            expected.append(p_acc * n)
            p_acc, c_acc = 0.0, 0
    observed[-1] += c_acc
    expected[-1] += p_acc * n
    return np.array(observed, dtype=float), np.array(expected)


# ------------------------------------------------------------------------------ the tests

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_chi_square_goodness_of_fit(case: SamplerCase) -> None:
    """Pearson's chi-square against the exact pmf; false failure <= 1e-6 (asymptotic)."""
    observed, expected = _merged_bins(case, _edges(case, 12 if case.kind == "laplace" else 6))
    assert observed.size >= 3
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    limit = float(stats.chi2.isf(ALPHA, observed.size - 1))
    assert statistic <= limit, f"chi-square {statistic:.1f} > {limit:.1f} ({observed.size} bins)"


def _tail_probability(case: SamplerCase, k: int) -> float:
    """``P[|X| >= k]`` for an integer ``k >= 1``: ``2·(1 - P[X <= k - 1])`` by symmetry."""
    if case.kind == "laplace":
        p = math.exp(-1 / float(case.parameter))
        return 2 * math.exp(-float(Fraction(k) / case.parameter)) / (1 + p)
    return 2 * (1 - _cdf(case)(k - 1))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tail_mass(case: SamplerCase) -> None:
    """Mass beyond 3 and 6 scales (Laplace) or 2.5 and 4 σ (Gaussian): two-sided exact
    binomial tests at 2.5e-7 per side each (total false failure <= 1e-6)."""
    samples = _samples(case.id)
    n = len(samples)
    multiples = (3, 6) if case.kind == "laplace" else (2.5, 4)
    for multiple in multiples:
        k = max(1, math.ceil(multiple * case.spread))
        q = _tail_probability(case, k)
        count = _count_le(samples, -k) + n - _count_le(samples, k - 1)
        low = stats.binom.cdf(count, n, q)
        high = stats.binom.sf(count - 1, n, q)
        assert min(low, high) >= ALPHA / 4, (
            f"P[|X| >= {k}]: {count} of {n}, expected {q * n:.1f} "
            f"(tail p-values {low:.2g}, {high:.2g})")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_symmetry(case: SamplerCase) -> None:
    """Sign test (5e-7) and mirrored bins (chi-square at 1 - 5e-7): total false failure
    <= 1e-6."""
    samples = _samples(case.id)
    n = len(samples)
    negative = _count_le(samples, -1)
    positive = n - _count_le(samples, 0)
    assert stats.binomtest(positive, positive + negative, 0.5).pvalue >= ALPHA / 2
    statistic, pairs = 0.0, 0
    for e0, e1 in zip(_edges(case, 6)[::2][:-1], _edges(case, 6)[::2][1:], strict=True):
        if e0 < 0:
            continue   # bins (e0, e1] on the right, [-e1, -e0) on the left
        right = _count_le(samples, e1) - _count_le(samples, e0)
        left = _count_le(samples, -e0 - 1) - _count_le(samples, -e1 - 1)
        if right + left >= 2 * MIN_EXPECTED:
            statistic += (right - left) ** 2 / (right + left)
            pairs += 1
    assert pairs >= 1
    assert statistic <= stats.chi2.isf(ALPHA / 2, pairs), (statistic, pairs)


def _sorted_unique(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and their counts, for sorted samples (faster than ``np.unique``)."""
    change = np.ones(len(samples), dtype=bool)
    change[1:] = (samples[1:] != samples[:-1]).astype(bool)
    starts = np.flatnonzero(change)
    return samples[starts], np.diff(np.append(starts, len(samples)))


def _counts_at(values: np.ndarray, counts: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """How many samples equal each of ``xs`` (``values``, ``counts`` from ``np.unique``)."""
    index = np.minimum(np.searchsorted(values, xs), values.size - 1)
    return np.where(values[index] == xs, counts[index], 0).astype(np.int64)


def _parity_counts(samples: np.ndarray, start: int, stop: int) -> tuple[int, int]:
    """Samples that are even in ``[start, stop)`` and odd in ``[start + 1, stop + 1)``."""
    inside = (samples >= start) & (samples <= stop)
    odd = (samples % 2 == 1).astype(bool)
    k_this = int(np.count_nonzero(inside & ~odd & (samples < stop)))
    k_next = int(np.count_nonzero(inside & odd & (samples > start)))
    return k_next, k_this


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_ratio_of_neighbouring_outputs(case: SamplerCase) -> None:
    """``P[x+1]/P[x]`` inside the exact privacy band, up to Clopper–Pearson intervals
    (Bonferroni: total false failure <= 1e-6).

    Per value ``x`` where ``x`` and ``x + 1`` were drawn at least 100 times together, and
    aggregated over every even ``x`` in ``[0, L)`` (and in ``[-L, 0)``) against ``x + 1``,
    ``L`` about 1.5 scales (for large scales, a test of the low bits): conditional on the
    pair's total, the count of ``x + 1`` is binomial with ``q = r/(1 + r)`` for the ratio
    ``r``.
    """
    samples = _samples(case.id)
    values, counts = _sorted_unique(samples)
    xs = _sorted_unique(np.sort(np.concatenate([values, values - 1])))[0]
    here = _counts_at(values, counts, xs)
    after = _counts_at(values, counts, xs + 1)
    comparisons: list[tuple[int, int, float, float]] = []   # (k_next, k_this, band_lo, band_hi)
    for i in np.flatnonzero(here + after >= 100):
        x = int(xs[i])
        comparisons.append((int(after[i]), int(here[i]), *_pmf_ratio_band(case, x, x)))
    half = max(2, 2 * math.ceil(0.75 * case.spread))
    for start in (0, -half):
        k_next, k_this = _parity_counts(samples, start, start + half)
        if k_this + k_next >= 100:
            comparisons.append((k_next, k_this,
                                *_pmf_ratio_band(case, start, start + half - 1)))
    assert comparisons
    confidence = 1 - ALPHA / len(comparisons)
    for k_next, k_this, band_lo, band_hi in comparisons:
        q_lo, q_hi = audit.clopper_pearson(k_next, k_next + k_this, confidence)
        r_lo = q_lo / (1 - q_lo)
        r_hi = math.inf if q_hi >= 1 else q_hi / (1 - q_hi)
        assert r_lo <= band_hi and r_hi >= band_lo, (
            f"ratio in [{r_lo:.6g}, {r_hi:.6g}] outside [{band_lo:.6g}, {band_hi:.6g}] "
            f"({k_next} vs {k_this})")


def test_every_path_is_covered() -> None:
    """The case list covers each route of :mod:`dpkit._samplers.noise` for both samplers."""
    for kind in ("laplace", "gaussian"):
        routes = {c.id.split("-", 1)[1].split("-")[0] for c in CASES if c.kind == kind}
        assert {"one", "few", "inversion", "envelope", "mechanism", "large"} <= routes
