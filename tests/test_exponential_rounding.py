"""The exponential mechanism's randomized rounding does the same work whatever the losses.

``_rounded_offsets`` rounded only the non-integer losses (``bernoulli_dyadic`` on those,
then an exact ``Fraction`` draw, one by one in Python, for the negative ones whose part
``1 - frac`` is not a double), so its work and the random bytes it read grew with the
number of non-integer losses, a property of the data: fast releases of ``10**5`` to
``10**6`` fractional losses took 3-30 times their deadline (``benchmarks/deadlines.py``,
issue 18). Now every loss is rounded the same way. Each test here runs releases unpadded
on losses that differ only in whether (and which) are integers, and compares, with the
same seed, the Python and C calls they make (:func:`sys.setprofile`, in order), or the
random bytes they read. Equal call sequences and equal reads are structural evidence,
untouched by the machine's load; a difference is work chosen by the data, which the
deadline hides only as long as the release meets it. Deterministic: fixed seeds, no
timing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tracing import calls_of  # tests/ is on sys.path under pytest

import dpkit._warming
from dpkit._samplers import base2
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.rng import RandomSource, seeded
from dpkit.timing import unpadded

ETA = Eta.from_epsilon(1.0)
LOW, HIGH = -8, 8


@pytest.fixture(autouse=True)
def _no_rewarm(monkeypatch: pytest.MonkeyPatch) -> None:
    """No re-warm between the traced releases (it runs after a pause, not by the data)."""
    monkeypatch.setattr(dpkit._warming, "REWARM_AFTER_NS", 2**62)
    monkeypatch.setattr(dpkit._warming, "LIGHT_REWARM_AFTER_NS", 2**62)


def losses(kind: str, n: int) -> np.ndarray:
    """``n`` losses in ``[LOW, HIGH]``: integers, or the same with some made non-integer."""
    integers = np.arange(n) % 7 - 3.0
    if kind == "integers":
        return integers
    if kind == "one half":
        integers[-1] += 0.5
        return integers
    if kind == "halves":
        return integers + 0.5
    if kind == "mix":                       # every other one, long binary expansions
        return integers + (np.arange(n) % 2) * (0.1 + np.arange(n) * 2.0**-40)
    if kind == "negative tenths":           # parts 1 - 0.1...: not doubles
        return -np.abs(integers) - 0.1
    if kind == "subnormal":                 # parts 5e-324 and 1 - 5e-324
        return np.where(np.arange(n) % 2 == 0, 5e-324, -5e-324)
    if kind == "clamped":                   # beyond both bounds, fractional
        return np.where(np.arange(n) % 2 == 0, -100.25, 100.75)
    raise ValueError(kind)


KINDS = ("integers", "one half", "halves", "mix", "negative tenths", "subnormal", "clamped")


def release(values: np.ndarray, rng: RandomSource, method: str = "fast") -> int:
    """One unpadded release of ``values``."""
    with unpadded():
        return base2_exponential_mechanism(values, ETA, utility_min=LOW, utility_max=HIGH,
                                           method=method, rng=rng)


def traces(n: int, method: str = "fast") -> dict[str, list[str]]:
    """The calls of a release of each kind of losses, each warmed up first, same seed."""
    inputs = {kind: losses(kind, n) for kind in KINDS}
    for values in inputs.values():
        release(values, seeded(0), method)
    return {kind: calls_of(lambda v=values: release(v, seeded(5), method))[0]
            for kind, values in inputs.items()}


@pytest.mark.parametrize("n", [1000, 70_000])  # one block, and 9 rounding blocks, 2 of level 0
def test_a_release_makes_the_same_calls_whatever_losses_are_integers(n: int) -> None:
    """On main, fractional losses ran ``bernoulli_dyadic``'s calls and, for each negative
    one, a ``Fraction`` draw; integer losses ran neither."""
    calls = traces(n)
    for kind in KINDS[1:]:
        assert calls[kind] == calls["integers"], kind
    assert "bernoulli_dyadic" in calls["integers"] and "fast_sample" in calls["integers"]


def _stub_sampler(k: np.ndarray, *args: Any) -> int:
    """Stands in for an exact sampler: returns the last outcome."""
    return int(k.size) - 1


@pytest.mark.parametrize("method", ["full", "search"])
def test_the_exact_methods_round_with_the_same_calls(monkeypatch: pytest.MonkeyPatch,
                                                      method: str) -> None:
    """``"full"`` and ``"search"`` share the rounding: their calls up to their sampler (whose
    exact arithmetic depends on the data, under a deadline that covers it) are the same."""
    name = {"full": "full_precision_sample", "search": "random_binary_search_sample"}[method]
    monkeypatch.setattr(base2, name, _stub_sampler)
    calls = traces(200, method)
    for kind in KINDS[1:]:
        assert calls[kind] == calls["integers"], kind
    assert "bernoulli_dyadic" in calls["integers"] and "_stub_sampler" in calls["integers"]


class _Reads(RandomSource):
    """A source that records each request of bytes and of bits, in order."""

    secure = False

    def __init__(self, inner: RandomSource) -> None:
        super().__init__()
        self._inner = inner
        self.requests: list[tuple[str, int]] = []

    def bytes(self, n: int) -> bytes:
        self.requests.append(("bytes", n))
        return self._inner.bytes(n)

    def bits(self, k: int) -> int:
        self.requests.append(("bits", k))
        return self._inner.bits(k)


@pytest.mark.parametrize("method", ["fast", "full", "search"])
def test_a_release_reads_the_same_random_bytes_whatever_losses_are_integers(
        method: str) -> None:
    """The rounding reads 8 bytes per loss, integer or not (on main: per non-integer loss,
    plus a ``Fraction`` draw's bits for each negative one), so with the same seed the
    sampler after it sees the same bits: its requests are the same too."""
    n = 1000 if method == "fast" else 100
    reads = {}
    for kind in KINDS:
        source = _Reads(seeded(7))
        release(losses(kind, n), source, method)
        reads[kind] = source.requests
    for kind in KINDS[1:]:              # the sampler's reads, after, depend on the data
        if method == "fast":            # only for the exact methods
            assert reads[kind] == reads["integers"], kind
        assert reads[kind][0] == reads["integers"][0], kind
    assert reads["integers"][0] == ("bytes", 8 * n)          # the rounding's, first
    if method == "fast":                # then 53 bits of the point, in one request
        assert reads["integers"][1:] == [("bits", 53)]
