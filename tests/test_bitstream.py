"""Tests of :mod:`dpkit._bitstream`: exact bit accounting and values against a slow reference."""

from __future__ import annotations

import pytest

from dpkit._bitstream import read_fields
from dpkit.rng import RandomSource, seeded


class ByteCounter(RandomSource):
    """A seeded stream that records how many bytes each call asked for."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self._inner = seeded(seed)
        self.calls: list[int] = []

    def bytes(self, n: int) -> bytes:
        self.calls.append(n)
        return self._inner.bytes(n)


WIDTHS = [(1,), (3, 5), (7, 0, 9), (13, 1, 40, 3), (64,), (12, 1, 48, 3), (9, 1, 16, 6),
          (20, 20), (16,), (30, 30, 4), (60, 60, 8), (5,), (0,)]


@pytest.mark.parametrize("widths", WIDTHS, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 1001])
def test_fields_match_a_slow_reference_and_use_exactly_the_bits(widths, n) -> None:
    """Field ``i`` of record ``r`` is bits ``[r·K + offset_i, ...)`` of the big-endian byte
    string, and one call draws ``ceil(n·K/8)`` bytes (none when that is 0)."""
    source = ByteCounter(5)
    fields = read_fields(source, n, widths)
    record = sum(widths)
    nbytes = (n * record + 7) // 8
    assert source.calls == ([nbytes] if nbytes else [])
    data = seeded(5).bytes(nbytes)
    bits = int.from_bytes(data, "big")
    total = 8 * len(data)
    position = 0
    for r in range(n):
        for width, field in zip(widths, fields, strict=True):
            expected = (bits >> (total - position - width)) & ((1 << width) - 1) if width else 0
            assert int(field[r]) == expected
            position += width
    assert all(f.size == n for f in fields)


def test_bad_width_is_refused() -> None:
    with pytest.raises(ValueError, match="widths"):
        read_fields(seeded(0), 3, (65,))
