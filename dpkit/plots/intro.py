"""Figures for the introduction: the Adult data and randomized response."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpkit.plots._style import GREY, NAIVE, SAFE, TRUTH, new_figure
from dpkit.randomized_response import debiased_std, truth_probability

__all__ = ["adult_overview_figure", "randomized_response_figure"]


def adult_overview_figure(adult: pd.DataFrame) -> Figure:
    """Histogram of age and the share of each income class in the Adult data."""
    figure, (left, right) = new_figure(2)
    left.hist(adult["age"], bins=range(15, 95, 2), color=SAFE)
    left.set(xlabel="age (years)", ylabel="people", title="Age")
    shares = adult["income"].value_counts(normalize=True).sort_index()
    right.bar(shares.index.astype(str), shares.to_numpy(), color=[GREY, SAFE])
    right.set(ylabel="share of people", ylim=(0, 1), title="Income")
    return figure


def randomized_response_figure(epsilon: float, n: int = 1000, true_fraction: float = 0.24,
                               surveys: int = 2000, seed: int = 0) -> Figure:
    """Randomized response at ``epsilon``: the two answer probabilities, and the spread of
    the de-biased estimate over simulated surveys of ``n`` people.

    Parameters
    ----------
    epsilon : float
        The privacy parameter.
    n : int
        People per survey.
    true_fraction : float
        The true proportion of "yes" (0.24 is Adult's share earning over $50K).
    surveys : int
        Number of simulated surveys in the histogram.
    seed : int
        Seed of the simulation (figures are deterministic).
    """
    p = float(truth_probability(epsilon))
    figure, (left, right) = new_figure(2)
    bars = left.bar(["P(report yes | yes)", "P(report yes | no)"], [p, 1 - p],
                    color=[SAFE, NAIVE])
    left.bar_label(bars, fmt="%.3f")
    left.set(ylim=(0, 1.1), title=f"ε = {epsilon:g}: ratio {p / (1 - p):.2f}")
    left.tick_params(axis="x", labelsize=8)

    generator = np.random.default_rng(seed)
    q = true_fraction * p + (1 - true_fraction) * (1 - p)
    estimates = (generator.binomial(n, q, size=surveys) / n - (1 - p)) / (2 * p - 1)
    std = debiased_std(true_fraction, n, epsilon)
    right.hist(estimates, bins=np.linspace(-0.6, 1.1, 69), color=SAFE, alpha=0.8)
    right.axvline(true_fraction, color=TRUTH, lw=2, label="true share")
    right.axvspan(true_fraction - 1.96 * std, true_fraction + 1.96 * std, color=TRUTH,
                  alpha=0.15, label="±1.96 std")
    right.set(xlim=(-0.6, 1.1), xlabel="de-biased estimate", ylabel="surveys",
              title=f"{surveys} surveys, n = {n}: std {std:.3f}")
    right.legend(loc="upper right", fontsize=8, frameon=False)
    return figure
