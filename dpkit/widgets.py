"""Sliders and choices that redraw a figure, in a live kernel and in the static rendered book.

One builder, :func:`explore`, serves every chapter. It takes a pure figure function from
:mod:`dpkit.plots` and a :class:`Param` per control (a slider or radio buttons), and works
in two modes:

``live``
    In a running kernel (a student's notebook): moving a control calls the figure function
    and shows the new image.
``static``
    In the built book, where no kernel runs: every point of the controls' grid is rendered
    ahead of time and the frames are nested in :class:`ipywidgets.Stack` widgets whose
    ``selected_index`` is linked client-side (:func:`ipywidgets.jslink`) to the control's
    ``index``. The page's widget manager switches frames in the browser, so the control and
    the figure move together with no kernel and no network.

A :class:`Param` whose values are numbers with short labels is a slider
(:class:`ipywidgets.SelectionSlider`); one whose values are categories (any value that is
not a number, or a label longer than :data:`SLIDER_LABEL_CHARS` characters, which a
slider's readout would cut) is a row of radio buttons (:class:`ipywidgets.RadioButtons`),
which shows every choice in full at any width and is reached with Tab and moved with the
arrow keys. ``Param(kind=...)`` overrides the choice.

The mode comes from the ``mode`` argument, else from the environment variable
``DPKIT_WIDGET_MODE`` (``make book`` and ``make test`` set it to ``static``), else ``live``.
No mathematics lives here: the figure function does all the work. The controls' labels and
value labels are shown in the language of :mod:`dpkit.i18n` (the figures follow it too).

Each frame is an ``<img>`` with a text alternative (an :class:`ipywidgets.HTML` widget:
:class:`ipywidgets.Image` has no ``alt``): the description the figure's builder attached
(:func:`dpkit.plots.alt_text`), which names the parameters the frame was drawn with, or, for a
figure without one, the controls' settings followed by the figure's titles and axis labels.

:func:`glue` records a value for the book's ``{glue}`` roles, as myst-nb's ``glue`` does,
without its import of nbformat (and jsonschema), which costs a chapter seconds.
"""

from __future__ import annotations

import itertools
import numbers
import os
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
from IPython.core.formatters import format_display_data
from IPython.display import display as _display
from matplotlib.figure import Figure

from dpkit.i18n import tr
from dpkit.plots import alt_text, figure_png, image_html, smallest_text_px

__all__ = ["GLUE_PREFIX", "MAX_FRAMES", "SLIDER_LABEL_CHARS", "Param", "explore", "figure_png",
           "glue", "widget_mode"]

#: The most frames a static widget may embed (each is a PNG of ~20–60 kB).
MAX_FRAMES = 48
#: The longest value label a slider shows beside its track: its readout is 148 px wide (the
#: widgets' short inline width), about 18 characters of its 13-px text, and cuts longer
#: labels; a Param with a longer label is shown as radio buttons (``kind="auto"``).
SLIDER_LABEL_CHARS = 16
#: The MIME-type prefix of a value glued without being shown (myst-nb's ``GLUE_PREFIX``, the
#: papermill record format myst-nb reads).
GLUE_PREFIX = "application/papermill.record/"
_MODES = ("live", "static")
_KINDS = ("auto", "slider", "choice")


