"""make notebooks: the student copies contain no solution, the teacher copies all of it."""

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from myst_text import FRONT_MATTER  # tests/ is on sys.path under pytest

from dpkit.course.notebooks import (
    ANSWER_PROMPT,
    WORKING_PROMPT,
    export,
    notebook_items,
    solutions,
    starter_code,
    student_notebook,
)

CHAPTER = FRONT_MATTER + """
# Title

```{exercise}
:label: ex-a

Compute it.
```

```{solution-start} ex-a
:class: dropdown
```

Secret reasoning.

```{code-cell} ipython3
secret_answer = 42
```

```{solution-end}
```

```{solution} ex-b
Inline secret.
```

```{exercise} Double it (★)
:label: ex-c

Write `double(x)`.
```

```{solution-start} ex-c
```

```{code-cell} ipython3
def double(x):
    return x * 2


print(dpkit.check.check_double(double))
```

**Rubric.** not for students.

```{solution-end}
```

```{code-cell} ipython3
visible = 1
```
"""


def test_student_copy_removes_solutions_and_adds_places_to_answer():
    notebook = jupytext.reads(CHAPTER, fmt="md:myst")
    student = student_notebook(notebook)
    text = "\n".join(cell.source for cell in student.cells)
    for secret in ("Secret reasoning", "secret_answer", "Inline secret", "solution-end",
                   "x * 2", "Rubric"):
        assert secret not in text
    assert "visible = 1" in text and "Compute it." in text
    starters = [c.source for c in student.cells if "NotImplementedError" in c.source]
    assert starters == ["def double(x):\n    # Your code here.\n    raise NotImplementedError"
                        "\n\nprint(dpkit.check.check_double(double))"]
    assert [c.source for c in student.cells].count(ANSWER_PROMPT) == 2  # ex-a, ex-b
    # each written answer has a code cell below it for a computation the question asks for
    after = [student.cells[i + 1] for i, c in enumerate(student.cells)
             if c.source == ANSWER_PROMPT]
    assert [(c.cell_type, c.source) for c in after] == [("code", WORKING_PROMPT)] * 2
    # the original is untouched
    assert "secret_answer" in "\n".join(cell.source for cell in notebook.cells)


def test_starter_code_keeps_signatures_and_checks_only():
    source = ("import math\n\n@functools.cache\ndef f(x: float, *, y=2) -> float:\n"
              "    \"\"\"Secret docstring.\"\"\"\n    return math.log(x) * y\n\n"
              "class Sampler:\n    def draw(self, rng):\n        return rng.bits(3)\n\n"
              "answer = 42\nprint(f(3))\nprint(dpkit.check.check_f(f, epsilon=1))\n")
    starter = starter_code(source)
    assert "@functools.cache\ndef f(x: float, *, y=2) -> float:" in starter
    assert "class Sampler:\n    def draw(self, rng):\n        # Your code here." in starter
    assert "answer = ...  # your answer" in starter
    assert "print(dpkit.check.check_f(f, epsilon=1))" in starter
    for secret in ("math.log", "Secret docstring", "rng.bits", "42", "print(f(3))", "import"):
        assert secret not in starter


def test_unclosed_solution_is_an_error():
    notebook = jupytext.reads(CHAPTER.replace("```{solution-end}\n```\n", "", 1),
                              fmt="md:myst")
    with pytest.raises(ValueError, match=r"not closed|opens inside"):
        student_notebook(notebook)


def test_export_writes_both_copies(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "ch.md").write_text(CHAPTER)
    written = export(book, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == [
        "student/ch.ipynb", "teacher/ch.ipynb"]
    teacher = nbformat.read(tmp_path / "out" / "teacher" / "ch.ipynb", 4)
    assert "secret_answer" in "\n".join(c.source for c in teacher.cells)


def _solution_lines(path):
    """Lines of a chapter's solutions that no student copy may contain: all but signatures,
    check calls (which the starter cells repeat) and lines the chapter also has outside its
    solutions."""
    notebook = jupytext.read(path)
    inside, outside = set(), []
    depth = 0
    for kind, item in notebook_items(notebook):
        if kind in ("start", "end"):
            depth = 1 if kind == "start" else 0
        elif kind != "inline" and not depth:
            outside.append(item if kind == "markdown" else item.source)
    for solution in solutions(notebook):
        for block in [*solution.markdown, *solution.code]:
            inside.update(line.strip() for line in block.splitlines())
    public = "\n".join(outside)
    return {line for line in inside
            if len(line) > 12 and line not in public and "dpkit.check." not in line
            and not line.startswith(("def ", "class ", "```", ":", "import ", "from "))}


def test_real_chapters_render_without_solutions_or_raw_directives(tmp_path):
    written = export("book", tmp_path)
    assert {p.parent.name for p in written} == {"teacher", "student"}
    for path in written:
        cells = nbformat.read(path, 4).cells
        text = "\n".join(c.source for c in cells)
        markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        assert "```{" not in markdown and ":::{" not in markdown, path
        assert not re.search(r"\{(prf:ref|ref|doc|cite:p|cite:t|numref)\}`", markdown), path
        if path.parent.name == "student":
            leaked = [line for line in _solution_lines(Path("book") / f"{path.stem}.md")
                      if line in text]
            assert not leaked, (path, leaked[:3])


def test_numbering_matches_the_book(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "a.md").write_text(CHAPTER.replace("# Title", "# First"))
    (book / "b.md").write_text(CHAPTER.replace("# Title", "# Second").replace(
        "Compute it.", "Compute it, see {prf:ref}`ex-c` and {doc}`a`."))
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/a\nparts:\n  - caption: Chapters\n    numbered: true\n"
        "    chapters:\n      - file: book/b\n")
    export(book, tmp_path / "out")
    student = nbformat.read(tmp_path / "out" / "student" / "b.ipynb", 4)
    text = "\n".join(c.source for c in student.cells)
    assert "**Exercise 1.1**." in text and "**Exercise 1.2** (Double it (★))." in text
    assert "see Exercise 1.2 and [*First*](a.ipynb)" in text
    intro = nbformat.read(tmp_path / "out" / "teacher" / "a.ipynb", 4)
    assert "**Exercise 1**." in "\n".join(c.source for c in intro.cells)  # root: unnumbered


