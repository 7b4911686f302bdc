"""Breaker review 36: the timing of three changes of one morning, attacked with fresh eyes.

``99a5f55`` (vector deadlines from the set-up, not the values), ``8b736e6`` (every SVT step
charged the extra work of its draws at far noise scales) and ``bd635d3`` (the envelope's one
round of proposals). No leak certified (``benchmarks/timing.py``'s ``certify``, padded,
margin 2: every pair ε 0); the reviewer's report has the numbers and commands.

F1 (fixed in a5b98e1, ``per_vector_value`` back to 110; low: overruns, no leak certified).
``99a5f55`` cut the deadline of requests above
about 1,060 values (``4 U < 60·n·V``), and with it the absolute slack between the work and
the margin-2 deadline that a preemption on a shared core must fit in: at 20,000 values
4.57 ms for about 0.75 ms of work, against 8.50 ms before. Padded, zeros against one
coordinate 1.0, core 0 shared with other helpers (load 1.6-3.1), releases with an overrun:
30 of 28,000 with the new constants, 5 of 28,000 with the old (the same run, interleaved
blocks); at 2,000 values 5 of 12,000 either way, at ``10**5`` 0 of 3,200 either way.
Unpadded at margin 1 the work's 99.9th percentile was 1.46 of the deadline at 2,000 values
(0.76 at 65; 3,000 calls, load 1.5): a preemption, not the work, is what overruns.

What is tested here (shown to fail on the code before ``8b736e6``): every step of
``above_threshold``, ``sparse`` and ``range_queries`` is charged at least the extra work
(:func:`dpkit.laplace.draw_extra_work`) of each noise draw the step actually makes, the
scales recorded at the sampler, not assumed: the threshold's ``2·S``, each query's ``4·S``,
and the new threshold drawn after a positive, in the positive's step.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

import dpkit.svt.core as core
import dpkit.timing as timing
from dpkit.laplace import draw_extra_work
from dpkit.rng import seeded
from dpkit.svt import above_threshold, range_queries, sparse

C = 3
QUERIES = [lambda data, i=i: data[i] for i in range(16)]
ANSWERS = [0.5] * 16   # threshold 0: at the far scales about half the queries are positives

#: One run's ε (ε for ``above_threshold``, ε/c for ``sparse``, ε/(2c) for ``range_queries``)
#: where the draws leave the common scales: ``S = 2**24`` (threshold ``2**25`` grid units,
#: the longer walk), ``2**40``, ``2**53`` (the query's ``2**55`` off the walk) and the
#: smallest accepted, ``2**-64`` (``2**65`` and ``2**66`` units).
RUN_EPSILONS = [Fraction(1, 2**24), Fraction(1, 2**40), Fraction(1, 2**53), Fraction(1, 2**64)]

RELEASES: dict[str, Callable[[Fraction], Any]] = {
    "above_threshold": lambda e: above_threshold(QUERIES, ANSWERS, 0.0, e, rng=seeded(36)),
    "sparse": lambda e: sparse(QUERIES, ANSWERS, 0.0, C * e, C, rng=seeded(36)),
    "range_queries": lambda e: range_queries(QUERIES, ANSWERS, C, 0.0, 2 * C * e,
                                             rng=seeded(36)),
}


def _steps(monkeypatch: pytest.MonkeyPatch, release: Callable[[], Any]
           ) -> list[tuple[float, list[Fraction]]]:
    """Each step of ``release`` (and of any warm-up it runs) as ``(extra work charged, in
    U; the scales of the draws the SVT made in it)``, recorded at the step's end instead of
    waiting."""
    steps: list[tuple[float, list[Fraction]]] = []
    drawn: list[Fraction] = []
    real_draw = core._discrete_laplace

    def draw(scale: Fraction, rng: Any) -> int:
        drawn.append(scale)
        return real_draw(scale, rng)

    def end_of_step(clock: timing.Deadline) -> None:
        steps.append((clock._extra, list(drawn)))
        drawn.clear()

    monkeypatch.setattr(core, "_discrete_laplace", draw)
    monkeypatch.setattr(timing.Deadline, "_wait", end_of_step)
    release()
    return steps


@pytest.mark.parametrize("run_epsilon", RUN_EPSILONS,
                         ids=lambda e: f"2**-{e.denominator.bit_length() - 1}")
@pytest.mark.parametrize("name", list(RELEASES))
def test_every_svt_step_is_charged_the_draws_it_makes(monkeypatch: pytest.MonkeyPatch,
                                                      name: str, run_epsilon: Fraction) -> None:
    """The budget of each step covers the far-scale work of the draws made in that step
    (recorded at :func:`dpkit.svt.core._discrete_laplace`), whichever they are: the first
    step's threshold, a query's noise, a positive's new threshold. Deterministic (seeded
    source); fails before ``8b736e6``, where a query step was charged nothing for them."""
    steps = _steps(monkeypatch, lambda: RELEASES[name](run_epsilon))
    short = [(charged, [float(s) for s in scales]) for charged, scales in steps
             if charged + 1e-9 < sum(draw_extra_work(s) for s in scales)]
    assert not short, short
    assert sum(len(scales) for _, scales in steps) > len(steps) / 2  # the draws were seen
    if name != "above_threshold":   # a positive's step drew the next threshold too
        assert any(len(scales) == 2 for _, scales in steps), steps
