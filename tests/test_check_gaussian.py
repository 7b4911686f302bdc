"""Tests of dpkit.check.gaussian: right answers pass, each typical wrong answer fails clearly."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, log_ndtr, ndtr

from dpkit.check import (
    Verdict,
    check_analytic_sigma,
    check_classic_sigma,
    check_crossover_dimension,
    check_delta_for_sigma,
    check_gaussian_noise,
    check_l2_sensitivity,
    check_newton_derivative,
)
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.naive.gaussian import analytic_sigma_erf
from dpkit.plots.gaussian import vector_errors


def test_l2_sensitivity() -> None:
    assert check_l2_sensitivity(lambda k, c: c * math.sqrt(k)).passed
    verdict = check_l2_sensitivity(lambda k, c: c * k)
    assert not verdict.passed and "ℓ1" in verdict.message
    assert "2.0" not in str(verdict) and "sqrt" not in str(verdict)   # no answer given away
    assert not check_l2_sensitivity(lambda k, c: "1").passed
    raised = check_l2_sensitivity(lambda k, c: 1 / 0)
    assert not raised.passed and "ZeroDivisionError" in raised.message


def test_classic_sigma() -> None:
    assert check_classic_sigma(classic_sigma).passed

    def no_refusal(sensitivity: float, epsilon: float, delta: float) -> float:
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon

    verdict = check_classic_sigma(no_refusal)
    assert not verdict.passed and "ValueError" in verdict.message
    wrong = check_classic_sigma(lambda s, e, d: s * math.sqrt(2 * math.log(1 / d)) / e)
    assert not wrong.passed and "does not match Theorem A.1" in wrong.message
    # the verdict must not give the answer away
    assert f"{classic_sigma(1.0, 0.5, 1e-5):.4g}" not in str(wrong)


def test_crossover_dimension() -> None:
    verdicts = {d: check_crossover_dimension(d) for d in range(1, 30)}
    passing = [d for d, v in verdicts.items() if v.passed]
    assert len(passing) == 1
    d = passing[0]
    assert "not yet ahead" in verdicts[d - 1].message
    assert "not the smallest" in verdicts[d + 1].message
    for wrong in (d - 1, d + 1, d + 5):      # the answer is never named, nor a neighbour of it
        message = verdicts[wrong].message.replace(str(wrong), "")
        assert str(d) not in message and str(d - 1) not in message
    assert check_crossover_dimension(float(d)).passed      # an integer-valued float is fine
    assert check_crossover_dimension(np.float64(d)).passed
    assert not check_crossover_dimension(d + 0.5).passed
    assert not check_crossover_dimension(True).passed


def test_crossover_names_the_laplace_scale_mistake() -> None:
    """The answer of a student who compares σ with the Laplace scale b = d/ε (not with its
    standard deviation √2·b) gets told so; other wrong answers do not (student review 19)."""
    scale_answer = next(d for d in range(1, 1000)
                        if vector_errors(d, 0.5, 1e-5)[1] < vector_errors(d, 0.5, 1e-5)[0]
                        / math.sqrt(2))
    verdict = check_crossover_dimension(scale_answer)
    assert not verdict.passed and "√2·b" in verdict.message
    assert "√2·b" not in check_crossover_dimension(scale_answer + 1).message


def test_delta_for_sigma() -> None:
    assert check_delta_for_sigma(delta_for_sigma).passed

    def with_ndtr(sigma: float, sensitivity: float, epsilon: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
        return float(ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b))

    def in_log_space(sigma: float, sensitivity: float, epsilon: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
        log_p = float(log_ndtr(a - b))
        return math.exp(log_p) * -math.expm1(epsilon + float(log_ndtr(-a - b)) - log_p)

    assert check_delta_for_sigma(with_ndtr).passed
    assert check_delta_for_sigma(in_log_space).passed

    def with_erf(sigma: float, sensitivity: float, epsilon: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
        phi = lambda t: 0.5 * (1 + float(erf(t / math.sqrt(2))))  # noqa: E731
        return phi(a - b) - math.exp(epsilon) * phi(-a - b)

    verdict = check_delta_for_sigma(with_erf)
    assert not verdict.passed and "erf" in verdict.message


def test_analytic_sigma() -> None:
    assert check_analytic_sigma(analytic_sigma).passed
    too_small = check_analytic_sigma(lambda s, e, d: analytic_sigma(s, e, d) * (1 - 1e-6))
    assert not too_small.passed and "too small" in too_small.message
    # the low (unsafe) end of a narrow bracket is caught too
    coarse_low = check_analytic_sigma(lambda s, e, d: analytic_sigma(s, e, d) * (1 - 1e-11))
    assert not coarse_low.passed and "too small" in coarse_low.message
    too_big = check_analytic_sigma(lambda s, e, d: analytic_sigma(s, e, d) * 1.001)
    assert not too_big.passed and "larger than needed" in too_big.message
    erf_based = check_analytic_sigma(analytic_sigma_erf)   # under-noises from δ ≈ 1e-12
    assert not erf_based.passed and "too small" in erf_based.message
    assert not check_analytic_sigma(lambda s, e, d: -1.0).passed


def _log_space_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The chapter's model my_delta: δ(σ) in double precision, in log space."""
    from scipy.special import log_ndtr

    s, r = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    log_p = log_ndtr(s - r)
    return float(np.exp(log_p) * -np.expm1(epsilon + log_ndtr(-s - r) - log_p))


