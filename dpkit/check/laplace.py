"""Checkers for the exercises of the Laplace chapter.

Every checker is deterministic (fixed seeds and test points) and returns a
:class:`~dpkit.check.Verdict` whose message says what is wrong (too large, too small, which
idea is missing) without printing the expected answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.audit import AuditResult, strongest_lower_bound
from dpkit.check._common import call_number, compare_at, lent_generator
from dpkit.check._verdict import Verdict
from dpkit.i18n import tr
from dpkit.laplace import laplace_accuracy, laplace_grid
from dpkit.rng import seeded

__all__ = ["check_grid_scale", "check_laplace_interval", "check_laplace_mechanism",
           "check_sum_count_sensitivity"]


def _direction(value: float, want: float) -> str:
    return tr("too large") if value > want else tr("too small")


def check_sum_count_sensitivity(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(lower, upper)``: the ℓ1 sensitivity, under add/remove neighbours, of the
    pair (sum of the values clipped to ``[lower, upper]``, number of values).

    ``fn`` is called on five intervals: starting at 0, entirely positive, straddling 0,
    entirely negative, and of length 1. It passes when every result is a finite number equal
    to the exact sensitivity to a relative 1e-12. The check is deterministic.

    A failing verdict names the interval, says whether the result is too large or too small
    and, for a recognised mistake (the change of a *replaced* value, the count forgotten,
    negative values ignored), what the result overlooks; it never states the expected value.
    """
    def wrong(value: float, want: float, lower: float, upper: float) -> str:
        if math.isclose(value, upper - lower + 1, rel_tol=1e-12):
            hint = tr("upper − lower is the change when one person's value is *replaced*; "
                      "our neighbours add or remove a person: how far can that alone move "
                      "the sum?")
        elif math.isclose(value, want - 1, rel_tol=1e-12):
            hint = tr("the count changes too when a person is added or removed: the "
                      "pair's ℓ1 sensitivity covers both numbers")
        elif math.isclose(value, upper + 1, rel_tol=1e-12):
            hint = tr("a clipped value can be negative, and removing a person with a "
                      "negative value changes the sum too: consider every value in "
                      "[lower, upper]")
        else:
            hint = tr("write down the largest change one added or removed person can make "
                      "to the sum and to the count, then take the ℓ1 norm")
        return tr("your sensitivity {value!r} is {direction}; {hint}").format(
            value=value, direction=_direction(value, want), hint=hint)

    found = compare_at(fn, ((0.0, 100.0), (17.0, 90.0), (-5.0, 3.0), (-40.0, -10.0), (0.0, 1.0)),
                       lambda lower, upper: max(abs(lower), abs(upper)) + 1,
                       label=lambda lower, upper: f"[{lower:g}, {upper:g}]", wrong=wrong,
                       rel_tol=1e-12, at=tr("for values clipped to {point}"), tally=True)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("right: one Laplace mechanism with this Δ releases both numbers"),
                   found)


