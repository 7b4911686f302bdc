"""Figures for the chapter on the base-2 exponential mechanism."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from scipy import integrate, special

from dpkit.attacks.exponential import ExponentialAttackResult
from dpkit.exponential import Eta, probabilities
from dpkit.i18n import tr
from dpkit.naive.exponential import exponential_mechanism_probabilities
from dpkit.plots._style import (
    GREY,
    MARKERS,
    NAIVE,
    SAFE,
    TRUTH,
    describe,
    hatched,
    new_figure,
)

__all__ = [
    "attack_rates_figure",
    "distribution_figure",
    "losses_for_exponent",
    "noisy_max_probabilities",
    "selection_figure",
    "time_per_sample_figure",
]

#: Loss pattern of the widget: o₁ is best, then groups one and two units worse.
_PATTERN = np.array([0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4])


def losses_for_exponent(epsilon: float, exponent: float) -> np.ndarray:
    """The widget's losses: ``u(o₁) = round(2·exponent/ε)`` plus a fixed pattern.

    ``exponent`` is the exponent ``ε·u(o₁)/2`` of the best outcome's naive weight
    ``exp(-ε·u/2)``; past ``745.13`` the weight underflows to ``0.0``.
    """
    return round(2 * exponent / epsilon) + _PATTERN.astype(float)


def distribution_figure(epsilon: float = 1.0, exponent: float = 0.0) -> Figure:
    """The exact base-2 distribution beside what the float code really does.

    Parameters
    ----------
    epsilon : float
        The claimed ε; the exact mechanism uses ``Eta.from_epsilon(epsilon)``.
    exponent : float
        ``ε·u(o₁)/2``, the exponent of the best outcome's naive weight: moving it towards
        745 pushes the naive weights into underflow (see :func:`losses_for_exponent`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    losses = losses_for_exponent(epsilon, exponent)
    eta = Eta.from_epsilon(epsilon)
    exact = np.array([float(p) for p in probabilities(losses, eta)])
    try:
        naive = np.array([float(p) for p in exponential_mechanism_probabilities(losses,
                                                                                epsilon)])
        crashed = False
    except ZeroDivisionError:
        naive, crashed = np.zeros_like(exact), True
    figure, (ax,) = new_figure(1, height=4.0)
    positions = np.arange(losses.size)
    ax.bar(positions - 0.2, exact, width=0.4, color=SAFE,
           label=tr("exact, base 2 (η = {eta})").format(eta=f"{eta.eta:.4f}"))
    ax.bar(positions + 0.2, naive, width=0.4, **hatched(NAIVE), label=tr("naive float code"))
    # every other outcome named when there are many, so that the names do not run together
    shown = positions[::2] if positions.size > 8 else positions
    ax.set_xticks(shown, [f"o{i + 1}" for i in shown], fontsize=10)
    ax.set(ylim=(0, 1.05), ylabel=tr("probability"),
           xlabel=tr("outcome (loss of o1 = {loss}, the others 1 to 4 more)").format(
               loss=f"{losses[0]:g}"))
    impossible = int(np.sum((naive == 0) & (exact > 0)))
    if crashed:
        verdict = tr("naive code divides 0 by 0: every weight underflowed")
    else:
        verdict = tr("naive P(o1) = {naive} vs exact {exact}\n"
                     "{impossible} outcome(s) impossible for the naive code").format(
                         naive=f"{naive[0]:.3f}", exact=f"{exact[0]:.3f}", impossible=impossible)
    ax.set_title(f"ε = {epsilon:g}, ε·u(o1)/2 = {exponent:g}\n{verdict}", fontsize=10)
    ax.legend(fontsize=10, loc="upper right", frameon=False)
    naive_text = (tr("the naive float code divides 0 by 0 (every weight underflowed)")
                  if crashed else
                  tr("the naive float code gives {naive} and never returns {impossible} of "
                     "the outcomes").format(naive=f"{naive[0]:.3f}", impossible=impossible))
    return describe(figure, tr(
        "Bar chart of the output probabilities of {size} outcomes o1 to o{size}, at "
        "ε = {epsilon} and ε·u(o1)/2 = {exponent} (loss of o1 {loss}, the others 1 to 4 "
        "more): the exact base-2 mechanism gives P(o1) = {exact}; {naive_text}.").format(
            size=losses.size, epsilon=f"{epsilon:g}", exponent=f"{exponent:g}",
            loss=f"{losses[0]:g}", exact=f"{exact[0]:.3f}", naive_text=naive_text))


def time_per_sample_figure(outcomes: Sequence[int],
                           seconds: Mapping[str, Sequence[float]]) -> Figure:
    """Seconds per sample against the number of outcomes, log-log, one line per sampler.

    Parameters
    ----------
    outcomes : sequence of int
        Numbers of outcomes ``n`` (the x axis).
    seconds : mapping of str to sequence of float
        For each sampler's label, its measured seconds per sample at each ``n`` (``nan``
        where not measured).

    Returns
    -------
    matplotlib.figure.Figure
    """
    colours = {"naive": NAIVE, "fast": SAFE, "full": TRUTH}
    figure, (ax,) = new_figure(1)
    n = np.asarray(outcomes, dtype=float)
    ends = []
    for i, (label, values) in enumerate(seconds.items()):
        colour = next((c for key, c in colours.items() if key in label), GREY)
        times = np.asarray(values, dtype=float)
        ax.loglog(n, times, color=colour, marker=MARKERS[i % len(MARKERS)], label=tr(label))
        measured = np.flatnonzero(np.isfinite(times))
        if measured.size:
            first, last = measured[0], measured[-1]
            ends.append(tr("{label} from {first} s at n = {n_first} to {last} s at "
                           "n = {n_last}").format(
                               label=tr(label), first=f"{times[first]:.2g}",
                               n_first=f"{n[first]:g}", last=f"{times[last]:.2g}",
                               n_last=f"{n[last]:g}"))
    ax.set(xlabel=tr("number of outcomes n (utility u(o) = o)"),
           ylabel=tr("seconds per sample"))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=10, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return describe(figure, tr(
        "Log-log line chart of the seconds per sample against the number of outcomes n, one "
        "line per sampler: {ends}.").format(ends=tr("; ").join(ends)))


def attack_rates_figure(result: ExponentialAttackResult) -> Figure:
    """Bars of the empirical P[output = o₁] on ``d`` and ``d'``, naive against exact."""
    figure, (ax,) = new_figure(1)
    positions = np.arange(2)
    for offset, rates, style, label in ((-0.2, result.naive_rates, hatched(NAIVE),
                                         tr("naive float code")),
                                        (0.2, result.exact_rates, {"color": SAFE},
                                         tr("exact, base 2"))):
        bars = ax.bar(positions + offset, rates, width=0.4, **style, label=label)
        ax.bar_label(bars, fmt="%.3f", fontsize=10)
    ax.set_xticks(positions, [tr("input d"), tr("neighbour d′")])
    ax.set(ylim=(0, 1.15), ylabel=tr("frequency of o1"))
    ax.set_title(tr("{name} attack, claimed ε = {epsilon}\nprivacy loss: {naive} (naive), "
                    "{exact} (exact)").format(
                        name=tr(result.name), epsilon=f"{result.epsilon:g}",
                        naive=f"{result.naive_privacy_loss:g}",
                        exact=f"{result.exact_privacy_loss:.3g}"), fontsize=10)
    ax.legend(fontsize=10, frameon=False)
    return describe(figure, tr(
        "Bar chart of how often the output is o1 on an input d and on its neighbour d′, for "
        "the {name} attack at claimed ε = {epsilon}: the naive float code {naive_d} and "
        "{naive_d2} (privacy loss {naive_loss}), the exact base-2 mechanism {exact_d} and "
        "{exact_d2} (privacy loss {exact_loss}).").format(
            name=tr(result.name), epsilon=f"{result.epsilon:g}",
            naive_d=f"{result.naive_rates[0]:.3f}", naive_d2=f"{result.naive_rates[1]:.3f}",
            naive_loss=f"{result.naive_privacy_loss:g}",
            exact_d=f"{result.exact_rates[0]:.3f}", exact_d2=f"{result.exact_rates[1]:.3f}",
            exact_loss=f"{result.exact_privacy_loss:.3g}"))


def noisy_max_probabilities(scores: Sequence[float], scale: float,
                            noise: str = "gumbel") -> np.ndarray:
    """``P[argmax_i (s_i + Z_i) = i]`` for i.i.d. noise ``Z`` of scale ``b`` (floats).

    Gumbel noise: the softmax ``exp(s_i/b) / Σ_j exp(s_j/b)`` (the Gumbel-max trick), i.e.
    the exponential mechanism with ``ε = 2Δ/b``. Laplace noise:
    ``∫ f(x - s_i) Π_{j≠i} F(x - s_j) dx`` with the Laplace density ``f`` and CDF ``F``,
    integrated numerically for all ``i`` at once (:func:`scipy.integrate.quad_vec`,
    absolute error ≲ 1e-9).

    Parameters
    ----------
    scores : sequence of float
        Scores, higher is better.
    scale : float
        The noise scale ``b > 0``.
    noise : {"gumbel", "laplace"}

    Returns
    -------
    numpy.ndarray
        One probability per score.
    """
    s = np.asarray(scores, dtype=float)
    if noise == "gumbel":
        return special.softmax(s / scale)
    if noise != "laplace":
        raise ValueError(f"noise must be 'gumbel' or 'laplace', got {noise!r}")

    def cdf(x: np.ndarray) -> np.ndarray:
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale),
                        1 - 0.5 * np.exp(-np.maximum(x, 0) / scale))

    low, high = s.max() - 40 * scale, s.max() + 40 * scale

    def integrands(x: float) -> np.ndarray:
        """Every outcome's integrand at ``x``: its density times the others' CDFs (the
        products of the CDFs before and after it, so no CDF is divided by)."""
        shifted = x - s
        below = cdf(shifted)
        before = np.concatenate(([1.0], np.cumprod(below[:-1])))
        after = np.concatenate((np.cumprod(below[:0:-1])[::-1], [1.0]))
        return np.exp(-np.abs(shifted) / scale) / (2 * scale) * before * after

    points = sorted({float(v) for v in s if low < v < high})
    value, _ = integrate.quad_vec(integrands, low, high, points=points, epsabs=1e-11,
                                  norm="max", limit=400)
    return np.asarray(value)


