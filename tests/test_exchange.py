"""A class on one machine: nbgrader's exchange with two real Unix accounts.

The teacher (root here) writes the course of ``tests/test_grading.py``'s one-chapter book and
releases it into an exchange; two students, each a Unix account of their own with a private
home, fetch it, answer (``dpstudent1`` rightly, ``dpstudent2`` wrongly) and submit it, each
as themselves; the teacher collects and grades, and each student gets their own grade.
Then ``dpstudent2`` cheats through the exchange, as any student on the machine can: a
submission under ``dpstudent1``'s name, and one whose notebook is a link to the instructor's
copy. Plain ``nbgrader collect`` takes both; ``dpkit.course.exchange.collect`` sets them
aside and the grades do not move.

Creating accounts needs root, so the test skips elsewhere (CI runs as root). The students
need a Python they can execute that imports nbgrader: on a JupyterHub every account has
one. Here the venv's interpreter may not be one (a venv made from a pyenv Python under
``/root``, mode 700, cannot be run by anyone else), so the students then run a venv made
from the system's Python of the same version that reads the packages of the tests' venv
(:func:`_student_python`); the test skips, saying why, if there is none.
"""

import csv
import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_grading import CHAPTER, TOC, _model_answers  # tests/ is on sys.path under pytest

from dpkit.course.assignments import build
from dpkit.course.exchange import COURSE_ID, collect, config_text, create_exchange, suspicious

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
STUDENTS = ("dpstudent1", "dpstudent2")
WRONG_TRUTH = "def truth_prob(epsilon):\n    return 0.5\n"
BIN = Path(sys.executable).parent
NBGRADER = str(BIN / "nbgrader") if (BIN / "nbgrader").exists() else None


