"""Checkers for the exercises of the Gaussian and analytic-Gaussian chapters.

Every checker is deterministic (fixed seeds and fixed test points) and returns a
:class:`~dpkit.check.Verdict` whose message says where the answer fails and what is wrong
with it, without stating the expected answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gmpy2
import numpy as np
from scipy import stats

from dpkit.check._common import (
    call,
    call_checked,
    call_number,
    coerce,
    compare_at,
    lent_generator,
    shown,
)
from dpkit.check._verdict import Verdict
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.i18n import tr
from dpkit.plots.gaussian import vector_errors

__all__ = [
    "check_analytic_sigma",
    "check_classic_sigma",
    "check_crossover_dimension",
    "check_delta_for_sigma",
    "check_gaussian_noise",
    "check_l2_sensitivity",
    "check_newton_derivative",
]


def check_l2_sensitivity(fn: Callable[[int, float], float]) -> Verdict:
    """Check ``fn(k, c)``: the ℓ2 sensitivity of a vector query where one person changes at
    most ``k`` coordinates, each by at most ``c``.

    ``fn`` is called at five points (k from 1 to 100, c from 0.5 to 3). It passes when every
    result is a finite number equal to the exact sensitivity to a relative 1e-9. The check is
    deterministic. A failing verdict names the point and what was returned, and says so if
    the result is the sensitivity in another norm; never the expected value.
    """
    def wrong(value: float, want: float, k: int, c: float) -> str:
        if math.isclose(value, c * k, rel_tol=1e-9) and k > 1:
            hint = tr("that is the ℓ1 norm of the worst change; measure the same vector "
                      "with the ℓ2 norm")
        else:
            hint = tr("write down the worst change vector for these k and c, then take its "
                      "ℓ2 norm")
        return tr("your function returned {value!r}, which is not the ℓ2 sensitivity; "
                  "{hint}").format(value=value, hint=hint)

    found = compare_at(fn, ((1, 1.0), (4, 1.0), (10, 0.5), (100, 3.0), (2, 2.5)),
                       lambda k, c: c * math.sqrt(k), label=lambda k, c: f"k={k}, c={c:g}",
                       wrong=wrong, rel_tol=1e-9)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("your function is the ℓ2 norm of the worst change one person can "
                            "make"), found)


def _sigma_point(sensitivity: float, epsilon: float, delta: float) -> str:
    return f"Δ={sensitivity:g}, ε={epsilon:g}, δ={delta:g}"


def check_classic_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, delta)``: the σ of the classic Gaussian calibration
    (Theorem A.1 of Dwork & Roth 2014, the chapter's classic theorem).

    ``fn`` is called at four points with ε < 1 (Δ from 0.3 to 2, δ from 1e-9 to 0.2) and
    passes when every result is a finite number equal to the theorem's σ to a relative 1e-9;
    it must then raise ``ValueError`` at ε = 1 and ε = 3, where the theorem does not apply.
    The check is deterministic. A failing verdict names the point and whether the σ is too
    small or too large; never the expected σ.
    """
    def wrong(value: float, want: float, *_: float) -> str:
        said = (tr("your σ {value!r} does not match Theorem A.1 (smaller than the theorem's "
                   "σ): check the constant inside the logarithm and how Δ and ε enter")
                if value < want else
                tr("your σ {value!r} does not match Theorem A.1 (larger than the theorem's "
                   "σ): check the constant inside the logarithm and how Δ and ε enter"))
        return said.format(value=value)

    found = compare_at(fn, ((1.0, 0.5, 1e-5), (2.0, 0.1, 1e-3), (0.3, 0.9, 1e-9),
                            (1.0, 0.01, 0.2)), classic_sigma, label=_sigma_point,
                       wrong=wrong, rel_tol=1e-9)
    if isinstance(found, Verdict):
        return found
    details = list(found)
    for epsilon in (1.0, 3.0):
        got, error = call(fn, 1.0, epsilon, 1e-5)
        if error is None or not error.startswith("ValueError"):
            found = (tr("it returned {value}").format(value=shown(got)) if error is None
                     else tr("it raised {error}").format(error=error))
            return Verdict(False, tr("at ε={epsilon:g} the classic calibration is not proven "
                                     "private: raise ValueError (pointing to the analytic "
                                     "Gaussian); {found}").format(epsilon=epsilon, found=found),
                           tuple(details))
        details.append(tr("ε={epsilon:g}: refused with {error}").format(epsilon=epsilon,
                                                                          error=error))
    return Verdict(True, tr("your classic σ is right, and you refuse ε ≥ 1 where its proof "
                            "does not hold"), tuple(details))


