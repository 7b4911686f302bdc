"""Read exactly as many random bits as a vectorised sampler uses.

:func:`read_fields` draws ``ceil(n·K/8)`` fresh bytes from a :class:`~dpkit.rng.RandomSource`
for ``n`` records of ``K = sum(widths)`` bits each and returns each record's fields as
unsigned integer arrays. Each bit of those bytes goes to at most one field, and at most 7
bits of a call are left over (they are discarded: the reader keeps no state, so a copied
source can never replay bits through it).

Layout (what a test can reproduce bit for bit): a record of whole bytes (at most 8) is
read as those bytes, big-endian, one record after the other; a record of ``8B + r < 64``
bits takes ``B`` whole bytes from the front of the string and its last ``r`` bits from
``r`` bit planes after them (see :func:`_bytes_and_planes`); a record longer than 64 bits
lies contiguously in the bit string and is read in chunks of at most 64 bits, each as one
window of two neighbouring big-endian words shifted together. Fields are then split off
with a shift and a mask each, a few NumPy passes per record whatever the widths.

:func:`mask` turns a condition computed from random bits or drawn values into an all-ones
or all-zeros integer per element, so that the samplers select between values with ``&``,
``|`` and ``^`` rather than :func:`numpy.where`, whose loop branches on each condition
(its cost then depends on the pattern of the condition, through branch mispredictions).

Examples
--------
>>> from dpkit.rng import seeded
>>> high, low = read_fields(seeded(0), 4, (3, 5))
>>> bool(high.max() < 8 and low.max() < 32)
True
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import DTypeLike

from dpkit.rng import RandomSource

__all__ = ["bernoulli_dyadic", "mask", "read_fields"]

_ONE = np.uint64(1)
# a field of ``w`` bits: the smallest unsigned dtype holding it (uint8 for 0 to 8 bits)
_FIELD_DTYPES = tuple(np.min_scalar_type((1 << width) - 1) for width in range(65))


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


def mask(condition: np.ndarray, dtype: DTypeLike = np.int64) -> np.ndarray:
    """All ones where ``condition`` holds, 0 elsewhere: a selection mask computed without a
    branch per element.

    ``x & mask(c) | y & ~mask(c)`` is ``x`` where ``c`` and ``y`` elsewhere, in the same
    vectorised passes whatever the pattern of ``c`` (:func:`numpy.where` runs a branch per
    element, whose mispredictions make its cost depend on that pattern: breaker review 19).

    Parameters
    ----------
    condition : numpy.ndarray of bool
        The condition, any shape.
    dtype : integer dtype, optional
        The mask's dtype (default ``int64``): all ones is ``-1`` for a signed type and the
        largest value for an unsigned one.

    Returns
    -------
    numpy.ndarray
        A new array of ``condition``'s shape and of ``dtype``.

    Examples
    --------
    >>> mask(np.array([True, False, True]), np.uint8).tolist()
    [255, 0, 255]
    >>> (np.array([5, 6]) | mask(np.array([False, True]))).tolist()    # -1 where True
    [5, -1]
    """
    out = condition.view(np.uint8).astype(dtype)
    np.negative(out, out=out)
    return out


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
        of the others (a width-0 field is all zeros), of the smallest unsigned integer dtype
        holding ``width`` bits (``uint8`` up to 8 bits, then ``uint16``, ``uint32``, ``uint64``).

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
        return [np.zeros(n, dtype=_FIELD_DTYPES[w]) for w in widths]
    if record in (8, 16, 32):                   # whole small words: uint32 arithmetic
        return _split(_small_words(rng.read(nbytes), record // 8), widths)
    if record <= 64:                            # whole bytes, then bit planes
        return _split(_bytes_and_planes(rng.read(nbytes), n, record), widths)
    padding = (-nbytes) % 8 + 8                 # whole words, plus one word of zeros
    words = np.frombuffer(rng.read(nbytes) + bytes(padding), dtype=">u8").astype(np.uint64)
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


def _small_words(data: bytes, size: int) -> np.ndarray:
    """Records of 1, 2 or 4 bytes as left-aligned ``uint32`` windows (half the traffic)."""
    values = np.frombuffer(data, dtype=f">u{size}").astype(np.uint32)
    return values << np.uint32(32 - 8 * size) if size < 4 else values


def _bytes_and_planes(data: bytes, n: int, record: int) -> np.ndarray:
    """Records of at most 64 bits as left-aligned ``uint64`` windows.

    The first ``n·B`` bytes (``B = record // 8``) hold each record's leading ``8B`` bits,
    record ``i`` in bytes ``[i·B, (i + 1)·B)``; the remaining ``n·r`` bits (``r = record % 8``)
    hold the records' last ``r`` bits as ``r`` planes: bit ``j`` of record ``i``'s tail is
    bit ``j·n + i`` of that bit string. The bytes are read as overlapping big-endian words
    (stride ``B``, one pass); bits past the record are cleared, or shifted out by
    :func:`_split`. The planes take one :func:`numpy.unpackbits`.
    """
    whole, rest = divmod(record, 8)
    buffer = np.frombuffer(data + bytes(8), dtype=np.uint8)
    if whole:
        window = np.ndarray((n,), dtype=">u8", buffer=buffer, strides=(whole,)).astype(np.uint64)
    else:
        window = np.zeros(n, dtype=np.uint64)
    if rest:
        if whole:
            window &= ~np.uint64((1 << (64 - 8 * whole)) - 1)
        planes = np.unpackbits(buffer[n * whole:], count=n * rest).reshape(rest, n)
        tail = planes[0].copy()                 # the r tail bits, assembled in uint8
        for plane in planes[1:]:
            tail <<= 1
            tail |= plane
        tail_bits = tail.astype(np.uint64)
        tail_bits <<= np.uint64(64 - record)    # in place: one fresh array, not two
        window |= tail_bits
    return window


def _split(window: np.ndarray, widths: list[int] | tuple[int, ...]) -> list[np.ndarray]:
    """Cut left-aligned windows (``uint32`` or ``uint64``) into consecutive fields.

    A field ending ``shift`` bits above the window's end is ``window >> shift`` (into one
    scratch array shared by the fields) with the bits above the field masked off, the mask
    writing the field's own, smallest, dtype; the first field, at the top of the window,
    needs only the shift, and one ending at the window's end only the mask. Narrow fields
    mean fewer fresh pages of memory, which cost more than the passes themselves.
    """
    kind = window.dtype.type
    total = 8 * window.dtype.itemsize
    out = []
    used = 0
    scratch = None
    for width in widths:
        dtype = _FIELD_DTYPES[width]
        shift = total - used - width
        if width == 0:
            field = np.zeros(window.size, dtype=dtype)
        elif not used and dtype == window.dtype:
            field = window >> kind(shift)
        elif not used:
            field = np.empty(window.size, dtype=dtype)
            np.right_shift(window, kind(shift), out=field, casting="unsafe")
        else:
            field = np.empty(window.size, dtype=dtype)
            source = window
            if shift:
                if scratch is None:
                    scratch = np.empty_like(window)
                source = np.right_shift(window, kind(shift), out=scratch)
            np.bitwise_and(source, kind((1 << width) - 1), out=field, casting="unsafe")
        out.append(field)
        used += width
    return out


def bernoulli_dyadic(fractions: np.ndarray, rng: RandomSource) -> np.ndarray:
    """Return independent booleans, ``True`` with probability exactly ``fractions[i]``.

    Each ``fractions[i]`` is a double in ``[0, 1)``, hence a dyadic rational. A uniform
    ``U = 0.u1u2u3…`` (binary) is compared with ``f = 0.f1f2f3…``: the first 64 bits of
    ``U`` come from :meth:`RandomSource.uint64`, one call of ``8·fractions.size`` bytes
    whatever the values (``f = 0`` reads and compares its 64 bits like any other and gives
    ``False``); only on a tie of those 64 bits with a part of ``f`` that goes on beyond them
    (probability below ``2**-64`` per value, whatever ``f``) are more bits drawn, through
    :meth:`RandomSource.bernoulli` on the exact remainder. ``U < f`` has probability
    exactly ``f``. The operations are the same vectorised passes whatever the values: two
    multiplications by ``2**32`` (exact: a power of two, and no overflow), floors and
    subtractions (exact for non-negative values below ``2**32``).

    Parameters
    ----------
    fractions : numpy.ndarray of float64, shape (n,)
        The probabilities, each in ``[0, 1)`` (not checked: the caller's invariant).
    rng : RandomSource
        The source of the ``8n`` bytes (and, on a tie, of the remainder's bits).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> bernoulli_dyadic(np.array([0.0, 0.5, 0.0]), seeded(0))[[0, 2]].tolist()
    [False, False]
    """
    scaled = fractions * 2.0**32                   # exact scalings and splits
    top = np.floor(scaled)
    scaled -= top
    scaled *= 2.0**32
    bottom = np.floor(scaled)
    scaled -= bottom                               # f = (top·2**32 + bottom + rest) / 2**64
    threshold = top.astype(np.uint64)
    threshold <<= np.uint64(32)
    threshold |= bottom.astype(np.uint64)
    draws = rng.uint64(fractions.size)
    result = draws < threshold
    for i in np.flatnonzero((draws == threshold) & (scaled > 0)):
        result[i] = rng.bernoulli(Fraction(float(scaled[i])))
    return result
