"""Time per sample of the exact base-2 exponential mechanism against the naive float one.

Two benchmarks, ε = 1 (``Eta.from_epsilon(1.0)``).

**Outcomes.** Utility ``u(o) = o`` for ``n = 10^3 … 10^7`` outcomes, utility bounds
``[0, n]``. Baseline, measured in the same run:
``dpkit.naive.exponential_mechanism`` (NumPy ``exp``, division by the sum, ``cumsum``, a
float uniform — fast and unsafe). Columns:

* ``fast``: ``base2_exponential_mechanism`` (default ``method="fast"``), with the secure
  default source: exact, decided by rigorous double-precision bounds;
* ``fallback``: the same sampler forced past its double-precision and fixed-point levels
  (MPFR bounds at 256 bits decide), i.e. the cost of the rare draws that run past the
  release's deadline; ``P(level 1)`` estimates the probability that the double-precision
  level leaves a draw to the fixed-point level
  (:func:`dpkit._samplers.base2.handover_probability`, these utilities only), and
  ``P(fallback) ≤`` is the bound, for any utilities, that the fixed-point level leaves it
  to MPFR (:func:`dpkit._samplers.fixed_point.fallback_bound`);
* ``full``: ``method="full"``, Ilvento's full-precision algorithm, ``Θ(n²)`` bit operations
  (measured up to ``n = 10^5``, a single draw there).

Each time is the best of several draws. Goals (issue 4): ``fast`` ≤ 2 s at ``n = 10^6`` and
within 20× of ``naive`` at ``n = 10^5``; (issue 13): ``fast`` ≤ 30 ms per draw at
``n = 10^6`` on the machine of the issue, and linear in ``n`` up to ``10^7``. The last lines
print the ms per draw at ``10^6`` and ``time(10^7) / time(10^6)`` (10 is linear) from this
run. ``fallback`` and ``P(level 1)`` are measured up to ``10^6``.

**Utility range** (a smaller version of Ilvento's 2020 benchmark, which uses 1000
outcomes): ten outcomes ``O = {0} ∪ {n + i : i = 1…9}``,
``u(o) = o``, bounds ``[0, n + 9]``, for ``n = 10 … 10^6``: the analytic precision grows as
``Y·n`` bits while the number of outcomes stays fixed. Columns ``fast``, ``full``
(Algorithm 2) and ``search`` (Algorithm 3, random binary search with a dummy outcome), each
also as a ratio to the same sampler's time at ``n = 10`` in the same run, and the mean
random bits per sample of ``full`` and ``search`` (counted with
:class:`dpkit._samplers.base2.CountingSource`, the rounding's 64 bits per outcome left out).

Run: ``.venv/bin/python benchmarks/exponential.py``
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dpkit._samplers import base2 as sampling
from dpkit._samplers.fixed_point import fallback_bound
from dpkit.exponential import Eta, base2_exponential_mechanism, compute_precision
from dpkit.naive import exponential_mechanism
from dpkit.rng import RandomSource, seeded

EPSILON = 1.0
SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
FULL_LIMIT = 10**5           # Θ(n²): about 180 s per draw at n = 10^6
FALLBACK_LIMIT = 10**6


def best_time(fn: Callable[[], object], repeats: int = 5) -> float:
    """Smallest wall time of ``repeats`` calls, in seconds (``benchmarks/svt.py`` uses it too)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def table_head(title: str, header: str) -> None:
    """Print a table's title, its column header and a rule as long as the header."""
    print(title)
    print(header)
    print("-" * len(header))


RANGES = (10, 10**2, 10**3, 10**4, 10**5, 10**6)
SEARCH_LIMIT = 10**5         # the search's exact integers: seconds per draw beyond


def mean_bits(draw: Callable[[RandomSource], object], repeats: int, outcomes: int) -> float:
    """Mean random bits per call of ``draw(rng)``, a release of ``outcomes`` outcomes, that its
    sampler reads (the randomized rounding's 64 bits per outcome, read first, left out)."""
    counter = sampling.CountingSource(seeded(1))
    for _ in range(repeats):
        draw(counter)
    return counter.count / repeats - 64 * outcomes


