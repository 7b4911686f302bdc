"""Basic (sequential) composition: the epsilons add up, and so do the deltas.

:func:`sequential` is basic composition (Dwork et al. 2006; Dwork & Roth 2014, Thm 3.16 and
Thm B.1), the loosest bound in :mod:`dpkit.composition` and the one that needs no extra
``delta_prime``. The argument checks every composition rule shares (a sequence of per-mechanism
parameters, a number ``k`` of mechanisms, the mechanisms' or the budget's parameters) live here
too.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import gmpy2
import numpy as np

from dpkit._checks import check_delta, check_epsilon, check_integer
from dpkit.composition._rounding import exact_context, finite, float_up

__all__ = ["sequential"]


def check_sequence(values: Any, name: str) -> list:
    """Return ``values`` as a non-empty list (any iterable of numbers; not str or a scalar)."""
    if isinstance(values, (str, bytes)) or isinstance(values, numbers.Number):
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r}")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        values = values.tolist()
    if not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r} "
                        f"of type {type(values).__name__}")
    result = list(values)
    if not result:
        raise ValueError(f"{name} must not be empty")
    return result


def check_k(k: Any, maximum: int | None = None) -> int:
    return check_integer(k, "k", minimum=1, maximum=maximum)


def check_mechanisms(epsilon: Any, delta: Any, k: Any,
                     maximum: int | None = None) -> tuple[float, float, int]:
    """Check ``k`` identical ``(epsilon, delta)``-DP mechanisms: epsilon finite and > 0,
    delta in [0, 1), k an integer in [1, maximum]; return them in that order."""
    return check_epsilon(epsilon), check_delta(delta, allow_zero=True), check_k(k, maximum)


def check_budget(epsilon_total: Any, delta_prime: Any, k: Any,
                 maximum: int | None = None) -> tuple[float, float, int]:
    """Check a budget ``(epsilon_total, delta_prime)`` shared by ``k`` mechanisms:
    epsilon_total finite and > 0, delta_prime in (0, 1), k an integer in [1, maximum]."""
    return (check_epsilon(epsilon_total, "epsilon_total"),
            check_delta(delta_prime, "delta_prime"), check_k(k, maximum))


def sequential(epsilons: Sequence[float], deltas: Sequence[float] | None = None
               ) -> tuple[float, float]:
    """Basic (sequential) composition: the epsilons add up, and so do the deltas.

    Parameters
    ----------
    epsilons : sequence of float
        The epsilon of each mechanism, each finite and > 0.
    deltas : sequence of float, optional
        The delta of each mechanism, each in [0, 1); same length as ``epsilons``.
        ``None`` means every mechanism is pure (delta = 0).

    Returns
    -------
    (epsilon, delta) : tuple of float
        ``(sum(epsilons), sum(deltas))``, each computed exactly and rounded up once. A
        delta sum of 1 or more is returned as is (a vacuous guarantee), not clamped.

    Raises
    ------
    TypeError
        If an argument is not a sequence of real numbers.
    ValueError
        If a sequence is empty, an entry is out of range, or the lengths differ.
    OverflowError
        If the sum of epsilons exceeds the largest float.

    Notes
    -----
    **Privacy guarantee.** Running mechanisms ``M_1, ..., M_k`` on the same data, where
    ``M_i`` is ``(epsilon_i, delta_i)``-DP and may be chosen after seeing the outputs of the
    earlier ones, is ``(sum epsilon_i, sum delta_i)``-DP (Dwork et al. 2006; Dwork & Roth
    2014, Thm 3.16 and Thm B.1). This also holds when the parameters themselves are chosen
    adaptively, as long as the sums stay within the budget (Rogers et al. 2016).

    References
    ----------
    Dwork, C., & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
    Theorem 3.16.

    Examples
    --------
    >>> sequential([0.5, 0.25, 0.25])
    (1.0, 0.0)
    """
    eps = [check_epsilon(e, f"epsilons[{i}]")
           for i, e in enumerate(check_sequence(epsilons, "epsilons"))]
    if deltas is None:
        dels = [0.0] * len(eps)
    else:
        dels = [check_delta(d, f"deltas[{i}]", allow_zero=True)
                for i, d in enumerate(check_sequence(deltas, "deltas"))]
        if len(dels) != len(eps):
            raise ValueError(f"deltas must have the same length as epsilons ({len(eps)}), "
                             f"got {len(dels)}")
    with exact_context():  # exact sums, rounded up once at the end
        total_eps = gmpy2.mpfr(0)
        for e in eps:
            total_eps += e
        total_delta = gmpy2.mpfr(0)
        for d in dels:
            total_delta += d
    return finite(float_up(total_eps), "the total epsilon"), float_up(total_delta)
