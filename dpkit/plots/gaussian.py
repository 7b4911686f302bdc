"""Figures for the Gaussian and analytic-Gaussian chapters (pure: parameters in, Figure out)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator
from scipy.optimize import brentq

from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.i18n import tr
from dpkit.naive.gaussian import analytic_sigma_erf
from dpkit.plots._style import (
    BLACK,
    GREY,
    LINESTYLES,
    NAIVE,
    SAFE,
    TRUTH,
    area,
    describe,
    new_figure,
)

__all__ = [
    "classic_crossing_epsilon",
    "classic_formula_sigma",
    "classic_validity_figure",
    "erf_calibration_figure",
    "laplace_vs_gaussian_figure",
    "privacy_profile_figure",
    "sigma_calibration_figure",
    "vector_errors",
]

def _quick(figure: Figure, bottom: float = 0.2) -> Figure:
    """Make a widget frame cheap to render: fixed margins, no minor ticks on log axes.

    Constrained layout and log-axis minor ticks are most of the cost of drawing a frame;
    a widget pre-renders every frame of its slider grid. The margins leave room for the
    labels at the sizes :func:`dpkit.plots._style.new_figure` draws them; ``bottom`` (a
    fraction of the height) leaves room for a legend below the axes.
    """
    figure.set_layout_engine(None)
    figure.subplots_adjust(left=0.125, right=0.96, bottom=bottom, top=0.88, wspace=0.42)
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_minor_locator(NullLocator())
    return figure


_DIMENSIONS = np.unique(np.geomspace(1, 1000, 40).round().astype(int))


def vector_errors(dimension: int, epsilon: float, delta: float = 1e-5) -> tuple[float, float]:
    """Per-coordinate noise standard deviations for a d-dimensional query.

    The query: one person changes each of the ``dimension`` coordinates by at most 1, so its
    ℓ1 sensitivity is d and its ℓ2 sensitivity √d.

    Returns
    -------
    (laplace_std, gaussian_std) : tuple of float
        √2·b for Laplace noise of scale b = d/ε (ε-DP), and the classic Gaussian σ of
        Dwork & Roth's Theorem A.1 for ℓ2 sensitivity √d ((ε, δ)-DP; needs ε < 1).

    Raises
    ------
    ValueError
        If ``epsilon >= 1`` (the classic calibration is not proven there).
    """
    from dpkit.laplace import laplace_scale  # imported here: a sibling chapter's module

    laplace_std = math.sqrt(2.0) * laplace_scale(float(dimension), epsilon)
    gaussian_std = classic_sigma(math.sqrt(dimension), epsilon, delta)
    return laplace_std, gaussian_std


def laplace_vs_gaussian_figure(dimension: int = 10, epsilon: float = 0.5,
                               delta: float = 1e-5) -> Figure:
    """Laplace vs Gaussian noise for a d-dimensional query, as d grows.

    Left: the per-coordinate noise standard deviation of both mechanisms against d (log
    scales), with the current d marked. Right: the two noise densities of one coordinate at
    the current d, with their central 95% intervals.

    Parameters
    ----------
    dimension : int
        Number of coordinates d (each changed by at most 1 by one person).
    epsilon : float
        Privacy parameter of both mechanisms, in (0, 1) (the Gaussian uses the classic σ).
    delta : float
        δ of the Gaussian mechanism (the Laplace mechanism has δ = 0).
    """
    figure, (left, right) = new_figure(2, height=4.6)
    stds = np.array([vector_errors(int(d), epsilon, delta) for d in _DIMENSIONS])
    # vector_errors gives standard deviations: √2·b = √2·d/ε for Laplace noise of scale b.
    laplace_line, = left.loglog(_DIMENSIONS, stds[:, 0], color=NAIVE, ls="--")
    gauss_line, = left.loglog(_DIMENSIONS, stds[:, 1], color=SAFE)
    lap, gau = vector_errors(dimension, epsilon, delta)
    left.axvline(dimension, color=GREY, lw=0.8, ls=":")
    left.plot([dimension, dimension], [lap, gau], "o", color=BLACK, ms=4)
    crossing = _DIMENSIONS[np.argmax(stds[:, 1] < stds[:, 0])]
    left.set(xlabel=tr("dimension d"), ylabel=tr("noise std per coordinate"),
             title=f"ε = {epsilon:g}, δ = {delta:g}")
    left.text(0.97, 0.04, tr("Gaussian smaller\nfrom d = {crossing}").format(crossing=crossing),
              ha="right",
              transform=left.transAxes, fontsize=10)

    width = 3.2 * max(lap, gau)
    grid = np.linspace(-width, width, 401)
    b = lap / math.sqrt(2.0)
    right.plot(grid, np.exp(-np.abs(grid) / b) / (2 * b), color=NAIVE, ls="--")
    right.plot(grid, np.exp(-0.5 * (grid / gau) ** 2) / (gau * math.sqrt(2 * math.pi)),
               color=SAFE)
    laplace_span = right.axvspan(-b * math.log(20), b * math.log(20), **area(NAIVE, 0.08),
                                 hatch="///")
    gauss_span = right.axvspan(-1.959964 * gau, 1.959964 * gau, **area(SAFE, 0.10))
    right.set(xlabel=tr("noise on one coordinate"), ylabel=tr("density"), yticks=[],
              title=tr("d = {dimension}: std ratio {ratio}").format(dimension=dimension,
                                                                   ratio=f"{lap / gau:.2f}"))
    right.set_ylim(0, right.get_ylim()[1] * 1.1)
    # One legend below both panels (the curves fill the upper corners at some d).
    figure.legend([laplace_line, gauss_line, laplace_span, gauss_span],
                  [tr("Laplace, std √2·d/ε"), tr("Gaussian, classic σ"),
                   tr("Laplace: 95% in ±{half}").format(half=f"{b * math.log(20):.3g}"),
                   tr("Gaussian: 95% in ±{half}").format(half=f"{1.959964 * gau:.3g}")],
                  loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=10,
                  frameon=False)
    return describe(_quick(figure, bottom=0.33), tr(
        "Two charts at ε = {epsilon}, δ = {delta}. Left: log-log lines of the noise standard "
        "deviation per coordinate against the dimension d from 1 to 1000, for Laplace noise "
        "(√2·d/ε) and Gaussian noise (classic σ); the Gaussian is smaller from "
        "d = {crossing}. Right: the two noise densities of one coordinate at d = {dimension}; "
        "95% of Laplace noise lies within ±{laplace}, of Gaussian noise within ±{gaussian} "
        "(standard deviation ratio {ratio}).").format(
            epsilon=f"{epsilon:g}", delta=f"{delta:g}", crossing=crossing,
            dimension=dimension, laplace=f"{b * math.log(20):.3g}",
            gaussian=f"{1.959964 * gau:.3g}", ratio=f"{lap / gau:.2f}"))


def classic_formula_sigma(epsilon: float, delta: float) -> float:
    """The classic σ/Δ = √(2 ln(1.25/δ))/ε, evaluated for any ε (the theorem needs ε < 1)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def classic_crossing_epsilon(delta: float) -> float:
    """The ε > 1 at which the classic formula's σ stops being (ε, δ)-DP (Δ = 1).

    Below it the formula's σ is at least the analytic σ (δ(σ) ≤ δ: private, though not by
    Theorem A.1 when ε ≥ 1); above it, δ(σ) > δ. Both statements are the same, because
    δ(σ) decreases in σ. Solved with Brent's method on log δ(σ(ε)) − log δ over [1, 100].
    """
    def gap(epsilon: float) -> float:
        sigma = classic_formula_sigma(epsilon, delta)
        return math.log(delta_for_sigma(sigma, 1.0, epsilon)) - math.log(delta)

    return float(brentq(gap, 1.0, 100.0, xtol=1e-12))


