"""Choosing a clipping bound privately with the sparse vector technique; ``auto_avg``.

:func:`choose_clip_bound` picks a clipping bound for a sum from the data itself, privately:
one run of AboveThreshold (:mod:`dpkit.svt.core`) over increasing candidate bounds, stopping
where raising the bound no longer adds to the clipped sum. :func:`auto_avg` spends a third
of its budget on that choice and releases a clipped average with the rest.
:func:`clip_bound_runs` and :func:`auto_avg_runs` simulate many independent runs of each.

Input domain and timing
-----------------------
:func:`choose_clip_bound` and :func:`auto_avg` accept every finite real number of bounded
length as a row and clip it exactly (:func:`dpkit._checks.check_rows_to_clip`): no error
depends on one row being huge or not a float64. A row outside the domain -- NaN, infinity, a
bool, a string, a Fraction of more than 1,200-bit parts within the float range, a Decimal of
more than :data:`~dpkit._exact.MAX_ROW_DECIMAL_DIGITS` (608) digits -- is refused, and that
error reveals that some row is outside it: enforcing the domain is the caller's precondition.
A Python list is converted in one pass whose cost hardly depends on the types of its
elements (ints, floats, Fractions alike), but it is slower than a float64 NumPy array and
its cost grows with the rows' Python objects: pass a float64 array. A Decimal row of more
than :data:`ROW_DIGITS_ROUNDED` (40) significant digits is first cut toward zero to that
many, then rounded to the nearest float: rounding 608 digits near a halfway point between
two floats takes ``float()`` about 27 µs (1 U) a row, 40 digits about 1.5 µs (breaker
review 33), and a deadline charges every row of a list the cost of the slowest. The cut
moves a row by less than ``10**-39`` of its value, and the float it rounds to by at most one
step; it is monotone and a function of that row alone, so each row's contribution stays in
its clipping range and the sensitivity is unchanged.

Under adding or removing one row -- the neighbouring relation these releases are private
for (:func:`auto_avg` releases a noisy count of rows) -- the number of rows is private, so it
must not set the running time. Every function here ends at a deadline
(:mod:`dpkit.timing`) set by public quantities only: the candidate bounds, the number of
runs, the kind of container (a float64 array or Python objects) and ``max_rows``, a public
upper bound on the number of rows (default :data:`DEFAULT_MAX_ROWS`, 65,536), never
``len(values)``. The public inputs are checked first, before the clock starts (a caller's
candidate bounds included, whose check costs time per candidate), and more than
``max_rows`` rows are refused from ``len(values)`` before any of them is read; that error
reveals only that the data has more than ``max_rows`` rows (not how many). A refusal is not
an output of the mechanism, so the ε-DP guarantee covers data sets of at most ``max_rows``
rows only, neighbours included: ``max_rows`` must be fixed without looking at the data, as
a bound that no data set under consideration exceeds. A data set's exact size is not such
a bound (its neighbour with one more row would be refused, and the refusal would tell the
two apart): leave room above it. The
public size is then declared, and only then are the rows read: an error about a row (a
NaN, say) waits for the deadline before it is raised, so its time does not reveal the
other rows (see "Errors" in :mod:`dpkit.timing`). Its message describes the data (the
index of the refused row, say) to the caller, who owns the data: it must not be published.
The answers for all the candidates are computed at once from the sorted rows
(:func:`clip_query_units`), with no step per candidate that depends on where the rows lie.
The int64 or exact arithmetic paths are chosen from ``max_rows`` and the candidates too.
The wait grows with ``max_rows`` and the number of candidates: with the defaults, about
75 ms (:func:`choose_clip_bound`) and 90 ms (:func:`auto_avg`) on a float64 array on a
shared 2-core server (most of it the AboveThreshold steps over the 2,481 candidates), and
about 2 s on a list of Python objects. Candidates that are not multiples of
``2**-min(k, 53)`` (``2**-k`` the comparison grid, about ``2**-19/ε``; tenths, say) are
answered (row, candidate) pair by pair, and the deadline then charges ``max_rows`` pairs
for each such candidate that a row can lie above: prefer integers or dyadic fractions.

References
----------
Dwork, C. and Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
Section 3.6. Canonne, C., Kamath, G. and Steinke, T. (2020). The Discrete Gaussian for
Differential Privacy. NeurIPS.
"""

from __future__ import annotations

import itertools
import math
import numbers
import sys
from collections.abc import Iterable, Iterator, Sized
from decimal import MAX_EMAX, MIN_EMIN, ROUND_DOWN, Context, Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer, check_rows_to_clip, check_shape
from dpkit._exact import as_fraction, too_long
from dpkit._samplers.grid import grid_exponent
from dpkit.rng import RandomSource, resolve
from dpkit.svt.core import (
    MAX_RUNS,
    exact_epsilon,
    first_passes,
    grid_bits,
    nearest_float,
    release_on_grid,
    round_to_grid,
    warm_up_answers,
)
from dpkit.timing import Cost, Deadline, kind_of, run_padded, warm_up_calls

