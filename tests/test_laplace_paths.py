"""The Laplace releases take one code path chosen from public quantities (issue #18).

Breaker review 23 timed the Laplace mechanism off its float path (the noise's reach beyond
``2**53`` grid units): the grid arithmetic switched between ``int64`` and Python ints at
``2**61`` units and between one vectorised rounding and one per element at ``2**62`` units,
by the values (certified ε ≥ 2.94 against a promised 0.01). The fix: :func:`laplace_grid`
coarsens the grid so that float64 arrays stay on the float path, what is still off it runs
on Python ints whatever the values (with the deadline of Python objects), and
:func:`sample_releases` releases its ``n`` copies by the same steps. Here, for each public
path, two neighbouring inputs (or two seeds) either side of every internal edge must run
the same Python and C calls (:func:`test_breaker23.calls_of`, :func:`sys.setprofile`):
structural evidence, untouched by the machine's load. Deterministic: fixed seeds, no timing.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from tracing import calls_of  # tests/ is on sys.path under pytest

import dpkit._warming
import dpkit.timing
from dpkit._samplers.noise import discrete_laplace
from dpkit.laplace import (
    COARSE_BITS,
    RANGE_SCALES,
    laplace_grid,
    laplace_mechanism,
    sample_releases,
)
from dpkit.rng import seeded

#: Edges in grid units where the arithmetic used to switch: ``2**53`` (a float's integers),
#: ``2**61`` (``add_units``'s int64 bound), ``2**62`` (``to_grid``'s).
EDGES = (53, 61, 62)


@pytest.fixture(autouse=True)
def _no_rewarm(monkeypatch: pytest.MonkeyPatch) -> None:
    """No re-warm between two traced releases (it runs after a pause, not by the data)."""
    monkeypatch.setattr(dpkit._warming, "REWARM_AFTER_NS", 2**62)
    monkeypatch.setattr(dpkit._warming, "LIGHT_REWARM_AFTER_NS", 2**62)


def reach_units(n: int, epsilon: float) -> Fraction:
    """How far the noise may go, in grid units: ``RANGE_SCALES`` noise scales."""
    return RANGE_SCALES * laplace_grid(1.0, epsilon, n).scale_units


def neighbours(n: int, epsilon: float, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Zeros but one coordinate, ``2**bits`` grid units minus or plus 1/2 (Δ = 1 apart)."""
    edge = 2.0 ** (bits + laplace_grid(1.0, epsilon, n).exponent)
    x, y = np.zeros(n), np.zeros(n)
    x[0], y[0] = edge - 0.5, edge + 0.5
    assert np.abs(x - y).sum() == 1.0
    return x, y


def same_calls(release: Any, first: Any, second: Any) -> None:
    """``release(first)`` and ``release(second)`` (after one warming call each) run the same
    calls and return arrays of one shape."""
    for value in (first, second):
        release(value, seeded(1))
    calls_a, out_a = calls_of(lambda: release(first, seeded(2)))
    calls_b, out_b = calls_of(lambda: release(second, seeded(2)))
    assert not isinstance(out_a, Exception) and not isinstance(out_b, Exception)
    assert out_a.shape == out_b.shape
    extra = sorted({name for name in calls_b if name not in calls_a})[:8]
    assert calls_a == calls_b, f"{len(calls_a)} calls against {len(calls_b)}; only in one: {extra}"


# ------------------------------------------------------------------- the grid's choice

@pytest.mark.parametrize(("n", "epsilon"), [(1000, 1e-5), (10**4, 1e-3), (10**5, 0.01),
                                            (10**5, 2e-5), (1, 1e-10)])
