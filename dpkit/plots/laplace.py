"""Figures for the Laplace chapter: the noise and its releases, accuracy, and the LSB attack."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from dpkit.attacks.laplace import LSBAttackResult
from dpkit.i18n import tr
from dpkit.laplace import laplace_accuracy, laplace_scale, sample_releases
from dpkit.plots._style import (
    BLACK,
    GREY,
    LINESTYLES,
    NAIVE,
    SAFE,
    TRUTH,
    area,
    describe,
    hatched,
    new_figure,
)
from dpkit.rng import seeded
from dpkit.timing import unpadded

__all__ = ["laplace_release_figure", "lsb_attack_figure", "tail_bound_figure"]


def laplace_release_figure(epsilon: float, sensitivity: float, true_value: float = 100.0,
                           releases: int = 2000, seed: int = 0,
                           half_range: float = 40.0) -> Figure:
    """The Laplace mechanism at (ε, Δ): noise density, histogram of releases, 95% interval.

    Parameters
    ----------
    epsilon : float
        Privacy parameter.
    sensitivity : float
        ℓ1 sensitivity of the query.
    true_value : float
        The true answer ``f(D)``.
    releases : int
        Number of simulated independent releases (safe mechanism) in the histogram.
    seed : int
        Seed of the simulation (the figure is deterministic).
    half_range : float
        Half-width of the x axis around ``true_value`` (fixed, so frames compare).
    """
    scale = laplace_scale(sensitivity, epsilon)
    alpha = laplace_accuracy(sensitivity, epsilon, 0.05)
    with unpadded():  # simulated releases for a figure, none published: no deadline
        values = sample_releases(true_value, sensitivity, epsilon, releases, rng=seeded(seed))
    figure, (ax,) = new_figure()
    lo, hi = true_value - half_range, true_value + half_range
    bins = np.linspace(lo, hi, 81)
    weight = 1.0 / (releases * (bins[1] - bins[0]))     # density; releases off-axis drop out
    ax.hist(values, bins=bins, weights=np.full(releases, weight), histtype="stepfilled",
            **area(SAFE, 0.45),
            label=tr("{releases} releases (dpkit.laplace)").format(releases=releases))
    x = np.linspace(lo, hi, 801)
    ax.plot(x, np.exp(-np.abs(x - true_value) / scale) / (2 * scale), color=SAFE, lw=2,
            label=tr("density of f(D) + Lap({scale})").format(scale=f"{scale:.3g}"))
    ax.axvline(true_value, color=TRUTH, lw=2, ls="--", label=tr("true answer f(D)"))
    ax.axvspan(true_value - alpha, true_value + alpha, **area(TRUTH, 0.1), hatch="\\\\",
               label=tr("95% interval ±{alpha}").format(alpha=f"{alpha:.3g}"))
    inside = np.mean(np.abs(values - true_value) <= alpha)
    ax.set(xlim=(lo, hi), ylim=(0, 1.25 / (2 * scale)), xlabel=tr("released value"),
           ylabel=tr("density"),
           title=f"ε = {epsilon:g}, Δ = {sensitivity:g}, b = Δ/ε = {scale:.3g}:\n"
                 + tr("{inside} of releases inside the interval").format(inside=f"{inside:.1%}"))
    ax.title.set_fontsize(10)
    # Below the axes: the histogram may fill the whole width at small ε.
    figure.legend(loc="outside lower center", ncol=2, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Histogram of {releases} releases of the safe Laplace mechanism around the true "
        "answer {truth}, at ε = {epsilon} and Δ = {sensitivity} (noise scale b = {scale}), "
        "under the Laplace density; {inside} of the releases fall inside the 95% interval "
        "±{alpha}.").format(
            releases=releases, truth=f"{true_value:g}", epsilon=f"{epsilon:g}",
            sensitivity=f"{sensitivity:g}", scale=f"{scale:.3g}", inside=f"{inside:.1%}",
            alpha=f"{alpha:.3g}"))


def tail_bound_figure(scales: Sequence[float] = (0.5, 1.0, 2.0, 5.0)) -> Figure:
    """``P[|Lap(b)| > t] = exp(-t/b)`` on a log scale, for a few scales ``b``."""
    figure, (ax,) = new_figure()
    t = np.linspace(0, 30, 301)
    for i, b in enumerate(scales):
        ax.semilogy(t, np.exp(-t / b), color=SAFE, ls=LINESTYLES[i % len(LINESTYLES)], lw=2,
                    label=f"b = {b:g}")
    ax.axhline(0.05, color=GREY, ls="--", lw=1)
    # Right end of the dashed line: the curves cross it further left (at t = b ln 20 ≤ 15).
    ax.text(29.5, 0.07, "β = 0.05", ha="right", va="bottom", fontsize=10, color=GREY)
    ax.set(xlim=(0, 30), xlabel="t", ylabel=tr("P[|noise| > t]"), ylim=(1e-6, 1.5),
           title=tr("Tails of Lap(b): P[|noise| > t] = exp(−t/b)"))
    ax.title.set_fontsize(10)
    ax.legend(fontsize=10, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return describe(figure, tr(
        "Line chart, on a log scale, of the tail probability P[|noise| > t] = exp(−t/b) of "
        "Laplace noise for t from 0 to 30, one line for each scale {scales}; each line falls "
        "below β = 0.05 at t = b ln 20 ({crossings}).").format(
            scales=", ".join(f"b = {b:g}" for b in scales),
            crossings=", ".join(f"{b * np.log(20):.3g}" for b in scales)))


def lsb_attack_figure(scales: Sequence[float], naive: Sequence[LSBAttackResult],
                      safe: Sequence[LSBAttackResult]) -> Figure:
    """Mironov's attack on the textbook and the safe mechanism, per noise scale b.

    ``naive`` and ``safe`` hold one :class:`~dpkit.attacks.laplace.LSBAttackResult` per scale
    (sensitivity 1, ``ε = 1/b``, as the chapter measures). Left: share of releases on which
    the attack names an input. Middle: share of those decisions that are right (1.0 means the
    attacker is never wrong). Right: overall accuracy, a coin flip counted for each undecided
    release. The middle and right panels draw a coin flip and the band
    ``[1/(1+e^ε), e^ε/(1+e^ε)]`` that ε-DP puts on both: on any guess between the two
    inputs, and on a guess made only where the attack decides (each decision is an event at
    most ``e^ε`` times likelier from the input it names; below the band, the reversed guess
    would beat its upper edge).
    """
    figure, (left, middle, right) = new_figure(3, height=4.6)
    x = np.arange(len(scales))
    width = 0.38
    panels = ((left, "decided", tr("Attack\ndecides"), tr("share of releases")),
              (middle, "correct_when_decided", tr("Right when\nit decides"),
               tr("share of decisions")),
              (right, "accuracy", tr("Overall\naccuracy"), tr("share of releases")))
    for ax, field, title, ylabel in panels:
        ax.bar(x - width / 2, [getattr(r, field) for r in naive], width, **hatched(NAIVE),
               label=tr("textbook (dpkit.naive)"))
        ax.bar(x + width / 2, [getattr(r, field) for r in safe], width, color=SAFE,
               label=tr("safe (dpkit.laplace)"))
        ax.set(xticks=x, xticklabels=[f"{b:g}" for b in scales], xlabel="b = Δ/ε",
               ylim=(0, 1.05), ylabel=ylabel)
        ax.set_title(title, fontsize=10)
    epsilons = 1.0 / np.asarray(scales, dtype=float)
    for ax in (middle, right):
        ax.axhline(0.5, color=GREY, ls=":", lw=1, label=tr("coin flip"))
        upper = np.exp(epsilons) / (1 + np.exp(epsilons))
        ax.hlines(upper, x - 0.48, x + 0.48, color=BLACK, lw=1.5,
                  label=tr(r"ε-DP band $[1/(1+e^\varepsilon), e^\varepsilon/(1+e^\varepsilon)]$,"
                           " ε = 1/b"))
        ax.hlines(1 - upper, x - 0.48, x + 0.48, color=BLACK, lw=1.5)
    entries = dict(zip(*reversed(left.get_legend_handles_labels()), strict=True))
    entries.update(zip(*reversed(right.get_legend_handles_labels()), strict=True))
    figure.legend(entries.values(), entries.keys(), loc="outside lower center", ncol=1,
                  fontsize=10, frameon=False)

    def spread(values: Sequence[float]) -> str:
        low, high = f"{min(values):.0%}", f"{max(values):.0%}"
        return low if low == high else tr("{low} to {high}").format(low=low, high=high)

    def shares(field: str) -> str:
        return tr("{naive} on the textbook mechanism and {safe} on the safe one").format(
            naive=spread([getattr(r, field) for r in naive]),
            safe=spread([getattr(r, field) for r in safe]))

    return describe(figure, tr(
        "Three bar charts of Mironov's attack on the textbook and the safe Laplace mechanism "
        "at noise scales b = {scales}. Left: the attack names an input on {decided} of the "
        "releases. Middle: it is right on {right} of its decisions. Right: overall accuracy "
        "{accuracy}, against the ε-DP band from 1/(1+e^ε) to e^ε/(1+e^ε) drawn on the middle "
        "and right panels.").format(
            scales=", ".join(f"{b:g}" for b in scales), decided=shares("decided"),
            right=shares("correct_when_decided"), accuracy=shares("accuracy")))

