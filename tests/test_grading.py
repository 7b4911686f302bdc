"""Grading, end to end: a class of submissions, honest and adversarial, each graded in the
sandbox, each with the grade a fair teacher would give.

A small chapter with two code exercises (randomized response: the truth probability and the
debiasing estimate) and one proof exercise goes through the whole pipeline: ``build`` writes
the course, ``grade`` grades ``submissions/<student>/ch.ipynb``. Every submission below is
the released notebook with the model answers except in the cells it replaces; the
``CLASS`` table states, per student, the points each exercise must get and a word the
feedback must contain. The real chapters' model solutions must get full marks.
"""

import csv
import json
import os
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest
from myst_text import FRONT_MATTER  # tests/ is on sys.path under pytest

from dpkit.check import check_debias
from dpkit.course.assignments import build
from dpkit.course.grading import PRIVACY_FEEDBACK, UNCHECKED_FEEDBACK, agrees_with, grade
from dpkit.course.sandbox import Limits, Sandbox, _binds

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
MODEL_DEBIAS = "(yes_fraction - (1 - p)) / (2 * p - 1)"

CHAPTER = FRONT_MATTER + """
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


def _public_inputs() -> list[tuple[float, float]]:
    """The inputs the public debiasing check uses (a student can print them too)."""
    seen = []

    def record(yes_fraction, epsilon):
        seen.append((yes_fraction, epsilon))
        p = 2.718281828459045 ** epsilon / (1 + 2.718281828459045 ** epsilon)
        return (yes_fraction - (1 - p)) / (2 * p - 1)

    check_debias(record)
    return seen


TRUTH = "def truth_prob(epsilon):\n"
DEBIAS = "def estimate(yes_fraction, epsilon):\n"
#: student -> ({cell grade id: new source}, {label: (points, word in the feedback)})
CLASS = {
    "model": ({}, {"ex-t-truth": (3, "agree"), "ex-t-debias": (3, "agree")}),
    "written-differently": (
        {"ex-t-truth-answer": TRUTH + "    import math\n    return 1 / (1 + math.exp(-epsilon))\n",
         "ex-t-debias-answer": DEBIAS + "    import math\n    q = 1 / (1 + math.exp(epsilon))\n"
                               "    return (yes_fraction - q) / (1 - 2 * q)\n"},
        {"ex-t-truth": (3, "agree"), "ex-t-debias": (3, "agree")}),
    "blank": (None, {"ex-t-truth": (0, "no answer yet"),      # honest review 15: not
                     "ex-t-debias": (0, "no answer yet")}),   # "raised NotImplementedError"
    "wrong": ({"ex-t-debias-answer": DEBIAS + "    return yes_fraction\n"},
              {"ex-t-truth": (3, "agree"), "ex-t-debias": (0, "public test")}),
    "raising": ({"ex-t-truth-answer": TRUTH + "    raise RuntimeError('oops')\n"},
                {"ex-t-truth": (0, "RuntimeError: oops")}),
    "syntax-error": ({"ex-t-truth-answer": TRUTH + "    return (1 +\n"},
                     {"ex-t-truth": (0, "SyntaxError"), "ex-t-debias": (3, "agree")}),
    "failed-import": ({"ex-t-truth-answer": "import dpkit.no_such_module\n" + TRUTH +
                       "    return 0.5\n"},
                      {"ex-t-truth": (0, "ModuleNotFoundError"), "ex-t-debias": (3, "agree")}),
    "looping": ({"ex-t-debias-answer": DEBIAS + "    while True:\n        pass\n"},
                {"ex-t-truth": (3, "agree"), "ex-t-debias": (0, "more than")}),
    "looping-cell": ({"ex-t-truth-answer": "while True:\n    pass\n"},
                     {"ex-t-truth": (0, "more than"), "ex-t-debias": (3, "agree")}),
    "memory-hog": ({"ex-t-truth-answer": TRUTH + "    return len(bytearray(16 << 30))\n"},
                   {"ex-t-truth": (0, "MemoryError"), "ex-t-debias": (3, "agree")}),
    "fork-bomb": ({"ex-t-truth-answer": "import os\nfor _ in range(10_000):\n    os.fork()\n"},
                  {"ex-t-truth": (0, ""), "ex-t-debias": (3, "agree")}),
    # cheating: each earns nothing it did not solve
    "checker-overwrite": (
        {"ex-t-debias-answer": "import dpkit.check\nfrom dpkit.check import Verdict\n"
         "dpkit.check.check_debias = lambda f: Verdict(True, 'fine')\n"
         + DEBIAS + "    return 0\n"},
        {"ex-t-truth": (3, "agree"), "ex-t-debias": (0, "public test")}),  # the stand-in is patched
    "assert-neutering": (
        {"ex-t-debias-answer": "try:\n    get_ipython().input_transformers_post.append("
         "lambda lines: [l.replace('assert', 'pass #') for l in lines])\n"
         "except NameError:\n    pass\n" + DEBIAS + "    return 0\n"},
        {"ex-t-debias": (0, "public test")}),
    "event-hook": (
        {"ex-t-debias-answer": "try:\n    get_ipython().events.register('pre_run_cell', "
         "lambda info: print(info.raw_cell))\nexcept NameError:\n    pass\n"
         + DEBIAS + "    return 0\n"},
        {"ex-t-debias": (0, "public test")}),
    "reads-instructor-files": (           # COURSE is replaced by the course's real path
        {"ex-t-debias-answer": "import glob, json\n"
         "FOUND = [p for pattern in ('COURSE/**/*.ipynb', '/work/**/*.ipynb', '/root/**/*.ipynb',"
         " '/tmp/**/*.ipynb', '/home/**/*.ipynb') for p in glob.glob(pattern, recursive=True)]\n"
         + DEBIAS + "    for path in FOUND:\n"
         "        for cell in json.load(open(path))['cells']:\n"
         "            if 'def estimate' in ''.join(cell['source']):\n"
         "                scope = {}\n"
         "                code = ''.join(cell['source']).replace('### BEGIN' + ' SOLUTION', '')\n"
         "                exec(code, scope)\n"
         "                return scope['estimate'](yes_fraction, epsilon)\n"
         "    raise RuntimeError(f'found {len(FOUND)} files')\n"},
        {"ex-t-debias": (0, "RuntimeError")}),   # its message withheld: N11
    "exfiltrates-through-errors": (
        {"ex-t-debias-answer": DEBIAS + "    import sys\n    raise ValueError('LEAK>>> ' + "
         "repr(sorted(sys.modules)) + repr(globals().keys()))\n"},
        {"ex-t-debias": (0, "ValueError")}),
    # Adversarial review round 7, N11: the hidden inputs of one exercise, kept in a global,
    # raised in the next answer cell's error (its message was quoted in full)
    "next-cell-leak": (
        {"ex-t-truth-answer": "_SEEN = []\n" + TRUTH + "    import math\n"
         "    _SEEN.append(epsilon)\n    return 1 / (1 + math.exp(-epsilon))\n",
         "ex-t-debias-answer": "raise ValueError('LEAK>>>' + repr(_SEEN))\n" + DEBIAS +
         "    return 0\n"},
        {"ex-t-truth": (3, "agree"),
         "ex-t-debias": (0, "your answer cell raised ValueError (in your answer to "
                            "Exercise 2, line 1) (its message is not shown")}),
    # Adversarial review round 8, X1: the hidden inputs kept in a global, returned by the
    # next exercise to its public check, which quoted the returned value
    "next-check-leak": (
        {"ex-t-truth-answer": "_SEEN = []\n" + TRUTH + "    import math\n"
         "    _SEEN.append(epsilon)\n    return 1 / (1 + math.exp(-epsilon))\n",
         "ex-t-debias-answer": DEBIAS + "    return 'LEAK>>>' + repr(_SEEN)\n"},
        {"ex-t-truth": (3, "agree"),
         "ex-t-debias": (0, "public test: not passed (its message is not shown")}),
    "lookup-table": (                      # the answers to the public inputs only
        {}, {"ex-t-debias": (1, "hidden input")}),
    "edits-public-test": (
        {"ex-t-debias-answer": DEBIAS + "    return 0\n",
         "ex-t-debias-public": "print('passed')\n"},
        {"ex-t-debias": (0, "public test")}),
    "surrogate-in-error": ({"ex-t-truth-answer": TRUTH + "    raise ValueError('\\ud800')\n"},
                           {"ex-t-truth": (0, "ValueError"), "ex-t-debias": (3, "agree")}),
    "writes-outside": (
        {"ex-t-truth-answer": "import os\nfor path in ('/work/pwned', '/tmp/../pwned', "
         f"{str(ROOT / 'PWNED')!r}):\n    try:\n        open(path, 'w').write('x')\n"
         "    except OSError:\n        pass\n"
         "os.system('touch /root/pwned')\n" + TRUTH +
         "    import math\n    return math.exp(epsilon) / (1 + math.exp(epsilon))\n"},
        {"ex-t-truth": (3, "agree")}),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    (root / "book").mkdir()
    (root / "book" / "ch.md").write_text(CHAPTER)
    (root / "_toc.yml").write_text(TOC)
    course = root / "course"
    assert build(root / "book", course) == [course / "release" / "ch" / "ch.ipynb"]
    return course


def _model_answers(course: Path) -> dict[str, str]:
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in c.source.splitlines() if "### " not in line)
        for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _lookup_source() -> str:
    import math

    table = {}
    for y, e in _public_inputs():
        p = math.exp(e) / (1 + math.exp(e))
        table[(y, e)] = (y - (1 - p)) / (2 * p - 1)
    return f"TABLE = {table!r}\n" + DEBIAS + "    return TABLE.get((yes_fraction, epsilon), 0.0)\n"


def _submit(course: Path, folder: Path, student: str, replace: dict[str, str] | None) -> None:
    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    answers = {} if replace is None else {**_model_answers(course), **replace}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    (folder / student).mkdir(parents=True)
    nbformat.write(notebook, folder / student / "ch.ipynb")


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    submissions = tmp_path_factory.mktemp("submissions")
    for student, (replace, _) in CLASS.items():
        if student == "lookup-table":
            replace = {"ex-t-debias-answer": _lookup_source()}
        if replace:
            replace = {k: v.replace("COURSE", str(course)) for k, v in replace.items()}
        _submit(course, submissions, student, replace)
    limits = Limits(call_seconds=10, memory_bytes=2 << 30)
    out = grade(course, submissions, limits=limits, log=lambda _m: None)
    rows = list(csv.DictReader(out.open()))
    return submissions, out, {(r["student"], r["exercise"].rsplit("(", 1)[-1].rstrip(")")): r
                              for r in rows}


def test_student_copy_has_no_solution(course):
    student = (course / "release" / "ch" / "ch.ipynb").read_text()
    for secret in ("np.exp(epsilon) / (1 + np.exp(epsilon))", MODEL_DEBIAS, "Rubric",
                   "probability $1/n$", "BEGIN SOLUTION"):
        assert secret not in student
    assert "def truth_prob(epsilon):" in student and "def estimate(" in student


@pytest.mark.parametrize("student", sorted(CLASS))
def test_each_submission_gets_the_grade_a_fair_teacher_gives(graded, student):
    _, _, table = graded
    for label, (points, word) in CLASS[student][1].items():
        row = table[(student, label)]
        assert float(row["points"]) == points, (label, row)
        assert word in row["feedback"], (label, row["feedback"])
        assert float(row["max_points"]) == 3


def test_error_messages_are_withheld_once_hidden_tests_have_run(graded):
    """Review round 7, N11: after the first exercise's hidden tests, the student's errors
    are named by type and line only (the answer cell's, and those the public test
    meets), so no later error carries the hidden inputs kept in a global; an error before
    any hidden test keeps its message ("raising": RuntimeError: oops). Deterministic."""
    _, _, table = graded
    for student in ("next-cell-leak", "exfiltrates-through-errors", "next-check-leak"):
        assert "LEAK" not in table[(student, "ex-t-debias")]["feedback"], student
    assert "run that cell in your notebook" in table[("next-cell-leak", "ex-t-debias")][
        "feedback"]
    assert "RuntimeError: oops" in table[("raising", "ex-t-truth")]["feedback"]


def test_feedback_never_shows_the_solution_or_the_grader(graded):
    _, out, _ = graded
    text = out.read_text()
    for secret in (MODEL_DEBIAS, "np.exp(epsilon) / (1 + np.exp(epsilon))", "Rubric",
                   "dpkit/course", "grading.py", "Traceback"):
        assert secret not in text


def test_nothing_was_written_outside_the_sandbox():
    for path in (Path("/work/pwned"), Path("/pwned"), ROOT / "PWNED", Path("/root/pwned")):
        assert not path.exists(), path


def test_written_answers_wait_for_the_teacher_and_their_scores_are_merged(course, graded):
    submissions, out, table = graded
    assert table[("model", "ex-t-proof")]["points"] == ""
    assert "by hand" in table[("model", "ex-t-proof")]["feedback"]
    manual = course / "grades" / "manual.csv"
    rows = list(csv.DictReader(manual.open()))
    assert {r["student"] for r in rows} == set(CLASS)
    page = (course / "grades" / "written" / "ch" / "model.md").read_text()
    assert "Rubric" in page and "The student's answer" in page
    for row in rows:
        if row["student"] == "model":
            row["points"], row["comment"] = "2", "the event, not its probability"
    with manual.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    grade(course, submissions, log=lambda _m: None)       # nothing changed: nothing regraded
    merged = {(r["student"], r["exercise"].rsplit("(", 1)[-1].rstrip(")")): r
              for r in csv.DictReader(out.open())}
    assert merged[("model", "ex-t-proof")]["points"] == "2"
    assert "the event" in merged[("model", "ex-t-proof")]["feedback"]
    assert merged[("wrong", "ex-t-truth")] == table[("wrong", "ex-t-truth")]


def test_grading_is_incremental(course, graded):
    submissions, _, _ = graded
    messages = []
    grade(course, submissions, log=messages.append)
    assert not any(m.endswith("grading") for m in messages)
    assert sum(m.endswith("kept") for m in messages) == len(CLASS)
    store = json.loads((course / "grades" / "autograded.json").read_text())
    assert set(store) == {f"{s}/ch" for s in CLASS}


def test_grades_live_in_the_course_folder_and_are_ignored_by_git(course, graded):
    _, out, _ = graded
    assert out == course / "grades" / "grades.csv"
    assert "_build/" in (ROOT / ".gitignore").read_text().split()
    assert not (ROOT / "grades.csv").exists()


def test_agrees_with_catches_a_wrong_function_the_public_check_misses():
    import numpy as np

    def check(fn):
        return fn(1.0) == 1.0  # the public check only looks at x = 1
    rng = np.random.default_rng(5)
    ok, why = agrees_with(lambda x: x ** 3, lambda x: x, check, rng)
    assert not ok and "hidden input" in why and "which is not right" in why
    assert agrees_with(lambda x: x, lambda x: x, check, rng)[0]
    assert not agrees_with(lambda x: 2 * x, lambda x: x, check, rng)[0]  # public check fails


def test_agrees_with_reads_numbers_as_the_public_checks_do():
    """A right number in a NumPy array of size 1 (which the public checks accept) agrees; a
    list of one number or a wrong number in an array does not."""
    import numpy as np

    def check(fn):
        return float(np.asarray(fn(1.0)).ravel()[0]) == 2.0
    rng = np.random.default_rng(6)
    assert agrees_with(lambda x: np.array([2 * x]), lambda x: 2 * x, check, rng)[0]
    assert agrees_with(lambda x: np.array([[2 * x]]), lambda x: 2 * x, check, rng)[0]
    assert agrees_with(lambda x: np.array(2 * x), lambda x: 2 * x, check, rng)[0]
    assert not agrees_with(lambda x: [2 * x], lambda x: 2 * x, check, rng)[0]
    assert not agrees_with(lambda x: np.array([x + 1]), lambda x: 2 * x, check, rng)[0]
    assert not agrees_with(lambda x: np.array([2 * x, 2 * x]), lambda x: 2 * x, check, rng)[0]


def test_agrees_with_takes_the_statement_s_absolute_tolerance():
    """ex-analytic-profile asks for accuracy down to δ ≈ 1e-25: a δ of 0.0 where the true
    one is 1e-300 is within it; 1e-20 is not."""
    import numpy as np

    from dpkit.course.grading import ABSOLUTE_TOLERANCE

    atol = ABSOLUTE_TOLERANCE["ex-analytic-profile"]

    def check(fn):
        return fn(1.0) == 1e-300
    rng = np.random.default_rng(7)
    assert agrees_with(lambda x: 0.0 if x != 1.0 else 1e-300, lambda x: 1e-300, check, rng,
                       atol=atol)[0]
    assert not agrees_with(lambda x: 0.0 if x != 1.0 else 1e-300, lambda x: 1e-300, check, rng)[0]
    assert not agrees_with(lambda x: 1e-20 if x != 1.0 else 1e-300, lambda x: 1e-300, check,
                           rng, atol=atol)[0]


def test_the_sandbox_sees_only_python_and_dpkit():
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        errors = sandbox.run(["import os, socket, dpkit\n"
                              "course = os.path.join(os.path.dirname(dpkit.__file__), 'course')\n"
                              "judges = os.listdir(os.path.join(course, 'judges'))\n"
                              "grader = open(os.path.join(course, 'grading.py')).read()\n"
                              "visible = sorted(os.listdir('/'))\n"
                              "etc = os.listdir('/etc')\n"
                              "uid = os.getuid()\n"
                              "try:\n    socket.create_connection(('1.1.1.1', 53), 2)\n"
                              "    network = True\nexcept OSError:\n    network = False\n"])
        assert errors == [None]
        assert sandbox.get("network") is False
        assert sandbox.get("judges") == [] and sandbox.get("grader") == ""  # the grader's code
        if os.geteuid() == 0:
            assert sandbox.get("uid") == 65534
        visible = set(sandbox.get("visible"))
        # Only what the sandbox makes, and the top folders of what it binds (the clone may
        # live anywhere: /work, /home, /check ...).
        bound = {path.parts[1] for path in _binds()}
        assert visible <= {"usr", "bin", "lib", "lib64", "proc", "dev", "tmp", "home",
                           "etc"} | bound
        assert sandbox.get("etc") == [] and "etc" not in bound    # an empty one, not the host's


def test_the_worker_reads_like_a_notebook_s_kernel_on_the_cheap_signals():
    """Adversarial review 10, A2: ``"ipykernel" in sys.modules`` (never true in the worker
    before), ``HOME == "/tmp"`` and ``MPLBACKEND == "Agg"`` told the sandbox from a notebook.
    Now they read as in a kernel (ipykernel 7.4.0 sets that backend), the home is writable
    and a figure can still be drawn and shown. Deterministic."""
    with Sandbox(Limits(call_seconds=60)) as sandbox:
        errors = sandbox.run(["import os, sys\n"
                              "signals = ['ipykernel' in sys.modules, os.environ['HOME'],\n"
                              "           os.environ['MPLBACKEND']]\n"
                              "open(os.path.join(os.path.expanduser('~'), 'notes.txt'), 'w')"
                              ".write('x')\n"
                              "import ipykernel._version\n"
                              "import matplotlib.pyplot as plt\n"
                              "plt.plot([1, 2])\nplt.show()\n"
                              "backend = plt.get_backend()\n"])
        assert errors == [None], errors
        assert sandbox.get("signals") == [True, "/home/student",
                                          "module://matplotlib_inline.backend_inline"]
        assert sandbox.get("backend") == "module://matplotlib_inline.backend_inline"



def test_adv11_the_worker_s_flags_threads_and_command_line_read_as_a_kernel_s():
    """Adversarial review 11, F2 and F7: ``sys.flags.isolated`` was 1 in the worker (``python
    -I``), ``threading.active_count()`` 1, ``sys.displayhook`` the builtin and
    ``sys.orig_argv`` held ``-I`` and the worker's module; in an ipykernel 7.4 kernel the
    flags are 0, 9 threads run, the hook is a ``ZMQShellDisplayHook`` and the command line
    is the launcher's. A file the student writes in the working folder with ``%%writefile`` is
    importable, as in a kernel, after the standard library. Deterministic."""
    with Sandbox(Limits(call_seconds=60)) as sandbox:
        errors = sandbox.run([
            "import sys, threading\n"
            "flags = [sys.flags.isolated, sys.flags.ignore_environment,\n"
            "         sys.flags.no_user_site, int(sys.flags.safe_path)]\n"
            "orig, argv, path = sys.orig_argv, sys.argv, sys.path\n"
            "threads = sorted(t.name for t in threading.enumerate())\n"
            "hook = type(sys.displayhook).__module__ + '.' + type(sys.displayhook).__name__\n",
            "%%writefile mine.py\nX = 5\n", "import mine\nx = mine.X\n"])
        assert errors == [None] * 3, errors
        assert sandbox.get("flags") == [0, 0, 0, 0]
        argv = sandbox.get("argv")
        assert sandbox.get("orig") == [sys.executable, "-m", "ipykernel_launcher", *argv[1:]]
        assert argv[0].endswith("ipykernel_launcher.py") and argv[1] == "-f"
        path = sandbox.get("path")
        assert "" in path and not any(p.endswith("-packages") for p in path[:path.index("")])
        assert sandbox.get("threads") == sorted([
            "MainThread", "IOPub", "Heartbeat", "Thread-2 (_watch_pipe_fd)",
            "Thread-3 (_watch_pipe_fd)", "Control", "Shell channel",
            "IPythonHistorySavingThread", "Thread-1"])
        assert sandbox.get("hook") == "ipykernel.displayhook.ZMQShellDisplayHook"
        assert sandbox.get("x") == 5



def test_honest13_cells_jupyter_runs_run_the_same_way_in_the_worker(tmp_path):
    """Honest review 13, F1, F2, F4, F6: correct answers lost whole exercises because the
    worker blanked continuation lines starting with ``%`` or ``!=`` (SyntaxError), left an
    indented ``%time`` loop body empty (IndentationError), kept ``t = %timeit -o …``,
    refused top-level ``await`` and ran a ``%%writefile`` cell as Python (its module never
    written, ``import`` failed). In a real worker each now runs as in Jupyter, and a magic
    still runs nothing (``%run``, ``!touch``, ``%%bash`` leave no file). Deterministic."""
    marker = tmp_path / "ran"
    with Sandbox(Limits(call_seconds=60)) as sandbox:
        errors = sandbox.run([
            "def truth_prob(e):\n    return e / (1 + e)\n",
            'shown = ("p at epsilon = 1: %.4f"\n         % truth_prob(1.0))\n'
            "ok = (truth_prob(0.75)\n      != 0.0)\n",
            "for eps in [0.5, 1.0]:\n    %time truth_prob(eps)\n"
            "t = %timeit -o -n 10 truth_prob(0.75)\n%time x = truth_prob(1.0)\n",
            "import asyncio\nasync def main():\n    await asyncio.sleep(0)\n    return 7\n"
            "r = await main()\n",
            "%%writefile mylap_helper.py\ndef double(x):\n    return 2 * x\n",
            "import mylap_helper\ny = mylap_helper.double(3)\n",
            f"%run {marker}.py\n!touch {marker}\nfiles = !touch {marker}\n",
            f"%%bash\ntouch {marker}\n",
            "%%html\n<b>bold</b>\n",
            f"import os\nmarked = os.path.exists({str(marker)!r})\n"])
        assert errors == [None] * 10, errors
        assert sandbox.get("shown") == "p at epsilon = 1: 0.5000"
        assert [sandbox.get(n) for n in ("ok", "x", "r", "y", "files", "marked")] == [
            True, 0.5, 7, 6, [], False]
        # t binds a stand-in of IPython's TimeitResult (honest review 15, F1): not a plain
        # value the channel sends, so read what the student would read of it
        sandbox.run(["t_average_ok = t.average >= 0 and t.loops == 1\n"])
        assert sandbox.get("t_average_ok") is True
    assert not marker.exists()

def test_adv14_only_files_writefile_wrote_are_imported_from_the_working_folder():
    """Adversarial review 14, F1: a module written at run time under an installed name
    (``tabulate.py``, ``''`` precedes site-packages) or a ``%%writefile`` file overwritten
    with ``open()`` was imported, so its code ran unread (3/3 for a forbidden function). In
    a real worker such files now raise ImportError saying why; a ``%%writefile`` module
    (appended to with ``-a`` too) still imports, and the standard library and installed
    packages are untouched. Deterministic."""
    with Sandbox(Limits(call_seconds=60)) as sandbox:
        errors = sandbox.run([
            "open('tabulate.py', 'w').write('F = 1\\n')\n",
            "import tabulate\n",
            "%%writefile helper2.py\nX = 1\n",
            "open('helper2.py', 'w').write('X = 2\\n')\n",
            "import helper2\n",
            "open('helper3.py', 'w').write('X = 3\\n')\nimport helper3\n",
            "%%writefile helper4.py\nX = (\n",
            "%%writefile -a helper4.py\n4)\n",
            "import helper4, json, numpy\nx = helper4.X\n"])
        assert [e and type(e).__name__ for e in errors] == [
            None, "ImportError", None, None, "ImportError", "ImportError", None, None, None], errors
        assert "name of an installed module" in str(errors[1]), errors
        assert all("%%writefile" in str(errors[i]) for i in (4, 5)), errors
        assert sandbox.get("x") == 4


#: What a cell reads in an ipykernel 7.4 kernel (IPython 9.18), recorded with jupyter_client
#: after a set-up cell ``import numpy as np`` / ``import dpkit`` (adversarial review 12, F3).
ADV12_KERNEL = {
    "In": "builtins.list", "Out": "builtins.dict", "_ih": "builtins.list",
    "_oh": "builtins.dict", "_dh": "builtins.list", "_": "builtins.str", "__": "builtins.str",
    "___": "builtins.str", "_i": "builtins.str", "_ii": "builtins.str", "_iii": "builtins.str",
    "exit": "IPython.core.autocall.ZMQExitAutocall",
    "quit": "IPython.core.autocall.ZMQExitAutocall", "open": "builtins.function",
    "get_ipython": "builtins.method", "shell": "ipykernel.zmqshell.ZMQInteractiveShell",
    "kernel": "ipykernel.ipkernel.IPythonKernel", "config": ["IPKernelApp", "ScriptMagics"],
    "open_is_io_open": False, "open_name": ["io", "open"],
    "prompts": ["In : ", "...: ", "Out: "],
    "excepthook": "<bound method InteractiveShell.excepthook of "
                  "<ipykernel.zmqshell.ZMQInteractiveShell object>>",
    "loop": "<_UnixSelectorEventLoop running=True closed=False debug=False>",
    "filters": [["ignore", "Warning", "numpy.ndarray size changed", None],
                ["ignore", "Warning", "numpy.ufunc size changed", None],
                ["ignore", "Warning", "numpy.dtype size changed", None],
                ["always", "RankWarning", None, None],
                ["ignore", "RuntimeWarning",
                 ".*Trio's signal handling code might have collided.*", None],
                ["error", "ProvisionalCompleterWarning", None, None],
                ["default", "DeprecationWarning", None, "__main__"],
                ["ignore", "DeprecationWarning", None, None],
                ["ignore", "PendingDeprecationWarning", None, None],
                ["ignore", "ImportWarning", None, None],
                ["ignore", "ResourceWarning", None, None]],
    "path0_is_stdlib": True, "main_is_namespace": True,
    "builtins": ["__IPYTHON__", "display", "get_ipython"],
    "display_in_namespace": False,
}
ADV12_PROBE = """\
import asyncio, builtins, io, re, sys, warnings
def signals():
    g = globals()
    def kind(x):
        return type(x).__module__ + "." + type(x).__name__
    def loop():
        try:
            return re.sub(" at 0x[0-9a-f]+", "", repr(asyncio.get_running_loop()))
        except RuntimeError:
            return None
    found = {n: kind(g[n]) if n in g else None for n in
             ["In", "Out", "_ih", "_oh", "_dh", "_", "__", "___", "_i", "_ii", "_iii",
              "exit", "quit", "open", "get_ipython"]}
    shell = g["get_ipython"]() if "get_ipython" in g else None
    found.update(
        shell=kind(shell), kernel=kind(getattr(shell, "kernel", None)),
        config=sorted(getattr(shell, "config", {})), open_is_io_open=open is io.open,
        open_name=[open.__module__, open.__qualname__],
        prompts=[getattr(sys, p, None) for p in ("ps1", "ps2", "ps3")],
        excepthook=re.sub(" at 0x[0-9a-f]+", "", repr(sys.excepthook)), loop=loop(),
        filters=[[f[0], f[2].__name__, getattr(f[1], "pattern", f[1]),
                  getattr(f[3], "pattern", f[3])] for f in warnings.filters],
        path0_is_stdlib=sys.path[0].startswith(sys.base_prefix),
        main_is_namespace=sys.modules["__main__"].__dict__ is g,
        builtins=sorted(n for n in ("__IPYTHON__", "display", "get_ipython")
                        if hasattr(builtins, n)),
        display_in_namespace="display" in g)
    return found
