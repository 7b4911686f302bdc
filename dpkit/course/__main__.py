"""The course tooling's command line: ``python -m dpkit.course COMMAND ...``.

``lab [--instructor]`` (``make lab``) opens JupyterLab on the chapters, the student
notebooks and the released assignments (:mod:`dpkit.course.lab`); ``notebooks [--lang zh]
BOOK OUT`` (``make notebooks [LANG=zh]``) writes a teacher and a student notebook per chapter
(:func:`dpkit.course.notebooks.export`); ``assignments [--lang zh] BOOK COURSE``
(``make assignments [LANG=zh]``) writes an nbgrader course
(:func:`dpkit.course.assignments.build`), from the English pages or with ``--lang zh`` from
the Simplified Chinese ones (``BOOK/zh``);
``grade COURSE SUBMISSIONS [--regrade] [--unsafe-no-sandbox]`` (``make grade``) grades the
completed notebooks in a sandbox into ``COURSE/grades/`` (:func:`dpkit.course.grading.grade`).

A path that does not exist or is of the wrong kind is reported in one line naming it, with
exit code 2, as argparse reports a bad argument; nbgrader failing, or no sandbox for
grading, is exit code 1. The
Jupyter tooling is imported only once the arguments are known to be good, so ``--help``
and these errors are immediate.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from dpkit.i18n import LANGUAGES

PROG = "python -m dpkit.course"


def _notebooks(args: argparse.Namespace) -> None:
    from dpkit.course.notebooks import export

    for path in export(args.book, args.out, lang=args.lang):
        print(path)


def _assignments(args: argparse.Namespace) -> None:
    from dpkit.course.assignments import build

    for path in build(args.book, args.course, lang=args.lang):
        print(path)


def _grade(args: argparse.Namespace) -> None:
    from dpkit.course.grading import grade

    out = grade(args.course, args.submissions, regrade=args.regrade,
                unsafe=args.unsafe_no_sandbox)
    print(f"grades: {out}; written answers to grade by hand: {out.parent / 'manual.csv'}")


def _folder(path: Path, what: str) -> str | None:
    """Why ``path`` cannot be read as the folder ``what``, or None if it can."""
    if not path.exists():
        return f"{what} {str(path)!r} does not exist"
    if not path.is_dir():
        return f"{what} {str(path)!r} is not a folder"
    return None


def _output(path: Path, what: str, *, folder: bool) -> str | None:
    """Why ``path`` cannot be written as ``what`` (a folder, or a file), or None if it can."""
    if folder and path.exists() and not path.is_dir():
        return f"{what} {str(path)!r} exists and is not a folder"
    if not folder and path.is_dir():
        return f"{what} {str(path)!r} is a folder, not a file"
    if not folder and not path.parent.is_dir():
        return f"the folder of {what} {str(path)!r} does not exist"
    return None


def _problems(args: argparse.Namespace) -> list[str]:
    """Every bad path among the arguments, checked before any work starts."""
    if args.command == "notebooks":
        return [p for p in (_folder(args.book, "book folder"),
                            _output(args.out, "output folder", folder=True)) if p]
    if args.command == "assignments":
        return [p for p in (_folder(args.book, "book folder"),
                            _output(args.course, "course folder", folder=True)) if p]
    problems = [p for p in (_folder(args.course, "course folder"),
                            _folder(args.submissions, "submissions folder")) if p]
    if not problems and not (args.course / "source").is_dir():
        problems.append(f"course folder {str(args.course)!r} has no source/ folder: write the "
                        f"course first with `{PROG} assignments BOOK {args.course}`")
    return problems


def parser() -> argparse.ArgumentParser:
    """The argument parser: one subcommand per course task."""
    formatter = argparse.RawDescriptionHelpFormatter
    top = argparse.ArgumentParser(
        prog=PROG, formatter_class=formatter,
        description="Course tooling for the book: notebooks to hand out, an nbgrader course, "
                    "and grading.\nIt reads the MyST Markdown chapters; it is not part of the "
                    "DP library.",
        epilog="examples (what make notebooks, make assignments and make grade run):\n"
               f"  {PROG} notebooks book _build/notebooks\n"
               f"  {PROG} assignments book _build/course\n"
               f"  {PROG} notebooks --lang zh book _build/notebooks/zh\n"
               f"  {PROG} assignments --lang zh book _build/course-zh\n"
               f"  {PROG} grade _build/course submissions\n\n"
               f"{PROG} COMMAND --help describes one command.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                  title="commands")

    def command(name: str, run: Callable[[argparse.Namespace], None], summary: str,
                description: str, *folders: tuple[str, str]) -> argparse.ArgumentParser:
        """A subcommand, with one positional path argument per ``(name, help)`` in ``folders``
        (shown in capitals)."""
        sub = commands.add_parser(name, help=summary, description=description,
                                  formatter_class=formatter)
        sub.set_defaults(run=run, command_parser=sub)
        for dest, text in folders:
            sub.add_argument(dest, metavar=dest.upper(), type=Path, help=text)
        return sub

    book = ("book", "folder of the MyST Markdown chapters, e.g. book (its _toc.yml is beside it)")
    lang = {"choices": LANGUAGES, "default": "en",
            "help": "the edition: en (BOOK/*.md) or zh (the Simplified Chinese pages, "
                    "BOOK/zh/*.md, and the notebooks' fixed words and figures in Chinese); "
                    "default en"}
    notebooks = command(
        "notebooks", _notebooks, "write teacher and student notebooks, one per chapter",
        "Write OUT/teacher/<chapter>.ipynb (solutions included) and\n"
        "OUT/student/<chapter>.ipynb (solutions removed, a cell to answer in after each\n"
        "exercise) for every chapter, rendered for plain Jupyter. Prints the paths written.",
        book, ("out", "folder that receives teacher/ and student/ (created if needed)"))
    notebooks.add_argument("--lang", **lang)
    assignments = command(
        "assignments", _assignments, "write an nbgrader course, one assignment per chapter",
        "Write an nbgrader course into COURSE, one assignment per chapter with exercises:\n"
        "COURSE/source/<chapter>/<chapter>.ipynb is the instructor's copy (model solutions,\n"
        "hidden tests, rubrics): keep it. COURSE/release/<chapter>/<chapter>.ipynb is the\n"
        "student's copy: hand it out. Prints the student copies written.",
        book, ("course", "the nbgrader course folder (created if needed)"))
    assignments.add_argument("--lang", **lang)
    grade = command(
        "grade", _grade, "grade submitted notebooks (sandboxed) into COURSE/grades",
        "Grade SUBMISSIONS/<student>/<chapter>.ipynb against the course that the\n"
        "assignments command wrote. Each notebook's code runs in a sandbox (bubblewrap: no\n"
        "network, no access to the course's files, CPU and memory limits); the tests run\n"
        "outside it. Only new or changed notebooks are graded; the results are merged into\n"
        "COURSE/grades/grades.csv (one row per student and exercise). Written answers are\n"
        "listed in COURSE/grades/manual.csv for you to score, with each answer beside the\n"
        "rubric in COURSE/grades/written/; run grade again to merge your scores.",
        ("course", "the course folder written by the assignments command"),
        ("submissions", "folder of <student>/<chapter>.ipynb"))
    grade.add_argument("--regrade", action="store_true",
                       help="grade every submission again, not only new or changed ones")
    grade.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="if no sandbox can be made, run the students' code without one "
                            "(only for code you trust: it can read your files)")
    commands.add_parser("lab", help="JupyterLab on the chapters, notebooks and assignments",
                        add_help=False)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code (argparse exits 2 itself on a bad argument)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:  # its options, and JupyterLab's, are dpkit.course.lab's to parse
        from dpkit.course.lab import main as lab

        return lab(argv[1:])
    args = parser().parse_args(argv)
    problems = _problems(args)
    if problems:
        args.command_parser.error("; ".join(problems))
    try:
        args.run(args)
    except OSError as error:  # a chapter-less book folder, a course without assignments, …
        args.command_parser.error(str(error))
    except subprocess.CalledProcessError as error:
        print(f"{PROG} {args.command}: error: nbgrader failed (exit code {error.returncode}): "
              f"{' '.join(map(str, error.cmd))}", file=sys.stderr)
        return 1
    except RuntimeError as error:     # SandboxUnavailable: say why and how to go on
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
