"""Unsafe versions of the sparse vector technique: **never use these to release data**.

Each function reproduces a version of the sparse vector technique (SVT) that has been
taught or published, with its mistake kept so that the book can audit it. All use the
textbook's floating-point Laplace noise
(:func:`dpkit.naive.textbook_laplace_noise`), and all treat the queries as sensitivity-1.
Every docstring states the privacy the function really gives; the safe versions are
:func:`dpkit.svt.above_threshold`, :func:`dpkit.svt.sparse` and :func:`dpkit.svt.auto_avg`.

The published variants are those catalogued by Lyu, Su & Li (2017), *Understanding the
Sparse Vector Technique for Differential Privacy* (PVLDB 10(6)), Figure 1 and Table 1; the
function names say what is wrong with each:

======================================  ==========  ===========================================
function                                Lyu et al.  true privacy (claimed: ε)
======================================  ==========  ===========================================
:func:`svt_release_answers`             Alg. 3      not ε'-DP for any finite ε' (∞)
:func:`svt_little_query_noise`          Alg. 4      ((1 + 6c)/4)·ε
:func:`svt_no_query_noise`              Alg. 5      ∞
:func:`svt_no_cutoff`                   Alg. 6      ∞
======================================  ==========  ===========================================

:func:`above_threshold` is the approach SVT improves on (each query noised on its own,
compared with an exact threshold: nε for n queries); :func:`above_threshold_random_index`
and :func:`auto_avg` are correct in their privacy but return wrong answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from dpkit._checks import check_epsilon, check_finite_array, check_integer, check_real
from dpkit.naive.laplace import laplace_mechanism, textbook_laplace_noise
from dpkit.rng import RandomSource, resolve
from dpkit.svt.clipping import check_bounds_grid
from dpkit.svt.core import Query, call_query, check_queries

__all__ = [
    "above_threshold",
    "above_threshold_random_index",
    "auto_avg",
    "svt_little_query_noise",
    "svt_no_cutoff",
    "svt_no_query_noise",
    "svt_release_answers",
]


class _TextbookNoise:
    """Draws the textbook floating-point Laplace noise one value at a time, 16 at once.

    ``noise(scale)`` is ``textbook_laplace_noise(U, S, scale)`` for fresh ``U`` and ``S``
    (as :func:`dpkit.naive.laplace_mechanism` draws them); ``noise(0)`` is no noise.
    """

    _BLOCK = 16

    def __init__(self, source: RandomSource) -> None:
        self._source = source
        self._units: Iterator[float] = iter(())

    def __call__(self, scale: float) -> float:
        if scale == 0:
            return 0.0
        unit = next(self._units, None)
        if unit is None:
            draws = self._source.uniforms(2 * self._BLOCK)  # one call: its cost is mostly fixed
            uniforms = 1.0 - draws[:self._BLOCK]   # in (0, 1]
            signs = np.where(draws[self._BLOCK:] < 0.5, 1.0, -1.0)
            self._units = iter(textbook_laplace_noise(uniforms, signs, 1.0).tolist())
            unit = next(self._units)
        return scale * unit  # == textbook_laplace_noise(U, S, scale): sign flips are exact


def _variant(queries: Any, data: Any, threshold: Any, *, threshold_scale: float,
             query_scale: float, c: int | None, refresh: bool,
             source: RandomSource) -> list[tuple[int, float]]:
    """The SVT skeleton every variant here shares, in floating point.

    ``T̂ = T + Lap(threshold_scale)`` (no noise if 0); for each query in order,
    ``a_i = q_i(D) + Lap(query_scale)`` (no noise if 0); report ``(i, a_i)`` when
    ``a_i >= T̂``; after a report draw a new ``T̂`` if ``refresh``; stop after ``c`` reports
    (never, if ``c`` is None). The callers decide what of ``(i, a_i)`` they release.
    """
    threshold = check_real(threshold, "threshold")

    noise = _TextbookNoise(source)

    noisy_threshold = threshold + noise(threshold_scale)
    reports: list[tuple[int, float]] = []
    for index, query in enumerate(check_queries(queries)):
        answer = check_real(call_query(query, data, index), f"queries[{index}](data)")
        answer += noise(query_scale)
        if answer >= noisy_threshold:
            reports.append((index, answer))
            if c is not None and len(reports) >= c:
                break
            if refresh:
                noisy_threshold = threshold + noise(threshold_scale)
    return reports


def above_threshold(queries: Iterable[Query], data: Any, threshold: float, epsilon: float,
                    rng: RandomSource | None = None) -> int | None:
    """NAIVE: noise every answer with ``Lap(1/ε)`` and compare it with the exact threshold.

    Returns the index of the first query with ``q_i(D) + Lap(1/ε) >= T``, or ``None``.

    **True privacy: nε** when ``n`` queries are examined (sequential composition of ``n``
    ε-DP Laplace releases, each thresholded; Dwork & Roth 2014, Theorem 3.16), and no
    better in general: on the outcome ``None`` with every answer moved up by 1 the
    probability ratio reaches ``e**(nε)``. The cost grows with every query asked; the sparse
    vector technique (:func:`dpkit.svt.above_threshold`) pays ε once, however many.

    Parameters
    ----------
    queries : iterable of callables
        ``query(data) -> real number`` of sensitivity 1, consumed lazily.
    data : any
        Passed to each query.
    threshold : real number
        The exact threshold.
    epsilon : float
        Per-query privacy parameter, finite and > 0.
    rng : RandomSource, optional
        Source of the uniform draws behind the noise; ``None`` for the secure source.

    Returns
    -------
    int or None

    Raises
    ------
    TypeError, ValueError
        On an invalid argument or query answer (as :func:`dpkit.svt.above_threshold`).
    """
    epsilon = check_epsilon(epsilon)
    reports = _variant(queries, data, threshold, threshold_scale=0.0, query_scale=1 / epsilon,
                       c=1, refresh=False, source=resolve(rng))
    return reports[0][0] if reports else None


def above_threshold_random_index(queries: Sequence[Query], data: Any, threshold: float,
                                 epsilon: float, rng: RandomSource | None = None) -> int:
    """NAIVE: AboveThreshold that returns a *random index* when no query passes.

    The noise is right (``Lap(2/ε)`` on the threshold, ``Lap(4/ε)`` per query; Dwork &
    Roth 2014, Algorithm 1, in floating point), but when the stream ends with no query
    above the threshold it returns a uniformly random index instead of saying so. Near &
    Abuah (2021, chapter on the sparse vector technique) use this fallback and say so in
    their text, and also give a version that returns ``None``; the caller of the
    random-index version cannot tell a real answer from the fallback, so a clipping bound
    chosen this way can be any candidate.

    **True privacy: ε** (the random index is post-processing of the outcome "none"). A
    usability fault, not a privacy one.

    Parameters
    ----------
    queries : sequence of callables
        ``query(data) -> real number`` of sensitivity 1 (a sequence: its length is used).
    data : any
    threshold : real number
    epsilon : float
        Privacy parameter, finite and > 0.
    rng : RandomSource, optional
        Source of the uniform draws; ``None`` for the secure source.

    Returns
    -------
    int
        The first index found above the threshold, or a random index if none was.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument, an empty or non-sequence ``queries``.
    """
    epsilon = check_epsilon(epsilon)
    if not isinstance(queries, Sequence) or isinstance(queries, (str, bytes)):
        raise TypeError(f"queries must be a sequence of callables, got "
                        f"{type(queries).__name__}")
    if len(queries) == 0:
        raise ValueError("queries must hold at least one query, got none")
    source = resolve(rng)
    reports = _variant(queries, data, threshold, threshold_scale=2 / epsilon,
                       query_scale=4 / epsilon, c=1, refresh=False, source=source)
    if reports:
        return reports[0][0]
    return source.randbelow(len(queries))  # the bug: a made-up answer


def svt_release_answers(queries: Iterable[Query], data: Any, threshold: float, epsilon: float,
                        c: int, rng: RandomSource | None = None) -> list[tuple[int, float]]:
    """BROKEN: SVT that releases the noisy answer ``q_i(D) + ν_i`` with each positive index.

    Lyu, Su & Li (2017), Algorithm 3: ``T̂ = T + Lap(2/ε)`` once, ``ν_i ~ Lap(2c/ε)``,
    report ``(i, q_i(D) + ν_i)`` when it reaches ``T̂``, stop after ``c`` reports.

    **Claimed: ε-DP. True: not ε'-DP for any finite ε'** (Lyu et al. 2017, Theorem 3). The
    released value is an upper bound on the threshold noise (``T̂ <= q_i(D) + ν_i``), so
    the threshold noise can no longer absorb a change of the queries answered "below":
    the more "below" answers before a report, the larger the privacy loss, without limit.

    Parameters
    ----------
    queries : iterable of callables
        ``query(data) -> real number`` of sensitivity 1, consumed lazily.
    data : any
    threshold : real number
    epsilon : float
        The claimed privacy parameter, finite and > 0.
    c : int
        Most reports, an integer >= 1.
    rng : RandomSource, optional
        Source of the uniform draws; ``None`` for the secure source.

    Returns
    -------
    list of (int, float)
        ``(index, noisy answer)`` per report.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument or query answer.
    """
    epsilon = check_epsilon(epsilon)
    c = check_integer(c, "c", minimum=1)
    return _variant(queries, data, threshold, threshold_scale=2 / epsilon,
                    query_scale=2 * c / epsilon, c=c, refresh=False,
                    source=resolve(rng))


def svt_little_query_noise(queries: Iterable[Query], data: Any, threshold: float,
                           epsilon: float, c: int, rng: RandomSource | None = None) -> list[int]:
    """BROKEN: SVT with too little query noise, ``Lap(4/(3ε))`` for up to ``c`` positives.

    Lyu, Su & Li (2017), Algorithm 4: ``T̂ = T + Lap(4/ε)`` once (ε/4 for the threshold),
    ``ν_i ~ Lap(4/(3ε))`` (the remaining 3ε/4, as if it were spent once), report ``i`` when
    ``q_i(D) + ν_i >= T̂``, stop after ``c`` reports.

    **Claimed: ε-DP. True: ((1 + 6c)/4)·ε-DP** (Lyu et al. 2017, Table 1): each positive
    answer can cost ``2 · 3ε/4`` (the proof shifts its noise by 2), and there are ``c`` of
    them. Correct noise is ``Lap(2c/ε₂)`` for a budget ε₂ shared by the ``c`` positives.

    Parameters
    ----------
    queries : iterable of callables
    data : any
    threshold : real number
    epsilon : float
        The claimed privacy parameter, finite and > 0.
    c : int
        Most reports, an integer >= 1.
    rng : RandomSource, optional

    Returns
    -------
    list of int

    Raises
    ------
    TypeError, ValueError
        On an invalid argument or query answer.
    """
    epsilon = check_epsilon(epsilon)
    c = check_integer(c, "c", minimum=1)
    reports = _variant(queries, data, threshold, threshold_scale=4 / epsilon,
                       query_scale=4 / (3 * epsilon), c=c, refresh=False,
                       source=resolve(rng))
    return [index for index, _ in reports]


def svt_no_query_noise(queries: Iterable[Query], data: Any, threshold: float, epsilon: float,
                       rng: RandomSource | None = None) -> list[int]:
    """BROKEN: SVT with a noisy threshold but *exact* query answers, and no cutoff.

    Lyu, Su & Li (2017), Algorithm 5: ``T̂ = T + Lap(2/ε)`` once; report every ``i`` with
    ``q_i(D) >= T̂``.

    **Claimed: ε-DP. True: ∞** (Lyu et al. 2017, Table 1). With ``T = 0``, answers
    ``(0, 1)`` on one dataset and ``(1, 0)`` on a neighbour, the report "only query 1" has
    probability ``P(0 < T̂ <= 1) > 0`` on the first and exactly 0 on the second.

    Parameters
    ----------
    queries : iterable of callables
        Consumed entirely (there is no cutoff).
    data : any
    threshold : real number
    epsilon : float
        The claimed privacy parameter, finite and > 0.
    rng : RandomSource, optional

    Returns
    -------
    list of int
        Every index reported above the threshold.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument or query answer.
    """
    epsilon = check_epsilon(epsilon)
    reports = _variant(queries, data, threshold, threshold_scale=2 / epsilon,
                       query_scale=0.0, c=None, refresh=False, source=resolve(rng))
    return [index for index, _ in reports]


def svt_no_cutoff(queries: Iterable[Query], data: Any, threshold: float, epsilon: float,
                  rng: RandomSource | None = None) -> list[int]:
    """BROKEN: SVT that reports *every* query above the threshold (no cutoff ``c``).

    Lyu, Su & Li (2017), Algorithm 6: ``T̂ = T + Lap(2/ε)`` once, ``ν_i ~ Lap(2/ε)``,
    report every ``i`` with ``q_i(D) + ν_i >= T̂``.

    **Claimed: ε-DP. True: ∞** (Lyu et al. 2017, Table 1). The proof of AboveThreshold
    pays for *one* positive answer; here each positive answer whose query moved up costs
    up to ε/2 more, and their number is unbounded: with ``m`` queries that move down and
    are answered "below" and ``m`` that move up and are answered "above", the probability
    ratio grows like ``e**(mε/2)``.

    Parameters
    ----------
    queries : iterable of callables
        Consumed entirely.
    data : any
    threshold : real number
    epsilon : float
        The claimed privacy parameter, finite and > 0.
    rng : RandomSource, optional

    Returns
    -------
    list of int
        Every index reported above the threshold.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument or query answer.
    """
    epsilon = check_epsilon(epsilon)
    reports = _variant(queries, data, threshold, threshold_scale=2 / epsilon,
                       query_scale=2 / epsilon, c=None, refresh=False,
                       source=resolve(rng))
    return [index for index, _ in reports]


def auto_avg(values: Any, epsilon: float, *, bounds: Sequence[float],
             rng: RandomSource | None = None) -> float:
    """WRONG ANSWER: an automatic average that divides by a second noisy clipped sum.

    A plausible slip (we know of no published source); Near & Abuah's (2021) ``auto_avg``
    divides by a noisy count (``len(df)``).

    Spends ε/3 choosing a clipping bound ``b`` (with
    :func:`above_threshold_random_index`), ε/3 on a noisy clipped sum, and ε/3 on the
    denominator, but the denominator is *another noisy clipped sum* instead of a noisy
    count of rows. The result is a noisy sum divided by a noisy copy of itself: about 1.0,
    whatever the column. The noise is the textbook's floating-point Laplace
    (:func:`dpkit.naive.laplace_mechanism`).

    **True privacy: ε** (three ε/3 releases with the right sensitivities); the estimate is
    simply not an average. Compare :func:`dpkit.svt.auto_avg`, which divides by a noisy
    count.

    Parameters
    ----------
    values : array_like of real numbers, one dimension
    epsilon : float
        Privacy parameter, finite and > 0.
    bounds : sequence of real numbers
        Candidate clipping bounds, > 0 and increasing.
    rng : RandomSource, optional

    Returns
    -------
    float
        Approximately 1.0.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument.
    """
    epsilon = check_epsilon(epsilon)
    data = check_finite_array(values, "values", ndim=1)
    grid = check_bounds_grid(bounds)
    source = resolve(rng)
    share = epsilon / 3
    queries = [lambda d, b=float(b): float(np.clip(d, 0, b).sum() - np.clip(d, 0, b + 1).sum())
               for b in grid]
    bound = float(grid[above_threshold_random_index(queries, data, 0.0, share, rng=source)])
    clipped_sum = float(np.clip(data, 0, bound).sum())
    noisy_sum = laplace_mechanism(clipped_sum, bound, share, source)
    noisy_denominator = laplace_mechanism(clipped_sum, bound, share, source)  # the bug
    return float(noisy_sum / noisy_denominator)
