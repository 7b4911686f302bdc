"""The noise judges catch non-private answers whose single releases look right.

Each cheat below reproduces one found by an adversarial review: its releases (or draws)
follow the right marginal law closely enough for the distribution tests, yet the answer
is not private (a point mass at the value, noises that cancel, a scale taken from the
value, no noise outside a range, draws that sum to 0). Every judge is deterministic given
its generator, so each test runs it once with the fixed seed of ``test_judges``; stated
probabilities are over the grader's secret seed. Correct variants not in ``test_judges``
are checked to pass here (false failure at most 1e-6, the judge's bound).
"""

from __future__ import annotations

import contextlib
import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from test_judges import fails, passes, run  # tests/ is on sys.path under pytest

from dpkit.course.judges import judge_gaussian_noise, judge_laplace_mechanism

# ------------------------------------------------------------------------------- Laplace


def laplace_sign_exponential(value, sensitivity, epsilon, generator):
    """A random sign times an exponential: the same law, another construction."""
    sign = 1.0 if generator.random() < 0.5 else -1.0
    return value + sign * generator.exponential(sensitivity / epsilon)


def laplace_noise_first(value, sensitivity, epsilon, generator):
    """Standard Laplace noise drawn first, then scaled."""
    return generator.laplace() * (sensitivity / epsilon) + value


@pytest.mark.parametrize("fn", [laplace_sign_exponential, laplace_noise_first])
def test_more_correct_laplace_variants_pass(fn):
    """Correct: fail with probability at most 1e-6."""
    passes(judge_laplace_mechanism, fn)


def laplace_point_mass(value, sensitivity, epsilon, generator):
    """The exact value 5% of the time, otherwise Lap(b/0.95): mean |noise| is right."""
    if generator.random() < 0.05:
        return value
    return value + generator.laplace(0.0, sensitivity / epsilon / 0.95)


def laplace_value_dependent(value, sensitivity, epsilon, generator):
    """Scale 0.9b or 1.1b by the parity of the value's cents (b on whole numbers)."""
    scale = sensitivity / epsilon
    if value != int(value):
        scale *= 0.9 if round(abs(value) * 100) % 2 else 1.1
    return value + generator.laplace(0.0, scale)


def laplace_antithetic(keyed_on_input: bool):
    """Every second release reuses the previous noise negated: after the last call (any
    input) or after the last unpaired call of the same input. Memoised on the generator's
    state, so that a repeated seed gets the same release."""
    last: dict = {}
    cache: dict = {}

    def release(value, sensitivity, epsilon, generator):
        key = (repr(generator.bit_generator.state), value, sensitivity, epsilon)
        if key in cache:
            return cache[key]
        noise = generator.laplace(0.0, sensitivity / epsilon)
        slot = (value, sensitivity, epsilon) if keyed_on_input else "last"
        if slot in last and (keyed_on_input or last[slot][0] == key[1:]):
            noise = -last.pop(slot)[1]
        else:
            last[slot] = (key[1:], noise)
        cache[key] = value + noise
        return value + noise

    release.__name__ = f"laplace_antithetic_{'per_input' if keyed_on_input else 'last'}"
    return release


def laplace_outside_range(value, sensitivity, epsilon, generator):
    """No noise where |value| > 10⁴, ε > 5 or Δ > 5."""
    if abs(value) > 1e4 or epsilon > 5 or sensitivity > 5:
        return value
    return value + generator.laplace(0.0, sensitivity / epsilon)


@pytest.mark.parametrize(("fn", "fragment"), [
    (laplace_point_mass, "exactly the true value"),
    (laplace_value_dependent, "scale changes with the value"),
    (laplace_antithetic(keyed_on_input=False), "depend on each other"),
    (laplace_antithetic(keyed_on_input=True), "depend on each other"),
    (laplace_outside_range, "not distributed as value + Lap(Δ/ε)"),
])
def test_laplace_cheats_are_privacy_violations(fn, fragment):
    """Caught as privacy violations (all passed the judge before the pairs, the secret
    interleaved order and the atom and dependence tests were added):

    * the point mass: about 480 of the 9,600 releases at the value against at most 101 a
      correct answer expects within 0.01b (sd 10): caught with probability > 1 − 1e-12;
    * the value-dependent scale: both cases of each of the 8 pairs differ by an odd
      number of cents, so each pair's scales are 0.9b and 1.1b, a normal score of about
      ±3.5 each, χ²(8) about 105 against a threshold near 47: > 1 − 1e-6;
    * antithetic noises, per input: every case's calls pair exactly (4,800 cancelling
      pairs); after the last call: the cases interleaved at random, about 1 call in 16
      follows one of its own case (about 560 cancelling pairs, against about 50 by
      chance): both > 1 − 1e-12;
    * no noise out of range: pairs 5 to 7 of the hidden cases have |value| > 10⁴, or
      ε or Δ outside [0.1, 5] (above 5 with probability 1/2 each): exact releases on at
      least one case with probability > 0.99, and then deterministically (the per-case
      spread test and too little noise; here on 2 cases)."""
    fails(judge_laplace_mechanism, fn, fragment, privacy=True)


