"""Randomized response: the oldest differentially private mechanism (Warner 1965).

Each person reports their true yes/no answer with probability ``p = e^ε / (1 + e^ε)`` and
the opposite answer otherwise. The ratio of the probabilities of any report under the two
possible true answers is ``p / (1 − p) = e^ε``, so each report is ε-differentially private,
and the population proportion can still be estimated without bias (:func:`debias`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit import rng as _rng
from dpkit._checks import (
    as_array,
    check_epsilon,
    check_finite_array,
    check_integer,
    check_nonempty,
    check_probability,
    refuse_masked,
)
from dpkit.timing import Cost, Deadline, run_padded, warm_up_calls

__all__ = ["MIN_DEBIAS_EPSILON", "debias", "debiased_std", "randomized_response",
           "truth_probability"]

_BITS = 53

#: The worst cost of :func:`randomized_response` (see :mod:`dpkit.timing`;
#: ``benchmarks/deadlines.py``). ``fixed`` covers a scalar's 99.9th percentile at margin 2
#: with a quarter to spare: the work's median is 0.7 U on a quiet core, its 99.9th percentile
#: 2.2 to 4.8 U (two runs of 3,000 calls per input), pauses of the machine rather than work,
#: as long for a short release as for a long one. At 3.0, 3 of 6,000 padded releases
#: overran on a quiet core (0.9 before, which 3% of scalar releases overran at load 2.7;
#: 1.8, which 6 of 1,000 overran on a quiet core).
COST = Cost(fixed=3.0, per_value=0.01, large=0.5, per_vector_value=15.0, per_object=0.05)


def truth_probability(epsilon: float) -> Fraction:
    """Return the probability of answering truthfully, rounded down to a multiple of 2**-53.

    The exact value ``e^ε / (1 + e^ε)`` is irrational; rounding it *down* lowers the ratio
    ``p / (1 − p)``, so the mechanism using the returned value is ε-DP exactly (never
    more than ε). A margin of ``2**-50`` covers the rounding error of evaluating the
    formula in floating point. The grid's cost in ε is below 1e-9 for ε ≤ 5 and below
    0.01 for ε ≤ 30; beyond that ``1 − p`` nears the grid's resolution and the mechanism
    is markedly more private than asked (never less).

    Parameters
    ----------
    epsilon : float
        Privacy-loss parameter, finite and > 0.

    Returns
    -------
    fractions.Fraction
        ``p`` with ``1/2 <= p < 1`` and ``p / (1 - p) <= e^epsilon``.

    Raises
    ------
    ValueError, TypeError
        If ``epsilon`` is not a finite number > 0. An ``epsilon`` float64 cannot hold
        exactly (a ``Fraction``) is rounded down (the safe direction).

    Examples
    --------
    >>> p = truth_probability(math.log(3))   # e^ε = 3: the exact value is 3/4
    >>> p <= Fraction(3, 4) and float(p)
    0.7499999999999991
    """
    epsilon = check_epsilon(epsilon, rounding="down")
    p = 1.0 / (1.0 + math.exp(-epsilon))
    numerator = max(math.floor(p * 2**_BITS) - 2**(_BITS - 50), 2**(_BITS - 1))
    return Fraction(numerator, 2**_BITS)


def randomized_response(answers: Any, epsilon: float, *, rng: _rng.RandomSource | None = None
                        ) -> np.ndarray:
    """Release each yes/no answer by randomized response.

    Parameters
    ----------
    answers : array_like of bool
        The true answers, one per person.
    epsilon : float
        Privacy-loss parameter, finite and > 0.
    rng : RandomSource, optional
        Defaults to the secure source.

    Returns
    -------
    numpy.ndarray of bool
        The reports, same shape as ``answers``.

    Raises
    ------
    ValueError, TypeError
        If ``epsilon`` is invalid or ``answers`` is not a (rectangular) array of bool;
        ``ValueError`` if it is empty (as for every release function: a release needs at
        least one answer).

    Notes
    -----
    Privacy: each report is ε-DP with respect to its own answer (local DP), exactly: the
    truth bit is drawn from 53 random bits against the dyadic threshold of
    :func:`truth_probability`, with no floating-point step. Timing: the same vectorised
    passes whatever the answers, and the call ends at a deadline set by the number of
    answers (:mod:`dpkit.timing`).

    References
    ----------
    Warner (1965); Dwork & Roth (2014), Section 3.2.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> reports = randomized_response([True, False, True], 1.0, rng=seeded(0))
    >>> reports.dtype, reports.shape
    (dtype('bool'), (3,))
    """
    return run_padded(COST, _randomized_response_work, answers, epsilon, rng)


def _randomized_response_work(clock: Deadline, answers: Any, epsilon: Any,
                              rng: Any) -> Any:
    """The work of :func:`randomized_response`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    # Public first (errors raise at once): the parameters, the source, the shape.
    p = truth_probability(epsilon)
    source = _rng.resolve(rng)
    # A list's shape from an object array: NumPy would convert a masked entry to NaN.
    typed = isinstance(answers, np.ndarray)
    shape = as_array(answers, "answers", None if typed else object, nested=False)
    check_nonempty(shape.size, "answers", answers)  # before the dtype: [] is float64
    clock.size(shape.size, "array" if typed else "objects")
    # Which entries are masked, and the dtype of a list's array ([True, 0.5] is float),
    # depend on its elements: padded.
    refuse_masked(answers, "answers")
    array = shape if typed else as_array(answers, "answers", nested=False)
    if array.dtype != np.bool_:
        raise TypeError(f"answers must be an array of bool, got dtype {array.dtype}")
    draws = source.uint64(array.shape) >> np.uint64(64 - _BITS)
    truthful = draws < np.uint64(p.numerator * (2**_BITS // p.denominator))
    reports = np.equal(array, truthful)  # the answer if truthful, else its negation: no branch
    return reports


def debias(yes_fraction: Any, epsilon: float) -> np.ndarray | float:
    """Unbiased estimate of the true proportion of "yes" from the reported proportion.

    If a fraction ``π`` of people would truthfully say yes, the expected reported fraction
    is ``π·p + (1 − π)(1 − p)``; solving gives ``(ŷ − (1 − p)) / (2p − 1)``. The estimate
    may fall outside [0, 1] (it is unbiased, not clipped).

    Parameters
    ----------
    yes_fraction : float or array_like
        Observed fraction of "yes" reports, in [0, 1].
    epsilon : float
        The ε the reports were produced with.

    Raises
    ------
    ValueError, TypeError
        If ``epsilon`` is invalid or below :data:`MIN_DEBIAS_EPSILON` (about ``4e-15``:
        the truth probability then rounds to exactly 1/2 and the reports carry no
        information to debias), or a fraction is outside [0, 1].

    Examples
    --------
    >>> round(debias(0.5, 1.0), 12)   # half the reports say yes: no information either way
    0.5
    """
    p = _informative_truth_probability(epsilon)
    if as_array(yes_fraction, "yes_fraction", dtype=object).ndim == 0:
        y = check_probability(yes_fraction, "yes_fraction")
    else:
        y = check_finite_array(yes_fraction, "yes_fraction")
        if ((y < 0) | (y > 1)).any():
            raise ValueError("yes_fraction must hold numbers in [0, 1], got "
                             f"{y[(y < 0) | (y > 1)][0]!r}")
    return (y - (1 - p)) / (2 * p - 1)


def debiased_std(true_fraction: float, n: int, epsilon: float, *,
                 sampled: bool = False) -> float:
    """Standard deviation of :func:`debias` for ``n`` people with true proportion ``π``.

    Two situations give two answers. By default (``sampled=False``) the ``n`` people are
    fixed and only their coins are random: each report has variance ``p(1 − p)`` whatever
    the person's answer, so the standard deviation is ``sqrt(p(1 − p) / n) / (2p − 1)``,
    the same for every ``π``. This is what privacy costs, and what the book compares with a
    central mechanism, which also sees the true count of these people. With
    ``sampled=True`` the ``n`` people are drawn at random from a population whose share is
    ``π``: the reports are then ``n`` independent draws that say yes with probability
    ``q = π·p + (1 − π)(1 − p)``, and the standard deviation is
    ``sqrt(q(1 − q) / n) / (2p − 1)``, which adds the sampling variance ``π(1 − π) / n``
    (``q(1 − q) = p(1 − p) + π(1 − π)(2p − 1)²``).

    Parameters
    ----------
    true_fraction : float
        The true proportion ``π`` of "yes", in [0, 1] (validated in both cases).
    n : int
        Number of people, >= 1; any positive integer (beyond the float range too).
    epsilon : float
        The ε of the reports, at least :data:`MIN_DEBIAS_EPSILON`.
    sampled : bool, default False
        Whether the people are a random sample of a population (see above).

    Returns
    -------
    float
        The standard deviation of the de-biased share (multiply by ``n`` for a count).

    Raises
    ------
    ValueError, TypeError
        If an argument is out of range, or ``epsilon`` is below :data:`MIN_DEBIAS_EPSILON`
        (as in :func:`debias`).

    Notes
    -----
    Privacy: a function of public parameters only; it releases nothing about the data.

    References
    ----------
    Warner (1965); the introduction's exercise "Two questions, one budget" derives both
    variances.

    Examples
    --------
    >>> round(32_561 * debiased_std(0.2408, 32_561, 1.0))   # Adult's people, at ε = 1
    173
    >>> round(32_561 * debiased_std(0.2408, 32_561, 1.0, sampled=True))
    190
    """
    pi = check_probability(true_fraction, "true_fraction")
    n = check_integer(n, "n", minimum=1)
    if not isinstance(sampled, (bool, np.bool_)):
        raise TypeError(f"sampled must be True or False, got {sampled!r}")
    p = _informative_truth_probability(epsilon)
    q = pi * p + (1 - pi) * (1 - p) if sampled else p
    # sqrt(n) = sqrt(n / 4**shift) * 2**shift keeps an n beyond the float range exact enough
    shift = max(0, n.bit_length() - 1000) // 2
    return math.ldexp(math.sqrt(q * (1 - q)) / math.sqrt(n >> (2 * shift)) / (2 * p - 1),
                      -shift)


def _smallest_informative_epsilon() -> float:
    """The smallest float epsilon whose truth probability exceeds 1/2 (bisection on the
    floats' bit patterns; the truth probability is non-decreasing in epsilon)."""
    low, high = 0, np.float64(1.0).view(np.int64).item()  # p(1.0) > 1/2
    while high - low > 1:
        middle = (low + high) // 2
        if truth_probability(np.int64(middle).view(np.float64).item()) > Fraction(1, 2):
            high = middle
        else:
            low = middle
    return float(np.int64(high).view(np.float64))


#: The smallest epsilon :func:`debias` and :func:`debiased_std` accept: below it the
#: truth probability rounds to exactly 1/2 on its 2**-53 grid, and the reports are
#: independent of the answers (a division by ``2p - 1 = 0``).
MIN_DEBIAS_EPSILON = _smallest_informative_epsilon()


def _informative_truth_probability(epsilon: Any) -> float:
    p = float(truth_probability(epsilon))
    if p == 0.5:
        raise ValueError(f"epsilon must be at least MIN_DEBIAS_EPSILON = "
                         f"{MIN_DEBIAS_EPSILON!r} to debias, got {epsilon!r}: the truth "
                         f"probability rounds to 1/2, so the reports carry no information")
    return p


def _warm_up_bits(value: Any) -> np.ndarray:
    """A warm-up value as bits (a bool array): whether each number is above 0.3."""
    return np.asarray(value, dtype=float) > 0.3


warm_up_calls(_randomized_response_work, randomized_response, 1.0, prepare=_warm_up_bits)
warm_up_calls(_randomized_response_work, randomized_response, 1.0,
              prepare=lambda value: _warm_up_bits(value).tolist())
warm_up_calls(_randomized_response_work, randomized_response, 1.0)  # the refusal path
