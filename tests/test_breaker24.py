"""Breaker review 24: findings on the float path's scalar release.

:func:`dpkit._samplers.grid.noisy_scalar` (every scalar float release of
:func:`dpkit.laplace.laplace_mechanism` and :func:`dpkit.gaussian.gaussian_mechanism` on
the float path) promises the result of :func:`dpkit._samplers.grid.add_to_floats` bit for
bit, and for noise beyond its reach (``|noise| >= 2**53`` grid units) the exact sum on
Python ints. It converts the drawn noise to a float *first* and hands the *rounded* noise
(``int(float(noise))``) to the exact sum, so a noise of ``2**53 + 1`` units is added as
``2**53``: the release is not the exact result the docstring states, and not the one the
array path (:func:`add_to_floats`, which keeps the drawn integers) returns. The event has
probability below ``2**-1074`` in the mechanisms (their reach is 750 Laplace scales or
40 Gaussian standard deviations), so this is an exactness defect, not a measurable
privacy loss. Deterministic: the noise is given, no randomness.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpkit._samplers.grid import from_grid, noisy_scalar, release_range, to_grid

# Grid 2**-1: 0.5 is one unit; noise within a few units of ±2**53.
SPAN = release_range(-1, Fraction(1))


def exact_release(value: float, noise: int) -> float:
    """The float nearest to ``(round(value / 2**k) + noise) · 2**k``, on Python ints."""
    units = int(to_grid(np.array([value]), SPAN.k, exact=True)[0]) + noise
    return float(from_grid(np.array([units], dtype=object), SPAN.k, exact=True)[0])


@pytest.mark.parametrize("noise", [2**53 + 1, -(2**53 + 1), 2**54 + 2])
def test_scalar_release_beyond_the_reach_adds_the_noise_drawn(noise: int) -> None:
    """``0.5`` (one unit of ``2**-1``) plus ``noise`` units: ``(1 + noise)/2`` rounded once
    to a float (``2**52 + 1``, ``-2**52``, ``2**53 + 2``); on main the scalar path returns
    ``2**52``, ``-2**52 + 0.5`` and ``2**53``, from the noise rounded to a float."""
    expected = exact_release(0.5, noise)
    assert expected == float(Fraction(1 + noise, 2))   # the exact sum, rounded once
    released = noisy_scalar(0.5, SPAN, lambda n: np.array([noise] * n), dict)
    assert released == expected, (f"noise {noise} units: released {released!r}, exact "
                                  f"{expected!r} (the noise was rounded to "
                                  f"{int(float(noise))} first)")


def test_scalar_release_within_the_reach_is_exact() -> None:
    """Control: noise below ``2**53`` units (exact in a float) gives the exact result, so
    the test above fails for the rounding it names."""
    for noise in (2**53 - 1, -(2**53 - 1), 12345):
        released = noisy_scalar(0.5, SPAN, lambda n, noise=noise: np.array([noise] * n), dict)
        assert released == exact_release(0.5, noise)
