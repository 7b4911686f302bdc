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

Rounding
--------
Every privacy parameter returned here is rounded in the safe direction: composed epsilons
and deltas *up*, per-mechanism budgets *down*. Closed forms are evaluated in MPFR with
directed rounding (:mod:`gmpy2`, 53-bit precision, each operation rounded the safe way), so
the returned float is a proven bound on the exact real number. :func:`optimal` sums
binomial terms in floating point; its relative error is bounded (see
:func:`optimal`) and covered by a safety margin.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gmpy2
import numpy as np
from scipy.special import gammaln

from dpkit._checks import (
    check_delta,
    check_epsilon,
    check_real,
)
from dpkit.composition._rounding import (
    _down,
    _exact,
    _finite,
    _float_down,
    _float_up,
    _largest_float_below,
    _smallest_float_above,
    _up,
)
from dpkit.composition.advanced import (
    _advanced_from_sums,
    advanced,
    advanced_crossover,
    advanced_epsilon_per_mechanism,
    advanced_epsilon_per_mechanism_exact,
    advanced_heterogeneous,
)
from dpkit.composition.basic import _check_k, sequential
from dpkit.composition.zcdp import MAX_RATIO, gaussian_rho, pure_to_zcdp, zcdp_to_dp
from dpkit.gaussian import delta_for_sigma

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

#: The largest number of mechanisms :func:`optimal` accepts (memory and time grow like k).
MAX_K = 10**6

# Joint supports larger than this are refused by the exact heterogeneous computation.
_MAX_SUPPORT = 2_000_000


