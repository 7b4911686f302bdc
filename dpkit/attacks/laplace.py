"""Mironov's least-significant-bits attack on the textbook floating-point Laplace mechanism.

The textbook mechanism (:func:`dpkit.naive.laplace_mechanism`) releases
``fl(x + fl(S·λ·ln(1/U)))`` where ``U`` ranges over the ``2**53`` multiples of ``2**-53``
in (0, 1] and ``S`` over ±1. Those noise values are unevenly spaced floats, and adding
``x`` rounds them onto the float grid around ``x + noise``, so the set of floats the
mechanism can output *depends on x*. Given one release ``y`` and two candidate inputs, the
attacker asks, for each candidate, whether any draw produces exactly ``y``; if only one
candidate can, the input is known with certainty (Mironov 2012, Section 3).

The check is exact and fast because, for each sign, the textbook output is a monotone
function of the integer ``j = U·2**53``, so a binary search over ``j`` finds the only
candidate draws for ``y`` in 54 steps. The search evaluates the very same function the
mechanism uses (:func:`dpkit.naive.laplace.textbook_laplace_noise`).

Against :func:`dpkit.laplace.laplace_mechanism` the certainty is gone: the safe
mechanism's outputs are exact grid points unrelated to the textbook sampler's image, and its
privacy guarantee keeps the share of right "decisions", like *every* attack's accuracy,
between ``1 / (1 + e**ε)`` and ``e**ε / (1 + e**ε)`` (below, the reversed rule would beat
the upper end).

The timing attack (:func:`timing_attack`, :func:`measure_timing_attack`) follows Jin,
McMurtry, Rubinstein & Ohrimenko (IEEE S&P 2022): a sampler whose loop count grows with the
noise lets whoever times a release learn ``|noise|``; combined with the output, that tells
two neighbouring inputs apart far better than differential privacy allows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpkit._checks import check_epsilon, check_finite_array, check_integer, check_real
from dpkit._checks import check_sensitivity as _check_sensitivity
from dpkit.audit import clopper_pearson
from dpkit.naive.laplace import textbook_laplace_noise
from dpkit.rng import resolve
from dpkit.timing import unpadded

__all__ = [
    "LSBAttackResult",
    "ReachableOnly",
    "TimingAttackResult",
    "TimingProfile",
    "laplace_lsb_attack",
    "learn_timing_profile",
    "measure_lsb_attack",
    "measure_timing_attack",
    "textbook_reachable",
    "timing_attack",
]

_STEPS = 2**53          # U = j·2**-53, j in [1, 2**53]
UNDECIDED = -1


def _textbook_output(j: np.ndarray, sign: float, value: float, scale: float) -> np.ndarray:
    """The textbook release for ``U = j·2**-53`` and sign ``S`` (as the mechanism computes it)."""
    signs = np.full(j.shape, sign)
    return value + textbook_laplace_noise(j.astype(np.float64) * 2.0**-53, signs, scale)


def textbook_reachable(releases: Any, value: float, sensitivity: float,
                       epsilon: float) -> np.ndarray:
    """Whether the textbook mechanism run on ``value`` can output each of ``releases``.

    Parameters
    ----------
    releases : float or array_like of float
        Observed outputs.
    value : float
        A candidate true input.
    sensitivity, epsilon : float
        The parameters the mechanism was run with (its scale is ``sensitivity/epsilon``
        computed in floating point, as the textbook code does).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where some draw ``(U, S)`` gives exactly that release.

    Raises
    ------
    TypeError, ValueError
        For invalid input.
    """
    y = np.atleast_1d(check_finite_array(releases, "releases", allow_empty=True))
    value = check_real(value, "value")
    scale = _check_sensitivity(sensitivity) / check_epsilon(epsilon)
    shape = y.shape
    y = y.ravel()
    hit = np.zeros(y.size, dtype=bool)
    for sign in (1.0, -1.0):
        # S = +1: the output falls as j grows; S = -1: it rises. Find the first j at which
        # it reaches y (from above or below); y is reachable iff the output there equals y.
        lo = np.ones(y.size, dtype=np.int64)
        hi = np.full(y.size, _STEPS + 1, dtype=np.int64)
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            out = _textbook_output(np.minimum(mid, _STEPS), sign, value, scale)
            reached = out <= y if sign > 0 else out >= y
            hi = np.where(active & reached, mid, hi)
            lo = np.where(active & ~reached, mid + 1, lo)
        found = lo <= _STEPS
        hit[found] |= _textbook_output(lo[found], sign, value, scale) == y[found]
    return hit.reshape(shape)


@dataclass(frozen=True)
class ReachableOnly:
    """The audit event "the textbook sampler can produce this output from ``value`` only".

    Use with :func:`dpkit.audit.epsilon_lower_bound`: on the textbook mechanism the event
    has probability about 0.6 from ``value`` and exactly 0 from ``other``, so the certified ε
    grows without limit as the number of runs grows.

    Attributes
    ----------
    value, other : float
        The two candidate inputs.
    sensitivity, epsilon : float
        The mechanism's parameters.
    """

    value: float
    other: float
    sensitivity: float = 1.0
    epsilon: float = 1.0

    def batch(self, outputs: Sequence[float]) -> np.ndarray:
        """Evaluate the event on many outputs at once."""
        y = np.asarray(outputs, dtype=np.float64)
        mine = textbook_reachable(y, self.value, self.sensitivity, self.epsilon)
        theirs = textbook_reachable(y, self.other, self.sensitivity, self.epsilon)
        return mine & ~theirs

    def __call__(self, output: float) -> bool:
        return bool(self.batch([output])[0])


def laplace_lsb_attack(releases: Any, sensitivity: float = 1.0, epsilon: float = 1.0,
                       candidates: Sequence[float] = (0.0, 1.0)) -> np.ndarray:
    """Mironov's attack: from each release, name the only candidate input that can produce it.

    Parameters
    ----------
    releases : float or array_like of float
        Outputs of a Laplace mechanism run on one of ``candidates``.
    sensitivity, epsilon : float
        The mechanism's parameters (scale ``λ = sensitivity/epsilon``).
    candidates : sequence of two or more floats
        The possible true inputs (default: 0 and 1, neighbouring counts).

    Returns
    -------
    numpy.ndarray of int
        For each release, the index into ``candidates`` of the unique candidate that can
        produce it, or ``-1`` when none or several can (the attack abstains).

    Raises
    ------
    TypeError, ValueError
        For invalid input or fewer than two candidates.

    Notes
    -----
    Mironov (2012), "On significance of the least significant bits for differential
    privacy", Section 3. Against the textbook sampler a decision is always correct. Against
    :func:`dpkit.laplace.laplace_mechanism` the attack still decides on some releases (a grid
    point may be a float that only one input's textbook sampler produces), but the decisions
    are post-processing of an ε-DP release: the probability that one is right lies between
    ``1 / (1 + e**ε)`` and ``e**ε / (1 + e**ε)``, and can fall on either side of one half.
    """
    values = check_finite_array(candidates, "candidates", ndim=1)
    if values.size < 2:
        raise ValueError(f"candidates must hold at least two inputs, got {values.size}")
    reach = np.stack([textbook_reachable(releases, v, sensitivity, epsilon) for v in values])
    unique = reach.sum(axis=0) == 1
    return np.where(unique, np.argmax(reach, axis=0), UNDECIDED)


@dataclass(frozen=True)
class LSBAttackResult:
    """How well the LSB attack told input 0 from input 1.

    Attributes
    ----------
    n : int
        Releases per input.
    decided : float
        Fraction of releases on which the attack named an input.
    correct_when_decided : float
        Fraction of those decisions that were right (nan if none).
    accuracy : float
        Overall success if the attacker flips a fair coin when undecided.
    bound : float
        The best accuracy ε-differential privacy allows any attack: ``e**ε/(1 + e**ε)``.
    """

    n: int
    decided: float
    correct_when_decided: float
    accuracy: float
    bound: float

    def correct_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Clopper–Pearson interval for the probability that a decision is right.

        ``correct_when_decided`` is a share of the ``decided · 2n`` decisions made; this is
        the exact binomial confidence interval around it (:func:`dpkit.audit.clopper_pearson`).

        Parameters
        ----------
        confidence : float
            Coverage in (0, 1).

        Returns
        -------
        (float, float)
            ``(lower, upper)``; ``(0.0, 1.0)`` when the attack decided on no release.

        Raises
        ------
        TypeError, ValueError
            If ``confidence`` is not in (0, 1).

        Examples
        --------
        >>> low, high = LSBAttackResult(1000, 0.5, 0.55, 0.525, 0.73).correct_interval()
        >>> round(low, 3), round(high, 3)
        (0.519, 0.581)
        """
        decisions = round(self.decided * 2 * self.n)
        if decisions == 0:
            clopper_pearson(0, 1, confidence)        # validates confidence
            return 0.0, 1.0
        return clopper_pearson(round(self.correct_when_decided * decisions), decisions,
                               confidence)

    def __str__(self) -> str:
        return (f"decided {self.decided:.1%} of releases, {self.correct_when_decided:.1%} of "
                f"decisions correct, overall accuracy {self.accuracy:.1%} "
                f"(the ε-DP band: {1 - self.bound:.1%} to {self.bound:.1%})")


def measure_lsb_attack(mechanism: Callable[..., Any], sensitivity: float = 1.0,
                       epsilon: float = 1.0, *, n: int = 2000, rng: Any = None) -> LSBAttackResult:
    """Run ``mechanism`` ``n`` times on input 0 and on input 1, attack every release, score it.

    The attack reads the released floats only, so the runs skip dpkit's timing deadlines
    (:func:`dpkit.timing.unpadded`), which changes no output.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(value, sensitivity, epsilon, rng=source)`` returning a float, e.g.
        :func:`dpkit.naive.laplace_mechanism` or :func:`dpkit.laplace.laplace_mechanism`.
    sensitivity, epsilon : float
        Parameters passed to the mechanism and assumed by the attack.
    n : int
        Releases per input (each a separate call, as in real use).
    rng : None or dpkit.rng.RandomSource
        Randomness for the mechanism.

    Returns
    -------
    LSBAttackResult

    Raises
    ------
    TypeError, ValueError
        For invalid parameters.
    """
    n = check_integer(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    source = resolve(rng)
    # The attack reads the released floats, not their time: dpkit's releases skip their
    # timing deadlines (dpkit.timing), which change their running time, never their outputs.
    with unpadded():
        releases = np.array([[float(mechanism(float(v), sensitivity, epsilon, rng=source))
                              for _ in range(n)] for v in (0, 1)])
    guesses = laplace_lsb_attack(releases.ravel(), sensitivity, epsilon).reshape(2, n)
    truth = np.array([[0], [1]])
    decided = guesses != UNDECIDED
    correct = guesses == truth
    count = int(decided.sum())
    return LSBAttackResult(
        n=n,
        decided=count / (2 * n),
        correct_when_decided=float(correct.sum() / count) if count else float("nan"),
        accuracy=float((correct.sum() + 0.5 * (~decided).sum()) / (2 * n)),
        bound=float(np.exp(epsilon) / (1 + np.exp(epsilon))),
    )


# ------------------------------------------------------------------ the timing attack

@dataclass(frozen=True)
class TimingProfile:
    """What an attacker learned about a mechanism's cost: ``log P[cost bin | |noise| bin]``.

    Attributes
    ----------
    noise_edges, cost_edges : numpy.ndarray
        Inner bin edges (quantiles of the training data) of ``|noise|`` and of the cost.
    log_table : numpy.ndarray
        ``log_table[i, j]``: log-frequency of cost bin ``j`` among training releases whose
        ``|noise|`` fell in bin ``i`` (add-one smoothed).
    """

    noise_edges: np.ndarray
    cost_edges: np.ndarray
    log_table: np.ndarray

    def log_likelihood(self, noise: np.ndarray, cost: np.ndarray) -> np.ndarray:
        """``log P[cost bin | |noise| bin]`` for each pair."""
        rows = np.searchsorted(self.noise_edges, np.abs(noise), side="right")
        columns = np.searchsorted(self.cost_edges, cost, side="right")
        return self.log_table[rows, columns]


def _inner_quantiles(values: np.ndarray, bins: int) -> np.ndarray:
    return np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))


