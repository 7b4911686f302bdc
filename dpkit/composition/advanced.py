"""Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20, Cor 3.21).

The total epsilon of ``k`` mechanisms grows like ``sqrt(k)`` at the price of an extra
``delta_prime``. :func:`advanced` evaluates Thm 3.20 for ``k`` identical mechanisms and
:func:`advanced_heterogeneous` for different epsilons; :func:`advanced_epsilon_per_mechanism`
is Cor. 3.21 and :func:`advanced_epsilon_per_mechanism_exact` the exact inversion of Thm 3.20;
:func:`advanced_crossover` is the ``k`` from which Thm 3.20 beats basic composition
(:func:`~dpkit.composition.sequential`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gmpy2
import numpy as np

from dpkit._checks import check_delta, check_epsilon
from dpkit.composition._rounding import (
    finite,
    first_failing,
    float_down,
    float_up,
    largest_float_below,
    log_inv_up,
    round_down,
    round_up,
    wide_round_up,
)
from dpkit.composition.basic import check_budget, check_mechanisms, check_sequence, sequential

__all__ = [
    "advanced",
    "advanced_crossover",
    "advanced_epsilon_per_mechanism",
    "advanced_epsilon_per_mechanism_exact",
    "advanced_heterogeneous",
]

# advanced_crossover searches no further (near e^ε = 2 the rounded bounds may never cross).
_MAX_CROSSOVER = 2**1024


def advanced(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Advanced composition (Dwork & Roth 2014, Thm 3.20) of ``k`` (epsilon, delta)-DP mechanisms.

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, finite and > 0.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms, >= 1.
    delta_prime : float
        The extra failure probability, in (0, 1).

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
        ``epsilon_total = sqrt(2 k ln(1/delta_prime)) epsilon + k epsilon (e^epsilon - 1)``
        and ``delta_total = k delta + delta_prime``, both rounded up.

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range.
    OverflowError
        If ``epsilon_total`` does not fit a float.

    Notes
    -----
    **Privacy guarantee.** The ``k``-fold adaptive composition of ``(epsilon, delta)``-DP
    mechanisms is ``(epsilon_total, delta_total)``-DP (Dwork, Rothblum & Vadhan 2010,
    Thm III.3; Dwork & Roth 2014, Thm 3.20). The theorem fixes ``epsilon``, ``delta`` and
    ``k`` before the interaction starts. It can be *worse* than
    :func:`~dpkit.composition.sequential` (always when ``epsilon >= ln 2``); see
    :func:`advanced_crossover`.

    References
    ----------
    Dwork, C., Rothblum, G. N., & Vadhan, S. (2010). Boosting and Differential Privacy.
    FOCS 2010. Dwork, C., & Roth, A. (2014), Theorem 3.20.

    Examples
    --------
    >>> round(advanced(0.1, 0.0, 100, 1e-6)[0], 4)
    6.3082
    """
    epsilon, delta, k = check_mechanisms(epsilon, delta, k)
    delta_prime = check_delta(delta_prime, "delta_prime")
    with wide_round_up():
        eps = gmpy2.mpfr(epsilon)
        squares = k * eps * eps
        drift = k * eps * gmpy2.expm1(eps)
        delta_sum = k * gmpy2.mpfr(delta)
    return advanced_from_sums(squares, drift, delta_sum, delta_prime)


def advanced_from_sums(squares: Any, drift: Any, delta_sum: Any,
                        delta_prime: float) -> tuple[float, float]:
    """Thm 3.20 from its sufficient statistics, rounded up: ``sqrt(2 ln(1/δ') Σε²) + Σε(e^ε-1)``
    and ``Σδ + δ'`` (the sums must already be upper bounds)."""
    log_term = log_inv_up(delta_prime)
    with wide_round_up():
        total = gmpy2.sqrt(2 * log_term * gmpy2.mpfr(squares)) + drift
        total_delta = gmpy2.mpfr(delta_sum) + delta_prime
    return finite(float_up(total), "epsilon_total"), float_up(total_delta)