# ---------------------------------------------------------------------------------------
# Optimal composition
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _LossDistribution:
    """The privacy loss of composed randomized responses, the worst case for composition.

    Kairouz, Oh & Viswanath (2015, Thm 3.3) show that the k-fold composition of
    epsilon-DP mechanisms is dominated by k randomized responses: each step's loss is
    ``+epsilon`` with probability ``e^eps/(1+e^eps)`` and ``-epsilon`` otherwise. With
    ``j`` of the ``k`` steps at ``-epsilon``, the loss is ``(k - 2j) epsilon`` and
    ``j ~ Binomial(k, 1/(1+e^eps))``. Different epsilons form independent groups.

    Attributes hold the support (losses sorted in decreasing order, each rounded up) and
    the log-probabilities under the first neighbour.
    """

    loss: np.ndarray
    log_p: np.ndarray
    error: float  # bound on the relative error of the evaluated probabilities

    @classmethod
    def from_groups(cls, groups: Sequence[tuple[float, int]]) -> _LossDistribution:
        loss = np.zeros(1)
        log_p = np.zeros(1)
        scale = np.zeros(1)  # sum of |terms| per support point, for the rounding margin
        error = 0.0
        for epsilon, k in groups:
            j = np.arange(k + 1, dtype=np.float64)
            log_q_plus = -math.log1p(math.exp(-epsilon))  # log e^ε/(1+e^ε)
            big = float(gammaln(k + 1.0))
            group_log_p = (big - gammaln(j + 1.0) - gammaln(k - j + 1.0)
                           + k * log_q_plus - j * epsilon)
            group_loss = (k - 2 * j) * epsilon
            # gammaln differences lose up to a few ulps of gammaln(k+1) (measured: <= 1 ulp
            # for k <= 1e5 against mpmath); allow 64 ulps of every large term.
            error += 64 * 2.0**-52 * (big + k * abs(log_q_plus) + k * epsilon + 1.0)
            if loss.size * group_loss.size > _MAX_SUPPORT:
                raise ValueError(f"the joint privacy loss has more than {_MAX_SUPPORT:,} "
                                 f"points; optimal composition of many distinct epsilons "
                                 f"is #P-hard (Murtagh & Vadhan 2016)")
            loss = (loss[:, None] + group_loss[None, :]).ravel()
            scale = (scale[:, None] + np.abs(group_loss)[None, :]).ravel()
            log_p = (log_p[:, None] + group_log_p[None, :]).ravel()
        # Each float product and sum above is within (groups + 1) ulps of the sum of the
        # absolute terms; round every loss up by that much (a larger loss only increases
        # the computed delta, which is the safe direction).
        with np.errstate(over="ignore"):  # a loss rounded up to inf is still safe
            loss = loss + (len(groups) + 2) * 2.0**-52 * scale
        order = np.argsort(-loss, kind="stable")
        return cls(loss[order], log_p[order], min(error, 1e-3))

    def log_delta(self, epsilon_total: float) -> float:
        """``log`` of ``sum_{loss > eps} P(loss) (1 - e^(eps - loss))`` (the hockey stick)."""
        count = int(np.searchsorted(-self.loss, -epsilon_total, side="left"))
        if count == 0:
            return -math.inf
        gap = epsilon_total - self.loss[:count]
        with np.errstate(divide="ignore"):
            terms = self.log_p[:count] + np.log(-np.expm1(gap))
        return _logsumexp(terms)

    def solve(self, delta_prime: float) -> float:
        """Smallest float ``eps >= 0`` whose computed delta is at most ``delta_prime``
        shrunk by the error margin, so that the exact delta is at most ``delta_prime``."""
        target = math.log(delta_prime) + math.log1p(-self.error - 1e-12)
        if self.log_delta(0.0) <= target:
            return 0.0
        # Support points with probability below target - 60 nats (and fewer than e^25 of
        # them) change the sum by a relative 1e-15 at most: drop them for speed. Dropping
        # lowers the computed delta, hence the 1e-12 added to the margin above.
        keep = self.log_p >= target - 60.0
        trimmed = _LossDistribution(self.loss[keep], self.log_p[keep], self.error)
        breaks = trimmed.loss[trimmed.loss > 0]
        # delta(eps) increases as eps falls through the breakpoints (sorted decreasingly).
        lo, hi = 0, len(breaks) - 1  # delta(breaks[0]) == 0 <= target
        if hi == 0 or trimmed.log_delta(float(breaks[hi])) <= target:
            upper, lower = float(breaks[hi]), 0.0
        else:
            while hi - lo > 1:  # invariant: delta(breaks[lo]) <= target < delta(breaks[hi])
                mid = (lo + hi) // 2
                if trimmed.log_delta(float(breaks[mid])) <= target:
                    lo = mid
                else:
                    hi = mid
            upper, lower = float(breaks[lo]), float(breaks[hi])
        if lower == 0.0 and trimmed.log_delta(0.0) <= target:
            return 0.0

        def fits(e: float) -> bool:
            return trimmed.log_delta(e) <= target

        # On (lower, upper] the sum is A - e^eps B over the points with loss >= upper:
        # solve it in closed form, then bracket that guess tightly (the float search below
        # decides; the guess only saves iterations).
        active = trimmed.loss >= upper
        log_a = _logsumexp(trimmed.log_p[active])
        log_b = _logsumexp(trimmed.log_p[active] - trimmed.loss[active])
        ratio = math.exp(target - log_a)
        if ratio < 1:
            guess = log_a + math.log1p(-ratio) - log_b
            width = 1e-9 * max(1.0, abs(guess))
            low, high = max(lower, guess - width), min(upper, guess + width)
            if low < high and fits(high) and (low == lower or not fits(low)):
                lower, upper = low, high
        return _smallest_float_above(fits, lower, upper)


def _logsumexp(values: np.ndarray) -> float:
    """``log(sum(exp(values)))`` computed stably (``-inf`` for no terms)."""
    if values.size == 0:
        return -math.inf
    peak = float(values.max())
    if peak == -math.inf:
        return peak
    return peak + math.log(float(np.sum(np.exp(values - peak))))


