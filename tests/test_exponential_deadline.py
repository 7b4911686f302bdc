"""The fast base-2 exponential mechanism's deadline covers its common path (issue 18).

Its deadline grew with the exact fallback's precision, ``n·⌈(Y·(n - 1) + bitlen n)/16384⌉``
for scores spanning ``[0, n - 1]`` (about ``n²``: 95 s at a million outcomes). It now covers
levels 0 and 1 of :func:`dpkit._samplers.base2.fast_sample` (linear in ``n``), and the rare
draws that reach the MPFR levels run past it and are counted as overruns, with probability
at most :func:`dpkit._samplers.fixed_point.fallback_bound`. No test here measures time.

Statistical test: ``test_fallback_bound_holds_at_a_coarse_scale`` fails a correct level 1
with probability ≤ 1e-6 per case (a binomial quantile), ``test_release_never_falls_back``
with probability ≤ its ``N × fallback_bound(n)`` < 1e-9; 3 cases and 1: ≤ 4e-6 in all.
"""

from __future__ import annotations

import itertools
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpkit.timing as timing
from dpkit import _warming, exponential
from dpkit._samplers import base2
from dpkit._samplers.fixed_point import (
    SCALE,
    V_BITS,
    fallback_bound,
    fixed_point_level,
    fixed_point_table,
)
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.rng import seeded

ETA = Eta.from_epsilon(1.0)


class _Sized(Exception):
    """Raised by the recording ``Deadline.size``: stops a release before its work."""


def _declared_size(monkeypatch: pytest.MonkeyPatch, n: int, eta: Eta = ETA) -> int:
    """The public size a release of scores ``0 … n - 1`` (bounds ``[0, n - 1]``) declares
    to its deadline, read without doing the release's work or waiting for it."""
    base2_exponential_mechanism(np.zeros(2), eta, utility_min=0, utility_max=1)  # warm-up
    sizes: list[int] = []

    def record(self: timing.Deadline, size: int, kind: str = "array") -> None:
        sizes.append(size)
        raise _Sized               # before the size is set: the release does not wait

    monkeypatch.setattr(_warming, "REWARM_AFTER_NS", 2**62)        # no re-warm releases
    monkeypatch.setattr(_warming, "LIGHT_REWARM_AFTER_NS", 2**62)
    monkeypatch.setattr(timing.Deadline, "size", record)
    with pytest.raises(_Sized):
        base2_exponential_mechanism(np.arange(n, dtype=float), eta, utility_min=0,
                                    utility_max=n - 1)
    monkeypatch.undo()
    return sizes[-1]


def test_deadline_grows_linearly_with_the_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = {n: _declared_size(monkeypatch, n) for n in (10**4, 10**5, 10**6)}
    assert sizes == {10**4: 10**4, 10**5: 10**5, 10**6: 10**6}    # on main: n·⌈bits/16384⌉
    seconds = {n: exponential.COSTS["fast"].seconds(size) for n, size in sizes.items()}
    assert seconds[10**6] - seconds[10**5] == pytest.approx(
        10 * (seconds[10**5] - seconds[10**4]))                      # affine in n


