"""``make slides`` (scripts/slides.py): the decks are built from the chapters' sources.

Every chapter with learning goals has a deck; every definition, theorem, lemma, corollary,
proposition and algorithm of a chapter has a slide in its deck, numbered as the book numbers
it, and every exercise is named on the closing slide; a change in a chapter's statement
changes its deck; figures and widget frames come from the executed notebook, and a chapter
changed since it was executed is refused. The decks in a browser: tests/test_browser_slides.py.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from dpkit.course.myst import read_book

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import slides  # noqa: E402

BOOK = read_book(ROOT / "book")
CHAPTERS = slides.deck_chapters(BOOK)


def test_every_teaching_chapter_has_a_deck():
    numbered = [c.stem for c in BOOK.chapters if c.number is not None]
    assert CHAPTERS == ["intro", *numbered]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_statement_and_exercise_of_the_chapter_is_in_its_deck(chapter):
    deck = slides.render_deck(BOOK, chapter, slides.chapter_slides(BOOK, chapter, None))
    numbered = BOOK.numbered_directives(chapter)
    statements = [(label, shown) for name, label, shown in numbered
                  if name in slides.STATEMENTS]
    assert statements, chapter
    for label, shown in statements:
        section = re.search(rf'<section data-kind="statement" id="{label}"[^>]*><h2>'
                            rf"{re.escape(shown)}\b", deck)
        assert section, f"{chapter}: no slide for {label} ({shown})"
    assert deck.count('<section data-kind="statement"') == len(statements), chapter
    for label, shown in ((label, shown) for name, label, shown in numbered
                         if name == "exercise"):
        assert re.search(rf'<li data-label="{label}"><strong>{re.escape(shown)}</strong>',
                         deck), f"{chapter}: {label} missing from the exercises slide"
    kinds = re.findall(r'<section[^>]* data-kind="(\w+)"', deck)
    assert kinds[:2] == ["title", "goals"] and kinds[-1] == "exercises", kinds
    assert "<em>Proof.</em>" not in deck                       # statements, not proofs


def _copy_book(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_static"))
    shutil.copy(ROOT / "_toc.yml", root / "_toc.yml")
    return root


def test_a_change_in_a_chapter_changes_its_deck(tmp_path):
    root = _copy_book(tmp_path)
    source = root / "book" / "laplace.md"
    text = source.read_text()
    old = "It is symmetric around 0, has variance $2b^2$"
    assert old in text
    source.write_text(text.replace(old, "It is symmetric about 0 (slides test), has variance "
                                        "$2b^2$"))
    book = read_book(root / "book")
    deck = slides.render_deck(book, "laplace", slides.chapter_slides(book, "laplace", None))
    assert "symmetric about 0 (slides test)" in deck
    assert "symmetric about 0 (slides test)" not in slides.render_deck(
        BOOK, "laplace", slides.chapter_slides(BOOK, "laplace", None))


def _executed(stem: str, outputs: dict[int, list]) -> nbformat.NotebookNode:
    """The chapter as jupytext reads it, with ``outputs`` given to its code cells by index."""
    import jupytext

    notebook = jupytext.read(ROOT / "book" / f"{stem}.md")
    code = [c for c in notebook.cells if c.cell_type == "code"]
    for index, cell_outputs in outputs.items():
        code[index].outputs = cell_outputs
    return notebook


def test_figures_and_widget_frames_come_from_the_executed_notebook():
    png = nbformat.v4.new_output("display_data", data={
        "image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    frames = {f"f{i}": {"model_name": "HTMLModel", "state": {
        "value": f'<img alt="frame {i}" src="data:image/png;base64,AAAA">'}} for i in range(4)}
    state = {
        "box": {"model_name": "VBoxModel", "state": {"children": [
            "IPY_MODEL_s0", "IPY_MODEL_s1", "IPY_MODEL_stack"]}},
        "s0": {"state": {"description": "ε", "_options_labels": ["0.5", "1"], "index": 1}},
        "s1": {"state": {"description": "Δ", "_options_labels": ["1", "2"], "index": 0}},
        "stack": {"state": {"children": ["IPY_MODEL_a", "IPY_MODEL_b"]}},
        "a": {"state": {"children": ["IPY_MODEL_f0", "IPY_MODEL_f1"]}},
        "b": {"state": {"children": ["IPY_MODEL_f2", "IPY_MODEL_f3"]}},
        **frames}
    widget = nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "box"}, "text/plain": "VBox"})
    notebook = _executed("laplace", {1: [png], 2: [widget]})
    notebook.metadata["widgets"] = {slides._WIDGET_STATE: {"state": state}}
    found = slides.chapter_slides(BOOK, "laplace", notebook)
    kinds = [s.kind for s in found]
    assert kinds.count("figure") == 1 and kinds.count("widget") == 2, kinds
    figure = next(s for s in found if s.kind == "figure")
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in figure.html
    first, second = (s.html for s in found if s.kind == "widget")
    # The ε slider's frames with Δ at its start (index 0), then Δ's with ε at its start (1).
    assert re.findall(r'alt="(frame \d)"', first) == ["frame 0", "frame 2"]
    assert re.findall(r'alt="(frame \d)"', second) == ["frame 2", "frame 3"]
    assert first.count('class="fragment"') == 1 and "ε = 0.5 <span>(Δ = 1)</span>" in first
    # Statements keep their place among the figures: the sensitivity definition comes first.
    assert kinds.index("statement") < kinds.index("figure")


def test_a_chapter_changed_since_make_book_is_refused(tmp_path):
    notebook = _executed("laplace", {})
    notebook.cells[[i for i, c in enumerate(notebook.cells)
                    if c.cell_type == "code"][3]].source += "\nprint('changed')"
    path = tmp_path / "laplace.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(ValueError, match=r"laplace.md has changed since make book executed it "
                                         r"\(code cell 4 of \d+ differs"):
        slides.read_executed(path, ROOT / "book" / "laplace.md")
    with pytest.raises(FileNotFoundError, match="run make book first"):
        slides.read_executed(tmp_path / "none.ipynb", ROOT / "book" / "laplace.md")


def test_unknown_chapter_and_missing_vendor_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"no deck for 'errata': the chapters with slides are "
                                         r"intro, promise"):
        slides.build(["errata"], tmp_path / "out", executed=None)
    root = _copy_book(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"not vendored: .*reveal.js.*; run make vendor"):
        slides.build(["laplace"], tmp_path / "out", root=root, executed=None)
