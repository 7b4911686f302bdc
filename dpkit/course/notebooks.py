"""Export the chapters to notebooks for teaching: ``python -m dpkit.course notebooks BOOK OUT``.

Every chapter (a MyST Markdown notebook) is written twice as ``.ipynb``, rendered for plain
Jupyter (theorems, exercises and admonitions as quoted boxes numbered as in the book,
cross-references and citations as text; see :mod:`dpkit.course.myst`):

* ``OUT/teacher/<chapter>.ipynb``: the whole chapter, solutions included;
* ``OUT/student/<chapter>.ipynb``: the same with every solution removed — each block from
  a ```` ```{solution-start} ```` directive to its ```` ```{solution-end} ```` (markdown and
  code cells alike) and every ```` ```{solution} ```` directive. In its place the student
  finds a cell to work in: for a code exercise, a starter code cell with the signature of
  each function to write (body ``raise NotImplementedError``) and the exercise's
  ``dpkit.check`` call; for a proof or design exercise, an empty Markdown answer cell.

Outputs are not stored: the notebooks run top to bottom in a kernel with ``dpkit``.

``export(..., lang="zh")`` writes the same notebooks from the Simplified Chinese pages
(``BOOK/zh/<chapter>.md``): the same code cells, exercises and answer cells, with the words
written here and in :mod:`dpkit.course.myst` in Chinese (:func:`dpkit.i18n.tr`), and one more
code cell before the chapter's first, :data:`LANGUAGE_CELL`, that sets the figures' and
widgets' language.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat

from dpkit.course.myst import Book, read_book, solution_heading
from dpkit.i18n import in_language, tr

__all__ = ["LANGUAGE_CELL", "Solution", "export", "language_cell", "solutions",
           "starter_code", "student_notebook", "teacher_notebook"]

_SOLUTION = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{(?P<kind>solution|solution-start|"
                       r"solution-end)\}[ \t]*(?P<label>\S*)")
ANSWER_PROMPT = "**Your answer.** *(Write your proof or design here.)*"
#: The code cell below a written answer's prompt, for a computation the question asks for.
WORKING_PROMPT = "# Your working, if the exercise asks you to compute something.\n"
#: The first code cell of a notebook in another language than English: figures and widgets
#: in the notebook's language (``{lang}``), whatever ``DPKIT_LANG`` the kernel has.
LANGUAGE_CELL = ("# Figures and widgets in this notebook's language.\nimport dpkit.i18n\n\n"
                 "dpkit.i18n.set_language({lang!r})\n")
#: The comments that :func:`starter_code` writes where the student's code goes.
_YOUR_CODE, _YOUR_ANSWER = "# Your code here.", "# your answer"


@dataclass
class Solution:
    """One exercise's solution block: its label, its Markdown and its code cells."""

    label: str
    markdown: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)

    @property
    def checked(self) -> bool:
        """Whether it is a code exercise: its code calls a ``dpkit.check`` function."""
        return any("dpkit.check." in source for source in self.code)


def notebook_items(notebook: nbformat.NotebookNode) -> Iterator[tuple[str, object]]:
    """The notebook as a stream of ``("markdown", text)``, ``("code", cell)``,
    ``("start", label)``, ``("end", None)`` and ``("inline", (label, body))`` items."""
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            yield "code", cell
            continue
        lines = cell.source.splitlines()
        kept: list[str] = []
        i = 0
        while i < len(lines):
            match = _SOLUTION.match(lines[i])
            if not match:
                kept.append(lines[i])
                i += 1
                continue
            if kept:
                yield "markdown", "\n".join(kept)
                kept = []
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].strip() == match["fence"]), len(lines))
            body = [x for x in lines[i + 1:end] if not re.match(r"^[ \t]*:[\w-]+:", x)]
            if match["kind"] == "solution-start":
                yield "start", match["label"]
            elif match["kind"] == "solution-end":
                yield "end", None
            else:
                yield "inline", (match["label"], "\n".join(body))
            i = end + 1
        if kept:
            yield "markdown", "\n".join(kept)


