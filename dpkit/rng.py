"""Randomness policy: a secure source by default, a seeded one for teaching.

Every sampling function in :mod:`dpkit` takes ``rng=None``:

* ``None`` means :func:`default`, a :class:`SecureRandom` that reads the operating
  system's cryptographically secure generator (:func:`os.urandom`). Use it for real releases.
* :func:`seeded` returns a :class:`SeededRandom`: the same seed gives the same stream, so a
  chapter shows the same numbers on every build and a test is repeatable. **A seeded source
  is unfit for real releases**: anyone who knows or guesses the seed can reproduce the
  noise and subtract it.

Both are :class:`RandomSource` objects. A source produces uniformly random *bytes*; every
other draw (bits, bounded integers, exact Bernoulli trials, uniform floats) is built from
those bytes here, so exact samplers consume random bits and never floats.

**Copies never replay secure bytes.** A :class:`SecureRandom` buffers bytes read from the
operating system. A copy (``copy.copy``, ``copy.deepcopy``) or an unpickled copy (what
``ProcessPoolExecutor``, ``multiprocessing`` with *spawn* and ``joblib`` do with an
``rng=default()`` argument) starts with an empty buffer and reads fresh bytes from the
operating system, exactly like a child created by ``os.fork``. Otherwise two workers would
add the *same* noise to their answers, and subtracting two releases would reveal the
difference of the true values. A :class:`SeededRandom` copy, by contrast, continues the same
stream (it replays): reproducibility is its purpose.

Examples
--------
>>> from dpkit.rng import seeded
>>> source = seeded(7)
>>> source.bits(8) == seeded(7).bits(8)
True
"""

from __future__ import annotations

import math
import os
import weakref
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer

__all__ = ["RandomSource", "SecureRandom", "SeededRandom", "default", "resolve", "seeded"]

_POOL_BYTES = 64  # bytes drawn at once to refill the bit pool


