"""Every exercise of the book is graded one way: a code exercise by its ``dpkit.check`` call,
a written one by hand with a rubric whose points follow its stars (★ 2, ★★ 3, ★★★ 5, as
book/teaching.md states); and no released starter cell raises before the function the
student must write."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

from dpkit.course.notebooks import solutions

BOOK = Path(__file__).resolve().parent.parent / "book"
CHAPTERS = sorted(p.stem for p in BOOK.glob("*.md")
                  if p.read_text().startswith("---\njupytext") and "{exercise}" in p.read_text())
POINTS = {1: 2, 2: 3, 3: 5}
_EXERCISE = re.compile(r"^```\{exercise\} (?P<title>.*?)\((?P<stars>★+)\)\s*\n"
                       r":label: (?P<label>\S+)", re.M)
_RUBRIC = re.compile(r"\*\*Rubric \((?P<total>\d+) points?\)\.\*\*(?P<body>.*?)(?:\n\n|\Z)", re.S)
_ITEM = re.compile(r"(?<![\w$])(\d+) points?:")


def _exercises(stem: str) -> list[tuple[str, int, str, list[str]]]:
    """(label, stars, Markdown of the solution, code of the solution) per exercise."""
    text = (BOOK / f"{stem}.md").read_text()
    found = {s.label: s for s in solutions(jupytext.reads(text, fmt="md:myst"))}
    return [(m["label"], len(m["stars"]), "\n\n".join(found[m["label"]].markdown),
             found[m["label"]].code) for m in _EXERCISE.finditer(text)]


def test_every_exercise_is_seen_with_its_stars() -> None:
    assert {"intro", "promise", "laplace", "sparse_vector"} <= set(CHAPTERS)
    for stem in CHAPTERS:
        fences = (BOOK / f"{stem}.md").read_text().count("```{exercise}")
        assert len(_exercises(stem)) == fences, f"{stem}: an exercise without (★) and :label:"
    assert sum(len(_exercises(stem)) for stem in CHAPTERS) >= 50


@pytest.mark.parametrize("stem", CHAPTERS)
def test_written_rubrics_add_up_to_the_points_of_their_stars(stem: str) -> None:
    for label, stars, markdown, code in _exercises(stem):
        checked = any("dpkit.check." in source for source in code)
        rubrics = list(_RUBRIC.finditer(markdown))
        if checked:   # graded by the public and hidden tests: no rubric to confuse a grader
            assert not rubrics and "Rubric" not in markdown, label
            continue
        assert len(rubrics) == 1, f"{label}: a written exercise needs one '**Rubric (N points).**'"
        total = int(rubrics[0]["total"])
        assert total == POINTS[stars], f"{label}: {'★' * stars} is worth {POINTS[stars]} points"
        items = [int(n) for n in _ITEM.findall(rubrics[0]["body"])]
        assert items and sum(items) == total, f"{label}: rubric items {items} ≠ {total}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_code_solutions_define_their_functions_before_any_other_statement(stem: str) -> None:
    """nbgrader replaces a top-level statement of the answer cell by ``raise
    NotImplementedError()``: one before a ``def`` would stop the student's cell before the
    function it must define. Imports a solution needs go inside the function."""
    for label, _, _, code in _exercises(stem):
        if not any("dpkit.check." in source for source in code):
            continue
        body = ast.parse("\n\n".join(code)).body
        defs = [i for i, node in enumerate(body) if isinstance(node, ast.FunctionDef)]
        before = [node for node in (body[:defs[-1]] if defs else [])
                  if not isinstance(node, (ast.FunctionDef, ast.Expr))]
        assert not before, f"{label}: line {before[0].lineno} runs before a def" if before else ""