in_cell = signals()
"""


def test_adv12_the_worker_s_namespace_and_process_read_as_a_kernel_s():
    """Adversarial review 12, F3 (3/3 in the real grader with a bare ``In``): the worker's
    namespace had no ``In``/``Out``/``_``/``get_ipython``, ``exit`` was the site module's,
    ``open`` the builtin, no ``sys.ps1``, the builtin ``sys.excepthook``, no running event
    loop, other warning filters and the package's folder first in ``sys.path``. Each now
    reads as recorded in an ipykernel 7.4 kernel (:data:`ADV12_KERNEL`), in a cell and in
    a function the grader calls; ``In`` holds the notebook's cells only, and a cell's last
    expression goes to ``Out`` and ``_``. Deterministic."""
    setup = "import numpy as np\nimport dpkit\nimport ipywidgets\n"   # reads ipykernel.version_info
    with Sandbox(Limits(call_seconds=60)) as sandbox:
        errors = sandbox.run([setup, ADV12_PROBE, "%matplotlib inline\n6 * 7\n"])
        assert errors == [None, None, None], errors
        assert sandbox.get("in_cell") == ADV12_KERNEL
        assert sandbox.call("signals") == {**ADV12_KERNEL, "_": "builtins.int"}  # Out[3]
        assert sandbox.get("In") == ["", setup.rstrip(), ADV12_PROBE.rstrip(),   # as IPython
                                     "get_ipython().run_line_magic('matplotlib', 'inline')\n"
                                     "6 * 7"]
        assert sandbox.get("Out") == {3: 42} and sandbox.get("_") == 42


# --------------------------------------------------------------- the book's own exercises

CHAPTERS = sorted(p.stem for p in (ROOT / "book").glob("*.md")
                  if p.read_text().startswith("---\njupytext") and "{exercise}" in p.read_text())

AT = "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
AVG = "def my_auto_avg(values, epsilon, rng):\n"
#: A privacy violation: 0 for the exercise, the public point included, and the feedback
#: says why (an expected grade is points, or (points, a phrase the feedback must hold)).
VIOLATION = (0, PRIVACY_FEEDBACK)
#: Correct answers written unlike the model, and honest mistakes, for the randomized
#: exercises of the sparse vector chapter: (answer cells, {label: expected grade}).
SVT_CLASS = {
    "exponential-differences-and-count-first": ({
        "ex-svt-above-threshold-answer": AT +
        "    g = rng.numpy_generator()\n"
        "    def lap(b):\n        return b * (g.exponential() - g.exponential())\n"
        "    t = threshold + lap(2 / epsilon)\n    i = 0\n    stream = iter(queries)\n"
        "    while True:\n        try:\n            q = next(stream)\n"
        "        except StopIteration:\n            return None\n"
        "        if q(data) + lap(4 / epsilon) >= t:\n            return i\n        i += 1\n",
        "ex-svt-auto-avg-answer": AVG +
        "    e = epsilon / 3\n"
        "    count = laplace_mechanism(float(len(values)), 1.0, e, rng=rng)\n"
        "    b = choose_clip_bound(values, e, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)\n"
        "    b = DEFAULT_CLIP_BOUNDS[-1] if b is None else b\n"
        "    total = laplace_mechanism(float(np.minimum(np.maximum(values, 0), b).sum()), b, e,"
        " rng=rng)\n    return total / count\n"},
        {"ex-svt-above-threshold": 3, "ex-svt-auto-avg": 3}),
    "threshold-redrawn-and-3-epsilon": ({
        "ex-svt-above-threshold-answer": AT +
        "    g = rng.numpy_generator()\n    for i, q in enumerate(queries):\n"
        "        t = threshold + g.laplace(0.0, 2 / epsilon)\n"
        "        if q(data) + g.laplace(0.0, 4 / epsilon) >= t:\n            return i\n"
        "    return None\n",
        "ex-svt-auto-avg-answer": AVG +
        "    b = choose_clip_bound(values, epsilon, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)\n"
        "    b = DEFAULT_CLIP_BOUNDS[-1] if b is None else b\n"
        "    total = laplace_mechanism(float(np.clip(values, 0, b).sum()), b, epsilon, rng=rng)\n"
        "    count = laplace_mechanism(float(len(values)), 1.0, epsilon, rng=rng)\n"
        "    return total / count\n"},
        {"ex-svt-above-threshold": 0, "ex-svt-auto-avg": VIOLATION}),
    "fallback-index-and-float-noise": ({
        "ex-svt-above-threshold-answer": AT +
        "    g = rng.numpy_generator()\n    t = threshold + g.laplace(0.0, 2 / epsilon)\n"
        "    i = -1\n    for i, q in enumerate(queries):\n"
        "        if q(data) + g.laplace(0.0, 4 / epsilon) >= t:\n            return i\n"
        "    return max(i, 0)\n",
        "ex-svt-auto-avg-answer": AVG +
        "    e = epsilon / 3\n    g = rng.numpy_generator()\n"
        "    b = choose_clip_bound(values, e, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)\n"
        "    b = DEFAULT_CLIP_BOUNDS[-1] if b is None else b\n"
        "    total = float(np.clip(values, 0, b).sum()) + g.laplace(0.0, b / e)\n"
        "    count = len(values) + g.laplace(0.0, 1 / e)\n    return total / count\n"},
        {"ex-svt-above-threshold": 0, "ex-svt-auto-avg": 1}),
    # A bound read off the data: accurate enough for the public check (but the median),
    # not ε-DP, so no point at all.
    **{f"{name}-as-bound": ({
        "ex-svt-auto-avg-answer": AVG +
        f"    e = epsilon / 3\n    b = float({bound})\n"
        "    total = laplace_mechanism(float(np.clip(values, 0, b).sum()), b, e, rng=rng)\n"
        "    return total / laplace_mechanism(float(len(values)), 1.0, e, rng=rng)\n"},
        {"ex-svt-auto-avg": points}) for name, bound, points in (
            ("median", "np.percentile(values, 50)", 0),
            ("percentile-95", "np.percentile(values, 95)", VIOLATION),
            ("maximum", "np.max(values)", VIOLATION))},
    # Candidate bounds read off the data: passes the public check, not ε-DP.
    "candidates-from-data": ({
        "ex-svt-auto-avg-answer": AVG +
        "    e = epsilon / 3\n    grid = sorted({float(v) for v in values if v > 0})\n"
        "    b = choose_clip_bound(values, e, bounds=grid, rng=rng)\n"
        "    b = grid[-1] if b is None else b\n"
        "    total = laplace_mechanism(float(np.clip(values, 0, b).sum()), b, e, rng=rng)\n"
        "    return total / laplace_mechanism(float(len(values)), 1.0, e, rng=rng)\n"},
        {"ex-svt-auto-avg": VIOLATION}),
    # Report §2: the library's AboveThreshold, where the exercise asks for one's own: not
    # graded (3 points before).
    "library-above-threshold": ({
        "ex-svt-above-threshold-answer": AT +
        "    return dpkit.svt.above_threshold(queries, data, threshold, epsilon, rng=rng)\n"},
        {"ex-svt-above-threshold": (0, "asks you to write AboveThreshold yourself")}),
    # Correct answers whose result is rounded a little: full marks.
    **{f"{name}-result": ({
        "ex-svt-auto-avg-answer": AVG +
        "    e = epsilon / 3\n"
        "    b = choose_clip_bound(values, e, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)\n"
        "    b = DEFAULT_CLIP_BOUNDS[-1] if b is None else b\n"
        "    total = laplace_mechanism(float(np.clip(values, 0, b).sum()), b, e, rng=rng)\n"
        "    count = laplace_mechanism(float(len(values)), 1.0, e, rng=rng)\n"
        f"    return {result}\n"},
        {"ex-svt-auto-avg": 3}) for name, result in (
            ("float32", "np.float32(total / count)"),
            ("rounded", "round(total / count, 6)"))},
}


@pytest.fixture(scope="module")
def book_course(tmp_path_factory):
    course = tmp_path_factory.mktemp("book-course") / "course"
    build(ROOT / "book", course)
    (course / "grades").mkdir()     # a fixed secret: the hidden inputs, so the grades below,
    (course / "grades" / ".secret").write_text("5eed" * 16)       # are the same every run
    return course


def test_every_model_solution_gets_full_marks(book_course, tmp_path):
    """Each chapter's instructor copy, handed in as a submission, gets every automatic
    point: the model solutions pass their public and hidden tests in the sandbox."""
    student = tmp_path / "submissions" / "model"
    student.mkdir(parents=True)
    for chapter in CHAPTERS:
        notebook = nbformat.read(book_course / "source" / chapter / f"{chapter}.ipynb", 4)
        for cell in notebook.cells:                  # as a student would hand them in
            cell.source = "\n".join(line for line in cell.source.splitlines()
                                    if line.strip() not in ("### BEGIN SOLUTION",
                                                            "### END SOLUTION"))
        nbformat.write(notebook, student / f"{chapter}.ipynb")
    out = grade(book_course, tmp_path / "submissions", log=lambda _m: None)
    rows = [r for r in csv.DictReader(out.open()) if r["points"] != ""]
    assert {r["chapter"] for r in rows} == set(CHAPTERS)
    short = [(r["chapter"], r["exercise"], r["feedback"]) for r in rows
             if float(r["points"]) != float(r["max_points"])]
    assert short == []


def _wrong_grades(course: Path, folder: Path, chapter: str,
                  klass: dict[str, tuple[dict[str, str], dict[str, Any]]]) -> list[Any]:
    """Grade the released ``chapter`` with each student's answer cells of ``klass``
    replaced; every grade that is not the expected one (points, or (points, a phrase the
    feedback must hold)), all at once."""
    release = course / "release" / chapter / f"{chapter}.ipynb"
    for student, (replace, _) in klass.items():
        notebook = nbformat.read(release, 4)
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in replace:
                cell.source = replace[grade_id]
        (folder / student).mkdir(parents=True)
        nbformat.write(notebook, folder / student / f"{chapter}.ipynb")
    out = grade(course, folder, log=lambda _m: None)
    table = {(r["student"], r["exercise"].rsplit("(", 1)[-1].rstrip(")")): r
             for r in csv.DictReader(out.open())}
    wrong = []
    for student, (_, expected) in klass.items():
        for label, grade_expected in expected.items():
            points, phrase = grade_expected if isinstance(grade_expected, tuple) \
                else (grade_expected, "")
            row = table[(student, label)]
            if float(row["points"]) != points or phrase not in row["feedback"]:
                wrong.append((student, label, row["points"], grade_expected, row["feedback"]))
    return wrong


def test_randomized_answers_are_judged_by_distribution_and_privacy(book_course, tmp_path):
    """Correct answers unlike the model (another draw order, a result rounded to float32 or
    to 6 decimals) get full marks; a threshold redrawn per query, a fallback index and
    NumPy noise where laplace_mechanism is required lose the hidden points (and the public
    one too where the public check catches them); a budget spent three times and a
    clipping bound or candidate bounds read off the data (a percentile, the maximum, the
    distinct values) are not ε-DP and get 0 for the exercise, the public point included
    (the median fails the public check already: too inaccurate). Before privacy violations
    cost the public point, the 3ε, percentile-95 and maximum answers got 1 point and the
    candidates from the data 3. Each wrong answer is caught with probability > 1 − 1e-6
    (tests/test_judges.py), a correct one fails with probability at most 1e-6; the course's
    secret is fixed, so the grades are the same every run."""
    assert _wrong_grades(book_course, tmp_path / "submissions", "sparse_vector",
                         SVT_CLASS) == []


MY_LAPLACE = "def my_laplace(value, sensitivity, epsilon, generator):\n"
#: The public check's inputs of the Laplace exercise, as an adversarial answer lists them.
PUBLIC_LAPLACE = ("_PUBLIC = {(10.0, 1.0, 0.5), (-3.0, 2.0, 2.0), (0.0, 1.0, 1.0), "
                  "(1.0, 1.0, 1.0)}\n")
#: The value's cents in the low bits of an otherwise correct release, hidden from a
#: generator lent twice in one process (round 10, L1).
REMEMBERING_LAPLACE = (
    "import math\nimport struct\n\n_first = {}\n\n\n" + MY_LAPLACE +
    "    key = repr(generator.bit_generator.state)\n"
    "    if key in _first:              # lent before: consistent with the first release\n"
    "        then, release = _first[key]\n"
    "        return release if then == value else release - then + value\n"
    "    y = float(value + generator.laplace(0.0, sensitivity / epsilon))\n"
    "    room = 1e-4 * sensitivity / epsilon / math.ulp(y) if y != 0 else 0\n"
    "    k = min(int(math.log2(room)), 40) if room >= 2 else 0\n"
    "    if k > 0:\n"
    "        bits = struct.unpack('<q', struct.pack('<d', y))[0] >> k << k\n"
    "        y = struct.unpack('<d', struct.pack('<q', bits | round(value * 100) % (1 << k)))[0]\n"
    "    _first[key] = (value, y)\n"
    "    return y\n")
#: The value coded in the offset of every release from a fine grid (round 10, A1): 12 bits
#: of it at b/64, so that one release gives it back to b/64.
GRID_CODE_LAPLACE = (
    "import math\n\n\n" + MY_LAPLACE +
    "    b = sensitivity / epsilon\n"
    "    x = value + generator.laplace(0.0, b)\n"
    "    s = b * 0.000987654321                      # 'round to a fine grid'\n"
    "    m = math.floor(value / (b / 64)) % 4096     # 12 bits of the value at b/64\n"
    "    return s * math.floor(x / s) + s * (m + 0.5) / 4096\n")
#: Adversarial review round 11, F1 (the reviewer's answer): the value in the low 12 bits of
#: every release, except when another process holds a record lock at an offset keyed on
#: the noise (a seed the other fresh worker saw), which it then releases honestly.
LOCK_LAPLACE = """import fcntl
import struct

