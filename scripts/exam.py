"""``make exam CHAPTERS=laplace,gaussian``: a printable exam and its answer key, offline.

The exam bank is instructor material and lives outside the book, in ``course/exams/``: one
Markdown file per chapter (``course/exams/laplace.md`` for ``book/laplace.md``), never read
by the book's build, the student notebooks or the assignments (the folder's other files,
``README.md`` and ``goals.md``, the map of learning goals to questions, are not read as
banks: :func:`bank_chapters` takes only files named after a chapter). Each question is a level-2
heading ``## <id>: <title>``, two lines ``type: <type>`` and ``points: <n>``, and three
level-3 sections in this order:

- ``### Question``: what the student reads;
- ``### Model answer``: a complete answer, every number in it recomputed by
  ``tests/test_exam.py``;
- ``### Rubric``: a list ``- <n> point(s): <what earns them>`` whose points add up to the
  question's.

The types are those of :data:`TYPES`. Text is Markdown with ``$…$`` and ``$$…$$`` math, and
``{prf:ref}`label``` and ``{ref}`label``` name the book's definitions, theorems, exercises
and sections as the book titles them.

:func:`build` assembles the chosen chapters, in the book's order, into ``exam.html`` (the
questions only, numbered, with their points and room to answer) and ``key.html`` (each
question with its model answer and rubric), both typeset by the MathJax vendored in
``book/_static/vendor`` (``make vendor``), and prints both to PDF with
``scripts/pdf.py``'s :func:`html_to_pdf` (Debian's chromium, offline).

Usage: ``python scripts/exam.py laplace,gaussian [--out _build/exam] [--no-pdf]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Sequence
from html import escape
from pathlib import Path

import yaml

from dpkit.course.myst import read_book

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT / "course" / "exams"
BOOK = ROOT / "book"
OUT = ROOT / "_build" / "exam"
MATHJAX = BOOK / "_static" / "vendor" / "mathjax" / "tex-chtml.js"

TYPES = {
    "proof": "short proof",
    "calculation": "hand calculation",
    "code": "what goes wrong here (code reading)",
    "true-false": "true or false, with a justification",
}
SECTIONS = ("Question", "Model answer", "Rubric")
# Room to answer in the exam, per point (the answer space of a question is at least 3 cm).
ANSWER_CM_PER_POINT = 2.2

_HEADING = re.compile(r"^## (?P<id>[a-z0-9][a-z0-9-]*): (?P<title>\S.*)$")
_META = re.compile(r"^(?P<key>type|points): (?P<value>.+)$")
_RUBRIC_ITEM = re.compile(r"^- (?P<points>\d+) points?: \S")
_ROLE = re.compile(r"\{(?P<role>prf:ref|ref|doc)\}`(?P<label>[^`<>]+)`")


@dataclasses.dataclass(frozen=True)
class Question:
    """One question of the exam bank."""

    chapter: str
    id: str
    title: str
    type: str
    points: int
    question: str
    answer: str
    rubric: str

    def rubric_points(self) -> list[int]:
        """The points of each item of the rubric, in order."""
        return [int(m.group("points")) for line in self.rubric.splitlines()
                if (m := _RUBRIC_ITEM.match(line))]


def book_chapters(root: Path = ROOT) -> list[str]:
    """The chapters of the book, in the order of ``_toc.yml`` (file stems of ``book/``)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    entries = [toc["root"]]
    for part in toc.get("parts", [toc]):
        entries += [chapter["file"] for chapter in part.get("chapters", [])]
    return [Path(entry).name for entry in entries]


def bank_chapters(bank: Path = BANK, root: Path = ROOT) -> list[str]:
    """The chapters that have a file in the exam bank, in the book's order."""
    have = {path.stem for path in bank.glob("*.md")}
    return [chapter for chapter in book_chapters(root) if chapter in have]


