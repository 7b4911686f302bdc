"""The ledger: what an accountant has spent, and how a charge is recorded.

:class:`Spend` is one charged release; :func:`checked_spend` and :func:`gaussian_spend` turn
a release's parameters into one, validated and rounded up (never in the spender's favour).
A :class:`Ledger` keeps the accepted spends in order together with their running sums
(:class:`Sums`), from which :mod:`dpkit.composition._rules` composes the totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gmpy2

from dpkit._checks import check_delta, check_epsilon
from dpkit.composition._rounding import exact_context, round_up
from dpkit.composition.zcdp import gaussian_rho, pure_to_zcdp
from dpkit.gaussian import delta_for_sigma

__all__ = ["Spend", "checked_spend", "gaussian_spend"]


@dataclass(frozen=True)
class Spend:
    """One release charged to an :class:`~dpkit.composition.Accountant`.

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


def checked_spend(epsilon: Any, delta: Any, label: Any, rho: float | None = None) -> Spend:
    """The :class:`Spend` of an ``(epsilon, delta)``-DP release, each parameter rounded up to
    a float; a pure release (``delta == 0``) without a ``rho`` gets ``epsilon**2 / 2``."""
    epsilon = check_epsilon(epsilon, rounding="up")
    delta = check_delta(delta, allow_zero=True, rounding="up")
    if not isinstance(label, str):
        raise TypeError(f"label must be a str, got {label!r} of type {type(label).__name__}")
    if rho is None and delta == 0:
        rho = pure_to_zcdp(epsilon)
    return Spend(epsilon, delta, label, rho)


def gaussian_spend(sigma: float, sensitivity: float, epsilon: float, delta: float,
                   label: Any) -> Spend:
    """The :class:`Spend` of a Gaussian release, with ``rho = sensitivity**2 / (2 sigma**2)``;
    ValueError unless the exact Gaussian privacy profile (Balle & Wang 2018, Thm 8) gives at
    most ``delta`` at ``epsilon`` for this ``sigma``."""
    rho = gaussian_rho(sensitivity, sigma)
    epsilon = check_epsilon(epsilon, rounding="up")
    delta = check_delta(delta, rounding="up")
    actual = delta_for_sigma(sigma, sensitivity, epsilon)
    if actual > delta:
        raise ValueError(f"sigma={sigma!r} is too small for (epsilon={epsilon!r}, "
                         f"delta={delta!r}) at sensitivity={sensitivity!r}: the Gaussian "
                         f"mechanism's delta at that epsilon is {actual:.3g}")
    return checked_spend(epsilon, delta, label, rho)


def _bump(groups: tuple[tuple[float, int], ...], key: float) -> tuple[tuple[float, int], ...]:
    """Add one to the count of ``key`` in a sorted tuple of ``(value, count)`` pairs."""
    counts = dict(groups)
    counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


@dataclass(frozen=True)
class Sums:
    """Running sums of a history (each rounded up), so a spend costs O(distinct epsilons)."""

    epsilon: Any = 0  # exact sums (wide mpfr), rounded up when read
    delta: Any = 0
    squares: Any = 0  # sum of epsilon_i^2 (exact), for advanced composition
    drift: Any = 0  # sum of epsilon_i (e^epsilon_i - 1), each term rounded up
    rho: Any = 0  # sum of rho_i; None once a release without a rho is charged
    epsilons: tuple[tuple[float, int], ...] = ()  # (epsilon, how many), for optimal
    deltas: tuple[tuple[float, int], ...] = ()

    def add(self, spend: Spend) -> Sums:
        """The sums with ``spend`` charged too (``self`` is left as it is)."""
        with round_up():
            x = gmpy2.mpfr(spend.epsilon)
            drift_term = x * gmpy2.expm1(x)
        with exact_context():
            x = gmpy2.mpfr(spend.epsilon)
            squares = self.squares + x * x
            drift = self.drift + drift_term
            epsilon = self.epsilon + x
            delta = self.delta + gmpy2.mpfr(spend.delta)
            rho = (None if self.rho is None or spend.rho is None
                   else self.rho + gmpy2.mpfr(spend.rho))
        return Sums(epsilon, delta, squares, drift, rho,
                     _bump(self.epsilons, spend.epsilon), _bump(self.deltas, spend.delta))


class Ledger:
    """What an accountant has spent: the accepted spends, in order, and their running sums."""

    def __init__(self) -> None:
        self._spends: list[Spend] = []
        self.sums = Sums()

    def __len__(self) -> int:
        return len(self._spends)

    @property
    def history(self) -> tuple[Spend, ...]:
        """Every accepted spend, in order (an immutable copy)."""
        return tuple(self._spends)

    def record(self, spend: Spend, sums: Sums) -> None:
        """Append ``spend``, whose sums with the history, ``self.sums.add(spend)``, are
        ``sums`` (computed beforehand to decide whether the spend fits)."""
        self._spends.append(spend)
        self.sums = sums
