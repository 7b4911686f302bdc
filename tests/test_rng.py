"""dpkit.rng: the secure default, seeded reproducibility, and exactness of derived draws.

Statistical tests use fixed seeds; each states its false-failure probability.
"""

import copy
import hashlib
import multiprocessing
import os
import pickle
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction

import numpy as np
import pytest
from forking import in_fork_child, needs_fork  # tests/ is on sys.path under pytest
from scipy import stats

from dpkit import rng
from dpkit._samplers.base2 import CountingSource
from dpkit.laplace import laplace_mechanism

FALSE_FAILURE = 1e-7  # per statistical test; the seeds are fixed, so a pass is repeatable


def test_default_is_secure_and_shared():
    source = rng.resolve(None)
    assert source is rng.default() and source.secure
    assert isinstance(source, rng.SecureRandom)


def test_seeded_is_reproducible_and_labelled_insecure():
    a, b = rng.seeded(11), rng.seeded(11)
    assert [a.bits(13) for _ in range(50)] == [b.bits(13) for _ in range(50)]
    assert a.uint64(4).tolist() == b.uint64(4).tolist()
    assert not a.secure
    assert rng.seeded(12).bits(64) != rng.seeded(11).bits(64)


@pytest.mark.parametrize("bad", [42, np.random.default_rng(0), "secure"])
def test_resolve_refuses_other_objects(bad):
    with pytest.raises(TypeError, match=r"rng must be None .* dpkit.rng.seeded\(42\)"):
        rng.resolve(bad)


