"""Assignments a teacher can hand out and grade, built with nbgrader from the chapters.

``python -m dpkit.course assignments BOOK COURSE`` (``make assignments``) writes one nbgrader
assignment per chapter into the nbgrader course folder ``COURSE``:

* ``COURSE/source/<chapter>/<chapter>.ipynb``, the instructor's copy: the chapter's set-up
  cells (those the solutions need), then per exercise its text, the answer cell with the
  model solution between nbgrader's solution markers, a *public* test cell (the exercise's
  ``dpkit.check`` verdict, 2 points) and, for an exercise whose answer is a function, a
  *hidden* test cell (1 point) that compares the student's function with the model
  solution on inputs the public check does not show. A proof or design exercise gets a
  manually graded Markdown answer cell (3 points) holding the model solution and rubric.
* ``COURSE/release/<chapter>/<chapter>.ipynb``, the student's copy, made by
  ``nbgrader generate_assignment``: solutions and hidden tests removed.

``python -m dpkit.course grade COURSE SUBMISSIONS`` (``make grade``) grades a folder of
completed notebooks, ``SUBMISSIONS/<student>/<chapter>.ipynb``, with
``nbgrader autograde`` (locally, no container, each cell limited to :data:`CELL_TIMEOUT`
seconds) and writes ``grades.csv``: student, chapter, exercise, points, max_points,
feedback — the checker's message when a test fails, the time-out when a cell ran too long.
"""

from __future__ import annotations

import ast
import builtins
import copy
import csv
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import numpy as np

from dpkit.course.myst import OPEN_FENCE, Book, read_book
from dpkit.course.notebooks import Solution, notebook_items, solutions

__all__ = ["CELL_TIMEOUT", "agrees_with", "build", "grade"]

CELL_TIMEOUT = 60
PUBLIC_POINTS, HIDDEN_POINTS, WRITTEN_POINTS = 2, 1, 3
_CONFIG = """# nbgrader configuration written by `make assignments` (dpkit.course.assignments).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "dp-interactively"
c.Execute.timeout = {timeout}
c.Execute.interrupt_on_timeout = True
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
"""


@dataclass
class Exercise:
    """One exercise of a chapter: label, number as in the book, rendered text, solution."""

    label: str
    number: str
    text: str
    solution: Solution


def _exercises(notebook: nbformat.NotebookNode, book: Book, stem: str) -> list[Exercise]:
    renderer = book.renderer(stem)
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


def _exercise_cells(exercise: Exercise) -> list[nbformat.NotebookNode]:
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    label, solution = exercise.label, exercise.solution
    cells = [new_md(exercise.text, metadata=_metadata(f"{label}-text", solution=False,
                                                     grade=False, locked=True))]
    code = "\n\n".join(solution.code)
    call = _check_call(code) if solution.checked else None
    if call is None:
        model = "\n\n".join(solution.markdown).strip() or "(model solution)"
        cells.append(new_md(f"### BEGIN SOLUTION\n{model}\n### END SOLUTION",
                            metadata=_metadata(f"{label}-answer", solution=True, grade=True,
                                               points=WRITTEN_POINTS)))
        return cells
    cells.append(new_code(_answer_source(code),
                          metadata=_metadata(f"{label}-answer", solution=True, grade=False)))
    cells.append(new_code(
        f"# Public test ({PUBLIC_POINTS} points): the check you can run yourself.\n"
        f"verdict = {ast.unparse(call)}\nprint(verdict)\nassert verdict.passed, verdict.message\n",
        metadata=_metadata(f"{label}-public", solution=False, grade=True,
                           points=PUBLIC_POINTS, locked=True)))
    answer = call.args[0] if call.args else None
    functions = {n.name for n in ast.parse(code).body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if isinstance(answer, ast.Name) and answer.id in functions:  # a value has no hidden cases
        probe = copy.deepcopy(call)
        probe.args[0] = ast.Name("_f", ast.Load())
        model = "\n\n".join(ast.unparse(n) for n in ast.parse(code).body
                            if not isinstance(n, ast.Expr))
        cells.append(new_code(
            f"# Hidden tests ({HIDDEN_POINTS} point): they run when your notebook is graded.\n"
            "### BEGIN HIDDEN TESTS\n"
            "from dpkit.course.assignments import agrees_with\n"
            "_model = dict(globals())\n"
            f"exec({model!r}, _model)\n"
            f"_ok, _why = agrees_with({answer.id}, _model[{answer.id!r}], "
            f"lambda _f: {ast.unparse(probe)})\n"
            "assert _ok, _why\n"
            "### END HIDDEN TESTS\n",
            metadata=_metadata(f"{label}-hidden", solution=False, grade=True,
                               points=HIDDEN_POINTS, locked=True)))
    return cells


def assignment_notebook(path: str | Path, book: Book) -> nbformat.NotebookNode | None:
    """The nbgrader source notebook of one chapter, or None if it has no exercise."""
    path = Path(path)
    notebook = jupytext.read(path)
    chapter = book.chapter(path.stem)
    exercises = _exercises(notebook, book, path.stem)
    if not exercises:
        return None
    number = f"Chapter {chapter.number}: " if chapter.number else ""
    cells = [nbformat.v4.new_markdown_cell(
        f"# Assignment — {number}{chapter.title}\n\n"
        "Write your answers in the cells marked `# YOUR CODE HERE` or *YOUR ANSWER HERE*, "
        "then run every cell. Each code exercise has a public test (the same `dpkit.check` "
        "verdict as in the book) and may have hidden tests that run when it is graded; "
        "written answers are graded by hand.",
        metadata=_metadata("header", solution=False, grade=False, locked=True))]
    needs = [s for e in exercises for s in e.solution.code]
    setup = "\n\n".join(["import dpkit\nimport dpkit.check", *_setup_cells(notebook, needs)])
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
          timeout: int = CELL_TIMEOUT) -> list[Path]:
    """Write an nbgrader course with one assignment per chapter that has exercises.

    ``timeout`` is the limit, in seconds, on each cell when the course is graded.

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
    """
    book = read_book(book_dir)
    course = Path(course_dir)
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(_CONFIG.format(timeout=timeout))
    released = []
    for chapter in book.chapters:
        notebook = assignment_notebook(chapter.path, book)
        if notebook is None:
            continue
        source = course / "source" / chapter.stem / f"{chapter.stem}.ipynb"
        source.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, source)
        _nbgrader(course, "generate_assignment", chapter.stem)
        released.append(course / "release" / chapter.stem / f"{chapter.stem}.ipynb")
    return released