def check_laplace_interval(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, confidence)``: the half-width ``w`` for which the
    interval ``release ± w`` around one Laplace-mechanism release (noise ``Lap(Δ/ε)``)
    contains the true answer with probability exactly ``confidence``.

    ``fn`` is called at four points (Δ from 1 to 5, ε from 0.1 to 2, confidence from 0.5 to
    0.99). It passes when every result is a finite number equal to the exact half-width to
    a relative 1e-9. The check is deterministic.

    A failing verdict names the point and says whether the half-width is too large or too
    small; for a recognised mistake (the confidence used as the miss probability, a spurious
    factor 2, the full width instead of the half) it says which. It never states the
    expected value.
    """
    def wrong(value: float, want: float, sensitivity: float, epsilon: float,
              confidence: float) -> str:
        b = sensitivity / epsilon
        if math.isclose(value, b * math.log(1 / confidence), rel_tol=1e-9):
            hint = tr("1 − confidence is the probability of *missing* the true answer, "
                      "not of covering it")
        elif math.isclose(value, b * math.log(2 / (1 - confidence)), rel_tol=1e-9):
            hint = tr("P[|Lap(b)| > t] = exp(−t/b) already counts both tails: no factor 2 "
                      "inside the logarithm")
        elif math.isclose(value, 2 * want, rel_tol=1e-9):
            hint = tr("that is the width of the whole interval: the question asks for half")
        else:
            hint = tr("solve P[|Lap(b)| > w] = 1 − confidence for w")
        return tr("your half-width is {direction}; {hint}").format(
            direction=_direction(value, want), hint=hint)

    found = compare_at(fn, ((1.0, 1.0, 0.95), (1.0, 0.1, 0.9), (2.0, 0.5, 0.99), (5.0, 2.0, 0.5)),
                       lambda sensitivity, epsilon, confidence:
                       laplace_accuracy(sensitivity, epsilon, 1 - confidence),
                       label=lambda sensitivity, epsilon, confidence:
                       f"Δ={sensitivity:g}, ε={epsilon:g}, confidence={confidence:g}",
                       wrong=wrong, rel_tol=1e-9, tally=True)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("your interval has exactly the requested coverage"), found)


_CASES = ((10.0, 1.0, 0.5, 1), (-3.0, 2.0, 2.0, 2))
_DRAWS = 4000
_AUDIT_RUNS = 1000
_AUDIT_CONFIDENCE = 1 - 1e-7
#: Fewer distinct values than this share of the draws means rounded releases. Continuous
#: noise repeats a value among 4,000 draws with probability about 1e-9, and the exact grid
#: mechanism (steps 2**-20·Δ) about 4 times on average; rounding to 0.001 repeats thousands.
_DISTINCT_SHARE = 0.9
#: Steps a rounded release is commonly a multiple of, coarsest first (named in the verdict).
_ROUNDING_STEPS = (10.0, 1.0, 0.5, 0.1, 0.05, 0.01, 0.001)


def _rounding_hint(sample: np.ndarray) -> str | None:
    """Say that the releases are rounded, if they take too few distinct values."""
    distinct = np.unique(sample).size
    if distinct >= _DISTINCT_SHARE * sample.size:
        return None
    steps = [step for step in _ROUNDING_STEPS
             if np.all(np.abs(sample / step - np.round(sample / step)) < 1e-6)]
    if steps:
        return tr("your releases are rounded: only {distinct} different values among "
                  "{draws} releases, all multiples of {step:g}. Return the release "
                  "unrounded, as a float: rounded releases are no longer distributed as "
                  "value + Lap(Δ/ε)").format(distinct=distinct, draws=sample.size,
                                             step=steps[0])
    return tr("your releases are rounded: only {distinct} different values among {draws} "
              "releases. Return the release unrounded, as a float: rounded releases are no "
              "longer distributed as value + Lap(Δ/ε)").format(distinct=distinct,
                                                               draws=sample.size)


def _audit_text(audit: AuditResult) -> str:
    """``str(audit)`` in the current language: the bound, its confidence, the event that
    certifies it and its counts."""
    k0, k1 = audit.counts
    if audit.complement:
        name = tr("the complement of event {event!r}").format(event=audit.event)
        k0, k1 = audit.n - k0, audit.n - k1
    else:
        name = tr("event {event!r}").format(event=audit.event)
    return tr("ε >= {epsilon:.3f} with confidence {confidence:.10g} ({name}: {k0}/{n} vs "
              "{k1}/{n})").format(epsilon=audit.epsilon, confidence=audit.confidence,
                                  name=name, k0=k0, k1=k1, n=audit.n)


class _AuditStopped(Exception):
    """The student's function failed during the audit (its verdict is kept aside)."""


