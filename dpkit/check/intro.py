"""Checkers for the introduction's exercises."""

from __future__ import annotations

import math
from collections.abc import Callable

from dpkit.check._verdict import Verdict
from dpkit.randomized_response import debias, truth_probability

__all__ = ["check_debias", "check_truth_probability"]

_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)


def check_truth_probability(fn: Callable[[float], float]) -> Verdict:
    """Check ``fn(epsilon)``: the probability of a truthful randomized response.

    Accepted when ``fn`` gives ``e^ε / (1 + e^ε)`` to within 1e-9 for several ε, and
    never exceeds it by more than that (a larger value would break ε-DP).
    """
    details = []
    for epsilon in _EPSILONS:
        want = math.exp(epsilon) / (1 + math.exp(epsilon))
        got = fn(epsilon)
        details.append(f"epsilon={epsilon:g}: expected {want:.6f}, got {got!r}")
        if not isinstance(got, (int, float)) or not abs(got - want) <= 1e-9:
            return Verdict(False, f"at epsilon={epsilon:g} the truthful probability should "
                           f"be e^ε/(1+e^ε) = {want:.6f}, got {got!r}", tuple(details))
    return Verdict(True, "your probability gives exactly a ratio of e^ε between the two "
                   "answers", tuple(details))


def check_debias(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(yes_fraction, epsilon)``: the unbiased estimate of the true proportion."""
    details = []
    for epsilon in _EPSILONS:
        for y in (0.0, 0.3, 0.5, 0.9, 1.0):
            want = float(debias(y, epsilon))
            got = fn(y, epsilon)
            if not isinstance(got, (int, float)) or not abs(got - want) <= 1e-6:
                hint = ("remember the estimate is not clipped to [0, 1]"
                        if 0 <= got <= 1 and (want < 0 or want > 1) else
                        "solve E[reported] = π·p + (1 − π)(1 − p) for π")
                return Verdict(False, f"for yes_fraction={y:g}, epsilon={epsilon:g} expected "
                               f"{want:.6f}, got {got!r}; {hint}", tuple(details))
            details.append(f"yes_fraction={y:g}, epsilon={epsilon:g}: {got:.6f}")
    p = float(truth_probability(1.0))
    return Verdict(True, "your estimator is unbiased: it inverts "
                   f"E[reported] = π·p + (1 − π)(1 − p) (p = {p:.4f} at ε = 1)",
                   tuple(details[:3]))
