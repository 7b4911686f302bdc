"""Breaker review 31: the timing of 7b7a5e6 (a scalar Laplace release's deadline grows with
the bits of its noise scale) and 3786e22 (the scalar constants raised, SVT runs charged).

F1. The extra deadline (:data:`dpkit.laplace.LONG_WALK`, :data:`dpkit.laplace.OFF_PATH`) went
to scalars only (``shape is None``), while the noise of any release of one value is one draw
by the same sampler (:func:`dpkit._samplers.fixed_cost.fixed_discrete_laplace` walks when
``n == 1``): ``laplace_mechanism([x], …)``, ``(x,)``, a 0-d or one-element array, and
``sample_releases(x, …, n=1)`` kept the 8.05 U deadline (margin 1) at any ε. Measured at ε =
1e-300, Δ = 1 (unpadded work, 1,000 calls, load 1.3): ``[0.5]`` median 7.65 U, p99 11.3 U;
``[2**53 + 1]`` median 9.11 U, p99 13.1 U (the scalar: median 4.1 U against 26.5 U). At
margin 1 (the margin 7b7a5e6 measured its scalars at), 3,000 calls a side, inputs built
before the timed calls, load 1.7: ``[0.5]`` vs ``[Fraction(1, 3)]`` overran 4,078 of 6,000
times and certified ε 3.67 (the guesser right 80.8%); ``[0.5]`` vs ``[2**53 + 1]`` 3,239
overruns, ε 0.68, 72.4%; the scalar pair 20 overruns, ε 0. At margin 2 and load 2.5 to 3,
5,000 calls a side: 1,487 and 1,386 of 10,000 overran (after the fix: 104 and 7), no ε
certified. Now every release of one value gets the extra (timing only:
``/tmp/brk31/cert.py`` in the review).

F2. ``Deadline.add_work`` (new in 7b7a5e6, public) took any value: a NaN or an infinity broke
the release's wait after its work, a negative amount shortened the deadline. Now refused.

F3 (notes only). :data:`dpkit.laplace.LONG_WALK` was said to start "at scales of more than
``2**24`` grid units"; the code's ``b > 24`` starts it at ``2**25`` for an integer scale (a
doctest now shows the switch).

F4. 3786e22's ``fixed = 8`` covers a scalar of the slowest type, but one value in a list takes
the list's conversion path, slower: at ε = 1, margin 2, 5,000 calls a side interleaved at
load 3.5 to 4.1, the scalar 360-digit Decimal overran 148 times and ``[that Decimal]`` 691
(the neighbours ``[0.5]`` vs ``[that Decimal]`` at load 3.4 to 3.5: 226 and 466, no ε
certified, accuracy 0.516). Measured by the lead (unpadded, 600 calls, quiet core): a
one-value container of Python objects costs about 1.7 U more than the scalar at the median,
every type; the Gaussian's 99.9th percentile reached 24 U against 22.1 at margin 2. Now such
a release is charged one more object (both mechanisms).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from test_timing import deadlines  # noqa: F401 (the fixture; tests/ is on sys.path)

import dpkit.timing as timing
from dpkit.gaussian import COST as GAUSSIAN_COST
from dpkit.gaussian import gaussian_mechanism
from dpkit.laplace import COST as LAPLACE_COST
from dpkit.laplace import laplace_mechanism, sample_releases
from dpkit.rng import seeded

SOURCE = seeded(31)

#: (Δ, ε): on the float path beyond 2**24 grid units (LONG_WALK), and off it (OFF_PATH).
SCALES = [(1.0, 1e-8), (1.0, 1e-300)]

#: Releases of one value that are not a Python scalar.
ONE_VALUE = [
    ("a list of one", lambda: [0.5]),
    ("a tuple of one", lambda: (0.5,)),
    ("a list of one int beyond 2**53", lambda: [2**53 + 1]),
    ("a list of one Fraction", lambda: [Fraction(1, 3)]),
    ("a 0-d array", lambda: np.array(0.5)),
    ("a one-element array", lambda: np.array([0.5])),
    ("a 1x1 array", lambda: np.array([[0.5]])),
]


@pytest.mark.parametrize(("sensitivity", "epsilon"), SCALES)
@pytest.mark.parametrize(("name", "value"), ONE_VALUE, ids=[n for n, _ in ONE_VALUE])
def test_one_value_in_a_container_gets_the_scalar_deadline(deadlines,  # noqa: F811
                                                           name, value, sensitivity, epsilon):
    """One value in a container is one draw by the scalar's sampler, so it gets the scalar's
    deadline at every scale. Fails if the extra work goes to Python scalars only."""
    laplace_mechanism(0.5, 1.0, 1.0, rng=SOURCE)  # its warm-up's releases, recorded too
    deadlines.clear()
    laplace_mechanism(0.5, sensitivity, epsilon, rng=SOURCE)
    laplace_mechanism(value(), sensitivity, epsilon, rng=SOURCE)
    laplace_mechanism(np.array([0.5]), sensitivity, 1.0, rng=SOURCE)  # a common scale
    objects = timing.kind_of(value()) == "objects" or epsilon < 1e-100  # off the float path
    container = LAPLACE_COST.seconds(2, 2) - LAPLACE_COST.seconds(1, 1)  # one more object
    assert deadlines[1] == pytest.approx(deadlines[0] + container * objects)
    assert deadlines[1] > deadlines[2]


@pytest.mark.parametrize(("sensitivity", "epsilon"), SCALES)
def test_one_sample_release_gets_the_scalar_deadline(deadlines,  # noqa: F811
                                                     sensitivity, epsilon):
    """``sample_releases`` of one copy is one draw, as a scalar release: the same deadline.
    Fails if ``n = 1`` is left without the extra work."""
    laplace_mechanism(0.5, 1.0, 1.0, rng=SOURCE)  # their warm-ups' releases, recorded too
    sample_releases(0.5, 1.0, 1.0, 1, rng=SOURCE)
    deadlines.clear()
    laplace_mechanism(0.5, sensitivity, epsilon, rng=SOURCE)
    sample_releases(0.5, sensitivity, epsilon, 1, rng=SOURCE)
    sample_releases(0.5, sensitivity, 1.0, 1, rng=SOURCE)
    # One copy in an object array, whatever the value's type (breaker review 32).
    container = LAPLACE_COST.seconds(2, 2) - LAPLACE_COST.seconds(1, 1)  # one more object
    assert deadlines[1] == pytest.approx(deadlines[0] + container)
    assert deadlines[1] > deadlines[2]


@pytest.mark.parametrize("units", [float("nan"), float("inf"), -1.0, "1", None, True])
def test_add_work_refuses_what_is_not_a_finite_amount_of_work(units):
    """``Deadline.add_work`` (public) took a NaN, which broke the wait after the work
    (``int(nan)`` in the deadline: an unpadded ``ValueError`` from the release's end), an
    infinity (an ``OverflowError`` there) and a negative amount (a deadline shorter than its
    :class:`~dpkit.timing.Cost`). Fails if any of them is accepted."""
    clock = timing.Deadline(timing.Cost(fixed=1.0))
    with pytest.raises((TypeError, ValueError), match="units"):
        clock.add_work(units)


def test_add_work_adds_public_work_to_the_deadline():
    """A valid amount (a float, an int, an exact Fraction) moves the deadline by that many
    ``U`` times the margin. Fails if the amount is dropped or changed by the validation."""
    clock = timing.Deadline(timing.Cost(fixed=1.0))
    clock.size(1)
    before = clock.seconds()
    for units in (2.5, 1, Fraction(1, 2)):
        clock.add_work(units)
    assert clock.seconds() - before == pytest.approx(
        timing.margin() * 4.0 * timing.reference().scalar)


@pytest.mark.parametrize(("release", "cost"), [
    (lambda v: laplace_mechanism(v, 1.0, 1.0, rng=SOURCE), LAPLACE_COST),
    (lambda v: gaussian_mechanism(v, 1.0, 1.0, 1e-6, rng=SOURCE), GAUSSIAN_COST)],
    ids=["laplace", "gaussian"])
def test_one_value_in_an_object_container_is_charged_one_more_object(deadlines,  # noqa: F811
                                                                      release, cost):
    """F4: one value in a list, a tuple or an object array is converted as a list's element,
    which the scalar's ``fixed`` does not cover: one more object. A float64 array of one
    value takes the array path and is not charged. Fails if the container is charged as a
    scalar."""
    release(0.5)  # the warm-up's releases, recorded too
    deadlines.clear()
    for value in (0.5, [0.5], (Fraction(1, 3),), np.array([2**53 + 1], dtype=object),
                  np.array(0.5, dtype=object), np.array([0.5])):
        release(value)
    scalar, *objects, array = deadlines
    extra = cost.seconds(2, 2) - cost.seconds(1, 1)  # one more object
    assert objects == pytest.approx([scalar + extra] * 4)
    assert array < scalar + extra