def selection_figure(epsilon: float = 0.05, labels: Sequence[str] = (),
                     counts: Sequence[int] = (), top: int = 6) -> Figure:
    """Output probabilities of private "most common category" selections at budget ε.

    Bars for the exponential mechanism (scores = counts, Δ = 1, weights
    ``exp(ε·count/2)``; Report Noisy Max with Gumbel noise of scale ``2/ε`` has exactly this
    distribution) and for Report Noisy Max with Laplace noise of the same scale ``2/ε``
    (also ε-DP, another distribution), for the ``top`` largest counts; the rest are summed.

    Parameters
    ----------
    epsilon : float
        The budget ε > 0.
    labels, counts : sequence
        Category names and their counts (the private histogram).
    top : int
        Categories shown individually.

    Returns
    -------
    matplotlib.figure.Figure
    """
    order = np.argsort(counts)[::-1]
    names = [str(labels[i]) for i in order]
    values = np.asarray(counts, dtype=float)[order]
    scale = 2 / epsilon
    exponential = noisy_max_probabilities(values, scale, "gumbel")
    laplace = noisy_max_probabilities(values, scale, "laplace")
    shown = min(top, values.size)

    def fold(p: np.ndarray) -> np.ndarray:
        return np.append(p[:shown], p[shown:].sum()) if values.size > shown else p

    ticks = names[:shown] + ([tr("other {count}").format(count=values.size - shown)]
                             if values.size > shown else [])
    figure, (ax,) = new_figure(1, height=4.0)
    positions = np.arange(len(ticks))
    ax.barh(positions - 0.2, fold(exponential), height=0.4, color=SAFE,
            label=tr("exponential mechanism = noisy max, Gumbel noise"))
    ax.barh(positions + 0.2, fold(laplace), height=0.4, **hatched(TRUTH),
            label=tr("noisy max, Laplace noise"))
    ax.set_yticks(positions, ticks, fontsize=10)
    ax.invert_yaxis()
    ax.set(xlim=(0, 1), xlabel=tr("probability of being reported"), ylabel=tr("occupation"))
    ax.set_title(tr("Most common occupation, ε = {epsilon}\n(noise scale 2/ε = {scale})").format(
        epsilon=f"{epsilon:g}", scale=f"{scale:g}"), fontsize=10)
    figure.legend(loc="outside lower center", ncol=1, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Horizontal bar chart of the probability that each occupation is reported as the "
        "most common, at ε = {epsilon} (noise scale 2/ε = {scale}), by the exponential "
        "mechanism and by report noisy max with Laplace noise: {shares}.").format(
            epsilon=f"{epsilon:g}", scale=f"{scale:g}", shares=tr("; ").join(
                tr("{name} {exponential} and {laplace}").format(
                    name=name, exponential=f"{e:.2f}", laplace=f"{lap:.2f}")
                for name, e, lap in zip(ticks, fold(exponential), fold(laplace),
                                        strict=True))))