def advanced_heterogeneous(epsilons: Sequence[float], deltas: Sequence[float] | None,
                           delta_prime: float) -> tuple[float, float]:
    """Advanced composition of mechanisms with different epsilons.

    Parameters
    ----------
    epsilons : sequence of float
        Epsilon of each mechanism, each finite and > 0.
    deltas : sequence of float or None
        Delta of each mechanism, each in [0, 1) (``None``: all zero).
    delta_prime : float
        The extra failure probability, in (0, 1).

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
        ``epsilon_total = sqrt(2 ln(1/delta_prime) sum epsilon_i^2)
        + sum epsilon_i (e^epsilon_i - 1)`` and ``delta_total = sum delta_i + delta_prime``,
        rounded up. With equal epsilons this is exactly :func:`advanced`.

    Raises
    ------
    TypeError, ValueError
        As :func:`~dpkit.composition.sequential`, and for ``delta_prime`` outside (0, 1).
    OverflowError
        If ``epsilon_total`` does not fit a float.

    Notes
    -----
    **Privacy guarantee.** The proof of Dwork & Roth (2014), Thm 3.20 goes through step by
    step: the privacy loss of step ``i`` lies in ``[-epsilon_i, epsilon_i]`` and has
    conditional mean at most ``epsilon_i (e^epsilon_i - 1)``, so the Azuma–Hoeffding
    inequality bounds the total loss by ``epsilon_total`` except with probability
    ``delta_prime``. The epsilons must be fixed before the interaction (not chosen from
    the outputs; for that, see Rogers et al. 2016).
    """
    eps = [check_epsilon(e, f"epsilons[{i}]")
           for i, e in enumerate(check_sequence(epsilons, "epsilons"))]
    _, delta_sum = sequential(eps, deltas)
    delta_prime = check_delta(delta_prime, "delta_prime")
    with wide_round_up():
        squares = gmpy2.mpfr(0)
        drift = gmpy2.mpfr(0)
        for e in eps:
            x = gmpy2.mpfr(e)
            squares += x * x
            drift += x * gmpy2.expm1(x)
    return advanced_from_sums(squares, drift, delta_sum, delta_prime)


def advanced_epsilon_per_mechanism(epsilon_total: float, delta_prime: float, k: int) -> float:
    """Per-mechanism epsilon from Dwork & Roth (2014), Cor. 3.21: ``eps'/(2 sqrt(2k ln(1/δ')))``.

    Parameters
    ----------
    epsilon_total : float
        The target total epsilon ``eps'``, finite and > 0.
    delta_prime : float
        The extra failure probability, in (0, 1).
    k : int
        Number of mechanisms, >= 1.

    Returns
    -------
    float
        ``epsilon_total / (2 sqrt(2 k ln(1/delta_prime)))``, rounded down.

    Raises
    ------
    TypeError, ValueError
        If a parameter is out of range, or if Thm 3.20 does not certify the corollary's
        conclusion for these parameters. The corollary's proof needs ``epsilon_total < 1``
        and ``delta_prime <= e^(-1/2)`` (then it always succeeds); this function checks with
        :func:`advanced` that ``k`` mechanisms at the returned epsilon really compose to at
        most ``epsilon_total`` (use :func:`advanced_epsilon_per_mechanism_exact` otherwise).

    Notes
    -----
    **Privacy guarantee.** ``k`` mechanisms that are each ``(epsilon, delta)``-DP with the
    returned ``epsilon`` compose to ``(epsilon_total, k delta + delta_prime)``-DP. The
    corollary wastes budget: the first term of Thm 3.20 uses only half of
    ``epsilon_total``. :func:`advanced_epsilon_per_mechanism_exact` inverts Thm 3.20
    exactly.

    References
    ----------
    Dwork, C., & Roth, A. (2014), Corollary 3.21.
    """
    epsilon_total, delta_prime, k = check_budget(epsilon_total, delta_prime, k)
    log_term = log_inv_up(delta_prime)
    with round_up():
        denominator = 2 * gmpy2.sqrt(2 * k * log_term)
    with round_down():
        epsilon = gmpy2.mpfr(epsilon_total) / denominator
    result = float(epsilon)
    if result <= 0 or not _advanced_fits(result, k, delta_prime, epsilon_total):
        raise ValueError(
            f"Theorem 3.20 does not certify Corollary 3.21 for "
            f"epsilon_total={epsilon_total!r}, delta_prime={delta_prime!r}, k={k}: its proof "
            f"requires epsilon_total < 1 and delta_prime <= e**-0.5 (about 0.607); use "
            f"advanced_epsilon_per_mechanism_exact")
    return result


def _advanced_fits(epsilon: float, k: int, delta_prime: float, epsilon_total: float) -> bool:
    """Whether Thm 3.20 bounds ``k`` mechanisms at ``epsilon`` by ``epsilon_total`` (a total
    beyond the float range exceeds every finite target)."""
    try:
        return advanced(epsilon, 0.0, k, delta_prime)[0] <= epsilon_total
    except OverflowError:
        return False