def laplace_low_bits(value, sensitivity, epsilon, generator):
    """Adversarial review round 7, E1: correct noise, then the value (to the cent) written
    into the low bits of the release, which moves it by less than 1e-4 scales; one
    release gives the value back (ε = ∞), yet every test of the law passes."""
    b = sensitivity / epsilon
    y = float(value + generator.laplace(0.0, b))
    room = 1e-4 * b / math.ulp(y) if y != 0 else 0
    k = min(int(math.log2(room)), 40) if room >= 2 else 0
    if k <= 0:
        return y
    code = round(value * 100) % (1 << k)
    bits = struct.unpack("<q", struct.pack("<d", y))[0]
    return struct.unpack("<d", struct.pack("<q", (bits >> k << k) | code))[0]


def test_laplace_value_in_the_low_bits_is_a_privacy_violation():
    """Caught by the same-seed test: every one of the 300 paired releases differs from
    its neighbour's by a code of up to 1e-4 scales beyond the rounding its full-precision
    releases show, against at most 17 a correct answer reaches with probability 1e-7
    (it passed with full marks before the test)."""
    fails(judge_laplace_mechanism, laplace_low_bits, "last digits depend on the value",
          privacy=True)


class Remembering:
    """Adversarial review round 10, L1: the low-bits code above, except for a generator it
    was lent before (recognized by its state), which it answers consistently with its
    first release, so that a seed lent again sees no code. ``fresh(count)`` stands for the
    sandbox's new workers (:func:`dpkit.course.judges._base.apart`): new answers that
    remember nothing; ``processes`` counts the workers made."""

    processes = 0

    def __init__(self):
        self.first = {}
        Remembering.processes += 1

    def __call__(self, value, sensitivity, epsilon, generator):
        key = repr(generator.bit_generator.state)
        if key in self.first:
            then, release = self.first[key]
            return release if then == value else release - then + value
        self.first[key] = (value, laplace_low_bits(value, sensitivity, epsilon, generator))
        return self.first[key][1]

    @contextlib.contextmanager
    def fresh(self, count):
        yield [Remembering() for _ in range(count)]


def test_laplace_value_in_the_low_bits_hidden_from_replays_is_a_privacy_violation():
    """L1 (full marks before: the same-seed calls came after the others, in the same
    process, and the answer knew them): now each worker is lent a seed once, the second
    case's call with the first case's seed in the other worker, so the answer codes both
    releases as it codes all the others and the same-seed test catches it as it catches
    :func:`laplace_low_bits`; the judge makes two workers."""
    Remembering.processes = 0
    fails(judge_laplace_mechanism, Remembering(), "last digits depend on the value",
          privacy=True)
    assert Remembering.processes == 3


class InTurn:
    """The sandbox's new workers as a judge sees them, recording their lifetimes
    (adversarial review round 11, F1: two workers alive together talked through the
    kernel's record locks). Each worker starts when the judge first reaches it, by
    iteration or by index, and every other one is closed then; ``log`` holds each call's
    worker and the workers alive at that moment, ``starts`` each worker started."""

    def __init__(self, fn, count):
        self.fn, self.count, self.alive, self.log, self.starts = fn, count, set(), [], []

    def _start(self, k):
        if k not in self.alive:
            self.alive = {k}                  # the others closed first
            self.starts.append(k)

        def worker(*args):
            self.log.append((k, frozenset(self.alive)))
            return self.fn(*args)
        return worker

    def __iter__(self):
        return (self._start(k) for k in range(self.count))

    def __getitem__(self, k):
        return self._start(k)


class Recorded:
    """An honest answer whose ``fresh(count)`` gives :class:`InTurn` workers."""

    def __init__(self, fn):
        self.fn, self.workers = fn, None

    def __call__(self, *args):
        raise AssertionError("the judge calls the fresh workers only")

    @contextlib.contextmanager
    def fresh(self, count):
        self.workers = InTurn(self.fn, count)
        yield self.workers


def test_laplace_fresh_workers_are_used_one_after_the_other():
    """Round 11, F1 (3/3 before for a code that asked the other worker through a lock
    whether it had seen a seed): the judge makes all of worker 0's calls (its releases,
    its same-seed probes, its repeats), then all of worker 1's, each worker started once,
    never two alive together; the verdict is unchanged for an honest answer."""
    answer = Recorded(laplace_noise_first)
    assert run(judge_laplace_mechanism, answer).passed
    workers = [k for k, _ in answer.workers.log]
    assert answer.workers.starts == [0, 1]
    assert workers == sorted(workers) and workers.count(0) > 6000 and workers.count(1) > 6000
    assert all(alive == {k} for k, alive in answer.workers.log)


