"""Checkers for the exercises of "What the promise means".

Each checker compares a student's function with the exact answer on a grid of parameters and,
on the first mismatch, says in which direction the answer is wrong and what that means for
privacy, without stating the formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpkit.audit import guessing_bound, tradeoff_bound
from dpkit.check._common import call_number
from dpkit.check._verdict import Verdict
from dpkit.i18n import tr

__all__ = ["check_guessing_accuracy", "check_rr_delta", "check_tradeoff"]

_EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)
_DELTAS = (0.0, 1e-5, 0.01, 0.2)
_TOLERANCE = 1e-9
_EPSILON_LIST = ", ".join(f"{e:g}" for e in _EPSILONS)


def _close(got: float, want: float) -> bool:
    return abs(got - want) <= _TOLERANCE * max(1.0, abs(want))


def _where(**values: float) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in values.items())


def check_guessing_accuracy(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(epsilon, delta)``: the best accuracy of any guess between two neighbours
    (each a priori equally likely) from the output of an (ε, δ)-DP mechanism.

    Accepted when ``fn`` matches the exact bound to 1e-9 (relative) for ε in
    {0.1, 0.5, 1, 2, 4} and δ in {0, 1e-5, 0.01, 0.2}.
    """
    details: list[str] = []
    for delta in _DELTAS:
        for epsilon in _EPSILONS:
            where = _where(epsilon=epsilon, delta=delta)
            value = call_number(fn, epsilon, delta, where=tr("at {point}").format(point=where),
                                low=0.5, high=1.0,
                                need=tr("an accuracy bound lies between 1/2 (a coin flip) "
                                        "and 1"), details=details)
            if isinstance(value, Verdict):
                return value
            want = guessing_bound(epsilon, delta)
            if not _close(value, want):
                hint = (tr("the δ term matters: ") if delta > 0 and _close(
                    value, guessing_bound(epsilon)) else "")
                if value < want:
                    return Verdict(False, tr("at {point} your bound is too low: {hint}some "
                                             "(ε, δ)-DP mechanism lets a guess be right more "
                                             "often than that").format(point=where, hint=hint),
                                   tuple(details))
                return Verdict(False, tr("at {point} your bound is higher than any (ε, δ)-DP "
                                         "mechanism allows: {hint}combine both inequalities "
                                         "of the hypothesis-testing theorem").format(
                                             point=where, hint=hint), tuple(details))
        details.append(tr("delta={delta:g}: exact at epsilon = {epsilons}").format(
            delta=delta, epsilons=_EPSILON_LIST))
    return Verdict(True, tr("your bound is exact for every ε and δ tried (and randomized "
                            "response attains it when δ = 0)"), tuple(details))


def check_tradeoff(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(alpha, epsilon, delta)``: the smallest false-negative rate that a test with
    false-positive rate ``alpha`` can have against an (ε, δ)-DP mechanism.

    Accepted when ``fn`` matches the exact trade-off bound to 1e-9 on a grid of α in [0, 1],
    ε in {0.1, …, 4} and δ in {0, 1e-5, 0.01, 0.2}.
    """
    details: list[str] = []
    alphas = (0.0, 0.01, 0.05, 0.2, 0.4, 0.5, 0.7, 0.95, 1.0)
    for delta in _DELTAS:
        for epsilon in _EPSILONS:
            for alpha in alphas:
                where = _where(alpha=alpha, epsilon=epsilon, delta=delta)
                value = call_number(fn, alpha, epsilon, delta,
                                    where=tr("at {point}").format(point=where), low=0.0,
                                    high=1.0, need=tr("that is not a probability"),
                                    details=details)
                if isinstance(value, Verdict):
                    return value
                want = tradeoff_bound(alpha, epsilon, delta)
                if _close(value, want):
                    continue
                if value < want:
                    return Verdict(False, tr("at {point} your β is below what DP allows: a "
                                             "test with these error rates would violate one "
                                             "of the two inequalities (did you use both, and "
                                             "the complement events?)").format(point=where),
                                   tuple(details))
                return Verdict(False, tr("at {point} your β is larger than necessary: some "
                                         "(ε, δ)-DP mechanism has a test with false-positive "
                                         "rate α and fewer false negatives").format(
                                             point=where), tuple(details))
        details.append(tr("delta={delta:g}: exact at epsilon = {epsilons}, each with alpha = "
                          "{alphas}").format(delta=delta, epsilons=_EPSILON_LIST,
                                             alphas=", ".join(f"{a:g}" for a in alphas)))
    return Verdict(True, tr("your trade-off bound is exact on every α, ε and δ tried"),
                   tuple(details))


def _rr_delta(epsilon: float, epsilon_prime: float) -> float:
    """The smallest δ for which randomized response at ``epsilon`` is (ε′, δ)-DP."""
    if epsilon_prime >= epsilon:
        return 0.0
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return p * (1.0 - math.exp(epsilon_prime - epsilon))


def check_rr_delta(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(epsilon, epsilon_prime)``: the smallest δ for which randomized response
    with parameter ε is (ε′, δ)-differentially private (for a person's answer).

    Accepted when ``fn`` is exact to 1e-9 (relative) for ε in {0.1, …, 4} and ε′ from 0 to
    above ε.
    """
    details: list[str] = []
    shares = (0.0, 0.25, 0.5, 0.9, 1.0, 1.5)
    for epsilon in _EPSILONS:
        for share in shares:
            epsilon_prime = share * epsilon
            where = _where(epsilon=epsilon, epsilon_prime=epsilon_prime)
            value = call_number(fn, epsilon, epsilon_prime,
                                where=tr("at {point}").format(point=where), details=details)
            if isinstance(value, Verdict):
                return value
            want = _rr_delta(epsilon, epsilon_prime)
            if _close(value, want):
                continue
            if want == 0.0:
                return Verdict(False, tr("at {point} you return δ = {value:.6g}, but no δ is "
                                         "needed when ε′ is at least ε").format(
                                             point=where, value=value), tuple(details))
            if value < want:
                return Verdict(False, tr("at {point} your δ is too small: some set of reports "
                                         "still breaks the (ε′, δ) inequality (try the report "
                                         "that equals the true answer)").format(point=where),
                               tuple(details))
            return Verdict(False, tr("at {point} your δ is larger than needed: the inequality "
                                     "holds for every set of reports with a smaller δ").format(
                                         point=where), tuple(details))
        details.append(tr("epsilon={epsilon:g}: exact at epsilon_prime = {primes}").format(
            epsilon=epsilon, primes=", ".join(f"{s * epsilon:g}" for s in shares)))
    return Verdict(True, tr("your δ is the smallest that works, for every ε and ε′ tried"),
                   tuple(details))