def _bisect(end: str):
    """A multiplicative bisection to 1e-13 that returns the chosen end of its bracket."""
    def sigma(sensitivity: float, epsilon: float, delta: float) -> float:
        low, high = 1e-3 * sensitivity, sensitivity
        while _log_space_delta(high, sensitivity, epsilon) > delta:
            low, high = high, 2 * high
        while _log_space_delta(low, sensitivity, epsilon) <= delta:
            low /= 2
        while high / low > 1 + 1e-13:
            middle = math.sqrt(low * high)
            if _log_space_delta(middle, sensitivity, epsilon) > delta:
                low = middle
            else:
                high = middle
        return {"low": low, "middle": math.sqrt(low * high), "high": high}[end]
    return sigma


def test_analytic_sigma_safe_side_within_rounding_only() -> None:
    """The exercise asks for the safe side: the upper end of a 1e-13 bracket passes; the
    lower end and the midpoint, whose exact δ exceeds the target by more than the rounding
    of a double-precision δ(σ) at some test point, fail (the old 2e-11 slack passed both)."""
    upper = check_analytic_sigma(_bisect("high"))
    assert upper.passed and "at most the target" in upper.message
    for end in ("low", "middle"):
        verdict = check_analytic_sigma(_bisect(end))
        assert not verdict.passed and "too small" in verdict.message, end
        assert "rounding" in verdict.message, end
    # the allowance is stated per point
    assert all("rounding allowance" in line for line in upper.details)


def test_gaussian_noise() -> None:
    good = check_gaussian_noise(lambda sigma, size, g: g.normal(0.0, sigma, size))
    assert good.passed and isinstance(good, Verdict)
    variance = check_gaussian_noise(lambda sigma, size, g: g.normal(0.0, sigma**2, size))
    assert not variance.passed and "variance" in variance.message
    wrong_shape = check_gaussian_noise(lambda sigma, size, g: g.normal(0.0, sigma, 3))
    assert not wrong_shape.passed and "4000" in wrong_shape.message
    uniform = check_gaussian_noise(lambda sigma, size, g: g.uniform(-sigma, sigma, size))
    assert not uniform.passed
    assert not check_gaussian_noise(lambda sigma, size, g: np.full(size, np.nan)).passed


def test_newton_derivative() -> None:
    def right(x: float, epsilon: float) -> float:
        return math.exp(-x * x) * (x / math.sqrt(x * x + epsilon) - 1.0)

    assert check_newton_derivative(right).passed

    def source(x: float, epsilon: float) -> float:   # the derivative as written in the source
        return (math.exp(epsilon) * math.exp(-x * x - 1) * x / math.sqrt(x * x + 1)
                - math.exp(2 * x * x))

    verdict = check_newton_derivative(source)
    assert not verdict.passed and "plausible wrong derivative" in verdict.message
    flipped = check_newton_derivative(lambda x, e: -right(x, e))
    assert not flipped.passed and "sign" in flipped.message
    no_chain = check_newton_derivative(
        lambda x, e: math.exp(e) * math.exp(-x * x - e) - math.exp(-x * x))
    assert not no_chain.passed and "chain rule" in no_chain.message
    assert f"{right(-1.0, 0.5):.6g}" not in str(no_chain)     # the answer is not given away
    assert not check_newton_derivative(lambda x, e: "0").passed


def test_newton_derivative_speaks_the_chapters_letters() -> None:
    """The chapter writes G(χ) (x is another quantity there): so do the verdicts."""
    verdict = check_newton_derivative(lambda chi, e: -math.exp(-chi * chi))
    assert not verdict.passed and "G'(χ)" in verdict.message and "χ=" in verdict.message
    assert "G'(x)" not in verdict.message and "x=" not in verdict.message


def test_classic_calibration_with_equality_for_every_delta() -> None:
    """gaussian.md, proof of Theorem A.1: the classic σ with c² = 2 ln(1.25/δ) (equality) is
    (ε, δ)-DP for every ε < 1 and every δ < 1, including 1/2 < δ < 1 where the tail bound
    alone fails. Checked against the exact privacy profile (deterministic grid)."""
    for epsilon in (0.01, 0.3, 0.5, 0.93, 0.999):
        for delta in (1e-12, 1e-5, 0.1, 0.5, 0.54, 0.7, 0.9, 0.99, 0.999):
            sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
            assert delta_for_sigma(sigma, 1.0, epsilon) <= delta
