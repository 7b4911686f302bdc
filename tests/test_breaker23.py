"""Breaker review 23: the release's work must not depend on the data or the noise.

Each test runs two releases, unpadded, that differ only in the data (neighbouring inputs)
or only in the noise drawn (two seeds), and compares the Python calls they run
(:func:`sys.setprofile`: function and C-function calls, in order). Equal call sequences
are structural evidence, untouched by the machine's load, that the work is the same; a
difference is a code path chosen by the data or the noise, which padding hides only as
long as the release meets its deadline. Deterministic: fixed seeds, no timing.

* Off the float path (the Laplace noise's reach beyond ``2**53`` grid units: ``n`` values
  at ``ε`` below ``n·8.3e-8`` to ``n·1.7e-7``, e.g. ``10**5`` values at ``ε = 0.01``), the
  grid arithmetic adds in ``int64`` when every operand is below ``2**61`` grid units and on
  Python ints otherwise (:func:`dpkit._samplers.grid.add_units`): one coordinate either
  side of ``2**61`` units chooses. Measured (review 23, interleaved, Clopper–Pearson at
  ``1 − 1e-6``, load 12–21 on 2 cores): ``10**5`` values at ``ε = 0.01``, padded, 600
  calls a side: medians 40.7 ms against 139.2 ms, 681 of the 1200 calls past their
  deadline, held-out accuracy 0.997, certified ε ≥ 2.94 (promised 0.01; 200 calls a
  side at load 21: ε ≥ 1.78); ``10**4`` values at ``ε = 1e-3``, padded,
  400 a side: 12.9 ms against 27.8 ms, certified ε ≥ 0.48 (promised 0.001); ``1000``
  values at ``ε = 1e-5``, unpadded, 1500 a side: 501 µs against 785 µs, certified
  ε ≥ 2.98.
* At noise scales beyond ``2**61`` grid units (a scalar Laplace release at ``ε`` of about
  ``1e-12``), the fixed-cost sampler returns an ``int64`` array when every value drawn
  fits in 62 bits and an ``object`` array otherwise
  (:func:`dpkit._samplers.fixed_cost.fixed_result`, :func:`dpkit._samplers.exact.
  as_int_array`): the drawn noise chooses the path of the rest of the release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tracing import calls_of  # tests/ is on sys.path under pytest

import dpkit._warming
from dpkit._samplers.noise import discrete_laplace
from dpkit.laplace import laplace_grid, laplace_mechanism, sample_releases
from dpkit.rng import seeded


@pytest.fixture(autouse=True)
def _no_rewarm(monkeypatch: pytest.MonkeyPatch) -> None:
    """No re-warm between the two traced releases (it runs after a pause, not by the data)."""
    monkeypatch.setattr(dpkit._warming, "REWARM_AFTER_NS", 2**62)
    monkeypatch.setattr(dpkit._warming, "LIGHT_REWARM_AFTER_NS", 2**62)


def neighbours_either_side_of_2_61_units(n: int, epsilon: float, bits: int = 61
                                         ) -> tuple[np.ndarray, np.ndarray]:
    """Zeros but one coordinate, ``2**bits`` grid units minus or plus half the sensitivity 1."""
    edge = 2.0 ** (bits + laplace_grid(1.0, epsilon, n).exponent)
    x, y = np.zeros(n), np.zeros(n)
    x[0], y[0] = edge - 0.5, edge + 0.5
    assert np.abs(x - y).sum() == 1.0          # neighbours for the ℓ1 sensitivity 1
    return x, y


@pytest.mark.parametrize("bits", [61, 62])
def test_laplace_off_the_float_path_runs_the_same_calls_either_side_of_2_61_units(
        bits: int) -> None:
    """1000 values at ε = 1e-5 (the noise's reach is beyond ``2**53`` grid units): the
    neighbour above ``2**61`` units adds on Python ints, the one below in ``int64``
    (:func:`add_units`); above ``2**62`` units every value is rounded to the grid one by
    one in Python, below it in one vectorised pass (:func:`to_grid`), and the sum is an
    ``object`` or an ``int64`` array (:func:`from_grid`)."""
    n, epsilon = 1000, 1e-5
    x, y = neighbours_either_side_of_2_61_units(n, epsilon, bits)
    for value in (x, y):                        # tables and first calls out of the way
        laplace_mechanism(value, 1.0, epsilon, rng=seeded(1))
    calls_x, released_x = calls_of(lambda: laplace_mechanism(x, 1.0, epsilon, rng=seeded(2)))
    calls_y, released_y = calls_of(lambda: laplace_mechanism(y, 1.0, epsilon, rng=seeded(2)))
    if not isinstance(released_x, ValueError):
        assert released_x.shape == released_y.shape == (n,)
    extra = [name for name in calls_y if name not in calls_x]
    assert calls_x == calls_y, (f"{len(calls_x)} calls below 2**{bits} units, {len(calls_y)} "
                                f"above; only above: {sorted(set(extra))[:8]}")


def test_sample_releases_runs_the_same_calls_either_side_of_2_61_units() -> None:
    """``sample_releases`` never takes the float path above 64 releases: its one value at
    ``2**61`` grid units plus or minus 1/2 makes :func:`add_units` add the ``n`` noises in
    ``int64`` or on Python ints, at any ε (measured: 1000 releases at ε = 1e-4, promised
    ``n·ε = 0.1``, unpadded, 300 calls a side, load 17: 478 µs against 851 µs, certified
    ε ≥ 1.39; ``10**5`` releases at ε = 1e-6, promised 0.1, padded, 100 calls a side,
    load 11: 41.4 ms against 168.8 ms, 112 of the 200 calls past their deadline,
    certified ε ≥ 1.03)."""
    n, epsilon = 1000, 1e-4
    edge = 2.0 ** (61 + laplace_grid(1.0, epsilon).exponent)
    x, y = edge - 0.5, edge + 0.5
    for value in (x, y):
        sample_releases(value, 1.0, epsilon, n, rng=seeded(1))
    calls_x, _ = calls_of(lambda: sample_releases(x, 1.0, epsilon, n, rng=seeded(2)))
    calls_y, _ = calls_of(lambda: sample_releases(y, 1.0, epsilon, n, rng=seeded(2)))
    assert calls_x == calls_y, f"{len(calls_x)} calls below 2**61 units, {len(calls_y)} above"


def seeds_by_noise_size(scale: Any, count: int = 400) -> tuple[int, int]:
    """A seed whose scalar draw fits in 62 bits and one whose draw does not."""
    small = large = None
    for seed in range(count):
        noise = abs(int(discrete_laplace(scale, seeded(seed), size=1)[0]))
        if noise < 2**62 and small is None:
            small = seed
        if noise >= 2**62 and large is None:
            large = seed
    assert small is not None and large is not None, "no draw either side of 2**62"
    return small, large


def test_scalar_laplace_at_a_huge_noise_scale_runs_the_same_calls_whatever_the_noise() -> None:
    """ε = 1e-12: the noise scale is about ``2**60`` grid units, and about 1% of the draws
    exceed ``2**62``; those turn the noise into an ``object`` array, the others stay
    ``int64``, and the release runs other calls."""
    epsilon = 1e-12
    small, large = seeds_by_noise_size(laplace_grid(1.0, epsilon).scale_units)
    laplace_mechanism(0.5, 1.0, epsilon, rng=seeded(small))
    laplace_mechanism(0.5, 1.0, epsilon, rng=seeded(large))
    calls_small, _ = calls_of(lambda: laplace_mechanism(0.5, 1.0, epsilon, rng=seeded(small)))
    calls_large, _ = calls_of(lambda: laplace_mechanism(0.5, 1.0, epsilon, rng=seeded(large)))
    assert calls_small == calls_large, (
        f"noise below 2**62 units: {len(calls_small)} calls, beyond: {len(calls_large)}")


def test_the_call_comparison_passes_where_the_path_is_the_same() -> None:
    """Controls: the same neighbours at ε = 1 (the float path, masks and no switch) and
    two seeds at ε = 1e-6 (noise far below ``2**62`` units) run the same calls, so the
    comparisons above fail for the switch they name, not for the tracing."""
    x, y = neighbours_either_side_of_2_61_units(1000, 1.0)
    for value in (x, y):
        laplace_mechanism(value, 1.0, 1.0, rng=seeded(1))
    assert calls_of(lambda: laplace_mechanism(x, 1.0, 1.0, rng=seeded(2)))[0] == \
        calls_of(lambda: laplace_mechanism(y, 1.0, 1.0, rng=seeded(2)))[0]
    laplace_mechanism(0.5, 1.0, 1e-6, rng=seeded(3))
    assert calls_of(lambda: laplace_mechanism(0.5, 1.0, 1e-6, rng=seeded(3)))[0] == \
        calls_of(lambda: laplace_mechanism(0.5, 1.0, 1e-6, rng=seeded(4)))[0]