def test_the_grid_keeps_the_noise_within_2_53_units_where_the_breaker_left_the_float_path(
        n: int, epsilon: float) -> None:
    """The breaker's parameters (on main the noise reached beyond ``2**53`` grid units):
    the grid is coarsened, by a widening of at most ``2**-COARSE_BITS``."""
    grid = laplace_grid(1.0, epsilon, n)
    assert reach_units(n, epsilon) < 2**53
    assert n * Fraction(2) ** grid.exponent <= Fraction(1, 2**COARSE_BITS)
    assert grid.scale <= (1 + 2.0**-COARSE_BITS) / epsilon


def test_the_thresholds_the_docstrings_state() -> None:
    """``laplace_grid``'s and ``sample_releases``'s numbers: 10**5 coordinates are coarsened
    below ε = 0.0114 and not above it; one value leaves the float path below ε = 8.5e-11;
    no grid is coarsened at ``d/ε <= 5.7e6`` and none leaves the float path at
    ``d/ε <= 5.9e9``."""
    fine = laplace_grid(1.0, 1.0, 10**5).exponent
    assert laplace_grid(1.0, 0.01145, 10**5).exponent == fine
    assert laplace_grid(1.0, 0.01144, 10**5).exponent > fine
    assert reach_units(1, 8.54e-11) < 2**53 <= reach_units(1, 8.53e-11)
    for n in (1, 3, 65, 1000, 12345, 10**5, 10**6, 10**7):
        for ratio in (5.7e6, 5.9e9):
            epsilon = n / ratio
            coarsened = laplace_grid(1.0, epsilon, n).exponent > laplace_grid(1.0, 1.0, n).exponent
            assert reach_units(n, epsilon) < 2**53
            if ratio == 5.7e6:
                assert not coarsened


def test_the_chapter_derives_the_thresholds_from_the_grid_rule() -> None:
    """The Laplace chapter's derivation: the rule ``d·g <= 2**-20·Δ`` gives ``Δ_g < (2**21 +
    1)·d``, so the reach ``750·Δ_g/ε`` passes ``2**53`` only above ``d/ε = 2**53/(750·(2**21 +
    1)) ≈ 5.7e6``; on the coarsest grid (``2**-10``) ``Δ_g < (2**11 + 1)·d``, hence ``≈ 5.9e9``;
    where exactly depends on Δ (at ``10**5`` coordinates: 0.0114 at Δ = 1, above it at Δ = 3,
    below it at Δ = 100)."""
    assert (RANGE_SCALES, COARSE_BITS) == (750, 10)
    first = Fraction(2**53, RANGE_SCALES * (2**21 + 1))
    coarsest = Fraction(2**53, RANGE_SCALES * (2**(COARSE_BITS + 1) + 1))
    assert (f"{float(first):.1e}", f"{float(coarsest):.1e}") == ("5.7e+06", "5.9e+09")
    for delta in (0.75, 1.0, 3.0, 91.0, 100.0, 2.0**30 - 1):
        for n in (1, 5, 10**5):
            grid = laplace_grid(delta, 1.0, n)
            assert grid.sensitivity_units < (2**21 + 1) * n
            below = laplace_grid(delta, float(n / (first * (1 + Fraction(1, 10**9)))), n)
            assert below.exponent == grid.exponent
    fine = {delta: laplace_grid(delta, 1.0, 10**5).exponent for delta in (3.0, 100.0)}
    assert laplace_grid(3.0, 0.0171, 10**5).exponent > fine[3.0]
    assert laplace_grid(100.0, 0.0114, 10**5).exponent == fine[100.0]
    assert laplace_grid(100.0, 0.0089, 10**5).exponent > fine[100.0]


# ------------------------------------------------------------------ laplace_mechanism

@pytest.mark.parametrize(("n", "epsilon"), [(10**4, 1e-3), (1000, 1e-8)],
                         ids=["coarsened-float-path", "off-the-float-path"])
