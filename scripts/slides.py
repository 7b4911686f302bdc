"""``make slides``: one offline slide deck per chapter, built from the chapter's source.

A deck is a reveal.js page, ``_build/slides/<chapter>.html``, with, in this order:

- a title slide (the chapter's number and title);
- the chapter's learning goals (its "Learning goals" box);
- one slide per definition, theorem, lemma, corollary, proposition and algorithm, numbered
  and titled as the book numbers them, with its statement (math typeset by MathJax; proofs,
  examples, remarks and prose are left to the book), and the chapter's figures and widgets in
  their place among them: a figure as the book shows it, a widget as one slide per slider
  whose frames step through the slider's values (the other sliders at their starting value);
- the exercises' titles, as the closing slide.

The statements, goals and titles are read from ``book/<chapter>.md`` with
:mod:`dpkit.course.myst` (the parser behind ``make notebooks``), so a change in a chapter
changes its deck. The figures and widget frames are not rendered again: they are the
outputs of the chapter as ``make book`` executed it (``_build/jupyter_execute/book/
<chapter>.ipynb``), because most figures are drawn from what the chapter computes (an
attack's measured success rates, an audit) and executing every chapter again would take
minutes where reading the executed notebooks takes a second. A chapter whose code has
changed since that build is refused with a request to run ``make book`` (its figures would
be out of date). ``make test`` builds the decks right after its strict build of the book.

The decks load reveal.js and MathJax from ``_build/slides/_static/``, copied from where
``make vendor`` puts them (MathJax in the book's ``book/_static/vendor/``; reveal.js in
``.vendor/``, outside the book, whose pages never load it), so the folder works from
``file://`` with no network and can be copied elsewhere as a whole.

Usage: ``python scripts/slides.py [--out _build/slides] [--executed DIR] [chapter ...]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

import jupytext
import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exam import markdown_renderer  # a script beside this one

from dpkit.course.myst import Book, read_book, read_directive

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
OUT = ROOT / "_build" / "slides"
EXECUTED = ROOT / "_build" / "jupyter_execute" / "book"
#: What each deck loads (copied into the deck's ``_static/``) and the folder, relative to the
#: repository, that ``make vendor`` puts it in.
ASSETS = {"reveal.js": Path(".vendor"), "mathjax": Path("book/_static/vendor")}
#: The directives that get a slide of their own: statements, not proofs, examples or remarks.
STATEMENTS = ("prf:definition", "prf:theorem", "prf:lemma", "prf:corollary",
              "prf:proposition", "prf:algorithm")
GOALS = "Learning goals"
_HEADING = re.compile(r"^##\s+(?P<text>.+?)\s*$")
_GLUE = re.compile(r"\{glue(?::text)?\}`(?P<key>[^`:]+)(?::(?P<spec>[^`]*))?`")
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@dataclass(frozen=True)
class Slide:
    """One slide: its kind, its heading and body (HTML), and the label of the directive
    it shows."""

    kind: str
    heading: str
    html: str
    label: str = ""


def deck_chapters(book: Book) -> list[str]:
    """The chapters that get a deck, in the book's order: those with a learning-goals box
    (the intro and the numbered chapters; not the back matter)."""
    return [chapter.stem for chapter in book.chapters
            if any(block.name == "admonition" and block.arg == GOALS
                   for block in _blocks(_markdown_cells(chapter.path)))]


def _markdown_cells(path: Path) -> list[str]:
    return [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "markdown"]


def _blocks(cells: Sequence[str]):
    """The top-level directives of ``cells``, in order."""
    for text in cells:
        lines, i = text.splitlines(), 0
        while i < len(lines):
            found = read_directive(lines, i)
            if found is None:
                i += 1
                continue
            block, i = found
            yield block


def read_executed(path: Path, source: Path) -> nbformat.NotebookNode:
    """The executed notebook of a chapter, checked against the chapter's source.

    Raises
    ------
    FileNotFoundError
        If there is no executed notebook at ``path`` (run ``make book``).
    ValueError
        If the chapter's code cells differ from those that were executed: its figures
        would be out of date (run ``make book``).
    """
    if not path.is_file():
        raise FileNotFoundError(f"no executed notebook of {source.name} at {path}: "
                                "run make book first")
    executed = nbformat.read(path, as_version=4)
    mine = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    built = [c.source for c in executed.cells if c.cell_type == "code"]
    if mine != built:
        changed = next((i for i, (a, b) in enumerate(zip(mine, built, strict=False)) if a != b),
                       min(len(mine), len(built)))
        raise ValueError(f"{source.name} has changed since make book executed it (code cell "
                         f"{changed + 1} of {len(mine)} differs from {path}): run make book")
    return executed


def _glued(executed: nbformat.NotebookNode) -> dict[str, str]:
    """``{key: value as text}`` of every value the chapter glues (``dpkit``'s ``glue``)."""
    values = {}
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and "text/plain" in output.get("data", {}):
                values[name] = output["data"]["text/plain"]
    return values


def _fill_glue(text: str, values: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        raw = values.get(match["key"])
        if raw is None:
            return match[0]                      # myst renders it as "the value printed"
        spec = match["spec"] or ""
        try:
            return format(float(raw), spec) if spec else raw
        except ValueError:
            return raw
    return _GLUE.sub(value, text)


def _widget_slides(view: dict, state: dict, heading: str) -> list[Slide]:
    """One slide per slider of a static widget (:func:`dpkit.widgets.explore`): its frames,
    one fragment per value of the slider, the other sliders at their starting value."""
    def model(ref: str) -> dict:
        return state[ref.removeprefix("IPY_MODEL_")]["state"]

    children = model(view["model_id"])["children"]
    sliders = [model(ref) for ref in children[:-1]]
    start = [slider["index"] for slider in sliders]
    slides = []
    for level, slider in enumerate(sliders):
        frames = []
        for index, label in enumerate(slider["_options_labels"]):
            node = model(children[-1])
            for depth in range(len(sliders)):
                node = model(node["children"][index if depth == level else start[depth]])
            shown = "" if index == 0 else ' class="fragment"'
            others = ", ".join(f"{escape(other['description'])} = "
                               f"{escape(other['_options_labels'][start[depth]])}"
                               for depth, other in enumerate(sliders) if depth != level)
            frames.append(f'<div{shown}><p class="setting">{escape(slider["description"])}'
                          f" = {escape(label)}" + (f" <span>({others})</span>" if others else "")
                          + f"</p>{node['value']}</div>")
        slides.append(Slide("widget", heading, '<div class="r-stack frames">'
                            + "".join(frames) + "</div>"))
    return slides


def _figure_slides(cell: nbformat.NotebookNode, state: dict, heading: str) -> list[Slide]:
    slides = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if _WIDGET_VIEW in data:
            slides += _widget_slides(data[_WIDGET_VIEW], state, heading)
        elif "text/html" in data and "<img" in data["text/html"]:
            slides.append(Slide("figure", heading, data["text/html"]))
        elif "image/png" in data:
            alt = data.get("text/plain", "figure")
            slides.append(Slide("figure", heading, f'<img alt="{escape(alt)}" '
                                f'src="data:image/png;base64,{data["image/png"].strip()}">'))
    return slides


def chapter_slides(book: Book, stem: str, executed: nbformat.NotebookNode | None) -> list[Slide]:
    """The slides of chapter ``stem``, in the order of the chapter.

    Parameters
    ----------
    book : Book
        The book, as :func:`dpkit.course.myst.read_book` reads it.
    stem : str
        The chapter's file stem (``"laplace"``).
    executed : NotebookNode or None
        The chapter as ``make book`` executed it (:func:`read_executed`), for its figures,
        widget frames and glued values; None for the statements alone.

    Returns
    -------
    list of Slide
        The title, the learning goals, the statements, figures and widget slides in the
        chapter's order, and the exercises.

    Raises
    ------
    KeyError
        If the book has no chapter ``stem``.
    """
    chapter = book.chapter(stem)
    renderer = book.renderer(stem, links=False)
    md = markdown_renderer()
    glued = _glued(executed) if executed is not None else {}
    state = (executed.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
             if executed is not None else {})
    numbers = {label: display for _, label, display in book.numbered_directives(stem)}

    def html(markdown: str) -> str:
        return md.render(renderer.markdown(_fill_glue(markdown, glued)))

    def inline(markdown: str) -> str:
        return md.renderInline(renderer.roles(_fill_glue(markdown, glued)))

    number = f"Chapter {chapter.number}" if chapter.number is not None else "Introduction"
    slides = [Slide("title", inline(chapter.title), f"<p class=\"kicker\">{number}</p>"
                    f"<h1>{inline(chapter.title)}</h1>"
                    "<p class=\"book\">Differential Privacy, Interactively</p>")]
    exercises = []
    cells = jupytext.read(chapter.path).cells
    built = iter([c for c in executed.cells if c.cell_type == "code"]) if executed else None
    heading = inline(chapter.title)
    for cell in cells:
        if cell.cell_type == "code":
            ran = next(built) if built is not None else None
            if ran is not None:
                slides += _figure_slides(ran, state, heading)
            continue
        for line in cell.source.splitlines():
            found = _HEADING.match(line)
            if found:
                heading = inline(found["text"])
        for block in _blocks([cell.source]):
            label = block.options.get("label", "")
            title = inline(block.arg)
            if block.name == "admonition" and block.arg == GOALS:
                slides.append(Slide("goals", GOALS, html(block.body)))
            elif block.name in STATEMENTS:
                name = numbers.get(label, block.name.removeprefix("prf:").capitalize())
                slides.append(Slide("statement", escape(name) + (f" ({title})" if title else ""),
                                    html(block.body), label))
            elif block.name == "exercise":
                exercises.append(f"<li data-label=\"{escape(label)}\"><strong>"
                                 f"{escape(numbers.get(label, 'Exercise'))}</strong> "
                                 f"{title}</li>")
    if exercises:
        slides.append(Slide("exercises", "Exercises", "<ul>" + "".join(exercises) + "</ul>"))
    return slides


STYLE = """
.reveal { font-size: 30px; }
.reveal .slides section { text-align: left; }
.reveal h1, .reveal h2 { text-transform: none; }
.reveal h2 { font-size: 1.3em; }
.reveal section.title-slide { text-align: center; }
.reveal .kicker, .reveal .book, .reveal .source { color: #444; }
.reveal .statement { font-size: 0.85em; border-left: 4px solid #2a6; padding-left: 0.8em; }
.reveal .statement p, .reveal .statement li { line-height: 1.35; }
.reveal section[data-kind="statement"] { font-size: 0.9em; }
.reveal img { max-height: 560px; background: #fff; }
.reveal .frames > div { background: #fff; width: 100%; text-align: center; }
.reveal .frames > .fragment { transition: none; }
.reveal .setting { font-weight: bold; margin: 0 0 0.3em; }
.reveal ul { display: block; }
.reveal .exercises li { font-size: 0.75em; }
.reveal mjx-container[display="true"] { overflow-x: auto; overflow-y: hidden; }
"""


def render_deck(book: Book, stem: str, slides: Sequence[Slide]) -> str:
    """The reveal.js page of a chapter's slides.

    Parameters
    ----------
    book : Book
        The book (for the chapter's title).
    stem : str
        The chapter's file stem.
    slides : sequence of Slide
        As :func:`chapter_slides` returns them.

    Returns
    -------
    str
        The page; it loads reveal.js and MathJax from ``_static/`` beside it
        (:data:`ASSETS`). A statement's slide has the directive's label as its ``id``, so
        ``<chapter>.html#/<label>`` opens it.
    """
    chapter = book.chapter(stem)
    sections = []
    for slide in slides:
        label = f' id="{escape(slide.label)}" data-label="{escape(slide.label)}"' \
            if slide.label else ""
        if slide.kind == "title":
            sections.append(f'<section class="title-slide" data-kind="title">{slide.html}'
                            f'<p class="source">Slides built from book/{escape(stem)}.md</p>'
                            "</section>")
            continue
        body = {"statement": f'<div class="statement">{slide.html}</div>',
                "exercises": f'<div class="exercises">{slide.html}</div>'}.get(slide.kind,
                                                                             slide.html)
        sections.append(f'<section data-kind="{slide.kind}"{label}>'
                        f"<h2>{slide.heading}</h2>{body}</section>")
    title = escape(f"{chapter.title}: slides")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="_static/reveal.js/reveal.css">
<link rel="stylesheet" href="_static/reveal.js/theme/white.css">
<style>{STYLE}</style>
<script>window.MathJax = {{options: {{enableMenu: false}}}};</script>
<script defer src="_static/mathjax/tex-chtml.js"></script>
<script src="_static/reveal.js/reveal.js"></script>
</head><body>
<div class="reveal"><div class="slides">
{chr(10).join(sections)}
</div></div>
<script>Reveal.initialize({{hash: true, width: 1280, height: 800, margin: 0.04,
  slideNumber: "c/t", transition: "none"}});</script>
</body></html>
"""


def build(chapters: Sequence[str] | None = None, out: Path = OUT, *, root: Path = ROOT,
          executed: Path | None = EXECUTED) -> list[Path]:
    """Write a deck per chapter into ``out`` with the assets it loads; return the decks.

    Parameters
    ----------
    chapters : sequence of str, optional
        Chapter stems; by default every chapter with learning goals (:func:`deck_chapters`).
    out : Path
        The folder of the decks (``_build/slides``).
    root : Path
        The repository (its ``book/`` and ``_toc.yml``, and the vendored assets).
    executed : Path or None
        The folder of the executed notebooks ``make book`` writes; None for decks without
        figures or widget frames (the statements alone).

    Raises
    ------
    ValueError
        If a chapter has no deck (the message lists those that do), or has changed since it
        was executed.
    FileNotFoundError
        If reveal.js or MathJax is not vendored (``make vendor``), or a chapter was not
        executed (``make book``).
    """
    book = read_book(root / "book", root / "_toc.yml")
    valid = deck_chapters(book)
    chapters = list(chapters) if chapters else valid
    unknown = [name for name in chapters if name not in valid]
    if unknown:
        raise ValueError(f"no deck for {', '.join(map(repr, unknown))}: the chapters with "
                         f"slides are {', '.join(valid)}")
    missing = [str(root / folder / name) for name, folder in ASSETS.items()
               if not (root / folder / name).is_dir()]
    if missing:
        raise FileNotFoundError(f"not vendored: {', '.join(missing)}; run make vendor")
    out = Path(out)
    for name, folder in ASSETS.items():
        shutil.copytree(root / folder / name, out / "_static" / name, dirs_exist_ok=True)
    written = []
    for stem in chapters:
        source = book.chapter(stem).path
        ran = read_executed(Path(executed) / f"{stem}.ipynb", source) if executed else None
        deck = out / f"{stem}.html"
        deck.write_text(render_deck(book, stem, chapter_slides(book, stem, ran)))
        written.append(deck)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: every chapter)")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (_build/slides)")
    parser.add_argument("--executed", type=Path, default=EXECUTED,
                        help="the executed notebooks of make book (_build/jupyter_execute/book)")
    args = parser.parse_args(argv)
    try:
        written = build(args.chapters, args.out, executed=args.executed)
    except (ValueError, FileNotFoundError) as error:
        print(f"make slides: {error}", file=sys.stderr)
        return 2
    print(f"{len(written)} decks in {args.out}: open {written[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
