"""Accessibility of the book's figures (WCAG 2.2 AA): colours that survive colour-vision
deficiencies, contrast against the page, cues beyond colour, and a text alternative.

- Palette: every pair of :data:`dpkit.plots._style.PALETTE` (any two may share a figure)
  stays at least :data:`MIN_DIFFERENCE` apart in CIEDE2000 for normal vision and under the
  simulated deuteranopia, protanopia and tritanopia of Machado et al. (2009); each colour has
  a contrast of at least 3:1 against the white page (1.4.11 Non-text Contrast). ΔE00 = 10 is
  about four times the just-noticeable difference (ΔE00 ≈ 2.3): two thin lines or two small
  markers of such colours are told apart at a glance, which a mere JND does not give.
- Figures: each builder draws only with the palette; every text has a contrast of at least
  4.5:1 (1.4.3 Contrast); every filled area has a face or an edge at 3:1 against the page;
  the entries of every legend differ by more than colour (line style, marker, hatch, or a
  3:1 difference in lightness), so the figure reads in greyscale too (1.4.1 Use of Color).
- Text alternatives (1.1.1 Non-text Content): every builder attaches a description that
  names the parameters it was drawn with; ``tests/test_widgets.py`` checks the frames of the
  static widgets.

The colour arithmetic (simulation, CIELAB, CIEDE2000, contrast) is in
``tests/colour_vision.py``, checked below against published test data.
"""

from __future__ import annotations

import base64
import html
import importlib
import itertools
import re

import matplotlib.colors
import numpy as np
import pytest
from colour_vision import (  # tests/ is on sys.path under pytest
    SHARMA_PAIRS,
    SIMULATIONS,
    ciede2000,
    contrast_ratio,
    difference,
    linear_rgb,
    relative_luminance,
    simulate,
)
from figure_cases import CASES
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from test_plots_layout import _texts

from dpkit.plots._style import (
    MIN_FONT_SIZE,
    PALETTE,
    alt_text,
    register_ipython_display,
    smallest_text_px,
)

#: Least CIEDE2000 difference between two palette colours, under every simulation.
MIN_DIFFERENCE = 10.0
#: WCAG 2.2 thresholds: graphical objects (1.4.11) and normal-size text (1.4.3).
MIN_GRAPHIC_CONTRAST = 3.0
MIN_TEXT_CONTRAST = 4.5
#: The palette the book used before (matplotlib's tab10 blue, red, green and grey).
TAB10 = {"safe": "#1f77b4", "naive": "#d62728", "truth": "#2ca02c", "grey": "#7f7f7f"}
IDS = [case.id for case in CASES]


def palette_problems(palette: dict[str, str]) -> list[str]:
    """Every way ``palette`` falls short: close pairs under a simulation, low contrast."""
    problems = [f"{name} {colour}: contrast {contrast_ratio(colour):.2f}:1 on white"
                for name, colour in palette.items()
                if contrast_ratio(colour) < MIN_GRAPHIC_CONTRAST]
    for deficiency in SIMULATIONS:
        for (a, ca), (b, cb) in itertools.combinations(palette.items(), 2):
            d = difference(ca, cb, deficiency)
            if d < MIN_DIFFERENCE:
                problems.append(f"{a} and {b}: ΔE00 {d:.1f} with {deficiency}")
    return problems


# ----------------------------------------------------------------------------- the helper

@pytest.mark.parametrize("lab1, lab2, expected", SHARMA_PAIRS)
def test_ciede2000_matches_sharma_test_data(lab1, lab2, expected) -> None:
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(lab2, lab1) == pytest.approx(expected, abs=1e-4)


def test_simulations_keep_greys_and_confuse_red_with_green() -> None:
    for deficiency in SIMULATIONS:
        for level in (0.0, 0.2, 1.0):
            assert simulate((level,) * 3, deficiency) == pytest.approx((level,) * 3, abs=2e-3)
    # the classic confusion: pure red and a green of equal lightness nearly merge for a
    # deuteranope and a protanope, and stay far apart for normal vision
    assert difference("#d62728", "#2ca02c") > 40
    assert difference("#d62728", "#2ca02c", "deuteranopia") < 6
    assert contrast_ratio("black") == pytest.approx(21.0)
    assert contrast_ratio("#767676") == pytest.approx(4.54, abs=0.01)  # WCAG's usual example