def solutions(notebook: nbformat.NotebookNode) -> list[Solution]:
    """Every solution of a chapter, in order.

    Raises
    ------
    ValueError
        If a ``solution-start`` is never closed by a ``solution-end``, or one opens inside
        another.
    """
    found: list[Solution] = []
    current: Solution | None = None
    for kind, item in notebook_items(notebook):
        if kind == "start":
            if current is not None:
                raise ValueError(f"a {{solution-start}} for {item} opens inside the solution "
                                 f"of {current.label}")
            current = Solution(str(item))
        elif kind == "end":
            if current is None:
                raise ValueError("a {solution-end} closes no {solution-start}")
            found.append(current)
            current = None
        elif kind == "inline":
            label, body = item  # type: ignore[misc]
            found.append(Solution(label, [body]))
        elif current is not None:
            if kind == "markdown":
                current.markdown.append(str(item))
            else:
                current.code.append(item.source)  # type: ignore[union-attr]
    if current is not None:
        raise ValueError(f"the {{solution-start}} of {current.label} is not closed by "
                         f"{{solution-end}}")
    return found


def starter_code(source: str) -> str:
    """The student's starting point for a solution cell: signatures without bodies.

    Every top-level function (and every method of a top-level class) keeps its signature and
    gets the body ``raise NotImplementedError``; a top-level assignment becomes
    ``name = ...``; lines calling ``dpkit.check`` stay; everything else (imports, helper
    computations, prints of results) is dropped, so no part of the solution survives.

    Raises
    ------
    SyntaxError
        If ``source`` is not valid Python.

    Examples
    --------
    >>> print(starter_code("import math\\n\\ndef f(x, y=2):\\n    return math.log(x) * y\\n"
    ...                    "\\nprint(dpkit.check.check_f(f))"))
    def f(x, y=2):
        # Your code here.
        raise NotImplementedError
    <BLANKLINE>
    print(dpkit.check.check_f(f))

    The comments are in the current :func:`~dpkit.i18n.language`.
    """
    tree = ast.parse(source)
    parts: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(_stub(node))
        elif isinstance(node, ast.ClassDef):
            head = _signature(node)
            methods = [_stub(m, "    ") for m in node.body
                       if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            parts.append("\n".join([head, *(methods or ["    pass"])]))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = ", ".join(ast.unparse(t) for t in targets)
            parts.append(f"{names} = ...  {tr(_YOUR_ANSWER)}")
        elif "dpkit.check." in ast.get_source_segment(source, node):
            parts.append(ast.get_source_segment(source, node))
    return "\n\n".join(parts)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
               indent: str = "") -> str:
    """A definition's decorators and signature, as source, without its body."""
    shell = copy.copy(node)
    shell.body = [ast.Pass()]
    head = ast.unparse(shell).rsplit("\n", 1)[0]
    return "\n".join(indent + line for line in head.splitlines())


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str = "") -> str:
    body = indent + "    "
    return (f"{_signature(node, indent)}\n{body}{tr(_YOUR_CODE)}\n"
            f"{body}raise NotImplementedError")


def _build(notebook: nbformat.NotebookNode, book: Book | None, stem: str,
           student: bool) -> nbformat.NotebookNode:
    solutions(notebook)  # refuses unclosed or nested solution blocks
    renderer = book.renderer(stem) if book is not None else None
    result = nbformat.v4.new_notebook(metadata=notebook.metadata)
    cells: list[nbformat.NotebookNode] = []
    pending: list[str] = []
    current: Solution | None = None

    def flush() -> None:
        if pending:
            text = "\n".join(pending)
            rendered = renderer.markdown(text) if renderer is not None else text
            if rendered.strip():
                cells.append(nbformat.v4.new_markdown_cell(rendered))
            pending.clear()

    def announce(label: str, body: str = "") -> None:
        shown = renderer.numbers.get(label, label) if renderer is not None else label
        pending.append(solution_heading(shown) + (f"\n\n{body}" if body else ""))

    for kind, item in notebook_items(notebook):
        if kind == "start":
            current = Solution(str(item))
            if not student:
                announce(current.label)
        elif kind == "end":
            if student and current is not None:
                flush()
                cells.extend(_answer_cells(current))
            current = None
        elif kind == "inline":
            label, body = item  # type: ignore[misc]
            if student:
                flush()
                cells.extend(_answer_cells(Solution(label)))
            else:
                announce(label, body)
        elif kind == "markdown":
            if current is not None and student:
                current.markdown.append(str(item))
            else:
                pending.append(str(item))
        else:
            if current is not None:
                current.code.append(item.source)  # type: ignore[union-attr]
                if student:
                    continue
            flush()
            cells.append(nbformat.from_dict(item))
    flush()
    result.cells = cells
    return result


