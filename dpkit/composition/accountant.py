"""The accountant: a privacy budget that refuses, before any release, a spend over it.

:class:`Accountant` holds the budget and decides; it delegates the rest. Its ledger
(:mod:`dpkit.composition._ledger`) validates and records what has been spent, and the
composition rules (:mod:`dpkit.composition._rules`) compose that record into a total under
the chosen theorem.

Choosing a composition
----------------------
The accountant reports all four totals (:meth:`Accountant.totals`); ``composition`` picks
the one that decides whether a spend fits.

``"basic"`` (default)
    Epsilons and deltas add up. Safe even when the analyst picks each release's parameters
    after seeing earlier outputs (Rogers et al. 2016).
``"advanced"`` / ``"optimal"``
    The smaller of the basic total and Thm 3.20 (heterogeneous form, see
    :func:`~dpkit.composition.advanced_heterogeneous`) or the exact optimal composition,
    with all spare budget delta as ``delta_prime``. **These theorems assume the sequence of
    privacy parameters is fixed in advance** (it may not depend on the outputs).
``"zcdp"``
    The rhos add up and the sum is converted with :func:`~dpkit.composition.zcdp_to_dp` at
    the budget delta; every release must have a rho (pure or Gaussian). A rho filter stays
    valid under adaptive parameter choice (Feldman & Zrnic 2021).
"""

from __future__ import annotations

import os
import threading
from typing import NoReturn

import gmpy2

from dpkit._checks import check_delta, check_epsilon
from dpkit.composition._ledger import Ledger, Spend, Sums, checked_spend, gaussian_spend
from dpkit.composition._rounding import exact_context, float_down
from dpkit.composition._rules import (
    Totals,
    all_totals,
    check_applies,
    check_composition,
    total_under,
)