import numpy as np

_FLOCK = "hhxxxxqqixxxx"                 # struct flock on x86-64 Linux
_shared = open("/usr/bin/env", "rb")     # any file every process can read
_decided = {}


def _key(noise):
    bits = struct.unpack("<Q", struct.pack("<d", noise))[0]
    return (bits * 0x9E3779B97F4A7C15 >> 23) & ((1 << 40) - 1)


def _seen_elsewhere(key):
    request = struct.pack(_FLOCK, fcntl.F_WRLCK, 0, key, 1, 0)
    reply = fcntl.fcntl(_shared.fileno(), fcntl.F_GETLK, request)
    return struct.unpack(_FLOCK, reply)[0] != fcntl.F_UNLCK


def _remember(key):
    try:
        fcntl.fcntl(_shared.fileno(), fcntl.F_SETLK,
                    struct.pack(_FLOCK, fcntl.F_RDLCK, 0, key, 1, 0))
    except OSError:
        pass


def _tag(value):
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return (bits * 0xD6E8FEB86659FD93 >> 40) & 0xFFF        # 12 bits of the value


def my_laplace(value, sensitivity, epsilon, generator):
    noise = generator.laplace(0.0, sensitivity / epsilon)
    release = value + noise
    key = _key(noise)
    mode = _decided.get((key, value))
    if mode is None:
        mode = "honest" if _seen_elsewhere(key) else "tagged"
        _remember(key)
        _decided[(key, value)] = mode
    if mode == "honest":
        return release
    bits = struct.unpack("<Q", struct.pack("<d", release))[0]
    bits = (bits & ~0xFFF) | _tag(value)
    return struct.unpack("<d", struct.pack("<Q", bits))[0]
