"""The statistics of ``benchmarks/timing.py`` (its :func:`certify`), on synthetic samples.

No timing is measured here: the samples are drawn from known distributions with fixed
seeds, so each assertion states how likely it would be to fail for a correct certifier.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

N = 20_000  # per side, as in a full run: 10**4 held out


@pytest.fixture(scope="module")
def timing():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "timing.py"
    spec = importlib.util.spec_from_file_location("dpkit_bench_timing", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_same_distribution_certifies_nothing(timing) -> None:
    """Two samples of one distribution: the certified ε is 0 and the guesser is at chance.

    False failure: ε > 0 is certified with probability at most 1e-6 (the certifier's
    confidence); the held-out accuracy exceeds 0.52 with probability at most
    exp(-2·(2·10**4)·0.02**2) = exp(-16) < 1.2e-7 (Hoeffding: with a threshold fixed on the
    first halves, each held-out guess is right with probability exactly 1/2).
    """
    rng = np.random.default_rng(1)
    t_x = rng.lognormal(math.log(50_000), 0.1, N).round()
    t_y = rng.lognormal(math.log(50_000), 0.1, N).round()
    found = timing.certify(t_x, t_y, np.random.default_rng(2))
    assert found.epsilon == 0.0
    assert found.accuracy <= 0.52
    assert timing.verdict(found, promised=1.0) == "pass"
    assert found.held_out == N // 2


def test_laplace_shift_certifies_close_to_its_epsilon(timing) -> None:
    """Laplace(0, 1) against Laplace(1, 1): the largest log-ratio of any event is exactly 1.

    The certified ε is a lower bound on it: it exceeds 1 with probability at most 1e-6. It
    is also not far below, so a certifier that returns 0 fails: the best events, {t > 1} or
    by symmetry {t < 0}, have probabilities 0.18 and 0.5, bounded within ±0.02 on 10**4
    held-out calls, which certifies about 0.85; below 0.5 would take counts more than ten
    standard deviations off. The guesser's accuracy is about (1 + 0.39)/2 = 0.70 (total
    variation 1 − e**-1/2); the bounds allow 7 standard deviations (0.0032) each way.
    """
    rng = np.random.default_rng(3)
    t_x = rng.laplace(0.0, 1.0, N)
    t_y = rng.laplace(1.0, 1.0, N)
    found = timing.certify(t_x, t_y, np.random.default_rng(4))
    assert 0.5 <= found.epsilon <= 1.0
    assert found.event.endswith(("favours x", "favours x'"))
    assert 0.67 <= found.accuracy <= 0.72
    assert timing.verdict(found, promised=2.0) == "LEAK"
    assert timing.verdict(found, promised=0.1) == "LEAK > promised ε"


def test_separated_samples_certify_a_large_epsilon(timing) -> None:
    """Disjoint supports: every held-out x is faster than every x', deterministically.

    The chosen event then holds on all held-out x and no held-out x', so the certificate is
    exactly log(lower bound of 10**4/10**4 over upper bound of 0/10**4) (about 6.6), the most
    10**4 calls can certify at this confidence; the guesser is always right.
    """
    rng = np.random.default_rng(5)
    t_x = rng.uniform(40_000, 50_000, N)
    t_y = rng.uniform(60_000, 70_000, N)
    found = timing.certify(t_x, t_y, np.random.default_rng(6))
    tail = 1e-6 / 4
    best = math.log(tail ** (1 / (N // 2)) / (1 - tail ** (1 / (N // 2))))
    assert found.epsilon == pytest.approx(best, rel=1e-6)
    assert found.epsilon > 6
    assert found.accuracy == 1.0
    assert found.shift_us == pytest.approx(20.0, abs=0.5)


def test_unsure_when_too_few_calls(timing) -> None:
    """An accuracy above 0.52 that the calls cannot tell from chance is not a verdict."""
    found = timing.Certificate(epsilon=0.0, event="none", accuracy=0.53, accuracy_lower=0.45,
                               median_x_us=1.0, median_y_us=1.0, shift_us=0.0, held_out=500)
    assert timing.verdict(found, promised=1.0) == "unsure"


def test_each_svt_pair_releases_what_its_description_says(timing) -> None:
    """A pair described as "(both None)", "(both -1)" or "(both [])" gives that output on both
    sides: its calls time the inputs the table names (a lambda that read a loop variable
    late once timed another row's inputs, one side passing, and reported a leak). With the
    threshold 10**6 above answers below 10**5, a pass has probability below 1e-40."""
    expected = {"(both None)": None, "(both [])": []}
    checked = 0
    for pair in list(timing.svt_pairs()):   # all made first, as the audit does
        for words, output in [*expected.items(), ("(both -1)", "all -1")]:
            if words in pair.description:
                for call in (pair.call_x, pair.call_y):
                    got = call()
                    if output == "all -1":
                        assert np.all(np.asarray(got) == -1), (pair.key, got)
                    else:
                        assert got == output, (pair.key, got)
                checked += 1
    assert checked >= 10