class Unreplayable(Remembering):
    """A notebook whose cells fail when they run again in a fresh worker."""

    @contextlib.contextmanager
    def fresh(self, count):
        raise ZeroDivisionError("division by zero")
        yield


def test_laplace_a_notebook_that_cannot_run_again_is_not_judged():
    """No fresh workers, no same-seed test: the answer is not judged as if it had passed
    (an answer that fails when run again would otherwise keep its replays in one process);
    its privacy is unchecked, as when the function raises."""
    verdict = run(judge_laplace_mechanism, Unreplayable())
    assert verdict.raised and not verdict.passed, verdict
    assert "fresh sandbox" in verdict.message and "ZeroDivisionError" in verdict.message


def laplace_six_decimals(value, sensitivity, epsilon, generator):
    """The release rounded to 6 decimals."""
    return round(value + generator.laplace(0.0, sensitivity / epsilon), 6)


def laplace_fourteen_digits(value, sensitivity, epsilon, generator):
    """The release rounded to 14 significant digits (6 lose the noise at values of 10⁸)."""
    return float(f"{value + generator.laplace(0.0, sensitivity / epsilon):.14g}")


def laplace_by_sign(value, sensitivity, epsilon, generator):
    """The noise drawn another way below 0: its draws depend on the value's sign."""
    scale = sensitivity / epsilon
    if value >= 0:
        return value + generator.laplace(0.0, scale)
    return value - generator.exponential(scale) + generator.exponential(scale)


def laplace_mirrored(value, sensitivity, epsilon, generator):
    """The noise negated below 0: the same law, a noise that depends on the sign."""
    noise = generator.laplace(0.0, sensitivity / epsilon)
    return value + noise if value >= 0 else value - noise


def laplace_in_scales(value, sensitivity, epsilon, generator):
    """The value in noise scales, standard noise added, then scaled back: other roundings."""
    scale = sensitivity / epsilon
    return (value / scale + generator.laplace()) * scale


@pytest.mark.parametrize("fn", [laplace_six_decimals, laplace_fourteen_digits,
                                laplace_by_sign, laplace_mirrored, laplace_in_scales])
def test_laplace_rounded_or_sign_dependent_releases_pass_the_same_seed_test(fn):
    """Correct answers whose paired releases differ by their own rounding (6 decimals, 14
    digits, another order of operations; a float32 release is not correct: at values of
    10⁸ its rounding, 8, swamps the noise) or by a noise of the order of the
    scale (the draws depend on the value's sign): fail with probability at most 1e-6
    (the same-seed test's share: 1e-7)."""
    passes(judge_laplace_mechanism, fn)


def laplace_grid(divisions):
    """The release rounded to a grid of step b/divisions (honest review round 8, H1): a
    rounding after the noise, ε-DP, whose step neither its decimal nor its binary digits
    show."""
    def release(value, sensitivity, epsilon, generator):
        step = sensitivity / epsilon / divisions
        return round((value + generator.laplace(0.0, sensitivity / epsilon)) / step) * step

    release.__name__ = f"laplace_grid_b_over_{divisions}"
    return release


@pytest.mark.parametrize("fn", [laplace_grid(1000), laplace_grid(2**20)])
def test_laplace_rounded_to_a_grid_of_the_scale_passes(fn):
    """Correct (H1: called a privacy violation before): each pair's same-seed gaps take
    the grid's two values ``−(a mod s)``, ``s − (a mod s)`` by the seed; a pair is coded
    only if its 30 gaps are one value (probability 2/31 on average, simulated 0.06 and
    0.08 per pair) or carry a value-dependent low byte (never): 8 coded pairs of 10 are
    needed (probability below 1e-7). Fail with probability at most 1e-6."""
    passes(judge_laplace_mechanism, fn)


def laplace_additive_code(value, sensitivity, epsilon, generator):
    """Correct noise plus a code of the value's cents, up to 0.001 scales: the same gap
    for every seed of a pair (the repeated generators cancel all but the code)."""
    scale = sensitivity / epsilon
    return value + generator.laplace(0.0, scale) + 1e-3 * scale * (round(value * 100) % 7) / 7


def test_laplace_additive_code_is_a_privacy_violation():
    """Caught by the same-seed test's one-gap rule: a pair is coded unless its two
    neighbours' codes are equal (about 1 in 7) or out of the window."""
    fails(judge_laplace_mechanism, laplace_additive_code, "last digits depend on the value",
          privacy=True)


def laplace_float32(value, sensitivity, epsilon, generator):
    """The release stored in single precision (honest review round 8, H5)."""
    return np.float32(value + generator.laplace(0.0, sensitivity / epsilon))


def laplace_eight_digits(value, sensitivity, epsilon, generator):
    """The release printed to 8 significant digits (honest review round 8, H5)."""
    return float(f"{value + generator.laplace(0.0, sensitivity / epsilon):.8g}")


