"""The course in Simplified Chinese (issue #23): ``notebooks --lang zh``, ``assignments --lang
zh`` and ``make … LANG=zh`` write the English edition's notebooks and assignments from the zh
pages: the same code cells, exercises, answer cells, grade ids, points and tests, with the
words the builders write in Chinese (one catalogue, :mod:`dpkit.i18n`), and a zh submission
is graded as an English one is.
"""

from __future__ import annotations

import ast
import csv
import subprocess
from pathlib import Path

import nbformat
import pytest

from dpkit.course.__main__ import main
from dpkit.course.assignments import assignment_notebook, build
from dpkit.course.grading import grade
from dpkit.course.magics import drop_magics
from dpkit.course.myst import GLUED_VALUE, read_book
from dpkit.course.notebooks import ANSWER_PROMPT, LANGUAGE_CELL, WORKING_PROMPT
from dpkit.course.written import ANSWER_STUB, CODE_STUB, WORK_STUB, Written, work_text, written_page
from dpkit.i18n import CATALOGUE, in_language, language, tr

ROOT = Path(__file__).resolve().parent.parent

#: Words the builders write in the English notebooks and assignments (each is found there,
#: see the test), none of which may be left in the zh ones.
ENGLISH = ("Your answer.", "Write your proof or design here", "Your working", "Your code here",
           "# your answer", "YOUR CODE HERE", "YOUR ANSWER HERE", "Solution to ", "*Proof.*",
           "(the value printed by the code)", "Assignment — ", "Chapter ", "Public test",
           "Hidden tests", "Write your answers", "loads when first used",
           "import only these modules", "Theorem ", "Definition ", "Lemma ", "Corollary ",
           "Proposition ", "Example ", "Exercise ", "Algorithm ", "**Warning.**")


def _code(source: str) -> str:
    """A code cell as Python, whatever its comments and spacing."""
    return ast.dump(ast.parse(drop_magics(source)))


def _shape(notebook: nbformat.NotebookNode, lang: str) -> list[str]:
    """A notebook's cells as the student meets them: each code cell as Python, each
    written exercise's answer cell, and each run of other Markdown cells as one entry."""
    with in_language(lang):
        prompt = tr(ANSWER_PROMPT)
    shape: list[str] = []
    for cell in notebook.cells:
        if "dpkit-language" in cell.metadata.get("tags", []):
            continue
        entry = _code(cell.source) if cell.cell_type == "code" else \
            "answer" if cell.source == prompt else "markdown"
        if not (entry == "markdown" and shape[-1:] == ["markdown"]):
            shape.append(entry)
    return shape


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The notebooks of both editions, written by the command line."""
    out = tmp_path_factory.mktemp("notebooks")
    assert main(["notebooks", str(ROOT / "book"), str(out / "en")]) == 0
    assert main(["notebooks", "--lang", "zh", str(ROOT / "book"), str(out / "zh")]) == 0
    return out


def _chapters(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.ipynb"))


@pytest.mark.parametrize("kind", ["student", "teacher"])
def test_zh_notebooks_have_the_english_cells_and_exercises(exported, kind):
    """Every chapter's zh notebook has the English one's code cells (the chapter's byte for
    byte; the starter and working cells the same Python) and answer cells, in the same
    order, and one more code cell before them that sets the figures' language to Chinese."""
    assert _chapters(exported / "zh" / kind) == _chapters(exported / "en" / kind) != []
    for chapter in _chapters(exported / "en" / kind):
        en = nbformat.read(exported / "en" / kind / f"{chapter}.ipynb", 4)
        zh = nbformat.read(exported / "zh" / kind / f"{chapter}.ipynb", 4)
        assert _shape(zh, "zh") == _shape(en, "en"), chapter
        code = [c for c in zh.cells if c.cell_type == "code"]
        assert "dpkit-language" in code[0].metadata.tags
        assert "dpkit.i18n.set_language('zh')" in code[0].source
        assert zh.cells[0].cell_type == "markdown" and zh.cells[0].source.startswith("# ")
        pairs = zip([c.source for c in en.cells if c.cell_type == "code"],
                    [c.source for c in code[1:]], strict=True)
        # A chapter's cell is the same text; a cell the builder wrote differs in comments.
        assert [(e, z) for e, z in pairs if e != z and not (
            e == WORKING_PROMPT or "# Your code here." in e or "# your answer" in e)] == []


def _builder_text(zh: nbformat.NotebookNode, english_code: set[str]) -> str:
    """What the builders wrote in a zh notebook: its Markdown, and its code cells that are
    not a chapter's (a chapter's code cells are those of the English edition)."""
    return "\n".join(c.source for c in zh.cells
                     if c.cell_type == "markdown" or c.source not in english_code)


