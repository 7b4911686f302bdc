"""The accountant: a privacy budget that refuses, before any release, a spend over it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gmpy2

from dpkit._checks import check_delta, check_epsilon
from dpkit.composition._rounding import _exact, _finite, _float_down, _float_up, _up
from dpkit.composition.advanced import _advanced_from_sums
from dpkit.composition.optimal import _delta_prime_down, _delta_total_up, _LossDistribution
from dpkit.composition.zcdp import gaussian_rho, pure_to_zcdp, zcdp_to_dp
from dpkit.gaussian import delta_for_sigma

__all__ = ["Accountant", "BudgetExceeded", "Spend", "Totals"]


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
