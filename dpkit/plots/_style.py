"""Shared look for the book's figures: one size, one palette, one way to make a Figure."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

#: Colours used across chapters: safe/private results, naive/unsafe ones, the truth.
SAFE = "#1f77b4"
NAIVE = "#d62728"
TRUTH = "#2ca02c"
GREY = "#7f7f7f"


#: Figures are drawn at this fraction of the nominal size passed to :func:`new_figure`, so
#: text (default 10 pt, and the explicit sizes the builders use) is 1/0.75 times larger
#: relative to the figure: a 6.4-inch-wide figure is drawn 4.8 inches wide.
SCALE = 0.75
#: Resolution of the figures :func:`new_figure` makes: 4.8 in × 160 dpi = 768 px, about the
#: width of the book's text column, so an image fills the column instead of two thirds of
#: it; on a 420-px phone screen it is shown at half size, and 10-pt text stays ~11 px tall.
DPI = 160


def new_figure(ncols: int = 1, *, width: float = 6.4, height: float = 3.6,
               sharey: bool = False, nrows: int = 1) -> tuple[Figure, list]:
    """Return a Figure (object-oriented API, no pyplot state) and a list of its axes.

    Parameters
    ----------
    ncols : int
        Number of side-by-side axes.
    width, height : float
        Nominal size in inches; the figure is drawn at :data:`SCALE` times this size and
        :data:`DPI` dots per inch, so that it fills the book's column and its text stays
        legible on a phone.
    sharey : bool
        Share the y axis between the axes.
    nrows : int
        Number of rows of axes (stacked panels read better on a phone than cramped
        side-by-side ones).

    Returns
    -------
    (Figure, list of Axes)
        The axes row by row.
    """
    figure = Figure(figsize=(width * SCALE, height * SCALE), dpi=DPI, layout="constrained")
    axes = figure.subplots(nrows, ncols, sharey=sharey, squeeze=False).ravel()
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
    return figure, list(axes)


def figure_png(figure: Figure, dpi: int = 72) -> bytes:
    """Render a matplotlib figure to PNG bytes.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : int
        The least resolution: the figure is rendered at ``max(dpi, figure.dpi)``, so a
        figure from :func:`new_figure` (160 dpi) always comes out about 768 px wide, the
        width of the book's column, whichever caller renders it.

    Returns
    -------
    bytes
        The PNG image; the same figure and ``dpi`` always give the same bytes.

    Raises
    ------
    TypeError
        If ``figure`` is not a matplotlib ``Figure``.
    """
    if not isinstance(figure, Figure):
        raise TypeError(f"the figure function must return a matplotlib.figure.Figure, "
                        f"got {type(figure).__name__}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=max(dpi, figure.dpi))
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