def classic_validity_figure(deltas: Sequence[float] = (1e-3, 1e-5, 1e-9)) -> Figure:
    """The true δ of the classic σ = √(2 ln(1.25/δ))/ε (Δ = 1) against ε, for several targets.

    Each target δ is a dotted line; the curve crosses it at :func:`classic_crossing_epsilon`
    (marked). Left of ε = 1 the classic theorem (Dwork & Roth's Theorem A.1) applies; between
    1 and the crossing the formula's σ is private although no theorem says so; right of the
    crossing it is not private.
    """
    figure, (ax,) = new_figure(1)
    epsilons = np.geomspace(0.05, 20, 160)
    crossings = [classic_crossing_epsilon(delta) for delta in deltas]
    for delta, crossing, colour, style in zip(deltas, crossings, (SAFE, TRUTH, NAIVE),
                                              LINESTYLES, strict=False):
        true = [delta_for_sigma(classic_formula_sigma(e, delta), 1.0, e) for e in epsilons]
        ax.loglog(epsilons, true, color=colour, ls=style, label=f"{delta:g}")
        ax.axhline(delta, color=colour, lw=0.8, ls=":")
        ax.plot([crossing], [delta], "o", color=colour, ms=5)
        ax.annotate(f"{crossing:.2f}", (crossing, delta), textcoords="offset points",
                    xytext=(-4, 6), ha="right", fontsize=10, color=BLACK)
    ax.axvline(1.0, color=GREY, ls="--", lw=1)
    ax.text(0.88, 1e-2, tr("ε = 1: end of the\nclassic theorem"), fontsize=10, color=GREY,
            ha="right")
    ax.set(xlabel="ε", ylabel=tr("true δ of the classic σ"), ylim=(1e-16, 1.0),
           title=tr("Classic σ judged by the exact profile"))
    ax.legend(fontsize=10, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0),
              title=tr("target δ"), title_fontsize=10)
    return describe(figure, tr(
        "Log-log line chart of the true δ of the classic σ = √(2 ln(1.25/δ))/ε (Δ = 1) "
        "against ε from 0.05 to 20, one line per target δ = {deltas}; each line crosses its "
        "target (a dotted line) at ε = {crossings}, and is not private beyond. The classic "
        "theorem (Dwork and Roth, Theorem A.1) covers only ε < 1.").format(
            deltas=", ".join(f"{d:g}" for d in deltas),
            crossings=", ".join(f"{c:.2f}" for c in crossings)))


