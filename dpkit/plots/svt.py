"""Figures for the sparse vector technique chapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
from matplotlib.figure import Figure

from dpkit.datasets import load_adult
from dpkit.i18n import tr
from dpkit.plots._style import (
    BLACK,
    GREY,
    MARKERS,
    NAIVE,
    SAFE,
    TRUTH,
    describe,
    hatched,
    new_figure,
)
from dpkit.rng import seeded
from dpkit.svt import CLIP_THRESHOLD_SCALES, DEFAULT_CLIP_BOUNDS, auto_avg_runs, clip_bound_runs
from dpkit.svt.clipping import clip_query_units
from dpkit.svt.core import grid_bits
from dpkit.timing import unpadded

__all__ = ["CLIP_GRIDS", "audit_figure", "auto_avg_error_figure", "clip_bound_figure",
           "clip_query_figure", "clip_query_values", "naive_cost_figure",
           "stream_figure"]

#: Candidate-bound grids offered by the chapter's widget.
CLIP_GRIDS: dict[str, tuple[int, ...]] = {
    "1 to 200, then +1% (default)": DEFAULT_CLIP_BOUNDS,
    "powers of 2": tuple(2**k for k in range(41)),
}


#: Where :func:`clip_bound_figure` puts its two panels (figure fractions: left, bottom,
#: width, height): where the constrained layout puts them for the frames with the widest
#: tick labels, so that no frame's text is cut off (``tests/test_plots_layout.py``).
_CLIP_BOUND_PANELS = ((0.124, 0.278, 0.344, 0.637), (0.62, 0.278, 0.344, 0.637))


def _column(column: str) -> np.ndarray:
    return load_adult()[column].to_numpy(dtype=np.float64)


def clip_bound_figure(epsilon: float = 1.0, grid: str = "1 to 200, then +1% (default)",
                      column: str = "age", runs: int = 200, seed: int = 0) -> Figure:
    """Where :func:`dpkit.svt.auto_avg` clips, and how far its average lands from the truth.

    Left: histogram of the bound chosen by ``auto_avg``'s first step (AboveThreshold with
    ε/3) over ``runs`` runs, against the column's largest value. Right: the error of the
    private average over ``runs`` independent runs of ``auto_avg`` at ε.

    Parameters
    ----------
    epsilon : float
        ``auto_avg``'s total budget.
    grid : str
        A key of :data:`CLIP_GRIDS`.
    column : str
        A numeric column of the Adult data.
    runs : int
        Simulated runs per panel.
    seed : int
        Seed of the simulation (the figure is deterministic).
    """
    values = _column(column)
    candidates = CLIP_GRIDS[grid]
    with unpadded():  # simulated runs for a figure, none published: no deadlines
        chosen = clip_bound_runs(values, epsilon / 3, bounds=candidates, runs=runs,
                                 rng=seeded(seed))
        averages = auto_avg_runs(values, epsilon, bounds=candidates, runs=runs,
                                 rng=seeded(seed + 1))
    used = np.array([float(candidates[-1] if b is None else b) for b in chosen])
    truth = float(values.mean())
    errors = averages - truth

    figure, (left, right) = new_figure(2, height=4.0)
    edges = np.geomspace(1, max(float(candidates[-1]), 10.0), 41)
    left.hist(used, bins=edges, color=SAFE, histtype="stepfilled")
    left.axvline(values.max(), color=TRUTH, lw=2,
                 label=tr("largest value {value} (left)").format(value=f"{values.max():g}"))
    left.set(xscale="log", xlabel=tr("chosen bound U"), ylabel=tr("runs"), ylim=(0, runs),
             title=tr("ε = {epsilon}: bounds chosen").format(epsilon=f"{epsilon:g}"))
    span = max(float(np.max(np.abs(errors))), 1e-9)
    right.hist(errors, bins=np.linspace(-span, span, 41), color=SAFE, histtype="stepfilled")
    right.axvline(0, color=TRUTH, lw=2, ls="--",
                  label=tr("true mean {mean} (right)").format(mean=f"{truth:.4g}"))
    median = float(np.median(np.abs(errors)))
    right.set(xlabel=tr("private − true average"), ylabel=tr("runs"),
              title=tr("median |error| {median}").format(median=f"{median:.3g}"))
    # The widget draws this figure once per frame (eight): a fixed layout, the constrained
    # layout's for the widest tick labels, skips the layout pass, about half of a draw.
    figure.set_layout_engine("none")
    left.set_position(_CLIP_BOUND_PANELS[0])
    right.set_position(_CLIP_BOUND_PANELS[1])
    # Below the panels: the histograms may fill either upper corner.
    figure.legend(loc="lower center", ncol=2, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Two histograms over {runs} runs of auto_avg on the {column} column of the Adult data "
        "at ε = {epsilon}, candidate bounds {grid}. Left: the clipping bound chosen (median "
        "{chosen}) against the largest value {largest}. Right: the private average minus the "
        "true mean {mean}, median |error| {median}.").format(
            runs=runs, column=tr(column), epsilon=f"{epsilon:g}", grid=tr(grid),
            chosen=f"{np.median(used):g}", largest=f"{values.max():g}", mean=f"{truth:.4g}",
            median=f"{median:.3g}"))


def auto_avg_error_figure(epsilons: Sequence[float] = (0.03, 0.1, 0.3, 1.0, 3.0),
                          columns: Sequence[str] = ("age", "capital-gain"), runs: int = 100,
                          seed: int = 0) -> Figure:
    """Median relative error of :func:`dpkit.svt.auto_avg` against ε, one line per column.

    A version that divides by a second noisy sum (:func:`dpkit.naive.auto_avg`) returns
    about 1.0 and so has a relative error near 100% at every ε (dashed line).
    """
    figure, (ax,) = new_figure(1, height=4.4)
    summaries = []
    for offset, column in enumerate(columns):
        values = _column(column)
        truth = float(values.mean())
        with unpadded():  # simulated runs for a figure, none published: no deadlines
            medians = [float(np.median(np.abs(auto_avg_runs(values, e, runs=runs,
                                                            rng=seeded(seed + offset))
                                              - truth))) / truth * 100 for e in epsilons]
        ax.plot(epsilons, medians, marker=MARKERS[offset % len(MARKERS)],
                label=tr("auto_avg, {column}").format(column=tr(column)),
                color=SAFE if offset == 0 else TRUTH)
        summaries.append(tr("{column} from {first}% to {last}%").format(
            column=tr(column), first=f"{medians[0]:.3g}", last=f"{medians[-1]:.3g}"))
    ax.axhline(100, color=NAIVE, ls="--", label=tr("dividing by a\nsecond noisy sum"))
    ax.set(xscale="log", yscale="log", xlabel=tr("ε (total)"),
           ylabel=tr("median |error|, % of true mean"),
           title=tr("auto_avg on Adult, {runs} runs per point").format(runs=runs))
    figure.legend(loc="outside lower center", ncol=2, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Log-log line chart of the median error of auto_avg on the Adult data, in percent of "
        "the true mean, {runs} runs per point, at total ε = {epsilons}: {summaries}. Dividing "
        "by a second noisy sum stays near 100% (dashed line).").format(
            runs=runs, epsilons=", ".join(f"{e:g}" for e in epsilons),
            summaries=tr("; ").join(summaries)))


def naive_cost_figure(epsilon: float = 1.0, max_queries: int = 50) -> Figure:
    """Privacy cost against the number of queries a search may examine (fixed in advance).

    Noising every answer costs nε when the search may examine n queries; AboveThreshold
    costs ε however many.
    """
    figure, (ax,) = new_figure(1)
    n = np.arange(1, max_queries + 1)
    ax.plot(n, n * epsilon, color=NAIVE, ls="--", label=tr("noise every answer: nε"))
    ax.plot(n, np.full(n.shape, epsilon), color=SAFE, label="AboveThreshold: ε")
    ax.set(xlabel=tr("queries the search may examine, n (fixed in advance)"),
           ylabel=tr("privacy cost (ε)"),
           title=tr("First query above a threshold, ε = {epsilon}").format(
               epsilon=f"{epsilon:g}"))
    ax.legend(frameon=False)
    return describe(figure, tr(
        "Line chart of the privacy cost of finding the first query above a threshold, against "
        "the number n of queries the search may examine, 1 to {n}, at ε = {epsilon}: noising "
        "every answer costs nε, {total} at n = {n}; AboveThreshold costs ε = {epsilon} however "
        "many.").format(n=max_queries, epsilon=f"{epsilon:g}",
                        total=f"{max_queries * epsilon:g}"))


def _true_text(value: float | None, joint: str) -> str:
    """``joint`` and a true ε as the audit figure writes it: ``∞``, a number, or, for
    ``None``, ": an exercise" (the value is left to the reader)."""
    if value is None:
        return tr(": an exercise")
    return joint + ("∞" if np.isinf(value) else f"{value:g}")


def audit_figure(results: Mapping[str, tuple[float, float, float | None]]) -> Figure:
    """Audited lower bounds on ε beside the claimed and true ε of each SVT variant.

    Parameters
    ----------
    results : mapping
        ``{label: (claimed ε, audited lower bound, true ε)}``; ``true`` may be ``inf``, or
        ``None`` to leave it to the reader (a chapter whose exercise asks for it): the
        figure then writes "true ε: an exercise".

    Returns
    -------
    Figure
        The bar chart, with a text description for screen readers.
    """
    figure, (ax,) = new_figure(1, height=4.4)
    labels = list(results)
    claimed = np.array([results[k][0] for k in labels])
    audited = np.array([results[k][1] for k in labels])
    broken = audited > claimed
    y = np.arange(len(labels))
    ax.barh(y[~broken], audited[~broken], color=SAFE, label=tr("audited lower bound"))
    if broken.any():
        ax.barh(y[broken], audited[broken], **hatched(NAIVE),
                label=tr("audited lower bound, above the claim"))
    ax.scatter(claimed, y, marker="|", s=300, color=BLACK, zorder=3, label=tr("claimed ε"))
    for i, key in enumerate(labels):
        text = tr("true ε") + _true_text(results[key][2], " = ")
        ax.text(max(audited[i], claimed[i]) + 0.08, i, text, va="center", fontsize=10,
                color=GREY)
    ax.set_yticks(y, [tr(key) for key in labels], fontsize=10)
    ax.invert_yaxis()
    ax.set(xlabel="ε", ylabel=tr("SVT variant"),
           xlim=(0, max(float(audited.max()), float(claimed.max())) * 1.45),
           title=tr("Audited ε, 95% confidence"))
    figure.legend(loc="outside lower center", ncol=1, fontsize=10, frameon=False)
    return describe(figure, tr(
        "Horizontal bar chart of the audited lower bound on ε, at 95% confidence, of each SVT "
        "variant beside its claimed ε: {variants}. {caught} of {count} are caught above their "
        "claim.").format(
            variants=tr("; ").join(
                tr("{variant}: claimed {claimed}, audited at least {audited}, true ε{true}")
                .format(variant=tr(key), claimed=f"{results[key][0]:g}",
                        audited=f"{results[key][1]:.2g}",
                        true=_true_text(results[key][2], " ")) for key in labels),
            caught=int(broken.sum()), count=len(labels)))


def stream_figure(answers: Sequence[float], labels: Sequence[float], threshold: float,
                  epsilon: float, seed: int = 0) -> Figure:
    """One run of AboveThreshold drawn: answers, noisy answers, threshold, noisy threshold.

    The noise is drawn here (floating-point Laplace from the seeded generator, for the
    picture only) with AboveThreshold's scales ``2/ε`` and ``4/ε``; the run stops at the
    first noisy answer at or above the noisy threshold. The threshold ``T`` is a wide pale
    band under the dashed noisy threshold, whose legend entry gives the noise ``τ``.

    Parameters
    ----------
    answers : sequence of float
        The true query answers ``q_i(D)`` in stream order.
    labels : sequence of float
        The x coordinate of each query (for instance the age it asks about).
    threshold : float
        The public threshold ``T``.
    epsilon : float
        AboveThreshold's ε.
    seed : int
        Seed of the picture's noise.
    """
    generator = seeded(seed).numpy_generator()
    noisy_threshold = threshold + generator.laplace(0.0, 2 / epsilon)
    noisy = np.asarray(answers, dtype=float) + generator.laplace(0.0, 4 / epsilon, len(answers))
    passed = np.flatnonzero(noisy >= noisy_threshold)
    stop = int(passed[0]) if passed.size else len(answers) - 1
    x = np.asarray(labels, dtype=float)
    figure, (ax,) = new_figure(1, height=3.6)
    ax.set_ylim(threshold - 25 / epsilon, max(float(np.max(answers)), threshold) + 15 / epsilon)
    ax.plot(x, answers, color=TRUTH, lw=2, marker=".", ms=5, label=tr("true answer $q_i(D)$"))
    ax.scatter(x[:stop + 1], noisy[:stop + 1], s=14, color=SAFE, zorder=3,
               label=tr("noisy answer (seen)"))
    ax.scatter(x[stop + 1:], noisy[stop + 1:], s=10, facecolors="none", edgecolors=GREY,
               label=tr("never examined"))
    # The true threshold as a wide pale band under the dashed noisy one: the two are often
    # closer than a line's width at this scale, and the legend gives the noise τ.
    ax.axhline(threshold, color=GREY, lw=5, alpha=0.45,
               label=tr("threshold T = {threshold}").format(threshold=f"{threshold:g}"))
    ax.axhline(noisy_threshold, color=NAIVE, ls="--",
               label=tr("noisy threshold T + τ (τ = {tau})").format(
                   tau=f"{noisy_threshold - threshold:+.1f}"))
    ax.axvline(x[stop], color=NAIVE, lw=1)
    ax.set(xlabel=tr("query (age a)"), ylabel=tr("answer"),
           title=tr("AboveThreshold at ε = {epsilon}: stops at a = {stop}").format(
               epsilon=f"{epsilon:g}", stop=f"{x[stop]:g}"))
    ax.legend(fontsize=10, frameon=False, loc="upper left")
    outcome = (tr("the run stops at a = {stop}, the first noisy answer at or above the noisy "
                  "threshold").format(stop=f"{x[stop]:g}") if passed.size
               else tr("no noisy answer reaches it"))
    return describe(figure, tr(
        "Chart of one run of AboveThreshold at ε = {epsilon} over {count} queries (ages "
        "{first} to {last}): the true answers go from {first_answer} to {last_answer}, the "
        "threshold is T = {threshold} and the noisy threshold {noisy}; {outcome}. Queries "
        "after it are never examined.").format(
            epsilon=f"{epsilon:g}", count=len(answers), first=f"{x[0]:g}", last=f"{x[-1]:g}",
            first_answer=f"{answers[0]:g}", last_answer=f"{answers[-1]:g}",
            threshold=f"{threshold:g}", noisy=f"{noisy_threshold:.4g}", outcome=outcome))


def clip_query_values(values: Sequence[float] | np.ndarray, bounds: Sequence[float],
                      epsilon: float) -> np.ndarray:
    """The clipping query ``q_U`` for each candidate ``U``, exactly as :mod:`dpkit.svt` computes it.

    ``q_U = sum(clip(v, 0, U)) - sum(clip(v, 0, U + 1))`` with each row's term rounded down
    to the comparison grid of AboveThreshold at ``epsilon``, returned as floats.
    """
    bits = grid_bits(2 / Fraction(epsilon))
    data = np.asarray(values, dtype=np.float64)
    units = clip_query_units(data, tuple(bounds), bits, max_rows=max(1, data.size))
    return np.array(units, dtype=float) / 2.0**bits


def clip_query_figure(columns: Sequence[str] = ("age", "capital-gain"),
                      epsilon: float = 1 / 3) -> Figure:
    """The curve ``q_U`` against ``U`` that :func:`dpkit.svt.choose_clip_bound` reads.

    One panel per Adult column, over :data:`dpkit.svt.DEFAULT_CLIP_BOUNDS` up to a little
    past the column's largest value, with the default threshold ``-20/ε``.
    """
    figure, axes = new_figure(len(columns), height=4.0)
    threshold = -2 * CLIP_THRESHOLD_SCALES / epsilon
    for ax, column in zip(axes, columns, strict=True):
        values = _column(column)
        bounds = [b for b in DEFAULT_CLIP_BOUNDS if b <= 2 * values.max()]
        q = clip_query_values(values, bounds, epsilon)
        positive = -q > 0  # q_U = 0 past the largest value: off a log axis
        ax.step(np.asarray(bounds)[positive], -q[positive], where="post", color=SAFE, lw=1.5,
                label=tr("$-q_U$ (≈ rows above U)"))
        ax.axhline(-threshold, color=NAIVE, ls="--",
                   label=tr("−threshold = 20/ε = {value}").format(value=f"{-threshold:g}"))
        ax.axvline(values.max(), color=TRUTH, ls=":",
                   label=tr("largest value {value}").format(value=f"{values.max():g}"))
        ax.set(xscale="log", yscale="log", xlabel=tr("candidate bound U"), ylabel="$-q_U$",
               title=tr(column))
    # One legend below the panels (the dotted line is each panel's largest value).
    figure.legend(*axes[0].get_legend_handles_labels()[0:1],
                  [tr("$-q_U$ (≈ rows above U)"),
                   tr("−threshold = 20/ε = {value}").format(value=f"{-threshold:g}"),
                   tr("largest value")], loc="outside lower center", ncol=2, fontsize=10,
                  frameon=False)
    return describe(figure, tr(
        "Log-log step chart of −q_U, about the number of rows above the candidate bound U, "
        "against U, one panel per Adult column ({columns}), with the threshold line at "
        "20/ε = {value} and the largest value of each column: {largest}.").format(
            columns=tr(", ").join(tr(column) for column in columns), value=f"{-threshold:g}",
            largest=tr(", ").join(f"{tr(column)} {_column(column).max():g}"
                                  for column in columns)))

