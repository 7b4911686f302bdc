"""Range queries: Sparse picks the queries worth answering, Laplace noise answers them.

:func:`range_queries` lets Sparse (:mod:`dpkit.svt.core`) pick which counting queries are
large enough to be worth answering, then answers those with (discrete) Laplace noise, half
the budget each. Typical use: counting queries over ranges (age bands), of which only the
well-populated ones are worth releasing.

References
----------
Dwork, C. and Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
Section 3.6. Canonne, C., Kamath, G. and Steinke, T. (2020). The Discrete Gaussian for
Differential Privacy. NeurIPS.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Any

from dpkit._checks import check_integer
from dpkit._exact import as_fraction, describe
from dpkit.laplace import draw_extra_work
from dpkit.rng import RandomSource, resolve
from dpkit.svt.core import (
    COST,
    CallerObjects,
    Query,
    exact_epsilon,
    first_step,
    grid_bits,
    nearest_float,
    query_answers,
    release_on_grid,
    round_to_grid,
    sparse_on_answers,
    warm_up_queries,
)
from dpkit.timing import Deadline, run_padded, warm_up_calls

__all__ = ["RANGE_ANSWER_LIMIT", "range_queries"]


#: The largest magnitude of a query answer :func:`range_queries` accepts: its noisy release
#: is returned as a float, and float64 ends near ``2**1024``; this limit leaves a margin of
#: more than ``2**1023`` for the noise (whose scale is at most ``2**64``).
RANGE_ANSWER_LIMIT = 2**1000


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

    **Timing**: padded steps as in :func:`dpkit.svt.above_threshold`; the last step's budget
    also covers the noisy answers released (their number is in the output), each with the
    extra work of a draw at their noise scale (:func:`dpkit.laplace.draw_extra_work`), and
    every step the extra work of its draws (:func:`dpkit.svt.core.step_extra_work`). After
    an error nothing is released; the last step frees the answers picked so far and is
    charged ``min(answers taken, c - 1)`` objects for them (a public bound on their number:
    :func:`dpkit.svt.core.sparse_on_answers`).
    """
    return run_padded(COST, _range_queries_work, CallerObjects(queries), data, c, threshold,
                      epsilon, rng)


def _range_queries_work(clock: Deadline, held: CallerObjects, data: Any, c: Any,
                        threshold: Any, epsilon: Any, rng: Any) -> Any:
    """The work of :func:`range_queries`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    c = check_integer(c, "c", minimum=1)
    run_epsilon = exact_epsilon(epsilon, 2 * c) / (2 * c)  # c runs of Sparse, c answers
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    # Key each answer by (index, exact answer) so the picks come back with their answers;
    # a step draws the query's noise and, after a positive, a new threshold's.
    keyed = (((i, a), a) for i, a in _releasable_answers(held, data, clock,
                                                          first_step(clock, run_epsilon, True)))
    found = sparse_on_answers(keyed, exact_threshold, run_epsilon, c, source, clock)
    # Answers on the grid 2**-bits <= min(1, 1/run_epsilon)·2**-20: sensitivity 2**bits
    # units, noise scale 2**bits/run_epsilon >= 2**20 units.
    bits = grid_bits(min(Fraction(1), 1 / run_epsilon))
    # The last step also releases the answers found (their number is in the output, the
    # scale is public; charging c would overflow the deadline for a huge c: breaker 41, F1).
    clock.add("objects", len(found))
    clock.add_work(len(found) * draw_extra_work(Fraction(2**bits) / run_epsilon))
    released = [(i, nearest_float(release_on_grid(round_to_grid(answer, bits), 2**bits,
                                                  run_epsilon, -bits, source, 1)[0]))
                for i, answer in found]
    return released


def _releasable_answers(held: CallerObjects, data: Any, clock: Deadline, extra: float
                        ) -> Iterator[tuple[int, Fraction]]:
    """:func:`query_answers` (``extra`` as there), refusing an answer beyond
    :data:`RANGE_ANSWER_LIMIT` in magnitude as soon as it is evaluated (before the noise
    compared with it is drawn)."""
    for index, answer in query_answers(held, data, clock, extra):
        if abs(answer) > RANGE_ANSWER_LIMIT:
            raise ValueError(f"queries[{index}](data) must be at most 2**1000 (about 1.07e301) "
                             f"in magnitude, so that its noisy release is a float, got "
                             f"{describe(answer)}")
        yield index, answer


warm_up_calls(_range_queries_work, range_queries, None, 2, 0.3, 1.0,
              prepare=warm_up_queries)