__all__ = ["CLIP_THRESHOLD_SCALES", "DEFAULT_CLIP_BOUNDS", "DEFAULT_MAX_ROWS", "MAX_ROWS_LIMIT",
           "auto_avg", "auto_avg_runs", "choose_clip_bound", "clip_bound_runs"]

#: The costs of :func:`choose_clip_bound` and :func:`auto_avg`, per row (a vector value; a
#: candidate counts as several, see :func:`_declare`) (see :mod:`dpkit.timing`;
#: ``benchmarks/deadlines.py``, with rows strictly between candidates, fine custom bounds,
#: lists of every element type and ``max_rows`` equal to the number of rows). Set at 0.6
#: times the constants of e0882c4, which were the worst work measured then, before the
#: vectorised samplers grew faster: measured on 2026-11-28 (1,000 calls a case, load 1.8,
#: the other core busy), the work's median was at most 0.41 of those deadlines at margin 1
#: (``default bounds``, ε = 1000, 65,536 rows) and its 99.9th percentile at most 0.81
#: (``auto_avg`` on 1,000 Fractions); at 0.6 times, 0.68 and 1.35: the allowance covers the
#: slowest input's median, and the margin of 2 its 99.9th percentile. The slowest rows, 608
#: digits near a halfway point between floats, took 1 U each to round until they were cut
#: to :data:`ROW_DIGITS_ROUNDED` digits (breaker review 33); since, at most 0.43 of the new
#: margin-1 deadline at the median and 1.22 at the 99.9th percentile (300 calls, load 1.2).
COST = Cost(fixed=9.6, per_value=0.3, large=15.0, per_vector_value=84.0, per_object=0.3)
AUTO_AVG_COST = Cost(fixed=6.0, per_value=0.3, large=60.0, per_vector_value=96.0,
                     per_object=0.3)
#: A Decimal row of more significant digits than this is cut toward zero to this many before
#: it is rounded to a float (:func:`_short_decimals`; "Input domain and timing" above).
ROW_DIGITS_ROUNDED = 40
_CUT = Context(prec=ROW_DIGITS_ROUNDED, rounding=ROUND_DOWN, Emax=MAX_EMAX, Emin=MIN_EMIN,
               traps=[])
#: A candidate bound's cost in vector values: its step of AboveThreshold (exact noise
#: drawn a block at a time, :func:`dpkit.svt.core.first_passes`) costs far more than a
#: row's share of the sorting and sums; and per run, in ``*_runs``.
CANDIDATE_VALUES = 16
RUN_VALUES = 4


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


#: The default ``max_rows`` of :func:`choose_clip_bound`, :func:`auto_avg` and their
#: ``*_runs`` helpers: the public bound on the number of rows that sets their deadline
#: (2**16 = 65,536, more than UCI Adult's 48,842 rows). A data set with more rows is
#: refused unless the caller passes a larger public bound.
DEFAULT_MAX_ROWS = 2**16

#: The largest ``max_rows`` accepted (2**32): beyond it the deadline (and the float64
#: array of the rows, 32 GiB) would exceed any machine this runs on.
MAX_ROWS_LIMIT = 2**32

_LARGEST_FLOAT = Fraction(sys.float_info.max)


#: :func:`choose_clip_bound`'s default threshold is this many threshold-noise scales
#: (``2/ε``) below 0, that is ``-20/ε``.
CLIP_THRESHOLD_SCALES = 10


def check_bounds_grid(bounds: Any) -> tuple[float, ...]:
    """Validate candidate clipping bounds: finite, > 0, at most the largest float64 (and
    exactly float64 values), strictly increasing, at least one."""
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
        if value <= 0:
            raise ValueError(f"bounds[{i}] must be a finite number > 0, got {b!r}")
        if value > _LARGEST_FLOAT:
            magnitude = math.log2(value.numerator) - math.log2(value.denominator)
            raise ValueError(f"bounds[{i}] must be at most the largest float64, about 1.8e308 "
                             f"(a clipping bound is compared with float values), got a value "
                             f"of about 2**{magnitude:.1f}")
        if Fraction(float(value)) != value:
            raise ValueError(f"bounds[{i}] must be exactly representable as a float64 "
                             f"(a clipping bound is compared with float values), got {b!r}")
        if checked and value <= checked[-1]:
            raise ValueError(f"bounds must be strictly increasing, got bounds[{i - 1}]="
                             f"{grid[i - 1]!r} then bounds[{i}]={b!r}")
        checked.append(value)
    return tuple(int(b) if isinstance(b, numbers.Integral) else float(v)
                 for b, v in zip(grid, checked, strict=True))