@pytest.mark.parametrize("fn", [laplace_float32, laplace_eight_digits])
def test_laplace_coarsely_rounded_releases_fail_plainly(fn):
    """A rounding after the noise is ε-DP: at values of 10⁴ to 10⁸ its unit exceeds the
    noise's resolution, the releases sit at the value and repeat, and the judge fails
    them plainly (the law is not value + Lap), not as a privacy violation (both were
    called "not ε-DP" here before)."""
    fails(judge_laplace_mechanism, fn, "too coarse for noise of scale", privacy=False)


def laplace_tenth_grid(value, sensitivity, epsilon, generator):
    """Rounded to a grid of a tenth of the scale, written ``round(x/s)*s`` (full-precision
    products: honest review round 9, F5, called "not ε-DP" 10 times in 10)."""
    step = sensitivity / epsilon / 10
    return round((value + generator.laplace(0.0, sensitivity / epsilon)) / step) * step


def laplace_seventh_grid(value, sensitivity, epsilon, generator):
    """The same with a seventh of the scale (F5)."""
    step = sensitivity / epsilon / 7
    return round((value + generator.laplace(0.0, sensitivity / epsilon)) / step) * step


def laplace_one_decimal(value, sensitivity, epsilon, generator):
    """Rounded to one decimal (F6: the judge itself raised ValueError on an empty sample
    9 times in 10, and the feedback blamed the student's function)."""
    return round(value + generator.laplace(0.0, sensitivity / epsilon), 1)


def laplace_three_decimals(value, sensitivity, epsilon, generator):
    """Rounded to three decimals (F6, 5 times in 10)."""
    return round(value + generator.laplace(0.0, sensitivity / epsilon), 3)


@pytest.mark.parametrize("fn", [laplace_tenth_grid, laplace_seventh_grid,
                                laplace_one_decimal, laplace_three_decimals])
def test_laplace_releases_rounded_to_any_grid_are_no_privacy_violation(fn):
    """A rounding after the noise is post-processing, so ε-DP whatever its grid: the judge
    may fail it (too coarse for the noise) or pass it, but never calls it a privacy
    violation nor raises. Deterministic for this seed; each was called "not ε-DP" or made
    the judge raise on most seeds before."""
    verdict = run(judge_laplace_mechanism, fn)
    assert not verdict.privacy and not verdict.raised, verdict
    assert "your function raised" not in verdict.message, verdict.message


def laplace_bounded_denominator(denominator):
    """The release rounded to the nearest fraction of denominator at most ``denominator``
    (honest review 15, F4: post-processing, ε-DP, yet its releases lie on no grid and the
    same-seed test called it "not ε-DP: … their last digits depend on the value")."""
    def release(value, sensitivity, epsilon, generator):
        noisy = value + generator.laplace(0.0, sensitivity / epsilon)
        return float(Fraction(noisy).limit_denominator(denominator))

    release.__name__ = f"laplace_limit_denominator_{denominator}"
    return release


@pytest.mark.parametrize("fn", [laplace_bounded_denominator(10**6),
                                laplace_bounded_denominator(10**5)])
def test_laplace_rounded_to_a_bounded_denominator_is_no_privacy_violation(fn):
    """The same-seed test allows each release the gap to its neighbours among the fractions
    of denominator at most the largest its batch shows (:func:`_fraction_rounding`); the
    answer passes (F4: 0/3 and "not ε-DP" on main, 10 seeds of 10 in honest review 14).
    False failure at most 1e-6, the judge's bound (simulated, seeds 100 to 129: 30 of 30
    pass for 10**5, 10**6 and 10**7; 29 of 30 for 10**4, the other, where b = 0.0085, a
    plain failure "too coarse for noise of scale" since the retry reads the bound)."""
    passes(judge_laplace_mechanism, fn)


def laplace_bounded_denominator_coded(how):
    """The F4 rounding, then the value's cents written into the release: in the low byte of
    its significand, added as a code of up to 0.001 scales, or in the choice of the
    denominator bound (10**6 or 10**4 by the parity of the cents)."""
    def release(value, sensitivity, epsilon, generator):
        scale, cents = sensitivity / epsilon, round(value * 100)
        bound = 10**4 if how == "bound" and cents % 2 else 10**6
        rounded = float(Fraction(value + generator.laplace(0.0, scale)).limit_denominator(bound))
        if how == "additive":
            return rounded + 1e-3 * scale * (cents % 7) / 7
        if how == "low byte":
            bits = struct.unpack("<q", struct.pack("<d", rounded))[0]
            return struct.unpack("<d", struct.pack("<q", (bits & ~255) | cents % 256))[0]
        return rounded

    release.__name__ = f"laplace_limit_denominator_{how.replace(' ', '_')}_code"
    return release