__all__ = ["Accountant", "BudgetExceeded", "Spend", "Totals"]


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
        The theorem that decides whether a spend fits (default ``"basic"``, safe under
        adaptive choices). ``"advanced"`` and ``"optimal"`` assume the privacy parameters
        are fixed in advance; see "Choosing a composition" in
        :mod:`dpkit.composition.accountant`.

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

    **Threads.** An accountant may be shared between threads. A charge (:meth:`spend`,
    :meth:`spend_gaussian`) decides whether the spend fits and records it in one atomic
    step, under a lock, so concurrent spends can never together exceed the budget.
    :meth:`can_spend` and :attr:`remaining` are advisory: another thread may spend between
    the question and the charge, so only the charge itself decides.

    **Processes.** An accountant's ledger lives in the process that created it. A child
    created by ``os.fork`` (``multiprocessing`` with *fork*) would get its own copy of the
    ledger, and each child could spend the remaining budget again, so a charge made in
    another process than the creator's raises ``RuntimeError``; charge every release in the
    creating process, or give each process a budget of its own (``Accountant(epsilon / k)``).
    For the same reason an accountant cannot be copied or pickled (``TypeError``).

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
        # An exact budget (a Fraction) is rounded down, a spend rounded up (checked_spend):
        # never in the spender's favour.
        self._epsilon = check_epsilon(epsilon, rounding="down")
        self._delta = check_delta(delta, allow_zero=True, rounding="down")
        self._composition = check_composition(composition, self._delta)
        self._ledger = Ledger()
        # Held while a charge is decided and recorded: the fit check and the recording are
        # one atomic step (two threads may not both fit into the same remaining budget).
        self._lock = threading.Lock()
        self._pid = os.getpid()  # the only process whose charges this ledger records

    def __reduce_ex__(self, protocol: int) -> NoReturn:
        raise TypeError(
            "an Accountant cannot be copied or pickled: the copy would hold a second ledger "
            "of the same budget, and releases charged to either would be unseen by the other "
            "(together they could spend the budget twice). Share this accountant (it is "
            "thread-safe), or split the budget explicitly: one Accountant(epsilon / k) per "
            "worker")

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
        return self._ledger.history

    def totals(self) -> Totals | None:
        """The history's totals under basic, advanced, optimal and zCDP accounting.

        Advanced and optimal use all the budget delta the releases leave over as
        ``delta_prime``; zCDP converts at the budget delta. ``None`` if nothing was spent.
        """
        return all_totals(self._ledger.sums, self._delta) if self._ledger else None

    @property
    def spent(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` spent so far under :attr:`composition` (``(0, 0)`` at first)."""
        return self._total(self._ledger.sums) if self._ledger else (0.0, 0.0)

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget minus :attr:`spent`, rounded down, for epsilon and delta.

        Under basic composition the next spend fits exactly when it is within
        ``remaining``; under the other theorems the total is not additive, so use
        :meth:`can_spend` to test a particular spend.
        """
        spent_eps, spent_delta = self.spent
        with exact_context():
            eps = float_down(self._epsilon - gmpy2.mpfr(spent_eps))
            delta = float_down(self._delta - gmpy2.mpfr(spent_delta))
        return max(eps, 0.0), max(delta, 0.0)

    # -- spending -------------------------------------------------------------------------
    def _total(self, sums: Sums) -> tuple[float, float]:
        return total_under(self._composition, sums, self._delta)

    def _fits(self, total: tuple[float, float]) -> bool:
        return total[0] <= self._epsilon and total[1] <= self._delta

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether a release with these parameters would fit in the budget now.

        Advisory only: it records nothing, and another thread may spend between this call
        and a charge. Call :meth:`spend` (which decides and records atomically) and release
        only if it returns.

        Raises
        ------
        TypeError, ValueError
            If a parameter is of the wrong type or out of range.
        """
        spend = check_applies(self._composition, checked_spend(epsilon, delta, ""))
        return self._fits(self._total(self._ledger.sums.add(spend)))

    def _charge(self, spend: Spend) -> Spend:
        """Record ``spend`` if it fits, else raise :class:`BudgetExceeded`: one atomic step.

        The lock covers reading the sums, deciding and recording, so no other charge can
        slip in between the check and the record (two threads each spending 0.6 of a
        budget of 1.0 would otherwise both succeed).
        """
        if os.getpid() != self._pid:
            raise RuntimeError(
                f"this Accountant was created in process {self._pid}; a forked child (process "
                f"{os.getpid()}) cannot spend from it: its ledger is a copy the parent never "
                f"sees, so every child could spend the budget again. Charge every release in "
                f"process {self._pid}, or create one budget per process (Accountant(epsilon / "
                f"k) for k processes)")
        spend = check_applies(self._composition, spend)
        with self._lock:
            sums = self._ledger.sums.add(spend)
            total = self._total(sums)
            if not self._fits(total):
                raise BudgetExceeded(
                    f"spending epsilon={spend.epsilon:g}, delta={spend.delta:g} "
                    f"({spend.label!r}) would bring the total to epsilon={total[0]!r}, "
                    f"delta={total[1]:.3g} under {self._composition} composition, over the "
                    f"budget epsilon={self._epsilon:g}, delta={self._delta:g}; nothing was "
                    f"spent", spend, total, self.budget)
            self._ledger.record(spend, sums)
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
        RuntimeError
            If called in another process than the one that created the accountant (a child
            created by ``os.fork``): see "Processes" in :class:`Accountant`.
        """
        return self._charge(checked_spend(epsilon, delta, label))

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
        RuntimeError
            If called in a forked child, as :meth:`spend`.
        """
        return self._charge(gaussian_spend(sigma, sensitivity, epsilon, delta, label))

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (f"Accountant(budget=(epsilon={self._epsilon:g}, delta={self._delta:g}), "
                f"composition={self._composition!r}, spent=(epsilon={eps:.6g}, "
                f"delta={delta:.3g}), releases={len(self._ledger)})")
