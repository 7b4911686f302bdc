"""dpkit.widgets: both modes build, moving a slider changes the figure, and every frame of
the page's embedded widget is an image with a text alternative that names its parameters."""

import base64
import html.parser
import io
import json
import re
from pathlib import Path

import ipywidgets as widgets
import pytest
from ipywidgets.embed import dependency_state, embed_minimal_html
from ipywidgets.widgets.widget import _instances
from ipywidgets.widgets.widget_link import Link
from matplotlib.figure import Figure

from dpkit.plots.intro import randomized_response_figure
from dpkit.widgets import MAX_FRAMES, Param, explore, figure_png, widget_mode


def line_figure(slope, intercept=0.0):
    figure = Figure(figsize=(2, 2))
    figure.subplots().plot([0, 1], [intercept, intercept + slope])
    return figure


class _Images(html.parser.HTMLParser):
    """The attributes of every ``<img>`` of an HTML text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.found: list[dict[str, str | None]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.found.append(dict(attrs))


def _png(frame) -> bytes:
    """The PNG a frame shows (its one ``<img>``'s data URL, decoded)."""
    (image,) = _Images(frame.value).found
    prefix = "data:image/png;base64,"
    assert image["src"].startswith(prefix)
    return base64.b64decode(image["src"][len(prefix):])


def _visible_image(widget):
    """Follow each Stack's selected child down to the frame it shows."""
    node = widget.children[-1]
    while isinstance(node, widgets.Stack):
        node = node.children[node.selected_index]
    return node


def _embedded_images(box) -> list[dict[str, str | None]]:
    """Every ``<img>`` of ``box`` as the built page embeds it (the widget state's JSON)."""
    page = io.StringIO()
    embed_minimal_html(page, views=[box], state=dependency_state(box), title="test")
    (state,) = re.findall(r'<script type="application/vnd.jupyter.widget-state\+json">'
                          r"(.*?)</script>", page.getvalue(), flags=re.S)
    models = json.loads(state)["state"].values()
    return [image for model in models if model["model_name"] == "HTMLModel"
            for image in _Images(model["state"].get("value", "")).found]


def test_live_mode_redraws_when_a_slider_moves():
    box = explore(line_figure, Param("slope", [1, 2, 3]), Param("intercept", [0.0, 1.0]),
                  mode="live")
    slope, intercept, frame = box.children
    assert isinstance(frame, widgets.HTML)
    first = frame.value
    slope.index = 2
    assert frame.value != first and _png(frame) == figure_png(line_figure(3, 0.0))
    assert _Images(frame.value).found[0]["alt"].startswith("slope = 3, intercept = 0. Chart")
    intercept.index = 1
    assert _png(frame) == figure_png(line_figure(3, 1.0))


def test_static_mode_prerenders_every_frame_and_links_sliders():
    box = explore(line_figure, Param("slope", [1, 2, 3], value=2), Param("intercept", [0.0, 1.0]),
                  mode="static")
    slope, intercept, root = box.children
    assert isinstance(root, widgets.Stack) and len(root.children) == 3
    assert root.selected_index == slope.index == 1
    assert _png(_visible_image(box)) == figure_png(line_figure(2, 0.0))
    # the client-side links: one per Stack, from its slider's index
    links = [w for w in _instances.values() if isinstance(w, Link)
             and w.target[0] in {root, *root.children}]
    assert {(link.source[0], link.source[1], link.target[1]) for link in links} == {
        (slope, "index", "selected_index"), (intercept, "index", "selected_index")}
    # move the sliders as the browser would (the links do this client-side)
    root.selected_index = 2
    root.children[2].selected_index = 1
    assert _png(_visible_image(box)) == figure_png(line_figure(3, 1.0))


def test_every_frame_differs_for_the_intro_widget():
    box = explore(randomized_response_figure, Param("epsilon", [0.1, 1.0, 4.0]), mode="static")
    frames = [_png(child) for child in box.children[-1].children]
    assert len(set(frames)) == 3
    assert sum(map(len, frames)) < 2_000_000 * 3 / 6  # well inside a 2 MB widget budget


def test_every_embedded_frame_has_a_text_alternative_naming_its_parameters():
    epsilons = [0.1, 1.0, 4.0]
    box = explore(randomized_response_figure, Param("epsilon", epsilons, label="ε"),
                  fixed={"surveys": 200}, mode="static")
    images = _embedded_images(box)
    assert len(images) == len(epsilons)
    for image, epsilon in zip(images, epsilons, strict=True):
        assert image["alt"] == randomized_response_figure(epsilon, surveys=200).alt
        assert f"ε = {epsilon:g}" in image["alt"]
    # a figure that carries no description: the frame names the slider settings
    box = explore(line_figure, Param("slope", [1, 2]), Param("intercept", [0.0, 1.0]),
                  mode="static")
    alts = sorted(image["alt"] for image in _embedded_images(box))
    assert [alt.split(".")[0] for alt in alts] == [
        "slope = 1, intercept = 0", "slope = 1, intercept = 1", "slope = 2, intercept = 0",
        "slope = 2, intercept = 1"]


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
    with pytest.raises(ValueError, match=r"kind must be one of .* got 'radio'"):
        Param("slope", [1, 2], kind="radio")


def category_figure(column, slope=1):
    return line_figure(slope, intercept=0.0 if column == "age" else 1.0)


LONG = "1 to 200, then +1% (default)"


def test_categories_are_radio_buttons_showing_every_choice_in_full():
    """A slider's readout cuts a long label ("1 to 200, then +1% (de"): categories, and
    numbers whose labels are too long for it, are radio buttons, in both modes."""
    assert Param("slope", [1, 2.5]).control == "slider"
    assert Param("column", ["age", LONG]).control == "choice"
    assert Param("flag", [False, True]).control == "choice"
    assert Param("slope", [1, 2], format=lambda v: f"{v} (a label too long)").control == "choice"
    assert Param("column", ["a", "b"], kind="slider").control == "slider"
    assert Param("slope", [1, 2], kind="choice").control == "choice"
    for mode in ("live", "static"):
        box = explore(category_figure, Param("column", ["age", LONG], value=LONG),
                      Param("slope", [1, 2]), mode=mode)
        column, slope, figure = box.children
        assert isinstance(column, widgets.RadioButtons), mode
        assert isinstance(slope, widgets.SelectionSlider), mode
        assert column.options == ("age", LONG) and column.index == 1
        column.index = 0  # as a click on "age" would (in static mode, the link does it)
        if mode == "static":
            assert figure.selected_index == 1
            figure.selected_index = 0
        assert _png(_visible_image(box)) == figure_png(category_figure("age", 1))
    links = [w for w in _instances.values() if isinstance(w, Link) and w.target[0] is figure]
    assert [(link.source[0], link.source[1]) for link in links] == [(column, "index")]


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


@pytest.mark.parametrize("inline_first", [True, False], ids=["inline-first", "inline-after"])
def test_a_book_figure_is_rendered_once_under_matplotlib_inline(inline_first):
    """``%matplotlib inline`` registers a PNG formatter for every Figure (``savefig`` with
    ``bbox_inches="tight"``: two more draws). A BookFigure returned by a cell shows its own
    mime bundle only, whichever ran first: the chapter or ``dpkit.plots``' import."""
    from IPython.core.interactiveshell import InteractiveShell

    from dpkit.plots import register_ipython_display
    from dpkit.plots._style import new_figure

    calls = []

    def inline_png(figure):  # stands for matplotlib_inline's print_figure
        calls.append(figure)
        return b"inline"

    shell = InteractiveShell.instance()
    try:
        formatter = shell.display_formatter.formatters["image/png"]
        if inline_first:
            formatter.for_type(Figure, inline_png)
        register_ipython_display()
        if not inline_first:
            formatter.type_printers.pop(Figure, None)  # as %matplotlib inline does
            formatter.for_type(Figure, inline_png)
        figure, (ax,) = new_figure()
        ax.plot([0, 1], [0, 1])
        bundle, _ = shell.display_formatter.format(figure)
        assert calls == []
        assert base64.b64decode(bundle["image/png"]) == figure_png(figure, dpi=100)
        assert formatter(line_figure(1)) == b"inline"  # a plain Figure keeps its formatter
    finally:
        InteractiveShell.clear_instance()


def test_sliders_of_a_widget_share_a_label_width():
    """The tracks of a widget's sliders line up: their labels get one width, that of the
    longest (ε and ε·u(o₁)/2 in the base-2 chapter)."""
    box = explore(line_figure, Param("slope", [1, 2], label="ε"),
                  Param("intercept", [0.0, 1.0], label="ε·u(o₁)/2"), mode="live")
    widths = {control.style.description_width for control in box.children[:2]}
    assert widths == {"10ch"}, widths


def test_no_chapter_tells_the_reader_to_move_a_slider() -> None:
    """The printed book shows each widget at its default setting, with a note naming it
    (scripts/pdf_print.js): prose that says "Move the slider(s)" is false on paper (issue
    #20). The sentences around a widget describe what it shows, at whatever setting."""
    book = Path(__file__).resolve().parent.parent / "book"
    told = [f"{page.name}:{number}" for page in sorted(book.glob("*.md"))
            for number, line in enumerate(page.read_text().splitlines(), 1)
            if re.search(r"\b(move|drag|slide) the sliders?\b", line, re.IGNORECASE)]
    assert not told, told


def test_figure_png_draws_once_and_writes_what_savefig_writes(monkeypatch):
    """A static widget renders every frame: ``figure_png`` draws a figure with a layout
    engine once (``savefig`` draws it twice), and the PNG is byte for byte the one
    ``savefig`` writes, with the figure's dpi and canvas left as they were. Deterministic."""
    import io

    from dpkit.plots.composition import composition_figure

    expected = io.BytesIO()  # from a twin: a second layout pass moves a drawn figure a little
    twin = composition_figure(epsilon0=0.1, delta_prime=1e-6)
    twin.savefig(expected, format="png", dpi=max(72, twin.dpi))
    figure = composition_figure(epsilon0=0.1, delta_prime=1e-6)
    canvas, dpi = figure.canvas, figure.dpi
    draws = []
    original = Figure.draw

    def counting_draw(self, renderer):
        draws.append(renderer)
        return original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting_draw)
    assert figure_png(figure) == expected.getvalue()
    assert len(draws) == 1
    assert figure.canvas is canvas and figure.dpi == dpi