def _answer_cells(solution: Solution) -> list[nbformat.NotebookNode]:
    """A code exercise's starter cell; or a written exercise's answer cell and, below it,
    a code cell for a computation the question may ask for."""
    if solution.checked:
        starters = (starter_code(source) for source in solution.code)
        return [nbformat.v4.new_code_cell("\n\n".join(s for s in starters if s))]
    return [nbformat.v4.new_markdown_cell(tr(ANSWER_PROMPT)),
            nbformat.v4.new_code_cell(tr(WORKING_PROMPT))]


def language_cell(lang: str) -> str:
    """The source of :data:`LANGUAGE_CELL` for the language ``lang``, its comment in it.

    Parameters
    ----------
    lang : str
        One of :data:`~dpkit.i18n.LANGUAGES`.

    Returns
    -------
    str
        A code cell's source that calls ``dpkit.i18n.set_language(lang)``.

    Raises
    ------
    ValueError
        If ``lang`` is not one of :data:`~dpkit.i18n.LANGUAGES`.

    Examples
    --------
    >>> print(language_cell("zh"))
    # 本笔记本的图表和控件使用中文。
    import dpkit.i18n
    <BLANKLINE>
    dpkit.i18n.set_language('zh')
    <BLANKLINE>
    """
    with in_language(lang):
        return tr(LANGUAGE_CELL).format(lang=lang)


def teacher_notebook(notebook: nbformat.NotebookNode, book: Book | None = None,
                     stem: str = "") -> nbformat.NotebookNode:
    """The whole chapter, rendered for plain Jupyter when ``book`` is given."""
    return _build(notebook, book, stem, student=False)


def student_notebook(notebook: nbformat.NotebookNode, book: Book | None = None,
                     stem: str = "") -> nbformat.NotebookNode:
    """The chapter without solutions, with a starter or answer cell for each exercise.

    Raises
    ------
    ValueError
        If a ``solution-start`` is never closed by a ``solution-end``.
    """
    return _build(notebook, book, stem, student=True)


def export(book_dir: str | Path, out_dir: str | Path, *, lang: str = "en") -> list[Path]:
    """Write teacher and student notebooks for every chapter in ``book_dir``.

    Parameters
    ----------
    book_dir : path
        Folder of the MyST Markdown chapters (``*.md`` with a jupytext header); the
        ``_toc.yml`` beside it gives the chapter numbers.
    out_dir : path
        Folder that receives ``teacher/`` and ``student/``.
    lang : str, optional
        The edition, one of :data:`~dpkit.i18n.LANGUAGES`: ``"zh"`` reads the pages of
        ``book_dir/zh`` (:func:`~dpkit.course.myst.read_book`), writes the fixed words in
        Chinese and puts :data:`LANGUAGE_CELL` before each notebook's first code cell.

    Returns
    -------
    list of Path
        The notebooks written.

    Raises
    ------
    FileNotFoundError
        If ``book_dir`` holds no chapter.
    ValueError
        If ``lang`` is not one of :data:`~dpkit.i18n.LANGUAGES`.
    """
    written = []
    with in_language(lang):
        book = read_book(book_dir, lang=lang)
        for chapter in book.chapters:
            notebook = jupytext.read(chapter.path)
            for kind, build in (("teacher", teacher_notebook), ("student", student_notebook)):
                result = build(notebook, book, chapter.stem)
                if lang != "en":      # before the first code cell, below the title
                    first = next((i for i, c in enumerate(result.cells)
                                  if c.cell_type == "code"), len(result.cells))
                    result.cells.insert(first, nbformat.v4.new_code_cell(
                        language_cell(lang), metadata={"tags": ["dpkit-language"]}))
                target = Path(out_dir) / kind / f"{chapter.stem}.ipynb"
                target.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(result, target)
                written.append(target)
    return written