@dataclass(frozen=True)
class Param:
    """One control: a keyword argument of the figure function and the values it may take.

    Parameters
    ----------
    name : str
        The keyword argument of the figure function this control sets.
    values : sequence
        The values to choose from, in order (at least one).
    label : str, optional
        The control's label (defaults to ``name``); Unicode such as ``"ε"`` is fine.
    value : optional
        The initial value; must be one of ``values`` (defaults to the middle one).
    format : callable, optional
        Turns a value into the text shown for it (defaults to ``str``, with floats shown
        by ``:g``).
    kind : {"auto", "slider", "choice"}
        ``"slider"``: a :class:`ipywidgets.SelectionSlider` whose readout shows the value.
        ``"choice"``: :class:`ipywidgets.RadioButtons`, every choice shown in full (for
        categories, or labels too long for a slider's readout). ``"auto"`` (the default):
        ``"choice"`` if a value is not a real number (``bool`` counts as a category) or a
        label is longer than :data:`SLIDER_LABEL_CHARS` characters, else ``"slider"``.

    Raises
    ------
    ValueError
        If ``name`` is not an identifier, ``values`` is empty, ``value`` is not one of them
        or ``kind`` is not one of ``"auto"``, ``"slider"``, ``"choice"``.

    Examples
    --------
    >>> Param("epsilon", [0.5, 1.0, 2.0], label="ε").control
    'slider'
    >>> Param("column", ["age", "capital-gain"]).control
    'choice'
    >>> Param("grid", [1, 2], kind="sliders")
    Traceback (most recent call last):
    ...
    ValueError: Param 'grid': kind must be one of ('auto', 'slider', 'choice'), got 'sliders'
    """

    name: str
    values: Sequence[Any]
    label: str | None = None
    value: Any = None
    format: Callable[[Any], str] | None = field(default=None, compare=False)
    kind: str = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Param name must be a Python identifier, got {self.name!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"Param {self.name!r}: kind must be one of {_KINDS}, "
                             f"got {self.kind!r}")
        values = tuple(self.values)
        if not values:
            raise ValueError(f"Param {self.name!r}: values must not be empty")
        object.__setattr__(self, "values", values)
        if self.value is not None and self.value not in values:
            raise ValueError(f"Param {self.name!r}: value must be one of {list(values)}, "
                             f"got {self.value!r}")

    @property
    def initial_index(self) -> int:
        """Index of the initial value in :attr:`values`."""
        if self.value is None:
            return (len(self.values) - 1) // 2
        return self.values.index(self.value)

    def labels(self) -> list[str]:
        """The text shown for each value, in the language of :mod:`dpkit.i18n`."""
        fmt = self.format or (lambda v: f"{v:g}" if isinstance(v, float) else str(v))
        return [tr(fmt(v)) for v in self.values]

    @property
    def caption(self) -> str:
        """The control's label (``label``, else ``name``), in the language of
        :mod:`dpkit.i18n`."""
        return tr(self.label or self.name)

    @property
    def control(self) -> str:
        """The control shown: ``"slider"`` or ``"choice"`` (``kind``, with ``"auto"``
        resolved as the class docstring says)."""
        if self.kind != "auto":
            return self.kind
        numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                      for v in self.values)
        short = all(len(label) <= SLIDER_LABEL_CHARS for label in self.labels())
        return "slider" if numeric and short else "choice"


def widget_mode(mode: str | None = None) -> str:
    """Return the widget mode: ``mode`` if given, else ``$DPKIT_WIDGET_MODE``, else ``"live"``.

    Raises
    ------
    ValueError
        If the mode (argument or environment variable) is not ``"live"`` or ``"static"``.

    Examples
    --------
    >>> widget_mode("static")
    'static'
    >>> widget_mode("print")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of ('live', 'static'), got 'print'
    """
    source = "mode"
    if mode is None:
        mode, source = os.environ.get("DPKIT_WIDGET_MODE", "live"), "DPKIT_WIDGET_MODE"
    if mode not in _MODES:
        raise ValueError(f"{source} must be one of {_MODES}, got {mode!r}")
    return mode


def _control(param: Param, label_width: str = "initial",
             ) -> widgets.SelectionSlider | widgets.RadioButtons:
    # Both have the ``index`` the Stacks are linked to (static) and observed by (live).
    # A widget's sliders share one label width, so that their tracks line up.
    common = {"options": param.labels(), "index": param.initial_index,
              "description": param.caption,
              "style": {"description_width": "initial" if param.control == "choice"
                        else label_width}}
    if param.control == "choice":
        return widgets.RadioButtons(**common, layout=widgets.Layout(width="auto",
                                                                    max_width="100%"))
    return widgets.SelectionSlider(**common, continuous_update=True,
                                   layout=widgets.Layout(width="100%", max_width="420px"))


