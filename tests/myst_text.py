"""MyST Markdown text shared by the course tests that write a chapter of their own."""

from pathlib import Path

#: The front matter of a chapter (jupytext's MyST format, the python3 kernel), up to and
#: including its closing ``---`` line: a test's chapter is ``FRONT_MATTER`` + its body.
FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def exercise_text(stem: str, label: str) -> str:
    """The statement and the solution of the exercise ``label`` of ``book/<stem>.md`` (from
    its ``:label:`` line to its ``{solution-end}``), each run of white space read as one
    space so that a line break does not matter, for a test to check that the numbers the book
    prints are those it computes. Raises ``ValueError`` if the chapter has no such exercise."""
    text = (Path(__file__).resolve().parent.parent / "book" / f"{stem}.md").read_text()
    start = text.index(f":label: {label}\n")
    return " ".join(text[start:text.index("```{solution-end}", start)].split())