# ----------------------------------------------------------------------------- the palette

def test_palette_is_distinguishable_with_each_colour_vision_deficiency() -> None:
    assert palette_problems(PALETTE) == []


def test_the_former_palette_fails() -> None:
    """The check can fail: tab10's red and green merge for a deuteranope."""
    assert "naive and truth: ΔE00 4.6 with deuteranopia" in palette_problems(TAB10)


# ----------------------------------------------------------------------------- the figures

def _figure(case) -> Figure:
    figure = case.builder(**case.kwargs)
    figure.canvas.draw()
    return figure


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def figure(request) -> Figure:
    return _figure(request.param)


def _rgba(colours) -> list[tuple[float, ...]]:
    array = matplotlib.colors.to_rgba_array(colours)
    return [tuple(c) for c in array if c[3] > 0]


def _drawn_colours(figure: Figure) -> list[tuple[str, tuple[float, ...]]]:
    """``(artist, rgba)`` of every visible stroke and fill on the figure's axes."""
    found = []
    for ax in figure.axes:
        for line in ax.lines:
            if line.get_visible():
                drawn = [line.get_color()] if line.get_linestyle() not in ("None", "") else []
                if line.get_marker() not in (None, "None", "", " "):
                    drawn += [line.get_markerfacecolor(), line.get_markeredgecolor()]
                found += [(line.get_label(), c) for c in _rgba(drawn)]
        for patch in ax.patches:
            if patch.get_visible():
                drawn = [patch.get_facecolor()] if patch.get_fill() else []
                if patch.get_linewidth() > 0:
                    drawn.append(patch.get_edgecolor())
                found += [(patch.get_label(), c) for c in _rgba(drawn)]
        for collection in ax.collections:
            if collection.get_visible():
                drawn = list(collection.get_facecolors())
                if np.any(collection.get_linewidths()):
                    drawn += list(collection.get_edgecolors())
                found += [(collection.get_label(), c) for c in _rgba(drawn)]
    return found


def test_figures_draw_only_with_the_palette(figure) -> None:
    allowed = {tuple(np.round(matplotlib.colors.to_rgb(c), 3)) for c in PALETTE.values()}
    for label, rgba in _drawn_colours(figure):
        assert tuple(np.round(rgba[:3], 3)) in allowed, \
            f"{label!r} is drawn in {matplotlib.colors.to_hex(rgba)}, not a palette colour"


def test_texts_are_large_enough_on_a_phone(figure) -> None:
    """No text below MIN_FONT_SIZE points: shown in a 420-px phone's column (384 px of the
    768-px image), 10-pt text is 11.1 px (tests/test_browser.py measures the pages)."""
    small = sorted({(t.get_fontsize(), t.get_text()) for t in _texts(figure)
                    if t.get_fontsize() < MIN_FONT_SIZE})
    assert not small, f"texts below {MIN_FONT_SIZE} pt: {small[:3]}"
    width = figure.get_figwidth() * max(72, figure.dpi)  # of the PNG figure_png renders
    size = smallest_text_px(figure, dpi=72) * 384 / width
    assert size >= 11, f"the smallest text is {size:.1f} px in a phone's column"


def test_texts_have_contrast(figure) -> None:
    for text in _texts(figure):
        ratio = contrast_ratio(text.get_color())
        assert ratio >= MIN_TEXT_CONTRAST, \
            f"{text.get_text()!r}: contrast {ratio:.2f}:1 on white"


def _on_white(rgba) -> tuple[float, float, float]:
    """Linear sRGB of ``rgba`` painted over the white page."""
    r, g, b, a = matplotlib.colors.to_rgba(rgba)
    return tuple(a * c + (1 - a) for c in linear_rgb((r, g, b)))