def _width(text: str) -> int:
    """The width of ``text`` in digit widths: 2 for a wide (East Asian) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _frame(html: str) -> widgets.HTML:
    # The <img> is scaled down to the width of the page (never up): a figure is ~768 px
    # wide, the book's column about as wide, a phone's screen narrower.
    return widgets.HTML(value=html, layout=widgets.Layout(max_width="100%"))


def explore(figure_fn: Callable[..., Figure], *params: Param,
            fixed: Mapping[str, Any] | None = None, mode: str | None = None,
            dpi: int = 72) -> widgets.Widget:
    """Build controls that redraw ``figure_fn``, live in a kernel or pre-rendered for the book.

    Parameters
    ----------
    figure_fn : callable
        A pure function returning a :class:`matplotlib.figure.Figure`; called as
        ``figure_fn(**fixed, **{p.name: value for each Param})``. It must be deterministic
        (use :func:`dpkit.rng.seeded` for any randomness) so the book shows stable frames.
    *params : Param
        One per control, a slider or radio buttons (see :class:`Param`; at least one).
    fixed : mapping, optional
        Keyword arguments passed unchanged on every call.
    mode : {"live", "static"}, optional
        Overrides :func:`widget_mode`.
    dpi : int
        Resolution of the images.

    Returns
    -------
    ipywidgets.VBox
        The controls above the figure, an :class:`ipywidgets.HTML` holding an ``<img>`` with
        the frame's text alternative. In static mode the figure is a tree of
        :class:`ipywidgets.Stack` widgets (one level per control) of such frames.

    Raises
    ------
    ValueError
        If no Param is given, two share a name, or the static grid has more than
        :data:`MAX_FRAMES` frames.
    TypeError
        If ``figure_fn`` does not return a ``Figure``.
    """
    if not params:
        raise ValueError("explore needs at least one Param")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"Param names must be distinct, got {names}")
    fixed = dict(fixed or {})
    clash = set(names) & set(fixed)
    if clash:
        raise ValueError(f"{sorted(clash)} given both as Param and in fixed")

    def render(indices: Sequence[int]) -> str:
        kwargs = {p.name: p.values[i] for p, i in zip(params, indices, strict=True)}
        figure = figure_fn(**fixed, **kwargs)
        png = figure_png(figure, dpi=dpi)
        text_px = smallest_text_px(figure, dpi=dpi)
        if getattr(figure, "alt", ""):
            return image_html(png, alt_text(figure), text_px)
        settings = ", ".join(f"{p.caption} = {p.labels()[i]}"
                             for p, i in zip(params, indices, strict=True))
        return image_html(png, f"{settings}. {alt_text(figure)}", text_px)

    # Wide enough for the longest slider label (1ch is a digit's width, a Chinese character
    # two; + 1 for margin).
    longest = max((_width(p.caption) for p in params if p.control == "slider"), default=0)
    controls = [_control(p, f"{longest + 1}ch") for p in params]
    if widget_mode(mode) == "live":
        frame = _frame(render([p.initial_index for p in params]))

        def redraw(_change: object = None) -> None:
            frame.value = render([s.index for s in controls])

        for control in controls:
            control.observe(redraw, names="index")
        return widgets.VBox([*controls, frame])

    count = 1
    for p in params:
        count *= len(p.values)
    if count > MAX_FRAMES:
        raise ValueError(f"a static widget may embed at most {MAX_FRAMES} frames; the grid "
                         f"{' x '.join(str(len(p.values)) for p in params)} has {count}")
    frames = {idx: _frame(render(idx))
              for idx in itertools.product(*(range(len(p.values)) for p in params))}

    def stack(level: int, prefix: tuple[int, ...]) -> widgets.Widget:
        if level == len(params):
            return frames[prefix]
        node = widgets.Stack([stack(level + 1, (*prefix, i))
                              for i in range(len(params[level].values))],
                             selected_index=params[level].initial_index)
        # The link lives in the kernel's widget registry, so it is embedded with the page.
        widgets.jslink((controls[level], "index"), (node, "selected_index"))
        return node

    return widgets.VBox([*controls, stack(0, ())])


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Record ``variable`` under ``name`` for the book's ``{glue}`` roles and directives.

    The same output as ``myst_nb.glue`` (myst-nb's ``myst_nb.ext.glue.glue``): the value's
    display data with ``scrapbook`` metadata, which the book build reads from the executed
    notebook. myst-nb's function imports nbformat, and with it jsonschema and its format
    checkers, on its first call: seconds of a chapter's time budget for no work.

    Parameters
    ----------
    name : str
        The key the prose refers to (``{glue:text}`name```).
    variable : object
        The value; what is stored is how IPython displays it.
    display : bool
        Also show the value in the cell's output (``False``: stored only).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        If ``name`` is not a string.

    Examples
    --------
    >>> glue("answer", 42, display=False)  # outside a kernel there is nothing to record
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {name!r} of type {type(name).__name__}")
    bundle, metadata = format_display_data(variable)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    _display({prefix + key: value for key, value in bundle.items()}, raw=True,
             metadata=metadata)
