"""dpkit.widgets: both modes build, and moving a slider changes the figure."""

import ipywidgets as widgets
import pytest
from ipywidgets.widgets.widget import _instances
from ipywidgets.widgets.widget_link import Link
from matplotlib.figure import Figure

from dpkit.plots.intro import randomized_response_figure
from dpkit.widgets import MAX_FRAMES, Param, explore, figure_png, widget_mode


def line_figure(slope, intercept=0.0):
    figure = Figure(figsize=(2, 2))
    figure.subplots().plot([0, 1], [intercept, intercept + slope])
    return figure


def _visible_image(widget):
    """Follow each Stack's selected child down to the Image it shows."""
    node = widget.children[-1]
    while isinstance(node, widgets.Stack):
        node = node.children[node.selected_index]
    return node


def test_live_mode_redraws_when_a_slider_moves():
    box = explore(line_figure, Param("slope", [1, 2, 3]), Param("intercept", [0.0, 1.0]),
                  mode="live")
    slope, intercept, image = box.children
    assert isinstance(image, widgets.Image)
    first = image.value
    slope.index = 2
    assert image.value != first and image.value == figure_png(line_figure(3, 0.0))
    intercept.index = 1
    assert image.value == figure_png(line_figure(3, 1.0))


def test_static_mode_prerenders_every_frame_and_links_sliders():
    box = explore(line_figure, Param("slope", [1, 2, 3], value=2), Param("intercept", [0.0, 1.0]),
                  mode="static")
    slope, intercept, root = box.children
    assert isinstance(root, widgets.Stack) and len(root.children) == 3
    assert root.selected_index == slope.index == 1
    assert _visible_image(box).value == figure_png(line_figure(2, 0.0))
    # the client-side links: one per Stack, from its slider's index
    links = [w for w in _instances.values() if isinstance(w, Link)
             and w.target[0] in {root, *root.children}]
    assert {(link.source[0], link.source[1], link.target[1]) for link in links} == {
        (slope, "index", "selected_index"), (intercept, "index", "selected_index")}
    # move the sliders as the browser would (the links do this client-side)
    root.selected_index = 2
    root.children[2].selected_index = 1
    assert _visible_image(box).value == figure_png(line_figure(3, 1.0))


def test_every_frame_differs_for_the_intro_widget():
    box = explore(randomized_response_figure, Param("epsilon", [0.1, 1.0, 4.0]), mode="static")
    frames = [child.value for child in box.children[-1].children]
    assert len(set(frames)) == 3
    assert sum(map(len, frames)) < 2_000_000 * 3 / 6  # well inside a 2 MB widget budget


def test_mode_from_environment(monkeypatch):
    monkeypatch.setenv("DPKIT_WIDGET_MODE", "static")
    assert widget_mode() == "static"
    monkeypatch.setenv("DPKIT_WIDGET_MODE", "sometimes")
    with pytest.raises(ValueError, match="DPKIT_WIDGET_MODE must be one of"):
        widget_mode()
    monkeypatch.delenv("DPKIT_WIDGET_MODE")
    assert widget_mode() == "live"


def test_errors():
    with pytest.raises(ValueError, match="at least one Param"):
        explore(line_figure)
    with pytest.raises(ValueError, match="distinct"):
        explore(line_figure, Param("slope", [1]), Param("slope", [2]))
    with pytest.raises(ValueError, match="both as Param and in fixed"):
        explore(line_figure, Param("slope", [1]), fixed={"slope": 2})
    with pytest.raises(ValueError, match=f"at most {MAX_FRAMES} frames"):
        explore(line_figure, Param("slope", range(7)), Param("intercept", range(7)),
                mode="static")
    with pytest.raises(ValueError, match="must not be empty"):
        Param("slope", [])
    with pytest.raises(ValueError, match="value must be one of"):
        Param("slope", [1, 2], value=3)
    with pytest.raises(TypeError, match=r"must return a matplotlib\.figure\.Figure"):
        explore(lambda slope: None, Param("slope", [1]), mode="live")


def test_figures_display_as_png_under_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    from dpkit.plots import register_ipython_display

    shell = InteractiveShell.instance()
    try:
        formatter = shell.display_formatter.formatters["image/png"]
        formatter.type_printers.pop(Figure, None)
        assert register_ipython_display() is True
        png = formatter(line_figure(1))
        assert png is not None and png[:4] == b"\x89PNG"
        assert register_ipython_display() is False  # never replaces an existing formatter
    finally:
        InteractiveShell.clear_instance()