def clip_query_units(values: np.ndarray, grid: tuple[int | float, ...], bits: int, *,
                     max_rows: int) -> list[int]:
    """For each candidate ``b``: ``sum(clip(v, 0, b)) - sum(clip(v, 0, b + 1))`` in grid units.

    Row by row, ``clip(v, 0, b + 1) - clip(v, 0, b) = clip(v - b, 0, 1)``: 1 for ``v >= b + 1``,
    ``v - b`` between ``b`` and ``b + 1``, 0 below. Each row's term is rounded *down* to the
    grid ``2**-bits`` on its own (an integer in ``[0, 2**bits]``) and the terms are added
    exactly, so one row changes the total by at most ``2**bits`` units: sensitivity exactly 1,
    with no floating-point summation error.

    Every candidate is answered at once, with no step per candidate that depends on the data
    (the rows must not set the running time, see :mod:`dpkit.timing`). On the sorted rows
    (``values``, float64, ``>= 0``), the rows strictly between ``b`` and ``b + 1`` are a range
    ``[low, stop)`` found by :func:`numpy.searchsorted`. For a candidate on the grid ``2**-m``,
    ``m = min(bits, 53)`` (an integer, or a multiple of ``2**-12`` when ``bits >= 12``: a
    public property of the candidate), ``v - b`` is exact and each row's term is
    ``floor(v · 2**bits) - b · 2**bits``, so the range's total is a difference of one
    cumulative sum of ``floor(v · 2**bits)``. Another candidate's terms are
    computed pair by pair, (row, candidate) pairs flattened into one array: at most
    ``max_rows`` pairs per such candidate that a point can lie above (:func:`_pairs_bound`,
    public). Sums are modulo ``2**64`` (exact, as every total lies in
    ``[0, max_rows · 2**bits]``), or exact Python ints when ``max_rows · 2**bits >= 2**64``,
    a choice made from ``max_rows``, never from the number of rows.
    """
    ordered = np.sort(values)
    one = 2**bits
    wide = max_rows * one >= 2**64
    starts = np.array(grid, dtype=np.float64)
    lows = np.searchsorted(ordered, starts, side="right")         # first v > b
    highs = np.searchsorted(ordered, starts + 1.0, side="left")   # first v >= b + 1
    inside = np.maximum(highs - lows, 0)   # rows strictly between b and b + 1
    counts = inside.astype(object if wide else np.uint64)
    small = (float(starts[-1]) + 1.0) * float(one) < 2.0**63  # each floor(v·2**bits) in int64
    partial = (_range_sums(_floor_scaled(ordered, bits, wide, small), lows, lows + inside)
               - counts * _floor_scaled(starts, bits, wide, small))
    odd = np.flatnonzero(~_on_grid(starts, bits))
    partial[odd] = _pair_sums(ordered, starts[odd], lows[odd], inside[odd], one, wide)
    full = len(ordered) - np.maximum(lows, highs)
    if max_rows * one < 2**63:  # |answer| <= max_rows · 2**bits
        return (-(full * one + partial.astype(np.int64))).tolist()
    return [-(f * one + p) for f, p in zip(full.tolist(), partial.tolist(), strict=True)]


def _on_grid(starts: np.ndarray, bits: int) -> np.ndarray:
    """Which candidates are multiples of ``2**-min(bits, 53)``: for those, ``v - b`` is exact
    for every float ``v`` in ``(b, b + 1)`` and ``b · 2**bits`` is an integer."""
    with np.errstate(over="ignore"):  # an infinite product: beyond 2**1023, an integer
        scaled = np.ldexp(starts, min(bits, 53))
    return np.floor(scaled) == scaled


def _pair_sums(ordered: np.ndarray, starts: np.ndarray, lows: np.ndarray, inside: np.ndarray,
               one: int, wide: bool) -> np.ndarray:
    """Each candidate's sum of ``floor(min(v - b, 1) · 2**bits)`` over its rows
    ``ordered[low:low + inside]``, computed on the flattened (row, candidate) pairs."""
    offsets = np.cumsum(inside) - inside
    pairs = np.arange(int(inside.sum())) - np.repeat(offsets - lows, inside)
    steps = np.floor(np.minimum(ordered[pairs] - np.repeat(starts, inside), 1.0) * float(one))
    terms = np.frompyfunc(int, 1, 1)(steps) if wide else steps.astype(np.uint64)
    return _range_sums(np.asarray(terms, dtype=object if wide else np.uint64), offsets,
                       offsets + inside)


def _pairs_bound(grid: tuple[int | float, ...], bits: int, max_rows: int) -> int:
    """A public bound on the (row, candidate) pairs :func:`_pair_sums` visits: ``max_rows``
    times the most candidates off the grid ``2**-min(bits, 53)`` within a width of 2 (a row
    lies strictly between ``b`` and ``b + 1`` for at most that many of them)."""
    starts = np.array(grid, dtype=np.float64)
    odd = starts[~_on_grid(starts, bits)]
    if odd.size == 0:
        return 0
    width = np.searchsorted(odd, odd + 2.0, side="right") - np.arange(odd.size)
    return max_rows * int(width.max())