class RandomSource:
    """A source of uniformly random bytes, and the draws dpkit builds from them.

    Subclasses implement :meth:`bytes`; the other methods are exact transformations of
    those bytes. Small draws (:meth:`bits`, :meth:`randbelow`) come from a pool of buffered
    bits, so drawing one bit at a time is cheap.
    """

    #: Whether the source is fit for real releases (cryptographically secure).
    secure: bool = False

    def __init__(self) -> None:
        self._pool = 0
        self._pool_bits = 0
        _SOURCES.add(self)

    def bytes(self, n: int) -> bytes:
        """Return ``n`` uniformly random bytes."""
        raise NotImplementedError

    def _forget(self) -> None:
        """Drop buffered randomness (called in a child process after ``fork``)."""
        self._pool = 0
        self._pool_bits = 0

    def bits(self, k: int) -> int:
        """Return a uniformly random integer in ``[0, 2**k)`` (``k`` random bits).

        Raises
        ------
        TypeError, ValueError
            If ``k`` is not an integer >= 0.
        """
        k = check_integer(k, "k", minimum=0)
        if k > self._pool_bits:
            if k > 8 * _POOL_BYTES:
                return int.from_bytes(self.bytes((k + 7) // 8), "little") >> (-k % 8)
            fresh = int.from_bytes(self.bytes(_POOL_BYTES), "little")
            self._pool |= fresh << self._pool_bits
            self._pool_bits += 8 * _POOL_BYTES
        result = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._pool_bits -= k
        return result

    def randbelow(self, n: int) -> int:
        """Return a uniformly random integer in ``[0, n)``, exactly (rejection sampling).

        Raises
        ------
        TypeError, ValueError
            If ``n`` is not an integer >= 1.
        """
        n = check_integer(n, "n", minimum=1)
        k = (n - 1).bit_length()
        while True:
            value = self.bits(k)
            if value < n:
                return value

    def bernoulli(self, p: Fraction | int) -> bool:
        """Return ``True`` with probability exactly ``p`` (a rational in [0, 1]).

        Raises
        ------
        TypeError
            If ``p`` is not an ``int`` or :class:`fractions.Fraction`.
        ValueError
            If ``p`` is outside [0, 1].
        """
        if isinstance(p, bool) or not isinstance(p, (int, Fraction)):
            raise TypeError(f"p must be an int or fractions.Fraction (exact), got "
                            f"{p!r} of type {type(p).__name__}")
        if not 0 <= p <= 1:
            raise ValueError(f"p must be a probability in [0, 1], got {p}")
        p = Fraction(p)
        return self.randbelow(p.denominator) < p.numerator

    def uniform(self) -> float:
        """Return a uniform float in [0, 1): a random multiple of 2**-53."""
        return self.bits(53) * 2.0**-53

    def uint64(self, size: int | tuple[int, ...]) -> np.ndarray:
        """Return an array of uniformly random 64-bit unsigned integers."""
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        count = math.prod(int(side) for side in shape)
        return np.frombuffer(self.bytes(8 * count), dtype="<u8").reshape(shape).copy()

    def uniforms(self, size: int | tuple[int, ...]) -> np.ndarray:
        """Return an array of uniform floats in [0, 1), each a random multiple of 2**-53."""
        return (self.uint64(size) >> np.uint64(11)).astype(np.float64) * 2.0**-53

    def numpy_generator(self) -> np.random.Generator:
        """Return a NumPy generator seeded with 256 bits from this source.

        For :mod:`dpkit.naive` and plotting only: NumPy's generators are fast but not
        cryptographically secure, and their float samplers are what the attacks exploit.
        """
        return np.random.Generator(np.random.PCG64(int.from_bytes(self.bytes(32), "little")))


class SecureRandom(RandomSource):
    """Random bytes from the operating system's CSPRNG (:func:`os.urandom`).

    Bytes are read in blocks and buffered; a child process created by ``fork`` drops the
    buffer, so parent and child never share random bytes.

    Copying and pickling are allowed and safe: a copy or an unpickled source is a new
    :class:`SecureRandom` with an empty buffer and bit pool (registered, like every source,
    for the ``fork`` handler), so it draws fresh bytes from the operating system. Copying is
    not refused because passing ``rng=default()`` to worker processes is natural and, with
    fresh bytes, correct: the source has no state worth preserving beyond its cache.

    Examples
    --------
    >>> import copy, pickle
    >>> source = SecureRandom()
    >>> _ = source.bits(8)                      # fills the buffer and the bit pool
    >>> twin = pickle.loads(pickle.dumps(source))
    >>> twin._buffer, twin._pool_bits, copy.deepcopy(source)._pool_bits
    (b'', 0, 0)
    """

    secure = True
    _BLOCK = 4096

    def __init__(self) -> None:
        super().__init__()
        self._buffer = b""
        self._offset = 0

    def _forget(self) -> None:
        super()._forget()
        self._buffer = b""
        self._offset = 0

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # copy, deepcopy and pickle all rebuild a fresh source: no buffered byte is copied.
        return (SecureRandom, ())

    def bytes(self, n: int) -> bytes:
        n = check_integer(n, "n", minimum=0)
        if n > self._BLOCK:
            return os.urandom(n)
        if self._offset + n > len(self._buffer):
            self._buffer = os.urandom(self._BLOCK)
            self._offset = 0
        chunk = self._buffer[self._offset:self._offset + n]
        self._offset += n
        return chunk

    def __repr__(self) -> str:
        return "SecureRandom()"


class SeededRandom(RandomSource):
    """A reproducible stream of random bytes (NumPy's PCG64) for teaching and tests.

    **Unfit for real releases**: the noise it produces can be reproduced from the seed.

    A copy or an unpickled copy continues from the same point of the stream, so it
    **replays** the draws the original makes next (on purpose: that is what reproducibility
    means). Never hand copies of one seeded source to workers whose releases are published.

    Examples
    --------
    >>> import copy
    >>> source = seeded(3)
    >>> copy.deepcopy(source).bits(16) == source.bits(16)
    True
    """

    secure = False

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = check_integer(seed, "seed", minimum=0)
        self._generator = np.random.Generator(np.random.PCG64(self.seed))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        state = (self.seed, self._generator.bit_generator.state, self._pool, self._pool_bits)
        return (_restore_seeded, state)

    def bytes(self, n: int) -> bytes:
        return self._generator.bytes(check_integer(n, "n", minimum=0))

    def __repr__(self) -> str:
        return f"SeededRandom(seed={self.seed})"


def _restore_seeded(seed: int, state: dict[str, Any], pool: int, pool_bits: int) -> SeededRandom:
    """Rebuild a :class:`SeededRandom` at the same point of its stream (copy and unpickle)."""
    source = SeededRandom(seed)
    source._generator.bit_generator.state = state
    source._pool, source._pool_bits = pool, pool_bits
    return source


_SOURCES: weakref.WeakSet[RandomSource] = weakref.WeakSet()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: [s._forget() for s in list(_SOURCES)])

_DEFAULT = SecureRandom()


def default() -> SecureRandom:
    """Return the shared secure source used when a sampler gets ``rng=None``."""
    return _DEFAULT


def seeded(seed: int) -> SeededRandom:
    """Return a reproducible source for teaching and tests. **Not for real releases.**

    Parameters
    ----------
    seed : int
        A non-negative integer; the same seed gives the same stream.

    Raises
    ------
    TypeError, ValueError
        If ``seed`` is not an integer >= 0.
    """
    return SeededRandom(seed)


def resolve(rng: Any) -> RandomSource:
    """Return the source a sampler should use for its ``rng`` argument.

    Parameters
    ----------
    rng : None or RandomSource
        ``None`` selects the secure default source.

    Raises
    ------
    TypeError
        If ``rng`` is anything else (a seed or a NumPy generator included: wrap a seed
        with :func:`seeded`).
    """
    if rng is None:
        return _DEFAULT
    if isinstance(rng, RandomSource):
        return rng
    raise TypeError(f"rng must be None (secure default) or a dpkit.rng.RandomSource such as "
                    f"dpkit.rng.seeded(42), got {rng!r} of type {type(rng).__name__}")