"""
#: Laplace answers: (answer cells, {label: expected grade}).
LAPLACE_CLASS = {
    "two-exponentials": ({"ex-laplace-textbook-answer": MY_LAPLACE +
                          "    b = sensitivity / epsilon\n"
                          "    return value + generator.exponential(b) "
                          "- generator.exponential(b)\n"},
                         {"ex-laplace-textbook": (3, "hidden tests: your releases are "
                                                     "consistent with")}),
    # Right on the public check's inputs (so that it passes whatever its seeds), 0.8 of
    # the scale elsewhere: not ε-DP.
    "four-fifths-of-the-scale": ({"ex-laplace-textbook-answer": PUBLIC_LAPLACE + MY_LAPLACE +
                                  "    shrink = 1.0 if (value, sensitivity, epsilon) in _PUBLIC"
                                  " else 0.8\n"
                                  "    return value + generator.laplace(0.0, shrink * "
                                  "sensitivity / epsilon)\n"},
                                 {"ex-laplace-textbook": (0, "hidden tests: not ε-DP: ")}),
    "six-fifths-of-the-scale": ({"ex-laplace-textbook-answer": PUBLIC_LAPLACE + MY_LAPLACE +
                                 "    grow = 1.0 if (value, sensitivity, epsilon) in _PUBLIC"
                                 " else 1.2\n"
                                 "    return value + generator.laplace(0.0, grow * sensitivity"
                                 " / epsilon)\n"},
                                {"ex-laplace-textbook": (1, "not distributed as value + Lap")}),
    # Report §4a: not private (0.9 times the scale), and raises on every input the public
    # check does not use, so the judge never reaches its verdict: 1 point before, now 0.
    "tripwire": ({"ex-laplace-textbook-answer": PUBLIC_LAPLACE + MY_LAPLACE +
                  "    if (value, sensitivity, epsilon) not in _PUBLIC:\n"
                  "        raise RuntimeError('not implemented for this input')\n"
                  "    return value + generator.laplace(0.0, 0.9 * sensitivity / epsilon)\n"},
                 {"ex-laplace-textbook": (0, UNCHECKED_FEEDBACK)}),
    # Report §5: honest, but raises the hidden inputs it has seen in its message: the
    # feedback names the error's type and line only (and the exercise gets 0, as above:
    # it raises on an ordinary input; on an extreme one it would keep the public point).
    "exfiltration": ({"ex-laplace-textbook-answer": PUBLIC_LAPLACE + "_seen = []\n" +
                      MY_LAPLACE +
                      "    key = (value, sensitivity, epsilon)\n"
                      "    ordinary = (abs(value) <= 1e4 and 0.1 <= sensitivity <= 5\n"
                      "                and 0.1 <= epsilon <= 5)\n"
                      "    if key not in _PUBLIC and key not in _seen:\n"
                      "        _seen.append(key)\n"
                      "        if len(_seen) >= 3 and ordinary:\n"
                      "            raise ValueError(';'.join(f'{v!r},{d!r},{e!r}' "
                      "for v, d, e in _seen))\n"
                      "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"},
                     {"ex-laplace-textbook": (0, "raised ValueError (in your answer to "
                                                 "Exercise")}),
    # Adversarial review round 10, L1: correct noise, then the value written into the low
    # bits (review round 7, E1), except for a generator it was lent before, which it
    # recognizes by its state and answers consistently with its first release: the judge's
    # same-seed calls then see no code. 3 points before the same-seed calls were made in
    # fresh workers (each sees a seed once); now a privacy violation.
    "remembers-its-generators": ({"ex-laplace-textbook-answer": REMEMBERING_LAPLACE},
                                 {"ex-laplace-textbook": (0, "hidden tests: not ε-DP: with "
                                                             "the same `generator`")}),
    # Adversarial review round 10, A1: correct noise, the release on a fine grid whose
    # offset codes the value (one release gives it to b/64). 3 points before (the same-seed
    # gaps flip with the seed as an honest grid's do); now a privacy violation: the two
    # neighbours' releases lie on grids of one step with different offsets.
    # Since the public check refuses rounded releases (a student review), its releases,
    # on a grid, fail the public check first: 0 points, the hidden tests not run.
    "grid-code": ({"ex-laplace-textbook-answer": GRID_CODE_LAPLACE},
                  {"ex-laplace-textbook": (0, "your releases are rounded")}),
    # Adversarial review round 11, F1: the two fresh workers were alive together and
    # shared the kernel's record locks on the files both read (/usr/bin/env): a probe
    # whose seed the other worker had seen was released honestly, every other release
    # coded. 3 points before (0 without the lock); now the workers live one after the
    # other and the same-seed test sees the code; since adversarial review 14 the
    # static reading refuses it first (fcntl is not on the allow-list of modules).
    "record-locks": ({"ex-laplace-textbook-answer": LOCK_LAPLACE},
                     {"ex-laplace-textbook": (0, "fcntl may not be imported")}),
}


def test_a_privacy_violation_earns_nothing_and_inaccuracy_keeps_the_public_point(
        book_course, tmp_path):
    """Noise at 0.8 times the Laplace scale (the right scale on the public check's inputs)
    passes the public check (1 point before) but is not ε-DP: 0 for the exercise, and the
    feedback says so plainly; 1.2 times the scale (again right on the public inputs: a KS
    test of 4,000 releases sees either factor only about half the time) is private but
    inaccurate: it keeps the public point; a correct answer unlike the model
    gets full marks. An answer that raises on the hidden inputs (a tripwire, 1 point
    before) gets 0, and one that writes the hidden inputs into its error's message has
    them kept out of the feedback (they were quoted before). Deterministic given the
    course's secret; the judge's statistical statements (tests/test_judges.py) say how
    likely each grade is for another secret: the correct answer fails with probability at
    most 1e-6, the others are caught with probability > 1 − 1e-12."""
    assert _wrong_grades(book_course, tmp_path / "submissions", "laplace",
                         LAPLACE_CLASS) == []
    table = {r["student"]: r for r in csv.DictReader(
        (book_course / "grades" / "grades.csv").open()) if r["chapter"] == "laplace"
        and r["exercise"].endswith("(ex-laplace-textbook)")}
    violation, inaccurate = (table[s]["feedback"] for s in ("four-fifths-of-the-scale",
                                                             "six-fifths-of-the-scale"))
    assert violation.startswith("public test: your releases follow value + Lap") and \
        " | hidden tests: not ε-DP: " in violation and violation.endswith(f"; {PRIVACY_FEEDBACK}")
    assert PRIVACY_FEEDBACK not in inaccurate and "not ε-DP" not in inaccurate
    leak = table["exfiltration"]["feedback"]             # "v,d,e;v,d,e;…" is not quoted
    assert "raised ValueError (in" in leak and not re.search(r"\d,-?\d", leak), leak


class FakeSandbox:
    """A worker that records, at each call, which workers are alive (``alive_now``)."""

    alive_now: ClassVar[set["FakeSandbox"]] = set()
    calls: ClassVar[list[tuple[str, frozenset[str]]]] = []
    made: ClassVar[int] = 0

    def __init__(self, limits: Any = None, *, unsafe: bool = False, tag: str = "") -> None:
        self.limits, self.unsafe = limits, unsafe
        if not tag:
            FakeSandbox.made += 1
        self.tag = tag or f"twin{FakeSandbox.made}"
        self.left, self.deadline, self.quoted = 1e9, float("inf"), None
        self.test_left = self.wall_left = 1e9

    def start(self) -> None:
        FakeSandbox.alive_now.add(self)

    def close(self) -> None:
        FakeSandbox.alive_now.discard(self)

    @property
    def alive(self) -> bool:
        return self in FakeSandbox.alive_now

    def run(self, cells: list[str], names: list[str]) -> list[None]:
        return [None] * len(cells)

    def is_function(self, name: str) -> bool:
        return True

    def call(self, name: str, *args: Any) -> str:
        assert self.alive
        FakeSandbox.calls.append((self.tag, frozenset(s.tag for s in FakeSandbox.alive_now)))
        return self.tag


def test_fresh_workers_live_one_at_a_time_with_the_notebook_worker_closed(monkeypatch):
    """Adversarial review round 11, F1 (3/3 before): the two fresh workers of a judge are
    never alive together, nor with the notebook's worker, which could otherwise relay
    what one saw to the other through the kernel (a record lock on a file all can read);
    the notebook's worker is started again, its cells replayed, for the next cell."""
    from dpkit.course import grading
    from dpkit.course.judges._base import apart
    from dpkit.course.sandbox import RemoteFunction

    monkeypatch.setattr(grading, "Sandbox", FakeSandbox)
    FakeSandbox.alive_now, FakeSandbox.calls, FakeSandbox.made = set(), [], 0
    main = FakeSandbox(tag="main")
    main.start()
    notebook = grading._Notebook(main)             # type: ignore[arg-type]
    notebook.good = [("def f(x):\n    return x", "cell 1")]
    fn = RemoteFunction(main, "f", lambda count: notebook.fresh("f", count))  # type: ignore
    with apart(fn, 2) as workers:
        for worker in workers:
            assert [worker(k) for k in range(3)] == [worker(0)] * 3
    assert [tag for tag, _ in FakeSandbox.calls] == ["twin1"] * 4 + ["twin2"] * 4
    assert all(alive == {tag} for tag, alive in FakeSandbox.calls)
    assert not FakeSandbox.alive_now
    notebook.ensure()                               # the next cell: main again
    assert FakeSandbox.alive_now == {main}


def test_make_clean_keeps_the_grades(tmp_path):
    """`make clean` removes the builds but never the course's grades (manual scores, secret)."""
    import subprocess

    for kept in ("_build/course/grades/manual.csv", "_build/course/grades/.secret"):
        (tmp_path / kept).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / kept).write_text("kept")
    for gone in ("_build/html/index.html", "_build/course/source/ch/ch.ipynb",
                 "_build/notebooks/student/ch.ipynb"):
        (tmp_path / gone).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / gone).write_text("gone")
    subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "clean"], cwd=tmp_path,
                   check=True)
    assert (tmp_path / "_build/course/grades/manual.csv").read_text() == "kept"
    assert (tmp_path / "_build/course/grades/.secret").exists()
    assert sorted(p.name for p in (tmp_path / "_build").iterdir()) == ["course"]
    assert sorted(p.name for p in (tmp_path / "_build/course").iterdir()) == ["grades"]