def advanced_epsilon_per_mechanism_exact(epsilon_total: float, delta_prime: float,
                                         k: int) -> float:
    """The largest per-mechanism epsilon that Thm 3.20 allows: the exact inversion.

    Parameters
    ----------
    epsilon_total : float
        The target total epsilon, finite and > 0 (any size: no ``< 1`` condition).
    delta_prime : float
        The extra failure probability, in (0, 1).
    k : int
        Number of mechanisms, >= 1.

    Returns
    -------
    float
        The largest float ``epsilon`` with ``advanced(epsilon, 0, k, delta_prime)[0] <=
        epsilon_total`` (the left side computed with upward rounding), so the guarantee
        holds exactly. It is about twice the value of Cor. 3.21 for small budgets.

    Raises
    ------
    TypeError, ValueError
        If a parameter is out of range.

    Notes
    -----
    **Privacy guarantee.** ``k`` mechanisms, each ``(epsilon, delta)``-DP with the returned
    ``epsilon``, compose to ``(epsilon_total, k delta + delta_prime)``-DP by
    Dwork & Roth (2014), Thm 3.20. The total of Thm 3.20 is strictly increasing in
    ``epsilon``, so bisection over the floats finds the exact answer.

    Examples
    --------
    Dwork & Roth's Example 3.7 (k = 10,000, delta' = e^-32, total 1):

    >>> 1 / advanced_epsilon_per_mechanism_exact(1.0, math.exp(-32), 10_000)  # doctest: +ELLIPSIS
    812.3...
    """
    epsilon_total, delta_prime, k = check_budget(epsilon_total, delta_prime, k)
    # Thm 3.20's total is >= sqrt(2k ln(1/δ')) ε and >= k ε², so ε is at most either bound;
    # start there and double until the theorem's total exceeds the target (a true bracket).

    def fits(e: float) -> bool:
        return e > 0 and _advanced_fits(e, k, delta_prime, epsilon_total)

    with wide_round_up():  # k may exceed the float range; only a starting point, any rounding
        total, kk = gmpy2.mpfr(epsilon_total), gmpy2.mpfr(k)
        guess = min(total / gmpy2.sqrt(2 * kk * log_inv_up(delta_prime)),
                    gmpy2.sqrt(total / kk))
    low = float(np.nextafter(0.0, 1.0))
    high = max(float_up(guess), low)
    if not fits(low):
        raise ValueError(f"no positive float epsilon satisfies Thm 3.20 with "
                         f"epsilon_total={epsilon_total!r}, delta_prime={delta_prime!r}, k={k}")
    while fits(high):
        low, high = high, 2 * high
    return largest_float_below(fits, low, high)


def advanced_crossover(epsilon: float, delta_prime: float) -> int | None:
    """The smallest ``k`` from which Thm 3.20 gives a smaller total epsilon than ``k epsilon``.

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, finite and > 0.
    delta_prime : float
        Delta' of Thm 3.20, in (0, 1).

    Returns
    -------
    int or None
        The smallest ``k`` with ``advanced(epsilon, 0, k, delta_prime)[0] < k * epsilon``;
        ``None`` if there is none (whenever ``e^epsilon >= 2``, e.g. at ``epsilon = 1``)
        or if the safely rounded bounds certify none below ``2**1024`` (possible only for
        ``epsilon`` extremely close to ``ln 2``).

    Raises
    ------
    TypeError, ValueError
        If a parameter is out of range.

    Notes
    -----
    ``sqrt(2k L) ε + k ε (e^ε - 1) < k ε`` with ``L = ln(1/δ')`` is equivalent to
    ``k > 2L / (2 - e^ε)^2`` when ``e^ε < 2``, and never holds otherwise. The candidate
    from this formula is confirmed with the rounded :func:`advanced` and
    :func:`~dpkit.composition.sequential`.

    Examples
    --------
    >>> advanced_crossover(0.1, 1e-5)
    29
    >>> advanced_crossover(1.0, 1e-5) is None
    True
    """
    epsilon = check_epsilon(epsilon)
    delta_prime = check_delta(delta_prime, "delta_prime")
    if epsilon >= 0.7:  # e^0.7 > 2: never (and math.exp would overflow beyond 709.78)
        return None
    gap = 2 - math.exp(epsilon)
    if gap <= 0:
        return None
    estimate = max(1, math.floor(-2 * math.log(delta_prime) / gap**2))

    def beats(n: int) -> bool:
        with round_down():
            basic = float_down(gmpy2.mpfr(epsilon) * n)  # a lower bound on n·ε: safe
        return _advanced_fits(epsilon, n, delta_prime, math.nextafter(basic, 0.0))

    # ``beats`` is monotone in n (the difference sqrt(2nL)ε - nε(2 - e^ε) has one sign
    # change), so bracket the answer by doubling and bisect: O(log k) evaluations, no walk.
    low, high = 0, estimate
    while not beats(high):
        low, high = high, 2 * high
        if high > _MAX_CROSSOVER:
            return None
    return first_failing(lambda n: not beats(n), low, high)  # the first n that beats
