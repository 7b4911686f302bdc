"""Empirical privacy auditing: statistical lower bounds on epsilon, and goodness-of-fit tests.

A mechanism ``M`` is ε-differentially private only if, for every pair of neighbouring inputs
``d0, d1`` and every event ``S``, ``P[M(d0) ∈ S] <= e**ε · P[M(d1) ∈ S]``. Running ``M`` many
times on ``d0`` and on ``d1`` and bounding both probabilities with Clopper–Pearson intervals
turns that inequality into a *certified lower bound* on the ε the mechanism can claim:
with the stated confidence, no smaller ε is compatible with what was observed.
(Jagielski, Ullman & Oprea 2020 use the same argument to audit private training.)

An audit can refute a privacy claim (a bound above the claimed ε is a bug) but never prove
one: a low bound only says that these events on these inputs showed no violation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

from dpkit._checks import check_finite_array

__all__ = ["binned_chi_square"]


def binned_chi_square(samples: Sequence[float] | np.ndarray,
                      cdf: Callable[[np.ndarray], np.ndarray],
                      edges: Sequence[float] | np.ndarray, *, min_expected: float = 5.0) -> float:
    """p-value of Pearson's chi-square test of ``samples`` against a distribution's CDF.

    The real line is cut at ``edges`` into the bins ``(-inf, e0], (e0, e1], ..., (e_m, inf)``;
    adjacent bins are merged (left to right) until every bin expects at least
    ``min_expected`` samples, so fine edges are always safe to pass. For an integer-valued
    distribution, put the edges at half-integers.

    Parameters
    ----------
    samples : array_like of real numbers
        Independent draws.
    cdf : callable
        ``cdf(x) = P[X <= x]``, vectorised over a float array.
    edges : array_like of real numbers
        Strictly increasing cut points.
    min_expected : float, default 5
        Minimum expected count per bin (the usual validity condition of the test).

    Returns
    -------
    float
        The p-value: under the null hypothesis ``P[p-value < a] <= a`` (asymptotically), so
        failing a test when ``p < 1e-7`` has false-failure probability about 1e-7.

    Raises
    ------
    ValueError
        If the samples are empty or not finite, the edges are not increasing, or fewer than
        two bins remain after merging.
    """
    values = check_finite_array(samples, "samples", ndim=1)
    cuts = check_finite_array(edges, "edges", ndim=1)
    if np.any(np.diff(cuts) <= 0):
        raise ValueError("edges must be strictly increasing")
    n = values.size
    cumulative = np.concatenate(([0.0], np.asarray(cdf(cuts), dtype=np.float64), [1.0]))
    probabilities = np.diff(cumulative)
    counts = np.bincount(np.searchsorted(cuts, values, side="left"), minlength=cuts.size + 1)
    merged_p: list[float] = []
    merged_c: list[int] = []
    p_acc, c_acc = 0.0, 0
    for p, c in zip(probabilities, counts, strict=True):
        p_acc += p
        c_acc += int(c)
        if p_acc * n >= min_expected:
            merged_p.append(p_acc)
            merged_c.append(c_acc)
            p_acc, c_acc = 0.0, 0
    if merged_p:
        merged_p[-1] += p_acc
        merged_c[-1] += c_acc
    if len(merged_p) < 2:
        raise ValueError(f"the edges leave fewer than two bins expecting >= {min_expected} "
                         f"of {n} samples; use more samples or finer edges")
    expected = np.array(merged_p) / np.sum(merged_p) * n
    return float(stats.chisquare(np.array(merged_c), expected).pvalue)