@pytest.mark.parametrize("how", ["low byte", "additive", "bound"])
def test_laplace_code_under_a_bounded_denominator_is_a_privacy_violation(how):
    """The allowance for a bounded-denominator rounding does not hide a code: the coded
    releases are no such fractions (low byte, additive: their own least denominators are
    those of full floats), or one bound is coarser than the other's allowance (bound)."""
    fails(judge_laplace_mechanism, laplace_bounded_denominator_coded(how),
          "last digits depend on the value", privacy=True)


def laplace_grid_code(fraction, bits, resolution):
    """Adversarial review round 10, A1: correct noise, the release put on a fine grid of
    step ``fraction·b``, and its offset from that grid a code of the value: ``bits`` bits
    of it at ``b/resolution``. One release gives the value back to ``b/resolution``, yet
    the same-seed gaps flip between two values with the seed, as an honest grid's do."""
    def release(value, sensitivity, epsilon, generator):
        b = sensitivity / epsilon
        x = value + generator.laplace(0.0, b)
        step = b * fraction
        code = math.floor(value / (b / resolution)) % (1 << bits)
        return step * math.floor(x / step) + step * (code + 0.5) / (1 << bits)

    release.__name__ = f"laplace_grid_code_{fraction}_{bits}_bits"
    return release


@pytest.mark.parametrize("fn", [laplace_grid_code(0.000987654321, 12, 64),
                                laplace_grid_code(0.01, 8, 16),
                                laplace_grid_code(0.1, 4, 8)])
def test_laplace_value_in_the_offset_from_a_grid_is_a_privacy_violation(fn):
    """A1 (the reviewer's answer first; full marks before, on 30 of 30 seeds): with one
    generator the two neighbours' releases lie on grids of one step whose offsets differ
    by the code, which an honest rounding (one grid whatever the value) never does; the
    judge needs 2 such pairs (of 10; 4 to 10 in simulations of these codes)."""
    fails(judge_laplace_mechanism, fn, "grids of one step but with different offsets",
          privacy=True)


def _hash(x, salt):
    """53 bits of a hash of the float ``x``."""
    bits = struct.unpack("<Q", struct.pack("<d", float(x)))[0]
    return ((bits ^ salt) * 0x9E3779B97F4A7C15 >> 11) & ((1 << 53) - 1)


def laplace_grid_code_in_seven_of_eight(value, sensitivity, epsilon, generator):
    """Adversarial review round 11, F5 (``offset87``): the A1 code (12 bits of the value in
    the offset from a grid of a thousandth of the scale) in 7 releases of 8, the eighth
    (chosen from the noise, so a same-seed probe and its original agree) as it comes."""
    scale = sensitivity / epsilon
    noise = generator.laplace(0.0, scale)
    release = value + noise
    if _hash(noise, 1) % 8 == 0:
        return release
    step = 2.0 ** math.floor(math.log2(scale / 1024))
    return step * math.floor(release / step) + step * (_hash(value, 2) % 4096) / 4096


def laplace_grid_code_nudged(value, sensitivity, epsilon, generator):
    """Round 11, F5 (``offsetjit``): the A1 code in every release, one in 64 moved a
    hair off the grid (``0.3/4096`` of a step: still decoded)."""
    scale = sensitivity / epsilon
    noise = generator.laplace(0.0, scale)
    step = 2.0 ** math.floor(math.log2(scale / 1024))
    release = step * math.floor((value + noise) / step) + step * (
        _hash(value, 2) % 4096) / 4096
    return release + step * 0.3 / 4096 if _hash(noise, 1) % 64 == 0 else release


@pytest.mark.parametrize("fn", [laplace_grid_code_in_seven_of_eight, laplace_grid_code_nudged])
def test_laplace_grid_code_in_most_releases_is_a_privacy_violation(fn):
    """F5 (3/3 in the real grader before: the grid-offset test asked for all of a pair's
    gaps in two clusters and all of each case's releases on the grid): now 20 of 30 gaps
    in the two largest clusters and 3/4 of the releases on the grid flag a pair; each
    coded release still gives 12 bits of the value. Deterministic for this seed (caught
    on 3 seeds of 3 each in simulation); an honest rounding is never flagged."""
    fails(judge_laplace_mechanism, fn, "grids of one step but with different offsets",
          privacy=True)


def laplace_floor_grid(value, sensitivity, epsilon, generator):
    """Rounded down to a grid of a tenth of the scale, ``floor(x/s)*s``."""
    step = sensitivity / epsilon / 10
    return math.floor((value + generator.laplace(0.0, sensitivity / epsilon)) / step) * step


def laplace_midpoint_grid(value, sensitivity, epsilon, generator):
    """Rounded to the midpoints of a grid of a thousandth of the scale: a fixed offset s/2."""
    step = sensitivity / epsilon / 1000
    x = value + generator.laplace(0.0, sensitivity / epsilon)
    return (math.floor(x / step) + 0.5) * step


