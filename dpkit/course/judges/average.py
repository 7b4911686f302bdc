"""Judge for the private average with a privately chosen clipping bound (``auto_avg``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.audit import clopper_pearson
from dpkit.course.judges._base import (
    Judgement,
    Rejection,
    call,
    gamma_reject,
    judged,
    ks_reject,
    real,
    seeds,
)
from dpkit.laplace import laplace_grid
from dpkit.rng import seeded

__all__ = ["AUTO_AVG_CALLS", "judge_auto_avg", "recover_releases"]

_PAIRS, _AUDIT_RUNS, _REPEATS, _FALLBACK_RUNS = 400, 200, 3, 2
#: Calls of the student's function one :func:`judge_auto_avg` makes (at most).
AUTO_AVG_CALLS = 2 * _PAIRS + _AUDIT_RUNS + _REPEATS + _FALLBACK_RUNS

_ALPHA_COUNT_KS, _ALPHA_COUNT_SCALE = 2e-7, 2e-7
_ALPHA_SUM, _ALPHA_INDEPENDENT, _ALPHA_AUDIT = 2e-7, 1e-7, 2e-7
_SUM_CUT = 0.9                # |noise of the sum| > 0.9 scales: probability >= e^-0.9
_AUDIT_SCALES = 12            # the audit's event: average >= mean + 12 noise scales / rows
_LATTICE_SLACK = 1e-5         # discrete Laplace on a grid 2^-20 fine vs continuous (KS)
_MAX_BITS = 45                # a release of laplace_mechanism here uses fewer bits
_GRID_TOLERANCE = 0.1         # in units of the last bit checked (recovery error < 0.05)

_RANDOMNESS = ("with sources seeded alike your function returned different averages: all "
               "its randomness must come from rng (pass rng=rng to choose_clip_bound and to "
               "both laplace_mechanism calls)")


def recover_releases(first: np.ndarray, second: np.ndarray, extra: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The noisy sums and noisy counts behind averages on ``D`` and ``D`` + ``extra`` zeros.

    With the same seed, a correct answer draws the same bound and noises on both datasets
    (rows of 0 change no clipping query and no clipped sum), so ``first = S/C`` and
    ``second = S/(C + extra)``: ``S = extra·first·second/(first − second)`` and
    ``C = S/first`` (relative error below 2⁻⁴⁹ when ``second ≈ first/2``).

    >>> s, c = recover_releases(np.array([40.0]), np.array([20.0]), 1000)
    >>> s.tolist(), c.tolist()
    ([40000.0], [1000.0])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        sums = extra * first * second / (first - second)
        return sums, sums / first


def _data(rng: np.random.Generator, epsilon: float) -> dict[str, Any]:
    """Hidden columns: ``D1``, 3,000–5,000 integers in [0, V], half of them exactly V
    (V in [20, 150]); ``D2`` = ``D1`` with as many zeros (same clipping queries and
    clipped sums, twice the rows); ``D3`` = ``D1`` with one more row ``W = 72·V/ε``
    (a neighbour); ``D4``: 1,000–1,500 values in [2⁴¹, 2⁴²], above every default
    candidate (``choose_clip_bound`` returns None with the default grid)."""
    top, rows = int(rng.integers(20, 151)), int(rng.integers(3000, 5001))
    first = np.concatenate([np.full(rows // 2, top), rng.integers(0, top, rows - rows // 2)])
    first = rng.permutation(first).astype(np.float64)
    second = rng.permutation(np.concatenate([first, np.zeros(rows)]))
    outlier = float(round(6 * _AUDIT_SCALES * top / epsilon))
    third = np.insert(first, int(rng.integers(rows + 1)), outlier)
    huge = np.round(rng.uniform(2.0**41, 2.0**42, int(rng.integers(1000, 1501))))
    return {"top": top, "rows": rows, "D1": first, "D2": second, "D3": third, "D4": huge}


def judge_auto_avg(fn: Callable[[Any, float, Any], Any], rng: np.random.Generator) -> Judgement:
    """Hidden test of ``fn(values, epsilon, rng)``: a bound chosen by
    ``dpkit.svt.choose_clip_bound`` at ε/3, the clipped sum and the number of rows released
    by ``dpkit.laplace.laplace_mechanism`` at ε/3 each, divided (exercise
    ``ex-svt-auto-avg``).

    The candidate bounds are the student's choice (any data-independent increasing grid),
    so the law of the chosen bound, and with it the sum's noise scale ``3b/ε``, is not
    fixed by the exercise: the judge tests what every correct answer shares.

    **Hidden inputs** (from ``rng``): ε log-uniform in [0.5, 1.5]; the columns of
    :func:`_data`; each call gets a fresh ``dpkit.rng.seeded`` source from ``rng``.

    **Method.** 400 seeds are each used on ``D1`` and on ``D2`` (``D1`` plus as many zeros):
    a correct answer then draws the same bound and noises on both, and
    :func:`recover_releases` gives back, per seed, its noisy clipped sum ``S`` and the
    count's noise ``Z = C − rows``, exactly enough to see their last bits.

    **Tests**, with their false-failure probabilities for a correct answer:

    * results are finite; 3 calls repeated with sources seeded alike agree (randomness from
      ``rng``, which the method needs); 2 calls on ``D4``, where ``choose_clip_bound``
      returns None with the default grid, return a finite number: 0;
    * the count's noise ``Z`` is ``Lap(3/ε)``: KS (DKW bound, 2e-7) and
      ``Σ|Z|/(3/ε)`` against Gamma(400, 1) (2e-7); an exact count gives ``Z = 0``;
    * ``laplace_mechanism`` was used: every ``Z`` is a multiple of ``2**-20`` (the grid of
      ``laplace_grid(1, ε/3)``) and every ``S`` has at most 45 significant bits (its grid
      ``2**k`` is ``b·2⁻²⁰`` or coarser; true when ``b > |S|·2⁻²⁵``, i.e. for any bound
      above about 0.01 here): 0; NumPy float noise passes each with probability below
      0.2 per seed;
    * the sum has enough noise: for every bound ``b`` a correct answer can choose,
      ``P(|S − Σ D1| > 0.9·3(V − 1)/ε) >= e^-0.9`` (Anderson's inequality for ``b >= V − 1``,
      the clipping bias beyond that threshold for smaller ``b``); one-sided exact binomial
      test over the 400 seeds: 2e-7;
    * the two noises are independent: Kendall's τ between ``S`` and ``Z``, Hoeffding's
      bound for U-statistics: 1e-7;
    * ε-DP on the neighbours ``D1``, ``D3``: the event "average >= mean(D1) + 36V/(ε·rows)"
      (12 scales of the sum's noise) must not be more than ``e^ε`` times more frequent on
      ``D3`` (200 runs) than on ``D1`` (the 400 runs above); Clopper–Pearson bounds at
      1 − 1e-7 each: 2e-7. True for every ε-DP answer, whatever its grid.

    In all at most **1e-6** (Bonferroni). **Calls**: 1,005 (:data:`AUTO_AVG_CALLS`).
    **Caught**: ε spent on each step (3ε in all), an exact or wrongly noised count, a
    sum noised for sensitivity 1 or with ε, NumPy float noise, a noisy sum as the
    denominator, a bound taken from the data (its maximum) or no clipping, a missing
    fallback. **Not judged**: the budget of the bound selection on its own and the grid
    of candidates (the law of ``b`` depends on the grid); extra noise (a coarse grid
    adds it legitimately); a data-dependent grid whose effect is confined to rare events.
    """
    epsilon = round(float(math.exp(rng.uniform(math.log(0.5), math.log(1.5)))), 3)
    data = _data(rng, epsilon)
    pair_seeds, audit_seeds = seeds(rng, _PAIRS), seeds(rng, _AUDIT_RUNS)
    fallback_seeds = seeds(rng, _FALLBACK_RUNS)

    def average(values: np.ndarray, seed: int, where: str = "on a hidden column") -> float:
        return real(call(fn, values.copy(), epsilon, seeded(int(seed)), where=where),
                    where=where)

    def body() -> str:
        for seed in fallback_seeds:
            average(data["D4"], seed, where="on a hidden column of values above every "
                    "candidate bound of DEFAULT_CLIP_BOUNDS (choose_clip_bound returns None: "
                    "fall back on a data-independent bound)")
        first = np.array([average(data["D1"], s) for s in pair_seeds])
        if any(average(data["D1"], s) != r for s, r in zip(pair_seeds[:_REPEATS], first,
                                                          strict=False)):
            raise Rejection(_RANDOMNESS)
        second = np.array([average(data["D2"], s) for s in pair_seeds])
        _judge_releases(first, second, data, epsilon)
        third = np.array([average(data["D3"], s) for s in audit_seeds])
        _audit(first, third, data, epsilon)
        return ("your average has a noisy count and a noisy clipped sum released with "
                "laplace_mechanism and enough noise, and passes a privacy audit on "
                "neighbouring columns you have not seen")

    return judged(body)


def _judge_releases(first: np.ndarray, second: np.ndarray, data: dict[str, Any],
                    epsilon: float) -> None:
    rows, top = data["rows"], data["top"]
    if np.mean(first == second) > 0.5:
        raise Rejection("adding rows of value 0 to a column did not change your average: "
                        "the denominator must be a noisy count of *rows*, which grows with "
                        "them, not a noisy sum")
    sums, counts = recover_releases(first, second, rows)
    noise = counts - rows
    if not (np.all(np.isfinite(sums)) and np.all(np.isfinite(noise))):
        raise Rejection("your average does not behave like a noisy clipped sum divided by a "
                        "noisy count of rows (adding rows of value 0 changed it otherwise)")
    if np.all(np.abs(noise) < 1e-6):
        raise Rejection("adding rows of value 0 changed your average exactly as dividing by "
                        "the exact number of rows would: the number of rows is private too, "
                        "release it with laplace_mechanism")
    scale = 3 / epsilon
    spread = float(np.mean(np.abs(noise)) / scale)
    if ks_reject(stats.laplace.cdf(noise / scale), _ALPHA_COUNT_KS, _LATTICE_SLACK) or \
            gamma_reject(float(np.sum(np.abs(noise)) / scale), noise.size, _ALPHA_COUNT_SCALE):
        raise Rejection(f"the noise of your count of rows is not Lap(1/(ε/3)): {_why(spread)}")
    unit = 2.0 ** laplace_grid(1.0, epsilon / 3).exponent
    if np.any(np.abs(noise / unit - np.round(noise / unit)) > _GRID_TOLERANCE) or \
            not all(_few_bits(s) for s in sums.tolist()):
        raise Rejection("your noisy sum or count is not a release of "
                        "dpkit.laplace.laplace_mechanism (its value is not on the mechanism's "
                        "power-of-two grid): the exercise asks for laplace_mechanism, whose "
                        "exact noise resists the floating-point attack; float noise from "
                        "NumPy does not")
    cut = _SUM_CUT * 3 * (top - 1) / epsilon
    wide = int(np.sum(np.abs(sums - float(np.sum(data["D1"]))) > cut))
    least = math.exp(-_SUM_CUT) * (1 - _LATTICE_SLACK)
    if stats.binomtest(wide, sums.size, least, alternative="less").pvalue < _ALPHA_SUM:
        raise Rejection("your clipped sum carries too little noise for ε-DP: its sensitivity "
                        "is the chosen bound b (one person adds at most b), and it gets ε/3")
    tau = float(stats.kendalltau(sums, noise).statistic)
    if abs(tau) > math.sqrt(2 * math.log(2 / _ALPHA_INDEPENDENT) / (sums.size // 2)):
        raise Rejection("the noises of your sum and of your count are not independent: each "
                        "release must draw its own noise")


def _why(spread: float) -> str:
    """What a count noise ``spread`` times the right one most likely means."""
    for ratio, meaning in ((1 / 3, "it looks like ε is spent on the count alone; each of "
                                   "the three steps gets ε/3, so that they add up to ε"),
                           (2 / 3, "it looks like ε/2 is spent on the count; each of the "
                                   "three steps gets ε/3, so that they add up to ε"),
                           (3.0, "it looks like the count's noise has scale 1/ε")):
        if abs(spread / ratio - 1) < 0.12:
            return meaning
    if spread < 0.95:
        return "too little noise for ε/3 and sensitivity 1"
    if spread > 1.05:
        return ("more noise than that: private, but the exercise gives each of the three "
                "steps ε/3")
    return "its shape is not that of Laplace noise"


def _few_bits(value: float) -> bool:
    """Whether ``value`` (known to a relative error of 2⁻⁴⁹) has at most 45 significant bits."""
    if value == 0:
        return True
    _, exponent = math.frexp(value)
    units = math.ldexp(value, _MAX_BITS - exponent)
    return abs(units - round(units)) <= _GRID_TOLERANCE


def _audit(first: np.ndarray, third: np.ndarray, data: dict[str, Any], epsilon: float) -> None:
    """ε-DP on neighbours: the event must not be more than e^ε more likely on ``D3``."""
    mean = float(np.mean(data["D1"]))
    cut = mean + _AUDIT_SCALES * 3 * data["top"] / (epsilon * data["rows"])
    hits_first, hits_third = int(np.sum(first >= cut)), int(np.sum(third >= cut))
    confidence = 1 - _ALPHA_AUDIT
    upper_first = clopper_pearson(hits_first, first.size, confidence)[1]
    lower_third = clopper_pearson(hits_third, third.size, confidence)[0]
    if lower_third > math.exp(epsilon * (1 + 1e-9)) * upper_first:
        raise Rejection("adding one person with a large value made large averages far more "
                        "frequent than ε-DP allows: every value must be clipped to [0, b], "
                        "with b chosen by choose_clip_bound over candidates fixed in advance, "
                        "never taken from the data")
