"""Optimal composition (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016).

The smallest total epsilon that is true for *every* choice of ``k`` adaptively chosen
``(epsilon, delta)``-DP mechanisms, computed exactly from the privacy loss of randomized
response (:class:`LossDistribution`, the worst case for composition): :func:`optimal`, the
exact privacy profile :func:`optimal_delta`, and the per-mechanism budget
:func:`optimal_epsilon_per_mechanism`. The binomial terms are summed in floating point; their
relative error is bounded (see :func:`optimal`) and covered by a safety margin.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import gmpy2
import numpy as np
from scipy.special import gammaln

from dpkit._checks import check_delta, check_real
from dpkit.composition._rounding import (
    finite,
    first_failing,
    largest_float_below,
    round_down,
    round_up,
    smallest_float_above,
)
from dpkit.composition.advanced import advanced_epsilon_per_mechanism_exact
from dpkit.composition.basic import check_budget, check_mechanisms

__all__ = ["MAX_K", "optimal", "optimal_delta", "optimal_epsilon_per_mechanism"]

#: The largest number of mechanisms :func:`optimal` accepts (memory and time grow like k).
MAX_K = 10**6

# Joint supports larger than this are refused by the exact heterogeneous computation.
_MAX_SUPPORT = 2_000_000


@dataclass(frozen=True)
class LossDistribution:
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
    def from_groups(cls, groups: Sequence[tuple[float, int]]) -> LossDistribution:
        loss = np.zeros(1)
        log_p = np.zeros(1)
        scale = np.zeros(1)  # sum of |terms| per support point, for the rounding margin
        error = 0.0
        for epsilon, k in groups:
            j = np.arange(k + 1, dtype=np.float64)
            log_q_plus = -math.log1p(math.exp(-epsilon))  # log e^ε/(1+e^ε)
            big = float(gammaln(k + 1.0))
            with np.errstate(over="ignore"):  # k·ε beyond the floats: losses ±inf, in order
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
            with np.errstate(invalid="ignore"):  # inf - inf: see below
                loss = (loss[:, None] + group_loss[None, :]).ravel()
            loss[np.isnan(loss)] = -np.inf  # +inf and -inf losses together: probability 0
            scale = (scale[:, None] + np.abs(group_loss)[None, :]).ravel()
            log_p = (log_p[:, None] + group_log_p[None, :]).ravel()
        # Each float product and sum above is within (groups + 1) ulps of the sum of the
        # absolute terms; round every loss up by that much (a larger loss only increases
        # the computed delta, which is the safe direction).
        with np.errstate(over="ignore", invalid="ignore"):  # inf up is still safe
            margin = (len(groups) + 2) * 2.0**-52 * scale
            loss = np.where(np.isneginf(loss), loss, loss + margin)  # -inf + inf is not a loss
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
        trimmed = LossDistribution(self.loss[keep], self.log_p[keep], self.error)
        breaks = trimmed.loss[trimmed.loss > 0]
        # delta(eps) increases as eps falls through the breakpoints (sorted decreasingly).
        lo, hi = 0, len(breaks) - 1  # delta(breaks[0]) == 0 <= target
        if hi == 0 or trimmed.log_delta(float(breaks[hi])) <= target:
            upper, lower = float(breaks[hi]), 0.0
        else:
            # The first breakpoint whose delta exceeds the target, and the one before it.
            hi = first_failing(lambda i: trimmed.log_delta(float(breaks[i])) <= target, lo, hi)
            lo = hi - 1
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
        return smallest_float_above(fits, lower, upper)


def _logsumexp(values: np.ndarray) -> float:
    """``log(sum(exp(values)))`` computed stably (``-inf`` for no terms)."""
    if values.size == 0:
        return -math.inf
    peak = float(values.max())
    if peak == -math.inf:
        return peak
    return peak + math.log(float(np.sum(np.exp(values - peak))))


def delta_total_up(deltas: Iterable[tuple[float, int]], delta_prime: float) -> float:
    """``1 - prod (1 - delta_i)^k_i (1 - delta_prime)``, rounded up (exactly ``delta_prime``
    when every ``delta_i`` is 0)."""
    deltas = [(d, k) for d, k in deltas if d != 0]
    if not deltas:
        return delta_prime
    with round_down():
        log_keep = gmpy2.log1p(-gmpy2.mpfr(delta_prime))
        for delta, k in deltas:
            log_keep += k * gmpy2.log1p(-gmpy2.mpfr(delta))
        kept = gmpy2.expm1(log_keep)  # lower bound on prod(...) - 1 (negative)
    return float(-kept)


def delta_prime_down(deltas: Iterable[tuple[float, int]], delta_total: float) -> float:
    """The largest ``delta_prime`` with ``1 - prod(1-delta_i)(1-delta_prime) <= delta_total``
    (rounded down); negative if the deltas alone exceed ``delta_total``."""
    deltas = [(d, k) for d, k in deltas if d != 0]
    if not deltas:
        return delta_total
    with round_up():
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
        If ``k * epsilon`` does not fit a float (as in
        :func:`~dpkit.composition.sequential`): the loss distribution's support would not
        either.

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
    :func:`~dpkit.composition.advanced` or :func:`~dpkit.composition.sequential`.

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
    epsilon, delta, k = check_mechanisms(epsilon, delta, k, MAX_K)
    delta_prime = check_delta(delta_prime, "delta_prime")
    with round_up():
        basic = finite(gmpy2.mpfr(epsilon) * k, "epsilon_total")
    result = LossDistribution.from_groups([(epsilon, k)]).solve(delta_prime)
    return min(result, float(basic)), delta_total_up([(delta, k)], delta_prime)


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
    epsilon, delta, k = check_mechanisms(epsilon, delta, k, MAX_K)
    epsilon_total = check_real(epsilon_total, "epsilon_total")
    if epsilon_total < 0:
        raise ValueError(f"epsilon_total must be a finite number >= 0, got {epsilon_total!r}")
    distribution = LossDistribution.from_groups([(epsilon, k)])
    log_pure = distribution.log_delta(epsilon_total)
    pure = min(1.0, math.exp(log_pure) * (1 + distribution.error + 1e-12)) if (
        log_pure > -math.inf) else 0.0
    pure = float(np.nextafter(pure, 2.0)) if 0 < pure < 1 else pure
    return delta_total_up([(delta, k)], pure) if pure < 1 else 1.0


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
    epsilon_total, delta_prime, k = check_budget(epsilon_total, delta_prime, k, MAX_K)

    def fits(e: float) -> bool:
        try:
            return e > 0 and optimal(e, 0.0, k, delta_prime)[0] <= epsilon_total
        except OverflowError:  # a total beyond the float range exceeds every target
            return False

    with round_down():
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
    return largest_float_below(fits, low, high)
