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

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from tqdm.auto import tqdm

from dpkit._checks import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_integer,
    check_probability,
)
from dpkit.rng import RandomSource, resolve
from dpkit.timing import unpadded

__all__ = [
    "AuditResult",
    "binned_chi_square",
    "clopper_pearson",
    "epsilon_from_counts",
    "epsilon_lower_bound",
    "guessing_bound",
    "strongest_lower_bound",
    "tradeoff_bound",
]

Mechanism = Callable[[Any, RandomSource], Any]
Event = Callable[[Any], bool]


def tradeoff_bound(alpha: float, epsilon: float, delta: float = 0.0) -> float:
    """The smallest false-negative rate a test with false-positive rate ``alpha`` can have.

    A test that tries to tell ``M(D)`` from ``M(D')`` (``D`` the null hypothesis) errs with
    probabilities ``α = P[reject | D]`` and ``β = P[accept | D']``. If ``M`` is (ε, δ)-DP,
    ``α + e**ε·β >= 1 − δ`` and ``e**ε·α + β >= 1 − δ``, so

    ``β >= max(0, 1 − δ − e**ε·α, e**-ε·(1 − δ − α))``,

    which this function returns; conversely a mechanism all of whose tests obey the bound is
    (ε, δ)-DP (Wasserman & Zhou 2010 for δ = 0; Kairouz, Oh & Viswanath 2015, Theorem 2.1).

    Parameters
    ----------
    alpha : float
        False-positive rate in [0, 1].
    epsilon : float
        Finite and > 0.
    delta : float, default 0
        In [0, 1).

    Returns
    -------
    float
        The bound on β, in [0, 1].

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.

    Examples
    --------
    >>> round(tradeoff_bound(0.05, 1.0), 4)
    0.8641
    >>> tradeoff_bound(0.5, 1.0, delta=0.5)
    0.0
    """
    alpha = check_probability(alpha, "alpha")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    return max(0.0, 1.0 - delta - math.exp(epsilon) * alpha,
               math.exp(-epsilon) * (1.0 - delta - alpha))


def guessing_bound(epsilon: float, delta: float = 0.0) -> float:
    """The best accuracy of any guess between two neighbours, each a priori equally likely.

    Adding the two inequalities of :func:`tradeoff_bound` gives
    ``α + β >= 2(1 − δ)/(1 + e**ε)``, and a guess is right with probability
    ``1 − (α + β)/2 <= (e**ε + δ)/(1 + e**ε)``. Randomized response attains the bound.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float, default 0
        In [0, 1).

    Returns
    -------
    float
        ``(e**ε + δ) / (1 + e**ε)``, computed without overflow.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.

    Examples
    --------
    >>> round(guessing_bound(1.0), 4)
    0.7311
    >>> round(guessing_bound(0.1, 1e-5), 6)
    0.524984
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    # (e^ε + δ)/(1 + e^ε) = 1/(1 + e^-ε) + δ·e^-ε/(1 + e^-ε), both terms free of overflow
    shrink = math.exp(-epsilon)
    return (1.0 + delta * shrink) / (1.0 + shrink)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) two-sided confidence interval for a binomial proportion.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials, ``n >= 1``.
    confidence : float
        Coverage in (0, 1).

    Returns
    -------
    (float, float)
        ``(lower, upper)``; ``lower = 0`` when ``k = 0`` and ``upper = 1`` when ``k = n``.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.

    Notes
    -----
    Clopper & Pearson (1934): the interval inverts two one-sided binomial tests, so its
    coverage is at least ``confidence`` for every true proportion (it is conservative).

    Examples
    --------
    >>> low, high = clopper_pearson(10, 100)
    >>> round(low, 4), round(high, 4)
    (0.049, 0.1762)
    """
    n = check_integer(n, "n", minimum=1)
    k = check_integer(k, "k", minimum=0, maximum=n)
    confidence = check_probability(confidence, "confidence", open_low=True, open_high=True)
    tail = (1.0 - confidence) / 2.0
    lower = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1.0 - tail, k + 1, n - k))
    return lower, upper