def utility_range() -> None:
    """A smaller version of Ilvento's utility-range benchmark (hers: 1000 outcomes)."""
    eta = Eta.from_epsilon(EPSILON)
    table_head(f"\nutility range: O = {{0}} ∪ {{n + 1, …, n + 9}}, u(o) = o, {eta}",
               f"{'n':>9} {'p (bits)':>9} {'fast':>10} {'×':>6} {'full':>10} {'×':>7} "
               f"{'search':>10} {'×':>7} {'bits full':>10} {'bits search':>11}")
    first: dict[str, float] = {}
    for n in RANGES:
        outcomes = np.array([0.0, *(n + np.arange(1, 10))])
        cells = [f"{n:>9,}", f"{compute_precision(0, n + 9, 10, eta):>9,}"]
        bits = []
        for method in ("fast", "full", "search"):
            if method == "search" and n > SEARCH_LIMIT:
                cells += [f"{'—':>10}", f"{'':>7}"]
                continue

            def draw(rng: RandomSource, method: str = method, outcomes: np.ndarray = outcomes,
                     n: int = n) -> object:
                return base2_exponential_mechanism(outcomes, eta, utility_min=0,
                                                   utility_max=n + 9, method=method, rng=rng)

            seconds = best_time(lambda draw=draw: draw(seeded(0)), 5)
            first.setdefault(method, seconds)
            width = 6 if method == "fast" else 7
            cells += [f"{seconds:>10.2e}", f"{seconds / first[method]:>{width}.1f}"]
            if method != "fast":
                count = mean_bits(draw, 20, outcomes.size)
                bits.append(f"{count:>{10 if method == 'full' else 11}.0f}")
        print(" ".join(cells + bits))
    print("× = time / the same sampler's time at n = 10, same run; '—': not measured.")


def main() -> None:
    eta = Eta.from_epsilon(EPSILON)
    numerator, exponent = eta.reduced()
    rng = seeded(0)
    table_head(f"u(o) = o, ε = {EPSILON:g}, {eta}; seconds per sample (best of several draws)",
               f"{'n':>9} {'naive':>10} {'fast':>10} {'ratio':>7} {'fallback':>10} "
               f"{'ratio':>7} {'P(level 1)':>11} {'P(fallback) ≤':>14} {'full':>10} "
               f"{'ratio':>8}")
    fast_times = {}
    for n in SIZES:
        u = np.arange(n, dtype=float)
        repeats = 20 if n <= 10**4 else 5 if n <= 10**6 else 3
        naive = best_time(lambda u=u: exponential_mechanism(u, EPSILON, rng=rng), repeats)
        fast = best_time(lambda u=u, n=n: base2_exponential_mechanism(
            u, eta, utility_min=0, utility_max=n), repeats)
        fast_times[n] = fast
        cells = [f"{n:>9,}", f"{naive:>10.2e}", f"{fast:>10.2e}", f"{fast / naive:>7.1f}"]
        if n <= FALLBACK_LIMIT:
            k = np.arange(n, dtype=np.int64)
            fallback = best_time(lambda k=k: sampling.fast_sample(
                k, numerator, exponent, rng, precision=None, start="mp"),
                3 if n < 10**5 else 1)
            cells += [f"{fallback:>10.2e}", f"{fallback / naive:>7.0f}"]
            handover = sampling.handover_probability(k, numerator, exponent)
            cells.append(f"{handover:>11.1e}")
        else:
            cells += [f"{'—':>10}", f"{'':>7}", f"{'—':>11}"]
        cells.append(f"{fallback_bound(n):>14.1e}")
        if n <= FULL_LIMIT:
            full = best_time(lambda u=u, n=n: base2_exponential_mechanism(
                u, eta, utility_min=0, utility_max=n, rng=rng, method="full"),
                3 if n < 10**5 else 1)
            cells += [f"{full:>10.2e}", f"{full / naive:>8.0f}"]
        else:
            cells += [f"{'—':>10}", f"{'':>8}"]
        print(" ".join(cells))
    print("ratio = time / naive time in the same run; '—': not measured (too slow).")
    print(f"fast at n = 10^6: {fast_times[10**6] * 1e3:.1f} ms per draw (goal ≤ 30 ms); "
          f"time(10^7) / time(10^6) = {fast_times[10**7] / fast_times[10**6]:.1f} "
          f"(linear: 10)")
    utility_range()


if __name__ == "__main__":
    main()
