"""Figures for "What the promise means": output densities on neighbours, and trade-off curves."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from scipy import stats

from dpkit._checks import check_delta, check_epsilon
from dpkit.audit import guessing_bound, tradeoff_bound
from dpkit.gaussian import analytic_sigma
from dpkit.i18n import tr
from dpkit.plots._style import GREY, NAIVE, SAFE, TRUTH, area, describe, new_figure

__all__ = ["output_distributions", "tradeoff_figure"]

_FONT = 11


def output_distributions(epsilon: float, delta: float) -> tuple[Any, Any]:
    """The example pair of output distributions drawn by :func:`tradeoff_figure`.

    A query whose answer is 0 on ``D`` and 1 on ``D'`` (one person's difference), released
    with noise: Laplace noise of scale ``1/ε`` when ``delta == 0`` (exactly ε-DP), Gaussian
    noise of the analytic standard deviation (Balle & Wang 2018) when ``delta > 0`` (exactly
    (ε, δ)-DP).

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float
        In [0, 1).

    Returns
    -------
    (scipy.stats frozen distribution, scipy.stats frozen distribution)
        The outputs on ``D`` and on ``D'``.

    Raises
    ------
    TypeError, ValueError
        If ``epsilon`` or ``delta`` is out of range.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    if delta == 0:
        return stats.laplace(0.0, 1.0 / epsilon), stats.laplace(1.0, 1.0 / epsilon)
    sigma = analytic_sigma(1.0, epsilon, delta)
    return stats.norm(0.0, sigma), stats.norm(1.0, sigma)


def tradeoff_figure(epsilon: float, delta: float = 0.0) -> Figure:
    """Top: the output densities on ``D`` and ``D'`` and the band ``e^±ε · p_D'``.
    Bottom: the trade-off curve of those outputs against the (ε, δ)-DP bound.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    delta : float
        0 (the densities are Laplace) or in (0, 1) (they are Gaussian); see
        :func:`output_distributions`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError, ValueError
        If ``epsilon`` or ``delta`` is out of range.
    """
    on_d, on_d_prime = output_distributions(epsilon, delta)
    # Stacked, not side by side: each panel gets the column's width and keeps its legend
    # beside it, clear of the data and the axis labels.
    figure, (top, bottom) = new_figure(1, nrows=2, width=6.4, height=7.2)
    delta_text = "0" if delta == 0 else f"{delta:g}"

    spread = float(on_d.std())
    y = np.linspace(-3.2 * spread, 1 + 3.2 * spread, 801)
    p, q = on_d.pdf(y), on_d_prime.pdf(y)
    top.fill_between(y, np.exp(-epsilon) * q, np.exp(epsilon) * q, **area(TRUTH, 0.25),
                     label=tr("band $e^{\\pm\\varepsilon}$ × (on D′):\non D must stay inside"))
    top.plot(y, p, color=SAFE, lw=2, label=tr("on D"))
    top.plot(y, q, color=GREY, lw=2, ls="--", label=tr("on D′"))
    # Above the band D is likelier than e^ε times D′; below it D′ is likelier than e^ε
    # times D (the same condition with D and D′ swapped). Both excursions need δ.
    above = p > np.exp(epsilon) * q * (1 + 1e-9)
    below = p * (1 + 1e-9) < np.exp(-epsilon) * q
    outside = above | below
    for where, edge, label in ((above, np.exp(epsilon) * q, tr("outside the band:\npaid for by δ")),
                               (below, np.exp(-epsilon) * q, None)):
        if where.any():
            top.fill_between(y, edge, p, where=where, **area(NAIVE, 0.35), hatch="///",
                             label=label)
    top.set_xlabel(tr("released value"), fontsize=_FONT)
    top.set_ylabel(tr("density"), fontsize=_FONT)
    top.set_yticks([])
    top.set_title(tr("Output densities, ε = {epsilon}, δ = {delta}").format(
        epsilon=f"{epsilon:g}", delta=delta_text), fontsize=_FONT)
    top.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=10, frameon=False)
    top.set_ylim(0, 1.3 * max(p.max(), q.max()))
    top.tick_params(labelsize=10)

    alpha = np.linspace(0.0, 1.0, 401)
    bound = np.array([tradeoff_bound(a, epsilon, delta) for a in alpha])
    thresholds = np.linspace(-12 * spread, 1 + 12 * spread, 2001)
    bottom.fill_between(alpha, 0, bound, **area(NAIVE, 0.15),
                        label=tr("impossible\nunder (ε, δ)-DP"))
    bottom.plot(alpha, bound, color=NAIVE, lw=1.5)
    bottom.plot(on_d.sf(thresholds), on_d_prime.cdf(thresholds), color=SAFE, lw=2,
                label=tr("threshold tests\non these outputs"))
    bottom.plot([0, 1], [1, 0], color=GREY, lw=1, ls=":", label=tr("coin flip"))
    bottom.set(xlim=(0, 1), ylim=(0, 1), aspect="equal")
    bottom.set_xlabel(tr("false positives α"), fontsize=_FONT)
    bottom.set_ylabel(tr("false negatives β"), fontsize=_FONT)
    bottom.tick_params(labelsize=10)
    bottom.set_title(tr("Tests: best guess ≤ {bound}").format(
        bound=f"{guessing_bound(epsilon, delta):.1%}"), fontsize=_FONT)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.05, 1.0), fontsize=10, frameon=False)
    noise = tr("Laplace" if delta == 0 else "Gaussian")
    band = (tr("the density on D leaves the band on both sides, where δ = {delta} pays for "
               "it").format(delta=delta_text)
            if outside.any() else tr("the density on D stays inside the band"))
    return describe(figure, tr(
        "Two charts at ε = {epsilon}, δ = {delta}. Top: the {noise} output densities on D and "
        "on D′, one unit apart, and the band e^±ε times the density on D′; {band}. Bottom: "
        "the false negatives against the false positives of threshold tests on these "
        "outputs stay above the region that (ε, δ)-DP makes impossible; no test guesses "
        "right more than {bound} of the time.").format(
            epsilon=f"{epsilon:g}", delta=delta_text, noise=noise, band=band,
            bound=f"{guessing_bound(epsilon, delta):.1%}"))