def _contrast(rgb1, rgb2=(1.0, 1.0, 1.0)) -> float:
    high, low = sorted((relative_luminance(rgb1), relative_luminance(rgb2)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _areas(figure: Figure):
    for ax in figure.axes:
        for patch in ax.patches:
            if patch.get_visible() and patch.get_fill():
                yield patch.get_label(), patch.get_facecolor(), (
                    patch.get_edgecolor() if patch.get_linewidth() > 0 else (1, 1, 1, 0))
        for collection in ax.collections:
            if isinstance(collection, PolyCollection) and collection.get_visible():
                edges = (collection.get_edgecolors() if np.any(collection.get_linewidths())
                         else [(1, 1, 1, 0)])
                for face, edge in zip(collection.get_facecolors(), itertools.cycle(edges),
                                      strict=False):
                    yield collection.get_label(), face, edge


def test_filled_areas_stand_out_from_the_page(figure) -> None:
    for label, face, edge in _areas(figure):
        best = max(_contrast(_on_white(face)), _contrast(_on_white(edge)))
        assert best >= MIN_GRAPHIC_CONTRAST, \
            f"{label!r}: neither face nor edge reaches 3:1 on white ({best:.2f}:1)"


def _cues(handle) -> tuple:
    """What tells a legend entry apart besides its hue."""
    if isinstance(handle, Line2D):
        style = handle.get_linestyle()
        marker = handle.get_marker()
        return ("line", style if style not in ("None", "") else None,
                marker if marker not in (None, "None", "", " ") else None,
                handle.get_markerfacecolor() == "none")
    if isinstance(handle, LineCollection):
        _, dashes = handle.get_linestyle()[0]
        return ("line", tuple(np.round(dashes, 1)) if dashes else "-", None, False)
    if isinstance(handle, PathCollection):
        faces = handle.get_facecolors()
        path = handle.get_paths()[0]
        return ("marker", tuple(np.round(path.vertices.ravel(), 2)),
                len(faces) == 0 or faces[0][3] == 0)
    if isinstance(handle, Patch):
        return ("area", handle.get_hatch() or None)
    raise AssertionError(f"no cues known for a {type(handle).__name__} legend entry")


def _lightness(handle) -> tuple[float, float, float] | None:
    if isinstance(handle, Patch) and not isinstance(handle, Line2D):
        return _on_white(handle.get_facecolor())
    return None


def test_legend_entries_differ_by_more_than_colour(figure) -> None:
    legends = [*figure.legends, *(c for ax in figure.axes for c in ax.get_children()
                                   if isinstance(c, Legend))]
    for legend in legends:
        entries = list(zip(legend.legend_handles, (t.get_text() for t in legend.texts),
                           strict=True))
        for (h1, t1), (h2, t2) in itertools.combinations(entries, 2):
            if _cues(h1) != _cues(h2):
                continue
            l1, l2 = _lightness(h1), _lightness(h2)
            assert l1 is not None and _contrast(l1, l2) >= MIN_GRAPHIC_CONTRAST, \
                f"legend entries {t1!r} and {t2!r} differ only by colour"


# ----------------------------------------------------------------------------- text alternatives

def test_every_builder_has_a_case() -> None:
    covered = {(case.builder.__module__, case.builder.__name__) for case in CASES}
    for name in ("intro", "promise", "laplace", "gaussian", "composition", "exponential",
                 "svt"):
        module = importlib.import_module(f"dpkit.plots.{name}")
        for builder in module.__all__:
            if builder.endswith("_figure"):
                assert (module.__name__, builder) in covered, \
                    f"add {name}.{builder} to tests/figure_cases.py"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_builder_describes_its_figure_with_its_parameters(case) -> None:
    figure = case.builder(**case.kwargs)
    text = getattr(figure, "alt", "")
    assert text and text == alt_text(figure), f"{case.id} attached no text alternative"
    assert 40 <= len(text) <= 600, f"{case.id}: {len(text)} characters: {text!r}"
    missing = [m for m in case.mentions if m not in text]
    assert not missing, f"{case.id}: {missing} not in {text!r}"
    assert text[0].isupper() and text.endswith("."), text


def test_a_figure_returned_by_a_cell_shows_as_an_img_with_its_alt() -> None:
    """What a notebook cell (and so the HTML book, which prefers ``text/html``) shows."""
    from IPython.core.interactiveshell import InteractiveShell

    case = CASES[2]
    figure = case.builder(**case.kwargs)
    shell = InteractiveShell.instance()
    try:
        assert register_ipython_display() is True  # as importing dpkit.plots in a kernel does
        bundle, _ = shell.display_formatter.format(figure)
    finally:
        InteractiveShell.clear_instance()
    (image,) = re.findall(r"<img [^>]*>", bundle["text/html"])
    assert f'alt="{html.escape(figure.alt)}"' in image
    assert 'src="data:image/png;base64,' in image
    assert base64.b64decode(bundle["image/png"])[:4] == b"\x89PNG"