def check_laplace_mechanism(fn: Callable[[float, float, float, np.random.Generator], Any]
                            ) -> Verdict:
    """Check ``fn(value, sensitivity, epsilon, generator)``: one Laplace-mechanism release.

    Two Kolmogorov–Smirnov tests of 4,000 releases each against ``value + Lap(Δ/ε)``, then
    an empirical audit (:func:`dpkit.audit.strongest_lower_bound`, threshold events at
    quantiles of the releases and "the release equals v" for repeated values, 1,000
    runs per phase on the neighbouring answers 0 and Δ, confidence ``1 − 1e-7``): the
    audit must not certify an ε above the claimed one. Seeds are fixed; a correct function
    fails with probability below 3e-7 (1e-7 per KS test and for the audit).

    Releases that take fewer than 90% distinct values among a case's 4,000 are refused as
    rounded, with a verdict that says so and names the step they are multiples of (1, 0.1,
    ...), before the KS test: rounding to one decimal can pass a KS test, and rounding to an
    integer fails it with no hint of the cause. Continuous noise (and the grid mechanism's,
    2**-20·Δ fine) takes that few distinct values with negligible probability (below 1e-100).
    """
    details: list[str] = []
    for value, sensitivity, epsilon, seed in _CASES:
        generator = lent_generator(seed)
        draws = []
        for _ in range(_DRAWS):
            draw = call_number(fn, value, sensitivity, epsilon, generator,
                               where=tr("for value={value:g}, Δ={sensitivity:g}, "
                                        "ε={epsilon:g}").format(value=value,
                                                                sensitivity=sensitivity,
                                                                epsilon=epsilon),
                               details=details)
            if isinstance(draw, Verdict):
                return draw
            draws.append(draw)
        sample = np.array(draws)
        rounded = _rounding_hint(sample)
        if rounded is not None:
            return Verdict(False, rounded, tuple(details))
        scale = sensitivity / epsilon
        pvalue = stats.kstest(sample, stats.laplace(loc=value, scale=scale).cdf).pvalue
        spread = float(np.mean(np.abs(sample - value)))      # estimates the scale b
        details.append(tr("value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}: mean |release "
                          "− value| = {spread:.4g} (expected b = {scale:g}), KS p-value "
                          "{pvalue:.3g}").format(value=value, sensitivity=sensitivity,
                                                 epsilon=epsilon, spread=spread, scale=scale,
                                                 pvalue=pvalue))
        if pvalue < 1e-7:
            centre = float(np.median(sample))
            below = float(np.mean(sample < value))
            if abs(centre - value) > 2 * scale:
                hint = tr("the releases are centred near {centre:.3g}, not at value: the "
                          "release is value plus noise centred at 0").format(centre=centre)
            elif below < 0.05 or below > 0.95:
                hint = (tr("almost all releases lie above value: the noise must be symmetric "
                           "around 0, negative as often as positive") if below < 0.05 else
                        tr("almost all releases lie below value: the noise must be symmetric "
                           "around 0, negative as often as positive"))
            elif abs(centre - value) > 0.2 * scale:
                hint = tr("the releases are centred near {centre:.3g}, not at value: the "
                          "noise must be symmetric around 0").format(centre=centre)
            elif math.isclose(spread, sensitivity * epsilon, rel_tol=0.1):
                hint = tr("your noise scale looks like Δ·ε: the scale is Δ/ε")
            elif math.isclose(spread, epsilon / sensitivity, rel_tol=0.1):
                hint = tr("your noise scale looks like ε/Δ: the scale is Δ/ε")
            else:
                hint = tr("the spread or the shape of your noise is not that of Lap(Δ/ε): "
                          "compare its tails with P[|noise| > t] = exp(−t/b) for b = "
                          "{scale:g}").format(scale=scale)
            return Verdict(False, tr("your releases are not distributed as value + Lap(Δ/ε); "
                                     "{hint}").format(hint=hint), tuple(details))
    sensitivity, epsilon = 1.0, 1.0
    generator = lent_generator(3)
    refused: list[Verdict] = []

    def release(value: float, _rng: Any) -> float:
        """One release read as a number; a failing verdict stops the audit."""
        got = call_number(fn, value, sensitivity, epsilon, generator,
                          where=tr("in the audit, for value={value:g}, Δ={sensitivity:g}, "
                                   "ε={epsilon:g}").format(value=value, sensitivity=sensitivity,
                                                           epsilon=epsilon),
                          details=details)
        if isinstance(got, Verdict):
            refused.append(got)
            raise _AuditStopped
        return got

    try:
        audit = strongest_lower_bound(release, 0.0, sensitivity, n=_AUDIT_RUNS,
                                      confidence=_AUDIT_CONFIDENCE, rng=seeded(0))
    except _AuditStopped:
        return refused[0]
    details.append(tr("audit at ε = {epsilon:g}, {runs} runs per input (confidence 1 − 1e-7: "
                      "the bound is wrong with probability at most 1e-7): {audit}").format(
                          epsilon=epsilon, runs=_AUDIT_RUNS, audit=_audit_text(audit)))

    if audit.epsilon > epsilon:
        return Verdict(False, tr("the audit certifies ε ≥ {certified:.3g} > {epsilon:g}: your "
                                 "mechanism adds too little noise").format(
                                     certified=audit.epsilon, epsilon=epsilon), tuple(details))
    return Verdict(True, tr("your releases follow value + Lap(Δ/ε) and an audit finds no "
                            "violation of ε-DP (mathematically; floating point is another "
                            "story)"), tuple(details))


