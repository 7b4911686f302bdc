"""A value written into a release's digits: the Laplace judge's same-seed test.

An answer to the Laplace exercise could add correct noise and then write the value into the
release's low digits (adversarial review round 7, E1): every test of the outputs' law
passes, yet one release gives the value back. :func:`same_seed_leak` lends the same
randomness again on a neighbouring value and reads what changed beyond the rounding the
releases show (:func:`dpkit.course.judges.noise.judge_laplace_mechanism` calls it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit.course.judges._base import binomial_reject, rounding_errors

__all__ = ["ALPHA_SAME_SEED", "GRID_OFFSET_LEAK", "NEAR", "REPEAT", "SAME_SEED_LEAK",
           "fraction_rounding", "in_turn", "same_seed_leak", "two_workers"]

#: "Nearly zero", in noise scales: a release this close to the value, or two noises whose
#: sum or difference is this small (cancelling or repeated noises).
NEAR = 0.01
#: A pair of the same-seed test is coded when at least this many of its 30 gaps are
#: flagged, and an honest grid puts them all on one value with probability at most
#: ``_SAME_SEED_ONE_VALUE`` (2/31: ``∫ p³⁰ + (1 − p)³⁰ dp``) on average
#: (:func:`same_seed_leak`).
_SAME_SEED_MOST, _SAME_SEED_ONE_VALUE = 20, 2 / 31
#: The same-seed test's false-alarm probability for an honest answer.
ALPHA_SAME_SEED = 1e-7
#: The ``probe`` of a call that asks a worker again for one of its own releases.
REPEAT = -2


SAME_SEED_LEAK = ("with the same `generator`, your releases at two neighbouring values "
                   "differ by other than the values' difference, yet by far less than the "
                   "noise: their last digits depend on the value, which one release then "
                   "gives away; return value + noise as it comes (rounded if you like)")
GRID_OFFSET_LEAK = ("your releases at two neighbouring values lie on grids of one step but "
                    "with different offsets (with the same `generator` they differ by a "
                    "whole number of steps plus a part that depends on the value): the "
                    "offset of every release from its grid tells the value; round "
                    "value + noise to one grid whatever the value, or not at all")
#: The grid-offset test (adversarial review round 10, A1): same-seed gaps at most this many
#: noise scales from 0 are read, and this many pairs on grids of one step with different
#: offsets flag the answer (an honest rounding never puts one pair there:
#: :func:`_offset_pair`).
_GRID_WINDOW, _GRID_PAIRS = 1.0, 2
#: A case lies on a grid when at least this share of its distinct releases do
#: (:func:`_on_grid`; an honest rounding puts all of them there, unrounded noise almost
#: none; adversarial review round 11, F5: not all, or one nudged release clears a code;
#: 3/4, below the 7/8 of a code the reviewer left out of one release in 8, and about the
#: share that still puts 20 of 30 same-seed gaps in the code's two clusters).
_ON_GRID_SHARE = 0.75
#: A lattice's step is read (:func:`_lattice_step`) when it is at least this many times
#: the allowance, and the closest two of a pair's releases at most this many steps apart.
_LATTICE_ROOMS, _LATTICE_DIVISORS = 16, 64
#: The sub-grid test (adversarial review round 12, F0: the value written in the digits
#: below a rounding of the release's own binade or decade): the depths ``t`` of the frames
#: read, ``Q = 2^(e − t)`` for a release in ``[2^(e−1), 2^e)`` and ``Q = 10^(d − t)`` for
#: one in ``[10^d, 10^(d+1))`` (deeper decimal frames are below float64's resolution), and
#: the pairs that flag the answer (an honest answer has none: :func:`_sub_grid_pair`).
_BINARY_DEPTHS, _DECIMAL_DEPTHS, _SUB_GRID_PAIRS = range(1, 53), range(1, 11), 2
#: The spread test (adversarial review round 13, F1: the value's code below a grid of the
#: release, scrambled by a hash of the release's own grid index): a release's lattice is
#: read from this many of the pair's releases nearest to it (:func:`_local_steps`).
_NEIGHBOURS = 16


def _grid_step(results: np.ndarray) -> float:
    """The finest power of two the nonzero ``results`` use: the value of their lowest set
    bit, the smallest over the batch (one step of a fixed grid such as the exact
    mechanism's; ``0.0`` if all are zero).

    >>> _grid_step(np.array([0.75, 3.0, 0.0]))
    0.25
    """
    values = np.abs(np.asarray(results, dtype=np.float64))
    mantissas, exponents = np.frexp(values[values > 0])
    steps = [math.ldexp(int(u) & -int(u), int(e) - 53) for u, e in
             zip(np.ldexp(mantissas, 53).tolist(), exponents.tolist(), strict=True)]
    return min(steps, default=0.0)


def _low_byte(results: np.ndarray) -> np.ndarray:
    """The lowest 8 bits of each result's 53-bit significand (``0`` for ``0.0``).

    >>> _low_byte(np.array([1.0, 1.0 + 2.0 ** -52])).tolist()
    [0, 1]
    """
    mantissas, _ = np.frexp(np.abs(np.asarray(results, dtype=np.float64)))
    return np.ldexp(mantissas, 53).astype(np.int64) & 255


def _one_low_byte(results: np.ndarray) -> int | None:
    """The low byte (:func:`_low_byte`) that at least :data:`_SAME_SEED_MOST` of
    ``results`` share, or ``None``."""
    counts = np.bincount(_low_byte(results), minlength=256)
    return int(np.argmax(counts)) if counts.max() >= _SAME_SEED_MOST else None


def _lattice_step(points: np.ndarray, room: float) -> float:
    """The step ``σ`` of the coarsest lattice ``σℤ + o`` on which all ``points`` lie, every
    difference of two within ``room`` of a whole number of steps; ``0.0`` if there is none
    with ``σ`` at least :data:`_LATTICE_ROOMS` times ``room`` and the closest two points
    at most :data:`_LATTICE_DIVISORS` steps apart.

    The candidates, coarsest first, are the distance of the closest two distinct points
    (more than ``2·room`` apart) divided by 1, 2, …; each is refined outwards (from the
    farthest point read so far, to points at most ``σ/(4·room)`` times as far: each one's
    whole number of steps is then unambiguous) and kept if every point lies within
    ``2·room`` of the lattice.

    >>> round(_lattice_step(np.array([3.0, 10.0, 24.0, -4.0]) / 7, 1e-12) * 7, 9)
    7.0
    >>> points = np.array([0.1, 0.15, 0.8])      # a step of 0.05: too fine for room 0.01
    >>> round(_lattice_step(points, 1e-4), 9), _lattice_step(points, 0.01)
    (0.05, 0.0)
    """
    unique = np.unique(points)
    gaps = np.diff(unique)
    gaps[gaps <= 2 * room] = np.inf        # one point written two ways (float rounding)
    if not np.isfinite(gaps).any():
        return 0.0
    at = int(np.argmin(gaps))
    offsets = unique - unique[at]
    for divisor in range(1, _LATTICE_DIVISORS + 1):
        step = float(gaps[at]) / divisor
        if step < _LATTICE_ROOMS * room:
            return 0.0
        reach, count = float(gaps[at]), 0
        while step:
            # within reach·farther, step's error moves a point by at most step/4
            farther = step / (4 * room)
            inside = offsets[np.abs(offsets) <= farther * reach]
            steps = np.round(inside / step)
            far = int(np.argmax(np.abs(steps)))
            if inside.size == count or np.any(np.abs(inside - steps * step) > step / 4 + room):
                step = 0.0                      # off the lattice, or no point to refine with
            else:
                step, reach, count = (float(inside[far] / steps[far]), float(abs(inside[far])),
                                      inside.size)
                if count == offsets.size:
                    break
        if step and np.all(np.abs(offsets - np.round(offsets / step) * step) <= 2 * room):
            return step
    return 0.0


def _common_lattice(first: np.ndarray, second: np.ndarray, releases: np.ndarray,
                    room: float) -> bool:
    """Whether a pair's two cases put their flagged same-seed releases (``first``, then
    ``second``, with the same seeds) on one lattice: the same step and the same offset.

    ``releases`` (all the pair's) give a step ``σ`` (:func:`_lattice_step`); each case's
    own step is ``σ`` times the greatest common divisor of its releases' distances in
    steps (read from these releases alone, so that other releases cannot make it finer),
    and its offset its first release's whole number of steps modulo that. See
    :func:`same_seed_leak`.
    """
    step = _lattice_step(releases, room)
    if step == 0.0:
        return False
    first_steps, second_steps = (np.round((x - first[0]) / step).astype(np.int64)
                                 for x in (first, second))
    own = [int(np.gcd.reduce(np.abs(x - x[0]))) for x in (first_steps, second_steps)]
    return own[0] > 0 and own[0] == own[1] and int(second_steps[0]) % own[0] == 0


def _simplest(low: Fraction, high: Fraction) -> Fraction:
    """The fraction of least denominator in ``[low, high]`` (``0 <= low <= high``): the
    continued-fraction walk of the Stern–Brocot tree.

    >>> low, high = Fraction(31, 100), Fraction(33, 100)
    >>> _simplest(low + Fraction(1, 100), high + Fraction(1, 100)), _simplest(low, high)
    (Fraction(1, 3), Fraction(5, 16))
    """
    whole = math.floor(low)
    if whole == low or whole + 1 <= high:
        return Fraction(math.ceil(low))
    return whole + 1 / _simplest(1 / (high - whole), 1 / (low - whole))


def fraction_rounding(results: np.ndarray) -> np.ndarray:
    """How far rounding to the nearest fraction of bounded denominator (honest review 15,
    F4: ``Fraction(x).limit_denominator(10**6)``) may have moved each of ``results``.

    Each result is read as the fraction ``p/q`` of least denominator its float rounds (the
    simplest in the float's rounding interval), ``D`` is the largest ``q`` of the batch,
    and the bound is half the larger gap from ``p/q`` to its two neighbours in the Farey
    sequence of order ``D`` (the fractions of denominator at most ``D``): ``1/(q·b)`` for a
    neighbour of denominator ``b``, the largest ``b <= D`` with ``p·b ≡ ±1 (mod q)``. A
    rounding to the nearest fraction of denominator at most ``D`` moves ``x`` by no more;
    one with a smaller bound (a grid chosen by the value, if finer) has neighbours closer
    still, which only widens the bound. One ``D`` for the whole batch, both values of a
    pair. An unrounded float's least denominator is about ``ulp^(−1/2)``, its neighbours'
    about as large, so its bound is about an ulp: the allowance grows only where the
    releases are fractions of small denominator.

    Parameters
    ----------
    results : numpy.ndarray
        Finite releases.

    Returns
    -------
    numpy.ndarray
        The bound for each release, in its units.

    Raises
    ------
    Nothing (finite input assumed).

    Privacy guarantee: none by itself (reference: honest review 15, F4; the Farey
    sequence's neighbours ``a/b < c/d`` have ``bc − ad = 1``, Hardy & Wright, Thm 28).

    >>> bound = fraction_rounding(np.array([1 / 3, 2 / 7, 0.5]))
    >>> [round(float(x), 4) for x in bound]
    [0.0333, 0.0238, 0.0357]
    """
    fractions = []
    for result in np.abs(np.asarray(results, dtype=np.float64)).tolist():
        exact = Fraction(result)
        low = (exact + Fraction(math.nextafter(result, 0.0))) / 2
        high = (exact + Fraction(math.nextafter(result, math.inf))) / 2
        fractions.append(_simplest(low, high) if result else Fraction(0))
    order = max(f.denominator for f in fractions) if fractions else 1
    bounds = []
    for f in fractions:
        p, q = f.numerator, f.denominator
        left = pow(p, -1, q) if q > 1 else 0        # p·b ≡ 1: the left neighbour's b
        nearest = min(b + q * ((order - b) // q) for b in (left, (q - left) % q))
        bounds.append(1.0 / (2.0 * q * max(nearest, 1)))
    return np.array(bounds)


def _beyond(first: np.ndarray, second: np.ndarray, value: float, neighbour: float,
            allowed: np.ndarray, scale: float) -> np.ndarray:
    """Which same-seed gaps ``(r − r') − (v − v')`` are flagged: beyond the ``allowed``
    rounding, yet at most :data:`NEAR` noise scales (:func:`same_seed_leak`)."""
    gap = (first - second) - (value - neighbour)
    return (np.abs(gap) > allowed) & (np.abs(gap) <= NEAR * scale)


def _coded_pair(first: np.ndarray, second: np.ndarray, value: float, neighbour: float,
                allowed: np.ndarray, scale: float, releases: np.ndarray) -> bool:
    """Whether one pair's same-seed releases carry a code of the value (review round 7,
    E1; honest review round 8, H1; judges round 14: not when both cases lie on one
    lattice, :func:`_common_lattice`). ``releases``: all the pair's. See
    :func:`same_seed_leak`."""
    gap = (first - second) - (value - neighbour)
    beyond = _beyond(first, second, value, neighbour, allowed, scale)
    if int(beyond.sum()) < _SAME_SEED_MOST:
        return False
    flagged, room = gap[beyond], allowed[beyond]
    one_gap = bool(np.all(np.abs(flagged - np.median(flagged)) <= room)
                   and np.all(np.abs(flagged + (value - neighbour)) > room)) and \
        not _common_lattice(first[beyond], second[beyond], releases, float(np.max(room)))
    low = _one_low_byte(first), _one_low_byte(second)
    return one_gap or (None not in low and low[0] != low[1])


def _frames(results: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each nonzero result's offset in each frame of its own binade and decade.

    A frame of depth ``t`` cuts every result ``r`` at ``Q = 2^(e − t)``, ``e`` its binary
    exponent (``|r|`` in ``[2^(e−1), 2^e)``: :data:`_BINARY_DEPTHS`), or at
    ``Q = 10^(d − t)``, ``d`` its decimal one (:data:`_DECIMAL_DEPTHS`); the offset is
    the fraction ``|r|/Q − ⌊|r|/Q⌋`` in ``[0, 1)``, exact in a binary frame (the low
    ``53 − t`` bits of the significand), read to ``8·spacing(|r|/Q)`` in a decimal one.

    Returns
    -------
    iterator of (offset, tolerance, unit)
        Per frame, arrays over the nonzero results: the offsets, how far each may be from
        the exact one, and each result's ``Q``.

    >>> offsets, _, units = next(_frames(np.array([0.75, 1.5, 0.0])))   # t = 1: Q = 2^(e−1)
    >>> offsets.tolist(), units.tolist()
    ([0.5, 0.5], [0.5, 1.0])
    """
    magnitudes = np.abs(np.asarray(results, dtype=np.float64))
    magnitudes = magnitudes[magnitudes > 0]
    mantissas, exponents = np.frexp(magnitudes)
    significands = np.ldexp(mantissas, 53).astype(np.int64)
    for depth in _BINARY_DEPTHS:
        low = 53 - depth
        yield (np.ldexp((significands & ((1 << low) - 1)).astype(np.float64), -low),
               np.zeros(magnitudes.size), np.ldexp(1.0, exponents - depth))
    decades = np.floor(np.log10(magnitudes))
    decades -= 10.0 ** decades > magnitudes                  # log10's rounding, both ways
    decades += 10.0 ** (decades + 1) <= magnitudes
    for depth in _DECIMAL_DEPTHS:
        units = 10.0 ** (decades - depth)
        scaled = magnitudes / units
        yield scaled - np.floor(scaled), 8 * np.spacing(scaled), units


def _mode(offsets: np.ndarray, width: float) -> tuple[float, int]:
    """The middle of a window ``width`` wide that holds the most ``offsets`` (in ``[0, 1)``,
    read around the circle), and how many it holds.

    >>> middle, count = _mode(np.array([0.999, 0.001, 0.002, 0.5]), 0.01)
    >>> round(middle, 6), count
    (0.004, 3)
    """
    ordered = np.sort(offsets)
    around = np.concatenate([ordered, ordered + 1.0])
    counts = np.searchsorted(around, ordered + width, side="right") - np.arange(ordered.size)
    best = int(np.argmax(counts))
    return float((ordered[best] + width / 2) % 1.0), int(counts[best])


def _sub_grid_pair(cases: tuple[np.ndarray, np.ndarray], scale: float) -> bool:
    """Whether one pair's two cases (all their releases) hold one offset each, different,
    in one frame of their own binades or decades (adversarial review round 12, F0: the
    release rounded to ``Q``, 27 bits or 8 digits of ``value + noise``, and the value
    written in the digits below ``Q``; ``Q`` moves with the binade, so the same-seed gaps
    are neither one value nor two on one grid, and every release lies on one fine
    lattice, which exempted the pair from the one-gap rule).

    In a frame of :func:`_frames` (``Q`` at most :data:`NEAR` noise scales), at least
    :data:`_ON_GRID_SHARE` of each case's releases have offsets within one window (twice
    the frame's tolerance) and are distinct (so that the releases vary below the noise:
    a coarse rounding's few values are not read), and the two windows are disjoint.

    Never for an honest answer ``g(value + noise)`` in practice: below a rounding of its
    own a release has no digits that the rounding does not fix (offset 0 in both cases,
    or one offset of a grid fixed for the pair); at a frame finer than the noise and not
    below the rounding its offsets spread with the noise (the grid index's residues, or
    the noise's own digits: at most about 1/2 each, where 3/4 of 600 releases are needed,
    ``exp(−600·KL(3/4‖0.53)) < 1e-27`` per frame and case); the noise rounded before the
    value is added holds ``value mod s`` below its grid, but its same-seed gaps are 0,
    never flagged, and :func:`same_seed_leak` asks for flagged gaps too.
    """
    if any(np.unique(results).size < _ON_GRID_SHARE * results.size for results in cases):
        return False
    for frames in zip(*map(_frames, cases), strict=True):
        found = []
        for (offsets, tolerance, units), results in zip(frames, cases, strict=True):
            inside = units <= NEAR * scale
            width = 2 * float(np.max(tolerance[inside], initial=0.0))
            middle, count = _mode(offsets[inside], width) if inside.any() else (0.0, 0)
            found.append((middle, width, count >= _ON_GRID_SHARE * results.size))
        (one, width_one, most_one), (two, width_two, most_two) = found
        apart = abs(one - two)
        if most_one and most_two and min(apart, 1 - apart) > width_one + width_two:
            return True
    return False


def _local_steps(points: np.ndarray, pool: np.ndarray, room: float) -> np.ndarray:
    """For each of ``points``, the step of the coarsest lattice on which its
    :data:`_NEIGHBOURS` nearest distinct values among ``pool`` lie (:func:`_lattice_step`
    with ``room``; ``0.0`` where there is none).

    >>> pool = np.concatenate([np.arange(40) * 0.25, 20 + np.arange(40) * 0.5])
    >>> _local_steps(np.array([3.0, 30.0]), pool, 1e-9).tolist()
    [0.25, 0.5]
    """
    values = np.unique(pool)
    steps = np.zeros(points.size)
    for i, point in enumerate(points.tolist()):
        at = int(np.searchsorted(values, point))
        near = values[max(0, at - _NEIGHBOURS):at + _NEIGHBOURS]
        steps[i] = _lattice_step(near[np.argsort(np.abs(near - point))[:_NEIGHBOURS]], room)
    return steps


def _spread_pair(first: np.ndarray, second: np.ndarray, gap: np.ndarray, room: float,
                 pool: np.ndarray) -> bool:
    """Whether one pair's flagged same-seed gaps ``gap`` (of the releases ``first`` and
    ``second``) are spread and unexplained by the lattices the releases lie on
    (adversarial review round 13, F1: the value's cents written below a grid ``S`` of
    the release, ``S ≤ 0.004`` scales, at an offset ``(code + h(k)) mod M`` scrambled by a
    hash ``h`` of the release's own grid index ``k``: one shared offset per case for
    :func:`_sub_grid_pair`, two gap clusters for :func:`_offset_pair`, one gap value for
    :func:`_coded_pair` all fail, yet one release gives the value back).

    Spread: the gaps are neither one value nor two (some lie outside the two largest
    clusters, each ``room`` wide: :func:`_clusters`). Unexplained: at least
    :data:`_SAME_SEED_MOST` of them exceed, by ``room``, the sum of the lattice steps
    around their two releases (:func:`_local_steps` of ``pool``, the pair's releases;
    ``0`` where the releases near one lie on no lattice at least 16 times ``room``).

    An honest ``g(value + noise)`` never has such a pair in practice. Unrounded, or
    rounded to digits its releases show (decimals, significant digits across decades,
    float32 across binades), its gaps are within the allowance, never flagged; rounded
    to a grid fixed for the (Δ, ε), its gaps take the grid's two values (never spread);
    rounded to a grid its digits do not show whose step changes from release to release
    (a relative step of ``b/1000`` units, say: ``v`` and ``v'`` on either side of a
    step change spread the gaps), a rounding to the nearest (or the next) point of a
    grid moves each release by at most its step, so each gap is within the sum of the
    two releases' steps, and the releases near each one lie on that grid: a gap is
    unexplained only where the neighbours cross a change of step (the lattice read is
    then the finer one) or too sparse to show it (the tails, where neighbours lie more
    than 64 steps apart): a release near the value's own change of step (about 16 of the
    pair's 1,230 releases on either side of it) or beyond about 3 scales, at most 1 in 10
    (simulated: 96 of 7,661 flagged gaps in 256 spread pairs of relative binary and
    decimal grids, at most 4 of 30 in a pair). A code cannot shelter there: on a
    lattice, a code that moves a release by at most a step or so around its rounding of
    ``value + noise`` is hidden by the noise's position between the lattice's points
    (a few bits of it at most, uncaught here), and one that moves it further is
    unexplained. Its false-alarm probability is therefore 0 for a fixed grid or a
    rounding the digits show, and at most ``P(Binomial(30, 0.1) ≥ 20) = 1.1e-13`` per
    pair otherwise.
    """
    clusters = _clusters(gap, room)
    if sum(cluster.size for cluster in clusters[:2]) == gap.size:
        return False
    explained = _local_steps(first, pool, room) + _local_steps(second, pool, room) + room
    return int(np.sum(np.abs(gap) > explained)) >= _SAME_SEED_MOST


def _on_grid(results: np.ndarray, step: float, room: float, slack: float) -> bool:
    """Whether at least :data:`_ON_GRID_SHARE` of the distinct ``results`` lie on a grid of
    step ``step``: a result is on it when it is a whole number of steps from the next
    lower or the next higher one, within ``room`` plus ``slack`` per step (``step`` is
    known to ``slack``). Not *every* result (adversarial review round 11, F5: one release
    in 64 a hair off the grid cleared a code in every release).

    >>> _on_grid(np.array([0.0, 0.25, 0.5, 1.0, 1.3, 1.7]), 0.25, 1e-9, 1e-9)
    False
    >>> _on_grid(np.arange(40) * 0.25, 0.25, 1e-9, 1e-9)
    True
    """
    values = np.unique(results)
    if values.size < 2:
        return True                         # one value: on every grid, as before
    gaps = np.diff(values)
    steps = np.round(gaps / step)
    whole = np.abs(gaps - steps * step) <= room + steps * slack
    on = np.zeros(values.size, dtype=bool)
    on[:-1] |= whole
    on[1:] |= whole
    return bool(on.mean() >= _ON_GRID_SHARE)


def _clusters(gaps: np.ndarray, room: float) -> list[np.ndarray]:
    """The sorted ``gaps`` cut into clusters, each within ``room`` of its lowest member,
    from the lowest up, the largest first (the lower first among equals)."""
    clusters = []
    rest = np.sort(gaps)
    while rest.size:
        within = rest - rest[0] <= room
        clusters.append(rest[within])
        rest = rest[~within]
    return sorted(clusters, key=lambda c: -c.size)


def _offset_pair(first: np.ndarray, second: np.ndarray, value: float, neighbour: float,
                 room: float, scale: float, cases: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether one pair's two cases lie on grids of one step ``s`` with different offsets
    (adversarial review round 10, A1: ``s·⌊x/s⌋ + c(v)``, the value coded in ``c``).

    For one seed, a rounding ``g`` to a grid ``sℤ + o`` fixed for the pair (``o`` may be
    anything that does not depend on the value) gives ``r − r' = s·k``, ``k`` one of
    ``⌊a/s⌋`` and ``⌈a/s⌉`` (``a = v − v'``): the gaps ``(r − r') − a`` of the 30 seeds
    take two values ``s`` apart and ``s·k − a`` is a whole number of steps minus ``a``.
    The code shifts them by ``c(v) − c(v')``. The pair is flagged when the two largest
    clusters (each within ``room``, the rounding the releases show) of the gaps within
    :data:`_GRID_WINDOW` scales hold at least 20 of the 30 gaps, their distance ``s`` at
    least ``4·room``; when the lower cluster plus ``a`` is off every multiple of ``s`` by
    more than ``room`` (plus ``s``'s own error times the multiple); and when at least
    :data:`_ON_GRID_SHARE` of each case's releases (``cases``) lie on a grid of step ``s``
    (so that ``s`` is the grid's step, not a multiple of it). A large majority, not all
    (adversarial review round 11, F5: a code in 7 releases of 8, or one release in 64
    nudged off the grid, cleared a pair that had to show all its gaps in two clusters
    and all its releases on the grid): a code in fewer releases gives fewer coded gaps.

    Never for an honest rounding to a fixed grid: each of its gaps is within ``room`` of
    one of its two values (a cluster, ``room`` wide, holds gaps near one of them only,
    since they are ``s > 4·room`` apart), so the lower cluster's mean plus ``a`` is within
    ``room`` of a multiple of ``s`` and ``s`` is read to within ``2·room`` (or the two
    clusters are near one value, less than ``4·room`` apart); whatever share of the
    releases lies on a grid. Nor for ``value + s·round(noise/s)`` (one gap, ``0``: the
    grid moves with the value by ``a`` exactly; the floating-point noise's own leak,
    Mironov's, which the exercise accepts), nor for unrounded noise (gaps within
    ``room``: two clusters less than ``2·room`` apart). The false-alarm probability is
    therefore 0, up to float rounding beyond the allowance.
    """
    gap = (first - second) - (value - neighbour)
    near = gap[np.abs(gap) <= _GRID_WINDOW * scale]
    clusters = _clusters(near, room)
    if len(clusters) < 2 or clusters[0].size + clusters[1].size < _SAME_SEED_MOST:
        return False
    low, high = sorted(clusters[:2], key=lambda c: float(c[0]))
    step = float(np.mean(high) - np.mean(low))
    if step <= 4 * room:
        return False
    slack = 2 * room                        # the error of step, a difference of two means
    shift = float(np.mean(low)) + (value - neighbour)
    multiple = round(shift / step)
    return abs(shift - multiple * step) > 2 * room + abs(multiple) * slack and \
        all(_on_grid(c, step, 2 * room, slack) for c in cases)


def same_seed_leak(cases: list[tuple[float, float, float]], releases: np.ndarray,
                   again: list[np.ndarray], probed: np.ndarray) -> str:
    """Why the releases carry the value in their low digits (review round 7, E1), or ``""``.

    ``again[p]`` holds the releases of pair ``p``'s second case made with the seeds of its
    first case's releases ``probed[p]`` (indices into ``releases[2p]``; made in the other
    worker, :func:`two_workers`). An answer ``r = g(v + L)`` (noise ``L`` that does not
    depend on the value, then any rounding ``g``) gives, for one seed, ``gap = (r − r') −
    (v − v')`` within the rounding the releases show (:func:`rounding_errors` of the
    pair's releases: 4 units of their last binary, decimal or significant digit; 4 steps
    of the finest power of two they use, :func:`_grid_step`; 4 ulps of the values), or,
    rounded to a grid of step ``s`` those digits do not show (``b/1000``), one of the two
    values ``−(a mod s)`` and ``s − (a mod s)`` (``a = v − v'``), which one depending on
    the seed. A gap beyond that allowance yet at most ``0.01·Δ/ε`` (:data:`NEAR` scales)
    is flagged. A pair is **coded** when at least 20 of its 30 gaps are flagged and either

    * the flagged gaps are one value (within the allowance) other than ``−a`` (an
      additive code ``r = v + L + c(v)`` gives ``c(v) − c(v')`` whatever the seed: the
      repeated generators cancel all but the value); an honest grid puts all 30 seeds on
      one of its two values with probability ``p³⁰ + (1 − p)³⁰``, ``p = (a mod s)/s``:
      at most 2/31 on average over ``a mod s`` (and ``−a`` itself, ``r = r'``, is the
      grid coarser than ``a``, no code); unless both cases' flagged releases lie on one
      lattice, the same step and the same offset (:func:`_common_lattice`; judges round
      14). That exemption is for the value rounded to a grid ``sℤ`` plus the noise
      rounded to it (the exact mechanism's design, ``s = b/1000`` or ``b/100``): its
      same-seed gaps are one value, ``s·(round(v/s) − round(v'/s)) − a`` for every seed,
      yet it leaks nothing beyond the value rounded to the grid (a sensitivity of at most
      ``Δ + s``), and it was called "not ε-DP" on every seed. A code cannot use it: a
      code in a lattice's offset (``S·round(x/S) + s·m(v)``) puts each case on a lattice
      of step ``S`` whose offset tells the value, and each case's step is read from its
      own flagged releases (never the finer one both cases share, nor one other releases
      give), so the offsets differ; on one common lattice a value-dependent part is a
      shift of the whole law by whole steps, the same for every seed: within the window
      (0.01 scales: at most 0.01 more ε, a bias the law tests judge) it is not in any
      single release when the step is fine, and with a step above 0.02 scales the window
      holds one multiple of it only, the one the value's own rounding gives;
    * or the lowest byte of the significand is one value in at least 20 of the first
      case's 30 releases and another in at least 20 of the second case's (the value
      written into the low bits, E1; an honest rounding's low bits are spread, or, on a
      power-of-two grid or in float32, zero for both). No lattice exempts it: a code
      could pick, among the lattice points near ``v + L``, one whose float has that byte.

    The answer is flagged when more pairs are coded than ``Binomial(pairs, 2/31)``
    allows at :data:`ALPHA_SAME_SEED` (8 of 10 pairs). An answer whose noise
    depends on the value (other draws, or opposite ones, on either side of 0) has gaps
    of the order of the noise, flagged with probability at most 1.05·NEAR each:
    fewer than 20 of 30 (probability below 1e-30 per pair).

    It is flagged too when 2 pairs (:data:`_GRID_PAIRS`) or more lie on grids of one step
    with different offsets (:func:`_offset_pair`; adversarial review round 10, A1: the
    value coded in the offset of every release from a fine grid, whose gaps flip between
    two values with the seed as an honest grid's do; round 11, F5: in most releases, 20
    of 30 gaps and 3/4 of each case's releases suffice). An honest answer never has such a
    pair: rounded to a grid fixed for the (Δ, ε), its two cases share the grid; with its
    noise rounded before the value is added, its gaps are one value, 0; unrounded, they
    lie within the rounding. Its false-alarm probability is therefore 0, up to float
    rounding beyond the allowance (simulated: honest grids' offsets below 2% of it).

    And it is flagged when 2 pairs (:data:`_SUB_GRID_PAIRS`) or more have 20 of their 30
    gaps flagged and hold a code below a rounding of the releases' own binade or decade
    (:func:`_sub_grid_pair`; adversarial review round 12, F0: 27 significant bits of
    ``value + noise``, then the value's cents in the 17 bits below, whose unit moves with
    the binade: the gaps are then neither one value nor two on one grid, and every release
    lies on one fine lattice, which the exemption above cleared): in one frame
    ``Q = 2^(e − t)`` or ``10^(d − t)`` read per release, at most 0.01 scales, 3/4 of each
    case's distinct releases share one offset ``(|r| mod Q)/Q``, and the two offsets
    differ. An honest answer ``g(value + noise)`` has no digits below its own rounding
    that the rounding does not fix (one offset for both cases), and finer than the noise
    but not below its rounding its offsets spread with the noise (at most about 1/2 per
    offset; 3/4 of 600 releases: ``exp(−600·KL(3/4‖0.53)) < 1e-27`` per frame and case,
    62 frames, 10 pairs); the noise rounded before the value is added, whose releases hold
    ``value mod s`` below its grid, has no flagged gaps. Its false-alarm probability is
    therefore below 1e-20 (simulated: no pair of 600 read for 15 honest variants).
    The same 2 pairs flag it when their flagged gaps are spread and unexplained
    (:func:`_spread_pair`; adversarial review round 13, F1: the value's cents written below
    a grid ``S`` of at most 0.004 scales at an offset scrambled by a hash of the release's
    grid index ``⌊x/S⌋``, so that no offset is shared, no two gap clusters form, no gap
    repeats, yet one release decodes the cents): neither one value nor two, and at least
    20 of the 30 beyond the steps of the lattices their releases' 16 nearest neighbours in
    the pair lie on (0 where none: a code scrambled below the releases' own digits). An
    honest answer's gaps are flagged only on a grid its digits do not show, and are then
    one or two values on a fixed grid, or, on a grid whose step changes with the release
    (a relative step of ``b/1000`` units), each within the two releases' steps but where
    the neighbours cross a change of step or are sparse, at most 1 seed in 10: false
    alarm at most 1.1e-13 per pair (simulated: at most 4 of 30 unexplained, 0 pairs
    flagged in 90 runs of three such grids). Not caught: a code of a few bits that moves
    each release by about a lattice step or less (the noise's place between the points
    hides most of it).

    Returns
    -------
    str
        :data:`SAME_SEED_LEAK` or :data:`GRID_OFFSET_LEAK` (the verdict's reason), or
        ``""`` when neither test flags the answer.
    """
    coded = offset = sub_grid = 0
    n = releases.shape[1]
    for pair, second in enumerate(again):
        (value, delta, epsilon), (neighbour, _, _) = cases[2 * pair], cases[2 * pair + 1]
        batch = np.concatenate([releases[2 * pair], releases[2 * pair + 1], second])
        errors = rounding_errors(batch)
        chosen = probed[pair, :second.size]
        fractions = fraction_rounding(np.concatenate([batch[chosen], second]))
        allowed = errors[chosen] + errors[2 * n:] + 4 * (
            _grid_step(batch) + math.ulp(max(abs(value), abs(neighbour)))
            + fractions[:second.size] + fractions[second.size:])
        first, scale = releases[2 * pair, chosen], delta / epsilon
        coded += _coded_pair(first, second, value, neighbour, allowed, scale, batch)
        offset += second.size > 0 and _offset_pair(
            first, second, value, neighbour, float(np.max(allowed)), scale,
            (releases[2 * pair], batch[n:]))
        beyond = _beyond(first, second, value, neighbour, allowed, scale)
        if int(beyond.sum()) >= _SAME_SEED_MOST:
            gap = (first - second)[beyond] - (value - neighbour)
            sub_grid += _sub_grid_pair((releases[2 * pair], batch[n:]), scale) or _spread_pair(
                first[beyond], second[beyond], gap, float(np.max(allowed[beyond])), batch)
    if bool(again) and binomial_reject(coded, len(again), _SAME_SEED_ONE_VALUE,
                                       ALPHA_SAME_SEED, "greater"):
        return SAME_SEED_LEAK
    if offset >= _GRID_PAIRS:                   # the more telling reason, where it holds
        return GRID_OFFSET_LEAK
    return SAME_SEED_LEAK if sub_grid >= _SUB_GRID_PAIRS else ""


def two_workers(rng: np.random.Generator, labels: np.ndarray, draws: int,
                probes: int, repeats: int = 0) -> tuple[list[tuple[int, int, int, int]], np.ndarray,
                                      np.ndarray, np.ndarray]:
    """The Laplace judge's calls, spread at random over two workers so that no worker is
    lent one seed twice (adversarial review round 10, L1).

    An answer that remembers the generators it was lent (their state, their first draws)
    recognizes a seed lent again, and can release honestly on the same-seed test's calls
    while it writes the value into the others. Here each ordinary call (``labels``: the
    case of each call, in the secret order; ``draws`` calls per case, the cases in pairs)
    goes to worker 0 or 1 with probability 1/2; for each pair ``p`` the releases
    ``probed[p]`` (``probes`` of the first case's, chosen at random) are lent again to
    the second case *in the other worker*, each at a random place among the calls. In
    the sandbox the two workers are separate processes that ran the notebook's cells
    and nothing else, alive one after the other (worker 0 makes all its calls, in this
    order, and is closed before worker 1 starts: two live processes could tell each
    other the seeds they saw through the kernel, a record lock on a file both read,
    adversarial review round 11, F1; :func:`~dpkit.course.judges._base.apart`): a worker
    sees each seed once, and a call of the same-seed test is, in what the worker can
    see, any call of its case (a fresh seed at a random time), so the answer treats it as
    it treats the others. Then ``repeats`` calls ask the worker that made it for release
    ``j`` of case ``c`` again (``c = r mod cases``, ``j = r // cases`` for ``r < repeats``).

    Returns
    -------
    calls : list of (case, j, worker, probe)
        In the order they are made: ``probe == -1`` for the release ``j`` of ``case``
        (seed ``j`` of that case); :data:`REPEAT` for one asked again; otherwise probe
        ``probe = p·probes + k`` of pair ``p``: ``case = 2p + 1`` with the first case's
        seed ``j = probed[p, k]``.
    order : numpy.ndarray
        The cases of the ordinary calls, worker 0's in its order, then worker 1's: release
        ``j`` of a case is its ``j``-th in this order, which the independence tests read
        (each worker's calls in the order it saw them).
    side : numpy.ndarray
        ``side[c, j]``: the worker that made release ``j`` of case ``c``.
    probed : numpy.ndarray
        ``probed[p]``: the first case's releases whose seeds are lent again.

    >>> labels = np.repeat(np.arange(4), 5)
    >>> calls, order, side, probed = two_workers(np.random.default_rng(1), labels, 5, 2)
    >>> len(calls), sorted(order.tolist()) == labels.tolist(), probed.shape
    (24, True, (2, 2))
    >>> all(w != side[c - 1, j] for c, j, w, probe in calls if probe >= 0)
    True
    """
    worker = rng.integers(0, 2, labels.size)
    ordered = np.concatenate([np.flatnonzero(worker == 0), np.flatnonzero(worker == 1)])
    order = labels[ordered]
    made = np.zeros(labels.max() + 1, dtype=np.int64)
    index = np.empty(labels.size, dtype=np.int64)
    for t in ordered.tolist():
        index[t] = made[labels[t]]
        made[labels[t]] += 1
    side = np.empty((made.size, draws), dtype=np.int64)
    side[labels, index] = worker
    pairs = made.size // 2
    probed = np.array([rng.choice(draws, probes, replace=False) for _ in range(pairs)],
                      dtype=np.int64).reshape(pairs, probes)
    probe_order = iter(rng.permutation(pairs * probes).tolist())
    ordinary = iter(range(labels.size))
    calls = []
    for is_probe in rng.permutation(np.repeat([False, True], [labels.size, pairs * probes])):
        if is_probe:
            probe = next(probe_order)
            p, k = divmod(probe, probes)
            j = int(probed[p, k])
            calls.append((2 * p + 1, j, 1 - int(side[2 * p, j]), probe))
        else:
            t = next(ordinary)
            calls.append((int(labels[t]), int(index[t]), int(worker[t]), -1))
    calls += [(r % made.size, r // made.size, int(side[r % made.size, r // made.size]), REPEAT)
              for r in range(repeats)]
    return calls, order, side, probed


def in_turn(calls: list[tuple[int, int, int, int]],
            workers: Iterator[Callable[..., Any]]) -> Iterator[tuple[Callable[..., Any], int,
                                                                   int, int]]:
    """Each of ``calls`` (``(case, j, worker, probe)``, as :func:`two_workers` makes them)
    with the stand-in of its worker: all of worker 0's, in their order, then all of worker
    1's, each worker taken from ``workers`` (:func:`~dpkit.course.judges._base.apart`)
    when its turn comes, so that no two are alive together (adversarial review round 11,
    F1: two live workers told each other the seeds they had seen through a record lock).

    Returns
    -------
    iterator of (worker, case, j, probe)
        The calls, worker by worker.

    >>> calls = [(0, 0, 1, -1), (1, 0, 0, -1), (0, 1, 1, 0)]
    >>> [(w, c) for w, c, _, _ in in_turn(calls, iter("AB"))]
    [('A', 1), ('B', 0), ('B', 0)]
    """
    for w, worker in enumerate(workers):
        for case, j, own, probe in calls:
            if own == w:
                yield worker, case, j, probe
