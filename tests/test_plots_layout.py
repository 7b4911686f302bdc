"""Layout of the book's figures: every text inside the figure, no two texts overlapping,
every axis labelled, and the chapter map's labels inside their boxes.

The figures are drawn at the size the chapters use (:func:`dpkit.plots._style.new_figure`);
the checks are geometric, on the rendered text extents, so a too-long title, a legend laid
over an axis label, or two colliding tick labels fail here before a reader sees them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from figure_cases import CASES as BUILDERS  # tests/ is on sys.path under pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.legend import Legend
from matplotlib.patches import FancyBboxPatch
from matplotlib.text import Text

from dpkit.attacks.laplace import LSBAttackResult
from dpkit.i18n import set_language
from dpkit.plots import composition, exponential, gaussian, intro, laplace, promise, svt

CASES = [
    (intro.chapter_map_figure, {}),
    (intro.randomized_response_figure, {"epsilon": 0.1, "surveys": 200}),
    (intro.randomized_response_figure, {"epsilon": 4.0, "surveys": 200}),
    (promise.tradeoff_figure, {"epsilon": 0.25, "delta": 0.05}),
    (promise.tradeoff_figure, {"epsilon": 2.0, "delta": 0.0}),
    (laplace.tail_bound_figure, {}),
    (laplace.laplace_release_figure, {"epsilon": 0.1, "sensitivity": 5.0, "releases": 200}),
    (laplace.lsb_attack_figure, {"scales": [1, 2, 5, 10],
                                 "naive": [LSBAttackResult(1000, 0.6, 1.0, 0.8, 0.73)] * 4,
                                 "safe": [LSBAttackResult(1000, 0.5, 0.5, 0.5, 0.73)] * 4}),
    (gaussian.laplace_vs_gaussian_figure, {"dimension": 1000, "epsilon": 0.9}),
    (gaussian.sigma_calibration_figure, {"epsilon": 5.0, "delta": 1e-12}),
    (gaussian.privacy_profile_figure, {}),
    (composition.composition_figure, {"epsilon0": 0.01, "delta_prime": 1e-9}),
    (composition.textbook_crossover_figure, {}),
    (composition.privacy_loss_distributions_figure, {}),
    (exponential.distribution_figure, {"epsilon": 1.0, "exponent": 744.0}),
    (exponential.time_per_sample_figure, {
        "outcomes": [100, 1000], "seconds": {"naive (float)": [1e-5, 2e-5],
                                             "fast (exact)": [5e-5, 6e-5],
                                             "full precision (exact)": [1e-4, 1e-2]}}),
    (exponential.selection_figure, {"epsilon": 0.002, "labels": [f"job {i}" for i in range(9)],
                                    "counts": [400, 390, 380, 300, 200, 100, 50, 20, 10]}),
    (svt.naive_cost_figure, {}),
    (svt.audit_figure, {"results": {"broken variant": (1.0, 3.2, float("inf")),
                                    "AboveThreshold (dpkit.svt)": (1.0, 0.0, 1.0)}}),
    (svt.stream_figure, {"answers": list(np.linspace(-900, 0, 20)),
                         "labels": list(range(70, 90)), "threshold": -500, "epsilon": 0.1}),
]


def _drawn_ticks(ax, axis: str) -> list[Text]:
    """Tick labels drawn on ``ax`` (those inside the view limits)."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    index = 0 if axis == "x" else 1
    return [t for t in labels if low <= t.get_position()[index] <= high]


def _texts(figure: Figure) -> list[Text]:
    """The visible, non-empty texts of ``figure``: titles, axis and tick labels, notes,
    legends."""
    texts = list(figure.texts)
    legends = list(figure.legends)
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        if ax.axison:
            texts += [ax.xaxis.label, ax.yaxis.label, *_drawn_ticks(ax, "x"),
                      *_drawn_ticks(ax, "y")]
        legends += [child for child in ax.get_children() if isinstance(child, Legend)]
    for legend in legends:
        texts += [legend.get_title(), *legend.get_texts()]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def _render(builder, kwargs) -> tuple[Figure, object]:
    figure = builder(**kwargs)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return figure, canvas.get_renderer()


