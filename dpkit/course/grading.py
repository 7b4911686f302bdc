"""Grade submitted notebooks: student code in a sandbox, tests in this clean process.

``python -m dpkit.course grade COURSE SUBMISSIONS`` grades ``SUBMISSIONS/<student>/
<chapter>.ipynb`` (or nbgrader's collected ``COURSE/submitted/<student>/<chapter>/
<chapter>.ipynb``, with ``SUBMISSIONS`` = ``COURSE/submitted``) against the instructor's
notebooks in ``COURSE/source`` (written by ``python -m dpkit.course assignments``) and
keeps everything in ``COURSE/grades/``:

``grades.csv``
    One row per student, chapter and exercise: points, max_points, feedback. Rebuilt on
    every run from the two files below, so nothing is lost when some students resubmit.
``autograded.json``
    The automatic results of every submission graded so far, with each notebook's SHA-256:
    a later run grades only new or changed notebooks (``--regrade`` grades all again).
``manual.csv``
    One row per written answer, for the teacher to fill in (``points``, ``comment``);
    ``written/<chapter>/<student>.md`` shows each answer beside the model answer and rubric.

How a notebook is graded (:func:`grade_notebook`): the chapter's set-up cell (taken from the
instructor's copy, not the student's), then the student's answer cells, each preceded by the
code cells the student added above it (helpers, experiments), run in a
:class:`~dpkit.course.sandbox.Sandbox`, as when the notebook runs top to bottom. The tests
never run there: for each exercise the *public test* calls the exercise's ``dpkit.check``
checker, here, with a stand-in that forwards each call to the student's function in the
sandbox; the *hidden test* judges
the same function on inputs drawn at grading time from the course's secret
(``grades/.secret``): a randomized answer by its output distribution and its privacy
(:mod:`dpkit.course.judges`), a deterministic one by agreement with the model solution,
which runs here. A student's code can therefore change neither a checker nor a test,
cannot read the hidden inputs in advance, and sees only its own arguments.

Points (nbgrader's split of a code exercise): :data:`PUBLIC_POINTS` for the public test,
:data:`HIDDEN_POINTS` for the hidden one, which runs only once the public one passes. Grades
are earned: a hidden test that finds a **privacy violation** (a judgement with ``privacy``
set: too little noise, a budget spent more than once, a parameter taken from the data)
gives the whole exercise 0, the public point included, and the feedback says so
(:data:`PRIVACY_FEEDBACK`). So does a hidden judge that could not reach its privacy verdict
because the student's function **raised, timed out, crashed its sandbox or returned a
result of the wrong form (None, a string, nan) on an ordinary hidden input** (a judgement
with ``raised`` set; the judges draw their inputs from the domain the exercise states):
otherwise an answer that passes the public check and then raises on every input it has
not seen (a "tripwire") would keep the public point whatever its privacy
(:data:`UNCHECKED_FEEDBACK`). On the *extreme* hidden inputs a judge adds to catch answers
exact only out of range (the Laplace judge's huge values and far-from-1 Δ and ε,
AboveThreshold's audit at a small ε) such an error is a plain failure that keeps the
public point, reported after the ordinary inputs' privacy tests: a defensive guard
there is honest, and a tripwire must fail on ordinary inputs too. A failure of accuracy
or form keeps the public point, and so does an error in a deterministic exercise's hidden
cases (no privacy verdict is at stake).
An exercise that asks the student to write what a library function does (AboveThreshold,
an interval's half-width) lists that function in :data:`dpkit.course.exercises.FORBIDDEN`:
an answer whose code reaches it (directly, through a helper or an alias, or by a dynamic
lookup) is not graded and gets 0, found by reading the source here, where the student's
code cannot undo the check (:func:`~dpkit.course.exercises.forbidden_use`).

What the feedback of a hidden test quotes of the student's code: the type of an error it
raised and the line of the student's cell that raised it, never the error's message, and a
value it returned only if it is a number (:func:`~dpkit.course.judges._base.error_text`,
:func:`~dpkit.course.judges._base.returned_text`): on a hidden test a message or a string
could carry the hidden inputs seen so far into the feedback. Public tests, whose inputs the
student knows, quote messages in full.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import hashlib
import io
import json
import math
import secrets
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

import dpkit.check
from dpkit.check._common import WITHHELD
from dpkit.course.agreement import agrees_with, described, noted, public_feedback, short
from dpkit.course.exercises import (
    ABSOLUTE_TOLERANCE,
    RELATIVE_TOLERANCE,
    environment_use,
    forbidden_use,
)
from dpkit.course.judges import JUDGES, Judgement
from dpkit.course.judges._base import GRADER_MESSAGES, error_text
from dpkit.course.magics import drop_magics
from dpkit.course.sandbox import Limits, RemoteFunction, Sandbox, isolation
from dpkit.course.wire import WireError
from dpkit.course.written import (
    grade_id_of,
    notebook_cells,
    released_stub,
    same_code,
    work_text,
    written_page,
    written_parts,
)
from dpkit.i18n import in_language, language

__all__ = ["ABSOLUTE_TOLERANCE", "GRADER_VERSION", "LOST_METADATA", "PRIVACY_FEEDBACK",
           "RELATIVE_TOLERANCE", "UNCHECKED_FEEDBACK", "UNREAD_FEEDBACK", "Result",
           "SetupError", "agrees_with", "grade", "grade_notebook", "static_refusal"]

GRADER_VERSION = "29"          # a change of the tests regrades every notebook
PUBLIC_POINTS, HIDDEN_POINTS = 1, 2
#: Appended to the hidden test's message when it found a privacy violation.
PRIVACY_FEEDBACK = "a privacy violation earns no points for this exercise"
#: Appended to the hidden test's message when the student's function raised (or timed out)
#: on a hidden input of a randomized exercise, so that its privacy could not be judged.
UNCHECKED_FEEDBACK = ("your function failed on a valid input the hidden tests use, so its "
                      "privacy could not be checked; no points for this exercise")
#: The feedback of every exercise when the submission holds none of the assignment's answer
#: cells (their nbgrader ``grade_id``) but does hold cells: answers copied into a new notebook.
#: The feedback of an exercise whose answer the static reading could not read (it raised):
#: that exercise only is refused, and the log names the exception (:func:`static_refusal`).
UNREAD_FEEDBACK = ("the grader could not read your answer to {title}; your teacher will "
                   "look at it")
LOST_METADATA = ("your notebook's answer cells lost their grading metadata (copied into a new "
                 "notebook?); submit the notebook you were given")


class SetupError(RuntimeError):
    """An assignment's own set-up cell fails in the sandbox: grading cannot go on."""


