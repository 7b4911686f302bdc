"""Timing audit: can an adversary who times a release tell neighbouring inputs apart?

For every public release function of dpkit, at every size where the size makes sense
(scalar, 64, 65, 1000 and 100,000 values), and for adversarial pairs of neighbouring
inputs ``(x, x')`` within the declared sensitivity, this script times ``N`` calls on each
side (default ``2·10**4``), randomly interleaved (a seeded shuffle of the call order), each
with :func:`time.perf_counter_ns` around the call only (after a warm-up, with automatic
garbage collection off; a collection runs between calls every 1024 calls, outside the
timers). The statistics, all in :func:`certify`:

* each side's timings are split in two halves at random;
* on the first halves, an event ``time > t`` or ``time < t`` (``t`` on a grid of quantiles
  of the pooled first-half timings) is chosen for each orientation (an event likelier under
  ``x`` than under ``x'``, and the reverse), maximising the log-ratio of its probabilities
  as a Clopper–Pearson lower confidence bound (so a tiny event with a zero count does not
  win by luck);
* on the held-out halves each chosen event is certified: ``ε = max(0, log(lower/upper))``,
  ``lower`` the Clopper–Pearson lower bound of ``P[E | x]`` and ``upper`` the upper bound
  of ``P[E | x']`` (:func:`dpkit.audit.clopper_pearson`). Each orientation gets half the
  failure probability, so the larger of the two is a lower bound on the ε of the timing
  channel with confidence ``1 − 1e-6`` for the row (as each event was chosen without the
  held-out half). A release whose time leaks more than its promised ε is then broken;
* a single-timing guesser (``x`` if the time is above ``t``, or below, ``t`` and the side
  chosen on the first halves) is scored on the held-out halves: chance is 0.5.

Verdict: ``pass`` when the certified ε is at most 0.05 and the accuracy at most 0.52;
``LEAK`` when the certified ε is above 0.05, or the accuracy above 0.52 and significantly
above chance (its Clopper–Pearson lower bound at ``1 − 1e-6`` above 0.5); ``LEAK > promised
ε`` when the timing alone refutes the privacy promise; else ``unsure``: an accuracy above
0.52 that these calls cannot tell from chance (the accuracy of a coin has standard
deviation ``0.5/sqrt(2m)`` on ``m`` held-out calls per side: 0.0035 at ``m = 10**4``, 0.016
at ``m = 500``).
An audit can refute a timing claim, never prove one: ``pass`` only says that these pairs,
these calls, on this machine under this load, showed nothing.

Each row's calls per side are ``min(--calls, --row-seconds / (2 · cost of one call))``,
at least ``--min-calls``: rows of 100,000 values (or 1000 SVT queries) get fewer calls so
that a full run stays within about half an hour; the table states each row's calls. Not
run, as one call takes 0.2 s to 1 s: SVT on streams of 100,000 queries, and Laplace on
100,000 values held as int64 or Python objects.

The table is printed and written to ``benchmarks/results/timing.md`` and ``timing.json``
(``timing_quick.*`` with ``--quick``). The dpkit measured is the one Python imports: the
output records its path and the commit of its checkout.

Run: ``.venv/bin/python benchmarks/timing.py`` (``--quick`` for a few minutes' check,
``--only laplace`` to run matching rows).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

import dpkit
import dpkit.timing
from dpkit.audit import clopper_pearson
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.gaussian import gaussian_mechanism, mechanism_parameters
from dpkit.laplace import laplace_grid, laplace_mechanism, sample_releases
from dpkit.randomized_response import randomized_response
from dpkit.snapping import snapping_mechanism
from dpkit.svt import (
    DEFAULT_CLIP_BOUNDS,
    DEFAULT_MAX_ROWS,
    above_threshold,
    above_threshold_runs,
    auto_avg,
    auto_avg_runs,
    choose_clip_bound,
    clip_bound_runs,
    range_queries,
    sparse,
)
from dpkit.svt.core import exact_epsilon, grid_bits

RESULTS = Path(__file__).resolve().parent / "results"
CONFIDENCE = 1 - 1e-6
#: Quantile levels of the pooled first-half timings where events are cut.
LEVELS = np.unique(np.concatenate([[0.001, 0.002, 0.005], np.linspace(0.01, 0.99, 99),
                                   [0.995, 0.998, 0.999]]))
PASS_EPSILON, PASS_ACCURACY = 0.05, 0.52
SIZES = (64, 65, 1000, 100_000)
FULL_CALLS, QUICK_CALLS = 20_000, 2_000
FULL_ROW_SECONDS, QUICK_ROW_SECONDS = 20.0, 2.0
FULL_MIN_CALLS, QUICK_MIN_CALLS = 1000, 200


# ---------------------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True)
class Certificate:
    """What :func:`certify` found on one pair's timings (times in µs)."""

    epsilon: float
    event: str
    accuracy: float
    accuracy_lower: float
    median_x_us: float
    median_y_us: float
    shift_us: float
    held_out: int


