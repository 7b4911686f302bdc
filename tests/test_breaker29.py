"""Breaker review 29: the fixes of breaker review 28 to the scalar discrete Laplace draw
(d07737c). Deterministic reproducers, no timing; all fail on d07737c (main at 91911fe).

* **F2 holds on the walk, not beyond it.** Scalar draws at scales of ``2**55`` or more (every
  scalar ``laplace_mechanism`` at ε of about 6e-11 or less) are now two geometrics whose
  trials :func:`~dpkit._samplers.bernoulli.fixed_below` decides from ``rng.bytes(18·g)``
  (``g`` groups of 8 trials, two rows), never checked: one byte too many or too few raises
  NumPy's ``cannot reshape array of size 17 into shape (2,newaxis,1)`` or ``operands could
  not be broadcast together``, which names neither ``rng`` nor the length; and a source that
  returns ``16·g + 2`` bytes (two of the ``2·g`` low bytes) is **accepted**: its two low bytes
  are broadcast over every group (``laplace_mechanism(0.0, 1.0, 1e-12)`` releases from 160
  of the 162 bytes it asked for). The low bytes decide a trial only when the high 64 bits tie
  with a threshold's, so the distribution moves on events of probability about ``2**-56``
  per draw; what fails is the contract F2 set ("rng.bytes of the wrong length refused").
* **F3: the last line still works on ints whose sizes follow the value.** The digits are now
  assembled after a leading ``1 << 9``, but ``out[0] = (((g - lead + 1)·(1 - zero)) ^ flip)
  - flip`` computes ``|X| = G + 1`` and the signed value as fresh ints: a draw of ``+1`` makes
  only cached small ints, one of about ``2**21`` ints of one 30-bit digit, one of ``2**43``
  of two. Traced (:mod:`tracemalloc`, the peak over that line): 64 bytes for ``+1``, 96 for a
  draw near ``2**21``, 132 near ``2**43``. Timed alone (1000-call blocks, load 3.9 on 2
  cores, core 0): 151 ns for ``G = 0``, 218 ns for ``G = 2**30`` or ``2**48``.
* **F4: "``H`` plus 72 to 81 bits from scale 1/64" is false at the small end.** ``B`` is 72
  from 1/64 up to about 0.10358 (then 80), and ``H`` grows with the scale, so ``B - H`` falls
  below 72 on all of it: 71.99999999999999999999999997 at 1/64, 71.99999 at 1/16, 71.9986 at
  1/10 and 71.99803 just below the step (``1779566613/2**34``; mpmath at 200 bits, and the
  tests' float ``laplace_entropy`` alike). The breaker-28 test checks 1/64 in floats (72.0).
"""

from __future__ import annotations

import inspect
import re
import sys
import tracemalloc
from fractions import Fraction
from types import FrameType
from typing import Any

import pytest
from test_breaker28 import Zeros  # tests/ is on sys.path under pytest
from test_interval import laplace_entropy

from dpkit._samplers import interval
from dpkit._samplers.bernoulli import fixed_plan
from dpkit._samplers.interval import MAX_DIGITS, interval_laplace, interval_plan, signed_value
from dpkit._samplers.noise import discrete_laplace
from dpkit.rng import RandomSource, seeded


class Resized(RandomSource):
    """A broken source (seeded): ``bytes(n)`` returns ``size(n)`` bytes."""

    def __init__(self, size: Any) -> None:
        super().__init__()
        self.inner = seeded(3)
        self.size = size

    def bytes(self, n: int) -> bytes:
        return self.inner.bytes(self.size(n))


def two_low_bytes(n: int) -> int:
    """For the grouped read of two rows of ``g`` groups (``18·g`` bytes): ``16·g + 2``."""
    return n - n // 9 + 2 if n % 18 == 0 else n


@pytest.mark.parametrize("size", [lambda n: n + 1, lambda n: n - 1, two_low_bytes],
                         ids=["one more", "one fewer", "two low bytes of 2g"])
@pytest.mark.parametrize("scale", [Fraction(2**55), Fraction(2**400)])
def test_a_scalar_draw_beyond_the_walked_scales_refuses_a_wrong_length_naming_rng(
        scale: Fraction, size: Any) -> None:
    """Beyond ``MAX_DIGITS`` digits the scalar draw refuses bytes of the wrong length with a
    message that names ``rng``, as the walk does (brk28 F2), and never releases from them."""
    assert fixed_plan(scale)[0] > MAX_DIGITS
    with pytest.raises(ValueError, match=r"rng"):
        discrete_laplace(scale, Resized(size))


def last_line_peak(scale: Fraction, rng: RandomSource) -> tuple[int, int]:
    """The value of one scalar draw, and the peak of the memory (bytes, :mod:`tracemalloc`)
    allocated while the line of :func:`interval_laplace`'s last step
    (:func:`dpkit._samplers.interval.signed_value`, ``out[0] = ...``) runs."""
    code = signed_value.__code__
    lines, first = inspect.getsourcelines(signed_value)
    last = first + next(i for i, line in enumerate(lines) if "out[0] =" in line)
    state: dict[str, int] = {}

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == last:
            tracemalloc.reset_peak()
            state["start"] = tracemalloc.get_traced_memory()[0]
        elif event in ("line", "return") and "start" in state and "peak" not in state:
            state["peak"] = tracemalloc.get_traced_memory()[1] - state["start"]
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    tracemalloc.start()
    sys.settrace(calls)
    try:
        value = int(interval_laplace(scale, rng)[0])
    finally:
        sys.settrace(None)
        tracemalloc.stop()
    return value, state["peak"]


@pytest.mark.parametrize("scale", [Fraction(2**21 + 2), Fraction(2**53, 750)])
def test_the_last_line_of_a_scalar_draw_allocates_the_same_whatever_the_value(
        scale: Fraction) -> None:
    """A draw of ``+1`` (``U = 0``) and large draws (seeded) allocate the same memory on the
    line that turns ``G`` into the signed value: no int there follows the value's size."""
    small, small_peak = last_line_peak(scale, Zeros())
    assert small == 1
    for seed in range(3):
        large, large_peak = last_line_peak(scale, seeded(seed))
        assert abs(large) > 256                   # not a cached small int
        assert large_peak == small_peak, (large, large_peak, small_peak)


@pytest.mark.parametrize("scale", [Fraction(1, 10), Fraction(1779566613, 2**34)])
def test_the_documented_excess_of_b_over_the_entropy_holds_at_the_small_end(
        scale: Fraction) -> None:
    """The module docstring's range for ``B - H`` holds inside the scales it names, where
    ``B`` is still 72 (1/10, and just below ``B``'s step to 80, about 0.10358)."""
    text = " ".join(interval.__doc__.split())
    found = re.search(r"``H`` plus (\d+) to (\d+) bits from scale (\d+)/(\d+) to ``2\*\*(\d+)``",
                      text)
    assert found, "the docstring no longer states the range"
    low, high, num, den, top = (int(g) for g in found.groups())
    assert Fraction(num, den) <= scale <= 2**top
    assert interval_plan(scale).bits == 72
    assert low <= interval_plan(scale).bits - laplace_entropy(float(scale)) <= high
