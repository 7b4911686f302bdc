"""Shared look for the book's figures: one size, one palette, one way to make a Figure, and
one way to give it a text alternative.

The palette is Okabe and Ito's colour-universal design set (Okabe & Ito 2008, "Color
Universal Design", https://jfly.uni-koeln.de/color/), with a dark grey and black: every pair
stays apart (CIEDE2000 ΔE ≥ 10) for readers with normal vision, deuteranopia, protanopia and
tritanopia (simulated as Machado et al. 2009), and every colour has a contrast of at least 3:1
against the white page (WCAG 2.2, success criterion 1.4.11); ``tests/test_plots_a11y.py``
checks both. Colour is never the only cue: series that a legend tells apart also differ in
line style, marker or hatch, and that test checks it too.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import matplotlib
from matplotlib import font_manager
from matplotlib import image as mimage
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from dpkit.i18n import language, tr

#: Safe, private results (Okabe–Ito blue).
SAFE = "#0072B2"
#: Naive, unsafe results (Okabe–Ito vermillion).
NAIVE = "#D55E00"
#: The true, noise-free value (Okabe–Ito bluish green).
TRUTH = "#009E73"
#: A third series beside safe and naive (Okabe–Ito reddish purple).
ACCENT = "#CC79A7"
#: Reference lines and notes (contrast 5.7:1 on white, enough for text too).
GREY = "#666666"
#: Bounds and markers that must stand out from every series.
BLACK = "#000000"
#: Line styles for series of one colour, or to double the colours of a few series.
LINESTYLES = ("-", "--", "-.", ":")
#: Markers for series drawn with points, in the same role as :data:`LINESTYLES`.
MARKERS = ("o", "s", "^", "D")
#: Every colour a figure may draw with; any two may appear together.
PALETTE = {"safe": SAFE, "naive": NAIVE, "truth": TRUTH, "accent": ACCENT, "grey": GREY,
           "black": BLACK}


def area(colour: str, alpha: float = 0.2) -> dict[str, Any]:
    """Keyword arguments for a translucent area (a band, an interval, a histogram) with a
    solid outline, so its extent reads against the page (3:1) however light its fill.

    Parameters
    ----------
    colour : str
        A colour of :data:`PALETTE`.
    alpha : float
        Opacity of the fill.

    Returns
    -------
    dict
        ``facecolor``, ``edgecolor`` and ``linewidth`` for a matplotlib patch or collection.

    Examples
    --------
    >>> area(SAFE, 0.5)
    {'facecolor': ('#0072B2', 0.5), 'edgecolor': '#0072B2', 'linewidth': 1.0}
    """
    return {"facecolor": (colour, alpha), "edgecolor": colour, "linewidth": 1.0}


def hatched(colour: str) -> dict[str, Any]:
    """Keyword arguments for solid bars of ``colour`` with white diagonal hatching: the
    second of two bar series, told apart from the first without its hue.

    Parameters
    ----------
    colour : str
        A colour of :data:`PALETTE`.

    Returns
    -------
    dict
        ``color``, ``hatch`` and ``hatchcolor`` for :meth:`~matplotlib.axes.Axes.bar`.
    """
    return {"color": colour, "hatch": "///", "hatchcolor": "white"}


#: Figures are drawn at this fraction of the nominal size passed to :func:`new_figure`, so
#: text (default 10 pt, and the explicit sizes the builders use) is 1/0.75 times larger
#: relative to the figure: a 6.4-inch-wide figure is drawn 4.8 inches wide.
SCALE = 0.75
#: Resolution of the figures :func:`new_figure` makes: 4.8 in × 160 dpi = 768 px, about the
#: width of the book's text column, so an image fills the column instead of two thirds of
#: it; on a 420-px phone screen it is shown at half size, and 10-pt text stays ~11 px tall.
DPI = 160


#: The smallest font size, in points, a builder may give any text (tick labels, legends,
#: notes): a figure drawn by :func:`new_figure` (768 px wide) is shown 384 px wide in a
#: 420-px phone's column, where 10-pt text is 10 × 160 / 72 / 2 ≈ 11.1 px, above the 11 px
#: the book holds every text to (``tests/test_browser.py`` measures it in the pages).
MIN_FONT_SIZE = 10.0


#: Fonts that draw what matplotlib's default (DejaVu Sans) cannot, per language: Chinese text
#: in Noto Sans CJK SC (Debian's fonts-noto-cjk). Latin and Greek letters stay in DejaVu
#: Sans, so the formulas look the same in both editions; matplotlib takes a glyph missing
#: from the first family from the next. Mathtext (``$...$``) has its own fonts and no
#: fallback: no translation puts Chinese inside it (:mod:`dpkit.i18n`).
LANGUAGE_FONTS = {"en": (), "zh": ("Noto Sans CJK SC",)}
#: Where Debian's fonts-noto-cjk puts the font, for a matplotlib font cache made before the
#: package was installed.
_CJK_FILE = "NotoSansCJK-Regular.ttc"


def use_language_fonts() -> list[str]:
    """Set matplotlib's font family for the current language (:func:`dpkit.i18n.language`).

    :func:`new_figure` calls it, so a figure's text is drawn with fonts that have its glyphs.
    A font of :data:`LANGUAGE_FONTS` that matplotlib's font cache lacks (the cache predates
    the font's installation) is added from the system's font files.

    Returns
    -------
    list of str
        The family list now in ``matplotlib.rcParams["font.family"]``: ``["sans-serif"]``
        (matplotlib's default) in English, DejaVu Sans then the language's fonts otherwise.
    """
    extra = LANGUAGE_FONTS[language()]
    if not extra:
        families = ["sans-serif"]
    else:
        known = {entry.name for entry in font_manager.fontManager.ttflist}
        if not set(extra) <= known:
            for path in font_manager.findSystemFonts():
                if path.endswith(_CJK_FILE):
                    font_manager.fontManager.addfont(path)
        families = ["DejaVu Sans", *extra]
    if matplotlib.rcParams["font.family"] != families:
        matplotlib.rcParams["font.family"] = families
    return families


class BookFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that carries a text alternative.

    A builder sets :attr:`alt` with :func:`describe`, from the same parameters it draws
    with, so the description stays true. Returned by a notebook cell, the figure shows as an
    ``<img>`` with that ``alt`` (``text/html``, which the HTML book prefers) and as a plain
    PNG (``image/png``, for every other front end).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The text alternative; empty until :func:`describe` sets it.
        self.alt = ""

    def _repr_mimebundle_(self, include: Any = None,
                          exclude: Any = None) -> tuple[dict[str, str], dict]:
        """IPython's display hook: the figure as PNG and as an ``<img>`` with its ``alt``."""
        png = figure_png(self, dpi=100)
        return ({"image/png": base64.b64encode(png).decode("ascii"),
                 "text/html": image_html(png, alt_text(self), smallest_text_px(self, 100))},
                {})


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

    The fonts follow the language of :mod:`dpkit.i18n` (:func:`use_language_fonts`).

    Returns
    -------
    (BookFigure, list of Axes)
        The figure (give it a text alternative with :func:`describe`) and its axes row by
        row.
    """
    extra = use_language_fonts() != ["sans-serif"]
    figure = BookFigure(figsize=(width * SCALE, height * SCALE), dpi=DPI, layout="constrained")
    if extra:
        # The constrained layout measures text with the first font's metrics (DejaVu Sans);
        # Noto Sans CJK's lines are taller (1.45 em against 1.17 em), so a rotated axis label
        # in Chinese would stick out by up to 8 px: twice the default padding, in inches.
        figure.get_layout_engine().set(w_pad=0.1, h_pad=0.1)
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
        The PNG image; the same figure and ``dpi`` always give the same bytes, the bytes
        ``figure.savefig(..., format="png", dpi=max(dpi, figure.dpi))`` writes (with
        matplotlib's default ``savefig.*`` settings).

    Raises
    ------
    TypeError
        If ``figure`` is not a matplotlib ``Figure``.

    Notes
    -----
    The figure is drawn once, on an Agg canvas (its layout engine runs inside that draw),
    and the pixels are encoded as :meth:`~matplotlib.figure.Figure.savefig` encodes them.
    ``savefig`` draws a figure with a layout engine twice (a pass that runs the layout
    without painting, then the image); the static widgets render every frame, so the
    saved pass adds up.
    """
    if not isinstance(figure, Figure):
        raise TypeError(f"the figure function must return a matplotlib.figure.Figure, "
                        f"got {type(figure).__name__}")
    resolution = max(dpi, figure.dpi)
    canvas, old_dpi = figure.canvas, figure.dpi
    try:
        agg = FigureCanvasAgg(figure)  # sets figure.canvas; put back below
        figure.dpi = resolution
        agg.draw()
        buffer = io.BytesIO()
        mimage.imsave(buffer, agg.buffer_rgba(), format="png", origin="upper",
                      dpi=resolution)
    finally:
        figure.dpi = old_dpi
        figure.set_canvas(canvas)
    return buffer.getvalue()


def smallest_text_px(figure: Figure, dpi: int = 72) -> float | None:
    """The font size of the smallest visible text of ``figure``, in pixels of the image
    :func:`figure_png` renders at ``dpi``.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : int
        As for :func:`figure_png` (the image is rendered at ``max(dpi, figure.dpi)``).

    Returns
    -------
    float or None
        The least font size (points × rendering dpi / 72) over every visible, non-blank text
        (titles, axis and tick labels, notes, legends); ``None`` for a figure without text.
        Shown ``w`` px wide, an image ``W`` px wide has text of at least this × w / W px.

    Examples
    --------
    >>> figure, (ax,) = new_figure()
    >>> _ = ax.set_title("Tails", fontsize=12)
    >>> _ = ax.set(xticks=[], yticks=[])
    >>> round(smallest_text_px(figure, dpi=72), 2)  # 12 pt at 160 dpi
    26.67
    """
    sizes = [text.get_fontsize() for text in figure.findobj(Text)
             if text.get_visible() and text.get_text().strip()]
    return min(sizes) * max(dpi, figure.dpi) / 72 if sizes else None


def describe(figure: Figure, text: str) -> Figure:
    """Give ``figure`` its text alternative and return it.

    Parameters
    ----------
    figure : BookFigure
        A figure from :func:`new_figure`.
    text : str
        What a reader who cannot see the figure needs: the kind of chart, what it shows at
        the parameters it was drawn with, and its main finding, in one to three sentences.

    Returns
    -------
    BookFigure
        ``figure`` itself.

    Raises
    ------
    TypeError
        If ``figure`` is not a :class:`BookFigure`.
    ValueError
        If ``text`` is blank.
    """
    if not isinstance(figure, BookFigure):
        raise TypeError(f"figure must be a BookFigure (from new_figure), "
                        f"got {type(figure).__name__}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-blank description, got {text!r}")
    figure.alt = " ".join(text.split())
    return figure


def alt_text(figure: Figure) -> str:
    """The text alternative of ``figure``.

    Parameters
    ----------
    figure : matplotlib.figure.Figure

    Returns
    -------
    str
        The description a builder gave with :func:`describe`; for any other figure, one read
        from its titles and axis labels (never empty), in the language of :mod:`dpkit.i18n`.

    Examples
    --------
    >>> figure, (ax,) = new_figure()
    >>> _ = ax.set(title="Tails", xlabel="t", ylabel="P[|noise| > t]")
    >>> alt_text(figure)
    'Chart: Tails (horizontal axis: t; vertical axis: P[|noise| > t]).'
    >>> alt_text(describe(figure, "Three tails of Laplace noise."))
    'Three tails of Laplace noise.'
    """
    text = getattr(figure, "alt", "")
    if text:
        return text
    parts = []
    for ax in figure.axes:
        axes = tr("; ").join(tr(name).format(label=label) for name, label in
                             (("horizontal axis: {label}", ax.get_xlabel()),
                              ("vertical axis: {label}", ax.get_ylabel()))
                             if label)
        title = " ".join(ax.get_title().split())
        parts.append(tr("{title} ({axes})").format(title=title, axes=axes) if title and axes
                     else title or axes)
    described = tr("; ").join(part for part in parts if part)
    return tr("Chart: {described}.").format(described=described) if described else tr("Chart.")



def image_html(png: bytes, alt: str, text_px: float | None = None) -> str:
    """An ``<img>`` element showing ``png`` (inline, as a data URL) with ``alt`` as its text.

    Parameters
    ----------
    png : bytes
        A PNG image, for instance from :func:`figure_png`.
    alt : str
        Its text alternative (HTML-escaped here).
    text_px : float, optional
        The size of the image's smallest text in its own pixels (:func:`smallest_text_px`),
        written into the element as ``data-text-px`` so that a browser test can tell how
        large that text is where the page shows the image.

    Returns
    -------
    str
        The element; it never grows past the width of its container.

    Examples
    --------
    >>> image_html(b"\\x89PNG", 'density of "f(D)" < 1')[:61]
    '<img alt="density of &quot;f(D)&quot; &lt; 1" src="data:image'
    """
    data = base64.b64encode(png).decode("ascii")
    size = "" if text_px is None else f' data-text-px="{text_px:.2f}"'
    return (f'<img alt="{html.escape(alt, quote=True)}" src="data:image/png;base64,{data}"'
            f'{size} style="max-width: 100%; height: auto;">')


def register_ipython_display() -> bool:
    """Show a :class:`~matplotlib.figure.Figure` returned by a cell as a PNG image.

    Figures built without ``pyplot`` are displayed as text (``<Figure size …>``) unless a
    frontend registered a formatter for them (``%matplotlib inline`` does). This registers
    one when running under IPython and none exists; it does nothing elsewhere. A
    :class:`BookFigure` is always left to its own ``_repr_mimebundle_`` (a formatter for
    its class, which returns ``None``, takes precedence over one for every ``Figure``, such
    as the one ``%matplotlib inline`` registers, before or after this call), so such a
    figure is rendered once, with its ``alt``, not a second time by the frontend's
    formatter (``savefig`` with ``bbox_inches="tight"``: two more draws of the figure).

    Returns
    -------
    bool
        Whether a formatter for every ``Figure`` was registered.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        return False
    shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["image/png"]
    # ``%matplotlib inline`` replaces the formatter of Figure only: this one stays.
    formatter.for_type(BookFigure, _png_unless_book_figure)
    try:
        formatter.lookup_by_type(Figure)
        return False
    except KeyError:
        formatter.for_type(Figure, _png_unless_book_figure)
        return True


def _png_unless_book_figure(figure: Figure) -> bytes | None:
    """IPython's PNG formatter for figures: ``None`` (use the figure's own mime bundle) for a
    :class:`BookFigure`, else its PNG."""
    return None if isinstance(figure, BookFigure) else figure_png(figure, dpi=100)
