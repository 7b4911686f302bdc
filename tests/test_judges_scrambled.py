"""The same-seed test reads a value code whose offset below a grid is scrambled per release.

Adversarial review round 13, F1: correct noise, ``x = value + noise`` cut to a grid ``S``
of at most 0.004 scales (``k = ⌊x/S⌋``), and the value's cents written at the offset
``(cents + h(k)) mod M`` below it, ``h`` a hash of the grid index. Every release gives the
value's cents back (``(j − h(k)) mod M``), yet the scramble spreads the offsets: no offset
shared by a case (the sub-grid rule), no two gap clusters (the grid-offset rule), no one
gap value (the additive-code rule): full marks on every seed, 3/3 in the real grader. The
spread rule (:func:`dpkit.course.judges.coding.same_seed_leak`) reads the gaps as spread
and unexplained by the lattices the releases lie on. Honest answers, among them one whose
grid step its digits do not show changes from release to release, keep full marks. Each
judge run is deterministic given its seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_judges import passes, run  # tests/ is on sys.path under pytest

from dpkit.course.judges import judge_laplace_mechanism

#: Fixed seeds of the grader's secret generator (20: each code must be caught on all).
SEEDS = range(400, 420)


def _knuth(k: int, levels: int) -> int:
    """A multiplicative hash of a grid index, with a square and a shift mixed in."""
    return ((k * 2654435761) ^ (k >> 5) ^ (k * k)) % levels


def _splitmix(k: int, levels: int) -> int:
    """Another scramble: one round of SplitMix64's finaliser on the grid index."""
    z = (k * 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    return (z ^ (z >> 27)) % levels


def scrambled_code(base: int, scramble):
    """Noise as NumPy draws it, then the release cut to the grid ``S = base^⌊log_base
    (b/256)⌋`` and the value's cents written below it at an offset scrambled by
    ``scramble(k, M)``: ``(k + ((cents + scramble(k, M)) mod M + 1/2)/M)·S``, ``M`` as many
    levels as float64 holds below the grid index (``2^20`` or ``10^5`` at most)."""
    def release(value, sensitivity, epsilon, generator):
        b = sensitivity / epsilon
        x = value + generator.laplace(0.0, b)
        grid = float(base) ** math.floor(math.log(b / 256, base))
        k = math.floor(x / grid)
        if base == 2:
            levels = 2 ** max(1, min(20, 50 - max(abs(k).bit_length(), 1)))
        else:
            levels = 10 ** max(1, min(5, 14 - len(str(abs(k)))))
        code = round(value * 100) % levels
        return (k + ((code + scramble(k, levels)) % levels + 0.5) / levels) * grid

    release.__name__ = f"scrambled_code_{base}_{scramble.__name__.strip('_')}"
    return release


def decode(release: float, sensitivity: float, epsilon: float, base: int, scramble) -> int:
    """The value's cents (modulo the levels) read back from one release of
    :func:`scrambled_code`."""
    b = sensitivity / epsilon
    grid = float(base) ** math.floor(math.log(b / 256, base))
    k = math.floor(release / grid)
    if base == 2:
        levels = 2 ** max(1, min(20, 50 - max(abs(k).bit_length(), 1)))
    else:
        levels = 10 ** max(1, min(5, 14 - len(str(abs(k)))))
    j = math.floor((release / grid - k) * levels)
    return (j - scramble(k, levels)) % levels


CODES = [(2, _knuth), (2, _splitmix), (10, _knuth)]


@pytest.mark.parametrize(("base", "scramble"), CODES)
def test_one_release_of_the_scrambled_code_gives_the_value_back(base, scramble):
    """The premise: the code is a privacy violation (one release decodes the cents)."""
    generator = np.random.default_rng(7)
    for value in (1234.57, -3.21, 98.76):
        release = scrambled_code(base, scramble)(value, 1.0, 0.5, generator)
        assert abs(release - value) < 20
        levels = 10**5 if base == 10 else 2**20
        assert decode(release, 1.0, 0.5, base, scramble) == round(value * 100) % levels


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("base", "scramble"), CODES)
def test_a_scrambled_value_code_is_a_privacy_violation(base, scramble, seed):
    """F1: NOT PRIVATE on every seed (passed on every seed before)."""
    verdict = run(judge_laplace_mechanism, scrambled_code(base, scramble), seed)
    assert verdict.privacy and "last digits depend on the value" in verdict.message, verdict


def relative_grid(base: int, cap: bool):
    """Rounded to a grid whose digits do not show and whose step changes with the
    release's size: ``b/1000 · base^⌊log_base(|x|/b)⌋`` (capped at ``b/1000`` when
    ``cap``: finer near 0 only; otherwise too coarse for large values, a plain failure)."""
    def release(value, sensitivity, epsilon, generator):
        b = sensitivity / epsilon
        x = value + generator.laplace(0.0, b)
        if x == 0:
            return x
        power = math.floor(math.log(abs(x) / b, base))
        step = b / 1000 * float(base) ** (min(0, power) if cap else power)
        return step * round(x / step)

    release.__name__ = f"relative_grid_{base}_{'capped' if cap else 'free'}"
    return release


def honest_significant_digits(value, sensitivity, epsilon, generator):
    """Six significant digits: a step that changes with the decade, shown by the digits
    (too coarse for large values: a plain failure at most, never a privacy violation)."""
    return float(f"{value + generator.laplace(0.0, sensitivity / epsilon):.6g}")


@pytest.mark.parametrize("base", [2, 10])
def test_an_honest_grid_whose_step_changes_keeps_full_marks(base):
    """Its gaps spread when the step changes between the two values or their releases,
    yet each is within the steps of the lattice around its releases."""
    passes(judge_laplace_mechanism, relative_grid(base, cap=True))


@pytest.mark.parametrize("seed", [SEEDS[0], SEEDS[-1]])
def test_honest_roundings_whose_step_changes_are_no_privacy_violation(seed):
    """On the seeds the codes are caught on: the capped relative grids pass; the free
    one and significant digits (too coarse for large values) are never called a privacy
    violation."""
    for base in (2, 10):
        assert run(judge_laplace_mechanism, relative_grid(base, cap=True), seed).passed
        assert not run(judge_laplace_mechanism, relative_grid(base, cap=False), seed).privacy
    assert not run(judge_laplace_mechanism, honest_significant_digits, seed).privacy