def test_no_english_fixed_word_is_left_in_the_zh_notebooks(exported):
    """The words the builders write (each found in the English notebooks or assignments)
    are all in Chinese in the zh ones; the prompts and stubs are in the catalogue."""
    for constant in (ANSWER_PROMPT, WORKING_PROMPT, LANGUAGE_CELL, WORK_STUB, ANSWER_STUB,
                     CODE_STUB, GLUED_VALUE):
        assert CATALOGUE["zh"].get(constant, constant) != constant, constant
    english_text, left = [], []
    for kind in ("student", "teacher"):
        for chapter in _chapters(exported / "en" / kind):
            en = nbformat.read(exported / "en" / kind / f"{chapter}.ipynb", 4)
            zh = nbformat.read(exported / "zh" / kind / f"{chapter}.ipynb", 4)
            english_text.append("\n".join(c.source for c in en.cells))
            text = _builder_text(zh, {c.source for c in en.cells if c.cell_type == "code"})
            left += [(kind, chapter, w) for w in ENGLISH if w in text]
    for lang, notebooks in _assignments().items():
        for chapter, notebook in notebooks.items():
            if lang == "en":
                english_text.append("\n".join(c.source for c in notebook.cells))
                continue
            code = {c.source for c in _assignments()["en"][chapter].cells}
            text = _builder_text(notebook, code).replace(_setup(chapter), "")
            left += [("assignment", chapter, w) for w in ENGLISH if w in text]
    assert [w for w in ENGLISH if w not in "\n".join(english_text)] == []
    assert left == []


_BUILT: dict[str, dict[str, nbformat.NotebookNode]] = {}


def _assignments() -> dict[str, dict[str, nbformat.NotebookNode]]:
    """The instructor's notebook of every chapter with exercises, in both editions (built
    without nbgrader, which only removes the solutions)."""
    for lang in ("en", "zh"):
        if lang not in _BUILT:
            with in_language(lang):
                book = read_book(ROOT / "book", lang=lang)
                built = {c.stem: assignment_notebook(c.path, book, lang=lang)
                         for c in book.chapters}
            _BUILT[lang] = {stem: nb for stem, nb in built.items() if nb is not None}
    return _BUILT


def _setup(chapter: str) -> str:
    """The chapter's own code in the set-up cell (English comments in both editions)."""
    setup = next(c.source for c in _assignments()["en"][chapter].cells
                 if c.metadata["nbgrader"]["grade_id"] == "setup")
    return setup.split("\n\n", 1)[1]


def test_zh_assignments_have_the_english_grading():
    """Every zh assignment has the English one's cells, grade ids, points, answer code and
    public tests; its set-up cell is the English one with the figures' language set."""
    en, zh = _assignments()["en"], _assignments()["zh"]
    assert sorted(zh) == sorted(en) != []
    for chapter in en:
        def graded(notebook):
            return [(c.cell_type, c.metadata["nbgrader"]["grade_id"],
                     c.metadata["nbgrader"].get("points"), c.metadata["nbgrader"]["solution"],
                     c.metadata["nbgrader"]["locked"],
                     _code(c.source) if c.cell_type == "code"
                     and c.metadata["nbgrader"]["grade_id"] != "setup" else None)
                    for c in notebook.cells]
        assert graded(zh[chapter]) == graded(en[chapter]), chapter
        setup = {lang: next(c.source for c in notebooks[chapter].cells
                            if c.metadata["nbgrader"]["grade_id"] == "setup")
                 for lang, notebooks in (("en", en), ("zh", zh))}
        assert setup["zh"].endswith(_setup(chapter))
        assert "dpkit.i18n.set_language('zh')" in setup["zh"]
        assert _code(setup["zh"]) != _code(setup["en"])


