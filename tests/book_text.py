"""The text of one exercise of the book, for the tests that check the numbers its model
solution prints against their computation."""

from __future__ import annotations

import re
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent / "book"


def exercise_text(chapter: str, label: str) -> str:
    """The statement and the model solution of exercise `label` of `book/<chapter>.md`.

    Parameters
    ----------
    chapter : str
        The chapter's file name without ``.md``, e.g. ``"laplace"``.
    label : str
        The exercise's label, e.g. ``"ex-laplace-tree"``.

    Returns
    -------
    str
        The text from the exercise's ``{exercise}`` fence to its ``{solution-end}`` fence.

    Raises
    ------
    AssertionError
        If the chapter has no exercise with that label, or the exercise no solution.
    """
    text = (BOOK / f"{chapter}.md").read_text()
    pattern = (rf"```\{{exercise\}}[^\n]*\n:label: {re.escape(label)}\n.*?"
               rf"```\{{solution-start\}} {re.escape(label)}\n.*?```\{{solution-end\}}")
    match = re.search(pattern, text, re.S)
    assert match, f"book/{chapter}.md has no exercise {label} with a solution"
    return match[0]
