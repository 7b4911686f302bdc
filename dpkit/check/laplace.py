"""Checkers for the exercises of the Laplace chapter.

Every checker is deterministic (fixed seeds and test points) and returns a
:class:`~dpkit.check.Verdict` whose message says what was expected and what was found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.audit import strongest_lower_bound
from dpkit.check._common import call as _call
from dpkit.check._common import number as _number
from dpkit.check._verdict import Verdict
from dpkit.laplace import laplace_accuracy
from dpkit.rng import seeded

__all__ = ["check_laplace_interval", "check_laplace_mechanism", "check_sum_count_sensitivity"]


def check_sum_count_sensitivity(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(lower, upper)``: the ℓ1 sensitivity of the pair (clipped sum, count).

    Every value is clipped to ``[lower, upper]``; adding or removing one person changes the
    sum by at most ``max(|lower|, |upper|)`` and the count by 1, so the answer is
    ``max(|lower|, |upper|) + 1``.
    """
    details = []
    for lower, upper in ((0.0, 100.0), (17.0, 90.0), (-5.0, 3.0), (-40.0, -10.0), (0.0, 1.0)):
        got, error = _call(fn, lower, upper)
        if error:
            return Verdict(False, f"fn({lower:g}, {upper:g}) raised {error}", tuple(details))
        want = max(abs(lower), abs(upper)) + 1
        value = _number(got)
        details.append(f"[{lower:g}, {upper:g}]: expected {want:g}, got {got!r}")
        if value is None or not math.isclose(value, want, rel_tol=1e-12):
            if value is not None and math.isclose(value, upper - lower + 1, rel_tol=1e-12):
                hint = ("upper − lower is the change when one person's value is *replaced*; "
                        "our neighbours add or remove a person, whose value can be as large "
                        "as max(|lower|, |upper|)")
            elif value is not None and math.isclose(value, want - 1, rel_tol=1e-12):
                hint = "the count changes too: add its sensitivity, 1"
            else:
                hint = "add the sum's change and the count's change"
            return Verdict(False, f"for values clipped to [{lower:g}, {upper:g}] the ℓ1 "
                           f"sensitivity is {want:g}, got {got!r}; {hint}", tuple(details))
    return Verdict(True, "right: one Laplace mechanism with this Δ releases both numbers",
                   tuple(details))


