"""Every figure builder of :mod:`dpkit.plots`, called with small, fast arguments, and the
texts its description must contain (the parameters it was given, as the figure shows them).

``tests/test_plots_a11y.py`` checks that the list covers each builder in a plots module's
``__all__``, so a new builder without a case fails there.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from dpkit.attacks.exponential import ExponentialAttackResult
from dpkit.attacks.laplace import LSBAttackResult
from dpkit.datasets import load_adult
from dpkit.plots import composition, exponential, gaussian, intro, laplace, promise, svt


class Case(NamedTuple):
    """One call of a builder and what its text alternative must mention."""

    builder: Any
    kwargs: dict[str, Any]
    mentions: tuple[str, ...]

    @property
    def id(self) -> str:
        """A readable test id."""
        return f"{self.builder.__module__.rsplit('.', 1)[-1]}.{self.builder.__name__}"


def _attack_result() -> ExponentialAttackResult:
    return ExponentialAttackResult(
        name="zero-rounding", epsilon=1.0, exact_epsilon=0.99, trials=100,
        naive_rates=(1.0, 0.52), exact_rates=(0.61, 0.40), naive_success=0.74,
        exact_success=0.6, naive_probabilities=(Fraction(1), Fraction(1, 2)),
        exact_probabilities=(Fraction(3, 5), Fraction(2, 5)), naive_privacy_loss=float("inf"),
        exact_privacy_loss=0.41, impossible=1, inputs=None)


CASES = (
    Case(intro.adult_overview_figure, {"adult": load_adult()}, ("32561", "age", "income")),
    Case(intro.chapter_map_figure, {}, ("7. The sparse vector technique", "6 builds on 2")),
    Case(intro.randomized_response_figure, {"epsilon": 0.5, "n": 400, "surveys": 200},
         ("ε = 0.5", "400", "200")),
    Case(promise.tradeoff_figure, {"epsilon": 1.0, "delta": 0.05}, ("ε = 1", "δ = 0.05")),
    Case(laplace.laplace_release_figure, {"epsilon": 0.25, "sensitivity": 2.0, "releases": 300},
         ("ε = 0.25", "Δ = 2", "300", "100")),
    Case(laplace.tail_bound_figure, {"scales": (1.0, 3.0)}, ("b = 1", "b = 3")),
    Case(laplace.lsb_attack_figure,
         {"scales": [1, 2, 5],
          "naive": [LSBAttackResult(1000, d, 1.0, 0.5 + d / 2, 0.7) for d in (0.6, 0.5, 0.4)],
          "safe": [LSBAttackResult(1000, 0.5, c, 0.5, 0.7) for c in (0.55, 0.5, 0.5)]},
         ("b = 1, 2, 5", "100%", "50% to 55%")),
    Case(gaussian.laplace_vs_gaussian_figure, {"dimension": 100, "epsilon": 0.5, "delta": 1e-5},
         ("d = 100", "ε = 0.5", "δ = 1e-05")),
    Case(gaussian.classic_validity_figure, {"deltas": (1e-3, 1e-5)}, ("0.001", "1e-05")),
    Case(gaussian.sigma_calibration_figure, {"epsilon": 0.5, "delta": 1e-6},
         ("ε = 0.5", "δ = 1e-06")),
    Case(gaussian.privacy_profile_figure, {"sigmas": (0.5, 2.0)}, ("σ = 0.5", "σ = 2")),
    Case(gaussian.erf_calibration_figure, {"epsilons": (0.5, 4.0)}, ("ε = 0.5", "ε = 4")),
    Case(composition.composition_figure, {"epsilon0": 0.1, "delta_prime": 1e-6, "k_max": 1000,
                                          "points": 6},
         ("ε₀ = 0.1", "δ' = 1e-06", "1000")),
    Case(composition.textbook_crossover_figure, {"epsilon": 1.0, "delta": 1e-4, "k_max": 50},
         ("ε = 1", "δ = 0.0001", "50")),
    Case(composition.privacy_loss_figure, {"epsilon": 0.1, "k": 50, "delta_prime": 1e-3,
                                           "trials": 500},
         ("k = 50", "ε = 0.1", "δ' = 0.001", "500")),
    Case(composition.averaging_attack_figure, {"epsilon": 0.5, "budget": 2.0, "n_max": 100,
                                               "trials": 20},
         ("ε = 0.5", "budget ε = 2", "100")),
    Case(composition.privacy_loss_distributions_figure, {"epsilon0": 1.0}, ("ε₀ = 1",)),
    Case(exponential.distribution_figure, {"epsilon": 2.0, "exponent": 744.0},
         ("ε = 2", "744")),
    Case(exponential.time_per_sample_figure, {
        "outcomes": [100, 1000], "seconds": {"naive (float)": [1e-5, 2e-5],
                                             "fast (exact)": [5e-5, 6e-5]}},
         ("naive (float)", "fast (exact)", "100", "1000")),
    Case(exponential.attack_rates_figure, {"result": _attack_result()},
         ("zero-rounding", "ε = 1")),
    Case(exponential.selection_figure, {"epsilon": 0.01, "labels": ["a", "b", "c"],
                                        "counts": [30, 20, 10], "top": 2},
         ("ε = 0.01", "a", "other 1")),
    Case(svt.clip_bound_figure, {"epsilon": 0.5, "column": "age", "runs": 5},
         ("ε = 0.5", "age", "5 runs")),
    Case(svt.auto_avg_error_figure, {"epsilons": (0.1, 1.0), "columns": ("age",), "runs": 3},
         ("age", "3 runs", "0.1", "1")),
    Case(svt.naive_cost_figure, {"epsilon": 0.5, "max_queries": 20}, ("ε = 0.5", "20")),
    Case(svt.audit_figure, {"results": {"no noise on the query answers": (1.0, 3.2, float("inf")),
                                        "AboveThreshold (dpkit.svt)": (1.0, 0.4, 1.0)}},
         ("no noise on the query answers", "3.2", "AboveThreshold")),
    Case(svt.stream_figure, {"answers": list(np.linspace(-900, 0, 20)),
                             "labels": list(range(70, 90)), "threshold": -500,
                             "epsilon": 0.1},
         ("T = -500", "ε = 0.1", "20")),
    Case(svt.clip_query_figure, {"columns": ("age",), "epsilon": 1 / 3}, ("age", "60")),
)
