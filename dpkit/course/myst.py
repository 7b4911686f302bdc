"""MyST Markdown to the Markdown a plain Jupyter notebook renders.

The book's chapters use MyST directives (theorems, exercises, admonitions) and roles
(cross-references, citations) that Jupyter Book renders and plain Jupyter shows as raw
text. This module rewrites them: a theorem becomes a quoted block headed
"**Theorem 2.1** (title)", numbered exactly as the rendered book numbers it; a cross-reference
becomes the text the book shows ("Theorem 2.1", a section's heading, a chapter's title); a
citation becomes "(Author Year)". It reads the table of contents for the chapter numbers and
``references.bib`` for the citations; it does not execute anything, so a number that the book
glues into its prose (``{glue:text}`key```) is not known here: the role becomes
:data:`GLUED_VALUE`, and each chapter prints every glued value in its code cell's output.

The words it writes ("Theorem", "Proof", "Solution to", :data:`GLUED_VALUE` …) go through
:func:`dpkit.i18n.tr`: read an edition with :func:`read_book`'s ``lang`` and render it inside
:func:`dpkit.i18n.in_language` to write them in that edition's language.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jupytext

from dpkit.i18n import LANGUAGES, tr

__all__ = ["EXPLICIT", "GLUED_VALUE", "HEADING", "OPEN_FENCE", "PLAIN_FENCE", "ROLE", "TARGET",
           "Block", "Book", "Chapter", "directives", "read_book", "read_directive",
           "solution_heading"]

#: What a ``{glue}`` role of the book becomes in a notebook: the rendered book shows the
#: value computed at build time; a notebook shows it in the output of the code cell that
#: glues it (every chapter prints what it glues).
GLUED_VALUE = "*(the value printed by the code)*"

# Directive types that sphinx-proof and sphinx-exercise number, each with its own counter.
_NUMBERED = {
    "prf:theorem": "Theorem", "prf:definition": "Definition", "prf:lemma": "Lemma",
    "prf:corollary": "Corollary", "prf:proposition": "Proposition", "prf:algorithm": "Algorithm",
    "prf:example": "Example", "prf:remark": "Remark", "prf:conjecture": "Conjecture",
    "prf:axiom": "Axiom", "prf:criterion": "Criterion", "prf:assumption": "Assumption",
    "prf:observation": "Observation", "prf:property": "Property", "exercise": "Exercise",
}
_ADMONITIONS = {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger",
                "error", "seealso"}
# The pieces of MyST the reader recognises, public for the tests that compare two editions
# of a page (tests/zh_parity.py): a directive's opening fence, a plain code fence, a
# directive's option line, a target ``(label)=``, a heading, a role ``{name}`content```, and
# a role's explicit text ``text <target>``.
OPEN_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{(?P<name>[^}]+)\}[ \t]*(?P<arg>.*)$")
PLAIN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
TARGET = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*$")
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<content>[^`]*)`")
# A Markdown link to another page of the book, by its source file: [text](page.md#anchor).
_PAGE_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?![a-zA-Z][\w+.-]*:|#)(?P<page>[^)\s#]+)\.md"
                        r"(?:#[^)\s]*)?\)")
_STARS = re.compile(r"\s*\(★+\)$")                # an exercise title's difficulty
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


@dataclass
class Chapter:
    """One chapter of the book: its file, its number in the table of contents, its title."""

    path: Path
    number: int | None
    title: str = ""

    @property
    def stem(self) -> str:
        return self.path.stem


@dataclass
class Book:
    """What rendering needs to know about the whole book: chapters, labels, citations."""

    chapters: list[Chapter]
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (text, stem)
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (names, year)
    #: label -> (name by title, stem): ``Theorem “Post-processing”``, ``section “…”``,
    #: ``chapter “…”`` (by its stem), for text read apart from the book's numbering (an exam).
    titles: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: stem -> title of each page of the book that is not a notebook (the teaching page):
    #: a reference into one names the page, and links nowhere (it has no notebook).
    pages: dict[str, str] = field(default_factory=dict)

    def chapter(self, stem: str) -> Chapter:
        for chapter in self.chapters:
            if chapter.stem == stem:
                return chapter
        raise KeyError(f"no chapter {stem!r} in the book")

    def renderer(self, stem: str, *, links: bool = True) -> _Renderer:
        """A renderer for chapter ``stem``: feed it the chapter's Markdown cells in order.

        With ``links``, a reference to another chapter links to its notebook,
        ``<chapter>.ipynb``, for notebooks written side by side (``make notebooks``);
        without, it is plain text naming the chapter where the reference alone does not
        (an assignment is handed out on its own, in a folder of its own). A link to a page
        that is not a chapter (the references) is always plain text: it has no notebook."""
        return _Renderer(self, self.chapter(stem), links=links)

    def numbered_directives(self, stem: str) -> list[tuple[str, str, str]]:
        """``(directive, label, "Exercise 2.3")`` for each numbered directive of a chapter
        (the kind in the current :func:`~dpkit.i18n.language`)."""
        return _number_directives(self.chapter(stem))


@dataclass(frozen=True)
class Block:
    """One directive of a Markdown cell, ``{name} arg``, with its options and raw body."""

    name: str
    arg: str
    options: dict[str, str]
    body: str


def read_directive(lines: list[str], i: int) -> tuple[Block, int] | None:
    """The directive that opens at ``lines[i]`` and the index of the line after its end.

    Parameters
    ----------
    lines : list of str
        A Markdown cell's lines.
    i : int
        Where to look for an opening fence: three or more backticks or colons followed by
        ``{name} arg``.

    Returns
    -------
    (Block, int) or None
        The directive (its body is everything up to the closing fence of the same
        length, nested directives included) and the index just past the closing fence
        (``len(lines) + 1`` if the fence is never closed); None if ``lines[i]`` opens none.
    """
    match = OPEN_FENCE.match(lines[i])
    if match is None:
        return None
    options, body_start = _options(lines, i + 1)
    end = next((j for j in range(body_start, len(lines)) if lines[j].strip() == match["fence"]),
               len(lines))
    return (Block(match["name"].strip(), match["arg"].strip(), options,
                  "\n".join(lines[body_start:end])), end + 1)


def _is_chapter(path: Path) -> bool:
    return path.suffix == ".md" and path.read_text().startswith("---\njupytext")


def _toc_order(toc: Path) -> list[tuple[str, bool]]:
    """``(file stem, numbered)`` in table-of-contents order (root first, unnumbered)."""
    order: list[tuple[str, bool]] = []
    numbered = False
    for line in toc.read_text().splitlines():
        stripped = line.split("#", 1)[0].strip()
        if stripped.startswith("root:"):
            order.append((Path(stripped.split(":", 1)[1].strip()).stem, False))
        elif stripped.startswith("- caption:") or stripped.startswith("caption:"):
            numbered = False
        elif stripped.startswith("numbered:"):
            numbered = stripped.split(":", 1)[1].strip().lower() == "true"
        elif stripped.startswith("- file:") or stripped.startswith("file:"):
            order.append((Path(stripped.split(":", 1)[1].strip()).stem, numbered))
    return order


def read_book(book_dir: str | Path, toc: str | Path | None = None, *,
              lang: str = "en") -> Book:
    """Collect the chapters of ``book_dir`` with their numbers, labels and citations.

    Parameters
    ----------
    book_dir : path
        Folder of the MyST Markdown chapters (``*.md`` with a jupytext header).
    toc : path, optional
        The Jupyter Book ``_toc.yml``; by default the one beside ``book_dir``. Without one,
        chapters are taken in file-name order, unnumbered.
    lang : str, optional
        The edition, one of :data:`~dpkit.i18n.LANGUAGES`: ``"en"`` reads ``book_dir``;
        another reads its translation ``book_dir/<lang>/<chapter>.md`` of each chapter (the
        English page where there is none, as ``scripts/zh_book.py`` does), numbered by the
        same table of contents and citing the same ``references.bib``. Labels are named in
        the current :func:`~dpkit.i18n.language` ("Theorem 2.1"): read inside
        :func:`~dpkit.i18n.in_language` for another.

    Returns
    -------
    Book
        The chapters in table-of-contents order, their labels and the citations.

    Raises
    ------
    FileNotFoundError
        If ``book_dir`` holds no chapter.
    ValueError
        If ``lang`` is not one of :data:`~dpkit.i18n.LANGUAGES`.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    book_dir = Path(book_dir)
    found = {p.stem: p for p in sorted(book_dir.glob("*.md")) if _is_chapter(p)}
    if lang != "en":
        found.update((p.stem, p) for p in sorted((book_dir / lang).glob("*.md"))
                     if p.stem in found and _is_chapter(p))
    if not found:
        raise FileNotFoundError(f"no MyST notebook chapters (*.md with a jupytext header) "
                                f"in {book_dir.resolve()}")
    toc = Path(toc) if toc is not None else book_dir.parent / "_toc.yml"
    chapters: list[Chapter] = []
    if toc.is_file():
        number = 0
        for stem, numbered in _toc_order(toc):
            if numbered:
                number += 1
            if stem in found:
                chapters.append(Chapter(found.pop(stem), number if numbered else None))
    chapters += [Chapter(path, None) for path in found.values()]
    book = Book(chapters)
    for chapter in chapters:
        _index_chapter(book, chapter)
    for path in sorted(book_dir.glob("*.md")):     # the pages that are not notebooks
        if not _is_chapter(path) and path.stem not in book.titles:
            page = book_dir / lang / path.name if lang != "en" else path
            _index_page(book, (page if page.is_file() else path).read_text(), path.stem)
    bib = book_dir / "references.bib"
    if bib.is_file():
        book.citations = _read_bib(bib.read_text())
    return book