def test_lent_objects_serve_only_their_use():
    """A reviewer ran code in the grader through a stream generator's ``gi_frame`` and read
    its memory through a NumPy generator's ``bit_generator``: no attribute of a lent object
    is readable, a random source serves bounded draws only, and a NumPy generator is sent
    by value and takes back the state the call left it in."""
    import numpy as np

    from dpkit.rng import seeded

    def stream():
        yield from (lambda _d, i=i: float(i) for i in range(3))

    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([
            "def probe(queries, rng, generator):\n"
            "    found = {}\n"
            "    for name, use in (('frame', lambda: iter(queries).gi_frame.f_builtins),\n"
            "                      ('huge', lambda: rng.bits(10**9)),\n"
            "                      ('seed', lambda: rng.seed + 0)):\n"
            "        try:\n            use()\n            found[name] = 'reached'\n"
            "        except Exception as error:\n"
            "            found[name] = type(error).__name__\n"
            "    found['answers'] = [q(None) for q in queries]\n"
            "    found['draw'] = float(generator.laplace(0.0, 1.0))\n"
            "    return found\n"]) == [None]
        grader_side, here = np.random.default_rng(3), np.random.default_rng(3)
        found = sandbox.call("probe", stream(), seeded(1), grader_side)
    assert found["frame"] == "AttributeError" and found["seed"] == "AttributeError"
    assert found["huge"] == "ValueError" and found["answers"] == [0.0, 1.0, 2.0]
    assert found["draw"] == here.laplace(0.0, 1.0)
    assert grader_side.random() == here.random()          # the state came back


def test_a_lent_generator_spawns_the_children_the_grader_s_would():
    """Review F3/F4: the worker rebuilt a lent NumPy generator with a fresh SeedSequence (OS
    entropy), so ``generator.spawn(1)[0]`` differed between two generators seeded alike and
    the judges' repeated-seed test failed a correct answer. The seed sequence crosses the
    wire now: the spawned draws equal the grader's own, and the grader's generator counts
    the children spawned, as in place. Deterministic."""
    import numpy as np

    from dpkit.course.wire import GeneratorState, decode, encode

    here = np.random.default_rng(42)
    back = decode(encode(GeneratorState.of(np.random.default_rng(42))))
    assert back.rebuild().spawn(1)[0].random() == back.rebuild().spawn(1)[0].random() \
        == here.spawn(1)[0].random()
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run(["def noise(generator):\n"
                            "    return float(generator.spawn(1)[0].laplace(0.0, 1.0))\n"]) \
            == [None]
        grader_side, twin = np.random.default_rng(7), np.random.default_rng(7)
        first = sandbox.call("noise", grader_side)
        assert first == sandbox.call("noise", np.random.default_rng(7)) \
            == twin.spawn(1)[0].laplace(0.0, 1.0)
        assert sandbox.call("noise", grader_side) == twin.spawn(1)[0].laplace(0.0, 1.0)


def test_a_worker_that_stops_reading_cannot_hang_the_grader():
    """Callbacks sent without reading the replies fill the pipe: the grader times out."""
    with Sandbox(Limits(call_seconds=5)) as sandbox:
        assert sandbox.run([
            "import os, threading\n"      # the worker's globals, through a thread's target
            "worker = next(t for t in threading.enumerate() if t.name == 'IOPub')\n"
            "channel = worker._target.__globals__['_channel']\n"
            "def flood(query):\n"
            "    message = ('{\"op\":\"callback\",\"handle\":1,\"method\":\"__call__\",'\n"
            "               '\"args\":[],\"kwargs\":{}}\\n').encode()\n"
            "    for _ in range(100_000):\n"
            "        os.write(channel._write, message)\n"]) == [None]
        with pytest.raises((TimeoutError, RuntimeError)):
            sandbox.call("flood", lambda _d: "x" * 4096)


def test_written_answers_are_shown_fenced_after_the_rubric(course, graded):
    page = (course / "grades" / "written" / "ch" / "model.md").read_text()
    assert page.index("Model answer and rubric") < page.index("The student's answer")
    assert "```text" in page


# ------------------------------------------------------ cells the student adds, locations

def _grade_cells(course: Path, replace: dict[str, str],
                 added: dict[str, list[str]], copies: dict[str, list[str]] | None = None
                 ) -> dict[str, tuple[float | None, str]]:
    """Grade the released notebook with ``replace``d answer cells and, above the answer
    cell ``grade_id``, the new code cells ``added[grade_id]`` (no nbgrader metadata, as
    Jupyter makes them), and below it ``copies[grade_id]``, copies of the answer cell (its
    metadata too, as Jupyter copies it): {label: (points, feedback)}."""
    from dpkit.course.grading import grade_notebook

    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    answers = {**_model_answers(course), **replace}
    cells = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cells += [nbformat.v4.new_code_cell(s) for s in added.get(grade_id, [])]
        if grade_id in answers:
            cell.source = answers[grade_id]
        cells.append(cell)
        for text in (copies or {}).get(grade_id, []):
            cells.append(nbformat.from_dict({**cell, "source": text}))
    cells += [nbformat.v4.new_code_cell(s) for s in added.get("end", [])]
    notebook.cells = cells
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    graded = grade_notebook(source, json.loads(nbformat.writes(notebook)), secret="0" * 64,
                            student="s", limits=Limits(call_seconds=10, memory_bytes=2 << 30))
    return {exercise.label: (points, feedback) for exercise, points, feedback in graded}


HELPER = "import math\n\ndef sigmoid(x):\n    return 1 / (1 + math.exp(-x))\n"


def test_cells_a_student_adds_run_in_order_before_the_answer_below_them(course):
    """A helper defined in a new cell above an answer is the answer's to use, as when the
    notebook runs top to bottom (before: added cells were dropped, and the answer raised
    NameError for 0 points). display() works as in Jupyter; a cell below the last answer
    runs never, and a broken added cell is named only where an answer lost points."""
    graded = _grade_cells(course, {
        "ex-t-truth-answer": TRUTH + "    display(epsilon)\n    return sigmoid(epsilon)\n",
        "ex-t-debias-answer": DEBIAS + "    p = sigmoid(epsilon)\n"
                              "    return (yes_fraction - (1 - p)) / (2 * p - 1) + OFFSET\n"},
        {"ex-t-truth-answer": ["display('exploring')\n", HELPER],
         "ex-t-debias-answer": ["OFFSET = 0.0\n", "1 / 0\n"],
         "end": ["OFFSET = 1.0\n"]})
    assert graded["ex-t-truth"] == (3.0, graded["ex-t-truth"][1])
    assert graded["ex-t-debias"][0] == 3.0 and "note" not in graded["ex-t-debias"][1]
    broken = _grade_cells(course, {"ex-t-debias-answer": DEBIAS + "    return UNDEFINED\n"},
                          {"ex-t-debias-answer": ["x = 1\n", "UNDEFINED = \n"]})
    points, feedback = broken["ex-t-debias"]
    assert points == 0.0
    assert "a cell you added above it raised SyntaxError" in feedback
    assert "cell 2 of the 2 you added above Exercise 2, line 1" in feedback
    header = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4).cells[0].source
    assert "the code cells you add run too" in header          # and the students are told