def laplace_rounded_noise(divisions):
    """The noise rounded to a grid of step b/divisions, then added to the value: its grid
    moves with the value (it leaks ``value mod s``, as unrounded floating-point noise leaks
    the value's own floats, Mironov's point, which the exercise accepts)."""
    def release(value, sensitivity, epsilon, generator):
        step = sensitivity / epsilon / divisions
        return value + round(generator.laplace(0.0, sensitivity / epsilon) / step) * step

    release.__name__ = f"laplace_rounded_noise_b_over_{divisions}"
    return release


@pytest.mark.parametrize("fn", [laplace_floor_grid, laplace_midpoint_grid, laplace_tenth_grid,
                                laplace_seventh_grid, laplace_grid(3), laplace_grid(1000),
                                laplace_one_decimal, laplace_three_decimals,
                                laplace_rounded_noise(10), laplace_rounded_noise(1000)])
def test_laplace_honest_grids_are_not_called_grid_codes(fn):
    """Honest roundings (one grid for every value, whatever its offset, or the noise
    rounded before it is added) never put a pair's two cases on grids with different
    offsets beyond their rounding (in simulations the honest grids' offsets stayed below
    2% of the allowance): no privacy violation here (a grid coarse for the noise may fail
    plainly). Deterministic for this seed."""
    verdict = run(judge_laplace_mechanism, fn)
    assert not verdict.privacy and not verdict.raised, verdict


def laplace_rounded_value(divisions):
    """The value rounded to a grid of step ``s = b/divisions``, plus the noise rounded to
    it (the exact mechanism's design, on a grid of the student's): both neighbours'
    releases lie on the one lattice ``sℤ``, and with one generator they differ by the same
    whole number of steps, ``s·(round(v/s) − round(v'/s))``, whatever the seed (judges
    round 14: called "not ε-DP" on 3 seeds of 3 for b/1000 and b/100)."""
    def release(value, sensitivity, epsilon, generator):
        step = sensitivity / epsilon / divisions
        return step * round(value / step) + step * round(
            generator.laplace(0.0, sensitivity / epsilon) / step)

    release.__name__ = f"laplace_rounded_value_b_over_{divisions}"
    return release


@pytest.mark.parametrize("fn", [laplace_rounded_value(1000), laplace_rounded_value(100),
                                laplace_rounded_value(7), laplace_rounded_value(2**10)])
def test_laplace_value_rounded_to_a_grid_is_no_privacy_violation(fn):
    """It leaks nothing beyond the value rounded to the grid (a sensitivity of Δ + s): its
    same-seed gaps are one value, yet both cases lie on one lattice (the same step, the
    same offset), which exempts the pair from the one-gap rule. Full marks on the grids
    fine for the noise, a plain failure at most on a coarse one (b/7), never a privacy
    violation. Deterministic for this seed (the exemption fails only if no two distinct
    releases of a pair's 1,230 lie within 64 steps: in simulations of 40 pairs the
    closest were 1 step apart on a grid of b/1000, at most 14 on one of b/2²⁰)."""
    verdict = run(judge_laplace_mechanism, fn)
    assert not verdict.privacy and not verdict.raised, verdict
    assert verdict.passed or fn.__name__.endswith("_7"), verdict.message


def laplace_lattice_code(fraction, bits, value_first):
    """A code in the offset of a lattice of the answer's own (judges round 14): the
    release on ``Sℤ + s·m(value)``, ``s = fraction·b``, ``S = 2^bits·s`` and ``m`` the
    value's cents modulo ``2^bits``: ``value + noise`` rounded to ``S``, or
    (``value_first``) the value and the noise each rounded to ``S``, whose same-seed gaps
    are then one value, as :func:`laplace_rounded_value`'s are. Both cases' releases lie
    on lattices of one step with different offsets: one release tells ``m(value)``."""
    def release(value, sensitivity, epsilon, generator):
        b = sensitivity / epsilon
        step = fraction * b
        coarse = step * (1 << bits)
        code = step * (round(value * 100) % (1 << bits))
        noise = generator.laplace(0.0, b)
        if value_first:
            return coarse * round(value / coarse) + coarse * round(noise / coarse) + code
        return coarse * round((value + noise) / coarse) + code

    release.__name__ = f"laplace_lattice_code_{fraction}_{bits}_{value_first}"
    return release


@pytest.mark.parametrize(("fn", "fragment"), [
    (laplace_lattice_code(2.0**-20, 12, True), "last digits depend on the value"),
    (laplace_lattice_code(1e-6, 8, True), "last digits depend on the value"),
    (laplace_lattice_code(2.0**-20, 12, False), "grids of one step but with different")])
def test_laplace_value_in_the_offset_of_a_lattice_is_a_privacy_violation(fn, fragment):
    """The lattice exemption reads each case's own step from the flagged releases alone:
    ``S``, not the ``s`` both cases share, so the offsets ``s·m(v)`` and ``s·m(v')``
    differ and the one-gap rule still holds (the value-first codes; the other is the grid
    offset test's). Deterministic for this seed."""
    fails(judge_laplace_mechanism, fn, fragment, privacy=True)