def learn_timing_profile(noise: Any, costs: Any, bins: int = 10) -> TimingProfile:
    """Learn how a mechanism's cost (running time or loop count) depends on ``|noise|``.

    The attacker runs the mechanism on inputs it knows, so it sees each release's noise and
    cost, and tabulates them in ``bins`` × ``bins`` quantile bins.

    Parameters
    ----------
    noise, costs : array_like of float
        Noise and cost of each training release (same length, at least 1).
    bins : int
        Number of quantile bins per axis (>= 1).

    Returns
    -------
    TimingProfile

    Raises
    ------
    TypeError, ValueError
        For invalid input or lengths that differ.
    """
    noise = check_finite_array(noise, "noise", ndim=1)
    costs = check_finite_array(costs, "costs", ndim=1)
    if noise.size != costs.size:
        raise ValueError(f"noise and costs must have the same length, got {noise.size} and "
                         f"{costs.size}")
    bins = check_integer(bins, "bins", minimum=1)
    noise_edges = _inner_quantiles(np.abs(noise), bins)
    cost_edges = _inner_quantiles(costs, bins)
    counts = np.ones((noise_edges.size + 1, cost_edges.size + 1))
    np.add.at(counts, (np.searchsorted(noise_edges, np.abs(noise), side="right"),
                       np.searchsorted(cost_edges, costs, side="right")), 1)
    return TimingProfile(noise_edges, cost_edges,
                         np.log(counts / counts.sum(axis=1, keepdims=True)))


