"""Figures for the composition chapter: totals against k, the textbook crossover, the privacy
loss of the composition experiment, the privacy-loss distributions of Laplace and Gaussian
noise with their privacy profiles, and the averaging attack."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullLocator
from scipy import integrate, stats

from dpkit._checks import check_epsilon
from dpkit.attacks.composition import (
    averaging_attack_success_rate,
    averaging_success_probability,
    simulate_privacy_loss,
)
from dpkit.composition import advanced, advanced_crossover, optimal, pure_to_zcdp, zcdp_to_dp
from dpkit.gaussian import delta_for_sigma
from dpkit.i18n import tr
from dpkit.plots._style import (
    ACCENT,
    BLACK,
    GREY,
    NAIVE,
    SAFE,
    TRUTH,
    area,
    describe,
    new_figure,
)
from dpkit.rng import seeded

__all__ = [
    "PrivacyLoss",
    "averaging_attack_figure",
    "composition_figure",
    "gaussian_privacy_loss",
    "laplace_privacy_loss",
    "privacy_loss_distributions_figure",
    "privacy_loss_figure",
    "textbook_crossover_figure",
]

def _plain_log_axes(ax: Axes, *, x: bool = True, y: bool = True) -> None:
    """Log scales with plain tick labels and no minor ticks (faster to draw, easier to read)."""
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for use, axis, scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if use:
            scale("log")
            axis.set_minor_locator(NullLocator())
            axis.set_major_formatter(plain)


@dataclass(frozen=True)
class PrivacyLoss:
    """The distribution of a privacy-loss random variable ``L`` (drawn under ``D``): point
    masses ``atoms`` (pairs ``(loss, probability)``) plus a ``density`` on ``support``.

    Used to draw the figures and to check the privacy profile by numerical integration; it
    is a teaching aid, not a calibration (its results are not rounded in a safe direction).
    """

    atoms: tuple[tuple[float, float], ...]
    density: Callable[[float], float]
    support: tuple[float, float]

    def profile(self, epsilon: float) -> float:
        """``E[(1 - e^(epsilon - L))_+]`` by numerical integration (``scipy.integrate.quad``,
        absolute error about 1e-12): the smallest delta for which the pair of outputs is
        ``(epsilon, delta)``-indistinguishable in the direction ``D`` to ``D'``.

        Raises
        ------
        TypeError, ValueError
            If ``epsilon`` is not a finite number >= 0.
        """
        if epsilon != 0:
            epsilon = check_epsilon(epsilon)
        mass = sum(p * -math.expm1(epsilon - loss) for loss, p in self.atoms if loss > epsilon)
        low, high = max(self.support[0], epsilon), self.support[1]
        if low < high:
            part, _ = integrate.quad(lambda x: -math.expm1(epsilon - x) * self.density(x),
                                     low, high, epsabs=1e-14, epsrel=1e-10, limit=200)
            mass += part
        return float(mass)

    def tail(self, epsilon: float) -> float:
        """``P[L > epsilon]`` (the probability the loss exceeds ``epsilon``)."""
        mass = sum(p for loss, p in self.atoms if loss > epsilon)
        low, high = max(self.support[0], epsilon), self.support[1]
        if low < high:
            mass += integrate.quad(self.density, low, high, epsabs=1e-14, epsrel=1e-10)[0]
        return float(mass)


def laplace_privacy_loss(epsilon0: float) -> PrivacyLoss:
    """The privacy loss of Laplace noise of scale ``b`` on a query of sensitivity ``Δ``,
    with ``epsilon0 = Δ / b``, for the worst pair ``f(D) = 0``, ``f(D') = Δ``.

    With noise ``y``: ``L = epsilon0`` when ``y <= 0`` (probability 1/2), ``L = -epsilon0``
    when ``y >= Δ`` (probability ``e^-epsilon0 / 2``), and in between ``L`` has density
    ``e^((l - epsilon0)/2) / 4`` on ``(-epsilon0, epsilon0)``.

    Examples
    --------
    >>> loss = laplace_privacy_loss(1.0)
    >>> round(loss.profile(0.5), 6), round(-math.expm1((0.5 - 1.0) / 2), 6)
    (0.221199, 0.221199)
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    return PrivacyLoss(((epsilon0, 0.5), (-epsilon0, 0.5 * math.exp(-epsilon0))),
                       lambda x: 0.25 * math.exp((x - epsilon0) / 2), (-epsilon0, epsilon0))


def gaussian_privacy_loss(sigma: float, sensitivity: float = 1.0) -> PrivacyLoss:
    """The privacy loss of Gaussian noise ``N(0, sigma^2)`` on a query of sensitivity ``Δ``
    (worst pair at distance ``Δ``): ``L ~ N(rho, 2 rho)`` with ``rho = Δ^2 / (2 sigma^2)``.

    Examples
    --------
    >>> loss = gaussian_privacy_loss(1.0)
    >>> round(loss.profile(1.0), 5), round(delta_for_sigma(1.0, 1.0, 1.0), 5)
    (0.12694, 0.12694)
    """
    rho = check_epsilon(sensitivity, "sensitivity") ** 2 / (2 * check_epsilon(sigma, "sigma") ** 2)
    spread = math.sqrt(2 * rho)
    norm = 1 / (spread * math.sqrt(2 * math.pi))

    def density(x: float) -> float:
        return norm * math.exp(-0.5 * ((x - rho) / spread) ** 2)

    return PrivacyLoss((), density, (rho - 40 * spread, rho + 40 * spread))


def _k_grid(k_max: int, points: int) -> np.ndarray:
    """About ``points`` distinct integers from 1 to ``k_max``, evenly spread on a log scale."""
    return np.unique(np.geomspace(1, k_max, points).round().astype(int))


def composition_figure(epsilon0: float = 0.1, delta_prime: float = 1e-6,
                       k_max: int = 10_000, points: int = 16) -> Figure:
    """Total epsilon of ``k`` epsilon0-DP mechanisms under each theorem, against ``k``.

    Basic (``k epsilon0``), advanced (Dwork & Roth 2014, Thm 3.20), optimal (Kairouz et al.
    2015) and zCDP (each mechanism ``epsilon0**2 / 2``-zCDP, which is also a Gaussian
    mechanism with ``sigma = sensitivity / epsilon0``), all at the same ``delta_prime``.
    """
    ks = _k_grid(k_max, points)
    basic = ks * epsilon0
    adv = np.array([advanced(epsilon0, 0, int(k), delta_prime)[0] for k in ks])
    opt = np.array([optimal(epsilon0, 0, int(k), delta_prime)[0] for k in ks])
    rho = pure_to_zcdp(epsilon0)
    zcdp = np.array([zcdp_to_dp(rho * int(k), delta_prime) for k in ks])

    figure, (ax,) = new_figure()
    ax.plot(ks, basic, color=GREY, lw=2, ls=":", label=tr("basic: k·ε₀"))
    ax.plot(ks, adv, color=NAIVE, lw=2, ls="--", label=tr("advanced"))
    ax.plot(ks, zcdp, color=ACCENT, lw=2, ls="-.", label=tr("zCDP (ρ = k·ε₀²/2)"))
    ax.plot(ks, opt, color=SAFE, lw=2.5, label=tr("optimal"))
    crossover = advanced_crossover(epsilon0, delta_prime)
    if crossover is not None and crossover <= k_max:
        ax.axvline(crossover, color=NAIVE, lw=0.8, ls=":")
        ax.annotate(tr("advanced < basic\nfrom k = {k}").format(k=crossover),
                    (crossover, basic[0]), xytext=(4, 4), textcoords="offset points",
                    fontsize=10, color=BLACK)
        when = tr("advanced beats basic from k = {k}").format(k=crossover)
    else:
        when = tr("advanced never beats basic up to k = {k}").format(k=k_max)
    _plain_log_axes(ax)
    ax.set(xlabel=tr("k (number of mechanisms)"), ylabel=tr("total ε"),
           title=f"ε₀ = {epsilon0:g}, δ' = {delta_prime:g}")
    ax.legend(fontsize=10, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(True, which="major", alpha=0.3)
    return describe(figure, tr(
        "Log-log line chart of the total ε of k mechanisms, each ε₀ = {epsilon0}-DP, for k "
        "from 1 to {k}, at δ' = {delta}. At k = {k} basic composition gives {basic}, "
        "advanced {advanced}, zCDP {zcdp} and optimal {optimal}; {when}.").format(
            epsilon0=f"{epsilon0:g}", k=ks[-1], delta=f"{delta_prime:g}",
            basic=f"{basic[-1]:.4g}", advanced=f"{adv[-1]:.4g}", zcdp=f"{zcdp[-1]:.4g}",
            optimal=f"{opt[-1]:.4g}", when=when))


def textbook_crossover_figure(epsilon: float = 1.0, delta: float = 10e-5,
                              k_max: int = 100) -> Figure:
    """The curve ``2 ε sqrt(2k ln(1/δ))`` a textbook plots as "advanced composition", against
    the real advanced composition total (Dwork & Roth 2014, Thm 3.20) and ``k ε``: at ε = 1
    the real theorem never wins. Labels name the theorem, not its number in Dwork & Roth."""
    ks = np.arange(1, k_max + 1)
    plotted = 2 * epsilon * np.sqrt(2 * ks * math.log(1 / delta))
    real = np.array([advanced(epsilon, 0, int(k), delta)[0] for k in ks])
    opt = np.array([optimal(epsilon, 0, int(k), delta)[0] for k in ks[::5]])
    false_crossover = 8 * math.log(1 / delta)

    figure, (ax,) = new_figure(height=4.2)
    ax.plot(ks, ks * epsilon, color=GREY, lw=2, ls=":", label=tr("sequential: k·ε"))
    ax.plot(ks, plotted, color=NAIVE, lw=2, ls="--", label=tr("as plotted: 2ε√(2k ln(1/δ))"))
    ax.plot(ks, real, color=NAIVE, lw=2,
            label=tr("advanced composition: ε√(2k ln(1/δ)) + kε(e^ε − 1)"))
    ax.plot(ks[::5], opt, color=SAFE, lw=2, marker="o", ms=3, label=tr("optimal composition"))
    if false_crossover <= k_max:
        ax.axvline(false_crossover, color=NAIVE, lw=0.8, ls=":")
        ax.annotate(tr("false crossover\nk ≈ {k}").format(k=f"{false_crossover:.1f}"),
                    (false_crossover, false_crossover * epsilon * 0.35), fontsize=10,
                    color=BLACK, xytext=(5, 0), textcoords="offset points")
    ax.set(xlabel="k", ylabel=tr("total ε"), ylim=(0, None),
           title=tr("ε = {epsilon} per query, δ = {delta}").format(epsilon=f"{epsilon:g}",
                                                                   delta=f"{delta:g}"))
    figure.legend(loc="outside lower center", ncol=1, fontsize=10, frameon=False)
    wins = np.flatnonzero(real < ks * epsilon)
    real_text = (tr("the real advanced composition total drops below k·ε from k = {k}").format(
        k=ks[wins[0]]) if wins.size else
        tr("the real advanced composition total stays above k·ε at every k"))
    crosses = tr("crosses" if false_crossover <= k_max else "would cross (off the chart)")
    return describe(figure, tr(
        "Line chart of the total ε against k from 1 to {k_max}, at ε = {epsilon} per query "
        "and δ = {delta}. The curve a textbook plots as advanced composition, "
        "2ε√(2k ln(1/δ)), {crosses} k·ε at k ≈ {crossover}, but {real_text}; optimal "
        "composition stays at or below k·ε.").format(
            k_max=k_max, epsilon=f"{epsilon:g}", delta=f"{delta:g}", crosses=crosses,
            crossover=f"{false_crossover:.1f}", real_text=real_text))


def privacy_loss_figure(epsilon: float = 0.1, k: int = 100, delta_prime: float = 1e-3,
                        trials: int = 20_000, seed: int = 0) -> Figure:
    """Histogram of the total privacy loss of ``k`` releases about Bob (experiment 0), for
    Laplace counts and for randomized response, with the composition theorems' epsilons."""
    rng = seeded(seed)
    laplace = simulate_privacy_loss(epsilon, k, mechanism="laplace", trials=trials, rng=rng)
    response = simulate_privacy_loss(epsilon, k, mechanism="randomized_response",
                                     trials=trials, rng=rng)
    adv = advanced(epsilon, 0, k, delta_prime)[0]
    opt = optimal(epsilon, 0, k, delta_prime)[0]

    figure, (ax,) = new_figure(height=5.0)
    # Bins of width 2ε centred on randomized response's lattice of losses (k - 2j)ε.
    low = min(laplace.min(), response.min()) - epsilon
    high = max(adv, opt) * 1.15 + epsilon
    first = k * epsilon - 2 * epsilon * math.ceil((k * epsilon - low) / (2 * epsilon)) - epsilon
    bins = np.arange(first, high + 2 * epsilon, 2 * epsilon)
    ax.hist(response, bins=bins, histtype="stepfilled", **area(NAIVE, 0.3), hatch="///",
            label=tr("randomized response (worst case)"))
    ax.hist(laplace, bins=bins, histtype="stepfilled", **area(SAFE, 0.45),
            label=tr("Laplace count"))
    lines = [(opt, "optimal", TRUTH, "--"), (adv, "advanced", NAIVE, "-.")]
    if k * epsilon <= high:
        lines.append((k * epsilon, "basic", GREY, ":"))
    histograms = ax.legend(fontsize=10, loc="upper left", frameon=False)
    # The box below the axes: each theorem's ε (a dashed line) and the δ it needs here.
    marks = []
    for value, name, colour, style in lines:
        rr, lap = (float(np.mean(-np.minimum(np.expm1(value - losses), 0.0)))
                   for losses in (response, laplace))
        marks.append(ax.axvline(value, color=colour, lw=1.5, ls=style,
                                label=tr("{name} ε = {value}: RR {rr}, Laplace {lap}").format(
                                    name=tr(name), value=f"{value:.2f}", rr=f"{rr:.1e}",
                                    lap=f"{lap:.1e}")))
    ax.legend(handles=marks, fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.22),
              title=tr("δ measured at each ε: E[(1 − e^(ε − loss))₊]"), title_fontsize=10,
              fancybox=True, edgecolor=GREY)
    ax.add_artist(histograms)
    ax.set_xlim(bins[0], high)
    ax.set_ylim(0, 1.2 * ax.get_ylim()[1])   # headroom for the histograms' legend
    mean = k * epsilon * math.tanh(epsilon / 2)
    ax.set(xlabel=tr("total privacy loss ln(P[view | in] / P[view | out])"),
           ylabel=tr("experiments"))
    ax.set_title(tr("k = {k} releases at ε = {epsilon}, δ' = {delta}\n"
                    "mean loss of randomized response {mean}").format(
                        k=k, epsilon=f"{epsilon:g}", delta=f"{delta_prime:g}",
                        mean=f"{mean:.2f}"), fontsize=10)
    return describe(figure, tr(
        "Histograms of the total privacy loss of k = {k} releases at ε = {epsilon} about one "
        "person, over {trials} simulated experiments, for randomized response (mean {mean}) "
        "and for Laplace counts, with vertical lines at the totals the composition theorems "
        "give at δ' = {delta}: {totals}.").format(
            k=k, epsilon=f"{epsilon:g}", trials=trials, mean=f"{mean:.2f}",
            delta=f"{delta_prime:g}",
            totals=tr(", ").join(f"{tr(name)} {value:.2f}" for value, name, _, _ in lines)))


def averaging_attack_figure(epsilon: float = 0.5, budget: float = 2.0, n_max: int = 1000,
                            trials: int = 400, seed: int = 0) -> Figure:
    """Probability that the rounded mean of ``m`` Laplace answers is the exact count, against
    ``m`` from 1 to ``n_max``: exact curve, simulated points, and where an accountant with
    ``budget`` stops."""
    ns = _k_grid(n_max, 30)
    exact = np.array([averaging_success_probability(epsilon, int(n)) for n in ns])
    rng = seeded(seed)
    sampled_ns = ns[:: max(1, len(ns) // 10)]
    simulated = [averaging_attack_success_rate(1000, epsilon, int(n), trials=trials, rng=rng)
                 for n in sampled_ns]
    allowed = math.floor(budget / epsilon)

    figure, (ax,) = new_figure()
    ax.plot(ns, exact, color=NAIVE, lw=2, label=tr("exact probability"))
    ax.plot(sampled_ns, simulated, "o", color=NAIVE, ms=4,
            label=tr("simulated ({trials} attacks)").format(trials=trials))
    ax.axvspan(allowed + 0.5, n_max, **area(GREY, 0.15))
    ax.axvline(allowed, color=SAFE, lw=2)
    ax.annotate(tr("accountant stops here\n(budget ε = {budget}: {allowed} answers)").format(
                    budget=f"{budget:g}", allowed=allowed),
                (allowed, 0.86), xytext=(6, 0), textcoords="offset points", fontsize=10,
                color=SAFE)
    _plain_log_axes(ax, y=False)
    ax.set(ylim=(0, 1.02), xlabel=tr("answers averaged (m)"),
           ylabel=tr("P(rounded mean = true count)"),
           title=tr("Averaging attack, ε = {epsilon} per answer").format(epsilon=f"{epsilon:g}"))
    ax.legend(fontsize=10, loc="lower right")
    stop = (tr("where the attack succeeds with probability {p}").format(
        p=f"{averaging_success_probability(epsilon, allowed):.2f}") if allowed >= 1
        else tr("before the first answer"))
    return describe(figure, tr(
        "Line chart of the probability that the rounded mean of m Laplace answers, each at "
        "ε = {epsilon}, equals the true count, for m from 1 to {n_max} on a log scale: the "
        "exact curve rises from {first} to {last}, and simulated points ({trials} attacks "
        "each) follow it. An accountant with budget ε = {budget} stops after {allowed} "
        "answers, {stop}.").format(
            epsilon=f"{epsilon:g}", n_max=n_max, first=f"{exact[0]:.2f}",
            last=f"{exact[-1]:.2f}", trials=trials, budget=f"{budget:g}", allowed=allowed,
            stop=stop))


def privacy_loss_distributions_figure(epsilon0: float = 1.0) -> Figure:
    """Left: the privacy-loss distributions of Laplace noise (``epsilon0``-DP) and of Gaussian
    noise with ``sigma = Δ / epsilon0`` (same zCDP rho). Right: their privacy profiles
    ``delta(epsilon)``, integrated from the loss (points) against the closed forms (lines:
    ``1 - e^((epsilon - epsilon0)/2)`` for Laplace, Balle & Wang's formula for the Gaussian)."""
    laplace = laplace_privacy_loss(epsilon0)
    sigma = 1 / epsilon0
    gaussian = gaussian_privacy_loss(sigma)
    rho = epsilon0**2 / 2

    figure, (left, right) = new_figure(2, width=6.4, height=4.0)
    grid = np.linspace(-epsilon0, epsilon0, 200)
    left.plot(grid, [laplace.density(x) for x in grid], color=SAFE, lw=2,
              label=tr("Laplace (density)"))
    for loss, p in laplace.atoms:
        left.vlines(loss, 0, p, color=SAFE, lw=3)
        left.plot([loss], [p], "o", color=SAFE, ms=5)
    wide = np.linspace(rho - 4 * epsilon0, rho + 4 * epsilon0, 300)
    left.plot(wide, [gaussian.density(x) for x in wide], color=NAIVE, lw=2, ls="--",
              label=tr("Gaussian, same ρ"))
    left.set(xlabel=tr(r"privacy loss $\mathcal{L}$"), ylabel=tr("density / mass"),
             title=tr("Loss, ε₀ = {epsilon0}").format(epsilon0=f"{epsilon0:g}"))

    epsilons = np.linspace(0, 2.5 * epsilon0, 40)
    closed_laplace = [max(0.0, -math.expm1((e - epsilon0) / 2)) for e in epsilons]
    closed_gaussian = [1 - 2 * stats.norm.cdf(-1 / (2 * sigma)) if e == 0 else
                       delta_for_sigma(sigma, 1.0, float(e)) for e in epsilons]
    right.plot(epsilons, closed_laplace, color=SAFE, lw=2, label=tr("Laplace, closed form"))
    right.plot(epsilons, closed_gaussian, color=NAIVE, lw=2, ls="--",
               label=tr("Gaussian, Balle–Wang"))
    marks = epsilons[::4]
    right.plot(marks, [laplace.profile(float(e)) for e in marks], "o", color=TRUTH, ms=4,
               label=r"E[(1 − e^(ε−$\mathcal{L}$))₊]")
    right.plot(marks, [gaussian.profile(float(e)) for e in marks], "o", color=TRUTH, ms=4)
    right.set(xlabel="ε", ylabel="δ(ε)", title=tr("Privacy profiles"), ylim=(0, None))
    # One legend below both panels: the curves fill the panels' corners.
    figure.legend([*left.get_lines()[:1], left.get_lines()[-1], right.get_lines()[2]],
                  [tr("Laplace (stems: point masses)"), tr("Gaussian, same ρ"),
                   tr(r"numerical E[(1 − e^(ε−$\mathcal{L}$))₊]")],
                  loc="outside lower center", ncol=1, fontsize=10, frameon=False)
    (high_loss, high_mass), (low_loss, low_mass) = laplace.atoms
    return describe(figure, tr(
        "Two charts at ε₀ = {epsilon0}. Left: the distribution of the privacy loss L of "
        "Laplace noise, a density on ({low}, {high}) with point masses {high_mass} at {high} "
        "and {low_mass} at {low}, and of Gaussian noise with σ = Δ/ε₀ and the same "
        "ρ = {rho}, a normal density. Right: their privacy profiles δ(ε) for ε from 0 to "
        "{last}, closed forms as lines, numerical integrals of the loss as points on "
        "them.").format(
            epsilon0=f"{epsilon0:g}", low=f"{low_loss:g}", high=f"{high_loss:g}",
            high_mass=f"{high_mass:.2f}", low_mass=f"{low_mass:.2f}", rho=f"{rho:g}",
            last=f"{epsilons[-1]:g}"))

