"""Checkers for the composition chapter's exercises.

Every checker is deterministic (fixed test points, exact or numerically exact references)
and returns a :class:`~dpkit.check.Verdict` whose message says where the answer fails and
what is wrong with it, without stating the expected answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import gmpy2

from dpkit.attacks.composition import averaging_success_probability
from dpkit.check._common import call_checked, call_number, coerce, compare_at, shown
from dpkit.check._verdict import Verdict
from dpkit.composition import (
    advanced,
    advanced_crossover,
    optimal,
    optimal_epsilon_per_mechanism,
)
from dpkit.i18n import tr

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
    """Check ``fn(epsilon, k, delta_prime)``: the total ε′ that advanced composition
    (Dwork & Roth 2014, Theorem 3.20; the chapter's advanced composition theorem) certifies
    for ``k`` mechanisms that are each ε-DP, with slack δ′.

    ``fn`` is called at five points (ε from 0.01 to 2, k from 1 to 1000, δ′ from 1e-9 to
    0.1) and passes when every result is a finite number equal to the theorem's ε′ to a
    relative 1e-9. The check is deterministic. A failing verdict names the point and the
    value returned and, for a recognised mistake (a term missing or approximated, the
    per-mechanism budget of Dwork & Roth's Corollary 3.21 read backwards), which part of the
    theorem to compare with; never the expected value. Messages name the chapter's theorem
    and corollary by name ("advanced composition", "the per-mechanism budget"), never by
    Dwork & Roth's numbers, which clash with the book's own numbering.
    """
    def wrong(value: float, want: float, epsilon: float, k: int, delta_prime: float) -> str:
        first = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon
        if math.isclose(value, first, rel_tol=1e-6):
            hint = tr("you have the theorem's first term only; it has a second term, "
                      "which grows linearly in k")
        elif math.isclose(value, first + k * epsilon**2, rel_tol=1e-6):
            hint = tr("your second term looks like k·ε², which is smaller than the "
                      "theorem's: compare it with the theorem term by term")
        elif math.isclose(value, 2 * first, rel_tol=1e-6):
            hint = tr("2·ε·sqrt(2k ln(1/δ')) is the per-mechanism budget (the chapter's "
                      "corollary) read backwards, not the advanced composition theorem")
        else:
            hint = tr("compare your formula with the theorem term by term")
        said = (tr("your total {value!r} is too large; {hint}") if value > want
                else tr("your total {value!r} is too small; {hint}"))
        return said.format(value=value, hint=hint)

    found = compare_at(fn, _ADVANCED_CASES, lambda epsilon, k, delta_prime:
                       advanced(epsilon, 0.0, k, delta_prime)[0],
                       label=lambda epsilon, k, delta_prime:
                       f"epsilon={epsilon:g}, k={k}, delta'={delta_prime:g}",
                       wrong=wrong, rel_tol=1e-9, tally=True)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("your function computes the total epsilon of the advanced "
                            "composition theorem"), found[:3])


def check_crossover(fn: Callable[[float, float], int | None]) -> Verdict:
    """Check ``fn(epsilon, delta_prime)``: the smallest ``k`` for which the total of
    advanced composition (Dwork & Roth 2014, Theorem 3.20) is strictly below the ``k·ε`` of
    basic composition, or ``None`` when there is no such ``k``.

    ``fn`` is called at six points (ε from 0.01 to 1, δ′ from 1e-9 to 1e-3), some of which
    have no crossover. It passes when it returns the exact smallest ``k`` (a positive
    integer, or a float equal to one) at each point, and ``None`` exactly where there is
    none. The check is deterministic. A failing verdict names the point and, for the ``k``
    returned, whether advanced composition already wins there (then a smaller ``k`` does
    too) or not yet; it never names the expected ``k``.
    """
    details = []
    cases = ((0.1, 1e-5), (0.5, 1e-4), (0.01, 1e-6), (0.3, 1e-9), (1.0, 1e-5), (0.7, 1e-3))
    for epsilon, delta_prime in cases:
        point = f"epsilon={epsilon:g}, delta'={delta_prime:g}"
        got = call_checked(fn, epsilon, delta_prime, where=tr("for {point}").format(point=point),
                           details=details)
        if isinstance(got, Verdict):
            return got
        want = advanced_crossover(epsilon, delta_prime)
        details.append(tr("{point}: got {value}").format(point=point, value=shown(got)))
        if want is None:
            if got is not None:
                return Verdict(False, tr("at epsilon={epsilon:g} advanced composition never "
                                         "beats k·ε (compare the theorem's second term alone "
                                         "with k·ε); return None, got {value}").format(
                                             epsilon=epsilon, value=shown(got)), tuple(details))
            continue
        k, why = coerce(got, whole=True)
        if why is not None or k < 1:
            return Verdict(False, tr("for {point} expected a positive integer k, got "
                                     "{value}").format(point=point, value=why or shown(got)),
                           tuple(details))
        got = k
        if got != want:
            if got < want:
                why = tr("at k={k} the advanced composition total is not strictly below k·ε: "
                         "advanced composition does not win there yet").format(k=got)
            else:
                why = tr("at k={k} advanced composition wins, but it already wins at a "
                         "smaller k; return the first one").format(k=shown(got))
            return Verdict(False, tr("for {point}: {why}").format(point=point, why=why),
                           tuple(details))
    return Verdict(True, tr("your crossover matches advanced against basic composition "
                            "(29 at ε = 0.1, δ' = 1e-5; never at ε = 1)"), tuple(details))


@lru_cache(maxsize=32)
def _best_per_query(total: float, delta_prime: float, k: int) -> float:
    return optimal_epsilon_per_mechanism(total, delta_prime, k)


# How far above the exact largest per-query epsilon an answer may lie and still pass, as a
# relative error. A correct answer computed in double precision lands within a few ulps of
# the exact value (measured at k = 100: 2e-16 to 1e-15 for a bisection on the binomial sum
# with math.comb, scipy's pmf or its logpmf); the library's own answer lies 2.6e-13 *below*
# it, because optimal() rounds the total up (by 2.8e-13 at that point). The nearest wrong
# answers are orders of magnitude further: k = 99 instead of 100 gives +0.6%, delta' = 1e-5
# instead of 1e-6 gives +13%.
_PER_QUERY_REL_TOL = 1e-12
_EXACT_BITS = 256  # the exact profile's working precision: its error is far below the tolerance


def _exact_profile(epsilon: float, k: int, total: float) -> gmpy2.mpfr:
    """The exact privacy profile delta(total) of ``k`` epsilon-DP mechanisms composed (the
    sum in :func:`dpkit.composition.optimal`), in 256-bit arithmetic."""
    with gmpy2.context(precision=_EXACT_BITS):
        eps, exp_total = gmpy2.mpfr(epsilon), gmpy2.exp(gmpy2.mpfr(total))
        terms = (gmpy2.comb(k, j) * (gmpy2.exp((k - j) * eps) - exp_total * gmpy2.exp(j * eps))
                 for j in range(k + 1) if (k - 2 * j) * eps > total)
        return gmpy2.fsum(terms) / (1 + gmpy2.exp(eps)) ** k


def _within_budget(epsilon: float, composed: float, *, total: float, delta_prime: float,
                   k: int) -> bool:
    """Whether ``k`` queries at ``epsilon`` fit ``(total, delta_prime)``, up to floating-point
    noise: true if :func:`optimal`'s total (rounded up) fits, or if ``epsilon`` shrunk by a
    relative 1e-12 fits exactly (so an exact answer, or one computed another correct way,
    passes although optimal() rounds its total a few hundred ulps above the budget)."""
    if composed <= total:
        return True
    if composed > total * (1 + 1e-6):  # optimal() is within 1e-6 of the exact total
        return False
    shrunk = epsilon / (1 + _PER_QUERY_REL_TOL)
    return _exact_profile(shrunk, k, total) <= delta_prime


def check_per_query_epsilon(epsilon: Any, *, total: float = 1.0, delta_prime: float = 1e-6,
                            k: int = 100) -> Verdict:
    """Check ``epsilon``: a per-query ε for ``k`` ε-DP mechanisms, whatever they are, whose
    composition must be ``(total, delta_prime)``-DP.

    Passes when ``k`` mechanisms at ``epsilon`` compose, by optimal composition over all
    ε-DP mechanisms (the chapter's optimal composition theorem, computed exactly), to at
    most ``total``, and ``epsilon`` is within 1% of the largest value that does. An answer
    above that largest value by a relative 1e-12 or less passes too: it is the exact value up
    to floating-point rounding (:func:`dpkit.composition.optimal` rounds its total up, so the
    exact answer composes to a few hundred ulps above ``total`` there). The check is
    deterministic. A failing verdict says whether the budget is exceeded or ε is wastefully
    small, with the composed total of the answer given; never the largest ε.
    """
    answer, why = coerce(epsilon)
    if why is not None or answer <= 0:
        return Verdict(False, tr("expected a positive number, got {value}").format(
            value=why or shown(epsilon)))
    epsilon = answer
    best = _best_per_query(total, delta_prime, k)
    try:
        composed = optimal(epsilon, 0.0, k, delta_prime)[0]
    except OverflowError:  # k * epsilon beyond the float range
        composed = math.inf
    shown_total = f"{composed:.6f}" if composed < 1e6 else f"{composed:.6g}"
    if float(shown_total) == total:  # just above the budget: show enough digits to see it
        shown_total = repr(composed)
    details = (tr("your epsilon {epsilon:.6g}: {k} queries compose to {composed} (optimal "
                  "composition over all epsilon-DP mechanisms, delta'={delta_prime:g})").format(
                      epsilon=epsilon, k=k, composed=shown_total, delta_prime=delta_prime),
               tr("basic composition would allow {basic:.6g}").format(basic=total / k))
    if not _within_budget(epsilon, composed, total=total, delta_prime=delta_prime, k=k):
        return Verdict(False, tr("{k} queries at epsilon={epsilon:.6g} exceed the budget: "
                                 "even optimal composition gives {composed} > {total:g}").format(
                                     k=k, epsilon=epsilon, composed=shown_total, total=total),
                       details)
    if composed > total:
        details += (tr("optimal() rounds its total up (the safe direction); the exact total of "
                       "your epsilon is within the budget up to floating-point rounding"),)
    if epsilon < 0.99 * best:
        return Verdict(False, tr("valid but wasteful: {k} queries at epsilon={epsilon:.6g} "
                                 "compose to {composed:.4f}, below the budget {total:g}; a "
                                 "larger epsilon (by more than 1%) still fits").format(
                                     k=k, epsilon=epsilon, composed=composed, total=total),
                       details)
    return Verdict(True, tr("{k} queries at epsilon={epsilon:.6g} fit the budget ({composed:.4f} "
                            "<= {total:g}), {ratio:.2f}× what basic composition allows").format(
                                k=k, epsilon=epsilon, composed=min(composed, total),
                                total=total, ratio=epsilon / (total / k)), details)


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
    """Check ``n``: the smallest number of ε-DP Laplace answers to a count whose rounded
    mean recovers the count exactly with at least the given probability.

    The success probability is the exact one of
    :func:`dpkit.attacks.composition.averaging_success_probability`, so the check is
    deterministic. Passes for that smallest positive integer only (or a float equal to it).
    A failing verdict says whether ``n`` is too few (with its success probability) or more
    than needed; never the expected number. The passing verdict does not state the ε that
    basic composition certifies for ``n`` answers: that is the next exercise's question.
    """
    count, why = coerce(n, whole=True)
    if why is not None or count < 1:
        return Verdict(False, tr("expected a positive integer number of queries, got "
                                 "{value}").format(value=why or shown(n)))
    n = count
    if n > 10**6:
        return Verdict(False, tr("{n} is far more than needed").format(n=n))
    want = _queries_needed(epsilon, probability)
    success = tr("success probability with {n} answers: {probability:.4f}")
    if n == want:
        return Verdict(True, tr("{n} answers at ε = {epsilon:g} recover the count with "
                                "probability ≥ {probability:g}, and fewer do not").format(
                                    n=want, epsilon=epsilon, probability=probability),
                       (success.format(n=want - 1, probability=averaging_success_probability(
                           epsilon, want - 1)),
                        success.format(n=want, probability=averaging_success_probability(
                            epsilon, want))))
    if n < want:
        return Verdict(False, tr("{n} is too few: with {n} answers the success probability is "
                                 "{success:.4f} < {probability:g}").format(
                                     n=n, success=averaging_success_probability(epsilon, n),
                                     probability=probability))
    return Verdict(False, tr("{n} answers succeed with probability ≥ {probability:g}, but so "
                             "does a smaller number; the question asks for the "
                             "smallest").format(n=n, probability=probability))


# (epsilon, epsilon0) cases the Laplace-profile checker tries.
_PROFILE_CASES = ((0.0, 1.0), (0.5, 1.0), (0.99, 1.0), (1.0, 1.0), (2.0, 1.0), (0.01, 0.1),
                  (0.3, 2.5), (1e-9, 1e-6))


def _laplace_profile(epsilon: float, epsilon0: float) -> float:
    """The privacy profile of Laplace noise with epsilon0 = sensitivity / scale."""
    return 0.0 if epsilon >= epsilon0 else -math.expm1((epsilon - epsilon0) / 2)


def check_laplace_profile(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(epsilon, epsilon0)``: the privacy profile ``delta(epsilon)`` of the Laplace
    mechanism with ``epsilon0 = sensitivity / scale``, for every ``epsilon >= 0``.

    ``fn`` is called at eight points, with ε below, at and above ε₀ and ε₀ from 1e-6 to
    2.5. It passes when every result is a finite number equal to the exact profile to a
    relative 1e-9 (absolute 1e-15). The check is deterministic. A failing verdict names the
    point and the value returned, and for a recognised mistake (the probability of a large
    loss instead of the profile, a nonzero δ where the loss is bounded) says which; never
    the formula or the expected value.
    """
    details = []
    for epsilon, epsilon0 in _PROFILE_CASES:
        point = f"epsilon={epsilon:g}, epsilon0={epsilon0:g}"
        value = call_number(fn, epsilon, epsilon0, where=tr("for {point}").format(point=point),
                            details=details)
        if isinstance(value, Verdict):
            return value
        want = _laplace_profile(epsilon, epsilon0)
        details.append(tr("{point}: got {value}").format(point=point, value=repr(value)))
        if math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-15):
            continue
        tail = 0.5 + 0.5 * _laplace_profile(epsilon, epsilon0)  # P[L > epsilon], epsilon < epsilon0
        if epsilon >= epsilon0:
            hint = tr("the Laplace loss never exceeds epsilon0: what does that make δ(ε) "
                      "for ε ≥ epsilon0?")
        elif math.isclose(value, tail, rel_tol=1e-6):
            hint = tr("that is P[L > ε], the probability of a large loss; δ(ε) is the "
                      "expectation of (1 − e^(ε − L))₊")
        else:
            hint = tr("add the contributions of the atom at epsilon0 and of the density on "
                      "(ε, epsilon0)")
        return Verdict(False, tr("for {point} your value {value!r} is not δ(ε); {hint}").format(
            point=point, value=value, hint=hint), tuple(details))
    return Verdict(True, tr("your function is the privacy profile of the Laplace mechanism"),
                   tuple(details[:4]))

