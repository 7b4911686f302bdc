"""Checkers for the introduction's exercises."""

from __future__ import annotations

import math
from collections.abc import Callable

from dpkit.check._common import call_number
from dpkit.check._verdict import Verdict
from dpkit.i18n import tr
from dpkit.randomized_response import debias, truth_probability

__all__ = ["check_debias", "check_kary_truth_probability", "check_rr_epsilon",
           "check_truth_probability"]

_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
_EPSILON_LIST = ", ".join(f"{e:g}" for e in _EPSILONS)
_OPEN_PROBABILITY = "a probability strictly between 0 and 1 is needed"


def check_truth_probability(fn: Callable[[float], float]) -> Verdict:
    """Check ``fn(epsilon)``: the probability ``p > 1/2`` of a truthful randomized response
    that makes the ratio of the two answers' report probabilities exactly ``e^ε``.

    ``fn`` is called at ε in {0.1, 0.5, 1, 2, 5} and passes when every result is a
    probability within 1e-9 of the exact one. The check is deterministic. A wrong answer is
    reported through the ratio of report probabilities it implies, and that ratio's
    relative distance from ``e^ε`` (above: not private; below: noisier than needed), not
    through the answer; the equally private ``p < 1/2`` is named as such.
    """
    details = []
    for epsilon in _EPSILONS:
        p = call_number(fn, epsilon, where=tr("at epsilon={epsilon:g}").format(epsilon=epsilon),
                        low=0.0, high=1.0, strict=True, need=tr(_OPEN_PROBABILITY),
                        details=details)
        if isinstance(p, Verdict):
            return p
        want = math.exp(epsilon) / (1 + math.exp(epsilon))
        if not abs(p - want) <= 1e-9:
            if p < 0.5:
                return Verdict(False, tr("at epsilon={epsilon:g} your probability {p:.4g} is "
                                         "below 1/2: respondents would lie more often than "
                                         "tell the truth; the exercise asks for the "
                                         "probability above 1/2").format(epsilon=epsilon, p=p),
                               tuple(details))
            ratio = p / (1 - p)
            effect = (tr("more than e^ε: not ε-DP") if ratio > math.exp(epsilon)
                      else tr("less than e^ε: private, but noisier than needed"))
            # relative to e^ε, so that a near miss does not print as e^ε itself
            excess = ratio / math.exp(epsilon) - 1
            return Verdict(False, tr("at epsilon={epsilon:g} the two answers' report "
                                     "probabilities differ by a factor {ratio:.6g} = e^ε × "
                                     "(1 {sign} {excess:.2g}), {effect}").format(
                                         epsilon=epsilon, ratio=ratio,
                                         sign="+" if excess > 0 else "−", excess=abs(excess),
                                         effect=effect), tuple(details))
        details.append(f"epsilon={epsilon:g}: p = {p:.6f}")
    return Verdict(True, tr("your probability gives exactly a ratio of e^ε between the two "
                            "answers"), tuple(details))