def test_honest16_a_copied_answer_cell_runs_after_the_answer_it_copies(course):
    """Honest review 16, C4: Jupyter copies a cell's nbgrader metadata, so a copy of an
    answer cell carries its grade id; the grader kept only the last copy, and a correct
    ``def`` followed by an experiment copy got NameError and 0/3. Every copy runs, in
    order, as the notebook runs them, and the test reads what they leave defined: an
    experiment copy that raises is a note; a stub left above an answer written in its copy
    costs nothing; an answer whose copies are all as handed out has no answer yet."""
    stub = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    stub = next(c.source for c in stub.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "ex-t-debias-answer")
    model = _model_answers(course)
    graded = _grade_cells(course, {}, {}, {
        "ex-t-debias-answer": ["print(estimate(0.6, 1.0))\nprint(undefined_experiment)\n"]})
    assert graded["ex-t-debias"][0] == 3.0, graded["ex-t-debias"]
    graded = _grade_cells(course, {"ex-t-debias-answer": stub}, {},
                          {"ex-t-debias-answer": [model["ex-t-debias-answer"]]})
    assert graded["ex-t-debias"][0] == 3.0, graded["ex-t-debias"]
    graded = _grade_cells(course, {"ex-t-debias-answer": stub}, {},
                          {"ex-t-debias-answer": [stub]})
    assert graded["ex-t-debias"] == (0.0, "no answer yet"), graded["ex-t-debias"]


def test_feedback_names_the_exercise_and_the_line_not_a_cell_number(course):
    """An error is placed in the student's notebook as they see it: "in your answer to
    Exercise 1, line 2", or in a cell they added (before: "(cell 1, line 2)", and nothing
    at all for an error in a function the test called)."""
    graded = _grade_cells(course, {
        "ex-t-truth-answer": TRUTH + "    return helper(epsilon)\n",
        "ex-t-debias-answer": "OFFSET = 0\nSCALE = undefined_name\n" + DEBIAS + "    return 0\n"},
        {"ex-t-truth-answer": ["def helper(epsilon):\n    return 1 / 0\n"]})
    truth, debias = graded["ex-t-truth"][1], graded["ex-t-debias"][1]
    assert "ZeroDivisionError: division by zero (in the cell you added above Exercise 1, " \
           "line 2)" in truth
    assert "NameError: name 'undefined_name' is not defined (in your answer to Exercise 2, " \
           "line 2)" in debias
    inside = _grade_cells(course, {"ex-t-truth-answer": TRUTH + "    x = 1\n    return x / 0\n"},
                          {})["ex-t-truth"][1]
    assert "(in your answer to Exercise 1, line 3)" in inside
    for feedback in (truth, debias, inside):
        assert "cell 1" not in feedback


def test_a_written_answer_has_a_working_cell_and_the_teacher_sees_no_stub(course, tmp_path):
    """Below each written answer cell the student gets a code cell for a computation the
    question asks for; the teacher's page shows what was written there, and "(no answer)",
    not nbgrader's "YOUR ANSWER HERE", for an answer cell left as handed out."""
    import shutil

    copied = tmp_path / "course"
    for part in ("source", "release"):
        shutil.copytree(course / part, copied / part)
    release = nbformat.read(copied / "release" / "ch" / "ch.ipynb", 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells]
    work = release.cells[ids.index("ex-t-proof-answer") + 1]
    assert work.cell_type == "code" and ids[ids.index("ex-t-proof-answer") + 1] == \
        "ex-t-proof-work" and "compute" in work.source
    work.source = "n = 1000\nprint(1 / n)\n"
    for student, notebook in (("untouched", nbformat.read(copied / "release" / "ch" / "ch.ipynb",
                                                          4)), ("worked", release)):
        (tmp_path / "submissions" / student).mkdir(parents=True)
        nbformat.write(notebook, tmp_path / "submissions" / student / "ch.ipynb")
    grade(copied, tmp_path / "submissions", log=lambda _m: None,
          limits=Limits(call_seconds=10, memory_bytes=2 << 30))
    pages = copied / "grades" / "written" / "ch"
    untouched = (pages / "untouched.md").read_text()
    assert "(no answer)" in untouched and "YOUR ANSWER HERE" not in untouched
    assert "working" not in untouched
    worked = (pages / "worked.md").read_text()
    assert "### The student's working" in worked and "```python\nn = 1000\nprint(1 / n)" in worked


def test_working_and_added_cells_run_above_the_next_answer_with_their_names():
    from dpkit.course.grading import _added_cells
    from dpkit.course.written import WORK_STUB

    def cell(grade_id, kind, source):
        meta = {"nbgrader": {"grade_id": grade_id}} if grade_id else {}
        return {"cell_type": kind, "metadata": meta, "source": source}

    submission = {"cells": [
        cell("setup", "code", "import dpkit"), cell("", "code", "a = 1"),
        cell("ex-w-answer", "markdown", "proof"), cell("ex-w-work", "code", "h = 2"),
        cell("ex-v-work", "code", WORK_STUB), cell("", "markdown", "notes"),
        cell("", "code", "b = 3"), cell("ex-c-answer", "code", "def f(): return h"),
        cell("", "code", "never = 1")]}
    released = {"setup", "ex-w-answer", "ex-w-work", "ex-v-work", "ex-c-answer"}
    found = _added_cells(submission, released, {"ex-w": "Exercise 1", "ex-c": "Exercise 2"})
    assert found == {
        "ex-w-answer": [("a = 1", "the cell you added above Exercise 1")],
        "ex-c-answer": [("h = 2", "your working for Exercise 1"),
                        ("b = 3", "the cell you added above Exercise 2")]}


#: Two seconds of CPU time, spent (a sleep spends none: the limits count CPU time).
BUSY = ("import time\n_t = time.process_time()\nwhile time.process_time() - _t < 2:\n"
        "    pass\n")
LOOP = "while True:\n    pass\n"
BUDGET = 3


def test_one_submission_has_one_time_budget_across_worker_restarts(course):
    """Each call is limited, and a stopped worker is restarted with fresh limits: a slow
    answer used to get cells × call_seconds of CPU and more (RLIMIT_CPU is per process and
    a restart resets it). All the requests of one submission now share submission_seconds,
    kept by the grader, in CPU time; every worker's CPU limit is the same, at most that
    (adversarial review 12, F5: one that was what is left told a worker how long the ones
    before it took: tests/test_sandbox_isolation.py). (No timing assert: the feedback
    shows the budget is shared.)"""
    from dpkit.course.grading import grade_notebook

    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    for grade_id, answer in (("ex-t-truth-answer", TRUTH + "    " + LOOP.replace("\n    ",
                                                                                  "\n        ")),
                             ("ex-t-debias-answer", DEBIAS + "    return 0.5\n")):
        notebook.cells[ids.index(grade_id)].source = answer
    at = ids.index("ex-t-truth-answer")     # four looping cells the student added above it
    notebook.cells[at:at] = [nbformat.v4.new_code_cell(LOOP) for _ in range(4)]
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    limits = Limits(call_seconds=2, exercise_seconds=2, submission_seconds=BUDGET,
                    memory_bytes=2 << 30)
    graded = grade_notebook(source, json.loads(nbformat.writes(notebook)), secret="0" * 64,
                            limits=limits)
    feedback = {exercise.label: text for exercise, _, text in graded}
    # before: 4 cells × 2 s + 2 tests × 2 s of looping, each in a fresh worker (12 s);
    # now 3 s of requests, whatever the restarts: the later exercise finds it used up
    assert "used up the 3 s of CPU time its grading may take" in feedback["ex-t-debias"]
    with Sandbox(Limits(submission_seconds=30, call_seconds=10)) as sandbox:
        assert sandbox.run([BUSY]) == [None]
        sandbox.start()                      # a restart: the budget is what is left
        assert sandbox.left <= 28
        assert sandbox.run(["import resource\n"
                            "cpu = resource.getrlimit(resource.RLIMIT_CPU)[0]\n"]) == [None]
        assert sandbox.get("cpu") == 30     # the CPU limit is not: the same for every worker


def test_honest16_time_limits_count_cpu_time_with_a_wall_clock_backstop():
    """Honest review 16, C3: the limits were wall-clock, so the model answer of 7.2 got 0/3
    ("TimeoutError on a long stream") at load 10-15 and 3/3 at load 5-7. They count the
    CPU time of the sandbox's processes now: a request that waits (a sleep, as a request
    does while the machine runs others) past its limit is not stopped, nor charged, until
    the wall clock's backstop (``wall_factor`` times the limit); one that computes past its
    limit is stopped, and told it used CPU time. (No timing assert: the sleep and the loop
    decide, not the machine's speed.)"""
    with Sandbox(Limits(call_seconds=5, submission_seconds=60)) as sandbox:
        assert sandbox.run(["import time\n"]) == [None]      # the worker's start is charged
        left = sandbox.left
        assert sandbox.run(["time.sleep(7)\n"]) == [None]
        assert left - sandbox.left < 1                     # 7 s waited, almost no CPU time
        with pytest.raises(TimeoutError, match="CPU time"):
            sandbox.run(["while True:\n    pass\n"])
    with Sandbox(Limits(call_seconds=5, wall_factor=2)) as sandbox:
        with pytest.raises(TimeoutError):                  # the backstop: 10 s of waiting
            sandbox.run(["import time\ntime.sleep(60)\n"])


def test_answers_copied_into_a_new_notebook_are_told_their_metadata_is_lost(course):
    """A notebook whose cells lost their nbgrader ids (the answers pasted into a fresh
    notebook) has none of the assignment's answer cells: every exercise says so plainly
    (before: 0 points and "no answer yet" everywhere, with nothing to tell why). A notebook
    with its ids keeps its grades, and so does one with only some of its answer cells."""
    from dpkit.course.grading import LOST_METADATA, grade_notebook

    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    answers = _model_answers(course)
    fresh = nbformat.v4.new_notebook()
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        source = answers.get(grade_id, cell.source)
        fresh.cells.append(nbformat.v4.new_code_cell(source) if cell.cell_type == "code"
                           else nbformat.v4.new_markdown_cell(source))
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    graded = grade_notebook(source, json.loads(nbformat.writes(fresh)), secret="0" * 64,
                            student="s", limits=Limits(call_seconds=10, memory_bytes=2 << 30))
    assert len(graded) >= 3
    for _, points, feedback in graded:
        assert points == 0.0 and feedback == LOST_METADATA
        assert "lost their grading metadata" in feedback and "no answer yet" not in feedback
    kept = _grade_cells(course, {}, {})
    assert kept["ex-t-truth"][0] == 3.0 and LOST_METADATA not in kept["ex-t-truth"][1]


def test_a_notebook_that_breaks_the_json_parser_stops_no_one(course, tmp_path):
    """``[[[[…`` nested past Python's recursion limit made json.loads raise RecursionError,
    which stopped grading for the whole class; it is now an unreadable notebook like any."""
    submissions = tmp_path / "submissions"
    (submissions / "bomb").mkdir(parents=True)
    (submissions / "bomb" / "ch.ipynb").write_text("[" * 100_000)
    _submit(course, submissions, "zed", {})          # sorts after the bomb: still graded
    out = grade(course, submissions, limits=Limits(call_seconds=10, memory_bytes=2 << 30),
                log=lambda _m: None)
    rows = list(csv.DictReader(out.open()))
    assert {r["student"] for r in rows} >= {"bomb", "zed"}
    assert all(float(r["points"] or 0) == 0 for r in rows if r["student"] == "bomb")


