"""The same-seed test reads a release's digits below a rounding of its own binade or decade.

Adversarial review round 12, F0: correct noise, the release rounded to 27 significant bits
(or 8 significant digits) of ``value + noise``, and the value's last five cent-digits
written in the 17 bits (5 digits) below that rounding. One release gives the value back,
yet the code's unit moves with the release's binade, so the same-seed gaps were neither
one value nor two on one grid, and every release lay on one fine lattice, which exempted
the pair: full marks on 30 of 30 seeds. Honest answers, rounded or not, must keep full
marks (false failure at most 1e-6, the judge's bound). Each judge run is deterministic
given its seed.
"""

from __future__ import annotations

import decimal
import math

import pytest
from test_judges import passes, run  # tests/ is on sys.path under pytest

from dpkit.course.judges import judge_laplace_mechanism

#: Fixed seeds of the grader's secret generator for the adversarial answers (20 of them:
#: each must be caught on every one).
SEEDS = range(300, 320)


def coded_below_binary_rounding(value, sensitivity, epsilon, generator):
    """27 significant bits of ``value + noise``, then the value's last 5 cent-digits as a
    17-bit number in the bits below them (plain ``value + noise`` where 2^-27 of its
    binade exceeds b/1000)."""
    b = sensitivity / epsilon
    x = value + generator.laplace(0.0, b)
    if x == 0:
        return x
    unit = math.ldexp(1.0, math.frexp(x)[1] - 27)
    if unit > b / 1000:
        return x
    code = round(abs(value) * 100) % 100_000
    return math.copysign(math.floor(abs(x) / unit) * unit + code * unit / 2**17, x)


def coded_below_decimal_rounding(value, sensitivity, epsilon, generator):
    """The decimal twin: 8 significant digits of ``value + noise``, then the value's last
    5 cent-digits as the next 5 digits."""
    b = sensitivity / epsilon
    x = value + generator.laplace(0.0, b)
    if x == 0:
        return x
    unit = 10.0 ** (math.floor(math.log10(abs(x))) - 7)
    if unit > b / 1000:
        return x
    code = (round(abs(value) * 100) % 100_000) * unit * 1e-5
    return round(x / unit) * unit + (code if x > 0 else -code)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("fn", [coded_below_binary_rounding, coded_below_decimal_rounding])
def test_a_value_written_below_the_release_s_own_rounding_is_a_privacy_violation(fn, seed):
    """F0: NOT PRIVATE on every seed (passed 30 of 30, and 19 of 20, before)."""
    verdict = run(judge_laplace_mechanism, fn, seed)
    assert verdict.privacy and "last digits depend on the value" in verdict.message, verdict


def honest_full_float(value, sensitivity, epsilon, generator):
    """value + Lap(b) as NumPy returns it."""
    return value + generator.laplace(0.0, sensitivity / epsilon)


def honest_scale_digits(value, sensitivity, epsilon, generator):
    """Rounded to 3 decimals below the scale's leading digit: ``round(x, 3 − ⌊log₁₀ b⌋)``."""
    b = sensitivity / epsilon
    return round(value + generator.laplace(0.0, b), 3 - math.floor(math.log10(b)))


def honest_grid(power_of_two: bool):
    """``st·round(x/st)``, ``st = b/1000`` or the power of two at most b/1000."""
    def release(value, sensitivity, epsilon, generator):
        b = sensitivity / epsilon
        step = 2.0 ** math.floor(math.log2(b / 1000)) if power_of_two else b / 1000
        return step * round((value + generator.laplace(0.0, b)) / step)

    release.__name__ = f"honest_grid_{'power_of_two' if power_of_two else 'b_over_1000'}"
    return release


def honest_value_and_noise_on_grid(value, sensitivity, epsilon, generator):
    """The value rounded to ``s = b/1000`` plus the noise rounded to it (the case the
    common-lattice exemption is for)."""
    step = sensitivity / epsilon / 1000
    return step * round(value / step) + step * round(
        generator.laplace(0.0, sensitivity / epsilon) / step)


def honest_decimal(value, sensitivity, epsilon, generator):
    """A ``Decimal`` release."""
    return decimal.Decimal(value + generator.laplace(0.0, sensitivity / epsilon))


def honest_exponential_difference(value, sensitivity, epsilon, generator):
    """The difference of two exponentials."""
    b = sensitivity / epsilon
    return value + generator.exponential(b) - generator.exponential(b)


def honest_inverse_cdf(value, sensitivity, epsilon, generator):
    """The Laplace quantile function of a uniform."""
    u = generator.random() - 0.5
    return value - sensitivity / epsilon * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))


def honest_other_order(value, sensitivity, epsilon, generator):
    """Two uniforms drawn first, then ``b·(log u − log w)``: the same law, other draws."""
    u, w = generator.random(), generator.random()
    return value + sensitivity / epsilon * (math.log(1 - u) - math.log(1 - w))


@pytest.mark.parametrize("fn", [
    honest_full_float, honest_scale_digits, honest_grid(False), honest_grid(True),
    honest_value_and_noise_on_grid, honest_decimal, honest_exponential_difference,
    honest_inverse_cdf, honest_other_order])
def test_honest_releases_keep_full_marks(fn):
    """Correct (rounded after the noise, or not at all): fail with probability at most
    1e-6; the sub-grid rule never flags them (below their own rounding they have no
    digits the rounding does not fix; above it their offsets spread with the noise)."""
    passes(judge_laplace_mechanism, fn)


@pytest.mark.parametrize("seed", [SEEDS[0], SEEDS[-1]])
def test_honest_releases_keep_full_marks_on_the_adversarial_seeds(seed):
    """The rounded honest answers on the seeds the codes are caught on."""
    for fn in (honest_scale_digits, honest_grid(False), honest_grid(True),
               honest_value_and_noise_on_grid):
        verdict = run(judge_laplace_mechanism, fn, seed)
        assert verdict.passed, (fn.__name__, verdict)
