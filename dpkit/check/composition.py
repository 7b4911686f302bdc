"""Checkers for the composition chapter's exercises."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from dpkit.attacks.composition import averaging_success_probability
from dpkit.check._common import call_checked, call_number, number, shown
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
    "check_laplace_profile",
    "check_per_query_epsilon",
    "check_queries_needed",
]

# (epsilon, k, delta_prime) cases the advanced-composition checker tries.
_ADVANCED_CASES = ((0.1, 100, 1e-6), (0.01, 1000, 1e-6), (0.5, 20, 1e-5), (1.0, 1, 0.1),
                   (2.0, 10, 1e-9))


def check_advanced_composition(fn: Callable[[float, int, float], float]) -> Verdict:
    """Check ``fn(epsilon, k, delta_prime)``: the total epsilon of Dwork & Roth's Thm 3.20.

    Accepted when ``fn`` matches ``sqrt(2k ln(1/δ')) ε + k ε (e^ε − 1)`` to a relative 1e-9
    on several cases. Common mistakes get a hint: the first term alone, or
    ``k ε²`` instead of ``k ε (e^ε − 1)``, or the plot formula ``2 ε sqrt(2k ln(1/δ))``.
    """
    details = []
    for epsilon, k, delta_prime in _ADVANCED_CASES:
        point = f"epsilon={epsilon:g}, k={k}, delta'={delta_prime:g}"
        value = call_number(fn, epsilon, k, delta_prime, where=f"for {point}", details=details)
        if isinstance(value, Verdict):
            return value
        want = advanced(epsilon, 0.0, k, delta_prime)[0]
        details.append(f"{point}: expected {want:.6f}, got {value!r}")
        if not math.isclose(value, want, rel_tol=1e-9):
            first = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon
            if math.isclose(value, first, rel_tol=1e-6):
                hint = "you have the first term only; add k·ε·(e^ε − 1)"
            elif math.isclose(value, first + k * epsilon**2, rel_tol=1e-6):
                hint = "the second term is k·ε·(e^ε − 1), not k·ε² (that is smaller)"
            elif math.isclose(value, 2 * first, rel_tol=1e-6):
                hint = ("2·ε·sqrt(2k ln(1/δ')) is the shortcut of Cor. 3.21 read "
                        "backwards, not Thm 3.20")
            else:
                hint = "use sqrt(2k ln(1/δ'))·ε + k·ε·(e^ε − 1)"
            return Verdict(False, f"for {point} expected {want:.6f}, got {value!r}; {hint}",
                           tuple(details))
    return Verdict(True, "your function computes the total epsilon of Theorem 3.20",
                   tuple(details[:3]))


def check_crossover(fn: Callable[[float, float], int | None]) -> Verdict:
    """Check ``fn(epsilon, delta_prime)``: the smallest ``k`` from which Thm 3.20 beats ``kε``.

    ``fn`` must return ``None`` when advanced composition never wins (``e^ε >= 2``).
    """
    details = []
    cases = ((0.1, 1e-5), (0.5, 1e-4), (0.01, 1e-6), (0.3, 1e-9), (1.0, 1e-5), (0.7, 1e-3))
    for epsilon, delta_prime in cases:
        point = f"epsilon={epsilon:g}, delta'={delta_prime:g}"
        got = call_checked(fn, epsilon, delta_prime, where=f"for {point}", details=details)
        if isinstance(got, Verdict):
            return got
        want = advanced_crossover(epsilon, delta_prime)
        details.append(f"{point}: got {shown(got)}")
        if want is None:
            if got is not None:
                return Verdict(False, f"at epsilon={epsilon:g} advanced composition never beats "
                               f"k·ε (e^ε ≥ 2 makes k·ε·(e^ε − 1) ≥ k·ε alone); return None, "
                               f"got {shown(got)}", tuple(details))
            continue
        if isinstance(got, bool) or not isinstance(got, numbers.Integral) or got < 1:
            return Verdict(False, f"for {point} expected a positive integer k, got "
                           f"{shown(got)}", tuple(details))
        if got != want:
            if got < want:
                total = advanced(epsilon, 0.0, int(got), delta_prime)[0]
                why = (f"at k={got} the Thm 3.20 total {total:.6f} is not strictly below "
                       f"k·ε = {got * epsilon:.6f}")
            else:
                why = (f"at k={shown(got)} advanced composition wins, but it already wins at a "
                       f"smaller k; return the first one")
            return Verdict(False, f"for {point}: {why}", tuple(details))
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
    answer = number(epsilon)
    if answer is None or answer <= 0:
        return Verdict(False, f"expected a positive number, got {shown(epsilon)}")
    epsilon = answer
    best = _best_per_query(total, delta_prime, k)
    composed = optimal(epsilon, 0.0, k, delta_prime)[0]
    details = (f"your epsilon {epsilon:.6g}: {k} queries compose to {composed:.6f} "
               f"(optimal composition over all epsilon-DP mechanisms, delta'={delta_prime:g})",
               f"basic composition would allow {total / k:.6g}")
    if composed > total:
        return Verdict(False, f"{k} queries at epsilon={epsilon:.6g} exceed the budget: even "
                       f"optimal composition gives {composed:.6f} > {total:g}", details)
    if epsilon < 0.99 * best:
        return Verdict(False, f"valid but wasteful: {k} queries at epsilon={epsilon:.6g} "
                       f"compose to {composed:.4f}, below the budget {total:g}; a larger "
                       f"epsilon (by more than 1%) still fits", details)
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
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        return Verdict(False, f"expected a positive integer number of queries, got {shown(n)}")
    if n > 10**6:
        return Verdict(False, f"{n} is far more than needed")
    want = _queries_needed(epsilon, probability)
    if n == want:
        return Verdict(True, f"{want} answers at ε = {epsilon:g} recover the count with "
                       f"probability ≥ {probability:g}; for them basic composition certifies "
                       f"only ε = {want * epsilon:g}",
                       (f"success probability with {want - 1} answers: "
                        f"{averaging_success_probability(epsilon, want - 1):.4f}",
                        f"success probability with {want} answers: "
                        f"{averaging_success_probability(epsilon, want):.4f}"))
    if n < want:
        return Verdict(False, f"{n} is too few: with {n} answers the success probability is "
                       f"{averaging_success_probability(epsilon, n):.4f} < {probability:g}")
    return Verdict(False, f"{n} answers succeed with probability ≥ {probability:g}, but so "
                   f"does a smaller number; the question asks for the smallest")


# (epsilon, epsilon0) cases the Laplace-profile checker tries.
_PROFILE_CASES = ((0.0, 1.0), (0.5, 1.0), (0.99, 1.0), (1.0, 1.0), (2.0, 1.0), (0.01, 0.1),
                  (0.3, 2.5), (1e-9, 1e-6))


def _laplace_profile(epsilon: float, epsilon0: float) -> float:
    """The privacy profile of Laplace noise with epsilon0 = sensitivity / scale."""
    return 0.0 if epsilon >= epsilon0 else -math.expm1((epsilon - epsilon0) / 2)


def check_laplace_profile(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(epsilon, epsilon0)``: the privacy profile ``delta(epsilon)`` of the Laplace
    mechanism with ``epsilon0 = sensitivity / scale``, for every ``epsilon >= 0``.

    Accepted when ``fn`` matches the profile to a relative 1e-9 (absolute 1e-15) on several
    cases, including ``epsilon >= epsilon0``. A common mistake gets a hint without the formula:
    returning ``P[L > epsilon]`` (the probability of a bad event) instead of the expectation.
    """
    details = []
    for epsilon, epsilon0 in _PROFILE_CASES:
        point = f"epsilon={epsilon:g}, epsilon0={epsilon0:g}"
        value = call_number(fn, epsilon, epsilon0, where=f"for {point}", details=details)
        if isinstance(value, Verdict):
            return value
        want = _laplace_profile(epsilon, epsilon0)
        details.append(f"{point}: got {value!r}")
        if math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-15):
            continue
        tail = 0.5 + 0.5 * _laplace_profile(epsilon, epsilon0)  # P[L > epsilon], epsilon < epsilon0
        if epsilon >= epsilon0:
            hint = ("the Laplace loss never exceeds epsilon0: what does that make δ(ε) "
                    "for ε ≥ epsilon0?")
        elif math.isclose(value, tail, rel_tol=1e-6):
            hint = ("that is P[L > ε], the probability of a large loss; δ(ε) is the "
                    "expectation of (1 − e^(ε − L))₊")
        else:
            hint = ("add the contributions of the atom at epsilon0 and of the density on "
                    "(ε, epsilon0)")
        return Verdict(False, f"for {point} your value {value!r} is not δ(ε); {hint}",
                       tuple(details))
    return Verdict(True, "your function is the privacy profile of the Laplace mechanism",
                   tuple(details[:4]))