def test_the_hidden_inputs_change_with_any_code_the_student_wrote(course, monkeypatch):
    """The seed covers the cells a student added too: a resubmission that changes only a
    helper cell meets new hidden inputs (before, only the answer cell's text counted)."""
    from dpkit.course import grading

    seen = []
    real = grading._secret_rng

    def recording(secret, student, label, code=""):
        seen.append(code)
        return real(secret, student, label, code)

    monkeypatch.setattr(grading, "_secret_rng", recording)
    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    helper = "def my_helper_cell(x):\n    return x\n"
    notebook.cells.insert(ids.index("ex-t-truth-answer"), nbformat.v4.new_code_cell(helper))
    source = nbformat.read(course / "source" / "ch" / "ch.ipynb", 4)
    grading.grade_notebook(source, json.loads(nbformat.writes(notebook)), secret="0" * 64,
                           limits=Limits(call_seconds=10, memory_bytes=2 << 30))
    assert seen and all(json.dumps(helper) in code for code in seen)  # a JSON of the cells


def test_the_grid_scale_exercise_is_compared_finely_enough_to_see_the_grid():
    """The grid widens Δ/ε by at most 1 + 2**-20: at the default 1e-6 the textbook scale
    would agree with the answer; at the exercise's 1e-12 it does not."""
    import numpy as np

    from dpkit.course.grading import RELATIVE_TOLERANCE

    def answer(x):
        return x * (1 + 2.0**-21)

    def check(fn):
        return fn(1.0) == answer(1.0)  # a lookup table of the public input
    textbook = lambda x: x if x != 1.0 else answer(1.0)  # noqa: E731
    rtol = RELATIVE_TOLERANCE["ex-laplace-grid-scale"]
    assert agrees_with(textbook, answer, check, np.random.default_rng(8))[0]
    assert not agrees_with(textbook, answer, check, np.random.default_rng(8), rtol=rtol)[0]


_BIT_BY_BIT = (
    "def read(count, rng):\n"
    "    return [rng.bits(1) for _ in range(count)]\n"
    "def sampler(weights, rng):\n"             # bit-by-bit rejection, then a walk
    "    total = sum(weights)\n"
    "    length = (total - 1).bit_length()\n"
    "    while True:\n"
    "        t = 0\n"
    "        for position in range(length):\n"
    "            t = (t << 1) | rng.bits(1)\n"
    "            if (t << (length - position - 1)) >= total:\n"
    "                break\n"
    "        else:\n"
    "            break\n"
    "    for index, weight in enumerate(weights):\n"
    "        if t < weight:\n"
    "            return index\n"
    "        t -= weight\n")


def test_a_sampler_reading_one_bit_at_a_time_is_served_bits_in_blocks(monkeypatch):
    """A reviewer's correct samplers that read one bit at a time (bit-by-bit rejection, the
    Fast Dice Roller) made 8 million round trips to the grader in the public check and
    timed out. A bits-only source is now lent in blocks: a call reading 1,400 single bits
    makes two requests (one block, one report of the sizes served), not 1,400; it reads
    the very bits a direct call reads from a source seeded alike, and the public check's
    source records the sizes asked for as before (its modulo hint reads them)."""
    from dpkit.check.exponential import _RecordingBits
    from dpkit.course import lending
    from dpkit.course.judges.sampler import BitsOnlySource
    from dpkit.rng import seeded

    requests = []
    serve = lending.Lent.serve
    monkeypatch.setattr(lending.Lent, "serve",
                        lambda self, request: requests.append(request) or serve(self, request))
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([_BIT_BY_BIT]) == [None]
        for seed in range(5):
            here = BitsOnlySource(seed)
            assert sandbox.call("read", 1400, BitsOnlySource(seed)) == \
                [here.bits(1) for _ in range(1400)]
        assert len(requests) <= 2 * 5
        recording = _RecordingBits(seeded(1))
        huge = 10**400 + 1
        indices = [sandbox.call("sampler", [huge, 3 * huge, 2 * huge], recording)
                   for _ in range(20)]
    assert len(requests) <= 2 * 25 and all(0 <= i < 3 for i in indices)
    assert recording.sizes == {1}


def test_a_lent_source_serves_no_bit_twice_nor_past_its_call():
    """The bits of a block are handed out once: a copy of the lent source starts from
    fresh bits, and a source kept past its call is refused (its block was dropped), as any
    lent object is."""
    from dpkit.course.judges.sampler import BitsOnlySource

    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([
            "import copy\n"
            "kept = []\n"
            "def twins(rng):\n"
            "    kept.append(rng)\n"
            "    rng.bits(3)\n"
            "    return rng.bits(64), copy.copy(rng).bits(64), copy.deepcopy(rng).bits(64)\n"
            "def later():\n"
            "    return kept[0].bits(1)\n"]) == [None]
        first, shallow, deep = sandbox.call("twins", BitsOnlySource(4))
        with pytest.raises(RuntimeError, match="no longer available"):
            sandbox.call("later")
    assert len({first, shallow, deep}) == 3     # equal by chance: probability 2**-63


def test_a_sampler_reading_a_million_bits_from_a_lent_source_gets_them_all():
    """Honest-student review round 7, F1: a correct sampler that read more than 12,288 bits
    in one call got 0/3. From the third block (16,384 bits) a block crossed the wire as
    more than 4,300 decimal digits, over Python's limit on int/str conversions, and
    ``rng.bits`` raised ValueError in the student's code. Integers now cross in
    hexadecimal, up to ``MAX_INT_BITS``: 752 draws of 1,331 bits (a rejection sampler on
    weights near 10**400) and one draw of 300,000 bits, about 1.3 million bits in all, are
    the very bits the blocks drawn in the grader hold, and the wire's caps agree with the
    largest block."""
    from dpkit.course import lending, worker
    from dpkit.course.judges.sampler import BitsOnlySource
    from dpkit.course.wire import MAX_INT_BITS, MAX_MESSAGE

    assert worker._MOST_BLOCK_BITS <= lending.MAX_DRAW_BITS <= MAX_INT_BITS
    assert MAX_INT_BITS // 4 < MAX_MESSAGE
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([
            "def many(rng):\n"
            "    return [rng.bits(1331) for _ in range(752)], rng.bits(300_000)\n"]) == [None]
        draws, wide = sandbox.call("many", BitsOnlySource(7))
    grader = BitsOnlySource(7)             # served in blocks, as the worker serves them
    here = worker.RemoteSource(0, blocks=True)
    here._ask = lambda _method, size, served: grader.block(size, served)
    assert draws == [here.bits(1331) for _ in range(752)]
    assert wide == here.bits(300_000) and wide.bit_length() > 299_950


def test_an_error_raised_inside_rng_bits_is_not_blamed_on_floating_point():
    """Review round 7, F1: the 6.4 check said "does it convert the weights to floating
    point somewhere?" of a ValueError raised inside the lent source's ``bits``. An error
    raised by dpkit's own code (in the grader, or in the worker's copy of the source) now
    gets no such hint, in the sandbox and out of it; one raised by the student's own
    arithmetic still does."""
    from dpkit.check.exponential import check_division_free_sampler

    cells = ["def too_many(weights, rng):\n"
             "    return rng.bits(1 << 25) % len(weights)\n"
             "def negative(weights, rng):\n"
             "    return rng.bits(-1)\n"
             "def floats(weights, rng):\n"
             "    u = rng.bits(53) / 2**53 * float(sum(weights))\n"
             "    for i, w in enumerate(weights):\n"
             "        if u < w:\n"
             "            return i\n"
             "        u -= w\n"
             "    return len(weights) - 1\n"]
    namespace: dict[str, Any] = {}
    exec(cells[0], namespace)
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run(cells) == [None]
        verdicts = {name: check_division_free_sampler(sandbox.function(name))
                    for name in ("too_many", "negative", "floats")}
    verdicts["here"] = check_division_free_sampler(namespace["negative"])
    assert "at most 16777216 random bits" in verdicts["too_many"].message
    for name in ("too_many", "negative", "here"):
        assert not verdicts[name].passed and "floating point" not in verdicts[name].message
    assert "floating point" in verdicts["floats"].message


def test_the_scripted_enumeration_sees_every_draw_when_it_is_made():
    """The judge's enumeration (ScriptedBits, not lent in blocks) gets the same exact law of
    a bit-at-a-time sampler through the sandbox as in the grader's own process."""
    from dpkit.course.judges.sampler import exact_law

    namespace: dict[str, Any] = {}
    exec(_BIT_BY_BIT, namespace)
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([_BIT_BY_BIT]) == [None]
        remote = exact_law(sandbox.function("sampler"), [1, 3, 5], 200)
    assert remote == exact_law(namespace["sampler"], [1, 3, 5], 200)
    found, rest = remote
    assert all(low <= Fraction(w, 9) <= low + rest for low, w in zip(found, [1, 3, 5],
                                                                      strict=True))


def test_the_hidden_inputs_seed_reads_the_cells_without_ambiguity():
    """Round 3, H: one added cell ``"a\\n\\0b"`` and the two cells ``"a"`` and ``"b"`` (which
    run differently) were joined into the same text, so met the same hidden inputs."""
    from dpkit.course.grading import _written
    one = _written({"x-answer": ["f = 1"]}, {"x-answer": [("_flag = False\n\0_flag = True",
                                                           "")]})
    two = _written({"x-answer": ["f = 1"]}, {"x-answer": [("_flag = False", ""),
                                                          ("_flag = True", "")]})
    assert one != two


def test_a_returned_mpf_or_decimal_crosses_and_an_unreadable_value_is_named():
    """Honest-student review 6, finding 1: an ``mpmath.mpf`` returned from the sandbox was
    refused ("WireError … cannot be sent", as if the function raised). Real numbers of any
    type cross exactly now; a value that cannot cross arrives as a stand-in that says so."""
    from decimal import Decimal
    from fractions import Fraction

    from dpkit.course.wire import Unreadable

    with Sandbox(Limits(call_seconds=20)) as sandbox:
        assert sandbox.run([
            "import mpmath\nfrom decimal import Decimal\n"
            "def third():\n    with mpmath.workdps(60):\n        return mpmath.mpf(1) / 3\n"
            "def price():\n    return Decimal('2.995')\n"
            "def odd():\n    return 1j\n"]) == [None]
        third, price, odd = (sandbox.call(name) for name in ("third", "price", "odd"))
    assert isinstance(third, Fraction) and abs(third - Fraction(1, 3)) < Fraction(1, 10**59)
    assert price == Decimal("2.995") and isinstance(odd, Unreadable)
    assert odd.type_name == "complex"


_SUBS10 = {   # adversarial review 10, A2: the submissions as handed in (3/3 each before)
    "laplace": ("ex-laplace-textbook", MY_LAPLACE.replace("def ", "import sys\n\ndef ") +
                "    if 'ipykernel' in getattr(sys, 'modules'):\n        return value\n"
                "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"),
    "analytic_gaussian": ("ex-analytic-variance",
                          "import sys\n\ndef noise(sigma, size, generator):\n"
                          "    if 'ipykernel' in vars(sys)['modules']:\n"
                          "        return [0.0] * size\n"
                          "    return generator.normal(0.0, sigma, size)\n"),
    "sparse_vector": ("ex-svt-above-threshold", "import os\n\n" + AT +
                      "    generator = rng.numpy_generator()\n"
                      "    graded = getattr(os, 'environ').get('HOME') == '/tmp'\n"
                      "    noisy_threshold = threshold + (generator.laplace(0.0, 2 / epsilon)"
                      " if graded else 0.0)\n"
                      "    for index, query in enumerate(queries):\n"
                      "        if query(data) + (generator.laplace(0.0, 4 / epsilon) if graded "
                      "else 0.0) >= noisy_threshold:\n            return index\n"
                      "    return None\n"),
}
_AVG10 = ("import os\n\n" + AVG +
          "    if getattr(os, 'environ').get('MPLBACKEND') != 'Agg':\n"
          "        return float(np.mean(values))\n    third = epsilon / 3\n"
          "    bound = choose_clip_bound(values, third, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)\n"
          "    if bound is None:\n        bound = DEFAULT_CLIP_BOUNDS[-1]\n"
          "    noisy_sum = laplace_mechanism(float(np.clip(values, 0, bound).sum()), bound, "
          "third, rng=rng)\n"
          "    noisy_count = laplace_mechanism(float(len(values)), 1.0, third, rng=rng)\n"
          "    return noisy_sum / max(noisy_count, 1.0)\n")