def _halves(t: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random split of ``t`` into two halves, each sorted."""
    order = rng.permutation(t.size)
    half = t.size // 2
    return np.sort(t[order[:half]]), np.sort(t[order[half:]])


def _counts(sorted_t: np.ndarray, thresholds: np.ndarray, direction: str) -> np.ndarray:
    """How many of ``sorted_t`` are ``> t`` (direction ``">"``) or ``< t``, per threshold."""
    if direction == ">":
        return sorted_t.size - np.searchsorted(sorted_t, thresholds, side="right")
    return np.searchsorted(sorted_t, thresholds, side="left")


def _log_ratio_bound(k_num: int, n_num: int, k_den: int, n_den: int,
                     confidence: float) -> float:
    """``log(lower/upper)``: Clopper–Pearson lower bound of ``k_num/n_num`` over the upper
    bound of ``k_den/n_den``, each two-sided at ``confidence`` (``-inf`` if lower is 0)."""
    lower = clopper_pearson(int(k_num), n_num, confidence)[0]
    upper = clopper_pearson(int(k_den), n_den, confidence)[1]
    return math.log(lower / upper) if lower > 0 else -math.inf


def _best_event(num: np.ndarray, den: np.ndarray, thresholds: np.ndarray,
                confidence: float) -> tuple[float, str]:
    """The event ``time > t`` or ``time < t`` whose probability under ``num`` over that
    under ``den`` has the largest lower confidence bound on these (first-half) samples."""
    best, event = -math.inf, (float(thresholds[0]), ">")
    for direction in (">", "<"):
        k_num, k_den = _counts(num, thresholds, direction), _counts(den, thresholds, direction)
        promising = np.flatnonzero(k_num * den.size > k_den * num.size)  # empirical ratio > 1
        for i in promising.tolist():
            score = _log_ratio_bound(k_num[i], num.size, k_den[i], den.size, confidence)
            if score > best:
                best, event = score, (float(thresholds[i]), direction)
    return event


def _count(sorted_t: np.ndarray, threshold: float, direction: str) -> int:
    """How many of ``sorted_t`` lie in the event ``time <direction> threshold``."""
    return int(_counts(sorted_t, np.array([threshold]), direction)[0])


def _guesser_correct(x1: np.ndarray, y1: np.ndarray, x2: np.ndarray,
                     y2: np.ndarray, thresholds: np.ndarray) -> int:
    """Held-out right guesses (of ``x2.size + y2.size``) of "x when the time is above t" (or
    below): ``t`` and the side chosen on the first halves ``x1, y1`` (equal priors)."""
    above_x = _counts(x1, thresholds, ">") / x1.size
    above_y = _counts(y1, thresholds, ">") / y1.size
    gain = above_x - above_y            # 2·(accuracy − 1/2) of "x when above t"
    i = int(np.argmax(np.abs(gain)))
    hits_x, hits_y = _count(x2, thresholds[i], ">"), _count(y2, thresholds[i], ">")
    if gain[i] >= 0:
        return hits_x + (y2.size - hits_y)
    return (x2.size - hits_x) + hits_y


def certify(t_x: np.ndarray, t_y: np.ndarray, rng: np.random.Generator,
            confidence: float = CONFIDENCE) -> Certificate:
    """Certify a lower bound on the ε of the timing channel between two neighbours.

    Parameters
    ----------
    t_x, t_y : numpy.ndarray
        Timings (ns) of calls on ``x`` and on ``x'``, at least 4 each.
    rng : numpy.random.Generator
        Chooses the split into halves.
    confidence : float
        The certified ε exceeds the true one with probability at most ``1 − confidence``.

    Returns
    -------
    Certificate
        The certified ε and its event, the guesser's held-out accuracy and its
        Clopper–Pearson lower bound at ``confidence``, the medians (all timings) and their
        shift ``median(x') − median(x)`` in µs, the held-out size per side.

    Notes
    -----
    Events and the guesser are chosen on the first halves, certified and scored on the
    second. The two orientations share ``1 − confidence``; within one, the two
    Clopper–Pearson intervals (two-sided at ``1 − (1 − confidence)/2``) fail together with
    probability at most ``(1 − confidence)/2``. Timings drift with the machine's load:
    the random interleaving exposes both sides to it alike, so ``P[E | x]`` is an average
    over the run's calls; the count of a sum of independent Bernoulli trials is no more
    spread than a binomial of the same mean (Hoeffding 1956), so the intervals still hold.
    """
    t_x, t_y = np.asarray(t_x, dtype=np.float64), np.asarray(t_y, dtype=np.float64)
    x1, x2 = _halves(t_x, rng)
    y1, y2 = _halves(t_y, rng)
    thresholds = np.unique(np.quantile(np.concatenate([x1, y1]), LEVELS))
    each = 1 - (1 - confidence) / 2
    epsilon, event = 0.0, "none"
    for num1, den1, num2, den2, favours in ((x1, y1, x2, y2, "x"), (y1, x1, y2, x2, "x'")):
        t, direction = _best_event(num1, den1, thresholds, each)
        bound = _log_ratio_bound(_count(num2, t, direction), num2.size,
                                 _count(den2, t, direction), den2.size, each)
        if bound > epsilon:
            epsilon, event = bound, f"time {direction} {t / 1e3:.2f} µs favours {favours}"
    correct, guesses = _guesser_correct(x1, y1, x2, y2, thresholds), x2.size + y2.size
    median_x, median_y = float(np.median(t_x)) / 1e3, float(np.median(t_y)) / 1e3
    return Certificate(epsilon=epsilon, event=event, accuracy=correct / guesses,
                       accuracy_lower=clopper_pearson(correct, guesses, confidence)[0],
                       median_x_us=median_x, median_y_us=median_y,
                       shift_us=median_y - median_x, held_out=min(x2.size, y2.size))


def verdict(found: Certificate, promised: float) -> str:
    """``pass``, ``LEAK``, ``LEAK > promised ε`` or ``unsure`` (see the module docstring)."""
    if found.epsilon > promised:
        return "LEAK > promised ε"
    if found.epsilon > PASS_EPSILON or (found.accuracy > PASS_ACCURACY
                                        and found.accuracy_lower > 0.5):
        return "LEAK"
    return "pass" if found.accuracy <= PASS_ACCURACY else "unsure"


# ---------------------------------------------------------------------------------------
# Timing


def time_pair(call_x: Callable[[], Any], call_y: Callable[[], Any], calls: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``calls`` timings (ns) per side, in a seeded random interleaving of the two sides."""
    sides = rng.permutation(np.repeat(np.array([0, 1], dtype=np.int8), calls)).tolist()
    functions = (call_x, call_y)
    timings = [0] * len(sides)
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for i, side in enumerate(sides):
            function = functions[side]
            start = clock()
            function()
            timings[i] = clock() - start
            if i & 1023 == 1023:
                gc.collect()  # between calls, outside the timers: keeps memory bounded
    finally:
        gc.enable()
    labels, values = np.array(sides), np.array(timings, dtype=np.int64)
    return values[labels == 0], values[labels == 1]


def warm_up(call_x: Callable[[], Any], call_y: Callable[[], Any]) -> float:
    """Run both sides alternately (up to 200 calls each, about a second); return the mean
    cost of one call in seconds."""
    call_x(), call_y()
    start, done = time.perf_counter(), 0
    while done < 200 and (done < 10 or time.perf_counter() - start < 1.0):
        call_x()
        call_y()
        done += 1
    return (time.perf_counter() - start) / (2 * done)


# ---------------------------------------------------------------------------------------
# Pairs


@dataclass(frozen=True)
class Pair:
    """Two neighbouring calls of one release function (within its declared sensitivity)."""

    function: str
    size: str
    description: str
    promised: float
    call_x: Callable[[], Any]
    call_y: Callable[[], Any]
    origin: str = ""        # "review" for a pair an independent review found leaking

    @property
    def key(self) -> str:
        """A stable name for the row (also seeds its shuffle and split)."""
        return f"{self.function} | {self.size} | {self.description}"


def _one_changed(base: list[Any] | np.ndarray, changed: Any) -> Any:
    """A copy of ``base`` (list or array) whose first element is ``changed``."""
    copy = list(base) if isinstance(base, list) else base.copy()
    copy[0] = changed
    return copy


def _zeros(n: int) -> np.ndarray:
    """``n`` zeros in memory that has been written: ``np.zeros`` may hand out untouched
    pages that all map to the operating system's one zero page, which a large array reads
    faster than its neighbour's copy (a difference in the benchmark, not in dpkit)."""
    return np.full(n, 0.0)


def _ages(n: int) -> np.ndarray:
    """``n`` seeded integer ages in [18, 90], as float64: the rows of the clipping pairs."""
    return np.random.default_rng(20_240).integers(18, 91, size=n).astype(np.float64)


def _boundary(k: int, half: float, bits: int = 61) -> tuple[float, float]:
    """Values ``2**(bits + k) ∓ half``: grid units just below and above ``2**bits`` (``2**61``
    and ``2**62``: the int64/Python-int switches the grid arithmetic had above 64 values)."""
    edge = 2.0 ** (bits + k)
    below, above = edge - half, edge + half
    assert above - below == 2 * half, "the boundary values must be exact floats"
    return below, above


def randomized_response_pairs() -> Iterator[Pair]:
    """All answers True vs the first one False."""
    yield Pair("randomized_response", "scalar", "True vs False", 1.0,
               lambda: randomized_response(True, 1.0), lambda: randomized_response(False, 1.0))
    for n in SIZES:
        x = np.ones(n, dtype=bool)
        y = _one_changed(x, False)
        yield Pair("randomized_response", str(n), "all True vs first False", 1.0,
                   lambda x=x: randomized_response(x, 1.0), lambda y=y: randomized_response(y, 1.0))


def _laplace(x: Any, y: Any, function: str, size: str, description: str, sensitivity: float,
             epsilon: float = 1.0, origin: str = "") -> Pair:
    return Pair(function, size, description, epsilon,
                lambda: laplace_mechanism(x, sensitivity, epsilon),
                lambda: laplace_mechanism(y, sensitivity, epsilon), origin)


def laplace_pairs() -> Iterator[Pair]:
    """Scalars of every number type, then vectors at each size."""
    f = "laplace_mechanism"
    yield _laplace(0.5, 0.1, f, "scalar", "0.5 vs 0.1 (short vs long binary expansion)", 1.0)
    yield _laplace(2.0**53 - 2, 2.0**53 + 2, f, "scalar",
                   "floats 2**53-2 vs 2**53+2 (either side of 2**53)", 4.0)
    yield _laplace(2**53, 2**53 + 1, f, "scalar", "int 2**53 vs 2**53+1 (not a float64)", 1.0)
    yield _laplace(Fraction(1, 2), Fraction(1, 3), f, "scalar", "Fraction 1/2 vs 1/3", 1.0)
    yield _laplace(Decimal("0.5"), Decimal("0.1"), f, "scalar", "Decimal 0.5 vs 0.1", 1.0)
    yield _laplace(37, 37.5, f, "scalar", "int 37 vs float 37.5", 1.0)
    yield Pair("sample_releases", "1000", "value 0.5 vs 0.1, 1000 releases", 1000.0,
               lambda: sample_releases(0.5, 1.0, 1.0, 1000),
               lambda: sample_releases(0.1, 1.0, 1.0, 1000))
    people_64 = np.full(64, 1 / 64)
    people_65 = np.full(64, 1 / 65)
    people_65[0] = 2 / 65
    yield _laplace(people_64, people_65, f, "64", "proportions of 64 vs 65 people, 64 bins "
                   "(Δ = 2/64)", 2 / 64, origin="review")
    fractions = [Fraction(1, 2)] * 64
    yield _laplace(fractions, _one_changed(fractions, Fraction(1, 3)), f, "64",
                   "list of Fractions, one 1/2 vs 1/3", 1.0)
    for n in SIZES:
        size = str(n)
        zeros = _zeros(n)
        yield _laplace(zeros, _one_changed(zeros, 1.0), f, size, "zeros vs one coordinate 1.0",
                       1.0, origin="review" if n == 65 else "")
        halves = np.full(n, 0.5)
        yield _laplace(halves, _one_changed(halves, 0.1), f, size,
                       "0.5s vs one coordinate 0.1 (binary expansion)", 1.0)
        yield _laplace(np.ones(n), np.full(n, 1 + 2.0**-52), f, size,
                       "[1.0]*n vs [1+2**-52]*n", 1.0, epsilon=0.5,
                       origin="review" if n == 64 else "")
        below, above = _boundary(laplace_grid(1.0, 1.0, n).exponent, 0.5)
        yield _laplace(_one_changed(zeros, below), _one_changed(zeros, above), f, size,
                       "one coordinate either side of 2**61 grid units", 1.0)
        if n <= 1000:   # 10**5 int64 values or Python objects: about 0.2 s a call
            big = np.full(n, 2**53, dtype=np.int64)
            yield _laplace(big, _one_changed(big, 2**53 + 1), f, size,
                           "int64 array, one 2**53 vs 2**53+1", 1.0, origin="review")
            decimals = [Decimal(1)] * n
            yield _laplace(decimals, _one_changed(decimals, Decimal("1.1")), f, size,
                           "list of Decimal, one 1 vs 1.1", 1.0, origin="review")
            ints = [37] * n
            yield _laplace(ints, _one_changed(ints, 37.5), f, size,
                           "list of ints, one 37 vs float 37.5", 1.0)
    yield from small_epsilon_pairs()


def small_epsilon_pairs() -> Iterator[Pair]:
    """Breaker review 23: at a small ε the noise's reach passed ``2**53`` grid units and the
    release left the float path, where the values chose int64 or Python ints (``2**61``,
    ``2**62`` grid units). Zeros but one coordinate either side of those edges (the grid of
    the dpkit measured), and ``sample_releases`` of one value either side of ``2**61``
    units; scalar releases at ε = 1e-12 and 1e-120 (breaker review 28: the scalar walk's
    cost grew with the scale until every release overran), and one value in a list at 1e-300
    (breaker review 31: it lacked the scalar's extra deadline); ``--only "small ε"`` runs just
    these rows. 100 values at ε = 1e-9 stay off the float path (Python ints, the deadline of
    100 Python objects: 20-24 ms a call at load 9)."""
    f = "laplace_mechanism"
    for n, epsilon, edges in ((10**4, 1e-3, (61, 62)), (10**5, 0.01, (61,)),
                              (100, 1e-9, (61, 62))):   # off the float path: objects
        zeros = _zeros(n)
        for bits in edges:
            below, above = _boundary(laplace_grid(1.0, epsilon, n).exponent, 0.5, bits)
            yield _laplace(_one_changed(zeros, below), _one_changed(zeros, above), f, str(n),
                           f"small ε {epsilon:g}: one coordinate either side of 2**{bits} grid "
                           f"units", 1.0, epsilon=epsilon, origin="review")
    for epsilon in (1e-12, 1e-120):   # breaker review 28: the scalar walk's cost, tiny ε
        yield _laplace(0.5, 0.1, f, "scalar", f"small ε {epsilon:g}: 0.5 vs 0.1", 1.0,
                       epsilon=epsilon, origin="review")
    # breaker review 31: one value in a list is the scalar's draw, without its extra deadline
    yield _laplace([0.5], [Fraction(1, 3)], f, "1", "small ε 1e-300: [0.5] vs [1/3]", 1.0,
                   epsilon=1e-300, origin="review")
    # 1,000 releases: every value has the deadline of Python objects, 3.2 U each (breaker
    # review 32), about 0.17 s a call (10**5 would take 17 s)
    n, epsilon = 10**3, 1e-6
    below, above = _boundary(laplace_grid(1.0, epsilon).exponent, 0.5)
    yield Pair("sample_releases", str(n), f"small ε {epsilon:g}: value 2**41 ∓ 0.5 (either "
               f"side of 2**61 grid units)", n * epsilon,
               lambda: sample_releases(below, 1.0, epsilon, n),
               lambda: sample_releases(above, 1.0, epsilon, n), origin="review")


def _gaussian(x: Any, y: Any, size: str, description: str, epsilon: float = 1.0,
              origin: str = "") -> Pair:
    return Pair("gaussian_mechanism", size, description, epsilon,
                lambda: gaussian_mechanism(x, 1.0, epsilon, 1e-5),
                lambda: gaussian_mechanism(y, 1.0, epsilon, 1e-5), origin)


def gaussian_pairs() -> Iterator[Pair]:
    """Δ = 1 (ℓ2), δ = 1e-5."""
    yield _gaussian(2**53, 2**53 + 1, "scalar", "int 2**53 vs 2**53+1 (not a float64)",
                    origin="review")
    yield _gaussian(0.5, 0.1, "scalar", "0.5 vs 0.1 (short vs long binary expansion)")
    for n in SIZES:
        size, zeros = str(n), _zeros(n)
        yield _gaussian(zeros, _one_changed(zeros, 1.0), size, "zeros vs one coordinate 1.0")
        halves = np.full(n, 0.5)
        yield _gaussian(halves, _one_changed(halves, 0.1), size,
                        "0.5s vs one coordinate 0.1 (binary expansion)")
        yield _gaussian(np.ones(n), np.full(n, 1 + 2.0**-52), size, "[1.0]*n vs [1+2**-52]*n",
                        epsilon=0.5, origin="review" if n == 64 else "")
        k = mechanism_parameters(1.0, 1.0, 1e-5, n).grid_exponent
        below, above = _boundary(k, 0.5)
        yield _gaussian(_one_changed(zeros, below), _one_changed(zeros, above), size,
                        "one coordinate either side of 2**61 grid units")


def exponential_pairs() -> Iterator[Pair]:
    """Eta.from_epsilon(1.0), losses in [0, 64], utilities ``i % 64``."""
    eta = Eta.from_epsilon(1.0)
    promised = eta.epsilon(1)

    def pair(x: np.ndarray, y: np.ndarray, size: str, description: str,
             origin: str = "") -> Pair:
        return Pair("base2_exponential_mechanism", size, description, promised,
                    lambda: base2_exponential_mechanism(x, eta, utility_min=0, utility_max=64),
                    lambda: base2_exponential_mechanism(y, eta, utility_min=0, utility_max=64),
                    origin)

    yield pair(np.zeros(1), np.full(1, 0.5), "scalar", "one utility 0 vs 0.5")
    for n in SIZES:
        x = np.arange(n, dtype=np.float64) % 64
        y = x.copy()
        y[-1] += 0.5
        yield pair(x, y, str(n), "integer utilities vs the last one +0.5",
                   origin="review" if n == 64 else "")
    x = np.arange(64, dtype=np.float64)
    x[-1] = 64.0
    y = x.copy()
    y[-1] = 70.0
    yield pair(x, y, "64", "last utility 64 (on the bound) vs 70 (clamped to 64)")
    yield from rounding_pairs(eta, promised)


def rounding_pairs(eta: Eta, promised: float) -> Iterator[Pair]:
    """The randomized rounding (issue 18): integer utilities vs the same all made
    non-integer, at 1000 and 100,000 outcomes (the rows with one made non-integer are
    :func:`exponential_pairs`'s "+0.5" rows). Negative ones in bounds [-64, 64]: their
    parts ``1 - 0.1`` are not doubles (an exact draw each, one by one, before issue 18)."""
    for n in (1000, 100_000):
        x = np.arange(n, dtype=np.float64) % 64
        for y, low, description in (
                (x + 0.5, 0, "integer utilities vs all +0.5"),
                (-x - 0.1, -64, "negative integer utilities vs all -0.1 (parts not doubles)")):
            left = x if low == 0 else -x
            yield Pair("base2_exponential_mechanism", str(n), description, promised,
                       lambda u=left, b=low: base2_exponential_mechanism(
                           u, eta, utility_min=b, utility_max=64),
                       lambda u=y, b=low: base2_exponential_mechanism(
                           u, eta, utility_min=b, utility_max=64))


def _queries(n: int) -> list[Callable[[list[float]], float]]:
    """``n`` queries; query ``i`` returns ``data[i]`` (the data is the list of answers)."""
    return [lambda d, i=i: d[i] for i in range(n)]


def svt_pairs() -> Iterator[Pair]:
    """AboveThreshold, Sparse, their runs and range queries (threshold far above: None)."""
    high = 1e6
    for n in (1, 64, 65, 1000):
        qs, size = _queries(n), str(n)
        x, y = [100.25 + i for i in range(n)], [100.1 + i for i in range(n)]
        yield Pair("above_threshold", size, "answers 100.25+i vs 100.1+i (both None)", 0.1,
                   lambda qs=qs, x=x: above_threshold(qs, x, high, 0.1),
                   lambda qs=qs, y=y: above_threshold(qs, y, high, 0.1), "review")
        yield Pair("above_threshold_runs", size, "answers 100.25+i vs 100.1+i (both -1)", 0.1,
                   lambda x=x: above_threshold_runs(x, high, 0.1, runs=1),
                   lambda y=y: above_threshold_runs(y, high, 0.1, runs=1))
        if n in (1, 64, 1000):
            yield Pair("sparse", size, "answers 100.25+i vs 100.1+i, c=3 (both [])", 0.3,
                       lambda qs=qs, x=x: sparse(qs, x, high, 0.3, 3),
                       lambda qs=qs, y=y: sparse(qs, y, high, 0.3, 3))
            yield Pair("range_queries", size, "answers 100.25+i vs 100.1+i, c=3 (both [])", 1.0,
                       lambda qs=qs, x=x: range_queries(qs, x, 3, high, 1.0),
                       lambda qs=qs, y=y: range_queries(qs, y, 3, high, 1.0))
    qs, x, y = _queries(64), [100.0 + i for i in range(64)], [101.0 + i for i in range(64)]
    yield Pair("above_threshold", "64", "integer answers 100+i vs 101+i (both None)", 0.1,
               lambda qs=qs, x=x: above_threshold(qs, x, high, 0.1),
               lambda qs=qs, y=y: above_threshold(qs, y, high, 0.1))
    picked_x, picked_y = [1e4 + 0.25] * 64, [1e4 + 0.1] * 64
    yield Pair("range_queries", "64", "answers 10000.25 vs 10000.1, threshold 0, c=3 "
               "(first 3 picked and released)", 1.0,
               lambda qs=qs: range_queries(qs, picked_x, 3, 0.0, 1.0),
               lambda qs=qs: range_queries(qs, picked_y, 3, 0.0, 1.0))
    bits = grid_bits(2 / exact_epsilon(0.1))
    below, _ = _boundary(-bits, 0.5)  # the largest answers above_threshold_runs accepts
    for n in (64, 65, 1000):
        answers = [100.25 + i for i in range(n)]
        x, y = answers, _one_changed(answers, -below)
        yield Pair("above_threshold_runs", str(n), "one answer 100.25 vs just inside -2**61 "
                   "grid units (both -1)", 0.1,
                   lambda x=x: above_threshold_runs(x, high, 0.1, runs=1),
                   lambda y=y: above_threshold_runs(y, high, 0.1, runs=1))
    x, y = [100.25 + i for i in range(64)], [100.1 + i for i in range(64)]
    yield Pair("above_threshold_runs", "64", "answers 100.25+i vs 100.1+i, 100 runs", 10.0,
               lambda x=x: above_threshold_runs(x, high, 0.1, runs=100),
               lambda y=y: above_threshold_runs(y, high, 0.1, runs=100))
    x, y = [-1e6] * 63 + [1e9], [-1e6] * 64
    yield Pair("above_threshold_runs", "64", "the last answer passes vs none does, 100 runs",
               10.0, lambda x=x: above_threshold_runs(x, 0.0, 0.1, runs=100),
               lambda y=y: above_threshold_runs(y, 0.0, 0.1, runs=100))


#: float() of 2**N scans its low digits for a set bit, of 2**N - 1 stops at once: a row
#: 2**N vs 2**N - 1 once certified ε 1.38 in choose_clip_bound's time (breaker, round 20,
#: F2), at this N (a 50 MB int; float() of it takes about 4 ms).
HUGE_BITS = 4 * 10**8


@functools.cache
def _huge_int_rows() -> tuple[list[int], list[int]]:
    """100 rows of ages, the first ``2**HUGE_BITS`` vs ``2**HUGE_BITS - 1``: built at the
    row's first (warm-up) call, not by every run of the audit (100 MB)."""
    rows = [int(a) for a in _ages(99)]
    huge = 1 << HUGE_BITS
    return [huge, *rows], [huge - 1, *rows]


def clipping_pairs() -> Iterator[Pair]:
    """choose_clip_bound and auto_avg (ε = 1, default bounds) on seeded integer ages."""
    def clip(x: Any, y: Any, size: str, description: str, origin: str = "",
             max_rows: int = DEFAULT_MAX_ROWS) -> Pair:
        bounds = DEFAULT_CLIP_BOUNDS
        return Pair("choose_clip_bound", size, description, 1.0,
                    lambda: choose_clip_bound(x, 1.0, bounds=bounds, max_rows=max_rows),
                    lambda: choose_clip_bound(y, 1.0, bounds=bounds, max_rows=max_rows),
                    origin)

    def avg(x: Any, y: Any, size: str, description: str, origin: str = "",
            max_rows: int = DEFAULT_MAX_ROWS) -> Pair:
        return Pair("auto_avg", size, description, 1.0,
                    lambda: auto_avg(x, 1.0, max_rows=max_rows),
                    lambda: auto_avg(y, 1.0, max_rows=max_rows), origin)

    for n in (64, 65, 1000, 2000, 100_000):
        ages = _ages(n)
        x, y = _one_changed(ages, 37.0), _one_changed(ages, 37.5)
        max_rows = max(n, DEFAULT_MAX_ROWS)  # a public bound: 2**16, or all 100,000 rows
        yield clip(x, y, str(n), "one row 37.0 (on a bound) vs 37.5 (inside)",
                   "review" if n == 2000 else "", max_rows)
        if n != 2000:
            yield avg(x, y, str(n), "one row 37.0 (on a bound) vs 37.5 (inside)",
                      max_rows=max_rows)
    # Add a row: under add/remove-one neighbours the number of rows is private (review F1:
    # a list of 200 vs 201 ints once certified ε >= 4.12 through the deadline's row count).
    # Lists of Python objects are audited at max_rows = 1001, a public bound on both sides:
    # at the default 2**16 one padded call takes about 2 s (every row a bound allows is
    # charged as an object), too long for thousands of calls.
    for n in (200, 1000):
        ages = _ages(n + 1)
        for kind, x, y, bound in (("float64", ages[:n], ages, DEFAULT_MAX_ROWS),
                                  ("list of ints", [int(a) for a in ages[:n]],
                                   [int(a) for a in ages], 1001)):
            description = f"{kind}, {n} vs {n + 1} rows (one row added)" + (
                f", max_rows {bound}" if bound != DEFAULT_MAX_ROWS else "")
            yield clip(x, y, str(n), description, "review", bound)
            yield avg(x, y, str(n), description, "review", bound)
    ages = _ages(1000)
    yield clip(_one_changed(ages, 0.0), _one_changed(ages, -5.0), "1000",
               "one row 0.0 (edge) vs -5.0 (clipped)")
    rows = [int(a) for a in ages]
    yield clip(_one_changed(rows, 37), _one_changed(rows, 37.5), "1000",
               "list of ints, one row 37 vs float 37.5, max_rows 1001", max_rows=1001)
    yield avg(_one_changed(rows, 37), _one_changed(rows, 37.5), "1000",
              "list of ints, one row 37 vs float 37.5, max_rows 1001", max_rows=1001)
    yield clip(_one_changed(rows, 2**53), _one_changed(rows, 2**53 + 1), "1000",
               "list of ints, one row 2**53 vs 2**53+1, max_rows 1001", max_rows=1001)
    bounds = DEFAULT_CLIP_BOUNDS
    yield Pair("choose_clip_bound", "100", "list of ints, one row 2**(4e8) vs 2**(4e8)-1 "
               "(beyond the float range), max_rows 100", 1.0,
               lambda: choose_clip_bound(_huge_int_rows()[0], 1.0, bounds=bounds, max_rows=100),
               lambda: choose_clip_bound(_huge_int_rows()[1], 1.0, bounds=bounds, max_rows=100),
               "review")
    x, y = _one_changed(ages, 37.0), _one_changed(ages, 37.5)
    bounds = DEFAULT_CLIP_BOUNDS
    yield Pair("clip_bound_runs", "1000", "one row 37.0 vs 37.5, 10 runs", 10.0,
               lambda: clip_bound_runs(x, 1.0, bounds=bounds, runs=10),
               lambda: clip_bound_runs(y, 1.0, bounds=bounds, runs=10))
    yield Pair("auto_avg_runs", "1000", "one row 37.0 vs 37.5, 10 runs", 10.0,
               lambda: auto_avg_runs(x, 1.0, runs=10), lambda: auto_avg_runs(y, 1.0, runs=10))


def _refused(release: Callable[[Any], Any], values: Any) -> Callable[[], str]:
    """A call of ``release(values)`` that must be refused with a TypeError: it returns the
    message (a call that is not refused stops the audit)."""
    def call() -> str:
        try:
            release(values)
        except TypeError as error:
            return str(error)
        raise AssertionError("the masked entry was not refused")
    return call


#: The releases whose refusal of a masked entry once told where the last masked record is
#: (breaker, round 20, F1), and the value of an unmasked record.
MASKED_RELEASES: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "laplace_mechanism": (lambda v: laplace_mechanism(v, 1.0, 1.0), 0.5),
    "gaussian_mechanism": (lambda v: gaussian_mechanism(v, 1.0, 1.0, 1e-6), 0.5),
    "randomized_response": (lambda v: randomized_response(v, 1.0), True),
    "base2_exponential_mechanism": (lambda v: base2_exponential_mechanism(
        v, Eta(1, 1, 1), utility_min=0, utility_max=1), 0.5),
    "snapping_mechanism": (lambda v: snapping_mechanism(v, 1.0, 1.0, 100.0), 0.5),
    "above_threshold_runs": (lambda v: above_threshold_runs(v, 0.5, 1.0, runs=1), 0.5),
}


def masked_pairs(n: int = 100) -> Iterator[Pair]:
    """A list whose first record is masked vs the same with its last record masked too (one
    record differs; the same refusal): which entries are masked is data."""
    for function, (release, value) in MASKED_RELEASES.items():
        x = [np.ma.masked] + [value] * (n - 1)
        y = [*x[:-1], np.ma.masked]
        promised = Eta(1, 1, 1).epsilon(1) if function.startswith("base2") else 1.0
        yield Pair(function, str(n), "first record masked vs first and last (both refused)",
                   promised, _refused(release, x), _refused(release, y), "review")


def all_pairs() -> list[Pair]:
    """Every row of the audit, in table order."""
    return [*randomized_response_pairs(), *laplace_pairs(), *gaussian_pairs(),
            *exponential_pairs(), *svt_pairs(), *clipping_pairs(), *masked_pairs()]


# ---------------------------------------------------------------------------------------
# Running and reporting


def audit(pair: Pair, calls: int, row_seconds: float, min_calls: int, seed: int) -> dict:
    """Warm up, choose the calls per side from the row's time budget, time, certify."""
    rng = np.random.default_rng([seed, zlib.crc32(pair.key.encode())])
    load, start = os.getloadavg()[0], time.perf_counter()
    cost = warm_up(pair.call_x, pair.call_y)
    per_side = max(min_calls, min(calls, int(row_seconds / (2 * cost))))
    overran = dpkit.timing.overruns()
    t_x, t_y = time_pair(pair.call_x, pair.call_y, per_side, rng)
    overran = dpkit.timing.overruns() - overran
    found = certify(t_x, t_y, rng)
    return {"function": pair.function, "size": pair.size, "pair": pair.description,
            "origin": pair.origin, "promised_epsilon": pair.promised, "calls": per_side,
            "overruns": overran,
            "load_1min": load, "seconds": round(time.perf_counter() - start, 1),
            **asdict(found),
            "verdict": verdict(found, pair.promised)}


COLUMNS = ("function", "size", "pair", "calls/side", "overruns", "load", "promised ε",
           "median x µs", "median x' µs", "shift µs", "certified ε", "accuracy", "verdict")


def cells(row: dict) -> list[str]:
    """One table row as strings, in :data:`COLUMNS` order."""
    pair = row["pair"] + (" [review]" if row["origin"] == "review" else "")
    return [row["function"], row["size"], pair, str(row["calls"]),
            str(row.get("overruns", "–")), f"{row['load_1min']:.1f}" if "load_1min" in row else "–",
            f"{row['promised_epsilon']:.3g}",
            f"{row['median_x_us']:.1f}", f"{row['median_y_us']:.1f}", f"{row['shift_us']:+.1f}",
            f"{row['epsilon']:.2f}", f"{row['accuracy']:.3f}", row["verdict"]]


def markdown_table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(row)) + " |" for row in rows]
    return "\n".join(lines)