def timing_attack(releases: Any, costs: Any, candidates: Sequence[float], scale: float,
                  profile: TimingProfile | None) -> np.ndarray:
    """Guess, for each release, which candidate input produced it, from the output and its cost.

    Scores each candidate ``c`` by ``-|y - c|/scale`` (the Laplace log-likelihood of the
    output) plus ``profile.log_likelihood(y - c, cost)`` (how typical the observed cost is
    for that much noise), and names the best. ``profile=None`` scores the output alone: the
    best an observer without a stopwatch can do.

    Parameters
    ----------
    releases, costs : array_like of float
        The observed outputs and their costs (running times or loop counts).
    candidates : sequence of float
        The possible true inputs (at least two).
    scale : float
        The Laplace scale ``Δ/ε`` of the mechanism (> 0).
    profile : TimingProfile or None
        From :func:`learn_timing_profile`.

    Returns
    -------
    numpy.ndarray of int
        Index into ``candidates`` for each release.

    Raises
    ------
    TypeError, ValueError
        For invalid input.

    Notes
    -----
    Jin, McMurtry, Rubinstein & Ohrimenko, "Are We There Yet? Timing and Floating-Point
    Attacks on Differential Privacy Systems", IEEE S&P 2022: timing a sampler whose loop
    count depends on the noise breaks the privacy of discrete-Laplace sums.
    """
    y = check_finite_array(releases, "releases", ndim=1, allow_empty=True)
    cost = check_finite_array(costs, "costs", ndim=1, allow_empty=True)
    values = check_finite_array(candidates, "candidates", ndim=1)
    if values.size < 2:
        raise ValueError(f"candidates must hold at least two inputs, got {values.size}")
    scale = _check_sensitivity(scale, "scale")
    scores = []
    for c in values:
        score = -np.abs(y - c) / scale
        if profile is not None:
            score = score + profile.log_likelihood(y - c, cost)
        scores.append(score)
    return np.argmax(np.stack(scores), axis=0)


