"""A submission's cells as the grader reads them, and the teacher's page of written answers.

:func:`notebook_cells` reads a submitted notebook (any JSON: it is the student's file) into
``(grade id, cell type, text, outputs)``. :func:`written_page` writes
``grades/written/<chapter>/<student>.md``: for each written exercise, the model answer and
rubric, then what the student wrote, fenced (never rendered): the answer cell, their working
cell with the outputs their notebook saved, and every cell they added below the answer,
Markdown or code, up to the next cell of the assignment (honest review 15, F3: an answer
continued in an added Markdown cell, or written in a new cell in place of a deleted answer
cell, never reached the teacher).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpkit.course.agreement import clean_text
from dpkit.course.magics import drop_magics
from dpkit.i18n import CATALOGUE

__all__ = ["ANSWER_STUB", "CODE_STUB", "OUTPUT_LIMIT", "WORK_STUB", "Written", "fenced",
           "grade_id_of", "notebook_cells", "released_stub", "same_code", "work_text",
           "written_page", "written_parts"]

#: The code cell below a written answer (grade id ``<label>-work``), for a computation the
#: question asks for: it runs in notebook order like a cell the student added, and what the
#: student wrote there is shown to the teacher beside the written answer.
WORK_STUB = ("# Your working (optional): if the exercise asks you to compute something, do it "
             "here.\n# It is not graded automatically: your teacher reads it beside your "
             "written answer.\n")
ANSWER_STUB = "YOUR ANSWER HERE"  # nbgrader's text in a written answer cell not yet answered
#: nbgrader's stub in place of a code answer (its ``ClearSolutions.code_stub``).
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
#: How much of one cell's saved text output the teacher's page shows (the rest is cut, "…").
OUTPUT_LIMIT = 2000


def grade_id_of(cell: Any) -> str:
    """A cell's nbgrader id, or "" (also for a cell whose metadata are not what nbgrader
    writes: a submission is the student's file, and may hold anything)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return grade_id if isinstance(grade_id, str) else ""


def _text(value: Any) -> str:
    """nbformat's multiline string (a string or a list of strings), or ""."""
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        value = "".join(value)
    return clean_text(value) if isinstance(value, str) else ""


def _outputs(cell: Any) -> str:
    """The outputs a code cell's notebook saved, as text: streams, results and displays
    (their ``text/plain``), errors (type and message); an image or other rich output as a
    note naming its type. At most :data:`OUTPUT_LIMIT` characters ("…" where cut)."""
    outputs = cell.get("outputs") if isinstance(cell, dict) else None
    parts = []
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            parts.append(_text(output.get("text")))
        elif output.get("output_type") == "error":
            parts.append(f"{_text(output.get('ename'))}: {_text(output.get('evalue'))}\n")
        elif isinstance(output.get("data"), dict):
            data = output["data"]
            images = sorted(kind for kind in data if isinstance(kind, str)
                            and kind.startswith("image/"))
            parts += [f"[{kind} output: open the notebook to see it]\n" for kind in images]
            if not images and "text/plain" in data:
                parts.append(_text(data["text/plain"]) + "\n")
    text = "".join(parts).rstrip("\n")
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT - 1] + "…"


def notebook_cells(submission: Any) -> list[tuple[str, str, str, str]]:
    """The student's cells as ``(grade id or "", cell type, text, saved outputs as text)``;
    a malformed cell counts as empty."""
    cells = submission.get("cells") if isinstance(submission, dict) else None
    found = []
    for cell in cells if isinstance(cells, list) else []:
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        found.append((grade_id_of(cell), kind if isinstance(kind, str) else "",
                      _text(cell.get("source") if isinstance(cell, dict) else None),
                      _outputs(cell)))
    return found


def released_stub(source: str) -> str:
    """The answer cell as the release notebook hands it out: each solution block replaced
    by nbgrader's stub (``raise NotImplementedError()``) at the block's indentation."""
    kept, inside = [], False
    for line in source.splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            indent = line[:len(line) - len(line.lstrip())]
            kept += [indent + line for line in CODE_STUB.splitlines()]
        elif line.strip() != "### END SOLUTION" and not inside:
            kept.append(line)
        inside = line.strip() == "### BEGIN SOLUTION" or (
            inside and line.strip() != "### END SOLUTION")
    return "\n".join(kept)


def same_code(one: str, other: str) -> bool:
    """Whether two cells are the same Python, whatever their comments and spacing."""
    try:
        return ast.dump(ast.parse(drop_magics(one))) == ast.dump(ast.parse(drop_magics(other)))
    except SyntaxError:
        return False