def test_seed_validation():
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        rng.seeded(-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        rng.seeded(1.5)


def test_bits_range_and_sizes():
    source = rng.seeded(1)
    assert source.bits(0) == 0
    for k in (1, 7, 64, 511, 512, 513, 5000):
        assert 0 <= source.bits(k) < 2**k
    # large draws really use all their bits
    assert max(source.bits(5000) for _ in range(20)).bit_length() > 4990
    with pytest.raises(ValueError):
        source.bits(-1)


@pytest.mark.parametrize("make", [lambda: rng.seeded(3), rng.SecureRandom])
def test_randbelow_is_uniform(make):
    # chi-square goodness of fit over n = 7 cells; the secure source is unseeded, so its
    # test relies on the stated false-failure probability alone.
    source = make()
    draws = [source.randbelow(7) for _ in range(70_000)]
    assert min(draws) == 0 and max(draws) == 6
    counts = np.bincount(draws, minlength=7)
    assert stats.chisquare(counts).pvalue > FALSE_FAILURE


def test_bits_are_unbiased():
    source = rng.seeded(5)
    ones = sum(bin(source.bits(64)).count("1") for _ in range(20_000))
    n = 64 * 20_000
    assert stats.binomtest(ones, n, 0.5).pvalue > FALSE_FAILURE


def test_bernoulli_is_exact_rational():
    source = rng.seeded(8)
    p = Fraction(1, 3)
    hits = sum(source.bernoulli(p) for _ in range(30_000))
    assert stats.binomtest(hits, 30_000, 1 / 3).pvalue > FALSE_FAILURE
    assert source.bernoulli(0) is False and source.bernoulli(1) is True
    with pytest.raises(TypeError, match="exact"):
        source.bernoulli(0.5)
    with pytest.raises(ValueError):
        source.bernoulli(Fraction(3, 2))


def test_uniforms_are_dyadic_and_uniform():
    source = rng.seeded(9)
    u = source.uniforms(100_000)
    assert u.min() >= 0 and u.max() < 1
    assert np.all((u * 2.0**53) == np.floor(u * 2.0**53))
    assert stats.kstest(u, "uniform").pvalue > FALSE_FAILURE
    assert 0 <= source.uniform() < 1


def test_numpy_generator_is_seeded_from_the_source():
    a = rng.seeded(4).numpy_generator().random(3)
    b = rng.seeded(4).numpy_generator().random(3)
    assert a.tolist() == b.tolist()


@needs_fork
def test_fork_does_not_share_buffered_secure_bytes():
    source = rng.SecureRandom()
    source.bits(8)  # fill the buffers
    assert in_fork_child(lambda: source.bits(128)) != source.bits(128)


# -- copies never replay secure bytes (issue 9, finding 1) ---------------------------------

def _used_secure_source():
    source = rng.SecureRandom()
    source.bits(3)  # the buffer and the bit pool now hold unread random bytes
    return source


@pytest.mark.parametrize("duplicate", [
    lambda s: pickle.loads(pickle.dumps(s)), copy.copy, copy.deepcopy])
def test_copies_of_a_secure_source_draw_fresh_bytes(duplicate):
    source = _used_secure_source()
    twin = duplicate(source)
    assert isinstance(twin, rng.SecureRandom) and twin is not source
    assert twin._buffered() == 0 and twin._pool_bits == 0
    assert twin in rng._SOURCES  # registered for the fork handler too
    # 256 fresh bits agree by chance with probability 2**-256
    assert twin.bits(256) != source.bits(256)


def test_default_source_survives_pickling_without_its_buffer():
    rng.default().bits(5)
    twin = pickle.loads(pickle.dumps(rng.default()))
    assert twin._buffered() == 0 and twin._pool_bits == 0 and twin.secure


def test_workers_given_one_secure_source_release_different_noise():
    """Two spawned workers each release laplace_mechanism(0, 1, 1, rng=source).

    With replayed bytes both releases would be equal. Independent releases are equal only
    if two independent discrete Laplace draws with parameter t = ε/D (D ≈ 2**20 grid units)
    coincide: probability sum_z p(z)**2 ≈ t/4 ≈ 2.4e-7 (the false-failure probability).
    """
    source = _used_secure_source()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        futures = [pool.submit(laplace_mechanism, 0, 1, 1, rng=source) for _ in range(2)]
        first, second = (f.result(timeout=120) for f in futures)
    assert first != second


def test_seeded_copies_replay_by_design():
    source = rng.seeded(5)
    source.bits(3)
    for twin in (copy.copy(source), copy.deepcopy(source), pickle.loads(pickle.dumps(source))):
        assert twin.bits(40) == copy.deepcopy(source).bits(40)
        assert twin.seed == 5 and twin in rng._SOURCES
    assert copy.copy(source)._generator is not source._generator


# -- threads never share bits (review finding F5) ------------------------------------------

def _draws_in_threads(draw, threads=4, per_thread=250):
    """Each of ``threads`` threads calls ``draw()`` ``per_thread`` times, started together,
    while a line tracer yields the GIL at every line of :mod:`dpkit.rng` (and the switch
    interval is 1 µs): the threads interleave inside the draws as often as they can.
    Returns the draws and the exceptions raised in the threads."""
    def yield_every_line(frame, event, arg):
        if frame.f_code.co_filename != rng.__file__:
            return None

        def local(frame, event, arg):
            if event == "line":
                time.sleep(0)  # give the GIL to another thread here
            return local
        return local

    results, errors = [[] for _ in range(threads)], []
    start = threading.Barrier(threads)

    def work(i):
        try:
            start.wait()
            results[i].extend(draw() for _ in range(per_thread))
        except Exception as error:  # reported by the test
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threading.settrace(yield_every_line)
    try:
        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        threading.settrace(None)
        sys.setswitchinterval(interval)
    return [value for part in results for value in part], errors


@pytest.mark.parametrize("method", ["bits", "uint64"])
def test_threads_sharing_a_secure_source_never_get_the_same_bits(method):
    """``bits`` takes from the pool, ``uint64`` from SecureRandom's byte buffer: without a
    lock, two threads read the same bits (or a short buffer) before either moves it on.
    1,000 independent 64-bit draws repeat by chance with probability < 1000**2 / 2**65
    ≈ 2.7e-14."""
    source = rng.SecureRandom()
    draw = (lambda: source.bits(64)) if method == "bits" else (lambda: int(source.uint64(1)[0]))
    draws, errors = _draws_in_threads(draw)
    assert errors == []
    assert len(draws) == 1000 and len(set(draws)) == len(draws)


def test_threads_sharing_a_seeded_source_split_its_stream():
    """Four threads drawing from one seeded source get, between them, exactly the draws one
    thread would get: each block of bits goes to one caller (deterministic, no chance)."""
    source = rng.seeded(7)
    draws, errors = _draws_in_threads(lambda: source.bits(40))
    serial = rng.seeded(7)
    assert errors == []
    assert sorted(draws) == sorted(serial.bits(40) for _ in range(1000))


# -- subclasses: no copy and no fork child replays a source's bits (review finding F6) ------

class _UrandomSource(rng.RandomSource):
    """A user's subclass with no state of its own (``secure`` left at its default, False)."""

    def bytes(self, n):
        return os.urandom(n)


class _KeyedSource(rng.RandomSource):
    """A user's secure subclass with state: SHA-256 of a key and a counter; ``_forget``
    rekeys it, as the subclassing contract asks."""

    secure = True

    def __init__(self):
        super().__init__()
        self._forget()

    def _forget(self):
        super()._forget()
        self.key, self.counter = os.urandom(32), 0

    def bytes(self, n):
        with self._lock:
            blocks = []
            for _ in range(-(-n // 32)):
                blocks.append(hashlib.sha256(self.key + self.counter.to_bytes(8, "little"))
                              .digest())
                self.counter += 1
        return b"".join(blocks)[:n]


class _UndeclaredSecureSource(rng.RandomSource):
    """Claims to be secure but says neither how it is copied nor how it is made fresh."""

    secure = True

    def bytes(self, n):
        return os.urandom(n)


DUPLICATES = [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))]


@pytest.mark.parametrize("duplicate", DUPLICATES, ids=["copy", "deepcopy", "pickle"])
@pytest.mark.parametrize("make", [_UrandomSource, _KeyedSource], ids=["urandom", "keyed"])
def test_copies_of_a_subclass_do_not_replay_its_bits(make, duplicate):
    """The pool (and, through ``_forget``, a key) is not copied: 256 fresh bits agree by
    chance with probability 2**-256."""
    source = make()
    source.bits(3)  # the pool now holds 509 unread bits
    twin = duplicate(source)
    assert type(twin) is type(source) and twin._pool_bits == 0 and twin in rng._SOURCES
    assert twin.bits(256) != source.bits(256)


def test_a_copy_of_a_subclass_keeps_its_other_state():
    """Attributes other than the pool and the lock are copied (deep or shallow, as asked)."""
    source = _UrandomSource()
    source.label = ["mine"]
    assert copy.copy(source).label is source.label
    assert copy.deepcopy(source).label == ["mine"]
    assert copy.deepcopy(source).label is not source.label


@pytest.mark.parametrize("duplicate", DUPLICATES, ids=["copy", "deepcopy", "pickle"])
def test_a_secure_subclass_that_does_not_say_how_it_is_copied_is_refused(duplicate):
    source = _UndeclaredSecureSource()
    with pytest.raises(TypeError, match=r"_UndeclaredSecureSource cannot be copied or pickled: "
                                        r"it claims secure=True .* Override _forget\(\)"):
        duplicate(source)


@needs_fork
@pytest.mark.parametrize("make", [
    _UrandomSource, _KeyedSource,
    lambda: copy.deepcopy(_UrandomSource()), lambda: pickle.loads(pickle.dumps(_KeyedSource())),
], ids=["urandom", "keyed", "urandom-copy", "keyed-unpickled"])
def test_fork_children_of_subclasses_and_their_copies_draw_fresh_bits(make):
    """A copy is registered for the fork handler like the original (2**-128 by chance)."""
    source = make()
    source.bits(3)
    assert in_fork_child(lambda: source.bits(128)) != source.bits(128)


def test_seeded_subclass_state_replays_by_design():
    """A non-secure subclass wrapping a seeded source may replay through that state (only
    the pool is dropped): a copy continues the wrapped stream where the original's bytes
    left it."""
    source = CountingSource(rng.seeded(2))
    twin = copy.deepcopy(source)
    assert twin.count == 0 and twin.bytes(16) == source.bytes(16)


# -- the secure source is a ChaCha20 generator with fast key erasure (issue 21) -------------

RFC8439_KEY = bytes(range(32))
RFC8439_NONCE = bytes.fromhex("000000000000004a00000000")
RFC8439_PLAINTEXT = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one "
                     b"tip for the future, sunscreen would be it.")
