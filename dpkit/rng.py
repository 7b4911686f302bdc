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
stream (it replays): reproducibility is its purpose. Subclasses of :class:`RandomSource`
follow the rules of its "Subclassing" section: the bit pool is never copied nor kept across
``fork``, and a subclass that claims to be secure must say how its own state is made fresh.

**Threads.** Every source may be shared between threads: a draw from the bit pool
(:meth:`RandomSource.bits` and the draws built on it) and :meth:`SecureRandom.bytes` each
take the source's lock, so no two callers ever get the same bits.

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
import threading
import weakref
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer

__all__ = ["RandomSource", "SecureRandom", "SeededRandom", "default", "resolve", "seeded"]

_POOL_BYTES = 64  # bytes drawn at once to refill the bit pool
_NOT_COPIED = frozenset({"_pool", "_pool_bits", "_lock"})  # what no copy of a source gets


def _fresh_pool(source: RandomSource) -> None:
    """Give ``source`` an empty bit pool and a new lock, and register it for the ``fork``
    handler (the one place that sets these, for new sources, copies and fork children)."""
    source._lock = threading.RLock()
    source._pool = 0
    source._pool_bits = 0
    _SOURCES.add(source)


def _blank_source(cls: type[RandomSource]) -> RandomSource:
    """A source of class ``cls`` with an empty pool, before its state is restored (the
    constructor :meth:`RandomSource.__reduce__` names for copies and unpickling)."""
    source = cls.__new__(cls)
    _fresh_pool(source)
    return source


_SOURCES: weakref.WeakSet[RandomSource] = weakref.WeakSet()


class RandomSource:
    """A source of uniformly random bytes, and the draws dpkit builds from them.

    Subclasses implement :meth:`bytes`; the other methods are exact transformations of
    those bytes. Small draws (:meth:`bits`, :meth:`randbelow`) come from a pool of buffered
    bits, so drawing one bit at a time is cheap.

    **Threads.** A source may be shared between threads. Taking bits from the pool, and
    refilling it, is one atomic step under the source's lock (``self._lock``, a reentrant
    lock), so two threads never get the same bits. :meth:`uint64`, :meth:`uniforms` and
    :meth:`numpy_generator` call :meth:`bytes` directly: a subclass whose :meth:`bytes`
    keeps state of its own guards it with ``self._lock`` (as :class:`SecureRandom` does).

    **Subclassing: copies, pickles and fork.** A subclass calls ``super().__init__()``. The
    bit pool is never duplicated: a copy (``copy.copy``, ``copy.deepcopy``), an unpickled
    copy and the source in a child created by ``os.fork`` all start with an empty pool and
    a fresh lock, and then :meth:`_forget` is called on them. By default a copy keeps the
    subclass's other attributes (shallow or deep, as the copy asks); a subclass whose
    :meth:`bytes` depends on state of its own (a buffer, a key, a counter) overrides
    :meth:`_forget` to drop or rekey that state, or defines ``__reduce__`` to say how it is
    rebuilt (:class:`SecureRandom` starts afresh, :class:`SeededRandom` replays on purpose).
    A subclass that claims ``secure = True`` and does neither cannot be copied or pickled
    (``TypeError``): dpkit cannot tell whether a copy of its state would replay its bytes.
    A non-secure subclass (like the seeded sources of teaching and tests) may replay through
    whatever state it keeps; a secure one never may.
    """

    #: Whether the source is fit for real releases (cryptographically secure).
    secure: bool = False

    def __init__(self) -> None:
        _fresh_pool(self)

    def bytes(self, n: int) -> bytes:
        """Return ``n`` uniformly random bytes."""
        raise NotImplementedError

    def _forget(self) -> None:
        """Drop buffered randomness and rekey any state a duplicate must not share.

        Called on a copy or an unpickled copy made by :meth:`__reduce__`, and in a child
        process after ``fork``, once the pool is empty and the lock fresh. The base class
        drops the bit pool; a subclass with state of its own extends it (calling
        ``super()._forget()``).
        """
        self._pool = 0
        self._pool_bits = 0

    def __reduce__(self) -> tuple[Any, tuple[type], dict[str, Any]]:
        """Copy and pickle without the bit pool or the lock (see "Subclassing").

        Raises
        ------
        TypeError
            If the subclass claims ``secure = True`` but overrides neither
            :meth:`_forget` nor ``__reduce__``.
        """
        cls = type(self)
        if self.secure and cls._forget is RandomSource._forget:
            raise TypeError(
                f"{cls.__name__} cannot be copied or pickled: it claims secure=True but does "
                f"not say how a copy is made fresh, and a copy of its state could replay its "
                f"random bytes. Override _forget() to drop or rekey the state its bytes() "
                f"depends on (it is called on every copy and after fork), or define "
                f"__reduce__ to rebuild a fresh source (as dpkit.rng.SecureRandom does)")
        state = {key: value for key, value in self.__dict__.items()
                 if key not in _NOT_COPIED}
        return (_blank_source, (cls,), state)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._forget()

    def bits(self, k: int) -> int:
        """Return a uniformly random integer in ``[0, 2**k)`` (``k`` random bits).

        Thread-safe: the bits are taken from the pool (refilled when needed) under the
        source's lock, so no two calls get the same bits.

        Raises
        ------
        TypeError, ValueError
            If ``k`` is not an integer >= 0.
        """
        k = check_integer(k, "k", minimum=0)
        with self._lock:
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
    buffer, so parent and child never share random bytes. Safe to share between threads:
    :meth:`bytes` hands out each buffered byte once, under the source's lock.

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
        with self._lock:
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


def _after_fork_in_child() -> None:
    """In a child created by ``fork``: every source drops its pool (and, through
    :meth:`RandomSource._forget`, its own buffers), and gets a fresh lock (the parent's
    may have been held by a thread that does not exist in the child)."""
    for source in list(_SOURCES):
        _fresh_pool(source)
        source._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

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
