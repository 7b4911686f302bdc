"""Shared look for the book's figures: one size, one palette, one way to make a Figure."""

from __future__ import annotations

from matplotlib.figure import Figure

#: Colours used across chapters: safe/private results, naive/unsafe ones, the truth.
SAFE = "#1f77b4"
NAIVE = "#d62728"
TRUTH = "#2ca02c"
GREY = "#7f7f7f"


def new_figure(ncols: int = 1, *, width: float = 6.4, height: float = 3.6,
               sharey: bool = False) -> tuple[Figure, list]:
    """Return a Figure (object-oriented API, no pyplot state) and a list of its axes."""
    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.subplots(1, ncols, sharey=sharey, squeeze=False)[0]
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
    return figure, list(axes)