_CURVE_EPSILONS = np.geomspace(0.01, 20, 120)
_CURVE_DELTAS = np.geomspace(1e-15, 1e-1, 120)


@lru_cache(maxsize=32)
def _analytic_over_epsilon(delta: float) -> tuple[float, ...]:
    """Analytic σ/Δ on the ε grid at this δ (cached: a widget reuses it across frames)."""
    return tuple(analytic_sigma(1.0, float(e), delta) for e in _CURVE_EPSILONS)


@lru_cache(maxsize=32)
def _analytic_over_delta(epsilon: float) -> tuple[float, ...]:
    """Analytic σ/Δ on the δ grid at this ε (cached: a widget reuses it across frames)."""
    return tuple(analytic_sigma(1.0, epsilon, float(d)) for d in _CURVE_DELTAS)


def sigma_calibration_figure(epsilon: float = 0.5, delta: float = 1e-6) -> Figure:
    """σ (for Δ = 1) from the classic and the analytic calibrations, over ε and over δ.

    Left: σ against ε at the chosen δ (the classic curve is dashed where ε >= 1, outside its
    theorem). Right: σ against δ at the chosen ε (classic only if ε < 1).
    """
    figure, (left, right) = new_figure(2)
    epsilons = _CURVE_EPSILONS
    analytic = _analytic_over_epsilon(delta)
    formula = np.sqrt(2 * np.log(1.25 / delta)) / epsilons
    proven = epsilons < 1
    left.loglog(epsilons, analytic, color=SAFE, label=tr("analytic"))
    left.loglog(epsilons[proven], formula[proven], color=NAIVE, ls="--", label=tr("classic, ε < 1"))
    left.loglog(epsilons[~proven], formula[~proven], color=NAIVE, ls=":",
                label=tr("classic, ε ≥ 1"))
    sigma = analytic_sigma(1.0, epsilon, delta)
    left.plot([epsilon], [sigma], "o", color=BLACK, ms=4)
    left.set(xlabel="ε", ylabel="σ / Δ", title=f"δ = {delta:g}")
    left.legend(fontsize=10, frameon=False, loc="lower left", handlelength=1.2)

    deltas = _CURVE_DELTAS
    right.semilogx(deltas, _analytic_over_delta(epsilon), color=SAFE, label=tr("analytic"))
    if epsilon < 1:
        classic = [classic_sigma(1.0, epsilon, d) for d in deltas]
        right.semilogx(deltas, classic, color=NAIVE, ls="--", label=tr("classic"))
        ratio = classic_sigma(1.0, epsilon, delta) / sigma
        title = tr("ε = {epsilon}, ratio {ratio}").format(epsilon=f"{epsilon:g}",
                                                         ratio=f"{ratio:.2f}")
        verdict = tr("the classic σ is {ratio} times larger").format(ratio=f"{ratio:.2f}")
    else:
        title = tr("ε = {epsilon}: no classic").format(epsilon=f"{epsilon:g}")
        verdict = tr("the classic calibration does not apply (ε ≥ 1)")
    right.plot([delta], [sigma], "o", color=BLACK, ms=4)
    right.set(xlabel="δ", ylabel="σ / Δ", title=title)
    right.invert_xaxis()
    right.legend(fontsize=10, frameon=False, loc="upper left")
    return describe(_quick(figure), tr(
        "Two log-scale line charts of the noise σ (for Δ = 1) from the classic and the "
        "analytic calibrations: left, against ε at δ = {delta}; right, against δ at "
        "ε = {epsilon}. At ε = {epsilon}, δ = {delta} the analytic σ is {sigma} and "
        "{verdict}.").format(delta=f"{delta:g}", epsilon=f"{epsilon:g}",
                             sigma=f"{sigma:.3g}", verdict=verdict))