def parse_bank(path: Path) -> list[Question]:
    """Read one chapter's file of the exam bank.

    Raises
    ------
    ValueError
        If a question lacks a field or a section, has an unknown type, a number of points
        that is not a positive integer, or an id used twice; the message names the file and
        the question.
    """
    path = Path(path)
    text = path.read_text()
    blocks = re.split(r"^(?=## )", text, flags=re.MULTILINE)[1:]
    questions: list[Question] = []
    for block in blocks:
        head, _, body = block.partition("\n")
        match = _HEADING.match(head)
        if match is None:
            raise ValueError(f"{path}: a question heading must read '## <id>: <title>', "
                             f"got {head!r}")
        qid = match.group("id")
        where = f"{path}: question {qid}"
        meta_text, *parts = re.split(r"^### (.+)$", body, flags=re.MULTILINE)
        meta = {}
        for line in meta_text.strip().splitlines():
            found = _META.match(line.strip())
            if found is None:
                raise ValueError(f"{where}: expected 'type: …' and 'points: …' before the "
                                 f"sections, got {line!r}")
            meta[found.group("key")] = found.group("value").strip()
        names = tuple(parts[0::2])
        if names != SECTIONS:
            raise ValueError(f"{where}: sections must be {', '.join(SECTIONS)} in this order, "
                             f"got {', '.join(names) or 'none'}")
        sections = [part.strip() for part in parts[1::2]]
        if not all(sections):
            raise ValueError(f"{where}: empty section")
        if meta.get("type") not in TYPES:
            raise ValueError(f"{where}: type must be one of {', '.join(TYPES)}, "
                             f"got {meta.get('type')!r}")
        if not re.fullmatch(r"[1-9]\d*", meta.get("points", "")):
            raise ValueError(f"{where}: points must be a positive integer, "
                             f"got {meta.get('points')!r}")
        if qid in {q.id for q in questions}:
            raise ValueError(f"{where}: id used twice")
        questions.append(Question(path.stem, qid, match.group("title").strip(), meta["type"],
                                  int(meta["points"]), *sections))
    if not questions:
        raise ValueError(f"{path}: no question (each starts with '## <id>: <title>')")
    return questions


def load(chapters: Sequence[str], bank: Path = BANK,
         root: Path = ROOT) -> dict[str, list[Question]]:
    """The questions of ``chapters``, by chapter in the book's order.

    Raises
    ------
    ValueError
        If a chapter name has no file in the exam bank (the message lists those that do),
        or if no chapter is given.
    """
    valid = bank_chapters(bank, root)
    names = [name.strip() for name in chapters if name.strip()]
    if not names:
        raise ValueError(f"CHAPTERS must name at least one chapter, one of: {', '.join(valid)}")
    unknown = [name for name in names if name not in valid]
    if unknown:
        raise ValueError(f"unknown chapter {', '.join(map(repr, unknown))} in CHAPTERS; the "
                         f"exam bank has: {', '.join(valid)}")
    return {chapter: parse_bank(bank / f"{chapter}.md") for chapter in valid if chapter in names}


def book_labels(book: Path = BOOK) -> dict[str, str]:
    """``{label: name}`` of every labelled definition, theorem, exercise and section of the
    book at ``book``, named as a reader finds it (``Theorem “Post-processing”``), and of each
    chapter (by its file stem, for ``{doc}``): :attr:`dpkit.course.myst.Book.titles`."""
    return {label: name for label, (name, _) in read_book(book).titles.items()}


def resolve_references(text: str, labels: dict[str, str]) -> str:
    """Replace the book's cross-reference roles in ``text`` by the names of their targets.

    Raises
    ------
    ValueError
        If a role names a label the book does not define.
    """
    def name(match: re.Match) -> str:
        label = match.group("label")
        if label not in labels:
            raise ValueError(f"unknown label {label!r} in {{{match.group('role')}}}: the book "
                             "defines no such definition, theorem, exercise or section")
        return labels[label]
    return _ROLE.sub(name, text)


def markdown_renderer():
    """A markdown-it renderer (CommonMark, tables, ``$…$`` and ``$$…$$`` math).

    Math comes out with the classes and delimiters Sphinx gives it, for the vendored MathJax
    to typeset; ``scripts/slides.py`` renders the slides' statements with it too.
    """
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin, double_inline=True)
    # The classes and delimiters Sphinx gives math, which MathJax typesets and scripts/pdf.py
    # waits for.
    md.add_render_rule("math_inline",
                       lambda self, tokens, idx, options, env:
                       f'<span class="math">\\({escape(tokens[idx].content)}\\)</span>')
    md.add_render_rule("math_inline_double",
                       lambda self, tokens, idx, options, env:
                       f'<div class="math">\\[{escape(tokens[idx].content)}\\]</div>')
    md.add_render_rule("math_block",
                       lambda self, tokens, idx, options, env:
                       f'<div class="math">\\[{escape(tokens[idx].content)}\\]</div>\n')
    return md


STYLE = """
body { font-family: "DejaVu Serif", Georgia, serif; font-size: 11pt; line-height: 1.45;
       max-width: 44em; margin: 2em auto; color: #111; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin: 1.6em 0 0.4em; }
h3 { font-size: 1em; margin: 1em 0 0.3em; }
.exam-meta { color: #333; }
.exam-id { font-family: "DejaVu Sans Mono", monospace; font-size: 0.8em; color: #555; }
.exam-question { break-inside: avoid; }
.exam-space { border: 1px solid #999; border-radius: 3px; margin: 0.6em 0 1.2em; }
.exam-answer, .exam-rubric { border-left: 3px solid #2a6; padding-left: 0.8em; }
.exam-rubric { border-color: #c80; }
.exam-name { margin: 1.2em 0; }
pre { background: #f4f4f4; padding: 0.6em; white-space: pre-wrap; font-size: 0.9em; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 0.92em; }
"""


