"""What the safe mechanisms cost besides drawing their noise: input checks and grid arithmetic.

A release of a float64 vector by :func:`dpkit.laplace.laplace_mechanism` (or
:func:`dpkit.gaussian.gaussian_mechanism`) validates the input
(:func:`dpkit._checks.check_finite_array`), rounds it exactly to the grid ``2**k · Z``
(:func:`dpkit._samplers.grid.to_grid`), adds integer noise (:func:`~dpkit._samplers.grid.add_units`)
and converts the exact sums to the nearest floats (:func:`~dpkit._samplers.grid.from_grid`).
The first table times each step on ``10**6`` values; the second the whole mechanism, the
sampler alone (same scale, same secure source) and their difference, the *non-sampling
overhead*; as that difference of two larger times is noisy, the overhead is also timed
directly ("stubbed": the mechanism run with its sampler replaced by a copy of noise drawn
beforehand, minus the time of that copy). Ratios are to NumPy's (unsafe) ``laplace`` and
``normal`` on as many values, measured in the same run. The last line compares the exact
Python-int path of the grid arithmetic (always used up to 64 values) with a whole release
of ``10**5`` values: the price of choosing the path from the size alone for every size
(see "Timing" in :mod:`dpkit._samplers`).

Times are the best of several runs, in CPU time of this process (see ``noise.py``).

Run: ``.venv/bin/python benchmarks/grid.py``
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from noise import best_time

from dpkit import _checks, gaussian, laplace
from dpkit._samplers.grid import add_units, from_grid, to_grid
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.gaussian import _noise_parameters, gaussian_mechanism
from dpkit.laplace import laplace_grid, laplace_mechanism
from dpkit.rng import resolve

N = 10**6
EPSILON, DELTA, SENSITIVITY = 0.5, 1e-6, 1.0


def main() -> None:
    source = resolve(None)
    values = np.random.default_rng(0).normal(0.0, 100.0, N)
    generator = np.random.default_rng()
    numpy_laplace = best_time(lambda: generator.laplace(0.0, 2.0, N))
    numpy_normal = best_time(lambda: generator.normal(0.0, 2.0, N))

    grid = laplace_grid(SENSITIVITY, EPSILON, N)
    k = grid.exponent
    units = to_grid(values, k)
    noise = discrete_laplace(grid.scale_units, source, size=N)
    total = add_units(units, noise)
    steps = [
        ("check_finite_array (copy=False)",
         lambda: _checks.check_finite_array(values, "value", exact=True, copy=False)),
        ("check_finite_array (copy)",
         lambda: _checks.check_finite_array(values, "value", exact=True)),
        ("to_grid", lambda: to_grid(values, k)),
        ("add_units", lambda: add_units(units, noise)),
        ("from_grid", lambda: from_grid(total, k)),
    ]
    copy = best_time(total.copy)  # from_grid(overwrite=True) needs a fresh copy each run
    overwrite = best_time(lambda: from_grid(total.copy(), k, overwrite=True)) - copy
    print(f"{'step, 10**6 float64 values':<34} {'ms':>8} {'/ numpy laplace':>16}")
    for name, seconds in [(name, best_time(step)) for name, step in steps] + \
            [("from_grid (overwrite)", overwrite)]:
        print(f"{name:<34} {seconds * 1e3:>8.2f} {seconds / numpy_laplace:>16.3f}")

    _, sigma2, _ = _noise_parameters(SENSITIVITY, 1.0, DELTA, N, "analytic")
    rows = [
        ("Laplace", numpy_laplace, laplace, "discrete_laplace",
         lambda: laplace_mechanism(values, SENSITIVITY, EPSILON),
         lambda: discrete_laplace(grid.scale_units, source, size=N)),
        ("Gaussian", numpy_normal, gaussian, "discrete_gaussian",
         lambda: gaussian_mechanism(values, SENSITIVITY, 1.0, DELTA),
         lambda: discrete_gaussian(sigma2, source, size=(N,))),
    ]
    print(f"\n{'mechanism, 10**6 values':<24} {'whole ms':>9} {'sampler ms':>11} "
          f"{'difference':>11} {'stubbed ms':>11} {'numpy / whole':>14} "
          f"{'stubbed / numpy':>16}")
    for name, baseline, module, sampler_name, mechanism, sampler in rows:
        whole, alone = best_time(mechanism), best_time(sampler)
        drawn = sampler()
        with mock.patch.object(module, sampler_name, lambda *_, noise=drawn, **__: noise.copy()):
            stubbed = best_time(mechanism) - best_time(drawn.copy)
        print(f"{name:<24} {whole * 1e3:>9.1f} {alone * 1e3:>11.1f} "
              f"{(whole - alone) * 1e3:>11.1f} {stubbed * 1e3:>11.1f} "
              f"{baseline / whole:>14.3f} {stubbed / baseline:>16.3f}")

    small = 10**5
    part = values[:small]
    small_grid = laplace_grid(SENSITIVITY, EPSILON, small)
    small_noise = discrete_laplace(small_grid.scale_units, source, size=small)

    def arithmetic(exact: bool) -> None:
        on_grid = to_grid(part, small_grid.exponent, exact=exact)
        from_grid(add_units(on_grid, small_noise, exact=exact),
                            small_grid.exponent, exact=exact)

    release = best_time(lambda: laplace_mechanism(part, SENSITIVITY, EPSILON))
    fast, exact = best_time(lambda: arithmetic(False)), best_time(lambda: arithmetic(True), 3)
    print(f"\nrelease of 10**5 values: {release * 1e3:.1f} ms; with the exact grid path "
          f"instead: {(release - fast + exact) / release:.1f} times as long")


if __name__ == "__main__":
    main()
