"""Shared look for the book's figures: one size, one palette, one way to make a Figure."""

from __future__ import annotations

import io

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


def figure_png(figure: Figure, dpi: int = 72) -> bytes:
    """Render a matplotlib figure to PNG bytes.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : int
        Resolution; 72 keeps a 6.4 × 3.6 in figure near 20–40 kB.

    Raises
    ------
    TypeError
        If ``figure`` is not a matplotlib ``Figure``.
    """
    if not isinstance(figure, Figure):
        raise TypeError(f"the figure function must return a matplotlib.figure.Figure, "
                        f"got {type(figure).__name__}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def register_ipython_display() -> bool:
    """Show a :class:`~matplotlib.figure.Figure` returned by a cell as a PNG image.

    Figures built without ``pyplot`` are displayed as text (``<Figure size …>``) unless a
    frontend registered a formatter for them (``%matplotlib inline`` does). This registers
    one when running under IPython and none exists; it does nothing elsewhere.

    Returns
    -------
    bool
        Whether a formatter was registered.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        return False
    shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        formatter.lookup_by_type(Figure)
        return False
    except KeyError:
        formatter.for_type(Figure, lambda figure: figure_png(figure, dpi=100))
        return True