def _floor_scaled(values: np.ndarray, bits: int, wide: bool, small: bool) -> np.ndarray:
    """``floor(v · 2**bits)`` of each (nonnegative, finite) float, exactly: modulo ``2**64``
    as ``uint64`` (wrapping), or with ``wide`` as Python ints (an object array).

    ``v = h + l`` with ``h = floor(v)`` and ``l`` in ``[0, 1)`` (both exact), so
    ``floor(v · 2**bits) = h · 2**bits + floor(l · 2**bits)``; ``fmod`` by a power of two
    and scaling by one are exact. With ``small`` (every ``v · 2**bits`` below ``2**63``, a
    public bound) it is one exact conversion. The same NumPy calls whatever the values.
    """
    if small and not wide:
        return np.floor(np.ldexp(values, bits)).astype(np.int64).astype(np.uint64)
    whole = np.floor(values)
    low = np.floor(np.ldexp(values - whole, bits))  # an integer in [0, 2**bits)
    if wide:
        as_int = np.frompyfunc(int, 1, 1)
        return (as_int(whole) << bits) + as_int(low)
    high = (np.fmod(whole, 2.0**(64 - bits)).astype(np.uint64) << np.uint64(bits)
            if bits < 64 else np.zeros(values.shape, np.uint64))
    return high + np.fmod(low, 2.0**64).astype(np.uint64)


