"""Floating-point attacks on the textbook exponential mechanism (Ilvento 2020, Section 3).

Both attacks build two neighbouring loss vectors ``d`` and ``d'`` (every loss moves by at
most the sensitivity) on which the float code of :func:`dpkit.naive.exponential_mechanism`
makes an outcome *impossible* on one side only:

* :func:`zero_rounding_attack`: on ``d`` the outcome ``o₁`` has loss ``x`` and the others
  ``x + 1``, where ``x`` is the largest loss whose weight ``exp(-ε·x/2)`` is still a
  (subnormal) double; the others' weights underflow to ``0.0`` and ``o₁`` is returned every
  time. On ``d'`` all losses are ``x`` and ``o₁`` is returned once in ``n`` draws. With
  ``ε = 1`` and 100 outcomes: 1.000 against 0.010, a probability ratio of 100 where
  ``e**ε = 2.7`` is allowed.
* :func:`truncated_addition_attack`: with a large ``ε`` (30), ``o₁`` has loss 0 on ``d`` and
  the others ``2 + g``; their normalised weights (about ``5.5e-17``) are absorbed when added
  to the cumulative sum just below 1, so outcomes ``o₂ … o_{n-1}`` have probability exactly
  0, whereas on ``d'`` (losses ``1`` and ``1 + g``, ``g`` chosen so that ``o₁`` has
  probability ``p_neighbour = 0.63``) each has about 3.7e-4. Seeing any of them proves the
  input was ``d'``: an infinite privacy loss. Sampling cannot reveal a 5e-14 probability,
  so the attack also computes both output distributions exactly.

Each attack reports, for the naive mechanism and for
:func:`dpkit.exponential.base2_exponential_mechanism` run on the same inputs, the
empirical rate of the event "output is ``o₁``" on ``d`` and ``d'``, the success rate of the
one-shot distinguisher that guesses ``d`` exactly when it sees ``o₁``, and the exact
privacy loss ``max_i |ln P_d(i)/P_d'(i)|`` (infinite for the naive code, at most the
guarantee for the exact mechanism). The attacks read the outputs only, so the exact
mechanism's runs skip dpkit's timing deadlines (:func:`dpkit.timing.unpadded`), which
changes no output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_epsilon, check_integer, check_probability
from dpkit.exponential import Eta, base2_exponential_mechanism, probabilities
from dpkit.naive.exponential import exponential_mechanism, exponential_mechanism_probabilities
from dpkit.rng import resolve
from dpkit.timing import unpadded

__all__ = [
    "ExponentialAttackInputs",
    "ExponentialAttackResult",
    "truncated_addition_attack",
    "truncated_addition_inputs",
    "zero_rounding_attack",
    "zero_rounding_inputs",
]


@dataclass(frozen=True)
class ExponentialAttackInputs:
    """Two neighbouring inputs for the naive and the exact mechanism.

    Attributes
    ----------
    d, d_prime : numpy.ndarray
        Losses of sensitivity 1 for :func:`dpkit.naive.exponential_mechanism`.
    exact_d, exact_d_prime : numpy.ndarray
        The same losses on the integer grid the exact mechanism uses (``resolution``
        times the naive ones), of sensitivity ``sensitivity``.
    sensitivity : int
        Sensitivity of the exact losses (the grid resolution).
    utility_min, utility_max : float
        Public clamping bounds for the exact mechanism.
    """

    d: np.ndarray
    d_prime: np.ndarray
    exact_d: np.ndarray
    exact_d_prime: np.ndarray
    sensitivity: int
    utility_min: float
    utility_max: float


@dataclass(frozen=True)
class ExponentialAttackResult:
    """What an attack achieved against the naive and against the exact mechanism.

    Attributes
    ----------
    name : str
    epsilon : float
        The privacy level both mechanisms claim.
    exact_epsilon : float
        The guarantee of the exact mechanism's ``η`` (``≤ epsilon``).
    trials : int
        Draws per input and per mechanism.
    naive_rates, exact_rates : tuple of float
        Empirical frequency of "output is o₁" on ``d`` and on ``d'``.
    naive_success, exact_success : float
        Empirical success rate of the distinguisher that answers ``d`` iff it sees ``o₁``
        (``(rate_d + 1 - rate_d') / 2``); an ε-DP mechanism keeps it below
        ``e**ε / (1 + e**ε)``.
    naive_probabilities, exact_probabilities : tuple of Fraction
        Exact probability of "output is o₁" on ``d`` and ``d'``.
    naive_privacy_loss, exact_privacy_loss : float
        Exact ``max_i |ln P_d(i) / P_d'(i)|`` over outcomes (``inf`` if some outcome is
        possible on one input only).
    impossible : int
        Number of outcomes the naive code never returns on one input but may return on the
        other.
    inputs : ExponentialAttackInputs
    """

    name: str
    epsilon: float
    exact_epsilon: float
    trials: int
    naive_rates: tuple[float, float]
    exact_rates: tuple[float, float]
    naive_success: float
    exact_success: float
    naive_probabilities: tuple[Fraction, Fraction]
    exact_probabilities: tuple[Fraction, Fraction]
    naive_privacy_loss: float
    exact_privacy_loss: float
    impossible: int
    inputs: ExponentialAttackInputs

    @property
    def success_bound(self) -> float:
        """``e**ε / (1 + e**ε)``: the best one-shot success an ε-DP mechanism allows."""
        return 1 / (1 + math.exp(-self.epsilon))

    def summary(self) -> str:
        """A small table of the results, for printing."""
        rows = [
            f"{self.name} attack, claimed ε = {self.epsilon:g}, "
            f"{self.inputs.d.size} outcomes, {self.trials} draws per input",
            f"{'':22}{'P̂[o₁ | d]':>12}{'P̂[o₁ | d′]':>12}{'success':>10}{'privacy loss':>14}",
        ]
        for label, rates, success, loss in (
                ("naive (float)", self.naive_rates, self.naive_success,
                 self.naive_privacy_loss),
                ("exact (base 2)", self.exact_rates, self.exact_success,
                 self.exact_privacy_loss)):
            rows.append(f"{label:22}{rates[0]:>12.3f}{rates[1]:>12.3f}{success:>10.3f}"
                        f"{loss:>14.4g}")
        rows.append(f"an ε-DP mechanism keeps success ≤ {self.success_bound:.3f} and "
                    f"privacy loss ≤ {self.epsilon:g}")
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.summary()


# --------------------------------------------------------------------------------------
# Inputs


#: The largest double ``t`` with ``exp(-t) > 0`` (the result is the smallest subnormal).
_UNDERFLOW = 745.1332191019411


def _naive_weight(loss: float, epsilon: float) -> float:
    """The weight the naive code computes for one loss (same expression, same rounding)."""
    return float(np.exp(-epsilon * np.float64(loss) / 2))


def zero_rounding_inputs(epsilon: Any = 1.0, n_outcomes: Any = 100) -> ExponentialAttackInputs:
    """Neighbouring losses on which underflow makes outcomes impossible (see module doc).

    ``x`` is the largest integer loss with ``exp(-ε·x/2) > 0`` in double precision
    (``x = 1490`` for ``ε = 1``, ``2980`` for ``ε = 0.5``); ``d = (x, x+1, …, x+1)`` and
    ``d' = (x, …, x)``.

    Raises
    ------
    TypeError, ValueError
        If ``epsilon`` is not > 0 (or below 1e-10, where ``x`` leaves the exact integer
        range of doubles) or ``n_outcomes`` is not an integer ≥ 2.
    """
    epsilon = check_epsilon(epsilon)
    n = check_integer(n_outcomes, "n_outcomes", minimum=2)
    if epsilon < 1e-10:
        raise ValueError(f"epsilon must be >= 1e-10 for the zero-rounding attack, "
                         f"got {epsilon!r}")
    x = math.floor(2 * _UNDERFLOW / epsilon)    # at most a few steps from the boundary
    while _naive_weight(x + 1, epsilon) > 0:
        x += 1
    while _naive_weight(x, epsilon) == 0:
        x -= 1
    d = np.full(n, x + 1.0)
    d[0] = x
    d_prime = np.full(n, float(x))
    return ExponentialAttackInputs(d, d_prime, d.copy(), d_prime.copy(), 1, 0.0, 2.0 * x)


def truncated_addition_inputs(epsilon: Any = 30.0, n_outcomes: Any = 1000, *,
                              p_neighbour: Any = 0.63,
                              resolution: Any = 1000) -> ExponentialAttackInputs:
    """Neighbouring losses on which absorption makes outcomes impossible (see module doc).

    On ``d'`` the loss of ``o₁`` is 1 and the others' ``1 + g``, with ``g`` a multiple of
    ``1/resolution`` chosen so that ``o₁`` has probability about ``p_neighbour``; on ``d``
    they are 0 and ``2 + g``. The exact mechanism receives the same losses times
    ``resolution`` (integers, sensitivity ``resolution``), so that its randomized rounding
    plays no role and both mechanisms aim at the same distribution.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, or if the parameters do not make the naive code absorb the
        small weights (``ε`` must be about 30 or more).
    """
    epsilon = check_epsilon(epsilon)
    n = check_integer(n_outcomes, "n_outcomes", minimum=3)
    p = check_probability(p_neighbour, "p_neighbour", open_low=True, open_high=True)
    resolution = check_integer(resolution, "resolution", minimum=1)
    g = 2 / epsilon * math.log(p * (n - 1) / (1 - p))
    step = max(round(g * resolution), 1)
    exact_d = np.full(n, float(2 * resolution + step))
    exact_d[0] = 0
    exact_d_prime = np.full(n, float(resolution + step))
    exact_d_prime[0] = resolution
    inputs = ExponentialAttackInputs(exact_d / resolution, exact_d_prime / resolution,
                                     exact_d, exact_d_prime, resolution, 0.0,
                                     3.0 * resolution + step)
    naive = exponential_mechanism_probabilities(inputs.d, epsilon)
    if any(naive[1:-1]):
        raise ValueError(f"epsilon={epsilon!r} with {n} outcomes does not make the naive "
                         f"code absorb the small weights; use epsilon >= 30")
    return inputs


# --------------------------------------------------------------------------------------
# Running an attack


def _privacy_loss(first: tuple[Fraction, ...], second: tuple[Fraction, ...]) -> float:
    """``max_i |ln(first_i / second_i)|`` exactly (``inf`` if one side is 0 alone)."""
    worst = 0.0
    for a, b in set(zip(first, second, strict=True)):     # few distinct pairs
        if (a == 0) != (b == 0):
            return math.inf
        if a:
            ratio = a / b
            worst = max(worst, abs(math.log(ratio.numerator) - math.log(ratio.denominator)))
    return worst


def _run(name: str, inputs: ExponentialAttackInputs, epsilon: float, trials: int,
         rng: Any) -> ExponentialAttackResult:
    source = resolve(rng)
    eta = Eta.from_epsilon(epsilon, inputs.sensitivity)

    def exact(losses: np.ndarray, rng: Any) -> int:
        return base2_exponential_mechanism(losses, eta, utility_min=inputs.utility_min,
                                           utility_max=inputs.utility_max, rng=rng)

    def naive(losses: np.ndarray, rng: Any) -> int:
        return exponential_mechanism(losses, epsilon, rng=rng)

    rates = {}
    # The attack reads the outputs, not their time: the exact mechanism's runs skip its
    # timing deadlines (dpkit.timing), which change its running time, never its outputs.
    with unpadded():
        for label, mechanism, pair in (("naive", naive, (inputs.d, inputs.d_prime)),
                                       ("exact", exact, (inputs.exact_d, inputs.exact_d_prime))):
            rates[label] = tuple(
                sum(mechanism(losses, source) == 0 for _ in range(trials)) / trials
                for losses in pair)
    naive_d = exponential_mechanism_probabilities(inputs.d, epsilon)
    naive_d_prime = exponential_mechanism_probabilities(inputs.d_prime, epsilon)
    exact_d = probabilities(inputs.exact_d, eta, utility_min=inputs.utility_min,
                            utility_max=inputs.utility_max)
    exact_d_prime = probabilities(inputs.exact_d_prime, eta, utility_min=inputs.utility_min,
                                  utility_max=inputs.utility_max)
    impossible = sum((a == 0) != (b == 0) for a, b in zip(naive_d, naive_d_prime, strict=True))
    return ExponentialAttackResult(
        name=name, epsilon=epsilon, exact_epsilon=eta.epsilon(inputs.sensitivity),
        trials=trials, naive_rates=rates["naive"], exact_rates=rates["exact"],
        naive_success=(rates["naive"][0] + 1 - rates["naive"][1]) / 2,
        exact_success=(rates["exact"][0] + 1 - rates["exact"][1]) / 2,
        naive_probabilities=(naive_d[0], naive_d_prime[0]),
        exact_probabilities=(exact_d[0], exact_d_prime[0]),
        naive_privacy_loss=_privacy_loss(naive_d, naive_d_prime),
        exact_privacy_loss=_privacy_loss(exact_d, exact_d_prime),
        impossible=impossible, inputs=inputs)


def zero_rounding_attack(epsilon: Any = 1.0, n_outcomes: Any = 100, *, trials: Any = 1000,
                         rng: Any = None) -> ExponentialAttackResult:
    """Run the zero-rounding (underflow) attack on the naive and the exact mechanism.

    Parameters
    ----------
    epsilon : float
        Claimed privacy level (default 1).
    n_outcomes : int
        Number of outcomes (≥ 2; default 100).
    trials : int
        Draws per input and mechanism (default 1000).
    rng : None or RandomSource

    Returns
    -------
    ExponentialAttackResult
        With ``ε = 1``, 100 outcomes: the naive code returns ``o₁`` with probability 1 on
        ``d`` and 0.01 on ``d'`` (success ≈ 0.995 > 0.731 allowed, privacy loss ∞); the
        exact mechanism with probability 0.0164 and 0.01 (its true distribution).

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (see :func:`zero_rounding_inputs`).

    References
    ----------
    Ilvento (2020), Section 3.
    """
    trials = check_integer(trials, "trials", minimum=1)
    inputs = zero_rounding_inputs(epsilon, n_outcomes)
    return _run("zero-rounding", inputs, check_epsilon(epsilon), trials, rng)


def truncated_addition_attack(epsilon: Any = 30.0, n_outcomes: Any = 1000, *,
                              p_neighbour: Any = 0.63, resolution: Any = 1000,
                              trials: Any = 1000, rng: Any = None) -> ExponentialAttackResult:
    """Run the truncated-addition (absorption) attack on the naive and the exact mechanism.

    Parameters
    ----------
    epsilon : float
        Claimed privacy level (about 30 or more; default 30).
    n_outcomes : int
        Number of outcomes (≥ 3; default 1000).
    p_neighbour : float
        Target probability of ``o₁`` on ``d'`` (default 0.63).
    resolution : int
        Integer grid of the exact mechanism's losses (default 1000).
    trials : int
        Draws per input and mechanism (default 1000).
    rng : None or RandomSource

    Returns
    -------
    ExponentialAttackResult
        With the defaults: the naive code returns ``o₁`` with probability 1.000 on ``d`` and
        0.63 on ``d'``, and ``n - 2`` outcomes possible on ``d'`` have probability exactly 0
        on ``d`` (privacy loss ∞); the exact mechanism's privacy loss stays below 30.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (see :func:`truncated_addition_inputs`).

    References
    ----------
    Ilvento (2020), Section 3.
    """
    trials = check_integer(trials, "trials", minimum=1)
    inputs = truncated_addition_inputs(epsilon, n_outcomes, p_neighbour=p_neighbour,
                                       resolution=resolution)
    return _run("truncated-addition", inputs, check_epsilon(epsilon), trials, rng)