@dataclass(frozen=True)
class TimingAttackResult:
    """Accuracy of :func:`timing_attack` on one mechanism, against the output-only baseline.

    Attributes
    ----------
    accuracy : float
        Fraction of test releases whose input the attack named correctly.
    output_only : float
        The same attacker without the cost, on the same releases.
    bound : float
        The best accuracy ε-DP allows any attack that sees the output: ``e**ε/(1 + e**ε)``.
    size_accuracy : float
        Accuracy of guessing, from the cost alone, whether ``|noise|`` exceeds its training
        median (the attacker predicts the majority answer of the training releases in the
        same cost bin).
    size_chance : float
        The best accuracy without the cost on that question: the test majority's share.
    rho : float
        Spearman's rank correlation of cost and ``|noise|`` over all releases.
    n : int
        Test releases.
    """

    accuracy: float
    output_only: float
    bound: float
    size_accuracy: float
    size_chance: float
    rho: float
    n: int

    @property
    def gain(self) -> float:
        """What the cost added: ``accuracy - output_only`` (0 for a cost that leaks nothing)."""
        return self.accuracy - self.output_only


def measure_timing_attack(mechanisms: Mapping[str, Callable[[float, Any], Any]],
                          candidates: Sequence[float] = (0.0, 1.0), *, scale: float = 2.0,
                          epsilon: float = 0.5, n_train: int = 2000, n_test: int = 2000,
                          rng: Any = None) -> dict[str, TimingAttackResult]:
    """Time releases of several mechanisms, interleaved, and attack each with its own profile.

    Each round calls every mechanism once (in an order that rotates, so machine load falls on
    all of them alike) on a candidate input drawn at random, and times the call with
    :func:`time.perf_counter_ns`. A mechanism may return ``(release, cost)`` to expose its own
    cost (e.g. a loop count, immune to load); otherwise the cost is the measured time. The
    first ``n_train`` rounds, whose inputs the attacker knows, train a
    :class:`TimingProfile`; the next ``n_test`` are attacked.

    Parameters
    ----------
    mechanisms : mapping of name to callable
        ``mechanism(value, rng)`` returning a release (or ``(release, cost)``).
    candidates : sequence of float
        The two (or more) neighbouring inputs.
    scale : float
        Laplace scale ``Δ/ε`` of the mechanisms (for the output part of the score).
    epsilon : float
        Their ε (for the bound).
    n_train, n_test : int
        Rounds (>= 1).
    rng : None or dpkit.rng.RandomSource
        Randomness for the mechanisms and the choice of inputs.

    Returns
    -------
    dict of str to TimingAttackResult

    Raises
    ------
    TypeError, ValueError
        For invalid parameters.
    """
    values = check_finite_array(candidates, "candidates", ndim=1)
    n_train = check_integer(n_train, "n_train", minimum=1)
    n_test = check_integer(n_test, "n_test", minimum=1)
    epsilon = check_epsilon(epsilon)
    source = resolve(rng)
    names = list(mechanisms)
    rounds = n_train + n_test
    secret = source.numpy_generator().integers(0, values.size, size=(rounds, len(names)))
    out = np.empty((rounds, len(names)))
    cost = np.empty((rounds, len(names)))
    for r in range(rounds):
        for offset in range(len(names)):
            j = (r + offset) % len(names)
            value = float(values[secret[r, j]])
            start = time.perf_counter_ns()
            result = mechanisms[names[j]](value, source)
            elapsed = time.perf_counter_ns() - start
            if isinstance(result, tuple):
                out[r, j], cost[r, j] = float(result[0]), float(result[1])
            else:
                out[r, j], cost[r, j] = float(result), float(elapsed)
    results = {}
    bound = float(np.exp(epsilon) / (1 + np.exp(epsilon)))
    train, test = slice(0, n_train), slice(n_train, rounds)
    for j, name in enumerate(names):
        truth = secret[test, j]
        profile = learn_timing_profile(out[train, j] - values[secret[train, j]], cost[train, j])
        guess = timing_attack(out[test, j], cost[test, j], values, scale, profile)
        plain = timing_attack(out[test, j], cost[test, j], values, scale, None)
        noise = out[:, j] - values[secret[:, j]]
        size, chance = _noise_size_guess(noise, cost[:, j], profile.cost_edges, n_train)
        results[name] = TimingAttackResult(accuracy=float(np.mean(guess == truth)),
                                           output_only=float(np.mean(plain == truth)),
                                           bound=bound, size_accuracy=size,
                                           size_chance=chance,
                                           rho=_spearman(cost[:, j], np.abs(noise)),
                                           n=n_test)
    return results


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    return float(stats.spearmanr(a, b).statistic)


def _noise_size_guess(noise: np.ndarray, cost: np.ndarray, edges: np.ndarray,
                      n_train: int) -> tuple[float, float]:
    """Accuracy and chance level of guessing ``|noise| > median`` from the cost bin alone."""
    large = np.abs(noise) > np.median(np.abs(noise[:n_train]))
    column = np.searchsorted(edges, cost, side="right")
    share = np.full(edges.size + 1, float(np.mean(large[:n_train])))
    for b in np.unique(column[:n_train]):
        share[b] = np.mean(large[:n_train][column[:n_train] == b])
    guess = share[column[n_train:]] > 0.5
    test = large[n_train:]
    return float(np.mean(guess == test)), float(max(np.mean(test), 1 - np.mean(test)))