def _every_language(text: str) -> set[str]:
    """``text`` and its translations (a course in any edition hands out one of them)."""
    return {text, *(CATALOGUE[lang].get(text, text) for lang in CATALOGUE)}


def work_text(source: str) -> str:
    """What the student wrote in a working cell ("" if they left the stub, in the language of
    any edition)."""
    return "" if source.strip() in {s.strip() for s in _every_language(WORK_STUB)} else source


@dataclass(frozen=True)
class Written:
    """What a student wrote for one written exercise."""

    answer: str                              # the answer cell's text ("" if deleted)
    work: str                                # the working cell's code, "" if the stub
    work_output: str                         # its saved outputs, as text
    added: tuple[tuple[str, str, str], ...]  # cells added below: (type, text, outputs)


def written_parts(submission: Any, label: str, released: set[str]) -> Written:
    """What the student wrote for the written exercise ``label``: its answer and working
    cells, and the cells they added below the answer cell (or below the exercise's text,
    if they deleted the answer cell) up to the next cell of the released notebook
    (``released``: its grade ids) other than the working cell. An answer or working cell
    copied (Jupyter copies a cell's nbgrader metadata with it) adds its text to the part it
    copies, in order, as the student continued it there (honest review 16, H2: the last
    copy replaced the others)."""
    cells = notebook_cells(submission)
    ids = [grade_id for grade_id, *_ in cells]
    start = next((ids.index(f"{label}-{part}") for part in ("answer", "text")
                  if f"{label}-{part}" in ids), None)
    answer = work = output = ""
    added = []
    for grade_id, kind, text, outputs in cells[start:] if start is not None else []:
        if grade_id == f"{label}-answer":
            answer = "\n\n".join(part for part in (answer, text) if part.strip())
        elif grade_id == f"{label}-work":
            work = "\n\n".join(part for part in (work, work_text(text)) if part.strip())
            output = "\n".join(part for part in (output, outputs) if part)
        elif grade_id in released and grade_id != f"{label}-text":
            break
        elif grade_id not in released and text.strip() and kind in ("markdown", "code"):
            added.append((kind, text, outputs))
    return Written(answer, work, output, tuple(added))


def fenced(text: str, language: str) -> str:
    """``text`` in a fence longer than any run of backticks in it (nothing in it can close
    the fence, hide or imitate the rubric when the page is rendered)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}{language}\n{text}\n{fence}\n"


def _written_answer(answer: str) -> str:
    """The student's written answer, without nbgrader's "YOUR ANSWER HERE" stub (in the
    language of any edition)."""
    stubs = _every_language(ANSWER_STUB)
    lines = [line for line in clean_text(answer).splitlines() if line.strip() not in stubs]
    return "\n".join(lines).strip()


def _code(title: str, code: str, output: str) -> list[str]:
    parts = [f"\n### {title} (code, as written; not run here)\n", fenced(code.strip(), "python")]
    if output:
        parts += ["\nIts output, as the student's notebook saved it:\n", fenced(output, "text")]
    return parts


def written_page(path: Path, student: str, chapter: str,
                 items: list[tuple[str, str, str, float, Written]]) -> None:
    """Write the teacher's page of ``student``'s written answers for ``chapter``: ``items``
    are ``(name, text, model answer and rubric, points, what the student wrote)`` per
    exercise. The student's text is fenced and never rendered (:func:`fenced`).

    Returns
    -------
    None

    Raises
    ------
    OSError
        If the page cannot be written.

    Privacy guarantee: none needed (the page is the teacher's, inside the course folder;
    reference: honest review 15, F3)."""
    parts = [f"# {chapter}: written answers of {student}\n"]
    for name, text, model, points, wrote in items:
        # The model answer and rubric first; the student's text last, fenced.
        parts += [f"## {name}\n", text, "\n### Model answer and rubric\n", model,
                  f"\n*Points: {points:g}; enter them in manual.csv.*\n",
                  "\n### The student's answer (as written, not rendered)\n",
                  fenced(_written_answer(wrote.answer) or "(no answer)", "text")]
        if wrote.work.strip() or wrote.work_output:
            parts += _code("The student's working", wrote.work, wrote.work_output)
        for count, (kind, added, output) in enumerate(wrote.added, 1):
            title = "A cell the student added below the answer" + (
                f", {count} of {len(wrote.added)}" if len(wrote.added) > 1 else "")
            parts += _code(title, added, output) if kind == "code" else [
                f"\n### {title} (Markdown, as written, not rendered)\n",
                fenced(clean_text(added).strip(), "text")]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