def check_crossover_dimension(answer: Any, epsilon: float = 0.5, delta: float = 1e-5) -> Verdict:
    """Check the smallest dimension d at which the Gaussian mechanism with the classic σ
    (ℓ2 sensitivity √d) adds less noise per coordinate than the Laplace mechanism (scale d/ε).

    An integer-valued float (``12.0``) is accepted as an integer. A wrong answer's verdict says
    only whether the Gaussian is already ahead at that d (then it is not the smallest such d)
    or not yet ahead, and, for the smallest d at which σ falls below the Laplace *scale*
    b = d/ε rather than its standard deviation √2·b, that b is not a standard deviation; it
    never names the answer or a dimension other than the one given.
    """
    def first(ahead: Callable[[float, float], bool]) -> int:
        return next(d for d in range(1, 10_000) if ahead(*vector_errors(d, epsilon, delta)))

    want = first(lambda lap, gau: gau < lap)
    whole, why = coerce(answer, whole=True)
    if why is not None:
        return Verdict(False, tr("answer with an integer dimension, got {why}").format(why=why))
    answer = whole
    if answer != want:
        if answer < want:
            why = tr("at d = {answer} the Gaussian mechanism is not yet ahead").format(
                answer=answer)
        else:
            why = tr("the Gaussian mechanism is ahead at d = {answer}, but that is not the "
                     "smallest such d").format(answer=answer)
        if answer == first(lambda lap, gau: gau < lap / math.sqrt(2)):
            why = tr("{why}; {answer} is where σ falls below the Laplace scale b = d/ε, but b "
                     "is not a standard deviation: Lap(b) has standard deviation √2·b").format(
                         why=why, answer=answer)
        return Verdict(False, tr("{answer} is not the answer: {why}. Compare the two standard "
                                 "deviations per coordinate for each d").format(answer=answer,
                                                                                why=why))
    lap, gau = vector_errors(want, epsilon, delta)
    return Verdict(True, tr("from d = {want} on, the Gaussian mechanism adds less noise per "
                            "coordinate (ε = {epsilon:g}, δ = {delta:g})").format(
                                want=want, epsilon=epsilon, delta=delta),
                   (tr("at d={want}: Laplace std {laplace:.4g}, Gaussian std "
                       "{gaussian:.4g}").format(want=want, laplace=lap, gaussian=gau),))


# Test points (σ, Δ, ε) whose δ runs from ~0.5 down to ~1e-25.
_PROFILE_POINTS = ((0.5, 1.0, 1.0), (1.0, 1.0, 0.5), (2.0, 1.0, 1.0), (4.0, 1.0, 0.3),
                   (3.0, 1.0, 2.0), (8.0, 2.0, 1.5), (10.0, 1.0, 1.0), (30.0, 1.0, 0.2))