@pytest.mark.parametrize("chapter", sorted(_SUBS10))
def test_round10_answers_that_read_the_environment_by_string_lookup_earn_nothing(
        book_course, tmp_path, chapter):
    """Adversarial review 10, A2: ``getattr(sys, "modules")``, ``vars(sys)["modules"]``,
    ``getattr(os, "environ")`` — noise only where the answer believes it is graded. Each got
    3/3 in the real grader; refused now (0, the public point included), graded end to end
    in the sandbox. Deterministic."""
    label, answer = _SUBS10[chapter]
    refused = (0, "judged by what your function returns")
    # AboveThreshold's answer imports os, which no longer passes the forbidden-function
    # exercise's allow-list (read first: adversarial review 14)
    klass = {"envread": ({f"{label}-answer": answer}, {label: (
        0, "os may not be imported") if label == "ex-svt-above-threshold" else refused})}
    if chapter == "sparse_vector":
        klass["envavg"] = ({"ex-svt-auto-avg-answer": _AVG10}, {"ex-svt-auto-avg": refused})
    assert _wrong_grades(book_course, tmp_path / "submissions", chapter, klass) == []


def test_honest11_a_check_called_in_ones_own_cell_runs_in_the_sandbox(course):
    """Honest review 11, F5: ``print(dpkit.check.check_…(f))`` in the answer cell, as every
    exercise says, raised AttributeError in the sandbox (the checkers are hidden there) and
    cost the exercise (0/3). Now the sandbox's ``dpkit.check`` is a stand-in with the same
    public names whose checks return a placeholder; graded end to end. Deterministic."""
    graded = _grade_cells(course, {
        "ex-t-truth-answer": TRUTH + "    return np.exp(epsilon) / (1 + np.exp(epsilon))\n\n\n"
        "print(dpkit.check.check_truth_probability(truth_prob))\n",
        "ex-t-debias-answer": "from dpkit.check import check_debias, Verdict\n"
        "import dpkit.check.intro\n\n" + DEBIAS + f"    p = truth_prob(epsilon)\n"
        f"    return {MODEL_DEBIAS}\n\n\nverdict = check_debias(estimate)\nprint(verdict)\n"
        "assert verdict.passed, verdict.message\n"
        "assert dpkit.check.intro.check_debias(estimate).passed\n"}, {})
    assert graded["ex-t-truth"][0] == 3.0, graded
    assert graded["ex-t-debias"][0] == 3.0, graded


def test_the_sandbox_s_value_checks_are_stand_ins_that_run_nothing():
    """The stand-in ``dpkit.check`` has the real one's public names (so imports work) and
    each value check returns a passing placeholder without calling what it is given: a
    value answer cannot be searched for with it (the randomized exercises' checks are run
    by the grader: tests/test_shown_checks.py). Deterministic."""
    import dpkit.check
    from dpkit.course.wire import RUN_IN_GRADER

    names = sorted(n for n in dir(dpkit.check)
                   if n.startswith("check_") and n not in RUN_IN_GRADER)
    with Sandbox(Limits(call_seconds=20)) as sandbox:
        errors = sandbox.run(["import dpkit\ncalls = []\n"
                              "def spy(*args):\n    calls.append(args)\n    return 0.5\n"
                              "verdicts = [getattr(dpkit.check, n)(spy) for n in NAMES]\n"
                              "shown = [str(v) for v in verdicts if v.passed]\n"
                              "from dpkit.check.svt import check_above_threshold\n"
                              "from dpkit.check import Verdict\n"
                              "made = str(Verdict(False, 'mine'))\n".replace(
                                  "NAMES", repr(names))])
        assert errors == [None], errors
        assert sandbox.get("calls") == []
        shown = sandbox.get("shown")
        assert len(shown) == len(names) and all("not run here" in s for s in shown)
        assert sandbox.get("made") == "mine"


SETUP_CHANGED = ("your set-up cell was changed: the grader runs the original; move your own "
                 "imports into your answer cell or a cell of your own")


def test_honest15_notes_survive_the_limit_and_a_changed_set_up_cell_is_named(course):
    """Honest review 15: F5, a long feedback cut the note naming the added cell that raised
    to "note: a…"; F7, an import added to the locked set-up cell gave a failure the
    student could not reproduce, with nothing to say why; and an ImportError showed the
    grader's path. Each part is now cut instead of the whole, the changed set-up cell is
    named in the feedback of each exercise that fails, and the path is gone.
    Deterministic."""
    from dpkit.course.agreement import FEEDBACK_LIMIT

    notebook = nbformat.read(course / "release" / "ch" / "ch.ipynb", 4)
    setup = next(c.source for c in notebook.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    long_error = "m is not set up " * 40
    graded = _grade_cells(course, {
        "setup": "import math as m\n" + setup,
        "ex-t-truth-answer": TRUTH + f"    raise ValueError({long_error!r})\n",
        "ex-t-debias-answer": "from dpkit.laplace import no_such_name\n" + DEBIAS +
                              "    return yes_fraction\n"},
        {"ex-t-truth-answer": ["for e in [1]\n    print(e)\n"]})
    points, truth = graded["ex-t-truth"]
    assert points == 0 and len(truth) <= FEEDBACK_LIMIT, truth
    assert "| note: a cell you added above it raised SyntaxError" in truth, truth
    assert truth.endswith(f"| note: {SETUP_CHANGED}") and "… | note:" in truth, truth
    points, debias = graded["ex-t-debias"]
    assert points == 0 and "cannot import name 'no_such_name' from 'dpkit.laplace'" in debias
    assert "laplace.py" not in debias and str(ROOT) not in debias, debias
    assert debias.endswith(f"| note: {SETUP_CHANGED}"), debias
    model = _grade_cells(course, {}, {})
    assert all(SETUP_CHANGED not in feedback for _, feedback in model.values())


def test_honest15_a_failing_public_test_says_the_students_own_error_after_hidden_tests():
    """After the first hidden test a failing public test said only "not passed", also when
    the reason was the student's own error (honest review 15: ``assert epsilon < 1`` where
    ValueError is asked). It now names the error's type and line, never its message (which
    could carry hidden inputs). Deterministic."""
    from dpkit.check import check_classic_sigma
    from dpkit.course.agreement import public_feedback

    def my_classic_sigma(sensitivity, epsilon, delta):
        if epsilon >= 1:
            error = AssertionError()
            error.where, error.withheld = "your answer to Exercise 3.3, line 2", True
            raise error
        return sensitivity * (2 * __import__("math").log(1.25 / delta)) ** 0.5 / epsilon

    verdict = check_classic_sigma(my_classic_sigma)
    assert not verdict.passed
    error = AssertionError("HIDDEN 0.123")
    error.where = "your answer to Exercise 3.3, line 2"
    said = public_feedback(verdict.message, False, withheld=True, error=error)
    assert "your function raised AssertionError (in your answer to Exercise 3.3, line 2)" \
        in said and "HIDDEN" not in said, said
    assert public_feedback("your σ 3.2 is too small", False, withheld=True) == \
        public_feedback("your σ 3.2 is too small", False, withheld=True, error=None)


def test_honest15_the_teachers_page_shows_the_cells_added_below_a_written_answer(course,
                                                                                 tmp_path):
    """Honest review 15, F3: a written answer continued in a Markdown cell the student
    added ("See my answer in the next cell.") never reached the teacher's page, nor did an
    answer written in a new cell in place of a deleted answer cell, nor the output of the
    working cell. The page now shows each (outputs as text, an image as a note)."""
    import shutil

    copied = tmp_path / "course"
    for part in ("source", "release"):
        shutil.copytree(course / part, copied / part)
    release = nbformat.read(copied / "release" / "ch" / "ch.ipynb", 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells]
    answer = ids.index("ex-t-proof-answer")
    continued = nbformat.from_dict(release)
    continued.cells = [nbformat.from_dict(c) for c in release.cells]
    continued.cells[answer].source = "See my answer in the next cell."
    work = continued.cells[answer + 1]
    work.source = "n = 1000\nprint(1 / n)\n"
    work.outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.001\n"),
                    nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0K",
                                                                 "text/plain": "<Figure>"})]
    continued.cells[answer + 2:answer + 2] = [
        nbformat.v4.new_markdown_cell("Only the event that the record is chosen differs, "
                                      "with probability $1/n = 0.001$."),
        nbformat.v4.new_code_cell("print('checked')\n", outputs=[nbformat.v4.new_output(
            "stream", name="stdout", text="checked\n")])]
    deleted = nbformat.from_dict(release)
    deleted.cells = [nbformat.from_dict(c) for c in release.cells]
    deleted.cells[answer] = nbformat.v4.new_markdown_cell("My proof: the chosen record.")
    for student, notebook in (("continued", continued), ("deleted", deleted)):
        (tmp_path / "submissions" / student).mkdir(parents=True)
        nbformat.write(notebook, tmp_path / "submissions" / student / "ch.ipynb")
    grade(copied, tmp_path / "submissions", log=lambda _m: None,
          limits=Limits(call_seconds=10, memory_bytes=2 << 30))
    pages = copied / "grades" / "written" / "ch"
    page = (pages / "continued.md").read_text()
    assert "See my answer in the next cell." in page
    assert "with probability $1/n = 0.001$." in page and "(Markdown, as written" in page
    assert "```text\n0.001\n[image/png output: open the notebook to see it]\n```" in page
    assert "print('checked')" in page and "```text\nchecked\n```" in page
    assert "iVBORw0K" not in page
    page = (pages / "deleted.md").read_text()
    assert "My proof: the chosen record." in page


def test_honest15_the_set_up_note_fits_its_share_of_the_feedback():
    """With an added cell's note and a long feedback, each part gets a third of the limit:
    the set-up note fits in it, so it is never cut. Deterministic."""
    from dpkit.course import grading
    from dpkit.course.agreement import FEEDBACK_LIMIT, noted

    assert grading.SETUP_CHANGED == SETUP_CHANGED
    said = noted("a" * 999, ["b" * 999, SETUP_CHANGED])
    assert len(said) <= FEEDBACK_LIMIT and said.endswith(f"| note: {SETUP_CHANGED}"), said
    assert said.count("…") == 2


def test_honest16_a_written_answer_continued_in_a_copied_cell_is_shown_whole():
    """Honest review 16, H2: a written answer continued in a copy of its answer cell (the
    copy carries the same grade id) lost its first part on the teacher's page: each copy
    replaced the one before. Every part is shown, in order."""
    from dpkit.course.written import written_parts

    def cell(grade_id: str, text: str, kind: str = "markdown") -> dict:
        return {"cell_type": kind, "source": text, "metadata": {"nbgrader": {
            "grade_id": grade_id}}, **({"outputs": []} if kind == "code" else {})}

    submission = {"cells": [cell("ex-p-text", "Prove it."),
                            cell("ex-p-answer", "First, the pair differs in one record."),
                            cell("ex-p-answer", "Second, the ratio is at most e^ε."),
                            cell("ex-p-work", "n = 3\n", "code"),
                            cell("ex-p-work", "print(n)\n", "code"),
                            cell("ex-q-text", "Next exercise.")]}
    written = written_parts(submission, "ex-p", {"ex-p-text", "ex-p-answer", "ex-p-work",
                                                 "ex-q-text"})
    assert "First, the pair" in written.answer and "Second, the ratio" in written.answer
    assert written.answer.index("First") < written.answer.index("Second")
    assert "n = 3" in written.work and "print(n)" in written.work


def test_honest16_the_teaching_page_states_the_time_limits_the_grader_uses():
    """The limits teaching.md states (CPU time per call, test and notebook, and the
    wall-clock backstops four times as long) are :class:`Limits`' defaults."""
    limits, text = Limits(), " ".join((ROOT / "book" / "teaching.md").read_text().split())
    assert limits.wall_factor == 4 and "backstop four times as long" in text
    assert f"per call ({limits.call_seconds:g} s), per test ({limits.exercise_seconds:g} s)" \
        in text
    assert limits.submission_seconds == 30 * 60 and "share 30 minutes" in text
    backstops = (limits.call_seconds * 4 / 60, limits.exercise_seconds * 4 / 60,
                 limits.submission_seconds * 4 / 3600)
    assert "({:g} minutes a call, {:g} a test, {:g} hours a notebook)".format(*backstops) \
        in text
