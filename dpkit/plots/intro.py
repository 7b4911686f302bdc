"""Figures for the introduction: the Adult data and randomized response."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from dpkit.i18n import tr
from dpkit.plots._style import GREY, NAIVE, SAFE, TRUTH, area, describe, new_figure
from dpkit.randomized_response import debiased_std, truth_probability

__all__ = ["CHAPTER_MAP", "adult_overview_figure", "chapter_map_figure",
           "randomized_response_figure"]

#: The chapters in reading order, as ``_toc.yml`` lists them: (file name, number in the book
#: or ``None`` for the unnumbered introduction, title as in the chapter's ``#`` heading, the
#: chapters it builds on).
CHAPTER_MAP = (
    ("intro", None, "Introduction", ()),
    ("promise", 1, "What the promise means", ("intro",)),
    ("laplace", 2, "The Laplace mechanism", ("promise",)),
    ("gaussian", 3, "The Gaussian mechanism", ("laplace",)),
    ("analytic_gaussian", 4, "The analytic Gaussian mechanism", ("gaussian",)),
    ("composition", 5, "Composition", ("laplace", "gaussian", "analytic_gaussian")),
    ("exponential_base2", 6, "The base-2 exponential mechanism", ("laplace",)),
    ("sparse_vector", 7, "The sparse vector technique", ("composition", "exponential_base2")),
)


def adult_overview_figure(adult: pd.DataFrame) -> Figure:
    """Histogram of age and the share of each income class in the Adult data."""
    figure, (left, right) = new_figure(2)
    left.hist(adult["age"], bins=range(15, 95, 2), color=SAFE)
    left.set(xlabel=tr("age (years)"), ylabel=tr("people"), title=tr("Age"))
    shares = adult["income"].value_counts(normalize=True).sort_index()
    right.bar(shares.index.astype(str), shares.to_numpy(), color=[GREY, SAFE])
    right.set(ylabel=tr("share of people"), ylim=(0, 1), title=tr("Income"))
    ages = adult["age"]
    return describe(figure, tr(
        "Two bar charts of the Adult data ({people} people). Left: a histogram of age, from "
        "{youngest} to {oldest} years, most people between {low} and {high}. Right: the "
        "share of each income class: {shares}.").format(
            people=len(adult), youngest=ages.min(), oldest=ages.max(),
            low=f"{ages.quantile(0.25):g}", high=f"{ages.quantile(0.75):g}",
            shares=tr(", ").join(f"{label} {share:.0%}" for label, share in shares.items())))


def chapter_map_figure() -> Figure:
    """The chapters in reading order, with an arrow from each chapter to those building on it.

    Arrows between consecutive chapters run straight down; longer ones arc on the right.
    The numbers are the book's (the introduction is unnumbered). Drawn at the column's
    width with large type, so that it stays legible on a phone.
    """
    figure, (ax,) = new_figure(1, width=6.4, height=6.0)
    ax.set_axis_off()
    ax.set(xlim=(0.0, 1.0), ylim=(len(CHAPTER_MAP) - 0.45, -0.55))
    row = {name: i for i, (name, _, _, _) in enumerate(CHAPTER_MAP)}
    left, right = 0.01, 0.80
    middle = (left + right) / 2
    for i, (_, number, title, needs) in enumerate(CHAPTER_MAP):
        ax.add_patch(FancyBboxPatch((left, i - 0.3), right - left, 0.6, facecolor=(SAFE, 0.1),
                                    edgecolor=SAFE, boxstyle="round,pad=0,rounding_size=0.1"))
        label = tr(title) if number is None else f"{number}. {tr(title)}"
        ax.text(middle, i, label, ha="center", va="center", fontsize=12)
        for need in needs:
            j = row[need]
            if i - j == 1:
                start, end, style = (middle, j + 0.3), (middle, i - 0.3), "arc3"
            else:
                start, end = (right, j), (right, i)
                style = f"arc3,rad={-0.12 - 0.06 * (i - j)}"
            ax.annotate("", xy=end, xytext=start,
                        arrowprops={"arrowstyle": "->", "color": GREY, "lw": 1.3,
                                    "connectionstyle": style, "shrinkA": 0, "shrinkB": 0})
    ax.set_title(tr("An arrow means “is used by”"), fontsize=11)
    number = {name: tr("the introduction") if n is None else str(n)
              for name, n, _, _ in CHAPTER_MAP}
    jumps = [tr("{chapter} builds on {needs}").format(
                 chapter=number[name], needs=tr(" and ").join(number[n] for n in needs))
             for (name, _, _, needs), (previous, *_) in zip(CHAPTER_MAP[1:], CHAPTER_MAP,
                                                            strict=False)
             if needs != (previous,)]
    return describe(figure, tr(
        "Map of the chapters in reading order: {chapters}. Each builds on the one "
        "before{exceptions}.").format(
            chapters=tr(", ").join(tr(title) if n is None else f"{n}. {tr(title)}"
                                   for _, n, title, _ in CHAPTER_MAP),
            exceptions=tr(", except: {jumps}").format(jumps=tr("; ").join(jumps)) if jumps
            else ""))


def randomized_response_figure(epsilon: float, n: int = 1000, true_fraction: float = 0.24,
                               surveys: int = 2000, seed: int = 0) -> Figure:
    """Randomized response at ``epsilon``: the two answer probabilities, and the spread of
    the de-biased estimate over simulated surveys of the same ``n`` people.

    The people, and so their true share, are fixed; only their coins change from one
    simulated survey to the next, so the spread is the price of privacy alone, with no
    sampling variance (:func:`dpkit.randomized_response.debiased_std` with its default
    ``sampled=False``).

    Parameters
    ----------
    epsilon : float
        The privacy parameter.
    n : int
        People per survey.
    true_fraction : float
        The true proportion of "yes" (0.24 is Adult's share earning over $50K); the survey
        has ``round(true_fraction * n)`` people whose true answer is yes.
    surveys : int
        Number of simulated surveys in the histogram.
    seed : int
        Seed of the simulation (figures are deterministic).
    """
    p = float(truth_probability(epsilon))
    figure, (left, right) = new_figure(2)
    bars = left.bar([tr("yes"), tr("no")], [p, 1 - p], color=[SAFE, NAIVE])
    left.bar_label(bars, fmt="%.3f")
    left.set(ylim=(0, 1.1), xlabel=tr("true answer"), ylabel=tr("P(report yes)"),
             title=tr("ε = {epsilon}: ratio {ratio}").format(epsilon=f"{epsilon:g}",
                                                               ratio=f"{p / (1 - p):.2f}"))

    generator = np.random.default_rng(seed)
    yes = round(true_fraction * n)
    true_fraction = yes / n
    reported_yes = (generator.binomial(yes, p, size=surveys)
                    + generator.binomial(n - yes, 1 - p, size=surveys))
    estimates = (reported_yes / n - (1 - p)) / (2 * p - 1)
    std = debiased_std(true_fraction, n, epsilon)
    right.hist(estimates, bins=np.linspace(-0.6, 1.1, 69), histtype="stepfilled",
               **area(SAFE, 0.6))
    right.axvline(true_fraction, color=TRUTH, lw=2, label=tr("true share"))
    right.axvspan(true_fraction - 1.96 * std, true_fraction + 1.96 * std, **area(TRUTH, 0.15),
                  label=tr("±1.96 std"))
    right.set(xlim=(-0.6, 1.1), xlabel=tr("estimate ({surveys} surveys)").format(surveys=surveys),
              ylabel=tr("surveys"), title=tr("n = {n}: std {std}").format(n=n, std=f"{std:.3f}"))
    figure.legend(loc="outside lower center", ncol=2, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Randomized response at ε = {epsilon}. Left: bars of the probability of reporting "
        "yes, {yes} for a true yes and {no} for a true no. Right: a histogram of the "
        "de-biased estimate over {surveys} simulated surveys of the same n = {n} people, "
        "centred on the true share {share} with standard deviation {std}.").format(
            epsilon=f"{epsilon:g}", yes=f"{p:.3f}", no=f"{1 - p:.3f}", surveys=surveys, n=n,
            share=f"{true_fraction:g}", std=f"{std:.3f}"))

