"""Assignments a teacher can hand out and grade, built with nbgrader from the chapters.

``python -m dpkit.course assignments BOOK COURSE`` (``make assignments``) writes one nbgrader
assignment per chapter into the nbgrader course folder ``COURSE``:

* ``COURSE/source/<chapter>/<chapter>.ipynb``, the instructor's copy: the chapter's set-up
  cells (those the solutions need), then per exercise its text, the answer cell with the
  model solution between nbgrader's solution markers and a *public* test cell (the
  exercise's ``dpkit.check`` verdict). A proof or design exercise gets a manually graded
  Markdown answer cell holding the model solution and rubric, worth the points its rubric
  states ("**Rubric (5 points).**"), and below it a code cell for the student's working
  (:data:`WORK_STUB`; a question may ask for a computation), which the teacher reads beside
  the written answer.
* ``COURSE/release/<chapter>/<chapter>.ipynb``, the student's copy, made by
  ``nbgrader generate_assignment``: solutions removed.

``build(..., lang="zh")`` writes the same course from the Simplified Chinese pages: the same
cells, grade ids, points and tests, with the words written here (the header and its rules,
the test cells' comments, the stubs nbgrader leaves in an answer cell) in Chinese
(:func:`dpkit.i18n.tr`), the figures' language set in the set-up cell, and its own nbgrader
course id (``dp-interactively-zh``), so that both courses can share one exchange.

nbgrader is kept for what it does well (writing the student's copy, and its exchange for
releasing and collecting on a shared machine or JupyterHub). It does not grade: its
autograder runs the tests in the student's kernel, where the student's code can replace a
checker. :mod:`dpkit.course.grading` grades instead, with the student's code in a sandbox
and the tests outside it (public test :data:`~dpkit.course.grading.PUBLIC_POINTS`, hidden
tests :data:`~dpkit.course.grading.HIDDEN_POINTS` points).
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext
import nbformat

from dpkit.course.allowed import ALLOWED_MODULES
from dpkit.course.exercises import FORBIDDEN, JUDGED
from dpkit.course.grading import HIDDEN_POINTS, PUBLIC_POINTS
from dpkit.course.myst import OPEN_FENCE, Book, read_book
from dpkit.course.notebooks import Solution, language_cell, notebook_items, solutions
from dpkit.course.written import ANSWER_STUB, CODE_STUB, WORK_STUB
from dpkit.i18n import in_language, tr

__all__ = ["assignment_notebook", "build"]

WRITTEN_POINTS = 3                  # a written answer whose rubric states no total
#: A rubric's total as the book states it: "**Rubric (5 points).**", in the zh edition
#: "**评分标准（5 分）**" (a full stop inside or after the bold).
_RUBRIC_POINTS = re.compile(r"\*\*(?:Rubric \((\d+) points?\)\.|评分标准（(\d+) 分）。?)\*\*")
_CONFIG = """# nbgrader configuration written by `make assignments` (dpkit.course.assignments).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id}
c.ClearSolutions.code_stub = {{"python": {code_stub}}}
c.ClearSolutions.text_stub = {text_stub}
"""


@dataclass
class Exercise:
    """One exercise of a chapter: label, number as in the book, rendered text, solution."""

    label: str
    number: str
    text: str
    solution: Solution


def _exercises(notebook: nbformat.NotebookNode, book: Book, stem: str) -> list[Exercise]:
    renderer = book.renderer(stem, links=False)   # handed out alone: no chapter beside it
    by_label = {s.label: s for s in solutions(notebook)}
    found = []
    for kind, item in notebook_items(notebook):
        if kind != "markdown":
            continue
        lines = str(item).splitlines()
        i = 0
        while i < len(lines):
            match = OPEN_FENCE.match(lines[i])
            if not match:
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].strip() == match["fence"]), len(lines))
            if match["name"].strip() == "exercise":
                block = "\n".join(lines[i:end + 1])
                text = renderer.markdown(block)
                label = next((x.split(":", 2)[2].strip() for x in lines[i + 1:end]
                              if x.strip().startswith(":label:")), "")
                number = next(iter(renderer.numbers.get(label, "Exercise").split()[1:]), "")
                if label in by_label:
                    found.append(Exercise(label, number, text, by_label[label]))
            i = end + 1
    return found


def _parse(source: str) -> ast.Module:
    """Parse a notebook cell, IPython magics (``%matplotlib inline``) included."""
    from IPython.core.inputtransformer2 import TransformerManager

    return ast.parse(TransformerManager().transform_cell(source))


def _stored_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _free_names(source: str) -> set[str]:
    tree = _parse(source)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Load)}
    return loaded - _stored_names(tree) - set(dir(builtins))


def _setup_cells(notebook: nbformat.NotebookNode, needed_by: list[str]) -> list[str]:
    """The chapter's code cells the solutions need: the first one (imports) and every cell
    that defines a name a solution (or a needed cell) uses, in chapter order."""
    solution_sources = {s for sol in solutions(notebook) for s in sol.code}
    cells = [c.source for c in notebook.cells
             if c.cell_type == "code" and c.source not in solution_sources]
    if not cells:
        return []
    chosen = {0}
    wanted = set().union(*(_free_names(s) for s in needed_by), _free_names(cells[0]))
    while True:
        defined: dict[str, int] = {}
        for index, source in enumerate(cells):
            for name in _stored_names(_parse(source)):
                defined.setdefault(name, index)
        new = {defined[n] for n in wanted if n in defined} - chosen
        if not new:
            break
        chosen |= new
        wanted |= set().union(*(_free_names(cells[i]) for i in new))
    return [cells[i] for i in sorted(chosen)]


def _check_call(source: str) -> ast.Call | None:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("dpkit.check."):
            return node
    return None


def _answer_source(source: str) -> str:
    """The solution cell with nbgrader's solution markers around everything but the
    signatures, and without the ``dpkit.check`` call (the test cells make it)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[str] = []
    group: list[str] = []

    def close_group() -> None:
        if group:
            out.extend(["### BEGIN SOLUTION", *group, "### END SOLUTION", ""])
            group.clear()

    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        text = lines[start - 1:node.end_lineno]
        if isinstance(node, ast.Expr):  # a printed result or the check: not the answer
            continue
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body[0].lineno > node.lineno):
            close_group()
            split = node.body[0].lineno - start
            indent = " " * node.body[0].col_offset
            out.extend([*text[:split], f"{indent}### BEGIN SOLUTION", *text[split:],
                        f"{indent}### END SOLUTION", ""])
        else:
            group.extend(text)
    close_group()
    return "\n".join(out).rstrip() + "\n"


