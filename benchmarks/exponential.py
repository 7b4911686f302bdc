"""Time per sample of the exact base-2 exponential mechanism against the naive float one.

Utility ``u(o) = o`` for ``n = 10^3 … 10^6`` outcomes, ε = 1 (``Eta.from_epsilon(1.0)``,
utility bounds ``[0, n]``). Baseline, measured in the same run:
``dpkit.naive.exponential_mechanism`` (NumPy ``exp``, division by the sum, ``cumsum``, a
float uniform — fast and unsafe). Columns:

* ``fast``: ``base2_exponential_mechanism`` (default ``method="fast"``), with the secure
  default source: exact, decided by rigorous double-precision bounds;
* ``fallback``: the same sampler forced past its double-precision level (MPFR bounds at 256
  bits decide), i.e. the cost of the rare draws whose uniform point lands within about
  ``n·2**-52`` of a boundary; ``P(fallback)`` is the probability of such a draw
  (:func:`dpkit._exponential_sampling.handover_probability`), so the fallback adds
  ``P(fallback) × fallback`` to the expected time;
* ``full``: ``method="full"``, Ilvento's full-precision algorithm, ``Θ(n²)`` bit operations
  (measured up to ``n = 10^5``, a single draw there).

Each time is the best of several draws. Goals (issue 4): ``fast`` ≤ 2 s at ``n = 10^6`` and
within 20× of ``naive`` at ``n = 10^5``.

Run: ``.venv/bin/python benchmarks/exponential.py``
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dpkit import _exponential_sampling as sampling
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.naive import exponential_mechanism
from dpkit.rng import seeded

EPSILON = 1.0
SIZES = (10**3, 10**4, 10**5, 10**6)
FULL_LIMIT = 10**5           # Θ(n²): about 180 s per draw at n = 10^6
FALLBACK_LIMIT = 10**6


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    eta = Eta.from_epsilon(EPSILON)
    numerator, exponent = eta.reduced()
    rng = seeded(0)
    print(f"u(o) = o, ε = {EPSILON:g}, {eta}; seconds per sample (best of several draws)")
    header = (f"{'n':>9} {'naive':>10} {'fast':>10} {'ratio':>7} {'fallback':>10} "
              f"{'ratio':>7} {'P(fallback)':>12} {'full':>10} {'ratio':>8}")
    print(header)
    print("-" * len(header))
    for n in SIZES:
        u = np.arange(n, dtype=float)
        repeats = 20 if n <= 10**4 else 5
        naive = best_time(lambda u=u: exponential_mechanism(u, EPSILON, rng=rng), repeats)
        fast = best_time(lambda u=u, n=n: base2_exponential_mechanism(
            u, eta, utility_min=0, utility_max=n), repeats)
        cells = [f"{n:>9,}", f"{naive:>10.2e}", f"{fast:>10.2e}", f"{fast / naive:>7.1f}"]
        if n <= FALLBACK_LIMIT:
            k = np.arange(n, dtype=np.int64)
            fallback = best_time(lambda k=k: sampling.fast_sample(
                k, numerator, exponent, rng, precision=None, start="mp"),
                3 if n < 10**5 else 1)
            cells += [f"{fallback:>10.2e}", f"{fallback / naive:>7.0f}"]
        else:
            cells += [f"{'—':>10}", f"{'':>7}"]
        handover = sampling.handover_probability(np.arange(n, dtype=np.int64), numerator,
                                                 exponent)
        cells.append(f"{handover:>12.1e}")
        if n <= FULL_LIMIT:
            full = best_time(lambda u=u, n=n: base2_exponential_mechanism(
                u, eta, utility_min=0, utility_max=n, rng=rng, method="full"),
                3 if n < 10**5 else 1)
            cells += [f"{full:>10.2e}", f"{full / naive:>8.0f}"]
        else:
            cells += [f"{'—':>10}", f"{'':>8}"]
        print(" ".join(cells))
    print("ratio = time / naive time in the same run; '—': not measured (too slow).")


if __name__ == "__main__":
    main()
