"""Figures for the sparse vector technique chapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from dpkit.datasets import load_adult
from dpkit.plots._style import GREY, NAIVE, SAFE, TRUTH, new_figure
from dpkit.rng import seeded
from dpkit.svt import DEFAULT_CLIP_BOUNDS, auto_avg_runs, clip_bound_runs

__all__ = ["CLIP_GRIDS", "audit_figure", "auto_avg_error_figure", "clip_bound_figure",
           "naive_cost_figure", "range_queries_figure"]

#: Candidate-bound grids offered by the chapter's widget.
CLIP_GRIDS: dict[str, tuple[int, ...]] = {
    "+9% steps (default)": DEFAULT_CLIP_BOUNDS,
    "powers of 2": tuple(2**k for k in range(41)),
    "powers of 10": tuple(10**k for k in range(13)),
}


def _column(column: str) -> np.ndarray:
    return load_adult()[column].to_numpy(dtype=np.float64)


def clip_bound_figure(epsilon: float = 1.0, grid: str = "+9% steps (default)",
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
    chosen = clip_bound_runs(values, epsilon / 3, bounds=candidates, runs=runs,
                             rng=seeded(seed))
    used = np.array([float(candidates[-1] if b is None else b) for b in chosen])
    averages = auto_avg_runs(values, epsilon, bounds=candidates, runs=runs,
                             rng=seeded(seed + 1))
    truth = float(values.mean())
    errors = averages - truth

    figure, (left, right) = new_figure(2)
    levels, counts = np.unique(used, return_counts=True)
    left.bar(np.arange(levels.size), counts, color=SAFE)
    left.set_xticks(np.arange(levels.size), [f"{v:g}" for v in levels],
                    rotation=60 if levels.size > 4 else 0, fontsize=7)
    left.set(xlabel="chosen bound b", ylabel="runs",
             title=f"largest {column}: {values.max():g}", ylim=(0, runs))
    span = max(float(np.max(np.abs(errors))), 1e-9)
    right.hist(errors, bins=np.linspace(-span, span, 41), color=SAFE)
    right.axvline(0, color=TRUTH, lw=2, label=f"true mean {truth:.4g}")
    median = float(np.median(np.abs(errors)))
    right.set(xlabel="private average − true average", ylabel="runs",
              title=f"ε = {epsilon:g}: median |error| {median:.3g}")
    right.legend(loc="upper left", fontsize=8, frameon=False)
    return figure


def auto_avg_error_figure(epsilons: Sequence[float] = (0.03, 0.1, 0.3, 1.0, 3.0),
                          columns: Sequence[str] = ("age", "capital-gain"), runs: int = 100,
                          seed: int = 0) -> Figure:
    """Median relative error of :func:`dpkit.svt.auto_avg` against ε, one line per column.

    The widely copied version that divides by a second noisy sum returns about 1.0 and so
    has a relative error near 100% at every ε (dashed line).
    """
    figure, (ax,) = new_figure(1)
    for offset, column in enumerate(columns):
        values = _column(column)
        truth = float(values.mean())
        medians = [float(np.median(np.abs(auto_avg_runs(values, e, runs=runs,
                                                        rng=seeded(seed + offset)) - truth)))
                   / truth * 100 for e in epsilons]
        ax.plot(epsilons, medians, "o-", label=column,
                color=SAFE if offset == 0 else TRUTH)
    ax.axhline(100, color=NAIVE, ls="--", label="dividing by a second noisy sum")
    ax.set(xscale="log", yscale="log", xlabel="ε (total)",
           ylabel="median |error| (% of the true mean)",
           title=f"auto_avg on Adult, {runs} runs per point")
    ax.legend(fontsize=8, frameon=False)
    return figure


def naive_cost_figure(epsilon: float = 1.0, max_queries: int = 50) -> Figure:
    """Privacy cost against the number of queries examined: nε for per-query noise, ε for SVT."""
    figure, (ax,) = new_figure(1)
    n = np.arange(1, max_queries + 1)
    ax.plot(n, n * epsilon, color=NAIVE, label="noise every answer: nε")
    ax.plot(n, np.full(n.shape, epsilon), color=SAFE, label="AboveThreshold: ε")
    ax.set(xlabel="queries examined n", ylabel="privacy cost (ε)",
           title=f"Finding the first query above a threshold, ε = {epsilon:g}")
    ax.legend(frameon=False)
    return figure


def audit_figure(results: Mapping[str, tuple[float, float, float]]) -> Figure:
    """Audited lower bounds on ε beside the claimed and true ε of each SVT variant.

    Parameters
    ----------
    results : mapping
        ``{label: (claimed ε, audited lower bound, true ε)}``; ``true`` may be ``inf``.
    """
    figure, (ax,) = new_figure(1, height=3.8)
    labels = list(results)
    claimed = np.array([results[k][0] for k in labels])
    audited = np.array([results[k][1] for k in labels])
    broken = audited > claimed
    y = np.arange(len(labels))
    ax.barh(y, audited, color=np.where(broken, NAIVE, SAFE), label="audited lower bound")
    ax.scatter(claimed, y, marker="|", s=300, color="black", zorder=3, label="claimed ε")
    for i, key in enumerate(labels):
        true = results[key][2]
        text = "true ε = ∞" if np.isinf(true) else f"true ε = {true:g}"
        ax.text(max(audited[i], claimed[i]) + 0.08, i, text, va="center", fontsize=8,
                color=GREY)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="ε", xlim=(0, max(float(audited.max()), float(claimed.max())) * 1.45),
           title="What the audit certifies (95% confidence)")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return figure


def range_queries_figure(labels: Sequence[str], true_counts: Sequence[float],
                         released: Mapping[int, float], threshold: float) -> Figure:
    """True counts per range, the threshold, and the noisy counts Sparse chose to release."""
    figure, (ax,) = new_figure(1)
    x = np.arange(len(labels))
    ax.bar(x, true_counts, color=GREY, alpha=0.5, label="true count")
    picked = sorted(released)
    ax.scatter(picked, [released[i] for i in picked], color=SAFE, zorder=3,
               label="released (noisy) count")
    ax.axhline(threshold, color=NAIVE, ls="--", label=f"threshold {threshold:g}")
    ax.set_xticks(x, labels, rotation=45, fontsize=8)
    ax.set(xlabel="age band", ylabel="people")
    ax.legend(fontsize=8, frameon=False)
    return figure