@pytest.fixture(params=["en", "zh"])
def language(request):
    """Each figure in both languages of :mod:`dpkit.i18n` (its Chinese labels and fonts)."""
    set_language(request.param)
    yield request.param
    set_language(None)


@pytest.mark.parametrize("builder, kwargs", CASES,
                         ids=[f"{b.__name__}-{i}" for i, (b, _) in enumerate(CASES)])
def test_texts_fit_and_do_not_collide(builder, kwargs, language) -> None:
    figure, renderer = _render(builder, kwargs)
    frame = figure.bbox
    boxes = []
    for text in _texts(figure):
        box = text.get_window_extent(renderer)
        if box.width == 0 or box.height == 0:
            continue
        # inside the figure (1-px tolerance for antialiasing)
        assert (box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1
                and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1), \
            f"{builder.__name__}: {text.get_text()!r} is cut off"
        boxes.append((text.get_text(), box.expanded(0.98, 0.9)))
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), f"{builder.__name__}: {a!r} overlaps {b!r}"
    # a legend does not cover another text of the figure
    legends = [*figure.legends, *(c for ax in figure.axes for c in ax.get_children()
                                   if isinstance(c, Legend))]
    for legend in legends:
        frame_box = legend.get_window_extent(renderer).expanded(0.98, 0.9)
        own = {t.get_text() for t in legend.get_texts()} | {legend.get_title().get_text()}
        for text, box in boxes:
            assert text in own or not frame_box.overlaps(box), \
                f"{builder.__name__}: the legend covers {text!r}"


@pytest.mark.parametrize("case", BUILDERS, ids=[case.id for case in BUILDERS])
def test_every_builder_keeps_its_texts_apart(case, language) -> None:
    """The same check on every builder of dpkit.plots (tests/figure_cases.py), so that a
    figure missing from CASES above is checked at its usual arguments too."""
    test_texts_fit_and_do_not_collide(case.builder, case.kwargs, language)


@pytest.mark.parametrize("builder, kwargs", CASES,
                         ids=[f"{b.__name__}-{i}" for i, (b, _) in enumerate(CASES)])
def test_every_axis_is_labelled(builder, kwargs) -> None:
    figure = builder(**kwargs)
    for ax in figure.axes:
        if ax.axison:
            assert ax.get_xlabel() and ax.get_ylabel(), f"{builder.__name__}: unlabelled axis"


def test_chapter_map_labels_fit_their_boxes() -> None:
    figure, renderer = _render(intro.chapter_map_figure, {})
    (ax,) = figure.axes
    boxes = [p.get_window_extent(renderer) for p in ax.patches
             if isinstance(p, FancyBboxPatch)]
    labels = [t for t in ax.texts if t.get_text()]
    assert len(boxes) == len(labels) == len(intro.CHAPTER_MAP)
    for box, label in zip(boxes, labels, strict=True):
        extent = label.get_window_extent(renderer)
        assert box.x0 < extent.x0 and extent.x1 < box.x1, label.get_text()
        assert box.y0 < extent.y0 and extent.y1 < box.y1, label.get_text()
    assert [t.get_text() for t in labels] == [
        title if number is None else f"{number}. {title}"
        for _, number, title, _ in intro.CHAPTER_MAP]


@pytest.mark.parametrize("epsilon, grid, column",
                         list(itertools.product([0.1, 1.0], list(svt.CLIP_GRIDS),
                                                ["age", "capital-gain"])))
def test_every_frame_of_the_clip_bound_widget_fits_its_fixed_layout(epsilon, grid, column):
    """The chapter's widget draws clip_bound_figure at each of these settings (100 runs):
    it has a fixed layout (no layout engine runs when it is drawn, so that its eight frames
    skip the layout pass), and every frame's texts still fit and do not collide."""
    kwargs = {"epsilon": epsilon, "grid": grid, "column": column, "runs": 100}
    engine = svt.clip_bound_figure(**kwargs).get_layout_engine()
    assert engine is None or isinstance(engine, PlaceHolderLayoutEngine)  # no layout pass
    test_texts_fit_and_do_not_collide(svt.clip_bound_figure, kwargs, "en")