def _metadata(grade_id: str, *, solution: bool, grade: bool, points: int = 0,
              locked: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                            "schema_version": 3, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _points(points: int) -> str:
    """"1 point", "2 points", in the current language."""
    return tr("{points} point" if points == 1 else "{points} points").format(points=points)


def _exercise_cells(exercise: Exercise) -> list[nbformat.NotebookNode]:
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    label, solution = exercise.label, exercise.solution
    cells = [new_md(exercise.text, metadata=_metadata(f"{label}-text", solution=False,
                                                     grade=False, locked=True))]
    code = "\n\n".join(solution.code)
    call = _check_call(code) if solution.checked else None
    if call is None:
        model = "\n\n".join(solution.markdown).strip() or tr("(model solution)")
        stated = _RUBRIC_POINTS.search(model)
        cells.append(new_md(f"### BEGIN SOLUTION\n{model}\n### END SOLUTION",
                            metadata=_metadata(f"{label}-answer", solution=True, grade=True,
                                               points=int(stated[1] or stated[2]) if stated
                                               else WRITTEN_POINTS)))
        cells.append(new_code(tr(WORK_STUB), metadata=_metadata(f"{label}-work", solution=False,
                                                            grade=False)))
        return cells
    cells.append(new_code(_answer_source(code),
                          metadata=_metadata(f"{label}-answer", solution=True, grade=False)))
    public = tr(_PUBLIC_TEST).format(public=_points(PUBLIC_POINTS), hidden=_points(HIDDEN_POINTS))
    cells.append(new_code(
        f"{public}\n"
        f"verdict = {ast.unparse(call)}\nprint(verdict)\nassert verdict.passed, verdict.message\n",
        metadata=_metadata(f"{label}-public", solution=False, grade=False, locked=True)))
    return cells


#: The comment above a public test's check.
_PUBLIC_TEST = ("# Public test ({public}): the check you can run yourself. Hidden tests ({hidden}) "
                "judge the same answer on other inputs when it is graded.")
#: An assignment's title, and the text of its header cell that every assignment has.
_TITLE = "# Assignment — {number}{title}"
_HEADER = (
    "Write your answers in the cells marked `# YOUR CODE HERE` or *YOUR ANSWER HERE*, "
    "then run every cell. Each code exercise has a public test (the same `dpkit.check` "
    "verdict as in the book) and may have hidden tests that run when it is graded; "
    "written answers are graded by hand. Grading runs your notebook in order: the code "
    "cells you add run too, so a helper you define in a cell above an answer is there "
    "for it; the set-up and test cells are taken from the teacher's copy, whatever "
    "yours hold. A copy of an answer cell (Jupyter copies its grading tag with it) is "
    "part of that answer: the cell and its copies run in order, and the tests read what "
    "they leave defined.")
#: The set-up cell's first line.
_IMPORT = "import dpkit  # dpkit.check loads when first used"

#: The header's rule for a chapter with a randomized exercise (judged by its outputs): a
#: check in any cell above its answer counts (honest review 12, finding 3).
_JUDGED_RULE = (
    "\n\nIn the code of an answer to a randomized exercise, and in **every** code cell of "
    "yours above it (earlier answers too), a `dpkit.check` verdict may only be shown: "
    "`print(dpkit.check.check_…(f))`, `verdict = …` then `print(verdict)`, `assert "
    "verdict.passed, verdict.message`, or `if not verdict.passed: print(verdict.message)` "
    "whose branches only print. Where your notebook is graded the checks do not run in it, "
    "so using a verdict otherwise (storing it, branching on it to do anything but print) "
    "costs the randomized exercise its points.")

#: The header's rule for a chapter whose answers the grader reads for their imports (a
#: template: ``{modules}`` is the list of allowed modules).
_IMPORT_RULE = (
    "\n\nIn the code of an answer to an exercise that asks you to write a function the "
    "library has, or to a randomized exercise, and in **every** code cell of yours above "
    "it, import only these modules: {modules}, and a module of your own written with "
    "`%%writefile helper.py` (one file, in the notebook's folder). Any other import "
    "(`os`, `pathlib`, `subprocess`, `multiprocessing`, `tqdm` …) costs that exercise its "
    "points: the grader could not read what it runs. So does that code's use of private names "
    "(`_…`) of dpkit or any module (your own attributes, `self._x`, are yours), `numpy.load` "
    "and pandas' pickle readers, the IPython shell (`get_ipython`, `In`, `Out`, `_` unless "
    "your code sets it, as `for _ in …` does, `exit` other than called, in a randomized "
    "exercise the name `IPython`: write `from IPython.display import display`), "
    "`functools.singledispatch` (branch on `isinstance` instead), a data frame's `.eval` and "
    "`.query`, `operator.attrgetter` and `methodcaller` other than called where they are "
    "named, a `match` class pattern with positional captures of a class not your own, a "
    "format string whose fields name an attribute or item (`'{{0.x}}'`, `'{{d[k]}}'`), or "
    "`.format` on a string not written out in the code with an argument that is not written "
    "out either (`fmt.format(x)`, which could look attributes of `x` up): "
    "`'{{:.3f}}'.format(x)`, `fmt.format(2.0)`, `df.style.format(\"{{:.1f}}\")`, "
    "`df.style.format(precision=1)` and f-strings are fine.")


def assignment_notebook(path: str | Path, book: Book, *,
                        lang: str = "en") -> nbformat.NotebookNode | None:
    """The nbgrader source notebook of one chapter, or None if it has no exercise.

    Its words are in the current :func:`~dpkit.i18n.language` (call it inside
    :func:`~dpkit.i18n.in_language`, with ``book`` read there too); ``lang`` other than
    ``"en"`` sets the figures' language in its set-up cell."""
    path = Path(path)
    notebook = jupytext.read(path)
    chapter = book.chapter(path.stem)
    exercises = _exercises(notebook, book, path.stem)
    if not exercises:
        return None
    number = tr("Chapter {number}: ").format(number=chapter.number) if chapter.number else ""
    modules = tr(", ").join(f"`{m}`" for m in sorted(ALLOWED_MODULES, key=str.lower))
    cells = [nbformat.v4.new_markdown_cell(
        tr(_TITLE).format(number=number, title=chapter.title) + "\n\n" + tr(_HEADER)
        + (tr(_JUDGED_RULE) if any(e.label in JUDGED for e in exercises) else "")
        + (tr(_IMPORT_RULE).format(modules=modules)
           if any(e.label in JUDGED or e.label in FORBIDDEN for e in exercises) else ""),
        metadata=_metadata("header", solution=False, grade=False, locked=True))]
    needs = [s for e in exercises for s in e.solution.code]
    language = [] if lang == "en" else [language_cell(lang)]
    setup = "\n\n".join([tr(_IMPORT), *language, *_setup_cells(notebook, needs)])
    cells.append(nbformat.v4.new_code_cell(setup, metadata=_metadata(
        "setup", solution=False, grade=False, locked=True)))
    for exercise in exercises:
        cells.extend(_exercise_cells(exercise))
    result = nbformat.v4.new_notebook(metadata=notebook.metadata, cells=cells)
    result.metadata.pop("jupytext", None)
    return result


def _nbgrader(course: Path, *args: str) -> None:
    # nbgrader runs its database migrations with the `alembic` command beside the Python.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force", "--log-level=WARN"],
                   cwd=course, check=True, env={**os.environ, "PATH": path})


