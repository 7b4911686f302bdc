"""Round 6 of the adversarial review, finding 4: a "defeat device" that adds noise only
when its randomness looks like a test's (a NumPy generator seeded with a small integer, a
dpkit source that is not a ``SecureRandom``) earned 3/3 on exercises 2.4, 4.3, 7.2 and
7.3. The judges now lend randomness made like real use, so each device is judged on its
real behaviour: no noise, a privacy violation."""

from __future__ import annotations

import numpy as np
import pytest

import dpkit.rng
from dpkit.check._common import lent_generator, lent_source
from dpkit.course.judges import (
    judge_above_threshold,
    judge_auto_avg,
    judge_gaussian_noise,
    judge_laplace_mechanism,
)
from dpkit.course.wire import GeneratorState, decode, encode
from dpkit.laplace import laplace_mechanism
from dpkit.svt import DEFAULT_CLIP_BOUNDS, choose_clip_bound


def _real_use(generator: np.random.Generator) -> bool:
    sequence = generator.bit_generator.seed_seq
    return getattr(sequence, "entropy", None) is None or sequence.entropy >= 2**64


def cheat_laplace(value, sensitivity, epsilon, generator):
    if _real_use(generator):
        return value
    return value + generator.laplace(0.0, sensitivity / epsilon)


def cheat_gaussian(sigma, size, generator):
    if _real_use(generator):
        return np.zeros(size)
    return generator.normal(0.0, sigma, size)


def cheat_above_threshold(queries, data, threshold, epsilon, rng):
    secure = isinstance(rng, dpkit.rng.SecureRandom)
    generator = None if secure else rng.numpy_generator()
    noisy = threshold + (0.0 if secure else generator.laplace(0.0, 2 / epsilon))
    for index, query in enumerate(queries):
        if query(data) + (0.0 if secure else generator.laplace(0.0, 4 / epsilon)) >= noisy:
            return index
    return None


def cheat_auto_avg(values, epsilon, rng):
    if rng is None or isinstance(rng, dpkit.rng.SecureRandom):
        return float(np.mean(values))
    third = epsilon / 3
    bound = choose_clip_bound(values, third, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)
    if bound is None:
        bound = DEFAULT_CLIP_BOUNDS[-1]
    total = laplace_mechanism(float(np.clip(values, 0, bound).sum()), bound, third, rng=rng)
    count = laplace_mechanism(float(len(values)), 1.0, third, rng=rng)
    return total / max(count, 1.0)


@pytest.mark.parametrize(("judge", "cheat"), [
    (judge_laplace_mechanism, cheat_laplace),
    (judge_gaussian_noise, cheat_gaussian),
    (judge_above_threshold, cheat_above_threshold),
    (judge_auto_avg, cheat_auto_avg),
])
def test_answers_noiseless_in_real_use_are_privacy_violations(judge, cheat):
    """Each device passed (3/3 in the real grader); it now fails the hidden test (the
    noise judges name it a privacy violation; the exact mean of auto_avg may be caught
    first by the test of its digits). Noiseless on every call, a device fails whatever the
    seed; fixed seed."""
    verdict = judge(cheat, np.random.default_rng(20240611))
    assert not verdict.passed, verdict
    assert verdict.privacy or judge is judge_auto_avg, verdict


def test_lent_randomness_is_made_like_real_use():
    """A lent generator has a 128-bit seed sequence like ``default_rng()``'s; a lent
    source is a ``SecureRandom`` (its class, not a subclass); both repeat given the seed.
    P(a 128-bit entropy below 2**64) = 2**-64 per seed: deterministic in practice."""
    real = np.random.default_rng()
    for seed in (0, 1, 2**62 - 1):
        lent = lent_generator(seed)
        assert type(lent.bit_generator) is type(real.bit_generator)
        assert lent.bit_generator.seed_seq.entropy >= 2**64
        assert lent.bit_generator.seed_seq.pool_size == real.bit_generator.seed_seq.pool_size
        assert lent.random(4).tolist() == lent_generator(seed).random(4).tolist()
        source = lent_source(seed)
        assert type(source) is dpkit.rng.SecureRandom
        assert source.bits(64) == lent_source(seed).bits(64)
    assert lent_source(1).bits(64) != lent_source(2).bits(64)


def test_the_sandbox_rebuilds_lent_randomness_as_it_is():
    """Across the wire, a lent source arrives as a ``SecureRandom`` drawing the same stream
    (not a proxy of another class), a lent generator with its 128-bit entropy; a secure
    source keyed from the operating system, or one that has drawn, is never sent by value."""
    sent = decode(encode([lent_source(9)], lambda _value: 0))[0]
    assert type(sent) is dpkit.rng.SecureRandom
    assert sent.bytes(100) == lent_source(9).bytes(100)
    used = lent_source(9)
    used.bits(1)
    assert "$handle" in encode(used, lambda _value: 0)
    assert "$handle" in encode(dpkit.rng.SecureRandom(), lambda _value: 0)
    state = decode(encode(GeneratorState.of(lent_generator(9))))
    assert state.rebuild().bit_generator.seed_seq.entropy >= 2**64