def test_glue_records_what_myst_nb_glue_records(monkeypatch):
    """``dpkit.widgets.glue`` sends the same display data and metadata as myst-nb's glue
    (which the book build reads), for shown and hidden values. Deterministic."""
    import myst_nb.ext.glue as myst_glue
    import numpy as np

    import dpkit.widgets

    sent = {}
    monkeypatch.setattr(myst_glue, "ipy_display", lambda *a, **k: sent.update(myst=(a, k)))
    monkeypatch.setattr(dpkit.widgets, "_display", lambda *a, **k: sent.update(dpkit=(a, k)))
    for value, display in [(0.123456789, False), ("a text", True), (np.float64(3.5), False),
                           (7, True)]:
        myst_glue.glue("key", value, display)
        dpkit.widgets.glue("key", value, display)
        assert sent["dpkit"] == sent["myst"]
    assert dpkit.widgets.GLUE_PREFIX == myst_glue.GLUE_PREFIX
    with pytest.raises(TypeError, match="name must be a str"):
        dpkit.widgets.glue(3, 1.0)


def test_glue_does_not_import_nbformat():
    """The reason for ``dpkit.widgets.glue``: myst-nb's imports nbformat and jsonschema,
    seconds of a chapter's budget. Deterministic."""
    import subprocess
    import sys

    code = ("import sys\nimport dpkit.widgets\ndpkit.widgets.glue('k', 1.5, display=False)\n"
            "print(sorted({'nbformat', 'jsonschema'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