def _delta_total_up(deltas: Iterable[tuple[float, int]], delta_prime: float) -> float:
    """``1 - prod (1 - delta_i)^k_i (1 - delta_prime)``, rounded up (exactly ``delta_prime``
    when every ``delta_i`` is 0)."""
    deltas = [(d, k) for d, k in deltas if d != 0]
    if not deltas:
        return delta_prime
    with _down():
        log_keep = gmpy2.log1p(-gmpy2.mpfr(delta_prime))
        for delta, k in deltas:
            log_keep += k * gmpy2.log1p(-gmpy2.mpfr(delta))
        kept = gmpy2.expm1(log_keep)  # lower bound on prod(...) - 1 (negative)
    return float(-kept)


def _delta_prime_down(deltas: Iterable[tuple[float, int]], delta_total: float) -> float:
    """The largest ``delta_prime`` with ``1 - prod(1-delta_i)(1-delta_prime) <= delta_total``
    (rounded down); negative if the deltas alone exceed ``delta_total``."""
    deltas = [(d, k) for d, k in deltas if d != 0]
    if not deltas:
        return delta_total
    with _up():
        log_used = gmpy2.mpfr(0)
        for delta, k in deltas:
            log_used -= k * gmpy2.log1p(-gmpy2.mpfr(delta))  # -ln prod, rounded up
        log_allowed = gmpy2.log1p(-gmpy2.mpfr(delta_total))  # ln(1 - δ_total), rounded up
        # 1 - δ' = (1 - δ_total) / prod  =>  δ' = -expm1(ln(1-δ_total) - ln prod)
        exponent = log_allowed + log_used
        value = gmpy2.expm1(exponent)
    return float(-value)


