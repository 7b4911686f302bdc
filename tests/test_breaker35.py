"""Breaker review 35: the one-round block envelope and ``range_queries``' per-answer extra
deadline (commit ``bd635d3``), attacked for exactness, the ``2**-64`` claim and timing.

F1 (open, low: no privacy loss). Issue 18 removed from the block envelope a number of
rejection rounds set by the noise; the fixed-cost discrete Gaussian that draws 2 to 64
values (:func:`dpkit._samplers.fixed_cost.fixed_discrete_gaussian`, so every
``gaussian_mechanism`` release of 2 to 64 values) still proposes ``n + 1 + n // 2``
candidates a round and runs rounds until ``n`` are accepted: at the mechanism's ``σ`` a
second round in 4.6% of the releases of 2 values and 6.5% of 10 (20,000 each, secure
source), each adding about 40 µs (2 values: 90 µs median with one round, 129 µs with two)
and 56 µs (10 values: 117 and 173 µs), unpadded, load 1.5 on core 0. Padded (margin 2),
2,000 calls a side of zeros against one coordinate 1.0 at 2 and 64 values: no overrun,
certified ε 0. The number of rounds is independent of the values returned and of the data, so the
guarantee holds; but the running time depends on the noise (the rejected proposals), which
the design says it does not, and which issue 18's change was made to remove.

F2 (fixed on this branch, medium-low: overruns). ``range_queries`` charged each answer it
released the extra work of a draw at its noise scale (F3 of review 33), not its other
steps: the first
(the threshold's draw) and one per query evaluated, each of ``COST.fixed`` (6 U) whatever
the scale, in which the query's noise (scale ``4·run_scale`` grid units) and, after a
positive, a new threshold's (``2·run_scale``) are drawn. The comparison grid does not keep
those scales near ``2**20``: recorded, they are ``2**20``-``2**21`` units at ε = 1 but
``2**65``-``2**66`` at the smallest ε (``2c·2**-64``), off the walk (two geometrics, which
:func:`dpkit.laplace.draw_extra_work` charges 5.1 U a draw). Measured, core 0, secure
source, 30 answers ``2**1000 - 1``, threshold 0, ``c = 30`` (every query a positive):
unpadded, margin 1, 200 releases (load 1.4-1.5), the query steps' work was 0.34 of their
budget at the median at ε = 1 (p99 0.51, 1-2 of 5,800 steps over) and 0.55 at the
smallest ε (p99 0.88-0.98, 26-46 of 5,800 over); padded, margin 2, alone on core 0 (load
1.5-1.8), releases with an overrun: 1 of 1,952 at ε = 1, 49 of 1,446 (ints) and 108 of
1,442 (floats 1e300 against a Fraction) at the smallest ε. ``above_threshold`` and
``sparse`` share the steps: their first step's work at the smallest ε reached 0.99-1.03 of
its margin-1 budget at the 99.9th percentile (0.65-0.75 at ε = 1). No neighbouring pair
certified ε > 0 (``benchmarks/timing.py``'s ``certify``, Clopper-Pearson at 1 - 1e-6), but
the overrun probability is what the timing guarantee's δ is made of ("Overruns" in
:mod:`dpkit.timing`). Now every step is charged the extra work of its draws
(:func:`dpkit.svt.core.step_extra_work`: nothing at ε = 1, 5.1 U a draw at the smallest ε),
in ``above_threshold`` and ``sparse`` too. After (same commands): padded, releases with an
overrun at the smallest ε 9 of 788 (ints) and 0 of 794 (floats), 11 of 1,916 at ε = 1 (load
1.6-1.9: the ε = 1 release is unchanged), each release at the smallest ε now taking 37.7 ms
instead of 21.6; unpadded, margin 1 (U = 46.9 µs, load 1.9), the query steps at the smallest
ε 0.12 of their budget at the median, p99 0.21-0.29, 2-3 of 5,800 over.

What held is tested here too (each test shown to fail on a deliberately broken version):
``SPARE_RATE`` bounds the exact rejection probability of every envelope at the block-width
switches, and ``Envelope.sample`` keeps the first ``n`` accepted proposals in order.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpkit._samplers.fixed_cost as fixed_cost
import dpkit.timing as timing
from dpkit._samplers import envelope as _envelope
from dpkit.gaussian import gaussian_mechanism
from dpkit.rng import seeded
from dpkit.svt import range_queries


def _rejection(kind: str, parameter: Fraction) -> float:
    """The probability that one proposal of ``Envelope(kind, parameter)`` is rejected:
    ``1 - Z/W``, ``W`` the envelope's total weight (the value 0, the blocks ``2·m·ρ(x*)``,
    the tail ``2·ρ(x_T)/(1 - e**-c)``) and ``Z = Σ ρ(x)`` over the integers, in float64
    (relative error far below the margin to ``SPARE_RATE``)."""
    layout = _envelope._Layout(kind, parameter)
    p = float(parameter)
    xstar = layout.xstar[1:].astype(np.float64)
    if kind == "laplace":
        rho = np.exp(-xstar / p)
        tail = math.exp(-layout.tail_start / p)
        total = (1 + math.exp(-1 / p)) / -math.expm1(-1 / p)
    else:
        rho = np.exp(-xstar * xstar / (2 * p))
        tail = math.exp(-layout.tail_start**2 / (2 * p))
        x = np.arange(1, layout.tail_start + 1, dtype=np.float64)
        total = 1 + 2 * float(np.sum(np.exp(-x * x / (2 * p))))   # the rest is below 2**-64
    weights = 1 + 2 * layout.width * float(np.sum(rho))
    weights += 2 * tail / -math.expm1(-float(layout.tail_rate))
    return 1 - total / weights


#: The scales where a block is widest against the scale (``m = s/16``, ``m = σ/16``), and
#: either side of the first switch, for the Laplace up to the vector sampler's ``2**52`` and
#: the Gaussian up to ``σ = 2**18`` (its sum of ``ρ`` runs over ``10σ`` values).
SWITCHES = ([("laplace", Fraction(16 << k)) for k in range(1, 49)]
            + [("laplace", Fraction(32) - Fraction(1, 3)), ("laplace", Fraction(33))]
            + [("gaussian", Fraction(256 << 2 * k)) for k in range(1, 15)]
            + [("gaussian", Fraction(1023)), ("gaussian", Fraction(1025))])


def test_spare_rate_bounds_the_rejection_at_every_block_width_switch() -> None:
    """(b) held: the exact rejection probability is at most 3.07% (Laplace, ``m = s/16``,
    tending to ``1 - 16·(1 - e**(-1/16)) = 3.06%``) and 2.44% (Gaussian), below
    ``SPARE_RATE = 3.5%`` at every switch of the block width (exact computation with
    200-bit mpmath gave the same maxima up to ``s = 2**52`` and ``σ² = 2**103``). Fails if
    ``SPARE_RATE`` is set to 3%."""
    rates = {(kind, p): _rejection(kind, p) for kind, p in SWITCHES}
    assert max(rates.values()) < _envelope.SPARE_RATE, max(rates.items(), key=lambda r: r[1])
    assert 0.030 < max(r for (kind, _), r in rates.items() if kind == "laplace") < 0.0307


def test_sample_keeps_the_first_n_accepted_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """(a) held: with proposals numbered in the order drawn and every third rejected,
    ``sample`` returns the first ``n`` accepted, in order, across blocks; a short round
    (``spare`` patched to 0) is completed by another. Fails if ``sample`` kept the last
    ``n`` accepted, or refilled in place."""
    env = _envelope.Envelope("laplace", Fraction(1000))
    drawn = [0]

    def numbered(out: np.ndarray, rng: object) -> np.ndarray:
        out[:] = np.arange(drawn[0], drawn[0] + out.size)
        drawn[0] += out.size
        return np.flatnonzero(out % 3 == 2)

    monkeypatch.setattr(env, "_fill", numbered)
    result = env.sample(100, seeded(1), block=7)
    accepted = [v for v in range(drawn[0]) if v % 3 != 2]
    assert result.tolist() == accepted[:100]
    drawn[0] = 0
    monkeypatch.setattr(_envelope, "spare", lambda n: 0)
    result = env.sample(100, seeded(1), block=7)
    assert result.tolist() == [v for v in range(drawn[0]) if v % 3 != 2][:100]


@pytest.mark.xfail(strict=True, reason="open: breaker review 35 F1, the fixed-cost discrete "
                   "Gaussian (2 to 64 values) runs rounds until n are accepted")
def test_gaussian_releases_of_up_to_64_values_make_one_round() -> None:
    """F1: ``gaussian_mechanism`` on 2, 10 and 64 values (ε = 1, δ = 1e-5, Δ = 1: σ about
    ``2**40`` grid units), 300 releases each with a seeded source: the number of proposal
    rounds of the fixed-cost sampler is 1 in every release, as the block envelope's now is
    (counted, not timed). On main, a second round occurs in about 4-7% of the releases of
    2 and 10 values (31 of the 900 here; the count is deterministic with the seed)."""
    rounds: list[int] = []
    proposals = fixed_cost._proposals

    def counting(setup: object, m: int, rng: object) -> object:
        rounds[-1] += 1
        return proposals(setup, m, rng)

    source = seeded(35)
    for n in (2, 10, 64):                       # warm-ups (their draws are not counted)
        gaussian_mechanism(np.zeros(n), 1.0, 1.0, 1e-5, rng=source)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixed_cost, "_proposals", counting)
        for n in (2, 10, 64):
            for _ in range(300):
                rounds.append(0)
                gaussian_mechanism(np.zeros(n), 1.0, 1.0, 1e-5, rng=source)
    assert max(rounds) == 1, {k: rounds.count(k) for k in set(rounds)}


def test_range_queries_query_steps_budget_grows_with_the_noise_scale(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """F2: the budgets of ``range_queries``' steps (recorded, not waited for) at the
    smallest ε it accepts for ``c = 3`` (query and threshold noise scales of ``2**65`` to
    ``2**66`` grid units, drawn off the walk) and at ε = 1 (``2**20`` to ``2**21``): the
    query steps, where the query noise and, after a positive, the threshold noise are
    drawn, must get more budget at the far scales, as the last step (the released answers)
    does."""
    budgets: list[float] = []
    monkeypatch.setattr(timing.Deadline, "_wait", lambda self: budgets.append(self.seconds()))
    c = 3
    queries = [lambda data, i=i: data[i] for i in range(c)]
    steps = {}
    for epsilon in (1.0, 2.0**-64 * 2 * c):
        budgets.clear()
        assert len(range_queries(queries, [2**1000 - 1] * c, c, 0.0, epsilon,
                                 rng=seeded(3))) == c
        # the release's own steps come last (a warm-up's before them): the first (the
        # threshold), one per query, the last query's joined with the release of c answers
        steps[epsilon] = budgets[-c:-1]
    near, far = steps.values()
    assert min(far) > max(near), (near, far)


@pytest.mark.parametrize(("kind", "parameter"),
                         [("laplace", Fraction(32)), ("gaussian", Fraction(1024))])
def test_small_requests_keep_the_law_at_every_position(kind: str, parameter: Fraction) -> None:
    """(a) held: 8,000 requests of 65 values (the smallest the envelope serves) at the
    smallest scale with blocks of width 2 (where ``m/s`` is largest, 1/16): the last
    position alone and all positions pooled pass ``test_envelope._check`` (a chi-square and
    a sign test), and the share of even magnitudes among the nonzero ones -- the second
    value of each block, which only the acceptance step makes rarer than the first -- matches
    the target's (binomial test); each test's false-failure probability is below ``ALPHA =
    1e-7`` (6e-7 per parameter). Fails if the first ``n`` proposals are kept whether
    accepted or not (p-values 1e-28 and 2e-22 then)."""
    from scipy.stats import binomtest
    from test_envelope import ALPHA, _check
    env = _envelope.Envelope(kind, parameter)
    assert env.layout.width == 2
    source = seeded(3500 + int(parameter))
    samples = np.stack([env.sample(65, source) for _ in range(8000)])
    _check(kind, parameter, samples[:, -1])
    _check(kind, parameter, samples.ravel())
    x = np.arange(1, 200 * 32 + 1, dtype=np.float64)     # beyond: below 2**-200 of the mass
    rho = np.exp(-x / 32) if kind == "laplace" else np.exp(-x * x / (2 * 1024))
    even_share = float(np.sum(rho[1::2]) / np.sum(rho))
    magnitudes = np.abs(samples[samples != 0])
    assert binomtest(int(np.sum(magnitudes % 2 == 0)), magnitudes.size,
                     even_share).pvalue > ALPHA
