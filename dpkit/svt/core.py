"""The sparse vector technique: AboveThreshold, Sparse, clipping-bound selection, range queries.

The sparse vector technique (SVT) answers a long, even unbounded, stream of
sensitivity-1 queries with one bit each ("below" or "above" a threshold) and charges
privacy only for the queries that come out *above*: :func:`above_threshold` stops at the
first one and costs ε in total however many queries it examined (Dwork & Roth 2014,
Algorithm 1 and Theorem 3.23). :func:`sparse` restarts it after each positive answer, up
to ``c`` times, with ε/c per run (Algorithm 2, Theorem 3.25).

Two applications built on it:

* :func:`choose_clip_bound` and :func:`auto_avg`: pick a clipping bound for a sum from the
  data itself, privately, then release a clipped average.
* :func:`range_queries`: let Sparse pick which counting queries are large enough to be
  worth answering, then answer those with (discrete) Laplace noise.

Floating-point safety
---------------------
The textbook algorithm compares ``q(D) + Lap(4/ε)`` with ``T + Lap(2/ε)`` in floating
point; the proof, however, assumes exact real arithmetic. Here every comparison is exact:
query answers and the threshold are rounded to a power-of-two grid ``γ = 2**-k`` (fine
enough that ``γ`` is below a millionth of the threshold's noise scale), and the noise is
*discrete* Laplace on that grid, drawn from random bits by :mod:`dpkit._samplers`
(Canonne, Kamath & Steinke 2020). The rounding ``x -> floor(x/γ + 1/2)`` is monotone and
commutes with adding 1 (``1/γ`` is an integer), so a sensitivity-1 query stays exactly
sensitivity-1 (``2**k`` grid steps) after rounding, and Dwork & Roth's proof goes through
word for word with sums of integers in place of reals. Only the index is released, never a
noisy value.

Input domain and timing
-----------------------
:func:`choose_clip_bound` and :func:`auto_avg` accept every finite real number as a row and
clip it exactly (:func:`dpkit._checks.check_rows_to_clip`): no error depends on one row being
huge or not a float64. A row outside the domain -- NaN, infinity, a bool, a string -- is
refused, and that error reveals that some row is outside it: enforcing the domain is the
caller's precondition. A Python list is converted in one pass whose cost hardly depends on
the types of its elements (ints, floats, Fractions alike), but it is slower than a float64
NumPy array and its cost grows with the rows' Python objects: pass a float64 array.
The running time of the SVT loops themselves depends on the data (how many queries come
out below the threshold), as the algorithm's output does.

Neighbouring datasets: any notion under which every query has sensitivity 1 (for
:func:`choose_clip_bound`, :func:`auto_avg` and counting queries, adding or removing one
row, or changing one row).

References
----------
Dwork, C. and Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
Section 3.6. Lyu, M., Su, D. and Li, N. (2017). Understanding the Sparse Vector Technique
for Differential Privacy. PVLDB 10(6). Canonne, C., Kamath, G. and Steinke, T. (2020).
The Discrete Gaussian for Differential Privacy. NeurIPS.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import (
    as_fraction,
    check_epsilon,
    check_integer,
    check_rows_to_clip,
)
from dpkit._samplers.grid import grid_exponent
from dpkit._samplers.noise import discrete_laplace
from dpkit.rng import RandomSource, resolve

__all__ = [
    "CLIP_THRESHOLD_SCALES",
    "DEFAULT_CLIP_BOUNDS",
    "MAX_RUNS",
    "RANGE_ANSWER_LIMIT",
    "RUN_EPSILON_RANGE",
    "above_threshold",
    "above_threshold_runs",
    "auto_avg",
    "auto_avg_runs",
    "choose_clip_bound",
    "clip_bound_runs",
    "range_queries",
    "sparse",
]



def _default_clip_bounds() -> tuple[int, ...]:
    """1, 2, …, 200, then integers growing by about 1% a step (b + b // 100), up to 2**40."""
    grid = [1]
    while grid[-1] < 2**40:
        grid.append(max(grid[-1] + 1, grid[-1] + grid[-1] // 100))
    return tuple(grid)


#: The candidate clipping bounds :func:`auto_avg` tries when none are given: every integer
#: up to 200, then steps of about 1% up to 2**40 (2,481 candidates). Data independent, as
#: they must be; their number costs no privacy, and fine steps keep the bound from
#: overshooting (see :func:`choose_clip_bound`).
DEFAULT_CLIP_BOUNDS: tuple[int, ...] = _default_clip_bounds()

#: :func:`choose_clip_bound`'s default threshold is this many threshold-noise scales
#: (``2/ε``) below 0, that is ``-20/ε``.
CLIP_THRESHOLD_SCALES = 10

#: The most independent runs :func:`above_threshold_runs`, :func:`clip_bound_runs` and
#: :func:`auto_avg_runs` simulate in one call: their noise is drawn in bulk, a block of 64
#: candidates for every undecided run at once, so memory grows in proportion to ``runs``.
#: For more runs, call again with the same ``rng``.
MAX_RUNS = 100_000

#: The largest magnitude of a query answer :func:`range_queries` accepts: its noisy release
#: is returned as a float, and float64 ends near ``2**1024``; this limit leaves a margin of
#: more than ``2**1023`` for the noise (whose scale is at most ``2**64``).
RANGE_ANSWER_LIMIT = 2**1000

Query = Callable[[Any], Any]


def _discrete_laplace(scale: Fraction, rng: RandomSource) -> int:
    """One exact discrete Laplace draw: ``P(x) ∝ exp(-|x| / scale)`` on the integers.

    The single place this module draws noise (tests replace it to record the scales).
    """
    return int(discrete_laplace(scale, rng))


def _discrete_laplace_block(scale: Fraction, rng: RandomSource, size: int) -> list[int]:
    """``size`` exact discrete Laplace draws at once (vectorised; tests record the scales)."""
    return [int(x) for x in discrete_laplace(scale, rng, size=size)]


class _QueryNoise:
    """Query noise for one call, drawn ahead in blocks of 8, 16, … up to 1024 values.

    A vectorised draw has a fixed cost and is cheap per value, and its running time does
    not depend on the values drawn (unlike a one-at-a-time exact draw, whose loop count
    grows with the value). Noise drawn for queries never reached is independent of the
    output, so the output's distribution is exactly that of drawing one value per query.
    """

    _FIRST = 8
    _LARGEST = 1024

    def __init__(self, scale: Fraction, rng: RandomSource) -> None:
        self._scale = scale
        self._rng = rng
        self._drawn = 0
        self._ahead: list[int] = []

    def draw(self) -> int:
        if not self._ahead:
            size = min(max(self._drawn, self._FIRST), self._LARGEST)
            self._ahead = _discrete_laplace_block(self._scale, self._rng, size)[::-1]
            self._drawn += size
        return self._ahead.pop()


def _grid_bits(threshold_scale: Fraction) -> int:
    """Return ``k >= 0`` such that the grid ``γ = 2**-k`` is at most ``min(1, s·2**-20)``.

    ``s`` is the threshold's noise scale (:func:`dpkit._samplers.grid.grid_exponent` finds the
    power of two). ``1/γ = 2**k`` must be an integer: that keeps rounding shift-invariant
    (see the module notes), so the grid is never coarser than 1.
    """
    return max(0, -grid_exponent(threshold_scale))


def _to_grid(value: Fraction, bits: int) -> int:
    """Round ``value`` to the nearest multiple of ``2**-bits`` (ties up), in grid units.

    Exact, monotone, and ``_to_grid(x + 1) == _to_grid(x) + 2**bits``.
    """
    return math.floor(value * 2**bits + Fraction(1, 2))


def _check_queries(queries: Any) -> Iterator[Any]:
    """Return an iterator over ``queries`` without consuming it (streams stay lazy)."""
    if isinstance(queries, (str, bytes)) or not isinstance(queries, Iterable):
        raise TypeError(f"queries must be an iterable of callables query(data) -> real number, "
                        f"got {queries!r} of type {type(queries).__name__}")
    return iter(queries)


def _call_query(query: Any, data: Any, index: int) -> Any:
    """Call ``query(data)``; refuse a query that is not callable."""
    if not callable(query):
        raise TypeError(f"queries[{index}] must be callable as query(data), "
                        f"got {query!r} of type {type(query).__name__}")
    return query(data)


def _evaluate(query: Any, data: Any, index: int) -> Fraction:
    """Evaluate one query and return its answer exactly; refuse non-callables and bad answers."""
    return as_fraction(_call_query(query, data, index), f"queries[{index}](data)")


def _answers(queries: Any, data: Any) -> Iterator[tuple[int, Fraction]]:
    """Return a lazy iterator of ``(index, exact answer)``: a query is evaluated only when
    it is reached. A non-iterable ``queries`` is refused at once."""
    stream = _check_queries(queries)
    return ((index, _evaluate(query, data, index)) for index, query in enumerate(stream))


def _svt(units: Iterator[tuple[Any, int]], threshold_units: int, run_scale: Fraction,
         c: int, rng: RandomSource) -> list[Any]:
    """Sparse in grid units: up to ``c`` runs of AboveThreshold; return the positive keys.

    ``units`` yields ``(key, answer in grid units)``, the key usually the query's index;
    ``run_scale`` is the sensitivity in grid units divided by one run's epsilon. Each run
    draws a fresh threshold noise of scale
    ``2 * run_scale`` and, per query, a noise of scale ``4 * run_scale`` (Dwork & Roth 2014,
    Algorithm 1). Runs share ``units``, so each query is evaluated at most once and nothing
    after the ``c``-th positive is evaluated.
    """
    found: list[Any] = []
    query_noise = _QueryNoise(4 * run_scale, rng)
    while len(found) < c:
        noisy_threshold = threshold_units + _discrete_laplace(2 * run_scale, rng)
        for key, answer in units:
            if answer + query_noise.draw() >= noisy_threshold:
                found.append(key)
                break
        else:  # the stream ended with no further positive answer
            break
    return found


#: The range of one AboveThreshold run's budget ε/c (ε for one run) that this module
#: accepts: its noise scales ``2c/ε`` and ``4c/ε`` and the comparison grid stay within
#: exact, finite arithmetic. A budget outside it is refused with a ``ValueError``.
RUN_EPSILON_RANGE: tuple[Fraction, Fraction] = (Fraction(1, 2**64), Fraction(2**64))


def _exact_epsilon(epsilon: Any, runs: int = 1) -> Fraction:
    """Validate epsilon and return it exactly (a Fraction given stays exact, a float is dyadic).

    ``epsilon / runs`` must lie in :data:`RUN_EPSILON_RANGE` (``runs`` AboveThreshold runs
    share it); otherwise a ``ValueError`` names the parameter, the value and the range.
    """
    check_epsilon(epsilon, rounding="down")  # validation only; the exact value is used below
    exact = as_fraction(epsilon, "epsilon")
    low, high = RUN_EPSILON_RANGE
    if not low <= exact / runs <= high:
        per = "" if runs == 1 else f"/{runs} (one run's share)"
        raise ValueError(f"epsilon{per} must be in [2**-64, 2**64] (about [5.4e-20, 1.8e19]) "
                         f"so that the noise scales stay finite, got epsilon={epsilon!r}")
    return exact


def _sparse_on_answers(answers: Iterator[tuple[Any, Fraction]], threshold: Fraction,
                       run_epsilon: Fraction, c: int, rng: RandomSource) -> list[Any]:
    """Put exact answers and threshold on the comparison grid and run :func:`_svt`.

    ``answers`` yields ``(key, exact answer)``; the keys of the positives are returned.
    """
    run_scale = 1 / run_epsilon  # sensitivity 1, in real units
    bits = _grid_bits(2 * run_scale)
    units = ((i, _to_grid(a, bits)) for i, a in answers)
    return _svt(units, _to_grid(threshold, bits), run_scale * 2**bits, c, rng)


def above_threshold(queries: Iterable[Query], data: Any, threshold: float, epsilon: float,
                    *, rng: RandomSource | None = None) -> int | None:
    """Return the index of the first query whose noisy answer reaches a noisy threshold.

    AboveThreshold (Dwork & Roth 2014, Algorithm 1): draw ``T̂ = T + Lap(2/ε)`` once; for
    each query in order draw ``ν_i ~ Lap(4/ε)`` and stop at the first ``i`` with
    ``q_i(D) + ν_i >= T̂``. Queries after it are never evaluated, so ``queries`` may be a
    lazy, even infinite, stream.

    Parameters
    ----------
    queries : iterable of callables
        ``query(data) -> real number``, each of sensitivity at most 1 (as computed).
        Consumed lazily, one at a time.
    data : any
        Passed to each query unchanged.
    threshold : real number
        The threshold ``T`` (public, data independent).
    epsilon : float
        Privacy parameter, finite and > 0.
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.

    Returns
    -------
    int or None
        The 0-based index of the first query found above the threshold, or ``None`` when
        the stream ends with none found. Never a random or sentinel index: ``None`` must be
        handled by the caller.

    Raises
    ------
    TypeError
        If ``queries`` is not iterable, one of its items is not callable, or a query returns
        something other than a real number; if ``rng`` is not a ``RandomSource``.
    ValueError
        If ``epsilon`` is not finite and > 0, ``threshold`` is not finite, or a query returns
        NaN or an infinity.

    Notes
    -----
    **Privacy**: ε-differentially private however many queries are examined (Dwork & Roth
    2014, Theorem 3.23), including the ``None`` outcome. Answers and threshold are rounded
    to a power-of-two grid (a shift-invariant rounding, so sensitivity 1 is preserved) and
    the Laplace noise is discrete Laplace on that grid, so the comparison is exact and the
    proof holds without floating-point caveats. The rounding moves the effective threshold
    by at most half a grid step, below a millionth of the noise scale.

    Examples
    --------
    Which is the first age limit with at least 100 people at or below it?

    >>> from dpkit.rng import seeded
    >>> ages = [5, 15, 25] * 40
    >>> queries = [lambda d, t=t: sum(x <= t for x in d) for t in (10, 20, 30)]
    >>> above_threshold(queries, ages, 100, 1.0, rng=seeded(0))
    2
    """
    run_epsilon = _exact_epsilon(epsilon)
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    answers = _answers(queries, data)  # validated lazily, no query evaluated yet
    found = _sparse_on_answers(answers, exact_threshold, run_epsilon, 1, source)
    return found[0] if found else None


def sparse(queries: Iterable[Query], data: Any, threshold: float, epsilon: float, c: int,
           *, rng: RandomSource | None = None) -> list[int]:
    """Return the indices of up to ``c`` queries found above a noisy threshold.

    Sparse (Dwork & Roth 2014, Algorithm 2, pure-DP case): run :func:`above_threshold` with
    ε/c (threshold noise ``Lap(2c/ε)``, query noise ``Lap(4c/ε)``); after each positive
    answer draw a fresh noisy threshold and continue with the next query; stop after ``c``
    positive answers or at the end of the stream.

    Parameters
    ----------
    queries : iterable of callables
        ``query(data) -> real number`` of sensitivity at most 1, consumed lazily: each is
        evaluated at most once and none after the ``c``-th positive answer.
    data : any
        Passed to each query unchanged.
    threshold : real number
        The public threshold ``T``.
    epsilon : float
        Total privacy parameter, finite and > 0.
    c : int
        The most positive answers to report, an integer >= 1.
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.

    Returns
    -------
    list of int
        At most ``c`` indices, increasing.

    Raises
    ------
    TypeError, ValueError
        As :func:`above_threshold`; also if ``c`` is not an integer >= 1.

    Notes
    -----
    **Privacy**: ε-differentially private (Dwork & Roth 2014, Theorem 3.25): ``c`` runs of
    (ε/c)-DP AboveThreshold, composed sequentially. Each run's budget is the exact rational
    ε/c, so no rounding of the budget occurs. Exact comparisons as in
    :func:`above_threshold`.
    """
    c = check_integer(c, "c", minimum=1)
    run_epsilon = _exact_epsilon(epsilon, c) / c
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    return _sparse_on_answers(_answers(queries, data), exact_threshold, run_epsilon, c, source)


def _check_bounds_grid(bounds: Any) -> tuple[float, ...]:
    """Validate candidate clipping bounds: finite, > 0, strictly increasing, at least one."""
    if bounds is None or isinstance(bounds, (str, bytes)) or not isinstance(bounds, Iterable):
        raise TypeError(f"bounds must be an iterable of candidate clipping bounds (finite "
                        f"numbers > 0, increasing), got {bounds!r}")
    if bounds is DEFAULT_CLIP_BOUNDS:  # valid by construction (tested); checked once per call
        return DEFAULT_CLIP_BOUNDS
    if isinstance(bounds, np.ndarray) and bounds.ndim != 1:
        raise ValueError(f"bounds must be a one-dimensional sequence of candidate clipping "
                         f"bounds (finite numbers > 0, increasing), got an array of shape "
                         f"{bounds.shape}")
    grid = list(bounds)
    if not grid:
        raise ValueError("bounds must hold at least one candidate clipping bound, got none")
    checked = []
    for i, b in enumerate(grid):
        value = as_fraction(b, f"bounds[{i}]")
        if Fraction(float(value)) != value:
            raise ValueError(f"bounds[{i}] must be exactly representable as a float64 "
                             f"(a clipping bound is compared with float values), got {b!r}")
        if value <= 0:
            raise ValueError(f"bounds[{i}] must be a finite number > 0, got {b!r}")
        if checked and value <= checked[-1]:
            raise ValueError(f"bounds must be strictly increasing, got bounds[{i - 1}]="
                             f"{grid[i - 1]!r} then bounds[{i}]={b!r}")
        checked.append(value)
    return tuple(int(b) if isinstance(b, numbers.Integral) else float(v)
                 for b, v in zip(grid, checked, strict=True))


def _clip_query_units(values: np.ndarray, grid: tuple[int | float, ...], bits: int) -> list[int]:
    """For each candidate ``b``: ``sum(clip(v, 0, b)) - sum(clip(v, 0, b + 1))`` in grid units.

    Row by row, ``clip(v, 0, b + 1) - clip(v, 0, b) = clip(v - b, 0, 1)``: 1 for ``v >= b + 1``,
    ``v - b`` between ``b`` and ``b + 1``, 0 below. Each row's term is rounded *down* to the
    grid ``2**-bits`` on its own (an integer in ``[0, 2**bits]``) and the terms are added
    exactly, so one row changes the total by at most ``2**bits`` units: sensitivity exactly 1,
    with no floating-point summation error. On sorted values only the rows between ``b`` and
    ``b + 1`` are visited.
    """
    ordered = np.sort(values)
    one = 2**bits
    starts = np.array([float(b) for b in grid])
    lows = np.searchsorted(ordered, starts, side="right")         # first v > b
    highs = np.searchsorted(ordered, starts + 1.0, side="left")   # first v >= b + 1
    answers = []
    for b, low, high in zip(starts, lows.tolist(), highs.tolist(), strict=True):
        full = len(ordered) - max(low, high)
        partial = 0
        if high > low:  # rows strictly between b and b + 1 contribute a fraction
            steps = np.floor(np.minimum(ordered[low:high] - b, 1.0) * float(one))
            partial = (sum(int(x) for x in steps) if steps.size * one >= 2**53
                       else int(steps.sum()))
        answers.append(-(full * one + partial))
    return answers


def _first_passes(answers: list[int], threshold: int, run_scale: Fraction, runs: int,
                  rng: RandomSource, block: int = 64) -> np.ndarray:
    """``runs`` independent runs of AboveThreshold on answers known in advance (grid units).

    Returns, per run, the index of the first answer with ``a_i + ν_i >= threshold + ρ``
    (``ρ`` of scale ``2 * run_scale``, ``ν_i`` of scale ``4 * run_scale``, all discrete
    Laplace), or -1 if none. The query noise is drawn ``block`` candidates at a time for the
    runs still undecided, vectorised; this is :func:`_svt`'s distribution exactly (noise
    drawn for a candidate a run never reaches would be independent of its output).
    """
    # int64 stays exact while |answers|, |threshold| < 2**61 and the noise scales < 2**50
    # (a draw beyond 2**61 then has probability below exp(-2**10)); else exact Python ints.
    if (max(abs(a) for a in answers) >= 2**61 or abs(threshold) >= 2**61
            or 4 * run_scale >= 2**50):
        return np.array([(_svt(iter(enumerate(answers)), threshold, run_scale, 1, rng)
                          or [-1])[0] for _ in range(runs)])
    values = np.asarray(answers, dtype=np.int64)
    noisy_thresholds = threshold + np.asarray(discrete_laplace(2 * run_scale, rng, size=runs),
                                              dtype=np.int64)
    result = np.full(runs, -1)
    undecided = np.arange(runs)
    for start in range(0, values.size, block):
        if not undecided.size:
            break
        chunk = values[start:start + block]
        nu = np.asarray(discrete_laplace(4 * run_scale, rng, size=(undecided.size, chunk.size)),
                        dtype=np.int64)
        passed = chunk[None, :] + nu >= noisy_thresholds[undecided, None]
        hit = passed.any(axis=1)
        result[undecided[hit]] = start + passed[hit].argmax(axis=1)
        undecided = undecided[~hit]
    return result


def above_threshold_runs(answers: Iterable[float], threshold: float, epsilon: float, *,
                         runs: int, rng: RandomSource | None = None) -> np.ndarray:
    """Run :func:`above_threshold` ``runs`` times on query answers known in advance.

    For studying AboveThreshold's accuracy (the book's figures and checks): the answers
    are rounded to the comparison grid once and the noise of all runs is drawn in bulk.
    Each run is distributed exactly as one call of :func:`above_threshold` with queries
    returning ``answers`` in order.

    Parameters
    ----------
    answers : iterable of real numbers
        The answers ``q_1(D), q_2(D), …`` of sensitivity-1 queries, at least one.
    threshold : real number
        The public threshold ``T``.
    epsilon : float
        Privacy parameter of each run, finite and > 0.
    runs : int
        Number of independent runs, an integer in ``[1, MAX_RUNS]`` (:data:`MAX_RUNS`
        is 100,000).
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.

    Returns
    -------
    numpy.ndarray of int
        Per run, the 0-based index of the first answer found above the threshold, or -1
        where none was (:func:`above_threshold` returns ``None`` there).

    Raises
    ------
    TypeError, ValueError
        As :func:`above_threshold`; also if ``answers`` is empty. ``TypeError`` if ``runs``
        is not an integer, ``ValueError`` if it is outside ``[1, MAX_RUNS]``.

    Notes
    -----
    **Privacy**: each run is an ε-DP release (Dwork & Roth 2014, Theorem 3.23); all of
    them together cost ``runs · ε``. Meant for simulation, not for releases.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> above_threshold_runs([0, 0, 50, 0], 25, 1.0, runs=5, rng=seeded(0)).tolist()
    [2, 2, 2, 2, 2]
    """
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    run_epsilon = _exact_epsilon(epsilon)
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Iterable):
        raise TypeError(f"answers must be an iterable of real numbers, got {answers!r}")
    exact = [as_fraction(a, f"answers[{i}]") for i, a in enumerate(answers)]
    if not exact:
        raise ValueError("answers must hold at least one query answer, got none")
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    run_scale = 1 / run_epsilon
    bits = _grid_bits(2 * run_scale)
    units = [_to_grid(a, bits) for a in exact]
    return _first_passes(units, _to_grid(exact_threshold, bits), run_scale * 2**bits, runs,
                         source)


def _check_rows(values: Any, grid: tuple[int | float, ...]) -> np.ndarray:
    """The rows as float64, clipped exactly to ``[0, max(bounds) + 1]`` (changes no query).

    Every query of :func:`choose_clip_bound` and :func:`auto_avg` clips a row to
    ``[0, b + 1]`` for a candidate ``b``, so clipping first to the largest such range
    changes no answer; it lets :func:`dpkit._checks.check_rows_to_clip` accept every finite
    row, so no error depends on one row being huge or not a float64.
    """
    return check_rows_to_clip(values, "values", 0.0, float(grid[-1]) + 1.0, ndim=1)


def _clip_bound_runs(values: Any, epsilon: Any, bounds: Any, threshold: Any, runs: int,
                     rng: Any) -> list[int | float | None]:
    """Validate and run :func:`choose_clip_bound` ``runs`` times, vectorised."""
    exact_epsilon = _exact_epsilon(epsilon)
    grid = _check_bounds_grid(bounds)
    data = _check_rows(values, grid)
    limit = (-CLIP_THRESHOLD_SCALES * 2 / exact_epsilon if threshold is None
             else as_fraction(threshold, "threshold"))
    source = resolve(rng)
    run_scale = 1 / exact_epsilon
    bits = _grid_bits(2 * run_scale)
    answers = _clip_query_units(data, grid, bits)
    chosen = _first_passes(answers, _to_grid(limit, bits), run_scale * 2**bits, runs, source)
    return [grid[i] if i >= 0 else None for i in chosen]


def choose_clip_bound(values: Any, epsilon: float, *, bounds: Iterable[float],
                      rng: RandomSource | None = None,
                      threshold: float | None = None) -> int | float | None:
    """Return the smallest candidate bound at which the clipped sum stops growing.

    For each candidate ``b`` in ``bounds`` (increasing) the query

        ``sum(clip(values, 0, b)) - sum(clip(values, 0, b + 1))``

    is minus (roughly) the number of values above ``b``; it has sensitivity 1, since one
    row changes it by at most 1. :func:`above_threshold` returns the first candidate whose
    query comes out (noisily) at or above the threshold: where raising the bound by 1 no
    longer adds (more than a few rows' worth) to the sum.

    Parameters
    ----------
    values : array_like of real numbers, one dimension
        One value per person. Values are clipped to ``[0, b]``: negative values count as 0.
        Every finite real number is accepted (an int beyond ``2**53``, a ``Fraction``, a
        value beyond the float range): each row is rounded to the nearest float64 and
        clipped exactly, so no error reveals that one row is huge or not a float64. The
        input domain -- finite real numbers -- is a precondition **the caller must
        enforce**: a NaN, infinity, bool or string is refused with an error, and that
        error reveals that some row is outside the domain. Pass a float64 array (see the
        "Input domain and timing" in the module docstring).
    epsilon : float
        Privacy parameter, finite and > 0.
    bounds : iterable of real numbers
        Candidate bounds, finite, > 0 and strictly increasing; must not depend on the data.
        Their number costs no privacy.
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.
    threshold : real number, optional
        The query value that counts as "stopped growing" (usually <= 0). Default
        ``-20/ε``: ten times the threshold noise's scale ``2/ε`` below 0 (see Notes).

    Returns
    -------
    int, float or None
        The chosen candidate (``int`` if it was given as an integer), or ``None`` if none
        qualified (the values run past every candidate: try larger ones).

    Raises
    ------
    TypeError
        If ``values`` or ``bounds`` do not hold real numbers.
    ValueError
        If ``epsilon`` is not finite and > 0, ``values`` is empty or holds NaN or an
        infinity (outside the input domain; see ``values``), or ``bounds`` is empty, not
        positive, not strictly increasing, not exactly float64 values, or an array that
        is not one-dimensional (a 0-d ``numpy.array(1.0)`` included).

    Notes
    -----
    **Privacy**: ε-differentially private under adding, removing or changing one row (one
    run of AboveThreshold, Dwork & Roth 2014, Theorem 3.23). Each row's contribution
    ``clip(v - b, 0, 1)`` is rounded down to the comparison grid before an exact integer
    sum, so the computed query has sensitivity exactly 1, and the comparison with the
    noisy threshold is exact (discrete Laplace noise on the grid, as in
    :func:`above_threshold`). Choosing the bound with SVT follows Near & Abuah (2021),
    *Programming Differential Privacy*, chapter on the sparse vector technique.

    **Why the threshold is below 0.** The query never exceeds 0, and past the largest value
    it *is* 0, so with threshold 0 each later candidate passes only with probability about
    1/2, and the threshold noise is shared: one large draw ``ρ`` makes every later
    candidate fail, so the bound overshoots by many steps, sometimes past the whole grid
    (the chance of overshooting by ``j`` candidates decays only like ``1/j**2``). A
    threshold ``-20/ε`` multiplies those chances by ``e**-10`` (5e-5), at the price of stopping
    where about ``20/ε`` rows still lie above ``b``.
    """
    return _clip_bound_runs(values, epsilon, bounds, threshold, 1, rng)[0]


def clip_bound_runs(values: Any, epsilon: float, *, bounds: Iterable[float], runs: int,
                    rng: RandomSource | None = None,
                    threshold: float | None = None) -> list[int | float | None]:
    """Run :func:`choose_clip_bound` ``runs`` times independently, vectorised.

    For studying the distribution of the chosen bound (the book's figures): the query
    answers are computed once and the noise for all runs is drawn in bulk.

    Parameters
    ----------
    values, epsilon, bounds, rng, threshold
        As :func:`choose_clip_bound`.
    runs : int
        Number of independent runs, an integer in ``[1, MAX_RUNS]`` (:data:`MAX_RUNS`
        is 100,000).

    Returns
    -------
    list
        One chosen bound (or ``None``) per run.

    Raises
    ------
    TypeError, ValueError
        As :func:`choose_clip_bound`. ``TypeError`` if ``runs`` is not an integer,
        ``ValueError`` if it is outside ``[1, MAX_RUNS]``.

    Notes
    -----
    **Privacy**: each run is an ε-DP release; releasing all of them costs ``runs · ε``
    (sequential composition). Meant for simulation, not for releases.
    """
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    return _clip_bound_runs(values, epsilon, bounds, threshold, runs, rng)


def _release_on_grid(units: int, sensitivity_units: int, epsilon: Fraction, k: int,
                     rng: RandomSource, size: int) -> list[Fraction]:
    """``size`` independent releases of ``(units + Z) · 2**k``, exactly.

    ``units`` is a query value on the grid ``2**k · Z`` whose sensitivity, in grid units, is
    at most the integer ``sensitivity_units``; ``Z`` is discrete Laplace with scale
    ``sensitivity_units / epsilon``, so each release is ``epsilon``-DP (the discrete Laplace
    mechanism, Canonne, Kamath & Steinke 2020). Callers choose the grid so that this scale
    is at least 1: the exact sampler's cost grows as the scale shrinks towards 0.
    """
    noise = discrete_laplace(Fraction(sensitivity_units) / epsilon, rng, size=size)
    step = Fraction(2) ** k
    return [(units + int(z)) * step for z in noise.tolist()]


def _nearest_float(value: Fraction) -> float:
    """The float nearest to ``value`` (``int / int`` is correctly rounded), or ``±inf``
    where IEEE 754 rounding overflows, as it does for a float operation; never an error,
    so that no error depends on the noise in ``value``."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _clipped_sum_units(data: np.ndarray, bound: float,
                       epsilon: Fraction) -> tuple[int, int, int]:
    """The clipped sum on a grid, exactly: ``(sum of floor(clip(v, 0, b) / 2**k), ceiling, k)``.

    ``2**k`` is at most ``b · min(1, 1/ε) · 2**-20`` (:func:`dpkit._samplers.grid.grid_exponent`),
    ``ε`` the budget of the sum's release: its noise scale ``ceiling/ε`` is then at least
    ``2**20`` grid units. Each row's term is rounded *down* on its own, to an integer in
    ``[0, floor(b / 2**k)]`` (the ``ceiling``, the sum's sensitivity in grid units), and the
    terms are added as integers: unlike a floating-point sum, whose rounding is not
    shift-invariant, one row moves the total by at most ``ceiling`` units. Scaling by a
    power of two and ``floor`` are exact.
    """
    k = grid_exponent(Fraction(bound) / max(1, epsilon))
    ceiling = math.floor(Fraction(bound) / Fraction(2) ** k)
    terms = np.floor(np.ldexp(np.clip(data, 0.0, bound), -k))  # integers in [0, ceiling]
    total = (int(terms.astype(np.int64).sum()) if terms.size * ceiling < 2**62
             else sum(int(t) for t in terms.tolist()))
    return total, ceiling, k


def auto_avg(values: Any, epsilon: float, *, bounds: Iterable[float] | None = None,
             rng: RandomSource | None = None) -> float:
    """Return a differentially private average with a clipping bound chosen privately.

    Three steps, ε/3 each:

    1. ``b = choose_clip_bound(values, ε/3, bounds=bounds)`` (the largest candidate if none
       qualifies: a data-independent fallback, so it costs nothing);
    2. a noisy clipped sum: ``sum(clip(values, 0, b))`` plus Laplace noise of scale ``b / (ε/3)``
       (discrete Laplace on a grid finer than ``b·min(1, 3/ε)·2**-20``);
    3. a noisy count of rows: ``len(values)`` plus discrete Laplace noise of scale ``3/ε``
       (on the integers, or on a grid ``2**k <= 3/ε`` when ``ε > 3``);

    and the result is the noisy sum divided by the noisy count. The count is a *count of
    rows*; dividing by a second noisy clipped sum instead (a slip in one translated write-up
    of Near & Abuah's version, see :func:`dpkit.naive.auto_avg`) returns about 1 whatever
    the data.

    Parameters
    ----------
    values : array_like of real numbers, one dimension
        One value per person; the average is of the values clipped to ``[0, b]``. Every
        finite real number is accepted and clipped exactly; a NaN, infinity, bool or
        string is refused, and that error reveals that some row is outside the input
        domain (finite real numbers): enforce the domain before the release (see
        :func:`choose_clip_bound`).
    epsilon : float
        Total privacy parameter, finite and > 0.
    bounds : iterable of real numbers, optional
        Candidate clipping bounds (see :func:`choose_clip_bound`); default
        :data:`DEFAULT_CLIP_BOUNDS` (1 to 200, then steps of about 1% up to 2**40).
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.

    Returns
    -------
    float
        The noisy clipped sum over the noisy count, computed exactly and rounded once to
        the nearest float. The count is floored at 1 before the division (post-processing,
        so free). The result is finite unless the exact ratio lies beyond the float range
        (about 1.8e308), where it is ``±inf``, as IEEE 754 rounds an overflow: that takes
        a noisy sum beyond 1.8e308, so a bound ``b`` near that limit (the sum is at most
        ``b`` times the number of rows; its noise has scale ``3b/ε``).

    Raises
    ------
    TypeError, ValueError
        As :func:`choose_clip_bound`.

    Notes
    -----
    **Privacy**: ε-differentially private under adding or removing one row (and under
    changing one: sensitivities b and 0 ≤ 1 then), by sequential composition of three
    mechanisms with the exact rational budget ε/3 each (Dwork & Roth 2014, Theorem 3.16):
    AboveThreshold (Theorem 3.23) and two discrete Laplace mechanisms (Canonne, Kamath &
    Steinke 2020). The clipped sum is computed on a grid ``2**k <= b·2**-20`` with each
    row's term rounded down on its own and the terms added as integers, so one row moves
    it by at most ``b`` exactly (a floating-point sum can move by more: rounding is not
    shift-invariant); the count of rows is an integer. The noisy values are converted to
    floats only at the end (post-processing).

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> round(auto_avg([30, 40, 50] * 1000, 1.0, rng=seeded(0)), 1)
    40.1
    """
    return float(_auto_avg_runs(values, epsilon, bounds, 1, rng)[0])


def _auto_avg_runs(values: Any, epsilon: Any, bounds: Any, runs: int, rng: Any) -> np.ndarray:
    """``runs`` independent runs of :func:`auto_avg` (the noise drawn in bulk)."""
    share = _exact_epsilon(epsilon, 3) / 3
    grid = _check_bounds_grid(DEFAULT_CLIP_BOUNDS if bounds is None else bounds)
    data = _check_rows(values, grid)
    source = resolve(rng)
    chosen = _clip_bound_runs(data, share, grid, None, runs, source)
    bounds_used = np.array([float(grid[-1] if b is None else b) for b in chosen])
    noisy_sums = [Fraction(0)] * runs
    for bound in np.unique(bounds_used):
        runs_with_bound = np.flatnonzero(bounds_used == bound).tolist()
        total, ceiling, k = _clipped_sum_units(data, float(bound), share)
        releases = _release_on_grid(total, ceiling, share, k, source, len(runs_with_bound))
        for run, release in zip(runs_with_bound, releases, strict=True):
            noisy_sums[run] = release
    # The count on the grid 2**k <= min(1, 1/share): noise scale >= 1 grid unit.
    k = min(0, grid_exponent(1 / share, bits=0))
    noisy_counts = _release_on_grid(len(data) << -k, 1 << -k, share, k, source, runs)
    return np.array([_nearest_float(total / max(count, 1))
                     for total, count in zip(noisy_sums, noisy_counts, strict=True)])


def auto_avg_runs(values: Any, epsilon: float, *, runs: int,
                  bounds: Iterable[float] | None = None,
                  rng: RandomSource | None = None) -> np.ndarray:
    """Run :func:`auto_avg` ``runs`` times independently, with the noise drawn in bulk.

    For studying the error of :func:`auto_avg` (the book's figures).

    Parameters
    ----------
    values, epsilon, bounds, rng
        As :func:`auto_avg`.
    runs : int
        Number of independent runs, an integer in ``[1, MAX_RUNS]`` (:data:`MAX_RUNS`
        is 100,000).

    Returns
    -------
    numpy.ndarray
        One private average per run.

    Raises
    ------
    TypeError, ValueError
        As :func:`auto_avg`. ``TypeError`` if ``runs`` is not an integer, ``ValueError``
        if it is outside ``[1, MAX_RUNS]``.

    Notes
    -----
    **Privacy**: each run is an ε-DP release; all of them together cost ``runs · ε``.
    Meant for simulation, not for releases. Each run is distributed exactly as one call of
    :func:`auto_avg`.
    """
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    return _auto_avg_runs(values, epsilon, bounds, runs, rng)


def range_queries(queries: Iterable[Query], data: Any, c: int, threshold: float,
                  epsilon: float, *, rng: RandomSource | None = None
                  ) -> list[tuple[int, float]]:
    """Answer the (at most ``c``) queries whose answers are above a threshold, privately.

    Half the budget goes to :func:`sparse`, which picks up to ``c`` queries whose noisy
    answers reach the noisy threshold; the other half to (discrete) Laplace noise, which
    answers each picked query with ε/(2c). Typical use: counting queries over ranges
    (age bands), of which only the well-populated ones are worth releasing.

    Parameters
    ----------
    queries : iterable of callables
        ``query(data) -> real number`` of sensitivity at most 1 (counts), consumed lazily.
    data : any
        Passed to each query unchanged.
    c : int
        The most queries to answer, an integer >= 1.
    threshold : real number
        The public threshold.
    epsilon : float
        Total privacy parameter, finite and > 0.
    rng : RandomSource, optional
        Source of random bits; ``None`` (default) is the secure OS source.

    Returns
    -------
    list of (int, float)
        ``(index, noisy answer)`` for each picked query, in stream order: the exact noisy
        answer rounded once to the nearest float. (It would be ``±inf`` only if the noise
        exceeded ``2**1023``, whose probability is below ``exp(-2**958)``: the noise scale
        is at most ``2**64``.)

    Raises
    ------
    TypeError, ValueError
        As :func:`sparse`; also ``ValueError`` if a query's answer exceeds
        :data:`RANGE_ANSWER_LIMIT` (``2**1000``, about 1.07e301) in magnitude, raised when
        that query is evaluated. (Queries are evaluated lazily, so as with a NaN answer, a
        query is checked only if the stream reaches it.)

    Notes
    -----
    **Privacy**: ε-differentially private by sequential composition (Dwork & Roth 2014,
    Theorem 3.16) of Sparse with ε/2 (Theorem 3.25) and at most ``c`` Laplace mechanisms
    with ε/(2c) each, all exact rationals. The answers are rounded exactly to the grid
    ``2**-bits <= min(1, 2c/ε)·2**-20`` (the rounding commutes with adding 1, so a count
    keeps sensitivity ``2**bits`` grid units) and released with fresh discrete Laplace
    noise (Canonne, Kamath & Steinke 2020), independent of the noise Sparse used to pick
    them.
    """
    c = check_integer(c, "c", minimum=1)
    run_epsilon = _exact_epsilon(epsilon, 2 * c) / (2 * c)  # c runs of Sparse, c answers
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    # Key each answer by (index, exact answer) so the picks come back with their answers.
    keyed = (((i, a), a) for i, a in _releasable_answers(queries, data))
    found = _sparse_on_answers(keyed, exact_threshold, run_epsilon, c, source)
    # Answers on the grid 2**-bits <= min(1, 1/run_epsilon)·2**-20: sensitivity 2**bits units,
    # noise scale 2**bits/run_epsilon >= 2**20 units.
    bits = _grid_bits(min(Fraction(1), 1 / run_epsilon))
    return [(i, _nearest_float(_release_on_grid(_to_grid(answer, bits), 2**bits, run_epsilon,
                                                -bits, source, 1)[0]))
            for i, answer in found]


def _releasable_answers(queries: Any, data: Any) -> Iterator[tuple[int, Fraction]]:
    """:func:`_answers`, refusing an answer beyond :data:`RANGE_ANSWER_LIMIT` in magnitude
    as soon as it is evaluated (before the noise compared with it is drawn)."""
    for index, answer in _answers(queries, data):
        if abs(answer) > RANGE_ANSWER_LIMIT:
            text = repr(answer)
            text = text if len(text) <= 60 else text[:57] + "..."
            raise ValueError(f"queries[{index}](data) must be at most 2**1000 (about 1.07e301) "
                             f"in magnitude, so that its noisy release is a float, got {text}")
        yield index, answer