def optimal(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Optimal composition of ``k`` (epsilon, delta)-DP mechanisms (Kairouz, Oh & Viswanath 2015).

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, finite and > 0.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms, in [1, :data:`MAX_K`].
    delta_prime : float
        The extra failure probability, in (0, 1).

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
        ``epsilon_total`` is the smallest epsilon (rounded up) whose exact privacy profile
        is at most ``delta_prime``, never more than ``k * epsilon``;
        ``delta_total = 1 - (1 - delta)^k (1 - delta_prime)`` (rounded up; it is at most
        ``k delta + delta_prime``).

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range.
    OverflowError
        If ``k * epsilon`` does not fit a float (as in :func:`sequential`): the loss
        distribution's support would not either.

    Notes
    -----
    **Privacy guarantee.** The ``k``-fold adaptive composition of ``(epsilon, delta)``-DP
    mechanisms is ``(epsilon_g, 1 - (1 - delta)^k (1 - delta_g))``-DP exactly when
    (Kairouz, Oh & Viswanath 2015, Thm 3.3; in this continuous form Murtagh & Vadhan 2016,
    Thm 1.5)

    .. math::

        \\delta_g \\ge \\frac{1}{(1+e^\\varepsilon)^k} \\sum_{j=0}^{k} \\binom{k}{j}
        \\max\\{0,\\ e^{(k-j)\\varepsilon} - e^{\\varepsilon_g} e^{j\\varepsilon}\\},

    and no smaller ``epsilon_g`` is true for all such mechanisms: randomized response
    attains it. This is the tightest possible bound; it is never larger than
    :func:`advanced` or :func:`sequential`.

    **Numerics.** The sum is evaluated in log space (log-sum-exp of log-binomial terms, each
    multiplied by ``1 - e^(eps_g - loss)`` through ``expm1``), so nothing overflows for
    ``k`` up to :data:`MAX_K`. The relative error of the evaluated sum is at most 64 ulps of
    ``ln k!`` (about 1.5e-8 at ``k = 10^5``; tested against mpmath); the solver asks for a
    sum below ``delta_prime`` times one minus that bound, and searches over floats, so the
    returned epsilon is an upper bound on the exact optimum, above it by a negligible
    amount (the tests check a relative 1e-6 against mpmath). Terms smaller than
    ``delta_prime * e^-60`` are skipped. Time is O(k) for the setup and O(sqrt(k)) per
    evaluation; the right piece of the piecewise formula is found by bisection over its
    breakpoints and solved in closed form: about 1 ms at ``k = 10^4``, 20 ms at ``k = 10^5``
    (``benchmarks/composition.py``).

    References
    ----------
    Kairouz, P., Oh, S., & Viswanath, P. (2015). The Composition Theorem for Differential
    Privacy. ICML 2015. Murtagh, J., & Vadhan, S. (2016). The Complexity of Computing the
    Optimal Composition of Differential Privacy. TCC 2016.

    Examples
    --------
    >>> round(optimal(0.1, 0.0, 100, 1e-6)[0], 4)
    4.7746
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    k = _check_k(k, MAX_K)
    delta_prime = check_delta(delta_prime, "delta_prime")
    with _up():
        basic = _finite(gmpy2.mpfr(epsilon) * k, "epsilon_total")
    result = _LossDistribution.from_groups([(epsilon, k)]).solve(delta_prime)
    return min(result, float(basic)), _delta_total_up([(delta, k)], delta_prime)


def optimal_delta(epsilon: float, delta: float, k: int, epsilon_total: float) -> float:
    """The exact privacy profile: the smallest delta_total for a given total epsilon.

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, finite and > 0.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms, in [1, :data:`MAX_K`].
    epsilon_total : float
        The total epsilon, finite and >= 0.

    Returns
    -------
    float
        ``1 - (1 - delta)^k (1 - delta_g)`` with ``delta_g`` the sum in :func:`optimal`,
        rounded up (the sum is multiplied by one plus its error bound).

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range.

    Notes
    -----
    **Privacy guarantee.** The ``k``-fold adaptive composition is
    ``(epsilon_total, optimal_delta(...))``-DP, and no smaller delta holds for all
    ``(epsilon, delta)``-DP mechanisms (Murtagh & Vadhan 2016, Thm 1.5).

    Examples
    --------
    >>> optimal_delta(0.1, 0.0, 100, 4.7746) <= 1e-6
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    k = _check_k(k, MAX_K)
    epsilon_total = check_real(epsilon_total, "epsilon_total")
    if epsilon_total < 0:
        raise ValueError(f"epsilon_total must be a finite number >= 0, got {epsilon_total!r}")
    distribution = _LossDistribution.from_groups([(epsilon, k)])
    log_pure = distribution.log_delta(epsilon_total)
    pure = min(1.0, math.exp(log_pure) * (1 + distribution.error + 1e-12)) if (
        log_pure > -math.inf) else 0.0
    pure = float(np.nextafter(pure, 2.0)) if 0 < pure < 1 else pure
    return _delta_total_up([(delta, k)], pure) if pure < 1 else 1.0


def optimal_epsilon_per_mechanism(epsilon_total: float, delta_prime: float, k: int) -> float:
    """The largest per-mechanism epsilon whose optimal ``k``-fold composition is within budget.

    Parameters
    ----------
    epsilon_total : float
        The target total epsilon, finite and > 0.
    delta_prime : float
        The failure probability of the composition, in (0, 1).
    k : int
        Number of mechanisms, in [1, :data:`MAX_K`].

    Returns
    -------
    float
        The largest float ``epsilon`` (found by bisection, rounded down) with
        ``optimal(epsilon, 0, k, delta_prime)[0] <= epsilon_total``.

    Raises
    ------
    TypeError, ValueError
        If a parameter is out of range.

    Notes
    -----
    **Privacy guarantee.** ``k`` pure ``epsilon``-DP mechanisms with the returned epsilon
    compose to ``(epsilon_total, delta_prime)``-DP (Kairouz et al. 2015, Thm 3.3). For
    ``(epsilon, delta)``-DP mechanisms the total delta becomes
    ``1 - (1 - delta)^k (1 - delta_prime)``. The result is never below
    :func:`advanced_epsilon_per_mechanism_exact` nor below ``epsilon_total / k``.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta_prime = check_delta(delta_prime, "delta_prime")
    k = _check_k(k, MAX_K)

    def fits(e: float) -> bool:
        try:
            return e > 0 and optimal(e, 0.0, k, delta_prime)[0] <= epsilon_total
        except OverflowError:  # a total beyond the float range exceeds every target
            return False

    with _down():
        low = float(gmpy2.mpfr(epsilon_total) / k)
    low = max(low, advanced_epsilon_per_mechanism_exact(epsilon_total, delta_prime, k))
    while not fits(low):  # only float rounding can make these bounds fail: shrink a little
        low *= 0.999
    # With k = 1 and a large delta_prime, the answer can exceed epsilon_total: search up.
    high = 2 * low
    for _ in range(64):
        if not fits(high):
            break
        low, high = high, 2 * high
    else:
        return low
    return _largest_float_below(fits, low, high)


# ---------------------------------------------------------------------------------------
# The accountant
# ---------------------------------------------------------------------------------------

_COMPOSITIONS = ("basic", "advanced", "optimal", "zcdp")


@dataclass(frozen=True)
class Spend:
    """One release charged to an :class:`Accountant`.

    Attributes
    ----------
    epsilon, delta : float
        The release's privacy parameters.
    label : str
        What was released (free text for the history).
    rho : float or None
        Its zCDP parameter when known: ``epsilon**2 / 2`` for a pure release,
        ``sensitivity**2 / (2 sigma**2)`` for a Gaussian one, ``None`` otherwise.
    """

    epsilon: float
    delta: float
    label: str = ""
    rho: float | None = None


@dataclass(frozen=True)
class Totals:
    """Total privacy loss of an accountant's history under each composition theorem.

    Each entry is an ``(epsilon, delta)`` pair, or ``None`` when the theorem does not apply
    (advanced and optimal need a budget delta left over for ``delta_prime``; zCDP needs
    every release to have a ``rho`` and a budget delta > 0; optimal composition of many
    distinct epsilons is too costly to compute exactly).
    """

    basic: tuple[float, float]
    advanced: tuple[float, float] | None
    optimal: tuple[float, float] | None
    zcdp: tuple[float, float] | None
    rho: float | None

    def as_dict(self) -> dict[str, tuple[float, float] | None]:
        """The four ``(epsilon, delta)`` totals keyed by method name."""
        return {"basic": self.basic, "advanced": self.advanced, "optimal": self.optimal,
                "zcdp": self.zcdp}


class BudgetExceeded(RuntimeError):
    """Raised by :meth:`Accountant.spend` *instead of* a spend that would exceed the budget.

    Attributes
    ----------
    spend : Spend
        The refused spend.
    total : tuple of float
        The ``(epsilon, delta)`` total the spend would have brought the history to.
    budget : tuple of float
        The accountant's budget.
    """

    def __init__(self, message: str, spend: Spend, total: tuple[float, float],
                 budget: tuple[float, float]) -> None:
        super().__init__(message)
        self.spend = spend
        self.total = total
        self.budget = budget


def _bump(groups: tuple[tuple[float, int], ...], key: float) -> tuple[tuple[float, int], ...]:
    """Add one to the count of ``key`` in a sorted tuple of ``(value, count)`` pairs."""
    counts = dict(groups)
    counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


@dataclass(frozen=True)
class _Ledger:
    """Running sums of a history (each rounded up), so a spend costs O(distinct epsilons)."""

    count: int = 0
    epsilon: Any = 0  # exact sums (wide mpfr), rounded up when read
    delta: Any = 0
    squares: Any = 0  # sum of epsilon_i^2 (exact), for advanced composition
    drift: Any = 0  # sum of epsilon_i (e^epsilon_i - 1), each term rounded up
    rho: Any = 0  # sum of rho_i; None once a release without a rho is charged
    epsilons: tuple[tuple[float, int], ...] = ()  # (epsilon, how many), for optimal
    deltas: tuple[tuple[float, int], ...] = ()

    def add(self, spend: Spend) -> _Ledger:
        with _up():
            x = gmpy2.mpfr(spend.epsilon)
            drift_term = x * gmpy2.expm1(x)
        with _exact():
            x = gmpy2.mpfr(spend.epsilon)
            squares = self.squares + x * x
            drift = self.drift + drift_term
            epsilon = self.epsilon + x
            delta = self.delta + gmpy2.mpfr(spend.delta)
            rho = (None if self.rho is None or spend.rho is None
                   else self.rho + gmpy2.mpfr(spend.rho))
        return _Ledger(self.count + 1, epsilon, delta, squares, drift, rho,
                       _bump(self.epsilons, spend.epsilon), _bump(self.deltas, spend.delta))

    def basic(self) -> tuple[float, float]:
        return _finite(_float_up(self.epsilon), "the total epsilon"), _float_up(self.delta)

    def advanced(self, budget_delta: float) -> tuple[float, float] | None:
        """Heterogeneous Thm 3.20 with the spare budget delta as delta' (capped by basic)."""
        with _exact():
            spare = _float_down(budget_delta - self.delta)
        if spare <= 0:
            return None
        total = _advanced_from_sums(_float_up(self.squares), _float_up(self.drift),
                                    _float_up(self.delta), spare)
        return min(total, self.basic())

    def optimal(self, budget_delta: float) -> tuple[float, float] | None:
        """Exact optimal composition with the spare budget as delta' (capped by basic)."""
        delta_prime = _delta_prime_down(self.deltas, budget_delta)
        if delta_prime <= 0:
            return None
        try:
            distribution = _LossDistribution.from_groups(self.epsilons)
        except ValueError:  # too many distinct epsilons to compute exactly
            return None
        epsilon = distribution.solve(delta_prime)
        if epsilon >= self.basic()[0]:
            return self.basic()
        return epsilon, _delta_total_up(self.deltas, delta_prime)

    def zcdp(self, budget_delta: float) -> tuple[float, float] | None:
        if self.rho is None or budget_delta == 0:
            return None
        return zcdp_to_dp(_float_up(self.rho), budget_delta), budget_delta

    def totals(self, budget_delta: float) -> Totals:
        rho = None if self.rho is None else _float_up(self.rho)
        return Totals(self.basic(), self.advanced(budget_delta), self.optimal(budget_delta),
                      self.zcdp(budget_delta), rho)


class Accountant:
    """A privacy budget that refuses, before any release, a spend that would exceed it.

    Parameters
    ----------
    epsilon : float
        The total epsilon budget, finite and > 0. An exact budget float64 cannot hold (a
        ``Fraction``) is rounded down, and every spend's epsilon and delta rounded up, so
        rounding never favours the spender (three spends of ``Fraction(1, 3)`` do not fit
        in a budget of 1: each is recorded as the float just above 1/3).
    delta : float, optional
        The total delta budget, in [0, 1). Advanced, optimal and zCDP accounting need a
        delta > 0 (their ``delta_prime`` is the budget delta the releases leave over).
    composition : {"basic", "advanced", "optimal", "zcdp"}
        The theorem that decides whether a spend fits (all four totals are always reported
        by :meth:`totals`):

        ``"basic"`` (default)
            epsilons and deltas add up. Safe even when the analyst picks each release's
            parameters after seeing earlier outputs (Rogers et al. 2016).
        ``"advanced"`` / ``"optimal"``
            the smaller of the basic total and Thm 3.20 (heterogeneous form, see
            :func:`advanced_heterogeneous`) or the exact optimal composition, with all spare
            budget delta as ``delta_prime``. **These theorems assume the sequence of
            privacy parameters is fixed in advance** (it may not depend on the outputs).
        ``"zcdp"``
            the rhos add up and the sum is converted with :func:`zcdp_to_dp` at the budget
            delta; every release must have a rho (pure or Gaussian). A rho filter stays
            valid under adaptive parameter choice (Feldman & Zrnic 2021).

    Raises
    ------
    TypeError, ValueError
        If a parameter is of the wrong type or out of range, or ``composition`` needs a
        delta > 0 and none is given.

    Notes
    -----
    **Privacy guarantee.** If every release charged is ``(epsilon_i, delta_i)``-DP (and, for
    Gaussian releases, ``rho_i``-zCDP), the whole history is ``(epsilon, delta)``-DP for
    the budget ``(epsilon, delta)``, under the assumptions of the chosen theorem stated above.
    A refused spend raises :class:`BudgetExceeded`, leaves the history unchanged and must
    not be released.

    Examples
    --------
    >>> budget = Accountant(1.0)
    >>> budget.spend(0.6, label="mean age")
    Spend(epsilon=0.6, delta=0.0, label='mean age', rho=0.18)
    >>> try:
    ...     budget.spend(0.6, label="count")
    ... except BudgetExceeded as refused:
    ...     print("refused; the total would have been", refused.total)
    refused; the total would have been (1.2, 0.0)
    >>> len(budget.history)
    1
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *,
                 composition: str = "basic") -> None:
        # An exact budget (a Fraction) is rounded down, a spend rounded up (_make_spend):
        # never in the spender's favour.
        self._epsilon = check_epsilon(epsilon, rounding="down")
        self._delta = check_delta(delta, allow_zero=True, rounding="down")
        if composition not in _COMPOSITIONS:
            raise ValueError(f"composition must be one of {_COMPOSITIONS}, got {composition!r}")
        if composition != "basic" and self._delta == 0:
            raise ValueError(f"composition={composition!r} needs a budget delta > 0 (its "
                             f"delta_prime comes from the budget), got delta=0")
        self._composition = composition
        self._history: list[Spend] = []
        self._ledger = _Ledger()

    # -- state ----------------------------------------------------------------------------
    @property
    def budget(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` budget."""
        return self._epsilon, self._delta

    @property
    def composition(self) -> str:
        """The theorem deciding whether a spend fits."""
        return self._composition

    @property
    def history(self) -> tuple[Spend, ...]:
        """Every accepted spend, in order (an immutable copy)."""
        return tuple(self._history)

    def totals(self) -> Totals | None:
        """The history's totals under basic, advanced, optimal and zCDP accounting.

        Advanced and optimal use all the budget delta the releases leave over as
        ``delta_prime``; zCDP converts at the budget delta. ``None`` if nothing was spent.
        """
        if not self._history:
            return None
        return self._ledger.totals(self._delta)

    @property
    def spent(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` spent so far under :attr:`composition` (``(0, 0)`` at first)."""
        if not self._history:
            return 0.0, 0.0
        return self._total(self._ledger)

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget minus :attr:`spent`, rounded down, for epsilon and delta.

        Under basic composition the next spend fits exactly when it is within
        ``remaining``; under the other theorems the total is not additive, so use
        :meth:`can_spend` to test a particular spend.
        """
        spent_eps, spent_delta = self.spent
        with _exact():
            eps = _float_down(self._epsilon - gmpy2.mpfr(spent_eps))
            delta = _float_down(self._delta - gmpy2.mpfr(spent_delta))
        return max(eps, 0.0), max(delta, 0.0)

    # -- spending -------------------------------------------------------------------------
    def _total(self, ledger: _Ledger) -> tuple[float, float]:
        """The total of ``ledger`` under the accountant's theorem."""
        if self._composition == "zcdp":
            total = ledger.zcdp(self._delta)
            assert total is not None  # every spend has a rho (checked in _make_spend)
            return total
        candidates = [ledger.basic()]
        if self._composition == "advanced":
            candidates.append(ledger.advanced(self._delta))
        elif self._composition == "optimal":
            candidates.append(ledger.optimal(self._delta))
        fitting = [c for c in candidates if c is not None and c[1] <= self._delta]
        return min(fitting) if fitting else candidates[0]

    def _fits(self, total: tuple[float, float]) -> bool:
        return total[0] <= self._epsilon and total[1] <= self._delta

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether a release with these parameters would fit in the budget now.

        Raises
        ------
        TypeError, ValueError
            If a parameter is of the wrong type or out of range.
        """
        spend = self._make_spend(epsilon, delta, "", None)
        return self._fits(self._total(self._ledger.add(spend)))

    def _make_spend(self, epsilon: Any, delta: Any, label: Any, rho: float | None) -> Spend:
        epsilon = check_epsilon(epsilon, rounding="up")
        delta = check_delta(delta, allow_zero=True, rounding="up")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {label!r} of type {type(label).__name__}")
        if rho is None and delta == 0:
            rho = pure_to_zcdp(epsilon)
        if self._composition == "zcdp" and rho is None:
            raise ValueError(f"composition='zcdp' accepts pure releases (delta=0) and Gaussian "
                             f"ones (spend_gaussian); got delta={delta!r} with no rho")
        return Spend(epsilon, delta, label, rho)

    def _charge(self, spend: Spend) -> Spend:
        ledger = self._ledger.add(spend)
        total = self._total(ledger)
        if not self._fits(total):
            raise BudgetExceeded(
                f"spending epsilon={spend.epsilon:g}, delta={spend.delta:g} "
                f"({spend.label!r}) would bring the total to epsilon={total[0]!r}, "
                f"delta={total[1]:.3g} under {self._composition} composition, over the budget "
                f"epsilon={self._epsilon:g}, delta={self._delta:g}; nothing was spent",
                spend, total, self.budget)
        self._history.append(spend)
        self._ledger = ledger
        return spend

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> Spend:
        """Charge a release of an ``(epsilon, delta)``-DP mechanism, or refuse it.

        Call this *before* releasing: if it raises, do not release.

        Parameters
        ----------
        epsilon : float
            The release's epsilon, finite and > 0.
        delta : float, optional
            The release's delta, in [0, 1).
        label : str, optional
            A description kept in :attr:`history`.

        Returns
        -------
        Spend
            The record added to the history.

        Raises
        ------
        BudgetExceeded
            If the spend would exceed the budget; the history is left unchanged.
        TypeError, ValueError
            If a parameter is of the wrong type or out of range (the history is unchanged),
            or under ``composition="zcdp"`` for a release with ``delta > 0``.
        """
        return self._charge(self._make_spend(epsilon, delta, label, None))

    def spend_gaussian(self, sigma: float, sensitivity: float, epsilon: float, delta: float,
                       label: str = "") -> Spend:
        """Charge a Gaussian release: ``(epsilon, delta)`` for basic/advanced/optimal
        accounting, and ``rho = sensitivity**2 / (2 sigma**2)`` for zCDP.

        Parameters
        ----------
        sigma : float
            The noise standard deviation, finite and > 0.
        sensitivity : float
            The query's L2 sensitivity, finite and > 0.
        epsilon, delta : float
            The ``(epsilon, delta)``-DP guarantee the noise was calibrated for (for example
            with ``dpkit.gaussian.analytic_sigma``); ``delta`` in (0, 1).
        label : str, optional
            A description kept in :attr:`history`.

        Returns
        -------
        Spend

        Raises
        ------
        BudgetExceeded
            If the spend would exceed the budget; the history is left unchanged.
        TypeError, ValueError
            If a parameter is out of range, or if ``sigma`` is too small for the claimed
            ``(epsilon, delta)``: the exact Gaussian privacy profile (Balle & Wang 2018,
            Thm 8) must give at most ``delta`` at ``epsilon``.
        """
        rho = gaussian_rho(sensitivity, sigma)
        epsilon = check_epsilon(epsilon, rounding="up")
        delta = check_delta(delta, rounding="up")
        actual = delta_for_sigma(sigma, sensitivity, epsilon)
        if actual > delta:
            raise ValueError(f"sigma={sigma!r} is too small for (epsilon={epsilon!r}, "
                             f"delta={delta!r}) at sensitivity={sensitivity!r}: the Gaussian "
                             f"mechanism's delta at that epsilon is {actual:.3g}")
        return self._charge(self._make_spend(epsilon, delta, label, rho))

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (f"Accountant(budget=(epsilon={self._epsilon:g}, delta={self._delta:g}), "
                f"composition={self._composition!r}, spent=(epsilon={eps:.6g}, "
                f"delta={delta:.3g}), releases={len(self._history)})")
