"""Releasing and collecting through nbgrader's exchange, for a class on one machine.

On a shared machine or a JupyterHub where every student has a Unix account of their own,
nbgrader's *exchange* is a folder everyone can write to (``Exchange.root``). The teacher
releases a chapter into ``<exchange>/<course id>/outbound/`` (readable by all); each
student fetches it into their home and submits it back into ``<exchange>/<course id>/
inbound/``, which nbgrader makes write-only for students (mode 2733: a student can add a
submission but cannot list the folder, so they never learn the names of the others'
submissions, each ending in a random string); the teacher collects the newest submission
of each student into ``COURSE/submitted/<student>/<chapter>/``, which
``python -m dpkit.course grade COURSE COURSE/submitted`` grades in the sandbox.

Everyone's nbgrader must agree on the exchange and the course id: :func:`config_text` is
the ``nbgrader_config.py`` that says so (in ``/etc/jupyter/`` for every account, or in each
account's ``~/.jupyter/``). :func:`create_exchange` makes the folder.

nbgrader trusts what it finds in ``inbound`` and collects it with the *teacher's* rights:
it takes a submission's student from the folder's name (if another account owns the folder
it only logs a warning) and copies the folder following symbolic links. A student who
writes into ``inbound`` by hand can therefore submit under a classmate's name, or hand in a
link to a file only the teacher can read, such as the instructor's copy with the model
solutions. :func:`collect` reads each submission without following any link, keeps only
folders and files owned by the account it names, copies them into a private folder in
that one pass and lets ``nbgrader collect`` take the copies; a submission that fails is set
aside (:func:`suspicious` lists them without collecting).
"""

from __future__ import annotations

import errno
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["COURSE_ID", "collect", "config_text", "create_exchange", "suspicious"]

#: The nbgrader course id that ``python -m dpkit.course assignments`` writes.
COURSE_ID = "dp-interactively"
_SET_ASIDE = ".set-aside"
#: The most a submission may hold: bytes in all, and files and folders.
MAX_BYTES, MAX_FILES = 100 << 20, 1000


def config_text(exchange: str | Path, course_id: str = COURSE_ID) -> str:
    """The ``nbgrader_config.py`` that points teacher and students at one exchange.

    >>> print(config_text("/srv/nbgrader/exchange"), end="")
    c = get_config()
    c.Exchange.root = "/srv/nbgrader/exchange"
    c.CourseDirectory.course_id = "dp-interactively"
    """
    return ("c = get_config()\n"
            f"c.Exchange.root = {json.dumps(str(exchange))}\n"
            f"c.CourseDirectory.course_id = {json.dumps(course_id)}\n")


def create_exchange(root: str | Path) -> Path:
    """Create the exchange folder: writable by every account, with the sticky bit (1777).

    nbgrader needs the folder to exist and be writable by all (its ``release_assignment``
    resets any other permission bits to 777). The sticky bit, which nbgrader leaves alone,
    keeps a student from renaming or deleting the course's folder in it, as in ``/tmp``.
    """
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o1777)
    return path


