"""Export the chapters to notebooks for teaching: ``python -m dpkit.notebooks book OUT``.

Every chapter (a MyST Markdown notebook) is written twice as ``.ipynb``:

* ``OUT/teacher/<chapter>.ipynb``: the whole chapter, solutions included;
* ``OUT/student/<chapter>.ipynb``: the same with every solution removed — each block from
  a ```` ```{solution-start} ```` directive to its ```` ```{solution-end} ```` (markdown and
  code cells alike) and every ```` ```{solution} ```` directive — replaced by a note that
  points the student to the exercise's ``dpkit.check`` function.

Outputs are not stored: the notebooks run top to bottom in a kernel with ``dpkit``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat

__all__ = ["export", "strip_solutions"]

_FENCE = re.compile(r"^(`{3,}|:{3,})\s*\{(solution|solution-start|solution-end)\}")
_PLACEHOLDER = ("*Your solution here.* Check it with the `dpkit.check` function named in "
                "the exercise.")


def _strip_markdown(text: str, inside: bool) -> tuple[str, bool]:
    """Remove solution blocks from one markdown cell's text.

    ``inside`` says whether the cell starts inside a gated solution; returns the kept text
    and whether the cell ends inside one.
    """
    kept: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i].lstrip())
        if match and match.group(2) == "solution-start":
            inside = True
            i = _skip_fence(lines, i, match.group(1))
            kept.append(_PLACEHOLDER)
            continue
        if match and match.group(2) == "solution-end":
            inside = False
            i = _skip_fence(lines, i, match.group(1))
            continue
        if match and match.group(2) == "solution" and not inside:
            i = _skip_fence(lines, i, match.group(1))
            kept.append(_PLACEHOLDER)
            continue
        if not inside:
            kept.append(lines[i])
        i += 1
    return "\n".join(kept).strip("\n"), inside


def _skip_fence(lines: list[str], start: int, fence: str) -> int:
    """Return the index just after the directive opened at ``start`` (its closing fence)."""
    for j in range(start + 1, len(lines)):
        if lines[j].strip() == fence:
            return j + 1
    return len(lines)


def strip_solutions(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return a copy of ``notebook`` with every solution removed (see the module docstring).

    Raises
    ------
    ValueError
        If a ``solution-start`` is never closed by a ``solution-end``.
    """
    result = nbformat.from_dict(notebook)
    cells = []
    inside = False
    for cell in result.cells:
        if cell.cell_type == "markdown":
            text, inside = _strip_markdown(cell.source, inside)
            if text.strip():
                cell.source = text
                cells.append(cell)
        elif not inside:
            cells.append(cell)
    if inside:
        raise ValueError("a {solution-start} block is not closed by {solution-end}")
    result.cells = cells
    return result


def export(book_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write teacher and student notebooks for every chapter in ``book_dir``.

    Parameters
    ----------
    book_dir : path
        Folder of the MyST Markdown chapters (``*.md`` with a jupytext header).
    out_dir : path
        Folder that receives ``teacher/`` and ``student/``.

    Returns
    -------
    list of Path
        The notebooks written.

    Raises
    ------
    FileNotFoundError
        If ``book_dir`` holds no chapter.
    """
    book = Path(book_dir)
    chapters = sorted(p for p in book.glob("*.md") if p.read_text().startswith("---\njupytext"))
    if not chapters:
        raise FileNotFoundError(f"no MyST notebook chapters (*.md with a jupytext header) "
                                f"in {book.resolve()}")
    written = []
    for chapter in chapters:
        notebook = jupytext.read(chapter)
        for kind, content in (("teacher", notebook), ("student", strip_solutions(notebook))):
            target = Path(out_dir) / kind / f"{chapter.stem}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(content, target)
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book_dir", help="folder of the chapters, e.g. book")
    parser.add_argument("out_dir", help="where teacher/ and student/ are written")
    args = parser.parse_args(argv)
    for path in export(args.book_dir, args.out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
