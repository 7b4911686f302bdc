"""The secure source: ChaCha20 (dpkit's default) beside ``os.urandom`` (its former source).

Measured in one process, in :data:`ROUNDS` rounds; each round times every row (the smallest
CPU time, user + system, of :data:`REPEATS` runs, so that other jobs on a shared machine
distort it as little as possible) and computes the ratios *within the round*; the table
prints the median of each ratio over the rounds, and the load average at the start and the
end.

* Throughput: ``SecureRandom().bytes(n)`` against :class:`UrandomSource` (the former
  ``SecureRandom``: ``os.urandom`` in 4096-byte blocks, buffered, larger requests read
  directly, with the same argument check) and against bare ``os.urandom(n)``, for requests
  of 64 bytes (what the bit pool takes at a time), 4096 bytes (the largest request served
  from a buffer) and 1 MiB (what the vector samplers ask for at a time). ``SecureRandom``
  pays a refill of 16 KiB (a new key: about as much as computing 16 KiB) every 16 KiB of
  small requests; a larger request gets keystream of its own.
* Releases: ``laplace_mechanism`` and ``gaussian_mechanism`` on a vector of :data:`N`
  values, inside :func:`dpkit.timing.unpadded` (the work, not the padding to the
  deadline), with the ChaCha20 source and with :class:`UrandomSource`, as a ratio to
  NumPy's ``laplace`` / ``normal`` on the same vector (float noise, unsafe: the speed
  limit, not a competitor), higher is faster; and scalar releases (one value).

Run: ``.venv/bin/python benchmarks/secure_source.py`` (about a minute on a quiet 2-core
machine).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable

import numpy as np
from noise import best_time  # the same CPU-time measure (run as a script: benchmarks/ on the path)

from dpkit._checks import check_integer
from dpkit.gaussian import analytic_sigma, gaussian_mechanism
from dpkit.laplace import laplace_mechanism
from dpkit.rng import RandomSource, SecureRandom
from dpkit.timing import unpadded

ROUNDS = 5
REPEATS = 5
N = 10**5
SCALAR_CALLS = 500
EPSILON, DELTA, SENSITIVITY = 1.0, 1e-6, 1.0
THROUGHPUT_BYTES = 1 << 24  # bytes read per throughput run


class UrandomSource(RandomSource):
    """The former secure source: ``os.urandom`` in 4096-byte blocks, buffered; a larger
    request is read directly. For comparison only (copies and fork children would share
    its buffer: it is not dpkit's source any more)."""

    secure = False
    _BLOCK = 4096

    def __init__(self) -> None:
        super().__init__()
        self._buffer, self._offset = b"", 0

    def bytes(self, n: int) -> bytes:
        n = check_integer(n, "n", minimum=0)
        if n > self._BLOCK:
            return os.urandom(n)
        with self._lock:
            if self._offset + n > len(self._buffer):
                self._buffer, self._offset = os.urandom(self._BLOCK), 0
            chunk = self._buffer[self._offset:self._offset + n]
            self._offset += n
        return chunk


def throughput(read: Callable[[int], bytes], block: int) -> float:
    """Bytes per CPU second of ``read(block)`` called until :data:`THROUGHPUT_BYTES`."""
    count = max(1, THROUGHPUT_BYTES // block)
    return count * block / best_time(lambda: [read(block) for _ in range(count)], repeats=3)


def one_round() -> dict[str, float]:
    """Every measurement of the table once; ratios computed within the round."""
    chacha, urandom = SecureRandom(), UrandomSource()
    out: dict[str, float] = {}
    for block in (64, 4096, 1 << 20):
        fast, former = throughput(chacha.bytes, block), throughput(urandom.bytes, block)
        raw = throughput(os.urandom, block)
        out[f"MB/s SecureRandom (ChaCha20), {block} B requests"] = fast / 1e6
        out[f"MB/s former SecureRandom, {block} B requests"] = former / 1e6
        out[f"MB/s os.urandom({block})"] = raw / 1e6
        out[f"ChaCha20 / former, {block} B requests"] = fast / former
    values = np.full(N, 0.5)
    generator = np.random.default_rng(0)
    sigma = analytic_sigma(SENSITIVITY, EPSILON, DELTA)
    cases = {
        "laplace": (lambda r: laplace_mechanism(values, SENSITIVITY, EPSILON, rng=r),
                    lambda: values + generator.laplace(0.0, SENSITIVITY / EPSILON, N),
                    lambda r: laplace_mechanism(0.5, SENSITIVITY, EPSILON, rng=r)),
        "gaussian": (lambda r: gaussian_mechanism(values, SENSITIVITY, EPSILON, DELTA, rng=r),
                     lambda: values + generator.normal(0.0, sigma, N),
                     lambda r: gaussian_mechanism(0.5, SENSITIVITY, EPSILON, DELTA, rng=r)),
    }
    with unpadded():
        for name, (release, numpy_noise, scalar) in cases.items():
            numpy_time = best_time(numpy_noise)
            for label, source in (("ChaCha20", chacha), ("os.urandom", urandom)):
                release(source)  # tables and calibrations are cached after one call
                out[f"{name} 10^5, {label}: × NumPy's speed"] = numpy_time / best_time(
                    lambda s=source, f=release: f(s))
                scalar(source)
                out[f"{name} scalar, {label}: µs per release"] = 1e6 * best_time(
                    lambda s=source, f=scalar: [f(s) for _ in range(SCALAR_CALLS)]
                ) / SCALAR_CALLS
    return out


def main() -> None:
    load_start = os.getloadavg()
    rounds = [one_round() for _ in range(ROUNDS)]
    load_end = os.getloadavg()
    print(f"secure source: median of {ROUNDS} rounds (each the best of {REPEATS} CPU times), "
          f"vectors of {N:,}; load average {load_start[0]:.1f} at the start, "
          f"{load_end[0]:.1f} at the end (2-core machine: above 2 means contention)")
    print(f"{'measure':<52} {'median':>9} {'min':>9} {'max':>9}")
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        print(f"{key:<52} {statistics.median(values):>9.2f} {min(values):>9.2f} "
              f"{max(values):>9.2f}")


if __name__ == "__main__":
    main()