def _git(directory: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment() -> dict:
    """The commit of the dpkit measured, the date and the machine."""
    source = Path(dpkit.__file__).resolve().parent
    dirty = _git(source.parent, "status", "--porcelain", "--", "dpkit")
    return {"commit": _git(source.parent, "rev-parse", "--short", "HEAD"),
            "dpkit_commit": _git(source.parent, "log", "-1", "--format=%h", "--", "dpkit"),
            "dpkit_dirty": bool(dirty and dirty != "unknown"), "dpkit_path": str(source),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__}


def report(meta: dict, rows: list[dict]) -> str:
    """The Markdown page: what was run, where, under which load, then the table."""
    passed = sum(row["verdict"] == "pass" for row in rows)
    return "\n".join([
        "# Timing audit of dpkit's release functions", "",
        f"`benchmarks/timing.py{meta['args']}` at commit `{meta['commit']}` (dpkit/ last "
        f"changed in `{meta['dpkit_commit']}`"
        f"{'; with uncommitted changes in dpkit/' if meta['dpkit_dirty'] else ''}), "
        f"{meta['date']}.", "",
        f"Machine: {meta['cpu_count']} CPUs, {meta['platform']}, Python {meta['python']}, "
        f"NumPy {meta['numpy']}. Load average (1, 5, 15 min) at start "
        f"{meta['load_start']}, at end {meta['load_end']}. Wall time {meta['minutes']:.1f} min.",
        "",
        f"Calls per side: up to {meta['calls']} (`--calls`), fewer where the row's calls would "
        f"take more than {meta['row_seconds']:.0f} s (`--row-seconds`), but at least "
        f"{meta['min_calls']}: see the calls/side column. Half of them are held out. "
        f"Certified ε: Clopper–Pearson at confidence 1 − 1e-6 per row. "
        f"Verdict `pass`: certified ε ≤ {PASS_EPSILON} and accuracy ≤ {PASS_ACCURACY} "
        f"(chance 0.5); `LEAK`: certified ε > {PASS_EPSILON}, or accuracy > {PASS_ACCURACY} "
        f"and significantly above chance (Clopper–Pearson, 1 − 1e-6); `LEAK > promised ε`: "
        f"the timing alone refutes the privacy promise; `unsure`: accuracy > {PASS_ACCURACY} "
        f"but too few calls to tell it from chance. "
        f"Shift = median(x') − median(x). Overruns: releases of the row's timed calls that "
        f"ended past their deadline (`dpkit.timing.overruns()`; their time depends on the "
        f"work). [review]: a pair an independent review found leaking.",
        "", f"{passed} of {len(rows)} rows pass.", "", markdown_table(rows), ""])


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_CALLS} calls per side, {QUICK_ROW_SECONDS:.0f} s per row")
    parser.add_argument("--calls", type=int, help=f"calls per side (default {FULL_CALLS})")
    parser.add_argument("--row-seconds", type=float,
                        help=f"timed seconds per row (default {FULL_ROW_SECONDS:.0f})")
    parser.add_argument("--min-calls", type=int,
                        help=f"fewest calls per side, whatever a call costs (default "
                             f"{FULL_MIN_CALLS}, {QUICK_MIN_CALLS} with --quick)")
    parser.add_argument("--only", help="run only rows whose 'function | size | pair' "
                                       "contains this text (nothing is written)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the shuffles and splits")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    args.calls = args.calls or (QUICK_CALLS if args.quick else FULL_CALLS)
    args.row_seconds = args.row_seconds or (QUICK_ROW_SECONDS if args.quick
                                            else FULL_ROW_SECONDS)
    args.min_calls = min(args.min_calls or (QUICK_MIN_CALLS if args.quick else FULL_MIN_CALLS),
                         args.calls)
    return args