@dataclass
class Result:
    """The grade of one exercise of one submission."""

    student: str
    chapter: str
    exercise: str
    points: float | str
    max_points: float
    feedback: str


@dataclass(frozen=True)
class _Exercise:
    label: str                     # the exercise's label in the book, e.g. "ex-laplace-noise"
    title: str                     # as the student's notebook shows it, e.g. "Exercise 3.2"
    name: str                      # its title and label, as the grade file shows it
    text: str
    model: str                     # the model solution (code) or answer and rubric (text)
    written: bool
    points: float
    check: ast.Call | None         # the public check, for a code exercise
    stub: str = ""                 # the answer cell as handed out, for a code exercise


def _answers(submission: Any) -> dict[str, list[str]]:
    """The student's cells by grade id, text only (a malformed cell counts as empty): every
    cell that carries the id, in the notebook's order. Jupyter copies a cell's nbgrader
    metadata with it, so a copied answer cell carries its answer's id (honest review 16,
    C4: keeping only the last copy replaced a correct answer with an experiment)."""
    found: dict[str, list[str]] = {}
    for grade_id, _, source, _ in notebook_cells(submission):
        if grade_id:
            found.setdefault(grade_id, []).append(source)
    return found


def _run_answer(notebook: _Notebook, copies: list[str], exercise: _Exercise
                ) -> tuple[str, BaseException | None, list[BaseException]]:
    """Run an answer's cells (the answer cell and its copies, in order, each a cell of its
    own, as the notebook runs them): the answer's code as the static reading and the tests
    read it (the copies that are not left as handed out, joined in order), the answer's
    error (the first copy's error if every copy raised, else None: the test reads what
    the copies left defined) and the errors of the copies that raised when another ran
    (noted in the feedback like an added cell's). Copies left as handed out are not part of
    the answer's code, so an answer whose copies are all stubs has "no answer yet"."""
    title = exercise.title
    names = [f"your answer to {title}" if at == 0 else
             f"copy {at + 1} of your answer to {title}" for at in range(len(copies))]
    errors = [notebook.run(cell, name) if cell.strip() else None
              for cell, name in zip(copies, names, strict=True)]
    if len(copies) == 1:
        return copies[0], errors[0], []
    ran = [cell for cell in copies if cell.strip() and not same_code(cell, exercise.stub)]
    tried = [e for cell, e in zip(copies, errors, strict=True) if cell.strip()]
    error = tried[0] if tried and all(e is not None for e in tried) else None
    return "\n".join(ran) or copies[0], error, [e for e in errors
                                                 if e is not None and error is None]