def check_debias(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(yes_fraction, epsilon)``: the unbiased estimate of the true share of "yes"
    answers from the observed share of "yes" reports of randomized response at ε.

    ``fn`` is called at ε in {0.1, 0.5, 1, 2, 5} and observed shares 0.3, 0.5, 0.9, 0 and 1,
    and passes when every result is within 1e-6 of the unbiased estimate (which may leave
    [0, 1]). The check is deterministic. A wrong answer is reported by pushing the estimate
    back through the expected share of "yes" reports, which shows the bias without giving
    the estimator.
    """
    details = []
    fractions = (0.3, 0.5, 0.9, 0.0, 1.0)
    for epsilon in _EPSILONS:
        p = math.exp(epsilon) / (1 + math.exp(epsilon))
        for y in fractions:
            value = call_number(fn, y, epsilon, where=tr("for yes_fraction={y:g}, "
                                                         "epsilon={epsilon:g}").format(
                                                             y=y, epsilon=epsilon),
                                details=details)
            if isinstance(value, Verdict):
                return value
            want = float(debias(y, epsilon))
            if not abs(value - want) <= 1e-6:
                if value in (0.0, 1.0) and not 0 <= want <= 1:
                    hint = tr("an unbiased estimate must be allowed to leave [0, 1]")
                else:
                    implied = value * p + (1 - value) * (1 - p)
                    hint = tr("if {value:.4g} were the true share, the expected share of "
                              "\"yes\" reports would be {implied:.4g}, not {y:g}").format(
                                  value=value, implied=implied, y=y)
                return Verdict(False, tr("for yes_fraction={y:g}, epsilon={epsilon:g} your "
                                         "estimate is {value:.6g}; {hint}").format(
                                             y=y, epsilon=epsilon, value=value, hint=hint),
                               tuple(details))
        details.append(tr("epsilon={epsilon:g}: unbiased at yes_fraction = {fractions}").format(
            epsilon=epsilon, fractions=", ".join(f"{y:g}" for y in fractions)))
    p = float(truth_probability(1.0))
    return Verdict(True, tr("your estimator is unbiased: it inverts E[reported] = π·p + "
                            "(1 − π)(1 − p) (p = {p:.4f} at ε = 1)").format(p=p),
                   tuple(details))


def check_rr_epsilon(fn: Callable[[float], float]) -> Verdict:
    """Check ``fn(p)``: the smallest ε for which randomized response that tells the truth
    with probability ``p`` (any ``0 < p < 1``) is ε-locally differentially private.

    Passes when ``fn`` is exact to a relative 1e-9 for p in {0.5, 0.6, 0.75, 0.9, 0.999,
    0.25, 0.1}. The check is deterministic. A failing verdict says whether the ε is too
    small (not private) or larger than needed; never the expected ε.
    """
    details = []
    for p in (0.5, 0.6, 0.75, 0.9, 0.999, 0.25, 0.1):
        value = call_number(fn, p, where=tr("at p={p:g}").format(p=p), low=0.0,
                            need=tr("ε is never negative (which report is more likely when "
                                    "p < 1/2?)"), details=details)
        if isinstance(value, Verdict):
            return value
        want = abs(math.log(p / (1 - p)))
        if not abs(value - want) <= 1e-9 * max(1.0, want):
            said = (tr("at p={p:g} your ε is too small: some report is more than e^ε times "
                       "likelier under one answer") if value < want else
                    tr("at p={p:g} your ε is larger than needed: a smaller ε already holds"))
            return Verdict(False, said.format(p=p), tuple(details))
        details.append(f"p={p:g}: ε = {value:.6f}")
    return Verdict(True, tr("your ε is the smallest that holds, including when p < 1/2"),
                   tuple(details))


def check_kary_truth_probability(fn: Callable[[float, int], float]) -> Verdict:
    """Check ``fn(epsilon, k)``: the truthful probability of randomized response with ``k``
    answers (the truth with probability ``p``, otherwise one of the ``k − 1`` other answers
    uniformly), largest such that each report is ε-locally differentially private.

    Passes when ``fn`` is exact to 1e-9 for ε in {0.1, …, 5} and k in {2, 3, 5, 10}. The
    check is deterministic. A wrong answer is reported through the largest ratio of report
    probabilities it implies, not through the answer.
    """
    details = []
    for k in (2, 3, 5, 10):
        for epsilon in _EPSILONS:
            where = f"epsilon={epsilon:g}, k={k}"
            p = call_number(fn, epsilon, k, where=tr("at {point}").format(point=where),
                            low=0.0, high=1.0, strict=True, need=tr(_OPEN_PROBABILITY),
                            details=details)
            if isinstance(p, Verdict):
                return p
            want = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
            if not abs(p - want) <= 1e-9:
                other = (1 - p) / (k - 1)
                ratio = max(p, other) / min(p, other)
                effect = (tr("more than e^ε: not ε-DP") if ratio > math.exp(epsilon)
                          else tr("less than e^ε: private, but noisier than needed"))
                return Verdict(False, tr("at {point} the most and least likely reports of a "
                                         "person differ by a factor {ratio:.4g} between two "
                                         "true answers, {effect}").format(
                                             point=where, ratio=ratio, effect=effect),
                               tuple(details))
        details.append(tr("k={k}: exact at epsilon = {epsilons}").format(
            k=k, epsilons=_EPSILON_LIST))
    return Verdict(True, tr("your probability makes every report exactly e^ε more likely "
                            "under the true answer than under any other"), tuple(details))