def _range_sums(terms: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``terms[starts[j]:stops[j]].sum()`` for every ``j`` from one cumulative sum (``uint64``
    wrapping modulo ``2**64``, or exact Python ints): no step per range."""
    totals = np.concatenate((np.zeros(1, terms.dtype), np.cumsum(terms, dtype=terms.dtype)))
    return totals[stops] - totals[starts]


def check_max_rows(max_rows: Any) -> int:
    """Validate ``max_rows``, the public bound on the number of rows: an integer in
    ``[1, MAX_ROWS_LIMIT]``."""
    return check_integer(max_rows, "max_rows", minimum=1, maximum=MAX_ROWS_LIMIT)


def _refuse_extra_rows(values: Any, max_rows: int) -> None:
    """Refuse more than ``max_rows`` rows, from ``len(values)`` alone (before the rows are
    converted or read). An input without a length is counted once converted (at most
    ``max_rows + 1`` of its items, :func:`_check_rows`). The message says only that there
    are more than ``max_rows`` rows: the number itself is private."""
    try:
        rows = len(values)
    except TypeError:  # a scalar or an iterator: refused or counted after the conversion
        return
    if rows > max_rows:
        raise ValueError(f"values has more than max_rows={max_rows:,} rows (the public bound "
                         f"on the number of rows that sets the running time): pass a larger "
                         f"max_rows, a public upper bound on the number of rows fixed without "
                         f"looking at the data that no data set under consideration exceeds, "
                         f"with room above any one data set's size (this error reveals that "
                         f"the data has more than max_rows rows)")


def _check_public(values: Any, bounds: Any, max_rows: Any) -> tuple[tuple[int | float, ...], int]:
    """The public checks, run before the clock starts: the candidate bounds, ``max_rows``,
    and the refusal of more than ``max_rows`` rows from ``len(values)`` alone."""
    grid = check_bounds_grid(bounds)
    max_rows = check_max_rows(max_rows)
    _refuse_extra_rows(values, max_rows)
    return grid, max_rows


def _declare(clock: Deadline, values: Any, grid: tuple[int | float, ...], runs: int,
             max_rows: int, bits: int) -> None:
    """Declare the public size that sets the deadline: the candidates (and two more for the
    threshold and bookkeeping), each counted as :data:`CANDIDATE_VALUES` vector values plus
    :data:`RUN_VALUES` per run, the (row, candidate) pairs of the
    candidates off the comparison grid (:func:`_pairs_bound`), and ``max_rows`` rows (of
    the kind of container the caller passed), never the number of rows itself; and with
    ``max_rows · 2**bits >= 2**64``, ``max_rows`` exact Python ints."""
    clock.size((len(grid) + 2) * (CANDIDATE_VALUES + RUN_VALUES * runs)
               + _pairs_bound(grid, bits, max_rows))
    clock.add(kind_of(values), max_rows)
    if max_rows << bits >= 2**64:
        clock.add("objects", max_rows)


def _check_rows(values: Any, grid: tuple[int | float, ...], max_rows: int) -> np.ndarray:
    """The rows as float64, clipped exactly to ``[0, max(bounds) + 1]`` (changes no query).

    Every query of :func:`choose_clip_bound` and :func:`auto_avg` clips a row to
    ``[0, b + 1]`` for a candidate ``b``, so clipping first to the largest such range
    changes no answer; it lets :func:`dpkit._checks.check_rows_to_clip` accept every finite
    row, so no error depends on one row being huge or not a float64. Runs after the public
    size is declared, so its errors wait for the deadline. An input without a length (an
    iterator) is read up to ``max_rows + 1`` items, so refusing it stays within the deadline.
    """
    if not isinstance(values, Sized) and isinstance(values, Iterator):
        values = list(itertools.islice(values, max_rows + 1))
    data = check_rows_to_clip(_short_decimals(values), "values", 0.0, float(grid[-1]) + 1.0,
                              ndim=1)
    _refuse_extra_rows(data, max_rows)  # an input without a length, now counted
    return data


def _short_decimals(values: Any) -> Any:
    """``values`` with each finite, non-zero Decimal (a subclass too) of more than
    :data:`ROW_DIGITS_ROUNDED` significant digits cut toward zero to that many, as an object
    array, if ``values`` is a one-dimensional container of Python objects (a list, a tuple,
    a deque, an object array, a pandas Series: :func:`dpkit._checks.check_shape`); a typed
    array, or anything :func:`dpkit._checks.check_rows_to_clip` will refuse, unchanged. A
    NaN, an infinity or a zero is left as given (a signalling NaN is refused here, named as
    ``check_rows_to_clip`` names a NaN), and so is a Decimal too long to read in a
    time that does not depend on its length (:func:`dpkit._exact.too_long`): that function
    refuses them with their own message (breaker review 34).

    >>> _short_decimals([Decimal("0." + "3" * 50), Decimal("1.5"), 2.5]).tolist()
    [Decimal('0.3333333333333333333333333333333333333333'), Decimal('1.5'), 2.5]
    >>> _short_decimals(np.zeros(2)).dtype
    dtype('float64')
    """
    try:
        rows = check_shape(values, "values", ndim=1)
    except (TypeError, ValueError):
        return values
    if rows.dtype != object:
        return values
    cut = rows.tolist()
    for i, row in enumerate(cut):
        if isinstance(row, Decimal) and row.is_finite() and not row.is_zero() and \
                not too_long(row):
            cut[i] = _CUT.plus(row)
        elif isinstance(row, Decimal) and row.is_snan():  # float() would not name the row
            raise ValueError(f"values must hold finite numbers only, got {row!r} at index {i}")
    out = np.empty(len(cut), dtype=object)
    out[:] = cut
    return out


def _clip_bound_runs(data: np.ndarray, run_epsilon: Fraction, grid: tuple[int | float, ...],
                     limit: Fraction, runs: int, source: RandomSource,
                     max_rows: int) -> list[int | float | None]:
    """:func:`choose_clip_bound` ``runs`` times, vectorised, on checked rows ``data``."""
    run_scale = 1 / run_epsilon
    bits = grid_bits(2 * run_scale)
    answers = clip_query_units(data, grid, bits, max_rows=max_rows)
    chosen = first_passes(answers, round_to_grid(limit, bits), run_scale * 2**bits, runs, source,
                          bound=max_rows << bits)  # |answer| <= rows · 2**bits: public
    return [grid[i] if i >= 0 else None for i in chosen]


def _clip_bound_release(values: Any, epsilon: Any, bounds: Any, threshold: Any, runs: int,
                        rng: Any, max_rows: Any) -> list[int | float | None]:
    """Validate the public inputs, then run :func:`choose_clip_bound` ``runs`` times inside
    the deadline: the public size is declared before any row is read, so an error about a
    row waits for the deadline (see "Errors" in :mod:`dpkit.timing`)."""
    run_epsilon = exact_epsilon(epsilon)
    grid, max_rows = _check_public(values, bounds, max_rows)
    limit = (-CLIP_THRESHOLD_SCALES * 2 / run_epsilon if threshold is None
             else as_fraction(threshold, "threshold"))
    source = resolve(rng)
    return run_padded(COST, _clip_bound_work, values, grid, runs, max_rows, run_epsilon, limit,
                      source)


def _clip_bound_work(clock: Deadline, values: Any, grid: tuple[int | float, ...], runs: int,
                     max_rows: int, run_epsilon: Fraction, limit: Fraction,
                     source: RandomSource) -> list[int | float | None]:
    """The work of :func:`_clip_bound_release` inside its deadline: the rows it converts are
    freed when it returns, before the wait (:func:`dpkit.timing.run_padded`), so the time
    after the deadline does not grow with their number."""
    _declare(clock, values, grid, runs, max_rows, grid_bits(2 / run_epsilon))
    data = _check_rows(values, grid, max_rows)
    return _clip_bound_runs(data, run_epsilon, grid, limit, runs, source, max_rows)


def choose_clip_bound(values: Any, epsilon: float, *, bounds: Iterable[float],
                      rng: RandomSource | None = None, threshold: float | None = None,
                      max_rows: int = DEFAULT_MAX_ROWS) -> int | float | None:
    """Return the smallest candidate bound at which the clipped sum stops growing.

    For each candidate ``U`` in ``bounds`` (increasing) the query

        ``sum(clip(values, 0, U)) - sum(clip(values, 0, U + 1))``

    is minus (roughly) the number of values above ``U``; it has sensitivity 1, since one
    row changes it by at most 1. :func:`above_threshold` returns the first candidate whose
    query comes out (noisily) at or above the threshold: where raising the bound by 1 no
    longer adds (more than a few rows' worth) to the sum.

    Parameters
    ----------
    values : array_like of real numbers, one dimension
        One value per person. Values are clipped to ``[0, U]``: negative values count as 0.
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
    max_rows : int, default :data:`DEFAULT_MAX_ROWS` (65,536)
        A public upper bound on the number of rows, an integer in ``[1, MAX_ROWS_LIMIT]``
        (:data:`MAX_ROWS_LIMIT` is ``2**32``), fixed without looking at the data, that no
        data set under consideration exceeds, neighbours included (so not a data set's
        exact size, whose neighbour with one more row would be refused). The running time
        is padded to a deadline set by it, never by the number of rows, which is private
        under adding or removing a row. More rows are refused before any work on them, and
        that error reveals that the data has more than ``max_rows`` rows: a refusal is
        outside the ε-DP guarantee, which covers data sets of at most ``max_rows`` rows. A
        smaller bound keeps the wait short (see Timing).

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
        If ``epsilon`` is not finite and > 0, ``values`` is empty, has more than
        ``max_rows`` rows or holds NaN or an infinity (outside the input domain; see
        ``values``), ``bounds`` is empty, not positive, beyond the float range (about
        1.8e308), not strictly increasing, not exactly float64 values, or an array that is
        not one-dimensional (a 0-d ``numpy.array(1.0)`` included), or ``max_rows`` is not
        in ``[1, MAX_ROWS_LIMIT]`` (``TypeError`` if it is not an integer: a bool or a
        float is refused).

    Notes
    -----
    **Privacy**: ε-differentially private under adding, removing or changing one row (one
    run of AboveThreshold, Dwork & Roth 2014, Theorem 3.23). Each row's contribution
    ``clip(v - U, 0, 1)`` is rounded down to the comparison grid before an exact integer
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
    where about ``20/ε`` rows still lie above ``U``.

    **Timing**: the call ends at a deadline (:mod:`dpkit.timing`) set by public quantities
    only: the number of candidates, ``max_rows`` and the kind of container the rows come
    in (a float64 NumPy array, or Python objects), never the number of rows or their
    values. The wait grows with ``max_rows`` and the number of candidates: with the
    defaults (65,536 rows, :data:`DEFAULT_CLIP_BOUNDS`) a call on a float64 array takes
    about 75 ms on a shared 2-core server, whatever the number of rows; a list of Python
    objects takes longer (pass a float64 array). The public inputs (``bounds`` included)
    are checked before the clock starts; an error about a row waits for the deadline.

    **Error messages** describe the data to the caller, who owns it (a refused row's
    index, say): they must not be published. The refusal of more than ``max_rows`` rows
    does not give their number.
    """
    return _clip_bound_release(values, epsilon, bounds, threshold, 1, rng, max_rows)[0]


def clip_bound_runs(values: Any, epsilon: float, *, bounds: Iterable[float], runs: int,
                    rng: RandomSource | None = None, threshold: float | None = None,
                    max_rows: int = DEFAULT_MAX_ROWS) -> list[int | float | None]:
    """Run :func:`choose_clip_bound` ``runs`` times independently, vectorised.

    For studying the distribution of the chosen bound (the book's figures): the query
    answers are computed once and the noise for all runs is drawn in bulk.

    Parameters
    ----------
    values, epsilon, bounds, rng, threshold, max_rows
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
    (sequential composition).

    **Timing**: padded to a deadline set by ``runs``, the number of candidates and
    ``max_rows`` (never the number of rows), as :func:`choose_clip_bound`
    (:mod:`dpkit.timing`). A simulation that publishes nothing can skip the wait inside
    :func:`dpkit.timing.unpadded`.
    """
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    return _clip_bound_release(values, epsilon, bounds, threshold, runs, rng, max_rows)


def _clipped_sum_units(data: np.ndarray, bound: float, epsilon: Fraction,
                       max_rows: int) -> tuple[int, int, int]:
    """The clipped sum on a grid, exactly: ``(sum of floor(clip(v, 0, b) / 2**k), ceiling, k)``.

    ``2**k`` is at most ``b · min(1, 1/ε) · 2**-20`` (:func:`dpkit._samplers.grid.grid_exponent`),
    ``ε`` the budget of the sum's release: its noise scale ``ceiling/ε`` is then at least
    ``2**20`` grid units. Each row's term is rounded *down* on its own, to an integer in
    ``[0, floor(b / 2**k)]`` (the ``ceiling``, the sum's sensitivity in grid units), and the
    terms are added as integers: unlike a floating-point sum, whose rounding is not
    shift-invariant, one row moves the total by at most ``ceiling`` units. Scaling by a
    power of two and ``floor`` are exact. The int64 or exact sum is chosen from the public
    ``max_rows``, never from the number of rows.
    """
    k = grid_exponent(Fraction(bound) / max(1, epsilon))
    ceiling = math.floor(Fraction(bound) / Fraction(2) ** k)
    terms = np.floor(np.ldexp(np.clip(data, 0.0, bound), -k))  # integers in [0, ceiling]
    total = (int(terms.astype(np.int64).sum()) if max_rows * ceiling < 2**62
             else sum(int(t) for t in terms.tolist()))
    return total, ceiling, k


def auto_avg(values: Any, epsilon: float, *, bounds: Iterable[float] | None = None,
             rng: RandomSource | None = None, return_bound: bool = False,
             max_rows: int = DEFAULT_MAX_ROWS) -> float | tuple[float, int | float]:
    """Return a differentially private average with a clipping bound chosen privately.

    Three steps, ε/3 each:

    1. ``U = choose_clip_bound(values, ε/3, bounds=bounds)`` (the largest candidate if none
       qualifies: a data-independent fallback, so it costs nothing);
    2. a noisy clipped sum: ``sum(clip(values, 0, U))`` plus Laplace noise of scale ``U / (ε/3)``
       (discrete Laplace on a grid finer than ``U·min(1, 3/ε)·2**-20``);
    3. a noisy count of rows: ``len(values)`` plus discrete Laplace noise of scale ``3/ε``
       (on the integers, or on a grid ``2**k <= 3/ε`` when ``ε > 3``);

    and the result is the noisy sum divided by the noisy count. The count is a *count of
    rows*; dividing by a second noisy clipped sum instead (a slip in one translated write-up
    of Near & Abuah's version, see :func:`dpkit.naive.auto_avg`) returns about 1 whatever
    the data.

    Parameters
    ----------
    values : array_like of real numbers, one dimension
        One value per person; the average is of the values clipped to ``[0, U]``. Every
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
    return_bound : bool, default False
        Also return the clipping bound ``U`` the average used (step 1's result, or the
        largest candidate when none qualified). It is part of the same ε-DP release, so
        returning it costs nothing.
    max_rows : int, default :data:`DEFAULT_MAX_ROWS` (65,536)
        A public upper bound on the number of rows, fixed without looking at the data, that
        no data set under consideration exceeds, neighbours included (as in
        :func:`choose_clip_bound`): it sets the deadline; more rows are refused, which
        reveals that there are more and is outside the ε-DP guarantee.

    Returns
    -------
    float, or (float, int or float) when ``return_bound``
        The noisy clipped sum over the noisy count, computed exactly and rounded once to
        the nearest float. The count is floored at 1 before the division (post-processing,
        so free). The result is finite unless the exact ratio lies beyond the float range
        (about 1.8e308), where it is ``±inf``, as IEEE 754 rounds an overflow: that takes
        a noisy sum beyond 1.8e308, so a bound ``U`` near that limit (the sum is at most
        ``U`` times the number of rows; its noise has scale ``3U/ε``).

    Raises
    ------
    TypeError, ValueError
        As :func:`choose_clip_bound`; ``TypeError`` if ``return_bound`` is not a bool.

    Notes
    -----
    **Privacy**: ε-differentially private under adding or removing one row (and under
    changing one: sensitivities U and 0 ≤ 1 then), by sequential composition of three
    mechanisms with the exact rational budget ε/3 each (Dwork & Roth 2014, Theorem 3.16),
    which covers releasing all three results, the chosen bound included:
    AboveThreshold (Theorem 3.23) and two discrete Laplace mechanisms (Canonne, Kamath &
    Steinke 2020). The clipped sum is computed on a grid ``2**k <= U·2**-20`` with each
    row's term rounded down on its own and the terms added as integers, so one row moves
    it by at most ``U`` exactly (a floating-point sum can move by more: rounding is not
    shift-invariant); the count of rows is an integer. The noisy values are converted to
    floats only at the end (post-processing).

    **Timing**: the call ends at a deadline (:mod:`dpkit.timing`) set by the number of
    candidates, ``max_rows`` and the kind of container (a float64 array or Python objects)
    only. The number of rows is private under adding or removing one (the count is what
    step 3 releases with noise), so it never sets the deadline: every call waits as long
    as one on ``max_rows`` rows would take, so pass the smallest public bound that no data
    set under consideration exceeds (the default, 65,536 rows, is generous; a list costs
    more per row than a float64 array).

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> round(auto_avg([30, 40, 50] * 1000, 1.0, max_rows=4096, rng=seeded(0)), 1)
    39.8
    >>> average, bound = auto_avg([30, 40, 50] * 1000, 1.0, max_rows=4096, rng=seeded(0),
    ...                           return_bound=True)
    >>> round(average, 1), bound
    (39.8, 50)
    """
    if not isinstance(return_bound, bool):
        raise TypeError(f"return_bound must be True or False, got {return_bound!r}")
    averages, used = _auto_avg_release(values, epsilon, bounds, 1, rng, max_rows)
    average = float(averages[0])
    return (average, used[0]) if return_bound else average


def _auto_avg_release(values: Any, epsilon: Any, bounds: Any, runs: int, rng: Any,
                      max_rows: Any) -> tuple[np.ndarray, list[int | float]]:
    """Validate the public inputs, then run :func:`auto_avg` ``runs`` times inside the
    deadline (the public size declared before any row is read, so an error about a row
    waits for it): the averages and the clipping bound each run used."""
    share = exact_epsilon(epsilon, 3) / 3
    grid, max_rows = _check_public(values, DEFAULT_CLIP_BOUNDS if bounds is None else bounds,
                                   max_rows)
    source = resolve(rng)
    return run_padded(AUTO_AVG_COST, _auto_avg_work, values, grid, runs, max_rows, share,
                      source)


def _auto_avg_work(clock: Deadline, values: Any, grid: tuple[int | float, ...], runs: int,
                   max_rows: int, share: Fraction, source: RandomSource
                   ) -> tuple[np.ndarray, list[int | float]]:
    """The work of :func:`_auto_avg_release` inside its deadline; its rows are freed before
    the wait, as in :func:`_clip_bound_work`."""
    _declare(clock, values, grid, runs, max_rows, grid_bits(2 / share))
    clock.add("objects", runs)  # one exact division per run
    data = _check_rows(values, grid, max_rows)
    return _auto_avg_runs(data, share, grid, runs, source, max_rows)


def _auto_avg_runs(data: np.ndarray, share: Fraction, grid: tuple[int | float, ...], runs: int,
                   source: RandomSource, max_rows: int) -> tuple[np.ndarray, list[int | float]]:
    """``runs`` independent runs of :func:`auto_avg` on checked rows ``data`` (the noise
    drawn in bulk), each with budget ``share`` per step: the averages and the clipping
    bound each run used."""
    limit = -CLIP_THRESHOLD_SCALES * 2 / share
    chosen = _clip_bound_runs(data, share, grid, limit, runs, source, max_rows)
    bounds_used = np.array([float(grid[-1] if b is None else b) for b in chosen])
    noisy_sums = [Fraction(0)] * runs
    for bound in np.unique(bounds_used):
        runs_with_bound = np.flatnonzero(bounds_used == bound).tolist()
        total, ceiling, k = _clipped_sum_units(data, float(bound), share, max_rows)
        releases = release_on_grid(total, ceiling, share, k, source, len(runs_with_bound))
        for run, release in zip(runs_with_bound, releases, strict=True):
            noisy_sums[run] = release
    # The count on the grid 2**k <= min(1, 1/share): noise scale >= 1 grid unit.
    k = min(0, grid_exponent(1 / share, bits=0))
    noisy_counts = release_on_grid(len(data) << -k, 1 << -k, share, k, source, runs)
    averages = np.array([nearest_float(total / max(count, 1))
                         for total, count in zip(noisy_sums, noisy_counts, strict=True)])
    return averages, [grid[-1] if b is None else b for b in chosen]


def auto_avg_runs(values: Any, epsilon: float, *, runs: int,
                  bounds: Iterable[float] | None = None, rng: RandomSource | None = None,
                  max_rows: int = DEFAULT_MAX_ROWS) -> np.ndarray:
    """Run :func:`auto_avg` ``runs`` times independently, with the noise drawn in bulk.

    For studying the error of :func:`auto_avg` (the book's figures).

    Parameters
    ----------
    values, epsilon, bounds, rng, max_rows
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
    Each run is distributed exactly as one call of :func:`auto_avg`.

    **Timing**: padded to a deadline set by ``runs``, the number of candidates and
    ``max_rows`` (never the number of rows), as :func:`auto_avg` (:mod:`dpkit.timing`);
    each run's exact division is charged as one
    Python object. A simulation that publishes nothing can skip the wait inside
    :func:`dpkit.timing.unpadded`.
    """
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    return _auto_avg_release(values, epsilon, bounds, runs, rng, max_rows)[0]


def _warm_up_rows(value: Any) -> Any:
    """A warm-up value as rows: an array as it is (its own path), else a list."""
    return value if isinstance(value, np.ndarray) else warm_up_answers(value)


#: The candidates of the warm-ups: few, since the Python path does not depend on how many.
_WARM_UP_BOUNDS = (1.0, 10.0, 100.0)
_WARM_UP = {"bounds": _WARM_UP_BOUNDS, "prepare": _warm_up_rows}
warm_up_calls(_clip_bound_work, choose_clip_bound, 1.0, **_WARM_UP)
warm_up_calls(_clip_bound_work, clip_bound_runs, 1.0, runs=2, **_WARM_UP)
warm_up_calls(_auto_avg_work, auto_avg, 1.0, **_WARM_UP)
warm_up_calls(_auto_avg_work, auto_avg_runs, 1.0, runs=2, **_WARM_UP)
