"""The composition rules: how an accountant's charges compose into a total.

Each rule reads the running sums of a ledger (:class:`~dpkit.composition._ledger.Sums`) and
the budget delta: basic composition adds the parameters; advanced composition is Thm 3.20 in
its heterogeneous form (:mod:`dpkit.composition.advanced`); optimal composition is exact
(:mod:`dpkit.composition.optimal`); zCDP adds the rhos and converts the sum
(:mod:`dpkit.composition.zcdp`). Advanced and optimal take the budget delta the releases
leave over as ``delta_prime``; zCDP converts at the budget delta. :func:`total_under` is the
total an accountant enforces, :func:`all_totals` gives all four (:class:`Totals`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpkit.composition._ledger import Spend, Sums
from dpkit.composition._rounding import exact_context, float_down, float_up
from dpkit.composition.advanced import advanced_from_sums
from dpkit.composition.optimal import LossDistribution, delta_prime_down, delta_total_up
from dpkit.composition.zcdp import zcdp_to_dp

__all__ = ["COMPOSITIONS", "Totals", "all_totals", "check_applies", "check_composition",
           "total_under"]

#: The theorems an accountant can enforce.
COMPOSITIONS = ("basic", "advanced", "optimal", "zcdp")


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


def _basic(sums: Sums) -> tuple[float, float]:
    """Basic composition: the sums of the epsilons and of the deltas, rounded up (``inf``
    beyond the largest float: an upper bound over every budget, never an OverflowError)."""
    return float_up(sums.epsilon), float_up(sums.delta)


def _advanced(sums: Sums, budget_delta: float) -> tuple[float, float] | None:
    """Heterogeneous Thm 3.20 with the spare budget delta as delta' (capped by basic).

    A Thm 3.20 bound beyond the largest float (``Σε(e^ε - 1)`` overflows from ε = 710 on)
    is larger than the basic total, which is then the answer: the cap, not an error.
    """
    with exact_context():
        spare = float_down(budget_delta - sums.delta)
    if spare <= 0:
        return None
    try:
        total = advanced_from_sums(float_up(sums.squares), float_up(sums.drift),
                                    float_up(sums.delta), spare)
    except OverflowError:  # the bound exceeds every float, so the basic total is smaller
        return _basic(sums)
    return min(total, _basic(sums))


def _optimal(sums: Sums, budget_delta: float) -> tuple[float, float] | None:
    """Exact optimal composition with the spare budget as delta' (capped by basic)."""
    delta_prime = delta_prime_down(sums.deltas, budget_delta)
    if delta_prime <= 0:
        return None
    try:
        distribution = LossDistribution.from_groups(sums.epsilons)
    except ValueError:  # too many distinct epsilons to compute exactly
        return None
    epsilon = distribution.solve(delta_prime)
    if epsilon >= _basic(sums)[0]:
        return _basic(sums)
    return epsilon, delta_total_up(sums.deltas, delta_prime)


def _zcdp(sums: Sums, budget_delta: float) -> tuple[float, float] | None:
    """The sum of the rhos converted at the budget delta (if every spend has a rho)."""
    if sums.rho is None or budget_delta == 0:
        return None
    return zcdp_to_dp(float_up(sums.rho), budget_delta), budget_delta


def all_totals(sums: Sums, budget_delta: float) -> Totals:
    """The totals of ``sums`` under all four theorems."""
    rho = None if sums.rho is None else float_up(sums.rho)
    return Totals(_basic(sums), _advanced(sums, budget_delta), _optimal(sums, budget_delta),
                  _zcdp(sums, budget_delta), rho)


def total_under(composition: str, sums: Sums, budget_delta: float) -> tuple[float, float]:
    """The total of ``sums`` under ``composition`` (one of :data:`COMPOSITIONS`): for
    advanced and optimal, the smaller of that theorem's and the basic total among those
    within the budget delta."""
    if composition == "zcdp":
        result = _zcdp(sums, budget_delta)
        assert result is not None  # every spend has a rho (check_applies)
        return result
    candidates = [_basic(sums)]
    if composition == "advanced":
        candidates.append(_advanced(sums, budget_delta))
    elif composition == "optimal":
        candidates.append(_optimal(sums, budget_delta))
    fitting = [c for c in candidates if c is not None and c[1] <= budget_delta]
    return min(fitting) if fitting else candidates[0]


def check_composition(composition: str, budget_delta: float) -> str:
    """``composition``, if it is one of :data:`COMPOSITIONS` and the budget delta suits it."""
    if composition not in COMPOSITIONS:
        raise ValueError(f"composition must be one of {COMPOSITIONS}, got {composition!r}")
    if composition != "basic" and budget_delta == 0:
        raise ValueError(f"composition={composition!r} needs a budget delta > 0 (its "
                         f"delta_prime comes from the budget), got delta=0")
    return composition


def check_applies(composition: str, spend: Spend) -> Spend:
    """``spend``, if ``composition`` can account for it (zCDP needs a ``rho``)."""
    if composition == "zcdp" and spend.rho is None:
        raise ValueError(f"composition='zcdp' accepts pure releases (delta=0) and Gaussian "
                         f"ones (spend_gaussian); got delta={spend.delta!r} with no rho")
    return spend