def build(book_dir: str | Path, course_dir: str | Path, *,
          chapters: Iterable[str] | None = None, lang: str = "en") -> list[Path]:
    """Write an nbgrader course with one assignment per chapter that has exercises.

    ``chapters`` limits the course to the chapters with these file stems (default: all).
    ``lang``, one of :data:`~dpkit.i18n.LANGUAGES`, is the edition: ``"zh"`` writes the
    course from ``book_dir/zh`` with its words in Chinese (see the module's docstring).

    Returns
    -------
    list of Path
        The student notebooks (``COURSE/release/<chapter>/<chapter>.ipynb``).

    Raises
    ------
    FileNotFoundError
        If ``book_dir`` holds no chapter.
    subprocess.CalledProcessError
        If nbgrader fails.
    ValueError
        If ``lang`` is not one of :data:`~dpkit.i18n.LANGUAGES`.
    """
    with in_language(lang):
        book = read_book(book_dir, lang=lang)
        course = Path(course_dir)
        course.mkdir(parents=True, exist_ok=True)
        (course / "nbgrader_config.py").write_text(_CONFIG.format(
            course_id=json.dumps("dp-interactively" + ("" if lang == "en" else f"-{lang}")),
            code_stub=json.dumps(tr(CODE_STUB)), text_stub=json.dumps(tr(ANSWER_STUB))))
        return _write(book, course, chapters, lang)


def _write(book: Book, course: Path, chapters: Iterable[str] | None,
           lang: str) -> list[Path]:
    """Write the course's assignments (:func:`build`'s loop)."""
    released = []
    for chapter in book.chapters:
        if chapters is not None and chapter.stem not in set(chapters):
            continue
        notebook = assignment_notebook(chapter.path, book, lang=lang)
        if notebook is None:
            continue
        source = course / "source" / chapter.stem / f"{chapter.stem}.ipynb"
        source.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, source)
        _nbgrader(course, "generate_assignment", chapter.stem)
        released.append(course / "release" / chapter.stem / f"{chapter.stem}.ipynb")
    return released