def privacy_profile_figure(sigmas: Sequence[float] = (0.5, 1.0, 2.0, 4.0)) -> Figure:
    """The privacy profile δ(ε) of Gaussian noise with several σ (Δ = 1), log scale."""
    figure, (ax,) = new_figure(1)
    epsilons = np.linspace(0.01, 8, 200)
    colours = (NAIVE, TRUTH, SAFE, GREY)
    for sigma, colour, style in zip(sigmas, colours, LINESTYLES, strict=False):
        ax.semilogy(epsilons, [delta_for_sigma(sigma, 1.0, e) for e in epsilons],
                    color=colour, ls=style, label=f"σ = {sigma:g}Δ")
    ax.set(xlabel="ε", ylabel="δ(ε)", ylim=(1e-16, 1.5),
           title=tr("Privacy profiles of Gaussian noise"))
    ax.legend(fontsize=10, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return describe(figure, tr(
        "Line chart, δ on a log scale, of the privacy profile δ(ε) of Gaussian noise for ε "
        "from 0 to 8, one line per noise level: {levels}. Larger σ gives a smaller δ at every "
        "ε.").format(levels=tr("; ").join(
            tr("σ = {sigma}Δ has δ(1) = {delta}").format(
                sigma=f"{s:g}", delta=f"{delta_for_sigma(s, 1.0, 1.0):.2g}") for s in sigmas)))


def erf_calibration_figure(epsilons: Sequence[float] = (0.5, 1.0, 4.0)) -> Figure:
    """True δ / target δ of the erf-based solver and of :func:`analytic_sigma`, over δ."""
    figure, (ax,) = new_figure(1)
    deltas = np.geomspace(1e-25, 1e-4, 64)
    worst = []
    for epsilon, colour, style in zip(epsilons, (NAIVE, TRUTH, GREY), LINESTYLES[1:],
                                      strict=False):
        ratios = [delta_for_sigma(analytic_sigma_erf(1.0, epsilon, d), 1.0, epsilon) / d
                  for d in deltas]
        worst.append(max(ratios))
        ax.loglog(deltas, ratios, color=colour, ls=style,
                  label=tr("erf-based solver, ε = {epsilon}").format(epsilon=f"{epsilon:g}"))
    safe = [delta_for_sigma(analytic_sigma(1.0, 1.0, d), 1.0, 1.0) / d for d in deltas]
    ax.loglog(deltas, safe, color=SAFE, lw=2, label="dpkit.gaussian.analytic_sigma, ε = 1")
    ax.axhline(1.0, color=BLACK, lw=0.8)
    ax.set(xlabel=tr("target δ"), ylabel=tr("true δ / target δ"),
           title=tr("Solving δ(σ) = δ with Φ(t) = (1 + erf(t/√2))/2"))
    ax.invert_xaxis()
    ax.legend(fontsize=10, frameon=False, loc="upper left")
    return describe(figure, tr(
        "Log-log line chart of the true δ divided by the target δ, for targets from 1e-25 "
        "to 1e-4 (decreasing to the right). The erf-based solver drifts above 1, that is "
        "above its target, to a ratio of {ratios}; dpkit.gaussian.analytic_sigma at ε = 1 "
        "stays at most {safe}.").format(
            ratios=tr(", ").join(tr("{ratio} at ε = {epsilon}").format(
                ratio=f"{w:.3g}", epsilon=f"{e:g}")
                for e, w in zip(epsilons, worst, strict=False)),
            safe=f"{max(safe):.3g}"))