RFC8439_CIPHERTEXT = bytes.fromhex(  # RFC 8439, section 2.4.2 (initial block counter 1)
    "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
    "5af90bbf74a35be6b40b8eedf2785e42874d")


def test_the_chacha20_wrapper_gives_rfc_8439s_test_vector():
    """A wrong layout of counter and nonce (or a wrong counter) changes every byte."""
    encryptor = rng._chacha20(RFC8439_KEY, RFC8439_NONCE, counter=1)
    assert encryptor.update(RFC8439_PLAINTEXT) == RFC8439_CIPHERTEXT
    with pytest.raises(ValueError, match="32-byte key, a 12-byte nonce"):
        rng._chacha20(RFC8439_KEY, bytes(16))


def _model(key, nonce, requests):
    """What a fast-key-erasure ChaCha20 generator hands out for the byte ``requests``,
    written out independently of :class:`dpkit.rng.SecureRandom`: each key's keystream
    (counter 0) starts with the next key; requests of up to a quarter of the buffer come
    from a buffer of one key's keystream, larger ones get keystream of their own (a new key
    every segment)."""
    size, segment = rng._BUFFER_BYTES, rng._SEGMENT_BYTES

    def stream(n):
        nonlocal key
        keystream = rng._chacha20(key, nonce).update(bytes(32 + n))
        key = keystream[:32]
        return keystream[32:]

    buffer, outputs = b"", []
    for n in requests:
        if n > size // 4:
            outputs.append(b"".join(stream(min(segment, n - i)) for i in range(0, n, segment)))
            continue
        if n > len(buffer):
            buffer = stream(size)
        outputs.append(buffer[:n])
        buffer = buffer[n:]
    return outputs, key