def _other_grid_step(value: float, sensitivity: float, epsilon: float, d: int,
                     exponent: int) -> str | None:
    """Whether ``value`` is the scale for a power-of-two grid step other than ``2**exponent``
    (within 64 binary orders of it): "smaller" or "larger" (in the current language), else
    None."""
    for shift in range(-64, 65):
        h = 2.0 ** (exponent + shift)
        if shift and math.isclose(value, (math.floor(sensitivity / h) + d) * h / epsilon,
                                  rel_tol=1e-12):
            return tr("smaller") if shift < 0 else tr("larger")
    return None


def check_grid_scale(fn: Callable[[float, float, int], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, d)``: the noise scale of the grid Laplace mechanism
    (the chapter's safe mechanism), in the query's own units, for a query of ℓ1 sensitivity
    ``Δ`` with ``d`` coordinates.

    ``fn`` is called at five points (Δ from 0.75 to 91, ε from 0.1 to 2, d from 1 to 5). It
    passes when every result is a finite number equal to the mechanism's exact scale to a
    relative 1e-12, tight enough to tell the grid's widening (a relative 2**-20 at most) from
    the textbook Δ/ε. The check is deterministic.

    A failing verdict names the point, says whether the scale is too large or too small and,
    for a recognised mistake (the textbook scale, the scale left in grid units, a grid step
    not the largest power of two with ``d·g <= 2**-20·Δ``, for instance ``2**-20`` kept
    whatever Δ and d, a widening of one step instead of one per coordinate), which; it never
    states the expected value.
    """
    def wrong(value: float, want: float, sensitivity: float, epsilon: float, d: int) -> str:
        grid = laplace_grid(sensitivity, epsilon, d)
        g = 2.0**grid.exponent
        if math.isclose(value, sensitivity / epsilon, rel_tol=1e-12):
            hint = tr("that is the textbook scale: rounding to the grid widens the sensitivity")
        elif math.isclose(value, grid.sensitivity_units / epsilon, rel_tol=1e-12):
            hint = tr("that is the scale in grid units: convert it to the query's units")
        elif math.isclose(value, (math.floor(sensitivity / g) + 1) * g / epsilon,
                          rel_tol=1e-12):
            hint = tr("each of the d coordinates can move by half a grid step")
        elif (step := _other_grid_step(value, sensitivity, epsilon, d, grid.exponent)):
            hint = tr("your grid step is not the largest power of two g with d·g <= 2**-20·Δ "
                      "(yours is {step}): g depends on Δ and d, so compute it at every "
                      "point").format(step=step)
        else:
            hint = tr("the widened sensitivity floor(Δ/g) + d is in grid units")
        return tr("your scale is {direction}; {hint}").format(
            direction=_direction(value, want), hint=hint)

    found = compare_at(fn, ((1.0, 0.5, 1), (91.0, 1.0, 2), (3.0, 0.1, 5), (0.75, 2.0, 1),
                            (1.0, 1.0, 3)),
                       lambda sensitivity, epsilon, d: laplace_grid(sensitivity, epsilon, d).scale,
                       label=lambda sensitivity, epsilon, d:
                       f"Δ={sensitivity:g}, ε={epsilon:g}, d={d}",
                       wrong=wrong, rel_tol=1e-12, tally=True)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("right: the grid costs a factor of at most 1 + 2**-20 in noise"),
                   found)

