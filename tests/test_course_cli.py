"""python -m dpkit.course: one command line for the course tooling, bad paths as messages."""

import subprocess
import sys
from pathlib import Path

import pytest

from dpkit.course.__main__ import main

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # From the checkout's root, so that `-m` imports this checkout's dpkit.
    return subprocess.run([sys.executable, "-m", "dpkit.course", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_help_lists_the_three_commands():
    result = _run("--help")
    assert result.returncode == 0, result.stderr
    for command in ("notebooks", "assignments", "grade"):
        assert command in result.stdout
    grade = _run("grade", "--help")
    assert grade.returncode == 0 and "SUBMISSIONS" in grade.stdout and "--regrade" in grade.stdout
    assert "--unsafe-no-sandbox" in grade.stdout


def test_a_missing_book_folder_is_a_message_and_exit_code_2(tmp_path):
    missing = tmp_path / "no-such-book"
    result = _run("notebooks", str(missing), str(tmp_path / "out"))
    assert result.returncode == 2
    assert str(missing) in result.stderr and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def _exit(capsys, *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    return exited.value.code, capsys.readouterr().err


def test_bad_paths_of_every_command(tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("")
    empty = tmp_path / "empty"
    empty.mkdir()
    code, err = _exit(capsys, "assignments", "book", str(a_file))
    assert code == 2 and str(a_file) in err and "not a folder" in err
    code, err = _exit(capsys, "notebooks", str(empty), str(tmp_path / "out"))
    assert code == 2 and "no MyST notebook chapters" in err and str(empty) in err
    code, err = _exit(capsys, "grade", str(empty), str(tmp_path / "missing"))
    assert code == 2 and str(tmp_path / "missing") in err
    code, err = _exit(capsys, "grade", str(empty), str(empty))
    assert code == 2 and "no source/ folder" in err and "assignments" in err
    code, err = _exit(capsys)
    assert code == 2 and "COMMAND" in err
