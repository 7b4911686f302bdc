"""Breaker review 28: the scalar discrete Laplace draw by the interval walk
(:mod:`dpkit._samplers.interval`, merged as 37cb4c8). Deterministic reproducers, no timing.

All three (four cases) fail on 37cb4c8; a copy of 37cb4c8 with the digits assembled from a
leading ``1 << 9``, the length of ``rng.bytes`` checked and the docstring's range set to 72-81
passes them, and ``tests/test_interval.py``.

* **The magnitude is assembled on ints whose sizes follow the value drawn.** The walk's
  positions carry an offset so that their sizes do not depend on the path, but after it
  :func:`~dpkit._samplers.interval.interval_laplace` builds ``G`` from its digits by
  ``g = g + g + bit`` starting from ``g = 0``: a draw of ``+1`` (all digits 0) keeps ``g``
  a cached small int, a large draw makes a new int of growing size at every digit. Measured
  unpadded (load 2 on 2 cores, core 0, 3000-4000 calls interleaved), the sampler's median
  times spread over 0.46 µs at ``2**21 + 2`` and 1.40 µs at ``2**53/750``, from ``±1`` to
  ``±2**26`` and ``±2**48``; the assembly alone over 0.34 and 0.90 µs, the walk over 0.13
  and 0.26 µs (``_samplers``'s "Timing" calls the values' share "a few nanoseconds").
* **A source that hands out one byte too many makes every scalar release noiseless.**
  :func:`~dpkit._samplers.interval.interval_laplace` reads ``U`` with
  ``int.from_bytes(rng.bytes(B/8))`` and never checks the length: a :class:`RandomSource`
  subclass whose ``bytes(n)`` returns ``n + 1`` bytes puts ``U`` above 1, every trial is 1
  (the tail, then the zero trial), and ``laplace_mechanism(0.0, 1.0, 0.5)`` returns exactly
  ``0.0`` every time; ``n - 1`` bytes biases ``U`` towards 0. Before (9b5876e) the grouped
  sampler's ``np.frombuffer(...).reshape`` raised a ``ValueError`` (without naming ``rng``).
* **"``H`` plus 73 to 81 bits from scale 1/7 to ``2**300``" is false**: ``B`` is a multiple
  of 8, so just below each of its steps ``B - H`` falls to about 72.6 (72.57 at ``2**29 -
  2**22``, 72.97 at ``3·2**43``; 72.0 at 1/64, outside the stated range).

Not here, as it is a timing (``benchmarks/``, not tests): the walk's cost grows as ``D·P``,
about ``log2(scale)**2``, while a scalar Laplace release's deadline did not depend on ε, so
at ε = 1e-120 or below every scalar ``laplace_mechanism`` overruns its deadline (100 of 100;
1e-300: 4000 of 4000, 1.9 ms against 343 µs) and its time shows the noise (certified ε 2.33
at 1e-300 and 3.85 at 1e-120 between two crafted noise sources; 9b5876e: 0, no overrun
beyond load). The deadline now grows with the scale's bits (``test_timing``'s
``test_a_scalar_deadline_grows_with_the_bits_of_the_noise_scale``).
"""

from __future__ import annotations

import re
import sys
from fractions import Fraction
from types import FrameType
from typing import Any

import pytest
from test_interval import laplace_entropy  # tests/ is on sys.path under pytest

from dpkit._samplers import interval
from dpkit._samplers.interval import interval_laplace, interval_plan
from dpkit._samplers.noise import discrete_laplace
from dpkit.rng import RandomSource, seeded


class Zeros(RandomSource):
    """Serves zero bytes: ``U = 0``, every trial 0, the draw ``+1``."""

    def bytes(self, n: int) -> bytes:
        return bytes(n)


def int_sizes(scale: Fraction, rng: RandomSource
              ) -> tuple[int, list[dict[str, tuple[int, bool]]]]:
    """The value of one scalar draw, and at each line :func:`interval_laplace` runs, for
    each of its local ints, its size in bytes (:func:`sys.getsizeof`) and whether it is one
    of the small ints CPython caches (-5 to 256: no allocation)."""
    code = interval_laplace.__code__
    sizes: list[dict[str, tuple[int, bool]]] = []

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            sizes.append({name: (sys.getsizeof(value), -5 <= value <= 256)
                          for name, value in frame.f_locals.items() if type(value) is int})
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    sys.settrace(calls)
    try:
        value = int(interval_laplace(scale, rng)[0])
    finally:
        sys.settrace(None)
    return value, sizes


@pytest.mark.parametrize("scale", [Fraction(2**21 + 2), Fraction(2**53, 750)])
def test_a_scalar_draw_works_on_ints_of_the_same_sizes_whatever_its_value(
        scale: Fraction) -> None:
    """At the Laplace mechanism's scalar scale (``2**21 + 2`` units) and the largest of its
    float path, a draw of ``+1`` (``U = 0``) and a large positive draw (seeded) have local
    ints of the same sizes, cached or not alike, at every line (the walk's own ints already
    do, through their offset)."""
    small, small_sizes = int_sizes(scale, Zeros())
    assert small == 1
    seed = next(s for s in range(100) if int(interval_laplace(scale, seeded(s))[0]) > scale)
    large, large_sizes = int_sizes(scale, seeded(seed))
    assert large > scale
    assert small_sizes == large_sizes


class OneByteMore(RandomSource):
    """A broken source: ``bytes(n)`` returns ``n + 1`` bytes (seeded)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = seeded(3)

    def bytes(self, n: int) -> bytes:
        return self.inner.bytes(n + 1)


def test_a_source_that_returns_too_many_bytes_is_refused_not_a_noiseless_release() -> None:
    """The scalar draw refuses bytes of the wrong length (a ``ValueError`` or ``TypeError``),
    as the two-value draw does, rather than deciding every trial as 1."""
    with pytest.raises((ValueError, TypeError)):
        discrete_laplace(Fraction(2**21 + 2), OneByteMore(), size=2)
    with pytest.raises((ValueError, TypeError)):
        discrete_laplace(Fraction(2**21 + 2), OneByteMore())


def test_the_documented_excess_of_b_over_the_entropy_holds() -> None:
    """The module docstring's range for ``B - H`` covers the scales it names, including
    those just below a step of ``B`` (``B - H`` = 72.57 at ``2**29 - 2**22``, 72.97 at
    ``3·2**43``)."""
    text = " ".join(interval.__doc__.split())
    found = re.search(r"``H`` plus (\d+) to (\d+) bits from scale (\d+)/(\d+) to ``2\*\*(\d+)``",
                      text)
    assert found, "the docstring no longer states the range"
    low, high, num, den, top = (int(g) for g in found.groups())
    scales = [Fraction(num, den), Fraction(1), Fraction(2**21 + 2), Fraction(2**29 - 2**22),
              Fraction(3 * 2**43), Fraction(2**53, 750), Fraction(2**top)]
    excess = {scale: interval_plan(scale).bits - laplace_entropy(float(scale))
              for scale in scales}
    assert all(low <= e <= high for e in excess.values()), excess
