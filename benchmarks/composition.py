"""Time optimal composition for k = 10^2 ... 10^6 against a direct evaluation, and the exact
averaging-attack probability against the same integral written with ``scipy.stats``.

Baseline ("direct"), measured in the same run: the binomial probabilities from
``scipy.stats.binom.pmf`` for all k + 1 terms, then 60 bisection steps over epsilon, each
summing all k + 1 terms of the hockey-stick divergence in float64 (no log space, no trimming,
no breakpoint search, no rounding guarantee). ``dpkit`` evaluates the sum in log space, keeps
only the terms that matter, locates the right piece by bisection over the breakpoints and
rounds the answer up.

Second baseline ("stats"): the integral of
:func:`dpkit.attacks.composition.averaging_success_probability` with the Gamma density and
distribution function from a frozen ``scipy.stats.gamma`` (the earlier implementation);
dpkit calls ``scipy.special`` directly inside the quadrature.

Run: ``.venv/bin/python benchmarks/composition.py``
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from scipy import integrate, stats

from dpkit.attacks.composition import averaging_success_probability
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


def stats_success_probability(epsilon: float, n: int) -> float:
    """The averaging-attack probability with frozen ``scipy.stats`` objects (the baseline)."""
    scale, half_width = 1 / epsilon, n / 2
    gamma = stats.gamma(n, scale=scale)
    spread = math.sqrt(n) * scale
    low, high = max(0.0, n * scale - 40 * spread), n * scale + 40 * spread

    def integrand(g: float) -> float:
        return float(gamma.pdf(g) * (gamma.cdf(g + half_width) - gamma.cdf(g - half_width)))

    return integrate.quad(integrand, low, high, points=[n * scale], limit=200, epsabs=1e-10)[0]


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

    print("\nexact averaging-attack probability, epsilon = 0.5 (ratio = stats time / dpkit time)")
    print(f"{'n':>6} {'dpkit (ms)':>11} {'stats (ms)':>11} {'ratio':>7} {'|difference|':>13}")
    for n in (10, 124, 1000, 10_000):
        ours = best_time(lambda n=n: averaging_success_probability(0.5, n))
        theirs = best_time(lambda n=n: stats_success_probability(0.5, n))
        gap = abs(averaging_success_probability(0.5, n) - stats_success_probability(0.5, n))
        print(f"{n:>6} {ours * 1e3:>11.2f} {theirs * 1e3:>11.2f} {theirs / ours:>7.1f} "
              f"{gap:>13.1e}")


if __name__ == "__main__":
    main()