class _Refused(Exception):
    """Why a submission is not collected."""


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _open(name: str, dir_fd: int, kind: int, uid: int, where: str) -> int:
    """Open ``name`` in ``dir_fd`` without following a link; check its kind and owner."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags | (os.O_DIRECTORY if kind == stat.S_IFDIR else 0),
                     dir_fd=dir_fd)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise _Refused(f"{where} cannot be read: {error.strerror}") from None
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        raise _Refused(f"{where} is " + ("a symbolic link" if stat.S_ISLNK(mode) else
                                         "not a folder")) from None
    info = os.fstat(fd)
    problem = ("is not a folder" if kind == stat.S_IFDIR else "is not a regular file") \
        if stat.S_IFMT(info.st_mode) != kind else \
        f"is owned by {_owner(info.st_uid)}" if info.st_uid != uid else None
    if problem:
        os.close(fd)
        raise _Refused(f"{where} {problem}")
    return fd


def _copy(dir_fd: int, uid: int, dest: Path | None, where: str, budget: list[int]) -> None:
    """Read (and copy to ``dest``, if given) the folder ``dir_fd``, refusing anything but
    folders and regular files owned by ``uid``; ``budget`` is [bytes, entries] left."""
    if dest is not None:
        dest.mkdir(mode=0o700)
    for name in sorted(os.listdir(dir_fd)):
        budget[1] -= 1
        if budget[1] < 0:
            raise _Refused("holds too many files")
        inside = f"{where}/{name}" if where else name
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            raise _Refused(f"{inside} is a symbolic link")
        if stat.S_ISDIR(mode):
            fd = _open(name, dir_fd, stat.S_IFDIR, uid, inside)
            try:
                _copy(fd, uid, None if dest is None else dest / name, inside, budget)
            finally:
                os.close(fd)
            continue
        fd = _open(name, dir_fd, stat.S_IFREG, uid, inside)
        with os.fdopen(fd, "rb") as source:
            out = None if dest is None else (dest / name).open("xb")
            try:
                while chunk := source.read(1 << 20):
                    budget[0] -= len(chunk)
                    if budget[0] < 0:
                        raise _Refused(f"is larger than {MAX_BYTES >> 20} MiB")
                    if out is not None:
                        out.write(chunk)
            finally:
                if out is not None:
                    out.close()


def _submission(inbound_fd: int, name: str, dest: Path | None) -> str | None:
    """Check (and copy to ``dest``) one submission; why it is refused, or None."""
    student = name.rsplit("+", 3)[0]
    try:
        uid = pwd.getpwnam(student).pw_uid
    except KeyError:
        return f"there is no account {student!r}"
    try:
        fd = _open(name, inbound_fd, stat.S_IFDIR, uid, "the submission")
        try:
            _copy(fd, uid, dest, "", [MAX_BYTES, MAX_FILES])
        finally:
            os.close(fd)
    except (_Refused, OSError) as refused:    # OSError: it changed or hid while read
        if dest is not None and dest.exists():
            shutil.rmtree(dest)
        if isinstance(refused, OSError):
            return f"cannot be read: {refused.strerror}"
        return str(refused).replace("the submission is owned", f"named for {student}, owned")
    return None


def _inbound(exchange: str | Path, course_id: str, assignment: str | None) -> list[str]:
    inbound = Path(exchange) / course_id / "inbound"
    names = sorted(os.listdir(inbound)) if inbound.is_dir() else []
    return [n for n in names if not n.startswith(".") and len(n.rsplit("+", 3)) >= 3
            and (assignment is None or n.rsplit("+", 3)[1] == assignment)]


def suspicious(exchange: str | Path, course_id: str = COURSE_ID) -> list[tuple[Path, str]]:
    """The submissions in the exchange's inbound folder that are not what they claim.

    A submission is nbgrader's folder ``inbound/<student>+<assignment>+<time>+<random>``.
    It is suspicious unless it is a real folder owned by the account ``<student>`` that
    holds only folders and regular files owned by that account, no symbolic link (which
    ``nbgrader collect`` would follow with the teacher's rights), and at most
    :data:`MAX_FILES` files of :data:`MAX_BYTES` bytes in all.

    Returns
    -------
    list of (Path, str)
        Each suspicious submission and why.
    """
    inbound = Path(exchange) / course_id / "inbound"
    found = []
    if not inbound.is_dir():
        return found
    fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in _inbound(exchange, course_id, None):
            problem = _submission(fd, name, None)
            if problem is not None:
                found.append((inbound / name, problem))
    finally:
        os.close(fd)
    return found


def collect(course_dir: str | Path, assignment: str, *, exchange: str | Path,
            course_id: str = COURSE_ID,
            log: Callable[[str], None] = print) -> list[tuple[Path, str]]:
    """The teacher's ``nbgrader collect``, of checked copies of the submissions.

    Each submission of ``assignment`` is checked as :func:`suspicious` says and copied in
    the same pass, never following a link, into a private folder of the course; nbgrader
    then collects these copies into ``COURSE/submitted/<student>/<assignment>/``
    (``--update``: a newer submission replaces an older one). A submission that fails the
    check is renamed, in the inbound folder, to a hidden name nbgrader does not collect
    (``.set-aside.<name>``, ``+`` made ``_``), where the teacher can look at it.

    Returns
    -------
    list of (Path, str)
        The submissions set aside, under their new names, and why.

    Raises
    ------
    subprocess.CalledProcessError
        If nbgrader fails.
    """
    course = Path(course_dir)
    staging = course / ".exchange-staging"
    if staging.exists():
        shutil.rmtree(staging)
    (staging / course_id / "inbound").mkdir(mode=0o700, parents=True)
    staging.chmod(0o700)
    inbound = Path(exchange) / course_id / "inbound"
    aside = []
    try:
        fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for name in _inbound(exchange, course_id, assignment):
                why = _submission(fd, name, staging / course_id / "inbound" / name)
                if why is None:
                    continue
                target = f"{_SET_ASIDE}.{name.replace('+', '_')}"
                os.rename(name, target, src_dir_fd=fd, dst_dir_fd=fd)  # inbound is ours
                log(f"set aside {name}: {why}")
                aside.append((inbound / target, why))
        finally:
            os.close(fd)
        # nbgrader runs its database migrations with the `alembic` command beside the
        # Python. The copies are the teacher's: their owners were checked above.
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        subprocess.run([sys.executable, "-m", "nbgrader", "collect", assignment, "--update",
                        f"--Exchange.root={staging}", f"--CourseDirectory.course_id={course_id}",
                        "--ExchangeCollect.check_owner=False", "--log-level=WARN"],
                       cwd=course, check=True, env={**os.environ, "PATH": path})
    finally:
        shutil.rmtree(staging)
    return aside


def main(argv: list[str] | None = None) -> int:
    """``python -m dpkit.course.exchange collect COURSE CHAPTER --exchange DIR``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m dpkit.course.exchange",
        description="Collect a chapter from nbgrader's exchange into COURSE/submitted, "
                    "setting aside submissions that are not what they claim.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("collect", help="check the submissions, then nbgrader collect")
    run.add_argument("course", type=Path, help="the course folder (python -m dpkit.course "
                                                 "assignments)")
    run.add_argument("chapter", help="the assignment, i.e. the chapter's file stem")
    run.add_argument("--exchange", type=Path, required=True, help="nbgrader's Exchange.root")
    args = parser.parse_args(argv)
    if not (args.course / "source" / args.chapter).is_dir():
        parser.error(f"{args.course} has no assignment {args.chapter!r}")
    try:
        aside = collect(args.course, args.chapter, exchange=args.exchange)
    except subprocess.CalledProcessError as error:
        print(f"{parser.prog}: error: nbgrader collect failed (exit code {error.returncode})",
              file=sys.stderr)
        return 1
    print(f"collected into {args.course / 'submitted'}; set aside: {len(aside)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
