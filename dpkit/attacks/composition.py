"""Attacks that only composition can stop: averaging repeated answers, and the k-fold
composition experiment of Dwork & Roth (2014, Section 3.5.2) as a simulation.

Nothing here breaks a mechanism. Each release is as private as promised; the attacker simply
asks again. The only defence is to count the privacy spent (:class:`dpkit.composition.Accountant`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, special

from dpkit._checks import check_epsilon, check_finite_array, check_integer, check_sensitivity
from dpkit.composition import BudgetExceeded
from dpkit.naive.laplace import laplace_mechanism as naive_laplace_mechanism
from dpkit.rng import resolve
from dpkit.timing import unpadded

__all__ = [
    "AveragingResult",
    "averaging_attack",
    "averaging_attack_success_rate",
    "averaging_success_probability",
    "composition_experiment",
    "simulate_privacy_loss",
]


@dataclass(frozen=True)
class AveragingResult:
    """The outcome of :func:`averaging_attack`.

    Attributes
    ----------
    estimate : int
        The mean of the answers, rounded to the nearest integer (the attacker's guess).
    answers : numpy.ndarray
        Every answer obtained, in order.
    refused : bool
        Whether the attack stopped early because a query was refused
        (:class:`dpkit.composition.BudgetExceeded`).
    """

    estimate: int
    answers: np.ndarray
    refused: bool

    @property
    def queries(self) -> int:
        """How many answers the attacker obtained."""
        return int(self.answers.size)


def averaging_attack(query: Callable[[], float], n_queries: int) -> AveragingResult:
    """Ask the same noisy count ``n_queries`` times and round the mean of the answers.

    Parameters
    ----------
    query : callable
        ``query()`` returns one noisy answer to the same count (for example
        ``lambda: laplace_mechanism(count, 1, 0.5)``). If it raises
        :class:`dpkit.composition.BudgetExceeded` (an accountant refusing the release) the
        attack stops with the answers it has.
    n_queries : int
        How many times to ask, >= 1.

    Returns
    -------
    AveragingResult

    Raises
    ------
    TypeError, ValueError
        If ``n_queries`` is not an integer >= 1, or an answer is not a finite number.
    BudgetExceeded
        Never: a refusal ends the attack. (If the very first query is refused the estimate
        is 0 and ``answers`` is empty.)

    Notes
    -----
    With noise of scale ``b`` the mean of ``k`` answers has standard deviation
    ``b sqrt(2 / k)``, so the rounded mean is the exact count once that is well below 1/2
    (:func:`averaging_success_probability` gives the exact probability). Each answer is
    ``epsilon``-DP; for the ``k`` answers together basic composition certifies only
    ``k epsilon``, and the attack shows that the loss of privacy is real.
    """
    n_queries = check_integer(n_queries, "n_queries", minimum=1)
    answers: list[float] = []
    refused = False
    for _ in range(n_queries):
        try:
            answers.append(query())
        except BudgetExceeded:
            refused = True
            break
    values = check_finite_array(answers, "answers", ndim=1, allow_empty=True)
    estimate = int(np.rint(values.mean())) if values.size else 0
    return AveragingResult(estimate, values, refused)


def averaging_success_probability(epsilon: float, n_queries: int,
                                  sensitivity: float = 1.0) -> float:
    """Probability that the rounded mean of ``n_queries`` Laplace answers is the exact count.

    Parameters
    ----------
    epsilon : float
        Epsilon of each answer (finite, > 0).
    n_queries : int
        Number of answers averaged, in [1, 10**6].
    sensitivity : float, optional
        Sensitivity of the count (1 for a count), finite and > 0.

    Returns
    -------
    float
        ``P(|S| < n/2)`` where ``S`` is the sum of ``n`` independent Laplace(``b``) noises,
        ``b = sensitivity / epsilon``; computed as ``S = G1 - G2`` with ``G1, G2`` independent
        Gamma(``n``, ``b``) by numerical integration (absolute error below 1e-8).

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range.
    """
    epsilon = check_epsilon(epsilon)
    n = check_integer(n_queries, "n_queries", minimum=1, maximum=10**6)
    scale = check_sensitivity(sensitivity) / epsilon
    if n == 1:  # one Laplace: P(|Z| < 1/2) in closed form
        return -math.expm1(-0.5 / scale)
    half_width = n / 2
    spread = math.sqrt(n) * scale
    low, high = max(0.0, n * scale - 40 * spread), n * scale + 40 * spread
    log_norm = special.gammaln(n) + n * math.log(scale)

    # The Gamma(n, scale) density and distribution function, from scipy.special directly
    # (the frozen scipy.stats object costs ~50 µs per scalar call inside quad).
    def integrand(g: float) -> float:
        density = math.exp((n - 1) * math.log(g) - g / scale - log_norm) if g > 0 else 0.0
        upper = special.gammainc(n, (g + half_width) / scale)
        lower = special.gammainc(n, max(g - half_width, 0.0) / scale)
        return density * (upper - lower)

    value, _ = integrate.quad(integrand, low, high, points=[n * scale], limit=200,
                              epsabs=1e-10)
    return min(1.0, max(0.0, value))


def averaging_attack_success_rate(true_count: int, epsilon: float, n_queries: int, *,
                                  trials: int = 1000, sensitivity: float = 1.0,
                                  rng: Any = None) -> float:
    """Fraction of simulated attacks that recover ``true_count`` exactly.

    Parameters
    ----------
    true_count : int
        The count being attacked.
    epsilon : float
        Epsilon of each answer (finite, > 0).
    n_queries : int
        Answers per attack, in [1, 10**5].
    trials : int, optional
        Number of simulated attacks, in [1, 10**5].
    sensitivity : float, optional
        Sensitivity of the count, finite and > 0.
    rng : None or dpkit.rng.RandomSource
        Randomness (``None``: the secure default).

    Returns
    -------
    float
        The fraction of trials whose rounded mean equals ``true_count``.

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range, or
        ``trials * n_queries > 10**7``.

    Notes
    -----
    For speed the answers come from :func:`dpkit.naive.laplace_mechanism` (vectorised
    floating-point Laplace). Its floating-point flaws are irrelevant here: the attack only
    averages, and the safe mechanism gives the same distribution up to rounding.
    """
    true_count = check_integer(true_count, "true_count")
    epsilon = check_epsilon(epsilon)
    n = check_integer(n_queries, "n_queries", minimum=1, maximum=10**5)
    trials = check_integer(trials, "trials", minimum=1, maximum=10**5)
    if n * trials > 10**7:
        raise ValueError(f"trials * n_queries must be <= 10**7, got {trials} * {n}")
    answers = naive_laplace_mechanism(np.full((trials, n), float(true_count)), sensitivity,
                                      epsilon, rng=resolve(rng))
    estimates = np.rint(answers.mean(axis=1))
    return float(np.mean(estimates == true_count))


def composition_experiment(choose: Callable[[tuple], tuple[Any, Any, Callable]], k: int,
                           world: int, *, rng: Any = None) -> tuple:
    """Run the ``k``-fold adaptive composition experiment in ``world`` 0 or 1 (Dwork & Roth
    2014, §3.5.2, who call it experiment *b*).

    In each round the adversary ``choose`` sees the outputs so far and returns two
    neighbouring databases ``(x0, x1)`` and a mechanism; the mechanism runs on ``x0`` in world
    0 and on ``x1`` in world 1.
    With ``x0`` = the data with Bob and ``x1`` = without him, composition theorems bound how
    well any adversary can tell world 0 from world 1.

    Parameters
    ----------
    choose : callable
        ``choose(view) -> (x0, x1, mechanism)`` with ``view`` the tuple of outputs so far
        and ``mechanism(x, rng) -> output``.
    k : int
        Number of rounds, >= 1.
    world : int
        Which database is used: 0 or 1.
    rng : None or dpkit.rng.RandomSource
        Randomness passed to each mechanism.

    Returns
    -------
    tuple
        The adversary's view: the ``k`` outputs.

    Raises
    ------
    TypeError, ValueError
        If ``k`` or ``world`` is out of range.

    Notes
    -----
    The experiment is a simulation: dpkit's releases inside it skip their timing deadlines
    (:func:`dpkit.timing.unpadded`), which changes no output.
    """
    k = check_integer(k, "k", minimum=1)
    world = check_integer(world, "world", minimum=0, maximum=1)
    source = resolve(rng)
    view: list[Any] = []
    with unpadded():
        for _ in range(k):
            x0, x1, mechanism = choose(tuple(view))
            view.append(mechanism(x1 if world else x0, source))
    return tuple(view)


_LOSS_MECHANISMS = ("laplace", "randomized_response")


def simulate_privacy_loss(epsilon: float, k: int, *, mechanism: str = "laplace",
                          trials: int = 10_000, rng: Any = None) -> np.ndarray:
    """Simulate the total privacy loss of ``k`` composed ``epsilon``-DP releases about Bob.

    The privacy loss of an output ``y`` is ``ln(P[M(x0) = y] / P[M(x1) = y])`` with ``x0``
    the data with Bob, ``x1`` without; it is drawn under ``x0`` (world 0).

    Parameters
    ----------
    epsilon : float
        Epsilon of each release (finite, > 0).
    k : int
        Number of releases, in [1, 10**5].
    mechanism : {"laplace", "randomized_response"}
        ``"laplace"``: a count answered with Laplace(1/epsilon) noise, loss
        ``epsilon (|z + 1| - |z|)`` for noise ``z``. ``"randomized_response"``: Bob's bit
        kept with probability ``e^epsilon / (1 + e^epsilon)``, loss ``±epsilon``; the worst
        case, whose loss distribution is exactly the one of :func:`dpkit.composition.optimal`.
    trials : int, optional
        Number of simulated experiments, in [1, 10**6]; ``trials * k <= 10**7``.
    rng : None or dpkit.rng.RandomSource
        Randomness (simulation only: floats from :meth:`~dpkit.rng.RandomSource.numpy_generator`).

    Returns
    -------
    numpy.ndarray
        ``trials`` total privacy losses.

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range.
    """
    epsilon = check_epsilon(epsilon)
    k = check_integer(k, "k", minimum=1, maximum=10**5)
    trials = check_integer(trials, "trials", minimum=1, maximum=10**6)
    if mechanism not in _LOSS_MECHANISMS:
        raise ValueError(f"mechanism must be one of {_LOSS_MECHANISMS}, got {mechanism!r}")
    if trials * k > 10**7:
        raise ValueError(f"trials * k must be <= 10**7, got {trials} * {k}")
    generator = resolve(rng).numpy_generator()
    if mechanism == "randomized_response":
        flips = generator.binomial(k, 1 / (1 + math.exp(epsilon)), size=trials)
        return (k - 2 * flips) * epsilon
    noise = generator.laplace(0.0, 1 / epsilon, size=(trials, k))
    return (epsilon * (np.abs(noise + 1) - np.abs(noise))).sum(axis=1)

