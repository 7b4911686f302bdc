"""Audits of the sparse vector technique: neighbouring inputs and events that expose SVT misuse.

Each :class:`SvtAuditCase` fixes a mechanism (a broken variant from :mod:`dpkit.naive.svt`
or a correct one from :mod:`dpkit.svt`), two neighbouring inputs and an event. The inputs
are vectors of query answers (query ``i`` returns ``data[i]``); two vectors whose entries
differ by at most 1 are neighbours for sensitivity-1 queries, because such answers come
from real datasets that differ in one row (take ``q_i`` = ± the count of rows in a set
``S_i``, plus a constant, with the extra row in ``S_i`` exactly where the answers differ).

:func:`audit_svt` runs :func:`dpkit.audit.epsilon_lower_bound` on a case: a certified
(with the stated confidence) lower bound on the ε the mechanism can claim. The broken
variants' bounds exceed their claimed ε; the correct ones' never exceed theirs.

The designs follow the proofs of Lyu, Su & Li (2017): SVT's proof shifts the threshold
noise to absorb the queries answered "below" and shifts the query noise of the *one*
query answered "above". Each broken variant loses one of those shifts, and the inputs
move the queries in opposite directions so that the missing shift cannot be paid for.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpkit import naive
from dpkit._checks import check_epsilon
from dpkit.audit import epsilon_lower_bound
from dpkit.rng import RandomSource
from dpkit.svt import above_threshold, sparse

__all__ = ["SVT_AUDIT_CASES", "SvtAuditCase", "audit_svt", "svt_audit_case"]

#: Names of the audit cases, broken variants first, then the correct mechanisms.
SVT_AUDIT_CASES = ("naive", "no_query_noise", "release_answers", "no_cutoff",
                   "little_query_noise", "above_threshold", "sparse")


@dataclass(frozen=True)
class SvtAuditCase:
    """One audit: a mechanism, two neighbouring answer vectors, and an event.

    Attributes
    ----------
    name : str
        One of :data:`SVT_AUDIT_CASES`.
    title : str
        What the mechanism does, in a few words.
    claimed_epsilon : float
        The ε the mechanism is (or was published as) private with.
    true_epsilon : float
        Its real privacy cost (``math.inf`` when it has none).
    mechanism : callable
        ``mechanism(data, rng)`` runs it once on an answer vector.
    d0, d1 : tuple of float
        Neighbouring answer vectors (entries differ by at most 1).
    event : callable
        ``event(output) -> bool``, much likelier on ``d0`` than on ``d1`` when broken.
    event_text : str
        The event in words.
    """

    name: str
    title: str
    claimed_epsilon: float
    true_epsilon: float
    mechanism: Callable[[Any, RandomSource], Any]
    d0: tuple[float, ...]
    d1: tuple[float, ...]
    event: Callable[[Any], bool]
    event_text: str


def _queries(count: int) -> list[Callable[[Any], float]]:
    """Query ``i`` reads entry ``i`` of an answer vector."""
    return [lambda data, i=i: data[i] for i in range(count)]


def svt_audit_case(name: str, epsilon: float = 1.0) -> SvtAuditCase:
    """Return the audit case ``name`` with claimed privacy ``epsilon``.

    The cases (threshold 0) and their true privacy:

    * ``naive``: :func:`dpkit.naive.above_threshold`, 4 queries; 4ε.
    * ``no_query_noise``: :func:`dpkit.naive.svt_no_query_noise`; ∞.
    * ``release_answers``: :func:`dpkit.naive.svt_release_answers`, 24 queries, c = 1; ∞.
    * ``no_cutoff``: :func:`dpkit.naive.svt_no_cutoff`, 30 queries; ∞.
    * ``little_query_noise``: :func:`dpkit.naive.svt_little_query_noise`, 8 queries,
      c = 2; (1 + 6c)ε/4 = 3.25ε.
    * ``above_threshold``: :func:`dpkit.svt.above_threshold` (correct); ε.
    * ``sparse``: :func:`dpkit.svt.sparse`, c = 2 (correct); ε.

    Parameters
    ----------
    name : str
        One of :data:`SVT_AUDIT_CASES`.
    epsilon : float
        The claimed privacy parameter, finite and > 0 (the designs are tuned for ε = 1).

    Returns
    -------
    SvtAuditCase

    Raises
    ------
    ValueError
        If ``name`` is unknown or ``epsilon`` is not finite and > 0.
    TypeError
        If ``epsilon`` is not a real number.
    """
    epsilon = check_epsilon(epsilon)
    if name == "naive":
        # Each answer moves up by 1: "all below" gets e**-ε likelier per query.
        return SvtAuditCase(
            name, "each answer noised, exact threshold", epsilon, 4 * epsilon,
            lambda d, rng: naive.above_threshold(_queries(4), d, 0.0, epsilon, rng),
            (0.0,) * 4, (1.0,) * 4, lambda out: out is None, "no query passes")
    if name == "no_query_noise":
        # Only the threshold is noisy: (0, 1) can report "query 1 only", (1, 0) never.
        return SvtAuditCase(
            name, "no noise on the query answers", epsilon, math.inf,
            lambda d, rng: naive.svt_no_query_noise(_queries(2), d, 0.0, epsilon, rng),
            (0.0, 1.0), (1.0, 0.0), lambda out: out == [1], "exactly query 1 is reported")
    if name == "release_answers":
        # The released value bounds the threshold noise from above, so it cannot absorb
        # the "below" answers moving up. The answers rise by 1/2 a query (d0: -4, -3.5,
        # ..., 7.5; d1 one higher): a report from query 4 on, with a value at most 1/4
        # above its answer on d0, needs a low threshold noise after several "below"
        # answers, each likelier on d0. (A flat stream of six queries with the event
        # "query 5, value <= 1" had probabilities 0.0101 and 0.0013 at ε = 1; this one's
        # are 0.034 and 0.0031, and 8,000 runs certify more than 30,000 did there.)
        ramp = tuple(j / 2 - 4 for j in range(24))
        return SvtAuditCase(
            name, "noisy answer released with the index", epsilon, math.inf,
            lambda d, rng: naive.svt_release_answers(_queries(24), d, 0.0, epsilon, 1, rng),
            ramp, tuple(a + 1.0 for a in ramp),
            lambda out: len(out) == 1 and out[0][0] >= 4 and out[0][1] <= out[0][0] / 2 - 3.75,
            "a query j >= 4 is reported, value <= j/2 - 3.75")
    if name == "no_cutoff":
        # Fifteen "below" queries move up and fifteen "above" queries move down: no single
        # shift of the threshold noise pays for both groups, and without a cutoff every
        # positive is reported, so the count of reports in each group shows which way they
        # moved. (Three and three with the event "exactly the three above reported" had
        # probabilities 0.0206 and 0.0020; this event's are 0.357 and 0.022, and 500 runs
        # certify more than 5,000 did there.)
        return SvtAuditCase(
            name, "no cutoff: every positive reported", epsilon, math.inf,
            lambda d, rng: naive.svt_no_cutoff(_queries(30), d, 0.0, epsilon, rng),
            (0.0,) * 15 + (1.0,) * 15, (1.0,) * 15 + (0.0,) * 15,
            lambda out: sum(i >= 15 for i in out) - sum(i < 15 for i in out) >= 3,
            "at least 3 more reports among 15-29 than 0-14")
    if name == "little_query_noise":
        # Four "below" queries move up (from -1 to 0), then four queries move down (from 1/2
        # to -1/2): the two reports both coming from the last four needs the threshold noise
        # above the first four, where each positive's too-small noise pays more than the
        # budget allows. (Two and two at 0 and 1 with the event "queries 2 and 3" had
        # probabilities 0.041 and 0.0046; these are 0.078 and 0.0097, and 4,000 runs
        # certify more than 5,000 did there.)
        return SvtAuditCase(
            name, "query noise Lap(4/(3ε)), c = 2", epsilon, (1 + 6 * 2) / 4 * epsilon,
            lambda d, rng: naive.svt_little_query_noise(_queries(8), d, 0.0, epsilon, 2,
                                                        rng),
            (-1.0,) * 4 + (0.5,) * 4, (0.0,) * 4 + (-0.5,) * 4,
            lambda out: len(out) == 2 and min(out) >= 4,
            "both reports among queries 4-7")
    if name == "above_threshold":
        return SvtAuditCase(
            name, "AboveThreshold (dpkit.svt)", epsilon, epsilon,
            lambda d, rng: above_threshold(_queries(5), d, 0.0, epsilon, rng=rng),
            (0.0,) * 4 + (1.0,), (1.0,) * 4 + (0.0,), lambda out: out == 4,
            "query 4 is the first to pass")
    if name == "sparse":
        return SvtAuditCase(
            name, "Sparse, c = 2 (dpkit.svt)", epsilon, epsilon,
            lambda d, rng: sparse(_queries(4), d, 0.0, epsilon, 2, rng=rng),
            (0.0, 0.0, 1.0, 1.0), (1.0, 1.0, 0.0, 0.0),
            lambda out: out == [2, 3], "exactly queries 2 and 3 are reported")
    raise ValueError(f"name must be one of {SVT_AUDIT_CASES}, got {name!r}")


def audit_svt(name: str, epsilon: float = 1.0, *, n: int, confidence: float = 0.95,
              rng: RandomSource | None = None) -> float:
    """Certified lower bound on the privacy of an SVT variant, from ``n`` runs per input.

    Parameters
    ----------
    name : str
        One of :data:`SVT_AUDIT_CASES` (see :func:`svt_audit_case`).
    epsilon : float
        The claimed privacy parameter.
    n : int
        Runs of the mechanism on each of the two inputs.
    confidence : float
        Confidence of the bound (see :func:`dpkit.audit.epsilon_lower_bound`).
    rng : RandomSource, optional
        Source of randomness for the runs; ``None`` for the secure source.

    Returns
    -------
    float
        A lower bound on the mechanism's ε: above ``epsilon`` refutes the claim.

    Raises
    ------
    TypeError, ValueError
        As :func:`svt_audit_case` and :func:`dpkit.audit.epsilon_lower_bound`.
    """
    case = svt_audit_case(name, epsilon)
    return epsilon_lower_bound(case.mechanism, case.d0, case.d1, case.event, n=n,
                               confidence=confidence, rng=rng)
