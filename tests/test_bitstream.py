"""Tests of :mod:`dpkit._samplers.bits`: exact bit accounting, values against a slow reference."""

from __future__ import annotations

import pytest

from dpkit._samplers.bits import read_fields
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
          (20, 20), (16,), (30, 30, 4), (60, 60, 8), (5,), (0,), (9, 1, 36, 3), (11, 1, 20, 3),
          (2, 1, 0, 0), (24,), (8, 8, 8, 8, 8, 8, 8)]


@pytest.mark.parametrize("widths", WIDTHS, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 1001])
def test_fields_match_a_slow_reference_and_use_exactly_the_bits(widths, n) -> None:
    """Fields are the bits the documented layout assigns them (a slow string-based
    reference), and one call draws exactly ``ceil(n·K/8)`` bytes (none when that is 0)."""
    source = ByteCounter(5)
    fields = read_fields(source, n, widths)
    record = sum(widths)
    nbytes = (n * record + 7) // 8
    assert source.calls == ([nbytes] if nbytes else [])
    records = _reference_records(seeded(5).bytes(nbytes), n, record)
    for r in range(n):
        used = 0
        for width, field in zip(widths, fields, strict=True):
            expected = (records[r] >> (record - used - width)) & ((1 << width) - 1)
            assert int(field[r]) == expected
            used += width
    assert all(f.size == n for f in fields)
    smallest = [next(t for t in ("uint8", "uint16", "uint32", "uint64") if width <= int(t[4:]))
                for width in widths]
    assert [f.dtype.name for f in fields] == smallest   # the envelope views a sign bit as int8


def _reference_records(data: bytes, n: int, record: int) -> list[int]:
    """Each record as a ``record``-bit integer, following the documented layout bit by bit."""
    bits = "".join(f"{byte:08b}" for byte in data)
    whole, rest = divmod(record, 8)
    if record > 64 or rest == 0:                        # contiguous records
        return [int(bits[i * record:(i + 1) * record] or "0", 2) for i in range(n)]
    head = [bits[8 * whole * i:8 * whole * (i + 1)] for i in range(n)]
    planes = bits[8 * whole * n:]
    return [int(head[i] + "".join(planes[j * n + i] for j in range(rest)), 2) for i in range(n)]


def test_bad_width_is_refused() -> None:
    with pytest.raises(ValueError, match="widths"):
        read_fields(seeded(0), 3, (65,))
