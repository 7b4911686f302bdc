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
mechanism's outputs are exact grid points unrelated to the textbook sampler's image, its
"decisions" are right about half of the time, and its privacy guarantee bounds *every*
attack's accuracy by ``e**ε / (1 + e**ε)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit._checks import check_epsilon, check_finite_array, check_integer, check_real
from dpkit._checks import check_sensitivity as _check_sensitivity
from dpkit.naive.laplace import textbook_laplace_noise
from dpkit.rng import resolve

__all__ = [
    "LSBAttackResult",
    "ReachableOnly",
    "laplace_lsb_attack",
    "measure_lsb_attack",
    "textbook_reachable",
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
    privacy", Section 3. Against the textbook sampler a decision is always correct; against
    :func:`dpkit.laplace.laplace_mechanism` the attack's decisions are no better than chance.
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

    def __str__(self) -> str:
        return (f"decided {self.decided:.1%} of releases, {self.correct_when_decided:.1%} of "
                f"decisions correct, overall accuracy {self.accuracy:.1%} "
                f"(ε-DP allows at most {self.bound:.1%})")


def measure_lsb_attack(mechanism: Callable[..., Any], sensitivity: float = 1.0,
                       epsilon: float = 1.0, *, n: int = 2000, rng: Any = None) -> LSBAttackResult:
    """Run ``mechanism`` ``n`` times on input 0 and on input 1, attack every release, score it.

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