def test_laplace_neighbours_either_side_of_every_edge_run_the_same_calls(
        n: int, epsilon: float) -> None:
    """10**4 values at ε = 1e-3 (on main off the float path, now on it by a coarser grid) and
    1000 values at ε = 1e-8 (off it even on the coarsest grid: Python ints, always): one
    coordinate either side of ``2**53``, ``2**61`` and ``2**62`` grid units."""
    for bits in EDGES:
        x, y = neighbours(n, epsilon, bits)
        same_calls(lambda v, rng: laplace_mechanism(v, 1.0, epsilon, rng=rng), x, y)


def test_the_deadline_covers_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A float64 array gets the deadline of an array on the float path and that of Python
    objects off it (Python ints, whatever the values), from Δ, ε and d alone; every value
    of :func:`sample_releases` that of objects, whatever its type (breaker review 32)."""
    kinds: list[tuple[int, str]] = []
    size = dpkit.timing.Deadline.size

    def record(self: dpkit.timing.Deadline, n: int, kind: str = "array") -> None:
        if n == 1000:                       # not the first use's warm-up releases
            kinds.append((n, kind))
        size(self, n, kind)

    monkeypatch.setattr(dpkit.timing.Deadline, "size", record)
    with dpkit.timing.unpadded():
        laplace_mechanism(np.zeros(1000), 1.0, 1e-5, rng=seeded(0))    # coarsened: floats
        laplace_mechanism(np.zeros(1000), 1.0, 1e-8, rng=seeded(0))    # off the float path
        sample_releases(0.5, 1.0, 1.0, 1000, rng=seeded(0))            # a float: objects too
        sample_releases(0.5, 1.0, 1e-11, 1000, rng=seeded(0))           # off the float path
        sample_releases(1, 1.0, 1.0, 1000, rng=seeded(0))               # an int: exact
    assert kinds == [(1000, "array"), (1000, "objects"), (1000, "objects"), (1000, "objects"),
                     (1000, "objects")]


# -------------------------------------------------------------------- sample_releases

@pytest.mark.parametrize("epsilon", [1e-4, 1e-11], ids=["float-path", "off-the-float-path"])
def test_sample_releases_either_side_of_2_61_units_run_the_same_calls(epsilon: float) -> None:
    """One value either side of ``2**53``, ``2**61`` and ``2**62`` grid units, 1000 releases:
    at ε = 1e-4 (the float path) and ε = 1e-11 (off it: Python ints, whatever the value)."""
    exponent = laplace_grid(1.0, epsilon).exponent
    for bits in EDGES:
        edge = 2.0 ** (bits + exponent)
        same_calls(lambda v, rng: sample_releases(v, 1.0, epsilon, 1000, rng=rng),
                   edge - 0.5, edge + 0.5)


def test_sample_releases_is_laplace_mechanism_on_copies() -> None:
    """Bit for bit the release of ``n`` copies by :func:`laplace_mechanism` at the grid of
    one value (the same noise: the same seed), on and off the float path."""
    for value, epsilon in ((0.1, 0.5), (2.0**40 + 0.5, 1e-6), (3.0, 1e-11)):
        grid = laplace_grid(1.0, epsilon)
        released = sample_releases(value, 1.0, epsilon, 100, rng=seeded(4))
        noise = discrete_laplace(grid.scale_units, seeded(4), size=100)
        exact = [float((Fraction(round(Fraction(value) / 2**grid.exponent)) + int(z))
                       * Fraction(2) ** grid.exponent) for z in noise]
        assert released.tolist() == exact


# ------------------------------------------------------------- the noise array's type

def test_the_noise_array_type_follows_the_scale_not_the_draws() -> None:
    """At a scale whose digit plan exceeds 61 digits (``2**60`` units) the noise is an
    ``object`` array for every seed, also when every value drawn fits in ``int64`` (on main
    the type followed the values); below it, ``int64``."""
    for seed in range(20):
        assert discrete_laplace(Fraction(2**60), seeded(seed), size=3).dtype == object
        assert discrete_laplace(Fraction(2**40), seeded(seed), size=3).dtype == np.int64
