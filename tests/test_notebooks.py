"""make notebooks: the student copies contain no solution, the teacher copies all of it."""

import jupytext
import nbformat
import pytest

from dpkit.notebooks import export, strip_solutions

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

```{code-cell} ipython3
visible = 1
```
"""


def test_strip_solutions_removes_gated_and_plain_solutions():
    notebook = jupytext.reads(CHAPTER, fmt="md:myst")
    student = strip_solutions(notebook)
    text = "\n".join(cell.source for cell in student.cells)
    for secret in ("Secret reasoning", "secret_answer", "Inline secret", "solution-end"):
        assert secret not in text
    assert "visible = 1" in text and "Compute it." in text
    assert text.count("Your solution here") == 2
    # the original is untouched
    assert "secret_answer" in "\n".join(cell.source for cell in notebook.cells)


def test_unclosed_solution_is_an_error():
    notebook = jupytext.reads(CHAPTER.replace("```{solution-end}\n```\n", ""), fmt="md:myst")
    with pytest.raises(ValueError, match="not closed"):
        strip_solutions(notebook)


def test_export_writes_both_copies(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "ch.md").write_text(CHAPTER)
    written = export(book, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == [
        "student/ch.ipynb", "teacher/ch.ipynb"]
    teacher = nbformat.read(tmp_path / "out" / "teacher" / "ch.ipynb", 4)
    assert "secret_answer" in "\n".join(c.source for c in teacher.cells)


def test_real_chapters_export_without_solutions(tmp_path):
    written = export("book", tmp_path)
    for path in written:
        if path.parent.name == "student":
            text = "\n".join(c.source for c in nbformat.read(path, 4).cells)
            assert "{solution" not in text, path


def test_export_refuses_an_empty_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MyST notebook chapters"):
        export(tmp_path, tmp_path / "out")