def _home(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def _as(user: str, python: list[str], args: list[str], *, cwd: Path | None = None,
        stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python args`` as ``user`` in a clean login-like environment (HOME, PATH)."""
    home = _home(user)
    command = ["runuser", "-u", user, "--", "env", "-i", f"HOME={home}", f"USER={user}",
               f"LOGNAME={user}", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
               *python, *args]
    done = subprocess.run(command, cwd=cwd or home, input=stdin, capture_output=True,
                          text=True, timeout=60)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args[:4])} as {user} failed "
                             f"({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _teacher(args: list[str], *, cwd: Path, config_dir: Path) -> subprocess.CompletedProcess:
    """An nbgrader command as the teacher, reading its config from ``config_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env["JUPYTER_CONFIG_DIR"] = str(config_dir)
    command = [NBGRADER] if NBGRADER else [sys.executable, "-m", "nbgrader"]
    done = subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"nbgrader {args}: {done.stdout}\n{done.stderr}"
    return done


def _remove_user(user: str) -> None:
    try:
        home = _home(user)
    except KeyError:
        return
    subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)
    if home.is_relative_to("/home") and home.exists():
        shutil.rmtree(home)                # userdel leaves it if, e.g., no mail spool exists
    subprocess.run(["groupdel", user], capture_output=True, check=False)


def _student_python(shared: Path, user: str) -> tuple[list[str], str]:
    """A Python that ``user`` can run and that imports nbgrader, and how it was found."""
    probe = ["-c", "import nbgrader, nbformat"]
    tried = []

    def works(python: list[str]) -> bool:
        done = _as(user, python, probe, check=False)
        tried.append(f"{python[0]}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
        return done.returncode == 0

    if works([sys.executable]):
        return [sys.executable], f"the venv's own interpreter {sys.executable}"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.access(candidate, os.X_OK):
            continue
        venv = shared / f"student-{version}"
        made = subprocess.run([candidate, "-m", "venv", "--without-pip", str(venv)],
                              capture_output=True, check=False)
        if made.returncode != 0:
            tried.append(f"{candidate} -m venv: exit code {made.returncode}")
            continue
        site = venv / "lib" / version / "site-packages"
        (site / "course-packages.pth").write_text("".join(f"{p}\n" for p in packages))
        if works([str(venv / "bin" / "python")]):
            return [str(venv / "bin" / "python")], (
                f"a venv of {candidate} reading {', '.join(packages)} (the venv's "
                f"interpreter {os.path.realpath(sys.executable)} is not executable by {user})")
    pytest.skip(f"no Python that {user} can run imports nbgrader; tried: {'; '.join(tried)} "
                f"(the students need read access to an interpreter and to nbgrader)")


def _answer(user: str, python: list[str], answers: dict[str, str]) -> None:
    """Fill in the fetched notebook's answer cells, writing it as ``user``."""
    script = ("import json, sys, nbformat\n"
              "path = 'ch/ch.ipynb'\n"
              "answers = json.load(sys.stdin)\n"
              "notebook = nbformat.read(path, 4)\n"
              "for cell in notebook.cells:\n"
              "    grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')\n"
              "    if grade_id in answers:\n"
              "        cell.source = answers[grade_id]\n"
              "nbformat.write(notebook, path)\n")
    _as(user, python, ["-c", script], stdin=json.dumps(answers))


def _grades(course: Path) -> dict[tuple[str, str], float | str]:
    rows = csv.DictReader((course / "grades" / "grades.csv").open())
    return {(r["student"], r["exercise"].rsplit("(", 1)[-1].rstrip(")")):
            float(r["points"]) if r["points"] else "" for r in rows}


def _grade(course: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "dpkit.course", "grade", str(course),
                           str(course / "submitted")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("creating the two students' Unix accounts needs root (CI runs as root)")
    for tool in ("useradd", "userdel", "runuser"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    shared = Path(tempfile.mkdtemp(prefix="dpkit-exchange-"))   # pytest's tmp is root's only
    shared.chmod(0o755)
    state = {"shared": shared}
    try:
        for user in STUDENTS:
            _remove_user(user)                     # left over by an interrupted run
            subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/sh",
                            user], check=True, capture_output=True)
            state.setdefault("home modes", {})[user] = oct(_home(user).stat().st_mode & 0o777)
            _home(user).chmod(0o700)               # nbgrader keeps submissions in the home
        python, how = _student_python(shared, STUDENTS[0])
        state["student python"] = how

        # The teacher: the course, the exchange, the configuration, the release.
        root = tmp_path_factory.mktemp("book")
        (root / "book").mkdir()
        (root / "book" / "ch.md").write_text(CHAPTER)
        (root / "_toc.yml").write_text(TOC)
        course = root / "course"
        build(root / "book", course)
        assert repr(COURSE_ID) in (course / "nbgrader_config.py").read_text() \
            or f'"{COURSE_ID}"' in (course / "nbgrader_config.py").read_text()
        exchange = create_exchange(shared / "exchange")
        config = config_text(exchange)
        teacher_config = tmp_path_factory.mktemp("teacher-jupyter")
        (teacher_config / "nbgrader_config.py").write_text(config)
        _teacher(["release_assignment", "ch"], cwd=course, config_dir=teacher_config)
        state.update(course=course, exchange=exchange, python=python,
                     teacher_config=teacher_config)

        # Each student, as themselves: configuration, fetch, answer, submit.
        model = _model_answers(course)
        answers = {"dpstudent1": {k: model[k] for k in ("ex-t-truth-answer",
                                                        "ex-t-debias-answer")},
                   "dpstudent2": {"ex-t-truth-answer": WRONG_TRUTH}}
        setup = ("import pathlib, sys\n"
                 "folder = pathlib.Path.home() / '.jupyter'\n"
                 "folder.mkdir()\n"
                 "(folder / 'nbgrader_config.py').write_text(sys.stdin.read())\n")

        def student(user: str) -> None:
            _as(user, python, ["-c", setup], stdin=config)
            _as(user, python, ["-m", "nbgrader", "fetch_assignment", "ch"])
            _answer(user, python, answers[user])
            _as(user, python, ["-m", "nbgrader", "submit", "ch"])

        with ThreadPoolExecutor(len(STUDENTS)) as pool:       # a class works at once
            list(pool.map(student, STUDENTS))

        # What dpstudent2 can see of dpstudent1's work.
        probe = ("import glob, json, os, sys\n"
                 "inbound, home = sys.argv[1], sys.argv[2]\n"
                 "seen = {}\n"
                 "for name, path in (('inbound', inbound), ('home', home)):\n"
                 "    try:\n"
                 "        seen[name] = os.listdir(path)\n"
                 "    except PermissionError:\n"
                 "        seen[name] = 'denied'\n"
                 "seen['glob'] = glob.glob(os.path.join(inbound, 'dpstudent1+*'))\n"
                 "for name in ('ch/ch.ipynb', '.local/share/jupyter/nbgrader_cache'):\n"
                 "    path = os.path.join(home, name)\n"
                 "    try:\n"
                 "        os.listdir(path) if name.endswith('cache') else open(path).close()\n"
                 "        seen[name] = 'read'\n"
                 "    except OSError as error:\n"
                 "        seen[name] = type(error).__name__\n"
                 "print(json.dumps(seen))\n")
        inbound = exchange / COURSE_ID / "inbound"
        state["seen by dpstudent2"] = json.loads(_as(
            "dpstudent2", python, ["-c", probe, str(inbound), str(_home("dpstudent1"))]).stdout)
        state["inbound"] = sorted(p.name for p in inbound.iterdir())

        # The teacher collects and grades.
        _teacher(["collect", "ch"], cwd=course, config_dir=teacher_config)
        state["grade log"] = _grade(course).stdout
        state["grades"] = _grades(course)
        yield state
    finally:
        for user in STUDENTS:
            _remove_user(user)
        shutil.rmtree(shared, ignore_errors=True)


def test_each_student_fetched_and_submitted_as_themselves(classroom):
    inbound = classroom["inbound"]
    assert [name.split("+")[:2] for name in inbound] == [["dpstudent1", "ch"],
                                                         ["dpstudent2", "ch"]], inbound
    for user in STUDENTS:
        submission = next((classroom["exchange"] / COURSE_ID / "inbound").glob(f"{user}+ch+*"))
        assert pwd.getpwuid(submission.stat().st_uid).pw_name == user
        collected = classroom["course"] / "submitted" / user / "ch" / "ch.ipynb"
        assert collected.exists(), sorted((classroom["course"] / "submitted").rglob("*"))


def test_each_student_gets_their_own_grade(classroom):
    grades = classroom["grades"]
    assert grades[("dpstudent1", "ex-t-truth")] == 3, (grades, classroom["grade log"])
    assert grades[("dpstudent1", "ex-t-debias")] == 3, grades
    assert grades[("dpstudent2", "ex-t-truth")] == 0, grades
    assert grades[("dpstudent2", "ex-t-debias")] == 0, grades
    assert grades[("dpstudent1", "ex-t-proof")] == "", grades        # graded by hand
    assert "dpstudent1/ch: grading" in classroom["grade log"]


def test_a_student_cannot_see_another_students_work(classroom):
    seen = classroom["seen by dpstudent2"]
    assert seen["inbound"] == "denied", seen          # nbgrader's inbound is 2733
    assert seen["glob"] == [], seen
    assert seen["home"] == "denied", seen
    assert seen["ch/ch.ipynb"] == "PermissionError", seen
    assert seen[".local/share/jupyter/nbgrader_cache"] == "PermissionError", seen
    inbound = classroom["exchange"] / COURSE_ID / "inbound"
    assert oct(inbound.stat().st_mode & 0o7777) == "0o2733"
    assert oct(classroom["exchange"].stat().st_mode & 0o7777) == "0o1777"


def test_cheating_through_the_exchange_is_set_aside(classroom):
    """dpstudent2 submits under dpstudent1's name, and hands in a link to the instructor's
    copy; nbgrader's collect takes both, dpkit's sets them aside."""
    course, exchange, python = classroom["course"], classroom["exchange"], classroom["python"]
    inbound = exchange / COURSE_ID / "inbound"
    _as("dpstudent2", python, ["-m", "nbgrader", "submit", "ch", "--student=dpstudent1"])
    forge = ("import os, sys\n"
             "folder = os.path.join(sys.argv[1], 'dpstudent2+ch+2999-01-01 00:00:00.000000 UTC'"
             "'+forged')\n"
             "os.mkdir(folder)\n"
             "os.symlink(sys.argv[2], os.path.join(folder, 'ch.ipynb'))\n"
             "open(os.path.join(folder, 'timestamp.txt'), 'w').write("
             "'2999-01-01 00:00:00.000000 UTC')\n")
    _as("dpstudent2", python, ["-c", forge, str(inbound),
                               str(course / "source" / "ch" / "ch.ipynb")])
    found = {path.name.split("+")[0] + ("/forged" if path.name.endswith("forged") else ""): why
             for path, why in suspicious(exchange)}
    assert found == {"dpstudent1": "named for dpstudent1, owned by dpstudent2",
                     "dpstudent2/forged": "ch.ipynb is a symbolic link"}, found

    # What nbgrader alone would do, on a copy of the course.
    plain = course.parent / "plain-collect"
    shutil.copytree(course, plain)
    _teacher(["collect", "ch", "--update"], cwd=plain, config_dir=classroom["teacher_config"])
    assert "BEGIN SOLUTION" in (plain / "submitted/dpstudent2/ch/ch.ipynb").read_text()
    assert "return 0.5" in (plain / "submitted/dpstudent1/ch/ch.ipynb").read_text()

    # What the teaching page says to run instead.
    before = (course / "submitted/dpstudent1/ch/ch.ipynb").read_text()
    done = subprocess.run([sys.executable, "-m", "dpkit.course.exchange", "collect", str(course),
                           "ch", "--exchange", str(exchange)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    for why in found.values():
        assert why in done.stdout, done.stdout
    assert "set aside: 2" in done.stdout
    assert len(list(inbound.glob(".set-aside.*"))) == 2
    assert suspicious(exchange) == []
    assert (course / "submitted/dpstudent1/ch/ch.ipynb").read_text() == before
    assert "BEGIN SOLUTION" not in (course / "submitted/dpstudent2/ch/ch.ipynb").read_text()
    _grade(course)
    assert _grades(course) == classroom["grades"]


def test_suspicious_without_other_accounts(tmp_path):
    """The checks on one account's own files: links, a foreign owner, no such account."""
    me = pwd.getpwuid(os.geteuid()).pw_name
    other = next(p for p in pwd.getpwall() if p.pw_uid != os.geteuid()).pw_name
    inbound = tmp_path / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    good = inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+a"
    (good / "sub").mkdir(parents=True)
    (good / "ch.ipynb").write_text("{}")
    (good / "sub" / "data.csv").write_text("1\n")
    linked = inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+b"
    linked.mkdir()
    (linked / "sub").symlink_to(tmp_path)
    (inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+c").symlink_to(good)
    (inbound / f"{other}+ch+2024-01-01 00:00:00.000000 UTC+d").mkdir()
    (inbound / "no-such-student-x+ch+2024-01-01 00:00:00.000000 UTC+e").mkdir()
    (inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+f").write_text("a file")
    piped = inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+g"
    piped.mkdir()
    os.mkfifo(piped / "ch.ipynb")
    (inbound / "README").write_text("not a submission")
    found = {path.name[-1]: why for path, why in suspicious(tmp_path)}
    assert found == {"b": "sub is a symbolic link",
                     "c": "the submission is a symbolic link",
                     "d": f"named for {other}, owned by {me}",
                     "e": "there is no account 'no-such-student-x'",
                     "f": "the submission is not a folder",
                     "g": "ch.ipynb is not a regular file"}, found


def test_collect_copies_only_what_it_checked(tmp_path, monkeypatch):
    """collect() hands nbgrader checked copies, and sets the rest aside (no accounts)."""
    me = pwd.getpwuid(os.geteuid()).pw_name
    inbound = tmp_path / "exchange" / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    good = inbound / f"{me}+ch+2024-01-01 00:00:00.000000 UTC+a"
    good.mkdir()
    (good / "ch.ipynb").write_text("{}")
    bad = inbound / f"{me}+ch+2024-01-02 00:00:00.000000 UTC+b"
    bad.mkdir()
    (bad / "ch.ipynb").symlink_to(good / "ch.ipynb")
    (inbound / f"{me}+other+2024-01-02 00:00:00.000000 UTC+c").mkdir()   # not this chapter
    seen = {}

    def run(command, **kwargs):
        staging = Path(next(a for a in command if a.startswith("--Exchange.root=")).split("=")[1])
        seen["staged"] = sorted(str(p.relative_to(staging)) for p in staging.rglob("*"))
        seen["mode"] = oct(staging.stat().st_mode & 0o777)

    monkeypatch.setattr(subprocess, "run", run)
    course = tmp_path / "course"
    course.mkdir()
    aside = collect(course, "ch", exchange=tmp_path / "exchange", log=lambda _m: None)
    assert [(p.name, why) for p, why in aside] == [
        (f".set-aside.{bad.name.replace('+', '_')}", "ch.ipynb is a symbolic link")]
    assert seen == {"mode": "0o700", "staged": [
        COURSE_ID, f"{COURSE_ID}/inbound", f"{COURSE_ID}/inbound/{good.name}",
        f"{COURSE_ID}/inbound/{good.name}/ch.ipynb"]}
    assert not (course / ".exchange-staging").exists()
    assert sorted(p.name for p in inbound.iterdir()) == sorted(
        [good.name, aside[0][0].name, f"{me}+other+2024-01-02 00:00:00.000000 UTC+c"])


def test_the_teaching_page_shows_the_commands_tested_here():
    page = (ROOT / "book" / "teaching.md").read_text()
    section = page.split("## Releasing and collecting on a shared machine")[1].split("\n## ")[0]
    assert config_text("/srv/nbgrader/exchange") in section
    for command in ("chmod 1777 /srv/nbgrader/exchange", "nbgrader release_assignment laplace",
                    "nbgrader fetch_assignment laplace", "nbgrader submit laplace",
                    "python -m dpkit.course.exchange collect _build/course laplace",
                    "--exchange /srv/nbgrader/exchange",
                    "make grade SUBMISSIONS=_build/course/submitted", "chmod 700"):
        assert command in section, command
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
    ran = subprocess.run(["make", "-n", "-C", str(ROOT), "assignments"], capture_output=True,
                         text=True, env=env, check=True).stdout      # what make assignments runs
    assert "python -m dpkit.course assignments book _build/course\n" in ran
