"""Read exactly as many random bits as a vectorised sampler uses.

:func:`read_fields` draws ``ceil(n·K/8)`` fresh bytes from a :class:`~dpkit.rng.RandomSource`
for ``n`` records of ``K = sum(widths)`` bits each and returns each record's fields as
unsigned integer arrays. Records are laid end to end in the big-endian bit string of those bytes,
so no bit is used twice and at most 7 bits of a call are left over (they are discarded: the
reader keeps no state, so a copied source can never replay bits through it).

Each record is cut into chunks of at most 64 bits; a chunk is read as one 64-bit window
(two neighbouring big-endian words, shifted together) and split into its fields with
shifts, so the cost is a few NumPy passes per chunk whatever the widths.

Examples
--------
>>> from dpkit.rng import seeded
>>> high, low = read_fields(seeded(0), 4, (3, 5))
>>> bool(high.max() < 8 and low.max() < 32)
True
"""

from __future__ import annotations

import numpy as np

from dpkit.rng import RandomSource

__all__ = ["read_fields"]

_ONE = np.uint64(1)


def _chunks(widths: tuple[int, ...]) -> list[list[int]]:
    """Group consecutive field widths into runs whose sum is at most 64."""
    groups: list[list[int]] = [[]]
    total = 0
    for width in widths:
        if total + width > 64:
            groups.append([])
            total = 0
        groups[-1].append(width)
        total += width
    return groups


def read_fields(rng: RandomSource, n: int, widths: tuple[int, ...]) -> list[np.ndarray]:
    """``n`` records of uniformly random fields, ``widths[i]`` bits for field ``i``.

    Parameters
    ----------
    rng : RandomSource
        The source; exactly ``ceil(n·sum(widths)/8)`` bytes are drawn from it, in one call.
    n : int
        Number of records (samples).
    widths : tuple of int
        Field widths in bits, each between 0 and 64.

    Returns
    -------
    list of numpy.ndarray
        One array of length ``n`` per field, uniform on ``[0, 2**width)`` and independent
        of the others (a width-0 field is all zeros): ``uint32`` when a record has 8, 16 or
        32 bits, else ``uint64``.

    Raises
    ------
    ValueError
        If a width is outside ``[0, 64]``.
    """
    if any(not 0 <= w <= 64 for w in widths):
        raise ValueError(f"widths must be between 0 and 64 bits, got {widths!r}")
    record = sum(widths)
    nbytes = (n * record + 7) // 8
    if nbytes == 0:
        return [np.zeros(n, dtype=np.uint64) for _ in widths]
    if record % 8 == 0 and record <= 64:        # byte-aligned records: no shifting across words
        return _split(_aligned(rng.bytes(nbytes), n, record // 8), widths)
    padding = (-nbytes) % 8 + 8                 # whole words, plus one word of zeros
    words = np.frombuffer(rng.bytes(nbytes) + bytes(padding), dtype=">u8").astype(np.uint64)
    base = np.arange(n, dtype=np.uint64) * np.uint64(record)
    out: list[np.ndarray] = []
    start = 0
    for group in _chunks(widths):
        size = sum(group)
        position = base + np.uint64(start)
        index = (position >> np.uint64(6)).astype(np.intp)
        shift = position & np.uint64(63)
        window = (words[index] << shift) | ((words[index + 1] >> _ONE) >> (np.uint64(63) - shift))
        out.extend(_split(window, group))
        start += size
    return out


def _aligned(data: bytes, n: int, size: int) -> np.ndarray:
    """Records of ``size`` whole bytes as left-aligned windows: ``uint32`` for at most 4
    bytes (half the memory traffic), else ``uint64``."""
    if size in (1, 2, 4):
        values = np.frombuffer(data, dtype=f">u{size}").astype(np.uint32)
        return values << np.uint32(32 - 8 * size) if size < 4 else values
    if size == 8:
        return np.frombuffer(data, dtype=">u8").astype(np.uint64)
    wide = np.zeros((n, 8), dtype=np.uint8)
    wide[:, :size] = np.frombuffer(data, dtype=np.uint8).reshape(n, size)
    return wide.view(">u8")[:, 0].astype(np.uint64)


def _split(window: np.ndarray, widths: list[int] | tuple[int, ...]) -> list[np.ndarray]:
    """Cut left-aligned windows (``uint32`` or ``uint64``) into consecutive fields."""
    kind = window.dtype.type
    total = 8 * window.dtype.itemsize
    out = []
    used = 0
    for width in widths:
        if width == 0:
            out.append(np.zeros(window.size, dtype=kind))
            continue
        field = (window << kind(used)) if used else window
        out.append(field >> kind(total - width))
        used += width
    return out