def test_the_exact_deadline_stays_where_the_bound_is_not_met(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A base too close to 1 for level 1's table (η ≈ 0.0007): the deadline still covers
    # the exact fallback, n·⌈bits/16384⌉.
    eta = Eta.from_epsilon(0.001)
    n = 1000
    bits = exponential.compute_precision(0, n - 1, n, eta)
    assert base2.power_tables(*eta.reduced(), n - 1).fixed is None
    assert _declared_size(monkeypatch, n, eta) == n * -(-bits // 16_384) > n
    # And a number of outcomes whose bound exceeds 2**-40 (about 10**8) keeps it too.
    tables = base2.power_tables(*ETA.reduced(), 10)
    assert exponential._common_path(tables, 10**7)
    assert fallback_bound(2 * 10**8) > exponential.MAX_OVERRUN_PROBABILITY
    assert not exponential._common_path(tables, 2 * 10**8)


def test_fallback_bound_values() -> None:
    assert fallback_bound(1) == 0.0
    exact = Fraction(999) * (Fraction(2, 2**V_BITS) + Fraction(8001, 2**SCALE))
    assert Fraction(fallback_bound(1000)) >= exact                  # rounded up
    assert fallback_bound(10**6) < 2.0**-52 and fallback_bound(10**7) < 2.0**-46
    assert fallback_bound(10**8) < 2.0**-39


def test_fixed_point_table_brackets_every_power() -> None:
    x, y = ETA.reduced()
    table = fixed_point_table(x, y)
    entries = [(int(a) << 64) + (int(b) << 32) + int(c) for a, b, c in zip(*table, strict=True)]
    assert entries[0] == 2**SCALE and entries[-1] == 0
    for k, entry in enumerate(entries):
        scaled = Fraction(x**k << SCALE, 2 ** (y * k))
        assert entry <= scaled < entry + 2
    assert Fraction(x**len(entries) << SCALE, 2 ** (y * len(entries))) < 2   # clipped ones


def _outcomes(cumulative: list[int], point: int, bits: int) -> tuple[int, int]:
    """The outcomes ``#{j ≤ n - 2 : C_j ≤ V·T}`` at both ends of ``V``'s interval, exactly."""
    total, inner = cumulative[-1], cumulative[:-1]
    low = sum(1 for c in inner if c << bits <= point * total)
    high = sum(1 for c in inner if c << bits < (point + 1) * total)
    return low, high


@pytest.mark.parametrize("kind", ["uniform", "geometric", "random"])
def test_fallback_bound_holds_at_a_coarse_scale(kind: str) -> None:
    """At a 20-bit scale the bound is large enough to test: level 1's brackets always hold
    the exact outcome, and it leaves no more draws undecided than the bound allows."""
    x, y, scale, bits, n, draws = 3, 2, 20, 64, 200, 3000
    k = {"uniform": np.zeros(n, dtype=np.int64),
         "geometric": np.arange(n, dtype=np.int64) % 24,
         "random": np.random.default_rng(5).integers(0, 30, n)}[kind]
    k[0] = 0
    table = fixed_point_table(x, y, scale)
    largest = int(k.max())
    cumulative = list(itertools.accumulate(x ** int(v) << y * (largest - int(v)) for v in k))
    bound = fallback_bound(n, bits=bits, scale=scale)
    assert 0.01 < bound < 0.5
    undecided = 0
    for point in np.random.default_rng(6).integers(0, 2**63, draws, dtype=np.int64):
        point = int(point) << 1 | 1
        first, last = fixed_point_level(k, table, point, bits, 0, n - 1)
        low, high = _outcomes(cumulative, point, bits)
        assert first <= low and high <= last
        undecided += first != last
    assert undecided <= stats.binom.isf(1e-6, draws, bound)


def test_release_never_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 0 forced to decide nothing: level 1 decides every draw, so no release reaches
    the MPFR levels (on main every one did). Fails a correct sampler with probability
    ≤ draws × fallback_bound(n)."""
    n, draws = 10**3, 300
    u = np.zeros(n)
    base2_exponential_mechanism(u, ETA, utility_min=0, utility_max=8)   # warmed up first
    calls = []
    real = base2._mp_level
    monkeypatch.setattr(base2, "_float_level", lambda k, *args: (0, k.size - 1))
    monkeypatch.setattr(base2, "_mp_level", lambda *args: calls.append(1) or real(*args))
    rng = seeded(11)
    with timing.unpadded():
        chosen = [base2_exponential_mechanism(u, ETA, utility_min=0, utility_max=8, rng=rng)
                  for _ in range(draws)]
    assert draws * fallback_bound(n) < 1e-9
    assert calls == [] and len(set(chosen)) > draws // 2


def test_a_fallback_overruns_and_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A draw that reaches the MPFR levels (forced, and made to take three times the common
    path's deadline, about 30 ms at 10**5 outcomes: on main, whose deadline covered the
    exact fallback, 0.93 s) runs past the deadline, and ``overruns()`` counts it."""
    n = 10**5
    u = np.arange(n, dtype=float)
    base2_exponential_mechanism(u[:8], ETA, utility_min=0, utility_max=n - 1)   # warm
    fallback = 3 * exponential.COSTS["fast"].seconds(n)   # the common path's, three times

    def slow_fallback(k, base, precision, point, bits, first, last):
        time.sleep(fallback)
        return first, first

    monkeypatch.setattr(base2, "_float_level", lambda k, *args: (0, k.size - 1))
    monkeypatch.setattr(base2, "fixed_point_level", lambda k, table, point, bits, first,
                        last: (first, last), raising=False)     # main has no level 1
    monkeypatch.setattr(base2, "_mp_level", slow_fallback)
    before = timing.overruns()
    chosen = base2_exponential_mechanism(u, ETA, utility_min=0, utility_max=n - 1,
                                         rng=seeded(3))
    assert chosen == 0
    assert timing.overruns() == before + 1