# ------------------------------------------------------------------------------ Gaussian

def gauss_float32(sigma, size, generator):
    """Single-precision standard normals, scaled in double precision."""
    return sigma * generator.standard_normal(size, dtype=np.float32).astype(np.float64)


def gauss_float32_scaled(sigma, size, generator):
    """Single-precision standard normals scaled in single precision: inf for σ above about
    3.4e38, which the judge's sweep over σ reaches (round 15, C4d)."""
    return sigma * generator.standard_normal(size, dtype=np.float32)


def test_gaussian_scaled_in_single_precision_fails_plainly_on_huge_sigma():
    """A float32 product overflows to inf for σ the exercise allows: a plain failure on a
    valid input, never a privacy violation. Deterministic at the house seed."""
    verdict = run(judge_gaussian_noise, gauss_float32_scaled)
    assert not verdict.passed and not verdict.privacy, verdict.message
    assert "not finite" in verdict.message, verdict.message


def gauss_inverse_cdf(sigma, size, generator):
    """The normal quantile function of uniforms."""
    return sigma * stats.norm.ppf(generator.random(size))


@pytest.mark.parametrize("fn", [gauss_float32, gauss_inverse_cdf])
def test_more_correct_gaussian_variants_pass(fn):
    """Correct: fail with probability at most 1e-6."""
    passes(judge_gaussian_noise, fn)


def gauss_zeros(sigma, size, generator):
    """2% of the coordinates without noise, the others widened to keep the variance."""
    draws = generator.normal(0.0, sigma / math.sqrt(0.98), size)
    draws[generator.random(size) < 0.02] = 0.0
    return draws


