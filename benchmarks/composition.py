"""Time optimal composition for k = 10^2 ... 10^6 against a direct evaluation.

Baseline ("direct"), measured in the same run: the binomial probabilities from
``scipy.stats.binom.pmf`` for all k + 1 terms, then 60 bisection steps over epsilon, each
summing all k + 1 terms of the hockey-stick divergence in float64 (no log space, no trimming,
no breakpoint search, no rounding guarantee). ``dpkit`` evaluates the sum in log space, keeps
only the terms that matter, locates the right piece by bisection over the breakpoints and
rounds the answer up.

Run: ``.venv/bin/python benchmarks/composition.py``
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from dpkit.composition import advanced, optimal

EPSILON, DELTA_PRIME, REPEATS = 0.01, 1e-6, 5


def direct_optimal(epsilon: float, k: int, delta_prime: float) -> float:
    """Optimal composition by brute force in float64 (the baseline)."""
    j = np.arange(k + 1)
    p = stats.binom.pmf(j, k, 1 / (1 + math.exp(epsilon)))
    loss = (k - 2 * j) * epsilon
    low, high = 0.0, k * epsilon
    for _ in range(60):
        middle = (low + high) / 2
        with np.errstate(over="ignore"):
            delta = np.sum(p * np.maximum(0.0, -np.expm1(middle - loss)))
        low, high = (low, middle) if delta <= delta_prime else (middle, high)
    return high


def best_time(fn: Callable[[], object]) -> float:
    """Smallest wall time of ``REPEATS`` calls, in seconds."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    print(f"optimal composition of k mechanisms, each {EPSILON}-DP, delta' = {DELTA_PRIME:g}")
    print(f"(best of {REPEATS} runs; ratio = direct time / dpkit time)\n")
    header = (f"{'k':>9} {'dpkit (ms)':>11} {'direct (ms)':>12} {'ratio':>7} "
              f"{'Thm 3.20 (ms)':>14} {'optimal eps':>12} {'direct eps':>11} {'advanced':>9}")
    print(header)
    print("-" * len(header))
    for exponent in range(2, 7):
        k = 10**exponent
        ours = best_time(lambda k=k: optimal(EPSILON, 0.0, k, DELTA_PRIME))
        theirs = best_time(lambda k=k: direct_optimal(EPSILON, k, DELTA_PRIME))
        closed = best_time(lambda k=k: advanced(EPSILON, 0.0, k, DELTA_PRIME))
        eps_ours = optimal(EPSILON, 0.0, k, DELTA_PRIME)[0]
        eps_direct = direct_optimal(EPSILON, k, DELTA_PRIME)
        eps_adv = advanced(EPSILON, 0.0, k, DELTA_PRIME)[0]
        print(f"{k:>9,} {ours * 1e3:>11.2f} {theirs * 1e3:>12.2f} {theirs / ours:>7.1f} "
              f"{closed * 1e3:>14.3f} {eps_ours:>12.6f} {eps_direct:>11.6f} {eps_adv:>9.4f}")


if __name__ == "__main__":
    main()