def test_glued_values_read_as_printed_values(tmp_path):
    """A number glued into the prose is known only after the book runs: a notebook says it
    is printed by the code, never the raw role or its key (before: "`miss400:.1e`")."""
    from dpkit.course.myst import GLUED_VALUE

    book = tmp_path / "book"
    book.mkdir()
    (book / "a.md").write_text(CHAPTER.replace(
        "Compute it.", "It misses with probability {glue:text}`miss400:.1e` only."))
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/a\n")
    export(book, tmp_path / "out")
    text = "\n".join(c.source for c in nbformat.read(tmp_path / "out" / "student" / "a.ipynb",
                                                      4).cells)
    assert f"probability {GLUED_VALUE} only" in text
    assert "miss400" not in text and "{glue" not in text


_GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`(?P<key>[^`:]+)")


def test_every_glued_value_is_printed_where_it_is_glued():
    """So that a notebook reader, who sees GLUED_VALUE in the prose, finds the number in the
    output of the cell that glues it: that cell prints it too (item 17 of the student
    read-through)."""
    book_dir = Path(__file__).resolve().parent.parent / "book"
    for path in sorted(book_dir.glob("*.md")):
        source = path.read_text()
        keys = set(_GLUE_ROLE.findall(source))
        for key in keys:
            cells = [cell for cell in re.split(r"\n```\n", source)
                     if f'glue("{key}"' in cell]
            assert len(cells) == 1, (path.name, key)
            # glue("key", name, ...) and an f-string that prints {name...}
            name = re.search(rf'glue\("{key}", (\w+)', cells[0])
            assert name, (path.name, key, "glue a variable, and print it")
            assert re.search(r"print\(", cells[0]) and re.search(
                r"\{" + name[1] + r"[:!}]", cells[0]), (path.name, key, "not printed")


def test_export_refuses_an_empty_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MyST notebook chapters"):
        export(tmp_path, tmp_path / "out")


_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)|(?:src|href)=\"(?P<html>[^\"]+)\"")


def _broken_links(path: Path) -> list[str]:
    """The relative links of a notebook's Markdown cells whose file does not exist."""
    notebook = nbformat.read(path, 4)
    broken = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for match in _LINK.finditer(cell.source):
            target = (match["target"] or match["html"]).split("#")[0]
            if target and not re.match(r"[a-zA-Z][\w+.-]*:", target) \
                    and not (path.parent / target).exists():
                broken.append(target)
    return broken


@pytest.mark.slow
def test_every_relative_link_of_a_generated_notebook_resolves(tmp_path):
    """The student and teacher notebooks link to each other (``laplace.ipynb`` beside
    them); an assignment, handed out alone in a folder of its own, names the chapter
    instead of linking to a notebook that is not there (before: ``intro.ipynb`` from
    ``release/promise/``, and ``bibliography.md`` from every copy of the intro)."""
    from dpkit.course.assignments import assignment_notebook
    from dpkit.course.myst import read_book

    book_dir = Path(__file__).resolve().parent.parent / "book"
    written = export(book_dir, tmp_path / "notebooks")
    book = read_book(book_dir)
    for chapter in book.chapters:
        notebook = assignment_notebook(chapter.path, book)
        if notebook is not None:
            path = tmp_path / "course" / "release" / chapter.stem / f"{chapter.stem}.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(notebook, path)
            written.append(path)
    assert len(written) > 2 * len(book.chapters)
    assert {str(p.relative_to(tmp_path)): _broken_links(p) for p in written} == {
        str(p.relative_to(tmp_path)): [] for p in written}
    student = (tmp_path / "notebooks" / "student" / "laplace.ipynb").read_text()
    assert "(promise.ipynb)" in student                   # the links beside it are kept
    promise = (tmp_path / "course" / "release" / "promise" / "promise.ipynb").read_text()
    assert "Definition 3 (in *Differential Privacy, Interactively*)" in promise  # named


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reference_into_the_teaching_page_names_its_section_and_page(lang):
    """The teaching page is not a notebook: a reference into it from a chapter names the
    section and the page, and links nowhere (before: the bare label ``teaching-grading``,
    in both languages' notebooks)."""
    from dpkit.course.myst import read_book
    from dpkit.i18n import in_language

    root = Path(__file__).resolve().parent.parent / "book"
    with in_language(lang):
        book = read_book(root, lang=lang)
        for links in (True, False):
            shown = book.renderer("laplace", links=links).roles("{ref}`teaching-grading`")
            assert "teaching-grading" not in shown and ".ipynb" not in shown, shown
            assert book.pages["teaching"] in shown, shown
