"""Audits of the sparse vector technique: the broken variants are certified above their
claimed ε, the correct mechanisms never above theirs.

False-failure probabilities. For a broken case, the test fails only if the event count
on d0 is unusually low or the count on d1 unusually high. The event probabilities p0, p1
below are exact for continuous Laplace noise (closed form or numerical integration over
the threshold noise; the textbook float sampler differs by ~1e-16). For each case we take
counts a, b with P(K0 <= a) <= 5e-8 and P(K1 >= b) <= 5e-8 (binomial tails) and check
that ``epsilon_from_counts(a + 1, n, b - 1, n)`` already exceeds the claim; the bound is
monotone in both counts, so each case fails with probability <= 1e-7 (five cases:
<= 5e-7). The numbers (computed with scipy.stats.binom):

* naive, n = 5000: p0 = 1/16, p1 = e**-4/16; worst counts (225, 22) certify 1.709 > 1.
* no_query_noise, n = 2000: p0 = (1 - e**-0.5)/2 = 0.1967, p1 = 0; worst (302, 0): 4.111.
* release_answers at ε = 2, n = 30000: p0 = 0.05504, p1 = 0.002979; worst (1445, 144):
  2.063 > 2.
* no_cutoff, n = 20000: p0 = 0.02060, p1 = 0.001966; worst (309, 77): 1.007 > 1.
* little_query_noise, n = 15000: p0 = 0.04125, p1 = 0.004623; worst (493, 118): 1.124.

For the correct mechanisms the audit runs at confidence 1 - 1e-7: a certified bound above
the true ε has probability <= 1e-7 each (the audit's guarantee).
"""

from __future__ import annotations

import math

import pytest

from dpkit.attacks.svt import SVT_AUDIT_CASES, audit_svt, svt_audit_case
from dpkit.rng import seeded

BROKEN = [("naive", 1.0, 5000), ("no_query_noise", 1.0, 2000),
          ("release_answers", 2.0, 30000), ("no_cutoff", 1.0, 20000),
          ("little_query_noise", 1.0, 15000)]


@pytest.mark.parametrize(("name", "epsilon", "n"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_variants_are_certified_above_their_claim(name, epsilon, n):
    bound = audit_svt(name, epsilon, n=n, rng=seeded(2024))
    case = svt_audit_case(name, epsilon)
    assert bound > case.claimed_epsilon == epsilon
    assert bound <= case.true_epsilon  # the audit never overshoots the truth


@pytest.mark.parametrize(("name", "n"), [("above_threshold", 3000), ("sparse", 2000)])
def test_correct_mechanisms_are_never_certified_above_epsilon(name, n):
    bound = audit_svt(name, 1.0, n=n, confidence=1 - 1e-7, rng=seeded(7))
    assert bound <= 1.0


def test_cases_are_neighbours_and_well_formed():
    for name in SVT_AUDIT_CASES:
        case = svt_audit_case(name, 0.5)
        assert len(case.d0) == len(case.d1)
        assert max(abs(a - b) for a, b in zip(case.d0, case.d1, strict=True)) <= 1
        assert case.claimed_epsilon == 0.5
        assert case.true_epsilon >= case.claimed_epsilon
        output = case.mechanism(case.d0, seeded(0))
        assert isinstance(case.event(output), bool)
    assert math.isinf(svt_audit_case("no_cutoff").true_epsilon)
    assert svt_audit_case("little_query_noise", 2.0).true_epsilon == 6.5


def test_unknown_case_and_bad_epsilon_are_refused():
    with pytest.raises(ValueError, match="name must be one of"):
        svt_audit_case("nope")
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        svt_audit_case("naive", -1.0)