def test_zh_course_grades_a_model_submission_with_full_marks(tmp_path, monkeypatch):
    """A zh course (nbgrader's student copy in Chinese), graded end to end in the sandbox:
    the zh model answers of one chapter get every automatic point, as many as in English,
    and the written answers wait for the teacher beside the zh rubric. The grader's own
    language stays what it was (the model's set-up cell, run in the grader, sets zh)."""
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    chapter = "intro"
    course = tmp_path / "course-zh"
    build(ROOT / "book", course, chapters=[chapter], lang="zh")
    release = nbformat.read(course / "release" / chapter / f"{chapter}.ipynb", 4)
    text = "\n".join(c.source for c in release.cells)
    with in_language("zh"):
        assert tr(ANSWER_STUB) in text and tr(CODE_STUB).splitlines()[0] in text
    assert "YOUR ANSWER HERE" not in text and "YOUR CODE HERE" not in text
    (course / "grades").mkdir()
    (course / "grades" / ".secret").write_text("5eed" * 16)
    student = tmp_path / "submissions" / "model"
    student.mkdir(parents=True)
    notebook = nbformat.read(course / "source" / chapter / f"{chapter}.ipynb", 4)
    for cell in notebook.cells:                      # as a student would hand them in
        cell.source = "\n".join(line for line in cell.source.splitlines()
                                if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
    nbformat.write(notebook, student / f"{chapter}.ipynb")
    rows = list(csv.DictReader(grade(course, tmp_path / "submissions",
                                     log=lambda _m: None).open()))
    assert language() == "en"
    automatic = [r for r in rows if r["points"] != ""]
    en = _assignments()["en"][chapter]
    code = [c for c in en.cells if c.cell_type == "code"
            and c.metadata["nbgrader"]["grade_id"].endswith("-answer")]
    assert len(automatic) == len(code) > 0
    assert [(r["exercise"], r["feedback"]) for r in automatic
            if float(r["points"]) != float(r["max_points"])] == []
    assert all(r["exercise"].startswith("练习 ") for r in rows)
    written = [r for r in rows if r["points"] == ""]
    assert len(written) == sum(c.cell_type == "markdown" and c.metadata["nbgrader"]["solution"]
                               for c in en.cells)


def test_the_zh_stubs_count_as_no_answer():
    """A working cell or a written answer left as the zh course hands it out is nothing the
    student wrote, as with the English stubs."""
    with in_language("zh"):
        work = tr(WORK_STUB)
    assert work != WORK_STUB and work_text(work) == "" and work_text(WORK_STUB) == ""
    assert work_text("x = 1\n") == "x = 1\n"


def test_a_zh_answer_left_as_handed_out_reads_as_no_answer(tmp_path):
    with in_language("zh"):
        answer = tr(ANSWER_STUB)
    assert answer != ANSWER_STUB
    page = tmp_path / "page.md"
    written_page(page, "s", "intro", [("练习 1.1", "text", "model", 2.0,
                                      Written(answer, "", "", ()))])
    assert "(no answer)" in page.read_text() and answer not in page.read_text()


def _make(*args: str, env_lang: str | None = "C.UTF-8") -> subprocess.CompletedProcess[str]:
    """``make -n`` (print the commands, run none) in the repository, with ``LANG`` in the
    environment set to ``env_lang`` (a locale, as a shell has it)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "MAKEFLAGS", "MFLAGS")}
    if env_lang is not None:
        env["LANG"] = env_lang
    return subprocess.run(["make", "-n", "-C", str(ROOT), *args],
                          capture_output=True, text=True, env=env, check=False)


@pytest.mark.parametrize("locale", ["C.UTF-8", "en_US.UTF-8", "zh_CN.UTF-8", "zh", None])
def test_a_locale_in_the_environment_means_english(locale):
    """``LANG`` in the environment is the shell's locale, never an edition, even ``zh``:
    the English notebooks and course, in their folders."""
    for target, command in (("notebooks", "notebooks book _build/notebooks"),
                            ("assignments", "assignments book _build/course")):
        run = _make(target, env_lang=locale)
        assert run.returncode == 0, run.stderr
        assert f"-m dpkit.course {command}\n" in run.stdout and "--lang" not in run.stdout


@pytest.mark.parametrize(("lang", "notebooks", "course"), [
    ("zh", "--lang zh book _build/notebooks/zh", "--lang zh book _build/course-zh"),
    ("en", "book _build/notebooks", "book _build/course")])
def test_lang_on_the_command_line_chooses_the_edition(lang, notebooks, course):
    run = _make("notebooks", "assignments", f"LANG={lang}")
    assert run.returncode == 0, run.stderr
    assert f"-m dpkit.course notebooks {notebooks}\n" in run.stdout
    assert f"-m dpkit.course assignments {course}\n" in run.stdout
    run = _make("grade", "SUBMISSIONS=subs", f"LANG={lang}")
    assert f"-m dpkit.course grade {course.split()[-1]} \"subs\"" in run.stdout, run.stdout


@pytest.mark.parametrize("value", ["fr", "C.UTF-8", "zh_CN.UTF-8", "", "zh en"])
def test_any_other_lang_on_the_command_line_is_a_clear_error(value):
    run = _make("notebooks", f"LANG={value}")
    assert run.returncode != 0
    assert "LANG must be en or zh" in run.stderr and repr(value) in run.stderr, run.stderr


def test_make_clean_keeps_the_zh_course_s_grades(tmp_path):
    """`make clean` keeps the grades of both courses and removes the rest of the zh course."""
    for kept in ("_build/course/grades/.secret", "_build/course-zh/grades/manual.csv"):
        (tmp_path / kept).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / kept).write_text("kept")
    for gone in ("_build/course-zh/source/intro/intro.ipynb", "_build/notebooks/zh/a.ipynb"):
        (tmp_path / gone).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / gone).write_text("gone")
    subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "clean"], cwd=tmp_path,
                   check=True)
    assert (tmp_path / "_build/course-zh/grades/manual.csv").read_text() == "kept"
    assert sorted(p.name for p in (tmp_path / "_build").iterdir()) == ["course", "course-zh"]
    assert [p.name for p in (tmp_path / "_build/course-zh").iterdir()] == ["grades"]
