"""Checkers for the exercises of the Gaussian and analytic-Gaussian chapters.

Every checker is deterministic (fixed seeds and fixed test points) and returns a
:class:`~dpkit.check.Verdict` whose message says where the answer fails and what is wrong
with it, without stating the expected answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.check._common import call, call_checked, call_number, coerce, compare_at, shown
from dpkit.check._verdict import Verdict
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
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
            hint = ("that is the ℓ1 norm of the worst change; measure the same vector "
                    "with the ℓ2 norm")
        else:
            hint = ("write down the worst change vector for these k and c, then take its "
                    "ℓ2 norm")
        return f"your function returned {value!r}, which is not the ℓ2 sensitivity; {hint}"

    found = compare_at(fn, ((1, 1.0), (4, 1.0), (10, 0.5), (100, 3.0), (2, 2.5)),
                       lambda k, c: c * math.sqrt(k), label=lambda k, c: f"k={k}, c={c:g}",
                       wrong=wrong, rel_tol=1e-9)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, "your function is the ℓ2 norm of the worst change one person can "
                   "make", found)


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
        side = "smaller" if value < want else "larger"
        return (f"your σ {value!r} does not match Theorem A.1 ({side} than the theorem's σ): "
                f"check the constant inside the logarithm and how Δ and ε enter")

    found = compare_at(fn, ((1.0, 0.5, 1e-5), (2.0, 0.1, 1e-3), (0.3, 0.9, 1e-9),
                            (1.0, 0.01, 0.2)), classic_sigma, label=_sigma_point,
                       wrong=wrong, rel_tol=1e-9)
    if isinstance(found, Verdict):
        return found
    details = list(found)
    for epsilon in (1.0, 3.0):
        got, error = call(fn, 1.0, epsilon, 1e-5)
        if error is None or not error.startswith("ValueError"):
            found = f"it returned {shown(got)}" if error is None else f"it raised {error}"
            return Verdict(False, f"at ε={epsilon:g} the classic calibration is not proven "
                           f"private: raise ValueError (pointing to the analytic Gaussian); "
                           f"{found}", tuple(details))
        details.append(f"ε={epsilon:g}: refused with {error}")
    return Verdict(True, "your classic σ is right, and you refuse ε ≥ 1 where its proof "
                   "does not hold", tuple(details))


def check_crossover_dimension(answer: Any, epsilon: float = 0.5, delta: float = 1e-5) -> Verdict:
    """Check the smallest dimension d at which the Gaussian mechanism with the classic σ
    (ℓ2 sensitivity √d) adds less noise per coordinate than the Laplace mechanism (scale d/ε).

    An integer-valued float (``12.0``) is accepted as an integer. A wrong answer's verdict says
    only whether the Gaussian is already ahead at that d (then it is not the smallest such d)
    or not yet ahead; it never names the answer or a dimension other than the one given.
    """
    want = next(d for d in range(1, 10_000)
                if vector_errors(d, epsilon, delta)[1] < vector_errors(d, epsilon, delta)[0])
    whole, why = coerce(answer, whole=True)
    if why is not None:
        return Verdict(False, f"answer with an integer dimension, got {why}")
    answer = whole
    if answer != want:
        if answer < want:
            why = f"at d = {answer} the Gaussian mechanism is not yet ahead"
        else:
            why = (f"the Gaussian mechanism is ahead at d = {answer}, but that is not the "
                   f"smallest such d")
        return Verdict(False, f"{answer} is not the answer: {why}. Compare the two standard "
                       f"deviations per coordinate for each d")
    lap, gau = vector_errors(want, epsilon, delta)
    return Verdict(True, f"from d = {want} on, the Gaussian mechanism adds less noise per "
                   f"coordinate (ε = {epsilon:g}, δ = {delta:g})",
                   (f"at d={want}: Laplace std {lap:.4g}, Gaussian std {gau:.4g}",))


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
        hint = ("at such small δ, Φ computed as (1 + erf)/2 has no correct digits left: "
                "compute the normal tail without forming 1 − (something close to 1)"
                if want < 1e-12 else
                "compare your formula with the theorem term by term")
        return (f"your profile {value!r} is wrong (relative error "
                f"{abs(value - want) / want:.1e}); {hint}")

    found = compare_at(fn, _PROFILE_POINTS, delta_for_sigma,
                       label=lambda sigma, sensitivity, epsilon:
                       f"σ={sigma:g}, Δ={sensitivity:g}, ε={epsilon:g}",
                       wrong=wrong, rel_tol=1e-6)
    if isinstance(found, Verdict):
        return found
    return Verdict(True, "your profile is accurate from δ ≈ 0.5 down to δ ≈ 1e-25", found)


_SIGMA_POINTS = ((1.0, 1.0, 1e-5), (1.0, 0.1, 1e-3), (2.0, 5.0, 1e-8), (1.0, 0.5, 1e-12),
                 (0.5, 10.0, 1e-3), (1.0, 1.0, 1e-20))


_DELTA_SLACK = 2e-11   # relative excess of δ(σ) over the target allowed for rounding


def check_analytic_sigma(fn: Callable[[float, float, float], float]) -> Verdict:
    """Check ``fn(sensitivity, epsilon, delta)``: the smallest σ whose Gaussian privacy
    profile meets the target, δ(σ) ≤ δ (the analytic Gaussian calibration).

    ``fn`` is called at six points, including ε > 1 and δ = 1e-20. Safety is judged on δ,
    not on σ: the returned σ fails when its true δ, computed by a profile that never
    under-reports, exceeds the target by more than a relative 2e-11 (a log-space
    double-precision δ(σ) and a bisection to 1e-13 that returns the upper end of its bracket
    stay below 1e-11 at these points). So a σ below the calibrated one by more than rounding
    fails: the lower end of a bisection bracket fails unless the bracket is narrower than
    about 1e-12 relative, where the two ends cannot be told apart in double precision.
    Tightness: σ must exceed the calibrated σ by at most a relative 1e-6. The check is
    deterministic. A failing verdict names the point and, for a σ too small, its true δ;
    never the expected σ.
    """
    details = []
    for sensitivity, epsilon, delta in _SIGMA_POINTS:
        point = _sigma_point(sensitivity, epsilon, delta)
        value = call_number(fn, sensitivity, epsilon, delta, where=f"for {point}", low=0.0,
                            strict=True, need="σ must be positive", details=details)
        if isinstance(value, Verdict):
            return value
        true_delta = delta_for_sigma(value, sensitivity, epsilon)
        if true_delta > delta * (1 + _DELTA_SLACK):
            return Verdict(False, f"for {point} your σ {value:.10g} is too small: its true δ "
                           f"is {true_delta:.6e}, above the target {delta:g} (by a relative "
                           f"{true_delta / delta - 1:.1e}). The σ returned must satisfy "
                           f"δ(σ) ≤ δ: if you bisect, return the end of the bracket where that "
                           f"holds and make the bracket narrow; if you do, check the accuracy "
                           f"of your δ(σ) at this point", tuple(details))
        want = analytic_sigma(sensitivity, epsilon, delta)
        if value > want * (1 + 1e-6):
            return Verdict(False, f"for {point} your σ {value:.10g} is private but larger "
                           f"than needed (by a relative {value / want - 1:.1e}): tighten the "
                           f"search", tuple(details))
        details.append(f"{point}: {value:.10g} meets the target δ and is tight")
    return Verdict(True, "your calibration is tight, and its true δ is within a relative "
                   "2e-11 (rounding) of the target at every test point", tuple(details))


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
        where = f"for σ={sigma:g}, size=4000"
        got = call_checked(fn, sigma, 4000, np.random.default_rng(seed), where=where,
                           details=details)
        if isinstance(got, Verdict):
            return got
        read, why = coerce(got, length=4000)
        if why is not None:
            return Verdict(False, f"{where}, your function returned {why}", tuple(details))
        draws = np.array(read)
        std = float(draws.std())
        pvalue = float(stats.kstest(draws / sigma, "norm").pvalue)
        details.append(f"σ={sigma:g}: sample std {std:.4f}, KS p-value {pvalue:.2g}")
        if pvalue < 5e-7:
            if math.isclose(std, sigma**2, rel_tol=0.1):
                hint = ("the spread is σ², not σ: numpy's normal(loc, scale) takes the "
                        "standard deviation, not the variance")
            else:
                hint = f"expected N(0, {sigma:g}²), the sample std is {std:.4f}"
            return Verdict(False, f"the draws do not follow N(0, σ²) at σ={sigma:g}: {hint}",
                           tuple(details))
    return Verdict(True, "your noise has standard deviation σ", tuple(details))


_NEWTON_POINTS = ((-1.0, 0.5), (0.0, 1.0), (0.5, 1.0), (2.0, 0.5), (1.5, 3.0), (3.5, 2.0))


def check_newton_derivative(fn: Callable[[float, float], float]) -> Verdict:
    """Check ``fn(x, epsilon)``: G'(x) for G(x) = e^ε·F(√(x² + ε)) − F(x), F(x) = ∫₀ˣ e^{−t²} dt.

    ``fn`` is called at six points (x from −1 to 3.5, ε from 0.5 to 3) and passes when every
    result is a finite number equal to the derivative to a relative 1e-9. The check is
    deterministic. A failing verdict names the point and the value returned and, for a
    recognised mistake (the sign, a plausible wrong derivative), says which; never the
    expected value.
    """
    def wrong(value: float, want: float, x: float, epsilon: float) -> str:
        source = (math.exp(epsilon) * math.exp(-x * x - 1.0) * x / math.sqrt(x * x + 1.0)
                  - math.exp(2.0 * x * x))
        if math.isclose(value, source, rel_tol=1e-9):
            hint = ("that is a plausible wrong derivative (no published source); "
                    "differentiate F(√(x² + ε)) yourself with the chain rule")
        elif math.isclose(value, -want, rel_tol=1e-9):
            hint = "the sign is wrong"
        else:
            hint = "use F'(u) = e^{−u²} and the chain rule for √(x² + ε)"
        return f"your function returned {value!r}, which is not G'(x); {hint}"

    found = compare_at(fn, _NEWTON_POINTS,
                       lambda x, epsilon: math.exp(-x * x) * (x / math.sqrt(x * x + epsilon) - 1.0),
                       label=lambda x, epsilon: f"x={x:g}, ε={epsilon:g}", wrong=wrong,
                       rel_tol=1e-9, at="at")
    if isinstance(found, Verdict):
        return found
    return Verdict(True, "your G' is right: Newton's method on G now converges to χ", found)
