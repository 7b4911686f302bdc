"""The teaching page's map of learning goals to exercises names only exercises of the book,
and lists every challenging (★★★) exercise, so a teacher planning a course finds each of them."""

from __future__ import annotations

import re
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent / "book"
_EXERCISE = re.compile(r"^```\{exercise\} .*?\((?P<stars>★+)\)\s*\n:label: (?P<label>\S+)", re.M)
_REF = re.compile(r"\{ref\}`(?P<label>ex-[\w-]+)`")


def _book_exercises() -> dict[str, int]:
    """Every exercise label of the book's chapters, with its number of stars."""
    found: dict[str, int] = {}
    for path in sorted(BOOK.glob("*.md")):
        for match in _EXERCISE.finditer(path.read_text()):
            assert match["label"] not in found, f"{match['label']} is defined twice"
            found[match["label"]] = len(match["stars"])
    return found


_ROW = re.compile(r"^\| \{doc\}`(?:[^`<]*<)?(?P<chapter>[\w-]+)>?` \| (?P<goal>[^|]+?) \|"
                  r" (?P<exercises>[^|]*) \|$")


def map_rows() -> list[re.Match[str]]:
    """The rows of the teaching page's goals-to-exercises table, each with its ``chapter``
    (the file stem), its ``goal`` (the text of its learning goal) and its ``exercises``."""
    text = (BOOK / "teaching.md").read_text()
    assert "(teaching-goals-map)=" in text, "the teaching page has no goals-to-exercises map"
    section = text.split("(teaching-goals-map)=", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| {doc}")]
    assert lines, "the goals-to-exercises table has no rows"
    rows = [_ROW.match(line) for line in lines]
    assert all(rows), [line for line, row in zip(lines, rows, strict=True) if row is None]
    return rows


def _map_labels() -> list[str]:
    """The exercise labels in the rows of the teaching page's goals-to-exercises table."""
    return [m["label"] for row in map_rows() for m in _REF.finditer(row["exercises"])]


def test_every_label_in_the_map_is_an_exercise_of_the_book() -> None:
    exercises = _book_exercises()
    labels = _map_labels()
    unknown = sorted(set(labels) - set(exercises))
    assert not unknown, f"the teaching page maps exercises the book does not have: {unknown}"


def test_every_challenging_exercise_is_in_the_map() -> None:
    hard = {label for label, stars in _book_exercises().items() if stars == 3}
    assert len(hard) >= 7, f"expected a (★★★) exercise in every chapter, found {sorted(hard)}"
    missing = sorted(hard - set(_map_labels()))
    assert not missing, f"(★★★) exercises missing from the teaching page's map: {missing}"


def test_the_six_week_plan_names_the_exercises_to_drop() -> None:
    """The six-week plan lists the exercises of the sections it skips by label (a chapter is
    too coarse: some exercises of a kept chapter need a skipped section), and each is real."""
    text = (BOOK / "teaching.md").read_text()
    plan = text.split("### Six weeks", 1)[1].split("\n## ", 1)[0]
    assert "Drop the exercises" in plan, "the six-week plan drops no exercises"
    dropped = [m["label"] for m in _REF.finditer(plan.split("Drop the exercises", 1)[1])]
    assert dropped, "the six-week plan names no exercise to drop"
    unknown = sorted(set(dropped) - set(_book_exercises()))
    assert not unknown, f"the six-week plan drops exercises the book does not have: {unknown}"
    # Exercises citing a theorem of a skipped section must be dropped (or only partly set).
    skipped_theorems = ("thm-optimal-composition", "def-renyi-zcdp", "def-discrete-laplace")
    statement = re.compile(r"```\{exercise\}.*?\n:label: (\S+)\n(.*?)```", re.S)
    for path in sorted(BOOK.glob("*.md")):
        for match in statement.finditer(path.read_text()):
            if any(f"`{thm}`" in match[2] for thm in skipped_theorems):
                assert match[1] in dropped, f"{match[1]} uses a section the six-week plan skips"


# -- the chapters' sizes (teaching.md, "How long each chapter is") --------------------------

_SIZES_ROW = re.compile(r"^\| \{doc\}`(?P<chapter>[\w-]+)` \| (?P<words>[\d,]+) \| "
                        r"(?P<hood>[\d,]+) \| (?P<cells>\d+) \| (?P<stars>\d+ / \d+ / \d+) \| "
                        r"(?P<solutions>[\d,]+) \|$", re.M)


def chapter_size(path: Path) -> dict[str, str]:
    """What the teaching page's size table says of one chapter, measured from its source:
    the words of its text before "Exercises" (headings included, code excluded), those of
    its "Under the hood" sections, its code cells, its exercises by stars, and the words of
    the exercises' statements and solutions."""
    import jupytext

    notebook = jupytext.read(path)
    text, after, hood, level = 0, 0, 0, 0
    cells = sum(cell.cell_type == "code" for cell in notebook.cells)
    exercises = False
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            heading = re.match(r"^(#{2,6}) (.*)$", line)
            if heading:
                depth = len(heading[1])
                if depth == 2 and heading[2].strip() == "Exercises":
                    exercises = True
                elif depth == 2 and exercises:
                    exercises = False                 # the summary after the exercises
                if level and depth <= level:
                    level = 0
                if "Under the hood" in heading[2]:
                    level = depth
            words = len(line.split())
            if exercises:
                after += words
            else:
                text += words
                hood += words if level else 0
    stars = [len(m["stars"]) for m in _EXERCISE.finditer(path.read_text())]
    return {"words": f"{text:,}", "hood": f"{hood:,}", "cells": str(cells),
            "stars": " / ".join(str(stars.count(k)) for k in (1, 2, 3)),
            "solutions": f"{after:,}"}


def test_the_size_table_is_measured_from_the_chapters() -> None:
    text = (BOOK / "teaching.md").read_text()
    rows = {m["chapter"]: m.groupdict() for m in _SIZES_ROW.finditer(text)}
    chapters = [p.stem for p in sorted(BOOK.glob("*.md"))
                if _EXERCISE.search(p.read_text())]
    assert sorted(rows) == sorted(chapters), "one row per chapter with exercises"
    for chapter, row in rows.items():
        measured = chapter_size(BOOK / f"{chapter}.md")
        assert {k: row[k] for k in measured} == measured, (chapter, measured)