def epsilon_from_counts(k0: int, n0: int, k1: int, n1: int, *, confidence: float = 0.95,
                        delta: float = 0.0) -> float:
    """The ε certified by event counts on two neighbouring inputs (0 if nothing is certified).

    An (ε, δ)-DP mechanism satisfies ``p0 <= e**ε·p1 + δ`` and ``p1 <= e**ε·p0 + δ`` for the
    event's probabilities ``p0, p1`` on the two inputs, and the same for the complementary
    event. Each probability gets a Clopper–Pearson interval at level ``1 - α/2``
    (``α = 1 - confidence``), so both hold together with probability at least
    ``confidence``; the largest ε those intervals force is returned.

    Parameters
    ----------
    k0, n0 : int
        Times the event occurred in ``n0`` runs on the first input.
    k1, n1 : int
        The same on the second input.
    confidence : float, default 0.95
        Probability that the returned bound is valid (does not exceed the true ε).
    delta : float, default 0
        The δ of the claim being audited (0 for pure ε-DP).

    Returns
    -------
    float
        A lower bound on ε (``>= 0``); ``inf`` if no finite ε is compatible.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.

    Examples
    --------
    An event seen 900 times in 1000 runs on one input and 100 times on the other: the point
    estimate of the ratio is 9 (ε = ln 9 ≈ 2.197); the certified bound is lower.

    >>> round(epsilon_from_counts(900, 1000, 100, 1000), 3)
    1.962
    """
    return _certified(k0, n0, k1, n1, confidence, delta)[0]


def _certified(k0: int, n0: int, k1: int, n1: int, confidence: float,
               delta: float) -> tuple[float, bool]:
    """:func:`epsilon_from_counts`, and whether its bound comes from the complement of the
    event (False when nothing is certified or the event itself gives the bound)."""
    confidence = check_probability(confidence, "confidence", open_low=True, open_high=True)
    delta = check_delta(delta, allow_zero=True)
    level = 1.0 - (1.0 - confidence) / 2.0
    lo0, hi0 = clopper_pearson(k0, n0, level)
    lo1, hi1 = clopper_pearson(k1, n1, level)
    best, complement = 0.0, False
    # event on input 0 vs input 1, both ways; then the complementary event, both ways
    for index, (low, high) in enumerate(((lo0, hi1), (lo1, hi0), (1 - hi0, 1 - lo1),
                                         (1 - hi1, 1 - lo0))):
        excess = low - delta
        if excess <= 0:
            continue
        bound = math.inf if high <= 0 else math.log(excess / high)
        if bound > best:
            best, complement = bound, index >= 2
    return best, complement


def _count(event: Event, outputs: list[Any]) -> int:
    """How many outputs satisfy ``event`` (using ``event.batch(outputs)`` when it exists)."""
    batch = getattr(event, "batch", None)
    if batch is not None:
        return int(np.count_nonzero(batch(outputs)))
    return sum(bool(event(y)) for y in outputs)


def _run(mechanism: Mechanism, data: Any, n: int, source: RandomSource,
         bar: Any) -> list[Any]:
    outputs = []
    # The runs only feed the counts, none is published: dpkit's releases skip their timing
    # deadlines (dpkit.timing), which change their running time, never their outputs.
    with unpadded():
        for _ in range(n):
            outputs.append(mechanism(data, source))
            bar.update(1)
    return outputs


def _counts(mechanism: Mechanism, d0: Any, d1: Any, event: Event, n: int,
            source: RandomSource, bar: Any) -> tuple[int, int]:
    """How often ``event`` holds in ``n`` fresh runs on ``d0``, then in ``n`` on ``d1``."""
    k0 = _count(event, _run(mechanism, d0, n, source, bar))
    k1 = _count(event, _run(mechanism, d1, n, source, bar))
    return k0, k1


def epsilon_lower_bound(mechanism: Mechanism, d0: Any, d1: Any, event: Event, *, n: int,
                        confidence: float = 0.95, delta: float = 0.0, rng: Any = None,
                        progress: bool = False) -> float:
    """A statistical lower bound on the ε of ``mechanism`` from one event on two inputs.

    Runs ``mechanism(d0, rng)`` and ``mechanism(d1, rng)`` ``n`` times each, counts how
    often ``event(output)`` holds, bounds both probabilities with Clopper–Pearson intervals
    and returns the ε they certify (:func:`epsilon_from_counts`).

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returning one output; ``rng`` is a
        :class:`dpkit.rng.RandomSource`.
    d0, d1 : any
        Neighbouring inputs.
    event : callable
        ``event(output) -> bool``, chosen *before* looking at these runs. If it also has a
        method ``batch(outputs) -> array of bool``, that is used to evaluate all runs at once.
    n : int
        Runs per input.
    confidence : float, default 0.95
        Probability that the bound is valid.
    delta : float, default 0
        δ of the (ε, δ) claim being audited.
    rng : None or dpkit.rng.RandomSource
        Randomness for the mechanism (secure default).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    float
        A lower bound on ε, 0 when nothing is certified. If it exceeds the ε a mechanism
        claims, the claim is refuted with probability at least ``confidence``.

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range.

    Notes
    -----
    Follows the auditing recipe of Jagielski, Ullman & Oprea (2020): an ε-DP mechanism has
    ``P[M(d0) ∈ S] <= e**ε P[M(d1) ∈ S]`` for every event ``S`` (Dwork & Roth 2014,
    Definition 2.4), so a significant violation of that inequality bounds ε from below.
    The runs are simulations: dpkit's releases inside them skip their timing deadlines
    (:func:`dpkit.timing.unpadded`), which changes no output.
    """
    n = check_integer(n, "n", minimum=1)
    source = resolve(rng)
    with tqdm(total=2 * n, disable=not progress, desc="audit") as bar:
        k0, k1 = _counts(mechanism, d0, d1, event, n, source, bar)
    return epsilon_from_counts(k0, n, k1, n, confidence=confidence, delta=delta)


