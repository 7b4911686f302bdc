"""Checkers for the composition chapter's exercises."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from dpkit.attacks.composition import averaging_success_probability
from dpkit.check._verdict import Verdict
from dpkit.composition import (
    advanced,
    advanced_crossover,
    optimal,
    optimal_epsilon_per_mechanism,
)

__all__ = [
    "check_advanced_composition",
    "check_crossover",
    "check_per_query_epsilon",
    "check_queries_needed",
]

# (epsilon, k, delta_prime) cases the advanced-composition checker tries.
_ADVANCED_CASES = ((0.1, 100, 1e-6), (0.01, 1000, 1e-6), (0.5, 20, 1e-5), (1.0, 1, 0.1),
                   (2.0, 10, 1e-9))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_advanced_composition(fn: Callable[[float, int, float], float]) -> Verdict:
    """Check ``fn(epsilon, k, delta_prime)``: the total epsilon of Dwork & Roth's Thm 3.20.

    Accepted when ``fn`` matches ``sqrt(2k ln(1/δ')) ε + k ε (e^ε − 1)`` to a relative 1e-9
    on several cases. Common mistakes get a hint: the first term alone, or
    ``k ε²`` instead of ``k ε (e^ε − 1)``, or the plot formula ``2 ε sqrt(2k ln(1/δ))``.
    """
    details = []
    for epsilon, k, delta_prime in _ADVANCED_CASES:
        want = advanced(epsilon, 0.0, k, delta_prime)[0]
        try:
            got = fn(epsilon, k, delta_prime)
        except Exception as error:  # a student's bug: report it, do not crash the notebook
            return Verdict(False, f"fn({epsilon}, {k}, {delta_prime}) raised "
                           f"{type(error).__name__}: {error}", tuple(details))
        details.append(f"epsilon={epsilon:g}, k={k}, delta'={delta_prime:g}: expected "
                       f"{want:.6f}, got {got!r}")
        if not _is_number(got) or not math.isclose(float(got), want, rel_tol=1e-9):
            first = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon
            hint = "use sqrt(2k ln(1/δ'))·ε + k·ε·(e^ε − 1)"
            if _is_number(got):
                if math.isclose(got, first, rel_tol=1e-6):
                    hint = "you have the first term only; add k·ε·(e^ε − 1)"
                elif math.isclose(got, first + k * epsilon**2, rel_tol=1e-6):
                    hint = "the second term is k·ε·(e^ε − 1), not k·ε² (that is smaller)"
                elif math.isclose(got, 2 * first, rel_tol=1e-6):
                    hint = ("2·ε·sqrt(2k ln(1/δ')) is the shortcut of Cor. 3.21 read "
                            "backwards, not Thm 3.20")
            return Verdict(False, f"for epsilon={epsilon:g}, k={k}, delta'={delta_prime:g} "
                           f"expected {want:.6f}, got {got!r}; {hint}", tuple(details))
    return Verdict(True, "your function computes the total epsilon of Theorem 3.20",
                   tuple(details[:3]))


def check_crossover(fn: Callable[[float, float], int | None]) -> Verdict:
    """Check ``fn(epsilon, delta_prime)``: the smallest ``k`` from which Thm 3.20 beats ``kε``.

    ``fn`` must return ``None`` when advanced composition never wins (``e^ε >= 2``).
    """
    details = []
    cases = ((0.1, 1e-5), (0.5, 1e-4), (0.01, 1e-6), (0.3, 1e-9), (1.0, 1e-5), (0.7, 1e-3))
    for epsilon, delta_prime in cases:
        want = advanced_crossover(epsilon, delta_prime)
        try:
            got = fn(epsilon, delta_prime)
        except Exception as error:
            return Verdict(False, f"fn({epsilon}, {delta_prime}) raised "
                           f"{type(error).__name__}: {error}", tuple(details))
        details.append(f"epsilon={epsilon:g}, delta'={delta_prime:g}: expected {want}, "
                       f"got {got!r}")
        if want is None:
            if got is not None:
                return Verdict(False, f"at epsilon={epsilon:g} advanced composition never beats "
                               f"k·ε (e^ε ≥ 2 makes k·ε·(e^ε − 1) ≥ k·ε alone); return None, "
                               f"got {got!r}", tuple(details))
            continue
        if isinstance(got, bool) or not isinstance(got, numbers.Integral) or got != want:
            hint = ("compare the full Thm 3.20 total with k·ε and return the first k where "
                    "it is strictly smaller")
            if isinstance(got, numbers.Integral) and got == want - 1:
                hint = "at your k the two are not yet strictly ordered: off by one"
            return Verdict(False, f"for epsilon={epsilon:g}, delta'={delta_prime:g} the first k "
                           f"is {want}, got {got!r}; {hint}", tuple(details))
    return Verdict(True, "your crossover matches Thm 3.20 against basic composition "
                   "(29 at ε = 0.1, δ' = 1e-5; never at ε = 1)", tuple(details))


@lru_cache(maxsize=32)
def _best_per_query(total: float, delta_prime: float, k: int) -> float:
    return optimal_epsilon_per_mechanism(total, delta_prime, k)


def check_per_query_epsilon(epsilon: Any, *, total: float = 1.0, delta_prime: float = 1e-6,
                            k: int = 100) -> Verdict:
    """Check a per-query epsilon for ``k`` pure-DP queries within ``(total, delta_prime)``.

    Accepted when ``k`` queries at ``epsilon`` compose (optimally) to at most ``total`` and
    ``epsilon`` is within 1% of the largest such value.
    """
    if not _is_number(epsilon) or not 0 < epsilon < math.inf:
        return Verdict(False, f"expected a positive number, got {epsilon!r}")
    best = _best_per_query(total, delta_prime, k)
    composed = optimal(float(epsilon), 0.0, k, delta_prime)[0]
    details = (f"your epsilon {epsilon:.6g}: {k} queries compose to {composed:.6f} "
               f"(optimal composition, delta'={delta_prime:g})",
               f"largest valid epsilon: {best:.6g}",
               f"basic composition would allow {total / k:.6g}")
    if composed > total:
        return Verdict(False, f"{k} queries at epsilon={epsilon:.6g} exceed the budget: even "
                       f"optimal composition gives {composed:.6f} > {total:g}", details)
    if epsilon < 0.99 * best:
        return Verdict(False, f"valid but wasteful: epsilon={epsilon:.6g} leaves budget unused; "
                       f"the optimal composition theorem allows up to {best:.6g}", details)
    return Verdict(True, f"{k} queries at epsilon={epsilon:.6g} fit the budget "
                   f"({composed:.4f} <= {total:g}), {epsilon / (total / k):.2f}× what basic "
                   f"composition allows", details)


@lru_cache(maxsize=32)
def _queries_needed(epsilon: float, probability: float) -> int:
    """Smallest n with averaging_success_probability(epsilon, n) >= probability."""
    low, high = 0, 1  # success(0) = 0 < probability
    while averaging_success_probability(epsilon, high) < probability:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if averaging_success_probability(epsilon, middle) >= probability:
            high = middle
        else:
            low = middle
    return high


def check_queries_needed(n: Any, *, epsilon: float = 0.5, probability: float = 0.95) -> Verdict:
    """Check the smallest number of ε-DP Laplace answers whose rounded mean recovers a count
    with at least the given probability (the exact probability of
    :func:`dpkit.attacks.composition.averaging_success_probability`)."""
    want = _queries_needed(epsilon, probability)
    details = (f"success probability with {want - 1} answers: "
               f"{averaging_success_probability(epsilon, want - 1):.4f}"
               if want > 1 else "one answer suffices",
               f"success probability with {want} answers: "
               f"{averaging_success_probability(epsilon, want):.4f}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        return Verdict(False, f"expected an integer number of queries, got {n!r}", details)
    if n == want:
        return Verdict(True, f"{want} answers at ε = {epsilon:g} recover the count with "
                       f"probability ≥ {probability:g}; together they are only "
                       f"{want * epsilon:g}-DP", details)
    direction = "too few" if n < want else "more than needed"
    return Verdict(False, f"{n} is {direction}: the smallest number is {want}", details)