def main(argv: list[str] | None = None) -> None:
    """Audit every pair, print each row as it is done, write the results."""
    args = parse(argv)
    pairs = [p for p in all_pairs() if args.only is None or args.only in p.key]
    given = " ".join(sys.argv[1:] if argv is None else argv)
    meta = {**environment(), "args": f" {given}" if given else "", "calls": args.calls,
            "row_seconds": args.row_seconds, "min_calls": args.min_calls, "seed": args.seed,
            "load_start": [round(v, 2) for v in os.getloadavg()]}
    print(f"dpkit {meta['commit']} ({meta['dpkit_path']}), {len(pairs)} rows, up to "
          f"{args.calls} calls per side, load {meta['load_start']}", flush=True)
    print(" | ".join(COLUMNS), flush=True)
    start, rows = time.perf_counter(), []
    for pair in pairs:
        rows.append(audit(pair, args.calls, args.row_seconds, args.min_calls, args.seed))
        print(" | ".join(cells(rows[-1])), flush=True)
    meta["load_end"] = [round(v, 2) for v in os.getloadavg()]
    meta["minutes"] = (time.perf_counter() - start) / 60
    page = report(meta, rows)
    print(page)
    if not (args.no_write or args.only):
        stem = "timing_quick" if args.quick else "timing"
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{stem}.md").write_text(page, encoding="utf-8")
        (RESULTS / f"{stem}.json").write_text(json.dumps({"meta": meta, "rows": rows},
                                                         indent=1, ensure_ascii=False) + "\n",
                                              encoding="utf-8")


if __name__ == "__main__":
    main()