@dataclass(frozen=True)
class AuditResult:
    """The strongest ε lower bound found by :func:`strongest_lower_bound`.

    Attributes
    ----------
    epsilon : float
        The certified lower bound (on runs not used to choose the event).
    event : str
        Name of the chosen event.
    counts : tuple of int
        ``(k0, k1)``: how often the event occurred on ``d0`` and on ``d1``.
    n : int
        Certification runs per input.
    confidence : float
        Probability that ``epsilon`` does not exceed the true ε.
    complement : bool, default False
        Whether the bound comes from the complement of ``event`` (an event and its
        complement are judged together, :func:`epsilon_from_counts`). The printed form
        names the event that certifies, and its counts.
    """

    epsilon: float
    event: str
    counts: tuple[int, int]
    n: int
    confidence: float
    complement: bool = False

    def __str__(self) -> str:
        k0, k1 = self.counts
        if self.complement:
            name, k0, k1 = f"the complement of event {self.event!r}", self.n - k0, self.n - k1
        else:
            name = f"event {self.event!r}"
        return (f"ε >= {self.epsilon:.3f} with confidence {self.confidence:.10g} "
                f"({name}: {k0}/{self.n} vs {k1}/{self.n})")


def _default_events(outputs: list[Any]) -> dict[str, Event]:
    """Thresholds at quantiles of the outputs, and 'output equals v' for repeated values."""
    try:
        values = check_finite_array(np.asarray(outputs, dtype=np.float64), "outputs", ndim=1)
    except (TypeError, ValueError) as error:
        raise ValueError("the default events need real-valued scalar outputs; pass events=") \
            from error
    events: dict[str, Event] = {}
    for t in np.unique(np.quantile(values, np.linspace(0.02, 0.98, 49))):
        threshold = float(t)
        events[f"output > {threshold:.6g}"] = lambda y, t=threshold: float(y) > t
    for value, count in Counter(values.tolist()).most_common(20):
        if count > 1:
            events[f"output == {value!r}"] = lambda y, v=value: float(y) == v
    return events


def strongest_lower_bound(mechanism: Mechanism, d0: Any, d1: Any,
                          events: Mapping[str, Event] | None = None, *, n: int,
                          confidence: float = 0.95, delta: float = 0.0, rng: Any = None,
                          progress: bool = False) -> AuditResult:
    """Try a family of events and report the strongest ε lower bound, honestly.

    The mechanism runs ``n`` times per input to *choose* the event with the largest bound,
    then ``n`` fresh times per input to *certify* that event alone, so choosing among many
    events does not inflate the confidence. Events whose bounds agree to within a relative
    ``1e-9`` (an event and its complement always do, up to rounding) count as tied, and the
    first one listed is chosen.

    Parameters
    ----------
    mechanism, d0, d1, n, confidence, delta, rng, progress
        As in :func:`epsilon_lower_bound` (``n`` runs per input in each phase).
    events : mapping of str to callable, optional
        Named events ``output -> bool``. By default: ``output > t`` for 49 quantiles ``t``
        of the selection runs, and ``output == v`` for values seen more than once (for
        mechanisms with real scalar outputs).

    Returns
    -------
    AuditResult

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range, or ``events`` is empty.
    """
    n = check_integer(n, "n", minimum=1)
    source = resolve(rng)
    with tqdm(total=4 * n, disable=not progress, desc="audit") as bar:
        chosen0 = _run(mechanism, d0, n, source, bar)
        chosen1 = _run(mechanism, d1, n, source, bar)
        family = dict(events) if events is not None else _default_events(chosen0 + chosen1)
        if not family:
            raise ValueError("events must hold at least one event")
        scores = {}
        for name, event in family.items():
            k0 = _count(event, chosen0)
            k1 = _count(event, chosen1)
            scores[name] = epsilon_from_counts(k0, n, k1, n, confidence=confidence, delta=delta)
        top = max(scores.values())
        best = next(name for name, score in scores.items()
                    if math.isclose(score, top, rel_tol=1e-9))
        k0, k1 = _counts(mechanism, d0, d1, family[best], n, source, bar)
    epsilon, complement = _certified(k0, n, k1, n, confidence, delta)
    return AuditResult(epsilon=epsilon, event=best, counts=(k0, k1), n=n,
                       confidence=confidence, complement=complement)


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
