"""Randomness policy: a secure source by default, a seeded one for teaching.

Every sampling function in :mod:`dpkit` takes ``rng=None``:

* ``None`` means :func:`default`, a :class:`SecureRandom`: a ChaCha20 keystream (RFC 8439),
  computed by OpenSSL through the ``cryptography`` package, keyed from the operating system's
  generator (:func:`os.urandom`) and rekeyed after every block it computes. Use it for real
  releases.
* :func:`seeded` returns a :class:`SeededRandom`: the same seed gives the same stream, so a
  chapter shows the same numbers on every build and a test is repeatable. **A seeded source
  is unfit for real releases**: anyone who knows or guesses the seed can reproduce the
  noise and subtract it.

Both are :class:`RandomSource` objects. A source produces uniformly random *bytes*; every
other draw (bits, bounded integers, exact Bernoulli trials, uniform floats) is built from
those bytes here, so exact samplers consume random bits and never floats.

**Why the secure source is secure.** It is a deterministic random bit generator of the kind
operating systems and standards already trust; it only moves the generator from the kernel
into the process, where it saves a system call per block: ``benchmarks/secure_source.py``
measured 8.3 times :func:`os.urandom`'s throughput on 1 MiB requests and 2.7 times on 4 KiB
requests (medians of 5 rounds, in one process, on a loaded 2-core machine).

* The construction is the one of Linux's ``getrandom``/``/dev/urandom`` (a ChaCha20 generator
  since Linux 4.8, reworked in 5.17-5.18: BLAKE2s extraction, fast key erasure) and of
  NIST SP 800-90A's CTR_DRBG (a block cipher in counter mode, keyed from an entropy
  source, whose state is updated after every request): a 256-bit key drawn from the
  operating system, expanded by a stream cipher run in counter mode.
* ChaCha20 (D. J. Bernstein 2008; IETF RFC 8439) is a pseudorandom function of its 256-bit
  key: for an attacker who never sees the key, its keystream cannot be told from uniform
  bytes by any known attack better than guessing the key (2**256 work). A release's noise
  is built from those bytes exactly, so its privacy guarantee holds against any adversary
  who cannot break ChaCha20 (the usual computational caveat of every implemented DP).
* **Fast key erasure** (D. J. Bernstein, "Fast-key-erasure random-number generators",
  blog.cr.yp.to, 2017): each key produces one chunk of keystream (a refill of the buffer,
  at most :data:`_BUFFER_BYTES` bytes, or one large request, at most :data:`_SEGMENT_BYTES`
  bytes per key); the chunk's first 32 bytes replace the key at once and the rest is output.
  The counter therefore never passes 2**15 blocks (far from RFC 8439's 2**32 limit), and no
  key that produced delivered bytes is kept: each buffered byte is overwritten with zeros
  as it is handed out. Someone who reads the source's memory later learns the bytes it has
  not yet handed out, never those it has (forward secrecy; bytes already handed out live on
  where they went, in the caller's objects and in the bit pool until its bits are drawn).
* **Reseeding.** After every :data:`_RESEED_BYTES` bytes of output, 32 fresh bytes from the
  operating system are XORed into the key (as CTR_DRBG reseeds and Linux mixes in new
  entropy), so a source whose state leaked recovers.
* **Never two streams alike.** Every new source, every copy or unpickled copy, and every
  source in a child created by ``os.fork`` draws a new key and nonce from the operating
  system (see below); two sources repeat a keystream only if two 352-bit draws from the
  operating system collide.

Residual risks, stated plainly: the source is only as good as ``os.urandom`` at the moment
it is keyed (on Linux, ``getrandom`` blocks until its pool is initialised, so this matters
only on a system without entropy at boot), and only as good as ChaCha20 and OpenSSL's
implementation of it; a process whose memory is read (a core dump, a debugger, a swapped
page, another process with ``ptrace`` rights) reveals the key and the buffered bytes not
yet handed out, hence the noise of the *next* releases until the next reseed; Python
cannot promise that memory is zeroed: the key and the buffer live in ``bytearray`` objects
that are overwritten in place (and on garbage collection), and OpenSSL cleanses its cipher
contexts when they are freed, but copies an interpreter or allocator makes on its own are
beyond reach. A process that forks without ``os.fork`` (a raw ``fork`` system call from C)
is not seen by the fork handler.

**Copies never replay secure bytes.** A copy (``copy.copy``, ``copy.deepcopy``) or an
unpickled copy of a :class:`SecureRandom` (what ``ProcessPoolExecutor``, ``multiprocessing``
with *spawn* and ``joblib`` do with an ``rng=default()`` argument) is a new source with its
own key from the operating system and an empty buffer, exactly like the source in a child
created by ``os.fork``. Otherwise two workers would add the *same* noise to their answers,
and subtracting two releases would reveal the difference of the true values. A
:class:`SeededRandom` copy, by contrast, continues the same stream (it replays):
reproducibility is its purpose. Subclasses of :class:`RandomSource` follow the rules of
its "Subclassing" section: the bit pool is never copied nor kept across ``fork``, and a
subclass that claims to be secure must say how its own state is made fresh.

**Threads.** Every source may be shared between threads: a draw from the bit pool
(:meth:`RandomSource.bits` and the draws built on it) and :meth:`SecureRandom.bytes` each
take the source's lock, so no two callers ever get the same bits.

References
----------
D. J. Bernstein. *ChaCha, a variant of Salsa20.* 2008. Y. Nir, A. Langley. *ChaCha20 and
Poly1305 for IETF Protocols.* IETF RFC 8439, 2018, section 2.4.
D. J. Bernstein. *Fast-key-erasure random-number generators.* blog.cr.yp.to, 2017-07-23.
E. Barker, J. Kelsey. *Recommendation for Random Number Generation Using Deterministic
Random Bit Generators.* NIST SP 800-90A Rev. 1, 2015, section 10.2 (CTR_DRBG).
T. Ts'o. *random: replace non-blocking pool with a Chacha20-based CRNG* (Linux 4.8, 2016);
J. A. Donenfeld's rework of ``drivers/char/random.c`` (Linux 5.17-5.18, 2022): BLAKE2s
extraction, *random: use simpler fast key erasure flow on per-cpu keys*.

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
from cryptography.hazmat.primitives.ciphers import Cipher as _Cipher
from cryptography.hazmat.primitives.ciphers.algorithms import ChaCha20 as _ChaCha20

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

    def read(self, n: int) -> bytes:
        """Return ``self.bytes(n)``, refused unless it is ``n`` bytes: how dpkit's samplers
        read a source. A subclass overrides :meth:`bytes`; one whose ``bytes`` returns the
        wrong length would otherwise bias the noise or remove it (one byte too many once
        made every scalar Laplace draw decide all its trials 1: breaker review 28).

        Raises
        ------
        ValueError
            If ``self.bytes(n)`` is not ``n`` bytes (a ``bytes`` or ``bytearray``).

        Examples
        --------
        >>> len(seeded(0).read(13))
        13
        >>> class OneTooMany(RandomSource):
        ...     def bytes(self, n):
        ...         return b"\\0" * (n + 1)
        >>> OneTooMany().read(4)
        Traceback (most recent call last):
        ...
        ValueError: rng.bytes(4) must return 4 bytes, got 5 bytes from rng of type OneTooMany
        """
        data = self.bytes(n)
        if not isinstance(data, (bytes, bytearray)) or len(data) != n:
            got = f"{len(data)} bytes" if isinstance(data, (bytes, bytearray)) else \
                f"an object of type {type(data).__name__}"
            raise ValueError(f"rng.bytes({n}) must return {n} bytes, got {got} from rng of "
                             f"type {type(self).__name__}")
        return data

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
                    return int.from_bytes(self.read((k + 7) // 8), "little") >> (-k % 8)
                fresh = int.from_bytes(self.read(_POOL_BYTES), "little")
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
        return np.frombuffer(self.read(8 * count), dtype="<u8").reshape(shape).copy()

    def uniforms(self, size: int | tuple[int, ...]) -> np.ndarray:
        """Return an array of uniform floats in [0, 1), each a random multiple of 2**-53."""
        return (self.uint64(size) >> np.uint64(11)).astype(np.float64) * 2.0**-53

    def numpy_generator(self) -> np.random.Generator:
        """Return a NumPy generator seeded with 256 bits from this source.

        For :mod:`dpkit.naive` and plotting only: NumPy's generators are fast but not
        cryptographically secure, and their float samplers are what the attacks exploit.
        """
        return np.random.Generator(np.random.PCG64(int.from_bytes(self.read(32), "little")))


def _chacha20(key: bytes | bytearray, nonce: bytes, counter: int = 0) -> Any:
    """An encryptor of ChaCha20 (RFC 8439, section 2.4) with a 256-bit ``key``, a 96-bit
    ``nonce`` and a 32-bit initial block ``counter``: its ``update`` XORs the keystream into
    the bytes it is given (so zeros give the keystream itself).

    OpenSSL, and so ``cryptography``, take one 128-bit value: the block counter (32 bits,
    little-endian) followed by the nonce, the layout of RFC 8439's state words 12-15.
    ``tests/test_rng.py`` checks this wrapper against RFC 8439's test vector.
    """
    if len(key) != 32 or len(nonce) != 12 or not 0 <= counter < 2**32:
        raise ValueError(f"ChaCha20 takes a 32-byte key, a 12-byte nonce and a 32-bit counter, "
                         f"got {len(key)}, {len(nonce)} bytes and counter {counter}")
    algorithm = _ChaCha20(key, counter.to_bytes(4, "little") + nonce)
    return _Cipher(algorithm, mode=None).encryptor()


_KEY_BYTES = 32          # a ChaCha20 key
_NONCE_BYTES = 12        # RFC 8439's nonce
_BUFFER_BYTES = 1 << 14  # one refill of SecureRandom's buffer (one key); smaller requests use it
_SEGMENT_BYTES = 1 << 20  # the most keystream one key gives a large request (2**14 blocks)
_RESEED_BYTES = 1 << 30  # output between two reseeds from the operating system
_ZEROS = memoryview(bytes(_SEGMENT_BYTES))  # what the keystream is XORed into


class SecureRandom(RandomSource):
    """A ChaCha20 keystream keyed from the operating system, with fast key erasure.

    A cryptographically secure deterministic random bit generator: the construction, the
    security argument and its residual risks are in the module docstring. A new source takes
    a 256-bit key and a 96-bit nonce from :func:`os.urandom`. Requests of up to
    ``_BUFFER_BYTES // 4`` bytes are served from a buffer of :data:`_BUFFER_BYTES` bytes (one
    key's keystream; each byte is overwritten with zero as it is handed out); a larger
    request gets keystream of its own, a new key for every :data:`_SEGMENT_BYTES`. Each key
    is replaced by the first 32 bytes of the keystream it produces before any byte is handed
    out, and 32 bytes from the operating system are mixed into the key after every
    :data:`_RESEED_BYTES` bytes.

    Safe to share between threads: :meth:`bytes` hands out each byte once, under the
    source's lock. A child process created by ``fork`` rekeys from the operating system
    and drops the buffer, so parent and child never share random bytes.

    Copying and pickling are allowed and safe: a copy or an unpickled source is a new
    :class:`SecureRandom` with its own key from the operating system and an empty buffer and
    bit pool (registered, like every source, for the ``fork`` handler). Copying is not
    refused because passing ``rng=default()`` to worker processes is natural and, with a
    fresh key, correct: the source has no state worth preserving.

    Examples
    --------
    >>> import copy, pickle
    >>> source = SecureRandom()
    >>> _ = source.bits(8)                      # fills the buffer and the bit pool
    >>> twin = pickle.loads(pickle.dumps(source))
    >>> twin._buffered(), twin._pool_bits, copy.deepcopy(source)._buffered()
    (0, 0, 0)
    """

    secure = True

    def __init__(self) -> None:
        super().__init__()
        self._key = bytearray(_KEY_BYTES)
        self._buffer = bytearray(_BUFFER_BYTES)
        self._view = memoryview(self._buffer)
        self._forget()

    def _forget(self) -> None:
        """Drop the pool and the buffer, and take a new key and nonce from the OS."""
        super()._forget()
        self._erase()
        self._key[:] = os.urandom(_KEY_BYTES)
        self._nonce = os.urandom(_NONCE_BYTES)
        self._output = 0  # bytes produced since the last reseed

    def _erase(self) -> None:
        """Overwrite the key and the buffer with zeros; the buffer is then empty."""
        self._key[:] = bytes(len(self._key))
        self._buffer[:] = bytes(len(self._buffer))
        self._offset = len(self._buffer)

    def __del__(self) -> None:
        if hasattr(self, "_buffer"):  # not if __init__ failed before making it
            self._erase()

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # copy, deepcopy and pickle all rebuild a fresh source: no key or byte is copied.
        return (SecureRandom, ())

    def _buffered(self) -> int:
        """The number of bytes in the buffer not yet handed out."""
        return _BUFFER_BYTES - self._offset

    def _keystream(self, n: int, into: bytearray | None = None) -> bytes | None:
        """``n <= _SEGMENT_BYTES`` bytes of keystream from a new key (the caller holds the
        lock): the current key's first 32 bytes become the next key, the following ``n`` are
        returned (or written into ``into``). Reseeds from the OS when it is due."""
        if self._output >= _RESEED_BYTES:
            fresh = os.urandom(_KEY_BYTES)
            for i in range(_KEY_BYTES):
                self._key[i] ^= fresh[i]
            self._output = 0
        encryptor = _chacha20(self._key, self._nonce)
        encryptor.update_into(_ZEROS[:_KEY_BYTES], self._key)  # the old key is gone
        self._output += n
        if into is None:
            return encryptor.update(_ZEROS[:n])
        encryptor.update_into(_ZEROS[:n], into)
        return None

    def bytes(self, n: int) -> bytes:
        if type(n) is not int or n < 0:  # the common case skips the full check
            n = check_integer(n, "n", minimum=0)
        with self._lock:
            if n > _BUFFER_BYTES // 4:
                return b"".join(self._keystream(min(_SEGMENT_BYTES, n - start))
                                for start in range(0, n, _SEGMENT_BYTES))
            start = self._offset
            if start + n > _BUFFER_BYTES:
                self._keystream(_BUFFER_BYTES, into=self._buffer)
                start = 0
            self._offset = start + n
            handed = self._view[start:start + n]
            chunk = handed.tobytes()
            handed[:] = _ZEROS[:n]  # handed out: erased from the buffer
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


#: The sources :func:`replayable_secure_source` made with ``lendable=True`` (a grader's,
#: lent to a student's function): the only :class:`SecureRandom` objects the course's
#: sandbox may send by value (:mod:`dpkit.course.wire`). A source keyed from the operating
#: system never is.
_LENDABLE: weakref.WeakSet[SecureRandom] = weakref.WeakSet()


def replayable_secure_source(key: bytes, nonce: bytes, *,
                             lendable: bool = False) -> SecureRandom:
    """A :class:`SecureRandom` keyed with ``key`` and ``nonce`` instead of the operating
    system's bytes: the same class, attributes and state as a new secure source, but a
    stream its maker can repeat. **Not for real releases**: whoever knows the key knows the
    noise (use :func:`default` or ``SecureRandom()``; for a reproducible simulation,
    :func:`seeded`, whose repr says so). The course's judges lend such sources to a
    student's function, so that it cannot tell a graded call from real use
    (:func:`dpkit.check._common.lent_source`). Its reseeds from the operating system (after
    :data:`_RESEED_BYTES` bytes) are not repeatable, nor is any copy (a copy is a new source
    keyed from the operating system), nor a fork child's.

    Parameters
    ----------
    key : bytes
        The ChaCha20 key, 32 bytes.
    nonce : bytes
        The nonce, 12 bytes.
    lendable : bool, default False
        Whether the course's sandbox may send it by value (:func:`lent_key`) while it has
        drawn nothing.

    Returns
    -------
    SecureRandom

    Raises
    ------
    ValueError
        If ``key`` is not 32 bytes or ``nonce`` is not 12 bytes.

    Examples
    --------
    >>> a = replayable_secure_source(bytes(32), bytes(12))
    >>> b = replayable_secure_source(bytes(32), bytes(12))
    >>> a.bits(64) == b.bits(64)
    True
    """
    if len(key) != _KEY_BYTES or len(nonce) != _NONCE_BYTES:
        raise ValueError(f"a key of {_KEY_BYTES} bytes and a nonce of {_NONCE_BYTES} bytes "
                         f"are needed, got {len(key)} and {len(nonce)}")
    source = SecureRandom()
    source._key[:] = key
    source._nonce = bytes(nonce)
    if lendable:
        _LENDABLE.add(source)
    return source


def lent_key(source: Any) -> tuple[bytes, bytes] | None:
    """The key and nonce of a lendable source (:func:`replayable_secure_source` with
    ``lendable=True``, in this process, before any fork) that has drawn nothing yet, which
    the course's sandbox sends by value; None for any other object, and always for a source
    keyed from the operating system.

    Parameters
    ----------
    source : object

    Returns
    -------
    (bytes, bytes) or None

    Examples
    --------
    >>> lent_key(replayable_secure_source(bytes(32), bytes(12), lendable=True))[1] == bytes(12)
    True
    >>> lent_key(SecureRandom()) is None
    True
    """
    if not (isinstance(source, SecureRandom) and source in _LENDABLE
            and source._buffered() == 0 and source._pool_bits == 0 and source._output == 0):
        return None
    return bytes(source._key), source._nonce


def _restore_seeded(seed: int, state: dict[str, Any], pool: int, pool_bits: int) -> SeededRandom:
    """Rebuild a :class:`SeededRandom` at the same point of its stream (copy and unpickle)."""
    source = SeededRandom(seed)
    source._generator.bit_generator.state = state
    source._pool, source._pool_bits = pool, pool_bits
    return source


def _after_fork_in_child() -> None:
    """In a child created by ``fork``: every source drops its pool (and, through
    :meth:`RandomSource._forget`, its own buffers), and gets a fresh lock (the parent's
    may have been held by a thread that does not exist in the child). A lendable source
    (:func:`replayable_secure_source`) rekeys from the operating system like any other, so
    it is lendable no more: :func:`lent_key` would otherwise send the child's new key over
    the wire."""
    _LENDABLE.clear()
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