def _markdown_text(chapter: Chapter) -> str:
    notebook = jupytext.read(chapter.path)
    return "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")


def _number_directives(chapter: Chapter) -> list[tuple[str, str, str]]:
    counters: dict[str, int] = {}
    found = []
    for name, _, options in directives(_markdown_text(chapter)):
        kind = _NUMBERED.get(name)
        if kind is None or "nonumber" in options:
            continue
        counters[kind] = counters.get(kind, 0) + 1
        prefix = f"{chapter.number}." if chapter.number is not None else ""
        found.append((name, options.get("label", ""),
                      _kind(kind, f"{prefix}{counters[kind]}")))
    return found


def _kind(kind: str, number: str = "") -> str:
    """A numbered directive's name as the book shows it, "Theorem 2.1", in the current
    language (``number`` empty for an unnumbered one)."""
    return tr(f"{kind} {{number}}").format(number=number).strip()


def directives(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """Every directive in ``text`` (nested ones included), in order, with its argument (a
    title) and its options.

    Parameters
    ----------
    text : str
        MyST Markdown.

    Returns
    -------
    list of (str, str, dict)
        ``(name, argument, options)`` per opening fence, as :func:`read_directive` reads it.

    Examples
    --------
    >>> directives("```{prf:theorem} Title\\n:label: thm-a\\nBody.\\n```")
    [('prf:theorem', 'Title', {'label': 'thm-a'})]
    """
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = OPEN_FENCE.match(line)
        if match:
            found.append((match["name"].strip(), match["arg"].strip(), _options(lines, i + 1)[0]))
    return found


def _options(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    options: dict[str, str] = {}
    i = start
    while i < len(lines):
        match = _OPTION.match(lines[i])
        if not match:
            break
        options[match["key"]] = match["value"].strip()
        i += 1
    return options, i


def _index_chapter(book: Book, chapter: Chapter) -> None:
    text = _markdown_text(chapter)
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading and len(heading["hashes"]) == 1 and not chapter.title:
            chapter.title = _strip_roles(heading["text"])
    for _, label, display in _number_directives(chapter):
        if label:
            book.labels[label] = (display, chapter.stem)
    book.titles[chapter.stem] = (f"chapter “{chapter.title or chapter.stem}”", chapter.stem)
    for name, title, options in directives(text):
        if name in _NUMBERED and options.get("label"):
            title = _STARS.sub("", _strip_roles(title))
            kind = _NUMBERED[name]
            book.titles[options["label"]] = (f"{kind} “{title}”" if title else kind, chapter.stem)
    _index_targets(book, text, chapter.stem)


def _index_targets(book: Book, text: str, stem: str) -> None:
    """Index the ``(label)=`` targets of page ``stem`` by the heading each stands above."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        target = TARGET.match(line.strip())
        if target:
            following = next((x for x in lines[i + 1:] if x.strip()), "")
            heading = HEADING.match(following)
            shown = _strip_roles(heading["text"]) if heading else target["label"]
            book.labels.setdefault(target["label"], (shown, stem))
            book.titles.setdefault(target["label"], (f"section “{shown}”", stem))


def _index_page(book: Book, text: str, stem: str) -> None:
    """Index a page that is not a notebook (the teaching page): its title and targets."""
    title = next((HEADING.match(x) for x in text.splitlines() if HEADING.match(x)), None)
    book.pages[stem] = _strip_roles(title["text"]) if title else stem
    _index_targets(book, text, stem)


def _strip_roles(text: str) -> str:
    return ROLE.sub(lambda m: m["content"], text)


def _read_bib(text: str) -> dict[str, tuple[str, str]]:
    """``key -> (author names as cited, year)`` from a BibTeX file (the fields we need)."""
    entries = {}
    for match in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,", text):
        body = text[match.end():]
        end = re.search(r"\n@\w+\s*\{", body)
        body = body[:end.start()] if end else body
        author = _bib_field(body, "author") or _bib_field(body, "editor") or match[1]
        year = _bib_field(body, "year") or "n.d."
        entries[match[1]] = (_cited_names(author), year)
    return entries


def _bib_field(body: str, name: str) -> str | None:
    match = re.search(rf"\b{name}\s*=\s*", body, re.I)
    if not match:
        return None
    rest = body[match.end():]
    if rest.startswith("{"):
        depth, out = 0, []
        for ch in rest:
            depth += ch == "{"
            depth -= ch == "}"
            out.append(ch)
            if depth == 0:
                break
        value = "".join(out)[1:-1]
    elif rest.startswith('"'):
        value = rest[1:rest.index('"', 1)]
    else:
        value = re.match(r"[^,\n}]*", rest)[0]
    return re.sub(r"[{}]", "", " ".join(value.split()))


def _cited_names(authors: str) -> str:
    names = [a.strip() for a in re.split(r"\s+and\s+", authors) if a.strip()]
    last = [n.split(",")[0].strip() if "," in n else n.split()[-1] for n in names]
    if len(last) == 1:
        return last[0]
    if len(last) == 2:
        return f"{last[0]} and {last[1]}"
    return f"{last[0]} et al."


class _Renderer:
    """Rewrites the directives and roles of one chapter's Markdown for plain Jupyter."""

    def __init__(self, book: Book, chapter: Chapter, *, links: bool = True) -> None:
        self.book = book
        self.chapter = chapter
        self.links = links
        numbered = _number_directives(chapter)
        self.numbers = {label: display for _, label, display in numbered if label}
        self.titled = False
        self._sequences: dict[str, Iterator[str]] = {
            name: iter([display for kind, _, display in numbered if kind == name])
            for name in {kind for kind, _, _ in numbered}}

    # -- roles ---------------------------------------------------------------------------
    def roles(self, text: str) -> str:
        text = _PAGE_LINK.sub(self._page_link, text)
        return ROLE.sub(self._role, text)

    def _page_link(self, match: re.Match[str]) -> str:
        stem = Path(match["page"]).name
        if any(chapter.stem == stem for chapter in self.book.chapters):
            return self._link(match["text"], stem)
        return match["text"]

    def _role(self, match: re.Match[str]) -> str:
        role, content = match["role"], match["content"]
        explicit = EXPLICIT.match(content)
        text, target = (explicit["text"], explicit["target"]) if explicit else (None, content)
        if role in ("prf:ref", "ref", "numref", "eq"):
            shown, stem = self.book.labels.get(target, (target, self.chapter.stem))
            return self._link(text or shown, stem)
        if role == "doc":
            stem = Path(target).stem
            try:
                chapter = self.book.chapter(stem)
            except KeyError:
                return text or stem
            shown = tr("Chapter {number}, *{title}*") if chapter.number else "*{title}*"
            return self._link(text or shown.format(number=chapter.number,
                                                   title=chapter.title), stem)
        if role.startswith("cite"):
            return self._cite(role, target)
        if role == "math":
            return f"${content}$"
        return tr(GLUED_VALUE) if role.startswith("glue") else (text or target)

    def _link(self, text: str, stem: str) -> str:
        if stem == self.chapter.stem:
            return text
        if stem in self.book.pages:                  # no notebook to link to: name the page
            return tr("{text} (in *{title}*)").format(text=text, title=self.book.pages[stem])
        if self.links:
            return f"[{text}]({stem}.ipynb)"
        try:
            chapter = self.book.chapter(stem)
        except KeyError:
            return text
        if chapter.number is not None or not chapter.title or chapter.title in text:
            return text                          # "Theorem 2.1" names its chapter
        return tr("{text} (in *{title}*)").format(text=text, title=chapter.title)

    def _cite(self, role: str, keys: str) -> str:
        cited = [self.book.citations.get(k.strip(), (k.strip(), "n.d.")) for k in keys.split(",")]
        if role in ("cite:t", "cite:ts"):
            return "; ".join(f"{names} ({year})" for names, year in cited)
        return "(" + "; ".join(f"{names} {year}" for names, year in cited) + ")"

    # -- directives ----------------------------------------------------------------------
    def markdown(self, text: str) -> str:
        lines = text.splitlines()
        out: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if TARGET.match(line.strip()):
                i += 1
                continue
            directive = read_directive(lines, i)
            if directive is not None:
                block, i = directive
                out.extend(self._render(block.name, self.roles(block.arg), block.options,
                                        block.body))
                continue
            plain = PLAIN_FENCE.match(line)
            if plain:  # an ordinary code block: copy verbatim up to its closing fence
                end = next((j for j in range(i + 1, len(lines))
                            if lines[j].strip() == plain.group(1)), len(lines) - 1)
                out.extend(lines[i:end + 1])
                i = end + 1
                continue
            heading = HEADING.match(line)
            if heading and len(heading["hashes"]) == 1 and self.chapter.number is not None \
                    and not self.titled:
                line = f"# {self.chapter.number}. {heading['text']}"  # as the book numbers it
                self.titled = True
            out.append(self.roles(re.sub(r"(\$\$)\s*\([\w:-]+\)\s*$", r"\1", line)))
            i += 1
        return "\n".join(out).strip("\n")

    def _number(self, name: str, options: dict[str, str]) -> str:
        """The book's number for this directive: counted per kind, in chapter order."""
        if "nonumber" in options:
            return _kind(_NUMBERED[name])
        return next(self._sequences.get(name, iter(())), _kind(_NUMBERED[name]))

    def _render(self, name: str, arg: str, options: dict[str, str], body: str) -> list[str]:
        if name in ("bibliography", "tableofcontents", "solution-end"):
            return []
        if name == "solution-start" or name == "solution":
            shown = self.numbers.get(arg, arg)
            inner = self.markdown(body) if name == "solution" else ""
            return _quote(solution_heading(shown) + (f"\n\n{inner}" if inner else ""))
        if name == "math":
            return ["$$", body.strip(), "$$"]
        if name in ("code-block", "code", "sourcecode"):
            return [f"```{arg}", body, "```"]
        if name in ("figure", "image"):
            return [f"![{options.get('alt', '')}]({arg})", "", self.markdown(body)]
        inner = self.markdown(body)
        if name == "prf:proof":
            return _quote(tr("*Proof.* {body}").format(body=inner) + " $\\square$")
        if name in _NUMBERED:
            head = self._number(name, options)
            title = tr(" ({title})").format(title=arg) if arg else ""
            return _quote(tr("**{head}**{title}. {body}").format(head=head, title=title,
                                                                 body=inner))
        if name == "admonition":
            return _quote(f"**{arg}**\n\n{inner}")
        if name in _ADMONITIONS:
            return _quote(f"{tr(f'**{name.capitalize()}.**')} {(arg + ' ') if arg else ''}"
                          f"{inner}")
        return _quote(f"**{arg}**\n\n{inner}" if arg else inner)


def solution_heading(shown: str) -> str:
    """The heading of an exercise's solution, "**Solution to Exercise 2.3.**", in the
    current :func:`~dpkit.i18n.language`.

    Parameters
    ----------
    shown : str
        The exercise as the notebook names it ("Exercise 2.3").

    Returns
    -------
    str
        The heading, in Markdown.

    Examples
    --------
    >>> solution_heading("Exercise 2.3")
    '**Solution to Exercise 2.3.**'
    """
    return tr("**Solution to {exercise}.**").format(exercise=shown)


def _quote(text: str) -> list[str]:
    """``text`` as a Markdown block quote (the box a notebook shows), with blank lines around."""
    return ["", *(f"> {line}".rstrip() for line in text.strip("\n").splitlines()), ""]
