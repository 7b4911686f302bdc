"""make assignments / make grade: nbgrader assignments from the chapters, graded locally.

A small chapter with two code exercises and one proof exercise goes through the whole
pipeline: the model solution gets full marks, an untouched notebook zero, a wrong answer
partial marks with the checker's message, and a notebook that raises or loops forever is
still graded. The real chapters are checked for full marks by executing their instructor
copies (what nbgrader's autograder scores) without the gradebook.
"""

import csv
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from dpkit.course.assignments import agrees_with, assignment_notebook, build, grade
from dpkit.course.myst import read_book

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Randomized response, graded

```{code-cell} ipython3
import numpy as np

import dpkit
```

## Exercises

```{exercise} Truth probability (★)
:label: ex-t-truth

Write `truth_prob(epsilon)` and check it with `dpkit.check.check_truth_probability`.
```

```{solution-start} ex-t-truth
```

```{code-cell} ipython3
def truth_prob(epsilon):
    return np.exp(epsilon) / (1 + np.exp(epsilon))


print(dpkit.check.check_truth_probability(truth_prob))
```

```{solution-end}
```

```{exercise} Debiasing (★★)
:label: ex-t-debias

Write `estimate(yes_fraction, epsilon)` and check it with `dpkit.check.check_debias`.
```

```{solution-start} ex-t-debias
```

```{code-cell} ipython3
def estimate(yes_fraction, epsilon):
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    return (yes_fraction - (1 - p)) / (2 * p - 1)


print(dpkit.check.check_debias(estimate))
```

```{solution-end}
```

```{exercise} One record (★★)
:label: ex-t-proof

Show that releasing one uniformly chosen record is $(0, 1/n)$-DP.
```

```{solution-start} ex-t-proof
```

Only the event that the record is chosen differs, with probability $1/n$.

**Rubric.** 2 points: the event; 1 point: its probability.

```{solution-end}
```
"""
TOC = "format: jb-book\nroot: book/ch\n"


@pytest.fixture(autouse=True)
def _kernels_import_this_dpkit(monkeypatch):
    """The kernels that run the notebooks import the dpkit under test, this checkout's, not
    the one the environment installed (for an editable install, maybe another checkout's)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    (root / "book").mkdir()
    (root / "book" / "ch.md").write_text(CHAPTER)
    (root / "_toc.yml").write_text(TOC)
    course = root / "course"
    released = build(root / "book", course, timeout=10)
    assert released == [course / "release" / "ch" / "ch.ipynb"]
    return course


def _answers(course: Path) -> dict[str, str]:
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    return {c.metadata["nbgrader"]["grade_id"]: re.sub(r"^\s*### (BEGIN|END) SOLUTION\n", "",
                                                       c.source, flags=re.M)
            for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _submission(course: Path, folder: Path, student: str, **replace: str) -> None:
    """The released notebook with the model answers, except those in ``replace``."""
    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    answers = _answers(course) if student != "blank" else {}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in replace:
            cell.source = replace[grade_id]
        elif grade_id in answers:
            cell.source = answers[grade_id]
    (folder / student).mkdir(parents=True)
    nbformat.write(notebook, folder / student / "ch.ipynb")


def test_student_copy_has_no_solution_and_no_hidden_test(course):
    student = (course / "release" / "ch" / "ch.ipynb").read_text()
    for secret in ("np.exp(epsilon) / (1 + np.exp(epsilon))", "HIDDEN", "agrees_with",
                   "Rubric", "probability $1/n$", "BEGIN SOLUTION"):
        assert secret not in student
    instructor = (course / "source" / "ch" / "ch.ipynb").read_text()
    assert "agrees_with" in instructor and "Rubric" in instructor
    assert "raise NotImplementedError()" in student and "def truth_prob(epsilon):" in student


def test_grades(course, tmp_path):
    submissions = tmp_path / "submissions"
    _submission(course, submissions, "solution")
    _submission(course, submissions, "blank")
    wrong = "def estimate(yes_fraction, epsilon):\n    return yes_fraction\n"
    _submission(course, submissions, "wrong", **{"ex-t-debias-answer": wrong})
    raising = "def truth_prob(epsilon):\n    raise RuntimeError('oops')\n"
    looping = "def estimate(yes_fraction, epsilon):\n    while True:\n        pass\n"
    _submission(course, submissions, "broken", **{"ex-t-truth-answer": raising,
                                                  "ex-t-debias-answer": looping})
    out = tmp_path / "grades.csv"
    grade(course, submissions, out)
    rows = list(csv.DictReader(out.open()))
    table = {(r["student"], r["exercise"].split("(")[-1].rstrip(")")): r for r in rows}
    assert {r["student"] for r in rows} == {"solution", "blank", "wrong", "broken"}

    def points(student, label):
        return table[(student, label)]["points"]

    for label in ("ex-t-truth", "ex-t-debias"):
        assert points("solution", label) == "3.0"
        assert points("blank", label) == "0.0"
    assert table[("solution", "ex-t-proof")]["points"] == ""  # graded by hand
    assert "by hand" in table[("solution", "ex-t-proof")]["feedback"]
    # a wrong answer: full marks elsewhere, zero here, and the checker's message as feedback
    assert points("wrong", "ex-t-truth") == "3.0" and points("wrong", "ex-t-debias") == "0.0"
    assert "public test:" in table[("wrong", "ex-t-debias")]["feedback"]
    assert "unbiased" in table[("wrong", "ex-t-debias")]["feedback"].lower() or \
        "expected" in table[("wrong", "ex-t-debias")]["feedback"].lower()
    # raising and looping answers are graded, not fatal
    assert points("broken", "ex-t-truth") == "0.0"
    assert "RuntimeError" in table[("broken", "ex-t-truth")]["feedback"]
    assert points("broken", "ex-t-debias") == "0.0"
    assert "timed out" in table[("broken", "ex-t-debias")]["feedback"]


def test_agrees_with_catches_a_wrong_function_the_public_check_misses():
    def check(fn):
        return fn(1.0) == 1.0  # the public check only looks at x = 1
    ok, why = agrees_with(lambda x: x ** 3, lambda x: x, check)
    assert not ok and "hidden input" in why and "which is not right" in why
    assert agrees_with(lambda x: x, lambda x: x, check)[0]
    assert not agrees_with(lambda x: 2 * x, lambda x: x, check)[0]  # public check fails


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "book").glob("*.md")
                                        if p.read_text().startswith("---\njupytext")
                                        and "{exercise}" in p.read_text()),
                         ids=lambda p: p.stem)
def test_model_solutions_get_full_marks(path, monkeypatch):
    """Every chapter's instructor copy runs without an error in any test cell: what
    nbgrader's autograder scores as full marks."""
    monkeypatch.setenv("DPKIT_WIDGET_MODE", "static")
    notebook = assignment_notebook(path, read_book(ROOT / "book"))
    assert notebook is not None, f"{path.stem} has exercises but no assignment"
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    failed = [(c.metadata["nbgrader"]["grade_id"], o["evalue"][:200])
              for c in notebook.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not failed, failed