def _keyed_source(key=RFC8439_KEY, nonce=RFC8439_NONCE):
    source = rng.SecureRandom()
    source._key[:] = key  # white box: a known key, to compare with the model
    source._nonce = nonce
    return source


def test_the_default_source_is_the_chacha20_generator():
    """Every request (small ones from the buffer, across refills; large ones across
    segments) gives the model's bytes, and the key held afterwards is the model's."""
    assert type(rng.default()) is rng.SecureRandom
    requests = [5, 64, 4096, 4097, 16_000, 300, rng._SEGMENT_BYTES + 5, 7, 16_384]
    source = _keyed_source()
    expected, key = _model(RFC8439_KEY, RFC8439_NONCE, requests)
    assert [source.bytes(n) for n in requests] == expected
    assert bytes(source._key) == key


def test_bits_and_arrays_are_built_from_the_same_keystream():
    """``bits`` (through the pool, little-endian), ``uint64`` and ``bytes`` read one
    stream, in order."""
    (first, second, third), _ = _model(RFC8439_KEY, RFC8439_NONCE, [64, 16, 3])
    source = _keyed_source()
    assert source.bits(8) == first[0] and source.bits(504) == int.from_bytes(first, "little") >> 8
    assert source.uint64(2).tolist() == np.frombuffer(second, dtype="<u8").tolist()
    assert source.bytes(3) == third


def test_the_state_after_a_draw_does_not_reveal_it():
    """Fast key erasure: the key that produced the buffer is replaced before any byte is
    handed out, and each byte handed out is zeroed in the buffer."""
    source = _keyed_source()
    drawn = source.bytes(100)
    assert bytes(source._key) != RFC8439_KEY
    assert bytes(source._buffer[:100]) == bytes(100)
    future = rng._chacha20(bytes(source._key), RFC8439_NONCE).update(bytes(1 << 15))
    assert drawn not in future and drawn not in bytes(source._buffer)


def test_the_source_reseeds_from_the_operating_system(monkeypatch):
    """After ``_RESEED_BYTES`` of output, 32 bytes from ``os.urandom`` are XORed into the key
    before it is used again; before that, the key evolves by the keystream alone."""
    source = _keyed_source()
    source._output = rng._RESEED_BYTES - 5000
    fresh = bytes(range(100, 132))
    monkeypatch.setattr(os, "urandom", lambda n: fresh[:n])
    (before,), key = _model(RFC8439_KEY, RFC8439_NONCE, [5000])
    assert source.bytes(5000) == before and source._output == rng._RESEED_BYTES
    mixed = bytes(a ^ b for a, b in zip(key, fresh, strict=True))
    (after,), _ = _model(mixed, RFC8439_NONCE, [5000])
    assert source.bytes(5000) == after and source._output == 5000


@pytest.mark.parametrize("duplicate", DUPLICATES, ids=["copy", "deepcopy", "pickle"])
def test_copies_of_the_secure_source_have_their_own_key(duplicate):
    """A copy never holds the original's key or nonce (2**-256 and 2**-96 by chance), and
    its keystream shares no 32-byte block with the original's next 64 KiB."""
    source = _used_secure_source()
    twin = duplicate(source)
    assert twin._key != source._key and twin._nonce != source._nonce
    assert twin.bytes(32) not in source.bytes(1 << 16)


@needs_fork
def test_a_fork_child_rekeys_the_secure_source():
    """The child's key and nonce differ from the parent's, and the parent's next 64 KiB
    hold none of the child's first 32 bytes (chance 2**-240)."""
    source = _used_secure_source()
    child_key, child_nonce, child_bytes = map(bytes.fromhex, in_fork_child(
        lambda: [bytes(source._key).hex(), source._nonce.hex(), source.bytes(32).hex()]))
    assert child_key != bytes(source._key) and child_nonce != source._nonce
    assert child_bytes not in source.bytes(1 << 16)


@needs_fork
def test_a_lent_source_is_not_lendable_in_a_fork_child():
    """A lendable source (the course's lent randomness) rekeys from the OS in a fork child,
    like every source, and then is no longer sent by value: its new key stays in the
    child (breaker, round 7: ``lent_key`` returned the child's OS key)."""
    lent = rng.replayable_secure_source(bytes(32), bytes(12), lendable=True)
    assert rng.lent_key(lent) == (bytes(32), bytes(12))
    in_child = in_fork_child(lambda: [rng.lent_key(lent) is None,
                                      bytes(lent._key) != bytes(32)])
    assert in_child == [True, True]
    assert rng.lent_key(lent) == (bytes(32), bytes(12))     # the parent's is unchanged
