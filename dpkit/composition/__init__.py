"""Composition: how privacy loss adds up over many releases, and a budget that enforces it.

Four ways to bound the privacy of running ``k`` differentially private mechanisms on the
same data, from the loosest to the tightest:

* :func:`sequential` (basic composition): epsilons and deltas add up.
* :func:`advanced` (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20): the total
  epsilon grows like ``sqrt(k)`` at the price of an extra ``delta_prime``.
* :func:`optimal` (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016): the smallest total
  epsilon that is true for *every* choice of ``k`` adaptively chosen ``(epsilon, delta)``-DP
  mechanisms, computed exactly from the privacy loss of randomized response.
* zCDP (Bun & Steinke 2016): Gaussian mechanisms compose by adding
  ``rho = sensitivity**2 / (2 sigma**2)``; :func:`zcdp_to_dp` converts the sum.

:class:`Accountant` keeps a privacy budget and refuses, *before* anything is released, a
spend that would exceed it.

Modules
-------
Import the public names from this package, which re-exports them all (``__all__``). Each
module imports only modules listed above it, so imports go one way:

* :mod:`dpkit.composition._rounding`: directed-rounding contexts and exact float search.
* :mod:`dpkit.composition.basic`: :func:`sequential`, and the argument checks all share.
* :mod:`dpkit.composition.advanced`: Thm 3.20 and Cor. 3.21, their exact inversion,
  :func:`advanced_crossover`.
* :mod:`dpkit.composition.optimal`: the privacy loss distribution of randomized response,
  :func:`optimal`, :func:`optimal_delta`, :func:`optimal_epsilon_per_mechanism`.
* :mod:`dpkit.composition.zcdp`: :func:`gaussian_rho`, :func:`pure_to_zcdp`,
  :func:`zcdp_to_dp`.
* :mod:`dpkit.composition._ledger`: :class:`Spend`, and what an accountant has spent (its
  history and their running sums).
* :mod:`dpkit.composition._rules`: :class:`Totals`, and how those sums compose under each
  theorem an accountant can enforce.
* :mod:`dpkit.composition.accountant`: :class:`Accountant`, which delegates to the two
  above, and :class:`BudgetExceeded`.

Rounding
--------
Every privacy parameter returned here is rounded in the safe direction: composed epsilons
and deltas *up*, per-mechanism budgets *down*. Closed forms are evaluated in MPFR with
directed rounding (:mod:`gmpy2`, 53-bit precision, each operation rounded the safe way), so
the returned float is a proven bound on the exact real number. :func:`optimal` sums
binomial terms in floating point; its relative error is bounded (see
:func:`optimal`) and covered by a safety margin.

Examples
--------
>>> from dpkit.composition import advanced, sequential
>>> sequential([0.1] * 100)[0] > advanced(0.1, 0.0, 100, 1e-6)[0]
True
"""

from dpkit.composition._ledger import Spend
from dpkit.composition._rules import Totals
from dpkit.composition.accountant import Accountant, BudgetExceeded
from dpkit.composition.advanced import (
    advanced,
    advanced_crossover,
    advanced_epsilon_per_mechanism,
    advanced_epsilon_per_mechanism_exact,
    advanced_heterogeneous,
)
from dpkit.composition.basic import sequential
from dpkit.composition.optimal import MAX_K, optimal, optimal_delta, optimal_epsilon_per_mechanism
from dpkit.composition.zcdp import MAX_RATIO, gaussian_rho, pure_to_zcdp, zcdp_to_dp

__all__ = [
    "MAX_K",
    "MAX_RATIO",
    "Accountant",
    "BudgetExceeded",
    "Spend",
    "Totals",
    "advanced",
    "advanced_crossover",
    "advanced_epsilon_per_mechanism",
    "advanced_epsilon_per_mechanism_exact",
    "advanced_heterogeneous",
    "gaussian_rho",
    "optimal",
    "optimal_delta",
    "optimal_epsilon_per_mechanism",
    "pure_to_zcdp",
    "sequential",
    "zcdp_to_dp",
]