def render_html(questions: dict[str, list[Question]], *, key: bool,
                mathjax: Path = MATHJAX, at: Path = OUT, book: Path = BOOK) -> str:
    """The exam (``key=False``) or its answer key (``key=True``) as one HTML page.

    Parameters
    ----------
    questions : dict
        ``{chapter: questions}``, as :func:`load` returns.
    key : bool
        Whether to print the model answers and rubrics (the key) or room to answer (the exam).
    mathjax : Path
        The vendored ``tex-chtml.js``; the page loads it by a path relative to ``at``.
    at : Path
        The folder the page will be written to.
    book : Path
        The book's chapters, whose labels name the references.

    Returns
    -------
    str
        The page.

    Raises
    ------
    ValueError
        If a question refers to a label the book does not define.
    """
    md, labels = markdown_renderer(), book_labels(book)
    titles = {chapter: labels.get(chapter, chapter).removeprefix("chapter ").strip("“”")
              for chapter in questions}

    def html(text: str) -> str:
        return md.render(resolve_references(text, labels))

    total = sum(q.points for qs in questions.values() for q in qs)
    kind = "Answer key" if key else "Exam"
    heading = f"{kind}: {', '.join(titles.values())}"
    body = [f"<h1>{escape(heading)}</h1>",
            f'<p class="exam-meta">Differential Privacy, Interactively. '
            f"{sum(map(len, questions.values()))} questions, {total} points.</p>"]
    if key:
        body.append('<p class="exam-meta"><strong>Instructor material: do not hand out.'
                    "</strong></p>")
    else:
        body.append('<p class="exam-name">Name: ______________________________</p>'
                    "<p>Answer on this sheet, by hand; no computer or calculator is needed. "
                    "Justify every answer: a bare number or a bare true/false earns no point."
                    "</p>")
    number = 0
    for chapter, chapter_questions in questions.items():
        body.append(f"<h2>{escape(titles[chapter])}</h2>")
        for question in chapter_questions:
            number += 1
            plural = "s" if question.points != 1 else ""
            head = (f"<h3>Question {number} ({question.points} point{plural}). "
                    f"{escape(question.title)}")
            if key:
                head += (f' <span class="exam-id">[{question.id}, '
                         f"{escape(TYPES[question.type])}]</span>")
            parts = [head + "</h3>", html(question.question)]
            if key:
                parts += ["<h4>Model answer</h4>",
                          f'<div class="exam-answer">{html(question.answer)}</div>',
                          "<h4>Rubric</h4>",
                          f'<div class="exam-rubric">{html(question.rubric)}</div>']
            else:
                height = max(3.0, ANSWER_CM_PER_POINT * question.points)
                parts.append(f'<div class="exam-space" style="height: {height:g}cm"></div>')
            body.append(f'<section class="exam-question" id="{question.id}">'
                        + "\n".join(parts) + "</section>")
    script = Path(os.path.relpath(mathjax, at)).as_posix()
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(heading)}</title><style>{STYLE}</style>"
            f'<script defer src="{escape(script)}"></script></head>\n<body>\n'
            + "\n".join(body) + "\n</body></html>\n")


def build(chapters: Sequence[str], out: Path = OUT, *, pdf: bool = True,
          bank: Path = BANK, root: Path = ROOT) -> list[Path]:
    """Write ``exam.html`` and ``key.html`` for ``chapters`` into ``out`` and, with ``pdf``,
    print them to ``exam.pdf`` and ``key.pdf``; return the paths written.

    Raises
    ------
    ValueError
        For an unknown chapter (see :func:`load`) or label.
    FileNotFoundError
        If MathJax is not vendored (``make vendor``), or chromium is missing (``pdf``).
    """
    questions = load(chapters, bank, root)
    mathjax = root / MATHJAX.relative_to(ROOT)
    if not mathjax.is_file():
        raise FileNotFoundError(f"MathJax is not vendored at {mathjax}: run make vendor")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, key in (("exam", False), ("key", True)):
        page = out / f"{name}.html"
        page.write_text(render_html(questions, key=key, mathjax=mathjax, at=out,
                                    book=root / "book"))
        written.append(page)
    if pdf:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from pdf import html_to_pdf

        written += [html_to_pdf(page, page.with_suffix(".pdf")) for page in list(written)]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", help="comma-separated chapters, e.g. laplace,gaussian")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (_build/exam)")
    parser.add_argument("--no-pdf", action="store_true", help="write the HTML only")
    args = parser.parse_args(argv)
    try:
        written = build(args.chapters.split(","), args.out, pdf=not args.no_pdf)
    except (ValueError, FileNotFoundError) as error:
        print(f"make exam: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