def check_laplace_interval(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, confidence)``: the half-width ``α`` of the interval
    ``release ± α`` that contains the true answer with probability ``confidence``.

    The answer is ``(Δ/ε)·ln(1/(1 − confidence))`` (Dwork & Roth 2014, Theorem 3.8).
    """
    details = []
    for sensitivity, epsilon, confidence in ((1.0, 1.0, 0.95), (1.0, 0.1, 0.9),
                                             (2.0, 0.5, 0.99), (5.0, 2.0, 0.5)):
        got, error = _call(fn, sensitivity, epsilon, confidence)
        if error:
            return Verdict(False, f"fn({sensitivity:g}, {epsilon:g}, {confidence:g}) raised "
                           f"{error}", tuple(details))
        want = laplace_accuracy(sensitivity, epsilon, 1 - confidence)
        value = _number(got)
        details.append(f"Δ={sensitivity:g}, ε={epsilon:g}, confidence={confidence:g}: "
                       f"expected {want:.6g}, got {got!r}")
        if value is None or not math.isclose(value, want, rel_tol=1e-9):
            b = sensitivity / epsilon
            if value is not None and math.isclose(value, b * math.log(1 / confidence),
                                                  rel_tol=1e-9):
                hint = "β is the probability of *missing*: use ln(1/(1 − confidence))"
            elif value is not None and math.isclose(value, b * math.log(2 / (1 - confidence)),
                                                    rel_tol=1e-9):
                hint = ("P[|Lap(b)| > t] = exp(−t/b) already counts both tails: no factor 2 "
                        "inside the logarithm")
            else:
                hint = "solve P[|Lap(b)| > α] = exp(−α/b) = 1 − confidence for α"
            return Verdict(False, f"for Δ={sensitivity:g}, ε={epsilon:g}, confidence="
                           f"{confidence:g} the half-width is {want:.6g}, got {got!r}; {hint}",
                           tuple(details))
    return Verdict(True, "your interval has exactly the requested coverage", tuple(details))


_CASES = ((10.0, 1.0, 0.5, 1), (-3.0, 2.0, 2.0, 2))
_DRAWS = 4000
_AUDIT_RUNS = 1000
_AUDIT_CONFIDENCE = 1 - 1e-7


def check_laplace_mechanism(fn: Callable[[float, float, float, np.random.Generator], Any]
                            ) -> Verdict:
    """Check ``fn(value, sensitivity, epsilon, generator)``: one Laplace-mechanism release.

    Two Kolmogorov–Smirnov tests of 4,000 releases each against ``value + Lap(Δ/ε)``, then
    an empirical audit (:func:`dpkit.audit.strongest_lower_bound`, threshold events, 1,000
    runs per phase on the neighbouring answers 0 and Δ, confidence ``1 − 1e-7``): the
    audit must not certify an ε above the claimed one. Seeds are fixed; a correct function
    fails with probability below 3e-7 (1e-7 per KS test and for the audit).
    """
    details: list[str] = []
    for value, sensitivity, epsilon, seed in _CASES:
        generator = np.random.default_rng(seed)
        draws = []
        for _ in range(_DRAWS):
            got, error = _call(fn, value, sensitivity, epsilon, generator)
            if error:
                return Verdict(False, f"fn({value:g}, {sensitivity:g}, {epsilon:g}, generator) "
                               f"raised {error}", tuple(details))
            number = _number(got)
            if number is None:
                return Verdict(False, f"expected one finite float per call, got {got!r}",
                               tuple(details))
            draws.append(number)
        sample = np.array(draws)
        scale = sensitivity / epsilon
        pvalue = stats.kstest(sample, stats.laplace(loc=value, scale=scale).cdf).pvalue
        spread = float(np.mean(np.abs(sample - value)))      # estimates the scale b
        details.append(f"value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}: mean |release − "
                       f"value| = {spread:.4g} (expected b = {scale:g}), KS p-value "
                       f"{pvalue:.3g}")
        if pvalue < 1e-7:
            centre = float(np.median(sample))
            if abs(centre - value) > 0.2 * scale:
                hint = f"the releases are centred near {centre:.3g}: add the noise to value"
            elif math.isclose(spread, sensitivity * epsilon, rel_tol=0.1):
                hint = "your noise scale looks like Δ·ε: the scale is Δ/ε"
            elif math.isclose(spread, epsilon / sensitivity, rel_tol=0.1):
                hint = "your noise scale looks like ε/Δ: the scale is Δ/ε"
            else:
                hint = "draw generator.laplace(0, Δ/ε) (or invert the CDF) and add it"
            return Verdict(False, f"your releases are not distributed as value + Lap(Δ/ε); "
                           f"{hint}", tuple(details))
    sensitivity, epsilon = 1.0, 1.0
    generator = np.random.default_rng(3)
    audit = strongest_lower_bound(lambda d, _rng: fn(d, sensitivity, epsilon, generator),
                                  0.0, sensitivity, n=_AUDIT_RUNS,
                                  confidence=_AUDIT_CONFIDENCE, rng=seeded(0))
    details.append(f"audit at ε = {epsilon:g}: {audit}")
    if audit.epsilon > epsilon:
        return Verdict(False, f"the audit certifies ε ≥ {audit.epsilon:.3g} > {epsilon:g}: "
                       "your mechanism adds too little noise", tuple(details))
    return Verdict(True, "your releases follow value + Lap(Δ/ε) and an audit finds no "
                   "violation of ε-DP (mathematically; floating point is another story)",
                   tuple(details))