def _added_cells(submission: Any, released: set[str],
                 titles: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """The student's own code cells, by the answer cell they stand above: for each answer's
    grade id, ``(source, name in feedback)`` of the cells between the answer cell before it
    and it, in order.

    Those are the cells the student added (a grade id that is not one of the released
    notebook's, ``released``: a new cell has none) and the working cells of written
    exercises (``<label>-work``; ``titles`` gives each label's "Exercise 3.2"). Cells below
    the last answer cell are not listed: no test follows them."""
    found: dict[str, list[tuple[str, str]]] = {}
    pending: list[tuple[str, str | None]] = []
    for grade_id, kind, source, _ in notebook_cells(submission):
        if grade_id in released and grade_id.endswith("-answer"):
            added = sum(name is None for _, name in pending)
            title, count = titles.get(grade_id[:-len("-answer")], "this exercise"), 0
            for cell, name in pending:
                if name is None:
                    count += 1
                    name = (f"the cell you added above {title}" if added == 1 else
                            f"cell {count} of the {added} you added above {title}")
                found.setdefault(grade_id, []).append((cell, name))
            pending = []
        elif grade_id in released and grade_id.endswith("-work") and work_text(source).strip():
            label = grade_id[:-len("-work")]
            pending.append((source, f"your working for {titles.get(label, label)}"))
        elif grade_id not in released and kind == "code" and source.strip():
            pending.append((source, None))
    return found


def _strip_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def _exercises(source: nbformat.NotebookNode) -> tuple[str, list[_Exercise]]:
    """The set-up cell and the exercises of an instructor's notebook."""
    cells = {grade_id_of(c): c for c in source.cells if grade_id_of(c)}
    setup = cells["setup"].source if "setup" in cells else ""
    found = []
    for grade_id, cell in cells.items():
        if not grade_id.endswith("-answer"):
            continue
        label = grade_id[:-len("-answer")]
        text = cells.get(f"{label}-text", {"source": label})["source"]
        title = text.split("**")[1] if text.count("**") >= 2 else label
        name = f"{title} ({label})"
        model = _strip_markers(cell.source)
        if cell.cell_type == "markdown":
            points = float(cell.metadata["nbgrader"].get("points", 0))
            found.append(_Exercise(label, title, name, text, model, True, points, None))
            continue
        public = cells.get(f"{label}-public")
        call = next((n for n in ast.walk(ast.parse(public.source)) if isinstance(n, ast.Call)
                     and ast.unparse(n.func).startswith("dpkit.check.")), None) \
            if public is not None else None
        found.append(_Exercise(label, title, name, text, model, False,
                               PUBLIC_POINTS + HIDDEN_POINTS, call, released_stub(cell.source)))
    return setup, found


def _quiet(sandbox: Sandbox) -> None:
    """From now on, the student's errors cross from ``sandbox`` with their type (a builtin
    one, or "a class of your own") and line only, no message but the grader's own
    (:data:`~dpkit.course.judges._base.GRADER_MESSAGES`): called before the first hidden
    test of a notebook, since the hidden inputs it lends could come back in the message of
    a later cell's error (adversarial review round 7, N11)."""
    sandbox.quoted = _grader_message


def _grader_message(message: str) -> bool:
    return GRADER_MESSAGES.fullmatch(message) is not None


def _cell_error(error: BaseException, sandbox: Sandbox) -> str:
    """A cell's error for the feedback: :func:`described`, and once messages are
    withheld (:func:`_quiet`) its type and line (:func:`error_text`) and why."""
    student = not isinstance(error, _STOPPED) or hasattr(error, "where")
    if sandbox.quoted is _grader_message and student:
        return short(f"{error_text(error)} ({WITHHELD})")
    return described(error)


class _Model:
    """The model solutions of one chapter, run here (instructor's code, trusted), in order:
    each exercise's functions as its cell left them."""

    def __init__(self, setup: str, exercises: list[_Exercise]) -> None:
        self._setup, self._exercises = setup, exercises
        self._after: dict[str, dict[str, Any]] | None = None

    def value(self, label: str, name: str) -> Any:
        """``name`` as the model's cell of exercise ``label`` left it."""
        if self._after is None:
            namespace: dict[str, Any] = {"__name__": "__model__"}
            self._after = {}
            # What the chapter prints stays here, and so does the language that a zh course's
            # set-up cell sets (dpkit.i18n.set_language): the grader's own is kept.
            with contextlib.redirect_stdout(io.StringIO()), in_language(language()):
                exec(compile(drop_magics(self._setup), "<model>", "exec"), namespace)
                for exercise in self._exercises:
                    if not exercise.written:
                        exec(compile(drop_magics(exercise.model), "<model>", "exec"),
                             namespace)
                        self._after[exercise.label] = dict(namespace)
        return self._after[label][name]


class _Recording(RemoteFunction):
    """The public check's stand-in for the student's function: it keeps the errors the
    function raised, so that a failure they explain says so once messages are withheld."""

    def __init__(self, sandbox: Sandbox, name: str) -> None:
        super().__init__(sandbox, name)
        self.raised: list[BaseException] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as error:
            self.raised.append(error)
            raise


def _answer_names(source: str) -> set[str]:
    try:
        tree = ast.parse(drop_magics(source))
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _arguments(call: ast.Call, sandbox: Sandbox, model: _Model,
               label: str) -> tuple[list[Any], dict[str, Any]]:
    """The checker's arguments. The first is the student's answer: a stand-in for their
    function, or their value. Any other name is the model's (the exercise's given data,
    which the student must not be able to choose)."""
    def value(node: ast.expr, answer: bool) -> Any:
        if not isinstance(node, ast.Name):
            return ast.literal_eval(node)
        if not answer:
            return model.value(label, node.id)
        if sandbox.is_function(node.id):
            return _Recording(sandbox, node.id)
        return sandbox.get(node.id)
    return ([value(a, i == 0) for i, a in enumerate(call.args)],
            {k.arg: value(k.value, False) for k in call.keywords if k.arg is not None})


def _written(answers: dict[str, list[str]], added: dict[str, list[tuple[str, str]]]) -> str:
    """The code a student wrote, for :func:`_secret_rng`: every answer cell and every cell
    they added, by grade id, encoded without ambiguity (JSON), so that two different sets
    of cells never give the same text (a text joined with a separator did: one cell
    ``"a\n\0b"`` and the two cells ``"a"`` and ``"b"``, which run differently, met the
    same hidden inputs)."""
    return json.dumps([[[key, cells[0] if len(cells) == 1 else cells]
                        for key, cells in sorted(answers.items())],
                       [[key, [cell for cell, _ in added[key]]] for key in sorted(added)]])


def _secret_rng(secret: str, student: str, label: str,
                code: str = "") -> np.random.Generator:
    """The hidden inputs' generator: from the course's secret, per student, exercise and
    the code the student wrote (every answer cell and every cell they added). Changed code
    anywhere, a helper cell included, meets new hidden inputs, so the inputs that feedback
    names cannot be collected over resubmissions into a lookup table."""
    digest = hashlib.sha256(code.encode()).digest()
    return np.random.default_rng([int(secret[:16], 16), zlib.crc32(student.encode()),
                                  zlib.crc32(label.encode()),
                                  int.from_bytes(digest[:16], "big")])


def grade_notebook(source: nbformat.NotebookNode, submission: Any, *, secret: str,
                   student: str = "", unsafe: bool = False, limits: Limits | None = None,
                   log: Callable[[str], None] = lambda _m: None) -> list[tuple[_Exercise,
                                                                                  float | None,
                                                                                  str]]:
    """Grade one submission: ``(exercise, points or None for a written answer, feedback)``.

    ``source`` is the instructor's notebook, ``submission`` the student's (any JSON: only
    the text of its answer cells, matched by their nbgrader ``grade_id``, and of the code
    cells the student added is used). A submission that has cells but none of the answer
    cells (their ids lost: answers copied into a new notebook) is not run: every exercise
    gets :data:`LOST_METADATA` and 0 points (a written one too: there is no answer for the
    teacher to read). Before each answer cell, the code cells the student added above it
    (below the previous answer cell) run, in order: a helper defined there is the answer's
    to use. An error in one does not stop grading; it is named in the
    feedback of the answer below it if that answer loses points.

    Raises
    ------
    SetupError
        If the assignment's set-up cell (the instructor's code) fails in the sandbox.
    """
    setup, exercises = _exercises(source)
    answers = _answers(submission)
    graded_ids = {f"{e.label}-answer" for e in exercises}
    if graded_ids and graded_ids.isdisjoint(answers) and \
            any(text.strip() for _, _, text, _ in notebook_cells(submission)):
        return [(exercise, 0.0, LOST_METADATA) for exercise in exercises]
    added = _added_cells(submission, {grade_id_of(c) for c in source.cells if grade_id_of(c)},
                         {e.label: e.title for e in exercises})
    written = _written(answers, added)
    changed = "setup" in answers and answers["setup"][0].strip() != setup.strip()
    model = _Model(setup, exercises)
    limits = limits or Limits()
    results = []
    with Sandbox(limits, unsafe=unsafe) as sandbox:
        notebook = _Notebook(sandbox)
        error = notebook.run(setup, "the set-up cell")
        if error is not None:                    # the instructor's code: not the student's
            raise SetupError(f"the assignment's set-up cell fails in the sandbox "
                               f"({sandbox.isolation}): {described(error)}; nothing was "
                               "graded. Check that the sandbox can see Python and dpkit.")
        notes: list[str] = []                    # errors of added cells since the last test
        earlier: list[tuple[str, str]] = []      # the student's code that ran so far
        for exercise in exercises:               # in order, each test right after its cell,
            for cell, name in added.get(f"{exercise.label}-answer", []):  # as when the
                error = notebook.run(cell, name)          # notebook runs top to bottom
                earlier.append((cell, name))
                if error is not None:
                    notes.append(_cell_error(error, sandbox))
            if exercise.written:
                results.append((exercise, None, "written answer: graded by hand"))
                continue
            answer, error, raised = _run_answer(
                notebook, answers.get(f"{exercise.label}-answer", [""]), exercise)
            notes += [_cell_error(e, sandbox) for e in raised]
            refused = static_refusal(exercise.label, exercise.title, answer, earlier, setup,
                                     log, graded=_graded_name(exercise))
            earlier.append((answer, f"your answer to {exercise.title}"))
            sandbox.test_left = limits.exercise_seconds    # CPU time, and its backstop:
            sandbox.deadline = time.monotonic() + limits.exercise_seconds * limits.wall_factor
            try:
                notebook.ensure()
                result = (exercise, 0.0, refused) if refused and answer.strip() and \
                    not same_code(answer, exercise.stub) else \
                    _grade_code(exercise, answer, error, notebook, model,
                                _secret_rng(secret, student, exercise.label, written))
            except _STOPPED as stopped:          # the worker could not even be restarted
                result = (exercise, 0.0, f"not graded: {described(stopped)}")
            finally:
                sandbox.deadline = sandbox.test_left = math.inf
            said = [*([f"a cell you added above it raised {'; '.join(notes)}"] if notes
                      else []), *([SETUP_CHANGED] if changed and result[2] != NO_ANSWER
                                  else [])]
            if said and result[1] < exercise.points:    # else the feedback is kept whole
                result = (*result[:2], noted(result[2], said))
            notes = []
            results.append(result)
    return results


_STOPPED = (TimeoutError, RuntimeError, WireError)
#: The feedback of an answer cell left empty or as handed out.
NO_ANSWER = "no answer yet"
#: The note of a failing exercise when the student's set-up cell is not the one handed out
#: (honest review 15, F7: an import added there raised NameError only when graded). At
#: most a third of the feedback, so :func:`~dpkit.course.agreement.noted` keeps it whole.
SETUP_CHANGED = ("your set-up cell was changed: the grader runs the original; move your own "
                 "imports into your answer cell or a cell of your own")


def _graded_name(exercise: _Exercise) -> str | None:
    """The name the public check reads (the answer's function or value), or None."""
    first = exercise.check.args[0] if exercise.check and exercise.check.args else None
    return first.id if isinstance(first, ast.Name) else None


def static_refusal(label: str, title: str, answer: str, earlier: list[tuple[str, str]],
                   setup: str | None, log: Callable[[str], None],
                   graded: str | None = None) -> str | None:
    """Why the answer to exercise ``label`` (``title``: "Exercise 2.4") may not be graded,
    read statically (:func:`~dpkit.course.exercises.forbidden_use`, then
    :func:`~dpkit.course.exercises.environment_use`, with ``answer``, ``earlier``,
    ``setup`` and ``graded`` as they take them), or None. If the reading itself raises (a bug of the
    grader's, honest review 12, finding 1), this exercise alone is refused with
    :data:`UNREAD_FEEDBACK` and ``log`` names the exception: the others are graded.

    Returns
    -------
    str or None
        The feedback of a refusal, or None.

    Raises
    ------
    Nothing (an exception of the reading is caught).

    Privacy guarantee: none; a refusal costs this exercise's points only (reference:
    honest review 12, finding 1)."""
    try:
        return forbidden_use(label, answer, earlier, setup, graded) or \
            environment_use(label, answer, earlier)
    except Exception as error:             # the grader's bug: this exercise only
        log(f"  {title}: the static reading raised {described(error)}")
        return UNREAD_FEEDBACK.format(title=title)


class _Notebook:
    """The worker's notebook state: the cells that ran without error, in order, replayed
    in a fresh worker when a cell or a test stopped the last one (a time-out, a crash)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.good: list[tuple[str, str]] = []    # (source, name) of each cell that ran

    def ensure(self) -> None:
        if not self.sandbox.alive:
            self.sandbox.start()
            if self.good and any(self.sandbox.run([c for c, _ in self.good],
                                                  [n for _, n in self.good])):
                self.good = []                   # a replay that fails: start from nothing
                self.sandbox.start()

    @contextlib.contextmanager
    def fresh(self, name: str, count: int) -> Iterator[Iterator[RemoteFunction]]:
        """The notebook's function ``name`` in ``count`` new workers that ran the cells that
        ran here, and nothing else: no memory of the calls made so far, nor of each other's
        (adversarial review round 10, L1: a judge lends one seed to two workers; see
        :func:`dpkit.course.judges._base.apart`). They run **one after the other**: the
        notebook's worker is closed first, and each new worker is started when the
        iteration reaches it, after the one before it is closed, so that no two of the
        student's processes are ever alive together (adversarial review round 11, F1: two
        live sandboxes share the kernel's record locks on the files both can read, which
        carried a seed from one to the other). The notebook's worker is started again, and
        its cells replayed, when the next cell needs it (:meth:`ensure`). The workers
        share what is left of the test's and the submission's time, which their lifetime
        is charged to. Each costs a worker's start and the cells' run, and so does the
        notebook worker's restart (the Laplace chapter: about 2 s each on a busy 2-core
        machine: about 6 s in all, 2 s more than when the notebook's worker stayed alive).

        Raises
        ------
        Exception
            From the iteration: the error of a cell that fails when run again, or a
            :class:`NameError` if ``name`` is no longer a function.
        """
        main, start = self.sandbox, time.monotonic()
        main.close()                # its cells may have started a thread: not left running
        twins: list[Sandbox] = []

        def spent() -> float:       # the CPU time the twins' requests took: each twin
            return main.left - twins[-1].left if twins else 0.0    # starts with what is left

        def workers() -> Iterator[RemoteFunction]:
            for _ in range(count):
                if twins:
                    twins[-1].close()   # the one before: gone before the next is started
                twin = Sandbox(main.limits, unsafe=main.unsafe)
                used = spent()
                twin.left, twin.test_left = main.left - used, main.test_left - used
                twin.wall_left = main.wall_left - (time.monotonic() - start)
                twin.quoted = main.quoted
                twins.append(twin)
                twin.start()
                twin.deadline = min(main.deadline, start + main.wall_left)   # one clock
                failed = [e for e in twin.run([c for c, _ in self.good],
                                              [n for _, n in self.good]) if e is not None]
                if failed:
                    raise failed[0]
                if not twin.is_function(name):
                    raise NameError(f"{name!r} is not a function your notebook defines")
                yield RemoteFunction(twin, name)

        try:
            yield workers()
        finally:
            for twin in twins:
                twin.close()
            used = spent()
            main.left, main.test_left = main.left - used, main.test_left - used
            main.wall_left -= time.monotonic() - start

    def run(self, cell: str, name: str) -> BaseException | None:
        """Run one cell, named ``name`` in the feedback ("your answer to Exercise 3.2")."""
        try:
            self.ensure()
            error = self.sandbox.run([cell], [name])[0]
        except _STOPPED as stopped:
            error = stopped
        if error is None:
            self.good.append((cell, name))
        return error


def _grade_code(exercise: _Exercise, answer: str, error: BaseException | None,
                notebook: _Notebook, model: _Model,
                rng: np.random.Generator) -> tuple[_Exercise, float, str]:
    sandbox = notebook.sandbox
    if not answer.strip() or isinstance(error, NotImplementedError) or \
            same_code(answer, exercise.stub):
        return exercise, 0.0, NO_ANSWER
    if "### BEGIN SOLUTION" in answer:        # the instructor's copy, handed in as one's own
        return exercise, 0.0, "this cell holds the instructor's solution markers: not graded"
    if error is not None:
        return exercise, 0.0, f"your answer cell raised {_cell_error(error, sandbox)}"
    if exercise.check is None:
        return exercise, 0.0, "this exercise has no test: ask your teacher"
    checker = getattr(dpkit.check, ast.unparse(exercise.check.func).rsplit(".", 1)[1])
    try:
        args, kwargs = _arguments(exercise.check, sandbox, model, exercise.label)
        verdict = checker(*args, **kwargs)
    except Exception as failure:            # a value the checker cannot take, a time-out
        return exercise, 0.0, f"public test: {described(failure)}"
    own = [e for e in getattr(args[0] if args else None, "raised", [])
           if hasattr(e, "where") and type(e).__name__ in verdict.message]
    public = public_feedback(verdict.message, verdict.passed,
                             withheld=sandbox.quoted is _grader_message,
                             error=own[0] if own else None)
    if not verdict.passed:
        return exercise, 0.0, public + " | hidden tests wait for the public one"
    if isinstance(args[0] if args else None, RemoteFunction):   # hidden inputs are lent:
        _quiet(sandbox)             # a value answer is sent none (honest review 16, M1)
    hidden = _hidden(exercise, args, notebook, model, rng)
    if hidden.privacy or hidden.raised:     # earned nothing: the public point goes too
        return exercise, 0.0, f"{public} | hidden tests: {short(hidden.message)}; " \
                              f"{PRIVACY_FEEDBACK if hidden.privacy else UNCHECKED_FEEDBACK}"
    points = PUBLIC_POINTS + (HIDDEN_POINTS if hidden.passed else 0)
    return exercise, float(points), f"{public} | hidden tests: {short(hidden.message)}"


def _hidden(exercise: _Exercise, args: list[Any], notebook: _Notebook, model: _Model,
            rng: np.random.Generator) -> Judgement:
    """The hidden test's judgement of the answer: its exercise's judge for a randomized
    answer (given a stand-in that can also call the function in fresh workers:
    :meth:`_Notebook.fresh`), agreement with the model solution for a deterministic one."""
    judge = JUDGES.get(exercise.label)
    answer = args[0] if args else None
    if not isinstance(answer, RemoteFunction):
        return Judgement(True, "an answer that is a value is judged by the public test alone")
    try:
        if judge is not None:
            name = answer.__name__
            return judge(RemoteFunction(notebook.sandbox, name, lambda count: notebook.fresh(
                name, count)), rng)
        reference = model.value(exercise.label, answer.__name__)
        checker = getattr(dpkit.check, ast.unparse(exercise.check.func).rsplit(".", 1)[1])
        return Judgement(*agrees_with(answer, reference,
                                      lambda f: checker(f, *args[1:]).passed, rng,
                                      atol=ABSOLUTE_TOLERANCE.get(exercise.label, 0.0),
                                      rtol=RELATIVE_TOLERANCE.get(exercise.label, 1e-6)))
    except Exception as failure:        # the student's code raised where no judge caught it
        theirs = hasattr(failure, "where") or isinstance(failure, _STOPPED)  # not a judge's bug
        return Judgement(False, f"your function raised {error_text(failure)}",
                         raised=judge is not None and theirs)


# ----------------------------------------------------------------------------- the course

def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _secret(grades: Path) -> str:
    path = grades / ".secret"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def _submissions(course: Path, submissions: Path) -> list[tuple[str, str, Path]]:
    chapters = sorted(p.name for p in (course / "source").glob("*") if p.is_dir())
    if not chapters:
        raise FileNotFoundError(f"no assignments in {course / 'source'}: run "
                                "python -m dpkit.course assignments first")
    found = [(student.name, notebook.stem, notebook)      # <student>/<chapter>.ipynb, or
             for student in sorted(p for p in submissions.iterdir() if p.is_dir())
             for notebook in sorted([*student.glob("*.ipynb"),   # nbgrader's collected copy
                                     *student.glob("*/*.ipynb")])
             if notebook.stem in chapters and notebook.parent.name in (student.name,
                                                                       notebook.stem)]
    if not found:
        raise FileNotFoundError(f"no submissions in {submissions} (expected "
                                f"<student>/<chapter>.ipynb for a chapter in {chapters})")
    return found


def _read_manual(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        return {(r["student"], r["chapter"], r["exercise"]): r for r in csv.DictReader(handle)}


def _write_csv(path: Path, rows: Iterable[dict[str, Any]], fields: list[str]) -> None:
    temporary = path.with_suffix(".tmp")
    with temporary.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        writer.writerows(rows)
    temporary.replace(path)


def grade(course_dir: str | Path, submissions_dir: str | Path, *, regrade: bool = False,
          unsafe: bool = False, limits: Limits | None = None,
          log: Callable[[str], None] = print) -> Path:
    """Grade new or changed submissions and rebuild ``COURSE/grades/grades.csv``.

    Parameters
    ----------
    course_dir : path
        The course written by ``python -m dpkit.course assignments``.
    submissions_dir : path
        ``<student>/<chapter>.ipynb`` notebooks.
    regrade : bool
        Grade every submission again, not only new or changed ones.
    unsafe : bool
        Run the students' code without a sandbox if none can be made (only for code you
        trust: it then runs with your rights). Without it, grading stops with
        :class:`~dpkit.course.sandbox.SandboxUnavailable` on such a machine.

    Returns
    -------
    Path
        ``COURSE/grades/grades.csv``.

    Raises
    ------
    FileNotFoundError
        If the course has no assignments or the folder no submission.
    dpkit.course.sandbox.SandboxUnavailable
        If no sandbox can be made and ``unsafe`` is False.
    SetupError
        If an assignment's set-up cell (the instructor's code) fails in the sandbox: the
        environment is broken, and no student is given a zero for it.
    """
    course, submissions = Path(course_dir), Path(submissions_dir)
    grades = course / "grades"
    grades.mkdir(parents=True, exist_ok=True)
    found = _submissions(course, submissions)
    log(f"isolation: {isolation(unsafe=unsafe)}")
    secret = _secret(grades)
    store_path = grades / "autograded.json"
    store = json.loads(store_path.read_text()) if store_path.exists() else {}
    manual_path = grades / "manual.csv"
    manual = _read_manual(manual_path)
    for student, chapter, path in found:
        key, digest = f"{student}/{chapter}", _digest(path)
        if not regrade and store.get(key, {}).get("sha256") == digest \
                and store[key].get("grader") == GRADER_VERSION:
            log(f"{key}: unchanged since it was graded, kept")
            continue
        log(f"{key}: grading")
        source = nbformat.read(course / "source" / chapter / f"{chapter}.ipynb", 4)
        try:
            submission = json.loads(path.read_bytes()) if path.is_file() \
                and not path.is_symlink() and path.stat().st_size < (64 << 20) else {}
        except (ValueError, RecursionError) as error:    # RecursionError: [[[[… nested
            log(f"  not a readable notebook: {described(error)}")
            submission = {}
        try:
            graded = grade_notebook(source, submission, secret=secret, student=student,
                                    unsafe=unsafe, limits=limits, log=log)
        except SetupError:
            raise                                # the environment, not this notebook
        except Exception as error:               # a notebook must never stop the others
            log(f"  could not be graded: {described(error)}")
            _, exercises = _exercises(source)
            graded = [(e, None if e.written else 0.0,
                       f"this notebook could not be graded ({type(error).__name__})")
                      for e in exercises]
        released = {grade_id_of(c) for c in source.cells if grade_id_of(c)}
        written = [(e.name, e.text, e.model, e.points, written_parts(submission, e.label,
                                                                     released))
                   for e, points, _ in graded if points is None]
        if written:
            written_page(grades / "written" / chapter / f"{student}.md", student, chapter,
                         written)
        for exercise, points, _ in graded:
            if points is None:
                manual.setdefault((student, chapter, exercise.name), {
                    "student": student, "chapter": chapter, "exercise": exercise.name,
                    "points": "", "max_points": f"{exercise.points:g}", "comment": ""})
        store[key] = {"sha256": digest, "grader": GRADER_VERSION, "results": [
            asdict(Result(student, chapter, e.name, p, e.points, f))
            for e, p, f in graded if p is not None]}
        store_path.write_text(json.dumps(store, indent=1))
    _write_csv(manual_path, manual.values(),
               ["student", "chapter", "exercise", "points", "max_points", "comment"])
    rows = [r for entry in store.values() for r in entry["results"]]
    for row in manual.values():
        rows.append({"student": row["student"], "chapter": row["chapter"],
                     "exercise": row["exercise"], "points": row["points"],
                     "max_points": row["max_points"],
                     "feedback": row["comment"] or ("written answer: graded by hand"
                                                    if row["points"] == "" else "")})
    rows.sort(key=lambda r: (r["student"], r["chapter"], r["exercise"]))
    out = grades / "grades.csv"
    _write_csv(out, rows, ["student", "chapter", "exercise", "points", "max_points",
                           "feedback"])
    return out