def _feedback(cell: nbformat.NotebookNode) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") != "error":
            continue
        if output["ename"] in ("CellTimeoutError", "KeyboardInterrupt"):
            return "timed out: a cell ran past the time limit and was stopped"
        if output["ename"] == "AssertionError" and output["evalue"]:
            return output["evalue"]
        return f"{output['ename']}: {output['evalue']}"
    return ""


def grade(course_dir: str | Path, submissions_dir: str | Path,
          out_csv: str | Path = "grades.csv") -> list[dict[str, Any]]:
    """Autograde ``SUBMISSIONS/<student>/<chapter>.ipynb`` and write ``grades.csv``.

    A notebook that raises, or runs a cell past :data:`CELL_TIMEOUT` seconds, is still
    graded: the failing exercise scores zero and its feedback says why.

    Returns
    -------
    list of dict
        The rows written: student, chapter, exercise, points, max_points, feedback.
        Written answers are graded by hand: their points are empty and the feedback says so.

    Raises
    ------
    FileNotFoundError
        If ``course_dir`` has no assignments (run ``make assignments``) or
        ``submissions_dir`` holds no notebook of one of them.
    """
    from nbgrader.api import Gradebook

    course, submissions = Path(course_dir), Path(submissions_dir)
    assignments = sorted(p.name for p in (course / "source").glob("*") if p.is_dir())
    if not assignments:
        raise FileNotFoundError(f"no assignments in {course / 'source'}: run make assignments")
    graded: dict[str, list[str]] = {}
    for student in sorted(p for p in submissions.iterdir() if p.is_dir()):
        for notebook in sorted(student.glob("*.ipynb")):
            if notebook.stem not in assignments:
                continue
            target = course / "submitted" / student.name / notebook.stem / notebook.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target)
            graded.setdefault(notebook.stem, []).append(student.name)
    if not graded:
        raise FileNotFoundError(f"no submissions in {submissions} (expected "
                                f"<student>/<chapter>.ipynb for a chapter in {assignments})")
    rows: list[dict[str, Any]] = []
    for assignment, students in sorted(graded.items()):
        _nbgrader(course, "autograde", assignment)
        source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", 4)
        titles = {c.metadata["nbgrader"]["grade_id"].rsplit("-", 1)[0]: c.source
                  for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id", "")
                  .endswith("-text")}
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for student in students:
                path = course / "autograded" / student / assignment / f"{assignment}.ipynb"
                cells = {c.metadata["nbgrader"]["grade_id"]: c
                         for c in nbformat.read(path, 4).cells if "nbgrader" in c.metadata}
                rows += _rows(gradebook, assignment, student, titles, cells)
    with open(out_csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["student", "chapter", "exercise", "points",
                                         "max_points", "feedback"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _exercise_name(label: str, title: str) -> str:
    head = title.split("**")[1] if title.count("**") >= 2 else label
    return f"{head} ({label})"


def _rows(gradebook: Any, assignment: str, student: str, titles: dict[str, str],
          cells: dict[str, nbformat.NotebookNode]) -> list[dict[str, Any]]:
    notebook = gradebook.find_submission_notebook(assignment, assignment, student)
    per_exercise: dict[str, dict[str, Any]] = {}
    for result in notebook.grades:
        label, part = result.name.rsplit("-", 1)
        row = per_exercise.setdefault(label, {
            "student": student, "chapter": assignment,
            "exercise": _exercise_name(label, titles.get(label, "")), "points": 0.0,
            "max_points": 0.0, "feedback": []})
        row["max_points"] += result.max_score
        if result.needs_manual_grade or part == "answer":
            row["points"] = ""
            row["feedback"].append("written answer: graded by hand with the rubric")
            continue
        row["points"] += result.score or 0.0
        message = _feedback(cells[result.name]) if result.name in cells else ""
        if message:
            row["feedback"].append(f"{part} test: {message}")
    for row in per_exercise.values():
        row["feedback"] = " | ".join(row["feedback"])
    return list(per_exercise.values())


def _perturb(value: Any) -> Any:
    """An input near ``value`` that a public check is unlikely to use (None: leave as is)."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return value + 1 if value > 0 else value
    if isinstance(value, (float, np.floating)):
        return value * 1.37 if 0 < value < 0.5 or value > 1 else (
            value * 0.73 if value > 0 else value)
    return value


def _same(a: Any, b: Any, rtol: float = 1e-6) -> bool:
    try:
        a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return bool(a == b)
    return a_arr.shape == b_arr.shape and bool(np.allclose(a_arr, b_arr, rtol=rtol, atol=0.0,
                                                           equal_nan=True))


def agrees_with(student: Callable[..., Any], reference: Callable[..., Any],
                check: Callable[[Callable[..., Any]], Any], *,
                max_cases: int = 40) -> tuple[bool, str]:
    """Compare a student's function with the model solution on inputs the check does not use.

    The public ``check`` is run once with a recorder around ``student`` to learn what kind
    of arguments the function takes; each recorded call is then moved to nearby inputs
    (floats scaled, positive ints increased by one) and the two functions are compared
    there. Calls whose reference output is random (two reference calls disagree) or raises
    are skipped, so a randomised answer is judged by its public check alone. Nothing passes
    here that fails the public check.

    Returns
    -------
    (bool, str)
        Whether every compared case agrees (relative tolerance 1e-6), and a message that
        names the failing input without giving the expected value away.

    Examples
    --------
    >>> agrees_with(lambda x: 2 * x, lambda x: x + x, lambda f: f(1.0) == 2.0)
    (True, '1 hidden case agrees')
    >>> agrees_with(lambda x: 2 * x, lambda x: x * x, lambda f: f(2.0) == 4.0)
    (False, 'on a hidden input (2.74) your function returned 5.48, which is not right')
    """
    calls: list[tuple[Any, ...]] = []

    def recorder(*args: Any) -> Any:
        calls.append(copy.deepcopy(args))
        return student(*args)

    try:
        verdict = check(recorder)
    except Exception as error:  # a failing public check is scored by the public test
        return False, f"the public check could not run: {type(error).__name__}: {error}"
    if not verdict:
        return False, "the public check does not pass yet; the hidden cases wait for it"
    compared = 0
    for args in calls[:max_cases]:
        moved = tuple(_perturb(a) for a in args)
        try:
            expected = reference(*copy.deepcopy(moved))
            again = reference(*copy.deepcopy(moved))
        except Exception:  # outside the reference's domain: nothing to compare
            continue
        if not _same(expected, again):
            continue
        shown = ", ".join(repr(a) for a in moved)
        try:
            got = student(*copy.deepcopy(moved))
        except Exception as error:
            return False, f"on a hidden input ({shown}) your function raised " \
                          f"{type(error).__name__}: {error}"
        compared += 1
        if not _same(got, expected):
            return False, f"on a hidden input ({shown}) your function returned {got!r}, " \
                          f"which is not right"
    return True, f"{compared} hidden case{'s agree' if compared != 1 else ' agrees'}"
