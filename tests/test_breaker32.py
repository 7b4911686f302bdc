"""Breaker review 32: the one-value deadlines of 7b7a5e6, 3786e22, 35dc116 and 5ba482f.

F1. ``sample_releases`` chose its deadline from the value's type: a Python float (or an
``np.float64``, a subclass) took the float path and the deadline of a float64 array, any
other type (an int, an ``np.float32``, a Fraction, a Decimal) the deadline of Python objects,
one more object for ``n = 1`` (16.1 U against 22.6 U at margin 2, Δ = ε = 1). The type of
one number is data (:data:`dpkit.timing.KINDS`): ``sum`` of no rows is the int 0, of one row
of floats a float. Measured (``/tmp/brk32/cert.py`` in the review; 2,000 calls a side
interleaved, margin 2, load 1.1 on the other core's accumulation, core 0 pinned):
``sample_releases(sum([]), 1, 1, 1)`` vs ``sample_releases(sum([0.5]), 1, 1, 1)`` medians
621 µs vs 445 µs, certified ε 4.14 (the most 1,000 held-out calls a side can certify), the
one-timing guesser right 99.2%; ``n = 2`` and ``np.float32(0.5)`` vs ``0.5`` alike (ε 4.11,
4.13). Now every value gets the deadline of Python objects (the float path still runs for a
float, inside it): the first pair certified ε 0, the guesser right 50.9% (2,000 calls a side,
load 1.5) and 51.1% (5,000, load 1.6); ``np.float32(0.5)`` vs ``0.5`` 50.3% (5,000, built
before the timed calls: built inside them, the caller's own construction of the NumPy
scalars certified ε 0.27). The cost: a float's ``sample_releases`` of ``n`` values now
waits ``3.2·(n - 1)`` U more (``n = 1000``: about 0.17 s at margin 2 and U = 27 µs, against
1.2 ms), as an int's always did; simulations skip the wait inside
:func:`dpkit.timing.unpadded`.

F2 (notes only). A float64 array's dtype is public (:data:`dpkit.timing.KINDS`), but
``np.array([x])`` takes it from ``x``: ``np.array([sum([])])`` (int64) vs
``np.array([sum([0.5])])`` (float64) certified ε 4.14 for ``laplace_mechanism`` and 4.13 for
``gaussian_mechanism`` (2,000 calls a side, margin 2, load 1.6). The notes now say so, and
to pass a list or build the array with ``dtype=float``.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from test_timing import deadlines  # noqa: F401 (the fixture; tests/ is on sys.path)

from dpkit.laplace import sample_releases
from dpkit.rng import seeded

SOURCE = seeded(32)

#: One number of each type, all equal to 1/2 but the int (a sum of no rows).
VALUES = [0.5, 0, np.float64(0.5), np.float32(0.5), Fraction(1, 2), Decimal("0.5"), 2**53 + 1]


@pytest.mark.parametrize("n", [1, 2, 65])
@pytest.mark.parametrize("epsilon", [1.0, 1e-8])  # on the float path (off it: objects)
def test_sample_releases_deadline_does_not_depend_on_the_value_type(deadlines,  # noqa: F811
                                                                    n, epsilon):
    """F1: the deadline of ``sample_releases`` is set by Δ, ε and ``n`` alone, whatever the
    type of the value (data: ``sum([])`` is the int 0). Fails if a float gets the float64
    array's deadline and another type the deadline of objects."""
    sample_releases(0.5, 1.0, 1.0, 1, rng=SOURCE)  # the warm-up's releases, recorded too
    deadlines.clear()
    for value in VALUES:
        sample_releases(value, 1.0, epsilon, n, rng=SOURCE)
    assert deadlines == pytest.approx([deadlines[0]] * len(VALUES))