def check_delta_for_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sigma, sensitivity, epsilon)``: the privacy profile δ(ε) of Gaussian noise
    of standard deviation σ on a query of ℓ2 sensitivity Δ (the chapter's profile theorem).

    ``fn`` is called at eight points whose exact δ runs from about 0.5 down to about 1e-25.
    It passes when every result is a finite number within a relative 1e-6 of the exact
    profile, so it must stay accurate in the far tail, where a normal distribution function
    computed as (1 + erf)/2 has no correct digits left. The check is deterministic. A failing
    verdict names the point, the value returned and its relative error.
    """
    def wrong(value: float, want: float, *_: float) -> str:
        hint = (tr("at such small δ, Φ computed as (1 + erf)/2 has no correct digits left: "
                   "compute the normal tail without forming 1 − (something close to 1)")
                if want < 1e-12 else
                tr("compare your formula with the theorem term by term"))
        return tr("your profile {value!r} is wrong (relative error {error:.1e}); "
                  "{hint}").format(value=value, error=abs(value - want) / want, hint=hint)

    found = compare_at(fn, _PROFILE_POINTS, delta_for_sigma,
                       label=lambda sigma, sensitivity, epsilon:
                       f"σ={sigma:g}, Δ={sensitivity:g}, ε={epsilon:g}",
                       wrong=wrong, rel_tol=1e-6)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("your profile is accurate from δ ≈ 0.5 down to δ ≈ 1e-25"), found)


_SIGMA_POINTS = ((1.0, 1.0, 1e-5), (1.0, 0.1, 1e-3), (2.0, 5.0, 1e-8), (1.0, 0.5, 1e-12),
                 (0.5, 10.0, 1e-3), (1.0, 1.0, 1e-20))


#: The relative excess of δ(σ) over the target allowed for rounding is this factor times a
#: first-order estimate of the rounding error of δ(σ) evaluated in double precision.
_ROUNDING_FACTOR = 8


def _exact_excess(sigma: float, sensitivity: float, epsilon: float,
                  delta: float) -> tuple[float, float]:
    """``(δ(σ)/δ − 1, tolerance)``: the exact relative excess of the Gaussian profile over
    the target, and the excess allowed for the rounding error of evaluating it in doubles.

    Both in 256-bit MPFR arithmetic (gmpy2). With ``x = εσ/Δ − Δ/(2σ)``,
    ``y = εσ/Δ + Δ/(2σ)``, ``P = Φ(−x)`` and ``Q = e^ε Φ(−y)`` (so δ(σ) = P − Q), the
    tolerance is ``8 · 2**-53 · (P + Q)/(P − Q) · (1 + y²)``: rounding an input by one unit
    moves ``Φ(−y)`` by a relative ``1 + y²`` or so, and the difference ``P − Q`` magnifies its
    terms' errors by ``(P + Q)/(P − Q)``.
    """
    with gmpy2.context(precision=256):
        ratio = gmpy2.mpfr(sigma) / gmpy2.mpfr(sensitivity)
        e = gmpy2.mpfr(epsilon)
        x, y = e * ratio - 1 / (2 * ratio), e * ratio + 1 / (2 * ratio)
        root2 = gmpy2.sqrt(2)
        p = gmpy2.erfc(x / root2) / 2
        q = gmpy2.exp(e) * gmpy2.erfc(y / root2) / 2
        excess = (p - q) / gmpy2.mpfr(delta) - 1
        tolerance = _ROUNDING_FACTOR * gmpy2.mpfr(2) ** -53 * (p + q) / (p - q) * (1 + y * y)
        return float(excess), float(tolerance)


def check_analytic_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, delta)``: the smallest σ whose Gaussian privacy
    profile meets the target, δ(σ) ≤ δ (the analytic Gaussian calibration).

    ``fn`` is called at six points, including ε > 1 and δ = 1e-20. Safety is judged on δ,
    not on σ: the exact δ(σ) of the returned σ, computed in 256-bit arithmetic, must not
    exceed the target by more than the rounding error of evaluating δ(σ) in double
    precision. That allowance is 8 times a first-order estimate of that error,
    ``2**-53 · (P + Q)/(P − Q) · (1 + y²)`` relative, where δ(σ) = P − Q with
    ``P = Φ(−x)``, ``Q = e^ε Φ(−y)``, ``x = εσ/Δ − Δ/(2σ)`` and ``y = εσ/Δ + Δ/(2σ)``; at
    the six points it is between about 1e-13 and 1e-11 relative, and the verdict reports
    it. So a σ on the unsafe side of the root fails unless it is within rounding of it:
    the lower end or the midpoint of a bisection bracket 1e-13 wide fails, and the upper end
    passes when δ(σ) is computed accurately. Tightness: σ must exceed the calibrated σ by
    at most a relative 1e-6. The check is deterministic. A failing verdict names the point
    and, for a σ too small, its exact δ and the allowance; never the expected σ.
    """
    details = []
    largest = 0.0
    for sensitivity, epsilon, delta in _SIGMA_POINTS:
        point = _sigma_point(sensitivity, epsilon, delta)
        value = call_number(fn, sensitivity, epsilon, delta,
                            where=tr("for {point}").format(point=point), low=0.0,
                            strict=True, need=tr("σ must be positive"), details=details)
        if isinstance(value, Verdict):
            return value
        excess, tolerance = _exact_excess(value, sensitivity, epsilon, delta)
        if excess > tolerance:
            return Verdict(False, tr("for {point} your σ {value:.10g} is too small: its exact "
                                     "δ is {exact:.6e}, above the target {delta:g} by a "
                                     "relative {excess:.1e}, more than the {tolerance:.1e} "
                                     "that rounding in a double-precision δ(σ) can explain. "
                                     "The σ returned must satisfy δ(σ) ≤ δ: if you bisect, "
                                     "return the end of the bracket where that holds and make "
                                     "the bracket narrow; if you do, check the accuracy of "
                                     "your δ(σ) at this point").format(
                                         point=point, value=value, exact=delta * (1 + excess),
                                         delta=delta, excess=excess, tolerance=tolerance),
                           tuple(details))
        want = analytic_sigma(sensitivity, epsilon, delta)
        if value > want * (1 + 1e-6):
            return Verdict(False, tr("for {point} your σ {value:.10g} is private but larger "
                                     "than needed (by a relative {excess:.1e}): tighten the "
                                     "search").format(point=point, value=value,
                                                      excess=value / want - 1), tuple(details))
        largest = max(largest, excess)
        details.append(tr("{point}: {value:.10g} meets the target δ (exact δ(σ)/δ − 1 = "
                          "{excess:.1e}, rounding allowance {tolerance:.1e}) and is "
                          "tight").format(point=point, value=value, excess=excess,
                                          tolerance=tolerance))
    if largest > 0:
        return Verdict(True, tr("your calibration is tight; at some test point its exact δ is "
                                "above the target by a relative {largest:.1e}, within the "
                                "rounding error of evaluating δ(σ) in double precision (see "
                                "the details)").format(largest=largest), tuple(details))
    return Verdict(True, tr("your calibration is tight, and its exact δ is at most the target "
                            "at every test point"), tuple(details))


def check_gaussian_noise(fn: Callable[[float, int, np.random.Generator], Any]) -> Verdict:
    """Check ``fn(sigma, size, generator)``: ``size`` independent draws of N(0, σ²), as an
    array, from the NumPy ``generator``.

    Two Kolmogorov–Smirnov tests of 4,000 draws each (σ = 0.3 and σ = 4) against N(0, σ²),
    each rejecting at p < 5e-7, with fixed seeds: a correct function fails with probability
    below 1e-6, and the verdict is the same at every run. A failing verdict reports the
    sample's standard deviation and the p-value.
    """
    details = []
    for sigma, seed in ((0.3, 1), (4.0, 2)):
        where = tr("for σ={sigma:g}, size=4000").format(sigma=sigma)
        got = call_checked(fn, sigma, 4000, lent_generator(seed), where=where,
                           details=details)
        if isinstance(got, Verdict):
            return got
        read, why = coerce(got, length=4000)
        if why is not None:
            return Verdict(False, tr("{where}, your function returned {why}").format(
                where=where, why=why), tuple(details))
        draws = np.array(read)
        std = float(draws.std())
        pvalue = float(stats.kstest(draws / sigma, "norm").pvalue)
        details.append(tr("σ={sigma:g}: sample std {std:.4f}, KS p-value {pvalue:.2g}").format(
            sigma=sigma, std=std, pvalue=pvalue))
        if pvalue < 5e-7:
            if math.isclose(std, sigma**2, rel_tol=0.1):
                hint = tr("the spread is σ², not σ: numpy's normal(loc, scale) takes the "
                          "standard deviation, not the variance")
            else:
                hint = tr("expected N(0, {sigma:g}²), the sample std is {std:.4f}").format(
                    sigma=sigma, std=std)
            return Verdict(False, tr("the draws do not follow N(0, σ²) at σ={sigma:g}: "
                                     "{hint}").format(sigma=sigma, hint=hint), tuple(details))
    return Verdict(True, tr("your noise has standard deviation σ"), tuple(details))


_NEWTON_POINTS = ((-1.0, 0.5), (0.0, 1.0), (0.5, 1.0), (2.0, 0.5), (1.5, 3.0), (3.5, 2.0))


def check_newton_derivative(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(chi, epsilon)``: G'(χ) for G(χ) = e^ε·F(√(χ² + ε)) − F(χ), F(z) = ∫₀ᶻ e^{−t²} dt.

    ``fn`` is called at six points (χ from −1 to 3.5, ε from 0.5 to 3) and passes when every
    result is a finite number equal to the derivative to a relative 1e-9. The check is
    deterministic. A failing verdict names the point and the value returned and, for a
    recognised mistake (the sign, a plausible wrong derivative), says which; never the
    expected value.
    """
    def wrong(value: float, want: float, chi: float, epsilon: float) -> str:
        source = (math.exp(epsilon) * math.exp(-chi * chi - 1.0) * chi
                  / math.sqrt(chi * chi + 1.0) - math.exp(2.0 * chi * chi))
        if math.isclose(value, source, rel_tol=1e-9):
            hint = tr("that is a plausible wrong derivative (no published source); "
                      "differentiate F(√(χ² + ε)) yourself with the chain rule")
        elif math.isclose(value, -want, rel_tol=1e-9):
            hint = tr("the sign is wrong")
        else:
            hint = tr("use F'(z) = e^{−z²} and the chain rule for √(χ² + ε)")
        return tr("your function returned {value!r}, which is not G'(χ); {hint}").format(
            value=value, hint=hint)

    found = compare_at(fn, _NEWTON_POINTS,
                       lambda chi, epsilon: math.exp(-chi * chi)
                       * (chi / math.sqrt(chi * chi + epsilon) - 1.0),
                       label=lambda chi, epsilon: f"χ={chi:g}, ε={epsilon:g}", wrong=wrong,
                       rel_tol=1e-9, at=tr("at {point}"))
    if isinstance(found, Verdict):
        return found
    return Verdict(True, tr("your G' is right: Newton's method on G now converges to χ"), found)