def gauss_antithetic(sigma, size, generator):
    """Coordinates 2k and 2k + 1 get opposite noises."""
    half = generator.normal(0.0, sigma, (size + 1) // 2)
    draws = np.empty(size)
    draws[0::2], draws[1::2] = half, -half[:size // 2]
    return draws


def gauss_repeated(sigma, size, generator):
    """Coordinates 2k and 2k + 1 get the same noise."""
    return np.repeat(generator.normal(0.0, sigma, (size + 1) // 2), 2)[:size]


def gauss_quasi(sigma, size, generator):
    """Fixed normal quantiles, shuffled: they always sum to 0."""
    return generator.permutation(sigma * stats.norm.ppf((np.arange(size) + 0.5) / size))


@pytest.mark.parametrize(("fn", "fragment"), [
    (gauss_zeros, "exactly 0"),
    (gauss_antithetic, "depend on each other"),
    (gauss_repeated, "depend on each other"),
    (gauss_quasi, "not (ε, δ)-DP"),     # odd sizes hold the quantile 0 exactly: the
])                                      # exact-atom test may see it first
def test_gaussian_cheats_are_privacy_violations(fn, fragment):
    """Caught as privacy violations, not (ε, δ)-DP (all passed the judge before the atom,
    total and adjacent-pair tests): 2% zeros put about 280 more of some 14,000 draws
    within 0.01σ of 0 than the 112 expected (sd 11); opposite or equal neighbours make
    the pair sums or differences 0; shuffled quantiles sum to 0 in every call (χ²(8)
    about 1e-25); all > 1 − 1e-12 (20 of 20 simulated graders each)."""
    fails(judge_gaussian_noise, fn, fragment, privacy=True)


# ------------------------------------------------------------- round 3: small atoms, lags

def laplace_small_atom(value, sensitivity, epsilon, generator):
    """Round 3, N13: the exact value 0.3% of the time, Laplace noise otherwise."""
    if generator.random() < 0.003:
        return value
    return value + generator.laplace(0.0, sensitivity / epsilon)


def gauss_small_atom(sigma, size, generator):
    """Round 3, N14: 0.3% of the coordinates exactly 0."""
    draws = generator.normal(0.0, sigma, size)
    draws[generator.random(size) < 0.003] = 0.0
    return draws


@pytest.mark.parametrize(("judge", "fn"), [
    (judge_laplace_mechanism, laplace_small_atom),
    (judge_gaussian_noise, gauss_small_atom),
])
def test_a_small_exact_atom_is_a_privacy_violation(judge, fn):
    """An atom of 0.3% at the value (Laplace: about 29 of 9,600 releases; Gaussian: about
    45 of 15,000 draws) is within the near-zero test's noise, but a correct answer puts
    at most 3e-5 (1e-6) of its releases (draws) exactly there: about 0.3 (0.015)
    expected. Poisson tails: caught with probability > 1 − 1e-9."""
    fails(judge, fn, "exactly", privacy=True)


# ------------------------------------------------------- round 3: format and decade keys


def laplace_exact_unless_round(value, sensitivity, epsilon, generator):
    """Review round 3, N1: no noise unless the value has at most 2 decimals and Δ and ε
    at most 3, the format of every hidden input (and of the public check's) on main."""
    def short(x, digits):
        scaled = x * 10**digits
        return abs(scaled - round(scaled)) < 1e-6 * max(1.0, abs(scaled))
    if short(value, 2) and short(sensitivity, 3) and short(epsilon, 3):
        return value + generator.laplace(0.0, sensitivity / epsilon)
    return value


def laplace_scale_by_decade(value, sensitivity, epsilon, generator):
    """Review round 3, N12: scale 1.1b or 0.9b by the parity of the value's decade; the
    neighbours of a pair, cents apart, almost never straddle a decade."""
    decade = math.floor(math.log10(abs(value))) if value else 0
    return value + generator.laplace(0.0, sensitivity / epsilon * (1.1 if decade % 2 else 0.9))


@pytest.mark.parametrize("fn", [laplace_exact_unless_round, laplace_scale_by_decade])
def test_laplace_keyed_on_the_inputs_format_or_decade_is_a_privacy_violation(fn):
    """N1 passed with full marks on main (10 of 10 secrets), N12 with full marks on 6 of
    10 and one point on the fixed seed here. Now four pairs have full-precision values
    and Δ, ε: N1 releases them exactly, caught whatever the secret; two groups of pairs
    share Δ and ε with values decades apart, in decades of alternating parity: N12 caught
    on 28 of 30 secrets tried (about 0.9; the fixed seed here is one of them)."""
    fails(judge_laplace_mechanism, fn, privacy=True)


def gauss_zeros_unless_short(sigma, size, generator):
    """Review round 3, N5: no noise at all unless σ has at most 4 decimals, as every hidden
    σ (``round(σ, 4)``) and the public check's (0.3, 4) had on main; a σ from
    ``analytic_sigma`` never has."""
    if abs(sigma * 1e4 - round(sigma * 1e4)) < 1e-6:
        return generator.normal(0.0, sigma, size)
    return np.zeros(size)


def test_gaussian_noise_keyed_on_the_format_of_sigma_is_a_privacy_violation():
    """Passed with full marks on main (10 of 10 secrets). Now 4 of the 10 hidden σ come
    from ``analytic_sigma`` and 2 are drawn at full precision: zeros on those calls,
    caught whatever the secret (all draws of a call equal)."""
    fails(judge_gaussian_noise, gauss_zeros_unless_short, privacy=True)


def gauss_box_muller(extra):
    """Box–Muller on ``size // 2`` pairs (``extra = 0``: one draw too few for an odd size,
    none for size 1; honest review 15, F8) or ``size // 2 + 1`` (one too many), the
    noise itself right."""
    def noise(sigma, size, generator):
        n = size // 2 + extra
        u1, u2 = 1.0 - generator.random(n), generator.random(n)
        r = np.sqrt(-2.0 * np.log(u1))
        return sigma * np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)])

    noise.__name__ = f"gauss_box_muller_{'one_too_many' if extra else 'one_too_few'}"
    return noise


@pytest.mark.parametrize("fn", [gauss_box_muller(0), gauss_box_muller(1)])
def test_gaussian_wrong_number_of_private_draws_fails_plainly(fn):
    """F8: the draws are judged as they came and show no violation, so the wrong count is
    a plain failure that keeps the public point (on main: "privacy could not be checked",
    no point). Deterministic for this seed; a correct law fails a test with probability
    at most 1e-6."""
    verdict = run(judge_gaussian_noise, fn)
    assert not verdict.passed and not verdict.privacy and not verdict.raised, verdict
    assert "draws, not `size`" in verdict.message and "no privacy" in verdict.message


def gauss_one_more_without_noise(sigma, size, generator):
    """Right noise, then one more coordinate with none (the wrong count hides nothing)."""
    return np.concatenate([generator.normal(0.0, sigma, size), [0.0]])


def gauss_half_noise_one_more(sigma, size, generator):
    """Half the noise, and one draw too many."""
    return generator.normal(0.0, sigma / 2, size + 1)


@pytest.mark.parametrize("fn", [gauss_one_more_without_noise, gauss_half_noise_one_more])
def test_gaussian_wrong_number_of_draws_is_still_judged_for_privacy(fn):
    """A wrong count does not hide its draws from the privacy tests: an unnoised extra
    coordinate (an exact 0 in each call: a point mass far beyond 1e-6 of the draws) or too
    little noise is a violation."""
    fails(judge_gaussian_noise, fn, privacy=True)


def gauss_nothing(sigma, size, generator):
    """Returns no draw at all: nothing to judge."""
    return np.zeros(0)


def test_gaussian_too_few_draws_to_judge_earn_nothing():
    """Fewer than half the draws asked for (here none) leave the privacy unchecked: as an
    error, no point for the exercise."""
    verdict = run(judge_gaussian_noise, gauss_nothing)
    assert verdict.raised and "too few" in verdict.message, verdict
