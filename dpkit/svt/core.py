"""The sparse vector technique: AboveThreshold and Sparse, with exact comparisons.

The sparse vector technique (SVT) answers a long, even unbounded, stream of
sensitivity-1 queries with one bit each ("below" or "above" a threshold) and charges
privacy only for the queries that come out *above*: :func:`above_threshold` stops at the
first one and costs ε in total however many queries it examined (Dwork & Roth 2014,
Algorithm 1 and Theorem 3.23). :func:`sparse` restarts it after each positive answer, up
to ``c`` times, with ε/c per run (Algorithm 2, Theorem 3.25).
:func:`above_threshold_runs` simulates many independent runs of AboveThreshold at once.

This module also holds what :mod:`dpkit.svt.clipping` and :mod:`dpkit.svt.ranges` build on:
the budget check (:func:`exact_epsilon`), the comparison grid (:func:`grid_bits`,
:func:`round_to_grid`), lazily evaluated queries (:func:`query_answers`), Sparse on exact answers
(:func:`sparse_on_answers`), AboveThreshold's runs on answers known in advance
(:func:`first_passes`), and the discrete Laplace release on a power-of-two grid
(:func:`release_on_grid`, :func:`nearest_float`).

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

Timing
------
:func:`above_threshold`, :func:`sparse` and :func:`dpkit.svt.range_queries` run in **steps**
(:meth:`dpkit.timing.Deadline.call`): the caller's code -- making the stream of queries,
taking the next query from it, calling it -- runs between them, in the caller's time, and
dpkit's share of each query (exact conversion and rounding of the answer, its noise, a
threshold's noise, the comparison) is padded
to a public budget counted from the moment the query returned, :data:`COST` for one answer,
plus the extra work of its noise draws at far scales (:func:`step_extra_work`: at the
smallest ε the scales reach ``2**66`` grid units, off the scalar walk; breaker review 35, F2).
The first step (validation, the first threshold) starts with the call, and the last one
also covers the release's tail (``range_queries``' noisy answers). So a release takes the
time of the caller's queries plus ``margin · COST`` per step, and the number of steps
(queries evaluated) is what the caller sees anyway through its own query calls; no time
dpkit measures enters a deadline, so nothing dpkit does between two queries shows in the
time. An error raised while dpkit processes an answer (a NaN, an answer too long) waits for
that step's deadline; an error raised by a query function itself propagates after one more
step (the unwinding), so its time is the caller's code plus the steps' budgets. Either last
step also frees the positives found so far, and is charged ``min(taken, c - 1)`` objects for
them (:func:`sparse_on_answers`: public, where their number is not). The
query noise is drawn one value per query from the fixed-cost sampler (not ahead in blocks,
as the simulations on answers known in advance do: :class:`_QueryNoise`), so every step
does the same work. What the caller's code itself reveals, including how long it takes in
the caches dpkit's previous step left, is the caller's to make data-independent (residual
risk (4) in :mod:`dpkit.timing`).

References
----------
Dwork, C. and Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
Section 3.6. Lyu, M., Su, D. and Li, N. (2017). Understanding the Sparse Vector Technique
for Differential Privacy. PVLDB 10(6). Canonne, C., Kamath, G. and Steinke, T. (2020).
The Discrete Gaussian for Differential Privacy. NeurIPS.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import (
    check_epsilon,
    check_integer,
    check_nonempty,
    refuse_masked,
)
from dpkit._exact import (
    as_fraction,
    describe,
)
from dpkit._samplers.grid import grid_exponent
from dpkit._samplers.noise import discrete_laplace
from dpkit.laplace import draw_extra_work
from dpkit.rng import RandomSource, resolve
from dpkit.timing import Cost, Deadline, run_padded, warm_up_calls

__all__ = ["MAX_RUNS", "RUN_EPSILON_RANGE", "above_threshold", "above_threshold_runs", "sparse"]


#: The most independent runs :func:`above_threshold_runs`, :func:`clip_bound_runs` and
#: :func:`auto_avg_runs` simulate in one call: their noise is drawn in bulk, a block of 64
#: candidates for every undecided run at once, so memory grows in proportion to ``runs``.
#: For more runs, call again with the same ``rng``.
MAX_RUNS = 100_000

#: The worst cost of one step of :func:`above_threshold`, :func:`sparse` and
#: :func:`dpkit.svt.range_queries` (see "Timing" above; ``benchmarks/deadlines.py``): ``fixed``
#: covers the first step (validation, a threshold) or one answer of any type -- the longest
#: Decimal accepted (360 digits, ``MAX_DECIMAL_DIGITS``) costs about three times a
#: Fraction -- with its noise and a threshold's; ``per_object``
#: covers each noisy answer ``range_queries`` releases at the end (with
#: :func:`dpkit.laplace.draw_extra_work` for its noise scale); every step also gets the
#: extra work of its draws (:func:`step_extra_work`).
COST = Cost(fixed=6.0, per_object=1.5)


#: The cost of :func:`above_threshold_runs` per (run, answer) pair, and per answer converted
#: (``benchmarks/deadlines.py``); and :data:`RUN_WORK` per run, in ``U``, which a pair's share
#: does not cover when the runs have few answers (before it, 100 to 5,000 runs of one answer
#: took 1.0 to 1.6 times the margin-1 deadline at the median, on a quiet core). ``large`` was
#: 10 before 3786e22: from 65 runs the noisy thresholds are drawn by the sampler for more
#: than 64 values, whose set-up costs about 12 U more (one answer, load 1.5: 6.2 U at 64 runs,
#: 18 U at 65, the median), so the work of runs of one answer reached the old ``fixed +
#: large`` (18 U).
RUNS_COST = Cost(fixed=8.0, per_value=0.05, large=16.0, per_vector_value=40.0, per_object=2.6)
RUN_WORK = 0.025

#: :func:`first_passes` stays on int64 arithmetic while answers and threshold lie below
#: ``FAST_UNITS`` grid units in magnitude and the query noise's scale below
#: ``FAST_SCALE_UNITS`` (a draw beyond ``2**61`` then has probability below ``exp(-2**10)``).
FAST_UNITS = 2**61
FAST_SCALE_UNITS = 2**50

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
    """Query noise for one call, drawn ahead in blocks of 8, 8, 16, 32, 64, 128, … values
    (each block as large as all before it, from 8 up to 1024).

    Noise drawn for queries never reached is independent of the output, so the output's
    distribution is exactly that of drawing one value per query.

    **Cost.** What holds depends on the block's size (:func:`dpkit._samplers.noise.
    discrete_laplace` picks the sampler from it), so on how far the stream has got:

    * the first 128 queries (blocks of 8, 8, 16, 32 and 64 values, at most ``FIXED_MAX =
      64`` each) get their noise from the fixed-cost sampler: the random bytes read and
      the operations run do not depend on the values drawn, bar events of probability
      ``<= 2**-64`` per digit trial (see "Timing" in :mod:`dpkit._samplers`);
    * from the 129th query on, blocks of 128 values and more come from the block-envelope
      sampler, whose running time depends on the values drawn, collectively (rejection
      rounds, refinement of values in the tail), unless the noise scale exceeds ``2**52``
      grid units (one run's epsilon below ``2**-50``), which keeps the fixed-cost sampler.

    Either way the loop of :func:`_svt` runs as long as the queries come out below the
    threshold, so the running time depends on the data: this is for the simulations on
    answers known in advance (:func:`first_passes`), padded as a whole; the releases that
    call queries draw one value per query instead (see "Timing" above).
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


def grid_bits(threshold_scale: Fraction) -> int:
    """Return ``k >= 0`` such that the grid ``γ = 2**-k`` is at most ``min(1, s·2**-20)``.

    ``s`` is the threshold's noise scale (:func:`dpkit._samplers.grid.grid_exponent` finds the
    power of two). ``1/γ = 2**k`` must be an integer: that keeps rounding shift-invariant
    (see the module notes), so the grid is never coarser than 1.
    """
    return max(0, -grid_exponent(threshold_scale))


def round_to_grid(value: Fraction, bits: int) -> int:
    """Round ``value`` to the nearest multiple of ``2**-bits`` (ties up), in grid units.

    Exact, monotone, and ``round_to_grid(x + 1) == round_to_grid(x) + 2**bits``.
    """
    return math.floor(value * 2**bits + Fraction(1, 2))


def check_iterable(queries: Any) -> None:
    """Refuse ``queries`` that is not an iterable (a string or bytes counts as not one).
    Looks at the type only (``type``, not ``__class__``, which the caller's code may
    compute: breaker review 42, F3). The first check of a type may still run a metaclass's
    code of the caller's (``issubclass`` reads its MRO: breaker review 43, F4), in the first
    step, whose work is public."""
    kind = type(queries)
    if issubclass(kind, (str, bytes)) or not issubclass(kind, Iterable):
        raise TypeError(f"queries must be an iterable of callables query(data) -> real number, "
                        f"got {describe(queries)} of type {type(queries).__name__}")


def check_queries(queries: Any) -> Iterator[Any]:
    """Return an iterator over ``queries`` without consuming it (streams stay lazy)."""
    check_iterable(queries)
    return iter(queries)


def call_query(query: Any, data: Any, index: int) -> Any:
    """Call ``query(data)``; refuse a query that is not callable."""
    if not callable(query):
        raise TypeError(f"queries[{index}] must be callable as query(data), "
                        f"got {describe(query)} of type {type(query).__name__}")
    return query(data)


class CallerObjects:
    """The caller's objects that a release of :func:`above_threshold`, :func:`sparse` or
    :func:`dpkit.svt.range_queries` holds: ``stream``, the queries as given until the first
    step makes an iterator of them (:func:`_next_answer`), then that iterator; ``answer``, the
    last query's answer while dpkit converts it (``None`` before the first query and once the
    stream has run out).

    It exists so that these objects are freed in the caller's time, never inside one of
    dpkit's steps, whose budget covers only dpkit's work. The public function makes it and
    passes it through :func:`dpkit.timing.run_padded`, whose arguments hold it until after
    the release's last wait: a stream only dpkit holds (an iterable whose ``__iter__`` is a
    generator) is closed there, its clean-up run in the caller's time (breaker review 41,
    F2); so is the answer at which the release stops, the caller's own object, whose freeing
    costs what its making did (review 44, F3, F4). Every earlier answer is dropped by
    :func:`_next_answer` in the caller's slot of :meth:`dpkit.timing.Deadline.call`, before
    the next query is taken (review 43, F2). A local of dpkit's work would be freed with its
    frame, inside the last step.

    Parameters
    ----------
    queries : any
        The ``queries`` given to the public function, not yet checked (the work function
        refuses a non-iterable, :func:`query_answers`).
    """

    __slots__ = ("answer", "stream")

    def __init__(self, queries: Any) -> None:
        self.stream: Any = queries
        self.answer: Any = None


#: What :func:`_next_answer` reads from the caller's stream of queries once it is exhausted.
_END = object()


def _next_answer(held: CallerObjects, data: Any, index: int) -> bool:
    """The caller's own code for one step: take the next query from ``held.stream`` (making
    the stream at the first step) and call it on ``data``; put its answer in ``held.answer``
    and return True, or False when none is left. A query that is not callable is refused
    here. The previous answer (the caller's object) is dropped first, so that it is
    freed here, in the caller's time, not inside dpkit's next step (breaker review 43, F2).
    When the stream runs out, the last answer is dropped here too; when the release stops
    at a positive, that answer is freed with ``held`` as the release returns, after its
    wait, in time not padded (:class:`CallerObjects`; breaker review 44, F3, F4)."""
    if index == 0:
        held.stream = iter(held.stream)
    held.answer = None
    query = next(held.stream, _END)
    if query is _END:
        return False
    held.answer = call_query(query, data, index)
    return True


def query_answers(held: CallerObjects, data: Any, clock: Deadline,
                  extra: float = 0.0) -> Iterator[tuple[int, Fraction]]:
    """Return a lazy iterator of ``(index, exact answer)`` of the queries
    ``held.stream``: a query is evaluated only when it is reached. A non-iterable
    ``held.stream`` is refused at once. ``clock`` is the release's
    :class:`dpkit.timing.Deadline`.

    The stream made from the queries replaces ``held.stream``, and each query's answer is
    kept in ``held.answer`` (:func:`_next_answer`), so that both are freed in the caller's
    time (:class:`CallerObjects`).

    Everything the caller's code does -- making the stream (``iter``), taking the next
    query from it, calling it -- runs between two steps of the release (``clock.call``),
    so none of it falls inside a step whose budget covers only dpkit's work (a slow
    stream would otherwise make every step overrun and show that work in the time). The
    next step, from its return, charges one answer of any type (an int or a float), and
    ``extra`` more (in ``U``: the far scales' draws, :func:`step_extra_work`), and starts
    with its exact conversion."""
    check_iterable(held.stream)  # refused at once: the type of ``queries`` is public

    def answers() -> Iterator[tuple[int, Fraction]]:
        index = 0
        while clock.call(_next_answer, held, data, index):
            clock.add("objects")
            clock.add_work(extra)
            yield index, as_fraction(held.answer, f"queries[{index}](data)")
            index += 1
    return answers()


def _svt(units: Iterator[tuple[Any, int]], threshold_units: int, run_scale: Fraction,
         c: int, rng: RandomSource, *, ahead: bool = True) -> list[Any]:
    """Sparse in grid units: up to ``c`` runs of AboveThreshold; return the positive keys.

    ``units`` yields ``(key, answer in grid units)``, the key usually the query's index;
    ``run_scale`` is the sensitivity in grid units divided by one run's epsilon. Each run
    draws a fresh threshold noise of scale
    ``2 * run_scale`` and, per query, a noise of scale ``4 * run_scale`` (Dwork & Roth 2014,
    Algorithm 1). Runs share ``units``, so each query is evaluated at most once and nothing
    after the ``c``-th positive is evaluated. The query noise is drawn ahead in blocks
    (:class:`_QueryNoise`), or with ``ahead=False`` one value per query (the same
    distribution; every step of a release then does the same work: see "Timing" above).
    """
    found: list[Any] = []
    scale = 4 * run_scale
    draw = _QueryNoise(scale, rng).draw if ahead else lambda: _discrete_laplace(scale, rng)
    while len(found) < c:
        noisy_threshold = threshold_units + _discrete_laplace(2 * run_scale, rng)
        for key, answer in units:
            if answer + draw() >= noisy_threshold:
                found.append(key)
                break
        else:  # the stream ended with no further positive answer
            break
    return found


#: The range of one AboveThreshold run's budget ε/c (ε for one run) that :mod:`dpkit.svt`
#: accepts: its noise scales ``2c/ε`` and ``4c/ε`` and the comparison grid stay within
#: exact, finite arithmetic. A budget outside it is refused with a ``ValueError``.
RUN_EPSILON_RANGE: tuple[Fraction, Fraction] = (Fraction(1, 2**64), Fraction(2**64))


def exact_epsilon(epsilon: Any, runs: int = 1) -> Fraction:
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
                         f"so that the noise scales stay finite, got epsilon={describe(epsilon)}")
    return exact


def sparse_on_answers(answers: Iterator[tuple[Any, Fraction]], threshold: Fraction,
                       run_epsilon: Fraction, c: int, rng: RandomSource, clock: Deadline
                       ) -> list[Any]:
    """Put exact answers and threshold on the comparison grid and run :func:`_svt`.

    ``answers`` yields ``(key, exact answer)``; the keys of the positives are returned.
    ``clock`` is the release's :class:`dpkit.timing.Deadline`.

    After an error (a query or the stream raises, an answer is refused; any exception, a
    ``SystemExit`` too, since every exception but an interrupt waits: breaker review 47, F3),
    the positives found so far are freed with the failed work, inside the last step, before
    its wait: that step is charged ``min(taken, c - 1)`` objects for them, ``taken`` the
    answers this function took (each could be a positive), ``c - 1`` the most that can be
    held (the ``c``-th
    positive ends the runs; so ``above_threshold``, ``c = 1``, holds none and is charged
    nothing). Both are public: the answers taken are the query calls the caller's code saw
    that returned an answer accepted, and ``c`` is a parameter; the number found, a function
    of Sparse's transcript, is not charged (breaker reviews 42, F2 and 44, F1; holding them
    past the wait instead freed them unpadded, review 43, F1).
    """
    run_scale = 1 / run_epsilon  # sensitivity 1, in real units
    bits = grid_bits(2 * run_scale)
    taken = 0

    def units() -> Iterator[tuple[Any, int]]:
        nonlocal taken
        for key, answer in answers:
            taken += 1
            yield key, round_to_grid(answer, bits)

    try:
        return _svt(units(), round_to_grid(threshold, bits), run_scale * 2**bits, c, rng,
                    ahead=False)
    except BaseException:
        clock.add("objects", min(taken, c - 1))   # the positives freed before the wait
        raise


def step_extra_work(run_epsilon: Fraction) -> tuple[float, float]:
    """The extra deadline, in ``U``, of the steps of :func:`sparse_on_answers` at one run's
    ``run_epsilon``, beyond :data:`COST`: ``(threshold, query)``, the work of
    :func:`dpkit.laplace.draw_extra_work` for a threshold's draw (scale ``2·S`` grid units,
    ``S = 2**bits/run_epsilon`` on the comparison grid) and for a query's (``4·S``). The
    grid is never coarser than 1, so ``S`` grows as ε shrinks: about ``2**19`` at
    ``run_epsilon = 1/60``, ``2**64`` at ``2**-64`` (breaker review 35, F2: at the smallest
    ε, without it, 3-8% of ``range_queries`` releases of 30 positives overran a step at
    margin 2, against 0.05% at ε = 1). A function of public parameters only.

    Parameters
    ----------
    run_epsilon : Fraction
        One run's ε, already validated (:func:`exact_epsilon`), so positive.

    Returns
    -------
    tuple of float
        ``(threshold, query)``: the extra work, in ``U``, of a threshold's draw and of a
        query's.

    Raises
    ------
    ZeroDivisionError
        If ``run_epsilon`` is 0, which :func:`exact_epsilon` refuses first.

    >>> step_extra_work(Fraction(1, 60)), step_extra_work(Fraction(1, 2**30))
    ((0.0, 0.0), (2.0, 2.0))
    >>> step_extra_work(Fraction(1, 2**64))
    (5.14, 5.154)
    """
    scale_units = 2 ** grid_bits(2 / run_epsilon) / run_epsilon
    return draw_extra_work(2 * scale_units), draw_extra_work(4 * scale_units)


def first_step(clock: Deadline, run_epsilon: Fraction, restarts: bool) -> float:
    """Open a release's first step (validation and the first threshold's draw, charged the
    extra work of its scale) and return each query step's extra budget, in ``U``
    (:func:`step_extra_work`): the query's draw, and a new threshold's too when the runs
    restart after a positive (``restarts``: :func:`sparse`, :func:`dpkit.svt.range_queries`).
    Later steps are counted by :func:`query_answers`.

    Parameters
    ----------
    clock : Deadline
        The release's clock, not yet sized.
    run_epsilon : Fraction
        One run's ε, already validated (:func:`exact_epsilon`).
    restarts : bool
        Whether a positive draws a new threshold in the next query step.

    Returns
    -------
    float
        Each query step's extra budget, in ``U``; a function of public parameters only.

    Raises
    ------
    ZeroDivisionError
        As :func:`step_extra_work`, at ``run_epsilon = 0``, which :func:`exact_epsilon`
        refuses first.
    """
    clock.size(1)
    threshold_work, query_work = step_extra_work(run_epsilon)
    clock.add_work(threshold_work)
    return threshold_work + query_work if restarts else query_work


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

    **Timing**: the queries run between padded steps (see "Timing" in :mod:`dpkit.svt.core`):
    dpkit's work on each answer ends ``margin · COST`` after the query returned, so the call
    takes the queries' own time plus one budget per query evaluated and one for the start.
    A refused answer (NaN, too long) raises at its step's deadline; an exception from a
    query propagates one fixed budget after it was raised.

    Examples
    --------
    Which is the first age limit with at least 100 people at or below it?

    >>> from dpkit.rng import seeded
    >>> ages = [5, 15, 25] * 40
    >>> queries = [lambda d, t=t: sum(x <= t for x in d) for t in (10, 20, 30)]
    >>> above_threshold(queries, ages, 100, 1.0, rng=seeded(0))
    2
    """
    return run_padded(COST, _above_threshold_work, CallerObjects(queries), data, threshold,
                      epsilon, rng)


def _above_threshold_work(clock: Deadline, held: CallerObjects, data: Any, threshold: Any,
                          epsilon: Any, rng: Any) -> Any:
    """The work of :func:`above_threshold`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    run_epsilon = exact_epsilon(epsilon)
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    # validated lazily, none evaluated yet; a step draws the query's noise (no new threshold)
    answers = query_answers(held, data, clock, first_step(clock, run_epsilon, False))
    found = sparse_on_answers(answers, exact_threshold, run_epsilon, 1, source, clock)
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
    ε/c, so no rounding of the budget occurs. Exact comparisons and timing (padded steps)
    as in :func:`above_threshold`, but that an error's last step also frees the indices
    found so far and is charged ``min(answers taken, c - 1)`` objects for them (a public
    bound on their number: :func:`dpkit.svt.core.sparse_on_answers`).
    """
    return run_padded(COST, _sparse_work, CallerObjects(queries), data, threshold, epsilon, c,
                      rng)


def _sparse_work(clock: Deadline, held: CallerObjects, data: Any, threshold: Any,
                 epsilon: Any, c: Any, rng: Any) -> Any:
    """The work of :func:`sparse`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    c = check_integer(c, "c", minimum=1)
    run_epsilon = exact_epsilon(epsilon, c) / c
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    # a step draws the query's noise and, after a positive, a new threshold's
    found = sparse_on_answers(query_answers(held, data, clock,
                                            first_step(clock, run_epsilon, True)),
                              exact_threshold, run_epsilon, c, source, clock)
    return found


def first_passes(answers: list[int], threshold: int, run_scale: Fraction, runs: int,
                  rng: RandomSource, *, bound: int, block: int = 64) -> np.ndarray:
    """``runs`` independent runs of AboveThreshold on answers known in advance (grid units).

    Returns, per run, the index of the first answer with ``a_i + ν_i >= threshold + ρ``
    (``ρ`` of scale ``2 * run_scale``, ``ν_i`` of scale ``4 * run_scale``, all discrete
    Laplace), or -1 if none. The query noise is drawn ``block`` candidates at a time for the
    runs still undecided, vectorised; this is :func:`_svt`'s distribution exactly (noise
    drawn for a candidate a run never reaches would be independent of its output).
    ``bound`` is a public bound on ``|answers|``: the arithmetic path is chosen from it
    and the other public parameters, never from the answers themselves.
    """
    # int64 stays exact while |answers|, |threshold| < 2**61 and the noise scales < 2**50
    # (a draw beyond 2**61 then has probability below exp(-2**10)); else exact Python ints.
    if bound >= FAST_UNITS or abs(threshold) >= FAST_UNITS or 4 * run_scale >= FAST_SCALE_UNITS:
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
        As :func:`above_threshold`; also if ``answers`` is empty, ``TypeError`` if it is a
        ``numpy.ma.MaskedArray`` or holds masked entries (fill or compress it first).
        ``TypeError`` if ``runs`` is not an integer, ``ValueError`` if it is outside
        ``[1, MAX_RUNS]``, or if an answer or the threshold lies beyond ``±2**61`` grid
        units, or ``epsilon < 2**-48`` (see Timing).

    Notes
    -----
    **Privacy**: each run is an ε-DP release (Dwork & Roth 2014, Theorem 3.23); all of
    them together cost ``runs · ε``.

    **Timing**: like every release, it ends at a deadline set by public sizes, here
    ``runs · (len(answers) + 2)`` (:mod:`dpkit.timing`): every run is charged for reading every
    answer, as when no answer passes. Its work stays on fixed-width (int64) arithmetic, so
    answers and threshold must lie within ``±2**61`` grid units; larger ones are refused
    before any noise is drawn (the refusal names the value and, like every error about
    the answers, is padded to the deadline: see "Errors" in :mod:`dpkit.timing`). A
    simulation that publishes nothing can skip the wait inside :func:`dpkit.timing.unpadded`.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> above_threshold_runs([0, 0, 50, 0], 25, 1.0, runs=5, rng=seeded(0)).tolist()
    [2, 2, 2, 2, 2]
    """
    return run_padded(RUNS_COST, _above_threshold_runs_work, answers, threshold, epsilon, runs,
                      rng)


def _above_threshold_runs_work(clock: Deadline, answers: Any, threshold: Any, epsilon: Any,
                               runs: Any, rng: Any) -> np.ndarray:
    """The work of :func:`above_threshold_runs`, inside its deadline."""
    runs = check_integer(runs, "runs", minimum=1, maximum=MAX_RUNS)
    run_epsilon = exact_epsilon(epsilon)
    if isinstance(answers, np.ma.MaskedArray):  # its type is public; its mask is not
        refuse_masked(answers, "answers")  # iterating would hand out the masked raw values
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Iterable):
        raise TypeError(f"answers must be an iterable of real numbers, got {describe(answers)}")
    items = list(answers)
    check_nonempty(len(items), "answers", answers)
    exact_threshold = as_fraction(threshold, "threshold")
    source = resolve(rng)
    run_scale = 1 / run_epsilon
    bits = grid_bits(2 * run_scale)
    limit = round_to_grid(exact_threshold, bits)
    if abs(limit) >= FAST_UNITS or 4 * run_scale * 2**bits >= FAST_SCALE_UNITS:
        raise ValueError(
            f"above_threshold_runs needs |threshold| < {FAST_UNITS} grid units of 2**-{bits} "
            f"and epsilon >= 2**-48 (its fixed-width path), got threshold={describe(threshold)}, "
            f"epsilon={describe(epsilon)}; call above_threshold once per run instead")
    # Public inputs validated. Every run may read every answer, plus two values' worth per
    # run (its threshold and bookkeeping); each answer is converted as a Python object.
    # From here on (the answers are looked at), an error is padded too.
    clock.size(runs * (len(items) + 2))
    clock.add("objects", len(items))
    clock.add_work(RUN_WORK * runs)
    refuse_masked(items, "answers")  # masked entries (data): refused after the size
    exact = [as_fraction(a, f"answers[{i}]") for i, a in enumerate(items)]
    units = [round_to_grid(a, bits) for a in exact]
    too_large = [i for i, u in enumerate(units) if abs(u) >= FAST_UNITS]
    if too_large:
        i = too_large[0]
        raise ValueError(
            f"answers[{i}] = {describe(items[i])} is too large for above_threshold_runs: answers "
            f"must lie within ±2**61 grid units of 2**-{bits} (±{FAST_UNITS / 2**bits:.4g}); "
            "call above_threshold once per run instead")
    return first_passes(units, limit, run_scale * 2**bits, runs, source, bound=FAST_UNITS - 1)


def release_on_grid(units: int, sensitivity_units: int, epsilon: Fraction, k: int,
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


def nearest_float(value: Fraction) -> float:
    """The float nearest to ``value`` (``int / int`` is correctly rounded), or ``±inf``
    where IEEE 754 rounding overflows, as it does for a float operation; never an error,
    so that no error depends on the noise in ``value``."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def warm_up_answers(value: Any) -> list[Any]:
    """A warm-up value (:func:`dpkit.timing.warm_up_with`) as a list of answers or rows: a
    list as it is, an array's elements (NumPy scalars), a scalar alone."""
    if isinstance(value, np.ndarray):
        return list(value.ravel())
    return value if isinstance(value, list) else [value]


def warm_up_queries(value: Any) -> list[Query]:
    """Queries answering the warm-up ``value``'s answers (:func:`warm_up_answers`)."""
    return [lambda data, answer=answer: answer for answer in warm_up_answers(value)]


warm_up_calls(_above_threshold_work, above_threshold, None, 0.3, 1.0,
              prepare=warm_up_queries)
warm_up_calls(_sparse_work, sparse, None, 0.3, 1.0, 2, prepare=warm_up_queries)
warm_up_calls(_above_threshold_runs_work, above_threshold_runs, 0.3, 1.0, runs=3,
              prepare=warm_up_answers)
